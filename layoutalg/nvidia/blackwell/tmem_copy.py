"""tcgen05.ld / tcgen05.st / tcgen05.cp as copy atoms: (thread, register) -> (TMEM lane, column).

A ``tcgen05.ld.sync.aligned.<shape>.x<num>[.pack::16b].b32`` moves, for one warp, a block of
tensor memory (``lanes`` lanes x ``columns`` columns from the address ``taddr``) into registers;
``tcgen05.st`` is the same map the other way. The PTX ISA draws each shape as a figure (its
"Matrix fragments" of the tcgen05 data-movement shapes); read as formulas in the thread ``t``
(``%laneid``) and the register index ``r`` they are (columns of 32 bits, relative to ``taddr``):

==============  ==========================================  ========================================
shape           lane                                        column
==============  ==========================================  ========================================
``.32x32b``     ``t``                                       ``r``
``.16x64b``     ``t // 4 + 8 * (t % 2)``                    ``(t // 2) % 2 + 2 * r``
``.16x128b``    ``t // 4 + 8 * (r % 2)``                    ``t % 4 + 4 * (r // 2)``
``.16x256b``    ``t // 4 + 8 * ((r // 2) % 2)``             ``r % 2 + 2 * (t % 4) + 8 * (r // 4)``
``.16x32bx2``   ``t % 16``                                  ``r + split * (t // 16)``
==============  ==========================================  ========================================

``split`` is the ``immHalfSplitoff`` operand (CuTe issues ``num``: the two halves side by side).
With ``.pack::16b`` (load) / ``.unpack::16b`` (store) each 32-bit register carries two 16-bit
values taken from the low halves of two adjacent columns: half ``h`` of register ``r`` is column
``2 * column(t, r) + h``, so the block is twice as wide. :data:`FORMULAS` holds these as sympy
expressions; the tests prove every atom's layout equal to them symbolically.

CuTe (``cute/atom/copy_traits_sm100.hpp``) splits the map in two: ``ValID``, logical bit ->
TMEM *bit* address (lane stride ``TMEM::DP_b = 1 << 21``), and ``DstLayout`` (``SrcLayout`` for
a store), (thread, register bit) -> logical bit; the TMEM side is "all threads see all bits"
(``(32, bits):(0, 1)``). This module builds the same five layouts from the table above, named as
CuTe names them (``SM100_TMEM_LOAD_16dp256b1x_16b``: 16 data paths (lanes), 256 bits per lane,
``.x1``, ``.pack::16b``; ``16dp32b`` is ``.16x32bx2``), and checks them against CuTe's printed
traits (tests/data/cute/tmem_atoms.json). By hand, ``.16x64b.x1``: thread 5 (``t // 4 = 1``,
``t % 2 = 1``, ``(t // 2) % 2 = 0``) reads lane 9, column 0, address ``9 << 16``::

    >>> op = tmem_copy_op("SM100_TMEM_LOAD_16dp64b1x")
    >>> str(op.dst_bits), op.fragment()(5, 0) == 9 << 16
    ('((2,2,8),32):((512,32,64),1)', True)

``tcgen05.cp`` (``SM100_UTCCP_*``) copies a block of shared memory, described by a matrix
descriptor, into TMEM; one thread of the CTA (or of each CTA of a ``cta_group::2`` pair: ThrID
``2``) issues it. Its ``ValID`` maps the logical bits (rows, bits of a row, broadcast copies) to
TMEM: ``.32x128b.warpx4`` writes its 32 rows to lanes ``r + 32 * w`` for each warp quarter ``w``;
``.64x128b.warpx2::02_13`` row ``r`` to lanes ``r`` and ``r + 64``; ``::01_23`` row ``r`` to lanes
``r % 32 + 64 * (r // 32)`` and ``+ 32``.

Checked against CuTe C++ 4.2's traits (compiled on the host) and the PTX ISA's figures; none of it
ran on sm_100 hardware.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Any

import sympy

from ...algebra import composition
from ...errors import LayoutError, guarded
from ...hooks import svg_of
from ...layout import Layout, make_layout
from ...symbolic import bitand, shr
from ...tiled import CopyAtom
from .tmem import CELL_BITS, LANE_STRIDE, LANE_STRIDE_BITS, TmemAllocation, TmemError

__all__ = [
    "SHAPES",
    "FORMULAS",
    "TmemCopyOp",
    "tmem_copy_op",
    "tmem_copy_atom",
    "tmem_copy_names",
    "ld_name",
]

DP = LANE_STRIDE_BITS

#: PTX shape -> (lanes, bits per lane per repetition, CuTe's spelling, largest .num, registers per repetition)
SHAPES: dict[str, tuple[int, int, str, int, int]] = {
    "32x32b": (32, 32, "32dp32b", 128, 1),
    "16x64b": (16, 64, "16dp64b", 128, 1),
    "16x128b": (16, 128, "16dp128b", 64, 2),
    "16x256b": (16, 256, "16dp256b", 32, 4),
    "16x32bx2": (16, 64, "16dp32b", 128, 1),
}
_BY_CUTE = {v[2]: k for k, v in SHAPES.items()}
_NUMS = (1, 2, 4, 8, 16, 32, 64, 128)

#: ``%laneid`` of the issuing thread, the register index, and the .num of the instruction
t, r, num = sympy.symbols("t r num", integer=True, nonnegative=True)

#: shape -> (lane, column) of register ``r`` of thread ``t`` (32-bit columns, relative to taddr);
#: read off the PTX ISA's tcgen05 data-movement figures (the ISA prints no formula for them)
FORMULAS: dict[str, tuple[Any, Any]] = {
    "32x32b": (t, r),
    "16x64b": (shr(t, 2) + 8 * bitand(t, 1), bitand(shr(t, 1), 1) + 2 * r),
    "16x128b": (shr(t, 2) + 8 * bitand(r, 1), bitand(t, 3) + 4 * shr(r, 1)),
    "16x256b": (shr(t, 2) + 8 * bitand(shr(r, 1), 1), bitand(r, 1) + 2 * bitand(t, 3) + 8 * shr(r, 2)),
    "16x32bx2": (bitand(t, 15), r + num * shr(t, 4)),
}


def _bits_layouts(shape: str, n: int, pack: bool) -> tuple[Layout, Layout]:
    """(ValID, register-side layout) of ``tcgen05.ld.<shape>.x<n>``: CuTe's ValID and DstLayout."""
    L, w, _cute, _mx, _regs = SHAPES[shape]
    B = w * n  # bits per lane of the logical block
    val_id = Layout(((16, B // 16), L), ((1, 32), DP)) if pack else Layout((B, L), (1, DP))
    if shape == "32x32b":  # thread t -> lane t; register r -> column r
        reg = Layout((32, B), (B, 1))
    elif shape == "16x32bx2":  # t % 16 -> lane, t // 16 -> the second half, n columns on
        reg = Layout(((16, 2), B // 2), ((B, B // 2), 1))
    elif shape == "16x64b":  # t % 2 -> lane + 8, (t // 2) % 2 -> column + 1, t // 4 -> lane; r -> column 2r
        thr = Layout((2, 2, 8), (8 * B, 32, B))
        reg = make_layout(thr, Layout(32, 1) if n == 1 else Layout((32, n), (1, 64)))
    elif shape == "16x128b":  # t % 4 -> column, t // 4 -> lane; r % 2 -> lane + 8, r // 2 -> column + 4
        thr = Layout((4, 8), (32, B))
        reg = make_layout(thr, Layout((32, 2), (1, 8 * B)) if n == 1 else Layout((32, 2, n), (1, 8 * B, 128)))
    else:  # 16x256b: t % 4 -> columns 2(t%4)+{0,1}, t // 4 -> lane; r // 2 % 2 -> lane + 8, r // 4 -> column + 8
        thr = Layout((4, 8), (64, B))
        reg = make_layout(thr, Layout((64, 2), (1, 8 * B)) if n == 1 else Layout((64, 2, n), (1, 8 * B, 256)))
    return val_id, reg


# tcgen05.cp: (PTX shape, CuTe spelling, ValID, (thread-free) source value layout, dst value layout)
_CP: dict[str, tuple[str, Layout, Layout, Layout]] = {
    "128dp256bit": ("128x256b", Layout((128, 256), (DP, 1)), Layout(32768, 1), Layout(32768, 1)),
    "128dp128bit": ("128x128b", Layout((128, 128), (DP, 1)), Layout(16384, 1), Layout(16384, 1)),
    "4dp256bit": ("4x256b", Layout((128, 256), (DP, 1)), Layout((4, 256), (32, 128)), Layout((4, 256), (32, 128))),
    "4x32dp128bit": ("32x128b.warpx4", Layout((32, 128, 4), (DP, 1, 32 * DP)), Layout((32, 128, 4), (1, 32, 0)),
                     Layout(16384, 1)),
    "2x64dp128bitlw0213": ("64x128b.warpx2::02_13", Layout((64, 128, 2), (DP, 1, 64 * DP)),
                           Layout((64, 128, 2), (1, 64, 0)), Layout(16384, 1)),
    "2x64dp128bitlw0123": ("64x128b.warpx2::01_23", Layout((32, 128, 2, 2), (DP, 1, 64 * DP, 32 * DP)),
                           Layout((32, 128, 2, 2), (1, 32, 4096, 0)), Layout(16384, 1)),
}

_LDST = re.compile(r"^SM100_TMEM_(LOAD|STORE)_(32dp32b|16dp32b|16dp64b|16dp128b|16dp256b)(\d+)x(_16b)?$")
_UTCCP = re.compile(r"^SM100_UTCCP_(128dp256bit|128dp128bit|4dp256bit|4x32dp128bit|2x64dp128bitlw0213|"
                    r"2x64dp128bitlw0123)_(1|2)cta$")


@dataclass(frozen=True)
class TmemCopyOp:
    """One TMEM copy instruction as CuTe's ``Copy_Traits`` hold it, plus the PTX facts.

    ``val_id``: logical bit -> TMEM bit address (relative to ``taddr``); ``src_bits`` /
    ``dst_bits`` / ``ref_bits``: (thread, bit) -> logical bit (CuTe's Src/Dst/RefLayout).
    ``kind`` is ``"ld"``, ``"st"`` or ``"cp"``; ``lanes`` x ``columns`` is the TMEM block one
    warp (``ld``/``st``) or one CTA (``cp``) touches.
    """

    name: str
    kind: str
    shape: str
    num: int
    pack16: bool
    cta_group: int
    thr_id: Layout
    val_id: Layout
    src_bits: Layout
    dst_bits: Layout
    ref_bits: Layout
    lanes: int
    columns: int

    def _repr_svg_(self) -> str | None:  # pragma: no cover - notebooks
        """The picture a notebook shows (registered by layoutalg.viz_tmem through layoutalg.hooks)."""
        return svg_of(self)

    @property
    def ptx(self) -> str:
        """The PTX instruction (operands elided)."""
        if self.kind == "cp":
            return f"tcgen05.cp.cta_group::{self.cta_group}.{self.shape}"
        mod = (".pack::16b" if self.kind == "ld" else ".unpack::16b") if self.pack16 else ""
        return f"tcgen05.{self.kind}.sync.aligned.{self.shape}.x{self.num}{mod}.b32"

    @property
    def registers(self) -> int:
        """32-bit registers per thread (``ld``/``st``)."""
        if self.kind == "cp":
            raise LayoutError(f"{self.name}: tcgen05.cp moves no registers (its source is a shared-memory descriptor)")
        return SHAPES[self.shape][4] * self.num

    @property
    def half_split(self) -> int | None:
        """``immHalfSplitoff`` of a ``.16x32bx2`` access as CuTe issues it (columns), else None."""
        if self.shape != "16x32bx2":
            return None
        return self.num * (2 if self.pack16 else 1)

    def fragment(self) -> Layout:
        """(thread, value) -> TMEM address offset ``lane << 16 | column`` of each register value.

        A value is one 32-bit register, or with ``.pack::16b`` one 16-bit half (value ``2r + h``:
        half ``h`` of register ``r``). Derived from ``val_id`` and the register-side layout by
        composition; :data:`FORMULAS` is the check.

        >>> str(tmem_copy_op("SM100_TMEM_LOAD_32dp32b4x").fragment())
        '(32,4):(65536,1)'
        """
        if self.kind == "cp":
            raise LayoutError(f"{self.name}: tcgen05.cp has no register fragment")
        reg = self.dst_bits if self.kind == "ld" else self.src_bits
        tv_bits = composition(self.val_id, reg)  # (thread, register bit) -> TMEM bit address
        vb = 16 if self.pack16 else 32
        per_value = composition(tv_bits, (Layout(32, 1), Layout(self.registers * 32 // vb, vb)))
        return _div_strides(per_value, CELL_BITS)

    def formula(self) -> tuple[Any, tuple]:
        """(expected TMEM address offset in (t, v), the inputs (t, v)) from :data:`FORMULAS`.

        ``v`` is the value index of :meth:`fragment` (register, or 16-bit half with pack).
        """
        lane_f, col_f = FORMULAS[self.shape]
        v = sympy.Symbol("v", integer=True, nonnegative=True)
        if self.pack16:
            sub = {r: shr(v, 1), num: self.num}
            lane_e = lane_f.subs(sub)
            col_e = 2 * col_f.subs(sub) + bitand(v, 1)
        else:
            sub = {r: v, num: self.num}
            lane_e, col_e = lane_f.subs(sub), col_f.subs(sub)
        return LANE_STRIDE * lane_e + col_e, (t, v)

    def copy_atom(self, value_type: Any = "f32") -> CopyAtom:
        """This instruction as a :class:`~layoutalg.tiled.CopyAtom` (CuTe's ``Copy_Atom<Op, T>``)."""
        from ..common.atom_types import value_bits

        vb = value_bits(value_type)
        if self.kind == "cp":
            rb = 0
            side = "S"
        else:
            rb = 32
            side = ""
        return CopyAtom(self.name, self.thr_id, self.src_bits, self.dst_bits, self.ref_bits, vb,
                        rb if self.kind == "st" else 0, rb if self.kind == "ld" else 0, side, str(value_type),
                        notes=self.ptx + " (TMEM side: every thread sees the whole block, CuTe's convention)")

    def check_access(self, allocation: TmemAllocation, taddr: int, warp: int | None = None) -> None:
        """Raise a :class:`~layoutalg.nvidia.blackwell.tmem.TmemError` unless this access at ``taddr`` (relative
        to the allocation: ``lane << 16 | column``) stays in the allocation and, for ``ld``/``st``, in
        the lane quarter of ``warp``.

        >>> op = tmem_copy_op("SM100_TMEM_LOAD_32dp32b128x")
        >>> op.check_access(TmemAllocation(128), 64 << 16, warp=2)
        >>> op.check_access(TmemAllocation(64), 64 << 16, warp=2)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        layoutalg...TmemError: TMEM bounds: ...: columns 0..127 overrun the allocation of 64 columns at column 0 (columns 0..63)
        """
        lane0, col0 = taddr >> 16, taddr & 0xFFFF
        if self.kind == "cp":
            lanes = sorted({(a >> 16) + lane0 for a in _tmem_cells(self)})
        else:
            lanes = list(range(lane0, lane0 + self.lanes))
        cols = range(col0, col0 + self.columns)
        try:
            allocation.check_access(warp if self.kind != "cp" else None, lanes, cols)
        except TmemError as e:
            raise TmemError(e.rule, f"{self.ptx} at lane {lane0}, column {col0} touches lanes {min(lanes)}..{max(lanes)}, "
                            f"columns {cols.start}..{cols.stop - 1}: {str(e).split(': ', 1)[1]}") from None


def _div_strides(L: Layout, k: int) -> Layout:
    """Strides in bits -> strides in ``k``-bit cells (a size-1 mode's stride is immaterial: 0)."""

    def div(shp: Any, s: Any) -> Any:
        if isinstance(s, tuple):
            return tuple(div(a, b) for a, b in zip(shp, s))
        if shp == 1:
            return 0
        if s % k:
            raise LayoutError(f"tcgen05 fragment: stride {s} is not a whole number of {k}-bit cells")
        return s // k

    return Layout(L.shape, div(L.shape, L.stride))


def _tmem_cells(op: TmemCopyOp) -> set:
    import numpy as np

    bits = np.asarray(op.val_id.table())
    return {int(b) // CELL_BITS for b in np.unique(bits)}


@guarded
def ld_name(shape: str, num: int, pack16: bool = False, store: bool = False) -> str:
    """CuTe's name of ``tcgen05.ld`` (``store``: ``.st``) of a PTX shape, ``.num`` and pack/unpack.

    >>> ld_name("16x256b", 1, True), ld_name("16x32bx2", 4, store=True)
    ('SM100_TMEM_LOAD_16dp256b1x_16b', 'SM100_TMEM_STORE_16dp32b4x')
    """
    if shape.startswith("."):
        shape = shape[1:]
    if shape not in SHAPES:
        raise LayoutError(f"tcgen05.ld: unknown shape {shape!r}; shapes: {', '.join(SHAPES)}")
    mx = SHAPES[shape][3]
    if num not in _NUMS or num > mx:
        raise LayoutError(f"tcgen05.ld: .num x{num} is not valid for .{shape} (x1, x2, x4, ... x{mx})")
    return f"SM100_TMEM_{'STORE' if store else 'LOAD'}_{SHAPES[shape][2]}{num}x{'_16b' if pack16 else ''}"


@cache
def tmem_copy_op(name: str) -> TmemCopyOp:
    """The TMEM copy instruction CuTe calls ``name`` (``SM100_TMEM_LOAD_*``, ``SM100_TMEM_STORE_*``, ``SM100_UTCCP_*``).

    >>> op = tmem_copy_op("SM100_UTCCP_4x32dp128bit_2cta")
    >>> op.ptx, str(op.val_id), str(op.thr_id)
    ('tcgen05.cp.cta_group::2.32x128b.warpx4', '(32,128,4):(2097152,1,67108864)', '2:1')
    """
    name = re.sub(r"\s+", "", str(name)).replace("cute::", "")
    m = _LDST.match(name)
    if m:
        kind = "ld" if m.group(1) == "LOAD" else "st"
        shape = _BY_CUTE[m.group(2)]
        n = int(m.group(3))
        pack = m.group(4) is not None
        ld_name(shape, n, pack)  # validates .num
        L = SHAPES[shape][0]
        val_id, reg = _bits_layouts(shape, n, pack)
        total = int(val_id.size())
        tmem_side = Layout((32, total), (0, 1))
        src, dst = (tmem_side, reg) if kind == "ld" else (reg, tmem_side)
        cols = SHAPES[shape][1] * n // (16 if pack else 32)
        return TmemCopyOp(name, kind, shape, n, pack, 1, Layout(32), val_id, src, dst, tmem_side, L, cols)
    m = _UTCCP.match(name)
    if m:
        shape, val_id, src_v, dst_v = _CP[m.group(1)]
        g = int(m.group(2))
        thr = Layout(g, 0)
        src, dst = make_layout(thr, src_v), make_layout(thr, dst_v)
        lanes = len({b // LANE_STRIDE_BITS for b in set(val_id.table())})
        cols = int(shape.split("x")[1].split("b")[0]) // CELL_BITS
        return TmemCopyOp(name, "cp", shape, 1, False, g, Layout(g), val_id, src, dst, dst, lanes, cols)
    raise LayoutError(f"tmem_copy_op: {name!r} is not a TMEM copy atom like 'SM100_TMEM_LOAD_32dp32b8x', "
                      "'SM100_TMEM_STORE_16dp256b1x_16b' or 'SM100_UTCCP_128dp256bit_1cta'")


@guarded
def tmem_copy_atom(name: str, value_type: Any = "f32") -> CopyAtom:
    """``Copy_Atom<name, value_type>`` of a TMEM copy instruction, for :mod:`layoutalg.tiled`.

    >>> print(tmem_copy_atom("SM100_TMEM_LOAD_16dp32b1x", "f32"))
    Copy_Atom
      ThrID:        32:1
      ValLayoutSrc: (32,32):(0,1)
      ValLayoutDst: ((16,2),1):((2,1),1)
      ValLayoutRef: (32,32):(0,1)
      ValueType:    32b
    """
    return tmem_copy_op(name).copy_atom(value_type)


@cache
def tmem_copy_names() -> tuple:
    """Every TMEM copy atom name, in CuTe's header order (loads, stores, then tcgen05.cp)."""
    out = []
    for store in (False, True):
        for shape in ("16x256b", "16x128b", "16x64b", "16x32bx2", "32x32b"):
            for n in _NUMS:
                if n > SHAPES[shape][3]:
                    continue
                for pack in (False, True):
                    out.append(ld_name(shape, n, pack, store))
    for k in _CP:
        for g in (1, 2):
            out.append(f"SM100_UTCCP_{k}_{g}cta")
    return tuple(out)
