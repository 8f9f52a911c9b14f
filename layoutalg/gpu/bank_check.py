"""Shared-memory bank conflicts measured: ``clock64`` around warp-wide loads, and Nsight Compute counters.

For each case -- a shared-memory layout (coordinate -> element offset) and a TV access pattern
``(thread, value) -> coordinate index`` -- the host computes every lane's byte address with
:func:`layoutalg.banks.access_addresses` and the predicted wavefronts with
:func:`layoutalg.banks.analyze`. One warp on the GPU then issues the same ``ld.shared`` (2-byte
``ld.shared.u16`` or 16-byte ``ld.shared.v4.u32``) ``16 * ITERS`` times, independent loads back to
back (``ld.volatile``, so that ptxas keeps every load), and measures ``clock64`` around the
loop: cycles per load grow with the wavefronts (above an issue floor of a lone warp). Where
``ncu`` can read the counters, it also records ``l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum`` and
``l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum`` per launch (a child process).

The cases: a row-major 64x64 fp16 tile read down a column (thread t reads row t) with 2-byte and
16-byte loads -- every row starts at a multiple of 128 bytes, so all 32 lanes hit the same banks --,
the 128B-swizzled tile (``nvidia.hopper.wgmma.tile("K", 128, "f16", (64, 64))``, CuTe's
``Layout_K_SW128_Atom``) read the same way, a row read (conflict-free), a padded row pitch of 72
elements, and a 2-way pattern.

    >>> [c["name"] for c in cases()][:2]
    ['rowmajor.col.2B', 'rowmajor.col.16B']
    >>> [predict(c)["wavefronts"] for c in cases()]
    [32, 32, 4, 4, 1, 2, 4, 4]
"""

from __future__ import annotations

import subprocess
import sys
import time

import numpy as np

from .common import child_env, ncu_launches, ncu_path, nvcc_cubin

__all__ = ["cases", "predict", "addresses", "cuda_source", "run", "replay", "ITERS", "UNROLL"]

ITERS = 256
UNROLL = 16
_SMEM_BYTES = 16384


def _layouts() -> dict:
    from ..layout import Layout
    from ..nvidia.hopper.wgmma import tile

    return {"rowmajor": Layout((64, 64), (64, 1)),
            "sw128": tile("K", 128, "f16", (64, 64)),
            "pad72": Layout((64, 64), (72, 1))}


def _accesses() -> dict:
    from ..layout import Layout

    # coordinate index of the 64x64 tile is row + 64 * col (colexicographic)
    return {"col": Layout((32, 1), (1, 0)),            # thread t: (t, 0)
            "col16": Layout((32, 8), (1, 64)),         # thread t: (t, 0..7), one 16-byte vector
            "row": Layout((32, 1), (64, 0)),           # thread t: (0, t)
            "2way": Layout(((16, 2), 1), ((256, 1), 0))}  # t<16: (0, 4t); t>=16: (1, 4(t-16))


#: name -> (layout, access, vector bytes)
_CASES = [
    ("rowmajor.col.2B", "rowmajor", "col", 2),
    ("rowmajor.col.16B", "rowmajor", "col16", 16),
    ("sw128.col.2B", "sw128", "col", 2),
    ("sw128.col.16B", "sw128", "col16", 16),
    ("rowmajor.row.2B", "rowmajor", "row", 2),
    ("rowmajor.2way.2B", "rowmajor", "2way", 2),
    ("pad72.col.2B", "pad72", "col", 2),
    ("pad72.col.16B", "pad72", "col16", 16),
]


def cases() -> list[dict]:
    """The measured cases: name, smem layout name, access name, vector bytes."""
    return [{"name": n, "layout": lay, "access": acc, "vector_bytes": vb} for n, lay, acc, vb in _CASES]


def addresses(case: dict) -> list[int]:
    """Byte address of each of the 32 lanes' single access (the library's layouts)."""
    from ..banks import access_addresses

    a = access_addresses(_layouts()[case["layout"]], _accesses()[case["access"]], 2, case["vector_bytes"])
    assert a.shape[1] == 1
    return [int(x) for x in a[:, 0]]


def predict(case: dict) -> dict:
    """The analyser's prediction: wavefronts, ideal, ways of one warp-wide access."""
    from ..banks import analyze

    r = analyze(_layouts()[case["layout"]], _accesses()[case["access"]], 2, case["vector_bytes"])
    return {"wavefronts": r.wavefronts, "ideal": r.ideal, "ways": r.ways}


