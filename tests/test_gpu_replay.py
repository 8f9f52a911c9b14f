"""Replay the hardware recordings (tests/data/hardware/*.json) against the library's current layouts.

These run on any CPU. A recording holds what an H100 returned: for every mma instruction the
measured map (lane, value) -> (computation, row, col) of A, B and D; for every Triton shared
layout the measured physical offset of each element; for every wgmma mode the descriptor words
that produced an exact D, and the corrupted words the hardware rejected. If a later change to the
library contradicts the hardware, these tests fail. The second half shows the checks *can* fail.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from layoutalg.gpu import encode as enc
from layoutalg.gpu import bank_check, mma_check, smem_check, wgmma_check
from layoutalg.gpu.common import load_recording
from layoutalg.gpu.harness import table
from layoutalg.nvidia.common.ptx_formulas import FORMULAS

MMA = load_recording("mma")
SMEM = load_recording("smem")
WGMMA = load_recording("wgmma")
BANKS = load_recording("banks")

needs = pytest.mark.skipif(MMA is None or SMEM is None or WGMMA is None, reason="no hardware recordings")


@needs
def test_recordings_say_where_they_come_from():
    for rec in (MMA, SMEM, WGMMA):
        env = rec["environment"]
        assert env["gpu"].startswith("NVIDIA") and env["capability"] == "sm_90"
        assert env["driver"] and env["triton"] and env["date"]


@needs
def test_every_sm90_entry_was_measured_and_passed():
    runnable, skipped = mma_check.variants()
    res = MMA["results"]
    want = {v.key for v in runnable}
    assert want <= set(res)
    for key, rec in res.items():
        if key in want:
            assert rec["status"] == "pass", key
        else:
            # recorded as refused by ptxas on sm_90a; the catalog now says these need a later target
            assert rec["status"] == "unsupported" and "not supported" in rec["error"], key
    refused = {k for k, r in res.items() if r["status"] == "unsupported"}
    assert refused and refused.isdisjoint(want)
    assert {(s["shape"], s["dtype"]) for s in skipped if s.get("ctype") == "f16" and s["sparse"]} >= {
        ("m16n8k64", "e4m3"), ("m16n8k64", "e5m2")}
    assert all(s["kind"] or int(s["min_sm"][3:].rstrip("af")) > 90 for s in skipped)
    assert all(r["status"] == "pass" for r in SMEM["results"].values())
    assert all(r["status"] == "pass" for r in WGMMA["results"].values())
    assert len(WGMMA["negatives"]) >= 3 and all(n["caught"] for n in WGMMA["negatives"].values())


@needs
def test_mma_recording_explained_by_current_layouts():
    assert mma_check.replay(MMA) == []


@needs
def test_mma_recording_matches_ptx_formulas_directly():
    """Independent of the layouts: the hardware's (row, col) equal the ISA's printed formulas."""
    runnable = {v.key: v for v in mma_check.variants()[0]}
    checked = 0
    for key, rec in MMA["results"].items():
        if rec["status"] != "pass":
            continue
        v = runnable[key]
        for op, f in (("A", v.fa), ("B", v.fb), ("D", v.fd)):
            if op not in rec or (op == "A" and v.sparse):
                continue
            obs = mma_check.unpack_array(rec[op]["observed"])
            ln, iv = np.meshgrid(np.arange(32), np.arange(f.num_values), indexing="ij")
            want = FORMULAS[f.formula_key].evaluate(ln, iv)
            want = [np.broadcast_to(np.asarray(w), ln.shape) for w in want]
            if f.batch_name is not None:  # (computation, row, col)
                assert np.array_equal(obs[..., 0], want[0]) and np.array_equal(obs[..., 1], want[1]), key
                assert np.array_equal(obs[..., 2], want[2]), key
            else:
                assert np.array_equal(obs[..., 1], want[0]), (key, op)
                assert np.array_equal(obs[..., 2], want[1]), (key, op)
            checked += 1
    assert checked > 100


@needs
def test_smem_recording_explained_by_current_layouts():
    assert smem_check.replay(SMEM) == []


@needs
def test_wgmma_recording_explained_by_current_descriptors():
    assert wgmma_check.replay(WGMMA) == []


@needs
def test_table_renders():
    text = table({"mma": MMA, "smem": SMEM, "wgmma": WGMMA, **({"banks": BANKS} if BANKS else {})})
    assert "m16n8k16.f16.f32.row.col" in text and "negative:" in text and "offset:" in text


# ---------------------------------------------------------------------------------------------
# the checks can fail
# ---------------------------------------------------------------------------------------------
@needs
def test_corrupted_fragment_is_caught_in_replay():
    """Lane 5's values 0 and 1 of m16n8k16 A swapped: a one-lane, one-index error."""

    def corrupt(v, op, want):
        if v.key == "m16n8k16.f16.f32.row.col" and op == "A":
            want[5, [0, 1]] = want[5, [1, 0]]
        return want

    problems = mma_check.replay(MMA, corrupt=corrupt)
    assert problems and all("m16n8k16.f16.f32.row.col A" in p for p in problems)
    assert any("lane 5, value 0" in p for p in problems)


