"""Pictures that read at a glance: 32 lane colours told apart (CIEDE2000, measured here), warp bands
in every picture of more than one warp, TV layouts drawn as CuTe's print_latex_tv draws them
(checked against CuTe C++ itself), and SVGs small enough for a notebook.
"""

from __future__ import annotations

import itertools
import math
import re

import pytest

from layoutalg import Layout, LayoutError, viz
from layoutalg.interop import cutecpp
from layoutalg.nvidia.hopper import wgmma, wgmma_fragments

needs_cute = pytest.mark.skipif(cutecpp.available() is not None, reason=f"CuTe C++ unavailable: {cutecpp.available()}")


# --------------------------------------------------------------------------- colour science, written here
def lab(hex_colour: str) -> tuple[float, float, float]:
    """CIELAB (D65) of an sRGB colour."""
    r, g, b = (int(hex_colour[i:i + 2], 16) / 255 for i in (1, 3, 5))

    def lin(c: float) -> float:
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = lin(r), lin(g), lin(b)
    X = (0.4124564 * r + 0.3575761 * g + 0.1804375 * b) / 0.95047
    Y = 0.2126729 * r + 0.7151522 * g + 0.0721750 * b
    Z = (0.0193339 * r + 0.1191920 * g + 0.9503041 * b) / 1.08883

    def f(t: float) -> float:
        return t ** (1 / 3) if t > (6 / 29) ** 3 else t / (3 * (6 / 29) ** 2) + 4 / 29

    return 116 * f(Y) - 16, 500 * (f(X) - f(Y)), 200 * (f(Y) - f(Z))


def ciede2000(p: tuple, q: tuple) -> float:
    """CIEDE2000 colour difference (Sharma, Wu, Dalal 2005)."""
    L1, a1, b1 = p
    L2, a2, b2 = q
    Cb = (math.hypot(a1, b1) + math.hypot(a2, b2)) / 2
    G = 0.5 * (1 - math.sqrt(Cb**7 / (Cb**7 + 25**7)))
    a1p, a2p = (1 + G) * a1, (1 + G) * a2
    C1, C2 = math.hypot(a1p, b1), math.hypot(a2p, b2)
    h1 = math.degrees(math.atan2(b1, a1p)) % 360 if C1 else 0.0
    h2 = math.degrees(math.atan2(b2, a2p)) % 360 if C2 else 0.0
    dh = 0.0 if C1 * C2 == 0 else (h2 - h1 - 360 if h2 - h1 > 180 else h2 - h1 + 360 if h2 - h1 < -180 else h2 - h1)
    dH = 2 * math.sqrt(C1 * C2) * math.sin(math.radians(dh / 2))
    Lb, Cbp = (L1 + L2) / 2, (C1 + C2) / 2
    if C1 * C2 == 0:
        hb = h1 + h2
    elif abs(h1 - h2) <= 180:
        hb = (h1 + h2) / 2
    else:
        hb = (h1 + h2 + 360) / 2 if h1 + h2 < 360 else (h1 + h2 - 360) / 2
    T = (1 - 0.17 * math.cos(math.radians(hb - 30)) + 0.24 * math.cos(math.radians(2 * hb))
         + 0.32 * math.cos(math.radians(3 * hb + 6)) - 0.20 * math.cos(math.radians(4 * hb - 63)))
    Rc = 2 * math.sqrt(Cbp**7 / (Cbp**7 + 25**7))
    SL = 1 + 0.015 * (Lb - 50) ** 2 / math.sqrt(20 + (Lb - 50) ** 2)
    SC, SH = 1 + 0.045 * Cbp, 1 + 0.015 * Cbp * T
    RT = -math.sin(math.radians(60 * math.exp(-(((hb - 275) / 25) ** 2)))) * Rc
    dC = C2 - C1
    return math.sqrt(((L2 - L1) / SL) ** 2 + (dC / SC) ** 2 + (dH / SH) ** 2 + RT * (dC / SC) * (dH / SH))


def test_ciede2000_matches_sharmas_test_data():
    for p, q, want in [((50, 2.6772, -79.7751), (50, 0, -82.7485), 2.0425),
                       ((50, -1.3802, -84.2814), (50, 0, -82.7485), 1.0000),
                       ((50, 2.5, 0), (50, 0, -2.5), 4.3065),
                       ((60.2574, -34.0099, 36.2677), (60.4626, -34.1751, 39.4387), 1.2644),
                       ((22.7233, 20.0904, -46.6940), (23.0331, 14.9730, -42.5619), 2.0373)]:
        assert abs(ciede2000(p, q) - want) < 1e-4


