"""to_cute_cpp / to_cute_dsl: every spelling parses back to the value it was written from (no compiler
needed; tests/test_cute_nvidia.py and tests/test_cute_dsl.py run the same text through CuTe itself)."""

from __future__ import annotations

import random

import pytest
from hypothesis import given

import cute_oracle as co
from layoutalg import Layout, LayoutError, parse, symbol
from layoutalg.composed import ComposedLayout
from layoutalg.interop.cute import CUTE_TYPES, to_cute_cpp, to_cute_dsl
from layoutalg.nvidia.ampere import mma
from layoutalg.nvidia.hopper import wgmma
from layoutalg.swizzle import Swizzle
from strategies import layouts


@given(layouts())
def test_both_cpp_spellings_parse_back(L):
    c = to_cute_cpp(L)
    assert parse(c.type) == L
    assert parse(c.expr) == L


def test_composed_and_swizzle_spellings_parse_back():
    r = random.Random(3)
    for _ in range(200):
        L = co.rand_layout(r)
        C = ComposedLayout(Swizzle(r.randint(0, 3), r.randint(0, 4), r.choice([3, 4, -3])), r.choice([0, 5, 64]), L)
        c = to_cute_cpp(C)
        assert parse(c.type) == C and parse(c.expr) == C
    assert parse(to_cute_cpp(Swizzle(3, 4, 3)).expr) == Swizzle(3, 4, 3)


@pytest.mark.parametrize("dtype", list(CUTE_TYPES))
def test_every_gmma_atom_and_tile_is_spelled_as_cute_writes_it(dtype):
    for name, (major, sw) in wgmma.ATOM_NAMES.items():
        if major == "MN" and wgmma.dtype_bits(dtype) != 16:
            continue
        a = wgmma.atom(major, sw, dtype)
        c = to_cute_cpp(a, dtype=dtype)
        assert c.cute == f"GMMA::{name}<{CUTE_TYPES[dtype]}>{{}}"
        assert parse(c.cute) == a == parse(c.type)
        t = wgmma.tile(major, sw, dtype, (128, 128))
        ct = to_cute_cpp(t, dtype=dtype)
        assert ct.cute.startswith(f"tile_to_shape(GMMA::{name}<")
        assert parse(ct.cute) == t == parse(ct.expr)


def test_a_catalog_fragment_exports_its_tv_layout():
    f = mma.fragment("m16n8k16", "f16", "A")
    assert parse(to_cute_cpp(f).type) == f.layout
    assert to_cute_cpp(f).type == "Layout<Shape<Shape<_4,_8>,Shape<_2,_2,_2>>,Stride<Stride<_32,_1>,Stride<_16,_8,_128>>>"


def test_symbolic_extents_become_int_variables():
    m = symbol("m")
    c = to_cute_cpp(Layout((m, 8), (8, 1)))
    assert c.type is None and c.expr == "make_layout(make_shape(m, Int<8>{}), make_stride(Int<8>{}, Int<1>{}))"
    assert to_cute_dsl(Layout((m, 8), (8, 1))) == "cute.make_layout((m, 8), stride=(8, 1))"
    with pytest.raises(LayoutError, match="not a plain name"):
        to_cute_cpp(Layout((2 * m, 8), (8, 1)))


def test_not_a_layout():
    with pytest.raises(LayoutError, match="to_cute_cpp"):
        to_cute_cpp("(4,2):(2,1)")
