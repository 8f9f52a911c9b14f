"""explain(): formulas for layouts, swizzled tiles, fragments and partitions, proven and short.

The oracles are independent of explain's own search: the PTX ISA's formulas as transcribed in
``layoutalg.nvidia.common.ptx_formulas`` (evaluated with numpy, compared on every (lane, i)), the
layouts' own tables, and hand-written expected formulas for the textbook cases.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import sympy
from hypothesis import given
from hypothesis import strategies as st

import layoutalg
from layoutalg import ComposedLayout, Layout, Swizzle, parse
from layoutalg.cli import catalog_items
from layoutalg.errors import LayoutError
from layoutalg.explain import Explanation, count_ops, explain
from layoutalg.nvidia.ampere import ldmatrix, mma
from layoutalg.nvidia.hopper import wgmma, wgmma_fragments
from layoutalg.nvidia.common.ptx_formulas import FORMULAS, i, lane
from layoutalg.symbolic import bitand, bitxor, lambdify_numpy, shr

from strategies import compact_layouts, layouts


def _evaluate(e: Explanation, extents) -> list[np.ndarray]:
    grids = np.indices(tuple(extents), dtype=np.int64)
    f = lambdify_numpy(e.inputs, e.exprs)
    return [np.broadcast_to(np.asarray(v, dtype=np.int64), tuple(extents)) for v in f(*grids)]


# ------------------------------------------------------------------------------------------
# the whole catalog: proven, equal to the ISA's formula everywhere, never longer than it
# ------------------------------------------------------------------------------------------
CATALOG = [b() for _, _, b in catalog_items()]


def test_every_catalog_entry_is_explained_proven_and_no_longer_than_the_isa():
    longer = []
    for F in CATALOG:
        e = explain(F)
        assert e.verdict and e.verdict.proven, (F.name, e.verdict)
        assert e.verdict.method in ("symbolic", "exhaustive")
        assert e.outputs == tuple(F.formula.names)
        # independent oracle: the ISA's formula, evaluated on every (lane, i)
        T, V = F.verify_domain()
        ln, iv = np.meshgrid(np.arange(T), np.arange(V), indexing="ij")
        want = F.formula.evaluate(ln, iv)
        got = _evaluate(e, (T, V))
        for name, g, w in zip(e.outputs, got, want):
            assert np.array_equal(g, w), (F.name, name)
        for name, (ours, isa) in e.per_output_ops().items():
            if ours > isa:
                longer.append((F.name, name, ours, isa, e.formula(name)))
        assert e.ops <= e.isa_ops
    assert not longer, longer[:5]


@pytest.mark.parametrize(
    "frag, expected",
    [
        # the PTX ISA's own formulas, rewritten by hand in the shortest C form
        (lambda: mma.fragment("m16n8k8", "f16", "C"),
         {"row": "groupID + 8 * (i >> 1)", "col": "2 * threadID_in_group + (i & 1)"}),
        (lambda: mma.fragment("m16n8k16", "f16", "A"),
         {"row": "groupID + 4 * (i & 2)", "col": "2 * threadID_in_group + (i & 1) + 8 * (i >> 2)"}),
        (lambda: mma.fragment("m8n8k4", "f64", "A"), {"row": "groupID", "col": "threadID_in_group"}),
        (lambda: mma.fragment("m16n8k4", "tf32", "A"), {"row": "groupID + 8 * i", "col": "threadID_in_group"}),
        (lambda: mma.fragment("m8n8k4", "f16", "A", alayout="row"),
         {"computation": "(lane >> 2) & 3", "row": "threadID_in_group + 4 * (lane >> 4)", "col": "i"}),
        (lambda: ldmatrix.fragment(4, trans=True),
         {"matrix": "i >> 1", "row": "2 * threadID_in_group + (i & 1)", "col": "groupID"}),
        (lambda: wgmma_fragments.fragment("m64n16k16", "f32", "D"),
         {"row": "groupID + 16 * (tid >> 5) + 4 * (i & 2)", "col": "2 * threadID_in_group + (i & 1) + 8 * (i >> 2)"}),
    ],
)
def test_textbook_fragments(frag, expected):
    e = explain(frag())
    for name, text in expected.items():
        assert e.formula(name) == f"{name} = {text}"


def test_helpers_are_defined_in_the_text():
    e = explain(mma.fragment("m16n8k16", "bf16", "B"))
    assert ("groupID", "lane >> 2") in e.helpers and ("threadID_in_group", "lane % 4") in e.helpers
    w = explain(wgmma_fragments.fragment("m64n8k16", "f16", "A"))
    assert ("groupID", "(tid % 32) >> 2") in w.helpers
    assert "groupID = (tid % 32) >> 2" in w.text and "proven" in w.text


# ------------------------------------------------------------------------------------------
# swizzled tiles: the xor form
# ------------------------------------------------------------------------------------------
def test_sw128_tile_states_the_xor_form():
    e = explain(wgmma.tile("K", 128, "bf16", (64, 64)))
    assert e.formula() == "offset = 64 * row + 8 * ((col >> 3) ^ (row % 8)) + col % 8"
    r, c = sympy.symbols("row col", integer=True, nonnegative=True)
    want = 64 * r + 8 * bitxor(shr(c, 3), sympy.Mod(r, 8)) + sympy.Mod(c, 8)
    assert sympy.simplify(e.exprs[0].subs({e.inputs[0]: r, e.inputs[1]: c}) - want) == 0


@pytest.mark.parametrize("major", ["K", "MN"])
@pytest.mark.parametrize("swz", [0, 32, 64, 128])
@pytest.mark.parametrize("dtype", ["tf32", "bf16", "e4m3"])
def test_every_gmma_atom_and_tile(major, swz, dtype):
    for L in (wgmma.atom(major, swz, dtype), wgmma.tile(major, swz, dtype, (128, 128))):
        e = explain(L)
        assert e.verdict and e.verdict.proven
        (got,) = _evaluate(e, (L.inner[0].size(), L.inner[1].size()))
        assert np.array_equal(got, L.grid())
        assert ("^" in e.texts[0]) == (swz != 0), e.text


def test_xor_of_a_sum_when_the_swizzle_moves_two_fields():
    e = explain("Sw<2,5,3> o (64,64):(64,1)")  # the fp8 transpose's synthesised layout
    assert e.formula() == "offset = (64 * row + col) ^ (8 * (row & 12))" and e.methods == ("xor of a sum",)
    assert e.verdict.method == "symbolic"


def test_nested_swizzles_and_padding():
    inner = Layout((32, 64), (72, 1))
    e = explain(inner)
    assert e.formula() == "offset = 72 * row + col"
    two = ComposedLayout(Swizzle(1, 3, 5), 0, ComposedLayout(Swizzle(2, 4, 3), 0, Layout((32, 64), (64, 1))))
    e2 = explain(two)
    assert e2.verdict
    (got,) = _evaluate(e2, (32, 64))
    assert np.array_equal(got, two.grid())


# ------------------------------------------------------------------------------------------
# random layouts: the formula is the layout
# ------------------------------------------------------------------------------------------
@given(layouts(max_leaves=4, max_size=1024))
def test_random_layouts(L):
    e = explain(L)
    assert e.verdict
    ext = [L.size()] if not isinstance(L.shape, tuple) or len(L) == 1 else [L[k].size() for k in range(len(L))]
    (got,) = _evaluate(e, ext)
    want = np.asarray(L(*np.indices(tuple(ext))), dtype=np.int64) if len(ext) > 1 else L.table()
    assert np.array_equal(got, want)


@given(compact_layouts(max_leaves=4, max_size=1024, leaf=st.sampled_from([2, 4, 8])),
       st.integers(1, 3), st.integers(0, 3), st.integers(3, 5))
def test_random_swizzled_layouts(L, B, M, S):
    C = ComposedLayout(Swizzle(B, M, S), 0, L)
    e = explain(C)
    assert e.verdict
    ext = [L.size()] if len(L) == 1 else [L[k].size() for k in range(len(L))]
    (got,) = _evaluate(e, ext)
    assert np.array_equal(got.reshape(-1, order="F"), C.table())


# ------------------------------------------------------------------------------------------
# partitions, case splits, generic objects
# ------------------------------------------------------------------------------------------
def test_tiled_fragment_partition():
    tf = mma.tile_fragment(mma.fragment("m16n8k16", "f16", "A"), (64, 32), (2, 1))
    e = explain(tf)
    assert e.outputs == ("row", "col") and e.verdict
    rows, cols = _evaluate(e, (tf.num_threads, tf.num_values))
    for t in (0, 5, 37, 63):
        assert [(int(r), int(c)) for r, c in zip(rows[t], cols[t])] == tf.elements(t)


class _CaseSplit:
    """row = i < 4 ? lane : 3*lane + i -- additive only on each half of i."""

    def verify_domain(self):
        return (32, 8)

    def verify_eval(self, ln, iv):
        return (np.where(iv < 4, ln, 3 * ln + iv), ln ^ 5)

    def __repr__(self):
        return "CaseSplit"


def test_case_split_and_xor_of_a_constant():
    e = explain(_CaseSplit(), names=("lane", "i"))
    assert e.methods == ("case split", "xor")
    assert e.texts[0].startswith("i < 4 ? lane : ")
    assert e.texts[1] == "lane ^ 5"
    got = _evaluate(e, (32, 8))
    ln, iv = np.indices((32, 8))
    assert np.array_equal(got[0], np.where(iv < 4, ln, 3 * ln + iv))


def test_names_rename_inputs_and_outputs():
    e = explain("(4,8):(8,1)", names=("m", "k"))
    assert e.formula() == "offset = 8 * m + k"
    f = explain(mma.fragment("m16n8k8", "f16", "C"), names={"row": "m", "col": "n"})
    assert f.outputs == ("m", "n") and f.formula("m") == "m = groupID + 8 * (i >> 1)"


def test_count_ops_by_hand():
    assert count_ops(lane) == 0
    assert count_ops(shr(lane, 2) + 8) == 2
    assert count_ops(sympy.Mod(lane, 4) * 2 + bitand(i, 1)) == 4
    assert count_ops(sympy.Piecewise((shr(lane, 2), i < 2), (shr(lane, 2) + 8, True))) == 5
    assert count_ops(sympy.floor(lane / 4)) == 1
    assert count_ops(-lane + 3) == 1
    assert count_ops(FORMULAS["m8n8k4.f64.C"].outputs) == 5


@pytest.mark.parametrize(
    "bad, msg",
    [(42, "is not a Layout"), ("(4,n):(1,4)", "symbolic"), ("(4,4):(1,4", "parse")],
)
def test_bad_input(bad, msg):
    with pytest.raises(LayoutError, match=msg):
        explain(bad)


def test_huge_domain_is_refused_before_work():
    with pytest.raises(LayoutError, match="more than"):
        explain(Layout((1 << 12, 1 << 12), (1 << 12, 1)))
    assert explain("1:0").formula() == "offset = 0"


def test_bad_names():
    with pytest.raises(LayoutError, match="sequence"):
        explain("(4,8):(8,1)", names=42)
    with pytest.raises(LayoutError, match="identifiers"):
        explain("(4,8):(8,1)", names=("a",))
    with pytest.raises(LayoutError, match="neither inputs"):
        explain("(4,8):(8,1)", names={"zzz": "a"})
    with pytest.raises(LayoutError, match="no output"):
        explain("(4,8):(8,1)").formula("nope")


def test_unexplainable_generic_object_is_an_error():
    class Sq:
        def verify_domain(self):
            return (8,)

        def verify_eval(self, x):
            return (x * x % 7,)

    with pytest.raises(LayoutError, match="no formula found"):
        explain(Sq())


def test_exported_lazily_from_the_package():
    code = ("import sys, layoutalg; assert 'layoutalg.explain' not in sys.modules; "
            "assert 'layoutalg.synth' not in sys.modules; assert 'layoutalg.nvidia' not in sys.modules; "
            "f = layoutalg.explain; import layoutalg.explain as m; "
            "assert layoutalg.explain is f and callable(m); print(m('(2,2):(2,1)').formula())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "offset = 2 * row + col"
    assert layoutalg.explain(parse("8:1")).formula() == "offset = i"


# ------------------------------------------------------------------------------------------
# the docs' table of the seed figures is what explain says now
# ------------------------------------------------------------------------------------------
SEEDS = [
    ("Figure 46", "m8n8k4 .f16 A (.row)", lambda: mma.fragment("m8n8k4", "f16", "A", alayout="row")),
    ("Figure 47", "m8n8k4 .f16 A (.col)", lambda: mma.fragment("m8n8k4", "f16", "A", alayout="col")),
    ("Figure 48", "m8n8k4 .f16 B (.row)", lambda: mma.fragment("m8n8k4", "f16", "B", blayout="row")),
    ("Figure 49", "m8n8k4 .f16 B (.col)", lambda: mma.fragment("m8n8k4", "f16", "B", blayout="col")),
    ("Figure 50", "m8n8k4 .f16 C/D (.f16)", lambda: mma.fragment("m8n8k4", "f16", "C", ctype="f16")),
    ("Figures 51, 52", "m8n8k4 .f16 C/D (.f32)", lambda: mma.fragment("m8n8k4", "f16", "C", ctype="f32")),
    ("Figure 53", "m8n8k4 .f64 A", lambda: mma.fragment("m8n8k4", "f64", "A")),
    ("Figure 54", "m8n8k4 .f64 B", lambda: mma.fragment("m8n8k4", "f64", "B")),
    ("Figure 55", "m8n8k4 .f64 C/D", lambda: mma.fragment("m8n8k4", "f64", "C")),
    ("Figures 140, 141", "sparse m16n8k128 .s4 A", lambda: mma.sparse_fragment("m16n8k128", "s4", "A")),
    ("9.7.14.6.2.8", "sparse m16n8k128 .s4 B", lambda: mma.sparse_fragment("m16n8k128", "s4", "B")),
    ("9.7.14.6.2.8", "sparse m16n8k128 .s4 C/D", lambda: mma.sparse_fragment("m16n8k128", "s4", "C")),
]


def seed_rows() -> list[str]:
    """The rows of docs/explain.md's table (``python tests/test_explain.py`` prints them)."""
    from layoutalg.explain import c_text
    from layoutalg.nvidia.common.ptx_formulas import groupID, threadID_in_group

    names = {groupID: "groupID", threadID_in_group: "threadID_in_group"}
    out = []
    for fig, name, build in SEEDS:
        e = explain(build())
        for k, (o, mine, isa) in enumerate(zip(e.outputs, e.texts, e.isa_exprs)):
            cells = [fig if k == 0 else "", name if k == 0 else "", o, f"`{c_text(isa, names)}`", str(count_ops(isa)),
                     f"`{mine}`", str(count_ops(e.exprs[k]))]
            out.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return out


