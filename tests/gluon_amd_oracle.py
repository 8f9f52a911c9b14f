"""Record Triton's answers for Gluon's AMD layouts: the oracle of ``interop.gluon_amd`` (answers and refusals).

Triton 3.6 (CPU build) computes, without a GPU, the linear layout of ``AMDMFMALayout``,
``AMDWMMALayout`` (versions 1-3), their ``DotOperandLayout`` operands, and the scale layouts of
``mfma_scaled`` / ``wmma_scaled`` (``gluon_ir.get_amd_mfma_scale_layout`` /
``get_amd_wmma_scale_layout``). A configuration it refuses either fails Gluon's Python checks
(``AssertionError`` in ``verify``, recorded as ``"refused": "python: <message>"``) or aborts the
process in C++ (SIGABRT, recorded as ``"refused": "abort"``). Each configuration is asked in a
worker process; a worker that dies is replaced and the configuration that killed it recorded as
refused. ``cases(seed, n)`` draws the configurations, :data:`PROBES` breaks each rule once;
:func:`engine` answers a list.

A quarter of the accumulator and operand draws are batched (rank 3, a batch dimension first; a fifth
of those rank 4, which only an MFMA ``DotOperandLayout`` takes).

Run: ``python tests/gluon_amd_oracle.py`` (writes ``tests/data/gluon/amd_layouts.json``, 2000 cases).
"""

from __future__ import annotations

import datetime
import json
import pathlib
import random
import subprocess
import sys
from typing import Any

OUT = pathlib.Path(__file__).resolve().parent / "data" / "gluon" / "amd_layouts.json"

MFMA_SHAPES = {1: [[32, 32, 8], [16, 16, 16], [32, 32, 2], [16, 16, 4], [4, 4, 4], [64, 4, 4], [4, 64, 4]],
               2: [[32, 32, 8], [16, 16, 16], [32, 32, 4], [16, 16, 4], [4, 4, 4]],
               3: [[32, 32, 8], [16, 16, 16], [32, 32, 16], [16, 16, 32], [32, 32, 2], [16, 16, 4], [64, 4, 4], [4, 64, 4]],
               4: [[32, 32, 16], [16, 16, 32], [32, 32, 64], [16, 16, 128], [32, 32, 8], [16, 16, 16], [16, 16, 64]]}
WMMA_SHAPES = {1: [[16, 16, 16], [16, 16, 32]], 2: [[16, 16, 16], [16, 16, 32]],
               3: [[16, 16, 4], [16, 16, 32], [16, 16, 64], [16, 16, 128], [16, 16, 16]]}
WARPS = [[1, 1], [2, 2], [4, 1], [1, 4], [2, 1], [1, 2], [8, 1]]
TILES = [[1, 1], [2, 1], [1, 2], [2, 2], [4, 1]]
SHAPES = [[32, 32], [64, 64], [16, 128], [128, 32], [16, 16], [64, 16], [256, 64], [32, 8]]
KWIDTHS = [1, 2, 4, 8, 16, 32]


def draw(rng: random.Random) -> dict[str, Any]:
    """One random configuration (every kind, valid or not)."""
    kind = rng.choice(["mfma", "wmma", "mfma_dot", "wmma_dot", "mfma_scale", "wmma_scale"])
    if kind in ("mfma", "mfma_dot", "mfma_scale"):
        v = rng.choice([1, 2, 3, 4])
        p = {"version": v, "instr_shape": rng.choice(MFMA_SHAPES[v]), "transposed": rng.random() < 0.5,
             "warps_per_cta": rng.choice(WARPS), "tiles_per_warp": rng.choice(TILES),
             "element_bitwidth": rng.choice([32, 32, 32, 64])}
    else:
        v = rng.choice([1, 2, 3])
        p = {"version": v, "instr_shape": rng.choice(WMMA_SHAPES[v]), "transposed": rng.random() < 0.3,
             "warps_per_cta": rng.choice(WARPS), "tiles_per_warp": rng.choice(TILES)}
    c: dict[str, Any] = {"kind": kind, "layout": p, "shape": rng.choice(SHAPES)}
    if kind.endswith("_dot"):
        c["operand_index"] = rng.choice([0, 1])
        c["k_width"] = rng.choice(KWIDTHS)
    if kind.endswith("_scale"):
        c["operand_index"] = rng.choice([0, 1])
        c["shape"] = [rng.choice([16, 32, 64, 128, 256]), rng.choice([1, 2, 4, 8, 16])]
    elif rng.random() < 0.25:   # batched: a batch dimension first
        p["warps_per_cta"] = [rng.choice([1, 2, 4])] + p["warps_per_cta"]
        p["tiles_per_warp"] = [rng.choice([1, 1, 2])] + p["tiles_per_warp"]
        c["shape"] = [rng.choice([1, 2, 4, 8])] + c["shape"]
        if rng.random() < 0.2:   # rank 4: only an MFMA operand takes it
            p["warps_per_cta"] = [rng.choice([1, 2])] + p["warps_per_cta"]
            p["tiles_per_warp"] = [1] + p["tiles_per_warp"]
            c["shape"] = [rng.choice([1, 2])] + c["shape"]
    return c


_MF = {"version": 3, "instr_shape": [32, 32, 8], "transposed": False, "warps_per_cta": [1, 1], "tiles_per_warp": [1, 1],
       "element_bitwidth": 32}
