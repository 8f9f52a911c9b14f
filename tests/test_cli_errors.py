"""Every entry point of the `layoutalg` command refuses bad arguments with one line, no traceback and a
non-zero exit; the desc verb decodes descriptor words and derives descriptors from layout text; the
report's progress bar appears only on a terminal."""

from __future__ import annotations

import io
import subprocess
import sys

import pytest

from layoutalg import cli
from layoutalg.nvidia.blackwell.descriptor import MatrixDescriptor, Tcgen05Descriptor
from layoutalg.nvidia.hopper.wgmma import descriptor_from_layout, k_block_descriptors, tile

BAD = [
    [],
    ["frobnicate"],
    ["--bogus"],
    ["show"],
    ["show", "(4,2:(2,1)"],
    ["show", "81"],
    ["show", "(m,2):(1,m)"],
    ["show", "(1099511627776,1099511627776):(1,1099511627776)"],
    ["show", "(4,2):(2,1)", "--max", "0"],
    ["show", "(4,2):(2,1)", "--max", "x"],
    ["show", "(4,2):(2,1)", "--swizzle-bytes", "3", "-o", "x.svg"],
    ["show", "(4,2):(2,1)", "-o", "picture.txt"],
    ["show", "(4,2):(2,1)", "-o", "/nonexistent-dir/x.svg"],
    ["eval", "(4,2):(2,1)"],
    ["eval", "(4,2):(2,1)", "(1,"],
    ["eval", "(4,2):(2,1)", "99"],
    ["eval", "(4,2):(2,1)", "-1"],
    ["eval", "(4,2):(2,1)", "(1,2,3)"],
    ["eval", "(4,2):(2,1)", "1.5"],
    ["eval", "(4,2):(2,1)", "True"],
    ["eval", "(4,2):(2,1)", "'a'"],
    ["eval", "(4,2):(2,1)", "(5,0)"],
    ["desc", "0x1" + "0" * 20],
    ["desc", "-5"],
    ["desc", "0x0000000000004000"],  # a reserved bit (14)
    ["desc", "0xe000000000000000", "--target", "sm_100"],  # swizzle code 7
    ["desc", "0x4000004000010001", "--target", "sm_80"],
    ["desc", "0x4000004000010001", "--dtype", "f99"],
    ["desc", "0x4000004000010001", "--dtype", "f64"],
    ["desc", "(64,64):(64,1)"],
    ["desc", "(64,64):(1,64)", "--dtype", "bf16", "--major", "sideways"],
    ["desc", "(8,8):(3,5)", "--dtype", "bf16"],
    ["desc", "(64,64):(64,1", "--dtype", "bf16"],
    ["desc", "--tile", "64x"],
    ["desc", "--tile", "65x64"],
    ["desc", "--swizzle", "48"],
    ["desc", "--dtype", "int3"],
    ["desc", "--instruction", "m32n8k16"],
    ["desc", "--start", "zz"],
    ["desc", "--start", "0x3"],
    ["frag"],
    ["frag", "m99n8k16", "f16", "A"],
    ["frag", "m16n8k16", "f99", "A"],
    ["frag", "m16n8k16", "f16", "Q"],
    ["frag", "m16n8k16", "f16", "A", "--batch", "7", "-o", "f.svg"],
    ["frag", "ldmatrix", "b16", "x3"],
    ["frag", "m64n8k16", "f16", "Z"],
    ["verify", "extra"],
    ["banks", "(64,64):(64,1)", "--bytes", "3"],
    ["banks", "(64,64):(64,1)", "--vector", "5"],
    ["banks", "(64,64):(64,1)", "--pattern", "diagonal"],
    ["banks", "(64,64):(64,1)", "--access", "(32,2:(1,64)"],
    ["banks", "(4,4):(4,1)", "--pattern", "column"],
    ["banks", "(64,64):(64,1)", "--access", "(32,2):(1,99999)"],
    ["harness", "walk"],
    ["report", "-o", "/dev/null/report"],
]


