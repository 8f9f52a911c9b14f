"""The Hopper pipeline on the hardware: the recording (tests/data/hardware/pipeline.json) replayed on the CPU.

``layoutalg.gpu.pipeline`` built a real TMA -> wgmma SS -> stmatrix -> st.global kernel from each
configuration's knobs (the contract of ``layoutalg.kernel.pipeline.hopper_pipeline``), ran it on an H100 /
H200 over random small-integer operands (4 trials; ``out`` NaN-filled first) and recorded, per
configuration, the mask of output elements that differ from ``A @ B^T``. Here:

* the recording says where it comes from, covers every configuration, and still describes what the
  library derives for the knobs (descriptor words, tensor maps, TMA destinations);
* correct pipelines were exact, every planted bug showed on the hardware (``probe.*`` configurations, fields
  the PTX ISA calls unused and corners, assume no outcome: only the proof is held to them);
* masks whose shape the contract alone fixes (an epilogue that stops at column c, a ``.trans`` stmatrix, a
  swapped warpgroup row block) are that shape -- expectations written from the PTX ISA, not from code;
* **the proof**: for every configuration, ``prove(hopper_pipeline(**knobs)).wrong_outputs`` equals the
  hardware's mask element for element (skipped where ``layoutalg.kernel.pipeline`` is not there yet);
* on a GPU (marker ``gpu``), a few configurations re-run live give the recorded masks.
"""

from __future__ import annotations

import ctypes
import shutil

import numpy as np
import pytest

from layoutalg.gpu import pipeline as hw
from layoutalg.gpu.common import load_recording

REC = load_recording("pipeline")
needs = pytest.mark.skipif(REC is None, reason="no pipeline recording")
CONFIGS = dict(hw.configurations())


def _knobs(rec: dict) -> dict:
    k = dict(rec["knobs"])
    if "wg_rows" in k and k["wg_rows"] is not None:
        k["wg_rows"] = tuple(k["wg_rows"])
    return k


def _mask(rec: dict) -> np.ndarray:
    return hw.mask_from_hex(rec["mask"], tuple(rec["shape"]))


def _ran() -> list[tuple[str, dict]]:
    return [(n, r) for n, r in sorted((REC or {}).get("configurations", {}).items()) if r.get("status") == "ran"]


@needs
def test_recording_says_where_it_comes_from():
    env = REC["environment"]
    assert env["gpu"].startswith("NVIDIA H") and env["capability"] == "sm_90"
    assert env["driver"] and env["nvcc"] and env["date"]
    assert REC["trials"] >= 2


@needs
def test_recording_covers_every_configuration_with_its_knobs():
    got = REC["configurations"]
    assert set(got) == set(CONFIGS)
    for name, rec in got.items():
        assert _knobs(rec) == {k: (tuple(v) if k == "wg_rows" else v) for k, v in CONFIGS[name].items()}, name
        k = hw.knobs_of(CONFIGS[name])
        assert rec["shape"] == [k["M"], k["N"]]


@needs
def test_the_library_still_derives_what_the_hardware_ran():
    """Descriptor words, tensor maps and TMA destinations: a change in the library's derivation would make
    the recorded masks describe another kernel."""
    for name, rec in REC["configurations"].items():
        assert hw.derived(CONFIGS[name]) == rec["derived"], name


@needs
def test_no_configuration_faulted_and_correct_pipelines_are_exact():
    for name, rec in REC["configurations"].items():
        assert rec["status"] == "ran", f"{name}: {rec.get('error')}"
        if name.startswith("ok."):
            assert rec["exact"] and rec["wrong"] == 0 and not _mask(rec).any(), name


@needs
def test_every_planted_bug_shows_on_the_hardware():
    for name, rec in _ran():
        if name.startswith("bug."):
            assert rec["wrong"] > 0 and _mask(rec).sum() == rec["wrong"], name


def _expected_by_contract(knobs: dict) -> np.ndarray | None:
    """The mask of a configuration whose only bug is in the epilogue or the row blocks, written from the
    PTX ISA's stmatrix and the contract (not from the kernel's code); None for other bugs."""
    k = hw.knobs_of(knobs)
    M, N = k["M"], k["N"]
    plain = {n: v for n, v in knobs.items() if n not in ("M", "N", "K", "dtype", "warpgroups", "epilogue_cols",
                                                           "epilogue_trans", "wg_rows")}
    if plain:
        return None
    wrong = np.zeros((M, N), bool)
    wrong[:, k["epilogue_cols"]:] = True                       # never written: NaN
    for w, r in enumerate(k["wg_rows"]):
        if r != w:
            wrong[64 * w: 64 * w + 64, :] = True                # another block's rows
    if k["epilogue_trans"]:
        # .trans puts each 8x8 matrix's (i, j) at (j, i): only the diagonals land right
        i, j = np.meshgrid(np.arange(M), np.arange(N), indexing="ij")
        wrong |= (i % 8) != (j % 8)
    return wrong


