"""verify() against the PTX ISA's mma.m8n8k4 fragment formulas (seed 000/003).

The TV layouts below are written by hand from the PTX text, in CuTe's convention:
(thread, value) -> m + k*M for A (M x K), n + k*N for B (N x K, i.e. B's K x N transposed),
m + n*M for C. Lanes of the other quad-pairs (bits 2, 3 of %laneid) compute other MMAs on the
same fragment positions, so those lane bits have stride 0. The expected formulas are the
PTX text typed in sympy.
"""


import numpy as np
import pytest
from budget import cpu_budget
import sympy
from sympy import Mod, Piecewise

from layoutalg.errors import LayoutError
from layoutalg.layout import Layout
from layoutalg.symbolic import bitand, shr
from layoutalg.verify import equivalent, verify

lane, i = sympy.symbols("lane i", integer=True, nonnegative=True)
M = N = 8


def hi(expr, extra=4):
    """PTX's 'expr if %laneid < 16, expr + 4 otherwise' (``extra`` breaks it on purpose)."""
    return Piecewise((expr, lane < 16), (expr + extra, True))


# name: (TV layout, (row, col) from the PTX text, matrix 'A'|'B'|'C'); lane = (lane%4, quad-pair, high)
def f16_table(extra=4):
    return {
        "A_row": (Layout(((4, 4, 2), 4), ((1, 0, 4), 8)), (hi(Mod(lane, 4), extra), i), "A"),
        "A_col": (Layout(((4, 4, 2), 4), ((8, 0, 4), 1)), (hi(Mod(i, 4), extra), Mod(lane, 4)), "A"),
        "B_row": (Layout(((4, 4, 2), 4), ((8, 0, 4), 1)), (Mod(lane, 4), hi(i, extra)), "B"),
        "B_col": (Layout(((4, 4, 2), 4), ((1, 0, 4), 8)), (i, hi(Mod(lane, 4), extra)), "B"),
        "C_f16": (Layout(((4, 4, 2), 8), ((1, 0, 4), 8)), (hi(Mod(lane, 4), extra), i), "C"),
        "C_f32": (
            Layout(((2, 2, 4, 2), (2, 2, 2)), ((1, 16, 0, 4), (8, 2, 32))),
            (hi(bitand(lane, 1) + bitand(i, 2), extra), bitand(i, 4) + bitand(lane, 2) + bitand(i, 1)),
            "C",
        ),
    }


F16 = f16_table()
F64 = {
    "A_f64": (Layout(((4, 8), 1), ((8, 1), 0)), (shr(lane, 2), Mod(lane, 4)), "A"),
    "B_f64": (Layout(((4, 8), 1), ((8, 1), 0)), (Mod(lane, 4), shr(lane, 2)), "B"),
    "C_f64": (
        Layout(((4, 8), 2), ((16, 1), 8)),
        (shr(lane, 2), Mod(lane, 4) * 2 + bitand(i, 1)),
        "C",
    ),
}
ALL = {**F16, **F64}


def offset(row, col, which):
    # A: row = m, col = k -> m + k*M. B (K x N): row = k, col = n -> n + k*N. C: m + n*M.
    if which == "A":
        return row + col * M
    if which == "B":
        return col + row * N
    return row + col * M


@pytest.mark.parametrize("name", sorted(ALL))
def test_ptx_formula_is_proven(name):
    tv, (row, col), which = ALL[name]
    v = verify(tv, offset(row, col, which), (lane, i))
    assert v, v
    assert v.method == "symbolic"
    assert v.checked == 32 * tv[1].size()
    assert v.proven


def test_independent_table_agrees_with_formula():
    # cross-check the harness itself: evaluate the PTX formula point by point in plain Python
    tv, _, _ = F16["C_f32"]
    for l in range(32):
        for v in range(8):
            X = (l & 1) + (v & 2)
            row = X if l < 16 else X + 4
            col = (v & 4) + (l & 2) + (v & 1)
            assert tv(l, v) == row + 8 * col


@pytest.mark.parametrize("name", sorted(F16))
def test_broken_formula_found(name):
    tv, _, which = F16[name]
    _, broken, _ = f16_table(extra=2)[name]
    v = verify(tv, offset(*broken, which), (lane, i))
    assert not v
    ce = v.counterexample
    assert ce["lane"] >= 16  # the broken branch is the high group
    assert ce.got != ce.expected


