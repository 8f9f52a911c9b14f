"""Bit layout of the sm_90 wgmma and sm_100 tcgen05 shared-memory descriptors.

Expected words are computed independently of layoutalg.nvidia.blackwell.descriptor:
  * by a ctypes bit-field struct that mirrors CUTLASS's ``GmmaDescriptor`` /
    ``UMMA::SmemDescriptor`` unions field by field (little-endian, as on the GPU),
  * and by hand from the PTX ISA tables (bit positions written out as literals).
"""

from __future__ import annotations

import ctypes

import pytest
from hypothesis import given
from hypothesis import strategies as st

from layoutalg.errors import LayoutError
from layoutalg.nvidia.blackwell.descriptor import (
    MatrixDescriptor,
    Tcgen05Descriptor,
    base_offset_for,
    matrix_descriptor_encode,
    swizzle_repeat_bytes,
)


# --- an independent encoder: CUTLASS's bit-field unions as ctypes structs -------------------
class _GmmaBits(ctypes.LittleEndianStructure):
    # cute/arch/mma_sm90_desc.hpp: GmmaDescriptor::bitfield
    _fields_ = [
        ("start_address_", ctypes.c_uint16, 14),
        ("_pad0", ctypes.c_uint16, 2),
        ("leading_byte_offset_", ctypes.c_uint16, 14),
        ("_pad1", ctypes.c_uint16, 2),
        ("stride_byte_offset_", ctypes.c_uint16, 14),
        ("_pad2", ctypes.c_uint16, 2),
        ("_pad3", ctypes.c_uint8, 1),
        ("base_offset_", ctypes.c_uint8, 3),
        ("_pad4", ctypes.c_uint8, 4),
        ("_pad5", ctypes.c_uint8, 6),
        ("layout_type_", ctypes.c_uint8, 2),
    ]


class _UmmaBits(ctypes.LittleEndianStructure):
    # cute/arch/mma_sm100_desc.hpp: UMMA::SmemDescriptor
    _fields_ = [
        ("start_address_", ctypes.c_uint16, 14),
        ("_pad0", ctypes.c_uint16, 2),
        ("leading_byte_offset_", ctypes.c_uint16, 14),
        ("_pad1", ctypes.c_uint16, 2),
        ("stride_byte_offset_", ctypes.c_uint16, 14),
        ("version_", ctypes.c_uint16, 2),
        ("_pad3", ctypes.c_uint8, 1),
        ("base_offset_", ctypes.c_uint8, 3),
        ("lbo_mode_", ctypes.c_uint8, 1),
        ("_pad4", ctypes.c_uint8, 3),
        ("_pad5", ctypes.c_uint8, 5),
        ("layout_type_", ctypes.c_uint8, 3),
    ]


def _word(struct) -> int:
    return int.from_bytes(bytes(struct), "little")


# CUTLASS GMMA::LayoutType: INTERLEAVE = 0, B128 = 1, B64 = 2, B32 = 3
_CUTE_SM90_LAYOUT_TYPE = {0: 0, 128: 1, 64: 2, 32: 3}
# CUTLASS UMMA::LayoutType: SWIZZLE_NONE 0, 128B_BASE32B 1, 128B 2, 64B 4, 32B 6
_CUTE_SM100_LAYOUT_TYPE = {0: 0, "128B_base32B": 1, 128: 2, 64: 4, 32: 6}


def _cute_sm90_word(start, lbo, sbo, base, swz) -> int:
    b = _GmmaBits()
    b.start_address_ = start >> 4
    b.leading_byte_offset_ = lbo >> 4
    b.stride_byte_offset_ = sbo >> 4
    b.base_offset_ = base
    b.layout_type_ = _CUTE_SM90_LAYOUT_TYPE[swz]
    return _word(b)


def _cute_sm100_word(start, lbo, sbo, base, swz, mode) -> int:
    b = _UmmaBits()
    b.start_address_ = start >> 4
    b.leading_byte_offset_ = lbo >> 4
    b.stride_byte_offset_ = sbo >> 4
    b.version_ = 1
    b.base_offset_ = base
    b.lbo_mode_ = mode
    b.layout_type_ = _CUTE_SM100_LAYOUT_TYPE[swz]
    return _word(b)