@needs
def test_corrupted_descriptor_is_caught_in_replay(monkeypatch):
    good = wgmma_check.descriptors

    def swapped(m):
        d = good(m)
        if m["name"] == "bf16.K.sw0":
            d["A"] = wgmma_check.corrupt_words(d["A"], "swap")
        return d

    monkeypatch.setattr(wgmma_check, "descriptors", swapped)
    problems = wgmma_check.replay(WGMMA)
    assert any(p.startswith("bf16.K.sw0 A") for p in problems)
    # ... and the library producing exactly the words the hardware rejected is flagged too
    assert any("rejected" in p for p in problems)


@needs
def test_corrupted_swizzle_is_caught_in_replay():
    def corrupt(rec, want):
        if rec["name"] == "nvmma.sw128.b16.N":
            # Swizzle<2,...> instead of <3,...>: drop the top XOR bit of the 128 B pattern
            R, C = rec["R"], rec["C"]
            return smem_check.expected_nvmma(64, 16, False, R, C)
        return want

    problems = smem_check.replay(SMEM, corrupt=corrupt)
    assert problems and all(p.startswith("nvmma.sw128.b16.N") for p in problems)


def _variant(key):
    return next(v for v in mma_check.variants()[0] if v.key == key)


@pytest.mark.parametrize("key", ["m16n8k16.f16.f32.row.col", "m8n8k4.f16.f32.col.row", "m16n8k8.f64.f64.row.col",
                                 "m16n8k64.s4.s32.row.col", "sp.m16n8k32.bf16.f32.row.col"])
def test_analysis_on_a_simulated_gpu(key):
    """The whole measurement pipeline on a CPU stand-in that obeys the PTX formulas."""
    v = _variant(key)
    p = mma_check.plan(v)
    res = mma_check.analyze(p, mma_check.simulate(p))
    assert res["status"] == "pass", res


def test_simulated_wrong_layout_is_reported_slot_by_slot():
    """A GPU whose A fragment had lane 7's values 2 and 3 swapped: the report names exactly those slots."""
    v = _variant("m16n8k16.f16.f32.row.col")
    p = mma_check.plan(v)

    def hw(op):
        s = mma_check.fragment_slots({"A": v.fa, "B": v.fb, "D": v.fd}[op])
        if op == "A":
            s = tuple(x.copy() for x in s)
            for x in s:
                x[7, [2, 3]] = x[7, [3, 2]]
        return s

    res = mma_check.analyze(p, mma_check.simulate(p, hw))
    assert res["status"] == "fail" and not res["e2e"]["ok"]
    assert res["A"]["mismatches"] == 2
    assert {(e["lane"], e["value"]) for e in res["A"]["examples"]} == {(7, 2), (7, 3)}
    assert res["B"]["ok"] and res["D"]["ok"]


def test_d_code_names_every_element():
    for v in mma_check.variants()[0]:
        if v.sparse:
            continue
        A, B = mma_check.d_code(v)
        M, N, K = v.mnk
        D = np.einsum("bmk,bkn->bmn", A, B)
        assert sorted(D.reshape(-1).tolist()) == list(range(M * N * v.batch))
        assert A.max() <= enc.max_code(v.dtype) and B.max() <= enc.max_code(v.dtype) and A.min() >= 0


