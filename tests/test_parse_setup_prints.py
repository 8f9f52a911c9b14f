"""parse reads a CuTe kernel's setup as CuTe C++ 4.2 and the CuTe DSL print it (issue 29, part 5).

tests/data/cute/setup_prints.json (``python tests/setup_print_cases.py``) holds CuTe's own prints of
tiled MMAs, tiled copies and a tiler, the DSL's prints of two of the same setups, and the prints of
k-block slices of swizzled shared-memory tiles with CuTe's element offset of every index.
"""

from __future__ import annotations

import json
import warnings

import pytest
from setup_print_cases import DATA

from layoutalg import ComposedLayout, Layout, Swizzle, parse
from layoutalg.errors import LayoutWarning
from layoutalg.parse import SetupPrint, parse_setup, parse_tiler
from layoutalg.nvidia.atoms import copy_atom
from layoutalg.tiled import make_tiled_copy, make_tiled_mma

RECORD = json.loads(DATA.read_text())


def _layouts_equal(a: SetupPrint, b: SetupPrint, keys) -> None:
    for k in keys:
        A, B = (a.atom if k.startswith("atom.") else a), (b.atom if k.startswith("atom.") else b)
        key = k.removeprefix("atom.")
        assert A[key] == B[key], (k, A[key], B[key])


def test_every_cpp_setup_print_parses():
    kinds = [parse(text).kind if isinstance(parse(text), SetupPrint) else "tiler" for text in RECORD["cpp"]]
    assert kinds == ["TiledMMA", "TiledMMA", "TiledCopy", "TiledCopy", "tiler", "TiledMMA", "TiledMMA", "TiledMMA",
                     "ThrMMA", "TiledCopy"]
    S = parse(RECORD["cpp"][0])
    assert S["ThrLayoutVMNK"] == Layout((32, 2, 2, 1), (1, 32, 64, 0))
    assert S["PermutationMNK"] == (None, None, None)
    assert S.atom["Shape_MNK"] == (16, 8, 16)
    assert S.atom["LayoutA_TV"] == Layout(((4, 8), (2, 2, 2)), ((32, 1), (16, 8, 128)))
    assert parse(RECORD["cpp"][1])["PermutationMNK"] == (32, 32, 16)
    assert parse(RECORD["cpp"][2]).atom["ValueType"] == "16b"


def test_cpp_prints_are_layoutalgs_own_tiled_objects():
    """CuTe's print and layoutalg's make_tiled_mma / make_tiled_copy of the same setup: the same layouts."""
    ours = parse(str(make_tiled_mma("SM80_16x8x16_F32F16F16F32_TN", (2, 2, 1))))
    _layouts_equal(parse(RECORD["cpp"][0]), ours,
                   ["ThrLayoutVMNK", "atom.ThrID", "atom.LayoutA_TV", "atom.LayoutB_TV", "atom.LayoutC_TV"])
    tc = make_tiled_copy(copy_atom("UniversalCopy<uint128_t>", 16), Layout((32, 4), (4, 1)), Layout((1, 8)))
    ours = parse(str(tc))
    _layouts_equal(parse(RECORD["cpp"][2]), ours, ["TiledLayout_TV", "atom.ValLayoutSrc", "atom.ValLayoutDst"])


def test_dsl_prints_read_as_the_cpp_prints_of_the_same_setup():
    for dsl, cpp in ((RECORD["dsl"][0], RECORD["cpp"][0]), (RECORD["dsl"][1], RECORD["cpp"][2])):
        D, C = parse(dsl), parse(cpp)
        assert D.kind == C.kind and D.atom.kind == C.atom.kind
        shared = [k for k in C if k in D and k not in ("Tiler_MN",)]
        shared += [f"atom.{k}" for k in C.atom if k in D.atom and k != "ValueType"]
        assert len(shared) >= 3
        _layouts_equal(D, C, shared)
    # the DSL's tiler is a tuple of layouts, CuTe C++'s of integers: the same tile
    assert parse(RECORD["dsl"][1])["Tiler_MN"] == (Layout(32, 1), Layout(32, 1))
    assert parse(RECORD["cpp"][2])["Tiler_MN"] == (32, 32)


