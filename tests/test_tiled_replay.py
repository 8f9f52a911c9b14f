"""The H100 recording of the tiled steps (tests/data/hardware/tiled.json) replayed against the library.

Recorded: an Ampere step (2x2 warps of m16n8k16 fed by ldmatrix.x4 from Swizzle<3,3,3> tiles) and a
Hopper step (two warpgroups of wgmma m64n64k16 SS) whose D was exactly A @ B, with every address,
register index and descriptor the kernels used computed by the library (digests below); and six
ldmatrix partitions whose shared-memory wavefronts and bank conflicts Nsight Compute counted. The
library must still plan the same steps, and its bank analysis must still predict ncu's counts.
The CPU emulation with the ISA's rules must agree too -- and can fail.
"""

from __future__ import annotations

import copy as _copy

import numpy as np
import pytest

from layoutalg.gpu import tiled_check as T
from layoutalg.gpu.harness import load_recording, table

REC = load_recording("tiled")
needs = pytest.mark.skipif(REC is None, reason="no tiled hardware recording")


@needs
def test_recording_says_where_it_comes_from():
    env = REC["environment"]
    assert env["gpu"].startswith("NVIDIA H100") and env["capability"] == "sm_90"
    assert env["driver"] and env["date"] and env["cupy"]
    assert REC["results"]["ampere"]["status"] == "pass" and REC["results"]["hopper"]["status"] == "pass"
    assert REC["results"]["ampere"]["emulated"] and REC["results"]["hopper"]["emulated"]
    assert len(REC["banks"]) == 6 and all(b["status"] == "pass" for b in REC["banks"].values())
    assert "tiled" in table({"tiled": REC})


@needs
def test_library_still_explains_the_recording():
    assert T.replay(REC) == []


@needs
def test_ncu_counted_what_the_analyser_predicts():
    b = REC["banks"]
    plain, sw = b["A128x64.x4.plain"], b["A128x64.x4.sw333"]
    # unswizzled 128-byte rows: 8-way; Swizzle<3,3,3>: conflict-free -- measured
    assert plain["ncu"]["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"] == 2048
    assert plain["ncu"]["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"] == 2048 - 256
    assert sw["ncu"]["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"] == 0
    assert plain["ncu"]["smsp__inst_executed_op_ldsm.sum"] == plain["instructions"] == 64


@needs
def test_replay_can_fail():
    bad = _copy.deepcopy(REC)
    bad["banks"]["A64x32.x4.plain"]["ncu"]["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"] = 128.0
    assert any(p.startswith("A64x32.x4.plain") for p in T.replay(bad))
    bad = _copy.deepcopy(REC)
    bad["results"]["hopper"]["digest"] = "0" * 40
    assert any(p.startswith("hopper") for p in T.replay(bad))


def test_emulation_is_a_at_b_and_can_fail():
    p = T.ampere_plan()
    assert np.array_equal(T.emulate_ampere(p), p["A"] @ p["B"].T)
    wrong = _copy.deepcopy(p)
    r = wrong["ldA"][5][0]
    r[1], r[2] = r[2], r[1]  # thread 5 swaps two registers of its first ldmatrix
    assert not np.array_equal(T.emulate_ampere(wrong), p["A"] @ p["B"].T)
    h = T.hopper_plan()
    assert np.array_equal(T.emulate_hopper(h), h["A"] @ h["B"].T)
    wrong = _copy.deepcopy(h)
    wrong["desc_A"][1] = wrong["desc_A"][1][::-1]  # warpgroup 1's k-blocks in the wrong order
    assert not np.array_equal(T.emulate_hopper(wrong), h["A"] @ h["B"].T)
