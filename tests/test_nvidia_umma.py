"""UMMA (tcgen05.mma) atoms: names, keyword construction, legality, and CuTe's MMA_Traits (replayed + live)."""

from __future__ import annotations

import pathlib
import sys

import pytest

from layoutalg import parse
from layoutalg.errors import LayoutError
from layoutalg.nvidia.atoms import mma_atom
from layoutalg.nvidia.blackwell.umma import UMMA_FAMILIES, UMMAAtom, umma_atom, umma_atom_names
from layoutalg.tiled import make_tiled_mma

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import umma_oracle  # noqa: E402

def _recorded() -> dict:
    if umma_oracle.ATOMS.data is None:
        pytest.skip(f"{umma_oracle.ATOMS.relpath} not recorded ({umma_oracle.ATOMS.command})")
    atoms, refused = umma_oracle.load_atoms()
    return {"atoms": atoms, "refused": refused}


def _compare(name: str, printed: str) -> None:
    at = umma_atom(name)
    shape, thr, A, B, C, _idesc = printed.split("|")
    assert tuple(int(x) for x in shape.strip("()").replace("_", "").split(",")) == at.shape_mnk, name
    for mine, theirs in ((at.ThrID, thr), (at.ALayout, A), (at.BLayout, B), (at.CLayout, C)):
        assert mine == parse(theirs), (name, str(mine), theirs)
        assert str(mine) == theirs.replace("_", ""), (name, str(mine), theirs)


def test_every_recorded_atom_equals_cute():
    rec = _recorded()
    atoms = rec["atoms"]
    names = umma_atom_names()
    assert set(names) <= set(atoms)
    missing = [n for n, p in atoms.items() if p is None]
    assert not missing, f"CuTe refused atoms layoutalg accepts: {missing[:5]}"
    for n in names:
        _compare(n, atoms[n])
    # every family of CuTe 4.2 is in the sweep
    assert {n.split("<")[0] for n in names} == {"SM100_MMA_" + f for f in UMMA_FAMILIES}
    # recorded atoms outside the sweep are ones CuTe 4.2 compiles but the PTX ISA forbids (kind::f8f6f4
    # with B MN-major and N an odd multiple of 8 in its TS/sparse forms; sparse mxf4nvf4 2x1SM with M=128)
    extra = set(atoms) - set(names)
    assert len(extra) == 160
    for n in extra:
        with pytest.raises(LayoutError, match="N must be a multiple of 16|M must be 256"):
            umma_atom(n)


def test_every_atom_idesc_equals_cute():
    atoms = _recorded()["atoms"]
    for n in umma_atom_names():
        assert umma_atom(n).idesc().word == int(atoms[n].split("|")[-1], 16), n


def test_cute_refuses_what_layoutalg_refuses():
    rec = _recorded()
    for n, msg in rec["refused"].items():
        assert msg is not None, f"CuTe accepted {n}"
        with pytest.raises(LayoutError):
            umma_atom(n)


@umma_oracle.ATOMS.live
def test_live_sample_equals_cute():
    names = list(umma_atom_names()[::811])  # 11 atoms over the families, compiled each run (cached)
    res = umma_oracle.run([umma_oracle.atom_snippet(umma_atom(n).cute_cpp) for n in names])
    for n, r in zip(names, res):
        assert r, (n, r)
        _compare(n, r)


def test_name_round_trip_and_keywords():
    for n in umma_atom_names()[::97]:
        a = umma_atom(n)
        assert umma_atom(a.name) is a
        assert isinstance(a, UMMAAtom)
    a = umma_atom(kind="f16", a_type="bf16", m=128, n=256)
    assert a is umma_atom("SM100_MMA_F16BF16_SS<bfloat16_t, bfloat16_t, float, 128, 256, UMMA::Major::K, UMMA::Major::K>")
    assert (a.kind, a.cta_group, a.source, a.sparse, a.K, a.a_major) == ("f16", 1, "SS", False, 16, "K")
    b = umma_atom(kind="mxf4nvf4", a_type="e2m1", m=128, n=64, sf_type="ue4m3")
    assert (b.family, b.vector_size, b.kind, b.K, b.block_scaled) == ("MXF4_SS", 16, "mxf4nvf4", 64, True)
    s = umma_atom(kind="i8", a_type="s8", m=256, n=64, cta_group=2, sparse=True)
    assert s.name == "SM100_MMA_S8_2x1SM_SS_SPARSE<s8,s8,int32_t,256,64,K,K>" and s.K == 64
    assert mma_atom(a.name) is a  # the hook in atoms.py


