"""The TMA tensor map itself: ``CUtensorMap``'s fields, the driver's enumerations and rules, and placement.

:class:`TensorMap` holds the numbers ``cuTensorMapEncodeTiled`` takes (data type, global extents
and strides, box, element strides, interleave, swizzle, L2 promotion, OOB fill), checks them
against the driver's documented requirements (:data:`RULES`, checked on an H100), and says where
every box element lands in shared memory (:meth:`TensorMap.placement`). :mod:`layoutalg.nvidia.hopper.tma`
derives tensor maps from layouts (``make_tma_copy``) and checks them against wgmma descriptors;
it re-exports every name here.

    >>> m = TensorMap("FLOAT16", (64, 100), (128,), (64, 8), swizzle="128B")
    >>> m.violations(), m.box_bytes
    ((), 1024)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...composed import ComposedLayout
from ...errors import LayoutError, guarded
from ..common.dtypes import dtype_name as _dtype_name
from ...layout import Layout
from ...swizzle import Swizzle

__all__ = [
    "DATA_TYPES",
    "SWIZZLE_MODES",
    "INTERLEAVES",
    "L2_PROMOTIONS",
    "OOB_FILLS",
    "RULES",
    "DOCUMENTED_ONLY",
    "SwizzleMode",
    "Violation",
    "TensorMap",
    "tma_data_type",
    "element_bytes",
    "swizzle_mode",
    "swizzle_mode_of",
    "int_tuple_arg",
]

# --- the driver's enumerations (cuda.h, CUDA 13.0) ----------------------------------------------
#: CUtensorMapDataType: name -> (enum value, bits per element).
DATA_TYPES: dict[str, tuple[int, int]] = {
    "UINT8": (0, 8), "UINT16": (1, 16), "UINT32": (2, 32), "INT32": (3, 32), "UINT64": (4, 64),
    "INT64": (5, 64), "FLOAT16": (6, 16), "FLOAT32": (7, 32), "FLOAT64": (8, 64), "BFLOAT16": (9, 16),
    "FLOAT32_FTZ": (10, 32), "TFLOAT32": (11, 32), "TFLOAT32_FTZ": (12, 32),
    "16U4_ALIGN8B": (13, 4), "16U4_ALIGN16B": (14, 4), "16U6_ALIGN16B": (15, 6),
}
_FLOAT_TYPES = {"FLOAT16", "FLOAT32", "FLOAT64", "BFLOAT16", "FLOAT32_FTZ", "TFLOAT32", "TFLOAT32_FTZ"}
_PACKED_TYPES = {"16U4_ALIGN8B", "16U4_ALIGN16B", "16U6_ALIGN16B"}

#: layoutalg / CuTe element type names -> the TMA data type CuTe's ``to_CUtensorMapDataType`` picks.
_DTYPE_TO_TMA: dict[str, str] = {
    "f16": "FLOAT16", "half": "FLOAT16", "half_t": "FLOAT16", "fp16": "FLOAT16", "float16": "FLOAT16",
    "bf16": "BFLOAT16", "bfloat16": "BFLOAT16", "bfloat16_t": "BFLOAT16",
    "tf32": "TFLOAT32", "tfloat32": "TFLOAT32", "tfloat32_t": "TFLOAT32",
    "f32": "FLOAT32", "float": "FLOAT32", "float32": "FLOAT32", "f64": "FLOAT64", "double": "FLOAT64",
    "e4m3": "UINT8", "e5m2": "UINT8", "float_e4m3": "UINT8", "float_e5m2": "UINT8",
    "s8": "UINT8", "u8": "UINT8", "int8": "UINT8", "uint8": "UINT8",
    "u16": "UINT16", "uint16": "UINT16", "s32": "INT32", "int32": "INT32", "u32": "UINT32", "uint32": "UINT32",
    "s64": "INT64", "int64": "INT64", "u64": "UINT64", "uint64": "UINT64",
}

#: CUtensorMapInterleave, CUtensorMapL2promotion, CUtensorMapFloatOOBfill: name -> enum value.
INTERLEAVES: dict[str, int] = {"NONE": 0, "16B": 1, "32B": 2}
L2_PROMOTIONS: dict[str, int] = {"NONE": 0, "64B": 1, "128B": 2, "256B": 3}
OOB_FILLS: dict[str, int] = {"NONE": 0, "NAN_REQUEST_ZERO_FMA": 1}


@dataclass(frozen=True)
class SwizzleMode:
    """One CUtensorMapSwizzle value: its enum code, span, and the byte-address permutation it applies.

    ``swizzles`` are applied in order to the shared-memory byte address (one ``Swizzle`` except
    for the 8-byte-flip variant). ``span`` is the largest inner box row in bytes (0: no limit);
    ``repeat`` the bytes after which the XOR pattern starts over (the alignment that makes the
    pattern start at its first row). ``checked`` is False for the sm_100 atom variants, which
    are transcribed from the PTX ISA tables and were not run on hardware here.
    """

    name: str
    code: int
    span: int
    repeat: int
    swizzles: tuple[Swizzle, ...]
    checked: bool

    def __call__(self, address: Any) -> Any:
        """The swizzled shared-memory byte address (int or numpy array)."""
        for sw in self.swizzles:
            address = sw(address)
        return address


#: CUtensorMapSwizzle: name -> mode. The PTX ISA "Swizzling Modes" tables, on byte addresses.
SWIZZLE_MODES: dict[str, SwizzleMode] = {
    "NONE": SwizzleMode("NONE", 0, 0, 16, (), True),
    "32B": SwizzleMode("32B", 1, 32, 256, (Swizzle(1, 4, 3),), True),
    "64B": SwizzleMode("64B", 2, 64, 512, (Swizzle(2, 4, 3),), True),
    "128B": SwizzleMode("128B", 3, 128, 1024, (Swizzle(3, 4, 3),), True),
    # sm_100 variants: 32-byte / 64-byte atomicity inside a 128-byte span (PTX ISA tables)
    "128B_ATOM_32B": SwizzleMode("128B_ATOM_32B", 4, 128, 512, (Swizzle(2, 5, 2),), False),
    "128B_ATOM_32B_FLIP_8B": SwizzleMode("128B_ATOM_32B_FLIP_8B", 5, 128, 512, (Swizzle(2, 5, 2), Swizzle(1, 3, 4)), False),
    "128B_ATOM_64B": SwizzleMode("128B_ATOM_64B", 6, 128, 256, (Swizzle(1, 6, 1),), False),
}
_SWIZZLE_BY_CODE = {m.code: m for m in SWIZZLE_MODES.values()}

#: The rules of cuTensorMapEncodeTiled (CUDA driver API, "Tensor Map Object Management"), one id each.
RULES: dict[str, str] = {
    "data_type": "tensorDataType must be a CUtensorMapDataType value",
    "rank": "tensorRank must be non-zero and at most 5",
    "rank_interleave": "tensorRank must be at least 3 when interleave is not NONE",
    "global_address_align": "globalAddress must be 16-byte aligned (32-byte with INTERLEAVE_32B or a 16U*_ALIGN16B type)",
    "global_dim": "globalDim[i] must be non-zero and at most 2^32",
    "global_stride_align": "globalStrides[i] (bytes) must be a multiple of 16 (of 32 with INTERLEAVE_32B)",
    "global_stride_max": "globalStrides[i] must be less than 2^40",
    "box_dim": "boxDim[i] must be non-zero and at most 256",
    "box_inner_bytes": "boxDim[0] * element size must be a multiple of 16 bytes when interleave is NONE",
    "box_inner_swizzle_span": "boxDim[0] * element size must not exceed the swizzle span (32/64/128 B) when interleave is NONE",
    "element_strides": "elementStrides[i] must be non-zero and at most 8",
    "interleave": "interleave must be a CUtensorMapInterleave value",
    "interleave_32B_swizzle": "INTERLEAVE_32B requires SWIZZLE_32B (documented; the driver does not enforce it, see DOCUMENTED_ONLY)",
    "swizzle": "swizzle must be a CUtensorMapSwizzle value",
    "l2_promotion": "l2Promotion must be a CUtensorMapL2promotion value",
    "oob_fill": "oobFill must be a CUtensorMapFloatOOBfill value",
    "oob_fill_float": "OOB_FILL_NAN_REQUEST_ZERO_FMA needs a floating-point (non-packed) data type",
    "packed_type": "the 16U4/16U6 packed types' extra rules (globalDim[0] multiple of 128 or 2, boxDim[0] = 128, ...)",
    "swizzle_target": "the 128B swizzles with 32B/64B atomicity are sm_100 modes: the driver refuses them on an sm_90 device",
    "box_start_align": "cp.async.bulk.tensor: the box's first element along dimension 0 must be 16-byte aligned in global "
                       "memory (coords[0] * bytes a multiple of 16); the instruction faults otherwise",
    "box_inner_swizzle_pitch": "with a swizzle, box rows land a full swizzle span apart in shared memory: a shared layout "
                               "whose swizzled rows are narrower than the span is not what the TMA writes",
    "smem_address_align": "the shared-memory destination of cp.async.bulk.tensor must be 128-byte aligned",
    "smem_gmem_major": "TMA dimension 0 must be the global mode of stride 1 (TMA cannot transpose)",
    "smem_layout": "the shared layout must be a union of translated boxes (what one tensor map can write)",
}


#: Rules the driver documentation states but the driver did not enforce when measured (H100, driver
#: 580.159.04, CUDA 13.0: tests/data/hardware/tma.json): reported only by ``violations(documented=True)``.
DOCUMENTED_ONLY: frozenset[str] = frozenset({"interleave_32B_swizzle"})


@dataclass(frozen=True)
class Violation:
    """One broken rule: ``rule`` (a key of :data:`RULES`) and a message with the offending values."""

    rule: str
    message: str

    def __str__(self) -> str:
        return f"[{self.rule}] {self.message}"


# --- small helpers -------------------------------------------------------------------------------
def tma_data_type(dtype: Any) -> str:
    """The CUtensorMapDataType name of ``dtype``: a TMA name ('FLOAT16', 'UINT8', ...), an enum value, or a
    layoutalg/CuTe type name ('bf16' -> 'BFLOAT16', 'e4m3' -> 'UINT8' as CuTe's ``to_CUtensorMapDataType``).

    >>> tma_data_type("bf16"), tma_data_type("e4m3"), tma_data_type("FLOAT32"), tma_data_type(11)
    ('BFLOAT16', 'UINT8', 'FLOAT32', 'TFLOAT32')
    """
    if isinstance(dtype, (int, np.integer)) and not isinstance(dtype, bool):
        for name, (code, _) in DATA_TYPES.items():
            if code == int(dtype):
                return name
        raise LayoutError(f"tma_data_type: {dtype} is not a CUtensorMapDataType value (0..{len(DATA_TYPES) - 1})")
    if not isinstance(dtype, str):
        raise LayoutError(f"tma_data_type: dtype {dtype!r} is not a type name")
    key = dtype.strip()
    up = key.upper().replace("CU_TENSOR_MAP_DATA_TYPE_", "")
    if up in DATA_TYPES:
        return up
    low = key.lower()
    if low in _DTYPE_TO_TMA:
        return _DTYPE_TO_TMA[low]
    try:  # any spelling the catalog reads (cutlass::half_t, float_e4m3_t, Float8E5M2, ...)
        canon = _dtype_name(key, op="tma_data_type")
    except LayoutError:
        canon = None
    if canon in _DTYPE_TO_TMA:
        return _DTYPE_TO_TMA[canon]
    raise LayoutError(
        f"tma_data_type: dtype {dtype!r} is not a TMA data type ({', '.join(DATA_TYPES)}) "
        f"nor an element type ({', '.join(sorted(set(_DTYPE_TO_TMA) & {'f16', 'bf16', 'tf32', 'f32', 'e4m3', 's8', 'u8'}))}, ...)"
    )


def element_bytes(dtype: Any) -> int:
    """Bytes per element of a (byte-sized) TMA data type: 1, 2, 4 or 8.

    >>> element_bytes("bf16"), element_bytes("UINT8"), element_bytes("tf32")
    (2, 1, 4)
    """
    name = tma_data_type(dtype)
    bits = DATA_TYPES[name][1]
    if bits % 8:
        raise LayoutError(f"element_bytes: {name} packs {bits}-bit values; the layout model here needs whole bytes")
    return bits // 8


def swizzle_mode(mode: Any) -> SwizzleMode:
    """The :class:`SwizzleMode` of a name ('128B', 'SWIZZLE_64B'), a byte count (0, 32, 64, 128) or an enum value.

    >>> swizzle_mode(128).name, swizzle_mode("64B").code, swizzle_mode("NONE").span
    ('128B', 2, 0)
    """
    if isinstance(mode, SwizzleMode):
        return mode
    if isinstance(mode, (int, np.integer)) and not isinstance(mode, bool):
        v = int(mode)
        if v in (32, 64, 128):
            return SWIZZLE_MODES[f"{v}B"]
        if v in _SWIZZLE_BY_CODE:
            return _SWIZZLE_BY_CODE[v]
    if isinstance(mode, str):
        key = mode.strip().upper().replace("CU_TENSOR_MAP_SWIZZLE_", "").replace("SWIZZLE_", "")
        if key in SWIZZLE_MODES:
            return SWIZZLE_MODES[key]
    raise LayoutError(f"swizzle_mode: {mode!r} is not a TMA swizzle mode ({', '.join(SWIZZLE_MODES)})")


@guarded
def swizzle_mode_of(sw: Swizzle | None) -> SwizzleMode | None:
    """The TMA swizzle mode whose byte-address permutation is ``sw`` (a Swizzle on bytes), or None.

    >>> swizzle_mode_of(Swizzle(3, 4, 3)).name, swizzle_mode_of(Swizzle(2, 5, 2)).name, swizzle_mode_of(Swizzle(3, 3, 3))
    ('128B', '128B_ATOM_32B', None)
    """
    if sw is None or sw.B == 0:
        return SWIZZLE_MODES["NONE"]
    for m in SWIZZLE_MODES.values():
        if m.swizzles == (sw,):
            return m
    return None


def _enum(op: str, table: dict[str, int], what: str, value: Any) -> str:
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        for k, v in table.items():
            if v == int(value):
                return k
        return f"<{int(value)}>"  # kept: an invalid value is a rule violation, not a type error
    if isinstance(value, str):
        key = value.strip().upper()
        for prefix in ("CU_TENSOR_MAP_", "INTERLEAVE_", "L2_PROMOTION_", "L2_", "FLOAT_OOB_FILL_", "OOB_FILL_"):
            key = key.replace(prefix, "")
        if key in table:
            return key
    raise LayoutError(f"{op}: {what} {value!r} is not one of {', '.join(table)} (or an enum value)")


def int_tuple_arg(op: str, name: str, values: Any) -> tuple[int, ...]:
    """``values`` (an int or a sequence of ints) as a tuple of ints; a LayoutError naming ``op`` and ``name``
    for anything else (a bool included).

    >>> int_tuple_arg("TensorMap", "box_dim", 8), int_tuple_arg("TensorMap", "box_dim", [64, 8])
    ((8,), (64, 8))
    """
    if isinstance(values, (int, np.integer)) and not isinstance(values, bool):
        values = (values,)
    try:
        out = tuple(int(v) for v in values)
    except (TypeError, ValueError):
        raise LayoutError(f"{op}: {name}={values!r} is not a sequence of integers") from None
    if any(isinstance(v, bool) for v in values):
        raise LayoutError(f"{op}: {name}={values!r} holds a bool, not an integer")
    return out


# --- the tensor map ------------------------------------------------------------------------------
@dataclass(frozen=True)
class TensorMap:
    """The arguments of ``cuTensorMapEncodeTiled`` (what the 128-byte ``CUtensorMap`` encodes).

    ``global_strides`` has ``rank - 1`` entries, in bytes (dimension 0 is one element); every
    other extent is in elements. ``global_address`` stands for the tensor's base address: the
    model uses only its alignment. Construction checks types only; :meth:`violations` lists the
    broken driver rules (so a map the driver refuses can be represented and explained), and
    :meth:`check` raises on them.

    >>> m = TensorMap("FLOAT16", (64, 100), (128,), (64, 8), swizzle="128B")
    >>> m.violations(), m.box_bytes
    ((), 1024)
    >>> [str(v) for v in TensorMap("FLOAT16", (64, 100), (128,), (128, 8), swizzle="128B").violations()]
    ['[box_inner_swizzle_span] box_dim[0] = 128 FLOAT16 = 256 B exceeds the 128B swizzle span (128 B)']
    """

    data_type: str
    global_dim: tuple[int, ...]
    global_strides: tuple[int, ...]
    box_dim: tuple[int, ...]
    element_strides: tuple[int, ...] = ()
    interleave: str = "NONE"
    swizzle: str = "NONE"
    l2_promotion: str = "NONE"
    oob_fill: str = "NONE"
    global_address: int = 0

    def __post_init__(self) -> None:
        op = "TensorMap"
        dt = self.data_type
        if isinstance(dt, (int, np.integer)) and not isinstance(dt, bool) and not 0 <= int(dt) < len(DATA_TYPES):
            dt_name = f"<{int(dt)}>"
        else:
            dt_name = tma_data_type(dt)
        set_ = object.__setattr__
        set_(self, "data_type", dt_name)
        set_(self, "global_dim", int_tuple_arg(op, "global_dim", self.global_dim))
        set_(self, "global_strides", int_tuple_arg(op, "global_strides", self.global_strides))
        set_(self, "box_dim", int_tuple_arg(op, "box_dim", self.box_dim))
        es = self.element_strides if len(self.element_strides) else (1,) * len(self.global_dim)
        set_(self, "element_strides", int_tuple_arg(op, "element_strides", es))
        set_(self, "interleave", _enum(op, INTERLEAVES, "interleave", self.interleave))
        sw = self.swizzle
        if isinstance(sw, (int, np.integer)) and not isinstance(sw, bool) and int(sw) not in _SWIZZLE_BY_CODE:
            set_(self, "swizzle", f"<{int(sw)}>")
        else:
            set_(self, "swizzle", swizzle_mode(sw).name if not isinstance(sw, (int, np.integer)) else _SWIZZLE_BY_CODE[int(sw)].name)
        set_(self, "l2_promotion", _enum(op, L2_PROMOTIONS, "l2_promotion", self.l2_promotion))
        set_(self, "oob_fill", _enum(op, OOB_FILLS, "oob_fill", self.oob_fill))
        set_(self, "global_address", int(self.global_address))
        n = len(self.global_dim)
        if len(self.box_dim) != n or len(self.element_strides) != n:
            raise LayoutError(
                f"{op}: global_dim has {n} entries but box_dim has {len(self.box_dim)} and element_strides "
                f"{len(self.element_strides)}; all are per dimension"
            )
        if len(self.global_strides) != max(n - 1, 0):
            raise LayoutError(
                f"{op}: global_strides has {len(self.global_strides)} entries; it holds the byte strides of "
                f"dimensions 1..rank-1, so {max(n - 1, 0)} for rank {n}"
            )

    # -- properties ----------------------------------------------------------------------------
    @property
    def rank(self) -> int:
        """tensorRank: the number of dimensions."""
        return len(self.global_dim)

    @property
    def bytes_per_element(self) -> int:
        """Element size in bytes (packed 4/6-bit types refused)."""
        return element_bytes(self.data_type)

    @property
    def swizzle_mode(self) -> SwizzleMode:
        """The :class:`SwizzleMode` of ``swizzle``."""
        return swizzle_mode(self.swizzle)

    @property
    def smem_box(self) -> tuple[int, ...]:
        """Extents of the box in shared memory: ceil(box_dim[i] / element_strides[i]) (dimension 0: box_dim[0])."""
        out = []
        for i, (b, s) in enumerate(zip(self.box_dim, self.element_strides)):
            out.append(b if i == 0 and self.interleave == "NONE" else -(-b // s))
        return tuple(out)

    @property
    def box_bytes(self) -> int:
        """Bytes one ``cp.async.bulk.tensor`` delivers (the mbarrier transaction count): the box's elements."""
        return math.prod(self.smem_box) * self.bytes_per_element

    @property
    def smem_row_bytes(self) -> int:
        """Shared-memory bytes between consecutive box rows (dimension 1): box_dim[0] * bytes without a
        swizzle, the swizzle span (32/64/128 B) with one -- a narrower row is padded to the span (measured
        on the H100: tests/data/hardware/tma.json, cases ``*.row16`` and ``*.half*``)."""
        inner = self.smem_box[0] * self.bytes_per_element
        span = SWIZZLE_MODES[self.swizzle].span if self.swizzle in SWIZZLE_MODES else 0
        return max(inner, span) if span else inner

    @property
    def smem_footprint(self) -> int:
        """Bytes of shared memory one box spans: smem_row_bytes times the rows (>= box_bytes)."""
        return self.smem_row_bytes * math.prod(self.smem_box[1:])

    # -- the driver's rules --------------------------------------------------------------------
    def violations(self, target: str = "sm_90", *, documented: bool = False) -> tuple[Violation, ...]:
        """Every rule of :data:`RULES` these arguments break, in the driver documentation's order.

        ``target``: the device the map is encoded for ('sm_90' refuses the sm_100 swizzle modes);
        ``documented=True`` adds the documented rules the driver was measured not to enforce
        (:data:`DOCUMENTED_ONLY`). The default answers "does the driver refuse these arguments?".
        """
        if target not in ("sm_90", "sm_100"):
            raise LayoutError(f"TensorMap.violations: target {target!r} is not 'sm_90' or 'sm_100'")
        out: list[Violation] = []

        def bad(rule: str, msg: str) -> None:
            out.append(Violation(rule, msg))

        dt = self.data_type
        if dt not in DATA_TYPES:
            bad("data_type", f"data type {dt} is not a CUtensorMapDataType value")
            bits = 8
        else:
            bits = DATA_TYPES[dt][1]
        n = self.rank
        if not 1 <= n <= 5:
            bad("rank", f"rank {n} is outside 1..5")
        if self.interleave not in INTERLEAVES:
            bad("interleave", f"interleave {self.interleave} is not a CUtensorMapInterleave value")
        elif self.interleave != "NONE" and n < 3:
            bad("rank_interleave", f"rank {n} < 3 with INTERLEAVE_{self.interleave}")
        align = 32 if self.interleave == "32B" or dt in ("16U4_ALIGN16B", "16U6_ALIGN16B") else 16
        if self.global_address % align:
            bad("global_address_align", f"global address {self.global_address:#x} is not {align}-byte aligned")
        for i, d in enumerate(self.global_dim):
            if not 1 <= d <= 1 << 32:
                bad("global_dim", f"global_dim[{i}] = {d} is outside 1..2^32")
        salign = 32 if self.interleave == "32B" or dt in ("16U4_ALIGN16B", "16U6_ALIGN16B") else 16
        for i, s in enumerate(self.global_strides):
            if s % salign:
                bad("global_stride_align", f"global_strides[{i}] = {s} B (dimension {i + 1}) is not a multiple of {salign}")
            if not 0 <= s < 1 << 40:
                bad("global_stride_max", f"global_strides[{i}] = {s} B is outside [0, 2^40)")
        for i, b in enumerate(self.box_dim):
            if not 1 <= b <= 256:
                bad("box_dim", f"box_dim[{i}] = {b} is outside 1..256")
        inner = self.box_dim[0] * bits // 8 if self.box_dim else 0
        if self.interleave == "NONE" and self.box_dim and (self.box_dim[0] * bits) % 128:
            bad("box_inner_bytes", f"box_dim[0] = {self.box_dim[0]} {dt} = {self.box_dim[0] * bits / 8:g} B is not a multiple of 16 B")
        for i, e in enumerate(self.element_strides):
            if not 1 <= e <= 8:
                bad("element_strides", f"element_strides[{i}] = {e} is outside 1..8")
        if self.swizzle not in SWIZZLE_MODES:
            bad("swizzle", f"swizzle {self.swizzle} is not a CUtensorMapSwizzle value")
        else:
            span = SWIZZLE_MODES[self.swizzle].span
            if self.interleave == "NONE" and span and inner > span:
                bad("box_inner_swizzle_span",
                    f"box_dim[0] = {self.box_dim[0]} {dt} = {inner} B exceeds the {self.swizzle} swizzle span ({span} B)")
            if documented and self.interleave == "32B" and self.swizzle != "32B":
                bad("interleave_32B_swizzle", f"INTERLEAVE_32B with SWIZZLE_{self.swizzle} (needs SWIZZLE_32B)")
            if target == "sm_90" and not SWIZZLE_MODES[self.swizzle].checked:
                bad("swizzle_target", f"SWIZZLE_{self.swizzle} is an sm_100 mode; the driver refuses it for an sm_90 device")
        if self.l2_promotion not in L2_PROMOTIONS:
            bad("l2_promotion", f"l2_promotion {self.l2_promotion} is not a CUtensorMapL2promotion value")
        if self.oob_fill not in OOB_FILLS:
            bad("oob_fill", f"oob_fill {self.oob_fill} is not a CUtensorMapFloatOOBfill value")
        elif self.oob_fill == "NAN_REQUEST_ZERO_FMA" and dt not in _FLOAT_TYPES:
            bad("oob_fill_float", f"OOB_FILL_NAN_REQUEST_ZERO_FMA with the non-float type {dt}")
        if dt in _PACKED_TYPES:
            if dt in ("16U4_ALIGN16B", "16U6_ALIGN16B"):
                if self.global_dim and self.global_dim[0] % 128:
                    bad("packed_type", f"{dt}: global_dim[0] = {self.global_dim[0]} is not a multiple of 128")
                if self.box_dim and self.box_dim[0] != 128:
                    bad("packed_type", f"{dt}: box_dim[0] = {self.box_dim[0]} is not 128")
            elif self.global_dim and self.global_dim[0] % 2:
                bad("packed_type", f"{dt}: global_dim[0] = {self.global_dim[0]} is odd")
            if dt == "16U6_ALIGN16B" and self.interleave != "NONE":
                bad("packed_type", f"{dt} needs INTERLEAVE_NONE")
        return tuple(out)

    def check(self, op: str = "TensorMap.check", target: str = "sm_90") -> TensorMap:
        """This map if the driver would accept it, else LayoutError naming every violated rule."""
        v = self.violations(target)
        if v:
            raise LayoutError(f"{op}: cuTensorMapEncodeTiled would refuse {self}: " + "; ".join(str(x) for x in v))
        return self

    # -- the model of what the TMA writes ------------------------------------------------------
    def box_coords(self) -> np.ndarray:
        """Every shared-box coordinate ``(j0, .., j_rank-1)``, shape ``[box elements, rank]``, in the order the
        box is stored (dimension 0 fastest)."""
        ext = self.smem_box
        idx = np.arange(math.prod(ext), dtype=np.int64)
        cols = []
        for e in ext:
            cols.append(idx % e)
            idx = idx // e
        return np.stack(cols, axis=1) if cols else np.zeros((1, 0), np.int64)

    def placement(self, coords: Sequence[int], dst: int = 0, target: str = "sm_90") -> dict[str, np.ndarray]:
        """What one ``cp.async.bulk.tensor`` at tensor coordinates ``coords`` into shared byte ``dst`` writes.

        Box element ``j`` (in storage order) goes to the shared byte ``smem[j] = Sw(dst + row(j) * R + bytes * j0)``
        where ``row(j) = j1 + B1 * (j2 + B2 * ..)`` (dimension 1 fastest), ``R`` is :attr:`smem_row_bytes` (the
        row, padded to the swizzle span when swizzled) and ``Sw`` the swizzle on the absolute shared address; it
        holds global element ``coord[j] = coords + j * element_strides`` (per dimension); ``in_bounds[j]``
        is False where a coordinate is outside ``[0, global_dim)`` (the element is filled, not read), and
        ``gmem[j]`` is its byte offset from ``global_address`` (meaningful where in bounds).

        >>> m = TensorMap("FLOAT16", (64, 100), (128,), (64, 8), swizzle="128B")
        >>> p = m.placement((0, 96))
        >>> int(p["smem"][64]), p["coord"][64].tolist(), bool(p["in_bounds"][64]), int(p["in_bounds"].sum())
        (144, [0, 97], True, 256)
        """
        op = "TensorMap.placement"
        self.check(op, target)
        if self.interleave != "NONE":
            raise LayoutError(f"{op}: INTERLEAVE_{self.interleave} placement is not modeled (only interleave NONE)")
        coords = int_tuple_arg(op, "coords", coords)
        if len(coords) != self.rank:
            raise LayoutError(f"{op}: {len(coords)} coordinates for a rank-{self.rank} tensor map")
        nb = self.bytes_per_element
        if isinstance(dst, bool) or not isinstance(dst, (int, np.integer)):
            raise LayoutError(f"{op}: shared destination {dst!r} is not an int (a byte address)")
        if dst % 128:
            raise LayoutError(f"{op}: [smem_address_align] shared destination {dst} is not a multiple of 128 bytes")
        if (coords[0] * nb) % 16:
            raise LayoutError(f"{op}: [box_start_align] coords[0] = {coords[0]} {self.data_type} = {coords[0] * nb} B "
                              "is not a multiple of 16 B; cp.async.bulk.tensor faults (illegal instruction) on it")
        j = self.box_coords()
        ext = self.smem_box
        row = np.zeros(len(j), np.int64)
        for k in range(self.rank - 1, 0, -1):
            row = row * ext[k] + j[:, k]
        lin = j[:, 0] * nb + row * self.smem_row_bytes
        smem = self.swizzle_mode(int(dst) + lin)
        step = np.array([1 if (i == 0 and self.interleave == "NONE") else s for i, s in enumerate(self.element_strides)], np.int64)
        coord = np.asarray(coords, np.int64)[None, :] + j * step[None, :]
        inb = np.all((coord >= 0) & (coord < np.asarray(self.global_dim, np.int64)[None, :]), axis=1)
        strides = np.asarray((nb,) + self.global_strides, np.int64)
        gmem = coord @ strides
        return {"smem": smem, "coord": coord, "in_bounds": inb, "gmem": gmem}

    def smem_layout(self) -> ComposedLayout:
        """The layout one load writes: shared box coordinate (j0, j1, ..) -> shared element offset from ``dst``,
        ``Sw o (B0, B1, ..):(1, R, R*B1, ..)`` with ``R`` = smem_row_bytes / bytes and the swizzle on elements
        (valid for a ``dst`` on the swizzle repeat). Its rows are padded to the swizzle span:

        >>> print(TensorMap("FLOAT16", (64, 20), (128,), (8, 3), swizzle="128B").smem_layout())
        Sw<3,3,3> o _0 o (8,3):(1,64)
        """
        op = "TensorMap.smem_layout"
        self.check(op, "sm_100")
        mode = self.swizzle_mode
        if len(mode.swizzles) > 1:
            raise LayoutError(f"{op}: SWIZZLE_{self.swizzle} is two XORs; no single Swizzle<B,M,S> spells it")
        nb = self.bytes_per_element
        ext = self.smem_box
        strides = [1]
        acc = self.smem_row_bytes // nb
        for e in ext[1:]:
            strides.append(acc)
            acc *= e
        sw = mode.swizzles[0].to_elements(nb) if mode.swizzles else Swizzle(0, 0, 0)
        inner = Layout(ext, tuple(strides)) if len(ext) > 1 else Layout(ext[0], 1)
        return ComposedLayout(sw, 0, inner)

    def driver_args(self, global_address: int | None = None) -> dict[str, Any]:
        """The integer arguments of ``cuTensorMapEncodeTiled`` (enums as values), for ctypes or cuda.bindings."""

        def code(table: dict[str, int], name: str) -> int:
            return int(name[1:-1]) if name.startswith("<") else table[name]

        dt = self.data_type
        return {
            "tensorDataType": int(dt[1:-1]) if dt.startswith("<") else DATA_TYPES[dt][0],
            "tensorRank": self.rank,
            "globalAddress": self.global_address if global_address is None else int(global_address),
            "globalDim": list(self.global_dim),
            "globalStrides": list(self.global_strides),
            "boxDim": list(self.box_dim),
            "elementStrides": list(self.element_strides),
            "interleave": code(INTERLEAVES, self.interleave),
            "swizzle": int(self.swizzle[1:-1]) if self.swizzle.startswith("<") else SWIZZLE_MODES[self.swizzle].code,
            "l2Promotion": code(L2_PROMOTIONS, self.l2_promotion),
            "oobFill": code(OOB_FILLS, self.oob_fill),
        }

    def c_call(self, tensor_map: str = "&tmap", address: str = "gmem_ptr") -> str:
        """The ``cuTensorMapEncodeTiled`` call with these arguments, as C++ (enum names spelled out).

        >>> print(TensorMap("BFLOAT16", (64, 100), (128,), (64, 8), swizzle="128B").c_call())
        cuuint64_t gdim[2] = {64, 100};
        cuuint64_t gstride[1] = {128};
        cuuint32_t box[2] = {64, 8};
        cuuint32_t estride[2] = {1, 1};
        cuTensorMapEncodeTiled(&tmap, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, gmem_ptr, gdim, gstride, box, estride,
            CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_NONE,
            CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
        """

        def arr(t: str, name: str, vals: Sequence[int]) -> str:
            return f"{t} {name}[{max(len(vals), 1)}] = {{{', '.join(str(v) for v in vals)}}};"

        l2 = "NONE" if self.l2_promotion == "NONE" else f"L2_{self.l2_promotion}"
        return "\n".join([
            arr("cuuint64_t", "gdim", self.global_dim), arr("cuuint64_t", "gstride", self.global_strides),
            arr("cuuint32_t", "box", self.box_dim), arr("cuuint32_t", "estride", self.element_strides),
            f"cuTensorMapEncodeTiled({tensor_map}, CU_TENSOR_MAP_DATA_TYPE_{self.data_type}, {self.rank}, {address}, "
            "gdim, gstride, box, estride,",
            f"    CU_TENSOR_MAP_INTERLEAVE_{self.interleave}, CU_TENSOR_MAP_SWIZZLE_{self.swizzle}, "
            f"CU_TENSOR_MAP_L2_PROMOTION_{l2},",
            f"    CU_TENSOR_MAP_FLOAT_OOB_FILL_{self.oob_fill});",
        ])

    def __str__(self) -> str:
        return (f"TensorMap({self.data_type}, rank {self.rank}, global_dim {list(self.global_dim)}, "
                f"global_strides {list(self.global_strides)} B, box {list(self.box_dim)}, "
                f"element_strides {list(self.element_strides)}, interleave {self.interleave}, "
                f"swizzle {self.swizzle}, l2 {self.l2_promotion}, oob {self.oob_fill})")
