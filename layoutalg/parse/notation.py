"""CuTe notation (what ``str`` prints): the recursive-descent :class:`Parser` of its grammar (see
:mod:`layoutalg.parse`), and the fast paths in front of it (:func:`read_fast`)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from functools import cache
from typing import Any

import sympy

from ..composed import ComposedLayout
from ..errors import LayoutError
from ..inttuple import as_leaf
from ..layout import MAX_DEPTH, Layout
from ..swizzle import Swizzle
from .tensors import Parsed, clip, swizzle_on_elements

#: the public names (the grammar's helpers (as_tuple, read_symbolic, loads, ...) serve the parsers)
__all__ = ["MAX_DIGITS", "Parser", "read_fast", "symbol"]

#: The most decimal digits one integer of layout text may have (Python's own default limit for
#: int <-> str conversion, so that every layout parse accepts can be printed and read back).
MAX_DIGITS = 4300
_MAX_BITS = int(MAX_DIGITS * 3.3219280948873626) - 1
_MAX_EXPONENT = 64

_TOKEN = re.compile(
    r"\s*(?:(?P<flag>smem_ptr\[\d+b\]\(unset\))|(?P<num>\d+)|(?P<static>_-?\d+)|(?P<ident>[A-Za-z][A-Za-z0-9_]*|_+[A-Za-z][A-Za-z0-9_]*)"
    r"|(?P<op>\*\*|[()<>,:*+\-]))"
)


@cache
def symbol(name: str) -> sympy.Symbol:
    """The positive-integer sympy symbol used for ``name`` in parsed layouts."""
    return sympy.Symbol(name, integer=True, positive=True)


# ---------------------------------------------------------------------------------------------
# the fast path: plain integer layouts, and one swizzle over one
# ---------------------------------------------------------------------------------------------

#: text of digits, blanks, ``(),:-`` only (the plain-int fast path's domain)
PLAIN = re.compile(r"[ \d(),:-]*").fullmatch
_STATIC_PLAIN = re.compile(r"(?:[ \d(),:-]|(?<![\w])_(?=\d))*").fullmatch  # with CuTe's _8
_BRACKETS = str.maketrans("()", "[]")
loads = json.JSONDecoder().decode
_SWIZZLED = re.compile(
    r" *(?:Swizzle|Sw|S) *< *(\d{1,3}) *, *(\d{1,3}) *, *(-?\d{1,3}) *> +o +(?:_?(\d{1,18}) +o +)?([ \d(),:-]+)"
).fullmatch


def as_tuple(x: list) -> tuple:
    return tuple([as_tuple(y) if type(y) is list else y for y in x])


def _plain(text: str) -> Layout | None:
    """``Shape:Stride`` of plain integers through the C JSON reader; None when anything is unusual."""
    a, colon, b = text.partition(":")
    try:
        s = loads(a.translate(_BRACKETS))
        d = loads(b.translate(_BRACKETS)) if colon else None
        if type(s) is list:
            s = as_tuple(s)
        elif d is None:  # an integer alone: the full parser explains
            return None
        if type(d) is list:
            d = as_tuple(d)
        return Layout(s, d)
    except (ValueError, TypeError, RecursionError):  # bad JSON, too many digits, a LayoutError: the full parser explains
        return None


#: CuTe notation with no swizzle, offset or C++ in it: tuples of leaves and at most one ':'
#: text the symbolic fast path (:func:`read_symbolic`) may take
SYMBOLIC = re.compile(r"[\w\s(),:*+\-]*", re.ASCII).fullmatch
_LEAF_TEXT = re.compile(r"[^(),:\s](?:[^(),:]*[^(),:\s])?")
#: leaf text (``2k``, ``SBO``, ``T+1``) -> (its value as the full parser reads it, whether it may be a
#: shape entry as Layout checks one), or None where the full parser must read it and word the error
_LEAVES: dict[str, tuple[Any, bool] | None] = {}
_LEAVES_MAX = 4096


def _leaf(text: str) -> tuple[Any, bool] | None:
    try:
        p = Parser(text)
        v = p.leaf()
        if p.i != len(p.toks) or as_leaf(v) is not v:
            return None
    except LayoutError:
        return None
    # Layout's check of a shape entry: an int >= 1, or an expression not known to be <= 0
    return v, (v >= 1) if type(v) is int else (v.is_positive is not False)


def _fill(skeleton: Any, leaves: Iterator[Any]) -> Any:
    if type(skeleton) is list:
        return tuple([_fill(x, leaves) if type(x) is list else next(leaves) for x in skeleton])
    return next(leaves)


def read_symbolic(text: str) -> Layout | None:
    """``Shape:Stride`` with symbolic leaves, or None when anything is unusual (the full parser then
    reads the text and words the error). The tuples are read by the C JSON reader with every leaf
    replaced by 0 -- so congruence is equality of the two skeletons -- and each distinct leaf text by
    the full parser once; the flat modes are the leaves in order."""
    a, colon, b = text.partition(":")
    if not colon or a.count("(") > MAX_DEPTH:
        return None
    shape_leaves = _leaf_values(a, True)
    stride_leaves = _leaf_values(b, False)
    if shape_leaves is None or stride_leaves is None:
        return None
    try:
        sk = loads(_LEAF_TEXT.sub("0", a).translate(_BRACKETS))
        if sk != loads(_LEAF_TEXT.sub("0", b).translate(_BRACKETS)) or type(sk) not in (list, int):
            return None
        shape = _fill(sk, iter(shape_leaves))
        stride = _fill(sk, iter(stride_leaves))
    except (ValueError, TypeError, RecursionError, StopIteration):  # not two congruent tuples
        return None
    static = all(type(x) is int for x in shape_leaves) and all(type(x) is int for x in stride_leaves)
    return Layout._make(shape, stride, static, (tuple(shape_leaves), tuple(stride_leaves)))


def _leaf_values(text: str, shape: bool) -> list | None:
    """The values of the leaves in ``text``, in order; None where one needs the full parser (or, for a
    ``shape``, is no valid shape entry)."""
    out = []
    for t in _LEAF_TEXT.findall(text):
        e = _LEAVES[t] if t in _LEAVES else _remember_leaf(t)
        if e is None or (shape and not e[1]):
            return None
        out.append(e[0])
    return out


def _remember_leaf(text: str) -> tuple[Any, bool] | None:
    if len(_LEAVES) >= _LEAVES_MAX:
        _LEAVES.clear()
    e = _LEAVES[text] = _leaf(text)
    return e


def read_fast(text: str) -> Parsed | None:
    """Plain-int layouts, one swizzle over one, and symbolic ``Shape:Stride`` read without the full
    :class:`Parser`; None hands the text over to it (which gives the same result or words the error)."""
    if not isinstance(text, str):
        raise LayoutError(f"parse: expected text, got {type(text).__name__}")
    if PLAIN(text) is not None:
        return _plain(text)
    if "_" in text and _STATIC_PLAIN(text) is not None:
        return _plain(text.replace("_", ""))
    if SYMBOLIC(text) is not None:
        return read_symbolic(text)
    m = _SWIZZLED(text)
    if m is not None:
        inner = _plain(m.group(5))
        if inner is not None:
            try:
                off = m.group(4)
                return ComposedLayout(Swizzle(int(m.group(1)), int(m.group(2)), int(m.group(3))),
                                      0 if off is None else int(off), inner)
            except LayoutError:
                return None
    return None


# ---------------------------------------------------------------------------------------------
# CuTe notation
# ---------------------------------------------------------------------------------------------


class _Offset:
    """An integer standing between two ``o`` of a composed layout (never returned by parse)."""

    __slots__ = ("value",)

    def __init__(self, value: Any):
        self.value = value


def _check_magnitude(v: Any, p: Parser) -> Any:
    """``v`` unless an integer in it is too large to print (more than MAX_DIGITS digits)."""
    if type(v) is int:
        if v.bit_length() > _MAX_BITS:
            p.fail(f"an integer of {v.bit_length()} bits exceeds the limit of {MAX_DIGITS} decimal digits")
        return v
    for a in v.atoms(sympy.Integer):
        if int(a).bit_length() > _MAX_BITS:
            p.fail(f"an integer of {int(a).bit_length()} bits exceeds the limit of {MAX_DIGITS} decimal digits")
    return v


class Parser:
    """The recursive-descent reader of CuTe notation's grammar (the module docstring of :mod:`layoutalg.parse`):
    ``Parser(text).composed()``. :func:`layoutalg.parse.parse` tries :func:`read_fast` first."""

    def __init__(self, text: str):
        if not isinstance(text, str):
            raise LayoutError(f"parse: expected text, got {type(text).__name__}")
        self.text = text
        self.toks: list[tuple[str, str, int]] = []
        pos = 0
        n = len(text)
        while pos < n:
            if text[pos].isspace():
                pos += 1
                continue
            m = _TOKEN.match(text, pos)
            if m is None or m.end() == pos or m.lastgroup is None:
                if text[pos] == "@":
                    self.fail("a stride written k@i is a basis vector (CuTe's ScaledBasis, as in an identity or "
                              "coordinate layout), not an integer; layoutalg's layouts map to integers", pos)
                self.fail(f"unexpected character {text[pos]!r}", pos)
                raise AssertionError  # unreachable: fail raises
            kind = m.lastgroup
            start = m.start(kind)
            val = m.group(kind)
            if kind in ("num", "static") and len(val.lstrip("_-")) > MAX_DIGITS:
                self.fail(f"an integer of {len(val.lstrip('_-'))} digits exceeds the limit of {MAX_DIGITS} digits", start)
            self.toks.append((kind, val, start))
            pos = m.end()
        self.i = 0

    def fail(self, msg: str, col: int | None = None) -> None:
        if col is None:
            col = self.toks[self.i][2] if self.i < len(self.toks) else len(self.text)
        raise LayoutError(f"parse: {msg} at column {col + 1} of {clip(self.text)}")

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
            self.fail(f"expected {value!r}" + ("" if t is None else f", found {t[1]!r}"))

    # --- components ---------------------------------------------------------------------------
    def composed(self) -> Parsed:
        parts = [self.component()]
        while True:
            t = self.peek()
            if t is not None and t[0] == "ident" and t[1] == "o":
                self.i += 1
                parts.append(self.component())
            else:
                break
        t = self.peek()
        if t is not None:
            self.fail(f"unexpected {t[1]!r}")
        if len(parts) == 1:
            only = parts[0]
            if isinstance(only, _Offset):
                v = only.value
                raise LayoutError(
                    f"parse: {clip(self.text)} is an integer alone, not a layout: write {_fmt_leaf(v)}:1 for "
                    f"the layout, ({_fmt_leaf(v)}) for a rank-1 shape, or put an offset between two 'o'"
                )
            return only
        return _build_composed(parts, self)

    def layout(self, shp: Any, strd: Any) -> Layout:
        try:
            return Layout(shp, strd)
        except LayoutError as e:
            raise LayoutError(f"parse: {e} in {clip(self.text)}") from None

    def component(self) -> Layout | ComposedLayout | Swizzle | _Offset:
        t = self.peek()
        if t is not None and t[0] == "ident" and (t[1] in ("Swizzle", "Sw") or t[1] == "S" and self.next_is("<")):
            col = t[2]
            self.i += 1
            self.expect("<")
            vals = [self.signed_int()]
            for _ in range(2):
                self.expect(",")
                vals.append(self.signed_int())
            nxt = self.peek()
            if not (t[1] == "S" and vals[2] < 0 and nxt is not None and nxt[:2] == ("ident", "o")):
                self.expect(">")  # (the CuTe DSL prints S<2,2,-3 o ... without the '>' when S < 0)
            else:
                self.accept(">")
            try:
                return Swizzle(*vals)
            except LayoutError as e:
                raise LayoutError(f"parse: {e} (at column {col + 1} of {clip(self.text)})") from None
        if t is not None and t[0] == "flag":  # CuTe's print of smem_ptr_flag_bits<E>: E-bit elements
            self.i += 1
            return _Offset(("flag", int(t[1][9:t[1].index("b")])))
        if t is not None and t[1] == "(" and self.paren_has_o():
            # a composed layout in parentheses (the CuTe DSL's print of a nested composed layout,
            # ``(S<3,4,3> o 0 o (8,64):(64,1) o 4 o (8,8):(8,1))``): composition is associative, so
            # the chain reads as the same chain without the parentheses
            self.i += 1
            parts = [self.component()]
            while self.accept_o():
                parts.append(self.component())
            self.expect(")")
            if len(parts) == 1:
                self.fail("a parenthesised composed layout needs at least two parts")
            return _build_composed(parts, self)
        shp = self.tuple_()
        if self.accept(":"):
            return self.layout(shp, self.tuple_())
        if type(shp) is not tuple:
            nxt = self.peek()
            if nxt is None or nxt[1] == "o" or nxt[:2] == ("op", ")"):  # ')' closes a parenthesised chain
                return _Offset(shp)
        return self.layout(shp, None)

    def next_is(self, value: str) -> bool:
        k = self.i + 1
        return k < len(self.toks) and self.toks[k][0] == "op" and self.toks[k][1] == value

    def accept_o(self) -> bool:
        t = self.peek()
        if t is not None and t[0] == "ident" and t[1] == "o":
            self.i += 1
            return True
        return False

    def paren_has_o(self) -> bool:
        """Whether the parenthesis at the cursor holds an ``o`` at its own depth (a composed layout)."""
        depth = 0
        for kind, val, _ in self.toks[self.i:]:
            if kind == "op" and val == "(":
                depth += 1
            elif kind == "op" and val == ")":
                depth -= 1
                if depth == 0:
                    return False
            elif depth == 1 and kind == "ident" and val == "o":
                return True
        return False

    def signed_int(self) -> int:
        neg = self.accept("-")
        t = self.peek()
        if t is None or t[0] not in ("num", "static"):
            self.fail("expected an integer")
            raise AssertionError  # unreachable
        self.i += 1
        v = int(t[1][1:] if t[1][0] == "_" else t[1])
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
            _check_magnitude(v, self)
        return _check_magnitude(_norm(v), self)

    def term(self) -> Any:
        v = self.power()
        while True:
            t = self.peek()
            if t is None:
                break
            if t[0] == "op" and t[1] == "*":
                self.i += 1
                v = v * self.power()
            elif t[0] in ("num", "static") or (t[0] == "ident" and t[1] not in ("o", "Sw", "Swizzle")):
                v = v * self.power()
            else:
                break
            _check_magnitude(v, self)
        return v

    def power(self) -> Any:
        v = self.factor()
        if self.accept("**"):
            t = self.peek()
            if t is None or t[0] != "num":
                self.fail("expected a non-negative integer exponent after '**'")
                raise AssertionError  # unreachable
            e = int(t[1])
            if e > _MAX_EXPONENT:
                self.fail(f"exponent {e} exceeds the limit of {_MAX_EXPONENT}")
            self.i += 1
            if type(v) is int and v.bit_length() * e > _MAX_BITS:
                self.fail(f"{v}**{e} exceeds the limit of {MAX_DIGITS} decimal digits")
            v = v**e
        return v

    def factor(self) -> Any:
        if self.accept("-"):
            return -self.factor()
        t = self.peek()
        if t is None:
            self.fail("expected a number or a symbol")
            raise AssertionError  # unreachable
        kind, val, _ = t
        if kind == "num":
            self.i += 1
            return int(val)
        if kind == "static":
            self.i += 1
            return int(val[1:])  # _8 and _-8
        if kind == "ident" and val not in ("o", "Sw", "Swizzle"):
            self.i += 1
            return symbol(val)
        self.fail(f"expected a number or a symbol, found {val!r}")
        raise AssertionError  # unreachable

def _fmt_leaf(v: Any) -> str:
    if type(v) is tuple:
        return "(...)"
    s = str(v).replace(" ", "")
    return s if len(s) <= 40 else s[:40] + "..."


def _norm(v: Any) -> Any:
    if isinstance(v, sympy.Integer):
        return int(v)
    return v


def _build_composed(parts: list, p: Parser) -> ComposedLayout:
    """``outer o [offset o] inner...``, nesting chains to the right."""
    outer = parts[0]
    if isinstance(outer, _Offset):
        p.fail("a composed layout cannot start with an offset", 0)
    if len(parts) >= 3 and isinstance(parts[1], _Offset):
        offset, rest = parts[1].value, parts[2:]
    else:
        offset, rest = 0, parts[1:]
    if not rest or isinstance(rest[0], _Offset) and len(rest) == 1:
        p.fail("an offset must stand between two parts", 0)
    inner = rest[0] if len(rest) == 1 else _build_composed(rest, p)
    if isinstance(inner, _Offset):
        p.fail("an offset must stand between two parts", 0)
    if isinstance(inner, Swizzle):
        raise LayoutError(f"parse: {clip(p.text)} ends in a swizzle; the innermost part must be a layout")
    if type(offset) is tuple:  # smem_ptr[Eb](unset): the swizzle acts on byte addresses of E-bit elements
        if not isinstance(outer, Swizzle):
            p.fail("smem_ptr[..b](unset) needs a swizzle as the outer function", 0)
        outer, offset = swizzle_on_elements(outer, offset[1], p.fail), 0
    try:
        return ComposedLayout(outer, offset, inner)
    except LayoutError as e:
        raise LayoutError(f"parse: {e} in {clip(p.text)}") from None
