"""Time layoutalg's layout algebra against pycute (nvidia-cutlass) and the CuTe DSL (nvidia-cutlass-dsl), in one run.

What is timed, all in this one process:

- construction: ``Layout(shape, stride)`` from the tuples written in the source (the same tuple objects
  each call, as a literal in a loop is) and from tuples built anew each call; ``Layout(shape)``;
- every algebra op on typical GPU tile layouts, twice: *with construction* (each call builds the op's
  input layouts from plain int tuples, then runs the op) and *op alone* (the same minus the time of
  building those inputs, measured beside it). layoutalg and pycute are timed in interleaved batches
  by one harness, so machine load hits both alike; the harness's own cost per call (the same calls
  with a no-op in place of the op and of each constructor, ~0.4 us) is measured beside them and
  subtracted from every with-construction figure, so that it does not dilute the ratios;
- the other operations pycute has (filter, complement with its default cotarget, tuple tilers,
  zipped/tiled divide and product, cosize, evaluation), with construction, against pycute;
- the CuTe DSL's host-side algebra: the same ops inside one ``@cute.jit`` trace, repeated
  ``cutlass.range_constexpr(N)`` times; per op = (trace with N ops - trace with none) / N, the median
  of a few traces (``no_cache=True``: each trace really runs);
- ``parse`` of layout texts up to 40 characters, and the first ``verify`` in a fresh process.

Run: ``python benchmarks/bench_algebra.py`` (``--no-dsl`` skips the CuTe DSL, ``--quick`` times less).
The CuTe DSL is ``pip install nvidia-cutlass-dsl`` (the ``bench`` extra); without it, its columns
say so.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import layoutalg as la

try:
    import pycute
except ImportError:  # pragma: no cover
    pycute = None

# (shape A, stride A, shape B): GPU tile layouts with nested modes, and their tilers (B compact)
CASES = [
    (((8, 16), (8, 8)), ((16, 1), (128, 1024)), ((8, 4), (1, 8))),
    (((4, 32), (2, 64)), ((1, 4), (8192, 128)), ((4, 8), (1, 4))),
    ((128, 64), (64, 1), ((32, 4), (1, 32))),
    (((2, 64), (4, 16)), ((64, 1), (16384, 128)), ((16, 8), (1, 16))),
    ((128, (8, 8)), (1, (128, 1024)), ((64, 2), (1, 64))),
    (((8, 8), (16, 8)), ((8, 1), (64, 1024)), ((8, 8), (1, 8))),
]

# op -> (inputs it needs: "A", "B" or "AB", layoutalg call, pycute call, DSL call)
OPS: dict[str, tuple[str, Callable[..., Any], Callable[..., Any], Callable[..., Any]]] = {
    "coalesce": ("A", lambda m, a: m.coalesce(a), lambda m, a: m.coalesce(a), lambda c, a: c.coalesce(a)),
    "composition": ("AB", lambda m, a, b: m.composition(a, b), lambda m, a, b: m.composition(a, b),
                    lambda c, a, b: c.composition(a, b)),
    "complement": ("B", lambda m, b: m.complement(b, 8192), lambda m, b: m.complement(b, 8192),
                   lambda c, b: c.complement(b, 8192)),
    "logical_divide": ("AB", lambda m, a, b: m.logical_divide(a, b), lambda m, a, b: m.logical_divide(a, b),
                       lambda c, a, b: c.logical_divide(a, b)),
    "logical_product": ("B", lambda m, b: m.logical_product(b, m.Layout(4, 1)),
                        lambda m, b: m.logical_product(b, m.Layout(4, 1)),
                        lambda c, b: c.logical_product(b, c.make_layout(4, stride=1))),
    "right_inverse": ("A", lambda m, a: m.right_inverse(a), lambda m, a: m.right_inverse(a),
                      lambda c, a: c.right_inverse(a)),
    "left_inverse": ("A", lambda m, a: m.left_inverse(a), lambda m, a: m.left_inverse(a),
                     lambda c, a: c.left_inverse(a)),
}


# the other operations pycute has (timed against pycute only): op -> (inputs, layoutalg call, pycute call)
MORE_OPS: dict[str, tuple[str, Callable[..., Any], Callable[..., Any]]] = {
    "filter": ("A", lambda m, a: m.filter(a), lambda m, a: m.filter(a)),
    "complement(B)": ("B", lambda m, b: m.complement(b), lambda m, b: m.complement(b)),
    # issue 23's case (3.5x before complement had a C kernel): its own input, built each call
    "complement((4,2):(1,16),128)": ("B", lambda m, b: m.complement(m.Layout((4, 2), (1, 16)), 128),
                                     lambda m, b: m.complement(m.Layout((4, 2), (1, 16)), 128)),
    "left_inverse(B)": ("B", lambda m, b: m.left_inverse(b), lambda m, b: m.left_inverse(b)),
    "composition(A,(B,B))": ("AB", lambda m, a, b: m.composition(a, (b, b)), lambda m, a, b: m.composition(a, (b, b))),
    "logical_divide(A,(B,B))": ("AB", lambda m, a, b: m.logical_divide(a, (b, b)), lambda m, a, b: m.logical_divide(a, (b, b))),
    "zipped_divide": ("AB", lambda m, a, b: m.zipped_divide(a, b), lambda m, a, b: m.zipped_divide(a, b)),
    "tiled_divide": ("AB", lambda m, a, b: m.tiled_divide(a, b), lambda m, a, b: m.tiled_divide(a, b)),
    "zipped_product": ("B", lambda m, b: m.zipped_product(b, m.Layout(4, 1)), lambda m, b: m.zipped_product(b, m.Layout(4, 1))),
    "tiled_product": ("B", lambda m, b: m.tiled_product(b, m.Layout(4, 1)), lambda m, b: m.tiled_product(b, m.Layout(4, 1))),
    "cosize": ("A", lambda m, a: m.cosize(a), lambda m, a: m.cosize(a)),
    "L(37)": ("A", lambda m, a: a(37), lambda m, a: a(37)),
}


def _interleaved_us(fns: list[Callable[[], Any]], rounds: int = 40, batch: int = 25) -> list[float]:
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


def _b_stride(sb: Any) -> Any:
    return tuple(la.Layout(sb).stride) if isinstance(sb, tuple) else 1


def _builders(lib: Any, case: tuple) -> dict[str, Callable[[], Any]]:
    sa, da, sb = case
    db = _b_stride(sb)
    return {"A": lambda: lib.Layout(sa, da), "B": lambda: lib.Layout(sb, db)}


def bench_construction(rounds: int) -> list[tuple[str, float, float]]:
    """(what, layoutalg us, pycute us) for building layouts."""
    sa, da = (4, (2, 8)), (2, (1, 8))

    def fresh() -> tuple[tuple, tuple]:  # new tuple objects each call (values seen before)
        return (4, (2, int("8"))), (2, (1, int("8")))

    def unseen() -> tuple[tuple, tuple]:  # values never seen before: every check runs in full
        k = next(counter)
        return (4, (2, 8 + 2 * k)), (2, (1, 8 + k))

    import itertools

    counter = itertools.count()
    fns = [lambda: la.Layout(sa, da), lambda: pycute.Layout(sa, da),
           lambda: la.Layout(*fresh()), lambda: pycute.Layout(*fresh()),
           lambda: la.Layout(*unseen()), lambda: pycute.Layout(*unseen()),
           lambda: la.Layout((8, 4)), lambda: pycute.Layout((8, 4))]
    t = _interleaved_us(fns, rounds=rounds, batch=200)
    return [("Layout((4,(2,8)),(2,(1,8))), tuples in the source", t[0], t[1]),
            ("  the same, tuples built anew each call", t[2], t[3]),
            ("  the same, values never seen before", t[4], t[5]),
            ("Layout((8,4)), compact", t[6], t[7])]


def _noop(*args: Any) -> None:
    return None


def bench_ops(rounds: int, ops: dict | None = None) -> dict[str, dict[str, float]]:
    """Per op, medians over the cases: op alone and with construction, for layoutalg and pycute."""
    out = {}
    for name, (needs, ours, theirs, *_) in (OPS if ops is None else ops).items():
        acc: dict[str, list[float]] = {"la": [], "pc": [], "la_all": [], "pc_all": []}
        for case in CASES:
            bl, bp = _builders(la, case), _builders(pycute, case)

            def build(b: dict, needs: str = needs) -> tuple:
                return tuple(b[x]() for x in needs)

            # the harness itself: the same calls with a no-op for the op and for each constructor
            a0, b0 = bl["A"](), bl["B"]()
            nb = {"A": lambda a0=a0: a0, "B": lambda b0=b0: b0}
            fns = [lambda f=ours, b=bl: f(la, *build(b)), lambda b=bl: build(b),
                   lambda f=theirs, b=bp: f(pycute, *build(b)), lambda b=bp: build(b),
                   lambda b=nb: _noop(la, *build(b))]
            t = _interleaved_us(fns, rounds=rounds)
            harness = t[4]
            acc["la"].append(max(t[0] - t[1], 0.01))
            acc["la_all"].append(max(t[0] - harness, 0.01))
            acc["pc"].append(t[2] - t[3])
            acc["pc_all"].append(t[2] - harness)
        out[name] = {k: statistics.median(v) for k, v in acc.items()}
    return out


def bench_dsl(n: int = 200, repeats: int = 5) -> tuple[dict[str, dict[str, float]], str]:
    """Per op, the CuTe DSL's host-side time (us): op alone and with construction, from traces."""
    try:
        import cutlass
        import cutlass.cute as cute
    except Exception as e:  # noqa: BLE001 - any failure to load the DSL is reported, not fatal
        return {}, f"CuTe DSL unavailable ({type(e).__name__}: {e}); pip install nvidia-cutlass-dsl"

    def trace(op: Callable[..., Any], needs: str, case: tuple, count: int, inside: bool) -> float:
        sa, da, sb = case
        db = _b_stride(sb)

        @cute.jit
        def f() -> None:
            A0 = cute.make_layout(sa, stride=da)
            B0 = cute.make_layout(sb, stride=db)
            for _ in cutlass.range_constexpr(count):
                if cutlass.const_expr(inside):
                    args = [cute.make_layout(sa, stride=da) if x == "A" else cute.make_layout(sb, stride=db)
                            for x in needs]
                else:
                    args = [A0 if x == "A" else B0 for x in needs]
                op(cute, *args)

        ts = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            f(no_cache=True)
            ts.append(time.perf_counter() - t0)
        return statistics.median(ts)

    out = {}
    for name, (needs, _, _, dsl_op) in OPS.items():
        alone, with_build = [], []
        for case in CASES[:3]:
            base = trace(dsl_op, needs, case, 0, False)
            alone.append(max((trace(dsl_op, needs, case, n, False) - base) / n * 1e6, 0.01))
            with_build.append((trace(dsl_op, needs, case, n, True) - base) / n * 1e6)
        out[name] = {"dsl": statistics.median(alone), "dsl_all": statistics.median(with_build)}
    import importlib.metadata as md

    return out, f"CuTe DSL {md.version('nvidia-cutlass-dsl')}"


