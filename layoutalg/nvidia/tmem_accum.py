"""The accumulator data path of tcgen05.mma in tensor memory, and the epilogue's tcgen05.ld partition.

A ``tcgen05.mma`` writes D into tensor memory; which lane and column hold ``D[m, n]`` depends on M
per CTA and on ``cta_group`` (the PTX ISA's "data path layouts"). CuTe builds it in
``UMMA::tmem_frg<ValueType, StorageType, N_SM, TmemAllocMode>::make`` (``mma_traits_sm100.hpp``):
an atom (M, N) -> TMEM address per M, tiled over the MMA's repeats, written in CuTe's TMEM
addressing -- lane stride ``TMEM::DP<T> = 1 << 16`` for 32-bit T (``1 << 17`` for 16-bit: the
sub-word index rides in the low bits), column stride ``StorageType / ValueType`` bits ratio:

============================  =================================================================
M per CTA (cta_group)         (m, n) -> (lane, column)
============================  =================================================================
128 (::1), 128 of 256 (::2)   lane ``m``, column ``n``
64 (::1)                      lane ``m % 16 + 32 * (m // 16)``, column ``n``: 16 lanes of each
                              quarter; a second accumulator interleaves in lanes 16..31
64 of 128 (::2)               lane ``m``, column ``n % (N/2)``, and lane ``m + 64`` for the
                              second half of the columns ("2x2" data path)
32 (::2, the TS 2x2 A)        lane ``m + 32 * (n // (N/4))``, column ``n % (N/4)``
============================  =================================================================

The epilogue loads D with a ``tcgen05.ld`` atom over four warps: CuTe's ``make_tmem_copy(atom,
tmem)`` puts warp ``w`` on lane quarter ``w`` and tiles the atom's ValID over the accumulator
(``make_cotiled_copy``); ``partition_S`` / ``partition_D`` of a thread are then which TMEM cells it
reads and which D elements it receives. As in CuTe, the TMEM side of a load is the whole block of
the thread's *warp* (every thread "sees" it), and the register side is the thread's own values. By
hand, M = 128, N = 256, ``.32x32b.x32``: thread 37 is lane 5 of warp 1; its warp reads lanes
32..63 (source offset ``32 << 16``), and the thread receives row 37: columns 0..31 in registers
0..31 (column-major D: element ``37 + 128 n``), then 32..63 from the next of the 8 loads::

    >>> from layoutalg.tensor import make_tensor
    >>> acc = accumulator_layout(128, 256)
    >>> tc = make_tmem_copy("SM100_TMEM_LOAD_32dp32b32x", acc)
    >>> s = tc.get_slice(37).partition_S(acc)
    >>> str(s.layout), s.offset == 32 << 16
    ('(((32,32),1),1,8):(((1,65536),0),0,32)', True)
    >>> d = tc.get_slice(37).partition_D(make_tensor(Layout((128, 256))))
    >>> str(d.layout), d.offset
    ('((32,1),1,8):((128,0),0,4096)', 37)

Checked against CuTe C++ 4.2 (``partition_fragment_C`` / ``make_fragment_A`` of UMMA atoms,
``make_tmem_copy``, ``get_slice(t).partition_S/D``, compiled on the host); none of it ran on
sm_100 hardware.
"""

from __future__ import annotations

from typing import Any
from collections.abc import Sequence

from .. import inttuple as it
from ..algebra import coalesce, composition, filter as cute_filter, left_inverse, make_layout, tiled_product, upcast
from ..errors import LayoutError
from ..layout import Layout
from ..tiled import TiledCopy
from .tmem_copy import tmem_copy_op

__all__ = ["tmem_frg", "accumulator_layout", "umma_accumulator", "umma_tmem_a", "make_tmem_copy", "make_cotiled_copy",
           "make_utccp_copy", "epilogue_tv", "dp"]

ALLOC_MODES = ("Interleaved", "NonInterleaved", "Duplicated")


