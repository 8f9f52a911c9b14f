"""CDNA4 (gfx950) and gfx1250 against a second, independent source: AMD's composable_kernel (CK), read as data.

AMD's calculator has no CDNA4 and Triton has no ``v_smfmac`` nor fp6/fp4 register packing, so these
maps were checked against nothing else before. CK states them in its own terms; the constants below
are copied by hand from CK's source (provenance per table) and the maps are derived from them here,
independently of layoutalg's rules:

- ``include/ck/tensor_operation/gpu/warp/xdlops_gemm.hpp`` (ROCm/composable_kernel @ 03d3a48e):
  ``mfma_type<>`` -- ``num_threads_per_blk`` lanes along M (N), ``num_input_blks`` lane groups along
  K, ``k_per_blk`` consecutive K a lane (``is_k_reduction``), D in ``num_groups_per_blk`` groups of
  ``group_size`` rows. For the f8f6f4 shapes ``k_per_blk = 32`` whatever the format: a lane holds 32
  consecutive K-elements of fp8, fp6 or fp4.
- ``include/ck/utility/amd_xdlops.hpp`` (@ 7a57db74): the f8f6f4 operands are passed as ``f8x32``
  (8 dwords), ``int32x6`` (fp6: 32 x 6 bits) and ``int32x4`` (fp4: 32 x 4 bits), padded to the
  intrinsic's ``int32x8``: 32 values packed densely into 8, 6, 4 VGPRs.
- ``include/ck_tile/core/arch/mma/sparse/mfma/sparse_gfx9.hpp`` (CK Tile, ``amdgcn_mma_base`` layout
  parameters, documented in ``amdgcn_mma.hpp``): ``kABKPerLane`` K a lane, ``kAKNumAccess`` /
  ``kBKNumAccess`` the sets the lane's K values split into (K = K2 * K1 * K0 with K2 = NumAccess,
  K1 = the lane groups, K0 fastest), ``kCMPerLane`` / ``kCMNumAccess`` the same for D's rows. The
  gfx950-only ``v_smfmac`` declare ``kBKNumAccess = 2``: B as two halves of K (the CDNA3 shapes: 1).
- ``include/ck_tile/core/arch/mma/scale/wmma/scale_gfx125.hpp``: gfx1250's scaled WMMA, the same
  parameters for each pair of A and B formats; their pairing of A's and B's values fixes gfx1250's
  8-bit chunk (16 K, where Triton and FlyDSL use 8).
"""

from __future__ import annotations

import pytest

from layoutalg.amd import mfma

WAVE = 64

#: xdlops_gemm.hpp mfma_type<>: instruction -> (num_threads_per_blk, num_input_blks, k_per_blk, group_size,
#: num_groups_per_blk); all is_k_reduction, num_output_blks 1 (CK's names in the comment)
CK_XDLOPS = {
    ("cdna4", "v_mfma_f32_32x32x16_f16"): (32, 2, 8, 4, 4),           # mfma_f32_32x32x16f16
    ("cdna4", "v_mfma_f32_16x16x32_f16"): (16, 4, 8, 4, 1),           # mfma_f32_16x16x32f16
    ("cdna4", "v_mfma_f32_32x32x16_bf16"): (32, 2, 8, 4, 4),          # mfma_f32_32x32x16bf16
    ("cdna4", "v_mfma_f32_32x32x64_f8f6f4"): (32, 2, 32, 4, 4),       # mfma_f32_32x32x64f8f6f4
    ("cdna4", "v_mfma_f32_16x16x128_f8f6f4"): (16, 4, 32, 4, 1),      # mfma_f32_16x16x128f8f6f4
    ("cdna4", "v_mfma_scale_f32_32x32x64_f8f6f4"): (32, 2, 32, 4, 4),  # mfma_scale_f32_32x32x64f8f6f4
    ("cdna4", "v_mfma_scale_f32_16x16x128_f8f6f4"): (16, 4, 32, 4, 1),  # mfma_scale_f32_16x16x128f8f6f4
    # CDNA3 rows, where AMD's calculator also speaks: CK and the calculator agree
    ("cdna3", "v_mfma_f32_32x32x8_f16"): (32, 2, 4, 4, 4),            # mfma_f32_32x32x8f16
    ("cdna3", "v_mfma_f32_16x16x16_f16"): (16, 4, 4, 4, 1),           # mfma_f32_16x16x16f16
    ("cdna3", "v_mfma_f32_32x32x16_fp8_fp8"): (32, 2, 8, 4, 4),       # mfma_f32_32x32x16f8f8
    ("cdna3", "v_mfma_f32_16x16x32_bf8_bf8"): (16, 4, 8, 4, 1),       # mfma_f32_16x16x32bf8bf8
}

