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

import operator
from typing import Any
from collections.abc import Sequence

from ... import inttuple as it
from ...algebra import coalesce, composition, filter as cute_filter, left_inverse, make_layout, tiled_product, upcast
from ...errors import LayoutError, guarded
from ...layout import Layout
from ...tensor import compact_col_major
from ...tiled import TiledCopy
from .tmem_copy import tmem_copy_op

__all__ = ["tmem_frg", "tmem_frg_ws", "tmem_sf_frg", "tmem_e_frg", "tmem_e_frg_ws", "umma_tmem_sf",
           "accumulator_layout", "umma_accumulator", "umma_tmem_a", "make_tmem_copy", "make_cotiled_copy",
           "make_utccp_copy", "epilogue_tv", "dp", "umma_tmem_e", "E_BITS", "E_ATOM_K"]

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


@guarded
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
            rest_layout = Layout(rest, compact_col_major(rest, stride)) if rest else Layout(1, 0)
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


@guarded
def accumulator_layout(M: int, N: int, *, cta_group: int = 1, value_bits: int = 32, rest: Sequence[int] = (),
                       ws: bool = False) -> Layout:
    """The TMEM accumulator of one ``M x N`` tcgen05.mma per CTA (``M`` per CTA), as a plain (M, N) layout.

    ``ws=True``: the weight-stationary (``.ws``) data paths, :func:`tmem_frg_ws` (``cta_group::1``;
    M 32, 64 or 128; N 64, 128 or 256).

    >>> str(accumulator_layout(128, 64))
    '(128,64):(65536,1)'
    >>> str(accumulator_layout(64, 64, ws=True))
    '(64,(32,2)):(65536,(1,4194304))'
    """
    if not all(type(x) is int and 0 < x <= 4096 for x in (M, N)):
        raise LayoutError(f"accumulator_layout: M = {M!r} and N = {N!r} must be positive integers (TMEM: M <= 128 "
                          "per CTA, N <= 512 columns)")
    if ws:
        L = tmem_frg_ws(((M, N),) + (tuple(rest) or (1,)), value_bits, 32, cta_group)
    else:
        L = tmem_frg(((M, N),) + tuple(rest), value_bits, 32, cta_group)
    return L[0] if not rest else L


def _umma(atom: Any, op: str) -> Any:
    """A tcgen05.mma atom given as itself or by CuTe's name (``SM100_MMA_...<...>``)."""
    from .umma import UMMAAtom, umma_atom

    if isinstance(atom, str):
        return umma_atom(atom)
    if not isinstance(atom, UMMAAtom):
        raise LayoutError(f"{op}: expected a tcgen05.mma atom or its name (SM100_MMA_...), got {atom!r}")
    return atom


def _tile_arg(tile: Any, n: int, op: str) -> tuple[int, ...]:
    try:
        out = tuple(operator.index(x) for x in tile) if isinstance(tile, (tuple, list)) else ()
    except TypeError:
        out = ()
    if len(out) != n or min(out) < 1 or any(isinstance(x, bool) for x in tile):
        raise LayoutError(f"{op}: expected a tile of {n} positive integers, got {tile!r}")
    return out


def _bits(t: str) -> int:
    from ..common.atom_types import value_bits as vb

    try:
        return vb(t)
    except LayoutError:
        from .umma import umma_type_bits

        return umma_type_bits(t)


@guarded
def umma_accumulator(atom: Any, tile_mn: Sequence[int]) -> Layout:
    """``partition_fragment_C(make_tiled_mma(atom), tile_mn)``'s TMEM layout (CuTe's FrgTypeC of the atom).

    ``atom``: a tcgen05.mma atom or CuTe's name of one (as for every function here that takes an atom).
    """
    from ...tiled import make_tiled_mma, partition_shape_C

    atom = _umma(atom, "umma_accumulator")
    mma = make_tiled_mma(atom)
    shape = partition_shape_C(mma, _tile_arg(tile_mn, 2, "umma_accumulator"))
    c_bits = _bits(atom.c_type)
    storage = 32
    # CuTe: the 1SM _TS atoms allocate D NonInterleaved (tmem_frg_1sm<c, int32_t, NonInterleaved>), so that
    # D and the TMEM A share lane addresses; every other atom uses tmem_frg_{1,2}sm<c> (Interleaved)
    alloc = "NonInterleaved" if atom.source == "TS" and atom.cta_group == 1 else "Interleaved"
    return tmem_frg(shape, c_bits, storage, atom.cta_group, alloc)


