"""The MMA path of a compiled Triton / Gluon kernel as a :class:`~layoutalg.kernel.pipeline.Pipeline`, proven.

From a ttgir module read by :func:`~layoutalg.kernel.ttgir.read_ttgir`, each MMA op gives a pipeline:

* ``ttng.warp_group_dot`` (sm_90): the operands' ``#ttg.nvmma_shared`` layouts fill shared memory (every
  element at the offset the layout gives, which is what ``local_alloc`` / async copies / TMA write); the
  ``wgmma`` descriptors Triton issues are derived from those layouts
  (:func:`~layoutalg.nvidia.hopper.wgmma.k_block_descriptors`, the derivation :func:`~layoutalg.kernel.ptx.check_ptx`
  compares with the PTX; an MN-major B narrower than its swizzle atom as the atom-wide block, each warp group's
  block starting inside it) and decoded as the hardware reads them (``descriptor_reads``); the hardware's
  ``m64nNk`` D fragment puts each product in a thread, which must be the thread ``#ttg.nvidia_mma`` says holds
  that element. RS (A in registers, a ``#ttg.dot_op`` of the accumulator: attention's P): the thread of the
  catalog's ``wgmma`` A register fragment, in the warp group holding the output, must hold each A element;
* ``ttng.tc_gen5_mma`` (sm_100): the same for the operands (sm_100 descriptors of the same canonical layouts),
  D in tensor memory by the PTX data path, which must be where ``#ttng.tensor_memory_encoding`` says, and each
  ``tmem_load`` warp must reach the TMEM lanes of the elements it receives (warp ``w``: lanes ``32*(w%4) ..``).
  TS (A in tensor memory): A placed by its encoding is read by the catalog's TS data path (``umma_tmem_a``), and
  each ``tmem_store`` of A comes from warps that reach its lanes; ``ttng.tc_gen5_mma_scaled`` (``tl.dot_scaled``)
  the same, with its scale factors proven by :mod:`~layoutalg.kernel.proof_ttgir_scaled`;
* ``tt.dot`` with ``#ttg.nvidia_mma`` version 2 (mma.sync, also Triton's int8 on sm_100): the ``#ttg.dot_op``
  layouts must hand each ``mma.sync`` (``m16n8k16`` f16 / bf16, ``m16n8k8`` tf32, ``m16n8k32`` s8) the fragment
  elements the PTX says each lane supplies (in the warp whose C fragment holds the output), and the C fragment's
  lanes must be the accumulator layout's.

What happens after the accumulator (``convert_layout``, stores) is Triton's logical data movement and is
taken as such. :func:`prove_ttgir` proves every MMA op of a kernel.

    >>> import json, os, layoutalg
    >>> root = os.path.dirname(os.path.dirname(layoutalg.__file__))
    >>> d = json.load(open(os.path.join(root, "tests", "data", "triton", "kernels.json")))
    >>> print(prove_ttgir(d["kernels"][4]["ttgir"]).title)
    proof of sm_90a 128x128x64 f16 pipeline (ttgir line 116, ttng.warp_group_dot)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import LayoutError
from .layouts import KernelLayout
from .pipeline import TAG_A, TAG_B, Pipeline, SmemAccess, Stage, StageCheck, Trace, element_name, owner, place, read, \
    shared_memory
from .proof import Proof, prove
from .ttgir import Op, TtgirModule, read_ttgir

__all__ = ["pipelines_from_ttgir", "prove_ttgir", "MMA_OPS"]

#: the MMA ops whose path is built
MMA_OPS = ("ttng.warp_group_dot", "ttng.tc_gen5_mma", "ttng.tc_gen5_mma_scaled", "tt.dot")
_PTX = {"f16": "f16", "bf16": "bf16", "f8E4M3FN": "e4m3", "f8E5M2": "e5m2", "f32": "tf32", "i8": "s8"}
#: packed fp4 (two e2m1 per byte, tc_gen5_mma_scaled's lhs/rhs = e2m1): its shared-memory data path is that of bytes
_BYTES = {"e2m1x2": "e4m3"}
#: the mma.sync instruction (and its accumulator type) of each operand type, as Triton's MMAv2 lowering picks it
_MMA_V2 = {"f16": ("m16n8k16", "f32"), "bf16": ("m16n8k16", "f32"), "tf32": ("m16n8k8", "f32"),
           "s8": ("m16n8k32", "s32")}


def _dtype(element: Any, op: Op) -> str:
    e = getattr(element, "text", element)
    if not isinstance(e, str) or e not in _PTX:
        raise LayoutError(f"ttgir line {op.line}: {op.name} operand type {e!r} is not one proven here ({', '.join(_PTX)})")
    return _PTX[e]


def _span(vecs: list, ndim: int) -> np.ndarray:
    """All XOR combinations of the basis vectors: row i = XOR of vecs[b] for the bits b of i."""
    out = np.zeros((1 << len(vecs), ndim), np.int64)
    for i, v in enumerate(vecs):
        out[1 << i: 2 << i] = out[: 1 << i] ^ np.asarray(v, np.int64)[None, :]
    return out


def _holders(kl: KernelLayout, shape: tuple) -> tuple[np.ndarray, np.ndarray]:
    """For a distributed layout: the (warp, lane) of every (register, lane, warp) index and its coordinate.
    Returns ``(coords [R, L, W, 2], unused)``."""
    b = kl.bases(shape)
    reg, lane, warp = (_span(b.get(k, []), 2) for k in ("register", "lane", "warp"))
    c = reg[:, None, None, :] ^ lane[None, :, None, :] ^ warp[None, None, :, :]
    return c, np.empty(0)


def _lane_quarters(warp: np.ndarray, tl: np.ndarray, stage: str, tensor: str, line: int) -> tuple[np.ndarray, dict | None]:
    """Whether each element's warp may touch its TMEM lane ``tl`` (a warp reaches the lane quarter ``warp % 4``),
    and the first element that may not (None when all may)."""
    reach = (tl // 32) == (warp % 4)
    if reach.all():
        return reach, None
    i, j = (int(v) for v in np.argwhere(~reach)[0])
    q = int(warp[i, j]) % 4
    return reach, {"stage": stage, "location": f"{tensor}[{i}, {j}] (ttgir line {line})",
                   "lands": f"warp {int(warp[i, j])}, which reaches TMEM lanes {32 * q}..{32 * q + 31}",
                   "should": f"a warp of lane quarter {int(tl[i, j]) // 32} (TMEM lane {int(tl[i, j])})"}


def _owner_of(kl: KernelLayout, shape: tuple, op: Op, what: str) -> tuple[np.ndarray, np.ndarray]:
    """(warp[m, n], lane[m, n]) of the thread holding each element (the first, where several do)."""
    c, _ = _holders(kl, shape)
    R, L, W = c.shape[:3]
    warp = np.full(shape, -1, np.int64)
    lane = np.full(shape, -1, np.int64)
    lane_lw = np.arange(L)[:, None] + 0 * np.arange(W)[None, :]  # [L, W]: the lane, the warp of each holder
    warp_lw = np.arange(W)[None, :] + 0 * np.arange(L)[:, None]
    for r in range(R - 1, -1, -1):  # the lowest register index wins (written last)
        cc = c[r]  # [L, W, 2]
        lane[cc[..., 0], cc[..., 1]] = lane_lw
        warp[cc[..., 0], cc[..., 1]] = warp_lw
    if (warp < 0).any():
        raise LayoutError(f"ttgir line {op.line}: the {what} layout {kl.name} does not cover the {shape} tile")
    return warp, lane


def _holds(kl: KernelLayout, shape: tuple) -> np.ndarray:
    """holds[d0, d1, warp, lane]: that thread holds the element (a layout may replicate elements)."""
    c, _ = _holders(kl, shape)
    R, L, W = c.shape[:3]
    h = np.zeros(tuple(shape) + (W, L), bool)
    lanes = np.broadcast_to(np.arange(L)[None, :, None], (R, L, W))
    warps = np.broadcast_to(np.arange(W)[None, None, :], (R, L, W))
    h[c[..., 0], c[..., 1], warps, lanes] = True
    return h


def _shared_image(kl: KernelLayout, shape: tuple, nb: int, base: int, tag: int, smem: np.ndarray, K: int,
                  transpose: bool, notes: list) -> None:
    """Every element of a shared tile at base + nb * offset (the layout's offset -> coordinate bases)."""
    b = kl.bases(shape)
    co = _span(b["offset"], 2)
    d0, d1 = co[:, 0], co[:, 1]
    mn, k = (d1, d0) if transpose else (d0, d1)  # A: (m, k); B: (k, n)
    place(smem, base + nb * np.arange(len(co)), owner(tag, mn * K + k), nb, f"shared {kl.name}", notes)


def _swap(layout: Any) -> Any:
    from ..composed import ComposedLayout
    from ..layout import Layout

    inner: Any = layout.inner if isinstance(layout, ComposedLayout) else layout
    sw = Layout((inner.shape[1], inner.shape[0]), (inner.stride[1], inner.stride[0]))
    return ComposedLayout(layout.outer, layout.offset, sw) if isinstance(layout, ComposedLayout) else sw


def _shared_of(t: Any) -> KernelLayout | None:
    enc = t.encoding
    return enc if t.kind == "memdesc" and isinstance(enc, KernelLayout) and enc.memory == "shared" else None


class _KB:
    """One (MN block, k-block) descriptor, as the sm_90 view of its word."""

    def __init__(self, mn_block: int, k_block: int, descriptor: Any):
        self.mn_block, self.k_block, self.descriptor = mn_block, k_block, descriptor


def _wgmma_blocks(op: Op, kl: KernelLayout, layout: Any, dtype: str, mnb: int, ki: int, which: str,
                  major: str) -> list:
    """The sm_90 descriptors of every (MN block, k-block) of one shared operand. An MN-major B whose instruction
    N (a warp group's share) is narrower than its swizzle atom (N = 32 of f16 in a 128B swizzle: the case
    :func:`~layoutalg.kernel.ptx.check_ptx` accepts) is derived as the atom-wide block, and each narrower block
    starts inside it (its start address advanced by the block's bytes; the hardware applies the swizzle to the
    absolute address, and reads no second MN atom, so the LBO is not used)."""
    from ..nvidia.hopper.wgmma import k_block_descriptors

    try:
        return [_KB(kb.mn_block, kb.k_block, kb.descriptor)
                for kb in k_block_descriptors(layout, dtype, f"m64n{mnb}k{ki}", operand="B", major=major)]
    except LayoutError:
        sw = int(kl.params.get("swizzlingByteWidth", 0))
        atom = sw // _nb(dtype)  # elements of one swizzle row
        if which != "B" or major != "MN" or not sw or mnb >= atom or atom % mnb:
            raise
    sub = atom // mnb
    out: list = []
    for kb in k_block_descriptors(layout, dtype, f"m64n{atom}k{ki}", operand="B", major=major):
        d = kb.descriptor
        out.extend(_KB(kb.mn_block * sub + s, kb.k_block, d.with_start(d.start_address + s * mnb * _nb(dtype)))
                   for s in range(sub))
    return out


def _operand_reads(op: Op, which: str, t: Any, dtype: str, mnb: int, ki: int, base: int, smem: np.ndarray,
                   K: int, sm100: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray, list, str]:
    """(got, want, addresses [blocks, kblocks, mnb, ki], words, major) of one shared operand."""
    from ..nvidia.hopper.tma import descriptor_reads

    dtype = _BYTES.get(dtype, dtype)
    kl = _shared_of(t)
    if kl is None or kl.attribute != "ttg.nvmma_shared":
        raise LayoutError(f"ttgir line {op.line}: operand {which} of {op.name} is not in an #ttg.nvmma_shared layout")
    shape = tuple(t.shape[-2:])
    layout = kl.layout(shape)
    tr = bool(kl.params.get("transposed", False))
    major = ("MN" if tr else "K") if which == "A" else ("K" if tr else "MN")
    if which == "B":
        layout = _swap(layout)
    MN = shape[0] if which == "A" else shape[1]
    if sm100:  # tcgen05 (8-bit MN-major operands too): the sm_100 derivation, read as the same canonical layouts
        from ..nvidia.blackwell.umma_smem import k_block_descriptors as umma_k_blocks
        from .pipeline_sm100 import sm90_view

        if MN != mnb:
            raise LayoutError(f"ttgir line {op.line}: operand {which} has {MN} rows for an instruction block of {mnb}")
        kbs = [_KB(kb.mn_block, kb.k_block, sm90_view(int(kb.descriptor.encode())))
               for kb in umma_k_blocks(layout, dtype, K=ki, mn_block=None, major=major)]
    else:
        kbs = _wgmma_blocks(op, kl, layout, dtype, mnb, ki, which, major)
    nblk, nk = MN // mnb, K // ki
    got = np.empty((nblk, nk, mnb, ki), np.int64)
    want = np.empty_like(got)
    addr = np.empty_like(got)
    words = []
    tag = TAG_A if which == "A" else TAG_B
    rr, kk = np.arange(mnb)[:, None], np.arange(ki)[None, :]
    for kb in kbs:
        d = kb.descriptor.with_start(kb.descriptor.start_address + base)
        words.append(int(d.encode()))
        a = descriptor_reads(d, dtype, major, (mnb, ki))
        i, j = kb.mn_block, kb.k_block
        addr[i, j], got[i, j] = a, read(smem, a)
        want[i, j] = owner(tag, (i * mnb + rr) * K + j * ki + kk)
    return got, want, addr, words, major


def _operand_check(stage: str, X: str, got: np.ndarray, want: np.ndarray, addr: np.ndarray, words: list,
                   nk: int, K: int) -> StageCheck:
    first = None
    bad = got != want
    if bad.any():
        i, j, mn, k = (int(v) for v in np.argwhere(bad)[0])
        first = {"stage": stage, "location": (f"block {i}, k-block {j} (descriptor {words[i * nk + j]:#018x}), operand "
                                              f"element ({mn}, {k}) read from shared byte {int(addr[i, j, mn, k]):#x}"),
                 "lands": element_name(int(got[i, j, mn, k]), K), "should": element_name(int(want[i, j, mn, k]), K)}
    return StageCheck(stage, f"{got.size} operand elements {X} read through the descriptors derived from the layout "
                      "(decoded as the hardware reads them)", got.size, int(bad.sum()), first, operand=True)


def _trace_descriptors(p: Pipeline, arch: str) -> Trace:
    """sm_90 / sm_100: shared operands read through descriptors; products land per the MMA's D placement."""
    from ..nvidia.hopper.wgmma_fragments import fragment as wgmma_fragment

    kn = p.knobs
    op: Op = kn["op"]
    M, N, K, dtype = p.M, p.N, p.K, p.dtype
    nb = _nb(dtype)
    ki = 32 // nb
    notes: list = []
    checks: list = []
    smem = shared_memory("ttgir")
    a, b = op.operands[0], op.operands[1]
    base_b = -(-(M * K * nb) // 1024) * 1024
    sa, sb = _shared_of(a), _shared_of(b)
    source = "SS" if sa is not None else _a_source(a, arch)
    if sb is None or source is None:
        raise LayoutError(f"ttgir line {op.line}: {op.name} has an operand outside shared memory (modelled: A and B in "
                          "shared memory, A in registers for warp_group_dot, A in tensor memory for tc_gen5_mma)")
    if sa is not None:
        _shared_image(sa, tuple(a.shape[-2:]), nb, 0, TAG_A, smem, K, False, notes)
        checks.append(StageCheck("shared_a", f"{M * K} elements of A placed by {sa.name}", M * K))
    _shared_image(sb, tuple(b.shape[-2:]), nb, base_b, TAG_B, smem, K, True, notes)
    checks.append(StageCheck("shared_b", f"{N * K} elements of B placed by {sb.name}", N * K))
    mb, nbk = kn["mblock"], kn["nblock"]
    sm100 = arch == "sm_100a"
    m, n = np.meshgrid(np.arange(M), np.arange(N), indexing="ij")
    nk = K // ki
    if arch == "sm_90a":
        acc = kn["acc"]
        warp, lane = _owner_of(acc.encoding, (M, N), op, "accumulator")
    if source == "SS":
        ga, wa, aa, words_a, maj_a = _operand_reads(op, "A", a, dtype, mb, ki, 0, smem, K, sm100)
        checks.append(_operand_check(f"{kn['prefix']}_read_a", "A", ga, wa, aa, words_a, nk, K))
        prod_a = ga[m // mb, :, m % mb, :].reshape(M * N, K)
    elif source == "RS":
        prod_a, rs_check = _rs_operand(op, a, dtype, M, N, K, nbk, ki, warp)
        checks.append(rs_check)
    else:
        ts_checks, ga = _ts_operand(kn["module"], op, a, dtype, M, K, mb, nbk, ki)
        checks.extend(ts_checks)
        prod_a = ga[m // mb, :, m % mb, :].reshape(M * N, K)
    gb, wb, ab, words_b, maj_b = _operand_reads(op, "B", b, dtype, nbk, ki, base_b, smem, K, sm100)
    checks.append(_operand_check(f"{kn['prefix']}_read_b", "B", gb, wb, ab, words_b, nk, K))
    # products of cell (m, n): A block m // mb row m % mb, B block n // nbk row n % nbk, over (k-block, k)
    prod_b = gb[n // nbk, :, n % nbk, :].reshape(M * N, K)
    if op.name == "ttng.tc_gen5_mma_scaled":  # a product scaled by another block's factor is wrong
        from .proof_ttgir_scaled import scale_checks

        per = 2 if dtype == "e2m1x2" else 1  # K elements per byte
        sc, ok_a, ok_b = scale_checks(kn["module"], op, M, N, K * per)
        checks.extend(sc)
        ka = np.asarray(np.asarray(ok_a).reshape(M, K, per).all(axis=2))
        kb_ = np.asarray(np.asarray(ok_b).reshape(N, K, per).all(axis=2))
        prod_a = np.where(ka[m.ravel()], prod_a, -1)
        prod_b = np.where(kb_[n.ravel()], prod_b, -1)
        if per == 2:
            notes.append("e2m1 operands: each byte (two fp4 along K, in the same nibble order in A and B) "
                         "is proven as one element; K counts bytes")
    cell_target = np.stack([m.ravel(), n.ravel()], axis=1)
    ok = np.ones((M, N), bool)
    first = None
    if arch == "sm_90a":
        f = wgmma_fragment(f"m64n{nbk}k{ki}", "f32", "D")
        fl, _ = f.grid()  # (64, nbk) -> lane in the warpgroup (0..127)
        hw_lane = fl[m % 64, n % nbk]
        group = warp // 4
        same_group = np.array([[len(set(group[i * 64:(i + 1) * 64, j * nbk:(j + 1) * nbk].ravel())) == 1
                                for j in range(N // nbk)] for i in range(M // 64)])
        ok = (warp % 4 == hw_lane // 32) & (lane == hw_lane % 32) & same_group[m // 64, n // nbk]
        what = f"{acc.encoding.name}: the thread of each of the {M}x{N} elements against the m64n{nbk} D fragment"
        if not ok.all():
            i, j = (int(v) for v in np.argwhere(~ok)[0])
            first = {"stage": "accumulator", "location": f"C[{i}, {j}]",
                     "lands": f"warp {int(warp[i, j])} lane {int(lane[i, j])} (the layout)",
                     "should": f"warp {4 * int(group[i, j]) + int(hw_lane[i, j]) // 32} lane {int(hw_lane[i, j]) % 32} "
                               "(where wgmma puts it)"}
        checks.append(StageCheck("accumulator", what, M * N, int((~ok).sum()), first))
    else:
        from ..nvidia.blackwell.tmem_accum import accumulator_layout

        d = op.operands[2]
        tb = d.encoding.bases((M, N))
        rows = _span(tb.get("row", []), 2)
        cols = _span(tb.get("col", []), 2)
        tl = np.full((M, N), -1, np.int64)
        tc = np.full((M, N), -1, np.int64)
        c = (rows[:, None, :] ^ cols[None, :, :]).reshape(-1, 2)
        best = np.full(M * N, len(rows) * len(cols), np.int64)  # the lowest (row, col) holding each element
        element = c[:, 0] * N + c[:, 1]  # (named first: mypy checks a nested numpy argument once per overload)
        np.minimum.at(best, element, np.arange(len(c)))
        held = best < len(c)
        tl.ravel()[held], tc.ravel()[held] = np.divmod(best[held], len(cols))
        hw = accumulator_layout(mb, nbk)
        from .pipeline_sm100 import eval_layout

        hw_addr = eval_layout(hw, m % mb, n % nbk)
        hl = hw_addr >> 16
        hc = (hw_addr & 0xFFFF) + (n // nbk) * nbk + (m // mb) * 0
        ok = (tl == hl) & (tc == hc)
        if not ok.all():
            i, j = (int(v) for v in np.argwhere(~ok)[0])
            first = {"stage": "accumulator", "location": f"D[{i}, {j}]",
                     "lands": f"TMEM lane {int(tl[i, j])} column {int(tc[i, j])} (the encoding)",
                     "should": f"TMEM lane {int(hl[i, j])} column {int(hc[i, j])} (the tcgen05 data path)"}
        checks.append(StageCheck("accumulator", f"{d.encoding.name}: the TMEM cell of each element against the "
                                 f"M={mb} data path", M * N, int((~ok).sum()), first))
        ld = kn.get("tmem_load")
        if ld is not None:
            warp, lane = _owner_of(ld.result_types[0].encoding, (M, N), ld, "tmem_load")
            reach, first2 = _lane_quarters(warp, tl, "epilogue_tmem_load", "D", ld.line)
            ok &= reach
            checks.append(StageCheck("epilogue_tmem_load", f"tcgen05.ld of line {ld.line}: every warp reads its "
                                     "lane quarter", M * N, int((~reach).sum()), first2))
        else:
            notes.append("no tmem_load of the accumulator found: the epilogue is not checked")
    out_cell = np.where(ok, m * N + n, -1)
    return Trace(M, N, K, prod_a, prod_b, cell_target, out_cell, lambda cc: f"D[{cc // N}, {cc % N}]", checks, [],
                 notes)


def _a_source(a: Any, arch: str) -> str | None:
    """'RS' (A a register tensor in a #ttg.dot_op layout, for wgmma), 'TS' (A in tensor memory, for tcgen05.mma),
    or None."""
    enc = a.encoding
    if not isinstance(enc, KernelLayout):
        return None
    if arch == "sm_90a" and a.kind == "tensor" and enc.attribute == "ttg.dot_op":
        return "RS"
    if arch == "sm_100a" and a.kind == "memdesc" and enc.attribute == "ttng.tensor_memory_encoding":
        return "TS"
    return None


def _rs_operand(op: Op, a: Any, dtype: str, M: int, N: int, K: int, nbk: int, ki: int,
                warp: np.ndarray) -> tuple[np.ndarray, StageCheck]:
    """wgmma RS: the warp group computing output (m, n) (its accumulator's warps) supplies A[m, k] from the
    thread the catalog's m64nNk A register fragment names, which must hold it in the #ttg.dot_op layout."""
    from ..nvidia.hopper.wgmma_fragments import fragment as wgmma_fragment

    tl, _ = wgmma_fragment(f"m64n{nbk}k{ki}", dtype, "A").grid()  # (64, ki) -> thread of the warp group
    ha = _holds(a.encoding, (M, K))  # [m, k, warp, lane]
    m, n, k = np.meshgrid(np.arange(M), np.arange(N), np.arange(K), indexing="ij")
    t = tl[m % 64, k % ki]
    w = 4 * (warp // 4)[:, :, None] + t // 32
    ok = ha[m, k, w, t % 32]
    first = None
    if not ok.all():
        i, j, kk = (int(v) for v in np.argwhere(~ok)[0])
        first = {"stage": "wgmma_regs_a", "location": (f"warp {int(w[i, j, kk])} lane {int(t[i, j, kk]) % 32} "
                                                       f"(thread {int(t[i, j, kk])} of the A fragment), for D[{i}, {j}]"),
                 "lands": f"not A[{i}, {kk}] (the layout puts it elsewhere)", "should": f"A[{i}, {kk}]"}
    prod = np.where(ok, owner(TAG_A, m * K + k), -1).reshape(M * N, K)
    check = StageCheck("wgmma_regs_a", f"{a.encoding.name}: the thread of every A element the m64n{nbk}k{ki} A "
                       "fragment of its warp group needs", ok.size, int((~ok).sum()), first, operand=True)
    return prod, check


#: tcgen05.mma families and CuTe type spellings of the proven operand types
_UMMA_FAMILY = {"f16": "F16BF16", "bf16": "F16BF16", "tf32": "TF32", "s8": "S8", "e4m3": "F8F6F4", "e5m2": "F8F6F4"}


def _cells(kl: KernelLayout, shape: tuple) -> tuple[np.ndarray, np.ndarray]:
    """(row, col) of each element of a tensor-memory layout: the lowest (row, col) index holding it; -1 if none."""
    M, N = shape
    tb = kl.bases(shape)
    rows = _span(tb.get("row", []), 2)
    cols = _span(tb.get("col", []), 2)
    c = (rows[:, None, :] ^ cols[None, :, :]).reshape(-1, 2)
    best = np.full(M * N, len(c), np.int64)
    np.minimum.at(best, c[:, 0] * N + c[:, 1], np.arange(len(c)))
    tl = np.full(M * N, -1, np.int64)
    tc = np.full(M * N, -1, np.int64)
    held = best < len(c)
    tl[held], tc[held] = np.divmod(best[held], len(cols))
    return tl.reshape(M, N), tc.reshape(M, N)


def _ts_operand(module: TtgirModule, op: Op, a: Any, dtype: str, M: int, K: int, mb: int, nbk: int,
                ki: int) -> tuple[list, np.ndarray]:
    """tcgen05.mma TS: A placed in tensor memory by its #ttng.tensor_memory_encoding (row = TMEM lane, col = the
    element slot of the width of A's type: packed two 16-bit per 32-bit column), read by the catalog's TS data path
    (``umma_tmem_a``, CuTe's make_fragment_A of the _TS atom) from the allocation's start, k-block after k-block;
    each ``tmem_store`` of A must come from warps that reach the TMEM lanes of the elements they hold."""
    from ..nvidia.blackwell.tmem_accum import dp, umma_tmem_a

    enc = a.encoding
    if mb != 128:
        raise LayoutError(f"ttgir line {op.line}: A in tensor memory with M = {mb} is not proven here (M = 128)")
    bits = 8 * _nb(dtype)
    tl, tc = _cells(enc, (M, K))
    if (tl < 0).any():
        raise LayoutError(f"ttgir line {op.line}: the tensor-memory layout {enc.name} of A does not cover {M}x{K}")
    slots = int(tc.max()) + 1
    image = np.full((128, max(slots, 1)), -1, np.int64)
    mm, kk = np.meshgrid(np.arange(M), np.arange(K), indexing="ij")
    image[tl, tc] = owner(TAG_A, mm * K + kk)
    checks = [StageCheck("tmem_a", f"{M * K} elements of A placed in tensor memory by {enc.name}", M * K)]
    fam = _UMMA_FAMILY[dtype]
    lay = umma_tmem_a(f"SM100_MMA_{fam}_TS<{dtype},{dtype},{'int32_t' if dtype == 's8' else 'float'},{mb},{nbk},K,K>",
                      (mb, K))
    J = K // ki
    r, c, j = np.meshgrid(np.arange(mb), np.arange(ki), np.arange(J), indexing="ij")
    addr = np.asarray(lay.table(), np.int64)[r + mb * c + mb * ki * j]  # colexicographic over ((mb, ki), 1, J)
    lane, slot = addr // dp(bits), addr % dp(bits)
    inside = slot < image.shape[1]
    got = np.where(inside, image[lane, np.minimum(slot, image.shape[1] - 1)], -1).transpose(2, 0, 1)  # [J, mb, ki]
    want = owner(TAG_A, r.transpose(2, 0, 1) * K + ki * j.transpose(2, 0, 1) + c.transpose(2, 0, 1))
    bad = got != want
    first = None
    if bad.any():
        jj, i, k = (int(v) for v in np.argwhere(bad)[0])
        ln, sl = int(lane[i, k, jj]), int(slot[i, k, jj])
        first = {"stage": "umma_tmem_read_a", "location": (f"k-block {jj}, operand element ({i}, {k}) read from TMEM "
                                                           f"lane {ln} column {sl * bits // 32} ({bits}-bit slot {sl})"),
                 "lands": element_name(int(got[jj, i, k]), K), "should": element_name(int(want[jj, i, k]), K)}
    checks.append(StageCheck("umma_tmem_read_a", f"{got.size} A elements read from tensor memory by the TS data path",
                             got.size, int(bad.sum()), first, operand=True))
    stores = [o for o in module.ops if o.name == "ttng.tmem_store" and len(o.types) > 1 and o.types[-1].text == a.text]
    if not stores:
        checks.append(StageCheck("tmem_store_a", "no tmem_store of A found: how A reached tensor memory is not checked",
                                 0))
    for st in stores:
        src = st.types[0].encoding
        if not isinstance(src, KernelLayout) or src.memory != "registers":
            continue
        warp, _ = _owner_of(src, (M, K), st, "tmem_store")
        reach, first2 = _lane_quarters(warp, tl, "tmem_store_a", "A", st.line)
        if first2 is not None:
            got[:, :, :] = np.where(reach[r.transpose(2, 0, 1), (ki * j + c).transpose(2, 0, 1)], got, -1)
        checks.append(StageCheck("tmem_store_a", f"tcgen05.st of line {st.line}: every warp writes its lane quarter",
                                 M * K, int((~reach).sum()), first2))
    return checks, got[None]


def _trace_mma_v2(p: Pipeline) -> Trace:
    """sm_80: the dot operand layouts against the mma.sync fragments, in the warp that holds the output."""
    from ..nvidia.ampere.mma import fragment as mma_fragment

    kn = p.knobs
    op: Op = kn["op"]
    M, N, K, dtype = p.M, p.N, p.K, p.dtype
    a, b = op.operands[0], op.operands[1]
    c = op.result_types[0] if op.result_types else op.operands[2]
    checks: list = []
    wc, lc = _owner_of(c.encoding, (M, N), op, "accumulator")
    shape, ctype = _MMA_V2[dtype]
    ki = int(shape.split("k")[1])
    fa, fb = (mma_fragment(shape, dtype, o) for o in ("A", "B"))
    fc = mma_fragment(shape, dtype, "C", ctype=ctype)
    la, _ = fa.grid()   # (16, ki) row x k
    lb, _ = fb.grid()   # (ki, 8) k x n
    lcc, _ = fc.grid()  # (16, 8)
    m, n = np.meshgrid(np.arange(M), np.arange(N), indexing="ij")
    okc = lc == lcc[m % 16, n % 8]
    first = None
    if not okc.all():
        i, j = (int(v) for v in np.argwhere(~okc)[0])
        first = {"stage": "accumulator", "location": f"C[{i}, {j}]", "lands": f"lane {int(lc[i, j])} (the layout)",
                 "should": f"lane {int(lcc[i % 16, j % 8])} (the {shape} C fragment)"}
    acc_check = StageCheck("accumulator", f"{c.encoding.name}: each element's lane against the C fragment", M * N,
                           int((~okc).sum()), first)
    ha = _holds(a.encoding, (M, K))  # [m, k, warp, lane]
    hb = _holds(b.encoding, (K, N))  # [k, n, warp, lane]
    k = np.arange(K)
    # the warp of output (m, n) needs A[m, k] in lane la[m%16, k%16] and B[k, n] in lane lb[k%16, n%8]
    wa_ = wc[:, :, None]
    ok_a = ha[m[:, :, None], k[None, None, :], wa_, la[(m % 16)[:, :, None], (k % ki)[None, None, :]]]
    ok_b = hb[k[None, None, :], n[:, :, None], wa_, lb[(k % ki)[None, None, :], (n % 8)[:, :, None]]]
    prod_a = np.where(ok_a, owner(TAG_A, m[:, :, None] * K + k), -1).reshape(M * N, K)
    prod_b = np.where(ok_b, owner(TAG_B, n[:, :, None] * K + k), -1).reshape(M * N, K)
    for X, okx, lay in (("A", ok_a, a.encoding), ("B", ok_b, b.encoding)):
        first = None
        if not okx.all():
            i, j, kk = (int(v) for v in np.argwhere(~okx)[0])
            lanex = la[i % 16, kk % ki] if X == "A" else lb[kk % ki, j % 8]
            el = f"A[{i}, {kk}]" if X == "A" else f"B[{kk}, {j}]"
            first = {"stage": f"dot_operand_{X.lower()}", "location": f"warp {int(wc[i, j])} lane {int(lanex)}, for C[{i}, {j}]",
                     "lands": f"not {el} (the layout puts it elsewhere)", "should": el}
        checks.append(StageCheck(f"dot_operand_{X.lower()}", f"{lay.name}: the lane of every {X} element each "
                                 "mma.sync needs", okx.size, int((~okx).sum()), first, operand=True))
    checks.append(acc_check)
    out_cell = np.where(okc, m * N + n, -1).astype(np.int64)
    cell_target = np.stack([m.ravel(), n.ravel()], axis=1)
    return Trace(M, N, K, prod_a, prod_b, cell_target, out_cell, lambda cc: f"C[{cc // N}, {cc % N}]", checks, [], [])


def _pipeline(module: TtgirModule, op: Op) -> Pipeline:
    a, b = op.operands[0], op.operands[1]
    M, K = (int(x) for x in a.shape[-2:])
    N = int(b.shape[-1])
    dtype = _dtype(a.element, op)
    where = f"ttgir line {op.line}, {op.name}"
    if op.name == "ttng.warp_group_dot":
        acc = op.result_types[0] if op.result_types else op.operands[2]
        mma = acc.encoding
        if not isinstance(mma, KernelLayout) or mma.attribute != "ttg.nvidia_mma":
            raise LayoutError(f"{where}: the accumulator has no #ttg.nvidia_mma layout")
        n_instr = int(mma.params["instrShape"][1])
        kn = {"op": op, "acc": acc, "mblock": 64, "nblock": n_instr, "prefix": "wgmma", "where": where}
        sa, sb = _shared_of(a), _shared_of(b)
        stages: tuple = (Stage("shared_a", "smem", f"A {M}x{K} {dtype} in {sa.name if sa else '?'}"),
                         Stage("shared_b", "smem", f"B {K}x{N} {dtype} in {sb.name if sb else '?'}"),
                  Stage("wgmma", "mma", f"wgmma.mma_async.m64n{n_instr}k{32 // _nb(dtype)} ({mma.name})"),
                  Stage("accumulator", "accumulator", f"registers, {mma.name}"))
        return Pipeline("sm_90a", M, N, K, dtype, kn, stages, lambda p: _trace_descriptors(p, "sm_90a"))
    if op.name in ("ttng.tc_gen5_mma", "ttng.tc_gen5_mma_scaled"):
        if op.name == "ttng.tc_gen5_mma_scaled":
            from .proof_ttgir_scaled import scaled_formats

            fa, fb = scaled_formats(op)
            if (fa == "e2m1") != (fb == "e2m1"):
                raise LayoutError(f"{where}: mixed packed and unpacked formats ({fa} x {fb}) are not proven here")
            dtype = "e2m1x2" if fa == "e2m1" else fa
        d = op.operands[2]
        enc = d.encoding
        if not isinstance(enc, KernelLayout) or enc.attribute != "ttng.tensor_memory_encoding":
            raise LayoutError(f"{where}: the accumulator is not in tensor memory")
        bm, bn = int(enc.params["blockM"]), min(int(enc.params["blockN"]), N)
        if M != bm:
            raise LayoutError(f"{where}: a {M}-row tile with blockM = {bm} is not proven here")
        loads = [o for o in module.ops if o.name == "ttng.tmem_load" and o.operands
                 and tuple(o.operands[0].shape[-2:]) == (M, N)]
        kn = {"op": op, "mblock": bm, "nblock": bn, "prefix": "umma", "where": where, "module": module,
              "tmem_load": loads[0] if loads else None}
        stages = (Stage("shared_a", "smem", f"A {M}x{K} {dtype}"), Stage("shared_b", "smem", f"B {K}x{N} {dtype}"),
                  Stage("umma", "mma", f"tcgen05.mma{' block-scaled' if op.name.endswith('scaled') else ''} M={bm} N={bn}"),
                  Stage("accumulator", "accumulator", f"TMEM {enc.name}"),
                  Stage("epilogue_tmem_load", "epilogue", "tcgen05.ld" + (f" (line {loads[0].line})" if loads else "")))
        return Pipeline("sm_100a", M, N, K, dtype, kn, stages, lambda p: _trace_descriptors(p, "sm_100a"))
    # tt.dot: mma v2
    c = op.result_types[0] if op.result_types else op.operands[-1]
    if not (isinstance(c.encoding, KernelLayout) and c.encoding.attribute == "ttg.nvidia_mma"
            and int(c.encoding.params.get("versionMajor", 0)) == 2):
        raise LayoutError(f"{where}: only tt.dot on #ttg.nvidia_mma version 2 (mma.sync) is proven here")
    if dtype not in _MMA_V2:
        raise LayoutError(f"{where}: mma.sync operands of type {dtype} are not proven here ({', '.join(_MMA_V2)})")
    kn = {"op": op, "where": where}
    stages = (Stage("dot_operand_a", "operand", f"A {M}x{K} in {a.encoding.name}"),
              Stage("dot_operand_b", "operand", f"B {K}x{N} in {b.encoding.name}"),
              Stage("accumulator", "accumulator", f"mma.sync.{_MMA_V2[dtype][0]}, C in {c.encoding.name}"))
    return Pipeline("sm_80", M, N, K, dtype, kn, stages, _trace_mma_v2)


def _nb(dtype: str) -> int:
    return 1 if dtype in ("e4m3", "e5m2", "s8", "e2m1x2") else (4 if dtype == "tf32" else 2)


def pipelines_from_ttgir(ttgir: str | TtgirModule) -> list[Pipeline]:
    """One :class:`Pipeline` per distinct MMA op of the kernel (ops with the same types and layouts once)."""
    module = read_ttgir(ttgir) if isinstance(ttgir, str) else ttgir
    if not isinstance(module, TtgirModule):
        raise LayoutError(f"pipelines_from_ttgir: expected ttgir text or a TtgirModule, got {type(ttgir).__name__}")
    seen: set = set()
    out = []
    for op in module.ops:
        if op.name not in MMA_OPS:
            continue
        key = (op.name, tuple(t.text for t in op.types))
        if key in seen:
            continue
        seen.add(key)
        out.append(_pipeline(module, op))
    return out


def prove_ttgir(ttgir: str | TtgirModule, *, accesses: Any = None) -> Proof:
    """The proof of a compiled kernel's MMA path: the first failing MMA op's proof, else the first op's (the
    others named in ``notes``). A kernel without an MMA op is a LayoutError. ``accesses``: the shared-memory
    accesses of the kernel's report (``KernelReport.accesses``, what ``KernelReport.proof`` passes) to carry
    in the proof with their bank figures."""
    pipes = pipelines_from_ttgir(ttgir)
    if not pipes:
        raise LayoutError(f"prove_ttgir: the kernel has none of the MMA ops {', '.join(MMA_OPS)}")
    proofs = [prove(p) for p in pipes]
    chosen = next((q for q in proofs if not q.ok), proofs[0])
    i = proofs.index(chosen)
    notes = chosen.notes + tuple(f"also proven: {pp.knobs['where']}: {'ok' if q.ok else 'WRONG'}"
                                 for j, (pp, q) in enumerate(zip(pipes, proofs)) if j != i)
    title = f"{chosen.title} ({pipes[i].knobs['where']})"
    acc = list(chosen.accesses)
    for o in accesses or ():
        b = getattr(o, "banks", None)
        if b is not None:
            acc.append(SmemAccess(f"{o.op.name} (ttgir line {o.op.line})", f"{o.direction}", b.access_bytes, b))
    return Proof(chosen.ok, chosen.wrong_outputs, chosen.first_wrong, chosen.stages, tuple(acc), notes, title)
