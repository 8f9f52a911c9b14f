"""The CLI and the API refuse what they cannot honour, take names as CuTe spells them, and stay quiet.

* every option a verb's mode does not read is an error (exit 2) naming the mode; every enumerated value
  (dtype, atom, instruction, major, operand) is checked and the error names the values that fit;
* no default drops part of the answer (``k_block_descriptors`` returns every slice of the tile);
* CuTe's dtype spellings work in every API and verb that takes a dtype, with the same answer as the
  PTX name; one accumulator rule across the catalog;
* writing a file prints one line; ``-v`` prints the detail.
"""

from __future__ import annotations

import re

import pytest

from layoutalg.cli import fragment_lines, main
from layoutalg.errors import LayoutError
from layoutalg.nvidia import atoms
from layoutalg.nvidia.ampere import ldmatrix, mma
from layoutalg.nvidia.hopper import tma, wgmma, wgmma_fragments
from layoutalg.nvidia.common.dtypes import dtype_bits, dtype_name
from layoutalg.parse import parse

L = "(8,64):(64,1)"
SW = "Sw<3,3,3> o _0 o (64,64):(64,1)"
TILE = "Sw<3,3,3> o _0 o ((8,8),(64,1)):((64,512),(1,0))"  # wgmma.tile("K", 128, "f16", (64, 64))


def _err(capsys: pytest.CaptureFixture, argv: list[str]) -> str:
    rc = main(argv)
    cap = capsys.readouterr()
    assert rc == 2, (argv, rc, cap.out[-500:], cap.err)
    assert "Traceback" not in cap.err and "internal error" not in cap.err, cap.err
    return cap.err


# --- options a mode does not read ------------------------------------------------------------------
@pytest.mark.parametrize("argv, says", [
    (["frag", "m64n8k16", "f16", "C", "--ctype", "banana"], "unknown dtype 'banana'"),
    (["frag", "m64n8k16", "f16", "C", "--trans"], "--trans does nothing for a wgmma fragment"),
    (["frag", "m64n8k16", "f16", "C", "--kind", "f8f6f4"], "--kind does nothing for a wgmma fragment"),
    (["frag", "m16n8k16", "f16", "C", "--trans"], "--trans does nothing for a mma fragment"),
    (["frag", "m16n8k16", "f16", "A", "--sparse", "--alayout", "row"], "--alayout does nothing for a mma.sp fragment"),
    (["frag", "ldmatrix", "b16", "x4", "--ctype", "f32"], "--ctype does nothing for a ldmatrix fragment"),
    (["frag", "ldmatrix", "f32", "x4"], "only .m8n8 .b16"),
    (["frag", "ldmatrix", "b16", "A"], "x1, x2 or x4"),
    (["frag", "m8n8k4", "f16", "C", "--alayout", "col"], "chooses the A fragment of m8n8k4 .f16 only"),
    (["frag", "m16n8k16", "f16", "A", "--batch", "0"], "--batch does nothing without -o"),
    (["frag", "--list", "m16n8k16", "--ctype", "f32"], "--ctype does nothing with --list"),
    (["frag", "--list", "nothing-is-called-this"], "no fragments matches"),
    (["export", L, "--gluon", "--dtype", "f32", "--shape", "8,64"], "--dtype does nothing with --gluon"),
    (["export", "--dsl", L, "--dtype", "f16"], "--dtype does nothing with --dsl"),
    (["export", "--cpp", L, "--shape", "8,64"], "--shape does nothing with --cpp"),
    (["export", "--cpp", L, "--bits", "16"], "--bits does nothing with --cpp"),
    (["export", "--cpp", L, "--dtype", "f16"], "dtype would be ignored"),
    (["show", "(4,2):(2,1)", "--window", "0:2,0:2"], "--window does nothing without --tiled-mma"),
    (["show", "(4,2):(2,1)", "--shape", "4,2"], "--shape does nothing with a layout"),
    (["show", "(4,2):(2,1)", "--swizzle-bytes", "2"], "--swizzle-bytes does nothing without -o"),
    (["show", "--tiled-mma", "SM80_16x8x16_F32F16F16F32_TN", "--max", "3"], "--max does nothing with --tiled-mma"),
    (["show", "--tiled-mma", "SM80_16x8x16_F32F16F16F32_TN", "(4,2):(2,1)"], "give one of"),
    (["show", "--tiled-mma", "SM80_16x8x16_F32F16F16F32_TN", "--banks", "(64,64):(64,1)"], "--banks does nothing without --copy"),
    (["show", "--tiled-mma", "SM80_16x8x16_F32F16F16F32_TN", "--mode", "cells"], "--mode does nothing without -o"),
    (["explain", "(4,2):(2,1)", "--ctype", "f32"], "--ctype does nothing for a layout"),
    (["desc", "0x4000004000010001", "--tile", "64x64"], "--tile does nothing when decoding"),
    (["desc", "0x4000004000010001", "--instruction", "m64n64k16"], "--instruction does nothing when decoding"),
    (["desc", SW, "--dtype", "bf16", "--tile", "64x64"], "--tile does nothing with a layout"),
    (["desc", "--instruction", "m64n7k16"], "desc: --instruction m64n7k16: "),
    (["desc", "--major", "Q"], "not 'K' or 'MN'"),
    (["desc", "--dtype", "banana"], "the types that fit: tf32, f16, bf16"),
    (["tma", "(1000,512):(512,1)", "--operand", "B"], "--operand does nothing without --check"),
    (["tma", "(1000,512):(512,1)", "--smem", "(64,64):(64,1)", "--major", "K"], "--major does nothing with --smem"),
    (["banks", "(64,64):(64,1)", "--access", "(32,1):(1,0)", "--pattern", "row"], "--pattern does nothing with --access"),
    (["report", "-q", "--progress"], "opposite"),
    (["synth", "--kernel", "fp8_transpose", "--threads", "64"], "--threads does nothing with --kernel"),
    (["synth", "--kernel", "fp8_transpose", "64x64"], "would be ignored"),
    (["synth", "64x64", "f16", "ldmatrix", "--threads", "64"], "--threads does nothing without a copy preset"),
    (["synth", "64x64", "f16", "(32,8):(1,32)@x"], "BYTES after '@'"),
    (["verify", "--inputs", "r,c"], "give a layout and a formula"),
    (["atoms", "SM80_16x8x16_F32F16F16F32_TN", "--dtype", "f16"], "--dtype does nothing for an MMA atom"),
    (["atoms", "SM75_U32x4_LDSM_N", "--dtype", "f64"], "the value widths that fit: 4, 8, 16, 32 bits"),
    (["atoms", "--list", "LDSM", "--dtype", "f16"], "--dtype does nothing with --list"),
])
def test_an_option_that_would_do_nothing_is_an_error(capsys: pytest.CaptureFixture, argv: list[str], says: str) -> None:
    assert says in _err(capsys, argv)


