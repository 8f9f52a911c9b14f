"""The PTX ISA's fragment formulas, transcribed as sympy expressions in ``lane`` and ``i``.

The PTX ISA describes every ``mma`` operand fragment twice: as a figure and as a short
formula in ``%laneid`` and the element index ``i`` of the thread's vector ``a_i``/``b_i``/``c_i``.
This module writes the formulas down *as printed* (section 9.7.14 of PTX ISA 9.x), with the
ISA's own helper names::

    groupID           = %laneid >> 2
    threadID_in_group = %laneid % 4

so that ``row = groupID + 8 for a2 and a3`` becomes ``Piecewise((gid, i < 2), (gid + 8, True))``.
The formulas never look at the layouts of :mod:`layoutalg.nvidia.ampere.mma`; the layouts never look at
the formulas. Checking that the two agree on every ``(lane, i)`` is the proof.

A worked check by hand, m16n8k16 f16 A (PTX "Matrix Fragments for mma.m16n8k16 with floating
point type"), lane 5 (groupID 1, threadID_in_group 1), element a6:

    >>> f = FORMULAS["m16n8k16.A.16bit"]
    >>> f.evaluate(5, 6)
    (9, 10)

row = groupID + 8 = 9 (a6 is not in 0..1 or 4..5), col = 1*2 + (6 & 1) + 8 = 10.

Outputs are ``(row, col)`` in PTX's convention (A is MxK, B is KxN, C/D is MxN); sparse A
formulas give ``(row, firstcol, lastcol)``, the span of ``A``'s columns a non-zero element may
come from. Formulas marked ``source="figure"`` (wgmma, ldmatrix, block-scale factors) have no
printed formula in the ISA: they are read off the named figure, and say so.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import sympy
from sympy import And, Eq, Mod, Or, Piecewise

from ...symbolic import bitand, shr

__all__ = ["lane", "i", "groupID", "threadID_in_group", "PtxFormula", "FORMULAS", "METADATA_FORMULAS"]

#: The thread's ``%laneid`` (0..31; 0..127 ``%tid`` within a warpgroup for wgmma).
lane = sympy.Symbol("lane", integer=True, nonnegative=True)
#: The element index ``i`` of ``a_i`` / ``b_i`` / ``c_i`` within the thread's fragment.
i = sympy.Symbol("i", integer=True, nonnegative=True)

#: ``groupID = %laneid >> 2``
groupID = shr(lane, 2)
#: ``threadID_in_group = %laneid % 4``
threadID_in_group = Mod(lane, 4)

gid, tig = groupID, threadID_in_group


@dataclass(frozen=True)
class PtxFormula:
    """One operand's PTX formula: ``outputs[j]`` is a sympy expression in ``lane`` and ``i``.

    ``names`` labels the outputs (``("row", "col")`` or ``("row", "firstcol", "lastcol")``);
    ``section`` and ``figure`` cite the ISA; ``source`` is ``"formula"`` when the ISA prints the
    formula and ``"figure"`` when it is read off a figure.
    """

    key: str
    outputs: tuple
    names: tuple = ("row", "col")
    section: str = ""
    figure: str = ""
    source: str = "formula"

    @cached_property
    def _vectorized(self):
        modules = [
            {
                "bitand": np.bitwise_and,
                "bitor": np.bitwise_or,
                "bitxor": np.bitwise_xor,
                "shr": np.right_shift,
                "shl": np.left_shift,
            },
            "numpy",
        ]
        return [sympy.lambdify((lane, i), e, modules=modules) for e in self.outputs]

    def evaluate(self, lane_value: Any, i_value: Any) -> tuple:
        """``tuple(output(lane_value, i_value))``: ints for ints, int64 arrays for arrays.

        >>> FORMULAS["m8n8k4.f64.C"].evaluate(np.arange(4), 1)
        (array([0, 0, 0, 0]), array([1, 3, 5, 7]))
        """
        if isinstance(lane_value, np.ndarray) or isinstance(i_value, np.ndarray):
            ln, iv = np.broadcast_arrays(np.asarray(lane_value, dtype=np.int64), np.asarray(i_value, dtype=np.int64))
            return tuple(
                np.broadcast_to(np.asarray(f(ln, iv), dtype=np.int64), ln.shape).copy() for f in self._vectorized
            )
        return tuple(int(e.subs({lane: lane_value, i: i_value})) for e in self.outputs)


def _pw(*pairs):
    """``Piecewise`` with the last pair's condition forced to ``True`` ("otherwise")."""
    *head, (last, _) = pairs
    return Piecewise(*head, (last, True))


