"""The algebra's shared ground: reading operands (modes, rank-0 layouts, leaves), flat coalescing, and the
functional check of a composition (:class:`CompositionError`, :func:`cute_construction_only`).

Its public names are those two (re-exported by :mod:`layoutalg.algebra`); the rest are the algebra's own helpers,
called by its operations after they have read and checked their operands.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
from collections.abc import Iterator
from math import prod as _prod
from typing import Any, cast

import numpy as np

from .. import inttuple as it
from ..errors import LayoutError
from ..layout import Layout

__all__ = ["CompositionError", "cute_construction_only"]

_ENUM_LIMIT = 1 << 22  # largest size(B) checked by enumeration when the fast soundness test fails

#: False inside :func:`cute_construction_only`: composition returns CuTe's construction unchecked
FUNCTIONAL_CHECK: contextvars.ContextVar[bool] = contextvars.ContextVar("layoutalg_functional_check", default=True)


class CompositionError(LayoutError):
    """CuTe's mode-by-mode construction of ``lhs o rhs`` is not the composition: ``result(index)`` differs
    from ``lhs(rhs(index))``. CuTe would return ``result``; layoutalg refuses."""

    def __init__(self, message: str, lhs: Layout, rhs: Layout, result: Layout, index: int):
        super().__init__(message)
        self.lhs, self.rhs, self.result, self.index = lhs, rhs, result, index


@contextlib.contextmanager
def cute_construction_only() -> Iterator[None]:
    """Within this block composition returns CuTe's construction even where it is not the composition.

    For the conformance tests only: they show that what layoutalg refuses is exactly what CuTe builds."""
    token = FUNCTIONAL_CHECK.set(False)
    try:
        yield
    finally:
        FUNCTIONAL_CHECK.reset(token)


def dispatch(op: str, left: Any, *args: Any) -> Any:
    fn = getattr(left, "_algebra_", None)
    if fn is not None:
        r = fn(op, *args)
        if r is not NotImplemented:
            return r
    raise LayoutError(f"{op}: the left operand {left!r} is not a layout")


#: the rank-0 layout ``():()``: no modes, size 1, the function ``i -> 0`` (as ``1:0``, past its size too)
EMPTY = Layout._make((), (), True, ((), ()))
#: ``1:0``, what every operation reads a rank-0 layout as
UNIT = Layout._make(1, 0, True)


def no_modes(L: Layout) -> bool:
    """True for a layout without leaves: ``()``, ``((),())``, ... (rank 0 once flattened)."""
    return type(L._shape) is tuple and not L.flat[0]


def modes_of(L: Layout) -> list[Layout]:
    shape = L._shape
    if type(shape) is tuple:
        if L._static:  # the modes of a concrete layout are concrete; an int mode is its own flattening
            return [Layout._make(s, d, True, None if type(s) is tuple else ((s,), (d,)))
                    for s, d in zip(shape, cast(tuple, L._stride))]
        return [Layout._make(s, d) for s, d in zip(shape, cast(tuple, L._stride))]
    return [L]


def is_one(s: Any) -> bool:
    if type(s) is int:
        return s == 1
    try:
        return it.equal(s, 1)
    except LayoutError:
        return False


def is_zero(d: Any) -> bool:
    if type(d) is int:
        return d == 0
    try:
        return it.iszero(d)
    except LayoutError:
        return False


def provably_equal(a: Any, b: Any) -> bool:
    if type(a) is int and type(b) is int:
        return a == b
    try:
        return it.equal(a, b)
    except LayoutError:
        return False


def coalesce_flat_int(fs: tuple | list, fd: tuple | list) -> tuple[list, list]:
    """coalesce_flat for concrete ints."""
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


def coalesce_flat(fs: tuple | list, fd: tuple | list) -> tuple[list, list]:
    """Coalesce flat modes: drop size-1 modes, merge (s0:d0),(s1:d1) when s0*d0 == d1."""
    rs: list = []
    rd: list = []
    for s, d in zip(fs, fd):
        if type(s) is int:
            if s == 1:
                continue
        elif is_one(s):
            continue
        if rs:
            ps, pd = rs[-1], rd[-1]
            m = ps * pd
            if (m == d) if (type(m) is int and type(d) is int) else provably_equal(m, d):
                rs[-1] = ps * s
                continue
        rs.append(s)
        rd.append(d)
    return rs, rd


def iter_leaves(s: Any, d: Any):
    """Yield (shape, stride) leaf pairs of a congruent pair, in order."""
    if type(s) is not tuple:
        yield s, d
        return
    for x, y in zip(s, d):
        if type(x) is tuple:
            for x2, y2 in zip(x, y):
                if type(x2) is tuple:
                    yield from iter_leaves(x2, y2)
                else:
                    yield x2, y2
        else:
            yield x, y


def from_flat(rs: list, rd: list, static: bool | None = None) -> Layout:
    if not rs:
        return Layout._make(1, 0, True)
    if len(rs) == 1:
        return Layout._make(rs[0], rd[0], static)
    return Layout._make(tuple(rs), tuple(rd), static)




def no_carry(fs: tuple, fd: tuple) -> bool:
    """True iff B's non-trivial modes, sorted by stride, satisfy d[k] * s[k] | d[k+1] (no carries)."""
    modes = []
    symbolic = False
    for s, d in zip(fs, fd):
        if type(s) is int and type(d) is int:
            if s != 1 and d != 0:
                modes.append((d, s))
        elif not is_one(s) and not is_zero(d):
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


