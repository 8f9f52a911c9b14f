"""Shared-memory wavefronts of compiled Triton / Gluon kernels: Nsight Compute's counters beside the ttgir.

Each kernel of :data:`KERNELS` runs as one CTA with a known trip count (``reps``: the number of times its
loop body runs). On the GPU, :func:`run` compiles them with the device's Triton, launches each once
under ``ncu`` (:data:`METRICS`: LSU shared-memory wavefronts and warp instructions, load and store, and
the bank conflicts) and records each kernel's ttgir (``compiled.asm["ttgir"]``) with its counters, in
``tests/data/hardware/ncu_wavefronts.json``.

On the CPU, :func:`predicted` reads the recorded ttgir with :func:`layoutalg.kernel.inspect_ttgir`: each
register <-> shared access (``local_alloc`` / ``local_store`` / ``local_load``) gives wavefronts and warp
instructions for all warps of the CTA; times the kernel's trip count for ops inside its loop; summed per
direction. :func:`unmodelled` names the ops that move shared memory without a bank report (a
``convert_layout`` through Triton's scratch buffer, a reduction's scratch, ``wgmma`` operand reads), for
which ncu counts what the prediction cannot.

    >>> [k["name"] for k in KERNELS][:2]
    ['convert.blocked.unswizzled', 'convert.blocked.swizzled']
"""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
import tempfile
import time
from typing import Any

__all__ = ["KERNELS", "METRICS", "EXTRA_METRICS", "SOURCE", "predicted", "unmodelled", "run", "record", "parse_ncu"]

#: the counters read per launch (names as ``ncu --query-metrics`` lists them, plus ``.sum``)
METRICS = (
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "smsp__inst_executed_op_shared_ld.sum",
    "smsp__inst_executed_op_shared_st.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
)

#: cp.async (LDGSTS) counters, read where this ncu knows them (``ncu --query-metrics``)
EXTRA_METRICS = (
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ldgsts.sum",
    "smsp__inst_executed_op_ldgsts.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ldgsts.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum",
)

