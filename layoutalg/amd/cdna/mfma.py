"""MFMA register maps (CDNA1-CDNA4) as TV layouts, each proven equal to the ISA's rule.

A ``v_mfma`` instruction runs on a wave of 64 lanes and computes ``blocks`` independent products
``D[M x N] += A[M x K] * B[K x N]``. The CDNA ISA guides (chapter "Matrix Arithmetic Instructions",
the operand layout figures) place the operands by two rules, the same on every CDNA generation:

*Inputs* (A; B is the same with N and column ``j`` in place of M and row ``i``). A lane holds
``E = M*K*blocks/64`` consecutive K-elements of one row in consecutive register bits; the lanes
run over the rows first, then the blocks, then the groups of ``E`` columns::

    lane = i + M*block + M*blocks*(k // E)       value = k % E

*Output* D (and C). Registers are filled in "multi-rows" of ``H`` rows (``H = 4``; 1 for f64
results), N lanes wide: row ``i``'s group ``(i // H) % G`` picks a band of N lanes (``G = min(M/H,
64/N)`` bands), ``i % H`` the register within a multi-row, and further multi-rows, then blocks
that no longer fit the lanes (``64/(N*G)`` blocks do), move to later registers::

    lane  = j + N*(block % BL) + N*BL*((i // H) % G)                    with BL = 64 / (N*G)
    value = i % H + H*(i // (H*G)) + (M/G)*(block // BL)

Worked by hand, ``v_mfma_f32_32x32x8_f16`` D (M = N = 32, H = 4, G = 2, BL = 1): ``D[13][5]`` is
row 13, band ``(13 // 4) % 2 = 1``: lane ``5 + 32 = 37``, value ``13 % 4 + 4*(13 // 8) = 5`` --
AMD's calculator prints ``v5{37} = D[13][5]``. As a TV layout onto ``m + 32*n``:
``((32,2),(4,4)):((32,4),(1,8))`` (FlyDSL prints the same).

    >>> d = mfma("v_mfma_f32_32x32x8_f16").fragment("D")
    >>> str(d.layout), d.coords(37, 5)
    ('((32,2),(4,4)):((32,4),(1,8))', (13, 5, 0))
    >>> from layoutalg.verify import verify
    >>> from layoutalg.amd.common import lane, i
    >>> verify(d, d.formula, (lane, i)).method
    'symbolic'

The layouts below are built from shapes and strides; the formulas (:data:`RULES`, :func:`rule`) are
the two rules above written as integer arithmetic in ``(lane, i)`` and the instruction's sizes; neither reads the other, and
:func:`layoutalg.verify.verify` proves them equal. ``tests/test_amd_mfma.py`` also replays AMD's
Matrix Instruction Calculator for every instruction it lists (CDNA1-3); CDNA4 has no calculator
and follows the same two rules (its ISA guide draws them alike); tests/test_amd_mfma_triton.py
checks CDNA3 and CDNA4 shapes against Triton's linear layouts.

*CDNA4's double-K sparse B.* The ``v_smfmac`` shapes CDNA4 adds (16x16x64 / 32x32x32 16-bit,
16x16x128 / 32x32x64 8-bit: ``E*bits = 256``) read B as two dense halves of K: a lane holds ``E/2``
consecutive K-elements of each half (``k = (K/2)*(e // (E/2)) + (E/2)*group + e % (E/2)``), as
composable_kernel's CK Tile declares them (``sparse_gfx9.hpp``: ``kBKNumAccess = 2`` for the gfx950-only
``smfmac``; 1 for CDNA3's, whose contiguous map AMD's calculator prints); ``tests/test_amd_cdna4_second_source.py``.

The broadcast modifiers (CBSZ/ABID: a block of A feeds a group of blocks; BLGP: B read from other
lanes) make the map from registers to elements one-to-many, so they are not TV layouts:
:meth:`Mfma.reads` lists what each register feeds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import sympy

from ...errors import LayoutError
from ...layout import Layout
from ...tiled import MMAAtom
from ..common import AtomFamily, MatrixFragment, arch_name, close_names, dtype_bits, dtype_name, i, lane, name_key
from .isa import F8F6F4, INSTRUCTIONS, MfmaInstruction, spellings

__all__ = ["Mfma", "mfma", "mfma_for", "catalog", "rule", "RULES", "blgp_lane", "families", "names", "build",
           "ARCH_ORDER"]

#: CDNA generations, oldest first.
ARCH_ORDER = ("cdna1", "cdna2", "cdna3", "cdna4")
WAVE = 64
_OPERANDS = ("A", "B", "C", "D", "SA", "SB")


def _mode(pairs: list[tuple[int, int]]) -> tuple[Any, Any]:
    """One TV mode from (extent, stride) pairs, extents of 1 left out (``1:0`` if none is left)."""
    kept = [(s, d) for s, d in pairs if s > 1]
    if not kept:
        return 1, 0
    if len(kept) == 1:
        return kept[0]
    return tuple(s for s, _ in kept), tuple(d for _, d in kept)


def _tv(lanes: list[tuple[int, int]], values: list[tuple[int, int]]) -> Layout:
    (ls, ld), (vs, vd) = _mode(lanes), _mode(values)
    return Layout((ls, vs), (ld, vd))


def _h(out: str) -> int:
    """Rows of one output multi-row: 4 (1 for 64-bit results)."""
    return 1 if out == "f64" else 4


def _input_layout(rows: int, K: int, blocks: int) -> Layout:
    """A (rows = M) or B (rows = N) onto ``r + rows*k + rows*K*block``: lanes (r, block, k-group), values k % E."""
    E = rows * K * blocks // WAVE
    return _tv([(rows, 1), (blocks, rows * K), (WAVE // (rows * blocks), E * rows)], [(E, rows)])


def _split_b(row: MfmaInstruction) -> int:
    """CDNA4's double-K ``v_smfmac``: the half-lane count ``E/2`` of its split B (0 for every other instruction)."""
    if not (row.sparse and row.arch == "cdna4"):
        return 0
    E = row.n * row.k // WAVE
    return E // 2 if E * dtype_bits(row.b) == 256 else 0


