"""Text is data: formula text is read by layoutalg.formula's grammar and never evaluated.

Three things are checked: (1) text that tries to call, import, reach an attribute, subscript, use a
string, a lambda or a dunder name is a LayoutError in every API that takes text, and the payload's
marker file is never created; (2) the grammar agrees with Python's own integer arithmetic (the oracle:
CPython evaluating test-generated, payload-free text) on random expressions; (3) every PTX formula of
the catalog, printed as C by ``explain.c_text`` and read back, is the same function.
"""

from __future__ import annotations

import pathlib

import numpy as np
import pytest
import sympy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from layoutalg import Layout, parse, verify
from layoutalg.errors import LayoutError
from layoutalg.formula import parse_formula
from layoutalg.symbolic import bitand, exact_evaluator, lambdify_numpy

t = sympy.Symbol("t", integer=True, nonnegative=True)
r, c = sympy.symbols("r c", integer=True, nonnegative=True)


def _payloads(marker: pathlib.Path) -> list[str]:
    m = str(marker)
    return [
        f"__import__('os').system('touch {m}')",
        f"__import__(\"os\").system(\"touch {m}\")",
        f"t + __import__('os').system('touch {m}')",
        f"open('{m}', 'w')",
        f"exec(\"open('{m}','w')\")",
        f"eval(\"open('{m}','w')\")",
        f"(lambda: open('{m}', 'w'))()",
        "t.__class__.__mro__",
        "t.func",
        "().__class__.__bases__[0].__subclasses__()",
        "[x for x in (1,)]",
        "t[0]",
        "'abc'",
        "b'abc'",
        "__builtins__",
        "__t",
        "lambda x: x",
        "import os",
        "t if t else 1",
        "t; 1",
        "t = 1",
        "{1: 2}",
        "Symbol('t')",
        "sympify('t')",
        "floor.__globals__",
        "Mod(t, 4).args",
        "2 ** 2 ** 2 ** 2 ** 2",  # a number too large to build
        "shl(1, 10 ** 9)",
        "(" * 200 + "t" + ")" * 200,
    ]


@pytest.fixture()
def marker(tmp_path: pathlib.Path) -> pathlib.Path:
    return tmp_path / "pwned"


def test_refused_text_raises_and_runs_nothing(marker: pathlib.Path) -> None:
    from layoutalg.explain import c_text, count_ops

    m = parse("(8,m):(1,8)")
    msym = next(iter(m.free_symbols))
    entry_points = [
        ("parse_formula", lambda p: parse_formula(p, [t])),
        ("verify", lambda p: verify(Layout(4, 1), p, (t,))),
        ("verify formula=", lambda p: verify(Layout(4, 1), formula=[p], inputs="t")),
        ("verify inputs", lambda p: verify(Layout(4, 1), "t", (p,))),
        ("verify instances", lambda p: verify(m, "r + 8*c", "r, c", instances=[{msym: p}])),
        ("count_ops", count_ops),
        ("c_text", c_text),
        ("bitand", lambda p: bitand(p, 1)),
        ("exact_evaluator", lambda p: exact_evaluator((t,), [p])),
        ("lambdify_numpy", lambda p: lambdify_numpy((t,), [p])),
        ("Layout.subs", lambda p: m.subs({msym: p})),
        ("Layout.subs by name", lambda p: m.subs(m=p)),
        ("ComposedLayout.subs", lambda p: parse("Sw<1,1,1> o (8,m):(1,8)").subs({msym: p})),
    ]
    for text in _payloads(marker):
        for name, f in entry_points:
            with pytest.raises(LayoutError):
                f(text)
            assert not marker.exists(), (name, text)


@pytest.mark.parametrize("text, refused", [
    ("__import__('os')", "'__import__' is refused"),
    ("t.real", "'.'"),
    ("t[0]", "subscript"),
    ("'x'", "string"),
    ("lambda: 1", "keyword 'lambda'"),
    ("open(1)", "calling 'open' is refused"),
    ("x + 1", "the name 'x' is not an input"),
    ("2 ** 100000", "larger than"),
    ("t < 1 < 2", "chained comparison"),
])
def test_the_error_names_what_was_refused(text: str, refused: str) -> None:
    with pytest.raises(LayoutError, match="verify") as e:
        verify(Layout(4, 1), text, (t,))
    assert refused in str(e.value)


