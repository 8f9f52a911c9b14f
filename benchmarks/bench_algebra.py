"""Time layoutalg's algebra against pycute (nvidia-cutlass) and numpy baselines, in one run.

Each op runs on fresh Layout objects built for every call (so nothing is served from a cache of
earlier results), on typical GPU tile layouts. Prints per-op medians (microseconds) and the
ratio pycute / layoutalg. Run: ``python benchmarks/bench_algebra.py``.
"""

from __future__ import annotations

import statistics
import sys
import time

import numpy as np

import layoutalg as la

try:
    import pycute
except ImportError:  # pragma: no cover
    pycute = None

# (A, B) pairs: GPU tile layouts with nested modes, and their tilers
CASES = [
    (((8, 16), (8, 8)), ((16, 1), (128, 1024)), ((8, 4), (1, 8))),
    (((4, 32), (2, 64)), ((1, 4), (8192, 128)), ((4, 8), (1, 4))),
    ((128, 64), (64, 1), ((32, 4), (1, 32))),
    (((2, 64), (4, 16)), ((64, 1), (16384, 128)), ((16, 8), (1, 16))),
    ((128, (8, 8)), (1, (128, 1024)), ((64, 2), (1, 64))),
    (((8, 8), (16, 8)), ((8, 1), (64, 1024)), ((8, 8), (1, 8))),
]


def _median_us(fn, reps: int) -> float:
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter_ns()
        fn()
        ts.append(time.perf_counter_ns() - t0)
    return statistics.median(ts) / 1000.0


def bench_ops(reps: int = 2000) -> list[tuple[str, float, float]]:
    rows = []
    specs = {
        "composition": (lambda a, b: la.composition(a, b), lambda a, b: pycute.composition(a, b)),
        "complement": (lambda a, b: la.complement(b, la.size(a)), lambda a, b: pycute.complement(b, pycute.size(a))),
        "logical_divide": (lambda a, b: la.logical_divide(a, b), lambda a, b: pycute.logical_divide(a, b)),
        "coalesce": (lambda a, b: la.coalesce(a), lambda a, b: pycute.coalesce(a)),
        "right_inverse": (lambda a, b: la.right_inverse(a), lambda a, b: pycute.right_inverse(a)),
        "left_inverse": (lambda a, b: la.left_inverse(a), lambda a, b: pycute.left_inverse(a)),
        "logical_product": (lambda a, b: la.logical_product(b, la.Layout(4, 1)),
                            lambda a, b: pycute.logical_product(b, pycute.Layout(4, 1))),
    }
    for name, (ours, theirs) in specs.items():
        mine_t, their_t = [], []
        for sa, da, sb in CASES:
            db = None
            mine_t.append(_median_us(lambda: ours(la.Layout(sa, da), la.Layout(sb)), reps))
            if pycute is not None:
                their_t.append(_median_us(lambda: theirs(pycute.Layout(sa, da), pycute.Layout(sb)), reps))
            # construction cost alone, subtracted from both sides
        base_mine = statistics.median(
            _median_us(lambda: (la.Layout(sa, da), la.Layout(sb)), reps) for sa, da, sb in CASES)
        base_theirs = statistics.median(
            _median_us(lambda: (pycute.Layout(sa, da), pycute.Layout(sb)), reps) for sa, da, sb in CASES
        ) if pycute else 0.0
        m = max(statistics.median(mine_t) - base_mine, 0.01)
        t = statistics.median(their_t) - base_theirs if pycute else float("nan")
        rows.append((name, m, t))
    return rows


def bench_table(n_log2: int = 20) -> dict[str, float]:
    L = la.Layout(((4, 8), (32, 16), (2, 8, 2)), ((1, 4096), (4, 128), (32768, 32, 65536)))
    n = L.size()
    assert n == 1 << n_log2
    t_table = min(_median_us(L.table, 5) for _ in range(3))
    t_arange = min(_median_us(lambda: np.arange(n, dtype=np.int64), 5) for _ in range(3))
    sub = 1 << 14  # the Python loop is timed on a slice and scaled
    t0 = time.perf_counter()
    [L(i) for i in range(sub)]
    t_loop = (time.perf_counter() - t0) * 1e6 * (n / sub)
    return {"table_us": t_table, "arange_us": t_arange, "loop_us": t_loop, "n": n}


def main() -> int:
    print(f"layoutalg {la.__version__}; pycute {'present' if pycute else 'missing'}; python {sys.version.split()[0]}")
    print(f"{'op':<16}{'layoutalg us':>14}{'pycute us':>12}{'speedup':>10}")
    for name, m, t in bench_ops():
        print(f"{name:<16}{m:>14.2f}{t:>12.2f}{t / m:>9.1f}x")
    r = bench_table()
    print(f"table() of a {r['n']}-element layout: {r['table_us'] / 1000:.2f} ms; "
          f"np.arange: {r['arange_us'] / 1000:.2f} ms ({r['table_us'] / r['arange_us']:.1f}x of arange); "
          f"per-coordinate Python loop: {r['loop_us'] / 1000:.0f} ms ({r['loop_us'] / r['table_us']:.0f}x slower)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
