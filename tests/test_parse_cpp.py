"""parse reads CuTe's C++ spellings: checked against CuTe itself (its headers, built on this CPU).

Each C++ spelling is compiled in a host program that prints CuTe's own value of it; parsing that
print must give what parsing the C++ text gives. Layouts are drawn at random (fixed seed) and
spelled in the type form (``Layout<Shape<..>,Stride<..>>``, ``_N``/``Int<N>``/``C<N>``, ``cute::``)
and in the expression form (``make_layout(make_shape(..), make_stride(..))``).
"""

from __future__ import annotations

import random

import pytest

from oracle_recorder import SnippetRecorder

from layoutalg import ComposedLayout, Layout, LayoutError, Swizzle, equivalent, parse
from layoutalg.interop import cutecpp
from layoutalg.nvidia.hopper import wgmma

needs_cute = pytest.mark.skipif(cutecpp.available() is not None, reason=f"CuTe C++ unavailable: {cutecpp.available()}")


def _random_profile(rng: random.Random, depth: int = 2) -> object:
    if depth == 0 or rng.random() < 0.5:
        return None
    return tuple(_random_profile(rng, depth - 1) for _ in range(rng.randint(1, 3)))


def _fill(p: object, leaf) -> object:
    return leaf() if p is None else tuple(_fill(x, leaf) for x in p)  # type: ignore[union-attr]


def _type(t: object, int_style: str, kind: str, rng: random.Random) -> str:
    if type(t) is int:
        style = int_style if int_style != "mixed" else rng.choice(["_", "Int", "C"])
        if style == "_" and t >= 0:
            return f"_{t}"
        return f"cute::Int<{t}>" if style == "Int" else f"C<{t}>"
    return f"{kind}<" + ",".join(_type(x, int_style, kind, rng) for x in t) + ">"  # type: ignore[union-attr]


def _expr(t: object, maker: str) -> str:
    if type(t) is int:
        return f"Int<{t}>{{}}"
    return f"{maker}(" + ", ".join(_expr(x, maker) for x in t) + ")"  # type: ignore[union-attr]


def _cases() -> list[str]:
    rng = random.Random(7)
    out = []
    for k in range(40):
        prof = _random_profile(rng)
        shape = _fill(prof, lambda: rng.choice([1, 2, 4, 8, 3, 16]))
        stride = _fill(prof, lambda: rng.choice([0, 1, 2, 8, 64, -1, 32]))
        style = ["_", "Int", "C", "mixed"][k % 4]
        out.append(f"Layout<{_type(shape, style, 'Shape', rng)}, {_type(stride, style, 'Stride', rng)}>")
        out.append(f"make_layout({_expr(shape, 'make_shape')}, {_expr(stride, 'make_stride')})")
        if k % 5 == 0:
            out.append(f"make_layout({_expr(shape, 'make_shape')}, LayoutRight{{}})")
            out.append(f"Layout<{_type(shape, 'mixed', 'Shape', rng)}>")
    out += [
        "Layout<Shape<_8,_64>,Stride<_64,_1>>",
        "Layout<Shape<Shape<_4,_8>,_2>, Stride<Stride<_1,_4>,_32>>",
        "cute::Layout<cute::Shape<cute::_8, cute::Int<64>>, cute::Stride<cute::C<64>, cute::_1>>",
        "make_layout(make_shape(_8{}, _64{}), LayoutRight{})",
        "make_layout(make_shape(_8{}, _64{}), LayoutLeft{})",
        "make_layout(make_shape(Int<8>{}, Int<64>{}), make_stride(Int<64>{}, Int<1>{}))",
        "composition(Swizzle<3,4,3>{}, make_layout(make_shape(Int<8>{}, Int<64>{}), make_stride(Int<64>{}, Int<1>{})))",
        "composition(Swizzle<2,3,3>{}, Layout<Shape<_8,_32>,Stride<_32,_1>>{})",
        "composition(Swizzle<3,4,3>{}, Int<8>{}, Layout<Shape<_8,_64>,Stride<_64,_1>>{})",
        "make_composed_layout(Swizzle<1,2,3>{}, _0{}, Layout<_16,_1>{})",
        "Layout<_8,_1>",
        "Layout<Shape<_8>,Stride<_1>>",
        "Layout<Shape<_8,_4>,Stride<Int<-1>,_8>>",
        "composition(Layout<Shape<_6,_2>,Stride<_8,_2>>{}, Layout<Shape<_4,_3>,Stride<_3,_1>>{})",
        "Shape<_8,_4>",
        "ComposedLayout<Swizzle<3,4,3>, _0, Layout<Shape<_8,_64>,Stride<_64,_1>>>",
        "ComposedLayout<Swizzle<3,4,3>, Int<16>, Layout<Shape<_8,_64>,Stride<_64,_1>>>",
        "decltype(composition(Swizzle<3,3,3>{}, Layout<Shape<_8,_64>, Stride<_64,_1>>{}))",
    ]
    return out


def _print_stmt(text: str) -> str:
    """A C++ statement that prints CuTe's value of the spelling (a type gets ``{}``)."""
    if text.startswith("decltype("):
        return f"print({text}{{}});"
    if text.split("<", 1)[0].replace("cute::", "") in ("Layout", "Shape", "ComposedLayout"):
        if text.startswith("Shape"):
            return f"print(make_layout({text}{{}}));"
        return f"print({text}{{}});"
    return f"print({text});"


@needs_cute
def test_cpp_spellings_read_as_cute_prints_them(printed) -> None:
    cases = _cases()
    bad = []
    for text, out in zip(cases, [printed[_print_stmt(t)] for t in cases]):
        assert out, f"CuTe refused {text}: {out}"
        ours, cute = parse(text), parse(out)
        if ours != cute or type(ours) is not type(cute):
            bad.append(f"{text}: parse -> {ours}, CuTe prints {out}")
    assert not bad, "\n".join(bad[:10])