def test_cli_payload_runs_nothing(marker: pathlib.Path, capsys: pytest.CaptureFixture) -> None:
    from layoutalg.cli import main

    p = f"__import__('os').system('touch {marker}')"
    for argv in (["verify", "4:1", p, "--inputs", "t"], ["verify", "4:1", "t", "--inputs", p],
                 ["eval", "4:1", p], ["show", p], ["explain", p]):
        assert main(argv) == 2, argv
        assert not marker.exists()


# --- the grammar against Python's integer arithmetic ------------------------------------------------
_BINOPS = ["+", "-", "*", "//", "%", "&", "|", "^", "<<", ">>", "**"]


@st.composite
def _expr(draw: st.DrawFn, depth: int = 0) -> str:
    if depth > 3 or draw(st.integers(0, 2)) == 0:
        return draw(st.sampled_from(["a", "b", str(draw(st.integers(0, 40)))]))
    kind = draw(st.integers(0, 5))
    if kind == 0:
        return "-" + draw(_expr(depth + 1))
    if kind == 1:
        return "(" + draw(_expr(depth + 1)) + ")"
    op = draw(st.sampled_from(_BINOPS))
    right = draw(_expr(depth + 1))
    if op in ("<<", ">>", "**"):
        right = str(draw(st.integers(0, 5)))
    return draw(_expr(depth + 1)) + f" {op} " + right


