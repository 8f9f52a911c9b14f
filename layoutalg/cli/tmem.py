"""``layoutalg tmem``: tensor memory (sm_100): tcgen05.ld/st/cp atoms, UMMA accumulators, the epilogue's load.
"""

from __future__ import annotations

import argparse
from typing import Any

from ..errors import LayoutError
from .common import adds_parser, command, need_option, parse_tile, refuse_unused, wrote


_TMEM_CHECKED = ("checked against CuTe C++ 4.2 (sm100 headers on the host) and the PTX ISA's tcgen05 sections; "
                 "none of it ran on sm_100 hardware")


def _tmem_window(args: argparse.Namespace) -> Any:
    if not args.window:
        return None
    try:
        (l0, l1), (c0, c1) = (tuple(int(x) for x in part.split(":")) for part in args.window.split(","))
    except ValueError:
        raise LayoutError(f"tmem: --window {args.window!r} is not LANE0:LANE1,COL0:COL1 (e.g. 32:64,0:16)") from None
    return ((l0, l1), (c0, c1))


def _tmem_alloc(args: argparse.Namespace, columns: int) -> Any:
    """The allocation the access is checked against: --alloc, or the smallest legal one holding ``columns``."""
    from ..nvidia.blackwell.tmem import TmemAllocation

    if args.alloc is not None:
        return TmemAllocation(args.alloc)
    n = 32
    while n < columns:
        n *= 2
    return TmemAllocation(n)


def _tmem_checks(rows: list[tuple[str, bool]]) -> bool:
    for what, ok in rows:
        print(f"  [{'ok' if ok else 'FAILED'}] {what}")
    return all(ok for _, ok in rows)


def _tmem_atom(args: argparse.Namespace, quiet: bool) -> int:
    """``tmem SM100_TMEM_LOAD_*``: one tcgen05.ld/st atom, (thread, register) -> (lane, column)."""
    import numpy as np

    from ..nvidia.blackwell.tmem_copy import tmem_copy_op
    from ..verify import verify

    op = tmem_copy_op(args.name)
    if op.kind == "cp":
        refuse_unused(args, "tmem", f"for {op.name} (a tcgen05.cp: one issuing thread, no registers, no picture)",
                       {"warps": "--warps", "output": "-o", "window": "--window", "mode": "--mode"})
    else:
        need_option(args, "tmem", "warps", "--warps", [("output", "-o")])
    f = None if op.kind == "cp" else op.fragment()
    alloc = _tmem_alloc(args, op.columns)
    checks = []
    try:
        for w in range(1 if op.kind == "cp" else 4):
            op.check_access(alloc, (32 * w) << 16, warp=None if op.kind == "cp" else w)
        checks.append((f"lanes and columns fit a {alloc.columns}-column allocation" if op.kind == "cp" else
                       f"warps 0-3 at lane 32w stay in their lane quarters and in {alloc.columns} allocated columns", True))
    except LayoutError as e:
        checks.append((f"{e}", False))
    if f is not None:
        expr, inputs = op.formula()
        v = verify(f, expr, inputs)
        checks.append((f"fragment = the PTX ISA formula {expr} ({v.method}, {v.checked} points)", bool(v)))
        tab = np.asarray(f.table())
        checks.append(("every (thread, value) reads its own cell", len(set(tab.tolist())) == tab.size))
    if not quiet:
        print(f"instruction : {op.ptx}")
        print(f"atom        : {op.name}  (CuTe: cute/atom/copy_traits_sm100.hpp)")
        if f is None:
            print(f"TMEM block  : {op.lanes} lanes x {op.columns} columns, issued by one thread per CTA "
                  f"(cta_group::{op.cta_group}) from a shared-memory descriptor")
        else:
            print(f"TMEM block  : {op.lanes} lanes x {op.columns} columns per warp, {op.registers} registers per thread"
                  + ("; .pack::16b: value 2r+h is half h of register r" if op.pack16 else ""))
            from ..explain import explain

            print(f"fragment    : {f}   (thread, value) -> lane << 16 | column")
            print("  " + explain(f, names=("t", "v")).text.splitlines()[1].strip())
            for t in sorted({0, 1, 5, 31}):
                cells = [(f(t, k) >> 16, f(t, k) & 0xFFFF) for k in range(int(f[1].size()))]
                more = ", ..." if len(cells) > 4 else ""
                print(f"  thread {t:>2}  : " + ", ".join(f"v{k} -> ({a}, {b})" for k, (a, b) in enumerate(cells[:4])) + more)
        print(f"CuTe traits : ThrID {op.thr_id}, ValID {op.val_id}")
        print(f"              SrcLayout {op.src_bits}, DstLayout {op.dst_bits}, RefLayout {op.ref_bits}")
        print("rules       :")
    ok = _tmem_checks(checks) if not quiet else all(c for _, c in checks)
    if not quiet:
        print(f"verified    : {'yes' if ok else 'NO'} ({_TMEM_CHECKED})")
    if args.output:
        from .. import viz
        from ..viz.tmem import tmem_scene

        viz.save(tmem_scene(op, warps=args.warps, mode=args.mode or "auto", window=_tmem_window(args)), args.output)
        wrote(args.output, f"{op.name}, {args.warps or 4} warp(s) on their lane quarters"
               + ("" if ok else "; a rule FAILED (see -v)") + ("" if args.verbose else " (-v also prints the map and rules)"))
    return 0 if ok else 1


