"""Reading layouts written in CuTe notation, or in the C++ spelling of CUTLASS sources.

CuTe notation (what ``str`` prints; whitespace is ignored)::

    composed := component ( "o" component )*
    component:= swizzle | layout | offset
    swizzle  := ("Swizzle" | "Sw") "<" int "," int "," int ">"
    layout   := tuple [ ":" tuple ]          (no stride: compact column-major)
    tuple    := "(" tuple ("," tuple)* ")" | leaf
    leaf     := term (("+" | "-") term)*
    term     := power ("*"? power)*          (``2k``, ``2*k`` and ``1T`` are products)
    power    := factor ["**" digits]
    factor   := ["-"] digits | "_" digits | identifier

Identifiers become positive-integer sympy symbols; ``_8`` (``_-8``) is CuTe's spelling of the
static 8 (-8). An integer alone is not a layout (write ``8:1``, or the tuple ``(8)``); standing
between two ``o`` it is the offset of a composed layout.

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

The C++ spellings users copy out of CUTLASS read the same way: a layout *type* whose extents are
static (``Layout<Shape<_8,_64>,Stride<_64,_1>>``, with ``_N``, ``Int<N>``, ``C<N>`` and optional
``cute::``), a bare ``Shape<...>`` (compact column-major), ``Swizzle<B,M,S>``,
``ComposedLayout<Swizzle<..>, offset, Layout<..>>``, and the expression forms ``make_layout``,
``make_shape``, ``make_stride``, ``LayoutLeft{}``/``LayoutRight{}`` and ``composition``.
A type with dynamic extents (``int``) has no value and is refused::

    >>> parse("Layout<Shape<Shape<_4,_8>,_2>, Stride<Stride<_1,_4>,_32>>")
    Layout(((4, 8), 2), ((1, 4), 32))
    >>> parse("make_layout(make_shape(Int<8>{}, Int<64>{}), LayoutRight{})")
    Layout((8, 64), (64, 1))
    >>> parse("composition(Swizzle<3,4,3>{}, make_layout(make_shape(_8{}, _64{}), make_stride(_64{}, _1{})))")
    Sw<3,4,3> o _0 o (8,64):(64,1)

``ComposedLayout<Swizzle<B,M,S>, smem_ptr_flag_bits<E>, L>`` (a GMMA atom waiting for its
shared-memory pointer) swizzles *byte addresses* of ``E``-bit elements; it reads as CuTe's
``as_position_independent_swizzle_layout`` gives it: the swizzle recast to element units.

What CuTe prints reads as it is pasted: CuTe C++'s tensors (``gmem_ptr[32b](0x1000) o (4,2):(2,1)``,
``smem_ptr``, ``rmem_ptr``, ``ptr``, ``subptr[4b](0x...0)``, ``tmem_``, ``counting_iter``, a swizzled
``Sw<3,4,3>_smem_ptr[16b](..)``, ``print_tensor``'s values), ``print_layout``'s grid (checked against
the layout), and the CuTe DSL's ``S<B,M,S> o 0 o L`` (also its ``S<2,2,-3 o`` without the ``>``),
parenthesised nested composed layouts and ``tensor<ptr<f16, smem, align<16>> o L>`` /
``tensor(raw_ptr(..) o L, data=[..])``. A tensor is a :class:`ParsedTensor` -- its :class:`Pointer`
(space, element width, address, swizzle) and layout -- whose ``describe()`` says in bytes and
elements what its swizzle moves (:func:`swizzle_units`). CuTe's coordinate tensors (``ArithTuple``,
strides ``_1@0``) are refused: their strides are basis vectors, not integers::

    >>> parse("gmem_ptr[32b](0x1000) o (4,2):(2,1)").bits
    32
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from collections.abc import Iterator
from typing import Any, Union, cast

import sympy

from .algebra import composition, tile_to_shape
from .composed import ComposedLayout, parse_composed  # parse_composed: re-exported (it reads through parse)
from .errors import LayoutError
from .hooks import provide
from .inttuple import as_leaf, flatten, unflatten
from .layout import MAX_DEPTH, Layout, make_layout
from .swizzle import Swizzle

__all__ = ["parse", "parse_composed", "symbol", "as_concrete_layout", "ParsedTensor", "Pointer", "swizzle_units"]

#: What ``parse`` returns: a layout, a composed layout, (for ``Sw<B,M,S>`` alone) a swizzle, or (for a
#: printed tensor) a ParsedTensor.
Parsed = Union[Layout, ComposedLayout, Swizzle, "ParsedTensor"]  # noqa: UP007 - a runtime alias, kept valid on 3.10

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

_PLAIN = re.compile(r"[ \d(),:-]*").fullmatch
_STATIC_PLAIN = re.compile(r"(?:[ \d(),:-]|(?<![\w])_(?=\d))*").fullmatch  # with CuTe's _8
_BRACKETS = str.maketrans("()", "[]")
_loads = json.JSONDecoder().decode
_SWIZZLED = re.compile(
    r" *(?:Swizzle|Sw|S) *< *(\d{1,3}) *, *(\d{1,3}) *, *(-?\d{1,3}) *> +o +(?:_?(\d{1,18}) +o +)?([ \d(),:-]+)"
).fullmatch


def _tup(x: list) -> tuple:
    return tuple([_tup(y) if type(y) is list else y for y in x])


def _plain(text: str) -> Layout | None:
    """``Shape:Stride`` of plain integers through the C JSON reader; None when anything is unusual."""
    a, colon, b = text.partition(":")
    try:
        s = _loads(a.translate(_BRACKETS))
        d = _loads(b.translate(_BRACKETS)) if colon else None
        if type(s) is list:
            s = _tup(s)
        elif d is None:  # an integer alone: the full parser explains
            return None
        if type(d) is list:
            d = _tup(d)
        return Layout(s, d)
    except (ValueError, TypeError, RecursionError):  # bad JSON, too many digits, a LayoutError: the full parser explains
        return None


#: CuTe notation with no swizzle, offset or C++ in it: tuples of leaves and at most one ':'
_SYMBOLIC = re.compile(r"[\w\s(),:*+\-]*", re.ASCII).fullmatch
_LEAF_TEXT = re.compile(r"[^(),:\s](?:[^(),:]*[^(),:\s])?")
#: leaf text (``2k``, ``SBO``, ``T+1``) -> (its value as the full parser reads it, whether it may be a
#: shape entry as Layout checks one), or None where the full parser must read it and word the error
_LEAVES: dict[str, tuple[Any, bool] | None] = {}
_LEAVES_MAX = 4096


def _leaf(text: str) -> tuple[Any, bool] | None:
    try:
        p = _Parser(text)
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


def _symbolic(text: str) -> Layout | None:
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
        sk = _loads(_LEAF_TEXT.sub("0", a).translate(_BRACKETS))
        if sk != _loads(_LEAF_TEXT.sub("0", b).translate(_BRACKETS)) or type(sk) not in (list, int):
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


def _fast(text: str) -> Parsed | None:
    if _PLAIN(text) is not None:
        return _plain(text)
    if "_" in text and _STATIC_PLAIN(text) is not None:
        return _plain(text.replace("_", ""))
    if _SYMBOLIC(text) is not None:
        return _symbolic(text)
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


def _check_magnitude(v: Any, p: _Parser) -> Any:
    """``v`` unless an integer in it is too large to print (more than MAX_DIGITS digits)."""
    if type(v) is int:
        if v.bit_length() > _MAX_BITS:
            p.fail(f"an integer of {v.bit_length()} bits exceeds the limit of {MAX_DIGITS} decimal digits")
        return v
    for a in v.atoms(sympy.Integer):
        if int(a).bit_length() > _MAX_BITS:
            p.fail(f"an integer of {int(a).bit_length()} bits exceeds the limit of {MAX_DIGITS} decimal digits")
    return v


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
        raise LayoutError(f"parse: {msg} at column {col + 1} of {_clip(self.text)}")

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
                    f"parse: {_clip(self.text)} is an integer alone, not a layout: write {_fmt_leaf(v)}:1 for "
                    f"the layout, ({_fmt_leaf(v)}) for a rank-1 shape, or put an offset between two 'o'"
                )
            return only
        return _build_composed(parts, self)

    def layout(self, shp: Any, strd: Any) -> Layout:
        try:
            return Layout(shp, strd)
        except LayoutError as e:
            raise LayoutError(f"parse: {e} in {_clip(self.text)}") from None

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
                raise LayoutError(f"parse: {e} (at column {col + 1} of {_clip(self.text)})") from None
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


def _swizzle_on_elements(sw: Swizzle, bits: int, fail: Any) -> Swizzle:
    """A swizzle of byte addresses as the same permutation of ``bits``-bit element offsets (CuTe's
    ``as_position_independent_swizzle_layout``: ``recast_layout<uint8_t, uint_bit_t<bits>>``)."""
    if bits < 1 or bits & (bits - 1):
        fail(f"smem_ptr_flag_bits<{bits}>: the element width must be a power of two")
    try:
        return sw.upcast(bits // 8) if bits >= 8 else sw.downcast(8 // bits)
    except LayoutError as e:
        fail(str(e))
        raise AssertionError from e  # unreachable


def _fmt_leaf(v: Any) -> str:
    if type(v) is tuple:
        return "(...)"
    s = str(v).replace(" ", "")
    return s if len(s) <= 40 else s[:40] + "..."


def _clip(text: str, n: int = 80) -> str:
    return repr(text) if len(text) <= n else repr(text[:n]) + f"... ({len(text)} characters)"


def _norm(v: Any) -> Any:
    if isinstance(v, sympy.Integer):
        return int(v)
    return v


def _build_composed(parts: list, p: _Parser) -> ComposedLayout:
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
        raise LayoutError(f"parse: {_clip(p.text)} ends in a swizzle; the innermost part must be a layout")
    if type(offset) is tuple:  # smem_ptr[Eb](unset): the swizzle acts on byte addresses of E-bit elements
        if not isinstance(outer, Swizzle):
            p.fail("smem_ptr[..b](unset) needs a swizzle as the outer function", 0)
        outer, offset = _swizzle_on_elements(outer, offset[1], p.fail), 0
    try:
        return ComposedLayout(outer, offset, inner)
    except LayoutError as e:
        raise LayoutError(f"parse: {e} in {_clip(p.text)}") from None


# ---------------------------------------------------------------------------------------------
# the C++ spellings (CUTLASS sources, CuTe's types and expressions)
# ---------------------------------------------------------------------------------------------

_CPP_MARK = re.compile(
    r"[{}]|::|\b(?:Layout|Shape|Stride|ComposedLayout|Int|C|make_\w+|composition|decltype|using|tile_to_shape)\s*[<(=]"
    r"|\bLayout_(?:MN|K)_\w+_Atom<"
)
_CPP_TOKEN = re.compile(
    r"\s*(?:(?P<num>0[xX][0-9a-fA-F]+|\d+)[uUlL]*|(?P<name>[A-Za-z_][A-Za-z0-9_]*(?:\s*::\s*[A-Za-z_][A-Za-z0-9_]*)*)"
    r"|(?P<op>::|[<>,(){}\-;=]))"
)
_TUPLE_TYPES = {"Shape", "Stride", "Step", "Coord", "Tile", "tuple", "IntTuple"}
_TUPLE_MAKERS = {"make_shape", "make_stride", "make_step", "make_coord", "make_tuple", "make_tile"}
#: bits of the element types CuTe instantiates its GMMA atoms with (``Layout_K_SW128_Atom<half_t>``)
_CPP_TYPE_BITS = {
    "half_t": 16, "bfloat16_t": 16, "tfloat32_t": 32, "float": 32, "float_e4m3_t": 8, "float_e5m2_t": 8,
    "int8_t": 8, "uint8_t": 8, "int16_t": 16, "uint16_t": 16, "int32_t": 32, "uint32_t": 32, "double": 64,
}
#: CuTe's GMMA smem atoms in bits (cute/atom/mma_traits_sm90_gmma.hpp): (MN-major?, swizzle B)
_GMMA_ATOM = re.compile(r"(?:SM90::)?(?:GMMA::)?Layout_(MN|K)_(INTER|SW32|SW64|SW128)_Atom")
_GMMA_SWIZZLE_B = {"INTER": 0, "SW32": 1, "SW64": 2, "SW128": 3}
_DYNAMIC = {"int", "int32_t", "int64_t", "uint32_t", "uint64_t", "size_t", "long", "unsigned", "short", "uint16_t",
            "int16_t", "int8_t", "uint8_t", "auto"}


def _cute_compact(shape: Any, right: bool = False) -> Layout:
    """CuTe's compact layout of a static shape (``LayoutLeft``, or ``LayoutRight``): running products of
    the extents, and stride 0 for an extent of 1 (CuTe's ``compact_major``)."""
    leaves = flatten(shape)
    strides = [0] * len(leaves)
    p = 1
    for k in (range(len(leaves) - 1, -1, -1) if right else range(len(leaves))):
        s = leaves[k]
        if type(s) is not int:
            raise LayoutError(f"parse: extent {s!r} of {shape!r} is not an integer")
        if s != 1:
            strides[k] = p
            p *= s
    return Layout(shape, unflatten(strides, shape))


_CPP_INT = re.compile(r"(?:Int|C)<(-?\d+)>(?:\{\})?|(?<!\w)_(\d+)(?:\{\})?")
_CPP_SWIZZLE = re.compile(r"composition\(Swizzle<(\d+),(\d+),(-?\d+)>(?:\{\})?,(.*)\)")
_CPP_LETTER = re.compile(r"[A-Za-z_]").search


def _cpp_int(m: re.Match) -> str:
    return m.group(1) if m.group(1) is not None else m.group(2)


def _cpp_layout_fast(t: str) -> Layout | None:
    """A static ``Layout<Shape<..>,Stride<..>>`` / ``make_layout(make_shape(..), make_stride(..))`` /
    ``Shape<..>`` (spaces and ``cute::`` already removed, integers already plain) through the JSON reader."""
    if t.startswith("Layout<") and t.endswith(">"):
        body = t[7:-1].replace("Shape<", "[").replace("Stride<", "[").replace(">", "]")
    elif t.startswith("make_layout(") and t.endswith(")"):
        body = t[12:-1].replace("make_shape(", "[").replace("make_stride(", "[").replace(")", "]")
    elif t.startswith("Shape<") and t.endswith(">"):
        body = t.replace("Shape<", "[").replace(">", "]")
    elif t.startswith("make_shape(") and t.endswith(")"):
        body = t.replace("make_shape(", "[").replace(")", "]")
    else:
        return None
    if _CPP_LETTER(body) is not None:  # LayoutRight{}, int, a run-time name: the full reader explains
        return None
    try:
        v = _loads("[" + body + "]")
        if not t.startswith(("Layout<", "make_layout(")):  # a bare shape: compact column-major
            if len(v) != 1 or type(v[0]) is not list:
                return None
            return _cute_compact(_tup(v[0]))
        if len(v) == 1:
            s = v[0]
            return _cute_compact(_tup(s) if type(s) is list else s)
        if len(v) != 2:
            return None
        s, d = v
        return Layout(_tup(s) if type(s) is list else s, _tup(d) if type(d) is list else d)
    except (ValueError, TypeError, RecursionError):
        return None


def _cpp_fast(text: str) -> Parsed | None:
    """The common static C++ spellings without the full reader; None when anything is unusual."""
    t = _CPP_INT.sub(_cpp_int, text.replace(" ", "").replace("cute::", ""))
    m = _CPP_SWIZZLE.fullmatch(t)
    if m is not None:
        inner = _cpp_layout_fast(m.group(4))
        if inner is None:
            return None
        try:
            return ComposedLayout(Swizzle(int(m.group(1)), int(m.group(2)), int(m.group(3))), 0, inner)
        except LayoutError:
            return None
    return _cpp_layout_fast(t)


class _Cpp:
    """A small recursive-descent reader of CuTe's C++ types and expressions (static values only)."""

    def __init__(self, text: str):
        self.text = text
        body = text.strip()
        m = re.match(r"using\s+[A-Za-z_]\w*\s*=", body)
        if m:
            body = body[m.end():]
        body = body.rstrip().rstrip(";")
        self.toks: list[tuple[str, str, int]] = []
        pos, n = 0, len(body)
        while pos < n:
            if body[pos].isspace():
                pos += 1
                continue
            m2 = _CPP_TOKEN.match(body, pos)
            if m2 is None or m2.lastgroup is None:
                self.fail(f"unexpected character {body[pos]!r}")
                raise AssertionError  # unreachable
            kind = m2.lastgroup
            val = m2.group(kind)
            if kind == "name":
                val = re.sub(r"\s+", "", val)
                for prefix in ("cute::", "std::", "cutlass::"):
                    while val.startswith(prefix):
                        val = val[len(prefix):]
                if val.startswith("::"):
                    val = val[2:]
            if kind == "num" and len(val) > MAX_DIGITS:
                self.fail(f"an integer of {len(val)} digits exceeds the limit of {MAX_DIGITS} digits")
            self.toks.append((kind, val, m2.start(kind)))
            pos = m2.end()
        self.i = 0

    def fail(self, msg: str) -> None:
        raise LayoutError(f"parse: {msg} (C++ spelling {_clip(self.text)})")

    def peek(self) -> tuple[str, str, int] | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def accept(self, v: str) -> bool:
        t = self.peek()
        if t is not None and t[0] == "op" and t[1] == v:
            self.i += 1
            return True
        return False

    def expect(self, v: str) -> None:
        if not self.accept(v):
            t = self.peek()
            self.fail(f"expected {v!r}, found {'end of text' if t is None else repr(t[1])}")

    def name(self) -> str:
        t = self.peek()
        if t is None or t[0] != "name":
            self.fail(f"expected a name, found {'end of text' if t is None else repr(t[1])}")
            raise AssertionError  # unreachable
        self.i += 1
        return t[1]

    def value_braces(self) -> None:
        """``{}`` after a type makes a value of it (``Int<8>{}``); optional."""
        if self.accept("{"):
            self.expect("}")

    def args(self, close: str) -> list[Any]:
        out: list[Any] = []
        if self.accept(close):
            return out
        out.append(self.item())
        while self.accept(","):
            out.append(self.item())
        self.expect(close)
        return out

    def integer(self) -> int:
        neg = self.accept("-")
        t = self.peek()
        if t is None or t[0] != "num":
            self.fail(f"expected an integer, found {'end of text' if t is None else repr(t[1])}")
            raise AssertionError  # unreachable
        self.i += 1
        v = int(t[1], 0) if t[1][:2].lower() == "0x" else int(t[1])
        return -v if neg else v

    def item(self) -> Any:
        """One C++ entity: an int (static or literal), a tuple, a Layout, a Swizzle, a ComposedLayout,
        or the markers ``("order", "left"|"right")`` and ``("flag", bits)``."""
        t = self.peek()
        if t is None:
            self.fail("unexpected end of text")
            raise AssertionError  # unreachable
        if t[0] == "num" or t[0] == "op" and t[1] == "-":
            return self.integer()
        if t[0] == "op" and t[1] == "(":
            self.i += 1
            v = self.item()
            self.expect(")")
            return v
        n = self.name()
        if re.fullmatch(r"_m?\d+", n):  # CuTe's _8, and _m2 for Int<-2>
            self.value_braces()
            return -int(n[2:]) if n[1] == "m" else int(n[1:])
        if n in ("Int", "C", "integral_constant"):
            self.expect("<")
            if n == "integral_constant":
                self.name()
                self.expect(",")
            v = self.integer()
            self.expect(">")
            self.value_braces()
            return v
        if n in _DYNAMIC:
            self.fail(f"a type with dynamic extents ({n}) has no value; give static extents (_8, Int<8>)")
        if n in _TUPLE_TYPES:
            self.expect("<")
            vals = self.args(">")
            self.value_braces()
            return tuple(self.extent(v) for v in vals)
        if n in _TUPLE_MAKERS:
            self.expect("(")
            return tuple(self.extent(v) for v in self.args(")"))
        if n in ("LayoutLeft", "LayoutRight", "GenColMajor", "GenRowMajor"):
            self.value_braces()
            return ("order", "left" if n in ("LayoutLeft", "GenColMajor") else "right")
        if n == "Swizzle":
            self.expect("<")
            b = self.integer()
            self.expect(",")
            m = self.integer()
            self.expect(",")
            s = self.integer()
            self.expect(">")
            self.value_braces()
            return self.guard(lambda: Swizzle(b, m, s))
        if n in ("smem_ptr_flag_bits", "smem_ptr_flag"):
            bits = 1
            if n == "smem_ptr_flag_bits":
                self.expect("<")
                bits = self.integer()
                self.expect(">")
            self.value_braces()
            return ("flag", bits)
        if n == "Layout":
            self.expect("<")
            vals = self.args(">")
            self.value_braces()
            if len(vals) not in (1, 2):
                self.fail(f"Layout<...> takes a shape and a stride, found {len(vals)} arguments")
            return self.make_layout(vals)
        if n == "make_layout":
            self.expect("(")
            return self.make_layout(self.args(")"))
        if n == "ComposedLayout":
            self.expect("<")
            vals = self.args(">")
            self.value_braces()
            return self.composed(vals)
        if n in ("composition", "make_composed_layout"):
            self.expect("(")
            vals = self.args(")")
            if len(vals) == 3 or n == "make_composed_layout":
                return self.composed(vals)
            if len(vals) != 2:
                self.fail(f"composition takes two (or three) arguments, found {len(vals)}")
            a, b = vals
            if isinstance(a, Swizzle) and isinstance(b, (Layout, ComposedLayout)):
                return self.guard(lambda: ComposedLayout(a, 0, b))
            if isinstance(a, Layout) and isinstance(b, Layout):
                return self.guard(lambda: composition(a, b))
            self.fail(f"composition of {a!r} and {b!r} is not supported")
        if n == "decltype":
            self.expect("(")
            v = self.item()
            self.expect(")")
            return v
        m_atom = _GMMA_ATOM.fullmatch(n)
        if m_atom:
            return self.gmma_atom(m_atom.group(1), _GMMA_SWIZZLE_B[m_atom.group(2)])
        if n == "tile_to_shape":
            self.expect("(")
            vals = self.args(")")
            if len(vals) not in (2, 3) or not isinstance(vals[0], (Layout, ComposedLayout)):
                self.fail("tile_to_shape takes a layout, a target shape and optionally an order")
            order = vals[2] if len(vals) == 3 else None
            if type(order) is tuple and len(order) == 2 and order[0] == "order":
                order = order[1]
            return self.guard(lambda: tile_to_shape(vals[0], self.extent(vals[1]), order))
        if re.fullmatch(r"[A-Za-z_]\w*", n) and not self.peek_is("<", "("):
            self.fail(f"{n!r} is a run-time value (a dynamic extent) and has no value here")
        self.fail(f"unknown C++ name {n!r}")
        raise AssertionError  # unreachable

    def gmma_atom(self, major: str, b: int) -> ComposedLayout:
        """``GMMA::Layout_{MN,K}_{INTER,SW32,SW64,SW128}_Atom<T>``: CuTe's bit-unit atom, a
        ``Swizzle<B,4,3>`` of byte addresses over 8 rows of ``128 << B`` bits, upcast to T's width."""
        self.expect("<")
        t = self.name()
        self.expect(">")
        self.value_braces()
        if t not in _CPP_TYPE_BITS:
            self.fail(f"GMMA atom element type {t!r} is not one of {sorted(_CPP_TYPE_BITS)}")
        bits = _CPP_TYPE_BITS[t]
        w = (128 << b) // bits  # elements in one row of the pattern
        inner = Layout((w, 8), (1, w)) if major == "MN" else Layout((8, w), (w, 1))
        return self.composed([Swizzle(b, 4, 3), ("flag", bits), inner])

    def peek_is(self, *ops: str) -> bool:
        t = self.peek()
        return t is not None and t[0] == "op" and t[1] in ops

    def guard(self, build: Any) -> Any:
        try:
            return build()
        except LayoutError as e:
            self.fail(str(e))

    def extent(self, v: Any) -> Any:
        """An element of a shape or stride: an int or a tuple of them."""
        if type(v) is int or type(v) is tuple and not (len(v) == 2 and v[0] in ("order", "flag")):
            return v
        self.fail(f"{v} is not an integer or a tuple of integers")

    def make_layout(self, vals: list[Any]) -> Layout:
        if vals and all(isinstance(v, Layout) for v in vals):
            return make_layout(*vals)
        if len(vals) not in (1, 2):
            self.fail(f"make_layout takes a shape and a stride (or an order), found {len(vals)} arguments")
        shp = self.extent(vals[0])
        if len(vals) == 1:
            return self.guard(lambda: _cute_compact(shp))
        d = vals[1]
        if type(d) is tuple and len(d) == 2 and d[0] == "order":
            return self.guard(lambda: _cute_compact(shp, d[1] == "right"))
        return self.guard(lambda: Layout(shp, self.extent(d)))

    def composed(self, vals: list[Any]) -> ComposedLayout:
        if len(vals) != 3:
            self.fail(f"a composed layout takes (outer, offset, inner), found {len(vals)} arguments")
        outer, off, inner = vals
        if type(off) is tuple and len(off) == 2 and off[0] == "flag":
            # the swizzle of a GMMA atom acts on byte addresses of `bits`-bit elements
            # (cute::as_position_independent_swizzle_layout recasts it to element units)
            bits = off[1]
            if not isinstance(outer, Swizzle):
                self.fail("smem_ptr_flag_bits needs a Swizzle as the outer function")
            outer, off = _swizzle_on_elements(outer, bits, self.fail), 0
        if type(off) is not int:
            self.fail(f"the offset of a composed layout must be an integer, found {off!r}")
        if not isinstance(outer, (Swizzle, Layout, ComposedLayout)) or not isinstance(inner, (Layout, ComposedLayout)):
            self.fail(f"a composed layout needs a swizzle or layout outside and a layout inside, found {outer!r}, {inner!r}")
        return self.guard(lambda: ComposedLayout(outer, off, inner))

    def parse(self) -> Parsed:
        v = self.item()
        if self.peek() is not None:
            self.fail(f"unexpected {self.peek()[1]!r}")  # type: ignore[index]
        if type(v) is int:
            self.fail(f"the integer {v} alone is not a layout (Layout<_{v},_1> is)")
        if type(v) is tuple and not (len(v) == 2 and v[0] in ("order", "flag")):
            return self.guard(lambda: _cute_compact(v))  # a bare Shape<...>: compact column-major
        if isinstance(v, (Layout, ComposedLayout, Swizzle)):
            return v
        self.fail(f"{v!r} is not a layout")
        raise AssertionError  # unreachable


# ---------------------------------------------------------------------------------------------
# tensors and pointers, as CuTe C++ and the CuTe DSL print them
# ---------------------------------------------------------------------------------------------

#: the CuTe DSL's element type names (``ptr<f16, smem, ...>``) with their widths in bits
_DSL_TYPE_BITS = {
    "i1": 1, "i4": 4, "u4": 4, "i8": 8, "u8": 8, "i16": 16, "u16": 16, "i32": 32, "u32": 32, "i64": 64,
    "u64": 64, "f16": 16, "bf16": 16, "tf32": 32, "f32": 32, "f64": 64, "f8E4M3FN": 8, "f8E5M2": 8,
    "f8E8M0FNU": 8, "f6E2M3FN": 6, "f6E3M2FN": 6, "f4E2M1FN": 4, "f8E4M3": 8, "f8E4M3B11FNUZ": 8,
    "i2": 2, "u2": 2, "i6": 6, "u6": 6, "c64": 64, "c128": 128,
}


@dataclass(frozen=True)
class Pointer:
    """The engine of a printed tensor -- where element offset 0 lives and what an element is.

    ``space`` is CuTe's address space (``"gmem"``, ``"smem"``, ``"rmem"``, ``"tmem"``, or None for a
    generic ``ptr``/``subptr``); ``bits`` the element width (None where the print gives none);
    ``dtype`` the DSL's element type name (``"f16"``; C++ prints only the width); ``address`` the
    printed address (None for ``unset`` or the DSL's ``ptr<...>``, which prints none); ``swizzle`` a
    swizzle of *byte addresses* carried by the pointer (C++ ``Sw<3,4,3>_smem_ptr[16b](..)``, the DSL's
    ``ptr<f16, smem, align<16>, S<3,4,3>>``); ``align`` the DSL's ``align<N>`` in bytes; ``sparse`` the
    sparsity of CuTe's sparse pointers; ``sub_index`` the element index within the byte of a sub-byte
    pointer (``subptr[4b](0x...3)``); ``counting`` the start of CuTe's ``counting_iter(n)``.
    """

    space: str | None = None
    bits: int | None = None
    dtype: str | None = None
    address: int | None = None
    swizzle: Swizzle | None = None
    align: int | None = None
    sparse: int | None = None
    sub_index: int | None = None
    counting: int | None = None
    text: str = ""

    def __str__(self) -> str:
        return self.text


def swizzle_units(sw: Swizzle, bits: int, on: str = "elements") -> str:
    """What ``sw`` does, in bytes and in elements of ``bits`` bits: ``on`` says which offsets it acts on
    (``"elements"``: element offsets, as in a composed layout; ``"bytes"``: byte addresses, as a
    swizzled pointer or a GMMA atom's ``Sw<B,M,S> o smem_ptr[..b](unset)``).

    >>> for part in swizzle_units(Swizzle(3, 4, 3), 16, on="bytes").split("; "):
    ...     print(part)
    Sw<3,4,3> on byte addresses of 16b elements: swizzle moves 16-byte units = 8 elements of 16b
    within each 128-byte row (64 elements) the 8 units are permuted by XOR with bits [7,10) of the address (the row index mod 8)
    the pattern repeats every 1024 bytes (512 elements)
    >>> for part in swizzle_units(Swizzle(3, 3, 3), 16).split("; "):
    ...     print(part)
    Sw<3,3,3> on element offsets of 16b elements: swizzle moves 16-byte units = 8 elements of 16b
    within each 128-byte row (64 elements) the 8 units are permuted by XOR with bits [6,9) of the offset (the row index mod 8)
    the pattern repeats every 1024 bytes (512 elements)
    """
    if on not in ("elements", "bytes"):
        raise LayoutError(f"swizzle_units: on={on!r} must be 'elements' or 'bytes'")
    if type(bits) is not int or bits < 1:
        raise LayoutError(f"swizzle_units: element width {bits!r} must be a positive number of bits")
    what = "element offsets" if on == "elements" else "byte addresses"
    head = f"{sw} on {what} of {bits}b elements"
    if sw.is_identity:
        return f"{head}: the identity (B=0), no element moves"
    unit_bits = (1 << sw.M) * (bits if on == "elements" else 8)  # the bits of one moved unit

    def amount(nbits: int) -> tuple[str, str]:
        b = f"{nbits // 8} bytes" if nbits % 8 == 0 else f"{nbits} bits"
        e = nbits / bits
        return b, f"{e:g} element" + ("" if e == 1 else "s")

    ub, ue = amount(unit_bits)
    ub1 = ub.replace(" bytes", "-byte").replace(" bits", "-bit")
    if unit_bits < bits:
        ue = f"a part of one {bits}b element: the swizzle splits elements and permutes no whole elements"
    else:
        ue = f"{ue} of {bits}b"
    lo = sw.M + max(0, sw.S)
    unit_word = "address" if on == "bytes" else "offset"
    if sw.S > 0:
        row_bits = unit_bits << sw.S
        rb, re_ = amount(row_bits)
        period_b, period_e = amount(unit_bits << (sw.S + sw.B))
        return (f"{head}: swizzle moves {ub1} units = {ue}; "
                f"within each {rb.replace(' bytes', '-byte').replace(' bits', '-bit')} row ({re_}) the {1 << sw.B} "
                f"units are permuted by XOR with bits [{lo},{lo + sw.B}) of the {unit_word} (the row index mod "
                f"{1 << sw.B}); the pattern repeats every {period_b} ({period_e})")
    # S < 0: the low bits [M, M+B) steer the high bits [M-S, M-S+B)
    period_b, period_e = amount(unit_bits << (-sw.S + sw.B))
    return (f"{head}: swizzle moves {ub1} units = {ue}; the unit index bits [{sw.M - sw.S},{sw.M - sw.S + sw.B}) of "
            f"the {unit_word} are XOR-ed with its bits [{sw.M},{sw.M + sw.B}); the pattern repeats every {period_b} "
            f"({period_e})")


class ParsedTensor:
    """A tensor as CuTe prints it: its engine (:class:`Pointer`), its layout and, for a ``print_tensor``,
    its values.

    ``layout`` is the layout as printed; :attr:`function` is coordinate -> element offset from the
    pointer, with a swizzle carried by the pointer (CuTe's swizzled pointers swizzle *byte* addresses)
    moved in front of the layout as the same permutation of element offsets -- CuTe's
    ``as_position_independent_swizzle_tensor``, which holds when the address is a multiple of the
    swizzle's period (a printed address that is not is refused). Calling the tensor evaluates
    :attr:`function`. ``data`` is a numpy array indexed by the top-level modes' coordinates (the
    printed values, rank 1 to 4 as ``print_tensor`` prints them), or None.

    >>> T = parse("smem_ptr[16b](0x7f00) o (_4,_2):(_2,_1)")
    >>> T.pointer.space, T.bits, T.pointer.address, T(1, 1)
    ('smem', 16, 32512, 3)
    >>> T = parse("Sw<3,4,3>_smem_ptr[16b](0x400) o (_8,_64):(_64,_1)")
    >>> T.function
    Sw<3,3,3> o _0 o (8,64):(64,1)
    >>> for part in T.describe().split("; "):
    ...     print(part)
    smem tensor of 16b elements at 0x400, layout (8,64):(64,1) (512 elements)
    the pointer swizzles byte addresses: Sw<3,4,3> on byte addresses of 16b elements: swizzle moves 16-byte units = 8 elements of 16b
    within each 128-byte row (64 elements) the 8 units are permuted by XOR with bits [7,10) of the address (the row index mod 8)
    the pattern repeats every 1024 bytes (512 elements)
    as element offsets that is Sw<3,3,3> o _0 o (8,64):(64,1)
    """

    __slots__ = ("pointer", "layout", "data", "text", "_function")

    def __init__(self, pointer: Pointer, layout: Any, data: Any = None, text: str = ""):
        self.pointer = pointer
        self.layout = layout
        self.data = data
        self.text = text
        self._function: Layout | ComposedLayout | None = None

    @property
    def bits(self) -> int | None:
        """The element width in bits (None where the print gives none)."""
        return self.pointer.bits

    @property
    def function(self) -> Layout | ComposedLayout:
        """Coordinate -> element offset from the pointer (a pointer's swizzle recast to elements)."""
        if self._function is None:
            sw = self.pointer.swizzle
            if sw is None or sw.is_identity:
                self._function = self.layout
            else:
                p = self.pointer
                if p.bits is None:
                    raise LayoutError(f"parse: {p.text} swizzles byte addresses but gives no element width")
                if p.address is not None and p.address % sw.period:
                    raise LayoutError(
                        f"parse: the swizzled pointer {p.text} sits at {p.address:#x}, not a multiple of its "
                        f"swizzle's period ({sw.period} bytes): its element offsets depend on the address, "
                        "and no position-independent layout describes them")

                def fail(msg: str) -> None:
                    raise LayoutError(f"parse: {msg} (pointer {p.text})")

                self._function = ComposedLayout(_swizzle_on_elements(sw, p.bits, fail), 0, self.layout)
        return cast(Layout | ComposedLayout, self._function)

    def __call__(self, *coord: Any) -> Any:
        return self.function(*coord)

    def size(self) -> Any:
        return self.layout.size()

    def describe(self) -> str:
        """What the tensor is, in words: the space, the element width, the layout and, for a swizzle,
        what it moves in bytes and in elements."""
        p = self.pointer
        where = f"{p.space} tensor" if p.space else ("counting tensor" if p.counting is not None else "tensor")
        width = f" of {p.bits}b elements" + (f" ({p.dtype})" if p.dtype else "") if p.bits else ""
        at = f" at {p.address:#x}" if p.address is not None else ""
        lines = [f"{where}{width}{at}, layout {self.layout} ({self.layout.size()} elements)"]
        if p.swizzle is not None and p.bits:
            lines.append("the pointer swizzles byte addresses: " + swizzle_units(p.swizzle, p.bits, "bytes"))
            lines.append(f"as element offsets that is {self.function}")
        L = self.layout
        while isinstance(L, ComposedLayout):
            if isinstance(L.outer, Swizzle) and p.bits:
                lines.append("the layout's swizzle acts on element offsets: " + swizzle_units(L.outer, p.bits))
                if p.dtype is not None and p.space == "smem" and p.bits != 8 and not L.outer.is_identity:
                    # the DSL's smem atoms (warpgroup.make_smem_layout_atom) write the byte swizzle here,
                    # and its MMAs ask for it on the pointer (recast_ptr), where it acts on byte addresses
                    lines.append("note: the CuTe DSL's shared-memory atoms write Sw<B,4,3> of byte addresses here "
                                 "and move it to the pointer (recast_ptr) for an MMA; on the pointer it reads: "
                                 + swizzle_units(L.outer, p.bits, "bytes"))
            L = L.inner
        if self.data is not None:
            lines.append(f"values: {self.data.size} printed")
        return "\n".join(lines)

    def __str__(self) -> str:
        return f"{self.pointer} o {self.layout}"

    def __repr__(self) -> str:
        return f"ParsedTensor({self.pointer.text!r} o {self.layout})"


_CPP_PTR = re.compile(
    r"(?:Sw<(?P<B>\d+),(?P<M>\d+),(?P<S>-?\d+)>_)?(?:sparse<(?P<sp>\d+)>_)?(?P<space>gmem_|smem_|rmem_)?"
    r"(?P<kind>ptr|subptr)\[(?P<bits>\d+)b\]\((?P<addr>0x[0-9a-fA-F]+|\(nil\)|nil|0)(?:\.(?P<idx>\d+))?\)"
    r"|tmem_\[(?P<tbits>\d+)b\]\(0x(?P<hi>[0-9a-fA-F]+)\.(?P<lo>[0-9a-fA-F]+)\)"
    r"|counting_iter\((?P<count>-?\d+)\)"
)
_DSL_PTR = re.compile(
    r"ptr<\s*(?P<dtype>\w+)\s*,\s*(?P<space>\w+)\s*(?:,\s*align<(?P<align>\d+)>\s*)?"
    r"(?:,\s*S<(?P<B>\d+),(?P<M>\d+),(?P<S>-?\d+)>?\s*)?>"
    r"|raw_ptr\((?P<addr>0x[0-9a-fA-F]+)\s*:\s*(?P<rdtype>\w+)\s*,\s*(?P<rspace>\w+)\s*(?:,\s*align<(?P<ralign>\d+)>\s*)?\)"
)
#: what the CuTe DSL calls an address space
_DSL_SPACES = {"gmem": "gmem", "smem": "smem", "rmem": "rmem", "tmem": "tmem", "generic": None}
_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?|inf|nan)", re.IGNORECASE)
_IDENTITY_ENGINE = re.compile(r"\s*(?:ArithTuple\(|\(\s*_?\d+\s*(?:,\s*_?\d+\s*)*\)\s+o\s+.*@)")


