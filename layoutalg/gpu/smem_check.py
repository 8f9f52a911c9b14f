"""Where Triton's shared-memory layouts put each element, measured, against the library's layouts.

A Gluon kernel (``triton.experimental.gluon``) stores a tile whose element ``(r, c)`` holds its own
row-major index ``r*C + c`` into shared memory allocated with a given layout, then reads the same
bytes back through an *unswizzled* view (``SwizzledSharedLayout(1, 1, 1, [1, 0])`` via
``_reinterpret``). Slot ``p`` of the read-back holds the index of the element stored at physical
element offset ``p``; inverting gives ``where[r*C + c]`` = the physical offset of ``(r, c)``.

The library's prediction:

* ``NVMMASharedLayout(swizzle_byte_width=SW, element_bitwidth=bits, transposed=t)`` on an ``R x C``
  tile, ``SW`` in 32/64/128: the swizzle atom of :func:`layoutalg.nvidia.hopper.wgmma.atom` -- K-major
  ``(MN=R, K=C)`` when not transposed (``C`` contiguous), MN-major when transposed (``R``
  contiguous) -- repeated over the tile with ``tile_to_shape``, **the non-contiguous dimension
  first**: for a non-transposed tile that is CuTe's default order (= :func:`layoutalg.nvidia.hopper.wgmma.tile`),
  for a transposed one it is ``order=(1, 0)`` (K first), where CuTe's default would go MN first.
  By hand, 16-bit, 128 B swizzle, element (1, 0): byte 128 sits in row 1 of the pattern, so its
  16-byte chunk 0 is XORed with 1: byte 144, element 72.
* ``SW = 0`` is *not* the wgmma INTERLEAVE (8 x 16 B core-matrix) layout: Triton stores the tile
  plain row-major, ``(R, C):(C, 1)``, transposed or not (measured on Triton 3.6).
* ``SwizzledSharedLayout(vec, per_phase, max_phase, order=[1, 0])`` on ``R x C`` is
  ``Swizzle<log2 max_phase, log2 vec, log2(C*per_phase) - log2 vec>`` applied to the row-major
  offset ``r*C + c`` (for ``order=[0, 1]`` the same with the roles of ``R`` and ``C`` swapped).

    >>> from layoutalg.gpu.smem_check import expected_nvmma, expected_swizzled
    >>> int(expected_nvmma(128, 16, False, 16, 128)[1 * 128 + 0])
    72
    >>> expected_swizzled(8, 1, 8, [1, 0], 32, 64)[1 * 64 + 0]
    np.int64(72)

8-bit tiles are measured twice (low and high byte of the index), since one byte cannot name 4096
elements.
"""

from __future__ import annotations

import numpy as np

from ..errors import LayoutError
from .mma_check import pack_array, unpack_array

__all__ = ["nvmma_configs", "swizzled_configs", "expected_nvmma", "expected_swizzled", "swizzle_of",
           "run", "replay"]

_DTYPE_BY_BITS = {8: "e4m3", 16: "f16", 32: "tf32"}


def nvmma_configs() -> list[dict]:
    """Every (swizzle, bits, transposed) with an R x C tile two swizzle rows wide and 16 deep."""
    out = []
    for bits in (8, 16, 32):
        contig = 256 * 8 // bits  # 256 bytes along the contiguous dimension
        for sw in (0, 32, 64, 128):
            for tr in (False, True):
                R, C = (contig, 16) if tr else (16, contig)
                out.append({"kind": "nvmma", "swizzle": sw, "bits": bits, "transposed": tr, "R": R, "C": C,
                            "name": f"nvmma.sw{sw}.b{bits}.{'T' if tr else 'N'}"})
    return out


def swizzled_configs() -> list[dict]:
    """A few SwizzledSharedLayout parameter sets on 16-bit 32 x 64 tiles (both orders)."""
    out = []
    for vec, pp, mp, order in ((8, 1, 8, (1, 0)), (4, 2, 4, (1, 0)), (2, 1, 4, (1, 0)), (8, 2, 4, (1, 0)),
                               (1, 1, 1, (1, 0)), (8, 1, 4, (0, 1)), (4, 2, 4, (0, 1))):
        out.append({"kind": "swizzled", "vec": vec, "per_phase": pp, "max_phase": mp, "order": list(order),
                    "bits": 16, "R": 32, "C": 64, "name": f"swz.v{vec}.p{pp}.m{mp}.o{order[0]}{order[1]}"})
    return out


