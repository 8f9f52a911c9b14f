"""The drawing surface of every picture: :class:`Scene` (rectangles, texts and lines in pixels) and its two
back ends (SVG without dependencies, a matplotlib Figure), the colours (lanes, warps, 16-byte chunks), the
warp bands, a picture's title block (:func:`header`) and :func:`svg_cells`, which reads a picture's cells
back from its SVG. The picture modules of :mod:`layoutalg.viz` draw on it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from collections.abc import Sequence

import numpy as np

from ..errors import LayoutError, guarded

#: what :mod:`layoutalg.viz` re-exports; the rest (cell_span, header, lighten, text_width, GREYS) serves the pictures
__all__ = ["Scene", "THREAD_COLORS", "WARP_BAND_COLORS", "CHUNK_COLORS", "SVG_MAX_BYTES", "LATTICE_CELLS", "thread_color",
           "warp_bands", "svg_cells", "escape"]


def escape(text: str) -> str:
    """Text safe inside SVG markup (``&``, ``<``, ``>``)."""
    if not isinstance(text, str):
        raise LayoutError(f"escape: expected text, got {text!r}")
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


# ---------------------------------------------------------------------------------------------
# Colours
# ---------------------------------------------------------------------------------------------
def lighten(hex_colour: str, amount: float) -> str:
    """``#rrggbb`` moved ``amount`` (0..1) of the way to white.

    >>> lighten("#000000", 0.5)
    '#808080'
    """
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
    if isinstance(t, bool) or not isinstance(t, (int, np.integer)):
        raise LayoutError(f"thread_color: a thread is an int, got {t!r}")
    return THREAD_COLORS[t % 32]


@guarded
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
CHUNK_COLORS: tuple[str, ...] = tuple(lighten(c, 0.35) for c in _TAB10[:8])
#: CuTe's print_latex shading by ``offset % 8``.
GREYS = tuple(lighten("#000000", 1 - 0.04 * k) for k in range(1, 9))


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
    >>> from layoutalg.viz import layout_svg
    >>> [(c[0], c[5]) for c in svg_cells(layout_svg(Layout((1, 2), (1, 5))))]
    [(17.0, ['0']), (43.0, ['5'])]
    """
    import re
    import xml.etree.ElementTree as ET

    if not isinstance(svg, (str, bytes)):
        raise LayoutError(f"svg_cells: expected the text of an SVG, got {type(svg).__name__}")
    ns = "{http://www.w3.org/2000/svg}"
    try:
        root = ET.fromstring(svg)
    except ET.ParseError as e:
        raise LayoutError(f"svg_cells: not well-formed SVG ({e})") from None
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


def text_width(s: str, size: float) -> float:
    """The width in pixels a label of ``size`` points takes (an estimate: 0.62 em a character)."""
    return 0.62 * size * len(s)


# ---------------------------------------------------------------------------------------------
# Grid helper
# ---------------------------------------------------------------------------------------------
_TITLE = 15.0
_NOTE = 11.0


def cell_span(n: int, span: tuple | None, cap: int, what: str) -> tuple[int, int]:
    """The rows (or columns) ``lo..hi-1`` a picture draws of ``n``: ``span`` as given (checked), else the
    first ``cap``."""
    if span is None:
        return 0, min(n, cap)
    lo, hi = span
    if not (isinstance(lo, (int, np.integer)) and isinstance(hi, (int, np.integer)) and 0 <= lo < hi <= n):
        raise LayoutError(f"viz: {what}={span!r} is not a range (lo, hi) with 0 <= lo < hi <= {n}")
    return int(lo), int(hi)


def header(scene: Scene, title: str, notes: Sequence[str], width_needed: float) -> float:
    """Write title and notes at the top; return the y where the content starts."""
    scene.title = title
    y = 8.0
    scene.text(8, y + _TITLE / 2, title, _TITLE, "start", "bold")
    y += _TITLE + 6
    for note in notes:
        scene.text(8, y + _NOTE / 2, note, _NOTE, "start")
        y += _NOTE + 4
    widest = max([text_width(title, _TITLE)] + [text_width(n, _NOTE) for n in notes]) + 16
    scene.width = max(scene.width, widest, width_needed)
    return y + 4
