"""gfx1250's WMMA register maps (wave32) as TV layouts, each proven equal to its placement rule.

gfx1250 computes ``D[16 x 16] += A[16 x K] * B[K x 16]`` per wave of 32 lanes, as RDNA4 does, with
new shapes: ``v_wmma_f32_16x16x4_f32``, ``16x16x32`` f16/bf16, ``16x16x64`` iu8/fp8/bf8,
``16x16x128`` fp8/bf8, ``v_wmma_f32_16x16x128_f8f6f4`` (A and B each fp8, bf8, fp6, bf6 or fp4) and
its scaled twins ``v_wmma_scale_f32_16x16x128_f8f6f4`` / ``v_wmma_scale16_...`` (an E8M0 scale per
32 / 16 K values of each row of A and column of B).

The rule (lane ``l``, value ``i``, half ``h = l // 16``): A holds row ``l % 16`` and
``k = i % C + C*h + 2C*(i // C)`` -- K in chunks of ``C`` values alternating between the two halves of
the wave every 128 bits of registers -- with ``C = 2`` for 32-bit inputs, 8 for 16-bit, 16 for 8-bit
and 32 for the 6- and 4-bit formats of ``f8f6f4``; B the same with column ``l % 16``; D (32-bit) row ``i + 8h``, column ``l % 16``; a
16-bit D packs two rows a VGPR (value ``i`` is row ``i + 8h``, in bits ``16*(i % 2)`` of VGPR ``i // 2``).
The scales: lane ``l`` holds the ``K/32`` (``K/16`` for ``scale16``) scales of row (column) ``l % 16``,
the upper half-wave a copy.

Checked against (no gfx1250 GPU, and AMD's gfx1250 ISA text was not found): Triton 3.6's
``AMDWMMALayout(version=3)`` and its ``DotOperandLayout`` operands and ``get_wmma_scale_layout``
(the engine's linear layouts), FlyDSL 0.5.0's ``MmaOpGFX1250_WMMAType`` / ``MmaOpGFX1250_WMMAScaleType``
atoms (``tests/test_amd_gfx1250.py``, ``tests/test_amd_flydsl.py``), and composable_kernel's CK Tile
(``tests/test_amd_cdna4_second_source.py``): its mixed-format scaled WMMA pairs fp8 A in 16-value
chunks with fp4 B in 32-value chunks, so the 8-bit chunk is 16, where Triton and FlyDSL use 8 (a K
permutation, named; ``form="triton"`` / ``"flydsl"`` gives theirs). FlyDSL also lists a packed 16-bit
D's values VGPR by VGPR, low halves first (the same elements in another order). The 8-bit chunk of the
dense ``v_wmma_*_fp8/bf8/iu8`` follows the f8f6f4 instruction's (no source separates them).
``v_wmma_f32_32x16x128_f4`` is not modelled.

Worked by hand, ``v_wmma_f32_16x16x32_f16`` A: lane 21 (row 5, half 1), value 9 (chunk 1, 1 in it):
``k = 1 + 8 + 16 = 25``::

    >>> a = wmma1250("v_wmma_f32_16x16x32_f16").fragment("A")
    >>> a.coords(21, 9)
    (5, 25, 0)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import sympy

from ...errors import LayoutError
from ...layout import Layout
from ...tiled import MMAAtom
from ..common import AtomFamily, MatrixFragment, close_names, dtype_bits, dtype_name, i, lane, name_key

__all__ = ["Gfx1250Instruction", "GFX1250_INSTRUCTIONS", "Wmma1250", "wmma1250", "RULES", "families", "chunk"]

WAVE = 32
_F8F6F4 = ("fp8", "bf8", "fp6", "bf6", "fp4")


@dataclass(frozen=True)
class Gfx1250Instruction:
    """One gfx1250 ``v_wmma_*`` row: ``D[16 x 16] (out) += A[16 x K] (a) * B[K x 16] (b)``; ``scale`` the
    K values one E8M0 scale covers (0: not scaled)."""

    name: str
    out: str
    a: str
    b: str
    k: int
    scale: int = 0
    m: int = 16
    n: int = 16

    @property
    def shape(self) -> tuple[int, int, int]:
        return (self.m, self.n, self.k)

    @property
    def arch(self) -> str:
        return "gfx1250"


def _rows() -> list[Gfx1250Instruction]:
    R = Gfx1250Instruction
    rows = [R("v_wmma_f32_16x16x4_f32", "f32", "f32", "f32", 4)]
    rows += [R(f"v_wmma_{o}_16x16x32_{t}", o, t, t, 32) for o, t in
             (("f32", "f16"), ("f16", "f16"), ("f32", "bf16"), ("bf16", "bf16"), ("bf16f32", "bf16"))]
    rows.append(R("v_wmma_i32_16x16x64_iu8", "i32", "iu8", "iu8", 64))
    for k in (64, 128):
        rows += [R(f"v_wmma_{o}_16x16x{k}_{a}_{b}", o, a, b, k) for o in ("f32", "f16")
                 for a in ("fp8", "bf8") for b in ("fp8", "bf8")]
    rows.append(R("v_wmma_f32_16x16x128_f8f6f4", "f32", "f8f6f4", "f8f6f4", 128))
    rows.append(R("v_wmma_scale_f32_16x16x128_f8f6f4", "f32", "f8f6f4", "f8f6f4", 128, scale=32))
    rows.append(R("v_wmma_scale16_f32_16x16x128_f8f6f4", "f32", "f8f6f4", "f8f6f4", 128, scale=16))
    return rows


#: ``GFX1250_INSTRUCTIONS[mnemonic]``: gfx1250's dense and scaled WMMA instructions.
GFX1250_INSTRUCTIONS: dict[str, Gfx1250Instruction] = {r.name: r for r in _rows()}

C_, G_ = sympy.symbols("C G", integer=True, positive=True)
_fl = sympy.floor
_h = _fl(lane / 16)

#: The rules as ``(row, col, block)`` of ``(lane, i)`` (A's orientation for A and B; B swaps them):
#: K in chunks of ``C`` values alternating between the half-waves; D rows ``i + 8h``; scales: ``G``
#: scales a row, lane ``l`` row ``l % 16``.
RULES: dict[str, tuple] = {
    "A": (sympy.Mod(lane, 16), sympy.Mod(i, C_) + C_ * _h + 2 * C_ * _fl(i / C_), sympy.Integer(0)),
    "D": (i + 8 * _h, sympy.Mod(lane, 16), sympy.Integer(0)),
    "D.flydsl16": (2 * sympy.Mod(i, 4) + _fl(i / 4) + 8 * _h, sympy.Mod(lane, 16), sympy.Integer(0)),
    "S": (sympy.Mod(lane, 16), i, sympy.Integer(0)),
}


def chunk(bits: int, form: str = "isa") -> int:
    """``C``: the K values a half-wave holds in a row before the other half takes the next ``C``.

    The ISA alternates the half-waves every 128 bits of a lane's registers (8 16-bit, 16 8-bit, 32 4-bit
    values; 32 6-bit values, 192 bits; 2 32-bit values, all of K = 4); Triton and FlyDSL (``form``
    ``"triton"`` / ``"flydsl"``) give 8-bit inputs chunks of 8, a K permutation of the ISA's.

    >>> chunk(16), chunk(8), chunk(8, "flydsl"), chunk(4)
    (8, 16, 8, 32)
    """
    table = {32: 2, 16: 8, 8: 16, 6: 32, 4: 32}
    if isinstance(bits, bool) or not isinstance(bits, int) or bits not in table:
        raise LayoutError(f"chunk: gfx1250's WMMA inputs are 32-, 16-, 8-, 6- or 4-bit; got {bits!r}")
    if form not in ("isa", "triton", "flydsl"):
        raise LayoutError(f"chunk: form {form!r} is not one of isa, triton, flydsl")
    return 8 if bits == 8 and form != "isa" else table[bits]


def _tv(lanes: list[tuple[int, int]], values: list[tuple[int, int]]) -> Layout:
    def mode(pairs: list[tuple[int, int]]) -> Any:
        kept = [(n, d) for n, d in pairs if n > 1] or [(1, 0)]
        return kept[0] if len(kept) == 1 else (tuple(n for n, _ in kept), tuple(d for _, d in kept))

    (ls, ld), (vs, vd) = mode(lanes), mode(values)
    return Layout((ls, vs), (ld, vd))


@dataclass(frozen=True)
class Wmma1250:
    """One gfx1250 WMMA instruction: its operands as fragments (wave32) and an MMA atom."""

    row: Gfx1250Instruction

    @property
    def name(self) -> str:
        return self.row.name

    @property
    def arch(self) -> str:
        return "gfx1250"

    @property
    def shape(self) -> tuple[int, int, int]:
        return self.row.shape

    def operand_dtype(self, operand: str, fmt: str | None = None) -> str:
        r = self.row
        t = {"A": r.a, "B": r.b, "D": r.out, "SA": "e8m0", "SB": "e8m0"}[operand]
        if t == "f8f6f4":
            t = "fp8" if fmt is None else dtype_name(fmt, op=f"{self.name}.fragment")
            if t not in _F8F6F4:
                raise LayoutError(f"{self.name}.fragment: format {fmt!r} is not one of {', '.join(_F8F6F4)}")
        elif fmt is not None:
            raise LayoutError(f"{self.name}.fragment: operand {operand} is {t}; only f8f6f4 operands take a format")
        return t

    def fragment(self, operand: str, fmt: str | None = None, form: str = "isa") -> MatrixFragment:
        """The register map of ``operand`` (``"A"``, ``"B"``, ``"C"``/``"D"``, ``"SA"``/``"SB"`` when scaled).

        ``fmt``: the element format of an ``f8f6f4`` operand (fp8 by default); its chunk ``C`` is 16 for
        fp8/bf8 and 32 for fp6/bf6/fp4 (:func:`chunk`). ``form``: ``"isa"``, or Triton's / FlyDSL's forms
        (``"triton"``, ``"flydsl"``): 8-bit A and B in chunks of 8 (a K permutation), and for
        ``"flydsl"`` FlyDSL's value order of a 16-bit D (VGPR by VGPR, low halves first: value ``v`` is
        row ``2*(v % 4) + v // 4 + 8h``).

        >>> str(wmma1250("v_wmma_f16_16x16x32_f16").fragment("D", form="flydsl").layout)
        '((16,2),(4,2)):((16,8),(2,1))'
        """
        if form not in ("isa", "triton", "flydsl"):
            raise LayoutError(f"{self.name}.fragment: form {form!r} is not one of isa, triton, flydsl")
        op = str(operand).upper()
        op = "D" if op == "C" else op
        if op not in ("A", "B", "D", "SA", "SB"):
            raise LayoutError(f"{self.name}.fragment: operand {operand!r} is not one of A, B, C, D, SA, SB")
        r = self.row
        if op in ("SA", "SB") and not r.scale:
            raise LayoutError(f"{self.name}.fragment: {op} exists only for the scaled v_wmma_scale* instructions")
        dtype = self.operand_dtype(op, fmt)
        params: tuple
        if op == "D" and form == "flydsl" and dtype_bits(dtype) == 16:
            layout, codomain = _tv([(16, 16), (2, 8)], [(4, 2), (2, 1)]), (16, 16)
            exprs, params = RULES["D.flydsl16"], ()
        elif op == "D":
            layout, codomain = _tv([(16, 16), (2, 8)], [(8, 1)]), (16, 16)
            exprs, params = RULES["D"], ()
        elif op in ("SA", "SB"):
            G = r.k // r.scale
            layout, codomain = _tv([(16, 1), (2, 0)], [(G, 16)]), (16, G)
            e = RULES["S"]
            exprs, params = (e if op == "SA" else (e[1], e[0], e[2])), ((G_, G),)
        else:
            C = chunk(dtype_bits(dtype), form)
            layout = _tv([(16, 1), (2, 16 * C)], [(C, 16), (r.k // (2 * C), 32 * C)])
            codomain = (16, r.k)
            e = RULES["A"]
            exprs, params = (e if op == "A" else (e[1], e[0], e[2])), ((C_, C),)
        return MatrixFragment(self.name, "gfx1250", op, dtype, layout, codomain, exprs, params, wave=WAVE,
                              source="gfx1250 rule; Triton 3.6 AMDWMMALayout(version=3); FlyDSL 0.5.0 gfx1250 atoms")

    def fragments(self, fmt: str | None = None) -> dict[str, MatrixFragment]:
        """A, B and D (and SA, SB when scaled) by operand name."""
        ops = ("A", "B", "D") + (("SA", "SB") if self.row.scale else ())
        return {op: self.fragment(op, fmt if op in ("A", "B") and self.row.a == "f8f6f4" else None) for op in ops}

    def atom(self, fmt: str | None = None) -> MMAAtom:
        """The instruction as an :class:`~layoutalg.tiled.MMAAtom` of 32 threads.

        >>> wmma1250("v_wmma_f32_16x16x4_f32").atom().shape_mnk
        (16, 16, 4)
        """
        f = self.fragments(fmt)
        r = self.row
        ta = f["A"].dtype
        tb = f["B"].dtype
        return MMAAtom(self.name, self.shape, Layout(WAVE, 1), f["A"].layout, f["B"].layout, f["D"].layout,
                       value_types=(r.out, ta, tb, r.out))

    def __repr__(self) -> str:
        return f"Wmma1250({self.name!r})"


_KEYS = {name_key(n): n for n in GFX1250_INSTRUCTIONS}


def wmma1250(name: str) -> Wmma1250:
    """wmma1250(name) -> gfx1250's WMMA instruction ``name`` (any case, with or without underscores).

    >>> wmma1250("V_WMMA_F32_16X16X128_F8F6F4").shape
    (16, 16, 128)
    """
    hit = _KEYS.get(name_key(name))
    if hit is None:
        raise LayoutError(f"wmma1250: no gfx1250 instruction {name!r}" + close_names(str(name).lower(), sorted(_KEYS.values())))
    return Wmma1250(GFX1250_INSTRUCTIONS[hit])


def families() -> tuple[AtomFamily, ...]:
    """gfx1250's WMMA family for the atom registry (kind ``mma``, wave32 atoms; f8f6f4 as fp8)."""
    def names() -> tuple[str, ...]:
        return tuple(GFX1250_INSTRUCTIONS)

    def build(n: str, **options: Any) -> MMAAtom | None:
        if name_key(n) not in _KEYS:
            return None
        fmt = options.pop("fmt", None)
        if options:
            raise LayoutError(f"mma_atom: the gfx1250 WMMA atom {n!r} takes only fmt=; got {sorted(options)}")
        try:
            return wmma1250(n).atom(fmt)
        except LayoutError:
            return None

    return (AtomFamily("amd", "gfx1250", "mma", "v_wmma.gfx1250", names, build),)
