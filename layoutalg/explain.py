"""Explaining a layout as the formula a person writes: ``row = groupID + 8 * ((i >> 1) & 1)``.

:func:`layoutalg.verify` answers "is my hand-derived formula right?". :func:`explain` answers the
question before it: "what *is* the formula?". Given a layout, a swizzled tile, an ``mma`` fragment
or a partition, it writes one expression per output coordinate in the C-like vocabulary of the PTX
ISA -- ``lane``, ``groupID = lane >> 2``, ``threadID_in_group = lane % 4``, the value index ``i``,
shifts, masks, ``^`` -- and proves each with :func:`~layoutalg.verify.verify` before returning it.

How it finds the formula. Every input is split into its digits (bits, for power-of-two extents).
A layout is a sum ``stride_j * digit_j``, and so (for every entry of the catalog) is each output of
a fragment, so the first try is *additive*: ``f(x) = f(0) + sum_d c_d * digit_d(x)``, where
``c_d = f(digit d = 1) - f(0)`` is read off the table and the guess is then compared on every
point. Runs of digits whose coefficients continue each other (``c, 2c, 4c``) become one bit field
``(x >> p) & mask``, written in its cheapest C form. When the table is not additive but XOR-linear
(a swizzle), the output bits are grouped into runs whose sources move together, each run an XOR
of input fields: ``8 * ((col >> 3) ^ (row % 8))``. Failing both, it splits on one input bit
(``i < 4 ? ... : ...``); failing that, it returns the layout's own ``floor``/``mod`` expression.

Worked by hand: the accumulator of ``mma.m16n8k8`` is ``((4,8),(2,2)):((32,1),(16,8))`` over the
16x8 matrix C, index ``m + 16*n``. The lane's bits 2..4 (groupID) have strides 1, 2, 4: they are
the row. Lane bits 0, 1 have strides 32 and 64, i.e. 2 and 4 columns: ``col = 2 *
threadID_in_group``. Value bit 0 (stride 16) is one column, value bit 1 (stride 8) eight rows;
it is the top bit of ``i`` (0..3), so eight rows per step of ``i >> 1``::

    row = groupID + 8 * (i >> 1)            lane 5, i = 3:  1 + 8 = 9
    col = 2 * threadID_in_group + (i & 1)                   2 + 1 = 3

The PTX ISA writes the row as ``groupID`` for ``c0, c1`` and ``groupID + 8`` for ``c2, c3``: the
same function, one operator longer (``i < 2 ? groupID : groupID + 8``)::

    >>> from layoutalg.nvidia.ampere import mma
    >>> e = explain(mma.fragment("m16n8k8", "f16", "C"))
    >>> print(e.formula())
    row = groupID + 8 * (i >> 1)
    col = 2 * threadID_in_group + (i & 1)
    >>> e.verdict.method, e.ops, e.isa_ops
    ('symbolic', 8, 9)

A swizzled tile comes back in its XOR form: CuTe's 128-byte swizzle atom on 16-bit elements XORs
the row into the 16-byte chunk ``col >> 3``::

    >>> print(explain("Sw<3,3,3> o (8,64):(64,1)").formula())
    offset = 64 * row + 8 * ((col >> 3) ^ row) + col % 8
"""

from __future__ import annotations

import functools
import math
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import sympy

from .composed import ComposedLayout
from .errors import LayoutError, guarded
from .layout import Layout
from .swizzle import Swizzle
from .tensor import Tensor
from .symbolic import bitand, bitxor, mode_expr, shl, shr
from .verify import Verdict, verify
from .formula import as_formula

__all__ = ["explain", "Explanation", "count_ops", "c_text"]


# ---------------------------------------------------------------------------------------------
# counting operators: one counter for the ISA's formulas and for ours
# ---------------------------------------------------------------------------------------------
def count_ops(expr: Any) -> int:
    """The number of C operators needed to write ``expr``: ``+ - * / % >> << & ^ |``, comparisons,
    ``&& ||``, and one ``?:`` per case of a ``Piecewise`` beyond the last.

    A sum of n terms is n - 1 additions; a product by a constant is one multiplication (by -1 none);
    ``floor(x / 4)`` is one division; ``Mod``, the bit helpers of :mod:`layoutalg.symbolic`, each
    relation, ``Min``/``Max`` count once per pair. Symbols and integers are free. A tuple counts
    the sum of its members.

    >>> from layoutalg.nvidia.common.ptx_formulas import FORMULAS
    >>> count_ops(FORMULAS["m16n8k8.C"].outputs)    # i < 2 ? gid : gid + 8 ; tig * 2 + (i & 1)
    9
    """
    if isinstance(expr, (tuple, list)):
        return sum(count_ops(e) for e in expr)
    e = as_formula(expr, op="count_ops")
    return _count(e)


def _count(e: Any) -> int:
    if isinstance(e, (bool, sympy.logic.boolalg.BooleanAtom)) or e.is_Atom:
        return 0
    if isinstance(e, sympy.Add):
        return len(e.args) - 1 + sum(_count(a) for a in e.args)
    if isinstance(e, sympy.Mul):
        n = 0
        factors = 0
        for a in e.args:
            if a == -1:
                continue
            if a.is_Rational and not a.is_Integer:
                # x * p/q: a division (and a multiplication when p != +-1)
                n += 1 + (abs(a.p) != 1)
                continue
            factors += 1
            n += _count(a)
        return n + max(0, factors - 1)
    if isinstance(e, sympy.floor):
        return _count(e.args[0])
    if isinstance(e, sympy.Pow):
        return 1 + _count(e.args[0])
    if isinstance(e, sympy.Piecewise):
        n = len(e.args) - 1
        for value, cond in e.args:
            n += _count(value)
            if cond is not sympy.true:
                n += _count(cond)
        return n
    if isinstance(e, sympy.core.relational.Relational):
        return 1 + _count(e.args[0]) + _count(e.args[1])
    if isinstance(e, (sympy.And, sympy.Or)):
        return len(e.args) - 1 + sum(_count(a) for a in e.args)
    if isinstance(e, sympy.Not):
        return 1 + _count(e.args[0])
    if isinstance(e, (sympy.Function, sympy.Mod, sympy.Min, sympy.Max)):
        return max(1, len(e.args) - 1) + sum(_count(a) for a in e.args)
    return 1 + sum(_count(a) for a in e.args)  # pragma: no cover - nothing else is built