#: the kernels' Python source (Triton's JIT needs a file): Gluon conversions through shared memory, a loop
#: of them, a transpose through a permuted view, a Triton matmul and a reduction
SOURCE = '''
import triton
import triton.language as tl
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.ampere import async_copy as cp


@gluon.jit
def kn_convert(in_ptr, out_ptr, reps, R: gl.constexpr, C: gl.constexpr, L_IN: gl.constexpr, L_OUT: gl.constexpr,
               SMEM: gl.constexpr):
    rows = gl.arange(0, R, layout=gl.SliceLayout(1, L_IN))
    cols = gl.arange(0, C, layout=gl.SliceLayout(0, L_IN))
    x = gl.load(in_ptr + rows[:, None] * C + cols[None, :])
    buf = gl.allocate_shared_memory(gl.float16, [R, C], SMEM)
    acc = gl.zeros([R, C], gl.float16, L_OUT)
    for i in range(reps):
        buf.store(x)
        gl.thread_barrier()
        acc += buf.load(L_OUT)
        gl.thread_barrier()
    rows2 = gl.arange(0, R, layout=gl.SliceLayout(1, L_OUT))
    cols2 = gl.arange(0, C, layout=gl.SliceLayout(0, L_OUT))
    gl.store(out_ptr + rows2[:, None] * C + cols2[None, :], acc)


@gluon.jit
def kn_transpose(in_ptr, out_ptr, R: gl.constexpr, C: gl.constexpr, L_IN: gl.constexpr, L_OUT: gl.constexpr,
                 SMEM: gl.constexpr):
    rows = gl.arange(0, R, layout=gl.SliceLayout(1, L_IN))
    cols = gl.arange(0, C, layout=gl.SliceLayout(0, L_IN))
    x = gl.load(in_ptr + rows[:, None] * C + cols[None, :])
    buf = gl.allocate_shared_memory(gl.float16, [R, C], SMEM, x)
    y = buf.permute([1, 0]).load(L_OUT)
    r2 = gl.arange(0, C, layout=gl.SliceLayout(1, L_OUT))
    c2 = gl.arange(0, R, layout=gl.SliceLayout(0, L_OUT))
    gl.store(out_ptr + r2[:, None] * R + c2[None, :], y)


@gluon.jit
def kn_cpasync(in_ptr, out_ptr, reps, R: gl.constexpr, C: gl.constexpr, L_IN: gl.constexpr, L_OUT: gl.constexpr,
               SMEM: gl.constexpr):
    rows = gl.arange(0, R, layout=gl.SliceLayout(1, L_IN))
    cols = gl.arange(0, C, layout=gl.SliceLayout(0, L_IN))
    ptrs = in_ptr + rows[:, None] * C + cols[None, :]
    buf = gl.allocate_shared_memory(gl.float16, [R, C], SMEM)
    acc = gl.zeros([R, C], gl.float16, L_OUT)
    for i in range(reps):
        cp.async_copy_global_to_shared(buf, ptrs)
        cp.commit_group()
        cp.wait_group(0)
        gl.thread_barrier()
        acc += buf.load(L_OUT)
        gl.thread_barrier()
    rows2 = gl.arange(0, R, layout=gl.SliceLayout(1, L_OUT))
    cols2 = gl.arange(0, C, layout=gl.SliceLayout(0, L_OUT))
    gl.store(out_ptr + rows2[:, None] * C + cols2[None, :], acc)


@triton.jit
def kn_matmul(a_ptr, b_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * K + rk[None, :]
    b_ptrs = b_ptr + rk[:, None] * BN + rn[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K // BK):
        acc = tl.dot(tl.load(a_ptrs), tl.load(b_ptrs), acc)
        a_ptrs += BK
        b_ptrs += BK * BN
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc.to(tl.float16))


@triton.jit
def kn_reduce(x_ptr, y_ptr, R: tl.constexpr, C: tl.constexpr):
    r = tl.arange(0, R)
    c = tl.arange(0, C)
    x = tl.load(x_ptr + r[:, None] * C + c[None, :])
    tl.store(y_ptr + c, tl.sum(x, axis=0))
'''

