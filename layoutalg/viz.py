"""Pictures of layouts, tensor-core fragments, swizzled shared memory and bank conflicts.

Every picture is first built as a :class:`Scene` -- a list of labelled rectangles and texts
in pixel units -- and then written out by one of two back ends: :meth:`Scene.to_svg`
(plain Python, no dependency, used by ``_repr_svg_`` in notebooks) or
:meth:`Scene.to_figure` (a matplotlib ``Figure``, imported lazily; PNG output). One cell of a
grid is one element. The SVG is compact -- shared styles in one ``<style>``, one ``<path>`` per
fill colour holding the cells' rectangles, the labels as ``<tspan>`` s of one ``<text>`` per
label row; a grid that would pass :data:`SVG_MAX_BYTES` so, with more than :data:`LATTICE_CELLS`
cells of one size, is written in a lattice form (fills as a one-pixel-per-cell PNG scaled without smoothing, one path of grid lines, one
monospace text per label row) -- so that a picture of a 128 x 128 tile, its default 64 x 64 window
or the whole tile, stays under :data:`SVG_MAX_BYTES` (200 KB). :func:`svg_cells` reads the cells back from
the SVG, so a picture can be checked by reading it.

A 2x3 row-major layout, by hand: ``(2,3):(3,1)`` puts offset ``3r + c`` at row ``r``, column
``c``; the picture is the grid ``0 1 2 / 3 4 5``::

    >>> from layoutalg import Layout
    >>> svg = layout_svg(Layout((2, 3), (3, 1)))
    >>> [c[5] for c in sorted(svg_cells(svg), key=lambda c: (c[1], c[0]))]
    [['0'], ['1'], ['2'], ['3'], ['4'], ['5']]

What each picture shows:

- :func:`layout_scene`: a rank-2 layout as rows (mode 0) x columns (mode 1) of offsets,
  shaded by ``offset % 8`` like CuTe's ``print_latex``; other ranks are shown as one row
  (rank 1) or as mode 0 x (the remaining modes, flattened).
- :func:`fragment_scene`: an operand matrix in the PTX orientation (A is MxK, B is KxN,
  C/D is MxN) with each element labelled by the thread that holds it (``T5``) and its
  register element (``a3``), coloured by thread -- the style of the PTX ISA's fragment
  figures. :func:`ptx_figure` rebuilds the PTX ISA's Figures 46-55 (``mma.m8n8k4``), 140-145
  (sparse ``m16n8k128``) and 156-170 (wgmma shared-memory layouts) from the catalog.
- :func:`swizzle_scene`: shared memory as 128-byte lines of eight 16-byte chunks (banks
  ``4j .. 4j+3`` for chunk ``j``); each chunk is labelled and coloured by its *logical*
  16-byte chunk index within the 128-byte row before swizzling, as the PTX swizzle figures do.
- :func:`banks_scene`: a :class:`~layoutalg.banks.BankReport` as banks (columns) x
  wavefronts (rows), each cell naming the lanes served.

Large objects are cut to ``max_rows`` x ``max_cols`` cells (64 x 64 by default) and the title
says which part is shown.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any
from collections.abc import Sequence

import numpy as np

from .banks import BankReport, phases
from .composed import ComposedLayout
from .errors import LayoutError
from .hooks import register_svg
from .layout import MAX_TABLE, Layout, check_table_size
from .parse import as_concrete_layout
from .swizzle import Swizzle


def escape(text: str) -> str:
    """Text safe inside SVG markup (``&``, ``<``, ``>``)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")

__all__ = [
    "Scene",
    "THREAD_COLORS",
    "WARP_BAND_COLORS",
    "thread_color",
    "warp_bands",
    "owners",
    "tv_scene",
    "CHUNK_COLORS",
    "layout_scene",
    "fragment_scene",
    "swizzle_scene",
    "banks_scene",
    "layout_svg",
    "fragment_svg",
    "swizzle_svg",
    "banks_svg",
    "ptx_figure",
    "PTX_FIGURES",
    "scene_of",
    "register_scene",
    "save",
    "render_png",
    "svg_cells",
    "SVG_MAX_BYTES",
]


# ---------------------------------------------------------------------------------------------
# Colours
# ---------------------------------------------------------------------------------------------
def _lighten(hex_colour: str, amount: float) -> str:
    r, g, b = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    r, g, b = (round(x + (255 - x) * amount) for x in (r, g, b))
    return f"#{r:02x}{g:02x}{b:02x}"


_TAB10 = [
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
]
#: 32 lane colours, one per lane of a warp, chosen to be told apart: greedy farthest-point picks in
#: CIELAB (CIEDE2000) among the sRGB colours of lightness L* 58-92 (dark text stays readable);
#: every pair differs by CIEDE2000 >= 13.5 (tests/test_viz_palette.py measures it), and lanes
#: that sit together (0-3 of a quad, 0-7 of a group) get the most distant colours.
THREAD_COLORS: tuple[str, ...] = (
    "#87b4e1", "#e1f000", "#ff4b00", "#ff0fd2", "#00a569", "#ffd2d2", "#b48700", "#5afff0",
    "#968796", "#c3c3a5", "#2dff78", "#e1b4ff", "#f07887", "#87a50f", "#ffb478", "#699696",
    "#9678f0", "#ffc300", "#b48769", "#00d2f0", "#c3c3d2", "#c3e1e1", "#87d2a5", "#00c30f",
    "#c378a5", "#879669", "#d2f0a5", "#e17800", "#ffe1a5", "#1e96c3", "#00c3b4", "#c3b45a",
)
#: the colours of the warp bands (one per warp of a CTA, dark enough to read against the lane colours)
WARP_BAND_COLORS: tuple[str, ...] = ("#1f3a93", "#b03a2e", "#1e8449", "#7d3c98", "#b7950b", "#117a65",
                                     "#a04000", "#2e4053")


def thread_color(t: int) -> str:
    """Colour of thread ``t``: its lane's (``t % 32``); the warp (``t // 32``) is told by the warp bands
    that every picture of more than one warp draws (:func:`warp_bands`)."""
    return THREAD_COLORS[t % 32]


def warp_bands(scene: "Scene", warps: np.ndarray, x0: float, y0: float, cw: float, ch: float) -> bool:
    """Mark the warps of a grid of cells: ``warps[r, c]`` is the warp of the thread that owns cell
    (r, c) (-1 for none). Draws a thick line wherever two neighbouring cells belong to different warps
    and, right of the grid, a band in the warp's colour beside every run of rows one warp owns
    (labelled ``W<k>``). Draws nothing (returns False) where the grid holds one warp only.

    >>> s = Scene()
    >>> warp_bands(s, np.array([[0, 0], [1, 1]]), 0, 0, 10, 10), len(s.lines), len(s.rects)
    (True, 1, 2)
    """
    ws = set(int(w) for w in np.unique(warps) if w >= 0)
    if len(ws) <= 1:
        return False
    R, C = warps.shape
    dark = "#111111"
    for r in range(1, R):  # horizontal boundaries, merged into runs
        c = 0
        while c < C:
            if warps[r, c] != warps[r - 1, c]:
                c1 = c
                while c1 < C and warps[r, c1] != warps[r - 1, c1]:
                    c1 += 1
                scene.line(x0 + c * cw, y0 + r * ch, x0 + c1 * cw, y0 + r * ch, 2.4, dark)
                c = c1
            else:
                c += 1
    for c in range(1, C):  # vertical boundaries
        r = 0
        while r < R:
            if warps[r, c] != warps[r, c - 1]:
                r1 = r
                while r1 < R and warps[r1, c] != warps[r1, c - 1]:
                    r1 += 1
                scene.line(x0 + c * cw, y0 + r * ch, x0 + c * cw, y0 + r1 * ch, 2.4, dark)
                r = r1
            else:
                r += 1
    bx = x0 + C * cw + 3
    r = 0
    while r < R:
        row = [int(w) for w in warps[r] if w >= 0]
        w = row[0] if row and all(x == row[0] for x in row) else None
        r1 = r + 1
        while r1 < R and w is not None and all(int(x) == w for x in warps[r1] if x >= 0) and (warps[r1] >= 0).any():
            r1 += 1
        if w is not None:
            colour = WARP_BAND_COLORS[w % len(WARP_BAND_COLORS)]
            scene.rect(bx, y0 + r * ch, 6, (r1 - r) * ch, colour, colour)
            scene.text(bx + 9, y0 + (r + r1) * ch / 2, f"W{w}", 9, "start", "bold")
        r = r1
    scene.width = max(scene.width, bx + 32)
    return True


