"""Pictures of tensor memory: TMEM lanes (rows) x 32-bit columns, who reads which cell.

Three pictures, one drawing (:func:`tmem_scene`):

- a ``tcgen05.ld`` / ``tcgen05.st`` atom (:class:`~layoutalg.nvidia.blackwell.tmem_copy.TmemCopyOp` or its
  CuTe name) issued by ``warps`` warps, warp ``w`` at lane ``32 w`` (its lane quarter): each cell
  is labelled with the thread ``T<32 w + lane id>`` and value ``V<v>`` that reads it (the atom's
  :meth:`~layoutalg.nvidia.blackwell.tmem_copy.TmemCopyOp.fragment`);
- the accumulator of a UMMA atom (or any (M, N) -> TMEM address layout), one CTA's TMEM: each cell
  is labelled with the element ``m<m> n<n>`` of D it holds (per CTA: a ``2x1SM`` atom's CTA 1
  holds rows ``M/2 ..`` in the same cells);
- ``operand="A"``: the TMEM A of a ``_TS`` atom (cell = ``m<m> k<k>``, two 16-bit values a column);
  ``operand="SFA"``/``"SFB"``: a block-scaled atom's scale factors, ``operand="E"``: a sparse atom's
  metadata (cell = ``m<mn> k<k>`` of the fragment);
- ``load=`` an ld atom over the accumulator, tiled as CuTe's ``make_tmem_copy`` does (warp ``w``
  on lane quarter ``w``): each cell is labelled with the thread and value that receive it after
  the load, i.e. :func:`~layoutalg.nvidia.blackwell.tmem_accum.epilogue_tv` read through the accumulator.

The four lane quarters are drawn as bands (warp ``w`` may touch only lanes ``32 w .. 32 w + 31``)
and cells are coloured by thread (lane hue, darker per warp, as in :mod:`layoutalg.viz.tiled`);
beyond ``max_cells`` cells the grid is aggregated into blocks coloured by the warp of their first
thread (or, for a bare accumulator, by the lane quarter), and ``window=((l0, l1), (c0, c1))``
zooms into lanes ``l0..l1-1``, columns ``c0..c1-1`` cell by cell.

By hand, ``.16x64b.x1``: thread 5 reads lane ``5 // 4 + 8 * (5 % 2) = 9``, column ``(5 // 2) % 2 = 0``::

    >>> s = tmem_scene("SM100_TMEM_LOAD_16dp64b1x", warps=1)
    >>> next(c[6] for c in s.cells if c[0] == "TMEM-9-0")
    ('T5', 'V0')

and the M = 64 accumulator of a 1SM atom fills lanes 0..15 of each quarter (lane 37 holds row 21)::

    >>> from layoutalg.nvidia.blackwell.umma import umma_atom
    >>> a = umma_atom("SM100_MMA_F16BF16_SS<bf16,bf16,float,64,16,K,K>")
    >>> s = tmem_scene(a, window=((32, 40), (0, 4)))
    >>> next(c[6] for c in s.cells if c[0] == "TMEM-37-2")
    ('m21', 'n2')

These are pictures of layoutalg's layouts, which are checked against CuTe C++ 4.2 and the PTX ISA
(see :mod:`layoutalg.nvidia.blackwell.tmem_copy`, :mod:`layoutalg.nvidia.blackwell.tmem_accum`); none of it ran on sm_100
hardware.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import LayoutError
from ..hooks import register_svg
from ..layout import Layout
from .output import register_scene
from .scene import Scene, thread_color
from .tiled import WARP_COLORS

__all__ = ["tmem_grid", "tmem_scene", "tmem_svg", "TmemGrid"]

LANES = 128
_TITLE, _NOTE = 15.0, 11.0


class TmemGrid:
    """What a TMEM picture shows: per cell (lane, 32-bit column) ``thr``/``val`` (first owner in
    thread-major order, -1: nobody) or ``m``/``n`` (the D element held, -1: none), the lanes and
    columns drawn, a title and notes."""

    def __init__(self, title: str, notes: list, lanes: int, cols: int, *, thr: Any = None, val: Any = None,
                 m: Any = None, n: Any = None, second: str = "n"):
        self.title, self.notes, self.lanes, self.cols = title, notes, lanes, cols
        self.thr, self.val, self.m, self.n = thr, val, m, n
        self.second = second  # the letter of the second coordinate: n (D) or k (the TMEM A of a _TS atom)

    @property
    def by_thread(self) -> bool:
        return self.thr is not None


def _first_owner(lane: np.ndarray, col: np.ndarray, lanes: int, cols: int) -> tuple[np.ndarray, np.ndarray]:
    """Grids of the first index (in the given order) that lands on each cell, and that index's position."""
    cell = lane * cols + col
    uniq, first = np.unique(cell, return_index=True)
    out = np.full(lanes * cols, -1, dtype=np.int64)
    out[uniq] = first
    return out.reshape(lanes, cols), uniq


