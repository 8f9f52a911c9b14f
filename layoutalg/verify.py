"""Deciding that a layout equals a hand-written formula, or another layout, on its whole domain.

The PTX ISA gives each fragment as formulas (``row = %laneid >> 2``, ``col = %laneid % 4``);
a layout gives the same map as ``Shape:Stride``. :func:`verify` decides whether the two agree
on every point of the (finite) domain and says how it knows:

- ``"exhaustive"``: every input was enumerated (vectorized with numpy) and compared;
- ``"symbolic"``: both sides were rewritten into one normal form and found identical. For
  inputs whose extent is a power of two each input is split into its bits ``b_j`` (``b_j**2 =
  b_j``); every integer function of bits has exactly one *multilinear* polynomial, so equal
  polynomials mean equal functions. ``%``, ``//``, ``>>``, ``&``, ``^``, ``|`` by powers of two
  act on bit positions; ``Piecewise`` conditions become 0/1 polynomials computed from the
  condition's truth table over the bits it mentions. For symbolic sizes each input is split
  into mixed-radix digits instead and ``Mod``/``floor`` are reduced with the digits' bounds,
  which proves the identity for *all* positive values of the size symbols;
- ``"instances"``: symbolic sizes that could not be handled symbolically; the verdict holds for
  the listed substitutions only (``proven`` is False).

Worked by hand: the f64 ``mma.m8n8k4`` A fragment puts lane ``l`` at ``row = l >> 2`` and
``col = l % 4`` of the 8x4 matrix; as a (thread, value) layout onto ``m + 8*k`` that is
``(4,8):(8,1)`` for the lane and ``1:0`` for the single value. Lane 6 -> row 1, col 2 -> 17,
and the layout gives ``(6 % 4)*8 + (6 // 4)*1 = 17``::

    >>> import sympy
    >>> from layoutalg.layout import Layout
    >>> from layoutalg.symbolic import shr
    >>> lane, i = sympy.symbols("lane i", integer=True, nonnegative=True)
    >>> tv = Layout(((4, 8), 1), ((8, 1), 0))
    >>> v = verify(tv, shr(lane, 2) + 8 * (lane % 4), (lane, i))
    >>> bool(v), v.method, v.checked
    (True, 'symbolic', 32)
    >>> w = verify(tv, shr(lane, 2) + 8 * (lane % 2), (lane, i))
    >>> bool(w), w.counterexample
    (False, Counterexample(lane=2, i=0: layout gives 16, formula gives 0))
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any
from collections.abc import Sequence

import numpy as np
import sympy

from . import algebra as alg
from .composed import ComposedLayout
from .errors import LayoutError
from .formula import as_formula
from .inttuple import flatten
from .layout import Layout
from .linear import to_linear
from .swizzle import Swizzle
from .symbolic import BIT_FUNCTIONS, ExactValues, exact_evaluator

__all__ = ["verify", "equivalent", "Verdict", "Counterexample"]


# ---------------------------------------------------------------------------------------
# results
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Counterexample:
    """The first input (in enumeration order) where the two sides differ, with both values.

    ``inputs`` are (name, value) pairs, by the input names given to :func:`verify` (``ce["r"]``, or
    ``ce.where`` as a dict); ``got`` is the value of the ``got_side`` (the layout or mapping; ``A`` of
    :func:`equivalent`), ``expected`` that of the ``expected_side`` (the formula; ``B``).

    >>> ce = Counterexample((("row", 3), ("col", 1)), 20, 12)
    >>> ce
    Counterexample(row=3, col=1: layout gives 20, formula gives 12)
    >>> print(ce)
    at (row, col) = (3, 1): the layout gives 20, the formula gives 12
    """

    inputs: tuple[tuple[str, int], ...]
    got: Any
    expected: Any
    got_side: str = "layout"
    expected_side: str = "formula"

    def __getitem__(self, name: str) -> int:
        return dict(self.inputs)[name]

    @property
    def where(self) -> dict[str, int]:
        """The inputs as a dict, name -> value."""
        return dict(self.inputs)

    def __repr__(self) -> str:
        where = ", ".join(f"{k}={v}" for k, v in self.inputs)
        return (f"Counterexample({where}: {self.got_side} gives {self.got}, "
                f"{self.expected_side} gives {self.expected})")

    def __str__(self) -> str:
        names = [k for k, _ in self.inputs]
        vals = [str(v) for _, v in self.inputs]
        if not names:
            return f"{self.got_side} = {self.got}, {self.expected_side} = {self.expected}"
        at = f"{names[0]} = {vals[0]}" if len(names) == 1 else f"({', '.join(names)}) = ({', '.join(vals)})"

        def side(x: str) -> str:
            return x if len(x) == 1 else f"the {x}"

        return f"at {at}: {side(self.got_side)} gives {self.got}, {side(self.expected_side)} gives {self.expected}"


@dataclass(frozen=True)
class Verdict:
    """The outcome of :func:`verify` / :func:`equivalent`; truthy iff the two sides agree.

    ``method`` says how it was decided ("symbolic", "exhaustive", "coalesce", "linear",
    "structural", "size", "instances"); ``checked`` is the number of points enumerated (0 when
    none were); ``proven`` is True when the verdict covers the whole domain (for every value of
    any size symbols), False for "instances"; ``instances`` lists the substitutions tried.
    """

    equal: bool
    method: str
    checked: int = 0
    counterexample: Counterexample | None = None
    proven: bool = True
    instances: tuple = ()
    note: str = ""

    def __bool__(self) -> bool:
        return self.equal

    def __repr__(self) -> str:
        parts = [f"{'equal' if self.equal else 'NOT equal'}", f"method={self.method}", f"checked={self.checked}"]
        if self.counterexample is not None:
            parts.append(repr(self.counterexample))
        if not self.proven:
            parts.append("not proven for all values")
        if self.instances:
            parts.append(f"instances={list(self.instances)}")
        if self.note:
            parts.append(self.note)
        return "Verdict(" + ", ".join(parts) + ")"


# ---------------------------------------------------------------------------------------
# numeric evaluation of formulas
# ---------------------------------------------------------------------------------------


#: the most points verify enumerates (in chunks of _CHUNK); a larger domain needs a symbolic proof
MAX_ENUMERATION = 1 << 24
_CHUNK = 1 << 20


@functools.lru_cache(maxsize=256)
def _evaluator(inputs: tuple, exprs: tuple) -> Any:
    return exact_evaluator(inputs, exprs)


def _as_exprs(expected: Any, names: dict) -> tuple:
    """The formula as a tuple of sympy expressions; text is read by :mod:`layoutalg.formula` (never evaluated)."""
    out = as_formula(expected, names, op="verify")
    return out if isinstance(out, tuple) else (out,)


def _as_inputs(inputs: Any) -> tuple:
    """The input symbols: sympy Symbols, names (each a non-negative integer symbol), or "r, c"."""
    if inputs is None:
        raise LayoutError("verify: give the inputs of the formula, e.g. inputs=(r, c) or inputs='r, c' "
                          "(one per mode of a layout, or one for its 1-D index)")
    if isinstance(inputs, str):
        inputs = [n.strip() for n in inputs.replace(" ", ",").split(",") if n.strip()]
    elif isinstance(inputs, sympy.Symbol):
        inputs = [inputs]
    out = []
    for s in inputs:
        if isinstance(s, str):
            if not s.isidentifier() or s.startswith("__"):
                raise LayoutError(f"verify: input name {s!r} is not a name")
            s = sympy.Symbol(s, integer=True, nonnegative=True)
        if not isinstance(s, sympy.Symbol):
            raise LayoutError(f"verify: input {s!r} must be a sympy Symbol or a name")
        out.append(s)
    if len({s.name for s in out}) != len(out):
        raise LayoutError(f"verify: the inputs {[s.name for s in out]} repeat a name")
    return tuple(out)


def _side(mapping: Any) -> str:
    """How a counterexample names the mapping's side."""
    if isinstance(mapping, _RowColOnly):
        mapping = mapping.fragment
    if _is_layoutish(mapping):
        return "layout"
    return "fragment" if hasattr(mapping, "formula_key") else "mapping"


