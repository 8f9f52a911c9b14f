"""Bank-conflict analysis against answers worked out by hand from the 32 x 4-byte bank model."""

from __future__ import annotations

from collections import defaultdict

import pytest
from hypothesis import given
from hypothesis import strategies as st

from layoutalg import Layout, LayoutError, parse
from layoutalg.banks import address_costs, address_report, analyze, phase_costs, phase_report, phases
from layoutalg.swizzle import Swizzle

ROW_MAJOR = Layout((64, 64), (64, 1))  # 64x64 fp16, element (r, c) at 64r + c
SWIZZLED = parse("Sw<3,3,3> o (64,64):(64,1)")  # the same, 128B-swizzled on element offsets


def test_phases_follow_access_width():
    assert phases(4) == (tuple(range(32)),)
    assert phases(8) == (tuple(range(16)), tuple(range(16, 32)))
    assert [p[0] for p in phases(16)] == [0, 8, 16, 24]


def test_stride_two_words_is_two_way():
    # lane t reads word 2t: banks 0,2,..,30 each asked for words t and t+16
    r = address_report([8 * t for t in range(32)], 4)
    assert (r.wavefronts, r.ideal, r.ways) == (2, 1, 2)
    assert len(r.conflicts) == 16 and all(c.bank % 2 == 0 for c in r.conflicts)


