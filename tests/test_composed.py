"""ComposedLayout: evaluation, CuTe's algebra rules, inverses, units, printing and parsing."""

import numpy as np
import pycute
import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

import layoutalg.algebra as alg
import layoutalg.layout as lay
from layoutalg import parse
from layoutalg.composed import ComposedLayout, parse_composed
from layoutalg.errors import LayoutError
from layoutalg.layout import Layout
from layoutalg.swizzle import Swizzle

SW128 = parse_composed("Sw<3,4,3> o _0 o (8,64):(64,1)")  # 8 rows of 128 bytes, 1-byte elements


def brute(C, n=None):
    """C(i) via the definition outer(offset + inner(i)), one point at a time."""
    n = C.size() if n is None else n
    return [C.outer(C.offset + C.inner(i)) for i in range(n)]


def test_eval_matches_pycute():
    ref = pycute.ComposedLayout(pycute.Swizzle(3, 4, 3), 0, pycute.Layout((8, 64), (64, 1)))
    assert SW128.table().tolist() == [ref(i) for i in range(512)]
    assert SW128(3, 17) == ref(3, 17)
    assert SW128.grid().shape == (8, 64) and SW128.grid()[3, 17] == ref(3, 17)


def test_structure():
    C = SW128
    assert C.shape == (8, 64) and C.size() == 512 and C.cosize() == 512
    assert C.rank() == len(C) == 2 and C.depth() == 1
    assert lay.size(C) == 512 and lay.cosize(C) == 512 and lay.rank(C) == 2 and lay.depth(C) == 1
    assert C[1] == ComposedLayout(Swizzle(3, 4, 3), 0, Layout(64, 1))
    assert hash(C) == hash(parse_composed(str(C)))
    with pytest.raises(AttributeError):
        C.offset = 3
    with pytest.raises(LayoutError):
        ComposedLayout(3, 0, Layout(4))
    with pytest.raises(LayoutError):
        ComposedLayout(Swizzle(1, 1, 1), 0, Swizzle(1, 1, 1))


def test_offset_and_layout_outer():
    C = ComposedLayout(Layout((4, 4), (4, 1)), 3, Layout(8, 1))
    assert C.table().tolist() == [Layout((4, 4), (4, 1))(3 + i) for i in range(8)]
    assert str(C) == "(4,4):(4,1) o _3 o 8:1"
    assert parse_composed(str(C)) == C


tilers = st.sampled_from([
    Layout((4, 8), (8, 1)), Layout(16, 2), Layout((2, 2), (1, 64)), Layout(((2, 4), 8), ((64, 1), 8)),
])


@given(tilers, st.sampled_from([Swizzle(3, 4, 3), Swizzle(2, 0, 4), Swizzle(1, 3, -2)]), st.integers(0, 64))
@settings(max_examples=60, deadline=None)
def test_composition_law(T, sw, off):
    C = ComposedLayout(sw, off, Layout((8, 64), (64, 1)))
    R = alg.composition(C, T)
    assert isinstance(R, ComposedLayout)
    assert [R(i) for i in range(T.size())] == [C(T(i)) for i in range(T.size())]


def test_swizzle_composition_builds_composed():
    L = Layout((8, 8), (8, 1))
    C = alg.composition(Swizzle(3, 0, 3), L)
    assert ComposedLayout(Swizzle(3, 0, 3), 0, L) == C
    assert alg.composition(Swizzle(0, 4, 3), L) == L  # CuTe drops the identity swizzle
    # a layout on the left of a composed layout
    R = alg.composition(Layout(512, 2), C)
    assert [R(i) for i in range(64)] == [2 * C(i) for i in range(64)]


@pytest.mark.parametrize("op,tiler", [
    ("logical_divide", (Layout(2, 1), Layout(8, 1))), ("zipped_divide", (Layout(2, 1), Layout(8, 1))),
    ("tiled_divide", (Layout(2, 1), Layout(8, 1))), ("flat_divide", (Layout(2, 1), Layout(8, 1))),
    ("logical_product", Layout(2, 1)), ("zipped_product", Layout(2, 1)), ("tiled_product", Layout(2, 1)),
    ("flat_product", Layout(2, 1)), ("blocked_product", Layout((2, 1))), ("raked_product", Layout((2, 1))),
])
def test_divides_products_act_on_inner(op, tiler):
    C = SW128
    R = getattr(alg, op)(C, tiler)
    assert isinstance(R, ComposedLayout) and R.outer == C.outer
    plain = getattr(alg, op)(C.inner, tiler)
    assert R.inner == plain
    idx = np.arange(plain.size())
    assert np.array_equal(R(idx), C.outer(plain(idx)))


