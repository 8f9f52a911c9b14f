"""Triton 3.6's ``get_tmem_reg_layout`` as an oracle, run in a child process (its C++ aborts on some inputs).

``ask(configs)`` sends each configuration (a dict: dtype, shape, block, col_stride, cta_split,
scales, num_warps, instr_variant, cga_layout) to a worker process that calls
``triton.experimental.gluon.language.nvidia.blackwell.get_tmem_reg_layout`` and answers one JSON
line per configuration: ``{"bases": {...}}``, ``{"unsupported": msg}`` (Triton's ValueError) or
``{"error": msg}``; a configuration that kills the worker (LLVM ERROR / abort) is answered
``{"abort": stderr tail}`` and the worker restarted. ``python tests/gluon_tmem_oracle.py --record``
writes the random sweep to tests/data/gluon/tmem_reg_layouts.json.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys

from oracle_recorder import OracleRecorder

TTGL_TYPES = {"f32": "float32", "f16": "float16", "bf16": "bfloat16", "f8e4m3": "float8e4nv", "i8": "int8",
              "f8e5m2": "float8e5", "i32": "int32"}

WORKER = r"""
import json, sys
from triton.experimental.gluon import language as ttgl
from triton.experimental.gluon.language.nvidia.blackwell import (
    get_tmem_reg_layout, TensorMemoryLayout, TensorMemoryScalesLayout)
for line in sys.stdin:
    c = json.loads(line)
    try:
        split = tuple(c["cta_split"]) if tuple(c["cta_split"]) != (1, 1) else None
        if c["scales"]:
            lay = TensorMemoryScalesLayout(cta_split_num=split)
        else:
            lay = TensorMemoryLayout(tuple(c["block"]), c["col_stride"], cta_split_num=split)
        L = get_tmem_reg_layout(getattr(ttgl, c["ttgl"]), tuple(c["shape"]), lay, c["num_warps"],
                                instr_variant=c["instr_variant"], cga_layout=[list(b) for b in c["cga_layout"]])
        out = {"bases": {"register": L.reg_bases, "lane": L.lane_bases, "warp": L.warp_bases,
                         "block": L.block_bases}, "shape": list(L.shape)}
    except ValueError as e:
        out = {"unsupported": str(e)[:300]}
    except Exception as e:
        out = {"error": type(e).__name__ + ": " + str(e)[:300]}
    print(json.dumps(out), flush=True)