def cmp_first(x: Any, y: Any) -> int:
    """Order pairs by their (possibly symbolic) first element; LayoutError when undecidable."""
    return -1 if it.less(x[0], y[0]) else (0 if it.equal(x[0], y[0]) else 1)


def _no_carry_symbolic(modes: list) -> bool:
    try:
        modes = sorted(modes, key=functools.cmp_to_key(cmp_first))
        prev = modes[0][0] * modes[0][1]
        for d1, s1 in modes[1:]:
            if not it.divides(prev, d1):
                return False
            prev = d1 * s1
    except LayoutError:
        return False
    return True


def check_functional(A: Layout, B: Layout, R: Layout, force: bool = False) -> None:
    """Raise unless R(i) == A(B(i)) for all i < size(B) (a fast sufficient test, else enumeration).

    With ``force`` the fast test is skipped (a construction step was not exact)."""
    if not FUNCTIONAL_CHECK.get():
        return
    bs, bd = B.flat
    if not force and no_carry(bs, bd):
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
    bad = _first_mismatch(A, B, R)
    if bad >= 0:
        b = _eval_int(B, bad)
        raise CompositionError(
            f"composition: {A} o {B} is not a layout: the mode-by-mode result {R} gives {_eval_int(R, bad)} "
            f"at index {bad} but A(B({bad})) = A({b}) = {_eval_int(A, b)} "
            "(the right-hand layout is not injective, or its modes overlap in the left-hand coordinates, "
            "or it runs past the left-hand domain)",
            A, B, R, bad,
        )


@functools.lru_cache(maxsize=64)
def _first_mismatch(A: Layout, B: Layout, R: Layout) -> int:
    """The first ``i < size(B)`` with ``R(i) != A(B(i))``, or -1, by enumeration: int64 arrays where every
    number fits, residues where only A's and R's strides pass 64 bits, else Python ints. Cached: a
    check asked twice for the same three layouts (a kernel and its reference, a divide and the
    composition inside it) enumerates once."""
    n = B.size()
    if _fits_int64(A, B, R):
        bt = B.table()
        want = A._eval_array(bt)
        got = R.table()
        return int(np.nonzero(got != want)[0][0]) if not np.array_equal(got, want) else -1
    if 2 * _reach(B) < (1 << 62):
        return _first_residue_mismatch(A, B, R, B.table())
    return next((i for i in range(n) if _eval_int(R, i) != _eval_int(A, _eval_int(B, i))), -1)


