"""Tiled MMA / tiled copy configurations, written once, emitted both as CuTe C++ and as layoutalg calls.

Each case becomes one C++ snippet (run by :func:`layoutalg.interop.cutecpp.run_snippets`) that
prints, line by line, ``key=value`` records: the TV layouts, the tile sizes, and for a few threads
the partition of real tensors (layout, engine offset and every element's address). The same case
is then computed with layoutalg and the records compared. The C++ is generated from the same
Python description, so a case cannot describe different things on the two sides.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cute_oracle import norm  # noqa: F401 (the tests read C.norm)
from oracle_recorder import OracleRecorder, sha
from layoutalg import ComposedLayout, Layout, Swizzle, parse
from layoutalg.nvidia.atoms import copy_atom, mma_atom
from layoutalg.tensor import make_tensor
from layoutalg.tensor import underscore as _
from layoutalg.tiled import (
    make_tiled_copy,
    make_tiled_copy_A,
    make_tiled_copy_B,
    make_tiled_copy_C,
    make_tiled_mma,
)

HEADERS = (
    "cute/tensor.hpp",
    "cute/swizzle_layout.hpp",
    "cute/atom/mma_atom.hpp",
    "cute/atom/copy_atom.hpp",
    "cute/atom/mma_traits_sm80.hpp",
    "cute/atom/mma_traits_sm90_gmma.hpp",
    "cute/atom/copy_traits_sm75.hpp",
    "cute/atom/copy_traits_sm80.hpp",
    "cute/atom/copy_traits_sm90.hpp",
    "cute/util/print_latex.hpp",
    "cutlass/version.h",
)

#: helpers every program gets: one static, 1024-byte aligned buffer per operand, and printers
PRELUDE = r"""
alignas(1024) static unsigned char buf_s[1 << 18];
alignas(1024) static unsigned char buf_d[1 << 18];
template <class P, class T>
void pr_part(char const* key, P const& p, T const* base) {
  printf("%s.layout=", key); print(p.layout()); printf("\n");
  printf("%s.addr=", key);
  for (int i = 0; i < int(size(p)); ++i) printf("%d ", int(&p(i) - base));
  printf("\n");
}
""".replace("\n", " ")  # one line: run_snippets counts the prelude as one line when it names failing snippets

#: CuTe C++ element types of the operands (sub-byte operands are addressed through int8_t)
CPP_TYPE = {"f16": "half_t", "bf16": "bfloat16_t", "tf32": "tfloat32_t", "f32": "float", "f64": "double",
            "s8": "int8_t", "u8": "uint8_t", "e4m3": "float_e4m3_t", "e5m2": "float_e5m2_t", "s32": "int32_t",
            "s4": "int8_t", "u4": "int8_t", "b1": "int8_t"}


# ---------------------------------------------------------------------------------------------
# C++ spelling of static layouts
# ---------------------------------------------------------------------------------------------
def cpp_tuple(t: Any, kind: str = "Shape") -> str:
    if isinstance(t, tuple):
        return f"{kind}<" + ",".join(cpp_tuple(x, kind) for x in t) + ">"
    return f"Int<{int(t)}>"


def cpp_layout(L: Any) -> str:
    """A C++ *expression* for a static layout (or a swizzled composed layout)."""
    if isinstance(L, ComposedLayout):
        sw = L.outer
        assert isinstance(sw, Swizzle) and L.offset == 0
        return f"composition(Swizzle<{sw.B},{sw.M},{sw.S}>{{}}, {cpp_layout(L.inner)})"
    return f"Layout<{cpp_tuple(L.shape, 'Shape')},{cpp_tuple(L.stride, 'Stride')}>{{}}"


def cpp_perm_entry(p: Any) -> str:
    if p is None or p is _:
        return "Underscore"
    if isinstance(p, Layout):
        return f"Layout<{cpp_tuple(p.shape, 'Shape')},{cpp_tuple(p.stride, 'Stride')}>"
    return f"Int<{int(p)}>"


def records(text: str) -> dict:
    out = {}
    for line in text.splitlines():
        if "=" in line:
            k, v = line.split("=", 1)
            out[k.strip()] = v.strip()
    return out


# ---------------------------------------------------------------------------------------------
# cases
# ---------------------------------------------------------------------------------------------
@dataclass
class CopySpec:
    """A tiled copy derived from a case's MMA: ``make_tiled_copy_<operand>(atom, mma)``."""

    operand: str  # "A", "B", "C"
    atom: str
    swizzle: tuple | None = None  # (B, M, S) on the smem operand tile, or None
    major: str = "K"  # majorness of the tensor partitioned (K: row-major MxK for A; for C: N-contiguous)
    vectorizes: bool = True  # whether copy() of these partitions vectorises (CuTe compiles the copy)


@dataclass
class MMACase:
    key: str
    atom: str
    atom_layout: Any = (1, 1, 1)  # shape or Layout
    perm: tuple | None = None
    copies: list = field(default_factory=list)
    threads: tuple | None = None
    latex: bool = False

    @property
    def cpp_atom(self) -> str:
        if self.atom.startswith("SM90_64"):
            if "_TN" in self.atom:  # K-major only; the integer atoms are not templates
                args = "" if self.atom.split("_")[2].startswith("S32") else "<>"
            else:
                args = "<GMMA::Major::K,GMMA::Major::K>"
            return f"{self.atom}{args}{{}}"
        return f"{self.atom}{{}}"

    def tiled_mma(self):
        return make_tiled_mma(mma_atom(self.atom), self.atom_layout, self.perm)


def _layout_expr(al: Any) -> str:
    if isinstance(al, Layout):
        return cpp_layout(al)
    return f"Layout<{cpp_tuple(tuple(al))}>{{}}"