def _tmem_accumulator(args: argparse.Namespace, quiet: bool) -> int:
    """``tmem SM100_MMA_...`` (the accumulator) or ``tmem LOAD --acc SM100_MMA_...`` (the epilogue's load)."""
    import numpy as np

    from ..nvidia.atoms import value_bits
    from ..nvidia.blackwell.tmem_accum import dp, epilogue_tv, make_tmem_copy, umma_accumulator
    from ..nvidia.blackwell.umma import umma_atom

    load = None if args.acc is None else args.name
    at = umma_atom(args.acc if load else args.name)
    mode = f"with --acc (the load of {at.name}'s accumulator)" if load else f"for the accumulator of {at.name}"
    refuse_unused(args, "tmem", mode, {"warps": "--warps"})
    M, N = (at.M, at.N) if not args.tile else parse_tile(args.tile)
    full = umma_accumulator(at, (M, N))
    acc = full[0]
    if int(full.size()) != int(acc.size()):
        raise LayoutError(f"tmem: --tile {M}x{N} is several {at.M}x{at.N} MMAs of {at.name}; give one MMA's tile")
    bits = value_bits(at.c_type) if at.c_type != "s32" else 32
    stride = dp(bits)
    addr = np.asarray(acc.table(), dtype=np.int64)
    lanes, cols = addr // stride, ((addr % stride) * bits) // 32
    ncols = int(cols.max()) + 1
    alloc = _tmem_alloc(args, ncols)
    mc = M // at.cta_group
    checks = [(f"every element of D ({mc} x {N} per CTA) has its own cell",
               len(set((lanes * 512 + cols).tolist())) == addr.size)]
    try:
        alloc.check_access(None, sorted(set(lanes.tolist())), range(ncols))
        checks.append((f"lanes {int(lanes.min())}..{int(lanes.max())}, columns 0..{ncols - 1} fit the {alloc.columns}-column "
                       "allocation", True))
    except LayoutError as e:
        checks.append((str(e), False))
    tc = tv = None
    if load:
        tc = make_tmem_copy(load, acc, at.c_type if at.c_type != "s32" else "s32")
        tv = epilogue_tv(tc, (mc, N))
        T, V = int(tv[0].size()), int(tv[1].size())
        idx = np.asarray(tv.table(), dtype=np.int64).reshape(V, T).T
        checks.append(("every element of D is received by exactly one (thread, value)",
                       np.array_equal(np.sort(idx.ravel()), np.arange(mc * N))))
        q_ok = all(((lanes[idx[t]] // 32) == t // 32).all() for t in range(T))
        checks.append(("thread t reads only lane quarter t // 32 (its warp's)", bool(q_ok)))
    if not quiet:
        print(f"atom        : {at.name}  ({at.cta_group} CTA(s); D {M} x {N} {at.c_type}, {mc} rows per CTA)")
        print(f"accumulator : {acc}   (m, n) -> TMEM address (lane stride {stride}: {bits}-bit units; "
              "CuTe's UMMA::tmem_frg)")
        print(f"  D[m, n]   : lanes {int(lanes.min())}..{int(lanes.max())} ({len(set(lanes.tolist()))} used), "
              f"columns 0..{ncols - 1}; D[1, 0] at {tuple(int(x) for x in (lanes[1], cols[1]))}, "
              f"D[0, 1] at {tuple(int(x) for x in (lanes[mc], cols[mc]))}")
        if load:
            from ..explain import explain

            assert tc is not None
            print(f"load        : make_tmem_copy({load}): 4 warps, warp w on lane quarter w")
            print(f"  TV        : {tc.layout_tv}, tiler {tc.tiler}")
            print(f"  epilogue  : {tv}   (thread, value) -> m + {mc} n")
            print("  " + explain(tv, names=("t", "v")).text.splitlines()[1].strip())
        print("rules       :")
    ok = _tmem_checks(checks) if not quiet else all(c for _, c in checks)
    if not quiet:
        print(f"verified    : {'yes' if ok else 'NO'} ({_TMEM_CHECKED})")
    if args.output:
        from .. import viz
        from ..viz.tmem import tmem_scene

        viz.save(tmem_scene(at, load=load, tile=(M, N) if args.tile else None, mode=args.mode or "auto",
                            window=_tmem_window(args)), args.output)
        wrote(args.output, (f"{load} over " if load else "") + f"the accumulator of {at.name}"
               + ("" if ok else "; a rule FAILED (see -v)") + ("" if args.verbose else " (-v also prints the map and rules)"))
    return 0 if ok else 1


def _tmem_operand(args: argparse.Namespace, quiet: bool) -> int:
    """``tmem 'SM100_MMA_...' --operand A|SFA|SFB|E``: a _TS atom's TMEM A, a block-scaled atom's scale
    factors, or a sparse atom's metadata: the TMEM fragment, the rules checked, the picture."""
    import numpy as np

    from ..nvidia.blackwell.tmem_accum import umma_tmem_a, umma_tmem_e, umma_tmem_sf
    from ..nvidia.blackwell.umma import umma_atom

    op = args.operand.upper()
    at = umma_atom(args.name)
    refuse_unused(args, "tmem", f"with --operand {op}", {"warps": "--warps", "acc": "--acc"})
    tile: Any = parse_tile(args.tile) if args.tile else None
    if op == "A":
        tile = tile or (at.M, at.K)
        F, bits, what = umma_tmem_a(at, tile), None, f"A ({at.a_type}) of a _TS atom, CuTe's make_fragment_A"
    elif op == "E":
        F, bits, what = umma_tmem_e(at, tile), 1, f"metadata of the sparse A ({at.a_type}), CuTe's tmem_e_frg"
    else:
        tile = tile or (at.M, at.N, at.K * 4)
        F, bits, what = umma_tmem_sf(at, op[-1], tile), 8, f"scale factors {op} ({at.sf_type}), CuTe's FrgType{op}"
    if bits is None:
        from ..nvidia.atoms import value_bits

        bits = value_bits(at.a_type)
    addr = np.asarray(F.table(), dtype=np.int64)
    if bits == 1:
        lanes, cols = addr >> 21, (addr & ((1 << 21) - 1)) // 32
    else:
        from ..nvidia.blackwell.tmem_accum import dp

        lanes, cols = addr // dp(bits), ((addr % dp(bits)) * bits) // 32
    ncols = int(cols.max()) + 1
    alloc = _tmem_alloc(args, ncols)
    checks = []
    try:
        alloc.check_access(None, sorted(set(lanes.tolist())), range(ncols))
        checks.append((f"lanes {int(lanes.min())}..{int(lanes.max())}, columns 0..{ncols - 1} fit the "
                       f"{alloc.columns}-column allocation", True))
    except LayoutError as e:
        checks.append((str(e), False))
    if op == "A":
        checks.append(("every element of A has its own TMEM address", len(set(addr.tolist())) == addr.size))
    if not quiet:
        print(f"atom        : {at.name}  ({at.cta_group} CTA(s))")
        print(f"operand     : {op}: {what}")
        print(f"fragment    : {F}   -> TMEM address" + (" (bits: lane stride 1 << 21)" if bits == 1 else
                                                        f" (lane stride {1 << 16} x 32 / {bits})"))
        print(f"  cells     : lanes {int(lanes.min())}..{int(lanes.max())} ({len(set(lanes.tolist()))} used), "
              f"columns 0..{ncols - 1}; value 0 at {(int(lanes[0]), int(cols[0]))}, value 1 at "
              f"{(int(lanes[1]), int(cols[1]))}")
        print("rules       :")
    ok = _tmem_checks(checks) if not quiet else all(c for _, c in checks)
    if not quiet:
        print(f"verified    : {'yes' if ok else 'NO'} ({_TMEM_CHECKED})")
    if args.output:
        from .. import viz
        from ..viz.tmem import tmem_scene

        viz.save(tmem_scene(at, operand=op, tile=tile if op != "A" else (tile if args.tile else None),
                            mode=args.mode or "auto", window=_tmem_window(args)), args.output)
        wrote(args.output, f"the TMEM {op} of {at.name}" + ("" if ok else "; a rule FAILED (see -v)"))
    return 0 if ok else 1


@command
def cmd_tmem(args: argparse.Namespace) -> int:
    need_option(args, "tmem", "window", "--window", [("output", "-o")])
    need_option(args, "tmem", "mode", "--mode", [("output", "-o")])
    need_option(args, "tmem", "verbose", "-v", [("output", "-o")])
    quiet = bool(args.output) and not args.verbose
    name = args.name.strip()
    if getattr(args, "operand", None) is not None and args.operand.upper() not in ("C", "D"):
        if not name.startswith("SM100_MMA_"):
            raise LayoutError(f"tmem: --operand {args.operand} takes a UMMA atom (SM100_MMA_...) as NAME, not {name!r}")
        return _tmem_operand(args, quiet)
    if name.startswith("SM100_MMA_"):
        if args.acc is not None:
            raise LayoutError("tmem: --acc names the accumulator a load reads; NAME is already a UMMA atom (give a "
                              "tcgen05.ld atom as NAME)")
        return _tmem_accumulator(args, quiet)
    if args.acc is not None:
        if not name.startswith("SM100_TMEM_LOAD_"):
            raise LayoutError(f"tmem: --acc takes a tcgen05.ld atom (SM100_TMEM_LOAD_*) as NAME, not {name!r}")
        return _tmem_accumulator(args, quiet)
    refuse_unused(args, "tmem", "for a copy atom alone (they describe an accumulator: give --acc)",
                   {"tile": "--tile"})
    return _tmem_atom(args, quiet)


@adds_parser
def add_tmem_parser(sub: Any) -> None:
    """Add the ``tmem`` verb to the subparsers ``sub``."""
    s = sub.add_parser(
        "tmem",
        help="tensor memory (sm_100): a tcgen05.ld/st/cp atom, a UMMA accumulator, or a load of it",
        description="layoutalg tmem SM100_TMEM_LOAD_16dp256b1x prints the atom's (thread, register) -> (lane, "
        "column) map, its CuTe traits and the rules checked (the ISA formula, lane quarters, the allocation); "
        "layoutalg tmem 'SM100_MMA_...<...>' the accumulator's (m, n) -> (lane, column); "
        "layoutalg tmem SM100_TMEM_LOAD_... --acc 'SM100_MMA_...<...>' the epilogue's load (make_tmem_copy) and "
        "which thread receives which element, as a proven formula. -o draws TMEM (lanes x columns, lane quarters "
        "as warp bands). " + _TMEM_CHECKED[0].upper() + _TMEM_CHECKED[1:] + ".",
    )
    s.add_argument("name", metavar="NAME", help="SM100_TMEM_LOAD_*, SM100_TMEM_STORE_*, SM100_UTCCP_* or a UMMA atom")
    s.add_argument("--acc", metavar="UMMA_ATOM", help="with a load atom: the UMMA atom whose accumulator it reads")
    s.add_argument("--tile", help="with a UMMA atom: the tile M x N (one MMA; default the atom's); M x K for "
                   "--operand A or E, M x N x K for SFA/SFB")
    s.add_argument("--operand", type=str.upper, choices=("C", "D", "A", "SFA", "SFB", "E"),
                   help="with a UMMA atom: C/D the accumulator (default), A the TMEM A of a _TS atom, SFA/SFB the "
                   "scale factors of a block-scaled atom, E the metadata of a sparse atom")
    s.add_argument("--alloc", type=int, metavar="COLUMNS",
                   help="check against a tcgen05.alloc of COLUMNS columns (default: the smallest that holds it)")
    s.add_argument("--warps", type=int, choices=(1, 2, 3, 4), help="with -o and a ld/st atom: warps drawn (default 4)")
    s.add_argument("-o", "--output", help="write the TMEM picture (.svg or .png)")
    s.add_argument("--window", help="with -o: LANE0:LANE1,COL0:COL1, cell by cell")
    s.add_argument("--mode", choices=("auto", "cells", "blocks"), help="with -o: cells, aggregated blocks, or auto")
    s.add_argument("-v", "--verbose", action="store_true", help="with -o, also print the map and the rules")
    s.set_defaults(func=cmd_tmem)
