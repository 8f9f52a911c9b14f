"""RDNA3 WMMA register maps (layoutalg.amd.rdna) against the ISA's rules and AMD's Matrix Instruction Calculator.

Every instruction the calculator lists on rdna3, in wave32 and wave64: A, B and D identical to the
recorded register maps (tests/data/amd/calculator_rdna3.json), register names and bits included;
every fragment equal to its ISA formula; a live re-run (OPSEL included) where the calculator is present.
"""

from __future__ import annotations

import json
import pathlib

import pytest

from layoutalg.amd import WMMA_INSTRUCTIONS, families, wmma, wmma_for
from layoutalg.amd.common import MatrixFragment, i, lane
from layoutalg.errors import LayoutError
from layoutalg.verify import verify

import amd_calculator_cases as calc

DATA = pathlib.Path(__file__).resolve().parent / "data" / "amd"
RDNA3 = json.loads((DATA / "calculator_rdna3.json").read_text())
CASES = [(name, w) for name in RDNA3["instructions"] for w in (32, 64)]


def _column_name(f: MatrixFragment, v: int) -> str:
    reg, lo, bits = f.register_bits(v)
    return reg if bits == 32 else f"{reg}.[{lo + bits - 1}:{lo}]"


def _compare(f: MatrixFragment, rec: dict) -> None:
    cells = calc.decode(rec)
    assert rec["columns"] == [_column_name(f, v) for v in range(f.num_values)], f.name
    assert len(rec["cells"]) == f.num_threads and len(cells) == f.num_threads * f.num_values
    for (ln, v), want in cells.items():
        assert [f.coords(ln, v)] == want, (f.name, ln, v)


def test_the_table_lists_exactly_the_calculators_rdna3() -> None:
    assert set(RDNA3["instructions"]) == set(WMMA_INSTRUCTIONS["rdna3"])
    assert len(CASES) == 12


@pytest.mark.parametrize("name,wave", CASES, ids=[f"{n}-w{w}" for n, w in CASES])
def test_identical_to_the_calculator(name: str, wave: int) -> None:
    w = wmma(name, "rdna3")
    rec = RDNA3["instructions"][name][f"wave{wave}"]
    for op in ("A", "B", "D"):
        f = w.fragment(op, wave)
        _compare(f, rec[op])
        f.check()
        assert verify(f, f.formula, (lane, i))


def test_names_and_errors() -> None:
    assert wmma("V_WMMA_F32_16X16X16_F16") == wmma("v_wmma_f32_16x16x16_f16", "gfx1100")
    assert wmma_for((16, 16, 16), "fp16").name == "v_wmma_f32_16x16x16_f16"
    assert wmma_for((16, 16, 16), "bf16", out="bf16").name == "v_wmma_bf16_16x16x16_bf16"
    with pytest.raises(LayoutError, match="did you mean"):
        wmma("v_wmma_f32_16x16x16_f17")
    with pytest.raises(LayoutError, match="not 32 or 64"):
        wmma("v_wmma_f32_16x16x16_f16").fragment("A", wave=16)
    with pytest.raises(LayoutError, match="no WMMA modelled"):
        wmma("v_wmma_f32_16x16x16_f16", "rdna4")
    with pytest.raises(LayoutError, match="opsel_hi"):
        wmma("v_wmma_f32_16x16x16_f16").fragment("D", opsel_hi=True)


def test_opsel_moves_a_16_bit_accumulator_to_the_high_half() -> None:
    f = wmma("v_wmma_f16_16x16x16_f16").fragment("D", 32, opsel_hi=True)
    assert f.register_bits(3) == ("v3", 16, 16) and f.num_registers == 8


def test_atoms_and_families() -> None:
    for wave in (32, 64):
        atom = wmma("v_wmma_i32_16x16x16_iu8").atom(wave)
        assert atom.shape_mnk == (16, 16, 16) and atom.num_threads == wave
    fam = [f for f in families() if f.kind == "wmma"]
    assert [f.arch for f in fam] == ["rdna3"] and len(fam[0].names()) == 6
    assert fam[0].build("V_WMMA_F32_16X16X16_BF16") is not None and fam[0].build("v_mfma_f32_32x32x8_f16") is None


@pytest.mark.skipif(calc.calculator_path() is None, reason=f"${calc.ENV} does not name AMD's matrix_calculator.py")
@pytest.mark.parametrize("name,wave,opsel", [("v_wmma_f16_16x16x16_f16", 32, 4), ("v_wmma_bf16_16x16x16_bf16", 64, 4),
                                             ("v_wmma_i32_16x16x16_iu4", 64, 0)])
def test_live_calculator_sample(name: str, wave: int, opsel: int) -> None:
    path = calc.calculator_path()
    assert path is not None
    w = wmma(name)
    extra = ("--opsel", str(opsel)) if opsel else ()
    _compare(w.fragment("D", wave, opsel_hi=bool(opsel & 4)), calc.operand(path, "rdna3", name, "D", wave, extra))
    for op in ("A", "B"):
        _compare(w.fragment(op, wave), calc.operand(path, "rdna3", name, op, wave))
