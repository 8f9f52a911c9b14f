"""Record Triton's linear layouts of MFMA operands (one warp), the second oracle for the CDNA maps.

Triton (3.6, CPU build) computes the linear layout of a Gluon ``AMDMFMALayout`` (the accumulator),
of its ``DotOperandLayout`` (A: opIdx 0, B: opIdx 1) and of CDNA4's MFMA scale layout (recorded with
the ``f8f6f4`` shapes as ``SA`` / ``SB``: the scales of ``v_mfma_scale_*``) without a GPU::

    from triton._C.libtriton import ir, gluon_ir
    b = gluon_ir.GluonOpBuilder(ctx); b.to_linear_layout(layout._to_ir(b), shape)

Its bases are ``[dim0, dim1]`` (row, col of the tensor) and XOR-combine: the element of register
``r`` of lane ``l`` is the XOR of the register bases of the set bits of ``r`` and the lane bases of
the set bits of ``l``. This recorder asks for every configuration below, each in its own process
(an invalid configuration aborts the process), and writes ``tests/data/amd/triton_mfma.json``.
The AMDMFMALayout versions are 3 (CDNA3, gfx942) and 4 (CDNA4, gfx950); one warp, not transposed,
``k_width`` = the values a lane holds (AMD's register map; a smaller ``k_width`` permutes K).

``AMDWMMALayout`` versions 1 (RDNA3) and 2 (RDNA4) are recorded too, wave32 (Triton's RDNA wave size).

Run: ``python tests/amd_triton_cases.py``.
"""

from __future__ import annotations

import datetime
import json
import pathlib
import subprocess
import sys
from typing import Any

OUT = pathlib.Path(__file__).resolve().parent / "data" / "amd" / "triton_mfma.json"

#: (arch, instruction, Triton version, instr_shape, k_width, element bit width of A/B)
CONFIGS: list[tuple[str, str, int, list[int], int, int]] = [
    ("cdna3", "v_mfma_f32_32x32x8_f16", 3, [32, 32, 8], 4, 16),
    ("cdna3", "v_mfma_f32_16x16x16_f16", 3, [16, 16, 16], 4, 16),
    ("cdna3", "v_mfma_i32_32x32x16_i8", 3, [32, 32, 16], 8, 8),
    ("cdna3", "v_mfma_f32_16x16x32_fp8_fp8", 3, [16, 16, 32], 8, 8),
    ("cdna3", "v_mfma_f32_32x32x2_f32", 3, [32, 32, 2], 1, 32),
    ("cdna3", "v_mfma_f32_16x16x4_f32", 3, [16, 16, 4], 1, 32),
    ("cdna4", "v_mfma_f32_16x16x32_f16", 4, [16, 16, 32], 8, 16),
    ("cdna4", "v_mfma_f32_32x32x16_bf16", 4, [32, 32, 16], 8, 16),
    ("cdna4", "v_mfma_i32_16x16x64_i8", 4, [16, 16, 64], 16, 8),
    ("cdna4", "v_mfma_i32_32x32x32_i8", 4, [32, 32, 32], 16, 8),
    ("cdna4", "v_mfma_f32_16x16x128_f8f6f4", 4, [16, 16, 128], 32, 8),
    ("cdna4", "v_mfma_f32_32x32x64_f8f6f4", 4, [32, 32, 64], 32, 8),
]

#: (arch, instruction, Triton AMDWMMALayout version, instr_shape, k_width): wave32, one warp
WMMA_CONFIGS: list[tuple[str, str, int, list[int], int]] = [
    ("rdna3", "v_wmma_f32_16x16x16_f16", 1, [16, 16, 16], 16),
    ("rdna3", "v_wmma_i32_16x16x16_iu8", 1, [16, 16, 16], 16),
    ("rdna4", "v_wmma_f32_16x16x16_f16", 2, [16, 16, 16], 4),
    ("rdna4", "v_wmma_f32_16x16x16_f16", 2, [16, 16, 16], 8),   # what tl.dot picks: a K permutation of the ISA's map
    ("rdna4", "v_wmma_i32_16x16x16_iu8", 2, [16, 16, 16], 8),
]

