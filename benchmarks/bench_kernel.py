"""Timing of layoutalg.kernel on compiled Triton matmuls (run: python benchmarks/bench_kernel.py).

The budget (issue 27): inspecting a compiled matmul's ttgir under 2 s on one core. Each kernel of the
recording tests/data/triton/kernels.json (sm_80 / sm_90a / sm_100a matmuls, cp.async and TMA, and the
Gluon conversions) is read and inspected cold -- a fresh read, every layout and bank report computed --
and the slowest is compared with the budget.
"""

from __future__ import annotations

import json
import os
import time

from layoutalg.kernel import inspect_ttgir

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


if __name__ == "__main__":
    main()