def test_broken_f32_counterexample_is_first_point():
    tv, (row, col), _ = F16["C_f32"]
    X = bitand(lane, 1) + bitand(i, 2)
    v = verify(tv, Piecewise((X, lane < 16), (X + 2, True)) + 8 * col, (lane, i))
    assert not v and v.method == "exhaustive"
    assert (v.counterexample["lane"], v.counterexample["i"]) == (16, 0)
    assert (v.counterexample.got, v.counterexample.expected) == (4, 2)


def test_f64_broken_by_swapping_row_and_col():
    tv, (row, col), which = F64["A_f64"]
    assert not verify(tv, offset(col, row, which), (lane, i))


class TinyFragment:
    """A verify-protocol object: (lane, value) -> (row, col) of an M-row matrix, from a TV layout."""

    def __init__(self, tv, rows):
        self.tv, self.rows = tv, rows

    def verify_domain(self):
        return (self.tv[0].size(), self.tv[1].size())

    def verify_eval(self, l, v):
        off = self.tv(l, v)
        return off % self.rows, off // self.rows

    def verify_symbolic(self, l, v):
        off = self.tv(l, v)
        return sympy.Mod(off, self.rows), sympy.floor(off / self.rows)


@pytest.mark.parametrize("name", ["A_row", "C_f32", "C_f64"])
def test_protocol_fragment(name):
    tv, (row, col), _ = ALL[name]
    v = verify(TinyFragment(tv, 8), (row, col), (lane, i))
    assert v, v
    assert v.method in ("symbolic", "exhaustive")
    bad = verify(TinyFragment(tv, 8), (row, col + 1), (lane, i))
    assert not bad and bad.counterexample.got != bad.counterexample.expected


def test_fragment_without_symbolic_reports_exhaustive():
    class NoSym:
        def __init__(self, tv):
            self.inner = TinyFragment(tv, 8)
            self.verify_domain, self.verify_eval = self.inner.verify_domain, self.inner.verify_eval

    tv, (row, col), _ = F64["C_f64"]
    frag = NoSym(tv)
    v = verify(frag, (row, col), (lane, i))
    assert v and v.method == "exhaustive"


def test_errors():
    tv = F64["A_f64"][0]
    with pytest.raises(LayoutError):
        verify(tv, lane, (lane, i, sympy.Symbol("x")))
    assert verify(tv, lane, ("lane", i)).equal is not None  # names are inputs too (non-negative integer symbols)
    with pytest.raises(LayoutError):
        verify(tv, lane, (1, i))
    with pytest.raises(LayoutError):
        verify(tv, lane, (lane, lane))
    with pytest.raises(LayoutError):
        verify(object(), lane, (lane,))


def test_symbolic_sizes_proven_for_all_values():
    m, T = sympy.symbols("m T", integer=True, positive=True)
    r, c = sympy.symbols("r c", integer=True, nonnegative=True)
    L = Layout((8, m), (1, 8))  # column-major 8 x m
    v = verify(Layout(((8, m), T), ((1, 8), 8 * m)), Mod(r, 8) + 8 * sympy.floor(r / 8) + 8 * m * c, (r, c))
    assert v and v.method == "symbolic" and v.proven
    w = verify(L, r, (r,))
    assert w and w.proven


def test_symbolic_sizes_counterexample_via_instances():
    m = sympy.Symbol("m", integer=True, positive=True)
    r, c = sympy.symbols("r c", integer=True, nonnegative=True)
    v = verify(Layout((8, m), (m, 1)), 8 * c + r, (r, c))  # row-major read as column-major
    assert not v
    assert v.counterexample is not None


def test_symbolic_sizes_instances_are_reported():
    m = sympy.Symbol("m", integer=True, positive=True)
    r = sympy.Symbol("r", integer=True, nonnegative=True)
    L = Layout((4, m), (1, 4))
    v = verify(L, shr(r, 2) * 4 + bitand(r, 3), (r,))  # bit helpers: no digit rewriting
    assert v
    assert v.method in ("symbolic", "instances")
    if v.method == "instances":
        assert not v.proven and v.instances


def test_speed_one_warp_fragment():
    tv, (row, col), which = F16["C_f32"]
    expr = offset(row, col, which)
    verify(tv, expr, (lane, i))  # warm caches (sympy printer, lambdify)
    with cpu_budget() as t:  # CPU time, the collector paused (tests/budget.py)
        for k in range(5):
            verify(tv, expr + k - k, (lane, i))
    assert t.seconds / 5 < 0.05


# -- equivalent --------------------------------------------------------------------------


def test_equivalent_basic():
    assert equivalent(Layout(((2, 2), 4), ((1, 2), 4)), Layout(16, 1))
    v = equivalent(Layout((4, 4), (1, 4)), Layout((4, 4), (4, 1)))
    assert not v and v.counterexample is not None
    assert not equivalent(Layout(8, 1), Layout(16, 1))


