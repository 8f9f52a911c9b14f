"""Nested integer tuples: the shapes, strides and coordinates of layouts.

An *IntTuple* is either an integer leaf or a tuple of IntTuples, e.g. ``((8, 2), (4, 4))``.
Its *profile* is its nesting structure. A shape ``(s0, s1, ...)`` enumerates coordinates in
CuTe's colexicographic order: the leftmost mode moves fastest, and the 1-D index of a
coordinate ``(c0, c1, ...)`` is ``c0 + s0*(c1 + s1*(c2 + ...))``. For the shape ``(2, 3)``:

=====  ======
index  coord
=====  ======
0      (0, 0)
1      (1, 0)
2      (0, 1)
3      (1, 1)
4      (0, 2)
5      (1, 2)
=====  ======

    >>> idx2crd(5, (2, 3))
    (1, 2)
    >>> crd2idx((1, 2), (2, 3), (1, 2))
    5
    >>> prefix_product(((8, 2), (4, 4)))
    ((1, 8), (16, 64))
    >>> shape_div((4, 5, 6), 40)
    (1, 1, 3)

Leaves are Python ints or sympy integer expressions. This module is the one place that decides
what an integer leaf is (:func:`is_integer`, :func:`is_static`) and how leaves compare
(:func:`divides`, :func:`less`, :func:`equal`): the algebra never tests ``isinstance(x, int)``
itself, so symbolic shapes flow through it unchanged and an undecidable comparison becomes a
:class:`~layoutalg.errors.LayoutError` that names the condition.
"""

from __future__ import annotations

import functools
import numbers
from typing import Any, Union, cast
from collections.abc import Iterable

import sympy

from .errors import LayoutError

__all__ = [
    "IntTuple",
    "is_tuple",
    "is_integer",
    "is_static",
    "as_leaf",
    "flatten",
    "product",
    "product_each",
    "prefix_product",
    "compact_major",
    "inner_product",
    "idx2crd",
    "crd2idx",
    "shape_div",
    "ceil_div",
    "congruent",
    "compatible",
    "weakly_congruent",
    "rank",
    "depth",
    "unflatten",
    "divides",
    "less",
    "equal",
    "iszero",
    "leaf_min",
    "signum",
    "tuple_max",
]

IntTuple = Union[int, sympy.Expr, tuple]  # noqa: UP007 - a runtime alias, kept valid on 3.10

_INT = int


def is_tuple(x: Any) -> bool:
    """True iff ``x`` is a tuple node (not a leaf)."""
    return type(x) is tuple


def is_static(x: Any) -> bool:
    """True iff ``x`` is a concrete integer leaf (a Python int), i.e. no symbols."""
    return type(x) is _INT


def is_integer(x: Any) -> bool:
    """True iff ``x`` is an integer leaf: a Python int or an integer-valued sympy expression."""
    if type(x) is _INT:
        return True
    if isinstance(x, bool):
        return False
    if isinstance(x, sympy.Basic):
        return bool(getattr(x, "is_integer", False)) or x.is_number and x.is_integer is True
    try:
        import numpy as np

        return isinstance(x, np.integer)
    except ImportError:  # pragma: no cover
        return False


def as_leaf(x: Any, what: str = "leaf") -> Any:
    """Normalise an integer leaf: numpy ints and sympy Integers become ``int``; symbols stay.

    Raises LayoutError for anything that is not an integer.
    """
    if type(x) is _INT:
        return x
    if isinstance(x, bool):
        raise LayoutError(f"{what}: {x!r} is a bool, not an integer")
    if isinstance(x, sympy.Integer):
        return int(x)
    if isinstance(x, sympy.Basic):
        if x.is_integer is False or x.free_symbols == set() and not x.is_integer:
            raise LayoutError(f"{what}: {x!r} is not an integer expression")
        for s in x.free_symbols:
            if s.is_integer is not True:
                raise LayoutError(
                    f"{what}: symbol {s} in {x} must be declared integer "
                    f"(sympy.Symbol({str(s)!r}, integer=True, positive=True))"
                )
        return x
    try:
        import numpy as np

        if isinstance(x, np.integer):
            return int(x)
    except ImportError:  # pragma: no cover
        pass
    raise LayoutError(f"{what}: {x!r} is not an integer")