granule = st.integers(0, (1 << 14) - 1).map(lambda e: e << 4)  # every valid byte value of a 14-bit field


@st.composite
def sm90_fields(draw):
    swz = draw(st.sampled_from([0, 32, 64, 128]))
    base = 0 if swz == 0 else draw(st.integers(0, 7))
    return draw(granule), draw(granule), draw(granule), base, swz


@st.composite
def sm100_fields(draw):
    swz = draw(st.sampled_from([0, 32, 64, 128, "128B_base32B"]))
    base = 0 if swz == 0 else draw(st.integers(0, 7))
    return draw(granule), draw(granule), draw(granule), base, swz, draw(st.integers(0, 1))


# --- sm_90 -------------------------------------------------------------------------------
@given(sm90_fields())
def test_sm90_encode_matches_cutlass_bitfield(fields):
    start, lbo, sbo, base, swz = fields
    d = MatrixDescriptor(start, lbo, sbo, base, swz)
    assert d.encode() == _cute_sm90_word(start, lbo, sbo, base, swz)


@given(sm90_fields())
def test_sm90_round_trip(fields):
    d = MatrixDescriptor(*fields)
    assert MatrixDescriptor.decode(d.encode()) == d
    assert eval(repr(d)) == d  # repr round-trips
    assert hash(d) == hash(MatrixDescriptor(*fields))


@given(st.integers(0, (1 << 64) - 1))
def test_sm90_decode_encode_on_words(word):
    reserved = (0b11 << 14) | (0b11 << 30) | (0b111 << 46) | (((1 << 10) - 1) << 52)
    word &= ~reserved
    if ((word >> 62) & 3) == 0:
        word &= ~(0b111 << 49)  # no-swizzle words carry no base offset
    assert MatrixDescriptor.decode(word).encode() == word


def test_sm90_bit_positions_by_hand():
    # PTX: bits 0-13 start>>4, 16-29 LBO>>4, 32-45 SBO>>4, 49-51 base offset, 62-63 swizzle
    assert MatrixDescriptor(start_address=16).encode() == (1 << 16) | 1  # default LBO 16 B (encoded 1)
    assert MatrixDescriptor(leading_byte_offset=0).encode() == 0
    assert MatrixDescriptor(leading_byte_offset=0, stride_byte_offset=16).encode() == 1 << 32
    assert MatrixDescriptor(leading_byte_offset=0, base_offset=1, swizzle=32).encode() == (1 << 49) | (3 << 62)
    assert MatrixDescriptor(leading_byte_offset=0, swizzle=128).encode() == 1 << 62
    assert MatrixDescriptor(leading_byte_offset=0, swizzle=64).encode() == 2 << 62
    top = (1 << 18) - 16
    assert MatrixDescriptor(top, top, top, 7, 32).encode() == 0xC00E_3FFF_3FFF_3FFF


def test_sm90_encoded_views():
    d = MatrixDescriptor(start_address=0x1230, leading_byte_offset=256, stride_byte_offset=1024, swizzle=64)
    assert (d.start_encoded, d.lbo_encoded, d.sbo_encoded, d.swizzle_code) == (0x123, 16, 64, 2)
    assert d.repeat_bytes == 512
    assert d.encode(start_address=0) == d.with_start(0).encode()
    assert "0x" in d.describe() and "swizzle" in d.describe()


