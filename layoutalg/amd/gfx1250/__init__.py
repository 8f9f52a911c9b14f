"""gfx1250 (CDNA5's first part, wave32 WMMA): its ``v_wmma_*`` and scaled ``v_wmma_scale_*`` instructions as layouts.

    >>> from layoutalg.amd.gfx1250 import wmma1250
    >>> str(wmma1250("v_wmma_f32_16x16x32_f16").fragment("A").layout)
    '((16,2),(8,2)):((1,128),(16,256))'
"""

from .wmma import GFX1250_INSTRUCTIONS, Wmma1250, families, wmma1250

__all__ = ["GFX1250_INSTRUCTIONS", "Wmma1250", "families", "wmma1250"]