def test_32_lane_colours_are_told_apart():
    labs = [lab(c) for c in viz.THREAD_COLORS]
    assert len(set(viz.THREAD_COLORS)) == 32
    d2000 = min(ciede2000(a, b) for a, b in itertools.combinations(labs, 2))
    d76 = min(math.dist(a, b) for a, b in itertools.combinations(labs, 2))
    assert d2000 >= 13.5 and d76 >= 15  # was 0.91 / 1.19 (T0 #84b4d6 vs T24 #80b1d3)
    # the four lanes of a quad and the eight of a group are the most distinct of all
    assert min(ciede2000(labs[a], labs[b]) for a, b in itertools.combinations(range(8), 2)) >= 25
    # dark labels stay readable: WCAG contrast with black >= 4.5
    for c in viz.THREAD_COLORS:
        r, g, b = (int(c[i:i + 2], 16) / 255 for i in (1, 3, 5))
        Y = sum(w * (x / 12.92 if x <= 0.04045 else ((x + 0.055) / 1.055) ** 2.4) for w, x in zip((0.2126, 0.7152, 0.0722), (r, g, b)))
        assert (Y + 0.05) / 0.05 >= 4.5, c


# --------------------------------------------------------------------------- warp bands
def _band_labels(scene) -> list[str]:
    return [t[2] for t in scene.texts if re.fullmatch(r"W\d+", t[2])]


def test_wgmma_fragment_has_warp_bands():
    F = wgmma_fragments.fragment("m64n16k16", "f16", "D")
    s = viz.fragment_scene(F)
    assert _band_labels(s) == ["W0", "W1", "W2", "W3"]  # rows 16w .. 16w+15 belong to warp w
    thick = [ln for ln in s.lines if ln[4] > 2]
    assert sorted(round(ln[1] - thick[0][1]) for ln in thick) == [0, 16 * 30, 32 * 30]  # between the warps' rows
    one_warp = viz.fragment_scene(wgmma_fragments.fragment("m64n16k16", "f16", "D"), rows=(0, 16))
    assert _band_labels(one_warp) == []


def test_tiled_mma_and_tv_pictures_have_warp_bands():
    from layoutalg.nvidia.atoms import mma_atom
    from layoutalg.tiled import make_tiled_mma

    s = viz.scene_of(make_tiled_mma(mma_atom("SM80_16x8x16_F32F16F16F32_TN"), (2, 1, 1)))
    assert {"W0", "W1"} <= set(_band_labels(s))
    F = wgmma_fragments.fragment("m64n8k16", "f16", "D")
    s = viz.tv_scene(F.layout, (64, 8))
    assert _band_labels(s) == ["W0", "W1", "W2", "W3"]


# --------------------------------------------------------------------------- TV layouts
def test_tv_layout_is_drawn_only_when_asked(tmp_path):
    F = wgmma_fragments.fragment("m64n8k16", "f16", "D")
    L = F.layout
    grid = viz.scene_of(L)  # no tv=: the offset grid of the rank-2 layout, never a guess
    assert all(len(c[6]) == 1 for c in grid.cells)
    tv = viz.scene_of(L, tv=(64, 8))
    cell = {c[0]: c[6] for c in tv.cells}
    for t in range(128):
        for v in range(F.num_values):
            r, c = F.coords(t, v)
            assert cell[f"cell-{r}-{c}"] == (f"T{t}", f"V{v}")
    path = viz.save(L, tmp_path / "tv.svg", tv=(64, 8))
    with open(path) as fh:
        text = fh.read()
    assert [c[5] for c in viz.svg_cells(text) if c[5] == ["T37", "V2"]]
    with pytest.raises(LayoutError, match="rank"):
        viz.tv_scene(Layout((4, 2, 2)), (4, 4))
    with pytest.raises(LayoutError, match="outside"):
        viz.tv_scene(Layout((4, 2), (1, 4)), (4, 1))
    with pytest.raises(LayoutError, match="ignored"):
        viz.scene_of(tv, tv=(4, 4))


def _cute_tv_cells(tv: Layout, M: int, N: int) -> str:
    """A snippet printing CuTe's print_latex_tv of tv ((t, v) -> m + M*n) on an M x N tile."""
    from layoutalg.interop.cute import to_cute_cpp

    return (f"auto tv = {to_cute_cpp(tv).expr}; auto ref = make_identity_layout(make_shape(Int<{M}>{{}}, Int<{N}>{{}}));"
            f" print_latex_tv(composition(ref, tv), make_shape(Int<{M}>{{}}, Int<{N}>{{}}));")


