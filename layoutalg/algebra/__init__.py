"""The layout algebra, with CuTe's semantics.

Every operation here is a function of layouts that returns a layout; its contract is the first
line of its docstring. One example to check by hand: divide a 16-element vector into tiles of
two elements taken at stride 4 (``B = 2:4``). The tile covers offsets {0, 4}; its complement in
16 enumerates the tiles' origins, {0,1,2,3, 8,9,10,11}, i.e. ``(4,2):(1,8)``; the divided layout
visits tile by tile:

    >>> from layoutalg import Layout, complement, logical_divide
    >>> str(complement(Layout(2, 4), 16))
    '(4,2):(1,8)'
    >>> str(logical_divide(Layout(16, 1), Layout(2, 4)))
    '(2,(4,2)):(4,(1,8))'

Composition is *functional*: whenever ``composition(A, B)`` returns ``R``, ``R(i) == A(B(i))``
for every ``i < size(B)``. CuTe builds ``R`` mode by mode; where that construction would not be
the functional composition (B's modes overlap in A's coordinate space, or B reaches past A's
domain) the result is checked by enumeration and a :class:`~layoutalg.errors.LayoutError` is raised
if it is not a layout. Past its size, A is extended as CuTe extends it (its last mode absorbs the
overflow, however A is spelled).

The package follows CuTe's concepts, one module each: :mod:`.coalescing` (coalesce, filter),
:mod:`.composing` (composition), :mod:`.inverses` (complement, right/left inverse), :mod:`.tiling`
(divides, products, tile_to_shape), :mod:`.casting` (max_common_*, up/down/recast, nullspace,
with_shape), over :mod:`.core` (operands, flat coalescing, the functional check) and :mod:`.kernels`
(the fast paths on concrete layouts; :func:`layoutalg.speedups.reference_only` switches them off).
Import the operations from here (``from layoutalg.algebra import composition``).
"""

from __future__ import annotations

# importable from here as before the split (the algebra's names for what it works on)
from ..errors import LayoutError  # noqa: F401
from ..inttuple import flatten  # noqa: F401
from ..layout import Layout, append, make_layout, make_ordered_layout  # noqa: F401
from .casting import downcast, max_common_layout, max_common_vector, nullspace, recast_layout, upcast, with_shape
from .coalescing import coalesce, filter
from .composing import composition
from .core import CompositionError, cute_construction_only  # noqa: F401
from .inverses import complement, left_inverse, right_inverse
from .tiling import (
    blocked_product,
    flat_divide,
    flat_product,
    logical_divide,
    logical_product,
    raked_product,
    tile_to_shape,
    tiled_divide,
    tiled_product,
    zipped_divide,
    zipped_product,
)

__all__ = [
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
    "with_shape",
]

