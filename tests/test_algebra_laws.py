"""Property tests: every law of the algebra, on random layouts."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from strategies import compact_layouts, layouts

from layoutalg import (
    Layout,
    LayoutError,
    blocked_product,
    coalesce,
    complement,
    composition,
    filter,
    left_inverse,
    logical_divide,
    logical_product,
    make_layout,
    max_common_layout,
    max_common_vector,
    nullspace,
    parse,
    raked_product,
    right_inverse,
    zipped_divide,
    tiled_divide,
    flat_divide,
    zipped_product,
    tiled_product,
    flat_product,
)
from layoutalg.inttuple import compatible


def brute(L: Layout) -> list[int]:
    """L(i) for every i, by the per-element evaluation (independent of table())."""
    return [L(i) for i in range(L.size())]


@given(layouts())
def test_table_matches_per_element(L):
    assert L.table().tolist() == brute(L)


@given(layouts())
def test_coalesce_preserves_function_and_is_idempotent(L):
    C = coalesce(L)
    assert C.size() == L.size()
    assert C.table().tolist() == L.table().tolist()
    assert coalesce(C) == C
    assert C.depth() <= 1


@given(layouts())
def test_coalesce_by_mode_keeps_rank(L):
    prof = (1,) * len(L)
    C = coalesce(L, prof)
    assert len(C) == len(L)
    assert C.table().tolist() == L.table().tolist()
    for i in range(len(L)):
        assert C[i].size() == L[i].size()


@given(layouts())
def test_filter_is_image_enumerated_once_when_injective_modes(L):
    F = filter(L)
    assert set(F.table().tolist()) == set(L.table().tolist()) or L.size() == 1


@given(layouts(), layouts(max_size=256))
@settings(max_examples=400)
def test_composition_is_functional(A, B):
    try:
        R = composition(A, B)
    except LayoutError:
        return
    assert R.size() == B.size()
    assert compatible(B.shape, R.shape)
    want = [A(B(i)) for i in range(B.size())]
    assert R.table().tolist() == want


@given(compact_layouts(), st.sampled_from([1, 2, 4, 8, 16, 64, 100, 256, 1000]))
def test_complement_disjoint_ordered_and_injective(A, n):
    C = complement(A, n)
    t = C.table()
    assert (np.diff(t) > 0).all()  # ordered
    img = set(A.table().tolist())
    assert not (set(t[1:].tolist()) & img)  # disjoint
    AC = make_layout(A, C)
    tab = AC.table()
    assert len(set(tab.tolist())) == AC.size()  # injective
    assert AC.size() * 1 >= 1 and (A.size() * C.size() >= n or AC.cosize() >= n)


@given(layouts())
def test_right_inverse(L):
    R = right_inverse(L)
    for i in range(R.size()):
        assert L(R(i)) == i


@given(compact_layouts())
def test_left_inverse(L):
    R = left_inverse(L)
    for i in range(L.size()):
        assert R(L(i)) == i


@given(layouts())
def test_left_inverse_is_a_quasi_inverse(L):
    """With broadcast (stride-0) modes too: L(R(L(i))) == L(i) whenever filter(L) is injective."""
    F = filter(L)
    assume(len(set(F.table().tolist())) == F.size())
    try:
        R = left_inverse(L)
    except LayoutError:
        return
    for i in range(L.size()):
        assert L(R(L(i))) == L(i)


@given(layouts(), compact_layouts(max_size=64))
def test_logical_divide_definition(A, B):
    try:
        expect = composition(A, make_layout(B, complement(B, A.size())))
    except LayoutError:
        with pytest.raises(LayoutError):
            logical_divide(A, B)
        return
    R = logical_divide(A, B)
    assert expect == R
    Z = zipped_divide(A, B)
    assert Z.table().tolist() == R.table().tolist()
    assert tiled_divide(A, B).table().tolist() == R.table().tolist()
    assert flat_divide(A, B).table().tolist() == R.table().tolist()


@given(compact_layouts(max_size=64), compact_layouts(max_size=64))
def test_logical_product_definition(A, B):
    try:
        expect = make_layout(A, composition(complement(A, A.size() * B.cosize()), B))
    except LayoutError:
        with pytest.raises(LayoutError):
            logical_product(A, B)
        return
    R = logical_product(A, B)
    assert expect == R
    assert R[0] == A
    for p in (zipped_product, tiled_product, flat_product):
        assert p(A, B).table().tolist() == R.table().tolist()


@given(compact_layouts(max_leaves=2, max_size=32), compact_layouts(max_leaves=2, max_size=32))
def test_blocked_and_raked_products_are_permutations_of_the_logical_product(A, B):
    try:
        bp = blocked_product(A, B)
        rp = raked_product(A, B)
        lp = logical_product(A, B)
    except LayoutError:
        return
    assert bp.size() == rp.size() == lp.size() == A.size() * B.size()
    assert sorted(bp.table().tolist()) == sorted(lp.table().tolist())
    assert sorted(rp.table().tolist()) == sorted(lp.table().tolist())


@given(layouts())
def test_nullspace(L):
    N = nullspace(L)
    for i in range(N.size()):
        assert L(N(i)) == 0
    assert N.size() * filter(L).size() == L.size() or filter(L).size() == 1


@given(compact_layouts(max_size=256), st.data())
def test_max_common_layout_and_vector(A, data):
    from layoutalg.inttuple import flatten, unflatten

    fs = list(flatten(A.shape))
    order = data.draw(st.permutations(list(range(len(fs)))))
    strides = [0] * len(fs)
    p = 1
    for k in order:
        strides[k] = p
        p *= fs[k]
    B = Layout(A.shape, unflatten(strides, A.shape))
    R = max_common_layout(A, B)
    for i in range(R.size()):
        assert A(R(i)) == i and B(R(i)) == i
    n = max_common_vector(A, B)
    assert n >= 1
    for i in range(n):
        assert A(right_inverse(B)(i)) == i


@given(layouts())
def test_print_parse_roundtrip(L):
    assert parse(str(L)) == L
    assert eval(repr(L), {"Layout": Layout}) == L
    assert parse(" " + str(L).replace(",", " , ").replace(":", " : ") + " ") == L
