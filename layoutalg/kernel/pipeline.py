"""A GEMM tile's data path as one object: the stages a tile's elements pass through, from global memory
to ``out``, with the numbers the hardware reads at each stage (tensor maps, descriptor words, fragments).

A :class:`Pipeline` is a list of :class:`Stage` objects (global tensor, TMA tensor map or thread copy,
the shared tile *at its base address*, the operand read, the MMA, the accumulator, the epilogue read and
the store) plus a *trace*: what the hardware does with those numbers, element by element, computed by
the catalog's models (``nvidia.hopper.tma.TmaCopy.writes`` for where TMA puts each element, the PTX
canonical layouts of ``nvidia.hopper.tma.descriptor_reads`` for the bytes a descriptor word makes
``wgmma`` read -- the word is decoded field by field, independently of how it was derived --, the
catalog's register fragments for the accumulator and ``stmatrix``). :func:`layoutalg.kernel.proof.prove`
checks the trace: every product ``A[m,k]*B[k,n]`` must accumulate into the cell the epilogue writes to
``out[m,n]``.

Builders: :func:`hopper_pipeline` (TMA -> wgmma SS -> registers -> stmatrix -> TMA store; its knobs
are fixed by the contract with the hardware run, docs/kernels.md), and in
:mod:`layoutalg.kernel.pipeline_sm80` ``ampere_pipeline`` and :mod:`layoutalg.kernel.pipeline_sm100`
``blackwell_pipeline``.

    >>> p = hopper_pipeline(N=32)
    >>> [s.name for s in p.stages]
    ['global', 'tma_load_a', 'tma_load_b', 'tiled_mma', 'wgmma_read_a', 'wgmma_read_b', 'accumulator', 'epilogue_stmatrix', 'tma_store']
    >>> hex(p.stage("wgmma_read_a").details["words"][0][1])     # warpgroup 0, k-block 1: start + 32 B
    '0x4000004000010002'
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from collections.abc import Callable

import numpy as np

from ..errors import LayoutError

__all__ = ["Stage", "Pipeline", "Trace", "StageCheck", "SmemAccess", "hopper_pipeline", "HOPPER_KNOBS",
           "element_name", "TAG_A", "TAG_B", "TAG_C"]

#: shared-memory owner codes: ``tag << 40 | element``; A element (m, k) -> m*K + k, B (n, k) -> n*K + k,
#: C (staging) -> the accumulator cell
TAG_A, TAG_B, TAG_C = 1, 2, 3
OWNER_SHIFT = 40
SMEM_BYTES = 232448  # 227 KiB: the most dynamic shared memory one sm_90 / sm_100 CTA may have


@dataclass(frozen=True)
class Stage:
    """One stage of a data path: ``name`` (unique in the pipeline), ``kind`` (global, tma, copy, smem, operand,
    mma, accumulator, epilogue, store), a one-line ``summary`` and the numbers it is made of (``details``)."""

    name: str
    kind: str
    summary: str
    details: dict = field(default_factory=dict, repr=False, compare=False)

    def __str__(self) -> str:
        return f"{self.name:<18} {self.summary}"


@dataclass(frozen=True)
class StageCheck:
    """What the proof checked at one stage: ``checked`` element movements, ``mismatches`` of them differing
    from the intended movement, and the first one (``first``: a dict with ``stage``, ``location``, ``lands``,
    ``should``; None when none). ``operand=True`` marks an operand read: its mismatches are harmless when every
    accumulator cell still gets exactly its products (a K permutation applied to A and B alike)."""

    stage: str
    what: str
    checked: int
    mismatches: int = 0
    first: dict | None = None
    operand: bool = False


@dataclass(frozen=True)
class SmemAccess:
    """A shared-memory access of the path by threads (not TMA): its bank report and vector width in bytes."""

    stage: str
    instruction: str
    vector_bytes: int
    report: Any  # layoutalg.banks.BankReport

    def __str__(self) -> str:
        r = self.report
        n = len(r.instructions)
        return (f"{self.stage}: {self.instruction}, {self.vector_bytes} B per thread, {n} instruction(s), "
                f"{r.wavefronts} wavefronts (ideal {r.ideal}), worst {r.ways}-way")


@dataclass
class Trace:
    """What the hardware does with a pipeline's numbers, element by element (the proof's input).

    ``prod_a[c, s]`` / ``prod_b[c, s]``: the shared-memory owner code (see :data:`TAG_A`) of the A and B
    elements multiplied into accumulator cell ``c`` at step ``s`` (-1: a byte nothing was written to);
    ``cell_target[c]``: the ``(m, n)`` the design means cell ``c`` to be; ``out_cell[m, n]``: the cell that
    lands in ``out[m, n]`` (-1: never written); ``cell_name(c)``: the cell's place (thread/register or TMEM
    lane/column); ``checks``: per-stage comparisons with the intended movement; ``accesses``: bank reports.
    """

    M: int
    N: int
    K: int
    prod_a: np.ndarray
    prod_b: np.ndarray
    cell_target: np.ndarray
    out_cell: np.ndarray
    cell_name: Callable[[int], str]
    checks: list
    accesses: list
    notes: list


@dataclass(frozen=True)
class Pipeline:
    """A GEMM tile's data path: the stages, the knobs it was built from, and its trace (see the module doc).

    ``arch``: 'sm_80', 'sm_90a' or 'sm_100a'; ``M, N, K``: the tile (out is M x N, row-major); ``dtype``: the
    input type (accumulate fp32). :meth:`trace` runs the hardware model; ``prove(pipeline)`` checks it.
    """

    arch: str
    M: int
    N: int
    K: int
    dtype: str
    knobs: dict
    stages: tuple
    _tracer: Callable[[Pipeline], Trace] = field(repr=False, compare=False)

    def stage(self, name: str) -> Stage:
        """The stage called ``name`` (LayoutError listing the names otherwise)."""
        for s in self.stages:
            if s.name == name:
                return s  # type: ignore[no-any-return]
        raise LayoutError(f"Pipeline.stage: no stage {name!r}; stages: {[s.name for s in self.stages]}")

    def trace(self) -> Trace:
        """The element-by-element movement through the stages (see :class:`Trace`)."""
        return self._tracer(self)

    def __str__(self) -> str:
        head = f"{self.arch} GEMM tile pipeline {self.M}x{self.N}x{self.K} {self.dtype} -> f32"
        return "\n".join([head] + ["  " + str(s) for s in self.stages])


# --- helpers shared by the builders ----------------------------------------------------------------
def element_name(code: int, K: int) -> str:
    """The element an owner code stands for: 'A[m, k]', 'B[k, n]', 'C cell c', or 'nothing' (-1)."""
    for name, v in (("code", code), ("K", K)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise LayoutError(f"element_name: {name}={v!r} is not an int")
    if K < 1:
        raise LayoutError(f"element_name: K={K} is not positive")
    code = int(code)
    if code < 0:
        return "nothing (a byte no stage wrote)"
    tag, e = code >> OWNER_SHIFT, code & ((1 << OWNER_SHIFT) - 1)
    if tag == TAG_A:
        return f"A[{e // K}, {e % K}]"
    if tag == TAG_B:
        return f"B[{e % K}, {e // K}]"
    return f"accumulator cell {e}"


def owner(tag: int, element: Any) -> Any:
    """The owner code ``tag << 40 | element`` (vectorised)."""
    return (np.int64(tag) << OWNER_SHIFT) | np.asarray(element, np.int64)


def shared_memory(op: str) -> np.ndarray:
    """An empty shared memory: one owner code per byte, -1 everywhere."""
    return np.full(SMEM_BYTES, -1, np.int64)


def place(smem: np.ndarray, addresses: np.ndarray, codes: np.ndarray, nbytes: int, what: str,
          notes: list) -> None:
    """Write ``codes`` at ``addresses`` (elements of ``nbytes``): every byte of an element holds its code."""
    a = np.asarray(addresses, np.int64).ravel()
    c = np.asarray(codes, np.int64).ravel()
    keep = (a >= 0) & (a + nbytes <= smem.size)
    if not keep.all():
        notes.append(f"{what}: {int((~keep).sum())} element(s) fall outside the {smem.size} B of shared memory "
                     "(the hardware faults)")
    for b in range(nbytes):
        smem[a[keep] + b] = c[keep]


def read(smem: np.ndarray, addresses: np.ndarray) -> np.ndarray:
    """The owner codes at ``addresses`` (-1 outside shared memory)."""
    a = np.asarray(addresses, np.int64)
    ok = (a >= 0) & (a < smem.size)
    out = np.full(a.shape, -1, np.int64)
    out[ok] = smem[a[ok]]
    return out


def first_mismatch(got: np.ndarray, want: np.ndarray) -> tuple | None:
    """The first index (C order) where ``got != want``, or None."""
    bad = np.asarray(got) != np.asarray(want)
    if not bad.any():
        return None
    return tuple(int(x) for x in np.unravel_index(int(np.argmax(bad.ravel())), bad.shape))


def with_defaults(op: str, knobs: dict, defaults: dict) -> dict:
    """The knobs over their defaults, or a LayoutError naming the operation and every unknown knob."""
    unknown = sorted(set(knobs) - set(defaults))
    if unknown:
        raise LayoutError(f"{op}: unknown knob(s) {unknown}; the knobs are {list(defaults)}")
    return {**defaults, **knobs}


def check_major(op: str, name: str, v: Any) -> Any:
    """``v`` read as an operand major (K or MN), or a LayoutError naming the operation and the knob."""
    from ..nvidia.common.dtypes import operand_major

    try:
        return operand_major(v)
    except (LayoutError, TypeError, AttributeError) as e:
        raise LayoutError(f"{op}: {name}={v!r} is not 'K' or 'MN'") from e


def check_int(op: str, name: str, v: Any, allowed: Any = None, *, lo: int | None = None, hi: int | None = None,
              multiple: int | None = None) -> int:
    """``v`` as an int, or a LayoutError naming the operation, the knob and the rule."""
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise LayoutError(f"{op}: {name}={v!r} is not an int")
    v = int(v)
    if allowed is not None and v not in allowed:
        raise LayoutError(f"{op}: {name}={v} is not one of {sorted(allowed)}")
    if lo is not None and v < lo:
        raise LayoutError(f"{op}: {name}={v} is below {lo}")
    if hi is not None and v > hi:
        raise LayoutError(f"{op}: {name}={v} is above {hi}")
    if multiple and v % multiple:
        raise LayoutError(f"{op}: {name}={v} is not a multiple of {multiple}")
    return v


def check_operand_knobs(op: str, kn: dict, x: str) -> str:
    """Check operand ``x``'s ('a' or 'b') shared-memory and descriptor knobs (major, swizzle, base, the descriptor
    overrides) as the Hopper and Blackwell builders share them; return its major."""
    major = check_major(op, f"{x}_major", kn[f"{x}_major"])
    check_int(op, f"swizzle_{x}", kn[f"swizzle_{x}"], (0, 32, 64, 128))
    if kn[f"desc_swizzle_{x}"] is not None:
        check_int(op, f"desc_swizzle_{x}", kn[f"desc_swizzle_{x}"], (0, 32, 64, 128))
    check_int(op, f"base_{x}", kn[f"base_{x}"], lo=0, hi=SMEM_BYTES, multiple=128)
    if kn[f"desc_base_offset_{x}"] is not None:
        check_int(op, f"desc_base_offset_{x}", kn[f"desc_base_offset_{x}"], range(8))
    for f in ("lbo", "sbo"):
        if kn[f"{f}_{x}"] is not None:
            check_int(op, f"{f}_{x}", kn[f"{f}_{x}"], lo=0, hi=(1 << 18) - 1)
    return major


def with_fields(word: int, lbo: int | None, sbo: int | None, base_offset: int | None, swizzle_code: int | None) -> int:
    """A descriptor word with LBO / SBO (bytes as the author writes them: encoded ``(x & 0x3FFFF) >> 4``),
    the 3-bit base offset and the 2-bit sm_90 swizzle code replaced where given."""
    if lbo is not None:
        word = (word & ~(0x3FFF << 16)) | (((lbo & 0x3FFFF) >> 4) << 16)
    if sbo is not None:
        word = (word & ~(0x3FFF << 32)) | (((sbo & 0x3FFFF) >> 4) << 32)
    if base_offset is not None:
        word = (word & ~(7 << 49)) | ((base_offset & 7) << 49)
    if swizzle_code is not None:
        word = (word & ~(3 << 62)) | ((swizzle_code & 3) << 62)
    return word


def bank_report(stage: str, instruction: str, addresses: list, vector_bytes: int) -> SmemAccess:
    """The bank report of warp-wide accesses (one list of lane addresses per instruction), identical
    instructions up to a shift by a multiple of 128 B analysed once."""
    from ..banks import BankReport, address_report

    cache: dict = {}
    ins = []
    for addrs in addresses:
        lo = min(a for a in addrs if a is not None)
        key = tuple(None if a is None else a - (lo - lo % 128) for a in addrs)
        if key not in cache:
            cache[key] = address_report(list(addrs), vector_bytes).instructions[0]
        ins.append(cache[key])
    return SmemAccess(stage, instruction, vector_bytes, BankReport(tuple(ins), vector_bytes, f"{stage}: {instruction}"))


# --- Hopper: TMA -> wgmma SS -> registers -> stmatrix -> TMA store ----------------------------------
#: the knobs of hopper_pipeline and their defaults (the contract with the hardware run)
HOPPER_KNOBS: dict = {
    "M": None, "N": 64, "K": 64, "dtype": "f16", "a_major": "K", "b_major": "K",
    "swizzle_a": 128, "swizzle_b": 128, "desc_swizzle_a": None, "desc_swizzle_b": None,
    "base_a": 0, "base_b": 0, "desc_base_offset_a": None, "desc_base_offset_b": None,
    "lbo_a": None, "sbo_a": None, "lbo_b": None, "sbo_b": None,
    "warpgroups": 1, "wg_rows": None, "epilogue_trans": False, "epilogue_cols": None,
    "order_a": None, "order_b": None,
}
_SW_CODE = {0: 0, 128: 1, 64: 2, 32: 3}
#: the operand types hopper_pipeline models and their bytes (8-bit: K-major, an f32 or s32 accumulator)
_OPERAND_BYTES = {"f16": 2, "bf16": 2, "e4m3": 1, "e5m2": 1, "s8": 1, "u8": 1}


def operand_tile(op: str, which: str, major: str, swizzle: int, dtype: str, shape: tuple[int, int],
                 order: Any = None) -> Any:
    """The operand's shared tile: the swizzle atom repeated over (MN, K) in CuTe's ``tile_to_shape`` ``order``
    (None / 'left': MN first; 'right': K first, as the CuTe DSL's helpers tile an MN-major operand)."""
    from ..nvidia.hopper.wgmma import tile

    if order not in (None, "left", "right"):
        raise LayoutError(f"{op}: order_{which.lower()}={order!r} is not None, 'left' (MN first) or 'right' "
                          "(K first)")
    try:
        return tile(major, swizzle, dtype, shape, order=order)
    except LayoutError as e:
        raise LayoutError(f"{op}: operand {which} ({major}-major, {swizzle} B swizzle, {shape[0]}x{shape[1]}): {e}") from e


def tma_copy(op: str, which: str, major: str, layout: Any, dtype: str, shape: tuple[int, int]) -> Any:
    from ..nvidia.hopper.tma import make_tma_copy

    mn, k = shape
    g = f"({mn},{k}):({k},1)" if major == "K" else f"({mn},{k}):(1,{mn})"
    try:
        return make_tma_copy(g, layout, dtype)
    except LayoutError as e:
        raise LayoutError(f"{op}: the TMA load of {which}: {e}") from e


def hopper_pipeline(**knobs: Any) -> Pipeline:
    """The Hopper SS GEMM tile pipeline of the contract (docs/kernels.md), one CTA, f16/bf16 in, f32 accumulate.

    TMA loads A (M x K) and B (N x K) into shared memory with ``swizzle_a`` / ``swizzle_b`` at byte offsets
    ``base_a`` / ``base_b`` from 1024-aligned addresses (the TMA swizzles absolute addresses) -> each
    warpgroup issues ``wgmma.mma_async.m64nNk16`` per k-block of 16 through one descriptor per operand ->
    the f32 accumulator in registers -> converted and written with ``stmatrix.x4`` (``.x2`` for a last
    8-column block) into a row-major C tile in shared memory -> TMA store to ``out`` (M x N, row-major).

    Knobs (all optional; the defaults build a correct pipeline): ``M`` (64 * warpgroups), ``N`` (multiple of 8,
    <= 256), ``K`` (multiple of 32 bytes), ``dtype`` ('f16' / 'bf16'; 'e4m3', 'e5m2', 's8', 'u8' K-major: the
    k-block is 32 elements), ``a_major`` / ``b_major`` ('K' / 'MN'),
    ``swizzle_a`` / ``swizzle_b`` (0, 32, 64, 128: what the TMA writes), ``desc_swizzle_a`` / ``_b`` (the
    descriptor's swizzle; None = the TMA's; the descriptors are derived for the tile of that swizzle, as an
    author who changed only one side would have them), ``base_a`` / ``base_b`` (multiples of 128),
    ``desc_base_offset_a`` / ``_b`` (None = derived: 0, the TMA's pattern starts on the aligned address below),
    ``lbo_a, sbo_a, lbo_b, sbo_b`` (bytes as written before the ``>> 4`` encoding; None = derived),
    ``warpgroups`` (1 or 2), ``wg_rows`` (the row block each warpgroup computes; the epilogue writes warpgroup
    ``w``'s accumulator to row block ``w``), ``epilogue_trans`` (``stmatrix.trans``), ``epilogue_cols`` (the
    accumulator columns the epilogue copies, a multiple of 8; None = N), ``order_a`` / ``order_b`` (how a tile
    of several swizzle atoms repeats them: None / 'left' MN first, the contract's; 'right' K first, as the
    CuTe DSL's helpers tile an MN-major operand; the TMA, the descriptors and their decoding follow it).

    >>> p = hopper_pipeline(M=128, N=64, warpgroups=2, swizzle_b=64)
    >>> print(p.stage("tma_load_b"))
    tma_load_b         B 64x64 f16 K-major, box (32, 64), SWIZZLE_64B, 2 load(s) at shared 0x4000
    """
    op = "hopper_pipeline"
    kn = with_defaults(op, knobs, HOPPER_KNOBS)
    dtype = kn["dtype"]
    if dtype not in _OPERAND_BYTES:
        raise LayoutError(f"{op}: dtype={dtype!r} is not one of {sorted(_OPERAND_BYTES)}")
    ob = _OPERAND_BYTES[dtype]
    T = 32 // ob  # elements per k-block (one wgmma's K: 32 bytes)
    W = check_int(op, "warpgroups", kn["warpgroups"], (1, 2))
    M = check_int(op, "M", 64 * W if kn["M"] is None else kn["M"], (64 * W,))
    N = check_int(op, "N", kn["N"], lo=8, hi=256, multiple=8)
    K = check_int(op, "K", kn["K"], lo=T, multiple=T)
    majors = {}
    for x in ("a", "b"):
        majors[x] = check_operand_knobs(op, kn, x)
    rows = kn["wg_rows"]
    rows = tuple(range(W)) if rows is None else rows
    if not (isinstance(rows, (tuple, list)) and len(rows) == W and all(
            isinstance(r, int) and not isinstance(r, bool) and 0 <= r < W for r in rows)):
        raise LayoutError(f"{op}: wg_rows={kn['wg_rows']!r} is not a tuple of {W} row block(s) in [0, {W})")
    rows = tuple(rows)
    if not isinstance(kn["epilogue_trans"], bool):
        raise LayoutError(f"{op}: epilogue_trans={kn['epilogue_trans']!r} is not a bool")
    cols = N if kn["epilogue_cols"] is None else check_int(op, "epilogue_cols", kn["epilogue_cols"], lo=0, hi=N,
                                                            multiple=8)
    if ob == 1 and "MN" in majors.values():
        raise LayoutError(f"{op}: an 8-bit wgmma operand is K-major (the instruction cannot transpose it)")
    kn.update(M=M, N=N, K=K, warpgroups=W, wg_rows=rows, epilogue_cols=cols, a_major=majors["a"],
              b_major=majors["b"], elem_bytes=ob)

    from ..nvidia.hopper.wgmma import k_block_descriptors

    nb = 2
    stages = [Stage("global", "global", f"A {M}x{K} and B {N}x{K} {dtype} ({majors['a']}-/{majors['b']}-major), "
                    f"out {M}x{N} {dtype} row-major", {"A": (M, K), "B": (N, K), "out": (M, N)})]
    placements = {}
    cursor = 0
    words: dict = {}
    for x, mn in (("a", M), ("b", N)):
        X = x.upper()
        sw, maj = kn[f"swizzle_{x}"], majors[x]
        lay = operand_tile(op, X, maj, sw, dtype, (mn, K), kn[f"order_{x}"])
        tma = tma_copy(op, X, maj, lay, dtype, (mn, K))
        origin = cursor
        base = origin + kn[f"base_{x}"]
        size = mn * K * ob
        cursor = -(-(base + size) // 1024) * 1024
        placements[x] = (base, tma)
        tm = tma.tensor_map
        stages.append(Stage(f"tma_load_{x}", "tma",
                            f"{X} {mn}x{K} {dtype} {maj}-major, box {tm.box_dim}, SWIZZLE_{tm.swizzle}, "
                            f"{len(tma.loads)} load(s) at shared {base:#x}",
                            {"tma": tma, "base": base, "swizzle": sw, "layout": lay}))
        # the descriptors: derived for the tile the author believes is there (the descriptor's swizzle)
        dsw = sw if kn[f"desc_swizzle_{x}"] is None else kn[f"desc_swizzle_{x}"]
        dlay = lay if dsw == sw else operand_tile(op, X, maj, dsw, dtype, (mn, K), kn[f"order_{x}"])
        instr = f"m64n{N}k{T}"
        try:
            kbs = k_block_descriptors(dlay, dtype, instr, operand=X, major=maj)
        except LayoutError as e:
            raise LayoutError(f"{op}: the wgmma descriptors of {X}: {e}") from e
        per = K // T
        grid = []
        for i in range(len(kbs) // per):
            row = []
            for kb in kbs[i * per:(i + 1) * per]:
                w = int(kb.descriptor.encode(start_address=(base + kb.offset_bytes) & 0x3FFFF))
                w = with_fields(w, kn[f"lbo_{x}"], kn[f"sbo_{x}"], kn[f"desc_base_offset_{x}"],
                                _SW_CODE[dsw])
                row.append(w)
            grid.append(tuple(row))
        words[x] = tuple(grid)
    c_base = cursor
    if c_base + M * N * nb > SMEM_BYTES:
        raise LayoutError(f"{op}: A, B and the C tile need {c_base + M * N * nb} B of shared memory, more than "
                          f"{SMEM_BYTES}")
    stages.append(Stage("tiled_mma", "mma", f"{W} warpgroup(s) x wgmma.mma_async.m64n{N}k{T}.{{f32,s32}}.{dtype}.{dtype}, "
                        f"warpgroup w computes row block {list(rows)}[w]", {"wg_rows": rows}))
    for x in ("a", "b"):
        X = x.upper()
        ws = words[x]
        first = ws[rows[0]][0] if x == "a" else ws[0][0]
        stages.append(Stage(f"wgmma_read_{x}", "operand",
                            f"{X} through {sum(len(r) for r in ws)} descriptor(s) ({majors[x]}-major), first "
                            f"{first:#018x}", {"words": ws, "major": majors[x]}))
    stages.append(Stage("accumulator", "accumulator", f"f32 registers, m64n{N}k16 D fragment, "
                        f"{N // 2} per thread, {W * 128} threads", {}))
    stages.append(Stage("epilogue_stmatrix", "epilogue",
                        f"cvt to {dtype}, stmatrix.x4{'.trans' if kn['epilogue_trans'] else ''} of columns "
                        f"[0, {cols}) into a row-major {M}x{N} C tile at shared {c_base:#x}",
                        {"base": c_base, "trans": kn["epilogue_trans"], "cols": cols}))
    stages.append(Stage("tma_store", "store", f"TMA store of the C tile (box {N}x{M}, no swizzle) to out",
                        {"base": c_base}))
    return Pipeline("sm_90a", M, N, K, dtype, kn, tuple(stages), _trace_hopper)


def _stmatrix_plan(N: int, cols: int, trans: bool) -> list:
    """The epilogue's stmatrix instructions per warp over columns [0, cols): (x4 or x2, first column, .trans);
    ``.x4`` covers 16 columns, a last block of 8 takes ``.x2``."""
    plan = []
    c = 0
    while c < cols:
        num = 4 if cols - c >= 16 else 2
        plan.append((num, c, trans))
        c += 8 * num // 2
    return plan


def _trace_hopper(p: Pipeline) -> Trace:
    return trace_hopper(p)


def trace_hopper(p: Pipeline, a_reads: Callable | None = None) -> Trace:
    """The Hopper pipeline's trace; ``a_reads(p, smem, rows) -> (got_a [W, K/16, 64, 16], StageCheck, [SmemAccess])``
    replaces the descriptor reads of A (wgmma RS: A from registers, :mod:`layoutalg.kernel.pipeline_rs`)."""
    from ..nvidia.ampere.ldmatrix import fragment as ldsm_fragment
    from ..nvidia.hopper.tma import descriptor_reads
    from ..nvidia.hopper.wgmma_fragments import fragment as wgmma_fragment
    from ..nvidia.hopper.descriptor import MatrixDescriptor

    kn = p.knobs
    M, N, K, W = p.M, p.N, p.K, kn["warpgroups"]
    rows = kn["wg_rows"]
    nb = 2  # the C tile's bytes
    ob = kn.get("elem_bytes", 2)  # the operands' bytes
    T = 32 // ob  # elements per k-block
    notes: list = []
    checks: list = []
    smem = shared_memory("hopper")
    # 1. TMA loads: element (mn, k) of each operand to the byte TmaCopy.writes says (absolute swizzle)
    for x, tag, mn in (("a", TAG_A, M), ("b", TAG_B, N)):
        st = p.stage(f"tma_load_{x}")
        wr = st.details["tma"].writes(st.details["base"])
        idx = np.arange(mn * K)
        m, k = idx % mn, idx // mn  # colexicographic over (MN, K)
        if (wr < 0).any():
            notes.append(f"tma_load_{x}: {int((wr < 0).sum())} element(s) of {x.upper()} are not written by the loads")
        place(smem, wr[wr >= 0], owner(tag, (m * K + k)[wr >= 0]), ob, f"tma_load_{x}", notes)
        checks.append(StageCheck(f"tma_load_{x}", f"{mn * K} elements of {x.upper()} written by the tensor map "
                                 "(absolute-address swizzle)", mn * K))
    # 2. tiled MMA: warpgroup w computes row block rows[w]; the epilogue writes it to row block w
    bad = [w for w in range(W) if rows[w] != w]
    first = None
    if bad:
        w = bad[0]
        first = {"stage": "tiled_mma", "location": f"warpgroup {w}",
                 "lands": f"rows {64 * rows[w]}..{64 * rows[w] + 63} of A @ B",
                 "should": f"rows {64 * w}..{64 * w + 63} (the epilogue writes warpgroup {w} to them)"}
    checks.append(StageCheck("tiled_mma", "warpgroup -> row block, against the epilogue's row block",
                             W, len(bad), first))
    # 3. operand reads: decode each word as the hardware does (PTX canonical layouts, absolute swizzle)
    J = K // T
    mm, kk = np.arange(64)[:, None], np.arange(T)[None, :]
    accesses: list = []
    if a_reads is not None:  # A from registers (wgmma RS): the caller's model of how they are filled
        got_a, check, acc_a = a_reads(p, smem, rows)
        checks.append(check)
        accesses.extend(acc_a)
    else:
        got_a = np.empty((W, J, 64, T), np.int64)
        want_a = np.empty_like(got_a)
        addr_a = np.empty_like(got_a)
        words_a = p.stage("wgmma_read_a").details["words"]
        for w in range(W):
            for j in range(J):
                word = words_a[rows[w]][j]
                a = descriptor_reads(_decodable(word, MatrixDescriptor), p.dtype, kn["a_major"], (64, T))
                addr_a[w, j] = a
                got_a[w, j] = read(smem, a)
                want_a[w, j] = owner(TAG_A, (64 * rows[w] + mm) * K + T * j + kk)
        checks.append(_operand_check("wgmma_read_a", "A", got_a, want_a, addr_a, words_a, rows, K, "warpgroup"))
    got_b = np.empty((J, N, T), np.int64)
    want_b = np.empty_like(got_b)
    addr_b = np.empty_like(got_b)
    nn = np.arange(N)[:, None]
    words_b = p.stage("wgmma_read_b").details["words"]
    for j in range(J):
        a = descriptor_reads(_decodable(words_b[0][j], MatrixDescriptor), p.dtype, kn["b_major"], (N, T))
        addr_b[j] = a
        got_b[j] = read(smem, a)
        want_b[j] = owner(TAG_B, nn * K + T * j + kk)
    checks.append(_operand_check("wgmma_read_b", "B", got_b[None], want_b[None], addr_b[None], words_b, (0,), K,
                                 None))
    # 4. accumulator cells: cell = (w * 64 + m) * N + n; products over (k-block j, k)
    cw, cm, cn = np.meshgrid(np.arange(W), np.arange(64), np.arange(N), indexing="ij")
    prod_a = got_a[cw, :, cm, :].reshape(W * 64 * N, K)  # [cells, J, 16] -> [cells, K]
    prod_b = got_b[:, cn, :].transpose(1, 2, 3, 0, 4).reshape(W * 64 * N, K)
    cell_target = np.stack([(64 * cw + cm).ravel(), cn.ravel()], axis=1)
    dfrag = wgmma_fragment(f"m64n{N}k16", "f32", "D")
    lanes = np.arange(128)[:, None]
    vals = np.arange(N // 2)[None, :]
    didx = dfrag.index(lanes, vals)  # m + 64 * n
    d_m, d_n = didx % 64, didx // 64
    checks.append(StageCheck("accumulator", f"the m64n{N}k16 D fragment: {128 * N // 2} (thread, register) "
                             "cells per warpgroup, each one (m, n) once", W * 64 * N))

    def cell_name(c: int) -> str:
        w, r = divmod(int(c), 64 * N)
        m, n = divmod(r, N)
        hit = np.argwhere((d_m == m) & (d_n == n))[0]
        t, i = int(hit[0]), int(hit[1])
        return f"warpgroup {w} thread {t} (warp {t // 32} lane {t % 32}) register d{i} = C[{64 * w + m}, {n}]"

    # 5. epilogue: stmatrix of accumulator pairs into a row-major C tile
    ep = p.stage("epilogue_stmatrix").details
    cbase, trans, cols = ep["base"], ep["trans"], ep["cols"]
    staging = np.full(M * N, -1, np.int64)  # cell code at each element of the C tile
    lane_addrs = []
    ep_first = None
    ep_bad = 0
    ep_checked = 0
    for w in range(W):
        for warp in range(4):
            for num, c0, tr in _stmatrix_plan(N, cols, trans):
                frag = ldsm_fragment(num, tr, store=True)
                L = np.arange(32)[:, None]
                V = np.arange(2 * num)[None, :]
                idx = frag.index(L, V)  # row + 8 col + 64 matrix
                mat, r, col = idx // 64, idx % 8, (idx // 8) % 8
                jr, e = V // 2, V % 2
                # the registers the epilogue puts in stmatrix register j: matrix j = (row half j % 2,
                # column block c0/8 + j // 2) of the accumulator, the D fragment's order
                q = c0 // 8 + jr // 2
                accv = 4 * q + 2 * (jr % 2) + e  # D fragment value index (matrix row half h = j % 2)
                t = 32 * warp + L
                cell_m = d_m[t, accv]
                cell_n = d_n[t, accv]
                cell = (w * 64 + cell_m) * N + cell_n
                # row addresses: lane 8*jj + rr supplies row rr of matrix jj
                jj, rr = np.arange(num)[:, None], np.arange(8)[None, :]
                srow = 64 * w + 16 * warp + 8 * (jj % 2) + rr
                scol = c0 + 8 * (jj // 2)
                rowaddr = cbase + (srow * N + scol) * nb  # [num, 8]
                lane_addrs.append([int(rowaddr[ll // 8, ll % 8]) for ll in range(8 * num)])
                addr = rowaddr[mat, r] + col * nb
                eidx = (addr - cbase) // nb
                ok = (eidx >= 0) & (eidx < M * N)
                staging[eidx[ok]] = cell[ok]
                want_r, want_c = eidx // N, eidx % N
                tgt_m, tgt_n = 64 * w + cell_m, cell_n
                wrong = (want_r != tgt_m) | (want_c != tgt_n) | ~ok
                ep_checked += wrong.size
                ep_bad += int(wrong.sum())
                if ep_first is None and wrong.any():
                    ll, vv = (int(v) for v in np.argwhere(wrong)[0])
                    ep_first = {"stage": "epilogue_stmatrix",
                                "location": (f"warpgroup {w} warp {warp} lane {ll}: stmatrix.x{num}"
                                             f"{'.trans' if tr else ''} register {vv // 2} half {vv % 2} -> shared "
                                             f"byte {int(addr[ll, vv]):#x} (C tile [{int(want_r[ll, vv])}, "
                                             f"{int(want_c[ll, vv])}])"),
                                "lands": f"C[{int(tgt_m[ll, vv])}, {int(tgt_n[ll, vv])}] "
                                         f"(accumulator d{int(accv[0, vv])})",
                                "should": f"C[{int(want_r[ll, vv])}, {int(want_c[ll, vv])}]"}
    missing = np.nonzero(staging < 0)[0]
    if len(missing):
        ep_bad += len(missing)
        if ep_first is None:
            e0 = int(missing[0])
            ep_first = {"stage": "epilogue_stmatrix",
                        "location": f"shared byte {cbase + e0 * nb:#x} (C tile [{e0 // N}, {e0 % N}])",
                        "lands": "nothing (no stmatrix writes it)", "should": f"C[{e0 // N}, {e0 % N}]"}
    checks.append(StageCheck("epilogue_stmatrix", "accumulator registers -> C tile in shared memory "
                             f"({ep_checked} writes, {M * N} places)", ep_checked, ep_bad, ep_first))
    if lane_addrs:
        accesses.append(bank_report("epilogue_stmatrix", f"stmatrix.x4{'.trans' if trans else ''}", lane_addrs, 16))
    # 6. TMA store: the row-major C tile to out
    out_cell = staging.reshape(M, N)
    checks.append(StageCheck("tma_store", f"C tile -> out, {M * N} elements (row-major, no swizzle)", M * N))
    return Trace(M, N, K, prod_a, prod_b, cell_target, out_cell, cell_name, checks, accesses, notes)


def _decodable(word: int, cls: Any) -> Any:
    """The descriptor the hardware reads from ``word``: decoded field by field (a base offset in a
    no-swizzle word is ignored, as the hardware ignores it)."""
    if (word >> 62) & 3 == 0:
        word &= ~(7 << 49)
    return cls.decode(word)


def _operand_check(stage: str, X: str, got: np.ndarray, want: np.ndarray, addr: np.ndarray, words: Any,
                   rows: Any, K: int, group: str | None) -> StageCheck:
    """The comparison of an operand read [group, k-block, mn, k] with its intended elements."""
    n = got.size
    bad = int((got != want).sum())
    first = None
    fm = first_mismatch(got, want)
    if fm is not None:
        g, j, mn, k = fm
        word = words[rows[g]][j] if group else words[0][j]
        who = f"{group} {g}, " if group else ""
        first = {"stage": stage,
                 "location": (f"{who}k-block {j} (descriptor {word:#018x}), operand element ({mn}, {k}) "
                              f"read from shared byte {int(addr[fm]):#x}"),
                 "lands": element_name(int(got[fm]), K), "should": element_name(int(want[fm]), K)}
    return StageCheck(stage, f"{n} operand elements {X} read through the descriptors (decoded as the hardware "
                      "reads them)", n, bad, first, operand=True)
