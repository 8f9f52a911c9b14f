"""Sparse metadata E in TMEM: ``umma_tmem_e`` against CuTe C++ 4.2's ``FrgTypeE`` as CUTLASS's collective
allocates it, and ``tmem_e_frg`` against the PTX ISA's text (``datapath.metadata_formula``).

``tests/data/cute/tmem_e.json`` (``tests/cute_tmem_e_cases.py``) holds, for 40 sparse SM100 atoms and CTA tiles,
what CuTe prints for ``make_tensor<FrgTypeE>(partition_shape_A(tiled_mma, (M, lcm(K, TensorEAtomK))))`` and the
config's ``TensorEAtomK``; CuTe's refusals (64 rows per CTA) must be LayoutErrors here. Two cases are compiled live
each run. None of it ran on sm_100 hardware.
"""

from __future__ import annotations

import pytest

import cute_tmem_e_cases as C
from layoutalg import LayoutError
from layoutalg.nvidia.blackwell import datapath as dp
from layoutalg.nvidia.blackwell.tmem_accum import E_ATOM_K, E_BITS, tmem_e_frg, umma_tmem_e
from layoutalg.nvidia.blackwell.umma import umma_atom
from layoutalg.verify import verify

REC = C.REC.data
needs = C.REC.needs
_cases = C.cases  # built on first use (cached), by the worker that runs these tests


def mine(case) -> str:
    return str(umma_tmem_e(*case))


@needs
def test_recording_is_current():
    assert REC["cute_version"] == "4.2.0" and REC["date"] and "g++" in REC["how"]
    assert sorted(REC["cases"]) == sorted(C.key(c) for c in _cases())
    assert not C.REC.stale({C.key(c): C.snippet(c) for c in _cases()})


@needs
def test_umma_tmem_e_is_cutes_collective_frg_type_e():
    bad, refusals = [], 0
    for case in _cases():
        rec = REC["cases"][C.key(case)]
        if "refused" in rec:
            refusals += 1
            assert "Only 128 implemented" in rec["refused"], rec
            with pytest.raises(LayoutError, match="M = 128 only"):
                mine(case)
            continue
        got = mine(case)
        if got != C.norm(rec["L"]):
            bad.append((C.key(case), got, C.norm(rec["L"])))
        a = umma_atom(case[0])
        assert E_ATOM_K[E_BITS[a.kind]] == int(rec["EK"]), case
    assert not bad, "\n".join(map(str, bad[:10])) + f"\n({len(bad)} of {len(_cases())})"
    assert 0 < refusals < len(_cases())


@needs
def test_cases_cover_every_family_and_reuse():
    fams = {c[0].split("<")[0] for c in _cases()}
    assert len(fams) == 12  # TF32, F16BF16, S8, F8F6F4, MXF8F6F4, MXF4NVF4; 1SM and 2x1SM
    ok = [c for c in _cases() if "refused" not in REC["cases"][C.key(c)]]
    # tiles whose K is below the config's TensorEAtomK (E covers more K than the tile: the UTCCP reuse) are in
    assert any(c[1][1] < int(REC["cases"][C.key(c)]["EK"]) for c in ok)
    assert any(c[1][0] > umma_atom(c[0]).M for c in ok)  # a tile of two atoms in M


@C.REC.live
def test_live_sample():
    from layoutalg.interop import cutecpp

    pick = C.REC.sample([c for c in _cases() if "refused" not in REC["cases"][C.key(c)]], 2)
    out = cutecpp.run_snippets([C.snippet(c) for c in pick], headers=C.HEADERS, chunk=len(pick))
    for c, o in zip(pick, out):
        assert isinstance(o, str), o
        assert C.parse(o) == {k: v for k, v in REC["cases"][C.key(c)].items() if k != "sha1"}
        assert mine(c) == C.norm(C.parse(o)["L"])


def test_sub_byte_f8f6f4_atoms_use_the_8bit_metadata():
    """CuTe's F8F6F4 / MXF8F6F4 sparse atoms take ``FrgTypeE = tmem_e_frg<uint8_t>`` whatever A's width."""
    for name in ("SM100_MMA_F8F6F4_SS_SPARSE<e2m1,e3m2,float,128,112,K,K>",
                 "SM100_MMA_F8F6F4_SS_SPARSE<e4m3,e4m3,float,128,112,K,K>"):
        assert str(umma_tmem_e(name, (128, 128))) == "((128,64),1,2):((2097152,1),0,64)"


def test_umma_tmem_e_refusals():
    for args, why in ((("SM100_MMA_F16BF16_SS<f16,f16,float,128,128,K,K>",), "not a sparse atom"),
                      (("SM100_MMA_F16BF16_SS_SPARSE<f16,f16,float,128,128,K,K>", (128, 48)), "not a multiple"),
                      (("SM100_MMA_F16BF16_SS_SPARSE<f16,f16,float,128,128,K,K>", (64, 32)), "not a multiple"),
                      (("banana",), "banana")):
        with pytest.raises(LayoutError, match=why):
            umma_tmem_e(*args)


# --- against the ISA's text ------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["i8", "f8f6f4", "mxf8f6f4", "mxf4", "mxf4nvf4"])
@pytest.mark.parametrize("cta_group", [1, 2])
def test_metadata_of_the_8bit_and_fp4_kinds_is_the_isas(kind, cta_group):
    v = dp.prove_metadata(kind, cta_group)
    assert v and v.method == "symbolic", v


@pytest.mark.parametrize("kind", ["f16", "tf32"])
def test_metadata_of_f16_and_tf32_is_a_named_difference(kind):
    """Both sides shown: the ISA's text read as for the other kinds fails with a counterexample, CuTe's packing by
    halves is proven as its own formula, and ``differences()`` names it with both."""
    v = dp.prove_metadata(kind)
    assert not v and "the formula gives" in str(v.counterexample)
    L = tmem_e_frg(((128, {"f16": 32, "tf32": 16}[kind]), 1, 1), E_BITS[kind])
    assert verify(L[0], formula=dp.cute_metadata_formula(kind), inputs="m, k")
    named = [d for d in dp.differences() if d.startswith("sparsity metadata of kind::" + kind)]
    assert len(named) == 1 and dp.metadata_formula(kind) in named[0] and dp.cute_metadata_formula(kind) in named[0]


def test_metadata_formula_refusals():
    for f, args in ((dp.metadata_formula, ("f32",)), (dp.prove_metadata, ("f16", 3)),
                    (dp.cute_metadata_formula, ("i8",))):
        with pytest.raises(LayoutError):
            f(*args)
    with pytest.raises(LayoutError):
        dp.metadata_formula("f16", 64, 2)  # no data path M = 64 with two CTAs
