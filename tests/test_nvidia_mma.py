"""The mma.sync / mma.sp catalog: every entry proven equal to its PTX formula, plus hand checks.

Expected values here come from the PTX ISA text (seeds 000/001/004 and the ISA's fragment
sections), worked by hand in the comments -- never from the code under test.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from layoutalg import LayoutError
from layoutalg.nvidia.ampere.mma import (
    catalog,
    fragment,
    scale_fragment,
    sparse_fragment,
    sparse_metadata,
    tile_fragment,
)
from layoutalg.nvidia.common.ptx_formulas import i, lane
from layoutalg.verify import verify

ENTRIES = catalog()


def _id(e):
    extra = [e.alayout + e.blayout if e.shape == "m8n8k4" and e.dtype == "f16" else "", e.ctype or "",
             e.kind or "", f"x{e.scale_vec}" if e.scale_vec else "", e.stype or ""]
    return ".".join(x for x in (("sp" if e.sparse else "") , e.shape, e.dtype, e.operand, *extra) if x)


# ---------------------------------------------------------------------------------------------
# The catalog is complete (fails if an entry goes missing)
# ---------------------------------------------------------------------------------------------
def test_catalog_counts():
    # Worked out from the mma syntax of PTX ISA 9.x (seed 001) -- per family:
    # A + B entries, C + D per accumulator type, SFA + SFB per (scale_vec, stype):
    dense = (8 + 4 + 3 * 4  # m8n8k4 f16 (A row/col, B row/col, C/D f16/f32), m8n8k4 f64, m16n8k{4,8,16} f64
             + 6 + 4 + 6 + 4  # m16n8k8 f16 (f16|f32 acc), bf16; m16n8k16 f16, bf16
             + 4 + 4  # tf32 m16n8k4, k8
             + 3 * 8 + 3 * 8 + 3 * 4  # s8/u8, s4/u4 (2 types x 4 each, 3 shapes), b1 (3 shapes)
             + 12 + 12  # e4m3/e5m2 m16n8k32 and m16n8k16, f32|f16 acc
             + 30 + 30  # kind::f8f6f4 (5 types x 6), kind::mxf8f6f4 (5 x (A,B,C,D,SFA,SFB))
             + 6 + 10)  # mxf4 (SF x2 ue8m0), mxf4nvf4 (SF x2 ue8m0, x4 ue8m0, x4 ue4m3)
    sparse = (6 + 4 + 6 + 4 + 4 + 4 + 8 + 8 + 8 + 8 + 12 + 30 + 30 + 6 + 10)
    assert dense == 212 and sparse == 148
    assert sum(not e.sparse for e in ENTRIES) == dense
    assert sum(e.sparse for e in ENTRIES) == sparse
    assert len(set(ENTRIES)) == len(ENTRIES)


def test_catalog_covers_every_mma_shape_and_type_of_the_isa():
    dense = {(e.shape, e.dtype) for e in ENTRIES if not e.sparse}
    want = {("m8n8k4", "f16"), ("m8n8k4", "f64"), ("m16n8k4", "f64"), ("m16n8k8", "f64"), ("m16n8k16", "f64"),
            ("m16n8k8", "f16"), ("m16n8k8", "bf16"), ("m16n8k16", "f16"), ("m16n8k16", "bf16"),
            ("m16n8k4", "tf32"), ("m16n8k8", "tf32")}
    want |= {(s, t) for s in ("m8n8k16", "m16n8k16", "m16n8k32") for t in ("s8", "u8")}
    want |= {(s, t) for s in ("m8n8k32", "m16n8k32", "m16n8k64") for t in ("s4", "u4")}
    want |= {(s, "b1") for s in ("m8n8k128", "m16n8k128", "m16n8k256")}
    want |= {(s, t) for s in ("m16n8k16", "m16n8k32") for t in ("e4m3", "e5m2")}
    want |= {("m16n8k32", t) for t in ("e3m2", "e2m3", "e2m1")} | {("m16n8k64", "e2m1")}
    assert dense == want
    kinds = Counter(e.kind for e in ENTRIES if not e.sparse and e.operand == "A")
    # A entries without kind: m8n8k4 f16 (row, col), m8n8k4 f64, f64 x3, f16/bf16 x2 shapes, tf32 x2,
    # s8/u8 x3 shapes, s4/u4 x3 shapes, b1 x3, e4m3/e5m2 x2 shapes
    assert kinds == {None: 2 + 1 + 3 + 4 + 2 + 6 + 6 + 3 + 4, "f8f6f4": 5, "mxf8f6f4": 5, "mxf4": 1, "mxf4nvf4": 1}
    sp = {(e.shape, e.dtype) for e in ENTRIES if e.sparse}
    assert ("m16n8k128", "u4") in sp and ("m16n8k128", "e2m1") in sp and ("m16n8k64", "e3m2") in sp
    assert {e.shape for e in ENTRIES if e.sparse} == {"m16n8k8", "m16n8k16", "m16n8k32", "m16n8k64", "m16n8k128"}


def test_catalog_records_isa_facts():
    by = {(_id(e)): e for e in ENTRIES}
    # seed 001, "Target ISA Notes" / "PTX ISA Notes"
    assert by["m8n8k4.f16.A.rowcol"].min_sm == "sm_70" and by["m8n8k4.f16.A.rowcol"].ptx_isa == "6.4"
    assert by["m16n8k8.f16.A"].min_sm == "sm_75" and by["m16n8k8.f16.A"].ptx_isa == "6.5"
    assert by["m16n8k16.f64.A"].min_sm == "sm_90" and by["m16n8k16.f64.A"].ptx_isa == "7.8"
    assert by["m16n8k32.e4m3.A"].min_sm == "sm_89" and by["m16n8k32.e4m3.A"].ptx_isa == "8.4"
    assert by["m16n8k32.e4m3.C.f16"].ptx_isa == "8.7"
    assert by["m16n8k64.e2m1.SFA.mxf4nvf4.x4.ue8m0"].ptx_isa == "9.1"
    assert by["m16n8k32.e2m1.A.f8f6f4"].min_sm == "sm_120a"
    assert "9.7.14" in by["m16n8k16.f16.A"].ptx_section
    assert by["m16n8k64.e2m1.A.mxf4nvf4.x2"].instruction.startswith(
        "mma.sync.aligned.m16n8k64.row.col.kind::mxf4nvf4.block_scale.scale_vec::2X.f32.e2m1.e2m1.f32")


# ---------------------------------------------------------------------------------------------
# Every entry proven equal to its PTX formula (layoutalg.verify: exhaustive, then symbolic)
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("entry", ENTRIES, ids=[_id(e) for e in ENTRIES])
def test_entry_equals_ptx_formula(entry):
    f = entry.fragment()
    v = verify(f, f.formula.outputs, (lane, i), symbolic=False)
    assert v, v.counterexample
    assert v.checked == f.num_threads * f.num_values


def test_symbolic_proofs_for_the_seed_fragments():
    for e in ENTRIES:
        if e.shape == "m8n8k4" or (e.shape == "m16n8k128" and e.sparse):
            f = e.fragment()
            v = verify(f, f.formula.outputs, (lane, i))
            assert v and v.method == "symbolic", (_id(e), v)


def test_every_fragment_is_a_bijection_onto_its_operand():
    for e in ENTRIES:
        f = e.fragment()
        if f.operand.startswith("SF"):
            continue
        idx = np.sort(np.asarray(f.layout.table()))
        d0, d1 = f.codomain
        assert (idx == np.arange(d0 * d1 * f.batch)).all(), _id(e)


def test_layout_and_symbolic_views_agree():
    for key in ("m16n8k16.f16.A", "m8n8k4.f16.C.rowcol.f32", "sp.m16n8k32.f16.A"):
        e = next(x for x in ENTRIES if _id(x).startswith(key))
        f = e.fragment()
        sym = f.verify_symbolic()
        v = verify(f, sym, (lane, i), symbolic=False)
        assert v, key


# ---------------------------------------------------------------------------------------------
# Hand checks against the seed text (worked by hand from the ISA's formulas)
# ---------------------------------------------------------------------------------------------
def test_m8n8k4_f16_by_hand():
    # seed 000: C f32, lane 21 (high group), c6: X = (21 & 1) + (6 & 2) = 1 + 2 = 3, row = 3 + 4 = 7;
    # col = (6 & 4) + (21 & 2) + (6 & 1) = 4 + 0 + 0 = 4. Lane 21 is computation 2 (lanes 20-23).
    c = fragment("m8n8k4", "f16", "C", ctype="f32")
    assert c.coords(21, 6) == (7, 4) and c.batch_index(21, 6) == 1
    # Column-major A, lane 18 (high group), a3: row = (3 % 4) + 4 = 7, col = 18 % 4 = 2.
    assert fragment("m8n8k4", "f16", "A", alayout="col").coords(18, 3) == (7, 2)
    # Row-major B, lane 17, b2: row = 17 % 4 = 1, col = 2 + 4 = 6.
    assert fragment("m8n8k4", "f16", "B", blayout="row").coords(17, 2) == (1, 6)
    # four computations: lanes 0-3,16-19 -> computation 0 ... lanes 12-15,28-31 -> 3
    a = fragment("m8n8k4", "f16", "A")
    assert [a.batch_index(l, 0) for l in (0, 19, 4, 23, 8, 27, 12, 31)] == [0, 0, 1, 1, 2, 2, 3, 3]
    assert str(a.layout) == "((4,4,2),4):((1,32,4),8)"
    assert c.num_registers == 8 and fragment("m8n8k4", "f16", "C", ctype="f16").num_registers == 4


def test_m8n8k4_f64_and_m16n8k8_by_hand():
    # seed 000 f64: A row = lane >> 2, col = lane % 4; C col = tig*2 + (i & 1)
    assert fragment("m8n8k4", "f64", "A").coords(13, 0) == (3, 1)
    assert fragment("m8n8k4", "f64", "B").coords(13, 0) == (1, 3)
    assert fragment("m8n8k4", "f64", "C").coords(13, 1) == (3, 3)
    # m16n8k8 tf32 A: a1 of lane 9 (groupID 2, tig 1): row 2 + 8, col 1
    assert fragment("m16n8k8", "tf32", "A").coords(9, 1) == (10, 1)
    # m16n8k16 f64 A: a3 of lane 6 (groupID 1, tig 2): row 1 + 8 = 9, col = 3*2 - 2 + 2 = 6
    assert fragment("m16n8k16", "f64", "A").coords(6, 3) == (9, 6)


def test_sparse_m16n8k128_seed_004_by_hand():
    # seed 004: lane 6 (groupID 1, threadID_in_group 2), a20: row = groupID (16 <= 20 < 24) = 1,
    # firstcol = 2*16 + 64 = 96, lastcol = 111.
    a = sparse_fragment("m16n8k128", "u4", "A")
    assert a.column_range(6, 20) == (96, 111) and a.coords(6, 20)[0] == 1
    assert a.num_values == 32 and a.num_registers == 4 and a.values_per_register == 8
    # a9 of lane 6: row = groupID + 8 = 9 (otherwise), firstcol = 32
    assert a.coords(6, 9)[0] == 9 and a.column_range(6, 9) == (32, 47)
    # registers hold eight non-zeros out of 16 consecutive: compressed columns firstcol/2 .. +7
    for l in range(32):
        for v in range(32):
            lo, hi = a.column_range(l, v)
            assert hi - lo == 15 and lo // 2 <= a.coords(l, v)[1] <= lo // 2 + 7
    # C "same as m16n8k64": the m16n8 accumulator
    assert sparse_fragment("m16n8k128", "s4", "C").layout == fragment("m16n8k64", "s4", "C").layout


def test_registers():
    f = fragment("m16n8k32", "e4m3", "A")
    assert (f.values_per_register, f.num_registers, f.register(13)) == (4, 4, (3, 1))
    assert fragment("m16n8k256", "b1", "A").num_registers == 4
    assert fragment("m16n8k16", "f64", "A").num_registers == 8
    assert fragment("m16n8k64", "e2m1", "A", kind="mxf4").element_bits == 4
    assert fragment("m16n8k32", "e2m1", "A").element_bits == 8  # kind::f8f6f4 8-bit container
    assert fragment("m16n8k32", "e2m1", "A").variant_dict["kind"] == "f8f6f4"


# ---------------------------------------------------------------------------------------------
# Sparse metadata, block-scale factors
# ---------------------------------------------------------------------------------------------
def test_sparse_metadata_selectors():
    m = sparse_metadata("m16n8k16", "f16")
    assert m.valid_selectors == (0, 1, 2, 3) and m.lanes(2)[:3] == (2, 6, 10)
    assert sparse_metadata("m16n8k32", "bf16").lanes(1)[:4] == (2, 3, 6, 7)
    assert sparse_metadata("m16n8k64", "s8").valid_selectors == (0,)
    assert len(sparse_metadata("m16n8k128", "e2m1").lanes(0)) == 32
    with pytest.raises(LayoutError, match="selector 2"):
        sparse_metadata("m16n8k32", "f16").lanes(2)


def test_scale_factor_selectors():
    sf = scale_fragment("m16n8k32", "mxf8f6f4", "A", thread_id=1, byte_id=3)
    # scale_A row m is read from lane 4*(m % 8) + 2*thread_id + m // 8: row 9 -> lane 4 + 2 + 1 = 7
    assert sf.coords(7, 0) == (9, 0) and 7 in sf.reading_lanes() and 5 not in sf.reading_lanes()
    assert sf.register_byte(0) == 3 and sf.num_registers == 1
    sb = scale_fragment("m16n8k64", "mxf4nvf4", "B", scale_vec=4, stype="ue4m3", thread_id=2)
    assert sb.coords(13, 3) == (3, 3) and sb.reading_lanes()[:3] == (2, 6, 10)
    with pytest.raises(LayoutError, match="byte_id"):
        scale_fragment("m16n8k64", "mxf4", "A", byte_id=1)
    with pytest.raises(LayoutError, match="thread_id"):
        scale_fragment("m16n8k64", "mxf4", "A", thread_id=2)
    with pytest.raises(LayoutError, match="scale_vec=4"):
        scale_fragment("m16n8k64", "mxf4", "A", scale_vec=4)


# ---------------------------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------------------------
def test_unknown_combinations_list_the_valid_ones():
    with pytest.raises(LayoutError, match=r"valid .*f16/A"):
        fragment("m16n8k16", "tf32", "A")
    with pytest.raises(LayoutError, match="valid shapes"):
        fragment("m16n8k12", "f16", "A")
    with pytest.raises(LayoutError, match="m<M>n<N>k<K>"):
        fragment("16x8x16", "f16", "A")
    with pytest.raises(LayoutError, match="row.col"):
        fragment("m16n8k16", "f16", "A", alayout="col")
    with pytest.raises(LayoutError, match="operand"):
        fragment("m16n8k16", "f16", "E")
    with pytest.raises(LayoutError, match="ctype='f16'"):
        fragment("m16n8k16", "bf16", "C", ctype="f16")
    with pytest.raises(LayoutError, match="lane 32"):
        fragment("m16n8k16", "f16", "A").coords(32, 0)
    with pytest.raises(LayoutError, match="not a sparse"):
        fragment("m16n8k16", "f16", "A").column_range(0, 0)
    with pytest.raises(ValueError):  # LayoutError is a ValueError
        sparse_fragment("m8n8k4", "f16", "A")


def test_accumulator_type_may_be_named_as_dtype():
    assert fragment("m16n8k8", "f32", "D").dtype == "f32"
    assert fragment("m16n8k16", "s32", "C").layout == fragment("m16n8k16", "s8", "C").layout


def test_fragments_are_immutable_and_hashable():
    f = fragment("m16n8k16", "f16", "A")
    assert f is fragment("m16n8k16", "f16", "A") or f == fragment("m16n8k16", "f16", "A")
    assert hash(f) == hash(fragment("m16n8k16", "f16", "A"))
    with pytest.raises(AttributeError):  # frozen
        f.shape = "m8n8k4"  # type: ignore[misc]


# ---------------------------------------------------------------------------------------------
# Partitioning a CTA tile
# ---------------------------------------------------------------------------------------------
def test_tile_m16n8k16_c_over_64x64():
    atom = fragment("m16n8k16", "f16", "C")
    tf = tile_fragment(atom, (64, 64))
    assert tf.num_threads == 32 and tf.num_values == 4 * 4 * 8
    # lane 5 holds, in atom (rm, rn), rows {1, 9} + 16*rm and cols {2, 3} + 8*rn: by hand from
    # row = groupID (+8), col = 2*threadID_in_group (+1).
    want = {(r + 16 * rm, c + 8 * rn) for rm in range(4) for rn in range(8) for r in (1, 9) for c in (2, 3)}
    assert set(tf.elements(5)) == want
    # every element of the tile held exactly once
    tab = np.sort(np.asarray(tf.layout.table()))
    assert (tab == np.arange(64 * 64)).all()


@settings(max_examples=30, deadline=None)
@given(st.sampled_from([(1, 1), (2, 1), (1, 2), (2, 2), (4, 1)]), st.integers(0, 127), st.sampled_from(["A", "B", "C"]))
def test_tiled_fragment_is_a_bijection_and_matches_the_atom(warps, thread, operand):
    atom = fragment("m16n8k16", "bf16", operand)
    d0, d1 = atom.codomain
    tile = (d0 * warps[0] * 2, d1 * warps[1] * 2)
    tf = tile_fragment(atom, tile, warps)
    tab = np.sort(np.asarray(tf.layout.table()))
    assert (tab == np.arange(tile[0] * tile[1])).all()
    thread %= tf.num_threads
    lane_, warp = thread % 32, thread // 32
    w0, w1 = warp % warps[0], warp // warps[0]
    # the first repeat of each thread is its atom fragment shifted to its warp's atom
    first = tf.elements(thread)[: atom.num_values]
    for v, (r, c) in enumerate(first):
        ar, ac = atom.coords(lane_, v)
        if operand == "B":  # PTX orientation of B is K x N; the tile is N x K
            assert (r, c) == (ar + d1 * w1, ac + d0 * w0)
        else:
            assert (r, c) == (ar + d0 * w0, ac + d1 * w1)


def test_tile_rejects_misfit():
    with pytest.raises(LayoutError, match="multiple"):
        tile_fragment(fragment("m16n8k16", "f16", "C"), (24, 64))


def test_whole_catalog_verifies_within_two_seconds():
    from budget import cpu_budget

    from layoutalg.nvidia.ampere import ldmatrix
    from layoutalg.nvidia.hopper import wgmma_fragments

    frags = [e.fragment() for e in ENTRIES] + [wgmma_fragments.fragment(*e) for e in wgmma_fragments.catalog()]
    frags += [ldmatrix.fragment(n, t, store=s) for n, t, s in ldmatrix.catalog()]
    # the budget is CPU time of this process, the collector paused (tests/budget.py), best of two runs
    best = float("inf")
    for _ in range(2):
        with cpu_budget() as t:
            assert all(verify(f, f.formula.outputs, (lane, i), symbolic=False) for f in frags)
        best = min(best, t.seconds)
        if best < 2.0:
            break
    assert best < 2.0


def test_grid_is_inverse_of_coords():
    for f in (fragment("m16n8k16", "f16", "B"), fragment("m16n8k32", "s8", "A"), fragment("m8n8k4", "f16", "C")):
        lanes, values = f.grid()
        for r in range(lanes.shape[0]):
            for c in range(lanes.shape[1]):
                assert f.coords(int(lanes[r, c]), int(values[r, c])) == (r, c)
                assert f.owner(r, c) == (int(lanes[r, c]), int(values[r, c]))
