"""Fragment: which matrix element each thread of a warp (or warpgroup) holds in its registers.

A tensor-core instruction spreads each operand matrix over the registers of the threads that
execute it. CuTe writes that distribution as a *TV layout*: a layout from
``(thread, value)`` to the element's index in the operand matrix, the matrix itself read
column-major. Its shape is ``((threads...), (values...))``. For the accumulator of
``mma.m16n8k8`` (a 16x8 matrix C, index ``m + 16*n``)::

    TV = ((4,8),(2,2)):((32,1),(16,8))

Check one thread by hand. Lane 5 is thread coordinate ``(5 % 4, 5 // 4) = (1, 1)``; its value
``c3`` is value coordinate ``(1, 1)``. ``TV = 1*32 + 1*1 + 1*16 + 1*8 = 57 = 9 + 16*3``, so
lane 5 holds ``C[9][3]``. The PTX ISA says the same: ``row = groupID + 8 = 9`` (c3 is one of
c2, c3) and ``col = threadID_in_group*2 + (3 & 1) = 3``.

    >>> from layoutalg.nvidia.ampere.mma import fragment
    >>> f = fragment("m16n8k8", "f16", "C")
    >>> str(f.layout), f.coords(5, 3), f.formula.evaluate(5, 3)
    ('((4,8),(2,2)):((32,1),(16,8))', (9, 3), (9, 3))

Conventions (CuTe's, kept so that layouts compare as functions with CuTe's ``ALayout`` /
``BLayout`` / ``CLayout``): A is indexed over MxK as ``m + k*M``, B over NxK as ``n + k*N``,
C/D over MxN as ``m + n*M``. :meth:`Fragment.coords` answers in the PTX convention instead:
``(row, col)`` with A MxK, B KxN, C/D MxN. Where a warp computes several independent products
(``mma.m8n8k4`` .f16 computes four) or moves several matrices (``ldmatrix .x4``), the layout's
codomain stacks them: index ``= element + batch * (rows*cols)``.

A :class:`Fragment` speaks the verify protocol of :mod:`layoutalg.verify`
(``verify_domain`` / ``verify_eval`` / ``verify_symbolic``), computed from its layout alone, so
that checking it against :attr:`Fragment.formula` (the ISA's text) proves the layout.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, cast

import numpy as np
import sympy

from ...errors import LayoutError, guarded
from ...hooks import svg_of
from ...inttuple import flatten
from ...layout import Layout
from ...symbolic import mode_expr
from .ptx_formulas import FORMULAS, PtxFormula

__all__ = ["Fragment", "element_bits", "parse_mnk"]

#: Bits per element as held in registers, by PTX type name.
_BITS = {
    "f64": 64,
    "f32": 32,
    "s32": 32,
    "tf32": 32,
    "f16": 16,
    "bf16": 16,
    "s8": 8,
    "u8": 8,
    "e4m3": 8,
    "e5m2": 8,
    "e3m2": 8,  # kind::f8f6f4: 6-bit values in 8-bit containers
    "e2m3": 8,
    "e2m1": 8,  # kind::f8f6f4 container; kind::mxf4 / mxf4nvf4 pack e2m1 as 4 bits (see element_bits)
    "s4": 4,
    "u4": 4,
    "b1": 1,
    "b16": 16,
    "b8": 8,
    "ue8m0": 8,
    "ue4m3": 8,
}


def element_bits(dtype: str, kind: str | None = None) -> int:
    """Bits one element of PTX type ``dtype`` occupies in a register.

    ``.e2m1`` is 8 bits (an 8-bit container) under ``kind::f8f6f4`` / ``kind::mxf8f6f4`` and
    4 bits (packed) under ``kind::mxf4`` / ``kind::mxf4nvf4``.

    >>> element_bits("f16"), element_bits("e2m1", "f8f6f4"), element_bits("e2m1", "mxf4")
    (16, 8, 4)
    """
    from .dtypes import dtype_name

    dtype = dtype_name(dtype, allowed=_BITS, op="element_bits")
    if dtype == "e2m1" and kind in ("mxf4", "mxf4nvf4"):
        return 4
    return _BITS[dtype]


@dataclass(frozen=True)
class Fragment:
    """A TV layout ``(thread, value) -> operand element`` plus the PTX facts it stands for.

    Invariants: ``layout`` has rank 2, ``size(layout[0]) == num_threads``,
    ``size(layout[1]) == num_values``; ``layout(t, v) < rows * cols * batch`` where
    ``(rows, cols) = codomain``. For operand B (and scale-factor B) the codomain is stored
    transposed (N-major, CuTe's convention) and :meth:`coords` transposes back.
    """

    instruction: str
    shape: str
    operand: str
    dtype: str
    layout: Layout
    codomain: tuple  # (d0, d1): layout index = x + d0*y + d0*d1*batch
    formula_key: str
    element_bits: int
    batch: int = 1
    batch_name: str | None = None  # "computation" (m8n8k4 .f16), "matrix" (ldmatrix)
    sparse: bool = False  # sparse A: codomain is M x K/2, verify gives (row, firstcol, lastcol)
    variant: tuple = ()  # sorted (name, value) pairs: alayout, blayout, ctype, kind, scale_vec, ...
    ptx_section: str = ""
    figure: str = ""
    min_sm: str = ""
    ptx_isa: str = ""
    notes: str = field(default="", compare=False)

    # ----------------------------------------------------------------- basic facts
    @cached_property
    def num_threads(self) -> int:
        """Threads that hold the fragment: 32 (warp) or 128 (warpgroup)."""
        return math.prod(flatten(cast(tuple, self.layout.shape)[0]))

    @cached_property
    def num_values(self) -> int:
        """Elements each thread holds."""
        return math.prod(flatten(cast(tuple, self.layout.shape)[1]))

    @property
    def mnk(self) -> tuple:
        """``(M, N, K)`` parsed from :attr:`shape` (``"m16n8k16"`` -> ``(16, 8, 16)``)."""
        return parse_mnk(self.shape)

    @property
    def formula(self) -> PtxFormula:
        """The PTX formula of this operand (:mod:`layoutalg.nvidia.common.ptx_formulas`)."""
        return FORMULAS[self.formula_key]

    @property
    def variant_dict(self) -> dict:
        return dict(self.variant)

    # ----------------------------------------------------------------- registers
    @property
    def values_per_register(self) -> int:
        """Elements packed in one 32-bit register (1 for 64-bit elements, which use one .f64 register)."""
        return max(1, 32 // self.element_bits)

    @property
    def num_registers(self) -> int:
        """Registers of the fragment (``.f64`` registers for 64-bit types, else 32-bit)."""
        return -(-self.num_values // self.values_per_register)

    def register(self, i: int) -> tuple[int, int]:
        """``(register, position)`` of value ``i``: ``(i // values_per_register, i % values_per_register)``.

        Position 0 is the low bits of the register (PTX lists elements "low to high").
        """
        self._check_value(i, "register")
        return divmod(i, self.values_per_register)

    # ----------------------------------------------------------------- evaluation
    @cached_property
    def _table(self) -> np.ndarray:
        return np.asarray(self.layout.table(), dtype=np.int64)

    def _check_lane(self, lane: int, op: str) -> None:
        if not 0 <= lane < self.num_threads:
            raise LayoutError(f"Fragment.{op}: lane {lane} out of range [0, {self.num_threads}) for {self.name}")

    def _check_value(self, i: int, op: str) -> None:
        if not 0 <= i < self.num_values:
            raise LayoutError(f"Fragment.{op}: value {i} out of range [0, {self.num_values}) for {self.name}")

    @property
    def name(self) -> str:
        extra = ",".join(f"{k}={v}" for k, v in self.variant)
        return f"{self.shape}.{self.dtype}.{self.operand}" + (f"[{extra}]" if extra else "")

    def index(self, lane: Any, i: Any) -> Any:
        """``layout(lane, i)``: the element's index in the (stacked, column-major) operand matrix."""
        return self._table[np.asarray(lane) + self.num_threads * np.asarray(i)]

    def _decode(self, idx: Any) -> tuple:
        d0, d1 = self.codomain
        x, y, b = idx % d0, (idx // d0) % d1, idx // (d0 * d1)
        if self.operand in ("B", "SFB"):
            x, y = y, x
        return b, x, y

    def coords(self, lane: int, i: int) -> tuple[int, int]:
        """``(row, col)`` of the element value ``i`` of ``lane`` holds, in the PTX convention.

        For a sparse A the column is the column of the compressed ``M x K/2`` matrix; see
        :meth:`column_range` for the span of A's columns it comes from.
        """
        self._check_lane(lane, "coords")
        self._check_value(i, "coords")
        _, r, c = self._decode(int(self.index(lane, i)))
        return int(r), int(c)

    def batch_index(self, lane: int, i: int) -> int:
        """Which stacked matrix (MMA computation, ldmatrix matrix) the element belongs to."""
        self._check_lane(lane, "batch_index")
        self._check_value(i, "batch_index")
        return int(self._decode(int(self.index(lane, i)))[0])

    def column_range(self, lane: int, i: int) -> tuple[int, int]:
        """Sparse A only: ``(firstcol, lastcol)``, the chunk of A's columns value ``i`` is drawn from."""
        if not self.sparse:
            raise LayoutError(f"Fragment.column_range: {self.name} is not a sparse A fragment")
        _, c = self.coords(lane, i)
        g = self.values_per_register
        return (c // g) * 2 * g, (c // g) * 2 * g + 2 * g - 1

    def owner(self, row: int, col: int, batch: int = 0) -> tuple[int, int]:
        """Inverse of :meth:`coords`: ``(lane, i)`` of the first thread holding element ``(row, col)``."""
        d0, d1 = self.codomain
        x, y = (col, row) if self.operand in ("B", "SFB") else (row, col)
        if not (0 <= x < d0 and 0 <= y < d1 and 0 <= batch < self.batch):
            raise LayoutError(f"Fragment.owner: element ({row}, {col}) batch {batch} outside {self.name}")
        hits = np.nonzero(self._table == x + d0 * y + d0 * d1 * batch)[0]
        if len(hits) == 0:
            raise LayoutError(f"Fragment.owner: no thread of {self.name} holds ({row}, {col})")
        value, lane = divmod(int(hits[0]), self.num_threads)
        return lane, value

    def grid(self, batch: int = 0) -> tuple[np.ndarray, np.ndarray]:
        """``(lanes, values)``: for each element of operand matrix ``batch`` (PTX orientation, rows x cols),
        the lane and value index of a thread holding it (the lowest flat ``lane + threads*i``), -1 if none.

        >>> from layoutalg.nvidia.ampere.mma import fragment
        >>> lanes, values = fragment("m8n8k4", "f64", "C").grid()
        >>> lanes[3].tolist(), values[3].tolist()   # row 3 = groupID 3: lanes 12..15, c0 c1 each
        ([12, 12, 13, 13, 14, 14, 15, 15], [0, 1, 0, 1, 0, 1, 0, 1])
        """
        d0, d1 = self.codomain
        lanes = np.full(d0 * d1, -1, dtype=np.int64)
        values = np.full(d0 * d1, -1, dtype=np.int64)
        flat = np.arange(self._table.size)[::-1]  # reversed so the lowest flat index is written last
        idx = self._table[flat]
        keep = idx // (d0 * d1) == batch
        lanes[idx[keep] % (d0 * d1)] = flat[keep] % self.num_threads
        values[idx[keep] % (d0 * d1)] = flat[keep] // self.num_threads
        lanes, values = lanes.reshape(d1, d0).T, values.reshape(d1, d0).T
        if self.operand in ("B", "SFB"):
            lanes, values = lanes.T, values.T
        return lanes, values

    # ----------------------------------------------------------------- verify protocol
    def verify_domain(self) -> tuple[int, int]:
        """``(num_threads, num_values)``: the extents of ``(lane, i)``."""
        return (self.num_threads, self.num_values)

    def verify_eval(self, lane: Any, i: Any) -> tuple:
        """Vectorized outputs named like :attr:`formula`'s, computed from :attr:`layout` alone."""
        lane, i = np.broadcast_arrays(np.asarray(lane, dtype=np.int64), np.asarray(i, dtype=np.int64))
        b, r, c = self._decode(self.index(lane, i))
        if self.sparse:
            g = self.values_per_register
            first = (c // g) * 2 * g
            return (r, first, first + 2 * g - 1)
        if self.batch_name is not None:
            return (b, r, c)
        return (r, c)

    def verify_symbolic(self, lane: Any = None, i: Any = None) -> tuple:
        """The layout's outputs as sympy expressions (floor/mod of ``lane`` and ``i``)."""
        from .ptx_formulas import i as i_sym
        from .ptx_formulas import lane as lane_sym

        lane = lane_sym if lane is None else lane
        i = i_sym if i is None else i
        shape, stride = cast(tuple, self.layout.shape), cast(tuple, self.layout.stride)
        group = self.values_per_register if self.sparse else 0
        return _symbolic_outputs(shape, stride, tuple(self.codomain), self.operand in ("B", "SFB"), group,
                                 self.batch_name is not None, lane, i)

    def check(self) -> None:
        """Compare :meth:`verify_eval` with :attr:`formula` on every ``(lane, i)``; raise on the first mismatch."""
        T, V = self.verify_domain()
        ln, iv = np.meshgrid(np.arange(T), np.arange(V), indexing="ij")
        got = self.verify_eval(ln, iv)
        want = self.formula.evaluate(ln, iv)
        for name, g, w in zip(self.formula.names, got, want):
            bad = np.argwhere(g != w)
            if len(bad):
                t, v = bad[0]
                raise LayoutError(
                    f"Fragment.check: {self.name} {name}(lane={t}, i={v}) is {g[t, v]} by the layout, "
                    f"{w[t, v]} by the PTX formula {self.formula.key}"
                )

    def _repr_svg_(self) -> str | None:  # pragma: no cover - notebooks display it
        """The picture a notebook shows (drawn by layoutalg.viz through :mod:`layoutalg.hooks`)."""
        return svg_of(self)

    def __repr__(self) -> str:
        return f"Fragment({self.instruction!r}, {self.name}, layout={self.layout})"


@guarded
def parse_mnk(shape: str) -> tuple[int, int, int]:
    """``(M, N, K)`` of a PTX shape ``"m<M>n<N>k<K>"``; a LayoutError for any other text.

    >>> parse_mnk("m16n8k16"), parse_mnk("m64n256k32")
    ((16, 8, 16), (64, 256, 32))
    """
    import re

    m = re.fullmatch(r"m(\d+)n(\d+)k(\d+)", shape)
    if not m:
        raise LayoutError(f"fragment: shape {shape!r} is not of the form 'm<M>n<N>k<K>' (e.g. 'm16n8k16')")
    M, N, K = (int(g) for g in m.groups())
    return M, N, K


@functools.lru_cache(maxsize=1024)
def _symbolic_outputs(shape: tuple, stride: tuple, codomain: tuple, swap: bool, sparse_group: int, batched: bool,
                      lane: Any, i: Any) -> tuple:
    """:meth:`Fragment.verify_symbolic`, once per distinct layout and codomain (the catalog's ~800 fragments have
    ~100; sympy expressions are immutable, so they are shared)."""
    idx = mode_expr(shape[0], stride[0], lane) + mode_expr(shape[1], stride[1], i)
    d0, d1 = codomain
    x, y, b = sympy.Mod(idx, d0), sympy.Mod(sympy.floor(idx / d0), d1), sympy.floor(idx / (d0 * d1))
    if swap:
        x, y = y, x
    if sparse_group:
        first = sympy.floor(y / sparse_group) * 2 * sparse_group
        return (x, first, first + 2 * sparse_group - 1)
    if batched:
        return (b, x, y)
    return (x, y)
