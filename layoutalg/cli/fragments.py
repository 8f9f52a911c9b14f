"""``layoutalg frag`` and ``layoutalg atoms``: the catalog's fragments (layout, PTX formula, proof, picture)
and CuTe's MMA / copy atoms by name.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..errors import LayoutError
from .common import command, need, need_option, refuse_unused, wrote


#: the fragment options beside SHAPE DTYPE OPERAND: attribute -> how the user spells it
FRAGMENT_OPTIONS = {"ctype": "--ctype", "kind": "--kind", "alayout": "--alayout", "blayout": "--blayout",
                     "sparse": "--sparse", "trans": "--trans"}


def add_fragment_options(s: argparse.ArgumentParser) -> None:
    """The options :func:`find_fragment` reads beside SHAPE DTYPE OPERAND (frag, explain)."""
    if not isinstance(s, argparse.ArgumentParser):
        raise LayoutError(f"add_fragment_options: expects an argparse parser, got {type(s).__name__}")
    s.add_argument("--ctype", help="accumulator type (default f32 where the instruction allows it); with A/B it "
                   "names the instruction")
    s.add_argument("--kind", help="f8f6f4, mxf8f6f4, mxf4, mxf4nvf4")
    s.add_argument("--alayout", choices=("row", "col"), help="m8n8k4 .f16 operand A: row (default) or col")
    s.add_argument("--blayout", choices=("row", "col"), help="m8n8k4 .f16 operand B: col (default) or row")
    s.add_argument("--sparse", action="store_true", help="mma.sp fragment")
    s.add_argument("--trans", action="store_true", help="ldmatrix .trans")


def _fragment_family(shape: str) -> str:
    if shape.startswith("m64"):
        return "wgmma"
    if shape in ("ldmatrix", "stmatrix"):
        return shape
    return "mma"


@command
def find_fragment(args: argparse.Namespace, cmd: str = "frag") -> Any:
    """The catalog's fragment named by SHAPE DTYPE OPERAND and the fragment options (frag, explain)."""
    shape = args.shape
    family = _fragment_family(shape)
    fam = "mma.sp" if family == "mma" and args.sparse else family
    uses = {"wgmma": {"ctype"}, "ldmatrix": {"trans"}, "stmatrix": {"trans"}, "mma": {"ctype", "kind", "alayout", "blayout"},
            "mma.sp": {"ctype", "kind", "sparse"}}[fam]
    refuse_unused(args, cmd, f"for a {fam} fragment ({shape})",
                   {a: f for a, f in FRAGMENT_OPTIONS.items() if a not in uses})
    if family == "wgmma":
        wf = need("layoutalg.nvidia.hopper.wgmma_fragments", "wgmma fragments")
        return wf.fragment(shape, args.dtype, args.operand, args.ctype)
    if family in ("ldmatrix", "stmatrix"):
        ldm = need("layoutalg.nvidia.ampere.ldmatrix", "ldmatrix")
        text = (args.operand or "x4").strip().lower()
        if text not in ("x1", "x2", "x4", "1", "2", "4"):
            raise LayoutError(f"{cmd}: {family} takes x1, x2 or x4 where the operand goes; got {args.operand!r}")
        return ldm.fragment(int(text.lstrip("x")), bool(args.trans), dtype=args.dtype, store=family == "stmatrix")
    mma = need("layoutalg.nvidia.ampere.mma", "the mma catalog")
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


def _refuse_configuration_options(args: argparse.Namespace, what: str) -> None:
    """An atom or instruction named in full: the options that configure a catalog fragment would be ignored."""
    ignored = [o for o, v in (("--ctype", args.ctype), ("--kind", args.kind), ("--sparse", args.sparse),
                              ("--trans", args.trans), ("--batch", args.batch),
                              ("--alayout", args.alayout is not None), ("--blayout", args.blayout is not None)) if v]
    if ignored:
        raise LayoutError(f"frag: {', '.join(ignored)} do not apply to {what} (its name fixes its configuration)")


