"""The Ampere GEMM tile pipeline: cp.async -> shared memory -> ldmatrix -> mma.sync -> registers -> st.global.

``WM x WN`` warps tile the ``M x N`` tile; warp ``(wm, wn)`` computes rows ``wm*M/WM ..`` and columns
``wn*N/WN ..`` with ``mma.sync.m16n8k16`` atoms. A (M x K) and B (N x K, K contiguous: ``B^T`` row-major) are
copied by all threads with 16-byte ``cp.async`` into row-major shared tiles whose 16-byte chunks are swizzled
by the buffer offset (``Swizzle<B,4,3>`` on bytes: chunk bits 4.. ^= bits 7.., the author's own address
formula, so no base alignment matters); ``ldmatrix.x4`` (A) and ``.x2`` (B) fill the catalog's ``mma.sync``
fragments (lanes ``8j .. 8j+7`` give matrix ``j``'s row addresses; the lane rule of
``nvidia.ampere.ldmatrix.fragment``); the f32 accumulator (the catalog's C fragment) is stored to ``out``
with ``st.global``.

    >>> from layoutalg.kernel.proof import prove
    >>> prove(ampere_pipeline()).ok
    True
    >>> p = prove(ampere_pipeline(ldsm_swizzle_b=0))        # the swizzle changed on one side
    >>> p.first_wrong["stage"], p.first_wrong["should"]
    ('ldmatrix_b', 'B[0, 2]')
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import LayoutError
from .pipeline import (
    TAG_A,
    TAG_B,
    Pipeline,
    Stage,
    StageCheck,
    Trace,
    bank_report,
    check_int,
    element_name,
    owner,
    place,
    read,
    shared_memory,
    with_defaults,
)

__all__ = ["ampere_pipeline", "AMPERE_KNOBS"]

#: the knobs of ampere_pipeline and their defaults (a correct pipeline)
AMPERE_KNOBS: dict = {
    "M": 64, "N": 64, "K": 32, "dtype": "f16", "warps": (2, 2), "swizzle_a": 64, "swizzle_b": 64,
    "ldsm_swizzle_a": None, "ldsm_swizzle_b": None, "ldsm_trans_a": False, "ldsm_trans_b": False,
    "epilogue_warp_order": None, "epilogue_cols": None,
}

#: integer index arrays (np.arange / np.meshgrid results), typed so mypy resolves numpy's operator overloads
#: for one concrete dtype rather than for np.intp's union of bit widths
_I64 = npt.NDArray[np.int64]


def _swz(off: np.ndarray, sw: int) -> np.ndarray:
    """Swizzle<B,4,3> on byte offsets (B = log2(sw / 16)): chunk bits 4.. ^= bits 7.. ; identity for 0."""
    if sw == 0:
        return off
    bits = {32: 1, 64: 2, 128: 3}[sw]
    return off ^ (((off >> 7) & ((1 << bits) - 1)) << 4)  # type: ignore[no-any-return]


def ampere_pipeline(**knobs: Any) -> Pipeline:
    """The sm_80 GEMM tile pipeline (see the module doc); the defaults build a correct one.

    Knobs: ``M``, ``N`` (multiples of 16 * WM and 8 * WN), ``K`` (multiple of 16; rows of ``K * 2`` bytes),
    ``dtype`` ('f16' / 'bf16'), ``warps`` ((WM, WN)), ``swizzle_a`` / ``swizzle_b`` (bytes: the swizzle
    ``cp.async`` writes with, 0/32/64/128, at most the row), ``ldsm_swizzle_a`` / ``_b`` (the swizzle the
    ldmatrix addresses assume; None = the same), ``ldsm_trans_a`` / ``_b`` (``ldmatrix.trans``: wrong for
    these K-major tiles), ``epilogue_warp_order`` ('row': warp w is (w // WN, w % WN), 'col': (w % WM,
    w // WM); None = the MMA's, 'row'), ``epilogue_cols`` (columns of each warp's tile the epilogue stores,
    a multiple of 8; None = all).

    >>> print(ampere_pipeline().stage("cp_async_a"))
    cp_async_a         A 64x32 f16 by 128 threads, 16 B each, 2 instruction(s) per thread, Swizzle 64 B
    """
    op = "ampere_pipeline"
    kn = with_defaults(op, knobs, AMPERE_KNOBS)
    dtype = kn["dtype"]
    if dtype not in ("f16", "bf16"):
        raise LayoutError(f"{op}: dtype={dtype!r} is not 'f16' or 'bf16'")
    wp = kn["warps"]
    if not (isinstance(wp, (tuple, list)) and len(wp) == 2 and all(
            isinstance(v, int) and not isinstance(v, bool) and v in (1, 2, 4) for v in wp)):
        raise LayoutError(f"{op}: warps={wp!r} is not (WM, WN) with each 1, 2 or 4")
    WM, WN = wp
    M = check_int(op, "M", kn["M"], lo=16 * WM, hi=256, multiple=16 * WM)
    N = check_int(op, "N", kn["N"], lo=8 * WN, hi=256, multiple=8 * WN)
    K = check_int(op, "K", kn["K"], lo=16, hi=256, multiple=16)
    for x in ("a", "b"):
        sw = check_int(op, f"swizzle_{x}", kn[f"swizzle_{x}"], (0, 32, 64, 128))
        if sw > 2 * K:
            raise LayoutError(f"{op}: swizzle_{x}={sw} B is wider than a row of {2 * K} B")
        if kn[f"ldsm_swizzle_{x}"] is not None:
            check_int(op, f"ldsm_swizzle_{x}", kn[f"ldsm_swizzle_{x}"], (0, 32, 64, 128))
        if not isinstance(kn[f"ldsm_trans_{x}"], bool):
            raise LayoutError(f"{op}: ldsm_trans_{x}={kn[f'ldsm_trans_{x}']!r} is not a bool")
    order = kn["epilogue_warp_order"] or "row"
    if order not in ("row", "col"):
        raise LayoutError(f"{op}: epilogue_warp_order={order!r} is not 'row' or 'col'")
    TN = N // WN
    cols = TN if kn["epilogue_cols"] is None else check_int(op, "epilogue_cols", kn["epilogue_cols"], lo=0, hi=TN,
                                                            multiple=8)
    kn.update(M=M, N=N, K=K, warps=(WM, WN), epilogue_warp_order=order, epilogue_cols=cols)
    T = 32 * WM * WN
    stages = [Stage("global", "global", f"A {M}x{K}, B {N}x{K} (K contiguous) {dtype}, out {M}x{N} f32 row-major", {})]
    base = 0
    for x, mn in (("a", M), ("b", N)):
        chunks = mn * K // 8
        sw = kn[f"swizzle_{x}"]
        stages.append(Stage(f"cp_async_{x}", "copy", f"{x.upper()} {mn}x{K} {dtype} by {T} threads, 16 B each, "
                            f"{-(-chunks // T)} instruction(s) per thread, Swizzle {sw} B",
                            {"base": base, "rows": mn, "swizzle": sw}))
        base += -(-(mn * K * 2) // 1024) * 1024
    stages.append(Stage("tiled_mma", "mma", f"{WM}x{WN} warps x mma.sync.m16n8k16.f32.{dtype}.{dtype}.f32, "
                        f"warp w at tile (w // {WN}, w % {WN})", {}))
    for x in ("a", "b"):
        lsw = kn[f"swizzle_{x}"] if kn[f"ldsm_swizzle_{x}"] is None else kn[f"ldsm_swizzle_{x}"]
        num = 4 if x == "a" else 2
        tr = ".trans" if kn[f"ldsm_trans_{x}"] else ""
        stages.append(Stage(f"ldmatrix_{x}", "operand", f"ldmatrix.x{num}{tr} of {x.upper()} fragments, addresses "
                            f"with Swizzle {lsw} B", {"swizzle": lsw, "trans": bool(tr)}))
    stages.append(Stage("accumulator", "accumulator", "f32 registers, the m16n8k16 C fragment", {}))
    stages.append(Stage("epilogue_st_global", "store", f"st.global of each warp's C fragments ({cols} of {TN} "
                        f"columns per warp), warps ordered by {order}", {}))
    return Pipeline("sm_80", M, N, K, dtype, kn, tuple(stages), _trace_ampere)


def _warp_origin(w: int, WM: int, WN: int, order: str, TM: int, TN: int) -> tuple[int, int]:
    wm, wn = (w // WN, w % WN) if order == "row" else (w % WM, w // WM)
    return wm * TM, wn * TN


def _trace_ampere(p: Pipeline) -> Trace:
    from ..nvidia.ampere.ldmatrix import fragment as ldsm_fragment
    from ..nvidia.ampere.mma import fragment as mma_fragment

    kn = p.knobs
    M, N, K = p.M, p.N, p.K
    WM, WN = kn["warps"]
    nw = WM * WN
    TM, TN = M // WM, N // WN
    notes: list = []
    checks: list = []
    accesses = []
    smem = shared_memory("ampere")
    # cp.async: chunk q = i*T + t of 8 elements -> row q // (K/8), chunk q % (K/8)
    bases = {}
    for x, tag, mn in (("a", TAG_A, M), ("b", TAG_B, N)):
        st = p.stage(f"cp_async_{x}").details
        base, sw = st["base"], st["swizzle"]
        bases[x] = base
        q: _I64 = np.arange(mn * K // 8)
        row, ch = q // (K // 8), q % (K // 8)
        dst = base + _swz(row * K * 2 + ch * 16, sw)
        for e in range(8):
            place(smem, dst + 2 * e, owner(tag, row * K + 8 * ch + e), 2, f"cp_async_{x}", notes)
        lanes = [list(map(int, dst[i:i + 32])) for i in range(0, len(dst), 32)]
        accesses.append(bank_report(f"cp_async_{x}", "cp.async.cg.shared.global 16 B (shared side)", lanes, 16))
        checks.append(StageCheck(f"cp_async_{x}", f"{mn * K} elements of {x.upper()} written by {len(lanes)} warp "
                                 "instruction(s)", mn * K))
    order = kn["epilogue_warp_order"]
    bad = [w for w in range(nw) if _warp_origin(w, WM, WN, "row", TM, TN) != _warp_origin(w, WM, WN, order, TM, TN)]
    first = None
    if bad:
        w = bad[0]
        first = {"stage": "tiled_mma", "location": f"warp {w}",
                 "lands": f"tile at {_warp_origin(w, WM, WN, 'row', TM, TN)} of C",
                 "should": f"tile at {_warp_origin(w, WM, WN, order, TM, TN)} (where the epilogue stores warp {w})"}
    checks.append(StageCheck("tiled_mma", "warp -> C tile of the MMA, against the epilogue's", nw, len(bad), first))
    # ldmatrix: for each warp, m16 (n8) block and k-block, the registers and the element each should hold
    fa, fb = mma_fragment("m16n8k16", p.dtype, "A"), mma_fragment("m16n8k16", p.dtype, "B")
    ga_l, ga_v = fa.grid()  # (16, 16) rows x k -> lane, value
    gb_l, gb_v = fb.grid()  # (16, 8) k x n
    L: _I64 = np.arange(32)[:, None]
    KB = K // 16
    regs = {}
    for x, tag, num, blk, nblocks, frag in (("a", TAG_A, 4, 16, TM // 16, fa), ("b", TAG_B, 2, 8, TN // 8, fb)):
        st = p.stage(f"ldmatrix_{x}").details
        lsw, tr = st["swizzle"], st["trans"]
        lf = ldsm_fragment(num, tr)
        V: _I64 = np.arange(2 * num)[None, :]
        idx = lf.index(L, V)
        mat, r, c = idx // 64, idx % 8, (idx // 8) % 8
        ok_idx = mat < num
        got = np.full((nw, nblocks, KB, 32, 2 * num), -1, np.int64)
        want = np.full_like(got, -1)
        addr_all = np.zeros_like(got)
        laneaddr = []
        # the element (row, k) of the fragment value (lane, v), by the mma fragment (value v = 2j + e)
        fidx = frag.index(L, V)
        if x == "a":
            fr, fk = fidx % 16, fidx // 16
        else:
            fr, fk = fidx % 8, fidx // 8  # B (PTX orientation K x N): index n + 8 * k
        for w in range(nw):
            wm, wn = w // WN, w % WN
            r0 = wm * TM if x == "a" else wn * TN
            for bi in range(nblocks):
                for kb in range(KB):
                    ln: _I64 = np.arange(8 * num)
                    if x == "a":  # lane l: row l % 16, k 8 * (l // 16)
                        rr, kk = ln % 16, 8 * (ln // 16)
                    else:  # lane l: n l % 8, k 8 * (l // 8)
                        rr, kk = ln % 8, 8 * (ln // 8)
                    rowoff = ((r0 + blk * bi + rr) * K + 16 * kb + kk) * 2
                    rowaddr = bases[x] + _swz(rowoff, lsw)
                    laneaddr.append(list(map(int, rowaddr)))
                    a = rowaddr[8 * mat + r] + 2 * c
                    a = np.where(ok_idx, a, -1)
                    addr_all[w, bi, kb] = a
                    got[w, bi, kb] = read(smem, a)
                    want[w, bi, kb] = owner(tag, (r0 + blk * bi + fr) * K + 16 * kb + fk)
        regs[x] = got
        accesses.append(bank_report(f"ldmatrix_{x}", f"ldmatrix.x{num}{'.trans' if tr else ''}", laneaddr, 16))
        bad_ = got != want
        first = None
        if bad_.any():
            w, bi, kb, ll, v = (int(u) for u in np.argwhere(bad_)[0])
            first = {"stage": f"ldmatrix_{x}",
                     "location": (f"warp {w} {'m16' if x == 'a' else 'n8'} block {bi} k-block {kb}: lane {ll} "
                                  f"register {v // 2} half {v % 2}, from shared byte {int(addr_all[w, bi, kb, ll, v]):#x}"),
                     "lands": element_name(int(got[w, bi, kb, ll, v]), K),
                     "should": element_name(int(want[w, bi, kb, ll, v]), K)}
        checks.append(StageCheck(f"ldmatrix_{x}", f"{got.size} fragment values of {x.upper()} loaded by ldmatrix",
                                 got.size, int(bad_.sum()), first, operand=True))
    # mma.sync: cell (warp, mi, ni, r, c) gets sum over kb, k of A[r, k] * B[k, c] from the fragments
    MI, NI = TM // 16, TN // 8
    w_: _I64
    mi: _I64
    ni: _I64
    w_, mi, ni, r, c = np.meshgrid(np.arange(nw), np.arange(MI), np.arange(NI), np.arange(16), np.arange(8),
                                   indexing="ij")
    kk = np.arange(16)
    # prod_a[..., kb, k] = regs_a[w, mi, kb, lane(r, k), value(r, k)]
    # (the index arrays named first: mypy checks a nested numpy expression once per overload of the outer one)
    w5: _I64 = w_[..., None, None]
    r5: _I64 = r[..., None, None]
    c5: _I64 = c[..., None, None]
    kb5: _I64 = np.arange(KB)[:, None]
    lane_a: _I64 = ga_l[r5, kk]
    val_a: _I64 = ga_v[r5, kk]
    lane_b: _I64 = gb_l[kk, c5]
    val_b: _I64 = gb_v[kk, c5]
    mi5: _I64 = mi[..., None, None]
    ni5: _I64 = ni[..., None, None]
    pa = regs["a"][w5, mi5, kb5, lane_a, val_a]
    pb = regs["b"][w5, ni5, kb5, lane_b, val_b]
    cells = w_.size
    prod_a, prod_b = pa.reshape(cells, K), pb.reshape(cells, K)
    orow = np.array([_warp_origin(w, WM, WN, "row", TM, TN) for w in range(nw)])
    cell_target = np.stack([(orow[w_, 0] + 16 * mi + r).ravel(), (orow[w_, 1] + 8 * ni + c).ravel()], axis=1)
    checks.append(StageCheck("accumulator", f"{cells} accumulator values (m16n8k16 C fragments)", cells))
    # epilogue: lane, value of each C fragment -> out at the epilogue's warp origin
    fc = mma_fragment("m16n8k16", "f32", "C")
    cidx = fc.index(L, np.arange(4)[None, :])
    cr, cc = cidx % 16, cidx // 16
    out_cell = np.full((M, N), -1, np.int64)
    cols = kn["epilogue_cols"]
    eo = np.array([_warp_origin(w, WM, WN, order, TM, TN) for w in range(nw)])
    for w in range(nw):
        for a in range(MI):
            for b in range(cols // 8):
                cell = (((w * MI + a) * NI + b) * 16 + cr) * 8 + cc
                out_cell[eo[w, 0] + 16 * a + cr, eo[w, 1] + 8 * b + cc] = cell
    missing = np.argwhere(out_cell < 0)
    written = out_cell >= 0
    tgt = np.full((M, N, 2), -1, np.int64)
    tgt[written] = cell_target[out_cell[written]]
    mm, nn = np.meshgrid(np.arange(M), np.arange(N), indexing="ij")
    wrong = written & ((tgt[..., 0] != mm) | (tgt[..., 1] != nn))
    first = None
    if len(missing):
        m0, n0 = (int(v) for v in missing[0])
        first = {"stage": "epilogue_st_global", "location": f"out[{m0}, {n0}]",
                 "lands": "nothing (no thread stores it)", "should": f"C[{m0}, {n0}]"}
    elif wrong.any():
        m0, n0 = (int(v) for v in np.argwhere(wrong)[0])
        first = {"stage": "epilogue_st_global", "location": f"out[{m0}, {n0}]",
                 "lands": f"C[{int(tgt[m0, n0, 0])}, {int(tgt[m0, n0, 1])}]", "should": f"C[{m0}, {n0}]"}
    checks.append(StageCheck("epilogue_st_global", f"{M * N} outputs stored from the C fragments", M * N,
                             len(missing) + int(wrong.sum()), first))

    def cell_name(cell: int) -> str:
        w, rest = divmod(int(cell), MI * NI * 128)
        a, rest = divmod(rest, NI * 128)
        b, rest = divmod(rest, 128)
        rr, c2 = divmod(rest, 8)
        ln, v = fc.owner(rr, c2)
        return f"warp {w} m16 block {a} n8 block {b}: lane {ln} register c{v} = C[{rr}, {c2}] of the atom"

    return Trace(M, N, K, prod_a, prod_b, cell_target, out_cell, cell_name, checks, accesses, notes)