def _in(lo, hi):
    return And(i >= lo, i < hi)


_F: dict[str, PtxFormula] = {}


def _add(key, outputs, section, figure="", names=("row", "col"), source="formula"):
    _F[key] = PtxFormula(key, tuple(sympy.sympify(o) for o in outputs), names, section, figure, source)


S = "9.7.14.5"  # Matrix multiply-accumulate operation using mma instruction

# --- m8n8k4 .f16 (4 MMA computations per warp; low group lanes < 16, high group otherwise) ---
# The first output is the MMA computation a lane takes part in, transcribed from the ISA's table
# "MMA computation 1: threads with %laneid 0-3 (low group) and 16-19 (high group)", ...
_sec = f"{S}.1 Matrix Fragments for mma.m8n8k4 with .f16 floating point type"
_comp = Mod(shr(lane, 2), 4)
_CN = ("computation", "row", "col")
_lo_hi_lane = _pw((Mod(lane, 4), lane < 16), (Mod(lane, 4) + 4, True))
_add("m8n8k4.f16.A.row", (_comp, _lo_hi_lane, i), _sec, "Figure 46", names=_CN)
_add(
    "m8n8k4.f16.A.col",
    (_comp, _pw((Mod(i, 4), lane < 16), (Mod(i, 4) + 4, True)), Mod(lane, 4)),
    _sec,
    "Figure 47",
    names=_CN,
)
_add("m8n8k4.f16.B.row", (_comp, Mod(lane, 4), _pw((i, lane < 16), (i + 4, True))), _sec, "Figure 48", names=_CN)
_add("m8n8k4.f16.B.col", (_comp, i, _lo_hi_lane), _sec, "Figure 49", names=_CN)
_add("m8n8k4.f16.C.f16", (_comp, _lo_hi_lane, i), _sec, "Figure 50", names=_CN)
_X = bitand(lane, 0b1) + bitand(i, 0b10)
_add(
    "m8n8k4.f16.C.f32",
    (_comp, _pw((_X, lane < 16), (_X + 4, True)), bitand(i, 0b100) + bitand(lane, 0b10) + bitand(i, 0b1)),
    _sec,
    "Figures 51, 52",
    names=_CN,
)

# --- m8n8k4 .f64 ---
_sec = f"{S}.2 Matrix Fragments for mma.m8n8k4 with .f64 floating point type"
_add("m8n8k4.f64.A", (shr(lane, 2), Mod(lane, 4)), _sec, "Figure 53")
_add("m8n8k4.f64.B", (Mod(lane, 4), shr(lane, 2)), _sec, "Figure 54")
_add("m8n8k4.f64.C", (gid, tig * 2 + bitand(i, 0x1)), _sec, "Figure 55")

# --- m8n8k16 / m8n8k32 / m8n8k128 (integer and single bit) ---
for _shape, _per, _sec, _figs in (
    ("m8n8k16", 4, f"{S}.3 Matrix Fragments for mma.m8n8k16", ("Figure 56", "Figure 57", "Figure 58")),
    ("m8n8k32", 8, f"{S}.4 Matrix Fragments for mma.m8n8k32", ("", "", "")),
    ("m8n8k128", 32, f"{S}.5 Matrix Fragments for mma.m8n8k128", ("Figure 62", "Figure 63", "Figure 64")),
):
    _add(f"{_shape}.A", (gid, tig * _per + i), _sec, _figs[0])
    _add(f"{_shape}.B", (tig * _per + i, gid), _sec, _figs[1])
    _add(f"{_shape}.C", (gid, tig * 2 + i), _sec, _figs[2])

