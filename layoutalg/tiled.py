"""Tiled MMAs and tiled copies: from one instruction (an *atom*) to the CTA tile, with CuTe's semantics.

An atom is described by TV layouts alone -- ``(thread, value) -> element`` of the operand tile it
works on -- so this module knows nothing of NVIDIA: :mod:`layoutalg.nvidia.atoms` builds the
atoms from the catalog. Everything here is the construction of CuTe's ``mma_atom.hpp`` /
``copy_atom.hpp``, step by step with the same algebra:

* :func:`make_tiled_mma` ``(atom, atom_layout, permutation)``: ``atom_layout`` repeats the atom
  over threads (``(2,2,1)``: 2x2 warps), the permutation sets the tile size and reorders M/N/K
  before the atom is tiled. ``get_layoutA_TV()`` & co. are the CTA-tile TV layouts, and
  ``get_slice(t).partition_A(T)`` cuts thread ``t``'s share out of a tensor.
* :func:`make_tiled_copy` ``(atom, thr_layout, val_layout)`` and :func:`make_tiled_copy_A` /
  ``_B`` / ``_C`` ``(atom, tiled_mma)``: a copy atom tiled so that its destination (or source)
  values line up with the MMA's registers; ``partition_S`` / ``partition_D`` / ``retile_D``.

By hand, the smallest case: a 2x1 tiling of an atom that is one thread holding a 1x2 row
(``TV = (1,2):(0,2)`` over a 1x2 tile, index ``m + 1*n``... the element ``n``). Two copies along M
make a 2x2 tile; thread 1 is the second atom, so it holds row 1: elements ``(1,0), (1,1)`` --
indices 1 and 3 of the column-major 2x2 tile::

    >>> from layoutalg import Layout
    >>> atom = MMAAtom("toy", (1, 2, 1), Layout(1), Layout((1, 1), (0, 0)), Layout((1, 2), (0, 1)),
    ...                Layout((1, 2), (0, 1)))
    >>> mma = make_tiled_mma(atom, (2, 1, 1))
    >>> C = mma.get_layoutC_TV()
    >>> mma.tile_size_mnk, [C(1, v) for v in range(2)]
    ((2, 2, 1), [1, 3])

Construction checks raise :class:`~layoutalg.errors.LayoutError` with CuTe's reasons (a tiled copy
whose threads or values are not a multiple of its atom's, a thread/value layout that is not a
bijection, a TV layout that does not cover its tile); :func:`copy` checks, per atom call, that
each thread's values vectorise into the instruction's registers, as CuTe's ``copy_unpack``
static assertions do.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import inttuple as it
from .algebra import (
    coalesce,
    complement,
    composition,
    filter,
    left_inverse,
    logical_divide,
    logical_product,
    raked_product,
    recast_layout,
    right_inverse,
    tiled_product,
    upcast,
)
from .composed import ComposedLayout
from .errors import LayoutError, guarded
from .hooks import service, svg_of
from .layout import Layout, check_table_size, make_layout
from .parse import parse
from .tensor import (
    Tensor,
    compact_col_major,
    get_flat_coord,
    is_underscore,
    make_fragment_like,
    make_tensor,
    zipped_divide,
)
from .tensor import underscore as _

__all__ = [
    "MMAAtom",
    "TiledMMA",
    "ThrMMA",
    "make_tiled_mma",
    "CopyAtom",
    "TiledCopy",
    "ThrCopy",
    "make_tiled_copy",
    "make_tiled_copy_A",
    "make_tiled_copy_B",
    "make_tiled_copy_C",
    "make_tiled_copy_C_atom",
    "make_tiled_copy_S",
    "make_tiled_copy_D",
    "copy",
    "copy_instructions",
    "copy_plan",
    "partition_shape_A",
    "partition_shape_B",
    "partition_shape_C",
]


# ---------------------------------------------------------------------------------------------
# helpers: apply a layout function to a Layout / ComposedLayout / Tensor
# ---------------------------------------------------------------------------------------------
def _layout_of(x: Any) -> Any:
    return x.layout if isinstance(x, Tensor) else x


def _with(x: Any, L: Any) -> Any:
    return x.with_layout(L) if isinstance(x, Tensor) else L


def _compose(x: Any, *tilers: Any) -> Any:
    """CuTe's ``x.compose(t0, t1, ...)``: composition by mode, ``_`` keeping a mode."""
    def conv(t: Any) -> Any:
        if is_underscore(t):
            return None
        if isinstance(t, (tuple, list)):
            return tuple(conv(a) for a in t)
        return t

    return _with(x, composition(_layout_of(x), conv(tuple(tilers))))


def _slice(x: Any, *coord: Any) -> Any:
    T = x if isinstance(x, Tensor) else Tensor(x)
    r = T(*coord)
    return r if isinstance(x, Tensor) else r.layout


def _size(x: Any) -> int:
    if isinstance(x, (Layout, ComposedLayout)):
        return int(x.size())
    if isinstance(x, (tuple, list)):
        n = 1
        for a in x:
            n *= _size(a)
        return n
    return int(x)


def _shape_of(x: Any) -> Any:
    if isinstance(x, (Layout, ComposedLayout)):
        return x.shape
    if isinstance(x, (tuple, list)):
        return tuple(_shape_of(a) for a in x)
    return int(x)


def _compact(shape: Any) -> Layout:
    """CuTe's make_layout(shape): compact column-major, static size-1 modes with stride 0."""
    shape = it.normalize(shape, "make_layout shape")
    return Layout(shape, compact_col_major(shape, 1))


def _zip(L: Layout) -> Layout:
    """CuTe's zip of a rank-2 layout of rank-2 modes: ((a,b),(c,d)) -> ((a,c),(b,d))."""
    m0, m1 = L[0], L[1]
    return make_layout(make_layout(m0[0], m1[0]), make_layout(m0[1], m1[1]))


def _offset_range(L: Layout) -> tuple[int, int]:
    """``(min, max)`` of ``L(i)`` over its domain, from the modes (each mode adds ``(s-1)*d`` to the max
    when ``d > 0`` and to the min when ``d < 0``): the table's extremes without building the table.
    Refuses what ``L.table()`` refuses (symbolic entries, more than MAX_TABLE entries).

    >>> _offset_range(Layout((2, (4, 3)), (-8, (1, 16))))
    (-8, 35)
    """
    if not L.is_static:
        raise LayoutError(f"table: layout {L} has symbolic entries; substitute values first (subs)")
    check_table_size(L, "table")
    lo = hi = 0
    for s, d in zip(*L.flat):
        if d > 0:
            hi += (s - 1) * d
        else:
            lo += (s - 1) * d
    return lo, hi


def _check_rank(x: Any, need: int, op: str) -> None:
    L = _layout_of(x)
    r = len(L) if type(L.shape) is tuple else 1
    if r < need:
        raise LayoutError(f"{op}: {x} has rank {r}; it needs at least {need} modes")


