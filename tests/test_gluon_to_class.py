"""to_gluon answers in the class the user asks for: ``cls=``, ``version=``, ``operand=``, ``like=``, and a
catalog fragment's own class (wgmma accumulator -> NVMMADistributedLayout version 3, operands ->
DotOperandLayout). Every answer is checked against Triton 3.6's layout engine on the CPU
(``GluonOpBuilder.to_linear_layout``): its bases of the returned object equal the input's bases,
and for catalog fragments ``from_gluon`` of the answer is the catalog's fragment index for index.
"""

from __future__ import annotations

import numpy as np
import pytest

gl = pytest.importorskip("triton.experimental.gluon.language")

import gluon_oracle as oracle  # noqa: E402

from layoutalg import Layout  # noqa: E402
from layoutalg.errors import LayoutError  # noqa: E402
from layoutalg.interop.gluon import from_gluon, gluon_layout, to_gluon  # noqa: E402
from layoutalg.nvidia.ampere import mma  # noqa: E402
from layoutalg.nvidia.hopper import wgmma_fragments  # noqa: E402


def _same_as_catalog(frag, result, shape) -> None:
    """Triton's engine maps the answer as linear_bases says, and from_gluon of it is the fragment."""
    assert oracle.engine_bases(result.layout, shape) == {k: [list(b) for b in v] for k, v in result.bases.items()}
    tv = from_gluon(result.layout, shape)
    T, V = frag.num_threads, frag.num_values
    table = np.asarray(tv.table()).reshape(V, T).T
    for t in range(T):
        for v in range(V):
            assert frag.coords(t, v) == (int(table[t, v] % shape[0]), int(table[t, v] // shape[0])), (frag.name, t, v)


WGMMA_D = [(f"m64n{n}k{k}", a) for n in (8, 16, 32, 64, 128, 256) for k, a in ((16, "f16"), (8, "tf32"), (32, "e4m3"))]


@pytest.mark.parametrize("shape_name,atype", WGMMA_D)
def test_wgmma_accumulator_is_version_3(shape_name, atype):
    frag = wgmma_fragments.fragment(shape_name, atype, "D")
    M, N, K = frag.mnk
    r = to_gluon(frag, (M, N))
    assert r.layout == gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, 1], instr_shape=[16, N, K])
    _same_as_catalog(frag, r, (M, N))
    r2 = to_gluon(frag, (M, N), version=2)  # the same function, spelt as mma.sync would
    assert r2.gluon["version"] == (2, 0)
    assert oracle.engine_bases(r2.layout, (M, N)) == oracle.engine_bases(r.layout, (M, N))


def test_wgmma_accumulator_as_a_plain_layout_with_version_3():
    """The TV layout alone (no provenance): version=3 (or like=) asks for the wgmma spelling."""
    frag = wgmma_fragments.fragment("m64n128k16", "f16", "D")
    plain = to_gluon(frag.layout, (64, 128))
    v3 = to_gluon(frag.layout, (64, 128), version=3)
    assert v3.gluon.kind == "NVMMADistributedLayout" and v3.gluon["version"] == (3, 0)
    assert oracle.engine_bases(v3.layout, (64, 128)) == oracle.engine_bases(plain.layout, (64, 128))
    like = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, 1], instr_shape=[16, 128, 16])
    assert to_gluon(frag.layout, (64, 128), like=like).layout == like
    _same_as_catalog(frag, v3, (64, 128))


@pytest.mark.parametrize("shape_name,atype", [("m64n8k16", "f16"), ("m64n8k16", "bf16"), ("m64n8k8", "tf32"),
                                              ("m64n8k32", "e4m3"), ("m64n8k32", "s8")])
def test_wgmma_a_operand_is_a_dot_operand_of_version_3(shape_name, atype):
    frag = wgmma_fragments.fragment(shape_name, atype, "A")
    M, N, K = frag.mnk
    r = to_gluon(frag, (M, K))
    assert r.gluon.kind == "DotOperandLayout" and r.gluon["operand_index"] == 0
    assert r.gluon["parent"]["version"] == (3, 0)
    assert r.gluon["k_width"] == 32 // frag.element_bits
    _same_as_catalog(frag, r, (M, K))


