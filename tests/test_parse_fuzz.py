"""Fuzzing parse: every string either reads as something that prints back to itself, or is a LayoutError.

Each run reads more than 10,000 strings from a fixed seed: printed layouts (plain, symbolic,
swizzled, composed, CuTe's C++ spellings) and mutations of them (characters deleted, inserted,
swapped, repeated; pieces spliced from other inputs; truncations), plus adversarial texts
(deep nesting, 5,000-digit integers, huge powers, control characters, unicode). Nothing may
escape as another exception, hang, or come back as an object that does not round-trip through
``str`` and ``parse``.
"""

from __future__ import annotations

import random
import time

import pytest
from budget import gc_paused

from layoutalg import ComposedLayout, Layout, LayoutError, Swizzle, parse
from layoutalg.parse import MAX_DIGITS

SEED = 20240615
N_MUTANTS = 10_500

_SYMBOLS = ["m", "k", "T", "SBO", "LBO", "n2"]
_ALPHABET = "0123456789_()(),,::-+* o<>SwkmT{}" + "Layout<Shape<_Stride<Int<make_layout(make_shape(" + "\t\n\x00é٣"


def _leaf(rng: random.Random, positive: bool) -> str:
    r = rng.random()
    if r < 0.08:
        return rng.choice(_SYMBOLS)
    if r < 0.11:
        return f"{rng.randint(1, 4)}{rng.choice(_SYMBOLS)}"
    if r < 0.13:
        return f"_{rng.randint(1, 64)}"
    v = rng.choice([1, 2, 4, 8, 16, 32, 64, 3, 5, 6, 12, 128, 1024])
    if not positive and rng.random() < 0.3:
        v = rng.choice([0, -1, -v, v])
    return str(v)


def _tree(rng: random.Random, depth: int) -> tuple:
    """A profile: nested tuples of None (leaf)."""
    if depth == 0 or rng.random() < 0.45:
        return None  # type: ignore[return-value]
    return tuple(_tree(rng, depth - 1) for _ in range(rng.randint(0, 3)))


def _fill(profile: object, rng: random.Random, positive: bool) -> str:
    if profile is None:
        return _leaf(rng, positive)
    assert isinstance(profile, tuple)
    return "(" + ",".join(_fill(p, rng, positive) for p in profile) + ")"


def _layout_text(rng: random.Random) -> str:
    prof = _tree(rng, 3)
    shape = _fill(prof, rng, True)
    if rng.random() < 0.1:
        return shape
    return f"{shape}:{_fill(prof, rng, False)}"


def _seed_text(rng: random.Random) -> str:
    r = rng.random()
    lay = _layout_text(rng)
    if r < 0.55:
        return lay
    if r < 0.75:
        b = rng.randint(0, 3)
        sw = f"{rng.choice(['Sw', 'Swizzle'])}<{b},{rng.randint(0, 4)},{rng.choice([b, b + 1, 3, -3])}>"
        off = rng.choice(["", "_0 o ", "_8 o ", "k o ", "_-4 o "])
        return f"{sw} o {off}{lay}"
    if r < 0.85:
        return f"{_layout_text(rng)} o _0 o {lay}"
    # CuTe's C++ spellings
    s = [rng.choice([1, 2, 4, 8, 16]) for _ in range(rng.randint(1, 3))]
    d = [rng.choice([0, 1, 2, 8, 64]) for _ in s]
    ints = lambda xs, f: ",".join(f.format(x) for x in xs)  # noqa: E731
    forms = [
        f"Layout<Shape<{ints(s, '_{}')}>,Stride<{ints(d, '_{}')}>>",
        f"cute::Layout<cute::Shape<{ints(s, 'cute::Int<{}>')}>, cute::Stride<{ints(d, 'C<{}>')}>>",
        f"make_layout(make_shape({ints(s, 'Int<{}>{{}}')}), make_stride({ints(d, 'Int<{}>{{}}')}))",
        f"make_layout(make_shape({ints(s, '_{}{{}}')}), LayoutRight{{}})",
        f"composition(Swizzle<{rng.randint(0, 3)},{rng.randint(0, 4)},3>{{}}, make_layout(make_shape({ints(s, '_{}{{}}')})))",
        f"ComposedLayout<Swizzle<3,4,3>, smem_ptr_flag_bits<{rng.choice([8, 16, 32, 12])}>, Layout<Shape<{ints(s, '_{}')}>>>",
        f"Shape<{ints(s, '_{}')}>",
        f"Shape<{ints(s, 'int')}>",
    ]
    return rng.choice(forms)


