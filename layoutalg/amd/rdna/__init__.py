"""RDNA (Radeon) matrix cores: the WMMA instructions as layouts (RDNA3, RDNA4).

    >>> from layoutalg.amd.rdna import wmma
    >>> str(wmma("v_wmma_f32_16x16x16_f16", "rdna3").fragment("D", wave=32).layout)
    '((16,2),8):((16,1),2)'
"""

from .wmma import WMMA_INSTRUCTIONS, Wmma, WmmaInstruction, families, wmma, wmma_for

__all__ = ["WMMA_INSTRUCTIONS", "Wmma", "WmmaInstruction", "families", "wmma", "wmma_for"]
