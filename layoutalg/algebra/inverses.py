"""complement, right_inverse and left_inverse."""

from __future__ import annotations

import functools
from math import prod as _prod
from typing import Any, overload

from .. import inttuple as it
from ..errors import LayoutError
from ..inttuple import flatten
from ..layout import Layout
from ..speedups import c_enabled, enabled
from .coalescing import coalesce, filter
from .core import cmp_first, coalesce_flat, coalesce_flat_int, dispatch, from_flat, is_zero, iter_leaves, provably_equal
from .kernels import c_complement, c_right_inverse, complement_fast, left_inverse_fast, rest_of_shape, static_flat_of

_new = Layout.__new__


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
    for s, d in (zip(*layout._flat) if layout._flat is not None else iter_leaves(layout.shape, layout.stride)):
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
    rest_shape = -(-cotarget // new_stride) if type(cotarget) is int else rest_of_shape(cotarget, new_stride)
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
    if len(fs) == 1 and is_zero(fd[0]):
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
            modes.sort(key=functools.cmp_to_key(cmp_first))
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
    return from_flat(*coalesce_flat(fs2, fd2)), exact


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
    if cotarget is None and enabled() and type(layout) is Layout and layout._static:
        # cosize(filter(L)) is cosize(L) for concrete L: dropped stride-0 and merged modes add nothing
        cotarget = layout.cosize()
    if type(layout) is Layout and type(cotarget) is int and layout._static and cotarget >= 1:
        if enabled():
            if c_complement is not None and c_enabled():
                r = c_complement(layout, cotarget)  # the kernel below, in C, for modes that fit in 64 bits
                if r is not None:
                    return r
            r = complement_fast(layout._flat or layout.flat, cotarget)
            if r is not None:
                return r
        return _complement_static(layout, cotarget, "complement")[0]
    if not isinstance(layout, Layout):
        return dispatch("complement", layout, cotarget)
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
    if c_right_inverse is not None and enabled() and c_enabled():
        R = c_right_inverse(layout)  # the kernel below, in C, for modes that fit in 64 bits
        if R is not None:
            return R
    if type(layout) is Layout and (layout._static or layout.is_static) and enabled():
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
        return dispatch("right_inverse", layout)
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
            if (d == nxt) if (type(d) is int and type(nxt) is int) else provably_equal(d, nxt):
                found = k
                break
        if found < 0:
            break
        used.add(found)
        s, d = fs[found], fd[found]
        shapes.append(s)
        strides.append(rstride[found])
        step = s * d
        if provably_equal(step, nxt):
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
    for s, d in (zip(*f) if f is not None else iter_leaves(layout.shape, layout.stride)):
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
    if type(layout) is Layout and enabled():
        f = static_flat_of(layout)
        if f is not None:
            R = left_inverse_fast(f)
            if R is not None:
                return R
    if not isinstance(layout, Layout):
        return dispatch("left_inverse", layout)
    if not layout.is_static:
        raise LayoutError(f"left_inverse: layout {layout} has symbolic strides (CuTe requires static strides)")
    S, D = coalesce_flat_int(*layout.flat)
    if not S:
        return Layout._make(1, 0, True)
    if any(d < 0 for d in D):
        if len(S) == 1:
            # x = d*i with d < 0: R(x) = -R'(-x) (CuTe splits a negative index with truncating division),
            # R' the left inverse of s:|d|
            s, d = S[0], D[0]
            return from_flat(*coalesce_flat_int([-d, s], [0, -1]), True)
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
    return from_flat(*coalesce_flat_int(shapes, strides), True)