def _cpp_pointer(m: re.Match, text: str) -> Pointer:
    if m.group("count") is not None:
        return Pointer(counting=int(m.group("count")), text=text)
    if m.group("tbits") is not None:
        return Pointer(space="tmem", bits=int(m.group("tbits")),
                       address=(int(m.group("hi"), 16) << 16) | int(m.group("lo"), 16), text=text)
    addr = m.group("addr")
    sw = None
    if m.group("B") is not None:
        try:
            sw = Swizzle(int(m.group("B")), int(m.group("M")), int(m.group("S")))
        except LayoutError as e:
            raise LayoutError(f"parse: {e} in the pointer {text!r}") from None
    return Pointer(space=(m.group("space") or "")[:-1] or None, bits=int(m.group("bits")),
                   address=int(addr, 16) if addr.startswith("0x") else 0, swizzle=sw,
                   sparse=int(m.group("sp")) if m.group("sp") else None,
                   sub_index=int(m.group("idx")) if m.group("idx") is not None else None, text=text)


def _dsl_pointer(m: re.Match, text: str) -> Pointer:
    dtype = m.group("dtype") or m.group("rdtype")
    space = m.group("space") or m.group("rspace")
    align = m.group("align") or m.group("ralign")
    bits = _DSL_TYPE_BITS.get(dtype)
    if bits is None:
        w = re.match(r"[A-Za-z]+(\d+)", dtype)
        bits = int(w.group(1)) if w else None
    sw = None
    if m.group("B") is not None:
        try:
            sw = Swizzle(int(m.group("B")), int(m.group("M")), int(m.group("S")))
        except LayoutError as e:
            raise LayoutError(f"parse: {e} in the pointer {text!r}") from None
    return Pointer(space=_DSL_SPACES.get(space, space), bits=bits, dtype=dtype,
                   address=int(m.group("addr"), 16) if m.group("addr") else None, swizzle=sw,
                   align=int(align) if align else None, text=text)


