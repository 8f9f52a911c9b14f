"""layoutalg.kernel on the kernel zoo (tests/triton_kernel_zoo.py, recorded by tests/record_triton_kernels.py into
tests/data/triton/kernels_zoo.json with Triton 3.6 on the CPU; a live sample where Triton is importable).

For every kernel -- attention forward (pointers and tensor descriptors, warp-specialized on sm_100a),
persistent and warp-specialized matmuls over device-side tensor descriptors, tf32 / int8 / fp8 / transposed
operands, ``tl.dot_scaled`` (e4m3, e5m2, e2m1), reductions, softmax and transposes, Gluon wgmma and
tcgen05 GEMMs and Gluon conversions through shared memory of every class:

* the data-moving ops are the ones Triton's own MLIR parser finds, in order;
* every distributed layout Triton reads from the text has the engine's linear layout (``to_linear_layout``)
  in layoutalg, on the tensor's shape; every shared layout reads to the Gluon object Triton reads;
* every register <-> shared access has Triton's ``get_shared_bank_conflicts`` count;
* every wgmma descriptor and tcgen05 instruction descriptor in the PTX equals the derivation.
"""

from __future__ import annotations

import importlib.util
import json
import os

import pytest

from layoutalg.errors import LayoutError
from layoutalg.interop.gluon import gluon_layout
from layoutalg.kernel import check_ptx, inspect_ttgir

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "data", "triton", "kernels_zoo.json")) as _f:
    ZOO = json.load(_f)
KERNELS = ZOO["kernels"]
HAVE_TRITON = importlib.util.find_spec("triton") is not None


def _name(rec: dict) -> str:
    c = rec["config"]
    return f"{c['kind']}-sm{c['arch']}-{c.get('dtype')}-w{c['num_warps']}"


def test_zoo_recorded_with_provenance():
    assert ZOO["source"] == "tests/record_triton_kernels.py" and ZOO["triton"].startswith("3.6")
    kinds = {k["config"]["kind"] for k in KERNELS}
    assert kinds >= {"attention", "attention_tma", "persistent", "matmul_t", "dot_scaled", "softmax", "transpose",
                     "row_sum", "softmax_2d", "gluon_wgmma", "gluon_tcgen05", "gluon_shuffle"}
    assert {k["config"]["arch"] for k in KERNELS if k["config"]["kind"] == "attention"} == {80, 90, 100}
    texts = "".join(k["ttgir"] for k in KERNELS)
    for attr in ("#ttg.blocked<", "#ttg.slice<", "#ttg.dot_op<", "#ttg.nvidia_mma<", "#ttg.linear<", "#ttg.nvmma_shared<",
                 "#ttg.swizzled_shared<", "#ttg.padded_shared<", "#ttg.shared_linear<", "#ttng.tensor_memory_encoding<",
                 "#ttng.tensor_memory_scales_encoding<"):
        assert attr in texts, attr
    for op in ("ttng.tc_gen5_mma_scaled", "ttng.warp_group_dot", "ttng.async_tma_copy_global_to_local",
               "ttg.async_copy_global_to_local", "ttg.convert_layout", "ttng.tmem_load"):
        assert op in texts, op


@pytest.mark.parametrize("rec", KERNELS, ids=[_name(k) for k in KERNELS])
def test_zoo_kernel_reads_as_triton_reads_it(rec):
    report = inspect_ttgir(rec["ttgir"])
    theirs = rec["triton"]
    assert [o.op.name for o in report.ops] == [o["op"] for o in theirs]
    for mine, their in zip(report.ops, theirs):
        regs = [v for v in mine.values if v.layout is not None and v.layout.memory == "registers"]
        shared = [gluon_layout(v.layout.gluon_for(v.shape)) for v in mine.values
                  if v.layout is not None and v.layout.memory == "shared" and "descriptor" not in v.memory]
        for v in their["values"]:
            if "triton_bases" in v:  # the engine's linear layout: some value of this op has it, on this shape
                same = [x for x in regs if list(x.shape) == v["shape"]]
                assert any(x.layout.bases(v["shape"]) == v["triton_bases"] for x in same), (mine.op.text, v["gluon"])
            elif "gluon" in v:  # a shared layout: the Gluon object Triton reads from the memdesc
                assert gluon_layout(v["gluon"]) in shared, (mine.op.text, v["gluon"])
        if "triton_bank_conflicts" in their:
            assert mine.banks is not None, (mine.op.text, mine.notes)
            assert mine.banks.ways - 1 == their["triton_bank_conflicts"], mine.op.text


