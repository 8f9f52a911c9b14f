"""The mma.sync / mma.sp fragment catalog: every shape x type of the PTX ISA as a TV layout.

Each operand fragment is a CuTe TV layout written by hand from the hardware's structure: a
warp's 32 lanes are ``(threadID_in_group, groupID) = (lane % 4, lane // 4)``, shape ``(4, 8)``;
the values a thread holds are a short tuple of modes, each moving one step along a matrix axis.
For ``mma.m16n8k16`` with ``.f16`` A (16x16, index ``m + 16*k``)::

    ((4,8),(2,2,2)):((32,1),(16,8,128))

``groupID`` walks the rows (stride 1), ``threadID_in_group`` walks column pairs (stride
``2*16``); the values step one column (16), eight rows (8) and eight columns (``8*16``). Lane 5
(thread coordinate (1, 1)), value 6 (value coordinate (0, 1, 1)) is ``32 + 1 + 8 + 128 = 169 =
9 + 16*10``: element ``A[9][10]``.

    >>> f = fragment("m16n8k16", "f16", "A")
    >>> f.coords(5, 6), f.num_registers, f.register(6), f.instruction
    ((9, 10), 4, (3, 0), 'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32')

None of these layouts is derived from :mod:`layoutalg.nvidia.common.ptx_formulas`; the test-suite
proves each equal to its PTX formula on every ``(lane, i)`` and, where CUTLASS has the same atom,
equal as a function to CuTe's ``ALayout`` / ``BLayout`` / ``CLayout``.

``mma.sync.m8n8k4`` with ``.f16`` is the odd one: a warp computes four independent 8x8x4
products, computation ``c`` on lanes ``4c..4c+3`` (low group) and ``16+4c..16+4c+3`` (high
group). Its thread mode is ``(4, 4, 2)`` = (lane in quad, computation, high group), and its
codomain stacks the four operand matrices: index ``= element + computation * rows * cols``.

Sparse ``mma.sp`` A fragments are layouts over the *compressed* ``M x K/2`` matrix (the non-zero
values the registers hold, in order); :meth:`Fragment.column_range` gives the span of A's columns
each comes from, which is what the ISA's ``firstcol .. lastcol`` formula states.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import cache
from typing import Any, cast
from collections.abc import Iterable

import numpy as np

from ...errors import LayoutError, guarded
from ..common.dtypes import dtype_name
from ...layout import Layout
from ..common.fragment import Fragment, parse_mnk, element_bits
from ..common.ptx_formulas import FORMULAS, METADATA_FORMULAS

__all__ = [
    "fragment",
    "sparse_fragment",
    "scale_fragment",
    "sparse_metadata",
    "catalog",
    "CatalogEntry",
    "ScaleFactorFragment",
    "SparseMetadata",
    "tile_fragment",
    "TiledFragment",
]

F8F6F4 = ("e4m3", "e5m2", "e3m2", "e2m3", "e2m1")

# ---------------------------------------------------------------------------------------------
# The TV layouts, by fragment key: ((thread shape, value shape), (thread stride, value stride)).
# Thread shape (4, 8) is (threadID_in_group, groupID). Written from the figures' structure, not
# from the formulas.
# ---------------------------------------------------------------------------------------------
_Q = (4, 8)
_C16 = ((_Q, (2, 2)), ((32, 1), (16, 8)))  # m16n8 accumulator: n = 2t (+1), m = g (+8)
_C8 = ((_Q, 2), ((16, 1), 8))  # m8n8 accumulator: n = 2t (+1), m = g

_TV: dict[str, tuple] = {
    # m8n8k4 .f16: thread (lane%4, computation, high group); codomain stacks 4 computations.
    "m8n8k4.f16.A.row": (((4, 4, 2), 4), ((1, 32, 4), 8)),
    "m8n8k4.f16.A.col": (((4, 4, 2), 4), ((8, 32, 4), 1)),
    "m8n8k4.f16.B.row": (((4, 4, 2), 4), ((8, 32, 4), 1)),
    "m8n8k4.f16.B.col": (((4, 4, 2), 4), ((1, 32, 4), 8)),
    "m8n8k4.f16.C.f16": (((4, 4, 2), 8), ((1, 64, 4), 8)),
    "m8n8k4.f16.C.f32": ((((2, 2), 4, 2), (2, 2, 2)), (((1, 16), 64, 4), (8, 2, 32))),
    # m8n8k4 .f64
    "m8n8k4.f64.A": ((_Q, 1), ((8, 1), 0)),
    "m8n8k4.f64.B": ((_Q, 1), ((8, 1), 0)),
    "m8n8k4.f64.C": _C8,
    # m8n8kK integer / single bit: each thread one k-run of a row (A) / column (B)
    "m8n8k16.A": ((_Q, 4), ((32, 1), 8)),
    "m8n8k16.B": ((_Q, 4), ((32, 1), 8)),
    "m8n8k16.C": _C8,
    "m8n8k32.A": ((_Q, (8,)), ((64, 1), (8,))),  # CuTe spells the value mode as a 1-tuple
    "m8n8k32.B": ((_Q, (8,)), ((64, 1), (8,))),
    "m8n8k32.C": _C8,
    "m8n8k128.A": ((_Q, 32), ((256, 1), 8)),
    "m8n8k128.B": ((_Q, 32), ((256, 1), 8)),
    "m8n8k128.C": _C8,
    # m16n8k4 (.tf32, .f64)
    "m16n8k4.A.32bit": ((_Q, 2), ((16, 1), 8)),
    "m16n8k4.B.32bit": ((_Q, 1), ((8, 1), 0)),
    # m16n8k8
    "m16n8k8.A.16bit": ((_Q, (2, 2)), ((32, 1), (16, 8))),
    "m16n8k8.A.32bit": ((_Q, (2, 2)), ((16, 1), (8, 64))),
    "m16n8k8.B.16bit": ((_Q, 2), ((16, 1), 8)),
    "m16n8k8.B.32bit": ((_Q, 2), ((8, 1), 32)),
    # m16n8k16
    "m16n8k16.A.16bit": ((_Q, (2, 2, 2)), ((32, 1), (16, 8, 128))),
    "m16n8k16.B.16bit": ((_Q, (2, 2)), ((16, 1), (8, 64))),
    "m16n8k16.A.f64": ((_Q, (2, 4)), ((16, 1), (8, 64))),
    "m16n8k16.B.f64": ((_Q, 4), ((8, 1), 32)),
    "m16n8k16.A.8bit": ((_Q, (4, 2)), ((64, 1), (16, 8))),
    "m16n8k16.B.8bit": ((_Q, 4), ((32, 1), 8)),
    # m16n8k32
    "m16n8k32.A.8bit": ((_Q, (4, 2, 2)), ((64, 1), (16, 8, 256))),
    "m16n8k32.B.8bit": ((_Q, (4, 2)), ((32, 1), (8, 128))),
    "m16n8k32.A.4bit": ((_Q, (8, 2)), ((128, 1), (16, 8))),
    "m16n8k32.B.4bit": ((_Q, 8), ((64, 1), 8)),
    # m16n8k64
    "m16n8k64.A.4bit": ((_Q, (8, 2, 2)), ((128, 1), (16, 8, 512))),
    "m16n8k64.B.4bit": ((_Q, (8, 2)), ((64, 1), (8, 256))),
    # m16n8k128 / m16n8k256 .b1
    "m16n8k128.A.1bit": ((_Q, (32, 2)), ((512, 1), (16, 8))),
    "m16n8k128.B.1bit": ((_Q, 32), ((256, 1), 8)),
    "m16n8k256.A.1bit": ((_Q, (32, 2, 2)), ((512, 1), (16, 8, 2048))),
    "m16n8k256.B.1bit": ((_Q, (32, 2)), ((256, 1), (8, 1024))),
    # sparse A over the compressed M x K/2 matrix; sparse B where it is not a dense B
    "sp.m16n8k16.A.16bit": ((_Q, (2, 2)), ((32, 1), (16, 8))),
    "sp.m16n8k32.A.16bit": ((_Q, (2, 2, 2)), ((32, 1), (16, 8, 128))),
    "sp.m16n8k32.B.16bit": ((_Q, (2, 4)), ((16, 1), (8, 64))),
    "sp.m16n8k8.A.32bit": ((_Q, 2), ((16, 1), 8)),
    "sp.m16n8k16.A.32bit": ((_Q, (2, 2)), ((16, 1), (8, 64))),
    "sp.m16n8k16.B.32bit": ((_Q, 4), ((8, 1), 32)),
    "sp.m16n8k32.A.8bit": ((_Q, (4, 2)), ((64, 1), (16, 8))),
    "sp.m16n8k64.A.8bit": ((_Q, (4, 2, 2)), ((64, 1), (16, 8, 256))),
    "sp.m16n8k64.B.8bit": ((_Q, (4, 4)), ((32, 1), (8, 128))),
    "sp.m16n8k64.A.4bit": ((_Q, (8, 2)), ((128, 1), (16, 8))),
    "sp.m16n8k128.A.4bit": ((_Q, (8, 2, 2)), ((128, 1), (16, 8, 512))),
    "sp.m16n8k128.B.4bit": ((_Q, (8, 4)), ((64, 1), (8, 256))),
}
for _s in ("m16n8k4", "m16n8k8", "m16n8k16", "m16n8k32", "m16n8k64", "m16n8k128", "m16n8k256"):
    _TV[f"{_s}.C"] = _C16

# sparse B fragments identical to a dense B of the same shape
_SPARSE_B_DENSE = {
    "sp.m16n8k16.B.16bit": "m16n8k16.B.16bit",
    "sp.m16n8k8.B.32bit": "m16n8k8.B.32bit",
    "sp.m16n8k32.B.8bit": "m16n8k32.B.8bit",
    "sp.m16n8k64.B.4bit": "m16n8k64.B.4bit",
}


def _bit_class(shape: str, dtype: str, kind: str | None) -> str:
    bits = element_bits(dtype, kind)
    if dtype == "f64":
        return "f64" if shape == "m16n8k16" else "32bit"
    return {32: "32bit", 16: "16bit", 8: "8bit", 4: "4bit", 1: "1bit"}[bits]


# ---------------------------------------------------------------------------------------------
# The catalog
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class CatalogEntry:
    """One catalog record: a fragment :func:`fragment` / :func:`sparse_fragment` / :func:`scale_fragment` builds.

    ``dtype`` is the multiplicand type (``.atype``) that selects the instruction; for C/D,
    ``ctype`` is the accumulator type of that operand. ``scale_vec`` is set on block-scaled
    kinds (and on their scale-factor operands ``"SFA"`` / ``"SFB"``, with ``stype``).
    """

    shape: str
    dtype: str
    operand: str
    alayout: str = "row"
    blayout: str = "col"
    ctype: str | None = None
    kind: str | None = None
    sparse: bool = False
    scale_vec: int | None = None
    stype: str | None = None
    ptx_section: str = ""
    min_sm: str = ""
    ptx_isa: str = ""
    instruction: str = ""

    def fragment(self):
        """Build this entry's fragment."""
        if self.operand in ("SFA", "SFB"):
            return scale_fragment(self.shape, cast(str, self.kind), self.operand[-1], scale_vec=self.scale_vec, stype=self.stype)
        if self.sparse:
            return sparse_fragment(self.shape, self.dtype, self.operand, ctype=self.ctype, kind=self.kind)
        return fragment(
            self.shape, self.dtype, self.operand, alayout=self.alayout if self.operand == "A" else None,
            blayout=self.blayout if self.operand == "B" else None, ctype=self.ctype, kind=self.kind,
        )


