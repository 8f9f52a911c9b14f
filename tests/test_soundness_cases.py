"""The silently wrong answers of issue 23, one named test each: now correct, or a LayoutError.

Each expected value is worked out by hand in the comment beside it (not read off the code), and each
returned result is also checked against its defining property by enumeration.
"""

from __future__ import annotations

import pytest

import layoutalg as la
from layoutalg import ComposedLayout, Layout, LayoutError, Swizzle
from layoutalg.algebra import CompositionError
from layoutalg.parse import parse

E = Layout((), ())
EE = Layout(((), ()), ((), ()))


def P(text: str):
    return parse(text)


def offsets(L) -> list[int]:
    return [L(i) for i in range(la.size(L))]


# --- composition -------------------------------------------------------------------------------


@pytest.mark.parametrize("a, b", [("(2,2):(1,3)", "(2,2):(-1,2)"), ("(4,4):(4,1)", "(2,2):(-2,4)")])
def test_composition_negative_stride_B_crossing_A_modes_is_refused(a, b):
    # (2,2):(1,3) o (2,2):(-1,2): B(3) = -1 + 2 = 1 and A(1) = 1, but CuTe's (2,2):(-1,3) gives -1 + 3 = 2
    with pytest.raises(CompositionError):
        la.composition(P(a), P(b))


def test_composition_negative_stride_B_where_it_is_the_composition():
    # CuTe's "SM80 fp64 MMA NT" case: A(-i) = -A(i) (truncating split), so (2,2):(1,-512) is A o 4:-1
    A, B = P("(1,(2,4)):(0,(-1,512))"), P("4:-1")
    R = la.composition(A, B)
    assert str(R) == "(2,2):(1,-512)"
    assert offsets(R) == [0, 1, -512, -511] == [A(B(i)) for i in range(4)]


def test_composition_with_strides_near_2_62_uses_python_ints():
    A, B = Layout((2, 2), (1, 2**62)), Layout((3, 4), (2**32, 2**31))
    R = la.composition(A, B)  # numpy raised OverflowError here
    # A past its size: A(x) = (x % 2) + (x // 2) * 2**62; B's offsets are even, so R = B * 2**61
    assert R == Layout((3, 4), (2**93, 2**92))


# --- inverses ----------------------------------------------------------------------------------


@pytest.mark.parametrize("text, want", [
    ("(4,2):(-1,4)", "1:0"),   # no mode of stride +1: only R(0) = 0
    ("(2,3):(-3,1)", "3:2"),   # the stride-1 mode is mode 1, whose index stride is 2; stride 3 is -3: stop
    ("(4,2):(2,-1)", "1:0"),
    ("(3,4):(4,-1)", "1:0"),
])
def test_right_inverse_negative_strides(text, want):
    L = P(text)
    R = la.right_inverse(L)
    assert str(R) == want
    for i in range(la.size(R)):
        assert 0 <= R(i) < la.size(L) and L(R(i)) == i


def test_max_common_vector_and_layout_of_reversed_vectors_match_cute():
    assert la.max_common_vector(P("2:-1"), P("2:-1")) == 1  # CuTe 4.2: 1
    assert str(la.max_common_layout(P("2:-1"), P("2:-1"))) == "1:0"


def test_right_inverse_of_composed_layout_without_0_in_its_image_is_refused():
    C = ComposedLayout(Swizzle(2, 2, 2), 2, Layout(2, 1))  # offsets 2, 3: 0 is never reached
    assert offsets(C) == [2, 3]
    with pytest.raises(LayoutError, match="0 is not in the image"):
        la.right_inverse(C)


@pytest.mark.parametrize("text", ["(2,3):(2,1)", "(2,(4,3,6)):(4,(0,4,2))"])
def test_left_inverse_of_overlapping_layouts_is_refused(text):
    # (2,3):(2,1) has offsets 0,2,1,3,2,4: no R has L(R(L(i))) == L(i) as a layout (CuTe: (2,2):(2,1) fails at i=5)
    with pytest.raises(LayoutError, match="not injective"):
        la.left_inverse(P(text))


