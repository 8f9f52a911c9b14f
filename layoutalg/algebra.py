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
overflow, however A is spelled, see ``_coalesce_x``).
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
from collections.abc import Callable, Iterator
from math import gcd
from math import prod as _prod
from typing import Any, cast, overload

import numpy as np

from . import inttuple as it
from .errors import LayoutError
from .inttuple import flatten
from .layout import Layout, _fmt, _speedups, append, make_layout, make_ordered_layout

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

_ENUM_LIMIT = 1 << 22  # largest size(B) checked by enumeration when the fast soundness test fails

#: False inside :func:`_cute_construction_only`: composition returns CuTe's construction unchecked
_FUNCTIONAL_CHECK: contextvars.ContextVar[bool] = contextvars.ContextVar("layoutalg_functional_check", default=True)


class CompositionError(LayoutError):
    """CuTe's mode-by-mode construction of ``lhs o rhs`` is not the composition: ``result(index)`` differs
    from ``lhs(rhs(index))``. CuTe would return ``result``; layoutalg refuses."""

    def __init__(self, message: str, lhs: Layout, rhs: Layout, result: Layout, index: int):
        super().__init__(message)
        self.lhs, self.rhs, self.result, self.index = lhs, rhs, result, index


@contextlib.contextmanager
def _cute_construction_only() -> Iterator[None]:
    """Within this block composition returns CuTe's construction even where it is not the composition.

    For the conformance tests only: they show that what layoutalg refuses is exactly what CuTe builds."""
    token = _FUNCTIONAL_CHECK.set(False)
    try:
        yield
    finally:
        _FUNCTIONAL_CHECK.reset(token)


def _dispatch(op: str, left: Any, *args: Any) -> Any:
    fn = getattr(left, "_algebra_", None)
    if fn is not None:
        r = fn(op, *args)
        if r is not NotImplemented:
            return r
    raise LayoutError(f"{op}: the left operand {left!r} is not a layout")


#: the rank-0 layout ``():()``: no modes, size 1, the function ``i -> 0`` (as ``1:0``, past its size too)
_EMPTY = Layout._make((), (), True, ((), ()))
#: ``1:0``, what every operation reads a rank-0 layout as
_UNIT = Layout._make(1, 0, True)


def _no_modes(L: Layout) -> bool:
    """True for a layout without leaves: ``()``, ``((),())``, ... (rank 0 once flattened)."""
    return type(L._shape) is tuple and not L.flat[0]


def _modes_of(L: Layout) -> list[Layout]:
    shape = L._shape
    if type(shape) is tuple:
        if L._static:  # the modes of a concrete layout are concrete; an int mode is its own flattening
            return [Layout._make(s, d, True, None if type(s) is tuple else ((s,), (d,)))
                    for s, d in zip(shape, cast(tuple, L._stride))]
        return [Layout._make(s, d) for s, d in zip(shape, cast(tuple, L._stride))]
    return [L]


def _is_one(s: Any) -> bool:
    if type(s) is int:
        return s == 1
    try:
        return it.equal(s, 1)
    except LayoutError:
        return False


def _is_zero(d: Any) -> bool:
    if type(d) is int:
        return d == 0
    try:
        return it.iszero(d)
    except LayoutError:
        return False


def _provably_equal(a: Any, b: Any) -> bool:
    if type(a) is int and type(b) is int:
        return a == b
    try:
        return it.equal(a, b)
    except LayoutError:
        return False


def _coalesce_flat_int(fs: tuple | list, fd: tuple | list) -> tuple[list, list]:
    """_coalesce_flat for concrete ints."""
    rs: list = []
    rd: list = []
    for s, d in zip(fs, fd):
        if s == 1:
            continue
        if rs and rs[-1] * rd[-1] == d:
            rs[-1] *= s
        else:
            rs.append(s)
            rd.append(d)
    return rs, rd


def _coalesce_flat(fs: tuple | list, fd: tuple | list) -> tuple[list, list]:
    """Coalesce flat modes: drop size-1 modes, merge (s0:d0),(s1:d1) when s0*d0 == d1."""
    rs: list = []
    rd: list = []
    for s, d in zip(fs, fd):
        if type(s) is int:
            if s == 1:
                continue
        elif _is_one(s):
            continue
        if rs:
            ps, pd = rs[-1], rd[-1]
            m = ps * pd
            if (m == d) if (type(m) is int and type(d) is int) else _provably_equal(m, d):
                rs[-1] = ps * s
                continue
        rs.append(s)
        rd.append(d)
    return rs, rd


def _iter_leaves(s: Any, d: Any):
    """Yield (shape, stride) leaf pairs of a congruent pair, in order."""
    if type(s) is not tuple:
        yield s, d
        return
    for x, y in zip(s, d):
        if type(x) is tuple:
            for x2, y2 in zip(x, y):
                if type(x2) is tuple:
                    yield from _iter_leaves(x2, y2)
                else:
                    yield x2, y2
        else:
            yield x, y


def _from_flat(rs: list, rd: list, static: bool | None = None) -> Layout:
    if not rs:
        return Layout._make(1, 0, True)
    if len(rs) == 1:
        return Layout._make(rs[0], rd[0], static)
    return Layout._make(tuple(rs), tuple(rd), static)


# ---------------------------------------------------------------------------------------------
# fast paths for concrete layouts
# ---------------------------------------------------------------------------------------------
#
# Each operation first tries a kernel that works on the plain (shape, stride) int tuples of its
# concrete inputs and builds one Layout at the end. A kernel follows the reference construction
# (the code after the fast path in each operation) step by step, and returns None wherever it is
# not sure of the outcome: a negative stride, a condition CuTe refuses, a step that relies on CuTe's
# weak stride condition. The operation then runs its reference construction, which decides and
# words every error, so results and errors are the reference's. ``_reference_only()`` turns the
# kernels off; tests compare both on random layouts.

_FAST = True
_new = Layout.__new__
#: coalesce of a static Layout in C (None where the C fast paths are not built)
_c_coalesce: Callable[[Layout], Layout | None] | None = _speedups.coalesce if _speedups is not None else None
_c_right_inverse: Callable[[Layout], Layout | None] | None = _speedups.right_inverse if _speedups is not None else None
_c_filter: Callable[[Layout], Layout | None] | None = _speedups.filter if _speedups is not None else None
_c_compose: Callable[[Layout, Layout], Layout | None] | None = _speedups.compose if _speedups is not None else None
_c_complement: Callable[[Layout, int], Layout | None] | None = (
    getattr(_speedups, "complement", None) if _speedups is not None else None)


@contextlib.contextmanager
def _reference_only() -> Iterator[None]:
    """Within this block every operation runs its reference construction (no fast kernels). For tests."""
    global _FAST
    old = _FAST
    _FAST = False
    try:
        yield
    finally:
        _FAST = old


def _static_flat_of(L: Layout) -> tuple[tuple, tuple] | None:
    """L's (flat shape, flat stride) when every leaf is a plain int, else None."""
    st = L._static
    if st is None:
        st = L.is_static
    if not st:
        return None
    f = L._flat
    return f if f is not None else L.flat


def _coalesce_fast(fs: tuple | list, fd: tuple | list) -> tuple[list, list]:
    """:func:`_coalesce_flat_int`: size-1 modes dropped, ``(s0:d0),(s1:d1)`` merged when ``s0*d0 == d1``."""
    rs: list = []
    rd: list = []
    cs = cd = 0
    for s, d in zip(fs, fd):
        if s == 1:
            continue
        if cs and cs * cd == d:
            cs *= s
        else:
            if cs:
                rs.append(cs)
                rd.append(cd)
            cs = s
            cd = d
    if cs:
        rs.append(cs)
        rd.append(cd)
    return rs, rd


def _coalesce_x_fast(f: tuple[tuple, tuple]) -> tuple[list, list]:
    """:func:`_coalesce_x_int` (CuTe's coalesce_x): coalesce with a trailing size-1 mode read as 2.

    coalesce_x merges back to front and coalesce front to back, but both merge exactly the runs of
    consecutive non-trivial modes with ``s_k * d_k == d_{k+1}``, so the results agree."""
    fs, fd = f
    return _coalesce_fast(fs[:-1] + (2,) if fs[-1] == 1 else fs, fd)


def _compose_leaf_fast(S: list, D: list, R1: int, s: int, d: int) -> tuple[Any, Any] | None:
    """:func:`_compose_leaf_int` where it is exact: (shape, stride), or None where the reference raises,
    the stride is negative, or a step relies on the weak stride condition (a stride below a shape
    that it does not divide). ``S:D`` is coalesce_x(A), every ``S[j] >= 2`` for ``j < R1 = len(S) - 1``."""
    if d == 0:
        return s, 0
    if R1 == 0:
        return s, d * D[0]
    if d < 0:
        return None
    # divide the stride out of A's modes while it is at least their extent (it must divide them)
    j = 0
    cs = S[0]
    while d >= cs:
        if d % cs:
            return None
        d //= cs
        j += 1
        if j == R1:
            return s, d * D[R1]
        cs = S[j]
    if cs % d:
        return None
    # now 0 < d < cs: the mode starts inside A's mode j and takes ceil(cs / d) of it, then A's
    # following modes (at stride 1) until its shape is used up
    if s == 1:
        return 1, D[R1]
    n = cs // d
    if s <= n:
        return s, d * D[j]
    if s % n:
        return None
    rshape = [n]
    rstride = [d * D[j]]
    s //= n
    for k in range(j + 1, R1):
        cs = S[k]
        if s <= cs:
            rshape.append(s)
            rstride.append(D[k])
            return tuple(rshape), tuple(rstride)
        if s % cs:
            return None
        rshape.append(cs)
        rstride.append(D[k])
        s //= cs
    rshape.append(s)
    rstride.append(D[R1])
    return tuple(rshape), tuple(rstride)


