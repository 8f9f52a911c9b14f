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


def _interleaved_us(fns: list, rounds: int = 40, batch: int = 25) -> list[float]:
    """Median per-call time (us) of each function, timed in interleaved batches so that load on the
    machine affects all of them alike."""
    samples: list[list[float]] = [[] for _ in fns]
    for _ in range(rounds):
        for k, fn in enumerate(fns):
            t0 = time.perf_counter_ns()
            for _ in range(batch):
                fn()
            samples[k].append((time.perf_counter_ns() - t0) / batch / 1000.0)
    return [statistics.median(x) for x in samples]


def _median_us(fn, reps: int) -> float:
    return _interleaved_us([fn], rounds=reps, batch=1)[0]


OPS = {
    "composition": (lambda a, b: la.composition(a, b), lambda a, b: pycute.composition(a, b)),
    "complement": (lambda a, b: la.complement(b, 8192), lambda a, b: pycute.complement(b, 8192)),
    "logical_divide": (lambda a, b: la.logical_divide(a, b), lambda a, b: pycute.logical_divide(a, b)),
    "coalesce": (lambda a, b: la.coalesce(a), lambda a, b: pycute.coalesce(a)),
    "right_inverse": (lambda a, b: la.right_inverse(a), lambda a, b: pycute.right_inverse(a)),
    "left_inverse": (lambda a, b: la.left_inverse(a), lambda a, b: pycute.left_inverse(a)),
    "logical_product": (lambda a, b: la.logical_product(b, la.Layout(4, 1)),
                        lambda a, b: pycute.logical_product(b, pycute.Layout(4, 1))),
}


def bench_ops() -> list[tuple[str, float, float, float, float]]:
    """Per op: median over the cases of (time of op on freshly built inputs - time to build them),
    and the same including the construction of the inputs."""
    rows = []
    for name, (ours, theirs) in OPS.items():
        mine_t, their_t, mine_all, their_all = [], [], [], []
        for sa, da, sb in CASES:
            sb_stride = tuple(la.Layout(sb).stride) if isinstance(sb, tuple) else 1
            def fresh(lib, sa=sa, da=da, sb=sb, sbd=sb_stride):
                return lib.Layout(sa, da), lib.Layout(sb, sbd)

            fns = [lambda f=ours: f(*fresh(la)), lambda: fresh(la)]
            if pycute is not None:
                fns += [lambda f=theirs: f(*fresh(pycute)), lambda: fresh(pycute)]
            t = _interleaved_us(fns)
            mine_t.append(max(t[0] - t[1], 0.01))
            mine_all.append(t[0])
            if pycute is not None:
                their_t.append(t[2] - t[3])
                their_all.append(t[2])
        nan = float("nan")
        rows.append((name, statistics.median(mine_t), statistics.median(their_t) if their_t else nan,
                     statistics.median(mine_all), statistics.median(their_all) if their_all else nan))
    return rows


def bench_table(n_log2: int = 20) -> dict[str, float]:
    # a 1M-element tile layout with nested, permuted modes (as a swizzle-free smem tile would be)
    L = la.make_ordered_layout(((4, 8), (32, 16), (2, 8, 4)), ((0, 5), (1, 4), (6, 2, 3)))
    n = L.size()
    assert n == 1 << n_log2
    t_table, t_arange = _interleaved_us([L.table, lambda: np.arange(n, dtype=np.int64)], rounds=15, batch=1)
    sub = 1 << 14  # the Python loop is timed on a slice and scaled
    t0 = time.perf_counter()
    [L(i) for i in range(sub)]
    t_loop = (time.perf_counter() - t0) * 1e6 * (n / sub)
    return {"table_us": t_table, "arange_us": t_arange, "loop_us": t_loop, "n": n}


def main() -> int:
    print(f"layoutalg {la.__version__}; pycute {'present' if pycute else 'missing'}; python {sys.version.split()[0]}")
    print("median us per op on fresh inputs (op alone = minus building the input layouts; total = with it)")
    print(f"{'op':<16}{'layoutalg':>10}{'pycute':>10}{'speedup':>9}   {'total: ours':>11}{'pycute':>9}{'speedup':>9}")
    for name, m, t, ma, ta in bench_ops():
        print(f"{name:<16}{m:>10.2f}{t:>10.2f}{t / m:>8.1f}x   {ma:>11.2f}{ta:>9.2f}{ta / ma:>8.1f}x")
    r = bench_table()
    print(f"table() of a {r['n']}-element layout: {r['table_us'] / 1000:.2f} ms; "
          f"np.arange: {r['arange_us'] / 1000:.2f} ms ({r['table_us'] / r['arange_us']:.1f}x of arange); "
          f"per-coordinate Python loop: {r['loop_us'] / 1000:.0f} ms ({r['loop_us'] / r['table_us']:.0f}x slower)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
