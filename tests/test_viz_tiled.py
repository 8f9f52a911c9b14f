"""Pictures of tiled MMAs and copies: labels against CuTe's own print_latex (recorded with the CuTe
cases), aggregation and zoom of large tiles, and a PNG compared with a stored reference image."""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET

import pytest

import cute_tiled_cases as C
from image_distance import distance
from layoutalg import LayoutError, viz
from layoutalg.nvidia.atoms import copy_atom, mma_atom
from layoutalg.tiled import make_tiled_copy, make_tiled_copy_A, make_tiled_mma
from layoutalg.viz.tiled import owners, tiled_copy_scene, tiled_mma_scene
from layoutalg import Layout
from layoutalg.tensor import underscore as _

SVG = "{http://www.w3.org/2000/svg}"
REF = os.path.join(os.path.dirname(__file__), "data", "reference_images", "tiled_mma_sm80_16x8x16_2x1_32x8x16.png")


def cells(scene) -> dict:
    """{cell id: [label lines]} of a scene, the labels read back from its SVG."""
    got = {(round(x, 1), round(y, 1)): (f, labels) for x, y, w, h, f, labels in viz.svg_cells(scene.to_svg())}
    out = {}
    for cid, x, y, _w, _h, fill, labels, _font in scene.cells:
        f, lab = got[(round(x, 1), round(y, 1))]
        assert f == fill and lab == list(labels), (cid, f, fill, lab, labels)
        out[cid] = lab
    return out


def _recorded_latex(key):
    if C.REC.data is None:
        pytest.skip("no CuTe recording")
    return C.REC.data["mma"][key]["records"]["latex_cells"]


@pytest.mark.parametrize("key", [c.key for c in C.MMA_CASES if c.latex])
def test_labels_are_cutes_print_latex(key):
    """Every node CuTe's print_latex(TiledMMA) draws is the cell layoutalg draws, same T and V."""
    case = next(c for c in C.MMA_CASES if c.key == key)
    mma = case.tiled_mma()
    M, N, K = mma.tile_size_mnk
    got = cells(tiled_mma_scene(mma))
    want = {}
    for x, y, t, v in _recorded_latex(key):  # CuTe: C at (m, n), A at (m, k-K-1), B at (k-K-1, n)
        if x >= 0 and y >= 0:
            cid = f"C-{x}-{y}"
        elif y < 0:
            cid = f"A-{x}-{y + K + 1}"
        else:
            cid = f"B-{x + K + 1}-{y}"
        want[cid] = [f"T{t}", f"V{v}"]
    assert len(want) == M * N + M * K + N * K
    assert got == want


def test_owners_by_hand():
    # m16n8k16 C: C[9][3] is lane 5's c3 (row groupID+8, column 2*tig+1); C[0][0] lane 0 c0
    t, v = owners(mma_atom("SM80_16x8x16_F32F16F16F32_TN").layout_c_tv, 16, 8)
    assert (t[9, 3], v[9, 3], t[0, 0], v[0, 0]) == (5, 3, 0, 0)
    with pytest.raises(LayoutError, match="outside"):
        owners(Layout((4, 2)), 2, 2)


def test_large_tile_is_aggregated_by_warp():
    mma = make_tiled_mma(mma_atom("SM80_16x8x16_F32F16F16F32_TN"), (2, 2, 1), (128, 128, 32))
    got = cells(tiled_mma_scene(mma))
    assert len(got) < 600  # instead of 128*128 + 2*128*32 cells
    # warps are laid column-major over (2 along M, 2 along N) and repeat every 32 rows / 16 columns:
    # rows 0-15 x cols 0-7 are warp 0's first atom (threads 0-31, values 0-3); cols 8-15 warp 2's
    assert got["C-blk-0-0"] == ["T0-31", "V0-3"]
    assert got["C-blk-0-8"] == ["T64-95", "V0-3"]
    assert got["C-blk-16-0"] == ["T32-63", "V0-3"]
    assert got["C-blk-32-0"] == ["T0-31", "V4-7"]  # the second atom of warp 0 along M


def test_window_zooms_into_cells():
    mma = make_tiled_mma(mma_atom("SM80_16x8x16_F32F16F16F32_TN"), (2, 2, 1), (128, 128, 32))
    got = cells(tiled_mma_scene(mma, window=((16, 24), (8, 16))))
    assert {k for k in got if k.startswith("C")} == {f"C-{m}-{n}" for m in range(16, 24) for n in range(8, 16)}
    # C[16][8] is warp 3's lane 0 c0: thread 96, value 0
    assert got["C-16-8"] == ["T96", "V0"]
    assert sum(k.startswith("A") for k in got) == 8 * 32 and sum(k.startswith("B") for k in got) == 32 * 8
    with pytest.raises(LayoutError, match="window"):
        tiled_mma_scene(mma, window=((0, 200), (0, 8)))
    with pytest.raises(LayoutError, match="mode"):
        tiled_mma_scene(mma, mode="pixels")


def test_copy_picture():
    mma = make_tiled_mma(mma_atom("SM80_16x8x16_F32F16F16F32_TN"), (2, 2, 1), (32, 32, 16))
    tc = make_tiled_copy_A(copy_atom("SM75_U32x4_LDSM_N", "f16"), mma)
    got = cells(tiled_copy_scene(tc))
    # ldmatrix source: lane 1 supplies the address of row 1 of matrix 0: A[1][0..7], values 0..7
    assert [got[f"S-1-{k}"] for k in range(8)] == [["T1", f"V{k}"] for k in range(8)]
    # destination: lane 1 receives row 0, columns 2 and 3 (threadID_in_group 1)
    assert got["D-0-2"] == ["T1", "V0"] and got["D-0-3"] == ["T1", "V1"]
    big = make_tiled_copy(copy_atom("UniversalCopy<uint128_t>", "f16"), Layout((16, 8), (8, 1)), Layout((1, 8)))
    assert len(cells(viz.scene_of(big, mode="blocks"))) < 100
    with pytest.raises(LayoutError, match="not a TiledCopy"):
        tiled_copy_scene(mma)


def test_save_svg_and_png(tmp_path):
    mma = make_tiled_mma(mma_atom("SM90_64x64x16_F32F16F16_SS"), (2, 1, 1))
    svg = viz.save(mma, tmp_path / "m.svg")
    ET.parse(svg)
    pytest.importorskip("matplotlib")
    png = viz.save(mma, tmp_path / "m.png", dpi=30)
    with open(png, "rb") as fh:
        assert fh.read(8) == b"\x89PNG\r\n\x1a\n"
    assert mma._repr_svg_().startswith("<svg")


def test_png_matches_reference_image():
    pytest.importorskip("matplotlib")
    from matplotlib.image import imread

    ref = imread(REF)
    mma = make_tiled_mma(mma_atom("SM80_16x8x16_F32F16F16F32_TN"), (2, 1, 1))
    got = viz.render_png(mma, dpi=24)
    assert got.shape[:2] == ref.shape[:2]
    assert distance(got, ref) < 0.02
    # the metric can fail: the same tile with M permuted (rows interleaved between the two warps)
    other = viz.render_png(make_tiled_mma(mma.atom, (2, 1, 1), (Layout((16, 2), (2, 1)), _, _)), dpi=24)
    assert other.shape[:2] == ref.shape[:2] and distance(other, ref) > 0.02
