"""layoutalg against CuTe C++ itself: random static layouts through every shared operation, compiled on
the host against CuTe's headers (:mod:`layoutalg.interop.cutecpp`), with identical text (underscores
aside) and identical function required; CuTe's compile-time refusals against layoutalg's LayoutErrors
in both directions.

CuTe's answers to every snippet of this module are recorded in tests/data/cute/conformance.json
(``python tests/test_cute_conformance.py --record``, g++ on the host) and replayed each run; a live
sample of them is compiled each run (one program) and must print as recorded, and a snippet the
recording lacks is compiled on the spot. The inputs are spelled with ``to_cute_cpp``, so the export is
checked at the same time: CuTe reads back exactly what layoutalg holds.
"""

from __future__ import annotations

import collections
import functools

import numpy as np
import pytest

import cute_oracle as co
from oracle_recorder import SnippetRecorder
import layoutalg as la
from layoutalg import Layout, LayoutError, parse
from layoutalg.algebra import CompositionError, cute_construction_only
from layoutalg.composed import ComposedLayout
from layoutalg.interop import cutecpp


# Cases CuTe refuses at compile time (a static_assert or an ill-formed instantiation), hand-picked so
# that each of its checks is hit once; layoutalg must refuse each with a LayoutError. The second
# element is the C++ snippet, the third what layoutalg computes.
_L = co.cpp
REFUSED_BY_CUTE = {
    "complement of a non-injective layout": (
        f"print(complement({_L(Layout((2, 2), (1, 1)))}, Int<8>{{}}));", lambda: la.complement(Layout((2, 2), (1, 1)), 8)),
    "stride divisibility": (
        f"print(composition({_L(Layout((4, 6), (1, 10)))}, {_L(Layout(2, 6))}));",
        lambda: la.composition(Layout((4, 6), (1, 10)), Layout(2, 6))),
    "shape divisibility": (
        f"print(composition({_L(Layout((4, 6), (1, 10)))}, {_L(Layout(6, 1))}));",
        lambda: la.composition(Layout((4, 6), (1, 10)), Layout(6, 1))),
    "left inverse divisibility": (
        f"print(left_inverse({_L(Layout((2, 3), (3, 4)))}));", lambda: la.left_inverse(Layout((2, 3), (3, 4)))),
    "upcast divisibility": (
        f"print(upcast<4>({_L(Layout((8, 2), (1, 6)))}));", lambda: la.upcast(Layout((8, 2), (1, 6)), 4)),
    "downcast without a stride-1 mode": (
        f"print(downcast<2>({_L(Layout((8, 2), (2, 16)))}));", lambda: la.downcast(Layout((8, 2), (2, 16)), 2)),
    "tile_to_shape not dividing": (
        f"print(tile_to_shape({_L(Layout((3, 2)))}, make_shape(Int<4>{{}}, Int<4>{{}})));",
        lambda: la.tile_to_shape(Layout((3, 2)), (4, 4))),
    "tile_to_shape rank above the target's": (
        f"print(tile_to_shape({_L(Layout((2, 2, 2)))}, make_shape(Int<4>{{}}, Int<4>{{}})));",
        lambda: la.tile_to_shape(Layout((2, 2, 2)), (4, 4))),
    "coalesce profile longer than the layout": (
        f"print(coalesce({_L(Layout((4, 2)))}, make_tuple(_1{{}}, _1{{}}, _1{{}})));",
        lambda: la.coalesce(Layout((4, 2)), (1, 1, 1))),
    "logical_divide tiler longer than the layout": (
        f"print(logical_divide({_L(Layout((4, 2)))}, make_tile(Int<2>{{}}, Int<2>{{}}, Int<2>{{}})));",
        lambda: la.logical_divide(Layout((4, 2)), (2, 2, 2))),
    "blocked_product zipping an integer mode with a tuple": (
        f"print(blocked_product({_L(Layout((2,), (1,)))}, {_L(Layout(8, 1))}));",
        lambda: la.blocked_product(Layout((2,), (1,)), Layout(8, 1))),
}


