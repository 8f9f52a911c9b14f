"""Synthesising the shared-memory layout an access pattern needs: the swizzle with the fewest wavefronts.

A kernel touches a shared-memory tile several ways -- 16-byte ``cp.async`` stores row by row,
``ldmatrix`` reads of an MMA operand, a transposed read -- and each way is a warp-level *access*:
a TV layout ``(thread, value) -> coordinate index`` of the tile plus the bytes one thread moves
per instruction (the vocabulary of :mod:`layoutalg.banks`). :func:`synthesize_swizzle` searches the
layouts ``swizzle o row-major`` for the one whose accesses take the fewest shared-memory
*wavefronts* in total, and sets it beside the unswizzled tile, the best of CuTe's GMMA swizzle
atoms and the best padding.

Worked by hand: a 64x64 ``f16`` tile, row-major (128-byte rows), read by ``ldmatrix.x4``. Lanes
0-7 give the addresses of rows 0-7 at column 0: byte ``128 * r``, all in banks 0-3, eight
distinct 16-byte words on the same four banks: 8 wavefronts where 1 would do, for each of the
four phases (32 for the instruction, ideal 4). XOR-ing the row into the 16-byte chunk,
``chunk' = chunk ^ (row % 8)`` -- ``Swizzle<3,3,3>`` on element offsets, CuTe's 128-byte atom --
puts the eight rows on eight different chunks: 4 wavefronts. The 16-byte row stores stay
conflict-free (eight lanes write one 128-byte row, whose chunks the XOR only permutes)::

    >>> from layoutalg.layout import Layout
    >>> acc = [row_copy((64, 64), "f16"), ldmatrix_copy((64, 64))]
    >>> s = synthesize_swizzle((64, 64), "f16", acc)
    >>> print(s.best.layout)
    Sw<3,3,3> o _0 o (64,64):(64,1)
    >>> s.no_swizzle.wavefronts, s.best.wavefronts       # per access: stores, ldmatrix
    ((64, 512), (64, 64))

The families searched (``SwizzleSynthesis.searched`` says which, with counts):

* every ``Swizzle<B,M,S>`` on element offsets whose masks stay inside the tile, with ``M`` at least
  the widest vector (so vectors stay contiguous);
* compositions ``Sw2 o Sw1`` of two of them, the first among the best singles (only when the
  best single is above the lower bound, the sum of the accesses' ideal wavefronts);
* F2-linear XOR maps ``x ^ T(x)`` with ``T`` from the address bits that vary inside a phase into
  the bank bits above the vector (exhaustively when small, else coordinate descent), converted to a
  layout through :func:`layoutalg.linear.to_linear` / :func:`~layoutalg.linear.from_linear`;
* CuTe's eight GMMA atoms (K/MN-major, INTER/SW32/SW64/SW128) tiled to the shape, in both
  orientations of the tile, and the row pitches ``cols + pad`` (padding).

Ties go to a CuTe atom, then to what wgmma (a canonical layout, :func:`~layoutalg.nvidia.hopper.wgmma.
descriptor_from_layout`) or TMA (a K-major atom tile or row-major) accept, then to the simplest map.
Every reported number comes from :func:`layoutalg.banks.address_report`, instruction by instruction;
a vectorized copy of that model ranks the candidates (``tests/test_synth.py`` holds the two equal).

Where TiledCopy partitions plug in: an access is anything :func:`as_access` accepts -- an
:class:`Access`, a ``(tv_layout, vector_bytes)`` pair, or an object with ``tv_layout`` (or
``layout``) and ``vector_bytes`` attributes (a TiledCopy partition exposing its per-warp TV layout
onto the tile's coordinates once it exists).
"""

from __future__ import annotations

import itertools
import math
import time
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .composed import ComposedLayout
from .errors import LayoutError, guarded
from .layout import Layout, make_layout
from .nvidia.common.dtypes import dtype_name
from .swizzle import Swizzle

__all__ = [
    "Access",
    "as_access",
    "copy_access",
    "row_copy",
    "ldmatrix_copy",
    "block_transpose_read",
    "Candidate",
    "SwizzleSynthesis",
    "synthesize_swizzle",
    "wavefronts",
    "per_access",
    "dtype_bytes",
    "KERNELS",
    "kernel_accesses",
]

#: shared memory one CTA may use on sm_90 (227 KiB)
SMEM_BYTES = 227 * 1024

_DTYPE_BYTES = {"f64": 8, "f32": 4, "tf32": 4, "s32": 4, "f16": 2, "bf16": 2, "b16": 2, "e4m3": 1, "e5m2": 1,
                "s8": 1, "u8": 1, "b8": 1}


def dtype_bytes(dtype: str, op: str = "dtype_bytes") -> int:
    """Bytes of one element of ``dtype`` (``"f16"`` -> 2, ``"e4m3"`` -> 1).

    >>> dtype_bytes("bf16"), dtype_bytes("tf32")
    (2, 4)
    """
    return _DTYPE_BYTES[dtype_name(dtype, allowed=_DTYPE_BYTES, op=op)]


# ---------------------------------------------------------------------------------------------
# accesses
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Access:
    """One way a kernel touches the tile: ``tv(thread, value)`` is a coordinate index of the tile
    (``row + rows * col``), ``vector_bytes`` the bytes a thread moves per instruction.

    Threads ``32w .. 32w + 31`` form warp ``w``; the ``k``-th vector of every thread of a warp is one
    instruction. Only lanes ``< active_lanes`` of each warp take part (``ldmatrix.x1`` reads the
    addresses of lanes 0-7 only). ``kind`` ("load" / "store") and ``instruction`` (the PTX) are for
    the reports and the hardware check.
    """

    name: str
    tv: Layout
    vector_bytes: int
    kind: str = "load"
    instruction: str = ""
    active_lanes: int = 32

    def __post_init__(self) -> None:
        if not isinstance(self.tv, Layout) or len(self.tv) != 2:
            raise LayoutError(f"Access {self.name!r}: tv={self.tv!r} must be a rank-2 (thread, value) Layout")
        if self.vector_bytes not in (1, 2, 4, 8, 16):
            raise LayoutError(f"Access {self.name!r}: vector_bytes={self.vector_bytes} is not 1, 2, 4, 8 or 16")
        if self.kind not in ("load", "store"):
            raise LayoutError(f"Access {self.name!r}: kind={self.kind!r} is not 'load' or 'store'")
        if not 1 <= self.active_lanes <= 32:
            raise LayoutError(f"Access {self.name!r}: active_lanes={self.active_lanes} is not in 1..32")


