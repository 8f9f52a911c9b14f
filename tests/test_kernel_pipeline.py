"""layoutalg.kernel.pipeline / proof: whole GEMM tile data paths, proven, and planted bugs caught.

The oracle is a brute-force interpreter written here, independently of the library: numbered elements
are moved through dict-based memories (shared memory byte -> element, registers -> element) by the
stages' hardware rules as the PTX ISA states them (the canonical layouts of a descriptor word, decoded
bit by bit here; the swizzle on absolute address bits with the base offset as measured on the H100,
docs/gpu-harness.md "Base offset"; the wgmma D fragment, ``mma.sync`` fragments, ``ldmatrix`` /
``stmatrix`` lane rules, the tcgen05 data-path layouts), the products each accumulator cell receives
are collected, and an output is right iff its cell received exactly ``A[m,k]*B[k,n]``, k = 0..K-1.
The library's proof must agree on the wrong-output mask and on the first wrong element.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest

from layoutalg.errors import LayoutError
from layoutalg.kernel.pipeline import hopper_pipeline
from layoutalg.kernel.proof import prove


# ---------------------------------------------------------------------------------------------------
# the brute-force interpreter (independent of layoutalg)
# ---------------------------------------------------------------------------------------------------
def swz(addr: int, sw: int, base_offset: int = 0) -> int:
    """Swizzle of a shared byte address: 16-byte chunk bits 4.. ^= row bits 7.. (log2(sw/16) of them)."""
    if sw == 0:
        return addr
    bits = {32: 1, 64: 2, 128: 3}[sw]
    row = ((addr >> 7) - base_offset) & ((1 << bits) - 1)
    return addr ^ (row << 4)


def tile_offset(major: str, sw: int, mn: int, k: int, MN: int) -> int:
    """Byte offset of element (mn, k) of a 16-bit MN x K operand tile before the swizzle, as CuTe tiles the
    canonical atoms (K-major: atoms of 8 rows x sw bytes, MN first; MN-major: sw bytes of MN x 8 k rows)."""
    if major == "K":
        if sw == 0:  # core matrices 8 rows x 16 B; row groups 128 B apart, then k groups
            return 2 * ((mn % 8) * 8 + (mn // 8) * 64 + k % 8 + (k // 8) * 8 * MN)
        E = sw // 2
        return 2 * (mn * E + k % E + (k // E) * E * MN)
    if sw == 0:
        return 2 * (mn % 8 + (mn // 8) * 64 + (k % 8) * 8 + (k // 8) * 8 * MN)
    E = sw // 2
    return 2 * (mn % E + (k % 8) * E + (mn // E) * 8 * E + (k // 8) * 8 * MN)


def decode_word(word: int) -> dict:
    """The sm_90 matrix descriptor's fields, bit by bit (PTX "Matrix Descriptor Format")."""
    return {"start": (word & 0x3FFF) << 4, "lbo": ((word >> 16) & 0x3FFF) << 4, "sbo": ((word >> 32) & 0x3FFF) << 4,
            "base_offset": (word >> 49) & 7, "swizzle": {0: 0, 1: 128, 2: 64, 3: 32}[(word >> 62) & 3]}