# (shape, dtypes, accumulators, min_sm, ptx_isa, kind, scale_vecs) -- from the ISA's mma syntax,
# "PTX ISA Notes" and "Target ISA Notes".
_DENSE = [
    ("m8n8k4", ("f16",), ("f16", "f32"), "sm_70", "6.4", None, ()),
    ("m8n8k4", ("f64",), ("f64",), "sm_80", "7.0", None, ()),
    ("m16n8k4", ("f64",), ("f64",), "sm_90", "7.8", None, ()),
    ("m16n8k8", ("f64",), ("f64",), "sm_90", "7.8", None, ()),
    ("m16n8k16", ("f64",), ("f64",), "sm_90", "7.8", None, ()),
    ("m16n8k8", ("f16",), ("f16", "f32"), "sm_75", "6.5", None, ()),
    ("m16n8k8", ("bf16",), ("f32",), "sm_80", "7.0", None, ()),
    ("m16n8k16", ("f16",), ("f16", "f32"), "sm_80", "7.0", None, ()),
    ("m16n8k16", ("bf16",), ("f32",), "sm_80", "7.0", None, ()),
    ("m16n8k4", ("tf32",), ("f32",), "sm_80", "7.0", None, ()),
    ("m16n8k8", ("tf32",), ("f32",), "sm_80", "7.0", None, ()),
    ("m8n8k16", ("s8", "u8"), ("s32",), "sm_75", "6.5", None, ()),
    ("m16n8k16", ("s8", "u8"), ("s32",), "sm_80", "7.0", None, ()),
    ("m16n8k32", ("s8", "u8"), ("s32",), "sm_80", "7.0", None, ()),
    ("m8n8k32", ("s4", "u4"), ("s32",), "sm_75", "6.5", None, ()),
    ("m16n8k32", ("s4", "u4"), ("s32",), "sm_80", "7.0", None, ()),
    ("m16n8k64", ("s4", "u4"), ("s32",), "sm_80", "7.0", None, ()),
    ("m8n8k128", ("b1",), ("s32",), "sm_75", "7.0", None, ()),
    ("m16n8k128", ("b1",), ("s32",), "sm_80", "7.0", None, ()),
    ("m16n8k256", ("b1",), ("s32",), "sm_80", "7.0", None, ()),
    ("m16n8k32", ("e4m3", "e5m2"), ("f32", "f16"), "sm_89", "8.4", None, ()),  # f16 accumulators: 8.7
    ("m16n8k16", ("e4m3", "e5m2"), ("f32", "f16"), "sm_89", "8.7", None, ()),
    ("m16n8k32", F8F6F4, ("f32", "f16"), "sm_120a", "8.7", "f8f6f4", ()),
    ("m16n8k32", F8F6F4, ("f32",), "sm_120a", "8.7", "mxf8f6f4", (1,)),
    ("m16n8k64", ("e2m1",), ("f32",), "sm_120a", "8.7", "mxf4", (2,)),
    ("m16n8k64", ("e2m1",), ("f32",), "sm_120a", "8.7", "mxf4nvf4", (2, 4)),
]

