"""Pictures of tiled MMAs and tiled copies: who holds what in the CTA tile (CuTe's ``print_latex``).

:func:`tiled_mma_scene` draws the three operands of one step of a :class:`~layoutalg.tiled.TiledMMA`
as CuTe's ``print_latex(TiledMMA)`` does: C (M x N) in the middle, A (M x K) on its left with M
down and K across, B on top with K down and N across -- so that row ``m`` of A and column ``n`` of
B meet at ``C[m][n]``. Each cell is labelled ``T<thread>`` / ``V<value>`` and coloured by thread
(the lane's hue, darker for each further warp);
where several threads hold an element (A and B are broadcast across warps) the label is the
first ``(thread, value)`` in thread-major order, which is CuTe's choice. :func:`tiled_copy_scene`
draws a :class:`~layoutalg.tiled.TiledCopy`'s source and destination tiles side by side.

By hand, the 16x8x16 ``mma.sync`` (one warp): ``C[9][3]`` is ``c3`` of lane 5 (groupID 1 + 8,
column 2*1 + 1), so the cell ``C-9-3`` reads ``T5`` / ``V3``::

    >>> from layoutalg.nvidia.atoms import mma_atom
    >>> from layoutalg.tiled import make_tiled_mma
    >>> s = tiled_mma_scene(make_tiled_mma(mma_atom("SM80_16x8x16_F32F16F16F32_TN")))
    >>> next(c[6] for c in s.cells if c[0] == "C-9-3")
    ('T5', 'V3')

Large tiles are not drawn cell by cell: beyond ``max_cells`` (64) rows or columns an operand is
*aggregated* into blocks (by default the atom's extent, doubled while there are more than 32
blocks a side and halved while there are fewer than 8),
each labelled with the range of threads and values it holds and coloured by its first thread's
warp; ``window=(rows, cols)`` zooms into a part of C (and the matching rows of A and columns of B)
cell by cell instead.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import LayoutError
from ..hooks import register_svg
from ..tiled import MMAAtom, TiledCopy, TiledMMA, make_tiled_mma
from .core import owners
from .output import register_scene
from .scene import Scene, header, lighten, thread_color, warp_bands

__all__ = ["tiled_mma_scene", "tiled_copy_scene", "tiled_mma_svg", "tiled_copy_svg", "owners", "thread_color",
           "WARP_COLORS"]

#: one colour per warp of a CTA (aggregated pictures), light enough for dark text
WARP_COLORS: tuple[str, ...] = tuple(
    lighten(c, 0.5)
    for c in ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
              "#bcbd22", "#17becf", "#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#3182bd")
)


def _as_tiled_mma(x: Any) -> Any:
    if isinstance(x, TiledMMA):
        return x
    if isinstance(x, MMAAtom):
        return make_tiled_mma(x)
    raise LayoutError(f"tiled_mma_scene: {x!r} is not a TiledMMA or an MMAAtom")


def _window(n: int, w: Any, what: str) -> tuple[int, int]:
    if w is None:
        return 0, n
    lo, hi = w
    if not (0 <= int(lo) < int(hi) <= n):
        raise LayoutError(f"viz: window {what}={w!r} is not a range (lo, hi) with 0 <= lo < hi <= {n}")
    return int(lo), int(hi)


def _block(n: int, atom: int, cap: int = 32, least: int = 8) -> int:
    """Block extent along a mode of n elements: the atom's, doubled while there are more than ``cap``
    blocks, halved (down to 4 elements) while there are fewer than ``least``."""
    b = max(1, min(atom, n))
    while n // b > cap and b < n:
        b *= 2
    while n // b < least and b % 2 == 0 and b > 4:
        b //= 2
    return min(b, n)


def _range_label(prefix: str, xs: np.ndarray) -> str:
    xs = np.unique(xs[xs >= 0])
    if xs.size == 0:
        return "-"
    lo, hi = int(xs[0]), int(xs[-1])
    if lo == hi:
        return f"{prefix}{lo}"
    if xs.size == hi - lo + 1:
        return f"{prefix}{lo}-{hi}"
    return f"{prefix}{lo}..{hi}({xs.size})"


class _Panel:
    """One operand grid placed in the scene: ``thr``/``val`` owner grids, cell size, origin."""

    def __init__(self, name: str, thr: np.ndarray, val: np.ndarray, r0: int, c0: int, transpose: bool = False):
        self.name, self.thr, self.val, self.r0, self.c0 = name, thr, val, r0, c0
        self.transpose = transpose  # B is drawn K down, N across: cell ids are B-k-n


def _draw_cells(scene: Scene, p: _Panel, x0: float, y0: float, cw: float, ch: float, font: float) -> None:
    R, Cn = p.thr.shape
    for r in range(R):
        for c in range(Cn):
            t, v = int(p.thr[r, c]), int(p.val[r, c])
            gr, gc = p.r0 + r, p.c0 + c
            cid = f"{p.name}-{gr}-{gc}"
            if t < 0:
                scene.cell(cid, x0 + c * cw, y0 + r * ch, cw, ch, "#ffffff", ("-",), font)
            else:
                scene.cell(cid, x0 + c * cw, y0 + r * ch, cw, ch, thread_color(t), (f"T{t}", f"V{v}"), font)
    warp_bands(scene, np.where(p.thr >= 0, p.thr // 32, -1), x0, y0, cw, ch)


def _draw_blocks(scene: Scene, p: _Panel, x0: float, y0: float, e: float, br: int, bc: int, font: float) -> None:
    R, Cn = p.thr.shape
    for i in range(0, R, br):
        for j in range(0, Cn, bc):
            t = p.thr[i:i + br, j:j + bc]
            v = p.val[i:i + br, j:j + bc]
            h, w = t.shape
            first = int(t[t >= 0].min()) if (t >= 0).any() else -1
            fill = WARP_COLORS[(first // 32) % len(WARP_COLORS)] if first >= 0 else "#ffffff"
            labels = (_range_label("T", t), _range_label("V", v)) if h * e >= 2.4 * font and w * e >= 5 * font else ()
            scene.cell(f"{p.name}-blk-{p.r0 + i}-{p.c0 + j}", x0 + j * e, y0 + i * e, w * e, h * e, fill, labels, font)


def _axis(scene: Scene, x0: float, y0: float, n: int, step: float, start: int, vertical: bool, every: int) -> None:
    for k in range(0, n, every):
        if vertical:
            scene.text(x0 - 4, y0 + (k + 0.5) * step, str(start + k), 8, "end")
        else:
            scene.text(x0 + (k + 0.5) * step, y0 - 7, str(start + k), 8, "middle")


def _mode(mode: str, sizes: list, max_cells: int, window: Any) -> str:
    if mode not in ("auto", "cells", "blocks"):
        raise LayoutError(f"viz: mode {mode!r} is not 'auto', 'cells' or 'blocks'")
    if mode != "auto":
        return mode
    if window is not None:
        return "cells"
    return "cells" if max(sizes) <= max_cells else "blocks"


def tiled_mma_scene(
    mma: Any,
    *,
    mode: str = "auto",
    window: Any = None,
    max_cells: int = 64,
    block: Any = None,
    title: str | None = None,
) -> Scene:
    """tiled_mma_scene(mma): A (left), B (top), C (middle) of one tiled-MMA step, cells ``T<t>``/``V<v>``.

    ``mode``: ``"cells"`` (every element), ``"blocks"`` (aggregated, see the module docstring) or
    ``"auto"`` (cells up to ``max_cells`` rows/columns per operand). ``window=((m0, m1), (n0, n1))``
    draws only rows ``m0..m1-1`` of C and A and columns ``n0..n1-1`` of C and B, cell by cell
    (K is always drawn whole). ``block=(bm, bn, bk)`` sets the aggregation block.
    """
    mma = _as_tiled_mma(mma)
    M, N, K = mma.tile_size_mnk
    Kc = K // mma.atom.a_k_compression
    ct, cv = owners(mma.get_layoutC_TV(), M, N)
    at, av = owners(mma.get_layoutA_TV(), M, Kc)
    bt, bv = owners(mma.get_layoutB_TV(), N, K)
    bt, bv = bt.T, bv.T  # drawn K x N
    m0, m1 = _window(M, None if window is None else window[0], "rows")
    n0, n1 = _window(N, None if window is None else window[1], "cols")
    md = _mode(mode, [M, N, K], max_cells, window)
    A = _Panel("A", at[m0:m1], av[m0:m1], m0, 0)
    B = _Panel("B", bt[:, n0:n1], bv[:, n0:n1], 0, n0, transpose=True)
    Cp = _Panel("C", ct[m0:m1, n0:n1], cv[m0:m1, n0:n1], m0, n0)
    scene = Scene()
    a = mma.atom
    notes = [
        f"{mma.num_threads} threads, thread layout (V,M,N,K) {mma.thr_layout_vmnk}; tile M x N x K = {M} x {N} x {K}"
        + (f" (A compressed: {M} x {Kc})" if Kc != K else ""),
        "A (M x K) left, B (K x N) top, C (M x N) middle; cell = first T<thread> V<value> holding it"
        + ("; colour = lane; thick lines and bands W0, W1, ... = warps" if md == "cells"
           else "; blocks coloured by the warp of their first thread"),
    ]
    if window is not None:
        notes.append(f"showing rows {m0}-{m1 - 1}, columns {n0}-{n1 - 1} of C (K whole)")
    ttl = title or f"TiledMMA {a.name} x {_shape_str(mma.atom_layout_mnk)}"
    if md == "cells":
        cw, ch, font = 38.0, 26.0, 9.0
        lw = 30.0
        width = lw + (Kc + 1) * cw + (n1 - n0) * cw + 20
        y = header(scene, ttl, notes, width) + 14
        xa, yb = lw, y
        xc, yc = xa + (Kc + 1) * cw, yb + (K + 1) * ch
        _draw_cells(scene, B, xc, yb, cw, ch, font)
        _draw_cells(scene, A, xa, yc, cw, ch, font)
        _draw_cells(scene, Cp, xc, yc, cw, ch, font)
        _axis(scene, xc, yb, n1 - n0, cw, n0, False, 1)
        _axis(scene, xc - 2, yb, K, ch, 0, True, 1)
        _axis(scene, xa, yc, Kc, cw, 0, False, 1)
        _axis(scene, xa, yc, m1 - m0, ch, m0, True, 1)
        scene.text(xc - cw / 2, yb - 7, "B", 10, "middle", "bold")
        scene.text(xa - 14, yc - 7, "A", 10, "middle", "bold")
        scene.text(xc - 14, yc - 7, "C", 10, "middle", "bold")
        scene.height = yc + (m1 - m0) * ch + 12
        scene.width = max(scene.width, xc + (n1 - n0) * cw + 12)
        return scene
    bm, bn, bk = block or (_block(M, a.shape_mnk[0]), _block(N, a.shape_mnk[1]), _block(K, a.shape_mnk[2], least=1))
    e = float(max(2.0, min(14.0, 1100.0 / (K + max(M, N)))))
    font = 8.0
    lw = 36.0
    notes.append(f"aggregated: blocks of {bm} x {bn} (C), {bm} x {bk} (A), {bk} x {bn} (B) elements; "
                 f"{e:g} px per element")
    width = lw + (Kc + 4) * e + N * e + 20
    y = header(scene, ttl, notes, width) + 14
    xa, yb = lw, y
    xc, yc = xa + Kc * e + 4 * e + 8, yb + K * e + 4 * e + 8
    _draw_blocks(scene, B, xc, yb, e, bk, bn, font)
    _draw_blocks(scene, A, xa, yc, e, bm, max(1, bk // a.a_k_compression), font)
    _draw_blocks(scene, Cp, xc, yc, e, bm, bn, font)
    _axis(scene, xc, yb, N, e, 0, False, max(1, bn))
    _axis(scene, xa, yc, M, e, 0, True, max(1, bm))
    scene.text(xc - 10, yb - 7, "B", 10, "middle", "bold")
    scene.text(xa - 14, yc - 12, "A", 10, "middle", "bold")
    scene.text(xc - 12, yc - 12, "C", 10, "middle", "bold")
    scene.height = yc + M * e + 14
    scene.width = max(scene.width, xc + N * e + 14)
    return scene


def _shape_str(L: Any) -> str:
    s = L.shape if hasattr(L, "shape") else L
    return "x".join(str(x) for x in (s if isinstance(s, tuple) else (s,)))


def tiled_copy_scene(
    tiled_copy: Any,
    *,
    mode: str = "auto",
    window: Any = None,
    max_cells: int = 64,
    block: Any = None,
    title: str | None = None,
) -> Scene:
    """tiled_copy_scene(tc): the copy's source tile (left) and destination tile (right), ``T<t>``/``V<v>``.

    A cell says which thread reads (S) or writes (D) the element and as which value; for
    ``ldmatrix`` the source side shows the lanes that supply row addresses and the destination
    side the registers. Same ``mode`` / ``window`` / ``block`` options as :func:`tiled_mma_scene`.
    """
    if not isinstance(tiled_copy, TiledCopy):
        raise LayoutError(f"tiled_copy_scene: {tiled_copy!r} is not a TiledCopy")
    shp = tiled_copy.tile_shape
    if len(shp) == 1:
        shp = (shp[0], 1)
    if len(shp) != 2:
        raise LayoutError(f"tiled_copy_scene: the copy's tile {shp} is not 2-D")
    M, N = shp
    st, sv = owners(tiled_copy.get_layoutS_TV(), M, N)
    dt, dv = owners(tiled_copy.get_layoutD_TV(), M, N)
    m0, m1 = _window(M, None if window is None else window[0], "rows")
    n0, n1 = _window(N, None if window is None else window[1], "cols")
    md = _mode(mode, [M, N], max_cells, window)
    S = _Panel("S", st[m0:m1, n0:n1], sv[m0:m1, n0:n1], m0, n0)
    D = _Panel("D", dt[m0:m1, n0:n1], dv[m0:m1, n0:n1], m0, n0)
    a = tiled_copy.atom
    scene = Scene()
    notes = [f"{tiled_copy.num_threads} threads; tile {M} x {N}; TV {tiled_copy.layout_tv}; {a.value_bits}-bit values",
             "source (left) and destination (right); cell = first T<thread> V<value> that reads / writes it"]
    if window is not None:
        notes.append(f"showing rows {m0}-{m1 - 1}, columns {n0}-{n1 - 1}")
    ttl = title or f"TiledCopy {a.name}"
    if md == "cells":
        cw, ch, font = 38.0, 26.0, 9.0
        lw = 30.0
        gap = 3 * cw
        width = lw + 2 * (n1 - n0) * cw + gap + 20
        y = header(scene, ttl, notes, width) + 26
        xs, xd = lw, lw + (n1 - n0) * cw + gap
        _draw_cells(scene, S, xs, y, cw, ch, font)
        _draw_cells(scene, D, xd, y, cw, ch, font)
        for x0 in (xs, xd):
            _axis(scene, x0, y, n1 - n0, cw, n0, False, 1)
            _axis(scene, x0, y, m1 - m0, ch, m0, True, 1)
        scene.text(xs, y - 20, "S (source)", 10, "start", "bold")
        scene.text(xd, y - 20, "D (destination)", 10, "start", "bold")
        scene.height = y + (m1 - m0) * ch + 12
        return scene
    bm, bn = block or (_block(M, 8), _block(N, 8))
    e = float(max(2.0, min(14.0, 1100.0 / (2 * N + 4))))
    font = 8.0
    lw = 36.0
    notes.append(f"aggregated: blocks of {bm} x {bn} elements; {e:g} px per element")
    width = lw + 2 * N * e + 6 * e + 20
    y = header(scene, ttl, notes, width) + 26
    xs, xd = lw, lw + N * e + 6 * e
    _draw_blocks(scene, S, xs, y, e, bm, bn, font)
    _draw_blocks(scene, D, xd, y, e, bm, bn, font)
    scene.text(xs, y - 20, "S (source)", 10, "start", "bold")
    scene.text(xd, y - 20, "D (destination)", 10, "start", "bold")
    scene.height = y + M * e + 12
    return scene


def tiled_mma_svg(mma: Any, **kwargs: Any) -> str:
    """tiled_mma_svg(mma) = tiled_mma_scene(mma).to_svg()."""
    return tiled_mma_scene(mma, **kwargs).to_svg()


def tiled_copy_svg(tiled_copy: Any, **kwargs: Any) -> str:
    """tiled_copy_svg(tc) = tiled_copy_scene(tc).to_svg()."""
    return tiled_copy_scene(tiled_copy, **kwargs).to_svg()


# the pictures of the tiled objects: viz.save / scene_of, and notebooks' _repr_svg_ (layoutalg.hooks)
for _cls in (TiledMMA, MMAAtom):
    register_scene(_cls, tiled_mma_scene)
    register_svg(_cls, tiled_mma_svg)
register_scene(TiledCopy, tiled_copy_scene)
register_svg(TiledCopy, tiled_copy_svg)
