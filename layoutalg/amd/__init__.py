"""The AMD catalog: matrix-core instructions of AMD GPUs as layouts (knows nothing of :mod:`layoutalg.nvidia`).

Shaped by architecture family, as Triton's Gluon shapes ``language/amd``: ``cdna/`` holds the
Instinct MFMA instructions of CDNA1-CDNA4 (``v_mfma_*``); ``common`` what every family shares
(element types, architecture names, mnemonic spellings, :class:`~layoutalg.amd.common.MatrixFragment`).

Each operand of an instruction is a TV layout ``(lane, value) -> element`` proven equal to the ISA's
placement rule and checked against AMD's Matrix Instruction Calculator (tests/test_amd_mfma.py)::

    >>> from layoutalg.amd import mfma
    >>> m = mfma("v_mfma_f32_16x16x16_f16")
    >>> str(m.fragment("A").layout), str(m.fragment("D").layout)
    ('((16,4),4):((1,64),16)', '((16,4),4):((16,4),1)')
    >>> m.atom().shape_mnk
    (16, 16, 16)
"""

from .cdna import INSTRUCTIONS as MFMA_INSTRUCTIONS
from .cdna import Mfma, catalog, families, mfma, mfma_for
from .common import ARCHS, DTYPES, MatrixFragment, arch_name, dtype_bits, dtype_name

__all__ = [
    "ARCHS", "DTYPES", "MFMA_INSTRUCTIONS", "MatrixFragment", "Mfma", "arch_name", "catalog", "dtype_bits",
    "dtype_name", "families", "mfma", "mfma_for",
]
