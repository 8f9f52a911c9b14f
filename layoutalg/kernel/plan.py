"""Plan a GEMM tile's data path the way CuTe's and the CuTe DSL's helpers do: one call, every choice.

:func:`plan_gemm` takes what a kernel author knows (the arch, the element types, the tile, the operands'
majors, one or two CTAs per MMA, the pipeline's stages, C's type and major) and returns a
:class:`TilePlan` with what today takes eight calls across five modules and a question to the CuTe DSL:

* the MMA atom, as the DSL's ``sm90_utils.make_trivial_tiled_mma`` (a warpgroup's ``wgmma``,
  ``atom_layout_mnk`` (2,1,1) when M > 64 and N > 128, as the DSL's Hopper GEMM example lays it) and
  ``sm100_utils.make_trivial_tiled_mma`` (one ``tcgen05.mma`` covering the tile, 1 or 2 CTAs) choose it;
* the shared-memory layout atoms of A and B (the DSL's ``get_smem_layout_atom`` /
  ``get_smem_layout_atom_ab``: the widest swizzle whose row the major mode fills, CuTe C++'s
  ``ss_smem_selector`` / ``sm100_smem_selector``) and the staged layouts (``make_smem_layout_a/b``);
* the epilogue tile (``compute_tile_shape_or_override`` / ``compute_epilogue_tile_shape``) and its staged
  shared layout (``make_smem_layout_epi``);
* the per-k-block shared-memory descriptors of A and B (stage 0; :mod:`layoutalg.nvidia.hopper.wgmma`,
  :mod:`layoutalg.nvidia.blackwell.umma_smem`) and, on sm_100, the instruction descriptor;
* on sm_100 the TMEM accumulator and its allocation (``get_num_tmem_alloc_cols``: the columns the
  accumulator spans, rounded up to a power of two, at least 32), the epilogue's ``tcgen05.ld`` atom as
  ``get_tmem_load_op`` picks it, and the ``make_tmem_copy`` of it over an epilogue subtile; on sm_90 the
  ``stmatrix`` (or universal) shared-memory store ``get_smem_store_op`` picks;
* the register layout the epilogue works in: (thread, value) -> element of the epilogue subtile
  (sm_100: the ``tcgen05.ld`` tiled copy) or of the tile (sm_90: the tiled MMA's accumulator).

tests/test_kernel_plan.py checks every field against the DSL's own answers, recorded over a grid of
archs, types, tiles, majors, CTA groups and C types and 300 random cases (tests/data/cute-dsl/plans.json),
and the descriptors and idesc against CuTe C++ (tests/data/cute/plan_descriptors.json). Where the DSL's
helpers refuse a combination, :func:`plan_gemm` raises :class:`PlanError` (a :class:`LayoutError`)
naming the rule; layoutalg is stricter in two places, said in :data:`RULES` (``wgmma-transpose``,
``mma-shape``). :meth:`TilePlan.pipeline` / :meth:`TilePlan.prove` hand the plan to
:mod:`layoutalg.kernel.pipeline`'s data-path model and its proof.

>>> p = plan_gemm("sm_100", "bf16", tile=(128, 256, 64), c_dtype="bf16")
>>> p.mma_atom.name, p.a.atom_kind, p.tmem_cols, p.tmem_load
('SM100_MMA_F16BF16_SS<bf16,bf16,float,128,256,K,K>', 'K_SW128', 256, 'SM100_TMEM_LOAD_32dp32b32x')
>>> print(p.a.smem_layout)
Sw<3,4,3> o _0 o ((128,16),1,4,4):((64,1),0,16,8192)
>>> hex(p.idesc.word), [hex(kb.descriptor.encode()) for kb in p.a.k_blocks][:2]
('0x8400490', ['0x4000404000010000', '0x4000404000010002'])
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property, lru_cache, partial
from typing import Any

from ..algebra import coalesce, composition, right_inverse, tile_to_shape
from ..composed import ComposedLayout
from ..errors import LayoutError
from ..layout import Layout, make_layout

__all__ = ["plan_gemm", "TilePlan", "OperandPlan", "PlanError", "RULES", "ARCHS"]

ARCHS = ("sm_90", "sm_100")

#: the rules a plan can break, each with where it comes from
RULES: dict[str, str] = {
    "arch": "plan_gemm plans sm_90 (wgmma) and sm_100 (tcgen05) tiles",
    "dtype": "the DSL's make_trivial_tiled_mma has no MMA for these A/B types (TypeError)",
    "accumulator": "the MMA op refuses this accumulator type for these A/B types",
    "mma-shape": "the MMA atom's M / N is not legal (wgmma: M = 64 per warpgroup, 8 <= N <= 256, N % 8 == 0, "
                 "s8/u8 N in 8, 16, 24, 32 or a multiple of 16; tcgen05: the ISA's M and N rules). layoutalg is "
                 "stricter in one place: the DSL's sm90 helper plans a K-major s8/u8 operand with such an N (88, "
                 "232), which no wgmma instruction has (it refuses it MN-major)",
    "tile": "the tile is not a whole number of MMA instructions / smem atoms",
    "wgmma-transpose": "wgmma reads a transposed (MN-major) operand from shared memory only for 16-bit types "
                       "(PTX ISA, wgmma.mma_async: .trans is f16/bf16 only). layoutalg refuses here; the DSL's "
                       "helpers accept the op and the kernel fails later",
    "epilogue-tile": "compute_epilogue_tile_shape: the CTA tile is too small for the epilogue's TMA store "
                     "(ValueError 'CTA tile too small')",
    "tmem-load": "get_tmem_load_op has no tcgen05.ld for this accumulator / D type pair or epilogue tile "
                 "(ValueError)",
    "cta-group": "cta_group is 1 or 2 (2: sm_100 only)",
    "pipeline": "TilePlan.pipeline(): the data-path model (kernel.pipeline) does not cover this plan, or lays a "
                "tile out otherwise (not a DSL refusal)",
}


class PlanError(LayoutError):
    """A tile plan refused: ``rule`` is the key of :data:`RULES` it breaks."""

    def __init__(self, rule: str, message: str):
        self.rule = rule
        super().__init__(f"plan_gemm: [{rule}] {message}")


# ------------------------------------------------------------------------------------------------ types
_BITS = {"f16": 16, "bf16": 16, "tf32": 32, "f32": 32, "e4m3": 8, "e5m2": 8, "s8": 8, "u8": 8, "s32": 32,
         "f64": 64, "e2m1": 4, "e3m2": 6, "e2m3": 6}
_DSL_TYPE = {"f16": "Float16", "bf16": "BFloat16", "tf32": "TFloat32", "f32": "Float32", "e4m3": "Float8E4M3FN",
             "e5m2": "Float8E5M2", "s8": "Int8", "u8": "Uint8", "s32": "Int32"}
_F16 = {"f16", "bf16"}
_F8 = {"e4m3", "e5m2"}
_I8 = {"s8", "u8"}


def _type(x: Any, what: str) -> str:
    from ..nvidia.common.dtypes import dtype_name

    if isinstance(x, type):  # a CuTe DSL type (cutlass.Float16) or another class named as its type
        x = x.__name__
    try:
        t = dtype_name(x)
    except LayoutError as e:
        raise PlanError("dtype", f"{what}: {e}") from None
    if t not in _BITS:
        raise PlanError("dtype", f"{what} {x!r} ({t}) is not an element type a GEMM tile plan knows "
                                 f"({', '.join(sorted(_DSL_TYPE))})")
    return t


def _major(x: Any, what: str, mn: str) -> str:
    s = str(x).strip().upper().replace("MAJOR", "").replace("::", "").replace("_", "")
    if s in ("K",):
        return "K"
    if s in ("MN", mn):
        return "MN"
    raise PlanError("tile", f"{what}={x!r} is not 'K' or 'MN' ({mn!r})")


# ------------------------------------------------------------------------------------------------ pieces
@dataclass(frozen=True)
class OperandPlan:
    """One operand's shared-memory side: the atom the selector picks, the staged layout, the descriptors."""

    name: str                   # "A" or "B"
    dtype: str
    major: str                  # "K" or "MN"
    atom_kind: str              # the DSL's SmemLayoutAtomKind name: K_SW128, MN_INTER, MN_SW128_32B, ...
    atom: ComposedLayout        # (mn, k) -> element offset, swizzle in CuTe's spelling (byte addresses)
    tile: ComposedLayout        # one stage, (MN per CTA, K)
    smem_layout: ComposedLayout  # all stages, as the DSL's make_smem_layout_a/b prints it
    derive: Any = field(repr=False, compare=False)  # () -> the k-block descriptors (see k_blocks)

    @cached_property
    def k_blocks(self) -> tuple:
        """The k-block descriptors of stage 0 (MN-block-major), derived on first use (a plan's layouts cost
        little, its descriptors more): :func:`layoutalg.nvidia.hopper.wgmma.k_block_descriptors` /
        :func:`layoutalg.nvidia.blackwell.umma_smem.k_block_descriptors` of :attr:`tile`."""
        return tuple(self.derive())

    @property
    def swizzle(self) -> str:
        """The swizzle mode in words: ``128B``, ``64B``, ``32B``, ``none`` (interleave) or ``128B_base32B``."""
        k = self.atom_kind.split("_", 1)[1]
        return {"INTER": "none", "SW32": "32B", "SW64": "64B", "SW128": "128B", "SW128_32B": "128B_base32B"}[k]

    @property
    def cute_atom(self) -> str:
        """CuTe C++'s name of the atom, without its namespace (``GMMA::`` on sm_90, ``UMMA::`` on sm_100) and
        type: ``Layout_K_SW128_Atom``."""
        return f"Layout_{self.atom_kind}_Atom"


