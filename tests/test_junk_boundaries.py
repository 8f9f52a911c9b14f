"""The public boundaries the junk debt was cleared at (issue 29, part 6): what each refuses and what it still takes.

tests/test_junk_everywhere.py finds the escapes; these pin the messages and that real inputs keep working.
"""

from __future__ import annotations

import argparse

import pytest
import sympy

from layoutalg import Layout, LayoutError
from layoutalg import inttuple as it
from layoutalg.symbolic import shl, shr


def test_inttuple_leaves_are_numbers_never_text():
    n = sympy.Symbol("n", integer=True, positive=True)
    assert it.equal(2 * n, n + n) and it.divides(n, 4 * n) and it.less(n, n + 1) and it.ceil_div(4 * n, 2) == 2 * n
    for bad in ("n + 1", None, {"a": 1}, True):  # text would be evaluated by sympify: refused instead
        with pytest.raises(LayoutError, match="not an integer"):
            it.equal(bad, 1)
    with pytest.raises(LayoutError, match="crd2idx: bad arguments"):
        it.crd2idx(None, (2, 2), (1, 2))
    with pytest.raises(LayoutError, match="no leaves"):
        it.tuple_max(())
    assert it.crd2idx((1, 1), (2, 2), (1, 2)) == 3 and it.inner_product((2, (3,)), (1, (4,))) == 14


def test_shifts_refuse_counts_out_of_range():
    assert shl(3, 4) == 48 and shr(13, 2) == 3
    for f in (shl, shr):
        for k in (-1, 1 << 40):
            with pytest.raises(LayoutError, match="shift count"):
                f(1, k)


def test_cli_handlers_take_a_namespace():
    from layoutalg.cli.layouts import cmd_show
    from layoutalg.cli.tmem import add_tmem_parser

    with pytest.raises(LayoutError, match="cmd_show: expects the argparse.Namespace"):
        cmd_show("(4,2):(2,1)")
    with pytest.raises(LayoutError, match="add_tmem_parser: expects the subcommands"):
        add_tmem_parser(argparse.ArgumentParser())
    add_tmem_parser(argparse.ArgumentParser().add_subparsers())  # the real thing still works


def test_tiled_constructors_name_the_builders():
    from layoutalg.tiled import TiledCopy, TiledMMA

    with pytest.raises(LayoutError, match="make_tiled_mma"):
        TiledMMA("SM80_16x8x16_F32F16F16F32_TN", Layout(1), ())
    with pytest.raises(LayoutError, match="make_tiled_copy"):
        TiledCopy(None, Layout(1), (1,))


def test_viz_and_parse_boundaries():
    from layoutalg.parse.notation import Parser
    from layoutalg.viz.scene import svg_cells, thread_color

    assert thread_color(33) == thread_color(1)
    with pytest.raises(LayoutError, match="a thread is an int"):
        thread_color("3")
    with pytest.raises(LayoutError, match="not well-formed SVG"):
        svg_cells("<svg")
    with pytest.raises(LayoutError, match="expected text"):
        Parser(None)