def _reach(L: Layout) -> int:
    """The largest ``|L(i)|`` for ``i < size(L)`` (and of every partial sum of its terms)."""
    fs, fd = L.flat
    return sum((s - 1) * abs(d) for s, d in zip(fs, fd))


#: primes just below 2**31: residues of int64 coordinates and of any stride multiply without overflow
_PRIMES = (2147483647, 2147483629, 2147483587, 2147483579, 2147483563, 2147483549, 2147483543, 2147483497)


def _digits(L: Layout, idx: np.ndarray) -> list[tuple[np.ndarray, int]]:
    """``L(idx)`` as its terms: (coordinate array, stride) per flat mode, the last mode absorbing the
    overflow and a negative index split by truncation (as :meth:`Layout._eval_array` splits it)."""
    fs, fd = L.flat
    out = []
    rest = idx
    for k in range(len(fs) - 1):
        q = np.where(rest < 0, -((-rest) // fs[k]), rest // fs[k])
        out.append((rest - q * fs[k], fd[k]))
        rest = q
    if fs:
        out.append((rest, fd[-1]))
    return out


def _first_residue_mismatch(A: Layout, B: Layout, R: Layout, bt: np.ndarray) -> int:
    """The first ``i`` with ``R(i) != A(B(i))``, or -1, for int64 ``B(i)`` (``bt``) and strides of A and R
    of any size: both sides are compared modulo primes whose product exceeds twice their largest
    magnitude, so equal residues mean equal integers (Chinese remainder theorem)."""
    fs, fd = A.flat
    pre = _prod(fs[:-1]) if fs else 1
    bound = _reach(R) + (sum((s - 1) * abs(d) for s, d in zip(fs[:-1], fd[:-1]))
                         + (int(np.abs(bt).max(initial=0)) // pre + 1) * abs(fd[-1]) if fs else 0)
    lhs = _digits(A, bt)
    rhs = _digits(R, np.arange(bt.size, dtype=np.int64))
    bad = np.zeros(bt.size, dtype=bool)
    P = 1
    for p in _PRIMES:
        a = np.zeros(bt.size, dtype=np.int64)
        for c, d in lhs:
            a = (a + np.mod(c, p) * (d % p)) % p
        r = np.zeros(bt.size, dtype=np.int64)
        for c, d in rhs:
            r = (r + np.mod(c, p) * (d % p)) % p
        bad |= a != r
        P *= p
        if P > 2 * bound:
            break
    else:  # magnitudes past 2**247: the Python ints decide
        return next((i for i in range(bt.size) if _eval_int(R, i) != _eval_int(A, int(bt[i]))), -1)
    hits = np.nonzero(bad)[0]
    return int(hits[0]) if hits.size else -1


def _fits_int64(A: Layout, B: Layout, R: Layout) -> bool:
    """Every number the vectorized check computes -- ``B(i)``, ``R(i)`` for ``i < size(B)``, ``A`` at
    those offsets (its last mode absorbing the overflow, a negative index split by truncation) and
    every partial sum -- stays below 2**62 in magnitude, so int64 arithmetic is exact."""

    def reach(L: Layout) -> int:  # the largest |L(i)| for i < size(L), and of any partial sum
        fs, fd = L.flat
        return sum((s - 1) * abs(d) for s, d in zip(fs, fd))

    mb = reach(B)
    fs, fd = A.flat
    ma = 0
    if fs:
        pre = _prod(fs[:-1])
        ma = sum((s - 1) * abs(d) for s, d in zip(fs[:-1], fd[:-1])) + (mb // pre) * abs(fd[-1])
    bound = max(ma, mb, reach(R), _prod(B.flat[0]), _prod(R.flat[0]))
    return 2 * bound < (1 << 62)


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