@guarded
def umma_tmem_a(atom: Any, tile_mk: Sequence[int]) -> Layout:
    """The TMEM layout of A for a ``_TS`` atom: ``make_fragment_A(partition_shape_A(mma, tile_mk))``.

    CuTe's FrgTypeA: ``tmem_frg_1sm<a, a, NonInterleaved>`` / ``tmem_frg_2sm<a, a, Duplicated>``
    (A stored densely: value type = storage type).
    """
    from ...tiled import make_tiled_mma, partition_shape_A

    atom = _umma(atom, "umma_tmem_a")
    if atom.source != "TS":
        raise LayoutError(f"umma_tmem_a: {atom.name} reads A from shared memory (a descriptor), not TMEM")
    mma = make_tiled_mma(atom)
    shape = partition_shape_A(mma, _tile_arg(tile_mk, 2, "umma_tmem_a"))
    a_bits = _bits(atom.a_type)
    alloc = "NonInterleaved" if atom.cta_group == 1 else "Duplicated"
    return tmem_frg(shape, a_bits, a_bits, atom.cta_group, alloc)


@guarded
def make_tmem_copy(op: str, tmem: Layout, value_type: Any = "f32") -> TiledCopy:
    """CuTe's ``make_tmem_copy(Copy_Atom<op, T>, tmem)``: four warps, warp ``w`` on lane quarter ``w``.

    The atom's (thread, value) -> TMEM address is ``((32,4):(0, 32*DP<T>), coalesce(upcast<bits T>(ValID)))``;
    ``make_cotiled_copy`` turns it into a TV layout over the accumulator's coordinates and a
    by-mode tiler that picks the elements the 128 threads touch.
    """
    from ..common.atom_types import value_bits

    bits = value_bits(value_type)
    cop = tmem_copy_op(op)
    if cop.kind == "cp":
        raise LayoutError(f"make_tmem_copy: {op} is a tcgen05.cp (use the UTCCP tiling)")
    atom = cop.copy_atom(value_type)
    atom_t = Layout((32, 4), (0, 32 * dp(bits)))
    atom_v = coalesce(upcast(cop.val_id, bits))
    return make_cotiled_copy(atom, make_layout(atom_t, atom_v), tmem)


@guarded
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


@guarded
def epilogue_tv(tiled_copy: TiledCopy, tile_shape: Sequence[int]) -> Layout:
    """(thread, value) -> column-major index ``m + M n`` of the ``tile_shape`` tile each thread receives.

    Thread ``t``'s values are exactly ``tiled_copy.get_slice(t).partition_D`` of the tile (in CuTe's
    order: the copy's values, then its repeats); :func:`layoutalg.explain` writes it as a formula.
    ``tiled_copy`` may be a ``tcgen05.ld`` atom's name: :func:`make_tmem_copy` of it over
    :func:`accumulator_layout` ``(M, N)`` of the tile.

    >>> from layoutalg import explain
    >>> tc = make_tmem_copy("SM100_TMEM_LOAD_16dp256b1x", accumulator_layout(128, 64))
    >>> print(explain(epilogue_tv(tc, (128, 64)), names=("t", "v")).text.splitlines()[1])
      offset = 1024 * (v >> 3) + 256 * (t % 4) + 128 * (v % 2) + (t & 96) + 4 * (v & 6) + ((t >> 2) & 7)

    By hand, ``.16x256b``: thread ``t`` of warp ``w`` holds rows ``w * 32 + t // 4 (+ 8)`` (``t & 96``
    is ``32 w``), columns ``2 (t % 4) + {0, 1}`` (``256 (t % 4)`` and ``128 (v % 2)``) of each 8-column
    group (``1024 (v >> 3)``).
    """
    tile = _tile_arg(tile_shape, 2, "epilogue_tv")
    if isinstance(tiled_copy, str):  # a tcgen05.ld atom by name: over the M x N accumulator of one CTA
        tiled_copy = make_tmem_copy(tiled_copy, accumulator_layout(*tile))
    if not isinstance(tiled_copy, TiledCopy):
        raise LayoutError(f"epilogue_tv: expected a TiledCopy or a tcgen05.ld atom's name, got {tiled_copy!r}")
    L = tiled_copy.tidfrg_D(Layout(tile))
    L = getattr(L, "layout", L)
    return make_layout(L[0], make_layout(*[L[i] for i in range(1, len(L))]))


