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

The reader is split along CuTe's spellings: :mod:`.notation` (CuTe notation's grammar and its fast
paths), :mod:`.cpp` (CUTLASS's C++ types and expressions), :mod:`.tensors` (printed tensors:
:class:`Pointer`, :class:`ParsedTensor`); this module reads printed tensors and ``print_layout``
grids and holds the entry points. Import them from here (``from layoutalg.parse import parse``).
"""

from __future__ import annotations

import re
import warnings
from typing import Any

from ..composed import ComposedLayout, parse_composed
from ..errors import LayoutError, LayoutWarning
from ..hooks import provide
from ..layout import Layout
from ..swizzle import Swizzle
from .cpp import CPP_MARK, CppParser, cpp_fast
from .notation import MAX_DIGITS, Parser, read_fast, symbol  # noqa: F401 - MAX_DIGITS: importable from here
from .prints import SetupPrint, is_setup_print, parse_setup, parse_tiler, strip_label
from .tensors import Parsed, ParsedTensor, Pointer, clip, swizzle_units

__all__ = ["parse", "parse_composed", "symbol", "as_concrete_layout", "ParsedTensor", "Pointer", "swizzle_units",
           "SetupPrint", "parse_setup", "parse_tiler"]


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
        raise LayoutError(f"parse: the values of {what} are not numbers: {clip(text.strip(), 60)}")
    return out


def _data(layout: Any, values: list, text: str) -> Any:
    """The printed values as an array indexed by the top-level modes (CuTe's print_tensor order: the
    last of up to four modes outermost, then mode 2, rows of mode 0, columns of mode 1)."""
    import numpy as np

    if not isinstance(layout, (Layout, ComposedLayout)) or not layout.is_static:
        raise LayoutError(f"parse: values printed for a tensor with a symbolic layout in {clip(text)}")
    shape = _domain_shape(layout)
    dims = [_size(s) for s in (shape if type(shape) is tuple else (shape,))]
    n = 1
    for d in dims:
        n *= d
    if len(values) != n:
        raise LayoutError(f"parse: {len(values)} values printed for a tensor of {n} elements in {clip(text)}")
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
            f"parse: {clip(s)} is a coordinate (identity) tensor: its strides are basis vectors (_1@0), "
            "which a layout of integers does not hold; parse its shape instead")
    data_text = None
    m = re.fullmatch(r"tensor\s*<(.*)>", s, re.S)
    if m:  # the DSL's type print: tensor<ptr<f16, smem, align<16>> o (4,2):(2,1)>
        body = m.group(1).strip()
        pm = _DSL_PTR.match(body)
        if pm is None:
            raise LayoutError(f"parse: {clip(s)}: the engine of this DSL tensor is not a pointer print")
        ptr = _dsl_pointer(pm, pm.group(0))
        rest = body[pm.end():]
    else:
        m = re.fullmatch(r"tensor\s*\((.*?)\s*,\s*data\s*=(.*)\)", s, re.S)
        if m:  # the DSL's print_tensor: tensor(raw_ptr(0x..: f32, rmem, align<32>) o L, data=[[..]])
            body, data_text = m.group(1).strip(), m.group(2)
            pm = _DSL_PTR.match(body)
            if pm is None:
                raise LayoutError(f"parse: {clip(s)}: the engine of this DSL tensor is not a pointer print")
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
                    _values(flat, clip(s))  # checked to be numbers; their order is not documented
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
                    raise LayoutError(f"parse: unexpected text after the tensor's layout in {clip(s)}")
    r = re.match(r"\s+o\s+", rest)
    if r is None:
        raise LayoutError(f"parse: expected ' o ' and a layout after the pointer {ptr.text!r} in {clip(s)}")
    layout_text = rest[r.end():].strip()
    layout = parse(layout_text)
    if not isinstance(layout, (Layout, ComposedLayout)):
        raise LayoutError(f"parse: the layout of the tensor {clip(s)} is a swizzle alone")
    data = None
    if data_text is not None:
        data = _data(layout, _values(data_text, clip(s)), s)
    return ParsedTensor(ptr, layout, data, text)



#: the CuTe DSL's element type names (``ptr<f16, smem, ...>``) with their widths in bits
_DSL_TYPE_BITS = {
    "i1": 1, "i4": 4, "u4": 4, "i8": 8, "u8": 8, "i16": 16, "u16": 16, "i32": 32, "u32": 32, "i64": 64,
    "u64": 64, "f16": 16, "bf16": 16, "tf32": 32, "f32": 32, "f64": 64, "f8E4M3FN": 8, "f8E5M2": 8,
    "f8E8M0FNU": 8, "f6E2M3FN": 6, "f6E3M2FN": 6, "f4E2M1FN": 4, "f8E4M3": 8, "f8E4M3B11FNUZ": 8,
    "i2": 2, "u2": 2, "i6": 6, "u6": 6, "c64": 64, "c128": 128,
}



# ---------------------------------------------------------------------------------------------
# entry points
# ---------------------------------------------------------------------------------------------


def parse(text: str) -> Parsed | SetupPrint | tuple:
    """parse(text) -> Layout, ComposedLayout or Swizzle, the inverse of ``str``: ``parse(str(L)) == L``.

    Reads CuTe notation (``(4,2):(2,1)``, ``Sw<3,4,3> o _0 o (8,64):(64,1)``, symbols) and the C++
    spellings of CUTLASS (``Layout<Shape<_8,_64>,Stride<_64,_1>>``, ``make_layout(...)``); see the
    module docstring. Anything else is a LayoutError naming the column where reading stopped.

    >>> parse("(4,2):(2,1)")(5)
    3
    """
    if type(text) is not str:
        raise LayoutError(f"parse: expected a string, got {text!r}"[:200])
    r = read_fast(text)
    if r is not None:
        if isinstance(r, Layout) and not r.is_static:
            _warn_stray_letters(text, r)
        return r
    if not text.strip():
        raise LayoutError("parse: empty text")
    if is_setup_print(text):  # print(tiled_mma), print(tiled_copy), an atom's print
        return parse_setup(text, parse)
    label, value = strip_label(text)
    if label is not None:  # one labelled line of such a print: its value
        return parse(value)
    if _TENSORISH(text):
        t = _parse_tensor(text)
        if t is not None:
            return t
    if "\n" in text.strip():
        g = _print_layout(text)
        if g is not None:
            return g
    try:
        if CPP_MARK.search(text):
            return cpp_fast(text) or CppParser(text).parse()
        r = Parser(text).composed()
    except RecursionError:
        raise LayoutError(f"parse: {clip(text, 40)} is nested too deeply") from None
    except LayoutError:
        if _TILERISH(text):  # a tiler: a tuple of layouts and '_' (((_4,_32):(_32,_1),_32:_1), (_,_,_))
            try:
                tiler = parse_tiler(text, parse)
            except LayoutError:
                tiler = ()
            if len(tiler) >= 2:
                return tiler
        raise
    if isinstance(r, Layout) and not r.is_static:
        _warn_stray_letters(text, r)
    return r


_TILERISH = re.compile(r"\s*\((?:.*\)\s*:\s*\(.*,.*:|\s*_\s*[,)]|.*,\s*_\s*[,)])").match
#: letters that read as digits: a symbol named so is most likely a typo
_LOOKALIKES = {"l": "1", "I": "1", "O": "0"}


def _warn_stray_letters(text: str, L: Layout) -> None:
    """Warn (LayoutWarning) when a layout's symbol looks like a stray letter: a digit lookalike (``l``,
    ``I``, ``O``), or a one-letter symbol only in the stride of a layout whose shape is all integers
    (``(8,64):(64,x)``). Symbolic layouts as the ISA writes them (``((8,m),(T,2k)):((1T,SBO),(1,LBO))``)
    stay quiet."""
    shape_syms = {str(x) for x in _free_symbols(L.shape)}
    stride_syms = {str(x) for x in _free_symbols(L.stride)}
    for name in sorted(shape_syms | stride_syms):
        if name in _LOOKALIKES:
            why = f"'{name}' looks like the digit {_LOOKALIKES[name]}"
        elif len(name) == 1 and not shape_syms and any(str(leaf) == name for leaf in _leaves(L.stride)):
            why = "a lone letter in a stride of integers"
        else:
            continue
        warnings.warn(f"parse: {name!r} in {clip(text, 60)} reads as a symbol ({why}); "
                      "write the number if it is one", LayoutWarning, stacklevel=3)


def _leaves(t: Any) -> list:
    return [x for y in t for x in _leaves(y)] if type(t) is tuple else [t]


def _free_symbols(t: Any) -> set:
    if type(t) is tuple:
        return set().union(*[_free_symbols(x) for x in t]) if t else set()
    return set(getattr(t, "free_symbols", ()))


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
        raise LayoutError(f"parse: {clip(first)} heads a grid but is no layout")
    rows = []
    for line in body:
        m = _GRID_ROW.fullmatch(line)
        if m is not None:
            rows.append((int(m.group(1)), [int(v) for v in m.group(2).strip(" |").split("|")]))
    if not rows:
        raise LayoutError(f"parse: text after the layout {clip(first)} is no print_layout grid")
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
    if isinstance(x, (SetupPrint, tuple)):
        raise LayoutError(f"parse: {clip(str(text), 60)} is a setup print or a tiler, not one layout")
    return x.function if isinstance(x, ParsedTensor) else x


provide("parse", _parse_function)
