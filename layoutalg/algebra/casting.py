"""max_common_layout/vector, upcast/downcast/recast_layout, nullspace and with_shape."""

from __future__ import annotations

from math import gcd
from math import prod as _prod
from typing import Any, overload

from .. import inttuple as it
from ..errors import LayoutError
from ..inttuple import flatten
from ..layout import Layout
from .coalescing import coalesce
from .composing import composition
from .core import dispatch, is_one, is_zero
from .inverses import right_inverse

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
        return dispatch("max_common_layout", a, b)
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
        return dispatch("max_common_vector", a, b)
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
        return dispatch("upcast", layout, n)
    n = _cast_factor(n, "upcast")
    # the modes that shrink (0 < |stride| < N, size > 1) share the vectors: sound when they are one run
    # of positive strides that chain (d_{k+1} == d_k * s_k once sorted), each dividing N
    small = sorted((d, s) for s, d in zip(*layout.flat)
                   if type(d) is int and d != 0 and -n < d < n and not is_one(s))
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
        if is_zero(d):
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
    ``N*L(i) + r`` for ``r < N``. A stride -1 mode ``s:-1`` becomes ``(N,s):(1,-N)``, a lone one
    included. (CuTe grows every mode of stride ±1, size-1 ones included, and ``s:-1`` to ``s*N:-1``;
    neither is ``L`` in smaller units.) Precondition: some mode has stride 1 or -1 (adjacent
    elements; CuTe asks for stride +1).

    >>> str(downcast(Layout((4, 16), (1, 4)), 2))
    '(8,16):(1,8)'
    >>> str(downcast(Layout((1, 2), (1, 1)), 2)), str(downcast(Layout((4, 1), (-1, 1)), 2))
    ('(1,4):(2,1)', '((2,4),1):((1,-2),2)')
    >>> str(downcast(Layout(2, -1), 2))
    '(2,2):(1,-2)'
    """
    if not isinstance(layout, Layout):
        return dispatch("downcast", layout, n)
    n = _cast_factor(n, "downcast")
    fs, fd = layout.flat
    units = [k for k, d in enumerate(fd) if type(d) is int and d in (1, -1)]
    if not units:  # adjacent elements: a mode of stride +1 (CuTe's precondition) or -1
        raise LayoutError(
            f"downcast: layout {layout} has no stride-1 (or stride -1) mode (downcast requires adjacent elements)"
        )
    grow = next((k for k in units if not is_one(fs[k])), units[0])
    leaf = [0]

    def go(s, d):
        if type(s) is tuple:
            pairs = [go(x, y) for x, y in zip(s, d)]
            return tuple(p[0] for p in pairs), tuple(p[1] for p in pairs)
        k = leaf[0]
        leaf[0] += 1
        if k != grow:
            return s, d * n
        if d == 1 or is_one(s):
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
        return dispatch("nullspace", layout)
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
