"""TMEM pictures (layoutalg.viz.tmem): the cells against the PTX ISA's tcgen05.ld shape formulas and
data-path layouts written out here by hand, and against CuTe C++ 4.2's make_tmem_copy partitions
(recorded in tests/data/cute/tmem_accum.json: CuTe's accumulator and each thread's partition_D);
sizes, zoom, registration and refused options. None of it ran on sm_100 hardware."""

from __future__ import annotations

import numpy as np
import pytest

import cute_tmem_accum_cases as C
from layoutalg import Layout, LayoutError, parse, viz
from layoutalg.hooks import svg_of
from layoutalg.nvidia.blackwell.tmem_copy import SHAPES, ld_name, tmem_copy_op
from layoutalg.nvidia.blackwell.umma import umma_atom
from layoutalg.viz.tmem import tmem_grid, tmem_scene, tmem_svg

SVG = "{http://www.w3.org/2000/svg}"
REC = C.REC.data


# the PTX ISA's tcgen05 data-movement shapes (thread t = %laneid, register r), written independently
def isa(shape: str, t: int, r: int, num: int) -> tuple[int, int]:
    if shape == "32x32b":
        return t, r
    if shape == "16x64b":
        return t // 4 + 8 * (t % 2), (t // 2) % 2 + 2 * r
    if shape == "16x128b":
        return t // 4 + 8 * (r % 2), t % 4 + 4 * (r // 2)
    if shape == "16x256b":
        return t // 4 + 8 * ((r // 2) % 2), r % 2 + 2 * (t % 4) + 8 * (r // 4)
    return t % 16, r + num * (t // 16)  # 16x32bx2 with CuTe's immHalfSplitoff = num


@pytest.mark.parametrize("shape", list(SHAPES))
@pytest.mark.parametrize("num", [1, 4])
@pytest.mark.parametrize("warps", [1, 4])
def test_atom_cells_are_the_isa_formula(shape, num, warps):
    op = tmem_copy_op(ld_name(shape, num))
    g = tmem_grid(op.name, warps=warps)
    assert g.lanes == 32 * (warps - 1) + op.lanes and g.cols == op.columns
    seen = 0
    for w in range(warps):
        for t in range(32):
            for r in range(op.registers):
                lane, col = isa(shape, t, r, num)
                assert (g.thr[32 * w + lane, col], g.val[32 * w + lane, col]) == (32 * w + t, r)
                seen += 1
    assert seen == int((g.thr >= 0).sum())  # nothing else is drawn as read


def test_packed_atom_halves():
    # .pack::16b: value 2r + h is half h of register r, at column 2 * column(t, r) + h
    g = tmem_grid("SM100_TMEM_LOAD_16dp256b1x_16b", warps=1)
    for t in range(32):
        for r in range(4):
            lane, col = isa("16x256b", t, r, 1)
            for h in range(2):
                assert (g.thr[lane, 2 * col + h], g.val[lane, 2 * col + h]) == (t, 2 * r + h)


@pytest.mark.parametrize("name, path", [
    ("SM100_MMA_F16BF16_SS<bf16,bf16,float,128,64,K,K>", lambda m, n: (m, n)),
    ("SM100_MMA_F16BF16_SS<bf16,bf16,float,64,64,K,K>", lambda m, n: (m % 16 + 32 * (m // 16), n)),
    ("SM100_MMA_F16BF16_2x1SM_SS<bf16,bf16,float,256,64,K,K>", lambda m, n: (m, n)),
    ("SM100_MMA_F16BF16_2x1SM_SS<bf16,bf16,float,128,64,K,K>", lambda m, n: (m + 64 * (n // 32), n % 32)),
    ("SM100_MMA_F16BF16_SS<f16,f16,f16,128,32,K,K>", lambda m, n: (m, n)),
])
def test_accumulator_cells_are_the_isa_data_path(name, path):
    """The ISA's data-path layouts (M = 128 / 64 per CTA, cta_group::1 / ::2) cell by cell."""
    a = umma_atom(name)
    g = tmem_grid(a)
    M = a.M // a.cta_group
    want = np.full((128, g.cols), -1)
    for m in range(M):
        for n in range(a.N):
            lane, col = path(m, n)
            assert (g.m[lane, col], g.n[lane, col]) == (m, n)
            want[lane, col] = 0
    assert ((g.m >= 0) == (want == 0)).all()


@pytest.mark.parametrize("name, tile, path", [
    ("SM100_MMA_F16BF16_TS<bf16,bf16,float,128,64,K,K>", (128, 64), lambda m, k: (m, k // 2)),  # 2 bf16 a column
    ("SM100_MMA_F16BF16_TS<bf16,bf16,float,64,64,K,K>", (64, 32), lambda m, k: (m % 16 + 32 * (m // 16), k // 2)),
    ("SM100_MMA_TF32_TS<tf32,tf32,float,128,64,K,K>", (128, 16), lambda m, k: (m, k)),
])
def test_ts_a_cells_are_the_isa_data_path(name, tile, path):
    """The TMEM A of _TS atoms (1SM, M = 128 and 64): A[m, k] in the lanes of D's data path, packed 32 bits a column."""
    g = tmem_grid(umma_atom(name), operand="A", tile=tile)
    M, K = tile
    for m in range(M):
        for k in range(0, K, 32 // (16 if "bf16" in name else 32)):
            lane, col = path(m, k)
            assert (g.m[lane, col], g.n[lane, col]) == (m, k), (m, k)
    assert int((g.m >= 0).sum()) == M * K * (16 if "bf16" in name else 32) // 32
    with pytest.raises(LayoutError, match="load= does nothing with operand='A'"):
        tmem_grid(umma_atom(name), operand="A", load="SM100_TMEM_LOAD_32dp32b1x")
    with pytest.raises(LayoutError, match="operand='A' is the TMEM A of a UMMA _TS atom"):
        tmem_grid(Layout((128, 4), (65536, 1)), operand="A")


CASES = [c for c in C.cases() if not c[3] and (REC is None or "refused" not in REC["cases"][C.key(c)])]


@C.REC.needs
@pytest.mark.parametrize("case", CASES, ids=C.key)
def test_epilogue_picture_is_cutes_partition(case):
    """Over CuTe's own accumulator layout (accm), thread t's cells are CuTe's partition_D of t read through accm."""
    name, _tile, op, _ = case
    rec = REC["cases"][C.key(case)]
    accm = parse(C.norm(rec["accm"]))
    c_type = umma_atom(name).c_type
    bits = 16 if c_type in ("f16", "bf16") else 32
    g = tmem_grid(accm, load=op, value_type=c_type)
    lane_stride = 1 << (16 + (32 // bits).bit_length() - 1)
    for t in C.THREADS:
        lay, off = C.norm(rec[f"D{t}"]).split(" @")
        D = parse(lay)
        addrs = {int(accm(int(off) + int(D(i)))) for i in range(int(D.size()))}
        want = {(a // lane_stride, ((a % lane_stride) * bits) // 32) for a in addrs}
        got = {(int(i), int(j)) for i, j in zip(*np.nonzero(g.thr == t))}
        assert got == want, t
        assert all(32 * (t // 32) <= lane < 32 * (t // 32) + 32 for lane, _ in got)  # its own lane quarter


def cells(svg: str) -> dict:
    """The picture's cells read back from the SVG alone (viz.svg_cells), keyed by (row, column) of the grid."""
    cs = viz.svg_cells(svg)
    xs, ys = sorted({c[0] for c in cs}), sorted({c[1] for c in cs})
    return {(ys.index(c[1]), xs.index(c[0])): c[5] for c in cs}


def test_svg_is_compact_and_readable():
    a = umma_atom("SM100_MMA_F16BF16_2x1SM_SS<bf16,bf16,float,256,256,K,K>")
    for kw in ({}, {"load": "SM100_TMEM_LOAD_16dp256b1x"}, {"load": "SM100_TMEM_LOAD_32dp32b32x"}):
        svg = tmem_svg(a, **kw)
        assert len(svg) < 120_000, (kw, len(svg))  # 128 lanes x 256 columns, aggregated
        c = cells(svg)
        assert 200 <= len(c) <= 300 and max(c) == (15, 15)  # 16 x 16 blocks of 8 lanes x 16 columns
    c = cells(tmem_svg(a, load="SM100_TMEM_LOAD_32dp32b32x"))
    assert c[(5, 1)] == ["T40-47", "V16-31"]  # lanes 40-47, columns 16-31 -- .32x32b: lane = thread, column = value
    z = cells(tmem_svg(a, load="SM100_TMEM_LOAD_32dp32b32x", window=((36, 40), (3, 5))))
    assert z[(1, 1)] == ["T37", "V4"] and len(z) == 8  # lane 37, column 4


def test_registered_for_save_and_notebooks(tmp_path):
    op = tmem_copy_op("SM100_TMEM_LOAD_16dp128b1x")
    p = viz.save(op, tmp_path / "op.svg")
    with open(p) as fh:
        text = fh.read()
    assert text == tmem_svg(op) and svg_of(op) == text and op._repr_svg_() == text
    assert viz.scene_of(op).title == "TMEM SM100_TMEM_LOAD_16dp128b1x"


def test_options_that_would_be_ignored_are_errors():
    a = umma_atom("SM100_MMA_F16BF16_SS<bf16,bf16,float,128,64,K,K>")
    with pytest.raises(LayoutError, match="warps= is for a bare"):
        tmem_scene(a, warps=2)
    with pytest.raises(LayoutError, match="load= is for an accumulator"):
        tmem_scene("SM100_TMEM_LOAD_32dp32b1x", load="SM100_TMEM_LOAD_32dp32b1x")
    with pytest.raises(LayoutError, match="tile= is for an accumulator"):
        tmem_scene("SM100_TMEM_LOAD_32dp32b1x", tile=(128, 64))
    with pytest.raises(LayoutError, match="fixes its accumulator type"):
        tmem_scene(a, value_type="f16")
    with pytest.raises(LayoutError, match="is not an \\(M, N\\) -> TMEM address layout"):
        tmem_scene(Layout((128, 4, 2), (65536, 1, 4)))
    with pytest.raises(LayoutError, match="outside the 128 lanes"):
        tmem_scene(Layout((256, 4), (65536, 1)))
    with pytest.raises(LayoutError, match="outside the 128 lanes"):
        tmem_scene(Layout((128, 4), (-65536, 1)))
    with pytest.raises(LayoutError, match="tile= is for a UMMA atom"):
        tmem_scene(Layout((128, 64), (65536, 1)), tile=(128, 64))
    with pytest.raises(LayoutError, match="several"):
        tmem_scene(a, tile=(256, 64))
    with pytest.raises(LayoutError, match="would ignore"):
        tmem_scene(a, mode="blocks", window=((0, 4), (0, 4)))
    with pytest.raises(LayoutError, match="tcgen05.cp"):
        tmem_scene("SM100_UTCCP_128dp256bit_1cta")
    with pytest.raises(LayoutError, match="1 to 4 warps"):
        tmem_scene("SM100_TMEM_LOAD_32dp32b1x", warps=5)
    with pytest.raises(LayoutError, match="0 <= lo < hi"):
        tmem_scene(a, window=((0, 200), (0, 4)))
    with pytest.raises(LayoutError, match="does not exist"):  # .32x32b over an M = 64 accumulator: CuTe refuses
        tmem_scene(umma_atom("SM100_MMA_F16BF16_SS<bf16,bf16,float,64,64,K,K>"), load="SM100_TMEM_LOAD_32dp32b1x")


def test_png_and_store_picture(tmp_path):
    pytest.importorskip("matplotlib")
    s = tmem_scene("SM100_TMEM_STORE_16dp32b2x", warps=2)
    assert "writes it" in " ".join(t[2] for t in s.texts)
    img = viz.render_png(s)
    assert img.shape[:2] == (round(s.height), round(s.width))
    # the four quarter bands of an accumulator picture are drawn as thick black lines at lanes 32, 64, 96
    a = umma_atom("SM100_MMA_F16BF16_SS<bf16,bf16,float,128,64,K,K>")
    thick = [ln for ln in tmem_scene(a).lines if ln[4] > 1]
    assert len(thick) == 5 and len({round(ln[1]) for ln in thick}) == 5
