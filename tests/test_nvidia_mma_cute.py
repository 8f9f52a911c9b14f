"""CuTe's TV layouts, compiled: ``MMA_Traits<...>::ALayout`` and the GMMA aliases printed by CuTe itself.

The expected layouts of the catalog tests come from host programs built against the CUTLASS headers
shipped with ``nvidia-cutlass`` (:mod:`layoutalg.interop.cutecpp`): every trait and alias below is
printed by CuTe in one batch, and CuTe's text is parsed back with layoutalg's own parser. Nothing is
copied by hand from either side, and nothing re-reads the C++ source.
"""

from __future__ import annotations

import re
from functools import cache

from layoutalg import Layout
from layoutalg.interop import cutecpp

#: headers beyond cutecpp's defaults that the traits below live in
HEADERS = cutecpp.DEFAULT_HEADERS + (
    "cute/atom/mma_traits_sm61.hpp",
    "cute/atom/mma_traits_sm70.hpp",
    "cute/atom/mma_traits_sm75.hpp",
    "cute/atom/mma_traits_sm89.hpp",
    "cute/atom/mma_traits_sm90.hpp",
    "cute/arch/mma_sm90_gmma_ext.hpp",
    "cute/atom/mma_traits_sm90_gmma_ext.hpp",
    "cute/atom/mma_traits_sm90_gmma_sparse.hpp",
    "cute/atom/mma_traits_sm120.hpp",
    "cute/atom/mma_traits_sm120_sparse.hpp",
)

#: the C++ spelling of each trait a test asks for by name (templated ones with concrete types; their
#: layouts do not depend on the types)
TRAITS = {
    "SM120_16x8x32_TN": "SM120_16x8x32_TN<float_e4m3_t, float_e4m3_t, float>",
    "SM120_16x8x64_TN_VS": "SM120::BLOCKSCALED::SM120_16x8x64_TN_VS<float_e2m1_t, float_e2m1_t, float, float_ue8m0_t, 32>",
    "SM120_16x8x32_TN_VS": "SM120::BLOCKSCALED::SM120_16x8x32_TN_VS<float_e4m3_t, float_e4m3_t, float, float_ue8m0_t, 32>",
    "SM120_SPARSE_16x8x64_TN": "SM120::SPARSE::SM120_SPARSE_16x8x64_TN<float_e4m3_t, float_e4m3_t, float>",
    "SM120_SPARSE_16x8x128_TN_VS":
        "SM120::BLOCKSCALED::SPARSE::SM120_SPARSE_16x8x128_TN_VS<float_e2m1_t, float_e2m1_t, float, float_ue8m0_t, 32>",
}
ALIASES = {
    "SM70_QuadPair": "SM70_QuadPair",
    "CLayout_64xN": "SM90::GMMA::CLayout_64xN<{}>",
    "ELayout_64x16": "SM90::GMMA::ELayout_64x16",
    "ELayout_64x32": "SM90::GMMA::ELayout_64x32",
    "ELayout_64x64": "SM90::GMMA::ELayout_64x64",
    "ALayout_64x8": "SM90::GMMA::ALayout_64x8",
    "ALayout_64x16": "SM90::GMMA::ALayout_64x16",
    "ALayout_64x32": "SM90::GMMA::ALayout_64x32",
}


def header_dir() -> str | None:
    """None when CuTe programs cannot be built here (no compiler or headers), else the CuTe version."""
    return None if cutecpp.available() is not None else cutecpp.cute_version()


@cache
def _printed() -> dict[str, str]:
    """Every requested C++ type, printed by CuTe (one batch, cached on disk by cutecpp)."""
    exprs = sorted(_all_requests())
    out = cutecpp.run_snippets([f"print({e}{{}});" for e in exprs], headers=HEADERS)
    return dict(zip(exprs, out))


