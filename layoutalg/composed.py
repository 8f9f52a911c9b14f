"""Composed layouts: ``outer o offset o inner``, a layout followed by a non-layout function.

Some maps are not layouts: a swizzle XORs bits, which no ``Shape:Stride`` can express. CuTe
keeps such maps as a *composed layout* ``A o O o B``: the inner layout ``B`` defines the domain
(shape, size, coordinates), ``O`` is an integer offset added to its result and ``A`` (a
:class:`~layoutalg.swizzle.Swizzle` or a Layout) is applied last::

    C(c) = A(O + B(c))

Worked by hand: ``C = Sw<1,1,1> o _0 o 8:1``. ``Sw<1,1,1>`` has yyy_mask 0b100 and zzz_mask
0b010: offsets with bit 2 set get bit 1 flipped, so 4 -> 6, 5 -> 7, 6 -> 4, 7 -> 5::

    >>> from layoutalg.swizzle import Swizzle
    >>> from layoutalg.layout import Layout
    >>> C = ComposedLayout(Swizzle(1, 1, 1), 0, Layout(8, 1))
    >>> C.table().tolist()
    [0, 1, 2, 3, 6, 7, 4, 5]
    >>> print(C)
    Sw<1,1,1> o _0 o 8:1
    >>> C.ptx
    'Swizzle<1,1,1> o 8:1'
    >>> parse_composed("Swizzle<1,1,1> o 8:1") == C
    True

Algebra on a composed layout acts on its inner layout, as in CuTe's ``layout_composed.hpp``:
``composition(C, T) = A o O o composition(B, T)``, divides and products likewise; ``size``,
``shape``, ``rank``, ``depth`` and ``cosize`` are the inner layout's. The algebra functions of
:mod:`layoutalg.algebra` reach this module through ``C._algebra_(opname, *args)``.
"""

from __future__ import annotations


from typing import Any

import numpy as np
import sympy

from . import algebra as alg
from . import inttuple as it
from .errors import LayoutError
from .hooks import provide, service, svg_of
from .layout import Layout, check_table_size
from .swizzle import Swizzle, compose_swizzles

__all__ = [
    "ComposedLayout",
    "parse_composed",
    "make_composed_layout",
]


def _fmt_offset(off: Any) -> str:
    if type(off) is int:
        return f"_{off}"
    return str(off).replace(" ", "")


