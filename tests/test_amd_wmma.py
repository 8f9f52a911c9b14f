"""WMMA register maps (layoutalg.amd.rdna) against the ISA's rules and AMD's Matrix Instruction Calculator.

Every instruction the calculator lists on rdna3 and rdna4 (``v_wmma``, RDNA4's sparse ``v_swmmac``),
in wave32 and wave64: A, B and D identical to the recorded register maps
(tests/data/amd/calculator_<arch>.json), register names and bits included; every fragment equal to
its ISA formula; a live re-run (OPSEL included) where the calculator is present.
"""

from __future__ import annotations

import json
import pathlib

import pytest

from layoutalg.amd import WMMA_INSTRUCTIONS, families, wmma, wmma_for
from layoutalg.amd.common import i, lane
from layoutalg.errors import LayoutError
from layoutalg.verify import verify

import amd_calculator_cases as calc

DATA = pathlib.Path(__file__).resolve().parent / "data" / "amd"
RDNA = ("rdna3", "rdna4")
RECORDED = {arch: json.loads((DATA / f"calculator_{arch}.json").read_text()) for arch in RDNA}
CASES = [(arch, name, w) for arch in RDNA for name in RECORDED[arch]["instructions"] for w in (32, 64)]


def test_the_tables_list_exactly_the_calculators_instructions() -> None:
    for arch in RDNA:
        assert set(RECORDED[arch]["instructions"]) == set(WMMA_INSTRUCTIONS[arch]), arch
    assert [sum(1 for a, _, _ in CASES if a == arch) for arch in RDNA] == [12, 44]  # 6 and 22 instructions, 2 waves


@pytest.mark.parametrize("arch,name,wave", CASES, ids=[f"{a}-{n}-w{w}" for a, n, w in CASES])
def test_identical_to_the_calculator(arch: str, name: str, wave: int) -> None:
    w = wmma(name, arch)
    rec = RECORDED[arch]["instructions"][name][f"wave{wave}"]
    for op in ("A", "B", "D"):
        f = w.fragment(op, wave)
        calc.compare(f, rec[op])
        f.check()


@pytest.mark.parametrize("arch,name", [("rdna3", "v_wmma_f16_16x16x16_f16"), ("rdna4", "v_wmma_f32_16x16x16_f16"),
                                       ("rdna4", "v_wmma_i32_16x16x16_iu8"), ("rdna4", "v_swmmac_i32_16x16x64_iu4")])
def test_verify_proves_the_formula(arch: str, name: str) -> None:
    for wave in (32, 64):
        for f in wmma(name, arch).fragments(wave).values():
            v = verify(f, f.formula, (lane, i))
            assert v and v.method == "symbolic", (f.name, wave, v)


def test_rdna4_16_bit_inputs_alternate_k_chunks_between_the_halves() -> None:
    a = wmma("v_wmma_f32_16x16x16_f16", "rdna4").fragment("A", 32)
    assert [a.coords(0, v)[1] for v in range(8)] == [0, 1, 2, 3, 8, 9, 10, 11]
    assert [a.coords(16, v)[1] for v in range(8)] == [4, 5, 6, 7, 12, 13, 14, 15]
    b = wmma("v_wmma_i32_16x16x16_iu8", "rdna4").fragment("B", 64)  # 8-bit: lanes 32-63 take K 4-7 of lanes 0-15
    assert [b.coords(32, v)[0] for v in range(4)] == [4, 5, 6, 7]
    half = wmma("v_wmma_i32_16x16x16_iu4", "rdna4").fragment("A", 64)  # one VGPR a lane: lanes 32-63 hold nothing
    assert half.num_threads == 32
    with pytest.raises(LayoutError, match="use wave=32"):
        wmma("v_wmma_i32_16x16x16_iu4", "rdna4").atom(64)


