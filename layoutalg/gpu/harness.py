"""Run every hardware check in one process, print a table, write the recordings.

``run_all()`` (also ``python -m layoutalg.gpu`` and ``layoutalg harness run``) runs the
checks -- :mod:`~layoutalg.gpu.mma_check`, :mod:`~layoutalg.gpu.smem_check`,
:mod:`~layoutalg.gpu.wgmma_check`, :mod:`~layoutalg.gpu.bank_check`, :mod:`~layoutalg.gpu.synth_check`,
:mod:`~layoutalg.gpu.tiled_check` -- each failing soft: an exception inside one check becomes a failed row,
never a crash of the run. Each check's recording is written as ``<outdir>/{mma,smem,wgmma,banks,synth,tiled}.json``
with the machine it came from (GPU, driver, CUDA, Triton,
torch, date), so that :mod:`tests.test_gpu_replay` can hold the library to it on a CPU.

The table, per row: check, item, status (pass / fail / error / skipped) and a detail.

The pieces the checks share live below them, in :mod:`~layoutalg.gpu.common` (re-exported here):
:func:`nvcc_cubin`, :func:`child_env`, :func:`ncu_path`, :func:`ncu_launches`, :func:`compare_exact`,
:func:`wgmma_mainloop`, :func:`environment`, :func:`write_recording`, :func:`load_recording`.

Speed: before the first check, :func:`run_all` starts every check's ``nvcc`` compiles at once
(:func:`prepare`, :func:`~layoutalg.gpu.common.prefetch_cubins`) and the mma check's Triton compiles in
child processes, so that the checks, run one after the other as before, mostly find their kernels built.
"""

from __future__ import annotations

import time
import traceback
from typing import Any

from .common import (DEFAULT_DIR, PACKAGE_ROOT, child_env, compare_exact, environment, load_recording, ncu_launches,
                     ncu_path, nvcc_cubin, prefetch_cubins, write_recording, wgmma_mainloop)


__all__ = ["environment", "run_all", "prepare", "CHECKS", "LANES", "table", "write_recording", "load_recording",
           "DEFAULT_DIR", "PACKAGE_ROOT", "nvcc_cubin", "child_env", "ncu_path", "ncu_launches", "compare_exact", "wgmma_mainloop"]

def _rows(name: str, data: dict) -> list[tuple]:
    rows = []
    if name == "tma":  # four sections of cases (layoutalg.gpu.tma_check)
        for sec in ("placement", "refusals", "e2e", "negatives"):
            for key, rec in sorted(data.get(sec, {}).items()):
                st = rec.get("status") or ("pass" if rec.get("agree") else "fail")
                rows.append((name, f"{sec}:{key}", st, str(rec.get("error", rec.get("driver_error", "")))[:90]))
        for key, rec in sorted(data.get("cute", {}).get("cases", {}).items()):
            rows.append((name, f"cute:{key}", rec.get("status", "?"), "bytes equal" if rec.get("bytes_equal") else ""))
    for key, rec in sorted(data.get("results", {}).items()):
        st = rec.get("status", "?")
        if name == "mma" and st in ("pass", "fail"):
            det = " ".join(f"{op}:{rec[op]['mismatches']}/{rec[op]['slots']}" for op in ("A", "B", "D") if op in rec)
            det += f" e2e:{'ok' if rec['e2e']['ok'] else 'BAD'}"
        elif name == "wgmma" and st in ("pass", "fail"):
            det = f"k-blocks {len(rec.get('descriptors_A', []))} max|err| {rec.get('max_abs_err')}"
        elif name == "tiled" and st in ("pass", "fail"):
            det = f"D exact: {rec.get('ok')} (max|err| {rec.get('max_abs_err')})"
        elif name == "smem" and st in ("pass", "fail"):
            det = f"{rec['R']}x{rec['C']} mismatches {rec['mismatches']}"
        elif name == "synth" and "predicted" in rec:
            from .synth_check import measured

            m, v = measured(rec)
            det = f"predicted {rec['predicted']['wavefronts']} wavefronts" + (f", ncu {v:g} ({m})" if m else "")
        elif name == "banks" and "cycles_per_load" in rec:
            det = (f"predicted {rec['predicted']['wavefronts']} wavefronts ({rec['predicted']['ways']}-way), "
                   f"{rec['cycles_per_load']:.2f} cycles/load"
                   + (f", ncu {rec['ncu']['wavefronts']:g} wavefronts/16 loads" if rec.get("ncu") else ""))
        else:
            det = str(rec.get("error", ""))[:90]
        rows.append((name, key, st, det))
    for key, rec in sorted(data.get("mixed", {}).items()):
        rows.append((name, f"mixed:{key}", rec.get("status", "?"),
                     f"max|err| {rec.get('max_abs_err')}" if "max_abs_err" in rec else str(rec.get("error", ""))[:90]))
    for key, rec in sorted(data.get("offsets", {}).items()):
        if "hardware_bo" not in rec:
            rows.append((name, f"offset:{key}", rec.get("status", "error"), str(rec.get("error", ""))[:90]))
            continue
        rows.append((name, f"offset:{key}", rec["status"],
                     f"exact D with bo abs {rec['hardware_bo']['abs']} rel {rec['hardware_bo']['rel']}; "
                     f"library sliced {rec['library_bo']['sliced']} origin {rec['library_bo']['origin']}"))
    for key, rec in sorted(data.get("banks", {}).items()) if name == "tiled" else ():
        ncu = rec.get("ncu") or {}
        rows.append((name, f"banks:{key}", rec.get("status", "?"),
                     f"predicted {rec['predicted']['wavefronts']} wavefronts (ideal {rec['predicted']['ideal']}), "
                     f"ncu {ncu.get('l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum')}"))
    for rec in data.get("skipped", []):
        rows.append((name, f"{'sp.' if rec['sparse'] else ''}{rec['shape']}.{rec['dtype']}"
                     + (f".{rec['kind']}" if rec.get("kind") else ""), "skipped", rec["reason"]))
    for key, rec in sorted(data.get("negatives", {}).items()):
        rows.append((name, f"negative:{key}", rec["status"], rec["how_caught"]))
    if data.get("error"):
        rows.append((name, "(check)", "error", str(data["error"])[:120]))
    return rows