@guarded
def make_utccp_copy(op: str, tmem: Layout, value_type: Any = "u32") -> TiledCopy:
    """CuTe's ``make_utccp_copy(op, tmem)``: a ``tcgen05.cp`` tiled over a TMEM tensor (one issuing thread
    per CTA: the atom's thread mode is ``size(ThrID):0``).

    >>> tc = make_utccp_copy("SM100_UTCCP_128dp128bit_1cta", Layout((128, 4), (dp(32), 1)))
    >>> str(tc.layout_tv), tc.tiler
    ('(1,(128,4)):(0,(1,128))', (Layout(128, 1), Layout(4, 1)))
    """
    from ..common.atom_types import value_bits

    bits = value_bits(value_type)
    cop = tmem_copy_op(op)
    if cop.kind != "cp":
        raise LayoutError(f"make_utccp_copy: {op} is not a tcgen05.cp (UTCCP) atom")
    atom = cop.copy_atom(value_type)
    atom_t = Layout(cop.cta_group, 0)
    atom_v = coalesce(upcast(cop.val_id, bits))
    return make_cotiled_copy(atom, make_layout(atom_t, atom_v), tmem)


# ---------------------------------------------------------------------------------------------------------------
# The other TMEM fragments of mma_traits_sm100.hpp: the .ws accumulator, scale factors, sparse metadata.
# Each writes CuTe's make() line for line: an atom in "virtual" TMEM addressing (lane stride 1, column stride
# 128), tiled over the MMA's repeats, then composed with the restride to CuTe's TMEM addresses.

TMEM_BITS = 128 * 512 * 32
SF_ALLOC_MODES = ("ScaleFactorDuplicated4by1", "ScaleFactorDuplicated2by2")


def _mma_mode(op: str, tmem_shape: Any) -> tuple[Any, Any, tuple]:
    if not isinstance(tmem_shape, tuple) or not tmem_shape or not isinstance(tmem_shape[0], tuple) \
            or len(tmem_shape[0]) != 2:
        raise LayoutError(f"{op}: expected a partitioned shape ((M_MMA,N_MMA),...), got {tmem_shape!r} "
                          "(CuTe: \"Expected post-partitioned shape ((M_MMA,N_MMA),...).\")")
    return tmem_shape[0][0], tmem_shape[0][1], tuple(tmem_shape[1:])


def _tile(op: str, atom: Layout, rest: tuple, strides: Any = None) -> Layout:
    """CuTe's ``tiled_product(atom, make_layout(take<1,R>(tmem_shape)[, strides]))``."""
    if not rest:
        raise LayoutError(f"{op}: a shape ((M_MMA,N_MMA),) without MMA repeat modes; pass ((M_MMA,N_MMA), 1, 1) "
                          "(CuTe does not compile it: make_layout() of the empty take<1,1>)")
    return tiled_product(atom, Layout(rest, strides) if strides is not None else Layout(rest))


