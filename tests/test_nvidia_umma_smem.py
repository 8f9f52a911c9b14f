"""tcgen05 smem atoms, tiles and descriptors against CuTe C++ 4.2 (recorded sweep + live sample) and by hand."""

from __future__ import annotations

import pathlib
import re
import sys

import pytest

from layoutalg import parse
from layoutalg.composed import ComposedLayout
from layoutalg.errors import LayoutError
from layoutalg.nvidia.blackwell.descriptor import Tcgen05Descriptor
from layoutalg.nvidia.blackwell.umma import umma_atom
from layoutalg.nvidia.blackwell.umma_smem import (
    SMEM_ATOM_NAMES,
    descriptor_from_layout,
    k_block_descriptors,
    smem_atom,
    smem_atom_by_name,
    smem_bits,
    smem_tile,
    tile_to_mma_shape,
)
from layoutalg.swizzle import Swizzle

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import umma_oracle  # noqa: E402

_PTR = re.compile(r"smem_ptr\[\d+b\]\(unset\) o ")


def _recorded() -> dict:
    if umma_oracle.SMEM.data is None:
        pytest.skip(f"{umma_oracle.SMEM.relpath} not recorded ({umma_oracle.SMEM.command})")
    return umma_oracle.SMEM.data


def _cute_text(printed: str) -> str:
    """CuTe's print of a smem layout in layoutalg's spelling (the smem_ptr flag is offset 0)."""
    return _PTR.sub("_0 o ", printed).replace("_", "").replace("0 o", "_0 o")


def _words(text: str) -> list[int]:
    lines = [ln for ln in text.splitlines() if not ln.startswith("ERROR: cast_smem_ptr_to_uint")]
    return [int(w, 16) for w in " ".join(lines).split()]


