"""Pictures of layouts, TV layouts, fragments, swizzled shared memory and bank reports (see :mod:`layoutalg.viz`).

:func:`drawable_layout`, :func:`layout_dims` and :func:`layout_window` are the grid a layout's picture
shows -- which rows and columns, and the offsets of a window of them -- shared with the command line's
text grid (``layoutalg show``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..banks import phases
from ..composed import ComposedLayout
from ..errors import LayoutError, guarded
from ..layout import MAX_TABLE, Layout, check_table_size
from ..parse import as_concrete_layout
from ..swizzle import Swizzle
from .scene import CHUNK_COLORS, GREYS, THREAD_COLORS, Scene, cell_span, header, text_width, thread_color, warp_bands

#: what :mod:`layoutalg.viz` re-exports
__all__ = ["MAX_SMEM_PICTURE", "banks_scene", "banks_svg", "drawable_layout", "fragment_scene", "fragment_svg",
           "layout_dims", "layout_scene", "layout_svg", "layout_window", "owners", "swizzle_scene", "swizzle_svg",
           "tv_scene"]


# ---------------------------------------------------------------------------------------------
# Layouts
# ---------------------------------------------------------------------------------------------
#: The most elements a shared-memory picture enumerates (it visits every element in Python; shared
#: memory holds at most 228 KiB, i.e. 233472 one-byte elements).
MAX_SMEM_PICTURE = 1 << 20


def drawable_layout(x: Any, op: str, limit: int = MAX_TABLE) -> Any:
    """A concrete Layout or ComposedLayout of at most ``limit`` entries (a LayoutError names both)."""
    L = as_concrete_layout(x, op)
    n = check_table_size(L, op)
    if n > limit:
        raise LayoutError(f"{op}: {L} has {n} entries, more than the limit of {limit} this picture draws")
    return L


@guarded
def layout_dims(L: Any) -> tuple[int, int, str]:
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


@guarded
def layout_window(L: Any, r0: int, r1: int, c0: int, c1: int) -> np.ndarray:
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
    L = drawable_layout(layout, "layout_scene")
    R, C, note = layout_dims(L)
    r0, r1 = cell_span(R, None, max_rows, "rows")
    c0, c1 = cell_span(C, None, max_cols, "cols")
    M = layout_window(L, r0, r1, c0, c1)  # only the cells drawn are computed
    notes = [note] if note else []
    notes += _cut_note(R, C, r0, r1, c0, c1)
    maxlen = max(len(str(int(v))) for v in M.ravel())
    cw, ch, font = max(26.0, 7.0 * maxlen + 10), 22.0, 10.0
    scene = Scene()
    lw = 10 + 7 * len(str(R))
    y0 = header(scene, title or f"{L}", notes, lw + cw * (c1 - c0) + 10)
    y0 += 16  # column numbers
    for c in range(c0, c1):
        scene.text(lw + (c - c0 + 0.5) * cw, y0 - 8, str(c), 9, "middle")
    for r in range(r0, r1):
        y = y0 + (r - r0) * ch
        scene.text(lw - 5, y + ch / 2, str(r), 9, "end")
        for c in range(c0, c1):
            v = int(M[r - r0, c - c0])
            scene.cell(f"cell-{r}-{c}", lw + (c - c0) * cw, y, cw, ch, GREYS[v % 8], (str(v),), font)
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
    r0, r1 = cell_span(R, rows, max_rows, "rows")
    c0, c1 = cell_span(C, cols, max_cols, "cols")
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
    panel_w = max(lw + cw * (c1 - c0) + 16, max(lw + text_width(t, 11) + 16 for t in subtitles))
    scene = Scene()
    ttl = title or f"{F.instruction}  operand {F.operand}"
    y0 = header(scene, ttl, notes, panel_w * len(batches))
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
    L = drawable_layout(layout, "swizzle_scene", MAX_SMEM_PICTURE)
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
    y0 = header(scene, ttl, notes, lw + 8 * cw + 10) + 18
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
@guarded
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
    y = header(scene, title or "shared-memory banks per wavefront", notes, lw + 32 * cw + 10) + 12
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


@guarded
def banks_svg(report: Any, **kwargs: Any) -> str:
    """banks_svg(R) = banks_scene(R).to_svg()."""
    return banks_scene(report, **kwargs).to_svg()


# ---------------------------------------------------------------------------------------------
# TV layouts: the tile, each cell labelled with its thread and value (CuTe's print_latex_tv)
# ---------------------------------------------------------------------------------------------
@guarded
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
    L = drawable_layout(layout, op)
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
    r0, r1 = cell_span(M, None, max_rows, "rows")
    c0, c1 = cell_span(N, None, max_cols, "cols")
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
    y0 = header(scene, title or f"TV layout {L} on {M} x {N}", notes, lw + cw * (c1 - c0) + 44) + 16
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
