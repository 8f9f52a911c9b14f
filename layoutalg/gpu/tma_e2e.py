"""TMA -> wgmma end to end: operand tiles loaded by TMA with the library's tensor maps, multiplied by
``wgmma`` with the library's descriptors, D exact (the fourth part of :mod:`~layoutalg.gpu.tma_check`).

:func:`e2e_modes` lists the modes, :func:`e2e_operands` plans one (global operands, maps, loads,
descriptors, the reference D and :func:`layoutalg.nvidia.hopper.tma.check_wgmma`'s verdict), :func:`e2e_execute`
runs it on a :class:`~layoutalg.gpu.tma_driver.Driver` (or a simulated one), :func:`e2e_record` is its
recording. :data:`E2E_NEGATIVES` are negative controls run in child processes (:func:`run_negatives`);
:func:`kernel_source` is the CUDA C of the placement and TMA -> wgmma kernels; :func:`replay_e2e`
replays a recording.

    >>> [m["name"] for m in e2e_modes()][:3]
    ['bf16.K.sw128', 'f16.MN.sw128', 'f16.K.sw64']
"""

from __future__ import annotations

import ctypes
import json
import subprocess
import sys

import numpy as np

from ..nvidia.hopper.tma import check_wgmma, make_tma_copy
from .common import child_env, compare_exact, wgmma_mainloop
from .tma_driver import Driver, map_arg

__all__ = ["e2e_modes", "E2E_NEGATIVES", "e2e_operands", "e2e_execute", "e2e_record", "kernel_source",
           "negative_child", "run_negatives", "replay_e2e"]

# --- end to end: TMA -> wgmma --------------------------------------------------------------------
_E2E_BYTES = {"f16": 2, "bf16": 2, "tf32": 4, "e4m3": 1}


