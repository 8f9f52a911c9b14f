"""Triton's Gluon layouts in and out: every Gluon layout class as a layoutalg layout, and back.

Gluon (``triton.experimental.gluon``) writes down where each element of a tensor lives with
layout objects: *distributed* layouts (``BlockedLayout``, ``NVMMADistributedLayout``,
``DotOperandLayout``, ``SliceLayout``, ``DistributedLinearLayout``) say which thread's which
register holds element ``(i, j)``; *shared* layouts (``NVMMASharedLayout``,
``SwizzledSharedLayout``, ``PaddedSharedLayout``, ``SharedLinearLayout``) say at which offset of
shared memory it sits. Underneath, Triton turns each into an F2-linear map (its
``LinearLayout``): a list of *bases*, one tensor coordinate per input bit, XORed together.

layoutalg reads them as CuTe layouts:

* a distributed layout on a tensor of shape ``(D0, D1, ...)`` becomes a TV layout
  ``((lane, warp, block), register) -> d0 + D0*d1 + ...`` (the column-major index, CuTe's
  convention for an operand matrix), each basis of Triton's becoming one stride;
* a shared layout becomes ``(d0, d1, ...) -> element offset``, the inverse of Triton's
  ``offset -> coordinate`` map: a ``Layout``, ``Swizzle o Layout``, or (padding) a Layout whose
  strides carry the pads.

Worked by hand: the m16n8 accumulator of ``mma.sync``, ``NVMMADistributedLayout(version=[2, 0],
warps_per_cta=[1, 1], instr_shape=[16, 8])`` on a 16x8 tile. Triton's bases are
``register: [0,1], [8,0]`` and ``lane: [0,2], [0,4], [1,0], [2,0], [4,0]``. In column-major
indices ``d0 + 16*d1`` those are ``16, 8`` and ``32, 64, 1, 2, 4``: lane strides ``(4,8):(32,1)``
after coalescing, register strides ``(2,2):(16,8)`` -- the catalog's ``mma.m16n8k8`` C fragment,
``((4,8),(2,2)):((32,1),(16,8))`` (with a size-1 warp and block mode). Lane 5, register 3:
``32 + 1 + 16 + 8 = 57 = 9 + 16*3``, element ``(9, 3)``::

    >>> tv = from_gluon("NVMMADistributedLayout(version=[2, 0], warps_per_cta=[1, 1], instr_shape=[16, 8])", (16, 8))
    >>> str(tv), tv(5, 3)
    ('(((4,8),1,1),(2,2)):(((32,1),0,0),(16,8))', 57)
    >>> to_gluon(tv, (16, 8)).source
    'gl.NVMMADistributedLayout(version=[2, 0], warps_per_cta=[1, 1], instr_shape=[16, 8])'

No Triton is needed for any of this: :class:`GluonLayout` mirrors the constructor calls, and the
conversion rules are Triton's own (``LinearLayoutConversions.cpp`` of Triton 3.6), re-stated here
and checked against Triton's engine in the test suite. When Triton is installed,
:attr:`GluonResult.layout` is the ``triton.experimental.gluon.language`` object itself.

The module is split by direction: :mod:`layoutalg.interop.gluon_layouts` reads Gluon's classes
(:class:`GluonLayout`, :func:`linear_bases`, :func:`from_gluon`, :func:`padded_offset`); this module
recognizes a layoutalg layout as one of them (:func:`to_gluon`, :class:`GluonResult`) and compares
bank conflicts (:func:`bank_report`). Every name of both is importable from here.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

from ..errors import LayoutError, guarded
from ..linear import flat_index, invert_f2, unflat_index
from .gluon_layouts import (
    LAYOUT_CLASSES,
    GluonLayout,
    from_gluon,
    gluon_layout,
    linear_bases,
    log2_exact,
    make_gluon,
    padded_offset,
    shape_arg,
)

__all__ = [
    "GluonLayout",
    "GluonResult",
    "LAYOUT_CLASSES",
    "gluon_layout",
    "linear_bases",
    "from_gluon",
    "to_gluon",
    "padded_offset",
    "bank_report",
]


# ---------------------------------------------------------------------------------------------
# layoutalg -> Gluon
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class GluonResult:
    """to_gluon's answer: the Gluon spelling, its source text, Triton's bases, and the Triton object.

    ``layout`` is the ``triton.experimental.gluon.language`` object when Triton is importable,
    else None; ``bases`` is what ``linear_bases(gluon, shape)`` gives (Triton's convention).
    """

    gluon: GluonLayout
    shape: tuple[int, ...]
    bases: dict
    layout: Any = None

    @property
    def source(self) -> str:
        """The Gluon constructor call, ready to paste (``gl.`` prefix)."""
        return self.gluon.source

    def __str__(self) -> str:
        return self.source


def _table(x: Any, op: str) -> Any:
    import numpy as np

    from ..parse import as_concrete_layout

    x = as_concrete_layout(x, op, "layout")
    return x, np.asarray(x.table(), dtype=np.int64)


def _check_linear(table: Any, images: list[int], op: str, what: str) -> None:
    """table[i] must be the XOR of images over i's set bits (F2-linear), else LayoutError."""
    import numpy as np

    # acc[i] = XOR of images[j] over i's set bits j < len(images), built by doubling: acc[2^j + i] = acc[i] ^ images[j]
    acc = np.zeros(1, dtype=np.int64)
    for v in images:
        if len(acc) >= len(table):
            break
        acc = np.concatenate([acc, acc ^ v])
    acc = np.resize(acc, len(table))
    bad = np.nonzero(acc != table)[0]
    if len(bad):
        i = int(bad[0])
        raise LayoutError(f"{op}: {what} is not F2-linear: at index {i} it gives {int(table[i])}, the XOR of its bits' "
                          f"images gives {int(acc[i])} (a Gluon layout is a linear map over F2)")


def _bits_of(n: int, op: str, what: str) -> int:
    return log2_exact(n, op, what)


def _distributed_bases(x: Any, shape: list[int], op: str) -> dict[str, list[list[int]]]:
    """Triton's bases of a TV layout (thread, value) -> column-major element index of ``shape``."""
    import numpy as np

    x, table = _table(x, op)
    from ..layout import rank as _rank

    if _rank(x) != 2:
        raise LayoutError(f"{op}: {x} is not a TV layout (thread, value); a distributed layout has rank 2")
    T, V = int(x[0].size()), int(x[1].size())
    tb, vb = _bits_of(T, op, "thread count"), _bits_of(V, op, "values per thread")
    total = int(np.prod(shape))
    if table.min() < 0 or table.max() >= total:
        raise LayoutError(f"{op}: {x} reaches element {int(table.max())}, outside the {shape} tensor")
    # flat input bit order: thread bits (lanes first), then value bits, as table's colexicographic index
    images = [int(table[1 << j]) for j in range(tb + vb)]
    if table[0] != 0:
        raise LayoutError(f"{op}: {x} sends (0, 0) to {int(table[0])}; a linear layout sends it to element 0")
    _check_linear(table, images, op, str(x))
    thr = x[0]
    sub = thr.shape if isinstance(thr.shape, tuple) else (thr.shape,)
    from ..inttuple import product

    if len(sub) == 3 and int(product(sub[0])) == 32:
        lane_b, warp_b = 5, _bits_of(int(product(sub[1])), op, "warps")
    else:
        if T < 32:
            raise LayoutError(f"{op}: {x} has {T} threads; a Gluon layout spans whole warps of 32 lanes")
        lane_b, warp_b = 5, tb - 5
    vecs = [unflat_index(v, shape) for v in images]
    for j, v in enumerate(vecs):
        if sum(1 for c in v if c) > 1:
            level = "lane" if j < lane_b else "warp" if j < lane_b + warp_b else "block" if j < tb else "register"
            raise LayoutError(f"{op}: {level} basis {v} moves along two dimensions at once; Gluon's distributed "
                              "layouts need each basis to move along one dimension (or none)")
    held = np.zeros(total, dtype=bool)
    held[table.ravel()] = True
    missing = np.flatnonzero(~held)
    if len(missing):
        raise LayoutError(f"{op}: {x} reaches {total - len(missing)} of the {total} elements of the {shape} tensor "
                          f"(element {int(missing[0])} is held by no thread); a Gluon distributed layout must cover "
                          "its tensor (Triton aborts on one that does not: 'Layout is expected to be surjective')")
    return {"register": vecs[tb:], "lane": vecs[:lane_b], "warp": vecs[lane_b:lane_b + warp_b], "block": vecs[lane_b + warp_b:tb]}


def _shared_bases(x: Any, shape: list[int], op: str) -> tuple[dict[str, list[list[int]]], list[list[int]] | None]:
    """(Triton's offset -> coordinate bases, padding pairs or None) of a shared layout (coordinate -> offset)."""
    import numpy as np

    from ..composed import ComposedLayout
    from ..layout import Layout

    if isinstance(x, str):
        from ..parse import as_concrete_layout

        x = as_concrete_layout(x, op)  # a pasted tensor print: its coordinate -> element offset function
    if isinstance(x, Layout) and len(shape) > 1 and x.rank() != len(shape):
        raise LayoutError(f"{op}: {x} has rank {x.rank()}; a shared layout of a {shape} tensor has one mode per dim")
    x, table = _table(x, op)
    total = int(np.prod(shape))
    if len(table) != total:
        raise LayoutError(f"{op}: {x} has {len(table)} coordinates; the {shape} tensor has {total}")
    nbits = total.bit_length() - 1
    images = [int(table[1 << j]) for j in range(nbits)]
    pairs = None
    try:
        _check_linear(table, images, op, str(x))
    except LayoutError:
        pairs = _padding_of(x, images, op) if isinstance(x, Layout) and not isinstance(x, ComposedLayout) else None
        if pairs is None:
            raise
        images = [_unpad(v, pairs) for v in images]
        if not np.array_equal(np.asarray([padded_offset(_xor_of(images, i), pairs) for i in range(total)]), table):
            raise LayoutError(f"{op}: {x} is neither F2-linear nor a padded linear layout") from None
    pre = invert_f2(images, f"{op}: {x}")
    return {"offset": [unflat_index(p, shape) for p in pre], "block": []}, pairs


def _xor_of(images: list[int], i: int) -> int:
    acc = 0
    for j, v in enumerate(images):
        if i >> j & 1:
            acc ^= v
    return acc


def _padding_of(x: Any, images: list[int], op: str) -> list[list[int]] | None:
    """The (interval, padding) pairs that explain strides w_j = 2**j + pads, if any (unique when they exist)."""
    order = sorted(images)
    if len(set(order)) != len(order) or 0 in order:
        return None
    from fractions import Fraction

    pairs: list[list[int]] = []
    prev = Fraction(0)
    for j, w in enumerate(order):
        rate = Fraction(w - (1 << j), 1 << j)  # pad elements per element so far
        jump = rate - prev
        if jump < 0:
            return None
        if jump:
            pad = jump * (1 << j)
            if pad.denominator != 1 or int(pad) & (int(pad) - 1):
                return None
            pairs.append([1 << j, int(pad)])
        prev = rate
    return pairs or None


def _unpad(w: int, pairs: list[list[int]]) -> int:
    """The linear offset o with padded_offset(o) = w (w a padded single-bit stride)."""
    for j in range(w.bit_length() + 1):
        if padded_offset(1 << j, pairs) == w:
            return 1 << j
    raise LayoutError(f"to_gluon: stride {w} is not a padded power of two under {pairs}")


@functools.lru_cache(maxsize=8192)
def _candidate_bases(c: GluonLayout, shape: tuple[int, ...], slice_dim: int | None) -> dict | None:
    """linear_bases of candidate c (of SliceLayout(slice_dim, c) when slice_dim is set), None where c does not apply.

    Memoised: the search of :func:`to_gluon` tries the same few hundred candidates on the same shapes again and again.
    The answer is shared between callers: read it, never change it.
    """
    try:
        if slice_dim is not None:
            c = make_gluon("SliceLayout", {"dim": slice_dim, "parent": c})
        return linear_bases(c, shape)
    except LayoutError:
        return None


def _try(cands: Any, shape: list[int], target: dict, slice_dim: int | None = None) -> GluonLayout | None:
    key = tuple(shape)
    for c in cands:
        if _candidate_bases(c, key, slice_dim) == target:
            return c
    return None


def _pow2_splits(total: int, rank: int) -> list[list[int]]:
    """Every way to write total (a power of two) as a product of rank powers of two, last dim first."""
    n = total.bit_length() - 1
    out = []

    def rec(prefix: list[int], left: int) -> None:
        if len(prefix) == rank - 1:
            out.append(prefix + [1 << left])
            return
        for k in range(left + 1):
            rec(prefix + [1 << k], left - k)

    rec([], n)
    return out


def _mma_candidates(rank: int, warps: int, bits: int | None) -> list[GluonLayout]:
    out = []
    for w in _pow2_splits(warps, rank):
        out.append(make_gluon("NVMMADistributedLayout", {"version": [2, 0], "warps_per_cta": w,
                                                    "instr_shape": [16, 8] if rank == 2 else [1] * (rank - 2) + [16, 8]}))
    if rank == 2 and warps >= 4:
        k = 256 // bits if bits else 16
        for w in _pow2_splits(warps, 2):
            if w[0] % 4 == 0:
                for n in (8, 16, 32, 64, 128, 256):
                    out.append(make_gluon("NVMMADistributedLayout", {"version": [3, 0], "warps_per_cta": w, "instr_shape": [16, n, k]}))
    return out


def _mma_fits(c: GluonLayout, shape: list[int]) -> bool:
    instr, warps = list(c["instr_shape"]), list(c["warps_per_cta"])
    tile = instr[:2] if c["version"][0] == 3 else instr[-2:]
    return tile[0] * warps[-2] <= shape[-2] and tile[1] * warps[-1] <= shape[-1]


def _dot_candidates(rank: int, warps: int, bits: int | None) -> list[GluonLayout]:
    out = []
    seen_v3 = set()
    for p in _mma_candidates(rank, warps, bits):
        v3 = p["version"][0] == 3
        if v3:  # an A operand does not see the parent's instr N: one candidate per warp split
            if p["warps_per_cta"] in seen_v3:
                continue
            seen_v3.add(p["warps_per_cta"])
        for opi in ((0,) if v3 else (0, 1)):
            for kw in (1, 2, 4, 8, 16):
                out.append(make_gluon("DotOperandLayout", {"operand_index": opi, "parent": p, "k_width": kw}))
    return out


def _blocked_level(order: list[int], below: list[int], counts: list[int], shape: list[int]) -> list[list[int]]:
    """One level's bases of a BlockedLayout (identityStandardND along order, scaled by the levels below, 0 past shape)."""
    out = []
    for d in order:
        for i in range(counts[d].bit_length() - 1):
            v = [0] * len(shape)
            step = below[d] << i
            v[d] = step if step < shape[d] else 0
            out.append(v)
    return out


def _blocked_candidates(target: dict, shape: list[int]) -> Any:
    """BlockedLayouts that could give target: orders (row-major first), register runs (spt smallest first), zero splits."""
    import itertools

    rank = len(shape)
    regs = target["register"]
    default = list(range(rank))[::-1]
    orders = [default] + [list(o) for o in itertools.permutations(range(rank)) if list(o) != default]

    def level_counts(vecs: list[list[int]]) -> list[list[int]]:
        counts = [0] * rank
        zeros = 0
        for v in vecs:
            nz = [i for i, c in enumerate(v) if c]
            if nz:
                counts[nz[0]] += 1
            else:
                zeros += 1
        out = []
        for split in _pow2_splits(1 << zeros, rank):
            out.append([1 << (c + s.bit_length() - 1) for c, s in zip(counts, split[::-1])])
        return out

    lanes = level_counts(target["lane"])
    warps = level_counts(target["warp"])
    for order in orders:
        # the register list starts with spt bits: order[0]'s run of 1, 2, 4, ... then order[1]'s, ...
        def spts(pos: int, k: int, acc: list[int], order: list[int] = order) -> Any:
            if k == rank:
                yield acc
                return
            d = order[k]
            run = 0
            while pos + run < len(regs):
                v = regs[pos + run]
                val = 1 << run
                unit = [0] * rank
                unit[d] = val if val < shape[d] else 0
                if v != unit:
                    break
                run += 1
            for take in range(run + 1):
                acc2 = list(acc)
                acc2[d] = 1 << take
                yield from spts(pos + take, k + 1, acc2, order)

        for spt in spts(0, 0, [1] * rank):
            # a cheap necessary condition before Triton's rules run: the lane and warp bases of a BlockedLayout
            # are order's unit steps spt[d] * 2^i (lanes) and spt[d] * tpw[d] * 2^i (warps), 0 past shape[d]
            tpws = [t for t in lanes if _blocked_level(order, spt, t, shape) == target["lane"]]
            for tpw in tpws:
                inner = [a * b for a, b in zip(spt, tpw)]
                for wpc in warps:
                    if _blocked_level(order, inner, wpc, shape) != target["warp"]:
                        continue
                    yield make_gluon("BlockedLayout", {"size_per_thread": spt, "threads_per_warp": tpw,
                                                  "warps_per_cta": wpc, "order": order})


def _lanes_may_match(cands: list[GluonLayout], shape: list[int], want: dict, slice_dim: int | None) -> list[GluonLayout]:
    """The DotOperandLayout candidates whose lane bases can equal want's: one probe per (operand, k_width, parent MMA).

    A dot operand's lane bases do not depend on the parent's warps_per_cta (lanes come before warps in
    Triton's product, and fitting to the shape only adds register bases or zeroes components past it), so
    the first candidate of a group that applies to the shape speaks for the whole group.
    """
    verdict: dict[tuple, bool] = {}
    out = []
    for c in cands:
        p = c["parent"]
        key = (c["operand_index"], c["k_width"], p["version"], p["instr_shape"])
        if key not in verdict:
            got = _candidate_bases(c, tuple(shape), slice_dim)
            if got is None:  # this one does not apply: no verdict for the group yet
                out.append(c)
                continue
            verdict[key] = got["lane"] == want["lane"]
        if verdict[key]:
            out.append(c)
    return out


def _recognize_distributed(target: dict, shape: list[int], bits: int | None, slice_dim: int | None = None,
                           want: dict | None = None, wshape: list[int] | None = None) -> GluonLayout | None:
    """The first named layout whose bases equal ``want`` (default target) on ``wshape`` (default shape).

    With ``slice_dim``, the bases compared are those of ``SliceLayout(slice_dim, candidate)``.
    """
    if target["block"]:
        return None
    want = target if want is None else want
    wshape = shape if wshape is None else wshape
    rank = len(shape)
    warps = 1 << len(target["warp"])
    if rank >= 2:
        # an accumulator spelling only where its warps land inside the tensor (else it aliases an operand)
        fits = [c for c in _mma_candidates(rank, warps, bits) if _mma_fits(c, shape)]
        for cands in (fits, _lanes_may_match(_dot_candidates(rank, warps, bits), wshape, want, slice_dim)):
            found = _try(cands, wshape, want, slice_dim)
            if found:
                return found
    return _try(_blocked_candidates(target, shape), wshape, want, slice_dim)


def _recognize_slice(target: dict, shape: list[int], bits: int | None) -> GluonLayout | None:
    rank = len(shape)
    for dim in range(rank + 1):
        pshape = shape[:dim] + [1] + shape[dim:]
        ptarget = {k: [v[:dim] + [0] + v[dim:] for v in vs] for k, vs in target.items()}
        found = _recognize_distributed(ptarget, pshape, bits, dim, target, shape)
        if found:
            return make_gluon("SliceLayout", {"dim": dim, "parent": found})
    return None


def _recognize_shared(target: dict, shape: list[int], bits: int | None, pairs: list[list[int]] | None) -> GluonLayout:
    rank = len(shape)
    offsets = target["offset"]
    if pairs is not None:
        return make_gluon("PaddedSharedLayout", {"interval_padding_pairs": pairs, "offset_bases": offsets, "block_bases": [],
                                            "shape": shape})
    if rank >= 2:
        widths = [bits] if bits else [16, 8, 32, 64]
        for b in widths:
            for sw in (128, 64, 32):
                found = _try([make_gluon("NVMMASharedLayout", {"swizzle_byte_width": sw, "element_bitwidth": b, "rank": rank,
                                                          "transposed": tr}) for tr in (False, True)], shape, target)
                if found:
                    return found
        import itertools

        default = list(range(rank))[::-1]
        for order in [default] + [list(o) for o in itertools.permutations(range(rank)) if list(o) != default]:
            ncol, nrow = shape[order[0]], shape[order[1]]
            cands = [make_gluon("SwizzledSharedLayout", {"vec": 1 << v, "per_phase": 1 << p, "max_phase": 1 << m, "order": order})
                     for m in range(nrow.bit_length()) for p in range(nrow.bit_length()) for v in range(ncol.bit_length())
                     if m or (p == 0 and v == 0)]
            found = _try(cands, shape, target)
            if found:
                return found
        if bits:
            found = _try([make_gluon("NVMMASharedLayout", {"swizzle_byte_width": 0, "element_bitwidth": bits, "rank": rank})],
                         shape, target)
            if found:
                return found
    return make_gluon("SharedLinearLayout", {"offset_bases": offsets})


#: the Gluon classes to_gluon can be asked for, and whether each is a shared layout
_DISTRIBUTED_CLASSES = ("NVMMADistributedLayout", "DotOperandLayout", "BlockedLayout", "SliceLayout",
                        "DistributedLinearLayout")
_SHARED_CLASSES = ("NVMMASharedLayout", "SwizzledSharedLayout", "PaddedSharedLayout", "SharedLinearLayout")


def to_gluon(x: Any, shape: Sequence[int], *, kind: str | None = None, element_bitwidth: int | None = None,
             cls: Any = None, version: Any = None, operand: int | None = None, like: Any = None) -> GluonResult:
    """to_gluon(x, shape) -> the Gluon layout equal to x on a tensor of ``shape``: spelling, source, object.

    ``x`` is a TV layout ``(thread, value) -> d0 + D0*d1 + ...`` (``kind="distributed"``), a
    shared layout ``(d0, d1, ...) -> element offset`` (``kind="shared"``), or a catalog
    :class:`~layoutalg.nvidia.common.fragment.Fragment` (an mma.sync or wgmma operand). By default x is
    shared when its modes match ``shape`` one to one, and distributed otherwise (a thread mode
    ``(lane, warp, block)`` as :func:`from_gluon` writes it is always distributed). The
    answer is the named Gluon class when one equals x (checked through :func:`linear_bases`):
    ``NVMMASharedLayout`` (swizzled; ``element_bitwidth`` narrows the search, and is needed for
    the unswizzled one), ``SwizzledSharedLayout``, ``PaddedSharedLayout``; for registers
    ``NVMMADistributedLayout``, ``DotOperandLayout``, ``BlockedLayout``, ``SliceLayout`` --
    else ``SharedLinearLayout`` / ``DistributedLinearLayout`` with Triton's bases. Where Gluon
    has several spellings of one layout, the first found is returned: row-major order first,
    the smallest ``size_per_thread``, the smallest swizzle parameters, the parent's smallest
    instr N (an A operand does not depend on it). LayoutError when x is not F2-linear (nor
    padded), a shape is not a power of two, or a basis of a register layout moves along two
    dimensions.

    Asking for a class: ``cls`` (a class name or the Gluon class) returns that class or raises;
    ``version=3`` (wgmma) or ``2`` (mma.sync) picks ``NVMMADistributedLayout``'s version (or a
    ``DotOperandLayout`` parent's); ``operand=0`` / ``1`` asks for ``DotOperandLayout`` of the A / B
    operand; ``like=<gluon layout>`` imitates one: its class, its version and operand, and the
    spelling closest to its fields (its ``instr_shape``, ``k_width``, ``order``...). A catalog
    fragment speaks for itself: a wgmma accumulator comes back as version 3 with its
    ``instr_shape=[16, N, K]``, an mma.sync one as version 2, an A/B operand as
    ``DotOperandLayout``. An argument that cannot apply (``version`` of a ``BlockedLayout``,
    ``operand`` with ``cls="NVMMASharedLayout"``) is a LayoutError.

    >>> from layoutalg.nvidia.hopper.wgmma import tile
    >>> to_gluon(tile("K", 128, "bf16", (64, 64)), (64, 64), element_bitwidth=16).source
    'gl.NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16)'
    >>> from layoutalg.nvidia import wgmma_fragments
    >>> to_gluon(wgmma_fragments.fragment("m64n64k16", "f16", "D"), (64, 64)).source
    'gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, 1], instr_shape=[16, 64, 16])'
    >>> to_gluon(wgmma_fragments.fragment("m64n64k16", "f16", "D"), (64, 64), version=2).source
    'gl.NVMMADistributedLayout(version=[2, 0], warps_per_cta=[4, 1], instr_shape=[16, 8])'
    """
    op = "to_gluon"
    shape = shape_arg(shape, op)
    for s in shape:
        log2_exact(s, op, f"shape entry of {shape}")
    amd_cls = _amd_class(x, cls, like)
    if amd_cls is not None:  # AMD's classes: interop.gluon_amd searches them (checked by Triton's rules)
        from .gluon_amd import to_gluon_amd

        if like is not None:
            lk = gluon_layout(like)
            operand = lk["operand_index"] if lk.kind == "DotOperandLayout" else operand
            version = (lk["parent"] if lk.kind == "DotOperandLayout" else lk)["version"] if version is None else version
        ga = gluon_layout(to_gluon_amd(x, shape, cls=amd_cls or None, operand=operand, version=version,
                                       prefer=None if like is None else gluon_layout(like)))
        try:
            obj = ga.to_triton()
        except (LayoutError, ImportError):
            obj = None
        return GluonResult(ga, tuple(shape), linear_bases(ga, shape), obj)
    want = _wanted(op, cls, version, operand, like)
    if _is_fragment(x):
        x, want = _fragment_wish(x, shape, want, element_bitwidth, op)
        if kind not in (None, "distributed"):
            raise LayoutError(f"{op}: kind={kind!r} for a register fragment (an mma/wgmma operand is distributed)")
        kind = "distributed"
    if kind is None:
        kind = "shared" if want["cls"] in _SHARED_CLASSES else \
            "distributed" if want["cls"] in _DISTRIBUTED_CLASSES else _guess_kind(x, shape)
    if kind not in ("shared", "distributed"):
        raise LayoutError(f"{op}: kind={kind!r} is not 'shared' or 'distributed'")
    if want["cls"] is not None and (want["cls"] in _SHARED_CLASSES) != (kind == "shared"):
        raise LayoutError(f"{op}: cls={want['cls']!r} is a {'shared' if want['cls'] in _SHARED_CLASSES else 'distributed'} "
                          f"layout, but kind={kind!r}")
    g: GluonLayout | None
    if kind == "shared":
        target, pairs = _shared_bases(x, shape, op)
        if want["cls"] is None:
            g = _recognize_shared(target, shape, element_bitwidth, pairs)
        else:
            g = _shared_of_class(want, target, shape, element_bitwidth, pairs)
    else:
        target = _distributed_bases(x, shape, op)
        if want["cls"] is None and want["like"] is None:
            g = _recognize_distributed(target, shape, element_bitwidth)
            if g is None and not target["block"]:
                g = _recognize_slice(target, shape, element_bitwidth)
        else:
            g = _distributed_of_class(want, target, shape, element_bitwidth)
        if g is None and want["cls"] in (None, "DistributedLinearLayout"):
            g = make_gluon("DistributedLinearLayout", {"reg_bases": target["register"], "lane_bases": target["lane"],
                                                  "warp_bases": target["warp"], "block_bases": target["block"], "shape": shape})
    if g is None:
        asked = want["cls"] + "".join(f", {k}={want[k]}" for k in ("version", "operand") if want[k] is not None)
        raise LayoutError(f"{op}: no {asked} equals {_short(x)} on shape {shape} (Triton's bases differ from every "
                          f"spelling tried); without the request it is "
                          f"{to_gluon(x, shape, kind=kind, element_bitwidth=element_bitwidth).source}")
    bases = linear_bases(g, shape)
    try:
        obj = g.to_triton()
    except (LayoutError, ImportError):
        obj = None
    return GluonResult(g, tuple(shape), bases, obj)


def _amd_class(x: Any, cls: Any, like: Any) -> str | None:
    """The AMD class asked for: ``cls`` or ``like``'s (its parent's for an operand); ``""`` for an AMD
    catalog fragment with no class named; None when the request is not AMD's."""
    amd = ("AMDMFMALayout", "AMDWMMALayout")
    if cls is not None:
        name = cls if isinstance(cls, str) else getattr(cls, "__name__", "")
        name = name.rsplit(".", 1)[-1]
        return name if name in amd else None
    if like is not None:
        g = gluon_layout(like)
        g = g["parent"] if g.kind == "DotOperandLayout" else g
        return g.kind if g.kind in amd else None
    if type(x).__name__ == "MatrixFragment" and type(x).__module__.startswith("layoutalg.amd"):
        return ""
    return None


def _short(x: Any) -> str:
    s = str(x)
    return s if len(s) <= 80 else s[:77] + "..."


def _wanted(op: str, cls: Any, version: Any, operand: Any, like: Any) -> dict:
    """The request as a dict: cls, version, operand, like (a GluonLayout), checked for consistency."""
    if cls is not None and not isinstance(cls, str):
        cls = getattr(cls, "__name__", cls)
    if cls is not None and cls not in _DISTRIBUTED_CLASSES + _SHARED_CLASSES:
        raise LayoutError(f"{op}: cls={cls!r} is not one of the classes to_gluon writes: "
                          f"{list(_DISTRIBUTED_CLASSES + _SHARED_CLASSES)}")
    g = None
    if like is not None:
        g = gluon_layout(like)
        if cls is not None and cls != g.kind:
            raise LayoutError(f"{op}: cls={cls!r} and like={g.source} ask for different classes")
        cls = g.kind
    if version is not None:
        v = list(version) if isinstance(version, (list, tuple)) else [version]
        if not v or v[0] not in (2, 3) or any(type(e) is not int for e in v):
            raise LayoutError(f"{op}: version={version!r}: 2 (mma.sync) or 3 (wgmma), or [2, 0] / [3, 0]")
        version = v[0]
        if cls is None:
            cls = "DotOperandLayout" if operand is not None else "NVMMADistributedLayout"
        if cls not in ("NVMMADistributedLayout", "DotOperandLayout"):
            raise LayoutError(f"{op}: version={version} applies to NVMMADistributedLayout and DotOperandLayout "
                              f"(its parent), not to {cls}")
    if operand is not None:
        if operand not in (0, 1) or type(operand) is not int:
            raise LayoutError(f"{op}: operand={operand!r}: 0 (A) or 1 (B)")
        if cls is None:
            cls = "DotOperandLayout"
        if cls != "DotOperandLayout":
            raise LayoutError(f"{op}: operand={operand} asks for a DotOperandLayout, not {cls}")
        if version == 3 and operand == 1:
            raise LayoutError(f"{op}: operand=1 with version=3: wgmma reads B from shared memory (no register layout)")
    if g is not None:  # like's own version and operand, unless given (then they must agree)
        lv = g["version"][0] if g.kind == "NVMMADistributedLayout" else \
            g["parent"]["version"][0] if g.kind == "DotOperandLayout" and g["parent"].kind == "NVMMADistributedLayout" else None
        if lv is not None:
            if version is not None and version != lv:
                raise LayoutError(f"{op}: version={version} and like={g.source} (version {lv}) disagree")
            version = lv
        if g.kind == "DotOperandLayout":
            if operand is not None and operand != g["operand_index"]:
                raise LayoutError(f"{op}: operand={operand} and like={g.source} disagree")
            operand = g["operand_index"]
    return {"cls": cls, "version": version, "operand": operand, "like": g, "prefer": []}


def _is_fragment(x: Any) -> bool:
    return all(hasattr(x, a) for a in ("layout", "instruction", "operand", "mnk", "codomain", "num_threads"))


def _fragment_wish(frag: Any, shape: list[int], want: dict, bits: int | None, op: str) -> tuple[Any, dict]:
    """A catalog fragment's TV layout in Gluon's index convention, and what it asks for by default."""
    from ..algebra import composition
    from ..layout import Layout

    hopper = frag.instruction.startswith("wgmma")
    M, N, K = frag.mnk
    x = frag.layout
    if frag.operand in ("B",):
        if hopper:
            raise LayoutError(f"{op}: {frag.name}: wgmma reads B from shared memory; it has no register layout")
        n, k = frag.codomain  # stored N-major: index n + N*k; Gluon's B tensor is K x N: index k + K*n
        x = composition(Layout((n, k), (k, 1)), x)
    want = dict(want)
    role = {"A": ("DotOperandLayout", 0), "B": ("DotOperandLayout", 1), "C": ("NVMMADistributedLayout", None),
            "D": ("NVMMADistributedLayout", None)}.get(frag.operand)
    if role is None:
        raise LayoutError(f"{op}: {frag.name}: operand {frag.operand} has no Gluon register layout")
    if want["cls"] is None:
        want["cls"] = role[0]
    if want["cls"] == "DotOperandLayout" and want["operand"] is None:
        want["operand"] = role[1]
    if want["version"] is None and want["cls"] in ("NVMMADistributedLayout", "DotOperandLayout"):
        want["version"] = 3 if hopper else 2
    if want["cls"] == "NVMMADistributedLayout" and want["version"] == 3 and hopper:
        warps = frag.num_threads // 32
        want["prefer"] = [make_gluon("NVMMADistributedLayout", {"version": [3, 0], "warps_per_cta": [warps, 1],
                                                            "instr_shape": [16, N, K]})]
    return x, want


def _closeness(c: GluonLayout, like: GluonLayout | None) -> int:
    """How many fields of c equal like's (nested layouts counted field by field); 0 without like."""
    if like is None or c.kind != like.kind:
        return 0
    n = 0
    for (_k, v), (_, w) in zip(c.params, like.params):
        if isinstance(v, GluonLayout) and isinstance(w, GluonLayout):
            n += _closeness(v, w)
        elif v == w:
            n += 1
    return n


def _distributed_of_class(want: dict, target: dict, shape: list[int], bits: int | None) -> GluonLayout | None:
    cls, like = want["cls"], want["like"]
    rank = len(shape)
    warps = 1 << len(target["warp"])
    if cls == "DistributedLinearLayout" or target["block"]:
        return None
    if cls == "SliceLayout":
        return _recognize_slice(target, shape, bits)
    if cls == "NVMMADistributedLayout":
        cands = [c for c in _mma_candidates(rank, warps, bits) if want["version"] in (None, c["version"][0])]
    elif cls == "DotOperandLayout":
        cands = [c for c in _dot_candidates(rank, warps, bits)
                 if want["operand"] in (None, c["operand_index"]) and want["version"] in (None, c["parent"]["version"][0])]
    elif cls == "BlockedLayout":
        cands = list(_blocked_candidates(target, shape))
    else:
        return None
    cands = list(want["prefer"]) + ([like] if like is not None else []) + \
        sorted(cands, key=lambda c: -_closeness(c, like))
    return _try(cands, shape, target)


def _shared_of_class(want: dict, target: dict, shape: list[int], bits: int | None,
                     pairs: list[list[int]] | None) -> GluonLayout | None:
    cls, like = want["cls"], want["like"]
    if cls == "PaddedSharedLayout":
        return _recognize_shared(target, shape, bits, pairs) if pairs is not None else None
    if pairs is not None:
        return None
    if cls == "SharedLinearLayout":
        return make_gluon("SharedLinearLayout", {"offset_bases": target["offset"]})
    if like is not None and _try([like], shape, target):
        return like
    rank = len(shape)
    if cls == "NVMMASharedLayout":
        lb = like["element_bitwidth"] if like is not None else None
        widths = [bits] if bits else ([lb] if lb else []) + [16, 8, 32, 64]
        cands = [make_gluon("NVMMASharedLayout", {"swizzle_byte_width": sw, "element_bitwidth": b, "rank": rank, "transposed": tr})
                 for b in widths for sw in (128, 64, 32, 0) for tr in (False, True)]
        return _try(sorted(cands, key=lambda c: -_closeness(c, like)), shape, target)
    if cls == "SwizzledSharedLayout":
        import itertools

        out = []
        for order in [list(o) for o in itertools.permutations(range(rank))][::-1]:
            ncol, nrow = shape[order[0]], shape[order[1]] if rank > 1 else 1
            out += [make_gluon("SwizzledSharedLayout", {"vec": 1 << v, "per_phase": 1 << p, "max_phase": 1 << m, "order": order})
                    for m in range(nrow.bit_length()) for p in range(nrow.bit_length()) for v in range(ncol.bit_length())]
        return _try(sorted(out, key=lambda c: -_closeness(c, like)), shape, target)
    return None


def _guess_kind(x: Any, shape: list[int]) -> str:
    from ..composed import ComposedLayout
    from ..inttuple import product
    from ..layout import Layout
    from ..parse import ParsedTensor, parse

    if isinstance(x, str):
        x = parse(x)
    if isinstance(x, ParsedTensor):
        x = x.function
    inner = x.inner if isinstance(x, ComposedLayout) else x
    if not isinstance(inner, Layout):
        return "shared"
    if inner.rank() == 2:
        thr = cast(tuple, inner.shape)[0]
        if isinstance(thr, tuple) and len(thr) == 3 and int(product(thr[0])) == 32:
            return "distributed"
    if inner.rank() == len(shape) and all(int(product(cast(tuple, inner.shape)[i] if inner.rank() > 1 else inner.shape)) == s
                                        for i, s in enumerate(shape)):
        return "shared"
    return "distributed"


@guarded
def bank_report(register: Any, shared: Any, shape: Sequence[int], element_bitwidth: int) -> Any:
    """bank_report(reg, smem, shape, bits) -> layoutalg.banks' report of ``reg`` reading/writing ``smem`` as Triton issues it.

    The access is the one Triton's lowering (and ``get_shared_bank_conflicts``) assumes: each
    thread moves the largest vector of registers that sit at consecutive shared offsets (up
    to 128 bits; registers may be taken in any order), one instruction per vector. For these
    linear accesses every phase of an instruction has the same conflict degree, and Triton's
    count is ``report.ways - 1``.

    >>> mma = "NVMMADistributedLayout(version=[2, 0], warps_per_cta=[4, 1], instr_shape=[16, 8])"
    >>> r = bank_report(f"DotOperandLayout(0, {mma}, 2)", "NVMMASharedLayout(128, 16)", (64, 64), 16)
    >>> r.ways - 1, r.access_bytes
    (0, 4)
    """
    from ..banks import analyze
    from ..layout import Layout
    from ..linear import mode_layout

    op = "bank_report"
    shape = [int(s) for s in shape]
    if element_bitwidth not in (8, 16, 32, 64):
        raise LayoutError(f"{op}: element_bitwidth {element_bitwidth} is not 8, 16, 32 or 64")
    reg = linear_bases(register, shape)
    g = gluon_layout(shared)
    if gluon_layout(register).is_shared or not g.is_shared:
        raise LayoutError(f"{op}: needs a distributed layout and a shared layout, got {gluon_layout(register).kind} and {g.kind}")
    smem = from_gluon(g, shape)
    table = smem.table()
    regs = [v for v in reg["register"] if any(v)]  # broadcast registers move nothing
    offs = [int(table[flat_index(v, shape)]) for v in regs]
    others = [int(table[flat_index(v, shape)]) for k in ("lane", "warp") for v in reg[k]]
    vec, order = 1, []
    # a vector of 2**k registers: registers at offsets 1, 2, .., 2**(k-1), no other basis touching those bits
    while vec * element_bitwidth < 128 and vec in offs:
        rest = [o for i, o in enumerate(offs) if i not in order and o != vec] + others
        if any(o & (2 * vec - 1) for o in rest):
            break
        order.append(offs.index(vec))
        vec *= 2
    order += [i for i in range(len(regs)) if i not in order]
    thr = [mode_layout([flat_index(v, shape) for v in reg[k]]) for k in ("lane", "warp")]
    val = mode_layout([flat_index(regs[i], shape) for i in order])
    access = Layout((tuple(t.shape for t in thr), val.shape), (tuple(t.stride for t in thr), val.stride))
    nbytes = element_bitwidth // 8
    return analyze(smem, access, nbytes, vec * nbytes)