def expected_nvmma(swizzle: int, bits: int, transposed: bool, R: int, C: int) -> np.ndarray:
    """where[r*C + c] = physical element offset of (r, c), from :func:`layoutalg.nvidia.hopper.wgmma.tile`."""
    from ..algebra import tile_to_shape
    from ..composed import ComposedLayout
    from ..nvidia.hopper.wgmma import atom

    if bits not in _DTYPE_BY_BITS:
        raise LayoutError(f"expected_nvmma: element_bitwidth {bits} not one of {sorted(_DTYPE_BY_BITS)}")
    if swizzle == 0:
        return np.arange(R * C, dtype=np.int64)  # plain row-major, see the module docstring
    a = atom("MN" if transposed else "K", swizzle, _DTYPE_BY_BITS[bits])
    order = (1, 0) if transposed else (0, 1)  # the non-contiguous dimension's atoms first
    t = ComposedLayout(a.outer, 0, tile_to_shape(a.inner, (R, C), order))
    colmajor = np.asarray(t.table(), dtype=np.int64)  # index r + R*c
    return colmajor.reshape(C, R).T.reshape(-1)  # -> row-major (r, c)


def swizzle_of(vec: int, per_phase: int, max_phase: int, rows_len: int):
    """The :class:`~layoutalg.swizzle.Swizzle` of SwizzledSharedLayout(vec, per_phase, max_phase) on rows of rows_len.

    >>> swizzle_of(8, 1, 8, 64)
    Sw<3,3,3>
    """
    from ..swizzle import Swizzle

    lg = {1: 0, 2: 1, 4: 2, 8: 3, 16: 4, 32: 5, 64: 6, 128: 7, 256: 8}
    for name, val in (("vec", vec), ("per_phase", per_phase), ("max_phase", max_phase), ("row", rows_len)):
        if val not in lg:
            raise LayoutError(f"swizzle_of: {name}={val} is not a power of two up to 256")
    B, M = lg[max_phase], lg[vec]
    if vec * max_phase > rows_len:
        raise LayoutError(f"swizzle_of: vec*max_phase = {vec * max_phase} exceeds the row of {rows_len} elements")
    S = lg[rows_len] + lg[per_phase] - M
    return Swizzle(B, M, S) if B else Swizzle(0, M, max(S, 0))


def expected_swizzled(vec: int, per_phase: int, max_phase: int, order, R: int, C: int) -> np.ndarray:
    """where[r*C + c] for SwizzledSharedLayout: Swizzle(row-major offset) (order [1,0]) or its transpose."""
    r, c = np.meshgrid(np.arange(R), np.arange(C), indexing="ij")
    if list(order) == [1, 0]:
        sw = swizzle_of(vec, per_phase, max_phase, C)
        lin = r * C + c
    elif list(order) == [0, 1]:
        sw = swizzle_of(vec, per_phase, max_phase, R)
        lin = c * R + r
    else:
        raise LayoutError(f"expected_swizzled: order {order} is not [1, 0] or [0, 1]")
    return np.asarray(sw(lin.reshape(-1)), dtype=np.int64)


def expected(cfg: dict) -> np.ndarray:
    """The library's where[] for one configuration."""
    if cfg["kind"] == "nvmma":
        return expected_nvmma(cfg["swizzle"], cfg["bits"], cfg["transposed"], cfg["R"], cfg["C"])
    return expected_swizzled(cfg["vec"], cfg["per_phase"], cfg["max_phase"], cfg["order"], cfg["R"], cfg["C"])


# ---------------------------------------------------------------------------------------------
# device side
# ---------------------------------------------------------------------------------------------
def _kernels():
    from triton.experimental import gluon
    from triton.experimental.gluon import language as gl

    @gluon.jit
    def nvmma_kernel(in_ptr, out_ptr, R: gl.constexpr, C: gl.constexpr, SW: gl.constexpr, BITS: gl.constexpr,
                     TR: gl.constexpr):
        blk: gl.constexpr = gl.BlockedLayout([1, 1], [1, 32], [4, 1], [1, 0])
        rows = gl.arange(0, R, layout=gl.SliceLayout(1, blk))
        cols = gl.arange(0, C, layout=gl.SliceLayout(0, blk))
        offs = rows[:, None] * C + cols[None, :]
        x = gl.load(in_ptr + offs)
        lay: gl.constexpr = gl.NVMMASharedLayout(swizzle_byte_width=SW, element_bitwidth=BITS, rank=2, transposed=TR)
        smem = gl.allocate_shared_memory(in_ptr.dtype.element_ty, [R, C], lay)
        smem.store(x)
        flat: gl.constexpr = gl.SwizzledSharedLayout(1, 1, 1, [1, 0])
        raw = smem._reinterpret(in_ptr.dtype.element_ty, [R, C], flat)
        gl.store(out_ptr + offs, raw.load(blk))

    @gluon.jit
    def swz_kernel(in_ptr, out_ptr, R: gl.constexpr, C: gl.constexpr, VEC: gl.constexpr, PP: gl.constexpr,
                   MP: gl.constexpr, O0: gl.constexpr, O1: gl.constexpr):
        blk: gl.constexpr = gl.BlockedLayout([1, 1], [1, 32], [4, 1], [1, 0])
        rows = gl.arange(0, R, layout=gl.SliceLayout(1, blk))
        cols = gl.arange(0, C, layout=gl.SliceLayout(0, blk))
        offs = rows[:, None] * C + cols[None, :]
        x = gl.load(in_ptr + offs)
        lay: gl.constexpr = gl.SwizzledSharedLayout(VEC, PP, MP, [O0, O1])
        smem = gl.allocate_shared_memory(in_ptr.dtype.element_ty, [R, C], lay)
        smem.store(x)
        flat: gl.constexpr = gl.SwizzledSharedLayout(1, 1, 1, [1, 0])
        raw = smem._reinterpret(in_ptr.dtype.element_ty, [R, C], flat)
        gl.store(out_ptr + offs, raw.load(blk))

    return nvmma_kernel, swz_kernel


