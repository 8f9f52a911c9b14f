"""Tiled GEMM steps on the GPU, placed and read exactly as :mod:`layoutalg.tiled` partitions them.

Two CTA-level steps, one per family, and a bank-conflict measurement:

* **Ampere** (:func:`ampere_plan`): ``make_tiled_mma(SM80_16x8x16_F32F16F16F32_TN, 2x2 warps,
  tile 32x32x16)`` over a 64x64x64 CTA tile. A and B sit in shared memory as
  ``Swizzle<3,3,3> o (64,64):(64,1)`` (K-major, 128-byte rows); ``make_tiled_copy_A/B`` with
  ``SM75_U32x4_LDSM_N`` load them. The host computes, per thread, every ``ldmatrix`` the copy
  plan issues (``copy_plan(tiled_copy, partition_S(sA), retile_D(fragment))``: the row address
  this lane supplies and the fragment registers the four results go to), every ``mma.sync``
  (which fragment registers are A, B and C for each (m, n, k) repeat, from
  ``partition_fragment_A/B/C``) and where each accumulator goes (``partition_C`` of the output).
  The kernel does nothing but execute those tables.
* **Hopper** (:func:`hopper_plan`): ``make_tiled_mma(SM90_64x64x16_F32F16F16_SS, 2x1x1)``: two
  warpgroups over a 128x64x64 tile from 128-byte-swizzled K-major tiles
  (``nvidia.hopper.wgmma.tile``); each warpgroup's descriptors come from its ``partition_A/B`` of the
  shared tiles (the sub-tile of each k-block, through
  :func:`~layoutalg.nvidia.hopper.wgmma.descriptor_from_layout`), accumulators leave by ``partition_C``.
* **Banks** (:func:`bank_cases`): the ldmatrix instructions of A-operand copies, unswizzled and
  swizzled, issued lane by lane as :func:`layoutalg.banks.analyze_copy` plans them, under Nsight
  Compute; the shared-memory wavefronts and bank conflicts it counts must equal the analyser's.

Each plan is also *emulated* on the CPU with the PTX ISA's rules written independently of the
library (ldmatrix: lane ``l`` addresses row ``l % 8`` of matrix ``l // 8`` and receives row
``l >> 2``, columns ``2(l % 4)``, ``+1``; mma/wgmma: the ISA's fragment formulas in
:mod:`layoutalg.nvidia.common.ptx_formulas`; the descriptor's canonical K-major 128B layout), so a
plan that would be wrong on the GPU is already wrong on the CPU::

    >>> p = ampere_plan()
    >>> len(p["ldA"][0]), len(p["steps"]), np.array_equal(emulate_ampere(p), p["A"] @ p["B"].T)
    (8, 32, True)

(8 ldmatrix per thread for A: 64 x 64 halves over 128 threads, 8 halves each, i.e. 2 (M) x 4 (K)
k-blocks of its 16 x 16 A fragments; 32 mma.sync steps: 2 (M) x 4 (N) x 4 (K) per warp.)
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import time
from functools import lru_cache
from typing import Any

import numpy as np

from .common import (DEFAULT_DIR, child_env, compare_exact, ncu_launches, ncu_path, ncu_query_metrics, nvcc_cubin,
                     wgmma_mainloop)

__all__ = ["ampere_plan", "hopper_plan", "bank_cases", "emulate_ampere", "emulate_hopper", "cuda_source",
           "run", "replay", "plan_digest"]

_SMEM_BYTES = 16384


# ---------------------------------------------------------------------------------------------
# Plans
# ---------------------------------------------------------------------------------------------
def _f16_image(X: np.ndarray, layout: Any) -> np.ndarray:
    """Bytes of shared memory holding f16 ``X[r, c]`` at element offset ``layout(r, c)``."""
    from .encode import encode

    off = np.asarray(layout.table(), dtype=np.int64)  # column-major (r, c): index r + R*c
    codes = encode(X.T.reshape(-1), "f16").astype(np.uint16)
    img = np.zeros(2 * (int(off.max()) + 1), dtype=np.uint8)
    img[2 * off] = (codes & 0xFF).astype(np.uint8)
    img[2 * off + 1] = (codes >> 8).astype(np.uint8)
    return np.concatenate([img, np.zeros((-len(img)) % 16, np.uint8)])


def _reg32(halves: list, what: str) -> list:
    """Fragment half-indices (h0, h1), (h2, h3)... as 32-bit register indices (pairs must be packed)."""
    out = []
    for j in range(0, len(halves), 2):
        lo, hi = int(halves[j]), int(halves[j + 1])
        if lo % 2 or hi != lo + 1:
            raise ValueError(f"{what}: values {j}, {j + 1} sit at halves {lo}, {hi}: not one 32-bit register")
        out.append(lo // 2)
    return out


@lru_cache(maxsize=4)
def ampere_plan(seed: int = 0) -> dict:
    """Host tables of the Ampere step (see the module docstring); numpy only. (Cached: do not modify.)"""
    from .. import ComposedLayout, Layout, Swizzle
    from ..nvidia.atoms import copy_atom, mma_atom
    from ..tensor import make_tensor, underscore as _
    from ..tiled import copy_plan, make_tiled_copy_A, make_tiled_copy_B, make_tiled_mma

    M = N = K = 64
    mma = make_tiled_mma(mma_atom("SM80_16x8x16_F32F16F16F32_TN"), (2, 2, 1), (32, 32, 16))
    sA = ComposedLayout(Swizzle(3, 3, 3), 0, Layout((M, K), (K, 1)))
    sB = ComposedLayout(Swizzle(3, 3, 3), 0, Layout((N, K), (K, 1)))
    ldsm = copy_atom("SM75_U32x4_LDSM_N", "f16")
    tcA, tcB = make_tiled_copy_A(ldsm, mma), make_tiled_copy_B(ldsm, mma)
    TA, TB = make_tensor(sA), make_tensor(sB)
    gD = make_tensor(Layout((M, N), (N, 1)))
    rng = np.random.default_rng(seed)
    A = rng.integers(-3, 4, size=(M, K)).astype(np.float64)
    B = rng.integers(-3, 4, size=(N, K)).astype(np.float64)
    plan: dict = {"A": A, "B": B, "M": M, "N": N, "K": K, "threads": mma.num_threads,
                  "img_A": _f16_image(A, sA), "img_B": _f16_image(B, sB),
                  "ldA": [], "ldB": [], "out": [], "config": {
                      "mma": str(mma), "smem_A": str(sA), "smem_B": str(sB),
                      "copy_A": repr(tcA), "copy_B": repr(tcB)}}
    # each thread's partition_S of a tile is a slice of the copy's (Thr, Frg, Rest) view of it: derived once per
    # tile here and sliced per thread as ThrCopy.partition_S does (thread 0's checked against partition_S itself)
    whole = {"ldA": tcA.tidfrg_S(TA), "ldB": tcB.tidfrg_S(TB)}
    frag: tuple | None = None
    for t in range(mma.num_threads):
        th = mma.get_slice(t)
        fA, fB, fC = th.partition_fragment_A(TA), th.partition_fragment_B(TB), th.partition_fragment_C(gD)
        for key, tc, T, F in (("ldA", tcA, TA, fA), ("ldB", tcB, TB, fB)):
            thc = tc.get_slice(t)
            part = whole[key](t, _, (_, _))
            if t == 0 and part != thc.partition_S(T):
                raise ValueError(f"{key}: thread 0's slice of tidfrg_S differs from its partition_S")
            rows = []
            for s, d in copy_plan(tc, part, thc.retile_D(F)):
                rows.append([2 * int(s.addresses()[0])] + _reg32(d.addresses().tolist(), f"{key} thread {t}"))
            plan[key].append(rows)
        pc = th.partition_C(gD)
        out = np.zeros(fC.size(), dtype=np.int64)
        out[fC.addresses()] = pc.addresses()
        plan["out"].append(out.tolist())
        shapes = (fA.layout.shape, fB.layout.shape, fC.layout.shape)
        if frag is None:
            frag = (fA, fB, fC, shapes)
        elif shapes != frag[3]:
            raise ValueError(f"thread {t}'s fragments {shapes} differ from thread 0's {frag[3]}")
    if frag is None:  # pragma: no cover - a tiled MMA has threads
        raise ValueError("ampere_plan: no threads")
    fA, fB, fC, _ = frag
    RM, RK = int(fA.layout[1].size()), int(fA.layout[2].size())
    RN = int(fB.layout[1].size())
    steps = []
    for rk in range(RK):
        for rm in range(RM):
            for rn in range(RN):
                a = _reg32([fA.address(v, rm, rk) for v in range(8)], "A fragment")
                b = _reg32([fB.address(v, rn, rk) for v in range(4)], "B fragment")
                c = [fC.address(v, rm, rn) for v in range(4)]
                steps.append(a + b + c)
    plan["steps"] = steps
    plan["frag_sizes"] = (int(fA.layout.cosize()) // 2, int(fB.layout.cosize()) // 2, int(fC.layout.cosize()))
    return plan


@lru_cache(maxsize=4)
def hopper_plan(seed: int = 0) -> dict:
    """Host tables of the Hopper step: per warpgroup and k-block the A/B descriptors, per thread the output map.
    (Cached: do not modify.)"""
    from .. import ComposedLayout, Layout
    from ..nvidia.hopper import wgmma
    from ..nvidia.atoms import mma_atom
    from ..tensor import make_tensor, underscore as _
    from ..tiled import make_tiled_mma

    M, N, K = 128, 64, 64
    mma = make_tiled_mma(mma_atom("SM90_64x64x16_F32F16F16_SS"), (2, 1, 1))
    sA, sB = wgmma.tile("K", 128, "f16", (M, K)), wgmma.tile("K", 128, "f16", (N, K))
    TA, TB = make_tensor(sA, swizzle_ptr=True), make_tensor(sB, swizzle_ptr=True)
    gD = make_tensor(Layout((M, N), (N, 1)))
    rng = np.random.default_rng(seed)
    A = rng.integers(-3, 4, size=(M, K)).astype(np.float64)
    B = rng.integers(-3, 4, size=(N, K)).astype(np.float64)

    def descs(part: Any) -> list:
        words = []
        for rk in range(int(part.layout[2].size())):
            sub = part(_, 0, rk)
            d = wgmma.descriptor_from_layout(ComposedLayout(part.swizzle, sub.offset, sub.layout[0]), "f16")
            words.append(int(d.encode()))
        return words

    desc_a, desc_b, out = [], None, []
    lead: tuple = ()  # the warpgroup's first thread's partitions of A and B
    for t in range(mma.num_threads):
        th = mma.get_slice(t)
        pa, pb = th.partition_A(TA), th.partition_B(TB)
        if t % 128 == 0:
            lead = (pa, pb)
            wa, wb = descs(pa), descs(pb)
            desc_a.append(wa)
            desc_b = desc_b or wb
        elif (pa, pb) != lead:  # (the descriptors are a function of the partition: equal partitions, equal words)
            wa, wb = descs(pa), descs(pb)
            if wa != desc_a[t // 128] or wb != desc_b:
                raise ValueError(f"thread {t}'s shared-memory partition differs from its warpgroup's")
        fC, pc = th.partition_fragment_C(gD), th.partition_C(gD)
        o = np.zeros(fC.size(), dtype=np.int64)
        o[fC.addresses()] = pc.addresses()
        out.append(o.tolist())
    return {"A": A, "B": B, "M": M, "N": N, "K": K, "threads": mma.num_threads,
            "img_A": _f16_image(A, sA), "img_B": _f16_image(B, sB), "desc_A": desc_a, "desc_B": desc_b,
            "out": out, "config": {"mma": str(mma), "smem_A": str(sA), "smem_B": str(sB)}}


@lru_cache(maxsize=1)
def bank_cases() -> list[dict]:
    """The ldmatrix partitions measured with Nsight Compute: name, tiled copy, smem tile, lane addresses.
    (Cached: do not modify.)"""
    from .. import ComposedLayout, Layout, Swizzle
    from ..banks import analyze_copy
    from ..nvidia.atoms import copy_atom, mma_atom
    from ..tiled import make_tiled_copy_A, make_tiled_mma

    mma = make_tiled_mma(mma_atom("SM80_16x8x16_F32F16F16F32_TN"), (2, 2, 1), (32, 32, 16))
    mma8 = make_tiled_mma(mma_atom("SM80_16x8x8_F32F16F16F32_TN"), (2, 2, 1))
    x4 = make_tiled_copy_A(copy_atom("SM75_U32x4_LDSM_N", "f16"), mma)
    x2 = make_tiled_copy_A(copy_atom("SM75_U32x2_LDSM_N", "f16"), mma8)
    cases = [
        ("A128x64.x4.plain", x4, Layout((128, 64), (64, 1)), 4),
        ("A128x64.x4.sw333", x4, ComposedLayout(Swizzle(3, 3, 3), 0, Layout((128, 64), (64, 1))), 4),
        ("A64x32.x4.plain", x4, Layout((64, 32), (32, 1)), 4),
        ("A64x32.x4.sw233", x4, ComposedLayout(Swizzle(2, 3, 3), 0, Layout((64, 32), (32, 1))), 4),
        ("A64x16.x2.plain", x2, Layout((64, 16), (16, 1)), 2),
        ("A64x16.x2.sw133", x2, ComposedLayout(Swizzle(1, 3, 3), 0, Layout((64, 16), (16, 1))), 2),
    ]
    out = []
    for name, tc, smem, num in cases:
        rep = analyze_copy(tc, smem)
        lanes = [[a for a in ins.addresses] for ins in rep.instructions]
        nwarps = tc.num_threads // 32
        per = len(lanes) // nwarps
        # per thread, the byte address of each of its instructions (ignored lanes of .x2 keep lane % 16's)
        addr = []
        for t in range(tc.num_threads):
            w, ln = divmod(t, 32)
            row = []
            for k in range(per):
                a = lanes[w * per + k][ln]
                row.append(int(a if a is not None else lanes[w * per + k][ln % (8 * num)]))
            addr.append(row)
        out.append({"name": name, "num": num, "threads": tc.num_threads, "smem": str(smem), "copy": repr(tc),
                    "addresses": addr, "instructions": len(rep.instructions),
                    "predicted": {"wavefronts": rep.wavefronts, "ideal": rep.ideal, "ways": rep.ways,
                                  "first_conflict": None if rep.first_conflict is None else str(rep.first_conflict)}})
    return out


def plan_digest(plan: dict) -> str:
    """sha1 of everything a plan tells the GPU (images, tables, descriptors): the recording's key."""
    h = hashlib.sha1()
    for k in sorted(plan):
        v = plan[k]
        if k == "config":
            continue
        h.update(k.encode())
        h.update(np.asarray(v, dtype=np.int64).tobytes() if k not in ("img_A", "img_B") else np.asarray(v).tobytes())
    return h.hexdigest()