#: 8 colours for the 16-byte chunks of a 128-byte line.
CHUNK_COLORS: tuple[str, ...] = tuple(_lighten(c, 0.35) for c in _TAB10[:8])
#: CuTe's print_latex shading by ``offset % 8``.
_GREYS = tuple(_lighten("#000000", 1 - 0.04 * k) for k in range(1, 9))


# ---------------------------------------------------------------------------------------------
# Scene: rectangles and texts in pixels, two back ends
# ---------------------------------------------------------------------------------------------
@dataclass
class Scene:
    """A picture as primitives in pixels (origin top left): rectangles, texts, lines.

    ``cells`` are the grid cells (each a rectangle plus label lines), kept apart from the
    decoration so that back ends can group them (SVG ``<g class="cell" id=...>``).
    """

    width: float = 0.0
    height: float = 0.0
    title: str = ""
    cells: list = field(default_factory=list)  # (id, x, y, w, h, fill, (lines...), font)
    texts: list = field(default_factory=list)  # (x, y, text, size, anchor, weight)
    lines: list = field(default_factory=list)  # (x0, y0, x1, y1, width, colour)
    rects: list = field(default_factory=list)  # (x, y, w, h, fill, stroke)

    def cell(
        self,
        cid: str,
        x: float,
        y: float,
        w: float,
        h: float,
        fill: str,
        labels: Sequence[str],
        font: float = 10.0,
    ) -> None:
        self.cells.append((cid, x, y, w, h, fill, tuple(labels), font))

    def text(
        self, x: float, y: float, s: str, size: float = 10.0, anchor: str = "middle", weight: str = "normal"
    ) -> None:
        self.texts.append((x, y, s, size, anchor, weight))

    def line(
        self, x0: float, y0: float, x1: float, y1: float, width: float = 1.0, colour: str = "#000000"
    ) -> None:
        self.lines.append((x0, y0, x1, y1, width, colour))

    def rect(
        self, x: float, y: float, w: float, h: float, fill: str = "none", stroke: str = "#000000"
    ) -> None:
        self.rects.append((x, y, w, h, fill, stroke))

    # -- SVG -----------------------------------------------------------------------------------
    def to_svg(self) -> str:
        """The scene as a standalone SVG document, written compactly: one ``<style>`` holds every
        shared attribute (cell stroke, label font, one class per fill colour); the cell rectangles
        of one colour are one ``<path>`` (a closed subpath per cell, in cell order); the labels are
        ``<tspan>`` s of one ``<text>`` per label row inside ``<g class="cells">``. A cell's label
        lines sit at its centre, so :func:`svg_cells` reads the cells back from the SVG alone. Where
        that would pass :data:`SVG_MAX_BYTES` and the cells form one lattice, the lattice form
        (:func:`_lattice_svg`) is written instead."""
        svg = self._svg(None)
        if len(svg) > SVG_MAX_BYTES and len(self.cells) > LATTICE_CELLS:
            lattice = _lattice(self.cells)
            if lattice is not None:
                return self._svg(lattice)
        return svg

    def _svg(self, lattice: tuple | None) -> str:
        W, H = _r(self.width), _r(self.height)
        cells = [] if lattice is not None else self.cells
        fills: dict[str, str] = {}
        for c in cells:
            fills.setdefault(c[5], f"f{len(fills)}")
        styles: dict[tuple, str] = {}
        for _x, _y, _s, size, anchor, weight in self.texts:
            styles.setdefault((size, anchor, weight), f"t{len(styles)}")
        fonts: dict[float, str] = {}
        for c in cells:
            fonts.setdefault(c[7], f"l{len(fonts)}")
        css = [".k{stroke:#555555;stroke-width:0.6}", "text{dominant-baseline:central}",
               ".cells text{text-anchor:middle}"]
        css += [f".{k}{{fill:{f}}}" for f, k in fills.items()]
        css += [f".{k}{{font-size:{_r(f)}px}}" for f, k in fonts.items()]
        css += [f".{k}{{font-size:{_r(size)}px;text-anchor:{anchor}" + (f";font-weight:{weight}" if weight != "normal" else "") + "}"
                for (size, anchor, weight), k in styles.items()]
        out = [
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" '
            f'font-family="DejaVu Sans, Arial, Helvetica, sans-serif">',
            f"<title>{escape(self.title)}</title>",
            "<style>" + "".join(css) + "</style>",
            f'<rect width="{W}" height="{H}" fill="#ffffff"/>',
        ]
        for x, y, w, h, fill, stroke in self.rects:
            out.append(f'<rect x="{_r(x)}" y="{_r(y)}" width="{_r(w)}" height="{_r(h)}" fill="{fill}" stroke="{stroke}"/>')
        if lattice is not None:
            css.append(".m{font-family:DejaVu Sans Mono,Menlo,Consolas,monospace;white-space:pre}")
            out[2] = "<style>" + "".join(css) + "</style>"
            out.append(_lattice_svg(*lattice))
        paths: dict[str, list] = {}
        for _cid, x, y, w, h, fill, _labels, _font in cells:
            ds = paths.setdefault(fill, [None])
            prev = ds[0]  # a closed subpath leaves the pen at its start: move relative to it
            x, y = float(_r(x)), float(_r(y))
            move = f"M{_r(x)} {_r(y)}" if prev is None else f"m{_r(x - prev[0])} {_r(y - prev[1])}"
            ds[0] = (x, y)
            ds.append(f"{move}h{_r(w)}v{_r(h)}h{_r(-w)}z")
        for fill, ds in paths.items():
            out.append(f'<path class="k {fills[fill]}" d="{"".join(ds[1:])}"/>')
        rows: dict[tuple, list[str]] = {}
        for _cid, x, y, w, h, _fill, labels, font in cells:
            for ty, lab in _label_positions(y, h, labels, font):
                rows.setdefault((font, _r(ty)), []).append(f'<tspan x="{_r(x + w / 2)}">{escape(lab)}</tspan>')
        out.append('<g class="cells">')
        for (font, ty), spans in rows.items():
            out.append(f'<text class="{fonts[font]}" y="{ty}">{"".join(spans)}</text>')
        out.append("</g>")
        for x0, y0, x1, y1, lw, colour in self.lines:
            out.append(f'<line x1="{_r(x0)}" y1="{_r(y0)}" x2="{_r(x1)}" y2="{_r(y1)}" stroke="{colour}" stroke-width="{lw}"/>')
        for x, y, s, size, anchor, weight in self.texts:
            out.append(f'<text class="{styles[(size, anchor, weight)]}" x="{_r(x)}" y="{_r(y)}">{escape(s)}</text>')
        out.append("</svg>")
        return "\n".join(out)

    def _repr_svg_(self) -> str:
        return self.to_svg()

    # -- matplotlib ------------------------------------------------------------------------------
    def to_figure(self) -> Any:
        """The scene as a matplotlib ``Figure`` (100 scene pixels per inch; no pyplot state is touched)."""
        try:
            from matplotlib.figure import Figure
            from matplotlib.patches import Rectangle
        except ImportError as e:  # pragma: no cover - matplotlib is an optional dependency
            raise LayoutError(
                "viz: PNG output and matplotlib figures need matplotlib (pip install 'layoutalg[viz]'); "
                "SVG output (to_svg, save('x.svg')) works without it"
            ) from e
        fig = Figure(figsize=(self.width / 100.0, self.height / 100.0), dpi=100)
        ax = fig.add_axes((0, 0, 1, 1))
        ax.set_xlim(0, self.width)
        ax.set_ylim(self.height, 0)
        ax.axis("off")
        pt = 0.72  # points per scene pixel at 100 px per inch
        for x, y, w, h, fill, stroke in self.rects:
            ax.add_patch(Rectangle((x, y), w, h, facecolor=fill, edgecolor=stroke, linewidth=0.8))
        if self.cells:  # one collection of all cell rectangles (a patch each is slow for big grids)
            from matplotlib.collections import PolyCollection

            ax.add_collection(PolyCollection(
                [((x, y), (x + w, y), (x + w, y + h), (x, y + h)) for _c, x, y, w, h, *_ in self.cells],
                facecolors=[c[5] for c in self.cells], edgecolors="#555555", linewidths=0.45))
        for _cid, x, y, w, h, _fill, labels, font in self.cells:
            for ty, s in _label_positions(y, h, labels, font):
                ax.text(x + w / 2, ty, s, ha="center", va="center", fontsize=font * pt)
        for x0, y0, x1, y1, lw, colour in self.lines:
            ax.plot([x0, x1], [y0, y1], color=colour, linewidth=lw * pt)
        for x, y, s, size, anchor, weight in self.texts:
            ax.text(
                x,
                y,
                s,
                ha={"middle": "center", "start": "left", "end": "right"}[anchor],
                va="center",
                fontsize=size * pt,
                fontweight=weight,
            )
        return fig


