"""Hypothesis strategies for layouts, shared by the algebra tests."""

from __future__ import annotations

import functools

from typing import Any

from hypothesis import strategies as st

from layoutalg import Layout

# The strategies drawn inside the composites below are built once and reused (hypothesis validates each new
# strategy object, and a composite's call builds a new one): the same strategies, so the same choices and
# examples, without the per-draw construction.
_BOOLS = st.booleans()


@functools.cache
def _ints(lo: int, hi: int) -> st.SearchStrategy[int]:
    return st.integers(lo, hi)


@functools.cache
def _perms(n: int) -> st.SearchStrategy[list[int]]:
    return st.permutations(list(range(n)))


@functools.cache
def _sampled(*xs: object) -> st.SearchStrategy:
    return st.sampled_from(list(xs))


@functools.cache
def _built(make: Any, *args: Any, **kwargs: Any) -> st.SearchStrategy:
    """``make(*args, **kwargs)`` (a composite strategy of this module, ``st.one_of``), built once per arguments."""
    return make(*args, **kwargs)


SMALL_SHAPES = st.sampled_from([1, 2, 2, 3, 4, 4, 6, 8])
POW2_SHAPES = st.sampled_from([1, 2, 4, 8])


@st.composite
def nested_shape(draw, max_leaves: int = 4, leaf=SMALL_SHAPES, max_size: int = 4096):
    """A nested shape with at most ``max_leaves`` leaves and size at most ``max_size``."""
    n = draw(_ints(1, max_leaves))
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
        return leaves[0] if draw(_BOOLS) else (leaves[0],) if draw(_ints(0, 5)) == 0 else leaves[0]
    # split into groups
    out = []
    i = 0
    while i < len(leaves):
        k = draw(_ints(1, len(leaves) - i))
        grp = leaves[i:i + k]
        out.append(grp[0] if len(grp) == 1 else tuple(grp) if draw(_BOOLS) else _nest(draw, grp))
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
    shape = draw(_built(nested_shape, max_leaves, leaf, max_size))
    return Layout(shape, _strides_like(draw, shape, strides))


@st.composite
def compact_layouts(draw, max_leaves: int = 4, max_size: int = 4096, leaf=SMALL_SHAPES):
    """Injective layouts: a permutation of the modes of a compact layout, optionally with gaps."""
    shape = draw(_built(nested_shape, max_leaves, leaf, max_size))
    from layoutalg.inttuple import flatten, unflatten

    fs = list(flatten(shape))
    order = draw(_perms(len(fs)))
    gaps = [draw(_sampled(1, 1, 1, 2)) for _ in fs]
    strides = [0] * len(fs)
    p = 1
    for k in order:
        p *= gaps[k]
        strides[k] = p
        p *= fs[k]
    return Layout(shape, unflatten(strides, shape))


# ---------------------------------------------------------------------------------------------
# the whole domain: negative, zero and huge strides, size-1 modes, empty and scalar layouts,
# deep nesting, swizzled and composed layouts (tests/test_properties.py)
# ---------------------------------------------------------------------------------------------

#: shape leaves, size 1 frequent
ANY_SHAPES = st.sampled_from([1, 1, 1, 2, 2, 2, 3, 4, 4, 5, 6, 8])
#: small strides of both signs, zero frequent
SIGNED_STRIDES = st.sampled_from([0, 0, 1, 1, 1, -1, 2, 2, -2, 3, -3, 4, 4, -4, 6, 8, -8, 12, 16, 24, 32, 64])
#: strides near 2**31 .. 2**62 (beyond int32 / int64 products)
HUGE_STRIDES = st.sampled_from([2**31, -(2**31), 2**32, 3 * 2**31, 2**40, 2**61, 2**62, -(2**62), 2**62 + 2])
EMPTY_SHAPES = [(), ((), ()), ((),), (((),),), ((), ((), ()))]


def _deep_nest(draw, leaves: list):
    """Nest ``leaves`` in a random tree, up to about log2(len) + 2 levels, with 1-tuples now and then."""
    if len(leaves) == 1:
        x = leaves[0]
        k = draw(_ints(0, 7))
        return (x,) if k == 0 else ((x,),) if k == 1 else x
    cut = draw(_ints(1, len(leaves) - 1))
    left, right = leaves[:cut], leaves[cut:]
    parts = []
    for part in (left, right):
        sub = _deep_nest(draw, part)
        if type(sub) is tuple and draw(_BOOLS):
            parts.extend(sub)  # splice: wider, shallower tuples
        else:
            parts.append(sub)
    return tuple(parts)