# --- names as CuTe spells them ---------------------------------------------------------------------
SPELLINGS = {
    "f16": ["half_t", "cutlass::half_t", "cute::half_t", "__half", "float16", "Float16", ".f16", "torch.float16"],
    "bf16": ["bfloat16_t", "cutlass::bfloat16_t", "__nv_bfloat16", "BFloat16", "torch.bfloat16"],
    "tf32": ["tfloat32_t", "cutlass::tfloat32_t", "TFloat32"],
    "f32": ["float", "float32", "Float32", "fp32"],
    "f64": ["double", "float64", "Float64"],
    "e4m3": ["float_e4m3_t", "cutlass::float_e4m3_t", "Float8E4M3FN", "float8_e4m3fn", "fp8e4nv", "__nv_fp8_e4m3"],
    "e5m2": ["float_e5m2_t", "cutlass::float_e5m2_t", "Float8E5M2", "float8_e5m2", "fp8e5"],
    "s8": ["int8_t", "cute::int8_t", "Int8", "int8"],
    "u8": ["uint8_t", "Uint8", "uint8"],
    "s32": ["int32_t", "Int32"],
    "s4": ["int4b_t", "cutlass::int4b_t"],
    "u4": ["uint4b_t"],
    "b1": ["uint1b_t"],
    "e2m1": ["float_e2m1_t", "Float4E2M1FN"],
    "ue8m0": ["float_ue8m0_t"],
}


def test_dtype_name_reads_every_spelling() -> None:
    for canon, names in SPELLINGS.items():
        for n in names:
            assert dtype_name(n) == canon, n
    with pytest.raises(LayoutError, match="known types"):
        dtype_name("banana")
    with pytest.raises(LayoutError, match="the types that fit: f16, bf16"):
        dtype_name("f32", allowed=("f16", "bf16"))


def _same(f, canon: str, spellings: list[str]) -> None:
    want = f(canon)
    for s in spellings:
        assert f(s) == want, (s, canon)