MMA_CASES: list[MMACase] = [
    # --- Ampere / Turing mma.sync ---------------------------------------------------------------
    MMACase("sm80_16x8x16_f16_1x1", "SM80_16x8x16_F32F16F16F32_TN", latex=True),
    MMACase("sm80_16x8x16_f16_2x2", "SM80_16x8x16_F32F16F16F32_TN", (2, 2, 1),
            copies=[CopySpec("A", "SM75_U32x4_LDSM_N", (3, 3, 3))]),
    MMACase("sm80_16x8x16_f16_2x2_t32x32x16", "SM80_16x8x16_F32F16F16F32_TN", (2, 2, 1), (32, 32, 16),
            copies=[CopySpec("A", "SM75_U32x4_LDSM_N", (2, 3, 3)), CopySpec("B", "SM75_U32x4_LDSM_N"),
                    CopySpec("B", "SM75_U16x8_LDSM_T", None, "MN")], latex=True),
    MMACase("sm80_16x8x16_f16_2x2_permN", "SM80_16x8x16_F32F16F16F32_TN", (2, 2, 1),
            (32, Layout((8, 2, 2), (1, 16, 8)), 16), copies=[CopySpec("B", "SM75_U32x4_LDSM_N", (3, 3, 3))]),
    MMACase("sm80_16x8x16_f16_4x1", "SM80_16x8x16_F32F16F16F32_TN", (4, 1, 1),
            copies=[CopySpec("A", "SM75_U32x2_LDSM_N")]),
    MMACase("sm80_16x8x16_f16_1x4_n64", "SM80_16x8x16_F32F16F16F32_TN", (1, 4, 1), (_, 64, _),
            copies=[CopySpec("B", "SM75_U32x2_LDSM_N")]),
    MMACase("sm80_16x8x16_f16_2x2_t64x64x32", "SM80_16x8x16_F32F16F16F32_TN", (2, 2, 1), (64, 64, 32),
            copies=[CopySpec("A", "SM75_U32x4_LDSM_N", (3, 3, 3))]),
    MMACase("sm80_16x8x16_f16_rowmajor_warps", "SM80_16x8x16_F32F16F16F32_TN", Layout((2, 2, 1), (2, 1, 0)),
            (32, 32, 16)),
    MMACase("sm80_16x8x16_f16_2x2x2", "SM80_16x8x16_F32F16F16F32_TN", (2, 2, 2)),
    MMACase("sm80_16x8x8_f16_2x2", "SM80_16x8x8_F32F16F16F32_TN", (2, 2, 1),
            copies=[CopySpec("A", "SM75_U32x2_LDSM_N")]),
    MMACase("sm80_16x8x8_f16acc_2x1_t32x16x16", "SM80_16x8x8_F16F16F16F16_TN", (2, 1, 1), (32, 16, 16),
            copies=[CopySpec("C", "SM90_U32x4_STSM_N", None, "N"), CopySpec("A", "SM75_U32x4_LDSM_N")]),
    MMACase("sm80_16x8x16_bf16_permM", "SM80_16x8x16_F32BF16BF16F32_TN", (2, 2, 1),
            (Layout((2, 8, 2), (1, 4, 2)), 32, 16),
            copies=[CopySpec("A", "SM75_U16x8_LDSM_T", None, "MN", vectorizes=False)]),
    MMACase("sm80_16x8x8_tf32_2x2", "SM80_16x8x8_F32TF32TF32F32_TN", (2, 2, 1)),
    MMACase("sm80_16x8x4_tf32_1x2", "SM80_16x8x4_F32TF32TF32F32_TN", (1, 2, 1)),
    MMACase("sm80_16x8x32_s8_t32x32x32", "SM80_16x8x32_S32S8S8S32_TN", (2, 2, 1), (32, 32, 32),
            copies=[CopySpec("A", "SM75_U32x4_LDSM_N", (2, 4, 3))]),
    MMACase("sm80_16x8x16_s8_2x1", "SM80_16x8x16_S32S8S8S32_TN", (2, 1, 1)),
    MMACase("sm80_8x8x16_s8_2x4", "SM80_8x8x16_S32S8S8S32_TN", (2, 4, 1)),
    MMACase("sm80_8x8x4_f64_2x2", "SM80_8x8x4_F64F64F64F64_TN", (2, 2, 1)),
    MMACase("sm90_16x8x16_f64_n32", "SM90_16x8x16_F64F64F64F64_TN", (1, 2, 1), (_, 32, _)),
    MMACase("sm89_16x8x32_e4m3_2x2", "SM89_16x8x32_F32E4M3E4M3F32_TN", (2, 2, 1)),
    MMACase("sm80_16x8x64_s4_2x2", "SM80_16x8x64_S32S4S4S32_TN", (2, 2, 1)),
    MMACase("sm80_16x8x256_b1", "SM80_16x8x256_S32U1U1S32_TN_XORPOPC"),
    MMACase("sm70_8x8x4_f32_2x2", "SM70_8x8x4_F32F16F16F32_TN", (2, 2, 1)),
    MMACase("sm70_8x8x4_f16_nt_t16x16x4", "SM70_8x8x4_F16F16F16F16_NT", (2, 2, 1), (16, 16, 4)),
    # --- Hopper wgmma ---------------------------------------------------------------------------
    MMACase("sm90_64x64x16_f16_ss", "SM90_64x64x16_F32F16F16_SS"),
    MMACase("sm90_64x64x16_f16_ss_2wg", "SM90_64x64x16_F32F16F16_SS", (2, 1, 1)),
    MMACase("sm90_64x128x16_bf16_ss_2wg", "SM90_64x128x16_F32BF16BF16_SS", (2, 1, 1)),
    MMACase("sm90_64x128x16_bf16_rs", "SM90_64x128x16_F32BF16BF16_RS",
            # f32 accumulators through stmatrix (a b16 instruction): CuTe builds the TiledCopy, the copy cannot vectorise
            copies=[CopySpec("A", "SM75_U32x4_LDSM_N", (3, 3, 3)),
                    CopySpec("C", "SM90_U32x4_STSM_N", None, "N", vectorizes=False)]),
    MMACase("sm90_64x64x8_tf32_ss_1x2", "SM90_64x64x8_F32TF32TF32_SS_TN", (1, 2, 1)),
    MMACase("sm90_64x128x32_e4m3_ss_2wg", "SM90_64x128x32_F32E4M3E4M3_SS_TN", (2, 1, 1)),
    MMACase("sm90_64x96x16_f16acc_rs_2wg", "SM90_64x96x16_F16F16F16_RS", (2, 1, 1),
            copies=[CopySpec("A", "SM75_U32x4_LDSM_N")]),
    MMACase("sm90_64x64x16_f16_ss_2wg_k32", "SM90_64x64x16_F32F16F16_SS", (2, 1, 1), (128, 64, 32)),
    MMACase("sm90_64x64x32_s8_rs", "SM90_64x64x32_S32S8S8_RS_TN"),
    MMACase("sm90_64x32x16_f16_rs_2x1x1_permM", "SM90_64x32x16_F32F16F16_RS", (2, 1, 1),
            (Layout((64, 2), (2, 1)), _, _)),
]