def test_names_and_errors() -> None:
    assert wmma("V_WMMA_F32_16X16X16_F16", "gfx1100") == wmma("v_wmma_f32_16x16x16_f16", "rdna3")
    assert wmma("v_wmma_f32_16x16x16_f16").arch == "rdna4"  # the newest RDNA having it
    assert wmma("V_SWMMAC_I32_16X16X64_IU4").row.sparse
    assert wmma_for((16, 16, 16), "fp16", "rdna3").name == "v_wmma_f32_16x16x16_f16"
    assert wmma_for((16, 16, 16), "bf16", "gfx1100", out="bf16").name == "v_wmma_bf16_16x16x16_bf16"
    with pytest.raises(LayoutError, match="did you mean"):
        wmma("v_wmma_f32_16x16x16_f17")
    with pytest.raises(LayoutError, match="not 32 or 64"):
        wmma("v_wmma_f32_16x16x16_f16").fragment("A", wave=16)
    with pytest.raises(LayoutError, match="WMMA is RDNA's"):
        wmma("v_wmma_f32_16x16x16_f16", "cdna3")
    with pytest.raises(LayoutError, match="opsel_hi"):
        wmma("v_wmma_f32_16x16x16_f16", "rdna3").fragment("D", opsel_hi=True)


def test_opsel_moves_rdna3_16_bit_accumulators_to_the_high_half() -> None:
    f = wmma("v_wmma_f16_16x16x16_f16", "rdna3").fragment("D", 32, opsel_hi=True)
    assert f.register_bits(3) == ("v3", 16, 16) and f.num_registers == 8
    g = wmma("v_wmma_f16_16x16x16_f16", "rdna4").fragment("D", 32)  # RDNA4 packs them
    assert g.register_bits(3) == ("v1", 16, 16) and g.num_registers == 4


def test_atoms_and_families() -> None:
    for arch in RDNA:
        for wave in (32, 64):
            atom = wmma("v_wmma_i32_16x16x16_iu8", arch).atom(wave)
            assert atom.shape_mnk == (16, 16, 16) and atom.num_threads == wave
    sparse = wmma("v_swmmac_f32_16x16x32_f16", "rdna4").atom(32)
    assert sparse.a_k_compression == 2 and sparse.shape_mnk == (16, 16, 32)
    fam = [f for f in families() if f.label.startswith("v_wmma.")]
    assert [f.arch for f in fam] == ["rdna3", "rdna4", "gfx1250"] and [len(f.names()) for f in fam] == [6, 22, 26]
    assert fam[0].build("V_WMMA_F32_16X16X16_BF16") is not None and fam[0].build("v_mfma_f32_32x32x8_f16") is None


@pytest.mark.skipif(calc.calculator_path() is None, reason=f"${calc.ENV} does not name AMD's matrix_calculator.py")
@pytest.mark.parametrize("arch,name,wave,opsel", [("rdna3", "v_wmma_f16_16x16x16_f16", 32, 4),
                                                  ("rdna3", "v_wmma_bf16_16x16x16_bf16", 64, 4),
                                                  ("rdna4", "v_wmma_i32_16x16x32_iu4", 64, 0),
                                                  ("rdna4", "v_swmmac_f16_16x16x32_f16", 32, 0)])
def test_live_calculator_sample(arch: str, name: str, wave: int, opsel: int) -> None:
    path = calc.calculator_path()
    assert path is not None
    w = wmma(name, arch)
    extra = ("--opsel", str(opsel)) if opsel else ()
    calc.compare(w.fragment("D", wave, opsel_hi=bool(opsel & 4)), calc.operand(path, arch, name, "D", wave, extra))
    for op in ("A", "B"):
        calc.compare(w.fragment(op, wave), calc.operand(path, arch, name, op, wave))


