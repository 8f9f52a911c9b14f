"""Time the proof of the whole NVIDIA fragment catalog against the PTX formulas.

Run: ``python benchmarks/bench_catalog.py``. Prints the number of fragments, the time to build
them, the time to verify all of them exhaustively (every ``(lane, i)``, vectorized) and the time
of the symbolic proofs of the distinct (layout, formula) pairs. The exhaustive pass must stay
under 2 s.
"""

from __future__ import annotations

import sys
import time


def main() -> int:
    t0 = time.perf_counter()
    from layoutalg.nvidia.ampere import ldmatrix, mma
    from layoutalg.nvidia.hopper import wgmma_fragments
    from layoutalg.nvidia.common.ptx_formulas import i, lane
    from layoutalg.verify import verify

    t_import = time.perf_counter() - t0

    t0 = time.perf_counter()
    frags = [e.fragment() for e in mma.catalog()]
    frags += [wgmma_fragments.fragment(*e) for e in wgmma_fragments.catalog()]
    frags += [ldmatrix.fragment(n, t, store=s) for n, t, s in ldmatrix.catalog()]
    t_build = time.perf_counter() - t0

    t0 = time.perf_counter()
    points = 0
    for f in frags:
        v = verify(f, f.formula.outputs, (lane, i), symbolic=False)
        if not v:
            print(f"FAIL {f.name}: {v.counterexample}")
            return 1
        points += v.checked
    t_exhaustive = time.perf_counter() - t0

    distinct = {}
    for f in frags:
        distinct.setdefault((f.layout, f.codomain, f.operand, f.sparse, f.values_per_register, f.formula_key), f)
    t0 = time.perf_counter()
    methods: dict = {}
    for f in distinct.values():
        v = verify(f, f.formula.outputs, (lane, i))
        methods[v.method] = methods.get(v.method, 0) + 1
    t_symbolic = time.perf_counter() - t0

    print(f"fragments: {len(frags)} ({len(mma.catalog())} mma/mma.sp, {len(wgmma_fragments.catalog())} wgmma, "
          f"{len(ldmatrix.catalog())} ldmatrix/stmatrix); (lane, i) points: {points}")
    print(f"import {t_import:.3f} s, build {t_build:.3f} s")
    print(f"verify whole catalog (exhaustive): {t_exhaustive:.3f} s")
    print(f"proofs of {len(distinct)} distinct (layout, formula) pairs: {t_symbolic:.3f} s {methods}")
    total = t_build + t_exhaustive
    print(f"build + verify: {total:.3f} s ({'OK' if total < 2 else 'OVER'} the 2 s budget)")
    return 0 if total < 2 else 1


if __name__ == "__main__":
    sys.exit(main())