def _r(v: float) -> str:
    return f"{v:.1f}".rstrip("0").rstrip(".")


#: The SVG weight a picture of a 128 x 128 tile stays under (tests/test_viz_palette.py): its default
#: 64 x 64 window is about 190 KB, the whole tile (``max_rows=128, max_cols=128``, written in the
#: lattice form) about 160 KB. (A PNG of the whole tile through matplotlib is 2.3 MB and takes tens
#: of seconds, measured: SVG stays the format.)
SVG_MAX_BYTES = 200_000


#: A picture whose SVG would pass :data:`SVG_MAX_BYTES`, with more cells than this, all of one size on
#: one lattice, is written in the lattice form (:func:`_lattice_svg`): about 8 bytes a cell, not 45.
LATTICE_CELLS = 1024


def _lattice(cells: list) -> tuple | None:
    """(x0, y0, w, h, rows, cols, font, nlabels, {(row, col): cell}) when every cell has one size, one
    font and one number of label lines, and sits on one lattice; else None."""
    _cid, x0, y0, w, h, _f, labels0, font = cells[0]
    n = len(labels0)
    if w <= 0 or h <= 0 or n == 0:
        return None
    xs, ys = min(c[1] for c in cells), min(c[2] for c in cells)
    grid = {}
    for _c, x, y, cw, ch, _fill, labels, f in cells:
        i, j = round((y - ys) / h), round((x - xs) / w)
        if cw != w or ch != h or f != font or len(labels) != n or abs(ys + i * h - y) > 0.05 or abs(xs + j * w - x) > 0.05 \
                or (i, j) in grid or any("\n" in t for t in labels):
            return None
        grid[(i, j)] = _c
    rows = 1 + max(i for i, _ in grid)
    cols = 1 + max(j for _, j in grid)
    by_pos = {}
    for c in cells:
        by_pos[(round((c[2] - ys) / h), round((c[1] - xs) / w))] = c
    return xs, ys, w, h, rows, cols, font, n, by_pos


def _png(rows: list[bytes], width: int) -> bytes:
    """A PNG of 8-bit RGBA rows (no filter), written with zlib."""
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    raw = b"".join(b"\x00" + r for r in rows)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, len(rows), 8, 6, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def _lattice_svg(x0: float, y0: float, w: float, h: float, R: int, C: int, font: float, n: int, by_pos: dict) -> str:
    """A grid of cells in the lattice form: the fills as one PNG of one pixel per cell, scaled up
    without smoothing (``image-rendering: pixelated``); the cell borders as one path of grid lines;
    each label line of a row as one monospace ``<text>`` of fixed-width fields stretched over the
    row (``textLength``), a field of ``m`` characters per cell with the label centred in it."""
    import base64

    pix = []
    for i in range(R):
        row = bytearray()
        for j in range(C):
            c = by_pos.get((i, j))
            if c is None:
                row += b"\x00\x00\x00\x00"
            else:
                f = c[5].lstrip("#")
                row += bytes(int(f[k:k + 2], 16) for k in (0, 2, 4)) + b"\xff"
        pix.append(bytes(row))
    href = "data:image/png;base64," + base64.b64encode(_png(pix, C)).decode()
    maxlen = max(len(t) for c in by_pos.values() for t in c[6])
    m = max(maxlen + 1, round(w / (0.6 * font)))
    size = w / m / 0.6  # a monospace glyph advances 0.6 em: the fields fill the cells without stretching much
    d = "".join(f"M{_r(x0)} {_r(y0 + i * h)}h{_r(C * w)}" for i in range(R + 1))
    d += "".join(f"M{_r(x0 + j * w)} {_r(y0)}v{_r(R * h)}" for j in range(C + 1))
    out = [f'<g class="lattice" data-x="{_r(x0)}" data-y="{_r(y0)}" data-w="{_r(w)}" data-h="{_r(h)}" '
           f'data-rows="{R}" data-cols="{C}" data-field="{m}">',
           f'<image x="{_r(x0)}" y="{_r(y0)}" width="{_r(C * w)}" height="{_r(R * h)}" preserveAspectRatio="none" '
           f'image-rendering="optimizeSpeed" style="image-rendering:pixelated" href="{href}"/>',
           f'<path d="{d}" stroke="#555555" stroke-width="0.6" fill="none"/>']
    for i in range(R):
        labels = [by_pos[(i, j)][6] if (i, j) in by_pos else None for j in range(C)]
        for k, (ty, _s) in enumerate(_label_positions(y0 + i * h, h, ["x"] * n, font)):
            text = "".join(" " * m if lab is None else lab[k].center(m) for lab in labels)
            out.append(f'<text class="m" x="{_r(x0)}" y="{_r(ty)}" font-size="{_r(size)}" textLength="{_r(C * w)}" '
                       f'lengthAdjust="spacing" xml:space="preserve">{escape(text)}</text>')
    out.append("</g>")
    return "\n".join(out)


def _read_png_rgba(data: bytes) -> tuple[int, int, bytes]:
    """(width, height, raw rows) of a PNG written by :func:`_png`."""
    import struct
    import zlib

    pos, idat, width, height = 8, b"", 0, 0
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height = struct.unpack(">II", body[:8])
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    return width, height, zlib.decompress(idat)