@pytest.mark.parametrize("argv", BAD, ids=lambda a: " ".join(a)[:60] or "(none)")
def test_bad_arguments_exit_nonzero_with_one_line(argv: list[str], capsys: pytest.CaptureFixture[str], tmp_path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    try:
        rc = cli.main(argv)
    except SystemExit as e:  # argparse
        rc = e.code if isinstance(e.code, int) else 2
    err = capsys.readouterr().err
    assert rc == 2, (rc, err)
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    assert "Traceback" not in err and lines[0].startswith("layoutalg")


def test_a_bad_argument_is_one_line_in_a_real_process() -> None:
    r = subprocess.run([sys.executable, "-m", "layoutalg", "desc", "0x4000004000010001", "--nope"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "unrecognized arguments: --nope" in r.stderr


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert cli.main(argv) == 0
    return capsys.readouterr().out


def test_desc_decodes_an_sm90_word(capsys: pytest.CaptureFixture[str]) -> None:
    word = 0x4000004000010001  # the word
    out = _run(["desc", hex(word)], capsys)
    d = MatrixDescriptor.decode(word)
    assert d.start_address == 16 and d.stride_byte_offset == 1024 and d.swizzle == 128
    assert f"{word:#018x}" in out and "1024 B" in out and "128B" in out and "Swizzle<3,4,3>" in out
    assert "K-major" in out and "MN-major" in out
    # with a type, the canonical layout in elements: 128B K-major bf16, SBO = 1024 B = 512 elements
    out = _run(["desc", hex(word), "--dtype", "bf16", "--major", "K"], capsys)
    assert "Sw<3,3,3> o _0 o ((8,m),(8,2*k)):((64,512),(1,8))" in out and "MN-major" not in out


def test_desc_decodes_a_tcgen05_word(capsys: pytest.CaptureFixture[str]) -> None:
    d = Tcgen05Descriptor(start_address=0x800, leading_byte_offset=16, stride_byte_offset=1024, swizzle=64)
    out = _run(["desc", hex(d.encode()), "--target", "sm_100", "--dtype", "f16"], capsys)
    assert "Tcgen05Descriptor (sm_100)" in out and "64B" in out and "Swizzle<2,4,3>" in out
    # the same word read as sm_90 is refused: bits 46-48 hold the tcgen05 version
    assert cli.main(["desc", hex(d.encode())]) == 2


def test_desc_of_layout_text_matches_the_python_api(capsys: pytest.CaptureFixture[str]) -> None:
    text = "Sw<3,3,3> o _0 o (64,64):(64,1)"
    out = _run(["desc", text, "--dtype", "bf16", "--start", "0x400"], capsys)
    d = descriptor_from_layout(text, "bf16", start_address=0x400)
    assert f"{d.encode():#018x}" in out
    # a tile wider than one 128-byte swizzle atom: not one canonical block, but eight k-blocks
    wide = tile("K", 128, "bf16", (64, 128))
    out = _run(["desc", str(wide), "--dtype", "bf16"], capsys)
    blocks = k_block_descriptors(wide, "bf16", "m64n128k16", mn_block=None)
    assert len(blocks) == 8 and "not one canonical block" in out
    for b in blocks:
        assert f"{b.descriptor.encode():#018x}" in out
    # sm_100: the same fields in the tcgen05 word
    out = _run(["desc", text, "--dtype", "bf16", "--target", "sm_100"], capsys)
    assert f"{descriptor_from_layout(text, 'bf16', target='sm_100').encode():#018x}" in out


def test_progress_only_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    p = cli.Progress(3)
    for k in range(3):
        p.step(f"step {k}")
    assert err.getvalue() == ""  # not a terminal: quiet
    forced = cli.Progress(3, enabled=True)
    for k in range(3):
        forced.step(f"step {k}")
    assert err.getvalue().count("\n") == 3

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    tty = Tty()
    monkeypatch.setattr(sys, "stderr", tty)
    bar = cli.Progress(3)
    for k in range(3):
        bar.step(f"step {k}")
    assert tty.getvalue().count("\r") == 3 and tty.getvalue().count("\n") == 1  # redrawn in place


def test_report_is_quiet_when_not_on_a_terminal(tmp_path, monkeypatch) -> None:
    """``report`` with stdout and stderr not terminals (pipes in CI, files here): no progress bar. Run through
    ``cli.main`` in this process (what ``python -m layoutalg`` calls; a child costs a Python start and the
    package import on top of the report), its streams files as a child's pipes would be."""
    with open(tmp_path / "out", "w+") as out, open(tmp_path / "err", "w+") as err:
        assert not out.isatty() and not err.isatty()
        monkeypatch.setattr(sys, "stdout", out)
        monkeypatch.setattr(sys, "stderr", err)
        code = cli.main(["report", "-o", str(tmp_path / "rep")])
        monkeypatch.undo()
        stdout, stderr = (out.seek(0), out.read())[1], (err.seek(0), err.read())[1]
    assert code == 0, stderr
    assert "The catalog, proven" in (tmp_path / "rep" / "report.md").read_text()
    assert "[#" not in stderr and "[#" not in stdout