def normalize(t: Any, what: str = "IntTuple") -> IntTuple:
    """Normalise a nested tuple/list of integer leaves into tuples of normalised leaves."""
    if type(t) is _INT:
        return t
    if type(t) is tuple:
        for x in t:
            if type(x) is not _INT:
                break
        else:
            return t  # fast path: a flat tuple of ints is already normal
        return tuple(normalize(x, what) for x in t)
    if isinstance(t, list):
        return tuple(normalize(x, what) for x in t)
    return as_leaf(t, what)


# ---------------------------------------------------------------------------------------------
# Deciding comparisons of leaves (ints decide at once; symbolic leaves ask sympy)
# ---------------------------------------------------------------------------------------------


def _sym(x: Any, op: str) -> Any:
    """``x`` as a sympy value for the symbolic path of a leaf operation: an int (numpy's too) or a sympy expression,
    else a LayoutError naming ``op`` (text is never handed to sympy: it would be evaluated)."""
    if isinstance(x, sympy.Basic) or (isinstance(x, numbers.Integral) and not isinstance(x, bool)):
        return sympy.sympify(x)
    raise LayoutError(f"{op}: {x!r} is not an integer (an int or an integer sympy expression)")


def _junk(op: str, args: tuple, e: Exception) -> LayoutError:
    """The LayoutError of an IntTuple operation whose arguments broke it (the way :func:`layoutalg.errors.guarded`
    words it; here inline, where a wrapper would cost every call of a hot function)."""
    shown = ", ".join(repr(a)[:80] for a in args)
    return LayoutError(f"{op}: bad arguments ({shown}): {type(e).__name__}: {e}")


def _decide(expr: Any, condition: str) -> bool:
    if expr is True or expr is sympy.true:
        return True
    if expr is False or expr is sympy.false:
        return False
    raise LayoutError(f"cannot decide {condition} for symbolic values")


def divides(a: Any, b: Any) -> bool:
    """True iff ``a`` divides ``b`` (``b % a == 0``); ``a == 0`` divides only 0."""
    if type(a) is _INT and type(b) is _INT:
        return b == 0 if a == 0 else b % a == 0
    if equal(a, 0):
        return equal(b, 0)
    q = sympy.simplify(_sym(b, "divides") / _sym(a, "divides"))
    if q.is_integer is True:
        return True
    r = sympy.Mod(_sym(b, "divides"), _sym(a, "divides"))
    if r == 0:
        return True
    if r.is_zero is False or (q.is_integer is False):
        return False
    raise LayoutError(f"cannot decide whether {a} divides {b} for symbolic values")


def less(a: Any, b: Any) -> bool:
    """Decide ``a < b``."""
    if type(a) is _INT and type(b) is _INT:
        return a < b
    return _decide(_sym(a, "less") < _sym(b, "less"), f"{a} < {b}")


def equal(a: Any, b: Any) -> bool:
    """Decide ``a == b``."""
    if type(a) is _INT and type(b) is _INT:
        return a == b
    r = _difference_is_zero(_sym(a, "equal") - _sym(b, "equal"))
    if r is None:
        raise LayoutError(f"cannot decide {a} == {b} for symbolic values")
    return r


@functools.lru_cache(maxsize=4096)
def _difference_is_zero(diff: Any) -> bool | None:
    """Whether the sympy expression ``diff`` is 0 (True), provably not 0 (False), or undecided (None). Cached:
    a pure function of the expression, asked again and again by the algebra on the same symbolic strides."""
    d = sympy.simplify(diff)
    if d == 0:
        return True
    if d.is_zero is False:
        return False
    return None


def iszero(a: Any) -> bool:
    """Decide ``a == 0``."""
    if type(a) is _INT:
        return a == 0
    return equal(a, 0)


def leaf_min(a: Any, b: Any) -> Any:
    """min(a, b) of two leaves."""
    if type(a) is _INT and type(b) is _INT:
        return a if a < b else b
    if a == 1 or b == 1:
        return 1
    if divides(a, b):
        return a
    if divides(b, a):
        return b
    return a if less(a, b) or equal(a, b) else b


def signum(a: Any) -> int:
    """The sign of a leaf: -1, 0 or 1."""
    if type(a) is _INT:
        return (a > 0) - (a < 0)
    if iszero(a):
        return 0
    return 1 if less(0, a) else -1


