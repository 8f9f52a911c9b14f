"""The algebra's shared ground: reading operands (modes, rank-0 layouts, leaves), flat coalescing, and the
functional check of a composition (:class:`CompositionError`, :func:`cute_construction_only`)."""

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
