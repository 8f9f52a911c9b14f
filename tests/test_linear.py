"""to_linear / from_linear: F2 bases of power-of-two layouts and swizzles (Triton's format)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from layoutalg.composed import ComposedLayout, parse_composed
from layoutalg.errors import LayoutError
from layoutalg.layout import Layout
from layoutalg.linear import LinearLayout, from_linear, is_f2_linear, to_linear
from layoutalg.swizzle import Swizzle
from layoutalg.verify import equivalent


def xor_eval(bases, i):
    acc = 0
    for j, b in enumerate(bases):
        if i >> j & 1:
            acc ^= b
    return acc


@st.composite
def pow2_layouts(draw):
    """Random power-of-two layouts whose strides are a permutation of disjoint bit blocks (plus zeros)."""
    k = draw(st.integers(1, 4))
    logs = [draw(st.integers(0, 3)) for _ in range(k)]
    perm = draw(st.permutations(range(k)))
    strides = [0] * k
    acc = 1
    for p in perm:
        strides[p] = acc
        acc <<= logs[p]
    zero = draw(st.integers(-1, k - 1))
    if zero >= 0:
        strides[zero] = 0
    shape = tuple(1 << x for x in logs)
    split = draw(st.integers(1, k))
    if split < k:
        return Layout((shape[:split], shape[split:]), (tuple(strides[:split]), tuple(strides[split:])))
    return Layout(shape, tuple(strides))


@given(pow2_layouts(), st.sampled_from([None, Swizzle(1, 0, 1), Swizzle(2, 1, 3), Swizzle(1, 2, -2)]))
@settings(max_examples=150, deadline=None)
def test_round_trip(L, sw):
    F = L if sw is None else ComposedLayout(sw, 0, L)
    lin = to_linear(F)
    table = F.table()
    flat = lin.flat_bases()
    assert [xor_eval(flat, i) for i in range(len(table))] == table.tolist()
    back = from_linear(lin)
    assert np.array_equal(np.asarray(back.table()), table)
    assert back.size() == F.size()  # the function comes back; the spelling may be another
    assert equivalent(back, F)
    # Triton's dict format round-trips too
    assert np.array_equal(np.asarray(from_linear(lin.as_dict()).table()), table)


def test_by_hand():
    lin = to_linear(Layout((2, 4), (4, 1)), in_dims=["row", "col"])
    assert lin.as_dict() == {"row": [[4]], "col": [[1], [2]]}
    assert lin.in_dims == {"row": 2, "col": 4}
    assert dict(lin.out_dims) == {"offset": 8}
    assert lin(1, 3) == (7,)
    # 128B swizzle: row bits (strides 64, 128, 256) also flip chunk bits 4..6 from bits 7..9
    sw128 = to_linear(parse_composed("Sw<3,4,3> o _0 o (8,64):(64,1)")).flat_bases()
    assert sw128 == (64, 128 ^ 16, 256 ^ 32, 1, 2, 4, 8, 16, 32)


@pytest.mark.parametrize("bad", [
    Layout(3, 1), Layout((2, 2), (1, 1)), Layout(4, 3), Layout(4, -1),
    ComposedLayout(Swizzle(1, 1, 1), 1, Layout(8, 1)),
])
def test_not_linear(bad):
    assert not is_f2_linear(bad)
    with pytest.raises(LayoutError):
        to_linear(bad)


def test_from_linear_needs_swizzle_or_fails():
    assert from_linear({"x": [[1], [2], [6]]}) == ComposedLayout(Swizzle(1, 1, 1), 0, Layout(8, 1))
    with pytest.raises(LayoutError):
        from_linear({"x": [[3], [5], [6]]})  # not a layout, no single swizzle fixes it
    with pytest.raises(LayoutError):
        from_linear({"x": [[1, 2]]})
    with pytest.raises(LayoutError):
        from_linear([1, 2])


def test_linear_layout_on_arrays():
    lin = to_linear(Layout((4, 4), (4, 1)))
    r, c = np.meshgrid(np.arange(4), np.arange(4), indexing="ij")
    assert np.array_equal(lin(r, c)[0], 4 * r + c)
    assert isinstance(lin, LinearLayout) and "LinearLayout" in str(lin)
