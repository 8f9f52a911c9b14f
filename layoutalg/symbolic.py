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

from typing import Any

import numpy as np
import sympy

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


def _binary(name: str, op, np_op, doc: str):
    fn_cls = type(name, (_BitFunction,), {"_op": staticmethod(op), "__module__": __name__})

    def apply(a: Any, b: Any) -> Any:
        if _is_array(a) or _is_array(b):
            return np_op(np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64))
        ia, ib = _concrete(a), _concrete(b)
        if ia is not None and ib is not None:
            return op(ia, ib)
        return fn_cls(sympy.sympify(a), sympy.sympify(b))

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

    namespace = dict(NUMPY_FUNCTIONS, numpy=np)
    printer = NumPyPrinter({"fully_qualified_modules": True, "inline": True, "allow_unknown_functions": True,
                            "user_functions": {}})
    return sympy.lambdify(tuple(inputs), list(exprs), modules=[namespace], printer=printer)


__all__ += ["BIT_FUNCTIONS", "NUMPY_FUNCTIONS", "lambdify_numpy"]