def test_left_inverse_keeps_the_broadcast_quasi_inverse():
    L = P("(2,4):(0,1)")  # offsets 0..3, each twice
    R = la.left_inverse(L)
    assert all(L(R(L(i))) == L(i) for i in range(8))


# --- complement --------------------------------------------------------------------------------


def test_complement_with_a_shape_cotarget_covers_its_product():
    # 3:1 needs ceil(8/3) = 3 copies; CuTe folds (2,4) mode by mode and gets 2 (covers 6 < 8)
    assert str(la.complement(P("3:1"), (2, 4))) == "3:3"
    assert la.complement(P("3:1"), (2, 4)) == la.complement(P("3:1"), 8)


@pytest.mark.parametrize("text, m, want", [
    ("(2,2):(1,3)", 6, "2:6"),          # L: {0,1,3,4}; CuTe's 1:0 reaches 5 < 6; one more copy at 6
    ("(2,2):(3,8)", 16, "(3,2):(1,16)"),  # L: {0,3,8,11}, gap 3:1 below 3; CuTe's 3:1 reaches 14 < 16
    ("(3,2):(1,4)", 24, "4:8"),          # L: {0,1,2,4,5,6}; CuTe's 3:8 reaches 23 < 24
])
def test_complement_with_inexact_gaps_reaches_the_cotarget(text, m, want):
    L = P(text)
    C = la.complement(L, m)
    assert str(C) == want
    LC = la.make_layout(L, C)
    offs = [LC(i) for i in range(la.size(LC))]
    assert len(set(offs)) == len(offs) and max(offs) + 1 >= m
    assert all(C(i - 1) < C(i) for i in range(1, la.size(C)))


# --- common vectors and casts ------------------------------------------------------------------


def test_max_common_vector_of_a_swizzle_with_an_unaligned_offset():
    C = ComposedLayout(Swizzle(1, 1, -2), 1, Layout(2, 1))  # offsets 1, then 2 ^ (2 & 2) << 2 = 10
    assert offsets(C) == [1, 10]
    assert la.max_common_vector(C, Layout(2, 1)) == 1  # CuTe: 2


@pytest.mark.parametrize("text, n", [("2:-1", 2), ("8:-1", 4)])
def test_upcast_of_a_reversed_mode_below_the_vector_is_refused(text, n):
    # 2:-1 by 2: offsets 0, -1 lie in vectors 0 and -1; CuTe's 1:-1 keeps only vector 0
    with pytest.raises(LayoutError, match="straddles"):
        la.upcast(P(text), n)


def test_upcast_of_a_negative_stride_multiple_of_the_vector():
    assert str(la.upcast(P("(2,3):(1,-4)"), 2)) == "(1,3):(1,-2)"
    # 5:-4 by 8: offsets 0,-4,..,-16 lie in vectors 0,-1,-1,-2,-2: CuTe's 3:-1 (as layoutalg's) is right
    assert str(la.upcast(P("5:-4"), 8)) == "3:-1"


def test_upcast_of_a_swizzle_narrower_than_the_vector_is_refused():
    C = ComposedLayout(Swizzle(1, 0, 1), 0, Layout(4, 1))  # swaps elements 1, 2 inside vector pairs' boundary
    with pytest.raises(LayoutError, match="2\\*\\*M"):
        la.upcast(C, 2)


def test_upcast_of_a_bare_swizzle_narrower_than_the_vector_is_refused():
    assert la.upcast(Swizzle(3, 4, 3), 2) == Swizzle(3, 3, 3)
    with pytest.raises(LayoutError, match="2\\*\\*M"):
        la.upcast(Swizzle(1, 0, 1), 2)  # swaps elements 2 and 3 of vector 1; CuTe: Sw<0,0,1>
    assert Swizzle(1, 0, 1).upcast(2) == Swizzle(0, 0, 1)  # the method stays CuTe's


