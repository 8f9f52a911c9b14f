"""The AMD catalog against FlyDSL 0.5.0's MMA atoms: the same TV layouts (A, B, C) as functions, and to_flydsl.

tests/data/amd/flydsl_atoms.json (tests/amd_flydsl_cases.py) holds FlyDSL's three layouts and its atom
text for 42 atoms of CDNA3, CDNA4 (MFMA and scaled MFMA), RDNA3, RDNA4 and gfx1250 (WMMA and scaled
WMMA, each f8f6f4 format). Every fragment equals FlyDSL's layout on every (thread, value), except the
differences named in DIFFERENCES, which the fragment's ``form="flydsl"`` reproduces exactly. A live
sample re-asks FlyDSL where it is importable (the ``amd`` extra), reading layoutalg's own atom text.
"""

from __future__ import annotations

import importlib.util
import json
import pathlib
import subprocess
import sys

import numpy as np
import pytest

from layoutalg.amd import mfma, wmma, wmma1250
from layoutalg.errors import LayoutError
from layoutalg.interop.flydsl import from_flydsl, to_flydsl

DATA = json.loads((pathlib.Path(__file__).resolve().parent / "data" / "amd" / "flydsl_atoms.json").read_text())
HAVE_FLYDSL = importlib.util.find_spec("flydsl") is not None

_K8 = "K permutation: each half-wave holds 8 consecutive K (the ISA: 4, alternating)"
_C16 = "K permutation: chunks of 8 K alternate between the half-waves (the ISA: chunks of 16)"
_D16 = "value order of a packed 16-bit D: VGPR by VGPR, low halves first"
#: (arch, instruction, f8f6f4 format, operand) -> how FlyDSL's layout differs from the ISA's register map
DIFFERENCES = {
    ("rdna4", "v_wmma_f32_16x16x16_f16", None, "A"): _K8, ("rdna4", "v_wmma_f32_16x16x16_f16", None, "B"): _K8,
    ("rdna4", "v_wmma_f32_16x16x16_bf16", None, "A"): _K8, ("rdna4", "v_wmma_f32_16x16x16_bf16", None, "B"): _K8,
    ("gfx1250", "v_wmma_f16_16x16x32_f16", None, "D"): _D16, ("gfx1250", "v_wmma_f16_16x16x64_bf8_fp8", None, "D"): _D16,
    **{("gfx1250", n, f, op): _C16 for n, f in (("v_wmma_i32_16x16x64_iu8", None), ("v_wmma_f32_16x16x64_fp8_fp8", None),
                                                 ("v_wmma_f16_16x16x64_bf8_fp8", None), ("v_wmma_f32_16x16x128_fp8_bf8", None),
                                                 ("v_wmma_scale_f32_16x16x128_f8f6f4", "fp8"),
                                                 ("v_wmma_scale_f32_16x16x128_f8f6f4", "bf8")) for op in "AB"},
}


def _instr(c: dict):
    n, a = c["instruction"], c["arch"]
    return wmma1250(n) if a == "gfx1250" else mfma(n, a) if n.startswith("v_mfma") else wmma(n, a)


def _fragment(c: dict, op: str, form: str = "isa"):
    x = _instr(c)
    fmt = c["fmt"] if op in ("A", "B") else None
    if c["arch"] == "gfx1250":
        return x.fragment(op, fmt, form=form)
    if c["instruction"].startswith("v_mfma"):
        return x.fragment(op, fmt)
    return x.fragment(op, 32, form=form)


def _table(layout) -> np.ndarray:
    return np.asarray(layout.table(), dtype=np.int64)


