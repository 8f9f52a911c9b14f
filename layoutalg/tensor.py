"""Tensors: a layout bound to a place in memory, sliced and partitioned as CuTe does it.

A :class:`Tensor` is a layout (coordinate -> element offset; a plain
:class:`~layoutalg.layout.Layout` or a swizzled :class:`~layoutalg.composed.ComposedLayout`) plus
an *engine offset*: where the layout's offset 0 sits in a flat buffer, optionally a numpy array
``data``. Element ``c`` is ``data[offset + layout(c)]``. That is all CuTe's ``Tensor`` is to the
partitioning functions -- the pointer arithmetic -- and it is what this module reproduces:

* **slicing** with ``_`` (or ``None``, or Python's ``:``) keeps a mode, an integer fixes it:
  ``T[_, 3]`` is column 3, and its engine offset moves by ``layout(0, 3)``;
* :func:`local_tile` (``inner_partition``): divide by a tiler, keep the tile, pick the tile with a
  coordinate -- the CTA's block of a matrix;
* :func:`local_partition` (``outer_partition``): divide by a thread layout's shape, keep the rest,
  pick the element of each tile that a thread owns -- the thread's share of a block.

A 4x6 row-major matrix, by hand. ``L = (4,6):(6,1)``; column 3 is ``T[_, 3]``: layout ``(4):(6)``
at offset ``3``, so its elements sit at 3, 9, 15, 21. Tiling it by 2x3 blocks, block ``(1, 1)`` starts
at row 2, column 3: offset ``2*6 + 3 = 15``; its layout is the block's, ``(2,3):(6,1)``. Two
threads along rows (``(2,1):(1,0)``) each take every other row: thread 1 starts at offset 6, and
holds a ``(2,6):(12,1)`` share::

    >>> from layoutalg import Layout
    >>> T = make_tensor(Layout((4, 6), (6, 1)))
    >>> col = T[_, 3]
    >>> col.offset, str(col.layout), col.addresses().tolist()
    (3, '(4):(6)', [3, 9, 15, 21])
    >>> blk = local_tile(T, (2, 3), (1, 1))
    >>> blk.offset, str(blk.layout)
    (15, '(2,3):(6,1)')
    >>> thr = local_partition(T, Layout((2, 1), (1, 0)), 1)
    >>> thr.offset, str(thr.layout)
    (6, '(2,6):(12,1)')

The tuple manipulations follow CuTe's ``slice``/``dice`` (``underscore.hpp``): sliced modes that are
nested are *flattened* into their parent, as CuTe's ``filter_tuple`` does, so ``T((_, 2), _)`` of a
``((4,3),5)`` tensor has shape ``(4,5)``. :func:`zipped_divide` here is CuTe's
``tile_unzip(logical_divide(A, tiler), tiler)``, in which a ``_`` entry of the tiler keeps a mode that
must already be rank 2 and splits it into (tile, rest) -- which is how ``TiledMMA`` and
``TiledCopy`` peel their thread and value modes (:mod:`layoutalg.tiled`).
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from typing import Any, cast

import numpy as np

from . import inttuple as it
from .algebra import composition, tiled_product
from .algebra import zipped_divide as _algebra_zipped_divide
from .composed import ComposedLayout
from .swizzle import Swizzle
from .errors import LayoutError, guarded
from .layout import Layout, fmt_tuple, make_layout
from .parse import parse

__all__ = [
    "_",
    "Underscore",
    "underscore",
    "is_underscore",
    "slice_",
    "dice",
    "slice_and_offset",
    "zip2_by",
    "zipped_divide",
    "Tensor",
    "make_tensor",
    "make_layout_like",
    "make_fragment_like",
    "inner_partition",
    "outer_partition",
    "local_tile",
    "local_partition",
    "get_flat_coord",
    "compact_col_major",
]


class Underscore:
    """CuTe's ``_``: "keep this mode" in a coordinate or a tiler. ``None`` and ``slice(None)`` mean the same."""

    _instance: Underscore | None = None

    def __new__(cls) -> Underscore:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "_"

    def __reduce__(self) -> str:
        return "_"


#: CuTe's underscore ``_``, the one :class:`Underscore`; modules of the package import it by this name
#: (``from .tensor import underscore as _``), users as ``_`` (``from layoutalg import _``)
underscore = _ = Underscore()


def is_underscore(x: Any) -> bool:
    """``x`` is ``_``, ``None`` or ``slice(None)`` (Python's ``:``)."""
    return x is _ or x is None or (isinstance(x, slice) and x == slice(None))


def _norm_coord(c: Any) -> Any:
    """Underscores normalised to ``_``; lists to tuples; numpy integers to ints."""
    t = type(c)
    if t is int:  # the common cases first: an int, a tuple of ints (kept as they are)
        return c
    if t is tuple:
        for x in c:
            if type(x) is not int:
                return tuple(_norm_coord(x) for x in c)
        return c
    if is_underscore(c):
        return _
    if isinstance(c, slice):
        raise LayoutError(f"Tensor slicing: slice {c!r} is not supported; use _ (or :) to keep a whole mode")
    if isinstance(c, (tuple, list)):
        return tuple(_norm_coord(x) for x in c)
    if isinstance(c, np.integer):
        return int(c)
    if isinstance(c, bool) or not isinstance(c, int):
        raise LayoutError(f"Tensor coordinate: {c!r} is not an int, _ or a tuple of them")
    return c


