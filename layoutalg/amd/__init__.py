"""The AMD catalog: matrix-core instructions of AMD GPUs as layouts (knows nothing of :mod:`layoutalg.nvidia`).

Shaped by architecture family, as Triton's Gluon shapes ``language/amd``: ``cdna/`` holds the
Instinct MFMA instructions of CDNA1-CDNA4 (``v_mfma_*``, ``v_smfmac_*``), ``rdna/`` the Radeon
WMMA instructions (RDNA3, RDNA4); ``common`` what every family shares (element types, architecture
names, mnemonic spellings, :class:`~layoutalg.amd.common.MatrixFragment`, :class:`AtomFamily`).

Each operand of an instruction is a TV layout ``(lane, value) -> element`` proven equal to the ISA's
placement rule and checked against AMD's Matrix Instruction Calculator (tests/test_amd_mfma.py,
tests/test_amd_wmma.py)::

    >>> from layoutalg.amd import mfma
    >>> m = mfma("v_mfma_f32_16x16x16_f16")
    >>> str(m.fragment("A").layout), str(m.fragment("D").layout)
    ('((16,4),4):((1,64),16)', '((16,4),4):((16,4),1)')
    >>> m.atom().shape_mnk
    (16, 16, 16)
"""

from .cdna import INSTRUCTIONS as MFMA_INSTRUCTIONS
from .cdna import Mfma, catalog, mfma, mfma_for
from .cdna import families as _mfma_families
from .common import ARCHS, DTYPES, AtomFamily, MatrixFragment, arch_name, dtype_bits, dtype_name
from .rdna import WMMA_INSTRUCTIONS, Wmma, wmma, wmma_for
from .rdna import families as _wmma_families


def families() -> tuple[AtomFamily, ...]:
    """Every AMD atom family for a vendor-neutral registry: MFMA per CDNA generation, WMMA per RDNA one.

    >>> [(f.arch, f.kind) for f in families()][-1]
    ('rdna4', 'wmma')
    """
    return _mfma_families() + _wmma_families()


__all__ = [
    "ARCHS", "DTYPES", "MFMA_INSTRUCTIONS", "WMMA_INSTRUCTIONS", "AtomFamily", "MatrixFragment", "Mfma", "Wmma",
    "arch_name", "catalog", "dtype_bits", "dtype_name", "families", "mfma", "mfma_for", "wmma", "wmma_for",
]