def _mutate(text: str, rng: random.Random, corpus: list[str]) -> str:
    t = list(text)
    for _ in range(rng.choice([1, 1, 1, 2, 3, 5])):
        op = rng.random()
        i = rng.randrange(len(t) + 1)
        if op < 0.25 and t:
            del t[min(i, len(t) - 1)]
        elif op < 0.5:
            t.insert(i, rng.choice(_ALPHABET))
        elif op < 0.6 and len(t) > 1:
            j = rng.randrange(len(t))
            k = min(i, len(t) - 1)
            t[j], t[k] = t[k], t[j]
        elif op < 0.7 and t:
            j = rng.randrange(len(t))
            a, b = sorted((min(i, len(t) - 1), j))
            t[b:b] = t[a : b + 1]
        elif op < 0.8:
            other = rng.choice(corpus)
            a = rng.randrange(len(other) + 1)
            t[i:i] = list(other[a : a + rng.randint(1, 12)])
        elif op < 0.9 and t:
            t = t[: rng.randrange(len(t))]
        else:
            t.insert(i, rng.choice(["(", ")", ":", ",", " o ", "_", "-", "**", "<", ">"]))
    return "".join(t)


def _adversarial() -> list[str]:
    big = "9" * 5000
    return [
        "", " ", "\t\n", "81", "_8", "-3", "()", "():()", "(,)", ":", "::", "(8,4):", ":(1,8)", "(8,4):(1,8):(1)",
        big, f"({big}):(1)", f"(2):({big})", f"{'9' * MAX_DIGITS}:1", f"({'9' * (MAX_DIGITS + 1)}):(1)",
        "(" * 5000 + "2" + ")" * 5000, "(" * 70 + "2" + ")" * 70 + ":" + "(" * 70 + "1" + ")" * 70,
        "(" * 300 + "2" + ")" * 300, "2**64:1", "(2**65):(1)", "(k**64):(1)", "(k**999):(1)", "(99**99**99):(1)",
        "(2**9999):(1)", f"({'9' * 3000}*{'9' * 3000}):(1)", "(kk):(1)", "(k*k*k):(1)", "(k-k):(1)", "(k-1):(1)",
        "(0):(1)", "(-4):(1)", "(4):(-1)", "\x00", "(8\x00,4):(1,8)", "(٣):(١)", "(８):(1)", "Sw<3,4,3>",
        "Sw<3,4,3> o 8", "Sw<3,4,3> o _0", "Sw<99999999999,1,1> o 8:1", "Sw<-1,4,3> o 8:1", "Sw<3,4,1> o 8:1",
        "8:1 o Sw<3,4,3>", "o", "o o", "8:1 o o 8:1", "8:1 o _0 o _0 o 8:1", "_0 o 8:1", "Sw<1,1,1> o smem_ptr[16b](unset) o 8:1",
        "Sw<3,4,3> o smem_ptr[3b](unset) o 8:1", "Layout<>", "Layout<Shape<>>", "Layout<int>", "Shape<int,int>",
        "Layout<Shape<_8,_64>,Stride<_64,_1>,_3>", "make_layout()", "make_layout(M, N)", "composition()",
        "composition(Swizzle<3,4,3>{}, Swizzle<3,4,3>{})", "Int<" + big + ">", "Int<8", "Swizzle<3,4,3>{}",
        "ComposedLayout<Swizzle<3,4,3>, smem_ptr_flag_bits<0>, Layout<_8,_1>>", "decltype(Layout<_8,_1>{})",
        "using X = Layout<_8,_1>;", "cute::cute::Layout<_8,_1>", "Layout<Shape<_-8>,Stride<_1>>", "{}", "}{", "<<>>",
    ]


def _check(text: str) -> str:
    """'' if parse behaves on ``text``, else a description of the failure."""
    try:
        r = parse(text)
    except LayoutError:
        return ""
    except Exception as e:  # noqa: BLE001 - anything else is the bug this test hunts
        return f"{type(e).__name__}: {str(e)[:120]}"
    if not isinstance(r, (Layout, ComposedLayout, Swizzle)):
        return f"returned {type(r).__name__}"
    s = str(r)
    try:
        back = parse(s)
    except Exception as e:  # noqa: BLE001
        return f"str {s[:80]!r} does not parse back: {type(e).__name__}: {str(e)[:120]}"
    if back != r or type(back) is not type(r):
        return f"str {s[:80]!r} parses back to {str(back)[:80]!r}"
    return ""