_SPARSE = [
    ("m16n8k16", ("f16",), ("f16", "f32"), "sm_80", "7.1", None, ()),
    ("m16n8k16", ("bf16",), ("f32",), "sm_80", "7.1", None, ()),
    ("m16n8k32", ("f16",), ("f16", "f32"), "sm_80", "7.1", None, ()),
    ("m16n8k32", ("bf16",), ("f32",), "sm_80", "7.1", None, ()),
    ("m16n8k8", ("tf32",), ("f32",), "sm_80", "7.1", None, ()),
    ("m16n8k16", ("tf32",), ("f32",), "sm_80", "7.1", None, ()),
    ("m16n8k32", ("s8", "u8"), ("s32",), "sm_80", "7.1", None, ()),
    ("m16n8k64", ("s8", "u8"), ("s32",), "sm_80", "7.1", None, ()),
    ("m16n8k64", ("s4", "u4"), ("s32",), "sm_80", "7.1", None, ()),
    ("m16n8k128", ("s4", "u4"), ("s32",), "sm_80", "7.1", None, ()),
    ("m16n8k64", ("e4m3", "e5m2"), ("f32", "f16"), "sm_89", "8.4", None, ()),
    ("m16n8k64", F8F6F4, ("f32", "f16"), "sm_120a", "8.7", "f8f6f4", ()),
    ("m16n8k64", F8F6F4, ("f32",), "sm_120a", "8.7", "mxf8f6f4", (1,)),
    ("m16n8k128", ("e2m1",), ("f32",), "sm_120a", "8.7", "mxf4", (2,)),
    ("m16n8k128", ("e2m1",), ("f32",), "sm_120a", "8.7", "mxf4nvf4", (2, 4)),
]

# Sparse e4m3/e5m2 with .f16 accumulators (no .kind): mma.sp "PTX ISA Notes": "Support for shape .m16n8k32
# and .f16 dtype/ctype with .e4m3/.e5m2 alternate floating point type mma operation introduced in PTX ISA
# version 8.7"; "Target ISA Notes": "... requires sm_120" (section 9.7.14.6.3, PTX ISA 9.1). The dense mma
# has no such target note (sm_89). Seen on an H100: ptxas (CUDA 13, sm_90a) rejects the sparse form with
# "mma with F16 accumulator and F8 floating point type not supported" while the dense forms run.
_SPARSE_F8_F16ACC = ("sm_120", "8.7")

# scale types by kind and scale_vec ("Valid combinations of .scale_vec_size and .kind")
_STYPES = {("mxf8f6f4", 1): ("ue8m0",), ("mxf4", 2): ("ue8m0",), ("mxf4nvf4", 2): ("ue8m0",),
           ("mxf4nvf4", 4): ("ue8m0", "ue4m3")}


def _instruction(shape, dtype, ctype, kind, sparse, alayout="row", blayout="col", scale_vec=None, stype=None):
    # mma.sp syntax: the .kind forms exist only as mma.sp::ordered_metadata (".spvariant =
    # {.sp::ordered_metadata}"); the others take .sp or .sp::ordered_metadata and are spelled .sp here.
    head = ("mma.sp::ordered_metadata.sync.aligned" if kind else "mma.sp.sync.aligned") if sparse else "mma.sync.aligned"
    parts = [head, shape, alayout, blayout]
    if kind:
        parts.append(f"kind::{kind}")
    if scale_vec:
        parts += ["block_scale", f"scale_vec::{scale_vec}X"]
    parts += [ctype, dtype, dtype, ctype]
    if dtype == "b1":
        parts += ["xor", "popc"]
    if scale_vec:
        parts.append(stype or "ue8m0")
    return ".".join(parts)


def _section(shape, dtype, sparse, kind):
    try:
        return FORMULAS[_formula_key(shape, dtype, "A", None, sparse, "row", kind=kind)].section
    except KeyError:  # pragma: no cover - every catalog shape has an A formula
        return ""