@st.composite
def any_shapes(draw, max_leaves: int = 5, max_size: int = 256):
    """Shapes of every kind: empty ``()`` and nested empties, scalars, flat and deeply nested tuples."""
    k = draw(_ints(0, 19))
    if k == 0:
        return draw(_sampled(*EMPTY_SHAPES))
    n = draw(_ints(1, max_leaves))
    leaves = [draw(ANY_SHAPES) for _ in range(n)]
    while _prod(leaves) > max_size:
        leaves.pop()
    if not leaves:
        leaves = [draw(ANY_SHAPES)]
    if k <= 3 and len(leaves) == 1:
        return leaves[0]  # a scalar layout
    if k <= 3:
        return leaves[0]
    return _deep_nest(draw, leaves)


@st.composite
def any_layouts(draw, max_leaves: int = 5, max_size: int = 256, huge: bool = True):
    """Layouts over the whole domain: signed, zero and (with ``huge``) strides near 2**31..2**62."""
    shape = draw(_built(any_shapes, max_leaves, max_size))
    leaf = _built(st.one_of, SIGNED_STRIDES, HUGE_STRIDES) if huge and draw(_ints(0, 5)) == 0 else SIGNED_STRIDES
    return Layout(shape, _strides_like(draw, shape, leaf))


@st.composite
def injective_layouts(draw, max_leaves: int = 5, max_size: int = 256, signed: bool = True, huge: bool = True):
    """Injective layouts of every nesting: a permuted compact layout with gaps, some strides negated,
    all strides scaled (by up to 2**40 with ``huge``)."""
    shape = draw(_built(any_shapes, max_leaves, max_size))
    from layoutalg.inttuple import flatten, unflatten

    fs = list(flatten(shape))
    if not fs:
        return Layout(shape, shape)
    order = draw(_perms(len(fs)))
    gaps = [draw(_sampled(1, 1, 1, 2, 3)) for _ in fs]
    strides = [0] * len(fs)
    p = 1
    for k in order:
        p *= gaps[k]
        strides[k] = p
        p *= fs[k]
    scale = draw(_sampled(*([1, 1, 1, 1, 2, 4] + ([2**31, 2**40] if huge else []))))
    strides = [d * scale for d in strides]
    if signed:
        strides = [-d if draw(_ints(0, 5)) == 0 else d for d in strides]
    return Layout(shape, unflatten(strides, shape) if type(shape) is tuple else strides[0])


@st.composite
def tilers(draw, max_size: int = 64):
    """Right-hand layouts for composition/divide/product: mostly injective with small strides, sometimes
    anything (negative, zero, overlapping)."""
    k = draw(_ints(0, 3))
    if k == 0:
        return draw(_built(any_layouts, max_leaves=3, max_size=max_size, huge=False))
    return draw(_built(injective_layouts, max_leaves=3, max_size=max_size, huge=False, signed=k == 1))


SWIZZLES = st.builds(
    lambda b, m, s, neg: __import__("layoutalg").Swizzle(b, m, -s if neg else s),
    st.integers(0, 3), st.integers(0, 3), st.integers(3, 4), st.booleans(),
)


@st.composite
def composed_layouts(draw, max_size: int = 256):
    """``Sw<B,M,S> o offset o L`` (now and then a layout in place of the swizzle) with L injective
    (non-negative strides) or anything, any offset."""
    from layoutalg import ComposedLayout

    sw = draw(SWIZZLES) if draw(_ints(0, 4)) else draw(_built(injective_layouts, max_leaves=3, max_size=64, huge=False))
    inner = draw(_built(st.one_of, _built(injective_layouts, max_leaves=3, max_size=max_size, signed=False, huge=False),
                        _built(any_layouts, max_leaves=3, max_size=max_size, huge=False)))
    off = draw(_sampled(0, 0, 0, 1, 2, 4, 8, 16, 3))
    return ComposedLayout(sw, off, inner)
