"""Blackwell tensor memory (TMEM) as a layout codomain: addresses, allocations, lane quarters, CTA pairs.

Each CTA of an sm_100 GPU owns 128 *lanes* (CuTe: data paths, "DP") of 512 *columns* of 32-bit
cells. A TMEM address is one 32-bit word, ``lane << 16 | column`` (PTX ISA, "Tensor Memory
addressing"); CuTe counts in bits instead, so its lane stride is ``TMEM::DP_b = 1 << 21`` and a
bit address is ``(lane << 16 | column) * 32 + bit``. A layout into TMEM is therefore an ordinary
``Shape:Stride`` layout whose strides are multiples of ``1 << 16`` for lanes and of 1 for columns.

By hand: the cell at lane 37, column 5 has address ``37 * 65536 + 5 = 2424837``; warp 5 may touch
it, because warp ``w`` owns the lane *quarter* ``32 * (w % 4) .. +31`` (5 % 4 = 1: lanes 32..63)::

    >>> address(37, 5), decode(2424837), lane_quarter(5)
    (2424837, (37, 5), range(32, 64))
    >>> check_warp_access(2, 37)
    Traceback (most recent call last):
    ...
    layoutalg.nvidia.blackwell.tmem.TmemError: TMEM lane quarter: warp 2 may access lanes 64..95 only (32 * (warp % 4) .. +31), not lane 37

Rules checked here, each with a named :class:`TmemError` (a :class:`~layoutalg.errors.LayoutError`):

* ``allocation``: ``tcgen05.alloc`` takes a power-of-two number of columns from 32 to 512;
* ``lane quarter``: ``tcgen05.ld`` / ``tcgen05.st`` by warp ``w`` reach only lanes
  ``32 * (w % 4) .. 32 * (w % 4) + 31``;
* ``bounds``: an access (a ``.num`` repetition of a load, say) must stay inside the allocation;
* ``cta pair``: ``cta_group::2`` pairs the CTAs of ranks ``2k`` and ``2k + 1`` of a cluster
  (peer = rank ^ 1); the pair's MMA writes the same TMEM address in both CTAs.

These are the PTX ISA's rules (tcgen05 "Tensor Memory", "Memory allocation", "Access
restrictions"); none of it ran on sm_100 hardware.
"""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Iterable

from ...errors import LayoutError, guarded

__all__ = [
    "LANES",
    "COLUMNS",
    "CELL_BITS",
    "LANE_STRIDE",
    "LANE_STRIDE_BITS",
    "TmemError",
    "TmemAllocation",
    "address",
    "decode",
    "bit_address",
    "check_allocation",
    "lane_quarter",
    "check_warp_access",
    "cta_pair",
    "check_cta_pair",
]

#: lanes (data paths) of one CTA's tensor memory
LANES = 128
#: 32-bit columns per lane
COLUMNS = 512
#: bits of one TMEM cell
CELL_BITS = 32
#: the lane step of a TMEM address (``lane << 16``)
LANE_STRIDE = 1 << 16
#: the lane step of CuTe's TMEM *bit* addresses (``TMEM::DP_b``)
LANE_STRIDE_BITS = LANE_STRIDE * CELL_BITS
#: the smallest and largest ``tcgen05.alloc`` column counts
MIN_ALLOC_COLUMNS, MAX_ALLOC_COLUMNS = 32, COLUMNS


class TmemError(LayoutError):
    """A tensor-memory rule is broken; ``rule`` names it (``"allocation"``, ``"lane quarter"``, ...)."""

    def __init__(self, rule: str, message: str):
        self.rule = rule
        super().__init__(f"TMEM {rule}: {message}")


def _int(x: object, what: str, op: str) -> int:
    if isinstance(x, bool) or not isinstance(x, int):
        try:
            import numpy as np

            if isinstance(x, np.integer):
                return int(x)
        except ImportError:  # pragma: no cover - numpy is a dependency
            pass
        raise TmemError("bounds", f"{op}: {what} {x!r} is not an integer")
    return x