def test_downcast_grows_one_unit_stride_mode():
    # (1,2):(1,1) is 2:1 as a function; both give 4 elements 0..3 (CuTe: (2,4):(1,1), 8 elements)
    D = la.downcast(P("(1,2):(1,1)"), 2)
    assert str(D) == "(1,4):(2,1)"
    assert offsets(D) == offsets(la.downcast(P("2:1"), 2)) == [0, 1, 2, 3]
    # a reversed mode (CuTe's precondition wants a stride +1 mode, here of size 1): element x is 2x, 2x+1
    D = la.downcast(P("(4,1):(-1,1)"), 2)
    assert sorted(offsets(D)) == sorted(2 * x + r for x in (0, -1, -2, -3) for r in (0, 1))
    # a lone reversed mode grows as docs/model.md says: 4:-1 -> (2,4):(1,-2) (issue 29 asked for it)
    D = la.downcast(P("4:-1"), 2)
    assert str(D) == "(2,4):(1,-2)"
    assert sorted(offsets(D)) == sorted(2 * x + r for x in (0, -1, -2, -3) for r in (0, 1))
    with pytest.raises(LayoutError, match="stride-1"):
        la.downcast(P("4:2"), 2)


def test_recast_layout_is_a_function_of_the_layout():
    # (2,2):(1,2) and 4:1 are the same function: recast to 24 -> 16 bits gives 6 elements 0..5 for both
    R = la.recast_layout(P("(2,2):(1,2)"), 24, 16)
    assert sorted(offsets(R)) == sorted(offsets(la.recast_layout(P("4:1"), 24, 16))) == list(range(6))


# --- divides and products with negative-stride tilers ------------------------------------------


def test_logical_product_with_a_reversed_tiler():
    # complement(2:2, 2*cosize) is (2,..):(1,4..), not one mode: B's offset -1 crosses it -- refused
    A, B = P("2:2"), P("(2,2):(2,-1)")
    try:
        R = la.logical_product(A, B)
    except LayoutError:
        return
    C = la.complement(A, la.size(A) * la.cosize(B))
    assert [R[1](i) for i in range(4)] == [C(B(i)) for i in range(4)]


# --- rank-0 layouts ----------------------------------------------------------------------------


def test_rank0_layouts_mean_one_element_at_offset_0():
    assert la.coalesce(E) == E and la.coalesce(EE) == E  # the CuTe DSL: coalesce(():()) is ():()
    assert la.filter(E) == E
    assert la.composition(E, P("55:0")) == P("55:0")  # the CuTe DSL: 55:0
    assert la.composition(P("4:2"), E) == E
    assert la.with_shape(E, (2, 3)) == Layout((2, 3), (0, 0))
    assert la.complement(E, 8) == P("8:1")
    assert str(la.right_inverse(E)) == str(la.left_inverse(E)) == "1:0"
    assert la.max_common_vector(E, E) == 1
    assert str(la.max_common_layout(EE, E)) == "1:0"
    assert la.size(la.nullspace(E)) == 1
    for op in (la.logical_divide, la.zipped_divide, la.tiled_divide, la.flat_divide):
        for A in (E, EE):
            R = op(A, P("4:1"))
            assert la.size(R) == 4 and offsets(R) == [0, 0, 0, 0]
    assert offsets(la.logical_divide(EE, (P("2:1"), None))) == [0, 0]
    # a product repeats the one-element block at the complement's offsets 0, 1
    assert offsets(la.logical_product(EE, (P("2:1"), None))) == [0, 1]


def test_composition_check_past_64_bits_splits_negative_indices_as_cute():
    # found by the exhaustive profile: the Python-int check read A(-2) with floor division
    A, B = Layout(((3,), 1), ((-(2**31),), 3 * 2**31)), Layout(((2,), 3), ((-3,), 1))
    # B(3) = -3 + 1 = -2 and A(-2) = -A(2) = 2**32; the mode-by-mode result gives -2**33 there
    with pytest.raises(CompositionError):
        la.composition(A, B)


def test_rank0_mode_under_a_none_tiler_stays_as_it_is():
    # found by the exhaustive profile: '_' left a rank-0 mode as 1:0 instead of itself
    assert la.logical_divide(EE, (None,)) == EE
    assert la.logical_divide(E, None) == E