def wgmma_address(word: int, major: str, mn: int, k: int) -> int:
    """The byte wgmma reads for operand element (mn, k) of one k16 block of 16-bit elements (PTX canonical
    layouts, section "Shared Memory Matrix Layout", in bytes; T = 8 elements per 16 B)."""
    d = decode_word(word)
    sw, lbo, sbo = d["swizzle"], d["lbo"], d["sbo"]
    if major == "K":
        if sw == 0:
            off = (mn % 8) * 16 + (mn // 8) * sbo + (k % 8) * 2 + (k // 8) * lbo
        else:
            off = (mn % 8) * sw + (mn // 8) * sbo + k * 2
    else:
        if sw == 0:
            off = (mn % 8) * 2 + (mn // 8) * sbo + (k % 8) * 16 + (k // 8) * lbo
        else:
            W = sw // 16
            off = (mn % 8) * 2 + ((mn // 8) % W) * 16 + (mn // (8 * W)) * lbo + (k % 8) * sw + (k // 8) * sbo
    return swz(d["start"] + off, sw, d["base_offset"])


def d_fragment(lane: int, i: int) -> tuple[int, int]:
    """wgmma D (f32) of one warpgroup: thread -> (row, col) (PTX "Matrix fragments for wgmma .m64nNk16")."""
    warp, l = divmod(lane, 32)
    return 16 * warp + 8 * ((i >> 1) & 1) + l // 4, 8 * (i >> 2) + 2 * (l % 4) + (i & 1)


def stmatrix_element(lane: int, j: int, e: int, trans: bool) -> tuple[int, int]:
    """stmatrix: (row, col) of matrix j in memory that element e of register j of ``lane`` goes to."""
    r, c = lane // 4, 2 * (lane % 4) + e
    return (c, r) if trans else (r, c)


def brute_hopper(p, knobs: dict, rs: bool = False):
    """Run the Hopper pipeline's numbers through the interpreter: (wrong mask, first wrong dict)."""
    M, N, K = p.M, p.N, p.K
    W = knobs.get("warpgroups", 1)
    rows = knobs.get("wg_rows") or tuple(range(W))
    smem: dict = {}
    for x, MN in (("a", M), ("b", N)):
        st = p.stage(f"tma_load_{x}").details
        base, sw = st["base"], knobs.get(f"swizzle_{x}", 128)
        major = knobs.get(f"{x}_major", "K")
        for mn in range(MN):
            for k in range(K):
                a = swz(base + tile_offset(major, sw, mn, k, MN), sw)
                smem[a] = smem[a + 1] = (x.upper(), mn, k)
    first = None
    if any(rows[w] != w for w in range(W)):
        w = next(w for w in range(W) if rows[w] != w)
        first = ("tiled_mma", f"warpgroup {w}", None, None)
    aseq: dict = defaultdict(list)   # (warpgroup, m) -> the A elements its row multiplies, step by step
    bseq: dict = defaultdict(list)   # n -> the B elements column n multiplies, step by step
    wa = None if rs else p.stage("wgmma_read_a").details["words"]
    wb = p.stage("wgmma_read_b").details["words"]
    fa = fb = None
    if rs:  # A through ldmatrix.x4 into the wgmma A fragment (as mma.m16n8k16's A, warp w at rows 16w..)
        base, sw = p.stage("tma_load_a").details["base"], knobs.get("swizzle_a", 128)
        lsw = knobs.get("ldsm_swizzle_a")
        lsw = sw if lsw is None else lsw
        aval = {}
        for w in range(W):
            for j in range(K // 16):
                for warp in range(4):
                    rowaddr = {}
                    for lane in range(32):
                        off = tile_offset("K", sw, 64 * rows[w] + 16 * warp + lane % 16, 16 * j + 8 * (lane // 16), M)
                        rowaddr[lane] = base + swz(off, lsw) if knobs.get("ldsm_relative") else swz(base + off, lsw)
                    for lane in range(32):
                        for jj in range(4):
                            for e in range(2):
                                mr, mc = ldmatrix_value(lane, e, knobs.get("ldsm_trans_a", False))
                                addr = rowaddr[8 * jj + mr] + 2 * mc
                                got = smem.get(addr)
                                rr, kk = mma_a(lane, 2 * jj + e)
                                m = 16 * warp + rr
                                aval[(w, j, m, kk)] = got
                                if fa is None and got != ("A", 64 * rows[w] + m, 16 * j + kk):
                                    fa = ("ldmatrix_a", f"warp {warp} k-block {j}: lane {lane} register {jj} half {e}",
                                          got, ("A", 64 * rows[w] + m, 16 * j + kk))
        for w in range(W):
            for m in range(64):
                aseq[(w, m)] = [aval[(w, j, m, k)] for j in range(K // 16) for k in range(16)]
    for w in range(W) if not rs else ():
        for j in range(K // 16):
            for m in range(64):
                for k in range(16):
                    addr = wgmma_address(wa[rows[w]][j], knobs.get("a_major", "K"), m, k)
                    got = smem.get(addr)
                    if fa is None and got != ("A", 64 * rows[w] + m, 16 * j + k):
                        fa = ("wgmma_read_a", addr, got, ("A", 64 * rows[w] + m, 16 * j + k))
                    aseq[(w, m)].append(got)
    for j in range(K // 16):
        for n in range(N):
            for k in range(16):
                addr = wgmma_address(wb[0][j], knobs.get("b_major", "K"), n, k)
                got = smem.get(addr)
                if fb is None and got != ("B", n, 16 * j + k):
                    fb = ("wgmma_read_b", addr, got, ("B", n, 16 * j + k))
                bseq[n].append(got)

    def summary(seq, tag):
        # (the one row / column all steps read, the k of each step) or None
        if any(e is None or e[0] != tag for e in seq) or len({e[1] for e in seq}) != 1:
            return None
        return seq[0][1], tuple(e[2] for e in seq)

    sa = {key: summary(v, "A") for key, v in aseq.items()}
    sb = {key: summary(v, "B") for key, v in bseq.items()}

    def right(cell, m, n):
        # cell (w, m', n) gets the products aseq[(w, m')][s] * bseq[n][s]: right iff they are A[m, k_s] * B[k_s, n]
        # with the k_s a permutation of 0..K-1
        a, b = sa[cell[:2]], sb[cell[2]]
        return (a is not None and b is not None and a[0] == m and b[0] == n and a[1] == b[1]
                and sorted(a[1]) == list(range(K)))

    cells_ok = all(right((w, m, n), 64 * rows[w] + m, n) for w in range(W) for m in range(64) for n in range(N))
    # epilogue: d[4q+2h+e] of each warp -> stmatrix matrix (h, q) -> row-major C tile
    cols = knobs.get("epilogue_cols") or N
    trans = knobs.get("epilogue_trans", False)
    staging: dict = {}
    fe = None
    for w in range(W):
        for warp in range(4):
            c0 = 0
            while c0 < cols:
                num = 4 if cols - c0 >= 16 else 2
                for lane in range(32):
                    for j in range(num):
                        h, q = j % 2, c0 // 8 + j // 2
                        for e in range(2):
                            i = 4 * q + 2 * h + e
                            rr, cc = d_fragment(32 * warp + lane, i)
                            mr, mc = stmatrix_element(lane, j, e, trans)
                            srow = 64 * w + 16 * warp + 8 * (j % 2) + mr   # row address from lane 8j + mr
                            scol = c0 + 8 * (j // 2) + mc
                            staging[(srow, scol)] = (w, rr, cc)
                            if fe is None and (srow, scol) != (64 * w + rr, cc):
                                fe = ("epilogue_stmatrix", (srow, scol), (64 * w + rr, cc))
                c0 += 4 * num
    if fe is None:
        missing = [(r, c) for r in range(M) for c in range(N) if (r, c) not in staging]
        if missing:
            fe = ("epilogue_stmatrix", missing[0], None)
    wrong = np.zeros((M, N), bool)
    for r in range(M):
        for c in range(N):
            cell = staging.get((r, c))
            wrong[r, c] = cell is None or not right(cell, r, c)
    if wrong.any() and first is None:
        for f in ([fa, fb] if not cells_ok else []) + [fe]:
            if f is not None:
                first = f
                break
    return wrong, first


def name(el) -> str:
    if el is None:
        return "nothing (a byte no stage wrote)"
    t, mn, k = el
    return f"A[{mn}, {k}]" if t == "A" else f"B[{k}, {mn}]"


def check_hopper(knobs: dict, expect_ok: bool, rs: bool = False) -> None:
    from layoutalg.kernel.pipeline_rs import hopper_rs_pipeline

    p = (hopper_rs_pipeline if rs else hopper_pipeline)(**knobs)
    proof = prove(p)
    wrong, first = brute_hopper(p, knobs, rs)
    assert proof.ok == expect_ok == (not wrong.any()), (knobs, str(proof))
    np.testing.assert_array_equal(proof.wrong_outputs, wrong)
    if expect_ok:
        assert proof.first_wrong is None
        return
    f = proof.first_wrong
    assert f["stage"] == first[0], (f, first)
    if first[0] in ("wgmma_read_a", "wgmma_read_b"):
        assert f"shared byte {first[1]:#x}" in f["location"]
        assert f["lands"] == name(first[2]) and f["should"] == name(first[3])
    elif first[0] == "ldmatrix_a":
        assert first[1] in f["location"] and f["lands"] == name(first[2]) and f["should"] == name(first[3])
    elif first[0] == "epilogue_stmatrix":
        (r, c), tgt = first[1], first[2]
        assert f"C tile [{r}, {c}]" in f["location"] and f["should"] == f"C[{r}, {c}]"
        assert f["lands"].startswith(f"C[{tgt[0]}, {tgt[1]}]") if tgt else f["lands"].startswith("nothing")
    else:
        assert f["location"] == first[1]
    assert str(proof).splitlines()[1].startswith("WRONG")


# ---------------------------------------------------------------------------------------------------
# Hopper
# ---------------------------------------------------------------------------------------------------
HOPPER_OK = [
    {},
    {"N": 32, "K": 32, "swizzle_a": 64, "swizzle_b": 32},
    {"N": 16, "K": 64, "swizzle_a": 0, "swizzle_b": 0},
    {"N": 64, "K": 16, "a_major": "MN", "b_major": "MN"},
    {"N": 16, "K": 32, "a_major": "MN", "b_major": "MN", "swizzle_a": 32, "swizzle_b": 32},
    {"N": 32, "K": 64, "a_major": "MN", "swizzle_a": 64, "b_major": "K", "swizzle_b": 32, "dtype": "bf16"},
    {"N": 32, "K": 32, "a_major": "MN", "swizzle_a": 0, "b_major": "MN", "swizzle_b": 64},
    {"M": 128, "N": 16, "K": 64, "warpgroups": 2},
    {"N": 16, "K": 64, "base_a": 384, "base_b": 128},            # a base inside the pattern: derived right
    {"N": 40, "K": 64, "swizzle_a": 32, "base_a": 128, "a_major": "MN"},
]

HOPPER_BUGS = [
    # KnowingNothing/MatmulTutorial#14: the TMA swizzle changed, the descriptor's not
    {"N": 32, "K": 64, "swizzle_a": 64, "desc_swizzle_a": 128},
    {"N": 32, "K": 64, "desc_swizzle_b": 32},
    # tile-ai/tilelang#813: SBO written in bytes without the >> 4 (the field holds 16-byte units)
    {"N": 16, "K": 64, "sbo_a": 1024 << 4},
    # the other units slips: SBO already encoded, or in elements
    {"N": 16, "K": 64, "sbo_b": 1024 >> 4},
    {"N": 16, "K": 64, "sbo_a": 512},
    # LBO/SBO swapped (interleaved K-major: LBO is used)
    {"N": 16, "K": 64, "swizzle_a": 0, "lbo_a": 128, "sbo_a": 1024},
    # NVIDIA/Fuser#4096: a tile at +384 B in its 128B pattern, base offset by the PTX rule for a pattern
    # starting at the tile (the TMA's pattern starts on the aligned address below)
    {"N": 16, "K": 64, "base_a": 384, "desc_base_offset_a": 3},
    # Dao-AILab/flash-attention#2406: the warpgroups' row blocks permuted at tile_m = 128
    {"M": 128, "N": 16, "K": 64, "warpgroups": 2, "wg_rows": (1, 0)},
    # NVIDIA/cutlass#3345: the epilogue's copy does not cover C
    {"N": 48, "K": 64, "epilogue_cols": 32},
    {"N": 24, "K": 64, "epilogue_cols": 8},
    # stmatrix .trans where the C tile is row-major
    {"N": 16, "K": 64, "epilogue_trans": True},
]


@pytest.mark.parametrize("knobs", HOPPER_OK, ids=str)
def test_hopper_correct_pipelines_prove(knobs):
    check_hopper(knobs, True)


@pytest.mark.parametrize("knobs", HOPPER_BUGS, ids=str)
def test_hopper_planted_bugs_caught(knobs):
    check_hopper(knobs, False)


HOPPER_RS = [
    ({"N": 16}, True),
    ({"M": 128, "N": 16, "warpgroups": 2, "swizzle_a": 64, "K": 32, "swizzle_b": 64, "base_a": 512}, True),
    ({"N": 16, "base_a": 384}, True),                         # the XOR on the absolute address: any base
    ({"N": 16, "base_a": 384, "ldsm_relative": True}, False),  # Fuser#4096 / emmy#200: XOR of the buffer offset
    ({"N": 16, "ldsm_swizzle_a": 64}, False),                 # one side's swizzle
    ({"N": 16, "ldsm_trans_a": True}, False),
    ({"M": 128, "N": 16, "warpgroups": 2, "wg_rows": (1, 0)}, False),
]


@pytest.mark.parametrize("knobs, ok", HOPPER_RS, ids=str)
def test_hopper_rs(knobs, ok):
    check_hopper(knobs, ok, rs=True)


def test_hopper_same_wrong_k_order_on_both_sides_is_harmless():
    # 32B swizzle: the base offset's one bit flips the row phase of every row alike, so a wrong base offset
    # reads k ^ 8 in every row -- in A and in B (the H100 measured base offsets 0, 2, 4, 6 exact for A
    # alone, docs/gpu-harness.md): the products still pair A[m,k] with B[k,n]
    knobs = {"N": 16, "K": 32, "swizzle_a": 32, "swizzle_b": 32, "desc_base_offset_a": 1, "desc_base_offset_b": 1}
    p = hopper_pipeline(**knobs)
    proof = prove(p)
    wrong, _ = brute_hopper(p, knobs)
    np.testing.assert_array_equal(proof.wrong_outputs, wrong)
    assert proof.ok and not wrong.any()
    assert any(s.mismatches for s in proof.stages) and "K order" in str(proof)
    knobs.pop("desc_base_offset_b")                  # on one side only: wrong
    check_hopper(knobs, False)


def test_hopper_descriptor_words_by_hand():
    # K-major 128B f16, 64 x 64: LBO "assumed 1" (16 B), SBO = 8 rows x 128 B = 1024 B (encoded 64),
    # k-block j starts 32*j bytes in; swizzle code 1 (128B) at bits 62-63
    p = hopper_pipeline()
    words = p.stage("wgmma_read_a").details["words"][0]
    assert [hex(w) for w in words] == [hex((1 << 62) | (64 << 32) | (1 << 16) | (32 * j >> 4)) for j in range(4)]
    # B follows A in shared memory at the next 1024-byte boundary (8 KiB of A)
    assert decode_word(p.stage("wgmma_read_b").details["words"][0][0])["start"] == 8192
    # a tile at +384: start address moves, base offset stays 0 (absolute swizzle on both sides)
    d = decode_word(hopper_pipeline(base_a=384).stage("wgmma_read_a").details["words"][0][1])
    assert (d["start"], d["base_offset"]) == (384 + 32, 0)


def test_hopper_fraction_wrong_matches_the_report():
    # MatmulTutorial#14 reported ~87% wrong; a 64B TMA read through 128B descriptors on A is wrong everywhere
    proof = prove(hopper_pipeline(swizzle_a=64, desc_swizzle_a=128))
    assert proof.wrong_outputs.mean() > 0.8


def test_hopper_bank_report_of_the_epilogue():
    # the row-major C tile has 128-byte rows at N = 64: the 8 row addresses of one stmatrix phase all hit
    # banks 0-3 -> 8 wavefronts per phase instead of 1
    acc = prove(hopper_pipeline()).accesses[0]
    assert acc.vector_bytes == 16 and acc.report.ways == 8
    assert acc.report.wavefronts == 8 * acc.report.ideal
    # 96-byte rows (N = 48): word offsets 0, 24, 48, .. mod 32 = 0, 24, 16, 8, 0, ..: rows r and r + 4 collide
    assert prove(hopper_pipeline(N=48)).accesses[0].report.ways == 2
    # 144-byte rows (N = 72): word offsets 0, 36, 72, .. mod 32 = 0, 4, 8, .., 28: conflict-free (x4 and x2)
    assert prove(hopper_pipeline(N=72)).accesses[0].report.conflict_free


@pytest.mark.parametrize("knobs, words", [
    ({"M": 32}, "M=32"), ({"N": 12}, "N=12"), ({"K": 24}, "K=24"), ({"dtype": "f32"}, "dtype"),
    ({"swizzle_a": 16}, "swizzle_a"), ({"base_b": 64}, "base_b=64"), ({"wg_rows": (0, 0)}, "wg_rows"),
    ({"epilogue_cols": 12}, "epilogue_cols"), ({"bogus": 1}, "bogus"), ({"a_major": "X"}, "a_major"),
    ({"desc_base_offset_a": 8}, "desc_base_offset_a"), ({"epilogue_trans": 1}, "epilogue_trans"),
])
def test_hopper_bad_knobs(knobs, words):
    with pytest.raises(LayoutError, match="hopper_pipeline") as e:
        hopper_pipeline(**knobs)
    assert words in str(e.value)


def test_prove_refuses_non_pipelines():
    with pytest.raises(LayoutError, match="prove"):
        prove("not a pipeline")


# ---------------------------------------------------------------------------------------------------
# Ampere: cp.async -> ldmatrix -> mma.sync -> st.global
# ---------------------------------------------------------------------------------------------------
def mma_a(lane: int, i: int) -> tuple[int, int]:
    """mma.m16n8k16 A (16-bit): register value i of lane -> (row, k) (PTX "Matrix Fragments for mma.m16n8k16")."""
    g, t = lane // 4, lane % 4
    return g + 8 * ((i // 2) % 2), 2 * t + (i % 2) + 8 * (i // 4)


def mma_b(lane: int, i: int) -> tuple[int, int]:
    """mma.m16n8k16 B: value i of lane -> (k, n)."""
    g, t = lane // 4, lane % 4
    return 2 * t + (i % 2) + 8 * (i // 2), g


def mma_c(lane: int, i: int) -> tuple[int, int]:
    """mma.m16n8 C/D (f32): value i of lane -> (row, col)."""
    g, t = lane // 4, lane % 4
    return g + 8 * (i // 2), 2 * t + (i % 2)


def ldmatrix_value(lane: int, e: int, trans: bool) -> tuple[int, int]:
    """ldmatrix: (row, col) in the 8x8 matrix in memory of element e of a lane's register (either .trans)."""
    r, c = lane // 4, 2 * (lane % 4) + e
    return (c, r) if trans else (r, c)


def brute_ampere(p, knobs: dict):
    M, N, K = p.M, p.N, p.K
    WM, WN = knobs.get("warps", (2, 2))
    TM, TN = M // WM, N // WN
    smem: dict = {}
    base = {}
    for x, MN in (("a", M), ("b", N)):
        base[x] = p.stage(f"cp_async_{x}").details["base"]
        sw = knobs.get(f"swizzle_{x}", 64)
        for r in range(MN):
            for k in range(K):
                a = base[x] + swz(2 * (r * K + k), sw)      # the author's swizzle on the buffer offset
                smem[a] = (x.upper(), r, k)
    order = knobs.get("epilogue_warp_order") or "row"

    def origin(w, order):
        wm, wn = (w // WN, w % WN) if order == "row" else (w % WM, w // WM)
        return wm * TM, wn * TN

    first = None
    for w in range(WM * WN):
        if origin(w, "row") != origin(w, order):
            first = ("tiled_mma", f"warp {w}")
            break
    frags = {}
    fa = fb = None
    for x, num, blk in (("a", 4, 16), ("b", 2, 8)):
        lsw = knobs.get(f"ldsm_swizzle_{x}")
        lsw = knobs.get(f"swizzle_{x}", 64) if lsw is None else lsw
        trans = knobs.get(f"ldsm_trans_{x}", False)
        for w in range(WM * WN):
            r0 = (w // WN) * TM if x == "a" else (w % WN) * TN
            for bi in range((TM if x == "a" else TN) // blk):
                for kb in range(K // 16):
                    rowaddr = {}
                    for lane in range(8 * num):
                        if x == "a":
                            row, k0 = r0 + 16 * bi + lane % 16, 16 * kb + 8 * (lane // 16)
                        else:
                            row, k0 = r0 + 8 * bi + lane % 8, 16 * kb + 8 * (lane // 8)
                        rowaddr[lane] = base[x] + swz(2 * (row * K + k0), lsw)
                    for lane in range(32):
                        for j in range(num):
                            for e in range(2):
                                mr, mc = ldmatrix_value(lane, e, trans)
                                addr = rowaddr[8 * j + mr] + 2 * mc
                                got = smem.get(addr)
                                i = 2 * j + e
                                if x == "a":
                                    rr, kk = mma_a(lane, i)
                                    want = ("A", r0 + 16 * bi + rr, 16 * kb + kk)
                                    frags[("a", w, bi, kb, rr, kk)] = got
                                else:
                                    kk, nn = mma_b(lane, i)
                                    want = ("B", r0 + 8 * bi + nn, 16 * kb + kk)
                                    frags[("b", w, bi, kb, kk, nn)] = got
                                if got != want:
                                    if x == "a" and fa is None:
                                        fa = ("ldmatrix_a", f"lane {lane} register {j} half {e}", got, want)
                                    if x == "b" and fb is None:
                                        fb = ("ldmatrix_b", f"lane {lane} register {j} half {e}", got, want)

    def summary(seq, tag):
        # (the one row / column every step reads, the k of each step), or None
        if any(e is None or e[0] != tag for e in seq) or len({e[1] for e in seq}) != 1:
            return None
        return seq[0][1], tuple(e[2] for e in seq)

    sa = {(w, mi, r): summary([frags[("a", w, mi, kb, r, k)] for kb in range(K // 16) for k in range(16)], "A")
          for w in range(WM * WN) for mi in range(TM // 16) for r in range(16)}
    sb = {(w, ni, c): summary([frags[("b", w, ni, kb, k, c)] for kb in range(K // 16) for k in range(16)], "B")
          for w in range(WM * WN) for ni in range(TN // 8) for c in range(8)}

    def right(cell, m, n):
        # cell (w, mi, ni, r, c) gets A-fragment row (w, mi, r) times B-fragment column (w, ni, c), step by step
        w, mi, ni, r, c = cell
        a, b = sa[(w, mi, r)], sb[(w, ni, c)]
        return (a is not None and b is not None and a[0] == m and b[0] == n and a[1] == b[1]
                and sorted(a[1]) == list(range(K)))

    cells_ok = all(right((w, mi, ni, r, c), origin(w, "row")[0] + 16 * mi + r, origin(w, "row")[1] + 8 * ni + c)
                   for w in range(WM * WN) for mi in range(TM // 16) for ni in range(TN // 8) for r in range(16)
                   for c in range(8))
    cols = knobs.get("epilogue_cols") or TN
    out: dict = {}
    for w in range(WM * WN):
        o = origin(w, order)
        for mi in range(TM // 16):
            for ni in range(cols // 8):
                for lane in range(32):
                    for i in range(4):
                        r, c = mma_c(lane, i)
                        out[(o[0] + 16 * mi + r, o[1] + 8 * ni + c)] = (w, mi, ni, r, c)
    wrong = np.zeros((M, N), bool)
    fe = None
    for m in range(M):
        for n in range(N):
            cell = out.get((m, n))
            wrong[m, n] = cell is None or not right(cell, m, n)
            if cell is None and fe is None:
                fe = ("epilogue_st_global", f"out[{m}, {n}]", None, None)
    if wrong.any() and first is None:
        for f in ([fa, fb] if not cells_ok else []) + [fe]:
            if f is not None:
                first = f
                break
    return wrong, first


def check_ampere(knobs: dict, expect_ok: bool) -> None:
    from layoutalg.kernel.pipeline_sm80 import ampere_pipeline

    p = ampere_pipeline(**knobs)
    proof = prove(p)
    wrong, first = brute_ampere(p, knobs)
    assert proof.ok == expect_ok == (not wrong.any()), (knobs, str(proof))
    np.testing.assert_array_equal(proof.wrong_outputs, wrong)
    if expect_ok:
        return
    f = proof.first_wrong
    assert f["stage"] == first[0] and first[1] in f["location"], (f, first)
    if first[0].startswith("ldmatrix"):
        assert f["lands"] == name(first[2]) and f["should"] == name(first[3])


AMPERE_OK = [
    {},
    {"M": 32, "N": 64, "K": 64, "warps": (1, 4), "swizzle_a": 128, "swizzle_b": 128, "dtype": "bf16"},
    {"N": 32, "K": 16, "warps": (4, 1), "swizzle_a": 0, "swizzle_b": 32},
]
AMPERE_BUGS = [
    {"ldsm_swizzle_b": 0},                                   # the swizzle changed on one side
    {"M": 32, "N": 32, "K": 64, "swizzle_a": 128, "ldsm_swizzle_a": 64},
    {"ldsm_trans_b": True},                                  # ldmatrix.trans on a K-major B
    {"epilogue_warp_order": "col"},                          # the epilogue's warp order is not the MMA's
    {"epilogue_cols": 16},                                   # the epilogue misses part of each warp's C
]


@pytest.mark.parametrize("knobs", AMPERE_OK, ids=str)
def test_ampere_correct_pipelines_prove(knobs):
    check_ampere(knobs, True)


@pytest.mark.parametrize("knobs", AMPERE_BUGS, ids=str)
def test_ampere_planted_bugs_caught(knobs):
    check_ampere(knobs, False)


def test_ampere_bank_reports():
    # rows of 64 B (K = 32 f16) without a swizzle: ldmatrix's 8 row addresses of a phase are 64 B apart, so
    # rows 0, 2, 4, 6 all start at bank 0 (word offsets 0, 32, 64, 96) -> 4-way; the 64-byte swizzle moves
    # row r's chunk by (r // 2) % 4: conflict-free
    from layoutalg.kernel.pipeline_sm80 import ampere_pipeline

    plain = {a.stage: a.report for a in prove(ampere_pipeline(swizzle_a=0, swizzle_b=0)).accesses}
    sw = {a.stage: a.report for a in prove(ampere_pipeline()).accesses}
    assert plain["ldmatrix_a"].ways == 4 and sw["ldmatrix_a"].conflict_free
    assert sw["cp_async_a"].conflict_free and sw["cp_async_a"].wavefronts == 4 * len(sw["cp_async_a"].instructions)


# ---------------------------------------------------------------------------------------------------
# Blackwell: TMA -> tcgen05.mma SS (1 or 2 CTAs) -> TMEM -> tcgen05.ld -> st.global
# ---------------------------------------------------------------------------------------------------
def decode_sm100_word(word: int) -> dict:
    """The tcgen05 shared-memory descriptor's fields (PTX "Shared memory descriptor", tcgen05)."""
    return {"start": (word & 0x3FFF) << 4, "lbo": ((word >> 16) & 0x3FFF) << 4, "sbo": ((word >> 32) & 0x3FFF) << 4,
            "base_offset": (word >> 49) & 7, "swizzle": {0: 0, 2: 128, 4: 64, 6: 32}[(word >> 61) & 7]}


def decode_idesc(word: int) -> dict:
    """kind::f16 instruction descriptor: bit 15 transpose A, 16 transpose B, 17-22 N >> 3, 24-28 M >> 4."""
    return {"M": ((word >> 24) & 0x1F) << 4, "N": ((word >> 17) & 0x3F) << 3,
            "a_major": "MN" if (word >> 15) & 1 else "K", "b_major": "MN" if (word >> 16) & 1 else "K"}


def canonical_address(d: dict, major: str, mn: int, k: int) -> int:
    sw_word = (d["start"] >> 4) | ((d["lbo"] >> 4) << 16) | ((d["sbo"] >> 4) << 32) | (d["base_offset"] << 49) | (
        {0: 0, 128: 1, 64: 2, 32: 3}[d["swizzle"]] << 62)
    return wgmma_address(sw_word, major, mn, k)


def tmem_place(m: int, n: int, Mc: int, N: int, G: int) -> tuple[int, int]:
    """(lane, column) of D[m, n] of one CTA (PTX data-path layouts; the table in nvidia.blackwell.tmem_accum)."""
    if Mc == 128:
        return m, n
    if G == 1:  # M = 64: 16 lanes of each quarter
        return m % 16 + 32 * (m // 16), n
    return m + 64 * (n // (N // 2)), n % (N // 2)  # M = 64 of a pair (2x2)


def brute_blackwell(p, knobs: dict):
    M, N, K = p.M, p.N, p.K
    G = knobs.get("cta_group", 1)
    Mc, Nc = M // G, N // G
    smem = [dict() for _ in range(G)]
    ts = knobs.get("a_source") == "tmem"
    for x, MN in (("a", Mc), ("b", Nc)):
        if x == "a" and ts:
            continue
        st = p.stage(f"tma_load_{x}").details
        sw, major = knobs.get(f"swizzle_{x}", 128), knobs.get(f"{x}_major", "K")
        for c in range(G):
            for mn in range(MN):
                for k in range(K):
                    a = swz(st["base"] + (knobs.get("peer_shift", 0) if c else 0) + tile_offset(major, sw, mn, k, MN), sw)
                    smem[c][a] = smem[c][a + 1] = (x.upper(), c * MN + mn, k)
    idesc = decode_idesc(p.stage("umma").details["idesc"])
    first = None
    for f, v in (("M", M), ("N", N), ("a_major", knobs.get("a_major", "K")), ("b_major", knobs.get("b_major", "K"))):
        if idesc[f] != v and first is None:
            first = ("umma", f"field {f}")
    Ni = idesc["N"]
    wa, wb = p.stage("umma_read_a").details["words"], p.stage("umma_read_b").details["words"]
    aseq, bseq = defaultdict(list), defaultdict(list)
    fa = fb = None
    tmem_a: dict = {}
    if ts:  # A in TMEM: rows in lanes, two f16 per 32-bit column (16-bit half index 2*column + half)
        tcol = knobs.get("tmem_column", 0)
        acol = knobs.get("tmem_a_column")
        acol = tcol + N if acol is None else acol
        mcol = knobs.get("mma_a_column")
        mcol = acol if mcol is None else mcol
        for m in range(M):
            for k in range(K):
                h = 2 * (acol + k) if knobs.get("a_store_unpacked") else 2 * acol + k
                if not 2 * tcol <= h < 2 * (tcol + N):        # the MMA's own D columns are not A's
                    tmem_a[(m, h)] = ("A", m, k)
    for c in range(G):
        for j in range(K // 16):
            da, db = (None if ts else decode_sm100_word(wa[j])), decode_sm100_word(wb[j])
            for m in range(Mc):
                for k in range(16):
                    if ts:
                        addr = 2 * mcol + 16 * j + k
                        got = tmem_a.get((m, addr))
                        if fa is None and got != ("A", m, 16 * j + k):
                            fa = ("umma_read_a", f"TMEM lane {m} column {addr // 2} half {addr % 2}", got,
                                  ("A", m, 16 * j + k))
                        aseq[(c, m)].append(got)
                        continue
                    addr = canonical_address(da, idesc["a_major"], m, k)
                    got = smem[c].get(addr)
                    if fa is None and got != ("A", c * Mc + m, 16 * j + k):
                        fa = ("umma_read_a", addr, got, ("A", c * Mc + m, 16 * j + k))
                    aseq[(c, m)].append(got)
            for n in range(Ni // G):
                for k in range(16):
                    addr = canonical_address(db, idesc["b_major"], n, k)
                    got = smem[c].get(addr)
                    if fb is None and got != ("B", c * Nc + n, 16 * j + k):
                        fb = ("umma_read_b", addr, got, ("B", c * Nc + n, 16 * j + k))
                    bseq[c * (Ni // G) + n].append(got)

    def summary(seq, tag):
        if any(e is None or e[0] != tag for e in seq) or len({e[1] for e in seq}) != 1:
            return None
        return seq[0][1], tuple(e[2] for e in seq)

    sa = {key: summary(v, "A") for key, v in aseq.items()}
    sb = {key: summary(v, "B") for key, v in bseq.items()}

    def right(cell, m, n):
        # cell (c, m', n') gets aseq[(c, m')][s] * bseq[n'][s]: right iff A[m, k_s] * B[k_s, n], k_s all of 0..K-1
        c, ml, nl = cell
        if nl >= Ni:
            return False
        a, b = sa[(c, ml)], sb[nl]
        return (a is not None and b is not None and a[0] == m and b[0] == n and a[1] == b[1]
                and sorted(a[1]) == list(range(K)))

    tcol = knobs.get("tmem_column", 0)
    tmem = [dict() for _ in range(G)]
    for c in range(G):
        for m in range(Mc):
            for n in range(Ni):
                lane, col = tmem_place(m, n, Mc, Ni, G)
                tmem[c][(lane, col + tcol)] = (c, m, n)
    cells_ok = all(right((c, m, n), c * Mc + m, n) for c in range(G) for m in range(Mc) for n in range(N))
    ecol = knobs.get("epilogue_column")
    ecol = tcol if ecol is None else ecol
    erows = knobs.get("epilogue_rows") or (0, 1, 2, 3)
    ncols = max(tmem_place(m, n, Mc, N, G)[1] for m in range(Mc) for n in range(N)) + 1
    ecols = knobs.get("epilogue_cols") or ncols
    where = {tmem_place(m, n, Mc, N, G): (m, n) for m in range(Mc) for n in range(N)}
    out: dict = {}
    fe = None
    for c in range(G):
        for w in range(4):
            for t in range(32):
                for j in range(ecols):
                    val = tmem[c].get((32 * w + t, ecol + j))        # warp w reaches lane quarter w
                    meant = where.get((32 * erows[w] + t, j))          # what the author believes it is
                    if meant is None:
                        continue
                    mo, no = c * Mc + meant[0], meant[1]
                    out[(mo, no)] = val
                    if fe is None and val != (c, meant[0], meant[1]):
                        fe = ("epilogue_tcgen05_ld", f"CTA {c} warp {w} thread {t} register {j}")
    wrong = np.zeros((M, N), bool)
    for m in range(M):
        for n in range(N):
            cell = out.get((m, n))
            wrong[m, n] = cell is None or not right(cell, m, n)
            if cell is None and fe is None and (m, n) not in out:
                fe = ("epilogue_tcgen05_ld", f"out[{m}, {n}]")
    if wrong.any() and first is None:
        for f in ([fa, fb] if not cells_ok else []) + [fe]:
            if f is not None:
                first = f
                break
    return wrong, first


def check_blackwell(knobs: dict, expect_ok: bool) -> None:
    from layoutalg.kernel.pipeline_sm100 import blackwell_pipeline

    p = blackwell_pipeline(**knobs)
    proof = prove(p)
    wrong, first = brute_blackwell(p, knobs)
    assert proof.ok == expect_ok == (not wrong.any()), (knobs, str(proof))
    np.testing.assert_array_equal(proof.wrong_outputs, wrong)
    if expect_ok:
        return
    f = proof.first_wrong
    assert f["stage"] == first[0], (f, first)
    if first[0].startswith("umma_read") and isinstance(first[1], str):
        assert first[1] in f["location"] and f["lands"] == name(first[2]) and f["should"] == name(first[3])
    elif first[0].startswith("umma_read"):
        assert f"shared byte {first[1]:#x}" in f["location"]
        assert f["lands"] == name(first[2]) and f["should"] == name(first[3])
    else:
        assert first[1] in f["location"], (f, first)


BLACKWELL_OK = [
    {"N": 32},
    {"M": 64, "N": 32},
    {"cta_group": 2, "M": 256, "N": 32, "K": 32, "swizzle_a": 64, "swizzle_b": 64},
    {"N": 32, "K": 32, "swizzle_b": 64, "a_source": "tmem"},                         # UMMA TS
    {"N": 32, "K": 32, "swizzle_b": 64, "a_source": "tmem", "tmem_column": 0, "tmem_a_column": 300},
    {"cta_group": 2, "M": 128, "N": 64, "a_major": "MN", "b_major": "MN", "K": 16, "swizzle_a": 64,
     "swizzle_b": 64},
    {"N": 16, "K": 32, "swizzle_a": 64, "swizzle_b": 32, "tmem_column": 96, "dtype": "bf16"},
]
BLACKWELL_BUGS = [
    {"N": 32, "desc_swizzle_a": 64},                                # one side's swizzle
    # SBO in bytes in the field (tilelang#813)
    {"cta_group": 2, "M": 256, "N": 32, "K": 32, "swizzle_a": 64, "swizzle_b": 64, "sbo_b": 512 << 4},
    {"N": 32, "base_a": 384, "desc_base_offset_a": 3},              # base offset for a pattern at the tile
    {"N": 32, "idesc_n": 16},                                       # the instruction descriptor's N
    {"N": 32, "idesc_b_major": "MN"},                               # its transpose bit
    {"N": 32, "tmem_column": 64, "epilogue_column": 0},            # the epilogue reads the wrong TMEM column
    {"N": 32, "epilogue_rows": (1, 0, 2, 3)},                      # warps 0 and 1 store each other's rows
    {"M": 64, "N": 64, "epilogue_cols": 32},                        # the epilogue misses part of C
    {"cta_group": 2, "M": 128, "N": 64, "K": 16, "swizzle_a": 32, "swizzle_b": 32, "epilogue_cols": 16},
    # UMMA TS: the instruction's A column is not where A was stored; A stored unpacked; A over the accumulator
    {"N": 32, "K": 32, "swizzle_b": 64, "a_source": "tmem", "mma_a_column": 40},
    {"N": 32, "K": 32, "swizzle_b": 64, "a_source": "tmem", "a_store_unpacked": True},
    {"N": 32, "K": 32, "swizzle_b": 64, "a_source": "tmem", "tmem_a_column": 16},
    # the peer CTA's tiles 1 KiB later than the issuing CTA's: the pair's MMA reads one address in both
    {"cta_group": 2, "M": 128, "N": 32, "K": 16, "swizzle_a": 32, "swizzle_b": 32, "peer_shift": 1024},
]


@pytest.mark.parametrize("knobs", BLACKWELL_OK, ids=str)
def test_blackwell_correct_pipelines_prove(knobs):
    check_blackwell(knobs, True)


@pytest.mark.parametrize("knobs", BLACKWELL_BUGS, ids=str)
def test_blackwell_planted_bugs_caught(knobs):
    check_blackwell(knobs, False)


# ---------------------------------------------------------------------------------------------------
# compiled kernels: the MMA path read from ttgir (tests/data/triton/kernels.json, Triton 3.6 on the CPU)
# ---------------------------------------------------------------------------------------------------
def _kernels():
    import json
    import os

    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "triton", "kernels.json")) as f:
        return [k for k in json.load(f)["kernels"] if "matmul" in k["config"]["kind"]]


KERNELS = _kernels()


def _kid(k):
    c = k["config"]
    return f"{c['kind']}-sm{c['arch']}-{c['dtype']}-{c['BM']}x{c['BN']}x{c['BK']}"


@pytest.mark.parametrize("kernel", KERNELS, ids=_kid)
def test_every_recorded_matmul_proves(kernel):
    # Triton's compiled matmuls are correct (they are Triton's own tests' kernels): each must prove, and the
    # report's hook gives the same proof
    from layoutalg.kernel import inspect_ttgir
    from layoutalg.kernel.proof_ttgir import pipelines_from_ttgir, prove_ttgir

    proof = prove_ttgir(kernel["ttgir"])
    assert proof.ok, str(proof)
    arch = {80: "sm_80", 90: "sm_90a", 100: "sm_100a"}[kernel["config"]["arch"]]
    pipes = pipelines_from_ttgir(kernel["ttgir"])
    assert pipes and all(p.arch == arch for p in pipes)
    c = kernel["config"]
    assert (pipes[0].M, pipes[0].N, pipes[0].K) == (c["BM"], c["BN"], c["BK"])
    assert proof.wrong_outputs.shape == (c["BM"], c["BN"])
    if c["arch"] == 100 and c["BN"] == 256:
        assert inspect_ttgir(kernel["ttgir"]).proof.ok


def _one(arch, kind="matmul", bm=128):
    return next(k["ttgir"] for k in KERNELS if k["config"]["arch"] == arch and k["config"]["kind"] == kind
                and k["config"]["BM"] == bm and k["config"]["BN"] == 128)


def test_ttgir_tmem_load_in_the_wrong_lane_quarter():
    # swap the two warp bases of the tcgen05.ld's register layout: warp 1 then holds rows 64..95 and warp 2
    # rows 32..63, but warp w reaches only TMEM lanes 32*(w%4)..: rows 32..95 (lanes = rows, M = 128) are
    # loaded by a warp that cannot reach them. First in (m, n) order: D[32, 0], held by warp 2.
    from layoutalg.kernel.proof_ttgir import prove_ttgir

    text = _one(100)
    bad = text.replace("warp = [[32, 0], [64, 0]]", "warp = [[64, 0], [32, 0]]")
    assert bad != text
    p = prove_ttgir(bad)
    assert not p.ok and p.first_wrong["stage"] == "epilogue_tmem_load"
    assert p.first_wrong["location"].startswith("D[32, 0]") and p.first_wrong["lands"].startswith("warp 2")
    want = np.zeros((128, 128), bool)
    want[32:96] = True
    np.testing.assert_array_equal(p.wrong_outputs, want)


def test_ttgir_dot_operand_layout_not_the_mma_fragment():
    # kWidth = 4 on a 16-bit A operand of mma.sync: each lane then holds 4 consecutive k (not 2): lane 0 holds
    # A[0, 0..3] while the m16n8k16 A fragment wants A[0, 2..3] in lane 1 -> every output is wrong
    from layoutalg.kernel.proof_ttgir import prove_ttgir

    text = _one(80)
    bad = text.replace("kWidth = 2}>> * tensor", "kWidth = 4}>> * tensor")
    assert bad != text
    p = prove_ttgir(bad)
    assert not p.ok and p.first_wrong["stage"] == "dot_operand_a" and p.first_wrong["should"] == "A[0, 2]"
    assert p.wrong_outputs.all()


def test_ttgir_consistent_changes_still_prove():
    # what is changed consistently is not a bug: the swizzle or the majorness of the shared layout moves the
    # data and the derived descriptors together; a narrower wgmma N tiles the accumulator differently
    from layoutalg.kernel.proof_ttgir import prove_ttgir

    text = _one(90)
    for a, b in (("swizzlingByteWidth = 128", "swizzlingByteWidth = 64"),
                 ("instrShape = [16, 128, 16]", "instrShape = [16, 64, 16]")):
        assert a in text
        assert prove_ttgir(text.replace(a, b)).ok


def test_ttgir_refusals():
    from layoutalg.kernel.proof_ttgir import prove_ttgir

    gluon = next(k["ttgir"] for k in _kernels_all() if k["config"]["kind"] == "gluon_convert")
    with pytest.raises(LayoutError, match="prove_ttgir: the kernel has none of the MMA ops"):
        prove_ttgir(gluon)
    with pytest.raises(LayoutError):
        prove_ttgir("module {")
    with pytest.raises(LayoutError, match="pipelines_from_ttgir"):
        prove_ttgir(42)


def _kernels_all():
    import json
    import os

    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "triton", "kernels.json")) as f:
        return json.load(f)["kernels"]


def test_report_proof_carries_the_bank_figures():
    # KernelReport.proof: the same proof, with the report's register <-> shared accesses and their wavefronts
    from layoutalg.kernel import inspect_ttgir

    rep = inspect_ttgir(_one(80))
    proof = rep.proof
    assert proof.ok and len(proof.accesses) == len(rep.accesses) > 0
    assert [a.report.wavefronts for a in proof.accesses] == [o.banks.wavefronts for o in rep.accesses]
    assert "shared-memory accesses by threads" in str(proof)


def test_proof_text_names_the_first_wrong_element():
    from layoutalg.kernel import blackwell_pipeline

    text = str(prove(blackwell_pipeline(N=32, tmem_column=64, epilogue_column=0)))
    lines = text.splitlines()
    assert lines[1] == "WRONG: 4096 of 4096 outputs (100.0%)"
    assert "first wrong at stage epilogue_tcgen05_ld: CTA 0 warp 0 thread 0 register 0: TMEM lane 0 column 0" in text
    assert "[BAD] epilogue_tcgen05_ld" in text


def test_hopper_default_rows_follow_warpgroups() -> None:
    # the contract: M defaults to 64 * warpgroups (the hardware run's knobs_of fills it the same way)
    from layoutalg.gpu.pipeline import knobs_of

    for w in (1, 2):
        p = hopper_pipeline(warpgroups=w)
        assert p.M == knobs_of({"warpgroups": w})["M"] == 64 * w
        assert prove(p).wrong_outputs.shape == (64 * w, 64)