@dataclass(frozen=True, repr=False)
class TilePlan:
    """A GEMM tile's data path as CuTe's helpers plan it (see :func:`plan_gemm`); ``str()`` is a short table."""

    arch: str
    a_dtype: str
    b_dtype: str
    acc_dtype: str
    c_dtype: str
    c_major: str                 # "N" (row-major C) or "M"
    tile: tuple                  # (M, N, K) of the MMA tile (sm_100 with 2 CTAs: M spans the pair)
    cta_group: int
    stages: int
    epi_stages: int
    mma_atom: Any                # layoutalg's MMAAtom (CuTe's name in .name)
    atom_layout_mnk: tuple       # atoms (warpgroups on sm_90) along M, N, K
    tiled_mma: Any               # layoutalg's TiledMMA
    a: OperandPlan
    b: OperandPlan
    epi_tile: tuple              # (tile_m, tile_n) of one epilogue step
    epi_tiler: tuple             # by-mode tiler of the epilogue step (Layouts; sm_100's N mode may stride)
    epi_atom_kind: str
    epi_smem_layout: ComposedLayout
    register_layout: Layout      # (thread, value) -> column-major element index of the epilogue's tile
    idesc: Any = None            # sm_100: the tcgen05 instruction descriptor
    accumulator: Layout | None = None   # sm_100: (M per CTA, N) -> TMEM address (lane << 16 | column)
    tmem_cols: int | None = None
    tmem_load: str | None = None        # sm_100: CuTe's name of the tcgen05.ld atom
    tmem_copy: Any = None               # sm_100: the TiledCopy of it over one epilogue subtile
    smem_store: str | None = None       # sm_90: CuTe's name of the register -> shared store atom
    dsl: dict = field(default_factory=dict, repr=False)  # the CuTe DSL's spelling of each choice
    notes: tuple = ()                   # what the plan had to round or could not say
    acc_stages: int = 1                 # sm_100: accumulator stages in TMEM (a persistent kernel's 2)
    acc_stage_cols: int | None = None   # sm_100: TMEM columns one accumulator stage spans
    accumulator_staged: Layout | None = None  # sm_100: ((M, N), 1, 1, acc_stages) -> TMEM address, as the DSL's

    # ------------------------------------------------------------------------------------------ views
    @property
    def cta_tile(self) -> tuple:
        """(M, N, K) of one CTA (M / cta_group)."""
        M, N, K = self.tile
        return (M // self.cta_group, N, K)

    @property
    def instruction(self) -> str:
        """The PTX instruction the mainloop issues per k-block."""
        M, N, K = self.mma_atom.shape_mnk
        if self.arch == "sm_90":
            return f"wgmma.mma_async.sync.aligned.m64n{N}k{K}.{self.acc_dtype}.{self.a_dtype}.{self.b_dtype}"
        kind = self.idesc.kind if self.idesc is not None else "?"
        return f"tcgen05.mma.cta_group::{self.cta_group}.kind::{kind} (M={M}, N={N}, K={K})"

    def rows(self) -> list[tuple[str, str]]:
        """The table ``str()`` prints: (what, value) pairs."""
        M, N, K = self.tile
        out = [("tile", f"{M}x{N}x{K} {self.a_dtype}*{self.b_dtype}->{self.acc_dtype}, C {self.c_dtype} "
                        f"{self.c_major}-major, {self.arch}, cta_group {self.cta_group}, {self.stages} stages"),
               ("mma atom", self.mma_atom.name),
               ("instruction", self.instruction)]
        if self.arch == "sm_90":
            out.append(("atom layout", f"{self.atom_layout_mnk} ({self.tiled_mma.num_threads} threads)"))
        for op in (self.a, self.b):
            out.append((f"smem {op.name}", f"{op.major}-major {op.atom_kind} ({op.swizzle} swizzle): {op.smem_layout}"))
            for kb in op.k_blocks:
                d = kb.descriptor
                lbo, sbo = _lbo_sbo(d)
                out.append((f"  desc {op.name}[{kb.mn_block},{kb.k_block}]",
                            f"{int(d.encode()):#018x}  start +{kb.offset_bytes} B, LBO {lbo} (>>4), SBO {sbo} (>>4)"))
        if self.idesc is not None:
            out.append(("idesc", f"{self.idesc.word:#010x}"))
        if self.tmem_cols is not None:
            st = f"; {self.acc_stages} stages: {self.accumulator_staged}" if self.acc_stages > 1 else ""
            out.append(("tmem", f"{self.tmem_cols} columns; accumulator {self.accumulator}{st}"))
        out.append(("epilogue tile", f"{self.epi_tile[0]}x{self.epi_tile[1]} "
                                     f"(tiler {', '.join(str(t) for t in self.epi_tiler)})"))
        out.append(("smem epi", f"{self.epi_atom_kind}: {self.epi_smem_layout}"))
        if self.tmem_load is not None:
            out.append(("tcgen05.ld", self.tmem_load))
        if self.smem_store is not None:
            out.append(("smem store", self.smem_store))
        out.append(("registers", str(self.register_layout)))
        out += [("note", n) for n in self.notes]
        return out

    def __repr__(self) -> str:
        M, N, K = self.tile
        return (f"TilePlan({self.arch} {self.a_dtype}*{self.b_dtype}->{self.acc_dtype} {M}x{N}x{K} "
                f"cta_group={self.cta_group}: {self.mma_atom.name}, A {self.a.atom_kind}, B {self.b.atom_kind}, "
                f"epi {self.epi_tile[0]}x{self.epi_tile[1]} {self.epi_atom_kind}"
                + (f", {self.tmem_cols} TMEM columns, {self.tmem_load}" if self.tmem_load else f", {self.smem_store}")
                + ")")

    def __str__(self) -> str:
        rows = self.rows()
        w = max(len(k) for k, _ in rows)
        return "\n".join(f"{k.ljust(w)}  {v}" for k, v in rows)

    def to_dict(self) -> dict:
        """The plan as plain data (what ``layoutalg plan --json`` prints)."""
        def ops(op: OperandPlan) -> dict:
            return {"dtype": op.dtype, "major": op.major, "atom_kind": op.atom_kind, "swizzle": op.swizzle,
                    "atom": str(op.atom), "tile": str(op.tile), "smem_layout": str(op.smem_layout),
                    "descriptors": [{"mn_block": kb.mn_block, "k_block": kb.k_block, "offset_bytes": kb.offset_bytes,
                                     "word": f"{int(kb.descriptor.encode()):#018x}",
                                     "lbo": _lbo_sbo(kb.descriptor)[0], "sbo": _lbo_sbo(kb.descriptor)[1]}
                                    for kb in op.k_blocks]}
        return {"arch": self.arch, "a_dtype": self.a_dtype, "b_dtype": self.b_dtype, "acc_dtype": self.acc_dtype,
                "c_dtype": self.c_dtype, "c_major": self.c_major, "tile": list(self.tile), "cta_group": self.cta_group,
                "stages": self.stages, "epi_stages": self.epi_stages, "mma_atom": self.mma_atom.name,
                "instruction": self.instruction, "atom_layout_mnk": list(self.atom_layout_mnk),
                "a": ops(self.a), "b": ops(self.b), "epi_tile": list(self.epi_tile),
                "epi_tiler": [str(t) for t in self.epi_tiler], "epi_atom_kind": self.epi_atom_kind,
                "epi_smem_layout": str(self.epi_smem_layout), "register_layout": str(self.register_layout),
                "idesc": None if self.idesc is None else f"{self.idesc.word:#010x}",
                "accumulator": None if self.accumulator is None else str(self.accumulator),
                "tmem_cols": self.tmem_cols, "acc_stages": self.acc_stages, "tmem_load": self.tmem_load, "smem_store": self.smem_store,
                "dsl": dict(self.dsl), "notes": list(self.notes)}

    def to_json(self, **kw: Any) -> str:
        return json.dumps(self.to_dict(), **kw)

    # ------------------------------------------------------------------------------------------ the data path
    def pipeline_knobs(self) -> dict:
        """The knobs with which :mod:`layoutalg.kernel.pipeline`'s builder (``hopper_pipeline`` for sm_90,
        ``blackwell_pipeline`` for sm_100) builds this plan's data path; a :class:`PlanError` (rule
        ``pipeline``) lists what the data-path model does not cover (it models f16/bf16 tiles with an f32
        accumulator, one warpgroup per 64 rows on sm_90 and a row-major C, and the ``tcgen05.ld.32x32b``
        epilogue on sm_100).

        >>> plan_gemm("sm_100", "bf16", tile=(256, 128, 64), cta_group=2).pipeline_knobs()["swizzle_a"]
        128
        """
        M, N, K = self.tile
        why = []
        if self.arch == "sm_90":
            if self.a_dtype != self.b_dtype or self.a_dtype not in _F16 | _F8 | _I8:
                why.append(f"A and B of one 16- or 8-bit type, not {self.a_dtype} x {self.b_dtype}")
            if self.acc_dtype not in ("f32", "s32"):
                why.append(f"a 32-bit accumulator (f32, s32), not {self.acc_dtype}")
        elif self.acc_dtype not in ("f32", "s32"):
            why.append(f"a 32-bit accumulator (f32, s32), not {self.acc_dtype}")
        sw = {"none": 0, "32B": 32, "64B": 64, "128B": 128}
        for op in (self.a, self.b):
            if op.swizzle not in sw:
                why.append(f"operand {op.name}'s {op.swizzle} swizzle")
        kn: dict[str, Any] = dict(M=M, N=N, K=K, dtype=self.a_dtype, a_major=self.a.major, b_major=self.b.major,
                                  swizzle_a=sw.get(self.a.swizzle), swizzle_b=sw.get(self.b.swizzle))
        for op in (self.a, self.b):  # the DSL tiles an MN-major operand's atoms K first (tile_to_shape order (1, 0))
            if op.major == "MN":
                kn[f"order_{op.name.lower()}"] = "right"
        if self.arch == "sm_90":
            W = self.atom_layout_mnk[0]
            if M != 64 * W or tuple(self.atom_layout_mnk[1:]) != (1, 1):
                why.append(f"one warpgroup per 64 rows (the plan: M = {M} over atom layout {self.atom_layout_mnk})")
            if self.c_major != "N":
                why.append("a row-major (N-major) C written by stmatrix")
            kn["warpgroups"] = W
        else:
            kn.update(cta_group=self.cta_group, b_dtype=self.b_dtype, acc_dtype=self.acc_dtype,
                      epilogue_atom=self.tmem_load, epilogue_tiler=tuple(self.epi_tiler))
        if why:
            raise PlanError("pipeline", "the data-path model (kernel.pipeline) does not cover this plan; it needs "
                            + "; ".join(why))
        return kn

    def pipeline(self, **knobs: Any) -> Any:
        """The kernel data path of this plan (:mod:`layoutalg.kernel.pipeline`, issue 27 item 1), ready for
        :func:`layoutalg.kernel.proof.prove`. ``knobs`` override :meth:`pipeline_knobs` (a planted bug, say).

        The join is checked: without overrides, the pipeline's descriptor words of A and B (at their shared
        bases) must be the plan's; a model that lays a tile out otherwise than the plan is a PlanError."""
        if self.arch == "sm_90":
            from .pipeline import hopper_pipeline as build  # type: ignore[import-not-found]
        else:
            from .pipeline_sm100 import blackwell_pipeline as build  # type: ignore[import-not-found]
        kn = self.pipeline_knobs()
        p = build(**{**kn, **knobs})
        if not knobs:
            self._check_join(p)
        return p

    def _check_join(self, p: Any) -> None:
        read = "wgmma_read_" if self.arch == "sm_90" else "umma_read_"
        for op in (self.a, self.b):
            x = op.name.lower()
            base = int(p.stage(f"tma_load_{x}").details["base"])
            words = p.stage(read + x).details["words"]
            flat = [int(w) for row in words for w in (row if isinstance(row, tuple) else (row,))]
            if self.arch == "sm_90" and x == "b":
                flat = [int(w) for w in words[0]]
            got = [w - (base >> 4) for w in flat]
            want = [int(kb.descriptor.encode()) for kb in op.k_blocks]
            if got != want:
                raise PlanError("pipeline", f"the data-path model lays operand {op.name} out otherwise than the plan "
                                f"({op.major}-major {op.atom_kind}: {op.tile}): its descriptor words "
                                f"{[hex(w) for w in got[:4]]} are not the plan's {[hex(w) for w in want[:4]]}")

    def prove(self, **knobs: Any) -> Any:
        """``prove(self.pipeline(**knobs))``: every product ``A[m,k]*B[k,n]`` lands in the accumulator cell the
        epilogue writes to ``out[m,n]`` (or the first wrong element, named)."""
        from .proof import prove  # type: ignore[import-not-found]

        return prove(self.pipeline(**knobs))


def _lbo_sbo(d: Any) -> tuple[int, int]:
    """The descriptor's LBO and SBO fields as encoded (bytes >> 4)."""
    return int(d.leading_byte_offset) >> 4, int(d.stride_byte_offset) >> 4


# ------------------------------------------------------------------------------------------------ selectors
def atom_kind(major: str, bits: int, major_size: int, *, arch: str = "sm_100") -> str:
    """The shared-memory atom the DSL's selector picks: the widest swizzle (128, 64, 32 bytes, else interleave)
    whose row the major mode's ``major_size`` elements fill exactly; sm_100 picks ``MN_SW128_32B`` for
    32-bit MN-major operands (CuTe's ``sm100_smem_selector``).

    >>> atom_kind("K", 16, 64), atom_kind("MN", 32, 128), atom_kind("MN", 32, 128, arch="sm_90"), atom_kind("K", 8, 48)
    ('K_SW128', 'MN_SW128_32B', 'MN_SW128', 'K_INTER')
    """
    size_bits = major_size * bits
    if major_size % 8:
        raise PlanError("tile", f"the major mode has {major_size} elements, not a multiple of 8 (the smem selector's "
                                "precondition)")
    if size_bits % 128 and arch == "sm_100":
        raise PlanError("tile", f"the major mode is {size_bits} bits, not a multiple of 16 bytes")
    for sw, name in ((1024, "SW128"), (512, "SW64"), (256, "SW32")):
        if size_bits % sw == 0:
            if major == "MN" and sw == 1024 and bits == 32 and arch == "sm_100":
                return "MN_SW128_32B"
            return f"{major}_{name}"
    return f"{major}_INTER"


def _atom(kind: str, dtype: str, arch: str) -> ComposedLayout:
    """The DSL's ``make_smem_layout_atom(kind, dtype)``, swizzle in CuTe's spelling (on byte addresses).

    ``MN_SW128_32B``: the DSL's atom is ``MN_SW128``'s ``(1024 bits, 8)`` with ``Sw<2,5,2>``; CuTe C++'s
    ``Layout_MN_SW128_32B_Atom`` is ``(1024 bits, 4)``, half as deep: both tile to the same layout function.
    """
    major, sw = kind.split("_", 1)
    mode: Any = {"INTER": 0, "SW32": 32, "SW64": 64, "SW128": 128, "SW128_32B": "128B_base32B"}[sw]
    typ = {8: "e4m3", 16: "f16", 32: "tf32"}[_BITS[dtype]]  # the atom depends on the width only
    if arch == "sm_90":
        from ..nvidia.hopper.wgmma import atom

        return atom(major, mode, typ, swizzle_unit="byte")
    from ..nvidia.blackwell.umma_smem import smem_atom

    if mode == "128B_base32B":
        return ComposedLayout(smem_atom(major, mode, typ, swizzle_unit="byte").outer, 0,
                              smem_atom(major, 128, typ, swizzle_unit="byte").inner)
    return smem_atom(major, mode, typ, swizzle_unit="byte")


def _tile(atom: ComposedLayout, shape: tuple, order: tuple, what: str, notes: list | None = None) -> Any:
    """The DSL's ``tile_to_shape``: like CuTe C++'s, but a block that does not divide the target is repeated
    ``ceil_div`` times (CuTe C++ refuses); ``notes`` then says so."""
    inner = atom.inner if isinstance(atom, ComposedLayout) else atom
    bshape = [_prod(inner[i].shape) if i < len(inner) else 1 for i in range(len(shape))]
    target = tuple(-(-s // b) * b for s, b in zip(shape, bshape))
    if target != tuple(shape):
        if notes is None:
            raise PlanError("tile", f"{what}: the atom {atom} does not divide {shape}")
        notes.append(f"{what}: the atom {atom} does not divide {shape}; the DSL's tile_to_shape covers {target}")
    try:
        return _tile_to_shape(atom, target, tuple(order))
    except LayoutError as e:
        raise PlanError("tile", f"{what}: the atom {atom} does not tile {shape}: {e}") from None


@lru_cache(maxsize=1024)
def _tile_to_shape(atom: Any, target: tuple, order: tuple) -> Any:
    return tile_to_shape(atom, target, order)


@lru_cache(maxsize=1024)
def _tile_to_mma_shape(atom: Any, shape: tuple, order: tuple) -> Any:
    from ..nvidia.blackwell.umma_smem import tile_to_mma_shape

    return _flat_stage(tile_to_mma_shape(atom, shape, order))


# ------------------------------------------------------------------------------------------------ sm_90
def _sm90_mma(a: str, b: str, acc: str, N: int) -> tuple[str, int, str]:
    """(DSL op class, instruction K, CuTe's atom name) of the warpgroup MMA, or a PlanError."""
    from ..nvidia.common.atom_types import PTX_TO_NAME

    if a in _F16:
        if a != b:
            raise PlanError("dtype", f"wgmma {a} x {b}: A and B types must match (the DSL: 'Type mismatch')")
        cls, K, accs = "MmaF16BF16Op", 16, ({"f16", "f32"} if a == "f16" else {"f32"})
    elif a in _F8 and b in _F8:
        cls, K, accs = "MmaF8Op", 32, {"f16", "f32"}
    elif a in _I8 and b in _I8:
        cls, K, accs = "MmaI8Op", 32, {"s32"}
    else:
        raise PlanError("dtype", f"the DSL's sm90 make_trivial_tiled_mma has no wgmma for A {a}, B {b} "
                                 "(f16/bf16, e4m3/e5m2 or s8/u8)")
    if acc not in accs:
        raise PlanError("accumulator", f"{cls} ({a} x {b}) accumulates in {' or '.join(sorted(accs))}, not {acc}")
    if not (8 <= N <= 256 and N % 8 == 0):
        raise PlanError("mma-shape", f"wgmma N = {N}: expects 8 <= N <= 256 and N % 8 == 0")
    name = f"SM90_64x{N}x{K}_{PTX_TO_NAME[acc]}{PTX_TO_NAME[a]}{PTX_TO_NAME[b]}_SS" + ("" if a in _F16 else "_TN")
    from ..nvidia.hopper.atoms import wgmma_atom

    try:
        wgmma_atom(name)
    except LayoutError as e:
        raise PlanError("mma-shape", f"{e} (the PTX ISA's wgmma shapes; the DSL's helper accepts a K-major "
                                     "s8/u8 N that is not one)") from None
    return cls, K, name


def _plan_sm90(a: str, b: str, acc: str, c: str, tile: tuple, am: str, bm: str, cm: str, stages: int,
               epi_stages: int, atom_layout: tuple | None, strict: bool) -> TilePlan:
    from ..nvidia.hopper.atoms import wgmma_atom
    from ..tiled import make_tiled_mma

    M, N, K = tile
    cls, inst_k, name = _sm90_mma(a, b, acc, N)
    notes: list[str] = []
    for op, t, mj in (("A", a, am), ("B", b, bm)):
        if mj == "MN" and _BITS[t] != 16:
            why = f"operand {op} ({t}) is MN-major; wgmma transposes only 16-bit operands read from shared memory"
            if strict:
                raise PlanError("wgmma-transpose", why + " (strict=False plans it as the DSL's helpers do)")
            notes.append(why + ": no descriptors (the DSL's helpers plan it; the instruction does not exist)")
    if atom_layout is None:
        atom_layout = (2, 1, 1) if M > 64 and N > 128 else (1, 1, 1)
    if M % 64 or K % inst_k:
        raise PlanError("tile", f"tile {M}x{N}x{K} is not whole wgmma instructions (64 x {N} x {inst_k})")
    mma = wgmma_atom(name)
    tiled = make_tiled_mma(mma, atom_layout)
    ops = []
    for op, t, mj, mn in (("A", a, am, M), ("B", b, bm, N)):
        kind = atom_kind(mj, _BITS[t], K if mj == "K" else mn, arch="sm_90")
        at = _atom(kind, t, "sm_90")
        order = (0, 1, 2) if mj == "K" else (1, 0, 2)
        loose = notes if (mj == "MN" and _BITS[t] != 16) else None  # only where strict=False got this far
        staged = _tile(at, (mn, K, stages), order, f"smem {op}", loose)
        one = _tile(at, (mn, K), order[:2], f"smem {op}", [] if loose is not None else None)
        kbs = tuple if (mj == "MN" and _BITS[t] != 16) else partial(_wgmma_k_blocks, one, t, f"m64n{N}k{inst_k}", op)
        ops.append(OperandPlan(op, t, mj, kind, at, one, staged, kbs))
    coop = tuple(atom_layout) == (2, 1, 1)
    if coop:
        epi = (min(128, M), min(32, N))
    else:
        epi = (min(64, M), min(64 if _BITS[c] == 8 else 32, N))
    ekind = atom_kind("K" if cm == "N" else "MN", _BITS[c], epi[1] if cm == "N" else epi[0], arch="sm_90")
    eat = _atom(ekind, c, "sm_90")
    esm = _tile(eat, (epi[0], epi[1], epi_stages), (1, 0, 2) if cm == "M" else (0, 1, 2), "smem epilogue", notes)
    if _BITS[c] == 16:
        store, dsl_store = ("SM90_U16x8_STSM_T", "StMatrix8x8x16bOp(transpose=True, num_matrices=4)") if cm == "M" else \
            ("SM90_U32x4_STSM_N", "StMatrix8x8x16bOp(transpose=False, num_matrices=4)")
    else:
        store, dsl_store = "UniversalCopy", "CopyUniversalOp()"
    dsl = {"mma_op": f"{cls}(shape_mnk=(64, {N}, {inst_k}), a_major_mode={am}, b_major_mode={bm})",
           "atom_layout_mnk": str(tuple(atom_layout)), "smem_atom_a": f"SmemLayoutAtomKind.{ops[0].atom_kind}",
           "smem_atom_b": f"SmemLayoutAtomKind.{ops[1].atom_kind}", "epi_tile": str(epi),
           "smem_atom_epi": f"SmemLayoutAtomKind.{ekind}", "smem_store": dsl_store}
    return TilePlan("sm_90", a, b, acc, c, cm, (M, N, K), 1, stages, epi_stages, mma, tuple(atom_layout), tiled,
                    ops[0], ops[1], epi, (Layout(epi[0]), Layout(epi[1])), ekind, esm, tiled.get_layoutC_TV(),
                    smem_store=store, dsl=dsl, notes=tuple(notes))


# ------------------------------------------------------------------------------------------------ sm_100
def _sm100_kind(a: str, b: str) -> tuple[str, str, int]:
    """(tcgen05 kind, DSL op class, instruction K) for A, B, or a PlanError."""
    if a in _F16 and b == a:
        return "f16", "MmaF16BF16Op", 16
    if a in ("tf32", "f32") and b == a:
        return "tf32", "MmaTF32Op", 8
    if a in _I8 and b == a:
        return "i8", "MmaI8Op", 32
    if a in _F8 and b in _F8:
        return "f8f6f4", "MmaF8F6F4Op", 32
    raise PlanError("dtype", f"the DSL's sm100 make_trivial_tiled_mma has no tcgen05.mma for A {a}, B {b} "
                             "(f16/bf16 or tf32 or s8/u8 with B = A; e4m3/e5m2 mixed)")


def epilogue_tile_size(cta_m: int, cta_n: int, two_cta: bool, d_bits: int, c_bits: int | None = None,
                       d_m_major: bool = True, c_m_major: bool = True) -> tuple[int, int, tuple[int, int]]:
    """(tile_m, tile_n, (warp_m, warp_n)) of the sm_100 epilogue step, as the DSL's
    ``compute_epilogue_tile_size`` chooses it: 4 warps as (4,1) -- (2,2) for a 2-CTA tile of M 64 per CTA --,
    each warp at most 32 TMEM lanes; N aims at 4096 elements a step (no source C), is halved until it
    divides the CTA's N, and is at least the TMA store's 16 contiguous bytes per warp.

    >>> epilogue_tile_size(128, 256, False, 16, d_m_major=False)
    (128, 32, (4, 1))
    """
    warp_m, warp_n = (2, 2) if (cta_m == 64 and two_cta) else (4, 1)
    max_bits = d_bits if c_bits is None else max(c_bits, d_bits)
    tile_m = min(cta_m, 32 * warp_m)
    if c_bits is None:
        n_perf = (8192 if max_bits == 4 else 4096) // tile_m
    elif max_bits == 32:
        n_perf = 16 if (cta_m > 64 and cta_n <= 128) else 32
    elif max_bits == 16:
        n_perf = 32 if cta_n <= 128 else 64
    else:
        n_perf = 64
    while cta_n % n_perf:
        n_perf //= 2
    n_min_d = 8 * warp_n if d_m_major else (128 * warp_n if d_bits == 6 else 128 // d_bits * warp_n)
    n_min_c = 8 * warp_n if (c_m_major or c_bits is None) else (128 * warp_n if c_bits == 6 else 128 // c_bits * warp_n)
    if cta_n < n_min_c or cta_n < n_min_d:
        raise PlanError("epilogue-tile", f"CTA tile N = {cta_n} is below the epilogue's minimum "
                                         f"{max(n_min_c, n_min_d)} (TMA store alignment)")
    tile_n = min(cta_n, max(n_perf, n_min_c, n_min_d))
    if cta_n % tile_n:
        tile_n = cta_n
    return tile_m, tile_n, (warp_m, warp_n)


_LD_SHAPE = {(16, 64): "16x64b", (16, 128): "16x128b", (16, 256): "16x256b", (16, 32): "16x32bx2", (32, 32): "32x32b"}
_LD_DSL = {"16x64b": "Ld16x64bOp", "16x128b": "Ld16x128bOp", "16x256b": "Ld16x256bOp", "16x32bx2": "Ld16x32bx2Op",
           "32x32b": "Ld32x32bOp"}


def tmem_load_choice(epi_tile: tuple, warps: tuple, acc_bits: int, d_bits: int, d_m_major: bool) -> tuple[str, int, bool]:
    """(PTX shape, .num, pack 16b) of the ``tcgen05.ld`` the DSL's ``get_tmem_load_op`` picks for an
    epilogue step of ``epi_tile`` over ``warps`` (warp_m, warp_n).

    >>> tmem_load_choice((128, 32), (4, 1), 32, 16, False)
    ('32x32b', 32, False)
    """
    num_dp = epi_tile[0] // warps[0]
    if num_dp not in (16, 32):
        raise PlanError("tmem-load", f"the epilogue gives each warp {num_dp} TMEM lanes, not 16 or 32")
    col_bits = (epi_tile[1] // warps[1]) * acc_bits
    pack = False
    if acc_bits == 32 and d_bits == 32:
        dp, bit = (16, 256 if d_m_major else 128) if num_dp == 16 else (32, 32)
    elif acc_bits == 32 and d_bits == 16:
        dp, bit = (16, 256) if (num_dp == 16 or d_m_major) else (32, 32)
    elif acc_bits == 32 and d_bits == 8:
        if num_dp == 16:
            dp, bit = (16, 256) if d_m_major else (16, 32)
        else:
            dp, bit = (16, 256) if d_m_major else (32, 32)
    elif acc_bits == 16 and d_bits == 16:
        pack = True
        dp, bit = (16, 128) if (num_dp == 16 or d_m_major) else (32, 32)
    elif acc_bits == 32 and d_bits in (4, 6):
        if num_dp != 32:
            raise PlanError("tmem-load", f"a {d_bits}-bit D needs 32 TMEM lanes per warp, not {num_dp}")
        dp, bit = 32, 32
    else:
        raise PlanError("tmem-load", f"no tcgen05.ld for a {acc_bits}-bit accumulator and a {d_bits}-bit D "
                                     "(get_tmem_load_op: 'Can not handle acc/d type combination')")
    div = 64 if (dp, bit) == (16, 32) else bit
    rep = None
    for r, shapes in ((128, ((16, 64), (16, 32), (32, 32))), (64, ((16, 128), (16, 64), (16, 32), (32, 32)))):
        if col_bits % (div * r) == 0 and (dp, bit) in shapes:
            rep = r
            break
    if rep is None:
        rep = next((r for r in (32, 16, 8, 4, 2, 1) if col_bits % (div * r) == 0), None)
    if rep is None:
        raise PlanError("tmem-load", f"{col_bits} accumulator bits per warp row are not whole {_LD_SHAPE[(dp, bit)]} loads")
    return _LD_SHAPE[(dp, bit)], rep, pack


def _plan_sm100(a: str, b: str, acc: str, c: str, tile: tuple, am: str, bm: str, cm: str, cta: int, stages: int,
                epi_stages: int, acc_stages: int) -> TilePlan:
    from ..algebra.casting import recast_layout
    from ..nvidia.blackwell.tmem_accum import accumulator_layout
    from ..nvidia.blackwell.tmem_copy import ld_name
    from ..nvidia.blackwell.umma import umma_atom
    from ..tiled import make_tiled_mma

    M, N, K = tile
    kind, cls, inst_k = _sm100_kind(a, b)
    try:
        mma = umma_atom(kind=kind, a_type=a if a != "f32" else "tf32", b_type=b if b != "f32" else "tf32", c_type=acc,
                        m=M, n=N, a_major=am, b_major=bm, cta_group=cta)
    except LayoutError as e:
        msg = str(e)
        rule = "accumulator" if ("accumulat" in msg or "C type" in msg or "c_type" in msg) else "mma-shape"
        raise PlanError(rule, msg) from None
    if K % inst_k:
        raise PlanError("tile", f"tile K = {K} is not whole tcgen05.mma instructions (K = {inst_k})")
    ops = []
    for op, t, mj, mn in (("A", a, am, M), ("B", b, bm, N)):
        mn_cta = mn // cta
        bits = _BITS[t]
        kind_ = atom_kind(mj, bits, K if mj == "K" else mn_cta)
        at = _atom(kind_, t, "sm_100")
        order3 = (1, 2, 3) if mj == "K" else (2, 1, 3)
        try:
            staged = _tile_to_mma_shape(at, ((mn_cta, inst_k), 1, K // inst_k, stages), order3)
        except LayoutError as e:
            raise PlanError("tile", f"smem {op}: {e}") from None
        one = _tile(at, (mn_cta, K), order3[:2], f"smem {op}")
        kbs = partial(_umma_k_blocks, one, t, mma, op)
        ops.append(OperandPlan(op, t, mj, kind_, at, one, staged, kbs))
    cta_m = M // cta
    acc_bits = _BITS[acc]
    accum = accumulator_layout(cta_m, N, cta_group=cta, value_bits=acc_bits)
    # the DSL's make_fragment_C((acc shape, 1, 1, stages)): CuTe's tmem_frg lays the stages out (a 64-row
    # accumulator's second stage in the lanes the first leaves free)
    staged_acc = accumulator_layout(cta_m, N, cta_group=cta, value_bits=acc_bits, rest=(1, 1, acc_stages))
    cols32 = recast_layout(staged_acc, acc_bits, 32) if acc_bits != 32 else staged_acc
    total = int(cols32.cosize()) & 0xFFFF
    one = recast_layout(accum, acc_bits, 32) if acc_bits != 32 else accum
    used = int(one.cosize()) & 0xFFFF
    tmem_cols = max(32, 1 << (total - 1).bit_length())
    if tmem_cols > 512:
        raise PlanError("tile", f"{acc_stages} accumulator stage(s) need {total} TMEM columns; a CTA has 512")
    d_m_major = cm == "M"
    em, en, warps = epilogue_tile_size(cta_m, N, cta == 2, _BITS[c], None, d_m_major)
    ln = coalesce(Layout((en // warps[1], warps[1]), (1, N // warps[1])))
    tiler = (Layout(em), ln)
    shape, rep, pack = tmem_load_choice((em, en), warps, acc_bits, _BITS[c], d_m_major)
    ld = ld_name(shape, rep, pack)
    sub = make_layout(composition(accum[0], tiler[0]), composition(accum[1], tiler[1]))
    t2r = _tmem_copy(ld, sub, acc)
    tma = tuple(coalesce(right_inverse(x)).shape for x in tiler)
    tma_mn = tuple(int(x) if isinstance(x, int) else int(_prod(x)) for x in tma)
    ekind = atom_kind("K" if cm == "N" else "MN", _BITS[c], tma_mn[1] if cm == "N" else tma_mn[0])
    eat = _atom(ekind, c, "sm_100")
    notes: list[str] = []
    esm = _tile(eat, (em, en, epi_stages), (1, 0, 2) if cm == "M" else (0, 1, 2), "smem epilogue", notes)
    tiled = make_tiled_mma(mma)
    pk = "PACK_16b_IN_32b" if pack else "NONE"
    dsl = {"mma_op": f"{cls}(shape_mnk=({M}, {N}, {inst_k}), cta_group=CtaGroup.{'TWO' if cta == 2 else 'ONE'}, "
                     f"a_major_mode={am}, b_major_mode={bm})",
           "smem_atom_a": f"SmemLayoutAtomKind.{ops[0].atom_kind}", "smem_atom_b": f"SmemLayoutAtomKind.{ops[1].atom_kind}",
           "epi_tile": f"({tiler[0]}, {tiler[1]})", "smem_atom_epi": f"SmemLayoutAtomKind.{ekind}",
           "tmem_load": f"{_LD_DSL[shape]}(repeat=Repetition.x{rep}, pack=Pack.{pk})"}
    return TilePlan("sm_100", a, b, acc, c, cm, (M, N, K), cta, stages, epi_stages, mma, (1, 1, 1), tiled,
                    ops[0], ops[1], (em, en), tiler, ekind, esm, t2r.layout_tv, idesc=mma.idesc(), accumulator=accum,
                    tmem_cols=tmem_cols, tmem_load=ld, tmem_copy=t2r, dsl=dsl, notes=tuple(notes), acc_stages=acc_stages,
                    acc_stage_cols=used, accumulator_staged=staged_acc)


# the derivations below are pure functions of their (hashable) arguments, and a sweep of plans asks the
# same ones again and again
@lru_cache(maxsize=512)
def _wgmma_k_blocks(tile: Any, dtype: str, instruction: str, op: str) -> tuple:
    from ..nvidia.hopper.wgmma import k_block_descriptors

    try:
        return k_block_descriptors(tile, dtype, instruction, operand=op, swizzle_unit="byte")
    except LayoutError as e:
        raise PlanError("tile", f"operand {op}: {e}") from None


@lru_cache(maxsize=512)
def _umma_k_blocks(tile: Any, dtype: str, atom: Any, op: str) -> tuple:
    from ..nvidia.blackwell.umma_smem import k_block_descriptors

    try:
        return k_block_descriptors(tile, dtype, atom, operand=op, mn_block=None)
    except LayoutError as e:
        raise PlanError("tile", f"operand {op}: {e}") from None


@lru_cache(maxsize=256)
def _tmem_copy(ld: str, sub: Layout, acc: str) -> Any:
    from ..nvidia.blackwell.tmem_accum import make_tmem_copy

    try:
        return make_tmem_copy(ld, sub, acc)
    except LayoutError as e:
        raise PlanError("tmem-load", f"{ld} over the epilogue subtile {sub}: {e}") from None


def _flat_stage(L: Any) -> Any:
    """CuTe's ``tiled_divide`` keeps a mode the tiler does not reach as it is: the stage mode ``S``, where
    layoutalg's ``tile_to_mma_shape`` writes ``(1,S)``."""
    inner = L.inner if isinstance(L, ComposedLayout) else L
    last = inner[len(inner) - 1]
    if isinstance(last.shape, tuple) and len(last.shape) == 2 and last.shape[0] == 1:
        inner = make_layout(*[inner[i] for i in range(len(inner) - 1)], coalesce(last))
    return ComposedLayout(L.outer, L.offset, inner) if isinstance(L, ComposedLayout) else inner


def _prod(x: Any) -> int:
    if isinstance(x, tuple):
        p = 1
        for y in x:
            p *= _prod(y)
        return p
    return int(x)


# ------------------------------------------------------------------------------------------------ the call
def plan_gemm(arch: Any, a_dtype: Any, b_dtype: Any = None, acc_dtype: Any = None, tile: Any = (128, 128, 64),
              a_major: Any = "K", b_major: Any = "K", cta_group: int = 1, stages: int = 4, c_dtype: Any = None,
              c_major: Any = "N", epi_stages: int = 2, atom_layout_mnk: Any = None, strict: bool = True,
              acc_stages: int = 1) -> TilePlan:
    """Plan a GEMM tile's data path as CuTe's and the CuTe DSL's helpers do (see the module text).

    ``arch``: ``sm_90`` (``90``, ``sm_90a``, ``hopper``) or ``sm_100`` (``100``, ``sm_100a``, ``blackwell``).
    ``tile`` (M, N, K): the MMA tile; with ``cta_group=2`` (sm_100) M spans the CTA pair (M per CTA = M/2).
    ``a_major`` / ``b_major``: ``"K"`` or ``"MN"``; ``c_major``: ``"N"`` (row-major C) or ``"M"``.
    ``b_dtype`` defaults to ``a_dtype``, ``acc_dtype`` to f32 (s32 for s8/u8 operands), ``c_dtype`` to
    ``acc_dtype``. Types are read by :func:`layoutalg.nvidia.common.dtypes.dtype_name` (``bf16``,
    ``bfloat16_t``, ``BFloat16``, ``cutlass.BFloat16`` ...). ``atom_layout_mnk`` (sm_90):
    warpgroups along M, N, K (default as the DSL's Hopper GEMM: (2,1,1) when M > 64 and N > 128).
    ``acc_stages`` (sm_100): accumulator stages in TMEM (2 in the DSL's persistent GEMMs), one after another.
    ``strict=False`` plans what the DSL's helpers plan but the hardware lacks (RULES['wgmma-transpose']),
    without descriptors for the operand, and says so in ``notes``.

    >>> p = plan_gemm("sm_90", "f16", tile=(128, 256, 64), c_dtype="f16")
    >>> p.mma_atom.name, p.atom_layout_mnk, p.a.atom_kind, p.epi_tile, p.smem_store
    ('SM90_64x256x16_F32F16F16_SS', (2, 1, 1), 'K_SW128', (128, 32), 'SM90_U32x4_STSM_N')
    >>> plan_gemm("sm_90", "tf32", tile=(128, 128, 32))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    layoutalg.kernel.plan.PlanError: plan_gemm: [dtype] the DSL's sm90 make_trivial_tiled_mma has no wgmma for A tf32, ...
    """
    s = str(arch).strip().lower().replace("sm_", "").replace("sm", "").rstrip("a")
    arch_ = {"90": "sm_90", "hopper": "sm_90", "100": "sm_100", "blackwell": "sm_100"}.get(s)
    if arch_ is None:
        raise PlanError("arch", f"arch {arch!r} is not sm_90 or sm_100")
    a = _type(a_dtype, "a_dtype")
    b = a if b_dtype is None else _type(b_dtype, "b_dtype")
    acc = ("s32" if a in _I8 and b in _I8 else "f32") if acc_dtype is None else _type(acc_dtype, "acc_dtype")
    c = acc if c_dtype is None else _type(c_dtype, "c_dtype")
    if not (isinstance(tile, (tuple, list)) and len(tile) == 3 and all(type(x) is int and x > 0 for x in tile)):
        raise PlanError("tile", f"tile {tile!r} is not (M, N, K) of positive ints")
    for name, v in (("stages", stages), ("epi_stages", epi_stages), ("acc_stages", acc_stages)):
        if type(v) is not int or not 1 <= v <= 64:
            raise PlanError("tile", f"{name}={v!r} is not an int in 1..64")
    am, bm = _major(a_major, "a_major", "M"), _major(b_major, "b_major", "N")
    cm_ = str(c_major).strip().upper()
    if cm_ not in ("N", "M", "ROW", "COL"):
        raise PlanError("tile", f"c_major={c_major!r} is not 'N' (row-major C) or 'M'")
    cm = "N" if cm_ in ("N", "ROW") else "M"
    if cta_group not in (1, 2) or type(cta_group) is not int or (cta_group == 2 and arch_ == "sm_90"):
        raise PlanError("cta-group", f"cta_group={cta_group!r}: 1, or 2 on sm_100")
    if arch_ == "sm_90":
        al = None
        if atom_layout_mnk is not None:
            if not (isinstance(atom_layout_mnk, (tuple, list)) and len(atom_layout_mnk) == 3
                    and all(type(x) is int and x > 0 for x in atom_layout_mnk)):
                raise PlanError("tile", f"atom_layout_mnk={atom_layout_mnk!r} is not three positive ints")
            al = tuple(atom_layout_mnk)
        if acc_stages != 1:
            raise PlanError("tile", "acc_stages is for sm_100 (TMEM); sm_90 accumulates in registers")
        return _plan_sm90(a, b, acc, c, tuple(tile), am, bm, cm, stages, epi_stages, al, bool(strict))
    if atom_layout_mnk is not None:
        raise PlanError("tile", "atom_layout_mnk is for sm_90 (one tcgen05.mma covers the sm_100 tile)")
    return _plan_sm100(a, b, acc, c, tuple(tile), am, bm, cm, cta_group, stages, epi_stages, acc_stages)
