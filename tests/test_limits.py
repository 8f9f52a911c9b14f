"""Sizes that cannot be enumerated or drawn are refused with a LayoutError stating the size and the limit,
before anything is allocated; the issue's four bad inputs are among them."""

from __future__ import annotations

import tracemalloc

import pytest
import sympy

from layoutalg import ComposedLayout, Layout, LayoutError, Swizzle, banks, equivalent, parse, verify, viz
from layoutalg.cli import print_layout
from layoutalg.layout import MAX_TABLE

HUGE = Layout((2**40, 2**40), (1, 2**40))
SIZE = str(2**80)


def test_the_four_bad_inputs_of_the_issue() -> None:
    with pytest.raises(LayoutError, match="integer alone"):
        parse("81")
    with pytest.raises(LayoutError, match="5000 digits exceeds the limit of 4300"):
        parse(f"({'1' * 5000}):(1)")
    with pytest.raises(LayoutError, match=rf"table: .* has {SIZE} entries, more than the limit of {MAX_TABLE}"):
        HUGE.table()
    with pytest.raises(LayoutError, match=rf"layout_scene: .* has {SIZE} entries, more than the limit of {MAX_TABLE}"):
        viz.layout_svg(HUGE)


@pytest.mark.parametrize(
    "name, call",
    [
        ("grid", lambda: HUGE.grid()),
        ("table", lambda: ComposedLayout(Swizzle(3, 4, 3), 0, HUGE).table()),
        ("show", lambda: print_layout(HUGE)),
        ("swizzle_scene", lambda: viz.swizzle_scene(HUGE, 2)),
        ("access_addresses", lambda: banks.analyze(HUGE, Layout((32, 1), (1, 0)), 2)),
        ("access_addresses", lambda: banks.analyze(Layout((64, 64), (64, 1)), HUGE, 2)),
        ("equivalent", lambda: equivalent(HUGE, Layout((2**40, 2**40), (1, 2**40 + 1)))),
        ("verify", lambda: verify(HUGE, sympy.Symbol("i", integer=True) + 1, (sympy.Symbol("i", integer=True),))),
    ],
)
def test_every_enumeration_refuses_a_huge_layout_before_allocating(name: str, call) -> None:
    tracemalloc.start()
    try:
        with pytest.raises(LayoutError, match=rf"{name}: .*{SIZE} (entries|points), more than the limit of \d+"):
            call()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 50_000_000


def test_just_below_the_limit_pictures_compute_only_what_they_draw() -> None:
    L = Layout((MAX_TABLE // 1024, 1024), (1, MAX_TABLE // 1024))  # 2**26 entries: allowed
    tracemalloc.start()
    try:
        text = print_layout(L, 4, 4)
        svg = viz.layout_svg(L, max_rows=8, max_cols=8)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert "showing rows 0-3 of 65536, columns 0-3 of 1024" in text and "<svg" in svg
    assert peak < 5_000_000  # the whole table would be 512 MiB
    assert Layout(MAX_TABLE + 1, 1).size() == MAX_TABLE + 1
    with pytest.raises(LayoutError, match=f"{MAX_TABLE + 1} entries"):
        Layout(MAX_TABLE + 1, 1).table()