# ---------------------------------------------------------------------------------------------
# MMA atoms and tiled MMAs
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class MMAAtom:
    """One MMA instruction as CuTe's ``MMA_Traits`` describe it: thread ids and three TV layouts.

    ``layout_a_tv``: ``(thread, value) -> m + M*k`` over the atom's M x K tile of A;
    ``layout_b_tv``: ``-> n + N*k`` over N x K; ``layout_c_tv``: ``-> m + M*n`` over M x N
    (CuTe's column-major conventions). ``thr_id`` maps the atom's logical thread id to the thread
    index within its group (``32:1`` for a warp, ``(4,2):(1,16)`` for a Volta quadpair).
    ``frg_a`` / ``frg_b`` say what a register fragment of that operand is: ``"value"`` (values in
    registers) or ``"smem_desc"`` (the operand stays in shared memory and the "fragment" is a
    descriptor view of it, as for ``wgmma`` SS). ``value_types`` are (D, A, B, C) type names.
    """

    name: str
    shape_mnk: tuple
    thr_id: Layout
    layout_a_tv: Layout
    layout_b_tv: Layout
    layout_c_tv: Layout
    value_types: tuple = ("", "", "", "")
    frg_a: str = "value"
    frg_b: str = "value"
    notes: str = field(default="", compare=False)
    #: sparse A (``mma.sp``): A's TV layout indexes the compressed ``M x K/a_k_compression`` matrix
    a_k_compression: int = 1

    def __post_init__(self) -> None:
        op = f"MMAAtom {self.name!r}"
        if len(self.shape_mnk) != 3:
            raise LayoutError(f"{op}: shape_mnk {self.shape_mnk} is not (M, N, K)")
        M, N, K = (int(x) for x in self.shape_mnk)
        c = int(self.a_k_compression)
        if c < 1 or K % c:
            raise LayoutError(f"{op}: a_k_compression {c} does not divide K = {K}")
        n = int(self.thr_id.size())
        for what, L, dom in (("A", self.layout_a_tv, M * K // c), ("B", self.layout_b_tv, N * K),
                             ("C", self.layout_c_tv, M * N)):
            if len(L) != 2:
                raise LayoutError(f"{op}: layout {what} {L} is not a TV layout (thread, value)")
            if int(L[0].size()) != n:
                raise LayoutError(f"{op}: layout {what} {L} has {int(L[0].size())} threads, ThrID {self.thr_id} has {n}")
            lo, hi = _offset_range(L)
            if lo < 0 or hi >= dom:
                raise LayoutError(f"{op}: layout {what} {L} reaches index {hi if hi >= dom else lo} outside its "
                                  f"{dom}-element tile")

    @property
    def num_threads(self) -> int:
        """``size(ThrID)``."""
        return int(self.thr_id.size())

    def __str__(self) -> str:
        M, N, K = self.shape_mnk
        return (
            "MMA_Atom\n"
            f"  ThrID:      {self.thr_id}\n"
            f"  Shape_MNK:  ({M},{N},{K})\n"
            f"  LayoutA_TV: {self.layout_a_tv}\n"
            f"  LayoutB_TV: {self.layout_b_tv}\n"
            f"  LayoutC_TV: {self.layout_c_tv}"
        )


def _as_layout_arg(x: Any, op: str, what: str) -> Layout:
    if isinstance(x, Layout):
        return x
    if isinstance(x, str):
        L = parse(x)
        if not isinstance(L, Layout):
            raise LayoutError(f"{op}: {what} {x!r} is not a Layout")
        return L
    if isinstance(x, (int, tuple, list)):
        return _compact(tuple(x) if isinstance(x, list) else x)
    raise LayoutError(f"{op}: {what} {x!r} is not a Layout or a shape")


def _pad3(L: Layout) -> Layout:
    """CuTe's append<3>(L, Layout<_1,_0>{})."""
    modes = [L[i] for i in range(len(L))] if type(L.shape) is tuple else [L]
    if len(modes) > 3:
        raise LayoutError(f"make_tiled_mma: atom layout {L} has rank {len(modes)} > 3 (M, N, K)")
    modes += [Layout(1, 0)] * (3 - len(modes))
    return make_layout(*modes)


def _thread_index(t: Any, op: str) -> int:
    """A thread index: an int (numpy ints included), not a bool, a float, a string or a tuple."""
    if isinstance(t, bool) or not isinstance(t, (int, np.integer)):
        raise LayoutError(f"{op}: thread index {t!r} is not an int")
    return int(t)


def _is_bijection(L: Layout) -> bool:
    """Whether ``L`` maps ``[0, size)`` one to one onto ``[0, size)``."""
    t = np.sort(np.asarray(L.table(), dtype=np.int64))
    return bool(np.array_equal(t, np.arange(int(L.size()))))


def _perm_entry(p: Any, op: str) -> Any:
    if is_underscore(p):
        return None
    if isinstance(p, Layout):
        return p
    if isinstance(p, str):
        return _as_layout_arg(p, op, "permutation")
    if isinstance(p, (tuple, list)):
        return tuple(_perm_entry(x, op) for x in p)
    if isinstance(p, (int, np.integer)) and int(p) >= 1:
        return int(p)
    raise LayoutError(f"{op}: permutation entry {p!r} is not _, a positive int, a Layout or a tuple of them")


class TiledMMA:
    """CuTe's ``TiledMMA<Atom, AtomLayoutMNK, PermutationMNK>``: an atom repeated over threads and tiles.

    ``thr_layout_vmnk = tiled_product(atom.thr_id, atom_layout_mnk)``: thread index of
    ``(atom thread, atom along M, along N, along K)``. The tile the whole thing covers in one step
    is ``tile_size_mnk``; a permutation entry replaces the default ``atom_size * atoms`` of its
    mode and reorders that mode's coordinates before the atoms are laid over them.
    """

    def __init__(self, atom: MMAAtom, atom_layout_mnk: Layout, permutation_mnk: tuple):
        if not isinstance(atom, MMAAtom) or not isinstance(atom_layout_mnk, Layout):
            raise LayoutError(f"TiledMMA: expects an MMAAtom and an atom layout (a Layout), got {atom!r:.80} and "
                              f"{atom_layout_mnk!r:.80} (make_tiled_mma builds one from an atom or its name)")
        self.atom = atom
        self.atom_layout_mnk = atom_layout_mnk
        self.permutation = permutation_mnk
        self.thr_layout_vmnk = tiled_product(atom.thr_id, atom_layout_mnk)
        for i in range(3):
            p = permutation_mnk[i]
            if p is None:
                continue
            need = atom.shape_mnk[i] * int(self.thr_layout_vmnk[i + 1].size())
            if _size(p) % need:
                raise LayoutError(
                    f"make_tiled_mma: permutation of mode {'MNK'[i]} covers {_size(p)} elements, not a multiple of "
                    f"atom {'MNK'[i]} ({atom.shape_mnk[i]}) x atoms along it ({int(self.thr_layout_vmnk[i + 1].size())}) "
                    f"= {need}: the {_size(p)}-element tile cannot be cut into whole atoms, so no thread owns a "
                    "well-defined part of it. (CuTe 4.2 constructs such a TiledMMA and prints it, but cannot use it: "
                    "for SM90_64x128x16_F16F16F16_RS, atom layout (3,1,1), permutation (24,16), its get_layoutA_TV and "
                    "get_layoutC_TV fail to compile with the static assertions \"Stride Divisibility Condition\" and "
                    "\"Shape Divisibility Condition\"; tests/data/cute/tiled.json, \"differences\")"
                )

    # --- sizes -----------------------------------------------------------------------------------
    def permutation_mnk(self, i: int) -> Any:
        """The tiler of mode ``i``: the permutation, or ``atom_size * atoms along i`` (an int) where it is ``_``."""
        p = self.permutation[i]
        if p is None:
            return self.atom.shape_mnk[i] * int(self.thr_layout_vmnk[i + 1].size())
        return p

    @property
    def tile_size_mnk(self) -> tuple:
        """``(M, N, K)`` of the tile one step of the tiled MMA covers."""
        return tuple(_size(self.permutation_mnk(i)) for i in range(3))

    def tile_size(self, i: int) -> int:
        """``tile_size<i>(mma)``."""
        return self.tile_size_mnk[i]

    @property
    def num_threads(self) -> int:
        """``size(mma)``: threads of the tiled MMA."""
        return int(self.thr_layout_vmnk.size())

    def size(self) -> int:
        """``size(mma)``."""
        return self.num_threads

    # --- thrfrg --------------------------------------------------------------------------------
    def _thrfrg(self, x: Any, i: int, j: int, atom_tv: Layout, op: str, compress: int = 1) -> Any:
        _check_rank(x, 2, op)
        t = logical_divide(_layout_of(x), (self._perm_for_divide(i), self._perm_for_divide(j, compress)))
        a_tile = (Layout(self.atom.shape_mnk[i]), Layout(self.atom.shape_mnk[j] // compress))
        c = zipped_divide(t, a_tile)
        tv = composition(c, (atom_tv, None))
        thr_tile = (_, (Layout(int(self.thr_layout_vmnk[i + 1].size())), Layout(int(self.thr_layout_vmnk[j + 1].size()))))
        return _with(x, zipped_divide(tv, thr_tile))

    def _perm_for_divide(self, i: int, compress: int = 1) -> Any:
        p = self.permutation_mnk(i)
        if compress == 1:
            return p
        if not isinstance(p, int):
            raise LayoutError(
                f"TiledMMA: {self.atom.name} has a compressed (sparse) A; its K permutation must be _ or a tile size, not {p}"
            )
        return p // compress

    def thrfrg_C(self, x: Any) -> Any:
        """(M,N,...) -> ((ThrV,(ThrM,ThrN)),(FrgV,(RestM,RestN,...))) (CuTe's ``thrfrg_C``)."""
        return self._thrfrg(x, 0, 1, self.atom.layout_c_tv, "thrfrg_C")

    def thrfrg_A(self, x: Any) -> Any:
        """(M,K,...) -> ((ThrV,(ThrM,ThrK)),(FrgV,(RestM,RestK,...)))."""
        return self._thrfrg(x, 0, 2, self.atom.layout_a_tv, "thrfrg_A", self.atom.a_k_compression)

    def thrfrg_B(self, x: Any) -> Any:
        """(N,K,...) -> ((ThrV,(ThrN,ThrK)),(FrgV,(RestN,RestK,...)))."""
        return self._thrfrg(x, 1, 2, self.atom.layout_b_tv, "thrfrg_B")

    # --- TV layouts ------------------------------------------------------------------------------
    def _thridx_2_thrid(self) -> Layout:
        v = self.thr_layout_vmnk
        return composition(Layout((int(v.size()), 1), (1, 0)), right_inverse(make_layout(v, complement(v))))

    @property
    def k_split(self) -> int:
        """Thread groups along K (``size<3>(thr_layout_vmnk)``): each holds partial sums of the same C."""
        return int(self.thr_layout_vmnk[3].size())

    def cute_layoutC_TV(self) -> Layout:  # noqa: N802 - CuTe's name
        """CuTe 4.2's ``get_layoutC_TV`` exactly: with threads along K, their thread ids run past the C tile.

        Equal to :meth:`get_layoutC_TV` when ``k_split == 1``; otherwise the layout CuTe computes, which
        names a difference (a documented hook for the tests that compare the two, and for CuTe interop).
        """
        M, N, _K = self.tile_size_mnk
        return composition(self.thrfrg_C(_compact((M, N))), (self._thridx_2_thrid(), None))

    def _checked_tv(self, L: Layout, mn: tuple, what: str, modes: tuple) -> Layout:
        """``L`` if every (thread, value) lands inside the ``mn`` tile and every element is held equally
        often; otherwise LayoutError naming the first (thread, value) outside and the permutation to blame."""
        n = mn[0] * mn[1]
        t = np.asarray(L.table(), dtype=np.int64)
        cnt = np.bincount(t[(t >= 0) & (t < n)], minlength=n) if n else np.zeros(0, np.int64)
        if t.size and (t.min() >= 0 and t.max() < n) and cnt.min() == cnt.max() and cnt.min() > 0:
            return L
        nthr = int(L[0].size())
        bad = np.nonzero((t < 0) | (t >= n))[0]
        blame = [f"{'MNK'[i]} = {self.permutation[i]} is not a bijection onto [0, {_size(self.permutation[i])}): it "
                 f"reaches element {int(np.max(np.asarray(self.permutation[i].table())))} of a "
                 f"{_size(self.permutation[i])}-element mode" for i in modes
                 if isinstance(self.permutation[i], Layout) and not _is_bijection(self.permutation[i])]
        why = (f"the permutation of {'; '.join(blame)}" if blame else "the tile is not covered evenly")
        if len(bad):
            k = int(bad[0])
            where = f"maps (thread {k % nthr}, value {k // nthr}) to index {int(t[k])}, outside the {mn[0]}x{mn[1]} tile"
        else:
            where = f"holds element {int(np.argmin(cnt))} {int(cnt.min())} times and element {int(np.argmax(cnt))} {int(cnt.max())} times"
        raise LayoutError(
            f"TiledMMA.get_layout{what}_TV: the (thread, value) -> element layout {L} {where}: {why}. "
            f"(CuTe 4.2 returns this layout; partition_{what} of a tensor is still defined, its TV layout over the "
            "tile is not.)"
        )

    def get_layoutC_TV(self) -> Layout:
        """``(thread index, value) -> m + M*n`` over the ``M x N`` tile (``tile_size_mnk``).

        With threads along K (``atom_layout`` ``(.., .., k>1)``) each K group holds partial sums of the same C
        elements (what :meth:`ThrMMA.partition_C` gives them), so their thread ids map to the same elements:
        element ``e`` is held ``k_split`` times. CuTe 4.2 instead runs those thread ids past the tile (thread
        128 of a ``(2,2,2)`` m16n8k16 tiling lands on element 512 of a 512-element tile) -- a named difference
        (``tests/test_properties_tiled.py``). LayoutError when a permutation that is not a bijection makes the
        layout leave the tile.
        """
        M, N, _K = self.tile_size_mnk
        if self.k_split == 1:
            return self._checked_tv(self.cute_layoutC_TV(), (M, N), "C", (0, 1))
        tn = int(self.thr_layout_vmnk[2].size())
        # (ThrV,(ThrM,ThrN)) -> (ThrV,(ThrM,(ThrN,ThrK))): the K groups repeat the thread ids of K group 0
        ctile = (None, (None, Layout((tn, self.k_split), (1, 0))))
        L = composition(self.thrfrg_C(_compact((M, N))), (ctile, None))
        return self._checked_tv(composition(L, (self._thridx_2_thrid(), None)), (M, N), "C", (0, 1))

    def get_layoutA_TV(self) -> Layout:
        """``(thread index, value) -> m + M*k`` over the ``M x K`` tile; threads along N hold the same A.

        For a sparse atom (``a_k_compression = 2``) the tile is the compressed ``M x K/2``.
        """
        M, _N, K = self.tile_size_mnk
        K //= self.atom.a_k_compression
        v = self.thr_layout_vmnk
        atile = (None, (Layout((int(v[1].size()), int(v[2].size())), (1, 0)), None))
        L = composition(self.thrfrg_A(_compact((M, K))), (atile, None))
        return self._checked_tv(composition(L, (self._thridx_2_thrid(), None)), (M, K), "A", (0, 2))

    def get_layoutB_TV(self) -> Layout:
        """``(thread index, value) -> n + N*k`` over the ``N x K`` tile; threads along M hold the same B."""
        _M, N, K = self.tile_size_mnk
        v = self.thr_layout_vmnk
        btile = (None, (Layout((int(v[1].size()), int(v[2].size())), (0, 1)), None))
        L = composition(self.thrfrg_B(_compact((N, K))), (btile, None))
        return self._checked_tv(composition(L, (self._thridx_2_thrid(), None)), (N, K), "B", (1, 2))

    # --- slices ------------------------------------------------------------------------------------
    def get_slice(self, thr_idx: int) -> ThrMMA:
        """``mma.get_slice(t)``: the thread's view, whose ``partition_*`` cut its share out of a tensor.

        ``t`` is a thread index as the TV layouts number them: ``[0, size<0>(get_layoutC_TV()))``. That is
        ``[0, num_threads)`` except for Volta quadpairs, whose lanes are not consecutive (one m8n8k4 atom is
        lanes 0-3 and 16-19 of 32); a lane outside the MMA's threads aliases one inside, as in CuTe (its
        ``get_flat_coord`` reads the lane through the thread layout's strides).
        """
        t = _thread_index(thr_idx, "TiledMMA.get_slice")
        n = getattr(self, "_lanes", None)
        if n is None:
            n = self._lanes = max(self.num_threads, int(self._thridx_2_thrid().size()))
        if not 0 <= t < n:
            raise LayoutError(f"TiledMMA.get_slice: thread {t} outside [0, {n})")
        return ThrMMA(self, get_flat_coord(self.thr_layout_vmnk, t), t)

    thr_slice = get_slice
    get_thread_slice = get_slice

    def __str__(self) -> str:
        perm = "(" + ",".join("_" if p is None else str(p) for p in self.permutation) + ")"
        return f"TiledMMA\n  ThrLayoutVMNK:  {self.thr_layout_vmnk}\n  PermutationMNK: {perm}\n{self.atom}"

    def __repr__(self) -> str:
        return f"TiledMMA({self.atom.name}, {self.atom_layout_mnk}, tile {self.tile_size_mnk})"

    def _repr_svg_(self) -> str | None:  # pragma: no cover - notebooks
        """The picture a notebook shows (registered by layoutalg.viz.tiled through layoutalg.hooks)."""
        return svg_of(self)


class ThrMMA:
    """``TiledMMA::get_slice(t)``: partitions of A, B, C for thread ``t`` (CuTe's ``ThrMMA``)."""

    def __init__(self, tiled_mma: TiledMMA, thr_vmnk: tuple, thr_idx: int):
        self.tiled_mma = tiled_mma
        self.thr_vmnk = thr_vmnk
        self.thr_idx = thr_idx

    def _part(self, x: Any, which: str) -> Tensor:
        T = x if isinstance(x, Tensor) else make_tensor(x)
        v, m, n, k = self.thr_vmnk
        mma = self.tiled_mma
        if which == "C":
            th, coord = mma.thrfrg_C(T), (v, (m, n))
        elif which == "A":
            th, coord = mma.thrfrg_A(T), (v, (m, k))
        else:
            th, coord = mma.thrfrg_B(T), (v, (n, k))
        r11 = len(th.layout[1][1]) if type(th.layout[1][1].shape) is tuple else 1
        return th(coord, (_, tuple([_] * r11) if r11 > 1 else _))

    def partition_C(self, x: Any) -> Tensor:
        """``(M,N,...)`` tensor -> this thread's ``(FrgV, RestM, RestN, ...)`` part of it."""
        return self._part(x, "C")

    def partition_A(self, x: Any) -> Tensor:
        """``(M,K,...)`` tensor -> this thread's ``(FrgV, RestM, RestK, ...)``."""
        return self._part(x, "A")

    def partition_B(self, x: Any) -> Tensor:
        """``(N,K,...)`` tensor -> this thread's ``(FrgV, RestN, RestK, ...)``."""
        return self._part(x, "B")

    def partition_fragment_C(self, x: Any) -> Tensor:
        """The accumulator registers for :meth:`partition_C`: compact, column-major, zero-filled."""
        p = self.partition_C(x)
        L = _compact(p.layout.shape)
        return Tensor(L, np.zeros(int(L.cosize()), dtype=np.float64))

    def _fragment(self, p: Tensor, kind: str) -> Tensor:
        if kind == "smem_desc":
            return p  # CuTe: a descriptor view over the same shared-memory partition
        return make_fragment_like(p)

    def partition_fragment_A(self, x: Any) -> Tensor:
        """Registers for :meth:`partition_A` (``make_fragment_like``), or the smem view for an SS wgmma."""
        return self._fragment(self.partition_A(x), self.tiled_mma.atom.frg_a)

    def partition_fragment_B(self, x: Any) -> Tensor:
        """Registers for :meth:`partition_B`, or the smem view where B stays in shared memory."""
        return self._fragment(self.partition_B(x), self.tiled_mma.atom.frg_b)

    def __repr__(self) -> str:
        return f"ThrMMA(thread {self.thr_idx}, vmnk {self.thr_vmnk})"


def make_tiled_mma(atom: MMAAtom, atom_layout: Any = (1, 1, 1), permutation: Any = None) -> TiledMMA:
    """CuTe's ``make_tiled_mma(atom, atom_layout, permutation)``; ``atom`` is an MMAAtom or CuTe's name of one
    (``"SM80_16x8x16_F32F16F16F32_TN"``, read by :func:`layoutalg.registry.mma_atom`; NVIDIA's: :func:`layoutalg.nvidia.atoms.mma_atom`).

    ``atom_layout`` (a Layout or a shape, padded to rank 3 with ``1:0``) lays atoms over threads:
    ``(2,2,1)`` is 2 atoms along M times 2 along N, 4x the atom's threads. ``permutation`` is
    ``None`` or up to three entries (``_``, an int tile size, a Layout, or a tuple tiler) per
    M, N, K: an int ``32`` for M makes each thread repeat the atom until the tile is 32 rows; a
    Layout reorders the mode's coordinates first.

    >>> from layoutalg import Layout
    >>> atom = MMAAtom("toy", (1, 2, 1), Layout(1), Layout((1, 1), (0, 0)), Layout((1, 2), (0, 1)),
    ...                Layout((1, 2), (0, 1)))
    >>> make_tiled_mma(atom, (2, 1, 1), (4, _, _)).tile_size_mnk
    (4, 2, 1)
    """
    if isinstance(atom, str):  # CuTe's name of the atom (the NVIDIA catalog reads it, registered through hooks)
        atom = service("mma_atom")(atom)
    if not isinstance(atom, MMAAtom):
        raise LayoutError(f"make_tiled_mma: {atom!r} is not an MMAAtom or an atom name (see layoutalg.registry.mma_atom)")
    op = "make_tiled_mma"
    L = _pad3(_as_layout_arg(atom_layout, op, "atom layout"))
    if permutation is None:
        perm: tuple = (None, None, None)
    else:
        p = tuple(permutation) if isinstance(permutation, (tuple, list)) else (permutation,)
        if len(p) > 3:
            raise LayoutError(f"{op}: permutation {permutation!r} has {len(p)} entries; at most 3 (M, N, K)")
        perm = tuple(_perm_entry(x, op) for x in p) + (None,) * (3 - len(p))
    return TiledMMA(atom, L, perm)


def _partition_shape(mma: Any, shape: Any, which: str) -> Any:
    if not isinstance(mma, TiledMMA):  # an atom, or CuTe's name of one: its make_tiled_mma
        mma = make_tiled_mma(mma)
    dummy = _compact(shape)
    th = {"A": mma.thrfrg_A, "B": mma.thrfrg_B, "C": mma.thrfrg_C}[which](dummy)
    r = len(dummy) if type(dummy.shape) is tuple else 1
    sl = _slice(th, 0, (_, tuple([_] * r)))
    return sl.shape


@guarded
def partition_shape_A(mma: TiledMMA, shape_mk: Any) -> Any:
    """CuTe's ``partition_shape_A``: the shape ``(FrgV, RestM, RestK, ...)`` of a thread's A partition.

    ``mma``: a TiledMMA, or an atom (or CuTe's name of one), read as ``make_tiled_mma(atom)``.
    """
    return _partition_shape(mma, shape_mk, "A")


@guarded
def partition_shape_B(mma: TiledMMA, shape_nk: Any) -> Any:
    """CuTe's ``partition_shape_B``."""
    return _partition_shape(mma, shape_nk, "B")


@guarded
def partition_shape_C(mma: TiledMMA, shape_mn: Any) -> Any:
    """CuTe's ``partition_shape_C``."""
    return _partition_shape(mma, shape_mn, "C")


# ---------------------------------------------------------------------------------------------
# Copy atoms and tiled copies
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class CopyAtom:
    """One copy instruction as CuTe's ``Copy_Traits`` give it, for a value type of ``value_bits``.

    ``src_bits`` / ``dst_bits`` / ``ref_bits``: ``(thread, bit) -> bit`` layouts of the data the
    instruction reads, writes, and the reference numbering that links them (CuTe's SrcLayout,
    DstLayout, RefLayout); ``val_layout_src`` etc. are the same in values. ``src_register_bits``
    / ``dst_register_bits``: the width of one register (vector) the instruction moves per thread
    on each side (128 for an ldmatrix row address, 32 for its destination registers);
    :func:`copy` checks each thread's values land in such vectors. ``smem_side`` is ``"S"``,
    ``"D"`` or ``""``: which side is shared memory (for :mod:`layoutalg.banks`).
    """

    name: str
    thr_id: Layout
    src_bits: Layout
    dst_bits: Layout
    ref_bits: Layout
    value_bits: int
    src_register_bits: int = 0
    dst_register_bits: int = 0
    smem_side: str = ""
    value_type: str = ""
    notes: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        op = f"CopyAtom {self.name!r}"
        vb = int(self.value_bits)
        if vb < 1:
            raise LayoutError(f"{op}: value_bits {self.value_bits} must be positive")
        n = int(self.thr_id.size())
        for what, L in (("Src", self.src_bits), ("Dst", self.dst_bits), ("Ref", self.ref_bits)):
            if len(L) != 2:
                raise LayoutError(f"{op}: {what} layout {L} is not (thread, bit)")
            per = int(L[1].size())
            if per % vb:
                raise LayoutError(
                    f"{op}: a thread moves {per} bits on the {what} side, not a multiple of the {vb}-bit value type "
                    f"(CuTe: \"CopyOperation is not valid for {what} of ValType\")"
                )
            V = recast_layout(L, 1, vb)
            if int(V[0].size()) != n:
                raise LayoutError(f"{op}: {what} layout has {int(V[0].size())} threads, ThrID {self.thr_id} has {n} "
                                  f"(CuTe: \"CopyOperation is not valid for {what} of ValType\")")
        for what, rb in (("source", self.src_register_bits), ("destination", self.dst_register_bits)):
            if rb and rb % vb:
                raise LayoutError(f"{op}: {what} register of {rb} bits does not hold whole {vb}-bit values")

    @property
    def val_layout_src(self) -> Layout:
        """``recast_layout<uint1_t, ValType>(SrcLayout)``: ``(thread, value) -> value index``."""
        return recast_layout(self.src_bits, 1, self.value_bits)

    @property
    def val_layout_dst(self) -> Layout:
        """``(thread, value) -> value index`` of the destination."""
        return recast_layout(self.dst_bits, 1, self.value_bits)

    @property
    def val_layout_ref(self) -> Layout:
        """``(thread, value) -> value index`` of the reference numbering."""
        return recast_layout(self.ref_bits, 1, self.value_bits)

    @property
    def num_threads(self) -> int:
        """``size(ThrID)``."""
        return int(self.thr_id.size())

    @property
    def num_val_src(self) -> int:
        """``NumValSrc``: values one thread reads per instruction."""
        return int(self.val_layout_src[1].size())

    @property
    def num_val_dst(self) -> int:
        """``NumValDst``: values one thread writes per instruction."""
        return int(self.val_layout_dst[1].size())

    def with_value_bits(self, bits: int, value_type: str | None = None) -> CopyAtom:
        """The same instruction for another value type (CuTe's ``Copy_Atom<Op, T>`` with another T); the type
        is named ``b<bits>`` unless ``value_type`` names it."""
        from dataclasses import replace

        return replace(self, value_bits=int(bits), value_type=value_type or f"b{int(bits)}")

    def __str__(self) -> str:
        return (
            "Copy_Atom\n"
            f"  ThrID:        {self.thr_id}\n"
            f"  ValLayoutSrc: {self.val_layout_src}\n"
            f"  ValLayoutDst: {self.val_layout_dst}\n"
            f"  ValLayoutRef: {self.val_layout_ref}\n"
            f"  ValueType:    {self.value_bits}b"
        )


def _tiler_shape(tiler: Any) -> Any:
    """``shape(Tiler_MN)``."""
    return _shape_of(tiler)


class TiledCopy:
    """CuTe's ``TiledCopy<Atom, LayoutCopy_TV, Tiler_MN>``: ``layout_tv`` maps (thread, value) of the
    whole copy to the column-major index of a ``tiler``-shaped tile."""

    def __init__(self, atom: CopyAtom, layout_tv: Layout, tiler: Any):
        op = "TiledCopy"
        if not isinstance(atom, CopyAtom) or not isinstance(layout_tv, Layout):
            raise LayoutError(f"{op}: expects a CopyAtom and a TV layout (a Layout), got {atom!r:.80} and "
                              f"{layout_tv!r:.80} (make_tiled_copy builds one)")
        self.atom = atom
        self.layout_tv = layout_tv
        self.tiler = tuple(tiler) if isinstance(tiler, list) else tiler
        ref = atom.val_layout_ref
        self.atom_num_thr = int(ref[0].size())
        self.atom_num_val = int(ref[1].size())
        if len(layout_tv) != 2:
            raise LayoutError(f"{op}: layout {layout_tv} is not a TV layout (thread, value)")
        nthr, nval = int(layout_tv[0].size()), int(layout_tv[1].size())
        if nthr % self.atom_num_thr:
            raise LayoutError(
                f"{op}: {nthr} threads is not a multiple of the {self.atom_num_thr} threads of {atom.name} "
                "(CuTe: \"TiledCopy uses too few thrs for selected CopyAtom\")"
            )
        if nval % self.atom_num_val:
            raise LayoutError(
                f"{op}: each thread has {nval} values, not a multiple of the {self.atom_num_val} values one "
                f"{atom.name} moves per thread for {atom.value_bits}-bit values "
                "(CuTe: \"TiledCopy uses too few vals for selected CopyAtom\"): the values cannot be vectorised as asked"
            )
        n = _size(self.tiler)
        t = np.asarray(layout_tv.table())
        if t.min() < 0 or t.max() >= n:
            raise LayoutError(f"{op}: TV layout {layout_tv} reaches index {int(t.max())} outside its {n}-element tile "
                              f"{_tiler_shape(self.tiler)}")
        covered = np.zeros(n, dtype=bool)
        covered[t] = True
        missing = np.flatnonzero(~covered)
        if len(missing):
            shp = it.product_each(_tiler_shape(self.tiler))
            shp_t = shp if type(shp) is tuple else (shp,)
            first = it.idx2crd(int(missing[0]), shp_t)
            raise LayoutError(
                f"{op}: TV layout {layout_tv} does not cover its tile {_tiler_shape(self.tiler)}: {len(missing)} of "
                f"{n} elements are copied by no thread, the first at coordinate {first}"
            )

    # --- the thread/value decomposition ------------------------------------------------------------
    def _ref2(self, side: str) -> Layout:
        a = self.atom
        trg = a.val_layout_src if side == "S" else a.val_layout_dst
        return composition(right_inverse(a.val_layout_ref), trg)

    def tile2thrfrg(self, x: Any, ref2trg: Layout) -> Any:
        """((TileM,TileN,...),(RestM,RestN,...)) -> (Thr,(FrgV,FrgX),(RestM,RestN,...))."""
        atom_layout_tv = zipped_divide(self.layout_tv, (self.atom_num_thr, self.atom_num_val))
        trg_layout_tv = composition(atom_layout_tv, (ref2trg, None))
        thrval2mn = coalesce(_zip(trg_layout_tv), (1, (1, 1)))
        tv = _compose(x, thrval2mn, _)
        return _slice(tv, (_, _), _)

    def _check_tile(self, x: Any, op: str) -> None:
        L = _layout_of(x)
        shp = _tiler_shape(self.tiler)
        shp_t = shp if type(shp) is tuple else (shp,)
        xs = L.shape if type(L.shape) is tuple else (L.shape,)
        if len(xs) < len(shp_t):
            raise LayoutError(f"{op}: tensor {x} has rank {len(xs)} < rank {len(shp_t)} of the tiler {shp}")
        for k, (a, b) in enumerate(zip(xs, shp_t)):
            na, nb = int(it.product(a)), int(it.product(b))
            if na % nb:
                raise LayoutError(
                    f"{op}: mode {k} of tensor {x} has {na} elements, not a multiple of the copy's tile {nb}: "
                    "the copy does not cover the tensor"
                )

    def tidfrg_S(self, x: Any) -> Any:
        """(M,N,...) -> (Thr,(FrgV,FrgX),(RestM,RestN,...)) for the source side."""
        self._check_tile(x, "tidfrg_S")
        return self.tile2thrfrg(zipped_divide(x, self.tiler), self._ref2("S"))

    def tidfrg_D(self, x: Any) -> Any:
        """(M,N,...) -> (Thr,(FrgV,FrgX),(RestM,RestN,...)) for the destination side."""
        self._check_tile(x, "tidfrg_D")
        return self.tile2thrfrg(zipped_divide(x, self.tiler), self._ref2("D"))

    def _layout_side_tv(self, side: str) -> Layout:
        shp = _tiler_shape(self.tiler)
        ref = _compact((shp, 1))
        L = self.tile2thrfrg(ref, self._ref2(side))
        return _slice(L, _, _, 0)

    def get_layoutS_TV(self) -> Layout:
        """``(thread, value) -> tile index`` of the source side."""
        return self._layout_side_tv("S")

    def get_layoutD_TV(self) -> Layout:
        """``(thread, value) -> tile index`` of the destination side."""
        return self._layout_side_tv("D")

    def retile(self, x: Any) -> Any:
        """CuTe's ``retile``: a thread's fragment (e.g. an MMA's registers) reshaped to ((AtomV,RestV),...) of the copy."""
        L = _layout_of(x)
        R = len(L) if type(L.shape) is tuple else 1
        V = int(L[0].size()) if R > 1 else int(L.size())
        nthr = int(self.layout_tv[0].size())
        frg_mn = upcast(composition(right_inverse(self.layout_tv), _compact(_tiler_shape(self.tiler))), nthr * V)
        frg_v = zipped_divide(logical_product(Layout(V), right_inverse(frg_mn)), Layout(self.atom_num_val))
        pe = it.product_each(frg_mn.shape)
        pe = pe if type(pe) is tuple else (pe,)
        t_tensor = zipped_divide(x, (V,) + tuple(pe))
        v_tensor = _compose(t_tensor, frg_v, _)
        return _slice(v_tensor, _, (0,) + (_,) * (R - 1) if R > 1 else 0)

    # --- slices ---------------------------------------------------------------------------------------
    @property
    def num_threads(self) -> int:
        """``size(tiled_copy)``: threads of the tiled copy."""
        return int(self.layout_tv[0].size())

    def size(self) -> int:
        """``size(tiled_copy)``."""
        return self.num_threads

    @property
    def tile_shape(self) -> tuple:
        """``product_each(shape(Tiler_MN))``: the (M, N, ...) extent the tiled copy covers."""
        pe = it.product_each(_tiler_shape(self.tiler))
        return pe if type(pe) is tuple else (pe,)

    def get_slice(self, thr_idx: int) -> ThrCopy:
        """``tiled_copy.get_slice(t)``."""
        t = _thread_index(thr_idx, "TiledCopy.get_slice")
        if not 0 <= t < self.num_threads:
            raise LayoutError(f"TiledCopy.get_slice: thread {t} outside [0, {self.num_threads})")
        return ThrCopy(self, t)

    thr_slice = get_slice
    get_thread_slice = get_slice

    def __str__(self) -> str:
        tl = _tiler_str(self.tiler)
        return f"TiledCopy\n  Tiler_MN:       {tl}\n  TiledLayout_TV: {self.layout_tv}\n{self.atom}"

    def __repr__(self) -> str:
        return f"TiledCopy({self.atom.name}, {self.layout_tv}, tiler {_tiler_str(self.tiler)})"

    def _repr_svg_(self) -> str | None:  # pragma: no cover - notebooks
        """The picture a notebook shows (registered by layoutalg.viz.tiled through layoutalg.hooks)."""
        return svg_of(self)


def _tiler_str(t: Any) -> str:
    if isinstance(t, (tuple, list)):
        return "(" + ",".join(_tiler_str(x) for x in t) + ")"
    return str(t)


class ThrCopy:
    """``TiledCopy::get_slice(t)``: thread ``t``'s source/destination partitions (CuTe's ``ThrCopy``)."""

    def __init__(self, tiled_copy: TiledCopy, thr_idx: int):
        self.tiled_copy = tiled_copy
        self.thr_idx = thr_idx

    def _part(self, x: Any, side: str) -> Tensor:
        T = x if isinstance(x, Tensor) else make_tensor(x)
        tc = self.tiled_copy
        th = tc.tidfrg_S(T) if side == "S" else tc.tidfrg_D(T)
        R = len(T.layout) if type(T.layout.shape) is tuple else 1
        return th(self.thr_idx, _, tuple([_] * R) if R > 1 else _)

    def partition_S(self, x: Any) -> Tensor:
        """Source tensor ``(M,N,...)`` -> this thread's ``(CPY, CPY_M, CPY_N, ...)``."""
        return self._part(x, "S")

    def partition_D(self, x: Any) -> Tensor:
        """Destination tensor ``(M,N,...)`` -> this thread's ``(CPY, CPY_M, CPY_N, ...)``."""
        return self._part(x, "D")

    def retile_S(self, x: Any) -> Tensor:
        """A thread's source fragment viewed as the copy's ``(CPY, CPY_M, CPY_N, ...)``."""
        T = x if isinstance(x, Tensor) else make_tensor(x)
        return self.tiled_copy.retile(T)

    def retile_D(self, x: Any) -> Tensor:
        """A thread's destination fragment (e.g. ``partition_fragment_A``) as the copy's ``(CPY, CPY_M, ...)``."""
        T = x if isinstance(x, Tensor) else make_tensor(x)
        return self.tiled_copy.retile(T)

    def __repr__(self) -> str:
        return f"ThrCopy(thread {self.thr_idx})"


@guarded
def make_tiled_copy(atom: CopyAtom, thr_layout: Any, val_layout: Any = 1) -> TiledCopy:
    """CuTe's ``make_tiled_copy(atom, thr_layout, val_layout)``: threads and values as (m,n) -> index maps.

    ``thr_layout`` maps a coordinate of the thread grid to a thread index, ``val_layout`` a
    coordinate of one thread's block to a value index; the tile is their ``raked_product``
    (each thread's values are contiguous blocks, threads interleaved between blocks), and
    ``layout_tv = right_inverse(raked_product(thr, val))`` reshaped to ``(threads, values)``.
    Both maps must be bijections onto ``[0, size)`` (else some element of the tile is copied by no
    thread, or by two).

    >>> from layoutalg import Layout
    >>> from layoutalg.tiled import CopyAtom
    >>> u32 = CopyAtom("UniversalCopy<uint32_t>", Layout(1), Layout((1, 32)), Layout((1, 32)), Layout((1, 32)), 16, 32, 32)
    >>> tc = make_tiled_copy(u32, Layout((4, 8), (8, 1)), Layout((1, 2)))   # 32 threads, 2 halves each
    >>> tc.tiler, str(tc.layout_tv)
    ((4, 16), '((8,4),2):((8,1),4)')
    """
    op = "make_tiled_copy"
    thr = _as_layout_arg(thr_layout, op, "thread layout")
    val = _as_layout_arg(val_layout, op, "value layout")
    for what, L in (("thread layout", thr), ("value layout", val)):
        n = int(L.size())
        img = np.unique(np.asarray(L.table()))
        if len(img) != n or img[-1] != n - 1:
            dup = "maps two coordinates to one index" if len(img) != n else f"does not reach every index in [0, {n})"
            raise LayoutError(
                f"{op}: {what} {L} must be a bijection onto [0, {n}); it {dup}, so the tile would not be covered "
                "exactly once"
            )
    layout_mn = raked_product(thr, val)
    inv = right_inverse(layout_mn)
    if int(inv.size()) != int(layout_mn.size()):
        raise LayoutError(f"{op}: raked_product({thr}, {val}) = {layout_mn} is not invertible; the tile is not covered")
    layout_tv = composition(inv, _compact((int(thr.size()), int(val.size()))))
    tiler = it.product_each(layout_mn.shape)
    tiler = tiler if type(tiler) is tuple else (tiler,)
    return TiledCopy(atom, layout_tv, tiler)


@guarded
def make_tiled_copy_A(atom: CopyAtom, mma: TiledMMA) -> TiledCopy:
    """The copy whose destination values are the MMA's A registers: TV = ``mma.get_layoutA_TV()`` over (M, K)."""
    return TiledCopy(atom, mma.get_layoutA_TV(), (mma.tile_size(0), mma.tile_size(2)))


@guarded
def make_tiled_copy_B(atom: CopyAtom, mma: TiledMMA) -> TiledCopy:
    """The copy for B: TV = ``mma.get_layoutB_TV()`` over (N, K)."""
    return TiledCopy(atom, mma.get_layoutB_TV(), (mma.tile_size(1), mma.tile_size(2)))


def _refuse_k_split_C(op: str, mma: TiledMMA) -> None:
    """A tiled copy of C over an MMA with threads along K, where CuTe's C TV layout is not what partition_C gives.

    Where CuTe's ``get_layoutC_TV`` equals the true one (K groups repeating K group 0's elements; e.g. an atom
    layout ``(1,1,2)``) the copy is CuTe's, every element held by ``k_split`` threads. Elsewhere CuTe's copy
    would move the wrong elements (or leave the tile), and this raises with the first such (thread, value).
    """
    if mma.k_split == 1:
        return
    M, N, _K = mma.tile_size_mnk
    cute = mma.cute_layoutC_TV()
    true = mma.get_layoutC_TV()
    t = np.asarray(cute.table(), dtype=np.int64)
    want = np.asarray(true.table(), dtype=np.int64)
    if t.shape == want.shape and np.array_equal(t, want):
        return
    k = int(np.nonzero(t != want)[0][0]) if t.shape == want.shape else 0
    nthr = int(cute[0].size())
    where = (f"index {int(t[k])}, outside the {M * N}-element tile: its copy would read and write past the tile"
             if t[k] >= M * N else f"index {int(t[k])}, where partition_C gives that thread element {int(want[k])}")
    raise LayoutError(
        f"{op}: {mma!r} has {mma.k_split} thread groups along K (atom layout {mma.atom_layout_mnk}); they hold "
        f"partial sums of the same {M}x{N} C tile, each group the elements partition_C gives it: {true}. "
        f"CuTe 4.2 builds this copy from its get_layoutC_TV {cute} instead, which maps (thread {k % nthr}, value "
        f"{k // nthr}) to {where}. Reduce the K groups first, or build the MMA without threads along K"
    )


@guarded
def make_tiled_copy_C(atom: CopyAtom, mma: TiledMMA) -> TiledCopy:
    """The copy for C/D: TV = ``mma.get_layoutC_TV()`` over (M, N).

    LayoutError where CuTe's copy would move other elements than the MMA holds: an MMA with threads along
    K whose CuTe TV layout sends those threads elsewhere (past the tile, for ``(2,2,2)`` m16n8k16), or a
    permutation that is not a bijection (see :meth:`TiledMMA.get_layoutC_TV`).
    """
    _refuse_k_split_C("make_tiled_copy_C", mma)
    return TiledCopy(atom, mma.get_layoutC_TV(), (mma.tile_size(0), mma.tile_size(1)))


@guarded
def make_tiled_copy_C_atom(atom: CopyAtom, mma: TiledMMA) -> TiledCopy:
    """CuTe's ``make_tiled_copy_C_atom``: the smallest tiled copy that retiles C (for sub-tiled epilogues).

    LayoutError for an MMA with threads along K, as :func:`make_tiled_copy_C`."""
    _refuse_k_split_C("make_tiled_copy_C_atom", mma)
    layout_c = mma.get_layoutC_TV()
    copy_v = atom.num_val_src
    if copy_v > int(layout_c[1].size()):
        raise LayoutError(f"make_tiled_copy_C_atom: the atom moves {copy_v} values, C has {int(layout_c[1].size())} per thread")
    layout_tv = composition(layout_c, _compact((int(layout_c[0].size()), copy_v)))
    mma_tiler = (mma.tile_size(0), mma.tile_size(1))
    tiler = []
    for i in range(2):
        stride = [0, 0]
        stride[i] = 1
        tiler.append(filter(composition(Layout(mma_tiler, tuple(stride)), layout_tv)))
    tile2mma = composition(_compact(mma_tiler), tuple(tiler))
    layout_tv = composition(left_inverse(tile2mma), layout_tv)
    return TiledCopy(atom, layout_tv, tuple(tiler))


@guarded
def make_tiled_copy_S(atom: CopyAtom, tiled_copy: TiledCopy) -> TiledCopy:
    """A tiled copy with another atom whose TV layout is ``tiled_copy``'s source layout."""
    return TiledCopy(atom, tiled_copy.get_layoutS_TV(), tiled_copy.tiler)


@guarded
def make_tiled_copy_D(atom: CopyAtom, tiled_copy: TiledCopy) -> TiledCopy:
    """A tiled copy with another atom whose TV layout is ``tiled_copy``'s destination layout."""
    return TiledCopy(atom, tiled_copy.get_layoutD_TV(), tiled_copy.tiler)


# ---------------------------------------------------------------------------------------------
# copy: CuTe's recursion over a thread's partitions, with the vectorisation checks of copy_unpack
# ---------------------------------------------------------------------------------------------
def _atom_calls(S: Tensor, D: Tensor | None, nvs: int, nvd: int, op: str) -> list:
    """Per atom call, (source tensor, destination tensor) of rank 1 with NumValSrc / NumValDst values
    (``D`` None: one tensor split for itself, each call ``(s, None)``)."""
    out: list = []

    def call(s: Tensor, d: Tensor | None) -> None:
        e = s if d is None else d
        if s.size() == nvs or e.size() == nvd:
            out.append((s, d))
            return
        if type(s.layout.shape) is tuple and type(e.layout.shape) is tuple and len(s.layout) == 1 and len(e.layout) == 1:
            group(s.mode(0), None if d is None else d.mode(0))
            return
        raise LayoutError(
            f"{op}: a partition of {s.size()} source / {e.size()} destination values does not split into instructions "
            f"of {nvs} / {nvd} values (CuTe: \"CopyAtom: Src/Dst partitioning does not match the instruction requirement\")"
        )

    def rest(t: Tensor, r: int) -> Layout:
        return make_layout(*[t.layout[i] if not isinstance(t.layout, ComposedLayout) else t.layout.inner[i]
                             for i in range(1, r)])

    def group(s: Tensor, d: Tensor | None) -> None:
        e = s if d is None else d
        rs = len(s.layout) if type(s.layout.shape) is tuple else 1
        rd = len(e.layout) if type(e.layout.shape) is tuple else 1
        if rs == 1 and rd == 1:
            call(s, d)
            return
        if rs != rd:
            raise LayoutError(f"{op}: source {s} and destination {e} have different ranks {rs} and {rd}")
        rest_s = rest(s, rs)
        rest_d = rest_s if d is None else rest(d, rd)
        if int(rest_s.size()) != int(rest_d.size()):
            raise LayoutError(f"{op}: source {s} and destination {d} have {int(rest_s.size())} and "
                              f"{int(rest_d.size())} instruction repeats")
        n = int(rest_s.size())
        srcs = s.slices([(_, *_crd(i, rest_s.shape)) for i in range(n)])
        dsts = [None] * n if d is None else d.slices([(_, *_crd(i, rest_d.shape)) for i in range(n)])
        for a, b in zip(srcs, dsts):
            call(a, b)

    group(S, D)
    return out


def copy_plan(tiled_copy: Any, src: Tensor, dst: Tensor, *, op: str = "copy_plan") -> list:
    """The instructions ``copy(tiled_copy, src, dst)`` issues for one thread: ``[(src_k, dst_k), ...]``,
    rank-1 tensors of ``NumValSrc`` / ``NumValDst`` values each, every one checked to vectorise.

    For an ``ldmatrix`` copy, ``src_k`` is the row this lane addresses and ``dst_k`` the registers
    (fragment indices) it fills -- what a kernel needs to issue the copy exactly as planned.
    """
    atom = tiled_copy.atom if isinstance(tiled_copy, TiledCopy) else tiled_copy
    if not isinstance(atom, CopyAtom):
        raise LayoutError(f"{op}: {tiled_copy!r} is not a TiledCopy or a CopyAtom")
    S = src if isinstance(src, Tensor) else make_tensor(src)
    D = dst if isinstance(dst, Tensor) else make_tensor(dst)
    calls = _atom_calls(S, D, atom.num_val_src, atom.num_val_dst, op)
    for k, (s, d) in enumerate(calls):
        _check_vector(s, atom.num_val_src, atom.src_register_bits, atom.value_bits, "source", op, k)
        _check_vector(d, atom.num_val_dst, atom.dst_register_bits, atom.value_bits, "destination", op, k)
    return calls


def copy_instructions(tiled_copy: Any, part: Tensor, side: str) -> list:
    """One thread's ``partition_S`` (``side="S"``) or ``partition_D`` split as CuTe's ``copy`` issues it:
    a list of rank-1 tensors, one per instruction, each of ``NumValSrc`` / ``NumValDst`` values, each
    checked to vectorise into the instruction's registers (LayoutError otherwise).

    >>> from layoutalg import Layout
    >>> u64 = CopyAtom("UniversalCopy<uint64_t>", Layout(1), Layout((1, 64)), Layout((1, 64)), Layout((1, 64)), 16, 64, 64)
    >>> tc = make_tiled_copy(u64, Layout((4, 1)), Layout((1, 4)))
    >>> [p.addresses().tolist() for p in copy_instructions(tc, tc.get_slice(1).partition_S(make_tensor(Layout((4, 8), (8, 1)))), "S")]
    [[8, 9, 10, 11], [12, 13, 14, 15]]
    """
    atom = tiled_copy.atom if isinstance(tiled_copy, TiledCopy) else tiled_copy
    if side not in ("S", "D"):
        raise LayoutError(f"copy_instructions: side {side!r} is not 'S' or 'D'")
    nv = atom.num_val_src if side == "S" else atom.num_val_dst
    rb = atom.src_register_bits if side == "S" else atom.dst_register_bits
    T = part if isinstance(part, Tensor) else make_tensor(part)
    calls = [s for s, _d in _atom_calls(T, None, nv, nv, "copy_instructions")]
    for k, c in enumerate(calls):
        _check_vector(c, nv, rb, atom.value_bits, "source" if side == "S" else "destination", "copy_instructions", k)
    return calls


def _crd(i: int, shape: Any) -> tuple:
    """The per-mode coordinates of 1-D index ``i`` in ``shape`` (one entry per top-level mode)."""
    if type(shape) is tuple:
        c = it.idx2crd(i, shape)
        return tuple(c) if isinstance(c, tuple) else (c,)
    return (i,)


def _check_vector(T: Tensor, nvals: int, reg_bits: int, value_bits: int, side: str, op: str, k: int) -> None:
    if not reg_bits:
        return
    per = reg_bits // value_bits
    if per <= 1:
        return
    a = T.addresses()
    if a.size != nvals:
        return
    regs = a.reshape(-1, per)
    for r, vec in enumerate(regs):
        if not np.array_equal(vec, vec[0] + np.arange(per)) or vec[0] % per:
            raise LayoutError(
                f"{op}: the {side} of instruction {k} is not vectorisable: register {r} needs {per} consecutive "
                f"{value_bits}-bit values ({reg_bits} bits, aligned) but they sit at {vec.tolist()} "
                f"(CuTe: \"{side} failed to vectorize into registers\"); the {side} tensor was {T}"
            )


def copy(tiled_copy: Any, src: Tensor, dst: Tensor) -> Tensor:
    """CuTe's ``copy(copy_atom, src, dst)`` on one thread's partitions: check, then move the values.

    ``src`` / ``dst`` are a thread's ``partition_S`` / ``partition_D`` (or ``retile_*``) results,
    ``(CPY, rest...)``. Each instruction takes ``NumValSrc`` / ``NumValDst`` values; the check
    (CuTe's ``copy_unpack`` static assertions, here on addresses) is that on each side the values
    of one register are consecutive and aligned -- for an ``ldmatrix`` row, the 8 halves of one
    16-byte row. Data is moved when both tensors have data and the atom is thread-local (one
    thread per atom: cp.async, universal copies); collective atoms (ldmatrix) are only checked,
    as one thread's view does not say what the other lanes hold.

    >>> from layoutalg import Layout
    >>> u64 = CopyAtom("UniversalCopy<uint64_t>", Layout(1), Layout((1, 64)), Layout((1, 64)), Layout((1, 64)), 16, 64, 64)
    >>> tc = make_tiled_copy(u64, Layout((4, 1)), Layout((1, 4)))      # 4 threads, 4 halves (8 B) each
    >>> src = make_tensor(Layout((4, 4), (4, 1)), np.arange(16.0))
    >>> dst = make_tensor(Layout((4, 4), (4, 1)), np.zeros(16))
    >>> th = tc.get_slice(2)
    >>> copy(tc, th.partition_S(src), th.partition_D(dst)).values().tolist()
    [8.0, 9.0, 10.0, 11.0]
    >>> bad = make_tensor(Layout((4, 4), (1, 4)))                       # column-major: a row is strided
    >>> copy(tc, th.partition_S(bad), th.partition_D(dst))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    layoutalg.errors.LayoutError: copy: the source of instruction 0 is not vectorisable: ...
    """
    atom = tiled_copy.atom if isinstance(tiled_copy, TiledCopy) else tiled_copy
    S = src if isinstance(src, Tensor) else make_tensor(src)
    D = dst if isinstance(dst, Tensor) else make_tensor(dst)
    calls = copy_plan(tiled_copy, S, D, op="copy")
    if S.data is not None and D.data is not None and atom.num_threads == 1:
        for s, d in calls:
            D.data[d.addresses()] = S.data[s.addresses()]
    return D
