"""Record where Triton's compiler puts each element of an AMD shared layout: the oracle for ``amd.lds``.

``to_linear_layout`` of a shared layout aborts Triton 3.6 (it wraps the answer in a distributed
attribute), so the compiler is asked instead. For each case a Gluon kernel is generated that stores
the tensor ``v[r, c] = r*C + c``, held whole in every lane's registers (a ``DistributedLinearLayout``
with register bases only), into a shared allocation of the layout; compiled on the CPU for
``gfx942`` (wave64) up to LLVM IR, LLVM folds every store to ``store <constants>, ptr addrspace(3)
@global_smem + byte offset``. Reading the stores back gives ``where[r*C + c]`` = element offset
(element ``(0, 0)`` sits at offset 0 in every layout here). The file keeps each placement's SHA-1
(and its unit steps, to show where a difference lies): the replay compares every element through it.
The same kernels compile for ``gfx950``.

Run ``python tests/amd_lds_cases.py`` to rewrite ``tests/data/amd/lds_triton.json``; the test
(``tests/test_amd_lds.py``) replays the file and compiles a sample live when Triton is importable.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import pathlib
import re
import sys
from typing import Any

import numpy as np
from gluon_oracle import load_module  # imports a Gluon kernel's source once per distinct text

OUT = pathlib.Path(__file__).resolve().parent / "data" / "amd" / "lds_triton.json"


def swizzled_cases() -> list[dict]:
    out = []
    for shape in ([16, 32], [32, 16], [8, 64], [64, 8], [32, 32]):
        for order in ([1, 0], [0, 1]):
            for vec in (1, 2, 4, 8):
                for per_phase in (1, 2, 4):
                    for max_phase in (1, 4, 8, 16):
                        if (vec, per_phase, max_phase) != (1, 1, 1) and max_phase == 1:
                            continue
                        out.append({"kind": "swizzled", "shape": shape, "order": order, "vec": vec,
                                    "per_phase": per_phase, "max_phase": max_phase, "bits": 16})
    return out


def padded_cases() -> list[dict]:
    out = []
    for shape in ([16, 32], [32, 16], [8, 64], [64, 8]):
        for order in ([1, 0], [0, 1]):
            row = shape[order[0]]
            for pairs in ([[row, 1]], [[row, 4]], [[row, 8]], [[2 * row, 4]], [[row // 2, 2]], [[row, 4], [4 * row, 8]],
                          [[2, 1], [4, 2]]):
                out.append({"kind": "padded", "shape": shape, "order": order, "pairs": pairs, "bits": 16})
    # Triton's docstring example: a remapping that interleaves rows
    out.append({"kind": "padded", "shape": [8, 4], "pairs": [[8, 1]], "bits": 16,
                "offset_bases": [[0, 1], [0, 2], [2, 0], [4, 0], [1, 0]]})
    out.append({"kind": "padded", "shape": [16, 32], "pairs": [[64, 8]], "bits": 32,
                "offset_bases": [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [8, 0], [4, 0], [2, 0], [1, 0]]})
    return out


def gluon_layout(case: dict) -> Any:
    from triton.experimental.gluon import language as gl

    if case["kind"] == "swizzled":
        return gl.SwizzledSharedLayout(case["vec"], case["per_phase"], case["max_phase"], case["order"])
    if "offset_bases" in case:
        return gl.PaddedSharedLayout(case["pairs"], case["offset_bases"], [], case["shape"])
    return gl.PaddedSharedLayout.with_identity_for(case["pairs"], case["shape"], case["order"])


def _source(R: int, C: int, bits: int) -> str:
    return "\n".join([
        "from triton.experimental import gluon", "from triton.experimental.gluon import language as gl", "", "",
        "@gluon.jit", "def kern(out_ptr, L: gl.constexpr, RL: gl.constexpr):",
        f"    rows = gl.arange(0, {R}, layout=gl.SliceLayout(1, RL))",
        f"    cols = gl.arange(0, {C}, layout=gl.SliceLayout(0, RL))",
        f"    idx = rows[:, None] * {C} + cols[None, :]",
        f"    m = gl.allocate_shared_memory(gl.int{bits}, [{R}, {C}], L)",
        f"    m.store(idx.to(gl.int{bits}))", ""])


def compile_llir(case: dict, arch: str = "gfx942") -> str:
    """LLVM IR of the store kernel of ``case`` compiled for ``arch`` (wave64) on the CPU."""
    from triton._C.libtriton import ir
    from triton.backends.compiler import GPUTarget
    from triton.compiler.compiler import make_backend
    from triton.experimental.gluon import language as gl
    from triton.experimental.gluon._runtime import GluonASTSource

    R, C = case["shape"]
    bits = case["bits"]
    order = case.get("order", [1, 0])
    regs = []
    for d in order:  # registers in the layout's contiguous order: the stores vectorize (faster to compile)
        regs += [[1 << i, 0] if d == 0 else [0, 1 << i] for i in range((R if d == 0 else C).bit_length() - 1)]
    reg_layout = gl.DistributedLinearLayout(reg_bases=regs, lane_bases=[[0, 0]] * 6, warp_bases=[], block_bases=[],
                                            shape=[R, C])
    fn = load_module(_source(R, C, bits)).kern
    src = GluonASTSource(fn, signature={"out_ptr": f"*i{bits}", "L": "constexpr", "RL": "constexpr"},
                         constexprs={"L": gluon_layout(case), "RL": reg_layout})
    target = GPUTarget("hip", arch, 64)
    backend = make_backend(target)
    options = backend.parse_options({"num_warps": 1})
    stages: dict = {}
    backend.add_stages(stages, options, src.language)
    ctx = ir.context()
    ir.load_dialects(ctx)
    backend.load_dialects(ctx)
    module = src.make_ir(target, options, backend.get_codegen_implementation(options), backend.get_module_map(), ctx)
    metadata = {"hash": hashlib.sha256(repr(case).encode()).hexdigest(), "target": target, **options.__dict__}
    for ext, step in list(stages.items())[list(stages).index(src.ext) + 1:]:
        module = step(module, metadata)
        if ext == "llir":
            return str(module)
    raise AssertionError("no llir stage")


_STORE = re.compile(
    r"store (?:<(?P<n>\d+) x i(?P<vw>\d+)>|i(?P<sw>\d+)) (?P<val>zeroinitializer|splat \([^)]*\)|<[^>]*>|-?\d+), "
    r"ptr addrspace\(3\) (?:@global_smem|getelementptr[^,]*, ptr addrspace\(3\) @global_smem(?:, i32 (?P<off>-?\d+))?\))")


def placements(llir: str, n: int, bits: int) -> list[int]:
    """where[v] = element offset of value v, from the constant LDS stores of ``llir``."""
    addr_of: dict[int, int] = {}
    for m in _STORE.finditer(llir):
        width = int(m["vw"] or m["sw"])
        val = m["val"]
        n_vals = int(m["n"] or 1)
        vals = ([0] * n_vals if val == "zeroinitializer" else
                [int(val.split()[-1].rstrip(")"))] * n_vals if val.startswith("splat") else
                [int(x.split()[1]) for x in val[1:-1].split(",")] if val.startswith("<") else [int(val)])
        base = int(m["off"] or 0)
        for k, v in enumerate(vals):
            v &= (1 << width) - 1
            if v in addr_of:
                raise AssertionError(f"value {v} stored twice")
            addr_of[v] = base + k * width // 8
    if sorted(addr_of) != list(range(n)):
        raise AssertionError(f"the stores hold {len(addr_of)} distinct values, expected 0..{n - 1}")
    zero = addr_of[0]
    nb = bits // 8
    return [(addr_of[v] - zero) // nb for v in range(n)]


def digest(where: list[int], shape: list[int]) -> dict:
    """What the data file keeps of a placement: the SHA-1 of the whole list (``where`` as comma-separated
    decimals) and, to locate a difference, the offsets of the unit steps ``(2^i, 0)`` and ``(0, 2^j)``."""
    R, C = shape
    text = ",".join(map(str, where))
    return {"sha1": hashlib.sha1(text.encode()).hexdigest(),
            "rows": [where[(1 << i) * C] for i in range(R.bit_length() - 1)],
            "cols": [where[1 << j] for j in range(C.bit_length() - 1)]}


def record(case: dict, arch: str = "gfx942") -> list[int]:
    R, C = case["shape"]
    return placements(compile_llir(case, arch), R * C, case["bits"])


def main() -> None:
    import triton

    cases = swizzled_cases() + padded_cases()
    out = []
    for k, case in enumerate(cases):
        out.append({**case, **digest(record(case), case["shape"])})
        if k % 20 == 0:
            print(f"{k}/{len(cases)}", file=sys.stderr)
    doc = {"source": f"Triton {triton.__version__}, Gluon kernels compiled for gfx942 on the CPU (LLVM IR LDS stores); "
                     "where[r*C + c] = element offset, kept as its SHA-1 and unit steps", "recorded": datetime.date.today().isoformat(),
           "recorder": "tests/amd_lds_cases.py", "cases": out}
    OUT.write_text(json.dumps(doc, separators=(",", ":")) + "\n")
    print(f"wrote {len(out)} cases to {OUT}", file=sys.stderr)


if __name__ == "__main__":
    np.seterr(all="raise")
    main()
