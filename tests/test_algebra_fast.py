"""The fast kernels of :mod:`layoutalg.algebra` against its reference constructions.

Every algebra operation on concrete layouts first runs a kernel on plain int tuples and falls back
to its reference construction (the code CuTe conformance was established with) wherever the kernel
is not sure. Here the C kernels, their Python twins (``speedups.python_kernels()``, the kernels of the
pure-Python build) and the reference (``speedups.reference_only()`` switches the kernels off) run on the
same random inputs and must agree exactly: the same shape and stride tuples (so the same text and the same
nesting), or the same exception type and message. The inputs reach every branch a kernel takes or
declines: size-1 and stride-0 modes, trailing size-1 modes, negative strides, non-injective and
non-dividing layouts, nested tilers, and the tile layouts of ``benchmarks/bench_algebra.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import compact_layouts, layouts, nested_shape

import layoutalg as la
from layoutalg import Layout, algebra, speedups
from layoutalg.inttuple import flatten, unflatten
from layoutalg.layout import flatten_pair

STRIDES_NEG = st.sampled_from([0, 1, 1, 2, 3, 4, 8, 16, 32, -1, -2, -4])


@st.composite
def signed_layouts(draw: Any) -> Layout:
    """Layouts that may have negative strides."""
    shape = draw(nested_shape(4))
    flat = flatten(shape)
    return Layout(shape, unflatten([draw(STRIDES_NEG) for _ in flat], shape))


@st.composite
def tile_layouts(draw: Any) -> Layout:
    """Power-of-two layouts nested two deep, as GPU tiles are (permuted compact modes, with gaps)."""
    return draw(compact_layouts(max_leaves=5, leaf=st.sampled_from([1, 2, 4, 8, 16])))


ANY = st.one_of(layouts(), compact_layouts(), tile_layouts(), signed_layouts())


def _outcome(f: Callable[..., Any], *args: Any) -> tuple:
    """What ``f(*args)`` gives: the result's shape and stride with their types, or the exception and its text."""
    try:
        r = f(*args)
    except Exception as e:  # noqa: BLE001 - any exception must be the reference's
        return ("raised", type(e).__name__, str(e))
    if isinstance(r, Layout):
        assert r.flat == flatten_pair(r.shape, r.stride), f"stale flat cache on {r}"
        assert r.is_static == (algebra.Layout(r.shape, r.stride).is_static)
        return ("layout", repr(r.shape), repr(r.stride), str(r))
    return ("value", repr(r))


def _same(f: Callable[..., Any], *args: Any) -> None:
    fast = _outcome(f, *args)
    with speedups.python_kernels():  # the Python twins of the C kernels (the pure-Python build's kernels)
        twins = _outcome(f, *args)
    with speedups.reference_only():
        ref = _outcome(f, *args)
    assert fast == ref
    assert twins == ref


def test_reference_only_switches_the_kernels_off() -> None:
    assert speedups.enabled()
    with speedups.reference_only():
        assert not speedups.enabled()
    assert speedups.enabled()
    assert speedups.c_enabled()
    with speedups.python_kernels():
        assert not speedups.c_enabled() and speedups.enabled()
    assert speedups.c_enabled()


@settings(max_examples=500)
@given(ANY)
def test_unary_ops(L: Layout) -> None:
    for op in (la.coalesce, la.right_inverse, la.left_inverse, la.filter, la.nullspace):
        _same(op, L)
    _same(la.complement, L)


@settings(max_examples=500)
@given(ANY, st.integers(1, 300))
def test_complement(L: Layout, n: int) -> None:
    _same(la.complement, L, n)
    _same(la.complement, L, (n, 3))


@settings(max_examples=500)
@given(ANY, ANY)
def test_binary_ops(A: Layout, B: Layout) -> None:
    for op in (la.composition, la.logical_divide, la.logical_product, la.zipped_divide, la.blocked_product,
               la.raked_product, la.max_common_vector):
        _same(op, A, B)


@settings(max_examples=500)
@given(st.one_of(tile_layouts(), layouts()), st.one_of(tile_layouts(), compact_layouts()))
def test_binary_ops_on_tiles(A: Layout, B: Layout) -> None:
    for op in (la.composition, la.logical_divide, la.logical_product):
        _same(op, A, B)
    # tilers by mode, and by an integer
    _same(lambda: la.logical_divide(A, (B,) * min(len(A), 2)))
    _same(la.composition, A, B.size())


@settings(max_examples=500)
@given(ANY, ANY)
def test_unchecked_composition(A: Layout, B: Layout) -> None:
    """With the functional check off (the conformance tests' mode) both return CuTe's construction."""
    with algebra.cute_construction_only():
        _same(la.composition, A, B)
        _same(la.logical_divide, A, B)


# the layouts of benchmarks/bench_algebra.py: (shape A, stride A, shape B)
BENCH = [
    (((8, 16), (8, 8)), ((16, 1), (128, 1024)), ((8, 4), (1, 8))),
    (((4, 32), (2, 64)), ((1, 4), (8192, 128)), ((4, 8), (1, 4))),
    ((128, 64), (64, 1), ((32, 4), (1, 32))),
    (((2, 64), (4, 16)), ((64, 1), (16384, 128)), ((16, 8), (1, 16))),
    ((128, (8, 8)), (1, (128, 1024)), ((64, 2), (1, 64))),
    (((8, 8), (16, 8)), ((8, 1), (64, 1024)), ((8, 8), (1, 8))),
]


@pytest.mark.parametrize("sa, da, sb", BENCH)
def test_benchmark_cases(sa: Any, da: Any, sb: Any) -> None:
    A, B = Layout(sa, da), Layout(sb)
    for f in (lambda: la.coalesce(A), lambda: la.composition(A, B), lambda: la.complement(B, 8192),
              lambda: la.logical_divide(A, B), lambda: la.logical_product(B, Layout(4, 1)),
              lambda: la.right_inverse(A), lambda: la.left_inverse(A)):
        _same(f)


@pytest.mark.parametrize("a, b", [
    ("(4,6):(1,10)", "2:6"),          # stride divisibility: CuTe refuses
    ("(4,6):(1,10)", "6:1"),          # shape divisibility: CuTe refuses
    ("(6,2):(8,2)", "(4,3):(3,1)"),   # a stride below a shape it does not divide (weak condition)
    ("(4,4):(1,4)", "(2,2):(1,1)"),   # overlapping modes: not a layout
    ("(4,2):(1,0)", "8:1"),           # trailing stride-0 mode absorbs the overflow
    ("(4,1):(1,0)", "8:1"),           # trailing size-1 mode keeps its stride
    ("(2,3):(1,3)", "6:-1"),          # negative stride in B
    ("(2,2):(-1,4)", "(2,2):(2,1)"),  # negative stride in A
])
def test_edge_cases(a: str, b: str) -> None:
    A, B = la.parse(a), la.parse(b)
    for op in (la.composition, la.logical_divide, la.logical_product):
        _same(op, A, B)
    for L in (A, B):
        for op in (la.right_inverse, la.left_inverse, la.coalesce):
            _same(op, L)
        _same(la.complement, L, 64)
