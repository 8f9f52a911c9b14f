"""Gluon's ``get_tmem_reg_layout``, computed without Triton: the registers a TMEM load fills, as a linear layout.

Gluon (``triton.experimental.gluon.language.nvidia.blackwell``) loads a tensor-memory buffer into
registers with ``tmem.load(layout)``, and ``get_tmem_reg_layout(dtype, shape, tmem_layout,
num_warps, instr_variant)`` is the register layout that load needs: a linear layout from
(register, lane, warp, block) to the tensor's (dim0, dim1). Triton 3.6 computes it in C++
(``getDistributedLayoutForTmemLdSt``): it writes the TMEM buffer as a linear layout (row, col) ->
(dim0, dim1) (``tensorMemoryToLinearLayout`` / ``tensorMemoryScalesToLinearLayout``), packs
narrow elements into 32-bit cells, takes the instruction's tile (register, lane) -> (row, col)
(the tcgen05 data-movement shapes of :mod:`layoutalg.nvidia.blackwell.tmem_copy`), repeats it along the
columns over registers (and warps past four), puts the warps on the lane quarters (rows 32, 64)
and composes. This module does the same over GF(2) with a small linear-layout type
(:class:`F2Layout`), so that the answer is available without Triton and can be checked against
Triton's engine (tests/test_gluon_tmem.py, which drives Triton in a subprocess: its C++ aborts
the process on some inputs).

By hand, fp32 128x128, 4 warps, ``.32x32b``: thread ``t`` of warp ``w`` holds row ``t + 32 w``
(lane bases ``[1,0]..[16,0]``, warp bases ``[32,0],[64,0]``) and every column (register bases
``[0,1]..[0,64]``)::

    >>> L = tmem_reg_layout("f32", (128, 128), block=(128, 128), num_warps=4)
    >>> L.bases["register"][:3], L.bases["lane"], L.bases["warp"]
    ([(0, 1), (0, 2), (0, 4)], [(1, 0), (2, 0), (4, 0), (8, 0), (16, 0)], [(32, 0), (64, 0)])

Checked against Triton 3.6's ``get_tmem_reg_layout`` on the CPU (random element types, shapes,
blocks, column strides, warps, instruction variants, CTA splits, the scales layout); none of it
ran on sm_100 hardware.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from collections.abc import Sequence

from ..errors import LayoutError, guarded

__all__ = ["F2Layout", "tmem_linear_layout", "tmem_scales_linear_layout", "tmem_reg_layout", "BITWIDTH", "to_gluon",
           "to_gluon_tmem_layout", "from_gluon_tmem_layout", "get_tmem_reg_layout"]

#: element type names -> bits (Gluon's and PTX's spellings)
BITWIDTH = {
    "f32": 32, "float32": 32, "fp32": 32, "i32": 32, "int32": 32, "u32": 32, "uint32": 32,
    "f16": 16, "float16": 16, "fp16": 16, "bf16": 16, "bfloat16": 16, "i16": 16, "int16": 16,
    "f8e4m3": 8, "float8e4nv": 8, "e4m3": 8, "f8e5m2": 8, "float8e5": 8, "e5m2": 8, "i8": 8, "int8": 8,
    "u8": 8, "uint8": 8, "e8m0": 8, "float8e8m0fnu": 8,
}


def _log2(n: int) -> int:
    if n < 1 or n & (n - 1):
        raise LayoutError(f"F2Layout: {n} is not a power of two")
    return n.bit_length() - 1


@dataclass
class F2Layout:
    """A linear layout over GF(2), as Triton's ``LinearLayout``: in-dim bases -> out-dim vectors.

    ``bases[d][k]`` is the image of bit ``k`` of input dimension ``d`` (a tuple over ``outs``);
    an input is mapped to the XOR of the images of its set bits. ``outs`` is [(name, size)].
    Products (``*``) stack layouts as Triton's ``operator*`` does: the right factor's bases follow
    the left's and its outputs are scaled by the left's output sizes.
    """

    bases: dict = field(default_factory=dict)
    outs: list = field(default_factory=list)

    # --- construction -------------------------------------------------------------------------
    @staticmethod
    def identity1D(n: int, i: str, o: str) -> F2Layout:
        return F2Layout({i: [(1 << k,) for k in range(_log2(n))]}, [(o, n)])

    @staticmethod
    def zeros1D(n: int, i: str, o: str) -> F2Layout:
        return F2Layout({i: [(0,)] * _log2(n)}, [(o, 1)])

    @staticmethod
    def from_bases(bases: dict, outs: Sequence[str], sizes: dict | None = None) -> F2Layout:
        """Bases given as lists; out sizes inferred (smallest power of two above every image) or given."""
        names = list(outs)
        b = {d: [tuple(int(x) for x in v) for v in vs] for d, vs in bases.items()}
        out = []
        for j, o in enumerate(names):
            if sizes and o in sizes:
                out.append((o, int(sizes[o])))
            else:
                acc = 0
                for vs in b.values():
                    for v in vs:
                        acc |= v[j]
                out.append((o, 1 << acc.bit_length()))
        return F2Layout(b, out)

    # --- queries -------------------------------------------------------------------------------
    @property
    def out_names(self) -> list:
        return [o for o, _ in self.outs]

    def out_size(self, o: str) -> int:
        return dict(self.outs).get(o, 1)

    def in_size(self, d: str) -> int:
        return 1 << len(self.bases.get(d, []))

    def basis(self, d: str, k: int, o: str | None = None):
        v = self.bases[d][k]
        return v if o is None else v[self.out_names.index(o)]

    def _vec(self, v: tuple, names: list) -> tuple:
        m = dict(zip(self.out_names, v))
        return tuple(m.get(o, 0) for o in names)

    def __call__(self, **coords: int) -> tuple:
        acc = [0] * len(self.outs)
        for d, x in coords.items():
            for k, v in enumerate(self.bases.get(d, [])):
                if x >> k & 1:
                    acc = [a ^ b for a, b in zip(acc, v)]
        return tuple(acc)

    def to_triton(self, outs: Sequence[str] = ("dim0", "dim1")) -> dict:
        """{in-dim: [[dim0, dim1], ...]} as Triton's ``DistributedLinearLayout`` lists its bases."""
        return {d: [list(self._vec(v, list(outs))) for v in vs] for d, vs in self.bases.items()}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, F2Layout) and self.bases == other.bases and self.outs == other.outs

    # --- algebra -------------------------------------------------------------------------------
    def __mul__(self, B: F2Layout) -> F2Layout:
        names = self.out_names + [o for o in B.out_names if o not in self.out_names]
        outs = [(o, self.out_size(o) * B.out_size(o)) for o in names]
        ins = list(self.bases) + [d for d in B.bases if d not in self.bases]
        bases = {}
        for d in ins:
            left = [self._vec(v, names) for v in self.bases.get(d, [])]
            right = [tuple(x * self.out_size(o) for x, o in zip(B._vec(v, names), names)) for v in B.bases.get(d, [])]
            bases[d] = left + right
        return F2Layout(bases, outs)

    def compose(self, outer: F2Layout) -> F2Layout:
        """``outer(self(x))``: self's outputs are outer's inputs (Triton's ``A.compose(B)``)."""
        bases = {}
        for d, vs in self.bases.items():
            bases[d] = [outer(**dict(zip(self.out_names, v))) for v in vs]
        return F2Layout(bases, list(outer.outs))

    def sublayout(self, ins: Sequence[str], outs: Sequence[str]) -> F2Layout:
        names = list(outs)
        return F2Layout({d: [self._vec(v, names) for v in self.bases.get(d, [])] for d in ins},
                        [(o, self.out_size(o)) for o in names])

    def resize_in(self, d: str, n: int) -> F2Layout:
        k = _log2(n)
        vs = list(self.bases.get(d, []))
        vs = vs[:k] + [tuple(0 for _ in self.outs)] * (k - len(vs))
        return F2Layout({**self.bases, d: vs}, list(self.outs))

    def is_injective(self) -> bool:
        """Every input maps to a distinct output: the basis images are linearly independent over GF(2)."""
        shifts, s = {}, 0
        for o, n in self.outs:
            shifts[o] = s
            s += _log2(n)
        rows = []
        for vs in self.bases.values():
            for v in vs:
                x = 0
                for (o, _n), c in zip(self.outs, v):
                    x |= c << shifts[o]
                rows.append(x)
        basis: list[int] = []
        for x in rows:
            for bvec in basis:
                x = min(x, x ^ bvec)
            if x == 0:
                return False
            basis.append(x)
        return True

    def divide_left(self, B: F2Layout) -> F2Layout | None:
        """C with ``self == B * C``, or None."""
        names = self.out_names
        for o in B.out_names:
            if o not in names or self.out_size(o) % B.out_size(o):
                return None
        bases = {}
        for d, vs in self.bases.items():
            nb = len(B.bases.get(d, []))
            if nb > len(vs):
                return None
            for k in range(nb):
                if vs[k] != B._vec(B.bases[d][k], names):
                    return None
            rest = []
            for v in vs[nb:]:
                w = []
                for o, c in zip(names, v):
                    q = B.out_size(o)
                    if c % q:
                        return None
                    w.append(c // q)
                rest.append(tuple(w))
            bases[d] = rest
        for d in B.bases:
            if d not in self.bases and B.bases[d]:
                return None
        return F2Layout(bases, [(o, n // B.out_size(o)) for o, n in self.outs])

    def divide_right(self, B: F2Layout) -> F2Layout | None:
        """C with ``self == C * B``, or None."""
        names = self.out_names
        for o in B.out_names:
            if o not in names or self.out_size(o) % B.out_size(o):
                return None
        csize = {o: n // B.out_size(o) for o, n in self.outs}
        bases = {}
        for d, vs in self.bases.items():
            nb = len(B.bases.get(d, []))
            if nb > len(vs):
                return None
            head, tail = vs[: len(vs) - nb], vs[len(vs) - nb:]
            for v, bv in zip(tail, B.bases.get(d, [])):
                want = tuple(x * csize[o] for x, o in zip(B._vec(bv, names), names))
                if v != want:
                    return None
            for v in head:
                if any(c >= csize[o] for c, o in zip(v, names)):
                    return None
            bases[d] = list(head)
        return F2Layout(bases, [(o, csize[o]) for o in names])

    def ensure_not_larger(self, shape: dict) -> F2Layout:
        """Triton's ``ensureLayoutNotLargerThan``: zero the largest images until each out dim fits ``shape``."""
        bases = {d: [list(v) for v in vs] for d, vs in self.bases.items()}
        for j, (o, actual) in enumerate(self.outs):
            want = shape[o]
            if actual <= want:
                continue
            cand = [(bases[d][k][j], d, k) for d in bases for k in range(len(bases[d])) if bases[d][k][j]]
            cand.sort(key=lambda c: -c[0])  # stable: larger images first, in-dim order among equals
            for _val, d, k in cand:
                if actual <= want:
                    break
                bases[d][k][j] = 0
                actual >>= 1
        return F2Layout.from_bases(bases, self.out_names)


# ---------------------------------------------------------------------------------------------
# TMEM buffers as linear layouts (row, col) -> (dim0, dim1)
# ---------------------------------------------------------------------------------------------
ROW, COL, D0, D1 = "row", "col", "dim0", "dim1"
REG, LANE, WARP, BLOCK = "register", "lane", "warp", "block"


@guarded
def tmem_linear_layout(shape: Sequence[int], block: Sequence[int], col_stride: int = 1,
                       cta_split: Sequence[int] = (1, 1)) -> F2Layout:
    """Gluon's ``TensorMemoryLayout(block, col_stride, cta_split_num)`` over ``shape``: (row, col) -> (dim0, dim1).

    ``block`` = (blockM, blockN), blockM 64 or 128: one MMA's accumulator; ``col_stride`` 32-bit
    columns between logically adjacent columns (1 packed, ``32 / bits`` unpacked); the tile
    repeats over M then N along the columns; ``cta_split`` factors are the high column bits.
    """
    M, N = int(shape[0]), int(shape[1])
    sm, sn = int(cta_split[0]), int(cta_split[1])
    if sn > 1:
        return tmem_linear_layout((M, N // sn), block, col_stride, (sm, 1)) * F2Layout.identity1D(sn, COL, D1)
    if sm > 1:
        return tmem_linear_layout((M // sm, N), block, col_stride, (1, 1)) * F2Layout.identity1D(sm, COL, D0)
    bm, bn = int(block[0]), min(int(block[1]), N)
    if bm not in (64, 128):
        raise LayoutError(f"tmem_linear_layout: blockM {bm} must be 64 or 128")
    tile = F2Layout.zeros1D(col_stride, COL, D1)
    if bm == 64:
        tile = tile * F2Layout.identity1D(16, ROW, D0) * F2Layout.identity1D(bn, COL, D1)
        tile = tile.sublayout(list(tile.bases), [D0, D1])
        rows = list(tile.bases[ROW])
        if M > bm:
            rows.append((64, 0))
        elif N > bn:
            rows.append((0, bn))
        else:
            rows.append((0, 0))  # the element is not defined
        rows += [(16, 0), (32, 0)]
        tile = F2Layout.from_bases({**tile.bases, ROW: rows}, [D0, D1])
    else:
        tile = tile * F2Layout.identity1D(bm, ROW, D0) * F2Layout.identity1D(bn, COL, D1)
    reps_m = M // tile.out_size(D0)
    reps_n = N // tile.out_size(D1)
    if reps_m < 1 or reps_n < 1:
        raise LayoutError(f"tmem_linear_layout: shape {tuple(shape)} is smaller than the block {tuple(block)}")
    full = tile * F2Layout.identity1D(reps_m, COL, D0) * F2Layout.identity1D(reps_n, COL, D1)
    return full.sublayout([ROW, COL], [D0, D1])


@guarded
def tmem_scales_linear_layout(shape: Sequence[int], cta_split: Sequence[int] = (1, 1)) -> F2Layout:
    """Gluon's ``TensorMemoryScalesLayout`` over ``shape``: the scale factors of ``tcgen05.mma`` (32 rows
    broadcast to the four lane quarters, 4 columns of 8-bit scales per cell, two row blocks per
    column group)."""
    M, N = int(shape[0]), int(shape[1])
    sm, sn = int(cta_split[0]), int(cta_split[1])
    if sn > 1:
        return tmem_scales_linear_layout((M, N // sn), (sm, 1)) * F2Layout.identity1D(sn, COL, D1)
    if sm > 1:
        return tmem_scales_linear_layout((M // sm, N), (1, 1)) * F2Layout.identity1D(sm, COL, D0)
    tile = (F2Layout.identity1D(32, ROW, D0) * F2Layout.zeros1D(4, ROW, D0) * F2Layout.identity1D(4, COL, D1)
            * F2Layout.identity1D(2, COL, D0))
    rm = -(-M // tile.out_size(D0))
    rn = -(-N // tile.out_size(D1))
    tile = tile * F2Layout.identity1D(rm, COL, D0) * F2Layout.identity1D(rn, COL, D1)
    return tile.ensure_not_larger({D0: M, D1: N})


# ---------------------------------------------------------------------------------------------
# the tcgen05 tiles (register, lane) -> (row, col) in 32-bit cells, and the register layout
# ---------------------------------------------------------------------------------------------
def _tile(atom: str) -> F2Layout:
    """(register, lane) -> (row, col) of one warp's tcgen05.ld of ``atom`` (the PTX figures' formulas)."""
    tile = F2Layout({REG: [], LANE: []}, [(ROW, 1), (COL, 1)])
    if atom == "32x32b":
        return tile * F2Layout.identity1D(32, LANE, ROW)
    if atom == "16x32bx2":
        return tile * F2Layout.identity1D(16, LANE, ROW)
    if atom == "16x64b":
        return tile * F2Layout.from_bases({LANE: [(8, 0), (0, 1), (1, 0), (2, 0), (4, 0)]}, [ROW, COL])
    if atom == "16x128b":
        return (tile * F2Layout.identity1D(4, LANE, COL) * F2Layout.identity1D(8, LANE, ROW)
                * F2Layout.identity1D(2, REG, ROW))
    if atom == "16x256b":
        return (tile * F2Layout.identity1D(2, REG, COL) * F2Layout.identity1D(4, LANE, COL)
                * F2Layout.identity1D(8, LANE, ROW) * F2Layout.identity1D(2, REG, ROW))
    raise LayoutError(f"tmem_reg_layout: unknown instruction variant {atom!r}")


def _with_sizes(bases: dict, outs: list) -> F2Layout:
    return F2Layout({d: [tuple(v) for v in vs] for d, vs in bases.items()}, list(outs))


def _dist(ll: F2Layout, atom: str, num_warps: int, bits: int) -> F2Layout | None:
    """Triton's ``getDistributedLayoutForTmemLdSt`` (no CTA layout): (register, lane, warp) -> (dim0, dim1)."""
    if bits != 32:
        best, quot = 1, ll
        contig = 1
        while bits * contig <= 32:
            q = ll.divide_left(F2Layout.identity1D(contig, COL, D1))
            if q is None:
                break
            quot, best = q, contig
            contig *= 2
        if best > 1:
            ret = _dist(quot, atom, num_warps, bits * best)
            return None if ret is None else F2Layout.identity1D(best, REG, D1) * ret
        q = ll.divide_left(F2Layout.zeros1D(32 // bits, COL, D1) * F2Layout.identity1D(2, COL, D1))
        if bits == 16 and q is not None:  # unpacked
            ret = _dist(q, atom, num_warps, 32)
            return None if ret is None else F2Layout.identity1D(2, REG, D1) * ret
        q = ll.divide_left(F2Layout.zeros1D(32 // bits, COL, D1))
        if q is not None:  # software padding
            return _dist(q, atom, num_warps, 32)
        if ll.in_size(COL) == 1:
            return _dist(ll, atom, num_warps, 32)
        raise LayoutError("tmem_reg_layout: the TMEM layout cannot be packed into 32-bit cells")
    tile = _tile(atom)
    n_tile = tile.out_size(COL)
    n_ll = ll.in_size(COL)
    missing = n_ll // n_tile
    if missing == 0:
        return None
    instr32 = atom == "32x32b"
    row16 = ll.basis(ROW, 4) == (0, 0) if len(ll.bases.get(ROW, [])) > 4 else False
    comp = tile.compose(ll).sublayout([REG, LANE], ll.out_names)
    if instr32:
        comp = comp.resize_in(LANE, comp.in_size(LANE) // 2)
    if not comp.is_injective():
        return None
    fit = None
    if not instr32 and not row16:
        fit = WARP if num_warps > 4 else REG
    warps_to_tile = num_warps // (8 if fit == WARP else 4)
    bcast = warps_to_tile // min(missing, warps_to_tile)
    warps_to_tile //= bcast
    missing //= warps_to_tile
    if missing > 1:
        if instr32 and row16:
            t2 = tile.divide_left(F2Layout.identity1D(2, LANE, ROW))
            assert t2 is not None
            tile = t2 * F2Layout.identity1D(missing // 2, REG, COL) * F2Layout.identity1D(2, LANE, COL)
        else:
            tile = tile * F2Layout.identity1D(missing, REG, COL)
    bases = {d: list(vs) for d, vs in tile.bases.items()}
    bases.setdefault(WARP, [])
    assert tile.out_names == [ROW, COL]
    bases[WARP] += [(32, 0), (64, 0)]
    if fit:
        bases[fit].append((16, 0))
    tile = _with_sizes(bases, [(ROW, 128), (COL, tile.out_size(COL))])
    tile = tile * F2Layout.identity1D(warps_to_tile, WARP, COL) * F2Layout.zeros1D(bcast, WARP, COL)
    if tile.out_size(COL) != n_ll:  # pragma: no cover - Triton asserts the same
        raise LayoutError("tmem_reg_layout: the column tiling does not cover the TMEM layout")
    return tile.compose(ll)


@guarded
def tmem_reg_layout(dtype: str | int, shape: Sequence[int], *, block: Sequence[int] | None = None,
                    col_stride: int = 1, cta_split: Sequence[int] = (1, 1), scales: bool = False,
                    num_warps: int = 4, instr_variant: str = "32x32b",
                    cga_layout: Sequence[Sequence[int]] = ()) -> F2Layout | None:
    """The register layout ``get_tmem_reg_layout`` returns: (register, lane, warp, block) -> (dim0, dim1).

    ``dtype``: element type name (``"f32"``, ``"bf16"``, ``"f8e4m3"``, ...) or its bits. The TMEM
    buffer is ``TensorMemoryLayout(block, col_stride, cta_split)`` or, with ``scales=True``,
    ``TensorMemoryScalesLayout(cta_split)``. ``instr_variant``: ``"32x32b"``, ``"16x64b"``,
    ``"16x128b"``, ``"16x256b"`` or ``"32x32b_splitn"``. ``cga_layout``: the block bases (one
    [dim0, dim1] basis per CTA bit). None when the variant cannot load this buffer (Triton's
    "unsupported" case).

    >>> L = tmem_reg_layout("f32", (128, 64), block=(128, 64), num_warps=8)
    >>> L.bases["warp"]
    [(32, 0), (64, 0), (0, 32)]
    """
    bits = BITWIDTH.get(str(dtype)) if not isinstance(dtype, int) else int(dtype)
    if bits is None:
        raise LayoutError(f"tmem_reg_layout: unknown element type {dtype!r}; known: {sorted(BITWIDTH)}")
    if instr_variant == "16x32bx2":
        raise LayoutError("tmem_reg_layout: Atom 16x32bx2 is inferred implicitly and cannot be requested explicitly")
    if instr_variant not in ("32x32b", "16x64b", "16x128b", "16x256b", "32x32b_splitn"):
        raise LayoutError(f"tmem_reg_layout: unknown instr_variant {instr_variant!r}")
    if num_warps < 4 or num_warps & (num_warps - 1):
        raise LayoutError(f"tmem_reg_layout: num_warps {num_warps} must be a power of two and >= 4")
    if len(shape) != 2:
        raise LayoutError(f"tmem_reg_layout: expected a 2D tensor, got shape {tuple(shape)}")
    splitn = instr_variant == "32x32b_splitn"
    atom = "32x32b" if splitn else instr_variant
    M, N = int(shape[0]), int(shape[1])
    sm, sn = int(cta_split[0]), int(cta_split[1])
    for x in (M, N, sm, sn, col_stride):
        if x < 1 or x & (x - 1):
            raise LayoutError(f"tmem_reg_layout: shape {tuple(shape)}, CTA split {tuple(cta_split)} and column stride "
                              f"{col_stride} must be powers of two")
    if scales:
        if bits != 8:
            raise LayoutError(f"tmem_reg_layout: TensorMemoryScalesLayout holds 8-bit scale factors, not {bits}-bit")
        ll = tmem_scales_linear_layout(shape, cta_split)
    else:
        if block is None:
            raise LayoutError("tmem_reg_layout: give block=(blockM, blockN) of the TensorMemoryLayout (or scales=True)")
        bm, bn = int(block[0]), int(block[1])
        if bits * col_stride > 32:
            raise LayoutError(f"tmem_reg_layout: bitwidth * colStride must be at most 32; got {bits} and {col_stride}")
        if M < bm * sm or N < bn * sn:
            raise LayoutError(f"tmem_reg_layout: the allocation shape must be at least {bm * sm}x{bn * sn}; "
                              f"got {M}x{N}")
        ll = tmem_linear_layout(shape, block, col_stride, cta_split)
        if (ll.out_size(D0), ll.out_size(D1)) != (M, N):
            raise LayoutError(f"tmem_reg_layout: allocation shape must be equal to {ll.out_size(D0)}x{ll.out_size(D1)}")
        ncol = ll.in_size(COL) // (sm * sn)
        if ncol > 512 * 32 // bits:
            raise LayoutError(f"tmem_reg_layout: {ncol} columns per CTA exceed the 512 32-bit columns of TMEM "
                              f"(512 * 32 / {bits})")
    cga = F2Layout.from_bases({BLOCK: [tuple(b) for b in cga_layout]}, [D0, D1])
    if cga_layout:
        cga_shape = [cga.out_size(D0), cga.out_size(D1)]
        cta_col = F2Layout.identity1D(cga_shape[0], COL, D0) * F2Layout.identity1D(cga_shape[1], COL, D1)
        quot = ll.divide_right(cta_col)
        if quot is None:
            raise LayoutError("tmem_reg_layout: the CGA layout does not divide the TMEM layout's columns")
        ret = _dist(quot, atom, num_warps, bits)
        if ret is None:
            return None
        ret = ret * cga
    else:
        ret = _dist(ll, atom, num_warps, bits)
        if ret is None:
            return None
        ret = ret * F2Layout({BLOCK: []}, [])
    ret = ret.sublayout([REG, LANE, WARP, BLOCK], [D0, D1])  # Triton's in- and out-dim order
    if splitn:
        ret = _splitn(ret, shape, bits)
    return ret


def _splitn(L: F2Layout, shape: Sequence[int], bits: int) -> F2Layout:
    """The ``32x32b_splitn`` variant: the last register basis is the one that splits N in halves."""
    half = (0, shape[1] // 2)
    bases = {d: list(vs) for d, vs in L.bases.items()}
    if not bases[REG]:
        if bases[LANE][-1] != half:
            raise LayoutError(f"tmem_reg_layout: splitn with 1 register requires the last lane basis to be {list(half)}")
        bases[REG].append(half)
        bases[LANE][-1] = (0, 0)
        return F2Layout(bases, L.outs)
    if bases[REG][-1] != half:
        if 2 ** len(bases[REG]) <= 32 // bits:
            raise LayoutError("tmem_reg_layout: splitn needs more than one 32-bit register per thread")
        for dname in (LANE, WARP):
            for k, v in enumerate(bases[dname]):
                if v == half:
                    bases[REG][-1], bases[dname][k] = bases[dname][k], bases[REG][-1]
                    return F2Layout(bases, L.outs)
        raise LayoutError(f"tmem_reg_layout: splitn requires a basis {list(half)}")
    return L


# ---------------------------------------------------------------------------------------------
# Gluon objects in and out (Triton imported lazily)
# ---------------------------------------------------------------------------------------------
@guarded
def to_gluon(L: F2Layout, shape: Sequence[int]) -> object:
    """The register layout as Gluon's ``DistributedLinearLayout`` (what ``get_tmem_reg_layout`` returns)."""
    from triton.experimental.gluon.language import DistributedLinearLayout

    b = L.to_triton()
    return DistributedLinearLayout(reg_bases=b.get(REG, []), lane_bases=b.get(LANE, []), warp_bases=b.get(WARP, []),
                                   block_bases=b.get(BLOCK, []), shape=[int(x) for x in shape])


@guarded
def to_gluon_tmem_layout(block: Sequence[int] | None = None, col_stride: int = 1, cta_split: Sequence[int] = (1, 1),
                         two_ctas: bool = False, scales: bool = False) -> object:
    """Gluon's ``TensorMemoryLayout(block, col_stride, cta_split_num, two_ctas)`` or ``TensorMemoryScalesLayout``."""
    from triton.experimental.gluon.language.nvidia.blackwell import TensorMemoryLayout, TensorMemoryScalesLayout

    split = tuple(int(x) for x in cta_split) if tuple(cta_split) != (1, 1) else None
    if scales:
        return TensorMemoryScalesLayout(cta_split_num=split)
    if block is None:
        raise LayoutError("to_gluon_tmem_layout: give block=(blockM, blockN) or scales=True")
    return TensorMemoryLayout(tuple(int(x) for x in block), int(col_stride), cta_split_num=split, two_ctas=two_ctas)


def from_gluon_tmem_layout(layout: object) -> dict:
    """The keyword arguments of :func:`tmem_reg_layout` that a Gluon TMEM layout object stands for.

    Reads the object's fields (``block``, ``col_stride``, ``cta_split_num``; a scales layout has only
    ``cta_split_num``) without importing Triton.
    """
    split = getattr(layout, "cta_split_num", None) or (1, 1)
    if type(layout).__name__ == "TensorMemoryScalesLayout":
        return {"scales": True, "cta_split": tuple(split)}
    if type(layout).__name__ == "TensorMemoryLayout":
        if getattr(layout, "two_ctas", False):
            raise LayoutError("from_gluon_tmem_layout: two_ctas TMEM layouts are not modelled (Triton 3.6's "
                              "get_tmem_reg_layout was checked without them)")
        return {"block": tuple(layout.block), "col_stride": int(layout.col_stride),  # type: ignore[attr-defined]
                "cta_split": tuple(split)}
    raise LayoutError(f"from_gluon_tmem_layout: {layout!r} is not a Gluon TensorMemoryLayout / TensorMemoryScalesLayout")


def get_tmem_reg_layout(dtype: str | int, shape: Sequence[int], layout: object, num_warps: int,
                        instr_variant: str = "32x32b", cga_layout: Sequence[Sequence[int]] = ()) -> object:
    """Gluon's ``get_tmem_reg_layout`` with Gluon's arguments, computed by :func:`tmem_reg_layout` and
    returned as a ``DistributedLinearLayout`` (None where Triton says the variant is unsupported)."""
    L = tmem_reg_layout(dtype, shape, num_warps=num_warps, instr_variant=instr_variant, cga_layout=cga_layout,
                        **from_gluon_tmem_layout(layout))
    return None if L is None else to_gluon(L, shape)
