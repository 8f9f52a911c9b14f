"""MFMA maps (layoutalg.amd.cdna) against Triton's linear layouts: CDNA3 and CDNA4 (where no calculator exists).

Replays tests/data/amd/triton_mfma.json (written by tests/amd_triton_cases.py from Triton 3.6's
``to_linear_layout`` of ``AMDMFMALayout`` / ``DotOperandLayout`` / the CDNA4 scale layout, one warp):
for every lane and register Triton's element equals the fragment's. Triton's register order is
the ISA's value order here because ``k_width`` is the number of values a lane holds.
"""

from __future__ import annotations

import json
import pathlib

import pytest

from layoutalg.amd import mfma

import amd_triton_cases as tri

DATA = json.loads((pathlib.Path(__file__).resolve().parent / "data" / "amd" / "triton_mfma.json").read_text())
CASES = DATA["cases"]


def test_every_configuration_was_answered() -> None:
    assert DATA["provenance"]["tool"].startswith("triton 3.6")
    assert len(CASES) == 12 and all(c["layouts"] for c in CASES)
    assert {c["arch"] for c in CASES} == {"cdna3", "cdna4"}


@pytest.mark.parametrize("case", CASES, ids=[f"{c['arch']}-{c['instruction']}" for c in CASES])
def test_identical_to_triton(case: dict) -> None:
    m = mfma(case["instruction"], case["arch"])
    for op, bases in case["layouts"].items():
        # the scale layouts belong to the scaled twin of an f8f6f4 shape (v_mfma_scale_f32_...)
        f = (mfma(m.name.replace("v_mfma_", "v_mfma_scale_"), m.arch) if op in ("SA", "SB") else m).fragment(op)
        assert 2 ** len(bases["lane"]) == f.num_threads == 64, (f.name, op)
        assert 2 ** len(bases["register"]) == f.num_values, (f.name, op)
        for ln in range(f.num_threads):
            for v in range(f.num_values):
                row, col, _ = f.coords(ln, v)
                if op == "SB":  # Triton's B scales are an N x K/32 tensor; AMD's orientation is K/32 x N
                    row, col = col, row
                assert tri.evaluate(bases, ln, v) == (row, col), (f.name, ln, v)


def test_the_scale_layouts_were_checked() -> None:
    scaled = [c for c in CASES if "SA" in c["layouts"]]
    assert [c["instruction"] for c in scaled] == ["v_mfma_f32_16x16x128_f8f6f4", "v_mfma_f32_32x32x64_f8f6f4"]
