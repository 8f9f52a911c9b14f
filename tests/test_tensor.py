"""Tensors: slicing, the swizzle decay, local_tile / local_partition -- laws on random layouts,
hand-worked examples, and CuTe's own documented examples (cute/tensor_impl.hpp comments)."""

from __future__ import annotations

import itertools
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import layouts

from layoutalg import ComposedLayout, Layout, LayoutError, Swizzle
from layoutalg import inttuple as it
from layoutalg.tensor import (
    Tensor,
    _,
    dice,
    get_flat_coord,
    local_partition,
    local_tile,
    make_fragment_like,
    make_layout_like,
    make_tensor,
    slice_,
    slice_and_offset,
    zipped_divide,
)


# --------------------------------------------------------------------------- slicing
def _coords(shape):
    """Every coordinate of a (possibly nested) shape, colexicographically."""
    n = it.product(shape)
    return [it.idx2crd(i, shape) for i in range(n)]


@st.composite
def layout_and_slice(draw):
    L = draw(layouts(max_leaves=4, max_size=256))
    if type(L.shape) is not tuple:
        L = Layout((L.shape,), (L.stride,))

    def pick(s):
        if type(s) is tuple and draw(st.booleans()):
            return tuple(pick(x) for x in s)
        return _ if draw(st.booleans()) else draw(st.integers(0, it.product(s) - 1))

    c = tuple(pick(s) for s in L.shape)
    if not _has_us(c):
        c = (_,) + c[1:]
    return L, c


def _has_us(c):
    return c is _ or (type(c) is tuple and any(_has_us(x) for x in c))


def _fill(c, sub, pos=None):
    """Replace the underscores of c, in order, by the entries of the coordinate ``sub`` (flattened)."""
    pos = pos if pos is not None else iter(sub)
    if c is _:
        return next(pos)
    if type(c) is tuple:
        return tuple(_fill(x, sub, pos) for x in c)
    return c


@given(layout_and_slice())
def test_slice_is_the_function_restricted(args):
    """T(c with _)(k) == T(c with the _ replaced by k's coordinate), for every k: slicing keeps the function."""
    L, c = args
    T = make_tensor(L)
    S = T(c)
    kept = slice_(c, L.shape)
    kept = kept if type(kept) is tuple else (kept,)
    for k, sub in enumerate(_coords(kept)):
        sub = sub if type(sub) is tuple else (sub,)
        full = _fill(c, list(sub))
        assert S.address(k) == T.address(full)


def test_slice_examples_by_hand():
    T = make_tensor(Layout(((4, 3), 5), ((1, 4), 12)))
    S = T((_, 2), _)  # fix the 3-mode at 2: offset 2*4 = 8, keep (4, 5)
    assert S.offset == 8 and str(S.layout) == "(4,5):(1,12)"
    assert slice_((_, (1, _)), (4, (2, 3))) == (4, 3)
    assert dice((_, (1, _)), (4, (2, 3))) == (2,)
    assert make_tensor(Layout(8))[3] == 3
    with pytest.raises(LayoutError, match="does not match"):
        slice_((_, 1, 2), (4, 8))
    with pytest.raises(LayoutError, match="slice"):
        T[slice(1, 3), 0]