def address(lane: int, column: int) -> int:
    """address(lane, column) -> ``lane << 16 | column``, the 32-bit TMEM address of one cell.

    >>> hex(address(64, 128))
    '0x400080'
    """
    lane, column = _int(lane, "lane", "address"), _int(column, "column", "address")
    if not 0 <= lane < LANES:
        raise TmemError("bounds", f"address: lane {lane} outside [0, {LANES})")
    if not 0 <= column < COLUMNS:
        raise TmemError("bounds", f"address: column {column} outside [0, {COLUMNS})")
    return lane << 16 | column


def decode(addr: int) -> tuple[int, int]:
    """decode(a) -> (lane, column) with ``a = lane << 16 | column``; the inverse of :func:`address`.

    >>> decode(0x400080)
    (64, 128)
    """
    addr = _int(addr, "address", "decode")
    lane, column = addr >> 16, addr & 0xFFFF
    if addr < 0 or not 0 <= lane < LANES or column >= COLUMNS:
        raise TmemError("bounds", f"decode: {addr:#x} is not a TMEM address (lane < {LANES}, column < {COLUMNS})")
    return lane, column


def bit_address(lane: int, column: int, bit: int = 0) -> int:
    """CuTe's TMEM bit address: ``(lane << 16 | column) * 32 + bit`` (lane stride ``TMEM::DP_b = 1 << 21``).

    >>> bit_address(1, 0) == 1 << 21, bit_address(0, 2, 5)
    (True, 69)
    """
    bit = _int(bit, "bit", "bit_address")
    if not 0 <= bit < CELL_BITS:
        raise TmemError("bounds", f"bit_address: bit {bit} outside [0, {CELL_BITS})")
    return address(lane, column) * CELL_BITS + bit


def check_allocation(columns: int) -> int:
    """The column count of a ``tcgen05.alloc``: a power of two in [32, 512], else ``TmemError("allocation")``.

    >>> check_allocation(256)
    256
    >>> check_allocation(48)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    layoutalg...TmemError: TMEM allocation: tcgen05.alloc of 48 columns: the column count must be a power of two from 32 to 512
    """
    columns = _int(columns, "column count", "tcgen05.alloc")
    if not (MIN_ALLOC_COLUMNS <= columns <= MAX_ALLOC_COLUMNS and columns & (columns - 1) == 0):
        raise TmemError("allocation", f"tcgen05.alloc of {columns} columns: the column count must be a power of two "
                        f"from {MIN_ALLOC_COLUMNS} to {MAX_ALLOC_COLUMNS}")
    return columns


def lane_quarter(warp: int) -> range:
    """lane_quarter(w) -> lanes ``32 * (w % 4) .. +31``: the only lanes warp ``w`` (of its CTA) may load or store.

    >>> lane_quarter(0), lane_quarter(7)
    (range(0, 32), range(96, 128))
    """
    warp = _int(warp, "warp", "lane_quarter")
    if warp < 0:
        raise TmemError("lane quarter", f"warp {warp} is negative")
    q = 32 * (warp % 4)
    return range(q, q + 32)


@guarded
def check_warp_access(warp: int, lanes: int | Iterable[int]) -> None:
    """Raise ``TmemError("lane quarter")`` unless every lane in ``lanes`` is in warp ``warp``'s quarter.

    >>> check_warp_access(5, range(32, 48))
    """
    q = lane_quarter(warp)
    seq = [lanes] if isinstance(lanes, int) else list(lanes)
    for lane in seq:
        lane = _int(lane, "lane", "check_warp_access")
        if lane not in q:
            raise TmemError("lane quarter", f"warp {warp} may access lanes {q.start}..{q.stop - 1} only "
                            f"(32 * (warp % 4) .. +31), not lane {lane}")


