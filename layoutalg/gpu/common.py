"""What the hardware checks share, below all of them: compiling, child processes, Nsight Compute, recordings.

Every check module (:mod:`~layoutalg.gpu.mma_check`, :mod:`~layoutalg.gpu.tma_check`, ...) imports from
here, and :mod:`~layoutalg.gpu.harness` (which runs them all) imports the checks: imports flow one way,
``common <- checks <- harness``. Nothing here imports a check.

* :func:`nvcc_cubin` compiles CUDA C for sm_90a; :func:`prefetch_cubins` starts several such compiles at
  once (concurrent ``nvcc`` processes) so that a later :func:`nvcc_cubin` of the same source only waits
  for its result; compiled cubins are kept for the run (keyed by the source text);
* :func:`child_env` is the environment of a check's child process (``python -m layoutalg.gpu.<check>``,
  under ncu or isolated from a CUDA error): this ``layoutalg`` first on ``PYTHONPATH`` and a writable
  bytecode cache (:func:`pycache_dir`), so that each child does not recompile its imports;
* Nsight Compute: :func:`ncu_path`, :func:`ncu_query_metrics` (once per run), :func:`ncu_launches`;
* the exact comparison of a GPU's D with the host's (:func:`compare_exact`) and the CUDA C of a
  warpgroup's ``wgmma`` main loop (:func:`wgmma_mainloop`);
* recordings: :func:`environment`, :func:`write_recording`, :func:`load_recording`, :data:`DEFAULT_DIR`.

    >>> compare_exact(np.array([[1.0, 2.0]]), np.array([[1.0, 3.0]]))["mismatched_elements"]
    1
    >>> print(wgmma_mainloop(8, 16, "f16", "K", "MN", "da[s] + a_base", "db[s] + b_base").splitlines()[8])
          "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%0, %1, %2, %3}, %4, %5, p, 1, 1, 0, 1;\\n}\\n"
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import platform
import subprocess
import tempfile
import threading
from typing import Any

import numpy as np

__all__ = ["environment", "write_recording", "load_recording", "DEFAULT_DIR", "PACKAGE_ROOT", "nvcc_cubin",
           "prefetch_cubins", "child_env", "pycache_dir", "ncu_path", "ncu_query_metrics", "ncu_launches",
           "compare_exact", "wgmma_mainloop"]

#: The folder that holds the ``layoutalg`` package (the repository root of a checkout).
PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
#: Where the recordings live in the repository.
DEFAULT_DIR = os.path.join(PACKAGE_ROOT, "tests", "data", "hardware")


#: nvcc's command line for every cubin of the harness (the source file and ``-o`` are appended)
NVCC = ("nvcc", "-gencode=arch=compute_90a,code=sm_90a", "-cubin", "-O2")

_cubins: dict[str, "_Compile"] = {}  # sha256 of a source -> its compile (this run's cache)
_cubins_lock = threading.Lock()


class _Compile:
    """One ``nvcc`` process compiling one source; :meth:`result` waits for it (the cubin's path, or raises)."""

    def __init__(self, source: str, name: str, workdir: str) -> None:
        self.src = os.path.join(workdir, f"{name}.cu")
        self.cubin = os.path.join(workdir, f"{name}.cubin")
        with open(self.src, "w") as fh:
            fh.write(source)
        self.proc = subprocess.Popen([*NVCC, "-o", self.cubin, self.src], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        self.error: str | None = None
        self.done = False
        self.lock = threading.Lock()

    def result(self) -> str:
        with self.lock:
            if not self.done:
                _, err = self.proc.communicate()
                self.error = f"nvcc failed: {err[-1500:]}" if self.proc.returncode else None
                self.done = True
        if self.error:
            raise RuntimeError(self.error)
        return self.cubin


def _start_compile(source: str, name: str, workdir: str | None) -> _Compile:
    key = hashlib.sha256(source.encode()).hexdigest()
    with _cubins_lock:
        job = _cubins.get(key)
        if job is None or (job.done and job.error) or not os.path.exists(job.src):
            job = _Compile(source, name, workdir or tempfile.mkdtemp(prefix="layoutalg_nvcc_"))
            _cubins[key] = job
    return job


def nvcc_cubin(source: str, name: str, workdir: str) -> str:
    """Compile CUDA C ``source`` for sm_90a (``nvcc -cubin -O2``) into ``workdir/name.cubin``; its path.

    A source compiled before in this process (or being compiled, see :func:`prefetch_cubins`) is not
    compiled again: the earlier cubin's path is returned (it may lie in another folder).
    """
    return _start_compile(source, name, workdir).result()


def prefetch_cubins(sources: dict[str, str], workdir: str | None = None) -> None:
    """Start compiling every ``{name: CUDA C source}`` now, each in its own ``nvcc`` process, without
    waiting: a later :func:`nvcc_cubin` of the same source waits only for what is left of its compile."""
    for name, source in sources.items():
        _start_compile(source, name, workdir)


def pycache_dir() -> str:
    """A writable folder for the bytecode of the harness's child processes (``PYTHONPYCACHEPREFIX``): where
    site-packages is read-only, each child would otherwise compile sympy & co. from source again."""
    d = os.path.join(tempfile.gettempdir(), "layoutalg_gpu_pycache")
    os.makedirs(d, exist_ok=True)
    return d


def child_env() -> dict:
    """``os.environ`` with :data:`PACKAGE_ROOT` first on ``PYTHONPATH`` and bytecode cached in
    :func:`pycache_dir`: a check's child process (``python -m layoutalg.gpu.<check> ...``, under ncu or
    isolated from a CUDA error) imports this ``layoutalg``."""
    env = dict(os.environ)
    env["PYTHONPATH"] = PACKAGE_ROOT + os.pathsep + env.get("PYTHONPATH", "")
    env.setdefault("PYTHONPYCACHEPREFIX", pycache_dir())
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def ncu_path() -> str | None:
    """The Nsight Compute command line (``ncu`` on PATH, else its usual install places), or None."""
    import shutil

    return shutil.which("ncu") or next((p for p in ("/usr/local/cuda/bin/ncu", "/opt/nvidia/nsight-compute/ncu")
                                        if os.path.exists(p)), None)


_query_metrics: dict[str, str] = {}


def ncu_query_metrics(ncu: str) -> str:
    """``ncu --query-metrics`` output (the counters this device's ncu knows), asked once per process."""
    if ncu not in _query_metrics:
        p = subprocess.run([ncu, "--query-metrics"], capture_output=True, text=True, timeout=120)
        _query_metrics[ncu] = p.stdout
    return _query_metrics[ncu]


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