def _has_underscore(c: Any) -> bool:
    if c is _:
        return True
    return type(c) is tuple and any(_has_underscore(x) for x in c)


def _pattern(c: Any) -> Any:
    """Where ``c`` has ``_`` (its integers all 0): what a plain layout's slice by ``c`` depends on."""
    if c is _:
        return c
    if type(c) is tuple:
        return tuple(_pattern(x) for x in c)
    return 0


def _zero_underscores(c: Any) -> Any:
    if c is _:
        return 0
    if type(c) is tuple:
        return tuple(_zero_underscores(x) for x in c)
    return c


# ---------------------------------------------------------------------------------------------
# slice / dice of integer tuples and layouts (cute/underscore.hpp)
# ---------------------------------------------------------------------------------------------
def _lift(coord: Any, t: Any, keep_underscore: bool, op: str) -> tuple:
    """CuTe's lift_slice / lift_dice: a tuple of what ``coord`` keeps of ``t`` (flattened into the parent)."""
    if type(coord) is tuple:
        if type(t) is not tuple or len(t) != len(coord):
            raise LayoutError(f"{op}: coordinate {coord} does not match the modes of {it_fmt(t)}")
        out: tuple = ()
        for c, x in zip(coord, t):
            out += _lift(c, x, keep_underscore, op)
        return out
    if (coord is _) == keep_underscore:
        return (t,)
    return ()


def it_fmt(t: Any) -> str:
    return fmt_tuple(t)


def _tuple_op(coord: Any, t: Any, keep_underscore: bool, op: str) -> Any:
    coord = _norm_coord(coord)
    if type(coord) is tuple:
        return _lift(coord, t, keep_underscore, op)
    if (coord is _) == keep_underscore:
        return t
    return ()


def slice_(coord: Any, x: Any) -> Any:
    """CuTe's ``slice(coord, x)``: the parts of ``x`` (an IntTuple or a Layout) where ``coord`` has ``_``.

    Sliced modes inside a nested coordinate are flattened into the parent (``filter_tuple``);
    ``slice_(_, x) == x``.

    >>> slice_((_, 2), (4, 8)), slice_(((_, 1), _), ((2, 3), 5))
    ((4,), (2, 5))
    >>> str(slice_((_, 0), Layout((4, 8), (8, 1))))
    '(4):(8)'
    """
    if isinstance(x, Layout):
        s = _tuple_op(coord, x.shape, True, "slice")
        d = _tuple_op(coord, x.stride, True, "slice")
        if s == ():
            raise LayoutError(f"slice: coordinate {coord} keeps no mode of {x}")
        return Layout(s, d)
    return _tuple_op(coord, x, True, "slice")


def dice(coord: Any, x: Any) -> Any:
    """CuTe's ``dice(coord, x)``: the parts of ``x`` where ``coord`` has an integer (``_`` drops the mode).

    Used with projections such as ``(1, _, 1)`` (CuTe's ``Step<_1, X, _1>``).

    >>> dice((1, _, 1), (32, 64, 8)), dice((1, None), (4, 8))
    ((32, 8), (4,))
    """
    if isinstance(x, Layout):
        s = _tuple_op(coord, x.shape, False, "dice")
        d = _tuple_op(coord, x.stride, False, "dice")
        if s == ():
            raise LayoutError(f"dice: projection {coord} keeps no mode of {x}")
        return Layout(s, d)
    return _tuple_op(coord, x, False, "dice")


def slice_and_offset(coord: Any, layout: Any) -> tuple[Any, Any]:
    """``(slice_(coord, L), L(coord with _ -> 0))``; for a composed layout the offset moves into it.

    CuTe (``layout_composed.hpp``): slicing ``Sw o off o B`` gives ``Sw o (off + B(c0)) o slice(B)``
    with engine offset 0, because the swizzle must see the whole offset.

    >>> L, off = slice_and_offset((_, 3), Layout((4, 6), (6, 1)))
    >>> str(L), off
    ('(4):(6)', 3)
    """
    coord = _norm_coord(coord)
    if isinstance(layout, ComposedLayout):
        if isinstance(layout.outer, Swizzle) and isinstance(layout.inner, Layout):
            return _swizzle_slice_and_offset(coord, layout)
        sub, off = slice_and_offset(coord, layout.inner)
        return ComposedLayout(layout.outer, layout.offset + off, sub), 0
    if not isinstance(layout, Layout):
        raise LayoutError(f"slice_and_offset: {layout!r} is not a layout")
    if coord is _:
        return layout, 0
    sub = slice_(coord, layout)
    dyn = getattr(layout, "dynamic", None)
    if dyn is not None:  # keep track of CuTe's run-time strides through further slices
        sub = _Decayed(sub, _tuple_op(coord, dyn, True, "slice"))
    return sub, _eval(layout, _zero_underscores(coord))


def _all_underscore(c: Any) -> bool:
    if c is _:
        return True
    return type(c) is tuple and all(_all_underscore(x) for x in c)


