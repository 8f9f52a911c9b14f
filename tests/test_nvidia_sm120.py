"""sm_120 ``SM120_*`` and sm_103 ``SM103_MXF4_ULTRA_*`` atoms against CuTe C++ 4.2 and the PTX ISA."""

from __future__ import annotations

import pathlib
import sys

import numpy as np
import pytest

from layoutalg import LayoutError, registry
from layoutalg.nvidia.ampere import mma
from layoutalg.nvidia.blackwell.sm103 import sm103_atom, sm103_atom_names
from layoutalg.nvidia.blackwell.sm120 import SM120_FAMILIES, sm120_atom, sm120_atom_names
from layoutalg.tiled import make_tiled_mma

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import sm120_oracle  # noqa: E402

RECORDER = sm120_oracle.RECORDER


def _norm(text: str) -> str:
    import re

    return re.sub(r"_(?=-?\d)", "", text)


@pytest.fixture(scope="module")
def rec() -> dict:
    if not RECORDER.exists:
        pytest.skip(f"{RECORDER.relpath} not recorded ({RECORDER.command})")
    return RECORDER.data


def _sm120_text(a) -> str:
    M, N, K = a.shape_mnk
    opt = [("-" if x is None else str(x)) for x in (a.SFALayout, a.SFBLayout, a.ELayout)]
    return "|".join([f"({M},{N},{K})", str(a.ThrID), str(a.ALayout), str(a.BLayout), str(a.CLayout)] + opt)


def test_every_sm120_atom_equals_cute_in_text(rec):
    assert set(rec["sm120"]) == set(sm120_atom_names())
    for name, printed in rec["sm120"].items():
        assert printed, name
        assert _sm120_text(sm120_atom(name)) == _norm(printed), name


def test_every_sm103_atom_equals_cute_in_text_and_idesc(rec):
    assert set(sm103_atom_names()) <= set(rec["sm103"])
    for name, printed in rec["sm103"].items():
        a = sm103_atom(name)
        M, N, K = a.shape_mnk
        ours = "|".join([f"({M},{N},{K})", str(a.ThrID), str(a.ALayout), str(a.BLayout), str(a.CLayout)])
        head, _, word = _norm(printed).rpartition("|")
        assert ours == head, name
        assert a.idesc().word == int(word, 16), name
        assert a.issued_idesc == int(word, 16) | 1 << 31


def test_cute_refuses_what_layoutalg_refuses(rec):
    for cpp, msg in rec["refused"].items():
        assert msg, f"CuTe accepted {cpp}"
    with pytest.raises(LayoutError, match="takes A and B"):
        sm120_atom("SM120_16x8x32_TN<int8_t,int8_t,float>")
    with pytest.raises(LayoutError, match="takes A and B"):
        sm120_atom("SM120::BLOCKSCALED::SM120_16x8x64_TN_VS<e4m3,e4m3,float,ue8m0,32>")
    with pytest.raises(LayoutError, match="accumulates"):
        sm120_atom("SM120::BLOCKSCALED::SM120_16x8x32_TN_VS<e4m3,e4m3,half_t,ue8m0,32>")
    with pytest.raises(LayoutError, match="M = 256"):
        sm103_atom("SM103_MXF4_ULTRA_SS_VS<e2m1,e2m1,float,ue8m0,256,128,32,K,K>")
    with pytest.raises(LayoutError, match="N = 24"):
        sm103_atom("SM103_MXF4_ULTRA_SS_VS<e2m1,e2m1,float,ue8m0,128,24,32,K,K>")
    with pytest.raises(LayoutError, match="VS = 32 with ue4m3"):
        sm103_atom("SM103_MXF4_ULTRA_SS_VS<e2m1,e2m1,float,ue4m3,128,128,32,K,K>")


@RECORDER.live
def test_live_sample_equals_cute():
    names = RECORDER.sample(sm120_atom_names(), 3)
    out = sm120_oracle.run([sm120_oracle.sm120_snippet(sm120_atom(n).cute_cpp) for n in names])
    assert [_norm(o) for o in out] == [_sm120_text(sm120_atom(n)) for n in names]


