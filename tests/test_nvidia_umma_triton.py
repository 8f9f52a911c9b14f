"""The tcgen05 smem descriptors (and idesc) in Triton 3.6's PTX for sm_100a == layoutalg's, field by field.

A Gluon kernel issues ``tcgen05_mma(a, b, acc)`` on an M x K A tile and a K x N B tile in
``NVMMASharedLayout`` shared memory, compiled for ``cuda:100`` to PTX on the CPU (no GPU, no ptxas
needed here). Triton builds each k-block's descriptor as ``start | C_j`` (``or``/``add`` of a constant
per k-block); layoutalg derives the same words from Triton's own tiling -- ``from_gluon`` gives the
tile's (mn, k) -> offset layout and :func:`layoutalg.nvidia.blackwell.umma_smem.k_block_descriptors` its
per-k-block descriptors for the atom (start 0: the start field is the k-block's offset >> 4).

Modes: 8/16/32-bit x swizzle 32/64/128 B x A, B K- or MN-major (27 kernels; Triton 3.6 refuses
MN-major fp32/tf32 operands: "Currently don't support transpose for F32"), and block-scaled
``tcgen05_mma_scaled`` kernels (9): mxf8f6f4 e4m3 x 32/64/128 B x B K/MN, and mxf4 with e2m1 packed
two to a byte (read as the 4-bit tile it is) x 32/64/128 B.

Comparison rule (as for wgmma, docs/gluon.md): the LBO of a *swizzled K-major* operand is unused;
Triton writes 0 there, layoutalg 1 (CuTe's value); every other field must be equal. Triton tiles an
MN-major operand its own way (not CuTe's tile_to_mma_shape), so the comparison is with Triton's tiling.
The instruction descriptor immediate is compared with CuTe's (recorded ``tests/data/cute/umma_atoms.json``).
Nothing here ran on sm_100 hardware.
"""

from __future__ import annotations

import pathlib
import re

import pytest

gl = pytest.importorskip("triton.experimental.gluon.language")

import gluon_oracle as oracle  # noqa: E402

from layoutalg.composed import ComposedLayout  # noqa: E402
from layoutalg.interop.gluon import from_gluon  # noqa: E402
from layoutalg.layout import Layout  # noqa: E402
from layoutalg.nvidia.blackwell.descriptor import Tcgen05Descriptor  # noqa: E402
from layoutalg.nvidia.blackwell.umma import umma_atom  # noqa: E402
from layoutalg.nvidia.blackwell.umma_smem import k_block_descriptors  # noqa: E402

SRC = '''from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.blackwell import (TensorMemoryLayout, allocate_tensor_memory,
                                                                 tcgen05_mma, get_tmem_reg_layout)


@gluon.jit
def kern(out_ptr, M: gl.constexpr, N: gl.constexpr, K: gl.constexpr, LA: gl.constexpr, LB: gl.constexpr):
    a = gl.allocate_shared_memory(out_ptr.dtype.element_ty, [M, K], LA)
    b = gl.allocate_shared_memory(out_ptr.dtype.element_ty, [K, N], LB)
    tl: gl.constexpr = TensorMemoryLayout([M, N], col_stride=1)
    acc = allocate_tensor_memory(gl.float32, [M, N], tl)
    tcgen05_mma(a, b, acc, use_acc=False)
    RL: gl.constexpr = get_tmem_reg_layout(gl.float32, [M, N], tl, 4)
    r = acc.load(RL)
    rows = gl.arange(0, M, layout=gl.SliceLayout(1, RL))
    cols = gl.arange(0, N, layout=gl.SliceLayout(0, RL))
    gl.store(out_ptr + rows[:, None] * N + cols[None, :], r.to(out_ptr.dtype.element_ty))
'''

#: bits -> (Triton pointer type, layoutalg type, atom kind)
DTYPE = {8: ("fp8e4nv", "e4m3", "f8f6f4"), 16: ("bf16", "bf16", "f16"), 32: ("fp32", "tf32", "tf32")}
M, N = 128, 128
RECORDED = pathlib.Path(__file__).parent / "data" / "cute" / "umma_atoms.json"


