"""The wgmma shared-memory layouts of the PTX ISA (seed 002), parsed, printed, evaluated, substituted.

Everything expected here is typed from the seed's text: the canonical forms table, the five
"Exact layout" examples and their parameter tables (T, m, k, LBO, SBO and the descriptor
encodings). The seed gives LBO/SBO as ``n*sizeof(type)`` bytes; the layouts are in elements.
"""

import numpy as np
import pytest
import sympy

from layoutalg.composed import ComposedLayout, parse_composed
from layoutalg.layout import Layout
from layoutalg.swizzle import Swizzle
from layoutalg.verify import equivalent, verify

T, m, k, LBO, SBO = (sympy.Symbol(n, integer=True, positive=True) for n in ("T", "m", "k", "LBO", "SBO"))

# (major-ness, swizzling mode) -> (swizzle, canonical layout), verbatim from the seed's table
CANONICAL = {
    ("MN", "none"): ("Swizzle<0,4,3>", "((T,1,m),(8,k)):((1,T,SBO),(1T,LBO))"),
    ("MN", "32B"): ("Swizzle<1,4,3>", "((T,2,m),(8,k)):((1,T,LBO),(2T,SBO))"),
    ("MN", "64B"): ("Swizzle<2,4,3>", "((T,4,m),(8,k)):((1,T,LBO),(4T,SBO))"),
    ("MN", "128B"): ("Swizzle<3,4,3>", "((T,8,m),(8,k)):((1,T,LBO),(8T,SBO))"),
    ("K", "none"): ("Swizzle<0,4,3>", "((8,m),(T,2k)):((1T,SBO),(1,LBO))"),
    ("K", "32B"): ("Swizzle<1,4,3>", "((8,m),(T,2k)):((2T,SBO),(1,T))"),
    ("K", "64B"): ("Swizzle<2,4,3>", "((8,m),(T,2k)):((4T,SBO),(1,T))"),
    ("K", "128B"): ("Swizzle<3,4,3>", "((8,m),(T,2k)):((8T,SBO),(1,T))"),
}

# the seed's examples: exact layout, element bytes, parameter table (LBO/SBO in elements), encodings
EXAMPLES = [
    (("K", "none"), "Swizzle<0,4,3> o ((8,2),(4,4)):((4,32),(1,64))", 4,
     {T: 4, m: 2, k: 2, LBO: 64, SBO: 32}, (16, 8)),
    (("K", "32B"), "Swizzle<1,4,3> o ((8,2),(4,4)):((8,64),(1,4))", 4,
     {T: 4, m: 2, k: 2, SBO: 64}, (1, 16)),
    (("MN", "none"), "Swizzle<0,4,3> o ((8,1,2),(8,2)):((1,8,64),(8,128))", 2,
     {T: 8, m: 2, k: 2, LBO: 128, SBO: 64}, (16, 8)),
    (("MN", "32B"), "Swizzle<1,4,3> o ((8,2,2),(8,2)):((1,8,128),(16,256))", 2,
     {T: 8, m: 2, k: 2, LBO: 128, SBO: 256}, (16, 32)),
    (("MN", "64B"), "Swizzle<2,4,3> o ((8,4,2),(8,2)):((1,8,256),(32,512))", 2,
     {T: 8, m: 2, k: 2, LBO: 256, SBO: 512}, (32, 64)),
]


def canonical(key):
    sw, lay = CANONICAL[key]
    return parse_composed(f"{sw} o {lay}")


def seed_spelling_normalized(text):
    """The seed writes 1T, 2T, 2k; sympy prints T, 2*T, 2*k."""
    import re

    text = re.sub(r"(?<![\d*])1([A-Za-z])", r"\1", text)
    return re.sub(r"(\d)([A-Za-z])", r"\1*\2", text)


@pytest.mark.parametrize("key", sorted(CANONICAL))
def test_canonical_forms_parse_and_print(key):
    C = canonical(key)
    assert isinstance(C, ComposedLayout) and isinstance(C.outer, Swizzle)
    sw, lay = CANONICAL[key]
    assert C.ptx == f"{sw} o {seed_spelling_normalized(lay)}"
    assert parse_composed(C.ptx) == C and parse_composed(str(C)) == C
    assert C.free_symbols <= {T, m, k, LBO, SBO}
    # size is an expression: 8 rows x (T elements of 128 bits ...): the product of the shape
    expect = {"MN": T * {"none": 1, "32B": 2, "64B": 4, "128B": 8}[key[1]] * m * 8 * k, "K": 8 * m * T * 2 * k}
    assert sympy.simplify(C.size() - expect[key[0]]) == 0