@needs_cute
def test_tv_scene_is_cutes_print_latex_tv():
    cases = [(wgmma_fragments.fragment("m64n8k16", "f16", "A").layout, 64, 16),
             (Layout(((4, 8), (2, 2)), ((16, 1), (8, 64))), 8, 16),
             (Layout((32, 4), (4, 1)), 16, 8),
             (Layout(((2, 16), 2), ((0, 2), 1)), 16, 2)]  # broadcast: CuTe keeps the first owner
    outs = cutecpp.run_snippets([_cute_tv_cells(L, M, N) for L, M, N in cases])
    for (L, M, N), out in zip(cases, outs):
        assert out, out
        want = {f"cell-{m}-{n}": (f"T{t}", f"V{v}")
                for m, n, t, v in re.findall(r"at \((\d+),(\d+)\) \{\\shortstack\{T(\d+) \\\\ V(\d+)\}\}", out)}
        got = {c[0]: c[6] for c in viz.tv_scene(L, (M, N), max_rows=M, max_cols=N).cells if c[6] != ("-",)}
        assert len(want) > 0 and got == want, (L, M, N)


# --------------------------------------------------------------------------- SVG weight
def test_svg_of_a_128x128_bf16_128b_swizzled_tile_is_under_200kb(tmp_path):
    T = wgmma.tile("K", 128, "bf16", (128, 128))
    path = viz.save(T, tmp_path / "tile.svg")
    with open(path, "rb") as fh:
        size = len(fh.read())
    assert size < viz.SVG_MAX_BYTES == 200_000, size
    with open(path) as fh:
        got = viz.svg_cells(fh.read())
    assert len(got) == 64 * 64  # the default window, every cell with its offset
    for _x, _y, _w, _h, _fill, labels in got[:50]:
        assert len(labels) == 1 and labels[0].isdigit()
    swz = viz.swizzle_scene(T, 2).to_svg()
    assert len(swz) < 200_000
    # shared styles: no per-cell attributes repeated (one path per fill colour, one text per label row)
    with open(path) as fh:
        svg = fh.read()
    assert svg.count("<path") == len(set(c[4] for c in got)) and svg.count("stroke-width") <= 2


# --------------------------------------------------------------------------- the command line
def _cli(*args):
    import os
    import subprocess
    import sys

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "layoutalg", *args], capture_output=True, text=True, env=env, timeout=120)


def test_cli_show_tv_and_a_printed_tensor(tmp_path):
    out = tmp_path / "tv.svg"
    r = _cli("show", "((4,8),(2,2)):((16,1),(8,64))", "--tv", "8,16", "-o", str(out))
    assert r.returncode == 0, r.stderr
    labels = {tuple(c[5]) for c in viz.svg_cells(out.read_text())}
    assert ("T0", "V0") in labels and ("T31", "V3") in labels
    assert _cli("show", "(4,2):(2,1)", "--tv", "8,1").returncode == 2  # --tv without -o would be ignored
    r = _cli("show", "Sw<3,4,3>_smem_ptr[16b](0x400) o (_8,_64):(_64,_1)", "--max", "4")
    assert r.returncode == 0 and "swizzle moves 16-byte units = 8 elements of 16b" in r.stdout


def test_whole_128x128_tile_in_the_lattice_form():
    """All 16384 cells: under 200 KB, and every cell (colour and label) reads back from the SVG alone."""
    T = wgmma.tile("K", 128, "bf16", (128, 128))
    scene = viz.layout_scene(T, max_rows=128, max_cols=128)
    svg = scene.to_svg()
    assert len(svg.encode()) < viz.SVG_MAX_BYTES and 'class="lattice"' in svg
    got = {(round(x, 1), round(y, 1)): (f, lab) for x, y, w, h, f, lab in viz.svg_cells(svg)}
    assert len(got) == 128 * 128
    for _cid, x, y, _w, _h, fill, labels, _font in scene.cells:
        assert got[(round(x, 1), round(y, 1))] == (fill, list(labels))
    # the labels are T(r, c) by the layout itself: spot-check against the swizzle formula
    assert int(scene.cells[1 * 128 + 0][6][0]) == int(T(1, 0)) == 72
    frag = viz.fragment_scene(wgmma_fragments.fragment("m64n256k16", "f16", "D"), max_cols=256)
    fs = frag.to_svg()
    back = {(round(x, 1), round(y, 1)): lab for x, y, w, h, f, lab in viz.svg_cells(fs)}
    assert all(back[(round(c[1], 1), round(c[2], 1))] == list(c[6]) for c in frag.cells)  # two label lines