def _swizzle_slice_and_offset(coord: Any, C: ComposedLayout) -> tuple[Any, int]:
    """CuTe's slice_and_offset for ``Swizzle o offset o L`` (``swizzle_layout.hpp``).

    Slicing fixes some coordinates; their contribution to the offset is split into the bits the
    swizzle reads or writes (Y and Z, kept inside) and the rest (moved to the engine offset). When
    the remaining layout touches only one of each Y/Z pair of bits, the swizzle acts on it as a
    sign flip of some strides, and CuTe *decays* the result to a plain layout with those strides
    (e.g. ``-16``) -- so a thread's slice of a swizzled tile is an ordinary layout. Otherwise the
    result stays composed with the new offset. CuTe assumes the kept and the sliced-away bits never
    carry into each other; where they do (a composed offset overlapping the kept bits) CuTe's form
    would be another function, and the exact ``Sw o (offset + L(c0)) o slice(L)`` is returned instead.
    """
    sw, L = cast(Swizzle, C.outer), cast(Layout, C.inner)
    B, M, S = sw.B, sw.M, abs(sw.S)
    if _all_underscore(coord):
        return ComposedLayout(sw, C.offset, slice_(coord, L)), 0
    shape = (1 << M, 1 << B, 1 << (S - B), 1 << B, 1)
    size_sw = 1 << (M + S + B)
    anti_zy = Layout(shape, (1, 0, 1 << (M + B), 0, size_sw))
    only_zy = Layout(shape, (0, 1 << M, 0, 1 << (M + S), 0))
    sliced = slice_(coord, L)
    diced = dice(coord, L)
    dcoord = dice(coord, coord)
    d_anti = composition(anti_zy, diced)
    d_only = composition(only_zy, diced)
    offset_only_zy = int(C.offset) ^ int(_eval(d_only, dcoord))
    offset_anti_zy = int(_eval(d_anti, dcoord))
    s_only = composition(only_zy, sliced)
    active = int(s_only(int(s_only.size()) - 1))
    exact: tuple[Any, int] = (ComposedLayout(sw, int(C.offset) + int(_eval(L, _zero_underscores(coord))), sliced), 0)
    if active & ~sw(active):  # the slice still hits a Y bit and its Z bit: not reducible
        kept: tuple[Any, int] = (ComposedLayout(sw, offset_only_zy, sliced), offset_anti_zy)
        return kept if _same_addresses(kept, exact) else exact
    zzz, yyy = sw.zzz_mask, sw.yyy_mask
    Z, Y = zzz & -zzz, yyy & -yyy

    def strides(z_side: bool) -> tuple:
        if z_side:  # the Z bits: +-Z*2^i, negative where the offset has the Y bit set
            return tuple((Z << i) if (offset_only_zy & (Y << i)) == 0 else -(Z << i) for i in range(B))
        return tuple(((Y + Z) << i) if (offset_only_zy & (Z << i)) == 0 else ((Y - Z) << i) for i in range(B))

    lo, hi = strides(Z < Y), strides(Z > Y)
    # which of these strides CuTe holds as run-time values: all of them when the offset they come
    # from depends on the (run-time) coordinates sliced away, i.e. when the diced part reaches a Y or
    # Z bit through a mode of more than one element
    fs, fd = d_only.flat
    dynamic = any(sh != 1 and st != 0 for sh, st in zip(fs, fd))
    R, flags = _decayed(B, M, S, sliced, dynamic)
    sub = {f"lo{i}": lo[i] for i in range(B)} | {f"hi{i}": hi[i] for i in range(B)}
    out = Layout(R.shape, _subs_stride(R.stride, sub))
    decayed: tuple[Any, int] = (_Decayed(out, flags), int(sw(offset_only_zy)) + offset_anti_zy)
    # CuTe assumes the bits it slices away and the bits it keeps never carry into each other; where a
    # layout breaks that (an offset overlapping the kept bits), keep the exact composed form instead
    return decayed if _same_addresses(decayed, exact) else exact


def _same_addresses(a: tuple, b: tuple) -> bool:
    ta = a[1] + np.asarray(a[0].table(), dtype=np.int64)
    tb = b[1] + np.asarray(b[0].table(), dtype=np.int64)
    return bool(np.array_equal(ta, tb))


class _Decayed(Layout):
    """A plain layout that CuTe holds with some run-time strides (``dynamic``: a bool per stride leaf)."""

    def __init__(self, L: Layout, dynamic: Any):
        super().__init__(L.shape, L.stride)
        object.__setattr__(self, "dynamic", dynamic)


def _subs_stride(t: Any, sub: dict) -> Any:
    if type(t) is tuple:
        return tuple(_subs_stride(x, sub) for x in t)
    if isinstance(t, int):
        return t
    return int(t.subs({sym: sub[sym.name] for sym in t.free_symbols}))


@lru_cache(maxsize=4096)
def _decayed(B: int, M: int, S: int, sliced: Layout, dynamic: bool) -> tuple[Layout, Any]:
    """composition(swizzle_layout, sliced) with the B-bit strides as symbols: the structure CuTe builds
    (run-time strides do not coalesce), and which strides of the result are run-time values."""
    import sympy

    lo = tuple(sympy.Symbol(f"lo{i}", integer=True, nonzero=True) for i in range(B))
    hi = tuple(sympy.Symbol(f"hi{i}", integer=True, nonzero=True) for i in range(B))
    two = (2,) * B
    sw_layout = Layout((1 << M, two, 1 << (S - B), two, 1), (1, lo, 1 << (M + B), hi, 1 << (M + B + S)))
    R = composition(sw_layout, sliced)

    def flag(t: Any) -> Any:
        if type(t) is tuple:
            return tuple(flag(x) for x in t)
        return dynamic and not isinstance(t, int)

    return R, flag(R.stride)


