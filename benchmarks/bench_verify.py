"""Speed of the verifier: one warp fragment (verify) and a 1M-element equality (equivalent).

Run: ``python benchmarks/bench_verify.py``. Targets: verify < 50 ms, equivalent < 0.5 s.
"""

from __future__ import annotations

import time

import sympy
from sympy import Piecewise

from layoutalg.composed import ComposedLayout
from layoutalg.layout import Layout
from layoutalg.swizzle import Swizzle
from layoutalg.symbolic import bitand
from layoutalg.verify import equivalent, verify


def best_of(fn, repeat=5):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), out


def bench_verify_fragment() -> None:
    lane, i = sympy.symbols("lane i", integer=True, nonnegative=True)
    # mma.m8n8k4 C/D fragment, .f32 accumulators: 32 lanes x 8 values (PTX ISA, seed 000)
    tv = Layout(((2, 2, 4, 2), (2, 2, 2)), ((1, 16, 0, 4), (8, 2, 32)))
    X = bitand(lane, 1) + bitand(i, 2)
    row = Piecewise((X, lane < 16), (X + 4, True))
    col = bitand(i, 4) + bitand(lane, 2) + bitand(i, 1)
    t_first = time.perf_counter()
    verify(tv, row + 8 * col, (lane, i))
    t_first = time.perf_counter() - t_first
    t, v = best_of(lambda: verify(tv, row + 8 * col, (lane, i)))
    # without the evaluator cache: the honest cost of a formula seen for the first time
    import importlib

    vmod = importlib.import_module("layoutalg.verify")  # the module (layoutalg.verify is the function)

    def fresh():
        vmod._evaluator.cache_clear()
        return verify(tv, row + 8 * col, (lane, i))

    t_new, _ = best_of(fresh)
    print(f"verify(m8n8k4 C.f32, 32x8): {t * 1e3:.2f} ms (cached), {t_new * 1e3:.2f} ms (new formula), "
          f"{t_first * 1e3:.1f} ms first call in process; {v!r}")


def bench_equivalent_1m() -> None:
    A = Layout((4, 3, 8, 16, 8, 2, 17), (1, 4, 12, 96, 1536, 12288, 24576))
    B = Layout(((4, 3), (8, 16), 8, (2, 17)), ((1, 4), (12, 96), 1536, (12288, 24576)))
    Bq = Layout((4, 3, 8, 16, 8, (2, 17)), (1, 4, 12, 96, 1536, (12288, 24577)))
    t1, v1 = best_of(lambda: equivalent(A, B), 3)
    t2, v2 = best_of(lambda: equivalent(A, Bq), 3)
    sw = Swizzle(3, 4, 3)
    S1 = ComposedLayout(sw, 0, Layout((1024, 1024), (1024, 1)))
    S2 = ComposedLayout(sw, 0, Layout(((32, 32), (32, 32)), ((1024, 32768), (1, 32))))
    t3, v3 = best_of(lambda: equivalent(S1, S2), 3)
    S3 = ComposedLayout(sw, 0, Layout((1000, 1000), (1000, 1)))
    S4 = ComposedLayout(sw, 0, Layout((1000, (10, 100)), (1000, (1, 10))))
    t4, v4 = best_of(lambda: equivalent(S3, S4), 3)
    print(f"equivalent(1.04M-element layouts): {t1 * 1e3:.1f} ms [{v1.method}] equal; "
          f"{t2 * 1e3:.1f} ms [{v2.method}] different")
    # no fast path applies: a swizzle that is the identity on this domain (its bits lie above 2**20)
    P = Layout((1000, 1000), (1000, 1))
    Q = ComposedLayout(Swizzle(3, 20, 3), 0, Layout((1000, 1000), (1000, 1)))
    t5, v5 = best_of(lambda: equivalent(P, Q), 3)
    print(f"equivalent(1M swizzled, pow2): {t3 * 1e3:.1f} ms [{v3.method}]; "
          f"1M swizzled non-pow2: {t4 * 1e3:.1f} ms [{v4.method}]; "
          f"1M tables (no fast path): {t5 * 1e3:.1f} ms [{v5.method}] {'equal' if v5 else 'different'}")


if __name__ == "__main__":
    bench_verify_fragment()
    bench_equivalent_1m()
