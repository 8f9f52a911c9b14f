"""CDNA (Instinct) matrix cores: the MFMA instructions of CDNA1-CDNA4 as layouts.

``isa`` holds the ISA guides' instruction tables as data; ``mfma`` turns each instruction into
its A, B and D register maps (TV layouts proven equal to the ISA's placement rules) and MMA atoms.

    >>> from layoutalg.amd.cdna import mfma
    >>> str(mfma("v_mfma_f64_16x16x4_f64").fragment("D").layout)
    '((16,4),4):((16,1),4)'
"""

from .isa import INSTRUCTIONS, MfmaInstruction
from .mfma import Mfma, catalog, families, mfma, mfma_for

__all__ = ["INSTRUCTIONS", "MfmaInstruction", "Mfma", "catalog", "families", "mfma", "mfma_for"]
