"""layoutalg.kernel on AMD ttgir: Triton matmuls (fp16 / bf16 / fp8, plain and transposed B), attention forward and a
softmax compiled for gfx942 and gfx950 (wave64, MFMA) and gfx1100 and gfx1200 (wave32, WMMA) on the CPU, recorded by
tests/record_triton_kernels.py (``amd``) into tests/data/triton/kernels_amd.json with Triton 3.6's own reading.

* every data-moving op (``amdg.*`` ones included) is the one Triton's MLIR parser finds;
* every distributed layout -- ``#ttg.amd_mfma``, ``#ttg.amd_wmma``, their ``#ttg.dot_op`` operands, slices of them,
  blocked and linear layouts -- has the engine's linear layout on its tensor's shape;
* register <-> LDS accesses on CDNA3 / CDNA4 are reported under layoutalg.amd.lds's bank model (named in a note);
  RDNA targets say there is no LDS model;
* live, where Triton is importable: kernel.amd's rules against the engine over a sweep of configurations.
"""

from __future__ import annotations

import importlib.util
import itertools
import json
import os
import sys

import pytest

from layoutalg.errors import LayoutError
from layoutalg.kernel import inspect_ttgir, parse_attribute, read_layout
from layoutalg.kernel.amd import amd_dot_bases, wmma_bases

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "data", "triton", "kernels_amd.json")) as _f:
    AMD = json.load(_f)
KERNELS = AMD["kernels"]
HAVE_TRITON = importlib.util.find_spec("triton") is not None


def _name(rec: dict) -> str:
    c = rec["config"]
    return f"{c['kind']}-{c['arch']}-{c.get('dtype')}-w{c['num_warps']}"


def test_amd_recorded_with_provenance():
    assert AMD["source"] == "tests/record_triton_kernels.py" and AMD["triton"].startswith("3.6")
    assert {k["config"]["arch"] for k in KERNELS} == {"gfx942", "gfx950", "gfx1100", "gfx1200"}
    texts = "".join(k["ttgir"] for k in KERNELS)
    for attr in ("#ttg.amd_mfma<", "#ttg.amd_wmma<", "#ttg.amd_rotating_shared<", "#ttg.swizzled_shared<", "#ttg.linear<"):
        assert attr in texts, attr
    assert "amdg.in_thread_transpose" in texts
    for op in ("amdg.buffer_load ", "amdg.buffer_load_to_local", "amdg.buffer_store", "#ttg.padded_shared<"):
        assert op in texts, op


def test_gluon_amd_kernels_have_an_lds_report_for_every_access():
    """Gluon CDNA3 / CDNA4 GEMMs: buffer loads (on gfx950 straight to LDS), padded and swizzled LDS tiles, MFMA
    operands loaded from LDS -- every LDS access has its bank report under the target family's model."""
    gl = [k for k in KERNELS if k["config"]["kind"] == "gluon_amd_gemm"]
    assert {k["config"]["arch"] for k in gl} == {"gfx942", "gfx950"}
    seen = set()
    for rec in gl:
        for o in inspect_ttgir(rec["ttgir"]).ops:
            if o.op.name in ("ttg.local_store", "ttg.local_load", "amdg.buffer_load_to_local"):
                assert o.banks is not None, (o.op.text, o.notes)
                seen.add(o.op.name)
    assert seen == {"ttg.local_store", "ttg.local_load", "amdg.buffer_load_to_local"}


@pytest.mark.parametrize("rec", KERNELS, ids=[_name(k) for k in KERNELS])
def test_amd_kernel_reads_as_triton_reads_it(rec):
    report = inspect_ttgir(rec["ttgir"])
    assert [o.op.name for o in report.ops] == [o["op"] for o in rec["triton"]]
    n = 0
    for mine, their in zip(report.ops, rec["triton"]):
        for v in their["values"]:
            if "triton_bases" in v:
                same = [x for x in mine.values if x.layout is not None and x.layout.memory == "registers"
                        and list(x.shape) == v["shape"]]
                assert any(x.layout.bases(v["shape"]) == v["triton_bases"] for x in same), (mine.op.text, v["gluon"])
                n += 1
    assert n > 0
    arch = rec["config"]["arch"]
    lds = [o for o in report.ops if o.op.name in ("ttg.local_load", "ttg.local_store", "ttg.local_alloc")]
    if arch in ("gfx942", "gfx950"):
        family = "cdna3" if arch == "gfx942" else "cdna4"
        for o in lds:
            if o.banks is not None:
                assert any(f"LDS bank model: {family}" in note for note in o.notes)
        if rec["config"]["kind"] in ("amd_matmul", "gluon_amd_gemm"):
            assert all(o.banks is not None for o in lds if o.values and any(v.memory == "registers" for v in o.values)), \
                [(o.op.text, o.notes) for o in lds if o.banks is None]
    elif lds:
        assert all(o.banks is None for o in lds)
        assert any("no bank model for rdna" in note for o in lds for note in o.notes)