# ---------------------------------------------------------------------------------------------
# expression nodes: a sympy expression and its C text, built together
# ---------------------------------------------------------------------------------------------
_ATOM = 100
_PREC = {"*": 13, "/": 13, "%": 13, "+": 12, "-": 12, "<<": 11, ">>": 11, "<": 10, ">=": 10, "!=": 9,
         "&": 8, "^": 7, "|": 6, "?:": 3}
_BITWISE = {"&", "^", "|", "<<", ">>"}


@dataclass(frozen=True)
class _Node:
    expr: Any
    text: str
    prec: int = _ATOM
    op: str = ""

    @property
    def cost(self) -> int:
        return count_ops(self.expr)


def _num(v: int) -> _Node:
    return _Node(sympy.Integer(v), str(v))


def _wrap(child: _Node, op: str, right: bool) -> str:
    p = _PREC[op]
    need = child.prec < p or (child.prec == p and (child.op != op or (right and op in ("-", "/", "%", "<<", ">>"))))
    # readability: a bitwise operator's operands are bracketed unless they are atoms or the same operator
    if op in _BITWISE and child.prec != _ATOM and child.op != op:
        need = True
    return f"({child.text})" if need else child.text


def _bin(op: str, a: _Node, b: _Node) -> _Node:
    x, y = a.expr, b.expr
    expr = {
        "+": lambda: x + y, "-": lambda: x - y, "*": lambda: x * y, "%": lambda: sympy.Mod(x, y),
        "/": lambda: sympy.floor(x / y), ">>": lambda: shr(x, y), "<<": lambda: shl(x, y),
        "&": lambda: bitand(x, y), "^": lambda: bitxor(x, y),
    }[op]()
    return _Node(expr, f"{_wrap(a, op, False)} {op} {_wrap(b, op, True)}", _PREC[op], op)


def _sum(terms: Sequence[tuple[int, _Node]], const: int) -> _Node:
    """sign * node + ... + const, printed in the given order with ``-`` for negative signs."""
    parts = [(s, n) for s, n in terms]
    if const or not parts:
        parts.append((1 if const >= 0 else -1, _num(abs(const))))
    expr = sympy.Add(*[s * n.expr for s, n in parts])
    if len(parts) == 1 and parts[0][0] > 0:
        return parts[0][1]
    text = ""
    for k, (s, n) in enumerate(parts):
        t = _wrap(n, "+" if (k == 0 and s > 0) else "-", k > 0)
        if k == 0:
            text = t if s > 0 else f"-{t}"
        else:
            text += f" {'+' if s > 0 else '-'} {t}"
    return _Node(expr, text, _PREC["+"], "+")


def _select(cond: _Node, cond_expr: Any, then: _Node, other: _Node) -> _Node:
    expr = sympy.Piecewise((then.expr, cond_expr), (other.expr, True))
    c = cond.text if cond.prec > _PREC["?:"] else f"({cond.text})"
    t = then.text if then.prec > _PREC["?:"] else f"({then.text})"
    return _Node(expr, f"{c} ? {t} : {other.text}", _PREC["?:"], "?:")


# ---------------------------------------------------------------------------------------------
# inputs and their digits
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Input:
    """One input of the mapping: its symbol, extent and digit radices (least significant first).

    ``style`` is how a low field is written: ``"mod"`` (``lane % 4``) or ``"and"`` (``i & 1``).
    ``helpers`` maps a field ``(place, size)`` to a named quantity ``(name, definition)``.
    """

    name: str
    symbol: sympy.Symbol
    extent: int
    radices: tuple[int, ...]
    style: str = "mod"
    helpers: tuple = ()

    @property
    def places(self) -> tuple[int, ...]:
        out, p = [], 1
        for r in self.radices:
            out.append(p)
            p *= r
        return tuple(out)

    def helper(self, place: int, size: int) -> tuple[str, str] | None:
        for (p, s), named in self.helpers:
            if (p, s) == (place, size):
                return named
        return None


def _radices(leaves: Sequence[int]) -> tuple[int, ...]:
    """Digit radices of a mode with these leaf sizes: power-of-two leaves split into bits."""
    out: list[int] = []
    for s in leaves:
        s = int(s)
        if s == 1:
            continue
        if s & (s - 1) == 0:
            out.extend([2] * (s.bit_length() - 1))
        else:
            out.append(s)
    return tuple(out)