def _values(text: str, what: str) -> list:
    out: list = []
    for tok in _NUMBER.findall(text):
        if re.fullmatch(r"[-+]?\d+", tok):
            out.append(int(tok))
        else:
            out.append(float(tok))
    rest = _NUMBER.sub("", text)
    if re.search(r"[^\s\[\](),|+=\-]", rest):
        raise LayoutError(f"parse: the values of {what} are not numbers: {_clip(text.strip(), 60)}")
    return out


def _data(layout: Any, values: list, text: str) -> Any:
    """The printed values as an array indexed by the top-level modes (CuTe's print_tensor order: the
    last of up to four modes outermost, then mode 2, rows of mode 0, columns of mode 1)."""
    import numpy as np

    if not isinstance(layout, (Layout, ComposedLayout)) or not layout.is_static:
        raise LayoutError(f"parse: values printed for a tensor with a symbolic layout in {_clip(text)}")
    shape = _domain_shape(layout)
    dims = [_size(s) for s in (shape if type(shape) is tuple else (shape,))]
    n = 1
    for d in dims:
        n *= d
    if len(values) != n:
        raise LayoutError(f"parse: {len(values)} values printed for a tensor of {n} elements in {_clip(text)}")
    if not 1 <= len(dims) <= 4:
        raise LayoutError(f"parse: print_tensor prints tensors of rank 1 to 4; this one has rank {len(dims)}")
    a = np.array(values)
    if len(dims) == 1:
        return a
    # printed order: [p][k][m][n]
    order = [dims[3]] if len(dims) == 4 else []
    order += [dims[2]] if len(dims) >= 3 else []
    a = a.reshape(order + [dims[0], dims[1]])
    r = len(dims)
    # axes now (p?, k?, m, n) -> (m, n, k?, p?)
    perm = [r - 2, r - 1] + list(range(r - 3, -1, -1))
    return a.transpose(perm)