def _eval(layout: Any, coord: Any) -> Any:
    if type(coord) is tuple:
        if len(coord) == 1 and not isinstance(layout.shape, tuple):
            return layout(coord[0])
        return layout(*coord) if len(coord) == len(layout) else layout(coord)
    return layout(coord)


# ---------------------------------------------------------------------------------------------
# zipped divide with CuTe's treatment of ``_``
# ---------------------------------------------------------------------------------------------
def _modes(L: Layout) -> list:
    shape, stride = cast(Any, L.shape), cast(Any, L.stride)
    if type(shape) is tuple:
        return [Layout(s, d) for s, d in zip(shape, stride)]
    return [L]


@guarded
def zip2_by(layout: Layout, guide: Any) -> Layout:
    """CuTe's ``tile_unzip`` step: ``((A,a),((B,b),(C,c)),d)`` guided by ``(X,(X,X))`` -> ``((A,(B,C)),(a,(b,c),d))``.

    Each terminal of ``guide`` (anything that is not a tuple, ``_`` included) selects a rank-2 mode
    of ``layout``, split into (first, second).

    >>> str(zip2_by(Layout(((2, 3), (4, 5), 6)), (1, 1)))
    '((2,4),(3,5,6)):((1,6),(2,24,120))'
    """
    if type(guide) is tuple:
        modes = _modes(layout)
        if len(modes) < len(guide):
            raise LayoutError(f"zip2_by: guide {guide!r} has more modes than {layout}")
        split = [zip2_by(modes[i], guide[i]) for i in range(len(guide))]
        first = make_layout(*[s[0] for s in split])
        second = make_layout(*([s[1] for s in split] + modes[len(guide):]))
        return make_layout(first, second)
    if len(layout) != 2:
        raise LayoutError(f"zip2_by: mode {layout} must have rank 2 to be split into (tile, rest)")
    return layout


def _tiler_for_algebra(t: Any) -> Any:
    if is_underscore(t):
        return None
    if isinstance(t, list):
        t = tuple(t)
    if type(t) is tuple:
        return tuple(_tiler_for_algebra(x) for x in t)
    return t


def zipped_divide(layout: Any, tiler: Any) -> Any:
    """CuTe's ``zipped_divide(A, tiler) = tile_unzip(logical_divide(A, tiler), tiler)``: ``((tile...), (rest...))``.

    Works on a :class:`Layout`, a :class:`ComposedLayout` (acting on its inner layout) and a
    :class:`Tensor`. A ``_`` in the tiler leaves its mode undivided; that mode must be rank 2 and
    is split into its two halves (CuTe's semantics, used by ``TiledMMA::thrfrg_*``).

    >>> str(zipped_divide(Layout((8, 6)), (2, 3)))
    '((2,3),(4,2)):((1,8),(2,24))'
    >>> str(zipped_divide(Layout(((4, 2), 6)), (_, 3)))
    '((4,3),(2,2)):((1,8),(4,24))'
    """
    if isinstance(layout, Tensor):
        return layout.with_layout(zipped_divide(layout.layout, tiler))
    return _algebra_zipped_divide(layout, _tiler_for_algebra(tiler))


# ---------------------------------------------------------------------------------------------
# make_layout_like / make_fragment_like (cute/layout.hpp, stride.hpp compact_order)
# ---------------------------------------------------------------------------------------------
def compact_col_major(shape: Any, start: int = 1) -> Any:
    """CuTe's ``compact_col_major(shape, start)`` on static shapes: the strides of the column-major
    layout of ``shape`` whose first mode has stride ``start``; a size-1 mode gets stride 0 (CuTe's
    static ``_1`` modes do, which is what ``make_layout(shape)`` prints).

    >>> compact_col_major((2, (1, 3), 4))
    (1, (0, 2), 6)
    >>> compact_col_major(8, 3)
    3
    """
    if type(shape) is tuple:
        out = []
        cur = start
        for s in shape:
            out.append(compact_col_major(s, cur))
            cur = cur * it.product(s)
        return tuple(out)
    return 0 if shape == 1 else start




def _compact_order(shape: Any, order: Any, dynamic: Any = None) -> Any:
    """CuTe's compact_order(shape, order): leaves ordered by ``order``; equal orders share a start.

    ``dynamic`` (a bool per leaf of ``order``, or None): run-time entries of ``order``, which CuTe
    ranks after every static one, in their order of appearance (``max static + 1 + position``).
    """
    def product_like(s: Any, o: Any) -> Any:
        if type(o) is tuple:
            return tuple(product_like(a, b) for a, b in zip(s, o))
        return it.product(s)

    flat = list(it.flatten(order)) if type(order) is tuple else [order]
    dyn = list(it.flatten(dynamic)) if type(dynamic) is tuple else ([bool(dynamic)] if dynamic is not None else [])
    if any(dyn):
        top = max([0] + [o for o, d in zip(flat, dyn) if not d])
        flat = [top + 1 + j if d else o for j, (o, d) in enumerate(zip(flat, dyn))]
        order = it.unflatten(flat, order) if type(order) is tuple else flat[0]
    if type(order) is not tuple:
        order_t = order
        ref_shape = (it.product(shape),)
        ref_order = (order,)
    else:
        order_t = order
        ref_shape = it.flatten(product_like(shape, order))
        ref_order = it.flatten(order)

    def go(s: Any, o: Any) -> Any:
        if type(o) is tuple:
            return tuple(go(a, b) for a, b in zip(s, o))
        start = 1
        for rs, ro in zip(ref_shape, ref_order):
            if ro < o:
                start *= rs
        return compact_col_major(s, start)

    return go(shape, order_t)


