"""parse reads what CuTe C++ 4.2 and the CuTe DSL print: tensors with their pointers, swizzled and
composed layouts, nested composed layouts, print_tensor's values.

The oracle is CuTe itself. tests/data/cute/prints.json holds 140 prints of CuTe C++ (g++ against the
CUTLASS headers) with CuTe's own element offsets for every index, and 100 prints of the CuTe DSL
with the layouts they were made from (``python tests/print_cases.py --record`` records them); each run
replays them all, compiles a small live C++ sample and traces the DSL cases live when it is
installed. A print parses to the same function: ``parse(print).function(i)`` (or ``parse(print)(i)``)
equals CuTe's offset for every ``i < size``.
"""

from __future__ import annotations

import random
import re

import numpy as np
import pytest

import print_cases as pc
from layoutalg import ComposedLayout, Layout, LayoutError, Swizzle, parse
from layoutalg.interop import cutecpp
from layoutalg.inttuple import flatten
from layoutalg.parse import ParsedTensor, swizzle_units

RECORD = pc.REC.data
needs_cute = pc.REC.live


def _function(x):
    return x.function if isinstance(x, ParsedTensor) else x


def _check(printed: str, offsets: list[int]) -> str | None:
    try:
        f = _function(parse(printed))
    except LayoutError as e:
        return f"refused: {e}"
    if int(f.size()) != len(offsets):
        return f"size {f.size()} != {len(offsets)}"
    got = [int(f(i)) for i in range(len(offsets))]
    if got != offsets:
        i = next(k for k in range(len(got)) if got[k] != offsets[k])
        return f"at index {i}: parse gives {got[i]}, CuTe {offsets[i]}"
    return None


def _colex(i: int, dims: list[int]) -> tuple[int, ...]:
    out = []
    for d in dims:
        out.append(i % d)
        i //= d
    return tuple(out)


def _top_dims(L) -> list[int]:
    while isinstance(L, ComposedLayout):
        L = L.inner
    shape = L.shape if type(L.shape) is tuple else (L.shape,)
    return [int(np.prod(flatten(s))) for s in shape]


def _check_values(T: ParsedTensor, value_of_index) -> None:
    """``T.data`` at the top-level coordinate of index i holds the value written at index i."""
    dims = _top_dims(T.layout)
    assert T.data is not None and list(T.data.shape) == dims
    for i in range(int(np.prod(dims))):
        assert T.data[_colex(i, dims)] == value_of_index(i), (T.text, i)


def test_cpp_recorded_prints_parse_to_cute_functions():
    cases = RECORD["cpp"]
    assert len(cases) == 140
    assert {c["kind"] for c in cases} == {"plain", "composed", "swizzled_ptr", "nested", "subbyte", "values", "layout"}
    bad = [(c["printed"][:120], why) for c in cases if (why := _check(c["printed"], c["offsets"]))]
    assert not bad, f"{len(bad)} of {len(cases)} C++ prints differ: {bad[:4]}"
    for c in cases:
        if c["kind"] == "values":  # print_tensor of t(i) = i % 100
            _check_values(parse(c["printed"]), lambda i: i % 100)


def test_cpp_recorded_pointers_keep_their_width():
    for c in RECORD["cpp"]:
        if c["kind"] in ("layout",):
            continue
        T = parse(c["printed"])
        assert isinstance(T, ParsedTensor)
        m = re.search(r"\[(\d+)b\]", c["printed"])
        assert T.bits == int(m.group(1))
        for space in ("gmem", "smem", "rmem"):
            if f"make_{space}_ptr" in c["snippet"] or c["kind"] == "swizzled_ptr" and space == "smem":
                # CuTe 4.2 prints make_rmem_ptr of a raw pointer as the plain ptr[..b](..)
                assert T.pointer.space == (None if space == "rmem" else space), c["printed"]


@needs_cute
def test_cpp_live_sample():
    """A fresh sample compiled each run (another seed than the record)."""
    cases = pc.cpp_cases(seed=99, n=14)
    rec = pc.run_cpp(cases)
    assert not [c for c in rec if "refused" in c]
    bad = [(c["printed"][:120], why) for c in rec if (why := _check(c["printed"], c["offsets"]))]
    assert not bad, bad


