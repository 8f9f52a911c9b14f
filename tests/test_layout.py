"""The Layout value type: construction, evaluation, structure, printing."""

from __future__ import annotations

import numpy as np
import pytest
import sympy

import layoutalg as la
from layoutalg import Layout, LayoutError, make_layout, parse


def test_default_stride_is_column_major_and_row_major_on_request():
    assert Layout((4, (2, 3))).stride == (1, (4, 8))
    for order in ("right", "LayoutRight", "row-major", "row"):
        assert make_layout((4, (2, 3)), order=order).stride == (6, (3, 1))
    assert make_layout((2, 3, 4), order=(2, 0, 1)) == Layout((2, 3, 4), (12, 1, 3))
    with pytest.raises(LayoutError, match="order"):
        make_layout((4, 8), order="diagonal")


def test_evaluation_forms_agree():
    L = parse("((2,3),(4,2)):((1,8),(2,24))")
    # 1-D index, nested coordinate, per-mode 1-D coordinates, partial (int for a tuple mode)
    for i in range(L.size()):
        c0, c1 = i % 6, i // 6
        nested = ((c0 % 2, c0 // 2), (c1 % 4, c1 // 4))
        want = nested[0][0] * 1 + nested[0][1] * 8 + nested[1][0] * 2 + nested[1][1] * 24
        assert L(i) == L(c0, c1) == L(nested) == L((c0, nested[1])) == want
    assert L(np.arange(L.size())).tolist() == L.table().tolist()
    r, c = sympy.symbols("r c", integer=True, nonnegative=True)
    expr = L(r, c)
    assert all(expr.subs({r: a, c: b}) == L(a, b) for a in range(6) for b in range(8))


def test_structure():
    L = parse("((2,3),(4,2)):((1,8),(2,24))")
    assert (L.size(), L.cosize(), L.rank(), L.depth(), len(L)) == (48, 48, 2, 2, 2)
    assert (la.size(L), la.cosize(L), la.rank(L), la.depth(L)) == (48, 48, 2, 2)
    assert L[0] == parse("(2,3):(1,8)") and L[1] == parse("(4,2):(2,24)")
    assert make_layout(L[0], L[1]) == L
    assert la.append(L, Layout(5, 100)) == parse("((2,3),(4,2),5):((1,8),(2,24),100)")
    assert la.prepend(L, Layout(5, 100)) == parse("(5,(2,3),(4,2)):(100,(1,8),(2,24))")
    assert la.group(parse("(2,3,4):(1,2,6)"), 0, 2) == parse("((2,3),4):((1,2),6)")
    assert la.flatten(L) == parse("(2,3,4,2):(1,8,2,24)")
    W = la.with_shape(Layout(24), (4, 6))
    assert W.table().tolist() == list(range(24)) and W.shape == (4, 6)
    assert L.grid().shape == (6, 8) and L.grid()[5, 7] == L(5, 7)


def test_immutable_hashable_and_equality_is_spelling():
    L = Layout((4, 2), (2, 1))
    with pytest.raises(AttributeError):
        L.shape = (8,)  # type: ignore[misc]
    assert hash(L) == hash(Layout((4, 2), (2, 1))) and {L: 1}[Layout((4, 2), (2, 1))] == 1
    assert Layout(8, 1) != Layout((8,), (1,))  # same function, different spelling
    assert la.equivalent(Layout(8, 1), Layout((8,), (1,)))


def test_printing_round_trips_and_repr_evaluates():
    for text in ["8:1", "(8,4):(1,8)", "((8,2),(4,4)):((4,32),(1,64))", "(8):(1)", "():()", "(8,4):(-1,0)"]:
        L = parse(text)
        assert str(L) == text
        assert eval(repr(L), {"Layout": Layout, "parse": parse}) == L
    S = parse("((8,m),(T,2k)):((1T,SBO),(1,LBO))")
    assert eval(repr(S), {"Layout": Layout, "parse": parse}) == S
    assert S.subs({"m": 2, "T": 4, "k": 2, "SBO": 32, "LBO": 64}) == parse("((8,2),(4,4)):((4,32),(1,64))")
    assert S.size() == 16 * la.symbol("T") * la.symbol("k") * la.symbol("m")


def test_numpy_and_sympy_integers_are_normalised():
    L = Layout((np.int64(4), sympy.Integer(2)), (np.int32(2), 1))
    assert L == Layout((4, 2), (2, 1)) and all(type(x) is int for x in L.flat[0] + L.flat[1])
