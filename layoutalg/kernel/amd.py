"""AMD layout attributes of ttgir as Triton's linear layouts: ``#ttg.amd_mfma`` (through
:func:`layoutalg.interop.gluon_amd.mfma_bases`), ``#ttg.amd_wmma`` and the ``#ttg.dot_op`` operands of both.

Each function returns Triton's bases ``{register, lane, warp, block}`` (``[dim0, dim1]`` per input bit)
on a tensor of the given shape; :func:`layoutalg.linear.from_linear` turns them into a TV layout. The
rules, restated from Triton's ``LinearLayoutConversions.cpp`` and checked against Triton 3.6's engine
(``tests/test_kernel_amd.py``):

* WMMA accumulator (16 x 16 per instruction, wave32): version 1 (RDNA3) -- lanes 0-15 along N, lane bit 4
  and registers along M at step 2 (rows interleaved between the half-waves); version 2 (RDNA4) --
  registers along M (8 rows), lanes 0-15 along N, lane bit 4 to the rows 8-15. ``isTranspose`` swaps M and N
  within the instruction tile.
* MFMA / WMMA operand (``#ttg.dot_op<{opIdx, parent, kWidth}>``): ``kWidth`` consecutive K elements per
  lane in registers, the instruction's non-K extent over the first lanes, the remaining lane bits along K
  at steps of ``kWidth`` (MFMA; a WMMA v1 operand is replicated in both half-waves: lane bit 4 is 0),
  registers repeat along K up to the tensor's K; then tiles per warp and warps along the non-K dimension
  (the warps of the other dimension hold the same data), and the tensor's repetitions in registers.

Everything beyond a tensor's extent broadcasts (Triton's ``ensureLayoutNotLargerThan``: the bases past an
extent become 0).

    >>> b = wmma_bases({"version": 2, "warpsPerCTA": [1, 1]}, (16, 16))
    >>> b["register"], b["lane"]
    ([[1, 0], [2, 0], [4, 0]], [[0, 1], [0, 2], [0, 4], [0, 8], [8, 0]])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..errors import LayoutError, guarded
from ..interop.gluon_amd import mfma_bases

__all__ = ["mfma_attr_bases", "wmma_bases", "amd_dot_bases", "amd_bases"]

Bases = dict[str, list[list[int]]]


def _log2(x: int, what: str) -> int:
    if isinstance(x, bool) or not isinstance(x, int) or x < 1 or x & (x - 1):
        raise LayoutError(f"{what} {x!r} is not a power of two")
    return x.bit_length() - 1


def _ints(v: Any, what: str) -> list[int]:
    if not isinstance(v, list) or not all(isinstance(x, int) and not isinstance(x, bool) for x in v):
        raise LayoutError(f"{what} = {v!r} is not a list of integers")
    return list(v)


@guarded
def mfma_attr_bases(params: dict[str, Any], shape: Sequence[int]) -> Bases:
    """``#ttg.amd_mfma<{version, warpsPerCTA, instrShape, isTransposed, tilesPerWarp, elementBitWidth}>`` on ``shape``."""
    fields = {"version": params.get("version"), "instr_shape": _ints(params.get("instrShape"), "instrShape"),
              "transposed": bool(params.get("isTransposed", False)),
              "warps_per_cta": _ints(params.get("warpsPerCTA"), "warpsPerCTA"),
              "element_bitwidth": params.get("elementBitWidth"), "tiles_per_warp": params.get("tilesPerWarp")}
    return mfma_bases(fields, shape)


def _fit(reg: list[list[int]], lane: list[list[int]], warp: list[list[int]], shape: Sequence[int],
         order: Sequence[int], tiles: dict[int, list[list[int]]] | None = None) -> Bases:
    """The CTA layout made to cover ``shape``: per dimension in ``order``, its tiles per warp (``tiles[d]``) then
    its repetitions over the tensor in registers; bases past an extent set to 0 where the tensor is smaller."""
    rank = len(shape)
    size = [1] * rank
    for v in reg + lane + warp + [v for vs in (tiles or {}).values() for v in vs]:
        for d in range(rank):
            if v[d]:
                size[d] = max(size[d], 2 * v[d])
    reg = [list(v) for v in reg]
    for d in order:
        reg += [list(v) for v in (tiles or {}).get(d, [])]
        while size[d] < shape[d]:
            v = [0] * rank
            v[d] = size[d]
            reg.append(v)
            size[d] *= 2

    def cut(v: list[int]) -> list[int]:
        return [x if x < s else 0 for x, s in zip(v, shape)]

    return {"register": [cut(v) for v in reg], "lane": [cut(v) for v in lane], "warp": [cut(v) for v in warp],
            "block": []}


def _warps(wpc: list[int], order: Sequence[int]) -> list[list[int]]:
    out = []
    rank = len(wpc)
    for d in order:
        for t in range(_log2(wpc[d], "warpsPerCTA entry")):
            v = [0] * rank
            v[d] = 1 << t
            out.append(v)
    return out


def _scale(vs: list[list[int]], tile: list[int]) -> list[list[int]]:
    return [[x * t for x, t in zip(v, tile)] for v in vs]


