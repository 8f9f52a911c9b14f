"""Divides and products (logical, zipped, tiled, flat, blocked, raked) and tile_to_shape."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast, overload

from .. import inttuple as it
from ..errors import LayoutError
from ..layout import Layout, append, fmt_tuple, make_layout, make_ordered_layout
from ..speedups import enabled
from .coalescing import coalesce
from .composing import composition
from .core import EMPTY, UNIT, dispatch, modes_of, no_modes
from .inverses import complement
from .kernels import logical_divide_fast, logical_product_fast, static_flat_of

# ---------------------------------------------------------------------------------------------
# divides and products
# ---------------------------------------------------------------------------------------------


def _tiler_layout(t: Any, op: str) -> Layout:
    if isinstance(t, Layout):
        return t
    if it.is_integer(t):
        v = it.as_leaf(t, f"{op} tiler")
        if type(v) is int and v < 1:
            raise LayoutError(f"{op}: tiler size {v} must be >= 1")
        return Layout._make(v, 0 if v == 1 else 1)  # make_layout(n): compact, so 1:0 for n == 1
    raise LayoutError(f"{op}: tiler {t!r} is not a layout, an integer or a tuple of them")


def _by_mode(op: str, A: Layout, B: tuple, f: Callable[[Layout, Any], Layout]) -> Layout:
    modes = modes_of(A)
    if len(B) > len(modes):
        raise LayoutError(f"{op}: tiler {B!r} has {len(B)} modes but layout {A} has only {len(modes)}")
    return make_layout(*([f(m, b) for m, b in zip(modes, B)] + modes[len(B):]))


@overload
def logical_divide(A: Layout, B: Any) -> Layout: ...


@overload
def logical_divide(A: Any, B: Any) -> Any: ...


def logical_divide(A: Any, B: Any) -> Any:
    """logical_divide(A, B) = composition(A, make_layout(B, complement(B, shape(coalesce(A))))).

    Mode 0 of the result is the tile (B's elements of A), mode 1 enumerates the tiles. A tuple
    tiler divides mode by mode.

    >>> str(logical_divide(Layout((4, 2, 3), (2, 1, 8)), Layout(4, 2)))
    '((2,2),(2,3)):((4,1),(2,8))'
    """
    if type(A) is Layout and B is not None and type(B) is not tuple and no_modes(A):
        A = UNIT  # a rank-0 layout is 1:0 (a tuple tiler divides its modes)
    if type(A) is Layout and type(B) is Layout and enabled():
        fa = A._flat if A._static else None  # (a layout built from int tuples has both)
        if fa is None:
            fa = static_flat_of(A)
        fb = B._flat if B._static else None
        if fb is None:
            fb = static_flat_of(B)
        if fa is not None and fb is not None:
            R = logical_divide_fast(A, fa, B, fb)
            if R is not None:
                return R
    if not isinstance(A, Layout):
        return dispatch("logical_divide", A, B)
    if B is None:
        return A
    if type(B) is tuple:
        return _by_mode("logical_divide", A, B, logical_divide)
    B = _tiler_layout(B, "logical_divide")
    return composition(A, make_layout(B, complement(B, coalesce(A).shape)))


@overload
def logical_product(A: Layout, B: Any) -> Layout: ...


@overload
def logical_product(A: Any, B: Any) -> Any: ...


def logical_product(A: Any, B: Any) -> Any:
    """logical_product(A, B) = make_layout(A, composition(complement(A, size(A)*cosize(B)), B)).

    Mode 0 is A, mode 1 repeats A as B says. A tuple tiler multiplies mode by mode.

    >>> str(logical_product(Layout((2, 2), (4, 1)), Layout(6, 1)))
    '((2,2),(2,3)):((4,1),(2,8))'
    """
    if type(A) is Layout and type(B) is Layout and enabled():
        fa = A._flat if A._static else None  # (a layout built from int tuples has both)
        if fa is None:
            fa = static_flat_of(A)
        fb = B._flat if B._static else None
        if fb is None:
            fb = static_flat_of(B)
        if fa is not None and fb is not None:
            R = logical_product_fast(A, fa, B, fb)
            if R is not None:
                return R
    if not isinstance(A, Layout):
        return dispatch("logical_product", A, B)
    if B is None:
        return A
    if type(B) is tuple:
        return _by_mode("logical_product", A, B, logical_product)
    B = _tiler_layout(B, "logical_product")
    return make_layout(A, composition(complement(A, A.size() * B.cosize()), B))


def _hier_unzip(op: str, f: Callable[[Layout, Any], Layout], A: Layout, B: Any) -> Layout:
    """CuTe's ``tile_unzip(f(A, B), B)``: B's terminals pick the rank-2 (tile, rest) modes to gather.

    Under a ``None`` (CuTe's ``_``) the mode is left as it is, so CuTe's ``zip2_by`` reads the mode
    itself as (tile, rest): it must have rank 2."""
    if B is None:
        if type(A.shape) is not tuple or len(A.shape) != 2:
            raise LayoutError(
                f"{op}: under a '_' (None) tiler the mode {A} is split as (tile, rest) itself, so it must have "
                "rank 2 (CuTe's zip2_by: mismatched ranks)"
            )
        return A
    if type(B) is tuple:
        modes = modes_of(A)
        if len(B) > len(modes):
            raise LayoutError(f"{op}: tiler {B!r} has {len(B)} modes but layout {A} has only {len(modes)}")
        split = [_hier_unzip(op, f, modes[i], B[i]) for i in range(len(B))]
        first = make_layout(*[s[0] for s in split])
        second = make_layout(*([s[1] for s in split] + modes[len(B):]))
        return make_layout(first, second)
    return f(A, B)


def _unpack(r: Layout, both: bool) -> Layout:
    """CuTe's ``r(_, repeat<R1>(_))`` (or ``r(repeat<R0>(_), repeat<R1>(_))`` with ``both``): the
    modes of a rank-2 result's second (and first) mode lifted to the top; a mode of rank 1 (an
    integer or a 1-tuple) stays as it is."""
    shape, stride = r.shape, r.stride
    if type(shape) is not tuple:
        return Layout._make((shape,), (stride,), r._static, r._flat)
    ps: list = []
    pd: list = []
    for k, (s, d) in enumerate(zip(shape, cast(tuple, stride))):
        if (both or k == 1) and type(s) is tuple and len(s) > 1:
            ps.extend(s)
            pd.extend(d)
        else:
            ps.append(s)
            pd.append(d)
    # the same leaves in the same order: r's flat modes and static flag carry over
    return Layout._make(tuple(ps), tuple(pd), r._static, r._flat)


@overload
def zipped_divide(A: Layout, B: Any) -> Layout: ...


@overload
def zipped_divide(A: Any, B: Any) -> Any: ...


def zipped_divide(A: Any, B: Any) -> Any:
    """zipped_divide(A, B): logical_divide with the tile modes gathered: ((tile...), (rest...)).

    >>> str(zipped_divide(Layout((8, 6)), (Layout(2, 1), Layout(3, 1))))
    '((2,3),(4,2)):((1,8),(2,24))'
    """
    if not isinstance(A, Layout):
        return dispatch("zipped_divide", A, B)
    return _hier_unzip("zipped_divide", logical_divide, A, B)


@overload
def tiled_divide(A: Layout, B: Any) -> Layout: ...


@overload
def tiled_divide(A: Any, B: Any) -> Any: ...


def tiled_divide(A: Any, B: Any) -> Any:
    """tiled_divide(A, B): zipped_divide with the rest modes unpacked: ((tile...), rest0, rest1, ...)."""
    if not isinstance(A, Layout):
        return dispatch("tiled_divide", A, B)
    return _unpack(zipped_divide(A, B), False)


@overload
def flat_divide(A: Layout, B: Any) -> Layout: ...


@overload
def flat_divide(A: Any, B: Any) -> Any: ...


def flat_divide(A: Any, B: Any) -> Any:
    """flat_divide(A, B): zipped_divide with both modes unpacked: (tile0, tile1, ..., rest0, rest1, ...)."""
    if not isinstance(A, Layout):
        return dispatch("flat_divide", A, B)
    return _unpack(zipped_divide(A, B), True)


@overload
def zipped_product(A: Layout, B: Any) -> Layout: ...


@overload
def zipped_product(A: Any, B: Any) -> Any: ...


def zipped_product(A: Any, B: Any) -> Any:
    """zipped_product(A, B): logical_product with modes gathered: ((block...), (repeats...))."""
    if not isinstance(A, Layout):
        return dispatch("zipped_product", A, B)
    return _hier_unzip("zipped_product", logical_product, A, B)


@overload
def tiled_product(A: Layout, B: Any) -> Layout: ...


@overload
def tiled_product(A: Any, B: Any) -> Any: ...


def tiled_product(A: Any, B: Any) -> Any:
    """tiled_product(A, B): zipped_product with the repeat modes unpacked."""
    if not isinstance(A, Layout):
        return dispatch("tiled_product", A, B)
    return _unpack(zipped_product(A, B), False)


@overload
def flat_product(A: Layout, B: Any) -> Layout: ...


@overload
def flat_product(A: Any, B: Any) -> Any: ...


def flat_product(A: Any, B: Any) -> Any:
    """flat_product(A, B): zipped_product with both modes unpacked."""
    if not isinstance(A, Layout):
        return dispatch("flat_product", A, B)
    return _unpack(zipped_product(A, B), True)


def _zip2(op: str, a: Layout, b: Layout) -> Layout:
    """CuTe's ``zip(a, b)`` of two layouts: ((a0,b0),(a1,b1),...) when a's shape is a tuple (b must
    then be a tuple of the same rank); ((a,b)) when it is an integer."""
    if type(a.shape) is not tuple:
        return make_layout(make_layout(a, b))
    if type(b.shape) is not tuple or len(b.shape) != len(a.shape):
        raise LayoutError(
            f"{op}: cannot zip {a} with {b}: CuTe zips mode by mode and needs {b} to be a tuple of rank "
            f"{len(a.shape)} (mismatched ranks)"
        )
    pairs = [make_layout(x, y) for x, y in zip(modes_of(a), modes_of(b))]
    return make_layout(*pairs) if pairs else EMPTY  # zip of two rank-0 layouts: rank 0 (as the CuTe DSL)


def _rank_product(op: str, A: Any, B: Any, raked: bool) -> Layout:
    if not isinstance(A, Layout):
        return dispatch(op, A, B)
    if type(B) is tuple:
        B = make_layout(*[_tiler_layout(b, op) for b in B]) if B else EMPTY
    B = _tiler_layout(B, op)
    R = max(len(A), len(B))
    Ap, Bp = append(A, n=R), append(B, n=R)
    res = logical_product(Ap, Bp)
    return _zip2(op, res[1], res[0]) if raked else _zip2(op, res[0], res[1])  # current CuTe: no coalescing


@overload
def blocked_product(A: Layout, B: Any) -> Layout: ...


@overload
def blocked_product(A: Any, B: Any) -> Any: ...


def blocked_product(A: Any, B: Any) -> Any:
    """blocked_product(A, B): B's elements each replaced by a copy of the block A; rank max(rank A, rank B).

    Mode i of the result is ``(A_i, P_i)``: the block's mode first, then the repeats.

    >>> str(blocked_product(Layout((2, 5), (5, 1)), Layout((3, 4), (1, 3))))
    '((2,3),(5,4)):((5,10),(1,30))'
    """
    return _rank_product("blocked_product", A, B, raked=False)


@overload
def raked_product(A: Layout, B: Any) -> Layout: ...


@overload
def raked_product(A: Any, B: Any) -> Any: ...


def raked_product(A: Any, B: Any) -> Any:
    """raked_product(A, B): like blocked_product, but the blocks are interleaved: mode i is (P_i, A_i).

    >>> str(raked_product(Layout((2, 5), (5, 1)), Layout((3, 4), (1, 3))))
    '((3,2),(4,5)):((10,5),(30,1))'
    """
    return _rank_product("raked_product", A, B, raked=True)


@overload
def tile_to_shape(block: Layout, target_shape: Any, order: Any = None) -> Layout: ...


@overload
def tile_to_shape(block: Any, target_shape: Any, order: Any = None) -> Any: ...


def tile_to_shape(block: Any, target_shape: Any, order: Any = None) -> Any:
    """tile_to_shape(A, S, order) -> blocked product of A over S / shape(A), compatible with S.

    ``order`` ("left" by default, "right", or a tuple of ranks) says which modes the block repeats
    across first. Precondition: each mode of the block divides the target mode.

    >>> str(tile_to_shape(Layout((2, 2), (1, 2)), (4, 6)))
    '((2,2),(2,3)):((1,4),(2,8))'
    """
    if not isinstance(block, Layout):
        return dispatch("tile_to_shape", block, target_shape, order)
    trg = it.normalize(target_shape, "tile_to_shape target") if not isinstance(
        target_shape, Layout) else target_shape.shape
    R = it.rank(trg)
    if len(block) > R:
        raise LayoutError(
            f"tile_to_shape: block {block} has rank {len(block)} > rank {R} of target shape {fmt_tuple(trg)}"
        )
    padded = append(block, n=R)
    bshape = it.product_each(padded.shape)
    tshape = it.product_each(trg)
    bsh = bshape if type(bshape) is tuple else (bshape,)
    tsh = tshape if type(tshape) is tuple else (tshape,)
    for b, t in zip(bsh, tsh):
        if not it.divides(b, t):
            raise LayoutError(
                f"tile_to_shape: block shape {fmt_tuple(bshape)} of {block} does not divide target shape {fmt_tuple(tshape)}"
            )
    pshape = it.ceil_div(tshape, bshape)
    if order is None or order == "left":
        pl = make_layout(pshape)
    elif order == "right":
        pl = make_layout(pshape, order="right")
    else:
        pl = make_ordered_layout(pshape, order)
    return blocked_product(padded, pl)