def modes():
    out = []
    for bits in (8, 16, 32):
        for sw in (32, 64, 128):
            for a_mn in (False, True):
                for b_mn in (False, True):
                    if bits == 32 and (a_mn or b_mn):
                        continue  # Triton 3.6: "Currently don't support transpose for F32" (MMAv5.cpp assertion)
                    out.append((bits, sw, a_mn, b_mn))
    return out


def triton_words(bits, sw, a_mn, b_mn, K):
    """Per k-block (A word, B word) and the idesc immediate of Triton's PTX."""
    ptx = oracle.compile_asm(
        SRC, "kern", {"out_ptr": f"*{DTYPE[bits][0]}", "M": "constexpr", "N": "constexpr", "K": "constexpr",
                      "LA": "constexpr", "LB": "constexpr"},
        {"M": M, "N": N, "K": K, "LA": gl.NVMMASharedLayout(sw, bits, transposed=a_mn),
         "LB": gl.NVMMASharedLayout(sw, bits, transposed=not b_mn)}, num_warps=4, upto="ptx", arch=100)["ptx"]
    assert ".target sm_100a" in ptx
    const = {m[1]: int(m[2]) for m in re.finditer(r"(?:or|add)\.[bs]64\s+(%rd\d+), %rd\d+, (-?\d+);", ptx)}
    imm = {m[1]: int(m[2]) for m in re.finditer(r"mov\.b32\s+(%r\d+), (-?\d+);", ptx)}
    words, idescs = [], set()
    for m in re.finditer(r"tcgen05\.mma\.cta_group::1\.kind::(\w+) \[[^]]*\], (%rd\d+), (%rd\d+), (%r\d+),", ptx):
        words.append((const[m[2]] % (1 << 64), const[m[3]] % (1 << 64)))
        idescs.add((m[1], imm[m[4]] % (1 << 32)))
    return words, idescs


def mn_k(layout):
    """(k, n) -> offset of a K x N B tile as (n, k) -> offset: its two modes swapped."""
    inner = layout.inner if isinstance(layout, ComposedLayout) else layout
    swapped = Layout((inner.shape[1], inner.shape[0]), (inner.stride[1], inner.stride[0]))
    return ComposedLayout(layout.outer, 0, swapped) if isinstance(layout, ComposedLayout) else swapped


def fields(d: Tcgen05Descriptor) -> dict:
    return {"start": d.start_address >> 4, "lbo": d.lbo_encoded, "sbo": d.sbo_encoded, "base": d.base_offset,
            "swizzle": d.swizzle, "lbo_mode": d.lbo_mode}


def compare(triton_word: int, ours: Tcgen05Descriptor, major: str, sw: int) -> None:
    t, o = fields(Tcgen05Descriptor.decode(triton_word)), fields(ours)
    if sw and major == "K":  # the documented rule: LBO is not read here
        assert (t.pop("lbo"), o.pop("lbo")) == (0, 1)
    assert t == o


@pytest.mark.parametrize("bits,sw,a_mn,b_mn", modes(),
                         ids=[f"{b}bit-sw{s}-A{'MN' if a else 'K'}-B{'MN' if bb else 'K'}" for b, s, a, bb in modes()])