@guarded
def make_layout_like(layout: Layout) -> Layout:
    """CuTe's make_layout_like: a compact layout of the same shape, strides in the order of L's (0 kept).

    >>> str(make_layout_like(Layout((2, 2, 2, 2), (0, 2, 4, 1))))
    '(2,2,2,2):(0,2,4,1)'
    """
    def filter_zeros(d: Any, s: Any) -> Any:
        if type(d) is tuple:
            return tuple(filter_zeros(a, b) for a, b in zip(d, s))
        return 1 if d == 0 else s

    return Layout(layout.shape, _compact_order(filter_zeros(layout.stride, layout.shape), layout.stride))


def make_fragment_like(x: Any) -> Any:
    """CuTe's make_fragment_like: a compact (register) layout for a partition, mode 0 column-major.

    Mode 0 (the atom's values) is laid out column-major (stride-0 modes kept at 0); the other
    modes follow the order of ``x``'s strides. A Tensor gives a Tensor with fresh zeroed data
    (``dtype`` of ``x.data`` if it has any) and engine offset 0.

    >>> str(make_fragment_like(Layout(((2, 2), 2, 4), ((1, 512), 16, 1024))))
    '((2,2),2,4):((1,2),4,8)'
    """
    if isinstance(x, Tensor):
        L = x.layout.inner if isinstance(x.layout, ComposedLayout) else x.layout
        F = make_fragment_like(L)
        dtype = x.data.dtype if x.data is not None else np.float64
        return Tensor(F, np.zeros(int(F.cosize()), dtype=dtype), 0)
    if not isinstance(x, Layout):
        return Layout(it.normalize(x, "make_fragment_like shape"))
    if len(x) > 1 and type(x.shape) is tuple:
        m0 = x[0]

        def filter_zeros(d: Any, s: Any) -> Any:
            if type(d) is tuple:
                return tuple(filter_zeros(a, b) for a, b in zip(d, s))
            return 1 if d == 0 else s

        first = Layout(m0.shape, compact_col_major(filter_zeros(m0.stride, m0.shape), 1))
        xs: Any = x.shape
        xd: Any = x.stride
        rest_shape = tuple(xs[1:])
        rest_stride = tuple(xd[1:])
        dyn = getattr(x, "dynamic", None)
        rest = Layout(rest_shape, _compact_order(rest_shape, rest_stride, tuple(dyn[1:]) if dyn is not None else None))
        return tiled_product(first, rest)
    return Layout(x.shape)


# ---------------------------------------------------------------------------------------------
# Tensor
# ---------------------------------------------------------------------------------------------
def _as_layout(x: Any, op: str) -> Any:
    if isinstance(x, (Layout, ComposedLayout)):
        return x
    if isinstance(x, str):
        return parse(x)
    raise LayoutError(f"{op}: {x!r} is not a layout")