@pytest.mark.parametrize("canon", ["f16", "bf16", "e4m3", "s8", "tf32"])
def test_every_api_that_takes_a_dtype_takes_cutes_spelling(canon: str) -> None:
    from layoutalg.interop.cute import to_cute_cpp
    from layoutalg.synth import dtype_bytes, ldmatrix_copy, row_copy, synthesize_swizzle

    names = SPELLINGS[canon]
    k = {"f16": 16, "bf16": 16, "tf32": 8, "e4m3": 32, "s8": 32}[canon]
    mk = {"f16": "m16n8k16", "bf16": "m16n8k16", "tf32": "m16n8k8", "e4m3": "m16n8k32", "s8": "m16n8k32"}[canon]
    _same(lambda t: mma.fragment(mk, t, "A"), canon, names)
    _same(lambda t: mma.fragment(mk, t, "C"), canon, names)
    if canon in ("f16", "bf16", "s8"):
        _same(lambda t: mma.sparse_fragment(mk, t, "A"), canon, names)
    _same(lambda t: wgmma_fragments.fragment(f"m64n8k{k}", t, "A"), canon, names)
    _same(lambda t: wgmma_fragments.fragment(f"m64n8k{k}", t, "D"), canon, names)
    width = 128 * 8 // dtype_bits(canon)  # one 128-byte swizzle row of K
    _same(lambda t: wgmma.tile("K", 128, t, (64, width)), canon, names)
    _same(lambda t: wgmma.atom("K", 64, t), canon, names)
    t0 = wgmma.tile("K", 128, canon, (64, width))
    _same(lambda t: wgmma.descriptor_from_layout(t0, t).descriptor.encode(), canon, names)
    _same(lambda t: [b.descriptor.encode() for b in wgmma.k_block_descriptors(t0, t, f"m64n64k{k}")], canon, names)
    _same(lambda t: atoms.value_bits(t), canon, names)
    _same(lambda t: atoms.copy_atom("SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>", t), canon, names)
    _same(lambda t: atoms.cute_mma_name(mk, t), canon, names)
    _same(lambda t: atoms.mma_atom(shape=f"m64n8k{k}", dtype=t).name, canon, names)
    _same(lambda t: tma.tma_data_type(t), canon, names)
    _same(lambda t: tma.make_tma_copy("(512,512):(512,1)", t0, t).tensor_map.c_call(), canon, names)
    _same(lambda t: dtype_bytes(t), canon, names)
    _same(lambda t: to_cute_cpp(t0, t).cute, canon, names)
    if canon in ("f16", "bf16"):
        acc = [row_copy((64, 64), canon), ldmatrix_copy((64, 64))]
        _same(lambda t: str(synthesize_swizzle((64, 64), t, acc).layout), canon, names[:2])
    assert ldmatrix.fragment(4, dtype="half_t") == ldmatrix.fragment(4)
    assert dtype_bits(names[0]) == dtype_bits(canon)


def test_the_cli_takes_cutes_spellings(capsys: pytest.CaptureFixture) -> None:
    for argv_canon, argv_cute in [
        (["frag", "m16n8k16", "f16", "C", "--ctype", "f16"], ["frag", "m16n8k16", "cutlass::half_t", "C", "--ctype", "half_t"]),
        (["frag", "m64n8k32", "e4m3", "A"], ["frag", "m64n8k32", "float_e4m3_t", "A"]),
        (["desc", "--dtype", "bf16"], ["desc", "--dtype", "cutlass::bfloat16_t"]),
        (["desc", SW, "--dtype", "f16"], ["desc", SW, "--dtype", "half_t"]),
        (["tma", "(512,512):(512,1)", "--dtype", "e4m3", "--tile", "64x128"],
         ["tma", "(512,512):(512,1)", "--dtype", "float_e4m3_t", "--tile", "64x128"]),
        (["synth", "64x64", "e4m3", "cp.async", "block4"], ["synth", "64x64", "cutlass::float_e4m3_t", "cp.async", "block4"]),
        (["export", "--cpp", TILE, "--dtype", "f16"], ["export", "--cpp", TILE, "--dtype", "half_t"]),
        (["atoms", "SM75_U32x4_LDSM_N", "--dtype", "f16"], ["atoms", "SM75_U32x4_LDSM_N", "--dtype", "half_t"]),
    ]:
        assert main(argv_canon) == 0, argv_canon
        a = capsys.readouterr().out
        assert main(argv_cute) == 0, argv_cute
        b = capsys.readouterr().out
        def untimed(x: str) -> str:
            return re.sub(r"\(\d+\.\d+ s\)", "", x)
        assert untimed(a) == untimed(b), (argv_cute, a, b)