# --- the m16n8 accumulator, shared by every m16n8kK shape and type ---
_C16 = (_pw((gid, i < 2), (gid + 8, True)), tig * 2 + bitand(i, 0x1))
for _shape, _sec in (
    ("m16n8k4", f"{S}.6 Matrix Fragments for mma.m16n8k4"),
    ("m16n8k8", f"{S}.7 Matrix Fragments for mma.m16n8k8"),
    ("m16n8k16", f"{S}.8 Matrix Fragments for mma.m16n8k16"),
    ("m16n8k32", f"{S}.10 Matrix Fragments for mma.m16n8k32"),
    ("m16n8k64", f"{S}.11 Matrix Fragments for mma.m16n8k64"),
    ("m16n8k128", f"{S}.12 Matrix Fragments for mma.m16n8k128"),
    ("m16n8k256", f"{S}.13 Matrix Fragments for mma.m16n8k256"),
):
    _add(f"{_shape}.C", _C16, _sec)

# --- m16n8k4: .tf32 and .f64 ---
_sec = f"{S}.6 Matrix Fragments for mma.m16n8k4"
_add("m16n8k4.A.32bit", (_pw((gid, Eq(i, 0)), (gid + 8, True)), tig), _sec)
_add("m16n8k4.B.32bit", (tig, gid), _sec)

# --- m16n8k8: .f16/.bf16, .tf32, .f64 ---
_sec = f"{S}.7 Matrix Fragments for mma.m16n8k8"
_add("m16n8k8.A.16bit", (_pw((gid, i < 2), (gid + 8, True)), tig * 2 + bitand(i, 0x1)), _sec, "Figure 71")
_add(
    "m16n8k8.A.32bit",
    (_pw((gid, Or(Eq(i, 0), Eq(i, 2))), (gid + 8, True)), _pw((tig, i < 2), (tig + 4, True))),
    _sec,
    "Figures 72, 73",
)
_add("m16n8k8.B.16bit", (tig * 2 + i, gid), _sec)
_add("m16n8k8.B.32bit", (_pw((tig, Eq(i, 0)), (tig + 4, True)), gid), _sec)

# --- m16n8k16: .f16/.bf16, .f64, 8-bit (.u8/.s8/.e4m3/.e5m2) ---
_sec = f"{S}.8 Matrix Fragments for mma.m16n8k16"
_add(
    "m16n8k16.A.16bit",
    (
        _pw((gid, Or(i < 2, _in(4, 6))), (gid + 8, True)),
        _pw((tig * 2 + bitand(i, 0x1), i < 4), (tig * 2 + bitand(i, 0x1) + 8, True)),
    ),
    _sec,
    "Figure 79",
)
_add(
    "m16n8k16.A.f64",
    (
        _pw((gid, Eq(Mod(i, 2), 0)), (gid + 8, True)),
        _pw((i * 2 + tig, Eq(Mod(i, 2), 0)), (i * 2 - 2 + tig, True)),
    ),
    _sec,
    "Figure 80",
)
_add(
    "m16n8k16.B.16bit",
    (_pw((tig * 2 + bitand(i, 0x1), i < 2), (tig * 2 + bitand(i, 0x1) + 8, True)), gid),
    _sec,
)
_add(
    "m16n8k16.B.f64",
    (_pw((tig, Eq(i, 0)), (tig + 4, Eq(i, 1)), (tig + 8, Eq(i, 2)), (tig + 12, True)), gid),
    _sec,
)
_sec9 = f"{S}.9 Matrix Fragments for mma.m16n8k16 with integer type"
_add("m16n8k16.A.8bit", (_pw((gid, i < 4), (gid + 8, True)), tig * 4 + bitand(i, 0x3)), _sec9)
_add("m16n8k16.B.8bit", (tig * 4 + i, gid), _sec9)

# --- m16n8k32: 8-bit (.u8/.s8/.e4m3/.e5m2 and kind::f8f6f4 containers), 4-bit (.u4/.s4) ---
_sec = f"{S}.10 Matrix Fragments for mma.m16n8k32"
_add(
    "m16n8k32.A.8bit",
    (
        _pw((gid, Or(i < 4, _in(8, 12))), (gid + 8, True)),
        _pw((tig * 4 + bitand(i, 0x3), i < 8), (tig * 4 + bitand(i, 0x3) + 16, True)),
    ),
    _sec,
)
_add(
    "m16n8k32.B.8bit",
    (_pw((tig * 4 + bitand(i, 0x3), i < 4), (tig * 4 + bitand(i, 0x3) + 16, True)), gid),
    _sec,
)
_add("m16n8k32.A.4bit", (_pw((gid, i < 8), (gid + 8, True)), tig * 8 + bitand(i, 0x7)), _sec)
_add("m16n8k32.B.4bit", (tig * 8 + i, gid), _sec)