# ---------------------------------------------------------------------------------------
# the mapping side
# ---------------------------------------------------------------------------------------


def _is_layoutish(x: Any) -> bool:
    return isinstance(x, (Layout, ComposedLayout))


def _mode_sizes(mapping: Any, n_inputs: int) -> list[Any]:
    if n_inputs == 1:
        return [mapping.size()]
    if n_inputs != len(mapping):
        raise LayoutError(
            f"verify: {n_inputs} inputs given for {mapping}, which has rank {len(mapping)} "
            "(give one symbol per mode, or one for the 1-D index)"
        )
    return [mapping[k].size() for k in range(n_inputs)]


def _domain(mapping: Any, inputs: tuple) -> list[int]:
    if _is_layoutish(mapping):
        return _mode_sizes(mapping, len(inputs))
    if hasattr(mapping, "verify_domain"):
        dom = list(mapping.verify_domain())
        if len(dom) != len(inputs):
            raise LayoutError(f"verify: {len(inputs)} inputs given, but {mapping!r} has {len(dom)} inputs {dom}")
        return dom
    raise LayoutError(f"verify: {mapping!r} is not a Layout, ComposedLayout or verify-protocol object")


def _eval_mapping(mapping: Any, arrays: Sequence[np.ndarray]) -> list[np.ndarray]:
    if _is_layoutish(mapping):
        return [np.asarray(mapping(*arrays), dtype=np.int64)]
    out = mapping.verify_eval(*arrays)
    if not isinstance(out, (tuple, list)):
        out = (out,)
    return [np.asarray(o) for o in out]


def _fmt_value(vals: list, k: int) -> Any:
    out = [int(v[k]) for v in vals]
    return out[0] if len(out) == 1 else tuple(out)


def _fmt_expected(vals: list[ExactValues], k: int) -> Any:
    out = [v.at(k) for v in vals]
    return out[0] if len(out) == 1 else tuple(out)


# ---------------------------------------------------------------------------------------
# verify
# ---------------------------------------------------------------------------------------


