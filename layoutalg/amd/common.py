"""What every AMD matrix-core family shares: element types, architectures, instruction names, fragments.

An AMD matrix instruction (``v_mfma_*`` on CDNA, ``v_wmma_*`` on RDNA) reads its operands A and B
from vector registers (VGPRs) spread over the lanes of a wave and writes its accumulator D the same
way. Which element of which matrix sits in which ``(lane, register bits)`` is the instruction's
*register map*; read as a function ``(lane, value) -> element`` it is a CuTe TV layout, the same
kind of object as an NVIDIA fragment. ``value`` counts the lane's elements in register order: value
``i`` of an operand of ``bits``-bit elements lies in VGPR ``(i*bits) // 32`` at bit ``(i*bits) % 32``
(a 64-bit element takes the VGPR pair ``v[2i+1:2i]``).

Worked by hand: ``v_mfma_f32_32x32x8_f16`` holds A (32 x 8, f16) four values a lane, lane ``l``
row ``l % 32`` and columns ``4*(l // 32) + i``. Lane 37, value 2 (``v1.[15:0]``) is ``A[5][6]``;
as a TV layout onto ``m + 32*k`` that is ``((32,2),4):((1,128),32)``: ``5 + 1*128 + 2*32 = 197 =
5 + 32*6``.

    >>> from layoutalg.amd import mfma
    >>> a = mfma("v_mfma_f32_32x32x8_f16").fragment("A")
    >>> str(a.layout), a.coords(37, 2), a.register_bits(2)
    ('((32,2),4):((1,128),32)', (5, 6, 0), ('v1', 0, 16))

Conventions (CuTe's, as :mod:`layoutalg.nvidia` keeps them): A is indexed over M x K as
``m + M*k``, B over N x K as ``n + N*k``, C/D over M x N as ``m + M*n``; an instruction of
``blocks > 1`` (``v_mfma_f32_4x4x4_16b_f16``: sixteen independent 4x4x4 products) stacks its
blocks, ``index = element + block * (rows*cols)``. :meth:`MatrixFragment.coords` answers in AMD's
convention instead: ``(row, col, block)`` with A M x K, B K x N and D M x N, as the ISA and AMD's
matrix instruction calculator print ``A[i][k]``, ``B[k][j]``, ``D[i][j].B<block>``.
"""

from __future__ import annotations

import difflib
import math
import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import sympy

from ..errors import LayoutError
from ..inttuple import flatten
from ..layout import Layout
from ..registry import AtomFamily
from ..symbolic import lambdify_numpy, mode_expr

if TYPE_CHECKING:
    pass

__all__ = [
    "DTYPES", "ARCHS", "dtype_name", "dtype_bits", "arch_name", "name_key", "close_names",
    "MatrixFragment", "AtomFamily", "lane", "i",
]

#: The lane of the wave (0..63 on CDNA; 0..31 or 0..63 on RDNA).
lane = sympy.Symbol("lane", integer=True, nonnegative=True)
#: The value index within the lane's fragment (register order, see the module docstring).
i = sympy.Symbol("i", integer=True, nonnegative=True)

#: AMD element types: name -> (bits in a register, description). The names are the ISA's
#: mnemonic suffixes (``f16`` of ``v_mfma_f32_32x32x8_f16``).
DTYPES: dict[str, tuple[int, str]] = {
    "f64": (64, "IEEE binary64"),
    "f32": (32, "IEEE binary32"),
    "xf32": (32, "FP32 input rounded to TF32-like precision (CDNA3 v_mfma_*_xf32)"),
    "f16": (16, "IEEE binary16"),
    "bf16": (16, "bfloat16"),
    "i32": (32, "signed 32-bit integer"),
    "i8": (8, "signed 8-bit integer"),
    "iu8": (8, "signed or unsigned 8-bit integer (WMMA, sign chosen by NEG bits)"),
    "iu4": (4, "signed or unsigned 4-bit integer (WMMA)"),
    "fp8": (8, "8-bit float E4M3 (CDNA3: AMD's FNUZ encoding; CDNA4/RDNA4: OCP E4M3FN)"),
    "bf8": (8, "8-bit float E5M2 (CDNA3: AMD's FNUZ encoding; CDNA4/RDNA4: OCP E5M2)"),
    "fp6": (6, "6-bit float E2M3 (OCP MX, packed)"),
    "bf6": (6, "6-bit float E3M2 (OCP MX, packed)"),
    "fp4": (4, "4-bit float E2M1 (OCP MX, packed)"),
    "e8m0": (8, "unsigned power-of-two scale (OCP MX E8M0)"),
}

