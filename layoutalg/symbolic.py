"""Symbolic integers for layouts and hand formulas.

PTX writes its fragment maps with C-like integer operators: ``%laneid >> 2``,
``i & 0b10``, ``(%laneid % 4) + 4``. This module provides those operators as
functions that work the same on Python ints, numpy arrays and sympy
expressions, so one formula can be evaluated, enumerated and reasoned about::

    >>> from sympy import Symbol
    >>> bitand(6, 0b10), shr(13, 2), shl(3, 4), bitxor(5, 3), bitor(4, 1)
    (2, 3, 48, 6, 5)
    >>> lane = Symbol("lane", integer=True, nonnegative=True)
    >>> shr(lane, 2)
    shr(lane, 2)
    >>> shr(lane, 2).subs(lane, 29)
    7
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

import numpy as np
import sympy

from .errors import LayoutError, guarded

__all__ = ["bitand", "bitor", "bitxor", "shr", "shl"]


def _is_array(x: Any) -> bool:
    return isinstance(x, np.ndarray)


def _concrete(x: Any) -> int | None:
    """The Python int value of ``x`` if it is a concrete integer, else None."""
    if isinstance(x, (int, np.integer)) and not isinstance(x, bool):
        return int(x)
    if isinstance(x, sympy.Integer):
        return int(x)
    return None


class _BitFunction(sympy.Function):
    """A sympy function that evaluates on concrete integers and stays symbolic otherwise."""

    is_integer = True
    _op: Any = None

    @classmethod
    def eval(cls, a, b):  # noqa: D102 - sympy protocol
        ia, ib = _concrete(a), _concrete(b)
        if ia is not None and ib is not None:
            return sympy.Integer(cls._op(ia, ib))
        return None

    def _eval_is_nonnegative(self):
        a, b = self.args
        if a.is_nonnegative and b.is_nonnegative:
            return True
        return None


def _expr(x: Any, op: str) -> Any:
    """``x`` as a sympy object, strictly: text is refused (sympify would evaluate it as Python; read formula
    text with :func:`layoutalg.formula.parse_formula`)."""
    if isinstance(x, str):
        raise LayoutError(f"{op}: {x!r} is text; give an int or a sympy expression (formula text is read by "
                          "layoutalg.formula.parse_formula)")
    try:
        return sympy.sympify(x, strict=True)
    except (sympy.SympifyError, TypeError) as e:
        raise LayoutError(f"{op}: {x!r} is not an int or a sympy expression") from e


#: the largest shift count shl / shr take on Python ints (a larger one would build an integer of that many bits)
_MAX_SHIFT = 1 << 16


def _binary(name: str, op, np_op, doc: str):
    fn_cls = type(name, (_BitFunction,), {"_op": staticmethod(op), "__module__": __name__})

    def apply(a: Any, b: Any) -> Any:
        if _is_array(a) or _is_array(b):
            return np_op(np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64))
        ia, ib = _concrete(a), _concrete(b)
        if ia is not None and ib is not None:
            if name in ("shl", "shr") and not 0 <= ib <= _MAX_SHIFT:
                raise LayoutError(f"{name}({a}, {b}): the shift count is outside [0, {_MAX_SHIFT}]")
            return op(ia, ib)
        return fn_cls(_expr(a, name), _expr(b, name))

    apply.__name__ = name
    apply.__qualname__ = name
    apply.__doc__ = doc
    apply.sympy_function = fn_cls  # type: ignore[attr-defined]
    apply.numpy_function = np_op  # type: ignore[attr-defined]
    return apply


bitand = _binary("bitand", lambda a, b: a & b, np.bitwise_and, "bitand(a, b) = a & b (C's bitwise and).")
bitor = _binary("bitor", lambda a, b: a | b, np.bitwise_or, "bitor(a, b) = a | b (C's bitwise or).")
bitxor = _binary("bitxor", lambda a, b: a ^ b, np.bitwise_xor, "bitxor(a, b) = a ^ b (C's bitwise xor).")
shr = _binary("shr", lambda a, b: a >> b, np.right_shift, "shr(a, b) = a >> b (arithmetic shift right).")
shl = _binary("shl", lambda a, b: a << b, np.left_shift, "shl(a, b) = a << b (shift left).")

#: sympy function classes of the bit helpers, by name: for ``lambdify`` module maps.
BIT_FUNCTIONS = {f.__name__: f for f in (bitand, bitor, bitxor, shr, shl)}


def _int_args(fn):
    def wrapped(a, b):
        return fn(np.asarray(a).astype(np.int64), np.asarray(b).astype(np.int64))

    wrapped.__name__ = fn.__name__
    return wrapped


#: numpy implementations of the bit helpers for ``sympy.lambdify(..., modules=[NUMPY_FUNCTIONS, "numpy"])``;
#: arguments are cast to int64 first (``floor`` of a division comes back from numpy as a float).
NUMPY_FUNCTIONS = {name: _int_args(f.numpy_function) for name, f in BIT_FUNCTIONS.items()}


@guarded
def lambdify_numpy(inputs, exprs):
    """A vectorized numpy function of ``inputs`` returning the list of ``exprs`` (bit helpers included).

    >>> import numpy as np
    >>> lane = sympy.Symbol("lane", integer=True, nonnegative=True)
    >>> f = lambdify_numpy((lane,), [shr(lane, 2), bitand(lane, 3)])
    >>> [np.asarray(v).tolist() for v in f(np.arange(6))]
    [[0, 0, 0, 0, 1, 1], [0, 1, 2, 3, 0, 1]]
    """
    # NumPy's printer with an explicit namespace: the same code as modules="numpy", without the
    # ``from numpy import *`` that sympy runs on first use (a one-off ~0.15 s per process)
    from sympy.printing.numpy import NumPyPrinter

    exprs = [_expr(e, "lambdify_numpy") for e in exprs]  # text would be printed into the generated code
    for x in inputs:
        if not isinstance(x, sympy.Symbol):
            raise LayoutError(f"lambdify_numpy: input {x!r} is not a sympy Symbol")
    namespace = dict(NUMPY_FUNCTIONS, numpy=np)
    printer = NumPyPrinter({"fully_qualified_modules": True, "inline": True, "allow_unknown_functions": True,
                            "user_functions": {}})
    return sympy.lambdify(tuple(inputs), list(exprs), modules=[namespace], printer=printer)


__all__ += ["BIT_FUNCTIONS", "NUMPY_FUNCTIONS", "lambdify_numpy"]


# ---------------------------------------------------------------------------------------------
# exact vectorized evaluation of formulas (what verify compares a layout against)
# ---------------------------------------------------------------------------------------------

_INT64 = (-(1 << 63), (1 << 63) - 1)

#: what :func:`exact_evaluator` evaluates; anything else in a formula is a LayoutError naming it
SUPPORTED = ("integers and rationals, +, *, ** (integer exponents), Mod (%), floor (//), ceiling, Min, Max, Abs, "
             "sign, Piecewise, comparisons, And/Or/Not/Xor, bitand, bitor, bitxor, shr, shl")


class ExactValues:
    """A formula's values at many points, exactly: ``num / den`` (``den > 0``), undefined where ``bad``."""

    __slots__ = ("num", "den", "bad")

    def __init__(self, num: Any, den: Any = 1, bad: Any = None):
        self.num, self.den, self.bad = num, den, bad

    def integers(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        """(values as int64, mask of the points where the value is a defined integer), both of length n."""
        num = np.broadcast_to(np.asarray(self.num, dtype=np.int64), (n,))
        ok = np.ones(n, dtype=bool) if self.bad is None else ~np.broadcast_to(self.bad, (n,))
        if type(self.den) is not int or self.den != 1:
            den = np.broadcast_to(np.asarray(self.den, dtype=np.int64), (n,))
            ok = ok & (den == 1)
        return num, ok

    def at(self, k: int) -> Any:
        """The value at point k: an int, a Fraction, or 'undefined'."""
        if self.bad is not None and _item(self.bad, k):
            return "undefined"
        num, den = int(_item(self.num, k)), int(_item(self.den, k))
        return num if den == 1 else Fraction(num, den)


def _item(x: Any, k: int) -> Any:
    a = np.asarray(x)
    return a.item() if a.ndim == 0 else a[k].item()


def _or(a: Any, b: Any) -> Any:
    if a is None:
        return b
    if b is None:
        return a
    return a | b


def _reduce(num: Any, den: Any, bad: Any) -> ExactValues:
    if type(den) is int and den == 1:
        return ExactValues(num, 1, bad)
    g = np.gcd(num, den)
    g = np.where(g == 0, 1, g)
    return ExactValues(num // g, den // g, bad)


def _unsupported(e: Any, why: str = "") -> LayoutError:
    return LayoutError(
        f"verify: the formula uses {type(e).__name__} ({e}){why}, which verify does not evaluate; supported: {SUPPORTED}"
    )


def _compile_bool(e: Any, pos: dict) -> Callable[[Sequence[np.ndarray]], tuple[Any, Any]]:
    """A closure computing (truth values, undefined mask) of a condition."""
    if e is sympy.true or e is True:
        return lambda env: (True, None)
    if e is sympy.false or e is False:
        return lambda env: (False, None)
    rel = {sympy.StrictLessThan: np.less, sympy.LessThan: np.less_equal, sympy.StrictGreaterThan: np.greater,
           sympy.GreaterThan: np.greater_equal, sympy.Equality: np.equal, sympy.Unequality: np.not_equal}
    for cls, op in rel.items():
        if isinstance(e, cls):
            fa, fb = _compile(e.args[0], pos), _compile(e.args[1], pos)

            def compare(env: Sequence[np.ndarray], fa: Any = fa, fb: Any = fb, op: Any = op) -> tuple[Any, Any]:
                a, b = fa(env), fb(env)
                return op(a.num * b.den, b.num * a.den), _or(a.bad, b.bad)

            return compare
    if isinstance(e, (sympy.And, sympy.Or, sympy.Xor)):
        parts = [_compile_bool(a, pos) for a in e.args]
        op2 = {sympy.And: np.logical_and, sympy.Or: np.logical_or, sympy.Xor: np.logical_xor}[type(e)]

        def combine(env: Sequence[np.ndarray]) -> tuple[Any, Any]:
            v, bad = parts[0](env)
            for p in parts[1:]:
                w, b2 = p(env)
                v, bad = op2(v, w), _or(bad, b2)
            return v, bad

        return combine
    if isinstance(e, sympy.Not):
        inner = _compile_bool(e.args[0], pos)

        def negate(env: Sequence[np.ndarray]) -> tuple[Any, Any]:
            v, bad = inner(env)
            return np.logical_not(v), bad

        return negate
    raise _unsupported(e, " as a condition")


def _compile(e: Any, pos: dict) -> Callable[[Sequence[np.ndarray]], ExactValues]:
    """A closure computing the exact values of ``e`` from the input arrays (``pos``: symbol -> index)."""
    if isinstance(e, (bool, sympy.logic.boolalg.Boolean)) and not isinstance(e, sympy.Symbol):
        cond = _compile_bool(e, pos)

        def as_int(env: Sequence[np.ndarray]) -> ExactValues:
            v, bad = cond(env)
            return ExactValues(np.asarray(v, dtype=np.int64), 1, bad)

        return as_int
    if e.is_Integer:
        v = int(e)
        if not _INT64[0] <= v <= _INT64[1]:
            raise LayoutError(f"verify: the constant {v} in the formula does not fit in 64 bits")
        return lambda env: ExactValues(v, 1, None)
    if e.is_Rational:
        p, q = int(e.p), int(e.q)
        return lambda env: ExactValues(p, q, None)
    if e.is_Number or e.is_NumberSymbol:
        raise _unsupported(e, " (not an exact integer or rational)")
    if e.is_Symbol:
        if e not in pos:
            names = ", ".join(str(s) for s in pos)
            raise LayoutError(f"verify: symbol {e} in the formula is not one of the inputs ({names}); "
                              "give it as an input or substitute a value")
        k = pos[e]
        return lambda env: ExactValues(env[k], 1, None)
    args = [_compile(a, pos) for a in e.args] if not isinstance(e, sympy.Piecewise) else []
    if e.is_Add or e.is_Mul:
        add = e.is_Add

        def fold(env: Sequence[np.ndarray]) -> ExactValues:
            acc = args[0](env)
            for f in args[1:]:
                b = f(env)
                bad = _or(acc.bad, b.bad)
                if type(acc.den) is int and acc.den == 1 and type(b.den) is int and b.den == 1:
                    acc = ExactValues(acc.num + b.num if add else acc.num * b.num, 1, bad)
                elif add:
                    acc = _reduce(acc.num * b.den + b.num * acc.den, acc.den * b.den, bad)
                else:
                    acc = _reduce(acc.num * b.num, acc.den * b.den, bad)
            return acc

        return fold
    if e.is_Pow:
        fb, fx = args
        ex = e.args[1]
        if ex.is_Integer:
            n = int(ex)

            def power(env: Sequence[np.ndarray]) -> ExactValues:
                b = fb(env)
                if n >= 0:
                    return ExactValues(b.num**n, b.den**n if not (type(b.den) is int and b.den == 1) else 1, b.bad)
                zero = np.asarray(b.num) == 0
                sgn = np.where(np.asarray(b.num) < 0, -1, 1)
                num = np.where(zero, 0, (sgn**-n) * np.asarray(b.den) ** -n)
                den = np.where(zero, 1, np.abs(np.asarray(b.num)) ** -n)
                return _reduce(num, den, _or(b.bad, zero if zero.any() else None))

            return power

        def int_power(env: Sequence[np.ndarray]) -> ExactValues:
            b, x = fb(env), fx(env)
            bn, bok = b.num, b.den
            neg = np.asarray(x.num) < 0
            exp = np.where(neg, 0, x.num)
            bad = _or(_or(b.bad, x.bad), neg | (np.asarray(x.den) != 1) | (np.asarray(bok) != 1))
            return ExactValues(np.power(np.asarray(bn, dtype=np.int64), exp), 1, bad)

        return int_power
    if isinstance(e, sympy.Mod):
        fa, fm = args

        def mod(env: Sequence[np.ndarray]) -> ExactValues:
            a, m = fa(env), fm(env)
            an, mn = a.num * m.den, m.num * a.den
            zero = np.asarray(mn) == 0
            r = np.mod(an, np.where(zero, 1, mn))
            bad = _or(a.bad, m.bad)
            if np.any(zero):
                bad = _or(bad, zero)
            return _reduce(r, a.den * m.den, bad)

        return mod
    if isinstance(e, (sympy.floor, sympy.ceiling)):
        (fa,) = args
        up = isinstance(e, sympy.ceiling)

        def rnd(env: Sequence[np.ndarray]) -> ExactValues:
            a = fa(env)
            if type(a.den) is int and a.den == 1:
                return a
            return ExactValues(-((-a.num) // a.den) if up else a.num // a.den, 1, a.bad)

        return rnd
    if isinstance(e, (sympy.Min, sympy.Max)):
        pick = np.less_equal if isinstance(e, sympy.Min) else np.greater_equal

        def extreme(env: Sequence[np.ndarray]) -> ExactValues:
            acc = args[0](env)
            for f in args[1:]:
                b = f(env)
                keep = pick(acc.num * b.den, b.num * acc.den)
                acc = ExactValues(np.where(keep, acc.num, b.num), np.where(keep, acc.den, b.den), _or(acc.bad, b.bad))
            return acc

        return extreme
    if isinstance(e, sympy.Abs):
        (fa,) = args
        return lambda env: (lambda a: ExactValues(np.abs(a.num), a.den, a.bad))(fa(env))
    if isinstance(e, sympy.sign):
        (fa,) = args
        return lambda env: (lambda a: ExactValues(np.sign(a.num), 1, a.bad))(fa(env))
    if isinstance(e, sympy.Piecewise):
        branches = [(_compile(v, pos), _compile_bool(c, pos)) for v, c in e.args]

        def piecewise(env: Sequence[np.ndarray]) -> ExactValues:
            num: Any = 0
            den: Any = 1
            bad: Any = True  # no condition holds: undefined (as sympy's nan)
            for fv, fc in reversed(branches):
                c, cbad = fc(env)
                v = fv(env)
                vb = False if v.bad is None else v.bad
                num, den = np.where(c, v.num, num), np.where(c, v.den, den)
                bad = np.where(c, vb, bad)
                if cbad is not None:
                    bad = bad | cbad
            return _reduce(num, den, np.asarray(bad))

        return piecewise
    name = type(e).__name__
    if name in BIT_FUNCTIONS and isinstance(e, _BitFunction):
        fa, fb = args
        op = BIT_FUNCTIONS[name].numpy_function  # type: ignore[attr-defined]
        shift = name in ("shr", "shl")

        def bits(env: Sequence[np.ndarray]) -> ExactValues:
            a, b = fa(env), fb(env)
            bad = _or(a.bad, b.bad)
            for x in (a, b):
                if not (type(x.den) is int and x.den == 1):
                    bad = _or(bad, np.asarray(x.den) != 1)
            bn = np.asarray(b.num, dtype=np.int64)
            if shift:
                neg = (bn < 0) | (bn > 63)
                if np.any(neg):
                    bad = _or(bad, neg)
                bn = np.where(neg, 0, bn)
            return ExactValues(op(np.asarray(a.num, dtype=np.int64), bn), 1, bad)

        return bits
    raise _unsupported(e)


@guarded
def exact_evaluator(inputs: Sequence[Any], exprs: Sequence[Any]) -> Callable[..., list[ExactValues]]:
    """f(*arrays) -> [ExactValues] for each expression: exact rational arithmetic on int64 arrays.

    Every operation of :data:`SUPPORTED` is evaluated exactly (``floor(i/4)`` is integer division,
    ``Mod`` has the sign of the divisor, ``Piecewise`` without a matching branch is undefined);
    anything else is a LayoutError naming it, raised here, before any point is evaluated.

    >>> lane = sympy.Symbol("lane", integer=True, nonnegative=True)
    >>> f = exact_evaluator((lane,), [shr(lane, 2) + sympy.Min(lane, 3), sympy.floor(lane / 4) * 4])
    >>> [v.integers(6)[0].tolist() for v in f(np.arange(6))]
    [[0, 1, 2, 3, 4, 4], [0, 0, 0, 0, 4, 4]]
    """
    pos = {s: k for k, s in enumerate(inputs)}
    compiled = [_compile(_expr(e, "verify"), pos) for e in exprs]

    def run(*arrays: np.ndarray) -> list[ExactValues]:
        with np.errstate(all="ignore"):
            return [c(arrays) for c in compiled]

    return run


__all__ += ["exact_evaluator", "ExactValues", "SUPPORTED"]


@guarded
def mode_expr(shape: Any, stride: Any, x: Any) -> Any:
    """A layout mode ``shape:stride`` at index ``x`` as a sympy expression: the sum over its leaves of
    ``Mod(floor(x / prefix), s) * d`` (colexicographic, ``prefix`` the product of the leaves before).

    >>> from sympy import Symbol
    >>> mode_expr((4, 2), (2, 1), Symbol("x", integer=True, nonnegative=True))
    2*(Mod(x, 4)) + Mod(floor(x/4), 2)
    """
    acc, pre = sympy.Integer(0), 1
    for s, d in zip(_leaves(shape), _leaves(stride)):
        acc += sympy.Mod(sympy.floor(x / pre), s) * d
        pre *= s
    return acc



def _leaves(t: Any) -> list:
    """The leaves of a nested tuple, in order (this layer sits beside :mod:`layoutalg.inttuple`, not above it)."""
    return [x for y in t for x in _leaves(y)] if isinstance(t, tuple) else [t]


__all__ += ["mode_expr"]
