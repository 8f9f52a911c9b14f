"""``layoutalg idesc encode|decode``: the tcgen05 instruction descriptor from a shell."""

from __future__ import annotations

import pytest

from layoutalg.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_encode_prints_word_and_fields(capsys):
    code, out, _ = run(capsys, "idesc", "encode", "--kind", "f16", "--a", "bf16", "--b", "bf16", "--c", "f32", "-m", "128", "-n", "128")
    assert code == 0
    assert out.splitlines()[0] == "0x08200490"  # CuTe's and Triton's word for this configuration
    assert "kind::f16 bf16 x bf16 -> f32, M=128 N=128 K=16" in out and "[17-22] n_dim              = 16" in out


def test_encode_block_scaled_and_options(capsys):
    code, out, _ = run(capsys, "idesc", "encode", "--kind", "kind::mxf8f6f4", "--a", "float_e4m3_t", "--b", "e4m3",
                       "-m", "128", "-n", "128", "--sfa-id", "1", "--sfb-id", "1")
    assert code == 0 and out.splitlines()[0] == "0x28a00010"  # Triton's second K step of this MMA
    code, out, _ = run(capsys, "idesc", "encode", "--kind", "i8", "--a", "s8", "--b", "u8", "-m", "64", "-n", "24",
                       "--saturate", "--sparse", "--sparse-selector", "2")
    assert code == 0 and "s32" in out and "saturate" in out


def test_decode(capsys):
    code, out, _ = run(capsys, "idesc", "decode", "0x08200490", "--kind", "f16")
    assert code == 0 and out.startswith("kind::f16 bf16 x bf16 -> f32, M=128 N=128")
    code, out, _ = run(capsys, "idesc", "decode", "0x08200490")
    assert code == 0 and "reads legally as 2 kinds" in out and "kind::f8f6f4 e5m2 x e5m2" in out
    code, out, _ = run(capsys, "idesc", "decode", str(0x08a00000))
    assert code == 0 and out.startswith("kind::mxf8f6f4 e4m3 x e4m3 -> f32, scale ue8m0")


@pytest.mark.parametrize("argv, words", [
    (["encode", "--kind", "f16", "--a", "bf16", "--b", "bf16", "--c", "f32", "-m", "96", "-n", "128"], "M=96"),
    (["encode", "--kind", "f16", "--a", "bf16", "--b", "bf16", "--c", "f32", "-m", "256", "-n", "24", "--cta-group", "2"], "N=24"),
    (["encode", "--kind", "f8f6f4", "--a", "e2m1", "--b", "e4m3", "--c", "f32", "-m", "128", "-n", "64", "--a-major", "MN"],
     "must be K-major"),
    (["encode", "--kind", "mxf8f6f4", "--a", "e4m3", "--b", "e4m3", "-m", "128", "-n", "64", "--scale-type", "ue4m3"], "scale_type ue8m0"),
    (["encode", "--kind", "f16", "--a", "f16", "--b", "f16", "--c", "f32", "-m", "128", "-n", "64", "--sfa-id", "0"],
     "--sfa-id is not an option of kind::f16"),
    (["encode", "--kind", "mxf4", "--a", "e2m1", "--b", "e2m1", "-m", "128", "-n", "64", "--max-shift", "0"],
     "--max-shift is not an option of kind::mxf4"),
    (["encode", "--kind", "i8", "--a", "s8", "--b", "s8", "-m", "128", "-n", "64", "--negate-a"], "not options of kind::i8"),
    (["encode", "--kind", "f16", "--a", "f16", "--b", "f16", "-m", "128", "-n", "64"], "needs --c"),
    (["decode", "0x08200490", "--kind", "mxf4"], "decode: 0x08200490 as kind::mxf4"),
    (["decode", "banana"], "not a number"),
    (["decode", "0xffffffff"], "no legal descriptor"),
])
def test_errors_exit_2_naming_the_rule(capsys, argv, words):
    code, out, err = run(capsys, "idesc", *argv)
    assert code == 2, (out, err)
    assert words in err and err.startswith("layoutalg idesc: error:")