def copy_access(tiled_copy: Any, shape: tuple[int, int], dtype: str, *, side: str | None = None,
                name: str | None = None) -> Access:
    """The shared-memory access a :class:`~layoutalg.tiled.TiledCopy` makes to a ``(rows, cols)`` tile.

    Each thread's partition of the tile (CuTe's ``tidfrg_S``/``tidfrg_D`` of the coordinate index
    ``row + rows*col``) as a TV layout; a lane moves the copy atom's register width on its
    shared-memory ``side`` (default the atom's: ``"S"`` for ldmatrix, ``"D"`` for stmatrix and
    cp.async); lanes whose values repeat an earlier lane's (``ldmatrix.x1/.x2``) are inactive.
    :func:`per_access` of it equals :func:`layoutalg.banks.analyze_copy` of the same copy.

    >>> from layoutalg.nvidia.atoms import copy_atom, mma_atom
    >>> from layoutalg.tiled import make_tiled_mma, make_tiled_copy_A
    >>> mma = make_tiled_mma(mma_atom("SM80_16x8x16_F32F16F16F32_TN"), (2, 2, 1), (32, 32, 16))
    >>> a = copy_access(make_tiled_copy_A(copy_atom("SM75_U32x4_LDSM_N", "f16"), mma), (64, 32), "f16")
    >>> a.vector_bytes, per_access(Layout((64, 32), (32, 1)), [a], 2)      # 4-way: 256 wavefronts, ideal 64
    (16, ((256,), (64,)))
    """
    from .tiled import TiledCopy

    op = "copy_access"
    if not isinstance(tiled_copy, TiledCopy):
        raise LayoutError(f"{op}: {tiled_copy!r} is not a TiledCopy")
    R, C = _check_shape(shape, op)
    eb = dtype_bytes(dtype, op)
    atom = tiled_copy.atom
    side = side or atom.smem_side
    if side not in ("S", "D"):
        raise LayoutError(f"{op}: the copy {atom.name} does not say which side is shared memory; pass side='S' or 'D'")
    reg_bits = atom.src_register_bits if side == "S" else atom.dst_register_bits
    vb = max(eb, reg_bits // 8) if reg_bits else eb
    ident = Layout((R, C))
    frg = tiled_copy.tidfrg_S(ident) if side == "S" else tiled_copy.tidfrg_D(ident)
    tv = make_layout(frg[0], make_layout(*[frg[k] for k in range(1, len(frg))]))
    # ldmatrix .x1/.x2: the lanes beyond the matrices' row addresses repeat an earlier lane's values
    val = atom.val_layout_src if side == "S" else atom.val_layout_dst
    nthr = atom.num_threads
    rows = np.asarray(val.table(), dtype=np.int64).reshape(-1, nthr).T
    dup = {j for j in range(nthr) if any(np.array_equal(rows[j], rows[i]) for i in range(j))}
    idle = [lane for lane in range(32) if lane % nthr in dup]
    active = min(idle) if idle else 32
    if idle != list(range(active, 32)):
        raise LayoutError(f"{op}: the idle lanes {idle} of {atom.name} are not the last lanes of a warp")
    return Access(name or f"{atom.name} ({'source' if side == 'S' else 'destination'})", tv, vb,
                  "load" if side == "S" else "store", atom.name, active)


def as_access(x: Any, index: int = 0, shape: tuple[int, int] | None = None, dtype: str | None = None) -> Access:
    """An :class:`Access` from an Access, a ``(tv, vector_bytes)`` / ``(name, tv, vector_bytes)`` tuple,
    a :class:`~layoutalg.tiled.TiledCopy` (with the tile's ``shape`` and ``dtype``: :func:`copy_access`),
    or an object with ``tv_layout`` (or ``layout``) and ``vector_bytes`` attributes.

    >>> as_access((Layout((32, 8), (1, 64)), 16)).name
    'access0'
    """
    if isinstance(x, Access):
        return x
    if hasattr(x, "tidfrg_S") and shape is not None and dtype is not None:
        return copy_access(x, shape, dtype)
    if isinstance(x, tuple) and len(x) == 2:
        return Access(f"access{index}", x[0], int(x[1]))
    if isinstance(x, tuple) and len(x) == 3:
        return Access(str(x[0]), x[1], int(x[2]))
    tv = getattr(x, "tv_layout", None) or getattr(x, "layout", None)
    vb = getattr(x, "vector_bytes", None)
    if isinstance(tv, Layout) and vb is not None:
        return Access(str(getattr(x, "name", f"access{index}")), tv, int(vb),
                      str(getattr(x, "kind", "load")), str(getattr(x, "instruction", "")))
    raise LayoutError(
        f"synthesize_swizzle: access {x!r} is not an Access, a (tv, vector_bytes) pair or an object with "
        "tv_layout and vector_bytes"
    )


def _pos_int(x: Any, op: str, what: str) -> int:
    """A positive int argument (LayoutError for a bool, float, string, tuple, zero or negative)."""
    if isinstance(x, bool) or not isinstance(x, (int, np.integer)) or int(x) < 1:
        raise LayoutError(f"{op}: {what}={x!r} is not a positive int")
    return int(x)


def _check_shape(shape: Any, op: str) -> tuple[int, int]:
    if not (isinstance(shape, tuple) and len(shape) == 2 and all(isinstance(s, int) and s > 0 for s in shape)):
        raise LayoutError(f"{op}: shape {shape!r} is not a pair (rows, cols) of positive ints")
    return shape[0], shape[1]


def row_copy(shape: tuple[int, int], dtype: str, *, threads: int = 128, vector_bytes: int = 16,
             kind: str = "store", instruction: str = "cp.async.cg.shared.global [16 B]",
             name: str = "row stores") -> Access:
    """Thread ``t`` copies 16-byte chunks ``t, t + threads, ...`` of the tile, chunks numbered row by row.

    CuTe's ``make_tiled_copy(Copy_Atom<SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>>, threads row-major,
    Layout<Shape<_1,_8>>)``: consecutive threads take consecutive chunks of a row, so the eight
    lanes of one 16-byte phase write 128 contiguous bytes of the unswizzled tile.
    Preconditions: ``vector_bytes / element bytes`` divides ``cols``; the chunks of a row divide
    ``threads`` (or the reverse) and the copy covers the tile evenly.

    >>> a = row_copy((8, 64), "f16", threads=32)
    >>> a.tv(0, 0), a.tv(1, 0), a.tv(8, 0), a.tv(0, 8)    # (row 0, col 0), (0, 8), (1, 0), thread 0's 2nd chunk: row 4
    (0, 64, 1, 4)
    """
    op = "row_copy"
    threads, vector_bytes = _pos_int(threads, op, "threads"), _pos_int(vector_bytes, op, "vector_bytes")
    R, C = _check_shape(shape, op)
    eb = dtype_bytes(dtype, op)
    n = vector_bytes // eb
    if n < 1 or vector_bytes % eb or C % n:
        raise LayoutError(f"{op}: {vector_bytes}-byte vectors of {dtype} do not divide a row of {C} elements")
    cpr = C // n  # chunks per row
    if threads % cpr == 0:
        rows_per_pass = threads // cpr
        if R % rows_per_pass:
            raise LayoutError(f"{op}: {threads} threads cover {rows_per_pass} rows per pass, which does not divide {R}")
        tv = Layout(((cpr, rows_per_pass), (n, R // rows_per_pass)), ((R * n, 1), (R, rows_per_pass)))
    elif cpr % threads == 0:
        tv = Layout((threads, (n, cpr // threads, R)), (R * n, (R, threads * R * n, 1)))
    else:
        raise LayoutError(f"{op}: {cpr} chunks per row and {threads} threads: neither divides the other")
    return Access(name, tv, vector_bytes, kind, instruction)


def ldmatrix_copy(shape: tuple[int, int], *, num: int = 4, trans: bool = False, order: str = "row-first",
                  warps: int = 4, name: str | None = None) -> Access:
    """``ldmatrix.x{num}{.trans}``: each lane gives the address of one 16-byte row of an 8x8 matrix of b16.

    Lane ``l`` supplies row ``l % 8`` of matrix ``l // 8`` (:func:`layoutalg.nvidia.ampere.ldmatrix.address_lanes`).
    Matrix ``j`` sits at (row, col) offset ``(8 * (j % 2), 8 * (j // 2))`` (``order="row-first"``:
    the A operand of ``mma.m16n8k16`` and, with ``.trans``, V read as the B operand of ``P @ V``)
    or ``(8 * (j // 2), 8 * (j % 2))`` (``"col-first"``: B read N x K without ``.trans``). One
    instruction covers a block of the tile; ``warps`` warps take consecutive blocks (column-major) and
    repeat until the tile is read once. ``.trans`` changes which register gets which element, not the
    addresses: the bank analysis is the same.

    >>> a = ldmatrix_copy((16, 16), warps=1)
    >>> [a.tv(l, 0) for l in (0, 7, 8, 16)]        # rows 0, 7, 8 at col 0; row 0 at col 8
    [0, 7, 8, 128]
    """
    from .nvidia.ampere import ldmatrix

    op = "ldmatrix_copy"
    num, warps = _pos_int(num, op, "num"), _pos_int(warps, op, "warps")
    R, C = _check_shape(shape, op)
    lanes = ldmatrix.address_lanes(num)  # (row, matrix) -> lane; LayoutError for a bad num
    if order not in ("row-first", "col-first"):
        raise LayoutError(f"{op}: order={order!r} is not 'row-first' or 'col-first'")
    # matrix j -> (row, col) offset, as a layout onto the coordinate index row + R*col
    if num == 1:
        mats, bh, bw = Layout(1, 0), 8, 8
    elif num == 2:
        mats, bh, bw = (Layout(2, 8), 16, 8) if order == "row-first" else (Layout(2, 8 * R), 8, 16)
    else:
        mats = Layout((2, 2), (8, 8 * R)) if order == "row-first" else Layout((2, 2), (8 * R, 8))
        bh, bw = 16, 16
    if R % bh or C % bw:
        raise LayoutError(f"{op}: tile {shape} is not a multiple of the {bh}x{bw} block of ldmatrix.x{num}")
    # lane -> (row in matrix, matrix): the inverse of address_lanes, restricted to the lanes that are read
    active = int(lanes.size())
    lane_mode = make_layout(Layout(8, 1), mats) if num > 1 else Layout(8, 1)
    if active < 32:
        lane_mode = make_layout(lane_mode, Layout(32 // active, 0))  # unread lanes repeat the read ones
    blocks = _split(Layout((R // bh, C // bw), (bh, bw * R)), warps)
    tv = make_layout(make_layout(lane_mode, blocks[0]), make_layout(Layout(8, R), blocks[1]))
    ptx = f"ldmatrix.sync.aligned.m8n8.x{num}{'.trans' if trans else ''}.shared.b16"
    return Access(name or f"ldmatrix.x{num}{'.trans' if trans else ''}", tv, 16, "load", ptx, active)


def _split(blocks: Layout, warps: int) -> Layout:
    """``(warp, repeat) -> block``: the blocks in column-major order, the first ``w`` to ``w`` warps, then again;
    ``w`` the largest divisor of ``warps`` for which that is a layout."""
    from .algebra import composition

    nb = int(blocks.size())
    for w in range(math.gcd(warps, nb), 0, -1):
        if warps % w or nb % w:
            continue
        try:
            return composition(blocks, Layout((w, nb // w), (1, w)))
        except LayoutError:
            continue
    return composition(blocks, Layout((1, nb), (0, 1)))  # pragma: no cover - w = 1 always composes


def block_transpose_read(shape: tuple[int, int], dtype: str, *, word_bytes: int = 4, threads: int = 128,
                         name: str = "4x4 block reads") -> Access:
    """Thread reads a ``k x k`` block of ``k = word_bytes / element bytes`` elements, one ``word_bytes`` load per row.

    The read of a transpose through shared memory: each thread loads ``k`` words (``k`` rows of
    ``k`` elements), transposes them in registers (``prmt``) and writes ``k`` columns out. Lanes
    ``l % 8`` walk eight column blocks, ``l // 8`` four row blocks; warps and repeats continue down
    the rows, then across. Instruction ``j`` of a warp reads row ``j`` of every lane's block.

    >>> a = block_transpose_read((64, 64), "e4m3", threads=32)
    >>> [a.tv(l, 0) for l in (0, 1, 8)], a.tv(0, 4)        # (0,0), (0,4), (4,0); thread 0 row 1
    ([0, 256, 4], 1)
    """
    op = "block_transpose_read"
    word_bytes, threads = _pos_int(word_bytes, op, "word_bytes"), _pos_int(threads, op, "threads")
    R, C = _check_shape(shape, op)
    eb = dtype_bytes(dtype, op)
    k = word_bytes // eb
    if k < 1 or word_bytes % eb:
        raise LayoutError(f"{op}: {word_bytes}-byte words do not hold whole {dtype} elements")
    cb, rb = C // k, R // k  # column blocks, row blocks
    if cb % 8 or rb % 4 or (rb * cb) % threads or threads % 32:
        raise LayoutError(f"{op}: tile {shape} with {k}x{k} blocks does not fit 8x4-block warps and {threads} threads")
    warps = threads // 32
    # blocks beyond one warp's 8 x 4: row blocks first (rb // 4 of them), then column blocks (cb // 8)
    split = _split(Layout((rb // 4, cb // 8), (4 * k, 8 * k * R)), warps)
    thr = make_layout(Layout((8, 4), (k * R, k)), split[0])
    val = make_layout(Layout((k, k), (R, 1)), split[1])
    return Access(name, make_layout(thr, val), word_bytes, "load", f"ld.shared.b{8 * word_bytes}")


# ---------------------------------------------------------------------------------------------
# the bank model, vectorized over candidate layouts
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class AccessPlan:
    """An access's instructions under the base layout: element offsets ``[instruction, lane]``."""

    access: Access
    offsets: np.ndarray  # (I, 32) element offsets of each lane's vector start; inactive lanes copy a read one
    phase_active: np.ndarray  # (I, P) whether a phase has any active lane


def access_plan(base: Any, access: Access, eb: int) -> AccessPlan:
    """The instructions of ``access`` under ``base`` (element bytes ``eb``): each lane's element offset per
    instruction, inactive lanes repeating a read word, and which bank phases are active. A test hook too."""
    from .banks import access_addresses

    starts = access_addresses(base, access.tv, eb, access.vector_bytes)  # (T, K) bytes
    T, K = starts.shape
    if T % 32:
        raise LayoutError(f"synthesize_swizzle: access {access.name!r} has {T} threads, not whole warps of 32")
    inst = starts.reshape(T // 32, 32, K).transpose(0, 2, 1).reshape(-1, 32) // eb  # (warps*K, 32)
    lp = 32 if access.vector_bytes <= 4 else (16 if access.vector_bytes == 8 else 8)
    active = [lane < access.active_lanes for lane in range(32)]
    # an inactive lane repeats the first lane of its phase (no new word), or belongs to a phase of none
    src = np.array([lane if active[lane] else (lane // lp) * lp for lane in range(32)])
    offsets = inst[:, src]
    phase = np.array([any(active[p:p + lp]) for p in range(0, 32, lp)])
    phase_active = np.repeat(phase[None, :], inst.shape[0], axis=0)
    return AccessPlan(access, offsets, phase_active)


@guarded
def wavefronts(offsets: np.ndarray, phase_active: np.ndarray, element_bytes: int, vector_bytes: int
               ) -> tuple[np.ndarray, np.ndarray]:
    """The bank model of :mod:`layoutalg.banks` on many layouts at once: ``(wavefronts, ideal)`` per
    ``[candidate, instruction]`` for element offsets ``offsets[candidate, instruction, lane]``.

    Per phase (32, 16 or 8 lanes for <= 4, 8, 16 bytes) the cost is the largest number of distinct
    4-byte words any bank must deliver; the ideal is ``ceil(distinct words / 32)``.

    >>> off = np.arange(32)[None, None, :] * 64        # 32 rows of a 64-wide f16 tile, column 0
    >>> wavefronts(off, np.ones((1, 1), bool), 2, 2)
    (array([[32]]), array([[1]]))
    """
    K, I, L = offsets.shape
    lp = 32 if vector_bytes <= 4 else (16 if vector_bytes == 8 else 8)
    P = L // lp
    w = max(1, vector_bytes // 4)
    words = (offsets * element_bytes) // 4
    if w > 1:
        words = words[..., None] + np.arange(w)
    words = words.reshape(K * I * P, lp * w)
    words = np.sort(words, axis=1)
    uniq = np.ones(words.shape, dtype=bool)
    uniq[:, 1:] = words[:, 1:] != words[:, :-1]
    bank = words % 32
    idx = (np.arange(K * I * P)[:, None] * 32 + bank)[uniq]
    counts = np.bincount(idx, minlength=K * I * P * 32).reshape(K, I, P, 32)
    act = phase_active.reshape(1, I, P)
    wf = (counts.max(axis=3) * act).sum(axis=2)
    ideal = ((-(-uniq.sum(axis=1).reshape(K, I, P) // 32)) * act).sum(axis=2)
    return wf, ideal


# ---------------------------------------------------------------------------------------------
# candidate maps on element offsets
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class XorMap:
    """x -> x ^ T(x): ``columns`` are (source bit, target mask) pairs; sources above every target bit."""

    columns: tuple[tuple[int, int], ...]

    def apply(self, x: np.ndarray) -> np.ndarray:
        out = x.copy()
        for src, mask in self.columns:
            out ^= ((x >> src) & 1) * mask
        return out


def apply_map(m: Any, x: np.ndarray) -> np.ndarray:
    """A candidate map on element offsets ``x``: None (identity), a Swizzle, an :class:`XorMap`, or a tuple
    of them applied first to last."""
    if m is None:
        return x
    if isinstance(m, Swizzle):
        return m(x)
    if isinstance(m, tuple):  # a composition, applied first to last
        for f in m:
            x = apply_map(f, x)
        return x
    return m.apply(x)


def candidate_swizzles(nbits: int, m_min: int) -> list[Swizzle]:
    """Every ``Swizzle(B, M, S)`` (S of either sign) whose masks fit ``nbits`` offset bits, with ``M >= m_min``."""
    out = []
    for B in range(1, nbits + 1):
        for M in range(m_min, nbits):
            for S in itertools.chain(range(B, nbits + 1), range(-nbits, -B + 1)):
                if S == 0:
                    continue
                sw = Swizzle(B, M, S)
                if sw.yyy_mask < (1 << nbits) and sw.zzz_mask < (1 << nbits):
                    out.append(sw)
    return out


# ---------------------------------------------------------------------------------------------
# results
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Candidate:
    """One layout of the tile with its wavefronts per access (from :func:`layoutalg.banks.address_report`).

    ``layout`` maps the tile's (row, col) to element offsets; ``family`` says where it came from;
    ``accepted_by`` lists "wgmma" (a canonical wgmma layout, :func:`~layoutalg.nvidia.hopper.wgmma.descriptor_from_layout`)
    and "tma" (row-major, or a K-major GMMA atom tile: the image of TMA boxes in a swizzle mode);
    ``atom`` names the CuTe atom it equals, if any; ``extra_bytes`` is the padding's cost.
    """

    name: str
    layout: Any
    family: str
    wavefronts: tuple[int, ...]
    ideal: tuple[int, ...]
    accepted_by: tuple[str, ...] = ()
    atom: str = ""
    extra_bytes: int = 0

    @property
    def total(self) -> int:
        """Wavefronts of all the accesses together."""
        return sum(self.wavefronts)


@dataclass(frozen=True)
class SwizzleSynthesis:
    """The answer of :func:`synthesize_swizzle` and what it is compared with.

    ``best`` is the synthesised layout; ``no_swizzle`` the row-major tile, ``best_atom`` the best
    CuTe GMMA atom tiled to the shape (None when the type has none or none fits), ``padding`` the
    best padded row pitch (None when no pitch keeps the vectors aligned). ``lower_bound`` is the
    accesses' ideal wavefronts; ``searched`` the families and how many candidates each had.
    """

    shape: tuple[int, int]
    dtype: str
    accesses: tuple[Access, ...]
    best: Candidate
    no_swizzle: Candidate
    best_atom: Candidate | None
    padding: Candidate | None
    lower_bound: tuple[int, ...]
    searched: tuple[tuple[str, int], ...]
    seconds: float = field(default=0.0, compare=False)

    @property
    def layout(self) -> Any:
        """The synthesised layout (``best.layout``)."""
        return self.best.layout

    def rows(self) -> list[Candidate]:
        """The candidates side by side: synthesised, no swizzle, best CuTe atom, padding."""
        return [c for c in (self.best, self.no_swizzle, self.best_atom, self.padding) if c is not None]

    def table(self) -> str:
        """A text table: one column per access, one row per layout, wavefronts (ideal in the header)."""
        heads = [f"{a.name} (ideal {i})" for a, i in zip(self.accesses, self.lower_bound)]
        rows = [[f"{c.name}: {c.layout}"] + [str(w) for w in c.wavefronts] + [str(c.total)] for c in self.rows()]
        cols = ["layout"] + heads + [f"total (ideal {sum(self.lower_bound)})"]
        widths = [max(len(cols[j]), *(len(r[j]) for r in rows)) for j in range(len(cols))]
        out = ["  ".join(c.ljust(w) for c, w in zip(cols, widths)), "  ".join("-" * w for w in widths)]
        out += ["  ".join(v.ljust(w) for v, w in zip(r, widths)) for r in rows]
        return "\n".join(line.rstrip() for line in out)

    def summary(self) -> str:
        """The table, the families searched and the synthesised layout's formula (:func:`layoutalg.explain`)."""
        from .explain import explain

        fam = "; ".join(f"{n}: {k}" for n, k in self.searched)
        e = explain(self.best.layout)
        acc = ", ".join(self.best.accepted_by) or "neither wgmma nor TMA"
        n = len(self.accesses)
        lines = [f"{self.shape[0]}x{self.shape[1]} {self.dtype} tile, {n} access{'es' if n != 1 else ''} "
                 f"({self.seconds:.2f} s)", self.table(), f"searched: {fam}",
                 f"synthesised: {self.best.layout} ({self.best.family}{'; = ' + self.best.atom if self.best.atom else ''};"
                 f" accepted by {acc})", "  " + e.formula()]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()


# ---------------------------------------------------------------------------------------------
# synthesize_swizzle
# ---------------------------------------------------------------------------------------------
_ATOMS = [(major, swz) for major in ("K", "MN") for swz in (128, 64, 32, 0)]


@guarded
def per_access(layout: Any, accesses: Sequence[Access], element_bytes: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """``(wavefronts, ideal)`` of each access under ``layout``, from :func:`layoutalg.banks.address_costs` (what
    ``address_report`` counts) instruction by instruction (a warp's ``k``-th vector; lanes ``>= active_lanes`` not read).

    >>> per_access(Layout((64, 64), (64, 1)), [ldmatrix_copy((64, 64))], 2)     # 8-way unswizzled
    ((512,), (64,))
    """
    from .banks import access_addresses, address_costs

    eb = element_bytes
    wf, ideal = [], []
    for a in accesses:
        starts = access_addresses(layout, a.tv, eb, a.vector_bytes)
        T, K = starts.shape
        tot = best = 0
        for w in range(T // 32):
            for k in range(K):
                lanes = [int(x) if l < a.active_lanes else None for l, x in enumerate(starts[32 * w:32 * w + 32, k])]
                cost, ideal_cost = address_costs(lanes, a.vector_bytes)
                tot += cost
                best += ideal_cost
        wf.append(tot)
        ideal.append(best)
    return tuple(wf), tuple(ideal)


def _transposed(L: Any) -> Any:
    """The layout with its two modes swapped (inside the swizzle of a composed layout)."""
    inner = getattr(L, "inner", None)
    if inner is not None:
        return ComposedLayout(L.outer, L.offset, _transposed(inner))
    return make_layout(L[1], L[0])


def _atom_tiles(shape: tuple[int, int], dtype: str) -> list[tuple[str, Any]]:
    from .nvidia.hopper import wgmma

    R, C = shape
    out: list[tuple[str, Any]] = []
    try:
        wgmma.dtype_name(dtype)
    except LayoutError:
        return out
    names = {v: k for k, v in wgmma.ATOM_NAMES.items()}
    for major, swz in _ATOMS:
        for transpose in (False, True):
            try:
                t = wgmma.tile(major, swz, dtype, (C, R) if transpose else (R, C))
            except LayoutError:
                continue
            label = f"{names[(major, swz)]}<{dtype}>" + (" (transposed: MN = cols)" if transpose else "")
            out.append((label, _transposed(t) if transpose else t))
    return out


def _table(L: Any, shape: tuple[int, int]) -> np.ndarray:
    r, c = np.indices(shape)
    return np.asarray(L(r, c), dtype=np.int64)


def _accepted(L: Any, shape: tuple[int, int], dtype: str, atoms: list, base_table: np.ndarray) -> tuple[tuple[str, ...], str]:
    from .nvidia.hopper import wgmma

    tab = _table(L, shape)
    atom = next((name for name, t in atoms if np.array_equal(_table(t, shape), tab)), "")
    acc = []
    for layout in (L, _transposed(L)):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                wgmma.descriptor_from_layout(layout, dtype, strict=True)
            acc.append("wgmma")
            break
        except (LayoutError, ValueError, TypeError, IndexError):
            continue
    tma_tables = [base_table] + [_table(t, shape) for name, t in atoms if name.startswith("Layout_K_") and "transposed" not in name]
    if any(np.array_equal(t, tab) for t in tma_tables):
        acc.append("tma")
    return tuple(acc), atom


def _xor_layout(base: Layout, m: XorMap) -> Any:
    """The layout ``x -> m(base(x))`` through the F2 bridge: to_linear, the XOR map on each bit image, from_linear."""
    from .linear import LinearLayout, from_linear, to_linear

    lin = to_linear(base)
    bases = tuple((name, tuple((int(m.apply(np.array([v[0]]))[0]),) for v in vecs)) for name, vecs in lin.bases)
    try:
        return from_linear(LinearLayout(bases, lin.out_dims))
    except LayoutError:
        pass
    # not one swizzle: a composition of single-bit swizzles (sources above targets, so they commute)
    out: Any = base
    for src, mask in m.columns:
        for t in range(mask.bit_length()):
            if (mask >> t) & 1:
                out = ComposedLayout(Swizzle(1, t, src - t), 0, out)
    return out


def layout_of_map(m: Any, base: Layout) -> Any:
    """The layout ``m o base``: a Swizzle or an F2-linear map composed with the base layout (the simplest
    form :func:`layoutalg.linear.from_linear` finds). A test hook too."""
    if m is None:
        return base
    if isinstance(m, Swizzle):
        return ComposedLayout(m, 0, base)
    if isinstance(m, tuple):
        out: Any = base
        for f in m:
            out = layout_of_map(f, out) if isinstance(f, Swizzle) else out
        return out
    return _xor_layout(base, m)


def _family(m: Any) -> str:
    if m is None:
        return "no swizzle"
    if isinstance(m, Swizzle):
        return "Swizzle<B,M,S>"
    if isinstance(m, tuple):
        return "composition of two swizzles"
    return "F2-linear xor map"


def synthesize_swizzle(shape: tuple[int, int], dtype: str, accesses: Iterable[Any], *,
                       constraints: Iterable[str] = (), max_pairs: int = 16) -> SwizzleSynthesis:
    """synthesize_swizzle(shape, dtype, accesses) -> the layout of the tile whose accesses take the fewest wavefronts.

    ``shape = (rows, cols)`` in elements of ``dtype``; the unswizzled tile is row-major
    ``(rows, cols):(cols, 1)`` and every candidate is a map of its element offsets (see the module
    docstring for the families). ``accesses``: :class:`Access` objects (or what :func:`as_access`
    takes, TiledCopy objects included) onto the tile's coordinate index ``row + rows * col``. ``constraints``: ``"wgmma"`` and /
    or ``"tma"`` keep only layouts those accept (CuTe's atoms qualify). ``max_pairs``: how many of
    the best single swizzles start a composition of two.

    Preconditions (LayoutError otherwise): power-of-two rows and cols for the swizzle families; every
    access's vectors contiguous and aligned in the row-major tile.

    >>> s = synthesize_swizzle((16, 64), "e4m3", [row_copy((16, 64), "e4m3", threads=64),
    ...                                          block_transpose_read((16, 64), "e4m3", threads=64)])
    >>> s.no_swizzle.wavefronts, s.best.wavefronts, s.best.layout
    ((8, 32), (8, 8), Sw<2,5,3> o _0 o (16,64):(64,1))
    """
    t0 = time.perf_counter()
    op = "synthesize_swizzle"
    R, C = _check_shape(shape, op)
    eb = dtype_bytes(dtype, op)
    if R * C * eb > SMEM_BYTES:
        raise LayoutError(f"{op}: a {R}x{C} {dtype} tile is {R * C * eb} bytes, more than the {SMEM_BYTES} bytes of "
                          "shared memory a CTA can have")
    if isinstance(accesses, (str, bytes)) or not hasattr(accesses, "__iter__"):
        raise LayoutError(f"{op}: accesses {accesses!r} is not a sequence of accesses")
    accs = tuple(as_access(a, k, (R, C), dtype) for k, a in enumerate(accesses))
    if not accs:
        raise LayoutError(f"{op}: no accesses given")
    if isinstance(constraints, str):
        constraints = (constraints,)
    if not hasattr(constraints, "__iter__"):
        raise LayoutError(f"{op}: constraints {constraints!r} is not a sequence of 'wgmma' / 'tma'")
    constraints = tuple(constraints)
    if isinstance(max_pairs, bool) or not isinstance(max_pairs, (int, np.integer)) or max_pairs < 0:
        raise LayoutError(f"{op}: max_pairs={max_pairs!r} is not a non-negative int")
    bad = [c for c in constraints if c not in ("wgmma", "tma")]
    if bad:
        raise LayoutError(f"{op}: constraints {bad} are not 'wgmma' or 'tma'")
    base = Layout((R, C), (C, 1))
    for a in accs:
        if int(a.tv.cosize()) > R * C:
            raise LayoutError(f"{op}: access {a.name!r} reaches coordinate index {int(a.tv.cosize()) - 1}, outside the "
                              f"{R}x{C} tile")
    plans = [access_plan(base, a, eb) for a in accs]  # LayoutError: vectors not contiguous / aligned
    pow2 = R & (R - 1) == 0 and C & (C - 1) == 0
    nbits = (R * C).bit_length() - 1
    m_min = max((a.vector_bytes // eb).bit_length() - 1 for a in accs)

    def score(maps: list[Any]) -> np.ndarray:
        """(len(maps), len(accesses)) total wavefronts of each access under each map."""
        out = np.zeros((len(maps), len(plans)), dtype=np.int64)
        for j, p in enumerate(plans):
            for s in range(0, len(maps), 64):
                chunk = maps[s:s + 64]
                off = np.stack([apply_map(m, p.offsets) for m in chunk])
                wf, _ = wavefronts(off, p.phase_active, eb, p.access.vector_bytes)
                out[s:s + len(chunk), j] = wf.sum(axis=1)
        return out

    lower = np.array([int(wavefronts(p.offsets[None], p.phase_active, eb, p.access.vector_bytes)[1].sum())
                      for p in plans])
    searched: list[tuple[str, int]] = []
    maps: list[Any] = [None]
    scores = score(maps)
    if pow2:
        singles = candidate_swizzles(nbits, m_min)
        s1 = score(singles)
        searched.append((f"Swizzle<B,M,S> on element offsets, M >= {m_min}, masks inside {nbits} bits", len(singles)))
        maps += singles
        scores = np.vstack([scores, s1])
        if scores.sum(axis=1).min() > lower.sum():
            top = [singles[k] for k in np.argsort(s1.sum(axis=1), kind="stable")[:max_pairs]]
            pairs = [(a, b) for a in top for b in singles if a != b]
            if pairs:
                searched.append((f"compositions Sw2 o Sw1, Sw1 among the {len(top)} best singles", len(pairs)))
                maps += pairs
                scores = np.vstack([scores, score(pairs)])
        if scores.sum(axis=1).min() > lower.sum():
            xors, how = _xor_search(plans, eb, nbits, m_min, score, int(scores.sum(axis=1).min()))
            if xors:
                searched.append((f"F2-linear x ^ T(x) ({how})", len(xors)))
                maps += xors
                scores = np.vstack([scores, score(xors)])
    else:
        searched.append(("none: the swizzle families need power-of-two rows and cols", 0))

    atoms = _atom_tiles((R, C), dtype)
    base_table = _table(base, (R, C))
    totals = scores.sum(axis=1)
    order = np.lexsort((np.arange(len(maps)), np.array([_simplicity(m) for m in maps]), totals))
    # the answer: fewest wavefronts; among those a CuTe atom, then wgmma/TMA, then the simplest map
    atom_cands = []
    for name, t in atoms:
        try:
            wf, ideal = per_access(t, accs, eb)
        except LayoutError:
            continue
        atom_cands.append(Candidate(name, t, "CuTe GMMA atom", wf, ideal, *_accepted(t, (R, C), dtype, atoms, base_table)))
    best_total = int(totals[order[0]])
    tied: list[Candidate] = []
    for k in order:
        if int(totals[k]) != best_total or len(tied) >= 12:
            break
        L = layout_of_map(maps[k], base)
        wf, ideal = per_access(L, accs, eb)
        acc, atom = _accepted(L, (R, C), dtype, atoms, base_table)
        tied.append(Candidate("synthesised", L, _family(maps[k]), wf, ideal, acc, atom))
    pool = tied + [c for c in atom_cands if c.total <= best_total]
    if constraints:
        pool = [c for c in pool if all(x in c.accepted_by for x in constraints)]
        if not pool:
            ok = [c for c in atom_cands if all(x in c.accepted_by for x in constraints)]
            if not ok:
                raise LayoutError(f"{op}: no candidate is accepted by {constraints}")
            pool = [min(ok, key=lambda c: c.total)]
    best = min(pool, key=lambda c: (c.total, not c.atom, len(c.accepted_by) == 0))
    best = Candidate("synthesised", best.layout, best.family, best.wavefronts, best.ideal, best.accepted_by, best.atom)
    wf0, id0 = per_access(base, accs, eb)
    none = Candidate("no swizzle", base, "no swizzle", wf0, id0, *_accepted(base, (R, C), dtype, atoms, base_table))
    best_atom = min(atom_cands, key=lambda c: c.total) if atom_cands else None
    pad, tried = _padding(R, C, accs, eb)
    return SwizzleSynthesis((R, C), dtype, accs, best, none, best_atom, pad, tuple(int(x) for x in id0),
                            tuple(searched) + ((f"CuTe GMMA atoms ({dtype})", len(atom_cands)),
                                               ("padding: row pitch cols + pad", tried)),
                            time.perf_counter() - t0)


def _simplicity(m: Any) -> int:
    if m is None:
        return 0
    if isinstance(m, Swizzle):
        return 10 + m.B
    if isinstance(m, tuple):
        return 100 + sum(f.B for f in m)
    return 1000 + sum(bin(mask).count("1") for _, mask in m.columns)


def _padding(R: int, C: int, accs: Sequence[Access], eb: int) -> tuple[Candidate | None, int]:
    """The row pitch ``C + pad`` (pad a multiple of the widest vector, up to 128 bytes) with the fewest
    wavefronts, and how many pitches were tried."""
    step = max(a.vector_bytes for a in accs) // eb or 1
    best: Candidate | None = None
    tried = 0
    for pad in range(step, max(step, 128 // eb) + 1, step):
        L = Layout((R, C), (C + pad, 1))
        try:
            wf, ideal = per_access(L, accs, eb)
        except LayoutError:
            continue
        tried += 1
        c = Candidate(f"padding +{pad}", L, "padding", wf, ideal, (), "", R * pad * eb)
        if best is None or c.total < best.total:
            best = c
    return best, tried


def _xor_search(plans: Sequence[AccessPlan], eb: int, nbits: int, m_min: int, score: Any, best: int
                ) -> tuple[list[XorMap], str]:
    """F2-linear maps x ^ T(x): targets are the bank bits above the vector, sources the higher bits that
    vary inside some phase. Exhaustive over T when it has at most 2**10 values, else coordinate descent
    from the best single swizzle."""
    bank_top = min(nbits, (128 // eb).bit_length() - 1)  # element bits below this select the bank
    targets = [t for t in range(m_min, bank_top)]
    vary = 0
    for p in plans:
        lp = 32 if p.access.vector_bytes <= 4 else (16 if p.access.vector_bytes == 8 else 8)
        ph = p.offsets.reshape(p.offsets.shape[0], -1, lp)
        vary |= int(np.bitwise_or.reduce((ph ^ ph[:, :, :1]).reshape(-1)))
    sources = [b for b in range(bank_top, nbits) if (vary >> b) & 1]
    if not targets or not sources:
        return [], "no bank bits or no varying sources"
    c, s = len(targets), len(sources)
    tmasks = [sum(((v >> j) & 1) << targets[j] for j in range(c)) for v in range(1 << c)]
    if c * s <= 10:
        out = [XorMap(tuple((src, tm) for src, tm in zip(sources, combo) if tm))
               for combo in itertools.product(tmasks, repeat=s)]
        return [m for m in out if m.columns], f"exhaustive: targets bits {targets}, sources bits {sources}"
    # coordinate descent: one source column at a time, all 2**c target masks, best kept; three rounds
    cols = {src: 0 for src in sources}
    tried: list[XorMap] = []
    for _ in range(3):
        improved = False
        for src in sources:
            trial = []
            for tm in tmasks:
                cc = dict(cols)
                cc[src] = tm
                trial.append(XorMap(tuple((k, v) for k, v in sorted(cc.items()) if v)))
            sc = score(trial).sum(axis=1)
            tried += trial
            k = int(np.argmin(sc))
            if int(sc[k]) < best:
                best, cols, improved = int(sc[k]), dict(trial[k].columns), True
                for src2 in sources:
                    cols.setdefault(src2, 0)
        if not improved:
            break
    uniq = list({m.columns: m for m in tried if m.columns}.values())
    return uniq, f"coordinate descent: targets bits {targets}, sources bits {sources}"


# ---------------------------------------------------------------------------------------------
# three real kernels' access sets
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class KernelAccesses:
    """A kernel's shared-memory tile and the accesses it makes to it."""

    name: str
    description: str
    shape: tuple[int, int]
    dtype: str
    accesses: tuple[Access, ...]


def _kernels() -> dict[str, KernelAccesses]:
    return {
        "ampere_gemm_a": KernelAccesses(
            "ampere_gemm_a",
            "Ampere GEMM, A tile 128x32 f16 (K-major): cp.async 16-byte row stores by 128 threads, then "
            "ldmatrix.x4 reads of the m16n8k16 A operand by 4 warps",
            (128, 32), "f16",
            (row_copy((128, 32), "f16"), ldmatrix_copy((128, 32)))),
        "attention_v": KernelAccesses(
            "attention_v",
            "attention, V tile 64x128 f16 (kBlockN x head dim, row-major): cp.async 16-byte row stores, then "
            "ldmatrix.x4.trans reads of V as the B operand of P @ V",
            (64, 128), "f16",
            (row_copy((64, 128), "f16"), ldmatrix_copy((64, 128), trans=True))),
        "fp8_transpose": KernelAccesses(
            "fp8_transpose",
            "fp8 transpose through shared memory, 64x64 e4m3: cp.async 16-byte row stores, then 4-byte loads "
            "of 4x4 blocks (transposed in registers)",
            (64, 64), "e4m3",
            (row_copy((64, 64), "e4m3"), block_transpose_read((64, 64), "e4m3"))),
    }


#: The three kernels of the notebook and the hardware check.
KERNELS = ("ampere_gemm_a", "attention_v", "fp8_transpose")


@guarded
def kernel_accesses(name: str) -> KernelAccesses:
    """The tile and accesses of one of :data:`KERNELS`.

    >>> k = kernel_accesses("attention_v")
    >>> k.shape, [a.instruction for a in k.accesses]
    ((64, 128), ['cp.async.cg.shared.global [16 B]', 'ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16'])
    """
    ks = _kernels()
    if name not in ks:
        raise LayoutError(f"kernel_accesses: {name!r} is not one of {sorted(ks)}")
    return ks[name]