def _split_b_layout(N: int, K: int, S: int) -> Layout:
    """CDNA4 double-K sparse B onto ``n + N*k``: lanes (n, group), values (k within a half, half)."""
    return _tv([(N, 1), (WAVE // N, S * N)], [(S, N), (2, N * K // 2)])


def _output_layout(M: int, N: int, blocks: int, out: str) -> Layout:
    """D onto ``m + M*n + M*N*block``: lanes (j, block % BL, band), values (i % H, multi-row, block // BL)."""
    H = _h(out)
    G = min(M // H, WAVE // N)
    BL = WAVE // (N * G)
    return _tv([(N, M), (BL, M * N), (G, H)], [(H, 1), (M // (H * G), H * G), (blocks // BL, M * N * BL)])


_SIZE = dict(integer=True, positive=True)
R_, B_, E_ = sympy.symbols("R blocks E", **_SIZE)
N_, H_, G_, BL_, Q_ = sympy.symbols("N H G BL Q", **_SIZE)
S_, KH_ = sympy.symbols("S KH", **_SIZE)
_fl = sympy.floor

#: The ISA's placement rules, inverted to ``(row, col, block)`` of ``(lane, i)`` (A's orientation for inputs):
#: inputs ``r = lane % R``, ``block = (lane // R) % blocks``, ``k = E*(lane // (R*blocks)) + i``;
#: output ``j = lane % N``, ``row = i % H + H*band + H*G*((i // H) % Q)`` with ``band = lane // (N*BL)``
#: and ``Q = M/(H*G)`` multi-rows, ``block = (lane // N) % BL + BL*(i // (H*Q))``;
#: scales (CDNA4) ``r = lane % R``, ``kblock = lane // R``.
RULES: dict[str, tuple] = {
    "input": (sympy.Mod(lane, R_), E_ * _fl(lane / (R_ * B_)) + i, sympy.Mod(_fl(lane / R_), B_)),
    "output": (sympy.Mod(i, H_) + H_ * _fl(lane / (N_ * BL_)) + H_ * G_ * sympy.Mod(_fl(i / H_), Q_),
               sympy.Mod(lane, N_), sympy.Mod(_fl(lane / N_), BL_) + BL_ * _fl(i / (H_ * Q_))),
    "scale": (sympy.Mod(lane, R_), _fl(lane / R_), sympy.Integer(0)),
    "input.split": (sympy.Mod(lane, R_), KH_ * _fl(i / S_) + S_ * _fl(lane / R_) + sympy.Mod(i, S_), sympy.Integer(0)),
}


def rule(row: MfmaInstruction, operand: str) -> tuple[tuple, tuple]:
    """``(rule, params)``: the ISA rule of ``operand`` (A's orientation: B's swaps row and col) and its sizes.

    >>> exprs, params = rule(INSTRUCTIONS["cdna3"]["v_mfma_f32_32x32x8_f16"], "A")
    >>> [int(sympy.sympify(e).xreplace(dict(params)).subs({lane: 37, i: 2})) for e in exprs]
    [5, 6, 0]
    """
    M, N, K, B = row.m, row.n, row.k, row.blocks
    if operand == "B" and _split_b(row):
        r, k, blk = RULES["input.split"]
        return (k, r, blk), ((R_, N), (S_, _split_b(row)), (KH_, K // 2))
    if operand in ("A", "B"):
        R = M if operand == "A" else N
        Kr = K // 2 if (row.sparse and operand == "A") else K  # sparse A: the compressed K/2 columns
        r, k, blk = RULES["input"]
        return ((r, k, blk) if operand == "A" else (k, r, blk)), ((R_, R), (B_, B), (E_, R * Kr * B // WAVE))
    if operand in ("C", "D"):
        H = _h(row.out)
        G = min(M // H, WAVE // N)
        return RULES["output"], ((N_, N), (H_, H), (G_, G), (BL_, WAVE // (N * G)), (Q_, M // (H * G)))
    if operand in ("SA", "SB"):
        r, kb, z = RULES["scale"]
        return ((r, kb, z) if operand == "SA" else (kb, r, z)), ((R_, M if operand == "SA" else N),)
    raise LayoutError(f"rule: operand {operand!r} is not one of {', '.join(_OPERANDS)}")


@dataclass(frozen=True)
class Mfma:
    """One MFMA instruction of one CDNA generation: its ISA row, operands as fragments, and an MMA atom.

    >>> m = mfma("V_MFMA_F32_4X4X4_16B_F16")
    >>> m.name, m.arch, m.row.blocks, str(m.fragment("D").layout)
    ('v_mfma_f32_4x4x4_16b_f16', 'cdna4', 16, '((4,16),4):((4,16),1)')
    """

    row: MfmaInstruction

    @property
    def name(self) -> str:
        return self.row.name

    @property
    def arch(self) -> str:
        return self.row.arch

    @property
    def shape(self) -> tuple[int, int, int]:
        return self.row.shape

    @property
    def spellings(self) -> tuple[str, ...]:
        """Every mnemonic spelling of this instruction (:func:`layoutalg.amd.cdna.isa.spellings`)."""
        return spellings(self.row)

    def operand_dtype(self, operand: str, fmt: str | None = None) -> str:
        """Element type of ``operand``; ``fmt`` picks the format of an ``f8f6f4`` A or B (:data:`F8F6F4`)."""
        r = self.row
        t = {"A": r.a, "B": r.b, "C": r.out, "D": r.out, "SA": "e8m0", "SB": "e8m0"}[operand]
        if t == "f8f6f4":
            t = dtype_name(fmt or "fp8", op=f"{self.name} {operand}")
            if t not in F8F6F4:
                raise LayoutError(f"{self.name}: operand {operand} format {fmt!r} is not one of {', '.join(F8F6F4)}")
        elif fmt is not None and dtype_name(fmt) != t:
            raise LayoutError(f"{self.name}: operand {operand} is {t}, not {fmt!r} (only f8f6f4 operands take a format)")
        return t

    def fragment(self, operand: str, fmt: str | None = None) -> MatrixFragment:
        """The register map of ``operand`` (``"A"``, ``"B"``, ``"C"``/``"D"``; ``"SA"``/``"SB"`` for scaled MFMA).

        ``fmt`` chooses the element format of an ``f8f6f4`` operand (the CBSZ / BLGP field);
        the map of elements to lanes is the same for every format, the register bits differ.
        """
        op = str(operand).upper()
        if op not in _OPERANDS:
            raise LayoutError(f"{self.name}.fragment: operand {operand!r} is not one of {', '.join(_OPERANDS)}")
        r = self.row
        if op in ("SA", "SB") and not r.scaled:
            raise LayoutError(f"{self.name}.fragment: {op} exists only for scaled MFMA (v_mfma_scale_*)")
        dtype = self.operand_dtype(op, fmt)
        M, N, K, B = r.m, r.n, r.k, r.blocks
        if op == "A":  # a sparse A holds the compressed M x K/2 matrix
            Ka = K // 2 if r.sparse else K
            layout, codomain, blocks = _input_layout(M, Ka, B), (M, Ka), B
        elif op == "B":
            split = _split_b(r)
            layout = _split_b_layout(N, K, split) if split else _input_layout(N, K, B)
            codomain, blocks = (N, K), B
        elif op in ("C", "D"):
            layout, codomain, blocks = _output_layout(M, N, B, r.out), (M, N), B
        else:
            R = M if op == "SA" else N
            layout, codomain, blocks = _tv([(R, 1), (WAVE // R, R)], [(1, 0)]), (R, K // 32), 1
        src = {"cdna4": "CDNA4 ISA guide (same rules as CDNA3; no calculator for CDNA4)"}.get(
            r.arch, "CDNA ISA guide; AMD Matrix Instruction Calculator")
        exprs, params = rule(r, op)
        return MatrixFragment(self.name, r.arch, "D" if op == "C" else op, dtype, layout, codomain,
                              exprs, params, blocks=blocks, wave=WAVE, sparse=r.sparse and op == "A", source=src)

    @property
    def has_cbsz_abid(self) -> bool:
        """Whether CBSZ/ABID broadcast A's blocks: multi-block MFMA except f64 (v_smfmac use the fields otherwise)."""
        r = self.row
        return r.blocks > 1 and r.out != "f64" and not r.sparse

    @property
    def has_blgp(self) -> bool:
        """Whether BLGP swizzles B's lanes. CDNA1: always; CDNA2: except f64; CDNA3/4: f32 inputs and the
        multi-block 16-bit and i8 forms (elsewhere the field is NEG -- f64 on CDNA3 -- or a format select)."""
        r = self.row
        if r.sparse or r.scaled or r.out == "f64" or r.a in ("f8f6f4", "xf32", "fp8", "bf8"):
            return False
        if r.arch in ("cdna1", "cdna2"):
            return True
        return r.a == "f32" or r.blocks > 1

    def reads(self, operand: str, cbsz: int = 0, abid: int = 0, blgp: int = 0) -> dict[tuple[int, int], list[tuple]]:
        """``{(lane, value): [(row, col, block), ...]}``: what the instruction reads from each register of A or B.

        Without modifiers every register is read once, as its fragment says. The ISA's broadcast
        modifiers change that (no longer a TV layout: one register may feed several blocks, others
        none): ``cbsz``/``abid`` (A, multi-block instructions) -- every group of ``2**cbsz`` blocks
        reads block ``abid`` of the group's A; ``blgp`` (B) -- the lane B is read from is
        ``blgp_lane(lane, blgp)``. Registers nothing reads are left out.

        >>> r = mfma("v_mfma_f32_4x4x4_16b_f16", "cdna3").reads("A", cbsz=2, abid=1)
        >>> sorted(r)[0], r[(4, 0)]
        ((4, 0), [(0, 0, 0), (0, 0, 1), (0, 0, 2), (0, 0, 3)])
        """
        op = str(operand).upper()
        r = self.row
        B = r.blocks
        if op not in ("A", "B"):
            raise LayoutError(f"{self.name}.reads: operand {operand!r} is not A or B (the modifiers act on inputs)")
        if (cbsz or abid) and not (op == "A" and self.has_cbsz_abid):
            raise LayoutError(f"{self.name}.reads: cbsz/abid broadcast blocks of A of a multi-block, non-f64 MFMA "
                              f"(not operand {op} of this one)")
        if not 0 <= cbsz <= max(B.bit_length() - 1, 0) or not 0 <= abid < 2 ** cbsz:
            raise LayoutError(f"{self.name}.reads: cbsz {cbsz} / abid {abid} out of range (cbsz 0..log2(blocks = {B}), "
                              "abid < 2**cbsz)")
        if blgp and not (op == "B" and 0 < blgp < 8 and self.has_blgp):
            raise LayoutError(f"{self.name}.reads: blgp {blgp} is not a B lane pattern 1..7 of this instruction "
                              f"(has_blgp is {self.has_blgp})")
        f = self.fragment(op)
        out: dict[tuple[int, int], list[tuple]] = {}
        for ln in range(f.num_threads):
            for v in range(f.num_values):
                row, col, blk = f.coords(ln, v)
                if op == "A" and cbsz:
                    base = blk >> cbsz << cbsz
                    if blk != base + abid:
                        continue
                    out[(ln, v)] = [(row, col, b) for b in range(base, base + 2 ** cbsz)]
                else:
                    out.setdefault((blgp_lane(ln, blgp), v), []).append((row, col, blk))
        return {key: sorted(val, key=lambda e: (e[2], e[0], e[1])) for key, val in sorted(out.items())}

    def fragments(self) -> dict[str, MatrixFragment]:
        """A, B and D (and SA, SB for scaled MFMA) by operand name."""
        ops = ("A", "B", "D") + (("SA", "SB") if self.row.scaled else ())
        return {op: self.fragment(op) for op in ops}

    def atom(self, fmt_a: str | None = None, fmt_b: str | None = None) -> MMAAtom:
        """The instruction as an :class:`~layoutalg.tiled.MMAAtom` over one wave (ThrID ``64:1``).

        One block: shape ``(M, N, K)``. Several blocks: the blocks side by side along N, shape
        ``(M, N*blocks, K)``, every block reading the same A (its layout repeats A over the
        blocks with stride 0: load A once per block, or broadcast it with CBSZ/ABID) -- the 4x64
        form Triton uses for ``v_mfma_*_4x4x4_16b_*``. Block ``b``'s column ``j`` of B and D is
        column ``j + N*b`` of the wide B and D (D's stacked index is already that).

        >>> a = mfma("v_mfma_f32_4x4x4_16b_f16").atom()
        >>> a.shape_mnk, str(a.layout_a_tv)
        ((4, 64, 4), '((4,16),4):((1,0),4)')
        """
        r = self.row
        M, N, K, B = r.m, r.n, r.k, r.blocks
        a = self.fragment("A", fmt_a).layout
        if B > 1:  # A's block stride (M*K) becomes 0: every block reads block 0's A
            a = _tv([(M, 1), (B, 0), (WAVE // (M * B), (M * K * B // WAVE) * M)], [(M * K * B // WAVE, M)])
        b = self.fragment("B", fmt_b).layout
        if B > 1:  # B's (k, block) -> n + N*block + N*blocks*k: the blocks become columns of one N*blocks-wide B
            E = N * K * B // WAVE
            b = _tv([(N, 1), (B, N), (WAVE // (N * B), E * N * B)], [(E, N * B)])
        d = self.fragment("D").layout
        types = (r.out, self.operand_dtype("A", fmt_a), self.operand_dtype("B", fmt_b), r.out)
        notes = "" if B == 1 else f"{B} blocks side by side along N; A repeated over the blocks"
        return MMAAtom(self.name, (M, N * B, K), Layout(WAVE, 1), a, b, d, value_types=types, notes=notes,
                       a_k_compression=2 if r.sparse else 1)

    def __repr__(self) -> str:
        r = self.row
        return f"Mfma({r.name!r}, arch={r.arch!r}, MxNxK={r.m}x{r.n}x{r.k}, blocks={r.blocks})"


def blgp_lane(ln: int, blgp: int) -> int:
    """The lane an MFMA reads B from for lane ``ln`` under the BLGP pattern ``blgp`` (CDNA ISA, "BLGP").

    0: as is; 1: lanes 0-31 broadcast to both halves; 2: lanes 32-63 broadcast; 3: rotate down by
    16 lanes; 4-7: lanes ``16*(blgp-4) .. +15`` broadcast to all four quarters.

    >>> [blgp_lane(40, p) for p in range(8)]
    [40, 8, 40, 56, 8, 24, 40, 56]
    """
    if not 0 <= blgp < 8:
        raise LayoutError(f"blgp_lane: blgp {blgp} is not a pattern 0..7")
    if blgp == 0:
        return ln
    if blgp in (1, 2):
        return ln % 32 + 32 * (blgp - 1)
    if blgp == 3:
        return (ln + 16) % 64
    return ln % 16 + 16 * (blgp - 4)


# --------------------------------------------------------------------------------- lookup
def _keys(arch: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for row in INSTRUCTIONS[arch].values():
        for s in spellings(row):
            out.setdefault(name_key(s), row.name)
    for row in INSTRUCTIONS[arch].values():  # the own spelling wins over another's alias
        out[name_key(row.name)] = row.name
    return out


_KEYS = {arch: _keys(arch) for arch in ARCH_ORDER}


def mfma(name: str, arch: str | None = None) -> Mfma:
    """mfma(name, arch) -> the MFMA instruction ``name`` names on ``arch`` (default: the newest CDNA having it).

    Any spelling: ``v_mfma_f32_32x32x8_f16``, ``V_MFMA_F32_32X32X8F16``, ``v_mfma_f32_32x32x1_2b_f32``
    or CDNA1's ``v_mfma_f32_32x32x1f32``. ``arch`` is a family, chip or product (``gfx942``, ``mi300x``).
    An unknown name raises LayoutError naming the closest ones.

    >>> mfma("V_MFMA_F32_32X32X8F16").name, mfma("v_mfma_f32_32x32x8_f16", "gfx908").name
    ('v_mfma_f32_32x32x8_f16', 'v_mfma_f32_32x32x8f16')
    """
    archs = ARCH_ORDER[::-1] if arch is None else (arch_name(arch),)
    for a in archs:
        if a not in _KEYS:
            raise LayoutError(f"mfma: {a} has no MFMA (MFMA is CDNA's: {', '.join(ARCH_ORDER)})")
        hit = _KEYS[a].get(name_key(name))
        if hit is not None:
            return Mfma(INSTRUCTIONS[a][hit])
    pool = sorted({n for a in archs for n in INSTRUCTIONS[a]})
    where = "any CDNA" if arch is None else archs[0]
    raise LayoutError(f"mfma: no instruction {name!r} on {where}" + close_names(str(name).lower(), pool))


def mfma_for(instr_shape: Any, a: str, arch: str = "cdna3", b: str | None = None, blocks: int | None = None,
             sparse: bool = False) -> Mfma:
    """mfma_for((M, N, K), a_type, arch) -> the MFMA Triton means by ``AMDMFMALayout(instr_shape=[M, N, K])``.

    ``a`` / ``b`` are the element types of A and B (Triton's names work: ``fp16``, ``bf16``,
    ``float8e4b8``); ``blocks`` picks among instructions of one shape (default: one block, else
    the only one); ``sparse=True`` asks for the 4:2 sparse ``v_smfmac`` of that shape. Triton's
    ``mfma<v>`` versions 1-4 are accepted as ``arch``.

    >>> mfma_for((32, 32, 8), "fp16", "gfx942").name, mfma_for([16, 16, 32], "fp8", "mfma3", b="bf8").name
    ('v_mfma_f32_32x32x8_f16', 'v_mfma_f32_16x16x32_fp8_bf8')
    """
    try:
        M, N, K = (int(x) for x in instr_shape)
    except (TypeError, ValueError):
        raise LayoutError(f"mfma_for: instr_shape {instr_shape!r} is not [M, N, K]") from None
    arch = arch_name(arch)
    if arch not in INSTRUCTIONS:
        raise LayoutError(f"mfma_for: {arch} has no MFMA (MFMA is CDNA's: {', '.join(ARCH_ORDER)})")
    ta = dtype_name(a, op="mfma_for")
    tb = ta if b is None else dtype_name(b, op="mfma_for")
    rows = [r for r in INSTRUCTIONS[arch].values() if r.shape == (M, N, K) and not r.scaled and r.sparse == sparse
            and (r.a, r.b) in ((ta, tb), ("f8f6f4", "f8f6f4") if ta in F8F6F4 and tb in F8F6F4 else (None, None))]
    if blocks is not None:
        rows = [r for r in rows if r.blocks == blocks]
    elif len(rows) > 1:
        rows = [r for r in rows if r.blocks == 1] or rows
    if len(rows) != 1:
        have = sorted(f"{r.m}x{r.n}x{r.k}" + (f"({r.blocks}b)" if r.blocks > 1 else "")
                      for r in INSTRUCTIONS[arch].values() if (r.a, r.b) == (ta, tb) and r.sparse == sparse)
        raise LayoutError(f"mfma_for: {arch} has {'no' if not rows else 'several'} MFMA of shape {M}x{N}x{K} with A {ta}, "
                          f"B {tb}" + (f"; its {ta}x{tb} shapes: {', '.join(have)}" if have else ""))
    return Mfma(rows[0])


def catalog(arch: str | None = None) -> list[Mfma]:
    """Every MFMA of ``arch`` (all CDNA generations when None), in the ISA tables' order."""
    archs = ARCH_ORDER if arch is None else (arch_name(arch),)
    return [Mfma(r) for a in archs for r in INSTRUCTIONS.get(a, {}).values()]


# --------------------------------------------------------------------------------- atom registry
def names(arch: str) -> tuple[str, ...]:
    """The MFMA mnemonics of ``arch`` (its own spelling), for an atom registry.

    >>> names("cdna1")[:2]
    ('v_mfma_f32_32x32x1f32', 'v_mfma_f32_16x16x1f32')
    """
    return tuple(INSTRUCTIONS[arch_name(arch)])


def build(name: str, arch: str | None = None, **options: Any) -> MMAAtom | None:
    """The MMA atom of MFMA ``name`` (any spelling) on ``arch``, or None when no CDNA has it."""
    if options:
        raise LayoutError(f"mma_atom: the MFMA atom {name!r} takes no options; got {sorted(options)}")
    try:
        return mfma(name, arch).atom()
    except LayoutError:
        return None


def families() -> tuple[AtomFamily, ...]:
    """One :class:`AtomFamily` per CDNA generation (vendor ``amd``, kind ``mfma``)."""
    def fam(a: str) -> AtomFamily:
        return AtomFamily("amd", a, "mma", f"v_mfma.{a}", lambda: names(a), lambda n, **kw: build(n, a, **kw))

    return tuple(fam(a) for a in ARCH_ORDER)