def _all_requests() -> set[str]:
    reqs = set()
    for t, *_ in SM80_ATOMS:
        for w in ("ALayout", "BLayout", "CLayout"):
            reqs.add(_trait_expr(t, w))
    for acc in ("F16F16F16F16", "F32F16F16F32"):
        for suffix in ("TN", "NT", "NN", "TT"):
            for w in ("ALayout", "BLayout", "CLayout"):
                reqs.add(_trait_expr(f"SM70_8x8x4_{acc}_{suffix}", w))
    for t in TRAITS:
        for w in ("ALayout", "BLayout", "CLayout", "SFALayout", "SFBLayout", "ELayout"):
            if (t.startswith("SM120_SPARSE") and w.startswith("SF")) or (not t.startswith("SM120_SPARSE") and w == "ELayout"):
                continue
            if t == "SM120_16x8x32_TN" and w.startswith("SF"):
                continue
            reqs.add(_trait_expr(t, w))
    for spelling in ALIASES.values():
        if "{}" in spelling:
            for n in (8, 16, 24, 64, 96, 128, 192, 256):
                reqs.add(spelling.format(n))
        else:
            reqs.add(spelling)
    return reqs


def _trait_expr(trait: str, which: str) -> str:
    return f"typename MMA_Traits<{TRAITS.get(trait, trait)}>::{which}"


def _layout(text: str) -> Layout:
    from layoutalg import LayoutError, parse

    t = re.sub(r"(?<![A-Za-z0-9])_(?=-?\d)", "", text)
    try:
        return parse(t)
    except LayoutError:
        # CuTe's 16x8x128 b1 ALayout nests one stride too deep (Stride<Stride<_16,_8>> for
        # Shape<_32,_2>): not congruent, so unwrap the 1-tuple stride, as CuTe's evaluation does.
        shape_txt, stride_txt = t.split(":")
        fixed = stride_txt.replace("((16,8))", "(16,8)")
        return parse(shape_txt + ":" + fixed)


def cute_layout(trait: str, which: str) -> Layout:
    """Layout ``which`` (``"ALayout"``, ``"SFALayout"``, ...) of MMA_Traits<``trait``>, as CuTe prints it."""
    text = _printed()[_trait_expr(trait, which)]
    assert not isinstance(text, cutecpp.CompileFailure), (trait, which, text)
    return _layout(text)


def cute_alias(name: str, *args) -> Layout:
    """Layout of a CuTe alias (``SM70_QuadPair``, ``CLayout_64xN`` with ``args``), as CuTe prints it."""
    spelling = ALIASES[name].format(*args)
    text = _printed()[spelling]
    assert not isinstance(text, cutecpp.CompileFailure), (name, args, text)
    return _layout(text)


# ---------------------------------------------------------------------------------------------
# The tests: our hand-written TV layouts equal CuTe's as functions (thread, value) -> index.
# ---------------------------------------------------------------------------------------------
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from layoutalg.nvidia.ampere.mma import fragment, scale_fragment, sparse_fragment  # noqa: E402

pytestmark = pytest.mark.skipif(header_dir() is None, reason=str(cutecpp.available()))


def _ours(f):
    T, V = f.verify_domain()
    t, v = np.meshgrid(np.arange(T), np.arange(V), indexing="ij")
    return f.index(t, v)


def _theirs(L, T, V, thread_of=None):
    out = np.empty((T, V), dtype=np.int64)
    for t in range(T):
        for v in range(V):
            out[t, v] = L(t if thread_of is None else thread_of[t], v)
    return out