class ComposedLayout:
    """ComposedLayout(outer, offset, inner): C(c) = outer(offset + inner(c)).

    ``outer`` is a Swizzle, a Layout or a ComposedLayout; ``inner`` a Layout or a
    ComposedLayout (it gives the domain); ``offset`` an integer (or sympy integer expression).
    Immutable and hashable; equality is structural (use :func:`layoutalg.verify.equivalent`
    for functional equality).
    """

    __slots__ = ("outer", "offset", "inner", "_hash")
    outer: Swizzle | Layout | ComposedLayout
    offset: Any
    inner: Layout | ComposedLayout
    _hash: int | None

    def __init__(self, outer: Any, offset: Any, inner: Any):
        if not isinstance(outer, (Swizzle, Layout, ComposedLayout)):
            raise LayoutError(
                f"ComposedLayout: outer {outer!r} must be a Swizzle, a Layout or a ComposedLayout"
            )
        if not isinstance(inner, (Layout, ComposedLayout)):
            raise LayoutError(f"ComposedLayout: inner {inner!r} must be a Layout or a ComposedLayout")
        offset = it.as_leaf(offset, "ComposedLayout offset")
        object.__setattr__(self, "outer", outer)
        object.__setattr__(self, "offset", offset)
        object.__setattr__(self, "inner", inner)
        object.__setattr__(self, "_hash", None)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("ComposedLayout is immutable")

    def __reduce__(self):
        return (ComposedLayout, (self.outer, self.offset, self.inner))

    # -- structure: all from the inner layout (CuTe) ----------------------------------
    @property
    def shape(self) -> Any:
        """shape(C) = shape(inner)."""
        return self.inner.shape

    @property
    def swizzle(self) -> Swizzle | None:
        """The outer swizzle, or None when the outer function is a layout."""
        return self.outer if isinstance(self.outer, Swizzle) else None

    def size(self) -> Any:
        """size(C) = size(inner)."""
        return self.inner.size()

    def cosize(self) -> Any:
        """cosize(C) = cosize(inner), as CuTe defines it (a swizzle permutes within its period)."""
        return self.inner.cosize()

    def rank(self) -> int:
        """rank(C) = rank(inner)."""
        return len(self.inner)

    def __len__(self) -> int:
        return len(self.inner)

    def depth(self) -> int:
        """depth(C) = depth(inner)."""
        return self.inner.depth()

    def __getitem__(self, i: Any) -> "ComposedLayout":
        """Mode i: outer o offset o inner[i]."""
        return ComposedLayout(self.outer, self.offset, self.inner[i])

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    @property
    def is_static(self) -> bool:
        """True iff no part holds a sympy symbol."""
        return not self.free_symbols

    @property
    def free_symbols(self) -> set:
        """The sympy symbols in the outer, offset and inner parts."""
        out: set = set()
        for part in (self.outer, self.inner):
            out |= getattr(part, "free_symbols", set())
        if type(self.offset) is not int:
            out |= self.offset.free_symbols
        return out

    # -- evaluation ---------------------------------------------------------------------
    def _outer_at(self, x: Any) -> Any:
        return self.outer(x)

    def __call__(self, *coord: Any) -> Any:
        """C(c) = outer(offset + inner(c)); ints, numpy arrays and sympy expressions alike."""
        y = self.inner(*coord)
        if isinstance(y, np.ndarray):
            return self._outer_at(y + self.offset if self.offset != 0 else y)
        return self._outer_at(self.offset + y)

    def table(self) -> np.ndarray:
        """numpy int64 array of C(i) for i < size(C)."""
        if not self.is_static:
            raise LayoutError(f"table: composed layout {self} has symbolic entries; substitute values first")
        check_table_size(self, "table")
        return np.asarray(self._outer_at(self.inner.table() + self.offset), dtype=np.int64)

    def grid(self) -> np.ndarray:
        """For rank 2: rows x cols array G[r, c] = C(r, c)."""
        if len(self) != 2:
            raise LayoutError(f"grid: composed layout {self} has rank {len(self)}, grid needs rank 2")
        if not self.is_static:
            raise LayoutError(f"grid: composed layout {self} has symbolic entries; substitute values first")
        check_table_size(self, "grid")
        g = np.add.outer(self.inner[0].table(), self.inner[1].table()) if isinstance(self.inner, Layout) \
            else self.inner.grid()
        return np.asarray(self._outer_at(g + self.offset), dtype=np.int64)

    def subs(self, mapping: dict | None = None, **kwargs: Any) -> "ComposedLayout":
        """Substitute values for symbols in every part (same arguments as Layout.subs)."""
        m: dict = {}
        syms = self.free_symbols
        for key, v in dict(mapping or {}, **kwargs).items():
            if isinstance(v, str):  # sympy would evaluate text as Python: text is data, never code
                raise LayoutError(f"subs: the value {v!r} for {key} is text; give an int or a sympy expression")
            if isinstance(key, str):
                for s in syms:
                    if s.name == key:
                        m[s] = v
            else:
                m[key] = v
        outer = self.outer if isinstance(self.outer, Swizzle) else self.outer.subs(m)
        off = self.offset
        if type(off) is not int:
            off = it.as_leaf(sympy.sympify(off).subs(m), "subs")
        return ComposedLayout(outer, off, self.inner.subs(m))

    # -- printing -----------------------------------------------------------------------
    def __str__(self) -> str:
        return f"{self.outer} o {_fmt_offset(self.offset)} o {self.inner}"

    def _repr_svg_(self) -> str | None:  # pragma: no cover - notebooks display it
        """The picture a notebook shows (drawn by layoutalg.viz through :mod:`layoutalg.hooks`); None if it cannot draw."""
        return svg_of(self)

    def __repr__(self) -> str:
        return str(self)

    @property
    def ptx(self) -> str:
        """The PTX ISA's spelling ``Swizzle<B,M,S> o layout`` (offset shown only when non-zero)."""
        outer = self.outer.ptx if isinstance(self.outer, (Swizzle, ComposedLayout)) else str(self.outer)
        inner = self.inner.ptx if isinstance(self.inner, ComposedLayout) else str(self.inner)
        if self.offset == 0:
            return f"{outer} o {inner}"
        return f"{outer} o {_fmt_offset(self.offset)} o {inner}"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ComposedLayout):
            return NotImplemented
        return (
            type(self.outer) is type(other.outer)
            and self.outer == other.outer
            and self.offset == other.offset
            and self.inner == other.inner
        )

    def __hash__(self) -> int:
        h = self._hash
        if h is None:
            h = hash(("ComposedLayout", self.outer, self.offset, self.inner))
            object.__setattr__(self, "_hash", h)
        return h

    # -- algebra dispatch (docs/architecture.md) -----------------------------------------
    def _with_inner(self, inner: Any) -> "ComposedLayout":
        return ComposedLayout(self.outer, self.offset, inner)

    def _algebra_(self, opname: str, *args: Any) -> Any:
        """CuTe's rules for composed layouts: operations with a right operand act on the inner layout."""
        by_inner = {
            "logical_divide", "zipped_divide", "tiled_divide", "flat_divide",
            "logical_product", "zipped_product", "tiled_product", "flat_product",
            "blocked_product", "raked_product", "tile_to_shape", "filter", "coalesce",
        }
        if opname == "composition":
            if len(args) != 1:
                return NotImplemented
            (rhs,) = args
            if isinstance(rhs, (ComposedLayout, Swizzle)):
                if isinstance(rhs, Swizzle):
                    rhs = ComposedLayout(rhs, 0, Layout(rhs.period, 1))
                return ComposedLayout(self, 0, rhs)
            return self._with_inner(alg.composition(self.inner, rhs))
        if opname in by_inner:
            fn = getattr(alg, opname)
            return self._with_inner(fn(self.inner, *args))
        if opname == "complement":
            return alg.complement(self.inner, *args)
        if opname in ("size", "cosize", "rank", "depth") and not args:
            return getattr(self, opname)()
        if opname == "right_inverse" and not args:
            return _inverse(self, "right")
        if opname == "left_inverse" and not args:
            return _inverse(self, "left")
        if opname in ("upcast", "downcast") and len(args) == 1:
            return _recast(self, opname, args[0])
        if opname == "recast_layout":
            return _recast_layout(self, *args)
        if opname == "max_common_vector" and len(args) == 1:
            return _max_common_vector(self, args[0])
        return NotImplemented


