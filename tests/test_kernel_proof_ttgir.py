"""prove_ttgir on the paths beyond SS matmuls: mma.sync of tf32 / s8, wgmma of s8 and with A from registers (RS),
tcgen05 with A in tensor memory (TS), an MN-major B narrower than its swizzle atom, and tc_gen5_mma_scaled (its
scale factors). Every real recorded kernel of these kinds proves; an edited ttgir that breaks the data path is
caught with a first wrong element, and each edit is shown wrong independently of layoutalg: by a brute-force
interpreter written here from the PTX ISA's fragment tables, fed with the layouts as *Triton's engine* computes
them (``GluonOpBuilder.to_linear_layout``), or by Triton's ``get_tmem_reg_layout`` no longer agreeing.
"""

from __future__ import annotations

import json
import os
import re

import numpy as np
import pytest

from layoutalg.kernel.proof_ttgir import pipelines_from_ttgir, prove_ttgir

HERE = os.path.dirname(os.path.abspath(__file__))


def _all_kernels():
    out = []
    for name in ("kernels.json", "kernels_zoo.json"):
        with open(os.path.join(HERE, "data", "triton", name)) as f:
            out += json.load(f)["kernels"]
    return out


KERNELS = _all_kernels()
#: the kernels this module is about (before: refused as "not modelled")
NEW = [k for k in KERNELS if (k["config"]["kind"], k["config"]["arch"]) in (
    ("attention", 90), ("attention", 100), ("attention_tma", 90), ("attention_tma", 100), ("dot_scaled", 100))
    or (k["config"]["kind"] == "matmul_t" and (k["config"].get("dtype") in ("i8", "fp32")
                                                or "'BM': 64, 'BN': 64, 'BK': 32" in k["config"].get("constexprs", "")))]


def _kid(k):
    c = k["config"]
    return f"{c['kind']}-sm{c['arch']}-{c.get('dtype')}-{KERNELS.index(k)}"


def _one(kind, arch, dtype):
    return next(k["ttgir"] for k in KERNELS if k["config"]["kind"] == kind and k["config"]["arch"] == arch
                and k["config"].get("dtype") == dtype)


def test_the_new_kinds_are_all_here():
    kinds = {(k["config"]["kind"], k["config"]["arch"], k["config"].get("dtype")) for k in NEW}
    assert len(NEW) >= 16
    for want in (("attention", 90, "fp16"), ("attention", 100, "bf16"), ("attention_tma", 90, "fp8e4nv"),
                 ("matmul_t", 80, "i8"), ("matmul_t", 90, "i8"), ("matmul_t", 100, "i8"), ("matmul_t", 80, "fp32"),
                 ("dot_scaled", 100, "e2m1"), ("dot_scaled", 100, "e5m2")):
        assert want in kinds


@pytest.mark.parametrize("kernel", NEW, ids=_kid)
def test_every_recorded_kernel_proves(kernel):
    # Triton's compiled kernels (its tutorials' attention, tl.dot_scaled, int8 / tf32 matmuls) are correct
    proof = prove_ttgir(kernel["ttgir"])
    assert proof.ok, str(proof)
    pipes = pipelines_from_ttgir(kernel["ttgir"])
    arch = {80: "sm_80", 90: "sm_90a", 100: "sm_100a"}[kernel["config"]["arch"]]
    # tt.dot lowers to mma.sync on every arch (Triton's int8 on sm_100 too): its pipeline is the sm_80 one
    assert all(p.arch == (arch if p.knobs["op"].name != "tt.dot" else "sm_80") for p in pipes)
    if kernel["config"]["kind"].startswith("attention"):
        assert len(pipes) >= 2  # Q K^T (SS) and P V (RS / TS)
        stages = {c.stage for p in pipes for c in p.trace().checks}
        assert ("wgmma_regs_a" if arch == "sm_90a" else "umma_tmem_read_a") in stages