def cta_pair(cta_rank: int) -> tuple[int, int]:
    """The ``cta_group::2`` pair of a CTA: ranks ``(2k, 2k + 1)`` of the cluster; the peer is ``rank ^ 1``.

    >>> cta_pair(5)
    (4, 5)
    """
    r = _int(cta_rank, "CTA rank", "cta_pair")
    if r < 0:
        raise TmemError("cta pair", f"CTA rank {r} is negative")
    return (r & ~1, r | 1)


def check_cta_pair(a: int, b: int) -> tuple[int, int]:
    """Raise ``TmemError("cta pair")`` unless CTAs ``a`` and ``b`` form one ``cta_group::2`` pair.

    >>> check_cta_pair(3, 2)
    (2, 3)
    >>> check_cta_pair(1, 2)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    layoutalg...TmemError: TMEM cta pair: CTAs 1 and 2 are not a cta_group::2 pair (ranks 2k and 2k+1; the peer of 1 is 0)
    """
    pa = cta_pair(a)
    if cta_pair(b) != pa or a == b:
        raise TmemError("cta pair", f"CTAs {a} and {b} are not a cta_group::2 pair (ranks 2k and 2k+1; "
                        f"the peer of {a} is {a ^ 1})")
    return pa


@dataclass(frozen=True)
class TmemAllocation:
    """``columns`` columns of every lane from ``base_column`` on, as one ``tcgen05.alloc`` returns them.

    ``cta_group`` 2 means the allocation was made by a CTA pair (each CTA holds its own copy at the
    same address). :meth:`check_access` is the bounds and lane-quarter rule for one access.

    >>> a = TmemAllocation(128)
    >>> hex(a.address(33, 127))
    '0x21007f'
    >>> a.check_access(warp=1, lanes=range(32, 64), columns=range(96, 160))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    layoutalg...TmemError: TMEM bounds: columns 96..159 overrun the allocation of 128 columns at column 0 (columns 0..127)
    """

    columns: int
    base_column: int = 0
    cta_group: int = 1

    def __post_init__(self) -> None:
        check_allocation(self.columns)
        b = _int(self.base_column, "base column", "TmemAllocation")
        if not 0 <= b or b + self.columns > COLUMNS:
            raise TmemError("allocation", f"{self.columns} columns from column {b} pass column {COLUMNS - 1}")
        if self.cta_group not in (1, 2):
            raise TmemError("cta pair", f"cta_group::{self.cta_group}: only cta_group::1 and ::2 exist")

    @property
    def base_address(self) -> int:
        """The address ``tcgen05.alloc`` writes back: lane 0, the first column."""
        return address(0, self.base_column)

    def address(self, lane: int, column: int) -> int:
        """The TMEM address of (lane, column) *relative to the allocation*; columns past it raise."""
        column = _int(column, "column", "TmemAllocation.address")
        if not 0 <= column < self.columns:
            raise TmemError("bounds", f"column {column} outside the allocation of {self.columns} columns")
        return address(lane, self.base_column + column)

    def check_access(self, warp: int | None, lanes: Iterable[int], columns: Iterable[int]) -> None:
        """Raise unless ``lanes`` x ``columns`` (relative columns) lie in the allocation and, when a warp
        is given, in that warp's lane quarter."""
        cols = list(columns)
        if cols:
            lo, hi = min(cols), max(cols)
            if lo < 0 or hi >= self.columns:
                raise TmemError("bounds", f"columns {lo}..{hi} overrun the allocation of {self.columns} columns "
                                f"at column {self.base_column} (columns 0..{self.columns - 1})")
        lane_list = list(lanes)
        for lane in lane_list:
            if not 0 <= _int(lane, "lane", "check_access") < LANES:
                raise TmemError("bounds", f"lane {lane} outside [0, {LANES})")
        if warp is not None:
            check_warp_access(warp, lane_list)
