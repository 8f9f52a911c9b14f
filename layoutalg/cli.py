"""The ``layoutalg`` command: look at layouts, fragments, descriptors and bank conflicts from a shell.

Subcommands (``layoutalg <cmd> --help`` for each)::

    layoutalg show "(4,2):(2,1)"              # offset grid as text (CuTe's print_layout)
    layoutalg show "Sw<3,3,3> o (8,64):(64,1)" -o atom.svg
    layoutalg show --tiled-mma SM80_16x8x16_F32F16F16F32_TN --atom-layout 2x2x1 -o mma.svg
    layoutalg eval "(4,2):(2,1)" "(1,1)"      # -> 3
    layoutalg desc --major K --swizzle 128 --dtype bf16 --tile 64x64
    layoutalg frag m16n8k16 f16 A -o a.svg
    layoutalg frag --list "m16n8k16 C"        # the catalog's fragments, filtered
    layoutalg atoms --list LDSM               # CuTe's atom names, filtered
    layoutalg verify                          # proves the whole catalog, prints a table
    layoutalg banks "(64,64):(64,1)" --bytes 2 --vector 16
    layoutalg harness run                     # hardware checks (needs a GPU and Triton)
    layoutalg explain m16n8k16 f16 A          # the formula a person writes, proven
    layoutalg explain "Sw<3,3,3> o (64,64):(64,1)"
    layoutalg synth 128x64 f16 cp.async ldmatrix   # the swizzle with the fewest wavefronts
    layoutalg synth --kernel fp8_transpose
    layoutalg report -o report/               # everything above, pictures in a folder
    layoutalg idesc encode --kind f16 --a bf16 --b bf16 --c f32 -m 128 -n 256   # tcgen05 idesc
    layoutalg idesc decode 0x08200490 --kind f16

Exit codes: 0 success; 1 a verification failed (or a value of the PTX ISA's examples disagrees); 2 bad input
(a :class:`~layoutalg.errors.LayoutError`, printed on stderr) or a part of the library
that is not available.
"""

from __future__ import annotations

import argparse
import ast
import os
import sys
import time
from typing import Any, NoReturn
from collections.abc import Callable, Sequence

from .errors import LayoutError

__all__ = ["main", "print_layout", "prove_catalog"]


# ---------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------
class Unavailable(Exception):
    """A part of the library the subcommand needs cannot be imported (yet)."""


def _need(modname: str, what: str) -> Any:
    import importlib

    try:
        return importlib.import_module(modname)
    except ImportError as e:
        raise Unavailable(f"{what} needs {modname}, which cannot be imported: {e}") from e


class Progress:
    """A progress bar on stderr, ``[#####     ] 5/10 label``, redrawn in place on a terminal.

    ``enabled=None`` (the default) shows it only when stderr is a terminal, so CI logs and notebooks
    stay quiet; True forces it (one line per step when stderr is not a terminal); False silences it.
    """

    def __init__(self, total: int, enabled: bool | None = None, width: int = 30):
        self.tty = _isatty(sys.stderr)
        self.total, self.done, self.width = max(1, total), 0, width
        self.enabled = self.tty if enabled is None else enabled

    def step(self, label: str) -> None:
        self.done += 1
        if not self.enabled:
            return
        fill = round(self.width * self.done / self.total)
        line = f"[{'#' * fill}{' ' * (self.width - fill)}] {self.done}/{self.total} {label}"
        if self.tty:
            sys.stderr.write("\r" + line[:110].ljust(110))
            if self.done == self.total:
                sys.stderr.write("\n")
        else:
            sys.stderr.write(line + "\n")
        sys.stderr.flush()


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def _parse_layout(text: str) -> Any:
    from .parse import ParsedTensor, parse

    x = parse(text)
    return x.function if isinstance(x, ParsedTensor) else x  # a printed tensor: coordinate -> element offset


def _given(args: argparse.Namespace, attr: str) -> bool:
    """Was the option given on the command line? (Options whose use depends on the mode default to None.)"""
    v = getattr(args, attr, None)
    return not (v is None or v is False or (isinstance(v, list) and not v))  # 0 is a value given


def _refuse_unused(args: argparse.Namespace, cmd: str, mode: str, options: dict[str, str]) -> None:
    """An option the chosen mode does not read is an error naming the mode (never silently ignored).

    ``options``: attribute -> how the user spells it (``"--ctype"``)."""
    given = [flag for attr, flag in options.items() if _given(args, attr)]
    if given:
        verb = "does" if len(given) == 1 else "do"
        raise LayoutError(f"{cmd}: {', '.join(given)} {verb} nothing {mode}")


def _need_option(args: argparse.Namespace, cmd: str, attr: str, flag: str, needs: list[tuple[str, str]]) -> None:
    """``flag`` is read only together with one of ``needs`` (attr, flag): an error otherwise."""
    if _given(args, attr) and not any(_given(args, a) for a, _ in needs):
        raise LayoutError(f"{cmd}: {flag} does nothing without {' or '.join(f for _, f in needs)}")


def _wrote(path: str, what: str) -> None:
    """The one line a command prints when it writes a file."""
    try:
        size = os.path.getsize(path)
        unit = f"{size / 1024:.1f} KB" if size >= 1024 else f"{size} B"
    except OSError:
        unit = "?"
    print(f"wrote {path} ({unit}): {what}")


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
    from .viz import _as_layoutish, _layout_dims, _layout_window

    L = _as_layoutish(layout, "show")
    R, C, note = _layout_dims(L)
    r1, c1 = min(R, max_rows), min(C, max_cols)
    M = _layout_window(L, 0, r1, 0, c1)  # only the cells shown are computed
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


def _parse_coord(text: str) -> Any:
    try:
        value = ast.literal_eval(text.strip())
    except (ValueError, SyntaxError) as e:
        raise LayoutError(
            f"eval: coordinate {text!r} is not an int or a tuple of ints like (1,2) or ((1,0),3)"
        ) from e

    def ok(v: Any) -> bool:
        return (isinstance(v, int) and not isinstance(v, bool)) or (
            isinstance(v, tuple) and all(ok(x) for x in v)
        )

    if not ok(value):
        raise LayoutError(f"eval: coordinate {text!r} is not an int or a tuple of ints")
    return value


def _parse_tile(text: str) -> tuple[int, int]:
    parts = text.lower().replace("*", "x").split("x")
    try:
        mn, k = (int(p) for p in parts)
    except ValueError as e:
        raise LayoutError(f"desc: --tile {text!r} is not of the form MNxK, e.g. 64x64") from e
    return mn, k


# ---------------------------------------------------------------------------------------------
# Catalog proof
# ---------------------------------------------------------------------------------------------
def _catalog_items() -> list[tuple[str, str, Callable[[], Any]]]:
    """(family, name, builder) for every fragment of the catalog that carries a PTX formula."""
    mma = _need("layoutalg.nvidia.mma", "the mma catalog")
    items: list = []
    for e in mma.catalog():
        fam = "mma.sp" if e.sparse else "mma.sync"
        if e.operand in ("SFA", "SFB"):
            fam = "block-scale"
        items.append((fam, "", e.fragment))
    try:
        ldm = _need("layoutalg.nvidia.ldmatrix", "ldmatrix")
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
        wf = _need("layoutalg.nvidia.wgmma_fragments", "wgmma fragments")
        for key in wf.catalog():
            items.append(("wgmma", "", (lambda k=key: wf.fragment(*k))))
    except Unavailable:
        pass
    return items