def test_coalesce_and_shape_queries():
    C = ComposedLayout(Swizzle(1, 1, 1), 0, Layout((2, 4), (1, 2)))
    K = alg.coalesce(C)
    assert ComposedLayout(Swizzle(1, 1, 1), 0, Layout(8, 1)) == K
    assert K.table().tolist() == C.table().tolist()
    assert lay.cosize(C) == 8


@pytest.mark.parametrize("text", [
    "Sw<3,4,3> o _0 o (8,64):(64,1)", "Sw<2,4,3> o _0 o (64,8):(1,64)", "Sw<1,2,3> o _0 o (8,8):(8,1)",
    "Sw<3,3,3> o _0 o ((8,2),(8,4)):((64,512),(1,8))", "Sw<0,4,3> o _0 o (4,8):(8,1)", "Sw<2,1,-3> o _0 o 64:1",
])
def test_inverses(text):
    C = parse_composed(text)
    n = C.size()
    R = alg.right_inverse(C)
    assert R.size() >= 1
    idx = np.arange(R.size())
    assert np.array_equal(C(np.asarray(R(idx))), idx)
    if len(set(C.table().tolist())) == n:  # injective: left inverse exists
        Li = alg.left_inverse(C)
        assert np.array_equal(np.asarray(Li(C.table())), np.arange(n))
    if C.outer.is_identity:
        assert isinstance(R, Layout)


def test_inverse_with_offset():
    C = ComposedLayout(Swizzle(2, 0, 2), 16, Layout(16, 1))
    Li = alg.left_inverse(C)
    assert [Li(C(i)) for i in range(16)] == list(range(16))


@pytest.mark.parametrize("n", [2, 4, 8])
def test_upcast_downcast_convert_swizzle(n):
    C = parse_composed("Sw<3,4,3> o _0 o (8,64):(64,1)")  # units: 1-byte elements
    U = alg.upcast(C, n)
    assert U.outer == Swizzle(3, 4, 3).upcast(n)
    # the same bytes: element e of U starts at byte U(e)*n, which is C at the vector's first byte
    for r in range(8):
        for c in range(64 // n):
            assert U(r, c) * n == C(r, c * n)
    D = alg.downcast(U, n)
    assert D.outer == Swizzle(3, 4, 3)
    assert np.array_equal(D.table(), C.table())
    assert alg.recast_layout(C, 8, 8 * n) == U


def test_recast_errors():
    C = ComposedLayout(Swizzle(1, 1, 1), 3, Layout(8, 1))
    with pytest.raises(LayoutError):
        alg.upcast(C, 2)  # offset 3 is not a multiple of 2


def test_symbolic():
    m = sympy.Symbol("m", integer=True, positive=True)
    C = parse_composed("Swizzle<1,4,3> o ((8,m),(4,4)):((8,64),(1,4))")
    assert C.size() == 8 * m * 16
    assert sympy.simplify(C.cosize() - (7 * 8 + (m - 1) * 64 + 3 + 12 + 1)) == 0
    r, c = sympy.symbols("r c", integer=True, nonnegative=True)
    e = C(r, c)  # a sympy expression with the bit helpers
    D = C.subs({m: 2})
    assert D.is_static and not C.is_static
    for rr in range(16):
        for cc in range(16):
            assert int(e.subs({r: rr, c: cc, m: 2})) == D(rr, cc)
    with pytest.raises(LayoutError):
        C.table()


def test_parse_both_spellings_round_trip():
    for text in ["Swizzle<1,4,3> o ((8,2),(4,4)):((8,64),(1,4))", "Swizzle<0,4,3> o ((8,1,2),(8,2)):((1,8,64),(8,128))"]:
        C = parse_composed(text)
        assert C.ptx == text
        assert parse_composed(str(C)) == C
        assert str(C).startswith("Sw<") and " o _0 o " in str(C)
    nested = parse_composed("Sw<1,1,1> o _0 o (8,8):(8,1) o _4 o 16:2")
    assert isinstance(nested.inner, ComposedLayout) and nested.inner.offset == 4
    assert parse_composed(str(nested)) == nested
    offset8 = parse_composed("Sw<3,4,3> o _8 o 8:1")
    assert (offset8.outer, offset8.offset, offset8.inner) == (Swizzle(3, 4, 3), 8, parse("8:1"))
    with pytest.raises(LayoutError):
        parse_composed("8:1 o Sw<1,1,1>")
    with pytest.raises(LayoutError):
        parse_composed("((8,2):(1,8)")


def test_parse_symbolic_leaves():
    k, T = sympy.Symbol("k", integer=True, positive=True), sympy.Symbol("T", integer=True, positive=True)
    def leaf(text):
        return parse(f"{text}:1").shape

    assert leaf("2k") == 2 * k == leaf("2*k")
    assert leaf("1T") == T
    assert leaf("8T") == 8 * T
    assert leaf("_16") == 16
    with pytest.raises(LayoutError):
        leaf("1/2")