#: name, the kernel, its layouts (Gluon constructor text), warps, trip count of the loop (``reps``)
KERNELS: list[dict[str, Any]] = [
    {"name": "convert.blocked.unswizzled", "fn": "kn_convert", "R": 64, "C": 64, "num_warps": 4, "reps": 3,
     "L_IN": ("BlockedLayout", ([1, 8], [4, 8], [4, 1], [1, 0],)), "L_OUT": ("BlockedLayout", ([8, 1], [8, 4], [1, 4], [0, 1],)),
     "SMEM": ("SwizzledSharedLayout", (1, 1, 1, [1, 0],))},
    {"name": "convert.blocked.swizzled", "fn": "kn_convert", "R": 64, "C": 64, "num_warps": 4, "reps": 3,
     "L_IN": ("BlockedLayout", ([1, 8], [4, 8], [4, 1], [1, 0],)), "L_OUT": ("BlockedLayout", ([8, 1], [8, 4], [1, 4], [0, 1],)),
     "SMEM": ("SwizzledSharedLayout", (8, 1, 8, [1, 0],))},
    {"name": "convert.column.nvmma64", "fn": "kn_convert", "R": 64, "C": 64, "num_warps": 4, "reps": 2,
     "L_IN": ("BlockedLayout", ([1, 1], [32, 1], [4, 1], [0, 1],)), "L_OUT": ("BlockedLayout", ([1, 4], [8, 4], [4, 1], [1, 0],)),
     "SMEM": ("NVMMASharedLayout", (64, 16,))},
    {"name": "convert.rows.padded_vec4.8warps", "fn": "kn_convert", "R": 128, "C": 64, "num_warps": 8, "reps": 5,
     "L_IN": ("BlockedLayout", ([1, 4], [2, 16], [8, 1], [1, 0],)), "L_OUT": ("BlockedLayout", ([4, 1], [16, 2], [1, 8], [0, 1],)),
     "SMEM": ("SwizzledSharedLayout", (4, 2, 4, [1, 0],))},
    {"name": "transpose.permuted_view", "fn": "kn_transpose", "R": 64, "C": 64, "num_warps": 4, "reps": 1,
     "L_IN": ("BlockedLayout", ([1, 8], [4, 8], [4, 1], [1, 0],)), "L_OUT": ("BlockedLayout", ([1, 8], [4, 8], [4, 1], [1, 0],)),
     "SMEM": ("SwizzledSharedLayout", (1, 1, 1, [1, 0],))},
    {"name": "transpose.permuted_view.swizzled", "fn": "kn_transpose", "R": 64, "C": 64, "num_warps": 4, "reps": 1,
     "L_IN": ("BlockedLayout", ([1, 8], [4, 8], [4, 1], [1, 0],)), "L_OUT": ("BlockedLayout", ([1, 8], [4, 8], [4, 1], [1, 0],)),
     "SMEM": ("SwizzledSharedLayout", (8, 1, 8, [1, 0],))},
    {"name": "cpasync.rows16B.swizzled", "fn": "kn_cpasync", "R": 64, "C": 64, "num_warps": 4, "reps": 3,
     "L_IN": ("BlockedLayout", ([1, 8], [8, 4], [4, 1], [1, 0],)), "L_OUT": ("BlockedLayout", ([1, 8], [8, 4], [4, 1], [1, 0],)),
     "SMEM": ("SwizzledSharedLayout", (8, 1, 8, [1, 0],))},
    {"name": "cpasync.column4B.unswizzled", "fn": "kn_cpasync", "R": 64, "C": 64, "num_warps": 4, "reps": 2,
     "L_IN": ("BlockedLayout", ([1, 2], [32, 1], [1, 4], [1, 0],)), "L_OUT": ("BlockedLayout", ([1, 8], [8, 4], [4, 1], [1, 0],)),
     "SMEM": ("SwizzledSharedLayout", (1, 1, 1, [1, 0],))},
    {"name": "matmul.sm90a.64x64x32", "fn": "kn_matmul", "BM": 64, "BN": 64, "BK": 32, "K": 128, "num_warps": 4,
     "num_stages": 1, "reps": 4},
    {"name": "reduce.sum_axis0", "fn": "kn_reduce", "R": 64, "C": 64, "num_warps": 4, "reps": 1},
]


def _load_source():
    """Import :data:`SOURCE` from a file (Triton's JIT reads the source of what it compiles)."""
    import hashlib
    import importlib.util

    name = "layoutalg_kernel_ncu_" + hashlib.sha1(SOURCE.encode()).hexdigest()[:12]
    if name in sys.modules:
        return sys.modules[name]
    path = os.path.join(tempfile.mkdtemp(prefix="layoutalg_ncu_"), name + ".py")
    with open(path, "w") as fh:
        fh.write(SOURCE)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def _layout(spec: tuple):
    """A Gluon layout from ``(class name, args)``."""
    from triton.experimental.gluon import language as gl

    name, args = spec
    if name not in ("BlockedLayout", "SwizzledSharedLayout", "NVMMASharedLayout"):
        raise ValueError(f"not a layout class here: {name!r}")
    return getattr(gl, name)(*args)