# --- m16n8k64: 4-bit (.u4/.s4, .e2m1 packed for kind::mxf4/mxf4nvf4) ---
_sec = f"{S}.11 Matrix Fragments for mma.m16n8k64"
_add(
    "m16n8k64.A.4bit",
    (
        _pw((gid, Or(i < 8, _in(16, 24))), (gid + 8, True)),
        _pw((tig * 8 + bitand(i, 0x7), i < 16), (tig * 8 + bitand(i, 0x7) + 32, True)),
    ),
    _sec,
    "Figure 93",
)
_add(
    "m16n8k64.B.4bit",
    (_pw((tig * 8 + bitand(i, 0x7), i < 8), (tig * 8 + bitand(i, 0x7) + 32, True)), gid),
    _sec,
    "Figures 94, 95",
)

# --- m16n8k128 / m16n8k256: .b1 ---
_sec = f"{S}.12 Matrix Fragments for mma.m16n8k128"
_add("m16n8k128.A.1bit", (_pw((gid, i < 32), (gid + 8, True)), tig * 32 + bitand(i, 0x1F)), _sec, "Figure 97")
_add("m16n8k128.B.1bit", (tig * 32 + i, gid), _sec, "Figure 98")
_sec = f"{S}.13 Matrix Fragments for mma.m16n8k256"
_add(
    "m16n8k256.A.1bit",
    (
        _pw((gid, Or(i < 32, _in(64, 96))), (gid + 8, True)),
        _pw((tig * 32 + bitand(i, 0x1F), i < 64), (tig * 32 + bitand(i, 0x1F) + 128, True)),
    ),
    _sec,
)
_add(
    "m16n8k256.B.1bit",
    (_pw((tig * 32 + bitand(i, 0x1F), i < 32), (tig * 32 + bitand(i, 0x1F) + 128, True)), gid),
    _sec,
)

# --- sparse mma.sp: A as (row, firstcol, lastcol); B where it differs from the dense B ---
SP = "9.7.14.6.2"
_SPN = ("row", "firstcol", "lastcol")


def _sparse_a(key, row, firstcol, span, section):
    _add(key, (row, firstcol, firstcol + span - 1), section, names=_SPN)


