"""The CLI finds AMD's instructions by AMD's names: `frag` proves an operand, `atoms` prints the atom and
`atoms --list` lists them beside NVIDIA's (the one atom registry). Run in-process through ``cli.main``."""

from __future__ import annotations

import pytest

from layoutalg import cli
from layoutalg.amd import mfma


def main(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    rc = cli.main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def test_frag_mfma_operand_is_proven(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = main(capsys, "frag", "V_MFMA_F32_32X32X8F16", "-", "A")
    assert rc == 0
    # the ISA: lane l holds row l % 32 and K columns 4*(l // 32) .. +3 (four f16 in two VGPRs)
    assert "TV layout   : ((32,2),4):((1,128),32)" in out and "verified    : yes" in out
    assert str(mfma("v_mfma_f32_32x32x8_f16").fragment("A").layout) == "((32,2),4):((1,128),32)"


def test_frag_wmma_and_multi_block(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = main(capsys, "frag", "v_wmma_f32_16x16x16_f16", "f16", "B")
    assert rc == 0 and "wave32" in out and "verified    : yes" in out
    rc, out, _ = main(capsys, "frag", "v_mfma_f32_4x4x4_16b_f16", "-", "C")
    assert rc == 0 and "16 blocks" in out


def test_frag_amd_refuses_what_it_cannot_honour(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(capsys, "frag", "v_mfma_f32_32x32x8_f16", "f32", "A")[0] == 2  # A is f16
    assert main(capsys, "frag", "v_mfma_f32_32x32x8_f16", "-", "Q")[0] == 2
    assert main(capsys, "frag", "v_mfma_f32_32x32x8_f16", "-", "A", "--ctype", "f16")[0] == 2
    rc, _, err = main(capsys, "frag", "v_mfma_f32_33x32x8_f16", "-", "A")
    assert rc == 2 and "v_mfma_f32_32x32x8_f16" in err  # the close names


def test_atoms_lists_and_prints_amd_atoms(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = main(capsys, "atoms", "--list", "mfma_f32_32x32x8")
    assert rc == 0 and "v_mfma_f32_32x32x8_f16" in out and "v_mfma_f32_32x32x8f16" in out
    rc, out, _ = main(capsys, "atoms", "--list", "SM80_16x8x16_F32F16F16F32")
    assert rc == 0 and "SM80_16x8x16_F32F16F16F32_TN" in out and "v_mfma" not in out
    rc, out, _ = main(capsys, "atoms", "v_mfma_f32_16x16x16_f16")
    assert rc == 0 and "Shape_MNK:  (16,16,16)" in out and "LayoutC_TV: ((16,4),4):((16,4),1)" in out


def test_frag_amd_picture(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "a.svg"
    rc, text, _ = main(capsys, "frag", "v_mfma_f32_16x16x16_f16", "-", "A", "-o", str(out))
    assert rc == 0 and out.exists() and "verified yes" in text
    assert out.read_text().count("T63") >= 1  # every lane of the wave is drawn


def test_frag_and_atoms_gfx1250(capsys: pytest.CaptureFixture[str]) -> None:
    """gfx1250's WMMA by its own names: frag proves the operand, atoms prints it (the registry's v_wmma.gfx1250)."""
    rc, out, _ = main(capsys, "frag", "v_wmma_f32_16x16x32_f16", "-", "A")
    assert rc == 0 and "(gfx1250, wave32)" in out and "verified    : yes" in out
    # half-waves alternate chunks of 8 K: lane 16 value 0 is K 8, value 8 is K 16 + 8
    assert "TV layout   : ((16,2),(8,2)):((1,128),(16,256))" in out
    rc, out, _ = main(capsys, "atoms", "V_WMMA_SCALE_F32_16X16X128_F8F6F4")
    assert rc == 0 and "Shape_MNK:  (16,16,128)" in out
