"""Shared-memory matrix descriptors of ``wgmma`` (sm_90) and ``tcgen05.mma`` (sm_100).

A matrix descriptor is the 64-bit register through which a warpgroup-level MMA
finds one operand in shared memory. It holds byte quantities shifted right by
four (everything is 16-byte granular), so the word is a bit-packing of five
numbers::

    sm_90 wgmma (PTX "Matrix Descriptor Format")
      bits  0-13  start address            encode(x) = (x & 0x3FFFF) >> 4
      bits 16-29  leading dimension byte offset (LBO), same encoding
      bits 32-45  stride dimension byte offset (SBO), same encoding
      bits 49-51  matrix base offset       (swizzled modes only)
      bits 62-63  swizzle mode             0 none, 1 128B, 2 64B, 3 32B

Worked example, checkable by hand: the seed's K-major, no-swizzle tf32 operand
has LBO = 64 tf32 = 256 bytes and SBO = 32 tf32 = 128 bytes. Placed at shared
address 0x400 = 1024 its word is ``(1024 >> 4) | (256 >> 4) << 16 | (128 >> 4) << 32``
= ``0x40 | 0x10 << 16 | 0x8 << 32`` = ``0x0000000800100040``::

    >>> d = MatrixDescriptor(start_address=1024, leading_byte_offset=256,
    ...                      stride_byte_offset=128, base_offset=0, swizzle=0)
    >>> hex(d.encode())
    '0x800100040'
    >>> d.lbo_encoded, d.sbo_encoded
    (16, 8)
    >>> MatrixDescriptor.decode(0x800100040) == d
    True

The sm_100 ``tcgen05`` shared-memory descriptor (:class:`Tcgen05Descriptor`)
keeps the three 14-bit fields and the base offset where sm_90 has them, and adds
a fixed version field (bits 46-48 = 0b001), a leading-dimension mode bit (52)
and a 3-bit swizzle field at 61-63 with other codes (0 none, 1 128B with 32B
atomicity, 2 128B, 4 64B, 6 32B). It is transcribed from the PTX ISA
("Shared Memory Descriptor", tcgen05) and CUTLASS's ``UMMA::SmemDescriptor``;
**it has not been checked on hardware** (no sm_100 device was available).

Both classes are frozen dataclasses: immutable, hashable, ``repr`` round-trips.
Every field is range- and alignment-checked at construction; a violation raises
:class:`~layoutalg.errors.LayoutError` naming the field, the value and the limit.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, ClassVar, cast

from ...errors import LayoutError

__all__ = [
    "DerivedDescriptor",
    "MatrixDescriptor",
    "Tcgen05Descriptor",
    "matrix_descriptor_encode",
    "swizzle_repeat_bytes",
    "base_offset_for",
    "SM90_SWIZZLE_CODES",
    "SM100_SWIZZLE_CODES",
]

#: sm_90 wgmma swizzle field (bits 62-63): swizzle width in bytes -> code.
SM90_SWIZZLE_CODES: dict[int, int] = {0: 0, 128: 1, 64: 2, 32: 3}
_SM90_SWIZZLE_FROM_CODE = {v: k for k, v in SM90_SWIZZLE_CODES.items()}

#: sm_100 tcgen05 swizzle field (bits 61-63): swizzle name -> code. ``"128B_base32B"``
#: is 128-byte swizzling with 32-byte atomicity (no sm_90 counterpart).
SM100_SWIZZLE_CODES: dict[int | str, int] = {0: 0, "128B_base32B": 1, 128: 2, 64: 4, 32: 6}
_SM100_SWIZZLE_FROM_CODE = {v: k for k, v in SM100_SWIZZLE_CODES.items()}

_FIELD_BITS = 14  # start address, LBO and SBO are 14-bit fields of (bytes >> 4)
_BYTE_LIMIT = 1 << (_FIELD_BITS + 4)  # 2**18 = 256 KiB: the 0x3FFFF mask of the encoding


def matrix_descriptor_encode(x: int) -> int:
    """matrix_descriptor_encode(x) = (x & 0x3FFFF) >> 4, the PTX field encoding of a byte quantity.

    >>> matrix_descriptor_encode(256), matrix_descriptor_encode(0x40010)
    (16, 1)
    """
    return (int(x) & 0x3FFFF) >> 4


def swizzle_repeat_bytes(swizzle: int | str) -> int:
    """repeat(swizzle) = 8 * swizzle bytes: where the XOR pattern of a swizzle mode starts over.

    The PTX ISA table "Starting address of the repeating pattern": 128B -> 1024,
    64B -> 512, 32B -> 256; no swizzle has no pattern (returns 16, the granule).

    >>> [swizzle_repeat_bytes(s) for s in (0, 32, 64, 128)]
    [16, 256, 512, 1024]
    """
    if swizzle == "128B_base32B":
        return 1024
    if swizzle not in (0, 32, 64, 128):
        raise LayoutError(f"swizzle_repeat_bytes: swizzle {swizzle!r} is not one of 0, 32, 64, 128 (bytes)")
    return 16 if swizzle == 0 else 8 * int(swizzle)


def base_offset_for(pattern_start: int, swizzle: int | str) -> int:
    """base_offset = 0 if pattern_start is a multiple of repeat(swizzle) else (pattern_start >> 7) & 7.

    ``pattern_start`` is the shared-memory byte address where the operand's
    swizzle pattern starts (for a tile: the address of its offset 0), not the
    start address of a k-block inside it. The formula is the PTX ISA's; the
    no-swizzle mode has no base offset (always 0).

    >>> base_offset_for(0x2000, 128), base_offset_for(0x2000 + 384, 128), base_offset_for(384, 0)
    (0, 3, 0)
    """
    pattern_start = int(pattern_start)
    if swizzle == 0:
        return 0
    if pattern_start % swizzle_repeat_bytes(swizzle) == 0:
        return 0
    return (pattern_start >> 7) & 7


def _check_byte_field(owner: str, name: str, value: int, *, allow_zero: bool = True) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise LayoutError(f"{owner}: {name}={value!r} is not an int (bytes)")
    if value < 0 or value >= _BYTE_LIMIT:
        raise LayoutError(
            f"{owner}: {name}={value} bytes is outside [0, {_BYTE_LIMIT}): the field holds "
            f"{_FIELD_BITS} bits of (bytes >> 4)"
        )
    if value % 16:
        raise LayoutError(f"{owner}: {name}={value} bytes is not a multiple of 16 (the 4 LSBs are not encoded)")


def _check_reserved(owner: str, word: int, reserved: list[tuple[int, int, int]]) -> None:
    """reserved: (low bit, width, required value)."""
    for lo, width, want in reserved:
        got = (word >> lo) & ((1 << width) - 1)
        if got != want:
            hi = lo + width - 1
            raise LayoutError(
                f"{owner}.decode: bits {lo}-{hi} of {word:#018x} are {got:#x}, must be {want:#x}"
            )


def _start_bits(desc: "MatrixDescriptor | Tcgen05Descriptor", start_address: int | None) -> int:
    """Bits 0-13 of a descriptor word: ``start_address`` (checked) or the descriptor's own field, >> 4."""
    if start_address is None:
        return matrix_descriptor_encode(desc.start_address)
    _check_byte_field(type(desc).__name__, "start_address", start_address)
    return matrix_descriptor_encode(start_address)