@guarded
def tmem_frg_ws(tmem_shape: Any, value_bits: int = 32, storage_bits: int = 32, n_sm: int = 1) -> Layout:
    """CuTe's ``UMMA::tmem_frg_ws<T, Storage, n_sm>::make(tmem_shape)``: D of a weight-stationary (``.ws``) UMMA.

    The ``.ws`` data paths of the PTX ISA (``cta_group::1`` only): M = 128 fills all 128 lanes (lane
    ``m``, column ``n``); M = 64 is the "2x2" path -- lanes 0..63 hold columns ``0 .. N/2-1`` and lanes
    64..127 the rest (lane ``m + 64 * (n // (N/2))``, column ``n % (N/2)``); M = 32 the "1x4" path --
    lane ``m + 32 * (n // (N/4))``, column ``n % (N/4)``. Repeats of the MMA go along the columns for
    M = 128 and lanes-first (column-major, compact) for M = 32 and 64. N must be 64, 128 or 256.

    >>> str(tmem_frg_ws(((64, 128), 1, 2)))
    '((64,(64,2)),1,2):((65536,(1,4194304)),0,64)'
    >>> L = tmem_frg_ws(((32, 64), 1, 1))
    >>> [(L((m, n), 0, 0) >> 16, L((m, n), 0, 0) & 0xFFFF) for m, n in ((5, 0), (5, 17), (5, 63))]
    [(5, 0), (37, 1), (101, 15)]
    >>> tmem_frg_ws(((64, 32), 1, 1))
    Traceback (most recent call last):
    ...
    layoutalg.errors.LayoutError: tmem_frg_ws: N_MMA = 32; dense weight-stationary UMMA_1SM N is 64, 128 or 256 (CuTe's static_assert)

    Checked against CuTe C++ 4.2's ``make_tensor<UMMA::tmem_frg_ws_1sm<T, S>>(shape)`` compiled on the
    host (``tests/data/cute/tmem_frags.json``); none of it ran on sm_100 hardware.
    """
    op = "tmem_frg_ws"
    if storage_bits < value_bits or storage_bits % value_bits:
        raise LayoutError(f"{op}: storage of {storage_bits} bits does not hold {value_bits}-bit values "
                          "(CuTe: \"TMEM MMA allocations require StorageType big enough for ValueType.\")")
    if isinstance(tmem_shape, tuple) and it.product(tmem_shape) * storage_bits > TMEM_BITS:
        raise LayoutError(f"{op}: {tmem_shape} of {storage_bits}-bit cells needs more than the 128 x 512 x 32 bits "
                          "of TMEM (CuTe: \"Requesting more TMEM than is available.\")")
    m, n, rest = _mma_mode(op, tmem_shape)
    if n_sm != 1:
        raise LayoutError(f"{op}: N_SM = {n_sm}; UMMA.WS is cta_group::1 only (CuTe: \"UMMA.WS expects N_SM == 1\")")
    M, N = it.product(m), it.product(n)
    if M not in (32, 64, 128):
        raise LayoutError(f"{op}: M_MMA = {M}; weight-stationary UMMA_1SM M is 32, 64 or 128 (CuTe's static_assert)")
    if N not in (64, 128, 256):
        raise LayoutError(f"{op}: N_MMA = {N}; dense weight-stationary UMMA_1SM N is 64, 128 or 256 "
                          "(CuTe's static_assert)")
    restride = Layout((128, 16384), (dp(value_bits), storage_bits // value_bits))
    if M == 128:
        logical = _tile(op, Layout((128, N), (1, 128)), rest)
    else:
        k = 128 // M  # 1x4 (M = 32) or 2x2 (M = 64): column blocks of N/k stacked down the lanes
        logical = _tile(op, Layout((M, (N // k, k)), (1, (128, M))), rest, compact_col_major(rest, 1))
    return composition(restride, logical)


@guarded
def tmem_sf_frg(tmem_shape: Any, sf_bits: int = 8, n_sm: int = 1, operand: str = "A",
                alloc: str = "ScaleFactorDuplicated4by1", sf_vec: int | None = None) -> Layout:
    """CuTe's ``UMMA::tmem_sf_frg<SF, SFVecSize, n_sm, Is_SFA, alloc>::make(tmem_shape)``: block-scale factors in TMEM.

    ``tmem_shape`` is an MMA-SF partitioned shape ``((MN, (VS, NSF)), MMA_MN, MMA_K, ...)`` -- as
    CUTLASS passes it, the shape of the shared-memory SF layout
    (:func:`layoutalg.nvidia.blackwell.blockscale.smem_sf_layout`): ``VS`` is the SF vector (16 or 32 K
    elements per factor, stride 0: one factor serves them all), ``NSF`` the factors per MMA K. The SF
    are compact (``sf_bits``-bit cells, column address = value index) and *duplicated*: with the
    "4x1" allocation (SFA always; SFB of the M = 256 pair and the 1SM atoms) rows ``32 j .. 32 j + 31``
    of each 128-row block sit in all four lane quarters (lane ``r % 32 + 32 q`` for q = 0..3, the
    replica mode ``4:32``), row block ``r // 32`` at column ``4 (r // 32)`` (``512`` in the virtual
    addressing), factor ``s`` at column ``s``; with "2x2" (SFB of the ``2x1SM`` atoms of M = 128)
    the N rows split in halves across lanes 0..63 and 64..127, each duplicated twice.

    >>> str(tmem_sf_frg(((128, (32, 4)), 1, 1)))
    '((((32,4),4),(32,4)),1,1):((((262144,4),8388608),(0,1)),0,0)'
    >>> str(tmem_sf_frg(((256, (16, 4)), 1, 1), operand="B", n_sm=2, alloc="ScaleFactorDuplicated2by2"))
    '((((32,4),2,2),(16,4)),1,1):((((262144,4),16777216,8388608),(0,1)),0,0)'

    Read as (row ``r``, K element ``k``) -> address: SFA row 37 (lane 5, row block 1 -> column 4)
    and its replicas in lanes 37, 69, 101 (row coordinates 37 + 128 q); the 32 K elements of a vector
    share one factor (stride 0)::

        >>> L = tmem_sf_frg(((128, (32, 4)), 1, 1))[0]
        >>> [(L(37 + 128 * q, (k, 0)) >> 18, L(37 + 128 * q, (k, 0)) & 0xFFFF) for q in range(4) for k in (0, 31)]
        [(5, 4), (5, 4), (37, 4), (37, 4), (69, 4), (69, 4), (101, 4), (101, 4)]

    Checked against CuTe C++ 4.2's ``make_tensor<UMMA::tmem_sf_frg<...>>(shape)`` compiled on the
    host (``tests/data/cute/tmem_frags.json``); none of it ran on sm_100 hardware.
    """
    op = "tmem_sf_frg"
    mn, k, rest = _mma_mode(op, tmem_shape)
    if not isinstance(k, tuple) or len(k) != 2:
        raise LayoutError(f"{op}: the K mode {k!r} of {tmem_shape!r} must be (VecSize, NSF) "
                          "(CuTe: \"Expected an MMA-SF partitioned tensor\")")
    if len(rest) < 2:
        raise LayoutError(f"{op}: {tmem_shape!r} has rank {1 + len(rest)}; expected ((MMA), num_MMA_MN, num_MMA_K, ...) "
                          "(CuTe: \"Expected an MMA partitioned tensor\")")
    if operand not in ("A", "B"):
        raise LayoutError(f"{op}: operand {operand!r} is 'A' (SFA) or 'B' (SFB)")
    if alloc not in SF_ALLOC_MODES:
        raise LayoutError(f"{op}: TmemAllocMode {alloc!r}; scale factors are allocated {SF_ALLOC_MODES}")
    if n_sm not in (1, 2):
        raise LayoutError(f"{op}: N_SM {n_sm} must be 1 or 2")
    MN, VS, NSF = it.product(mn), it.product(k[0]), it.product(k[1])
    if sf_vec is not None and (sf_vec not in (16, 32) or sf_vec != VS):
        raise LayoutError(f"{op}: SFVecSize {sf_vec} must be 16 or 32 and equal the shape's VecSize {VS}")
    restride = Layout((128, 16384), (dp(sf_bits), 1))
    if operand == "A" or alloc == "ScaleFactorDuplicated4by1":
        if MN % 32:
            raise LayoutError(f"{op}: MN = {MN} is not a multiple of the 32 lanes of a subpartition "
                              "(CuTe would truncate Int<MN/32> and build a layout that misses rows)")
        atom = Layout((((32, MN // 32), 4), (VS, NSF)), (((1, 512), 32), (0, 128)))
    else:
        if n_sm != 2:
            raise LayoutError(f"{op}: the 2x2 SFB data path needs N_SM == 2, not {n_sm} "
                              "(CuTe: \"Should be 2x2 Datapath\")")
        if MN % 64:
            raise LayoutError(f"{op}: MN = {MN} is not a multiple of 64 (two halves of 32-lane subpartitions) "
                              "(CuTe would truncate Int<MN/2/32> and build a layout that misses rows)")
        atom = Layout((((32, MN // 64), 2, 2), (VS, NSF)), (((1, 512), 64, 32), (0, 128)))
    return composition(restride, _tile(op, atom, rest))


_E_ELEM = {32: 4, 16: 8, 8: 8, 4: 16}  # CuTe's sparse_elem<S, uint8_t> of the metadata pointer


@guarded
def tmem_e_frg(tmem_shape: Any, value_bits: int, ws: bool = False) -> Layout:
    """CuTe's ``UMMA::tmem_e_frg<T>::make`` (``ws=True``: ``tmem_e_frg_ws<T>``): sparse metadata E in TMEM.

    ``value_bits`` is the A type's width (32 TF32, 16 F16/BF16, 8 S8/F8/mixed F8F6F4, 4 F4); the
    atom covers M_MMA x K_MMA of A (128 x 16, 32, 64, 128; ``.ws`` also M = 64 and 32 -- those
    atoms carry an extra replica mode 2 or 4 (one per 32/64-lane slice) as CuTe writes them). The
    addresses are in CuTe's bit-granular TMEM addressing (lane stride ``TMEM::DP_b = 1 << 21``; TF32
    halves it with ``upcast<2>``, F4 doubles it); the elements are CuTe's ``sparse_elem<S, uint8_t>``
    (S = 4 for TF32, 16 for F4, else 8).

    >>> str(tmem_e_frg(((128, 32), 1, 2), 16))
    '(((8,2,8),(16,2)),1,2):(((2097152,16,33554432),(1,16777216)),0,32)'
    >>> tmem_e_frg(((64, 32), 1, 1), 16)
    Traceback (most recent call last):
    ...
    layoutalg.errors.LayoutError: tmem_e_frg: M_MMA = 64; the sparse metadata atom is M = 128 only (CuTe: "Only 128 implemented right now.")

    Checked against CuTe C++ 4.2 compiled on the host (``tests/data/cute/tmem_frags.json``); none of
    it ran on sm_100 hardware.
    """
    op = "tmem_e_frg_ws" if ws else "tmem_e_frg"
    m, n, rest = _mma_mode(op, tmem_shape)
    M, N = it.product(m), it.product(n)
    if ws and M not in (32, 64, 128):
        raise LayoutError(f"{op}: M_MMA = {M}; weight-stationary UMMA_1SM M is 32, 64 or 128 (CuTe's static_assert)")
    if not ws and M != 128:
        raise LayoutError(f"{op}: M_MMA = {M}; the sparse metadata atom is M = 128 only "
                          "(CuTe: \"Only 128 implemented right now.\")")
    widths = (32, 16, 8) if ws else (32, 16, 8, 4)
    if value_bits not in widths:
        raise LayoutError(f"{op}: a {value_bits}-bit A type has no metadata layout (CuTe: {widths} bits)")
    want_n = {32: 16, 16: 32, 8: 64, 4: 128}[value_bits]
    if N != want_n:
        raise LayoutError(f"{op}: N_MMA (the K of A) = {N}; a {value_bits}-bit A needs {want_n} (CuTe's static_assert)")
    restride = Layout((128, 16384), (1 << 21, 1))
    if value_bits in (32, 16):
        r = M // 16  # the (8, 2, r) row mode: r = 8 for M = 128
        kk = 8 if value_bits == 32 else 16
        row = ((8, 2, r), (1, 1024 if value_bits == 32 else 2048, 16))
        if M == 128:
            atom = Layout((row[0], (kk, 2)), (row[1], (128, 8)))
        else:
            atom = Layout((row[0], (kk, 2), 128 // M), (row[1], (128, 8), M))
        if value_bits == 32:
            restride = upcast(restride, 2)
    elif value_bits == 8:
        atom = Layout((128, 64), (1, 128)) if M == 128 else Layout((M, (64, 128 // M)), (1, (128, M)))
    else:
        atom = Layout((128, 128), (1, 128))
        restride = Layout((128, 32768), (1 << 22, 1))
    return composition(restride, _tile(op, atom, rest))


@guarded
def tmem_e_frg_ws(tmem_shape: Any, value_bits: int) -> Layout:
    """CuTe's ``UMMA::tmem_e_frg_ws<T>::make(tmem_shape)``: :func:`tmem_e_frg` with ``ws=True``."""
    return tmem_e_frg(tmem_shape, value_bits, ws=True)


@guarded
def umma_tmem_sf(atom: Any, operand: str, tile_mnk: Sequence[int]) -> Layout:
    """A block-scaled UMMA atom's ``FrgTypeSFA`` / ``FrgTypeSFB`` over a CTA tile, as CUTLASS's collective makes it.

    CUTLASS (``sm100_blockscaled_mma_warpspecialized.hpp``): ``make_tensor<FrgTypeSFA>(shape(SmemLayoutAtomSFA))``
    -- :func:`tmem_sf_frg` over the shape of the shared-memory SF layout
    (:func:`layoutalg.nvidia.blackwell.blockscale.smem_sf_layout`, CuTe's ``deduce_smem_layoutSFA/SFB``). The
    ``2x1SM`` atoms of M = 128 allocate ``ScaleFactorDuplicated2by2``, every other atom
    ``ScaleFactorDuplicated4by1`` (CuTe's ``MMA_Traits``).

    >>> from layoutalg.nvidia.blackwell.umma import umma_atom
    >>> a = umma_atom("SM100_MMA_MXF8F6F4_SS<e4m3,e4m3,float,ue8m0,128,128,K,K>")
    >>> str(umma_tmem_sf(a, "A", (128, 128, 128)))
    '((((32,4),4),(32,1)),1,(4,1)):((((262144,4),8388608),(0,1)),0,(1,0))'
    """
    from .blockscale import smem_sf_layout

    atom = _umma(atom, "umma_tmem_sf")
    tile_mnk = _tile_arg(tile_mnk, 3, "umma_tmem_sf")
    if not getattr(atom, "block_scaled", False):
        raise LayoutError(f"umma_tmem_sf: {atom.name} is not a block-scaled atom (no scale factors in TMEM)")
    if operand not in ("A", "B"):
        raise LayoutError(f"umma_tmem_sf: operand {operand!r} is 'A' (SFA) or 'B' (SFB)")
    smem = smem_sf_layout(operand, atom.vector_size, atom.K, tile_mnk, atom.cta_group)
    alloc = "ScaleFactorDuplicated2by2" if atom.cta_group == 2 and atom.M == 128 else "ScaleFactorDuplicated4by1"
    return tmem_sf_frg(smem.shape, _bits(atom.sf_type), atom.cta_group, operand, alloc, sf_vec=atom.vector_size)


#: the width CuTe's ``FrgTypeE = UMMA::tmem_e_frg<T>`` of a sparse atom is built for, by the atom's kind: TF32 and
#: F16/BF16 their A type, every 8-bit kind (S8, F8F6F4 and MXF8F6F4, sub-byte A types included) ``uint8_t``, the fp4
#: kinds their 4-bit A type (``mma_traits_sm100.hpp``)
E_BITS = {"tf32": 32, "f16": 16, "i8": 8, "f8f6f4": 8, "mxf8f6f4": 8, "mxf4": 4, "mxf4nvf4": 4}
#: the K of CUTLASS's shared-memory metadata atom (``Sm1xxGemmSparseConfig::TensorEAtomK``), by that width: the
#: collective allocates E over ``lcm(tile K, TensorEAtomK)`` and one UTCCP copy serves 1 or 2 k-tiles
E_ATOM_K = {32: 64, 16: 128, 8: 128, 4: 256}


@guarded
def umma_tmem_e(atom: Any, tile_mk: Sequence[int] | None = None) -> Layout:
    """A sparse UMMA atom's metadata E in TMEM over a CTA tile, as CUTLASS's sparse collective allocates it.

    CUTLASS (``sm100_sparse_mma_warpspecialized.hpp``): ``make_tensor<FrgTypeE>(take<0,3>(shape(SmemLayoutE)))``,
    the shape ``partition_shape_A(tiled_mma, (M_tile, lcm(K_tile, TensorEAtomK)))`` -- E covers ``TensorEAtomK``
    (:data:`E_ATOM_K`) columns of A even where the tile's K is smaller (one UTCCP copy serves two k-tiles). ``FrgTypeE``
    is :func:`tmem_e_frg` of the width :data:`E_BITS` names for the atom's kind. ``tile_mk`` defaults to the
    atom's ``M x K``.

    >>> from layoutalg.nvidia.blackwell.umma import umma_atom
    >>> str(umma_tmem_e("SM100_MMA_F8F6F4_SS_SPARSE<e4m3,e4m3,float,128,64,K,K>"))   # K 64 -> E over 128
    '((128,64),1,2):((2097152,1),0,64)'

    Checked against CuTe C++ 4.2 compiled with g++ (``tests/data/cute/tmem_e.json``); not run on sm_100.
    """
    from math import lcm

    from ...tiled import partition_shape_A

    atom = _umma(atom, "umma_tmem_e")
    if not atom.sparse:
        raise LayoutError(f"umma_tmem_e: {atom.name} is not a sparse atom (no metadata in TMEM)")
    M, K = (atom.M, atom.K) if tile_mk is None else _tile_arg(tile_mk, 2, "umma_tmem_e")
    if M % atom.M or K % atom.K:
        raise LayoutError(f"umma_tmem_e: tile {M}x{K} is not a multiple of the atom's {atom.M}x{atom.K}")
    bits = E_BITS[atom.kind]
    shape = partition_shape_A(atom, (M, lcm(K, E_ATOM_K[bits])))
    return tmem_e_frg(shape, bits)