@needs
def test_epilogue_and_row_block_bugs_have_the_shape_the_isa_says():
    checked = 0
    for name, rec in _ran():
        want = _expected_by_contract(CONFIGS[name])
        if want is None:
            continue
        checked += 1
        got = _mask(rec)
        assert np.array_equal(got, want), f"{name}: {np.argwhere(got != want)[:5].tolist()}"
    assert checked >= 10


# --- the proof against the hardware ------------------------------------------------------------------
def disagreements(records: list[tuple[str, dict]], prove_mask) -> list[str]:
    """Configurations whose proven wrong-output mask (``prove_mask(knobs)``) differs from the hardware's,
    each with its knobs and a few differing elements (m, n, hardware wrong?, proof wrong?)."""
    out = []
    for name, rec in records:
        hw_mask = _mask(rec)
        try:
            pm = np.asarray(prove_mask(_knobs(rec)), dtype=bool)
        except Exception as e:  # noqa: BLE001 - a refusal is a disagreement to report, not a crash
            out.append(f"{name} {rec['knobs']}: the proof raised {type(e).__name__}: {e}")
            continue
        if pm.shape != hw_mask.shape:
            out.append(f"{name} {rec['knobs']}: proof mask {pm.shape} vs hardware {hw_mask.shape}")
            continue
        diff = np.argwhere(pm != hw_mask)
        if len(diff):
            ex = [(int(m), int(n), bool(hw_mask[m, n]), bool(pm[m, n])) for m, n in diff[:4]]
            out.append(f"{name} {rec['knobs']}: {len(diff)} elements differ (hardware wrong {int(hw_mask.sum())}, "
                       f"proof wrong {int(pm.sum())}); (m, n, hw, proof): {ex}")
    return out


def test_disagreements_can_fail():
    """The comparison is not vacuous: one flipped element, a wrong shape and a refusal are all reported."""
    m = np.zeros((64, 64), bool)
    m[3, 5] = True
    rec = {"knobs": {}, "shape": [64, 64], "mask": hw.mask_hex(m)}
    assert disagreements([("x", rec)], lambda k: m) == []
    flipped = m.copy()
    flipped[0, 0] = True
    assert "(0, 0, False, True)" in disagreements([("x", rec)], lambda k: flipped)[0]
    assert "proof mask" in disagreements([("x", rec)], lambda k: np.zeros((8, 8), bool))[0]
    assert "raised" in disagreements([("x", rec)], lambda k: 1 / 0)[0]


@needs
def test_proof_names_exactly_the_elements_the_hardware_got_wrong():
    kp = pytest.importorskip("layoutalg.kernel.pipeline", reason="layoutalg.kernel.pipeline (the proof) not merged yet")
    proof = pytest.importorskip("layoutalg.kernel.proof", reason="layoutalg.kernel.proof not merged yet")

    def prove_mask(knobs):
        return proof.prove(kp.hopper_pipeline(**knobs)).wrong_outputs

    bad = disagreements(_ran(), prove_mask)
    assert not bad, f"{len(bad)} of {len(_ran())} configurations disagree:\n" + "\n".join(bad)


# --- live, on a GPU --------------------------------------------------------------------------------
def _have_gpu() -> bool:
    try:
        ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    return shutil.which("nvcc") is not None


LIVE = ["ok.f16.K.sw128.n64", "ok.f16.K.sw128.base256_512", "ok.bf16.MN.sw128.n64", "bug.desc_sw.a128_as64",
        "bug.base256.bo2", "bug.swap.a.sw128", "bug.wg_rows.10", "bug.trans.n64", "bug.cols48.n64"]


@pytest.mark.gpu
@pytest.mark.skipif(not _have_gpu() or REC is None, reason="needs the CUDA driver, nvcc and the recording")
def test_live_sample_reproduces_the_recording():
    got = hw.run(LIVE, log=lambda *a: None)
    for name in LIVE:
        assert got[name]["status"] == "ran", got[name]
        assert got[name]["mask"] == REC["configurations"][name]["mask"], name