def _cells_of(addr: np.ndarray, bits: int, what: str) -> tuple[np.ndarray, np.ndarray]:
    """TMEM addresses in units of ``bits``-bit values -> (lane, 32-bit column)."""
    from ..nvidia.blackwell.tmem_accum import dp

    lane_stride = dp(bits)
    lane = addr // lane_stride
    col = ((addr % lane_stride) * bits) // 32
    if addr.size and (lane.min() < 0 or lane.max() >= LANES or col.max() >= 512):
        raise LayoutError(f"tmem picture: {what} reaches lane {int(lane.max())}, column {int(col.max())} outside "
                          "the 128 lanes x 512 columns of TMEM")
    return lane, col


def _tv_grid(tv_addr: np.ndarray, T: int, V: int, bits: int, what: str) -> tuple[np.ndarray, np.ndarray, int]:
    """(thr, val, columns) grids from a (T, V) table of TMEM addresses (t-major order)."""
    lane, col = _cells_of(tv_addr.reshape(-1), bits, what)
    cols = int(col.max()) + 1 if col.size else 1
    first, _ = _first_owner(lane, col, LANES, cols)
    thr = np.where(first >= 0, first // V, -1)
    val = np.where(first >= 0, first % V, -1)
    return thr, val, cols


def _op_grid(op: Any, warps: int) -> TmemGrid:
    if op.kind == "cp":
        raise LayoutError(f"tmem picture: {op.name} is a tcgen05.cp (one issuing thread, from shared memory); "
                          "draw tcgen05.ld / tcgen05.st atoms")
    if warps not in (1, 2, 3, 4):
        raise LayoutError(f"tmem picture: warps={warps!r}: a tcgen05.ld/st is issued by 1 to 4 warps of a warpgroup, "
                          "warp w on lane quarter w")
    f = op.fragment()
    T, V = 32, int(f[1].size())
    tab = np.asarray(f.table(), dtype=np.int64).reshape(V, T).T  # [t, v]
    full = np.concatenate([tab + (32 * w << 16) for w in range(warps)])  # thread 32 w + t at lane 32 w
    thr, val, cols = _tv_grid(full, 32 * warps, V, 32, op.name)
    lanes = 32 * (warps - 1) + op.lanes  # the last warp's block ends the picture
    notes = [f"{op.ptx}: {op.lanes} lanes x {op.columns} columns per warp, {op.registers} registers per thread"
             + (" (.pack::16b: value 2r+h is half h of register r)" if op.pack16 else ""),
             f"{warps} warp{'s' if warps > 1 else ''}, warp w at lane 32w (its quarter); cell = thread T, value V "
             f"that {'reads' if op.kind == 'ld' else 'writes'} it"]
    return TmemGrid(f"TMEM {op.name}", notes, lanes, cols, thr=thr[:lanes], val=val[:lanes])


def _accumulator(obj: Any, tile: Any, value_type: Any) -> tuple[Layout, Any, str, str]:
    """(accumulator (M, N) -> TMEM address, its value type, title, note) of a UMMA atom or a Layout."""
    from ..nvidia.blackwell.tmem_accum import umma_accumulator

    from ..nvidia.blackwell.umma import UMMAAtom

    if isinstance(obj, UMMAAtom):
        if value_type is not None:
            raise LayoutError(f"tmem picture: value_type= is for an accumulator layout; {obj.name} fixes its "
                              f"accumulator type ({obj.c_type}) (leave value_type out)")
        M, N = (obj.M, obj.N) if tile is None else tuple(int(x) for x in tile)
        full = umma_accumulator(obj, (M, N))
        acc = full[0]
        if int(full.size()) != int(acc.size()):
            raise LayoutError(f"tmem picture: tile {M}x{N} is several {obj.M}x{obj.N} MMAs of {obj.name}; draw one "
                              "MMA's accumulator (leave tile out or give the atom's M x N)")
        per_cta = f"per CTA ({obj.M // 2} of {obj.M} rows; CTA 1 holds rows {obj.M // 2}.. in the same cells)" \
            if obj.cta_group == 2 else "one CTA"
        return acc, obj.c_type, f"TMEM accumulator of {obj.name}", f"D {M} x {N} ({obj.c_type}), {per_cta}: {acc}"
    if isinstance(obj, Layout):
        if tile is not None:
            raise LayoutError("tmem picture: tile= is for a UMMA atom; an accumulator layout carries its own shape")
        if len(obj) != 2:
            raise LayoutError(f"tmem picture: accumulator {obj} is not an (M, N) -> TMEM address layout")
        vt = "f32" if value_type is None else value_type
        return obj, vt, "TMEM accumulator", f"D (M, N) -> TMEM address {obj} (in {vt} units)"
    raise LayoutError(f"tmem picture: {obj!r} is not a TMEM copy atom, a UMMA atom or an (M, N) -> TMEM layout")


def _tmem_a_grid(obj: Any, load: Any, tile: Any, value_type: Any, warps: Any) -> TmemGrid:
    """The TMEM A of a ``_TS`` atom (CuTe's ``make_fragment_A``): cell = element (m, k) of A it holds."""
    from ..nvidia.atoms import value_bits
    from ..nvidia.blackwell.tmem_accum import umma_tmem_a
    from ..nvidia.blackwell.umma import UMMAAtom, umma_atom

    if isinstance(obj, str):
        obj = umma_atom(obj)
    if not isinstance(obj, UMMAAtom):
        raise LayoutError(f"tmem picture: operand='A' is the TMEM A of a UMMA _TS atom, not {obj!r}")
    for name, v in (("load", load), ("value_type", value_type), ("warps", warps)):
        if v is not None:
            raise LayoutError(f"tmem picture: {name}= does nothing with operand='A' (the TMEM A of {obj.name} is "
                              "written by tcgen05.cp / tcgen05.st and read by the MMA)")
    M, K = (obj.M, obj.K) if tile is None else tuple(int(x) for x in tile)
    A = umma_tmem_a(obj, (M, K))  # ((M_MMA, K_MMA), 1, k-blocks)
    Mm, Km = int(A[0][0].size()), int(A[0][1].size())
    if int(A.size()) != Mm * K or K % Km:
        raise LayoutError(f"tmem picture: tile {M}x{K} is several {obj.M}-row MMAs of {obj.name}; give M = {obj.M}")
    bits = value_bits(obj.a_type)
    addr = np.asarray(A.table(), dtype=np.int64)  # colex over ((m, k0), 1, j): k = k0 + Km j
    lane, col = _cells_of(addr, bits, str(A))
    cols = int(col.max()) + 1
    first, _ = _first_owner(lane, col, LANES, cols)
    m = np.where(first >= 0, first % Mm, -1)
    k = np.where(first >= 0, (first // Mm) % Km + Km * (first // (Mm * Km)), -1)
    notes = [f"A {M} x {K} ({obj.a_type}, {32 // bits if bits < 32 else 1} per 32-bit column), {Mm} x {Km} per MMA "
             f"and CTA: {A}",
             "cell = coordinate m, k of the CTA's A partition (CuTe's make_fragment_A) it holds, the first of its "
             "values; bands = lane quarters"]
    return TmemGrid(f"TMEM A of {obj.name}", notes, LANES, cols, m=m, n=k, second="k")


def _tmem_frag_grid(obj: Any, operand: str, load: Any, tile: Any, value_type: Any, warps: Any) -> TmemGrid:
    """The scale factors (``SFA``/``SFB``) of a block-scaled atom or the metadata (``E``) of a sparse one:
    cell = coordinate (mn, k) of the fragment's first MMA mode it holds (k counts the fragment's K mode,
    scale-factor vectors for SF, across its k-blocks)."""
    from ..nvidia.blackwell.tmem_accum import umma_tmem_e, umma_tmem_sf
    from ..nvidia.blackwell.umma import UMMAAtom, umma_atom

    at = umma_atom(obj) if isinstance(obj, str) else obj
    if not isinstance(at, UMMAAtom):
        raise LayoutError(f"tmem picture: operand={operand!r} is drawn for a UMMA atom, not {obj!r}")
    for name, v in (("load", load), ("value_type", value_type), ("warps", warps)):
        if v is not None:
            raise LayoutError(f"tmem picture: {name}= does nothing with operand={operand!r}")
    if operand == "E":
        F = umma_tmem_e(at, tile)
        bits, what = 1, f"metadata of the sparse A ({at.a_type}; CuTe's bit-granular TMEM addresses)"
    else:
        F = umma_tmem_sf(at, operand[-1], tile if tile is not None else (at.M, at.N, at.K * 4))
        bits, what = 8, f"scale factors {operand} ({at.sf_type}, vector {at.vector_size})"
    mode0 = F[0]
    Mm, Km = int(mode0[0].size()), int(mode0[1].size())
    addr = np.asarray(F.table(), dtype=np.int64)
    if bits == 1:  # lane stride TMEM::DP_b = 1 << 21 bits
        lane, col = addr >> 21, (addr & ((1 << 21) - 1)) // 32
    else:
        lane, col = _cells_of(addr, bits, str(F))
    cols = int(col.max()) + 1
    first, _ = _first_owner(lane, col, LANES, cols)
    size0 = Mm * Km
    m = np.where(first >= 0, first % Mm, -1)
    k = np.where(first >= 0, (first % size0) // Mm + Km * (first // size0), -1)
    notes = [f"{what}: {F}",
             "cell = coordinate mn, k of the fragment it holds (the first of its values); bands = lane quarters"]
    return TmemGrid(f"TMEM {operand} of {at.name}", notes, LANES, cols, m=m, n=k, second="k")


def tmem_grid(obj: Any, *, load: Any = None, tile: Any = None, value_type: Any = None, warps: Any = None,
              operand: str = "C") -> TmemGrid:
    """The cells of the picture :func:`tmem_scene` draws (see the module docstring for ``obj``).

    ``warps`` (1-4, default 4) is for a bare ld/st atom; ``tile`` (the UMMA atom's M x N by default)
    for a UMMA atom; ``value_type`` (the element type its addresses count, f32 by default) for an
    accumulator layout; ``load`` (an ld atom name) for either. ``operand="A"`` draws the TMEM A of a
    ``_TS`` atom instead (cell = ``m, k``; ``tile`` = M x K, several k-blocks allowed). An option the
    picture would not use is an error.

    >>> g = tmem_grid("SM100_TMEM_LOAD_32dp32b2x")
    >>> g.lanes, g.cols, int(g.thr[70, 1]), int(g.val[70, 1])
    (128, 2, 70, 1)
    """
    from ..nvidia.blackwell.tmem_accum import epilogue_tv, make_tmem_copy
    from ..nvidia.blackwell.tmem_copy import TmemCopyOp, tmem_copy_op

    if operand not in ("C", "D", "A", "SFA", "SFB", "E"):
        raise LayoutError(f"tmem picture: operand {operand!r} is C (D, the accumulator), A (a _TS atom's TMEM A), "
                          "SFA / SFB (a block-scaled atom's scale factors) or E (a sparse atom's metadata)")
    if operand == "A":
        return _tmem_a_grid(obj, load, tile, value_type, warps)
    if operand in ("SFA", "SFB", "E"):
        return _tmem_frag_grid(obj, operand, load, tile, value_type, warps)
    if isinstance(obj, (str, TmemCopyOp)):
        op = tmem_copy_op(obj) if isinstance(obj, str) else obj
        for name, v in (("load", load), ("tile", tile), ("value_type", value_type)):
            if v is not None:
                raise LayoutError(f"tmem picture: {name}= is for an accumulator; {op.name} is drawn by itself "
                                  "(give a UMMA atom or an accumulator layout with load=)")
        return _op_grid(op, 4 if warps is None else warps)
    if warps is not None:
        raise LayoutError("tmem picture: warps= is for a bare tcgen05.ld/st atom; make_tmem_copy over an accumulator "
                          "always uses four warps, warp w on lane quarter w")
    from ..nvidia.atoms import value_bits

    acc, vt, title, note = _accumulator(obj, tile, value_type)
    bits = value_bits(vt)
    M, N = int(acc[0].size()), int(acc[1].size())
    if load is None:
        addr = np.asarray(acc.table(), dtype=np.int64)  # index m + M n
        lane, col = _cells_of(addr, bits, str(acc))
        cols = int(col.max()) + 1
        first, _ = _first_owner(lane, col, LANES, cols)
        m = np.where(first >= 0, first % M, -1)
        n = np.where(first >= 0, first // M, -1)
        notes = [note, "cell = element m, n of D it holds; bands = lane quarters (warp w reads quarter w)"]
        return TmemGrid(title, notes, LANES, cols, m=m, n=n)
    tc = make_tmem_copy(load, acc, vt)
    tv = epilogue_tv(tc, (M, N))
    T, V = int(tv[0].size()), int(tv[1].size())
    idx = np.asarray(tv.table(), dtype=np.int64).reshape(V, T).T
    addr = np.asarray(acc.table(), dtype=np.int64)[idx]
    thr, val, cols = _tv_grid(addr, T, V, bits, str(acc))
    op = tmem_copy_op(load)
    notes = [note, f"make_tmem_copy({load}): 4 warps x {op.ptx}, TV {tc.layout_tv}",
             "cell = thread T, value V that receives it (epilogue_tv through the accumulator); bands = lane quarters"]
    return TmemGrid(title, notes, LANES, cols, thr=thr, val=val)


def _range(prefix: str, xs: np.ndarray) -> str:
    xs = np.unique(xs[xs >= 0])
    if xs.size == 0:
        return "-"
    lo, hi = int(xs[0]), int(xs[-1])
    if lo == hi:
        return f"{prefix}{lo}"
    return f"{prefix}{lo}-{hi}" if xs.size == hi - lo + 1 else f"{prefix}{lo}..{hi}({xs.size})"


def _span(n: int, w: Any, what: str) -> tuple[int, int]:
    if w is None:
        return 0, n
    try:
        lo, hi = (int(x) for x in w)
    except (TypeError, ValueError):
        raise LayoutError(f"tmem picture: window {what}={w!r} is not a pair (lo, hi)") from None
    if not 0 <= lo < hi <= n:
        raise LayoutError(f"tmem picture: window {what}={w!r} is not a range with 0 <= lo < hi <= {n}")
    return lo, hi


def _header(scene: Scene, title: str, notes: list) -> float:
    scene.title = title
    scene.text(8, 8 + _TITLE / 2, title, _TITLE, "start", "bold")
    y = 8 + _TITLE + 6
    for note in notes:
        scene.text(8, y + _NOTE / 2, note, _NOTE, "start")
        y += _NOTE + 4
    scene.width = max(scene.width, max(0.66 * s * len(t) for s, t in [(_TITLE, title)] + [(_NOTE, x) for x in notes]) + 16)
    return y + 4


def tmem_scene(obj: Any, *, load: Any = None, tile: Any = None, value_type: Any = None, warps: Any = None,
               operand: str = "C", mode: str = "auto", window: Any = None, max_cells: int = 256,
               title: str | None = None) -> Scene:
    """tmem_scene(obj): TMEM lanes x columns, the lane quarters as bands (see the module docstring).

    ``mode``: ``"cells"`` (one cell per lane and column), ``"blocks"`` (aggregated) or ``"auto"``
    (cells up to ``max_cells`` cells, or whenever ``window`` is given).
    """
    g = tmem_grid(obj, load=load, tile=tile, value_type=value_type, warps=warps, operand=operand)
    l0, l1 = _span(g.lanes, None if window is None else window[0], "lanes")
    c0, c1 = _span(g.cols, None if window is None else window[1], "columns")
    if mode not in ("auto", "cells", "blocks"):
        raise LayoutError(f"tmem picture: mode {mode!r} is not 'auto', 'cells' or 'blocks'")
    if mode == "auto":
        mode = "cells" if window is not None or (l1 - l0) * (c1 - c0) <= max_cells else "blocks"
    if mode == "blocks" and window is not None:
        raise LayoutError("tmem picture: window= zooms in cell by cell; mode='blocks' would ignore it")
    scene = Scene()
    notes = list(g.notes)
    if window is not None:
        notes.append(f"showing lanes {l0}-{l1 - 1}, columns {c0}-{c1 - 1}")
    if mode == "cells":
        ew, eh, font = 34.0, 24.0, 8.5
        br, bc = 1, 1
    else:
        br = 8 if g.lanes > 32 else 4
        bc = 1
        while (c1 - c0) // bc > 16:
            bc *= 2
        eh = max(2.0, min(6.0, 560.0 / (l1 - l0)))
        ew = max(1.0, min(48.0 / bc, 1000.0 / (c1 - c0)))
        font = 7.5
        notes.append(f"aggregated: blocks of {br} lanes x {bc} columns, coloured by the "
                     f"{'warp of their first thread' if g.by_thread else 'lane quarter'}")
    y0 = _header(scene, title or g.title, notes) + 18
    x0 = 78.0
    for i in range(l0, l1, br):
        for j in range(c0, c1, bc):
            x, y = x0 + (j - c0) * ew, y0 + (i - l0) * eh
            h, w = min(br, l1 - i) * eh, min(bc, c1 - j) * ew
            if g.by_thread:
                t, v = g.thr[i:i + br, j:j + bc], g.val[i:i + br, j:j + bc]
                if mode == "cells":
                    tt = int(t[0, 0])
                    fill = thread_color(tt) if tt >= 0 else "#ffffff"
                    labels: tuple = (f"T{tt}", f"V{int(v[0, 0])}") if tt >= 0 else ()
                else:
                    first = int(t[t >= 0].min()) if (t >= 0).any() else -1
                    fill = WARP_COLORS[(first // 32) % len(WARP_COLORS)] if first >= 0 else "#ffffff"
                    labels = (_range("T", t), _range("V", v)) if first >= 0 and h >= 2.4 * font and w >= 5 * font else ()
            else:
                m, n = g.m[i:i + br, j:j + bc], g.n[i:i + br, j:j + bc]
                held = (m >= 0).any()
                fill = WARP_COLORS[(i // 32) % len(WARP_COLORS)] if held else "#ffffff"
                if mode == "cells":
                    labels = (f"m{int(m[0, 0])}", f"{g.second}{int(n[0, 0])}") if m[0, 0] >= 0 else ()
                else:
                    labels = (_range("m", m), _range(g.second, n)) if held and h >= 2.4 * font and w >= 5 * font else ()
            cid = f"TMEM-{i}-{j}" if mode == "cells" else f"TMEM-blk-{i}-{j}"
            scene.cell(cid, x, y, w, h, fill, labels, font)
    # lane quarters: a band per warp, its boundary drawn thick
    right = x0 + (c1 - c0) * ew
    for q in range(4):
        a, b = max(l0, 32 * q), min(l1, 32 * q + 32)
        if a >= b:
            continue
        ya, yb = y0 + (a - l0) * eh, y0 + (b - l0) * eh
        scene.line(x0 - 70, ya, right, ya, 1.6 if a == 32 * q else 0.6, "#000000")
        scene.text(x0 - 38, (ya + yb) / 2 - 6, f"warp {q}", 9, "middle", "bold")
        scene.text(x0 - 38, (ya + yb) / 2 + 6, f"lanes {a}-{b - 1}", 8, "middle")
    yend = y0 + (l1 - l0) * eh
    scene.line(x0 - 70, yend, right, yend, 1.6, "#000000")
    step = max(1, bc) if mode == "blocks" else 1
    every = step * max(1, int(np.ceil(16 / max(ew * step, 1e-9))))
    for j in range(c0, c1, every):
        scene.text(x0 + (j - c0 + 0.5 * step) * ew, y0 - 8, str(j), 7.5, "middle")
    scene.text(x0, y0 - 20, "TMEM columns (32-bit) ->", 9, "start", "bold")
    scene.height = yend + 12
    scene.width = max(scene.width, right + 12)
    return scene


def tmem_svg(obj: Any, **kwargs: Any) -> str:
    """tmem_svg(obj) = tmem_scene(obj).to_svg()."""

    return tmem_scene(obj, **kwargs).to_svg()


# a TMEM copy atom's picture: viz.save / scene_of, and notebooks' _repr_svg_ (layoutalg.hooks)
# registered by name: importing this module (import layoutalg does) must not import the NVIDIA catalog
register_scene("layoutalg.nvidia.blackwell.tmem_copy.TmemCopyOp", tmem_scene)
register_svg("layoutalg.nvidia.blackwell.tmem_copy.TmemCopyOp", tmem_svg)
