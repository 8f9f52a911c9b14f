"""NVIDIA tensor-core layouts: mma / mma.sp / wgmma register fragments and ldmatrix maps.

Every fragment is a CuTe TV layout ``(thread, value) -> element`` written by hand, carrying the
PTX formula it must equal (:mod:`layoutalg.nvidia.ptx_formulas`)::

    >>> from layoutalg.nvidia import mma
    >>> f = mma.fragment("m16n8k16", "bf16", "B")
    >>> f.coords(6, 3), f.formula.evaluate(6, 3)
    ((13, 1), (13, 1))
"""

from . import fragment as _fragment_module  # noqa: F401
from . import descriptor, idesc, ldmatrix, mma, ptx_formulas, tma, wgmma, wgmma_fragments
from .fragment import Fragment
from .mma import catalog, scale_fragment, sparse_fragment, sparse_metadata, tile_fragment
from . import umma, umma_smem  # noqa: E402  (tcgen05 atoms and shared-memory operands)

__all__ = [
    "Fragment",
    "catalog",
    "descriptor",
    "idesc",
    "ldmatrix",
    "mma",
    "ptx_formulas",
    "scale_fragment",
    "sparse_fragment",
    "sparse_metadata",
    "tile_fragment",
    "tma",
    "umma",
    "umma_smem",
    "wgmma",
    "wgmma_fragments",
]
