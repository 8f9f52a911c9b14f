"""Tensors as CuTe prints them: :class:`Pointer` (the engine), :class:`ParsedTensor` and :func:`swizzle_units`;
the type :data:`Parsed` of what :func:`layoutalg.parse.parse` returns."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Union, cast

from ..composed import ComposedLayout
from ..errors import LayoutError
from ..layout import Layout
from ..swizzle import Swizzle

#: the public names (clip and swizzle_on_elements serve the readers)
__all__ = ["Parsed", "ParsedTensor", "Pointer", "swizzle_units"]

#: What ``parse`` returns: a layout, a composed layout, (for ``Sw<B,M,S>`` alone) a swizzle, or (for a
#: printed tensor) a ParsedTensor.
Parsed = Union[Layout, ComposedLayout, Swizzle, "ParsedTensor"]  # noqa: UP007 - a runtime alias, kept valid on 3.10


def swizzle_on_elements(sw: Swizzle, bits: int, fail: Any) -> Swizzle:
    """A swizzle of byte addresses as the same permutation of ``bits``-bit element offsets (CuTe's
    ``as_position_independent_swizzle_layout``: ``recast_layout<uint8_t, uint_bit_t<bits>>``)."""
    if bits < 1 or bits & (bits - 1):
        fail(f"smem_ptr_flag_bits<{bits}>: the element width must be a power of two")
    try:
        return sw.upcast(bits // 8) if bits >= 8 else sw.downcast(8 // bits)
    except LayoutError as e:
        fail(str(e))
        raise AssertionError from e  # unreachable


def clip(text: str, n: int = 80) -> str:
    return repr(text) if len(text) <= n else repr(text[:n]) + f"... ({len(text)} characters)"


@dataclass(frozen=True)
class Pointer:
    """The engine of a printed tensor -- where element offset 0 lives and what an element is.

    ``space`` is CuTe's address space (``"gmem"``, ``"smem"``, ``"rmem"``, ``"tmem"``, or None for a
    generic ``ptr``/``subptr``); ``bits`` the element width (None where the print gives none);
    ``dtype`` the DSL's element type name (``"f16"``; C++ prints only the width); ``address`` the
    printed address (None for ``unset`` or the DSL's ``ptr<...>``, which prints none); ``swizzle`` a
    swizzle of *byte addresses* carried by the pointer (C++ ``Sw<3,4,3>_smem_ptr[16b](..)``, the DSL's
    ``ptr<f16, smem, align<16>, S<3,4,3>>``); ``align`` the DSL's ``align<N>`` in bytes; ``sparse`` the
    sparsity of CuTe's sparse pointers; ``sub_index`` the element index within the byte of a sub-byte
    pointer (``subptr[4b](0x...3)``); ``counting`` the start of CuTe's ``counting_iter(n)``.
    """

    space: str | None = None
    bits: int | None = None
    dtype: str | None = None
    address: int | None = None
    swizzle: Swizzle | None = None
    align: int | None = None
    sparse: int | None = None
    sub_index: int | None = None
    counting: int | None = None
    text: str = ""

    def __str__(self) -> str:
        return self.text


def swizzle_units(sw: Swizzle, bits: int, on: str = "elements") -> str:
    """What ``sw`` does, in bytes and in elements of ``bits`` bits: ``on`` says which offsets it acts on
    (``"elements"``: element offsets, as in a composed layout; ``"bytes"``: byte addresses, as a
    swizzled pointer or a GMMA atom's ``Sw<B,M,S> o smem_ptr[..b](unset)``).

    >>> for part in swizzle_units(Swizzle(3, 4, 3), 16, on="bytes").split("; "):
    ...     print(part)
    Sw<3,4,3> on byte addresses of 16b elements: swizzle moves 16-byte units = 8 elements of 16b
    within each 128-byte row (64 elements) the 8 units are permuted by XOR with bits [7,10) of the address (the row index mod 8)
    the pattern repeats every 1024 bytes (512 elements)
    >>> for part in swizzle_units(Swizzle(3, 3, 3), 16).split("; "):
    ...     print(part)
    Sw<3,3,3> on element offsets of 16b elements: swizzle moves 16-byte units = 8 elements of 16b
    within each 128-byte row (64 elements) the 8 units are permuted by XOR with bits [6,9) of the offset (the row index mod 8)
    the pattern repeats every 1024 bytes (512 elements)
    """
    if not isinstance(sw, Swizzle):
        raise LayoutError(f"swizzle_units: expects a Swizzle, got {sw!r:.80}")
    if on not in ("elements", "bytes"):
        raise LayoutError(f"swizzle_units: on={on!r} must be 'elements' or 'bytes'")
    if type(bits) is not int or bits < 1:
        raise LayoutError(f"swizzle_units: element width {bits!r} must be a positive number of bits")
    what = "element offsets" if on == "elements" else "byte addresses"
    head = f"{sw} on {what} of {bits}b elements"
    if sw.is_identity:
        return f"{head}: the identity (B=0), no element moves"
    unit_bits = (1 << sw.M) * (bits if on == "elements" else 8)  # the bits of one moved unit

    def amount(nbits: int) -> tuple[str, str]:
        b = f"{nbits // 8} bytes" if nbits % 8 == 0 else f"{nbits} bits"
        e = nbits / bits
        return b, f"{e:g} element" + ("" if e == 1 else "s")

    ub, ue = amount(unit_bits)
    ub1 = ub.replace(" bytes", "-byte").replace(" bits", "-bit")
    if unit_bits < bits:
        ue = f"a part of one {bits}b element: the swizzle splits elements and permutes no whole elements"
    else:
        ue = f"{ue} of {bits}b"
    lo = sw.M + max(0, sw.S)
    unit_word = "address" if on == "bytes" else "offset"
    if sw.S > 0:
        row_bits = unit_bits << sw.S
        rb, re_ = amount(row_bits)
        period_b, period_e = amount(unit_bits << (sw.S + sw.B))
        return (f"{head}: swizzle moves {ub1} units = {ue}; "
                f"within each {rb.replace(' bytes', '-byte').replace(' bits', '-bit')} row ({re_}) the {1 << sw.B} "
                f"units are permuted by XOR with bits [{lo},{lo + sw.B}) of the {unit_word} (the row index mod "
                f"{1 << sw.B}); the pattern repeats every {period_b} ({period_e})")
    # S < 0: the low bits [M, M+B) steer the high bits [M-S, M-S+B)
    period_b, period_e = amount(unit_bits << (-sw.S + sw.B))
    return (f"{head}: swizzle moves {ub1} units = {ue}; the unit index bits [{sw.M - sw.S},{sw.M - sw.S + sw.B}) of "
            f"the {unit_word} are XOR-ed with its bits [{sw.M},{sw.M + sw.B}); the pattern repeats every {period_b} "
            f"({period_e})")


class ParsedTensor:
    """A tensor as CuTe prints it: its engine (:class:`Pointer`), its layout and, for a ``print_tensor``,
    its values.

    ``layout`` is the layout as printed; :attr:`function` is coordinate -> element offset from the
    pointer, with a swizzle carried by the pointer (CuTe's swizzled pointers swizzle *byte* addresses)
    moved in front of the layout as the same permutation of element offsets -- CuTe's
    ``as_position_independent_swizzle_tensor``. A swizzled pointer whose address is not a multiple of
    the swizzle's period (the print of one k-block of a swizzled tile, ``Sw<2,4,3>_smem_ptr[8b](0x2020)``)
    counts from the aligned :attr:`base` below it (``0x2000``): :attr:`function` is then
    ``Sw o (address - base) o L`` in elements. Calling the tensor evaluates :attr:`function`.
    ``data`` is a numpy array indexed by the top-level modes' coordinates (the printed values, rank
    1 to 4 as ``print_tensor`` prints them), or None.

    >>> from layoutalg.parse import parse
    >>> T = parse("smem_ptr[16b](0x7f00) o (_4,_2):(_2,_1)")
    >>> T.pointer.space, T.bits, T.pointer.address, T(1, 1)
    ('smem', 16, 32512, 3)
    >>> T = parse("Sw<3,4,3>_smem_ptr[16b](0x400) o (_8,_64):(_64,_1)")
    >>> T.function
    Sw<3,3,3> o _0 o (8,64):(64,1)
    >>> for part in T.describe().split("; "):
    ...     print(part)
    smem tensor of 16b elements at 0x400, layout (8,64):(64,1) (512 elements)
    the pointer swizzles byte addresses: Sw<3,4,3> on byte addresses of 16b elements: swizzle moves 16-byte units = 8 elements of 16b
    within each 128-byte row (64 elements) the 8 units are permuted by XOR with bits [7,10) of the address (the row index mod 8)
    the pattern repeats every 1024 bytes (512 elements)
    as element offsets that is Sw<3,3,3> o _0 o (8,64):(64,1)
    >>> T = parse("Sw<2,4,3>_smem_ptr[8b](0x2020) o (_64,_32):(_64,_1)")
    >>> hex(T.base), T.function, [T.function(i) for i in range(4)]
    ('0x2000', Sw<2,4,3> o _32 o (64,32):(64,1), [32, 96, 176, 240])
    """

    __slots__ = ("pointer", "layout", "data", "text", "_function")

    def __init__(self, pointer: Pointer, layout: Any, data: Any = None, text: str = ""):
        self.pointer = pointer
        self.layout = layout
        self.data = data
        self.text = text
        self._function: Layout | ComposedLayout | None = None

    @property
    def bits(self) -> int | None:
        """The element width in bits (None where the print gives none)."""
        return self.pointer.bits

    @property
    def base(self) -> int | None:
        """The address :attr:`function` counts from: the pointer's, or for a swizzled pointer that is not
        at a multiple of its swizzle's period (a slice of a swizzled tile), the multiple below it."""
        p = self.pointer
        sw = p.swizzle
        if p.address is None or sw is None or sw.is_identity:
            return p.address
        return p.address - p.address % sw.period

    @property
    def function(self) -> Layout | ComposedLayout:
        """Coordinate -> element offset from :attr:`base` (a pointer's swizzle recast to elements)."""
        if self._function is None:
            sw = self.pointer.swizzle
            if sw is None or sw.is_identity:
                self._function = self.layout
            else:
                p = self.pointer
                if p.bits is None:
                    raise LayoutError(f"parse: {p.text} swizzles byte addresses but gives no element width")
                rel = p.address % sw.period if p.address is not None else 0
                if (rel * 8) % p.bits:
                    raise LayoutError(
                        f"parse: the swizzled pointer {p.text} sits {rel} bytes past its swizzle's period "
                        f"({sw.period} bytes), not a whole number of {p.bits}b elements")

                def fail(msg: str) -> None:
                    raise LayoutError(f"parse: {msg} (pointer {p.text})")

                # a pointer past the period's start (a sliced tensor: one k-block of a swizzled tile) counts
                # from the aligned base below it; the swizzle fixes the base's bits, so the offset rides inside
                self._function = ComposedLayout(swizzle_on_elements(sw, p.bits, fail), rel * 8 // p.bits,
                                                self.layout)
        return cast(Layout | ComposedLayout, self._function)

    def __call__(self, *coord: Any) -> Any:
        return self.function(*coord)

    def size(self) -> Any:
        return self.layout.size()

    def describe(self) -> str:
        """What the tensor is, in words: the space, the element width, the layout and, for a swizzle,
        what it moves in bytes and in elements."""
        p = self.pointer
        where = f"{p.space} tensor" if p.space else ("counting tensor" if p.counting is not None else "tensor")
        width = f" of {p.bits}b elements" + (f" ({p.dtype})" if p.dtype else "") if p.bits else ""
        at = f" at {p.address:#x}" if p.address is not None else ""
        lines = [f"{where}{width}{at}, layout {self.layout} ({self.layout.size()} elements)"]
        if p.swizzle is not None and p.bits:
            lines.append("the pointer swizzles byte addresses: " + swizzle_units(p.swizzle, p.bits, "bytes"))
            lines.append(f"as element offsets that is {self.function}")
        L = self.layout
        while isinstance(L, ComposedLayout):
            if isinstance(L.outer, Swizzle) and p.bits:
                lines.append("the layout's swizzle acts on element offsets: " + swizzle_units(L.outer, p.bits))
                if p.dtype is not None and p.space == "smem" and p.bits != 8 and not L.outer.is_identity:
                    # the DSL's smem atoms (warpgroup.make_smem_layout_atom) write the byte swizzle here,
                    # and its MMAs ask for it on the pointer (recast_ptr), where it acts on byte addresses
                    lines.append("note: the CuTe DSL's shared-memory atoms write Sw<B,4,3> of byte addresses here "
                                 "and move it to the pointer (recast_ptr) for an MMA; on the pointer it reads: "
                                 + swizzle_units(L.outer, p.bits, "bytes"))
            L = L.inner
        if self.data is not None:
            lines.append(f"values: {self.data.size} printed")
        return "\n".join(lines)

    def __str__(self) -> str:
        return f"{self.pointer} o {self.layout}"

    def __repr__(self) -> str:
        return f"ParsedTensor({self.pointer.text!r} o {self.layout})"
