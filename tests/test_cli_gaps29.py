"""The CLI frictions of issue 29 (part 5): exit codes that say failure, no ``LBO=None``, and a UMMA
atom's operand without the ``-`` placeholder."""

from __future__ import annotations

from layoutalg.cli import main

UMMA = "SM100_MMA_F16BF16_SS<half_t,half_t,float,128,128,K,K>"


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_desc_without_k_blocks_exits_non_zero(capsys):
    code, out, _ = run(capsys, "desc", "--major", "MN", "--swizzle", "64", "--dtype", "e4m3")
    assert code != 0 and "no k-blocks" in out


def test_desc_sm100_says_lbo_is_unused(capsys):
    code, out, _ = run(capsys, "desc", "--target", "sm_100")
    assert code == 0 and "LBO=None" not in out and "LBO=unused (encoded 1)" in out


def test_frag_umma_operand_without_the_placeholder(capsys):
    with_dash = run(capsys, "frag", UMMA, "-", "C")
    without = run(capsys, "frag", UMMA, "C")
    assert with_dash[0] == without[0] == 0 and with_dash[1] == without[1]
    assert run(capsys, "frag", UMMA, "a")[1] == run(capsys, "frag", UMMA, "-", "A")[1]