class _RowColOnly:
    """A fragment seen through its last two outputs (row, col), dropping the batch output."""

    def __init__(self, fragment: Any):
        self.fragment = fragment

    def __repr__(self) -> str:
        return f"{self.fragment!r} (row, col only)"

    def verify_domain(self) -> tuple:
        return self.fragment.verify_domain()

    def verify_eval(self, *arrays: Any) -> tuple:
        return tuple(self.fragment.verify_eval(*arrays))[-2:]

    def verify_symbolic(self, *symbols: Any) -> tuple:
        return tuple(self.fragment.verify_symbolic(*symbols))[-2:]


def verify(mapping: Any, expected: Any = None, inputs: Any = None, *, symbolic: bool = True,
           instances: Sequence[dict] | None = None, formula: Any = None) -> Verdict:
    """verify(F, e, x) -> Verdict, truthy iff F(x) == e(x) for every x of F's finite domain.

    ``mapping`` is a Layout or ComposedLayout (inputs: one symbol per mode, each mode given its
    1-D coordinate, or a single symbol for the 1-D index) or an object with ``verify_domain()``,
    ``verify_eval(*arrays)`` and optionally ``verify_symbolic(*symbols)`` (docs/architecture.md).
    ``expected`` (or ``formula=``) is one sympy expression (a layout's offset) or a tuple (e.g.
    ``(row, col)``), using ``Mod``/``%``, ``floor``/``//``, ``Piecewise``, ``Min``/``Max`` and the bit
    helpers of :mod:`layoutalg.symbolic` -- or the same written as text (``"8*r + c"``, ``"lane >> 2,
    lane % 4"``), which is read by the grammar of :mod:`layoutalg.formula` and never evaluated.
    ``inputs`` are sympy Symbols or names (``("r", "c")`` or ``"r, c"``); every argument may be given
    by keyword: ``verify(L, formula="8*r + c", inputs="r, c")``. A counterexample names both sides
    (the layout or fragment, and the formula) and the inputs by these names.

    First every point is enumerated (vectorized); when that finds no difference a symbolic
    proof is attempted (``symbolic=False`` skips it), and ``method`` reports which one decided.
    Layouts with symbolic sizes are proven for all positive values when the digit rewriting
    succeeds, otherwise checked on ``instances`` (default: small values of every symbol).

    >>> import sympy
    >>> r, c = sympy.symbols("r c", integer=True, nonnegative=True)
    >>> verify(Layout((4, 8), (8, 1)), 8 * r + c, (r, c)).method
    'symbolic'
    >>> print(verify(Layout((4, 8), (8, 1)), formula="8*r + 2*c", inputs="r, c").counterexample)
    at (r, c) = (0, 1): the layout gives 1, the formula gives 2
    """
    if formula is not None:
        if expected is not None:
            raise LayoutError("verify: give the formula once (as the second argument or as formula=)")
        expected = formula
    if expected is None:
        raise LayoutError("verify: give the formula to compare with, e.g. verify(L, '8*r + c', 'r, c')")
    inputs = _as_inputs(inputs)
    names = {s.name: s for s in sorted(_free_symbols(mapping), key=str)}
    names.update({s.name: s for s in inputs})
    exprs = _as_exprs(expected, names)
    if instances is not None:
        instances = [_check_instance(inst) for inst in instances]
        if not (_is_layoutish(mapping) and not mapping.is_static):
            raise LayoutError(f"verify: instances= substitute the size symbols of a symbolic layout; {mapping!r} has "
                              "none, so they would be ignored (leave them out)")
    if _is_layoutish(mapping) and not mapping.is_static:
        return _verify_symbolic_size(mapping, exprs, inputs, instances, symbolic)
    if not _is_layoutish(mapping) and getattr(mapping, "batch_name", None) is not None and len(exprs) == 2:
        # a fragment of several MMA computations (m8n8k4 f16) checked against the ISA's (row, col)
        # pair alone: compare the row and col outputs; which computation a lane serves is not checked
        mapping = _RowColOnly(mapping)
    extents = [int(e) for e in _domain(mapping, inputs)]
    return _verify_finite(mapping, exprs, inputs, extents, symbolic)


def _free_symbols(mapping: Any) -> set:
    try:
        syms = mapping.free_symbols if _is_layoutish(mapping) else set()
    except AttributeError:  # pragma: no cover
        return set()
    return {s for s in syms if isinstance(s, sympy.Symbol)}


def _check_instance(inst: Any) -> dict:
    """An instance of the size symbols: names or Symbols -> ints (text is refused, never evaluated)."""
    if not isinstance(inst, dict):
        raise LayoutError(f"verify: instance {inst!r} is not a dict of symbol -> int")
    for k, v in inst.items():
        if not isinstance(k, (str, sympy.Symbol)):
            raise LayoutError(f"verify: instance key {k!r} is not a symbol or a name")
        if isinstance(v, bool) or not isinstance(v, (int, np.integer, sympy.Integer)):
            raise LayoutError(f"verify: instance value {k}={v!r} is not an integer")
    return inst