class Tensor:
    """A layout bound to a buffer: element ``c`` lives at ``offset + layout(c)`` of ``data``.

    Invariants: ``layout`` is a static :class:`Layout` or :class:`ComposedLayout`; ``offset`` an
    int; ``data`` None or a 1-D numpy array the tensor's addresses index. Slicing and the
    partition functions never copy ``data``: results are views sharing it, as CuTe's are.
    """

    __slots__ = ("layout", "offset", "data", "swizzle")

    def __init__(self, layout: Any, data: Any = None, offset: int = 0, swizzle: Swizzle | None = None):
        L = _as_layout(layout, "Tensor")
        if not L.is_static:
            raise LayoutError(f"Tensor: layout {L} is symbolic; substitute values first")
        if data is not None:
            data = np.asarray(data)
            if data.ndim != 1:
                raise LayoutError(f"Tensor: data must be a 1-D buffer, got shape {data.shape}")
        if swizzle is not None and not isinstance(swizzle, Swizzle):
            raise LayoutError(f"Tensor: swizzle {swizzle!r} is not a Swizzle")
        self.layout = L
        self.data = data
        self.offset = int(offset)
        self.swizzle = swizzle if swizzle is not None and not swizzle.is_identity else None

    # --- facts -------------------------------------------------------------------------------
    @property
    def shape(self) -> Any:
        """Shape of the layout."""
        return self.layout.shape

    @property
    def stride(self) -> Any:
        """Stride of the layout (of the inner layout for a composed one)."""
        inner: Any = self.layout.inner if isinstance(self.layout, ComposedLayout) else self.layout
        return inner.stride

    def size(self) -> int:
        """Number of elements."""
        return int(self.layout.size())

    def __len__(self) -> int:
        return len(self.layout)

    @property
    def rank(self) -> int:
        """Number of top-level modes."""
        return len(self.layout)

    def with_layout(self, layout: Any) -> Tensor:
        """The same engine (offset, data, swizzle) with another layout."""
        return Tensor(layout, self.data, self.offset, self.swizzle)

    def mode(self, i: int) -> Tensor:
        """CuTe's ``tensor<i>``: mode ``i`` of the layout, same engine."""
        return self.with_layout(self.layout[i])

    # --- evaluation and slicing --------------------------------------------------------------
    def _normalise(self, coord: tuple) -> Any:
        if len(coord) == 1:
            return _norm_coord(coord[0])
        return _norm_coord(coord)

    def __call__(self, *coord: Any) -> Any:
        """``T(c)``: the element at ``c`` (its address if there is no data); with ``_`` anywhere, a sliced Tensor."""
        if not coord:
            raise LayoutError("Tensor.__call__: no coordinate given")
        c = self._normalise(coord)
        if _has_underscore(c):
            if type(c) is tuple and type(self.layout.shape) is tuple and len(c) != len(self.layout):
                raise LayoutError(
                    f"Tensor slice: coordinate {c} has {len(c)} modes, tensor {self} has {len(self.layout)}"
                )
            L, off = slice_and_offset(c, self.layout)
            return Tensor(L, self.data, self.offset + int(off), self.swizzle)
        a = self.address(c)
        if self.data is None:
            return a
        return self.data[a]

    def slices(self, coords: Iterable[Any]) -> list[Any]:
        """``[T(c) for c in coords]``, faster when the coordinates share where their ``_`` are (CuTe's
        ``copy`` walking ``T(_, i)`` over a partition's instruction repeats): a plain layout's slice depends
        only on those places, so it is built once per pattern and each coordinate costs one evaluation of
        its offset. Composed (swizzled) layouts slice coordinate by coordinate, as ``T(c)`` does.

        >>> T = Tensor(Layout((4, 2, 3), (1, 4, 8)), offset=100)
        >>> [str(t) for t in T.slices([(_, 1, 0), (_, 0, 2)])]
        ['104 o (4):(1)', '116 o (4):(1)']
        """
        L = self.layout
        if isinstance(L, ComposedLayout):
            return [self(c) for c in coords]
        out: list[Any] = []
        sliced: dict[Any, Any] = {}  # underscore pattern -> the sliced layout
        for coord in coords:
            c = _norm_coord(coord)
            if not _has_underscore(c):
                out.append(self(c))
                continue
            key = _pattern(c)
            sub = sliced.get(key)
            if sub is None:  # the first coordinate of a pattern takes T(c)'s whole path, checks included
                t = self(c)
                sliced[key] = t.layout
                out.append(t)
                continue
            t = object.__new__(Tensor)
            t.layout, t.data, t.swizzle = sub, self.data, self.swizzle
            t.offset = self.offset + int(_eval(L, _zero_underscores(c)))
            out.append(t)
        return out

    def __getitem__(self, coord: Any) -> Any:
        return self(*coord) if type(coord) is tuple else self(coord)

    def address(self, *coord: Any) -> int:
        """``offset + layout(c)``: where element ``c`` lives in the buffer."""
        c = self._normalise(coord) if coord else 0
        try:
            v = _eval(self.layout, c)
        except (TypeError, IndexError) as e:
            raise LayoutError(f"Tensor.address: coordinate {c!r} does not fit tensor {self}: {e}") from None
        a = self.offset + int(v)
        return int(self.swizzle(a)) if self.swizzle is not None else a

    def addresses(self) -> np.ndarray:
        """Every element's address, in the layout's (colexicographic) index order."""
        a = self.offset + np.asarray(self.layout.table(), dtype=np.int64)
        return np.asarray(self.swizzle(a), dtype=np.int64) if self.swizzle is not None else a

    def values(self) -> np.ndarray:
        """``data`` at :meth:`addresses` (LayoutError without data or if an address falls outside it)."""
        if self.data is None:
            raise LayoutError(f"Tensor.values: tensor {self} has no data")
        a = self.addresses()
        if a.size and (a.min() < 0 or a.max() >= self.data.size):
            raise LayoutError(
                f"Tensor.values: addresses {int(a.min())}..{int(a.max())} of {self} fall outside the buffer of "
                f"{self.data.size} elements"
            )
        return self.data[a]

    def compose(self, *tilers: Any) -> Tensor:
        """``T.compose(a, b, ...)`` = the tensor with layout ``composition(L, (a, b, ...))`` (``_`` keeps a mode)."""
        t = _tiler_for_algebra(tilers[0] if len(tilers) == 1 else tuple(tilers))
        return self.with_layout(composition(self.layout, t))

    # --- printing ----------------------------------------------------------------------------
    def __str__(self) -> str:
        if self.swizzle is not None:
            return f"swizzle_ptr[{self.swizzle}]({self.offset}) o {self.layout}"
        return f"{self.offset} o {self.layout}"

    def __repr__(self) -> str:
        d = "" if self.data is None else f", data={self.data.dtype}[{self.data.size}]"
        sw = "" if self.swizzle is None else f", swizzle={self.swizzle}"
        return f"Tensor({self.layout}, offset={self.offset}{sw}{d})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Tensor)
            and self.layout == other.layout
            and self.offset == other.offset
            and self.swizzle == other.swizzle
            and self.data is other.data
        )

    def __hash__(self) -> int:
        return hash((self.layout, self.offset, self.swizzle))


