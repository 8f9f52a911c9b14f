"""Rank 0 in every argument form, and ``downcast`` of a lone reversed mode (issue 29, part 7).

A rank-0 layout (``()``, ``((),())``, ...) is the function ``i -> 0``. ``coalesce`` and ``filter``
give ``():()`` for it (as the CuTe DSL does) whichever profile they are given: none, a leaf, or the
empty tuple; a tuple profile keeps the rank of a nested one. ``blocked_product``/``raked_product`` of
rank-0 layouts are rank 0 (the CuTe DSL's ``():()``). ``downcast(s:-1, N)`` is ``(N,s):(1,-N)``
(docs/model.md), checked by its defining property: offsets ``N*L(i) + r`` for ``r < N``.
"""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import EMPTY_SHAPES, any_layouts

import layoutalg as la
from layoutalg import Layout, LayoutError

_CI = settings(deadline=None, derandomize=True, database=None, max_examples=300,
               suppress_health_check=list(HealthCheck))
E = Layout((), ())


def _empty(shape) -> Layout:
    return Layout(shape, shape)  # a shape of empty tuples is its own stride


def _offsets(L) -> list[int]:
    return [L(i) for i in range(la.size(L))]


def test_coalesce_and_filter_of_rank0_with_the_empty_profile():
    assert la.coalesce(E, ()) == E  # the CuTe DSL: coalesce(():(), target_profile=()) is ():()
    assert la.filter(E, ()) == E
    assert la.coalesce(E, 1) == la.coalesce(E, None) == la.coalesce(E) == E
    with pytest.raises(LayoutError, match="more modes"):
        la.coalesce(E, (1,))


@pytest.mark.parametrize("shape", EMPTY_SHAPES)
@pytest.mark.parametrize("op", [la.coalesce, la.filter])
def test_every_profile_form_of_a_rank0_layout(shape, op):
    L = _empty(shape)
    for profile in (None, 1, (), shape):
        R = op(L, profile)
        assert la.size(R) == 1 and R(0) == 0 and not R.flat[0]  # still rank 0, still i -> 0
    assert op(L) == op(L, None) == op(L, 1) == E  # a leaf profile coalesces the whole layout
    assert op(L, ()) == L  # the empty profile coalesces no mode: the layout as it is, rank kept


@pytest.mark.parametrize("op", [la.blocked_product, la.raked_product])
def test_products_of_rank0_layouts(op):
    assert op(E, E) == E  # the CuTe DSL: ():()
    assert op(E, ()) == E


@_CI
@given(any_layouts())
def test_the_empty_profile_keeps_every_mode(L):
    for op in (la.coalesce, la.filter):
        try:
            R = op(L, ())
        except LayoutError:
            assert type(L.shape) is not tuple  # a scalar layout has no modes to keep
            continue
        if type(L.shape) is tuple:
            assert R == L


@pytest.mark.parametrize("n", [1, 2, 3, 4, 8])
@pytest.mark.parametrize("s", [1, 2, 3, 5, 8])
def test_downcast_of_a_lone_reversed_mode(s, n):
    D = la.downcast(Layout(s, -1), n)
    assert str(D) == (f"{s * n}:1" if s == 1 else f"({n},{s}):(1,{-n})") or n == 1
    assert Counter(_offsets(D)) == Counter(n * -i + r for i in range(s) for r in range(n))


def test_downcast_2_of_2_reversed():
    assert str(la.downcast(Layout(2, -1), 2)) == "(2,2):(1,-2)"


@_CI
@given(any_layouts(huge=False), st.sampled_from([1, 2, 3, 4]))
def test_downcast_is_the_layout_in_smaller_units(L, n):
    """Offsets ``n*L(i) + r`` (``r < n``) exactly, or a LayoutError when no mode has stride ±1."""
    try:
        D = la.downcast(L, n)
    except LayoutError:
        assert not any(d in (1, -1) for d in L.flat[1])
        return
    assert la.size(D) == n * la.size(L)
    assert Counter(_offsets(D)) == Counter(n * x + r for x in _offsets(L) for r in range(n))


@pytest.mark.parametrize("shape", EMPTY_SHAPES)
@pytest.mark.parametrize("n", [2, 4])
def test_downcast_of_rank0_is_refused(shape, n):
    """The named difference of docs/model.md: a rank-0 layout has one element, its downcast must have ``n``;
    no mode of stride ±1 holds them. CuTe C++ 4.2 refuses as well (static_assert "Downcast requires adjacent
    elements", compiled with g++ on 2026-11-27); the CuTe DSL 4.8.1 answers ``():()`` for
    ``recast_layout(4, 8, ():())`` (traced on the CPU the same day), one element where ``n`` are due."""
    L = _empty(shape)
    with pytest.raises(LayoutError, match="no stride-1"):
        la.downcast(L, n)
    with pytest.raises(LayoutError, match="no stride-1"):
        la.downcast(Layout(1, 0), n)  # rank 0 reads as 1:0, and 1:0 is refused the same way