_ATOMS = [(major, sw) for major in ("K", "MN") for sw in (0, 32, 64, 128)]
_TYPES = {"f16": "half_t", "tf32": "tfloat32_t", "e4m3": "float_e4m3_t"}
_SW_NAME = {0: "INTER", 32: "SW32", 64: "SW64", 128: "SW128"}


def _atom_stmts() -> tuple[list[tuple[str, int, str]], list[str]]:
    keys = [(m, sw, dt) for m, sw in _ATOMS for dt in _TYPES]
    stmts = []
    for major, sw, dt in keys:
        atom = f"GMMA::Layout_{major}_{_SW_NAME[sw]}_Atom<{_TYPES[dt]}>"
        stmts.append(f"print({atom}{{}}); print(\"|\"); print(as_position_independent_swizzle_layout({atom}{{}}));")
    return keys, stmts


def _snippets() -> list[str]:
    """Every snippet this module asks CuTe (one batch: one live program per run)."""
    return [_print_stmt(t) for t in _cases()] + _atom_stmts()[1]


REC = SnippetRecorder("parse_cpp", lambda: [(_snippets(), {})], script="test_parse_cpp")


@pytest.fixture(scope="module")
def printed() -> dict[str, object]:
    """CuTe's print of each snippet: replayed from tests/data/cute/parse_cpp.json, a live sample re-asked."""
    snips = _snippets()
    return dict(zip(snips, REC.run_snippets(snips)))


@needs_cute
def test_gmma_atoms_with_smem_ptr_flag_read_as_the_catalog_in_element_units(printed) -> None:
    """CuTe's GMMA atoms swizzle byte addresses (smem_ptr_flag_bits<E>); parse gives them in element
    units, as cute::as_position_independent_swizzle_layout does, and that is the catalog's atom."""
    keys, stmts = _atom_stmts()
    for (major, sw, dt), out in zip(keys, [printed[s] for s in stmts]):
        assert out, out
        flagged, independent = out.split("|")
        assert "smem_ptr[" in flagged
        ours = parse(flagged)
        # CuTe drops an identity swizzle (INTER atoms); the function is the same
        assert equivalent(ours, parse(independent)), (flagged, independent)
        assert ours == wgmma.atom(major, sw, dt), (major, sw, dt, flagged, wgmma.atom(major, sw, dt))


def test_the_type_forms_of_the_issue() -> None:
    assert parse("Layout<Shape<_8,_64>,Stride<_64,_1>>") == Layout((8, 64), (64, 1))
    assert parse("Layout<Shape<Shape<_4,_8>,_2>, Stride<Stride<_1,_4>,_32>>") == Layout(((4, 8), 2), ((1, 4), 32))
    assert parse(" cute::Layout< cute::Shape<cute::Int<8>, C<64>>, Stride<Int<-1>,_1> > ") == Layout((8, 64), (-1, 1))
    assert parse("Shape<_8,_64>") == Layout((8, 64), (1, 8))
    assert parse("Swizzle<3,4,3>") == Swizzle(3, 4, 3)
    sw = ComposedLayout(Swizzle(3, 4, 3), 0, Layout((8, 64), (64, 1)))
    assert parse("ComposedLayout<Swizzle<3,4,3>, _0, Layout<Shape<_8,_64>,Stride<_64,_1>>>") == sw
    assert parse("ComposedLayout<Swizzle<3,4,3>, Int<8>, Layout<Shape<_8,_64>,Stride<_64,_1>>>").offset == 8
    # the GMMA atom of 16-bit elements: the byte swizzle <3,4,3> is <3,3,3> on elements
    flagged = parse("ComposedLayout<Swizzle<3,4,3>, smem_ptr_flag_bits<16>, Layout<Shape<_8,_64>,Stride<_64,_1>>>")
    assert flagged == ComposedLayout(Swizzle(3, 3, 3), 0, Layout((8, 64), (64, 1)))


def test_the_expression_forms_of_the_issue() -> None:
    L = Layout((8, 64), (64, 1))
    assert parse("make_layout(make_shape(Int<8>{}, Int<64>{}), make_stride(Int<64>{}, Int<1>{}))") == L
    assert parse("make_layout(make_shape(_8{}, _64{}), LayoutRight{})") == L
    assert parse("composition(Swizzle<3,4,3>{}, make_layout(make_shape(_8{}, _64{}), LayoutRight{}))") == \
        ComposedLayout(Swizzle(3, 4, 3), 0, L)


@pytest.mark.parametrize("text", ["Shape<int,int>", "Layout<Shape<int,_8>, Stride<_1,int>>", "make_layout(make_shape(M, N))",
                                  "Layout<Shape<_8,int64_t>>", "make_layout(make_shape(8, n))"])
def test_dynamic_extents_have_no_value(text: str) -> None:
    with pytest.raises(LayoutError, match="dynamic extent"):
        parse(text)


@pytest.mark.parametrize("text", ["Layout<Shape<_8,_4>,Stride<_1>>", "Layout<Shape<_0>,Stride<_1>>", "Foo<3>",
                                  "make_layout(make_shape(_8{}), make_stride(_1{}), _3{})", "Int<8>{}", "Layout<Shape<_8,_4>"])
def test_bad_cpp_is_a_layout_error(text: str) -> None:
    with pytest.raises(LayoutError, match="parse"):
        parse(text)


if __name__ == "__main__":  # pragma: no cover - a recording tool
    raise SystemExit(REC.main())