def test_kernel_source_is_python():
    v = _variant("m16n8k8.f64.f64.row.col")
    src = mma_check.kernel_source([(v, 3, 0, 0), (_variant("sp.m16n8k16.f16.f32.row.col"), 2, 100, 100)])
    compile(src, "<kernel>", "exec")
    assert "mov.b64" in src and "mma.sp::ordered_metadata" in src


def test_wgmma_images_place_every_element_once():
    for m in wgmma_check.modes():
        A, B, ia, ib = wgmma_check.images(m)
        nb = {"f16": 2, "bf16": 2, "tf32": 4, "e4m3": 1}[m["dtype"]]
        assert len(ia) == A.size * nb and len(ib) == B.size * nb  # canonical tiles are dense
        d = wgmma_check.descriptors(m)
        assert len(d["A"]) == m["KT"] // m["K"]


def test_swizzled_shared_formula_by_hand():
    # vec 8, per_phase 1, max_phase 8, rows of 64: row 1 XORs vector index 0 with 1 -> offset 64 + 8
    assert smem_check.expected_swizzled(8, 1, 8, [1, 0], 32, 64)[64] == 72
    # per_phase 2: rows 0 and 1 share phase 0
    assert smem_check.expected_swizzled(8, 2, 4, [1, 0], 32, 64)[64] == 64


_types = st.sampled_from(["f16", "bf16", "tf32", "e4m3", "e5m2", "s8", "u8", "s4", "u4", "f64"])


@given(_types, st.data())
def test_pack_unpack_round_trip(dtype, data):
    hi = enc.max_code(dtype)
    lo = 0 if dtype.startswith("u") else -min(hi, 8)
    vals = data.draw(st.lists(st.integers(lo, min(hi, 15)), min_size=1, max_size=16))
    words = enc.pack_lane(np.array([vals], float), dtype)
    assert enc.unpack_lane(words, dtype, len(vals)).tolist() == [[float(x) for x in vals]]


def test_encode_rejects_inexact_values():
    with pytest.raises(ValueError, match="e4m3"):
        enc.encode([17.0], "e4m3")
    with pytest.raises(ValueError, match="s4"):
        enc.encode([8], "s4")


# ---------------------------------------------------------------------------------------------
# wgmma: mixed majorness, and tiles that start inside their swizzle pattern (base offset)
# ---------------------------------------------------------------------------------------------
needs_wg = pytest.mark.skipif(WGMMA is None or "offsets" not in (WGMMA or {}), reason="no base-offset recording")


@needs_wg
def test_mixed_majorness_recorded_and_explained():
    mixed = WGMMA["mixed"]
    assert {m["name"] for m in wgmma_check.mixed_modes()} == set(mixed)
    pairs = {(r["major"], r.get("major_B")) for r in mixed.values()}
    assert pairs == {("K", "MN"), ("MN", "K")}
    assert all(r["status"] == "pass" and r["max_abs_err"] == 0 for r in mixed.values())
    assert wgmma_check.replay_mixed(WGMMA) == []


@needs_wg
@pytest.mark.parametrize("how", ["sliced", "origin"])
def test_base_offset_descriptors_explained(how):
    """The library's descriptors of a tile starting at +128 .. +896 B inside its pattern read D exactly."""
    assert len(WGMMA["offsets"]) == len(wgmma_check.offset_cases())
    assert wgmma_check.replay_offsets(WGMMA, how) == []


def _row_phases(sw):
    return 8 * sw // 128  # rows of 128 B in the pattern repeat (PTX: 1024 / 512 / 256 B)


