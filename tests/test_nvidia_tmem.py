"""Tensor memory (layoutalg.nvidia.blackwell.tmem) and the tcgen05.ld/st/cp atoms against the PTX ISA's rules and figures.

The ISA draws the tcgen05 data-movement shapes as figures; :data:`tmem_copy.FORMULAS` reads them as
formulas in (thread, register), and every one of the 148 ld/st atoms (every shape, .num and
pack/unpack) is proven equal to its formula by :func:`layoutalg.verify.verify` (symbolically, over
the bits of thread and value). The tcgen05.cp atoms' lane routing (``.warpx4``, ``.warpx2::02_13``,
``::01_23``, ``4x256b``) is checked against the ISA's description the same way. None of it ran on
sm_100 hardware.
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy

from layoutalg import Layout, LayoutError
from layoutalg.nvidia.blackwell import tmem_copy as TC
from layoutalg.nvidia.atoms import copy_atom
from layoutalg.nvidia.blackwell.tmem import (
    LANE_STRIDE_BITS,
    TmemAllocation,
    TmemError,
    address,
    bit_address,
    check_allocation,
    check_cta_pair,
    check_warp_access,
    cta_pair,
    decode,
    lane_quarter,
)
from layoutalg.symbolic import bitand, shr
from layoutalg.verify import verify

LDST = [n for n in TC.tmem_copy_names() if "UTCCP" not in n]
CP = [n for n in TC.tmem_copy_names() if "UTCCP" in n]


# --- TMEM as an address space -----------------------------------------------------------------------
def test_addresses_round_trip_and_match_cute_bits():
    for lane in (0, 1, 31, 32, 127):
        for col in (0, 1, 255, 511):
            a = address(lane, col)
            assert a == lane * 65536 + col and decode(a) == (lane, col)
            assert bit_address(lane, col, 7) == lane * LANE_STRIDE_BITS + col * 32 + 7
    for bad in ((128, 0), (0, 512), (-1, 0)):
        with pytest.raises(TmemError, match="bounds"):
            address(*bad)
    with pytest.raises(TmemError):
        decode(512)


@pytest.mark.parametrize("cols", [32, 64, 128, 256, 512])
def test_legal_allocations(cols):
    assert check_allocation(cols) == cols and TmemAllocation(cols).columns == cols


@pytest.mark.parametrize("cols", [0, 1, 16, 48, 96, 384, 1024, -32])
def test_illegal_allocations_name_the_rule(cols):
    with pytest.raises(TmemError, match="allocation.*power of two from 32 to 512") as e:
        check_allocation(cols)
    assert e.value.rule == "allocation" and isinstance(e.value, LayoutError)
    with pytest.raises(LayoutError, match="allocation"):
        TmemAllocation(cols)


def test_allocation_past_column_511_is_refused():
    TmemAllocation(256, base_column=256)
    with pytest.raises(TmemError, match="allocation"):
        TmemAllocation(256, base_column=384)
    with pytest.raises(TmemError, match="cta pair"):
        TmemAllocation(64, cta_group=3)


def test_lane_quarters():
    for w in range(16):
        q = lane_quarter(w)
        assert q == range(32 * (w % 4), 32 * (w % 4) + 32)
        check_warp_access(w, q)
        other = (q.start + 32) % 128
        with pytest.raises(TmemError, match=r"lane quarter: warp .* may access lanes") as e:
            check_warp_access(w, other)
        assert e.value.rule == "lane quarter"


def test_cta_pairs():
    assert [cta_pair(r) for r in range(4)] == [(0, 1), (0, 1), (2, 3), (2, 3)]
    assert check_cta_pair(6, 7) == (6, 7)
    for a, b in ((1, 2), (0, 0), (0, 3)):
        with pytest.raises(TmemError, match="cta pair"):
            check_cta_pair(a, b)


def test_a_num_that_overruns_the_allocation_raises():
    op = TC.tmem_copy_op("SM100_TMEM_LOAD_32dp32b64x")
    op.check_access(TmemAllocation(64), 32 << 16, warp=1)
    with pytest.raises(TmemError, match="bounds.*x64.*overrun the allocation of 64 columns"):
        op.check_access(TmemAllocation(64), (32 << 16) | 32, warp=1)
    with pytest.raises(TmemError, match="bounds"):
        TC.tmem_copy_op("SM100_TMEM_LOAD_16dp256b32x_16b").check_access(TmemAllocation(256), 0, warp=0)  # 512 columns
    # a warp reading another quarter
    with pytest.raises(TmemError, match="lane quarter: .*lanes 24..39.*warp 0 may access lanes 0..31"):
        TC.tmem_copy_op("SM100_TMEM_LOAD_16dp128b1x").check_access(TmemAllocation(32), 24 << 16, warp=0)
    with pytest.raises(TmemError, match="lane quarter"):
        op.check_access(TmemAllocation(64), 0, warp=1)
    # tcgen05.cp: no warp, but the columns must fit
    cp = TC.tmem_copy_op("SM100_UTCCP_128dp256bit_1cta")
    cp.check_access(TmemAllocation(32), 24)
    with pytest.raises(TmemError, match="bounds"):
        cp.check_access(TmemAllocation(32), 28)


def test_bad_names_and_nums():
    for bad in ("SM100_TMEM_LOAD_16dp256b64x", "SM100_TMEM_LOAD_16dp128b128x", "SM100_TMEM_LOAD_32dp32b3x",
                "SM100_TMEM_LOAD_32dp64b1x", "SM100_UTCCP_128dp256bit_3cta", "SM100_TMEM_LOAD"):
        with pytest.raises(LayoutError):
            TC.tmem_copy_op(bad)
    with pytest.raises(LayoutError, match="x64"):
        TC.ld_name("16x256b", 64)
    with pytest.raises(LayoutError, match="no register fragment"):
        TC.tmem_copy_op(CP[0]).fragment()


# --- the ISA's figures as formulas ----------------------------------------------------------------
def test_every_ld_st_atom_is_its_isa_formula():
    methods = {}
    for name in LDST:
        op = TC.tmem_copy_op(name)
        expected, inputs = op.formula()
        v = verify(op.fragment(), expected, inputs)
        assert v, (name, v.counterexample)
        methods[v.method] = methods.get(v.method, 0) + 1
    assert methods == {"symbolic": len(LDST)} and len(LDST) == 148


def test_formula_check_can_fail():
    op = TC.tmem_copy_op("SM100_TMEM_LOAD_16dp64b2x")
    lane_f, col_f = TC.FORMULAS["16x64b"]
    t, v = sympy.symbols("t v", integer=True, nonnegative=True)
    swapped = (shr(t, 2) + 8 * bitand(shr(t, 1), 1)) * 65536 + bitand(t, 1) + 2 * v  # lane/column bits swapped
    assert not verify(op.fragment(), swapped, (t, v))
    op = TC.tmem_copy_op("SM100_TMEM_LOAD_16dp32b4x_16b")
    e, ins = op.formula()
    assert verify(op.fragment(), e, ins)
    assert not verify(op.fragment(), e + 1, ins)


def test_fragment_by_hand():
    # .16x256b.x1: thread 6 (t // 4 = 1, t % 4 = 2), register 3: lane 1 + 8, column 1 + 4
    f = TC.tmem_copy_op("SM100_TMEM_LOAD_16dp256b1x").fragment()
    assert f(6, 3) == address(9, 5)
    # .16x32bx2.x4: thread 17 is lane 1 of the second half, 4 columns on
    f = TC.tmem_copy_op("SM100_TMEM_STORE_16dp32b4x").fragment()
    assert f(17, 2) == address(1, 6)
    # pack::16b: register 1 of .32x32b.x2 holds columns 2 (low half) and 3 (high half)
    f = TC.tmem_copy_op("SM100_TMEM_LOAD_32dp32b2x_16b").fragment()
    assert (f(5, 2), f(5, 3)) == (address(5, 2), address(5, 3))


@pytest.mark.parametrize("name", LDST[::7])
def test_fragment_covers_the_block_once(name):
    op = TC.tmem_copy_op(name)
    tab = np.asarray(op.fragment().table()).ravel()
    cells = {(int(a) >> 16, int(a) & 0xFFFF) for a in tab}
    assert len(tab) == len(cells) == op.lanes * op.columns
    assert {c for _, c in cells} == set(range(op.columns)) and {ln for ln, _ in cells} == set(range(op.lanes))
    assert op.registers * 32 == int(op.dst_bits[1].size() if op.kind == "ld" else op.src_bits[1].size())


def test_store_is_the_load_reversed():
    for name in LDST[: len(LDST) // 2]:
        ld, st = TC.tmem_copy_op(name), TC.tmem_copy_op(name.replace("LOAD", "STORE"))
        assert (st.src_bits, st.dst_bits, st.val_id) == (ld.dst_bits, ld.src_bits, ld.val_id)
        assert st.fragment() == ld.fragment() and st.ptx.replace("st.", "ld.").replace("unpack", "pack") == ld.ptx


# tcgen05.cp: (row, bit, copy) -> TMEM lane per the ISA's shape descriptions
row, b, k, w = sympy.symbols("row b k w", integer=True, nonnegative=True)
CP_ROUTES = {
    "128dp256bit": ((row, b), row),
    "128dp128bit": ((row, b), row),
    "4x32dp128bit": ((row, b, w), row + 32 * w),  # 32x128b.warpx4: four replicas 32 lanes apart
    "2x64dp128bitlw0213": ((row, b, w), row + 64 * w),  # warps 0,2 and 1,3 receive the same rows
    "2x64dp128bitlw0123": ((row, b, k, w), row + 64 * k + 32 * w),  # rows 32k.. to warps 2k and 2k+1
}


@pytest.mark.parametrize("name", CP)
def test_cp_routes_rows_to_lanes_as_the_isa_says(name):
    op = TC.tmem_copy_op(name)
    key = name[len("SM100_UTCCP_"):].rsplit("_", 1)[0]
    if key == "4dp256bit":  # rows 0..3 to lanes 0, 32, 64, 96: the source picks lanes 32*i of the 128-lane block
        src = op.src_bits[1]
        lanes = sorted({int(x) % 128 for x in np.asarray(src.table()).ravel()})
        assert lanes == [0, 32, 64, 96]
        return
    inputs, lane = CP_ROUTES[key]
    v = verify(op.val_id, lane * LANE_STRIDE_BITS + b, inputs)
    assert v, v.counterexample
    assert op.thr_id == Layout(op.cta_group)


def test_copy_atom_dispatches_to_tmem():
    a = copy_atom("SM100_TMEM_LOAD_32dp32b8x", "f32")
    assert a.num_val_src == 256 and a.num_val_dst == 8 and a.thr_id == Layout(32)
    assert copy_atom("SM100_UTCCP_128dp128bit_2cta", "f16").num_threads == 2