@cache
def catalog() -> tuple:
    """Every fragment of the catalog as :class:`CatalogEntry` records (a tuple, stable order).

    >>> entries = catalog()
    >>> sum(1 for e in entries if e.shape == "m8n8k4" and e.dtype == "f16")
    8
    >>> any(e.operand == "SFA" and e.kind == "mxf4nvf4" and e.scale_vec == 4 for e in entries)
    True
    """
    out: list[CatalogEntry] = []
    for sparse, families in ((False, _DENSE), (True, _SPARSE)):
        for shape, dtypes, accs, sm, isa, kind, vecs in families:
            for dtype in dtypes:
                sec = _section(shape, dtype, sparse, kind)
                d_acc = "f32" if "f32" in accs else accs[0]
                common = dict(shape=shape, dtype=dtype, kind=kind, sparse=sparse, min_sm=sm, ptx_section=sec)
                vec0 = vecs[0] if vecs else None
                instr = _instruction(shape, dtype, d_acc, kind, sparse, scale_vec=vec0)
                if shape == "m8n8k4" and dtype == "f16":
                    for lay in ("row", "col"):
                        out.append(CatalogEntry(operand="A", alayout=lay, ptx_isa=isa,
                                                instruction=_instruction(shape, dtype, d_acc, kind, sparse, lay, "col"),
                                                **common))
                    for lay in ("row", "col"):
                        out.append(CatalogEntry(operand="B", blayout=lay, ptx_isa=isa,
                                                instruction=_instruction(shape, dtype, d_acc, kind, sparse, "row", lay),
                                                **common))
                else:
                    for op in ("A", "B"):
                        out.append(CatalogEntry(operand=op, ptx_isa=isa, instruction=instr, scale_vec=vec0, **common))
                for acc in accs:
                    acc_isa, acc_common = isa, common
                    if dtype in ("e4m3", "e5m2") and acc == "f16" and kind is None:
                        # mma: ".f16 dtype/ctype with .e4m3/.e5m2 ... introduced in PTX ISA version 8.7";
                        # mma.sp adds to its Target ISA Notes "... requires sm_120" (see _SPARSE_F8_F16ACC).
                        if sparse:
                            acc_isa, acc_common = _SPARSE_F8_F16ACC[1], {**common, "min_sm": _SPARSE_F8_F16ACC[0]}
                        elif shape == "m16n8k32":
                            acc_isa = "8.7"
                    for op in ("C", "D"):
                        out.append(CatalogEntry(operand=op, ctype=acc, ptx_isa=acc_isa, scale_vec=vec0,
                                                instruction=_instruction(shape, dtype, acc, kind, sparse,
                                                                         scale_vec=vec0),
                                                **acc_common))
                for vec in vecs:
                    for stype in _STYPES[(cast(str, kind), vec)]:
                        v_isa = "9.1" if (kind == "mxf4nvf4" and vec == 4 and stype == "ue8m0") else isa
                        for op in ("SFA", "SFB"):
                            out.append(CatalogEntry(
                                operand=op, scale_vec=vec, stype=stype, ptx_isa=v_isa,
                                instruction=_instruction(shape, dtype, "f32", kind, sparse, scale_vec=vec, stype=stype),
                                **{**common, "ptx_section": "9.7.14.3 Block Scaling for mma.sync"},
                            ))
    return tuple(out)


# ---------------------------------------------------------------------------------------------
# Lookup
# ---------------------------------------------------------------------------------------------
def _formula_key(shape, dtype, operand, acc, sparse, alayout="row", blayout="col", kind=None) -> str:
    if operand in ("C", "D"):
        if shape == "m8n8k4":
            return f"m8n8k4.f16.C.{acc}" if dtype == "f16" else "m8n8k4.f64.C"
        return f"{shape}.C"
    if shape == "m8n8k4":
        if dtype == "f16":
            return f"m8n8k4.f16.{operand}.{alayout if operand == 'A' else blayout}"
        return f"m8n8k4.f64.{operand}"
    if shape.startswith("m8n8"):
        return f"{shape}.{operand}"
    key = f"{shape}.{operand}.{_bit_class(shape, dtype, kind)}"
    if sparse:
        key = "sp." + key
        key = _SPARSE_B_DENSE.get(key, key)
    return key


def _matching(shape, sparse):
    return [e for e in catalog() if e.shape == shape and e.sparse == sparse and e.operand not in ("SFA", "SFB")]


def _valid_list(entries: Iterable[CatalogEntry]) -> str:
    seen = []
    for e in entries:
        s = f"{e.dtype}/{e.operand}" + (f"/{e.ctype}" if e.ctype else "") + (f"/kind::{e.kind}" if e.kind else "")
        if s not in seen:
            seen.append(s)
    return ", ".join(seen)