@guarded
def wmma_bases(params: dict[str, Any], shape: Sequence[int]) -> Bases:
    """``#ttg.amd_wmma<{version, isTranspose, warpsPerCTA, instrShape, tilesPerWarp}>`` (the accumulator) on ``shape``."""
    version = int(params.get("version", 1))
    if version not in (1, 2):
        raise LayoutError(f"#ttg.amd_wmma version {version}: versions 1 (RDNA3) and 2 (RDNA4) are read")
    wpc = _ints(params.get("warpsPerCTA"), "warpsPerCTA")
    instr = _ints(params.get("instrShape", [16, 16, 16]), "instrShape")
    if len(wpc) != 2 or instr[:2] != [16, 16]:
        raise LayoutError(f"#ttg.amd_wmma: rank {len(wpc)}, instrShape {instr}: rank 2 and 16 x 16 instructions are read")
    tiles = _ints(params.get("tilesPerWarp", [1, 1]), "tilesPerWarp")
    if version == 1:
        reg = [[2, 0], [4, 0], [8, 0]]
        lane = [[0, 1], [0, 2], [0, 4], [0, 8], [1, 0]]
    else:
        reg = [[1, 0], [2, 0], [4, 0]]
        lane = [[0, 1], [0, 2], [0, 4], [0, 8], [8, 0]]
    if params.get("isTranspose", False):
        reg = [[c, r] for r, c in reg]
        lane = [[c, r] for r, c in lane]
    per_dim = {d: [[16 << t if e == d else 0 for e in (0, 1)] for t in range(_log2(tiles[d], "tilesPerWarp entry"))]
               for d in (0, 1)}
    warp = _scale(_warps(wpc, (1, 0)), [16 * tiles[0], 16 * tiles[1]])
    return _fit(reg, lane, warp, shape, (1, 0), per_dim)


@guarded
def amd_dot_bases(op_idx: int, k_width: int, parent: str, pparams: dict[str, Any], shape: Sequence[int]) -> Bases:
    """The ``opIdx`` operand (0: A, ``[M, K]``; 1: B, ``[K, N]``) of an ``amd_mfma`` / ``amd_wmma`` parent on ``shape``."""
    if len(shape) != 2:
        raise LayoutError(f"AMD dot operand on shape {list(shape)}: rank 2 is read")
    wpc = _ints(pparams.get("warpsPerCTA"), "warpsPerCTA")
    kdim, ndim = (1, 0) if op_idx == 0 else (0, 1)
    k_size = int(shape[kdim])

    def vec(nonk: int, k: int) -> list[int]:
        v = [0, 0]
        v[kdim], v[ndim] = k, nonk
        return v

    if parent == "ttg.amd_mfma":
        instr = _ints(pparams.get("instrShape"), "instrShape")
        nonk_instr = instr[0] if op_idx == 0 else instr[1]
        lanes_k = 64 // nonk_instr
        tiles = _ints(pparams.get("tilesPerWarp", [1, 1]), "tilesPerWarp")
        wave = 64
    else:
        version = int(pparams.get("version", 1))
        nonk_instr, wave = 16, 32
        lanes_k = 1 if version == 1 else 2
        tiles = _ints(pparams.get("tilesPerWarp", [1, 1]), "tilesPerWarp")
        if version == 1 and tiles != [1, 1]:
            raise LayoutError(f"a #ttg.amd_wmma version 1 operand with tilesPerWarp = {tiles} is not read (its register "
                              "order is not restated here; tilesPerWarp = [1, 1] is)")
    reg = [vec(0, 1 << t) for t in range(_log2(k_width, "kWidth"))]
    lane = [vec(1 << t, 0) for t in range(_log2(nonk_instr, "instruction extent"))]
    if parent == "ttg.amd_wmma" and lanes_k == 1:
        lane.append([0, 0])  # RDNA3: both half-waves hold the same operand
    else:
        lane += [vec(0, k_width << t) for t in range(_log2(lanes_k, "lane groups"))]
    if len(lane) != _log2(wave, "wave"):
        raise LayoutError(f"AMD dot operand: {len(lane)} lane bits for a wave of {wave}")
    k_tile = k_width * lanes_k
    while k_tile < k_size:
        reg.append(vec(0, k_tile))
        k_tile *= 2
    nd_tiles = tiles[ndim]
    per_dim = {ndim: [vec(nonk_instr << t, 0) for t in range(_log2(nd_tiles, "tilesPerWarp entry"))]}
    warp = []
    for d in (1, 0):  # the parent's warps: along this operand's non-K dimension they tile, along K they broadcast
        for t in range(_log2(wpc[d], "warpsPerCTA entry")):
            warp.append(vec((nonk_instr * nd_tiles) << t, 0) if d == ndim else [0, 0])
    return _fit(reg, lane, warp, shape, (kdim, ndim), per_dim)


@guarded
def amd_bases(attribute: str, params: dict[str, Any], shape: Sequence[int]) -> Bases:
    """Bases of an AMD distributed attribute (``ttg.amd_mfma``, ``ttg.amd_wmma``) on ``shape``."""
    if attribute == "ttg.amd_mfma":
        return mfma_attr_bases(params, shape)
    if attribute == "ttg.amd_wmma":
        return wmma_bases(params, shape)
    raise LayoutError(f"#{attribute} is no AMD distributed layout read here")