def _verify_finite(mapping: Any, exprs: tuple, inputs: tuple, extents: list[int], symbolic: bool) -> Verdict:
    evaluate = _evaluator(inputs, exprs)  # refuses an unsupported formula before any work
    n = math.prod(extents)
    if n > MAX_ENUMERATION:
        if symbolic and _all_pow2(extents):
            try:
                if _bit_proof(mapping, exprs, inputs, extents):
                    return Verdict(True, "symbolic", 0, note=f"{n} points, proven without enumerating them")
            except _NoProof:
                pass
        raise LayoutError(
            f"verify: the domain {tuple(extents)} of {mapping!r} has {n} points, more than the limit of "
            f"{MAX_ENUMERATION} that verify enumerates, and no symbolic proof applies"
        )
    for start in range(0, n, _CHUNK):
        idx = np.arange(start, min(n, start + _CHUNK), dtype=np.int64)
        m = idx.size
        arrays = [np.asarray(a, dtype=np.int64) for a in np.unravel_index(idx, extents)] if extents else []
        got = [np.broadcast_to(g, (m,)) for g in _eval_mapping(mapping, arrays)]
        if len(got) != len(exprs):
            raise LayoutError(
                f"verify: {mapping!r} gives {len(got)} outputs but {len(exprs)} expected expressions were given"
            )
        want = evaluate(*arrays)
        diff = np.zeros(m, dtype=bool)
        for g, w in zip(got, want):
            values, ok = w.integers(m)
            diff |= ~ok | (g != values)
        bad = np.flatnonzero(diff)
        if bad.size:
            k = int(bad[0])
            ce = Counterexample(tuple((str(s), int(a[k])) for s, a in zip(inputs, arrays)), _fmt_value(got, k),
                                _fmt_expected(want, k), _side(mapping), "formula")
            return Verdict(False, "exhaustive", start + k + 1, ce)
    if symbolic and _all_pow2(extents):
        try:
            if _bit_proof(mapping, exprs, inputs, extents):
                return Verdict(True, "symbolic", n, note="")
            return Verdict(True, "exhaustive", n, note="symbolic normal forms differ (check the formula's form)")
        except _NoProof:
            pass
    return Verdict(True, "exhaustive", n)


def _all_pow2(extents: list[int]) -> bool:
    return all(e > 0 and e & (e - 1) == 0 for e in extents)


# ---------------------------------------------------------------------------------------
# symbolic proof over bits: multilinear polynomials
# ---------------------------------------------------------------------------------------


class _NoProof(Exception):
    """The expression is outside what the normal form handles; fall back to enumeration."""


_ONE: frozenset = frozenset()
_MAX_COND_BITS = 12


def _p_const(c: Any) -> dict:
    c = Fraction(c)
    return {_ONE: c} if c else {}


def _p_add(a: dict, b: dict, sign: int = 1) -> dict:
    out = dict(a)
    for m, c in b.items():
        v = out.get(m, 0) + sign * c
        if v:
            out[m] = v
        else:
            out.pop(m, None)
    return out


def _p_scale(a: dict, k: Any) -> dict:
    k = Fraction(k)
    return {m: c * k for m, c in a.items()} if k else {}


def _p_mul(a: dict, b: dict) -> dict:
    out: dict = {}
    for m1, c1 in a.items():
        for m2, c2 in b.items():
            m = m1 | m2
            v = out.get(m, 0) + c1 * c2
            if v:
                out[m] = v
            else:
                out.pop(m, None)
    return out


def _p_vars(a: dict) -> set:
    out: set = set()
    for m in a:
        out |= m
    return out


class _Val:
    """A value as a multilinear polynomial in bits, with its binary digits when known."""

    __slots__ = ("poly", "_bits")

    def __init__(self, poly: dict, bits: dict | None = None):
        self.poly = poly
        self._bits = bits

    @classmethod
    def from_bits(cls, bits: dict) -> "_Val":
        poly: dict = {}
        for t, bp in bits.items():
            poly = _p_add(poly, _p_scale(bp, 1 << t))
        return cls(poly, {t: bp for t, bp in bits.items() if bp})

    def bits(self) -> dict:
        """position -> 0/1 polynomial, when the value is a sum of distinct powers of two of 0/1 terms."""
        if self._bits is not None:
            return self._bits
        out: dict = {}
        for m, c in self.poly.items():
            if c.denominator != 1 or c < 0:
                raise _NoProof
            c = int(c)
            if m == _ONE:
                t = 0
                while c:
                    if c & 1:
                        if t in out:
                            raise _NoProof
                        out[t] = {_ONE: Fraction(1)}
                    c >>= 1
                    t += 1
                continue
            if c & (c - 1):
                raise _NoProof
            t = c.bit_length() - 1
            if t in out:
                raise _NoProof
            out[t] = {m: Fraction(1)}
        self._bits = out
        return out


def _bitwise(a: _Val, b: _Val, op: str) -> _Val:
    ba, bb = a.bits(), b.bits()
    out = {}
    for t in set(ba) | set(bb):
        x, y = ba.get(t, {}), bb.get(t, {})
        xy = _p_mul(x, y)
        if op == "and":
            r = xy
        elif op == "or":
            r = _p_add(_p_add(x, y), xy, -1)
        else:
            r = _p_add(_p_add(x, y), _p_scale(xy, 2), -1)
        if r:
            out[t] = r
    return _Val.from_bits(out)


