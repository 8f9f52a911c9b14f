"""NVIDIA tensor-core layouts, by generation: mma / mma.sp, ldmatrix (Ampere), wgmma, TMA (Hopper), tcgen05 (Blackwell).

Every fragment is a CuTe TV layout ``(thread, value) -> element`` written by hand, carrying the
PTX formula it must equal (:mod:`layoutalg.nvidia.common.ptx_formulas`)::

    >>> from layoutalg.nvidia import mma
    >>> f = mma.fragment("m16n8k16", "bf16", "B")
    >>> f.coords(6, 3), f.formula.evaluate(6, 3)
    ((13, 1), (13, 1))

The folders, as Triton Gluon's ``nvidia/{ampere,hopper,blackwell}`` and CuTe's sm80/sm90/sm100 files:

* :mod:`~layoutalg.nvidia.common`: what the generations share -- ``dtypes``, ``ptx_formulas``,
  ``fragment`` (:class:`Fragment`), ``descriptor`` (the common format of the 64-bit shared-memory
  descriptor words), ``atom_types`` (type spellings of atom names);
* :mod:`~layoutalg.nvidia.ampere`: ``mma`` (mma.sync / mma.sp fragments), ``ldmatrix``, ``atoms``;
* :mod:`~layoutalg.nvidia.hopper`: ``wgmma`` (shared-memory layouts, descriptors, k-blocks),
  ``wgmma_fragments``, ``descriptor`` (sm_90), ``tma``, ``tensor_map``, ``atoms``;
* :mod:`~layoutalg.nvidia.blackwell`: ``umma``, ``umma_smem``, ``idesc``, ``descriptor`` (sm_100), ``tmem``,
  ``tmem_accum``, ``tmem_copy``, ``blockscale``, ``atoms``.

Each generation's ``atoms`` registers its MMA and copy atoms in :mod:`layoutalg.registry`;
:mod:`layoutalg.nvidia.atoms` is the NVIDIA facade (``mma_atom``, ``copy_atom``). The old flat
paths keep working and name the same module objects (:mod:`layoutalg.nvidia.aliases`):
``layoutalg.nvidia.mma`` is ``layoutalg.nvidia.ampere.mma``.
"""

from typing import Any

from . import aliases as _aliases
from .aliases import OLD_PATHS as _OLD_PATHS

_aliases.install()

from .common import dtypes, ptx_formulas  # noqa: E402
from .common import fragment as _fragment_module  # noqa: E402,F401
from .common.fragment import Fragment  # noqa: E402
from .ampere import ldmatrix, mma  # noqa: E402
from .ampere.mma import catalog, scale_fragment, sparse_fragment, sparse_metadata, tile_fragment  # noqa: E402
from .hopper import tma, wgmma, wgmma_fragments  # noqa: E402
from .blackwell import descriptor, idesc, umma, umma_smem  # noqa: E402  (tcgen05 atoms and shared-memory operands)

for _short in ("descriptor", "dtypes", "ptx_formulas", "fragment", "ldmatrix", "mma", "tma", "wgmma",
               "wgmma_fragments", "idesc", "umma", "umma_smem"):
    _aliases.module(_short)  # the old dotted names of the modules imported above, in sys.modules


def __getattr__(name: str) -> Any:
    """The old module names imported on first use (``layoutalg.nvidia.tmem_accum``, ...)."""
    if name in _OLD_PATHS:
        value = _aliases.module(name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_OLD_PATHS))


__all__ = [
    "Fragment",
    "catalog",
    "descriptor",
    "dtypes",
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