def _launch(k: dict):
    """Launch kernel ``k`` once on the GPU; (the compiled kernel, output ok?)."""
    import torch

    mod = _load_source()
    fn = getattr(mod, k["fn"])
    dev = "cuda"
    if k["fn"] in ("kn_convert", "kn_transpose", "kn_cpasync"):
        R, C = k["R"], k["C"]
        x = torch.randint(-3, 4, (R, C), device=dev).to(torch.float16)
        out = torch.empty((C, R) if k["fn"] == "kn_transpose" else (R, C), device=dev, dtype=torch.float16)
        lay = {n: _layout(k[n]) for n in ("L_IN", "L_OUT", "SMEM")}
        if k["fn"] in ("kn_convert", "kn_cpasync"):
            c = fn[(1,)](x, out, k["reps"], R, C, lay["L_IN"], lay["L_OUT"], lay["SMEM"], num_warps=k["num_warps"])
            want = x * k["reps"]
        else:
            c = fn[(1,)](x, out, R, C, lay["L_IN"], lay["L_OUT"], lay["SMEM"], num_warps=k["num_warps"])
            want = x.T
    elif k["fn"] == "kn_matmul":
        a = torch.randint(-2, 3, (k["BM"], k["K"]), device=dev).to(torch.float16)
        b = torch.randint(-2, 3, (k["K"], k["BN"]), device=dev).to(torch.float16)
        out = torch.empty((k["BM"], k["BN"]), device=dev, dtype=torch.float16)
        c = fn[(1,)](a, b, out, k["K"], k["BM"], k["BN"], k["BK"], num_warps=k["num_warps"], num_stages=k["num_stages"])
        want = (a.float() @ b.float()).half()
    else:
        x = torch.randint(-3, 4, (k["R"], k["C"]), device=dev).to(torch.float32)
        out = torch.empty((k["C"],), device=dev, dtype=torch.float32)
        c = fn[(1,)](x, out, k["R"], k["C"], num_warps=k["num_warps"])
        want = x.sum(0)
    torch.cuda.synchronize()
    return c, bool(torch.equal(out, want))


def _child(path: str) -> None:
    """Under ncu: compile each kernel (a warm-up launch outside the profiled name filter is not possible, so
    the compile happens at the first launch, which is the profiled one), launch once, write ttgir to ``path``."""
    res = {}
    for k in KERNELS:
        try:
            c, ok = _launch(k)
            res[k["name"]] = {"ttgir": c.asm["ttgir"], "output_ok": ok, "kernel": c.name}
        except Exception as e:  # noqa: BLE001
            res[k["name"]] = {"error": f"{type(e).__name__}: {str(e)[-800:]}"}
    with open(path, "w") as fh:
        json.dump(res, fh)


def parse_ncu(text: str) -> list[dict]:
    """``ncu --csv`` output as one dict per launch, in launch order: {"id", "kernel", metric: value}."""
    start = text.find('"ID"')
    if start < 0:
        return []
    per: dict[int, dict] = {}
    for r in csv.DictReader(io.StringIO(text[start:])):
        try:
            i = int(r["ID"])
            rec = per.setdefault(i, {"id": i, "kernel": r.get("Kernel Name", "")})
            rec[r["Metric Name"]] = float(str(r["Metric Value"]).replace(",", ""))
        except (KeyError, ValueError):
            continue
    return [per[i] for i in sorted(per)]


def run(log=print) -> dict:
    """Launch every kernel under ncu (one process), pair the launches with the kernels, record ttgir and
    counters. Where ncu is missing or not permitted, its error is recorded."""
    from .common import child_env, ncu_path, ncu_query_metrics

    t0 = time.time()
    ncu = ncu_path()
    out: dict[str, Any] = {"metrics": list(METRICS), "kernels": {}}
    if not ncu:
        out["ncu_error"] = "ncu not found"
        return out
    known = ncu_query_metrics(ncu)
    out["metrics_known"] = {m: (m.rsplit(".", 1)[0] in known) for m in METRICS + EXTRA_METRICS}
    extra = [m for m in EXTRA_METRICS if out["metrics_known"][m]]
    out["metrics"] = list(METRICS) + extra
    path = os.path.join(tempfile.mkdtemp(prefix="layoutalg_ncu_"), "ttgir.json")
    p = subprocess.run([ncu, "--csv", "--metrics", ",".join(out["metrics"]), "-k", "regex:^kn_", sys.executable, "-m",
                        "layoutalg.gpu.kernel_ncu", "--child", path], capture_output=True, text=True, env=child_env(),
                       timeout=400)
    text = p.stdout + p.stderr
    if "ERR_NVGPUCTRPERM" in text:
        out["ncu_error"] = "ERR_NVGPUCTRPERM: ncu is not permitted to read the GPU's counters here"
    launches = parse_ncu(p.stdout)
    got: dict = {}
    if os.path.exists(path):
        with open(path) as fh:
            got = json.load(fh)
    i = 0
    for k in KERNELS:
        rec: dict[str, Any] = {kk: v for kk, v in k.items()}
        rec.update(got.get(k["name"], {"error": f"child wrote nothing: {text[-600:]}"}))
        if "error" not in rec and i < len(launches):
            launch = launches[i]
            i += 1
            if not launch["kernel"].startswith(k["fn"]):
                rec["ncu_warning"] = f"launch {launch['id']} is {launch['kernel']!r}, expected {k['fn']}"
            rec["ncu"] = {m: launch.get(m) for m in out["metrics"]}
        out["kernels"][k["name"]] = rec
    if not launches:
        out.setdefault("ncu_error", f"no ncu table (rc {p.returncode}): {text[-1500:]}")
    out["seconds"] = time.time() - t0
    log(f"[kernel_ncu] {len(launches)} launches profiled in {out['seconds']:.1f}s")
    return out