def _compose_walk(S: list, D: list, R1: int, bs: tuple, bd: tuple, prev: int) -> tuple[tuple, tuple, int] | None:
    """:func:`_compose_leaf_fast` on each leaf of the tuple ``bs:bd``, keeping B's nesting: (shape,
    stride, prev), or None. Also follows B's leaves for :func:`_no_carry`: ``prev`` is the extent
    ``d*s`` of the last non-trivial leaf so far while each stride is a positive multiple of the extent
    before it (then the strides ascend and sorting changes nothing), and 0 once that fails."""
    rs: list = []
    rd: list = []
    for x, y in zip(bs, bd):
        if type(x) is tuple:
            r = _compose_walk(S, D, R1, x, y, prev)
            if r is None:
                return None
            x, y, prev = r
        else:
            if prev and x != 1 and y:
                prev = 0 if (y < 0 or y % prev) else x * y
            q = _compose_leaf_fast(S, D, R1, x, y)
            if q is None:
                return None
            x, y = q
        rs.append(x)
        rd.append(y)
    return tuple(rs), tuple(rd), prev


def _scale(d: Any, k: int) -> Any:
    """Every leaf of the int tuple ``d`` times ``k``."""
    if type(d) is tuple:
        return tuple([_scale(x, k) if type(x) is tuple else x * k for x in d])
    return d * k


def _compose_fast(S: list, D: list, bs: Any, bd: Any, fb: tuple[tuple, tuple],
                  layouts: Callable[[], tuple[Layout, Layout]]) -> Layout | None:
    """``composition(A, B)`` for concrete A (``S:D`` = coalesce_x(A)) and B (``bs:bd``, flat ``fb``), or
    None to run the reference. ``layouts()`` gives (A, B) as Layouts, needed only to enumerate."""
    R1 = len(S) - 1
    R = _new(Layout)
    R._flat = R._hash = None
    R._static = True
    if R1 == 0:  # A is one mode s:d: every stride of B times d
        D0 = D[0]
        R._shape = bs
        R._stride = bd if D0 == 1 else _scale(bd, D0)
        return R
    if type(bs) is not tuple:
        q = _compose_leaf_fast(S, D, R1, bs, bd)
        if q is None:
            return None
        R._shape, R._stride = q
        return R
    r = _compose_walk(S, D, R1, bs, bd, 1)
    if r is None:
        return None
    R._shape, R._stride, chained = r
    if not chained and not _no_carry(*fb) and _FUNCTIONAL_CHECK.get():
        A, B = layouts()
        _check_functional(A, B, R)
    return R


