"""interop.gluon_amd: AMDMFMALayout accumulators identical to Triton 3.6's engine (recorded and live)."""

from __future__ import annotations

import importlib.util
import json
import pathlib
import random

import pytest

from layoutalg.amd import mfma
from layoutalg.errors import LayoutError
from layoutalg.interop.gluon_amd import from_gluon_amd, mfma_bases

import gluon_amd_cases as rec

DATA = json.loads((pathlib.Path(__file__).resolve().parent / "data" / "gluon" / "amd_mfma.json").read_text())
HAVE_TRITON = importlib.util.find_spec("triton") is not None


def _fields(c: dict) -> dict:
    return {k: c[k] for k in ("version", "instr_shape", "transposed", "warps_per_cta", "tiles_per_warp", "element_bitwidth")}


def test_recorded_configurations_equal_triton() -> None:
    assert len(DATA["cases"]) == 300
    for c in DATA["cases"]:
        assert mfma_bases(_fields(c), c["shape"]) == c["bases"], c


@pytest.mark.skipif(not HAVE_TRITON, reason="Triton not importable")
def test_live_sample_equals_triton() -> None:
    for c in random.Random(2026).sample(rec.configs(), 12):
        assert mfma_bases(_fields(c), c["shape"]) == rec.engine_bases(c), c


def test_one_tile_is_the_catalog_fragment() -> None:
    """One warp, one tile: the TV layout is the MFMA D fragment the ISA rule proves (lane, value) -> m + M*n."""
    for name, arch, ish in (("v_mfma_f32_32x32x8_f16", "cdna3", [32, 32, 8]), ("v_mfma_f32_16x16x16_f16", "cdna3", [16, 16, 16]),
                            ("v_mfma_f32_16x16x32_f16", "cdna4", [16, 16, 32])):
        d = mfma(name, arch).fragment("D")
        tv = from_gluon_amd({"version": 3 if arch == "cdna3" else 4, "instr_shape": ish, "transposed": False,
                             "warps_per_cta": [1, 1]}, ish[:2])
        for ln in range(64):
            for v in range(d.num_values):
                r, c, _ = d.coords(ln, v)
                assert tv(ln, v) == r + ish[0] * c


def test_text_and_refusals() -> None:
    txt = "AMDMFMALayout(version=4, instr_shape=[16, 16, 32], transposed=True, warps_per_cta=[2, 2])"
    assert mfma_bases(txt, (32, 32))["warp"] == [[0, 16], [16, 0]]
    for bad, match in ((dict(version=5), "versions are 1-4"), (dict(instr_shape=[4, 4, 4]), "16 x 16 and"),
                       (dict(element_bitwidth=16), "32 or 64"), (dict(warps_per_cta=[3, 1]), "power of two")):
        f = {"version": 3, "instr_shape": [32, 32, 8], "transposed": False, "warps_per_cta": [1, 1], **bad}
        with pytest.raises(LayoutError, match=match):
            mfma_bases(f, (32, 32))
    with pytest.raises(LayoutError, match="not an AMDMFMALayout"):
        mfma_bases("BlockedLayout([1], [32], [1], [0])", (32,))


@pytest.mark.parametrize("text", ["AMDMFMALayout(3, [32, 32, 8], False, [1, 1])",
                                  "amd.AMDMFMALayout(4, [16, 16, 32], True, [2, 2])",
                                  "gl.amd.AMDMFMALayout(2, [16, 16, 16], False, [2, 1])"])
def test_from_gluon_reads_amd_mfma_layouts(text: str) -> None:
    """layoutalg.from_gluon hands AMDMFMALayout to the AMD reader (the same answer, Triton's engine's)."""
    from layoutalg.interop.gluon import from_gluon
    from layoutalg.interop.gluon_amd import from_gluon_amd

    assert from_gluon(text, (64, 64)) == from_gluon_amd(text, (64, 64))


def test_from_gluon_amd_single_warp_is_the_catalogs_accumulator() -> None:
    from layoutalg.amd import mfma
    from layoutalg.interop.gluon import from_gluon

    tv = from_gluon("AMDMFMALayout(3, [32, 32, 8], False, [1, 1])", (32, 32))
    D = mfma("v_mfma_f32_32x32x8_f16").fragment("D").layout
    assert [tv(t, v) for t in range(64) for v in range(16)] == [D(t, v) for t in range(64) for v in range(16)]