def prove_catalog(progress: Progress | None = None) -> tuple[list[dict], list[str]]:
    """Prove every catalogued fragment equal to its PTX formula; ``(rows per family, failures)``.

    Each row: family, fragments, proven (symbolic), exhaustive (every point enumerated), failed.
    """
    from .nvidia.ptx_formulas import i as i_sym
    from .nvidia.ptx_formulas import lane as lane_sym
    from .verify import verify

    fams: dict = {}
    failures: list[str] = []
    for fam, _, build in _catalog_items():
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
    if progress:
        progress.step("catalog proven")
    # wgmma shared-memory descriptors: the PTX ISA's five worked examples
    try:
        wg = _need("layoutalg.nvidia.wgmma", "wgmma descriptors")
        row = {
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


def _table(rows: list[dict], cols: Sequence[str]) -> str:
    widths = [max(len(c), *(len(str(r[c])) for r in rows)) for c in cols]
    out = ["  ".join(c.ljust(w) for c, w in zip(cols, widths)), "  ".join("-" * w for w in widths)]
    for r in rows:
        out.append("  ".join(str(r[c]).ljust(w) for c, w in zip(cols, widths)))
    return "\n".join(out)


# ---------------------------------------------------------------------------------------------
# Subcommands
# ---------------------------------------------------------------------------------------------
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


def _show_tiled(args: argparse.Namespace) -> int:
    """``show --tiled-mma``: CuTe's print of the TiledMMA (and tiled copies), pictures, bank reports."""
    from .nvidia.atoms import copy_atom, mma_atom
    from .tiled import make_tiled_copy_A, make_tiled_copy_B, make_tiled_copy_C, make_tiled_mma

    atom = mma_atom(args.tiled_mma)
    al: Any = (1, 1, 1)
    if args.atom_layout:
        text = args.atom_layout.strip()
        al = _parse_layout(text) if ":" in text else tuple(int(x) for x in text.lower().split("x"))
    perm = None
    if args.permutation:
        perm = tuple(None if e in ("_", "") else (int(e) if e.isdigit() else _parse_layout(e))
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
    from . import viz

    mode = args.mode or "auto"
    if args.output:
        viz.save(mma, args.output, mode=mode, window=window)
        _wrote(args.output, f"TiledMMA of {atom.name}, {size_line}")
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
            _wrote(args.copy_output, f"make_tiled_copy_{operand} with {tc.atom.name}")
        if args.banks:
            from .banks import analyze_copy

            rep = analyze_copy(tc, _parse_layout(args.banks))
            print("\n".join(rep.summary(max_conflicts=2).splitlines()[:2]))
            fc = rep.first_conflict
            print("  first conflict: " + (str(fc) if fc else "none"))
    return 0


def _parse_shape(text: str | None, what: str) -> list[int]:
    if not text:
        raise LayoutError(f"{what}: give the tensor shape with --shape, e.g. --shape 64,64")
    try:
        return [int(x) for x in text.replace("x", ",").split(",") if x.strip()]
    except ValueError:
        raise LayoutError(f"{what}: --shape {text!r} is not a list of ints like 64,64") from None


_SHOW_TILED_ONLY = {"atom_layout": "--atom-layout", "permutation": "--permutation", "copy": "--copy",
                    "copy_output": "--copy-output", "banks": "--banks", "mode": "--mode", "window": "--window"}


def cmd_show(args: argparse.Namespace) -> int:
    modes = [m for m, given in (("a layout", bool(args.layout)), ("--gluon", bool(args.gluon)),
                                ("--tiled-mma", bool(args.tiled_mma))) if given]
    if len(modes) > 1:
        raise LayoutError(f"show: give one of a layout, --gluon or --tiled-mma (got {' and '.join(modes)})")
    if args.tiled_mma:
        _refuse_unused(args, "show", "with --tiled-mma", {"shape": "--shape", "max": "--max",
                                                           "swizzle_bytes": "--swizzle-bytes"})
        _need_option(args, "show", "copy_output", "--copy-output", [("copy", "--copy")])
        _need_option(args, "show", "banks", "--banks", [("copy", "--copy")])
        _need_option(args, "show", "window", "--window", [("output", "-o")])
        _need_option(args, "show", "mode", "--mode", [("output", "-o"), ("copy_output", "--copy-output")])
        return _show_tiled(args)
    _refuse_unused(args, "show", "without --tiled-mma (they draw a TiledMMA)", _SHOW_TILED_ONLY)
    _need_option(args, "show", "swizzle_bytes", "--swizzle-bytes", [("output", "-o")])
    if args.gluon:
        from .interop.gluon import from_gluon, gluon_layout

        g = gluon_layout(args.gluon)
        own_shape = g.kind in ("DistributedLinearLayout", "PaddedSharedLayout")
        if own_shape and args.shape:
            raise LayoutError(f"show: --shape does nothing with a {g.kind}, which carries its own shape {list(g['shape'])}")
        shape = list(g["shape"]) if own_shape else _parse_shape(args.shape, "show --gluon")
        L = from_gluon(g, shape)
        head = f"{g.source} on {shape}:\n  {L}"
    elif args.layout:
        _refuse_unused(args, "show", "with a layout in CuTe notation (it is read by --gluon)", {"shape": "--shape"})
        from .parse import ParsedTensor, parse

        x = parse(args.layout)
        if isinstance(x, ParsedTensor):  # what CuTe printed for a tensor: its pointer, width, swizzle units
            print(x.describe())
        L = _parse_layout(args.layout)
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
        from . import viz

        if args.swizzle_bytes and args.tv:
            raise LayoutError("show: --swizzle-bytes draws shared memory, --tv a TV layout; give one")
        if args.swizzle_bytes:
            viz.save(viz.swizzle_scene(L, args.swizzle_bytes), args.output)
        elif args.tv:
            viz.save(viz.tv_scene(L, _parse_shape(args.tv, "show --tv"), max_rows=nmax, max_cols=nmax), args.output)
        else:
            viz.save(viz.layout_scene(L, max_rows=nmax, max_cols=nmax), args.output)
        _wrote(args.output, f"{L}" + ("" if args.verbose else " (-v also prints the offset grid)"))
    return 0


def cmd_eval(args: argparse.Namespace) -> int:
    L = _parse_layout(args.layout)
    c = _parse_coord(args.coord)
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


def _word(text: str) -> int | None:
    """The integer a descriptor word is written as (0x... hex, 0b..., or decimal), else None."""
    t = text.strip().replace("_", "").replace("'", "")
    try:
        return int(t, 0)
    except ValueError:
        return None


def _desc_tile(args: argparse.Namespace) -> int:
    """desc --major/--swizzle/--dtype/--tile: a canonical tile built from the atom."""
    wg = _need("layoutalg.nvidia.wgmma", "desc")
    mn, k = _parse_tile(args.tile or "64x64")
    major, swizzle, dtype = args.major or "K", 128 if args.swizzle is None else args.swizzle, args.dtype or "bf16"
    if args.instruction:
        try:
            wg.parse_instruction(args.instruction, dtype)
        except LayoutError as e:
            raise LayoutError(f"desc: --instruction {args.instruction}: {e}") from None
    tile = wg.tile(major, swizzle, dtype, (mn, k))
    print(f"tile      : {major}-major, {swizzle}B swizzle, {wg.dtype_name(dtype)}, {mn}x{k} (MN x K)")
    return _desc_derive(args, tile, dtype, major, swizzle, mn)


def _desc_derive(args: argparse.Namespace, layout: Any, dtype: str, major: Any, swizzle: Any, mn: int | None) -> int:
    """The descriptor of ``layout`` (when it is one canonical block) and of each k-block of the instruction."""
    import warnings

    wg = _need("layoutalg.nvidia.wgmma", "desc")
    bits = wg.dtype_bits(dtype)
    operand = args.operand or "A"
    start = args.start or 0
    if args.instruction:
        try:  # a bad --instruction is an error before anything is printed
            wg.parse_instruction(args.instruction, dtype)
        except LayoutError as e:
            raise LayoutError(f"desc: --instruction {args.instruction}: {e}") from None
    print(f"layout    : {layout}")
    whole: LayoutError | None = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            d = wg.descriptor_from_layout(layout, dtype, major=major, swizzle=swizzle, start_address=start,
                                          target=args.target)
        except LayoutError as e:
            whole = e
    if whole is None:
        p = d.params
        lbo = "unused (encoded 1)" if p.lbo_bytes is None else f"{p.lbo_bytes} B"
        print(f"canonical : {p.major}-major, {p.swizzle}B swizzle, T={p.T} m={p.m} k={p.k} LBO={lbo} SBO={p.sbo_bytes} B")
        print(d.descriptor.describe())
        for note in d.notes:
            print(f"note      : {note}")
        for w in caught:
            print(f"warning   : {w.message}")
    else:
        print(f"whole tile: not one canonical block ({whole}); per k-block:")
    if mn is None:
        f_rows = int(layout[0].size()) if len(layout) == 2 else 0
        mn = f_rows
    K = 256 // bits
    instr = args.instruction or f"m64n{mn if operand == 'B' and 8 <= mn <= 256 and mn % 8 == 0 else 128}k{K}"
    try:
        blocks = wg.k_block_descriptors(layout, dtype, instr, operand=operand, major=major, swizzle=swizzle,
                                        start_address=start, mn_block=None)
    except LayoutError as e:
        if whole is not None:
            raise LayoutError(f"desc: {layout} is not a canonical wgmma operand as a whole ({whole}) nor in "
                              f"{instr} k-blocks ({e})") from None
        if args.instruction:
            raise LayoutError(f"desc: {layout} is one canonical block, but not in {instr} operand {operand} "
                              f"k-blocks: {e}") from None
        print(f"\n{instr} operand {operand}: no k-blocks ({e})")
        return 0
    print(f"\n{instr} operand {operand}: {len(blocks)} slice(s)")
    rows = [
        {
            "mn": b.mn_block,
            "k": b.k_block,
            "offset B": b.offset_bytes,
            "start": f"{b.descriptor.start_address:#x}",
            "start>>4": b.descriptor.start_encoded,
            "word": f"{_target_word(b.descriptor, args.target):#018x}",
        }
        for b in blocks
    ]
    print(_table(rows, ["mn", "k", "offset B", "start", "start>>4", "word"]))
    return 0


def _target_word(d: Any, target: str) -> int:
    """The word of an sm_90 descriptor ``d``, or of the tcgen05 descriptor with its fields (sm_100)."""
    if target == "sm_100" and d.target != "sm_100":
        dm = _need("layoutalg.nvidia.descriptor", "desc")
        d = dm.Tcgen05Descriptor(d.start_address, d.leading_byte_offset, d.stride_byte_offset, d.base_offset, d.swizzle)
    return int(d.encode())


def _desc_word(args: argparse.Namespace, word: int) -> int:
    """desc WORD: the fields of a descriptor word, its swizzle mode and the canonical layout it implies."""
    dm = _need("layoutalg.nvidia.descriptor", "desc")
    wg = _need("layoutalg.nvidia.wgmma", "desc")
    cls = dm.Tcgen05Descriptor if args.target == "sm_100" else dm.MatrixDescriptor
    d = cls.decode(word)
    print(d.describe())
    if d.swizzle == "128B_base32B":
        print("swizzle   : 128B with 32-byte atomicity (tcgen05 only); no canonical layout for it in layoutalg")
        return 0
    sw = wg.canonical_swizzle(d.swizzle)
    print(f"swizzle   : {'none (interleave, 16-byte core matrices)' if d.swizzle == 0 else f'{d.swizzle}B'}: "
          f"{sw.ptx} on byte addresses" + (f", pattern repeats every {d.repeat_bytes} B" if d.swizzle else "")
          + (f"; base offset {d.base_offset} (pattern starts {d.base_offset * 128} B into a repeat)" if d.base_offset else ""))
    majors = [args.major.upper() if args.major.upper() == "K" else "MN"] if args.major else ["K", "MN"]
    dtype = args.dtype
    for major in majors:
        uses_lbo = not (major == "K" and d.swizzle)
        if dtype is None:
            form = wg.canonical_layout(major, d.swizzle)
            vals = (f"LBO = {d.leading_byte_offset} B, " if uses_lbo else "LBO unused, ") + f"SBO = {d.stride_byte_offset} B"
            print(f"{major + '-major':9s} : {form.ptx}  with {vals} (strides in elements = bytes / sizeof; give --dtype)")
            continue
        nb = wg.dtype_bits(dtype) // 8
        for name, b in (("LBO", d.leading_byte_offset if uses_lbo else 0), ("SBO", d.stride_byte_offset)):
            if b % nb:
                raise LayoutError(f"desc: {name} = {b} B is not a whole number of {wg.dtype_name(dtype)} elements")
        lbo = d.leading_byte_offset // nb if uses_lbo else None
        sbo = d.stride_byte_offset // nb
        if (lbo is not None and lbo <= 0) or sbo <= 0:
            print(f"{major + '-major':9s} : LBO/SBO of 0 describe no {major}-major canonical layout")
            continue
        form = wg.canonical_layout(major, d.swizzle, dtype, lbo=lbo, sbo=sbo)
        print(f"{major + '-major':9s} : {form}   ({wg.dtype_name(dtype)}; m, k: the tile's extent in core matrices)")
    return 0


def _desc_umma(args: argparse.Namespace) -> int:
    """desc --target sm_100 on a layout or a tile: tcgen05 descriptors (layoutalg.nvidia.umma_smem: also
    the 128B_base32B mode and 4-bit types), the whole block and each k-block (K = 32 bytes)."""
    us = _need("layoutalg.nvidia.umma_smem", "desc --target sm_100")
    if args.operand is not None:
        raise LayoutError("desc: --operand picks a wgmma instruction's block (--instruction); with --target sm_100 the "
                          "k-blocks span the whole MN extent of the tile")
    dtype = args.dtype or "bf16"
    if args.source is None:
        mn, k = _parse_tile(args.tile or "64x64")
        major, swizzle = args.major or "K", 128 if args.swizzle is None else args.swizzle
        layout = us.smem_tile(major, swizzle, dtype, (mn, k))
        print(f"tile      : {major}-major, {swizzle} swizzle, {dtype} ({us.smem_bits(dtype)}-bit), {mn}x{k} (MN x K)")
    else:
        _refuse_unused(args, "desc", "with a layout (it builds a canonical tile when no layout is given)",
                       {"tile": "--tile", "swizzle": "--swizzle"})
        if args.dtype is None:
            raise LayoutError("desc: --dtype is needed to derive a descriptor from a layout (its elements' type)")
        layout = _parse_layout(args.source)
    print(f"layout    : {layout}")
    try:
        d = us.descriptor_from_layout(layout, dtype, major=args.major, start_address=args.start or 0)
        print(f"canonical : {d.major}-major, {d.swizzle} swizzle, m={d.m} k={d.k} LBO={d.lbo_bytes} B SBO={d.sbo_bytes} B")
        print(d.descriptor.describe())
    except LayoutError as e:
        print(f"whole tile: not one canonical block ({e}); per k-block:")
    kb = 256 // us.smem_bits(dtype)
    blocks = us.k_block_descriptors(layout, dtype, K=kb, major=args.major, start_address=args.start or 0)
    print(f"\nk-blocks of K = {kb} ({dtype}, 32 bytes): {len(blocks)} (CuTe's descriptor iterator: start += offset >> 4)")
    rows = [{"k": b.k_block, "offset B": b.offset_bytes, "start>>4": b.descriptor.start_encoded,
             "word": f"{b.descriptor.encode():#018x}"} for b in blocks]
    print(_table(rows, ["k", "offset B", "start>>4", "word"]))
    print("(checked against CuTe C++ 4.2 make_umma_desc and Triton's sm_100a PTX on the host; not run on sm_100)")
    return 0


def _swizzle_arg(text: str) -> Any:
    """--swizzle: bytes (0, 32, 64, 128) or 128B_base32B (tcgen05)."""
    t = text.strip()
    if t.isdigit():
        return int(t)
    if t.lower().replace("_", "") in ("128bbase32b", "base32b"):
        return "128B_base32B"
    raise argparse.ArgumentTypeError(f"{text!r} is not 0, 32, 64, 128 or 128B_base32B")


def cmd_desc(args: argparse.Namespace) -> int:
    if args.target == "sm_100" and (args.source is None or _word(args.source) is None) and not args.instruction:
        return _desc_umma(args)
    if args.source is None:
        return _desc_tile(args)
    word = _word(args.source)
    if word is not None:
        _refuse_unused(args, "desc", "when decoding a descriptor word (the word holds them, or they need a layout)",
                       {"swizzle": "--swizzle", "tile": "--tile", "operand": "--operand",
                        "instruction": "--instruction", "start": "--start"})
        return _desc_word(args, word)
    _refuse_unused(args, "desc", "with a layout (it builds a canonical tile when no layout is given)",
                   {"tile": "--tile"})
    layout = _parse_layout(args.source)
    if args.dtype is None:
        raise LayoutError("desc: --dtype is needed to derive a descriptor from a layout (its elements' type)")
    return _desc_derive(args, layout, args.dtype, args.major, args.swizzle, None)


_FRAGMENT_OPTIONS = {"ctype": "--ctype", "kind": "--kind", "alayout": "--alayout", "blayout": "--blayout",
                     "sparse": "--sparse", "trans": "--trans"}


def _fragment_family(shape: str) -> str:
    if shape.startswith("m64"):
        return "wgmma"
    if shape in ("ldmatrix", "stmatrix"):
        return shape
    return "mma"


def _find_fragment(args: argparse.Namespace, cmd: str = "frag") -> Any:
    shape = args.shape
    family = _fragment_family(shape)
    fam = "mma.sp" if family == "mma" and args.sparse else family
    uses = {"wgmma": {"ctype"}, "ldmatrix": {"trans"}, "stmatrix": {"trans"}, "mma": {"ctype", "kind", "alayout", "blayout"},
            "mma.sp": {"ctype", "kind", "sparse"}}[fam]
    _refuse_unused(args, cmd, f"for a {fam} fragment ({shape})",
                   {a: f for a, f in _FRAGMENT_OPTIONS.items() if a not in uses})
    if family == "wgmma":
        wf = _need("layoutalg.nvidia.wgmma_fragments", "wgmma fragments")
        return wf.fragment(shape, args.dtype, args.operand, args.ctype)
    if family in ("ldmatrix", "stmatrix"):
        ldm = _need("layoutalg.nvidia.ldmatrix", "ldmatrix")
        text = (args.operand or "x4").strip().lower()
        if text not in ("x1", "x2", "x4", "1", "2", "4"):
            raise LayoutError(f"{cmd}: {family} takes x1, x2 or x4 where the operand goes; got {args.operand!r}")
        return ldm.fragment(int(text.lstrip("x")), bool(args.trans), dtype=args.dtype, store=family == "stmatrix")
    mma = _need("layoutalg.nvidia.mma", "the mma catalog")
    if args.sparse:
        return mma.sparse_fragment(shape, args.dtype, args.operand, ctype=args.ctype, kind=args.kind)
    return mma.fragment(
        shape,
        args.dtype,
        args.operand,
        alayout=args.alayout,
        blayout=args.blayout,
        ctype=args.ctype,
        kind=args.kind,
    )


def _frag_umma(args: argparse.Namespace) -> int:
    """``frag 'SM100_MMA_...<...>' - A|B|C``: a tcgen05 atom's operand (one thread per CTA)."""
    import numpy as np

    from .layout import Layout
    from .nvidia.umma import umma_atom, umma_type

    at = umma_atom(args.shape)
    ignored = [o for o, v in (("--ctype", args.ctype), ("--kind", args.kind), ("--sparse", args.sparse),
                              ("--trans", args.trans), ("--batch", args.batch),
                              ("--alayout", args.alayout is not None), ("--blayout", args.blayout is not None)) if v]
    if ignored:
        raise LayoutError(f"frag: {', '.join(ignored)} do not apply to a UMMA atom (its name fixes its configuration)")
    op = (args.operand or "").upper().replace("D", "C")
    if op not in ("A", "B", "C"):
        raise LayoutError(f"frag: operand {args.operand!r} of a UMMA atom is A, B or C (D)")
    want = {"A": at.a_type, "B": at.b_type, "C": at.c_type}[op]
    if args.dtype not in (None, "-") and umma_type(args.dtype) != want:
        raise LayoutError(f"frag: {at.name} has {op} of type {want}, not {args.dtype} (or give '-')")
    tv = {"A": at.ALayout, "B": at.BLayout, "C": at.CLayout}[op]
    rows, cols = {"A": (at.M, at.K), "B": (at.N, at.K), "C": (at.M, at.N)}[op]
    where = {"A": "tensor memory" if at.source == "TS" else "shared memory (descriptor)",
             "B": "shared memory (descriptor)", "C": "tensor memory"}[op]
    print(f"instruction : {at.notes.split(',')[0]}")
    print(f"atom        : {at.name}")
    print(f"operand     : {op} ({want}) {rows}x{cols}, in {where}; {at.cta_group} CTA(s), ThrID {at.ThrID}")
    print(f"TV layout   : {tv}   (CTA, value) -> {'m + M*k' if op == 'A' else 'n + N*k' if op == 'B' else 'm + M*n'}")
    per = rows // at.cta_group
    for c in range(at.cta_group):
        print(f"  CTA {c}     : rows {c * per}..{(c + 1) * per - 1} of {op}")
    t = np.sort(np.asarray(tv.table()).ravel())
    ok = bool(np.array_equal(t, np.arange(rows * cols)))
    print(f"verified    : {'yes' if ok else 'NO'} (every element of the {rows}x{cols} tile held by exactly one CTA; "
          "layouts checked against CuTe C++ 4.2 MMA_Traits, not run on sm_100 hardware)")
    if args.output:
        from . import viz

        owner = Layout(((per, at.cta_group), cols), ((0, 1), 0)) if at.cta_group > 1 else Layout((rows, cols), (0, 0))
        viz.save(viz.layout_scene(owner, max_rows=rows, max_cols=cols,
                                  title=f"{at.name}: {op} tile, cell = CTA that holds it"), args.output)
        print(f"wrote {args.output}")
    return 0 if ok else 1


def fragment_lines() -> list[str]:
    """Every fragment of the catalog as the arguments of ``layoutalg frag`` (what ``frag --list`` prints)."""
    out: list[str] = []
    mma = _need("layoutalg.nvidia.mma", "the mma catalog")
    for e in mma.catalog():
        if e.operand in ("SFA", "SFB"):
            continue
        words = [e.shape, e.dtype, e.operand]
        if e.operand in ("C", "D") and e.ctype:
            words.append(f"--ctype {e.ctype}")
        if e.kind:
            words.append(f"--kind {e.kind}")
        if e.shape == "m8n8k4" and e.dtype == "f16" and e.operand == "A" and e.alayout != "row":
            words.append(f"--alayout {e.alayout}")
        if e.shape == "m8n8k4" and e.dtype == "f16" and e.operand == "B" and e.blayout != "col":
            words.append(f"--blayout {e.blayout}")
        if e.sparse:
            words.append("--sparse")
        out.append(" ".join(words))
    wf = _need("layoutalg.nvidia.wgmma_fragments", "wgmma fragments")
    for key in wf.catalog():
        shape, dtype, op = key[:3]
        out.append(f"{shape} {dtype} {op}" + (f" --ctype {key[3]}" if len(key) > 3 else ""))
    for verb in ("ldmatrix", "stmatrix"):
        for num in (1, 2, 4):
            for trans in ("", " --trans"):
                out.append(f"{verb} b16 x{num}{trans}")
    return list(dict.fromkeys(out))


def _matches(line: str, pattern: str | None) -> bool:
    """Every word of ``pattern`` occurs in ``line`` (case-insensitive); ``*`` and ``?`` are wildcards."""
    import fnmatch

    if not pattern:
        return True
    toks = line.lower().split()
    for word in pattern.lower().split():
        if any(ch in word for ch in "*?["):
            ok = any(fnmatch.fnmatchcase(tok, word) for tok in toks)
        else:  # a short word names a whole token (C, f16, TN); a longer one may be part of a name (LDSM_T)
            ok = any(tok == word or (len(word) >= 4 and word in tok) for tok in toks)
        if not ok:
            return False
    return True


def _list(lines: list[str], pattern: str | None, what: str, cmd: str) -> int:
    hits = [ln for ln in lines if _matches(ln, pattern)]
    for ln in hits:
        print(ln)
    if not hits:
        raise LayoutError(f"{cmd} --list: no {what} matches {pattern!r} ({len(lines)} in all; try a shorter filter)")
    print(f"({len(hits)} of {len(lines)} {what})", file=sys.stderr)
    return 0


def cmd_frag(args: argparse.Namespace) -> int:
    if args.list is None and args.shape and args.shape.startswith(("SM100_MMA_", "cute::SM100_MMA_")):
        return _frag_umma(args)
    from .nvidia.ptx_formulas import i as i_sym
    from .nvidia.ptx_formulas import lane as lane_sym
    from .verify import verify

    if args.list is not None:
        words = [w for w in (args.shape, args.dtype, args.operand) if w]
        pattern = " ".join(([] if args.list is True else [args.list]) + words) or None
        _refuse_unused(args, "frag", "with --list", dict(_FRAGMENT_OPTIONS, batch="--batch", output="-o",
                                                          verbose="-v"))
        return _list(fragment_lines(), pattern, "fragments", "frag")
    if not (args.shape and args.dtype and args.operand):
        raise LayoutError("frag: give SHAPE DTYPE OPERAND (e.g. m16n8k16 f16 A), or --list [FILTER] to see them all")
    _need_option(args, "frag", "batch", "--batch", [("output", "-o")])
    F = _find_fragment(args)
    v = verify(F, F.formula.outputs, (lane_sym, i_sym))
    if args.batch is not None and not 0 <= args.batch < F.batch:
        raise LayoutError(f"frag: --batch {args.batch} is not one of the {F.batch} stacked matrices of {F.name} "
                          f"(0..{F.batch - 1})")
    if args.output and not args.verbose:
        from . import viz

        batch = "all" if F.batch > 1 and args.batch is None else (args.batch or 0)
        viz.save(viz.fragment_scene(F, batch=batch), args.output)
        _wrote(args.output, f"{F.name} ({F.instruction}), TV layout {F.layout}, "
                            f"verified {'yes' if v else 'NO'} ({v.method})")
        return 0 if v else 1
    print(f"instruction : {F.instruction}")
    print(
        f"operand     : {F.operand} ({F.dtype}, {F.element_bits} bits), {F.num_threads} threads x {F.num_values} values,"
        f" {F.num_registers} registers"
    )
    print(f"TV layout   : {F.layout}")
    print(f"PTX         : {F.ptx_section} {F.figure}".rstrip())
    for name, e in zip(F.formula.names, F.formula.outputs):
        print(f"  {name:9s} = {e}")
    print(f"verified    : {'yes' if v else 'NO'} ({v.method}, {v.checked} points)")
    if not v and v.counterexample is not None:
        print(f"              {v.counterexample}")
    if args.output:
        from . import viz

        batch = "all" if F.batch > 1 and args.batch is None else (args.batch or 0)
        viz.save(viz.fragment_scene(F, batch=batch), args.output)
        _wrote(args.output, f"{F.name}")
    return 0 if v else 1


def cmd_verify(args: argparse.Namespace) -> int:
    if args.layout is not None or args.formula is not None or args.inputs is not None:
        return _verify_formula(args)  # --inputs alone is refused there: it names the inputs of a formula
    t = time.perf_counter()
    rows, failures = prove_catalog()
    print(_table(rows, ["family", "fragments", "symbolic", "exhaustive", "failed"]))
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
    from .verify import verify

    if args.layout is None or args.formula is None:
        raise LayoutError("verify: give a layout and a formula, e.g. layoutalg verify \"(4,8):(8,1)\" \"8*r + c\" "
                          "--inputs r,c (or no arguments to prove the catalog)")
    L = _parse_layout(args.layout)
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


def _pattern(name: str, smem: Any, n: int) -> Any:
    """thread t of a warp reads an n-element vector: 'column' -> (t, 0..n) ; 'row' -> (0, t*n .. t*n+n)."""
    from .layout import Layout

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


def cmd_banks(args: argparse.Namespace) -> int:
    from . import banks

    if args.access and args.pattern:
        raise LayoutError("banks: --pattern does nothing with --access (give one access)")
    smem = _parse_layout(args.layout)
    vb = args.vector or args.bytes
    if vb % args.bytes:
        raise LayoutError(f"banks: --vector {vb} is not a multiple of --bytes {args.bytes}")
    access = _parse_layout(args.access) if args.access else _pattern(args.pattern or "column", smem, vb // args.bytes)
    rep = banks.analyze(smem, access, args.bytes, vb)
    if not args.output or args.verbose:
        print(rep.summary())
    if args.output:
        from . import viz

        viz.save(viz.banks_scene(rep), args.output)
        verdict = "conflict-free" if rep.conflict_free else f"{rep.ways}-way bank conflict"
        _wrote(args.output, f"{rep.wavefronts} wavefronts, ideal {rep.ideal} ({verdict})")
    return 0


def cmd_harness(args: argparse.Namespace) -> int:
    try:
        from . import gpu

        run_all = gpu.run_all
    except (ImportError, AttributeError) as e:
        print(
            f"layoutalg harness: the GPU harness is not available ({e}).\n"
            "It needs an NVIDIA GPU and `pip install 'layoutalg[gpu]'` (Triton, PyTorch); nothing was run.",
            file=sys.stderr,
        )
        return 0
    if not gpu.gpu_available():
        print("layoutalg harness: no CUDA GPU is visible; nothing was run. Replaying the recordings instead:")
        problems = gpu.replay_all()
        for name, probs in problems.items():
            print(f"  {name}: {'explained by the library' if not probs else f'{len(probs)} disagreements'}")
            for p in probs[:10]:
                print("    ", p)
        return 1 if any(problems.values()) else 0
    bad = gpu.failures(run_all())
    for b in bad:
        print("FAILED:", b)
    return 1 if bad else 0


# ---------------------------------------------------------------------------------------------
# report
# ---------------------------------------------------------------------------------------------
def _descriptor_table() -> tuple[str, bool]:
    wg = _need("layoutalg.nvidia.wgmma", "the descriptor table")
    keys = ["T", "m", "k", "LBO", "SBO", "LBO_encoded", "SBO_encoded"]
    lines = [
        "| Figure | example | exact layout | "
        + " | ".join(f"{k} PTX ISA / ours" for k in keys)
        + " | word | agrees |",
        "|" + "---|" * (len(keys) + 5),
    ]
    ok = True
    for ex in wg.seed_examples():
        cells = []
        for key in keys:
            s, d = ex.seed.get(key), ex.derived.get(key)
            cells.append(f"{'-' if s is None else s} / {d}")
        agree = all(v in (True, None) for v in ex.agrees.values())
        ok &= agree
        lines.append(
            f"| {ex.figure} | {ex.title} | `{ex.exact}` | "
            + " | ".join(cells)
            + f" | `{ex.derived['word']:#018x}` | {'yes' if agree else 'NO'} |"
        )
    lines.append("")
    lines.append(
        "LBO/SBO in bytes as the PTX ISA writes them (element count x sizeof); '-' where the PTX ISA's "
        "example gives no value."
    )
    return "\n".join(lines), ok


def _descriptor_console() -> str:
    """The PTX ISA's five worked wgmma descriptor examples, ours beside the ISA's, as a console table."""
    wg = _need("layoutalg.nvidia.wgmma", "the descriptor table")
    keys = ["T", "m", "k", "LBO", "SBO", "LBO_encoded", "SBO_encoded"]
    head = f"{'figure':<11}{'exact layout (as the PTX ISA spells it)':<55}" + "".join(
        f"{k.replace('_encoded', '>>4'):>12}" for k in keys) + "  agrees"
    lines = ["wgmma descriptors from the PTX ISA's worked examples: ISA / derived", head]
    for ex in wg.seed_examples():
        cells = []
        for key in keys:
            sv, dv = ex.seed.get(key), ex.derived.get(key)
            cells.append(f"{('-' if sv is None else sv)}/{dv}".rjust(12))
        agree = all(v in (True, None) for v in ex.agrees.values())
        lines.append(f"{ex.figure:<11}{ex.exact:<55}" + "".join(cells) + f"  {'yes' if agree else 'NO'}")
    lines.append("  (LBO/SBO in bytes; '-' where the ISA's excerpt gives none; NA: K-major swizzled LBO unused)")
    return "\n".join(lines)


def _m8n8k4_proofs() -> list[tuple[Any, Any]]:
    """(fragment, verdict) for every m8n8k4 entry of the catalog, proven against its PTX formula."""
    mma = _need("layoutalg.nvidia.mma", "the m8n8k4 formulas")
    from .nvidia.ptx_formulas import i as i_sym
    from .nvidia.ptx_formulas import lane as lane_sym
    from .verify import verify

    out = []
    for e in mma.catalog():
        if e.shape != "m8n8k4" or e.operand == "D":
            continue
        F = e.fragment()
        out.append((F, verify(F, F.formula.outputs, (lane_sym, i_sym))))
    return out


def _m8n8k4_section(proofs: list[tuple[Any, Any]]) -> str:
    """The markdown of the m8n8k4 proofs."""
    out = []
    for F, v in proofs:
        out.append(f"### {F.name} -- {F.figure}\n")
        out.append(f"- instruction: `{F.instruction}`")
        out.append(f"- TV layout (lane, i) -> element: `{F.layout}`")
        for name, ex in zip(F.formula.names, F.formula.outputs):
            out.append(f"- PTX `{name}` = `{ex}`")
        out.append(
            f"- layout == PTX formula on all {v.checked or F.num_threads * F.num_values} (lane, i): "
            f"**{'proven' if v else 'FAILED'}** ({v.method})\n"
        )
    return "\n".join(out)


def cmd_report(args: argparse.Namespace) -> int:

    if args.quiet and args.progress:
        raise LayoutError("report: -q (no progress bar) and --progress (a progress bar) ask for opposite things")
    t0 = time.perf_counter()
    out = args.output
    if not args.verbose:  # the tables go to report.md; the console gets the one-line summary (-v: everything)
        import contextlib
        import io

        with contextlib.redirect_stdout(io.StringIO()) as buf:
            rc = _report(args, t0, out)
        last = [ln for ln in buf.getvalue().splitlines() if ln.strip()][-2:]
        print("; ".join(last))
        return rc
    return _report(args, t0, out)


def _report(args: argparse.Namespace, t0: float, out: str) -> int:
    from . import viz

    fig_dir = os.path.join(out, "figures")
    os.makedirs(fig_dir, exist_ok=True)
    figures = sorted(viz.PTX_FIGURES)
    extra = _report_extra_pictures()
    prog = Progress(3 + len(figures) + len(extra), enabled=False if args.quiet else (True if args.progress else None))
    md = ["# layoutalg report", ""]
    ok = True

    try:
        table, good = _descriptor_table()
        ok &= good
        md += ["## wgmma descriptors: the PTX ISA's worked examples (PTX ISA 9.7.15.5.1.2.1.3)", "", table, ""]
        print(_descriptor_console())
    except Unavailable as e:
        md += ["## wgmma descriptors", "", f"unavailable: {e}", ""]
        print(f"layoutalg report: {e}", file=sys.stderr)
    prog.step("descriptor table")

    try:
        proofs = _m8n8k4_proofs()
        ok &= all(bool(v) for _, v in proofs)
        md += ["## mma.m8n8k4 fragments: layouts vs the PTX ISA's formulas", "", _m8n8k4_section(proofs)]
        print("\nmma.m8n8k4 fragments: TV layout vs the PTX ISA's row/col formula")
        for F, v in proofs:
            print(f"  {F.name + ' -- ' + F.figure:<52} {str(F.layout):<28} {'proven' if v else 'FAILED'}")
    except Unavailable as e:
        md += ["## mma.m8n8k4 fragments", "", f"unavailable: {e}", ""]
        print(f"layoutalg report: {e}", file=sys.stderr)
    prog.step("m8n8k4 formulas")

    try:
        rows, failures = prove_catalog()
        ok &= not failures
        md += [
            "## The catalog, proven",
            "",
            "```",
            _table(rows, ["family", "fragments", "symbolic", "exhaustive", "failed"]),
            "```",
            "",
        ]
        md += [f"- FAILED: {f}" for f in failures]
        print("\nthe whole catalog, each fragment against its PTX formula:")
        print(_table(rows, ["family", "fragments", "symbolic", "exhaustive", "failed"]))
        for f in failures:
            print("  FAILED:", f)
    except Unavailable as e:
        md += ["## The catalog", "", f"unavailable: {e}", ""]
        print(f"layoutalg report: {e}", file=sys.stderr)
    prog.step("catalog")

    md += ["## Figures", ""]
    for n in figures:
        name = f"figure_{n}.svg"
        try:
            viz.save(viz.ptx_figure(n), os.path.join(fig_dir, name))
            md.append(f"- [Figure {n}: {viz.PTX_FIGURES[n]}](figures/{name})")
        except (LayoutError, Unavailable, ImportError) as e:
            md.append(f"- Figure {n}: not drawn ({e})")
        prog.step(f"figure {n}")
    md += ["", "## Bank conflicts", ""]
    for name, title, build in extra:
        try:
            obj, text = build()
            viz.save(obj, os.path.join(fig_dir, name))
            md += [f"### {title}", "", f"![{title}](figures/{name})", "", "```", text, "```", ""]
        except (LayoutError, Unavailable, ImportError) as e:
            md.append(f"- {title}: not drawn ({e})")
        prog.step(name)
    if args.png:
        for n in (46, 140, 157):
            viz.save(viz.ptx_figure(n), os.path.join(fig_dir, f"figure_{n}.png"), dpi=100)
    path = os.path.join(out, "report.md")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("\n".join(md) + "\n")
    print(
        f"wrote {path} and {len(os.listdir(fig_dir))} pictures in {fig_dir} ({time.perf_counter() - t0:.1f} s)"
    )
    print("all checks passed" if ok else "SOME CHECKS FAILED (see report.md)")
    return 0 if ok else 1


def _report_extra_pictures() -> list:
    from . import banks
    from .layout import Layout

    def column_read(swizzled: bool, vector: int) -> Callable[[], tuple]:
        def build() -> tuple:
            from .parse import parse

            smem = parse("Sw<3,3,3> o (64,64):(64,1)") if swizzled else Layout((64, 64), (64, 1))
            n = vector // 2
            rep = banks.analyze(
                smem,
                Layout((32, n), (1, 64)),
                2,
                vector,
                description=f"warp reads column{'s 0-7' if n > 1 else ' 0'} of a 64x64 fp16 tile "
                f"{smem}, {vector} B per thread",
            )
            return rep, rep.summary(2)

        return build

    return [
        (
            "banks_rowmajor_column.svg",
            "row-major 64x64 fp16, column read (2 B per thread)",
            column_read(False, 2),
        ),
        (
            "banks_swizzled_column.svg",
            "128B-swizzled 64x64 fp16, column read (2 B per thread)",
            column_read(True, 2),
        ),
        (
            "banks_rowmajor_rows16.svg",
            "row-major 64x64 fp16, 16-byte row reads (ldmatrix-like)",
            column_read(False, 16),
        ),
        (
            "banks_swizzled_rows16.svg",
            "128B-swizzled 64x64 fp16, 16-byte row reads (ldmatrix-like)",
            column_read(True, 16),
        ),
    ]


def cmd_tma(args: argparse.Namespace) -> int:
    """`layoutalg tma`: derive the TMA tensor map of a shared tile; optionally check it against wgmma."""
    tm = _need("layoutalg.nvidia.tma", "tma")
    wg = _need("layoutalg.nvidia.wgmma", "tma")
    if args.smem:
        _refuse_unused(args, "tma", "with --smem (they build the wgmma tile used when --smem is not given)",
                       {"major": "--major", "swizzle": "--swizzle", "tile": "--tile", "desc_swizzle": "--desc-swizzle"})
    if not (args.check or args.desc_swizzle is not None):
        _refuse_unused(args, "tma", "without --check (they choose the wgmma descriptors checked)",
                       {"operand": "--operand", "instruction": "--instruction"})
    args.major = args.major or "K"
    args.swizzle = 128 if args.swizzle is None else args.swizzle
    shape = _parse_tile(args.tile or "64x64")
    smem = _parse_layout(args.smem) if args.smem else wg.tile(args.major, args.swizzle, args.dtype, shape)
    g = _parse_layout(args.gtensor)
    c = tm.make_tma_copy(g, smem, args.dtype, base_alignment=args.align, coalesce=args.coalesce)
    m = c.tensor_map
    origin = _parse_coord(args.origin) if args.origin else (0,) * len(c.global_shape)
    origin = origin if isinstance(origin, tuple) else (origin,)
    print(f"global    : {g}  ({m.data_type})")
    print(f"smem tile : {smem}")
    print(f"rank      : {m.rank}  (TMA dimension k walks global modes {[list(d.modes) for d in c.dims]})")
    print(f"globalDim : {list(m.global_dim)}")
    print(f"strides   : {list(m.global_strides)} B")
    print(f"boxDim    : {list(m.box_dim)}  ({m.box_bytes} B per load, rows {m.smem_row_bytes} B apart in shared memory)")
    print(f"swizzle   : {m.swizzle}   interleave {m.interleave}   l2 {m.l2_promotion}   oob fill {m.oob_fill}")
    coords = c.coordinates(origin)
    print(f"\n{len(c.loads)} load(s) per tile, {c.transaction_bytes} B (mbarrier expect-tx), tile origin {list(origin)}:")
    rows = [{"load": i, "smem +B": ld.smem_offset, "coords": str(list(co)), "tile element": str(list(ld.tile_coord))}
            for i, (ld, co) in enumerate(zip(c.loads, coords))]
    print(_table(rows[:32], ["load", "smem +B", "coords", "tile element"]))
    if len(rows) > 32:
        print(f"... {len(rows) - 32} more")
    for note in c.notes:
        print(f"note      : {note}")
    print("\n" + m.c_call())
    if args.check or args.desc_swizzle is not None:
        if args.smem and args.desc_swizzle is not None:
            raise LayoutError("tma: --desc-swizzle builds a wgmma tile from --major/--tile; it does not combine with --smem")
        dl = smem if args.desc_swizzle is None else wg.tile(args.major, args.desc_swizzle, args.dtype, shape)
        r = tm.check_wgmma(c, dl, operand_name=args.operand or "A", instruction=args.instruction)
        print(f"\nwgmma     : {r}")
        return 0 if r.ok else 1
    return 0


# ---------------------------------------------------------------------------------------------
# explain / synth
# ---------------------------------------------------------------------------------------------
def cmd_explain(args: argparse.Namespace) -> int:
    from .explain import explain

    names = [n.strip() for n in args.names.split(",")] if args.names else None
    if len(args.target) == 1:
        _refuse_unused(args, "explain", "for a layout (they choose a fragment: SHAPE DTYPE OPERAND)", _FRAGMENT_OPTIONS)
        x: Any = _parse_layout(args.target[0])
    elif len(args.target) in (2, 3):
        ns = argparse.Namespace(**vars(args))
        ns.shape, ns.dtype = args.target[0], args.target[1]
        ns.operand = args.target[2] if len(args.target) == 3 else ""
        x = _find_fragment(ns, "explain")
    else:
        raise LayoutError(f"explain: expected a layout or 'SHAPE DTYPE OPERAND', got {' '.join(args.target)!r}")
    e = explain(x, names=names)
    print(e.text)
    return 0 if e.verdict else 1


def _synth_access(text: str, shape: tuple[int, int], dtype: str, threads: int) -> Any:
    """An access from the command line: a preset name or ``TV-LAYOUT@BYTES``."""
    from . import synth

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
        L = _parse_layout(tv)
        if not isinstance(L, type(_parse_layout("1:0"))):
            raise LayoutError(f"synth: access {tv!r} must be a plain (thread, value) layout")
        return synth.Access(text, L, int(vb))
    raise LayoutError(f"synth: access {text!r} is not one of {sorted(presets)} nor TV-LAYOUT@BYTES")


def cmd_synth(args: argparse.Namespace) -> int:
    from . import synth

    if args.kernel:
        given = [w for w in (args.shape, args.dtype, *args.access) if w]
        if given:
            raise LayoutError(f"synth: --kernel {args.kernel} brings its own tile and accesses; "
                              f"{' '.join(given)} would be ignored")
        _refuse_unused(args, "synth", "with --kernel (it sets the copy presets' threads itself)",
                       {"threads": "--threads"})
        k = synth.kernel_accesses(args.kernel)
        shape, dtype, accesses = k.shape, k.dtype, list(k.accesses)
        print(k.description)
    else:
        if not args.shape or not args.dtype or not args.access:
            raise LayoutError("synth: give SHAPE DTYPE ACCESS... or --kernel NAME")
        from .nvidia.dtypes import dtype_name

        shape, dtype = _parse_tile(args.shape), dtype_name(args.dtype, op="synth")
        if args.threads is not None and not any(a in ("cp.async", "st.shared.v4", "block4") for a in args.access):
            raise LayoutError("synth: --threads does nothing without a copy preset that reads it "
                              "(cp.async, st.shared.v4, block4)")
        threads = 128 if args.threads is None else args.threads
        accesses = [_synth_access(a, shape, dtype, threads) for a in args.access]
    cons = [c for c in (args.constraints or "").split(",") if c]
    s = synth.synthesize_swizzle(shape, dtype, accesses, constraints=cons)
    print(s.summary())
    return 0


# ---------------------------------------------------------------------------------------------
# Parser
# ---------------------------------------------------------------------------------------------
def cmd_export(args: argparse.Namespace) -> int:
    gluon_text = args.gluon if isinstance(args.gluon, str) else None
    text = gluon_text or args.layout
    if not text:
        raise LayoutError("export: give a layout, e.g. layoutalg export --cpp \"(8,64):(64,1)\"")
    if gluon_text is not None and args.layout:
        raise LayoutError("export: give the layout once (after --gluon, or as the argument)")
    if args.gluon is not None:
        _refuse_unused(args, "export", "with --gluon (it is the element type of a wgmma tile for --cpp; "
                       "--bits gives Gluon the element width)", {"dtype": "--dtype"})
        if not args.shape:
            raise LayoutError("export --gluon: give the tensor shape with --shape, e.g. --shape 64,64")
        from .interop.gluon import to_gluon

        r = to_gluon(_parse_layout(text), _parse_shape(args.shape, "export --gluon"), kind=args.kind,
                     element_bitwidth=args.bits)
        print(r.source)
        return 0
    from .interop.cute import to_cute_cpp, to_cute_dsl

    lang = "with --dsl" if args.dsl else "with --cpp"
    _refuse_unused(args, "export", f"{lang} (they are read by --gluon)",
                   {"shape": "--shape", "bits": "--bits", "kind": "--kind"})
    if args.dsl:
        _refuse_unused(args, "export", "with --dsl (it names the GMMA atom type of --cpp)", {"dtype": "--dtype"})
    if text.strip().startswith(("SM100_TMEM_", "SM100_UTCCP_")):  # a TMEM copy atom: Copy_Atom<Op, T> / tcgen05 op
        from .nvidia.tmem_copy import tmem_copy_op

        op = tmem_copy_op(text)
        if args.dsl:
            print(to_cute_dsl(op))
        else:
            c = to_cute_cpp(op, dtype=args.dtype)
            print(f"{c.expr}\n{c.text}")
        return 0
    layout = _parse_layout(text)
    if args.dsl:
        print(to_cute_dsl(layout))
    else:
        print(to_cute_cpp(layout, dtype=args.dtype))
    return 0


def _address(text: str) -> int:
    try:
        v = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer (e.g. 0x2000 or 8192)") from None
    if v < 0:
        raise argparse.ArgumentTypeError(f"{v} is not a non-negative address")
    return v


def cmd_atoms(args: argparse.Namespace) -> int:
    """``atoms --list [FILTER]``: CuTe's names of the MMA and copy atoms; ``atoms NAME``: CuTe's print of one."""
    at = _need("layoutalg.nvidia.atoms", "atoms")
    names = [f"mma  {n}" for n in at.mma_atom_names()] + [f"copy {n}" for n in at.copy_atom_names()]
    from .nvidia.tmem_copy import tmem_copy_names  # tcgen05.ld/st/cp (sm_100): CuTe's SM100_TMEM_* / SM100_UTCCP_*

    names += [f"copy {n}" for n in tmem_copy_names() if f"copy {n}" not in names]
    if args.list is not None:
        from .nvidia.umma import umma_atom_names  # tcgen05.mma (sm_100): CuTe's SM100_MMA_* over types, M, N, majors

        names += [f"mma  {n}" for n in umma_atom_names()]
        _refuse_unused(args, "atoms", "with --list", {"dtype": "--dtype"})
        pattern = " ".join(([] if args.list is True else [args.list]) + ([args.name] if args.name else [])) or None
        return _list(names, pattern, "atoms", "atoms")
    if not args.name:
        raise LayoutError("atoms: give an atom name (SM80_16x8x16_F32F16F16F32_TN, SM75_U32x4_LDSM_N, ...) "
                          "or --list [FILTER]")
    name = args.name.strip()
    copy_names = {n.replace(" ", "") for n in at.copy_atom_names()}
    is_copy = name.replace(" ", "").replace("cute::", "") in copy_names or name.startswith(("SM75_U", "SM90_U",
                                                                                             "UniversalCopy", "SM80_CP",
                                                                                             "SM100_TMEM_", "SM100_UTCCP_"))
    if is_copy:
        a = at.copy_atom(name, args.dtype)
        print(f"Copy_Atom<{a.name}, {a.value_type}>  ({a.notes})")
        print(a)
        return 0
    _refuse_unused(args, "atoms", "for an MMA atom (its name holds its types)", {"dtype": "--dtype"})
    m = at.mma_atom(name)
    print(f"{m.name}  (value types D, A, B, C: {', '.join(m.value_types)})" + (f"  {m.notes}" if m.notes else ""))
    print(m)
    return 0


def _positive_int(text: str) -> int:
    try:
        v = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"{v} is not a positive integer")
    return v


class _ArgumentParser(argparse.ArgumentParser):
    """argparse, with a bad argument reported in one line (no usage block): ``layoutalg desc: error: ...``."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _add_fragment_options(s: argparse.ArgumentParser) -> None:
    """The options :func:`_find_fragment` reads beside SHAPE DTYPE OPERAND (frag, explain)."""
    s.add_argument("--ctype", help="accumulator type (default f32 where the instruction allows it); with A/B it "
                   "names the instruction")
    s.add_argument("--kind", help="f8f6f4, mxf8f6f4, mxf4, mxf4nvf4")
    s.add_argument("--alayout", choices=("row", "col"), help="m8n8k4 .f16 operand A: row (default) or col")
    s.add_argument("--blayout", choices=("row", "col"), help="m8n8k4 .f16 operand B: col (default) or row")
    s.add_argument("--sparse", action="store_true", help="mma.sp fragment")
    s.add_argument("--trans", action="store_true", help="ldmatrix .trans")


def build_parser() -> argparse.ArgumentParser:
    p = _ArgumentParser(
        prog="layoutalg",
        description="CuTe-style layouts and the NVIDIA tensor-core layouts, from the shell.",
        epilog="Exit codes: 0 ok; 1 a verification failed; 2 bad input or a missing part of the library.",
    )
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    s = sub.add_parser(
        "show",
        help="print a layout's offset grid; -o writes a picture",
        description="Print the offset grid of a layout given in CuTe notation (rows = mode 0).",
    )
    s.add_argument("layout", nargs="?", help='CuTe notation, e.g. "(4,2):(2,1)" or "Sw<3,3,3> o (8,64):(64,1)"')
    s.add_argument("--gluon", metavar="LAYOUT", help='a Gluon layout instead, e.g. "NVMMASharedLayout(128, 16)" (with --shape)')
    s.add_argument("--shape", help="the tensor shape of a --gluon layout, e.g. 64,64")
    s.add_argument("-o", "--output", help="write a picture (.svg or .png); prints one line (with -v also the grid)")
    s.add_argument("-v", "--verbose", action="store_true", help="with -o, also print the offset grid / CuTe's print")
    s.add_argument("--max", type=_positive_int, help="largest number of rows/columns shown (default 64)")
    s.add_argument("--tv", metavar="M,N",
                   help="draw the layout as a TV layout (thread, value) -> tile index on an M x N tile, each cell "
                        "labelled T<thread> V<value> as CuTe's print_latex_tv (needs -o)")
    s.add_argument(
        "--swizzle-bytes",
        type=int,
        metavar="BYTES",
        help="draw the picture as shared memory (16-byte chunks, banks) with elements of BYTES bytes",
    )
    s.add_argument("--tiled-mma", metavar="ATOM",
                   help="show a TiledMMA of this atom (CuTe's name, e.g. SM80_16x8x16_F32F16F16F32_TN, "
                        "SM90_64x128x16_F32BF16BF16_SS): CuTe's print, TV layouts, -o picture")
    s.add_argument("--atom-layout", metavar="MxNxK", help="atoms over threads: 2x2x1 or a layout (2,2,1):(2,1,0)")
    s.add_argument("--permutation", metavar="M,N,K", help="tile/permutation per mode: 32,32,16 or _,(8,2,2):(1,16,8),_")
    s.add_argument("--copy", action="append", metavar="OP:ATOM",
                   help="also a make_tiled_copy_<OP> with this copy atom, e.g. A:SM75_U32x4_LDSM_N (repeatable)")
    s.add_argument("--copy-output", metavar="FILE", help="write the tiled copy's picture (.svg or .png)")
    s.add_argument("--banks", metavar="SMEM", help="bank report of the --copy over this shared-memory layout")
    s.add_argument("--mode", choices=("auto", "cells", "blocks"),
                   help="tiled pictures: every cell, aggregated blocks, or auto (the default: cells up to 64x64)")
    s.add_argument("--window", metavar="M0:M1,N0:N1", help="tiled-MMA picture: only these rows/columns of C")
    s.set_defaults(func=cmd_show)

    s = sub.add_parser(
        "export",
        help="write a layout as code: CuTe C++ (--cpp, default), CuTe DSL (--dsl) or Gluon (--gluon)",
        description="Print a layout as code for a kernel: the CuTe C++ value and type (--cpp; a wgmma tile also "
        "as tile_to_shape of its GMMA atom), the CuTe DSL call (--dsl), or the Gluon layout "
        "(triton.experimental.gluon) equal to it on a tensor shape (--gluon, with --shape).",
    )
    s.add_argument("layout", nargs="?", help='CuTe notation, e.g. "(8,64):(64,1)" or "Sw<3,3,3> o (8,64):(64,1)"')
    lang = s.add_mutually_exclusive_group()
    lang.add_argument("--cpp", action="store_true", help="CuTe C++ (the default)")
    lang.add_argument("--dsl", action="store_true", help="CuTe DSL Python (cutlass.cute)")
    lang.add_argument("--gluon", nargs="?", const=True, metavar="LAYOUT",
                      help='Gluon: a shared layout (coordinate -> offset) or a TV layout (thread, value)')
    s.add_argument("--dtype", help="element type of a wgmma tile for --cpp (default: from the swizzle)")
    s.add_argument("--shape", help="the tensor shape for --gluon, e.g. 64,64")
    s.add_argument("--bits", type=int, choices=(4, 8, 16, 32, 64),
                   help="element bits (picks NVMMASharedLayout's element_bitwidth)")
    s.add_argument("--kind", choices=("shared", "distributed"), help="default: shared when the modes match --shape")
    s.set_defaults(func=cmd_export)

    s = sub.add_parser(
        "eval",
        help="evaluate a layout at a coordinate",
        description="Evaluate a layout at a 1-D index (5) or one coordinate per mode ((1,2)).",
    )
    s.add_argument("layout")
    s.add_argument("coord", help="an index like 5, or a coordinate like (1,2) or ((1,0),3)")
    s.set_defaults(func=cmd_eval)

    s = sub.add_parser(
        "desc",
        help="wgmma/tcgen05 matrix descriptors: decode a word, derive one from a layout, or of a canonical tile",
        description="layoutalg desc WORD decodes a descriptor word (0x...; --target sm_100 for tcgen05) into "
        "its fields, swizzle mode and the canonical layout it implies. layoutalg desc LAYOUT --dtype T "
        "derives the descriptor of a shared-memory layout given as text (and of each k-block of the "
        "instruction). Without either, --major/--swizzle/--dtype/--tile build a canonical tile from the atom.",
    )
    s.add_argument("source", nargs="?", help="a descriptor word (0x4000004000010001) or a layout in CuTe notation")
    s.add_argument("--major", help="K or MN (tile default K; inferred from a layout)")
    s.add_argument("--swizzle", type=_swizzle_arg,
                   help="0, 32, 64 or 128 bytes, or 128B_base32B (sm_100) (tile default 128; inferred from a layout)")
    s.add_argument("--dtype", help="tf32, f16, bf16, e4m3, e5m2, s8, u8; with --target sm_100 also e2m1 (4-bit) "
                   "(tile default bf16)")
    s.add_argument("--tile", help="MNxK in elements (default 64x64)")
    s.add_argument("--operand", choices=["A", "B"], help="A (default) or B")
    s.add_argument("--instruction", help="wgmma shape, e.g. m64n128k16 (default from the tile and dtype)")
    s.add_argument("--target", default="sm_90", choices=["sm_90", "sm_100"],
                   help="sm_90 wgmma descriptor (default) or sm_100 tcgen05")
    s.add_argument(
        "--start", type=_address, help="shared-memory byte address of the tile (default 0)"
    )
    s.set_defaults(func=cmd_desc)

    s = sub.add_parser(
        "frag",
        help="an mma / wgmma / ldmatrix fragment: layout, PTX formula, proof, picture",
        description="Look up a fragment (e.g. 'm16n8k16 f16 A', 'm64n64k16 f32 D', "
        "'ldmatrix b16 x4') and prove it against the PTX formula.",
    )
    s.add_argument("shape", nargs="?", help="m16n8k16, m8n8k4, m64n128k16 (wgmma), ldmatrix, stmatrix, or a tcgen05 "
                   "atom 'SM100_MMA_F16BF16_SS<bf16,bf16,float,128,256,K,K>' (dtype '-')")
    s.add_argument("dtype", nargs="?", help="f16, bf16, tf32, f64, s8, e4m3, ... or CuTe's half_t, bfloat16_t, "
                   "float_e4m3_t, ... (b16 for ldmatrix)")
    s.add_argument("operand", nargs="?", help="A, B, C or D (x1/x2/x4 for ldmatrix)")
    _add_fragment_options(s)
    s.add_argument("--batch", type=int, help="with -o: which stacked matrix to draw (default: all)")
    s.add_argument("-o", "--output", help="write a picture (.svg or .png); prints one line (-v: everything)")
    s.add_argument("-v", "--verbose", action="store_true", help="with -o, also print the fragment's details")
    s.add_argument("--list", nargs="?", const=True, metavar="FILTER",
                   help="list the catalog's fragments as frag arguments, those matching FILTER (words that must all "
                        "occur, * and ? wildcards; SHAPE DTYPE OPERAND given too filter as well)")
    s.set_defaults(func=cmd_frag)

    s = sub.add_parser(
        "verify",
        help="prove the whole catalog against the PTX formulas, or a layout against a formula",
        description="Without arguments: prove every catalogued fragment equal to its PTX formula and check the "
        "PTX ISA's worked descriptor examples. With LAYOUT FORMULA: prove the layout equal to the formula (text such as "
        "'8*r + c' or '64*row + 8*((col >> 3) ^ (row % 8)) + col % 8', read by a grammar, never evaluated). "
        "Exit 1 if anything differs.",
    )
    s.add_argument("layout", nargs="?", help='a layout in CuTe notation, e.g. "(4,8):(8,1)"')
    s.add_argument("formula", nargs="?", help="the formula of its offset, e.g. '8*r + c'")
    s.add_argument("--inputs", help="comma-separated input names, one per mode (default row,col for rank 2; i for rank 1)")
    s.set_defaults(func=cmd_verify)

    s = sub.add_parser(
        "banks",
        help="shared-memory bank conflicts of a warp access",
        description="Wavefronts of one warp reading a shared-memory layout (coordinate -> "
        "element offset). The access is a TV layout (thread, value) -> coordinate "
        "index (--access) or a preset (--pattern).",
    )
    s.add_argument("layout", help='shared-memory layout, e.g. "Sw<3,3,3> o (64,64):(64,1)"')
    s.add_argument("--bytes", type=int, default=2, help="bytes per element (default 2)")
    s.add_argument(
        "--vector", type=int, help="bytes per thread per instruction: 1, 2, 4, 8, 16 (default --bytes)"
    )
    s.add_argument("--access", help="TV layout (thread, value) -> coordinate index of the layout")
    s.add_argument(
        "--pattern",
        choices=("column", "row"),
        help="'column': thread t reads row t from column 0 (a vector along the row); "
        "'row': thread t reads the t-th vector of row 0 (default column)",
    )
    s.add_argument("-o", "--output", help="write a picture (.svg or .png); prints one line (-v: the report)")
    s.add_argument("-v", "--verbose", action="store_true", help="with -o, also print the whole report")
    s.set_defaults(func=cmd_banks)

    s = sub.add_parser("harness", help="run the GPU hardware checks (needs a GPU and Triton)")
    s.add_argument("action", choices=["run"])
    s.set_defaults(func=cmd_harness)

    s = sub.add_parser(
        "report",
        help="descriptor table, m8n8k4 formulas, catalog proof and pictures, in a folder",
        description="Reproduce the PTX ISA's worked descriptor examples and m8n8k4 fragment formulas, prove "
        "the catalog and write the pictures; exit 1 if a check fails.",
    )
    s.add_argument("-o", "--output", default="layoutalg-report", help="folder (default ./layoutalg-report)")
    s.add_argument("--png", action="store_true", help="also write a few PNGs (needs matplotlib)")
    s.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    s.add_argument("-v", "--verbose", action="store_true",
                   help="print the tables on the console too (by default one line: what was written, the verdict)")
    s.add_argument("--progress", action="store_true",
                   help="show progress even when stderr is not a terminal (by default only on a terminal)")
    s.set_defaults(func=cmd_report)

    s = sub.add_parser(
        "tma",
        help="TMA tensor map (cuTensorMapEncodeTiled arguments) of a shared tile; --check against wgmma",
        description="Derive the tensor map and the loads that write a shared tile from a global tensor "
        "(CuTe's make_tma_copy), print the cuTensorMapEncodeTiled call, and with --check prove that "
        "the wgmma descriptors of the tile read what the TMA writes (exit 1 if not).",
    )
    s.add_argument("gtensor", help='global tensor, shape:stride in elements, e.g. "(1000,512):(512,1)"')
    s.add_argument("--smem", help="shared tile layout (default: the wgmma tile of --major/--swizzle/--tile)")
    s.add_argument("--major", help="K or MN (default K)")
    s.add_argument("--swizzle", type=int, help="0, 32, 64 or 128 bytes (default 128)")
    s.add_argument("--dtype", default="bf16", help="f16, bf16, tf32, f32, e4m3, s8, ... or CuTe's half_t, "
                   "bfloat16_t, ... (default bf16)")
    s.add_argument("--tile", help="MNxK in elements (default 64x64)")
    s.add_argument("--origin", help="global coordinate of the tile's first element, e.g. (128,64)")
    s.add_argument("--align", type=int, default=16, help="alignment of the global base address in bytes (default 16)")
    s.add_argument("--coalesce", action="store_true", help="merge contiguous dimensions (CuTe with static strides)")
    s.add_argument("--check", action="store_true", help="check the tile's wgmma descriptors against the tensor map")
    s.add_argument("--desc-swizzle", type=int, help="check against the descriptors of this swizzle instead")
    s.add_argument("--operand", choices=["A", "B"], help="with --check: A (default) or B")
    s.add_argument("--instruction", help="wgmma shape for --check, e.g. m64n128k16 (default from the tile)")
    s.set_defaults(func=cmd_tma)

    s = sub.add_parser(
        "explain",
        help="a layout or fragment as the formula a person writes (proven)",
        description="Write each output of a layout (offset) or fragment (row, col) in the PTX ISA's C-like "
        "vocabulary -- groupID, threadID_in_group, i, shifts, masks, xor -- and prove it with verify. "
        "Give a layout ('Sw<3,3,3> o (64,64):(64,1)') or a fragment as for frag ('m16n8k16 f16 A').",
    )
    s.add_argument("target", nargs="+", help="a layout, or SHAPE DTYPE OPERAND of a fragment")
    s.add_argument("--names", help="comma-separated input names (e.g. tid,v for a TV layout)")
    _add_fragment_options(s)
    s.set_defaults(func=cmd_explain)

    s = sub.add_parser(
        "synth",
        help="the shared-memory swizzle with the fewest wavefronts for a set of accesses",
        description="Search Swizzle<B,M,S>, compositions of two and F2 xor maps of a row-major tile for the "
        "fewest shared-memory wavefronts over the accesses, beside no swizzle, CuTe's GMMA atoms and padding. "
        "Accesses: cp.async, st.shared.v4, ldmatrix, ldmatrix.trans, ldmatrix.x2, ldmatrix.x1, "
        "ldmatrix.colfirst, block4, or TV-LAYOUT@BYTES (thread, value) -> row + rows*col.",
    )
    s.add_argument("shape", nargs="?", help="ROWSxCOLS in elements, e.g. 128x64")
    s.add_argument("dtype", nargs="?", help="f16, bf16, tf32, f32, e4m3, s8, ...")
    s.add_argument("access", nargs="*", help="accesses (see above)")
    s.add_argument("--kernel", help="one of the built-in kernels: ampere_gemm_a, attention_v, fp8_transpose")
    s.add_argument("--threads", type=_positive_int, help="threads of the copy presets (default 128)")
    s.add_argument("--constraints", help="comma-separated: wgmma, tma")
    s.set_defaults(func=cmd_synth)

    s = sub.add_parser(
        "atoms",
        help="CuTe's MMA and copy atoms: list their names, or print one",
        description="layoutalg atoms --list [FILTER] lists the MMA atoms (mma.sync, mma.sp, wgmma) and copy atoms "
        "(ldmatrix, stmatrix, cp.async, UniversalCopy) by CuTe's names; layoutalg atoms NAME [--dtype T] prints "
        "the atom as CuTe prints it (a copy atom with value type T, CuTe spellings accepted).",
    )
    s.add_argument("name", nargs="?", help="an atom name, e.g. SM80_16x8x16_F32F16F16F32_TN or SM75_U32x4_LDSM_N")
    s.add_argument("--dtype", help="value type of a copy atom (default: the instruction's own unit)")
    s.add_argument("--list", nargs="?", const=True, metavar="FILTER",
                   help="list the atoms whose name matches FILTER (words that must all occur; * and ? wildcards)")
    s.set_defaults(func=cmd_atoms)

    _add_idesc_parser(sub)
    _add_tmem_parser(sub)
    return p


# ---------------------------------------------------------------------------------------------
# idesc: the tcgen05 (sm_100) instruction descriptor
# ---------------------------------------------------------------------------------------------

#: options of ``idesc encode`` that only the block-scaled kinds / only the plain kinds use
_IDESC_BLOCK_ONLY = (("scale_type", "--scale-type"), ("sfa_id", "--sfa-id"), ("sfb_id", "--sfb-id"), ("sf_vec_size", "--sf-vec-size"))
_IDESC_PLAIN_ONLY = (("saturate", "--saturate"), ("sparse_selector", "--sparse-selector"), ("max_shift", "--max-shift"), ("ws", "--ws"))


def _idesc_encode(args: argparse.Namespace) -> int:
    from .nvidia import idesc

    kind = idesc.canonical_kind(args.kind)
    blk = kind in idesc.BLOCK_SCALED_KINDS
    for dest, flag in _IDESC_PLAIN_ONLY if blk else _IDESC_BLOCK_ONLY:
        if getattr(args, dest) is not None and getattr(args, dest) is not False:
            raise LayoutError(f"idesc encode: {flag} is not an option of kind::{kind}")
    if kind == "i8" and (args.negate_a or args.negate_b):
        raise LayoutError("idesc encode: --negate-a/--negate-b are not options of kind::i8 (it cannot negate)")
    c = args.c
    if c is None:
        only = {"tf32": "f32", "i8": "s32"}.get(kind, "f32" if blk else None)
        if only is None:
            raise LayoutError(f"idesc encode: kind::{kind} needs --c (the accumulator type: f16 or f32)")
        c = only
    given = {dest: getattr(args, dest) for dest in (
        "negate_a", "negate_b", "saturate", "sparse", "sparse_selector", "scale_type", "sfa_id", "sfb_id",
        "max_shift", "cta_group", "ws", "k", "sf_vec_size") if getattr(args, dest) is not None and getattr(args, dest) is not False}
    d = idesc.make_instr_desc(kind, args.a, args.b, c, args.m, args.n, args.a_major, args.b_major, **given)
    print(f"0x{d.word:08x}")
    print(d.describe())
    return 0


def _idesc_decode(args: argparse.Namespace) -> int:
    from .nvidia import idesc

    word = _word(args.word)
    if word is None:
        raise LayoutError(f"idesc decode: {args.word!r} is not a number (write 0x08200490, 0b..., or decimal)")
    if args.kind is None:
        if args.sf_vec_size is not None:
            raise LayoutError("idesc decode: --sf-vec-size needs --kind (a block-scaled kind)")
        found = idesc.readings(word, cta_group=args.cta_group, ws=args.ws)
        if not found:
            idesc.decode(word, cta_group=args.cta_group, ws=args.ws)  # raises, naming each kind's rule
        if len(found) > 1:
            print(f"0x{word:08x} reads legally as {len(found)} kinds (pass --kind to pick one):")
        for k, d in enumerate(found):
            if k:
                print()
            print(d.describe())
        return 0
    d = idesc.decode(word, kind=args.kind, cta_group=args.cta_group, ws=args.ws, sf_vec_size=args.sf_vec_size)
    print(d.describe())
    return 0


def cmd_idesc(args: argparse.Namespace) -> int:
    return _idesc_encode(args) if args.idesc_command == "encode" else _idesc_decode(args)


def _add_idesc_parser(sub: Any) -> None:
    s = sub.add_parser(
        "idesc",
        help="the tcgen05 (sm_100 UMMA) instruction descriptor: encode or decode",
        description="Encode the 32-bit instruction descriptor of one tcgen05.mma bit for bit as CuTe's "
        "UMMA::make_instr_desc builds it, or decode a word into its fields in words. Checked against CuTe C++ "
        "4.2 on the host and Triton 3.6's PTX for sm_100a; none of it ran on sm_100 hardware.",
    )
    ss = s.add_subparsers(dest="idesc_command", metavar="encode|decode", required=True)
    e = ss.add_parser("encode", help="configuration -> word and its description")
    e.add_argument("--kind", required=True, help="f16, tf32, f8f6f4, i8, mxf8f6f4, mxf4, mxf4nvf4 (or kind::...)")
    e.add_argument("--a", required=True, help="A type: f16, bf16, tf32, e4m3, e5m2, e2m3, e3m2, e2m1, s8, u8 (or CuTe's names)")
    e.add_argument("--b", required=True, help="B type")
    e.add_argument("--c", help="accumulator (D) type: f16, f32, s32 (default: the kind's only one)")
    e.add_argument("-m", type=int, required=True, help="M of the instruction")
    e.add_argument("-n", type=int, required=True, help="N of the instruction")
    e.add_argument("--a-major", default="K", choices=["K", "MN"], help="A's major mode (default K)")
    e.add_argument("--b-major", default="K", choices=["K", "MN"], help="B's major mode (default K)")
    e.add_argument("--negate-a", action="store_true", help="negate A (not kind::i8)")
    e.add_argument("--negate-b", action="store_true", help="negate B (not kind::i8)")
    e.add_argument("--saturate", action="store_true", help="saturate (kind::i8 only)")
    e.add_argument("--sparse", action="store_true", help="sparse A (tcgen05.mma.sp)")
    e.add_argument("--sparse-selector", type=int, help="sparsity selector 0-3 (plain kinds, with --sparse)")
    e.add_argument("--cta-group", type=int, choices=[1, 2], help="cta_group::1 (default) or ::2")
    e.add_argument("--ws", action="store_true", help="tcgen05.mma.ws (plain kinds, cta_group::1)")
    e.add_argument("--max-shift", type=int, help="B-reuse max shift of .ws: 0, 8, 16, 32")
    e.add_argument("--k", type=int, help="K of the instruction (default the kind's; 96 for mxf4/mxf4nvf4 K=96)")
    e.add_argument("--scale-type", help="block-scaled kinds: ue8m0 or ue4m3 (mxf4nvf4)")
    e.add_argument("--sfa-id", type=int, help="block-scaled kinds: A scale-factor id")
    e.add_argument("--sfb-id", type=int, help="block-scaled kinds: B scale-factor id")
    e.add_argument("--sf-vec-size", type=int, help="block-scaled kinds: elements per scale factor (16 or 32)")
    e.set_defaults(func=cmd_idesc)
    d = ss.add_parser("decode", help="word -> its fields in words")
    d.add_argument("word", help="the descriptor: 0x08200490, 0b..., or decimal")
    d.add_argument("--kind", help="the kind (the word alone may read as several)")
    d.add_argument("--cta-group", type=int, choices=[1, 2], help="check the shape for this cta_group")
    d.add_argument("--ws", action="store_true", help="read it as a tcgen05.mma.ws descriptor")
    d.add_argument("--sf-vec-size", type=int, help="block-scaled kinds: elements per scale factor (16 or 32)")
    d.set_defaults(func=cmd_idesc)


# ---------------------------------------------------------------------------------------------
# tmem: tensor memory (sm_100): tcgen05.ld/st/cp atoms, UMMA accumulators, the epilogue's load
# ---------------------------------------------------------------------------------------------

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
    from .nvidia.tmem import TmemAllocation

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

    from .nvidia.tmem_copy import tmem_copy_op
    from .verify import verify

    op = tmem_copy_op(args.name)
    if op.kind == "cp":
        _refuse_unused(args, "tmem", f"for {op.name} (a tcgen05.cp: one issuing thread, no registers, no picture)",
                       {"warps": "--warps", "output": "-o", "window": "--window", "mode": "--mode"})
    else:
        _need_option(args, "tmem", "warps", "--warps", [("output", "-o")])
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
            from .explain import explain

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
        from . import viz
        from .viz_tmem import tmem_scene

        viz.save(tmem_scene(op, warps=args.warps, mode=args.mode or "auto", window=_tmem_window(args)), args.output)
        _wrote(args.output, f"{op.name}, {args.warps or 4} warp(s) on their lane quarters"
               + ("" if ok else "; a rule FAILED (see -v)") + ("" if args.verbose else " (-v also prints the map and rules)"))
    return 0 if ok else 1


def _tmem_accumulator(args: argparse.Namespace, quiet: bool) -> int:
    """``tmem SM100_MMA_...`` (the accumulator) or ``tmem LOAD --acc SM100_MMA_...`` (the epilogue's load)."""
    import numpy as np

    from .nvidia.atoms import value_bits
    from .nvidia.tmem_accum import dp, epilogue_tv, make_tmem_copy, umma_accumulator
    from .nvidia.umma import umma_atom

    load = None if args.acc is None else args.name
    at = umma_atom(args.acc if load else args.name)
    mode = f"with --acc (the load of {at.name}'s accumulator)" if load else f"for the accumulator of {at.name}"
    _refuse_unused(args, "tmem", mode, {"warps": "--warps"})
    M, N = (at.M, at.N) if not args.tile else _parse_tile(args.tile)
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
            from .explain import explain

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
        from . import viz
        from .viz_tmem import tmem_scene

        viz.save(tmem_scene(at, load=load, tile=(M, N) if args.tile else None, mode=args.mode or "auto",
                            window=_tmem_window(args)), args.output)
        _wrote(args.output, (f"{load} over " if load else "") + f"the accumulator of {at.name}"
               + ("" if ok else "; a rule FAILED (see -v)") + ("" if args.verbose else " (-v also prints the map and rules)"))
    return 0 if ok else 1


def cmd_tmem(args: argparse.Namespace) -> int:
    _need_option(args, "tmem", "window", "--window", [("output", "-o")])
    _need_option(args, "tmem", "mode", "--mode", [("output", "-o")])
    _need_option(args, "tmem", "verbose", "-v", [("output", "-o")])
    quiet = bool(args.output) and not args.verbose
    name = args.name.strip()
    if name.startswith("SM100_MMA_"):
        if args.acc is not None:
            raise LayoutError("tmem: --acc names the accumulator a load reads; NAME is already a UMMA atom (give a "
                              "tcgen05.ld atom as NAME)")
        return _tmem_accumulator(args, quiet)
    if args.acc is not None:
        if not name.startswith("SM100_TMEM_LOAD_"):
            raise LayoutError(f"tmem: --acc takes a tcgen05.ld atom (SM100_TMEM_LOAD_*) as NAME, not {name!r}")
        return _tmem_accumulator(args, quiet)
    _refuse_unused(args, "tmem", "for a copy atom alone (they describe an accumulator: give --acc)",
                   {"tile": "--tile"})
    return _tmem_atom(args, quiet)


def _add_tmem_parser(sub: Any) -> None:
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
    s.add_argument("--tile", help="with a UMMA atom: the tile M x N (one MMA; default the atom's)")
    s.add_argument("--alloc", type=int, metavar="COLUMNS",
                   help="check against a tcgen05.alloc of COLUMNS columns (default: the smallest that holds it)")
    s.add_argument("--warps", type=int, choices=(1, 2, 3, 4), help="with -o and a ld/st atom: warps drawn (default 4)")
    s.add_argument("-o", "--output", help="write the TMEM picture (.svg or .png)")
    s.add_argument("--window", help="with -o: LANE0:LANE1,COL0:COL1, cell by cell")
    s.add_argument("--mode", choices=("auto", "cells", "blocks"), help="with -o: cells, aggregated blocks, or auto")
    s.add_argument("-v", "--verbose", action="store_true", help="with -o, also print the map and the rules")
    s.set_defaults(func=cmd_tmem)


def _one_line(text: str, limit: int = 400) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 3] + "..."


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``layoutalg`` console script; returns the exit code.

    Bad input never ends in a traceback: an argument argparse refuses or a LayoutError exits 2 with one
    line on stderr, a file that cannot be written exits 2, and an unexpected exception (a bug) exits 3
    with one line (``LAYOUTALG_TRACEBACK=1`` shows the traceback).
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except LayoutError as e:
        print(f"layoutalg {args.command}: error: {_one_line(str(e))}", file=sys.stderr)
        return 2
    except Unavailable as e:
        print(f"layoutalg {args.command}: unavailable: {_one_line(str(e))}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # pragma: no cover - e.g. piped into head
        return 0
    except KeyboardInterrupt:  # pragma: no cover
        print(f"layoutalg {args.command}: interrupted", file=sys.stderr)
        return 130
    except OSError as e:
        print(f"layoutalg {args.command}: error: {_one_line(str(e))}", file=sys.stderr)
        return 2
    except Exception as e:  # a bug: say so in one line unless asked for the traceback
        if os.environ.get("LAYOUTALG_TRACEBACK"):
            raise
        print(f"layoutalg {args.command}: internal error: {type(e).__name__}: {_one_line(str(e))} "
              "(LAYOUTALG_TRACEBACK=1 shows where)", file=sys.stderr)
        return 3


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
