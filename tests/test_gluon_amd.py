"""interop.gluon_amd: AMDMFMALayout accumulators identical to Triton 3.6's engine (recorded and live)."""

from __future__ import annotations

import importlib.util
import json
import pathlib
import random
import re

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
    for bad, match in ((dict(version=5), "rule mfma-version"), (dict(instr_shape=[4, 4, 4]), "rule mfma-instr-shape"),
                       (dict(element_bitwidth=16), "32 or 64"), (dict(warps_per_cta=[3, 1]), "rule power-of-two")):
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


# ---------------------------------------------------------------------------------------------
# Every AMD class, its operands and scale layouts: tests/data/gluon/amd_layouts.json
# (tests/gluon_amd_oracle.py: Triton 3.6's answers and refusals) and a live held-out sample
# ---------------------------------------------------------------------------------------------
import gluon_amd_oracle as orc  # noqa: E402

from layoutalg.interop.gluon_amd import RULES, amd_bases, scale_bases  # noqa: E402

LAYOUTS = json.loads((pathlib.Path(__file__).resolve().parent / "data" / "gluon" / "amd_layouts.json").read_text())
#: the rules whose breaking Triton refuses ("cga" names what layoutalg does not cover)
TRITON_RULES = set(RULES) - {"cga"}


def _ours(c: dict) -> dict | str:
    """layoutalg's answer to a recorded configuration: bases, or the name of the rule it refuses by."""
    p = dict(c["layout"], kind=c["kind"].split("_")[0])
    try:
        if c["kind"].endswith("_scale"):
            return scale_bases({**p, "operand_index": c["operand_index"], "k_width": 16}, c["shape"])
        if c["kind"].endswith("_dot"):
            p.update(operand_index=c["operand_index"], k_width=c["k_width"])
        return amd_bases(p, c["shape"])
    except LayoutError as e:
        m = re.search(r"\[rule ([\w-]+):", str(e))
        assert m, f"a refusal names no rule: {e}"
        return m.group(1)


def _agree(c: dict, ans: dict) -> None:
    got = _ours(c)
    if "refused" in ans:
        assert isinstance(got, str) and got in TRITON_RULES, (c, ans["refused"], got)
    else:
        assert got == {k: ans["bases"][k] for k in ("register", "lane", "warp", "block")}, c


def test_recorded_amd_layouts_and_refusals_equal_triton() -> None:
    cases = LAYOUTS["cases"]
    assert len(cases) == 2000 and LAYOUTS["source"].startswith("Triton 3.6")
    assert sum(len(c["shape"]) == 3 for c in cases) > 250   # batched ones among them
    kinds = {c["kind"] for c in cases}
    assert kinds == {"mfma", "wmma", "mfma_dot", "wmma_dot", "mfma_scale", "wmma_scale"}
    for c in cases:
        _agree(c, c)
    refused = [c for c in cases if "refused" in c]
    assert 300 < len(refused) < 800   # both sides of the line are exercised
    named = {_ours(c) for c in refused}
    assert {"mfma-instr-shape", "mfma-64x4-transposed", "wmma-instr-shape", "wmma-tensor-shape", "k-width",
            "scale-instr-m", "scale-tiles-per-warp"} <= named, named


@pytest.mark.skipif(not HAVE_TRITON, reason="Triton not importable")
def test_live_held_out_sample_equals_triton() -> None:
    """A fresh sample every run (a seed not used for the recording), answers and refusals."""
    seed = random.SystemRandom().randrange(1 << 30)
    cfgs = orc.cases(seed, 30)
    for c, ans in zip(cfgs, orc.engine(cfgs)):
        _agree(c, ans)


def test_refusals_by_rule() -> None:
    """One configuration per rule (recorded): Triton refuses it (Python check or abort), layoutalg names that rule."""
    assert set(LAYOUTS["probes"]) == TRITON_RULES
    for rule, c in LAYOUTS["probes"].items():
        assert "refused" in c, rule
        assert _ours(c) == rule


def test_to_gluon_spells_recorded_layouts_back() -> None:
    """from_gluon -> to_gluon(cls=...) gives a layout whose bases are Triton's recorded ones (not always the
    same spelling: an A operand does not depend on the parent's N)."""
    from layoutalg.interop.gluon import linear_bases, to_gluon

    valid = [c for c in LAYOUTS["cases"] if "bases" in c and c["kind"] in ("mfma", "wmma", "mfma_dot", "wmma_dot")
             and len(c["shape"]) == 2]   # to_gluon_amd searches rank-2 spellings
    for c in random.Random(7).sample(valid, 24):
        want = {k: c["bases"][k] for k in ("register", "lane", "warp", "block")}
        p = dict(c["layout"], kind=c["kind"].split("_")[0])
        if c["kind"].endswith("_dot"):
            p.update(operand_index=c["operand_index"], k_width=c["k_width"])
        tv = from_gluon_amd(p, c["shape"])
        cls = "AMDMFMALayout" if p["kind"] == "mfma" else "AMDWMMALayout"
        r = to_gluon(tv, c["shape"], cls=cls, operand=c.get("operand_index"))
        assert r.bases == want, (c, r.source)
        assert linear_bases(r.source, c["shape"]) == want