def test_dsl_recorded_prints_parse_to_the_exported_layouts():
    cases = RECORD["dsl"]
    assert len(cases) == 100
    bad = [(c["printed"][:120], why) for c in cases if (why := _check(c["printed"], c["offsets"]))]
    assert not bad, f"{len(bad)} of {len(cases)} DSL prints differ: {bad[:4]}"
    assert any(c["printed"].startswith("tensor<ptr<") for c in cases)
    assert any(c["printed"].startswith("(S<") for c in cases)  # nested composed layouts, parenthesised


def test_dsl_live(tmp_path):
    pytest.importorskip("cutlass.cute", reason="the CuTe DSL (nvidia-cutlass-dsl) is not installed")
    cases = pc.dsl_cases()
    lines = pc.run_dsl([e for _, e in cases], tmp_path)
    assert len(lines) == len(cases)
    assert lines == [c["printed"] for c in RECORD["dsl"]]  # the record is what this DSL prints
    bad = [(p, why) for (L, _), p in zip(cases, lines) if (why := _check(p, pc.offsets(L)))]
    assert not bad, bad


def test_dsl_print_tensor_values(tmp_path):
    """The DSL's print_tensor (run on the CPU) of register tensors of ranks 1 to 3 with t[i] = i."""
    pytest.importorskip("cutlass.cute", reason="the CuTe DSL (nvidia-cutlass-dsl) is not installed")
    layouts = [Layout(5, 1), Layout((4, 3), (1, 4)), Layout((2, 3, 2), (1, 2, 6)), Layout((4, (2, 2)), (1, (4, 8))),
               Layout((2, 3, 2), (6, 1, 3))]
    from layoutalg.interop.cute import to_cute_dsl

    body = "".join(
        f"    t{k} = cute.make_rmem_tensor({to_cute_dsl(L)}, cutlass.Float32)\n"
        f"    for i in cutlass.range_constexpr({L.size()}):\n        t{k}[i] = cutlass.Float32(i)\n"
        f"    cute.print_tensor(t{k})\n" for k, L in enumerate(layouts))
    path = tmp_path / "dsl_values.py"
    path.write_text("import cutlass\nimport cutlass.cute as cute\n\n\n@cute.jit\ndef run():\n" + body)
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", f"import runpy; runpy.run_path({str(path)!r})['run']()"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    prints = re.findall(r"tensor\(.*?\]\)", out.stdout, re.S)
    assert len(prints) == len(layouts), out.stdout
    for L, p in zip(layouts, prints):
        T = parse(p)
        assert T.pointer.space == "rmem" and T.bits == 32 and T.pointer.dtype == "f32"
        assert T.layout == L
        _check_values(T, float)


# ---------------------------------------------------------------------------------------------
# the forms one by one, and what parse says about them
# ---------------------------------------------------------------------------------------------


def test_issue_examples():
    T = parse("smem_ptr[16b](0x7f00) o (4,2):(2,1)")
    assert (T.pointer.space, T.bits, T.pointer.address, T.layout) == ("smem", 16, 0x7F00, Layout((4, 2), (2, 1)))
    T = parse("gmem_ptr[32b](0x7ffd1000) o (_8,_4):(_1,_8)")
    assert (T.pointer.space, T.bits) == ("gmem", 32)
    C = parse("S<3,3,3> o 0 o (64,64):(64,1)")
    assert C == ComposedLayout(Swizzle(3, 3, 3), 0, Layout((64, 64), (64, 1)))
    assert parse("S<3,4,3>") == Swizzle(3, 4, 3)
    assert parse("S<2,2,-3 o 0 o (4,2):(2,1)") == ComposedLayout(Swizzle(2, 2, -3), 0, Layout((4, 2), (2, 1)))
    T = parse("rmem_ptr[8b](0x10) o 4:1")
    assert T.pointer.space == "rmem" and T.bits == 8


def test_symbols_named_like_swizzles_and_pointers_still_read():
    assert parse("(S,4):(1,S)").shape[0].name == "S"
    assert str(parse("(ptr,2):(1,ptr)")) == "(ptr,2):(1,ptr)"


