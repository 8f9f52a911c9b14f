"""The surface of layoutalg.kernel: Python files as input (flag grammars, a live compile where Triton is importable,
a kernel that does not compile), CuTe prints as input (against CuTe C++ 4.2's own prints and make_gmma_desc,
recorded by tests/record_cute_setups.py), pictures and the HTML page, and the CLI."""

from __future__ import annotations

import importlib.util
import json
import os

import numpy as np
import pytest

from layoutalg.cli import main
from layoutalg.errors import LayoutError
from layoutalg.kernel import inspect_cute_prints, inspect_ttgir, report_html, report_pictures
from layoutalg.kernel.pyfile import parse_constexprs, parse_signature, parse_target

HERE = os.path.dirname(os.path.abspath(__file__))
KDATA = os.path.join(HERE, "data", "kernels")
HAVE_TRITON = importlib.util.find_spec("triton") is not None


def _text(name: str) -> str:
    with open(os.path.join(KDATA, name)) as f:
        return f.read()
with open(os.path.join(HERE, "data", "cute", "kernel_setups.json")) as _f:
    SETUPS = json.load(_f)


# ------------------------------------------------------------------------------- Python files
def test_flag_grammars():
    assert parse_signature("a:*fp16, d:tensordesc<fp16[64, 64]>, M:i32") == {
        "a": "*fp16", "d": "tensordesc<fp16[64, 64]>", "M": "i32"}
    assert parse_constexprs("BM=128,EPS=1e-5,EVEN=false,DT=fp16") == {"BM": 128, "EPS": 1e-5, "EVEN": False, "DT": "fp16"}
    assert parse_target("sm_100a") == ("cuda", 100, 32) and parse_target("gfx950") == ("hip", "gfx950", 64)
    assert parse_target("gfx1100") == ("hip", "gfx1100", 32)


@pytest.mark.parametrize("fn, text, match", [
    (parse_signature, "a:*fp16, b", "item 2"),
    (parse_signature, "a:*fp16,a:i32", "given twice"),
    (parse_signature, "a:__import__('os')", "item 1"),
    (parse_constexprs, "BM=__import__('os').system('x')", "no integer"),
    (parse_constexprs, "BM", "NAME=VALUE"),
    (parse_target, "sm90x", "expected sm_80"),
])
def test_flag_text_is_never_evaluated(fn, text, match):
    with pytest.raises(LayoutError, match=match):
        fn(text)


def test_cli_python_flags_need_a_python_file(tmp_path):
    p = tmp_path / "k.ttgir"
    p.write_text(_text("matmul_sm90.ttgir"))
    assert main(["inspect", str(p), "--target", "sm_90a"]) == 2


