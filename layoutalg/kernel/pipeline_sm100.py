"""The Blackwell GEMM tile pipeline: TMA -> tcgen05.mma SS (cta_group 1 or 2) -> TMEM -> tcgen05.ld -> st.global.

One CTA (``cta_group=1``, M = 64 or 128) or a CTA pair (``cta_group=2``, M = 128 or 256 over both): each CTA's
TMA writes its half of A (rows ``c*M/2 ..``) and, for a pair, its half of B (columns ``c*N/2 ..``) into its
shared memory; the MMA reads both CTAs' operands through one pair of sm_100 shared-memory descriptors per
k-block of 16 (decoded field by field: :class:`~layoutalg.nvidia.blackwell.descriptor.Tcgen05Descriptor`,
then the PTX canonical layouts of ``nvidia.hopper.tma.descriptor_reads``) and the instruction descriptor
(decoded: M, N, the majors); D lands in each CTA's TMEM at ``tmem_column`` by the catalog's data-path layout
(``nvidia.blackwell.tmem_accum.accumulator_layout``); four warps load it with ``tcgen05.ld.32x32b`` (warp
``w`` reaches lane quarter ``w``) and store their rows to ``out`` with ``st.global``.

Not checked on sm_100 hardware (none was available): the descriptor's base-offset rule is the one measured
on the H100 for wgmma; the data paths are the PTX ISA's as the catalog states them.

    >>> from layoutalg.kernel.proof import prove
    >>> prove(blackwell_pipeline(cta_group=2, M=256, N=64)).ok
    True
    >>> p = prove(blackwell_pipeline(tmem_column=64, epilogue_column=0))   # the epilogue reads the wrong TMEM column
    >>> p.first_wrong["stage"], p.first_wrong["lands"]
    ('epilogue_tcgen05_ld', 'nothing (a TMEM cell the MMA did not write)')
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import LayoutError
from .pipeline import (
    SMEM_BYTES,
    TAG_A,
    TAG_B,
    Pipeline,
    Stage,
    StageCheck,
    Trace,
    operand_tile,
    tma_copy,
    check_int,
    check_operand_knobs,
    element_name,
    first_mismatch,
    owner,
    place,
    read,
    shared_memory,
    with_fields,
    with_defaults,
)

__all__ = ["blackwell_pipeline", "BLACKWELL_KNOBS"]

#: the knobs of blackwell_pipeline and their defaults (a correct pipeline)
BLACKWELL_KNOBS: dict = {
    "M": 128, "N": 64, "K": 64, "dtype": "f16", "cta_group": 1, "a_major": "K", "b_major": "K",
    "swizzle_a": 128, "swizzle_b": 128, "desc_swizzle_a": None, "desc_swizzle_b": None,
    "base_a": 0, "base_b": 0, "desc_base_offset_a": None, "desc_base_offset_b": None,
    "lbo_a": None, "sbo_a": None, "lbo_b": None, "sbo_b": None,
    "idesc_n": None, "idesc_a_major": None, "idesc_b_major": None,
    "tmem_column": 0, "epilogue_column": None, "epilogue_rows": None, "epilogue_cols": None, "peer_shift": 0,
    "a_source": "smem", "tmem_a_column": None, "mma_a_column": None, "a_store_unpacked": False,
    "order_a": None, "order_b": None, "b_dtype": None, "acc_dtype": None,
    "epilogue_atom": None, "epilogue_tiler": None, "epilogue_ld": None,
}
#: operand type -> (tcgen05.mma kind, bytes per element); the accumulator types each kind allows (the first: default)
_KIND = {"f16": ("f16", 2), "bf16": ("f16", 2), "tf32": ("tf32", 4), "e4m3": ("f8f6f4", 1), "e5m2": ("f8f6f4", 1),
         "s8": ("i8", 1), "u8": ("i8", 1)}
_ACC = {"f16": ("f32",), "tf32": ("f32",), "f8f6f4": ("f32",), "i8": ("s32",)}
_SM100_CODE = {0: 0, 128: 2, 64: 4, 32: 6}
_LD_COLS = 32  # tcgen05.ld.32x32b.x32: 32 columns per load


def blackwell_pipeline(**knobs: Any) -> Pipeline:
    """The sm_100 SS GEMM tile pipeline (see the module doc); the defaults build a correct one.

    Knobs: ``M`` (cta_group 1: 64 or 128; 2: 128 or 256, over the pair), ``N`` (multiple of 16, <= 256),
    ``K`` (multiple of 32 bytes), ``dtype`` / ``b_dtype`` (A's / B's type: f16, bf16, tf32, e4m3, e5m2 (mixed),
    s8, u8; B None = A's), ``acc_dtype`` (f32; s32 for s8/u8), ``cta_group`` (1 or 2), ``a_major`` / ``b_major``,
    ``swizzle_a`` / ``swizzle_b`` (what the TMA writes), ``desc_swizzle_*`` / ``base_*`` /
    ``desc_base_offset_*`` / ``lbo_*`` / ``sbo_*`` (as :func:`~layoutalg.kernel.pipeline.hopper_pipeline`),
    ``idesc_n`` / ``idesc_a_major`` / ``idesc_b_major`` (the instruction descriptor's fields; None = the tile's),
    ``tmem_column`` (the accumulator's TMEM column), ``epilogue_column`` (where the epilogue's loads read;
    None = tmem_column), ``epilogue_rows`` (for each of the 4 epilogue warps, the lane quarter whose rows it
    believes it holds; None = (0, 1, 2, 3), the quarter it can reach), ``epilogue_cols`` (TMEM columns the
    epilogue loads, a multiple of 32 or all; None = all of the accumulator's), ``peer_shift`` (cta_group 2:
    bytes by which the peer CTA's tiles sit later in its shared memory than the issuing CTA's, a multiple of
    128; the MMA reads both CTAs at the descriptors' one address, so anything but 0 is a bug).
    ``order_a`` / ``order_b`` (as hopper_pipeline's). ``epilogue_atom`` (a tcgen05.ld atom's CuTe name, with
    ``epilogue_tiler``, the plan's (rows, columns) tiler of one epilogue subtile): the epilogue is that atom's
    tiled copy over each subtile (the author's view of the registers), issuing ``epilogue_ld`` (None = the
    atom; read by the PTX ISA's figure of its shape); None = the 4-warp ``.32x32b`` epilogue of the knobs above.
    ``a_source='tmem'`` (UMMA TS; cta_group 1, M = 128, A K-major): A reaches TMEM from registers with
    ``tcgen05.st.32x32b`` (warp ``w`` stores rows ``32w ..``, two f16 per 32-bit column from ``tmem_a_column``;
    None = right after the accumulator; ``a_store_unpacked=True``: one per column) and the MMA reads it at
    ``mma_a_column`` (None = tmem_a_column) by the TS data path (``nvidia.blackwell.tmem_accum.umma_tmem_a``:
    lane m, column ``8j + k // 2``, half ``k % 2`` for k-block j); A's shared-memory knobs then do not apply.

    >>> print(blackwell_pipeline(cta_group=2, M=256).stage("umma"))
    umma               tcgen05.mma.cta_group::2.kind::f16, M=256 N=64 (128 rows per CTA), idesc 0x10100010
    """
    op = "blackwell_pipeline"
    kn = with_defaults(op, knobs, BLACKWELL_KNOBS)
    from ..nvidia.blackwell.descriptor import Tcgen05Descriptor
    from ..nvidia.blackwell.idesc import make_instr_desc
    from ..nvidia.blackwell.tmem_accum import accumulator_layout
    from ..nvidia.blackwell.umma_smem import k_block_descriptors

    dtype = kn["dtype"]
    b_dtype = dtype if kn["b_dtype"] is None else kn["b_dtype"]
    for name, t in (("dtype", dtype), ("b_dtype", b_dtype)):
        if t not in _KIND:
            raise LayoutError(f"{op}: {name}={t!r} is not one of {sorted(_KIND)}")
    kind, nb = _KIND[dtype]
    if _KIND[b_dtype][0] != kind or (kind != "f8f6f4" and b_dtype != dtype):
        raise LayoutError(f"{op}: A {dtype} and B {b_dtype} are not one tcgen05.mma kind's operands")
    acc_dtype = _ACC[kind][0] if kn["acc_dtype"] is None else kn["acc_dtype"]
    if acc_dtype not in _ACC[kind]:
        raise LayoutError(f"{op}: acc_dtype={acc_dtype!r}: kind::{kind} is modelled accumulating in "
                          f"{' or '.join(_ACC[kind])}")
    T = 32 // nb  # elements per k-block (one instruction's K: 32 bytes)
    G = check_int(op, "cta_group", kn["cta_group"], (1, 2))
    M = check_int(op, "M", kn["M"], (64, 128) if G == 1 else (128, 256))
    N = check_int(op, "N", kn["N"], lo=16 * G, hi=256, multiple=16)
    K = check_int(op, "K", kn["K"], lo=T, multiple=T)
    majors = {}
    for x in ("a", "b"):
        majors[x] = check_operand_knobs(op, kn, x)
        im = kn[f"idesc_{x}_major"]
        if im is not None and im not in ("K", "MN"):
            raise LayoutError(f"{op}: idesc_{x}_major={im!r} is not 'K' or 'MN'")
    Mc, Nc = M // G, N // G  # rows of A and B per CTA
    acc = accumulator_layout(Mc, N, cta_group=G)
    cols_used = int((eval_layout(acc, *np.meshgrid(np.arange(Mc), np.arange(N), indexing="ij")) & 0xFFFF).max()) + 1
    tcol = check_int(op, "tmem_column", kn["tmem_column"], lo=0, hi=512 - cols_used)
    ecol = tcol if kn["epilogue_column"] is None else check_int(op, "epilogue_column", kn["epilogue_column"],
                                                                   lo=0, hi=512 - 1)
    ecols = cols_used if kn["epilogue_cols"] is None else check_int(op, "epilogue_cols", kn["epilogue_cols"],
                                                                     lo=0, hi=cols_used)
    erows = kn["epilogue_rows"]
    erows = (0, 1, 2, 3) if erows is None else erows
    if not (isinstance(erows, (tuple, list)) and len(erows) == 4 and all(
            isinstance(r, int) and not isinstance(r, bool) and 0 <= r < 4 for r in erows)):
        raise LayoutError(f"{op}: epilogue_rows={kn['epilogue_rows']!r} is not 4 lane quarters in [0, 4)")
    shift = check_int(op, "peer_shift", kn["peer_shift"], lo=0, hi=SMEM_BYTES // 2, multiple=128)
    if shift and G == 1:
        raise LayoutError(f"{op}: peer_shift={shift} needs cta_group=2 (there is no peer CTA)")
    ts = kn["a_source"]
    if ts not in ("smem", "tmem"):
        raise LayoutError(f"{op}: a_source={ts!r} is not 'smem' or 'tmem'")
    if ts == "tmem":
        if G != 1 or M != 128 or majors["a"] != "K" or nb != 2:
            raise LayoutError(f"{op}: a_source='tmem' is modelled for cta_group 1, M = 128, K-major 16-bit A")
        acol = tcol + cols_used if kn["tmem_a_column"] is None else kn["tmem_a_column"]
        acol = check_int(op, "tmem_a_column", acol, lo=0, hi=512 - K // 2)
        mcol = acol if kn["mma_a_column"] is None else check_int(op, "mma_a_column", kn["mma_a_column"], lo=0,
                                                                  hi=512 - K // 2)
        if not isinstance(kn["a_store_unpacked"], bool):
            raise LayoutError(f"{op}: a_store_unpacked={kn['a_store_unpacked']!r} is not a bool")
        kn.update(tmem_a_column=acol, mma_a_column=mcol)
    idn = N if kn["idesc_n"] is None else check_int(op, "idesc_n", kn["idesc_n"], lo=16, hi=256, multiple=16)
    try:
        idesc = make_instr_desc(kind, dtype, b_dtype, acc_dtype, M, idn, kn["idesc_a_major"] or majors["a"],
                                kn["idesc_b_major"] or majors["b"], cta_group=G)
    except LayoutError as e:
        raise LayoutError(f"{op}: the instruction descriptor: {e}") from e
    if kn["epilogue_atom"] is not None:
        _epilogue_copy(op, kn, Mc, N, acc)
    kn.update(M=M, N=N, K=K, cta_group=G, a_major=majors["a"], b_major=majors["b"], tmem_column=tcol,
              epilogue_column=ecol, epilogue_cols=ecols, epilogue_rows=tuple(erows), idesc_n=idn, b_dtype=b_dtype,
              acc_dtype=acc_dtype, kind=kind, elem_bytes=nb)

    stages = [Stage("global", "global", f"A {M}x{K} {dtype} and B {N}x{K} {b_dtype}, out {M}x{N} {acc_dtype} row-major",
                    {"A": (M, K), "B": (N, K)})]
    words: dict = {}
    cursor = 0
    for x, mn in (("a", Mc), ("b", Nc)):
        if x == "a" and ts == "tmem":
            words["a"] = ()
            continue
        X = x.upper()
        sw, maj = kn[f"swizzle_{x}"], majors[x]
        lay = operand_tile(op, X, maj, sw, dtype, (mn, K), kn[f"order_{x}"])
        tma = tma_copy(op, X, maj, lay, dtype, (mn, K))
        base = cursor + kn[f"base_{x}"]
        cursor = -(-(base + mn * K * nb) // 1024) * 1024
        tm = tma.tensor_map
        per = f" per CTA (rows {mn} of {M if x == 'a' else N})" if G == 2 else ""
        stages.append(Stage(f"tma_load_{x}", "tma", f"{X} {mn}x{K} {dtype} {maj}-major{per}, box {tm.box_dim}, "
                            f"SWIZZLE_{tm.swizzle}, at shared {base:#x}",
                            {"tma": tma, "base": base, "rows": mn}))
        dsw = sw if kn[f"desc_swizzle_{x}"] is None else kn[f"desc_swizzle_{x}"]
        dlay = lay if dsw == sw else operand_tile(op, X, maj, dsw, dtype, (mn, K), kn[f"order_{x}"])
        try:
            kbs = k_block_descriptors(dlay, dtype, K=T, mn_block=None, major=maj)
        except LayoutError as e:
            raise LayoutError(f"{op}: the tcgen05 descriptors of {X}: {e}") from e
        row = []
        for kb in kbs:
            d = kb.descriptor
            t = Tcgen05Descriptor(start_address=(base + kb.offset_bytes) & 0x3FFFF, leading_byte_offset=d.leading_byte_offset,
                                  stride_byte_offset=d.stride_byte_offset, base_offset=d.base_offset, swizzle=dsw)
            w = with_fields(int(t.encode()), kn[f"lbo_{x}"], kn[f"sbo_{x}"], kn[f"desc_base_offset_{x}"], None)
            row.append(w)
        words[x] = tuple(row)
    stages.append(Stage("umma", "mma", f"tcgen05.mma.cta_group::{G}.kind::{kind}, M={M} N={idn} ({Mc} rows per CTA), "
                        f"idesc {idesc.word:#010x}", {"idesc": idesc.word}))
    if ts == "tmem":  # A in TMEM instead of shared memory
        how = "one f16 per column (unpacked)" if kn["a_store_unpacked"] else "two f16 per 32-bit column"
        stages.insert(1, Stage("tcgen05_st_a", "copy", f"A {M}x{K} from registers into TMEM by 4 warps x "
                               f"tcgen05.st.32x32b from column {kn['tmem_a_column']}, {how}", {}))
    for x in ("a", "b"):
        if x == "a" and ts == "tmem":
            stages.append(Stage("umma_read_a", "operand", f"A from TMEM at column {kn['mma_a_column']} (the TS data "
                                "path, packed f16)", {"words": (), "major": "K"}))
            continue
        stages.append(Stage(f"umma_read_{x}", "operand", f"{x.upper()} through {len(words[x])} sm_100 descriptor(s), "
                            f"first {words[x][0]:#018x}", {"words": words[x], "major": majors[x]}))
    stages.append(Stage("accumulator", "accumulator", f"TMEM: {Mc} rows x {N} {acc_dtype} per CTA as {acc}, from column "
                        f"{tcol} ({cols_used} columns)", {"layout": acc, "column": tcol, "columns": cols_used}))
    if kn["epilogue_atom"] is not None:
        ea, el = kn["epilogue_atom"], kn["epilogue_ld"]
        stages.append(Stage("epilogue_tcgen05_ld", "epilogue", f"4 warps x the tiled copy of {ea} over each "
                            f"epilogue subtile {kn['epilogue_tiler']}" + (f", issuing {el}" if el != ea else ""),
                            {"atom": ea, "ld": el}))
    else:
        stages.append(Stage("epilogue_tcgen05_ld", "epilogue", f"4 warps x tcgen05.ld.32x32b.x{_LD_COLS} from column "
                            f"{ecol}, {ecols} columns; warp w -> lane quarter w, rows of quarter {list(erows)}[w]",
                            {"column": ecol, "columns": ecols, "rows": tuple(erows)}))
    stages.append(Stage("st_global", "store", f"st.global of each thread's registers to out ({M}x{N} f32)", {}))
    return Pipeline("sm_100a", M, N, K, dtype, kn, tuple(stages), _trace_blackwell)


def sm90_view(word: int) -> Any:
    """The sm_100 descriptor word read field by field, as the sm_90 descriptor of the same canonical layout."""
    from ..nvidia.blackwell.descriptor import Tcgen05Descriptor
    from ..nvidia.hopper.descriptor import MatrixDescriptor

    if (word >> 61) & 7 == 0:
        word &= ~(7 << 49)  # no base offset without a swizzle
    d = Tcgen05Descriptor.decode(word)
    if d.lbo_mode or d.swizzle not in (0, 32, 64, 128):
        raise LayoutError(f"blackwell_pipeline: descriptor {word:#018x}: lbo_mode {d.lbo_mode} / swizzle "
                          f"{d.swizzle!r} are not modelled")
    return MatrixDescriptor(d.start_address, d.leading_byte_offset, d.stride_byte_offset, d.base_offset,
                            int(d.swizzle))


def _trace_blackwell(p: Pipeline) -> Trace:
    from ..nvidia.blackwell.idesc import decode as idesc_decode
    from ..nvidia.blackwell.tmem_accum import accumulator_layout
    from ..nvidia.hopper.tma import descriptor_reads

    kn = p.knobs
    M, N, K, G = p.M, p.N, p.K, kn["cta_group"]
    Mc, Nc = M // G, N // G
    notes: list = []
    checks: list = []
    smems = [shared_memory("blackwell") for _ in range(G)]
    ts = kn["a_source"] == "tmem"
    for x, tag, mn in (("a", TAG_A, Mc), ("b", TAG_B, Nc)):
        if x == "a" and ts:
            continue
        st = p.stage(f"tma_load_{x}").details
        idx = np.arange(mn * K)
        m, k = idx % mn, idx // mn
        for c in range(G):
            wr = st["tma"].writes(st["base"] + (kn["peer_shift"] if c else 0))
            place(smems[c], wr[wr >= 0], owner(tag, ((c * mn + m) * K + k)[wr >= 0]), kn["elem_bytes"],
                  f"tma_load_{x}", notes)
        checks.append(StageCheck(f"tma_load_{x}", f"{G * mn * K} elements of {x.upper()} written by the tensor map"
                                 + (" (one half per CTA)" if G == 2 else ""), G * mn * K))
    # the instruction descriptor, decoded as the MMA reads it
    word = p.stage("umma").details["idesc"]
    d = idesc_decode(word, kn["kind"], cta_group=G)
    want = {"M": M, "N": N, "a_major": kn["a_major"], "b_major": kn["b_major"]}
    got = {"M": d.m, "N": d.n, "a_major": d.a_major, "b_major": d.b_major}
    bad = [f for f in want if want[f] != got[f]]
    first = None
    if bad:
        first = {"stage": "umma", "location": f"instruction descriptor {word:#010x}, field {bad[0]}",
                 "lands": f"{bad[0]} = {got[bad[0]]}", "should": f"{bad[0]} = {want[bad[0]]}"}
    checks.append(StageCheck("umma", "the instruction descriptor's M, N and majors against the tile", 4,
                             len(bad), first))
    Ni = d.n  # the N the MMA computes
    # operand reads: CTA c reads its A rows and its B half through the same descriptor words
    T = 32 // kn["elem_bytes"]  # elements per k-block
    J = K // T
    words_a = p.stage("umma_read_a").details["words"]
    words_b = p.stage("umma_read_b").details["words"]
    Nci = Ni // G
    got_a = np.empty((G, J, Mc, T), np.int64)
    want_a = np.empty_like(got_a)
    addr_a = np.empty_like(got_a)
    got_b = np.empty((G, J, Nci, T), np.int64)
    want_b = np.empty_like(got_b)
    addr_b = np.empty_like(got_b)
    kk = np.arange(T)[None, :]
    if ts:
        ta, checks_ts, addr_a = _ts_reads(p, got_a, want_a)
        checks.extend(checks_ts)
    for c in range(G):
        for j in range(J):
            if not ts:
                a = descriptor_reads(sm90_view(words_a[j]), p.dtype, d.a_major, (Mc, T))
                addr_a[c, j], got_a[c, j] = a, read(smems[c], a)
                want_a[c, j] = owner(TAG_A, (c * Mc + np.arange(Mc)[:, None]) * K + T * j + kk)
            b = descriptor_reads(sm90_view(words_b[j]), kn["b_dtype"], d.b_major, (Nci, T))
            addr_b[c, j], got_b[c, j] = b, read(smems[c], b)
            want_b[c, j] = owner(TAG_B, (c * Nc + np.arange(Nci)[:, None]) * K + T * j + kk)
    for x, g_, w_, a_, ws in (("a", got_a, want_a, addr_a, words_a), ("b", got_b, want_b, addr_b, words_b)):
        fm = first_mismatch(g_, w_) if g_.shape == w_.shape else None
        first = None
        if fm is not None and x == "a" and ts:
            c, j, mn, k = fm
            col = int(addr_a[fm])
            first = {"stage": "umma_read_a", "location": (f"k-block {j}, operand element ({mn}, {k}) read from TMEM "
                                                          f"lane {mn} column {col >> 1} half {col & 1}"),
                     "lands": element_name(int(g_[fm]), K), "should": element_name(int(w_[fm]), K)}
        elif fm is not None:
            c, j, mn, k = fm
            first = {"stage": f"umma_read_{x}",
                     "location": (f"CTA {c}, k-block {j} (descriptor {ws[j]:#018x}), operand element ({mn}, {k}) read "
                                  f"from shared byte {int(a_[fm]):#x}"),
                     "lands": element_name(int(g_[fm]), K), "should": element_name(int(w_[fm]), K)}
        how = ("from TMEM by the TS data path" if x == "a" and ts else
               "through the sm_100 descriptors (decoded as the hardware reads them)")
        checks.append(StageCheck(f"umma_read_{x}", f"{g_.size} operand elements {x.upper()} read {how}", g_.size,
                                 int((g_ != w_).sum()), first, operand=True))
    # MMA: D_c[m, n] (n < Ni) = sum_s A_c[m, s] * B_{n // Nci}[n % Nci, s]; cells = (c, m, n) over the tile's N
    cells = G * Mc * N
    ca = got_a.transpose(0, 2, 1, 3).reshape(G, Mc, K)  # [c, m, K]
    cb = got_b.transpose(0, 2, 1, 3).reshape(G * Nci, K)  # [n, K]
    cc, cm, cn = np.meshgrid(np.arange(G), np.arange(Mc), np.arange(N), indexing="ij")
    prod_a = ca[cc, cm].reshape(cells, K)
    nn = np.minimum(cn, G * Nci - 1)
    prod_b = cb[nn].reshape(cells, K)
    computed = (cn < Ni).reshape(cells)
    prod_a[~computed] = -1
    cell_target = np.stack([(cc * Mc + cm).ravel(), cn.ravel()], axis=1)
    # TMEM: the MMA writes D_c[m, n] at the data-path layout of (Mc, Ni), from tmem_column
    tcol = kn["tmem_column"]
    tmem = np.full((G, 128, 512), -1, np.int64)
    acc = accumulator_layout(Mc, Ni, cta_group=G)
    am, an = np.meshgrid(np.arange(Mc), np.arange(Ni), indexing="ij")
    addr = eval_layout(acc, am, an)
    lane, col = addr >> 16, (addr & 0xFFFF) + tcol
    for c in range(G):
        ok = col < 512
        tmem[c, lane[ok], col[ok]] = (c * Mc + am[ok]) * N + an[ok]
    checks.append(StageCheck("accumulator", f"D ({Mc}x{Ni} per CTA) written to TMEM by the data-path layout {acc}",
                             G * Mc * Ni))
    # the epilogue: warp w loads lanes 32w..32w+31, columns ecol + [0, ecols); it believes the value at
    # (lane 32*q + t, accumulator column j) with q = rows[w] is D at the inverse of the (right) accumulator layout
    right = accumulator_layout(Mc, N, cta_group=G)
    rm, rn = np.meshgrid(np.arange(Mc), np.arange(N), indexing="ij")
    raddr = eval_layout(right, rm, rn)
    inv = np.full((128, 512), -1, np.int64)
    inv[raddr >> 16, raddr & 0xFFFF] = rm * N + rn
    ecol, ecols, erows = kn["epilogue_column"], kn["epilogue_cols"], kn["epilogue_rows"]
    out_cell = np.full((M, N), -1, np.int64)
    checked = badn = 0
    first = None
    if kn["epilogue_atom"] is not None:
        checked, badn, first = _generic_epilogue(kn, tmem, right, Mc, N, out_cell)
        G = 0  # the loop below is the 32x32b epilogue's
    t = np.arange(32)[:, None]
    jj_ = np.arange(ecols)[None, :]
    # (what the loops below do not change is computed before them, and a nested numpy expression is named first:
    # mypy checks a loop body more than once and a nested expression once per overload of the one around it)
    cols = ecol + jj_ + 0 * t
    in_tmem = cols < 512
    tmem_cols: npt.NDArray[np.int64] = np.minimum(cols, 511)
    acc_cols: npt.NDArray[np.int64] = np.minimum(jj_ + 0 * t, 511)
    for c in range(G):
        for w in range(4):
            lanes = 32 * w + t + 0 * jj_
            val = np.where(in_tmem, tmem[c, lanes, tmem_cols], -1)
            lane_rows = 32 * erows[w] + t + 0 * jj_
            meant = inv[lane_rows, acc_cols]  # local m * N + n, or -1 (not a D cell)
            keep = meant >= 0
            mo, no = c * Mc + meant // N, meant % N
            out_cell[mo[keep], no[keep]] = val[keep]
            wantc = (c * Mc + meant // N) * N + no  # the cell of D[mo, no]
            wrong = keep & (val != wantc)
            checked += int(keep.sum())
            badn += int(wrong.sum())
            if first is None and wrong.any():
                tt, jj = (int(v) for v in np.argwhere(wrong)[0])
                v = int(val[tt, jj])
                first = {"stage": "epilogue_tcgen05_ld",
                         "location": (f"CTA {c} warp {w} thread {tt} register {jj}: TMEM lane {32 * w + tt} column "
                                      f"{ecol + jj}, stored to out[{int(mo[tt, jj])}, {int(no[tt, jj])}]"),
                         "lands": ("nothing (a TMEM cell the MMA did not write)" if v < 0 else
                                   f"D[{v // N}, {v % N}]"),
                         "should": f"D[{int(mo[tt, jj])}, {int(no[tt, jj])}]"}
    G = kn["cta_group"]
    missing = np.argwhere(out_cell < 0)
    if len(missing) and first is None:
        mo, no = (int(v) for v in missing[0])
        first = {"stage": "epilogue_tcgen05_ld", "location": f"out[{mo}, {no}]",
                 "lands": "nothing (no thread loads or stores it)", "should": f"D[{mo}, {no}]"}
    badn += len(missing)
    checks.append(StageCheck("epilogue_tcgen05_ld", f"{checked} registers loaded from TMEM and stored, {M * N} "
                             "outputs", checked, badn, first))
    checks.append(StageCheck("st_global", f"{M * N} outputs stored from registers", M * N))

    def cell_name(cell: int) -> str:
        c, r = divmod(int(cell), Mc * N)
        m, n = divmod(r, N)
        a = int(acc(m, n)) if n < Ni else int(right(m, n))
        return f"CTA {c} TMEM lane {a >> 16} column {(a & 0xFFFF) + tcol} = D[{c * Mc + m}, {n}]"

    return Trace(M, N, K, prod_a, prod_b, cell_target, out_cell, cell_name, checks, [], notes)


def eval_layout(layout: Any, m: np.ndarray, n: np.ndarray) -> np.ndarray:
    """layout(m, n) for arrays of coordinates (through the layout's table)."""
    from ..layout import Layout

    M, N = layout.shape[0], layout.shape[1]
    sizes = [int(np.prod(s)) if isinstance(s, tuple) else int(s) for s in (M, N)]
    flat = Layout(layout.shape, layout.stride)
    table = np.asarray(flat.table(), np.int64) if hasattr(flat, "table") else None
    if table is None or table.size != sizes[0] * sizes[1]:
        raise LayoutError(f"blackwell_pipeline: cannot tabulate {layout}")
    return table[np.asarray(m) + sizes[0] * np.asarray(n)]  # type: ignore[no-any-return]


def _ts_reads(p: Pipeline, got_a: np.ndarray, want_a: np.ndarray) -> tuple[Any, list, np.ndarray]:
    """UMMA TS: A stored into TMEM by the epilogue-style warps, read by the MMA through the TS data path.
    Fills got_a / want_a [1, J, 128, 16]; returns (TMEM image, checks, the read half-column of each element)."""
    from ..nvidia.blackwell.tmem_accum import umma_tmem_a

    kn = p.knobs
    K, N = p.K, p.N
    J = K // 16
    # the author's tcgen05.st.32x32b: warp w, thread t holds row 32w + t; element k to column acol + k // 2,
    # half k % 2 (packed) or column acol + k (unpacked); TMEM in 16-bit halves: index 2 * column + half
    tm = np.full((128, 2 * 512), -1, np.int64)
    m, k = np.meshgrid(np.arange(128), np.arange(K), indexing="ij")
    acol = kn["tmem_a_column"]
    half = 2 * (acol + k) if kn["a_store_unpacked"] else 2 * acol + k
    ok = half < tm.shape[1]
    tm[m[ok], half[ok]] = owner(TAG_A, (m * K + k)[ok])
    # the accumulator's columns are written by the MMA itself: A read there is clobbered
    tcol, used = kn["tmem_column"], p.stage("accumulator").details["columns"]
    tm[:, 2 * tcol: 2 * (tcol + used)] = -1
    # the hardware's read, by the catalog's TS A layout: ((128, 16), 1, J) -> lane << 17 | half index
    lay = umma_tmem_a(f"SM100_MMA_F16BF16_TS<f16,f16,float,128,{N},K,K>", (128, K))
    mm, kk, jj = np.meshgrid(np.arange(128), np.arange(16), np.arange(J), indexing="ij")
    tab = np.asarray(lay.table(), np.int64)  # colexicographic over ((128, 16), 1, J)
    addr = tab[mm + 128 * kk + 128 * 16 * jj]
    lane, h = addr >> 17, (addr & 0x1FFFF) + 2 * kn["mma_a_column"]
    inside = h < tm.shape[1]
    vals = np.where(inside, tm[lane, np.minimum(h, tm.shape[1] - 1)], -1)
    got_a[0] = vals.transpose(2, 0, 1)  # [J, 128, 16]
    want_a[0] = owner(TAG_A, np.arange(128)[None, :, None] * K + 16 * np.arange(J)[:, None, None]
                      + np.arange(16)[None, None, :])
    halfcol = np.zeros_like(got_a)
    halfcol[0] = h.transpose(2, 0, 1)
    st = StageCheck("tcgen05_st_a", f"{128 * K} elements of A stored into TMEM by 4 warps (warp w: lanes 32w..)",
                    128 * K)
    return tm, [st], halfcol


def _ld_lane_col(shape: str, num: int, t: np.ndarray, r: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(lane, 32-bit column) relative to ``taddr`` of register ``r`` of thread ``t`` of one ``tcgen05.ld.<shape>``:
    the PTX ISA's data-movement figures (the table of ``nvidia.blackwell.tmem_copy``)."""
    if shape == "32x32b":
        return t, r
    if shape == "16x64b":
        return (t >> 2) + 8 * (t & 1), ((t >> 1) & 1) + 2 * r
    if shape == "16x128b":
        return (t >> 2) + 8 * (r & 1), (t & 3) + 4 * (r >> 1)
    if shape == "16x256b":
        return (t >> 2) + 8 * ((r >> 1) & 1), (r & 1) + 2 * (t & 3) + 8 * (r >> 2)
    return t & 15, r + num * (t >> 4)  # 16x32bx2, immHalfSplitoff = num


def _epilogue_copy(op: str, kn: dict, Mc: int, N: int, acc: Any) -> None:
    """The epilogue's tiled copy (the author's view: thread, register -> accumulator element of one subtile) and
    the issued tcgen05.ld (its PTX shape and .num): checked and kept in ``kn``."""
    from ..layout import Layout, make_layout
    from ..algebra import composition, complement
    from ..nvidia.blackwell.tmem_accum import epilogue_tv, make_tmem_copy
    from ..nvidia.blackwell.tmem_copy import tmem_copy_op

    tiler = kn["epilogue_tiler"]
    if not (isinstance(tiler, tuple) and len(tiler) == 2):
        raise LayoutError(f"{op}: epilogue_tiler={tiler!r} is not (rows, columns) of one epilogue subtile")
    tl = tuple(t if isinstance(t, Layout) else Layout(t) for t in tiler)
    if kn["epilogue_ld"] is None:
        kn["epilogue_ld"] = kn["epilogue_atom"]
    try:
        ops = [tmem_copy_op(kn[k]) for k in ("epilogue_atom", "epilogue_ld")]
        sub = make_layout(composition(acc[0], tl[0]), composition(acc[1], tl[1]))
        tc = make_tmem_copy(kn["epilogue_atom"], sub, kn["acc_dtype"])
    except LayoutError as e:
        raise LayoutError(f"{op}: the epilogue's tcgen05.ld: {e}") from e
    if any(o.kind != "ld" or o.pack16 for o in ops):
        raise LayoutError(f"{op}: the epilogue is modelled for unpacked tcgen05.ld of a 32-bit accumulator, not "
                          f"{kn['epilogue_atom']} / {kn['epilogue_ld']}")
    em, en = int(tl[0].size()), int(tl[1].size())
    if Mc % em or N % en:
        raise LayoutError(f"{op}: the epilogue subtile {em}x{en} does not tile the {Mc}x{N} accumulator")
    etv = epilogue_tv(tc, (em, en))  # the register side: (thread, value) -> m + em * ns
    T = int(etv[0].size())
    if T != 128:
        raise LayoutError(f"{op}: the epilogue's tiled copy has {T} threads, not 4 warps")
    tv = np.asarray(Layout(etv.shape, etv.stride).table(), np.int64).reshape(-1, T).T  # [thread, value]
    rest_n = complement(tl[1], N)
    ns = np.asarray(tl[1].table(), np.int64)
    offs = [int(x) for x in np.asarray(rest_n.table(), np.int64)]
    rest_m = [em * i for i in range(Mc // em)]
    kn["_epi"] = {"tv": tv, "ns": ns, "em": em, "offs_n": offs, "offs_m": rest_m, "regs": ops[0].registers,
                  "shape": ops[1].shape, "num": ops[1].num, "ld_regs": ops[1].registers}


def _generic_epilogue(kn: dict, tmem: np.ndarray, right: Any, Mc: int, N: int, out_cell: np.ndarray) -> tuple:
    """The epilogue by the plan's tiled copy: for each subtile, thread T (warp w = T // 32, lane t) believes its
    value v is D[m, n] (the copy's TV layout); the hardware issues the instruction once per ``regs`` values at
    ``taddr`` = the accumulator address of thread 32w's first value of that issue, and register i of thread t
    reads TMEM at ``taddr + (lane, column)(t, i)`` by the issued shape's PTX figure (warp w reaches lane
    quarter w % 4 only). Returns (checked, wrong, first wrong)."""
    e = kn["_epi"]
    tv, ns, em, V, Vh = e["tv"], e["ns"], e["em"], e["regs"], e["ld_regs"]
    G = kn["cta_group"]
    col0 = kn["epilogue_column"]
    raddr = eval_layout(right, *np.meshgrid(np.arange(Mc), np.arange(N), indexing="ij"))
    nT, nV = tv.shape
    T_ = np.arange(nT)[:, None] + 0 * np.arange(nV)[None, :]
    Vi = np.arange(nV)[None, :] + 0 * T_
    checked = bad = 0
    first = None
    # (what the loops do not change is computed before them: mypy checks a loop body more than once)
    w, t = T_ // 32, T_ % 32
    j, i = Vi // V, Vi % V
    lane_r, col_r = _ld_lane_col(e["shape"], e["num"], t, i)
    first_rows, first_cols = 32 * w, j * V
    tv_m, tv_n = tv % em, ns[tv // em]
    quarter, in_regs = w % 4, i < Vh
    for c in range(G):
        for om in e["offs_m"]:
            for on in e["offs_n"]:
                m = om + tv_m
                n = on + tv_n
                believed = raddr[m, n]  # the author's TMEM address of each (thread, value)
                taddr = believed[first_rows, first_cols]
                lane = (taddr >> 16) + lane_r
                col = (taddr & 0xFFFF) + col_r + col0
                reach = (lane >> 5) == quarter
                ok = reach & in_regs & (col < 512) & (lane < 128)
                val = np.where(ok, tmem[c, np.minimum(lane, 127), np.minimum(col, 511)], -1)
                want = (c * Mc + m) * N + n
                out_cell[c * Mc + m, n] = val
                wrong = val != want
                checked += val.size
                bad += int(wrong.sum())
                if first is None and wrong.any():
                    tt, vv = (int(x) for x in np.argwhere(wrong)[0])
                    v = int(val[tt, vv])
                    first = {"stage": "epilogue_tcgen05_ld",
                             "location": (f"CTA {c} thread {tt} value {vv}: {e['shape']} register {int(i[tt, vv])} "
                                          f"reads TMEM lane {int(lane[tt, vv])} column {int(col[tt, vv])}"
                                          + ("" if reach[tt, vv] else " (outside its warp's lane quarter)")
                                          + f", stored to out[{c * Mc + int(m[tt, vv])}, {int(n[tt, vv])}]"),
                             "lands": "nothing (no TMEM cell the MMA wrote)" if v < 0 else f"D[{v // N}, {v % N}]",
                             "should": f"D[{c * Mc + int(m[tt, vv])}, {int(n[tt, vv])}]"}
    return checked, bad, first
