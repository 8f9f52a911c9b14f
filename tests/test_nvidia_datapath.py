"""The PTX ISA's tcgen05 data-path layouts (A-G) as formulas, proven against every TMEM layout of tmem_accum."""

from __future__ import annotations

import pytest

from layoutalg import LayoutError
from layoutalg.nvidia.blackwell.datapath import (
    DATA_PATHS, cute_accumulator, data_path, differences, prove, prove_a, prove_scale_factors,
)
from layoutalg.nvidia.blackwell.tmem_accum import tmem_frg
from layoutalg.nvidia.blackwell.umma import umma_atom
from layoutalg.verify import verify


@pytest.mark.parametrize("lid", [k for k in DATA_PATHS if k != "C"])
@pytest.mark.parametrize("n", [64, 128, 256])
@pytest.mark.parametrize("bits", [32, 16])
def test_accumulator_equals_the_isa_formula(lid, n, bits):
    v = prove(lid, n, bits)
    assert v, v.counterexample


def test_table_lookup():
    cases = {(256, 2, False, False): "A", (128, 2, False, False): "B", (128, 2, True, False): "C",
             (128, 1, False, False): "D", (128, 1, True, True): "D", (64, 1, False, True): "E",
             (64, 1, True, False): "F", (32, 1, False, True): "G"}
    for (m, g, sp, ws), lid in cases.items():
        assert data_path(m, g, sparse=sp, ws=ws).layout_id == lid
    assert prove("D", 128, ws=True)  # M = 128 .ws is layout D too
    for bad in ((96,), (32, 1), (64, 2), (128, 2, "x")):
        with pytest.raises(LayoutError):
            data_path(*bad[:2], sparse=bad[2] if len(bad) > 2 else False, ws=False) if len(bad) > 1 else data_path(*bad)
    for bad in ("Z", 3, None):
        with pytest.raises(LayoutError):
            prove(bad, 64)
    with pytest.raises(LayoutError):
        DATA_PATHS["B"].formula(63)
    with pytest.raises(LayoutError):
        DATA_PATHS["D"].formula(64, align=16)


def test_layout_f_second_accumulator_is_the_16_lane_alignment():
    """The ISA: layouts F and C may start at lane 0 or 16; CuTe's interleaved second M = 64 accumulator is the 16."""
    L = tmem_frg(((64, 128), 2, 1))
    f = DATA_PATHS["F"]
    for align, rep in ((0, 0), (16, 1)):
        assert f.formula(128, align=align) == f"65536*(32*(m // 16) + m % 16{' + 16' if align else ''}) + 1*(n)"
        for m in range(64):
            for n in range(0, 128, 7):
                assert L((m, n), rep, 0) == 65536 * (32 * (m // 16) + m % 16 + align) + n, (align, m, n)


@pytest.mark.parametrize("name,k", [
    ("SM100_MMA_F16BF16_TS<bf16,bf16,float,64,64,K,K>", 16),
    ("SM100_MMA_F16BF16_TS<bf16,bf16,float,128,128,K,K>", 32),
    ("SM100_MMA_TF32_TS<tf32,tf32,float,64,64,K,K>", 8),
    ("SM100_MMA_S8_TS<s8,s8,int32_t,128,64,K,K>", 64),
    ("SM100_MMA_F16BF16_2x1SM_TS<bf16,bf16,float,256,64,K,K>", 16),
])
def test_tmem_a_equals_the_data_path_of_d(name, k):
    v = prove_a(umma_atom(name), k)
    assert v, v.counterexample


@pytest.mark.parametrize("mn,vs,nsf,op", [(128, 32, 1, "A"), (128, 32, 4, "A"), (128, 16, 4, "A"), (256, 16, 4, "A"),
                                           (128, 32, 4, "B"), (256, 32, 2, "B")])
def test_scale_factors_are_duplicated_to_all_lane_partitions(mn, vs, nsf, op):
    v = prove_scale_factors(mn, vs, nsf, op)
    assert v, v.counterexample


def test_named_differences_show_both_sides():
    v = prove("C", 128)
    assert not v and "the layout gives" in str(v.counterexample) and "the formula gives" in str(v.counterexample)
    # CuTe's layout C accumulator is exactly the ISA's layout B (2x2)
    assert verify(cute_accumulator("C", 128), formula=DATA_PATHS["B"].formula(128), inputs="m, n")
    assert not prove_a(umma_atom("SM100_MMA_F16BF16_2x1SM_TS<bf16,bf16,float,128,64,K,K>"), 16)
    text = "\n".join(differences())
    assert "layout C" in text and "tmem_frg_2sm" in text and "Duplicated" in text and "'2x3'" in text


@pytest.mark.parametrize("n", [64, 128, 256])
def test_cute_2sm_m32_fragment_is_the_1x4_organization(n):
    """CuTe's tmem_frg_2sm for 32 rows per CTA (tmem_accum's 'TS 2x2 A' case) is the ISA's 1x4 organization
    (layout G's formula), though no cta_group::2 instruction has M = 64 in the ISA's table."""
    L = tmem_frg(((32, n), 1, 1), 32, 32, 2)[0]
    v = verify(L, formula=DATA_PATHS["G"].formula(n), inputs="m, n")
    assert v, v.counterexample
