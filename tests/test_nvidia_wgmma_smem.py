"""wgmma shared-memory layouts: the seed's canonical forms and worked examples, atoms, tiles, descriptors.

Expected values come from the seed text (PTX ISA 9.7.15.5.1.2, transcribed below), from the
well-known XOR formula of the 128B swizzle, and from CuTe's make_gmma_desc rules re-implemented
here on top of pycute (the reference Python CuTe shipped with nvidia-cutlass) -- never from the
code under test.
"""

from __future__ import annotations

import itertools

import numpy as np
import pycute
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from layoutalg.composed import ComposedLayout, parse_composed
from layoutalg.errors import LayoutError, LayoutWarning
from layoutalg.layout import Layout
from layoutalg.nvidia.hopper.descriptor import MatrixDescriptor
from layoutalg.nvidia.hopper.wgmma import (
    atom,
    atom_by_name,
    canonical_layout,
    canonical_swizzle,
    descriptor_from_layout,
    k_block_descriptors,
    parse_instruction,
    seed_examples,
    tile,
)
from layoutalg.swizzle import Swizzle

BITS = {"tf32": 32, "f16": 16, "bf16": 16, "e4m3": 8, "e5m2": 8, "s8": 8, "u8": 8}
DTYPES = list(BITS)
SWIZZLES = [0, 32, 64, 128]

# --- the seed, transcribed ------------------------------------------------------------------
# (major, swizzle) -> "Canonical Layout without swizzling" and "Swizzling on the previous column"
SEED_TABLE = {
    ("MN", 0): ("((T,1,m),(8,k)):((1,T,SBO),(1T,LBO))", "Swizzle<0, 4, 3>"),
    ("MN", 32): ("((T,2,m),(8,k)):((1,T,LBO),(2T,SBO))", "Swizzle<1, 4, 3>"),
    ("MN", 64): ("((T,4,m),(8,k)):((1,T,LBO),(4T,SBO))", "Swizzle<2, 4, 3>"),
    ("MN", 128): ("((T,8,m),(8,k)):((1,T,LBO),(8T,SBO))", "Swizzle<3, 4, 3>"),
    ("K", 0): ("((8,m),(T,2k)):((1T,SBO),(1,LBO))", "Swizzle<0, 4, 3>"),
    ("K", 32): ("((8,m),(T,2k)):((2T,SBO),(1,T))", "Swizzle<1, 4, 3>"),
    ("K", 64): ("((8,m),(T,2k)):((4T,SBO),(1,T))", "Swizzle<2, 4, 3>"),
    ("K", 128): ("((8,m),(T,2k)):((8T,SBO),(1,T))", "Swizzle<3, 4, 3>"),
}

# Figures 166-170: exact layout, dtype, and the parameter table (LBO/SBO in bytes as
# "N*sizeof(type)"; None where the seed has no value).
SEED_EXAMPLES = [
    ("Swizzle<0,4,3> o ((8,2),(4,4)):((4,32),(1,64))", "tf32", "K", 0,
     dict(T=4, m=2, k=2, LBO=64 * 4, SBO=32 * 4, LBO_enc=16, SBO_enc=8)),
    ("Swizzle<1,4,3> o ((8,2),(4,4)):((8,64),(1,4))", "tf32", "K", 32,
     dict(T=4, m=2, k=2, LBO=None, SBO=64 * 4, LBO_enc=1, SBO_enc=16)),
    ("Swizzle<0,4,3> o ((8,1,2),(8,2)):((1,8,64),(8,128))", "bf16", "MN", 0,
     dict(T=8, m=2, k=2, LBO=128 * 2, SBO=64 * 2, LBO_enc=16, SBO_enc=8)),
    ("Swizzle<1,4,3> o ((8,2,2),(8,2)):((1,8,128),(16,256))", "bf16", "MN", 32,
     dict(T=8, m=2, k=2, LBO=128 * 2, SBO=256 * 2, LBO_enc=16, SBO_enc=32)),
    ("Swizzle<2,4,3> o ((8,4,2),(8,2)):((1,8,256),(32,512))", "bf16", "MN", 64,
     dict(T=8, m=2, k=2, LBO=256 * 2, SBO=512 * 2, LBO_enc=32, SBO_enc=None)),  # excerpt ends before it
]
PTX_SWIZZLE_CODE = {0: 0, 128: 1, 64: 2, 32: 3}  # "Matrix Descriptor Format", bits 62-63


