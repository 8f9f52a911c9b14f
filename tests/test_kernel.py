"""layoutalg.kernel: compiled ttgir read by a grammar, against Triton 3.6's own reading (recorded by
tests/record_triton_kernels.py into tests/data/triton/, replayed here; a live sample where Triton is
importable).

* every layout attribute Triton printed for a Gluon layout object of every class reads back to that
  object, to the engine's linear layout (distributed) on every index, and to the placement Triton's
  compiler gives every element (shared);
* every data-moving op of Triton matmuls (f16 / bf16 / fp8; sm_80, sm_90a, sm_100a) and of Gluon
  kernels that convert layouts through shared memory: the layouts Triton itself reads from the same
  text, and bank conflicts equal to Triton's ``get_shared_bank_conflicts``;
* bad input is a LayoutError naming the line and column.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os

import numpy as np
import pytest

from layoutalg.cli import main
from layoutalg.errors import LayoutError
from layoutalg.interop.gluon import gluon_layout
from layoutalg.kernel import (
    DATA_OPS,
    LAYOUT_ATTRIBUTES,
    check_ptx,
    inspect_ttgir,
    parse_attribute,
    ptx_tcgen05_idescs,
    ptx_wgmma_words,
    read_layout,
    read_ttgir,
)
from layoutalg.linear import flat_index

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data", "triton")
HAVE_TRITON = importlib.util.find_spec("triton") is not None


def _load(name: str) -> dict:
    with open(os.path.join(DATA, name)) as f:
        return json.load(f)


LAYOUTS = _load("layouts.json")
KERNELS = _load("kernels.json")


def _xor_eval(bases: dict, shape: list[int], levels: list[str]) -> np.ndarray:
    """Triton's linear layout evaluated on every input: the column-major element index, inputs in order
    (level 0's bits lowest) -- the same order as layoutalg's TV layout ``((lane, warp, block), register)``."""
    vecs = [flat_index(v, shape) for k in levels for v in bases.get(k, [])]
    out = np.zeros(1 << len(vecs), dtype=np.int64)
    for i, v in enumerate(vecs):
        out[1 << i: 2 << i] = out[: 1 << i] ^ v
    return out


# ------------------------------------------------------------------------------- layouts.json
def test_recordings_say_where_they_come_from():
    for rec in (LAYOUTS, KERNELS):
        assert rec["source"] == "tests/record_triton_kernels.py" and rec["triton"].startswith("3.6")
    kinds = {c["kind"] for c in LAYOUTS["cases"]}
    assert kinds == {"distributed", "shared", "tmem"}
    printed = {a for t in LAYOUTS["texts"] for a in LAYOUT_ATTRIBUTES if f"#{a}<" in t}
    # every NVIDIA layout attribute Triton prints is in the recording
    assert printed >= {"ttg.blocked", "ttg.slice", "ttg.dot_op", "ttg.nvidia_mma", "ttg.linear", "ttg.nvmma_shared",
                       "ttg.swizzled_shared", "ttg.padded_shared", "ttg.shared_linear", "ttng.tensor_memory_encoding",
                       "ttng.tensor_memory_scales_encoding"}


@pytest.fixture(scope="module")
def modules():
    return [read_ttgir(t) for t in LAYOUTS["texts"]]


def _case_layout(case, modules):
    op = modules[case["ttgir"]].ops[case["op_index"]]
    want = {"distributed": "tt.store", "shared": "ttg.local_alloc", "tmem": "ttng.tmem_alloc"}[case["kind"]]
    assert op.name == want
    t = op.types[0] if case["kind"] == "distributed" else op.result_types[0]
    assert list(t.shape) == case["shape"]
    return t.encoding


def test_distributed_layouts_read_as_tritons_engine(modules):
    cases = [c for c in LAYOUTS["cases"] if c["kind"] == "distributed"]
    assert len(cases) >= 100
    for c in cases:
        kl, shape = _case_layout(c, modules), c["shape"]
        assert kl.gluon_for(shape) == gluon_layout(c["gluon"]), c["gluon"]
        assert kl.bases(shape) == {k: [list(v) for v in vs] for k, vs in c["triton_bases"].items()}, c["gluon"]
        # the layoutalg layout itself, on every (thread, value): the engine's element
        tv = kl.layout(shape)
        table = np.asarray(tv.table()).reshape(-1)
        want = _xor_eval(c["triton_bases"], shape, ["lane", "warp", "block", "register"])
        assert np.array_equal(table, want), c["gluon"]


def _where(layout, shape):
    R, C = shape
    return np.asarray(layout.table()).reshape(C, R).T.reshape(-1)


def test_shared_layouts_place_every_element_where_tritons_compiler_does(modules):
    cases = [c for c in LAYOUTS["cases"] if c["kind"] == "shared"]
    assert len(cases) >= 30
    for c in cases:
        kl, shape = _case_layout(c, modules), c["shape"]
        assert kl.gluon_for(shape) == gluon_layout(c["gluon"]), c["gluon"]
        where = _where(kl.layout(shape), shape)
        assert hashlib.sha1(where.astype(np.int64).tobytes()).hexdigest() == c["triton_placement_sha1"], c["gluon"]


def test_tensor_memory_encodings_read(modules):
    cases = [c for c in LAYOUTS["cases"] if c["kind"] == "tmem"]
    assert len(cases) >= 4
    for c in cases:
        kl, g = _case_layout(c, modules), c["gluon"]
        assert kl.memory == "tensor memory"
        if g["type"] == "TensorMemoryLayout":
            assert kl.attribute == "ttng.tensor_memory_encoding"
            assert [kl.params["blockM"], kl.params["blockN"]] == g["block"]
            assert kl.params.get("colStride", 1) == g["col_stride"]
        else:
            assert kl.attribute == "ttng.tensor_memory_scales_encoding"
        b = kl.bases(c["shape"])
        rows = 1 << len(b["row"])
        cols = 1 << len(b["col"])
        assert rows == 128 and cols >= 1


# ------------------------------------------------------------------------------- kernels.json
def _subsequence(mine: list, theirs: list) -> bool:
    it = iter(theirs)
    return all(any(m == t for t in it) for m in mine)


def test_kernels_recorded():
    archs = {(k["config"].get("arch"), k["config"].get("dtype")) for k in KERNELS["kernels"]}
    assert {a for a, _ in archs} == {80, 90, 100}
    assert {d for _, d in archs} >= {"fp16", "bf16", "fp8e4nv", None}
    assert any(k["config"]["kind"] == "gluon_convert" for k in KERNELS["kernels"])


@pytest.mark.parametrize("k", range(len(KERNELS["kernels"])))
def test_kernel_ops_read_as_triton_reads_them(k):
    rec = KERNELS["kernels"][k]
    report = inspect_ttgir(rec["ttgir"])
    theirs = rec["triton"]
    assert [o.op.name for o in report.ops] == [o["op"] for o in theirs]
    for mine, their in zip(report.ops, theirs):
        mine_src = [gluon_layout(v.layout.gluon_for(v.shape)) for v in mine.values  # (Triton reads no descriptor type)
                    if v.layout is not None and v.layout.gluon is not None and "descriptor" not in v.memory]
        their_src = [gluon_layout(v["gluon"]) for v in their["values"] if "gluon" in v]
        assert _subsequence(mine_src, their_src), (mine.op.text, mine_src, their_src)
        for v in their["values"]:
            if "triton_bases" in v:
                g = gluon_layout(v["gluon"])
                kl = next(x.layout for x in mine.values if x.layout is not None and x.layout.gluon is not None
                          and gluon_layout(x.layout.gluon_for(x.shape)) == g and list(x.shape) == v["shape"])
                assert kl.bases(v["shape"]) == v["triton_bases"]
        if "triton_bank_conflicts" in their:
            assert mine.banks is not None, mine.op.text
            assert mine.banks.ways - 1 == their["triton_bank_conflicts"], mine.op.text


def test_matmul_reports_have_source_lines_and_shared_accesses():
    mm = [k for k in KERNELS["kernels"] if k["config"]["kind"] == "matmul"]
    for rec in mm:
        report = inspect_ttgir(rec["ttgir"])
        assert report.target == f"cuda:{rec['config']['arch']}"
        assert report.num_warps == rec["config"]["num_warps"]
        assert all(o.location and ".py:" in o.location for o in report.ops), rec["config"]
        names = {o.op.name for o in report.ops}
        if rec["config"]["arch"] == 90:
            assert "ttng.warp_group_dot" in names
        if rec["config"]["arch"] == 100:
            assert "ttng.tc_gen5_mma" in names and "ttng.tmem_load" in names
        if rec["config"]["arch"] == 80:
            assert "tt.dot" in names and "ttg.local_load" in names
        assert str(report).startswith("kernel matmul: target cuda:")
        json.dumps(report.to_dict())


def test_gluon_conversion_through_shared_memory():
    conv = [k for k in KERNELS["kernels"] if k["config"]["kind"] == "gluon_convert"]
    ways = []
    for rec in conv:
        report = inspect_ttgir(rec["ttgir"])
        acc = report.accesses
        assert [a.op.name for a in acc] == ["ttg.local_alloc", "ttg.local_load"]
        assert [a.direction for a in acc] == ["store", "load"]
        ways.append(max(a.banks.ways for a in acc))
    assert max(ways) > 1 and min(ways) == 1  # the recording holds a conflicting and a conflict-free conversion


def test_tmem_accesses_name_their_tcgen05_shape():
    sm100 = [k for k in KERNELS["kernels"] if k["config"]["arch"] == 100]
    seen = 0
    for rec in sm100:
        for o in inspect_ttgir(rec["ttgir"]).ops:
            if o.op.name in ("ttng.tmem_load", "ttng.tmem_store"):
                assert any(n.startswith(("tcgen05.ld.32x32b", "tcgen05.st.32x32b")) for n in o.notes), (o.op.text, o.notes)
                seen += 1
    assert seen >= 8
    # a register layout no tcgen05.ld shape moves (a blocked layout, rows across lanes of a warp): said so
    text = """
#blocked = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#tmem = #ttng.tensor_memory_encoding<blockM = 128, blockN = 64, colStride = 1>
module attributes {"ttg.num-warps" = 4 : i32, ttg.target = "cuda:100"} {
  tt.func public @k(%t: !ttg.memdesc<128x64xf32, #tmem, #ttng.tensor_memory, mutable>) {
    %v = ttng.tmem_load %t : !ttg.memdesc<128x64xf32, #tmem, #ttng.tensor_memory, mutable> -> tensor<128x64xf32, #blocked>
    tt.return
  }
}"""
    (o,) = inspect_ttgir(text).ops
    assert o.notes and o.notes[0].startswith("no tcgen05.ld shape")


def _convert(src: str, dst: str, shape: str = "32x32", warps: int = 1) -> list[str]:
    text = f"""
#a = {src}
#b = {dst}
module attributes {{"ttg.num-warps" = {warps} : i32, "ttg.threads-per-warp" = 32 : i32}} {{
  tt.func public @k(%x: tensor<{shape}xf16, #a>) {{
    %y = ttg.convert_layout %x : tensor<{shape}xf16, #a> -> tensor<{shape}xf16, #b>
    tt.return
  }}
}}"""
    (o,) = inspect_ttgir(text).ops
    return o.notes


def test_conversions_say_what_moves():
    rows = "#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [32, 1], warpsPerCTA = [1, 1], order = [0, 1]}>"
    cols = "#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [1, 1], order = [1, 0]}>"
    assert _convert(rows, rows)[0].startswith("no data moves between threads")
    assert _convert(rows, cols)[0].startswith("data moves between lanes of a warp only")
    w0 = "#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [32, 1], warpsPerCTA = [4, 1], order = [0, 1]}>"
    w1 = "#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [32, 1], warpsPerCTA = [1, 4], order = [0, 1]}>"
    assert _convert(w0, w1, "128x4", 4)[0].startswith("data crosses warps")
    # a layout that holds each element in fewer threads is no movement (a slice of what is there)
    bcast = "#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [32, 1], warpsPerCTA = [4, 1], order = [0, 1]}>"
    assert _convert(bcast, bcast, "32x4", 4)[0].startswith("no data moves")


# ------------------------------------------------------------------------------- descriptors in the PTX
WITH_PTX = [k for k in KERNELS["kernels"] if "ptx_excerpt" in k]


@pytest.mark.parametrize("k", range(len(WITH_PTX)))
def test_ptx_descriptors_equal_the_derivation(k):
    rec = WITH_PTX[k]
    checks = check_ptx(rec["ttgir"], rec["ptx_excerpt"])
    want = {"tcgen05 idesc"} if rec["config"]["arch"] == 100 else {"wgmma A", "wgmma B"}
    assert {c.what for c in checks} == want
    assert all(c.ok for c in checks), [str(c) for c in checks if not c.ok]
    assert all(c.found for c in checks)


def test_ptx_recording_covers_both_generations():
    assert {k["config"]["arch"] for k in WITH_PTX} == {90, 100}
    assert len(WITH_PTX) >= 12


def test_a_wrong_descriptor_in_the_ptx_is_caught():
    rec = next(k for k in WITH_PTX if k["config"]["arch"] == 90)
    ptx = rec["ptx_excerpt"]
    a0, b0 = ptx_wgmma_words(ptx)[0]
    # the B word with its swizzle mode changed (bits 62-63: 128B -> 64B)
    bad = ptx.replace(str(b0), str(b0 ^ (3 << 62)), 1)
    assert [c.ok for c in check_ptx(rec["ttgir"], bad) if c.what == "wgmma B"] == [False]
    rec = next(k for k in WITH_PTX if k["config"]["arch"] == 100)
    word = ptx_tcgen05_idescs(rec["ptx_excerpt"])[0]
    bad = rec["ptx_excerpt"].replace(str(word), str(word ^ (1 << 15)))  # A's major bit
    assert [c.ok for c in check_ptx(rec["ttgir"], bad)] == [False]


# ------------------------------------------------------------------------------- live sample
@pytest.mark.skipif(not HAVE_TRITON, reason="Triton is not importable")
def test_live_gluon_kernel_against_triton():
    import record_triton_kernels as rec

    lin, lout, smem = rec.convert_configs()[1]
    consts = {"R": 64, "C": 64, "L_IN": lin, "L_OUT": lout, "SMEM": smem}
    sig = {"in_ptr": "*fp16", "out_ptr": "*fp16", **{k: "constexpr" for k in consts}}
    text = rec.gluon_ttgir(rec.CONVERT, "convert", sig, consts, 4, 90)
    theirs = rec.triton_reading(text)
    report = inspect_ttgir(text)
    assert [o.op.name for o in report.ops] == [o["op"] for o in theirs]
    for mine, their in zip(report.ops, theirs):
        if "triton_bank_conflicts" in their:
            assert mine.banks.ways - 1 == their["triton_bank_conflicts"]
    assert report.ops[1].values[0].layout.gluon_for((64, 64)) == gluon_layout(lin)


@pytest.mark.skipif(not HAVE_TRITON, reason="Triton is not importable")
def test_layouts_split_over_ctas_read_as_triton_prints_them():
    """Triton 3.6 prints Gluon's cga_layout as CGALayout (num-ctas 2); read back, the engine agrees."""
    import gluon_oracle as oracle
    from triton.experimental.gluon import language as gl

    cases = [
        ("#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [2, 2], order = [1, 0], "
         "CGALayout = [[1, 0]]}>", gl.BlockedLayout([1, 4], [4, 8], [2, 2], [1, 0], cga_layout=[[1, 0]])),
        ("#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], CGALayout = [[1, 0]], "
         "instrShape = [16, 8]}>", gl.NVMMADistributedLayout([2, 0], [2, 2], [16, 8], cga_layout=[[1, 0]])),
    ]
    for text, obj in cases:
        kl = read_layout(parse_attribute(text))
        assert kl.gluon == gluon_layout(obj)
        assert kl.bases((64, 64)) == oracle.engine_bases(obj, [64, 64])
    shared = read_layout(parse_attribute("#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, "
                                         "elementBitWidth = 16, CGALayout = [[0, 1]]}>"))
    assert shared.gluon == gluon_layout(gl.NVMMASharedLayout(128, 16, cga_layout=[[0, 1]]))