@pytest.mark.parametrize(
    "kwargs, words",
    [
        (dict(start_address=8), ("start_address", "multiple of 16")),
        (dict(start_address=1 << 18), ("start_address", "262144")),
        (dict(leading_byte_offset=24), ("leading_byte_offset", "16")),
        (dict(stride_byte_offset=-16), ("stride_byte_offset", "-16")),
        (dict(stride_byte_offset=1 << 18), ("stride_byte_offset", "14 bits")),
        (dict(base_offset=8, swizzle=128), ("base_offset", "[0, 8)")),
        (dict(base_offset=1, swizzle=0), ("base_offset", "swizzle")),
        (dict(swizzle=16), ("swizzle", "16")),
        (dict(swizzle="128B_base32B"), ("swizzle", "sm_90")),
        (dict(start_address=16.0), ("start_address", "int")),
    ],
)
def test_sm90_field_checks(kwargs, words):
    with pytest.raises(LayoutError) as err:
        MatrixDescriptor(**kwargs)
    for w in words:
        assert w in str(err.value)


def test_sm90_decode_rejects_reserved_bits_and_bad_words():
    field = {14: "14-15", 15: "14-15", 30: "30-31", 31: "30-31", 46: "46-48", 48: "46-48", 52: "52-61", 61: "52-61"}
    for bit, bits in field.items():
        with pytest.raises(LayoutError, match=f"bits {bits} "):
            MatrixDescriptor.decode(1 << bit)
    with pytest.raises(LayoutError, match="2\\*\\*64"):
        MatrixDescriptor.decode(1 << 64)
    with pytest.raises(LayoutError, match="base_offset"):
        MatrixDescriptor.decode(1 << 49)  # base offset in no-swizzle mode


def test_frozen():
    d = MatrixDescriptor()
    with pytest.raises(AttributeError):
        d.swizzle = 128  # type: ignore[misc]


# --- sm_100 (not checked on hardware) -------------------------------------------------------
@given(sm100_fields())
def test_sm100_encode_matches_cutlass_bitfield(fields):
    d = Tcgen05Descriptor(*fields)
    assert d.encode() == _cute_sm100_word(*fields)
    assert Tcgen05Descriptor.decode(d.encode()) == d
    assert eval(repr(d)) == d


def test_sm100_by_hand():
    d = Tcgen05Descriptor(leading_byte_offset=0)
    assert d.encode() == 1 << 46  # version 0b001 at bits 46-48
    assert Tcgen05Descriptor(leading_byte_offset=0, swizzle=32).encode() == (1 << 46) | (6 << 61)
    assert Tcgen05Descriptor(leading_byte_offset=0, swizzle=64).encode() == (1 << 46) | (4 << 61)
    assert Tcgen05Descriptor(leading_byte_offset=0, swizzle=128).encode() == (1 << 46) | (2 << 61)
    assert Tcgen05Descriptor(leading_byte_offset=0, swizzle="128B_base32B").encode() == (1 << 46) | (1 << 61)
    assert Tcgen05Descriptor(leading_byte_offset=0, lbo_mode=1).encode() == (1 << 46) | (1 << 52)
    for code in (3, 5, 7):
        with pytest.raises(LayoutError, match="invalid"):
            Tcgen05Descriptor.decode((1 << 46) | (code << 61))
    with pytest.raises(LayoutError, match="46-48"):
        Tcgen05Descriptor.decode(0)  # version bits missing
    with pytest.raises(LayoutError, match="lbo_mode"):
        Tcgen05Descriptor(lbo_mode=2)


def test_encode_helpers():
    assert matrix_descriptor_encode(0x3FFFF) == 0x3FFF
    assert matrix_descriptor_encode(0x40000) == 0  # the PTX mask keeps 18 bits
    assert [swizzle_repeat_bytes(s) for s in (32, 64, 128)] == [256, 512, 1024]
    with pytest.raises(LayoutError):
        swizzle_repeat_bytes(48)
    # PTX: base offset = (pattern start addr >> 7) & 7 unless aligned to the repeat
    assert base_offset_for(1024 * 5, 128) == 0
    assert base_offset_for(1024 * 5 + 128 * 6, 128) == 6
    assert base_offset_for(512 * 3, 64) == 0
    assert base_offset_for(512 * 3 + 128, 64) == ((512 * 3 + 128) >> 7) & 7
    assert base_offset_for(256 + 128, 32) == 3
    assert base_offset_for(128, 0) == 0