def _size(s: Any) -> int:
    if type(s) is tuple:
        out = 1
        for x in s:
            out *= _size(x)
        return out
    return int(s)


def _domain_shape(L: Any) -> Any:
    while isinstance(L, ComposedLayout):
        L = L.inner
    return L.shape


def _parse_tensor(text: str) -> ParsedTensor | None:
    """``text`` read as a printed tensor, or None when it is no tensor print (then it is layout text)."""
    s = text.strip()
    if _IDENTITY_ENGINE.match(s) or re.match(r"tensor\s*<\s*\(", s):
        raise LayoutError(
            f"parse: {_clip(s)} is a coordinate (identity) tensor: its strides are basis vectors (_1@0), "
            "which a layout of integers does not hold; parse its shape instead")
    data_text = None
    m = re.fullmatch(r"tensor\s*<(.*)>", s, re.S)
    if m:  # the DSL's type print: tensor<ptr<f16, smem, align<16>> o (4,2):(2,1)>
        body = m.group(1).strip()
        pm = _DSL_PTR.match(body)
        if pm is None:
            raise LayoutError(f"parse: {_clip(s)}: the engine of this DSL tensor is not a pointer print")
        ptr = _dsl_pointer(pm, pm.group(0))
        rest = body[pm.end():]
    else:
        m = re.fullmatch(r"tensor\s*\((.*?)\s*,\s*data\s*=(.*)\)", s, re.S)
        if m:  # the DSL's print_tensor: tensor(raw_ptr(0x..: f32, rmem, align<32>) o L, data=[[..]])
            body, data_text = m.group(1).strip(), m.group(2)
            pm = _DSL_PTR.match(body)
            if pm is None:
                raise LayoutError(f"parse: {_clip(s)}: the engine of this DSL tensor is not a pointer print")
            ptr = _dsl_pointer(pm, pm.group(0))
            rest = body[pm.end():]
        else:
            pm = _DSL_PTR.match(s)
            if pm is not None:  # raw_ptr(...) o L [= (values)]: the DSL's printf of a tensor
                ptr = _dsl_pointer(pm, pm.group(0))
                rest = s[pm.end():]
                if "=" in rest:
                    rest, _, flat = rest.partition("=")
                    rest = rest.rstrip()
                    _values(flat, _clip(s))  # checked to be numbers; their order is not documented
            else:
                pm = _CPP_PTR.match(s)
                if pm is None:
                    return None
                ptr = _cpp_pointer(pm, pm.group(0))
                rest = s[pm.end():]
                nl = rest.find("\n")
                head = rest if nl < 0 else rest[:nl]
                if head.rstrip().endswith(":"):  # print_tensor: the header ends in ':' and values follow
                    data_text = "" if nl < 0 else rest[nl + 1:]
                    rest = head.rstrip()[:-1]
                elif nl >= 0 and rest[nl:].strip():
                    raise LayoutError(f"parse: unexpected text after the tensor's layout in {_clip(s)}")
    r = re.match(r"\s+o\s+", rest)
    if r is None:
        raise LayoutError(f"parse: expected ' o ' and a layout after the pointer {ptr.text!r} in {_clip(s)}")
    layout_text = rest[r.end():].strip()
    layout = parse(layout_text)
    if not isinstance(layout, (Layout, ComposedLayout)):
        raise LayoutError(f"parse: the layout of the tensor {_clip(s)} is a swizzle alone")
    data = None
    if data_text is not None:
        data = _data(layout, _values(data_text, _clip(s)), s)
    return ParsedTensor(ptr, layout, data, text)


