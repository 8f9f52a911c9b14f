"""layoutalg: CuTe-style layout algebra for GPU kernel authors.

A layout is a function from coordinates to offsets, written ``Shape:Stride``::

    >>> from layoutalg import Layout, composition, logical_divide, parse
    >>> L = parse("(4,2):(2,1)")            # a 4x2 row-major matrix
    >>> [L(i) for i in range(8)]
    [0, 2, 4, 6, 1, 3, 5, 7]
    >>> str(composition(L, Layout(4, 2)))   # every other element, in index order
    '(2,2):(4,1)'

The NVIDIA tensor-core layouts live in :mod:`layoutalg.nvidia`; swizzles and composed layouts in
:mod:`layoutalg.swizzle` and :mod:`layoutalg.composed`; proofs in :mod:`layoutalg.verify`.
"""

from __future__ import annotations

from typing import Any

from . import inttuple
from .algebra import (
    coalesce,
    complement,
    composition,
    downcast,
    filter,
    flat_divide,
    flat_product,
    blocked_product,
    left_inverse,
    logical_divide,
    logical_product,
    max_common_layout,
    max_common_vector,
    nullspace,
    raked_product,
    recast_layout,
    right_inverse,
    tile_to_shape,
    tiled_divide,
    tiled_product,
    upcast,
    with_shape,
    zipped_divide,
    zipped_product,
)
from .errors import LayoutError
from .layout import (
    Layout,
    append,
    cosize,
    depth,
    flatten_layout,
    group,
    is_layout,
    make_layout,
    make_ordered_layout,
    prepend,
    rank,
    shape,
    size,
    stride,
)
from .parse import parse, symbol

__version__ = "0.1.0"


def flatten(x: Any) -> Any:
    """flatten(L): a layout with every leaf mode at the top level; flatten(t) of an IntTuple: its leaves."""
    if isinstance(x, Layout):
        return flatten_layout(x)
    return inttuple.flatten(x)


# The layers above the algebra. ``verify`` is imported eagerly so that the function, not the
# module of the same name, is what ``layoutalg.verify`` means.
from .swizzle import Swizzle, compose_swizzles, make_swizzle  # noqa: E402
from .composed import ComposedLayout, make_composed_layout  # noqa: E402
from .verify import Counterexample, Verdict, equivalent, verify  # noqa: E402
from .linear import LinearLayout, from_linear, is_f2_linear, to_linear  # noqa: E402
from . import viz as _viz  # noqa: E402,F401  (registers every picture -- layouts, fragments, TiledMMA / TiledCopy, TMEM atoms: layoutalg.hooks)


def _load_nvidia_atoms() -> None:
    """The NVIDIA generations' atom modules, each registering its families (imported on the first lookup)."""
    import importlib

    for gen in ("ampere", "hopper", "blackwell"):
        importlib.import_module(f".nvidia.{gen}.atoms", __name__)


from . import registry as _registry  # noqa: E402
from .hooks import provide as _provide  # noqa: E402

def _load_amd_atoms() -> None:
    """AMD's atom families (MFMA of CDNA1-4, WMMA of RDNA3/4), registered on the first lookup."""
    import importlib

    importlib.import_module(".amd.atoms", __name__)


_registry.add_provider("nvidia", _load_nvidia_atoms)
_registry.add_provider("amd", _load_amd_atoms)
# make_tiled_mma("SM80_16x8x16_F32F16F16F32_TN", ...) reads the name with the atom registry (layoutalg.hooks)
_provide("mma_atom", _registry.mma_atom)

#: Names exported lazily (module-level ``__getattr__``): importing layoutalg does not import the
#: modules that define them, which sit above the NVIDIA catalog. They are documented with their
#: modules (not in ``__all__``, so ``import *`` stays cheap). ``layoutalg.explain`` is also the
#: name of the module; that module is callable (it calls the function), so either works.
_LAZY = {"explain": ("explain", "explain"), "Explanation": ("explain", "Explanation"),
         "synthesize_swizzle": ("synth", "synthesize_swizzle"),
         "from_gluon": ("interop.gluon", "from_gluon"), "to_gluon": ("interop.gluon", "to_gluon"),
         "to_cute_cpp": ("interop.cute", "to_cute_cpp"), "to_cute_dsl": ("interop.cute", "to_cute_dsl")}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        module, attr = _LAZY[name]
        value = getattr(importlib.import_module(f".{module}", __name__), attr)
        # importing layoutalg.explain bound the *module* to the name; the function is what is meant
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "Layout",
    "LayoutError",
    "make_layout",
    "make_ordered_layout",
    "parse",
    "symbol",
    "size",
    "cosize",
    "rank",
    "depth",
    "shape",
    "stride",
    "append",
    "prepend",
    "group",
    "flatten",
    "with_shape",
    "is_layout",
    "coalesce",
    "filter",
    "composition",
    "complement",
    "right_inverse",
    "left_inverse",
    "logical_divide",
    "zipped_divide",
    "tiled_divide",
    "flat_divide",
    "logical_product",
    "zipped_product",
    "tiled_product",
    "flat_product",
    "blocked_product",
    "raked_product",
    "tile_to_shape",
    "max_common_vector",
    "max_common_layout",
    "upcast",
    "downcast",
    "recast_layout",
    "nullspace",
    "Swizzle",
    "make_swizzle",
    "compose_swizzles",
    "ComposedLayout",
    "make_composed_layout",
    "verify",
    "equivalent",
    "Verdict",
    "Counterexample",
    "to_linear",
    "from_linear",
    "LinearLayout",
    "is_f2_linear",
    "from_gluon",
    "to_gluon",
]