def _measure(kern, cfg: dict, launch_args: tuple) -> np.ndarray:
    import torch

    R, C = cfg["R"], cfg["C"]
    n = R * C
    tdt = {8: torch.int8, 16: torch.int16, 32: torch.int32}[cfg["bits"]]
    idx = np.arange(n, dtype=np.int64)
    parts = [idx] if cfg["bits"] > 8 else [idx & 0xFF, idx >> 8]
    got = np.zeros(n, dtype=np.int64)
    for j, part in enumerate(parts):
        inp = torch.from_numpy(part.astype({8: np.uint8, 16: np.int16, 32: np.int32}[cfg["bits"]]).view(
            {8: np.int8, 16: np.int16, 32: np.int32}[cfg["bits"]])).cuda()
        out = torch.full((n,), -1, dtype=tdt, device="cuda")
        kern[(1,)](inp, out, *launch_args, num_warps=4)
        torch.cuda.synchronize()
        vals = out.cpu().numpy().astype(np.int64)
        if cfg["bits"] == 8:
            vals &= 0xFF
        got |= vals << (8 * j)
    # got[p] = logical index stored at physical slot p
    if sorted(got.tolist()) != list(range(n)):
        raise LayoutError(f"smem_check {cfg['name']}: read-back is not a permutation of the tile's indices")
    where = np.empty(n, dtype=np.int64)
    where[got] = np.arange(n)
    return where


def check(cfg: dict, where: np.ndarray) -> dict:
    """Compare a measured where[] with the library's; the record of one configuration."""
    want = expected(cfg)
    bad = np.nonzero(where != want)[0]
    C = cfg["C"]
    rec = dict(cfg)
    rec.update({
        "status": "pass" if len(bad) == 0 else "fail",
        "mismatches": int(len(bad)),
        "examples": [{"element": [int(e // C), int(e % C)], "hardware": int(where[e]), "library": int(want[e])}
                     for e in bad[:6]],
        "observed": pack_array(where),
    })
    return rec


def run(log=print) -> dict:
    """Measure every configuration on the GPU; the recording (dict)."""
    import time

    t0 = time.time()
    results = {}
    try:
        nvmma_kernel, swz_kernel = _kernels()
    except Exception as e:  # noqa: BLE001
        return {"results": {}, "error": f"gluon unavailable: {type(e).__name__}: {e}", "seconds": time.time() - t0}
    for cfg in nvmma_configs() + swizzled_configs():
        try:
            if cfg["kind"] == "nvmma":
                where = _measure(nvmma_kernel, cfg, (cfg["R"], cfg["C"], cfg["swizzle"], cfg["bits"], cfg["transposed"]))
            else:
                o = cfg["order"]
                where = _measure(swz_kernel, cfg, (cfg["R"], cfg["C"], cfg["vec"], cfg["per_phase"],
                                                   cfg["max_phase"], o[0], o[1]))
            results[cfg["name"]] = check(cfg, where)
        except Exception as e:  # noqa: BLE001 - one configuration's failure
            rec = dict(cfg)
            rec.update({"status": "error", "error": f"{type(e).__name__}: {str(e)[-500:]}"})
            results[cfg["name"]] = rec
    return {"results": results, "seconds": time.time() - t0}


def replay(recording: dict, corrupt=None) -> list[str]:
    """The recorded placements the library's current layouts do not explain (empty: all explained)."""
    problems = []
    for name, rec in recording["results"].items():
        if rec.get("status") != "pass":
            continue
        where = unpack_array(rec["observed"])
        want = expected(rec)
        if corrupt is not None:
            want = corrupt(rec, want.copy())
        bad = np.nonzero(where != want)[0]
        for e in bad[:3]:
            problems.append(f"{name}: element ({e // rec['C']}, {e % rec['C']}) hardware offset {where[e]}, "
                            f"library {want[e]}")
    return problems