def _pow2(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def _log2(n: int) -> int:
    return n.bit_length() - 1


# ---------------------------------------------------------------------------------------------
# fields: c * ((x // place) % size), written the cheapest way
# ---------------------------------------------------------------------------------------------
def _base_field(inp: _Input, place: int, size: int) -> list[_Node]:
    """Ways to write ``(x // place) % size`` (no coefficient), preferred first."""
    x = _Node(inp.symbol, inp.name)
    top = place * size == inp.extent
    named = inp.helper(place, size)
    out: list[_Node] = []
    if place == 1 and top:
        return [x]
    if place == 1:
        if _pow2(size) and inp.style == "and":
            out = [_bin("&", x, _num(size - 1)), _bin("%", x, _num(size))]
        elif _pow2(size):
            out = [_bin("%", x, _num(size)), _bin("&", x, _num(size - 1))]
        else:
            out = [_bin("%", x, _num(size))]
    elif top:
        out = [_bin(">>", x, _num(_log2(place))) if _pow2(place) else _bin("/", x, _num(place))]
    else:
        hi = _bin(">>", x, _num(_log2(place))) if _pow2(place) else _bin("/", x, _num(place))
        if _pow2(size):
            out = [_bin("&", hi, _num(size - 1)), _bin("%", hi, _num(size))]
        else:
            out = [_bin("%", hi, _num(size))]
    if named is not None:
        out = [_Node(n.expr, named[0]) for n in out[:1]] + out
    return out


def _term(inp: _Input, place: int, size: int, c: int) -> tuple[int, _Node]:
    """The cheapest ``(sign, node)`` with ``sign * node == c * ((x // place) % size)``; of equal cost,
    the first of: the field times c (named quantities first), the masked input times ``c / place``,
    the masked input shifted right."""
    sign, a = (1, c) if c > 0 else (-1, -c)
    cands: list[_Node] = [base if a == 1 else _bin("*", _num(a), base) for base in _base_field(inp, place, size)]
    if _pow2(place) and _pow2(size) and place * size <= inp.extent:
        x = _Node(inp.symbol, inp.name)
        top = place * size == inp.extent
        masked = x if (place == 1 and top) else _bin("&", x, _num((size - 1) * place))
        if a % place == 0:
            cands.append(masked if a == place else _bin("*", _num(a // place), masked))
        elif _pow2(a):
            cands.append(_bin(">>", masked, _num(_log2(place) - _log2(a))))
    best = min(cands, key=lambda n: n.cost)  # min is stable: the first of equal cost wins
    return sign, best


# ---------------------------------------------------------------------------------------------
# fitting one output table
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Digits:
    """The digits an output may depend on: per input, ``(place, radix)`` pairs in increasing place."""

    per_input: tuple[tuple[tuple[int, int], ...], ...]


def _all_digits(inputs: Sequence[_Input]) -> _Digits:
    return _Digits(tuple(tuple(zip(inp.places, inp.radices)) for inp in inputs))


def _digit_vectors(inputs: Sequence[_Input], k: int, place: int, radix: int) -> np.ndarray:
    x = np.arange(inputs[k].extent, dtype=np.int64)
    return (x // place) % radix


def _outer(vectors: Sequence[np.ndarray], op: Any) -> np.ndarray:
    n = len(vectors)
    acc = None
    for k, v in enumerate(vectors):
        shape = [1] * n
        shape[k] = v.size
        vv = v.reshape(shape)
        acc = vv if acc is None else op(acc, vv)
    return np.asarray(acc)


def _runs(digits: Sequence[tuple[int, int]], coeffs: Sequence[int]) -> list[tuple[int, int, int]]:
    """Group digits into fields ``(place, size, coefficient)``: consecutive digits whose coefficients
    continue each other (c, c * r0, c * r0 * r1, ...)."""
    out: list[list[int]] = []
    for (place, radix), c in zip(digits, coeffs):
        if c == 0:
            continue
        if out:
            p0, size, c0 = out[-1]
            if p0 * size == place and c == c0 * size:
                out[-1][1] = size * radix
                continue
        out.append([place, radix, c])
    return [(p, s, c) for p, s, c in out]


def _order(terms: list[tuple[int, tuple[int, _Node], int]], descending: bool) -> list[tuple[int, _Node]]:
    """terms: (input index, (sign, node), magnitude); fragments read input by input, least first."""
    if descending:
        terms = sorted(terms, key=lambda t: -t[2])
    else:
        terms = sorted(terms, key=lambda t: (t[0], t[2]))
    return [t[1] for t in terms]


def _fit_additive(table: np.ndarray, inputs: Sequence[_Input], digits: _Digits, origin: tuple,
                  descending: bool) -> _Node | None:
    """f = f(origin) + sum c_d * digit_d on the sub-domain described by ``digits`` (others fixed at origin)."""
    base = int(table[origin])
    vectors = []
    terms: list[tuple[int, tuple[int, _Node], int]] = []
    for k, ds in enumerate(digits.per_input):
        coeffs = []
        vec = np.zeros(table.shape[k], dtype=np.int64)
        for place, radix in ds:
            pt = list(origin)
            pt[k] = origin[k] + place
            c = int(table[tuple(pt)]) - base
            coeffs.append(c)
            vec = vec + c * _digit_vectors(inputs, k, place, radix)
        vectors.append(vec)
        for place, size, c in _runs(ds, coeffs):
            terms.append((k, _term(inputs[k], place, size, c), abs(c) * (size - 1)))
    sub = _subtable(table, inputs, digits, origin)
    pred = base + _outer([v[_sub_index(inputs, digits, origin, k)] for k, v in enumerate(vectors)], np.add)
    if not np.array_equal(sub, pred):
        return None
    return _sum(_order(terms, descending), base)


def _sub_index(inputs: Sequence[_Input], digits: _Digits, origin: tuple, k: int) -> np.ndarray:
    """The values of input k on the sub-domain: origin[k] plus every combination of its free digits."""
    idx = np.array([origin[k]], dtype=np.int64)
    for place, radix in digits.per_input[k]:
        idx = (idx[None, :] + place * np.arange(radix, dtype=np.int64)[:, None]).reshape(-1)
    return np.sort(idx)


def _subtable(table: np.ndarray, inputs: Sequence[_Input], digits: _Digits, origin: tuple) -> np.ndarray:
    return table[np.ix_(*[_sub_index(inputs, digits, origin, k) for k in range(len(inputs))])]


def _fit_xor(table: np.ndarray, inputs: Sequence[_Input], digits: _Digits, origin: tuple,
             descending: bool) -> _Node | None:
    """f = f(origin) ^ XOR of bit images, grouped into output runs of XOR-ed input fields."""
    if any(r != 2 for ds in digits.per_input for _, r in ds):
        return None
    base = int(table[origin])
    if base < 0 or int(table.min()) < 0:
        return None
    images: list[tuple[int, int, int]] = []  # (input, bit position, image)
    vectors = []
    for k, ds in enumerate(digits.per_input):
        vec = np.zeros(table.shape[k], dtype=np.int64)
        x = np.arange(table.shape[k], dtype=np.int64)
        for place, _ in ds:
            pt = list(origin)
            pt[k] = origin[k] + place
            v = int(table[tuple(pt)]) ^ base
            images.append((k, _log2(place), v))
            vec = vec ^ np.where((x // place) % 2 == 1, v, 0)
        vectors.append(vec)
    sub = _subtable(table, inputs, digits, origin)
    pred = base ^ _outer([v[_sub_index(inputs, digits, origin, k)] for k, v in enumerate(vectors)], np.bitwise_xor)
    if not np.array_equal(sub, pred):
        return None
    top = max([v.bit_length() for _, _, v in images] + [0])
    sources = {t: frozenset((k, b) for k, b, v in images if (v >> t) & 1) for t in range(top)}
    runs: list[list[Any]] = []  # [t0, width, sources at t0]
    for t in range(top):
        s = sources[t]
        if not s:
            continue
        if runs:
            t0, w, s0 = runs[-1]
            if t0 + w == t and s == frozenset((k, b + w) for k, b in s0):
                runs[-1][1] += 1
                continue
        runs.append([t, 1, s])
    terms: list[tuple[int, tuple[int, _Node], int]] = []
    used = 0
    for t0, w, s0 in runs:
        used |= ((1 << w) - 1) << t0
        # the field that stays in place first (col >> 3 in (col >> 3) ^ (row % 8)), then by input
        srcs = sorted(s0, key=lambda kb: (-kb[1], kb[0]))
        if len(srcs) == 1:
            k, b = srcs[0]
            terms.append((k, _term(inputs[k], 1 << b, 1 << w, 1 << t0), (1 << t0) * ((1 << w) - 1)))
            continue
        fields = [min(_base_field(inputs[k], 1 << b, 1 << w), key=lambda n: n.cost) for k, b in srcs]
        node = fields[0]
        for f in fields[1:]:
            node = _bin("^", node, f)
        if t0:
            node = _bin("*", _num(1 << t0), node)
        terms.append((min(k for k, _ in srcs), (1, node), (1 << t0) * ((1 << w) - 1)))
    ordered = _order(terms, descending)
    if base & used:
        node = _sum(ordered, 0)
        return _bin("^", node, _num(base))
    return _sum(ordered, base)


def _fit_xor_of_sum(table: np.ndarray, hint: np.ndarray, inputs: Sequence[_Input], digits: _Digits, origin: tuple,
                    descending: bool) -> _Node | None:
    """f = P ^ Q with P the additive ``hint`` (a swizzled layout's inner layout) and Q additive too."""
    if int(table.min()) < 0 or int(hint.min()) < 0:
        return None
    p = _fit_additive(hint, inputs, digits, origin, descending)
    if p is None:
        return None
    q = _fit_additive(table ^ hint, inputs, digits, origin, descending)
    if q is None:
        return None
    return _bin("^", p, q)


def _fit(table: np.ndarray, inputs: Sequence[_Input], digits: _Digits, origin: tuple, descending: bool,
         depth: int = 1, hint: np.ndarray | None = None) -> tuple[_Node, str] | None:
    """The shortest formula found for ``table`` and how it was found, or None."""
    cands: list[tuple[_Node, str]] = []
    additive = _fit_additive(table, inputs, digits, origin, descending)
    if additive is not None:
        cands.append((additive, "additive"))
    runs = _fit_xor(table, inputs, digits, origin, descending)
    if runs is not None:
        cands.append((runs, "xor"))
    if hint is not None and additive is None and not (runs is not None and runs.text.count("^") == 1):
        # a swizzle that xors one field into one field reads best as chunk ^ row: keep that form
        both = _fit_xor_of_sum(table, hint, inputs, digits, origin, descending)
        if both is not None:
            cands.append((both, "xor of a sum"))
    if cands:
        return min(cands, key=lambda nm: nm[0].cost)  # of equal cost, the first
    if depth == 0:
        return None
    split = _fit_split(table, inputs, digits, origin, descending, depth)
    return None if split is None else (split, "case split")


def _fit_split(table: np.ndarray, inputs: Sequence[_Input], digits: _Digits, origin: tuple, descending: bool,
               depth: int) -> _Node | None:
    """``cond ? a : b`` on one power-of-two digit of one input, each side fitted without it."""
    best: _Node | None = None
    for k, ds in enumerate(digits.per_input):
        for j, (place, radix) in enumerate(ds):
            if radix != 2:
                continue
            rest = list(digits.per_input)
            rest[k] = ds[:j] + ds[j + 1:]
            sub_digits = _Digits(tuple(rest))
            lo_fit = _fit(table, inputs, sub_digits, origin, descending, depth - 1)
            if lo_fit is None:
                continue
            hi_origin = list(origin)
            hi_origin[k] += place
            hi_fit = _fit(table, inputs, sub_digits, tuple(hi_origin), descending, depth - 1)
            if hi_fit is None:
                continue
            lo, hi = lo_fit[0], hi_fit[0]
            x = _Node(inputs[k].symbol, inputs[k].name)
            top = all(p < place for p, _ in ds[:j]) and j == len(ds) - 1 and place * 2 == inputs[k].extent
            if top:
                cond_expr = inputs[k].symbol < place
                node = _select(_Node(cond_expr, f"{x.text} < {place}", _PREC["<"], "<"), cond_expr, lo, hi)
            else:
                mask = _bin("&", x, _num(place))
                cond_expr = sympy.Ne(bitand(inputs[k].symbol, place), 0)
                node = _select(_Node(cond_expr, f"{_wrap(mask, '!=', False)} != 0", _PREC["!="], "!="), cond_expr, hi, lo)
            if best is None or node.cost < best.cost:
                best = node
    return best


# ---------------------------------------------------------------------------------------------
# the subject: what is explained, as inputs, output tables and a verify mapping
# ---------------------------------------------------------------------------------------------
@dataclass
class _Subject:
    title: str
    inputs: list[_Input]
    outputs: list[str]
    tables: list[np.ndarray]
    mapping: Any  # what verify checks
    structural: tuple  # the mapping's own expressions (fallback), in the inputs' symbols
    isa: Any = None  # PtxFormula or None
    descending: bool = False
    subtitle: str = ""
    hints: tuple = ()  # per output, an additive table f is likely to be an xor of (a swizzle's inner layout)


class _TiledView:
    """A :class:`~layoutalg.nvidia.ampere.mma.TiledFragment` seen through the verify protocol: (thread, value) -> (row, col)."""

    def __init__(self, tf: Any):
        self.tf = tf

    def __repr__(self) -> str:
        return f"TiledFragment({self.tf.atom.name} over {self.tf.tile}, warps {self.tf.warps})"

    def verify_domain(self) -> tuple[int, int]:
        return (self.tf.num_threads, self.tf.num_values)

    def verify_eval(self, t: Any, v: Any) -> tuple:
        t, v = np.broadcast_arrays(np.asarray(t, dtype=np.int64), np.asarray(v, dtype=np.int64))
        tab = np.asarray(self.tf.layout.table(), dtype=np.int64)
        idx = tab[t + self.tf.num_threads * v]
        x, y = idx % self.tf.tile[0], idx // self.tf.tile[0]
        if self.tf.atom.operand in ("B", "SFB"):
            x, y = y, x
        return (x, y)


def _lane_helpers(threads: int, name: str) -> tuple:
    if threads == 32:
        return (((4, 8), ("groupID", f"{name} >> 2")), ((1, 4), ("threadID_in_group", f"{name} % 4")))
    if threads % 32 == 0 and threads > 32:
        return (((4, 8), ("groupID", f"({name} % 32) >> 2")), ((1, 4), ("threadID_in_group", f"{name} % 4")))
    return ()


#: the largest domain explain enumerates (points)
MAX_POINTS = 1 << 22


def _tables(mapping: Any, extents: Sequence[int]) -> list[np.ndarray]:
    n = math.prod(int(e) for e in extents)
    if n > MAX_POINTS:
        raise LayoutError(f"explain: the domain {tuple(extents)} has {n} points, more than the {MAX_POINTS} explain "
                          "enumerates; explain a smaller tile (the formula of a layout repeats with its modes)")
    grids = np.indices(tuple(extents), dtype=np.int64)
    if isinstance(mapping, (Layout, ComposedLayout)):
        out = [np.asarray(mapping(*[g for g in grids]), dtype=np.int64)]
    else:
        out = [np.broadcast_to(np.asarray(o, dtype=np.int64), tuple(extents)) for o in mapping.verify_eval(*grids)]
    return [np.ascontiguousarray(o) for o in out]


def _layout_structural(L: Any, syms: Sequence[sympy.Symbol]) -> Any:
    outer: Any = getattr(L, "outer", None)
    if outer is None:  # a Layout
        if len(syms) == 1:
            return mode_expr(L.shape, L.stride, syms[0])
        return sympy.Add(*[mode_expr(L[k].shape, L[k].stride, s) for k, s in enumerate(syms)])
    inner = _layout_structural(L.inner, syms) + L.offset
    if type(outer) is Layout:
        o: Any = outer
        return mode_expr(o.shape, o.stride, inner)
    if isinstance(outer, ComposedLayout):
        raise LayoutError(f"explain: {L} nests a composed layout as its outer function; not supported")
    return outer(inner)


def _names(default: Sequence[str], outputs: Sequence[str], names: Any, op: str) -> tuple[list[str], list[str]]:
    ins, outs = list(default), list(outputs)
    if names is None:
        return ins, outs
    if isinstance(names, str):
        names = [names]
    if isinstance(names, Mapping):
        unknown = [k for k in names if k not in ins and k not in outs]
        if unknown:
            raise LayoutError(f"{op}: names {unknown} are neither inputs {ins} nor outputs {outs}")
        return [str(names.get(n, n)) for n in ins], [str(names.get(n, n)) for n in outs]
    if not isinstance(names, (list, tuple)):
        raise LayoutError(f"{op}: names={names!r} must be a sequence of input names or a mapping old -> new")
    names = list(names)
    if len(names) != len(ins) or not all(isinstance(n, str) and n.isidentifier() for n in names):
        raise LayoutError(f"{op}: names={names!r} must be {len(ins)} identifiers, one per input {ins}")
    return names, outs


def _symbol(name: str) -> sympy.Symbol:
    from .nvidia.common.ptx_formulas import i as i_sym
    from .nvidia.common.ptx_formulas import lane as lane_sym

    if name == "lane":
        return lane_sym
    if name == "i":
        return i_sym
    return sympy.Symbol(name, integer=True, nonnegative=True)


def _subject(x: Any, names: Any) -> _Subject:
    from .inttuple import flatten
    from .nvidia.common.fragment import Fragment
    from .nvidia.ampere.mma import TiledFragment
    from .parse import as_concrete_layout

    op = "explain"
    if isinstance(x, Tensor):
        # a partition (layoutalg.tiled / tensor): element c of this thread sits at offset + layout(c),
        # swizzled by the pointer's swizzle when the tensor carries one
        x = ComposedLayout(x.swizzle or Swizzle(0, 0, 0), x.offset, x.layout) if (x.offset or x.swizzle) else x.layout
    if isinstance(x, str):
        x = as_concrete_layout(x, op, "layout")
    if isinstance(x, (Layout, ComposedLayout)):
        L: Any = as_concrete_layout(x, op, "layout")
        inner: Any = L
        while not isinstance(inner, Layout):  # the innermost layout gives the domain
            inner = inner.inner
        dom: Any = inner
        rank = len(L) if isinstance(L.shape, tuple) else 1
        if rank == 1:
            default = ["i"]
            leaves = [flatten(dom.shape)]
        else:
            default = ["row", "col"] if rank == 2 else [f"x{k}" for k in range(rank)]
            leaves = [flatten(dom[k].shape) for k in range(rank)]
        ins, outs = _names(default, ["offset"], names, op)
        extents = [int(math.prod(lv)) for lv in leaves]
        inputs = [_Input(n, _symbol(n), e, _radices(lv), "mod") for n, e, lv in zip(ins, extents, leaves)]
        syms = [inp.symbol for inp in inputs]
        hints: tuple = ()
        if isinstance(L, ComposedLayout):  # swizzles over a layout: the layout is the sum the swizzle xors
            core: Any = L
            while isinstance(getattr(core, "outer", None), Swizzle):
                core = core.inner
            if isinstance(core, Layout):
                hints = (_tables(core, extents)[0],)
        return _Subject(str(L), inputs, outs, _tables(L, extents), L, (_layout_structural(L, syms),),
                        descending=True, hints=hints)
    if isinstance(x, TiledFragment):
        tf: Any = x
        view = _TiledView(tf)
        T, V = view.verify_domain()
        ins, outs = _names(["thread", "i"], ["row", "col"], names, op)
        inputs = [_Input(ins[0], _symbol(ins[0]), T, _radices(flatten(tf.layout.shape[0])), "mod", _lane_helpers(T, ins[0])),
                  _Input(ins[1], _symbol(ins[1]), V, _radices(flatten(tf.layout.shape[1])), "and")]
        tabs = _tables(view, (T, V))
        return _Subject(repr(view), inputs, outs, tabs, view, (), subtitle=f"tile {tf.tile}, warps {tf.warps}")
    if isinstance(x, Fragment):
        fr: Any = x
        T, V = fr.verify_domain()
        formula = fr.formula
        ins, outs = _names(["lane" if T == 32 else "tid", "i"], list(formula.names), names, op)
        inputs = [_Input(ins[0], _symbol(ins[0]), T, _radices(flatten(fr.layout.shape[0])), "mod", _lane_helpers(T, ins[0])),
                  _Input(ins[1], _symbol(ins[1]), V, _radices(flatten(fr.layout.shape[1])), "and")]
        structural = tuple(fr.verify_symbolic(inputs[0].symbol, inputs[1].symbol))
        return _Subject(fr.name, inputs, outs, _tables(fr, (T, V)), fr, structural, isa=formula,
                        subtitle=fr.instruction)
    if hasattr(x, "verify_domain") and hasattr(x, "verify_eval"):
        dom = [int(d) for d in x.verify_domain()]
        tabs = _tables(x, dom)
        generic_formula = getattr(x, "formula", None)
        out_names = list(getattr(generic_formula, "names", [f"out{k}" for k in range(len(tabs))]))
        ins, outs = _names([f"x{k}" for k in range(len(dom))], out_names, names, op)
        inputs = [_Input(n, _symbol(n), e, _radices([e])) for n, e in zip(ins, dom)]
        structural = ()
        if hasattr(x, "verify_symbolic"):
            structural = tuple(x.verify_symbolic(*[inp.symbol for inp in inputs]))
        return _Subject(repr(x), inputs, outs, tabs, x, structural)
    raise LayoutError(
        f"explain: {x!r} is not a Layout, ComposedLayout, layout text, Fragment, TiledFragment, Tensor (a partition) or an object "
        "with verify_domain()/verify_eval()"
    )


# ---------------------------------------------------------------------------------------------
# the result
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Explanation:
    """A mapping written as one proven formula per output: ``exprs[k]`` is output ``outputs[k]``.

    ``inputs`` are the sympy symbols the formulas use (``lane``/``tid`` and ``i`` for fragments);
    ``texts`` the same formulas in C syntax with the ISA's named quantities (``helpers``, e.g.
    ``("groupID", "lane >> 2")``); ``verdict`` is :func:`~layoutalg.verify.verify`'s proof that
    the formulas equal the mapping on its whole domain; ``ops`` counts their operators
    (:func:`count_ops`), ``isa_ops`` those of the PTX ISA's own formula (fragments only).
    """

    title: str
    inputs: tuple
    outputs: tuple
    exprs: tuple
    texts: tuple
    helpers: tuple
    verdict: Verdict
    isa_exprs: tuple | None = None
    subtitle: str = ""
    methods: tuple = field(default=(), compare=False)

    @property
    def ops(self) -> int:
        """Operators in all the formulas together (:func:`count_ops`)."""
        return count_ops(self.exprs)

    @property
    def isa_ops(self) -> int | None:
        """Operators in the PTX ISA's formula for the same outputs, or None when there is none."""
        return None if self.isa_exprs is None else count_ops(self.isa_exprs)

    def per_output_ops(self) -> dict[str, tuple[int, int | None]]:
        """``{output: (our operators, the ISA's operators or None)}``."""
        isa = self.isa_exprs or (None,) * len(self.exprs)
        return {n: (count_ops(e), None if f is None else count_ops(f)) for n, e, f in zip(self.outputs, self.exprs, isa)}

    def as_dict(self) -> dict[str, Any]:
        """``{output name: sympy expression}``."""
        return dict(zip(self.outputs, self.exprs))

    def formula(self, output: str | None = None) -> str:
        """``"name = text"`` of one output (the only one when ``output`` is None), or all, one per line."""
        if output is None and len(self.outputs) == 1:
            output = self.outputs[0]
        if output is None:
            return "\n".join(f"{n} = {t}" for n, t in zip(self.outputs, self.texts))
        if output not in self.outputs:
            raise LayoutError(f"Explanation.formula: no output {output!r}; outputs are {self.outputs}")
        k = self.outputs.index(output)
        return f"{output} = {self.texts[k]}"

    @property
    def text(self) -> str:
        """The whole explanation as text: title, named quantities, one line per output, the proof."""
        head = self.title + (f"  ({self.subtitle})" if self.subtitle else "")
        lines = [head]
        if self.helpers:
            lines.append("  " + ";  ".join(f"{n} = {d}" for n, d in self.helpers))
        width = max(len(n) for n in self.outputs)
        lines += [f"  {n.ljust(width)} = {t}" for n, t in zip(self.outputs, self.texts)]
        proof = f"proven ({self.verdict.method}, {self.verdict.checked} points)" if self.verdict else "NOT PROVEN"
        tail = f"  {proof}; {self.ops} operators"
        if self.isa_exprs is not None:
            tail += f" (the PTX ISA's formula: {self.isa_ops})"
        lines.append(tail)
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.text


# ---------------------------------------------------------------------------------------------
# explain
# ---------------------------------------------------------------------------------------------
def _input_key(inputs: Sequence[_Input]) -> tuple:
    return tuple((i.name, i.extent, i.radices, i.style, i.helpers) for i in inputs)


@functools.lru_cache(maxsize=4096)
def _fit_cached(table_bytes: bytes, shape: tuple, inputs_key: tuple, descending: bool,
                hint_bytes: bytes | None = None) -> tuple | None:
    table = np.frombuffer(table_bytes, dtype=np.int64).reshape(shape)
    hint = None if hint_bytes is None else np.frombuffer(hint_bytes, dtype=np.int64).reshape(shape)
    inputs = [_Input(n, _symbol(n), e, r, s, h) for n, e, r, s, h in inputs_key]
    got = _fit(table, inputs, _all_digits(inputs), (0,) * len(inputs), descending, hint=hint)
    if got is None:
        return None
    node, method = got
    return node.expr, node.text, method


#: verdicts by (the function's tables, the formulas): a verdict depends on the function, not on its carrier
_VERDICTS: dict = {}


def _verify_once(subj: "_Subject", exprs: tuple, syms: tuple) -> Verdict:
    key = (_tables_key(subj.tables), exprs, syms)
    v = _VERDICTS.get(key)
    if v is None:
        v = verify(subj.mapping, exprs, syms)
        if len(_VERDICTS) > 8192:
            _VERDICTS.clear()
        _VERDICTS[key] = v
    return v


def explain(x: Any, *, names: Any = None) -> Explanation:
    """explain(x) -> Explanation: one formula per output of ``x``, each proven equal to ``x`` by :func:`verify`.

    ``x`` is a :class:`~layoutalg.layout.Layout` or :class:`~layoutalg.composed.ComposedLayout`
    (or its CuTe text; inputs: one per top-level mode, named ``row, col`` for rank 2, ``i`` for
    rank 1; output ``offset``), an :class:`~layoutalg.nvidia.common.fragment.Fragment` (inputs ``lane``
    -- ``tid`` for a warpgroup -- and ``i``; outputs the PTX formula's, e.g. ``row, col``), a
    :class:`~layoutalg.nvidia.ampere.mma.TiledFragment` partition (``thread, i -> row, col``), or any
    object speaking the verify protocol (``verify_domain``/``verify_eval``). ``names`` renames the
    inputs (a sequence, one per input) or any input/output (a mapping ``old -> new``).

    The formulas use ``+ - *``, shifts, masks, ``%`` and ``^`` (see the module docstring for the
    search); for a fragment they use the ISA's ``groupID`` and ``threadID_in_group``. Preconditions:
    static layouts (LayoutError otherwise).

    >>> print(explain("(4,8):(8,1)").formula())
    offset = 8 * row + col
    >>> from layoutalg.nvidia.ampere import mma
    >>> print(explain(mma.fragment("m8n8k4", "f64", "C")).text)
    m8n8k4.f64.C[ctype=f64]  (mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64)
      groupID = lane >> 2;  threadID_in_group = lane % 4
      row = groupID
      col = 2 * threadID_in_group + i
      proven (symbolic, 64 points); 4 operators (the PTX ISA's formula: 5)
    """
    subj = _subject(x, names)
    syms = tuple(inp.symbol for inp in subj.inputs)
    ikey = _input_key(subj.inputs)
    exprs, texts, methods = [], [], []
    for k, tab in enumerate(subj.tables):
        hint = subj.hints[k] if subj.hints else None
        got = _fit_cached(tab.tobytes(), tab.shape, ikey, subj.descending, None if hint is None else hint.tobytes())
        if got is None:
            if not subj.structural:
                raise LayoutError(f"explain: no formula found for output {subj.outputs[k]!r} of {subj.title}")
            e = subj.structural[k]
            exprs.append(e)
            texts.append(_c_text(e))
            methods.append("structural")
        else:
            exprs.append(got[0])
            texts.append(got[1])
            methods.append(got[2])
    v = _verify_once(subj, tuple(exprs), syms)
    if not v:  # pragma: no cover - a fitted formula is compared on every point before it is kept
        raise RuntimeError(f"explain: internal error, the formula for {subj.title} does not verify: {v!r}")
    used = []
    for inp in subj.inputs:
        for _, (name, definition) in inp.helpers:
            if any(_mentions(t, name) for t in texts) and (name, definition) not in used:
                used.append((name, definition))
    isa = tuple(subj.isa.outputs) if subj.isa is not None else None
    return Explanation(subj.title, syms, tuple(subj.outputs), tuple(exprs), tuple(texts), tuple(used), v, isa,
                       subj.subtitle, tuple(methods))


def _tables_key(tables: Sequence[np.ndarray]) -> bytes:
    import hashlib

    h = hashlib.sha1()
    for t in tables:
        h.update(str(t.shape).encode())
        h.update(t.tobytes())
    return h.digest()


def _mentions(text: str, name: str) -> bool:
    import re

    return re.search(rf"\b{re.escape(name)}\b", text) is not None


@guarded
def c_text(expr: Any, names: Mapping[Any, str] | None = None) -> str:
    """``expr`` (sympy, with ``Mod``, ``floor``, ``Piecewise`` and the bit helpers) written in C syntax.

    ``names`` maps sub-expressions to names printed instead (``{shr(lane, 2): "groupID"}``).
    ``Piecewise`` becomes ``cond ? a : b``; operands of bit operators are bracketed.

    >>> from layoutalg.nvidia.common.ptx_formulas import FORMULAS, groupID, lane
    >>> row, col = FORMULAS["m16n8k8.C"].outputs
    >>> c_text(row, {groupID: "groupID"})
    'i < 2 ? groupID : groupID + 8'
    >>> c_text(col)
    '2 * (lane % 4) + (i & 1)'
    """
    return _to_node(as_formula(expr, op="c_text"), dict(names or {})).text


_REL = {sympy.StrictLessThan: "<", sympy.LessThan: "<=", sympy.StrictGreaterThan: ">", sympy.GreaterThan: ">=",
        sympy.Eq: "==", sympy.Ne: "!="}
_FUN = {"bitand": "&", "bitor": "|", "bitxor": "^", "shr": ">>", "shl": "<<"}


def _to_node(e: Any, names: dict) -> _Node:
    if e in names:
        return _Node(e, names[e])
    if isinstance(e, (bool, sympy.logic.boolalg.BooleanAtom)):
        return _Node(e, "1" if bool(e) else "0")
    if e.is_Symbol or e.is_Integer:
        return _Node(e, str(e))
    if isinstance(e, sympy.Add):
        terms = []
        for t in e.as_ordered_terms():
            c, _ = t.as_coeff_Mul()
            if c < 0:
                terms.append((-1, _to_node(-t, names)))
            else:
                terms.append((1, _to_node(t, names)))
        return _sum_nodes(e, terms)
    if isinstance(e, sympy.Mul):
        c, rest = e.as_coeff_Mul()
        if c.is_Rational and not c.is_Integer:
            num = _to_node(c.p * rest, names)
            return _Node(e, f"{_wrap(num, '/', False)} / {c.q}", _PREC["/"], "/")
        if c == -1:
            inner = _to_node(rest, names)
            return _Node(e, f"-{_wrap(inner, '*', True)}", _PREC["*"], "*")
        args = ([_Node(c, str(c))] if c != 1 else []) + [_to_node(a, names) for a in sympy.Mul.make_args(rest)]
        node = args[0]
        for a in args[1:]:
            node = _Node(e, f"{_wrap(node, '*', False)} * {_wrap(a, '*', True)}", _PREC["*"], "*")
        return node
    if isinstance(e, sympy.Mod):
        a, b = (_to_node(x, names) for x in e.args)
        return _Node(e, f"{_wrap(a, '%', False)} % {_wrap(b, '%', True)}", _PREC["%"], "%")
    if isinstance(e, sympy.floor):
        num, den = sympy.fraction(sympy.together(e.args[0]))
        a, b = _to_node(num, names), _to_node(den, names)
        return _Node(e, f"{_wrap(a, '/', False)} / {_wrap(b, '/', True)}", _PREC["/"], "/")
    if type(e).__name__ in _FUN and isinstance(e, sympy.Function):
        op = _FUN[type(e).__name__]
        a, b = (_to_node(x, names) for x in e.args)
        return _Node(e, f"{_wrap(a, op, False)} {op} {_wrap(b, op, True)}", _PREC[op], op)
    if isinstance(e, sympy.Piecewise):
        *head, (last, _) = e.args
        node = _to_node(last, names)
        for value, cond in reversed(head):
            node = _select(_to_node(cond, names), cond, _to_node(value, names), node)
        return _Node(e, node.text, node.prec, node.op)
    for cls, op in _REL.items():
        if isinstance(e, cls):
            a, b = (_to_node(x, names) for x in e.args)
            prec = _PREC.get(op, 9 if op in ("==", "!=") else 10)
            return _Node(e, f"{_wrap(a, '<', False) if prec == 10 else _wrap(a, '!=', False)} {op} {b.text}", prec, op)
    if isinstance(e, (sympy.And, sympy.Or)):
        op, prec = ("&&", 5) if isinstance(e, sympy.And) else ("||", 4)
        parts = [_to_node(a, names) for a in e.args]
        # && inside || is bracketed for the reader
        return _Node(e, f" {op} ".join(p.text if p.prec > prec and p.op not in ("&&", "||") else f"({p.text})"
                                       for p in parts), prec, op)
    return _Node(e, str(e))  # pragma: no cover - nothing else is printed


def _sum_nodes(e: Any, terms: list[tuple[int, _Node]]) -> _Node:
    text = ""
    for k, (sgn, n) in enumerate(terms):
        t = _wrap(n, "+" if (k == 0 and sgn > 0) else "-", k > 0)
        text = (t if sgn > 0 else f"-{t}") if k == 0 else text + f" {'+' if sgn > 0 else '-'} {t}"
    return _Node(e, text, _PREC["+"], "+")


def _c_text(e: Any) -> str:
    return c_text(e)


class _CallableModule(type(functools)):  # type: ignore[misc]
    """This module, which the package also exports as the function :func:`explain`: importing
    ``layoutalg.explain`` binds the module to that name, so calling it calls the function."""

    def __call__(self, *args: Any, **kwargs: Any) -> Explanation:
        return explain(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
