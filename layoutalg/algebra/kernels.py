"""The fast kernels of the algebra on concrete layouts: plain-int twins of the reference constructions, and
the C kernels of :mod:`layoutalg.speedups` where built. Each returns None wherever it is not sure.

Internal: the algebra's operations call these on operands they have already read and checked; nothing here is
public (``__all__`` is empty).
"""

from __future__ import annotations

from collections.abc import Callable
from math import prod as _prod
from typing import Any, cast

from .. import inttuple as it
from ..inttuple import flatten
from ..layout import Layout
from ..speedups import c_enabled, ext
from .core import FUNCTIONAL_CHECK, check_functional, no_carry

__all__: list[str] = []

# ---------------------------------------------------------------------------------------------
# fast paths for concrete layouts
# ---------------------------------------------------------------------------------------------
#
# Each operation first tries a kernel that works on the plain (shape, stride) int tuples of its
# concrete inputs and builds one Layout at the end. A kernel follows the reference construction
# (the code after the fast path in each operation) step by step, and returns None wherever it is
# not sure of the outcome: a negative stride, a condition CuTe refuses, a step that relies on CuTe's
# weak stride condition. The operation then runs its reference construction, which decides and
# words every error, so results and errors are the reference's. ``speedups.reference_only()`` turns
# the kernels off; tests compare both on random layouts.

_new = Layout.__new__
#: coalesce of a static Layout in C (None where the C fast paths are not built)
c_coalesce: Callable[[Layout], Layout | None] | None = ext.coalesce if ext is not None else None
c_right_inverse: Callable[[Layout], Layout | None] | None = ext.right_inverse if ext is not None else None
c_filter: Callable[[Layout], Layout | None] | None = ext.filter if ext is not None else None
c_compose: Callable[[Layout, Layout], Layout | None] | None = ext.compose if ext is not None else None
c_complement: Callable[[Layout, int], Layout | None] | None = (
    getattr(ext, "complement", None) if ext is not None else None)


def static_flat_of(L: Layout) -> tuple[tuple, tuple] | None:
    """L's (flat shape, flat stride) when every leaf is a plain int, else None."""
    st = L._static
    if st is None:
        st = L.is_static
    if not st:
        return None
    f = L._flat
    return f if f is not None else L.flat


def coalesce_fast(fs: tuple | list, fd: tuple | list) -> tuple[list, list]:
    """:func:`coalesce_flat_int`: size-1 modes dropped, ``(s0:d0),(s1:d1)`` merged when ``s0*d0 == d1``."""
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


def coalesce_x_fast(f: tuple[tuple, tuple]) -> tuple[list, list]:
    """:func:`_coalesce_x_int` (CuTe's coalesce_x): coalesce with a trailing size-1 mode read as 2.

    coalesce_x merges back to front and coalesce front to back, but both merge exactly the runs of
    consecutive non-trivial modes with ``s_k * d_k == d_{k+1}``, so the results agree."""
    fs, fd = f
    return coalesce_fast(fs[:-1] + (2,) if fs[-1] == 1 else fs, fd)


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
    stride, prev), or None. Also follows B's leaves for :func:`no_carry`: ``prev`` is the extent
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


def compose_fast(S: list, D: list, bs: Any, bd: Any, fb: tuple[tuple, tuple],
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
    if not chained and not no_carry(*fb) and FUNCTIONAL_CHECK.get():
        A, B = layouts()
        check_functional(A, B, R)
    return R


def rest_of_shape(a: tuple, b: int) -> int:
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


def complement_fast(f: tuple[tuple, tuple], cotarget: Any) -> Layout | None:
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
        rest = -(-cotarget // last) if type(cotarget) is int else rest_of_shape(cotarget, last)
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
    rest = -(-cotarget // last) if type(cotarget) is int else rest_of_shape(cotarget, last)
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


def logical_divide_fast(A: Layout, fa: tuple[tuple, tuple], B: Layout, fb: tuple[tuple, tuple]) -> Layout | None:
    """``composition(A, make_layout(B, complement(B, shape(coalesce(A)))))`` on concrete tuples, or None."""
    fs, fd = fa
    if fs[-1] == 1:
        cs = coalesce_fast(fs, fd)[0]
        S, D = coalesce_x_fast(fa)
    else:  # coalesce_x(A) is coalesce(A)
        S, D = cs, _ = coalesce_fast(fs, fd)
    C = complement_fast(fb, (tuple(cs) if len(cs) > 1 else cs[0]) if cs else 1)
    if C is None:
        return None
    bs = (B._shape, C._shape)
    bd = (B._stride, C._stride)
    if c_compose is not None and c_enabled():
        R = c_compose(A, Layout._make(bs, bd, True))  # compose_fast in C, where it is exact and chained
        if R is not None:
            return R
    fc = _flat_static(C)
    return compose_fast(S, D, bs, bd, (fb[0] + fc[0], fb[1] + fc[1]), lambda: (A, Layout._make(bs, bd)))


def logical_product_fast(A: Layout, fa: tuple[tuple, tuple], B: Layout, fb: tuple[tuple, tuple]) -> Layout | None:
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
    C = complement_fast(fa, _prod(fa[0]) * hi)
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
    R = compose_fast(C._shape, C._stride, B._shape, B._stride, fb, lambda: (C, B))  # type: ignore[arg-type]
    if R is None:
        return None
    P._shape = (A._shape, R._shape)
    P._stride = (A._stride, R._stride)
    return P


def left_inverse_fast(f: tuple[tuple, tuple]) -> Layout | None:
    """:func:`left_inverse` for a concrete layout with non-negative strides, or None (negative strides,
    or CuTe's divisibility condition fails: the reference words the error)."""
    S, D = coalesce_fast(f[0], f[1])
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
