"""Issue 23, item 4: configurations CuTe 4.2 accepts and layoutalg refuses -- each refusal proven from CuTe's own answer.

CuTe's answers are compiled once (``python tests/cute_tiled_cases.py --record-differences``, g++ on
the host against the CUTLASS 4.2 headers) and kept in ``tests/data/cute/tiled.json`` under
``"differences"``; these tests replay them (no compiler needed) and hold the two sides to the
relation each refusal claims:

(a) ``make_tiled_mma(SM90_64x128x16_F16F16F16_RS, (3,1,1), Tile<_24,_16>)``: CuTe builds and prints it,
    tile 24 x 16 x 16 -- but three 64-row atoms need 192 rows; its get_layoutA_TV / get_layoutC_TV do not
    compile ("Stride/Shape Divisibility Condition") and its B TV layout gives every thread each B
    element 8 times over. layoutalg refuses at construction, saying so.
(b) ``make_tiled_copy_C(Copy_Atom<UniversalCopy<uint64_t>, float>, mma)``: with threads along K
    (``(2,2,2)`` m16n8k8 and m16n8k16) CuTe's TV layout sends K group 1 past the C tile; with a
    permutation that is not a bijection (``16:2`` on M, ``8:2`` on N) it reaches elements past the
    tile too. layoutalg refuses both, naming the (thread, value) CuTe sends outside; where CuTe's C TV
    layout with threads along K is right (``(1,1,2)``) layoutalg gives CuTe's copy exactly.
(c) ``make_tiled_copy_B(Copy_Atom<SM75_U16x8_LDSM_T, half_t>, mma)`` with 4 B values per thread: CuTe
    4.2 refuses it too (every configuration tried, "TiledCopy uses too few vals for selected CopyAtom"),
    as layoutalg does with the same reason; with 8 values both build the same copy.
"""

from __future__ import annotations

import numpy as np
import pytest

import cute_tiled_cases as C
from layoutalg import Layout, LayoutError, parse
from layoutalg.nvidia.atoms import copy_atom, mma_atom
from layoutalg.tensor import underscore as _
from layoutalg.tiled import make_tiled_copy_B, make_tiled_copy_C, make_tiled_mma


REC = C.DIFFERENCES.data.get("differences") if C.DIFFERENCES.data is not None else None
pytestmark = pytest.mark.skipif(REC is None, reason="no recording (python tests/cute_tiled_cases.py --record-differences)")


def cute(key: str) -> dict:
    return REC["cases"][key]


def records(key: str) -> dict:
    return C.records(C.norm(cute(key)["print"]))


def test_recording_is_of_these_snippets():
    stale = [k for k, s in C.DIFFERENCE_SNIPPETS.items() if REC["cases"].get(k, {}).get("sha1") != C.sha(s)]
    assert not stale, f"re-record (python tests/cute_tiled_cases.py --record-differences): {stale}"
    for k in C.DIFFERENCE_SNIPPETS:
        assert cute(k)["compiled"] == (not k.endswith(".refused")), k


# ---------------------------------------------------------------------------------------------- (a)
def test_a_wgmma_rs_3x1x1_perm_24x16():
    tile = tuple(int(x) for x in records("a.tile")["tile"].split(","))
    assert tile == (24, 16, 16)  # what CuTe's TiledMMA claims to cover
    printed = C.norm(cute("a.print")["print"])
    assert "ThrLayoutVMNK:  (128,3,1,1):(1,128,0,0)" in printed and "Shape_MNK:  (64,128,16)" in printed
    # three atoms of 64 rows along M need 192 rows; the tile has 24: CuTe cannot divide it ...
    assert 3 * 64 > tile[0] and tile[0] % 64 and 64 % tile[0]  # neither divides the other: shape_div fails
    assert "Shape Divisibility Condition" in cute("a.C_TV.refused")["error"]
    assert "Stride Divisibility Condition" in cute("a.A_TV.refused")["error"]
    # ... and the B TV layout it does print is no fragment: each thread holds every element of the
    # 16x16 B tile 8 times over its 2048 values
    B = parse(C.norm(cute("a.B_TV")["print"]))
    T, V = int(B[0].size()), int(B[1].size())
    tab = np.asarray(B.table()).reshape(V, T)
    assert (T, V) == (384, 2048) and len(np.unique(tab[:, 0])) == 256
    assert (np.bincount(tab[:, 0]) == 8).all()
    # layoutalg refuses, naming the reason and CuTe's behaviour
    with pytest.raises(LayoutError, match="not a multiple of atom M .64. x atoms along it .3.*Shape Divisibility"):
        make_tiled_mma(mma_atom("SM90_64x128x16_F16F16F16_RS"), (3, 1, 1), (24, 16))


