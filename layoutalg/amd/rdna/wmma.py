"""RDNA3 and RDNA4 WMMA register maps as TV layouts, each proven equal to the ISA's rule.

RDNA's ``v_wmma_*_16x16x<K>_*`` (RDNA3 / RDNA4 ISA guides, "Wave Matrix Multiply Accumulate")
compute one ``D[16 x 16] += A[16 x K] * B[K x 16]`` per wave, in wave32 or wave64; RDNA4's
``v_swmmac_*`` take a 4:2 sparse A, stored compressed (16 x K/2).

*RDNA3.* A: lane ``l`` holds row ``l % 16`` whole, ``k = i``; lanes 16-31 (and 32-63 in wave64)
hold a copy of lanes 0-15 (the ISA asks for the duplicated halves). B: the same with column
``l % 16``. D: lane ``l`` holds column ``l % 16`` and, with ``P = wave/16``, row ``P*i + l // 16``;
a 16-bit D takes one VGPR a value, in bits [15:0], or [31:16] with ``OPSEL[2]`` (``opsel_hi``).

*RDNA4.* No copies: in wave32 the two 16-lane halves split K in chunks of ``C`` elements (``C = K/4``
for 16-bit types, ``K/2`` for 8- and 4-bit ones), alternating: ``k = i % C + C*half + 2C*(i // C)``.
D: row ``i + 8*half``, 16-bit results packed two a VGPR. In wave64 lane ``l >= 32`` holds the
second half of lane ``l - 32``'s wave32 registers (where a wave32 lane has one VGPR, lanes 32-63
hold nothing).

Worked by hand, wave32 RDNA3 ``v_wmma_f32_16x16x16_f16`` D: ``D[5][3]`` is column 3, row ``5 = 2*2 + 1``:
lane ``3 + 16 = 19``, value 2 (``v2``). As a TV layout onto ``m + 16*n``: ``((16,2),8):((16,1),2)``.

    >>> d = wmma("v_wmma_f32_16x16x16_f16", "rdna3").fragment("D", wave=32)
    >>> str(d.layout), d.coords(19, 2)
    ('((16,2),8):((16,1),2)', (5, 3, 0))
    >>> a = wmma("v_wmma_f32_16x16x16_f16", "rdna3").fragment("A", wave=64)
    >>> str(a.layout), a.owners(0, 0)   # the duplicated halves: four lanes hold A[0][0]
    ('((16,4),16):((1,0),16)', [(0, 0), (16, 0), (32, 0), (48, 0)])
    >>> a4 = wmma("v_wmma_f32_16x16x16_f16", "rdna4").fragment("A", wave=32)
    >>> str(a4.layout), [a4.coords(16, v)[1] for v in range(8)]
    ('((16,2),(4,2)):((1,64),(16,128))', [4, 5, 6, 7, 12, 13, 14, 15])

RDNA4's 16-bit A/B above is the ISA's literal register map; Triton and FlyDSL (``k_width=8``) use a
K permutation of it, which is fine for a dot product and not this map.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import sympy

from ...errors import LayoutError
from ...layout import Layout
from ...tiled import MMAAtom
from ..common import AtomFamily, MatrixFragment, arch_name, close_names, dtype_bits, dtype_name, i, lane, name_key

__all__ = ["WmmaInstruction", "WMMA_INSTRUCTIONS", "Wmma", "wmma", "wmma_for", "RULES", "FORMS", "rule", "families"]


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
    sparse: bool = False  # RDNA4 v_swmmac: 4:2 sparse A, stored compressed (M x K/2)

    @property
    def shape(self) -> tuple[int, int, int]:
        return (self.m, self.n, self.k)


def _rdna3() -> list[WmmaInstruction]:
    rows = [("f32", "f16"), ("f32", "bf16"), ("f16", "f16"), ("bf16", "bf16"), ("i32", "iu8"), ("i32", "iu4")]
    return [WmmaInstruction(f"v_wmma_{out}_16x16x16_{t}", "rdna3", out, t, t) for out, t in rows]


_FP8 = [("fp8", "fp8"), ("fp8", "bf8"), ("bf8", "fp8"), ("bf8", "bf8")]


def _rdna4() -> list[WmmaInstruction]:
    rows = []
    for kind, sparse, k2 in (("wmma", False, 1), ("swmmac", True, 2)):
        for out, t, k in [("f32", "f16", 16), ("f32", "bf16", 16), ("f16", "f16", 16), ("bf16", "bf16", 16),
                          ("i32", "iu8", 16), ("i32", "iu4", 16), ("i32", "iu4", 32)]:
            rows.append(WmmaInstruction(f"v_{kind}_{out}_16x16x{k * k2}_{t}", "rdna4", out, t, t, k=k * k2, sparse=sparse))
        rows += [WmmaInstruction(f"v_{kind}_f32_16x16x{16 * k2}_{a}_{b}", "rdna4", "f32", a, b, k=16 * k2, sparse=sparse)
                 for a, b in _FP8]
    return rows


#: ``WMMA_INSTRUCTIONS[arch][mnemonic]``: RDNA3's ``v_wmma``; RDNA4's ``v_wmma`` and ``v_swmmac``.
WMMA_INSTRUCTIONS: dict[str, dict[str, WmmaInstruction]] = {"rdna3": {r.name: r for r in _rdna3()},
                                                           "rdna4": {r.name: r for r in _rdna4()}}

P_, C_, S_ = sympy.symbols("P C S", integer=True, positive=True)
_fl = sympy.floor
_h = sympy.Mod(_fl(lane / 16), 2)  # RDNA4: which half of a 32-lane group
_v = i + S_ * _fl(lane / 32)       # RDNA4: the wave32 value a wave64 lane's value i stands for
_k4 = sympy.Mod(_v, C_) + C_ * _h + 2 * C_ * _fl(_v / C_)

#: The rules as ``(row, col, block)`` of ``(lane, i)``, by ``"<arch>.<operand>"`` (A's orientation for A and B).
#: RDNA3: ``P = wave/16`` lane groups of D. RDNA4: K in chunks of ``C`` elements alternating between the
#: two 16-lane halves; a wave64 lane ``l`` holds the second half (``S`` values on) of lane ``l - 32``'s
#: wave32 registers.
RULES: dict[str, tuple] = {
    "rdna3.A": (sympy.Mod(lane, 16), i, sympy.Integer(0)),
    "rdna3.D": (P_ * i + _fl(lane / 16), sympy.Mod(lane, 16), sympy.Integer(0)),
    "rdna4.A": (sympy.Mod(lane, 16), _k4, sympy.Integer(0)),
    "rdna4.D": (_v + 8 * _h, sympy.Mod(lane, 16), sympy.Integer(0)),
}


def _chunk(row: WmmaInstruction, operand: str, form: str = "isa") -> tuple[int, int]:
    """RDNA4 ``(C, V32)``: K-chunk and values a lane holds in wave32 for input ``operand`` (``form``: :data:`FORMS`)."""
    K = row.k // 2 if (row.sparse and operand == "A") else row.k
    bits = dtype_bits(row.a if operand == "A" else row.b)
    return (K // 4 if bits == 16 and form == "isa" else K // 2), K // 2


#: The forms of a fragment: the ISA's register map, or the form Triton (``k_width=8``) and FlyDSL give RDNA4's
#: 16-bit A and B -- each half-wave holds K/2 consecutive values (the ISA: K/4 values, alternating), a K
#: permutation (K bits 2 and 3 swapped) that a dot product does not see.
FORMS = ("isa", "triton", "flydsl")


def rule(row: WmmaInstruction, operand: str, wave: int, form: str = "isa") -> tuple[tuple, tuple]:
    """``(rule, params)`` of ``operand`` (``"A"``, ``"B"``, ``"D"``) of ``row`` at wave size ``wave``."""
    key = "A" if operand in ("A", "B") else "D"
    exprs = RULES[f"{row.arch}.{key}"]
    if operand == "B":
        exprs = (exprs[1], exprs[0], exprs[2])
    if row.arch == "rdna3":
        return exprs, (((P_, wave // 16),) if key == "D" else ())
    if key == "D":
        return exprs, ((S_, 4),)
    C, V32 = _chunk(row, operand, form)
    return exprs, ((C_, C), (S_, max(1, V32 // 2)))


def _check_wave(wave: int, op: str) -> int:
    if wave not in (32, 64):
        raise LayoutError(f"{op}: wave size {wave!r} is not 32 or 64")
    return int(wave)


def _tv(lanes: list[tuple[int, int]], values: list[tuple[int, int]]) -> Layout:
    def mode(pairs: list[tuple[int, int]]) -> tuple:
        kept = [(n, d) for n, d in pairs if n > 1] or [(1, 0)]
        return kept[0] if len(kept) == 1 else (tuple(n for n, _ in kept), tuple(d for _, d in kept))

    (ls, ld), (vs, vd) = mode(lanes), mode(values)
    return Layout((ls, vs), (ld, vd))


def _rdna3_layout(op: str, W: int) -> Layout:
    """RDNA3: A/B lanes (row or col, copies with stride 0), values k; D lanes (col, group), values row/P."""
    P = W // 16
    if op in ("A", "B"):
        return _tv([(16, 1), (P, 0)], [(16, 16)])
    return _tv([(16, 16), (P, 1)], [(16 // P, P)])


def _rdna4_layout(r: WmmaInstruction, op: str, W: int, form: str = "isa") -> Layout:
    """RDNA4 onto ``m + 16*k`` (A, B) / ``m + 16*n`` (D): lanes (row, half, wave64 upper), values in chunks."""
    if op == "D":  # row = i + 4*upper + 8*half (wave64), i + 8*half (wave32)
        return _tv([(16, 16), (2, 8), (W // 32, 4)], [(8 * 32 // W, 1)])
    C, V32 = _chunk(r, op, form)
    bits = dtype_bits(r.a if op == "A" else r.b)
    if W == 32 or V32 * bits <= 32:  # wave32, or one VGPR a lane: lanes 32-63 hold nothing
        return _tv([(16, 1), (2, 16 * C)], [(min(C, V32), 16), (V32 // C, 16 * 2 * C)])
    S = V32 // 2  # wave64: the upper lanes take the second half of the wave32 values
    if S >= C:
        return _tv([(16, 1), (2, 16 * C), (2, 16 * 2 * S)], [(C, 16), (S // C, 16 * 2 * C)])
    return _tv([(16, 1), (2, 16 * C), (2, 16 * S)], [(S, 16)])


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

    def fragment(self, operand: str, wave: int = 32, opsel_hi: bool = False, form: str = "isa") -> MatrixFragment:
        """The register map of ``operand`` (``"A"``, ``"B"``, ``"C"``/``"D"``) in a wave of ``wave`` lanes.

        ``opsel_hi``: a 16-bit D in bits [31:16] of its VGPRs (``OPSEL[2]``) instead of [15:0].
        ``form``: ``"isa"`` (the ISA's register map), or ``"triton"`` / ``"flydsl"``: the K permutation
        Triton (``k_width=8``) and FlyDSL use for RDNA4's 16-bit A and B (:data:`FORMS`; wave32; the
        other operands have one form).

        >>> str(wmma("v_wmma_f32_16x16x16_f16", "rdna4").fragment("A", form="flydsl").layout)
        '((16,2),8):((1,128),16)'
        """
        if form not in FORMS:
            raise LayoutError(f"{self.name}.fragment: form {form!r} is not one of {', '.join(FORMS)}")
        if form != "isa" and wave != 32:
            raise LayoutError(f"{self.name}.fragment: form={form!r} is Triton's / FlyDSL's wave32 form; use wave=32")
        op = str(operand).upper()
        op = "D" if op == "C" else op
        if op not in ("A", "B", "D"):
            raise LayoutError(f"{self.name}.fragment: operand {operand!r} is not one of A, B, C, D")
        W = _check_wave(wave, f"{self.name}.fragment")
        r = self.row
        dtype = r.out if op == "D" else r.a if op == "A" else r.b
        K = r.k // 2 if (r.sparse and op == "A") else r.k
        codomain = (16, 16) if op == "D" else (16, K)
        layout = _rdna3_layout(op, W) if r.arch == "rdna3" else _rdna4_layout(r, op, W, form)
        half = r.arch == "rdna3" and op == "D" and dtype in ("f16", "bf16")
        if opsel_hi and not half:
            raise LayoutError(f"{self.name}.fragment: opsel_hi places RDNA3's 16-bit D; operand {op} is {dtype}")
        exprs, params = rule(r, op, W, form)
        return MatrixFragment(self.name, r.arch, op, dtype, layout, codomain, exprs, params, wave=W,
                              sparse=r.sparse and op == "A", slot_bits=32 if half else 0,
                              bit_offset=16 if opsel_hi else 0,
                              source=f"{r.arch.upper()} ISA guide; AMD Matrix Instruction Calculator")

    def fragments(self, wave: int = 32) -> dict[str, MatrixFragment]:
        return {op: self.fragment(op, wave) for op in ("A", "B", "D")}

    def atom(self, wave: int = 32) -> MMAAtom:
        """The instruction as an :class:`~layoutalg.tiled.MMAAtom` of ``wave`` threads (ThrID ``wave:1``).

        A and B repeat over the lane groups (stride 0), as the ISA asks the halves to be duplicated.

        >>> str(wmma("v_wmma_f32_16x16x16_f16", "rdna3").atom(32).layout_a_tv)
        '((16,2),16):((1,0),16)'
        """
        W = _check_wave(wave, f"{self.name}.atom")
        f = self.fragments(W)
        r = self.row
        short = [op for op in ("A", "B") if f[op].num_threads != W]
        if short:
            raise LayoutError(f"{self.name}.atom: in wave{W} operand {short[0]} lives in lanes 0-{f[short[0]].num_threads - 1} "
                              "only (one VGPR a lane in wave32); use wave=32")
        return MMAAtom(self.name, self.shape, Layout(W, 1), f["A"].layout, f["B"].layout, f["D"].layout,
                       value_types=(r.out, r.a, r.b, r.out), a_k_compression=2 if r.sparse else 1)

    def __repr__(self) -> str:
        return f"Wmma({self.name!r}, arch={self.arch!r})"


_KEYS = {arch: {name_key(n): n for n in rows} for arch, rows in WMMA_INSTRUCTIONS.items()}


def wmma(name: str, arch: str | None = None) -> Wmma:
    """wmma(name, arch) -> the WMMA instruction ``name`` (any case or underscores) on ``arch`` (default: the newest).

    >>> wmma("V_WMMA_I32_16X16X16_IU8", "gfx1100").name, wmma("v_swmmac_f32_16x16x32_f16").arch
    ('v_wmma_i32_16x16x16_iu8', 'rdna4')
    """
    archs = ("rdna4", "rdna3") if arch is None else (arch_name(arch),)
    for a in archs:
        if a not in _KEYS:
            raise LayoutError(f"wmma: no WMMA on {a} (WMMA is RDNA's: {', '.join(_KEYS)})")
        hit = _KEYS[a].get(name_key(name))
        if hit is not None:
            return Wmma(WMMA_INSTRUCTIONS[a][hit])
    pool = sorted({n for a in archs for n in _KEYS[a].values()})
    raise LayoutError(f"wmma: no instruction {name!r} on {'any RDNA' if arch is None else archs[0]}"
                      + close_names(str(name).lower(), pool))


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
    def fam(a: str) -> AtomFamily:
        def names() -> tuple[str, ...]:
            return tuple(WMMA_INSTRUCTIONS[a])

        def build(n: str, **options: Any) -> MMAAtom | None:
            if options:
                raise LayoutError(f"mma_atom: the WMMA atom {n!r} takes no options; got {sorted(options)}")
            try:
                return wmma(n, a).atom(32)
            except LayoutError:
                return None

        return AtomFamily("amd", a, "mma", f"v_wmma.{a}", names, build)

    return tuple(fam(a) for a in WMMA_INSTRUCTIONS)
