"""to_cute_cpp / to_cute_dsl of the TMEM copy atoms (tcgen05.ld/st/cp): the exported C++ compiled on the
host with CuTe 4.2's sm100 headers and printed back (one live program each run; every atom replayed from
tests/data/cute/tmem_atoms.json, which recorded CuTe's print of exactly these ``Copy_Atom<Op, T>``
expressions), and the CuTe DSL ops built on the CPU. None of it ran on sm_100 hardware."""

from __future__ import annotations

import warnings

import pytest

import cute_tmem_cases as C
from layoutalg import LayoutError
from layoutalg.interop import cutecpp
from layoutalg.interop.cute import to_cute_cpp, to_cute_dsl
from layoutalg.nvidia.blackwell.tmem_copy import tmem_copy_atom, tmem_copy_names, tmem_copy_op

REC = C.REC.data
needs = C.REC.needs
OURS = {"float": "f32", "half_t": "f16"}


@needs
def test_every_atom_exports_what_cute_printed():
    """All 160 atoms x {float, half_t}: the exported type is the recorded expression, its text CuTe's print."""
    n = 0
    for name in tmem_copy_names():
        for cpp, ours in OURS.items():
            c = to_cute_cpp(tmem_copy_atom(name, ours))
            assert c.type == f"Copy_Atom<{name}, {cpp}>" and c.expr == c.cute == c.type + "{}" and c.atom == name
            assert C.norm(c.text) == C.norm(REC["atoms"][name][f"atom.{cpp}"]), (name, cpp)
            assert to_cute_cpp(tmem_copy_op(name), dtype=ours).type == c.type
            n += 1
    assert n == 320


@C.REC.live
def test_exported_cpp_compiles_and_prints_back():
    """One program: exported Copy_Atom<Op, T>{} for loads, stores and tcgen05.cp over six value types, printed by CuTe."""
    pick = [("SM100_TMEM_LOAD_32dp32b8x", "f32"), ("SM100_TMEM_LOAD_16dp256b2x_16b", "bf16"),
            ("SM100_TMEM_LOAD_16dp64b4x", "u32"), ("SM100_TMEM_LOAD_16dp32b16x", "s32"),
            ("SM100_TMEM_LOAD_16dp128b1x_16b", "f16"), ("SM100_TMEM_STORE_16dp256b1x", "f32"),
            ("SM100_TMEM_STORE_32dp32b4x_16b", "u16"), ("SM100_TMEM_STORE_16dp32b2x", "u8"),
            ("SM100_UTCCP_128dp256bit_1cta", "u32"), ("SM100_UTCCP_4x32dp128bit_2cta", "u8"),
            ("SM100_UTCCP_2x64dp128bitlw0123_1cta", "u32")]
    exports = [to_cute_cpp(tmem_copy_op(n), dtype=t) for n, t in pick]
    snippets = [f"print({c.expr}); printf(\"\\n\");" for c in exports]
    out = cutecpp.run_snippets(snippets, headers=C.HEADERS, chunk=len(snippets))
    for (n, t), c, o in zip(pick, exports, out):
        assert isinstance(o, str), o
        assert C.norm(o) == C.norm(c.text), (n, t)


def test_dsl_ops_build():
    pytest.importorskip("cutlass.cute")
    import cutlass  # noqa: F401  (names in the DSL text)
    from cutlass.cute.nvgpu import tcgen05  # noqa: F401

    n = 0
    for name in tmem_copy_names():
        op = tmem_copy_op(name)
        text = to_cute_dsl(op)
        assert text == to_cute_dsl(tmem_copy_atom(name, "f32"))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            d = eval(text)  # test-side only: the library never evaluates text
        if op.kind == "cp":
            assert d.cta_group.value == op.cta_group, name
        else:
            assert type(d).__name__.startswith("Ld" if op.kind == "ld" else "St") and d.repeat.value == op.num, name
            packed = (d.pack if op.kind == "ld" else d.unpack).name != "NONE"
            assert packed == op.pack16, name
        n += 1
    assert n == 160


def test_options_that_would_be_ignored_are_errors():
    with pytest.raises(LayoutError, match="needs the value type"):
        to_cute_cpp(tmem_copy_op("SM100_TMEM_LOAD_32dp32b1x"))
    with pytest.raises(LayoutError, match="fixes its value type"):
        to_cute_cpp(tmem_copy_atom("SM100_TMEM_LOAD_32dp32b1x", "f32"), dtype="f16")
    with pytest.raises(LayoutError, match="ctype"):
        to_cute_cpp(tmem_copy_op("SM100_TMEM_LOAD_32dp32b1x"), dtype="f32", ctype="f32")
    with pytest.raises(LayoutError, match="no CuTe C\\+\\+ spelling"):
        to_cute_cpp(tmem_copy_op("SM100_TMEM_LOAD_32dp32b1x"), dtype="e2m1")
