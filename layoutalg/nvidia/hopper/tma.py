"""TMA tensor maps: the copy descriptor of ``cp.async.bulk.tensor``, derived from layouts and checked.

A Hopper kernel fills shared memory with the Tensor Memory Accelerator: one thread issues
``cp.async.bulk.tensor.Nd [smem], [tensorMap, {c0, .., cN-1}]`` and the TMA unit copies a *box*
of the global tensor to shared memory. The 128-byte ``CUtensorMap`` is built on the host by
``cuTensorMapEncodeTiled`` from a handful of numbers (:class:`TensorMap`)::

    rank            1..5 dimensions, dimension 0 innermost (contiguous in global memory)
    global_dim      extent of each dimension, in elements
    global_strides  bytes between neighbours along dimensions 1..rank-1 (dimension 0: one element)
    box_dim         the box, in elements (<= 256 each; box_dim[0] * bytes a multiple of 16)
    element_strides traversal step per dimension (1..8; ignored on dimension 0)
    swizzle         NONE / 32B / 64B / 128B (+ sm_100's 128B atom variants)

The model of what the TMA writes (the part a kernel author must get right): box element
``(j0, j1, ..)`` goes to the shared byte ``Sw(dst + bytes * j0 + R * (j1 + B1 * (j2 + ..)))`` --
rows of the box are stored one after the other, ``R`` bytes apart, where ``R`` is the row
(``B0 * bytes``) without a swizzle and the swizzle span (32/64/128 B) with one: a row narrower
than the span is *padded* to it (measured on the H100). The swizzle ``Sw`` acts on the
*shared-memory address* (``Swizzle<3,4,3>`` on bytes for 128B: address bits 4-6 ^= bits 7-9).
The box reads global element ``(c0 + j0, c1 + j1, ..)``; elements outside ``[0, global_dim)`` are
filled with zeros (or the NaN 0x7FF7 per 16 bits with OOB_FILL_NAN_REQUEST_ZERO_FMA), and ``c0``
must start on a 16-byte boundary (the instruction faults otherwise).

Check by hand, a bf16 matrix ``A[M=100][K=64]`` (row-major, 128 B per row) and the wgmma atom
``Sw<3,3,3> o (8,64):(64,1)`` (8 rows of 64 bf16, 128B-swizzled): the contiguous direction of
the shared tile is K, so TMA dimension 0 is K (box 64, 128 B = the swizzle span) and dimension 1
is M (box 8, stride 128 B). Row 1, column 0 is linear byte 128; bits 7-9 hold 1, so chunk bit 4
flips: it lands at byte 144 = element 72, which is what the layout says::

    >>> from layoutalg import parse
    >>> t = make_tma_copy(parse("(100,64):(64,1)"), "Sw<3,3,3> o (8,64):(64,1)", "bf16")
    >>> m = t.tensor_map
    >>> m.global_dim, m.global_strides, m.box_dim, m.swizzle, len(t.loads)
    ((64, 100), (128,), (64, 8), '128B', 1)
    >>> int(t.writes()[1 * 1 + 0 * 8]) // 2      # tile element (row 1, col 0) -> element offset
    72

The derivation follows CuTe's ``make_tma_copy`` (``copy_traits_sm90_tma.hpp``): invert the
shared layout, walk shared memory from offset 0, and keep the leading run of modes that step one
element along one global mode; they form the box, and the tile is covered by as many
translated boxes as needed (:attr:`TmaCopy.loads`). Every refusal is a :class:`LayoutError`
naming the violated rule of :data:`RULES` (the driver's documented requirements, checked against
the driver on an H100: ``layoutalg.gpu.tma_check``).

:func:`check_wgmma` closes the loop with the wgmma descriptor: it proves, element by element, that
the bytes the tensor map writes are the bytes the descriptor reads, or names the first element
where they are not (the classic silent bug: a 128B tensor map feeding a 64B descriptor).

Units: shapes and strides of layouts are in elements; ``global_strides``, shared addresses and the
swizzle are in bytes (see docs/wgmma.md and docs/tma.md).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...composed import ComposedLayout, parse_composed
from ...errors import LayoutError
from ...layout import Layout
from ...swizzle import Swizzle
from .tensor_map import (  # noqa: F401  (the tensor map itself: re-exported, layoutalg.nvidia.tma's names)
    DATA_TYPES,
    DOCUMENTED_ONLY,
    INTERLEAVES,
    L2_PROMOTIONS,
    OOB_FILLS,
    RULES,
    SWIZZLE_MODES,
    SwizzleMode,
    TensorMap,
    Violation,
    element_bytes,
    int_tuple_arg,
    swizzle_mode,
    swizzle_mode_of,
    tma_data_type,
)

__all__ = [
    "DATA_TYPES",
    "SWIZZLE_MODES",
    "INTERLEAVES",
    "L2_PROMOTIONS",
    "OOB_FILLS",
    "RULES",
    "DOCUMENTED_ONLY",
    "SwizzleMode",
    "Violation",
    "TensorMap",
    "TmaDim",
    "TmaLoad",
    "TmaCopy",
    "WgmmaCheck",
    "tma_data_type",
    "element_bytes",
    "swizzle_mode",
    "swizzle_mode_of",
    "make_tma_copy",
    "descriptor_reads",
    "check_wgmma",
]

# --- derivation from layouts ---------------------------------------------------------------------
@dataclass(frozen=True)
class TmaDim:
    """One TMA dimension of a derived map: its box extent, the global modes it walks and its element stride.

    ``modes`` has one entry unless CuTe's ``coalesce_256`` merged global modes that are contiguous in
    memory too (e.g. a tile spanning whole rows of a dense tensor); ``steps`` then gives the TMA
    coordinate step of one unit of each mode.
    """

    box: int
    modes: tuple[int, ...]
    steps: tuple[int, ...]
    stride: int


@dataclass(frozen=True)
class TmaLoad:
    """One ``cp.async.bulk.tensor`` of a tile: shared destination (bytes from the tile's pattern origin),
    the tile coordinate of its first element, and its tensor coordinates for a tile at origin 0."""

    smem_offset: int
    tile_coord: tuple[int, ...]
    coords: tuple[int, ...]


@dataclass(frozen=True)
class TmaCopy:
    """make_tma_copy's answer: the tensor map, its dimensions, the loads that fill one tile, and notes.

    ``writes(base)`` is the model's shared byte for every tile element (index colexicographic over
    the tile shape, as the layout's own index), computed from the tensor map and the loads alone;
    :meth:`verify` proves it equals the shared layout the map was derived from.
    """

    tensor_map: TensorMap
    dims: tuple[TmaDim, ...]
    loads: tuple[TmaLoad, ...]
    smem_layout: Any
    dtype: str
    tile_shape: tuple[int, ...]
    global_shape: tuple[int, ...]
    global_stride: tuple[int, ...]
    notes: tuple[str, ...] = ()
    _swizzle_bytes: Swizzle | None = field(default=None, repr=False)
    _offset: int = field(default=0, repr=False)
    _inner: Any = field(default=None, repr=False)

    @property
    def bytes_per_element(self) -> int:
        """Element size in bytes."""
        return element_bytes(self.dtype)

    @property
    def transaction_bytes(self) -> int:
        """Bytes the loads of one tile deliver (the mbarrier's expect-tx count)."""
        return self.tensor_map.box_bytes * len(self.loads)

    def coordinates(self, origin: Sequence[int] | None = None) -> list[tuple[int, ...]]:
        """Tensor coordinates of every load for a tile whose element (0, .., 0) is global ``origin``."""
        org = self._origin(origin)
        out = []
        for ld in self.loads:
            out.append(tuple(c + sum(org[m] * s for m, s in zip(d.modes, d.steps)) for c, d in zip(ld.coords, self.dims)))
        nb = self.bytes_per_element
        if out and any((c[0] * nb) % 16 for c in out):
            m0 = self.dims[0].modes[0]
            raise LayoutError(
                f"TmaCopy.coordinates: [box_start_align] tile origin {list(org)}: along global mode {m0} (TMA dimension 0) a "
                f"load starts at element {next(c[0] for c in out if (c[0] * nb) % 16)}, not a multiple of {16 // nb} "
                f"{self.dtype} (16 B); cp.async.bulk.tensor faults on it"
            )
        return out

    def _origin(self, origin: Sequence[int] | None) -> tuple[int, ...]:
        n = len(self.global_shape)
        if origin is None:
            return (0,) * n
        org = int_tuple_arg("TmaCopy", "origin", origin)
        if len(org) != n:
            raise LayoutError(f"TmaCopy: origin {org} has {len(org)} entries; the global tensor has {n} modes")
        return org

    def writes(self, base: int = 0) -> np.ndarray:
        """Shared byte the loads put each tile element at, by the tensor map's model, for a tile at shared ``base``.

        Index ``i`` is the tile element of colexicographic index ``i`` over ``tile_shape``; ``-1`` where no
        load writes it. ``base`` is the shared address of the tile's offset 0 (a multiple of 128); the TMA
        swizzles absolute addresses, so a base off the swizzle repeat changes more than an offset.
        """
        m = self.tensor_map
        tile = self.tile_shape
        n = math.prod(tile)
        out = np.full(n, -1, np.int64)
        prefix = np.cumprod((1,) + tile[:-1])
        for ld, coords in zip(self.loads, self.coordinates(None)):
            p = m.placement(coords, int(base) + ld.smem_offset)
            x = np.zeros((len(p["smem"]), len(tile)), np.int64)
            for k, d in enumerate(self.dims):
                # the tile coordinate along each mode of dimension k (single mode: the coordinate itself)
                if len(d.modes) == 1:
                    x[:, d.modes[0]] += p["coord"][:, k]
                else:
                    rem = p["coord"][:, k].copy()
                    for mode, step in sorted(zip(d.modes, d.steps), key=lambda t: -t[1]):
                        x[:, mode] += rem // step
                        rem = rem % step
            ok = np.all((x >= 0) & (x < np.asarray(tile)[None, :]), axis=1)
            out[(x[ok] * prefix[None, :]).sum(axis=1)] = p["smem"][ok]
        return out

    def expected(self) -> np.ndarray:
        """Shared byte of each tile element by the shared layout itself: bytes * Sw(offset + L(i))."""
        nb = self.bytes_per_element
        lin = (self._inner.table() + self._offset) * nb
        return lin if self._swizzle_bytes is None else self._swizzle_bytes(lin)

    def verify(self) -> bool:
        """True; LayoutError naming the first tile element where the tensor map's writes differ from the layout."""
        got, want = self.writes(), self.expected()
        bad = np.nonzero(got != want)[0]
        if len(bad):
            i = int(bad[0])
            raise LayoutError(
                f"TmaCopy.verify: tile element {_colex(i, self.tile_shape)} lands at shared byte {int(got[i])} "
                f"by the tensor map but at {int(want[i])} by the layout {self.smem_layout}"
            )
        return True

    def __str__(self) -> str:
        lines = [str(self.tensor_map), f"  {len(self.loads)} load(s) of {self.tensor_map.box_bytes} B per tile:"]
        for ld in self.loads[:8]:
            lines.append(f"    smem +{ld.smem_offset} B <- coords {list(ld.coords)} (tile element {list(ld.tile_coord)})")
        if len(self.loads) > 8:
            lines.append(f"    ... {len(self.loads) - 8} more")
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)


def _colex(i: int, shape: Sequence[int]) -> tuple[int, ...]:
    out = []
    for s in shape:
        out.append(i % s)
        i //= s
    return tuple(out)


def _as_layout(obj: Any, op: str) -> Any:
    """Layout / ComposedLayout / text, or anything with a ``to_layout()`` conversion (e.g. a Gluon
    ``NVMMASharedLayout`` wrapper from ``layoutalg.interop``): the hook that keeps this module free of Triton."""
    if isinstance(obj, (Layout, ComposedLayout)):
        return obj
    if isinstance(obj, str):
        return parse_composed(obj)
    conv = getattr(obj, "to_layout", None)
    if callable(conv):
        return _as_layout(conv(), op)
    raise LayoutError(f"{op}: {obj!r} is not a Layout, a ComposedLayout, layout text, or an object with to_layout()")


def _split_smem(layout: Any, nb: int, swizzle_unit: str, op: str) -> tuple[Swizzle | None, int, Layout, str]:
    """(swizzle on bytes or None, offset in elements, inner Layout, unit note) of a shared layout."""
    if isinstance(layout, Layout):
        return None, 0, layout, ""
    if not isinstance(layout.outer, Swizzle) or not isinstance(layout.inner, Layout):
        raise LayoutError(f"{op}: {layout} is not 'Swizzle o offset o Layout'; TMA swizzles are Swizzle<B,M,S> on addresses")
    sw = layout.outer
    off = layout.offset
    if not isinstance(off, (int, np.integer)):
        raise LayoutError(f"{op}: offset {off} of {layout} is symbolic; substitute values first")
    if sw.B == 0:
        return None, int(off), layout.inner, ""
    as_bytes = swizzle_mode_of(sw)
    try:
        as_elems = swizzle_mode_of(sw.to_bytes(nb))
    except LayoutError:
        as_elems = None
    if swizzle_unit not in ("auto", "byte", "element"):
        raise LayoutError(f"{op}: swizzle_unit {swizzle_unit!r} is not 'auto', 'byte' or 'element'")
    if swizzle_unit == "byte" or (swizzle_unit == "auto" and as_bytes is not None):
        if as_bytes is None:
            raise LayoutError(f"{op}: [swizzle] {sw.ptx} on byte addresses is not a TMA swizzle mode "
                              "(32B/64B/128B are Swizzle<1..3,4,3>; sm_100's atoms Swizzle<2,5,2>, Swizzle<1,6,1>)")
        return sw, int(off), layout.inner, "swizzle read on byte addresses"
    if as_elems is None:
        raise LayoutError(
            f"{op}: [swizzle] {sw.ptx} is not a TMA swizzle mode on {nb}-byte elements nor on bytes "
            f"(128B on {nb}-byte elements is Swizzle<3,{4 - (nb.bit_length() - 1)},3>)"
        )
    return sw.to_bytes(nb), int(off), layout.inner, "swizzle read on element offsets"


def _global(gtensor: Any, op: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    shape: Any
    stride: Any
    if isinstance(gtensor, str):
        gtensor = parse_composed(gtensor)
    if isinstance(gtensor, Layout):
        if not gtensor.is_static:
            raise LayoutError(f"{op}: global tensor {gtensor} has symbolic entries; substitute values first")
        shape, stride = gtensor.shape, gtensor.stride  # type: ignore[attr-defined]
        if not isinstance(shape, tuple):
            shape, stride = (shape,), (stride,)
    elif isinstance(gtensor, tuple) and len(gtensor) == 2:
        shape, stride = gtensor
        shape, stride = (shape if isinstance(shape, tuple) else (shape,)), (stride if isinstance(stride, tuple) else (stride,))
    else:
        raise LayoutError(f"{op}: global tensor {gtensor!r} is not a Layout, layout text or a (shape, stride) pair")
    if any(isinstance(s, tuple) for s in (*shape, *stride)):
        raise LayoutError(f"{op}: global tensor {gtensor} has hierarchical modes; TMA dimensions are flat (flatten it first)")
    shape_t, stride_t = int_tuple_arg(op, "global shape", shape), int_tuple_arg(op, "global stride", stride)
    if len(shape_t) != len(stride_t):
        raise LayoutError(f"{op}: global shape {shape_t} and stride {stride_t} differ in length")
    if any(s < 1 for s in shape_t):
        raise LayoutError(f"{op}: global shape {shape_t} has a non-positive extent")
    if any(d < 0 for d in stride_t):
        raise LayoutError(f"{op}: [global_stride_align] global stride {stride_t} is negative; TMA strides are unsigned byte counts")
    return shape_t, stride_t


def _coalesce_256(dims: list[list[Any]]) -> list[list[Any]]:
    """CuTe's ``coalesce_256``: merge box dims [box, gstride, modes, steps] that stay contiguous in global
    memory (box0 * stride0 == stride1) while the merged box is at most 256."""
    out: list[list[Any]] = []
    for d in dims:
        if d[0] == 1:
            continue
        if out and out[-1][0] * out[-1][1] == d[1] and out[-1][0] * d[0] <= 256:
            back = out[-1]
            out[-1] = [back[0] * d[0], back[1], back[2] + d[2], back[3] + [s * back[0] for s in d[3]]]
        else:
            out.append([d[0], d[1], list(d[2]), list(d[3])])
    return out


def make_tma_copy(
    gtensor: Any,
    smem_layout: Any,
    dtype: str,
    *,
    base_alignment: int = 16,
    swizzle_unit: str = "auto",
    l2_promotion: str = "128B",
    oob_fill: str = "NONE",
    coalesce: bool = False,
) -> TmaCopy:
    """make_tma_copy(G, S, dtype) -> the tensor map and loads that write the shared tile S from the global tensor G.

    ``gtensor``: the global tensor as a ``Layout`` (shape and strides in elements, one flat mode per
    dimension), layout text, or ``(shape, stride)``. ``smem_layout``: the shared tile, tile coordinate
    -> element offset, with one top-level mode per global mode (missing trailing modes have extent 1):
    a ``Layout``, a ``Swizzle o offset o Layout`` (swizzle on bytes or elements, see ``swizzle_unit``),
    text, or an object with ``to_layout()``. ``base_alignment``: the guaranteed alignment of G's base
    address in bytes. ``l2_promotion`` / ``oob_fill``: passed through (CuTe's defaults: 128B, NONE).
    ``coalesce=True`` merges box dimensions that stay contiguous in global memory into one (up to 256
    elements), as CuTe's ``coalesce_256`` does when the global strides are compile-time constants; with
    run-time strides (the usual kernel) CuTe merges nothing, which is the default here.

    The box is CuTe's: walk shared memory from offset 0 and keep the leading modes that step one
    element along one global mode; the tile is then covered by translated boxes (:attr:`TmaCopy.loads`).
    The result is verified element by element (:meth:`TmaCopy.verify`). Raises LayoutError naming the
    rule (:data:`RULES`) when the driver would refuse the map or no tensor map can write the layout.

    >>> from layoutalg.nvidia.hopper.wgmma import tile
    >>> t = make_tma_copy("(1000,512):(512,1)", tile("K", 128, "f16", (128, 128)), "f16")
    >>> t.tensor_map.box_dim, t.tensor_map.global_strides, [ld.smem_offset for ld in t.loads]
    ((64, 128), (1024,), [0, 16384])
    """
    op = "make_tma_copy"
    if isinstance(base_alignment, bool) or not isinstance(base_alignment, (int, np.integer)) or base_alignment <= 0:
        raise LayoutError(f"{op}: base_alignment={base_alignment!r} must be a positive number of bytes")
    gshape, gstride = _global(gtensor, op)
    dt = tma_data_type(dtype)
    nb = element_bytes(dt)
    layout = _as_layout(smem_layout, op)
    sw, off, inner, unit_note = _split_smem(layout, nb, swizzle_unit, op)
    if not inner.is_static:
        raise LayoutError(f"{op}: shared layout {inner} has symbolic entries; substitute values first")
    r = len(gshape)
    modes = list(inner) if len(inner) > 1 or isinstance(inner.shape, tuple) else [inner]  # type: ignore[attr-defined]
    if len(modes) > r:
        raise LayoutError(f"{op}: shared layout {inner} has {len(modes)} modes but the global tensor only {r}")
    tile = tuple(int(m.size()) for m in modes) + (1,) * (r - len(modes))
    notes: list[str] = [unit_note] if unit_note else []
    mode_obj = swizzle_mode_of(sw)
    if mode_obj is None:  # pragma: no cover - _split_smem refuses these
        raise LayoutError(f"{op}: [swizzle] {sw} is not a TMA swizzle mode")
    if not mode_obj.checked:
        notes.append(f"SWIZZLE_{mode_obj.name} is an sm_100 mode: transcribed from the PTX ISA, not checked on hardware")

    # 1. tile index -> shared offset, and its inverse
    offs = inner.table()
    N = len(offs)
    if offs.min() < 0:
        raise LayoutError(f"{op}: [smem_layout] shared layout {inner} reaches negative offset {int(offs.min())}")
    inv = np.full(int(offs.max()) + 1, -1, np.int64)
    inv[offs] = np.arange(N)
    if np.count_nonzero(inv >= 0) != N:
        u, c = np.unique(offs, return_counts=True)
        o = int(u[c > 1][0])
        i, j = np.nonzero(offs == o)[0][:2]
        raise LayoutError(f"{op}: [smem_layout] shared layout {inner} is not injective: tile elements "
                          f"{_colex(int(i), tile)} and {_colex(int(j), tile)} share offset {o}")
    prefix = np.cumprod((1,) + tile[:-1]).astype(np.int64)
    X = (np.arange(N)[:, None] // prefix[None, :]) % np.asarray(tile)[None, :]  # tile coordinates by tile index

    def coord_at(s: np.ndarray) -> np.ndarray:
        return X[inv[s]]

    # 2. CuTe's sidx2gmode: greedy coalesced modes of shared offset -> tile coordinate, from offset 0
    if inv[0] < 0:
        raise LayoutError(f"{op}: [smem_layout] no tile element at shared offset 0 of {inner}; a box starts at its first byte")
    x0 = X[inv[0]]
    box: list[tuple[int, np.ndarray]] = []
    covered = 1
    while covered < len(inv) and inv[covered] >= 0:
        d = X[inv[covered]] - x0
        # block k (offsets k*covered .. (k+1)*covered - 1) continues the mode when it is block 0 moved k*d in the
        # tile; the mode takes the blocks before the first that does not (all candidate blocks tested at once)
        M = len(inv) // covered
        blocks = inv[: M * covered].reshape(M, covered)
        held = blocks >= 0
        moved = X[np.where(held, blocks, 0)] - np.arange(M)[:, None, None] * d[None, None, :]
        good = held.all(axis=1) & (moved == moved[0][None]).all(axis=(1, 2))
        stops = np.nonzero(~good[1:])[0]
        nblk = 1 + (int(stops[0]) if len(stops) else M - 1)
        if nblk == 1:
            break
        box.append((nblk, d))
        covered *= nblk
    # CuTe keeps only the leading modes whose step is one element of one global mode
    kept: list[tuple[int, int]] = []
    for n, d in box:
        nz = np.nonzero(d)[0]
        if len(nz) != 1 or d[nz[0]] != 1:
            break
        kept.append((n, int(nz[0])))
    if not kept:
        nxt = _colex(int(inv[1]), tile) if len(inv) > 1 and inv[1] >= 0 else None
        raise LayoutError(
            f"{op}: [smem_layout] {inner}: shared offset 1 holds tile element {nxt}, not the next element of "
            f"{_colex(int(inv[0]), tile)} along one mode; TMA writes rows of consecutive global elements"
        )
    box_elems = math.prod(n for n, _ in kept)
    dropped = [(n, d.tolist()) for n, d in box[len(kept):]]
    if dropped:
        notes.append(f"box truncated before shared mode {dropped[0][0]}:{dropped[0][1]} (not a unit step of one global mode), as CuTe does")

    # 3. the loads: translated copies of the box that cover the tile
    pattern = coord_at(np.arange(box_elems)) - x0[None, :]
    assigned = np.zeros(len(inv), bool)
    loads: list[tuple[int, np.ndarray]] = []
    starts = np.sort(offs)
    # boxes are taken in offset order, each the box_elems offsets from the lowest one not yet written: the next box
    # starts at the first tile offset past this one (every offset below it is in an earlier box)
    pos = 0
    while pos < N:
        s0 = int(starts[pos])
        pos = int(np.searchsorted(starts, s0 + box_elems))
        s = np.arange(s0, s0 + box_elems)
        if s[-1] >= len(inv) or np.any(inv[s] < 0) or np.any(assigned[s]):
            raise LayoutError(f"{op}: [smem_layout] {inner}: the {box_elems}-element box placed at shared offset {s0} "
                              "runs past the tile or into another box; no tensor map writes this layout")
        xs = coord_at(s)
        if not np.array_equal(xs - xs[0][None, :], pattern):
            bad = int(np.nonzero(np.any(xs - xs[0][None, :] != pattern, axis=1))[0][0])
            raise LayoutError(
                f"{op}: [smem_layout] {inner}: shared offset {s0 + bad} holds tile element {tuple(xs[bad].tolist())}, "
                f"but a box starting at offset {s0} would put {tuple((xs[0] + pattern[bad]).tolist())} there; "
                "the tile is not a union of translated boxes"
            )
        assigned[s] = True
        loads.append((s0, xs[0]))

    # 4. TMA dimensions: the kept modes (CuTe's coalesce_256 merges contiguous ones), then the others
    if any(gstride[m] == 0 for _, m in kept):
        m = next(m for _, m in kept if gstride[m] == 0)
        raise LayoutError(f"{op}: [smem_gmem_major] global mode {m} has stride 0 (a broadcast); a TMA box reads distinct elements")
    dims: list[list[Any]] = [[n, gstride[m], [m], [1]] for n, m in kept]
    if coalesce:
        dims = _coalesce_256(dims)
    if dims[0][1] != 1:
        m0 = kept[0][1]
        raise LayoutError(
            f"{op}: [smem_gmem_major] the shared tile is contiguous along global mode {m0}, whose stride is "
            f"{gstride[m0]} elements; TMA dimension 0 must have stride 1 (the majorness of the shared layout must be "
            "the global tensor's: TMA cannot transpose)"
        )
    used = {m for d in dims for m in d[2]}
    for m in range(r):
        if m not in used and gshape[m] > 1 and gstride[m] != 0:
            dims.append([1, gstride[m], [m], [1]])
    if len(dims) > 5:
        raise LayoutError(f"{op}: [rank] the tile needs {len(dims)} TMA dimensions (global modes "
                          f"{[d[2] for d in dims]}); a tensor map has at most 5")
    gdim, gstr = [], []
    for _bx, st, ms, steps in dims:
        if len(ms) == 1:
            gdim.append(gshape[ms[0]])
        else:  # CuTe's fill_tma_gmem_shape_stride recurrence for merged modes
            g = (gshape[ms[0]] - 1) * steps[0] + 1
            for mm, sp in zip(ms[1:], steps[1:]):
                g += (gshape[mm] - 1) * sp
            gdim.append(g)
            if any(gshape[mm] * sp != steps[k + 1] for k, (mm, sp) in enumerate(zip(ms[:-1], steps[:-1]))):
                notes.append(f"TMA dimension {len(gdim) - 1} merges global modes {ms}: out-of-bounds is checked on the "
                             "merged extent only")
        gstr.append(st * nb)
    tmap = TensorMap(dt, tuple(gdim), tuple(gstr[1:]), tuple(d[0] for d in dims), (1,) * len(dims),
                     swizzle=mode_obj.name, l2_promotion=l2_promotion, oob_fill=oob_fill,
                     global_address=base_alignment if base_alignment % 16 else 0)
    v = tmap.violations()
    if v:
        hint = ""
        if any(x.rule == "box_inner_swizzle_span" for x in v):
            hint = (f" (the shared tile is contiguous for {dims[0][0]} elements = {dims[0][0] * nb} B along global mode "
                    f"{dims[0][2][0]}; a {mode_obj.name}-swizzled box row holds at most {mode_obj.span} B: tile the "
                    "swizzle atom instead)")
        elif any(x.rule == "box_dim" for x in v):
            hint = " (split the tile: a box holds at most 256 elements per dimension)"
        raise LayoutError(f"{op}: " + "; ".join(str(x) for x in v) + hint)
    tdims = tuple(TmaDim(d[0], tuple(d[2]), tuple(d[3]), d[1]) for d in dims)
    tl = []
    for s0, xs in loads:
        dst = (off + s0) * nb
        if dst % 128:
            raise LayoutError(f"{op}: [smem_address_align] a load starts at shared byte {dst} (offset {off} + {s0} elements), "
                              "not a multiple of 128")
        coords = tuple(int(sum(int(xs[m]) * sp for m, sp in zip(d.modes, d.steps))) for d in tdims)
        tl.append(TmaLoad(dst, tuple(int(c) for c in xs), coords))
    rows = math.prod(d.box for d in tdims[1:])
    if mode_obj.span and rows > 1 and tdims[0].box * nb < mode_obj.span:
        raise LayoutError(
            f"{op}: [box_inner_swizzle_pitch] the shared tile's rows along global mode {tdims[0].modes[0]} are "
            f"{tdims[0].box} {dt} = {tdims[0].box * nb} B, narrower than the {mode_obj.name} swizzle span: the TMA "
            f"places box rows {mode_obj.span} B apart, so it would not write {layout} (CuTe's make_tma_copy builds this "
            f"map anyway); use the {mode_obj.span}-byte swizzle atom, or the swizzle whose span is the row"
        )
    if sw is not None and any(ld.smem_offset % mode_obj.repeat for ld in tl):
        notes.append(f"loads start inside the {mode_obj.repeat}-byte swizzle pattern; the TMA swizzles by absolute "
                     f"shared address, so the tile's pattern origin must be {mode_obj.repeat}-byte aligned")
    out = TmaCopy(tmap, tdims, tuple(tl), layout, dt, tile, gshape, gstride, tuple(notes), sw, off, inner)
    out.verify()
    return out


# --- what wgmma reads ----------------------------------------------------------------------------
def descriptor_reads(descriptor: Any, dtype: str, major: str, shape: tuple[int, int]) -> np.ndarray:
    """The shared byte wgmma reads for each element (mn, k) of one instruction's operand block, from its descriptor.

    ``descriptor``: a :class:`~layoutalg.nvidia.hopper.descriptor.MatrixDescriptor` or its 64-bit word; ``shape``:
    (MN, K) of the block (64 x K for A, N x K for B; K = 32 bytes). The address is the PTX canonical layout
    (docs/wgmma.md, T = 16 / bytes elements per 16 B, W = swizzle / 16) on bytes::

        K-major  none : start + (mn%8)*16  + (mn//8)*SBO + (k%T)*b + (k//T)*LBO
        K-major  sw   : start + (mn%8)*sw  + (mn//8)*SBO + k*b
        MN-major none : start + (mn%T)*b   + (mn//T)*SBO + (k%8)*16 + (k//8)*LBO
        MN-major sw   : start + (mn%T)*b + ((mn//T)%W)*16 + (mn//(T*W))*LBO + (k%8)*sw + (k//8)*SBO

    then swizzled by absolute address with the base offset: row bits ``(addr >> 7) - base_offset``
    (measured on the H100, tests/test_gpu_replay.py). Returns ``[MN, K]`` int64.

    >>> from layoutalg.nvidia.hopper.wgmma import k_block_descriptors, tile
    >>> kb = k_block_descriptors(tile("K", 128, "bf16", (64, 64)), "bf16", "m64n8k16")
    >>> descriptor_reads(kb[1].descriptor, "bf16", "K", (64, 16))[1, :2].tolist()   # row 1, k = 16, 17
    [176, 178]
    """
    from .descriptor import MatrixDescriptor
    from ..common.dtypes import operand_major
    from .wgmma import dtype_bits

    op = "descriptor_reads"
    d = MatrixDescriptor.decode(int(descriptor)) if isinstance(descriptor, (int, np.integer)) else descriptor
    if not isinstance(d, MatrixDescriptor):
        raise LayoutError(f"{op}: {descriptor!r} is not a MatrixDescriptor or a 64-bit descriptor word")
    b = dtype_bits(dtype) // 8
    T = 16 // b
    major = operand_major(major)
    MN, K = shape
    mn = np.arange(MN)[:, None]
    k = np.arange(K)[None, :]
    sw = d.swizzle
    if major == "K":
        if sw == 0:
            a = (mn % 8) * 16 + (mn // 8) * d.stride_byte_offset + (k % T) * b + (k // T) * d.leading_byte_offset
        else:
            a = (mn % 8) * sw + (mn // 8) * d.stride_byte_offset + k * b
    else:
        if sw == 0:
            a = (mn % T) * b + (mn // T) * d.stride_byte_offset + (k % 8) * 16 + (k // 8) * d.leading_byte_offset
        else:
            W = sw // 16
            a = ((mn % T) * b + ((mn // T) % W) * 16 + (mn // (T * W)) * d.leading_byte_offset
                 + (k % 8) * sw + (k // 8) * d.stride_byte_offset)
    a = np.asarray(a + d.start_address, np.int64)
    if sw:
        B = {32: 1, 64: 2, 128: 3}[sw]
        rows = ((a >> 7) - d.base_offset) & ((1 << B) - 1)
        a = a ^ (rows << 4)
    return a


@dataclass(frozen=True)
class WgmmaCheck:
    """check_wgmma's answer. ``ok``: every element wgmma reads is where the TMA wrote it.

    ``first``: None, or the first disagreement as a dict: ``element`` (mn, k), ``tma_byte`` (where the
    tensor map put it), ``wgmma_byte`` (where the descriptor reads it), ``reads_instead`` (the element the
    TMA put at ``wgmma_byte``, None if none), ``block`` (index of the descriptor).
    """

    ok: bool
    checked: int
    mismatches: int
    first: dict | None
    descriptors: tuple[int, ...]

    def __bool__(self) -> bool:
        return self.ok

    def __str__(self) -> str:
        if self.ok:
            return f"TMA writes what wgmma reads: {self.checked} elements, {len(self.descriptors)} descriptor(s)"
        f = self.first or {}
        inst = f.get("reads_instead")
        return (f"TMA and wgmma disagree on {self.mismatches} of {self.checked} elements; first: element "
                f"{f.get('element')} is written at byte {f.get('tma_byte')} but descriptor {f.get('block')} reads byte "
                f"{f.get('wgmma_byte')}" + (f", which holds element {inst}" if inst is not None else ", where nothing was written"))


def check_wgmma(
    tma: TmaCopy,
    operand: Any,
    *,
    instruction: str | None = None,
    operand_name: str = "A",
    major: str | None = None,
    tile_base: int = 0,
) -> WgmmaCheck:
    """Prove that what the tensor map writes is what wgmma reads: for every element (mn, k) of the tile,
    the shared byte of ``tma.writes()`` equals the byte the descriptor of its k-block reads.

    ``operand``: the wgmma operand as a layout (its k-block descriptors are derived with
    :func:`~layoutalg.nvidia.hopper.wgmma.k_block_descriptors`), or the descriptors themselves
    (``MatrixDescriptor`` or words, one per instruction block in MN-block-major order; ``major``
    needed). The tile's mode 0 is MN and mode 1 is K. ``instruction`` (e.g. 'm64n128k16') sets the
    block; default: M = 64 for A, N = the tile's MN (<= 256) for B, K = 32 bytes. Descriptor start
    addresses are relative to ``tile_base``, the shared address of the tile's pattern origin.

    >>> from layoutalg.nvidia.hopper.wgmma import tile
    >>> t = make_tma_copy("(256,64):(64,1)", tile("K", 128, "f16", (64, 64)), "f16")
    >>> bool(check_wgmma(t, tile("K", 128, "f16", (64, 64))))
    True
    >>> print(check_wgmma(t, tile("K", 64, "f16", (64, 64))))     # a 64B descriptor on a 128B map
    ... # doctest: +NORMALIZE_WHITESPACE
    TMA and wgmma disagree on 4064 of 4096 elements; first: element (1, 0) is written at byte 144
    but descriptor 0 reads byte 64, which holds element (0, 32)
    """
    from .descriptor import MatrixDescriptor
    from ..common.dtypes import operand_major
    from .wgmma import dtype_name, k_block_descriptors, parse_instruction

    op = "check_wgmma"
    if not isinstance(tma, TmaCopy):
        raise LayoutError(f"{op}: {tma!r} is not a TmaCopy (make_tma_copy's answer)")
    if len(tma.tile_shape) < 2 or any(s != 1 for s in tma.tile_shape[2:]):
        raise LayoutError(f"{op}: tile shape {tma.tile_shape} is not (MN, K); a wgmma operand is rank 2")
    MN, K = tma.tile_shape[:2]
    wdt = {"FLOAT16": "f16", "BFLOAT16": "bf16", "TFLOAT32": "tf32", "FLOAT32": "tf32", "UINT8": "e4m3"}.get(tma.dtype)
    if wdt is None:
        raise LayoutError(f"{op}: {tma.dtype} is not a wgmma operand type")
    nb = tma.bytes_per_element
    if instruction is None:
        kk = 32 // nb
        n = 8 if operand_name == "A" else MN
        instruction = f"m64n{n}k{kk}"
    Mi, Ni, Ki = parse_instruction(instruction, wdt)
    mnb = Mi if operand_name == "A" else Ni
    if MN % mnb or K % Ki:
        raise LayoutError(f"{op}: tile {MN}x{K} is not a multiple of the {instruction} operand {operand_name} block {mnb}x{Ki}")
    if isinstance(operand, (MatrixDescriptor, int, np.integer)):
        operand = [operand]
    if isinstance(operand, (list, tuple)):
        if major is None:
            raise LayoutError(f"{op}: descriptors given without major= ('K' or 'MN')")
        maj = operand_major(major)
        words = [MatrixDescriptor.decode(int(w)) if not isinstance(w, MatrixDescriptor) else w for w in operand]
    else:
        lay = _as_layout(operand, op)
        kbs = k_block_descriptors(lay, wdt, instruction, operand=operand_name, major=major, mn_block=None,
                                  start_address=tile_base)
        words = [kb.descriptor for kb in kbs]
        maj = kbs[0].derivation.params.major
    nblk = (MN // mnb) * (K // Ki)
    if len(words) != nblk:
        raise LayoutError(f"{op}: {len(words)} descriptor(s) for {nblk} blocks of {mnb}x{Ki} in a {MN}x{K} tile")
    written = tma.writes(int(tile_base))
    pos = {int(a): i for i, a in enumerate(written)}
    total = 0
    bad = 0
    first: dict | None = None
    for bidx, dsc in enumerate(words):
        i, j = divmod(bidx, K // Ki)
        reads = descriptor_reads(dsc, wdt, maj, (mnb, Ki))
        mm = np.arange(mnb)[:, None] + i * mnb
        kk2 = np.arange(Ki)[None, :] + j * Ki
        want = written[(mm + kk2 * MN)]
        diff = want != reads
        total += diff.size
        bad += int(diff.sum())
        if first is None and diff.any():
            a, c = (int(x) for x in np.argwhere(diff)[0])
            got = pos.get(int(reads[a, c]))
            first = {"element": (i * mnb + a, j * Ki + c), "tma_byte": int(want[a, c]), "wgmma_byte": int(reads[a, c]),
                     "reads_instead": None if got is None else _colex(got, (MN, K)), "block": bidx}
    _ = dtype_name(wdt)
    return WgmmaCheck(bad == 0, total, bad, first, tuple(int(w.encode()) for w in words))