# --------------------------------------------------------------------------- swizzle decay
@st.composite
def swizzled_slices(draw):
    B = draw(st.integers(1, 3))
    M = draw(st.integers(0, 4))
    S = draw(st.integers(B, 4))
    rows = draw(st.sampled_from([8, 16, 32]))
    cols = draw(st.sampled_from([8, 16, 32, 64]))
    row_major = draw(st.booleans())
    L = Layout((rows, cols), (cols, 1)) if row_major else Layout((rows, cols), (1, rows))
    inner = Layout(((2, rows // 2), (4, cols // 4)), ((L.stride[0], 2 * L.stride[0]), (L.stride[1], 4 * L.stride[1])))
    c = ((draw(st.integers(0, 1)), _), (_, draw(st.integers(0, cols // 4 - 1)))) if draw(st.booleans()) else \
        ((_, draw(st.integers(0, rows // 2 - 1))), (draw(st.integers(0, 3)), _))
    off = draw(st.sampled_from([0, 0, 8, 64]))
    return ComposedLayout(Swizzle(B, M, S), off, inner), c


@settings(max_examples=80)
@given(swizzled_slices())
def test_swizzle_decay_keeps_every_address(args):
    """CuTe's decay of a sliced swizzled layout to run-time strides is the same function."""
    C, c = args
    T = make_tensor(C)
    S = T(c)
    kept = slice_(c, C.inner.shape)
    for k, sub in enumerate(_coords(kept)):
        sub = sub if type(sub) is tuple else (sub,)
        assert S.address(k) == T.address(_fill(c, list(sub)))


def test_swizzle_decay_by_hand():
    # Sw<3,3,3> o (64x32 row-major): element (r, c) at 32r + c, then bits 3..5 ^= bits 6..8.
    # Row 10: 320 = 0b101_000_000, so bits 6..8 = 0b101 flip bits 3 and 5 of the column:
    # columns 0, 8, 16, 24 land at 320 + (0, 8, 16, 24) ^ 0b101000 = 360, 352, 376, 368.
    sw = Swizzle(3, 3, 3)
    T = make_tensor(ComposedLayout(sw, 0, Layout((64, 32), (32, 1))))
    S = T(10, _)
    assert [S.address(j) for j in range(0, 32, 8)] == [360, 352, 376, 368]
    # CuTe's decay: a plain layout with run-time strides. In this row the swizzle sets bit 3 (8 -> -8)
    # and leaves bit 4 alone (16), so the 32 columns are (8,2,2):(1,-8,16) from 360
    assert isinstance(S.layout, Layout) and S.offset == 360
    assert str(S.layout) == "((8,2,2)):((1,-8,16))"
    L, off = slice_and_offset(((_, 1), 5, _), Layout(((8, 4), 8, 2), ((1, 8), 32, 16)))
    assert (str(L), off) == ("(8,2):(1,16)", 168)


def test_swizzle_decay_falls_back_where_bits_carry():
    # offset 8 has the Y bit of Sw<1,0,3> set, and the kept mode reaches bit 3 too: 8 + 8 carries,
    # which CuTe's decay does not allow for; the slice must still be the same function
    C = ComposedLayout(Swizzle(1, 0, 3), 8, Layout(((2, 4), (4, 2)), ((1, 2), (8, 32))))
    T = make_tensor(C)
    S = T((0, _), (_, 0))
    assert [S.address(k) for k in range(16)] == [T.address((0, k % 4), (k // 4, 0)) for k in range(16)]


def test_swizzle_ptr_keeps_static_strides():
    C = ComposedLayout(Swizzle(3, 3, 3), 0, Layout((64, 32), (32, 1)))
    T = make_tensor(C, swizzle_ptr=True)
    S = T(10, _)
    assert str(S.layout) == "(32):(1)" and S.offset == 320
    assert S.addresses().tolist() == [Swizzle(3, 3, 3)(320 + j) for j in range(32)]
    assert S.addresses().tolist() == make_tensor(C)(10, _).addresses().tolist()
    with pytest.raises(LayoutError, match="swizzle_ptr"):
        make_tensor(Layout(4), swizzle_ptr=True)


# --------------------------------------------------------------------------- partitions
def test_cute_doc_examples():
    # cute/tensor_impl.hpp: local_tile(data, Shape<_32,_64>, (bx, by)) -> (_32,_64)
    data = make_tensor(Layout((128, 256)))
    blk = local_tile(data, (32, 64), (2, 1))
    assert blk.shape == (32, 64) and blk.offset == 2 * 32 + 1 * 64 * 128
    # local_tile with projections: ctaA (32,4,k), ctaB (64,4,k), ctaC (32,64)
    A, B, Cm = make_tensor(Layout((128, 64))), make_tensor(Layout((256, 64))), make_tensor(Layout((128, 256)))
    tiler, coord = (32, 64, 4), (1, 2, _)
    assert local_tile(A, tiler, coord, (1, _, 1)).shape == (32, 4, 16)
    assert local_tile(B, tiler, coord, (_, 1, 1)).shape == (64, 4, 16)
    assert local_tile(Cm, tiler, coord, (1, 1, _)).shape == (32, 64)
    # local_partition(data (_16,_64), Layout<Shape<_2,_16>>, thr) -> (_8,_4)
    part = local_partition(make_tensor(Layout((16, 64))), Layout((2, 16)), 5)
    assert part.shape == (8, 4)
    # with a projection: thr_layout (2,16,1):(16,1,0), thrA (M/2,K/1), thrB (N/16,K/1), thrC (M/2,N/16)
    tl = Layout((2, 16, 1), (16, 1, 0))
    assert local_partition(make_tensor(Layout((64, 32))), tl, 3, (1, _, 1)).shape == (32, 32)
    assert local_partition(make_tensor(Layout((64, 32))), tl, 3, (_, 1, 1)).shape == (4, 32)
    assert local_partition(make_tensor(Layout((64, 64))), tl, 3, (1, 1, _)).shape == (32, 4)


@given(st.sampled_from([(2, 2), (4, 1), (1, 4), (2, 4), (8, 2)]), st.booleans())
def test_local_partition_splits_the_tensor_exactly(thr_shape, row_major):
    """Every element goes to exactly one thread, and thread t's elements are those whose coordinate
    modulo the thread grid is t's coordinate."""
    M, N = 16, 8
    data = make_tensor(Layout((M, N), (N, 1)) if row_major else Layout((M, N)))
    thr = Layout(thr_shape, (thr_shape[1], 1)) if row_major else Layout(thr_shape)
    address = {(m, n): data.address(m, n) for m in range(M) for n in range(N)}  # element (m, n)'s address
    seen = []
    for t in range(thr.size()):
        p = local_partition(data, thr, t)
        seen += p.addresses().tolist()
        ci = get_flat_coord(thr, t)
        want = sorted(a for (m, n), a in address.items() if (m % thr_shape[0], n % thr_shape[1]) == tuple(ci))
        assert sorted(p.addresses().tolist()) == want
    assert sorted(seen) == list(range(M * N))


@given(st.sampled_from([(8, 4), (4, 8), (2, 2), (16, 1)]), st.integers(0, 3), st.integers(0, 1))
def test_local_tile_is_the_block(tile, bi, bj):
    A = np.arange(32 * 16).reshape(32, 16)
    T = make_tensor(A)
    bi, bj = bi % (32 // tile[0]), bj % (16 // tile[1])
    blk = local_tile(T, tile, (bi, bj))
    want = A[bi * tile[0]:(bi + 1) * tile[0], bj * tile[1]:(bj + 1) * tile[1]]
    got = np.array([[blk(i, j) for j in range(tile[1])] for i in range(tile[0])])
    assert np.array_equal(got, want)


def test_partition_errors():
    T = make_tensor(Layout((10, 8)))
    with pytest.raises(LayoutError, match="does not divide"):
        local_tile(T, (4, 8), (0, 0))
    with pytest.raises(LayoutError, match="outside"):
        local_partition(T, Layout((2, 2)), 9)
    with pytest.raises(LayoutError, match="not a Layout"):
        local_partition(T, (2, 2), 0)
    with pytest.raises(LayoutError, match="no inverse"):
        get_flat_coord(Layout((4, 2), (1, 0)), 3)


def test_zipped_divide_underscore_splits_a_rank2_mode():
    L = Layout(((4, 2), 6))
    assert str(zipped_divide(L, (_, 3))) == "((4,3),(2,2)):((1,8),(4,24))"
    with pytest.raises(LayoutError, match="rank 2"):
        zipped_divide(Layout((8, 6)), (_, 3))


# --------------------------------------------------------------------------- fragments
def test_make_fragment_like_follows_cute():
    # CuTe's own comment (layout.hpp): make_layout_like((_2,_2,_2,_2):(_0,_2,_4,_1)) -> same
    assert str(make_layout_like(Layout((2, 2, 2, 2), (0, 2, 4, 1)))) == "(2,2,2,2):(0,2,4,1)"
    # mode 0 column-major (its stride-0 mode kept), the rest ordered by the source strides; CuTe
    # (compiled) prints ((_2,_2),_4,_2):((_0,_1),_2,_8) and, for a rank-2 layout, (_4,(_3)):(_1,(_4))
    assert str(make_fragment_like(Layout(((2, 2), 4, 2), ((0, 8), 1, 64)))) == "((2,2),4,2):((0,1),2,8)"
    F = make_fragment_like(make_tensor(Layout((4, 3), (3, 1)), np.arange(12.0)))
    assert str(F.layout) == "(4,(3)):(1,(4))" and F.data.tolist() == [0.0] * 12


def test_numpy_round_trip():
    for order in ("C", "F"):
        A = np.asarray(np.arange(24).reshape(2, 3, 4), order=order)
        T = make_tensor(A)
        for i, j, k in itertools.product(range(2), range(3), range(4)):
            assert T(i, j, k) == A[i, j, k]
    assert make_tensor(np.arange(5))(_).values().tolist() == [0, 1, 2, 3, 4]
    with pytest.raises(LayoutError, match="buffer"):
        make_tensor(Layout(8, 2), np.arange(4)).values()


def _same_tensor(a, b) -> bool:
    return (type(a.layout) is type(b.layout) and str(a.layout) == str(b.layout) and a.offset == b.offset
            and a.swizzle == b.swizzle and a.data is b.data
            and getattr(a.layout, "dynamic", None) == getattr(b.layout, "dynamic", None))


@settings(max_examples=150)
@given(layouts(max_leaves=4, max_size=256), st.data())
def test_slices_are_the_tensors_each_coordinate_gives(L, data):
    """``T.slices(cs)`` is ``[T(c) for c in cs]``: plain, swizzled-pointer, composed and decayed layouts, mixed
    underscore patterns, and coordinates with no underscore (elements)."""
    kind = data.draw(st.sampled_from(["plain", "ptr", "composed", "decayed"]))
    buf = np.arange(int(L.cosize()) + 64) if data.draw(st.booleans()) else None
    if kind == "plain":
        T = Tensor(L, buf, offset=data.draw(st.integers(0, 40)))
    elif kind == "ptr":
        T = Tensor(L, None, offset=data.draw(st.integers(0, 40)), swizzle=Swizzle(2, 1, 2))
    else:
        T = Tensor(ComposedLayout(Swizzle(1, 1, 2), data.draw(st.integers(0, 8)), L), buf)
        if kind == "decayed" and type(L.shape) is tuple and len(L) > 1:
            try:
                T = T(*([_] * (len(L) - 1) + [0]))
            except LayoutError:  # some swizzled slices are refused (what is tested here is slicing the result)
                return
    shape = T.layout.inner.shape if isinstance(T.layout, ComposedLayout) else T.layout.shape
    modes = list(shape) if type(shape) is tuple else [shape]
    patterns = [[data.draw(st.booleans()) for _m in modes] for _p in range(2)]

    def coord(p):
        c = tuple(_ if keep else data.draw(st.integers(0, max(0, it.product(m) - 1))) for keep, m in zip(p, modes))
        return c if type(shape) is tuple else c[0]

    cs = [coord(patterns[data.draw(st.integers(0, 1))]) for _k in range(data.draw(st.integers(0, 6)))]
    try:
        want = [T(c) for c in cs]
    except LayoutError as e:
        with pytest.raises(LayoutError, match=re.escape(str(e)[:40])):
            T.slices(cs)
        return
    got = T.slices(cs)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert _same_tensor(g, w) if isinstance(w, Tensor) else (not isinstance(g, Tensor) and g == w), (str(T), cs)
