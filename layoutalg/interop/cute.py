"""Layouts as code: the CuTe C++ and CuTe DSL spellings of a layoutalg value.

A layout derived in a notebook should reach a kernel without being re-typed. For a static
layout CuTe has two C++ spellings -- a value built by ``make_layout`` and a type -- and the CuTe
DSL one Python call. Take ``L = (8,(2,4)):(1,(64,8))``::

    >>> from layoutalg import parse
    >>> c = to_cute_cpp(parse("(8,(2,4)):(1,(64,8))"))
    >>> c.expr
    'make_layout(make_shape(Int<8>{}, make_shape(Int<2>{}, Int<4>{})), make_stride(Int<1>{}, make_stride(Int<64>{}, Int<8>{})))'
    >>> c.type
    'Layout<Shape<_8,Shape<_2,_4>>,Stride<_1,Stride<_64,_8>>>'
    >>> to_cute_dsl(parse("(8,(2,4)):(1,(64,8))"))
    'cute.make_layout((8, (2, 4)), stride=(1, (64, 8)))'

A swizzled (composed) layout becomes ``composition(Swizzle<B,M,S>{}, layout)`` (offset 0) or
``make_composed_layout(Swizzle<B,M,S>{}, Int<off>{}, layout)``; in the DSL
``cute.make_composed_layout(cute.make_swizzle(B, M, S), off, layout)``::

    >>> print(to_cute_cpp(parse("Sw<3,4,3> o _0 o (8,64):(64,1)")).type)
    ComposedLayout<Swizzle<3,4,3>,_0,Layout<Shape<_8,_64>,Stride<_64,_1>>>

Every spelling parses back (``parse(c.type) == parse(c.expr) == L``), and the test suite compiles
the C++ against CuTe's headers and runs the DSL text, requiring CuTe to print ``L`` back.
Symbolic extents become C++ identifiers of type ``int`` (they must be in scope) and the type
spells them ``int``; the DSL spells them as Python names.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from ..composed import ComposedLayout
from ..errors import LayoutError, guarded
from ..layout import Layout
from ..swizzle import Swizzle

__all__ = ["CUTE_TYPES", "CuteCpp", "to_cute_cpp", "to_cute_dsl", "cpp_int_type"]

#: the integers CuTe names ``_N`` / ``_mN`` (cute/numeric/integral_constant.hpp)
_NAMED: frozenset[int] = frozenset(
    [-32, -24, -16, -12, -10, *range(-9, 11), 12, 16, 24]
    + list(range(32, 257, 8))
    + [384, 512, 768, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072, 262144, 524288]
)


@guarded
def cpp_int_type(v: int) -> str:
    """The C++ type of the static integer v: ``_8``, ``_m2``, or ``Int<N>`` where CuTe has no name."""
    if v in _NAMED:
        return f"_m{-v}" if v < 0 else f"_{v}"
    return f"Int<{v}>"


def _leaf_expr(v: Any) -> str:
    if type(v) is int:
        return f"Int<{v}>{{}}"
    return _symbolic(v, "C++")


def _leaf_type(v: Any) -> str:
    return cpp_int_type(v) if type(v) is int else "int"


def _symbolic(v: Any, lang: str) -> str:
    name = str(v).replace(" ", "")
    if not name.isidentifier():
        raise LayoutError(
            f"to_cute_{'cpp' if lang == 'C++' else 'dsl'}: the symbolic extent {v} is not a plain name; "
            f"{lang} code can only refer to a variable (substitute a value or a single symbol)"
        )
    return name


def _tuple_expr(t: Any, maker: str) -> str:
    if type(t) is tuple:
        return f"{maker}(" + ", ".join(_tuple_expr(x, maker) for x in t) + ")"
    return _leaf_expr(t)


def _tuple_type(t: Any, name: str) -> str:
    if type(t) is tuple:
        return f"{name}<" + ",".join(_tuple_type(x, name) for x in t) + ">"
    return _leaf_type(t)


def _layout_expr(L: Layout) -> str:
    return f"make_layout({_tuple_expr(L.shape, 'make_shape')}, {_tuple_expr(L.stride, 'make_stride')})"


def _layout_type(L: Layout) -> str:
    return f"Layout<{_tuple_type(L.shape, 'Shape')},{_tuple_type(L.stride, 'Stride')}>"


def _swizzle_expr(s: Swizzle) -> str:
    return f"Swizzle<{s.B},{s.M},{s.S}>{{}}"


def _swizzle_type(s: Swizzle) -> str:
    return f"Swizzle<{s.B},{s.M},{s.S}>"


def _expr(x: Any) -> str:
    if isinstance(x, Layout):
        return _layout_expr(x)
    if isinstance(x, Swizzle):
        return _swizzle_expr(x)
    if isinstance(x, ComposedLayout):
        outer, inner = _expr(x.outer), _expr(x.inner)
        if type(x.offset) is int and x.offset == 0:
            return f"composition({outer}, {inner})"
        return f"make_composed_layout({outer}, {_leaf_expr(x.offset)}, {inner})"
    raise LayoutError(f"to_cute_cpp: {x!r} is not a Layout, Swizzle or ComposedLayout")


def _type(x: Any) -> str:
    if isinstance(x, Layout):
        return _layout_type(x)
    if isinstance(x, Swizzle):
        return _swizzle_type(x)
    if isinstance(x, ComposedLayout):
        return f"ComposedLayout<{_type(x.outer)},{_leaf_type(x.offset)},{_type(x.inner)}>"
    raise LayoutError(f"to_cute_cpp: {x!r} is not a Layout, Swizzle or ComposedLayout")


def _is_static(x: Any) -> bool:
    if isinstance(x, Layout):
        return x.is_static
    if isinstance(x, Swizzle):
        return True
    if isinstance(x, ComposedLayout):
        return type(x.offset) is int and _is_static(x.outer) and _is_static(x.inner)
    return False


@dataclass(frozen=True)
class CuteCpp:
    """The C++ spellings of a value: ``expr`` builds it, ``type`` names it (static values only), and
    ``cute`` is the idiom CuTe code uses for it where there is one (a GMMA atom, ``tile_to_shape`` of
    one, an MMA atom's name).

    ``str()`` gives a snippet to paste into a kernel. ``atom`` names the CuTe MMA atom of a catalog
    fragment (where CuTe has one).
    """

    expr: str
    type: str | None
    text: str
    cute: str | None = None
    atom: str | None = None

    def __str__(self) -> str:
        lines = [f"// {self.text}"]
        if self.atom is not None:
            lines.append(f"using MMA_Atom_Op = {self.atom};  // the CuTe MMA atom of this fragment")
        if self.cute is not None:
            lines.append(f"auto layout = {self.cute};  // as CuTe code writes it")
            lines.append("// the same layout, spelled out:")
        if self.type is not None:
            lines.append(f"using LayoutType = {self.type};")
        lines.append(f"auto layout = {self.expr};")
        return "\n".join(lines)


#: CuTe's C++ element type for each wgmma operand type
CUTE_TYPES: dict[str, str] = {
    "f16": "half_t", "bf16": "bfloat16_t", "tf32": "tfloat32_t", "e4m3": "float_e4m3_t",
    "e5m2": "float_e5m2_t", "s8": "int8_t", "u8": "uint8_t",
}
#: the mma.sync atoms CuTe 4.2 defines (cute/arch/mma_sm*.hpp); tests/test_cute_nvidia.py compiles
#: every one, and every catalog name outside this set, to keep the set exact
CUTE_MMA_SYNC_ATOMS: frozenset[str] = frozenset([
    "SM70_8x8x4_F16F16F16F16_NN", "SM70_8x8x4_F16F16F16F16_NT", "SM70_8x8x4_F16F16F16F16_TN",
    "SM70_8x8x4_F16F16F16F16_TT", "SM70_8x8x4_F32F16F16F32_NN", "SM70_8x8x4_F32F16F16F32_NT",
    "SM70_8x8x4_F32F16F16F32_TN", "SM70_8x8x4_F32F16F16F32_TT", "SM80_16x8x128_S32U1U1S32_TN_XORPOPC",
    "SM80_16x8x16_F16F16F16F16_TN", "SM80_16x8x16_F32BF16BF16F32_TN", "SM80_16x8x16_F32F16F16F32_TN",
    "SM80_16x8x16_S32S8S8S32_TN", "SM80_16x8x16_S32U8U8S32_TN", "SM80_16x8x256_S32U1U1S32_TN_XORPOPC",
    "SM80_16x8x32_S32S4S4S32_TN", "SM80_16x8x32_S32S8S8S32_TN", "SM80_16x8x32_S32U4U4S32_TN",
    "SM80_16x8x32_S32U8U8S32_TN", "SM80_16x8x4_F32TF32TF32F32_TN", "SM80_16x8x64_S32S4S4S32_TN",
    "SM80_16x8x64_S32U4U4S32_TN", "SM80_16x8x8_F16F16F16F16_TN", "SM80_16x8x8_F32BF16BF16F32_TN",
    "SM80_16x8x8_F32F16F16F32_TN", "SM80_16x8x8_F32TF32TF32F32_TN", "SM80_8x8x128_S32U1U1S32_TN_XORPOPC",
    "SM80_8x8x16_S32S8S8S32_TN", "SM80_8x8x16_S32U8U8S32_TN", "SM80_8x8x32_S32S4S4S32_TN",
    "SM80_8x8x32_S32U4U4S32_TN", "SM80_8x8x4_F64F64F64F64_TN", "SM89_16x8x32_F16E4M3E4M3F16_TN",
    "SM89_16x8x32_F16E5M2E5M2F16_TN", "SM89_16x8x32_F32E4M3E4M3F32_TN", "SM89_16x8x32_F32E5M2E5M2F32_TN",
    "SM90_16x8x16_F64F64F64F64_TN", "SM90_16x8x4_F64F64F64F64_TN", "SM90_16x8x8_F64F64F64F64_TN",
])


def _fragment_atom(f: Any, dtype: str | None, ctype: str | None) -> str | None:
    """The CuTe MMA atom a catalog fragment belongs to, where CuTe has exactly one; else None.

    mma.sync: the atom of the fragment's shape and types (``SM80_16x8x16_F32F16F16F32_TN``).
    wgmma (``m64nNkK``): the fragment fixes the accumulator (D) or the multiplicand (A from
    registers); the other type comes from ``dtype`` (the multiplicand of D) or ``ctype`` (the
    accumulator of A) when more than one atom fits.
    """
    from ..nvidia import atoms
    from ..nvidia.common.atom_types import PTX_TO_NAME

    variant = dict(getattr(f, "variant", ()) or ())
    shape, operand = getattr(f, "shape", ""), getattr(f, "operand", "")
    if not isinstance(shape, str) or operand not in ("A", "B", "C", "D"):
        return None
    if shape.startswith("m64n"):
        n, k = shape[4:].split("k")
        if operand in ("C", "D"):
            acc, mult, kind = f.dtype, dtype, "SS"
        else:
            acc, mult, kind = ctype, f.dtype, "RS"
        head = f"SM90_64x{n}x{k}_"
        names = [
            nm for nm in atoms.mma_atom_names() if nm.startswith(head) and nm.endswith("_" + kind)
            and (acc is None or nm[len(head):].startswith(PTX_TO_NAME.get(acc, "?")))
            and (mult is None or nm[len(head):].split("_")[0].endswith(2 * PTX_TO_NAME.get(mult, "?")))
        ]
        return f"{names[0]}<GMMA::Major::K,GMMA::Major::K>" if len(names) == 1 else None
    from ..nvidia.ampere import mma

    sparse = bool(getattr(f, "sparse", False))
    if operand in ("C", "D"):
        # a C fragment fixes the accumulator only: the multiplicand is dtype, or whatever CuTe offers
        acc = f.dtype
        mults = [dtype] if dtype is not None else sorted({e.dtype for e in mma.catalog() if e.shape == shape and e.operand == "A"})
    else:
        acc, mults = ctype or variant.get("ctype"), [f.dtype]
    layouts = "TN"
    if shape == "m8n8k4":
        layouts = ("T" if variant.get("alayout", "row") == "row" else "N") + ("N" if variant.get("blayout", "col") == "col" else "T")
    found = set()
    for mult in mults:
        try:
            name = atoms.cute_mma_name(shape, mult, acc, layouts=layouts, sparse=sparse, kind=variant.get("kind"))
        except LayoutError:
            continue
        if name in CUTE_MMA_SYNC_ATOMS:
            found.add(name)
    return found.pop() if len(found) == 1 else None


#: the type assumed for each element width when no dtype is given
_TYPE_OF_BITS = {8: "u8", 16: "f16", 32: "tf32"}


def _gmma_spelling(x: Any, dtype: str | None) -> str | None:
    """``GMMA::Layout_K_SW128_Atom<T>{}`` or ``tile_to_shape(<that>, make_shape(...))`` when x is one."""
    from ..nvidia.hopper import wgmma

    if not (isinstance(x, ComposedLayout) and isinstance(x.outer, Swizzle) and x.offset == 0 and isinstance(x.inner, Layout)):
        return None
    if not x.inner.is_static or type(x.inner.shape) is not tuple or len(x.inner.shape) != 2:
        return None
    if dtype is None:
        # the element swizzle Sw<B, 4 - log2(bytes), 3> tells the element width
        bits = {4: 8, 3: 16, 2: 32}.get(x.outer.M) if not x.outer.is_identity else None
        candidates = [_TYPE_OF_BITS[bits]] if bits else list(_TYPE_OF_BITS.values())
    else:
        candidates = [wgmma.dtype_name(dtype)]
    shape = (x.inner[0].size(), x.inner[1].size())
    for dt in candidates:
        for name, (major, sw) in wgmma.ATOM_NAMES.items():
            atom_text = f"GMMA::{name}<{CUTE_TYPES[dt]}>{{}}"
            try:
                a = wgmma.atom(major, sw, dt)
                if a.outer != x.outer:  # the atom's tiles keep its swizzle: a different one rules them out
                    continue
                if a == x:
                    return atom_text
                if wgmma.tile(major, sw, dt, shape) == x:
                    return f"tile_to_shape({atom_text}, make_shape(Int<{shape[0]}>{{}}, Int<{shape[1]}>{{}}))"
                if wgmma.tile(major, sw, dt, shape, order=(2, 1)) == x:
                    return (f"tile_to_shape({atom_text}, make_shape(Int<{shape[0]}>{{}}, Int<{shape[1]}>{{}}), "
                            "Step<_2,_1>{})")
            except LayoutError:
                continue
    return None


def _umma_smem_spelling(x: Any, dtype: str | None) -> str | None:
    m = umma_smem_match(x, dtype)
    return None if m is None else m[0]


def _mma_shape(inner: Layout) -> tuple | None:
    """CuTe's partitioned shape ``((MMA_MN,MMA_K),rest_MN,rest_K[,PIPE...])`` of ``inner``, as sizes (or None)."""
    shape = inner.shape
    if type(shape) is not tuple or len(shape) < 3 or type(shape[0]) is not tuple or len(shape[0]) != 2:
        return None
    m0 = inner[0]
    return ((int(m0[0].size()), int(m0[1].size())),) + tuple(int(inner[i].size()) for i in range(1, len(shape)))


def _shape_expr(t: Any) -> str:
    if isinstance(t, tuple):
        return "make_shape(" + ", ".join(_shape_expr(v) for v in t) + ")"
    return f"Int<{t}>{{}}"


@cache
def _umma_swizzle(mode: Any, bits: int, unit: str) -> Swizzle:
    """``umma_smem.smem_swizzle(mode, bits, swizzle_unit=unit)``, remembered (a pure function of a few values)."""
    from ..nvidia.blackwell import umma_smem

    return umma_smem.smem_swizzle(mode, bits, swizzle_unit=unit)


def umma_smem_match(x: Any, dtype: str | None) -> tuple[str, int, Swizzle] | None:
    """A tcgen05 smem atom, tile or MMA-partitioned tile (:mod:`layoutalg.nvidia.blackwell.umma_smem`: 4-bit
    types, the 128B_base32B atom, either swizzle spelling) as CuTe writes it -- ``UMMA::Layout_..._Atom<T>{}``,
    ``tile_to_shape(<that>, ...)`` or ``UMMA::tile_to_mma_shape(<that>, ((MMA_MN,MMA_K),rest_MN,rest_K[,PIPE]))``
    -- with the element width and the swizzle of byte addresses; None when it is none of them."""
    from ..nvidia.blackwell import umma
    from ..nvidia.blackwell import umma_smem

    if not (isinstance(x, ComposedLayout) and isinstance(x.outer, Swizzle) and x.offset == 0 and isinstance(x.inner, Layout)):
        return None
    if not x.inner.is_static or type(x.inner.shape) is not tuple:
        return None
    mma_shape = _mma_shape(x.inner)
    if len(x.inner.shape) != 2 and mma_shape is None:
        return None
    try:
        widths = [umma_smem.smem_bits(dtype)] if dtype is not None else [32, 16, 8, 4]
    except LayoutError:
        return None
    shape = (int(x.inner[0].size()), int(x.inner[1].size()))
    for bits in widths:
        if dtype is not None:
            try:
                cpp = umma.cute_cpp_type(dtype, "mxf4" if bits == 4 else ("f8f6f4" if bits == 8 else None))
            except LayoutError:
                cpp = {32: "tfloat32_t", 16: "half_t", 8: "uint8_t", 4: "float_e2m1_t"}[bits]
            if bits == 8 and (str(dtype).endswith("_unpacked") or "unpacksmem" in cpp):
                cpp = "uint8_t"  # one fp6/fp4 per byte: CUTLASS's byte atoms (CuTe's *_unpacksmem_t atoms are 4-bit)
        else:
            cpp = {32: "tfloat32_t", 16: "half_t", 8: "uint8_t", 4: "float_e2m1_t"}[bits]
        for name, (major, mode) in umma_smem.SMEM_ATOM_NAMES.items():
            text = f"UMMA::{name}<{cpp}>{{}}"
            try:
                byte_sw = umma_smem.smem_swizzle(mode, bits, swizzle_unit="byte")
            except LayoutError:
                continue
            for unit in ("element", "byte"):
                try:
                    # the atom, its tiles and MMA tiles all keep the atom's swizzle (tile_to_shape and
                    # tiled_divide act on the inner layout): a different swizzle rules all three out
                    if _umma_swizzle(mode, bits, unit) != x.outer:
                        continue
                    if mma_shape is not None:
                        atom = umma_smem.smem_atom(major, mode, bits, swizzle_unit=unit)
                        if umma_smem.tile_to_mma_shape(atom, mma_shape) == x:
                            return f"UMMA::tile_to_mma_shape({text}, {_shape_expr(mma_shape)})", bits, byte_sw
                        continue
                    if umma_smem.smem_atom(major, mode, bits, swizzle_unit=unit) == x:
                        return text, bits, byte_sw
                    if umma_smem.smem_tile(major, mode, bits, shape, swizzle_unit=unit) == x:
                        return (f"tile_to_shape({text}, make_shape(Int<{shape[0]}>{{}}, Int<{shape[1]}>{{}}))", bits,
                                byte_sw)
                except LayoutError:
                    continue
    return None


#: CuTe's C++ value type of a TMEM copy atom (``Copy_Atom<SM100_TMEM_LOAD_..., T>``), by layoutalg's type name
_TMEM_CPP_TYPES: dict[str, str] = {
    "f32": "float", "f16": "half_t", "bf16": "bfloat16_t", "tf32": "tfloat32_t", "f64": "double",
    "s32": "int32_t", "u32": "uint32_t", "s16": "int16_t", "u16": "uint16_t", "s8": "int8_t", "u8": "uint8_t",
    "e4m3": "float_e4m3_t", "e5m2": "float_e5m2_t",
}
#: the CuTe DSL op class of each tcgen05.cp shape (``cutlass.cute.nvgpu.tcgen05``)
_TMEM_DSL_CP = {"128x256b": "Cp128x256bOp", "128x128b": "Cp128x128bOp", "4x256b": "Cp4x256bOp",
                "32x128b.warpx4": "Cp4x32x128bOp", "64x128b.warpx2::02_13": "Cp2x64x128b0213Op",
                "64x128b.warpx2::01_23": "Cp2x64x128b0123Op"}


def _tmem_op(x: Any) -> Any:
    """The TmemCopyOp of a TMEM copy op or of a CopyAtom named SM100_TMEM_* / SM100_UTCCP_*, else None."""
    from ..nvidia.blackwell.tmem_copy import TmemCopyOp, tmem_copy_op
    from ..tiled import CopyAtom

    if isinstance(x, TmemCopyOp):
        return x
    if isinstance(x, CopyAtom) and str(x.name).startswith(("SM100_TMEM_", "SM100_UTCCP_")):
        return tmem_copy_op(x.name)
    return None


def _tmem_cute_cpp(x: Any, op: Any, dtype: str | None, ctype: str | None) -> CuteCpp:
    """``Copy_Atom<Op, T>{}`` of a TMEM copy atom: CuTe's print of it is ``str(tmem_copy_atom(Op, T))``."""
    from ..nvidia.common.dtypes import dtype_name
    from ..nvidia.blackwell.tmem_copy import TmemCopyOp

    if ctype is not None:
        raise LayoutError(f"to_cute_cpp: ctype names an MMA accumulator; {op.name} is a copy atom (leave ctype out)")
    if isinstance(x, TmemCopyOp):
        if dtype is None:
            raise LayoutError(f"to_cute_cpp: {op.name} is an instruction; its Copy_Atom<{op.name}, T> needs the value "
                              "type T (give dtype, e.g. 'f32')")
        vt = dtype_name(dtype, op="to_cute_cpp")
    else:
        if dtype is not None:
            raise LayoutError(f"to_cute_cpp: {x.name} is Copy_Atom<{x.name}, {x.value_type}>, which fixes its value "
                              "type; dtype would be ignored (leave it out)")
        vt = dtype_name(x.value_type, op="to_cute_cpp")
    cpp = _TMEM_CPP_TYPES.get(vt)
    if cpp is None:
        raise LayoutError(f"to_cute_cpp: a TMEM copy atom of {vt} values has no CuTe C++ spelling here "
                          f"(types: {', '.join(_TMEM_CPP_TYPES)})")
    t = f"Copy_Atom<{op.name}, {cpp}>"
    return CuteCpp(expr=t + "{}", type=t, text=str(op.copy_atom(vt)), cute=t + "{}", atom=op.name)


def _tmem_dsl(op: Any) -> str:
    """The CuTe DSL op of a TMEM copy instruction (``from cutlass.cute.nvgpu import tcgen05``)."""
    if op.kind == "cp":
        return f"tcgen05.{_TMEM_DSL_CP[op.shape]}(tcgen05.CtaGroup.{'ONE' if op.cta_group == 1 else 'TWO'})"
    cls = ("Ld" if op.kind == "ld" else "St") + op.shape + "Op"
    if op.kind == "ld":
        mod = "tcgen05.Pack." + ("PACK_16b_IN_32b" if op.pack16 else "NONE")
    else:
        mod = "tcgen05.Unpack." + ("UNPACK_32b_IN_16b" if op.pack16 else "NONE")
    return f"tcgen05.{cls}(tcgen05.Repetition.x{op.num}, {mod})"


def to_cute_cpp(x: Any, dtype: str | None = None, *, ctype: str | None = None, target: str | None = None) -> CuteCpp:
    """to_cute_cpp(L) -> the CuTe C++ expression and type of L: CuTe's ``print`` of either is ``str(L)``.

    Accepts a Layout, a Swizzle or a ComposedLayout (and anything with a ``layout`` attribute
    holding one, such as a catalog Fragment's TV layout). Symbolic extents are spelled as
    ``int`` variables of the same name (the value type is then None). A wgmma shared-memory
    atom or tile (:mod:`layoutalg.nvidia.hopper.wgmma`) also gets CuTe's idiom in ``cute``: the GMMA atom
    of ``dtype`` (inferred from the swizzle when not given), tiled with ``tile_to_shape``. A catalog
    fragment gets the CuTe MMA atom it belongs to in ``atom``, where CuTe has one
    (``SM80_16x8x16_F32F16F16F32_TN``; a wgmma fragment names ``SM90_64xNxK_..._SS/RS`` when its
    types fix one, with ``dtype``/``ctype`` giving the multiplicand/accumulator the fragment leaves open),
    and ``cute`` then reads its TV layout from CuTe's ``MMA_Traits``.

    ``target="sm_100"`` names a shared-memory tile by its ``UMMA::`` atom (the same function as the
    ``GMMA::`` one). A tcgen05 tile -- and CuTe's MMA-partitioned shape
    ``((MMA_MN,MMA_K),rest_MN,rest_K[,PIPE])`` of ``UMMA::tile_to_mma_shape`` -- is spelled out in the
    form ``make_fragment_A/B`` reads: the swizzle of byte addresses over ``smem_ptr_flag_bits<bits>``
    (``ComposedLayout<Swizzle<3,4,3>,smem_ptr_flag_bits<16>,Layout<...>>``), as CuTe's atoms are.

    >>> c = to_cute_cpp(Layout((8, 64), (64, 1)))
    >>> c.type, c.expr
    ('Layout<Shape<_8,_64>,Stride<_64,_1>>', 'make_layout(make_shape(Int<8>{}, Int<64>{}), make_stride(Int<64>{}, Int<1>{}))')
    >>> to_cute_cpp(Layout(6, -2)).type
    'Layout<_6,_m2>'
    >>> from layoutalg.nvidia.hopper.wgmma import tile
    >>> to_cute_cpp(tile("K", 128, "bf16", (64, 64)), dtype="bf16").cute
    'tile_to_shape(GMMA::Layout_K_SW128_Atom<bfloat16_t>{}, make_shape(Int<64>{}, Int<64>{}))'
    >>> from layoutalg.nvidia.blackwell.umma_smem import smem_tile
    >>> to_cute_cpp(smem_tile("MN", "128B_base32B", "e2m1", (256, 64)), dtype="e2m1").cute
    'tile_to_shape(UMMA::Layout_MN_SW128_32B_Atom<cutlass::float_e2m1_t>{}, make_shape(Int<256>{}, Int<64>{}))'
    >>> from layoutalg.nvidia.blackwell.umma import umma_atom
    >>> to_cute_cpp(umma_atom("SM100_MMA_TF32_SS<tf32,tf32,float,64,64,K,K>")).type  # doctest: +ELLIPSIS
    'MMA_Atom<MMA_Traits<SM100_MMA_TF32_SS<cutlass::tfloat32_t, cutlass::tfloat32_t, float, 64, 64, UMMA::Major::K, UMMA::Major::K, ...>>>'
    >>> from layoutalg.nvidia.ampere import mma
    >>> c = to_cute_cpp(mma.fragment("m16n8k16", "f16", "A", ctype="f32"))
    >>> c.atom, c.cute
    ('SM80_16x8x16_F32F16F16F32_TN', 'typename MMA_Traits<SM80_16x8x16_F32F16F16F32_TN>::ALayout{}')

    A TMEM copy atom (:mod:`layoutalg.nvidia.blackwell.tmem_copy`; a ``TmemCopyOp`` with ``dtype``, or a
    ``CopyAtom`` that carries its value type) is CuTe's ``Copy_Atom<Op, T>``, and ``text`` is what
    CuTe prints for it (checked by compiling the expression on the host):

    >>> from layoutalg.nvidia.blackwell.tmem_copy import tmem_copy_atom, tmem_copy_op
    >>> to_cute_cpp(tmem_copy_op("SM100_TMEM_LOAD_32dp32b1x"), dtype="f32").expr
    'Copy_Atom<SM100_TMEM_LOAD_32dp32b1x, float>{}'
    >>> print(to_cute_cpp(tmem_copy_atom("SM100_TMEM_LOAD_16dp256b1x_16b", "f16")).text)
    Copy_Atom
      ThrID:        32:1
      ValLayoutSrc: (32,256):(0,1)
      ValLayoutDst: ((4,8),(4,2)):((4,16),(1,128))
      ValLayoutRef: (32,256):(0,1)
      ValueType:    16b
    """
    from ..nvidia.common.dtypes import dtype_name
    from ..nvidia.blackwell.umma import UMMAAtom

    top = _tmem_op(x)
    if top is not None:  # a tcgen05.ld/st/cp copy atom: CuTe's Copy_Atom<Op, T> (layoutalg.nvidia.blackwell.tmem_copy)
        return _tmem_cute_cpp(x, top, dtype, ctype)
    if isinstance(x, UMMAAtom) or isinstance(getattr(x, "cute_cpp", None), str):  # tcgen05 / SM120 atom: its MMA_Traits
        if dtype is not None or ctype is not None:
            raise LayoutError(f"to_cute_cpp: {x.name} fixes its own types; dtype/ctype would be ignored (leave them out)")
        t = f"MMA_Atom<MMA_Traits<{x.cute_cpp}>>"
        return CuteCpp(expr=t + "{}", type=t, text=x.name, cute=t + "{}", atom=x.cute_cpp)
    if dtype is not None and not str(dtype).endswith("_unpacked"):  # e2m3_unpacked: umma_smem's one-per-byte fp6
        dtype = dtype_name(dtype, op="to_cute_cpp")
    ctype = None if ctype is None else dtype_name(ctype, op="to_cute_cpp: ctype")
    plain = isinstance(x, (Layout, ComposedLayout, Swizzle))
    if plain and ctype is not None:
        raise LayoutError(f"to_cute_cpp: ctype={ctype!r} names the accumulator of a fragment's MMA atom; {x} is a "
                          "layout, not a fragment (leave ctype out)")
    atom = _fragment_atom(x, dtype, ctype) if not plain else None
    operand = getattr(x, "operand", None)
    x = _unwrap(x, "to_cute_cpp")
    cute: str | None
    if atom is not None:
        cute = f"typename MMA_Traits<{atom}>::{'C' if operand == 'D' else operand}Layout{{}}"
    else:
        if target not in (None, "sm_90", "sm_100"):
            raise LayoutError(f"to_cute_cpp: target {target!r} is 'sm_90' (GMMA atoms) or 'sm_100' (UMMA atoms)")
        umma_first = target == "sm_100" or (isinstance(x, ComposedLayout) and isinstance(x.inner, Layout)
                                            and _mma_shape(x.inner) is not None)
        cute = None
        if not umma_first:
            cute = _gmma_spelling(x, dtype) if dtype is None or dtype in CUTE_TYPES else None
        if cute is None:
            m = umma_smem_match(x, dtype)
            if m is not None and dtype is None and not umma_first:
                cute = m[0]  # a bare layout that is also a UMMA atom: named, spelled out as it is
            elif m is not None:
                cute, bits, byte_sw = m
                flag = f"smem_ptr_flag_bits<{bits}>"
                inner = x.inner
                return CuteCpp(expr=f"make_composed_layout({_swizzle_expr(byte_sw)}, {flag}{{}}, {_expr(inner)})",
                               type=f"ComposedLayout<{_swizzle_type(byte_sw)},{flag},{_type(inner)}>",
                               text=f"{byte_sw} o smem_ptr[{bits}b](unset) o {inner}", cute=cute, atom=None)
        if plain and dtype is not None and cute is None:
            raise LayoutError(f"to_cute_cpp: dtype={dtype!r} names the element type of a wgmma or UMMA atom or tile "
                              f"(GMMA::Layout_*_Atom<T>, UMMA::Layout_*_Atom<T>); {x} is not one of {dtype}, so dtype "
                              "would be ignored (leave it out)")
    return CuteCpp(expr=_expr(x), type=_type(x) if _is_static(x) else None, text=str(x), cute=cute, atom=atom)


def _dsl_tuple(t: Any) -> str:
    if type(t) is tuple:
        inner = ", ".join(_dsl_tuple(v) for v in t)
        return f"({inner},)" if len(t) == 1 else f"({inner})"
    if type(t) is int:
        return str(t)
    return _symbolic(t, "Python")


def _dsl(x: Any) -> str:
    if isinstance(x, Layout):
        return f"cute.make_layout({_dsl_tuple(x.shape)}, stride={_dsl_tuple(x.stride)})"
    if isinstance(x, Swizzle):
        return f"cute.make_swizzle({x.B}, {x.M}, {x.S})"
    if isinstance(x, ComposedLayout):
        return f"cute.make_composed_layout({_dsl(x.outer)}, {_dsl_tuple(x.offset)}, {_dsl(x.inner)})"
    raise LayoutError(f"to_cute_dsl: {x!r} is not a Layout, Swizzle or ComposedLayout")


_DSL_TYPES = {
    "f16": "cutlass.Float16", "bf16": "cutlass.BFloat16", "tf32": "cutlass.TFloat32", "f32": "cutlass.Float32",
    "s8": "cutlass.Int8", "u8": "cutlass.Uint8", "s32": "cutlass.Int32", "e4m3": "cutlass.Float8E4M3FN",
    "e5m2": "cutlass.Float8E5M2", "e2m3": "cutlass.Float6E2M3FN", "e3m2": "cutlass.Float6E3M2FN",
    "e2m1": "cutlass.Float4E2M1FN", "ue8m0": "cutlass.Float8E8M0FNU", "ue4m3": "cutlass.Float8E4M3FN",
}


def _umma_dsl(a: Any) -> str:
    """The CuTe DSL op of a dense UMMA atom (``from cutlass.cute.nvgpu import tcgen05``)."""
    if a.sparse or a.scaled or a.negate_a or a.negate_b or a.saturate:
        raise LayoutError(f"to_cute_dsl: {a.name}: the CuTe DSL spelling covers dense, unscaled, unnegated atoms only")
    t = _DSL_TYPES
    common = (f"({a.M}, {a.N}, {a.K}), tcgen05.CtaGroup.{'ONE' if a.cta_group == 1 else 'TWO'}, "
              f"tcgen05.OperandSource.{'SMEM' if a.source == 'SS' else 'TMEM'}")
    majors = f", cute.nvgpu.OperandMajorMode.{a.a_major}, cute.nvgpu.OperandMajorMode.{a.b_major}"
    k = a.kind
    if k == "f16":
        return f"tcgen05.MmaF16BF16Op({t[a.a_type]}, {t[a.c_type]}, {common}{majors})"
    if k == "tf32":
        return f"tcgen05.MmaTF32Op({common}{majors})"
    if k == "i8":
        if a.a_type != a.b_type:
            raise LayoutError(f"to_cute_dsl: {a.name}: the CuTe DSL's MmaI8Op takes one A/B type")
        return f"tcgen05.MmaI8Op({t[a.a_type]}, {common}{majors})"
    if k == "f8f6f4":
        return f"tcgen05.MmaF8F6F4Op({t[a.a_type]}, {t[a.b_type]}, {t[a.c_type]}, {common}{majors})"
    if k == "mxf8f6f4":
        return f"tcgen05.MmaMXF8F6F4Op({t[a.a_type]}, {t[a.b_type]}, {common}{majors})"
    if k == "mxf4":
        return f"tcgen05.MmaMXF4Op({common})"
    return f"tcgen05.MmaMXF4NVF4Op({t[str(a.sf_type)]}, {common})"


def to_cute_dsl(x: Any) -> str:
    """to_cute_dsl(L) -> CuTe DSL Python that builds L inside ``@cute.jit`` (``import cutlass.cute as cute``).

    >>> to_cute_dsl(Layout((4,), (1,)))
    'cute.make_layout((4,), stride=(1,))'
    >>> from layoutalg import parse
    >>> to_cute_dsl(parse("Sw<2,0,3> o _4 o 8:1"))
    'cute.make_composed_layout(cute.make_swizzle(2, 0, 3), 4, cute.make_layout(8, stride=1))'

    A dense UMMA atom becomes its ``tcgen05`` op (``from cutlass.cute.nvgpu import tcgen05``)::

    >>> from layoutalg.nvidia.blackwell.umma import umma_atom
    >>> to_cute_dsl(umma_atom("SM100_MMA_F16BF16_2x1SM_SS<bf16,bf16,float,256,128,K,MN>"))  # doctest: +ELLIPSIS
    'tcgen05.MmaF16BF16Op(cutlass.BFloat16, cutlass.Float32, (256, 128, 16), tcgen05.CtaGroup.TWO, ..., cute.nvgpu.OperandMajorMode.MN)'

    and a TMEM copy instruction its ``tcgen05`` copy op (``cute.make_copy_atom(op, T)`` makes the atom)::

    >>> from layoutalg.nvidia.blackwell.tmem_copy import tmem_copy_op
    >>> to_cute_dsl(tmem_copy_op("SM100_TMEM_LOAD_16dp32b4x_16b"))
    'tcgen05.Ld16x32bx2Op(tcgen05.Repetition.x4, tcgen05.Pack.PACK_16b_IN_32b)'
    >>> to_cute_dsl(tmem_copy_op("SM100_UTCCP_2x64dp128bitlw0213_2cta"))
    'tcgen05.Cp2x64x128b0213Op(tcgen05.CtaGroup.TWO)'
    """
    from ..nvidia.blackwell.umma import UMMAAtom

    if isinstance(getattr(type(x), "cute_dsl", None), property):  # an atom that spells its own op (SM120, SM103)
        return str(x.cute_dsl)
    if isinstance(x, UMMAAtom):
        return _umma_dsl(x)
    top = _tmem_op(x)
    if top is not None:
        return _tmem_dsl(top)
    return _dsl(_unwrap(x, "to_cute_dsl"))


def _unwrap(x: Any, op: str) -> Any:
    if isinstance(x, (Layout, ComposedLayout, Swizzle)):
        return x
    inner = getattr(x, "layout", None)
    if isinstance(inner, (Layout, ComposedLayout)):
        return inner
    raise LayoutError(f"{op}: {x!r} is not a Layout, Swizzle or ComposedLayout (nor holds one in .layout)")
