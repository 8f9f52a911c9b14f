"""Time the proof of the whole AMD catalog: every fragment equal to its ISA rule on every (lane, value).

Run: ``python benchmarks/bench_amd_catalog.py``. Builds every operand of every MFMA (CDNA1-CDNA4,
scales of the scaled forms included), every WMMA of RDNA3 and RDNA4 at wave32 and wave64, and every
gfx1250 WMMA (each f8f6f4 format, scales included), then checks each against its rule on all
``(lane, value)`` points (vectorized, :meth:`~layoutalg.amd.MatrixFragment.check`). Prints one line a
stage and exits 1 when build + check is over the 1 s budget (``--budget`` to change it). A second
line proves the distinct (layout, rule) pairs symbolically (:func:`layoutalg.verify.verify`), not budgeted.
"""

from __future__ import annotations

import argparse
import sys
import time


def fragments() -> list:
    from layoutalg.amd import GFX1250_INSTRUCTIONS, WMMA_INSTRUCTIONS, catalog, wmma, wmma1250

    frags = [f for m in catalog() for f in m.fragments().values()]
    frags += [f for arch, rows in WMMA_INSTRUCTIONS.items() for name in rows for wave in (32, 64)
              for f in wmma(name, arch).fragments(wave).values()]
    for name in GFX1250_INSTRUCTIONS:
        w = wmma1250(name)
        for fmt in ((None,) if w.row.a != "f8f6f4" else ("fp8", "bf8", "fp6", "bf6", "fp4")):
            frags += list(w.fragments(fmt).values())
    return frags


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--budget", type=float, default=1.0, help="seconds allowed for build + check (default 1)")
    ap.add_argument("--symbolic", action="store_true", help="also prove the distinct (layout, rule) pairs symbolically")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    import layoutalg.amd  # noqa: F401

    t_import = time.perf_counter() - t0
    t0 = time.perf_counter()
    frags = fragments()
    t_build = time.perf_counter() - t0
    t0 = time.perf_counter()
    points = 0
    for f in frags:
        f.check()
        points += f.num_threads * f.num_values
    t_check = time.perf_counter() - t0
    total = t_build + t_check
    by_arch: dict[str, int] = {}
    for f in frags:
        by_arch[f.arch] = by_arch.get(f.arch, 0) + 1
    print(f"amd catalog: {len(frags)} fragments {by_arch}; (lane, value) points: {points}")
    print(f"import {t_import:.3f} s, build {t_build:.3f} s, check {t_check:.3f} s")
    print(f"build + check: {total:.3f} s ({'OK' if total < args.budget else 'OVER'} the {args.budget:g} s budget)")
    if args.symbolic:
        from layoutalg.amd.common import i, lane
        from layoutalg.verify import verify

        distinct = {(f.layout, f.codomain, f.operand, f.rule, f.params): f for f in frags}
        t0 = time.perf_counter()
        methods: dict[str, int] = {}
        for f in distinct.values():
            v = verify(f, f.formula, (lane, i))
            if not v:
                print(f"FAIL {f.name}: {v.counterexample}")
                return 1
            methods[v.method] = methods.get(v.method, 0) + 1
        print(f"proofs of {len(distinct)} distinct (layout, rule) pairs: {time.perf_counter() - t0:.3f} s {methods}")
    return 0 if total < args.budget else 1


if __name__ == "__main__":
    sys.exit(main())