@pytest.mark.parametrize("name, rule", [
    ("SM100_MMA_F16BF16_SS<bf16,bf16,float,96,128,K,K>", "M = 96"),
    ("SM100_MMA_F16BF16_2x1SM_SS<bf16,bf16,float,256,24,K,K>", "multiple of 16"),
    ("SM100_MMA_F16BF16_SS<bf16,bf16,float,128,12,K,K>", "multiple of 8"),
    ("SM100_MMA_F8F6F4_SS<e2m1,e4m3,float,128,64,MN,K>", "K-major only"),
    ("SM100_MMA_F8F6F4_SS<e4m3,e3m2,float,128,64,K,MN>", "K-major only"),
    ("SM100_MMA_MXF8F6F4_SS<e4m3,e4m3,float,ue4m3,128,64,K,K>", "ue8m0"),
    ("SM100_MMA_MXF4_SS<e2m1,e2m1,float,ue4m3,128,64,32,K,K>", "ue8m0"),
    ("SM100_MMA_F16BF16_SS<bf16,bf16,f16,128,64,K,K>", "f16 inputs"),
    ("SM100_MMA_TF32_SS<f16,f16,float,128,64,K,K>", "kind::tf32"),
    ("SM100_MMA_F16BF16_TS<bf16,bf16,float,128,64,MN,K>", "can't be transposed"),
    ("SM100_MMA_MXF4_SS<e2m1,e2m1,float,ue8m0,128,64,32,K,MN>", "K-major only"),
    ("SM100_MMA_F16BF16_SS_SCALED<bf16,bf16,float,128,64,K,K,16>", "[0, 15]"),
    ("SM100_MMA_BF16_SS<bf16,bf16,float,128,64,K,K>", "not a CuTe 4.2 UMMA atom"),
    ("SM100_MMA_F16BF16_SS<bf16,bf16,float,128,64>", "template arguments"),
])
def test_illegal_configurations_name_the_rule(name, rule):
    with pytest.raises(LayoutError, match=rule.replace("[", r"\[").replace("]", r"\]")):
        umma_atom(name)


def test_keyword_errors():
    with pytest.raises(LayoutError, match="kind"):
        umma_atom(kind="f64", a_type="f64", m=128, n=64)
    with pytest.raises(LayoutError, match="no SM100_MMA_MXF8F6F4_TS"):
        umma_atom(kind="mxf8f6f4", a_type="e4m3", m=128, n=64, source="TS")
    with pytest.raises(LayoutError, match="not block-scaled"):
        umma_atom(kind="f16", a_type="f16", m=128, n=64, sf_type="ue8m0")
    with pytest.raises(LayoutError, match="saturate"):
        umma_atom(kind="f16", a_type="f16", m=128, n=64, saturate=True)


def test_tiled_mma_of_umma_atoms():
    # 2x1SM atom tiled 1x2 along N: 4 "threads" (CTA x atom); C of thread 3 = CTA 1 of the second atom
    a = umma_atom("SM100_MMA_F16BF16_2x1SM_SS<bf16,bf16,float,256,128,K,K>")
    t = make_tiled_mma(a, (1, 2, 1))
    assert t.tile_size_mnk == (256, 256, 16)
    C = t.get_layoutC_TV()
    assert C(3, 0) == 128 + 256 * 128  # row 128 (CTA 1), column 128 (second atom)
    assert sorted(C.table().ravel().tolist()) == list(range(256 * 256))


def _tiled(c: dict):
    perm = None if c["permutation"] is None else tuple(
        None if p is None else (p if isinstance(p, int) else parse(p)) for p in c["permutation"])
    return make_tiled_mma(umma_atom(c["atom"]), tuple(c["atom_layout"]), perm)


def test_recorded_tiled_mmas_equal_cute():
    if umma_oracle.SMEM.data is None:
        pytest.skip("tests/data/cute/umma_smem.json not recorded")
    cases = umma_oracle.SMEM.data.get("tiled")
    if not cases:
        pytest.skip("no tiled cases recorded")
    for c in cases:
        assert c["printed"], c
        C, A, B, tile = c["printed"].split("|")
        t = _tiled(c)
        assert t.tile_size_mnk == tuple(int(x) for x in tile.split()), c
        for mine, theirs in ((t.get_layoutC_TV(), C), (t.get_layoutA_TV(), A), (t.get_layoutB_TV(), B)):
            assert str(mine) == theirs.replace("_", "") and mine == parse(theirs), (c, str(mine), theirs)


def test_cli_frag_and_show_know_umma_atoms(capsys, tmp_path):
    from layoutalg import cli

    name = "SM100_MMA_F16BF16_2x1SM_SS<bf16,bf16,float,256,128,K,K>"
    assert cli.main(["frag", name, "-", "C", "-o", str(tmp_path / "c.svg")]) == 0
    out = capsys.readouterr().out
    assert "(2,(128,128)):(128,(1,256))" in out and "CTA 1     : rows 128..255" in out and "verified    : yes" in out
    assert (tmp_path / "c.svg").exists()
    assert cli.main(["frag", name, "f16", "A"]) == 2  # A is bf16
    assert cli.main(["frag", name, "-", "A", "--ctype", "f32"]) == 2  # an option the atom's name fixes
    capsys.readouterr()
    assert cli.main(["show", "--tiled-mma", "SM100_MMA_F16BF16_SS<bf16,bf16,float,64,32,K,K>", "--atom-layout", "2x1x1"]) == 0
    assert "tile M x N x K = 128 x 32 x 16, 2 threads" in capsys.readouterr().out