# ---------------------------------------------------------------------------------------------------
# the independent oracle: the PTX ISA's fragment tables (written here from the ISA's figures) and Triton's engine
# ---------------------------------------------------------------------------------------------------
def _isa_a(shape: str, lane: int, i: int) -> tuple[int, int]:
    """(row, col) of A element i of ``lane`` in mma.sync (PTX ISA, "Matrix Fragments for mma.m16n8kK")."""
    g, t = lane >> 2, lane % 4
    if shape == "m16n8k16":  # .f16/.bf16: a0..a7
        return g + 8 * ((i >> 1) & 1), 2 * t + (i & 1) + 8 * (i >> 2)
    if shape == "m16n8k8":  # .tf32: a0..a3
        return g + 8 * (i & 1), t + 4 * (i >> 1)
    if shape == "m16n8k32":  # .s8: a0..a15
        return g + 8 * ((i >> 2) & 1), 4 * t + (i & 3) + 16 * (i >> 3)
    raise AssertionError(shape)


def _isa_b(shape: str, lane: int, i: int) -> tuple[int, int]:
    g, t = lane >> 2, lane % 4
    if shape == "m16n8k16":
        return 2 * t + (i & 1) + 8 * (i >> 1), g
    if shape == "m16n8k8":
        return t + 4 * i, g
    if shape == "m16n8k32":
        return 4 * t + (i & 3) + 16 * (i >> 2), g
    raise AssertionError(shape)


def _isa_c(lane: int, i: int) -> tuple[int, int]:
    return (lane >> 2) + 8 * (i >> 1), 2 * (lane % 4) + (i & 1)


_NA = {"m16n8k16": 8, "m16n8k8": 4, "m16n8k32": 16}
_NB = {"m16n8k16": 4, "m16n8k8": 2, "m16n8k32": 8}


def _engine():
    gl = pytest.importorskip("triton.experimental.gluon.language")
    import gluon_oracle

    return gl, gluon_oracle.engine_bases


def _holdings(bases: dict, shape) -> dict:
    """(warp, lane) -> the set of coordinates that thread holds, from Triton's bases."""
    def span(vs):
        out = [(0, 0)]
        for v in vs:
            out += [(a ^ v[0], b ^ v[1]) for a, b in out]
        return out
    reg, lane, warp = span(bases["register"]), span(bases["lane"]), span(bases["warp"])
    held: dict = {}
    for w, (w0, w1) in enumerate(warp):
        for ln, (l0, l1) in enumerate(lane):
            held[(w, ln)] = {(r0 ^ l0 ^ w0, r1 ^ l1 ^ w1) for r0, r1 in reg}
    return held


def _parent(text: str, gl, version: int):
    m = re.search(r"#mma = #ttg\.nvidia_mma<\{versionMajor = (\d), versionMinor = 0, warpsPerCTA = \[([\d, ]+)\], "
                  r"instrShape = \[([\d, ]+)\]\}>", text)
    assert m and int(m[1]) == version
    ints = [[int(x) for x in g.split(",")] for g in (m[2], m[3])]
    return gl.NVMMADistributedLayout(version=[version, 0], warps_per_cta=ints[0], instr_shape=ints[1])


