"""Block-scale factors of the Blackwell block-scaled MMAs: the 128x4 "blocked" layout, as layouts.

The block-scaled ``tcgen05.mma`` kinds (``mxf8f6f4``, ``mxf4``, ``mxf4nvf4``) multiply every run of
``sf_vec`` consecutive K elements (16 or 32) of a row of A (a column of B) by one scale factor, so
an ``M x K`` operand has an ``M x K/sf_vec`` scale-factor matrix SFA (SFB: ``N x K/sf_vec``). In
global memory CUTLASS (``cutlass::detail::Sm1xxBlockScaledConfig``), cuBLAS and torch store it
*blocked*: 128 rows x 4 scale columns form one 512-byte block, inside which row ``m`` and scale
column ``c`` sit at ``(m % 32) * 16 + (m % 128 // 32) * 4 + c``; blocks follow along K first,
then along M, then the batch L. As a CuTe layout of the operand's own coordinates (m, k, l) --
the ``sf_vec`` elements that share a factor are a stride-0 mode -- the block is the atom
``((32,4),(sf_vec,4)):((16,4),(0,1))`` and the whole tensor is ``tile_to_shape(atom, (M, K, L),
Step<_2,_1,_3>)`` (CuTe pads M up to 128 and K up to ``4 * sf_vec``).

By hand, sf_vec 16, K = 256 (4 column blocks): element (m=37, k=100) uses scale column
``100 // 16 = 6``: block ``(0, 1)`` at ``512``, row 37 = ``5 + 32 * 1`` -> ``5*16 + 1*4``, column
``6 % 4 = 2``: ``512 + 80 + 4 + 2 = 598``::

    >>> L = sf_layout((256, 128, 256, 1), 16, "A")
    >>> str(L)
    '(((32,4),2),((16,4),4),(1,1)):(((16,4),2048),((0,1),512),(0,4096))'
    >>> L(37, 100, 0), blocked_offset(37, 6, n_col_blocks=4)
    (598, 598)

:func:`blocked_formula` is the formula cuBLAS documents (and torch's ``to_blocked`` implements)
as a sympy expression; the tests prove it equal to :func:`sf_layout` symbolically for every
number of blocks, for sf_vec 16 and 32, and compare :func:`sf_layout` with CuTe C++ 4.2's
``tile_atom_to_shape_SFA/SFB`` for random problem shapes (compiled on the host). None of it ran on
sm_100 hardware.
"""

from __future__ import annotations

from typing import Any
from collections.abc import Sequence

import sympy

from ...algebra import append, blocked_product
from ...errors import LayoutError, guarded
from ...layout import Layout

__all__ = ["SF_VECS", "BLOCK_ROWS", "BLOCK_COLS", "sf_atom", "sf_layout", "blocked_offset", "blocked_formula",
           "symbolic_sf_layout", "smem_sf_layout"]

#: scale-factor vector sizes (K elements per factor) of the block-scaled kinds
SF_VECS = (16, 32)
#: rows and scale columns of one 512-byte block
BLOCK_ROWS, BLOCK_COLS = 128, 4


def _check_vec(sf_vec: int, op: str) -> int:
    if sf_vec not in SF_VECS:
        raise LayoutError(f"{op}: scale-factor vector size {sf_vec} is not 16 or 32")
    return int(sf_vec)


def sf_atom(sf_vec: int, major: str = "K") -> Layout:
    """CUTLASS's ``Sm1xxBlockScaledBasicChunk<sf_vec, major>::SfAtom``: one 128 x (4 * sf_vec) block.

    K-major: ``((32,4),(sf_vec,4)):((16,4),(0,1))`` over (m, k); MN-major: the same with the modes
    swapped, over (k, m).

    >>> str(sf_atom(32))
    '((32,4),(32,4)):((16,4),(0,1))'
    """
    v = _check_vec(sf_vec, "sf_atom")
    mn = Layout((32, 4), (16, 4))
    kk = Layout((v, 4), (0, 1))
    if major == "K":
        return Layout((mn.shape, kk.shape), (mn.stride, kk.stride))
    if major == "MN":
        return Layout((kk.shape, mn.shape), (kk.stride, mn.stride))
    raise LayoutError(f"sf_atom: major {major!r} must be 'K' or 'MN'")