def _shift(a: _Val, k: int) -> _Val:
    """a >> k for k >= 0, a << -k for k < 0."""
    b = a.bits()
    return _Val.from_bits({t - k: p for t, p in b.items() if t - k >= 0})


def _const_int(v: _Val) -> int:
    if not v.poly:
        return 0
    if set(v.poly) != {_ONE} or v.poly[_ONE].denominator != 1:
        raise _NoProof
    return int(v.poly[_ONE])


def _truth_poly(vars_: list, fn) -> dict:
    """Multilinear polynomial of the 0/1 function fn over the given bit variables (Moebius transform)."""
    k = len(vars_)
    if k > _MAX_COND_BITS:
        raise _NoProof
    idx = np.arange(1 << k, dtype=np.int64)
    assign = {v: (idx >> j) & 1 for j, v in enumerate(vars_)}
    f = np.asarray(fn(assign, 1 << k), dtype=np.int64).copy()
    for j in range(k):
        step = 1 << j
        for start in range(0, 1 << k, step << 1):
            f[start + step:start + 2 * step] -= f[start:start + step]
    out: dict = {}
    for s in np.flatnonzero(f):
        m = frozenset(vars_[j] for j in range(k) if (int(s) >> j) & 1)
        out[m] = Fraction(int(f[s]))
    return out


def _p_eval(p: dict, assign: dict, n: int) -> np.ndarray:
    tot = np.zeros(n, dtype=np.float64)
    for m, c in p.items():
        term = np.full(n, float(c))
        for v in m:
            term = term * assign[v]
        tot = tot + term
    return tot


class _BitConverter:
    def __init__(self, bit_inputs: dict):
        self.bit_inputs = bit_inputs  # symbol -> number of bits

    def val(self, e: Any) -> _Val:
        if isinstance(e, (bool, sympy.logic.boolalg.BooleanAtom)):
            return _Val(_p_const(1 if bool(e) else 0))
        if e.is_Integer or e.is_Rational:
            return _Val(_p_const(Fraction(int(e.p), int(e.q))))
        if e.is_Symbol:
            if e not in self.bit_inputs:
                raise _NoProof
            return _Val.from_bits({j: {frozenset([(e, j)]): Fraction(1)} for j in range(self.bit_inputs[e])})
        if e.is_Add:
            acc = _Val({}, {})
            for a in e.args:
                v = self.val(a)
                if acc._bits is not None and v._bits is not None and not (set(acc._bits) & set(v._bits)):
                    nb = dict(acc._bits)
                    nb.update(v._bits)
                    acc = _Val(_p_add(acc.poly, v.poly), nb)
                else:
                    acc = _Val(_p_add(acc.poly, v.poly))
            return acc
        if e.is_Mul:
            acc = _Val(_p_const(1))
            for a in e.args:
                v = self.val(a)
                if not v.poly or not acc.poly:
                    return _Val({}, {})
                if set(v.poly) == {_ONE} and acc._bits is not None and v.poly[_ONE] > 0 and \
                        v.poly[_ONE].denominator == 1 and (int(v.poly[_ONE]) & (int(v.poly[_ONE]) - 1)) == 0:
                    acc = _shift(acc, -(int(v.poly[_ONE]).bit_length() - 1))
                elif set(acc.poly) == {_ONE} and v._bits is not None and acc.poly[_ONE] > 0 and \
                        acc.poly[_ONE].denominator == 1 and (int(acc.poly[_ONE]) & (int(acc.poly[_ONE]) - 1)) == 0:
                    acc = _shift(v, -(int(acc.poly[_ONE]).bit_length() - 1))
                else:
                    acc = _Val(_p_mul(acc.poly, v.poly))
            return acc
        if e.is_Pow:
            base, ex = e.args
            if ex.is_Integer and int(ex) >= 0:
                b = self.val(base)
                acc = _Val(_p_const(1))
                for _ in range(int(ex)):
                    acc = _Val(_p_mul(acc.poly, b.poly))
                return acc
            raise _NoProof
        if isinstance(e, sympy.Mod):
            a, n = self.val(e.args[0]), _const_int(self.val(e.args[1]))
            if n <= 0 or n & (n - 1):
                raise _NoProof
            k = n.bit_length() - 1
            return _Val.from_bits({t: p for t, p in a.bits().items() if t < k})
        if isinstance(e, sympy.floor):
            a = self.val(e.args[0])
            den = 1
            for c in a.poly.values():
                den = den * c.denominator // math.gcd(den, c.denominator)
            if den & (den - 1):
                raise _NoProof
            q = _Val(_p_scale(a.poly, den))
            return _shift(q, den.bit_length() - 1)
        if isinstance(e, sympy.Piecewise):
            total: dict = {}
            rest = _p_const(1)
            for value, cond in e.args:
                ind = self.indicator(cond)
                take = _p_mul(rest, ind)
                total = _p_add(total, _p_mul(take, self.val(value).poly))
                rest = _p_add(rest, take, -1)
                if not rest:
                    break
            return _Val(total)
        if isinstance(e, (sympy.Min, sympy.Max)):
            vals = [self.val(a) for a in e.args]
            cur = vals[0]
            for v in vals[1:]:
                le = self._rel_poly(cur, v, lambda x, y: x <= y)
                if isinstance(e, sympy.Min):
                    cur = _Val(_p_add(_p_mul(le, cur.poly), _p_mul(_p_add(_p_const(1), le, -1), v.poly)))
                else:
                    cur = _Val(_p_add(_p_mul(le, v.poly), _p_mul(_p_add(_p_const(1), le, -1), cur.poly)))
            return cur
        fname = type(e).__name__
        if fname in BIT_FUNCTIONS and isinstance(e, sympy.Function):
            a, b = (self.val(x) for x in e.args)
            if fname == "shr":
                return _shift(a, _const_int(b))
            if fname == "shl":
                return _shift(a, -_const_int(b))
            return _bitwise(a, b, {"bitand": "and", "bitor": "or", "bitxor": "xor"}[fname])
        raise _NoProof

    def _rel_poly(self, a: _Val, b: _Val, op) -> dict:
        vars_ = sorted(_p_vars(a.poly) | _p_vars(b.poly), key=str)
        return _truth_poly(vars_, lambda asg, n: op(_p_eval(a.poly, asg, n), _p_eval(b.poly, asg, n)))

    def indicator(self, cond: Any) -> dict:
        if cond is sympy.true or cond is True:
            return _p_const(1)
        if cond is sympy.false or cond is False:
            return {}
        ops = {
            sympy.StrictLessThan: lambda x, y: x < y, sympy.LessThan: lambda x, y: x <= y,
            sympy.StrictGreaterThan: lambda x, y: x > y, sympy.GreaterThan: lambda x, y: x >= y,
            sympy.Eq: lambda x, y: x == y, sympy.Ne: lambda x, y: x != y,
        }
        for cls, op in ops.items():
            if isinstance(cond, cls):
                return self._rel_poly(self.val(cond.args[0]), self.val(cond.args[1]), op)
        if isinstance(cond, sympy.And):
            acc = _p_const(1)
            for c in cond.args:
                acc = _p_mul(acc, self.indicator(c))
            return acc
        if isinstance(cond, sympy.Or):
            acc_not = _p_const(1)
            for c in cond.args:
                acc_not = _p_mul(acc_not, _p_add(_p_const(1), self.indicator(c), -1))
            return _p_add(_p_const(1), acc_not, -1)
        if isinstance(cond, sympy.Not):
            return _p_add(_p_const(1), self.indicator(cond.args[0]), -1)
        raise _NoProof


