"""`layoutalg explain` and `layoutalg synth`, run as subprocesses and in-process."""

from __future__ import annotations

import subprocess
import sys

from layoutalg import cli


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "layoutalg", *args], capture_output=True, text=True, timeout=120)


def test_explain_fragment():
    r = run("explain", "m16n8k8", "f16", "C")
    assert r.returncode == 0, r.stderr
    assert "row = groupID + 8 * (i >> 1)" in r.stdout and "proven (symbolic" in r.stdout
    assert "the PTX ISA's formula: 9" in r.stdout


def test_explain_layout(capsys):
    # in this process (cli.main, what ``python -m layoutalg`` calls; the real process is the test above's)
    assert cli.main(["explain", "Sw<3,3,3> o (64,64):(64,1)"]) == 0
    assert "offset = 64 * row + 8 * ((col >> 3) ^ (row % 8)) + col % 8" in capsys.readouterr().out


def test_explain_options(capsys):
    assert cli.main(["explain", "ldmatrix", "b16", "x4", "--trans"]) == 0
    assert "col    = groupID" in capsys.readouterr().out
    assert cli.main(["explain", "((4,8),(2,2)):((32,1),(16,8))", "--names", "lane,v"]) == 0
    assert "offset = 32 * (lane % 4) + lane >> 2" not in capsys.readouterr().out  # precedence is bracketed
    assert cli.main(["explain", "m16n8k16", "f16", "A", "--sparse"]) == 0
    assert "firstcol" in capsys.readouterr().out


def test_explain_bad_input_exit_2(capsys):
    assert cli.main(["explain", "(4,2:(2,1)"]) == 2
    assert "layoutalg explain: error" in capsys.readouterr().err
    assert cli.main(["explain", "a", "b", "c", "d"]) == 2


def test_synth_presets_and_kernels(capsys):
    assert cli.main(["synth", "64x64", "e4m3", "cp.async", "block4"]) == 0
    out = capsys.readouterr().out
    assert "synthesised: Sw<2,5,3> o _0 o (64,64):(64,1)" in out and "Layout_K_SW64_Atom<e4m3>" in out
    assert cli.main(["synth", "--kernel", "ampere_gemm_a", "--constraints", "tma"]) == 0
    out = capsys.readouterr().out
    assert "Ampere GEMM" in out and "accepted by wgmma, tma" in out
    assert cli.main(["synth", "64x64", "f16", "(32,8):(1,64)@16"]) == 0
    assert "1 access " in capsys.readouterr().out


def test_synth_bad_input_exit_2(capsys):
    assert cli.main(["synth", "64x64", "f16", "bogus"]) == 2
    assert "not one of" in capsys.readouterr().err
    assert cli.main(["synth"]) == 2
    assert "--kernel" in capsys.readouterr().err