def _rest_of_shape(a: tuple, b: int) -> int:
    """How many copies of an extent ``b`` cover the shape cotarget ``a`` (ints >= 1): CuTe folds the division
    through the leaves in order (``product(ceil_div(a, b))``, which follows a's modes: divides then
    compose mode by mode), and layoutalg keeps that where it covers ``product(a)``; where the fold falls
    short (``(2,4)`` by 3 folds to 2, covering 6 < 8) it is ``ceil(product(a) / b)``."""
    p = 1
    total = 1
    c = b
    for x in flatten(a):
        p *= -(-x // c)
        c = -(-c // x)
        total *= x
    return p if p * b >= total else -(-total // b)


def _complement_fast(f: tuple[tuple, tuple], cotarget: Any) -> Layout | None:
    """:func:`_complement_static` on flat int modes and an int (or int tuple) cotarget, or None where
    the reference raises (a negative stride, a non-injective layout)."""
    # filter and coalesce
    C = _new(Layout)
    C._flat = C._hash = None
    C._static = True
    fs, fd = f
    modes = zip(fs, fd)
    for cs, cd in modes:  # the first mode that is not trivial
        if cs != 1 and cd != 0:
            break
    else:  # only stride-0 modes: the whole cotarget
        total = cotarget if type(cotarget) is int else it.product(cotarget)
        C._shape = total
        C._stride = 0 if total == 1 else 1
        return C
    if cd < 0:
        return None
    ms: list = []
    md: list = []
    for s, d in modes:
        if cs * cd == d:  # merge (a size-1 mode merges as a no-op; d < 0 would need cd < 0, refused above)
            cs *= s
            continue
        if s == 1 or d == 0:
            continue
        if d < 0:
            return None
        ms.append(cs)
        md.append(cd)
        cs = s
        cd = d
    if not ms:  # one mode cs:cd: the gap cd:1 below it, then the rest up to the cotarget at stride
        # cs*cd (the two never merge: cd*1 == cs*cd would need cs == 1)
        last = cd * cs
        rest = -(-cotarget // last) if type(cotarget) is int else _rest_of_shape(cotarget, last)
        if cd == 1:
            if rest == 1:
                C._shape = 1
                C._stride = 0
            else:
                C._shape = rest
                C._stride = last
        elif rest == 1:
            C._shape = cd
            C._stride = 1
        else:
            C._shape = (cd, rest)
            C._stride = (1, last)
            C._flat = (C._shape, C._stride)
        return C
    ms.append(cs)
    md.append(cd)
    order = sorted(md)
    if order != md:  # take the smallest stride first, the first on ties (a stable sort)
        ms = [ms[k] for k in sorted(range(len(md)), key=md.__getitem__)]
        md = order
    # the gap below each stride, then the rest up to the cotarget; coalesced as they are emitted
    rs: list = []
    rd: list = []
    ps = pd = 0
    last = 1
    for s, d in zip(ms, md):
        gap = d // last
        if gap == 0 or d % last:
            return None
        if gap != 1:
            if ps and ps * pd == last:
                ps *= gap
            else:
                if ps:
                    rs.append(ps)
                    rd.append(pd)
                ps = gap
                pd = last
        last = d * s
    rest = -(-cotarget // last) if type(cotarget) is int else _rest_of_shape(cotarget, last)
    if rest != 1:
        if ps and ps * pd == last:
            ps *= rest
        else:
            if ps:
                rs.append(ps)
                rd.append(pd)
            ps = rest
            pd = last
    if not rs:
        if ps:
            C._shape = ps
            C._stride = pd
        else:
            C._shape = 1
            C._stride = 0
        return C
    rs.append(ps)
    rd.append(pd)
    C._shape = ts = tuple(rs)
    C._stride = td = tuple(rd)
    C._flat = (ts, td)
    return C


def _flat_static(L: Layout) -> tuple[tuple, tuple]:
    """The flat modes of a concrete layout made here (cached on it)."""
    f = L._flat
    if f is None:
        f = L._flat = ((L._shape,), (L._stride,)) if type(L._shape) is not tuple else L.flat
    return f


def _logical_divide_fast(A: Layout, fa: tuple[tuple, tuple], B: Layout, fb: tuple[tuple, tuple]) -> Layout | None:
    """``composition(A, make_layout(B, complement(B, shape(coalesce(A)))))`` on concrete tuples, or None."""
    fs, fd = fa
    if fs[-1] == 1:
        cs = _coalesce_fast(fs, fd)[0]
        S, D = _coalesce_x_fast(fa)
    else:  # coalesce_x(A) is coalesce(A)
        S, D = cs, _ = _coalesce_fast(fs, fd)
    C = _complement_fast(fb, (tuple(cs) if len(cs) > 1 else cs[0]) if cs else 1)
    if C is None:
        return None
    bs = (B._shape, C._shape)
    bd = (B._stride, C._stride)
    if _c_compose is not None:
        R = _c_compose(A, Layout._make(bs, bd, True))  # _compose_fast in C, where it is exact and chained
        if R is not None:
            return R
    fc = _flat_static(C)
    return _compose_fast(S, D, bs, bd, (fb[0] + fc[0], fb[1] + fc[1]), lambda: (A, Layout._make(bs, bd)))


def _logical_product_fast(A: Layout, fa: tuple[tuple, tuple], B: Layout, fb: tuple[tuple, tuple]) -> Layout | None:
    """``make_layout(A, composition(complement(A, size(A) * cosize(B)), B))`` on concrete tuples, or None."""
    bs: Any = B._shape
    bd: Any = B._stride
    if type(bs) is int:  # cosize(B)
        hi = (bs - 1) * bd + 1 if bd > 0 else 1
    else:
        hi = 1
        for s, d in zip(fb[0], fb[1]):
            if d > 0:
                hi += (s - 1) * d
    C = _complement_fast(fa, _prod(fa[0]) * hi)
    if C is None:
        return None
    P = _new(Layout)
    P._flat = P._hash = None
    P._static = True
    if type(C._shape) is not tuple:  # C is one mode c:d (coalesce_x of 1:0 is 2:0): B's strides times d
        d = cast(int, C._stride)
        P._shape = (A._shape, bs)
        P._stride = (A._stride, bd * d if type(bd) is int else bd if d == 1 else _scale(bd, d))
        return P
    R = _compose_fast(C._shape, C._stride, B._shape, B._stride, fb, lambda: (C, B))  # type: ignore[arg-type]
    if R is None:
        return None
    P._shape = (A._shape, R._shape)
    P._stride = (A._stride, R._stride)
    return P


def _left_inverse_fast(f: tuple[tuple, tuple]) -> Layout | None:
    """:func:`left_inverse` for a concrete layout with non-negative strides, or None (negative strides,
    or CuTe's divisibility condition fails: the reference words the error)."""
    S, D = _coalesce_fast(f[0], f[1])
    if not S:
        return Layout._make(1, 0, True)
    order = sorted(D)
    if order[0] < 0:
        return None
    idx = range(len(S)) if order == D else sorted(range(len(S)), key=D.__getitem__)
    # the mixed radix (d_0, d_1/d_0, ...) read from an offset, digit k sent to the index stride of the
    # mode with stride d_k; coalesced as the modes are emitted
    rs: list = []
    rd: list = []
    ps = pd = 0
    size = 1
    ext = 1  # the extent of the modes so far: a stride below it overlaps them (not injective)
    prev_stride = 0
    k = 0
    for k in idx:
        d = D[k]
        if d == 0:
            continue
        if d % size or d < ext:
            return None
        ext = d * S[k]
        g = d // size
        if g != 1:
            if ps and ps * pd == prev_stride:
                ps *= g
            else:
                if ps:
                    rs.append(ps)
                    rd.append(pd)
                ps = g
                pd = prev_stride
        prev_stride = _prod(S[:k])
        size = d
    g = S[k]
    if g != 1:
        if ps and ps * pd == prev_stride:
            ps *= g
        else:
            if ps:
                rs.append(ps)
                rd.append(pd)
            ps = g
            pd = prev_stride
    if ps:
        rs.append(ps)
        rd.append(pd)
    if len(rs) > 1:
        ts = tuple(rs)
        td = tuple(rd)
        return Layout._make(ts, td, True, (ts, td))
    if rs:
        return Layout._make(rs[0], rd[0], True)
    return Layout._make(1, 0, True)


# ---------------------------------------------------------------------------------------------
# coalesce, filter
# ---------------------------------------------------------------------------------------------


@overload
def coalesce(layout: Layout, profile: Any = None) -> Layout: ...


@overload
def coalesce(layout: Any, profile: Any = None) -> Any: ...


def coalesce(layout: Any, profile: Any = None) -> Any:
    """coalesce(L) -> R with R(i) == L(i) for all i < size(L), and as few modes as possible.

    Flattens, drops size-1 modes, and merges adjacent modes ``(s0:d0),(s1:d1)`` with ``s0*d0 == d1``.
    With a tuple ``profile``, coalesces each mode ``i < len(profile)`` separately (by-mode),
    keeping the rank; a leaf profile coalesces the whole layout.

    >>> str(coalesce(Layout((2, (1, 6)), (1, (6, 2)))))
    '12:1'
    >>> str(coalesce(Layout(((4, 2), (2, 3)), ((1, 4), (16, 32))), (1, 1)))
    '(8,6):(1,16)'
    """
    if profile is None and _c_coalesce is not None and _FAST:
        R = _c_coalesce(layout)  # the kernel below, in C, for modes that fit in 64 bits
        if R is not None:
            return R
    if type(layout) is Layout and profile is None and _no_modes(layout):
        return _EMPTY  # no modes to coalesce: the rank-0 layout (as the CuTe DSL answers)
    if type(layout) is Layout and (layout._static or layout.is_static) and profile is None and _FAST:
        # concrete ints: drop size-1 modes and merge (s0:d0),(s1:d1) when s0*d0 == d1, in one pass.
        # A leading size-1 mode is carried as the current mode: it merges with the next one only
        # when their strides are equal (1*d == d'), which gives that next mode -- as dropping it would.
        f = layout._flat
        fs, fd = f if f is not None else layout.flat
        cs = fs[0]
        cd = fd[0]
        rs: list = []
        rd: list = []
        for k in range(1, len(fs)):
            sh = fs[k]
            st = fd[k]
            if cs * cd == st:  # merge (a size-1 mode merges as a no-op)
                cs *= sh
            elif sh != 1:
                if cs != 1:
                    rs.append(cs)
                    rd.append(cd)
                cs = sh
                cd = st
        R = _new(Layout)
        R._hash = None
        R._static = True
        if rs:
            rs.append(cs)
            rd.append(cd)
            R._shape = ts = tuple(rs)
            R._stride = td = tuple(rd)
            R._flat = (ts, td)
        elif cs == 1:
            R._shape = 1
            R._stride = 0
            R._flat = None
        else:
            R._shape = cs
            R._stride = cd
            R._flat = None
        return R
    if profile is None and type(layout) is Layout and layout._static:
        rs = []
        rd = []
        f = layout._flat
        pairs = zip(*f) if f is not None else _iter_leaves(layout.shape, layout.stride)
        for sh, st in pairs:
            if sh == 1:
                continue
            if rs and rs[-1] * rd[-1] == st:
                rs[-1] *= sh
            else:
                rs.append(sh)
                rd.append(st)
        if not rs:
            return Layout._make(1, 0, True)
        if len(rs) == 1:
            return Layout._make(rs[0], rd[0], True)
        return Layout._make(tuple(rs), tuple(rd), True)
    if not isinstance(layout, Layout):
        return _dispatch("coalesce", layout, profile)
    if type(profile) is tuple:
        modes = _modes_of(layout)
        if len(profile) > len(modes):
            raise LayoutError(
                f"coalesce: profile {profile} has more modes than layout {layout} (rank {len(modes)})"
            )
        out = [coalesce(m, p) for m, p in zip(modes, profile)] + modes[len(profile):]
        return make_layout(*out)
    fs, fd = layout.flat
    if layout.is_static:
        return _from_flat(*_coalesce_flat_int(fs, fd), True)
    return _from_flat(*_coalesce_flat(fs, fd))


@overload
def filter(layout: Layout, profile: Any = None) -> Layout: ...


@overload
def filter(layout: Any, profile: Any = None) -> Any: ...


def filter(layout: Any, profile: Any = None) -> Any:  # noqa: A001 - CuTe's name
    """filter(L) -> coalesce(L) with every stride-0 mode removed: the image of L, enumerated once.

    >>> str(filter(Layout((4, 2, 3), (1, 0, 4))))
    '12:1'
    """
    if profile is None and type(layout) is Layout and _no_modes(layout):
        return _EMPTY
    if profile is None and type(layout) is Layout and layout._static and _FAST:
        if _c_filter is not None:
            R = _c_filter(layout)  # the construction below, in C, for modes that fit in 64 bits
            if R is not None:
                return R
        fs, fd = layout._flat or layout.flat
        return _from_flat(*_coalesce_fast([s for s, d in zip(fs, fd) if d], [d for d in fd if d]), True)
    if not isinstance(layout, Layout):
        return _dispatch("filter", layout, profile)
    if type(profile) is tuple:
        modes = _modes_of(layout)
        if len(profile) > len(modes):
            raise LayoutError(
                f"filter: profile {profile} has more modes than layout {layout} (rank {len(modes)})"
            )
        return make_layout(*([filter(m, p) for m, p in zip(modes, profile)] + modes[len(profile):]))
    fs, fd = layout.flat
    ks = [s for s, d in zip(fs, fd) if not _is_zero(d)]
    kd = [d for d in fd if not _is_zero(d)]
    return _from_flat(*_coalesce_flat(ks, kd))


# ---------------------------------------------------------------------------------------------
# composition
# ---------------------------------------------------------------------------------------------


def _cmod(a: int, b: int) -> int:
    """C's remainder (sign of the dividend)."""
    r = abs(a) % abs(b)
    return -r if a < 0 else r


def _compose_leaf_int(S: list, D: list, s: int, d: int, A: Layout, B: Layout, flags: list) -> tuple[Any, Any]:
    """CuTe's ``composition_impl`` for one integral right-hand mode ``s:d`` on concrete ints.

    ``S:D`` is ``coalesce_x(A)`` flattened. Returns the (shape, stride) of the result mode exactly
    as CuTe builds it (size-1 modes keep their strides). ``flags[0]`` is set when a step relied on
    CuTe's weak stride condition (the stride is below the shape without dividing it), after which
    CuTe's construction need not be the functional composition and the caller checks it.
    """
    if d == 0:  # static stride-0 shortcut
        return s, 0
    R = len(S)
    if R == 1:  # integral left-hand shape
        return s, d * D[0]
    rshape: list = []
    rstride: list = []
    rest_shape, rest_stride = s, d
    for j in range(R - 1):
        cs, cd = S[j], D[j]
        if _cmod(rest_stride, cs) != 0 and not rest_stride < cs:
            raise LayoutError(
                f"composition: stride {rest_stride} (from {B}) is neither a multiple of, nor below, the shape {cs} "
                f"of the left-hand layout {A} (stride divisibility condition)"
            )
        ars = -rest_stride if rest_stride < 0 else rest_stride
        next_shape = -(-cs // ars)
        next_stride = -(-ars // cs) * (1 if rest_stride > 0 else -1)
        if cs % ars and ars % cs:
            flags[0] = True
        if next_shape == 1 or rest_shape == 1:
            rest_stride = next_stride
            continue
        new_shape = next_shape if next_shape < rest_shape else rest_shape
        if rest_shape % new_shape:
            raise LayoutError(
                f"composition: shape {rest_shape} (from {B}) is not a multiple of {new_shape}, the part of the "
                f"left-hand layout {A} it spans (shape divisibility condition)"
            )
        rshape.append(new_shape)
        rstride.append(rest_stride * cd)
        rest_shape //= new_shape
        rest_stride = next_stride
    if not rshape:
        return rest_shape, rest_stride * D[R - 1]
    if rest_shape == 1:
        return (rshape[0], rstride[0]) if len(rshape) == 1 else (tuple(rshape), tuple(rstride))
    rshape.append(rest_shape)
    rstride.append(rest_stride * D[R - 1])
    return tuple(rshape), tuple(rstride)


def _coalesce_x_int(fs: tuple | list, fd: tuple | list) -> tuple[list, list]:
    """CuTe's ``coalesce_x`` on concrete flat modes: coalesce, keeping the function past the size.

    A trailing size-1 mode is read as extent 2 (a placeholder), so its stride survives: past
    ``size(A)`` the last mode absorbs the overflow, as CuTe's ``crd2idx`` does.
    """
    ns: list = [2 if fs[-1] == 1 else fs[-1]]
    nd: list = [fd[-1]]
    for k in range(len(fs) - 2, -1, -1):
        sk, dk = fs[k], fd[k]
        if sk == 1:
            continue
        if ns[0] == 1:
            ns[0], nd[0] = sk, dk
        elif sk * dk == nd[0]:
            ns[0] *= sk
            nd[0] = dk
        else:
            ns.insert(0, sk)
            nd.insert(0, dk)
    if ns == [1]:
        return [1], [0]
    return ns, nd


def _compose_leaf(S: list, D: list, s: Any, d: Any, A: Layout, B: Layout) -> tuple[list, list]:
    """Compose the flat, coalesced modes S:D with one integral mode s:d (CuTe's composition_impl)."""
    if _is_zero(d) or _is_one(s):
        return [s], [0]
    R = len(S)
    if R == 1:
        return [s], [d * D[0]]
    if type(d) is int and d < 0:
        raise LayoutError(f"composition: right-hand layout {B} has negative stride {d}")
    rest_stride = d
    newS = []
    newD = []
    try:
        # divide out the stride of the right-hand mode from the left-hand shape
        for j in range(R - 1):
            Sj = S[j]
            ns = it.shape_div(Sj, rest_stride)
            rest_stride = it.shape_div(rest_stride, Sj)
            newS.append(ns)
            newD.append(D[j] * it.shape_div(Sj, ns))
    except LayoutError as e:
        why = "" if "neither" in str(e) else f" [{e}]"
        raise LayoutError(
            f"composition: stride {d} of the right-hand layout {B} does not divide, and is not divided "
            f"by, the shapes {_fmt(tuple(S))} of the left-hand layout {A} (stride divisibility condition){why}"
        ) from None
    rest_shape = s
    outS = []
    try:
        # mod out the shape of the right-hand mode
        for j in range(R - 1):
            ns = newS[j]
            try:
                fits = it.less(rest_shape, ns) or it.equal(rest_shape, ns)
            except LayoutError:
                fits = False
            if fits:  # the rest of B fits inside this mode of A: no divisibility needed
                outS.append(rest_shape)
                rest_shape = 1
                continue
            outS.append(it.leaf_min(ns, rest_shape))
            rest_shape = it.shape_div(rest_shape, ns)
    except LayoutError as e:
        why = "" if "neither" in str(e) else f" [{e}]"
        raise LayoutError(
            f"composition: shape {s} (stride {d}) of the right-hand layout {B} does not divide, and is not "
            f"divided by, the shapes of the left-hand layout {A} it spans (shape divisibility condition){why}"
        ) from None
    outS.append(rest_shape)
    newD.append(rest_stride * D[R - 1])
    rs, rd = _coalesce_flat(outS, newD)
    if not rs:
        return [1], [0]
    return rs, rd


def _coalesce_x(A: Layout) -> tuple[list, list]:
    """Coalesce that also keeps A's function past its size (CuTe's coalesce_x).

    Past ``size(A)`` the last mode absorbs the overflow, so a trailing size-1 mode's stride matters:
    ``(4,1):(1,0)`` is 0 at index 4 whereas ``4:1`` is 4. Only the last mode's stride is used by
    composition, so a placeholder shape keeps that mode from being dropped.
    """
    fs, fd = A.flat
    cf = _coalesce_flat_int if A.is_static else _coalesce_flat
    if _is_one(fs[-1]):
        return cf(fs[:-1] + (2,), fd)
    S, D = cf(fs, fd)
    if not S:
        return [1], [0]
    return S, D


def _compose_layouts(A: Layout, B: Layout) -> Layout:
    if A.is_static and B.is_static:
        S, D = _coalesce_x_int(*A.flat)
        flags = [False]

        def go_int(bs: Any, bd: Any) -> tuple[Any, Any]:
            if type(bs) is tuple:
                pairs = [go_int(x, y) for x, y in zip(bs, bd)]
                return tuple(p[0] for p in pairs), tuple(p[1] for p in pairs)
            return _compose_leaf_int(S, D, bs, bd, A, B, flags)

        shp, strd = go_int(B.shape, B.stride)
        R = Layout._make(shp, strd, True)
        if len(S) > 1 and (flags[0] or type(B.shape) is tuple):
            _check_functional(A, B, R, force=flags[0])
        return R
    S, D = _coalesce_x(A)

    def go(bs: Any, bd: Any) -> tuple[Any, Any]:
        if type(bs) is tuple:
            ss = []
            ds = []
            for x, y in zip(bs, bd):
                a, b = go(x, y)
                ss.append(a)
                ds.append(b)
            return tuple(ss), tuple(ds)
        rs, rd = _compose_leaf(S, D, bs, bd, A, B)
        if len(rs) == 1:
            return rs[0], rd[0]
        return tuple(rs), tuple(rd)

    shp, strd = go(B.shape, B.stride)
    R = Layout._make(shp, strd, None)
    if type(B.shape) is tuple and len(S) > 1:
        _check_functional(A, B, R)
    return R


def _no_carry(fs: tuple, fd: tuple) -> bool:
    """True iff B's non-trivial modes, sorted by stride, satisfy d[k] * s[k] | d[k+1] (no carries)."""
    modes = []
    symbolic = False
    for s, d in zip(fs, fd):
        if type(s) is int and type(d) is int:
            if s != 1 and d != 0:
                modes.append((d, s))
        elif not _is_one(s) and not _is_zero(d):
            modes.append((d, s))
            symbolic = True
    if len(modes) <= 1:
        return True
    if symbolic:
        return _no_carry_symbolic(modes)
    modes.sort()
    if modes[0][0] < 0:  # a negative stride: B's offsets below 0 (A at them is CuTe's truncating split)
        return False
    prev = modes[0][0] * modes[0][1]
    for d1, s1 in modes[1:]:
        if d1 < 0 or d1 % prev:
            return False
        prev = d1 * s1
    return True


def _cmp_first(x: Any, y: Any) -> int:
    """Order pairs by their (possibly symbolic) first element; LayoutError when undecidable."""
    return -1 if it.less(x[0], y[0]) else (0 if it.equal(x[0], y[0]) else 1)


def _no_carry_symbolic(modes: list) -> bool:
    try:
        modes = sorted(modes, key=functools.cmp_to_key(_cmp_first))
        prev = modes[0][0] * modes[0][1]
        for d1, s1 in modes[1:]:
            if not it.divides(prev, d1):
                return False
            prev = d1 * s1
    except LayoutError:
        return False
    return True


def _check_functional(A: Layout, B: Layout, R: Layout, force: bool = False) -> None:
    """Raise unless R(i) == A(B(i)) for all i < size(B) (a fast sufficient test, else enumeration).

    With ``force`` the fast test is skipped (a construction step was not exact)."""
    if not _FUNCTIONAL_CHECK.get():
        return
    bs, bd = B.flat
    if not force and _no_carry(bs, bd):
        return
    if not (A.is_static and B.is_static):
        raise LayoutError(
            f"composition: cannot decide for symbolic layouts whether {A} o {B} is a layout "
            "(the right-hand modes may overlap in the left-hand coordinates)"
        )
    n = B.size()
    if n > _ENUM_LIMIT:
        raise LayoutError(
            f"composition: {A} o {B} is not provably a layout and size {n} is too large to enumerate"
        )
    bt: Any
    want: Any
    got: Any
    if _fits_int64(A, B, R):
        bt = B.table()
        want = A._eval_array(bt)
        got = R.table()
        bad = int(np.nonzero(got != want)[0][0]) if not np.array_equal(got, want) else -1
    else:  # offsets may pass 64 bits: Python ints
        bt = [_eval_int(B, i) for i in range(n)]
        want = [_eval_int(A, b) for b in bt]
        got = [_eval_int(R, i) for i in range(n)]
        bad = next((i for i in range(n) if got[i] != want[i]), -1)
    if bad >= 0:
        raise CompositionError(
            f"composition: {A} o {B} is not a layout: the mode-by-mode result {R} gives {int(got[bad])} "
            f"at index {bad} but A(B({bad})) = A({int(bt[bad])}) = {int(want[bad])} "
            "(the right-hand layout is not injective, or its modes overlap in the left-hand coordinates, "
            "or it runs past the left-hand domain)",
            A, B, R, bad,
        )


def _fits_int64(*Ls: Layout) -> bool:
    """Every offset of these concrete layouts, and of the first one at the others' offsets, fits in int64."""
    bound = 1
    for L in Ls:
        fs, fd = L.flat
        bound = max(bound, sum((s - 1) * abs(d) for s, d in zip(fs, fd)) + 1, _prod(fs))
    return bound * bound < (1 << 62)


def _eval_int(L: Layout, i: int) -> int:
    """L at the index ``i`` in Python ints: the last mode absorbs the overflow; a negative index splits
    with truncating division, as CuTe's C++ (and ``Layout.__call__``) split it, so ``L(-i) == -L(i)``."""
    if i < 0:
        return -_eval_int(L, -i)
    fs, fd = L.flat
    off = 0
    last = len(fs) - 1
    for k in range(last):
        i, c = divmod(i, fs[k])
        off += c * fd[k]
    return off + i * fd[last] if fs else 0


@overload
def composition(A: Layout, B: Any) -> Layout: ...


@overload
def composition(A: Any, B: Any) -> Any: ...


def composition(A: Any, B: Any) -> Any:
    """composition(A, B) -> R with R(c) = A(B(c)) for every coordinate c of B; R is compatible with B.

    ``B`` may be a layout, an integer ``n`` (meaning ``n:1``), ``None`` (identity), or a tuple
    tiler applied by-mode: ``R = (A[0] o B[0], A[1] o B[1], ...)``; as in CuTe, modes of A beyond
    the tiler's rank are dropped.

    Preconditions (CuTe's weak divisibility conditions, checked where CuTe's static_asserts check them):
    a stride of B is a multiple of, or below, each shape of ``coalesce(A)`` it passes, and a shape of
    B is a multiple of the part of A it spans. Where CuTe's construction then is still not the
    composition (B's modes overlap in A's coordinates, or a stride below a shape does not divide it),
    a :class:`CompositionError` is raised where CuTe would return the wrong layout.

    >>> str(composition(Layout((6, 2), (8, 2)), Layout((4, 3), (3, 1))))
    '((2,2),3):((24,2),8)'
    >>> str(composition(Layout((10, 2), (16, 4)), (Layout(5, 2), Layout(2, 1))))
    '(5,2):(32,4)'
    """
    if type(A) is Layout and type(B) is Layout:
        if _no_modes(A):
            A = _UNIT  # a rank-0 layout is 1:0
        if _no_modes(B):
            return B  # B's domain is {0}: R(0) = A(0) = 0, shaped as B
        if _FAST and (A._static or A.is_static) and (B._static or B.is_static):
            if _c_compose is not None:
                R = _c_compose(A, B)  # the kernel below in C, where it is exact and chained
                if R is not None:
                    return R
            f = A._flat
            S, D = _coalesce_x_fast(f if f is not None else A.flat)
            f = B._flat
            R = _compose_fast(S, D, B._shape, B._stride, f if f is not None else B.flat, lambda: (A, B))
            if R is not None:
                return R
        return _compose_layouts(A, B)
    if not isinstance(A, Layout):
        return _dispatch("composition", A, B)
    if B is None:
        return A
    if _no_modes(A):
        return composition(_UNIT, B)
    if isinstance(B, Layout):
        return _compose_layouts(A, B)
    if type(B) is tuple:
        modes = _modes_of(A)
        if len(B) > len(modes):
            raise LayoutError(
                f"composition: tiler {B!r} has {len(B)} modes but layout {A} has only {len(modes)}"
            )
        return make_layout(*[composition(m, b) for m, b in zip(modes, B)])
    if it.is_integer(B):
        b = it.as_leaf(B, "composition tiler")
        if type(b) is int and b < 1:
            raise LayoutError(f"composition: tiler size {b} must be >= 1")
        return _compose_layouts(A, Layout._make(b, 1))
    if hasattr(B, "_algebra_rhs_"):
        return B._algebra_rhs_("composition", A)
    raise LayoutError(f"composition: cannot compose {A} with {B!r}")


# ---------------------------------------------------------------------------------------------
# complement and inverses
# ---------------------------------------------------------------------------------------------


def _complement_static(layout: Layout, cotarget: Any, op: str) -> tuple[Layout, bool]:
    """CuTe's ``complement`` on a concrete layout and cotarget (an int or a tuple of ints).

    Follows ``detail::complement`` step by step: filter L, repeatedly take the smallest remaining
    stride ``d`` (the first on ties), emit the gap ``d / last`` below it, then cover the cotarget
    with ``ceil_div(cotarget, last)`` and coalesce. Also says whether every gap divided evenly.
    """
    fs: list = []
    fd: list = []
    for s, d in (zip(*layout._flat) if layout._flat is not None else _iter_leaves(layout.shape, layout.stride)):
        if s == 1 or d == 0:  # filter: stride-0 modes become size 1, then coalesce drops them
            continue
        if d < 0:
            raise LayoutError(f"{op}: layout {layout} has negative stride {d}")
        if fs and fs[-1] * fd[-1] == d:
            fs[-1] *= s
        else:
            fs.append(s)
            fd.append(d)
    if not fs:  # the irreducible stride-0 layout: the complement is the whole cotarget
        total = cotarget if type(cotarget) is int else it.product(cotarget)
        return Layout._make(total, 0 if total == 1 else 1, True), True
    rshape: list = []
    rstride: list = [1]
    exact = True
    top = sum((s - 1) * d for s, d in zip(fs, fd))  # the largest offset of (filter(L), gaps), gaps added below
    while True:
        k = fd.index(min(fd))
        dmin = fd[k]
        gap, rem = divmod(dmin, rstride[-1])
        if gap == 0:
            raise LayoutError(
                f"{op}: layout {layout} is not injective (stride {dmin} is smaller than the extent {rstride[-1]} "
                "of the modes below it): non-injective layout detected in complement"
            )
        exact = exact and rem == 0
        top += (gap - 1) * rstride[-1]
        rshape.append(gap)
        if len(fs) == 1:
            break
        rstride.append(dmin * fs[k])
        del fs[k], fd[k]
    new_stride = fd[0] * fs[0]
    rest_shape = -(-cotarget // new_stride) if type(cotarget) is int else _rest_of_shape(cotarget, new_stride)
    if not exact:
        # an inexact gap leaves holes below new_stride: CuTe's rest may not reach the cotarget; take the
        # fewest copies at new_stride that do (cosize((filter(L), C)) >= M), where CuTe's falls short
        m = cotarget if type(cotarget) is int else _prod(flatten(cotarget))
        rest_shape = max(rest_shape, 1 - (-(m - top - 1) // new_stride) if m > top + 1 else 1)
    rs = tuple(rshape) + (rest_shape,)
    rd = tuple(rstride) + (0 if rest_shape == 1 else new_stride,)
    return coalesce(Layout._make(rs, rd, True)), exact


def _inexact(op: str, layout: Layout, d: Any, last: Any) -> str:
    return (
        f"{op}: stride {d} of {layout} is not a multiple of {last}, the extent of the modes below it: no ordered "
        f"layout fills the gap below {d} (CuTe returns one whose size does not cover the cotarget)"
    )


def _complement_parts(layout: Layout, cotarget: Any, op: str) -> tuple[Layout, bool]:
    """CuTe's complement; also says whether it is exact (every gap divides evenly)."""
    if layout.is_static and all(type(c) is int for c in (flatten(cotarget) if type(cotarget) is tuple else (cotarget,))):
        return _complement_static(layout, cotarget, op)
    fl = filter(layout)
    fs, fd = fl.flat
    if len(fs) == 1 and _is_zero(fd[0]):
        # a layout of only stride-0 (or size-1) modes: complement is the whole cotarget
        if type(cotarget) is tuple:
            return coalesce(Layout(cotarget)), True
        return Layout._make(cotarget, 1), True
    modes = list(zip(fd, fs))
    for d, _s in modes:
        if type(d) is int and d < 0:
            raise LayoutError(f"{op}: layout {layout} has negative stride {d}")
    if all(type(d) is int for d, _ in modes):
        modes.sort(key=lambda m: m[0])
    else:
        try:
            modes.sort(key=functools.cmp_to_key(_cmp_first))
        except LayoutError as e:
            raise LayoutError(f"{op}: cannot order the strides of {layout}: {e}") from None
    rshape: list = []
    rstride: list = [1]
    exact = True
    for d, s in modes:
        last = rstride[-1]
        ns: Any
        if type(d) is int and type(last) is int:
            ns = d // last
            if d % last:  # (a concrete layout goes to _complement_static, which fills the holes' rest)
                raise LayoutError(_inexact(op, layout, d, last))
        else:
            try:
                exact_gap = it.divides(last, d)
            except LayoutError as e:
                raise LayoutError(f"{op}: {layout}: {e}") from None
            if exact_gap:
                ns = it.shape_div(d, last)
            else:
                raise LayoutError(f"{op}: cannot decide whether {last} divides stride {d} of {layout}")
        if (ns == 0) if type(ns) is int else False:
            raise LayoutError(
                f"{op}: layout {layout} is not injective (stride {d} is smaller than the extent {last} "
                "of the modes below it): non-injective layout detected in complement"
            )
        rshape.append(ns)
        rstride.append(d * s)
    new_stride = rstride[-1]
    rest: Any = None
    if type(cotarget) is tuple:  # CuTe's fold, where it provably covers the cotarget, else the product's
        fold = it.product(it.ceil_div(cotarget, new_stride))
        try:
            if not it.less(fold * new_stride, it.product(cotarget)):
                rest = fold
        except LayoutError:
            pass
        if rest is None:
            rest = it.ceil_div(it.product(cotarget), new_stride)
    else:
        rest = it.ceil_div(cotarget, new_stride)
    fs2 = rshape + [rest]
    fd2 = rstride
    return _from_flat(*_coalesce_flat(fs2, fd2)), exact


@overload
def complement(layout: Layout, cotarget: Any = None) -> Layout: ...


@overload
def complement(layout: Any, cotarget: Any = None) -> Any: ...


def complement(layout: Any, cotarget: Any = None) -> Any:
    """complement(L, M) -> C: the ordered layout of offsets "between" L's, so that (L, C) is injective.

    Postconditions: C is ordered (strictly increasing), ``(filter(L), C)`` is injective (so
    ``C(i) != L(j)`` for ``i >= 1``), and it reaches the cotarget: ``cosize((filter(L), C)) >= M``.
    Where every sorted stride of filter(L) is a multiple of the extent below it, ``(filter(L), C)``
    is a bijection onto ``[0, N)``, ``N >= M``. ``M`` defaults to ``cosize(filter(L))``; a shape is
    folded mode by mode as CuTe folds it (divides then follow A's shape). C is CuTe's complement
    wherever CuTe's reaches the cotarget; where it does not (a shape whose fold falls short:
    ``complement(3:1, (2,4))`` is CuTe's ``2:3``, reaching 6 < 8; an inexact gap leaving holes:
    ``complement((2,2):(1,3), 6)`` is CuTe's ``1:0``, reaching 5 < 6) its last mode takes the fewest
    copies that do (``3:3`` and ``2:6``).
    Preconditions: L's strides are non-negative and each sorted stride of filter(L) is at least the
    extent of the mode below it (CuTe's injectivity check).

    >>> str(complement(Layout(4, 2), 24))
    '(2,3):(1,8)'
    >>> str(complement(Layout((2, 2), (1, 6)), 24))
    '(3,2):(2,12)'
    """
    if cotarget is None and _FAST and type(layout) is Layout and layout._static:
        # cosize(filter(L)) is cosize(L) for concrete L: dropped stride-0 and merged modes add nothing
        cotarget = layout.cosize()
    if type(layout) is Layout and type(cotarget) is int and layout._static and cotarget >= 1:
        if _FAST:
            if _c_complement is not None:
                r = _c_complement(layout, cotarget)  # the kernel below, in C, for modes that fit in 64 bits
                if r is not None:
                    return r
            r = _complement_fast(layout._flat or layout.flat, cotarget)
            if r is not None:
                return r
        return _complement_static(layout, cotarget, "complement")[0]
    if not isinstance(layout, Layout):
        return _dispatch("complement", layout, cotarget)
    if cotarget is None:
        cotarget = filter(layout).cosize()
    elif type(cotarget) is tuple:
        cotarget = it.normalize(cotarget, "complement cotarget")
    elif isinstance(cotarget, Layout):
        cotarget = cotarget.shape
    else:
        cotarget = it.as_leaf(cotarget, "complement cotarget")
        if type(cotarget) is int and cotarget < 1:
            raise LayoutError(f"complement: cotarget {cotarget} must be >= 1")
    return _complement_parts(layout, cotarget, "complement")[0]


@overload
def right_inverse(layout: Layout) -> Layout: ...


@overload
def right_inverse(layout: Any) -> Any: ...


def right_inverse(layout: Any) -> Any:
    """right_inverse(L) -> R with L(R(i)) == i for all i < size(R) (R as large as CuTe finds it).

    Follows the strides of ``coalesce(L)`` from 1: mode with stride 1, then the mode whose stride is
    that mode's extent, and so on. R's values are indices of L (``0 <= R(i) < size(L)``). Modes of
    negative stride never take part: L(R(i)) == i >= 0 needs each step to go up (CuTe's chain
    follows the same positive strides, so ``right_inverse(2:-1)`` is ``1:0`` in both).

    >>> str(right_inverse(Layout((4, 2), (2, 1))))
    '(2,4):(4,1)'
    """
    if _c_right_inverse is not None and _FAST:
        R = _c_right_inverse(layout)  # the kernel below, in C, for modes that fit in 64 bits
        if R is not None:
            return R
    if type(layout) is Layout and (layout._static or layout.is_static) and _FAST:
        # the kernel of _right_inverse_static, for non-negative strides and size > 1: coalesce, noting
        # for each stride its first mode's (shape, prefix product of the shapes before it), then follow
        # the strides from 1
        where: dict = {}
        p = 1
        fs, fd = layout._flat or layout.flat
        pairs = zip(fs, fd)
        for cs, cd in pairs:  # noqa: B007 - cd is read after the loop
            if cs != 1:
                break
        else:
            cs = 0
        if cs:
            for s, d in pairs:
                if cs * cd == d:  # merge (a size-1 mode merges as a no-op)
                    cs *= s
                elif s != 1:
                    if cd not in where:
                        where[cd] = (cs, p)
                    p *= cs
                    cs = s
                    cd = d
            if cd not in where:
                where[cd] = (cs, p)
            if min(where) >= 0:
                R = _new(Layout)
                R._flat = R._hash = None
                R._static = True
                t = where.get(1)
                if t is None:
                    R._shape = 1
                    R._stride = 0
                    return R
                s, q = t
                t = where.get(s)
                if t is None:
                    R._shape = s
                    R._stride = q
                    return R
                inv_s = [s]
                inv_d = [q]
                nxt = s  # strictly increasing (coalesced shapes are >= 2): no mode is found twice
                while t is not None:
                    s, q = t
                    inv_s.append(s)
                    inv_d.append(q)
                    nxt *= s
                    t = where.get(nxt)
                R._shape = tuple(inv_s)
                R._stride = tuple(inv_d)
                return R
    if type(layout) is Layout and (layout._static or layout.is_static):
        return _right_inverse_static(layout)
    if not isinstance(layout, Layout):
        return _dispatch("right_inverse", layout)
    cl = coalesce(layout)
    fs, fd = cl.flat
    rstride = list(flatten(it.prefix_product(tuple(fs)))) if len(fs) > 1 else [1]
    shapes: list = []
    strides: list = []
    nxt = 1
    used = set()
    while True:
        found = -1
        for k, d in enumerate(fd):
            if k in used:
                continue
            if type(d) is int and d < 0:  # a negative stride steps away from 0: never on the chain
                continue
            if (d == nxt) if (type(d) is int and type(nxt) is int) else _provably_equal(d, nxt):
                found = k
                break
        if found < 0:
            break
        used.add(found)
        s, d = fs[found], fd[found]
        shapes.append(s)
        strides.append(rstride[found])
        step = s * d
        if _provably_equal(step, nxt):
            break
        nxt = step
    if not shapes:
        return Layout._make(1, 0)
    if len(shapes) == 1:
        return Layout._make(shapes[0], strides[0])
    return Layout._make(tuple(shapes), tuple(strides))


def _right_inverse_static(layout: Layout) -> Layout:
    fs: list = []
    fd: list = []
    f = layout._flat
    for s, d in (zip(*f) if f is not None else _iter_leaves(layout.shape, layout.stride)):
        if s == 1:
            continue
        if fs and fs[-1] * fd[-1] == d:
            fs[-1] *= s
        else:
            fs.append(s)
            fd.append(d)
    where: dict = {}
    p = 1
    rstride = []
    for k, (s, d) in enumerate(zip(fs, fd)):
        rstride.append(p)
        p *= s
        if d > 0:  # a negative stride steps away from 0: never on the chain from offset 1
            where.setdefault(d, k)
    shapes: list = []
    strides: list = []
    nxt = 1
    while True:
        k = where.pop(nxt, None)
        if k is None:
            break
        s, d = fs[k], fd[k]
        shapes.append(s)
        strides.append(rstride[k])
        nxt = s * d
    if not shapes:
        return Layout._make(1, 0)
    if len(shapes) == 1:
        return Layout._make(shapes[0], strides[0])
    return Layout._make(tuple(shapes), tuple(strides))


@overload
def left_inverse(layout: Layout) -> Layout: ...


@overload
def left_inverse(layout: Any) -> Any: ...


def left_inverse(layout: Any) -> Any:
    """left_inverse(L) -> R with R(L(i)) == i for all i < size(L) when L is injective.

    With stride-0 (broadcast) modes R is a *quasi-inverse*: ``L(R(L(i))) == L(i)`` (R picks the
    preimage whose broadcast coordinates are 0). Current CuTe's construction: sort the modes of
    ``coalesce(L)`` by stride ``d_0 < d_1 < ...``; R reads an offset as the mixed radix ``(d_0,
    d_1/d_0, d_2/d_1, ..., s_last)`` and sends digit k to the index stride of the mode with stride
    ``d_k`` (the first digit, below the smallest stride, is ignored). Preconditions: each sorted
    stride divides the next (CuTe's left-inverse divisibility condition) and is at least the extent
    ``d_k * s_k`` of the mode below it (the modes of non-zero stride are injective; CuTe returns a
    layout that is no quasi-inverse there), and a negative stride only in a layout of one mode (R
    is then evaluated below 0, as CuTe evaluates it). LayoutError otherwise.

    >>> str(left_inverse(Layout((2, 4), (4, 1))))
    '(4,2):(2,1)'
    >>> str(left_inverse(Layout((2, 3), (1, 3))))    # offsets 2, 5 are never hit: skipped
    '(3,3):(1,2)'
    """
    if type(layout) is Layout and _FAST:
        f = _static_flat_of(layout)
        if f is not None:
            R = _left_inverse_fast(f)
            if R is not None:
                return R
    if not isinstance(layout, Layout):
        return _dispatch("left_inverse", layout)
    if not layout.is_static:
        raise LayoutError(f"left_inverse: layout {layout} has symbolic strides (CuTe requires static strides)")
    S, D = _coalesce_flat_int(*layout.flat)
    if not S:
        return Layout._make(1, 0, True)
    if any(d < 0 for d in D):
        if len(S) == 1:
            # x = d*i with d < 0: R(x) = -R'(-x) (CuTe splits a negative index with truncating division),
            # R' the left inverse of s:|d|
            s, d = S[0], D[0]
            return _from_flat(*_coalesce_flat_int([-d, s], [0, -1]), True)
        raise LayoutError(f"left_inverse: layout {layout} mixes negative strides with other modes")
    pre = [1]
    for x in S[:-1]:
        pre.append(pre[-1] * x)
    order = sorted(range(len(S)), key=lambda k: D[k])
    shapes: list = []
    strides: list = [0]
    size = 1
    ext = 1
    for k in order:
        d = D[k]
        if d == 0:
            continue
        if d % size:
            raise LayoutError(
                f"left_inverse: stride {d} of {layout} is not a multiple of the stride {size} below it "
                "(left inverse divisibility condition)"
            )
        if d < ext:
            raise LayoutError(
                f"left_inverse: layout {layout} is not injective on its modes of non-zero stride (stride {d} is "
                f"below the extent {ext} of the modes below it): no R has L(R(L(i))) == L(i) for every i "
                "(CuTe returns one that does not)"
            )
        ext = d * S[k]
        shapes.append(d // size)
        strides.append(pre[k])
        size = d
    shapes.append(S[order[-1]])
    return _from_flat(*_coalesce_flat_int(shapes, strides), True)


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
    modes = _modes_of(A)
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
    if type(A) is Layout and B is not None and type(B) is not tuple and _no_modes(A):
        A = _UNIT  # a rank-0 layout is 1:0 (a tuple tiler divides its modes)
    if type(A) is Layout and type(B) is Layout and _FAST:
        fa = A._flat if A._static else None  # (a layout built from int tuples has both)
        if fa is None:
            fa = _static_flat_of(A)
        fb = B._flat if B._static else None
        if fb is None:
            fb = _static_flat_of(B)
        if fa is not None and fb is not None:
            R = _logical_divide_fast(A, fa, B, fb)
            if R is not None:
                return R
    if not isinstance(A, Layout):
        return _dispatch("logical_divide", A, B)
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
    if type(A) is Layout and type(B) is Layout and _FAST:
        fa = A._flat if A._static else None  # (a layout built from int tuples has both)
        if fa is None:
            fa = _static_flat_of(A)
        fb = B._flat if B._static else None
        if fb is None:
            fb = _static_flat_of(B)
        if fa is not None and fb is not None:
            R = _logical_product_fast(A, fa, B, fb)
            if R is not None:
                return R
    if not isinstance(A, Layout):
        return _dispatch("logical_product", A, B)
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
        modes = _modes_of(A)
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
        return _dispatch("zipped_divide", A, B)
    return _hier_unzip("zipped_divide", logical_divide, A, B)


@overload
def tiled_divide(A: Layout, B: Any) -> Layout: ...


@overload
def tiled_divide(A: Any, B: Any) -> Any: ...


def tiled_divide(A: Any, B: Any) -> Any:
    """tiled_divide(A, B): zipped_divide with the rest modes unpacked: ((tile...), rest0, rest1, ...)."""
    if not isinstance(A, Layout):
        return _dispatch("tiled_divide", A, B)
    return _unpack(zipped_divide(A, B), False)


@overload
def flat_divide(A: Layout, B: Any) -> Layout: ...


@overload
def flat_divide(A: Any, B: Any) -> Any: ...


def flat_divide(A: Any, B: Any) -> Any:
    """flat_divide(A, B): zipped_divide with both modes unpacked: (tile0, tile1, ..., rest0, rest1, ...)."""
    if not isinstance(A, Layout):
        return _dispatch("flat_divide", A, B)
    return _unpack(zipped_divide(A, B), True)


@overload
def zipped_product(A: Layout, B: Any) -> Layout: ...


@overload
def zipped_product(A: Any, B: Any) -> Any: ...


def zipped_product(A: Any, B: Any) -> Any:
    """zipped_product(A, B): logical_product with modes gathered: ((block...), (repeats...))."""
    if not isinstance(A, Layout):
        return _dispatch("zipped_product", A, B)
    return _hier_unzip("zipped_product", logical_product, A, B)


@overload
def tiled_product(A: Layout, B: Any) -> Layout: ...


@overload
def tiled_product(A: Any, B: Any) -> Any: ...


def tiled_product(A: Any, B: Any) -> Any:
    """tiled_product(A, B): zipped_product with the repeat modes unpacked."""
    if not isinstance(A, Layout):
        return _dispatch("tiled_product", A, B)
    return _unpack(zipped_product(A, B), False)


@overload
def flat_product(A: Layout, B: Any) -> Layout: ...


@overload
def flat_product(A: Any, B: Any) -> Any: ...


def flat_product(A: Any, B: Any) -> Any:
    """flat_product(A, B): zipped_product with both modes unpacked."""
    if not isinstance(A, Layout):
        return _dispatch("flat_product", A, B)
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
    return make_layout(*[make_layout(x, y) for x, y in zip(_modes_of(a), _modes_of(b))])


def _rank_product(op: str, A: Any, B: Any, raked: bool) -> Layout:
    if not isinstance(A, Layout):
        return _dispatch(op, A, B)
    if type(B) is tuple:
        B = make_layout(*[_tiler_layout(b, op) for b in B])
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
        return _dispatch("tile_to_shape", block, target_shape, order)
    trg = it.normalize(target_shape, "tile_to_shape target") if not isinstance(
        target_shape, Layout) else target_shape.shape
    R = it.rank(trg)
    if len(block) > R:
        raise LayoutError(
            f"tile_to_shape: block {block} has rank {len(block)} > rank {R} of target shape {_fmt(trg)}"
        )
    padded = append(block, n=R)
    bshape = it.product_each(padded.shape)
    tshape = it.product_each(trg)
    bsh = bshape if type(bshape) is tuple else (bshape,)
    tsh = tshape if type(tshape) is tuple else (tshape,)
    for b, t in zip(bsh, tsh):
        if not it.divides(b, t):
            raise LayoutError(
                f"tile_to_shape: block shape {_fmt(bshape)} of {block} does not divide target shape {_fmt(tshape)}"
            )
    pshape = it.ceil_div(tshape, bshape)
    if order is None or order == "left":
        pl = make_layout(pshape)
    elif order == "right":
        pl = make_layout(pshape, order="right")
    else:
        pl = make_ordered_layout(pshape, order)
    return blocked_product(padded, pl)


# ---------------------------------------------------------------------------------------------
# common vectors, casts, nullspace
# ---------------------------------------------------------------------------------------------


@overload
def max_common_layout(a: Layout, b: Any) -> Layout: ...


@overload
def max_common_layout(a: Any, b: Any) -> Any: ...


def max_common_layout(a: Any, b: Any) -> Any:
    """max_common_layout(A, B) -> R with A(R(i)) == i and B(R(i)) == i for all i < size(R), R maximal.

    >>> str(max_common_layout(Layout((4, 8), (8, 1)), Layout((4, 8), (1, 4))))
    '1:0'
    >>> str(max_common_layout(Layout((4, 8), (8, 1)), Layout((4, 8), (8, 1))))
    '(8,4):(4,1)'
    """
    if not isinstance(a, Layout):
        return _dispatch("max_common_layout", a, b)
    if not isinstance(b, Layout):
        raise LayoutError(f"max_common_layout: {b!r} is not a layout")
    inv_b = right_inverse(b)
    common = coalesce(composition(a, inv_b))
    m0 = common[0]
    if type(m0.shape) is int and m0.stride == 1:
        return composition(inv_b, m0)
    return Layout._make(1, 0)


@overload
def max_common_vector(a: Layout, b: Any) -> int: ...


@overload
def max_common_vector(a: Any, b: Any) -> Any: ...


def max_common_vector(a: Any, b: Any) -> Any:
    """max_common_vector(A, B) -> N, the largest N with A(B⁻¹(n)) == n for all n < N (at least 1).

    >>> max_common_vector(Layout((4, 8), (8, 1)), Layout((4, 8), (8, 1)))
    32
    """
    if not isinstance(a, Layout):
        return _dispatch("max_common_vector", a, b)
    if not isinstance(b, Layout):
        raise LayoutError(f"max_common_vector: {b!r} is not a layout")
    common = coalesce(composition(a, right_inverse(b)))
    m0 = common[0]
    if type(m0.shape) is int and m0.stride == 1:
        return m0.shape
    return 1


def _small_modes_upcast(small: list, n: int) -> bool:
    """Whether the modes ``(d, s)`` of strides ``0 < |d| < n`` upcast mode by mode: the vectors their
    offsets ``w`` touch, ``{floor(w / n)}``, are ``[-sum_neg(ceil(s*|d|/n) - 1), sum_pos(ceil(s*d/n) - 1)]``,
    which the upcast modes (strides +1 and -1) give. True when the strides are positive and chain
    (sorted, ``d_{k+1} == d_k * s_k``) or stay in vector 0, or by enumeration (up to 2**16 offsets)."""
    if small[0][0] > 0:
        if all(d0 * s0 == d1 for (d0, s0), (d1, _) in zip(small, small[1:])):
            return True
        if sum((s - 1) * d for d, s in small) < n:
            return True
    if _prod(s for _, s in small) > 1 << 16:
        return False
    offs = {0}
    for d, s in small:
        offs = {w + c * d for w in offs for c in range(s)}
    hi = sum(-(-(s * d) // n) - 1 for d, s in small if d > 0)
    lo = sum(-(-(s * -d) // n) - 1 for d, s in small if d < 0)
    return {w // n for w in offs} == set(range(-lo, hi + 1))


@overload
def upcast(layout: Layout, n: int) -> Layout: ...


@overload
def upcast(layout: Any, n: int) -> Any: ...


def upcast(layout: Any, n: int) -> Any:
    """upcast(L, N): L in units of N-element vectors: stride-1 modes shrink by N, other strides divide by N.

    >>> str(upcast(Layout((8, 16), (1, 8)), 2))
    '(4,16):(1,4)'
    """
    if not isinstance(layout, Layout):
        return _dispatch("upcast", layout, n)
    n = _cast_factor(n, "upcast")
    # the modes that shrink (0 < |stride| < N, size > 1) share the vectors: sound when they are one run
    # of positive strides that chain (d_{k+1} == d_k * s_k once sorted), each dividing N
    small = sorted((d, s) for s, d in zip(*layout.flat)
                   if type(d) is int and d != 0 and -n < d < n and not _is_one(s))
    if small and not _small_modes_upcast(small, n):
        raise LayoutError(
            f"upcast: the modes of {layout} with strides below the vector size {n} ({', '.join(f'{s}:{d}' for d, s in small)}) "
            f"touch vectors that the upcast modes do not give (a reversed mode straddles the vector boundary "
            "below 0, or the modes overlap or leave gaps across vectors)"
        )

    def go(s, d):
        if type(s) is tuple:
            pairs = [go(x, y) for x, y in zip(s, d)]
            return tuple(p[0] for p in pairs), tuple(p[1] for p in pairs)
        if _is_zero(d):
            return s, d
        if type(d) is int:
            ad = -d if d < 0 else d
            if ad % n and n % ad:  # CuTe: Stride % N == 0 or N % Stride == 0 (C remainders)
                raise LayoutError(
                    f"upcast: stride {d} of {layout} neither divides nor is a multiple of the vector size {n} "
                    "(divisibility condition)"
                )
            return it.ceil_div(s, -(-n // ad)), (1 if d > 0 else -1) * -(-ad // n)
        # a symbolic stride: assumed a multiple of N, as CuTe assumes of dynamic strides
        try:
            return s, it.shape_div(d, n)
        except LayoutError:
            raise LayoutError(f"upcast: cannot divide the symbolic stride {d} of {layout} by {n}") from None

    s, d = go(layout.shape, layout.stride)
    return Layout(s, d)


@overload
def downcast(layout: Layout, n: int) -> Layout: ...


@overload
def downcast(layout: Any, n: int) -> Any: ...


def downcast(layout: Any, n: int) -> Any:
    """downcast(L, N): L in units N times smaller: stride-±1 modes grow by N, other strides multiply by N.

    Exactly one mode grows: the first of stride ±1 and size > 1 (else the first of stride ±1); every
    other stride is multiplied by N, so ``D`` has ``size(L) * N`` elements and its offsets are
    ``N*L(i) + r`` for ``r < N``. A stride -1 mode ``s:-1`` becomes ``(N,s):(1,-N)``. (CuTe grows
    every mode of stride ±1, size-1 ones included, and ``s:-1`` to ``s*N:-1``; neither is ``L`` in
    smaller units.) Precondition (CuTe's): some mode has stride 1 (adjacent elements).

    >>> str(downcast(Layout((4, 16), (1, 4)), 2))
    '(8,16):(1,8)'
    >>> str(downcast(Layout((1, 2), (1, 1)), 2)), str(downcast(Layout((4, 1), (-1, 1)), 2))
    ('(1,4):(2,1)', '((2,4),1):((1,-2),2)')
    """
    if not isinstance(layout, Layout):
        return _dispatch("downcast", layout, n)
    n = _cast_factor(n, "downcast")
    fs, fd = layout.flat
    units = [k for k, d in enumerate(fd) if type(d) is int and d in (1, -1)]
    if not any(fd[k] == 1 for k in units):  # CuTe's precondition: a stride +1 mode
        raise LayoutError(f"downcast: layout {layout} has no stride-1 mode (downcast requires adjacent elements)")
    grow = next((k for k in units if not _is_one(fs[k])), units[0])
    leaf = [0]

    def go(s, d):
        if type(s) is tuple:
            pairs = [go(x, y) for x, y in zip(s, d)]
            return tuple(p[0] for p in pairs), tuple(p[1] for p in pairs)
        k = leaf[0]
        leaf[0] += 1
        if k != grow:
            return s, d * n
        if d == 1 or _is_one(s):
            return s * n, 1
        return (n, s), (1, -n)

    s, d = go(layout.shape, layout.stride)
    return Layout(s, d)


def _cast_factor(n: Any, op: str) -> int:
    if type(n) is not int or n < 1:
        raise LayoutError(f"{op}: factor {n!r} must be a positive integer")
    return n


@overload
def recast_layout(layout: Layout, old_bits: int, new_bits: int) -> Layout: ...


@overload
def recast_layout(layout: Any, old_bits: int, new_bits: int) -> Any: ...


def recast_layout(layout: Any, old_bits: int, new_bits: int) -> Any:
    """recast_layout(L, old_bits, new_bits): L re-expressed for elements of ``new_bits`` instead of ``old_bits``.

    Wider elements upcast by new/old, narrower ones downcast by old/new.

    >>> str(recast_layout(Layout((8, 16), (1, 8)), 16, 32))
    '(4,16):(1,4)'
    >>> str(recast_layout(Layout((8, 16), (1, 8)), 16, 8))
    '(16,16):(1,16)'
    """
    for v, name in ((old_bits, "old_bits"), (new_bits, "new_bits")):
        if type(v) is not int or v < 1:
            raise LayoutError(f"recast_layout: {name} = {v!r} must be a positive integer")
    g = gcd(old_bits, new_bits)
    num, den = new_bits // g, old_bits // g
    if num == 1 and den == 1:
        return layout
    if num == 1:
        return downcast(layout, den)
    if den == 1:
        return upcast(layout, num)
    return downcast(upcast(layout, num), den)


@overload
def nullspace(layout: Layout) -> Layout: ...


@overload
def nullspace(layout: Any) -> Any: ...


def nullspace(layout: Any) -> Any:
    """nullspace(L) -> R with L(R(i)) == 0 for all i < size(R), size(R) = size(L) / size(filter(L)).

    R enumerates the coordinates of L's stride-0 modes.

    >>> str(nullspace(Layout((2, 4, 3), (1, 0, 0))))
    '(4,3):(2,8)'
    """
    if not isinstance(layout, Layout):
        return _dispatch("nullspace", layout)
    fs, fd = layout.flat
    if not fs:  # a rank-0 layout is 1:0
        fs, fd = (1,), (0,)
    pp = flatten(it.compact_major(tuple(fs))) if len(fs) > 1 else (it.compact_major(fs[0]),)
    shapes = [s for s, d in zip(fs, fd) if type(d) is int and d == 0]  # CuTe: static-0 strides only
    strides = [p for p, d in zip(pp, fd) if type(d) is int and d == 0]
    if not shapes:
        return Layout._make(1, 0)
    if len(shapes) == 1:
        return Layout._make(shapes[0], strides[0])
    return Layout._make(tuple(shapes), tuple(strides))


@overload
def with_shape(L: Layout, shp: Any) -> Layout: ...


@overload
def with_shape(L: Any, shp: Any) -> Any: ...


def with_shape(L: Any, shp: Any) -> Any:
    """with_shape(L, S) = composition(L, make_layout(S)): L re-indexed by the compact shape S.

    >>> str(with_shape(Layout(24), (4, 6)))
    '(4,6):(1,4)'
    """
    return composition(L, Layout(shp))