_WM = {"version": 2, "instr_shape": [16, 16, 16], "transposed": False, "warps_per_cta": [1, 1], "tiles_per_warp": [1, 1]}
#: one configuration breaking each rule of layoutalg.interop.gluon_amd.RULES that Triton enforces
PROBES: dict[str, dict[str, Any]] = {
    "mfma-version": {"kind": "mfma", "layout": {**_MF, "version": 5}, "shape": [32, 32]},
    "mfma-instr-shape": {"kind": "mfma", "layout": {**_MF, "instr_shape": [4, 4, 4]}, "shape": [32, 32]},
    "mfma-element-bitwidth": {"kind": "mfma", "layout": {**_MF, "element_bitwidth": 16}, "shape": [32, 32]},
    "mfma-64x4-transposed": {"kind": "mfma", "layout": {**_MF, "instr_shape": [64, 4, 4]}, "shape": [64, 64]},
    "wmma-version": {"kind": "wmma", "layout": {**_WM, "version": 4}, "shape": [16, 16]},
    "wmma-instr-shape": {"kind": "wmma", "layout": {**_WM, "version": 3}, "shape": [16, 16]},
    "wmma-tensor-shape": {"kind": "wmma", "layout": _WM, "shape": [8, 64]},
    "power-of-two": {"kind": "mfma", "layout": {**_MF, "warps_per_cta": [3, 1]}, "shape": [64, 64]},
    "rank": {"kind": "mfma", "layout": {**_MF, "warps_per_cta": [2, 1, 1], "tiles_per_warp": [1, 1, 1]},
             "shape": [64, 64]},
    "operand-index": {"kind": "mfma_dot", "layout": _MF, "shape": [32, 32], "operand_index": 2, "k_width": 4},
    "k-width": {"kind": "wmma_dot", "layout": _WM, "shape": [16, 16], "operand_index": 0, "k_width": 2},
    "scale-instr-m": {"kind": "mfma_scale", "layout": {**_MF, "instr_shape": [4, 64, 4]}, "shape": [64, 2],
                      "operand_index": 0},
    "scale-tiles-per-warp": {"kind": "wmma_scale", "layout": {**_WM, "tiles_per_warp": [4, 1]}, "shape": [64, 2],
                             "operand_index": 0},
}


def cases(seed: int, n: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    return [draw(rng) for _ in range(n)]


_WORKER = r"""
import json, sys
from triton._C.libtriton import ir, gluon_ir
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language import amd
ctx = ir.context(); ir.load_dialects(ctx); b = gluon_ir.GluonOpBuilder(ctx)
def out(r):
    return {"register": r.reg_bases, "lane": r.lane_bases, "warp": r.warp_bases, "block": r.block_bases}
for line in sys.stdin:
    c = json.loads(line); p = c["layout"]; k = c["kind"]
    print("START", flush=True)
    try:
        if k.startswith("mfma"):
            lay = amd.AMDMFMALayout(p["version"], p["instr_shape"], p["transposed"], p["warps_per_cta"],
                                    p["element_bitwidth"], p["tiles_per_warp"])
        else:
            lay = amd.AMDWMMALayout(p["version"], p["transposed"], p["warps_per_cta"], p["instr_shape"],
                                    p["tiles_per_warp"])
        if k.endswith("_dot"):
            lay = gl.DotOperandLayout(c["operand_index"], lay, c["k_width"])
        if k == "mfma_scale":
            r = gluon_ir.get_amd_mfma_scale_layout(c["operand_index"], c["shape"], p["instr_shape"][0],
                                                   p["tiles_per_warp"], p["warps_per_cta"])
        elif k == "wmma_scale":
            r = gluon_ir.get_amd_wmma_scale_layout(c["operand_index"], c["shape"], p["instr_shape"][0],
                                                   p["tiles_per_warp"], p["warps_per_cta"])
        else:
            r = b.to_linear_layout(lay._to_ir(b), c["shape"])
        ans = {"bases": out(r)}
    except AssertionError as e:
        ans = {"refused": "python: " + str(e)}
    except Exception as e:
        ans = {"refused": "python: " + type(e).__name__ + ": " + str(e)}
    print("ANSWER " + json.dumps(ans), flush=True)
"""


def engine(configs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Triton's answer for each configuration: ``{"bases": ...}`` or ``{"refused": reason}``."""
    answers: list[dict[str, Any]] = []
    todo = list(configs)
    while todo:
        p = subprocess.Popen([sys.executable, "-c", _WORKER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True)
        out, _ = p.communicate("".join(json.dumps(c) + "\n" for c in todo), timeout=1800)
        got = [json.loads(line[7:]) for line in out.splitlines() if line.startswith("ANSWER ")]
        answers += got
        todo = todo[len(got):]
        if todo:  # the worker died on todo[0]: Triton aborted
            answers.append({"refused": "abort"})
            todo = todo[1:]
    return answers


def main() -> None:
    import triton

    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    cfgs = cases(28, n)
    ans = engine(cfgs)
    probes = dict(zip(PROBES, engine(list(PROBES.values()))))
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps({"source": f"Triton {triton.__version__} GluonOpBuilder.to_linear_layout, "
                                         "gluon_ir.get_amd_{mfma,wmma}_scale_layout (CPU); refusals: Python "
                                         "AssertionError or SIGABRT of the worker",
                               "recorded": datetime.date.today().isoformat(), "recorder": "tests/gluon_amd_oracle.py",
                               "cases": [{**c, **a} for c, a in zip(cfgs, ans)],
                               "probes": {r: {**PROBES[r], **a} for r, a in probes.items()}},
                              separators=(",", ":")) + "\n")
    print(f"wrote {len(cfgs)} cases to {OUT}; refused {sum('refused' in a for a in ans)}")


if __name__ == "__main__":
    main()
