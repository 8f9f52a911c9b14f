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


def test_desc_and_export_take_cutes_partitioned_shape(capsys):
    tile = "Sw<3,4,3> o _0 o ((128,16),1,4):((64,1),0,16)"  # UMMA::tile_to_mma_shape(K_SW128<bf16>, ((128,16),1,4))
    code, out, _ = run(capsys, "desc", "--target", "sm_100", tile, "--dtype", "bf16")
    assert code == 0 and "0x4000404000010006" in out  # k-block 3: start += 96 B >> 4 (CuTe's descriptor iterator)
    code, out, _ = run(capsys, "export", tile, "--dtype", "bf16")
    assert code == 0 and "UMMA::tile_to_mma_shape(UMMA::Layout_K_SW128_Atom<" in out and "smem_ptr_flag_bits<16>" in out
    code, out, _ = run(capsys, "export", "Sw<3,3,3> o _0 o ((8,16),(64,1)):((64,512),(1,0))", "--dtype", "bf16",
                       "--target", "sm_100")
    assert code == 0 and "UMMA::Layout_K_SW128_Atom" in out and "GMMA::" not in out


# --- tmem --operand A | SFA | SFB | E: the TMEM fragments beside the accumulator, with pictures -------------
TS = "SM100_MMA_F16BF16_TS<f16,f16,float,128,64,K,K>"
BS = "SM100_MMA_MXF8F6F4_SS<e4m3,e4m3,float,ue8m0,128,128,K,K>"
SP = "SM100_MMA_F8F6F4_SS_SPARSE<e4m3,e4m3,float,128,64,K,K>"


def test_tmem_operands_print_their_fragment(capsys):
    from layoutalg.nvidia.blackwell.tmem_accum import umma_tmem_a, umma_tmem_e, umma_tmem_sf

    for name, op, layout in ((TS, "A", umma_tmem_a(TS, (128, 16))), (BS, "SFA", umma_tmem_sf(BS, "A", (128, 128, 128))),
                             (BS, "SFB", umma_tmem_sf(BS, "B", (128, 128, 128))), (SP, "E", umma_tmem_e(SP))):
        code, out, _ = run(capsys, "tmem", name, "--operand", op)
        assert code == 0 and f"fragment    : {layout}" in out and "[ok]" in out and "FAILED" not in out, out


def test_tmem_operand_pictures(capsys, tmp_path):
    for name, op in ((TS, "A"), (BS, "SFB"), (SP, "E")):
        path = tmp_path / f"{op}.svg"
        code, out, _ = run(capsys, "tmem", name, "--operand", op, "-o", str(path))
        assert code == 0 and path.exists() and f"TMEM {op} of" in path.read_text()


def test_tmem_operand_refusals(capsys):

    for argv in (["tmem", "SM100_TMEM_LOAD_32dp32b1x", "--operand", "A"], ["tmem", UMMA, "--operand", "SFA"],
                 ["tmem", UMMA, "--operand", "E"], ["tmem", UMMA, "--operand", "A"]):
        code, _, err = run(capsys, *argv)
        assert code != 0, argv