def test_equivalent_non_linear_uses_tables():
    A = Layout((3, 5), (5, 1))
    B = Layout((3, 5), (5, 1))
    C = Layout((3, (5, 1)), (5, (1, 7)))
    assert equivalent(A, C)
    D = Layout((3, 5), (1, 3))
    v = equivalent(A, D)
    assert not v and v.method == "exhaustive"
    ce = v.counterexample
    assert A(ce["i"]) != D(ce["i"])
    assert equivalent(A, B).method == "structural"


def test_equivalent_speed_1m():
    A = Layout((4, 3, 8, 16, 8, 2, 17), (1, 4, 12, 96, 1536, 12288, 24576))
    B = Layout(((4, 3), (8, 16), 8, (2, 17)), ((1, 4), (12, 96), 1536, (12288, 24576)))
    C = Layout((4, 3, 8, 16, 8, 34), (1, 4, 12, 96, 1536, 12288))
    Bq = Layout((4, 3, 8, 16, 8, (2, 17)), (1, 4, 12, 96, 1536, (12288, 24577)))
    with cpu_budget() as t:
        assert equivalent(A, B)
        assert equivalent(A, C)
        v = equivalent(A, Bq)
    dt = t.seconds
    assert not v
    assert dt < 1.5


# -- equivalent vs full tables (hypothesis) --------------------------------------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import layoutalg.algebra as alg  # noqa: E402
from layoutalg.composed import ComposedLayout  # noqa: E402
from layoutalg.swizzle import Swizzle  # noqa: E402


@st.composite
def layouts(draw, pow2=False):
    r = draw(st.integers(1, 4))
    sizes = st.sampled_from([1, 2, 4, 8]) if pow2 else st.integers(1, 6)
    shape = tuple(draw(sizes) for _ in range(r))
    stride = tuple(draw(st.integers(0, 24)) for _ in range(r))
    return Layout(shape, stride)


def respell(L, how):
    """Same function, different spelling."""
    if how == "coalesce":
        return alg.coalesce(L)
    fs, fd = L.flat
    if how == "nest" and len(fs) >= 2:
        return Layout(((fs[0], fs[1]),) + tuple(fs[2:]), ((fd[0], fd[1]),) + tuple(fd[2:]))
    if how == "split_ones":
        return Layout(tuple(fs) + (1,), tuple(fd) + (99,))
    return L


def full_tables_equal(A, B):
    return A.size() == B.size() and np.array_equal(A.table(), B.table())


@given(layouts(), st.sampled_from(["coalesce", "nest", "split_ones", "same"]), st.booleans())
@settings(max_examples=150, deadline=None)
def test_equivalent_respelled(L, how, swz):
    B = respell(L, how)
    if swz:
        L, B = ComposedLayout(Swizzle(1, 1, 2), 0, L), ComposedLayout(Swizzle(1, 1, 2), 0, B)
    v = equivalent(L, B)
    assert bool(v) == full_tables_equal(L, B) is True


@given(st.one_of(layouts(), layouts(pow2=True)), st.one_of(layouts(), layouts(pow2=True)),
       st.sampled_from([None, Swizzle(1, 0, 1), Swizzle(2, 1, 2)]))
@settings(max_examples=300, deadline=None)
def test_equivalent_agrees_with_tables(A, B, sw):
    if sw is not None:
        A = ComposedLayout(sw, 0, A)
    v = equivalent(A, B)
    assert bool(v) == full_tables_equal(A, B)
    if not v and v.counterexample is not None and v.method != "size":
        i = v.counterexample["i"]
        assert A(i) != B(i) and v.counterexample.got == A(i) and v.counterexample.expected == B(i)


def test_catalog_m8n8k4_fragment_against_the_isa_row_col_pair():
    """The seed's (row, col) formulas check against the catalog fragment, which also knows the computation."""
    import sympy

    from layoutalg.nvidia.ampere import mma

    lane, i = sympy.symbols("lane i", integer=True, nonnegative=True)
    A = mma.fragment("m8n8k4", "f16", "A", alayout="col")
    row = sympy.Piecewise((i % 4, lane < 16), ((i % 4) + 4, True))
    assert verify(A, (row, lane % 4), (lane, i))
    bad = verify(A, (sympy.Piecewise((i % 4, lane < 16), ((i % 4) + 2, True)), lane % 4), (lane, i))
    assert not bad and bad.counterexample is not None