#: amd_xdlops.hpp: dwords a lane passes for 32 values of each f8f6f4 format
CK_F8F6F4_DWORDS = {"fp8": 8, "bf8": 8, "fp6": 6, "bf6": 6, "fp4": 4}

#: sparse_gfx9.hpp amdgcn_mma_base<..., M, N, K, 64, kABKPerLane, kAKNumAccess, kARepeat, kBKNumAccess, kBRepeat,
#: kCMPerLane, kCMNumAccess, ...>: (M, N, K) + the seven layout parameters, by CK's builtin name
CK_TILE_SPARSE = {
    # CDNA3 shapes (gfx942 and gfx950)
    "v_smfmac_f32_16x16x32_f16": (16, 16, 32, 8, 1, 1, 1, 1, 4, 1),
    "v_smfmac_f32_32x32x16_f16": (32, 32, 16, 8, 1, 1, 1, 1, 16, 4),
    "v_smfmac_f32_16x16x32_bf16": (16, 16, 32, 8, 1, 1, 1, 1, 4, 1),
    "v_smfmac_f32_32x32x16_bf16": (32, 32, 16, 8, 1, 1, 1, 1, 16, 4),
    "v_smfmac_i32_16x16x64_i8": (16, 16, 64, 16, 1, 1, 1, 1, 4, 1),
    "v_smfmac_i32_32x32x32_i8": (32, 32, 32, 16, 1, 1, 1, 1, 16, 4),
    "v_smfmac_f32_16x16x64_bf8_bf8": (16, 16, 64, 16, 1, 1, 1, 1, 4, 1),
    "v_smfmac_f32_16x16x64_bf8_fp8": (16, 16, 64, 16, 1, 1, 1, 1, 4, 1),
    "v_smfmac_f32_16x16x64_fp8_bf8": (16, 16, 64, 16, 1, 1, 1, 1, 4, 1),
    "v_smfmac_f32_16x16x64_fp8_fp8": (16, 16, 64, 16, 1, 1, 1, 1, 4, 1),
    "v_smfmac_f32_32x32x32_bf8_bf8": (32, 32, 32, 16, 1, 1, 1, 1, 16, 4),
    # gfx950 only
    "v_smfmac_f32_16x16x64_f16": (16, 16, 64, 16, 1, 1, 2, 1, 4, 1),
    "v_smfmac_f32_32x32x32_f16": (32, 32, 32, 16, 1, 1, 2, 1, 16, 4),
    "v_smfmac_f32_16x16x64_bf16": (16, 16, 64, 16, 1, 1, 2, 1, 4, 1),
    "v_smfmac_f32_32x32x32_bf16": (32, 32, 32, 16, 1, 1, 2, 1, 16, 4),
    "v_smfmac_i32_16x16x128_i8": (16, 16, 128, 32, 1, 1, 2, 1, 4, 1),
    "v_smfmac_i32_32x32x64_i8": (32, 32, 64, 32, 1, 1, 2, 1, 16, 4),
    "v_smfmac_f32_16x16x128_bf8_bf8": (16, 16, 128, 32, 1, 1, 2, 1, 4, 1),
    "v_smfmac_f32_16x16x128_bf8_fp8": (16, 16, 128, 32, 1, 1, 2, 1, 4, 1),
    "v_smfmac_f32_16x16x128_fp8_bf8": (16, 16, 128, 32, 1, 1, 2, 1, 4, 1),
    "v_smfmac_f32_16x16x128_fp8_fp8": (16, 16, 128, 32, 1, 1, 2, 1, 4, 1),
    "v_smfmac_f32_32x32x64_bf8_bf8": (32, 32, 64, 32, 1, 1, 2, 1, 16, 4),
    "v_smfmac_f32_32x32x64_bf8_fp8": (32, 32, 64, 32, 1, 1, 2, 1, 16, 4),
}


