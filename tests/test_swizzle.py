"""Swizzle<B,M,S>: CuTe's definition bit for bit (checked against pycute and by hand)."""

import numpy as np
import pycute
import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from layoutalg.errors import LayoutError
from layoutalg.swizzle import Swizzle, compose_swizzles, make_swizzle, parse_swizzle


@st.composite
def swizzles(draw, max_bits=4, max_base=5):
    b = draw(st.integers(0, max_bits))
    m = draw(st.integers(0, max_base))
    s_abs = draw(st.integers(b, b + 4))
    s = s_abs if draw(st.booleans()) else -s_abs
    if s == 0 and b == 0:
        s = 0
    return Swizzle(b, m, s)


def test_by_hand_128B():
    # 128B swizzle on 16-byte chunks: bits 4..6 ^= bits 7..9
    sw = Swizzle(3, 4, 3)
    assert sw.yyy_mask == 0b1110000000 and sw.zzz_mask == 0b0001110000
    # row 1 (bit 7), chunk 0 -> chunk 1
    assert sw(128) == 128 + 16
    # row 5 (bits 7, 9), chunk 2 (bit 5), byte 3 -> chunk 2 ^ 5 = 7
    assert sw(5 * 128 + 2 * 16 + 3) == 5 * 128 + 7 * 16 + 3


@given(swizzles(), st.integers(0, 1 << 14))
@settings(max_examples=300, deadline=None)
def test_matches_pycute(sw, x):
    if sw.S == 0:  # pycute's shiftr/shiftl recurse forever on a shift of 0 (only B = 0 allows it)
        assert sw(x) == x
        return
    ref = pycute.Swizzle(sw.B, sw.M, sw.S)
    assert sw(x) == ref(x)
    assert sw.yyy_mask == ref.yyy_msk and sw.zzz_mask == ref.zzz_msk


@given(swizzles())
@settings(max_examples=200, deadline=None)
def test_bijection_on_period_and_inverse(sw):
    n = sw.period
    xs = np.arange(n, dtype=np.int64)
    ys = sw(xs)
    assert sorted(ys.tolist()) == list(range(n))  # a permutation of [0, period)
    assert np.array_equal(sw.inverse()(ys), xs)
    # periodic extension
    assert np.array_equal(sw(xs + n), ys + n)


@given(swizzles(), st.integers(0, 4096))
@settings(max_examples=100, deadline=None)
def test_int_numpy_sympy_agree(sw, x):
    assert sw(np.array([x]))[0] == sw(x)
    assert sw(sympy.Integer(x)) == sw(x)
    k = sympy.Symbol("k", integer=True, nonnegative=True)
    assert sympy.sympify(sw(k)).subs(k, x) == sw(x)


def test_identity_and_printing():
    assert Swizzle(0, 4, 3).is_identity
    assert all(Swizzle(0, 4, 3)(x) == x for x in range(100))
    assert str(Swizzle(3, 4, 3)) == "Sw<3,4,3>" and Swizzle(3, 4, 3).ptx == "Swizzle<3,4,3>"
    assert parse_swizzle("Swizzle<1,4,3>") == Swizzle(1, 4, 3) == parse_swizzle(repr(Swizzle(1, 4, 3)))
    assert hash(Swizzle(1, 4, 3)) == hash(Swizzle(1, 4, 3))
    with pytest.raises(AttributeError):
        Swizzle(1, 4, 3).B = 2


@pytest.mark.parametrize("args", [(-1, 0, 0), (0, -1, 0), (3, 4, 2), (2, 0, -1), (1.5, 0, 2), (True, 0, 1)])
def test_bad_parameters(args):
    with pytest.raises(LayoutError):
        Swizzle(*args)


def test_bad_parse():
    with pytest.raises(LayoutError):
        parse_swizzle("Swizzle<1,4>")


@given(swizzles(max_base=6), st.sampled_from([1, 2, 4, 8, 16]), st.integers(0, 1 << 12))
@settings(max_examples=200, deadline=None)
def test_units(sw, bpe, e):
    k = bpe.bit_length() - 1
    if k > sw.M:
        with pytest.raises(LayoutError):
            sw.to_elements(bpe)
        return
    el = sw.to_elements(bpe)
    # the same permutation: on byte offset e*bpe vs element offset e
    assert sw(e * bpe) == el(e) * bpe
    assert el.to_bytes(bpe) == sw


def test_units_errors():
    with pytest.raises(LayoutError):
        Swizzle(3, 4, 3).to_elements(3)
    with pytest.raises(LayoutError):
        Swizzle(3, 1, 3).to_elements(4)
    with pytest.raises(LayoutError):
        Swizzle(3, 4, 3).to_bytes(0)


def test_upcast_downcast_cute():
    assert Swizzle(3, 4, 3).upcast(16) == Swizzle(3, 0, 3)
    assert Swizzle(3, 4, 3).upcast(64) == Swizzle(1, 0, 3)  # CuTe keeps max(B + M - log2 N, 0) bits
    assert Swizzle(3, 4, 3).downcast(8) == Swizzle(3, 7, 3)


def test_make_swizzle_and_compose():
    for sw in [Swizzle(1, 2, 1), Swizzle(2, 1, 5), Swizzle(3, 4, 3), Swizzle(2, 3, -4)]:
        assert make_swizzle(sw.yyy_mask, sw.zzz_mask) == sw
    with pytest.raises(LayoutError):
        make_swizzle(0b101, 0b11000)
    with pytest.raises(LayoutError):
        make_swizzle(0b1, 0b11)
    a, b = Swizzle(1, 4, 3), Swizzle(1, 5, 3)
    c = compose_swizzles(a, b)
    assert all(c(x) == a(b(x)) for x in range(1024))
    with pytest.raises(LayoutError):
        compose_swizzles(Swizzle(1, 4, 3), Swizzle(1, 4, 2))


def test_basis_is_linear():
    sw = Swizzle(2, 1, 3)
    basis = sw.basis(8)
    for x in range(256):
        acc = 0
        for j in range(8):
            if x >> j & 1:
                acc ^= basis[j]
        assert acc == sw(x)
