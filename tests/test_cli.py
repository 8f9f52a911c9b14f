"""The `layoutalg` command: as a subprocess (`python -m layoutalg ...`, the entry point and its exit codes) and,
for the commands' own output, through the same ``cli.main`` in this process (a Python start and the package's
import cost ~1 s of CPU a call)."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
import time
import xml.etree.ElementTree as ET


from layoutalg import cli


def run_process(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """``python -m layoutalg ARGS`` in a new process."""
    return subprocess.run(
        [sys.executable, "-m", "layoutalg", *args], capture_output=True, text=True, timeout=timeout
    )


def run(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """``layoutalg ARGS`` through ``cli.main`` (what ``python -m layoutalg`` calls) in this process: the exit
    code and what it wrote to stdout and stderr, as :func:`run_process` returns them."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = cli.main(list(args))
        except SystemExit as e:  # argparse: --help exits 0, a refused argument exits 2
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    return subprocess.CompletedProcess(["layoutalg", *args], code, out.getvalue(), err.getvalue())


def test_help_lists_subcommands():
    r = run_process("--help")
    assert r.returncode == 0
    for cmd in ("show", "eval", "desc", "frag", "verify", "banks", "harness", "report"):
        assert cmd in r.stdout


def test_show_prints_grid_and_writes_picture(tmp_path):
    out = tmp_path / "l.svg"
    r = run("show", "(4,2):(2,1)", "-o", str(out), "-v")
    assert r.returncode == 0
    # row r of a 4x2 row-major layout holds 2r, 2r+1
    for row in range(4):
        assert f" {row}  | {2 * row} | {2 * row + 1} |" in r.stdout
    root = ET.parse(out).getroot()
    assert sum(1 for t in root.iter("{http://www.w3.org/2000/svg}tspan")) == 8  # one label per cell


def test_show_bad_layout_exit_2():
    r = run_process("show", "(4,2:(2,1)")
    assert r.returncode == 2
    assert "error" in r.stderr and "(4,2:(2,1)" in r.stderr
    assert "Traceback" not in r.stderr


def test_eval():
    assert run("eval", "(4,2):(2,1)", "(1,1)").stdout.strip() == "3"  # 1*2 + 1*1
    assert run("eval", "(4,2):(2,1)", "5").stdout.strip() == "3"  # index 5 = (1, 1)
    assert run("eval", "((2,2),3):((1,2),4)", "((1,1),2)").stdout.strip() == str(1 + 2 + 8)
    r = run("eval", "(4,2):(2,1)", "8")
    assert r.returncode == 2 and "outside" in r.stderr
    assert run("eval", "(4,2):(2,1)", "(1,2,3)").returncode == 2


def test_desc_k_major_sw128_bf16():
    r = run("desc", "--major", "K", "--swizzle", "128", "--dtype", "bf16", "--tile", "64x64")
    assert r.returncode == 0, r.stderr
    # by hand: start 0, LBO 16 B -> 1 << 16, SBO = 8 rows * 128 B = 1024 B -> 64 << 32, 128B swizzle -> 1 << 62
    word = (1 << 16) | (64 << 32) | (1 << 62)
    assert f"{word:#018x}" in r.stdout
    # k-blocks of 16 bf16 = 32 bytes: start addresses 0, 32, 64, 96 -> encoded 0, 2, 4, 6
    for k in range(4):
        assert f"{word | (2 * k):#018x}" in r.stdout
    assert run("desc", "--swizzle", "48").returncode == 2


def test_frag_prints_and_draws(tmp_path):
    out = tmp_path / "a.svg"
    r = run("frag", "m16n8k16", "f16", "A", "-o", str(out), "-v")
    assert r.returncode == 0, r.stderr
    assert "verified    : yes" in r.stdout
    from layoutalg.viz import svg_cells

    assert len(svg_cells(out.read_text())) == 256
    r = run("frag", "m16n8k7", "f16", "A")
    assert r.returncode == 2 and "m16n8k7" in r.stderr


def test_frag_wgmma_and_ldmatrix():
    assert run("frag", "m64n16k16", "f32", "D").returncode == 0
    assert run("frag", "ldmatrix", "b16", "x4", "--trans").returncode == 0


def test_verify_proves_catalog():
    r = run("verify")
    assert r.returncode == 0, r.stderr
    assert "0 failed" in r.stdout and "mma.sync" in r.stdout and "wgmma" in r.stdout


def test_verify_failure_exit_1(monkeypatch, capsys):
    monkeypatch.setattr(
        cli,
        "prove_catalog",
        lambda progress=None: (
            [{"family": "x", "fragments": 1, "symbolic": 0, "exhaustive": 0, "failed": 1}],
            ["x: broken"],
        ),
    )
    assert cli.main(["verify"]) == 1
    assert "FAILED x: broken" in capsys.readouterr().err


def test_banks(tmp_path):
    r = run("banks", "(64,64):(64,1)", "--bytes", "2")
    assert r.returncode == 0 and "32 wavefronts, ideal 1" in r.stdout  # column read: all in bank 0
    out = tmp_path / "b.svg"
    r = run("banks", "Sw<3,3,3> o (64,64):(64,1)", "--bytes", "2", "--vector", "16", "-o", str(out))
    assert r.returncode == 0 and "4 wavefronts, ideal 4 (conflict-free)" in r.stdout
    ET.parse(out)
    r = run("banks", "(64,64):(64,1)", "--access", "(32,8):(1,1)", "--vector", "16")
    assert r.returncode == 2 and "not contiguous" in r.stderr


def test_harness_explains_or_runs():
    r = run("harness", "run")
    assert r.returncode in (0, 1)
    assert r.stdout or "not available" in r.stderr


def test_report_under_30_seconds(tmp_path):
    t = time.perf_counter()
    r = run("report", "-o", str(tmp_path / "rep"), "--progress", timeout=60)
    elapsed = time.perf_counter() - t
    assert r.returncode == 0, r.stderr[-2000:]
    assert elapsed < 30
    text = (tmp_path / "rep" / "report.md").read_text()
    for fig in ("Figure 166", "Figure 170", "m8n8k4"):
        assert fig in text
    assert "NO" not in text.split("## mma.m8n8k4")[0].split("| agrees |")[1]  # every seed row agrees
    figs = os.listdir(tmp_path / "rep" / "figures")
    assert "figure_46.svg" in figs and "figure_140.svg" in figs and "figure_157.svg" in figs
    assert "[" in r.stderr  # progress bar on stderr (asked for: stderr is not a terminal here)


def test_export_cpp_and_dsl():
    r = run("export", "--cpp", "(8,(2,4)):(1,(64,8))")
    assert r.returncode == 0, r.stderr
    assert "using LayoutType = Layout<Shape<_8,Shape<_2,_4>>,Stride<_1,Stride<_64,_8>>>;" in r.stdout
    r = run("export", "--dsl", "Sw<3,4,3> o _0 o (8,64):(64,1)")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "cute.make_composed_layout(cute.make_swizzle(3, 4, 3), 0, cute.make_layout((8, 64), stride=(64, 1)))"
    # a wgmma tile is also written as CuTe code writes it
    r = run("export", "Sw<3,3,3> o _0 o ((8,8),(64,1)):((64,512),(1,0))", "--dtype", "bf16")
    assert "tile_to_shape(GMMA::Layout_K_SW128_Atom<bfloat16_t>{}, make_shape(Int<64>{}, Int<64>{}))" in r.stdout
    r = run("export", "--cpp")
    assert r.returncode == 2 and "give a layout" in r.stderr and "Traceback" not in r.stderr