@dataclass(frozen=True)
class MatrixDescriptor:
    """The sm_90 ``wgmma`` shared-memory matrix descriptor, fields in bytes.

    word = start>>4 | (LBO>>4) << 16 | (SBO>>4) << 32 | base_offset << 49 | code(swizzle) << 62.

    Invariants (checked at construction, ``LayoutError`` otherwise):
    ``start_address``, ``leading_byte_offset``, ``stride_byte_offset`` are byte
    counts, multiples of 16, below 2**18 (14 encoded bits); ``base_offset`` is in
    [0, 8) and 0 for the no-swizzle mode; ``swizzle`` is the swizzle width in
    bytes, one of 0 (none / interleave), 32, 64, 128.

    >>> d = MatrixDescriptor(0, 16, 1024, 0, 128)
    >>> d.swizzle_code, d.lbo_encoded, d.sbo_encoded, hex(d.encode(start_address=0x800))
    (1, 1, 64, '0x4000004000010080')
    """

    start_address: int = 0
    leading_byte_offset: int = 16
    stride_byte_offset: int = 0
    base_offset: int = 0
    swizzle: int = 0

    target: ClassVar[str] = "sm_90"

    def __post_init__(self) -> None:
        owner = type(self).__name__
        _check_byte_field(owner, "start_address", self.start_address)
        _check_byte_field(owner, "leading_byte_offset", self.leading_byte_offset)
        _check_byte_field(owner, "stride_byte_offset", self.stride_byte_offset)
        self._check_swizzle(owner)
        bo = self.base_offset
        if isinstance(bo, bool) or not isinstance(bo, int) or not 0 <= bo < 8:
            raise LayoutError(f"{owner}: base_offset={bo!r} is outside [0, 8) (a 3-bit field, bits 49-51)")
        if bo and self.swizzle == 0:
            raise LayoutError(
                f"{owner}: base_offset={bo} with swizzle=0: the base offset is valid only for swizzled modes"
            )

    def _check_swizzle(self, owner: str) -> None:
        if self.swizzle not in SM90_SWIZZLE_CODES or isinstance(self.swizzle, bool):
            raise LayoutError(
                f"{owner}: swizzle={self.swizzle!r} is not a {self.target} swizzle width; "
                f"expected one of {sorted(SM90_SWIZZLE_CODES)} (bytes)"
            )

    # --- encoded fields -------------------------------------------------------------------
    @property
    def start_encoded(self) -> int:
        """start_encoded = (start_address & 0x3FFFF) >> 4 (bits 0-13)."""
        return matrix_descriptor_encode(self.start_address)

    @property
    def lbo_encoded(self) -> int:
        """lbo_encoded = leading_byte_offset >> 4 (bits 16-29)."""
        return matrix_descriptor_encode(self.leading_byte_offset)

    @property
    def sbo_encoded(self) -> int:
        """sbo_encoded = stride_byte_offset >> 4 (bits 32-45)."""
        return matrix_descriptor_encode(self.stride_byte_offset)

    @property
    def swizzle_code(self) -> int:
        """swizzle_code = {0: 0, 128: 1, 64: 2, 32: 3}[swizzle] (bits 62-63)."""
        return SM90_SWIZZLE_CODES[self.swizzle]

    @property
    def repeat_bytes(self) -> int:
        """repeat_bytes = 8 * swizzle: the alignment at which the swizzle pattern restarts."""
        return swizzle_repeat_bytes(self.swizzle)

    # --- word -----------------------------------------------------------------------------
    def encode(self, start_address: int | None = None) -> int:
        """encode(a) = the 64-bit descriptor word, with start address ``a`` (default: the field).

        >>> hex(MatrixDescriptor(stride_byte_offset=128, leading_byte_offset=256).encode(0x400))
        '0x800100040'
        """
        return (
            _start_bits(self, start_address)
            | self.lbo_encoded << 16
            | self.sbo_encoded << 32
            | self.base_offset << 49
            | self.swizzle_code << 62
        )

    @classmethod
    def decode(cls, word: int) -> MatrixDescriptor:
        """decode(encode(d)) = d; reserved bits (14-15, 30-31, 46-48, 52-61) must be 0.

        >>> MatrixDescriptor.decode(0x4000004000010080)
        MatrixDescriptor(start_address=2048, leading_byte_offset=16, stride_byte_offset=1024, base_offset=0, swizzle=128)
        """
        word = _check_word(cls.__name__, word)
        _check_reserved(cls.__name__, word, [(14, 2, 0), (30, 2, 0), (46, 3, 0), (52, 10, 0)])
        return cls(
            start_address=(word & 0x3FFF) << 4,
            leading_byte_offset=((word >> 16) & 0x3FFF) << 4,
            stride_byte_offset=((word >> 32) & 0x3FFF) << 4,
            base_offset=(word >> 49) & 7,
            swizzle=_SM90_SWIZZLE_FROM_CODE[(word >> 62) & 3],
        )

    def with_start(self, start_address: int) -> MatrixDescriptor:
        """with_start(a) = the same descriptor at start address ``a`` (fields re-checked)."""
        return replace(self, start_address=start_address)

    def describe(self) -> str:
        """describe() = a multi-line table of the fields, in bytes and encoded, like CuTe's print."""
        lines = [f"{type(self).__name__} ({self.target}): {self.encode():#018x}"]
        lines.append(f"  start_address      : {self.start_address:#07x} B  -> {self.start_encoded}")
        lines.append(f"  leading_byte_offset: {self.leading_byte_offset:>7} B  -> {self.lbo_encoded}")
        lines.append(f"  stride_byte_offset : {self.stride_byte_offset:>7} B  -> {self.sbo_encoded}")
        lines.append(f"  base_offset        : {self.base_offset}")
        lines.append(f"  swizzle            : {self.swizzle!s:>7} B  -> code {self.swizzle_code}")
        return "\n".join(lines)