def svg_cells(svg: str) -> list[tuple[float, float, float, float, str, list[str]]]:
    """The cells of an SVG written by :meth:`Scene.to_svg`, read back from the SVG alone:
    ``(x, y, w, h, fill, label lines)`` in cell order (within each colour), labels found at the
    cell's centre column and inside its rows.

    >>> from layoutalg import Layout
    >>> [(c[0], c[5]) for c in svg_cells(layout_svg(Layout((1, 2), (1, 5))))]
    [(17.0, ['0']), (43.0, ['5'])]
    """
    import re
    import xml.etree.ElementTree as ET

    ns = "{http://www.w3.org/2000/svg}"
    root = ET.fromstring(svg)
    css = "".join(t.text or "" for t in root.iter(ns + "style"))
    colour = dict(re.findall(r"\.(f\d+)\{fill:([^}]+)\}", css))
    rects: list[tuple[float, float, float, float, str, list[str]]] = []
    for p in root.iter(ns + "path"):
        cls = (p.get("class") or "").split()
        if "k" not in cls:
            continue
        fill = next((colour[c] for c in cls if c in colour), "")
        px = py = 0.0
        for m, x, y, w, h in re.findall(r"([Mm])(-?[\d.]+) (-?[\d.]+)h(-?[\d.]+)v(-?[\d.]+)h-?[\d.]+z", p.get("d", "")):
            px, py = (float(x), float(y)) if m == "M" else (float(_r(px + float(x))), float(_r(py + float(y))))
            rects.append((px, py, float(w), float(h), fill, []))
    for g in root.iter(ns + "g"):
        if g.get("class") != "lattice":
            continue
        import base64

        x0, y0, w, h = (float(g.get(k) or 0) for k in ("data-x", "data-y", "data-w", "data-h"))
        R, C, m = (int(g.get(k) or 0) for k in ("data-rows", "data-cols", "data-field"))
        img = next(g.iter(ns + "image"))
        width, _height, raw = _read_png_rgba(base64.b64decode((img.get("href") or "").split(",", 1)[1]))
        texts = [t.text or "" for t in g.iter(ns + "text")]
        n = len(texts) // R if R else 0
        for i in range(R):
            row = raw[i * (4 * width + 1) + 1:(i + 1) * (4 * width + 1)]
            for j in range(C):
                r_, g_, b_, a_ = row[4 * j:4 * j + 4]
                if a_ == 0:
                    continue
                labels = [texts[i * n + k][j * m:(j + 1) * m].strip() for k in range(n)]
                rects.append((float(_r(x0 + j * w)), float(_r(y0 + i * h)), w, h, f"#{r_:02x}{g_:02x}{b_:02x}", labels))
    by_centre: dict = {}  # rectangles by their centre x, to the pixel (the SVG rounds to 0.1)
    for r in rects:
        by_centre.setdefault(round(r[0] + r[2] / 2), []).append(r)
    for g in root.iter(ns + "g"):
        if g.get("class") != "cells":
            continue
        for t in g.iter(ns + "text"):
            ty = float(t.get("y") or 0)
            for sp in t.iter(ns + "tspan"):
                sx = float(sp.get("x") or 0)
                near = [r for k in (-1, 0, 1) for r in by_centre.get(round(sx) + k, [])]
                for r in near:
                    if abs(r[0] + r[2] / 2 - sx) <= 0.2 and r[1] <= ty <= r[1] + r[3]:
                        r[5].append(sp.text or "")
                        break
    return rects


def _label_positions(y: float, h: float, labels: Sequence[str], font: float) -> list:
    n = len(labels)
    step = font * 1.15
    top = y + h / 2 - step * (n - 1) / 2
    return [(top + k * step, s) for k, s in enumerate(labels)]


def _text_width(s: str, size: float) -> float:
    return 0.62 * size * len(s)


# ---------------------------------------------------------------------------------------------
# Grid helper
# ---------------------------------------------------------------------------------------------
_TITLE = 15.0
_NOTE = 11.0


def _window(n: int, span: tuple | None, cap: int, what: str) -> tuple[int, int]:
    if span is None:
        return 0, min(n, cap)
    lo, hi = span
    if not (isinstance(lo, (int, np.integer)) and isinstance(hi, (int, np.integer)) and 0 <= lo < hi <= n):
        raise LayoutError(f"viz: {what}={span!r} is not a range (lo, hi) with 0 <= lo < hi <= {n}")
    return int(lo), int(hi)


def _header(scene: Scene, title: str, notes: Sequence[str], width_needed: float) -> float:
    """Write title and notes at the top; return the y where the content starts."""
    scene.title = title
    y = 8.0
    scene.text(8, y + _TITLE / 2, title, _TITLE, "start", "bold")
    y += _TITLE + 6
    for note in notes:
        scene.text(8, y + _NOTE / 2, note, _NOTE, "start")
        y += _NOTE + 4
    widest = max([_text_width(title, _TITLE)] + [_text_width(n, _NOTE) for n in notes]) + 16
    scene.width = max(scene.width, widest, width_needed)
    return y + 4


# ---------------------------------------------------------------------------------------------
# Layouts
# ---------------------------------------------------------------------------------------------
#: The most elements a shared-memory picture enumerates (it visits every element in Python; shared
#: memory holds at most 228 KiB, i.e. 233472 one-byte elements).
MAX_SMEM_PICTURE = 1 << 20


def _as_layoutish(x: Any, op: str, limit: int = MAX_TABLE) -> Any:
    """A concrete Layout or ComposedLayout of at most ``limit`` entries (a LayoutError names both)."""
    L = as_concrete_layout(x, op)
    n = check_table_size(L, op)
    if n > limit:
        raise LayoutError(f"{op}: {L} has {n} entries, more than the limit of {limit} this picture draws")
    return L


def _layout_dims(L: Any) -> tuple[int, int, str]:
    """(rows, columns, note) of the picture of L: rank 2 -> mode 0 x mode 1; rank 1 -> one row;
    rank > 2 -> mode 0 x the other modes flattened."""
    r = len(L)
    if r == 2:
        return int(L[0].size()), int(L[1].size()), ""
    n = int(L.size())
    if r <= 1:
        return 1, n, "rank-1 layout drawn as one row"
    s0 = int(L[0].size())
    return s0, n // s0, f"rank-{r} layout drawn as mode 0 (rows) x modes 1..{r - 1} flattened (columns)"


def _layout_window(L: Any, r0: int, r1: int, c0: int, c1: int) -> np.ndarray:
    """The offsets of rows r0..r1-1 and columns c0..c1-1 of L's picture (only those are computed)."""
    rr = np.arange(r0, r1, dtype=np.int64)[:, None]
    cc = np.arange(c0, c1, dtype=np.int64)[None, :]
    r = len(L)
    if r == 2:
        return np.asarray(L(rr + 0 * cc, cc + 0 * rr), dtype=np.int64)
    if r <= 1:
        return np.asarray(L(cc + 0 * rr), dtype=np.int64)
    return np.asarray(L(rr + int(L[0].size()) * cc), dtype=np.int64)


def layout_scene(layout: Any, *, max_rows: int = 64, max_cols: int = 64, title: str | None = None) -> Scene:
    """layout_scene(L): cell (r, c) shows L(r, c), shaded by L(r, c) % 8; rows are mode 0.

    Accepts a Layout, a ComposedLayout or CuTe text; symbolic layouts raise LayoutError.

    >>> s = layout_scene("(4,8):(1,4)")
    >>> len(s.cells), s.cells[9][6]        # cell (row 1, col 1) holds 1 + 4
    (32, ('5',))
    """
    L = _as_layoutish(layout, "layout_scene")
    R, C, note = _layout_dims(L)
    r0, r1 = _window(R, None, max_rows, "rows")
    c0, c1 = _window(C, None, max_cols, "cols")
    M = _layout_window(L, r0, r1, c0, c1)  # only the cells drawn are computed
    notes = [note] if note else []
    notes += _cut_note(R, C, r0, r1, c0, c1)
    maxlen = max(len(str(int(v))) for v in M.ravel())
    cw, ch, font = max(26.0, 7.0 * maxlen + 10), 22.0, 10.0
    scene = Scene()
    lw = 10 + 7 * len(str(R))
    y0 = _header(scene, title or f"{L}", notes, lw + cw * (c1 - c0) + 10)
    y0 += 16  # column numbers
    for c in range(c0, c1):
        scene.text(lw + (c - c0 + 0.5) * cw, y0 - 8, str(c), 9, "middle")
    for r in range(r0, r1):
        y = y0 + (r - r0) * ch
        scene.text(lw - 5, y + ch / 2, str(r), 9, "end")
        for c in range(c0, c1):
            v = int(M[r - r0, c - c0])
            scene.cell(f"cell-{r}-{c}", lw + (c - c0) * cw, y, cw, ch, _GREYS[v % 8], (str(v),), font)
    scene.height = y0 + (r1 - r0) * ch + 10
    return scene


def layout_svg(layout: Any, **kwargs: Any) -> str:
    """layout_svg(L) = layout_scene(L).to_svg(): the SVG text of the offset grid."""
    return layout_scene(layout, **kwargs).to_svg()


# ---------------------------------------------------------------------------------------------
# Fragments
# ---------------------------------------------------------------------------------------------
_PREFIX = {"A": "a", "B": "b", "C": "c", "D": "c", "SFA": "sa", "SFB": "sb"}