@pytest.mark.skipif(not HAVE_TRITON, reason="Triton is not importable")
def test_live_python_file(tmp_path, capsys):
    from layoutalg.kernel import inspect_python

    path = os.path.join(KDATA, "matmul_kernel.py")
    got = inspect_python(path)  # LAYOUTALG_INSPECT: sm_90a, 4 warps
    assert got.report.target == "cuda:90" and got.report.num_warps == 4
    assert "ttng.warp_group_dot" in {o.op.name for o in got.report.ops}
    assert got.checks and all(c.ok for c in got.checks)
    # the kernel that does not compile: the kernel's name, Triton's message, the file's line
    with pytest.raises(LayoutError, match=r"kernel broken does not compile for sm_80: .*matmul_kernel.py, line 32"):
        inspect_python(path, kernel="broken", signature={"x_ptr": "*fp16"}, constexprs={"BLOCK": 64}, target="sm_80")
    assert main(["inspect", path, "--kernel", "broken", "--signature", "x_ptr:*fp16", "--constexpr", "BLOCK=64",
                 "--target", "sm_80"]) == 2
    assert "line 32" in capsys.readouterr().err
    # flags override the file's dictionary
    assert main(["inspect", path, "--target", "sm_80", "--num-warps", "8", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["target"] == "cuda:80" and data["num_warps"] == 8
    # an AMD target: the ttgir only (no PTX), LDS accesses under the CDNA3 model
    amd = inspect_python(path, target="gfx942")
    assert amd.report.target == "hip:gfx942" and amd.ptx is None and amd.checks == []
    assert any("LDS bank model: cdna3" in n for o in amd.report.ops for n in o.notes)


# ------------------------------------------------------------------------------- CuTe prints
def _fields(word: int) -> tuple:
    from layoutalg.nvidia.hopper.descriptor import MatrixDescriptor

    d = MatrixDescriptor.decode(word)
    return d.leading_byte_offset, d.stride_byte_offset, d.swizzle, d.base_offset


def test_cute_setups_recorded_with_provenance():
    assert SETUPS["source"] == "tests/record_cute_setups.py" and SETUPS["cute"].startswith("4.")
    assert len(SETUPS["setups"]) >= 6


@pytest.mark.parametrize("setup", SETUPS["setups"], ids=[s["name"] for s in SETUPS["setups"]])
def test_cute_setup_prints_read_and_derived_as_cute_does(setup):
    rep = inspect_cute_prints(setup["print"])
    kinds = {o.name: o.kind for o in rep.objects}
    assert kinds["tiled_mma"] == "TiledMMA" and kinds["sA"] == "shared tensor"
    # every descriptor CuTe's make_gmma_desc gave: the same LBO, SBO, swizzle and base offset, k-block by k-block
    for name, words in setup["gmma_desc"].items():
        d = next(x for x in rep.descriptors if x.smem == name)
        assert [_fields(kb.descriptor.encode()) for kb in d.blocks] == [_fields(w) for w in words], (name, str(d))
    assert len(rep.descriptors) == len(setup["gmma_desc"])
    json.dumps(rep.to_dict())


def test_copies_over_shared_tiles_have_the_catalog_atoms_banks():
    """The copy atom rebuilt from its print gives the banks of the catalog's own atom (SM75_U32x4_LDSM_N,
    cp.async 16 B) over the same tile: 8-way conflicts on the plain row-major tile, none when swizzled."""
    from layoutalg.banks import analyze_copy
    from layoutalg.nvidia.atoms import copy_atom, mma_atom
    from layoutalg.parse import parse
    from layoutalg.tiled import make_tiled_copy_A, make_tiled_mma

    mma = make_tiled_mma(mma_atom("SM80_16x8x16_F32F16F16F32_TN"), (2, 2, 1), (32, 32, 16))
    ldsm = make_tiled_copy_A(copy_atom("SM75_U32x4_LDSM_N", "f16"), mma)
    ways = {}
    for name in ("sm80_plain", "sm80_swizzled"):
        setup = next(s for s in SETUPS["setups"] if s["name"] == name)
        rep = inspect_cute_prints(setup["print"])
        c = next(x for x in rep.copies if x.copy == "s2r_copy_A")
        sA = next(o for o in rep.objects if o.name == "sA")
        want = analyze_copy(ldsm, parse(sA.text).function)
        assert (c.side, c.banks.wavefronts, c.banks.ideal, c.banks.ways) == ("S", want.wavefronts, want.ideal, want.ways)
        ways[name] = c.banks.ways
        g2s = next(x for x in rep.copies if x.copy == "g2s_copy")
        assert g2s.side == "D" and g2s.banks.access_bytes == 16
    assert ways == {"sm80_plain": 8, "sm80_swizzled": 1}


def test_cute_prints_errors_name_the_line():
    with pytest.raises(LayoutError, match="line 2"):
        inspect_cute_prints("sA: smem_ptr[16b](0x0) o (_8,_8):(_8,_1)\nsB: (_8,_8):(_8,")
    with pytest.raises(LayoutError, match="used twice"):
        inspect_cute_prints("sA: (_8,_8):(_8,_1)\nsA: (_8,_8):(_1,_8)")
    with pytest.raises(LayoutError, match="line 1"):
        inspect_cute_prints("sA: __import__('os')")


def test_cli_cute_prints(tmp_path, capsys):
    setup = next(s for s in SETUPS["setups"] if s["name"] == "sm80_plain")
    p = tmp_path / "setup.txt"
    p.write_text(setup["print"])
    assert main(["inspect", str(p)]) == 0
    out = capsys.readouterr().out
    assert "s2r_copy_A reads sA" in out and "8-way bank conflicts" in out
    assert main(["inspect", str(p), "--check"]) == 1
    capsys.readouterr()
    assert main(["inspect", str(p), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["copies"][0]["ways"] == 8


# ------------------------------------------------------------------------------- pictures
def test_pictures_label_every_element_with_its_owner():
    """The picture of a register layout, read back from the SVG, names at each cell the first thread the
    layout's own bases give it."""
    from layoutalg.viz import svg_cells

    rep = inspect_ttgir(_text("convert_sm90.ttgir"))
    pics = report_pictures(rep)
    assert any(k.startswith("banks-") for k in pics)  # the conflicting load
    kl = rep.layouts["blocked"]
    shape = (64, 64)
    cells = svg_cells(pics["layout-blocked"])
    b = kl.bases(shape)
    holder = {}
    for t in range(1 << (len(b["lane"]) + len(b["warp"]))):
        for r in range(1 << len(b["register"])):
            v = [0, 0]
            bits = [(r, b["register"]), (t & 31, b["lane"]), (t >> 5, b["warp"])]
            for x, vs in bits:
                for i, vec in enumerate(vs):
                    if x >> i & 1:
                        v = [v[0] ^ vec[0], v[1] ^ vec[1]]
            holder.setdefault(tuple(v), t)
    labels = [c[5][0] for c in cells if c[5] and c[5][0].startswith("T")]
    assert len(labels) == 64 * 64
    xs = sorted({c[0] for c in cells if c[5] and c[5][0].startswith("T")})
    ys = sorted({c[1] for c in cells if c[5] and c[5][0].startswith("T")})
    grid = {(ys.index(c[1]), xs.index(c[0])): c[5][0] for c in cells if c[5] and c[5][0].startswith("T")}
    assert all(grid[(r, c)] == f"T{holder[(r, c)]}" for r in range(64) for c in range(64))


def test_html_page_and_svg_files(tmp_path, capsys):
    rep = inspect_ttgir(_text("convert_sm90.ttgir"))
    page = report_html(rep)
    assert page.startswith("<!DOCTYPE html>") and page.count("<svg") == len(report_pictures(rep))
    p = tmp_path / "k.ttgir"
    p.write_text(_text("convert_sm90.ttgir"))
    assert main(["inspect", str(p), "--svg", str(tmp_path / "pics"), "--html", str(tmp_path / "r.html")]) == 0
    names = sorted(os.listdir(tmp_path / "pics"))
    assert "layout-shared.svg" in names and any(n.startswith("banks-") for n in names)
    assert (tmp_path / "r.html").read_text().count("<svg") == len(names)


def test_to_dict_is_the_report_as_data():
    rep = inspect_ttgir(_text("matmul_sm90.ttgir"))
    d = json.loads(json.dumps(rep.to_dict()))
    assert [o["op"] for o in d["ops"]] == [o.op.name for o in rep.ops]
    smem = [o["shared_memory"] for o in d["ops"] if "shared_memory" in o]
    assert [s["wavefronts"] for s in smem] == [o.banks.wavefronts for o in rep.accesses]
    assert np.all([s["ways"] >= 1 for s in smem])