def test_make_tiled_mma_takes_an_atom_name() -> None:
    from layoutalg.tiled import make_tiled_mma

    by_name = make_tiled_mma("SM80_16x8x16_F32F16F16F32_TN", (2, 2, 1))
    by_atom = make_tiled_mma(atoms.mma_atom("SM80_16x8x16_F32F16F16F32_TN"), (2, 2, 1))
    assert str(by_name) == str(by_atom) and by_name.tile_size_mnk == (32, 16, 16)


def test_copy_atom_value_type_is_never_blank_and_misfits_say_what_fits() -> None:
    a = atoms.copy_atom("SM75_U32x4_LDSM_N")
    assert a.value_type == "b16" and a.value_bits == 16 and "value_type='b16'" in repr(a)
    assert atoms.copy_atom("UniversalCopy<uint128_t>").value_type == "b128"
    assert atoms.copy_atom("SM75_U32x4_LDSM_N", 16).value_type == "b16"
    assert atoms.copy_atom("SM75_U32x4_LDSM_N", "cutlass::half_t").value_type == "f16"
    with pytest.raises(LayoutError, match=r"cannot move 64-bit values \(f64\).*the value widths that fit: 4, 8, 16, 32 bits"):
        atoms.copy_atom("SM75_U32x4_LDSM_N", "f64")
    with pytest.raises(LayoutError, match="widths that fit: 4, 8, 16 bits"):
        atoms.copy_atom("SM75_U16x8_LDSM_T", "float")


def test_api_refuses_options_it_would_ignore() -> None:
    from layoutalg.interop.cute import to_cute_cpp

    with pytest.raises(LayoutError, match="shape=, dtype=, ctype="):
        atoms.mma_atom("SM80_16x8x16_F32F16F16F32_TN", ctype="f16")
    with pytest.raises(LayoutError, match="source="):
        atoms.mma_atom(shape="m16n8k16", dtype="f16", source="RS")
    with pytest.raises(LayoutError, match="row.col only"):
        atoms.cute_mma_name("m16n8k16", "f16", layouts="NT")
    with pytest.raises(LayoutError, match="dtype would be ignored"):
        to_cute_cpp(parse("(8,64):(64,1)"), "f16")
    with pytest.raises(LayoutError, match="not a fragment"):
        to_cute_cpp(parse("(8,64):(64,1)"), ctype="f32")
    with pytest.raises(LayoutError, match="listed under .row.col"):
        mma.fragment("m16n8k16", "f16", "C", alayout="col")
    with pytest.raises(LayoutError, match="not an accumulator of m16n8k16 .bf16"):
        mma.fragment("m16n8k16", "bf16", "A", ctype="f16")
    with pytest.raises(LayoutError, match="does not depend on it"):
        wgmma_fragments.fragment("m64n8k16", "f16", "A", ctype="f32")
    with pytest.raises(LayoutError, match="unknown dtype"):
        wgmma.canonical_swizzle(128, "banana")
    with pytest.raises(LayoutError, match="order"):
        wgmma.tile("K", 128, "f16", (64, 64), order=(1, 2, 3))
    t = wgmma.tile("K", 128, "bf16", (128, 64))
    with pytest.raises(LayoutError, match="not an MN block of the tile: 0 .. 1"):
        wgmma.k_block_descriptors(t, "bf16", mn_block=2)
    with pytest.raises(LayoutError, match="swizzle_unit 'banana'"):
        wgmma.k_block_descriptors(t, "bf16", swizzle_unit="banana")
    with pytest.raises(LayoutError, match="warps=.* is not a pair"):
        mma.tile_fragment(mma.fragment("m16n8k16", "f16", "A"), (64, 32), (2, 1, 5))
    import sympy

    from layoutalg import Layout, verify

    r = sympy.Symbol("r", integer=True, nonnegative=True)
    with pytest.raises(LayoutError, match="would be ignored"):
        verify(Layout(4, 1), r, (r,), instances=[{"m": 2}])
    # symbolic=False is honoured for symbolic sizes too: instances, not the digit proof
    v = verify(parse("(8,m):(1,8)"), "r + 8*c", "r, c", symbolic=False)
    assert v and v.method == "instances" and not v.proven
    assert verify(parse("(8,m):(1,8)"), "r + 8*c", "r, c").method == "symbolic"