@pytest.mark.parametrize("arch,name,ops", [("cdna3", "v_mfma_f32_32x32x8_f16", "ABD"), ("cdna3", "v_mfma_f32_16x16x16_f16", "ABD"),
                                           ("cdna3", "v_mfma_i32_16x16x32_i8", "ABD"), ("cdna4", "v_mfma_f32_16x16x32_bf16", "ABD"),
                                           ("cdna4", "v_mfma_f32_32x32x64_f8f6f4", "ABD"), ("rdna3", "v_wmma_f32_16x16x16_f16", "ABD"),
                                           ("rdna4", "v_wmma_i32_16x16x16_iu8", "ABD")])
def test_to_gluon_of_catalog_fragments(arch: str, name: str, ops: str) -> None:
    """A catalog fragment (the ISA's register map) comes back as the Gluon layout holding the same elements."""
    from layoutalg.amd import wmma
    from layoutalg.interop.gluon import to_gluon

    ins = mfma(name, arch) if name.startswith("v_mfma") else wmma(name, arch)
    for op in ops:
        f = ins.fragment(op)
        rows = 1 + max(f.coords(t, v)[0] for t in range(f.num_threads) for v in range(f.num_values))
        cols = 1 + max(f.coords(t, v)[1] for t in range(f.num_threads) for v in range(f.num_values))
        r = to_gluon(f, (rows, cols))
        assert r.gluon.kind == ("DotOperandLayout" if op in "AB" else ("AMDMFMALayout" if "mfma" in name else "AMDWMMALayout"))
        b = r.bases
        for t in range(f.num_threads):
            for v in range(f.num_values):
                x = y = 0
                for bits, vecs in ((v, b["register"]), (t, b["lane"])):
                    for j, (p, q) in enumerate(vecs):
                        if bits >> j & 1:
                            x ^= p
                            y ^= q
                assert (x, y) == f.coords(t, v)[:2], (f.name, t, v, r.source)


def test_to_gluon_amd_refuses_what_no_class_spells() -> None:
    from layoutalg.interop.gluon_amd import to_gluon_amd
    from layoutalg.layout import Layout

    with pytest.raises(LayoutError, match="no AMDMFMALayout / AMDWMMALayout"):
        to_gluon_amd(Layout((64, 16), (16, 1)), (32, 32), cls="AMDMFMALayout")
    with pytest.raises(LayoutError, match="not AMDMFMALayout or AMDWMMALayout"):
        to_gluon_amd(Layout((64, 16), (1, 64)), (32, 32), cls="BlockedLayout")


def test_padded_shared_layouts_spelled_back() -> None:
    """PaddedSharedLayout both ways: the recorded LDS cases (identical to Triton's compiled kernels in
    tests/test_amd_lds.py) -> to_gluon -> a PaddedSharedLayout with the same pads that reads back the same."""
    from layoutalg.amd import padded_shared
    from layoutalg.interop.gluon import from_gluon, to_gluon

    lds = json.loads((pathlib.Path(__file__).resolve().parent / "data" / "amd" / "lds_triton.json").read_text())
    padded = [c for c in lds["cases"] if c["kind"] == "padded"]
    assert len(padded) > 50
    for c in padded[::9]:
        L = padded_shared(c["shape"], c["pairs"], c.get("order"), offset_bases=c.get("offset_bases"))
        r = to_gluon(L, c["shape"])
        assert r.gluon.kind == "PaddedSharedLayout" and [list(p) for p in r.gluon["interval_padding_pairs"]] == c["pairs"]
        assert from_gluon(r.source, c["shape"]) == L, (c, r.source)


def test_to_gluon_like_keeps_the_given_spelling() -> None:
    """An A operand does not depend on the parent's N, K, transposition: like= keeps the user's spelling when equal."""
    from layoutalg.interop.gluon import to_gluon

    d = "DotOperandLayout(0, AMDWMMALayout(3, True, [2, 2], [16, 16, 64], tiles_per_warp=[2, 1]), 8)"
    tv = from_gluon_amd(d, (64, 128))
    plain = to_gluon(tv, (64, 128), cls="AMDWMMALayout", operand=0)
    kept = to_gluon(tv, (64, 128), like=d)
    assert plain.bases == kept.bases
    assert "transposed=True" in kept.source and "instr_shape=[16, 16, 64]" in kept.source