def cuda_source() -> str:
    """Two kernels (2-byte and 16-byte loads): one warp, ``iters * 16`` loads at its lane's address."""
    loads16 = "\n".join(
        f'    asm volatile("ld.volatile.shared.v4.u32 {{%0,%1,%2,%3}}, [%4];" : "=r"(x0), "=r"(x1), "=r"(x2), "=r"(x3) : "r"(a));'
        f"\n    acc{j % 4} ^= x0 ^ x1 ^ x2 ^ x3;" for j in range(UNROLL))
    loads2 = "\n".join(
        f'    asm volatile("ld.volatile.shared.u16 %0, [%1];" : "=r"(x{j % 4}) : "r"(a));\n    acc{j % 4} ^= x{j % 4};'
        for j in range(UNROLL))
    out = ["#include <cstdint>"]
    for name, body in (("bank_ld2", loads2), ("bank_ld16", loads16)):
        out.append(f"""
extern "C" __global__ void {name}(const unsigned* addr, int iters, long long* cycles, unsigned* sink) {{
  __shared__ __align__(1024) unsigned char sm[{_SMEM_BYTES}];
  int lane = threadIdx.x;
  for (int i = lane; i < {_SMEM_BYTES}; i += 32) sm[i] = (unsigned char)i;
  __syncwarp();
  unsigned a = (unsigned)__cvta_generic_to_shared(sm) + addr[lane];
  unsigned acc0 = 0, acc1 = 0, acc2 = 0, acc3 = 0, x0 = 0, x1 = 0, x2 = 0, x3 = 0;
  long long t0 = clock64();
  for (int it = 0; it < iters; ++it) {{
{body}
  }}
  long long t1 = clock64();
  if (lane == 0) cycles[0] = t1 - t0;
  sink[lane] = acc0 ^ acc1 ^ acc2 ^ acc3;
}}""")
    return "\n".join(out)


def _compile(workdir: str) -> str:
    return nvcc_cubin(cuda_source(), "bank_kernels", workdir)


def _launch(cubin: str, case: dict, iters: int) -> int:
    import cupy as cp

    mod = cp.RawModule(path=cubin)
    fn = mod.get_function("bank_ld16" if case["vector_bytes"] == 16 else "bank_ld2")
    addr = cp.asarray(np.array(addresses(case), dtype=np.uint32))
    cyc = cp.zeros(1, dtype=cp.int64)
    sink = cp.zeros(32, dtype=cp.uint32)
    fn((1,), (32,), (addr, np.int32(iters), cyc, sink))
    cp.cuda.runtime.deviceSynchronize()
    return int(cyc.get()[0])


def _ncu_child(cubin: str) -> None:
    """Launch each case once (iters = 1: 16 loads) so that ncu reports per-launch counters."""
    for c in cases():
        _launch(cubin, c, 1)


_NCU_METRICS = ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
                "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum")


def _run_ncu(cubin: str) -> dict:
    """Per case, the ncu counters of its launch (16 loads), or why ncu could not give them."""
    ncu = ncu_path()
    if not ncu:
        return {"error": "ncu not found"}
    try:
        p = subprocess.run([ncu, "--csv", "--metrics", ",".join(_NCU_METRICS), "-k", "regex:bank_ld",
                            sys.executable, "-m", "layoutalg.gpu.bank_check", "--ncu-child", cubin],
                           capture_output=True, text=True, env=child_env(), timeout=180)
    except Exception as e:  # noqa: BLE001
        return {"error": f"{type(e).__name__}: {e}"}
    text = p.stdout
    per_id = ncu_launches(text)
    if per_id is None:
        return {"error": f"no ncu table (rc {p.returncode}): {(p.stdout + p.stderr)[-600:]}"}
    ids = sorted(per_id)
    if len(ids) != len(cases()):
        return {"error": f"ncu reported {len(ids)} launches, expected {len(cases())}", "raw": text[-1500:]}
    return {c["name"]: {"wavefronts": per_id[i].get(_NCU_METRICS[0]), "bank_conflicts": per_id[i].get(_NCU_METRICS[1])}
            for c, i in zip(cases(), ids)}