@pytest.mark.filterwarnings("ignore::layoutalg.errors.LayoutWarning")  # mutants with lone letters, on purpose
def test_fuzz_parse_is_total_and_round_trips() -> None:
    rng = random.Random(SEED)
    corpus = [_seed_text(rng) for _ in range(600)]
    inputs = corpus + _adversarial() + [_mutate(rng.choice(corpus), rng, corpus) for _ in range(N_MUTANTS)]
    assert len(inputs) >= 10_000
    failures: list[str] = []
    slowest = (0.0, "")
    outcomes = {"parsed": 0, "refused": 0}
    with gc_paused():  # a collector pass over the worker's whole heap is no part of parsing (tests/budget.py)
        for text in inputs:
            t0 = time.thread_time()  # CPU time: a loaded machine must not fail the blow-up guard on wall time
            why = _check(text)
            dt = time.thread_time() - t0
            slowest = max(slowest, (dt, text[:60]))
            if why:
                failures.append(f"{text[:100]!r}: {why}")
            else:
                try:
                    parse(text)
                    outcomes["parsed"] += 1
                except LayoutError:
                    outcomes["refused"] += 1
    assert not failures, f"{len(failures)} of {len(inputs)} inputs misbehave, e.g.:\n" + "\n".join(failures[:15])
    # both outcomes are exercised in earnest, and no input takes long (a guard against blow-ups)
    assert outcomes["parsed"] > 1500 and outcomes["refused"] > 3000, outcomes
    assert slowest[0] < 1.0, f"parse took {slowest[0]:.2f} s on {slowest[1]!r}"


@pytest.mark.parametrize("text", ["81", "9" * 5000, f"(2,{'9' * 5000}):(1,1)", "(2**9999):(1)", "_8"])
def test_bad_texts_are_layout_errors(text: str) -> None:
    with pytest.raises(LayoutError, match="parse"):
        parse(text)


def test_a_lone_integer_says_what_to_write_instead() -> None:
    with pytest.raises(LayoutError, match=r"integer alone.*81:1"):
        parse("81")
    assert parse("81:1") == Layout(81, 1) and parse("(81)") == Layout((81,), (1,))
    # between two 'o' an integer is the offset of a composed layout
    assert parse("Sw<1,1,1> o 4 o 8:1").offset == 4 and parse("Sw<1,1,1> o _-4 o 8:1").offset == -4


def test_too_many_digits_name_the_limit() -> None:
    with pytest.raises(LayoutError, match=f"5000 digits exceeds the limit of {MAX_DIGITS}"):
        parse(f"({'9' * 5000}):(1)")
    with pytest.raises(LayoutError, match="exceeds the limit"):
        parse(f"({'9' * 3000}*{'9' * 3000}):(1)")
    # the largest allowed integer prints and reads back
    L = parse(f"({'9' * MAX_DIGITS}):(1)")
    assert parse(str(L)) == L


def _full(text: str) -> tuple:
    """What the full recursive-descent parser makes of ``text``, with no fast path in front."""
    from layoutalg.parse.notation import Parser

    try:
        r = Parser(text).composed()
    except LayoutError as e:
        return ("refused", str(e))
    return _described(r)


def _described(r: object) -> tuple:
    if isinstance(r, Layout):
        return ("layout", repr(r.shape), repr(r.stride), repr(r.flat), r.is_static, str(r))
    return (type(r).__name__, str(r))


def test_fast_paths_read_as_the_full_parser() -> None:
    """parse's fast paths (plain ints through the JSON reader, symbolic leaves read once per distinct
    text) give what the full parser gives -- the same tuples, flat modes and static flag -- or hand
    the text over, on the fuzz corpus (CuTe notation only: C++ spellings have their own reader)."""
    from layoutalg.parse import cpp, notation

    rng = random.Random(SEED + 1)
    corpus = [_seed_text(rng) for _ in range(600)]
    texts = corpus + [_mutate(rng.choice(corpus), rng, corpus) for _ in range(4000)]
    texts = [t for t in texts if not cpp.CPP_MARK.search(t)]
    taken = 0
    for text in texts:
        fast = notation.read_fast(text)
        if fast is None:
            continue
        taken += 1
        assert _described(fast) == _full(text), text
    # the symbolic fast path in particular is exercised
    sym = [t for t in texts if notation.SYMBOLIC(t) and not notation.PLAIN(t)]
    n_sym = sum(notation.read_symbolic(t) is not None for t in sym)
    assert taken > 600 and n_sym > 100, (taken, n_sym)