@functools.cache
def _batch() -> tuple[list, list[str], dict]:
    """Every case of this module, its snippets and run_snippets' keywords (one batch; built once per process:
    the parametrize list and the fixture share it)."""
    cases = co.algebra_cases() + co.swizzle_cases() + co.named_cases()
    picked = list(REFUSED_BY_CUTE.values())
    # the accepted cases in big programs; the refused ones (each failure costs a rebuild) in small ones
    snippets = [c.cpp for c in cases] + [p[0] for p in picked]
    flags = [c.refused for c in cases] + [True] * len(picked)
    return cases, snippets, {"chunk": 250, "expect_refusal": flags}


REC = SnippetRecorder("conformance", lambda: [_batch()[1:]], script="test_cute_conformance", live=40)
pytestmark = REC.needs


@pytest.fixture(scope="module")
def results():
    """Every case of this module, answered by CuTe (recorded, a live sample recompiled): ({op: [(case, answer)]},
    hand-picked answers)."""
    cases, snippets, kw = _batch()
    out = REC.run_snippets(snippets, **kw)
    by_op: dict[str, list] = collections.defaultdict(list)
    for c, o in zip(cases, out):
        by_op[c.op].append((c, o))
    return by_op, out[len(cases):]


def _cute_value(text: str):
    """CuTe's printed answer as a layoutalg value (Layout, ComposedLayout or int)."""
    t = co.normalize(text)
    if t.lstrip("-").isdigit():
        return int(t)
    return parse(t)


def _same_function(ours, theirs) -> bool:
    if isinstance(ours, int) or isinstance(theirs, int):
        return ours == theirs
    if ours.size() != theirs.size():
        return False
    return bool(np.array_equal(ours.table(), theirs.table()))


OPS = sorted({c.op for c in _batch()[0]})
#: named differences met in this run: {name: count}
NAMED: collections.Counter = collections.Counter()


def test_cute_version_and_case_count(results):
    by_op, _ = results
    agreed = sum(1 for pairs in by_op.values() for c, o in pairs if not c.refused and not isinstance(o, cutecpp.CompileFailure))
    print(f"\nCuTe {REC.data['cute_version']} ({REC.relpath}): {agreed} random cases over {len(by_op)} ops")
    assert agreed >= 2000
    assert set(by_op) == set(OPS)


@pytest.mark.parametrize("op", OPS)
def test_identical_text_and_function(results, op):
    """Where layoutalg answers, CuTe compiles and prints the same text and the same function."""
    pairs = results[0][op]
    answered = [(c, o) for c, o in pairs if not c.refused]
    assert answered, f"no case of {op} that layoutalg answers"
    bad = []
    for c, o in answered:
        if isinstance(o, cutecpp.CompileFailure):
            name = co.named_refusal(c, o.message)
            if name is not None:
                NAMED[name] += 1
                continue
            bad.append(f"{op}{tuple(str(x) for x in c.inputs)}: CuTe refuses ({o.message}) but layoutalg gives {c.ours}")
        elif co.normalize(o) != co.ours_text(c.ours):
            name = co.named_difference(c, _cute_value(o))
            if name is None:
                bad.append(f"{op}{tuple(str(x) for x in c.inputs)}: CuTe {o} vs layoutalg {c.ours}")
            else:
                NAMED[name.split(" (CuTe:")[0]] += 1
        elif not _same_function(c.ours, _cute_value(o)):
            bad.append(f"{op}{tuple(str(x) for x in c.inputs)}: same text {o} but a different function")
    assert not bad, f"{len(bad)} of {len(answered)} differ:\n" + "\n".join(bad[:10])


def _replay(c: co.Case):
    """layoutalg's answer to a refused case with the composition check off: CuTe's bare construction."""
    op = c.op.split("/")[0]
    with cute_construction_only():
        if op == "composed":
            op = "composition" if c.op.endswith("composition") else "logical_divide"
        return getattr(la, op)(*[x for x in c.inputs if x is not None])