def _fragment_owners(F: Any) -> tuple[int, int, int, dict]:
    """(batches, rows, cols, {(b, r, c): [(lane, i), ...]}) in the PTX orientation."""
    T, V = F.num_threads, F.num_values
    lanes, vals = np.meshgrid(np.arange(T), np.arange(V), indexing="ij")
    idx = np.asarray(F.layout.table(), dtype=np.int64)[lanes + T * vals]
    d0, d1 = F.codomain
    x, y, b = idx % d0, (idx // d0) % d1, idx // (d0 * d1)
    transposed = F.operand in ("B", "SFB")
    rows, cols = (d1, d0) if transposed else (d0, d1)
    r, c = (y, x) if transposed else (x, y)
    owners: dict = {}
    for ln, v, bb, rr, cc in zip(lanes.ravel(), vals.ravel(), b.ravel(), r.ravel(), c.ravel()):
        owners.setdefault((int(bb), int(rr), int(cc)), []).append((int(ln), int(v)))
    return int(F.batch), rows, cols, owners


def _value_label(F: Any, i: int) -> str:
    p = _PREFIX.get(F.operand)
    if p is not None:
        return f"{p}{i}"
    reg, pos = divmod(i, F.values_per_register)  # ldmatrix and others: register.element
    return f"r{reg}.{pos}" if F.values_per_register > 1 else f"r{reg}"


def _lanes_label(owners: list) -> str:
    lanes = sorted({ln for ln, _ in owners})
    if len(lanes) == 1:
        return f"T{lanes[0]}"
    if len(lanes) == 2:
        return f"T{lanes[0]},{lanes[1]}"
    return f"T{lanes[0]}+{len(lanes) - 1}"


def fragment_scene(
    fragment: Any,
    *,
    batch: Any = 0,
    rows: tuple | None = None,
    cols: tuple | None = None,
    max_rows: int = 64,
    max_cols: int = 64,
    title: str | None = None,
) -> Scene:
    """fragment_scene(F): the operand matrix, cell (r, c) labelled ``T{lane}`` / ``{a|b|c}{i}`` of its owner.

    Rows and columns are the PTX's (A: MxK, B: KxN, C/D: MxN; a sparse A is its compressed
    ``M x K/2`` matrix, with the dense column span of each group of values written above it).
    Cells are coloured by lane (``lane % 32`` for warpgroups). ``batch`` picks the stacked
    matrix (``mma.m8n8k4`` computation, ``ldmatrix`` matrix): an int, a sequence, or ``"all"``
    (panels side by side). ``rows`` / ``cols`` = ``(lo, hi)`` cut a window; by default at most
    ``max_rows`` x ``max_cols`` cells are drawn and the title says so. Elements held by
    several lanes (broadcast) name the first two or count the rest.

    >>> from layoutalg.nvidia import mma
    >>> s = fragment_scene(mma.fragment("m8n8k4", "f64", "C"))
    >>> len(s.cells), s.cells[3][6]          # row 0, col 3: lane 1 holds c1
    (64, ('T1', 'c1'))
    """
    F = fragment
    if not all(hasattr(F, a) for a in ("layout", "codomain", "operand", "num_threads")):
        raise LayoutError(f"fragment_scene: {F!r} is not a Fragment")
    nb, R, C, owners = _fragment_owners(F)
    if batch == "all":
        batches = list(range(nb))
    elif isinstance(batch, (int, np.integer)):
        batches = [int(batch)]
    else:
        batches = [int(b) for b in batch]
    for b in batches:
        if not 0 <= b < nb:
            raise LayoutError(f"fragment_scene: batch {b} outside [0, {nb}) for {F.name}")
    r0, r1 = _window(R, rows, max_rows, "rows")
    c0, c1 = _window(C, cols, max_cols, "cols")
    notes = []
    what = {"A": "A (M x K)", "B": "B (K x N)", "C": "C/D (M x N)", "D": "C/D (M x N)"}.get(
        F.operand, F.operand
    )
    if F.sparse:
        what = "sparse A, compressed (M x K/2)"
    fig = f" -- {F.figure}" if getattr(F, "figure", "") else ""
    notes.append(
        f"operand {what}: cell = thread T<lane> and its element; {F.num_threads} threads x "
        f"{F.num_values} values; colour = lane{' % 32' if F.num_threads > 32 else ''}{fig}"
    )
    if F.num_threads > 32:
        notes.append("thick lines and the bands on the right (W0, W1, ...) mark the warps")
    notes += _cut_note(R, C, r0, r1, c0, c1)
    cw, ch, font = 40.0, 30.0, 10.0
    lw = 30.0
    group_h = 16.0 if F.sparse else 0.0
    subtitles = [_panel_title(F, b) for b in batches] if nb > 1 else [""]
    panel_w = max(lw + cw * (c1 - c0) + 16, max(lw + _text_width(t, 11) + 16 for t in subtitles))
    scene = Scene()
    ttl = title or f"{F.instruction}  operand {F.operand}"
    y0 = _header(scene, ttl, notes, panel_w * len(batches))
    panel_title_h = 18.0 if nb > 1 else 0.0
    y_cells = y0 + panel_title_h + group_h + 16
    for k, b in enumerate(batches):
        x0 = k * panel_w
        if nb > 1:
            scene.text(x0 + lw, y0 + panel_title_h / 2, subtitles[k], 11, "start", "bold")
        if F.sparse:
            g = F.values_per_register
            for gc in range(c0 - c0 % g, c1, g):
                a, z = max(gc, c0), min(gc + g, c1)
                xa, xz = x0 + lw + (a - c0) * cw, x0 + lw + (z - c0) * cw
                ya = y0 + panel_title_h + group_h / 2
                scene.line(xa + 2, ya + 6, xz - 2, ya + 6, 1.0, "#333333")
                scene.text((xa + xz) / 2, ya - 1, f"A cols {2 * gc}-{2 * gc + 2 * g - 1}", 9, "middle")
        for c in range(c0, c1):
            scene.text(x0 + lw + (c - c0 + 0.5) * cw, y_cells - 8, str(c), 9, "middle")
        for r in range(r0, r1):
            y = y_cells + (r - r0) * ch
            scene.text(x0 + lw - 5, y + ch / 2, str(r), 9, "end")
            for c in range(c0, c1):
                own = owners.get((b, r, c))
                cid = f"cell-{b}-{r}-{c}" if nb > 1 else f"cell-{r}-{c}"
                if not own:
                    scene.cell(cid, x0 + lw + (c - c0) * cw, y, cw, ch, "#ffffff", ("-",), font)
                    continue
                lane, i = own[0]
                colour = THREAD_COLORS[lane % 32]
                scene.cell(
                    cid,
                    x0 + lw + (c - c0) * cw,
                    y,
                    cw,
                    ch,
                    colour,
                    (_lanes_label(own), _value_label(F, i)),
                    font,
                )
        if F.num_threads > 32:
            warps = np.full((r1 - r0, c1 - c0), -1, dtype=np.int64)
            for (bb, rr, cc), own in owners.items():
                if bb == b and r0 <= rr < r1 and c0 <= cc < c1:
                    warps[rr - r0, cc - c0] = own[0][0] // 32
            warp_bands(scene, warps, x0 + lw, y_cells, cw, ch)
    scene.height = y_cells + (r1 - r0) * ch + 10
    return scene


def _panel_title(F: Any, b: int) -> str:
    name = F.batch_name or "matrix"
    if name == "computation":
        lo = 4 * b
        return f"MMA computation {b + 1} (lanes {lo}-{lo + 3}, {lo + 16}-{lo + 19})"
    return f"{name} {b}"


def _cut_note(R: int, C: int, r0: int, r1: int, c0: int, c1: int) -> list:
    parts = []
    if (r0, r1) != (0, R):
        parts.append(f"rows {r0}-{r1 - 1} of {R}")
    if (c0, c1) != (0, C):
        parts.append(f"columns {c0}-{c1 - 1} of {C}")
    return ["showing " + ", ".join(parts)] if parts else []


def fragment_svg(fragment: Any, **kwargs: Any) -> str:
    """fragment_svg(F) = fragment_scene(F).to_svg()."""
    return fragment_scene(fragment, **kwargs).to_svg()


# ---------------------------------------------------------------------------------------------
# Swizzled shared memory
# ---------------------------------------------------------------------------------------------
def _smem_bytes(layout: Any, element_bytes: int, swizzle_unit: str) -> tuple[np.ndarray, np.ndarray]:
    """(address after the swizzle, address before it), in bytes, for every 1-D coordinate."""
    if isinstance(layout, ComposedLayout) and isinstance(layout.outer, Swizzle):
        inner = layout.inner
        if not isinstance(inner, Layout):
            post = np.asarray(layout.table(), dtype=np.int64) * element_bytes
            return post, post
        pre_el = np.asarray(inner.table(), dtype=np.int64) + int(layout.offset)
        if swizzle_unit == "byte":
            pre = pre_el * element_bytes
            return np.asarray(layout.outer(pre), dtype=np.int64), pre
        if swizzle_unit != "element":
            raise LayoutError(f"swizzle_scene: swizzle_unit={swizzle_unit!r} is not 'element' or 'byte'")
        return np.asarray(layout.outer(pre_el), dtype=np.int64) * element_bytes, pre_el * element_bytes
    post = np.asarray(layout.table(), dtype=np.int64) * element_bytes
    return post, post


def swizzle_scene(
    layout: Any,
    element_bytes: int,
    *,
    swizzle_unit: str = "element",
    max_lines: int = 64,
    title: str | None = None,
) -> Scene:
    """swizzle_scene(L, b): shared memory in 128-byte lines x eight 16-byte chunks; chunk = logical 16 B.

    ``L`` maps coordinates to element offsets (``Swizzle o offset o Layout`` or a plain
    Layout); ``element_bytes`` is the element size. Physical byte address
    ``= element_bytes * L(c)``; with ``swizzle_unit="byte"`` the swizzle is taken to act on
    byte addresses (the PTX ISA's ``Swizzle<B,4,3>`` spelling): ``Sw(element_bytes * inner(c))``.
    Each 16-byte chunk in memory is labelled with the logical chunk index its elements had
    before the swizzle, within one row of the swizzle atom (``(pre-swizzle byte // 16) % W``,
    ``W = 2**B`` chunks for ``Swizzle<B,...>``, 8 without swizzle) and coloured by it, and with the coordinate of its first element. Column
    ``j`` of the picture is served by banks ``4j .. 4j+3``.

    >>> s = swizzle_scene("Sw<3,3,3> o (8,64):(64,1)", 2)
    >>> [c[6][0] for c in s.cells[8:16]]    # memory line 1: logical chunks 1 0 3 2 5 4 7 6
    ['1', '0', '3', '2', '5', '4', '7', '6']
    """
    L = _as_layoutish(layout, "swizzle_scene", MAX_SMEM_PICTURE)
    if element_bytes not in (1, 2, 4, 8, 16):
        raise LayoutError(f"swizzle_scene: element_bytes={element_bytes} is not 1, 2, 4, 8 or 16")
    post, pre = _smem_bytes(L, element_bytes, swizzle_unit)
    sw = getattr(L, "swizzle", None)
    atom_chunks = (1 << sw.B) if sw is not None and sw.B > 0 else 8  # 16-byte chunks in one row of the atom
    n = len(post)
    # coordinates of each element (rank-2: (row, col); else the 1-D index)
    if len(L) == 2:
        s0 = int(L[0].size())
        coord = [f"({i % s0},{i // s0})" for i in range(n)]
    else:
        coord = [str(i) for i in range(n)]
    chunk_of: dict = {}
    for i in np.argsort(post, kind="stable"):
        key = int(post[i]) // 16
        chunk_of.setdefault(key, []).append(int(i))
    first_line = min(chunk_of) // 8
    last_line = max(chunk_of) // 8
    n_lines = last_line - first_line + 1
    shown = min(n_lines, max_lines)
    notes = [
        f"{element_bytes}-byte elements; cell = 16-byte chunk at its shared-memory position;",
        f"number/colour = logical chunk (of {atom_chunks}) in its {16 * atom_chunks}-byte atom row before "
        "swizzling, (r,c) = its first element",
    ]
    distinct = len(np.unique(post))
    if distinct < n:
        notes.append(
            f"the layout is not injective: {n} elements at {distinct} distinct addresses "
            "(each chunk shows its first element)"
        )
    if shown < n_lines:
        notes.append(f"showing 128-byte lines {first_line}-{first_line + shown - 1} of {n_lines}")
    mixed = False
    cw, ch, font = 62.0, 30.0, 10.0
    lw = 64.0
    scene = Scene()
    ttl = title or f"{L}"
    y0 = _header(scene, ttl, notes, lw + 8 * cw + 10) + 18
    for j in range(8):
        scene.text(lw + (j + 0.5) * cw, y0 - 18, f"bytes {16 * j}-{16 * j + 15}", 8, "middle")
        scene.text(lw + (j + 0.5) * cw, y0 - 7, f"banks {4 * j}-{4 * j + 3}", 8, "middle")
    for ln in range(shown):
        line = first_line + ln
        y = y0 + ln * ch
        scene.text(lw - 5, y + ch / 2, f"{128 * line} B", 9, "end")
        for j in range(8):
            items = chunk_of.get(line * 8 + j)
            if not items:
                scene.rect(lw + j * cw, y, cw, ch, "#f4f4f4", "#bbbbbb")
                continue
            logical = {int(pre[i]) // 16 for i in items}
            label = (int(pre[items[0]]) // 16) % atom_chunks
            if len(logical) > 1:
                mixed = True
            scene.cell(
                f"chunk-{line}-{j}",
                lw + j * cw,
                y,
                cw,
                ch,
                CHUNK_COLORS[label],
                (str(label) + ("*" if len(logical) > 1 else ""), coord[items[0]]),
                font,
            )
    if mixed:
        scene.text(8, y0 + shown * ch + 10, "* chunk holds elements of several logical chunks", 9, "start")
    scene.height = y0 + shown * ch + (24 if mixed else 10)
    return scene


def swizzle_svg(layout: Any, element_bytes: int, **kwargs: Any) -> str:
    """swizzle_svg(L, b) = swizzle_scene(L, b).to_svg()."""
    return swizzle_scene(layout, element_bytes, **kwargs).to_svg()


# ---------------------------------------------------------------------------------------------
# Bank conflicts
# ---------------------------------------------------------------------------------------------
def banks_scene(
    report: Any, *, instruction: int | None = None, max_rows: int = 64, title: str | None = None
) -> Scene:
    """banks_scene(R): banks 0..31 (columns) x wavefronts (rows); a cell names the lanes it serves.

    ``instruction`` selects one instruction of the report (default: all, one block each).
    Thick lines separate phases (half- or quarter-warps of 8/16-byte accesses); each
    cell's second line is the byte address of the 4-byte word delivered.

    >>> from layoutalg.banks import address_report
    >>> s = banks_scene(address_report([8 * t for t in range(32)], 4))
    >>> len(s.cells), s.cells[0][6]
    (32, ('T0', '@0'))
    """
    instrs = list(report.instructions)
    if instruction is not None:
        if not 0 <= instruction < len(instrs):
            raise LayoutError(f"banks_scene: instruction {instruction} outside [0, {len(instrs)})")
        instrs = [instrs[instruction]]
    cw, ch, font = 40.0, 28.0, 9.0
    lw = 96.0
    scene = Scene()
    verdict = "conflict-free" if report.conflict_free else f"{report.ways}-way bank conflict"
    notes = [
        f"{report.wavefronts} wavefronts, ideal {report.ideal} ({verdict}); "
        f"{report.access_bytes}-byte accesses; cell = lanes served, @ = byte address of the word"
    ]
    if report.description:
        notes.insert(0, report.description)
    y = _header(scene, title or "shared-memory banks per wavefront", notes, lw + 32 * cw + 10) + 12
    for bank in range(32):
        scene.text(lw + (bank + 0.5) * cw, y - 6, str(bank), 9, "middle")
    rows_drawn = 0
    truncated = False
    for k, ins in enumerate(instrs):
        if len(instrs) > 1 or ins.label:
            scene.text(
                8,
                y + 8,
                f"{ins.label or f'instruction {k}'}: {ins.wavefronts} (ideal {ins.ideal})",
                10,
                "start",
                "bold",
            )
            y += 18
        lanes_by_phase = _phase_of_lanes(ins)
        prev_phase = None
        for w, row in enumerate(ins.schedule):
            if rows_drawn >= max_rows:
                truncated = True
                break
            phase = lanes_by_phase.get(row[0][2][0], 0) if row else 0
            if prev_phase is not None and phase != prev_phase:
                scene.line(lw, y, lw + 32 * cw, y, 2.0, "#000000")
            prev_phase = phase
            scene.text(lw - 5, y + ch / 2, f"phase {phase} wf {w}", 9, "end")
            for bank in range(32):
                scene.rect(lw + bank * cw, y, cw, ch, "#ffffff", "#dddddd")
            for bank, word, lanes in row:
                scene.cell(
                    f"bank-{k}-{w}-{bank}",
                    lw + bank * cw,
                    y,
                    cw,
                    ch,
                    THREAD_COLORS[lanes[0] % 32],
                    (_lanes_label([(ln, 0) for ln in lanes]), f"@{4 * word}"),
                    font,
                )
            y += ch
            rows_drawn += 1
        y += 8
    if truncated:
        scene.text(8, y + 6, f"... cut at {max_rows} wavefront rows", 9, "start")
        y += 16
    scene.height = y + 6
    return scene


def _phase_of_lanes(ins: Any) -> dict:
    return {ln: p for p, ls in enumerate(phases(ins.access_bytes, len(ins.addresses))) for ln in ls}


def banks_svg(report: Any, **kwargs: Any) -> str:
    """banks_svg(R) = banks_scene(R).to_svg()."""
    return banks_scene(report, **kwargs).to_svg()


# ---------------------------------------------------------------------------------------------
# The PTX ISA's figures
# ---------------------------------------------------------------------------------------------
#: Figure number -> what it shows (the PTX ISA's mma, wgmma and sparse-mma figures).
PTX_FIGURES: dict[int, str] = {
    46: "mma.m8n8k4 .f16 A, row-major",
    47: "mma.m8n8k4 .f16 A, column-major",
    48: "mma.m8n8k4 .f16 B, row-major",
    49: "mma.m8n8k4 .f16 B, column-major",
    50: "mma.m8n8k4 C/D, .ctype .f16",
    51: "mma.m8n8k4 C/D .f32, computations 1 and 2",
    52: "mma.m8n8k4 C/D .f32, computations 3 and 4",
    53: "mma.m8n8k4 .f64 A",
    54: "mma.m8n8k4 .f64 B",
    55: "mma.m8n8k4 .f64 C/D",
    140: "sparse mma.m16n8k128 .s4 A, columns 0-63",
    141: "sparse mma.m16n8k128 .s4 A, columns 64-127",
    142: "sparse mma.m16n8k128 .s4 B, rows 0-31",
    143: "sparse mma.m16n8k128 .s4 B, rows 32-63",
    144: "sparse mma.m16n8k128 .s4 B, rows 64-95",
    145: "sparse mma.m16n8k128 .s4 B, rows 96-127",
    156: "MN-major 128B swizzling (16-byte units)",
    157: "K-major 128B swizzling (16-byte units)",
    158: "MN-major 64B swizzling (16-byte units)",
    159: "K-major 64B swizzling (16-byte units)",
    160: "MN-major 32B swizzling (16-byte units)",
    161: "K-major 32B swizzling (16-byte units)",
    162: "MN-major interleaved (16-byte units)",
    163: "K-major interleaved (16-byte units)",
    164: "K-major 128B swizzling, tf32",
    165: "MN-major 128B swizzling, tf32",
    166: "K-major, no swizzling, tf32 (the PTX ISA's worked example)",
    167: "K-major, 32B swizzling, tf32 (the PTX ISA's worked example)",
    168: "MN-major, no swizzling, bf16 (the PTX ISA's worked example)",
    169: "MN-major, 32B swizzling, bf16 (the PTX ISA's worked example)",
    170: "MN-major, 64B swizzling, bf16 (the PTX ISA's worked example)",
}

_SWIZZLE_FIGS = {
    156: ("MN", 128),
    157: ("K", 128),
    158: ("MN", 64),
    159: ("K", 64),
    160: ("MN", 32),
    161: ("K", 32),
    162: ("MN", 0),
    163: ("K", 0),
}


def ptx_figure(number: int) -> Scene:
    """ptx_figure(n): the PTX ISA's Figure n rebuilt from the catalog (see :data:`PTX_FIGURES`).

    Figures 146/147 (sparse metadata) are not reproduced: the catalog has the lanes that hold
    metadata, not a layout of the metadata bits.

    >>> ptx_figure(53).title
    'Figure 53: mma.m8n8k4 .f64 A'
    """
    if number not in PTX_FIGURES:
        extra = (
            " (sparse metadata figures are not reproduced: the catalog has no metadata layout)"
            if number in (146, 147)
            else ""
        )
        raise LayoutError(f"ptx_figure: figure {number} is not one of {sorted(PTX_FIGURES)}{extra}")
    title = f"Figure {number}: {PTX_FIGURES[number]}"
    from .nvidia import mma

    if number <= 55:
        if number in (46, 47):
            F = mma.fragment("m8n8k4", "f16", "A", alayout="row" if number == 46 else "col")
        elif number in (48, 49):
            F = mma.fragment("m8n8k4", "f16", "B", blayout="row" if number == 48 else "col")
        elif number in (50, 51, 52):
            F = mma.fragment("m8n8k4", "f16", "C", ctype="f16" if number == 50 else "f32")
        else:
            F = mma.fragment("m8n8k4", "f64", {53: "A", 54: "B", 55: "C"}[number])
        batch = {51: (0, 1), 52: (2, 3)}.get(number, "all" if F.batch > 1 else 0)
        return fragment_scene(F, batch=batch, title=title)
    if number <= 145:
        if number <= 141:
            F = mma.sparse_fragment("m16n8k128", "s4", "A")
            lo = 0 if number == 140 else 32
            return fragment_scene(F, cols=(lo, lo + 32), title=title)
        F = mma.sparse_fragment("m16n8k128", "s4", "B")
        lo = 32 * (number - 142)
        return fragment_scene(F, rows=(lo, lo + 32), title=title)
    from .nvidia import wgmma

    if number in _SWIZZLE_FIGS:
        major, sw = _SWIZZLE_FIGS[number]
        return swizzle_scene(
            wgmma.atom(major, sw, "bf16"), 2, title=title + f": atom {wgmma.atom(major, sw, 'bf16')}"
        )
    if number in (164, 165):
        a = wgmma.atom("K" if number == 164 else "MN", 128, "tf32")
        return swizzle_scene(a, 4, title=title + f": atom {a}")
    ex = wgmma.seed_examples()[number - 166]
    return swizzle_scene(
        ex.exact, {"tf32": 4, "bf16": 2}[ex.dtype], swizzle_unit="byte", title=f"{title}: {ex.exact}"
    )


# ---------------------------------------------------------------------------------------------
# Output
# ---------------------------------------------------------------------------------------------
#: class -> function(obj, **kwargs) -> Scene, filled by the picture modules above this one
_SCENES: dict[Any, Any] = {}


# ---------------------------------------------------------------------------------------------
# TV layouts: the tile, each cell labelled with its thread and value (CuTe's print_latex_tv)
# ---------------------------------------------------------------------------------------------
def owners(tv: Any, rows: int, cols: int) -> tuple[np.ndarray, np.ndarray]:
    """``(thread, value)`` grids (rows x cols) of a TV layout ``(t, v) -> r + rows*c``: CuTe's first
    owner in thread-major order, -1 where nobody holds the element.

    >>> from layoutalg import Layout
    >>> t, v = owners(Layout((2, 2), (1, 2)), 2, 2)     # (t, v) -> t + 2v: thread t holds row t
    >>> t.tolist(), v.tolist()
    ([[0, 0], [1, 1]], [[0, 1], [0, 1]])
    """
    T, V = int(tv[0].size()), int(tv[1].size())
    tab = np.asarray(tv.table(), dtype=np.int64).reshape(V, T).T.reshape(-1)  # (t, v) in t-major order
    n = rows * cols
    if tab.size and (tab.min() < 0 or tab.max() >= n):
        raise LayoutError(f"owners: TV layout {tv} reaches index {int(tab.max())} outside the {rows}x{cols} tile")
    uniq, first = np.unique(tab, return_index=True)
    thr = np.full(n, -1, dtype=np.int64)
    val = np.full(n, -1, dtype=np.int64)
    thr[uniq] = first // V
    val[uniq] = first % V
    return thr.reshape(cols, rows).T, val.reshape(cols, rows).T


def tv_scene(layout: Any, tile: Any, *, max_rows: int = 64, max_cols: int = 64, title: str | None = None) -> Scene:
    """tv_scene(L, (M, N)): a TV layout drawn as CuTe's ``print_latex_tv`` draws it -- the M x N tile,
    cell (m, n) labelled ``T<t>`` / ``V<v>`` of the first thread (in thread-major order) that holds
    it, coloured by lane, with warp bands when more than one warp holds the tile.

    ``L`` maps ``(thread, value)`` to the column-major tile index ``m + M*n`` (the convention of
    layoutalg's TV layouts, CuTe's ``(t,v) -> (m,n)`` flattened); its rank must be 2. A TV layout
    is never guessed: pass ``tile`` (``viz.save(L, path, tv=(M, N))``), else a layout is drawn as
    its offset grid.

    >>> from layoutalg import Layout
    >>> s = tv_scene(Layout((4, 2), (2, 1)), (8, 1))     # thread t holds rows 2t, 2t+1
    >>> [c[6] for c in s.cells[:3]]
    [('T0', 'V0'), ('T0', 'V1'), ('T1', 'V0')]
    """
    op = "tv_scene"
    L = _as_layoutish(layout, op)
    if len(L) != 2:
        raise LayoutError(f"{op}: {L} has rank {len(L)}; a TV layout is (thread, value) -> tile index (rank 2)")
    try:
        M, N = (int(x) for x in (tile if isinstance(tile, (tuple, list)) else (tile, 1)))
    except (TypeError, ValueError):
        raise LayoutError(f"{op}: tile={tile!r} is not (M, N)") from None
    if M < 1 or N < 1:
        raise LayoutError(f"{op}: tile=({M}, {N}) needs positive extents")
    thr, val = owners(L, M, N)
    T = int(L[0].size())
    r0, r1 = _window(M, None, max_rows, "rows")
    c0, c1 = _window(N, None, max_cols, "cols")
    held = int((thr >= 0).sum())
    notes = [f"TV layout: {T} threads x {int(L[1].size())} values on a {M} x {N} tile; cell = first T<thread> "
             f"V<value> that holds it; colour = lane" + (" % 32" if T > 32 else "")]
    if held < M * N:
        notes.append(f"{M * N - held} of {M * N} elements are held by no thread ('-')")
    if T > 32:
        notes.append("thick lines and the bands on the right (W0, W1, ...) mark the warps")
    notes += _cut_note(M, N, r0, r1, c0, c1)
    cw, ch, font = 40.0, 30.0, 10.0
    lw = 30.0
    scene = Scene()
    y0 = _header(scene, title or f"TV layout {L} on {M} x {N}", notes, lw + cw * (c1 - c0) + 44) + 16
    for c in range(c0, c1):
        scene.text(lw + (c - c0 + 0.5) * cw, y0 - 8, str(c), 9, "middle")
    for r in range(r0, r1):
        y = y0 + (r - r0) * ch
        scene.text(lw - 5, y + ch / 2, str(r), 9, "end")
        for c in range(c0, c1):
            t, v = int(thr[r, c]), int(val[r, c])
            if t < 0:
                scene.cell(f"cell-{r}-{c}", lw + (c - c0) * cw, y, cw, ch, "#ffffff", ("-",), font)
            else:
                scene.cell(f"cell-{r}-{c}", lw + (c - c0) * cw, y, cw, ch, thread_color(t), (f"T{t}", f"V{v}"), font)
    if T > 32:
        w = np.where(thr[r0:r1, c0:c1] >= 0, thr[r0:r1, c0:c1] // 32, -1)
        warp_bands(scene, w, lw, y0, cw, ch)
    scene.height = y0 + (r1 - r0) * ch + 10
    return scene


def register_scene(cls: type | str, draw: Any) -> None:
    """Make ``draw(obj, **kwargs) -> Scene`` the picture :func:`scene_of` (and :func:`save`) gives ``cls`` (a
    class, or its ``"module.QualName"`` when the provider should not import the class's module)."""
    _SCENES[cls] = draw


def scene_of(obj: Any, **kwargs: Any) -> Scene:
    """The default picture of ``obj``: Scene as is; Fragment -> fragment_scene; BankReport -> banks_scene;
    a registered class (TiledMMA, TiledCopy: :mod:`layoutalg.viz_tiled`) -> its picture; Layout / ComposedLayout /
    text -> layout_scene, or with ``tv=(M, N)`` -> tv_scene (the layout read as a TV layout on an M x N tile;
    a TV layout is never guessed)."""
    if isinstance(obj, Scene):
        if kwargs:
            raise LayoutError(f"scene_of: a Scene is drawn as it is; {sorted(kwargs)} would be ignored")
        return obj
    if "tv" in kwargs:  # an explicit TV layout: the tile with T/V labels (never guessed)
        tile = kwargs.pop("tv")
        if tile is not None:
            return tv_scene(obj, tile, **kwargs)
    for klass in type(obj).__mro__:  # pictures of higher layers (layoutalg.viz_tiled registers its own)
        draw = _SCENES.get(klass) or _SCENES.get(f"{klass.__module__}.{klass.__qualname__}")
        if draw is not None:
            return draw(obj, **kwargs)
    if isinstance(obj, BankReport):
        return banks_scene(obj, **kwargs)
    if all(hasattr(obj, a) for a in ("layout", "codomain", "operand", "num_threads")):
        return fragment_scene(obj, **kwargs)
    return layout_scene(obj, **kwargs)


def render_png(obj: Any, dpi: int = 100, **kwargs: Any) -> np.ndarray:
    """The picture of ``obj`` rasterised with matplotlib's Agg at ``dpi``: an (H, W, 4) float array in [0, 1]."""
    fig = scene_of(obj, **kwargs).to_figure()
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    fig.set_dpi(dpi)
    canvas.draw()
    return np.asarray(canvas.buffer_rgba(), dtype=np.float64) / 255.0


def save(obj: Any, path: str | os.PathLike, *, dpi: int = 100, **kwargs: Any) -> str:
    """save(obj, path): write the picture of ``obj`` as SVG or PNG, chosen by the suffix; returns the path.

    ``obj`` is a Scene, a matplotlib Figure, or anything :func:`scene_of` draws; keyword arguments go
    to the picture (``tv=(M, N)`` draws a layout as a TV layout, :func:`tv_scene`). SVG is written
    without matplotlib; PNG needs it.
    """
    path = os.fspath(path)
    suffix = os.path.splitext(path)[1].lower()
    if suffix not in (".svg", ".png"):
        raise LayoutError(f"save: {path!r} has suffix {suffix!r}; expected .svg or .png")
    if hasattr(obj, "savefig"):  # a matplotlib Figure
        obj.savefig(path, dpi=dpi)
        return path
    scene = scene_of(obj, **kwargs)
    if suffix == ".svg":
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(scene.to_svg())
    else:
        scene.to_figure().savefig(path, dpi=dpi)
    return path


# the notebook pictures of the lower layers' objects (their _repr_svg_ asks layoutalg.hooks)
register_svg(Layout, layout_svg)
register_svg(ComposedLayout, layout_svg)
register_svg(BankReport, banks_svg)
register_svg("layoutalg.nvidia.fragment.Fragment", fragment_svg)