def _check_smem_case(c: dict, printed: str) -> int:
    major, mode = SMEM_ATOM_NAMES[c["atom"]]
    bits = c["bits"]
    atom_p, tile_p, words_p = printed.split("|")
    a = smem_atom(major, mode, bits, swizzle_unit="byte")
    assert str(a) == _cute_text(atom_p), (c, str(a), atom_p)
    order = None if c["order"] is None else tuple(c["order"])
    t = smem_tile(major, mode, bits, tuple(c["shape"]), order, swizzle_unit="byte")
    assert str(t) == _cute_text(tile_p), (c, str(t), tile_p)
    assert t == parse(_cute_text(tile_p))
    # the element form is the same function on element offsets
    te = smem_tile(major, mode, bits, tuple(c["shape"]), order)
    for mn in range(0, c["shape"][0], max(1, c["shape"][0] // 8)):
        for k in range(0, c["shape"][1], max(1, c["shape"][1] // 8)):
            assert te(mn, k) * bits == (t.outer((t.inner(mn, k) * bits) // 8) * 8), (c, mn, k)
    bm, bk = c["block"]
    kbs = k_block_descriptors(t, bits, K=bk, mn_block=None) if bm == c["shape"][0] else None
    if kbs is None:
        kbs = _blocks(t, bits, bm, bk)
    cute = _words(words_p)
    mine = [kb.descriptor.encode() for kb in kbs]
    assert mine == cute, (c, [hex(w) for w in mine], [hex(w) for w in cute])
    return len(cute)


def _blocks(t: ComposedLayout, bits: int, bm: int, bk: int) -> list:
    """Blocks of bm rows: k_block_descriptors over the MN-block sub-tiles, in CuTe's (i, j) order."""
    from layoutalg.algebra import logical_divide
    from layoutalg.layout import make_layout

    out = []
    inner = t.inner
    n_mn = int(inner[0].size())
    div = logical_divide(inner, (bm, None))
    for i in range(n_mn // bm):
        sub = make_layout(div[0][0], inner[1])
        off = int(div[0](bm * i)) if False else int(inner(bm * i, 0))
        part = ComposedLayout(t.outer, off, sub)
        out += list(k_block_descriptors(part, bits, K=bk))
    return out


def test_recorded_smem_atoms_tiles_and_descriptors_equal_cute():
    rec = _recorded()
    n_words = 0
    for c in rec["smem"]:
        assert c["printed"], (c, c["error"])
        n_words += _check_smem_case(c, c["printed"])
    assert len(rec["smem"]) == 72 and n_words > 150


def test_recorded_tile_to_mma_shape_equals_cute():
    for c in _recorded()["mma_shape"]:
        major, mode = SMEM_ATOM_NAMES[c["atom"]]
        shape = ((c["shape"][0][0], c["shape"][0][1]), c["shape"][1], c["shape"][2])
        mine = tile_to_mma_shape(smem_atom(major, mode, c["bits"], swizzle_unit="byte"), shape)
        assert str(mine) == _cute_text(c["printed"]), (c, str(mine))


def _fragment_words(c: dict) -> tuple[list[int], list[int]]:
    at = umma_atom(c["atom"])
    op = c["operand"]
    major, mode = SMEM_ATOM_NAMES[c["smem"]]
    dt = at.a_type if op == "A" else at.b_type
    bits = 4 if at.kind.startswith("mxf4") else smem_bits(dt if dt in ("tf32", "f16", "bf16") else 8)
    t = smem_tile(major, mode, bits, tuple(c["tile"]))
    # CuTe's get_slice(0) partitions for CTA 0 (of a 2x1SM pair: its half of the rows of A / columns of B)
    mine = [kb.descriptor.encode() for kb in k_block_descriptors(t, bits, at, operand=op, mn_block=0)]
    return mine, _words(c["printed"].split("|")[1])


def test_recorded_fragment_k_blocks_equal_cute():
    for c in _recorded()["fragments"]:
        assert c["printed"], c
        mine, cute = _fragment_words(c)
        assert mine == cute, (c, [hex(w) for w in mine], [hex(w) for w in cute])


@umma_oracle.SMEM.live
def test_live_sample_equals_cute():
    # 6 of the 72 recorded cases (4-bit and 128B_base32B among them), compiled each run (cached); the
    # TiledMMA fragments are replayed only (the heaviest C++ to build: ~15 s cold on 2 cores)
    cases = umma_oracle.smem_cases()[3::12]
    frags: list = []
    from layoutalg.interop.cute import to_cute_cpp

    spelled = [("MN", "128B_base32B", "e2m1", (256, 64)), ("K", 64, "bf16", (64, 64))]
    texts = [to_cute_cpp(smem_tile(*a), dtype=a[2]).cute for a in spelled]
    res = umma_oracle.run([umma_oracle.smem_snippet(c) for c in cases] + [umma_oracle.fragment_snippet(c) for c in frags]
                          + [f"print({t});" for t in texts])
    for a, cute in zip(spelled, res[len(cases) + len(frags):]):  # to_cute_cpp's spelling prints the tile back
        assert _cute_text(cute) == str(smem_tile(*a, swizzle_unit="byte")), (a, cute)
    res = res[:len(cases) + len(frags)]
    for c, r in zip(cases, res):
        assert r, (c, r)
        _check_smem_case(c, r)
    for c, r in zip(frags, res[len(cases):]):
        mine, cute = _fragment_words(dict(atom=c[0], operand=c[1], smem=c[2], tile=c[3], printed=r))
        assert mine == cute


# ----------------------------------------------------------------------------------------------
# by hand
# ----------------------------------------------------------------------------------------------
def test_base32b_atom_by_hand():
    # Sw<2,5,2> on bytes: 32-byte chunk index (bits 5,6) XOR K row (bits 7,8). bf16: 64 elements per
    # 128-byte row, 4 rows. Element (mn=0, k=1) is byte 128 -> chunk 0 ^ 1 = 1 -> byte 160 = element 80.
    a = smem_atom("MN", "128B_base32B", "bf16")
    assert a.outer == Swizzle(2, 4, 2) and a(0, 1) == 80 and a(16, 1) == 64 + 0
    ab = smem_atom("MN", "128B_base32B", "bf16", swizzle_unit="byte")
    assert ab.outer == Swizzle(2, 5, 2)
    assert all(a(m, k) * 2 == ab.outer(ab.inner(m, k) * 2) for m in range(64) for k in range(4))
    with pytest.raises(LayoutError, match="MN-major only"):
        smem_atom("K", "128B_base32B", "bf16")


def test_base32b_descriptor_by_hand():
    # (128, 16) bf16 MN tile: 2 MN atoms of 64 (LBO = 64*4 elements = 512 B), 4 K groups (SBO = 128*4*2 B)
    t = smem_tile("MN", "128B_base32B", "bf16", (128, 16))
    d = descriptor_from_layout(t, "bf16")
    assert (d.major, d.lbo_bytes, d.sbo_bytes, d.m, d.k) == ("MN", 512, 1024, 2, 4)
    w = d.encode()
    assert w >> 61 == 1 and (w >> 46) & 7 == 1 and ((w >> 16) & 0x3FFF) == 32 and ((w >> 32) & 0x3FFF) == 64
    assert Tcgen05Descriptor.decode(w).swizzle == "128B_base32B"
    with pytest.raises(LayoutError, match="not the canonical MN-major 128B_base32B"):
        descriptor_from_layout(ComposedLayout(Swizzle(2, 5, 2), 0, parse("(64,(4,4)):(1,(128,512))")), "bf16")


def test_four_bit_tiles_read_as_bytes():
    t = smem_tile("K", 128, "e2m1", (128, 256))
    kbs = k_block_descriptors(t, "e2m1", K=64)
    assert [kb.offset_bytes for kb in kbs] == [0, 32, 64, 96]
    assert kbs[0].descriptor.stride_byte_offset == 1024 and kbs[0].descriptor.swizzle == 128
    with pytest.raises(LayoutError, match="6-bit"):
        smem_bits("e2m3")
    # CuTe's spelling gives CuTe's 4-bit atoms (issue 29); layoutalg's "_unpacked" is the one-per-byte storage
    assert smem_bits("float_e2m1_unpacksmem_t") == 4 and smem_bits("e2m1_unpacked") == 8


def test_names_and_errors():
    assert smem_atom_by_name("UMMA::Layout_MN_SW128_32B_Atom<float_e2m1_t>") == smem_atom("MN", "128B_base32B", 4)
    with pytest.raises(LayoutError, match="not one of"):
        smem_atom_by_name("Layout_K_SW256_Atom<half_t>")
    with pytest.raises(LayoutError, match="swizzle"):
        smem_atom("K", 16, "f16")
    with pytest.raises(LayoutError, match="not a tcgen05 mode"):
        descriptor_from_layout(ComposedLayout(Swizzle(2, 3, 2), 0, parse("(8,64):(64,1)")), "bf16")
    with pytest.raises(LayoutError, match="multiple of the instruction block"):
        k_block_descriptors(smem_tile("K", 128, "bf16", (128, 64)), "bf16", K=48)


def test_cli_desc_sm100_derives_umma_descriptors(capsys):
    from layoutalg import cli

    assert cli.main(["desc", "--target", "sm_100", "--major", "MN", "--swizzle", "128B_base32B", "--dtype", "e2m1",
                     "--tile", "256x128"]) == 0
    out = capsys.readouterr().out
    assert "0x2000402000000000" in out and "0x2000402000000200" in out and "code 1" in out
    assert cli.main(["desc", "--target", "sm_100", "--dtype", "bf16", "--tile", "128x64"]) == 0
    assert "0x4000404000010006" in capsys.readouterr().out


def test_wgmma_descriptor_from_layout_sm100_takes_tcgen05_only_operands():
    from layoutalg.nvidia.hopper import wgmma

    t = smem_tile("MN", "128B_base32B", "bf16", (128, 16), swizzle_unit="byte")
    d = wgmma.descriptor_from_layout(t, "bf16", target="sm_100")
    assert d.encode() == descriptor_from_layout(t, "bf16").encode() and d.sbo_encoded == 64
    t4 = smem_tile("K", 64, "e2m1", (64, 128))
    assert wgmma.descriptor_from_layout(t4, "e2m1", target="sm_100").encode() == descriptor_from_layout(t4, 4).encode()
    with pytest.raises(LayoutError):  # sm_90 has neither
        wgmma.descriptor_from_layout(t, "bf16")


# ----------------------------------------------------------------------------------------------
# property: the derived descriptor reads back the tile (the PTX ISA's canonical forms, written out)
# ----------------------------------------------------------------------------------------------
def _byte_of(d, major: str, bits: int, mn: int, k: int) -> int:
    """The pre-swizzle byte the descriptor ``d`` assigns to element (mn, k) of its block (PTX ISA canonical
    layouts in bytes; 128B_base32B: 128-byte MN rows, 4 K rows per group)."""
    sw = d.swizzle
    lbo, sbo = d.leading_byte_offset, d.stride_byte_offset
    if major == "K":
        kb = k * bits // 8
        if sw == 0:
            return (mn % 8) * 16 + (mn // 8) * sbo + (kb // 16) * lbo + kb % 16
        return (mn % 8) * sw + (mn // 8) * sbo + kb
    b = mn * bits // 8
    if sw == "128B_base32B":
        return b % 128 + (b // 128) * lbo + (k % 4) * 128 + (k // 4) * sbo
    if sw == 0:
        return b % 16 + (b // 16) * sbo + (k % 8) * 16 + (k // 8) * lbo
    return b % sw + (b // sw) * lbo + (k % 8) * sw + (k // 8) * sbo


try:
    from hypothesis import given, settings
    from hypothesis import strategies as st
except ImportError:  # pragma: no cover
    given = None

if given is not None:
    @settings(max_examples=120, deadline=None)
    @given(name=st.sampled_from(sorted(SMEM_ATOM_NAMES)), bits=st.sampled_from([4, 8, 16, 32]),
           reps=st.tuples(st.integers(1, 3), st.integers(1, 3)), order=st.sampled_from([None, (1, 0)]),
           blocks=st.tuples(st.integers(1, 2), st.integers(1, 2)))
    def test_descriptors_read_back_their_tile(name, bits, reps, order, blocks):
        major, mode = SMEM_ATOM_NAMES[name]
        a = smem_atom(major, mode, bits, swizzle_unit="byte")
        amn, ak = int(a.inner[0].size()), int(a.inner[1].size())
        kb = 256 // bits
        # tile: whole atoms, a whole number of instruction k-blocks, `blocks` MN blocks
        k_ext = max(ak, kb) * reps[1]
        mnb = amn * reps[0] if major == "MN" else max(amn * reps[0], 8)
        shape = (mnb * blocks[0], k_ext)
        t = smem_tile(major, mode, bits, shape, order, swizzle_unit="byte")
        pre = t.inner
        for i in range(blocks[0]):
            sub_off = int(pre(i * mnb, 0))
            from layoutalg.algebra import logical_divide
            from layoutalg.layout import make_layout

            div = logical_divide(pre, (mnb, None))
            sub = ComposedLayout(t.outer, sub_off, make_layout(div[0][0], pre[1]))
            for kbk in k_block_descriptors(sub, bits, K=kb):
                d = kbk.descriptor
                assert d.swizzle == mode and (d.encode() >> 46) & 7 == 1
                for mn in range(0, mnb, max(1, mnb // 16)):
                    for k in range(0, kb, max(1, kb // 8)):
                        want = int(pre(i * mnb + mn, kbk.k_block * kb + k)) * bits // 8
                        assert d.start_address + _byte_of(d, major, bits, mn, k) == want, (name, bits, shape, mn, k)


def test_four_bit_errors_name_the_byte_view():
    with pytest.raises(LayoutError, match=r"4-bit, read as the byte layout \(8,32\):\(32,1\)"):
        descriptor_from_layout(parse("(8,64):(64,1)"), 4)
    with pytest.raises(LayoutError, match="cannot tell the major mode"):
        descriptor_from_layout(parse("(8,(2,32)):(64,(32,1))"), 4)


def test_k_blocks_of_ts_and_sparse_atoms():
    ts = umma_atom("SM100_MMA_F16BF16_TS<bf16,bf16,float,128,64,K,K>")
    with pytest.raises(LayoutError, match="tensor memory"):
        k_block_descriptors(smem_tile("K", 128, "bf16", (128, 64)), "bf16", ts, operand="A")
    assert len(k_block_descriptors(smem_tile("K", 128, "bf16", (64, 64)), "bf16", ts, operand="B")) == 4
    sp = umma_atom("SM100_MMA_F16BF16_SS_SPARSE<bf16,bf16,float,128,64,K,K>")  # K = 32; A stores 16 per row
    a = k_block_descriptors(smem_tile("K", 128, "bf16", (128, 64)), "bf16", sp, operand="A")
    b = k_block_descriptors(smem_tile("K", 128, "bf16", (64, 64)), "bf16", sp, operand="B")
    assert [kb.offset_bytes for kb in a] == [0, 32, 64, 96] and [kb.offset_bytes for kb in b] == [0, 64]


#: CuTe 4.2's print of UMMA::<atom><cutlass::detail::float_e2m1_unpacksmem_t>{} (g++, this repository's headers)
E2M1_UNPACKSMEM = {
    "Layout_K_INTER_Atom": "Sw<0,4,3> o smem_ptr[4b](unset) o (_8,_32):(_32,_1)",
    "Layout_K_SW32_Atom": "Sw<1,4,3> o smem_ptr[4b](unset) o (_8,_64):(_64,_1)",
    "Layout_K_SW64_Atom": "Sw<2,4,3> o smem_ptr[4b](unset) o (_8,_128):(_128,_1)",
    "Layout_K_SW128_Atom": "Sw<3,4,3> o smem_ptr[4b](unset) o (_8,_256):(_256,_1)",
    "Layout_MN_INTER_Atom": "Sw<0,4,3> o smem_ptr[4b](unset) o (_32,_8):(_1,_32)",
    "Layout_MN_SW32_Atom": "Sw<1,4,3> o smem_ptr[4b](unset) o (_64,_8):(_1,_64)",
    "Layout_MN_SW64_Atom": "Sw<2,4,3> o smem_ptr[4b](unset) o (_128,_8):(_1,_128)",
    "Layout_MN_SW128_Atom": "Sw<3,4,3> o smem_ptr[4b](unset) o (_256,_8):(_1,_256)",
    "Layout_MN_SW128_32B_Atom": "Sw<2,5,2> o smem_ptr[4b](unset) o (_256,_4):(_1,_256)",
}


@pytest.mark.parametrize("name", sorted(E2M1_UNPACKSMEM))
def test_cutes_unpacksmem_spelling_gives_cutes_4_bit_atom(name):
    from layoutalg import parse

    cute = E2M1_UNPACKSMEM[name]
    for t in ("float_e2m1_unpacksmem_t", "cutlass::detail::float_e2m1_unpacksmem_t"):
        byte = smem_atom_by_name(f"UMMA::{name}<{t}>", swizzle_unit="byte")
        # CuTe's text, its smem_ptr_flag aside: the byte swizzle over the 4-bit layout
        assert f"{byte.outer} o smem_ptr[4b](unset) o {byte.inner}" == cute.replace("_", "").replace(
            "smemptr", "smem_ptr")
        assert smem_atom_by_name(f"UMMA::{name}<{t}>") == parse(cute)  # the same function on element offsets


def test_one_per_byte_storage_is_layoutalgs_own_spelling():
    from layoutalg.interop.cute import to_cute_cpp

    assert smem_bits("e2m1_unpacked") == smem_bits("e2m3_unpacked") == 8
    with pytest.raises(LayoutError, match="e2m3_unpacked"):
        smem_bits("float_e2m3_unpacksmem_t")  # CuTe: static assertion "Divisibility condition"
    t = smem_tile("K", 128, "e2m1_unpacked", (128, 128))
    assert "UMMA::Layout_K_SW128_Atom<uint8_t>" in to_cute_cpp(t, "e2m1_unpacked").cute