_sec = f"{SP}.1 Matrix Fragments for sparse mma.m16n8k16 with .f16 and .bf16 types"
_sparse_a("sp.m16n8k16.A.16bit", _pw((gid, i < 2), (gid + 8, True)), tig * 4, 4, _sec)
_sec = f"{SP}.2 Matrix Fragments for sparse mma.m16n8k32 with .f16 and .bf16 types"
_sparse_a(
    "sp.m16n8k32.A.16bit",
    _pw((gid, Or(i < 2, _in(4, 6))), (gid + 8, True)),
    _pw((tig * 4, i < 4), (tig * 4 + 16, True)),
    4,
    _sec,
)
_add(
    "sp.m16n8k32.B.16bit",
    (
        _pw(
            (tig * 2 + bitand(i, 0x1), i < 2),
            (tig * 2 + bitand(i, 0x1) + 8, i < 4),
            (tig * 2 + bitand(i, 0x1) + 16, i < 6),
            (tig * 2 + bitand(i, 0x1) + 24, True),
        ),
        gid,
    ),
    _sec,
)
_sec = f"{SP}.3 Matrix Fragments for sparse mma.m16n8k8 with .tf32 floating point type"
_sparse_a("sp.m16n8k8.A.32bit", _pw((gid, Eq(i, 0)), (gid + 8, True)), tig * 2, 2, _sec)
_sec = f"{SP}.4 Matrix Fragments for sparse mma.m16n8k16 with .tf32 floating point type"
_sparse_a(
    "sp.m16n8k16.A.32bit",
    _pw((gid, Or(Eq(i, 0), Eq(i, 2))), (gid + 8, True)),
    _pw((tig * 2, i < 2), (tig * 2 + 8, True)),
    2,
    _sec,
)
_add(
    "sp.m16n8k16.B.32bit",
    (_pw((tig, Eq(i, 0)), (tig + 4, Eq(i, 1)), (tig + 8, Eq(i, 2)), (tig + 12, True)), gid),
    _sec,
)
_sec = f"{SP}.5 Matrix Fragments for sparse mma.m16n8k32 with .u8/.s8 integer type"
_sparse_a("sp.m16n8k32.A.8bit", _pw((gid, i < 4), (gid + 8, True)), tig * 8, 8, _sec)
_sec = f"{SP}.6 Matrix Fragments for sparse mma.m16n8k64 with .u8/.s8/.e4m3/.e5m2 type"
_sparse_a(
    "sp.m16n8k64.A.8bit",
    _pw((gid, Or(i < 4, _in(8, 12))), (gid + 8, True)),
    _pw((tig * 8, i < 8), (tig * 8 + 32, True)),
    8,
    _sec,
)
_add(
    "sp.m16n8k64.B.8bit",
    (
        _pw(
            (tig * 4 + bitand(i, 0x3), i < 4),
            (tig * 4 + bitand(i, 0x3) + 16, i < 8),
            (tig * 4 + bitand(i, 0x3) + 32, i < 12),
            (tig * 4 + bitand(i, 0x3) + 48, True),
        ),
        gid,
    ),
    _sec,
)
_sec = f"{SP}.7 Matrix Fragments for sparse mma.m16n8k64 with .u4/.s4 integer type"
_sparse_a("sp.m16n8k64.A.4bit", _pw((gid, i < 8), (gid + 8, True)), tig * 16, 16, _sec)
_sec = f"{SP}.8 Matrix Fragments for sparse mma.m16n8k128 with .u4/.s4 integer type"
_sparse_a(
    "sp.m16n8k128.A.4bit",
    _pw((gid, Or(i < 8, _in(16, 24))), (gid + 8, True)),
    _pw((tig * 16, i < 16), (tig * 16 + 64, True)),
    16,
    _sec,
)
_add(
    "sp.m16n8k128.B.4bit",
    (
        _pw(
            (tig * 8 + bitand(i, 0x7), i < 8),
            (tig * 8 + bitand(i, 0x7) + 32, i < 16),
            (tig * 8 + bitand(i, 0x7) + 64, i < 24),
            (tig * 8 + bitand(i, 0x7) + 96, True),
        ),
        gid,
    ),
    _sec,
)

# --- mma.sp metadata register: (lane, field i) -> the chunk of A whose non-zero positions field i encodes ---
# "Tk: [m..n] present in cell [x][y..z] indicates that bits m through n in the metadata operand of thread
# with %laneid=k contains the indices of the non-zero elements from the chunk [x][y]..[x][z] of matrix A"
# (9.7.14.6.2). Field i is bits [4i+3 .. 4i]; each covers one chunk of ``w`` columns (w = 4 for 2:4, 2 for
# .tf32's 1:2, 8 for the pair-wise 4:8 of 4-bit types). The cell labels are in the metadata figures only
# (images), so these are read off the figures' structure as recorded on an H100 (sm_90a) by a probe that
# flips one field of one lane and sees which (row, chunk) of A moves -- and cross-checked with CUTLASS's
# ELayouts (SM90 GMMA sparse, SM120 sparse). Two families:
#   k-split  (.f16/.bf16, .tf32): fields 0-3 are row groupID, fields 4-7 row groupID + 8; the second lane
#            of a selected pair holds the next four chunks.
#   row-split (8-bit, 4-bit):     a lane holds eight consecutive chunks of one row, groupID (+8 for odd
#            lanes); with four lanes, lanes 2 and 3 of the group hold chunks 8-15.
M_ = "9.7.14.6.1 Sparse matrix storage / 9.7.14.6.2 metadata figures"
_MN = ("row", "firstcol", "lastcol")
_META_F: dict[str, PtxFormula] = {}  # kept apart from FORMULAS: operand fragments only there
_meta_specs = {  # (shape, class): (family, lanes per group, chunk width)
    ("m16n8k16", "16bit"): ("k", 1, 4), ("m16n8k32", "16bit"): ("k", 2, 4),
    ("m16n8k8", "32bit"): ("k", 1, 2), ("m16n8k16", "32bit"): ("k", 2, 2),
    ("m16n8k32", "8bit"): ("row", 2, 4), ("m16n8k64", "8bit"): ("row", 4, 4),
    ("m16n8k64", "4bit"): ("row", 2, 8), ("m16n8k128", "4bit"): ("row", 4, 8),
}
for (_shape, _cls), (_fam, _t, _w) in _meta_specs.items():
    if _fam == "k":
        _row = gid + 8 * shr(i, 2)
        _chunk = bitand(i, 3) + (4 * bitand(lane, 1) if _t == 2 else 0)
    else:
        _row = gid + 8 * bitand(lane, 1)
        _chunk = i + (8 * bitand(shr(lane, 1), 1) if _t == 4 else 0)
    _k = f"sp.meta.{_shape}.{_cls}"
    _META_F[_k] = PtxFormula(_k, tuple(sympy.sympify(o) for o in (_row, _w * _chunk, _w * _chunk + _w - 1)), _MN, M_,
                             f"metadata layout of sparse mma.{_shape} ({_cls})", "figure")