def _frag_sm120(args: argparse.Namespace) -> int:
    """``frag 'SM120_16x8x32_TN<...>' - A|B|C|SFA|SFB|E``: an sm_120 atom's operand (CuTe's TV layout)."""
    import numpy as np

    from ..nvidia.blackwell.sm120 import sm120_atom
    from ..nvidia.blackwell.umma import umma_type

    at = sm120_atom(args.shape)
    _refuse_configuration_options(args, "an SM120 atom")
    op = (args.operand or "").upper().replace("D", "C") if (args.operand or "").upper() != "E" else "E"
    tv = {"A": at.ALayout, "B": at.BLayout, "C": at.CLayout, "SFA": at.SFALayout, "SFB": at.SFBLayout,
          "E": at.ELayout}.get(op)
    if tv is None:
        have = "A, B, C" + (", SFA, SFB" if at.sfa_layout is not None else "") + (", E" if at.e_layout is not None else "")
        raise LayoutError(f"frag: operand {args.operand!r} of {at.name}: it has {have}")
    want = {"A": at.a_type, "B": at.b_type, "C": at.c_type}.get(op, at.sf_type if op.startswith("SF") else "u8")
    if args.dtype not in (None, "-") and op in ("A", "B", "C") and umma_type(args.dtype) != want:
        raise LayoutError(f"frag: {at.name} has {op} of type {want}, not {args.dtype} (or give '-')")
    M, N, K = at.shape_mnk
    rows, cols = {"A": (M, K), "B": (N, K), "C": (M, N), "SFA": (M, K), "SFB": (N, K), "E": (M, K)}[op]
    print(f"instruction : {at.instruction}")
    print(f"atom        : {at.name}")
    print(f"operand     : {op} ({want}) {rows}x{cols}; 32 threads x {int(tv[1].size())} values")
    print(f"TV layout   : {tv}   (thread, value) -> {'n' if op in ('B', 'SFB') else 'm'} + {rows}*"
          f"{'n' if op == 'C' else 'k'}")
    t = np.asarray(tv.table()).ravel()
    ok = bool(set(t.tolist()) == set(range(rows * cols)))
    print(f"verified    : {'yes' if ok else 'NO'} (every element of the {rows}x{cols} tile held by a thread; "
          "layouts checked against CuTe C++ 4.2 MMA_Traits and the PTX fragments, not run on sm_120)")
    if args.output:
        from .. import viz

        viz.save(viz.tv_scene(tv, (rows, cols), max_rows=rows, max_cols=cols, title=f"{at.name}: {op}"), args.output)
        print(f"wrote {args.output}")
    return 0 if ok else 1


def _frag_umma(args: argparse.Namespace) -> int:
    """``frag 'SM100_MMA_...<...>' [-] A|B|C``: a tcgen05 atom's operand (one thread per CTA)."""
    import numpy as np

    from ..layout import Layout
    from ..nvidia.blackwell.umma import UMMAAtom, umma_atom, umma_type

    at: UMMAAtom
    if "SM103_MXF4_ULTRA" in args.shape:
        from ..nvidia.blackwell.sm103 import sm103_atom

        at = sm103_atom(args.shape)
    else:
        at = umma_atom(args.shape)
    _refuse_configuration_options(args, "a UMMA atom")
    if args.operand is None and (args.dtype or "").upper() in ("A", "B", "C", "D"):
        args.operand, args.dtype = args.dtype, None  # frag ATOM C: the name fixes the type, no '-' needed
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
        from .. import viz

        owner = Layout(((per, at.cta_group), cols), ((0, 1), 0)) if at.cta_group > 1 else Layout((rows, cols), (0, 0))
        viz.save(viz.layout_scene(owner, max_rows=rows, max_cols=cols,
                                  title=f"{at.name}: {op} tile, cell = CTA that holds it"), args.output)
        print(f"wrote {args.output}")
    return 0 if ok else 1


def fragment_lines() -> list[str]:
    """Every fragment of the catalog as the arguments of ``layoutalg frag`` (what ``frag --list`` prints)."""
    out: list[str] = []
    mma = need("layoutalg.nvidia.ampere.mma", "the mma catalog")
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
    wf = need("layoutalg.nvidia.hopper.wgmma_fragments", "wgmma fragments")
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


def _frag_amd(args: argparse.Namespace) -> int:
    """``frag v_mfma_f32_32x32x8_f16 - A|B|C|D``: an AMD matrix instruction's operand (one wave), proven."""
    from ..amd import mfma, wmma
    from ..amd.common import i as i_sym
    from ..amd.common import lane as lane_sym
    from ..verify import verify

    name = args.shape.strip()
    _refuse_configuration_options(args, "an AMD instruction")
    from ..amd import GFX1250_INSTRUCTIONS, wmma1250
    from ..amd.common import name_key

    gfx1250 = name_key(name) in {name_key(n) for n in GFX1250_INSTRUCTIONS}
    instr = wmma1250(name) if gfx1250 else wmma(name) if "wmma" in name.lower() else mfma(name)
    op = (args.operand or "").upper().replace("C", "D")
    if op not in ("A", "B", "D"):
        raise LayoutError(f"frag: operand {args.operand!r} of {instr.name} is A, B or C (D)")
    F = instr.fragment(op)
    if args.dtype not in (None, "-") and args.dtype.lower() != F.dtype.lower():
        raise LayoutError(f"frag: {instr.name} has {op} of type {F.dtype}, not {args.dtype} (or give '-')")
    v = verify(F, F.formula, (lane_sym, i_sym))
    rows, cols = F.codomain
    if args.output:
        from .. import viz

        viz.save(viz.tv_scene(F.layout, F.codomain if F.blocks == 1 else (rows, cols * F.blocks),
                              title=f"{instr.name} ({instr.arch}) {op}"), args.output)
        wrote(args.output, f"{instr.name} {op}, TV layout {F.layout}, verified {'yes' if v else 'NO'} ({v.method})")
        return 0 if v else 1
    print(f"instruction : {instr.name} ({instr.arch}, wave{F.wave})")
    print(f"operand     : {op} ({F.dtype}) {rows}x{cols}" + (f", {F.blocks} blocks" if F.blocks > 1 else "")
          + f"; {F.num_values} values per lane")
    print(f"TV layout   : {F.layout}   (lane, value) -> {'m + M*k' if op == 'A' else 'n + N*k' if op == 'B' else 'm + M*n'}"
          + (" + block" if F.blocks > 1 else ""))
    for what, e in zip(("row", "col", "block"), F.formula):
        if what != "block" or F.blocks > 1:
            print(f"  {what:9s} = {e}")
    print(f"verified    : {'yes' if v else 'NO'} ({v.method}, {v.checked} points)")
    if not v and v.counterexample is not None:
        print(f"              {v.counterexample}")
    return 0 if v else 1