_THREAD_SETS = {32: (0, 13, 31), 64: (0, 37, 63), 128: (0, 37, 101), 256: (0, 101, 230), 8: (0, 3, 7)}


def threads_of(n: int) -> tuple:
    return _THREAD_SETS.get(n, (0, n // 2 + 1, n - 1))


def value_type_of(case: MMACase, operand: str) -> str:
    d, a, b, c = mma_atom(case.atom).value_types
    return {"A": a, "B": b, "C": c}[operand]


def tensor_layout(case: MMACase, operand: str, major: str = "K", scale: int = 2) -> Layout:
    """The tensor a case partitions: twice the MMA tile in each mode, K-major (row-major) by default."""
    mma = case.tiled_mma()
    M, N, K = mma.tile_size_mnk
    if operand == "A":
        R, C = M * scale, K * scale
    elif operand == "B":
        R, C = N * scale, K * scale
    else:
        R, C = M * scale, N * scale
    if major == "MN" or (operand == "C" and major != "N"):
        return Layout((R, C), (1, R))
    return Layout((R, C), (C, 1))


def smem_tensor(case: MMACase, operand: str, swizzle: tuple | None, major: str = "K") -> Any:
    L = tensor_layout(case, operand, major)
    if swizzle:
        return ComposedLayout(Swizzle(*swizzle), 0, L)
    return L


def is_gmma_tile(case: MMACase, operand: str) -> bool:
    return operand != "C" and case.atom.startswith("SM90_64")


def smem_desc(case: MMACase, operand: str) -> bool:
    """An operand CuTe keeps in shared memory (its fragment is GMMA descriptors, built on the device only)."""
    a = mma_atom(case.atom)
    return (operand == "A" and a.frg_a == "smem_desc") or (operand == "B" and a.frg_b == "smem_desc")


def operand_tensor(case: MMACase, operand: str) -> tuple[Any, str]:
    """(layoutalg layout, C++ expression) of the tensor a case's partition_<operand> cuts.

    wgmma A/B tiles are CuTe's canonical K-major GMMA tiles (``tile_to_shape`` of
    ``GMMA::Layout_K_SW{32,64,128}_Atom``; the widest swizzle whose row fits the K extent), which
    CuTe needs to build the descriptors of an SS fragment; the others are row-major (K-major).
    """
    L = tensor_layout(case, operand)
    if operand != "C" and case.atom.startswith("SM90_64"):
        from layoutalg.nvidia.hopper import wgmma

        dt = value_type_of(case, operand)
        R, C = (int(L.shape[0]), int(L.shape[1]))
        row_bytes = C * {"f16": 2, "bf16": 2, "tf32": 4, "e4m3": 1, "e5m2": 1, "s8": 1, "u8": 1}[dt]
        sw = max(x for x in (32, 64, 128) if row_bytes % x == 0)
        T = wgmma.tile("K", sw, dt, (R, C))
        return T, (f"tile_to_shape(GMMA::Layout_K_SW{sw}_Atom<{CPP_TYPE[dt]}>{{}}, "
                   f"make_shape(Int<{R}>{{}}, Int<{C}>{{}}))")
    return L, cpp_layout(L)


def _cpp_value(case: MMACase, operand: str) -> str:
    return CPP_TYPE[value_type_of(case, operand)]


def mma_snippet(case: MMACase) -> str:
    """C++ body printing the case's records."""
    mma = case.tiled_mma()
    T = mma.num_threads
    lines = [f"auto mma = make_tiled_mma({case.cpp_atom}, {_layout_expr(case.atom_layout)}"
             + (", Tile<" + ",".join(cpp_perm_entry(p) for p in mma.permutation) + ">{}" if case.perm is not None else "")
             + ");"]
    lines.append('printf("A_TV="); print(mma.get_layoutA_TV()); printf("\\n");')
    lines.append('printf("B_TV="); print(mma.get_layoutB_TV()); printf("\\n");')
    lines.append('printf("C_TV="); print(mma.get_layoutC_TV()); printf("\\n");')
    lines.append('printf("tile=%d,%d,%d\\n", int(tile_size<0>(mma)), int(tile_size<1>(mma)), int(tile_size<2>(mma)));')
    lines.append('printf("vmnk="); print(mma.get_thr_layout_vmnk()); printf("\\n");')
    for op in ("A", "B", "C"):
        ty = _cpp_value(case, op)
        _L, expr = operand_tensor(case, op)
        ptr = "make_smem_ptr" if op != "C" else "make_gmem_ptr"
        buf = "buf_s" if op != "C" else "buf_d"
        lines.append(f"{{ auto t = make_tensor({ptr}(({ty}*){buf}), {expr});")
        for thr in threads_of(T):
            lines.append(f"  {{ auto th = mma.get_slice({thr}); auto p = th.partition_{op}(t);"
                         f" pr_part(\"{op}.{thr}\", p, ({ty}*){buf});")
            if thr == threads_of(T)[1] and not smem_desc(case, op):
                lines.append(f'    printf("{op}.frg="); print(th.partition_fragment_{op}(t).layout()); printf("\\n");')
            lines.append("  }")
        lines.append("}")
    for k, cs in enumerate(case.copies):
        lines += copy_lines(case, k, cs)
    if case.latex:
        lines.append('printf("LATEX_BEGIN\\n"); print_latex(mma); printf("LATEX_END\\n");')
    return "\n".join(lines)


def copy_lines(case: MMACase, k: int, cs: CopySpec) -> list:
    op = cs.operand
    ty = _cpp_value(case, op)
    out = [f"{{ auto tc = make_tiled_copy_{op}(Copy_Atom<{cs.atom}, {ty}>{{}}, mma);",
           f'  printf("cp{k}.tiler="); print(typename decltype(tc)::Tiler_MN{{}}); printf("\\n");',
           f'  printf("cp{k}.tv="); print(typename decltype(tc)::TiledLayout_TV{{}}); printf("\\n");',
           f'  printf("cp{k}.S_TV="); print(tc.get_layoutS_TV()); printf("\\n");',
           f'  printf("cp{k}.D_TV="); print(tc.get_layoutD_TV()); printf("\\n");']
    smem = smem_tensor(case, op, cs.swizzle, cs.major)
    reg_side = "D" if cs.atom.startswith("SM75") else "S"
    mem_side = "S" if reg_side == "D" else "D"
    out.append(f"  auto t = make_tensor(make_smem_ptr(({ty}*)buf_s), {cpp_layout(smem)});")
    T = case.tiled_mma().num_threads
    for thr in threads_of(T):
        out.append(f"  {{ auto th = tc.get_slice({thr}); pr_part(\"cp{k}.{mem_side}.{thr}\", th.partition_{mem_side}(t), ({ty}*)buf_s);")
        if thr == threads_of(T)[1]:
            src = "t" if op != "C" else f"make_tensor(make_gmem_ptr(({ty}*)buf_d), {cpp_layout(tensor_layout(case, 'C'))})"
            out.append(f"    auto frg = mma.get_slice({thr}).partition_fragment_{op}({src});")
            out.append(f'    printf("cp{k}.retile.{thr}="); print(th.retile_{reg_side}(frg).layout()); printf("\\n");')
        out.append("  }")
    out.append("}")
    return out


# ---------------------------------------------------------------------------------------------
# Stand-alone tiled copies: make_tiled_copy(atom, thr_layout, val_layout)
# ---------------------------------------------------------------------------------------------
@dataclass
class CopyCase:
    key: str
    atom: str
    value: str  # CuTe value type
    thr: Layout
    val: Layout
    src: Layout  # tensor partitioned by partition_S (gmem)
    dst: Any  # tensor partitioned by partition_D (smem, maybe swizzled)

    def tiled_copy(self):
        from layoutalg.nvidia.atoms import value_bits

        return make_tiled_copy(copy_atom(self.atom, value_bits(self.value)), self.thr, self.val)


COPY_CASES: list[CopyCase] = [
    CopyCase("cpasync16_f16_k_major", "SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>", "half_t", Layout((16, 8), (8, 1)),
             Layout((1, 8)), Layout((64, 128), (128, 1)), ComposedLayout(Swizzle(3, 3, 3), 0, Layout((64, 64), (64, 1)))),
    CopyCase("cpasync8_f16", "SM80_CP_ASYNC_CACHEALWAYS<uint64_t>", "half_t", Layout((32, 4), (4, 1)),
             Layout((1, 4)), Layout((64, 32), (32, 1)), Layout((64, 32), (32, 1))),
    CopyCase("cpasync4_f32", "SM80_CP_ASYNC_CACHEALWAYS<uint32_t>", "float", Layout((32, 4), (4, 1)),
             Layout((1, 1)), Layout((64, 8), (8, 1)), Layout((64, 8), (8, 1))),
    CopyCase("cpasync16_f16_mn_major", "SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>", "half_t", Layout((8, 16), (1, 8)),
             Layout((8, 1)), Layout((128, 32), (1, 128)), ComposedLayout(Swizzle(3, 3, 3), 0, Layout((64, 32), (1, 64)))),
    CopyCase("universal128_f16_colmajor_thr", "UniversalCopy<uint128_t>", "half_t", Layout((8, 16), (1, 8)),
             Layout((8, 1)), Layout((64, 64)), Layout((64, 64))),
    CopyCase("universal32_bf16", "UniversalCopy<uint32_t>", "bfloat16_t", Layout((16, 16), (16, 1)),
             Layout((1, 2)), Layout((32, 64), (64, 1)), Layout((32, 64), (64, 1))),
    CopyCase("universal64_f32_m", "UniversalCopy<uint64_t>", "float", Layout((4, 32), (32, 1)),
             Layout((2, 1)), Layout((16, 64)), Layout((16, 64))),
    CopyCase("universal128_f16_2x4_vals", "UniversalCopy<uint128_t>", "half_t", Layout((16, 8), (8, 1)),
             Layout((2, 4), (4, 1)), Layout((64, 64), (64, 1)), Layout((64, 64), (64, 1))),
    CopyCase("universal16_f16_32thr", "UniversalCopy<uint16_t>", "half_t", Layout((32, 1)),
             Layout((1, 1)), Layout((64, 4), (4, 1)), Layout((64, 4), (4, 1))),
]


def copy_snippet(case: CopyCase) -> str:
    ty = case.value
    lines = [f"auto tc = make_tiled_copy(Copy_Atom<{case.atom}, {ty}>{{}}, {cpp_layout(case.thr)}, {cpp_layout(case.val)});",
             'printf("tiler="); print(typename decltype(tc)::Tiler_MN{}); printf("\\n");',
             'printf("tv="); print(typename decltype(tc)::TiledLayout_TV{}); printf("\\n");',
             f"auto s = make_tensor(make_gmem_ptr(({ty}*)buf_s), {cpp_layout(case.src)});",
             f"auto d = make_tensor(make_smem_ptr(({ty}*)buf_d), {cpp_layout(case.dst)});"]
    n = int(case.thr.size())
    for thr in threads_of(n):
        lines.append(f"{{ auto th = tc.get_slice({thr}); pr_part(\"S.{thr}\", th.partition_S(s), ({ty}*)buf_s);"
                     f" pr_part(\"D.{thr}\", th.partition_D(d), ({ty}*)buf_d); }}")
    return "\n".join(lines)


def all_snippets() -> tuple[list, list]:
    return [mma_snippet(c) for c in MMA_CASES], [copy_snippet(c) for c in COPY_CASES]


def addresses(T: Any) -> list:
    return [int(x) for x in T.addresses()]


def latex_cells(text: str) -> dict:
    """{(x, y): (thread, value)} of CuTe's print_latex nodes (x down, y across, as CuTe places them)."""
    cells = {}
    for m in re.finditer(r"\\node\[fill=[^\]]*\] at \((-?\d+),(-?\d+)\) \{\\shortstack\{T(\d+) \\\\ V(\d+)\}\};", text):
        cells[(int(m.group(1)), int(m.group(2)))] = (int(m.group(3)), int(m.group(4)))
    return cells


def parse_cute(text: str) -> Any:
    return parse(norm(text))


def same_function(a: Any, b: Any) -> bool:
    """Two layouts of the same size that agree at every index."""
    if int(a.size()) != int(b.size()):
        return False
    return bool(np.array_equal(np.asarray(a.table()), np.asarray(b.table())))


__all__ = ["MMA_CASES", "COPY_CASES", "HEADERS", "PRELUDE", "all_snippets", "records", "norm", "make_tensor",
           "make_tiled_copy_A", "make_tiled_copy_B", "make_tiled_copy_C"]


# ---------------------------------------------------------------------------------------------
# layoutalg's side of the same records
# ---------------------------------------------------------------------------------------------
def _thr_str(t: Any) -> str:
    if isinstance(t, (tuple, list)):
        return "(" + ",".join(_thr_str(x) for x in t) + ")"
    return str(t)


def py_mma_records(case: MMACase) -> dict:
    mma = case.tiled_mma()
    rec: dict = {"A_TV": str(mma.get_layoutA_TV()), "B_TV": str(mma.get_layoutB_TV()),
                 "C_TV": str(mma.get_layoutC_TV()), "tile": ",".join(map(str, mma.tile_size_mnk)),
                 "vmnk": str(mma.thr_layout_vmnk)}
    T = mma.num_threads
    for op in ("A", "B", "C"):
        L, _expr = operand_tensor(case, op)
        t = make_tensor(L, swizzle_ptr=is_gmma_tile(case, op))
        for thr in threads_of(T):
            th = mma.get_slice(thr)
            p = getattr(th, f"partition_{op}")(t)
            rec[f"{op}.{thr}.layout"] = str(p.layout)
            rec[f"{op}.{thr}.addr"] = addresses(p)
            if thr == threads_of(T)[1] and not smem_desc(case, op):
                rec[f"{op}.frg"] = str(getattr(th, f"partition_fragment_{op}")(t).layout)
    for k, cs in enumerate(case.copies):
        op = cs.operand
        from layoutalg.nvidia.atoms import value_bits

        vt = value_type_of(case, op)
        atom = copy_atom(cs.atom, value_bits(vt))
        tc = {"A": make_tiled_copy_A, "B": make_tiled_copy_B, "C": make_tiled_copy_C}[op](atom, mma)
        rec[f"cp{k}.tiler"] = _thr_str(tc.tiler)
        rec[f"cp{k}.tv"] = str(tc.layout_tv)
        rec[f"cp{k}.S_TV"] = str(tc.get_layoutS_TV())
        rec[f"cp{k}.D_TV"] = str(tc.get_layoutD_TV())
        reg_side = "D" if cs.atom.startswith("SM75") else "S"
        mem_side = "S" if reg_side == "D" else "D"
        t = make_tensor(smem_tensor(case, op, cs.swizzle, cs.major))
        for thr in threads_of(T):
            th = tc.get_slice(thr)
            p = getattr(th, f"partition_{mem_side}")(t)
            rec[f"cp{k}.{mem_side}.{thr}.layout"] = str(p.layout)
            rec[f"cp{k}.{mem_side}.{thr}.addr"] = addresses(p)
            if thr == threads_of(T)[1]:
                src = t if op != "C" else make_tensor(tensor_layout(case, "C"))
                frg = getattr(mma.get_slice(thr), f"partition_fragment_{op}")(src)
                rec[f"cp{k}.retile.{thr}"] = str(getattr(th, f"retile_{reg_side}")(frg).layout)
    return rec


def py_copy_records(case: CopyCase) -> dict:
    tc = case.tiled_copy()
    rec: dict = {"tiler": _thr_str(tc.tiler), "tv": str(tc.layout_tv)}
    s, d = make_tensor(case.src), make_tensor(case.dst)
    for thr in threads_of(int(case.thr.size())):
        th = tc.get_slice(thr)
        for side, t in (("S", s), ("D", d)):
            p = getattr(th, f"partition_{side}")(t)
            rec[f"{side}.{thr}.layout"] = str(p.layout)
            rec[f"{side}.{thr}.addr"] = addresses(p)
    return rec


def digest(values: list) -> dict:
    import hashlib

    text = " ".join(map(str, values))
    return {"n": len(values), "sha1": hashlib.sha1(text.encode()).hexdigest(), "head": values[:16]}


def cute_records(text: str) -> dict:
    """CuTe's printed records, addresses digested, the LaTeX picture reduced to its cells."""
    out: dict = {}
    if "LATEX_BEGIN" in text:
        head, rest = text.split("LATEX_BEGIN", 1)
        latex, tail = rest.split("LATEX_END", 1)
        out["latex_cells"] = sorted([*k, *v] for k, v in latex_cells(latex).items())
        text = head + tail
    for k, v in records(text).items():
        if k.endswith(".addr"):
            out[k] = digest([int(x) for x in v.split()])
        else:
            out[k] = norm(v)
    return out


def swizzled_keys(case: Any) -> set:
    """Record keys whose CuTe layout text is not comparable (swizzled tensors print dynamic strides)."""
    keys = set()
    if isinstance(case, MMACase):
        T = case.tiled_mma().num_threads
        # (GMMA tiles are swizzle_ptr tensors: their partitions are plain layouts, compared as text)
        for k, cs in enumerate(case.copies):
            if cs.swizzle:
                keys |= {f"cp{k}.{side}.{thr}.layout" for side in "SD" for thr in threads_of(T)}
    else:
        for side, L in (("S", case.src), ("D", case.dst)):
            if isinstance(L, ComposedLayout):
                keys |= {f"{side}.{thr}.layout" for thr in threads_of(int(case.thr.size()))}
    return keys


def _k_split_c_tv(case: Any, cute_text: str, mine_text: str) -> str | None:
    """The named difference of ``get_layoutC_TV`` with threads along K (None when it holds exactly).

    layoutalg: K group g holds the C elements of K group 0 (what partition_C gives every group);
    CuTe 4.2: the same for K group 0, and past the tile for every other group."""
    mma = case.tiled_mma()
    M, N, _K = mma.tile_size_mnk
    c, m = parse(cute_text), parse(mine_text)
    T, V = int(m[0].size()), int(m[1].size())
    g0 = T // mma.k_split
    tc = np.asarray(c.table()).reshape(V, T)
    tm = np.asarray(m.table()).reshape(V, T)
    if (int(c[0].size()), int(c[1].size())) != (T, V):
        return "thread/value counts differ"
    if not np.array_equal(tc[:, :g0], tm[:, :g0]):
        return "K group 0 differs"
    if not all(np.array_equal(tm[:, g * g0:(g + 1) * g0], tm[:, :g0]) for g in range(mma.k_split)):
        return "layoutalg's K groups do not repeat K group 0"
    if not (tc[:, g0:] >= M * N).any():
        return "CuTe's other K groups stay inside the tile: the difference is gone"
    return None


#: (case key, record key) -> (why layoutalg differs from CuTe 4.2, a check of the exact relation: None if it holds)
CUTE_DIFFERENCES = {
    ("sm80_16x8x16_f16_2x2x2", "C_TV"): (
        "threads along K: CuTe's get_layoutC_TV sends K groups >= 1 past the C tile; layoutalg gives them the "
        "elements partition_C gives them (those of K group 0)", _k_split_c_tv),
}


def compare(case: Any, cute: dict, mine: dict, *, text: bool = True) -> list:
    """Mismatches between CuTe's records and layoutalg's: addresses and layouts as functions always,
    layout text where ``text`` (and the tensor is not swizzled). A record named in
    :data:`CUTE_DIFFERENCES` must instead stand in exactly the named relation to CuTe's."""
    bad = []
    skip_text = swizzled_keys(case)
    for k, v in mine.items():
        if k not in cute:
            bad.append(f"{k}: missing from CuTe's output")
            continue
        c = cute[k]
        diff = CUTE_DIFFERENCES.get((getattr(case, "key", None), k))
        if diff is not None:
            why = diff[1](case, c, v)
            if why is not None:
                bad.append(f"{k}: the named difference ({diff[0]}) does not hold: {why}")
            continue
        if k.endswith(".addr"):
            if digest(v) != c:
                bad.append(f"{k}: addresses differ: CuTe {c['head']}... layoutalg {v[:16]}...")
            continue
        if k in ("tile", "tiler") or k.endswith("tiler"):
            if c != v:
                bad.append(f"{k}: CuTe {c} layoutalg {v}")
            continue
        if k in skip_text:
            continue
        try:
            fc, fm = parse(c), parse(v)
            func_ok = same_function(fc, fm)
        except Exception as e:  # noqa: BLE001 - report, do not crash the comparison
            func_ok = False
            c = f"{c} ({type(e).__name__})"
        if not func_ok:
            bad.append(f"{k}: not the same function: CuTe {c} layoutalg {v}")
        elif text and c != v:
            bad.append(f"{k}: text differs: CuTe {c} layoutalg {v}")
    return bad


# ---------------------------------------------------------------------------------------------
# Atoms as CuTe prints them, and constructions CuTe refuses at compile time
# ---------------------------------------------------------------------------------------------
#: CuTe's own spellings that differ from layoutalg's only in writing, or CuTe layouts that are wrong:
#: (atom name, operand) -> reason. Compared as functions where CuTe's text parses.
CUTE_ATOM_QUIRKS = {
    ("SM80_8x8x32_S32S4S4S32_TN", "A"): "CuTe writes the value mode as the 1-tuple (_8)",
    ("SM80_8x8x32_S32S4S4S32_TN", "B"): "CuTe writes the value mode as the 1-tuple (_8)",
    ("SM80_8x8x32_S32U4U4S32_TN", "A"): "CuTe writes the value mode as the 1-tuple (_8)",
    ("SM80_8x8x32_S32U4U4S32_TN", "B"): "CuTe writes the value mode as the 1-tuple (_8)",
    ("SM80_16x8x32_S32S4S4S32_TN", "B"): "CuTe's BLayout ((_4,_8),(_8)):((_32,_1),(_8)) is not injective "
                                         "(see tests/test_nvidia_mma_cute.py)",
    ("SM80_16x8x32_S32U4U4S32_TN", "B"): "CuTe's BLayout ((_4,_8),(_8)):((_32,_1),(_8)) is not injective",
    ("SM80_16x8x128_S32U1U1S32_TN_XORPOPC", "A"): "CuTe's stride ((_16,_8)) is not congruent with its shape (_32,_2)",
}


def cute_atom_names() -> list:
    """layoutalg's MMA atom names that CuTe 4.2 defines too (mma.sync, and wgmma of N in {8, 64, 128, 256})."""
    import os

    from layoutalg.interop.cutecpp import include_dirs
    from layoutalg.nvidia.atoms import mma_atom_names

    known: set = set()
    for d in include_dirs():
        folder = os.path.join(d, "cute", "atom")
        if not os.path.isdir(folder):
            continue
        for f in os.listdir(folder):
            if f.startswith("mma_traits_sm") and "sparse" not in f and "sm100" not in f and "sm120" not in f:
                with open(os.path.join(folder, f)) as fh:
                    known |= set(re.findall(r"struct MMA_Traits<([A-Za-z0-9_]+)", fh.read()))
    out = []
    for n in mma_atom_names():
        if n not in known:
            continue
        if n.startswith("SM90_64") and not re.match(r"SM90_64x(8|64|128|256)x", n):
            continue
        out.append(n)
    return out


def cpp_atom_expr(name: str) -> str:
    if name.startswith("SM90_64"):
        if "_TN" in name:  # K-major only; the integer atoms are not templates
            return name + ("" if name.split("_")[2].startswith("S32") else "<>")
        return name + "<GMMA::Major::K,GMMA::Major::K>"
    return name


COPY_ATOM_CASES = [("SM75_U32x1_LDSM_N", "half_t"), ("SM75_U32x2_LDSM_N", "half_t"), ("SM75_U32x4_LDSM_N", "half_t"),
                   ("SM75_U16x2_LDSM_T", "half_t"), ("SM75_U16x4_LDSM_T", "half_t"), ("SM75_U16x8_LDSM_T", "half_t"),
                   ("SM75_U32x4_LDSM_N", "int8_t"), ("SM75_U32x4_LDSM_N", "float"),
                   ("SM90_U32x1_STSM_N", "half_t"), ("SM90_U32x2_STSM_N", "half_t"), ("SM90_U32x4_STSM_N", "half_t"),
                   ("SM90_U16x2_STSM_T", "half_t"), ("SM90_U16x4_STSM_T", "half_t"), ("SM90_U16x8_STSM_T", "half_t"),
                   ("SM80_CP_ASYNC_CACHEALWAYS<uint32_t>", "half_t"), ("SM80_CP_ASYNC_CACHEALWAYS<uint64_t>", "float"),
                   ("SM80_CP_ASYNC_CACHEALWAYS<uint128_t>", "bfloat16_t"), ("SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>", "half_t"),
                   ("UniversalCopy<uint128_t>", "half_t"), ("UniversalCopy<uint32_t>", "float"),
                   ("UniversalCopy<uint64_t>", "int8_t"), ("UniversalCopy<uint16_t>", "half_t")]


def atom_snippets() -> tuple[list, list]:
    mma = [f"print(MMA_Atom<{cpp_atom_expr(n)}>{{}});" for n in cute_atom_names()]
    cp = [f"print(Copy_Atom<{n}, {t}>{{}});" for n, t in COPY_ATOM_CASES]
    return mma, cp


def _neg_ldsm_16x8x8():
    make_tiled_copy_A(copy_atom("SM75_U32x4_LDSM_N", 16), make_tiled_mma(mma_atom("SM80_16x8x8_F32F16F16F32_TN"), (2, 2, 1)))


def _neg_ldsm_b_noperm():
    make_tiled_copy_B(copy_atom("SM75_U32x4_LDSM_N", 16), make_tiled_mma(mma_atom("SM80_16x8x16_F32F16F16F32_TN"), (2, 2, 1)))


def _neg_cpasync_strided():
    from layoutalg.tiled import copy

    tc = make_tiled_copy(copy_atom("SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>", 16), Layout((16, 8), (8, 1)), Layout((1, 8)))
    th = tc.get_slice(3)
    copy(tc, th.partition_S(make_tensor(Layout((64, 64)))), th.partition_D(make_tensor(Layout((64, 64), (64, 1)))))


def _neg_ldsm_mn_major():
    from layoutalg.tiled import copy

    mma = make_tiled_mma(mma_atom("SM80_16x8x16_F32F16F16F32_TN"), (2, 2, 1))
    tc = make_tiled_copy_A(copy_atom("SM75_U32x4_LDSM_N", 16), mma)
    s = make_tensor(Layout((64, 32)))
    frg = mma.get_slice(3).partition_fragment_A(s)
    th = tc.get_slice(3)
    copy(tc, th.partition_S(s), th.retile_D(frg))


_GUARD = "volatile bool never = false; if (never) "
#: key -> (C++ snippet CuTe must refuse, the assertion it must name, the layoutalg call that must raise LayoutError)
NEGATIVE_CASES = {
    "ldsm_x4_on_16x8x8_A": (
        "auto mma = make_tiled_mma(SM80_16x8x8_F32F16F16F32_TN{}, Layout<Shape<_2,_2,_1>>{});"
        " auto tc = make_tiled_copy_A(Copy_Atom<SM75_U32x4_LDSM_N, half_t>{}, mma); print(tc);",
        "TiledCopy uses too few vals for selected CopyAtom", _neg_ldsm_16x8x8),
    "ldsm_x4_on_16x8x16_B_without_permutation": (
        "auto mma = make_tiled_mma(SM80_16x8x16_F32F16F16F32_TN{}, Layout<Shape<_2,_2,_1>>{});"
        " auto tc = make_tiled_copy_B(Copy_Atom<SM75_U32x4_LDSM_N, half_t>{}, mma); print(tc);",
        "TiledCopy uses too few vals for selected CopyAtom", _neg_ldsm_b_noperm),
    "cp_async_16B_over_strided_source": (
        "auto tc = make_tiled_copy(Copy_Atom<SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>, half_t>{},"
        " Layout<Shape<_16,_8>,Stride<_8,_1>>{}, Layout<Shape<_1,_8>>{});"
        " auto s = make_tensor(make_gmem_ptr((half_t*)buf_s), Layout<Shape<_64,_64>>{});"
        " auto d = make_tensor(make_smem_ptr((half_t*)buf_d), Layout<Shape<_64,_64>,Stride<_64,_1>>{});"
        " auto th = tc.get_slice(3); " + _GUARD + "copy(tc, th.partition_S(s), th.partition_D(d));",
        "src failed to vectorize into registers", _neg_cpasync_strided),
    "ldsm_N_over_M_major_tile": (
        "auto mma = make_tiled_mma(SM80_16x8x16_F32F16F16F32_TN{}, Layout<Shape<_2,_2,_1>>{});"
        " auto tc = make_tiled_copy_A(Copy_Atom<SM75_U32x4_LDSM_N, half_t>{}, mma);"
        " auto s = make_tensor(make_smem_ptr((half_t*)buf_s), Layout<Shape<_64,_32>>{});"
        " auto frg = mma.get_slice(3).partition_fragment_A(s); auto th = tc.get_slice(3); "
        + _GUARD + "copy(tc, th.partition_S(s), th.retile_D(frg));",
        "src failed to vectorize into registers", _neg_ldsm_mn_major),
}


# ---------------------------------------------------------------------------------------------
# The recording: CuTe's answers for every case, kept in tests/data/cute/tiled.json
# ---------------------------------------------------------------------------------------------
def record(rec: OracleRecorder) -> dict:
    """Run every case through CuTe C++ (a few minutes): the recording."""
    from layoutalg.interop.cutecpp import run_snippets

    ms, cs = all_snippets()
    am, ac = atom_snippets()
    snips = ms + cs + am + ac
    res = run_snippets(snips, headers=HEADERS, prelude=PRELUDE, chunk=max(1, (len(snips) + 1) // 2))
    neg_src = [v[0] for v in NEGATIVE_CASES.values()]
    neg = run_snippets(neg_src, headers=HEADERS, prelude=PRELUDE)
    it = iter(res)
    data: dict = {
        **rec.provenance("python tests/cute_tiled_cases.py --record"),
        "mma": {}, "copy": {}, "mma_atoms": {}, "copy_atoms": {}, "negative": {},
    }
    for case, src in zip(MMA_CASES, ms):
        out = next(it)
        if not isinstance(out, str):
            raise RuntimeError(f"{case.key}: CuTe refused it: {out.message}")
        data["mma"][case.key] = {"sha1": sha(src), "records": cute_records(out)}
    for case, src in zip(COPY_CASES, cs):
        out = next(it)
        if not isinstance(out, str):
            raise RuntimeError(f"{case.key}: CuTe refused it: {out.message}")
        data["copy"][case.key] = {"sha1": sha(src), "records": cute_records(out)}
    for name, src in zip(cute_atom_names(), am):
        out = next(it)
        data["mma_atoms"][name] = {"sha1": sha(src), "print": out if isinstance(out, str) else None}
    for (name, t), src in zip(COPY_ATOM_CASES, ac):
        out = next(it)
        data["copy_atoms"][f"{name}|{t}"] = {"sha1": sha(src), "print": out if isinstance(out, str) else None}
    for key, src, out in zip(NEGATIVE_CASES, neg_src, neg):
        data["negative"][key] = {"sha1": sha(src), "compiled": isinstance(out, str),
                                 "error": None if isinstance(out, str) else out.message}
    if rec.data is not None and "differences" in rec.data:  # keep the item-4 answers (record_differences writes them)
        data["differences"] = rec.data["differences"]
    return data


# ---------------------------------------------------------------------------------------------
# Issue 23, item 4: configurations CuTe 4.2 accepts and layoutalg refuses (or answers differently).
# Each is one snippet per question; CuTe's answer (printed text, or the compiler's refusal) is kept
# in tests/data/cute/tiled.json under "differences" (python tests/cute_tiled_cases.py --record-differences)
# and tests/test_tiled_cute_differences.py proves from it why layoutalg refuses.
# ---------------------------------------------------------------------------------------------
def _mma_expr(atom: str, shape: tuple, perm: tuple | None = None) -> str:
    s = f"auto mma = make_tiled_mma({atom}{{}}, Layout<Shape<{','.join(f'_{x}' for x in shape)}>>{{}}"
    if perm is not None:
        s += ", Tile<" + ",".join(cpp_perm_entry(p) for p in perm) + ">{}"
    return s + ");"


_RS = "SM90_64x128x16_F16F16F16_RS<GMMA::Major::K,GMMA::Major::K>"
_NL = 'printf("\\n");'
_TC = ('printf("tiler="); print(typename decltype(tc)::Tiler_MN{}); printf("\\n");'
       ' printf("tv="); print(typename decltype(tc)::TiledLayout_TV{}); printf("\\n");')

#: key -> C++ snippet. Keys ending in ".refused" must not compile.
DIFFERENCE_SNIPPETS: dict[str, str] = {
    # (a) SM90_64x128x16_F16F16F16_RS, atom layout (3,1,1), permutation (24,16)
    "a.print": _mma_expr(_RS, (3, 1, 1), (24, 16)) + " print(mma); " + _NL,
    "a.tile": _mma_expr(_RS, (3, 1, 1), (24, 16))
    + ' printf("tile=%d,%d,%d\\n", int(tile_size<0>(mma)), int(tile_size<1>(mma)), int(tile_size<2>(mma)));',
    "a.C_TV.refused": _mma_expr(_RS, (3, 1, 1), (24, 16)) + " print(mma.get_layoutC_TV()); " + _NL,
    "a.A_TV.refused": _mma_expr(_RS, (3, 1, 1), (24, 16)) + " print(mma.get_layoutA_TV()); " + _NL,
    "a.B_TV": _mma_expr(_RS, (3, 1, 1), (24, 16)) + " print(mma.get_layoutB_TV()); " + _NL,
    # (b) make_tiled_copy_C(UniversalCopy<uint64_t>, float accumulators)
    "b1_16x8x16.copy": _mma_expr("SM80_16x8x16_F32F16F16F32_TN", (2, 2, 2))
    + " auto tc = make_tiled_copy_C(Copy_Atom<UniversalCopy<uint64_t>, float>{}, mma); " + _TC,
    "b1_16x8x8.copy": _mma_expr("SM80_16x8x8_F32F16F16F32_TN", (2, 2, 2))
    + " auto tc = make_tiled_copy_C(Copy_Atom<UniversalCopy<uint64_t>, float>{}, mma); " + _TC,
    "b2_16x8x8.copy": _mma_expr("SM80_16x8x8_F32F16F16F32_TN", (1, 1, 1), (Layout(16, 2), None))
    + " auto tc = make_tiled_copy_C(Copy_Atom<UniversalCopy<uint64_t>, float>{}, mma); " + _TC,
    "b2_16x8x16.copy": _mma_expr("SM80_16x8x16_F32F16F16F32_TN", (1, 1, 1), (None, Layout(8, 2)))
    + " auto tc = make_tiled_copy_C(Copy_Atom<UniversalCopy<uint64_t>, float>{}, mma); " + _TC,
    # control: threads along K where CuTe's C TV layout is right -> layoutalg gives CuTe's copy exactly
    "b0_16x8x8_1x1x2.copy": _mma_expr("SM80_16x8x8_F32F16F16F32_TN", (1, 1, 2))
    + " auto tc = make_tiled_copy_C(Copy_Atom<UniversalCopy<uint64_t>, float>{}, mma); " + _TC,
    # (c) SM75_U16x8_LDSM_T for B with 4 values per thread (and a control with 8)
    "c_1x1x1.refused": _mma_expr("SM80_16x8x16_F32F16F16F32_TN", (1, 1, 1))
    + " auto tc = make_tiled_copy_B(Copy_Atom<SM75_U16x8_LDSM_T, half_t>{}, mma); " + _TC,
    "c_2x2x1.refused": _mma_expr("SM80_16x8x16_F32F16F16F32_TN", (2, 2, 1))
    + " auto tc = make_tiled_copy_B(Copy_Atom<SM75_U16x8_LDSM_T, half_t>{}, mma); " + _TC,
    "c_1x2x1_n16.refused": _mma_expr("SM80_16x8x16_F32F16F16F32_TN", (1, 2, 1), (None, 16))
    + " auto tc = make_tiled_copy_B(Copy_Atom<SM75_U16x8_LDSM_T, half_t>{}, mma); " + _TC,
    "c_8vals_1x1x1_n16.copy": _mma_expr("SM80_16x8x16_F32F16F16F32_TN", (1, 1, 1), (None, 16))
    + " auto tc = make_tiled_copy_B(Copy_Atom<SM75_U16x8_LDSM_T, half_t>{}, mma); " + _TC,
}


def record_differences(rec: OracleRecorder) -> dict:
    """Compile :data:`DIFFERENCE_SNIPPETS` with CuTe C++ and store the answers under "differences" (about 30 s):
    the recording with its "differences" replaced."""
    import datetime

    from layoutalg.interop.cutecpp import run_snippets

    keys = list(DIFFERENCE_SNIPPETS)
    out = run_snippets([DIFFERENCE_SNIPPETS[k] for k in keys], headers=HEADERS, prelude=PRELUDE, chunk=6,
                       expect_refusal=[k.endswith(".refused") for k in keys])
    data = dict(rec.data)
    data["differences"] = {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "how": "python tests/cute_tiled_cases.py --record-differences",
        "cases": {k: {"sha1": sha(DIFFERENCE_SNIPPETS[k]), "compiled": isinstance(o, str),
                      "print": o if isinstance(o, str) else None,
                      "error": None if isinstance(o, str) else o.message} for k, o in zip(keys, out)},
    }
    return data


REC = OracleRecorder("cute", "tiled", record, script="cute_tiled_cases", json_options={"indent": 0, "sort_keys": True})
#: the item-4 answers live in the same file, under "differences"
DIFFERENCES = OracleRecorder("cute", "tiled_differences", record_differences, script="cute_tiled_cases", path=REC.path,
                             flag="--record-differences", json_options={"indent": 0, "sort_keys": True})
RECORDING = str(REC.path)

if __name__ == "__main__":  # pragma: no cover - a recording tool
    raise SystemExit(REC.main(others=[DIFFERENCES]))