#: Other tools' spellings of the same types: AMD's calculator, Triton, torch, numpy, LLVM.
_DTYPE_ALIASES = {
    "fp64": "f64", "float64": "f64", "double": "f64",
    "fp32": "f32", "float32": "f32", "float": "f32",
    "fp16": "f16", "float16": "f16", "half": "f16",
    "bfloat16": "bf16",
    "int32": "i32", "s32": "i32",
    "int8": "i8", "s8": "i8",
    "int4": "iu4", "i4": "iu4",
    "amd_fp8": "fp8", "float8e4b8": "fp8", "float8_e4m3fnuz": "fp8", "float8e4nv": "fp8", "float8_e4m3fn": "fp8",
    "e4m3": "fp8",
    "amd_bf8": "bf8", "float8e5b16": "bf8", "float8_e5m2fnuz": "bf8", "float8e5": "bf8", "float8_e5m2": "bf8",
    "e5m2": "bf8",
    "e2m3": "fp6", "e3m2": "bf6", "e2m1": "fp4", "float4_e2m1fn_x2": "fp4",
    "ue8m0": "e8m0", "float8_e8m0fnu": "e8m0",
}


def dtype_name(name: str, *, op: str = "dtype_name") -> str:
    """dtype_name(s) -> AMD's mnemonic suffix for the element type ``s`` (case and tool spelling ignored).

    >>> dtype_name("float16"), dtype_name("FP8"), dtype_name("amd_bf8"), dtype_name("int8")
    ('f16', 'fp8', 'bf8', 'i8')
    """
    if not isinstance(name, str):
        raise LayoutError(f"{op}: element type {name!r} is not a string (e.g. 'f16', 'bf16', 'fp8')")
    key = name.strip().lower().removeprefix("torch.").removeprefix("tl.")
    key = _DTYPE_ALIASES.get(key, key)
    if key not in DTYPES:
        hint = difflib.get_close_matches(key, list(DTYPES) + list(_DTYPE_ALIASES), n=3)
        raise LayoutError(f"{op}: unknown AMD element type {name!r}" + (f"; did you mean {', '.join(hint)}?" if hint
                                                                          else f"; known: {', '.join(DTYPES)}"))
    return key


def dtype_bits(name: str) -> int:
    """Bits one element of type ``name`` takes in a register (packed: fp6 is 6, fp4 and iu4 are 4).

    >>> dtype_bits("f16"), dtype_bits("f64"), dtype_bits("fp6")
    (16, 64, 6)
    """
    return DTYPES[dtype_name(name, op="dtype_bits")][0]


#: Architectures by family name, with the chips, products and Triton versions that name them.
ARCHS: dict[str, tuple[str, ...]] = {
    "cdna1": ("cdna", "gfx908", "mi100", "arcturus", "mfma1"),
    "cdna2": ("gfx90a", "mi200", "mi210", "mi250", "mi250x", "aldebaran", "mfma2"),
    "cdna3": ("gfx940", "gfx941", "gfx942", "mi300", "mi300a", "mi300x", "mi325x", "aqua_vanjaram", "mfma3"),
    "cdna4": ("gfx950", "mi350", "mi355x", "mfma4"),
    "rdna3": ("gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150", "gfx1151", "gfx1152", "gfx1153", "wmma1"),
    "rdna4": ("gfx1200", "gfx1201", "wmma2"),
    "gfx1250": ("cdna5", "wmma3"),
}
_ARCH_OF = {alias: arch for arch, aliases in ARCHS.items() for alias in (arch, *aliases)}


