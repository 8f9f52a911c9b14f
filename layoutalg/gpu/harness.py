"""Run every hardware check in one process, print a table, write the recordings.

``run_all()`` (also ``python -m layoutalg.gpu`` and ``layoutalg harness run``) runs the
checks -- :mod:`~layoutalg.gpu.mma_check`, :mod:`~layoutalg.gpu.smem_check`,
:mod:`~layoutalg.gpu.wgmma_check`, :mod:`~layoutalg.gpu.bank_check`, :mod:`~layoutalg.gpu.synth_check`,
:mod:`~layoutalg.gpu.tiled_check` -- each failing soft: an exception inside one check becomes a failed row,
never a crash of the run. Each check's recording is written as ``<outdir>/{mma,smem,wgmma,banks,synth,tiled}.json``
with the machine it came from (GPU, driver, CUDA, Triton,
torch, date), so that :mod:`tests.test_gpu_replay` can hold the library to it on a CPU.

The table, per row: check, item, status (pass / fail / error / skipped) and a detail.

The pieces the checks share live here too: :func:`nvcc_cubin`, the environment of their child
processes (:func:`child_env`), Nsight Compute (:func:`ncu_path`, :func:`ncu_launches`), the exact
comparison of a GPU's D with the host's (:func:`compare_exact`) and the CUDA C of a warpgroup's
``wgmma`` main loop (:func:`wgmma_mainloop`)::

    >>> compare_exact(np.array([[1.0, 2.0]]), np.array([[1.0, 3.0]]))["mismatched_elements"]
    1
    >>> print(wgmma_mainloop(8, 16, "f16", "K", "MN", "da[s] + a_base", "db[s] + b_base").splitlines()[8])
          "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%0, %1, %2, %3}, %4, %5, p, 1, 1, 0, 1;\\n}\\n"
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import subprocess
import time
import traceback
from typing import Any

import numpy as np

__all__ = ["environment", "run_all", "table", "write_recording", "load_recording", "DEFAULT_DIR", "PACKAGE_ROOT",
           "nvcc_cubin", "child_env", "ncu_path", "ncu_launches", "compare_exact", "wgmma_mainloop"]

#: The folder that holds the ``layoutalg`` package (the repository root of a checkout).
PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
#: Where the recordings live in the repository.
DEFAULT_DIR = os.path.join(PACKAGE_ROOT, "tests", "data", "hardware")


def nvcc_cubin(source: str, name: str, workdir: str) -> str:
    """Compile CUDA C ``source`` for sm_90a (``nvcc -cubin -O2``) into ``workdir/name.cubin``; its path."""
    src = os.path.join(workdir, f"{name}.cu")
    cub = os.path.join(workdir, f"{name}.cubin")
    with open(src, "w") as fh:
        fh.write(source)
    r = subprocess.run(["nvcc", "-gencode=arch=compute_90a,code=sm_90a", "-cubin", "-O2", "-o", cub, src],
                       capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(f"nvcc failed: {r.stderr[-1500:]}")
    return cub


def child_env() -> dict:
    """``os.environ`` with :data:`PACKAGE_ROOT` first on ``PYTHONPATH``: a check's child process
    (``python -m layoutalg.gpu.<check> ...``, under ncu or isolated from a CUDA error) imports this
    ``layoutalg``."""
    env = dict(os.environ)
    env["PYTHONPATH"] = PACKAGE_ROOT + os.pathsep + env.get("PYTHONPATH", "")
    return env


def ncu_path() -> str | None:
    """The Nsight Compute command line (``ncu`` on PATH, else its usual install places), or None."""
    import shutil

    return shutil.which("ncu") or next((p for p in ("/usr/local/cuda/bin/ncu", "/opt/nvidia/nsight-compute/ncu")
                                        if os.path.exists(p)), None)


def ncu_launches(text: str) -> dict[int, dict[str, float]] | None:
    """``ncu --csv`` output read as {launch ID: {metric name: value}}; None when it holds no table.

    The table starts at its ``"ID"`` header (ncu and the profiled program print before it); rows
    whose ID or value is not a number are skipped.
    """
    import csv
    import io

    start = text.find('"ID"')
    if start < 0:
        return None
    per_id: dict[int, dict[str, float]] = {}
    for r in csv.DictReader(io.StringIO(text[start:])):
        try:
            per_id.setdefault(int(r["ID"]), {})[r["Metric Name"]] = float(str(r["Metric Value"]).replace(",", ""))
        except (KeyError, ValueError):
            continue
    return per_id


def compare_exact(got: np.ndarray, ref: np.ndarray, examples: int = 4) -> dict:
    """``got`` (the GPU's D, NaN where nothing was written) against ``ref`` element for element:
    {"ok", "max_abs_err", "mismatched_elements", "examples"} (the first ``examples`` mismatches)."""
    err = np.abs(got - ref)
    bad = np.argwhere(~(err == 0))
    return {"ok": bool(len(bad) == 0), "max_abs_err": float(np.nanmax(err)) if np.isfinite(err).any() else None,
            "mismatched_elements": int(len(bad)),
            "examples": [{"element": [int(a), int(b)], "hw": float(got[a, b]), "ref": float(ref[a, b])}
                         for a, b in bad[:examples]]}


def wgmma_mainloop(n: int, k: int, dtype: str, major_a: str, major_b: str, desc_a: str, desc_b: str) -> str:
    """CUDA C of one warpgroup's ``wgmma`` main loop: ``float d[n/2]`` zeroed, then for each k-block
    ``s < nk`` one ``wgmma.mma_async m64n<n>k<k>.f32.<dtype>.<dtype>`` (D += A B, scale-d 0 on the
    first block) with the descriptors ``desc_a`` / ``desc_b`` (C expressions of ``s``), committed
    and waited for. 16-bit types carry the transpose immediates (1 for an MN-major operand).

    The text runs from ``float d[...]`` to the loop's closing brace (two-space indented, no final
    newline); the kernel around it declares ``nk`` and what the descriptor expressions name.
    """
    nreg = n // 2  # f32 accumulators per thread: 64*N/128
    dlist = ", ".join(f"%{j}" for j in range(nreg))
    tail = f", {int(major_a == 'MN')}, {int(major_b == 'MN')}" if dtype in ("f16", "bf16") else ""
    asm = (f'"{{\\n.reg .pred p;\\nsetp.ne.b32 p, %{nreg + 2}, 0;\\n"\n'
           f'      "wgmma.mma_async.sync.aligned.m64n{n}k{k}.f32.{dtype}.{dtype} '
           f'{{{dlist}}}, %{nreg}, %{nreg + 1}, p, 1, 1{tail};\\n}}\\n"')
    outs = ", ".join(f'"+f"(d[{j}])' for j in range(nreg))
    return f"""  float d[{nreg}];
  #pragma unroll
  for (int j = 0; j < {nreg}; ++j) d[j] = 0.f;
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
  for (int s = 0; s < nk; ++s) {{
    unsigned long long descA = {desc_a};
    unsigned long long descB = {desc_b};
    asm volatile({asm}
      : {outs}
      : "l"(descA), "l"(descB), "r"(s) : "memory");
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
  }}"""


def environment() -> dict:
    """GPU name, compute capability, driver, CUDA, Triton, torch, CuPy versions, host, UTC date."""
    env: dict[str, Any] = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
           "python": platform.python_version(), "host": platform.node()}
    try:
        import torch

        env["torch"] = torch.__version__
        env["cuda_runtime"] = torch.version.cuda
        if torch.cuda.is_available():
            env["gpu"] = torch.cuda.get_device_name()
            major, minor = torch.cuda.get_device_capability()
            env["capability"] = f"sm_{major}{minor}"
    except Exception as e:  # noqa: BLE001
        env["torch"] = f"unavailable: {e}"
    try:
        import triton

        env["triton"] = triton.__version__
    except Exception:  # noqa: BLE001
        env["triton"] = None
    try:
        import cupy

        env["cupy"] = cupy.__version__
    except Exception:  # noqa: BLE001
        env["cupy"] = None
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20)
        env["driver"] = out.stdout.strip() or None
    except Exception:  # noqa: BLE001
        env["driver"] = None
    try:
        out = subprocess.run(["nvcc", "--version"], capture_output=True, text=True, timeout=20)
        env["nvcc"] = out.stdout.strip().splitlines()[-1] if out.stdout else None
    except Exception:  # noqa: BLE001
        env["nvcc"] = None
    return env


def write_recording(name: str, data: dict, env: dict, outdir: str) -> str:
    """Write ``{"environment": env, **data}`` to ``outdir/name.json``; its path."""
    os.makedirs(outdir, exist_ok=True)
    path = os.path.join(outdir, f"{name}.json")
    with open(path, "w") as fh:
        json.dump({"environment": env, **data}, fh, indent=1, sort_keys=True, default=str)
        fh.write("\n")
    return path


def load_recording(name: str, directory: str = DEFAULT_DIR) -> dict | None:
    """The recording ``directory/name.json``, or None if there is none."""
    path = os.path.join(directory, f"{name}.json")
    if not os.path.exists(path):
        return None
    with open(path) as fh:
        return json.load(fh)


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


def run_all(outdir: str | None = None, checks=("mma", "smem", "wgmma", "banks", "tma", "synth", "tiled"), log=print) -> dict:
    """Run the checks (each failing soft), write the recordings to ``outdir`` (default: tests/data/hardware)."""
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
    for name in checks:
        t = time.time()
        try:
            mod: Any
            if name == "mma":
                from . import mma_check as mod
            elif name == "smem":
                from . import smem_check as mod
            elif name == "banks":
                from . import bank_check as mod
            elif name == "tma":
                from . import tma_check as mod
            elif name == "synth":
                from . import synth_check as mod
            elif name == "tiled":
                from . import tiled_check as mod
            else:
                from . import wgmma_check as mod
            data = mod.run(log=log)
        except Exception as e:  # noqa: BLE001 - a whole check failing is a row, not a crash
            data = {"results": {}, "error": f"{type(e).__name__}: {e}\n{traceback.format_exc()[-1500:]}"}
        data["wall_seconds"] = time.time() - t
        recordings[name] = data
        write_recording(name, data, env, outdir)
        log(f"[{name}] done in {data['wall_seconds']:.1f} s")
    env["total_seconds"] = time.time() - t0
    log(table(recordings))
    log(f"total wall time {env['total_seconds']:.1f} s; recordings in {outdir}")
    return recordings
