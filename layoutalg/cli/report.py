"""``layoutalg report``: the PTX ISA's worked examples, the catalog proof and the pictures, in a folder.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any
from collections.abc import Callable

from ..errors import LayoutError
from .common import Progress, Unavailable, command, format_table, need


@command
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
    from .. import viz
    from . import prove_catalog  # through the package, as verify (a test may replace it)

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
            format_table(rows, ["family", "fragments", "symbolic", "exhaustive", "failed"]),
            "```",
            "",
        ]
        md += [f"- FAILED: {f}" for f in failures]
        print("\nthe whole catalog, each fragment against its PTX formula:")
        print(format_table(rows, ["family", "fragments", "symbolic", "exhaustive", "failed"]))
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


def _descriptor_table() -> tuple[str, bool]:
    wg = need("layoutalg.nvidia.hopper.wgmma", "the descriptor table")
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
    wg = need("layoutalg.nvidia.hopper.wgmma", "the descriptor table")
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
    mma = need("layoutalg.nvidia.ampere.mma", "the m8n8k4 formulas")
    from ..nvidia.common.ptx_formulas import i as i_sym
    from ..nvidia.common.ptx_formulas import lane as lane_sym
    from ..verify import verify

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


def _report_extra_pictures() -> list:
    from .. import banks
    from ..layout import Layout

    def column_read(swizzled: bool, vector: int) -> Callable[[], tuple]:
        def build() -> tuple:
            from ..parse import parse

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