def arch_name(name: str) -> str:
    """arch_name(s) -> the family (``cdna1`` .. ``cdna4``, ``rdna3``, ``rdna4``) a chip or product name means.

    ``mfma<v>`` / ``wmma<v>`` are Triton's ``AMDMFMALayout`` / ``AMDWMMALayout`` versions.

    >>> arch_name("gfx942"), arch_name("MI300X"), arch_name("mfma4")
    ('cdna3', 'cdna3', 'cdna4')
    """
    key = str(name).strip().lower()
    if key not in _ARCH_OF:
        hint = difflib.get_close_matches(key, list(_ARCH_OF), n=3)
        raise LayoutError(f"arch_name: unknown AMD architecture {name!r}"
                          + (f"; did you mean {', '.join(hint)}?" if hint else f"; known: {', '.join(ARCHS)}"))
    return _ARCH_OF[key]


def name_key(name: str) -> str:
    """The spelling-free key of a mnemonic: lower case, no ``v_`` prefix, no underscores.

    ``V_MFMA_F32_32X32X8F16`` (CDNA1/2 spelling) and ``v_mfma_f32_32x32x8_f16`` (CDNA3) share it.

    >>> name_key("V_MFMA_F32_32X32X8F16") == name_key("v_mfma_f32_32x32x8_f16")
    True
    """
    key = str(name).strip().lower()
    key = key.removeprefix("v_")
    return re.sub(r"[_\s]", "", key)


def close_names(name: str, names: list[str], n: int = 4) -> str:
    """``"; did you mean a, b?"`` for the names of ``names`` closest to ``name`` (empty if none)."""
    hint = difflib.get_close_matches(str(name).lower(), names, n=n, cutoff=0.6)
    return f"; did you mean {', '.join(hint)}?" if hint else ""


_RULES: dict[tuple, Any] = {}