@pytest.mark.parametrize("arch,name,wave", [("rdna3", "v_wmma_f32_16x16x16_f16", 32), ("rdna3", "v_wmma_i32_16x16x16_iu4", 64),
                                            ("rdna4", "v_wmma_f32_16x16x16_f16", 32), ("rdna4", "v_wmma_i32_16x16x32_iu4", 64),
                                            ("rdna4", "v_wmma_f32_16x16x16_fp8_bf8", 64)])
def test_the_atom_computes_its_product(arch: str, name: str, wave: int) -> None:
    """Registers filled by the atom's A and B TV layouts, run through the instruction as the calculator's maps define
    it (one lane of each duplicated group is enough: every copy holds the same value), hold C = A @ B in D."""
    import numpy as np

    atom = wmma(name, arch).atom(wave)
    M, N, K = atom.shape_mnk
    rng = np.random.default_rng(1)
    A, B = rng.integers(-3, 4, (M, K)).astype(float), rng.integers(-3, 4, (K, N)).astype(float)
    tables = [np.asarray(L.table()).reshape(-1, wave).T for L in (atom.layout_a_tv, atom.layout_b_tv, atom.layout_c_tv)]
    regA, regB = A.flatten(order="F")[tables[0]], B.T.flatten(order="F")[tables[1]]
    rec = RECORDED[arch]["instructions"][name][f"wave{wave}"]
    Ai, Bi = np.full((M, K), np.nan), np.full((K, N), np.nan)
    for (ln, c), ((row, col, _),) in calc.decode(rec["A"]).items():
        assert np.isnan(Ai[row, col]) or Ai[row, col] == regA[ln, c]   # the copies agree
        Ai[row, col] = regA[ln, c]
    for (ln, c), ((row, col, _),) in calc.decode(rec["B"]).items():
        Bi[row, col] = regB[ln, c]
    D = Ai @ Bi
    regD = np.zeros_like(tables[2], dtype=float)
    for (ln, c), ((row, col, _),) in calc.decode(rec["D"]).items():
        regD[ln, c] = D[row, col]
    assert np.array_equal(regD, (A @ B).flatten(order="F")[tables[2]])


# ------------------------------------------------------------------------------- Triton's AMDWMMALayout
import amd_triton_cases as tri  # noqa: E402

TRITON = json.loads((DATA / "triton_mfma.json").read_text())["wmma_cases"]


def _triton_map(bases: dict, lanes: int, values: int) -> dict[tuple[int, int], tuple[int, int]]:
    return {(ln, v): tri.evaluate(bases, ln, v) for ln in range(lanes) for v in range(values)}


@pytest.mark.parametrize("case", TRITON, ids=[f"{c['arch']}-{c['instruction']}-kw{c['k_width']}" for c in TRITON])
def test_triton_wmma_layouts(case: dict) -> None:
    """Triton's WMMA v1 (RDNA3) and v2 (RDNA4) layouts are the ISA's maps -- except RDNA4 16-bit operands at
    ``k_width=8`` (what ``tl.dot`` picks), which are the ISA's map with K bits 2 and 3 swapped: fine for a dot
    product (A and B agree), not the register map the hardware reads."""
    w = wmma(case["instruction"], case["arch"])
    permuted = case["arch"] == "rdna4" and case["k_width"] == 8 and w.row.a in ("f16", "bf16")
    for op, bases in case["layouts"].items():
        f = w.fragment(op, 32)
        ours = {(ln, v): f.coords(ln, v)[:2] for ln in range(32) for v in range(f.num_values)}
        theirs = _triton_map(bases, 32, f.num_values)
        if permuted and op in ("A", "B"):
            assert ours != theirs, "Triton's k_width=8 RDNA4 map was expected to differ from the ISA's"

            def swap23(k: int) -> int:
                return (k & ~0b1100) | ((k >> 1) & 0b0100) | ((k << 1) & 0b1000)
            ours = {key: ((r, swap23(c)) if op == "A" else (swap23(r), c)) for key, (r, c) in ours.items()}
        assert ours == theirs, (f.name, op)