def test_to_cute_dsl_builds_the_tcgen05_op():
    pytest.importorskip("cutlass.cute")
    import warnings

    import cutlass  # noqa: F401  (names in the DSL text)
    import cutlass.cute as cute  # noqa: F401
    from cutlass.cute.nvgpu import tcgen05  # noqa: F401

    from layoutalg.interop.cute import to_cute_cpp, to_cute_dsl

    names = ["SM100_MMA_F16BF16_2x1SM_SS<bf16,bf16,float,256,128,K,MN>", "SM100_MMA_TF32_TS<tf32,tf32,float,128,64,K,K>",
             "SM100_MMA_S8_SS<s8,s8,int32_t,128,64,K,K>", "SM100_MMA_F8F6F4_SS<e4m3,e2m1,float,128,64,K,K>",
             "SM100_MMA_MXF8F6F4_SS<e4m3,e4m3,float,ue8m0,128,64,K,K>", "SM100_MMA_MXF4_SS<e2m1,e2m1,float,ue8m0,128,64,32,K,K>",
             "SM100_MMA_MXF4_SS<e2m1,e2m1,float,ue4m3,128,64,16,K,K>"]
    for n in names:
        a = umma_atom(n)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            op = eval(to_cute_dsl(a))  # test-side only: the library never evaluates text
        assert tuple(op.shape_mnk) == a.shape_mnk, n
        assert to_cute_cpp(a).type == f"MMA_Atom<MMA_Traits<{a.cute_cpp}>>"
    with pytest.raises(LayoutError, match="dense"):
        to_cute_dsl(umma_atom("SM100_MMA_F16BF16_SS_SPARSE<bf16,bf16,float,128,64,K,K>"))


def test_no_argument_is_ignored():
    with pytest.raises(LayoutError, match="not both"):
        umma_atom("SM100_MMA_F16BF16_SS<bf16,bf16,float,128,64,K,K>", cta_group=2)
    with pytest.raises(LayoutError, match="kind::i8 takes A, B s8/u8 and C s32"):
        umma_atom(kind="i8", a_type="s8", c_type="f32", m=128, n=64)
    assert umma_atom(kind="i8", a_type="s8", m=128, n=64).c_type == "s32"


def test_cute_cpp_spellings_parse_back():
    for n in umma_atom_names()[::401]:
        a = umma_atom(n)
        assert umma_atom(a.cute_cpp) is a
        assert mma_atom(f"MMA_Atom<MMA_Traits<{a.cute_cpp}>>{{}}") is a
    # CuTe's traits form of the non-template F8F6F4 SS atoms
    a = mma_atom("SM100_MMA_F8F6F4_2x1SM_SS, cutlass::float_e4m3_t, cutlass::float_e4m3_t, float, C<256>, C<128>, "
                 "integral_constant<UMMA::Major, UMMA::Major::K>, integral_constant<UMMA::Major, UMMA::Major::MN>")
    assert a.name == "SM100_MMA_F8F6F4_2x1SM_SS<e4m3,e4m3,float,256,128,K,MN>"


try:
    from hypothesis import given, settings
    from hypothesis import strategies as st
except ImportError:  # pragma: no cover
    given = None

if given is not None:
    @settings(max_examples=100, deadline=None)
    @given(i=st.integers(0, 10 ** 6))
    def test_atom_laws(i):
        """Any atom of the sweep: name and keywords give the same atom; A/B/C are bijections onto their tiles
        with CTA c holding rows [c*M/2, (c+1)*M/2) (columns of B); the idesc decodes back to M, N, K, majors."""
        import numpy as np

        names = umma_atom_names()
        a = umma_atom(names[i % len(names)])
        kw = dict(kind=a.kind, a_type=a.a_type, b_type=a.b_type, c_type=a.c_type, m=a.M, n=a.N, a_major=a.a_major,
                  b_major=a.b_major, cta_group=a.cta_group, source=a.source, sparse=a.sparse, scale_c=a.scale_c)
        if a.block_scaled:
            kw.update(sf_type=a.sf_type, vector_size=a.vector_size if a.family.startswith("MXF4") else None)
        assert umma_atom(**kw) is a
        for L, rows, cols in ((a.ALayout, a.M, a.K), (a.BLayout, a.N, a.K), (a.CLayout, a.M, a.N)):
            t = np.asarray(L.table()).reshape(int(L[0].size()), -1, order="F")
            assert sorted(t.ravel().tolist()) == list(range(rows * cols))
            per = rows // a.cta_group
            for c in range(a.cta_group):
                assert set((t[c] % rows) // per) == {c}
        d = a.idesc()
        back = type(d).decode(d.word, a.kind, cta_group=a.cta_group)
        assert (back.m, back.n, back.k, back.a_major, back.b_major) == (a.M, a.N, a.K, a.a_major, a.b_major)