@command
def cmd_frag(args: argparse.Namespace) -> int:
    if args.list is None and args.shape and args.shape.startswith(("SM100_MMA_", "cute::SM100_MMA_", "SM103",
                                                                   "cute::SM103")):
        return _frag_umma(args)
    if args.list is None and args.shape and args.shape.replace("cute::", "").startswith("SM120"):
        return _frag_sm120(args)
    if args.list is None and args.shape and args.shape.lower().startswith(("v_mfma", "v_smfmac", "v_wmma", "v_swmmac")):
        return _frag_amd(args)
    from ..nvidia.common.ptx_formulas import i as i_sym
    from ..nvidia.common.ptx_formulas import lane as lane_sym
    from ..verify import verify

    if args.list is not None:
        words = [w for w in (args.shape, args.dtype, args.operand) if w]
        pattern = " ".join(([] if args.list is True else [args.list]) + words) or None
        refuse_unused(args, "frag", "with --list", dict(FRAGMENT_OPTIONS, batch="--batch", output="-o",
                                                          verbose="-v"))
        return _list(fragment_lines(), pattern, "fragments", "frag")
    if not (args.shape and args.dtype and args.operand):
        raise LayoutError("frag: give SHAPE DTYPE OPERAND (e.g. m16n8k16 f16 A), or --list [FILTER] to see them all")
    need_option(args, "frag", "batch", "--batch", [("output", "-o")])
    F = find_fragment(args)
    v = verify(F, F.formula.outputs, (lane_sym, i_sym))
    if args.batch is not None and not 0 <= args.batch < F.batch:
        raise LayoutError(f"frag: --batch {args.batch} is not one of the {F.batch} stacked matrices of {F.name} "
                          f"(0..{F.batch - 1})")
    if args.output and not args.verbose:
        from .. import viz

        batch = "all" if F.batch > 1 and args.batch is None else (args.batch or 0)
        viz.save(viz.fragment_scene(F, batch=batch), args.output)
        wrote(args.output, f"{F.name} ({F.instruction}), TV layout {F.layout}, "
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
        from .. import viz

        batch = "all" if F.batch > 1 and args.batch is None else (args.batch or 0)
        viz.save(viz.fragment_scene(F, batch=batch), args.output)
        wrote(args.output, f"{F.name}")
    return 0 if v else 1


@command
def cmd_atoms(args: argparse.Namespace) -> int:
    """``atoms --list [FILTER]``: CuTe's names of the MMA and copy atoms; ``atoms NAME``: CuTe's print of one."""
    at = need("layoutalg.nvidia.atoms", "atoms")
    names = [f"mma  {n}" for n in at.mma_atom_names()] + [f"copy {n}" for n in at.copy_atom_names()]
    from ..nvidia.blackwell.tmem_copy import tmem_copy_names  # tcgen05.ld/st/cp (sm_100): CuTe's SM100_TMEM_* / SM100_UTCCP_*

    names += [f"copy {n}" for n in tmem_copy_names() if f"copy {n}" not in names]
    if args.list is not None:
        from ..nvidia.blackwell.umma import umma_atom_names  # tcgen05.mma (sm_100): CuTe's SM100_MMA_* over types, M, N, majors

        names += [f"mma  {n}" for n in umma_atom_names()]
        from .. import registry  # every other vendor's atoms, by their vendor's names (AMD's v_mfma_* / v_wmma_*)

        names += [f"mma  {n}" for n in registry.atom_names("mma", vendor="nvidia", arch=("sm120", "sm103"))]
        names += [f"mma  {n}" for n in registry.atom_names("mma", vendor="amd") if f"mma  {n}" not in names]
        refuse_unused(args, "atoms", "with --list", {"dtype": "--dtype"})
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
    refuse_unused(args, "atoms", "for an MMA atom (its name holds its types)", {"dtype": "--dtype"})
    if name.lower().startswith("v_"):
        from .. import registry

        m = registry.mma_atom(name)
    else:
        m = at.mma_atom(name)
    print(f"{m.name}  (value types D, A, B, C: {', '.join(m.value_types)})" + (f"  {m.notes}" if m.notes else ""))
    print(m)
    return 0
