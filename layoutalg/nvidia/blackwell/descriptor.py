"""The sm_100 ``tcgen05`` shared-memory descriptor, and every descriptor name (the old ``layoutalg.nvidia.descriptor``).

:class:`Tcgen05Descriptor` keeps the three 14-bit fields and the base offset where sm_90's
:class:`~layoutalg.nvidia.hopper.descriptor.MatrixDescriptor` has them, and adds a fixed version
field (bits 46-48 = 0b001), a leading-dimension mode bit (52) and a 3-bit swizzle field at 61-63
with other codes (0 none, 1 128B with 32B atomicity, 2 128B, 4 64B, 6 32B). It is transcribed from
the PTX ISA ("Shared Memory Descriptor", tcgen05) and CUTLASS's ``UMMA::SmemDescriptor``;
**it has not been checked on hardware** (no sm_100 device was available).

This module also re-exports the sm_90 descriptor and the common format
(:mod:`layoutalg.nvidia.common.descriptor`): it is what the old path
``layoutalg.nvidia.descriptor`` names (:mod:`layoutalg.nvidia.aliases`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, cast

from ...errors import LayoutError
from ..common.descriptor import (
    DerivedDescriptor,
    base_offset_for,
    check_reserved,
    check_word,
    matrix_descriptor_encode,
    start_bits,
    swizzle_repeat_bytes,
)
from ..hopper.descriptor import SM90_SWIZZLE_CODES, MatrixDescriptor

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

#: sm_100 tcgen05 swizzle field (bits 61-63): swizzle name -> code. ``"128B_base32B"``
#: is 128-byte swizzling with 32-byte atomicity (no sm_90 counterpart).
SM100_SWIZZLE_CODES: dict[int | str, int] = {0: 0, "128B_base32B": 1, 128: 2, 64: 4, 32: 6}
_SM100_SWIZZLE_FROM_CODE = {v: k for k, v in SM100_SWIZZLE_CODES.items()}

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
            start_bits(self, start_address)
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
        word = check_word(cls.__name__, word)
        check_reserved(cls.__name__, word, [(14, 2, 0), (30, 2, 0), (46, 3, 0b001), (53, 8, 0)])
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