def test_tiler_prints():
    assert parse(RECORD["cpp"][4]) == (Layout((4, 32), (32, 1)), Layout(32, 1))
    assert parse_tiler("(_,_32:_1)") == (None, Layout(32, 1))
    assert parse("(_,_,_)") == (None, None, None)


def test_labelled_lines_read_as_their_value():
    assert parse("TiledLayout_TV: ((_4,_32),_8):((_256,_1),_32)") == Layout(((4, 32), 8), ((256, 1), 32))
    assert parse("  TV Layout A:     ((4,8),(2,2)):((32,1),(16,8))") == Layout(((4, 8), (2, 2)), ((32, 1), (16, 8)))
    assert parse("ValLayoutDst: (_32,(_2,_4)):(_2,(_1,_64))") == Layout((32, (2, 4)), (2, (1, 64)))


@pytest.mark.parametrize("k", range(len(RECORD["sliced"])))
def test_sliced_swizzled_tensors_are_cutes_function_from_the_aligned_base(k):
    case = RECORD["sliced"][k]
    T = parse(case["print"])
    shift = (T.base - 0x2000) * 8 // T.bits  # CuTe's offsets count from the tile's start, 0x2000
    assert [int(T.function(i)) + shift for i in range(len(case["offsets"]))] == case["offsets"]


def test_the_issues_k_block_print():
    T = parse("Sw<2,4,3>_smem_ptr[8b](0x2020) o (_64,_32):(_64,_1)")
    assert T.base == 0x2000 and T.function == ComposedLayout(Swizzle(2, 4, 3), 32, Layout((64, 32), (64, 1)))


def test_a_stray_letter_warns_and_isa_layouts_stay_quiet():
    with pytest.warns(LayoutWarning, match="'l'"):
        parse("(8,64):(64,l)")
    with pytest.warns(LayoutWarning, match="'x'"):
        parse("(8,64):(64,x)")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for text in ("((8,m),(T,2k)):((1T,SBO),(1,LBO))", "(8,m):(1,8)", "((T,8),k):((1,SBO),LBO)", "(S,4):(1,S)"):
            parse(text)


def test_setup_print_errors_are_layout_errors():
    from layoutalg import LayoutError

    for text in ("TiledMMA\n  nonsense here", "TiledMMA\nMMA_Atom\nCopy_Atom", "MMA_Atom\n  LayoutA_TV: (4,2):(1"):
        with pytest.raises(LayoutError):
            parse_setup(text)


def test_umma_tiled_mmas_and_a_tmem_copy_are_layoutalgs():
    """CuTe's prints of sm_100 setups: the UMMA tiled MMAs and make_tmem_copy read as layoutalg builds them."""
    from layoutalg.nvidia.blackwell.tmem_accum import accumulator_layout, make_tmem_copy

    for k, name in ((6, "SM100_MMA_F16BF16_SS<f16,f16,float,128,256,K,K>"),
                    (7, "SM100_MMA_F16BF16_2x1SM_SS<f16,f16,float,256,128,K,MN>")):
        _layouts_equal(parse(RECORD["cpp"][k]), parse(str(make_tiled_mma(name))),
                       ["ThrLayoutVMNK", "atom.ThrID", "atom.LayoutA_TV", "atom.LayoutB_TV", "atom.LayoutC_TV"])
    C = parse(RECORD["cpp"][9])
    tc = make_tmem_copy("SM100_TMEM_LOAD_32dp32b8x", accumulator_layout(128, 64))
    assert C["TiledLayout_TV"] == tc.layout_tv
    assert C["Tiler_MN"] == tuple(tc.tiler)


def test_a_threads_slice_holds_its_tiled_mma_and_atom():
    S = parse(RECORD["cpp"][8])
    assert S.kind == "ThrMMA" and S["Thr VMNK"] == (3, 0, 0, 0)
    assert S.atom.kind == "TiledMMA" and S.atom.atom.kind == "MMA_Atom"
    assert S.atom["ThrLayoutVMNK"] == parse(RECORD["cpp"][0])["ThrLayoutVMNK"]