def make_tensor(x: Any, data: Any = None, offset: int = 0, *, swizzle_ptr: bool = False) -> Tensor:
    """A Tensor from a layout (or CuTe text), an IntTuple shape (compact, column-major) or a numpy array.

    A numpy array ``A`` gives the tensor of its own shape and (element) strides over its buffer:
    ``make_tensor(A)(i, j) == A[i, j]``.

    A swizzled layout ``Sw o off o L`` can live in the tensor two ways, as in CuTe. By default it
    stays in the layout (CuTe's ``composition(Swizzle<..>{}, layout)``); slicing a thread's part out
    of it then *decays* to a plain layout with run-time strides where the swizzle allows it.
    With ``swizzle_ptr=True`` the swizzle moves into the engine (CuTe's ``swizzle_ptr``, what
    ``make_tensor(make_smem_ptr(p), GMMA::Layout_K_SW128_Atom ...)`` builds): the layout is
    ``L``, slices keep its static strides, and every address is ``Sw(offset + off + L(c))``.

    >>> import numpy as np
    >>> A = np.arange(12).reshape(3, 4)
    >>> T = make_tensor(A)
    >>> str(T.layout), int(T(2, 1)), T[_, 1].values().tolist()
    ('(3,4):(4,1)', 9, [1, 5, 9])
    """
    if isinstance(x, np.ndarray):
        if data is not None:
            raise LayoutError("make_tensor: give either a numpy array or data, not both")
        if x.ndim == 0:
            raise LayoutError("make_tensor: a 0-d array has no layout")
        a = x if (x.flags.c_contiguous or x.flags.f_contiguous) else np.ascontiguousarray(x)
        strides = tuple(s // a.itemsize for s in a.strides)
        buf = a.reshape(-1, order="C" if a.flags.c_contiguous else "F")
        L = Layout(tuple(a.shape), strides) if a.ndim > 1 else Layout(a.shape[0], strides[0])
        return Tensor(L, buf, offset)
    if isinstance(x, str):
        x = parse(x)
    if swizzle_ptr:
        if not (isinstance(x, ComposedLayout) and isinstance(x.outer, Swizzle) and isinstance(x.inner, Layout)):
            raise LayoutError(f"make_tensor: swizzle_ptr=True needs a swizzled layout Sw o off o L, got {x}")
        return Tensor(x.inner, data, offset + int(x.offset), x.outer)
    if isinstance(x, (Layout, ComposedLayout)):
        return Tensor(x, data, offset)
    return Tensor(Layout(it.normalize(x, "make_tensor shape")), data, offset)


# ---------------------------------------------------------------------------------------------
# Partitioning
# ---------------------------------------------------------------------------------------------
def _as_tensor(x: Any, op: str) -> Tensor:
    if isinstance(x, Tensor):
        return x
    if isinstance(x, (Layout, ComposedLayout, str)):
        return make_tensor(x)
    raise LayoutError(f"{op}: {x!r} is not a Tensor or a layout")


def _check_tiler(tiler: Any, op: str) -> None:
    """A tiler is a positive int, a Layout, ``_``, or a tuple of them (LayoutError otherwise)."""
    if tiler is None or is_underscore(tiler) or isinstance(tiler, (Layout, ComposedLayout)):
        return
    if isinstance(tiler, (tuple, list)):
        for x in tiler:
            _check_tiler(x, op)
        return
    if isinstance(tiler, bool) or not isinstance(tiler, (int, np.integer)) or int(tiler) < 1:
        raise LayoutError(f"{op}: tiler entry {tiler!r} is not a positive int, a Layout, _ or a tuple of them")


def _check_divides(T: Tensor, tiler: Any, op: str) -> None:
    """The tiler's modes must divide the tensor's modes (else the tiles run past the tensor)."""
    _check_tiler(tiler, op)
    t = _tiler_for_algebra(tiler)
    if type(t) is not tuple:
        size = int(T.layout.size())
        n = int(t.size()) if isinstance(t, Layout) else (size if t is None else int(t))
        if size % n:
            raise LayoutError(f"{op}: tile of {n} elements does not divide tensor {T} ({size} elements)")
        return
    shape = T.layout.shape if type(T.layout.shape) is tuple else (T.layout.shape,)
    if len(t) > len(shape):
        raise LayoutError(f"{op}: tiler {tiler!r} has {len(t)} modes, tensor {T} has {len(shape)}")
    for k, (m, s) in enumerate(zip(t, shape)):
        if m is None:
            continue
        n = int(m.size()) if isinstance(m, Layout) else int(it.product(m))
        ms = int(it.product(s))
        if ms % n:
            raise LayoutError(
                f"{op}: tiler mode {k} covers {n} elements, which does not divide mode {k} of tensor {T} "
                f"({ms} elements): the tiles would run past the tensor"
            )


def inner_partition(tensor: Any, tiler: Any, coord: Any) -> Tensor:
    """CuTe's inner_partition: ``zipped_divide(T, tiler)(repeat(_), coord)``: the tile at ``coord``.

    A tuple ``coord`` is padded with ``_`` over the remaining rest modes.
    """
    T = _as_tensor(tensor, "inner_partition")
    _check_divides(T, tiler, "inner_partition")
    Z = zipped_divide(T, tiler)
    r0 = len(Z.layout[0])
    c = _norm_coord(coord)
    if type(c) is tuple:
        r1 = len(Z.layout[1])
        if len(c) > r1:
            raise LayoutError(f"inner_partition: coordinate {coord!r} has more modes than the {r1} tiles modes of {Z}")
        c = c + (_,) * (r1 - len(c))
    return Z(tuple([_] * r0) if r0 > 1 else _, c)


def outer_partition(tensor: Any, tiler: Any, coord: Any) -> Tensor:
    """CuTe's outer_partition: ``zipped_divide(T, tiler)(coord, repeat(_))``: element ``coord`` of every tile."""
    T = _as_tensor(tensor, "outer_partition")
    _check_divides(T, tiler, "outer_partition")
    Z = zipped_divide(T, tiler)
    r1 = len(Z.layout[1])
    c = _norm_coord(coord)
    if type(c) is tuple:
        r0 = len(Z.layout[0])
        if len(c) > r0:
            raise LayoutError(f"outer_partition: coordinate {coord!r} has more modes than the tile {Z.layout[0]}")
        c = c + (_,) * (r0 - len(c))
    return Z(c, tuple([_] * r1) if r1 > 1 else _)


def local_tile(tensor: Any, tiler: Any, coord: Any, proj: Any = None) -> Tensor:
    """local_tile(T, tiler, coord[, proj]): the block of T that ``tiler`` cuts at ``coord`` (CuTe's).

    ``proj`` (e.g. ``(1, _, 1)``, CuTe's ``Step<_1,X,_1>``) first keeps the tiler's and the
    coordinate's modes marked with an integer. A ``_`` in ``coord`` keeps every tile of that mode.

    >>> from layoutalg import Layout
    >>> A = make_tensor(Layout((128, 64), (64, 1)))        # M x K, row-major
    >>> gA = local_tile(A, (32, 64, 16), (1, 0, _), proj=(1, _, 1))
    >>> gA.offset, str(gA.layout)                          # rows 32..63, all 4 k-tiles
    (2048, '(32,16,4):(64,1,16)')
    """
    if proj is not None:
        tiler = dice(proj, _tiler_for_algebra_keep(tiler))
        coord = dice(proj, _norm_coord(coord))
    return inner_partition(tensor, tiler, coord)


def _tiler_for_algebra_keep(t: Any) -> Any:
    return tuple(t) if isinstance(t, list) else t


@guarded
def get_flat_coord(layout: Layout, idx: int) -> Any:
    """CuTe's ``Layout::get_flat_coord(idx)``: per top-level mode, the 1-D coordinate whose offset is ``idx``.

    Computed as CuTe does (``idx2crd(idx, shape, stride)``: ``(idx / stride) % shape`` per leaf,
    0 for a size-1 leaf), which inverts ``layout`` when it is compact.

    >>> get_flat_coord(Layout((32, 2, 2, 1), (1, 32, 64, 0)), 101)
    (5, 1, 1, 0)
    """
    def hier(s: Any, d: Any) -> Any:
        if type(s) is tuple:
            return tuple(hier(a, b) for a, b in zip(s, d))
        if s == 1:
            return 0
        if d == 0:
            raise LayoutError(f"get_flat_coord: layout {layout} has a stride-0 mode of size {s}; no inverse")
        return (idx // d) % s

    h = hier(layout.shape, layout.stride)
    if type(layout.shape) is not tuple:
        return h
    return tuple(it.crd2idx(c, s, it.prefix_product(s)) if type(s) is tuple else c
                 for c, s in zip(h, layout.shape))


def local_partition(tensor: Any, thr_layout: Any, thr_idx: int, proj: Any = None) -> Tensor:
    """local_partition(T, thr_layout, t[, proj]): thread ``t``'s elements when ``thr_layout`` tiles T (CuTe's).

    ``thr_layout`` maps a coordinate of the thread tile to a thread index; the tensor is divided by
    its shape and each tile contributes the element at thread ``t``'s coordinate.

    >>> from layoutalg import Layout
    >>> C = make_tensor(Layout((8, 8)))
    >>> p = local_partition(C, Layout((2, 4), (4, 1)), 5)   # thread 5 is (1, 1) of the 2x4 row-major grid
    >>> p.offset, str(p.layout), p.addresses()[:3].tolist()
    (9, '(4,2):(2,32)', [9, 11, 13])
    """
    if not isinstance(thr_layout, Layout):
        raise LayoutError(f"local_partition: thread layout {thr_layout!r} is not a Layout")
    if proj is not None:
        thr_layout = dice(proj, thr_layout)
    n = int(thr_layout.size())
    if isinstance(thr_idx, bool) or not isinstance(thr_idx, (int, np.integer)):
        raise LayoutError(f"local_partition: thread index {thr_idx!r} is not an int")
    if not 0 <= int(thr_idx) < int(thr_layout.cosize()):
        raise LayoutError(f"local_partition: thread {thr_idx} outside [0, {n}) for thread layout {thr_layout}")
    shape = it.product_each(thr_layout.shape)
    return outer_partition(tensor, shape, get_flat_coord(thr_layout, int(thr_idx)))
