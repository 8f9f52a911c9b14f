"""synthesize_swizzle(): the search, its bank model, the three kernels, and the H100 recording.

Oracles: :func:`layoutalg.banks.address_report` (the analyser, per instruction) for every number
the fast model ranks with; CUTLASS's own hand-picked layout for the same accesses (the CuTe
``sgemm_sm80`` tutorial, built by CuTe C++ where a compiler is available); Nsight Compute on an
H100 (tests/data/hardware/synth.json, replayed here).
"""

from __future__ import annotations


import numpy as np
import pytest
from budget import cpu_budget
from hypothesis import given, settings
from hypothesis import strategies as st

from layoutalg import ComposedLayout, Layout, Swizzle, composition, explain, synthesize_swizzle, tile_to_shape
from layoutalg.errors import LayoutError
from layoutalg.synth import copy_access
from layoutalg.gpu import synth_check
from layoutalg.gpu.common import load_recording
from layoutalg.synth import (
    KERNELS,
    Access,
    apply_map,
    layout_of_map,
    access_plan,
    candidate_swizzles,
    XorMap,
    as_access,
    block_transpose_read,
    kernel_accesses,
    ldmatrix_copy,
    per_access,
    row_copy,
    wavefronts,
)


# ------------------------------------------------------------------------------------------
# the fast bank model is the analyser's
# ------------------------------------------------------------------------------------------
ACCESSES = [
    row_copy((64, 64), "f16"),
    ldmatrix_copy((64, 64)),
    ldmatrix_copy((64, 64), num=2),
    ldmatrix_copy((64, 64), num=1, order="col-first"),
    ldmatrix_copy((64, 64), num=2, order="col-first"),
    block_transpose_read((64, 64), "f16", word_bytes=8),
    block_transpose_read((64, 64), "f16", word_bytes=4),
    Access("column 2B", Layout((32, 1), (1, 0)), 2),
]


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(range(len(ACCESSES))), st.integers(1, 4), st.integers(0, 6), st.integers(-8, 8))
def test_fast_model_equals_the_analyser(k, B, M, S):
    a = ACCESSES[k]
    if abs(S) < B:
        S = B
    sw = Swizzle(B, M, S)
    base = Layout((64, 64), (64, 1))
    if sw.zzz_mask >= 4096 or sw.yyy_mask >= 4096:
        return
    L = ComposedLayout(sw, 0, base)
    try:
        want_wf, want_ideal = per_access(L, [a], 2)
    except LayoutError:  # the swizzle splits a vector: not a candidate
        return
    p = access_plan(base, a, 2)
    wf, ideal = wavefronts(sw(p.offsets)[None], p.phase_active, 2, a.vector_bytes)
    assert (int(wf.sum()), int(ideal.sum())) == (want_wf[0], want_ideal[0])


def test_ldmatrix_x1_x2_read_only_their_lanes():
    base = Layout((64, 64), (64, 1))
    reps = {n: per_access(base, [ldmatrix_copy((64, 64), num=n)], 2) for n in (1, 2, 4)}
    plans = {n: access_plan(base, ldmatrix_copy((64, 64), num=n), 2) for n in (1, 2, 4)}
    # the tile is read once whatever .num: 64 matrices of 8 rows, each 8 wavefronts unswizzled (ideal 1);
    # x1 needs four times the instructions of x4, whose lanes 8-31 are not read
    assert {r for r in reps.values()} == {((512,), (64,))}
    assert plans[1].offsets.shape[0] == 2 * plans[2].offsets.shape[0] == 4 * plans[4].offsets.shape[0]
    assert plans[1].phase_active.sum(axis=1).tolist() == [1] * plans[1].offsets.shape[0]


# ------------------------------------------------------------------------------------------
# the three kernels
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", KERNELS)
def test_kernels_synthesised_never_worse_and_at_the_ideal(name):
    k = kernel_accesses(name)
    s = synthesize_swizzle(k.shape, k.dtype, k.accesses)
    for j in range(len(k.accesses)):
        assert s.best.wavefronts[j] <= s.no_swizzle.wavefronts[j]
        assert s.best.wavefronts[j] <= s.best_atom.wavefronts[j]
    assert s.best.wavefronts == s.lower_bound  # every access at its ideal
    assert s.best.total < s.no_swizzle.total
    # the numbers are the analyser's, recomputed independently here
    assert per_access(s.best.layout, k.accesses, {"f16": 2, "e4m3": 1}[k.dtype])[0] == s.best.wavefronts


def test_fp8_transpose_beats_every_cute_atom_and_padding():
    k = kernel_accesses("fp8_transpose")
    s = synthesize_swizzle(k.shape, k.dtype, k.accesses)
    assert str(s.best.layout) == "Sw<2,5,3> o _0 o (64,64):(64,1)"
    assert s.best.total < s.best_atom.total and s.best.total < s.padding.total
    assert s.best_atom.layout.outer == Swizzle(2, 4, 3)  # CuTe's 64B atom: 2-way on the block reads
    assert s.best_atom.wavefronts[1] == 2 * s.best.wavefronts[1]
    assert "^" in explain(s.best.layout).texts[0]