def _layout_bits_val(L: Layout, coord_bits: list[list[tuple]], one_d: bool) -> _Val:
    """The value of a static power-of-two layout with each mode's coordinate given by bit variables."""
    modes = [L] if one_d else [L[k] for k in range(len(L))]
    poly: dict = {}
    for mode, vars_ in zip(modes, coord_bits):
        fs, fd = flatten(mode.shape), flatten(mode.stride)
        pos = 0
        for li, (s, d) in enumerate(zip(fs, fd)):
            if s & (s - 1):
                raise _NoProof
            w = s.bit_length() - 1
            last = li == len(fs) - 1
            take = vars_[pos:] if last else vars_[pos:pos + w]
            for j, v in enumerate(take):
                poly = _p_add(poly, {frozenset([v]): Fraction(d << j)} if d else {})
            pos += w
    return _Val(poly)


def _mapping_val(mapping: Any, coord_bits: list[list[tuple]], one_d: bool) -> _Val:
    if isinstance(mapping, Layout):
        if not mapping.is_static:
            raise _NoProof
        return _layout_bits_val(mapping, coord_bits, one_d)
    if isinstance(mapping, ComposedLayout):
        inner = _mapping_val(mapping.inner, coord_bits, one_d)
        x = _Val(_p_add(inner.poly, _p_const(mapping.offset))) if mapping.offset else inner
        outer = mapping.outer
        if isinstance(outer, Swizzle):
            if outer.is_identity:
                return x
            y = _bitwise(x, _Val(_p_const(outer.yyy_mask)), "and")
            y = _shift(y, outer.S)
            return _bitwise(x, y, "xor")
        # a layout applied to a 1-D value: split x into its bits
        bits = x.bits()
        top = max(bits, default=-1) + 1
        fake = [[("__x__", t) for t in range(top)]]
        v = _mapping_val(outer, fake, True)
        sub = {("__x__", t): bits.get(t, {}) for t in range(top)}
        out: dict = {}
        for m, c in v.poly.items():
            term = _p_const(c)
            for var in m:
                term = _p_mul(term, sub[var])
            out = _p_add(out, term)
        return _Val(out)
    raise _NoProof


