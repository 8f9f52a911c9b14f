"""Swizzle functions: CuTe's ``Swizzle<B,M,S>``, an XOR of one bit field into another.

A swizzle permutes offsets by XOR-ing ``B`` bits taken ``S`` positions above a field of
``B`` bits starting at bit ``M`` into that field. The low ``M`` bits (a vector of
``2**M`` consecutive elements) are never touched, so vectorized accesses stay contiguous,
while rows that used to hit the same shared-memory banks are spread out::

    offset bits:   ... Y Y Y . . . Z Z Z m m m m      (M = 4 bits kept, B = 3, S = 3)
    Swizzle<B,M,S>(x) = x ^ ((x & yyy_mask) >> S)        ZZZ ^= YYY

Worked by hand for ``Swizzle<1,1,2>`` (yyy_mask = 0b1000, zzz_mask = 0b0010): offsets
0..15 map to ``x ^ ((x & 8) >> 2)``: 0..7 stay, and 8..15 get bit 1 flipped (8 -> 10, 12 -> 14)::

    >>> sw = Swizzle(1, 1, 2)
    >>> [sw(x) for x in range(16)]
    [0, 1, 2, 3, 4, 5, 6, 7, 10, 11, 8, 9, 14, 15, 12, 13]
    >>> sw
    Sw<1,1,2>
    >>> sw.ptx
    'Swizzle<1,1,2>'

Because ``|S| >= B`` the YYY and ZZZ fields are disjoint, so a swizzle is an involution:
its own inverse. ``Swizzle<0,M,S>`` is the identity. A swizzle is linear over F2 (it
maps XORs to XORs), which :mod:`layoutalg.linear` uses.

Units: the PTX ISA writes ``Swizzle<3,4,3>`` for byte addresses (16-byte chunks). On
elements of ``b`` bytes the same permutation is ``Swizzle<3, 4 - log2(b), 3>``
(:meth:`Swizzle.to_elements`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np
import sympy

from .errors import LayoutError, guarded
from .hooks import service
from .symbolic import bitand, bitxor, shl, shr

__all__ = ["Swizzle", "make_swizzle", "parse_swizzle"]


def _check_int(op: str, name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer, sympy.Integer)):
        raise LayoutError(f"{op}: {name}={value!r} must be an integer")
    return int(value)


def _log2_exact(op: str, what: str, n: Any) -> int:
    """log2(n) for a positive power of two ``n``; LayoutError otherwise."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer, sympy.Integer)) or int(n) <= 0:
        raise LayoutError(f"{op}: {what}={n!r} must be a positive power of two")
    n = int(n)
    if n & (n - 1):
        raise LayoutError(f"{op}: {what}={n} must be a power of two")
    return n.bit_length() - 1