_WMMA_CHILD = r"""
import json, sys
from triton._C.libtriton import ir, gluon_ir
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.amd import AMDWMMALayout
version, shape, k_width = json.loads(sys.argv[1])
M, N, K = shape
ctx = ir.context(); ir.load_dialects(ctx); b = gluon_ir.GluonOpBuilder(ctx)
acc = AMDWMMALayout(version=version, transposed=False, warps_per_cta=[1, 1], instr_shape=shape)
def bases(ll):
    return {"register": ll.reg_bases, "lane": ll.lane_bases}
print(json.dumps({"D": bases(b.to_linear_layout(acc._to_ir(b), [M, N])),
                  "A": bases(b.to_linear_layout(gl.DotOperandLayout(0, acc, k_width)._to_ir(b), [M, K])),
                  "B": bases(b.to_linear_layout(gl.DotOperandLayout(1, acc, k_width)._to_ir(b), [K, N]))}))
"""

_CHILD = r"""
import json, sys
from triton._C.libtriton import ir, gluon_ir
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.amd import AMDMFMALayout
version, shape, k_width, bits, scaled = json.loads(sys.argv[1])
M, N, K = shape
ctx = ir.context(); ir.load_dialects(ctx); b = gluon_ir.GluonOpBuilder(ctx)
acc = AMDMFMALayout(version=version, instr_shape=shape, transposed=False, warps_per_cta=[1, 1],
                    element_bitwidth=None if bits >= 32 else 32)
def bases(ll):
    return {"register": ll.reg_bases, "lane": ll.lane_bases}
out = {"D": bases(b.to_linear_layout(acc._to_ir(b), [M, N])),
       "A": bases(b.to_linear_layout(gl.DotOperandLayout(0, acc, k_width)._to_ir(b), [M, K])),
       "B": bases(b.to_linear_layout(gl.DotOperandLayout(1, acc, k_width)._to_ir(b), [K, N]))}
if scaled:
    for op, idx, R in (("SA", 0, M), ("SB", 1, N)):
        out[op] = bases(gluon_ir.get_amd_mfma_scale_layout(idx, [R, K // 32], M, [1, 1], [1, 1]))
print(json.dumps(out))
"""


def triton_version() -> str | None:
    try:
        import triton
    except ImportError:
        return None
    return str(triton.__version__)


def ask(version: int, shape: list[int], k_width: int, bits: int, scaled: bool = False,
        wmma: bool = False) -> dict[str, Any] | None:
    """Triton's bases for one configuration, or None when Triton refuses it (the child process aborts)."""
    args = [version, shape, k_width] if wmma else [version, shape, k_width, bits, scaled]
    p = subprocess.run([sys.executable, "-c", _WMMA_CHILD if wmma else _CHILD, json.dumps(args)],
                       capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        return None
    return dict(json.loads(p.stdout.strip().splitlines()[-1]))


def evaluate(bases: dict[str, list[list[int]]], lane: int, register: int) -> tuple[int, int]:
    """``(dim0, dim1)`` of register ``register`` of lane ``lane``: XOR of the bases of their set bits."""
    x = y = 0
    for name, n in (("register", register), ("lane", lane)):
        for bit, (a, b) in enumerate(bases[name]):
            if n >> bit & 1:
                x, y = x ^ a, y ^ b
    return x, y


def main() -> int:
    version = triton_version()
    if version is None:
        print("Triton is not installed", file=sys.stderr)
        return 2
    cases = []
    for arch, name, v, shape, kw, bits in CONFIGS:
        got = ask(v, shape, kw, bits, "f8f6f4" in name)
        cases.append({"arch": arch, "instruction": name, "version": v, "instr_shape": shape, "k_width": kw,
                      "bits": bits, "layouts": got})
        print(f"{arch} {name}: {'ok' if got else 'refused'}")
    wmma_cases = []
    for arch, name, v, shape, kw in WMMA_CONFIGS:
        got = ask(v, shape, kw, 0, wmma=True)
        wmma_cases.append({"arch": arch, "instruction": name, "version": v, "instr_shape": shape, "k_width": kw,
                           "wave": 32, "layouts": got})
        print(f"{arch} {name} k_width={kw}: {'ok' if got else 'refused'}")
    OUT.write_text(json.dumps({"provenance": {"tool": f"triton {version} (gluon_ir.GluonOpBuilder.to_linear_layout)",
                                              "date": datetime.date.today().isoformat(),
                                              "command": "python tests/amd_triton_cases.py"},
                               "cases": cases, "wmma_cases": wmma_cases}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