def test_ampere_gemm_answer_is_cutes_64b_atom():
    k = kernel_accesses("ampere_gemm_a")
    s = synthesize_swizzle(k.shape, k.dtype, k.accesses)
    assert s.best.atom.startswith("Layout_K_SW64_Atom") and "wgmma" in s.best.accepted_by and "tma" in s.best.accepted_by
    assert str(s.best.layout) == "Sw<2,3,3> o _0 o (128,32):(32,1)"


def _tutorial_layout():
    """CuTe's examples/cute/tutorial/sgemm_sm80.cu: Swizzle<3,3,3> o (8,(8,8)):(8,(1,64)) tiled to 128x64."""
    atom = composition(Swizzle(3, 3, 3), Layout((8, (8, 8)), (8, (1, 64))))
    return tile_to_shape(atom, (128, 64))


def test_cutlass_tutorial_layout_for_the_same_accesses():
    """CUTLASS's sgemm_sm80 tutorial picks its smem layout by hand for 16x8 threads of 16-byte cp.async
    (k-major) and LDSM x4: the analyser finds it conflict-free, and the synthesiser matches it."""
    acc = [row_copy((128, 64), "f16"), ldmatrix_copy((128, 64))]
    tut = _tutorial_layout()
    wf, ideal = per_access(tut, acc, 2)
    assert wf == ideal
    s = synthesize_swizzle((128, 64), "f16", acc)
    assert s.best.total == sum(wf) == sum(s.lower_bound)


def test_tutorial_layout_is_cutes_own():
    from layoutalg.interop import cutecpp

    why = cutecpp.available()
    if why is not None:
        pytest.skip(f"CuTe C++ not available: {why}")
    src = ("auto atom = composition(Swizzle<3,3,3>{}, Layout<Shape<_8,Shape<_8,_8>>, Stride<_8,Stride<_1,_64>>>{});\n"
           "auto sA = tile_to_shape(atom, make_shape(Int<128>{}, Int<64>{}));\n"
           'for (int c = 0; c < 64; ++c) for (int r = 0; r < 128; ++r) printf("%d ", int(sA(r, c)));')
    (out,) = cutecpp.run_snippets([src])
    cute = np.array([int(x) for x in out.split()]).reshape(64, 128).T
    r, c = np.indices((128, 64))
    assert np.array_equal(np.asarray(_tutorial_layout()(r, c)), cute)


def test_128x64_three_accesses_under_10_seconds():
    acc = [row_copy((128, 64), "f16"), ldmatrix_copy((128, 64)),
           ldmatrix_copy((128, 64), trans=True, order="col-first", name="ldmatrix.x4.trans (B)")]
    with cpu_budget() as t:  # CPU time, the collector paused (tests/budget.py)
        s = synthesize_swizzle((128, 64), "f16", acc)
    assert t.seconds < 10
    assert s.best.wavefronts == s.lower_bound


# ------------------------------------------------------------------------------------------
# the wider families: compositions of two and F2 xor maps
# ------------------------------------------------------------------------------------------
def test_pairs_and_f2_search_when_no_single_reaches_the_ideal():
    # 1-byte column reads of an fp8 tile while 16-byte row stores pin the low 4 bits: no map reaches 1 wavefront
    col = Access("column bytes", Layout((32, 64), (1, 64)), 1)
    acc = [row_copy((64, 64), "e4m3"), col]
    s = synthesize_swizzle((64, 64), "e4m3", acc)
    fams = " ".join(n for n, _ in s.searched)
    assert "compositions" in fams and "F2-linear" in fams
    assert s.best.total > sum(s.lower_bound)
    assert s.best.wavefronts[1] == 4 * 64  # 8 bank groups for 32 rows of one column: 4-way at best
    assert s.best.wavefronts[1] < s.no_swizzle.wavefronts[1]


def test_xor_map_to_layout_through_the_linear_bridge():
    base = Layout((64, 64), (64, 1))
    m = XorMap(((7, 0b0110000), (9, 0b1000000), (10, 0b0010000)))
    L = layout_of_map(m, base)
    r, c = np.indices((64, 64))
    assert np.array_equal(np.asarray(L(r, c)), apply_map(m, np.asarray(base(r, c))))
    single = layout_of_map(XorMap(((6, 8), (7, 16), (8, 32))), base)  # = Sw<3,3,3>: from_linear finds it
    assert isinstance(single, ComposedLayout) and single.outer == Swizzle(3, 3, 3)