def test_refusals_are_cute_refusals_or_cute_is_wrong(results):
    """Where layoutalg refuses, CuTe refuses too -- or CuTe answers with exactly the construction layoutalg
    refused, and that construction is shown (by direct evaluation) not to be the composition."""
    both, wrong = 0, 0
    problems = []
    for pairs in results[0].values():
        for c, o in pairs:
            if not c.refused:
                continue
            if isinstance(o, cutecpp.CompileFailure):
                both += 1
                continue
            e = c.ours
            if not isinstance(e, CompositionError):
                name = co.named_difference(c, _cute_value(o))
                if name is None:
                    problems.append(f"{c.op}{tuple(map(str, c.inputs))}: layoutalg refuses ({e}) but CuTe gives {o}")
                else:
                    NAMED[name.split(" (CuTe:")[0]] += 1
                continue
            replay = _replay(c)
            if co.ours_text(replay) != co.normalize(o):
                problems.append(f"{c.op}: CuTe gives {o}, layoutalg's unchecked construction {replay}")
            i = e.index
            if e.result(i) == e.lhs(e.rhs(i)):  # evaluated directly, not through composition
                problems.append(f"{c.op}: {e.result} agrees with {e.lhs} o {e.rhs} at {i}")
            wrong += 1
    assert not problems, "\n".join(problems[:10])
    print(f"\nrefused by both: {both}; CuTe answers with a non-composition that layoutalg refuses: {wrong}")
    assert both >= 100 and wrong >= 5


@pytest.mark.parametrize("name", sorted(REFUSED_BY_CUTE))
def test_each_cute_static_assert_is_a_layout_error(results, name):
    out = results[1][list(REFUSED_BY_CUTE).index(name)]
    assert isinstance(out, cutecpp.CompileFailure), f"CuTe accepts {name}: {out}"
    with pytest.raises(LayoutError):
        REFUSED_BY_CUTE[name][1]()


def test_composed_layouts_evaluate_as_cute(results):
    pairs = results[0]["composed/eval"]
    assert len(pairs) >= 100
    for c, o in pairs:
        C, i = c.inputs
        assert int(co.normalize(o)) == C(i) == c.ours, (str(C), i, o)
        assert isinstance(C, (Layout, ComposedLayout))


def test_named_differences(results):
    """Issue 23's cases through CuTe: each identical to CuTe or a named difference with CuTe shown wrong."""
    by_op, _ = results
    named_cases = co.named_cases()
    named = {(n.op, tuple(map(str, n.inputs))) for n in named_cases}  # fresh objects: match on text
    picked = [(c, o) for pairs in by_op.values() for c, o in pairs if (c.op, tuple(map(str, c.inputs))) in named]
    assert len(picked) >= len(named_cases)
    seen = collections.Counter()
    for c, o in picked:
        if isinstance(o, cutecpp.CompileFailure):
            if not c.refused and co.named_refusal(c, o.message):
                seen["named refusal"] += 1
                continue
            assert c.refused, f"CuTe refuses {c.op}{tuple(map(str, c.inputs))} but layoutalg gives {c.ours}"
            seen["refused by both"] += 1
            continue
        if not c.refused and co.normalize(o) == co.ours_text(c.ours):
            seen["identical"] += 1
            continue
        if isinstance(c.ours, CompositionError):
            assert c.check is not None and "correct" not in c.check(_cute_value(o))
            seen["composition: CuTe's construction is not the composition"] += 1
            continue
        name = co.named_difference(c, _cute_value(o))
        assert name is not None, f"{c.op}{tuple(map(str, c.inputs))}: CuTe {o}, layoutalg {c.ours}"
        seen[name.split(" (CuTe:")[0]] += 1
    print("\nissue 23 cases:", dict(seen), "\nnamed differences in the random cases:", dict(NAMED))
    for want in ("complement: a shape cotarget folded short", "complement: an inexact gap, CuTe's rest short of the cotarget",
                 "left_inverse: overlapping modes have no quasi-inverse", "upcast: sub-vector modes that are not a layout of vectors",
                 "downcast: CuTe grows every unit-stride mode"):
        assert seen[want] >= 1, want


if __name__ == "__main__":  # pragma: no cover - a recording tool
    raise SystemExit(REC.main())
