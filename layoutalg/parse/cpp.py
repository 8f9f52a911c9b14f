"""The C++ spellings of CUTLASS sources: CuTe's layout types and expressions (:class:`CppParser`), with a
fast path for static layout types (:func:`cpp_fast`); :data:`CPP_MARK` tells such text from CuTe notation."""

from __future__ import annotations

import re
from typing import Any

from ..algebra import composition, tile_to_shape
from ..composed import ComposedLayout
from ..errors import LayoutError
from ..inttuple import flatten, unflatten
from ..layout import Layout, make_layout
from ..swizzle import Swizzle
from .notation import MAX_DIGITS, as_tuple, loads
from .tensors import Parsed, clip, swizzle_on_elements

#: the public names (the rest serves the reader)
__all__ = ["CPP_MARK", "CppParser", "cpp_fast"]

# ---------------------------------------------------------------------------------------------
# the C++ spellings (CUTLASS sources, CuTe's types and expressions)
# ---------------------------------------------------------------------------------------------

#: text in a C++ spelling (braces, ``::``, a CuTe type or maker followed by ``<``, ``(`` or ``=``)
CPP_MARK = re.compile(
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
        v = loads("[" + body + "]")
        if not t.startswith(("Layout<", "make_layout(")):  # a bare shape: compact column-major
            if len(v) != 1 or type(v[0]) is not list:
                return None
            return _cute_compact(as_tuple(v[0]))
        if len(v) == 1:
            s = v[0]
            return _cute_compact(as_tuple(s) if type(s) is list else s)
        if len(v) != 2:
            return None
        s, d = v
        return Layout(as_tuple(s) if type(s) is list else s, as_tuple(d) if type(d) is list else d)
    except (ValueError, TypeError, RecursionError):
        return None


def cpp_fast(text: str) -> Parsed | None:
    """The common static C++ spellings without the full reader; None when anything is unusual."""
    if not isinstance(text, str):
        raise LayoutError(f"parse: expected text, got {type(text).__name__}")
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


class CppParser:
    """A small recursive-descent reader of CuTe's C++ types and expressions (static values only)."""

    def __init__(self, text: str):
        if not isinstance(text, str):
            raise LayoutError(f"parse: expected text, got {type(text).__name__}")
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
        raise LayoutError(f"parse: {msg} (C++ spelling {clip(self.text)})")

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
            outer, off = swizzle_on_elements(outer, bits, self.fail), 0
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