def table(recordings: dict) -> str:
    """A plain-text table of every row of every recording, with a summary line per check."""
    lines = []
    for name, data in recordings.items():
        rows = _rows(name, data)
        counts: dict = {}
        for r in rows:
            counts[r[2]] = counts.get(r[2], 0) + 1
        secs = data.get("seconds")
        total = secs.get("total") if isinstance(secs, dict) else secs
        lines.append(f"== {name}: " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))
                     + (f" ({total:.1f} s)" if total is not None else ""))
        for r in rows:
            lines.append(f"  {r[1]:<34} {r[2]:<8} {r[3]}")
    return "\n".join(lines)


#: the checks, in the order they run (and are tabled)
CHECKS = ("mma", "smem", "wgmma", "banks", "tma", "synth", "tiled")
#: with ``jobs=2``: checks that only read data back (run one after the other in one thread) beside those that
#: count or time (ncu, clock64), run one after the other in another thread
LANES = (("mma", "smem", "wgmma", "tma"), ("banks", "synth", "tiled"))


def _module(name: str) -> Any:
    from . import bank_check, mma_check, smem_check, synth_check, tiled_check, tma_check, wgmma_check

    return {"mma": mma_check, "smem": smem_check, "wgmma": wgmma_check, "banks": bank_check, "tma": tma_check,
            "synth": synth_check, "tiled": tiled_check}[name]


def prepare(checks=CHECKS, log=print) -> None:
    """Start what the checks will wait for, without waiting: every check's ``nvcc`` compile at once
    (:func:`~layoutalg.gpu.common.prefetch_cubins`), and a child process that compiles the checks' imports
    into the children's bytecode cache (:func:`~layoutalg.gpu.common.child_env`)."""
    import subprocess
    import sys

    sources = {"wgmma": ("cuda_source", "wgmma_kernels"), "banks": ("cuda_source", "bank_kernels"),
               "tma": ("kernel_source", "tma_kernels"), "synth": ("cuda_source", "synth_kernels"),
               "tiled": ("cuda_source", "tiled_kernels")}
    for name in checks:
        if name in sources:
            fn, file = sources[name]
            try:
                prefetch_cubins({file: getattr(_module(name), fn)()})
            except Exception as e:  # noqa: BLE001 - the check compiles (and reports) it itself
                log(f"[prepare] {name}: {type(e).__name__}: {e}")
    subprocess.Popen([sys.executable, "-c", "import layoutalg.gpu.tma_check, layoutalg.gpu.synth_check, "
                      "layoutalg.gpu.tiled_check, layoutalg.gpu.wgmma_check, layoutalg.gpu.bank_check"],
                     env=child_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _run_one(name: str, env: dict, outdir: str, log) -> dict:
    t = time.time()
    try:
        data = _module(name).run(log=log)
    except Exception as e:  # noqa: BLE001 - a whole check failing is a row, not a crash
        data = {"results": {}, "error": f"{type(e).__name__}: {e}\n{traceback.format_exc()[-1500:]}"}
    data["wall_seconds"] = time.time() - t
    write_recording(name, data, env, outdir)
    log(f"[{name}] done in {data['wall_seconds']:.1f} s")
    return data


def run_all(outdir: str | None = None, checks=CHECKS, log=print, jobs: int = 2) -> dict:
    """Run the checks (each failing soft), write the recordings to ``outdir`` (default: tests/data/hardware).

    First :func:`prepare` starts the compiles; then the checks run one after the other (``jobs=1``) or in
    the two :data:`LANES` side by side (``jobs=2``).
    """
    import threading

    outdir = outdir or DEFAULT_DIR
    t0 = time.time()
    env = environment()
    log(f"device: {env.get('gpu')} ({env.get('capability')}), driver {env.get('driver')}, "
        f"triton {env.get('triton')}, torch {env.get('torch')}, {env['date']}")
    recordings: dict = {}
    if not env.get("gpu"):
        # never overwrite the recordings with a run that could not reach a GPU
        log("no CUDA GPU visible (torch.cuda unavailable): nothing was run, no recording written")
        return recordings
    checks = tuple(checks)
    prepare(checks, log)
    got: dict = {}
    if jobs <= 1:
        for name in checks:
            got[name] = _run_one(name, env, outdir, log)
    else:
        lanes = [[c for c in lane if c in checks] for lane in LANES]
        lanes.append([c for c in checks if not any(c in lane for lane in LANES)])

        def lane_job(names: list) -> None:
            for name in names:
                got[name] = _run_one(name, env, outdir, log)

        threads = [threading.Thread(target=lane_job, args=(lane,)) for lane in lanes if lane]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    for name in checks:
        recordings[name] = got[name]
    env["total_seconds"] = time.time() - t0
    log(table(recordings))
    log(f"total wall time {env['total_seconds']:.1f} s; recordings in {outdir}")
    return recordings