def unmodelled(ttgir: str) -> list[str]:
    """The ops of a kernel that move shared memory without a bank report of :func:`inspect_ttgir`."""
    from ..kernel import inspect_ttgir

    rep = inspect_ttgir(ttgir)
    names = []
    for o in rep.ops:
        if o.banks is not None:
            continue
        n = o.op.name
        if n == "ttg.convert_layout" and any("shared memory" in note for note in o.notes):
            names.append(f"{n} (line {o.op.line}): through Triton's scratch buffer")
        elif n in ("ttng.warp_group_dot", "ttng.warpgroup_mma"):
            names.append(f"{n} (line {o.op.line}): wgmma reads shared memory outside the LSU")
        elif n in ("ttg.local_alloc", "ttg.local_store", "ttg.local_load") and o.notes:
            names.append(f"{n} (line {o.op.line}): {o.notes[0]}")
    if "tt.reduce" in ttgir:
        names.append("tt.reduce: a cross-warp reduction goes through Triton's scratch buffer")
    return names


def predicted(ttgir: str, reps: int) -> dict[str, int]:
    """Wavefronts, warp instructions and the ideal wavefronts (no bank conflict) per direction predicted from the
    ttgir: each bank-reported access for all warps, times ``reps`` for accesses inside the kernel's loop (an
    ``scf.for`` around the op)."""
    from ..kernel import inspect_ttgir

    rep = inspect_ttgir(ttgir)
    lines = ttgir.splitlines()
    loops = _loop_spans(lines)
    out = {"ld_wavefronts": 0, "st_wavefronts": 0, "ld_instructions": 0, "st_instructions": 0, "ld_ideal": 0,
           "st_ideal": 0}
    for o in rep.accesses:
        n = reps if any(a < o.op.line <= b for a, b in loops) else 1
        d = "st" if o.direction == "store" else "ld"
        out[f"{d}_wavefronts"] += n * int(o.banks.wavefronts)
        out[f"{d}_instructions"] += n * len(o.banks.instructions)
        out[f"{d}_ideal"] += n * int(o.banks.ideal)
    return out


def _loop_spans(lines: list[str]) -> list[tuple[int, int]]:
    """(first, last) 1-based line numbers of every ``scf.for`` body (by brace depth)."""
    spans = []
    stack: list[tuple[int, int]] = []
    depth = 0
    for i, line in enumerate(lines, 1):
        opens, closes = line.count("{"), line.count("}")
        if "scf.for" in line:
            stack.append((i, depth))
        depth += opens - closes
        while stack and depth <= stack[-1][1]:
            start, _ = stack.pop()
            spans.append((start, i))
    return spans


def record(outdir: str, log=print) -> str:
    """Run and write ``outdir/ncu_wavefronts.json``."""
    from .common import environment, write_recording

    return write_recording("ncu_wavefronts", run(log), environment(), outdir)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        _child(sys.argv[2])
    elif len(sys.argv) == 3 and sys.argv[1] == "--record":
        print(record(sys.argv[2]))
    else:
        print("usage: python -m layoutalg.gpu.kernel_ncu --record OUTDIR", file=sys.stderr)
        sys.exit(2)