@pytest.mark.parametrize("key,text,bpe,params,enc", EXAMPLES, ids=[f"{a}-{b}" for (a, b), *_ in EXAMPLES])
def test_exact_layouts(key, text, bpe, params, enc):
    C = parse_composed(text)
    assert C.ptx == text  # prints back verbatim
    assert parse_composed(str(C)) == C
    # substituting the seed's parameters into the canonical form gives the exact layout
    assert canonical(key).subs(params) == C
    # evaluation is the definition: swizzle(inner(c))
    inner = C.inner
    assert C.table().tolist() == [C.outer(inner(i)) for i in range(inner.size())]
    # descriptor encodings: (bytes) >> 4, the seed's table ("1 (assumed)" for an unused LBO)
    lbo = params.get(LBO)
    assert ((lbo * bpe) >> 4 if lbo is not None else 1, (params[SBO] * bpe) >> 4) == enc


@pytest.mark.parametrize("key,text,bpe,params,enc", EXAMPLES, ids=[f"{a}-{b}" for (a, b), *_ in EXAMPLES])
def test_swizzle_units(key, text, bpe, params, enc):
    """Swizzle<B,4,3> acts on byte addresses; on elements of bpe bytes it is Swizzle<B,4-log2(bpe),3>."""
    C = parse_composed(text)
    elem = C.outer.to_elements(bpe)
    offs = C.inner.table()
    assert np.array_equal(C.outer(offs * bpe), elem(offs) * bpe)
    E = ComposedLayout(elem, 0, C.inner)
    assert np.array_equal(E.table() * bpe, C.outer(offs * bpe))


def test_hand_values_k32():
    # K-major 32B tf32, byte view: row 4 starts at element 32 = byte 128 -> bit 7 set -> bit 4 flipped
    C = parse_composed("Swizzle<1,4,3> o ((8,2),(4,4)):((8,64),(1,4))")
    E = ComposedLayout(C.outer.to_elements(4), 0, C.inner)
    assert E(4, 0) == 36 and E(0, 0) == 0 and E(3, 5) == 29


def test_k32_example_as_written_is_not_injective():
    # A finding, not a wish: with k = 2 the K-mode (4,4):(1,4) spans 16 elements but rows are 8 apart,
    # so the seed's exact layout repeats offsets (row 0 col 8 == row 1 col 0).
    C = parse_composed("Swizzle<1,4,3> o ((8,2),(4,4)):((8,64),(1,4))")
    assert C(0, 8) == C(1, 0)
    assert len(set(C.table().tolist())) < C.size()


def test_no_swizzle_examples_are_plain_layouts():
    for _key, text, *_ in EXAMPLES:
        C = parse_composed(text)
        if C.outer.is_identity:
            assert equivalent(C.inner, Layout(C.inner.shape, C.inner.stride))
            assert np.array_equal(C.table(), C.inner.table())


r, c = sympy.symbols("r c", integer=True, nonnegative=True)


def test_canonical_k_none_proven_for_all_parameters():
    """K-major, no swizzle: element (r, c) sits at (r%8)*T + (r//8)*SBO + (c%T) + (c//T)*LBO.

    From the seed: a core matrix row is T elements (16 bytes); SBO = offset between 8-row groups;
    LBO = offset between the column groups of a core matrix.
    """
    C = canonical(("K", "none"))
    formula = sympy.Mod(r, 8) * T + sympy.floor(r / 8) * SBO + sympy.Mod(c, T) + sympy.floor(c / T) * LBO
    v = verify(C.inner, formula, (r, c))
    assert v and v.method == "symbolic" and v.proven
    wrong = verify(C.inner, formula.subs(LBO, SBO), (r, c))
    assert not wrong


def test_canonical_mn_none_proven_for_all_parameters():
    """MN-major, no swizzle: T contiguous elements down M, SBO between them, T per column, LBO per 8 columns."""
    C = canonical(("MN", "none"))
    formula = sympy.Mod(r, T) + sympy.floor(r / T) * SBO + sympy.Mod(c, 8) * T + sympy.floor(c / 8) * LBO
    v = verify(C.inner, formula, (r, c))
    assert v and v.proven and v.method == "symbolic"