def test_broadcast_and_same_word_are_free():
    assert address_report([64] * 32, 4).wavefronts == 1
    assert address_report([2 * (t // 2) for t in range(32)], 2).wavefronts == 1  # two fp16 per word


def test_row_major_column_read_is_32_way():
    # thread t reads (t, 0): byte 128 t, bank 0 for everyone, 32 distinct words
    r = analyze(ROW_MAJOR, Layout((32, 1), (1, 0)), 2)
    assert (r.wavefronts, r.ideal, r.ways, r.conflict_free) == (32, 1, 32, False)
    assert r.conflicts[0].bank == 0 and [ls for _, ls in r.conflicts[0].words] == [(t,) for t in range(32)]


def test_swizzled_column_read():
    # Sw<3,3,3>(64 t) = 64 t + 8 (t % 8): bytes 128 t + 16 (t % 8), bank 4 (t % 8):
    # 8 banks, 4 rows each (t, t+8, t+16, t+24) -> 4-way, 8x better but not free for 2-byte reads
    r = analyze(SWIZZLED, Layout((32, 1), (1, 0)), 2)
    assert (r.wavefronts, r.ways) == (4, 4)
    assert sorted(c.bank for c in r.conflicts) == [0, 4, 8, 12, 16, 20, 24, 28]


def test_16_byte_row_reads_unswizzled_vs_swizzled():
    # thread t reads row t, columns 0..7 as one 16-byte vector (what ldmatrix lanes do)
    access = Layout((32, 8), (1, 64))
    plain = analyze(ROW_MAJOR, access, 2, 16)
    # each quarter-warp: 8 rows at 128-byte stride -> the same 4 banks, 8 words each
    assert (plain.wavefronts, plain.ideal, plain.ways) == (32, 4, 8)
    sw = analyze(SWIZZLED, access, 2, 16)
    assert (sw.wavefronts, sw.ideal, sw.conflict_free) == (4, 4, True)


def test_byte_swizzle_equals_element_swizzle():
    # Swizzle<3,4,3> on byte addresses is Swizzle<3,3,3> on fp16 element offsets
    byte_sw = Swizzle(3, 4, 3)
    addrs = [byte_sw(2 * (64 * t)) for t in range(32)]
    direct = address_report(addrs, 2)
    via_layout = analyze(SWIZZLED, Layout((32, 1), (1, 0)), 2)
    assert (direct.wavefronts, direct.ways) == (via_layout.wavefronts, via_layout.ways)


def _ldmatrix_addresses(tile, element_bytes, mn0, k0, k_major):
    """Row addresses of ldmatrix.x4 over the 16x16 block at (mn0, k0) of an (MN, K) tile."""
    out = []
    for t in range(32):
        j, r = divmod(t, 8)
        if (
            k_major
        ):  # matrices: (rows 0-7, k 0-7), (rows 8-15, k 0-7), (rows 0-7, k 8-15), (rows 8-15, k 8-15)
            mn, k = mn0 + r + 8 * (j % 2), k0 + 8 * (j // 2)
        else:  # .trans: a 16-byte row runs along MN at fixed k
            mn, k = mn0 + 8 * (j % 2), k0 + r + 8 * (j // 2)
        out.append(element_bytes * int(tile(mn, k)))
    return out


@pytest.mark.parametrize("major", ["K", "MN"])
@pytest.mark.parametrize("swizzle", [0, 32, 64, 128])
def test_ldmatrix_on_canonical_wgmma_tiles_is_conflict_free(major, swizzle):
    from layoutalg.nvidia.hopper import wgmma

    tile = wgmma.tile(major, swizzle, "bf16", (64, 64))
    for mn0 in range(0, 64, 16):
        for k0 in range(0, 64, 16):
            r = address_report(_ldmatrix_addresses(tile, 2, mn0, k0, major == "K"), 16)
            assert (r.wavefronts, r.ideal) == (4, 4), (major, swizzle, mn0, k0, r.summary())


def test_ldmatrix_via_tv_layout_matches_addresses():
    from layoutalg.nvidia.hopper import wgmma

    tile = wgmma.tile("K", 128, "bf16", (64, 64))
    # lane (t0, t1, t2) = (row in matrix, row block, k block); value v = column in the 16-byte row
    access = Layout(((8, 2, 2), 8), ((1, 8, 8 * 64), 64))
    r = analyze(tile, access, 2, 16)
    assert (r.wavefronts, r.ideal) == (4, 4)


def test_errors_are_layout_errors():
    with pytest.raises(LayoutError, match="aligned"):
        address_report([2] * 32, 4)
    with pytest.raises(LayoutError, match="1 to 32 lanes"):
        address_report([0] * 33, 4)
    with pytest.raises(LayoutError, match="not contiguous"):
        analyze(ROW_MAJOR, Layout((32, 8), (1, 1)), 2, 16)  # values walk down a column
    with pytest.raises(LayoutError, match="outside"):
        analyze(Layout((4, 4)), Layout((32, 1), (1, 0)), 2)  # 16 coordinates, 32 threads
    with pytest.raises(LayoutError, match="vector_bytes"):
        analyze(ROW_MAJOR, Layout((32, 8), (1, 64)), 2, 3)


def test_more_than_a_warp_is_split_into_warps():
    r = analyze(ROW_MAJOR, Layout((64, 1), (1, 0)), 2)
    assert len(r.instructions) == 2 and r.wavefronts == 64


@given(st.lists(st.integers(0, 4095), min_size=32, max_size=32))
def test_wavefronts_equal_busiest_bank(words):
    # independent count: distinct words per bank, max over banks
    per_bank = defaultdict(set)
    for w in words:
        per_bank[w % 32].add(w)
    r = address_report([4 * w for w in words], 4)
    assert r.wavefronts == max(len(s) for s in per_bank.values())
    assert r.wavefronts >= r.ideal == -(-len(set(words)) // 32)
    served = [ln for row in r.instructions[0].schedule for _, _, lanes in row for ln in lanes]
    assert sorted(served) == list(range(32))  # every lane served exactly once


@st.composite
def _accesses(draw):
    """Aligned addresses of any access width (idle lanes too) and lane groups in any order, under a bank model."""
    ab = draw(st.sampled_from([1, 2, 4, 8, 16]))
    n = draw(st.integers(1, 32))
    addrs = [None if draw(st.integers(0, 7)) == 0 else ab * draw(st.integers(0, 600)) for _ in range(n)]
    lanes = draw(st.permutations(list(range(n))))
    cut = sorted(draw(st.lists(st.integers(1, max(1, n - 1)), max_size=4, unique=True)))
    groups = [lanes[a:b] for a, b in zip([0, *cut], [*cut, n]) if lanes[a:b]]
    return addrs, ab, groups, draw(st.sampled_from([32, 64])), draw(st.sampled_from([4, 8]))


@given(_accesses())
def test_phase_costs_are_phase_reports_counts(case):
    addrs, ab, groups, nb, bb = case
    r = phase_report(addrs, ab, groups, num_banks=nb, bank_bytes=bb)
    assert phase_costs(addrs, ab, groups, num_banks=nb, bank_bytes=bb) == (r.wavefronts, r.ideal)
    if nb == 32 and bb == 4:
        full = address_report(addrs, ab)
        assert address_costs(addrs, ab) == (full.wavefronts, full.ideal)
