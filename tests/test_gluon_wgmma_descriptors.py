"""The wgmma matrix descriptors Triton emits (PTX compiled on the CPU) == layoutalg's derivation, field by field.

For each NVMMASharedLayout mode that ``hopper.warpgroup_mma`` accepts -- swizzle 32/64/128 B x
8/16/32-bit x transposed or not (MN-major only for 16-bit, as wgmma allows; Triton 3.6's lowering
fails on ``swizzle_byte_width=0`` operands, "PassManager::run failed" in ConvertTritonGPUToLLVM,
so the unswizzled mode is not one it accepts) -- a Gluon kernel
issues ``warpgroup_mma(a, b, acc)`` on a 64 x K A tile and a K x 64 B tile; Triton's PTX builds
each k-block's descriptor as ``start | C_j`` with a constant ``C_j`` per k-block. layoutalg derives
the same words from the layout alone: ``from_gluon`` gives the tile's (mn, k) -> offset layout and
``k_block_descriptors`` its per-k-block descriptors (start address 0, so the start field is the
k-block's byte offset >> 4, which is what Triton adds).

The comparison rule for the one field the hardware ignores (docs/gluon.md): the leading byte
offset of a *swizzled K-major* operand is not read by wgmma ("not used, assumed 1" in the PTX
ISA). There both sides must write one of the two conventional values -- Triton 0, layoutalg 1
(CuTe's and the ISA's) -- and every other field must be equal. Everywhere else LBO is compared
like the rest.
"""

from __future__ import annotations

import re

import pytest

gl = pytest.importorskip("triton.experimental.gluon.language")

import gluon_oracle as oracle  # noqa: E402

from layoutalg.composed import ComposedLayout  # noqa: E402
from layoutalg.interop.gluon import from_gluon  # noqa: E402
from layoutalg.layout import Layout  # noqa: E402
from layoutalg.nvidia.hopper.descriptor import MatrixDescriptor  # noqa: E402
from layoutalg.nvidia.hopper.wgmma import k_block_descriptors  # noqa: E402

SRC = '''from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import warpgroup_mma


@gluon.jit
def kern(out_ptr, K: gl.constexpr, N: gl.constexpr, LA: gl.constexpr, LB: gl.constexpr, ACC: gl.constexpr):
    a = gl.allocate_shared_memory(out_ptr.dtype.element_ty, [64, K], LA)
    b = gl.allocate_shared_memory(out_ptr.dtype.element_ty, [K, N], LB)
    acc = gl.zeros([64, N], gl.float32, ACC)
    acc = warpgroup_mma(a, b, acc)
    rows = gl.arange(0, 64, layout=gl.SliceLayout(1, ACC))
    cols = gl.arange(0, N, layout=gl.SliceLayout(0, ACC))
    gl.store(out_ptr + rows[:, None] * N + cols[None, :], acc.to(out_ptr.dtype.element_ty))
'''

DTYPE = {8: ("fp8e4nv", "e4m3"), 16: ("fp16", "f16"), 32: ("fp32", "tf32")}
N = 64


def modes():
    out = []
    for bits in (8, 16, 32):
        for sw in (32, 64, 128):
            for a_mn in ((False, True) if bits == 16 else (False,)):
                for b_mn in ((False, True) if bits == 16 else (False,)):
                    out.append((bits, sw, a_mn, b_mn))
    return out


def triton_words(bits, sw, a_mn, b_mn, K):
    """Per k-block, the constant words Triton's PTX combines with the A and B start addresses."""
    ptx = oracle.compile_asm(
        SRC, "kern", {"out_ptr": f"*{DTYPE[bits][0]}", "K": "constexpr", "N": "constexpr", "LA": "constexpr",
                      "LB": "constexpr", "ACC": "constexpr"},
        {"K": K, "N": N, "LA": gl.NVMMASharedLayout(sw, bits, transposed=a_mn),
         "LB": gl.NVMMASharedLayout(sw, bits, transposed=not b_mn),  # B is K x N: K-major = transposed
         "ACC": gl.NVMMADistributedLayout([3, 0], [4, 1], [16, N, 256 // bits])}, num_warps=4, upto="ptx")["ptx"]
    const = {m[1]: int(m[2]) for m in re.finditer(r"(?:or|add)\.[bs]64\s+(%rd\d+), %rd\d+, (-?\d+);", ptx)}
    words = []
    for m in re.finditer(r"wgmma\.mma_async\.sync\.aligned\.m64n\d+k\d+\.\S+ \{[^}]*\}, (%rd\d+), (%rd\d+),", ptx):
        words.append((const[m[1]] % (1 << 64), const[m[2]] % (1 << 64)))
    return words


def mn_k(layout):
    """(k, n) -> offset of a K x N B tile as (n, k) -> offset: its two modes swapped."""
    inner = layout.inner if isinstance(layout, ComposedLayout) else layout
    swapped = Layout((inner.shape[1], inner.shape[0]), (inner.stride[1], inner.stride[0]))
    return ComposedLayout(layout.outer, 0, swapped) if isinstance(layout, ComposedLayout) else swapped


def fields(d: MatrixDescriptor) -> dict:
    return {"start": d.start_address >> 4, "lbo": d.lbo_encoded, "sbo": d.sbo_encoded, "base": d.base_offset,
            "swizzle": d.swizzle}


def compare(triton_word: int, ours: MatrixDescriptor, major: str, sw: int) -> None:
    t, o = fields(MatrixDescriptor.decode(triton_word)), fields(ours)
    if sw and major == "K":  # the documented rule: LBO is ignored by the hardware here
        assert (t.pop("lbo"), o.pop("lbo")) == (0, 1)
    assert t == o


@pytest.mark.parametrize("bits,sw,a_mn,b_mn", modes(),
                         ids=[f"{b}bit-sw{s}-A{'MN' if a else 'K'}-B{'MN' if bb else 'K'}" for b, s, a, bb in modes()])
def test_descriptors_equal_tritons(bits, sw, a_mn, b_mn):
    dt = DTYPE[bits][1]
    kinstr = 256 // bits
    K = max(8 * max(sw, 32) // bits, 2 * kinstr)
    words = triton_words(bits, sw, a_mn, b_mn, K)
    assert len(words) == K // kinstr  # one wgmma per k-block
    la = from_gluon(gl.NVMMASharedLayout(sw, bits, transposed=a_mn), (64, K))
    lb = mn_k(from_gluon(gl.NVMMASharedLayout(sw, bits, transposed=not b_mn), (K, N)))
    ka = k_block_descriptors(la, dt, f"m64n{N}k{kinstr}", operand="A")
    kb = k_block_descriptors(lb, dt, f"m64n{N}k{kinstr}", operand="B")
    assert len(ka) == len(kb) == len(words)
    for (wa, wb), da, db in zip(words, ka, kb):
        compare(wa, da.descriptor, "MN" if a_mn else "K", sw)
        compare(wb, db.descriptor, "MN" if b_mn else "K", sw)


def test_issue_example():
    """The issue's numbers: 64x64 fp16 NVMMASharedLayout(128, 16) A: 0x4000004000000000, +2 (32 B) per k16 block."""
    words = triton_words(16, 128, False, False, 64)
    assert [hex(a) for a, _ in words] == ["0x4000004000000000", "0x4000004000000002", "0x4000004000000004",
                                          "0x4000004000000006"]
    ours = k_block_descriptors(from_gluon(gl.NVMMASharedLayout(128, 16), (64, 64)), "f16", "m64n64k16")
    assert [hex(kb.descriptor.encode()) for kb in ours][:2] == ["0x4000004000010000", "0x4000004000010002"]
