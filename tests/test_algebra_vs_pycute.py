"""Differential tests against pycute (the pure-Python CuTe shipped in nvidia-cutlass).

Results are compared as functions: same size, same evaluation table, compatible shapes. Where the
two disagree, an independent evaluator decides who is right: pycute is known to return wrong
answers on some inputs (no shape-divisibility check in composition, no injectivity check in
complement), and those cases must be ones where layoutalg raises or is provably right.
"""

from __future__ import annotations

import functools
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import compact_layouts, layouts

import layoutalg as la

pycute = pytest.importorskip("pycute")

#: examples per property: N // 2 in the default run, 4 N in the exhaustive twins (pytest -m exhaustive); the
#: same operations are checked against their definitions in test_properties and test_algebra_laws
N = 1500


def default_and_exhaustive(n: int, *strategies):
    """A test body -> (the default test: ``n // 2`` examples of ``strategies``, its ``exhaustive`` twin: ``4 n``)."""

    def deco(body):
        ci = settings(max_examples=n // 2)(given(*strategies)(body))
        big = pytest.mark.exhaustive(settings(max_examples=4 * n)(given(*strategies)(body)))
        return ci, big

    return deco


def to_py(L: la.Layout):
    return pycute.Layout(L.shape, L.stride)


def py_table(P) -> list[int]:
    return [P(i) for i in range(pycute.size(P))]


def ref_eval(shape, stride, i: int) -> int:
    """CuTe's Layout::operator()(int), written from its definition: colexicographic split, the
    last mode absorbing what is left (independent of layoutalg's implementation)."""
    if type(shape) is not tuple:
        return i * stride
    total = 0
    for k, (s, d) in enumerate(zip(shape, stride)):
        if k == len(shape) - 1:
            total += ref_eval(s, d, i)
        else:
            n = 1
            for x in (s if type(s) is tuple else (s,)):
                n *= x if type(x) is not tuple else pycute.product(x)
            n = pycute.product(s)
            total += ref_eval(s, d, i % n)
            i //= n
    return total


def composed_truth(A: la.Layout, B: la.Layout) -> list[int]:
    return [ref_eval(A.shape, A.stride, ref_eval(B.shape, B.stride, i)) for i in range(B.size())]


def agree_or_pycute_wrong(mine: la.Layout, P, truth) -> None:
    """Same function as pycute, or pycute's answer is not the functional composition ``truth`` (a list, or a
    callable giving it: computed only when the two differ) and ours is."""
    if same_layout_or_function(mine, P):
        return
    truth = truth() if callable(truth) else truth
    assert mine.table().tolist() == truth
    assert py_table(P) != truth


def same_function(mine: la.Layout, P) -> bool:
    return mine.size() == pycute.size(P) and mine.table().tolist() == py_table(P)


def same_layout_or_function(mine: la.Layout, P) -> bool:
    """Same function as pycute's answer: at once where both give the same Shape:Stride (one layout, hence one
    function), else by the evaluation tables. The tables of large products cost pycute ~50 us an entry; the
    two evaluators themselves are compared entry by entry in test_coalesce and test_filter."""
    if mine.shape == P.shape and mine.stride == P.stride:
        return True
    return same_function(mine, P)


def _coalesce(L):
    assert same_function(la.coalesce(L), pycute.coalesce(to_py(L)))


test_coalesce, test_coalesce_exhaustive = default_and_exhaustive(N, layouts())(_coalesce)


def _filter(L):
    assert same_function(la.filter(L), pycute.filter(to_py(L)))


test_filter, test_filter_exhaustive = default_and_exhaustive(N, layouts())(_filter)


def _composition(A, B):
    truth = [ref_eval(A.shape, A.stride, ref_eval(B.shape, B.stride, i)) for i in range(B.size())]
    try:
        mine = la.composition(A, B)
    except la.LayoutError as e:
        # we refused: on CuTe's divisibility conditions (which CuTe enforces statically too), or
        # because the function is not a layout, in which case pycute's answer must be wrong
        if "divisibility condition" in str(e):
            return
        try:
            P = pycute.composition(to_py(A), to_py(B))
        except (AssertionError, ZeroDivisionError):
            return
        assert pycute.size(P) != B.size() or py_table(P) != truth
        return
    assert mine.table().tolist() == truth
    try:
        P = pycute.composition(to_py(A), to_py(B))
    except (AssertionError, ZeroDivisionError):
        return
    if py_table(P) != truth:
        return  # pycute wrong (e.g. ignores a trailing size-1 mode past A's domain)
    assert same_function(mine, P)


test_composition, test_composition_exhaustive = default_and_exhaustive(N, layouts(), layouts(max_size=256))(_composition)


def _complement(A, n):
    mine = la.complement(A, n)
    P = pycute.complement(to_py(A), n)
    assert same_function(mine, P)


test_complement, test_complement_exhaustive = default_and_exhaustive(
    N, compact_layouts(), st.sampled_from([1, 2, 8, 16, 24, 64, 128, 1000, 4096]))(_complement)


def test_pycute_complement_bug_is_refused():
    # pycute returns (0,4):(2,2) here; the layout is not injective, so there is no complement
    with pytest.raises(la.LayoutError, match="not injective"):
        la.complement(la.Layout((2, 2), (1, 1)), 8)


def test_pycute_composition_bug_is_refused():
    A = la.parse("((2,6,6),6):((6,2,8),0)")
    P = pycute.composition(to_py(A), pycute.Layout(3, 1))
    assert pycute.size(P) == 2  # pycute's wrong answer
    with pytest.raises(la.LayoutError, match="divisib"):
        la.composition(A, la.Layout(3, 1))


def _right_inverse(L):
    mine = la.right_inverse(L)
    P = pycute.right_inverse(to_py(L))
    # pycute stops at the first stride-0 mode; CuTe (and layoutalg) search past it, so where the two
    # differ ours must be the larger right inverse, and both must be right inverses
    if not same_function(mine, P):
        assert mine.size() >= pycute.size(P)
        assert all(L(P(i)) == i for i in range(pycute.size(P)))
    assert all(L(mine(i)) == i for i in range(mine.size()))


test_right_inverse, test_right_inverse_exhaustive = default_and_exhaustive(N, layouts())(_right_inverse)


def _left_inverse(L):
    mine = la.left_inverse(L)
    for i in range(L.size()):
        assert mine(L(i)) == i
    P = pycute.left_inverse(to_py(L))
    if all(P(L(i)) == i for i in range(L.size())):
        # where pycute is right, both agree on the image of L
        assert [mine(L(i)) for i in range(L.size())] == [P(L(i)) for i in range(L.size())]


test_left_inverse, test_left_inverse_exhaustive = default_and_exhaustive(N, compact_layouts())(_left_inverse)


def _logical_divide(A, B):
    try:
        mine = la.logical_divide(A, B)
    except la.LayoutError:
        return
    try:
        P = pycute.logical_divide(to_py(A), to_py(B))
    except (AssertionError, ZeroDivisionError):
        return
    truth = functools.cache(lambda: composed_truth(A, la.make_layout(B, la.complement(B, A.size()))))
    agree_or_pycute_wrong(mine, P, truth)
    for ours, theirs in ((la.zipped_divide, pycute.zipped_divide), (la.tiled_divide, pycute.tiled_divide)):
        agree_or_pycute_wrong(ours(A, B), theirs(to_py(A), to_py(B)), truth)


test_logical_divide, test_logical_divide_exhaustive = default_and_exhaustive(N, layouts(), compact_layouts(max_size=64))(_logical_divide)


def _logical_product(A, B):
    try:
        mine = la.logical_product(A, B)
    except la.LayoutError:
        return
    try:
        P = pycute.logical_product(to_py(A), to_py(B))
    except (AssertionError, ZeroDivisionError):
        return  # pycute checks a stricter (static CuTe) divisibility than needed when B fits in a mode
    assert same_layout_or_function(mine, P)
    for ours, theirs in ((la.zipped_product, pycute.zipped_product), (la.tiled_product, pycute.tiled_product)):
        assert same_layout_or_function(ours(A, B), theirs(to_py(A), to_py(B)))


test_logical_product, test_logical_product_exhaustive = default_and_exhaustive(
    N, compact_layouts(max_size=64), compact_layouts(max_size=64))(_logical_product)


@settings(max_examples=300)
@given(st.lists(st.sampled_from([2, 4, 8]), min_size=2, max_size=2), st.lists(st.sampled_from([1, 2, 4]),
       min_size=2, max_size=2))
def test_by_mode_divide(shape, tile):
    A = la.Layout(tuple(shape), (1, shape[0]))
    tiler = (la.Layout(min(tile[0], shape[0]), 1), la.Layout(min(tile[1], shape[1]), 1))
    mine = la.logical_divide(A, tiler)
    P = pycute.logical_divide(to_py(A), tuple(to_py(t) for t in tiler))
    assert same_function(mine, P)
    assert same_function(la.zipped_divide(A, tiler), pycute.zipped_divide(to_py(A), tuple(to_py(t) for t in tiler)))