def test_swizzle_family_stays_inside_the_tile():
    sws = candidate_swizzles(12, 3)
    assert all(s.M >= 3 and s.yyy_mask < 4096 and s.zzz_mask < 4096 for s in sws)
    assert Swizzle(3, 3, 3) in sws and Swizzle(2, 5, 3) in sws


# ------------------------------------------------------------------------------------------
# constraints, reports, vocabulary, errors
# ------------------------------------------------------------------------------------------
def test_constraints_keep_what_tma_or_wgmma_accept():
    k = kernel_accesses("fp8_transpose")
    s = synthesize_swizzle(k.shape, k.dtype, k.accesses, constraints=("tma",))
    assert "tma" in s.best.accepted_by and s.best.total == s.best_atom.total
    w = synthesize_swizzle(k.shape, k.dtype, k.accesses, constraints=["wgmma"])
    assert "wgmma" in w.best.accepted_by
    with pytest.raises(LayoutError, match="constraints"):
        synthesize_swizzle(k.shape, k.dtype, k.accesses, constraints=("bogus",))


def test_summary_table_lists_the_four_layouts():
    k = kernel_accesses("attention_v")
    text = str(synthesize_swizzle(k.shape, k.dtype, k.accesses))
    for word in ("synthesised", "no swizzle", "Layout_K_SW128_Atom", "padding", "searched:", "offset ="):
        assert word in text


def test_as_access_vocabulary():
    tv = Layout((32, 8), (1, 64))
    assert as_access((tv, 16)).vector_bytes == 16
    assert as_access(("mine", tv, 16)).name == "mine"

    class Partition:  # what a TiledCopy partition will look like
        tv_layout = tv
        vector_bytes = 16
        name = "tiled copy"

    assert as_access(Partition()).name == "tiled copy"
    with pytest.raises(LayoutError, match="not an Access"):
        as_access(42)


@pytest.mark.parametrize(
    "call, msg",
    [
        (lambda: synthesize_swizzle((64, 64), "f16", []), "no accesses"),
        (lambda: synthesize_swizzle((64,), "f16", [row_copy((64, 64), "f16")]), "pair"),
        (lambda: synthesize_swizzle((64, 64), "f17", [row_copy((64, 64), "f16")]), "dtype"),
        (lambda: synthesize_swizzle((32, 64), "f16", [row_copy((64, 64), "f16")]), "outside"),
        (lambda: synthesize_swizzle((64, 64), "f16", [Access("col16", Layout((32, 8), (1, 1)), 16)]), "contiguous"),
        (lambda: ldmatrix_copy((20, 16)), "multiple"),
        (lambda: synthesize_swizzle((1024, 1024), "f16", [row_copy((64, 64), "f16")]), "shared memory"),
        (lambda: synthesize_swizzle((64, 64), "f16", [Access("16 threads", Layout((16, 8), (1, 64)), 16)]), "warps"),
        (lambda: ldmatrix_copy((16, 16), num=3), "num"),
        (lambda: row_copy((64, 60), "f16"), "divide"),
        (lambda: Access("x", Layout(32, 1), 16), "rank-2"),
        (lambda: Access("x", Layout((32, 1), (1, 0)), 3), "vector_bytes"),
    ],
)
def test_bad_input(call, msg):
    with pytest.raises(LayoutError, match=msg):
        call()


def test_non_power_of_two_tile_gets_padding_and_atoms_only():
    acc = [row_copy((48, 64), "f16", threads=64), ldmatrix_copy((48, 64))]
    s = synthesize_swizzle((48, 64), "f16", acc)
    assert any("power-of-two" in n for n, _ in s.searched)
    assert s.best.total <= s.no_swizzle.total


# ------------------------------------------------------------------------------------------
# the H100 recording
# ------------------------------------------------------------------------------------------
SYNTH = load_recording("synth")
needs = pytest.mark.skipif(SYNTH is None, reason="no synth recording")


@needs
def test_recording_says_where_it_comes_from_and_replays():
    env = SYNTH["environment"]
    assert env["gpu"].startswith("NVIDIA H100") and env["capability"] == "sm_90" and env["driver"] and env["date"]
    assert {c["name"] for c in synth_check.cases()} == set(SYNTH["results"])
    assert synth_check.replay(SYNTH) == []


@needs
def test_ncu_confirms_synthesised_never_worse_on_every_access():
    """Independent of the analyser: the counters alone say synthesised <= best atom and <= no swizzle."""
    res = SYNTH["results"]
    for r in res.values():
        if r["layout"] != "synthesised":
            continue
        _, mine = synth_check.measured(r)
        for other in ("best_atom", "no_swizzle"):
            _, theirs = synth_check.measured(res[r["name"].replace(".synthesised.", f".{other}.")])
            assert mine <= theirs, r["name"]
    # and it is strictly better where CuTe's atom is not optimal: the fp8 transpose's block reads
    fp8 = {r["layout"]: synth_check.measured(r)[1] for r in res.values() if r["kernel"] == "fp8_transpose" and r["op"] == "lds32"}
    assert fp8["synthesised"] * 2 == fp8["best_atom"] and fp8["synthesised"] * 4 == fp8["no_swizzle"]