def _bit_proof(mapping: Any, exprs: tuple, inputs: tuple, extents: list[int]) -> bool:
    nbits = {s: e.bit_length() - 1 for s, e in zip(inputs, extents)}
    conv = _BitConverter(nbits)
    coord_bits = [[(s, j) for j in range(nbits[s])] for s in inputs]
    if _is_layoutish(mapping):
        lhs = [_mapping_val(mapping, coord_bits, len(inputs) == 1)]
    elif hasattr(mapping, "verify_symbolic"):
        lhs = [conv.val(as_formula(x, op="verify")) for x in mapping.verify_symbolic(*inputs)]
    else:
        raise _NoProof
    rhs = [conv.val(e) for e in exprs]
    return all(a.poly == b.poly for a, b in zip(lhs, rhs))


# ---------------------------------------------------------------------------------------
# symbolic sizes: mixed-radix digits
# ---------------------------------------------------------------------------------------


def _reduce(e: sympy.Expr, bounds: dict) -> sympy.Expr:
    """Rewrite Mod(a, n) -> a and floor(a/n) -> q using digit bounds 0 <= d < bounds[d]."""

    def upper(r: sympy.Expr) -> sympy.Expr | None:
        # max of a sum of (non-negative coefficient) * digit, or None when not of that form
        tot = sympy.Integer(0)
        for t in sympy.Add.make_args(sympy.expand(r)):
            coeff, rest = t.as_independent(*bounds.keys())
            if rest == 1:
                if coeff.is_nonnegative is not True:
                    return None
                tot += coeff
                continue
            if rest not in bounds or coeff.is_nonnegative is not True:
                return None
            tot += coeff * (bounds[rest] - 1)
        return tot

    def split(a: sympy.Expr, n: sympy.Expr):
        q, r = sympy.Integer(0), sympy.Integer(0)
        for t in sympy.Add.make_args(sympy.expand(a)):
            if (t / n).is_integer:
                q += t / n
            else:
                r += t
        return q, r

    def go(x: sympy.Expr) -> sympy.Expr:
        if not x.args:
            return x
        args = [go(a) for a in x.args]
        if isinstance(x, sympy.Mod):
            a, n = args
            q, r = split(a, n)
            up = upper(r)
            if up is not None and (n - up).is_positive:
                return r
            return sympy.Mod(r, n)
        if isinstance(x, sympy.floor):
            (a,) = args
            num, den = sympy.fraction(sympy.together(a))
            q, r = split(num, den)
            up = upper(r)
            if up is not None and (den - up).is_positive:
                return q
            return q + sympy.floor(r / den)
        if isinstance(x, (sympy.Min, sympy.Max)) and len(args) == 2:
            # Min/Max of a digit sum and a digit-free bound decided by the sum's range [lo, up]
            for p, c in ((args[0], args[1]), (args[1], args[0])):
                if c.free_symbols & bounds.keys():
                    continue
                up, lo = upper(p), lower(p)
                p_below = up is not None and (c - up).is_nonnegative is True  # p <= c everywhere
                p_above = lo is not None and (lo - c).is_nonnegative is True  # p >= c everywhere
                if p_below:
                    return p if isinstance(x, sympy.Min) else c
                if p_above:
                    return c if isinstance(x, sympy.Min) else p
        return x.func(*args)

    def lower(r: sympy.Expr) -> sympy.Expr | None:
        # min of a sum of (non-negative coefficient) * digit: its constant part
        if upper(r) is None:
            return None
        return sum((t for t in sympy.Add.make_args(sympy.expand(r)) if not (t.free_symbols & bounds.keys())),
                   sympy.Integer(0))

    return go(e)


def _digit_proof(L: Any, exprs: tuple, inputs: tuple) -> bool:
    if not isinstance(L, Layout) or len(exprs) != 1:
        return False
    one_d = len(inputs) == 1
    modes = [L] if one_d else [L[k] for k in range(len(L))]
    if len(modes) != len(inputs):
        return False
    bounds: dict = {}
    subs: dict = {}
    value = sympy.Integer(0)
    for s, mode in zip(inputs, modes):
        fs, fd = flatten(mode.shape), flatten(mode.stride)
        coord = sympy.Integer(0)
        scale = sympy.Integer(1)
        for j, (sz, st) in enumerate(zip(fs, fd)):
            if sz == 1:  # a size-1 digit is always 0
                continue
            d = sympy.Symbol(f"_{s}_d{j}", integer=True, nonnegative=True)
            bounds[d] = sympy.sympify(sz)
            coord += scale * d
            scale = scale * sz
            value += st * d
        subs[s] = coord
    lhs = _reduce(exprs[0].xreplace(subs), bounds)
    return sympy.expand(lhs - value) == 0