@settings(max_examples=400, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(_expr(), st.integers(-20, 20), st.integers(-20, 20))
def test_grammar_agrees_with_python_integer_arithmetic(text: str, av: int, bv: int) -> None:
    a, b = sympy.symbols("a b", integer=True)
    try:
        want = eval(text, {"__builtins__": {}}, {"a": av, "b": bv})  # the oracle: CPython on test-made text
    except (ZeroDivisionError, ValueError, OverflowError):
        return
    if isinstance(want, float) or abs(want) > 2**62:
        return
    e = parse_formula(text, {"a": a, "b": b})
    got = e.subs({a: av, b: bv}) if isinstance(e, sympy.Basic) else e
    assert int(got) == want, (text, av, bv, e)


def test_python_precedence_and_c_forms() -> None:
    lane, i = sympy.symbols("lane i", integer=True, nonnegative=True)
    n = [lane, i]
    assert parse_formula("lane >> 2 + 1", n) == parse_formula("lane >> (2 + 1)", n)
    assert parse_formula("1 | 2 ^ 3 & 4", n) == 1 | (2 ^ (3 & 4))
    assert parse_formula("-2 ** 2", n) == -4
    assert parse_formula("i < 2 ? lane : lane + 8", n) == sympy.Piecewise((lane, i < 2), (lane + 8, True))
    assert parse_formula("i >= 2 && i < 4 || i == 7 ? 1 : 0", n).subs({i: 3}) == 1
    assert parse_formula("0b1010 + 0x10 + 1_000", n) == 10 + 16 + 1000
    assert parse_formula("lane >> 2, lane % 4", n) == (parse_formula("shr(lane, 2)", n), sympy.Mod(lane, 4))


# --- documented formulas read back ------------------------------------------------------------
def test_every_ptx_formula_printed_as_c_reads_back_as_the_same_function() -> None:
    from layoutalg.explain import c_text
    from layoutalg.nvidia.common.ptx_formulas import FORMULAS, METADATA_FORMULAS, i, lane

    lanes, idx = np.meshgrid(np.arange(128), np.arange(64), indexing="ij")
    args = (lanes.ravel(), idx.ravel())
    n = 0
    for key, f in list(FORMULAS.items()) + list(METADATA_FORMULAS.items()):
        texts = [c_text(e) for e in f.outputs]
        back = [parse_formula(x, [lane, i]) for x in texts]
        want = exact_evaluator((lane, i), f.outputs)(*args)
        got = exact_evaluator((lane, i), back)(*args)
        for w, g, x in zip(want, got, texts):
            wv, wok = w.integers(args[0].size)
            gv, gok = g.integers(args[0].size)
            assert np.array_equal(wok, gok) and np.array_equal(wv[wok], gv[gok]), (key, x)
            n += 1
    assert n >= 150  # every output of every formula (150 in FORMULAS alone today)


def test_documented_formulas_verify_as_text() -> None:
    """The formulas docs/explain.md prints, given to verify as text, prove the layouts they explain."""
    L = parse("Sw<3,3,3> o (64,64):(64,1)")
    v = verify(L, "64 * row + 8 * ((col >> 3) ^ (row % 8)) + col % 8", "row, col")
    assert v and v.method == "symbolic"
    v = verify(parse("Sw<2,5,3> o (64,64):(64,1)"), "(64 * row + col) ^ (8 * (row & 12))", "row col")
    assert v
    w = verify(parse("(4,2):(2,1)"), formula="r + 4*c", inputs=("r", "c"))
    assert not w and w.counterexample.where == {"r": 0, "c": 1}
    assert str(w.counterexample) == "at (r, c) = (0, 1): the layout gives 1, the formula gives 4"
    assert repr(w.counterexample) == "Counterexample(r=0, c=1: layout gives 1, formula gives 4)"
    # symbolic sizes: the size symbols are names the formula may use
    assert verify(parse("(8,m):(m,1)"), "m*r + c", "r, c")


def test_fragment_counterexample_names_the_fragment_side() -> None:
    from layoutalg.nvidia.ampere import mma

    F = mma.fragment("m16n8k8", "f16", "C")
    v = verify(F, "lane >> 2, 2 * (lane % 4) + (i & 1)", "lane, i")
    assert not v
    assert str(v.counterexample) == "at (lane, i) = (0, 2): the fragment gives (8, 0), the formula gives (0, 0)"


def test_equivalent_names_its_sides() -> None:
    from layoutalg import equivalent

    v = equivalent(Layout((4, 4), (1, 4)), Layout((4, 4), (4, 1)))
    assert str(v.counterexample) == "at i = 1: A gives 1, B gives 4"
    v = equivalent(Layout(4, 1), Layout(8, 1))
    assert not v and str(v.counterexample) == "size of A = 4, size of B = 8"


def test_every_text_input_of_the_library_runs_nothing(marker: pathlib.Path) -> None:
    """Layout text (parse, CuTe C++ spellings), Gluon layout text, tiled-MMA arguments given as text, copy and
    MMA atom names, dtype names: each is read by a grammar or a name table, never evaluated."""
    from layoutalg.interop.gluon import gluon_layout
    from layoutalg.nvidia import atoms
    from layoutalg.nvidia.ampere import mma
    from layoutalg.nvidia.hopper import wgmma
    from layoutalg.nvidia.common.dtypes import dtype_name
    from layoutalg.tiled import make_tiled_mma

    readers = [
        ("parse", parse),
        ("gluon_layout", gluon_layout),
        ("make_tiled_mma name", lambda p: make_tiled_mma(p)),
        ("make_tiled_mma atom layout", lambda p: make_tiled_mma("SM80_16x8x16_F32F16F16F32_TN", p)),
        ("mma_atom", atoms.mma_atom),
        ("copy_atom", atoms.copy_atom),
        ("copy_atom value type", lambda p: atoms.copy_atom("SM75_U32x4_LDSM_N", p)),
        ("dtype_name", dtype_name),
        ("mma.fragment", lambda p: mma.fragment(p, "f16", "A")),
        ("wgmma.tile", lambda p: wgmma.tile("K", 128, p, (64, 64))),
        ("parse_instruction", lambda p: wgmma.parse_instruction(p, "f16")),
    ]
    for text in _payloads(marker)[:8] + [f"gl.BlockedLayout(__import__('os').system('touch {marker}'))",
                                         f"Layout<Shape<_8>, decltype(__import__('os').system('touch {marker}'))>"]:
        for name, f in readers:
            with pytest.raises(LayoutError):
                f(text)
            assert not marker.exists(), (name, text)


def test_equivalent_reads_layout_text_by_the_grammar(marker: pathlib.Path) -> None:
    from layoutalg import equivalent

    assert equivalent("(2,4):(1,2)", "8:1") and not equivalent("(4,4):(1,4)", "(4,4):(4,1)")
    for text in _payloads(marker)[:6]:
        with pytest.raises(LayoutError):
            equivalent(text, "8:1")
        assert not marker.exists()