def make_composed_layout(outer: Any, offset: Any, inner: Any) -> ComposedLayout:
    """make_composed_layout(A, O, B) -> A o O o B (CuTe's constructor; no simplification)."""
    return ComposedLayout(outer, offset, inner)


# ---------------------------------------------------------------------------------------
# inverses
# ---------------------------------------------------------------------------------------


_CHECK_LIMIT = 1 << 22  # the largest composed layout whose inverse or recast is checked by enumeration


def _check_result(C: ComposedLayout, R: Any, what: str, n: int = 1) -> Any:
    """R if it is what ``what`` promises for the static composed layout C (checked by enumeration),
    else LayoutError. CuTe's formulas evaluate the outer past its size or below 0, where they fail."""
    size = int(C.size())
    rsize = int(R.size())
    if size > _CHECK_LIMIT or rsize > _CHECK_LIMIT:
        raise LayoutError(f"{what}: {C} is too large to check the result {R} by enumeration")
    t = C.table()
    if what == "right_inverse":
        r = np.asarray(R(np.arange(rsize, dtype=np.int64)), dtype=np.int64)
        ok = bool(((r >= 0) & (r < size)).all()) and bool((t[np.clip(r, 0, size - 1)] == np.arange(rsize)).all())
    elif what == "left_inverse":
        back = np.asarray(R(t), dtype=np.int64)
        if np.unique(t).size == size:
            ok = bool((back == np.arange(size)).all())
        else:  # a quasi-inverse
            ok = bool(((back >= 0) & (back < size)).all()) and bool((t[np.clip(back, 0, size - 1)] == t).all())
    else:
        got = set(np.unique(R.table()).tolist())
        tl = t.tolist()
        want = {x // n for x in tl} if what == "upcast" else {x * n + r for x in tl for r in range(n)}
        ok = got == want and (what == "upcast" or rsize == n * size)
    if not ok:
        raise LayoutError(
            f"{what}: CuTe's formula gives {R} for {C}, which is not its {what.replace('_', ' ')} "
            "(the formula evaluates the outer past its size or below 0)"
        )
    return R


def _inverse(C: ComposedLayout, which: str) -> Any:
    """right/left inverse of A o O o B as inv(B) o (-O) o inv(A), CuTe's formula; checked by enumeration
    (LayoutError where the formula is not the inverse) unless the outer is a swizzle, the offset 0 and
    the inner's strides non-negative."""
    R = _inverse_formula(C, which)
    if not C.is_static or (isinstance(C.outer, Swizzle) and C.offset == 0 and _nonnegative(C.inner)):
        return R  # a swizzle of non-negative offsets permutes its blocks: the formula holds
    return _check_result(C, R, which + "_inverse")


def _nonnegative(L: Any) -> bool:
    return isinstance(L, Layout) and all(type(d) is int and d >= 0 for d in L.flat[1])


def _inverse_formula(C: ComposedLayout, which: str) -> Any:
    """right/left inverse of A o O o B as inv(B) o (-O) o inv(A), CuTe's formula.

    For a right inverse R: C(R(i)) = i for i < size(R); for a left inverse L: L(C(c)) = c for
    every c in the domain. With a swizzle outer, inv(A) = A (an involution) restricted to a
    domain [0, n): n is the longest prefix on which the formula stays inside inv(B)'s domain.
    A trivial swizzle with zero offset gives a plain Layout. F2-linear results are rewritten
    into the simplest form ``from_linear`` finds.
    """
    inv = alg.right_inverse if which == "right" else alg.left_inverse
    inner_inv = inv(C.inner)
    outer = C.outer
    if isinstance(outer, Swizzle) and outer.is_identity and C.offset == 0:
        return inner_inv
    if not (C.is_static and isinstance(inner_inv, Layout)):
        outer_inv = outer if isinstance(outer, Swizzle) else inv(outer)
        return ComposedLayout(inner_inv, -C.offset, _as_domain(outer_inv, inner_inv.size()))
    # outer inverse as a function on an index domain
    if isinstance(outer, Swizzle):
        n_try = inner_inv.size() if which == "right" else max(int(C.table().max()) + 1, inner_inv.size())
        first: Any = ComposedLayout(outer, 0, Layout(n_try, 1)) if not outer.is_identity else Layout(n_try, 1)
    else:
        first = inv(outer)
        n_try = it.product(first.shape) if isinstance(first, Layout) else first.size()
    vals = np.asarray(first(np.arange(n_try, dtype=np.int64)), dtype=np.int64) - C.offset
    if which == "right":
        ok = (vals >= 0) & (vals < inner_inv.size())
        bad = np.flatnonzero(~ok)
        n = int(bad[0]) if bad.size else n_try
        if n == 0:
            raise LayoutError(
                f"right_inverse: 0 is not in the image of {C} (its offset {C.offset} shifts it), so no R has "
                "C(R(0)) == 0"
            )
    else:
        n = n_try
    if isinstance(first, ComposedLayout):
        first = ComposedLayout(first.outer, first.offset, Layout(n, 1))
    elif n != n_try:
        first = alg.composition(first, Layout(n, 1))
    result = ComposedLayout(inner_inv, -C.offset, first)
    return _simplify(result)


def _as_domain(fn: Any, n: Any) -> Any:
    if isinstance(fn, Swizzle):
        return ComposedLayout(fn, 0, Layout(n, 1)) if not fn.is_identity else Layout(n, 1)
    return fn


def _simplify(C: ComposedLayout) -> Any:
    """Rewrite a static composed layout as a Layout or Sw o _0 o Layout when it is F2-linear.

    The rewriting is :mod:`layoutalg.linear`'s (a layer above), provided as the ``simplify_f2`` hook.
    """
    try:
        return service("simplify_f2")(C)
    except LayoutError:
        return C


# ---------------------------------------------------------------------------------------
# units
# ---------------------------------------------------------------------------------------


def _recast(C: ComposedLayout, opname: str, n: Any) -> ComposedLayout:
    fn = getattr(alg, opname)
    sw = C.outer
    if opname == "upcast" and isinstance(sw, Swizzle) and not sw.is_identity and type(n) is int and n > (1 << sw.M):
        raise LayoutError(
            f"upcast: {C} keeps only 2**M = {1 << sw.M} elements together, fewer than the vector size {n}: the "
            f"swizzle moves parts of a vector apart (CuTe's upcast drops the low swizzle bits and returns "
            f"{sw.upcast(n)})"
        )
    outer = getattr(C.outer, opname)(n) if isinstance(C.outer, Swizzle) else fn(C.outer, n)
    off = C.offset
    if opname == "upcast":
        if type(off) is int and type(n) is int and off % n:
            raise LayoutError(f"upcast: offset {off} of {C} is not a multiple of {n}")
        off = off // n if type(off) is int else off / n
    else:
        off = off * n
    R = ComposedLayout(outer, off, fn(C.inner, n))
    if isinstance(C.outer, Swizzle):
        return R
    if not C.is_static:
        raise LayoutError(f"{opname}: cannot check {opname} of {C}, a symbolic composed layout with a layout outer")
    return _check_result(C, R, opname, n)


def _recast_layout(C: ComposedLayout, old_bits: Any, new_bits: Any) -> ComposedLayout:
    """recast_layout from elements of old_bits to new_bits: upcast or downcast by their ratio."""
    if old_bits == new_bits:
        return C
    if new_bits % old_bits == 0:
        return _recast(C, "upcast", new_bits // old_bits)
    if old_bits % new_bits == 0:
        return _recast(C, "downcast", old_bits // new_bits)
    raise LayoutError(f"recast_layout: cannot recast {C} from {old_bits}-bit to {new_bits}-bit elements")


def _swizzle_cap(C: ComposedLayout) -> int:
    """The longest vector ``Sw o offset`` keeps contiguous: 2**M (the untouched low bits) and the largest
    power of two dividing the offset (a vector starting off a 2**M boundary is cut by the swizzle)."""
    sw = C.outer
    assert isinstance(sw, Swizzle)
    if sw.is_identity:
        return 1 << 62
    off = C.offset
    if type(off) is not int:
        return 1
    align = (off & -off) if off else 1 << 62
    return min(1 << sw.M, align)


def _max_common_vector(C: ComposedLayout, other: Any) -> Any:
    """CuTe: with a swizzle outer, the inner's common vector capped at 2**M (the untouched low bits);
    layoutalg also caps it at the offset's alignment (CuTe does not: ``Sw<1,1,-2> o _1 o 2:1`` with
    ``2:1`` is 2 in CuTe, yet its second element lands at offset 10)."""
    if not isinstance(C.outer, Swizzle):
        return NotImplemented
    if isinstance(other, ComposedLayout) and isinstance(other.outer, Swizzle):
        v = alg.max_common_vector(C.inner, other.inner)
        if C.outer == other.outer and C.offset == other.offset:
            return v
        return max(1, min(v, _swizzle_cap(C), _swizzle_cap(other)))
    return max(1, min(alg.max_common_vector(C.inner, other), _swizzle_cap(C)))


# ---------------------------------------------------------------------------------------
# parsing: one grammar for the whole library lives in layoutalg.parse
# ---------------------------------------------------------------------------------------


def parse_composed(text: str) -> Any:
    """Parse a layout, a swizzle or a composed layout in either spelling (see :func:`layoutalg.parse`).

    ``Swizzle<1,4,3> o ((8,2),(4,4)):((8,64),(1,4))`` (the PTX ISA), ``Sw<1,4,3> o _0 o ...``
    (CuTe's print) and ``A o O o B`` with a layout ``A``; chains nest to the right. Round-trips
    ``str`` and ``.ptx`` exactly.

    >>> C = parse_composed("Swizzle<1,4,3> o ((8,2),(4,4)):((8,64),(1,4))")
    >>> print(C)
    Sw<1,4,3> o _0 o ((8,2),(4,4)):((8,64),(1,4))
    >>> parse_composed(str(C)) == C, C.ptx
    (True, 'Swizzle<1,4,3> o ((8,2),(4,4)):((8,64),(1,4))')

    The reader is :func:`layoutalg.parse.parse` (a layer above), provided as the ``parse`` hook.
    """
    return service("parse")(text)


def _algebra_rhs_(self: ComposedLayout, opname: str, left: Any) -> Any:
    """composition(A, C) with a composed layout on the right: the generic ``A o _0 o C``.

    (A o C)(c) = A(C(c)) for every coordinate c of C.
    """
    if opname == "composition":
        return ComposedLayout(left, 0, self)
    return NotImplemented


ComposedLayout._algebra_rhs_ = _algebra_rhs_  # type: ignore[attr-defined]


def _compose_swizzle(sw: Swizzle, rhs: Any) -> Any:
    """composition(Sw, X) for a non-trivial swizzle and a layout or composed layout X: ``Sw o _0 o X``,
    merging into X's own swizzle when both have the same shift (CuTe's rule)."""
    if isinstance(rhs, ComposedLayout) and isinstance(rhs.outer, Swizzle) and rhs.offset == 0:
        try:
            merged = compose_swizzles(sw, rhs.outer)
        except LayoutError:
            merged = None
        if merged is not None:
            return ComposedLayout(merged, 0, rhs.inner) if not merged.is_identity else rhs.inner
    return ComposedLayout(sw, 0, rhs)


provide("compose_swizzle", _compose_swizzle)