def _abs(a: Any) -> Any:
    if type(a) is _INT:
        return -a if a < 0 else a
    return a if signum(a) >= 0 else -a


def _floordiv(a: Any, b: Any) -> Any:
    if type(a) is _INT and type(b) is _INT:
        return a // b
    q = _sym(a, "floordiv") / _sym(b, "floordiv")
    q = sympy.simplify(q)
    if q.is_integer:
        return as_leaf(q)
    return as_leaf(sympy.floor(q))


# ---------------------------------------------------------------------------------------------
# Structure
# ---------------------------------------------------------------------------------------------


def flatten(t: IntTuple) -> tuple:
    """All leaves of ``t`` in order, as a flat tuple; a leaf gives a 1-tuple.

    >>> flatten(((8, 2), (4, 4)))
    (8, 2, 4, 4)
    """
    if type(t) is not tuple:
        return (t,)
    out: list = []
    for x in t:
        if type(x) is tuple:
            for y in x:
                if type(y) is tuple:
                    out.extend(flatten(y))
                else:
                    out.append(y)
        else:
            out.append(x)
    return tuple(out)


def unflatten(flat: Iterable, profile: IntTuple) -> IntTuple:
    """Rebuild the nesting of ``profile`` from a flat sequence of leaves.

    >>> unflatten((1, 2, 3), ((0, 0), 0))
    ((1, 2), 3)
    """
    try:
        it = iter(flat)
    except TypeError:
        raise LayoutError(f"unflatten: the leaves {flat!r} are not a sequence") from None

    def go(p):
        if type(p) is tuple:
            return tuple(go(x) for x in p)
        return next(it)

    try:
        out = go(profile)
    except StopIteration:
        raise LayoutError(f"unflatten: too few leaves {tuple(flat)!r} for profile {profile!r}") from None
    return out


def rank(t: IntTuple) -> int:
    """Number of top-level modes (1 for a leaf)."""
    return len(t) if type(t) is tuple else 1


def depth(t: IntTuple) -> int:
    """Nesting depth: 0 for a leaf, 1 for a flat tuple, ..."""
    if type(t) is not tuple:
        return 0
    return 1 + max((depth(x) for x in t), default=0)


def product(t: IntTuple) -> Any:
    """Product of all leaves (1 for an empty tuple).

    >>> product(((8, 2), (4, 4)))
    256
    """
    if type(t) is not tuple:
        return t
    p = 1
    for x in flatten(t):
        p = p * x
    return p


def product_each(t: IntTuple) -> IntTuple:
    """The product of each top-level mode."""
    if type(t) is not tuple:
        return t
    return tuple(product(x) for x in t)


def inner_product(a: IntTuple, b: IntTuple) -> Any:
    """Sum of products of corresponding leaves of congruent ``a`` and ``b``."""
    if type(a) is tuple:
        if type(b) is not tuple:
            raise LayoutError(f"inner_product: {b!r} is not congruent with {a!r}")
        s: Any = 0
        for x, y in zip(a, b):
            s = s + inner_product(x, y)
        return s
    try:
        return cast(Any, a) * b
    except TypeError as e:
        raise _junk("inner_product", (a, b), e) from e


def prefix_product(t: IntTuple, init: Any = 1) -> IntTuple:
    """Exclusive prefix products of the leaves, in colexicographic order (CuTe's LayoutLeft strides).

    >>> prefix_product((2, (3, 4)))
    (1, (2, 6))
    """
    if type(t) is not tuple:
        return init
    flat = flatten(t)
    out = []
    p = init
    for x in flat:
        out.append(p)
        p = p * x
    return unflatten(out, t)


def compact_major(t: IntTuple, init: Any = 1, right: bool = False) -> IntTuple:
    """CuTe's compact strides (``compact_major<LayoutLeft>``, or LayoutRight with ``right``).

    Prefix (suffix) products of the leaves, except that a leaf of extent 1 gets stride 0, as in
    CuTe's ``compact``: a size-1 mode never moves, so its stride is 0.

    >>> compact_major((2, (1, 4))), compact_major((2, (1, 4)), right=True), compact_major(1)
    ((1, (0, 2)), (4, (0, 1)), 0)
    """
    flat = flatten(t) if type(t) is tuple else (t,)
    out = [0] * len(flat)
    p = init
    order = range(len(flat) - 1, -1, -1) if right else range(len(flat))
    for k in order:
        x = flat[k]
        if type(x) is _INT and x == 1:  # a symbolic extent is never known to be 1 (CuTe: dynamic)
            out[k] = 0
        else:
            out[k] = p
            if type(x) is not _INT:
                x = as_leaf(x, "compact_major")
            p = p * x
    return unflatten(out, t) if type(t) is tuple else out[0]


