"""``layoutalg show`` and ``layoutalg eval``: a layout's offset grid (CuTe's ``print_layout``), its pictures,
a TiledMMA and its tiled copies, a layout evaluated at a coordinate.
"""

from __future__ import annotations

import argparse
from typing import Any

from ..errors import LayoutError
from .common import command, need_option, parse_coord, parse_layout, parse_shape, refuse_unused, wrote


def print_layout(layout: Any, max_rows: int = 64, max_cols: int = 64) -> str:
    """Text grid of a layout like CuTe's ``print_layout``: the layout, column numbers, boxed offsets.

    >>> print(print_layout("(2,3):(3,1)"))
    (2,3):(3,1)
          0   1   2
        +---+---+---+
     0  | 0 | 1 | 2 |
        +---+---+---+
     1  | 3 | 4 | 5 |
        +---+---+---+
    """
    from ..viz import drawable_layout, layout_dims, layout_window

    L = drawable_layout(layout, "show")
    R, C, note = layout_dims(L)
    r1, c1 = min(R, max_rows), min(C, max_cols)
    M = layout_window(L, 0, r1, 0, c1)  # only the cells shown are computed
    w = max(len(str(int(v))) for v in M[:r1, :c1].ravel())
    rw = len(str(r1 - 1))
    pad = " " * (rw + 3)
    lines = [str(L)]
    if note:
        lines.append(f"({note})")
    if (r1, c1) != (R, C):
        lines.append(f"(showing rows 0-{r1 - 1} of {R}, columns 0-{c1 - 1} of {C})")
    lines.append(pad + "".join(f"  {c:>{w}} " for c in range(c1)).rstrip())
    sep = pad + "+" + "+".join("-" * (w + 2) for _ in range(c1)) + "+"
    lines.append(sep)
    for r in range(r1):
        lines.append(f" {r:>{rw}}  |" + "|".join(f" {int(M[r, c]):>{w}} " for c in range(c1)) + "|")
        lines.append(sep)
    return "\n".join(lines)


@command
def cmd_show(args: argparse.Namespace) -> int:
    modes = [m for m, given in (("a layout", bool(args.layout)), ("--gluon", bool(args.gluon)),
                                ("--tiled-mma", bool(args.tiled_mma))) if given]
    if len(modes) > 1:
        raise LayoutError(f"show: give one of a layout, --gluon or --tiled-mma (got {' and '.join(modes)})")
    if args.tiled_mma:
        refuse_unused(args, "show", "with --tiled-mma", {"shape": "--shape", "max": "--max",
                                                           "swizzle_bytes": "--swizzle-bytes"})
        need_option(args, "show", "copy_output", "--copy-output", [("copy", "--copy")])
        need_option(args, "show", "banks", "--banks", [("copy", "--copy")])
        need_option(args, "show", "window", "--window", [("output", "-o")])
        need_option(args, "show", "mode", "--mode", [("output", "-o"), ("copy_output", "--copy-output")])
        return _show_tiled(args)
    refuse_unused(args, "show", "without --tiled-mma (they draw a TiledMMA)", _SHOW_TILED_ONLY)
    need_option(args, "show", "swizzle_bytes", "--swizzle-bytes", [("output", "-o")])
    if args.gluon:
        from ..interop.gluon import from_gluon, gluon_layout

        g = gluon_layout(args.gluon)
        own_shape = g.kind in ("DistributedLinearLayout", "PaddedSharedLayout")
        if own_shape and args.shape:
            raise LayoutError(f"show: --shape does nothing with a {g.kind}, which carries its own shape {list(g['shape'])}")
        shape = list(g["shape"]) if own_shape else parse_shape(args.shape, "show --gluon")
        L = from_gluon(g, shape)
        head = f"{g.source} on {shape}:\n  {L}"
    elif args.layout:
        refuse_unused(args, "show", "with a layout in CuTe notation (it is read by --gluon)", {"shape": "--shape"})
        from ..parse import ParsedTensor, parse

        x = parse(args.layout)
        if isinstance(x, ParsedTensor):  # what CuTe printed for a tensor: its pointer, width, swizzle units
            print(x.describe())
        L = parse_layout(args.layout)
        head = ""
    else:
        raise LayoutError("show: give a layout in CuTe notation, --gluon with a Gluon layout, or --tiled-mma ATOM")
    if args.tv and not args.output:
        raise LayoutError("show: --tv draws a picture of a TV layout; give -o FILE")
    nmax = args.max or 64
    if not args.output or args.verbose:
        if head:
            print(head)
        print(print_layout(L, nmax, nmax))
    if args.output:
        from .. import viz

        if args.swizzle_bytes and args.tv:
            raise LayoutError("show: --swizzle-bytes draws shared memory, --tv a TV layout; give one")
        if args.swizzle_bytes:
            viz.save(viz.swizzle_scene(L, args.swizzle_bytes), args.output)
        elif args.tv:
            viz.save(viz.tv_scene(L, parse_shape(args.tv, "show --tv"), max_rows=nmax, max_cols=nmax), args.output)
        else:
            viz.save(viz.layout_scene(L, max_rows=nmax, max_cols=nmax), args.output)
        wrote(args.output, f"{L}" + ("" if args.verbose else " (-v also prints the offset grid)"))
    return 0