"""


def ask(configs: list[dict]) -> list[dict]:
    """Triton's answer for each configuration (see the module docstring)."""
    out: list[dict] = []
    todo = list(configs)
    while todo:
        proc = subprocess.Popen([sys.executable, "-c", WORKER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        payload = "".join(json.dumps({**c, "ttgl": TTGL_TYPES[c["dtype"]]}) + "\n" for c in todo)
        stdout, stderr = proc.communicate(payload, timeout=900)
        answers = [json.loads(x) for x in stdout.splitlines() if x.strip()]
        out += answers
        todo = todo[len(answers):]
        if todo:  # the worker died on todo[0]
            if proc.returncode == 0:
                raise RuntimeError("Triton worker stopped early: " + stderr[-2000:])
            out.append({"abort": stderr.strip().splitlines()[-1][:300] if stderr.strip() else f"exit {proc.returncode}"})
            todo = todo[1:]
    return out


def random_configs(n: int, seed: int = 0) -> list[dict]:
    """Random get_tmem_reg_layout configurations over the parameters Gluon takes."""
    rng = random.Random(seed)
    out = []
    while len(out) < n:
        scales = rng.random() < 0.15
        dtype = "i8" if scales and rng.random() < 0.5 else rng.choice(["f32", "f32", "f16", "bf16", "f8e4m3", "i8"])
        if scales:
            dtype = rng.choice(["i8", "f8e4m3"])
        bits = 32 if dtype == "f32" else 16 if dtype in ("f16", "bf16") else 8
        split = rng.choice([(1, 1)] * 4 + [(2, 1), (1, 2)])
        M = rng.choice([64, 128, 128, 256]) * split[0]
        N = rng.choice([4, 8, 16, 32, 64, 128, 256, 512]) * split[1] if not scales else rng.choice([4, 8, 16, 32]) * split[1]
        if scales:
            M = rng.choice([32, 64, 128, 256]) * split[0]
        bm = rng.choice([64, 128])
        bn = rng.choice([n_ for n_ in (8, 16, 32, 64, 128, 256) if n_ <= max(8, N // split[1])])
        col_stride = rng.choice([1, 32 // bits]) if bits < 32 else 1
        cga = []
        if split == (2, 1):
            cga = [[1, 0]]
        elif split == (1, 2):
            cga = [[0, 1]]
        variant = rng.choice(["32x32b", "32x32b", "16x64b", "16x128b", "16x256b", "32x32b_splitn"])
        out.append({"dtype": dtype, "shape": [M, N], "block": [bm, bn], "col_stride": col_stride,
                    "cta_split": list(split), "scales": scales, "num_warps": rng.choice([4, 4, 8, 16]),
                    "instr_variant": variant, "cga_layout": cga})
    return out


def record(rec: OracleRecorder, n: int = 400) -> dict:
    cfgs = random_configs(n)
    ans = ask(cfgs)
    return {**rec.provenance(f"python tests/gluon_tmem_oracle.py --record (random_configs({n}, seed=0); Triton's "
                             "get_tmem_reg_layout on the CPU, one worker process; no GPU)"),
            "cases": [{"config": c, "triton": a} for c, a in zip(cfgs, ans)]}


REC = OracleRecorder("gluon", "tmem_reg_layouts", record, script="gluon_tmem_oracle", json_options={"indent": 0, "sort_keys": True})
RECORDING = str(REC.path)

if __name__ == "__main__":  # pragma: no cover - a recording tool
    raise SystemExit(REC.main())


# ------------------------------------------------------------------------------- sm_100a PTX
KERNEL = '''
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.blackwell import (
    allocate_tensor_memory, TensorMemoryLayout, get_tmem_reg_layout)


@gluon.jit
def kern(out_ptr, M: gl.constexpr, N: gl.constexpr, BM: gl.constexpr, BN: gl.constexpr, VAR: gl.constexpr,
         NW: gl.constexpr):
    tmem_layout: gl.constexpr = TensorMemoryLayout((BM, BN), 1)
    reg: gl.constexpr = get_tmem_reg_layout(gl.float32, (M, N), tmem_layout, NW, instr_variant=VAR)
    acc = allocate_tensor_memory(gl.float32, [M, N], tmem_layout)
    x = acc.load(reg)
    rows = gl.arange(0, M, layout=gl.SliceLayout(1, reg))
    cols = gl.arange(0, N, layout=gl.SliceLayout(0, reg))
    gl.store(out_ptr + rows[:, None] * N + cols[None, :], x)
'''


def tmem_load_ptx(M: int, N: int, BM: int, BN: int, variant: str, num_warps: int) -> str:
    """PTX (``.target sm_100a``) of a Gluon kernel loading an fp32 M x N TMEM buffer with ``get_tmem_reg_layout``."""
    import hashlib
    import importlib.util
    import tempfile

    from triton._C.libtriton import ir
    from triton.backends.compiler import GPUTarget
    from triton.compiler.compiler import make_backend
    from triton.experimental.gluon._runtime import GluonASTSource

    path = os.path.join(tempfile.mkdtemp(prefix="layoutalg-tmem-"), "tmem_kern.py")
    with open(path, "w") as fh:
        fh.write(KERNEL)
    spec = importlib.util.spec_from_file_location("tmem_kern", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    consts = {"M": M, "N": N, "BM": BM, "BN": BN, "VAR": variant, "NW": num_warps}
    src = GluonASTSource(mod.kern, signature={"out_ptr": "*fp32", **{k: "constexpr" for k in consts}},
                         constexprs=consts)
    target = GPUTarget("cuda", 100, 32)
    backend = make_backend(target)
    options = backend.parse_options({"num_warps": num_warps})
    stages: dict = {}
    backend.add_stages(stages, options, src.language)
    ctx = ir.context()
    ir.load_dialects(ctx)
    backend.load_dialects(ctx)
    module = src.make_ir(target, options, backend.get_codegen_implementation(options), backend.get_module_map(), ctx)
    metadata = {"hash": hashlib.sha256(repr(consts).encode()).hexdigest(), "target": target, **options.__dict__}
    for ext, step in list(stages.items())[list(stages).index(src.ext) + 1:]:
        module = step(module, metadata)
        if ext == "ptx":
            return module
    raise RuntimeError("no ptx stage")


def ptxas_blackwell() -> str | None:
    """The ``ptxas-blackwell`` of the Triton wheel, or None."""
    import importlib.util

    spec = importlib.util.find_spec("triton")
    if spec is None or spec.origin is None:
        return None
    p = os.path.join(os.path.dirname(spec.origin), "backends", "nvidia", "bin", "ptxas-blackwell")
    return p if os.path.exists(p) else None


def assemble(ptx: str) -> subprocess.CompletedProcess:
    """Run ptxas-blackwell -arch=sm_100a on ``ptx``."""
    import tempfile

    d = tempfile.mkdtemp(prefix="layoutalg-ptxas-")
    src = os.path.join(d, "k.ptx")
    with open(src, "w") as fh:
        fh.write(ptx)
    return subprocess.run([ptxas_blackwell(), "-arch=sm_100a", src, "-o", os.path.join(d, "k.cubin")],
                          capture_output=True, text=True, timeout=300)