def suffix_product(t: IntTuple, init: Any = 1) -> IntTuple:
    """Exclusive suffix products of the leaves (CuTe's LayoutRight, row-major strides).

    >>> suffix_product((2, (3, 4)))
    (12, (4, 1))
    """
    if type(t) is not tuple:
        return init
    flat = flatten(t)
    out = []
    p = init
    for x in reversed(flat):
        out.append(p)
        p = p * x
    return unflatten(reversed(out), t)


def tuple_max(t: IntTuple) -> Any:
    """Largest leaf."""
    flat = flatten(t)
    if not flat:
        raise LayoutError(f"tuple_max: {t!r} has no leaves")
    m = flat[0]
    for x in flat[1:]:
        if less(m, x):
            m = x
    return m


def congruent(a: IntTuple, b: IntTuple) -> bool:
    """True iff ``a`` and ``b`` have the same profile (nesting)."""
    if type(a) is tuple and type(b) is tuple:
        return len(a) == len(b) and all(congruent(x, y) for x, y in zip(a, b))
    return type(a) is not tuple and type(b) is not tuple


def weakly_congruent(a: IntTuple, b: IntTuple) -> bool:
    """True iff the profile of ``a`` is a coarsening of that of ``b`` (a leaf of ``a`` may face a tuple)."""
    if type(a) is tuple and type(b) is tuple:
        return len(a) == len(b) and all(weakly_congruent(x, y) for x, y in zip(a, b))
    return type(a) is not tuple


def compatible(a: IntTuple, b: IntTuple) -> bool:
    """True iff shape ``a`` is compatible with ``b``: same size, and every coordinate of ``a`` is one of ``b``.

    >>> compatible(24, (4, 6)), compatible((4, 6), (4, (2, 3))), compatible((4, 6), (6, 4))
    (True, True, False)
    """
    if type(a) is tuple and type(b) is tuple:
        return len(a) == len(b) and all(compatible(x, y) for x, y in zip(a, b))
    if type(a) is not tuple:
        pb = product(b)
        if type(a) is _INT and type(pb) is _INT:
            return a == pb
        try:
            return equal(a, pb)
        except LayoutError:
            return False
    return False


# ---------------------------------------------------------------------------------------------
# Arithmetic on shapes
# ---------------------------------------------------------------------------------------------


def shape_div(a: IntTuple, b: IntTuple) -> IntTuple:
    """Shape division, CuTe's ``shape_div``.

    - tuple / tuple: element-wise;
    - tuple / int: fold the division of ``b`` across the modes of ``a``
      (``shape_div((4,5,6), 40) = (1,1,3)``);
    - int / tuple: ``a / product(b)``;
    - int / int: requires ``a % b == 0 or b % a == 0``; returns ``a / b`` rounded away from 0
      (that is 1, or -1, when ``|a| < |b|``).
    """
    if type(a) is tuple:
        if type(b) is tuple:
            if len(a) != len(b):
                raise LayoutError(f"shape_div: ranks of {a} and {b} differ")
            return tuple(shape_div(x, y) for x, y in zip(a, b))
        out = []
        rest = b
        for x in a:
            out.append(shape_div(x, rest))
            rest = shape_div(rest, x)
        return tuple(out)
    if type(b) is tuple:
        return shape_div(a, product(b))
    if type(a) is _INT and type(b) is _INT:
        if b == 0:
            raise LayoutError(f"shape_div: division of {a} by 0")
        if a % b != 0 and (a == 0 or b % a != 0):
            raise LayoutError(f"shape_div: neither of {a} and {b} divides the other")
        q = abs(a) // abs(b)
        if q == 0:
            q = 1
        return q if (a >= 0) == (b > 0) else -q
    if iszero(b):
        raise LayoutError(f"shape_div: division of {a} by 0")
    if b == 1:
        return a
    if a == 1:
        return signum(b)

    def _try(x: Any, y: Any) -> bool | None:
        try:
            return divides(x, y)
        except LayoutError:
            return None

    ba = _try(b, a)
    if ba:
        return _floordiv(a, b) if signum(a) * signum(b) >= 0 else -_floordiv(_abs(a), _abs(b))
    ab = _try(a, b)
    if ab:
        return signum(a) * signum(b)
    if ba is None or ab is None:
        raise LayoutError(f"shape_div: cannot decide whether {a} and {b} divide one another for symbolic values")
    raise LayoutError(f"shape_div: neither of {a} and {b} divides the other")