@pytest.mark.parametrize("shape_name,atype", [("m16n8k16", "f16"), ("m16n8k8", "tf32"), ("m16n8k32", "s8"), ("m16n8k16", "bf16")])
def test_mma_sync_fragments(shape_name, atype):
    M, N, K = mma.fragment(shape_name, atype, "C").mnk
    c = mma.fragment(shape_name, atype, "C")
    r = to_gluon(c, (M, N))
    assert r.gluon.kind == "NVMMADistributedLayout" and r.gluon["version"] == (2, 0)
    _same_as_catalog(c, r, (M, N))
    a = mma.fragment(shape_name, atype, "A")
    ra = to_gluon(a, (M, K))
    assert ra.gluon.kind == "DotOperandLayout" and ra.gluon["operand_index"] == 0 and ra.gluon["parent"]["version"] == (2, 0)
    _same_as_catalog(a, ra, (M, K))
    b = mma.fragment(shape_name, atype, "B")
    rb = to_gluon(b, (K, N))
    assert rb.gluon.kind == "DotOperandLayout" and rb.gluon["operand_index"] == 1
    assert oracle.engine_bases(rb.layout, (K, N)) == {k: [list(x) for x in v] for k, v in rb.bases.items()}
    tv = from_gluon(rb.layout, (K, N))
    table = np.asarray(tv.table()).reshape(b.num_values, 32).T
    for t in range(32):
        for v in range(b.num_values):
            assert b.coords(t, v) == (int(table[t, v] % K), int(table[t, v] // K))


def test_operand_asked_of_a_layout_that_aliases_the_accumulator():
    """A 16x16 A operand with one warp is also an accumulator spelling: operand=0 asks for the operand."""
    a = mma.fragment("m16n8k16", "f16", "A")
    plain = to_gluon(a.layout, (16, 16))
    r = to_gluon(a.layout, (16, 16), operand=0)
    assert r.gluon.kind == "DotOperandLayout" and r.gluon["operand_index"] == 0
    assert oracle.engine_bases(r.layout, (16, 16)) == oracle.engine_bases(plain.layout, (16, 16))
    r2 = to_gluon(a.layout, (16, 16), cls="DotOperandLayout")
    assert r2.gluon == r.gluon
    assert to_gluon(a.layout, (16, 16), cls=gl.DotOperandLayout).gluon == r.gluon


def test_like_imitates_blocked_order_and_nvmma_shared():
    blk = gl.BlockedLayout([1, 1], [32, 1], [1, 1], [0, 1])
    x = from_gluon(blk, (32, 1))
    r = to_gluon(x, (32, 1), like=blk)
    assert r.layout == blk
    assert oracle.engine_bases(r.layout, (32, 1)) == oracle.engine_bases(to_gluon(x, (32, 1)).layout, (32, 1))
    from layoutalg.nvidia.hopper.wgmma import tile

    t = tile("K", 128, "f16", (64, 64))
    assert to_gluon(t, (64, 64), like=gl.NVMMASharedLayout(128, 16)).layout == gl.NVMMASharedLayout(128, 16)
    assert to_gluon(t, (64, 64), cls="NVMMASharedLayout").gluon.kind == "NVMMASharedLayout"
    lin = to_gluon(t, (64, 64), cls="SharedLinearLayout")
    assert lin.gluon.kind == "SharedLinearLayout"
    assert np.array_equal(from_gluon(lin.gluon, (64, 64)).table(), t.table())


def test_requests_that_cannot_apply_are_errors():
    frag = wgmma_fragments.fragment("m64n64k16", "f16", "D")
    for kw, words in [
        ({"cls": "Nope"}, "not one of the classes"),
        ({"version": 4}, "2 (mma.sync) or 3"),
        ({"version": 3, "cls": "BlockedLayout"}, "applies to NVMMADistributedLayout"),
        ({"operand": 1, "cls": "NVMMASharedLayout"}, "asks for a DotOperandLayout"),
        ({"operand": 1, "version": 3}, "wgmma reads B from shared memory"),
        ({"operand": 2}, "0 (A) or 1 (B)"),
        ({"cls": "BlockedLayout", "like": gl.NVMMASharedLayout(128, 16)}, "different classes"),
        ({"version": 2, "like": gl.NVMMADistributedLayout([3, 0], [4, 1], [16, 64, 16])}, "disagree"),
        ({"cls": "NVMMASharedLayout"}, "is a shared layout, but kind='distributed'"),
    ]:
        with pytest.raises(LayoutError, match=words.replace("(", r"\(").replace(")", r"\)")):
            to_gluon(frag, (64, 64), **kw)
    blk = from_gluon(gl.BlockedLayout([1, 4], [8, 4], [4, 1], [1, 0]), (32, 16))
    with pytest.raises(LayoutError, match="no DotOperandLayout, operand=0 equals .* it is gl.BlockedLayout"):
        to_gluon(blk, (32, 16), operand=0)
    with pytest.raises(LayoutError, match="no NVMMADistributedLayout"):
        to_gluon(Layout(((32, 1, 1), 2), ((2, 0, 0), 1)), (64,), cls="NVMMADistributedLayout")
    assert gluon_layout("NVMMADistributedLayout([3, 0], [4, 1], [16, 64, 16])")["version"] == (3, 0)