def test_swizzled_pointer_is_position_independent_only_when_aligned():
    T = parse("Sw<3,4,3>_smem_ptr[16b](0x10000) o (_8,_64):(_64,_1)")
    assert T.function == ComposedLayout(Swizzle(3, 3, 3), 0, Layout((8, 64), (64, 1)))
    # the same permutation by hand: byte address 2*L(i) swizzled, back to elements
    L = Layout((8, 64), (64, 1))
    assert [T(i) for i in range(512)] == [Swizzle(3, 4, 3)(2 * L(i)) // 2 for i in range(512)]
    # not aligned (a slice of a swizzled tile): counted from the aligned base below (issue 29 asked for it)
    T = parse("Sw<3,4,3>_smem_ptr[16b](0x7f00) o (_8,_64):(_64,_1)")
    assert T.base == 0x7C00
    assert [T(i) for i in range(512)] == [Swizzle(3, 4, 3)(0x300 + 2 * L(i)) // 2 for i in range(512)]


def test_refusals_are_layout_errors():
    for text, words in [
        ("ArithTuple(_0,_0) o (_4,_2):(_1@0,_1@1)", "coordinate"),
        ("tensor<(0,0) o (4,2):(1@0,1@1)>", "coordinate"),
        ("ptr[32b](0x10) o (_2,_2):(_1,_2):\n 1 2\n 3", "3 values printed for a tensor of 4"),
        ("ptr[32b](0x10) o (_2,_2):(_1,_2):\n 1 x\n 3 4", "not numbers"),
        ("smem_ptr[16b](0x10) (4,2):(2,1)", "expected ' o '"),
        ("gmem_ptr[16b](0x10) o Sw<3,4,3>", "swizzle alone"),
        ("(S<3,4,3> o 0)", "offset"),
        ("tensor<ptr<f16, smem> o (4,2):(2,1)", None),
        ("(_4,_2):(_1@0,_1@1)", "basis vector"),  # CuTe's print of make_identity_layout
    ]:
        with pytest.raises(LayoutError) as e:
            parse(text)
        if words:
            assert words in str(e.value), str(e.value)


def _unit_claim(text: str) -> tuple[int, int]:
    """(unit in bytes, period in bytes) read from swizzle_units' sentence."""
    u = int(re.search(r"moves (\d+)-byte units", text).group(1))
    p = int(re.search(r"repeats every (\d+) bytes", text).group(1))
    return u, p


@pytest.mark.parametrize("bits", [4, 8, 16, 32, 64])
@pytest.mark.parametrize("B,M,S", [(3, 4, 3), (2, 4, 3), (1, 4, 3), (3, 3, 3), (2, 1, 3), (3, 0, 4), (2, 2, -3)])
@pytest.mark.parametrize("on", ["bytes", "elements"])
def test_swizzle_units_says_what_moves(bits, B, M, S, on):
    """The unit swizzle_units names is the largest aligned block the swizzle keeps whole, and the
    period the smallest shift it commutes with -- checked on the swizzle's own values."""
    sw = Swizzle(B, M, S)
    if on == "elements" and (bits << M) < 8:
        return  # units smaller than a byte: the sentence speaks bits
    text = swizzle_units(sw, bits, on)
    unit_b, period_b = _unit_claim(text)
    per = 8 if on == "bytes" else bits  # bits per offset step
    unit, period = unit_b * 8 // per, period_b * 8 // per  # in the swizzle's own offsets
    xs = range(4 * period)
    assert all(sw(x) - sw(x - x % unit) == x % unit for x in xs)  # a unit stays whole
    assert any(sw(x) - sw(x - x % (2 * unit)) != x % (2 * unit) for x in xs)  # twice the unit does not
    assert all(sw(x + period) == sw(x) + period for x in xs) and any(sw(x + period // 2) != sw(x) + period // 2 for x in xs)
    if unit_b * 8 >= bits:
        assert f"= {unit_b * 8 // bits} element" in text
    else:
        assert "splits elements" in text


def test_issue_wording_m4_on_2_byte_elements():
    T = parse("Sw<3,4,3>_smem_ptr[16b](0x400) o (_8,_64):(_64,_1)")
    assert "swizzle moves 16-byte units = 8 elements of 16b" in T.describe()
    T = parse("smem_ptr[16b](0x400) o Sw<3,3,3> o _0 o (_8,_64):(_64,_1)")
    assert "swizzle moves 16-byte units = 8 elements of 16b" in T.describe()
    with pytest.raises(LayoutError, match="on="):
        swizzle_units(Swizzle(3, 4, 3), 16, on="words")


def test_as_concrete_layout_takes_a_printed_tensor():
    from layoutalg.parse import as_concrete_layout

    assert as_concrete_layout("smem_ptr[16b](0x7f00) o (4,2):(2,1)", "show") == Layout((4, 2), (2, 1))


# ---------------------------------------------------------------------------------------------
# print_layout: the layout, then its grid
# ---------------------------------------------------------------------------------------------
#: CuTe C++ 4.2's print_layout of (_4,_3):(_3,_1) and of a swizzled 4x4, as it printed them
#: (tests/print_cases.py's harness, 2026-11-25); test_print_layout_live prints more each run
PRINT_LAYOUT = [
    "(_4,_3):(_3,_1)\n       0    1    2 \n    +----+----+----+\n 0  |  0 |  1 |  2 |\n    +----+----+----+\n"
    " 1  |  3 |  4 |  5 |\n    +----+----+----+\n 2  |  6 |  7 |  8 |\n    +----+----+----+\n 3  |  9 | 10 | 11 |\n"
    "    +----+----+----+",
    "Sw<2,0,2> o _0 o (_4,_4):(_4,_1)\n       0    1    2    3 \n    +----+----+----+----+\n 0  |  0 |  1 |  2 |  3 |\n"
    "    +----+----+----+----+\n 1  |  5 |  4 |  7 |  6 |\n    +----+----+----+----+\n 2  | 10 | 11 |  8 |  9 |\n"
    "    +----+----+----+----+\n 3  | 15 | 14 | 13 | 12 |\n    +----+----+----+----+",
]


def test_print_layout_grids_read_as_their_layout():
    assert parse(PRINT_LAYOUT[0]) == Layout((4, 3), (3, 1))
    assert parse(PRINT_LAYOUT[1]) == ComposedLayout(Swizzle(2, 0, 2), 0, Layout((4, 4), (4, 1)))
    with pytest.raises(LayoutError, match=r"the grid says \(3,1\) -> 12"):
        parse(PRINT_LAYOUT[0].replace(" 10 ", " 12 "))
    from layoutalg.cli import print_layout

    L = Layout((100, 70), (70, 1))
    assert parse(print_layout(L)) == L  # layoutalg's own grid (cut to 64 x 64) reads back too
    assert parse("Layout<Shape<_8,\n _64>, Stride<_64,_1>>") == Layout((8, 64), (64, 1))  # no grid: C++ text


@needs_cute
def test_print_layout_live():
    import cute_oracle as co

    r = random.Random(7)
    layouts = []
    for k in range(6):
        L = co.rand_compact(r, max_leaves=3, max_size=256) if k % 2 else co.rand_layout(r, max_leaves=3, max_size=256)
        if len(L) != 2:
            L = Layout((L.size(), 1), (1, 0)) if k % 3 else Layout((4, 8), (8, 1))
        layouts.append(ComposedLayout(Swizzle(2, 1, 3), 0, L) if k == 3 and L.is_static and min(flatten(L.stride)) >= 0 else L)
    outs = cutecpp.run_snippets([f"print_layout({pc.cpp_expr(L)});" for L in layouts])
    for L, out in zip(layouts, outs):
        assert out, out
        got = parse(out)
        assert [int(got(i)) for i in range(int(L.size()))] == [int(L(i)) for i in range(int(L.size()))], out


def test_a_pasted_tensor_print_works_where_a_layout_is_asked_for():
    from layoutalg.composed import parse_composed
    from layoutalg.nvidia.hopper.wgmma import descriptor_from_layout, tile

    text = "smem_ptr[16b](0x400) o Sw<3,3,3> o _0 o (_8,_64):(_64,_1)"
    assert parse_composed(text) == parse("Sw<3,3,3> o _0 o (8,64):(64,1)")
    want = descriptor_from_layout(tile("K", 128, "bf16", (8, 64)), "bf16").encode()
    assert descriptor_from_layout(text, "bf16").encode() == want
    pytest.importorskip("triton")
    from layoutalg.interop.gluon import to_gluon

    r = to_gluon("Sw<3,4,3>_smem_ptr[16b](0x400) o (_8,_64):(_64,_1)", (8, 64), element_bitwidth=16)
    assert r.source == "gl.NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16)"


def test_dsl_smem_atom_swizzle_is_explained_both_ways():
    """The DSL's K_SW128 f16 atom prints S<3,4,3> over element offsets; describe says what it is as
    printed (32-byte units of elements) and on the pointer after recast_ptr (16-byte units)."""
    T = parse("tensor<ptr<f16, smem, align<1024>> o S<3,4,3> o 0 o (8,64):(64,1)>")
    d = T.describe()
    assert "on element offsets of 16b elements: swizzle moves 32-byte units = 16 elements of 16b" in d
    assert "on byte addresses of 16b elements: swizzle moves 16-byte units = 8 elements of 16b" in d
    assert T.function == ComposedLayout(Swizzle(3, 4, 3), 0, Layout((8, 64), (64, 1)))  # the function as printed

