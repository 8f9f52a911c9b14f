"""Formulas written as text, read by a grammar: text is data, never code.

``verify(L, "8 * r + c", (r, c))``, ``explain``'s helpers and the command line take formulas as
strings. They are read here by a small recursive-descent parser that builds sympy expressions
from a fixed vocabulary and never evaluates the text (no ``eval``, no ``sympy.sympify`` of user
text, which runs Python). Anything outside the grammar -- a call of an unknown name, an attribute
(``.``), a subscript (``[``), a string, a lambda, a name beginning with ``__`` -- is a
:class:`~layoutalg.errors.LayoutError` naming what was refused, raised before anything is built.

Grammar (Python's precedence, loosest first; ``^`` is XOR as in C and Python, not power)::

    formulas := formula ("," formula)*           (several outputs: a tuple)
    formula  := or ["?" formula ":" formula]     (C's conditional: a Piecewise)
    or       := and (("||" | "or") and)*
    and      := not (("&&" | "and") not)*
    not      := ("!" | "not") not | compare
    compare  := bitor [("<" | "<=" | ">" | ">=" | "==" | "!=") bitor]
    bitor    := bitxor ("|" bitxor)*
    bitxor   := bitand ("^" bitand)*
    bitand   := shift ("&" shift)*
    shift    := sum (("<<" | ">>") sum)*
    sum      := term (("+" | "-") term)*
    term     := unary (("*" | "/" | "//" | "%") unary)*
    unary    := ("-" | "+") unary | power
    power    := atom ["**" unary]
    atom     := integer | name | function "(" args ")" | "(" formulas ")"
    integer  := decimal | 0x hex | 0b binary     (underscores allowed between digits)

Functions: ``floor``, ``ceiling``, ``Mod``, ``Min``, ``Max``, ``Abs``, ``sign``,
``Piecewise((value, condition), ..., (value, True))`` and the bit helpers of
:mod:`layoutalg.symbolic` (``bitand``, ``bitor``, ``bitxor``, ``shr``, ``shl``); ``%`` is ``Mod``,
``//`` is ``floor`` of the quotient, ``& | ^ >> <<`` are the bit helpers. ``True``/``False`` are
conditions. A name is one of the ``names`` given (the inputs of a formula); without ``names``
every name becomes a non-negative integer symbol.

    >>> import sympy
    >>> r, c = sympy.symbols("r c", integer=True, nonnegative=True)
    >>> parse_formula("8 * r + c % 4", (r, c))
    8*r + Mod(c, 4)
    >>> parse_formula("(lane >> 2) + 8 * (i & 1)")
    8*bitand(i, 1) + shr(lane, 2)
    >>> parse_formula("i < 2 ? lane >> 2 : (lane >> 2) + 8")
    Piecewise((shr(lane, 2), i < 2), (shr(lane, 2) + 8, True))
    >>> parse_formula("__import__('os').system('echo hi')")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    layoutalg.errors.LayoutError: formula: the name '__import__' is refused (names beginning with '__' are not formula names) ...
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Iterable, Mapping
from typing import Any, Union

import sympy

from .errors import LayoutError
from .symbolic import bitand, bitor, bitxor, shl, shr

__all__ = ["parse_formula", "as_formula", "FUNCTIONS", "MAX_LENGTH"]

#: the longest formula text read (characters)
MAX_LENGTH = 100_000
#: the deepest nesting of parentheses / operators read (each level of parentheses counts two)
MAX_DEPTH = 64
#: the most decimal digits one integer literal may have (Python's int <-> str limit)
MAX_DIGITS = 4300
#: the largest constant exponent of ``**`` and constant shift of ``<<`` (a bigger one is a number too large to build)
MAX_EXPONENT = 4096


def _piecewise(*pairs: Any) -> Any:
    return sympy.Piecewise(*pairs)


#: the functions a formula may call, by name
FUNCTIONS: dict[str, Any] = {
    "floor": sympy.floor, "ceiling": sympy.ceiling, "Mod": sympy.Mod, "Min": sympy.Min, "Max": sympy.Max,
    "Abs": sympy.Abs, "sign": sympy.sign, "Piecewise": _piecewise,
    "bitand": bitand, "bitor": bitor, "bitxor": bitxor, "shr": shr, "shl": shl,
}
_ARITY = {"floor": (1, 1), "ceiling": (1, 1), "Mod": (2, 2), "Min": (1, 64), "Max": (1, 64), "Abs": (1, 1),
          "sign": (1, 1), "Piecewise": (1, 64), "bitand": (2, 2), "bitor": (2, 2), "bitxor": (2, 2),
          "shr": (2, 2), "shl": (2, 2)}

_TOKEN = re.compile(
    r"\s*(?:(?P<num>0[xX][0-9a-fA-F_]+|0[bB][01_]+|\d[\d_]*)"
    r"|(?P<name>[A-Za-z_][A-Za-z0-9_]*)"
    r"|(?P<op>\*\*|//|<<|>>|<=|>=|==|!=|&&|\|\||[-+*/%&|^<>()?:,!]))"
)

Formula = Union[sympy.Basic, tuple]  # noqa: UP007 - a runtime alias, kept valid on 3.10


def _clip(text: str, n: int = 80) -> str:
    return text if len(text) <= n else text[: n - 3] + "..."


class _Reader:
    def __init__(self, text: str, names: dict[str, Any] | None, op: str):
        self.text, self.names, self.op = text, names, op
        self.toks: list[tuple[str, str, int]] = []
        pos = 0
        while True:
            m = _TOKEN.match(text, pos)
            if not m or m.end() == pos:
                rest = text[pos:]
                if not rest.strip():
                    break
                col = pos + len(rest) - len(rest.lstrip()) + 1
                ch = text[col - 1]
                what = {"'": "a string", '"': "a string", ".": "an attribute or a decimal point",
                        "[": "a subscript", "]": "a subscript", "{": "a set or dict", "}": "a set or dict",
                        "=": "an assignment", ";": "a statement", "@": "a decorator or matrix product",
                        "~": "bitwise not", "\\": "a backslash", "#": "a comment"}.get(ch, "a character outside the grammar")
                self.toks.append(("bad", f"{ch!r} ({what}) is refused", col))
                break
            kind = m.lastgroup or ""
            self.toks.append((kind, m.group(kind), m.start(kind) + 1))
            pos = m.end()
        self.k = 0
        self.depth = 0

    def fail(self, msg: str, col: int | None = None) -> None:
        where = f" at column {col}" if col is not None else " at the end"
        raise LayoutError(f"{self.op}: {msg}{where} of {_clip(self.text)!r}")

    def peek(self) -> tuple[str, str, int] | None:
        t = self.toks[self.k] if self.k < len(self.toks) else None
        if t is not None and t[0] == "bad":
            self.fail(t[1], t[2])  # text outside the grammar: refused when the reader reaches it
        return t

    def accept(self, *values: str) -> str | None:
        t = self.peek()
        if t is not None and t[0] in ("op", "name") and t[1] in values:
            self.k += 1
            return t[1]
        return None

    def expect(self, value: str) -> None:
        if not self.accept(value):
            t = self.peek()
            self.fail(f"expected {value!r}" + (f", found {t[1]!r}" if t else ""), t[2] if t else None)

    def col(self) -> int | None:
        t = self.peek()
        return t[2] if t else None

    def enter(self) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            self.fail(f"nesting deeper than {MAX_DEPTH} levels is refused", self.col())

    # --- grammar ---------------------------------------------------------------------------
    def formulas(self) -> Any:
        first = self.formula()
        if self.peek() is None or self.peek()[1] != ",":  # type: ignore[index]
            return first
        out = [first]
        while self.accept(","):
            out.append(self.formula())
        return tuple(out)

    def formula(self) -> Any:
        self.enter()
        cond = self.or_()
        if self.accept("?"):
            a = self.formula()
            self.expect(":")
            b = self.formula()
            cond = sympy.Piecewise((self.value(a), self.condition(cond)), (self.value(b), True))
        self.depth -= 1
        return cond

    def or_(self) -> Any:
        a = self.and_()
        while self.accept("||", "or"):
            a = sympy.Or(self.condition(a), self.condition(self.and_()))
        return a

    def and_(self) -> Any:
        a = self.not_()
        while self.accept("&&", "and"):
            a = sympy.And(self.condition(a), self.condition(self.not_()))
        return a

    def not_(self) -> Any:
        if self.accept("!", "not"):
            self.enter()
            v = sympy.Not(self.condition(self.not_()))
            self.depth -= 1
            return v
        return self.compare()

    def compare(self) -> Any:
        a = self.bitor()
        t = self.peek()
        ops = {"<": sympy.Lt, "<=": sympy.Le, ">": sympy.Gt, ">=": sympy.Ge, "==": sympy.Eq, "!=": sympy.Ne}
        if t is not None and t[0] == "op" and t[1] in ops:
            self.k += 1
            b = self.bitor()
            a = ops[t[1]](self.value(a), self.value(b))
            t2 = self.peek()
            if t2 is not None and t2[0] == "op" and t2[1] in ops:
                self.fail(f"chained comparison {t2[1]!r} is refused (write a < b && b < c)", t2[2])
        return a

    def _binary(self, sub: Any, table: dict[str, Any]) -> Any:
        a = sub()
        while True:
            t = self.peek()
            if t is None or t[0] != "op" or t[1] not in table:
                return a
            self.k += 1
            b = sub()
            a = table[t[1]](self.value(a), self.value(b), t[2])

    def bitor(self) -> Any:
        return self._binary(self.bitxor, {"|": lambda a, b, c: bitor(a, b)})

    def bitxor(self) -> Any:
        return self._binary(self.bitand, {"^": lambda a, b, c: bitxor(a, b)})

    def bitand(self) -> Any:
        return self._binary(self.shift, {"&": lambda a, b, c: bitand(a, b)})

    def shift(self) -> Any:
        return self._binary(self.sum_, {">>": lambda a, b, c: shr(a, b), "<<": self._shl})

    def _shl(self, a: Any, b: Any, col: int) -> Any:
        self.check_size(b, col, "<<")
        return shl(a, b)

    def sum_(self) -> Any:
        return self._binary(self.term, {"+": lambda a, b, c: a + b, "-": lambda a, b, c: a - b})

    def term(self) -> Any:
        return self._binary(self.unary, {"*": lambda a, b, c: a * b, "/": self._div, "//": self._floordiv,
                                         "%": self._mod})

    def _div(self, a: Any, b: Any, col: int) -> Any:
        if b == 0:
            self.fail("division by zero", col)
        return a / b

    def _floordiv(self, a: Any, b: Any, col: int) -> Any:
        if b == 0:
            self.fail("division by zero", col)
        return sympy.floor(a / b)

    def _mod(self, a: Any, b: Any, col: int) -> Any:
        if b == 0:
            self.fail("modulo by zero", col)
        return sympy.Mod(a, b)

    def unary(self) -> Any:
        if self.accept("-"):
            self.enter()
            v = -self.value(self.unary())
            self.depth -= 1
            return v
        if self.accept("+"):
            self.enter()
            v = self.value(self.unary())
            self.depth -= 1
            return v
        return self.power()

    def power(self) -> Any:
        base = self.atom()
        t = self.peek()
        if t is not None and t[1] == "**":
            self.k += 1
            self.enter()
            ex = self.value(self.unary())
            self.depth -= 1
            self.check_size(ex, t[2], "**")
            return self.value(base) ** ex
        return base

    def check_size(self, ex: Any, col: int, what: str) -> None:
        if isinstance(ex, sympy.Integer) and abs(int(ex)) > MAX_EXPONENT:
            self.fail(f"the constant {int(ex)} after {what!r} is larger than {MAX_EXPONENT}: the number would not be "
                      "built", col)

    def atom(self) -> Any:
        t = self.peek()
        if t is None:
            self.fail("expected a number, a name or '('")
        kind, v, col = t  # type: ignore[misc]
        if kind == "num":
            self.k += 1
            digits = v.replace("_", "")
            if len(digits) > MAX_DIGITS:
                self.fail(f"an integer of more than {MAX_DIGITS} digits is refused", col)
            try:
                return sympy.Integer(int(digits, 0) if not digits.isdigit() else int(digits))
            except ValueError:
                self.fail(f"{v!r} is not an integer", col)
        if kind == "name":
            self.k += 1
            nxt = self.peek()
            if nxt is not None and nxt[1] == "(":
                return self.call(v, col)
            return self.name(v, col)
        if v == "(":
            self.k += 1
            self.enter()
            inner = self.formulas()
            self.expect(")")
            self.depth -= 1
            return inner
        self.fail(f"expected a number, a name or '(', found {v!r}", col)

    def name(self, v: str, col: int) -> Any:
        if keyword.iskeyword(v) and v not in ("True", "False"):
            self.fail(f"the Python keyword {v!r} is refused (a formula is not Python)", col)
        if v.startswith("__"):
            self.fail(f"the name {v!r} is refused (names beginning with '__' are not formula names)", col)
        if v in ("True", "true"):
            return sympy.true
        if v in ("False", "false"):
            return sympy.false
        if self.names is None:
            if v in FUNCTIONS or v in ("and", "or", "not"):
                self.fail(f"{v!r} is a function or operator, not a value", col)
            return sympy.Symbol(v, integer=True, nonnegative=True)
        if v in self.names:
            return self.names[v]
        known = ", ".join(self.names) or "none"
        self.fail(f"the name {v!r} is not an input of the formula (inputs: {known})", col)

    def call(self, fn: str, col: int) -> Any:
        if fn.startswith("__"):
            self.fail(f"the name {fn!r} is refused (names beginning with '__' are not formula names)", col)
        if fn not in FUNCTIONS:
            self.fail(f"calling {fn!r} is refused: a formula may call only {', '.join(FUNCTIONS)}", col)
        self.expect("(")
        self.enter()
        args: list[Any] = []
        if fn == "Piecewise":
            while True:
                self.expect("(")
                val = self.value(self.formula())
                self.expect(",")
                cond = self.condition(self.formula())
                self.expect(")")
                args.append((val, cond))
                if not self.accept(","):
                    break
        elif not (self.peek() is not None and self.peek()[1] == ")"):  # type: ignore[index]
            args.append(self.formula())
            while self.accept(","):
                args.append(self.formula())
        self.expect(")")
        self.depth -= 1
        lo, hi = _ARITY[fn]
        if not lo <= len(args) <= hi:
            self.fail(f"{fn} takes {lo if lo == hi else f'{lo} to {hi}'} argument{'s' if hi > 1 else ''}, "
                      f"got {len(args)}", col)
        if fn != "Piecewise":
            args = [self.value(a) for a in args]
            if fn == "shl":
                self.check_size(args[1], col, "shl")
        try:
            return FUNCTIONS[fn](*args)
        except (TypeError, ValueError) as e:
            self.fail(f"{fn}{tuple(args)} is not a valid call ({e})", col)

    # --- typing of the pieces --------------------------------------------------------------------
    def value(self, x: Any) -> Any:
        if isinstance(x, tuple):
            self.fail("a tuple is not a value here (several outputs are separated by ',' at the top level only)",
                      self.col())
        if isinstance(x, sympy.logic.boolalg.Boolean) and not isinstance(x, sympy.Symbol):
            return sympy.Piecewise((1, x), (0, True))
        return x

    def condition(self, x: Any) -> Any:
        if isinstance(x, tuple):
            self.fail("a tuple is not a condition", self.col())
        if isinstance(x, (sympy.logic.boolalg.Boolean, sympy.core.relational.Relational)):
            return x
        return sympy.Ne(x, 0)  # C: a value is true when it is not zero


def _names(names: Any, op: str) -> dict[str, Any] | None:
    if names is None:
        return None
    if isinstance(names, Mapping):
        items = list(names.items())
    else:
        if isinstance(names, (str, sympy.Basic)):
            names = [names]
        items = []
        for s in names:
            if isinstance(s, sympy.Symbol):
                items.append((s.name, s))
            elif isinstance(s, str) and s.isidentifier():
                items.append((s, sympy.Symbol(s, integer=True, nonnegative=True)))
            else:
                raise LayoutError(f"{op}: input {s!r} is not a sympy Symbol or a name")
    out: dict[str, Any] = {}
    for k, v in items:
        if not isinstance(k, str) or not k.isidentifier() or k.startswith("__"):
            raise LayoutError(f"{op}: {k!r} is not a formula name")
        out[k] = v
    return out


def parse_formula(text: str, names: Any = None, *, op: str = "formula") -> Formula:
    """The sympy expression (or tuple of them, for ``"row, col"``) that ``text`` writes; nothing is evaluated.

    ``names``: the symbols a name may stand for -- a sequence of sympy Symbols (each read by its
    name), of names (each becomes a non-negative integer symbol), or a mapping name -> expression.
    Without ``names`` every name becomes a non-negative integer symbol. ``op`` prefixes the error.

    >>> import sympy
    >>> lane = sympy.Symbol("lane", integer=True, nonnegative=True)
    >>> parse_formula("lane // 4 + Piecewise((8, lane >= 16), (0, True))", [lane])
    Piecewise((8, lane >= 16), (0, True)) + floor(lane/4)
    >>> parse_formula("lane.real", [lane])
    Traceback (most recent call last):
    ...
    layoutalg.errors.LayoutError: formula: '.' (an attribute or a decimal point) is refused at column 5 of 'lane.real'
    """
    if not isinstance(text, str):
        raise LayoutError(f"{op}: {text!r} is not formula text")
    if len(text) > MAX_LENGTH:
        raise LayoutError(f"{op}: a formula of {len(text)} characters is longer than {MAX_LENGTH}")
    r = _Reader(text, _names(names, op), op)
    if not r.toks:
        raise LayoutError(f"{op}: the formula is empty")
    try:
        out = r.formulas()
    except RecursionError:  # pragma: no cover - MAX_DEPTH stops the reader first
        raise LayoutError(f"{op}: the formula nests too deeply") from None
    t = r.peek()
    if t is not None:
        r.fail(f"unexpected {t[1]!r}", t[2])
    return out


def as_formula(x: Any, names: Any = None, *, op: str = "formula") -> Formula:
    """``x`` as sympy: text is read by :func:`parse_formula`; sympy expressions and integers pass through;
    a tuple or list gives a tuple. Anything else is a LayoutError (nothing is converted through its text).

    >>> as_formula(["r + 1", 3], ["r"])
    (r + 1, 3)
    """
    if isinstance(x, str):
        return parse_formula(x, names, op=op)
    if isinstance(x, (tuple, list)):
        out: list[Any] = []
        for e in x:
            v = as_formula(e, names, op=op)
            if isinstance(v, tuple):
                raise LayoutError(f"{op}: {e!r} gives several outputs inside a tuple of outputs")
            out.append(v)
        return tuple(out)
    if isinstance(x, bool):
        return sympy.true if x else sympy.false
    if isinstance(x, sympy.Basic):
        return x
    if isinstance(x, int):
        return sympy.Integer(x)
    try:
        import numpy as np

        if isinstance(x, np.integer):
            return sympy.Integer(int(x))
    except ImportError:  # pragma: no cover
        pass
    raise LayoutError(f"{op}: {x!r} ({type(x).__name__}) is not a formula: give text, a sympy expression or an int")


def formula_names(symbols: Iterable[Any]) -> dict[str, Any]:
    """name -> symbol for ``symbols`` (the names a formula over them may use)."""
    return {s.name: s for s in symbols if isinstance(s, sympy.Symbol)}