def run(log=print) -> dict:
    """Measure every case (clock64, best of 5) and, where possible, read ncu's counters; the recording."""
    import tempfile

    t0 = time.time()
    workdir = tempfile.mkdtemp(prefix="layoutalg_banks_")
    cubin = _compile(workdir)
    results = {}
    for c in cases():
        rec = dict(c)
        try:
            rec["addresses"] = addresses(c)
            rec["predicted"] = predict(c)
            _launch(cubin, c, 4)  # warm-up
            cyc = min(_launch(cubin, c, ITERS) for _ in range(5))
            rec["cycles"] = cyc
            rec["cycles_per_load"] = cyc / (ITERS * UNROLL)
            rec["status"] = "measured"
        except Exception as e:  # noqa: BLE001
            rec.update({"status": "error", "error": f"{type(e).__name__}: {str(e)[-400:]}"})
        results[c["name"]] = rec
    t_clock = time.time() - t0
    ncu = _run_ncu(cubin)
    if "error" not in ncu:
        for name, v in ncu.items():
            results[name]["ncu"] = v
    problems = agreement(results)
    for rec in results.values():
        if rec["status"] == "measured":
            rec["status"] = "pass" if not any(p.startswith(rec["name"]) for p in problems) else "fail"
    return {"results": results, "ncu": ncu if "error" in ncu else "ok", "problems": problems,
            "iters": ITERS, "unroll": UNROLL, "seconds": {"clock64": t_clock, "total": time.time() - t0}}


def agreement(results: dict, *, tolerance: float = 0.2) -> list[str]:
    """Where measurements contradict the analyser's predictions (a list of sentences; empty = agree).

    * ncu (when recorded), exactly: the launch's shared-load wavefronts = 16 x predicted wavefronts
      (16 loads) and its bank conflicts = 16 x (predicted - ideal) wavefronts.
    * clock64, within ``tolerance``: one warp's loop costs ``c(w) ~ max(c1, s * w) .. c1 + s * w``
      cycles per load for ``w`` predicted wavefronts, where ``c1`` is the cycles of the cheapest
      1-wavefront case (the issue floor of a lone warp) and ``s`` the cycles per wavefront of the
      heavily conflicted cases (``w >= 16``; about 2 on an H100 for one warp); and a case predicted
      to take more wavefronts than another never measures fewer cycles.
    """
    out = []
    meas = {n: r for n, r in results.items() if "cycles_per_load" in r}
    for n, r in results.items():
        if "ncu" in r and r["ncu"].get("wavefronts") is not None:
            want = UNROLL * r["predicted"]["wavefronts"]
            if r["ncu"]["wavefronts"] != want:
                out.append(f"{n}: ncu counted {r['ncu']['wavefronts']:g} wavefronts for {UNROLL} loads, "
                           f"the analyser predicts {want}")
            extra = UNROLL * (r["predicted"]["wavefronts"] - r["predicted"]["ideal"])
            if r["ncu"].get("bank_conflicts") is not None and r["ncu"]["bank_conflicts"] != extra:
                out.append(f"{n}: ncu counted {r['ncu']['bank_conflicts']:g} bank conflicts for {UNROLL} loads, "
                           f"the analyser predicts {extra} extra wavefronts")
    ones = [r["cycles_per_load"] for r in meas.values() if r["predicted"]["wavefronts"] == 1]
    heavy = [r["cycles_per_load"] / r["predicted"]["wavefronts"] for r in meas.values()
             if r["predicted"]["wavefronts"] >= 16]
    if not ones or not heavy:
        return out + ["clock64: need a 1-wavefront case and a case of >= 16 wavefronts"]
    c1, slope = min(ones), float(np.median(heavy))
    for n, r in meas.items():
        w, c = r["predicted"]["wavefronts"], r["cycles_per_load"]
        lo, hi = (1 - tolerance) * max(c1, slope * w), (1 + tolerance) * (c1 + slope * w)
        if not lo <= c <= hi:
            out.append(f"{n}: {c:.2f} cycles/load is outside [{lo:.2f}, {hi:.2f}], the range for {w} predicted "
                       f"wavefronts (floor {c1:.2f} cycles, {slope:.2f} cycles per wavefront)")
    for a, ra in meas.items():
        for b, rb in meas.items():
            if ra["predicted"]["wavefronts"] < rb["predicted"]["wavefronts"] and ra["cycles_per_load"] > rb["cycles_per_load"]:
                out.append(f"{a}: predicted fewer wavefronts than {b} but measured more cycles")
    return out


def replay(recording: dict) -> list[str]:
    """The recorded measurements against the analyser *now*: addresses unchanged, predictions agree."""
    problems = []
    results = {}
    for name, rec in recording.get("results", {}).items():
        c = {k: rec[k] for k in ("name", "layout", "access", "vector_bytes")}
        if addresses(c) != rec["addresses"]:
            problems.append(f"{name}: the library's layouts now give other lane addresses than were measured")
        results[name] = {**rec, "predicted": predict(c)}
    return problems + agreement(results)


if __name__ == "__main__":  # child process under ncu
    if len(sys.argv) == 3 and sys.argv[1] == "--ncu-child":
        _ncu_child(sys.argv[2])