def e2e_modes() -> list[dict]:
    """TMA-loaded operand tiles (64 x KT, KT = 256 bytes of K) read by wgmma m64n64: majorness x swizzle x type.

    The global operands are bigger than the tile, row-padded, and the tile origin is chosen so that the
    last rows of A and the last K columns of B are out of bounds (zero filled): D must equal the product
    of the zero-extended tiles.
    """
    out = []
    for dt, major, sw in (("bf16", "K", 128), ("f16", "MN", 128), ("f16", "K", 64), ("bf16", "MN", 32),
                          ("tf32", "K", 128), ("e4m3", "K", 128), ("f16", "K", 0), ("bf16", "MN", 64)):
        nb = _E2E_BYTES[dt]
        out.append({"name": f"{dt}.{major}.sw{sw}", "dtype": dt, "major": major, "swizzle": sw, "KT": 256 // nb,
                    "K": 32 // nb, "N": 64})
    return out


#: name -> (mode, how the wgmma operand differs from what the tensor maps write)
E2E_NEGATIVES = {
    "map128.desc64": ("bf16.K.sw128", {"desc_swizzle": 64}),
    "mapMN128.desc32": ("f16.MN.sw128", {"desc_swizzle": 32}),
    "map64.desc128": ("f16.K.sw64", {"desc_swizzle": 128}),
}


def e2e_operands(m: dict, seed: int = 0, desc_swizzle: int | None = None) -> dict:
    """Global operands, their tensor maps / loads / tile origins, the wgmma descriptors and the reference D."""
    from . import encode as enc
    from ..layout import Layout
    from ..nvidia.hopper.wgmma import k_block_descriptors, tile

    dt, major, KT = m["dtype"], m["major"], m["KT"]
    nb = _E2E_BYTES[dt]
    rng = np.random.default_rng(seed)
    hi = 2
    res: dict = {}
    tiles = {}
    for op, rows in (("A", 64), ("B", m["N"])):
        t = tile(major, m["swizzle"], dt, (rows, KT))
        Rg, Kg = rows + 24, KT + KT // 2           # global extents (the tile's origin makes part of it OOB)
        org = (Rg - rows + 8, 0) if op == "A" else (8, Kg - KT + KT // 4)
        X = rng.integers(-hi, hi + 1, (Rg, Kg)).astype(np.float64)
        if major == "K":
            pitch = -(-(Kg * nb + 32) // 16) * 16 // nb
            gl = Layout((Rg, Kg), (pitch, 1))
            alloc = Rg * pitch
        else:
            pitch = -(-(Rg * nb + 32) // 16) * 16 // nb
            gl = Layout((Rg, Kg), (1, pitch))
            alloc = Kg * pitch
        buf = np.zeros(alloc, np.uint64)
        rr, kk = np.meshgrid(np.arange(Rg), np.arange(Kg), indexing="ij")
        buf[gl(rr, kk).ravel()] = enc.encode(X.ravel(), dt)
        copy = make_tma_copy(gl, t, dt)
        Xt = np.zeros((rows, KT))
        r0, k0 = org
        rs, ks = slice(r0, min(Rg, r0 + rows)), slice(k0, min(Kg, k0 + KT))
        Xt[: rs.stop - r0, : ks.stop - k0] = X[rs, ks]
        dlay = t if desc_swizzle is None else tile(major, desc_swizzle, dt, (rows, KT))
        instr = f"m64n{m['N']}k{m['K']}"
        kbs = k_block_descriptors(dlay, dt, instr, operand=op, major=major)
        res[op] = {"buf": buf, "copy": copy, "origin": org, "coords": copy.coordinates(org), "tile": Xt,
                   "words": [kb.descriptor.encode() for kb in kbs], "desc_layout": dlay}
        tiles[op] = Xt
    res["D"] = tiles["A"] @ tiles["B"].T
    res["check"] = {op: check_wgmma(res[op]["copy"], [int(w) for w in res[op]["words"]], operand_name=op,
                                    major=major, instruction=f"m64n{m['N']}k{m['K']}") for op in ("A", "B")}
    return res


def kernel_source() -> str:
    """CUDA C of the TMA placement kernel and the TMA -> wgmma kernels (sm_90a)."""
    parts = [r"""
#include <cstdint>
struct alignas(64) TmaDesc { unsigned long long w[16]; };

__device__ __forceinline__ void tma_load(unsigned dst, const TmaDesc* map, const int* c, int rank, unsigned bar) {
  unsigned long long m = reinterpret_cast<unsigned long long>(map);
  switch (rank) {
  case 1: asm volatile("cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2}], [%3];"
            :: "r"(dst), "l"(m), "r"(c[0]), "r"(bar) : "memory"); break;
  case 2: asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
            :: "r"(dst), "l"(m), "r"(c[0]), "r"(c[1]), "r"(bar) : "memory"); break;
  case 3: asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];"
            :: "r"(dst), "l"(m), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(bar) : "memory"); break;
  case 4: asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
            " [%0], [%1, {%2, %3, %4, %5}], [%6];"
            :: "r"(dst), "l"(m), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(bar) : "memory"); break;
  default: asm volatile("cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
            " [%0], [%1, {%2, %3, %4, %5, %6}], [%7];"
            :: "r"(dst), "l"(m), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4]), "r"(bar) : "memory"); break;
  }
}

__device__ __forceinline__ void bar_init(unsigned bar) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(bar) : "memory");
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

__device__ __forceinline__ void bar_expect(unsigned bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(bar), "r"(bytes) : "memory");
}

// Wait for phase 0 of the mbarrier; give up after ~4e9 cycles (a transaction count that never
// completes would hang the GPU): returns 1 on time-out.
__device__ __forceinline__ int bar_wait(unsigned bar) {
  long long t0 = clock64();
  while (true) {
    unsigned ok;
    asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0;\nselp.u32 %0, 1, 0, p;\n}\n"
                 : "=r"(ok) : "r"(bar) : "memory");
    if (ok) return 0;
    if (clock64() - t0 > 4000000000LL) return 1;
  }
}

// One CTA: fill shared memory with the sentinel, issue the loads, wait, copy shared memory out.
extern "C" __global__ void __launch_bounds__(128) tma_place(const __grid_constant__ TmaDesc map,
    const int* coords, const unsigned* dst, int nloads, int rank, unsigned box_bytes, unsigned smem_bytes,
    unsigned sentinel, unsigned* out, unsigned* info) {
  extern __shared__ __align__(1024) unsigned char dyn[];
  __shared__ __align__(8) unsigned long long mbar;
  unsigned base = (unsigned)__cvta_generic_to_shared(dyn);
  unsigned pad = (1024u - (base & 1023u)) & 1023u;
  unsigned* sw = reinterpret_cast<unsigned*>(dyn + pad);
  for (unsigned i = threadIdx.x; i < smem_bytes / 4; i += blockDim.x) sw[i] = sentinel;
  unsigned bar = (unsigned)__cvta_generic_to_shared(&mbar);
  if (threadIdx.x == 0) bar_init(bar);
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  if (threadIdx.x == 0) {
    bar_expect(bar, box_bytes * nloads);
    for (int l = 0; l < nloads; ++l) tma_load(base + pad + dst[l], &map, coords + 5 * l, rank, bar);
  }
  int late = bar_wait(bar);
  __syncthreads();
  for (unsigned i = threadIdx.x; i < smem_bytes / 4; i += blockDim.x) out[i] = sw[i];
  if (threadIdx.x == 0) { info[0] = base + pad; info[1] = late; }
}
"""]
    done = set()
    for m in e2e_modes():
        key = f"{m['dtype']}_{m['major']}"
        if key in done:
            continue
        done.add(key)
        nreg = m["N"] // 2
        loop = wgmma_mainloop(m["N"], m["K"], m["dtype"], m["major"], m["major"],
                              "da[s] + (sA >> 4)", "db[s] + (sB >> 4)")
        parts.append(f"""
extern "C" __global__ void __launch_bounds__(128) tma_wgmma_{key}(
    const __grid_constant__ TmaDesc mapA, const __grid_constant__ TmaDesc mapB,
    const int* cA, const unsigned* dA, int nA, int rankA, unsigned boxA,
    const int* cB, const unsigned* dB, int nB, int rankB, unsigned boxB, unsigned b_off,
    const unsigned long long* da, const unsigned long long* db, int nk, float* out, unsigned* info) {{
  extern __shared__ __align__(1024) unsigned char dyn[];
  __shared__ __align__(8) unsigned long long mbar;
  unsigned base = (unsigned)__cvta_generic_to_shared(dyn);
  unsigned pad = (1024u - (base & 1023u)) & 1023u;
  unsigned sA = base + pad, sB = base + pad + b_off;
  unsigned bar = (unsigned)__cvta_generic_to_shared(&mbar);
  int tid = threadIdx.x;
  if (tid == 0) bar_init(bar);
  __syncthreads();
  if (tid == 0) {{
    bar_expect(bar, boxA * nA + boxB * nB);
    for (int l = 0; l < nA; ++l) tma_load(sA + dA[l], &mapA, cA + 5 * l, rankA, bar);
    for (int l = 0; l < nB; ++l) tma_load(sB + dB[l], &mapB, cB + 5 * l, rankB, bar);
  }}
  int late = bar_wait(bar);
  __syncthreads();
  if (tid == 0) {{ info[0] = sA; info[1] = sB; info[2] = late; }}
{loop}
  #pragma unroll
  for (int j = 0; j < {nreg}; ++j) out[tid * {nreg} + j] = d[j];
}}
""")
    return "\n".join(parts)


def e2e_execute(drv: Driver, cubin: str, m: dict, ops: dict, words: dict | None = None) -> dict:
    """Run one mode's operands ``ops`` (from :func:`e2e_operands`; ``words``: other descriptor words per
    operand) through the ``tma_wgmma`` kernel of ``cubin`` on ``drv``: :func:`compare_exact` of D with
    the reference, and the shared addresses the tiles landed at."""
    from .wgmma_check import gather_d

    nb = _E2E_BYTES[m["dtype"]]
    fn = drv.function(cubin, f"tma_wgmma_{m['dtype']}_{m['major']}")
    ptrs = []
    try:
        args: list = []
        maps = []
        load_args = {}
        for op in ("A", "B"):
            o = ops[op]
            buf = o["buf"].astype({1: np.uint8, 2: np.uint16, 4: np.uint32}[nb]).tobytes()
            gp = drv.alloc(len(buf) + 64)
            ptrs.append(gp)
            drv.htod(gp, buf)
            r, blob = drv.encode_tiled(o["copy"].tensor_map.driver_args(gp))
            if r:
                raise RuntimeError(f"driver refused the {op} map: {drv.error_name(r)}")
            maps.append(map_arg(blob))
            coords = np.zeros((len(o["coords"]), 5), np.int32)
            for i, c in enumerate(o["coords"]):
                coords[i, : len(c)] = c
            dsts = np.array([ld.smem_offset for ld in o["copy"].loads], np.uint32)
            cp, dp = drv.alloc(coords.nbytes), drv.alloc(dsts.nbytes)
            ptrs += [cp, dp]
            drv.htod(cp, coords.tobytes())
            drv.htod(dp, dsts.tobytes())
            load_args[op] = (cp, dp, len(dsts), o["copy"].tensor_map.rank, o["copy"].tensor_map.box_bytes)
        a_bytes = max(int(ops["A"]["copy"].writes().max()) + nb, 0)
        b_off = -(-a_bytes // 1024) * 1024
        b_bytes = int(ops["B"]["copy"].writes().max()) + nb
        wa = np.array((words or {}).get("A", ops["A"]["words"]), np.uint64)
        wb = np.array((words or {}).get("B", ops["B"]["words"]), np.uint64)
        pa, pb = drv.alloc(wa.nbytes), drv.alloc(wb.nbytes)
        ptrs += [pa, pb]
        drv.htod(pa, wa.tobytes())
        drv.htod(pb, wb.tobytes())
        nreg = m["N"] // 2
        out = drv.alloc(128 * nreg * 4)
        info = drv.alloc(16)
        ptrs += [out, info]
        args = [maps[0], maps[1]]
        for op in ("A", "B"):
            cp, dp, n, rank, box = load_args[op]
            args += [ctypes.c_uint64(cp), ctypes.c_uint64(dp), ctypes.c_int(n), ctypes.c_int(rank), ctypes.c_uint32(box)]
            if op == "B":
                args.append(ctypes.c_uint32(b_off))
        args += [ctypes.c_uint64(pa), ctypes.c_uint64(pb), ctypes.c_int(len(wa)), ctypes.c_uint64(out), ctypes.c_uint64(info)]
        drv.launch(fn, args, b_off + b_bytes + 2048)
        d = np.frombuffer(drv.dtoh(out, 128 * nreg * 4), np.float32).reshape(128, nreg).astype(np.float64)
        inf = np.frombuffer(drv.dtoh(info, 12), np.uint32)
        bases = [int(x) for x in inf[:2]]
        if inf[2]:
            raise RuntimeError("mbarrier wait timed out: the transaction count never completed")
    finally:
        for p in ptrs:
            drv.free(p)
    return {**compare_exact(gather_d(d, m["N"], m["K"]), ops["D"], examples=3), "smem_bases": bases}


def e2e_record(m: dict, ops: dict) -> dict:
    """The recorded part of a mode's plan: maps, loads, origins, descriptor words, check_wgmma verdicts."""
    rec = {k: m[k] for k in ("name", "dtype", "major", "swizzle", "KT", "K", "N")}
    for op in ("A", "B"):
        o = ops[op]
        rec[f"map_{op}"] = o["copy"].tensor_map.driver_args()
        rec[f"loads_{op}"] = len(o["copy"].loads)
        rec[f"origin_{op}"] = list(o["origin"])
        rec[f"descriptors_{op}"] = [hex(int(w)) for w in o["words"]]
        ck = ops["check"][op]
        rec[f"check_{op}"] = {"ok": ck.ok, "mismatches": ck.mismatches, "first": ck.first}
    return rec


def negative_child(cubin: str, name: str) -> None:
    """In a child process: run negative control ``name``; print its record as a ``RESULT`` line."""
    mode_name, how = E2E_NEGATIVES[name]
    m = next(x for x in e2e_modes() if x["name"] == mode_name)
    ops = e2e_operands(m, seed=3, desc_swizzle=how["desc_swizzle"])
    rec = e2e_record(m, ops)
    try:
        drv = Driver()
        res = e2e_execute(drv, cubin, m, ops)
        res["cuda_error"] = None
    except Exception as e:  # noqa: BLE001 - a CUDA error is an acceptable outcome
        res = {"ok": False, "cuda_error": f"{type(e).__name__}: {str(e)[:200]}"}
    rec.update(res)
    print("RESULT " + json.dumps(rec, default=str))


def run_negatives(cubin: str) -> dict:
    """Every :data:`E2E_NEGATIVES` control, each in its own child process (all at once): caught or not."""
    env = child_env()
    procs = {n: subprocess.Popen([sys.executable, "-m", "layoutalg.gpu.tma_check", "--negative", cubin, n],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env) for n in E2E_NEGATIVES}
    out = {}
    for name, p in procs.items():
        try:
            so, se = p.communicate(timeout=180)
        except subprocess.TimeoutExpired:
            p.kill()
            so, se = "", "timeout"
        line = [x for x in so.splitlines() if x.startswith("RESULT ")]
        rec: dict = json.loads(line[-1][7:]) if line else {"ok": False, "cuda_error": f"child died: {se[-400:]}"}
        caught_hw = not rec.get("ok", False)
        caught_lib = not (rec.get("check_A", {}).get("ok", True) and rec.get("check_B", {}).get("ok", True))
        rec.update(mode=E2E_NEGATIVES[name][0], corruption=E2E_NEGATIVES[name][1], caught_by_hardware=caught_hw,
                   predicted_by_library=caught_lib,
                   how_caught=("CUDA error" if rec.get("cuda_error") else "wrong D") if caught_hw else "NOT CAUGHT",
                   status="pass" if caught_hw and caught_lib else "fail")
        out[name] = rec
    return out


def replay_e2e(recording: dict) -> list[str]:
    """TMA -> wgmma: the library's maps and descriptors for every passing mode must be the recorded ones,
    and for every caught negative the library's check must still find the disagreement."""
    problems = []
    modes = {m["name"]: m for m in e2e_modes()}
    for name, rec in recording.get("e2e", {}).items():
        if rec.get("status") != "pass":
            problems.append(f"{name}: recorded status {rec.get('status')}")
            continue
        ops = e2e_operands(modes[name])
        for op in ("A", "B"):
            if ops[op]["copy"].tensor_map.driver_args() != rec[f"map_{op}"]:
                problems.append(f"{name} {op}: tensor map differs from the hardware-checked one")
            if [hex(int(w)) for w in ops[op]["words"]] != rec[f"descriptors_{op}"]:
                problems.append(f"{name} {op}: descriptors differ from the hardware-checked ones")
            if not ops["check"][op].ok:
                problems.append(f"{name} {op}: check_wgmma now reports a mismatch: {ops['check'][op]}")
    for name, rec in recording.get("negatives", {}).items():
        if not rec.get("caught_by_hardware"):
            problems.append(f"{name}: the hardware did not show the wrong D")
            continue
        mode, how = E2E_NEGATIVES[name]
        ops = e2e_operands(modes[mode], seed=3, desc_swizzle=how["desc_swizzle"])
        if ops["check"]["A"].ok and ops["check"]["B"].ok:
            problems.append(f"{name}: check_wgmma no longer predicts the disagreement the hardware showed")
    return problems

