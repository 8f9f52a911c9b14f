"""``layoutalg verify``: the whole catalog proven against the PTX formulas, or one layout against a formula.
"""

from __future__ import annotations

import argparse
import functools
import sys
import time
from typing import Any
from collections.abc import Callable

from ..errors import LayoutError
from .common import Progress, Unavailable, command, format_table, need, parse_layout


def catalog_items() -> list[tuple[str, str, Callable[[], Any]]]:
    """(family, name, builder) for every fragment of the catalog that carries a PTX formula.

    ``family`` is the row of ``layoutalg verify``'s table (mma.sync, mma.sp, block-scale, ldmatrix, stmatrix,
    wgmma); ``builder()`` returns the :class:`~layoutalg.nvidia.common.fragment.Fragment`. :func:`prove_catalog` proves
    each one; tests walk the same list.
    """
    mma = need("layoutalg.nvidia.ampere.mma", "the mma catalog")
    items: list = []
    for e in mma.catalog():
        fam = "mma.sp" if e.sparse else "mma.sync"
        if e.operand in ("SFA", "SFB"):
            fam = "block-scale"
        items.append((fam, "", e.fragment))
    try:
        ldm = need("layoutalg.nvidia.ampere.ldmatrix", "ldmatrix")
        for num, trans, store in ldm.catalog():
            items.append(
                (
                    "stmatrix" if store else "ldmatrix",
                    "",
                    (lambda n=num, t=trans, s=store: ldm.fragment(n, t, store=s)),
                )
            )
    except Unavailable:
        pass
    try:
        wf = need("layoutalg.nvidia.hopper.wgmma_fragments", "wgmma fragments")
        for key in wf.catalog():
            items.append(("wgmma", "", (lambda k=key: wf.fragment(*k))))
    except Unavailable:
        pass
    return items


@functools.cache
def _catalog_rows() -> tuple[tuple[dict, ...], tuple[str, ...]]:
    """The catalog's proofs (rows per family, failures), computed once per process: the catalog and the
    proofs are fixed (``verify`` and ``report`` both prove it; each proof costs ~6 s of CPU). Callers copy."""
    from ..nvidia.common.ptx_formulas import i as i_sym
    from ..nvidia.common.ptx_formulas import lane as lane_sym
    from ..verify import verify

    fams: dict = {}
    failures: list[str] = []
    for fam, _, build in catalog_items():
        row = fams.setdefault(
            fam, {"family": fam, "fragments": 0, "symbolic": 0, "exhaustive": 0, "failed": 0}
        )
        row["fragments"] += 1
        try:
            F = build()
            v = verify(F, F.formula.outputs, (lane_sym, i_sym))
        except Exception as e:  # a broken entry is a failure, not a crash of the whole table
            row["failed"] += 1
            failures.append(f"{fam}: {e}")
            continue
        if not v:
            row["failed"] += 1
            failures.append(f"{F.name} ({F.instruction}): {v!r}")
        elif v.method == "symbolic":
            row["symbolic"] += 1
        else:
            row["exhaustive"] += 1
    return tuple(fams.values()), tuple(failures)


def prove_catalog(progress: Progress | None = None) -> tuple[list[dict], list[str]]:
    """Prove every catalogued fragment equal to its PTX formula; ``(rows per family, failures)``.

    Each row: family, fragments, proven (symbolic), exhaustive (every point enumerated), failed.
    """
    fams: dict = {row["family"]: dict(row) for row in _catalog_rows()[0]}  # copies: the caller may change them
    failures: list[str] = list(_catalog_rows()[1])
    if progress:
        progress.step("catalog proven")
    # wgmma shared-memory descriptors: the PTX ISA's five worked examples
    try:
        wg = need("layoutalg.nvidia.hopper.wgmma", "wgmma descriptors")
        row: dict = {
            "family": "wgmma smem (the PTX ISA's examples)",
            "fragments": 0,
            "symbolic": 0,
            "exhaustive": 0,
            "failed": 0,
        }
        for ex in wg.seed_examples():
            row["fragments"] += 1
            if all(v in (True, None) for v in ex.agrees.values()):
                row["exhaustive"] += 1
            else:
                row["failed"] += 1
                failures.append(f"{ex.figure} {ex.title}: {ex.agrees}")
        fams[row["family"]] = row
    except Unavailable as e:
        failures.append(str(e))
    return list(fams.values()), failures


@command
def cmd_verify(args: argparse.Namespace) -> int:
    if args.layout is not None or args.formula is not None or args.inputs is not None:
        return _verify_formula(args)  # --inputs alone is refused there: it names the inputs of a formula
    t = time.perf_counter()
    from . import prove_catalog  # through the package: a test may replace layoutalg.cli.prove_catalog

    rows, failures = prove_catalog()
    print(format_table(rows, ["family", "fragments", "symbolic", "exhaustive", "failed"]))
    total = sum(r["fragments"] for r in rows)
    print(f"\n{total} entries, {len(failures)} failed, {time.perf_counter() - t:.1f} s")
    print(
        "symbolic: proven by normal form; exhaustive: every (lane, i) compared (the PTX ISA's examples: every value)"
    )
    for f in failures:
        print(f"FAILED {f}", file=sys.stderr)
    return 1 if failures else 0


def _verify_formula(args: argparse.Namespace) -> int:
    """``verify LAYOUT FORMULA [--inputs r,c]``: the formula (text, read by layoutalg.formula's grammar) vs the layout."""
    from ..verify import verify

    if args.layout is None or args.formula is None:
        raise LayoutError("verify: give a layout and a formula, e.g. layoutalg verify \"(4,8):(8,1)\" \"8*r + c\" "
                          "--inputs r,c (or no arguments to prove the catalog)")
    L = parse_layout(args.layout)
    inputs = args.inputs
    if inputs is None:
        inputs = "i" if len(L) == 1 else ",".join(("row", "col") if len(L) == 2 else (f"x{k}" for k in range(len(L))))
    v = verify(L, args.formula, inputs)
    print(f"layout  : {L}")
    print(f"formula : {args.formula}  (inputs {inputs})")
    if v:
        print(f"equal   : yes ({v.method}, {v.checked} points)" + ("" if v.proven else f"; {v.note}"))
        return 0
    print(f"equal   : NO ({v.method}, {v.checked} points)")
    if v.counterexample is not None:
        print(f"          {v.counterexample}")
    return 1
