"""LDS, AMD's shared memory, as layouts: Triton's swizzled and padded layouts, the bank model, synthesis.

**Layouts.** Triton's two AMD shared-memory encodings, read as layoutalg layouts *coordinate ->
element offset* (coordinates colexicographic over ``shape``, as every layoutalg shared layout):

- ``SwizzledSharedLayout(vec, per_phase, max_phase, order)``: rows of the two fastest dimensions
  (``order[0]`` is contiguous) are cut into vectors of ``vec`` elements; row ``r`` XORs its vector
  index with the *phase* ``(r // per_phase) % max_phase``. On power-of-two shapes that is CuTe's
  ``Swizzle<B,M,S>`` on the row-major offset, ``M = log2 vec``, ``S = log2(cols * per_phase / vec)``,
  ``B = log2 max_phase`` (clipped to the vectors of a row and the rows of the tile):
  :func:`swizzled_shared`.
- ``PaddedSharedLayout(interval_padding_pairs, offset_bases, shape)``: an F2-linear remapping of the
  unpadded offset (``offset_bases``; ``with_identity_for(pairs, shape, order)`` is the plain
  ``order``), then ``pad`` elements inserted after every ``interval``:
  ``padded(o) = o + sum_j (o // interval_j) * pad_j``. With power-of-two intervals that is a CuTe
  layout of the offset's digits, and composed with a remapping that permutes bits it is a plain
  :class:`~layoutalg.layout.Layout`: :func:`padded_shared`.

Worked by hand: a 16 x 32 ``f16`` tile, ``SwizzledSharedLayout(vec=4, per_phase=2, max_phase=4,
order=[1, 0])``. Row 5 has phase ``(5 // 2) % 4 = 2``, so column 9 (vector 2, lane 1 of it) moves to
vector ``2 ^ 2 = 0``: offset ``5*32 + 0*4 + 1 = 161``. ``Swizzle<2,2,4>``: offset ``169`` has bits
6-7 equal to 2, XORed into bits 2-3: ``169 ^ 8 = 161``::

    >>> sw = swizzled_shared((16, 32), vec=4, per_phase=2, max_phase=4, order=(1, 0))
    >>> print(sw)
    Sw<2,2,4> o _0 o (16,32):(32,1)
    >>> sw(5, 9)
    161
    >>> pad = padded_shared((16, 32), [(32, 4)], order=(1, 0))    # 4 elements after each row
    >>> print(pad)
    (16,32):(36,1)
    >>> pad(5, 9)
    189

Both were compared with Triton 3.6's compiler: Gluon kernels storing a tensor into each layout,
compiled for ``gfx942`` on the CPU, the byte offsets of their LDS stores read back
(``tests/amd_lds_cases.py`` records them to ``tests/data/amd/lds_triton.json``).

**Bank model** (:data:`LDS`, :func:`lds_model`): LDS is cut into banks of 4 bytes, byte ``a`` in bank
``(a // 4) % banks``. The hardware serves a wave's access in *phases*, groups of lanes whose bank
conflicts matter; a phase costs its busiest bank's distinct dwords (the same dword to many lanes is
a broadcast), an instruction the sum of its phases. Where each number comes from:

- CDNA3 (gfx942, MI300): 64 KiB, 32 banks (CDNA3 ISA guide, "Local Data Share"; AMD's ROCm blog
  *Avoiding LDS Bank Conflicts on AMD GPUs Using CK-Tile Framework*, 2025). ``ds_read_b128``: 8
  phases of 8 lanes, not consecutive: lanes 0-3 with 20-23, 4-7 with 16-19, 8-11 with 28-31, 12-15
  with 24-27, the same for lanes 32-63 (the blog's figure; measured on MI300 in ROCm users'
  microbenchmarks). ``ds_write_b128``: 8 phases of 8 consecutive lanes (CK Tile's documentation,
  *Understanding AMD GPU LDS and Bank Conflicts*). 64-bit: 4 phases of 16 lanes, 32-bit and
  narrower: 2 phases of 32 (AMD's OpenCL optimization guide for GCN: "quarter-" and
  "half-wavefront", 128 bytes a clock). ``ds_read_b96``: taken as CDNA4's (below; not measured on
  CDNA3).
- CDNA4 (gfx950, MI355X): 160 KiB, 64 banks. Measured on MI355X by the HipKittens authors
  (``analysis/paper_experiments/phases`` of their repository): 64 banks; ``ds_read_b128`` 4
  phases of 16 lanes (0-3, 12-15, 20-27 / 4-11, 16-19, 28-31, and +32), ``ds_read_b96`` 8 phases
  (the CDNA3 ``b128`` groups), ``ds_read_b64`` 2 phases of 32, ``ds_write_b64`` 4 phases of 16.
  Not measured, inferred (marked in :attr:`LdsModel.sources`): 32-bit reads one phase of 64 (256
  bytes a clock), 32-bit writes 2 of 32 and 96/128-bit writes 8 of 8 consecutive lanes (writes
  move 128 bytes a clock, as ``ds_write_b64`` shows).

No AMD GPU was used here; the phases are data (:attr:`LdsModel.groups`): a measured correction is
one line. The model ignores what may make some patterns cheaper or dearer (e.g. address-conflict
details of the LDS crossbar) and assumes dword-aligned wide accesses (LLVM emits ``ds_read_b128``
only for addresses it can prove aligned; a misaligned vector becomes narrower instructions).

**Analysis and synthesis**: :func:`lds_report` (one instruction's lane addresses),
:func:`analyze_lds` (a shared layout read through a TV layout, wave by wave), and
:func:`synthesize_lds`, which ranks Triton's ``SwizzledSharedLayout`` and ``PaddedSharedLayout``
parameters for a set of accesses by the cycles this model charges.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..banks import BankReport, phase_costs, phase_report
from ..composed import ComposedLayout
from ..errors import LayoutError, guarded
from ..layout import Layout
from ..parse import as_concrete_layout
from ..swizzle import Swizzle
from .common import arch_name

__all__ = [
    "swizzled_shared", "padded_shared", "padding_layout", "LdsModel", "LDS", "lds_model", "lds_report",
    "lds_addresses", "analyze_lds", "lds_costs", "LdsAccess", "LdsCandidate", "synthesize_lds",
]


# ------------------------------------------------------------------------------------------- layouts
def _pow2(x: Any, op: str, what: str) -> int:
    if isinstance(x, bool) or not isinstance(x, (int, np.integer)) or x < 1 or x & (x - 1):
        raise LayoutError(f"{op}: {what} {x!r} is not a power of two (Triton's shared layouts need powers of two)")
    return int(x)


def _shape_order(shape: Any, order: Any, op: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    shape = tuple(_pow2(s, op, "extent") for s in shape)
    if not shape:
        raise LayoutError(f"{op}: empty shape")
    order = tuple(range(len(shape)))[::-1] if order is None else tuple(int(o) for o in order)
    if sorted(order) != list(range(len(shape))):
        raise LayoutError(f"{op}: order {list(order)} is not a permutation of the {len(shape)} dimensions")
    return shape, order


def _ordered(shape: tuple[int, ...], order: tuple[int, ...]) -> Layout:
    """The unpadded, unswizzled offset: ``order[0]`` contiguous, then ``order[1]``, ..."""
    strides = [0] * len(shape)
    acc = 1
    for d in order:
        strides[d] = acc if shape[d] > 1 else 0
        acc *= shape[d]
    if len(shape) == 1:
        return Layout(shape[0], strides[0])
    return Layout(shape, tuple(strides))


@guarded
def swizzled_shared(shape: Sequence[int], vec: int, per_phase: int, max_phase: int,
                    order: Sequence[int] | None = None) -> Any:
    """Triton's ``SwizzledSharedLayout(vec, per_phase, max_phase, order)`` over ``shape``: coordinate -> element offset.

    ``order`` lists the dimensions fastest first (default: the last one contiguous, Triton's
    ``[rank-1, ..., 0]``). The swizzle acts on the two fastest dimensions; further ones stack tiles.

    >>> print(swizzled_shared((64, 64), 8, 1, 8, order=(1, 0)))
    Sw<3,3,3> o _0 o (64,64):(64,1)
    >>> print(swizzled_shared((32, 16), 1, 1, 1))       # the trivial swizzle
    (32,16):(16,1)
    """
    op = "swizzled_shared"
    shape_t, order_t = _shape_order(shape, order, op)
    vec, per_phase, max_phase = (_pow2(vec, op, "vec"), _pow2(per_phase, op, "per_phase"),
                                 _pow2(max_phase, op, "max_phase"))
    base = _ordered(shape_t, order_t)
    if len(shape_t) < 2:
        return base
    cols, rows = shape_t[order_t[0]], shape_t[order_t[1]]
    m, lc, lpp = vec.bit_length() - 1, cols.bit_length() - 1, per_phase.bit_length() - 1
    b = min(max_phase.bit_length() - 1, lc - m, rows.bit_length() - 1 - lpp)
    if b <= 0:
        return base
    return ComposedLayout(Swizzle(b, m, lc + lpp - m), 0, base)


def padding_layout(size: int, interval_padding: Sequence[Sequence[int]]) -> Layout:
    """The 1-D map ``o -> o + sum_j (o // interval_j) * pad_j`` on ``[0, size)`` as a layout.

    Sorted intervals ``I_1 < I_2 < ...`` cut ``o`` into digits ``o = d_0 + I_1 d_1 + I_2 d_2 + ...``;
    digit ``k`` moves ``I_k + sum_{j<=k} (I_k / I_j) pad_j`` elements. Triton's docstring example,
    pairs ``[[2, 1], [4, 2]]``: ``e2`` at 3, ``e4`` at 8::

        >>> L = padding_layout(8, [(2, 1), (4, 2)])
        >>> print(L)
        (2,2,2):(1,3,8)
        >>> [L(o) for o in range(8)]
        [0, 1, 3, 4, 8, 9, 11, 12]
    """
    op = "padding_layout"
    size = _pow2(size, op, "size")
    pairs = sorted((_pow2(i, op, "interval"), _pow2(p, op, "padding")) for i, p in interval_padding)
    if len({i for i, _ in pairs}) != len(pairs):
        raise LayoutError(f"{op}: intervals {[i for i, _ in pairs]} repeat (Triton sums their paddings; give one pair each)")
    cuts = [i for i, _ in pairs if i < size]
    shape, stride, prev = [], [], 1
    for cut in cuts + [size]:
        if cut > prev:
            shape.append(cut // prev)
            stride.append(prev + sum((prev // i) * p for i, p in pairs if i <= prev))
        prev = cut
    if not shape:
        return Layout(1, 0)
    return Layout(tuple(shape), tuple(stride)) if len(shape) > 1 else Layout(shape[0], stride[0])


@guarded
def padded_shared(shape: Sequence[int], interval_padding: Sequence[Sequence[int]], order: Sequence[int] | None = None,
                  *, offset_bases: Sequence[Sequence[int]] | None = None) -> Layout:
    """Triton's ``PaddedSharedLayout`` over ``shape``: coordinate -> element offset, padding included.

    ``order`` is ``with_identity_for``'s (fastest dimension first); ``offset_bases`` Triton's general
    remapping (offset bit ``j`` -> coordinate vector ``offset_bases[j]``). layoutalg takes remappings
    that send each offset bit to one coordinate bit (``with_identity_for`` and any permutation of
    rows or columns bits, as Triton's docstring examples); an XOR remapping is refused by name.

    Triton's docstring example, shape ``[8, 4]``, pairs ``[[8, 1]]``, bases ``[0,1], [0,2], [2,0],
    [4,0], [1,0]``: row 1 starts after 16 elements and one pad, row 4 at 9::

        >>> L = padded_shared((8, 4), [(8, 1)], offset_bases=[[0, 1], [0, 2], [2, 0], [4, 0], [1, 0]])
        >>> L(1, 0), L(2, 0), L(4, 0)
        (18, 4, 9)
    """
    op = "padded_shared"
    shape_t, order_t = _shape_order(shape, order, op)
    size = math.prod(shape_t)
    if offset_bases is None:
        base = _ordered(shape_t, order_t)
        bit_of: dict[tuple[int, int], int] = {}
        j = 0
        for d in order_t:
            for b in range(shape_t[d].bit_length() - 1):
                bit_of[(d, b)] = j
                j += 1
    else:
        bases = [list(map(int, v)) for v in offset_bases]
        if len(bases) != size.bit_length() - 1 or any(len(v) != len(shape_t) for v in bases):
            raise LayoutError(f"{op}: {len(bases)} offset bases of rank {len(shape_t)} needed for shape {list(shape_t)} "
                              f"(one per offset bit), got {bases}")
        bit_of = {}
        for j, v in enumerate(bases):
            nz = [(d, x) for d, x in enumerate(v) if x]
            if len(nz) != 1 or nz[0][1] & (nz[0][1] - 1) or nz[0][1] >= shape_t[nz[0][0]]:
                raise LayoutError(f"{op}: offset basis {v} is not one bit of one coordinate; layoutalg reads "
                                  f"remappings that permute coordinate bits (an XOR remapping needs a swizzle)")
            bit_of[(nz[0][0], nz[0][1].bit_length() - 1)] = j
        if len(bit_of) != len(bases):
            raise LayoutError(f"{op}: offset bases {bases} repeat a coordinate bit (not a bijection)")
        base = None
    pad = padding_layout(size, interval_padding)
    modes: list[tuple[Any, Any]] = []
    for d in range(len(shape_t)):
        bits = [(2, pad(1 << bit_of[(d, b)])) for b in range(shape_t[d].bit_length() - 1)]
        merged: list[list[int]] = []
        for ext, st in bits:  # merge bit runs whose strides double: (2,2):(s,2s) -> 4:s
            if merged and merged[-1][1] * merged[-1][0] == st:
                merged[-1][0] *= ext
            else:
                merged.append([ext, st])
        if not merged:
            modes.append((1, 0))
        elif len(merged) == 1:
            modes.append((merged[0][0], merged[0][1]))
        else:
            modes.append((tuple(e for e, _ in merged), tuple(s for _, s in merged)))
    del base
    if len(modes) == 1:
        return Layout(*modes[0])
    return Layout(tuple(s for s, _ in modes), tuple(d for _, d in modes))


# ---------------------------------------------------------------------------------------- bank model
_CDNA3_B128_READ = tuple(tuple(range(a, a + 4)) + tuple(range(b, b + 4))
                         for h in (0, 32) for a, b in ((h, h + 20), (h + 4, h + 16), (h + 8, h + 28), (h + 12, h + 24)))


def _consecutive(n: int, wave: int = 64) -> tuple[tuple[int, ...], ...]:
    return tuple(tuple(range(s, s + n)) for s in range(0, wave, n))


def _merge(groups: tuple, pairs: Sequence[tuple[int, int]]) -> tuple[tuple[int, ...], ...]:
    return tuple(tuple(sorted(groups[a] + groups[b])) for a, b in pairs)


@dataclass(frozen=True)
class LdsModel:
    """The LDS of one architecture: ``banks`` banks of ``bank_bytes``; ``groups[(op, bytes)]`` the
    phases (lane groups) of a wave-64 ``ds_read`` / ``ds_write`` of ``bytes`` bytes a lane;
    ``sources[(op, bytes)]`` where that rule comes from."""

    arch: str
    banks: int
    lds_bytes: int
    groups: dict = field(compare=False, repr=False)
    sources: dict = field(compare=False, repr=False)
    bank_bytes: int = 4
    wave: int = 64

    def lane_groups(self, access_bytes: int, op: str = "read") -> tuple[tuple[int, ...], ...]:
        """The phases of a ``ds_<op>`` of ``access_bytes`` bytes a lane.

        >>> [len(g) for g in lds_model("cdna3").lane_groups(16)]
        [8, 8, 8, 8, 8, 8, 8, 8]
        >>> lds_model("gfx950").lane_groups(16)[0][:8]
        (0, 1, 2, 3, 12, 13, 14, 15)
        """
        if op not in ("read", "write"):
            raise LayoutError(f"LdsModel.lane_groups: op {op!r} is not 'read' or 'write'")
        key = (op, 4 if access_bytes in (1, 2) else access_bytes)
        if key not in self.groups:
            raise LayoutError(f"LdsModel.lane_groups: ds_{op} of {access_bytes} bytes a lane; LDS accesses are "
                              f"1, 2, 4, 8, 12 or 16 bytes (ds_{op}_b8 .. ds_{op}_b128)")
        return self.groups[key]


def _models() -> dict[str, LdsModel]:
    half, quarter, eighth = _consecutive(32), _consecutive(16), _consecutive(8)
    blog = "ROCm blog 'Avoiding LDS Bank Conflicts on AMD GPUs Using CK-Tile Framework' (2025), MI300"
    ck = "CK Tile docs 'Understanding AMD GPU LDS and Bank Conflicts': ds_write_b128 in 8 phases of 8 lanes"
    gcn = "AMD OpenCL optimization guide (GCN LDS): 128 bytes a clock, half/quarter-wavefront phases"
    hk = "HipKittens phase measurements on MI355X (analysis/paper_experiments/phases)"
    cdna3 = LdsModel(
        "cdna3", 32, 64 * 1024,
        {("read", 4): half, ("write", 4): half, ("read", 8): quarter, ("write", 8): quarter,
         ("read", 12): _CDNA3_B128_READ, ("write", 12): eighth, ("read", 16): _CDNA3_B128_READ,
         ("write", 16): eighth},
        {("read", 4): gcn, ("write", 4): gcn, ("read", 8): gcn, ("write", 8): gcn,
         ("read", 12): "assumed as CDNA4's measured ds_read_b96 (" + hk + ")", ("write", 12): "assumed as ds_write_b128",
         ("read", 16): blog, ("write", 16): ck})
    cdna4 = LdsModel(
        "cdna4", 64, 160 * 1024,
        {("read", 4): _consecutive(64), ("write", 4): half, ("read", 8): half, ("write", 8): quarter,
         ("read", 12): _CDNA3_B128_READ, ("write", 12): eighth,
         ("read", 16): _merge(_CDNA3_B128_READ, [(0, 3), (1, 2), (4, 7), (5, 6)]), ("write", 16): eighth},
        {("read", 4): "inferred: 64 banks x 4 bytes serve 64 lanes a clock (not measured)",
         ("write", 4): "inferred: writes move 128 bytes a clock, as ds_write_b64 (not measured)",
         ("read", 8): hk, ("write", 8): hk, ("read", 12): hk, ("write", 12): "assumed as ds_write_b128",
         ("read", 16): hk, ("write", 16): ck + " (not measured on gfx950)"})
    return {"cdna3": cdna3, "cdna4": cdna4}


#: The LDS bank models by architecture family (``cdna3``, ``cdna4``).
LDS: dict[str, LdsModel] = _models()


def lds_model(arch: str) -> LdsModel:
    """The :class:`LdsModel` of ``arch`` (any spelling :func:`~layoutalg.amd.common.arch_name` reads).

    >>> m = lds_model("MI300X"); m.banks, m.lds_bytes
    (32, 65536)
    """
    a = arch_name(arch)
    if a not in LDS:
        raise LayoutError(f"lds_model: no LDS bank model for {a} (known: {', '.join(LDS)}); "
                          f"RDNA's LDS and CDNA1/2 are not modelled")
    return LDS[a]


def _check(addresses: Any, access_bytes: int, model: LdsModel, op: str) -> list[int | None]:
    if access_bytes not in (1, 2, 4, 8, 12, 16):
        raise LayoutError(f"{op}: {access_bytes} bytes a lane; LDS accesses are 1, 2, 4, 8, 12 or 16 bytes")
    if isinstance(addresses, (str, bytes)) or not hasattr(addresses, "__iter__"):
        raise LayoutError(f"{op}: {addresses!r} is not a sequence of byte addresses (None for an idle lane)")
    out: list[int | None] = []
    align = min(access_bytes, 4)
    for ln, a in enumerate(addresses):
        if a is None:
            out.append(None)
            continue
        if isinstance(a, bool) or not isinstance(a, (int, np.integer)) or a < 0:
            raise LayoutError(f"{op}: lane {ln} has address {a!r}, not a byte address >= 0 (or None)")
        if a % align:
            raise LayoutError(f"{op}: lane {ln} address {a} is not {align}-byte aligned")
        if a + access_bytes > model.lds_bytes:
            raise LayoutError(f"{op}: lane {ln} reads bytes up to {a + access_bytes}, beyond the "
                              f"{model.lds_bytes // 1024} KiB LDS of {model.arch}")
        out.append(int(a))
    if not 1 <= len(out) <= model.wave:
        raise LayoutError(f"{op}: {len(out)} addresses; one wave has 1 to {model.wave} lanes")
    return out


def lds_report(addresses: Sequence[Any], access_bytes: int, arch: str = "cdna3", op: str = "read", *,
               description: str = "") -> BankReport:
    """LDS cycles of one wave-wide ``ds_<op>``: lane ``l`` touches ``[addresses[l], addresses[l] + access_bytes)``.

    ``wavefronts`` counts the LDS passes (a phase costs its busiest bank's distinct dwords); ``ideal``
    the passes with no bank asked twice. 64 lanes reading consecutive 16-byte vectors: 8 passes on
    CDNA3 (8 phases of 128 bytes), 4 on CDNA4; a column of a 128-byte-row tile (lane ``l`` at
    ``128*l``) puts a CDNA3 phase's 8 lanes on the same 4 banks: 8 times the ideal::

        >>> lds_report([16 * l for l in range(64)], 16).wavefronts, lds_report([16 * l for l in range(64)], 16, "gfx950").wavefronts
        (8, 4)
        >>> r = lds_report([128 * l for l in range(64)], 16); r.wavefronts, r.ideal
        (64, 8)
    """
    model = lds_model(arch)
    addrs = _check(addresses, access_bytes, model, "lds_report")
    ins = phase_report(addrs, access_bytes, model.lane_groups(access_bytes, op), num_banks=model.banks,
                       bank_bytes=model.bank_bytes, label=f"ds_{op}_b{8 * access_bytes}")
    return BankReport((ins,), access_bytes, description or f"{model.arch} LDS, {model.banks} banks")


def lds_addresses(smem: Any, access: Any, element_bytes: int, vector_bytes: int | None = None) -> np.ndarray:
    """``A[t, k]``: byte address of thread ``t``'s ``k``-th vector, ``element_bytes * smem(access(t, k*n))``.

    ``access`` is a TV layout ``(thread, value) -> coordinate index of smem``; ``n = vector_bytes /
    element_bytes`` consecutive values of a thread form one vector and must sit on consecutive bytes.
    """
    op = "lds_addresses"
    smem = as_concrete_layout(smem, op, "shared-memory layout")
    access = as_concrete_layout(access, op, "access pattern")
    vb = element_bytes if vector_bytes is None else vector_bytes
    if element_bytes not in (1, 2, 4, 8) or vb not in (1, 2, 4, 8, 12, 16) or vb % element_bytes:
        raise LayoutError(f"{op}: element_bytes={element_bytes}, vector_bytes={vb}: elements are 1-8 bytes, "
                          f"vectors 1, 2, 4, 8, 12 or 16 bytes and a whole number of elements")
    if len(access) != 2:
        raise LayoutError(f"{op}: access pattern {access} has rank {len(access)}; expected a TV layout (thread, value)")
    T, V = int(access[0].size()), int(access[1].size())
    n = vb // element_bytes
    if V % n:
        raise LayoutError(f"{op}: {V} values a thread is not a multiple of the {n} elements of a {vb}-byte vector")
    idx = np.asarray(access.table(), dtype=np.int64).reshape(V, T).T
    S = int(smem.size())
    if idx.min() < 0 or idx.max() >= S:
        raise LayoutError(f"{op}: the access pattern reaches coordinate {int(idx.max())}, outside [0, {S}) of {smem}")
    off = np.asarray(smem.table(), dtype=np.int64)[idx] * element_bytes
    vec = off.reshape(T, V // n, n)
    want = vec[:, :, :1] + element_bytes * np.arange(n)
    if not np.array_equal(vec, want):
        t, k, e = np.argwhere(vec != want)[0]
        raise LayoutError(f"{op}: thread {t}'s vector {k} is not contiguous: value {k * n + e} at byte {vec[t, k, e]}, "
                          f"expected {want[t, k, e]}")
    return vec[:, :, 0]


def analyze_lds(smem: Any, access: Any, element_bytes: int, vector_bytes: int | None = None, *, arch: str = "cdna3",
                op: str = "read", description: str = "") -> BankReport:
    """LDS passes of ``access`` (a TV layout onto ``smem``'s coordinates) wave by wave, vector by vector.

    Threads ``64w .. 64w + 63`` form wave ``w``; the ``k``-th vector of each of its lanes is one
    instruction. A wave reading a column of a row-major 64 x 64 ``f16`` tile (lane ``l``, row ``l``):
    every address a multiple of 128 bytes, bank 0 for all 64 lanes, 32-way per CDNA3 phase::

        >>> analyze_lds(Layout((64, 64), (64, 1)), Layout((64, 1), (1, 0)), 2).ways
        32
    """
    model = lds_model(arch)
    vectors = _wave_vectors(smem, access, element_bytes, vector_bytes, model, "analyze_lds")
    vb = element_bytes if vector_bytes is None else vector_bytes
    groups = model.lane_groups(vb, op)
    instrs = [phase_report(addrs, vb, groups, num_banks=model.banks, bank_bytes=model.bank_bytes, label=label)
              for label, addrs in vectors]
    return BankReport(tuple(instrs), vb, description or f"{access} {op}ing {smem} on {model.arch} LDS")


def _wave_vectors(smem: Any, access: Any, element_bytes: int, vector_bytes: int | None, model: LdsModel,
                  op: str) -> list[tuple[str, list]]:
    """The instructions of ``access`` onto ``smem``: (label, checked byte addresses of the wave's lanes), the
    ``k``-th vector of each wave in order."""
    starts = lds_addresses(smem, access, element_bytes, vector_bytes)
    vb = element_bytes if vector_bytes is None else vector_bytes
    T, K = starts.shape
    return [((f"wave {w // model.wave} " if T > model.wave else "") + f"vector {k}",
             _check([int(a) for a in starts[w:w + model.wave, k]], vb, model, op))
            for w in range(0, T, model.wave) for k in range(K)]


@guarded
def lds_costs(smem: Any, access: Any, element_bytes: int, vector_bytes: int | None = None, *, arch: str = "cdna3",
              op: str = "read") -> tuple[int, int]:
    """``(wavefronts, ideal)`` of :func:`analyze_lds` on the same arguments, by :func:`layoutalg.banks.phase_costs`
    (no per-instruction conflicts or schedule): what :func:`synthesize_lds` ranks its candidates by.

    >>> lds_costs(Layout((64, 64), (64, 1)), Layout((64, 1), (1, 0)), 2)
    (64, 2)
    """
    model = lds_model(arch)
    vectors = _wave_vectors(smem, access, element_bytes, vector_bytes, model, "lds_costs")
    vb = element_bytes if vector_bytes is None else vector_bytes
    groups = model.lane_groups(vb, op)
    total = ideal = 0
    for _, addrs in vectors:
        cost, best = phase_costs(addrs, vb, groups, num_banks=model.banks, bank_bytes=model.bank_bytes)
        total += cost
        ideal += best
    return total, ideal


# ------------------------------------------------------------------------------------------ synthesis
@dataclass(frozen=True)
class LdsAccess:
    """One way a kernel touches the tile: TV layout ``(thread, value) -> row + rows*col``, bytes a lane
    per instruction, ``op`` ``"read"`` or ``"write"``."""

    name: str
    tv: Layout
    vector_bytes: int
    op: str = "read"


@dataclass(frozen=True)
class LdsCandidate:
    """A shared layout Triton can spell, with the LDS passes of each access under the model."""

    triton: str  # Triton's constructor, e.g. "SwizzledSharedLayout(vec=8, per_phase=1, max_phase=8, order=[1, 0])"
    layout: Any
    cycles: tuple[int, ...]
    ideal: tuple[int, ...]
    lds_bytes: int

    @property
    def total(self) -> int:
        return sum(self.cycles)

    @property
    def conflict_free(self) -> bool:
        return self.cycles == self.ideal


@guarded
def synthesize_lds(shape: tuple[int, int], element_bytes: int, accesses: Sequence[LdsAccess | tuple], *,
                   arch: str = "cdna3", top: int = 5, aligned: bool = True) -> list[LdsCandidate]:
    """Rank Triton's shared layouts for a row-major-ordered ``shape`` tile (``order=[1, 0]``) by LDS passes.

    Searched: every ``SwizzledSharedLayout(vec, per_phase, max_phase)`` with powers of two inside the
    tile and ``vec`` at least the widest vector, and every ``PaddedSharedLayout`` with one
    ``[interval, pad]`` pair (interval a row or more, pad 1 to 16 dwords' worth of elements). Ties
    go to fewer LDS bytes, then to the trivial/simpler layout. An access is an :class:`LdsAccess` or
    a ``(tv, vector_bytes[, op])`` tuple.

    ``aligned`` (default) keeps only layouts that leave every vector naturally aligned (16-byte
    vectors at multiples of 16), which LLVM needs to emit the wide ``ds_read_b128``/``ds_write_b128``.

    A 64 x 64 ``f16`` tile (K contiguous) written by rows of 16-byte vectors and read as an MFMA
    operand: lane ``l`` reads row ``l``, 8 consecutive K-elements (``ds_read_b128``). Unswizzled every
    row starts at a multiple of 128 bytes, banks 0-3: an 8-way conflict in every CDNA3 phase. XOR-ing
    the row into the 16-byte chunk (``vec=8, max_phase=8``) spreads them::

        >>> rows = Layout(((8, 64), 8), ((512, 1), 64))    # thread t: row t // 8, columns 8*(t % 8) + v
        >>> mfma = Layout((64, 64), (1, 64))               # lane l: row l, values: columns
        >>> plain = analyze_lds(Layout((64, 64), (64, 1)), mfma, 2, 16)
        >>> plain.wavefronts, plain.ideal, plain.ways
        (512, 64, 8)
        >>> best = synthesize_lds((64, 64), 2, [(rows, 16, "write"), (mfma, 16, "read")])[0]
        >>> best.triton, best.cycles
        ('SwizzledSharedLayout(vec=8, per_phase=1, max_phase=8, order=[1, 0])', (64, 64))
    """
    op = "synthesize_lds"
    model = lds_model(arch)
    R, C = (_pow2(s, op, "extent") for s in shape)
    accs = [a if isinstance(a, LdsAccess) else LdsAccess(f"access {k}", *a) for k, a in enumerate(accesses)]
    if not accs:
        raise LayoutError(f"{op}: no accesses to rank layouts by")
    widest = max(a.vector_bytes for a in accs)
    min_vec = max(1, widest // element_bytes)
    cands: list[tuple[str, Any, int]] = [("SwizzledSharedLayout(vec=1, per_phase=1, max_phase=1, order=[1, 0])",
                                          Layout((R, C), (C, 1)), R * C * element_bytes)]
    vec = min_vec
    while vec <= C:
        pp = 1
        while pp <= R:
            mp = 2
            while mp <= min(C // vec, R // pp):
                lay = swizzled_shared((R, C), vec, pp, mp, (1, 0))
                cands.append((f"SwizzledSharedLayout(vec={vec}, per_phase={pp}, max_phase={mp}, order=[1, 0])", lay,
                              R * C * element_bytes))
                mp *= 2
            pp *= 2
        vec *= 2
    interval = C
    while interval <= R * C // 2 and interval <= 4096:
        pad = max(1, 4 // element_bytes)
        while pad * element_bytes <= 64:
            lay = padded_shared((R, C), [(interval, pad)], (1, 0))
            cands.append((f"PaddedSharedLayout.with_identity_for([[{interval}, {pad}]], [{R}, {C}], [1, 0])", lay,
                          (R * C + (R * C // interval - 1) * pad) * element_bytes))
            pad *= 2
        interval *= 2
    out = []
    for name, lay, nbytes in cands:
        cyc, ideal = [], []
        try:
            for a in accs:
                natural = 16 if a.vector_bytes == 12 else a.vector_bytes
                if aligned and np.any(lds_addresses(lay, a.tv, element_bytes, a.vector_bytes) % natural):
                    raise LayoutError("misaligned")
                cost, best = lds_costs(lay, a.tv, element_bytes, a.vector_bytes, arch=model.arch, op=a.op)
                cyc.append(cost)
                ideal.append(best)
        except LayoutError:
            continue  # a vector split or misaligned by the layout: not a candidate for this access set
        out.append(LdsCandidate(name, lay, tuple(cyc), tuple(ideal), nbytes))
    if not out:
        raise LayoutError(f"{op}: no candidate keeps every access's vectors contiguous (check the TV layouts "
                          f"and vector_bytes against the {R} x {C} tile)")
    out.sort(key=lambda c: (c.total, c.lds_bytes, len(c.triton)))
    return out[:top]