# ------------------------------------------------------------------------------- bad input
GOOD = KERNELS["kernels"][0]["ttgir"]


@pytest.mark.parametrize("text, where", [
    ("#blocked = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [32, 1]", "line 1, column 74"),
    ("#blocked = #ttg.blockd<{sizePerThread = [1]}>", "line 1, column 12"),
    ("#b = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [32, 1], order = [0, 1]}>", "line 1, column 6"),
    ("#b = #ttg.slice<{dim = 1, parent = #nothere}>", "line 1, column 6"),
    ('#loc = loc("k.py', "line 1, column 12"),
    ("#b = #foo.bar<{x = 1}>", "line 1, column 6"),
    ("#b = #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [0, 1]}> junk", "line 1, column 82"),
])
def test_bad_attributes_name_line_and_column(text, where):
    with pytest.raises(LayoutError, match=where):
        read_ttgir(text)


def test_truncated_module_names_the_open_brace():
    lines = GOOD.splitlines()
    cut = next(i for i, line in enumerate(lines) if "ttg.local_alloc" in line or "tt.load" in line)
    with pytest.raises(LayoutError, match=r"line \d+, column \d+: this '\{' is never closed"):
        read_ttgir("\n".join(lines[: cut + 1]))
    # cut inside an op's type: the type's grammar names the place
    j = lines[cut].index("<", lines[cut].index(" : ")) + 6
    bad = "\n".join(lines[:cut] + [lines[cut][:j]] + lines[cut + 1:])
    with pytest.raises(LayoutError, match=rf"line {cut + 1}, column \d+"):
        read_ttgir(bad)