@pytest.mark.parametrize("rec", KERNELS, ids=[_name(k) for k in KERNELS])
def test_zoo_descriptors_in_the_ptx_equal_the_derivation(rec):
    checks = check_ptx(rec["ttgir"], rec["ptx_excerpt"])
    texts = rec["ttgir"]
    if "ttng.warp_group_dot" in texts:
        assert {"wgmma B"} <= {c.what for c in checks}
    if "ttng.tc_gen5_mma" in texts:
        assert "tcgen05 idesc" in {c.what for c in checks}
    assert all(c.ok and c.found for c in checks), [str(c) for c in checks if not c.ok]


def test_zoo_counts():
    """The recording is no token sample: the bank counts and descriptor checks it holds."""
    banks = sum("triton_bank_conflicts" in o for k in KERNELS for o in k["triton"])
    assert banks >= 100
    conflicted = sum(o.get("triton_bank_conflicts", 0) > 0 for k in KERNELS for o in k["triton"])
    assert conflicted >= 5  # conflicting and conflict-free accesses both
    assert sum("wgmma" in k["ptx_excerpt"] for k in KERNELS) >= 10
    assert sum("block_scale" in k["ptx_excerpt"] for k in KERNELS) >= 3


def test_attention_holds_two_dots_that_share_the_ptx():
    rec = next(k for k in KERNELS if k["config"]["kind"] == "attention" and k["config"]["arch"] == 90)
    checks = check_ptx(rec["ttgir"], rec["ptx_excerpt"])
    b = [c for c in checks if c.what == "wgmma B"]
    assert len(b) == 2 and all(c.ok for c in b)
    # a word from neither dot is caught
    word = b[0].found[0]
    bad = rec["ptx_excerpt"].replace(str(word), str(word ^ (1 << 62)), 1)
    assert not all(c.ok for c in check_ptx(rec["ttgir"], bad) if c.what == "wgmma B")


def test_block_scaled_idescs_name_every_scale_factor_byte():
    rec = next(k for k in KERNELS if k["config"]["kind"] == "dot_scaled" and k["config"]["dtype"] == "e4m3")
    (c,) = check_ptx(rec["ttgir"], rec["ptx_excerpt"])
    assert c.ok and len(c.derived) == 4  # K tile 128 / K 32 per instruction: scale-factor ids 0..3


def test_linear_layout_on_a_smaller_tensor_broadcasts_as_triton_does():
    """A #ttg.linear defined for 128 x 128 used on 128 x 1 (an attention row maximum): the registers that reach
    past the tensor are dropped, the lanes that do become 0 (Triton's ensureLayoutNotLargerThan)."""
    from layoutalg.kernel import parse_attribute, read_layout

    kl = read_layout(parse_attribute("#ttg.linear<{register = [[0, 1], [0, 2], [0, 64]], lane = [[1, 0], [2, 0], [4, 0], "
                                     "[8, 0], [0, 4]], warp = [[16, 0], [0, 8]], block = []}>"))
    assert kl.bases((32, 1)) == {"register": [], "lane": [[1, 0], [2, 0], [4, 0], [8, 0], [0, 0]],
                                 "warp": [[16, 0], [0, 0]], "block": []}


@pytest.mark.skipif(not HAVE_TRITON, reason="Triton is not importable")
def test_live_zoo_sample_against_triton():
    import sys

    sys.path.insert(0, HERE)
    import record_triton_kernels as recorder
    import triton_kernel_zoo as zoo

    entry = next(c for c in zoo.configs() if c["kind"] == "softmax_2d" and c["arch"] == 90)
    text = recorder.compile_zoo_entry(entry, upto="ttgir")["ttgir"]
    theirs = recorder.triton_reading(text)
    report = inspect_ttgir(text)
    assert [o.op.name for o in report.ops] == [o["op"] for o in theirs]
    for mine, their in zip(report.ops, theirs):
        for v in their["values"]:
            if "triton_bases" in v:
                assert any(x.layout is not None and list(x.shape) == v["shape"] and x.layout.bases(v["shape"]) == v["triton_bases"]
                           for x in mine.values)


def test_unknown_ops_are_listed_or_refused_with_line_and_column():
    """Every op of every recorded kernel is one the reader knows (Triton 3.6's dialects); a misspelt one is listed,
    and with strict=True refused naming its line and column."""
    from layoutalg.kernel import read_ttgir

    for rec in KERNELS:
        assert read_ttgir(rec["ttgir"], strict=True).unknown_ops == []
    text = KERNELS[0]["ttgir"]
    lines = text.splitlines()
    n = next(i for i, line in enumerate(lines) if "tt.load" in line)
    bad = text.replace("tt.load", "tt.lod", 1)
    col = lines[n].index("tt.load") + 1
    assert read_ttgir(bad).unknown_ops[0] == (n + 1, col, "tt.lod")
    assert "tt.lod (line" in str(inspect_ttgir(bad))
    with pytest.raises(LayoutError, match=rf"line {n + 1}, column {col}: unknown op tt.lod"):
        read_ttgir(bad, strict=True)