def _ordered(shape: Sequence[int], order: Sequence[int]) -> Layout:
    """CuTe's ``make_ordered_layout(shape, order)``: compact, modes taken by increasing ``order``
    (size-1 modes keep their running-product stride, as CuTe prints them)."""
    strides = [0] * len(shape)
    acc = 1
    for i in sorted(range(len(shape)), key=lambda j: order[j]):
        strides[i] = acc
        acc *= shape[i]
    return Layout(tuple(shape), tuple(strides))


@guarded
def sf_layout(problem_shape: Sequence[int], sf_vec: int, operand: str = "A") -> Layout:
    """``Sm1xxBlockScaledConfig<sf_vec>::tile_atom_to_shape_SFA`` (``operand="A"``) or ``_SFB`` (``"B"``).

    ``problem_shape`` is (M, N, K) or (M, N, K, L). The result maps the operand's coordinates
    (m, k, l) (for B: (n, k, l)) to the scale factor's offset in the blocked global layout;
    M (N) is padded up to a multiple of 128 and K up to a multiple of ``4 * sf_vec``, as CuTe's
    ``tile_to_shape`` does for run-time shapes.

    >>> str(sf_layout((128, 200, 64, 2), 32, "B"))
    '(((32,4),2),((32,4),1),(1,2)):(((16,4),512),((0,1),512),(0,1024))'
    """
    v = _check_vec(sf_vec, "sf_layout")
    ps = tuple(int(x) for x in problem_shape)
    if len(ps) == 3:
        ps = ps + (1,)
    if len(ps) != 4 or any(x < 1 for x in ps):
        raise LayoutError(f"sf_layout: problem shape {tuple(problem_shape)} must be positive (M, N, K[, L])")
    M, N, K, L = ps
    if operand not in ("A", "B"):
        raise LayoutError(f"sf_layout: operand {operand!r} must be 'A' (SFA, M x K) or 'B' (SFB, N x K)")
    rows = M if operand == "A" else N
    atom = append(sf_atom(v), n=3)
    reps = (-(-rows // BLOCK_ROWS), -(-K // (BLOCK_COLS * v)), L)
    return blocked_product(atom, _ordered(reps, (2, 1, 3)))


@guarded
def blocked_offset(row: int, sf_col: int, n_col_blocks: int, batch: int = 0, n_row_blocks: int = 0) -> int:
    """The offset of scale factor (row, sf_col) in the blocked layout (cuBLAS's formula, torch's ``to_blocked``).

    ``(row // 128) * 512 * n_col_blocks + (sf_col // 4) * 512 + (row % 32) * 16 + (row % 128 // 32) * 4
    + sf_col % 4`` (+ ``batch * 512 * n_row_blocks * n_col_blocks``).

    By hand: row 130 is in row block 1 (``1 * 512 * 2``), column 5 in column block 1 (``512``),
    ``130 % 32 = 2`` (``32``), quarter 0, ``5 % 4 = 1``: ``1024 + 512 + 32 + 1``::

    >>> blocked_offset(130, 5, n_col_blocks=2)
    1569
    """
    if min(row, sf_col, batch) < 0 or n_col_blocks < 1 or sf_col >= 4 * n_col_blocks:
        raise LayoutError(f"blocked_offset: ({row}, {sf_col}) is outside a scale matrix of {n_col_blocks} column blocks")
    return ((row // 128) * 512 * n_col_blocks + (sf_col // 4) * 512 + (row % 32) * 16 + (row % 128 // 32) * 4
            + sf_col % 4 + batch * 512 * n_row_blocks * n_col_blocks)


def blocked_formula(sf_vec: int) -> tuple[Any, tuple, tuple]:
    """(offset expression, inputs (m, k, l), size symbols (mb, kb, L)) of the blocked layout.

    ``mb`` / ``kb`` are the numbers of 128-row and ``4*sf_vec``-column blocks; the expression is
    :func:`blocked_offset` of (m, k // sf_vec, l) written with ``floor`` and ``Mod``.

    >>> e, (m, k, l), (mb, kb, L) = blocked_formula(16)
    >>> e.subs({m: 37, k: 100, l: 0, kb: 4, mb: 2})
    598
    """
    v = _check_vec(sf_vec, "blocked_formula")
    m, k, l = sympy.symbols("m k l", integer=True, nonnegative=True)
    mb, kb, L = sympy.symbols("mb kb L", integer=True, positive=True)
    c = sympy.floor(k / v)
    e = (sympy.floor(m / 128) * 512 * kb + sympy.floor(c / 4) * 512 + sympy.Mod(m, 32) * 16
         + sympy.Mod(sympy.floor(m / 32), 4) * 4 + sympy.Mod(c, 4) + l * 512 * kb * mb)
    return e, (m, k, l), (mb, kb, L)


def symbolic_sf_layout(sf_vec: int) -> Layout:
    """:func:`sf_layout` with the numbers of blocks left as the symbols (mb, kb, L) of :func:`blocked_formula`.

    >>> str(symbolic_sf_layout(32))
    '(((32,4),mb),((32,4),kb),(1,L)):(((16,4),512*kb),((0,1),512),(0,512*kb*mb))'
    """
    v = _check_vec(sf_vec, "symbolic_sf_layout")
    _e, _ins, (mb, kb, L) = blocked_formula(v)
    return Layout((((32, 4), mb), ((v, 4), kb), (1, L)), (((16, 4), 512 * kb), ((0, 1), 512), (0, 512 * kb * mb)))


@guarded
def smem_sf_layout(operand: str, sf_vec: int, mma_k: int, tile_mnk: Sequence[int], cta_group: int = 1) -> Layout:
    """``Sm1xxBlockScaledConfig<sf_vec>::deduce_smem_layoutSFA`` (``operand="A"``) / ``SFB`` (``"B"``).

    The shared-memory staging of one CTA tile's scale factors, in the order ``tcgen05.cp`` and TMA
    move them: ``((((32, 4), M/128), (sf_vec, mma_k/sf_vec)), 1, (4/(mma_k/sf_vec), K/sf_vec/4))`` with
    strides ``((((16, 4), 512), (0, 1)), 0, (mma_k/sf_vec, M/128 * 512))`` (the 32 x 4 rows of a block,
    then the blocks); M is the tile's M per CTA (``tile M / cta_group``) for SFA, and N rounded up to a
    multiple of 128 for SFB (CUTLASS: "if MMA_N is 192, we operate at MMA_N = 256 granularity for UTCCP").

    >>> str(smem_sf_layout("A", 32, 32, (128, 128, 256)))
    '((((32,4),1),(32,1)),1,(4,2)):((((16,4),512),(0,1)),0,(1,512))'
    >>> smem_sf_layout("A", 16, 64, (128, 128, 256), cta_group=2)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    layoutalg.errors.LayoutError: smem_sf_layout: SFA of 64 rows per CTA (tile M 128 / cta_group 2) is less than one 128-row ...
    """
    v = _check_vec(sf_vec, "smem_sf_layout")
    M, N, K = (int(x) for x in tile_mnk)
    if mma_k % v or (4 * v) % mma_k:
        raise LayoutError(f"smem_sf_layout: the MMA's K = {mma_k} must be a multiple of sf_vec {v} dividing {4 * v}")
    nsf = mma_k // v
    if K % (4 * v):
        raise LayoutError(f"smem_sf_layout: tile K = {K} is not a multiple of 4 * sf_vec = {4 * v}")
    if operand == "A":
        rows = M // cta_group
        if rows < BLOCK_ROWS:
            raise LayoutError(f"smem_sf_layout: SFA of {rows} rows per CTA (tile M {M} / cta_group {cta_group}) is "
                              "less than one 128-row scale block (CuTe's deduce_smem_layoutSFA gives a 0-extent, empty "
                              "layout here; a SIGFPE has been reported for it)")
        if rows % BLOCK_ROWS:
            raise LayoutError(f"smem_sf_layout: SFA rows per CTA {rows} are not a multiple of 128")
    elif operand == "B":
        rows = -(-N // BLOCK_ROWS) * BLOCK_ROWS
    else:
        raise LayoutError(f"smem_sf_layout: operand {operand!r} must be 'A' or 'B'")
    blocks = rows // BLOCK_ROWS
    shape = ((((32, 4), blocks), (v, nsf)), 1, (4 // nsf, K // v // 4))
    stride = ((((16, 4), 512), (0, 1)), 0, (nsf, blocks * 512))
    return Layout(shape, stride)