def test_mfma_operand_by_hand():
    """A 32 x 32 x 8 MFMA's A operand (kWidth 4) on 32 x 8, by the ISA: lane l holds row l % 32, K elements
    4 * (l // 32) .. + 3 -- lanes 0-31 along M, lane bit 5 to K = 4, registers along K."""
    kl = read_layout(parse_attribute("#ttg.dot_op<{opIdx = 0, parent = #ttg.amd_mfma<{version = 3, warpsPerCTA = [1, 1], "
                                     "instrShape = [32, 32, 8], isTransposed = true}>, kWidth = 4}>"))
    b = kl.bases((32, 8))
    assert b["register"] == [[0, 1], [0, 2]]
    assert b["lane"] == [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0], [0, 4]]
    assert kl.layout((32, 8))(37, 2) == (37 % 32) + 32 * (4 + 2)


def test_wmma_accumulator_by_hand():
    """RDNA4's 16 x 16 accumulator: lane l < 16 holds column l, rows 0-7 in its 8 registers; lanes 16-31 rows 8-15."""
    b = wmma_bases({"version": 2, "warpsPerCTA": [1, 1]}, (16, 16))
    assert b["lane"][4] == [8, 0] and b["register"] == [[1, 0], [2, 0], [4, 0]]
    b1 = wmma_bases({"version": 1, "warpsPerCTA": [1, 1]}, (16, 16))  # RDNA3: rows interleaved between half-waves
    assert b1["lane"][4] == [1, 0] and b1["register"] == [[2, 0], [4, 0], [8, 0]]


def test_rotating_shared_by_hand():
    """#ttg.amd_rotating_shared: row r's 4-element vector index is XORed with (r % 4) ^ (r // 4 % 4) -- the phase of a
    swizzled layout rotated by the row's block of 4 rows; every element's offset, by hand."""
    kl = read_layout(parse_attribute("#ttg.amd_rotating_shared<{vec = 4, perPhase = 1, maxPhase = 4, order = [1, 0]}>"))
    bases = kl.bases((16, 16))["offset"]

    def by_hand(r: int, c: int) -> int:
        return 16 * r + 4 * ((c // 4) ^ (r % 4) ^ (r // 4 % 4)) + c % 4

    for o in range(256):
        v = [0, 0]
        for i, b in enumerate(bases):
            if o >> i & 1:
                v = [v[0] ^ b[0], v[1] ^ b[1]]
        assert by_hand(*v) == o


def test_amd_refusals_name_the_reason():
    with pytest.raises(LayoutError, match="version 3"):
        wmma_bases({"version": 3, "warpsPerCTA": [1, 1]}, (16, 16))
    with pytest.raises(LayoutError, match="tilesPerWarp"):
        amd_dot_bases(0, 8, "ttg.amd_wmma", {"version": 1, "warpsPerCTA": [2, 2], "tilesPerWarp": [2, 2]}, (32, 32))
    with pytest.raises(LayoutError, match="kWidth"):
        read_layout(parse_attribute("#ttg.dot_op<{opIdx = 0, parent = #ttg.amd_mfma<{version = 3, warpsPerCTA = [1, 1], "
                                    "instrShape = [32, 32, 8], isTransposed = true}>}>"))


@pytest.mark.skipif(not HAVE_TRITON, reason="Triton is not importable")
def test_live_amd_rules_against_tritons_engine():
    sys.path.insert(0, HERE)
    import gluon_oracle as oracle
    from triton.experimental.gluon import language as gl
    from triton.experimental.gluon.language.amd import AMDMFMALayout, AMDWMMALayout

    n = 0
    for ver, instr, kw, wpc, op, tpw, shape in itertools.product(
            (3, 4), ([32, 32, 8], [16, 16, 32]), (4, 8), ([2, 2], [4, 1]), (0, 1), ([1, 1], [2, 2]), ((128, 64),)):
        p = {"version": ver, "instrShape": instr, "warpsPerCTA": wpc, "isTransposed": True, "tilesPerWarp": tpw}
        obj = gl.DotOperandLayout(op, AMDMFMALayout(ver, instr, True, wpc, tiles_per_warp=tpw), kw)
        assert amd_dot_bases(op, kw, "ttg.amd_mfma", p, shape) == oracle.engine_bases(obj, list(shape)), p
        n += 1
    for ver, wpc, tr, tpw, shape in itertools.product((1, 2), ([2, 2], [1, 4]), (False, True), ([1, 1], [2, 1]),
                                                       ((128, 64), (16, 16))):
        p = {"version": ver, "warpsPerCTA": wpc, "isTranspose": tr, "tilesPerWarp": tpw}
        assert wmma_bases(p, shape) == oracle.engine_bases(AMDWMMALayout(ver, tr, wpc, tiles_per_warp=tpw), list(shape))
        for op in (0, 1):
            if ver == 1 and tpw != [1, 1]:
                continue
            obj = gl.DotOperandLayout(op, AMDWMMALayout(ver, tr, wpc, tiles_per_warp=tpw), 8 if ver == 1 else 8)
            assert amd_dot_bases(op, 8, "ttg.amd_wmma", p, shape) == oracle.engine_bases(obj, list(shape)), (p, op)
        n += 1
    assert n >= 80
