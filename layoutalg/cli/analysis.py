"""``layoutalg explain``, ``layoutalg synth`` and ``layoutalg banks``: formulas a person writes, swizzle
synthesis, shared-memory bank conflicts.
"""

from __future__ import annotations

import argparse
from typing import Any

from ..errors import LayoutError
from .common import command, parse_layout, parse_tile, refuse_unused, wrote
from .fragments import FRAGMENT_OPTIONS, find_fragment


@command
def cmd_explain(args: argparse.Namespace) -> int:
    from ..explain import explain

    names = [n.strip() for n in args.names.split(",")] if args.names else None
    if len(args.target) == 1:
        refuse_unused(args, "explain", "for a layout (they choose a fragment: SHAPE DTYPE OPERAND)", FRAGMENT_OPTIONS)
        x: Any = parse_layout(args.target[0])
    elif len(args.target) in (2, 3):
        ns = argparse.Namespace(**vars(args))
        ns.shape, ns.dtype = args.target[0], args.target[1]
        ns.operand = args.target[2] if len(args.target) == 3 else ""
        x = find_fragment(ns, "explain")
    else:
        raise LayoutError(f"explain: expected a layout or 'SHAPE DTYPE OPERAND', got {' '.join(args.target)!r}")
    e = explain(x, names=names)
    print(e.text)
    return 0 if e.verdict else 1


def _synth_access(text: str, shape: tuple[int, int], dtype: str, threads: int) -> Any:
    """An access from the command line: a preset name or ``TV-LAYOUT@BYTES``."""
    from .. import synth

    presets = {
        "cp.async": lambda: synth.row_copy(shape, dtype, threads=threads),
        "st.shared.v4": lambda: synth.row_copy(shape, dtype, threads=threads, instruction="st.shared.v4.u32"),
        "ldmatrix": lambda: synth.ldmatrix_copy(shape),
        "ldmatrix.trans": lambda: synth.ldmatrix_copy(shape, trans=True),
        "ldmatrix.x2": lambda: synth.ldmatrix_copy(shape, num=2),
        "ldmatrix.x1": lambda: synth.ldmatrix_copy(shape, num=1),
        "ldmatrix.colfirst": lambda: synth.ldmatrix_copy(shape, order="col-first"),
        "block4": lambda: synth.block_transpose_read(shape, dtype, threads=threads),
    }
    if text in presets:
        return presets[text]()
    if "@" in text:
        tv, vb = text.rsplit("@", 1)
        if not vb.strip().isdigit():
            raise LayoutError(f"synth: access {text!r}: BYTES after '@' is not an integer (e.g. (32,8):(1,32)@16)")
        L = parse_layout(tv)
        if not isinstance(L, type(parse_layout("1:0"))):
            raise LayoutError(f"synth: access {tv!r} must be a plain (thread, value) layout")
        return synth.Access(text, L, int(vb))
    raise LayoutError(f"synth: access {text!r} is not one of {sorted(presets)} nor TV-LAYOUT@BYTES")


@command
def cmd_synth(args: argparse.Namespace) -> int:
    from .. import synth

    if args.kernel:
        given = [w for w in (args.shape, args.dtype, *args.access) if w]
        if given:
            raise LayoutError(f"synth: --kernel {args.kernel} brings its own tile and accesses; "
                              f"{' '.join(given)} would be ignored")
        refuse_unused(args, "synth", "with --kernel (it sets the copy presets' threads itself)",
                       {"threads": "--threads"})
        k = synth.kernel_accesses(args.kernel)
        shape, dtype, accesses = k.shape, k.dtype, list(k.accesses)
        print(k.description)
    else:
        if not args.shape or not args.dtype or not args.access:
            raise LayoutError("synth: give SHAPE DTYPE ACCESS... or --kernel NAME")
        from ..nvidia.common.dtypes import dtype_name

        shape, dtype = parse_tile(args.shape), dtype_name(args.dtype, op="synth")
        if args.threads is not None and not any(a in ("cp.async", "st.shared.v4", "block4") for a in args.access):
            raise LayoutError("synth: --threads does nothing without a copy preset that reads it "
                              "(cp.async, st.shared.v4, block4)")
        threads = 128 if args.threads is None else args.threads
        accesses = [_synth_access(a, shape, dtype, threads) for a in args.access]
    cons = [c for c in (args.constraints or "").split(",") if c]
    s = synth.synthesize_swizzle(shape, dtype, accesses, constraints=cons)
    print(s.summary())
    return 0


def _pattern(name: str, smem: Any, n: int) -> Any:
    """thread t of a warp reads an n-element vector: 'column' -> (t, 0..n) ; 'row' -> (0, t*n .. t*n+n)."""
    from ..layout import Layout

    if len(smem) != 2:
        raise LayoutError(
            f"banks: --pattern needs a rank-2 shared-memory layout; {smem} has rank {len(smem)}"
        )
    R, C = int(smem[0].size()), int(smem[1].size())
    if name == "column":
        if R < 32 or n > C:
            raise LayoutError(
                f"banks: --pattern column needs >= 32 rows and >= {n} columns; layout is {R}x{C}"
            )
        return Layout((32, n), (1, R))
    if name == "row":
        if 32 * n > C:
            raise LayoutError(f"banks: --pattern row needs >= {32 * n} columns; layout is {R}x{C}")
        return Layout((32, n), (n * R, R))
    raise LayoutError(f"banks: --pattern {name!r} is not 'column' or 'row'")


@command
def cmd_banks(args: argparse.Namespace) -> int:
    from .. import banks

    if args.access and args.pattern:
        raise LayoutError("banks: --pattern does nothing with --access (give one access)")
    smem = parse_layout(args.layout)
    vb = args.vector or args.bytes
    if vb % args.bytes:
        raise LayoutError(f"banks: --vector {vb} is not a multiple of --bytes {args.bytes}")
    access = parse_layout(args.access) if args.access else _pattern(args.pattern or "column", smem, vb // args.bytes)
    rep = banks.analyze(smem, access, args.bytes, vb)
    if not args.output or args.verbose:
        print(rep.summary())
    if args.output:
        from .. import viz

        viz.save(viz.banks_scene(rep), args.output)
        verdict = "conflict-free" if rep.conflict_free else f"{rep.ways}-way bank conflict"
        wrote(args.output, f"{rep.wavefronts} wavefronts, ideal {rep.ideal} ({verdict})")
    return 0
