"""Timing of layoutalg.kernel on compiled Triton matmuls (run: python benchmarks/bench_kernel.py).

The budget (issue 27): inspecting a compiled matmul's ttgir under 2 s on one core. Each kernel of the
recording tests/data/triton/kernels.json (sm_80 / sm_90a / sm_100a matmuls, cp.async and TMA, and the
Gluon conversions) is read and inspected cold -- a fresh read, every layout and bank report computed --
and the slowest is compared with the budget. The same budget holds for proving a compiled matmul's MMA path:
``read_ttgir`` + ``prove_ttgir`` (layoutalg.kernel.proof_ttgir), timed per matmul on a cold read.
"""

from __future__ import annotations

import json
import os
import time

from layoutalg.kernel import inspect_ttgir, read_ttgir
from layoutalg.kernel.proof_ttgir import prove_ttgir

HERE = os.path.dirname(os.path.abspath(__file__))
BUDGET_S = 2.0


def main() -> None:
    with open(os.path.join(HERE, "..", "tests", "data", "triton", "kernels.json")) as f:
        kernels = json.load(f)["kernels"]
    worst = 0.0
    for rec in kernels:
        cfg = rec["config"]
        t0 = time.perf_counter()
        report = inspect_ttgir(rec["ttgir"])
        str(report)
        dt = time.perf_counter() - t0
        worst = max(worst, dt)
        tile = f"{cfg['BM']}x{cfg['BN']}x{cfg['BK']}" if "BM" in cfg else cfg.get("SMEM", "")[3:30]
        name = f"{cfg['kind']} sm_{cfg['arch']} {cfg.get('dtype', '')} {tile}"
        print(f"{name:45s} {len(rec['ttgir'].splitlines()):5d} lines {len(report.ops):3d} ops "
              f"{len(report.accesses):2d} smem accesses {dt * 1e3:8.1f} ms")
    verdict = "within" if worst < BUDGET_S else "OVER"
    print(f"slowest: {worst * 1e3:.1f} ms ({verdict} the {BUDGET_S:.0f} s budget)")
    worst = 0.0
    for rec in kernels:
        cfg = rec["config"]
        if "matmul" not in cfg["kind"]:
            continue
        t0 = time.perf_counter()
        proof = prove_ttgir(read_ttgir(rec["ttgir"]))
        dt = time.perf_counter() - t0
        worst = max(worst, dt)
        name = f"prove {cfg['kind']} sm_{cfg['arch']} {cfg['dtype']} {cfg['BM']}x{cfg['BN']}x{cfg['BK']}"
        print(f"{name:45s} {'proven' if proof.ok else 'WRONG':>6s} {dt * 1e3:8.1f} ms")
    verdict = "within" if worst < BUDGET_S else "OVER"
    print(f"slowest proof (ttgir read + prove): {worst * 1e3:.1f} ms ({verdict} the {BUDGET_S:.0f} s budget)")


if __name__ == "__main__":
    main()