def _check_word(owner: str, word: int) -> int:
    if isinstance(word, bool) or not isinstance(word, int):
        try:
            import numpy as np

            if isinstance(word, np.integer):
                return _check_word(owner, int(word) & ((1 << 64) - 1))
        except ImportError:  # pragma: no cover - numpy is a dependency
            pass
        raise LayoutError(f"{owner}.decode: word={word!r} is not an int")
    if not 0 <= word < (1 << 64):
        raise LayoutError(f"{owner}.decode: word={word} is outside [0, 2**64)")
    return word


@dataclass(frozen=True)
class Tcgen05Descriptor(MatrixDescriptor):
    """The sm_100 ``tcgen05.mma`` shared-memory descriptor (NOT checked on hardware).

    word = start>>4 | (LBO>>4) << 16 | (SBO>>4) << 32 | 0b001 << 46 | base_offset << 49
           | lbo_mode << 52 | code(swizzle) << 61,
    with code = {0: 0, "128B_base32B": 1, 128: 2, 64: 4, 32: 6}.

    ``lbo_mode`` = 0: the LBO field is a byte offset relative to the start
    address; 1: it is an absolute byte address (PTX: supported on sm_103a).
    Transcribed from the PTX ISA (tcgen05 "Shared Memory Descriptor") and
    CUTLASS ``UMMA::SmemDescriptor``; the encoding has not been run on a GPU.

    >>> d = Tcgen05Descriptor(start_address=0x800, leading_byte_offset=16,
    ...                       stride_byte_offset=1024, swizzle=128)
    >>> hex(d.encode()), d.swizzle_code
    ('0x4000404000010080', 2)
    >>> Tcgen05Descriptor.decode(d.encode()) == d
    True
    """

    lbo_mode: int = 0

    target: ClassVar[str] = "sm_100"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.lbo_mode not in (0, 1) or isinstance(self.lbo_mode, bool):
            raise LayoutError(f"Tcgen05Descriptor: lbo_mode={self.lbo_mode!r} is not 0 or 1 (bit 52)")

    def _check_swizzle(self, owner: str) -> None:
        if isinstance(self.swizzle, bool) or self.swizzle not in SM100_SWIZZLE_CODES:
            raise LayoutError(
                f"{owner}: swizzle={self.swizzle!r} is not a {self.target} swizzle mode; expected one of "
                f"0, 32, 64, 128 (bytes) or '128B_base32B'"
            )

    @property
    def swizzle_code(self) -> int:
        """swizzle_code = {0: 0, '128B_base32B': 1, 128: 2, 64: 4, 32: 6}[swizzle] (bits 61-63)."""
        return SM100_SWIZZLE_CODES[self.swizzle]

    def encode(self, start_address: int | None = None) -> int:
        """encode(a) = the 64-bit tcgen05 descriptor word (version bits 46-48 = 0b001)."""
        return (
            _start_bits(self, start_address)
            | self.lbo_encoded << 16
            | self.sbo_encoded << 32
            | 0b001 << 46
            | self.base_offset << 49
            | self.lbo_mode << 52
            | self.swizzle_code << 61
        )

    @classmethod
    def decode(cls, word: int) -> Tcgen05Descriptor:
        """decode(encode(d)) = d; bits 46-48 must be 0b001, bits 14-15, 30-31, 53-60 zero, code not 3/5/7."""
        word = _check_word(cls.__name__, word)
        _check_reserved(cls.__name__, word, [(14, 2, 0), (30, 2, 0), (46, 3, 0b001), (53, 8, 0)])
        code = (word >> 61) & 7
        if code not in _SM100_SWIZZLE_FROM_CODE:
            raise LayoutError(f"Tcgen05Descriptor.decode: swizzle code {code} (bits 61-63) is invalid (3, 5, 7)")
        return cls(
            start_address=(word & 0x3FFF) << 4,
            leading_byte_offset=((word >> 16) & 0x3FFF) << 4,
            stride_byte_offset=((word >> 32) & 0x3FFF) << 4,
            base_offset=(word >> 49) & 7,
            swizzle=cast(int, _SM100_SWIZZLE_FROM_CODE[code]),  # or the one str mode, '128B_base32B'
            lbo_mode=(word >> 52) & 1,
        )


class DerivedDescriptor:
    """What a derivation of a descriptor from a layout (``wgmma.DescriptorDerivation``,
    ``umma_smem.UMMADescriptorDerivation``) answers through its ``descriptor``: the word and the encoded strides."""

    descriptor: Any

    def encode(self, start_address: int | None = None) -> int:
        """The 64-bit descriptor word (see :meth:`MatrixDescriptor.encode`)."""
        return cast(int, self.descriptor.encode(start_address))

    @property
    def lbo_encoded(self) -> int:
        """Descriptor bits 16-29: LBO bytes >> 4."""
        return cast(int, self.descriptor.lbo_encoded)

    @property
    def sbo_encoded(self) -> int:
        """Descriptor bits 32-45: SBO bytes >> 4."""
        return cast(int, self.descriptor.sbo_encoded)
