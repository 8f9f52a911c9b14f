"""gfx1250's WMMA (layoutalg.amd.gfx1250) against Triton 3.6's AMDWMMALayout(version=3), recorded and live.

tests/data/amd/triton_gfx1250.json (tests/amd_gfx1250_cases.py): for every lane and register of one
warp, Triton's element equals the fragment's in Triton's form (``form="triton"``: 8-bit A and B in
chunks of 8 K where the ISA's are 16; every other operand is the ISA's map itself). fp4 operands are Triton's packed bytes: register ``r``
of Triton holds fp4 values ``2r`` and ``2r+1`` of the fragment, at column ``k // 2``. FlyDSL is the
second oracle (tests/test_amd_flydsl.py).
"""

from __future__ import annotations

import importlib.util
import json
import pathlib

import pytest

from layoutalg.amd import GFX1250_INSTRUCTIONS, wmma1250
from layoutalg.amd.common import i, lane
from layoutalg.errors import LayoutError
from layoutalg.verify import verify

import amd_gfx1250_cases as rec

DATA = json.loads((pathlib.Path(__file__).resolve().parent / "data" / "amd" / "triton_gfx1250.json").read_text())
HAVE_TRITON = importlib.util.find_spec("triton") is not None


def _xor(bases: dict, ln: int, reg: int) -> tuple[int, int]:
    x = y = 0
    for name, n in (("register", reg), ("lane", ln)):
        for bit, (a, b) in enumerate(bases[name]):
            if n >> bit & 1:
                x ^= a
                y ^= b
    return x, y


def _compare(case: dict, layouts: dict) -> None:
    w = wmma1250(case["instruction"])
    per_byte = case["per_byte"]
    for op, ans in layouts.items():
        assert "bases" in ans, (case["instruction"], op, ans)
        b = ans["bases"]
        # Triton's form: 8-bit A and B in chunks of 8 (the ISA: 16), the rest the ISA's map
        f = w.fragment(op, case["fmt"] if op in ("A", "B") else None, form="triton")
        packed = per_byte if op in ("A", "B") else 1
        assert 2 ** len(b["lane"]) == f.num_threads == 32
        assert 2 ** len(b["register"]) * packed == f.num_values, (f.name, op)
        for ln in range(32):
            for v in range(f.num_values):
                r, c, _ = f.coords(ln, v)
                if op == "SB":  # Triton's B scales are an N x K/32 tensor; AMD's orientation is K/32 x N
                    r, c = c, r
                if packed > 1:   # Triton's byte holds fp4 k = 2*kb, 2*kb + 1 of one row (A) / column (B)
                    kdim = 1 if op == "A" else 0
                    rc = [r, c]
                    assert rc[kdim] % 2 == v % 2, (f.name, ln, v)
                    rc[kdim] //= 2
                    r, c = rc
                    v //= 2
                assert _xor(b, ln, v) == (r, c), (f.name, op, ln, v)


def test_recorded_triton_layouts() -> None:
    assert DATA["source"].startswith("Triton 3.6") and len(DATA["cases"]) == len(rec.CONFIGS)
    for case in DATA["cases"]:
        _compare(case, case["layouts"])


@pytest.mark.skipif(not HAVE_TRITON, reason="Triton not importable")
def test_live_triton_sample() -> None:
    import gluon_amd_oracle as orc

    for row, asks in (c for c in rec.configurations() if c[0][0] in ("v_wmma_f32_16x16x32_f16", "v_wmma_scale_f32_16x16x128_f8f6f4")):
        answers = orc.engine(asks)
        case = {"instruction": row[0], "fmt": row[1], "per_byte": row[4]}
        _compare(case, {a["op"]: ans for a, ans in zip(asks, answers)})


def test_every_fragment_equals_its_rule() -> None:
    n = 0
    for name in GFX1250_INSTRUCTIONS:
        w = wmma1250(name)
        for fmt in ((None,) if w.row.a != "f8f6f4" else ("fp8", "bf8", "fp6", "bf6", "fp4")):
            for f in w.fragments(fmt).values():
                f.check()
                n += 1
    assert n == 134
    for f in wmma1250("v_wmma_scale16_f32_16x16x128_f8f6f4").fragments("fp6").values():
        v = verify(f, f.formula, (lane, i))
        assert v and v.method == "symbolic", f.name


def test_the_rule_by_hand() -> None:
    """The ISA-shaped rule at a few points, worked by hand (not read from the layouts)."""
    a = wmma1250("v_wmma_f32_16x16x4_f32").fragment("A")
    assert [a.coords(ln, v)[:2] for ln, v in ((0, 0), (0, 1), (16, 0), (31, 1))] == [(0, 0), (0, 1), (0, 2), (15, 3)]
    b = wmma1250("v_wmma_f32_16x16x64_fp8_fp8").fragment("B")   # B: (k, n); chunks of 16 alternate halves
    assert b.coords(17, 10)[:2] == (10 + 16, 1)
    bt = wmma1250("v_wmma_f32_16x16x64_fp8_fp8").fragment("B", form="triton")   # Triton's / FlyDSL's chunks of 8
    assert bt.coords(17, 10)[:2] == (2 + 8 + 16, 1)
    a4 = wmma1250("v_wmma_scale_f32_16x16x128_f8f6f4").fragment("A", "fp4")
    assert a4.coords(16, 33)[:2] == (0, 1 + 32 + 64)
    d = wmma1250("v_wmma_f16_16x16x32_f16").fragment("D")
    assert d.coords(16 + 3, 5)[:2] == (13, 3)
    sb = wmma1250("v_wmma_scale16_f32_16x16x128_f8f6f4").fragment("SB")
    assert sb.num_values == 8 and sb.coords(21, 7)[:2] == (7, 5)


def test_registry_and_refusals() -> None:
    from layoutalg.registry import mma_atom

    atom = mma_atom("V_WMMA_F32_16X16X128_F8F6F4", fmt="fp4")
    assert atom.shape_mnk == (16, 16, 128) and atom.num_threads == 32
    with pytest.raises(LayoutError, match="not one of fp8"):
        wmma1250("v_wmma_f32_16x16x128_f8f6f4").fragment("A", "f16")
    with pytest.raises(LayoutError, match="only for the scaled"):
        wmma1250("v_wmma_f32_16x16x32_f16").fragment("SA")
    with pytest.raises(LayoutError, match="no gfx1250 instruction"):
        wmma1250("v_wmma_f32_16x16x16_f16")


def test_gluon_spells_both_forms() -> None:
    """The ISA's 8-bit map is Triton's k_width=16 operand; Triton's and FlyDSL's chunks of 8 are k_width=8."""
    from layoutalg.interop.gluon import to_gluon

    w = wmma1250("v_wmma_f32_16x16x64_fp8_fp8")
    assert "k_width=16" in to_gluon(w.fragment("A"), (16, 64)).source
    assert "k_width=8" in to_gluon(w.fragment("A", form="triton"), (16, 64)).source