# ---------------------------------------------------------------------------------------------
# entry points
# ---------------------------------------------------------------------------------------------


def parse(text: str) -> Parsed:
    """parse(text) -> Layout, ComposedLayout or Swizzle, the inverse of ``str``: ``parse(str(L)) == L``.

    Reads CuTe notation (``(4,2):(2,1)``, ``Sw<3,4,3> o _0 o (8,64):(64,1)``, symbols) and the C++
    spellings of CUTLASS (``Layout<Shape<_8,_64>,Stride<_64,_1>>``, ``make_layout(...)``); see the
    module docstring. Anything else is a LayoutError naming the column where reading stopped.

    >>> parse("(4,2):(2,1)")(5)
    3
    """
    if type(text) is not str:
        raise LayoutError(f"parse: expected a string, got {text!r}"[:200])
    r = _fast(text)
    if r is not None:
        return r
    if not text.strip():
        raise LayoutError("parse: empty text")
    if _TENSORISH(text):
        t = _parse_tensor(text)
        if t is not None:
            return t
    if "\n" in text.strip():
        g = _print_layout(text)
        if g is not None:
            return g
    try:
        if _CPP_MARK.search(text):
            return _cpp_fast(text) or _Cpp(text).parse()
        return _Parser(text).composed()
    except RecursionError:
        raise LayoutError(f"parse: {_clip(text, 40)} is nested too deeply") from None