def test_docs_seed_table_is_fresh_and_never_longer():
    import pathlib

    doc = (pathlib.Path(__file__).resolve().parents[1] / "docs" / "explain.md").read_text()
    for row in seed_rows():
        assert row in doc, row
        ours, isa = int(row.split("|")[-2]), int(row.split("|")[-4])
        assert ours <= isa, row


if __name__ == "__main__":
    print("\n".join(seed_rows()))


def test_a_tiled_mma_partition_is_explained():
    # thread 5 of a 2x2-warp m16n8k16 tiling: its A partition of a row-major 32x16 tile, as a formula
    from layoutalg.nvidia.atoms import mma_atom
    from layoutalg.tensor import make_tensor
    from layoutalg.tiled import make_tiled_mma

    mma = make_tiled_mma(mma_atom("SM80_16x8x16_F32F16F16F32_TN"), (2, 2, 1))
    T = make_tensor(Layout((32, 16), (16, 1)))
    for t in (0, 5, 77):
        part = mma.get_slice(t).partition_A(T)
        e = explain(part)
        assert e.verdict and e.verdict.proven
        first = {s: 0 for s in e.inputs[1:]}  # the partition is ((2,2,2),1,1): the value mode carries it
        got = [int(e.exprs[0].subs({e.inputs[0]: i, **first})) for i in range(8)]
        assert got == [part.offset + part.layout(i) for i in range(8)]
