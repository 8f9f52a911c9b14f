"""The base of the shared-memory matrix descriptors of sm_90 (``wgmma``) and sm_100 (``tcgen05.mma``).

Both descriptor words pack byte quantities shifted right by four (everything is 16-byte granular)
into 14-bit fields at the same places -- start address (bits 0-13), leading dimension byte offset
(16-29), stride dimension byte offset (32-45) -- and a 3-bit base offset (49-51) for swizzled
modes. This module holds that common format: the field encoding, its checks, where a swizzle
pattern repeats, and :class:`DerivedDescriptor` (a descriptor derived from a layout). The
generations' words are :class:`layoutalg.nvidia.hopper.descriptor.MatrixDescriptor` (sm_90) and
:class:`layoutalg.nvidia.blackwell.descriptor.Tcgen05Descriptor` (sm_100, extending it).

    >>> matrix_descriptor_encode(1024), swizzle_repeat_bytes(128), base_offset_for(0x2000 + 384, 128)
    (64, 1024, 3)
"""

from __future__ import annotations

from typing import Any, cast

from ...errors import LayoutError, guarded

__all__ = [
    "DerivedDescriptor",
    "matrix_descriptor_encode",
    "swizzle_repeat_bytes",
    "base_offset_for",
    "check_byte_field",
    "check_reserved",
    "check_word",
    "start_bits",
    "FIELD_BITS",
    "BYTE_LIMIT",
]

#: start address, LBO and SBO are 14-bit fields of (bytes >> 4)
FIELD_BITS = 14  # start address, LBO and SBO are 14-bit fields of (bytes >> 4)
BYTE_LIMIT = 1 << (FIELD_BITS + 4)  # 2**18 = 256 KiB: the 0x3FFFF mask of the encoding


@guarded
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


@guarded
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


def check_byte_field(owner: str, name: str, value: int, *, allow_zero: bool = True) -> None:
    """A LayoutError naming ``owner`` and ``name`` unless ``value`` is a byte count a 14-bit field of
    ``bytes >> 4`` holds: an int, a multiple of 16, in ``[0, 2**18)``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise LayoutError(f"{owner}: {name}={value!r} is not an int (bytes)")
    if value < 0 or value >= BYTE_LIMIT:
        raise LayoutError(
            f"{owner}: {name}={value} bytes is outside [0, {BYTE_LIMIT}): the field holds "
            f"{FIELD_BITS} bits of (bytes >> 4)"
        )
    if value % 16:
        raise LayoutError(f"{owner}: {name}={value} bytes is not a multiple of 16 (the 4 LSBs are not encoded)")


@guarded
def check_reserved(owner: str, word: int, reserved: list[tuple[int, int, int]]) -> None:
    """A LayoutError unless every ``(low bit, width, required value)`` of ``reserved`` holds in ``word``."""
    for lo, width, want in reserved:
        got = (word >> lo) & ((1 << width) - 1)
        if got != want:
            hi = lo + width - 1
            raise LayoutError(
                f"{owner}.decode: bits {lo}-{hi} of {word:#018x} are {got:#x}, must be {want:#x}"
            )


@guarded
def start_bits(desc: Any, start_address: int | None) -> int:
    """Bits 0-13 of a descriptor word: ``start_address`` (checked) or the descriptor's own field, >> 4."""
    if start_address is None:
        return matrix_descriptor_encode(desc.start_address)
    check_byte_field(type(desc).__name__, "start_address", start_address)
    return matrix_descriptor_encode(start_address)


def check_word(owner: str, word: int) -> int:
    """``word`` as a 64-bit int (a numpy integer is read modulo 2**64); a LayoutError naming ``owner`` otherwise."""
    if isinstance(word, bool) or not isinstance(word, int):
        try:
            import numpy as np

            if isinstance(word, np.integer):
                return check_word(owner, int(word) & ((1 << 64) - 1))
        except ImportError:  # pragma: no cover - numpy is a dependency
            pass
        raise LayoutError(f"{owner}.decode: word={word!r} is not an int")
    if not 0 <= word < (1 << 64):
        raise LayoutError(f"{owner}.decode: word={word} is outside [0, 2**64)")
    return word


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
