"""Bank analysis of tiled copies: the lane addresses against the PTX ldmatrix rule written out by hand,
the classic unswizzled-vs-swizzled results, cp.async and stmatrix, errors."""

from __future__ import annotations

import pytest

from layoutalg import ComposedLayout, Layout, LayoutError, Swizzle
from layoutalg.banks import address_report, analyze_copy
from layoutalg.nvidia.atoms import copy_atom, mma_atom
from layoutalg.tiled import make_tiled_copy, make_tiled_copy_A, make_tiled_copy_C, make_tiled_mma

MMA = make_tiled_mma(mma_atom("SM80_16x8x16_F32F16F16F32_TN"), (2, 2, 1), (32, 32, 16))
LDSM_A = make_tiled_copy_A(copy_atom("SM75_U32x4_LDSM_N", "f16"), MMA)
A128 = Layout((128, 64), (64, 1))  # the 128 x 64 f16 A tile, K-major (row-major), 128 bytes a row
SW128 = ComposedLayout(Swizzle(3, 3, 3), 0, A128)


def _ptx_rows(warp_m: int, mi: int, ki: int, ld: int, sw=None):
    """ldmatrix.x4 of the m16n8k16 A fragment, by the ISA: lane l gives the address of row l % 8 of
    matrix l // 8; matrices 0..3 are (rows 0-7, k 0-7), (rows 8-15, k 0-7), (rows 0-7, k 8-15),
    (rows 8-15, k 8-15) of the warp's 16 x 16 block (registers a0a1, a2a3, a4a5, a6a7)."""
    out = []
    for lane in range(32):
        mat, r = divmod(lane, 8)
        row = 32 * mi + 16 * warp_m + r + 8 * (mat % 2)
        col = 16 * ki + 8 * (mat // 2)
        e = row * ld + col
        out.append(2 * (sw(e) if sw else e))
    return out


@pytest.mark.parametrize("smem,sw", [(A128, None), (SW128, Swizzle(3, 3, 3))])
def test_ldmatrix_addresses_follow_the_ptx_rule(smem, sw):
    r = analyze_copy(LDSM_A, smem)
    assert len(r.instructions) == 4 * 16  # 4 warps x (128/32 rows x 64/16 k-blocks)
    # warp 0 instruction 0: rows 0..15, k 0..15; warp 1 (second along M): rows 16..31
    assert list(r.instructions[0].addresses) == _ptx_rows(0, 0, 0, 64, sw)
    assert list(r.instructions[16].addresses) == _ptx_rows(1, 0, 0, 64, sw)
    for ins in r.instructions:  # and the analysis is the plain address model's
        assert ins.wavefronts == address_report(list(ins.addresses), 16).wavefronts


def test_unswizzled_vs_swizzled_128x64():
    plain, sw = analyze_copy(LDSM_A, A128), analyze_copy(LDSM_A, SW128)
    # every 16-byte row of a matrix starts at a multiple of 128 bytes: 8 rows in one bank group
    assert (plain.wavefronts, plain.ideal, plain.ways) == (64 * 4 * 8, 64 * 4, 8)
    assert (sw.wavefronts, sw.ideal, sw.conflict_free) == (64 * 4, 64 * 4, True)
    fc = plain.first_conflict
    assert (fc.lane_a, fc.lane_b, fc.bank, fc.address_b - fc.address_a) == (0, 1, 0, 128)
    assert sw.first_conflict is None


def test_x2_ignores_the_lanes_it_does_not_read():
    mma = make_tiled_mma(mma_atom("SM80_16x8x8_F32F16F16F32_TN"), (2, 2, 1))
    r = analyze_copy(make_tiled_copy_A(copy_atom("SM75_U32x2_LDSM_N", "f16"), mma), Layout((64, 16), (16, 1)))
    ins = r.instructions[0]
    assert ins.addresses[16:] == (None,) * 16 and all(a is not None for a in ins.addresses[:16])
    # rows 32 bytes apart: rows r and r + 4 share banks -> 2-way, 2 phases of 8 lanes
    assert (ins.wavefronts, ins.ideal) == (4, 2)


def test_cp_async_and_stmatrix():
    cp = make_tiled_copy(copy_atom("SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>", "f16"), Layout((16, 8), (8, 1)), Layout((1, 8)))
    r = analyze_copy(cp, SW128)
    assert r.conflict_free and r.access_bytes == 16 and len(r.instructions) == 4 * 8
    with pytest.raises(LayoutError, match="not vectorisable"):
        analyze_copy(cp, Layout((128, 64), (1, 128)))  # M-major: a thread's 8 halves are 256 bytes apart
    mma = make_tiled_mma(mma_atom("SM80_16x8x8_F16F16F16F16_TN"), (2, 1, 1), (32, 16, 16))
    st = make_tiled_copy_C(copy_atom("SM90_U32x4_STSM_N", "f16"), mma)
    assert analyze_copy(st, Layout((32, 16), (16, 1))).ways == 2  # rows 32 bytes apart, as for x2 above
    assert analyze_copy(st, ComposedLayout(Swizzle(1, 3, 3), 0, Layout((32, 16), (16, 1)))).conflict_free


def test_errors():
    u = make_tiled_copy(copy_atom("UniversalCopy<uint32_t>", "f16"), Layout((32, 1)), Layout((1, 2)))
    with pytest.raises(LayoutError, match="which side"):
        analyze_copy(u, Layout((32, 2), (2, 1)))
    assert analyze_copy(u, Layout((32, 2), (2, 1)), side="D").conflict_free
    with pytest.raises(LayoutError, match="not a TiledCopy"):
        analyze_copy(MMA, A128)
