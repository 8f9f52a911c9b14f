"""The harness on a real GPU (skipped cleanly without one): a few instructions, one layout, one wgmma mode."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton")
if not torch.cuda.is_available() or torch.cuda.get_device_capability() < (9, 0):
    pytest.skip("needs an sm_90 GPU", allow_module_level=True)

pytestmark = pytest.mark.gpu


def test_mma_instructions_on_device(tmp_path):
    from layoutalg.gpu import mma_check

    vs = [v for v in mma_check.variants()[0] if v.key in ("m16n8k16.f16.f32.row.col", "m8n8k4.f16.f32.row.col")]
    outs = mma_check.launch([(v, mma_check.plan(v)) for v in vs], str(tmp_path), "k")
    for v, dw in zip(vs, outs):
        assert mma_check.analyze(mma_check.plan(v), dw)["status"] == "pass"


def test_nvmma_placement_on_device():
    from layoutalg.gpu import smem_check

    rec = smem_check.run()
    assert all(r["status"] == "pass" for r in rec["results"].values())


def test_wgmma_on_device(tmp_path):
    pytest.importorskip("cupy")
    from layoutalg.gpu import wgmma_check

    cubin = wgmma_check.compile_cubin(str(tmp_path))
    m = next(x for x in wgmma_check.modes() if x["name"] == "bf16.MN.sw128")
    d = wgmma_check.descriptors(m)
    assert wgmma_check.execute(cubin, m, d["A"], d["B"])["ok"]


def test_wgmma_base_offset_on_device(tmp_path):
    """A 128B MN-major tile whose pattern starts 384 B into the buffer: the library's base offset 3 reads it."""
    pytest.importorskip("cupy")
    from layoutalg.gpu import wgmma_check

    cubin = wgmma_check.compile_cubin(str(tmp_path))
    c = next(x for x in wgmma_check.offset_cases() if x["name"] == "f16.MN.sw128.at384")
    og = wgmma_check.descriptors(c, c["delta"], "origin")
    assert wgmma_check.execute(cubin, c, og["A"], og["B"], delta=c["delta"], placement="rel")["ok"]
    bad = wgmma_check.with_base_offset(og["A"], 0)
    assert not wgmma_check.execute(cubin, c, bad, og["B"], delta=c["delta"], placement="rel")["ok"]


def test_bank_conflicts_on_device():
    pytest.importorskip("cupy")
    from layoutalg.gpu import bank_check

    rec = bank_check.run()
    r = rec["results"]
    assert r["rowmajor.col.2B"]["cycles_per_load"] > 8 * r["rowmajor.row.2B"]["cycles_per_load"]