_SHOW_TILED_ONLY = {"atom_layout": "--atom-layout", "permutation": "--permutation", "copy": "--copy",
                    "copy_output": "--copy-output", "banks": "--banks", "mode": "--mode", "window": "--window"}


def _show_tiled(args: argparse.Namespace) -> int:
    """``show --tiled-mma``: CuTe's print of the TiledMMA (and tiled copies), pictures, bank reports."""
    from ..nvidia.atoms import copy_atom, mma_atom
    from ..tiled import make_tiled_copy_A, make_tiled_copy_B, make_tiled_copy_C, make_tiled_mma

    atom = mma_atom(args.tiled_mma)
    al: Any = (1, 1, 1)
    if args.atom_layout:
        text = args.atom_layout.strip()
        al = parse_layout(text) if ":" in text else tuple(int(x) for x in text.lower().split("x"))
    perm = None
    if args.permutation:
        perm = tuple(None if e in ("_", "") else (int(e) if e.isdigit() else parse_layout(e))
                     for e in _split_top(args.permutation))
    mma = make_tiled_mma(atom, al, perm)
    quiet = bool(args.output) and not args.verbose  # the MMA's print gives way to its picture's one line
    quiet_copy = bool(args.copy_output) and not args.verbose  # a copy's print to its picture's line
    size_line = f"tile M x N x K = {' x '.join(map(str, mma.tile_size_mnk))}, {mma.num_threads} threads"
    if not quiet:
        print(mma)
        print(f"  {size_line}")
        print(f"  LayoutA_TV: {mma.get_layoutA_TV()}")
        print(f"  LayoutB_TV: {mma.get_layoutB_TV()}")
        print(f"  LayoutC_TV: {mma.get_layoutC_TV()}")
    window = None
    if args.window:
        try:
            (m0, m1), (n0, n1) = (tuple(int(x) for x in part.split(":")) for part in args.window.split(","))
        except ValueError:
            raise LayoutError(f"show: --window {args.window!r} is not M0:M1,N0:N1 (e.g. 0:32,0:16)") from None
        window = ((m0, m1), (n0, n1))
    from .. import viz

    mode = args.mode or "auto"
    if args.output:
        viz.save(mma, args.output, mode=mode, window=window)
        wrote(args.output, f"TiledMMA of {atom.name}, {size_line}")
    types = dict(zip("DABC", atom.value_types))
    for spec in args.copy or []:
        if ":" not in spec:
            raise LayoutError(f"show: --copy {spec!r} is not OPERAND:ATOM (e.g. A:SM75_U32x4_LDSM_N)")
        operand, name = spec.split(":", 1)
        operand = operand.strip().upper()
        make = {"A": make_tiled_copy_A, "B": make_tiled_copy_B, "C": make_tiled_copy_C}.get(operand)
        if make is None:
            raise LayoutError(f"show: --copy operand {operand!r} is not A, B or C")
        tc = make(copy_atom(name, types[operand] or None), mma)
        if not quiet_copy:
            print(tc)
        if args.copy_output:
            viz.save(tc, args.copy_output, mode=mode)
            wrote(args.copy_output, f"make_tiled_copy_{operand} with {tc.atom.name}")
        if args.banks:
            from ..banks import analyze_copy

            rep = analyze_copy(tc, parse_layout(args.banks))
            print("\n".join(rep.summary(max_conflicts=2).splitlines()[:2]))
            fc = rep.first_conflict
            print("  first conflict: " + (str(fc) if fc else "none"))
    return 0


def _split_top(text: str) -> list[str]:
    """Split ``text`` at commas outside parentheses."""
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
            continue
        depth += {"(": 1, ")": -1}.get(ch, 0)
        cur += ch
    out.append(cur.strip())
    return out


@command
def cmd_eval(args: argparse.Namespace) -> int:
    L = parse_layout(args.layout)
    c = parse_coord(args.coord)
    if isinstance(c, tuple):
        if len(c) != len(L):
            raise LayoutError(f"eval: coordinate {c} has {len(c)} modes, layout {L} has rank {len(L)}")
        _check_coord(c, L.shape, L)
        value = L(*c)
    else:
        size = L.size()
        if isinstance(size, int) and not 0 <= c < size:
            raise LayoutError(f"eval: index {c} is outside [0, {size}) of layout {L}")
        value = L(c)
    print(value)
    return 0


def _product(t: Any) -> Any:
    p = 1
    for x in t:
        p = p * (_product(x) if isinstance(x, tuple) else x)
    return p


def _check_coord(c: Any, shape: Any, L: Any) -> None:
    """Each integer of a (nested) coordinate lies inside the extent of the mode it indexes."""
    if isinstance(c, tuple):
        if not isinstance(shape, tuple) or len(c) != len(shape):
            raise LayoutError(f"eval: coordinate {c} is not congruent with the shape of {L}")
        for x, s in zip(c, shape):
            _check_coord(x, s, L)
        return
    n = 1
    for s in (shape if isinstance(shape, tuple) else (shape,)):
        n = n * (s if not isinstance(s, tuple) else _product(s))
    if isinstance(n, int) and not 0 <= c < n:
        raise LayoutError(f"eval: coordinate {c} is outside [0, {n}) of its mode in {L}")