def test_descriptors_equal_tritons(bits, sw, a_mn, b_mn):
    _, dt, kind = DTYPE[bits]
    kinstr = 256 // bits
    K = max(8 * max(sw, 32) // bits, 2 * kinstr)
    words, idescs = triton_words(bits, sw, a_mn, b_mn, K)
    assert len(words) == K // kinstr  # one tcgen05.mma per k-block
    atom = umma_atom(kind=kind, a_type=dt, m=M, n=N, a_major="MN" if a_mn else "K", b_major="MN" if b_mn else "K")
    la = from_gluon(gl.NVMMASharedLayout(sw, bits, transposed=a_mn), (M, K))
    lb = mn_k(from_gluon(gl.NVMMASharedLayout(sw, bits, transposed=not b_mn), (K, N)))
    ka = k_block_descriptors(la, bits, atom, operand="A")
    kb = k_block_descriptors(lb, bits, atom, operand="B")
    assert len(ka) == len(kb) == len(words)
    for (wa, wb), da, db in zip(words, ka, kb):
        compare(wa, da.descriptor, "MN" if a_mn else "K", sw)
        compare(wb, db.descriptor, "MN" if b_mn else "K", sw)
    assert idescs == {(atom.kind, atom.idesc().word)}  # the idesc immediate is the atom's
    # ... and CuTe's for the same atom (recorded trait idesc_)
    if RECORDED.exists():
        import umma_oracle

        rec = umma_oracle.load_atoms()[0].get(atom.name)
        assert rec is not None, atom.name
        if rec is not None:
            assert idescs == {(atom.kind, int(rec.split("|")[-1], 16))}, (atom.name, idescs, rec)


def test_notes_example():
    """The notes' numbers: bf16 128x128 K/K idesc 0x08200490 and the K-major 128B word at base 0."""
    words, idescs = triton_words(16, 128, False, False, 64)
    assert hex(words[0][0]) == "0x4000404000000000"
    assert [hex(a) for a, _ in words] == ["0x4000404000000000", "0x4000404000000002", "0x4000404000000004",
                                          "0x4000404000000006"]
    assert idescs == {("f16", 0x08200490)}


SCALED_SRC = '''from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia import blackwell as bw


@gluon.jit
def kern(out_ptr, M: gl.constexpr, N: gl.constexpr, K: gl.constexpr, FMT: gl.constexpr, KB8: gl.constexpr,
         VS: gl.constexpr, SW: gl.constexpr, B_MN: gl.constexpr):
    # operands as Triton stores them: bytes -- e4m3, or e2m1 packed two to a byte (K/2 bytes)
    a_l: gl.constexpr = gl.NVMMASharedLayout(swizzle_byte_width=SW, element_bitwidth=8, rank=2)
    b_l: gl.constexpr = gl.NVMMASharedLayout(swizzle_byte_width=SW, element_bitwidth=8, rank=2, transposed=not B_MN)
    a = gl.allocate_shared_memory(gl.uint8, [M, KB8], a_l)
    b = gl.allocate_shared_memory(gl.uint8, [KB8, N], b_l)
    acc_l: gl.constexpr = bw.TensorMemoryLayout(block=(M, N), col_stride=1)
    acc = bw.allocate_tensor_memory(gl.float32, [M, N], acc_l)
    a_s = bw.allocate_tensor_memory(gl.uint8, [M, K // VS], bw.TensorMemoryScalesLayout())
    b_s = bw.allocate_tensor_memory(gl.uint8, [N, K // VS], bw.TensorMemoryScalesLayout())
    bw.tcgen05_mma_scaled(a, b, acc, a_s, b_s, FMT, FMT, use_acc=False)
    reg: gl.constexpr = bw.get_tmem_reg_layout(gl.float32, (M, N), acc_l, 4)
    v = acc.load(reg)
    offs_m = gl.arange(0, M, layout=gl.SliceLayout(1, reg))
    offs_n = gl.arange(0, N, layout=gl.SliceLayout(0, reg))
    gl.store(out_ptr + offs_m[:, None] * N + offs_n[None, :], v)
'''


def scaled_modes():
    out = [("e4m3", sw, b_mn) for sw in (32, 64, 128) for b_mn in (False, True)]
    return out + [("e2m1", sw, False) for sw in (32, 64, 128)]  # packed fp4 (kind::mxf4) is K-major only


def _as_4bit(byte_tile):
    """The e2m1-element view of a tile of packed bytes: element (mn, k) is nibble k % 2 of byte (mn, k // 2)."""
    from layoutalg.layout import make_layout

    inner = byte_tile.inner if isinstance(byte_tile, ComposedLayout) else byte_tile
    m0, m1 = inner[0], inner[1]
    dbl = lambda L: Layout(L.shape, tuple(2 * s for s in L.stride) if isinstance(L.stride, tuple) else 2 * L.stride)  # noqa: E731
    four = make_layout(dbl(m0), make_layout(Layout(2, 1), dbl(m1)))
    return ComposedLayout(byte_tile.outer, 0, four) if isinstance(byte_tile, ComposedLayout) else four


@pytest.mark.parametrize("fmt,sw,b_mn", scaled_modes(), ids=[f"{f}-sw{s}-B{'MN' if b else 'K'}" for f, s, b in scaled_modes()])
def test_scaled_descriptors_equal_tritons(fmt, sw, b_mn):
    four = fmt == "e2m1"
    kinstr = 64 if four else 32  # 32 bytes of K
    K = 4 * kinstr
    kb8 = K // 2 if four else K
    ptx = oracle.compile_asm(
        SCALED_SRC, "kern", {"out_ptr": "*fp32", **{k: "constexpr" for k in ("M", "N", "K", "FMT", "KB8", "VS", "SW", "B_MN")}},
        dict(M=M, N=N, K=K, FMT=fmt, KB8=kb8, VS=32, SW=sw, B_MN=b_mn), upto="ptx", arch=100)["ptx"]
    const = {m[1]: int(m[2]) for m in re.finditer(r"(?:or|add)\.[bs]64\s+(%rd\d+), %rd\d+, (-?\d+);", ptx)}
    imm = {m[1]: int(m[2]) for m in re.finditer(r"mov\.b32\s+(%r\d+), (-?\d+);", ptx)}
    mmas = list(re.finditer(r"tcgen05\.mma\.cta_group::1\.kind::(\w+)\.block_scale\S* \[[^]]*\], (%rd\d+), (%rd\d+), (%r\d+),", ptx))
    assert len(mmas) == K // kinstr
    kind = "mxf4" if four else "mxf8f6f4"
    atom = umma_atom(kind=kind, a_type=fmt, m=M, n=N, b_major="MN" if b_mn else "K")
    la = from_gluon(gl.NVMMASharedLayout(sw, 8), (M, kb8))
    lb = mn_k(from_gluon(gl.NVMMASharedLayout(sw, 8, transposed=not b_mn), (kb8, N)))
    bits = 4 if four else 8
    if four:
        la, lb = _as_4bit(la), _as_4bit(lb)
    ka = k_block_descriptors(la, bits, atom, operand="A")
    kb = k_block_descriptors(lb, bits, atom, operand="B")
    for mt, da, db in zip(mmas, ka, kb):
        assert mt[1] == kind
        compare(const[mt[2]] % (1 << 64), da.descriptor, "K", sw)
        compare(const[mt[3]] % (1 << 64), db.descriptor, "MN" if b_mn else "K", sw)
    # the idesc (scale-factor ids 0 in the first MMA) equals the atom's
    assert imm[mmas[0][4]] == atom.idesc().word, (hex(imm[mmas[0][4]]), atom.idesc())


def test_ptx_assembles_for_sm100a():
    """Two of the kernels above (an MN-major bf16 pair, packed-fp4 mxf4) assemble with the wheel's ptxas-blackwell."""
    import gluon_idesc_oracle as gio

    if gio.ptxas() is None:
        pytest.skip("no ptxas-blackwell in the Triton wheel")
    ptx = oracle.compile_asm(
        SRC, "kern", {"out_ptr": "*bf16", "M": "constexpr", "N": "constexpr", "K": "constexpr", "LA": "constexpr",
                      "LB": "constexpr"},
        {"M": M, "N": N, "K": 64, "LA": gl.NVMMASharedLayout(128, 16, transposed=True),
         "LB": gl.NVMMASharedLayout(128, 16, transposed=False)}, num_warps=4, upto="ptx", arch=100)["ptx"]
    r = gio.assemble(ptx)
    assert r.returncode == 0, r.stderr[-2000:]
    ptx4 = oracle.compile_asm(
        SCALED_SRC, "kern", {"out_ptr": "*fp32", **{k: "constexpr" for k in ("M", "N", "K", "FMT", "KB8", "VS", "SW", "B_MN")}},
        dict(M=M, N=N, K=256, FMT="e2m1", KB8=128, VS=32, SW=128, B_MN=False), upto="ptx", arch=100)["ptx"]
    r = gio.assemble(ptx4)
    assert r.returncode == 0, r.stderr[-2000:]