def _resolve(shape, dtype, operand, alayout, blayout, ctype, kind, sparse, op_name):
    parse_mnk(shape)
    operand = str(operand).upper()
    if operand not in ("A", "B", "C", "D"):
        raise LayoutError(f"{op_name}: operand {operand!r} is not one of 'A', 'B', 'C', 'D'")
    dtype = dtype_name(dtype, op=op_name)
    if ctype is not None:
        ctype = dtype_name(ctype, op=f"{op_name}: ctype")
    # .alayout chooses among the A fragments of m8n8k4 .f16, .blayout among its B fragments; anywhere else
    # only the .row.col every other entry has is accepted (another value would be dropped)
    chooses = shape == "m8n8k4" and dtype == "f16"
    for name, value, default, op_of in (("alayout", alayout, "row", "A"), ("blayout", blayout, "col", "B")):
        if value is not None and value not in ("row", "col"):
            raise LayoutError(f"{op_name}: {name}={value!r} is not 'row' or 'col'")
        if value is not None and value != default and not (chooses and operand == op_of):
            raise LayoutError(f"{op_name}: {name}={value!r} chooses the {op_of} fragment of m8n8k4 .f16 only; "
                              f"{shape} .{dtype} operand {operand} is listed under .row.col (leave {name} out)")
    alayout = alayout or "row"
    blayout = blayout or "col"
    entries = _matching(shape, sparse)
    if not entries:
        shapes = sorted({e.shape for e in catalog() if e.sparse == sparse})
        raise LayoutError(f"{op_name}: no {'mma.sp' if sparse else 'mma.sync'} shape {shape!r}; valid shapes: {shapes}")
    input_types = {e.dtype for e in entries}
    if operand in ("C", "D") and dtype not in input_types:
        # fragment("m16n8k8", "f32", "C"): the type named is the accumulator
        accs = {e.ctype for e in entries if e.ctype}
        if dtype in accs:
            ctype, dtype = dtype, next(e.dtype for e in entries if e.ctype == dtype)
    # kind: infer where only one kind fits the type
    kinds = {e.kind for e in entries if e.dtype == dtype}
    if kind is None and None not in kinds and len(kinds) >= 1:
        kind = "f8f6f4" if "f8f6f4" in kinds else sorted(k for k in kinds if k)[0]
    if kind is not None:
        kind = str(kind).replace("kind::", "")
    cands = [e for e in entries if e.dtype == dtype and e.operand == operand and e.kind == kind]
    if shape == "m8n8k4" and dtype == "f16":
        if operand == "A":
            cands = [e for e in cands if e.alayout == alayout]
        elif operand == "B":
            cands = [e for e in cands if e.blayout == blayout]
    elif (alayout, blayout) != ("row", "col"):
        raise LayoutError(
            f"{op_name}: {shape} .{dtype} takes only .row.col (alayout='row', blayout='col'); "
            f"got alayout={alayout!r}, blayout={blayout!r}"
        )
    if operand in ("C", "D"):
        if ctype is None:
            acc_types = [e.ctype for e in cands]
            ctype = "f32" if "f32" in acc_types else (acc_types[0] if acc_types else None)
        cands = [e for e in cands if e.ctype == ctype]
    elif ctype is not None and cands:
        # A/B: the layout does not depend on the accumulator, the instruction does: name it
        valid_accs = sorted({e.ctype for e in entries if e.dtype == dtype and e.kind == kind and e.ctype})
        if ctype not in valid_accs:
            raise LayoutError(f"{op_name}: ctype={ctype!r} is not an accumulator of {'sparse ' if sparse else ''}"
                              f"{shape} .{dtype}; valid: {', '.join(valid_accs)}")
        e = cands[0]
        return dataclasses.replace(e, ctype=ctype, instruction=_instruction(
            shape, dtype, ctype, kind, sparse, e.alayout, e.blayout, e.scale_vec, e.stype))
    if not cands:
        raise LayoutError(
            f"{op_name}: no {'sparse ' if sparse else ''}{shape} fragment for dtype={dtype!r}, operand={operand!r}, "
            f"ctype={ctype!r}, kind={kind!r}, alayout={alayout!r}, blayout={blayout!r}; valid "
            f"(dtype/operand/ctype/kind): {_valid_list(entries)}"
        )
    return cands[0]