# (trait, shape, dtype, ctype) -- one per atom CuTe provides for mma.sync
SM80_ATOMS = [
    ("SM75_16x8x8_F32F16F16F32_TN", "m16n8k8", "f16", "f32"),
    ("SM80_16x8x8_F16F16F16F16_TN", "m16n8k8", "f16", "f16"),
    ("SM80_16x8x16_F16F16F16F16_TN", "m16n8k16", "f16", "f16"),
    ("SM80_16x8x16_F32F16F16F32_TN", "m16n8k16", "f16", "f32"),
    ("SM80_16x8x8_F32BF16BF16F32_TN", "m16n8k8", "bf16", "f32"),
    ("SM80_16x8x16_F32BF16BF16F32_TN", "m16n8k16", "bf16", "f32"),
    ("SM80_16x8x4_F32TF32TF32F32_TN", "m16n8k4", "tf32", "f32"),
    ("SM80_16x8x8_F32TF32TF32F32_TN", "m16n8k8", "tf32", "f32"),
    ("SM80_8x8x4_F64F64F64F64_TN", "m8n8k4", "f64", "f64"),
    ("SM90_16x8x4_F64F64F64F64_TN", "m16n8k4", "f64", "f64"),
    ("SM90_16x8x8_F64F64F64F64_TN", "m16n8k8", "f64", "f64"),
    ("SM90_16x8x16_F64F64F64F64_TN", "m16n8k16", "f64", "f64"),
    ("SM75_8x8x16_S32S8S8S32_TN", "m8n8k16", "s8", "s32"),
    ("SM80_8x8x16_S32S8S8S32_TN", "m8n8k16", "s8", "s32"),
    ("SM80_16x8x16_S32S8S8S32_TN", "m16n8k16", "s8", "s32"),
    ("SM80_16x8x32_S32U8U8S32_TN", "m16n8k32", "u8", "s32"),
    ("SM80_8x8x32_S32S4S4S32_TN", "m8n8k32", "s4", "s32"),
    ("SM80_16x8x32_S32S4S4S32_TN", "m16n8k32", "s4", "s32"),
    ("SM80_16x8x64_S32U4U4S32_TN", "m16n8k64", "u4", "s32"),
    ("SM80_8x8x128_S32U1U1S32_TN_XORPOPC", "m8n8k128", "b1", "s32"),
    ("SM80_16x8x128_S32U1U1S32_TN_XORPOPC", "m16n8k128", "b1", "s32"),
    ("SM80_16x8x256_S32U1U1S32_TN_XORPOPC", "m16n8k256", "b1", "s32"),
    ("SM89_16x8x32_F32E4M3E4M3F32_TN", "m16n8k32", "e4m3", "f32"),
    ("SM89_16x8x32_F16E5M2E5M2F16_TN", "m16n8k32", "e5m2", "f16"),
]


@pytest.mark.parametrize("trait,shape,dtype,ctype", SM80_ATOMS, ids=[a[0] for a in SM80_ATOMS])
@pytest.mark.parametrize("operand", ["A", "B", "C"])
def test_equals_cute_tv_layout(trait, shape, dtype, ctype, operand):
    if (trait, operand) == ("SM80_16x8x32_S32S4S4S32_TN", "B"):
        pytest.skip("CuTe's layout is not injective here; see test_cute_sm80_16x8x32_s4_blayout_is_not_a_bijection")
    f = fragment(shape, dtype, operand, ctype=ctype)
    L = cute_layout(trait, f"{operand}Layout")
    assert L.size() == f.num_threads * f.num_values
    assert (_ours(f) == _theirs(L, *f.verify_domain())).all(), (trait, operand, str(f.layout), L)


def test_f8f6f4_and_blockscaled_equal_cute_sm120():
    for dtype in ("e4m3", "e3m2", "e2m1"):
        for op in "ABC":
            f = fragment("m16n8k32", dtype, op, kind="f8f6f4")
            assert (_ours(f) == _theirs(cute_layout("SM120_16x8x32_TN", f"{op}Layout"), *f.verify_domain())).all()
    for op in "ABC":
        f = fragment("m16n8k64", "e2m1", op, kind="mxf4")
        assert (_ours(f) == _theirs(cute_layout("SM120_16x8x64_TN_VS", f"{op}Layout"), *f.verify_domain())).all()


@pytest.mark.parametrize(
    "trait,shape,kind,vec", [("SM120_16x8x64_TN_VS", "m16n8k64", "mxf4nvf4", 4),
                             ("SM120_16x8x64_TN_VS", "m16n8k64", "mxf4", 2),
                             ("SM120_16x8x32_TN_VS", "m16n8k32", "mxf8f6f4", 1)]
)
def test_scale_factor_rows_equal_cute_sm120(trait, shape, kind, vec):
    # CuTe maps (thread, k) over the M x K (resp. N x K) scale tensor, one entry per k: the scale
    # column of k is k // (K / vec). Ours maps (lane, scale column). Rows (cols) must agree everywhere.
    M, N, K = int(shape[1:3]), 8, int(shape.split("k")[1])
    for op, extent in (("A", M), ("B", N)):
        sf = scale_fragment(shape, kind, op, scale_vec=vec)
        L = cute_layout(trait, f"SF{op}Layout")
        for t in range(32):
            for k in range(K):
                v = k // (K // vec)
                mine = int(sf.index(t, v))
                assert mine % extent == L(t, k) % extent, (op, t, k)
                assert mine // extent == v