def _xdlops_map(op: str, p: tuple, lane: int, v: int) -> tuple[int, int]:
    """(row, col) in AMD's orientation (A: m, k; B: k, n; D: m, n) of value v of a lane, by CK's constants."""
    threads, blks, kpb, gsize, _ = p
    r, blk = lane % threads, lane // threads
    if op == "A":
        return r, blk * kpb + v
    if op == "B":
        return blk * kpb + v, r
    g, j = divmod(v, gsize)
    return g * blks * gsize + blk * gsize + j, r


def _unmerge(lane_group: int, groups: int, per_lane: int, accesses: int, v: int) -> int:
    """K (or M) index of value v in lane group g, CK Tile's double unmerge: K2 = accesses, K1 = groups, K0 fastest."""
    k0 = per_lane // accesses
    k2, kk = divmod(v, k0)
    return k2 * groups * k0 + lane_group * k0 + kk


@pytest.mark.parametrize("arch,name", sorted(CK_XDLOPS))
def test_dense_maps_equal_cks_xdlops_constants(arch: str, name: str) -> None:
    p = CK_XDLOPS[(arch, name)]
    m = mfma(name, arch)
    fmts = ("fp8", "bf8", "fp6", "bf6", "fp4") if "f8f6f4" in name else (None,)
    for fmt in fmts:
        for op in ("A", "B", "D"):
            f = m.fragment(op, fmt) if fmt and op != "D" else m.fragment(op)
            for lane in range(WAVE):
                for v in range(f.num_values):
                    assert f.coords(lane, v)[:2] == _xdlops_map(op, p, lane, v), (name, fmt, op, lane, v)


@pytest.mark.parametrize("name", ["v_mfma_f32_32x32x64_f8f6f4", "v_mfma_scale_f32_16x16x128_f8f6f4"])
def test_f8f6f4_register_packing_equals_cks_operand_types(name: str) -> None:
    """32 values a lane, packed densely: value v's low bit is bit ``bits*v`` of the lane's VGPRs."""
    m = mfma(name, "cdna4")
    for fmt, dwords in CK_F8F6F4_DWORDS.items():
        for op in ("A", "B"):
            f = m.fragment(op, fmt)
            assert f.num_values == 32 and f.num_registers == dwords, (fmt, op)
            bits = {"fp8": 8, "bf8": 8, "fp6": 6, "bf6": 6, "fp4": 4}[fmt]
            for v in range(32):
                reg, lo, width = f.register_bits(v)
                assert (int(reg[1:]), lo, width) == divmod(bits * v, 32) + (bits,), (fmt, v)


