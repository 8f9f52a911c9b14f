"""verify evaluates every sympy function it accepts exactly, refuses the rest by name, and its
counterexamples carry every symbol's value (inputs and sizes) so they can be reproduced."""

from __future__ import annotations

import random

import pytest
import sympy
from sympy import Abs, Max, Min, Mod, Piecewise, ceiling, floor, sign

from layoutalg import Layout, LayoutError, verify
from layoutalg.symbolic import bitand, bitor, bitxor, shl, shr
from layoutalg.verify import MAX_ENUMERATION

i = sympy.Symbol("i", integer=True, nonnegative=True)
j = sympy.Symbol("j", integer=True, nonnegative=True)
m, k = sympy.symbols("m k", integer=True, positive=True)


def test_min_of_a_symbolic_size_is_evaluated_and_proven() -> None:
    # the case: lambdify's code for Min needed functools and crashed with a NameError
    v = verify(Layout((m, 2), (1, m)), Min(i, 2 * m - 1), (i,))
    assert v and v.method == "symbolic" and v.proven
    w = verify(Layout((m, 2), (1, m)), Min(i, m), (i,))
    assert not w and w.counterexample is not None


def test_a_counterexample_carries_the_sizes_and_reproduces() -> None:
    L = Layout((m, k), (k, 1))
    v = verify(L, (i % k) * m + i // k, (i,))
    assert not v
    ce = v.counterexample
    assert ce is not None
    names = dict(ce.inputs)
    assert set(names) == {"i", "m", "k"}
    # reproduce it from the counterexample alone
    sizes = {m: names["m"], k: names["k"]}
    assert L.subs(sizes)(names["i"]) == ce.got
    assert ((i % k) * m + i // k).subs(sizes).subs(i, names["i"]) == ce.expected
    assert "m=" in repr(ce) and "k=" in repr(ce)


_X = sympy.Symbol("x", integer=True, nonnegative=True)


def _random_formula(rng: random.Random, depth: int = 3) -> sympy.Expr:
    """A formula in x over every operation verify accepts."""
    if depth == 0 or rng.random() < 0.25:
        return rng.choice([_X, _X, sympy.Integer(rng.randint(-3, 9)), sympy.Rational(rng.randint(1, 7), rng.choice([2, 3, 4]))])
    a, b = _random_formula(rng, depth - 1), _random_formula(rng, depth - 1)
    c = rng.randint(1, 5)
    ops = [
        lambda: a + b, lambda: a * b, lambda: a - b, lambda: Mod(a, c), lambda: Mod(a, -c), lambda: floor(a / c),
        lambda: ceiling(a / c), lambda: Min(a, b), lambda: Max(a, b), lambda: Abs(a - b), lambda: sign(a - b),
        lambda: Piecewise((a, _X < c), (b, True)), lambda: Piecewise((a, sympy.And(_X > 1, _X < 2 * c)), (b, sympy.Ne(_X, c))),
        lambda: bitand(_X, c) + a, lambda: bitxor(_X, c), lambda: bitor(_X, c), lambda: shr(_X, rng.randint(0, 3)),
        lambda: shl(_X, rng.randint(0, 3)), lambda: a**2, lambda: (a + 1) // (c + 1),
    ]
    return rng.choice(ops)()


def _sympy_value(f: sympy.Expr, x: int) -> object:
    v = f.subs(_X, x)
    if v is sympy.nan or not v.is_number:
        return "undefined"
    return int(v) if v.is_Integer else sympy.Rational(v)


def test_every_accepted_function_is_evaluated_as_sympy_evaluates_it() -> None:
    """An independent oracle: sympy's own value of each formula at each point (subs), against verify's
    verdict and counterexample on a layout that hits the formula's values except where it does not."""
    rng = random.Random(3)
    n = 24
    L = Layout(n, 1)  # L(x) = x
    tried = 0
    for _ in range(300):
        f = _random_formula(rng)
        if f.is_number:
            continue
        tried += 1
        values = [_sympy_value(f, x) for x in range(n)]
        first_diff = next((x for x in range(n) if values[x] != x), None)
        v = verify(L, f, (_X,), symbolic=False)
        if first_diff is None:
            assert v, (f, v)
        else:
            assert not v and v.counterexample is not None, (f, values)
            assert v.counterexample["x"] == first_diff, (f, first_diff, v)
            want = values[first_diff]
            got_expected = v.counterexample.expected
            assert (got_expected == want) or (want == "undefined" and got_expected == "undefined") or \
                (sympy.Rational(str(got_expected)) == want), (f, first_diff, got_expected, want)
    assert tried > 200


@pytest.mark.parametrize("formula, name", [(sympy.sin(i), "sin"), (sympy.Float(0.5) * i, "Float"), (sympy.log(i + 1), "log"),
                                          (sympy.factorial(i), "factorial"), (sympy.pi * i, "Pi")])
def test_unsupported_functions_are_refused_by_name(formula: sympy.Expr, name: str) -> None:
    with pytest.raises(LayoutError, match=f"verify: the formula uses {name}"):
        verify(Layout(8, 1), formula, (i,))


def test_a_symbol_that_is_not_an_input_is_named() -> None:
    with pytest.raises(LayoutError, match="symbol m in the formula is not one of the inputs"):
        verify(Layout(8, 1), i * m, (i,))


def test_domains_beyond_the_enumeration_limit() -> None:
    big = Layout((1 << 20, 1 << 20), (1, 1 << 20))
    # a power-of-two domain is proven without enumerating it
    v = verify(big, i, (i,))
    assert v and v.method == "symbolic" and v.checked == 0
    # otherwise the size and the limit are named, before any allocation
    odd = Layout((3 << 20, 3 << 20), (1, 3 << 20))
    with pytest.raises(LayoutError, match=rf"{(3 << 20) ** 2} points, more than the limit of {MAX_ENUMERATION}"):
        verify(odd, i, (i,))
    huge = Layout((2**40, 2**40), (1, 2**40))
    with pytest.raises(LayoutError, match="more than the limit"):
        verify(huge, i + 1, (i,))


def test_enumeration_in_chunks_finds_the_first_difference() -> None:
    L = Layout((3000, 1000), (1, 3000))  # 3M points, three chunks, not a power of two
    v = verify(L, sympy.Piecewise((i, i < 2_500_000), (i + 1, True)), (i,))
    assert not v and v.counterexample["i"] == 2_500_000 and v.checked == 2_500_001
    assert verify(L, i, (i,)).method == "exhaustive"