def test_sparse_b_equals_cute_sm120():
    for dtype in ("e4m3", "e2m1"):
        f = sparse_fragment("m16n8k64", dtype, "B", kind="f8f6f4")
        assert (_ours(f) == _theirs(cute_layout("SM120_SPARSE_16x8x64_TN", "BLayout"), *f.verify_domain())).all()


def test_sparse_a_chunks_cover_cute_sm120_full_a():
    # CuTe's sparse A layout is over the *uncompressed* 16x64 A (two logical k per stored value);
    # each of our compressed values must come from a column span CuTe gives the same lane and row.
    f = sparse_fragment("m16n8k64", "e4m3", "A", kind="f8f6f4")
    L = cute_layout("SM120_SPARSE_16x8x64_TN", "ALayout")
    for t in range(32):
        cute_cells = {(L(t, v) % 16, L(t, v) // 16) for v in range(L.shape[1][0] * 4)}
        for i in range(f.num_values):
            row, _ = f.coords(t, i)
            lo, hi = f.column_range(t, i)
            assert all((row, k) in cute_cells for k in range(lo, hi + 1)), (t, i)


@pytest.mark.parametrize("suffix,alayout,blayout", [("TN", "row", "col"), ("NT", "col", "row"),
                                                     ("NN", "col", "col"), ("TT", "row", "row")])
@pytest.mark.parametrize("acc", ["F16F16F16F16", "F32F16F16F32"])
def test_m8n8k4_quadpair_equals_cute_sm70(suffix, alayout, blayout, acc):
    # CuTe's SM70 atoms cover one quad pair: logical thread t -> lane SM70_QuadPair(t) =
    # (4,2):(1,16), i.e. computation 0. Our layout's computation 0 must be CuTe's atom.
    trait = f"SM70_8x8x4_{acc}_{suffix}"
    lanes = [cute_alias("SM70_QuadPair")(t) for t in range(8)]
    ctype = "f16" if acc.startswith("F16") else "f32"
    for op, f in (("A", fragment("m8n8k4", "f16", "A", alayout=alayout)),
                  ("B", fragment("m8n8k4", "f16", "B", blayout=blayout)),
                  ("C", fragment("m8n8k4", "f16", "C", ctype=ctype))):
        L = cute_layout(trait, f"{op}Layout")
        for t, lane in enumerate(lanes):
            for v in range(f.num_values):
                assert f.batch_index(lane, v) == 0
                assert int(f.index(lane, v)) == L(t, v), (trait, op, t, v)


def test_cute_sm80_16x8x32_s4_blayout_is_not_a_bijection():
    # A finding, kept as a test: CUTLASS's BLayout for SM80_16x8x32_S32S4S4S32_TN is
    # ((4,8),8):((32,1),8) over the 8x32 B (index n + 8*k), i.e. k = 4*threadID_in_group + i.
    # Lanes 0 and 1 would then both hold k = 4..7 of column 0, and k = 28..31 nobody. The PTX
    # formula (row = threadID_in_group*8 + i) needs thread stride 64, which is what we have.
    L = cute_layout("SM80_16x8x32_S32S4S4S32_TN", "BLayout")
    image = {L(t, v) for t in range(32) for v in range(8)}
    assert len(image) < 256
    f = fragment("m16n8k32", "s4", "B")
    assert sorted(int(x) for x in _ours(f).ravel()) == list(range(256))
    assert f.coords(1, 0) == f.formula.evaluate(1, 0) == (8, 0)  # lane 1: threadID_in_group 1
