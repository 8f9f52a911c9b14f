"""Pictures of a kernel report (:mod:`layoutalg.viz`): every layout on the tile it is used with, and the banks of
every shared-memory access with conflicts; as SVG files or one HTML page.

* a register layout: the tile with each element labelled by the thread and register that hold it
  (:func:`~layoutalg.viz.tv_scene`);
* a shared layout: the tile's element offsets (:func:`~layoutalg.viz.layout_scene`);
* a shared-memory access: banks x wavefronts of its worst instruction (:func:`~layoutalg.viz.banks_scene`).

Tiles larger than 64 x 64 are cut to their first 64 x 64 elements (the title says so).

    >>> from layoutalg.kernel import inspect_ttgir
    >>> r = inspect_ttgir('''
    ... #blocked = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [1, 1], order = [1, 0]}>
    ... #shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
    ... module attributes {"ttg.num-warps" = 1 : i32} {
    ...   tt.func public @k(%x: tensor<8x16xf16, #blocked>) {
    ...     %m = ttg.local_alloc %x : (tensor<8x16xf16, #blocked>) -> !ttg.memdesc<8x16xf16, #shared, #ttg.shared_memory>
    ...     tt.return
    ...   }
    ... }''')
    >>> sorted(report_pictures(r))
    ['layout-blocked', 'layout-shared']
"""

from __future__ import annotations

import html
import os
import re
from ..errors import LayoutError
from .layouts import KernelLayout
from .report import KernelReport

__all__ = ["report_pictures", "write_svgs", "report_html"]

#: at most this many pictures of one report
MAX_PICTURES = 40


def _uses(report: KernelReport) -> list[tuple[KernelLayout, tuple[int, ...], str]]:
    """Each layout with the first rank-2 shape it is used on, and its element type."""
    seen: dict[str, tuple[KernelLayout, tuple[int, ...], str]] = {}
    for o in report.ops:
        for v in o.values:
            kl = v.layout
            if kl is None or len(v.shape) != 2 or kl.memory == "tensor memory" or "descriptor" in v.memory:
                continue
            seen.setdefault(kl.name, (kl, tuple(int(s) for s in v.shape), v.element))
    return list(seen.values())


def _file_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name.lstrip("#"))[:60].strip("_") or "layout"


def report_pictures(report: KernelReport) -> dict[str, str]:
    """``{name: SVG text}``: ``layout-<alias>`` for every layout used on a rank-2 tile, ``banks-<n>-<op>`` for every
    shared-memory access with bank conflicts (its worst instruction). Layouts that cannot be drawn (a layout
    whose conversion is refused) are left out."""
    from ..viz import banks_scene, layout_scene, tv_scene

    if not isinstance(report, KernelReport):
        raise LayoutError(f"report_pictures: expected a KernelReport, got {type(report).__name__}")
    out: dict[str, str] = {}
    for kl, shape, elem in _uses(report):
        if len(out) >= MAX_PICTURES:
            break
        title = f"{kl.name} on {shape[0]} x {shape[1]} {elem}"
        try:
            if kl.memory == "registers":
                scene = tv_scene(kl.layout(shape), shape, title=title)
            else:
                scene = layout_scene(kl.layout(shape), title=f"{title} (element offsets)")
        except LayoutError:
            continue
        out[f"layout-{_file_name(kl.name if kl.alias else kl.attribute)}"] = scene.to_svg()
    for i, o in enumerate(report.ops):
        if len(out) >= MAX_PICTURES:
            break
        b = o.banks
        if b is None or b.conflict_free or not b.instructions:
            continue
        worst = max(range(len(b.instructions)), key=lambda k: b.instructions[k].wavefronts)
        where = o.location or f"ttgir line {o.op.line}"
        scene = banks_scene(b, instruction=worst,
                            title=f"{o.op.name} at {where}: {b.ways}-way bank conflicts (instruction {worst})")
        out[f"banks-{i}-{_file_name(o.op.name)}"] = scene.to_svg()
    return out


def write_svgs(report: KernelReport, directory: str) -> list[str]:
    """Write :func:`report_pictures` into ``directory`` (created) as ``<name>.svg``; the paths written."""
    if not isinstance(directory, str) or not directory:
        raise LayoutError(f"write_svgs: expected a directory path, got {directory!r}")
    os.makedirs(directory, exist_ok=True)
    paths = []
    for name, svg in report_pictures(report).items():
        path = os.path.join(directory, name + ".svg")
        with open(path, "w", encoding="utf-8") as f:
            f.write(svg)
        paths.append(path)
    return paths


def report_html(report: KernelReport, extra: str = "") -> str:
    """One self-contained HTML page: the text report, then every picture inline (``extra``: more text, e.g. the
    PTX checks, shown after the report)."""
    if not isinstance(report, KernelReport):
        raise LayoutError(f"report_html: expected a KernelReport, got {type(report).__name__}")
    pics = report_pictures(report)
    fn = ", ".join(report.functions) or "kernel"
    parts = ["<!DOCTYPE html>", "<html><head><meta charset='utf-8'>", f"<title>layoutalg inspect: {html.escape(fn)}</title>",
             "<style>body{font-family:sans-serif;margin:2em} pre{background:#f6f6f6;padding:1em;overflow-x:auto}"
             " figure{display:inline-block;margin:1em;vertical-align:top} figcaption{font-family:monospace}</style>",
             "</head><body>", f"<h1>{html.escape(fn)}</h1>", f"<pre>{html.escape(str(report))}</pre>"]
    if extra:
        parts.append(f"<pre>{html.escape(extra)}</pre>")
    layouts = {k: v for k, v in pics.items() if k.startswith("layout-")}
    banks = {k: v for k, v in pics.items() if k.startswith("banks-")}
    if layouts:
        parts.append("<h2>Layouts</h2>")
        parts += [f"<figure>{svg}<figcaption>{html.escape(k)}</figcaption></figure>" for k, svg in layouts.items()]
    if banks:
        parts.append("<h2>Bank conflicts</h2>")
        parts += [f"<figure>{svg}<figcaption>{html.escape(k)}</figcaption></figure>" for k, svg in banks.items()]
    parts.append("</body></html>")
    return "\n".join(parts)