def _word(lbo_enc, sbo_enc, swizzle, start=0):
    """The descriptor word written out from the PTX bit table."""
    return (start >> 4) | (lbo_enc << 16) | (sbo_enc << 32) | (PTX_SWIZZLE_CODE[swizzle] << 62)


# --- canonical forms ------------------------------------------------------------------------
@pytest.mark.parametrize("key", sorted(SEED_TABLE))
def test_symbolic_canonical_layout_is_the_seed_table_entry(key):
    major, swizzle = key
    text, swz = SEED_TABLE[key]
    expected = parse_composed(f"{swz.replace(' ', '')} o {text}")
    got = canonical_layout(major, swizzle)
    assert got == expected
    assert parse_composed(got.ptx) == expected


@pytest.mark.parametrize("i", range(5))
def test_concrete_canonical_layout_is_the_seed_exact_layout(i):
    exact, dtype, major, swizzle, p = SEED_EXAMPLES[i]
    nb = BITS[dtype] // 8
    kwargs = dict(m=p["m"], k=p["k"], sbo=p["SBO"] // nb)
    if p["LBO"] is not None:
        kwargs["lbo"] = p["LBO"] // nb
    got = canonical_layout(major, swizzle, dtype, swizzle_unit="byte", **kwargs)
    assert got == parse_composed(exact)
    # with the table's T substituted the symbolic entry gives the same layout
    sym = canonical_layout(major, swizzle).subs(
        {"T": p["T"], "m": p["m"], "k": p["k"], "SBO": p["SBO"] // nb, "LBO": (p["LBO"] or nb) // nb}
    )
    assert sym.inner == parse_composed(exact).inner


def test_canonical_layout_arguments_checked():
    with pytest.raises(LayoutError, match="lbo"):
        canonical_layout("K", 128, "bf16", lbo=64)  # swizzled K-major has no LBO
    with pytest.raises(LayoutError, match="major"):
        canonical_layout("X", 0)
    with pytest.raises(LayoutError, match="swizzle"):
        canonical_layout("K", 16)
    with pytest.raises(LayoutError, match="dtype"):
        canonical_layout("K", 0, "f64")
    with pytest.raises(LayoutError, match="m=0"):
        canonical_layout("K", 0, "bf16", m=0)
    with pytest.raises(LayoutError, match="element"):
        canonical_swizzle(128, None, swizzle_unit="element")


# --- units: the swizzle acts on byte addresses --------------------------------------------
def _sw128_byte_address(r, c, nb):
    """The 128B swizzle as usually drawn: 16-byte chunk index XOR (row mod 8), rows 128 B apart."""
    byte = c * nb
    return r * 128 + (((byte // 16) ^ (r % 8)) * 16) + byte % 16


@pytest.mark.parametrize("dtype", DTYPES)
def test_swizzle_units_bytes_vs_elements(dtype):
    nb = BITS[dtype] // 8
    exact = atom("K", 128, dtype, swizzle_unit="element")
    seedform = atom("K", 128, dtype, swizzle_unit="byte")
    assert seedform.outer == Swizzle(3, 4, 3)
    assert exact.outer == Swizzle(3, 4 - (nb.bit_length() - 1), 3)
    rows, cols = 8, 128 // nb
    for r, c in itertools.product(range(rows), range(cols)):
        want = _sw128_byte_address(r, c, nb)
        assert exact(r, c) * nb == want
        assert seedform.outer(nb * seedform.inner(r, c)) == want  # the seed's reading of Swizzle<3,4,3> o L
    if nb > 1:  # read literally on element offsets, the byte spelling is a different function
        assert any(seedform(r, c) * nb != _sw128_byte_address(r, c, nb) for r in range(8) for c in range(cols))


def test_cute_half_atom_is_swizzle_333_on_elements():
    # CuTe: Layout_K_SW128_Atom<half_t> = upcast<16>(Sw<3,4,3> o smem_ptr o (8,1024):(1024,1) bits)
    assert atom_by_name("GMMA::Layout_K_SW128_Atom<half_t>", "f16") == ComposedLayout(
        Swizzle(3, 3, 3), 0, Layout((8, 64), (64, 1))
    )
    assert atom_by_name("Layout_MN_SW128_Atom", "f16") == ComposedLayout(
        Swizzle(3, 3, 3), 0, Layout((64, 8), (1, 64))
    )


# PTX Table 38: swizzle atom in 128-bit units, MN-major (MN x K) and K-major (rows x K)
TABLE_38 = {("MN", 128): (8, 8), ("K", 128): (8, 8), ("MN", 64): (4, 8), ("K", 64): (8, 4),
            ("MN", 32): (2, 8), ("K", 32): (8, 2), ("MN", 0): (1, 8), ("K", 0): (8, 1)}


@pytest.mark.parametrize("major, swizzle, dtype", list(itertools.product(["MN", "K"], SWIZZLES, DTYPES)))
def test_atoms_follow_table_38(major, swizzle, dtype):
    T = 128 // BITS[dtype]
    a = atom(major, swizzle, dtype)
    u_mn, u_k = TABLE_38[(major, swizzle)]
    # "multiplied along the leading dimension by 128/sizeof_bits(Element)"
    want = (u_mn * T, u_k) if major == "MN" else (u_mn, u_k * T)
    assert (a.inner[0].size(), a.inner[1].size()) == want
    table = a.table()
    assert sorted(table.tolist()) == list(range(len(table)))  # a bijection onto one pattern
    assert a.outer.period in (1, 8 * swizzle // (BITS[dtype] // 8))


# --- the five worked examples ---------------------------------------------------------------
@pytest.mark.parametrize("i", range(5))
def test_seed_worked_examples(i):
    exact, dtype, major, swizzle, p = SEED_EXAMPLES[i]
    d = descriptor_from_layout(exact, dtype, strict=False)
    q = d.params
    assert (q.major, q.swizzle, q.T, q.m, q.k) == (major, swizzle, p["T"], p["m"], p["k"])
    assert q.lbo_bytes == p["LBO"]
    assert q.sbo_bytes == p["SBO"]
    assert d.lbo_encoded == p["LBO_enc"]
    if p["SBO_enc"] is not None:
        assert d.sbo_encoded == p["SBO_enc"]
    else:  # the seed's excerpt stops before this row; (SBO) >> 4 by the seed's own rule
        assert d.sbo_encoded == p["SBO"] >> 4
    assert d.encode() == _word(p["LBO_enc"], p["SBO"] >> 4, swizzle)
    assert d.encode(start_address=0x1000) == _word(p["LBO_enc"], p["SBO"] >> 4, swizzle, 0x1000)
    # the swizzle is in the seed's byte spelling; the element spelling gives the same answer
    sw = parse_composed(exact)
    nb = BITS[dtype] // 8
    el = ComposedLayout(sw.outer.to_elements(nb), 0, sw.inner)
    assert descriptor_from_layout(el, dtype, strict=False) == d


def test_seed_examples_record():
    recs = seed_examples()
    assert [r.figure for r in recs] == ["Figure 166", "Figure 167", "Figure 168", "Figure 169", "Figure 170"]
    for r, (exact, dtype, *_rest) in zip(recs, SEED_EXAMPLES):
        assert r.exact == exact and r.dtype == dtype
        assert all(v in (True, None) for v in r.agrees.values()), r.agrees
    assert recs[4].seed["SBO_encoded"] is None and recs[4].derived["SBO_encoded"] == 64


def test_seed_32B_tf32_example_is_not_injective():
    """Figure 167: k = 2 puts 64 B of K in a 32 B swizzle row, so rows overlap."""
    exact = SEED_EXAMPLES[1][0]
    inner = parse_composed(exact).inner
    # independent check: (row 1, col 0) and (row 0, col 8) land on the same element
    assert inner(1, 0) == inner(0, 8) == 8
    assert len(set(inner.table().tolist())) < inner.size()
    with pytest.raises(LayoutError, match="overlap"):
        descriptor_from_layout(exact, "tf32", strict=True)
    # by default the ISA's example is derived (its numbers are the seed's), with a warning that names the flaw
    with pytest.warns(LayoutWarning, match="overlap"):
        d = descriptor_from_layout(exact, "tf32")
    assert d.issues and "32 B swizzle row" in d.issues[0]
    assert (d.params.T, d.params.m, d.params.k, d.sbo_encoded, d.lbo_encoded) == (4, 2, 2, 16, 1)
    # the injective version the hardware reads (k = 1, K = 32 B) is accepted with the same descriptor
    ok = descriptor_from_layout("Swizzle<1,4,3> o ((8,2),(4,2)):((8,64),(1,4))", "tf32")
    assert ok.params.k == 1 and ok.issues == () and ok.encode() == d.encode()


@pytest.mark.parametrize("i", [0, 2, 3, 4])
def test_other_seed_examples_are_injective_and_compact(i):
    inner = parse_composed(SEED_EXAMPLES[i][0]).inner
    assert sorted(inner.table().tolist()) == list(range(inner.size()))


# --- tiles from tile_to_shape recover their build parameters -----------------------------------
def _tile_shapes(major, swizzle, dtype):
    T = 128 // BITS[dtype]
    W = max(1, swizzle // 16)
    if major == "K":
        # one descriptor spans one atom column (W*T) if swizzled; 2k*T for no swizzle
        ks = [W * T] if swizzle else [2 * T, 4 * T]
        return [(mn, kk) for mn in (8, 64, 128) for kk in ks]
    return [(mn, kk) for mn in (W * T, 2 * W * T, 128 if 128 % (W * T) == 0 else 4 * W * T) for kk in (8, 16, 32)]


def _expected_tile_params(major, swizzle, dtype, shape):
    """Parameters of tile_to_shape(atom, shape), derived from the atom and column-major repetition."""
    T = 128 // BITS[dtype]
    W = max(1, swizzle // 16)
    MN, K = shape
    atom_size = 8 * W * T
    if major == "K":
        m, k = MN // 8, K // (2 * T)
        sbo = atom_size if m > 1 else None  # next 8 rows = next atom
        lbo = None if swizzle else 8 * T * m  # next K atom after all MN atoms
        return m, k, lbo, sbo
    m, k = MN // (W * T), K // 8
    mn_step = atom_size if m > 1 else None  # next MN atom
    k_step = atom_size * m if k > 1 else None  # next K atom after all MN atoms
    return (m, k, k_step, mn_step) if swizzle == 0 else (m, k, mn_step, k_step)


@pytest.mark.parametrize("major, swizzle, dtype", list(itertools.product(["MN", "K"], SWIZZLES, DTYPES)))
def test_tiles_recover_build_parameters(major, swizzle, dtype):
    for shape in _tile_shapes(major, swizzle, dtype):
        t = tile(major, swizzle, dtype, shape)
        d = descriptor_from_layout(t, dtype)  # major and swizzle inferred
        m, k, lbo, sbo = _expected_tile_params(major, swizzle, dtype, shape)
        q = d.params
        assert (q.major, q.swizzle, q.m, q.k, q.lbo, q.sbo) == (major, swizzle, m, k, lbo, sbo), shape
        # the descriptor reads back the same function
        assert np.array_equal(q.layout().table(), t.table())


# --- rejection of non-canonical layouts -------------------------------------------------------
@pytest.mark.parametrize(
    "text, dtype, words",
    [
        ("((8,2),(4,4)):((3,32),(1,64))", "tf32", ["stride 3 of the row mode", "12 bytes", "multiple of 16"]),
        ("((8,2),(4,4)):((8,32),(2,64))", "tf32", ["neither mode"]),
        ("((8,2),8):((8,64),1)", "bf16", ["K extent 8", "2T = 16"]),
        ("((8,2),(8,2)):((12,96),(1,48))", "bf16", ["stride 12 of the row mode", "24 bytes", "16 bytes"]),
        ("Swizzle<2,4,3> o (8,64):(64,1)", "bf16", ["Swizzle<2,4,3>", "64B", "128 B row pitch"]),
        ("Swizzle<3,2,3> o (8,64):(64,1)", "bf16", ["Swizzle<3,2,3>", "Swizzle<3,4,3>", "Swizzle<3,3,3>"]),
        ("Swizzle<2,4,2> o (8,64):(64,1)", "bf16", ["not a wgmma swizzle mode"]),
        ("(8,64):(64,1)", "bf16", ["16 B row pitch", "128B swizzle mode"]),
        ("(((4,2),2),(4,4)):(((4,20),32),(1,64))", "tf32", ["MN mode offset at index 4 is 20", "the form gives 16"]),
        ("((8,2),(4,4)):((4,30),(1,64))", "tf32", ["SBO", "not a multiple of 16 bytes"]),
        ("Swizzle<3,4,3> o (8,128):(128,1)", "bf16", ["256 B row pitch"]),
        ("Swizzle<3,4,3> o ((8,8),(64,2)):((64,512),(1,4096))", "bf16", ["k_block_descriptors"]),
        ("((8,4,2),(8,2)):((1,8,256),(32,512))", "bf16", ["16 B K-row pitch", "64B swizzle mode"]),
        ("(8,8,8):(8,1,64)", "bf16", ["rank 3"]),
        ("((8,2),(8,2,2)):((8,64),(1,128,130))", "bf16", ["K mode offset at index 16 is 130", "gives 256"]),
        ("((8,2),(8,2)):((8,64),(1,130))", "bf16", ["LBO = 130 elements = 260 bytes", "multiple of 16"]),
    ],
)
def test_non_canonical_layouts_rejected(text, dtype, words):
    with pytest.raises(LayoutError) as err:
        descriptor_from_layout(text, dtype)
    for w in words:
        assert w in str(err.value), str(err.value)


def test_overlapping_canonical_layout_warns_or_raises_when_strict():
    """Canonical strides whose blocks overlap describe a readable (if odd) operand: derived with a warning."""
    text = "((8,2),(4,4)):((4,40),(1,64))"
    with pytest.raises(LayoutError, match="not injective"):
        descriptor_from_layout(text, "tf32", strict=True)
    with pytest.warns(LayoutWarning, match="232 distinct"):
        d = descriptor_from_layout(text, "tf32")
    assert (d.params.sbo, d.params.lbo) == (40, 64) and d.issues


def test_explicit_major_and_swizzle_checked():
    exact = SEED_EXAMPLES[0][0]
    with pytest.raises(LayoutError, match="stride 1 of the K mode"):
        descriptor_from_layout(exact, "tf32", major="MN")
    with pytest.raises(LayoutError, match="swizzle=128"):
        descriptor_from_layout(exact, "tf32", swizzle=128)
    # a plain layout with swizzle= is read as the pre-swizzle layout of that mode
    d = descriptor_from_layout("(8,64):(64,1)", "bf16", swizzle=128)
    assert d.descriptor.swizzle == 128 and d.notes
    with pytest.raises(LayoutError, match="element"):
        descriptor_from_layout("Swizzle<3,4,3> o (8,64):(64,1)", "bf16", swizzle_unit="element")


@st.composite
def mutated_canonical(draw):
    major = draw(st.sampled_from(["K", "MN"]))
    swizzle = draw(st.sampled_from(SWIZZLES))
    dtype = draw(st.sampled_from(DTYPES))
    shape = draw(st.sampled_from(_tile_shapes(major, swizzle, dtype)))
    t = tile(major, swizzle, dtype, shape)
    shp, strd = t.inner.flat
    i = draw(st.integers(0, len(strd) - 1))
    new = draw(st.integers(0, 3 * max(strd) + 8))
    strides = list(strd)
    strides[i] = new
    # rebuild with the tile's nesting
    from layoutalg.inttuple import unflatten

    stride = unflatten(tuple(strides), t.inner.shape)
    return ComposedLayout(t.outer, 0, Layout(t.inner.shape, stride)), dtype


@settings(max_examples=300, deadline=None)
@given(mutated_canonical())
def test_accepted_layouts_are_exactly_canonical(case):
    """Law: either LayoutError, or the derived parameters rebuild exactly the given function."""
    layout, dtype = case
    try:
        d = descriptor_from_layout(layout, dtype)
    except LayoutError:
        return
    assert np.array_equal(d.params.layout().table(), layout.table())
    assert MatrixDescriptor.decode(d.encode()) == d.descriptor


@pytest.mark.filterwarnings("ignore::layoutalg.errors.LayoutWarning")  # random LBO/SBO may overlap
@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(["K", "MN"]), st.sampled_from(SWIZZLES), st.sampled_from(DTYPES),
    st.integers(1, 8), st.integers(1, 4), st.integers(1, 64), st.integers(1, 64),
)
def test_canonical_parameters_round_trip(major, swizzle, dtype, m, k, lbo16, sbo16):
    """Law: descriptor_from_layout(canonical_layout(p)).params == p (strides given in 16 B units)."""
    T = 128 // BITS[dtype]
    W = max(1, swizzle // 16)
    if major == "K" and swizzle:
        k = min(k, W // 2) if W >= 2 else 1
    lbo = None if (major == "K" and swizzle) else lbo16 * T
    L = canonical_layout(major, swizzle, dtype, m=m, k=k, lbo=lbo, sbo=sbo16 * T)
    d = descriptor_from_layout(L, dtype, major=major, strict=False)
    q = d.params
    want_sbo = sbo16 * T
    # a stride of a size-1 mode is undetermined
    mn_stride_used = m > 1
    k_stride_used = major == "K" or k > 1
    if major == "K":
        assert (q.m, q.k, q.sbo) == (m, k, want_sbo if mn_stride_used else None)
        assert q.lbo == lbo
    elif swizzle:
        assert (q.m, q.k, q.lbo, q.sbo) == (m, k, lbo if mn_stride_used else None,
                                            sbo16 * T if k_stride_used else None)
    else:
        assert (q.m, q.k, q.sbo, q.lbo) == (m, k, sbo16 * T if mn_stride_used else None,
                                            lbo if k_stride_used else None)


# --- k-blocks and CuTe's make_gmma_desc --------------------------------------------------------
def test_k_blocks_of_128B_K_major_bf16_tile():
    t = tile("K", 128, "bf16", (64, 128))  # two atom columns along K
    kbs = k_block_descriptors(t, "bf16", "m64n128k16", start_address=0x2000)
    # +32 B per k16 block inside an atom column; the second column starts after 64 rows x 128 B
    assert [kb.offset_bytes for kb in kbs] == [0, 32, 64, 96, 8192, 8224, 8256, 8288]
    for kb in kbs:
        d = kb.descriptor
        assert d.start_address == 0x2000 + kb.offset_bytes
        assert (d.lbo_encoded, d.sbo_encoded, d.swizzle_code, d.base_offset) == (1, 64, 1, 0)
    both = k_block_descriptors(tile("K", 128, "bf16", (128, 64)), "bf16", mn_block=None)
    assert [(kb.mn_block, kb.k_block, kb.offset_bytes) for kb in both][3:5] == [(0, 3, 96), (1, 0, 8192)]


def test_k_block_base_offset_follows_pattern_start():
    t = tile("K", 128, "bf16", (64, 64))
    kbs = k_block_descriptors(t, "bf16", start_address=1024 * 3 + 128 * 5)
    assert {kb.descriptor.base_offset for kb in kbs} == {5}  # (pattern start >> 7) & 7
    with pytest.raises(LayoutError, match="128 B"):
        k_block_descriptors(t, "bf16", start_address=1024 + 16)


def test_k_block_instruction_checks():
    t = tile("K", 128, "bf16", (64, 64))
    with pytest.raises(LayoutError, match="32 bytes"):
        k_block_descriptors(t, "bf16", "m64n128k32")
    with pytest.raises(LayoutError, match="M = 64"):
        k_block_descriptors(t, "bf16", "m128n128k16")
    with pytest.raises(LayoutError, match="multiple of the m64n128k16 operand B"):
        k_block_descriptors(t, "bf16", "m64n128k16", operand="B")
    with pytest.raises(LayoutError, match="f16/bf16"):
        k_block_descriptors(tile("MN", 128, "e4m3", (128, 32)), "e4m3", "m64n128k32", operand="B")
    assert parse_instruction("m64n256k32", "s8") == (64, 256, 32)


def _blocked_tile_pycute(major, swizzle, dtype, shape):
    """CuTe's tile_to_shape(atom, shape) for a compact atom, built in pycute: the atom repeated
    column-major, mode by mode (blocked_product), in element units, without the swizzle."""
    T = 128 // BITS[dtype]
    W = max(1, swizzle // 16)
    w = W * T
    a_shape, a_stride = ((w, 8), (1, w)) if major == "MN" else ((8, w), (w, 1))
    reps = (shape[0] // a_shape[0], shape[1] // a_shape[1])
    size = a_shape[0] * a_shape[1]
    return pycute.Layout(
        ((a_shape[0], reps[0]), (a_shape[1], reps[1])),
        ((a_stride[0], size), (a_stride[1], size * reps[0])),
    )


def _upcast_pycute(layout, n):
    """CuTe's upcast<n> of a swizzle-free layout: stride-1 leaves shrink their shape, others their stride."""
    modes = []
    for i in range(len(layout)):
        c = pycute.coalesce(layout[i])
        shp = c.shape if isinstance(c.shape, tuple) else (c.shape,)
        std = c.stride if isinstance(c.stride, tuple) else (c.stride,)
        s2, d2 = [], []
        for s, d in zip(shp, std):
            if d == 1:
                assert s % n == 0
                s2.append(s // n), d2.append(1)
            else:
                assert d % n == 0
                s2.append(s), d2.append(d // n)
        modes.append(pycute.Layout(tuple(s2), tuple(d2)) if len(s2) > 1 else pycute.Layout(s2[0], d2[0]))
    return pycute.make_layout(*modes)


def _stride_at(layout, i, j):
    mode = layout[i]
    if not isinstance(mode.shape, tuple) or len(mode.shape) != 2:
        raise AssertionError("Not a canonical GMMA layout: No flat offset mode")
    st_ = mode.stride[j]
    assert not isinstance(st_, tuple)
    return st_


def _cute_make_gmma_desc(block_u128, major, swizzle):
    """CuTe's make_gmma_desc (mma_traits_sm90_gmma.hpp), on a uint128_t-unit block: (lbo, sbo) encoded."""
    W = {0: 1, 32: 2, 64: 4, 128: 8}[swizzle]
    if major == "MN":
        canon = pycute.logical_divide(block_u128, (pycute.Layout(W, 1), pycute.Layout(8, 1)))
        if swizzle:
            assert _stride_at(canon, 0, 0) == 1
        assert _stride_at(canon, 1, 0) == W
        s01, s11 = _stride_at(canon, 0, 1), _stride_at(canon, 1, 1)
        return (s11, s01) if swizzle == 0 else (s01, s11)
    assert pycute.size(block_u128[0]) % 8 == 0 and pycute.size(block_u128[1]) == 2
    canon = pycute.logical_divide(block_u128, (pycute.Layout(8, 1), pycute.Layout(2, 1)))
    assert _stride_at(canon, 0, 0) == W
    if swizzle:
        assert _stride_at(canon, 1, 0) == 1
    return _stride_at(canon, 1, 0), _stride_at(canon, 0, 1)


def _sweep():
    for major, swizzle, dtype in itertools.product(["K", "MN"], SWIZZLES, DTYPES):
        if major == "MN" and BITS[dtype] != 16:
            continue  # wgmma transposes only f16/bf16
        T = 128 // BITS[dtype]
        K_instr = 256 // BITS[dtype]
        W = max(1, swizzle // 16)
        atom_mn, atom_k = (W * T, 8) if major == "MN" else (8, W * T)
        for operand, N in (("A", 64), ("B", 64), ("B", 128), ("B", 256), ("B", 8), ("A", 128)):
            mnb = 64 if operand == "A" else N
            for MN in (mnb, 2 * mnb):
                for K in (K_instr, 2 * K_instr, 4 * K_instr):
                    if mnb % atom_mn or K % atom_k or MN % mnb:
                        continue
                    yield major, swizzle, dtype, operand, N, (MN, K)


SWEEP = list(_sweep())


def test_sweep_is_broad():
    assert len(SWEEP) > 150
    assert {s[:3] for s in SWEEP} >= {("K", 128, "tf32"), ("MN", 64, "bf16"), ("K", 0, "e5m2"), ("MN", 0, "f16")}


@pytest.mark.parametrize("major, swizzle, dtype, operand, N, shape", SWEEP)
def test_agrees_with_cute_make_gmma_desc(major, swizzle, dtype, operand, N, shape):
    T = 128 // BITS[dtype]
    nb = BITS[dtype] // 8
    K_instr = 256 // BITS[dtype]
    instr = f"m64n{N}k{K_instr}"
    mnb = 64 if operand == "A" else N
    ours = k_block_descriptors(tile(major, swizzle, dtype, shape), dtype, instr, operand=operand, mn_block=None)
    # CuTe: partition the tile into (mnb x K_instr) blocks, recast each to uint128_t, make_gmma_desc
    full = _blocked_tile_pycute(major, swizzle, dtype, shape)
    divided = pycute.zipped_divide(full, (pycute.Layout(mnb, 1), pycute.Layout(K_instr, 1)))
    block, rest = divided[0], divided[1]
    lbo, sbo = _cute_make_gmma_desc(_upcast_pycute(block, T), major, swizzle)
    n_mn, n_k = shape[0] // mnb, shape[1] // K_instr
    assert len(ours) == n_mn * n_k
    for kb in ours:
        start = rest(kb.mn_block + n_mn * kb.k_block) * nb  # pycute index is colexicographic
        expected = (start >> 4) | (lbo << 16) | (sbo << 32) | (PTX_SWIZZLE_CODE[swizzle] << 62)
        assert kb.descriptor.encode() == expected, (kb, hex(expected))


def test_sm100_target_uses_tcgen05_codes():
    from layoutalg.nvidia.blackwell.descriptor import Tcgen05Descriptor

    exact = SEED_EXAMPLES[3][0]  # MN-major 32B bf16
    d90 = descriptor_from_layout(exact, "bf16")
    d100 = descriptor_from_layout(exact, "bf16", target="sm_100")
    assert isinstance(d100.descriptor, Tcgen05Descriptor)
    # same fields; tcgen05 puts version 0b001 at 46-48 and the 32B swizzle as code 6 at bits 61-63
    assert d100.encode() == (d90.encode() & ((1 << 62) - 1)) | (1 << 46) | (6 << 61)
    with pytest.raises(LayoutError, match="target"):
        descriptor_from_layout(exact, "bf16", target="sm_80")