def ceil_div(a: IntTuple, b: IntTuple) -> IntTuple:
    """Ceiling division, CuTe's ``ceil_div``: element-wise for tuples, folded for tuple / int.

    >>> ceil_div(10, 4), ceil_div((4, 6), 8)
    (3, (1, 3))
    """
    if type(a) is tuple:
        if type(b) is tuple:
            if len(a) < len(b):
                raise LayoutError(f"ceil_div: rank of {b} exceeds rank of {a}")
            bb = b + (1,) * (len(a) - len(b))
            return tuple(ceil_div(x, y) for x, y in zip(a, bb))
        out = []
        rest = b
        for x in a:
            out.append(ceil_div(x, rest))
            rest = ceil_div(rest, x)
        return tuple(out)
    if type(b) is tuple:
        return ceil_div(a, product(b))
    if type(a) is _INT and type(b) is _INT:
        if b == 0:
            raise LayoutError(f"ceil_div: division of {a} by 0")
        return -((-a) // b)
    if iszero(b):
        raise LayoutError(f"ceil_div: division of {a} by 0")
    if divides(b, a):
        return _floordiv(a, b)
    return as_leaf(sympy.ceiling(_sym(a, "ceil_div") / _sym(b, "ceil_div")))


# ---------------------------------------------------------------------------------------------
# Coordinates
# ---------------------------------------------------------------------------------------------


def idx2crd(idx: Any, shape: IntTuple) -> IntTuple:
    """The coordinate of 1-D index ``idx`` in ``shape`` (colexicographic; the last mode takes the rest).

    A tuple ``idx`` is split mode by mode.

    >>> idx2crd(7, ((2, 2), 3))
    ((1, 1), 1)
    """
    if type(idx) is tuple:
        if type(shape) is not tuple or len(idx) != len(shape):
            raise LayoutError(f"idx2crd: coordinate {idx} is not congruent with shape {shape}")
        return tuple(idx2crd(i, s) for i, s in zip(idx, shape))
    if type(shape) is not tuple:
        return idx
    out = []
    n = len(shape)
    for k, s in enumerate(shape):
        if k == n - 1:
            out.append(idx2crd(idx, s))
        else:
            ps = product(s)
            out.append(idx2crd(idx % ps, s))
            idx = idx // ps
    return tuple(out)


def crd2idx(crd: Any, shape: IntTuple, stride: IntTuple) -> Any:
    """Offset of coordinate ``crd`` under ``shape:stride``: the inner product of coordinate and stride.

    ``crd`` may be a 1-D index, or a (partially) nested coordinate: an integer facing a tuple mode
    is first split colexicographically within that mode.

    >>> crd2idx((1, 2), (4, 8), (8, 1))
    10
    >>> crd2idx(5, (4, 8), (8, 1))
    9
    """
    try:
        if type(crd) is tuple:
            if type(shape) is not tuple or len(crd) != len(shape):
                raise LayoutError(f"crd2idx: coordinate {crd} is not congruent with shape {shape}")
            s: Any = 0
            for c, sh, st in zip(crd, shape, cast(tuple, stride)):
                s = s + crd2idx(c, sh, st)
            return s
        if type(shape) is tuple:
            strides = cast(tuple, stride)
            s = 0
            n = len(shape)
            for k in range(n):
                if k == n - 1:
                    s = s + crd2idx(crd, shape[k], strides[k])
                else:
                    ps = product(shape[k])
                    s = s + crd2idx(crd % ps, shape[k], strides[k])
                    crd = crd // ps
            return s
        return crd * stride
    except (TypeError, IndexError, AttributeError, KeyError) as e:  # junk: a non-number, a stride of the wrong shape
        raise _junk("crd2idx", (crd, shape, stride), e) from e
