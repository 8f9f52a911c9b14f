"""Bad input gets a LayoutError (a ValueError) that names the operation, never a bare Python error."""

from __future__ import annotations

import pytest

import layoutalg as la
from layoutalg import Layout, LayoutError


def _deep(n):
    t = 2
    for _ in range(n):
        t = (t,)
    return t


BAD = {
    "stride not congruent": (lambda: Layout((2, 3), (1,)), "Layout"),
    "zero shape": (lambda: Layout(0), "Layout"),
    "negative shape": (lambda: Layout(-2, 1), "Layout"),
    "string shape": (lambda: Layout("a"), "Layout"),
    "float shape": (lambda: Layout(2.5), "Layout"),
    "None shape": (lambda: Layout(None), "Layout"),
    "bool shape": (lambda: Layout(True), "Layout"),
    "nested stride mismatch": (lambda: Layout((2, (3, 4)), (1, 3)), "Layout"),
    "deep nesting": (lambda: Layout(_deep(3000)), "Layout"),
    "too many coordinates": (lambda: Layout((2, 2))(1, 2, 3), "Layout"),
    "no such mode": (lambda: Layout((2, 2))[5], "Layout"),
    "string coordinate": (lambda: Layout(4)("x"), "Layout"),
    "composition with a string": (lambda: la.composition(Layout(4), "x"), "composition"),
    "composition of a string": (lambda: la.composition("x", Layout(4)), "composition"),
    "composition with size 0": (lambda: la.composition(Layout(4), 0), "composition"),
    "tiler longer than layout": (lambda: la.composition(Layout(4), (2, 2)), "composition"),
    "stride divisibility": (lambda: la.composition(Layout((4, 6), (1, 10)), Layout(2, 6)), "stride divisib"),
    "shape divisibility": (lambda: la.composition(Layout((4, 6), (1, 10)), Layout(6, 1)), "shape divisib"),
    "pycute's wrong composition": (lambda: la.composition(la.parse("((2,6,6),6):((6,2,8),0)"), Layout(3, 1)),
                                   "composition"),
    "not a layout function": (lambda: la.composition(Layout((2, 2), (10, 1)), Layout((2, 2), (1, 1))),
                              "not a layout"),
    "complement cotarget 0": (lambda: la.complement(Layout(4), 0), "complement"),
    "complement cotarget string": (lambda: la.complement(Layout(4), "a"), "complement"),
    "complement of non-injective": (lambda: la.complement(Layout((2, 2), (1, 1)), 8), "not injective"),
    "left_inverse divisibility": (lambda: la.left_inverse(Layout((2, 2), (2, 3))), "divisibility"),
    "divide by a string": (lambda: la.logical_divide(Layout(4), "a"), "logical_divide"),
    "divide by 0": (lambda: la.logical_divide(Layout(4), 0), "logical_divide"),
    "product with a string": (lambda: la.logical_product(Layout(4), "a"), "logical_product"),
    "blocked product with a string": (lambda: la.blocked_product(Layout(4), "a"), "blocked_product"),
    "zipped divide tiler too long": (lambda: la.zipped_divide(Layout(4), (2, 2)), "zipped_divide"),
    "upcast by 0": (lambda: la.upcast(Layout(4), 0), "upcast"),
    "upcast not divisible": (lambda: la.upcast(Layout((4, 2)), 3), "upcast"),
    "downcast without stride 1": (lambda: la.downcast(Layout(4, 2), 2), "downcast"),
    "recast 16 -> 24 bits": (lambda: la.recast_layout(Layout(4, 2), 16, 24), "upcast"),
    "tile_to_shape not dividing": (lambda: la.tile_to_shape(Layout((3, 2)), (4, 4)), "tile_to_shape"),
    "tile_to_shape rank": (lambda: la.tile_to_shape(Layout((2, 2, 2)), (4, 4)), "tile_to_shape"),
    "coalesce profile too long": (lambda: la.coalesce(Layout(4), (1, 1)), "coalesce"),
    "group out of range": (lambda: la.group(Layout((2, 2)), 1, 5), "group"),
    "table of a symbolic layout": (lambda: la.parse("(m,2):(1,m)").table(), "table"),
    "max_common_vector of a string": (lambda: la.max_common_vector(Layout(4), "a"), "max_common_vector"),
    "right_inverse of a string": (lambda: la.right_inverse("a"), "right_inverse"),
    "size of a string": (lambda: la.size("x"), "size"),
    "parse empty": (lambda: la.parse(""), "parse"),
    "parse unclosed": (lambda: la.parse("(2,"), "parse"),
    "parse missing stride": (lambda: la.parse("2:"), "parse"),
    "parse two colons": (lambda: la.parse("2:1:3"), "parse"),
    "parse incongruent": (lambda: la.parse("(2,3):(1)"), "parse"),
    "parse non-string": (lambda: la.parse(5), "parse"),
    "parse bad swizzle": (lambda: la.parse("Swizzle<1,2>"), "parse"),
    "parse bad character": (lambda: la.parse("#"), "parse"),
    "parse deep": (lambda: la.parse("(" * 3000 + "2" + ")" * 3000), "parse"),
    "swizzle |S| < B": (lambda: la.Swizzle(1, 2, 0), "Swizzle"),
    "swizzle B < 0": (lambda: la.Swizzle(-1, 2, 3), "Swizzle"),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_input_raises_layout_error(name):
    fn, word = BAD[name]
    with pytest.raises(LayoutError) as info:
        fn()
    assert isinstance(info.value, ValueError)
    assert word.lower() in str(info.value).lower(), str(info.value)


def test_parse_error_names_the_column():
    with pytest.raises(LayoutError, match="column 11"):
        la.parse("(8,4):(1,8")


def test_symbolic_algebra_decides_or_names_the_undecidable_condition():
    L = la.parse("((8,m),(T,2k)):((T,SBO),(1,LBO))")
    assert str(la.composition(L, Layout(8, 1))) == "8:T"
    assert str(la.logical_divide(la.parse("(8,m):(1,8)"), 4)) == "(4,2*m):(1,4)"
    with pytest.raises(LayoutError, match="cannot decide"):
        la.composition(L, Layout(16, 1))  # 16 vs m: m may or may not be a multiple of 2
    with pytest.raises(LayoutError, match="cannot decide"):
        la.complement(la.parse("(T,8):(1,SBO)"))  # is SBO >= T*... ? unknown


def test_negative_indices_follow_cute_truncating_division():
    # CuTe (C++) evaluates a negative index with truncating division: -1 in (2,2):(1,10) is (-1, 0)
    L = Layout((2, 2), (1, 10))
    assert L(-1) == -1 and L(-3) == -1 + -1 * 10
    import numpy as np

    assert L(np.array([-3, -1, 0, 3])).tolist() == [-11, -1, 0, 11]


def test_composition_when_the_rest_fits_in_one_mode():
    # from CuTe's unit tests: 32 elements of a 48-long stride-1 mode
    assert str(la.composition(la.parse("(48,24,5):(1,128,3072)"), Layout(32, 1))) == "32:1"
    # and its negative-stride cases ("the SM80 fp64 MMA NT problem")
    A = la.parse("(1,(2,4)):(0,(-1,512))")
    for b in ("2:-1", "4:-1"):
        B = la.parse(b)
        R = la.composition(A, B)
        assert [R(i) for i in range(B.size())] == [A(B(i)) for i in range(B.size())]
