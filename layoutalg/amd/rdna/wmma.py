"""RDNA3 WMMA register maps as TV layouts, each proven equal to the ISA's rule.

RDNA3's ``v_wmma_*_16x16x16_*`` (RDNA3 ISA guide, section "Wave Matrix Multiply Accumulate")
compute one ``D[16 x 16] += A[16 x 16] * B[16 x 16]`` per wave, in wave32 or wave64. The operands
are placed by three rules:

*A* -- lane ``l`` holds row ``l % 16`` whole: all 16 K-elements, ``k = i`` in register order.
Lanes 16-31 (and 32-63 in wave64) hold a copy of lanes 0-15: the ISA requires the halves to be
duplicated. *B* is the same with column ``l % 16``.

*D* -- lane ``l`` holds column ``l % 16``; with ``P = wave/16`` lane groups, value ``i`` is row
``P*i + l // 16``. A 32-bit D takes one VGPR a value; a 16-bit D (``v_wmma_f16``, ``v_wmma_bf16``)
also takes one VGPR a value, in bits [15:0], or [31:16] with ``OPSEL[2]`` set (``opsel_hi``).

Worked by hand, wave32 ``v_wmma_f32_16x16x16_f16`` D: ``D[5][3]`` is column 3, row ``5 = 2*2 + 1``:
lane ``3 + 16 = 19``, value 2 (``v2``). As a TV layout onto ``m + 16*n``: ``((16,2),8):((16,1),2)``.

    >>> d = wmma("v_wmma_f32_16x16x16_f16").fragment("D", wave=32)
    >>> str(d.layout), d.coords(19, 2)
    ('((16,2),8):((16,1),2)', (5, 3, 0))
    >>> a = wmma("v_wmma_f32_16x16x16_f16").fragment("A", wave=64)
    >>> str(a.layout), a.owners(0, 0)   # the duplicated halves: four lanes hold A[0][0]
    ('((16,4),16):((1,0),16)', [(0, 0), (16, 0), (32, 0), (48, 0)])

RDNA4 (``v_wmma`` without duplicated halves, ``v_swmmac``) is recorded from AMD's calculator in
``tests/data/amd/calculator_rdna4.json`` and not modelled yet.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from ...errors import LayoutError
from ...layout import Layout
from ...tiled import MMAAtom
from ..common import AtomFamily, MatrixFragment, arch_name, close_names, dtype_name, i, lane, name_key

__all__ = ["WmmaInstruction", "WMMA_INSTRUCTIONS", "Wmma", "wmma", "wmma_for", "RULES", "rule", "families"]


@dataclass(frozen=True)
class WmmaInstruction:
    """One ``v_wmma_*`` row of an ISA table: ``D[M x N] (out) += A[M x K] (a) * B[K x N] (b)`` per wave."""

    name: str
    arch: str
    out: str
    a: str
    b: str
    m: int = 16
    n: int = 16
    k: int = 16

    @property
    def shape(self) -> tuple[int, int, int]:
        return (self.m, self.n, self.k)


def _rdna3() -> list[WmmaInstruction]:
    rows = [("f32", "f16"), ("f32", "bf16"), ("f16", "f16"), ("bf16", "bf16"), ("i32", "iu8"), ("i32", "iu4")]
    return [WmmaInstruction(f"v_wmma_{out}_16x16x16_{t}", "rdna3", out, t, t) for out, t in rows]


#: ``WMMA_INSTRUCTIONS[arch][mnemonic]`` (RDNA3 only, so far).
WMMA_INSTRUCTIONS: dict[str, dict[str, WmmaInstruction]] = {"rdna3": {r.name: r for r in _rdna3()}}

P_ = sympy.Symbol("P", integer=True, positive=True)

#: The RDNA3 rules as ``(row, col, block)`` of ``(lane, i)``; ``P = wave/16`` lane groups of D.
RULES: dict[str, tuple] = {
    "A": (sympy.Mod(lane, 16), i, sympy.Integer(0)),
    "B": (i, sympy.Mod(lane, 16), sympy.Integer(0)),
    "D": (P_ * i + sympy.floor(lane / 16), sympy.Mod(lane, 16), sympy.Integer(0)),
}


def rule(operand: str, wave: int) -> tuple[tuple, tuple]:
    """``(rule, params)`` of an RDNA3 WMMA operand (``"A"``, ``"B"``, ``"D"``) at wave size ``wave``."""
    return RULES[operand], (((P_, wave // 16),) if operand == "D" else ())


def _check_wave(wave: int, op: str) -> int:
    if wave not in (32, 64):
        raise LayoutError(f"{op}: wave size {wave!r} is not 32 or 64")
    return int(wave)


@dataclass(frozen=True)
class Wmma:
    """One WMMA instruction: its ISA row, its operands as fragments at a wave size, an MMA atom."""

    row: WmmaInstruction

    @property
    def name(self) -> str:
        return self.row.name

    @property
    def arch(self) -> str:
        return self.row.arch

    @property
    def shape(self) -> tuple[int, int, int]:
        return self.row.shape

    def fragment(self, operand: str, wave: int = 32, opsel_hi: bool = False) -> MatrixFragment:
        """The register map of ``operand`` (``"A"``, ``"B"``, ``"C"``/``"D"``) in a wave of ``wave`` lanes.

        ``opsel_hi``: a 16-bit D in bits [31:16] of its VGPRs (``OPSEL[2]``) instead of [15:0].
        """
        op = str(operand).upper()
        op = "D" if op == "C" else op
        if op not in ("A", "B", "D"):
            raise LayoutError(f"{self.name}.fragment: operand {operand!r} is not one of A, B, C, D")
        W = _check_wave(wave, f"{self.name}.fragment")
        r = self.row
        P = W // 16
        if op in ("A", "B"):  # lanes (row or col, copies), values k; the copies have stride 0
            layout, dtype, codomain = Layout(((16, P), 16), ((1, 0), 16)), r.a if op == "A" else r.b, (16, 16)
        else:                 # lanes (col, group), values: row = P*i + group
            layout, dtype, codomain = Layout(((16, P), 16 // P), ((16, 1), P)), r.out, (16, 16)
        half = op == "D" and dtype_name(r.out) in ("f16", "bf16")
        if opsel_hi and not half:
            raise LayoutError(f"{self.name}.fragment: opsel_hi places a 16-bit D; operand {op} is {dtype}")
        exprs, params = rule(op, W)
        return MatrixFragment(self.name, r.arch, op, dtype, layout, codomain, exprs, params, wave=W,
                              slot_bits=32 if half else 0, bit_offset=16 if opsel_hi else 0,
                              source="RDNA3 ISA guide; AMD Matrix Instruction Calculator")

    def fragments(self, wave: int = 32) -> dict[str, MatrixFragment]:
        return {op: self.fragment(op, wave) for op in ("A", "B", "D")}

    def atom(self, wave: int = 32) -> MMAAtom:
        """The instruction as an :class:`~layoutalg.tiled.MMAAtom` of ``wave`` threads (ThrID ``wave:1``).

        A and B repeat over the lane groups (stride 0), as the ISA asks the halves to be duplicated.

        >>> str(wmma("v_wmma_f32_16x16x16_f16").atom(32).layout_a_tv)
        '((16,2),16):((1,0),16)'
        """
        W = _check_wave(wave, f"{self.name}.atom")
        f = self.fragments(W)
        r = self.row
        return MMAAtom(self.name, self.shape, Layout(W, 1), f["A"].layout, f["B"].layout, f["D"].layout,
                       value_types=(r.out, r.a, r.b, r.out))

    def __repr__(self) -> str:
        return f"Wmma({self.name!r}, arch={self.arch!r})"


_KEYS = {arch: {name_key(n): n for n in rows} for arch, rows in WMMA_INSTRUCTIONS.items()}


def wmma(name: str, arch: str | None = None) -> Wmma:
    """wmma(name, arch) -> the WMMA instruction ``name`` (any case or underscores) on ``arch`` (default rdna3).

    >>> wmma("V_WMMA_I32_16X16X16_IU8").name
    'v_wmma_i32_16x16x16_iu8'
    """
    a = "rdna3" if arch is None else arch_name(arch)
    if a not in _KEYS:
        raise LayoutError(f"wmma: no WMMA modelled for {a} (modelled: {', '.join(_KEYS)})")
    hit = _KEYS[a].get(name_key(name))
    if hit is None:
        raise LayoutError(f"wmma: no instruction {name!r} on {a}" + close_names(str(name).lower(), list(_KEYS[a].values())))
    return Wmma(WMMA_INSTRUCTIONS[a][hit])


def wmma_for(instr_shape: tuple[int, int, int], a: str, arch: str = "rdna3", out: str | None = None) -> Wmma:
    """The WMMA Triton means by ``AMDWMMALayout(version 1, instr_shape=[M, N, K])`` for A of type ``a``."""
    arch = arch_name(arch)
    ta = dtype_name(a, op="wmma_for")
    ta = {"i8": "iu8"}.get(ta, ta)
    rows = [r for r in WMMA_INSTRUCTIONS.get(arch, {}).values()
            if r.shape == tuple(instr_shape) and r.a == ta and (out is None or r.out == dtype_name(out))]
    if len(rows) > 1:
        rows = [r for r in rows if r.out in ("f32", "i32")]
    if len(rows) != 1:
        raise LayoutError(f"wmma_for: {arch} has no single WMMA of shape {instr_shape} with A {ta}"
                          + (f" and D {out}" if out else ""))
    return Wmma(rows[0])


def families() -> tuple[AtomFamily, ...]:
    """One :class:`~layoutalg.amd.common.AtomFamily` per modelled RDNA generation (kind ``wmma``, wave32 atoms)."""
    def build(n: str, a: str) -> MMAAtom | None:
        try:
            return wmma(n, a).atom(32)
        except LayoutError:
            return None

    return tuple(AtomFamily("amd", a, "wmma", lambda a=a: tuple(WMMA_INSTRUCTIONS[a]), lambda n, a=a: build(n, a))
                 for a in WMMA_INSTRUCTIONS)
