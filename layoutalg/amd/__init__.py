"""The AMD catalog: matrix-core instructions of AMD GPUs as layouts (knows nothing of :mod:`layoutalg.nvidia`).

Shaped by architecture family, as Triton's Gluon shapes ``language/amd``: ``cdna/`` holds the
Instinct MFMA instructions of CDNA1-CDNA4 (``v_mfma_*``, ``v_smfmac_*``), ``rdna/`` the Radeon
WMMA instructions (RDNA3, RDNA4), ``gfx1250/`` gfx1250's wave32 WMMA (dense and scaled); ``lds`` the
LDS (Triton's swizzled and padded shared layouts, the
CDNA3/CDNA4 bank model, conflict analysis and synthesis); ``common`` what every family shares (element types, architecture
names, mnemonic spellings, :class:`~layoutalg.amd.common.MatrixFragment`, :class:`AtomFamily`).

Each operand of an instruction is a TV layout ``(lane, value) -> element`` proven equal to the ISA's
placement rule (:func:`layoutalg.verify.verify`; the whole catalog in about 0.6 s). No AMD GPU was
used; what each map was checked against:

- AMD's Matrix Instruction Calculator 1.3.2 (recorded in ``tests/data/amd/``, replayed cell by cell,
  register bits included): every instruction it lists -- CDNA1 20, CDNA2 27, CDNA3 46 (32 ``v_mfma``,
  14 ``v_smfmac``), RDNA3 6 and RDNA4 22 (``v_wmma``, ``v_swmmac``) at wave32 and wave64 -- A, B and
  D; 143 CBSZ/ABID/BLGP cases (:meth:`~layoutalg.amd.cdna.mfma.Mfma.reads`);
- Triton 3.6's linear layouts (``AMDMFMALayout`` v3/v4, ``AMDWMMALayout`` v1/v2, the CDNA4 MFMA
  scale layout): 12 MFMA shapes of CDNA3 and CDNA4, 5 WMMA configurations. RDNA4 16-bit operands at
  Triton's ``k_width=8`` are the ISA map with K bits 2 and 3 swapped (named in the tests);
- CDNA4 against composable_kernel (``tests/test_amd_cdna4_second_source.py``): the dense and f8f6f4
  maps against CK's ``mfma_type`` constants, the fp6/fp4 register packing against its operand types,
  every ``v_smfmac`` against CK Tile's layout parameters -- the double-K ``v_smfmac`` CDNA4 adds read
  B as two halves of K (CK Tile's ``kBKNumAccess = 2``), not as CDNA3's do;
- gfx1250 against Triton's ``AMDWMMALayout(version=3)``, FlyDSL and CK Tile's scaled-WMMA pairing (which
  fixes the 8-bit chunk at 16 K; Triton's and FlyDSL's 8 is ``form="triton"``); every family against
  FlyDSL 0.5.0's atoms (``tests/test_amd_flydsl.py``, differences named).

::

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
from .gfx1250 import GFX1250_INSTRUCTIONS, Wmma1250, wmma1250
from .gfx1250 import families as _gfx1250_families
from .lds import LDS, analyze_lds, lds_model, lds_report, padded_shared, swizzled_shared, synthesize_lds
from .rdna import WMMA_INSTRUCTIONS, Wmma, wmma, wmma_for
from .rdna import families as _wmma_families


def families() -> tuple[AtomFamily, ...]:
    """Every AMD atom family for a vendor-neutral registry: MFMA per CDNA generation, WMMA per RDNA one, gfx1250's.

    >>> [(f.arch, f.kind, f.label) for f in families()][-1]
    ('gfx1250', 'mma', 'v_wmma.gfx1250')
    """
    return _mfma_families() + _wmma_families() + _gfx1250_families()


__all__ = [
    "ARCHS", "DTYPES", "GFX1250_INSTRUCTIONS", "LDS", "MFMA_INSTRUCTIONS", "WMMA_INSTRUCTIONS", "AtomFamily",
    "MatrixFragment", "Mfma", "Wmma", "Wmma1250",
    "analyze_lds", "arch_name", "catalog", "dtype_bits", "dtype_name", "families", "lds_model", "lds_report",
    "mfma", "mfma_for", "padded_shared", "swizzled_shared", "synthesize_lds", "wmma", "wmma1250", "wmma_for",
]