# ---------------------------------------------------------------------------------------------
# CPU emulation with the ISA's rules (independent of the library's layouts)
# ---------------------------------------------------------------------------------------------
def _halves(img: np.ndarray) -> np.ndarray:
    from .encode import decode

    return decode(img.view(np.uint16).astype(np.uint64), "f16")


def _ldmatrix_x4(sm: np.ndarray, addrs: list) -> np.ndarray:
    """[32 lanes, 4 regs, 2 halves]: ldmatrix.x4 per the ISA (row address of row l%8 of matrix l//8 from lane l;
    lane l gets row l>>2, columns 2(l%4), 2(l%4)+1 of each matrix)."""
    rows = np.stack([sm[a // 2: a // 2 + 8] for a in addrs])  # [lane = 8*matrix + row, 8]
    out = np.zeros((32, 4, 2))
    for lane in range(32):
        for j in range(4):
            r, c = lane >> 2, 2 * (lane % 4)
            out[lane, j] = rows[8 * j + r, c:c + 2]
    return out


def emulate_ampere(plan: dict) -> np.ndarray:
    """D of the Ampere plan computed as the GPU would: ldmatrix and mma.sync by the ISA's rules."""
    from ..nvidia.common.ptx_formulas import FORMULAS

    smA, smB = _halves(plan["img_A"]), _halves(plan["img_B"])
    T = plan["threads"]
    na, nb, nc = plan["frag_sizes"]
    fa = np.zeros((T, na, 2))
    fb = np.zeros((T, nb, 2))
    fc = np.zeros((T, nc))
    for key, sm, regs in (("ldA", smA, fa), ("ldB", smB, fb)):
        for w in range(T // 32):
            for k in range(len(plan[key][0])):
                lanes = [plan[key][32 * w + ln][k] for ln in range(32)]
                res = _ldmatrix_x4(sm, [x[0] for x in lanes])
                for ln in range(32):
                    for j in range(4):
                        regs[32 * w + ln, lanes[ln][1 + j]] = res[ln, j]
    fA, fB, fC = FORMULAS["m16n8k16.A.16bit"], FORMULAS["m16n8k16.B.16bit"], FORMULAS["m16n8k16.C"]
    lane = np.arange(32)
    for st in plan["steps"]:
        a, b, c = st[:4], st[4:6], st[6:]
        for w in range(T // 32):
            th = 32 * w + lane
            At, Bt = np.zeros((16, 16)), np.zeros((16, 8))
            for i in range(8):
                r, col = (np.broadcast_to(x, lane.shape) for x in fA.evaluate(lane, i))
                At[r, col] = fa[th, a[i // 2], i % 2]
            for i in range(4):
                r, col = (np.broadcast_to(x, lane.shape) for x in fB.evaluate(lane, i))
                Bt[r, col] = fb[th, b[i // 2], i % 2]
            Ct = At @ Bt
            for i in range(4):
                r, col = (np.broadcast_to(x, lane.shape) for x in fC.evaluate(lane, i))
                fc[th, c[i]] += Ct[r, col]
    D = np.zeros(plan["M"] * plan["N"])
    for t in range(T):
        D[plan["out"][t]] = fc[t]
    return D.reshape(plan["M"], plan["N"])


def _gmma_tile(sm: np.ndarray, desc: int, rows: int) -> np.ndarray:
    """The rows x 16 f16 tile a K-major 128B-swizzled descriptor names, by the ISA's canonical layout:
    element (m, k) at byte start + (m // 8) * SBO + (m % 8) * 128 + 2k, then Swizzle<3,4,3> on the
    byte address (16-byte chunk ^= row-in-pattern)."""
    start = (desc & 0x3FFF) << 4
    sbo = ((desc >> 32) & 0x3FFF) << 4
    if (desc >> 62) != 1:
        raise ValueError(f"descriptor {desc:#x} is not 128B-swizzled")
    m, k = np.meshgrid(np.arange(rows), np.arange(16), indexing="ij")
    # (each term named first: mypy checks a nested numpy operand once per overload of the operator around it)
    core_matrix = (m // 8) * sbo
    row_in_core = (m % 8) * 128
    half = 2 * k
    byte = start + core_matrix + row_in_core + half
    byte ^= ((byte >> 7) & 7) << 4
    return sm[byte // 2]


def emulate_hopper(plan: dict) -> np.ndarray:
    """D of the Hopper plan: each warpgroup's wgmma k-blocks read through the descriptors, D by the ISA's formula."""
    from ..nvidia.common.ptx_formulas import FORMULAS

    smA, smB = _halves(plan["img_A"]), _halves(plan["img_B"])
    D = np.zeros(plan["M"] * plan["N"])
    fD = FORMULAS["wgmma.D"]
    N = plan["N"]
    for wg, words in enumerate(plan["desc_A"]):
        acc = np.zeros((64, N))
        for wa, wb in zip(words, plan["desc_B"]):
            acc += _gmma_tile(smA, wa, 64) @ _gmma_tile(smB, wb, N).T
        tid, j = np.meshgrid(np.arange(128), np.arange(N // 2), indexing="ij")
        r, c = (np.broadcast_to(np.asarray(x), tid.shape) for x in fD.evaluate(tid, j))
        D[np.asarray(plan["out"][128 * wg: 128 * wg + 128])] = acc[r, c]
    return D.reshape(plan["M"], N)


# ---------------------------------------------------------------------------------------------
# CUDA
# ---------------------------------------------------------------------------------------------
def cuda_source() -> str:
    """The three kernels: the table-driven Ampere step, the Hopper step, and the ldmatrix loops for ncu."""
    pa = ampere_plan()
    na, nb, nc = pa["frag_sizes"]
    loop = wgmma_mainloop(64, 16, "f16", "K", "K", "da[wg * nk + s] + a_base", "db[s] + b_base")
    return f"""#include <cstdint>
extern "C" __global__ void __launch_bounds__(128) ampere_step(
    const uint4* a_img, int a_words, const uint4* b_img, int b_words,
    const int* ldA, int nA, const int* ldB, int nB, const int* steps, int nsteps,
    const int* outmap, float* D) {{
  __shared__ __align__(1024) uint4 smA[{_SMEM_BYTES // 16}];
  __shared__ __align__(1024) uint4 smB[{_SMEM_BYTES // 16}];
  int tid = threadIdx.x;
  for (int i = tid; i < a_words; i += blockDim.x) smA[i] = a_img[i];
  for (int i = tid; i < b_words; i += blockDim.x) smB[i] = b_img[i];
  __syncthreads();
  unsigned fa[{na}], fb[{nb}];
  float fc[{nc}];
  for (int j = 0; j < {nc}; ++j) fc[j] = 0.f;
  unsigned sa = (unsigned)__cvta_generic_to_shared(smA), sb = (unsigned)__cvta_generic_to_shared(smB);
  const int* la = ldA + tid * nA * 5;
  for (int i = 0; i < nA; ++i) {{
    unsigned r0, r1, r2, r3;
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {{%0,%1,%2,%3}}, [%4];"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(sa + la[5 * i]));
    fa[la[5 * i + 1]] = r0; fa[la[5 * i + 2]] = r1; fa[la[5 * i + 3]] = r2; fa[la[5 * i + 4]] = r3;
  }}
  const int* lb = ldB + tid * nB * 5;
  for (int i = 0; i < nB; ++i) {{
    unsigned r0, r1, r2, r3;
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {{%0,%1,%2,%3}}, [%4];"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(sb + lb[5 * i]));
    fb[lb[5 * i + 1]] = r0; fb[lb[5 * i + 2]] = r1; fb[lb[5 * i + 3]] = r2; fb[lb[5 * i + 4]] = r3;
  }}
  for (int s = 0; s < nsteps; ++s) {{
    const int* st = steps + 10 * s;
    float c0 = fc[st[6]], c1 = fc[st[7]], c2 = fc[st[8]], c3 = fc[st[9]];
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {{%0,%1,%2,%3}}, {{%4,%5,%6,%7}}, {{%8,%9}}, {{%0,%1,%2,%3}};"
                 : "+f"(c0), "+f"(c1), "+f"(c2), "+f"(c3)
                 : "r"(fa[st[0]]), "r"(fa[st[1]]), "r"(fa[st[2]]), "r"(fa[st[3]]), "r"(fb[st[4]]), "r"(fb[st[5]]));
    fc[st[6]] = c0; fc[st[7]] = c1; fc[st[8]] = c2; fc[st[9]] = c3;
  }}
  const int* om = outmap + tid * {nc};
  for (int j = 0; j < {nc}; ++j) D[om[j]] = fc[j];
}}

extern "C" __global__ void __launch_bounds__(256) hopper_step(
    const uint4* a_img, int a_words, const uint4* b_img, int b_words,
    const unsigned long long* da, const unsigned long long* db, int nk, const int* outmap, float* D) {{
  __shared__ __align__(1024) uint4 smA[{_SMEM_BYTES // 16}];
  __shared__ __align__(1024) uint4 smB[{_SMEM_BYTES // 16}];
  int tid = threadIdx.x, wg = tid / 128;
  for (int i = tid; i < a_words; i += blockDim.x) smA[i] = a_img[i];
  for (int i = tid; i < b_words; i += blockDim.x) smB[i] = b_img[i];
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  unsigned long long a_base = ((unsigned)__cvta_generic_to_shared(smA)) >> 4;
  unsigned long long b_base = ((unsigned)__cvta_generic_to_shared(smB)) >> 4;
{loop}
  const int* om = outmap + tid * 32;
  #pragma unroll
  for (int j = 0; j < 32; ++j) D[om[j]] = d[j];
}}

extern "C" __global__ void tiled_ldsm_x4(const uint4* img, int words, const int* addr, int n, unsigned* sink) {{
  __shared__ __align__(1024) uint4 sm[{_SMEM_BYTES // 16}];
  int tid = threadIdx.x;
  for (int i = tid; i < words; i += blockDim.x) sm[i] = img[i];
  __syncthreads();
  unsigned s = (unsigned)__cvta_generic_to_shared(sm), acc = 0;
  for (int i = 0; i < n; ++i) {{
    unsigned r0, r1, r2, r3;
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {{%0,%1,%2,%3}}, [%4];"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(s + addr[tid * n + i]));
    acc ^= r0 ^ r1 ^ r2 ^ r3;
  }}
  sink[tid] = acc;
}}

extern "C" __global__ void tiled_ldsm_x2(const uint4* img, int words, const int* addr, int n, unsigned* sink) {{
  __shared__ __align__(1024) uint4 sm[{_SMEM_BYTES // 16}];
  int tid = threadIdx.x;
  for (int i = tid; i < words; i += blockDim.x) sm[i] = img[i];
  __syncthreads();
  unsigned s = (unsigned)__cvta_generic_to_shared(sm), acc = 0;
  for (int i = 0; i < n; ++i) {{
    unsigned r0, r1;
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {{%0,%1}}, [%2];"
                 : "=r"(r0), "=r"(r1) : "r"(s + addr[tid * n + i]));
    acc ^= r0 ^ r1;
  }}
  sink[tid] = acc;
}}
"""


def _compile(workdir: str) -> str:
    return nvcc_cubin(cuda_source(), "tiled_kernels", workdir)


def _i32(x: Any) -> Any:
    import cupy as cp

    return cp.asarray(np.asarray(x, dtype=np.int32).reshape(-1))


def _launch_ampere(cubin: str, plan: dict) -> np.ndarray:
    import cupy as cp

    fn = cp.RawModule(path=cubin).get_function("ampere_step")
    D = cp.full(plan["M"] * plan["N"], cp.nan, dtype=cp.float32)
    ia, ib = plan["img_A"], plan["img_B"]
    nA, nB = len(plan["ldA"][0]), len(plan["ldB"][0])
    fn((1,), (plan["threads"],), (cp.asarray(ia), np.int32(len(ia) // 16), cp.asarray(ib), np.int32(len(ib) // 16),
                                  _i32(plan["ldA"]), np.int32(nA), _i32(plan["ldB"]), np.int32(nB),
                                  _i32(plan["steps"]), np.int32(len(plan["steps"])), _i32(plan["out"]), D))
    cp.cuda.runtime.deviceSynchronize()
    return D.get().astype(np.float64).reshape(plan["M"], plan["N"])


def _launch_hopper(cubin: str, plan: dict) -> np.ndarray:
    import cupy as cp

    fn = cp.RawModule(path=cubin).get_function("hopper_step")
    D = cp.full(plan["M"] * plan["N"], cp.nan, dtype=cp.float32)
    ia, ib = plan["img_A"], plan["img_B"]
    da = cp.asarray(np.asarray(plan["desc_A"], dtype=np.uint64).reshape(-1))
    db = cp.asarray(np.asarray(plan["desc_B"], dtype=np.uint64))
    fn((1,), (plan["threads"],), (cp.asarray(ia), np.int32(len(ia) // 16), cp.asarray(ib), np.int32(len(ib) // 16),
                                  da, db, np.int32(len(plan["desc_B"])), _i32(plan["out"]), D))
    cp.cuda.runtime.deviceSynchronize()
    return D.get().astype(np.float64).reshape(plan["M"], plan["N"])


def _launch_banks(cubin: str, case: dict) -> None:
    import cupy as cp

    fn = cp.RawModule(path=cubin).get_function(f"tiled_ldsm_x{case['num']}")
    img = cp.zeros(_SMEM_BYTES // 4, dtype=cp.uint32)
    addr = case["addresses"]
    sink = cp.zeros(case["threads"], dtype=cp.uint32)
    fn((1,), (case["threads"],), (img, np.int32(_SMEM_BYTES // 16), _i32(addr), np.int32(len(addr[0])), sink))
    cp.cuda.runtime.deviceSynchronize()


#: metric names looked for (those this ncu knows are collected)
NCU_METRICS = (
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ldsm.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ldsm.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum",
    "smsp__inst_executed_op_ldsm.sum",
    "smsp__sass_inst_executed_op_ldsm.sum",
)


def _ncu_child(cubin: str) -> None:
    for case in bank_cases():
        _launch_banks(cubin, case)


def _run_ncu(cubin: str, log: Any = print) -> dict:
    """Per case, the ncu counters of its launch, or why ncu could not give them."""
    ncu = ncu_path()
    if not ncu:
        return {"error": "ncu not found"}
    known = ncu_query_metrics(ncu)
    metrics = [m for m in NCU_METRICS if m.rsplit(".", 1)[0] in known]
    log(f"[tiled banks] ncu metrics available: {metrics}")
    try:
        p = subprocess.run([ncu, "--csv", "--metrics", ",".join(metrics), "-k", "regex:tiled_ldsm",
                            sys.executable, "-m", "layoutalg.gpu.tiled_check", "--ncu-child", cubin],
                           capture_output=True, text=True, env=child_env(), timeout=300)
    except Exception as e:  # noqa: BLE001
        return {"error": f"{type(e).__name__}: {e}", "metrics": metrics}
    text = p.stdout
    per_id = ncu_launches(text)
    if per_id is None:
        return {"error": f"no ncu table (rc {p.returncode}): {(p.stdout + p.stderr)[-800:]}", "metrics": metrics}
    ids = sorted(per_id)
    cases = bank_cases()
    if len(ids) != len(cases):
        return {"error": f"ncu reported {len(ids)} launches, expected {len(cases)}", "raw": text[-1500:]}
    return {c["name"]: per_id[i] for c, i in zip(cases, ids)}


def agreement(banks: dict) -> list[str]:
    """Where ncu's counts contradict the analyser: wavefronts and bank conflicts of each launch."""
    out = []
    for name, rec in banks.items():
        ncu = rec.get("ncu") or {}
        pred = rec["predicted"]
        wf = next((ncu[m] for m in ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ldsm.sum",
                                    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum") if ncu.get(m)), None)
        bc = next((ncu[m] for m in ("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ldsm.sum",
                                    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum") if m in ncu), None)
        if wf is None:
            out.append(f"{name}: no ncu wavefront count recorded")
            continue
        if wf != pred["wavefronts"]:
            out.append(f"{name}: ncu counted {wf:g} shared wavefronts, the analyser predicts {pred['wavefronts']}")
        if bc is not None and bc != pred["wavefronts"] - pred["ideal"]:
            out.append(f"{name}: ncu counted {bc:g} bank conflicts, the analyser predicts "
                       f"{pred['wavefronts'] - pred['ideal']} extra wavefronts")
    return out


def run(log: Any = print) -> dict:
    """Compile, run both GEMM steps and the ncu bank cases; the recording (``tests/data/hardware/tiled.json``)."""
    import tempfile

    t0 = time.time()
    workdir = tempfile.mkdtemp(prefix="layoutalg_tiled_")
    cubin = _compile(workdir)
    results: dict = {}
    for name, make, launch, emulate in (("ampere", ampere_plan, _launch_ampere, emulate_ampere),
                                        ("hopper", hopper_plan, _launch_hopper, emulate_hopper)):
        plan = make()
        ref = plan["A"] @ plan["B"].T
        rec: dict = {"config": plan["config"], "digest": plan_digest(plan)}
        try:
            rec["emulated"] = compare_exact(emulate(plan), ref)["ok"]
            rec.update(compare_exact(launch(cubin, plan), ref))
            rec["status"] = "pass" if rec["ok"] else "fail"
        except Exception as e:  # noqa: BLE001 - a failing check is a row of the recording
            rec.update({"status": "error", "error": f"{type(e).__name__}: {str(e)[-500:]}"})
        results[name] = rec
        log(f"[tiled] {name}: {rec['status']} {rec.get('max_abs_err')}")
    banks: dict = {}
    for c in bank_cases():
        banks[c["name"]] = {k: c[k] for k in ("name", "num", "threads", "smem", "copy", "instructions", "predicted")}
        banks[c["name"]]["addresses_sha1"] = hashlib.sha1(np.asarray(c["addresses"], np.int64).tobytes()).hexdigest()
    ncu = _run_ncu(cubin, log)
    if "error" not in ncu:
        for name, v in ncu.items():
            banks[name]["ncu"] = v
    problems = agreement(banks)
    for name, rec in banks.items():
        rec["status"] = "pass" if "ncu" in rec and not any(p.startswith(name + ":") for p in problems) else "fail"
    return {"results": results, "banks": banks, "ncu": ncu if "error" in ncu else "ok", "problems": problems,
            "seconds": time.time() - t0}


def replay(recording: dict) -> list[str]:
    """The recording against the library *now*: same plans (digests, addresses), D exact, ncu = analyser."""
    problems = []
    for name, make in (("ampere", ampere_plan), ("hopper", hopper_plan)):
        rec = recording.get("results", {}).get(name)
        if rec is None:
            problems.append(f"{name}: not recorded")
            continue
        if plan_digest(make()) != rec["digest"]:
            problems.append(f"{name}: the library now plans the step differently from what the GPU ran")
        if rec.get("status") != "pass":
            problems.append(f"{name}: the GPU's D was not A @ B ({rec.get('status')})")
    banks = recording.get("banks", {})
    now = {c["name"]: c for c in bank_cases()}
    for name, rec in banks.items():
        c = now.get(name)
        if c is None:
            problems.append(f"{name}: no such bank case now")
            continue
        if hashlib.sha1(np.asarray(c["addresses"], np.int64).tobytes()).hexdigest() != rec["addresses_sha1"]:
            problems.append(f"{name}: the library now gives other lane addresses than were measured")
        rec = dict(rec, predicted=c["predicted"])
        banks = {**banks, name: rec}
    return problems + agreement(banks)


if __name__ == "__main__":  # child process under ncu, or the whole check
    if len(sys.argv) == 3 and sys.argv[1] == "--ncu-child":
        _ncu_child(sys.argv[2])
    elif len(sys.argv) >= 2 and sys.argv[1] == "--run":
        from .common import environment, write_recording

        outdir = sys.argv[2] if len(sys.argv) > 2 else DEFAULT_DIR
        data = run()
        path = write_recording("tiled", data, environment(), outdir)
        print(json.dumps({k: data[k] for k in ("problems", "seconds")}, default=str))
        print(f"wrote {path}")
