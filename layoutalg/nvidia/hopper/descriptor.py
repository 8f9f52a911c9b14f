"""The sm_90 ``wgmma`` shared-memory matrix descriptor (and, for the old ``layoutalg.nvidia.descriptor``, the sm_100 one).

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
from typing import ClassVar

from ...errors import LayoutError
from ..common.descriptor import (
    check_byte_field,
    check_reserved,
    check_word,
    matrix_descriptor_encode,
    start_bits,
    swizzle_repeat_bytes,
)

__all__ = ["MatrixDescriptor", "SM90_SWIZZLE_CODES"]

#: sm_90 wgmma swizzle field (bits 62-63): swizzle width in bytes -> code.
SM90_SWIZZLE_CODES: dict[int, int] = {0: 0, 128: 1, 64: 2, 32: 3}
_SM90_SWIZZLE_FROM_CODE = {v: k for k, v in SM90_SWIZZLE_CODES.items()}

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
        check_byte_field(owner, "start_address", self.start_address)
        check_byte_field(owner, "leading_byte_offset", self.leading_byte_offset)
        check_byte_field(owner, "stride_byte_offset", self.stride_byte_offset)
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
            start_bits(self, start_address)
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
        word = check_word(cls.__name__, word)
        check_reserved(cls.__name__, word, [(14, 2, 0), (30, 2, 0), (46, 3, 0), (52, 10, 0)])
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