def test_text_that_is_no_module_is_refused():
    with pytest.raises(LayoutError, match="line 1, column 1: no 'module'"):
        read_ttgir("def kernel(x):\n    return x\n")


def test_text_is_never_evaluated():
    with pytest.raises(LayoutError, match="line 1"):
        read_ttgir("#b = #ttg.blocked<{sizePerThread = __import__('os').system('false')}>")
    with pytest.raises(LayoutError):
        read_layout(parse_attribute("#ttg.nvidia_mma<{versionMajor = 2}>"))


def test_every_data_op_has_a_description():
    assert all(DATA_OPS.values())


# ------------------------------------------------------------------------------- the CLI
def test_cli_inspect(tmp_path, capsys):
    conv = [k for k in KERNELS["kernels"] if k["config"]["kind"] == "gluon_convert"]
    bad = next(k for k in conv if max(o.banks.ways for o in inspect_ttgir(k["ttgir"]).accesses) > 1)
    p = tmp_path / "k.ttgir"
    p.write_text(bad["ttgir"])
    assert main(["inspect", str(p)]) == 0
    out = capsys.readouterr().out
    assert "ttg.local_load" in out and "wavefronts" in out and "bank conflicts" in out
    assert main(["inspect", str(p), "--check"]) == 1
    capsys.readouterr()
    assert main(["inspect", str(p), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["target"] == "cuda:90" and any("shared_memory" in o for o in data["ops"])
    p.write_text(bad["ttgir"][: len(bad["ttgir"]) // 3])
    assert main(["inspect", str(p)]) == 2
    assert "line" in capsys.readouterr().err
    assert main(["inspect", str(tmp_path / "missing.ttgir")]) == 2
    rec = next(k for k in WITH_PTX if k["config"]["arch"] == 90)
    p.write_text(rec["ttgir"])
    q = tmp_path / "k.ptx"
    q.write_text(rec["ptx_excerpt"])
    capsys.readouterr()
    assert main(["inspect", str(p), "--ptx", str(q)]) == 0
    out = capsys.readouterr().out
    assert "wgmma A" in out and "equal" in out and "DIFFER" not in out