def _default_instances(symbols: list) -> list[dict]:
    values = (1, 2, 4)
    syms = sorted(symbols, key=lambda s: s.name)
    combos = list(itertools.product(values, repeat=len(syms)))
    if len(combos) > 27:
        combos = [tuple(v for _ in syms) for v in values] + combos[:: max(1, len(combos) // 24)]
    return [dict(zip(syms, c)) for c in combos]


def _verify_symbolic_size(mapping: Any, exprs: tuple, inputs: tuple, instances: Sequence[dict] | None,
                          symbolic: bool = True) -> Verdict:
    syms = sorted(mapping.free_symbols, key=lambda s: s.name)
    if instances is None and symbolic:
        try:
            if _digit_proof(mapping, exprs, inputs):
                return Verdict(True, "symbolic", 0, note=f"for all positive {', '.join(map(str, syms))}")
        except (TypeError, ValueError, AttributeError):
            pass
    if instances is None:
        instances = _default_instances(syms)
    tried = []
    total = 0
    for inst in instances:
        try:
            m = mapping.subs(inst)
        except LayoutError:
            continue
        if not m.is_static:
            raise LayoutError(f"verify: instance {inst} leaves symbols in {m}")
        e = tuple(x.subs({(sympy.Symbol(k, integer=True, positive=True) if isinstance(k, str) else k): v
                          for k, v in inst.items()}) for x in exprs)
        v = _verify_finite(m, e, inputs, [int(x) for x in _domain(m, inputs)], symbolic=False)
        key = tuple((str(k), int(val)) for k, val in inst.items())
        tried.append(key)
        total += v.checked
        if not v:
            ce = v.counterexample
            if ce is not None:  # the sizes belong to the counterexample: with them it can be reproduced
                ce = Counterexample(ce.inputs + key, ce.got, ce.expected, ce.got_side, ce.expected_side)
            return Verdict(False, "exhaustive", total, ce, True, (key,), note=f"counterexample at {dict(key)}")
    return Verdict(True, "instances", total, None, False, tuple(tried),
                   note="held on the listed instances only")


# ---------------------------------------------------------------------------------------
# equivalent
# ---------------------------------------------------------------------------------------


def equivalent(A: Any, B: Any, *, chunk: int = 1 << 20) -> Verdict:
    """equivalent(A, B) -> Verdict, truthy iff size(A) == size(B) and A(i) == B(i) for all i < size.

    A and B are Layouts or ComposedLayouts (static), or their text (read by :func:`layoutalg.parse`). The domain is the 1-D index range, so
    differently nested or coalesced spellings of one function are equivalent. Fast paths:
    identical structure, equal coalesced forms, equal F2 bases (:mod:`layoutalg.linear`);
    otherwise the tables are compared in chunks.

    >>> from layoutalg.layout import Layout
    >>> equivalent(Layout(((2, 2), 4), ((1, 2), 4)), Layout(16, 1)).method
    'coalesce'
    >>> equivalent(Layout((4, 4), (1, 4)), Layout((4, 4), (4, 1)))
    Verdict(NOT equal, method=linear, checked=1, Counterexample(i=1: A gives 1, B gives 4))
    """
    if isinstance(A, str) or isinstance(B, str):  # layout text, read by parse's grammar
        from .parse import parse

        A, B = (parse(x) if isinstance(x, str) else x for x in (A, B))
    for x in (A, B):
        if not _is_layoutish(x):
            raise LayoutError(f"equivalent: {x!r} is not a Layout, ComposedLayout or layout text")
    if A == B and type(A) is type(B):
        return Verdict(True, "structural")
    for x in (A, B):
        if not x.is_static:
            raise LayoutError(f"equivalent: {x} has symbolic entries; substitute values first (subs)")
    na, nb = int(A.size()), int(B.size())
    if na != nb:
        return Verdict(False, "size", 0, Counterexample((), na, nb, "size of A", "size of B"),
                       note=f"size {na} != size {nb}")
    try:
        if isinstance(A, Layout) and isinstance(B, Layout) and alg.coalesce(A) == alg.coalesce(B):
            return Verdict(True, "coalesce")
        if (isinstance(A, ComposedLayout) and isinstance(B, ComposedLayout)
                and type(A.outer) is type(B.outer) and A.outer == B.outer and A.offset == B.offset
                and isinstance(A.inner, Layout) and isinstance(B.inner, Layout)
                and alg.coalesce(A.inner) == alg.coalesce(B.inner)):
            return Verdict(True, "coalesce")
    except LayoutError:
        pass
    la: tuple[int, ...] | None
    lb: tuple[int, ...] | None
    try:
        la, lb = to_linear(A).flat_bases(), to_linear(B).flat_bases()
    except LayoutError:
        la = lb = None
    if la is not None and lb is not None and len(la) == len(lb):
        if la == lb:
            return Verdict(True, "linear")
        j = next(k for k in range(len(la)) if la[k] != lb[k])
        i = 1 << j
        return Verdict(False, "linear", 1, Counterexample((("i", i),), int(A(i)), int(B(i)), "A", "B"))
    if na > MAX_ENUMERATION:
        raise LayoutError(
            f"equivalent: {A} and {B} have {na} points, more than the limit of {MAX_ENUMERATION} that equivalent "
            "enumerates, and no fast path (structure, coalescing, F2 bases) decides them"
        )
    checked = 0
    for start in range(0, na, chunk):
        idx = np.arange(start, min(na, start + chunk), dtype=np.int64)
        a = np.asarray(A(idx), dtype=np.int64)
        b = np.asarray(B(idx), dtype=np.int64)
        bad = np.flatnonzero(a != b)
        checked += idx.size
        if bad.size:
            k = int(bad[0])
            return Verdict(False, "exhaustive", checked, Counterexample((("i", int(idx[k])),), int(a[k]), int(b[k]), "A", "B"))
    return Verdict(True, "exhaustive", checked)