@dataclass(frozen=True, repr=False)
class Swizzle:
    """Swizzle<B,M,S>(x) = x ^ ((x & yyy_mask) >> S), with S < 0 meaning a left shift.

    ``yyy_mask = (2**B - 1) << (M + max(0, S))`` and ``zzz_mask = (2**B - 1) << (M - min(0, S))``,
    exactly as ``cute::Swizzle``. Preconditions: ``B >= 0``, ``M >= 0``, ``|S| >= B``
    (LayoutError otherwise).

    >>> Swizzle(3, 4, 3).yyy_mask, Swizzle(3, 4, 3).zzz_mask
    (896, 112)
    >>> bin(Swizzle(3, 4, 3)(0b101_001_0000))   # ZZZ = 0b001 xor YYY = 0b101 -> 0b100
    '0b1011000000'
    """

    B: int
    M: int
    S: int

    def __post_init__(self) -> None:
        B = _check_int("Swizzle", "B", self.B)
        M = _check_int("Swizzle", "M", self.M)
        S = _check_int("Swizzle", "S", self.S)
        if B < 0:
            raise LayoutError(f"Swizzle<{B},{M},{S}>: B={B} must be >= 0 (number of swizzled bits)")
        if M < 0:
            raise LayoutError(f"Swizzle<{B},{M},{S}>: M={M} must be >= 0 (number of unchanged low bits)")
        if abs(S) < B:
            raise LayoutError(f"Swizzle<{B},{M},{S}>: |S|={abs(S)} must be >= B={B} (YYY and ZZZ must not overlap)")
        object.__setattr__(self, "B", B)
        object.__setattr__(self, "M", M)
        object.__setattr__(self, "S", S)

    # -- masks and sizes ---------------------------------------------------------------
    @property
    def bit_mask(self) -> int:
        """2**B - 1: the B-bit field mask before shifting."""
        return (1 << self.B) - 1

    @property
    def yyy_mask(self) -> int:
        """The source bits: (2**B - 1) << (M + max(0, S))."""
        return self.bit_mask << (self.M + max(0, self.S))

    @property
    def zzz_mask(self) -> int:
        """The destination bits: (2**B - 1) << (M - min(0, S))."""
        return self.bit_mask << (self.M - min(0, self.S))

    @property
    def is_identity(self) -> bool:
        """True iff the swizzle maps every x to x (B == 0)."""
        return self.B == 0

    @property
    def period(self) -> int:
        """2**(B + M + |S|): Sw(x + k*period) = Sw(x) + k*period, and Sw permutes [0, period).

        The identity swizzle has period 1.

        >>> Swizzle(3, 4, 3).period, Swizzle(0, 4, 3).period
        (1024, 1)
        """
        if self.B == 0:
            return 1
        return 1 << (self.B + self.M + abs(self.S))

    def size(self) -> int:
        """The size of the swizzle's domain cycle (:attr:`period`)."""
        return self.period

    def cosize(self) -> int:
        """Same as :meth:`size`: a swizzle permutes [0, period)."""
        return self.period

    # -- evaluation --------------------------------------------------------------------
    def __call__(self, x: Any) -> Any:
        """Sw(x) on a Python int, a numpy integer array or a sympy integer expression."""
        B = self.B
        if B == 0:
            return x
        S = self.S
        if type(x) is int:  # the common case, as the int branch below
            y = x & (((1 << B) - 1) << (self.M + (S if S > 0 else 0)))
            return x ^ (y >> S if S >= 0 else y << -S)
        if isinstance(x, np.ndarray):
            x = x.astype(np.int64, copy=False)
            y = np.bitwise_and(x, self.yyy_mask)
            y = np.right_shift(y, S) if S >= 0 else np.left_shift(y, -S)
            return np.bitwise_xor(x, y)
        if isinstance(x, (int, np.integer)) and not isinstance(x, bool):
            x = int(x)
            y = x & self.yyy_mask
            return x ^ (y >> S if S >= 0 else y << -S)
        if isinstance(x, sympy.Basic):
            if isinstance(x, sympy.Integer):
                return sympy.Integer(self(int(x)))
            y = bitand(x, self.yyy_mask)
            y = shr(y, S) if S >= 0 else shl(y, -S)
            return bitxor(x, y)
        raise LayoutError(f"{self}: cannot evaluate at {x!r} (need an int, numpy integer array or sympy expression)")

    def inverse(self) -> "Swizzle":
        """Sw^-1 = Sw: YYY and ZZZ are disjoint, so applying the swizzle twice restores x.

        >>> sw = Swizzle(2, 3, -4)
        >>> all(sw.inverse()(sw(x)) == x for x in range(sw.period))
        True
        """
        return self

    def basis(self, nbits: int) -> tuple[int, ...]:
        """The images Sw(2**j) for j < nbits: the swizzle as an F2-linear map (its columns)."""
        return tuple(self(1 << j) for j in range(nbits))

    # -- units -------------------------------------------------------------------------
    def upcast(self, n: int) -> "Swizzle":
        """CuTe's upcast<N>: the swizzle on units N times larger (M decreases by log2 N).

        Where M - log2(N) < 0, CuTe keeps Swizzle<max(B + M - log2 N, 0), 0, S> (bits below
        the new unit are lost); this follows it. Use :meth:`to_elements` for a checked version.

        >>> Swizzle(3, 4, 3).upcast(2), Swizzle(3, 4, 3).upcast(32)
        (Sw<3,3,3>, Sw<2,0,3>)
        """
        k = _log2_exact("Swizzle.upcast", "n", n)
        new_m = self.M - k
        if new_m >= 0:
            return Swizzle(self.B, new_m, self.S)
        return Swizzle(max(self.B + new_m, 0), 0, self.S)

    def downcast(self, n: int) -> "Swizzle":
        """CuTe's downcast<N>: the swizzle on units N times smaller (M increases by log2 N).

        >>> Swizzle(3, 4, 3).downcast(8)
        Sw<3,7,3>
        """
        k = _log2_exact("Swizzle.downcast", "n", n)
        return Swizzle(self.B, self.M + k, self.S)

    def to_elements(self, bytes_per_element: int) -> "Swizzle":
        """Swizzle<B,M,S> on byte offsets -> Swizzle<B, M - log2(bpe), S> on element offsets.

        Precondition: bpe is a power of two and log2(bpe) <= M, so whole elements move
        (LayoutError otherwise). For every element offset e: ``Sw_bytes(e*bpe) == Sw_elems(e)*bpe``.

        >>> Swizzle(3, 4, 3).to_elements(2)     # 128B swizzle on 16-bit elements
        Sw<3,3,3>
        >>> Swizzle(1, 4, 3).to_elements(4)     # 32B swizzle on tf32
        Sw<1,2,3>
        """
        k = _log2_exact("Swizzle.to_elements", "bytes_per_element", bytes_per_element)
        if k > self.M:
            raise LayoutError(
                f"Swizzle.to_elements: {self} keeps only 2**M={1 << self.M} bytes together, less than "
                f"bytes_per_element={bytes_per_element}: the swizzle would split elements"
            )
        return Swizzle(self.B, self.M - k, self.S)

    def to_bytes(self, bytes_per_element: int) -> "Swizzle":
        """Swizzle<B,M,S> on element offsets -> Swizzle<B, M + log2(bpe), S> on byte offsets.

        >>> Swizzle(3, 3, 3).to_bytes(2)
        Sw<3,4,3>
        """
        k = _log2_exact("Swizzle.to_bytes", "bytes_per_element", bytes_per_element)
        return Swizzle(self.B, self.M + k, self.S)

    # -- printing ----------------------------------------------------------------------
    def __str__(self) -> str:
        return f"Sw<{self.B},{self.M},{self.S}>"

    __repr__ = __str__

    @property
    def ptx(self) -> str:
        """The PTX ISA's spelling, ``Swizzle<B,M,S>``."""
        return f"Swizzle<{self.B},{self.M},{self.S}>"

    # -- algebra dispatch --------------------------------------------------------------
    def _algebra_(self, opname: str, *args: Any) -> Any:
        """Algebra with a swizzle on the left (see docs/architecture.md, dispatch protocol).

        Composition with a layout builds a composed layout, which :mod:`layoutalg.composed` (a
        layer above this one) provides as the ``compose_swizzle`` hook.
        """
        if opname == "composition":
            if len(args) != 1:
                return NotImplemented
            (rhs,) = args
            if isinstance(rhs, Swizzle):
                return compose_swizzles(self, rhs)
            if self.is_identity:
                return rhs
            return service("compose_swizzle")(self, rhs)
        if opname in ("right_inverse", "left_inverse") and not args:
            return self
        if opname == "upcast" and len(args) == 1:
            n = args[0]
            if not self.is_identity and type(n) is int and n > (1 << self.M):
                raise LayoutError(
                    f"upcast: {self} keeps only 2**M = {1 << self.M} elements together, fewer than the vector size "
                    f"{n}: it permutes elements inside a vector (CuTe's upcast returns {self.upcast(n)}; "
                    "Swizzle.upcast gives that too)"
                )
            return self.upcast(n)
        if opname == "downcast" and len(args) == 1:
            return self.downcast(args[0])
        if opname in ("size", "cosize"):
            return self.period
        return NotImplemented