# --- one accumulator rule, defaults that keep the whole answer ----------------------------------
def test_one_accumulator_rule_across_the_catalog() -> None:
    for shape, wshape in (("m16n8k16", "m64n8k16"), ("m16n8k32", "m64n8k32")):
        mult = "f16" if shape == "m16n8k16" else "e4m3"
        assert mma.fragment(shape, mult, "C").dtype == wgmma_fragments.fragment(wshape, mult, "D").dtype == "f32"
        assert mma.fragment(shape, mult, "C", ctype="f16").dtype == "f16"
        assert wgmma_fragments.fragment(wshape, mult, "D", ctype="f16").dtype == "f16"
        assert atoms.mma_atom(shape=shape, dtype=mult).value_types[0] == "f32"
        assert atoms.mma_atom(shape=wshape, dtype=mult).value_types[0] == "f32"
    # integer multiplicands accumulate in s32; a type that is no multiplicand names the accumulator
    assert mma.fragment("m16n8k32", "s8", "C").dtype == wgmma_fragments.fragment("m64n8k32", "s8", "D").dtype == "s32"
    assert wgmma_fragments.fragment("m64n8k16", "f32", "D").dtype == "f32"
    assert mma.fragment("m16n8k8", "f32", "C").dtype == "f32"


def test_k_block_descriptors_returns_every_slice_by_default() -> None:
    t = wgmma.tile("K", 128, "bf16", (128, 64))
    every = wgmma.k_block_descriptors(t, "bf16", "m64n64k16")
    assert [(b.mn_block, b.k_block) for b in every] == [(i, j) for i in range(2) for j in range(4)]
    assert every[4:] == wgmma.k_block_descriptors(t, "bf16", "m64n64k16", mn_block=1)
    # the second MN block starts 64 rows = 64 * 128 B further: the descriptor says so in its repr
    assert every[4].offset_bytes == 64 * 128 and "descriptor=0x" in repr(every[4])
    assert f"{int(every[4].descriptor.encode()):#018x}" in repr(every[4])


def test_desc_never_prints_none(capsys: pytest.CaptureFixture) -> None:
    err = _err(capsys, ["desc", "--instruction", "m64n7k16"])
    assert "None" not in err and "N = 7" in err


# --- lists ---------------------------------------------------------------------------------------
def test_frag_and_atoms_list(capsys: pytest.CaptureFixture) -> None:
    lines = fragment_lines()
    assert "m16n8k16 f16 A" in lines and "m64n8k16 f16 D --ctype f32" in lines and "ldmatrix b16 x4 --trans" in lines
    # every listed line is a working frag command
    for line in lines[::23]:
        assert main(["frag", *line.split()]) == 0, line
    capsys.readouterr()
    assert main(["frag", "--list", "m16n8k16 f16 C"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert {"m16n8k16 f16 C --ctype f16", "m16n8k16 f16 C --ctype f32"} <= set(out)
    assert all({"m16n8k16", "f16", "c"} <= set(ln.lower().split()) for ln in out)  # f16 is a word: no bf16
    assert main(["atoms", "--list", "LDSM_T"]) == 0
    assert capsys.readouterr().out.split() == ["copy", "SM75_U16x2_LDSM_T", "copy", "SM75_U16x4_LDSM_T",
                                               "copy", "SM75_U16x8_LDSM_T"]
    assert main(["atoms", "--list", "SM90_64x256x16_F32*_SS"]) == 0
    assert capsys.readouterr().out.split()[1::2] == ["SM90_64x256x16_F32F16F16_SS", "SM90_64x256x16_F32BF16BF16_SS"]


# --- quiet when writing a file -----------------------------------------------------------------------
def test_writing_a_file_prints_one_line(tmp_path, capsys: pytest.CaptureFixture) -> None:
    big = tmp_path / "big.svg"
    assert main(["show", "Sw<3,4,3> o (128,128):(128,1)", "-o", str(big)]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and out.startswith(f"wrote {big} (") and len(out) < 200
    assert main(["show", "Sw<3,4,3> o (128,128):(128,1)", "-o", str(big), "-v"]) == 0
    assert len(capsys.readouterr().out) > 10_000  # -v: the grid too
    for argv in (["frag", "m16n8k16", "f16", "A", "-o", str(tmp_path / "a.svg")],
                 ["banks", SW, "--bytes", "2", "--vector", "16", "-o", str(tmp_path / "b.svg")]):
        assert main(argv) == 0
        out = capsys.readouterr().out
        assert out.count("\n") == 1 and out.startswith("wrote "), (argv, out)
