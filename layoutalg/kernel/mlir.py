"""MLIR text read by a grammar: a tokenizer and the attribute / type grammar that Triton's ttgir uses.

The text is data: nothing is evaluated. Every token carries its line and column, so every refusal
is a :class:`~layoutalg.errors.LayoutError` that names where the text went wrong.

    >>> attr = parse_attribute("#ttg.blocked<{sizePerThread = [1, 4], order = [1, 0]}>")
    >>> attr.name, attr.params["sizePerThread"], attr.params["order"]
    ('ttg.blocked', [1, 4], [1, 0])
    >>> t = parse_type("tensor<128x64xf16, #blocked>")
    >>> t.shape, t.element, t.encoding
    ((128, 64), 'f16', AliasRef(name='blocked'))
    >>> parse_attribute("#ttg.blocked<{order = [1, 0]")
    Traceback (most recent call last):
    ...
    layoutalg.errors.LayoutError: line 1, column 29: expected '}' or ',', found the end of the line
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Union

from ..errors import LayoutError

__all__ = ["Token", "tokenize", "Attr", "AliasRef", "MlirType", "Cursor", "parse_attribute", "parse_type",
           "parse_value"]


class Token(NamedTuple):
    """One token: ``kind`` is one of str, num, id, hash (``#x``), bang (``!x``), pct (``%x``), at (``@x``),
    caret (``^x``), arrow (``->``) or punct; ``line`` / ``col`` are 1-based. A named tuple: a kernel's ttgir
    has ~10^5 of them, and a tuple is built in a third of a frozen dataclass's time."""

    kind: str
    text: str
    line: int
    col: int

    @property
    def end(self) -> int:
        return self.col + len(self.text)


_TOKEN = re.compile(r"""
    (?P<str>"(?:[^"\\\n]|\\.)*")
  | (?P<ustr>")
  | (?P<num>-?(?:0x[0-9a-fA-F]+|\d+(?:\.\d+)?(?:[eE][+-]?\d+)?))
  | (?P<hash>\#[A-Za-z_][\w.$]*)
  | (?P<bang>![A-Za-z_][\w.$]*)
  | (?P<pct>%[\w.$-]+(?:\#\d+)?)
  | (?P<at>@[\w.$-]+|@"(?:[^"\\\n]|\\.)*")
  | (?P<caret>\^[\w.$-]+)
  | (?P<id>[A-Za-z_][\w.$]*)
  | (?P<arrow>->)
  | (?P<space>[ \t\r]+)
  | (?P<punct>.)
""", re.VERBOSE)


def require_text(text: object, what: str) -> str:
    """``text`` if it is a string, else a LayoutError naming ``what`` (text is data: nothing else is read)."""
    if not isinstance(text, str):
        raise LayoutError(f"{what}: expected MLIR text (a str), got {type(text).__name__}")
    return text


def tokenize(text: str, line: int = 1) -> list[Token]:
    """The tokens of one line of MLIR (``line`` numbers them). An unterminated string is a LayoutError.

    >>> [t.text for t in tokenize('%a = ttg.local_load %m : !ttg.memdesc<8x8xf16> -> tensor<8x8xf16>')]
    ['%a', '=', 'ttg.local_load', '%m', ':', '!ttg.memdesc', '<', '8', 'x8xf16', '>', '->', 'tensor', '<', '8', 'x8xf16', '>']
    """
    require_text(text, "tokenize")
    if not isinstance(line, int) or isinstance(line, bool) or line < 1:
        raise LayoutError(f"tokenize: line must be a positive int, got {line!r}")
    out = []
    for m in _TOKEN.finditer(text):
        kind = m.lastgroup or "punct"
        if kind == "space":
            continue
        if kind == "ustr":
            raise LayoutError(f"line {line}, column {m.start() + 1}: a string that is never closed")
        out.append(Token(kind, m.group(), line, m.start() + 1))
    return out


@dataclass(frozen=True)
class AliasRef:
    """A reference to an alias defined at the top of the module (``#blocked1``), not yet resolved."""

    name: str
    line: int = field(default=0, compare=False, repr=False)
    col: int = field(default=0, compare=False, repr=False)


@dataclass
class Attr:
    """A dialect attribute ``#dialect.name<...>``: its parameters by name, in the order written.

    Triton's two spellings both land in ``params``: ``<{k = v, ...}>`` and ``<k = v, ...>``; a
    padded layout's interval list ``[64:+8, 128:+4]`` is ``params["intervals"] = [[64, 8], [128, 4]]``.
    """

    name: str
    params: dict[str, Any] = field(default_factory=dict)
    line: int = 0
    col: int = 0
    text: str = ""


@dataclass(frozen=True)
class MlirType:
    """A type: ``tensor`` / ``memdesc`` (shape, element, encoding, memory space and flags), ``ptr`` (element
    type in ``element``), ``tensordesc`` (the block type in ``element``) or a scalar (``kind == "scalar"``)."""

    kind: str
    shape: tuple[int, ...] = ()
    element: Any = None
    encoding: Any = None
    space: Any = None
    mutable: bool = False
    alloc_shape: tuple[int, ...] = ()
    text: str = ""


#: what parse_value returns
Value = Union[int, float, bool, str, list, dict, Attr, AliasRef, MlirType]  # noqa: UP007 (a runtime alias on 3.10)


class Cursor:
    """Reads tokens one by one; every ``expect`` that fails names the line and column."""

    def __init__(self, tokens: list[Token], line: int = 1, end_col: int = 1, source: str = ""):
        if not isinstance(tokens, list) or not all(isinstance(t, Token) for t in tokens):
            raise LayoutError(f"Cursor: expected a list of Tokens (from tokenize), got {type(tokens).__name__}")
        if not (isinstance(line, int) and isinstance(end_col, int) and isinstance(source, str)):
            raise LayoutError("Cursor: line and end_col are ints, source is text")
        self.toks = tokens
        self.i = 0
        self.line = tokens[-1].line if tokens else line
        self.end_col = tokens[-1].end if tokens else end_col
        self.source = source

    def peek(self, k: int = 0) -> Token | None:
        j = self.i + k
        return self.toks[j] if j < len(self.toks) else None

    def next(self) -> Token:
        t = self.peek()
        if t is None:
            raise self.error("a value", None)
        self.i += 1
        return t

    def at(self, text: str) -> bool:
        t = self.peek()
        return t is not None and t.text == text

    def accept(self, text: str) -> bool:
        if self.at(text):
            self.i += 1
            return True
        return False

    def expect(self, *texts: str) -> Token:
        t = self.peek()
        if t is None or t.text not in texts:
            raise self.error(" or ".join(repr(x) for x in texts), t)
        self.i += 1
        return t

    def error(self, wanted: str, t: Token | None) -> LayoutError:
        if t is None:
            return LayoutError(f"line {self.line}, column {self.end_col}: expected {wanted}, found the end of the line")
        return LayoutError(f"line {t.line}, column {t.col}: expected {wanted}, found {t.text!r}")


def _number(t: Token) -> int | float:
    s = t.text
    if s.lower().startswith(("0x", "-0x")):
        return int(s, 16)
    if any(c in s for c in ".eE") and not s.lower().startswith("0x"):
        return float(s)
    return int(s)


def parse_value(c: Cursor) -> Value:
    """One attribute value: a number (an ``: i32`` suffix dropped), string, bool, list, dictionary, a dialect
    attribute, an alias reference, a type, or a bare keyword (returned as its text)."""
    if not isinstance(c, Cursor):
        raise LayoutError(f"parse_value: expected a Cursor, got {type(c).__name__}")
    t = c.peek()
    if t is None:
        raise c.error("a value", None)
    if t.text == "[":
        c.next()
        items: list = []
        if not c.accept("]"):
            while True:
                items.append(parse_value(c))
                if c.accept("]"):
                    break
                c.expect(",")
        return items
    if t.text == "{":
        c.next()
        return _dict_body(c)
    if t.kind == "num":
        c.next()
        v = _number(t)
        if c.at(":") and c.peek(1) is not None and c.peek(1).kind == "id":  # type: ignore[union-attr]
            c.next()
            c.next()
        return v
    if t.kind == "str":
        c.next()
        return _unquote(t.text)
    if t.kind == "hash":
        return _hash_value(c)
    if t.kind == "bang" or t.text == "tensor":
        return parse_type_at(c)
    if t.kind == "id":
        c.next()
        if t.text in ("true", "false"):
            return t.text == "true"
        return t.text
    raise c.error("a value", t)


def _unquote(s: str) -> str:
    return re.sub(r"\\(.)", r"\1", s[1:-1])


def _key(c: Cursor) -> str:
    t = c.next()
    if t.kind in ("id", "str"):
        return t.text if t.kind == "id" else _unquote(t.text)
    raise c.error("a parameter name", t)


def _dict_body(c: Cursor) -> dict:
    """After ``{``: ``k = v, ...}`` (a key alone means true)."""
    out: dict = {}
    if c.accept("}"):
        return out
    while True:
        k = _key(c)
        out[k] = parse_value(c) if c.accept("=") else True
        t = c.peek()
        if t is not None and t.text == "}":
            c.next()
            return out
        if t is None or t.text != ",":
            raise c.error("'}' or ','", t)
        c.next()


def _intervals(c: Cursor) -> list[list[int]]:
    """After ``[``: ``64:+8, 128:+4]`` (padded_shared's interval:padding pairs)."""
    out = []
    while True:
        a = c.next()
        c.expect(":")
        c.expect("+")
        b = c.next()
        if a.kind != "num" or b.kind != "num":
            raise LayoutError(f"line {a.line}, column {a.col}: padding intervals are integers, found {a.text}:+{b.text}")
        out.append([int(_number(a)), int(_number(b))])
        if c.accept("]"):
            return out
        c.expect(",")


def _hash_value(c: Cursor) -> Attr | AliasRef:
    t = c.next()
    name = t.text[1:]
    if not c.at("<"):
        if "." in name:  # a dialect attribute without parameters (#ttg.shared_memory)
            return Attr(name, {}, t.line, t.col, t.text)
        return AliasRef(name, t.line, t.col)
    start = c.i
    c.next()
    attr = Attr(name, {}, t.line, t.col)
    if not c.accept(">"):
        while True:
            nt = c.peek()
            if nt is not None and nt.text == "{":
                c.next()
                attr.params.update(_dict_body(c))
            elif nt is not None and nt.text == "[" and c.peek(2) is not None and c.peek(2).text == ":":  # type: ignore[union-attr]
                c.next()
                attr.params["intervals"] = _intervals(c)
            elif nt is not None and nt.kind in ("id", "str") and c.peek(1) is not None and c.peek(1).text == "=":  # type: ignore[union-attr]
                k = _key(c)
                c.next()
                attr.params[k] = parse_value(c)
            else:
                attr.params.setdefault("args", []).append(parse_value(c))
            if c.accept(">"):
                break
            if not c.accept(","):
                nt = c.peek()
                if nt is None or nt.text not in ("{", "["):
                    raise c.error("'>' or ','", nt)
    attr.text = _join(c.toks[start - 1:c.i])
    return attr


def _join(toks: list[Token]) -> str:
    out, prev = "", None
    for t in toks:
        if prev is not None and (t.line != prev.line or t.col > prev.end):
            out += " "
        out += t.text
        prev = t
    return out


def _dims_and_element(c: Cursor) -> tuple[tuple[int, ...], Any]:
    """``128x64xf16`` (tokens ``128``, ``x64xf16``) or ``128x64x!tt.ptr<f16>`` or ``f32`` (rank 0)."""
    t = c.peek()
    if t is None:
        raise c.error("a shape or element type", None)
    text, last = "", None
    while t is not None and t.kind in ("num", "id") and (last is None or t.col == last.end):
        text += t.text
        last = c.next()
        t = c.peek()
    if not text:
        return (), parse_type_at(c)
    parts = text.split("x")
    dims, rest = [], parts
    while rest and rest[0].isdigit():
        dims.append(int(rest[0]))
        rest = rest[1:]
    elem = "x".join(rest)
    if not elem:
        if c.at(">") or c.at(","):  # a shape alone (a memdesc's allocation shape)
            return tuple(dims), None
        return tuple(dims), parse_type_at(c)
    if len(rest) > 1 and rest[0] == "" and not dims:
        raise LayoutError(f"line {last.line}, column {last.col}: {text!r} is no shape")  # type: ignore[union-attr]
    return tuple(dims), elem


def parse_type_at(c: Cursor) -> MlirType:
    """A type at the cursor: ``tensor<...>``, ``!ttg.memdesc<...>``, ``!tt.ptr<...>``, ``!tt.tensordesc<...>``,
    another ``!dialect.type<...>`` (kept by name) or a scalar (``f16``, ``i32``, ...)."""
    t = c.next()
    start = c.i - 1
    if t.text == "tensor":
        c.expect("<")
        shape, elem = _dims_and_element(c)
        enc = None
        if c.accept(","):
            enc = parse_value(c)
        c.expect(">")
        return MlirType("tensor", shape, elem, enc, text=_join(c.toks[start:c.i]))
    if t.text == "!ttg.memdesc" or t.text == "<":  # ops print a memdesc result type without its name: <...>
        if t.text != "<":
            c.expect("<")
        shape, elem = _dims_and_element(c)
        enc, space, mutable = None, None, False
        alloc: tuple[int, ...] = ()
        while c.accept(","):
            nt = c.peek()
            if nt is not None and nt.text == "mutable":
                c.next()
                mutable = True
            elif nt is not None and nt.kind == "num":
                alloc, _ = _dims_and_element(c)
            elif enc is None:
                enc = parse_value(c)
            else:
                space = parse_value(c)
        c.expect(">")
        return MlirType("memdesc", shape, elem, enc, space, mutable, alloc, text=_join(c.toks[start:c.i]))
    if t.text in ("!tt.ptr", "!tt.tensordesc"):
        c.expect("<")
        inner = parse_type_at(c)
        while c.accept(","):
            parse_value(c)
        c.expect(">")
        return MlirType("ptr" if t.text == "!tt.ptr" else "tensordesc", (), inner, text=_join(c.toks[start:c.i]))
    if t.kind == "bang":
        params = []
        if c.accept("<"):
            depth = 1
            while depth:
                x = c.next()
                depth += (x.text == "<") - (x.text == ">")
                params.append(x.text)
        return MlirType("other", (), t.text[1:], text=_join(c.toks[start:c.i]))
    if t.kind == "id" or t.text == "(":
        if t.text == "(":  # a tuple of types: keep the first
            inner = parse_type_at(c)
            while c.accept(","):
                parse_type_at(c)
            c.expect(")")
            return inner
        return MlirType("scalar", (), t.text, text=t.text)
    raise c.error("a type", t)


def _cursor(text: str, line: int, col: int) -> Cursor:
    toks = tokenize(text, line)
    if col > 1:
        toks = [Token(t.kind, t.text, t.line, t.col + col - 1) for t in toks]
    return Cursor(toks, line, col + len(text.rstrip()), text)


def _done(c: Cursor) -> None:
    t = c.peek()
    if t is not None:
        raise LayoutError(f"line {t.line}, column {t.col}: unexpected {t.text!r} after the value")


def parse_attribute(text: str, line: int = 1, col: int = 1) -> Value:
    """An attribute value written as text (``#ttg.blocked<{...}>``, ``[1, 2]``, ``#alias``, ...)."""
    require_text(text, "parse_attribute")
    c = _cursor(text, line, col)
    v = parse_value(c)
    _done(c)
    return v


def parse_type(text: str, line: int = 1, col: int = 1) -> MlirType:
    """A type written as text (``tensor<64x64xf16, #blocked>``, ``!ttg.memdesc<...>``, ``f32``)."""
    require_text(text, "parse_type")
    c = _cursor(text, line, col)
    v = parse_type_at(c)
    _done(c)
    return v