def brute_mma_sync(text: str, shape: str) -> np.ndarray:
    """The wrong outputs of the kernel's tt.dot, by simulating every mma.sync of every warp (ISA tables above) on
    the holdings Triton's engine gives for the dot operands and the accumulator."""
    gl, engine = _engine()
    line = next(ln for ln in text.splitlines() if "= tt.dot " in ln)
    dims = [tuple(int(x) for x in d.split("x")) for d in re.findall(r"tensor<(\d+x\d+)x", line)]
    (M, K), (_, N) = dims[0], dims[1]
    kw = [int(x) for x in re.findall(r"kWidth = (\d+)", line)]
    mma = _parent(text, gl, 2)
    hA = _holdings(engine(gl.DotOperandLayout(0, mma, kw[0]), [M, K]), (M, K))
    hB = _holdings(engine(gl.DotOperandLayout(1, mma, kw[1]), [K, N]), (K, N))
    hC = _holdings(engine(mma, [M, N]), (M, N))
    ki = int(shape.split("k")[1])
    ok = np.zeros((M, N), bool)
    warps = sorted({w for w, _ in hC})
    for w in warps:
        tiles = {(m // 16 * 16, n // 8 * 8) for ln in range(32) for m, n in hC[(w, ln)]}
        for m0, n0 in tiles:
            good = all((m0 + r, k0 + c) in hA[(w, ln)] for k0 in range(0, K, ki) for ln in range(32)
                       for r, c in (_isa_a(shape, ln, i) for i in range(_NA[shape]))) and \
                all((k0 + r, n0 + c) in hB[(w, ln)] for k0 in range(0, K, ki) for ln in range(32)
                    for r, c in (_isa_b(shape, ln, i) for i in range(_NB[shape])))
            for ln in range(32):
                for i in range(4):
                    r, c = _isa_c(ln, i)
                    # the product lands in this lane: right if the layout says this thread holds C[m0 + r, n0 + c]
                    if good and (m0 + r, n0 + c) in hC[(w, ln)]:
                        ok[m0 + r, n0 + c] = True
    return ~ok


@pytest.mark.parametrize("dtype,shape,edit,should", [
    # tf32: kWidth 1 -> 2: a lane then holds two consecutive k of A (the ISA wants k and k + 4)
    ("fp32", "m16n8k8", ("kWidth = 1}>> * tensor", "kWidth = 2}>> * tensor"), "A[0, 1]"),
    # s8: kWidth 4 -> 8: a lane holds 8 consecutive k (the ISA: 4, then 4 more 16 further)
    ("i8", "m16n8k32", ("kWidth = 4}>> * tensor", "kWidth = 8}>> * tensor"), "A[0, 4]"),
])
def test_mma_sync_dot_operand_edit_caught(dtype, shape, edit, should):
    text = _one("matmul_t", 80, dtype)
    assert not brute_mma_sync(text, shape).any()  # the interpreter proves the real kernel too
    bad = text.replace(*edit)
    assert bad != text
    p = prove_ttgir(bad)
    assert not p.ok and p.first_wrong["stage"] == "dot_operand_a" and p.first_wrong["should"] == should
    np.testing.assert_array_equal(p.wrong_outputs, brute_mma_sync(bad, shape))


def brute_wgmma_rs(text: str, line_no: int) -> np.ndarray:
    """Outputs of the RS warp_group_dot on ``line_no`` whose A operand is not where the ISA's wgmma A register
    fragment (warp w of the group: rows 16 w .. 16 w + 15, laid out as mma.m16n8k16's A) needs it, in the warp
    group that holds the output (Triton's engine for the dot_op and the accumulator)."""
    gl, engine = _engine()
    line = text.splitlines()[line_no - 1]
    assert "ttng.warp_group_dot" in line and "tensor<" in line.split("*")[0]
    M, K = (int(x) for x in re.search(r"tensor<(\d+)x(\d+)x", line).groups())
    N = int(re.search(r"-> tensor<\d+x(\d+)x", line)[1])
    kw = int(re.search(r"kWidth = (\d+)", line)[1])
    mma = _parent(text, gl, 3)
    hA = _holdings(engine(gl.DotOperandLayout(0, mma, kw), [M, K]), (M, K))
    hC = _holdings(engine(mma, [M, N]), (M, N))
    assert "f16" in line.split("*")[0]
    need: dict = {}  # (row % 16, k % 16) -> lanes of the warp holding it in the ISA's fragment
    for ln in range(32):
        for i in range(8):
            need.setdefault(_isa_a("m16n8k16", ln, i), []).append(ln)
    wrong = np.zeros((M, N), bool)
    for (w, _ln), cells in hC.items():
        for m, n in cells:
            g = w // 4
            wa = 4 * g + (m % 64) // 16
            wrong[m, n] |= not all((m, k) in hA[(wa, la)] for k in range(K) for la in need[(m % 16, k % 16)])
    return wrong


def test_wgmma_rs_dot_operand_edit_caught():
    # attention on sm_90a: P (registers, #ttg.dot_op of the wgmma accumulator) is wgmma's A. kWidth 2 -> 4: a thread
    # then holds 4 consecutive k of P where the A fragment wants pairs (k, k + 1) and (k + 8, k + 9)
    text = _one("attention", 90, "fp16")
    line = next(i + 1 for i, ln in enumerate(text.splitlines()) if "ttng.warp_group_dot %acc" in ln)
    assert not brute_wgmma_rs(text, line).any()
    bad = text.replace("opIdx = 0, parent = #mma, kWidth = 2", "opIdx = 0, parent = #mma, kWidth = 4")
    assert bad != text
    p = prove_ttgir(bad)
    assert not p.ok and p.first_wrong["stage"] == "wgmma_regs_a"
    assert p.first_wrong["should"] == "A[0, 2]" and p.first_wrong["location"].startswith("warp 0 lane 1 ")
    np.testing.assert_array_equal(p.wrong_outputs, brute_wgmma_rs(bad, line))
    assert p.wrong_outputs.all()


def _tmem_reg_layout(dtype: str, shape, col_stride: int, num_warps: int = 4):
    gl = pytest.importorskip("triton.experimental.gluon.language")
    from triton.experimental.gluon.language.nvidia.blackwell import TensorMemoryLayout, get_tmem_reg_layout

    L = get_tmem_reg_layout(getattr(gl, dtype), tuple(shape), TensorMemoryLayout(tuple(shape), col_stride), num_warps)
    return {"register": L.reg_bases, "lane": L.lane_bases, "warp": L.warp_bases}


def test_tcgen05_ts_store_from_the_wrong_warps_caught():
    # attention on sm_100a: P goes to tensor memory by tmem_store, then is tcgen05.mma's A (TS). Swap the two warp
    # bases of the storing register layout (for P only): warp 1 then holds rows 64..95, which live in TMEM lanes
    # 64..95 -- out of its reach (lanes 32..63). Triton's own register layout for that store disagrees.
    text = _one("attention", 100, "fp16")
    lin = re.search(r"^#linear = (#ttg\.linear<.*>)$", text, re.M)[1]
    want = _tmem_reg_layout("float16", (128, 64), 1)
    assert lin == ("#ttg.linear<{register = " + str(want["register"]) + ", lane = " + str(want["lane"])
                   + ", warp = " + str(want["warp"]) + ", block = []}>")
    swapped = lin.replace("warp = [[32, 0], [64, 0]]", "warp = [[64, 0], [32, 0]]")
    assert swapped != lin
    bad = text.replace("#smem = #ttg.shared_memory", f"#smem = #ttg.shared_memory\n#linear9 = {swapped}", 1)
    # the truncated P and its store (the f16 tensor in #linear) take the swapped layout
    bad = bad.replace("tensor<128x64xf16, #linear>", "tensor<128x64xf16, #linear9>")
    assert bad.count("#linear9") > 2
    p = prove_ttgir(bad)
    assert not p.ok and p.first_wrong["stage"] == "tmem_store_a"
    assert p.first_wrong["location"].startswith("A[32, 0]") and p.first_wrong["lands"].startswith("warp 2")
    want_wrong = np.zeros((128, 64), bool)
    want_wrong[32:96] = True  # rows 32..95 of P are written by a warp of the wrong quarter: those outputs only
    np.testing.assert_array_equal(p.wrong_outputs, want_wrong)


def test_tcgen05_ts_unpacked_a_caught():
    # P stored unpacked (colStride = 2: one f16 per 32-bit column) where tcgen05.mma kind::f16 reads A packed. By
    # hand from the PTX ISA (A in TMEM for M = 128: row m in lane m, K packed two 16-bit elements per 32-bit column)
    # and Gluon's TensorMemoryLayout doc (col_stride 2: element k in column k): A[0, 1] is then in column 1, the MMA
    # reads column 0's upper half -- which holds nothing.
    text = _one("attention", 100, "fp16")
    bad = text.replace("#smem = #ttg.shared_memory", "#smem = #ttg.shared_memory\n#tmem9 = "
                       "#ttng.tensor_memory_encoding<blockM = 128, blockN = 64, colStride = 2>", 1)
    bad = bad.replace("128x64xf16, #tmem,", "128x64xf16, #tmem9,")
    assert bad.count("#tmem9") > 2
    p = prove_ttgir(bad)
    assert not p.ok and p.first_wrong["stage"] == "umma_tmem_read_a" and p.first_wrong["should"] == "A[0, 1]"
    assert "column 0" in p.first_wrong["location"] and p.wrong_outputs.all()


def test_mn_major_b_narrower_than_its_atom():
    # matmul_t sm_90a 64x64x32 f16, B MN-major in a 128B swizzle (64 f16 wide) read by two warp groups of N = 32
    # (warpsPerCTA [4, 2]): group 1's descriptor starts 64 bytes into the atom (the derivation check_ptx compares
    # with the PTX). With a 64B swizzle each group's block is one whole atom: the ordinary derivation, same answer.
    text = next(k["ttgir"] for k in KERNELS if k["config"]["kind"] == "matmul_t" and k["config"]["arch"] == 90
                and "'BM': 64, 'BN': 64, 'BK': 32" in k["config"]["constexprs"])
    pipes = pipelines_from_ttgir(text)
    assert pipes[0].knobs["nblock"] == 32 and pipes[0].N == 64
    assert "#shared1 = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false" in text
    for t in (text, text.replace("#shared1 = #ttg.nvmma_shared<{swizzlingByteWidth = 128",
                                 "#shared1 = #ttg.nvmma_shared<{swizzlingByteWidth = 64")):
        p = prove_ttgir(t)
        assert p.ok, str(p)
        rb = next(c for c in p.stages if c.stage == "wgmma_read_b")
        assert rb.mismatches == 0 and rb.checked == 64 * 32


def test_mn_major_block_inside_the_atom_by_hand():
    # the rule behind the narrow block, by hand with test_kernel_pipeline's descriptor decoder (PTX canonical
    # layouts, swizzle on absolute address bits): B of 32 k x 64 n f16, MN-major, 128B swizzle: one atom row is
    # 64 n (128 B), 8 k rows make 1024 B (SBO), a k-block of 16 is 2048 B. Warp group g's m64n32k16 descriptor
    # starting 64 * g bytes into the atom reads B[16 j + k, 32 g + n]; started at the atom (0) group 1 would read
    # group 0's columns.
    from test_kernel_pipeline import swz, tile_offset, wgmma_address

    placed = {swz(tile_offset("MN", 128, n, k, 64), 128): (k, n) for n in range(64) for k in range(32)}

    def word(start):
        return (start >> 4) | ((1024 >> 4) << 32) | (1 << 62)  # SBO 1024 B, 128B swizzle, LBO unused

    for g in range(2):
        for j in range(2):
            got = {(k, n): placed[wgmma_address(word(64 * g + 2048 * j), "MN", n, k)]
                   for n in range(32) for k in range(16)}
            assert all(v == (16 * j + k, 32 * g + n) for (k, n), v in got.items())
    wrong = placed[wgmma_address(word(0), "MN", 0, 0)]
    assert wrong == (0, 0) != (0, 32)


def test_scaled_factor_lanes_edit_caught():
    # dot_scaled e4m3 on sm_100a: the scale factors go to tensor memory by a tmem_alloc from registers in #linear1,
    # which must be Triton's own tcgen05.st layout of the scales. Swap a lane basis with a register basis: lane 1
    # then holds row 0's second factor instead of row 1's first; the TMEM lane 1 it writes needs row 1's
    text = _one("dot_scaled", 100, "e4m3")
    lin = re.search(r"^#linear1 = #ttg\.linear<\{register = \[\[0, 1\], \[0, 2\], \[32, 0\], \[64, 0\]\], "
                    r"lane = \[\[1, 0\], ", text, re.M)
    assert lin is not None
    bad = text.replace("#linear1 = #ttg.linear<{register = [[0, 1], [0, 2], [32, 0], [64, 0]], lane = [[1, 0], ",
                       "#linear1 = #ttg.linear<{register = [[1, 0], [0, 2], [32, 0], [64, 0]], lane = [[0, 1], ")
    p = prove_ttgir(bad)
    assert not p.ok and p.first_wrong["stage"] == "tmem_store_scales_a"
    assert p.first_wrong["location"].startswith("TMEM lane 0 byte 1") and p.first_wrong["should"] == "SFA[0, 1]"
    # every output mixes in some wrongly scaled product
    assert p.wrong_outputs.all()
    # Triton's engine: its register layout for storing the scales has the lane bases of the original, not the edit's
    gl = pytest.importorskip("triton.experimental.gluon.language")
    from triton.experimental.gluon.language.nvidia.blackwell import TensorMemoryScalesLayout, get_tmem_reg_layout

    L = get_tmem_reg_layout(gl.int8, (128, 4), TensorMemoryScalesLayout(), 4)
    assert L.lane_bases[0] == [1, 0] and [1, 0] not in L.reg_bases


def test_scaled_mixed_formats_refused():
    from layoutalg.errors import LayoutError

    text = _one("dot_scaled", 100, "e4m3")
    with pytest.raises(LayoutError, match="lhs = <format> rhs = <format>"):
        prove_ttgir(text.replace("lhs = e4m3 rhs = e4m3", "lhs = e9m9 rhs = e4m3"))