@needs
def test_ldgsts_across_lines_costs_more_than_the_bank_model():
    """What the H100 showed: cp.async into padded rows (phases straddling 128-byte lines) takes more
    wavefronts than the bank model, while st.shared.v4 at the same addresses takes exactly the model's."""
    res = SYNTH["results"]
    straddle = [r for r in res.values() if r["op"] == "cp.async16" and not synth_check.ldgsts_aligned(r["addresses"])]
    assert {r["layout"] for r in straddle} == {"padding"}
    for r in straddle:
        sts = res[r["name"].replace("cp.async16", "sts128")]
        assert synth_check.measured(r)[1] > r["predicted"]["wavefronts"]
        assert synth_check.measured(sts)[1] == sts["predicted"]["wavefronts"]
    aligned = [r for r in res.values() if r["op"] == "cp.async16" and synth_check.ldgsts_aligned(r["addresses"])]
    assert len(aligned) == 9 and all(synth_check.measured(r)[1] == r["predicted"]["wavefronts"] for r in aligned)


@needs
def test_wrong_prediction_is_caught_in_replay(monkeypatch):
    good = synth_check.predict_text

    def wrong(rec):
        p = good(rec)
        if rec["name"] == "fp8_transpose.best_atom.1.lds32":
            p = {**p, "wavefronts": p["wavefronts"] // 2}  # claim CuTe's atom were conflict-free
        return p

    monkeypatch.setattr(synth_check, "predict_text", wrong)
    problems = synth_check.replay(SYNTH)
    assert problems and all(p.startswith("fp8_transpose.best_atom.1.lds32") for p in problems)


# --- TiledCopy partitions as accesses (issue 11's copies, analysed by issue 11's analyze_copy) ---------------
def _copies():
    from layoutalg.nvidia.atoms import copy_atom, mma_atom
    from layoutalg.tiled import make_tiled_copy, make_tiled_copy_A, make_tiled_copy_B, make_tiled_mma

    mma = make_tiled_mma(mma_atom("SM80_16x8x16_F32F16F16F32_TN"), (2, 2, 1), (32, 32, 16))
    out = []
    for name in ("SM75_U32x4_LDSM_N", "SM75_U32x2_LDSM_N", "SM75_U32x1_LDSM_N", "SM90_U32x4_STSM_N"):
        out.append((make_tiled_copy_A(copy_atom(name, "f16"), mma), (64, 32)))
        out.append((make_tiled_copy_B(copy_atom(name, "f16"), mma), (32, 32)))
    for bits, val in ((128, (1, 8)), (64, (1, 4)), (32, (1, 2))):
        atom = copy_atom(f"SM80_CP_ASYNC_CACHEALWAYS<uint{bits}_t>", "f16")
        out.append((make_tiled_copy(atom, Layout((16, 8), (8, 1)), Layout(val)), (64, 64)))
    return out


def test_copy_access_counts_what_analyze_copy_counts():
    from layoutalg.banks import analyze_copy

    for tc, shape in _copies():
        a = copy_access(tc, shape, "f16")
        for L in (Layout(shape, (shape[1], 1)), ComposedLayout(Swizzle(2, 3, 3), 0, Layout(shape, (shape[1], 1))),
                  ComposedLayout(Swizzle(3, 3, 3), 0, Layout(shape, (shape[1], 1)))):
            r = analyze_copy(tc, L)
            assert per_access(L, [a], 2) == ((r.wavefronts,), (r.ideal,)), (tc.atom.name, str(L))


def test_synthesis_takes_tiled_copies():
    from layoutalg.nvidia.atoms import copy_atom, mma_atom
    from layoutalg.tiled import make_tiled_copy, make_tiled_copy_A, make_tiled_mma

    mma = make_tiled_mma(mma_atom("SM80_16x8x16_F32F16F16F32_TN"), (2, 2, 1), (64, 64, 16))
    loads = make_tiled_copy_A(copy_atom("SM75_U32x4_LDSM_N", "f16"), mma)
    stores = make_tiled_copy(copy_atom("SM80_CP_ASYNC_CACHEALWAYS<uint128_t>", "f16"), Layout((16, 8), (8, 1)), Layout((1, 8)))
    s = synthesize_swizzle((64, 64), "f16", [stores, loads])
    assert s.best.wavefronts == s.best.ideal and s.no_swizzle.wavefronts[1] > s.best.wavefronts[1]
    with pytest.raises(LayoutError, match="not a TiledCopy"):
        copy_access(Layout(4), (64, 64), "f16")
