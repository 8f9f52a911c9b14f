"""Hypothesis strategies for layouts, shared by the algebra tests."""

from __future__ import annotations

from hypothesis import strategies as st

from layoutalg import Layout

SMALL_SHAPES = st.sampled_from([1, 2, 2, 3, 4, 4, 6, 8])
POW2_SHAPES = st.sampled_from([1, 2, 4, 8])


@st.composite
def nested_shape(draw, max_leaves: int = 4, leaf=SMALL_SHAPES, max_size: int = 4096):
    """A nested shape with at most ``max_leaves`` leaves and size at most ``max_size``."""
    n = draw(st.integers(1, max_leaves))
    leaves = [draw(leaf) for _ in range(n)]
    while _prod(leaves) > max_size:
        leaves.pop()
    if not leaves:
        leaves = [draw(leaf)]
    return _nest(draw, leaves)


def _prod(xs):
    p = 1
    for x in xs:
        p *= x
    return p


def _nest(draw, leaves):
    if len(leaves) == 1:
        return leaves[0] if draw(st.booleans()) else (leaves[0],) if draw(st.integers(0, 5)) == 0 else leaves[0]
    # split into groups
    out = []
    i = 0
    while i < len(leaves):
        k = draw(st.integers(1, len(leaves) - i))
        grp = leaves[i:i + k]
        out.append(grp[0] if len(grp) == 1 else tuple(grp) if draw(st.booleans()) else _nest(draw, grp))
        i += k
    return tuple(out) if len(out) > 1 else (out[0] if type(out[0]) is tuple else (out[0],))


def _strides_like(draw, shape, stride_leaf):
    if type(shape) is tuple:
        return tuple(_strides_like(draw, s, stride_leaf) for s in shape)
    return draw(stride_leaf)


STRIDES = st.sampled_from([0, 1, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 64])


@st.composite
def layouts(draw, max_leaves: int = 4, max_size: int = 4096, leaf=SMALL_SHAPES, strides=STRIDES):
    """Arbitrary layouts (possibly non-injective)."""
    shape = draw(nested_shape(max_leaves, leaf, max_size))
    return Layout(shape, _strides_like(draw, shape, strides))


@st.composite
def compact_layouts(draw, max_leaves: int = 4, max_size: int = 4096, leaf=SMALL_SHAPES):
    """Injective layouts: a permutation of the modes of a compact layout, optionally with gaps."""
    shape = draw(nested_shape(max_leaves, leaf, max_size))
    from layoutalg.inttuple import flatten, unflatten

    fs = list(flatten(shape))
    order = draw(st.permutations(list(range(len(fs)))))
    gaps = [draw(st.sampled_from([1, 1, 1, 2])) for _ in fs]
    strides = [0] * len(fs)
    p = 1
    for k in order:
        p *= gaps[k]
        strides[k] = p
        p *= fs[k]
    return Layout(shape, unflatten(strides, shape))