@pytest.mark.parametrize("name", sorted(CK_TILE_SPARSE))
def test_smfmac_maps_equal_ck_tile_layout_parameters(name: str) -> None:
    """A (compressed K/2), B and D of every v_smfmac CDNA4 runs, derived from CK Tile's parameters."""
    M, N, K, kpl, a_acc, a_rep, b_acc, b_rep, cm, cm_acc = CK_TILE_SPARSE[name]
    assert a_rep == b_rep == 1 and a_acc == 1
    m = mfma(name, "cdna4")
    A, B, D = (m.fragment(op) for op in ("A", "B", "D"))
    assert (A.num_values, B.num_values, D.num_values) == (kpl // 2, kpl, cm)
    for lane in range(WAVE):
        for v in range(kpl):
            assert B.coords(lane, v)[:2] == (_unmerge(lane // N, WAVE // N, kpl, b_acc, v), lane % N), (name, lane, v)
        for v in range(kpl // 2):
            assert A.coords(lane, v)[:2] == (lane % M, _unmerge(lane // M, WAVE // M, kpl // 2, a_acc, v)), (name, lane, v)
        for v in range(cm):
            assert D.coords(lane, v)[:2] == (_unmerge(lane // N, WAVE // N, cm, cm_acc, v), lane % N), (name, lane, v)


def test_cdna3_shapes_agree_with_the_calculator_recording() -> None:
    """CK Tile's NumAccess = 1 for CDNA3's v_smfmac is the calculator's contiguous map (so the CK reading is sound):
    CDNA3's fragments, replayed against the calculator in test_amd_mfma.py, equal CDNA4's of the same name."""
    for name, p in CK_TILE_SPARSE.items():
        if p[6] == 1:
            for op in ("A", "B", "D"):
                assert mfma(name, "cdna3").fragment(op).layout == mfma(name, "cdna4").fragment(op).layout, (name, op)


# ---------------------------------------------------------------------------------------------
# gfx1250: CK Tile's scaled WMMA (include/ck_tile/core/arch/mma/scale/wmma/scale_gfx125.hpp, @ 219f222c)
# ---------------------------------------------------------------------------------------------
#: WMMA_SCALE32_IMPL(A type, B type, kAKNumAccess, kBKNumAccess), kABKPerLane = 64, K = 128, two half-waves
CK_GFX1250_SCALE_ACCESS = {
    ("fp8", "fp8"): (1, 1), ("fp8", "bf8"): (1, 1), ("fp8", "fp6"): (4, 2), ("fp8", "bf6"): (4, 2), ("fp8", "fp4"): (4, 2),
    ("bf8", "fp8"): (1, 1), ("bf8", "bf8"): (1, 1), ("bf8", "fp6"): (4, 2), ("bf8", "bf6"): (4, 2), ("bf8", "fp4"): (4, 2),
    ("fp6", "fp8"): (2, 4), ("fp6", "bf8"): (2, 4), ("fp6", "fp6"): (1, 1), ("fp6", "bf6"): (1, 1), ("fp6", "fp4"): (1, 1),
    ("bf6", "fp8"): (2, 4), ("bf6", "bf8"): (2, 4), ("bf6", "fp6"): (1, 1), ("bf6", "bf6"): (1, 1), ("bf6", "fp4"): (1, 1),
    ("fp4", "fp8"): (2, 4), ("fp4", "bf8"): (2, 4), ("fp4", "fp6"): (1, 1), ("fp4", "bf6"): (1, 1), ("fp4", "fp4"): (1, 1),
}


def _pairing(k_of_a: dict[tuple[int, int], int], k_of_b: dict[tuple[int, int], int]) -> dict:
    """(half, value) of A -> (half, value) of B holding the same K: what a WMMA multiplies together, the one thing
    a common K permutation of A and B leaves unchanged."""
    where_b = {k: hv for hv, k in k_of_b.items()}
    return {hv: where_b[k] for hv, k in k_of_a.items()}


@pytest.mark.parametrize("fa,fb", sorted(CK_GFX1250_SCALE_ACCESS))
def test_gfx1250_f8f6f4_pairs_a_and_b_as_ck_tile(fa: str, fb: str) -> None:
    """CK Tile lays A and B of gfx1250's scaled WMMA out relative to each other (a dot product does not see a common
    K permutation, so CK picks one); what must hold is which A value meets which B value. For mixed formats CK's
    pairing fixes the 8-bit chunk: fp8 in 16-value chunks meets fp4/fp6 in 32-value ones -- layoutalg's ISA form;
    Triton's and FlyDSL's 8-value chunks would pair other K."""
    from layoutalg.amd import wmma1250

    acc_a, acc_b = CK_GFX1250_SCALE_ACCESS[(fa, fb)]
    w = wmma1250("v_wmma_scale_f32_16x16x128_f8f6f4")
    ck_a = {(h, v): _unmerge(h, 2, 64, acc_a, v) for h in range(2) for v in range(64)}
    ck_b = {(h, v): _unmerge(h, 2, 64, acc_b, v) for h in range(2) for v in range(64)}
    A, B = w.fragment("A", fa), w.fragment("B", fb)
    ours_a = {(h, v): A.coords(16 * h, v)[1] for h in range(2) for v in range(64)}   # row 0: lanes 0 and 16
    ours_b = {(h, v): B.coords(16 * h, v)[0] for h in range(2) for v in range(64)}   # column 0
    assert _pairing(ours_a, ours_b) == _pairing(ck_a, ck_b), (fa, fb)
    if acc_a != acc_b:   # mixed formats: CK's maps are the ISA's themselves
        assert ours_a == ck_a and ours_b == ck_b
    if "8" in fa and fb in ("fp6", "bf6", "fp4"):
        At = w.fragment("A", fa, form="triton")
        theirs_a = {(h, v): At.coords(16 * h, v)[1] for h in range(2) for v in range(64)}
        assert _pairing(theirs_a, ours_b) != _pairing(ck_a, ck_b)