# ---------------------------------------------------------------------------------------------- (b)
def _outside(tv: Layout, n: int) -> tuple[int, int, int]:
    T = int(tv[0].size())
    t = np.asarray(tv.table())
    k = int(np.nonzero(t >= n)[0][0])
    return k % T, k // T, int(t[k])


@pytest.mark.parametrize("key,atom", [("b1_16x8x16.copy", "SM80_16x8x16_F32F16F16F32_TN"),
                                      ("b1_16x8x8.copy", "SM80_16x8x8_F32F16F16F32_TN")])
def test_b1_k_split_copy_c(key, atom):
    rec = records(key)
    assert rec["tiler"] == "(32,16)"
    tv = parse(rec["tv"])
    t, v, idx = _outside(tv, 32 * 16)  # CuTe's copy reaches past the 512-element tile
    assert (t, v, idx) == (128, 0, 512)
    mma = make_tiled_mma(mma_atom(atom), (2, 2, 2))
    # the layout layoutalg quotes as CuTe's is CuTe's, character for character
    assert str(mma.cute_layoutC_TV()) == rec["tv"]
    # thread 128 is K group 1: partition_C gives it thread 0's elements, which layoutalg's TV layout says
    mine = mma.get_layoutC_TV()
    assert [mine(128, j) for j in range(4)] == [mine(0, j) for j in range(4)] == [tv(0, j) for j in range(4)]
    with pytest.raises(LayoutError, match=r"maps \(thread 128, value 0\) to index 512, outside the 512-element tile"):
        make_tiled_copy_C(copy_atom("UniversalCopy<uint64_t>", "f32"), mma)


@pytest.mark.parametrize("key,atom,perm,size,mode", [
    ("b2_16x8x8.copy", "SM80_16x8x8_F32F16F16F32_TN", (Layout(16, 2), _), 16 * 8, "M = 16:2"),
    ("b2_16x8x16.copy", "SM80_16x8x16_F32F16F16F32_TN", (_, Layout(8, 2)), 16 * 8, "N = 8:2")])
def test_b2_non_bijective_permutation_copy_c(key, atom, perm, size, mode):
    rec = records(key)
    assert rec["tiler"] == "(16,8)"
    tv = parse(rec["tv"])
    t, v, idx = _outside(tv, size)
    assert idx >= size  # CuTe's TV layout of the copy leaves its 16x8 tile
    mma = make_tiled_mma(mma_atom(atom), (1, 1, 1), perm)
    assert str(mma.cute_layoutC_TV()) == rec["tv"]
    with pytest.raises(LayoutError, match=rf"outside the 16x8 tile: the permutation of {mode} is not a bijection"):
        make_tiled_copy_C(copy_atom("UniversalCopy<uint64_t>", "f32"), mma)


def test_b0_k_split_where_cute_is_right_is_cutes_copy():
    rec = records("b0_16x8x8_1x1x2.copy")
    tc = make_tiled_copy_C(copy_atom("UniversalCopy<uint64_t>", "f32"),
                           make_tiled_mma(mma_atom("SM80_16x8x8_F32F16F16F32_TN"), (1, 1, 2)))
    assert (C._thr_str(tc.tiler), str(tc.layout_tv)) == (rec["tiler"], rec["tv"])


# ---------------------------------------------------------------------------------------------- (c)
@pytest.mark.parametrize("key,al,perm", [("c_1x1x1.refused", (1, 1, 1), None), ("c_2x2x1.refused", (2, 2, 1), None),
                                         ("c_1x2x1_n16.refused", (1, 2, 1), (_, 16))])
def test_c_ldsm_t_for_b_with_4_values(key, al, perm):
    assert "TiledCopy uses too few vals for selected CopyAtom" in cute(key)["error"]
    mma = make_tiled_mma(mma_atom("SM80_16x8x16_F32F16F16F32_TN"), al, perm)
    assert int(mma.get_layoutB_TV()[1].size()) == 4
    with pytest.raises(LayoutError, match="each thread has 4 values, not a multiple of the 8 values.*too few vals"):
        make_tiled_copy_B(copy_atom("SM75_U16x8_LDSM_T", "f16"), mma)


def test_c_ldsm_t_for_b_with_8_values_is_cutes_copy():
    rec = records("c_8vals_1x1x1_n16.copy")
    tc = make_tiled_copy_B(copy_atom("SM75_U16x8_LDSM_T", "f16"),
                           make_tiled_mma(mma_atom("SM80_16x8x16_F32F16F16F32_TN"), (1, 1, 1), (_, 16)))
    assert (C._thr_str(tc.tiler), str(tc.layout_tv)) == (rec["tiler"], rec["tv"])