PARSE_TEXTS = ["(4,2):(2,1)", "((8,2),(4,4)):((4,32),(1,64))", "(_8,_4):(_1,_8)", "Sw<3,4,3> o _0 o (8,64):(64,1)",
               "Layout<Shape<_8,_64>,Stride<_64,_1>>", "((8,m),(T,2k)):((1T,SBO),(1,LBO))"]


def bench_parse(rounds: int) -> list[tuple[str, float]]:
    t = _interleaved_us([lambda s=s: la.parse(s) for s in PARSE_TEXTS], rounds=rounds, batch=50)
    return list(zip(PARSE_TEXTS, t))


def bench_parse_unseen(n: int = 300) -> tuple[str, float]:
    """parse of the symbolic text with symbol names never seen before, so that every leaf is read by
    sympy (parse keeps the value of each distinct leaf text it has read)."""
    import itertools

    texts = [f"((8,m{k}),(T{k},2k{k})):((1T{k},SBO{k}),(1,LBO{k}))" for k in itertools.islice(itertools.count(10**6), n)]
    t0 = time.perf_counter()
    for text in texts:
        la.parse(text)
    return texts[0], (time.perf_counter() - t0) / n * 1e6


FIRST_VERIFY = """
import time, sympy
from layoutalg import Layout, verify
from layoutalg.symbolic import shr
lane, i = sympy.symbols("lane i", integer=True, nonnegative=True)
tv = Layout(((4, 8), 1), ((8, 1), 0))
e = shr(lane, 2) + 8 * (lane % 4)
t = time.perf_counter()
v = verify(tv, e, (lane, i))
print((time.perf_counter() - t) * 1e3, v.method)
"""