@needs_wg
def test_hardware_base_offset_rule_independent_of_library():
    """Read from the recording alone, against the PTX text's rule (no library call):

    * ``abs`` placement (bytes swizzled by their *absolute* shared address, the tile a slice of an
      aligned pattern): D exact iff base_offset = 0 modulo the row phases of the pattern;
    * ``rel`` placement (the pattern itself starts at ``delta``): D exact iff base_offset =
      (delta >> 7) modulo the row phases -- the PTX rule ``(start >> 7) & 7``, where the hardware
      uses only log2(repeat / 128) bits of the field (all 3 for 128 B, 2 for 64 B, 1 for 32 B).
    """
    for name, rec in WGMMA["offsets"].items():
        R = _row_phases(rec["swizzle"])
        ok = {p: [b for b, r in enumerate(rec[p]) if r[0]] for p in ("abs", "rel")}
        assert ok["abs"] == [b for b in range(8) if b % R == 0], name
        assert ok["rel"] == [b for b in range(8) if b % R == (rec["delta"] >> 7) % R], name
        assert (rec["delta"] >> 7) & 7 in ok["rel"], name


@needs_wg
def test_swizzle_xor_uses_absolute_address_bits():
    """Bytes placed relative to an unaligned tile start with base_offset 0 are read wrongly (most of D)."""
    for name, rec in WGMMA["offsets"].items():
        if rec["delta"] % (8 * rec["swizzle"]):
            assert rec["rel"][0][0] is False and rec["rel"][0][1] > 1000, name
            assert rec["abs"][0] == [True, 0], name


@needs_wg
def test_wrong_base_offset_is_caught_in_replay(monkeypatch):
    """A library that always wrote base_offset 0 (or the XOR-free 'delta & 7' of bytes) is contradicted."""
    good = wgmma_check.descriptors

    def bo_zero(m, delta=0, how="sliced"):
        d = good(m, delta, how)
        return {**d, "A": wgmma_check.with_base_offset(d["A"], 0), "B": wgmma_check.with_base_offset(d["B"], 0)}

    monkeypatch.setattr(wgmma_check, "descriptors", bo_zero)
    assert wgmma_check.replay_offsets(WGMMA, "sliced") == []  # 0 is right for a slice
    problems = wgmma_check.replay_offsets(WGMMA, "origin")
    assert len(problems) >= len(WGMMA["offsets"]) - 1  # every case except where delta = 0 mod repeat
    assert any("f16.MN.sw128.at384" in p and "[3]" in p for p in problems)


# ---------------------------------------------------------------------------------------------
# bank conflicts measured
# ---------------------------------------------------------------------------------------------
needs_banks = pytest.mark.skipif(BANKS is None, reason="no bank-conflict recording")


@needs_banks
def test_bank_measurements_agree_with_analyser():
    assert {c["name"] for c in bank_check.cases()} == set(BANKS["results"])
    assert all("ncu" in r for r in BANKS["results"].values()), "the recording should hold Nsight Compute counters"
    assert bank_check.replay(BANKS) == []


@needs_banks
def test_bank_ratios_32way_vs_conflict_free():
    """Independent of the analyser: row-major column reads cost 32x the wavefronts of a row read (ncu)
    and swizzling the tile 128B cuts that 8-fold; the clock agrees in order of magnitude."""
    r = BANKS["results"]
    wf = {n: x["ncu"]["wavefronts"] for n, x in r.items()}
    assert wf["rowmajor.col.2B"] == 32 * wf["rowmajor.row.2B"]
    assert wf["rowmajor.col.2B"] == 8 * wf["sw128.col.2B"]
    assert wf["rowmajor.col.16B"] == 8 * wf["sw128.col.16B"]
    cyc = {n: x["cycles_per_load"] for n, x in r.items()}
    assert cyc["rowmajor.col.2B"] > 8 * cyc["rowmajor.row.2B"]
    assert cyc["rowmajor.col.16B"] > 4 * cyc["sw128.col.16B"]


@needs_banks
def test_wrong_bank_prediction_is_caught_in_replay(monkeypatch):
    good = bank_check.predict

    def wrong(case):
        p = good(case)
        if case["name"] == "sw128.col.2B":  # claim the swizzle made the column read conflict-free
            p = {"wavefronts": 1, "ideal": 1, "ways": 1}
        return p

    monkeypatch.setattr(bank_check, "predict", wrong)
    problems = bank_check.replay(BANKS)
    assert problems and all(p.startswith("sw128.col.2B") for p in problems)
    assert any("ncu counted 64" in p for p in problems)