def test_every_recorded_atom_is_the_catalogs() -> None:
    cases = [c for c in DATA["cases"] if c["layouts"]]
    assert DATA["source"].startswith("FlyDSL 0.5.0") and len(cases) == 40
    assert {c["arch"] for c in cases} == {"cdna3", "cdna4", "rdna3", "rdna4", "gfx1250"}
    seen = set()
    for c in cases:
        assert to_flydsl(_instr(c), c["fmt"]) == c["layouts"]["atom"], c["instruction"]
        for op, key in (("A", "A"), ("B", "B"), ("D", "C")):
            theirs = _table(from_flydsl(c["layouts"][key]))
            ours = _table(_fragment(c, op).layout)
            key = (c["arch"], c["instruction"], c["fmt"] if op in "AB" else None, op)
            named = DIFFERENCES.get(key)
            if named is None:
                assert np.array_equal(theirs, ours), (c["instruction"], c["fmt"], op)
                continue
            seen.add(key)
            assert not np.array_equal(theirs, ours)
            assert np.array_equal(theirs, _table(_fragment(c, op, form="flydsl").layout)), (c["instruction"], op)
            # Triton shares FlyDSL's K permutations, not its value order of a 16-bit D
            assert np.array_equal(theirs, _table(_fragment(c, op, form="triton").layout)) == (named != _D16)
    assert seen == set(DIFFERENCES)


def test_the_named_differences_are_what_they_say() -> None:
    """RDNA4's permuted form holds other K values per lane (a real permutation); gfx1250's FlyDSL D the same
    elements per lane in another order."""
    isa = wmma("v_wmma_f32_16x16x16_f16", "rdna4").fragment("A")
    perm = wmma("v_wmma_f32_16x16x16_f16", "rdna4").fragment("A", form="flydsl")
    assert [isa.coords(16, v)[1] for v in range(8)] == [4, 5, 6, 7, 12, 13, 14, 15]
    assert [perm.coords(16, v)[1] for v in range(8)] == [8, 9, 10, 11, 12, 13, 14, 15]
    d, fd = (wmma1250("v_wmma_f16_16x16x32_f16").fragment("D", form=f) for f in ("isa", "flydsl"))
    for t in range(32):
        assert sorted(d.coords(t, v) for v in range(8)) == sorted(fd.coords(t, v) for v in range(8))
    assert [fd.coords(0, v)[0] for v in range(8)] == [0, 2, 4, 6, 1, 3, 5, 7]
    with pytest.raises(LayoutError, match="wave32 form"):
        wmma("v_wmma_f32_16x16x16_f16", "rdna4").fragment("A", wave=64, form="flydsl")


def test_to_flydsl_refusals() -> None:
    with pytest.raises(LayoutError, match="no atom"):
        to_flydsl(mfma("v_mfma_f32_32x32x1_2b_f32", "cdna1"))
    with pytest.raises(LayoutError, match="not FlyDSL"):
        from_flydsl("((32,2),4):((1,128),32)")


_LIVE = r"""
import json, sys
from flydsl._mlir import ir
from flydsl._mlir.dialects import fly
out = []
with ir.Context() as ctx, ir.Location.unknown():
    ctx.load_all_available_dialects()
    for text in json.loads(sys.argv[1]):
        t = fly.MmaAtomType(ir.Type.parse(text))
        out.append([str(t.tv_layout_a), str(t.tv_layout_b), str(t.tv_layout_c)])
print(json.dumps(out))
"""


@pytest.mark.skipif(not HAVE_FLYDSL, reason="flydsl not importable (the amd extra)")
def test_live_flydsl_reads_our_atom_text() -> None:
    """FlyDSL parses to_flydsl's text and its atom holds the catalog's layouts (form='flydsl')."""
    picks = [("cdna3", "v_mfma_f32_16x16x16_f16", None), ("cdna4", "v_mfma_scale_f32_32x32x64_f8f6f4", "fp4"),
             ("rdna3", "v_wmma_i32_16x16x16_iu8", None), ("rdna4", "v_wmma_f32_16x16x16_bf16", None),
             ("gfx1250", "v_wmma_scale16_f32_16x16x128_f8f6f4", "fp6"), ("gfx1250", "v_wmma_f16_16x16x64_fp8_fp8", None)]
    cases = [{"arch": a, "instruction": n, "fmt": f} for a, n, f in picks]
    texts = [to_flydsl(_instr(c), c["fmt"]) for c in cases]
    p = subprocess.run([sys.executable, "-c", _LIVE, json.dumps(texts)], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    for c, layouts in zip(cases, json.loads(p.stdout.strip().splitlines()[-1])):
        for op, text in zip(("A", "B", "D"), layouts):
            assert np.array_equal(_table(from_flydsl(text)), _table(_fragment(c, op, form="flydsl").layout)), (c, op)