@guarded
def make_swizzle(yyy_mask: int, zzz_mask: int) -> Swizzle:
    """The Swizzle whose source bits are ``yyy_mask`` and destination bits ``zzz_mask`` (CuTe's make_swizzle).

    Precondition: both masks are contiguous runs of the same number of bits, not overlapping.

    >>> make_swizzle(0b1000, 0b0100), make_swizzle(0b11000000, 0b00000110)
    (Sw<1,2,1>, Sw<2,1,5>)
    """
    y, z = int(yyy_mask), int(zzz_mask)
    if y < 0 or z < 0:
        raise LayoutError(f"make_swizzle: masks {y:#b}, {z:#b} must be non-negative")
    b = bin(y).count("1")
    if b != bin(z).count("1"):
        raise LayoutError(f"make_swizzle: yyy_mask={y:#b} and zzz_mask={z:#b} have different numbers of bits")
    if b == 0:
        return Swizzle(0, 0, 0)
    ty = (y & -y).bit_length() - 1
    tz = (z & -z).bit_length() - 1
    m, s = min(ty, tz), ty - tz
    try:
        sw = Swizzle(b, m, s)
    except LayoutError as e:
        raise LayoutError(f"make_swizzle: yyy_mask={y:#b}, zzz_mask={z:#b} is not a swizzle: {e}") from None
    if sw.yyy_mask != y or sw.zzz_mask != z:
        raise LayoutError(f"make_swizzle: yyy_mask={y:#b}, zzz_mask={z:#b} are not contiguous, equal-width bit runs")
    return sw


def compose_swizzles(a: Swizzle, b: Swizzle) -> Swizzle:
    """a o b for swizzles of the same shift S, as one swizzle with XOR-ed masks (CuTe's rule).

    Precondition: equal S and the merged masks form a swizzle (LayoutError otherwise).

    >>> compose_swizzles(Swizzle(1, 4, 3), Swizzle(1, 5, 3))
    Sw<2,4,3>
    """
    if a.is_identity:
        return b
    if b.is_identity:
        return a
    if a.S != b.S:
        raise LayoutError(f"composition: {a} o {b}: can only merge swizzles of the same shift S")
    return make_swizzle(a.yyy_mask ^ b.yyy_mask, a.zzz_mask ^ b.zzz_mask)


_SWIZZLE_RE = re.compile(r"\s*(?:Swizzle|Sw)\s*<\s*(-?\d+)\s*,\s*(-?\d+)\s*,\s*(-?\d+)\s*>\s*")


@guarded
def parse_swizzle(text: str) -> Swizzle:
    """Parse ``Sw<B,M,S>`` (CuTe's print) or ``Swizzle<B,M,S>`` (the PTX ISA's spelling).

    >>> parse_swizzle("Swizzle<3,4,3>") == parse_swizzle("Sw<3,4,3>") == Swizzle(3, 4, 3)
    True
    """
    m = _SWIZZLE_RE.fullmatch(text)
    if not m:
        raise LayoutError(f"parse_swizzle: {text!r} is not of the form Sw<B,M,S> or Swizzle<B,M,S>")
    return Swizzle(int(m.group(1)), int(m.group(2)), int(m.group(3)))