@dataclass(frozen=True)
class MatrixFragment:
    """One operand of an AMD matrix instruction: a TV layout ``(lane, value) -> element`` and the ISA rule.

    Invariants: ``layout`` has rank 2 with ``size(layout[0]) == wave`` and ``size(layout[1])`` the
    values a lane holds; every ``layout(l, i)`` is below ``rows * cols * blocks``, where ``codomain
    = (rows, cols)`` is the stored matrix in CuTe's orientation (A: M x K, B: N x K, D: M x N).
    ``rule`` is a tuple of sympy expressions in :data:`lane`, :data:`i` and the size symbols of
    ``params`` giving ``(row, col, block)`` in AMD's orientation, written from the ISA's rule
    without looking at ``layout`` (one rule serves every instruction of a family); ``formula`` is
    the rule at this instruction's sizes. :func:`layoutalg.verify.verify` proves layout and formula
    equal through the verify protocol below; :meth:`check` compares them on every point.
    """

    instruction: str
    arch: str
    operand: str  # "A", "B", "D" (C is D), "SA" / "SB" (scales)
    dtype: str
    layout: Layout
    codomain: tuple[int, int]
    rule: tuple  # (row, col, block) in lane, i and the symbols of ``params``
    params: tuple = ()  # ((Symbol, int), ...): the instruction's sizes the rule is written in
    blocks: int = 1
    wave: int = 64
    sparse: bool = False  # 4:2 sparse A: codomain is the compressed M x K/2 matrix (see column_range)
    slot_bits: int = 0  # register bits per value when not packed (RDNA3's 16-bit D: 32), 0 = packed
    bit_offset: int = 0  # low bit of value 0 within its slot (RDNA3's 16-bit D with OPSEL[2]: 16)
    source: str = ""
    notes: str = field(default="", compare=False)

    @cached_property
    def formula(self) -> tuple:
        """The ISA rule with this instruction's sizes put in: ``(row, col, block)`` in ``lane`` and ``i`` only."""
        sub = dict(self.params)
        return tuple(sympy.sympify(e).xreplace(sub) for e in self.rule)

    def evaluate_rule(self, ln: Any, v: Any) -> tuple:
        """``(row, col, block)`` by the ISA rule, vectorized (one compiled function per rule, shared by sizes)."""
        syms = tuple(s for s, _ in self.params)
        key = (self.rule, syms)
        fn = _RULES.get(key)
        if fn is None:
            fn = _RULES[key] = lambdify_numpy((lane, i, *syms), self.rule)
        ln, v = np.broadcast_arrays(np.asarray(ln, dtype=np.int64), np.asarray(v, dtype=np.int64))
        out = fn(ln, v, *(val for _, val in self.params))
        return tuple(np.broadcast_to(np.asarray(o).astype(np.int64), ln.shape) for o in out)

    @cached_property
    def num_threads(self) -> int:
        """Lanes of the wave that hold the operand (the TV layout's thread extent)."""
        return math.prod(flatten(cast(tuple, self.layout.shape)[0]))

    @cached_property
    def num_values(self) -> int:
        """Elements each lane holds."""
        return math.prod(flatten(cast(tuple, self.layout.shape)[1]))

    @property
    def element_bits(self) -> int:
        return dtype_bits(self.dtype)

    @property
    def name(self) -> str:
        return f"{self.instruction}.{self.operand}"

    @property
    def num_registers(self) -> int:
        """32-bit VGPRs the operand takes in each lane."""
        return -(-self.num_values * (self.slot_bits or self.element_bits) // 32)

    def register_bits(self, value: int) -> tuple[str, int, int]:
        """``(register, low bit, width)`` of value ``value``: ``("v1", 0, 16)`` is ``v1.[15:0]``.

        A 64-bit value is ``("v[1:0]", 0, 64)``; a packed 6-bit value may run into the next VGPR
        (its register is the one holding its low bit).
        """
        self._check_value(value, "register_bits")
        bits = self.element_bits
        if bits == 64:
            return f"v[{2 * value + 1}:{2 * value}]", 0, 64
        reg, lo = divmod(value * (self.slot_bits or bits) + self.bit_offset, 32)
        return f"v{reg}", lo, bits

    # ------------------------------------------------------------------ evaluation
    @cached_property
    def _table(self) -> np.ndarray:
        return np.asarray(self.layout.table(), dtype=np.int64)

    def _check_lane(self, ln: int, op: str) -> None:
        if not 0 <= ln < self.num_threads:
            raise LayoutError(f"MatrixFragment.{op}: lane {ln} out of range [0, {self.num_threads}) for {self.name}")

    def _check_value(self, v: int, op: str) -> None:
        if not 0 <= v < self.num_values:
            raise LayoutError(f"MatrixFragment.{op}: value {v} out of range [0, {self.num_values}) for {self.name}")

    def _decode(self, idx: Any) -> tuple:
        d0, d1 = self.codomain
        x, y, b = idx % d0, (idx // d0) % d1, idx // (d0 * d1)
        if self.operand in ("B", "SB"):
            x, y = y, x
        return x, y, b

    def coords(self, ln: int, value: int) -> tuple[int, int, int]:
        """``(row, col, block)`` of the element value ``value`` of lane ``ln`` holds (AMD's orientation)."""
        self._check_lane(ln, "coords")
        self._check_value(value, "coords")
        r, c, b = self._decode(int(self._table[ln + self.num_threads * value]))
        return int(r), int(c), int(b)

    def column_range(self, ln: int, value: int) -> tuple[int, int]:
        """Sparse A only: ``(first, last)`` dense K-columns the compressed value may come from.

        4:2 sparsity keeps 2 of every 4 consecutive K-elements: compressed columns ``2c`` and
        ``2c+1`` come from dense columns ``4c .. 4c+3`` (which two, the compression index says).
        """
        if not self.sparse:
            raise LayoutError(f"MatrixFragment.column_range: {self.name} is not a sparse A fragment")
        c = self.coords(ln, value)[1]
        return 4 * (c // 2), 4 * (c // 2) + 3

    def describe(self, ln: int, value: int) -> str:
        """The register cell as AMD's calculator prints it: ``v5{37} = D[13][5]`` (``.B<block>`` when blocks > 1).

        >>> from layoutalg.amd import mfma
        >>> mfma("v_mfma_f32_32x32x8_f16").fragment("D").describe(37, 5)
        'v5{37} = D[13][5]'
        >>> mfma("v_mfma_f32_4x4x4_16b_f16").fragment("A").describe(63, 1)
        'v0{63}.[31:16] = A[3][1].B15'
        """
        row, col, blk = self.coords(ln, value)
        reg, lo, bits = self.register_bits(value)
        cell = f"{reg}{{{ln}}}" + ("" if bits in (32, 64) else f".[{lo + bits - 1}:{lo}]")
        return f"{cell} = {self.operand}[{row}][{col}]" + (f".B{blk}" if self.blocks > 1 else "")

    def owners(self, row: int, col: int, block: int = 0) -> list[tuple[int, int]]:
        """Every ``(lane, value)`` holding element ``(row, col)`` of ``block`` (AMD's orientation)."""
        d0, d1 = self.codomain
        x, y = (col, row) if self.operand in ("B", "SB") else (row, col)
        if not (0 <= x < d0 and 0 <= y < d1 and 0 <= block < self.blocks):
            raise LayoutError(f"MatrixFragment.owners: element ({row}, {col}) block {block} is outside {self.name}")
        hits = np.nonzero(self._table == x + d0 * y + d0 * d1 * block)[0]
        return [(int(h % self.num_threads), int(h // self.num_threads)) for h in hits]

    # ------------------------------------------------------------------ verify protocol
    def verify_domain(self) -> tuple[int, int]:
        """``(lanes, values)``: the extents of ``(lane, i)``."""
        return (self.num_threads, self.num_values)

    def verify_eval(self, ln: Any, v: Any) -> tuple:
        """``(row, col, block)`` arrays computed from :attr:`layout` alone."""
        ln, v = np.broadcast_arrays(np.asarray(ln, dtype=np.int64), np.asarray(v, dtype=np.int64))
        return self._decode(self._table[ln + self.num_threads * v])

    def verify_symbolic(self, ln: Any = None, v: Any = None) -> tuple:
        """The layout's ``(row, col, block)`` as sympy expressions (floor and mod of ``lane`` and ``i``)."""
        ln = lane if ln is None else ln
        v = i if v is None else v
        shape, stride = cast(tuple, self.layout.shape), cast(tuple, self.layout.stride)
        idx = mode_expr(shape[0], stride[0], ln) + mode_expr(shape[1], stride[1], v)
        d0, d1 = self.codomain
        x, y, b = sympy.Mod(idx, d0), sympy.Mod(sympy.floor(idx / d0), d1), sympy.floor(idx / (d0 * d1))
        if self.operand in ("B", "SB"):
            x, y = y, x
        return (x, y, b)

    def check(self) -> None:
        """Compare the layout with :attr:`formula` on every ``(lane, i)``; raise LayoutError at the first difference."""
        T, V = self.verify_domain()
        ln, v = np.meshgrid(np.arange(T), np.arange(V), indexing="ij")
        got = self.verify_eval(ln, v)
        want = self.evaluate_rule(ln, v)
        for name, g, w in zip(("row", "col", "block"), got, want):
            bad = np.argwhere(g != w)
            if len(bad):
                t, x = bad[0]
                raise LayoutError(f"MatrixFragment.check: {self.name} {name}(lane={t}, i={x}) is {g[t, x]} by the "
                                  f"layout, {w[t, x]} by the ISA rule")

    def __repr__(self) -> str:
        return f"MatrixFragment({self.instruction!r}, {self.operand}, {self.dtype}, layout={self.layout})"