_TENSORISH = re.compile(r"ptr|tensor|counting_iter|ArithTuple|tmem_").search
_GRID_ROW = re.compile(r"\s*(\d+)\s+\|((?:\s*-?\d+\s*\|)+)\s*")
_GRID_RULE = re.compile(r"\s*\+(?:-+\+)+\s*|\s*(?:\d+\s*)+|\s*\(showing [^)]*\)\s*")


def _print_layout(text: str) -> Parsed | None:
    """CuTe's ``print_layout`` (the layout on the first line, then its grid of offsets): the layout,
    once every printed offset is checked to be the layout's own (a grid that disagrees is refused);
    None when the lines after the first are no grid (multi-line layout text)."""
    first, _, rest = text.strip().partition("\n")
    body = [ln for ln in rest.splitlines() if ln.strip()]
    if not body or not all(_GRID_RULE.fullmatch(ln) or _GRID_ROW.fullmatch(ln) for ln in body):
        return None
    L = parse(first)
    if not isinstance(L, (Layout, ComposedLayout)):
        raise LayoutError(f"parse: {_clip(first)} heads a grid but is no layout")
    rows = []
    for line in body:
        m = _GRID_ROW.fullmatch(line)
        if m is not None:
            rows.append((int(m.group(1)), [int(v) for v in m.group(2).strip(" |").split("|")]))
    if not rows:
        raise LayoutError(f"parse: text after the layout {_clip(first)} is no print_layout grid")
    if len(L) != 2 or not L.is_static:
        raise LayoutError(f"parse: print_layout draws static rank-2 layouts; {first.strip()} is not one")
    R, C = int(L[0].size()), int(L[1].size())
    for r, vals in rows:
        if r >= R or len(vals) > C:
            raise LayoutError(f"parse: the grid's row {r} ({len(vals)} columns) lies outside {first.strip()} ({R} x {C})")
        for c, v in enumerate(vals):
            if int(L(r, c)) != v:
                raise LayoutError(f"parse: the grid says ({r},{c}) -> {v}, but {first.strip()} gives {int(L(r, c))}")
    return L


def as_concrete_layout(x: Any, op: str, what: str = "layout") -> Layout | ComposedLayout:
    """``x`` as a Layout or ComposedLayout with concrete entries: layout text is parsed; anything else,
    or a layout with symbols, is a LayoutError naming ``op``."""
    if isinstance(x, str):
        x = parse(x)
    if isinstance(x, ParsedTensor):  # a printed tensor: its coordinate -> element offset function
        x = x.function
    if not isinstance(x, (Layout, ComposedLayout)):
        raise LayoutError(f"{op}: {what} {x!r} is not a Layout, a ComposedLayout or layout text")
    if not x.is_static:
        raise LayoutError(f"{op}: {what} {x} has symbolic entries; substitute values first (subs)")
    return x


def _parse_function(text: str) -> Parsed:
    """parse, with a printed tensor read as its coordinate -> element offset function (the reader lower
    layers get through :mod:`layoutalg.hooks`, e.g. :func:`layoutalg.composed.parse_composed`)."""
    x = parse(text)
    return x.function if isinstance(x, ParsedTensor) else x


provide("parse", _parse_function)