def bench_first_verify(runs: int = 5) -> tuple[float, str]:
    """Median ms of the first verify in fresh processes (import and the formula's construction not counted)."""
    ms, method = [], ""
    for _ in range(runs):
        out = subprocess.run([sys.executable, "-c", FIRST_VERIFY], capture_output=True, text=True, check=True).stdout
        t, method = out.split()
        ms.append(float(t))
    return statistics.median(ms), method


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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--no-dsl", action="store_true", help="skip the CuTe DSL")
    ap.add_argument("--quick", action="store_true", help="fewer rounds")
    args = ap.parse_args(argv)
    rounds = 12 if args.quick else 40
    if pycute is None:
        print("pycute is missing (pip install nvidia-cutlass); nothing to compare against")
        return 1
    import platform

    from layoutalg import speedups

    built = "built" if speedups.built() else "not built: pure Python"
    print(f"layoutalg {la.__version__} (C fast paths {built}); pycute (nvidia-cutlass); python {sys.version.split()[0]}; "
          f"{platform.machine()}, {platform.processor() or 'cpu'}")

    print("\nconstruction, median us per call           layoutalg   pycute   ratio (<= 2x is the goal)")
    for what, ours, theirs in bench_construction(rounds):
        print(f"  {what:<42}{ours:>9.3f}{theirs:>9.3f}{ours / theirs:>7.2f}x")

    ops = bench_ops(rounds)
    dsl, dsl_note = ({}, "CuTe DSL skipped (--no-dsl)") if args.no_dsl else bench_dsl(60 if args.quick else 200)
    print(f"\nalgebra, median us per op over {len(CASES)} tile layouts; {dsl_note}")
    print("  speedup = other's time / layoutalg's time (>= 5x vs pycute is the goal, with construction counted)")
    head = f"  {'op':<16}{'layoutalg':>10}{'pycute':>9}{'x':>7}"
    head += f"{'CuTe DSL':>10}{'x':>8}" if dsl else ""
    print("  op alone" + " " * (len(head) - 10) + "| with the inputs' construction")
    print(head + "  |" + head[2:])
    for name, r in ops.items():
        line = f"  {name:<16}{r['la']:>10.2f}{r['pc']:>9.2f}{r['pc'] / r['la']:>6.1f}x"
        tail = f"{name:<16}{r['la_all']:>10.2f}{r['pc_all']:>9.2f}{r['pc_all'] / r['la_all']:>6.1f}x"
        if dsl:
            d = dsl[name]
            line += f"{d['dsl']:>10.1f}{d['dsl'] / r['la']:>7.0f}x"
            tail += f"{d['dsl_all']:>10.1f}{d['dsl_all'] / r['la_all']:>7.0f}x"
        print(line + "  |" + tail)

    print("\nthe other operations pycute has, median us per op over the same layouts, with the inputs' construction")
    for name, r in bench_ops(rounds, MORE_OPS).items():
        print(f"  {name:<28}{r['la_all']:>6.2f}{r['pc_all']:>9.2f}{r['pc_all'] / r['la_all']:>6.1f}x")

    print("\nparse, median us per call (<= 10 us for <= 40 characters is the goal)")
    for text, us in bench_parse(rounds):
        print(f"  {text:<40}{len(text):>4} chars {us:>8.2f} us")
    text, us = bench_parse_unseen()
    print(f"  {text:<40}{len(text):>4} chars {us:>8.2f} us  (symbols never seen before: every leaf read by sympy)")
    ms, method = bench_first_verify()
    print(f"\nfirst verify in a fresh process (m8n8k4-style fragment, 32 points): {ms:.2f} ms [{method}] "
          "(<= 20 ms is the goal; import and building the sympy formula not counted)")

    r = bench_table()
    print(f"\ntable() of a {r['n']}-element layout: {r['table_us'] / 1000:.2f} ms; "
          f"np.arange: {r['arange_us'] / 1000:.2f} ms ({r['table_us'] / r['arange_us']:.1f}x of arange); "
          f"per-coordinate Python loop: {r['loop_us'] / 1000:.0f} ms ({r['loop_us'] / r['table_us']:.0f}x slower)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