@cache
def _build(entry: CatalogEntry, operand: str) -> Fragment:
    shape, dtype, kind = entry.shape, entry.dtype, entry.kind
    M, N, K = parse_mnk(shape)
    fkey = _formula_key(shape, dtype, operand, entry.ctype, entry.sparse, entry.alayout, entry.blayout, kind)
    tv_shape, tv_stride = _TV[fkey]  # same key, independent table
    layout = Layout(tv_shape, tv_stride)
    if operand == "A":
        codomain = (M, K // 2) if entry.sparse else (M, K)
        bits = element_bits(dtype, kind)
    elif operand == "B":
        codomain, bits = (N, K), element_bits(dtype, kind)
    else:
        codomain, bits = (M, N), element_bits(cast(str, entry.ctype))
    batch, batch_name = (4, "computation") if (shape == "m8n8k4" and dtype == "f16") else (1, None)
    variant: list[tuple[str, Any]] = []
    if shape == "m8n8k4" and dtype == "f16":
        variant += [("alayout", entry.alayout), ("blayout", entry.blayout)]
    if entry.ctype:
        variant.append(("ctype", entry.ctype))
    if kind:
        variant.append(("kind", kind))
    if entry.sparse:
        variant.append(("sparse", True))
    f = FORMULAS[fkey]
    return Fragment(
        instruction=entry.instruction,
        shape=shape,
        operand=operand,
        dtype=cast(str, entry.ctype) if operand in ("C", "D") else dtype,
        layout=layout,
        codomain=codomain,
        formula_key=fkey,
        element_bits=bits,
        batch=batch,
        batch_name=batch_name,
        sparse=entry.sparse and operand == "A",
        variant=tuple(variant),
        ptx_section=f.section,
        figure=f.figure,
        min_sm=entry.min_sm,
        ptx_isa=entry.ptx_isa,
    )


@guarded
def fragment(shape: str, dtype: str, operand: str, *, alayout: str | None = None, blayout: str | None = None,
             ctype: str | None = None, kind: str | None = None) -> Fragment:
    """``mma.sync`` operand fragment: TV layout ``(lane, i) -> element`` of operand A, B, C or D.

    ``shape`` is spelled as in PTX (``"m16n8k16"``), ``dtype`` is the multiplicand type
    (``"f16"``, ``"tf32"``, ``"e4m3"``, ... or CuTe's ``"half_t"``, ``"tfloat32_t"``,
    ``"float_e4m3_t"``: :func:`layoutalg.nvidia.common.dtypes.dtype_name`), ``kind`` one of
    ``"f8f6f4"``, ``"mxf8f6f4"``, ``"mxf4"``, ``"mxf4nvf4"`` (inferred for the types that need it).

    The accumulator rule, the same across the catalog (``wgmma_fragments.fragment`` too): for C/D,
    ``dtype`` names the multiplicand when the instruction has a multiplicand of that name, else the
    accumulator; ``ctype`` picks the accumulator, which defaults to ``f32`` where the instruction
    allows it (else its only one: ``s32`` for integers, ``f64`` for f64). With operand A or B,
    ``ctype`` names the instruction (the layout does not depend on it). ``alayout`` (A) / ``blayout`` (B) choose
    among the ``m8n8k4`` ``.f16`` fragments; every other shape is ``.row.col``, and naming a layout
    where it chooses nothing is an error.

    Raises :class:`LayoutError` listing the valid combinations when there is no such fragment.

    >>> fragment("m8n8k4", "f16", "A", alayout="col").coords(17, 2)
    (6, 1)
    >>> fragment("m16n8k8", "f16", "C", ctype="f16").num_registers
    2
    """
    entry = _resolve(shape, dtype, operand, alayout, blayout, ctype, kind, False, "fragment")
    return _build(entry, str(operand).upper())


@guarded
def sparse_fragment(shape: str, dtype: str, operand: str, *, ctype: str | None = None,
                    kind: str | None = None) -> Fragment:
    """``mma.sp`` operand fragment; A is a layout over the compressed ``M x K/2`` matrix.

    >>> a = sparse_fragment("m16n8k16", "f16", "A")
    >>> a.coords(5, 3), a.column_range(5, 3)
    ((9, 3), (4, 7))
    """
    entry = _resolve(shape, dtype, operand, None, None, ctype, kind, True, "sparse_fragment")
    return _build(entry, str(operand).upper())


# ---------------------------------------------------------------------------------------------
# Sparse metadata and block-scale factors
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True, repr=False)
class SparseMetadata(Fragment):
    """The ``mma.sp`` metadata register ``e``: ``(lane, field) -> (row, chunk)`` of A, by sparsity selector.

    ``e`` is one ``.b32`` register per lane, read as eight 4-bit *fields*: field ``j`` (bits
    ``[4j+3 .. 4j]``) holds the positions of the non-zeros of one *chunk* of a row of the
    uncompressed ``M x K`` matrix A -- two 2-bit indices for the 2:4 types (chunk of 4), one 4-bit
    index for ``.tf32``'s 1:2 (chunk of 2), two 2-bit indices of 2-wide sub-chunks for the pair-wise
    4:8 of 4-bit types (chunk of 8) ("Sparse matrix storage", 9.7.14.6.1). The layout maps
    ``(lane, j)`` to ``row + M * chunk`` over the ``M x K/chunk`` matrix of chunks.

    In each group of four lanes only ``threads_per_group`` lanes are read: one, picked by selector
    0..3; a pair, selector 0 -> lanes 0,1 and 1 -> lanes 2,3; or all four (selector 0 only). As in
    CuTe's ``ELayout``, the lanes the selector chooses between are a stride-0 (broadcast) mode: the
    layout says what a lane supplies *if read*; :meth:`reading_lanes` says which are.

    Two families, read off the ISA's metadata figures as recorded on an H100 and equal as functions
    to CUTLASS's ELayouts (``GMMA::ELayout_64x32`` / ``64x16`` / ``64x64`` per warp,
    ``SM120_SPARSE_16x8x64_TN`` / ``16x8x128_TN_VS``), with ``g = lane >> 2``:

    * 16-bit and ``.tf32`` (k-split): fields 0-3 are row ``g``, fields 4-7 row ``g + 8``, chunks
      ``j % 4`` -- plus 4 on the second lane of a selected pair (``m16n8k32`` f16, ``m16n8k16`` tf32).
    * 8-bit and 4-bit (row-split): field ``j`` is chunk ``j`` of row ``g + 8*(lane & 1)`` -- plus
      8 on lanes 2, 3 of the group when all four are read (``m16n8k64`` 8-bit, ``m16n8k128`` 4-bit).

    >>> e = sparse_metadata("m16n8k32", "f16", selector=1)
    >>> e.reading_lanes()[:4], e.coords(3, 5), e.chunk_columns(3, 5)
    ((2, 3, 6, 7), (8, 5), (20, 23))
    """

    selector: int = 0
    threads_per_group: int = 1
    chunk: int = 4

    @property
    def valid_selectors(self) -> tuple:
        """Sparsity-selector values the ISA allows for this shape and type."""
        return tuple(range(4 // self.threads_per_group))

    def lanes(self, selector: int | None = None) -> tuple:
        """Lanes whose metadata register is read for ``selector`` (default: this fragment's)."""
        selector = self.selector if selector is None else selector
        if selector not in self.valid_selectors:
            raise LayoutError(
                f"sparse_metadata: selector {selector} invalid for {self.shape} .{self.dtype}; "
                f"valid: {self.valid_selectors}"
            )
        t = self.threads_per_group
        return tuple(q * 4 + selector * t + j for q in range(8) for j in range(t))

    def reading_lanes(self) -> tuple:
        """Lanes whose ``e`` the instruction reads with this fragment's selector."""
        return self.lanes(self.selector)

    def field_bits(self, j: int) -> tuple[int, int]:
        """``(low, high)`` bit of field ``j`` in the register: ``(4j, 4j + 3)``."""
        self._check_value(j, "field_bits")
        return 4 * j, 4 * j + 3

    def chunk_columns(self, lane: int, j: int) -> tuple[int, int]:
        """``(firstcol, lastcol)`` of A (uncompressed) that field ``j`` of ``lane`` describes."""
        _, c = self.coords(lane, j)
        return c * self.chunk, c * self.chunk + self.chunk - 1

    def encode(self, positions) -> int:
        """The 4-bit field for a chunk whose non-zeros sit at ``positions`` (columns within the chunk).

        2:4: two positions ``p0 < p1`` -> ``p0 | p1 << 2``. ``.tf32`` 1:2: one position ``p`` -> the
        indices of its two 16-bit halves, ``2p | (2p + 1) << 2`` (``0b0100`` or ``0b1110``). 4:8:
        four positions forming two aligned pairs ``q0 < q1`` -> ``q0 | q1 << 2``. The fields of
        ``mma.sp::ordered_metadata`` must be in this increasing order.

        >>> sparse_metadata("m16n8k16", "f16").encode((1, 3)), sparse_metadata("m16n8k8", "tf32").encode((1,))
        (13, 14)
        """
        pos = sorted(int(p) for p in positions)
        w = self.chunk
        idx: tuple[int, ...]
        if w == 2 and len(pos) == 1 and pos[0] in (0, 1):
            idx = (2 * pos[0], 2 * pos[0] + 1)
        elif w == 4 and len(pos) == 2 and pos[0] != pos[1] and pos[0] >= 0 and pos[1] < 4:
            idx = tuple(pos)
        elif (w == 8 and len(pos) == 4 and pos[0] % 2 == 0 and pos[1] == pos[0] + 1 and pos[2] % 2 == 0
              and pos[3] == pos[2] + 1 and pos[0] != pos[2] and pos[3] < 8):
            idx = (pos[0] // 2, pos[2] // 2)
        else:
            need = {2: "one position in 0..1", 4: "two distinct positions in 0..3",
                    8: "two aligned pairs of positions in 0..7"}[w]
            raise LayoutError(f"SparseMetadata.encode: positions {tuple(positions)} invalid for a chunk of {w} "
                              f"({self.shape} .{self.dtype}); need {need}")
        return idx[0] | idx[1] << 2

    @property
    def formula(self):
        """The field-to-chunk formula (:data:`~layoutalg.nvidia.common.ptx_formulas.METADATA_FORMULAS`)."""
        return METADATA_FORMULAS[self.formula_key]

    def verify_eval(self, lane: Any, i: Any) -> tuple:
        """``(row, firstcol, lastcol)`` of the chunk field ``i`` describes, from the layout alone."""
        r, c = super().verify_eval(lane, i)
        return r, c * self.chunk, c * self.chunk + self.chunk - 1

    def verify_symbolic(self, lane: Any = None, i: Any = None) -> tuple:
        r, c = super().verify_symbolic(lane, i)
        return r, c * self.chunk, c * self.chunk + self.chunk - 1


# (shape, class) -> (thread shape, thread stride, value shape, value stride, lanes per group, chunk width).
# Written from the structure (see SparseMetadata), independently of ptx_formulas' "sp.meta.*".
_META = {
    ("m16n8k16", "16bit"): ((4, 8), (0, 1), (4, 2), (16, 8), 1, 4),
    ("m16n8k32", "16bit"): ((2, 2, 8), (64, 0, 1), (4, 2), (16, 8), 2, 4),
    ("m16n8k8", "32bit"): ((4, 8), (0, 1), (4, 2), (16, 8), 1, 2),
    ("m16n8k16", "32bit"): ((2, 2, 8), (64, 0, 1), (4, 2), (16, 8), 2, 2),
    ("m16n8k32", "8bit"): ((2, 2, 8), (8, 0, 1), 8, 16, 2, 4),
    ("m16n8k64", "8bit"): ((2, 2, 8), (8, 128, 1), 8, 16, 4, 4),
    ("m16n8k64", "4bit"): ((2, 2, 8), (8, 0, 1), 8, 16, 2, 8),
    ("m16n8k128", "4bit"): ((2, 2, 8), (8, 128, 1), 8, 16, 4, 8),
}


@guarded
def sparse_metadata(shape: str, dtype: str, *, selector: int = 0, kind: str | None = None) -> SparseMetadata:
    """The metadata register fragment of ``mma.sp`` ``shape`` ``.dtype`` for sparsity ``selector``.

    Raises :class:`LayoutError` for a shape/type ``mma.sp`` lacks or a selector the ISA forbids
    (``m16n8k16`` f16 and ``m16n8k8`` tf32 take 0..3; the pair shapes 0..1; the rest 0 only).

    >>> sparse_metadata("m16n8k32", "f16").lanes(1)[:4]
    (2, 3, 6, 7)
    >>> e = sparse_metadata("m16n8k64", "s8")
    >>> e.coords(6, 3), e.chunk_columns(6, 3), e.field_bits(3)
    ((1, 11), (44, 47), (12, 15))
    """
    entry = _resolve(shape, dtype, "A", None, None, None, kind, True, "sparse_metadata")
    cls = _bit_class(shape, entry.dtype, entry.kind)
    tshape, tstride, vshape, vstride, per_group, w = _META[(shape, cls)]
    M, _, K = parse_mnk(shape)
    fkey = f"sp.meta.{shape}.{cls}"
    f = METADATA_FORMULAS[fkey]
    variant = [("selector", selector)] + ([("kind", entry.kind)] if entry.kind else [])
    meta = SparseMetadata(
        instruction=entry.instruction, shape=shape, operand="E", dtype=entry.dtype,
        layout=Layout((tshape, vshape), (tstride, vstride)), codomain=(M, K // w), formula_key=fkey,
        element_bits=4, variant=tuple(variant), ptx_section=f.section, figure=f.figure, min_sm=entry.min_sm,
        ptx_isa=entry.ptx_isa,
        notes="fields read off the ISA's metadata figures: H100 probe + CUTLASS ELayout (see SparseMetadata)",
        selector=selector, threads_per_group=per_group, chunk=w,
    )
    meta.lanes(selector)  # LayoutError for a selector the ISA forbids
    return meta


@dataclass(frozen=True, repr=False)
class ScaleFactorFragment(Fragment):
    """Block-scale factors of ``mma.sync ... .block_scale``: ``(lane, i) -> scale_A[m][i]`` / ``scale_B[i][n]``.

    The layout lists, for every lane, the scale element it supplies *if selected*; the
    ``thread_id`` selector picks which lanes are read (:meth:`reading_lanes`) and the
    ``byte_id`` selector where the ``scale_vec`` bytes start in the 32-bit register
    (:meth:`register_byte`). As in CUTLASS's ``SFALayout``, the lane pair that ``thread_id`` chooses
    between is a stride-0 (broadcast) mode.
    """

    scale_vec: int = 1
    thread_id: int = 0
    byte_id: int = 0

    def reading_lanes(self) -> tuple:
        """Lanes whose scale register the instruction reads for this ``thread_id``."""
        if self.operand == "SFA":
            return tuple(4 * g + 2 * self.thread_id + j for g in range(8) for j in range(2))
        return tuple(4 * g + self.thread_id for g in range(8))

    def register_byte(self, i: int) -> int:
        """Byte of the scale register holding value ``i``: ``byte_id + i``."""
        self._check_value(i, "register_byte")
        return self.byte_id + i


_VALID_BYTE_IDS = {1: (0, 1, 2, 3), 2: (0, 2), 4: (0,)}


def scale_fragment(shape: str, kind: str, operand: str, *, scale_vec: int | None = None, stype: str | None = None,
                   thread_id: int = 0, byte_id: int = 0) -> ScaleFactorFragment:
    """Scale-factor fragment of a block-scaled ``mma.sync`` (``operand`` ``"A"`` or ``"B"``).

    scale_A is ``M x scale_vec`` (one factor per row and K-chunk), scale_B is ``scale_vec x N``.

    >>> sf = scale_fragment("m16n8k64", "mxf4nvf4", "A", scale_vec=4)
    >>> sf.coords(5, 3), sf.reading_lanes()[:4]
    ((9, 3), (0, 1, 4, 5))
    """
    kind = str(kind).replace("kind::", "")
    if stype is not None:
        stype = dtype_name(stype, op="scale_fragment: stype")
    valid = {(e.shape, e.kind, e.scale_vec, e.stype) for e in catalog() if e.operand == "SFA"}
    if scale_vec is None:
        scale_vec = {"mxf8f6f4": 1, "mxf4": 2}.get(kind)
    stypes = [s for (sh, k, v, s) in valid if (sh, k, v) == (shape, kind, scale_vec)]
    if scale_vec is None or not stypes or (stype is not None and stype not in stypes):
        raise LayoutError(
            f"scale_fragment: no block-scaled mma.sync {shape} kind::{kind} scale_vec={scale_vec} stype={stype}; "
            f"valid (shape, kind, scale_vec, stype): {sorted(valid, key=str)}"
        )
    stype = stype or stypes[0]
    operand = str(operand).upper().replace("SF", "")
    if operand not in ("A", "B"):
        raise LayoutError(f"scale_fragment: operand {operand!r} is not 'A' or 'B'")
    max_tid = 1 if operand == "A" else 3
    if not 0 <= thread_id <= max_tid:
        raise LayoutError(f"scale_fragment: thread_id {thread_id} out of range [0, {max_tid}] for scale_{operand}")
    if byte_id not in _VALID_BYTE_IDS[scale_vec]:
        raise LayoutError(
            f"scale_fragment: byte_id {byte_id} invalid for scale_vec::{scale_vec}X; valid: {_VALID_BYTE_IDS[scale_vec]}"
        )
    M, N, _ = parse_mnk(shape)
    V = scale_vec
    if operand == "A":
        # lane = (lane&1: rows +8, (lane>>1)&1: the thread-id pair (broadcast), groupID: row)
        layout = Layout(((2, 2, 8), V), ((8, 0, 1), M))
        codomain, fkey = (M, V), "scale.A"
    else:
        layout = Layout(((4, 8), V), ((0, 1), N))
        codomain, fkey = (N, V), "scale.B"
    f = FORMULAS[fkey]
    return ScaleFactorFragment(
        instruction=_instruction(shape, "e2m1" if "mxf4" in kind else "e4m3", "f32", kind, False, scale_vec=V,
                                 stype=stype),
        shape=shape, operand="SF" + operand, dtype=stype, layout=layout, codomain=codomain, formula_key=fkey,
        element_bits=8, variant=(("kind", kind), ("scale_vec", V), ("stype", stype)), ptx_section=f.section,
        figure=f.figure, min_sm="sm_120a", ptx_isa="9.1" if (kind, V, stype) == ("mxf4nvf4", 4, "ue8m0") else "8.7",
        notes="selector semantics cross-checked with CUTLASS SM120 SFALayout/SFBLayout",
        scale_vec=V, thread_id=thread_id, byte_id=byte_id,
    )


# ---------------------------------------------------------------------------------------------
# Partitioning a CTA tile over warps and repeats
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class TiledFragment:
    """An atom fragment tiled over a larger tile: ``layout((lane, warp...), (value, repeat...))`` is the
    element's column-major index in the tile (same orientation as the atom's codomain)."""

    atom: Fragment
    tile: tuple
    warps: tuple
    layout: Layout

    @property
    def num_threads(self) -> int:
        return self.atom.num_threads * self.warps[0] * self.warps[1]

    @property
    def num_values(self) -> int:
        return int(self.layout[1].size())

    def elements(self, thread: int) -> list:
        """``(row, col)`` (PTX orientation) of every element thread ``thread`` holds, in value order."""
        if not 0 <= thread < self.num_threads:
            raise LayoutError(f"TiledFragment.elements: thread {thread} out of range [0, {self.num_threads})")
        tab = np.asarray(self.layout.table(), dtype=np.int64)
        idx = tab[thread + self.num_threads * np.arange(self.num_values)]
        t0 = self.tile[0]
        x, y = idx % t0, idx // t0
        if self.atom.operand in ("B", "SFB"):
            x, y = y, x
        return [(int(a), int(b)) for a, b in zip(x, y)]


@guarded
def tile_fragment(atom: Fragment, tile: tuple, warps: tuple = (1, 1)) -> TiledFragment:
    """Tile ``atom`` over ``tile`` (in the atom's codomain orientation: MxN for C, MxK for A, NxK for B).

    ``warps = (W0, W1)`` warps are laid out column-major over neighbouring atoms; each warp then
    repeats its atom ``R = tile / (atom * warps)`` times along each axis. The result maps
    ``((lane, w0, w1), (value, r0, r1))`` to the tile index ``x + tile[0]*y``, built with
    :func:`layoutalg.composition` (the atom embedded in the tile) and concatenated modes.

    >>> tf = tile_fragment(fragment("m16n8k16", "f16", "C"), (64, 64))
    >>> tf.num_values, tf.elements(5)[:4]
    (128, [(1, 2), (1, 3), (9, 2), (9, 3)])
    """
    from ...algebra import composition
    from ...layout import make_layout

    if atom.batch != 1:
        raise LayoutError(f"tile_fragment: {atom.name} stacks {atom.batch} matrices; tile a single-matrix fragment")
    d0, d1 = atom.codomain
    for what, pair in (("tile", tile), ("warps", warps)):
        if not (isinstance(pair, (tuple, list)) and len(pair) == 2
                and all(isinstance(x, int) and not isinstance(x, bool) and x > 0 for x in pair)):
            raise LayoutError(f"tile_fragment: {what}={pair!r} is not a pair of positive ints")
    T0, T1 = tile
    W0, W1 = warps
    if T0 % (d0 * W0) or T1 % (d1 * W1):
        raise LayoutError(
            f"tile_fragment: tile {tile} is not a multiple of atom {(d0, d1)} x warps {warps} "
            f"(needs tile[0] % {d0 * W0} == 0 and tile[1] % {d1 * W1} == 0)"
        )
    R0, R1 = T0 // (d0 * W0), T1 // (d1 * W1)
    embed = Layout((d0, d1), (1, T0))  # atom element (x, y) -> tile index, for the atom at the origin
    atom_in_tile = composition(embed, atom.layout)
    thr = make_layout(atom_in_tile[0], Layout((W0, W1), (d0, d1 * T0)))
    val = make_layout(atom_in_tile[1], Layout((R0, R1), (d0 * W0, d1 * W1 * T0)))
    return TiledFragment(atom, (T0, T1), (W0, W1), make_layout(thr, val))