def dp(value_bits: int) -> int:
    """CuTe's ``TMEM::DP<T>``: the lane stride of TMEM addresses in units of a ``value_bits``-bit T.

    >>> dp(32), dp(16), dp(8)
    (65536, 131072, 262144)
    """
    if value_bits not in (4, 6, 8, 16, 32):
        raise LayoutError(f"TMEM::DP: a {value_bits}-bit value type is not a TMEM element")
    ratio = 32 // value_bits if value_bits != 6 else 4
    return (1 << 16) << (ratio.bit_length() - 1)


def _compact_col_major(shape: Any, start: int) -> Any:
    acc = start

    def go(s: Any) -> Any:
        nonlocal acc
        if isinstance(s, tuple):
            return tuple(go(x) for x in s)
        d = acc if s != 1 else 0  # CuTe's compact_major: a size-1 mode has stride 0
        acc *= s
        return d

    return go(shape)


def tmem_frg(tmem_shape: Any, value_bits: int = 32, storage_bits: int = 32, n_sm: int = 1,
             alloc: str = "Interleaved") -> Layout:
    """CuTe's ``UMMA::tmem_frg<T, Storage, n_sm, alloc>::make(tmem_shape)`` layout: ((M, N), rest...) -> TMEM address.

    ``tmem_shape`` is the partitioned shape ``((M_MMA, N_MMA), MMA_M, MMA_N, ...)`` (M_MMA per CTA);
    addresses are in units of the value type (lane stride :func:`dp`).

    >>> str(tmem_frg(((64, 128), 2, 1)))
    '(((16,4),128),2,1):(((65536,2097152),1),1048576,0)'
    """
    if not isinstance(tmem_shape, tuple) or not isinstance(tmem_shape[0], tuple) or len(tmem_shape[0]) != 2:
        raise LayoutError(f"tmem_frg: expected a partitioned shape ((M_MMA,N_MMA),...), got {tmem_shape!r}")
    if storage_bits < value_bits or storage_bits % value_bits:
        raise LayoutError(f"tmem_frg: storage of {storage_bits} bits does not hold {value_bits}-bit values")
    if alloc not in ALLOC_MODES:
        raise LayoutError(f"tmem_frg: TmemAllocMode {alloc!r}; known: {ALLOC_MODES}")
    M, N = int(tmem_shape[0][0]), int(tmem_shape[0][1])
    rest = tuple(tmem_shape[1:])
    if it.product(tmem_shape) * storage_bits > 128 * 512 * 32:
        raise LayoutError(f"tmem_frg: {tmem_shape} of {storage_bits}-bit cells needs more than the 128 x 512 x 32 bits "
                          "of TMEM")
    restride = Layout((128, 16384), (dp(value_bits), storage_bits // value_bits))
    rest_layout = Layout(rest) if rest else Layout(1, 0)
    if n_sm == 1:
        if alloc == "Duplicated":
            raise LayoutError("tmem_frg: UMMA_1SM accepts Interleaved or NonInterleaved allocation only")
        if M == 64:
            atom = Layout(((16, 4), N), ((1, 32), 128))
            stride = 1 if alloc == "Interleaved" else 2
            rest_layout = Layout(rest, _compact_col_major(rest, stride)) if rest else Layout(1, 0)
        elif M == 128:
            atom = Layout((128, N), (1, 128))
        else:
            raise LayoutError(f"tmem_frg: UMMA_1SM M per CTA is 64 or 128, not {M}")
    elif n_sm == 2:
        if alloc == "NonInterleaved":
            raise LayoutError("tmem_frg: UMMA_2SM accepts Interleaved or Duplicated allocation only")
        if M == 32:
            if alloc != "Interleaved":
                raise LayoutError("tmem_frg: UMMA_2SM M_MMA=32 is Interleaved only")
            atom = Layout((32, (N // 4, 4)), (1, (128, 32)))
        elif M == 64 and alloc == "Interleaved":
            atom = Layout((64, (N // 2, 2)), (1, (128, 64)))
        elif M in (64, 128):  # M = 128: all 128 lanes ("4x1"); M = 64 Duplicated: the 2x2 A copied to both halves
            atom = Layout((128, N), (1, 128))
        else:
            raise LayoutError(f"tmem_frg: UMMA_2SM M per CTA is 32, 64 or 128, not {M}")
    else:
        raise LayoutError(f"tmem_frg: N_SM {n_sm} must be 1 or 2")
    logical = tiled_product(atom, rest_layout) if rest else make_layout(atom)
    return composition(restride, logical)


def accumulator_layout(M: int, N: int, *, cta_group: int = 1, value_bits: int = 32, rest: Sequence[int] = ()) -> Layout:
    """The TMEM accumulator of one ``M x N`` tcgen05.mma per CTA (``M`` per CTA), as a plain (M, N) layout.

    >>> str(accumulator_layout(128, 64))
    '(128,64):(65536,1)'
    """
    L = tmem_frg(((M, N),) + tuple(rest), value_bits, 32, cta_group)
    return L[0] if not rest else L


def _bits(t: str) -> int:
    from .atoms import value_bits as vb

    try:
        return vb(t)
    except LayoutError:
        from .umma import umma_type_bits

        return umma_type_bits(t)


def umma_accumulator(atom: Any, tile_mn: Sequence[int]) -> Layout:
    """``partition_fragment_C(make_tiled_mma(atom), tile_mn)``'s TMEM layout (CuTe's FrgTypeC of the atom)."""
    from ..tiled import make_tiled_mma, partition_shape_C

    mma = make_tiled_mma(atom)
    shape = partition_shape_C(mma, tuple(tile_mn))
    c_bits = _bits(atom.c_type)
    storage = 32
    # CuTe: the 1SM _TS atoms allocate D NonInterleaved (tmem_frg_1sm<c, int32_t, NonInterleaved>), so that
    # D and the TMEM A share lane addresses; every other atom uses tmem_frg_{1,2}sm<c> (Interleaved)
    alloc = "NonInterleaved" if atom.source == "TS" and atom.cta_group == 1 else "Interleaved"
    return tmem_frg(shape, c_bits, storage, atom.cta_group, alloc)


def umma_tmem_a(atom: Any, tile_mk: Sequence[int]) -> Layout:
    """The TMEM layout of A for a ``_TS`` atom: ``make_fragment_A(partition_shape_A(mma, tile_mk))``.

    CuTe's FrgTypeA: ``tmem_frg_1sm<a, a, NonInterleaved>`` / ``tmem_frg_2sm<a, a, Duplicated>``
    (A stored densely: value type = storage type).
    """
    from ..tiled import make_tiled_mma, partition_shape_A

    if atom.source != "TS":
        raise LayoutError(f"umma_tmem_a: {atom.name} reads A from shared memory (a descriptor), not TMEM")
    mma = make_tiled_mma(atom)
    shape = partition_shape_A(mma, tuple(tile_mk))
    a_bits = _bits(atom.a_type)
    alloc = "NonInterleaved" if atom.cta_group == 1 else "Duplicated"
    return tmem_frg(shape, a_bits, a_bits, atom.cta_group, alloc)


def make_tmem_copy(op: str, tmem: Layout, value_type: Any = "f32") -> TiledCopy:
    """CuTe's ``make_tmem_copy(Copy_Atom<op, T>, tmem)``: four warps, warp ``w`` on lane quarter ``w``.

    The atom's (thread, value) -> TMEM address is ``((32,4):(0, 32*DP<T>), coalesce(upcast<bits T>(ValID)))``;
    ``make_cotiled_copy`` turns it into a TV layout over the accumulator's coordinates and a
    by-mode tiler that picks the elements the 128 threads touch.
    """
    from .atoms import value_bits

    bits = value_bits(value_type)
    cop = tmem_copy_op(op)
    if cop.kind == "cp":
        raise LayoutError(f"make_tmem_copy: {op} is a tcgen05.cp (use the UTCCP tiling)")
    atom = cop.copy_atom(value_type)
    atom_t = Layout((32, 4), (0, 32 * dp(bits)))
    atom_v = coalesce(upcast(cop.val_id, bits))
    return make_cotiled_copy(atom, make_layout(atom_t, atom_v), tmem)


def make_cotiled_copy(atom: Any, atom_tv: Layout, data: Layout) -> TiledCopy:
    """CuTe's ``make_cotiled_copy``: a TiledCopy whose (thread, value) -> data *address* map is ``atom_tv``."""
    inv = make_layout(left_inverse(data), Layout(1, 0))
    tv_data = composition(inv, atom_tv)  # (tid, vid) -> data coordinate (1-D)
    chk_a = coalesce(composition(data, tv_data[1]))
    chk_b = coalesce(atom_tv[1])
    if chk_a != chk_b:
        raise LayoutError(f"make_cotiled_copy: the memory the atom's TV layout {atom_tv} points to does not exist in "
                          f"the data layout {data} (CuTe: \"The memory pointed to by AtomTVLayout does not exist in the "
                          "DataLayout.\")")
    flat = it.product_each(data.shape)
    flat = flat if isinstance(flat, tuple) else (flat,)
    zeros = [0] * len(flat)
    tiler = []
    for i in range(len(flat)):
        st = list(zeros)
        st[i] = 1
        tiler.append(cute_filter(composition(Layout(flat, tuple(st if len(flat) > 1 else st[0:1])), tv_data)))
    tiler_t = tuple(tiler)
    tile2data = composition(Layout(flat) if len(flat) > 1 else Layout(flat[0]), tiler_t)
    layout_tv = composition(left_inverse(tile2data), tv_data)
    return TiledCopy(atom, layout_tv, tiler_t)


def epilogue_tv(tiled_copy: TiledCopy, tile_shape: Sequence[int]) -> Layout:
    """(thread, value) -> column-major index ``m + M n`` of the ``tile_shape`` tile each thread receives.

    Thread ``t``'s values are exactly ``tiled_copy.get_slice(t).partition_D`` of the tile (in CuTe's
    order: the copy's values, then its repeats); :func:`layoutalg.explain` writes it as a formula.

    >>> from layoutalg import explain
    >>> tc = make_tmem_copy("SM100_TMEM_LOAD_16dp256b1x", accumulator_layout(128, 64))
    >>> print(explain(epilogue_tv(tc, (128, 64)), names=("t", "v")).text.splitlines()[1])
      offset = 1024 * (v >> 3) + 256 * (t % 4) + 128 * (v % 2) + (t & 96) + 4 * (v & 6) + ((t >> 2) & 7)

    By hand, ``.16x256b``: thread ``t`` of warp ``w`` holds rows ``w * 32 + t // 4 (+ 8)`` (``t & 96``
    is ``32 w``), columns ``2 (t % 4) + {0, 1}`` (``256 (t % 4)`` and ``128 (v % 2)``) of each 8-column
    group (``1024 (v >> 3)``).
    """
    L = tiled_copy.tidfrg_D(Layout(tuple(int(x) for x in tile_shape)))
    L = getattr(L, "layout", L)
    return make_layout(L[0], make_layout(*[L[i] for i in range(1, len(L))]))


def make_utccp_copy(op: str, tmem: Layout, value_type: Any = "u32") -> TiledCopy:
    """CuTe's ``make_utccp_copy(op, tmem)``: a ``tcgen05.cp`` tiled over a TMEM tensor (one issuing thread
    per CTA: the atom's thread mode is ``size(ThrID):0``).

    >>> tc = make_utccp_copy("SM100_UTCCP_128dp128bit_1cta", Layout((128, 4), (dp(32), 1)))
    >>> str(tc.layout_tv), tc.tiler
    ('(1,(128,4)):(0,(1,128))', (Layout(128, 1), Layout(4, 1)))
    """
    from .atoms import value_bits

    bits = value_bits(value_type)
    cop = tmem_copy_op(op)
    if cop.kind != "cp":
        raise LayoutError(f"make_utccp_copy: {op} is not a tcgen05.cp (UTCCP) atom")
    atom = cop.copy_atom(value_type)
    atom_t = Layout(cop.cta_group, 0)
    atom_v = coalesce(upcast(cop.val_id, bits))
    return make_cotiled_copy(atom, make_layout(atom_t, atom_v), tmem)