# ---------------------------------------------------------------------------------------------
# the ISA: CuTe's SM120 layouts are the PTX fragments of mma.sync kind::f8f6f4 / mxf*
# ---------------------------------------------------------------------------------------------
def _points(L) -> np.ndarray:
    """(thread, value) -> offset as a (threads, values) array (the table is colexicographic: t + T v)."""
    t = np.asarray(L.table())
    T = int(L[0].size())
    return t.reshape(-1, T).T


def _lane_sets(pairs: np.ndarray) -> list[set]:
    """(32, V, 2) coordinates -> per lane the set of (row, col) it holds."""
    return [set(map(tuple, pairs[t].reshape(-1, 2).tolist())) for t in range(pairs.shape[0])]


@pytest.mark.parametrize("fam", list(SM120_FAMILIES))
def test_sm120_layouts_are_the_ptx_fragments(fam):
    """Every lane holds the same elements of A, B and C in CuTe's layouts as in the ISA's fragments (the
    catalog's, proven against the PTX formulas); CuTe's value order within a lane is its own."""
    f = SM120_FAMILIES[fam]
    a = sm120_atom(kind=f.kind, a_type=f.ab[0], sparse=f.sparse)
    assert a.family == fam
    M, N, K = a.shape_mnk
    get = mma.sparse_fragment if f.sparse else mma.fragment
    for op in ("A", "B", "C"):
        frag = get(f"m16n8k{K}", f.ab[0], op, kind=f.kind, **({"ctype": "f32"} if op == "C" else {}))
        rows, cols = frag.codomain[:2]
        isa = _points(frag.layout)
        isa_rc = np.stack([isa % rows, isa // rows], axis=-1)
        cute = _points({"A": a.ALayout, "B": a.BLayout, "C": a.CLayout}[op])
        r = N if op == "B" else M  # CuTe: m + 16 k (A), n + 8 k (B), m + 16 n (C); the catalog alike
        cute_rc = np.stack([cute % r, cute // r], axis=-1)
        if op == "A" and f.sparse:
            # the ISA's sparse A indexes the compressed M x K/2 matrix; CuTe's A spans the logical M x K
            # tile, two logical columns per stored value: each lane's stored (row, col) is its logical pair's half
            cute_rc = np.stack([cute_rc[..., 0], cute_rc[..., 1] // 2], axis=-1)
        assert _lane_sets(cute_rc) == _lane_sets(isa_rc), (fam, op)


@pytest.mark.parametrize("fam", [k for k, f in SM120_FAMILIES.items() if f.scaled and not f.sparse])
def test_sm120_scale_factor_layouts_are_the_ptx_scale_fragments(fam):
    """SFALayout(t, k) = m + 16 k: thread t holds the factor of row m that scales element k, i.e. the
    ISA's scale_A fragment (lane, chunk) -> m + 16 chunk at chunk = k // (K / scale_vec)."""
    f = SM120_FAMILIES[fam]
    for sf in (("ue8m0",) if f.kind == "mxf8f6f4" else ("ue8m0", "ue4m3")):
        a = sm120_atom(kind=f.kind, a_type=f.ab[0], sf_type=sf)
        V = a.scale_vec
        K = f.k
        for op, L, rows in (("A", a.SFALayout, 16), ("B", a.SFBLayout, 8)):
            isa = _points(mma.scale_fragment(f"m16n8k{K}", f.kind, op, scale_vec=V, stype=sf).layout)
            cute = _points(L)  # (32, K) -> row + rows * k
            for k in range(K):
                chunk = k // (K // V)
                want = isa[:, chunk]
                got = cute[:, k]
                assert np.array_equal(got % rows, want % rows), (fam, sf, op, k)
                assert np.array_equal(got // rows, np.full(32, k)), (fam, sf, op, k)


def test_registry_tiled_mma_and_export():
    a = registry.mma_atom("cute::SM120::BLOCKSCALED::SM120_16x8x32_TN_VS<cutlass::float_e4m3_t, "
                          "cutlass::float_e2m1_t, float, cutlass::float_ue8m0_t, 32>")
    assert a.name == "SM120::BLOCKSCALED::SM120_16x8x32_TN_VS<e4m3,e2m1,float,ue8m0,32>"
    assert registry.mma_atom("MMA_Atom<SM120_16x8x32_TN<e4m3,e4m3,float>>").shape_mnk == (16, 8, 32)
    t = make_tiled_mma(a, (2, 2, 1))
    assert tuple(t.tile_size_mnk) == (32, 16, 32)
    names = registry.atom_names("mma", vendor="nvidia", arch=("sm120", "sm103"))
    assert len(names) == len(sm120_atom_names()) + len(sm103_atom_names())
    from layoutalg.interop.cute import to_cute_cpp

    u = sm103_atom(m=256, n=128, cta_group=2)
    assert to_cute_cpp(u).atom == u.cute_cpp
    assert u.cute_cpp.startswith("cute::SM103::SM103_MXF4_ULTRA_2x1SM_SS_VS<cutlass::float_e2m1_t")


def test_keywords_and_junk():
    assert sm120_atom(kind="mxf4nvf4", a_type="e2m1", sf_type="ue4m3").vector_size == 16
    assert sm120_atom(kind="mxf4nvf4", a_type="e2m1", sparse=True).name.endswith("<e2m1,e2m1,float,ue8m0,32>")
    assert sm120_atom(kind="mxf8f6f4", a_type="e5m2", b_type="e2m3", sparse=True).vector_size == 64
    for bad in (dict(kind="f16", a_type="f16"), dict(kind=3, a_type="e4m3"), dict(kind="f8f6f4", a_type=["x"]),
                dict(kind="mxf4nvf4", a_type="e2m1", vector_size="16"), dict(kind="f8f6f4", a_type="e4m3", sf_type="ue8m0"),
                dict(kind="f8f6f4", a_type="nope"), dict(kind="f8f6f4", a_type="e4m3", sparse="yes")):
        with pytest.raises(LayoutError):
            sm120_atom(**bad)
    for bad in (None, 3, "SM120_16x8x32_TN", "SM120_16x8x32_TN<e4m3,e4m3>", "SM120::SPARSE::SM120_16x8x32_TN<e4m3,e4m3,float>",
                "SM120::BLOCKSCALED::SM120_16x8x32_TN_VS<e4m3,e4m3,float,ue8m0,x>",
                "SM120::BLOCKSCALED::SM120_16x8x32_TN_VS<e4m3,e4m3,float,ue8m0,16>"):
        with pytest.raises(LayoutError):
            sm120_atom(bad) if bad is not None else sm120_atom()
    for bad in (dict(m=128), dict(m=128, n=64, cta_group=3), dict(m="x", n=64), dict(m=128, n=64, sf_type=1),
                dict(m=128, n=64, a_type="e4m3"), dict(m=128, n=64, negate_a="x")):
        with pytest.raises(LayoutError):
            sm103_atom(**bad)
    with pytest.raises(LayoutError, match="not both"):
        sm103_atom("SM103_MXF4_ULTRA_SS_VS<e2m1,e2m1,float,ue8m0,128,64,32,K,K>", sf_type="ue4m3")
    for bad in (5, "SM103_MXF4_ULTRA_SS_VS<e2m1>", "SM103_MXF4_ULTRA_SS_VS<e2m1,e2m1,float,ue8m0,128,64,32,MN,K>",
                "SM103_MXF4_ULTRA_SS_VS<e2m1,e2m1,float,ue8m0,128,64,32,K,K,Maybe,One>"):
        with pytest.raises(LayoutError):
            sm103_atom(bad)


def test_cli_frag_atoms_and_desc_sm103(capsys, tmp_path):
    from layoutalg.cli import main

    out = tmp_path / "sfa.svg"
    assert main(["frag", "SM120::BLOCKSCALED::SM120_16x8x64_TN_VS<e2m1,e2m1,float,ue4m3,16>", "-", "SFA",
                 "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert "((2,2,8),64):((8,0,1),16)" in text and "scale_vec::4X" in text and out.exists()
    assert main(["frag", "SM103_MXF4_ULTRA_SS_VS<e2m1,e2m1,float,ue8m0,128,64,32,K,K>", "-", "C"]) == 0
    assert "(1,(128,64)):(0,(1,128))" in capsys.readouterr().out
    assert main(["atoms", "--list", "SM103_MXF4_ULTRA_2x1SM"]) == 0
    assert "SM103::SM103_MXF4_ULTRA_2x1SM_SS_VS<e2m1,e2m1,float,ue8m0,256,256,32,K,K>" in capsys.readouterr().out
    assert main(["atoms", "SM120::SPARSE::SM120_SPARSE_16x8x64_TN<e4m3,e2m1,f16>"]) == 0
    assert "((4,8),(4,4)):((32,1),(8,128))" in capsys.readouterr().out
    assert main(["frag", "SM120_16x8x32_TN<e4m3,e4m3,float>", "-", "SFA"]) != 0
    # sm_103: lbo_mode 1 -> the LBO field is the next K block's absolute start address
    assert main(["desc", "0x4010404000130080", "--target", "sm_103"]) == 0
    text = capsys.readouterr().out
    assert "lbo_mode  : 1 (absolute" in text and "0x00130 (304 B)" in text
    assert main(["desc", "0x4000404000010080", "--target", "sm_103"]) == 0
    assert "lbo_mode  : 0" in capsys.readouterr().out


def test_to_cute_dsl_builds_the_sm120_and_sm103_ops(monkeypatch):
    pytest.importorskip("cutlass.cute")
    import warnings

    import cutlass  # noqa: F401  (names in the DSL text)
    import cutlass.cute as cute  # noqa: F401
    from cutlass.base_dsl.dsl import BaseDSL
    from cutlass.cute.nvgpu import tcgen05, warp  # noqa: F401

    from layoutalg.interop.cute import to_cute_cpp, to_cute_dsl

    names = ["SM120_16x8x32_TN<e4m3,e4m3,float>", "SM120::BLOCKSCALED::SM120_16x8x32_TN_VS<e5m2,e5m2,float,ue8m0,32>",
             "SM120::BLOCKSCALED::SM120_16x8x64_TN_VS<e2m1,e2m1,float,ue8m0,32>",
             "SM120::BLOCKSCALED::SM120_16x8x64_TN_VS<e2m1,e2m1,float,ue4m3,16>",
             "SM103_MXF4_ULTRA_SS_VS<e2m1,e2m1,float,ue8m0,128,64,32,K,K>",
             "SM103_MXF4_ULTRA_2x1SM_SS_VS<e2m1,e2m1,float,ue4m3,256,128,16,K,K>"]
    for n in names:
        a = registry.mma_atom(n)
        # the DSL checks the op against the target arch it was configured for (CUTE_DSL_ARCH, read once)
        monkeypatch.setattr(BaseDSL._get_dsl().envar, "arch", "sm_103a" if n.startswith("SM103") else "sm_120a")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            op = eval(to_cute_dsl(a))  # test-side only: the library never evaluates text
        assert tuple(op.shape_mnk) == a.shape_mnk, n
        assert to_cute_cpp(a).type == f"MMA_Atom<MMA_Traits<{a.cute_cpp}>>"
    for n in ("SM120::SPARSE::SM120_SPARSE_16x8x64_TN<e4m3,e4m3,float>", "SM120_16x8x32_TN<e4m3,e2m1,float>"):
        with pytest.raises(LayoutError, match="dense atoms with one A/B type"):
            to_cute_dsl(registry.mma_atom(n))


def test_recorded_tiled_mmas_equal_cute(rec):
    from layoutalg import parse

    assert rec.get("tiled"), f"no tiled cases recorded ({RECORDER.command})"
    for c in rec["tiled"]:
        assert c["printed"], c
        C, A, B, tile = c["printed"].split("|")
        perm = None if c["permutation"] is None else tuple(c["permutation"])
        t = make_tiled_mma(registry.mma_atom(c["atom"]), tuple(c["atom_layout"]), perm)
        assert t.tile_size_mnk == tuple(int(x) for x in tile.split()), c
        for mine, theirs in ((t.get_layoutC_TV(), C), (t.get_layoutA_TV(), A), (t.get_layoutB_TV(), B)):
            assert str(mine) == _norm(theirs) and mine == parse(theirs), (c["atom"], str(mine), theirs)


def test_sm103_scale_factor_atom_equals_cute(rec):
    assert rec.get("scale_factor_atom")
    for name, printed in rec["scale_factor_atom"].items():
        s = sm103_atom(name).scale_factor_atom
        shape, _, word = _norm(printed).partition("|")
        assert f"({s.M},{s.N},{s.K})" == shape, name
        assert s.idesc().word == int(word, 16), name


def test_sm103_issued_word_reads_k96_where_idesc_allows_it():
    from layoutalg.nvidia.blackwell.idesc import IdescError, decode

    big = sm103_atom("SM103_MXF4_ULTRA_2x1SM_SS_VS<e2m1,e2m1,float,ue8m0,256,64,32,K,K>")
    d = decode(big.issued_idesc, "mxf4", cta_group=2)
    assert (d.m, d.n, d.k) == (256, 64, 96)
    # The ISA's shape table (PTX ISA 9.1, 9.7.16.2.1, Table 39 "Various combinations of .kind and shapes") lists
    # "256xNxK1 ... K1 = 96" only in the dense cta_group 2 rows of .kind::mxf4 / .kind::mxf4nvf4 (the cta_group 1
    # rows: 128xNxK, K = 64 dense, 128 sparse), and 9.7.16.2.1.1 "K = 96 is only supported for target architecture
    # sm_103a". CuTe 4.2 issues K = 96 at M = 128 (1SM and 2x1SM): decode refuses it by that rule, named, with the
    # difference from CuTe said in the message (docs/blackwell.md).
    from layoutalg.nvidia.blackwell.idesc import K96_RULE, make_instr_desc

    assert "Table 39" in K96_RULE and "sm_103a" in K96_RULE
    for g in (1, 2, None):
        with pytest.raises(IdescError, match="Table 39.*CuTe 4.2's SM103_MXF4_ULTRA") as e:
            decode(sm103_atom(m=128, n=64).issued_idesc, "mxf4", cta_group=g)
        assert f"got cta_group::{g or 2}, M=128" in str(e.value)
    # what the table allows, encoded and read back: dense, cta_group::2, M = 256, both kinds, both block sizes
    for kind, st, vs in (("mxf4", "ue8m0", 32), ("mxf4nvf4", "ue8m0", 32), ("mxf4nvf4", "ue4m3", 16)):
        w = make_instr_desc(kind, "e2m1", "e2m1", "f32", 256, 128, scale_type=st, sf_vec_size=vs, cta_group=2, k=96)
        assert w.word >> 31 == 1 and decode(w.word, kind, cta_group=2, sf_vec_size=vs).k == 96
        for bad, why in ((dict(cta_group=1, m=128), "got cta_group::1, M=128"), (dict(sparse=True), "got sparse")):
            args = dict(m=256, cta_group=2, sparse=False) | bad
            with pytest.raises(IdescError, match=why):
                make_instr_desc(kind, "e2m1", "e2m1", "f32", args["m"], 128, scale_type=st, sf_vec_size=vs,
                                cta_group=args["cta_group"], sparse=args["sparse"], k=96)
    with pytest.raises(IdescError, match="sf_vec_size"):  # Table 57: kind::mxf4 is .block32 only
        make_instr_desc("mxf4", "e2m1", "e2m1", "f32", 256, 128, scale_type="ue8m0", sf_vec_size=16, cta_group=2, k=96)
