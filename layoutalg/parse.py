"""Reading layouts written in CuTe notation.

Grammar (whitespace is ignored)::

    composed := component ( "o" component )*
    component:= swizzle | layout | offset
    swizzle  := ("Swizzle" | "Sw") "<" int "," int "," int ">"
    layout   := tuple [ ":" tuple ]          (no stride: compact column-major)
    tuple    := "(" tuple ("," tuple)* ")" | leaf
    leaf     := term (("+" | "-") term)*
    term     := factor ("*"? factor)*        (``2k``, ``2*k`` and ``1T`` are products)
    factor   := ["-"] digits | "_" digits | identifier

Identifiers become positive-integer sympy symbols; ``_8`` is CuTe's spelling of the static 8.

    >>> parse("((8,2),(4,4)):((4,32),(1,64))")
    Layout(((8, 2), (4, 4)), ((4, 32), (1, 64)))
    >>> parse("(_8,_4):(_1,_8)")
    Layout((8, 4), (1, 8))
    >>> str(parse("((8,m),(T,2k)):((1T,SBO),(1,LBO))"))
    '((8,m),(T,2*k)):((T,SBO),(1,LBO))'
    >>> parse("(8,4):(1,8")
    Traceback (most recent call last):
    ...
    layoutalg.errors.LayoutError: parse: expected ')' at column 11 of '(8,4):(1,8'
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

import sympy

from .errors import LayoutError
from .layout import Layout

__all__ = ["parse", "symbol", "as_concrete_layout"]

_TOKEN = re.compile(
    r"\s*(?:(?P<num>\d+)|(?P<static>_\d+)|(?P<ident>[A-Za-z_][A-Za-z0-9_]*)|(?P<op>[()<>,:*+\-]))"
)


@cache
def symbol(name: str) -> sympy.Symbol:
    """The positive-integer sympy symbol used for ``name`` in parsed layouts."""
    return sympy.Symbol(name, integer=True, positive=True)


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.toks: list[tuple[str, str, int]] = []
        pos = 0
        n = len(text)
        while pos < n:
            if text[pos].isspace():
                pos += 1
                continue
            m = _TOKEN.match(text, pos)
            if not m or m.end() == pos:
                self.fail(f"unexpected character {text[pos]!r}", pos)
            kind = m.lastgroup
            start = m.start(kind)
            self.toks.append((kind, m.group(kind), start))
            pos = m.end()
        self.i = 0

    def fail(self, msg: str, col: int | None = None) -> None:
        if col is None:
            col = self.toks[self.i][2] if self.i < len(self.toks) else len(self.text)
        raise LayoutError(f"parse: {msg} at column {col + 1} of {self.text!r}")

    def peek(self) -> tuple[str, str, int] | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def accept(self, value: str) -> bool:
        t = self.peek()
        if t is not None and t[0] == "op" and t[1] == value:
            self.i += 1
            return True
        return False

    def expect(self, value: str) -> None:
        if not self.accept(value):
            t = self.peek()
            got = "end of text" if t is None else repr(t[1])
            self.fail(f"expected {value!r}" + ("" if t is None else f", found {got}"))

    # --- components ---------------------------------------------------------------------------
    def composed(self) -> Any:
        parts = [self.component()]
        while True:
            t = self.peek()
            if t is not None and t[0] == "ident" and t[1] == "o":
                self.i += 1
                parts.append(self.component())
            else:
                break
        if self.peek() is not None:
            self.fail(f"unexpected {self.peek()[1]!r}")
        if len(parts) == 1:
            return parts[0]
        return _build_composed(parts, self)

    def component(self) -> Any:
        t = self.peek()
        if t is not None and t[0] == "ident" and t[1] in ("Swizzle", "Sw"):
            col = t[2]
            self.i += 1
            self.expect("<")
            vals = [self.signed_int()]
            for _ in range(2):
                self.expect(",")
                vals.append(self.signed_int())
            self.expect(">")
            from .swizzle import Swizzle

            try:
                return Swizzle(*vals)
            except LayoutError as e:
                raise LayoutError(f"parse: {e} (at column {col + 1} of {self.text!r})") from None
        shp = self.tuple_()
        if self.accept(":"):
            strd = self.tuple_()
            try:
                return Layout(shp, strd)
            except LayoutError as e:
                raise LayoutError(f"parse: {e} in {self.text!r}") from None
        if type(shp) is not tuple and (self.peek() is None or self.peek()[1] == "o"):
            return _Offset(shp)
        try:
            return Layout(shp)
        except LayoutError as e:
            raise LayoutError(f"parse: {e} in {self.text!r}") from None

    def signed_int(self) -> int:
        neg = self.accept("-")
        t = self.peek()
        if t is None or t[0] not in ("num", "static"):
            self.fail("expected an integer")
        self.i += 1
        v = int(t[1].lstrip("_"))
        return -v if neg else v

    def tuple_(self) -> Any:
        if self.accept("("):
            if self.accept(")"):
                return ()
            items = [self.tuple_()]
            while self.accept(","):
                items.append(self.tuple_())
            self.expect(")")
            return tuple(items)
        return self.leaf()

    def leaf(self) -> Any:
        v = self.term()
        while True:
            if self.accept("+"):
                v = v + self.term()
            elif self.accept("-"):
                v = v - self.term()
            else:
                break
        return _norm(v)

    def term(self) -> Any:
        v = self.factor()
        while True:
            t = self.peek()
            if t is None:
                break
            if t[0] == "op" and t[1] == "*":
                self.i += 1
                v = v * self.factor()
            elif t[0] in ("num", "static") or (t[0] == "ident" and t[1] not in ("o", "Sw", "Swizzle")):
                v = v * self.factor()
            else:
                break
        return v

    def factor(self) -> Any:
        if self.accept("-"):
            return -self.factor()
        t = self.peek()
        if t is None:
            self.fail("expected a number or a symbol")
        kind, val, _ = t
        if kind == "num":
            self.i += 1
            return int(val)
        if kind == "static":
            self.i += 1
            return int(val[1:])
        if kind == "ident" and val not in ("o",):
            self.i += 1
            return symbol(val)
        self.fail(f"expected a number or a symbol, found {val!r}")


class _Offset:
    def __init__(self, value: Any):
        self.value = value


def _norm(v: Any) -> Any:
    if isinstance(v, sympy.Integer):
        return int(v)
    return v


def _build_composed(parts: list, p: _Parser) -> Any:
    """``outer o [offset o] inner...``, nesting chains to the right."""
    from .composed import ComposedLayout
    from .swizzle import Swizzle

    outer = parts[0]
    if isinstance(outer, _Offset):
        p.fail("a composed layout cannot start with an offset", 0)
    if len(parts) >= 3 and isinstance(parts[1], _Offset):
        offset, rest = parts[1].value, parts[2:]
    else:
        offset, rest = 0, parts[1:]
    if any(isinstance(x, _Offset) for x in rest[:1]) or not rest:
        p.fail("an offset must stand between two parts", 0)
    inner = rest[0] if len(rest) == 1 else _build_composed(rest, p)
    if isinstance(inner, Swizzle):
        raise LayoutError(f"parse: {p.text!r} ends in a swizzle; the innermost part must be a layout")
    return ComposedLayout(outer, offset, inner)


def parse(text: str) -> Any:
    """parse(text) -> Layout or ComposedLayout, the inverse of ``str``: ``parse(str(L)) == L``."""
    if not isinstance(text, str):
        raise LayoutError(f"parse: expected a string, got {text!r}")
    if not text.strip():
        raise LayoutError("parse: empty text")
    try:
        return _Parser(text).composed()
    except RecursionError:
        raise LayoutError(f"parse: {text[:40]!r}... is nested too deeply") from None


def as_concrete_layout(x: Any, op: str, what: str = "layout") -> Any:
    """``x`` as a Layout or ComposedLayout with concrete entries: layout text is parsed; anything else,
    or a layout with symbols, is a LayoutError naming ``op``."""
    from .composed import ComposedLayout

    if isinstance(x, str):
        x = parse(x)
    if not isinstance(x, (Layout, ComposedLayout)):
        raise LayoutError(f"{op}: {what} {x!r} is not a Layout, a ComposedLayout or layout text")
    if not x.is_static:
        raise LayoutError(f"{op}: {what} {x} has symbolic entries; substitute values first (subs)")
    return x