# --- wgmma register fragments (read off Figures 148-149 and their k8/k32 siblings) ---
W = "9.7.15.5.1.1 Register Fragments (wgmma.mma_async)"
# lane here is the warpgroup's %tid (0..127): warp = tid >> 5, groupID = (tid % 32) >> 2
_warp_row = 16 * shr(lane, 5)
_wgid = shr(Mod(lane, 32), 2)
_add(
    "wgmma.D",
    (_warp_row + _wgid + 8 * bitand(shr(i, 1), 1), tig * 2 + bitand(i, 1) + 8 * shr(i, 2)),
    W,
    "Figure 149 (accumulator D)",
    source="figure",
)
_add(
    "wgmma.A.32bit",
    (_warp_row + _wgid + 8 * bitand(i, 1), tig + 4 * shr(i, 1)),
    W,
    "m64nNk8 register fragment for A (.tf32)",
    source="figure",
)
_add(
    "wgmma.A.16bit",
    (_warp_row + _wgid + 8 * bitand(shr(i, 1), 1), tig * 2 + bitand(i, 1) + 8 * shr(i, 2)),
    W,
    "Figure 148 (A, .f16/.bf16)",
    source="figure",
)
_add(
    "wgmma.A.8bit",
    (_warp_row + _wgid + 8 * bitand(shr(i, 2), 1), tig * 4 + bitand(i, 3) + 16 * shr(i, 3)),
    W,
    "m64nNk32 register fragment for A (.e4m3/.e5m2/.s8/.u8)",
    source="figure",
)

# --- block-scale factors (mma.sync kind::mxf8f6f4 / mxf4 / mxf4nvf4), i = scale column (A) / row (B) ---
# Read off the "Block Scaling for mma.sync" figures for thread-id selector 0; cross-checked with
# CUTLASS's SM120 SFALayout / SFBLayout. The selectors shift the lane (thread-id) and byte (byte-id).
B = "9.7.14.3 Block Scaling for mma.sync"
_add("scale.A", (gid + 8 * bitand(lane, 1), i), B, "scale_A selector figures", source="figure")
_add("scale.B", (i, gid), B, "scale_B selector figures", source="figure")

# --- ldmatrix / stmatrix .m8n8 .b16: i = element within the 32-bit register of one matrix ---
L = "9.7.9.26 ldmatrix / 9.7.9.27 stmatrix"
# i = 2*matrix + element: register r_j of every thread holds two b16 elements of matrix j.
_LN = ("matrix", "row", "col")
_add(
    "ldmatrix.m8n8.b16",
    (shr(i, 1), gid, tig * 2 + bitand(i, 1)),
    L,
    "ldmatrix fragment figure",
    names=_LN,
    source="figure",
)
_add(
    "ldmatrix.m8n8.b16.trans",
    (shr(i, 1), tig * 2 + bitand(i, 1), gid),
    L,
    "ldmatrix .trans fragment figure",
    names=_LN,
    source="figure",
)

#: Every transcribed formula, by key.
FORMULAS: dict[str, PtxFormula] = dict(_F)
#: The ``mma.sp`` metadata-register formulas (``sp.meta.<shape>.<class>``), by key.
METADATA_FORMULAS: dict[str, PtxFormula] = dict(_META_F)
