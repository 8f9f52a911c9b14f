"""A Hopper GEMM tile pipeline built on the GPU from the knobs of ``layoutalg.kernel.pipeline.hopper_pipeline``.

One CTA, ``warpgroups`` x 128 threads: TMA loads A (M x K) and B (N x K) into shared memory (each with
its own tensor-map swizzle, at ``base_a`` / ``base_b`` bytes past a 1024-byte aligned address) ->
one ``wgmma.mma_async m64nNk16`` SS per k-block, per warpgroup, f16/bf16 inputs, f32 accumulators ->
epilogue: accumulators converted to the input type and written to a row-major C tile in shared memory
with ``stmatrix.x4`` (``.trans`` if asked; ``.x2`` for a last 8-column group) -> ``st.global`` of the
whole C tile to ``out`` (M x N, row-major), which the host filled with NaN, as the C tile in shared
memory is before the epilogue.

The knobs (the contract of ``docs/kernels.md``), as this kernel reads them:

* ``swizzle_a`` / ``swizzle_b``: the tensor map's swizzle; the shared tile is the library's canonical
  tile (:func:`layoutalg.nvidia.hopper.wgmma.tile`) of that swizzle, written by the loads
  :func:`layoutalg.nvidia.hopper.tma.make_tma_copy` derives (the TMA swizzles on absolute address bits);
* descriptors: :func:`layoutalg.nvidia.hopper.wgmma.k_block_descriptors` of the tile *at its base*
  (``Swizzle o base o L``), one per (64-row block, k-block), for the tile of the descriptor's swizzle
  ``desc_swizzle_*`` (None: the TMA's) -- as an author who changed the swizzle on one side only would
  derive them (mode, SBO and k-block steps of that swizzle); then the knobs overwrite single fields:
  ``lbo_*`` / ``sbo_*`` (bytes, encoded ``>> 4`` by the kernel author's code, so a value already encoded
  or in elements is a planted bug) the 14-bit fields, ``desc_base_offset_*`` the 3-bit base offset
  (bits 49-51);
* ``wg_rows[w]``: the 64-row block of A warpgroup ``w`` multiplies (its A descriptors are that block's);
  the epilogue still writes warpgroup ``w``'s accumulator to rows ``64 w ..``;
* ``epilogue_trans``: ``stmatrix ... .trans`` with the addresses of the non-transposed copy;
  ``epilogue_cols``: the epilogue copies only accumulator columns ``[0, epilogue_cols)``.

:func:`configurations` is the recorded set (correct pipelines and planted bugs), :func:`run` runs them
(each group of configurations in a child process, so that a CUDA error or a hang costs one configuration,
recorded as ``"fault"``), :func:`compare` turns an output into the wrong-element mask, :func:`mask_hex` /
:func:`mask_from_hex` pack it for ``tests/data/hardware/pipeline.json``.

    >>> k = knobs_of({"N": 128, "warpgroups": 2})
    >>> k["M"], k["wg_rows"], k["epilogue_cols"]
    (128, (0, 1), 128)
    >>> mask_from_hex(mask_hex(np.eye(3, dtype=bool)), (3, 3)).sum()
    np.int64(3)
"""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
import tempfile
import time
from typing import Any

import numpy as np

from ..errors import LayoutError
from .common import child_env, environment, nvcc_cubin, prefetch_cubins, wgmma_mainloop

__all__ = ["DEFAULTS", "knobs_of", "configurations", "plan", "derived", "descriptor_words", "cuda_source", "kernel_key",
           "compare", "mask_hex", "mask_from_hex", "run", "record", "TRIALS"]

#: the contract's knobs and their defaults (None: the correct derivation)
DEFAULTS: dict[str, Any] = {
    "M": None, "N": 64, "K": 64, "dtype": "f16", "a_major": "K", "b_major": "K", "swizzle_a": 128, "swizzle_b": 128,
    "desc_swizzle_a": None, "desc_swizzle_b": None, "base_a": 0, "base_b": 0, "desc_base_offset_a": None,
    "desc_base_offset_b": None, "lbo_a": None, "sbo_a": None, "lbo_b": None, "sbo_b": None, "warpgroups": 1,
    "wg_rows": None, "epilogue_trans": False, "epilogue_cols": None,
}
#: random operand sets per configuration: an output element is wrong if it is wrong in any of them
TRIALS = 4


def knobs_of(knobs: dict) -> dict:
    """The knobs with every default filled in (M = 64 * warpgroups, wg_rows identity, epilogue_cols = N)."""
    bad = set(knobs) - set(DEFAULTS)
    if bad:
        raise LayoutError(f"pipeline knobs: unknown {sorted(bad)}; known: {sorted(DEFAULTS)}")
    k = {**DEFAULTS, **knobs}
    wg = k["warpgroups"]
    if wg not in (1, 2):
        raise LayoutError(f"pipeline knobs: warpgroups={wg!r} is not 1 or 2")
    if k["M"] is None:
        k["M"] = 64 * wg
    if k["M"] != 64 * wg:
        raise LayoutError(f"pipeline knobs: M={k['M']} is not 64 * warpgroups = {64 * wg}")
    if k["N"] % 8 or not 8 <= k["N"] <= 256 or k["K"] % 16 or k["K"] <= 0:
        raise LayoutError(f"pipeline knobs: N={k['N']} (multiple of 8, <= 256) / K={k['K']} (multiple of 16)")
    if k["dtype"] not in ("f16", "bf16"):
        raise LayoutError(f"pipeline knobs: dtype={k['dtype']!r} is not 'f16' or 'bf16'")
    k["wg_rows"] = tuple(range(wg)) if k["wg_rows"] is None else tuple(k["wg_rows"])
    if len(k["wg_rows"]) != wg or any(r not in range(wg) for r in k["wg_rows"]):
        raise LayoutError(f"pipeline knobs: wg_rows={k['wg_rows']} is not a block of 0..{wg - 1} per warpgroup")
    if k["epilogue_cols"] is None:
        k["epilogue_cols"] = k["N"]
    if k["epilogue_cols"] % 8 or not 0 <= k["epilogue_cols"] <= k["N"]:
        raise LayoutError(f"pipeline knobs: epilogue_cols={k['epilogue_cols']} is not a multiple of 8 in [0, N]")
    for op in ("a", "b"):
        if k[f"base_{op}"] % 128 or not 0 <= k[f"base_{op}"] < 1024:
            raise LayoutError(f"pipeline knobs: base_{op}={k[f'base_{op}']} is not a multiple of 128 below 1024 "
                              "(the TMA destination must be 128-byte aligned)")
    return k


def _cfg(name: str, **kw: Any) -> tuple[str, dict]:
    return name, kw


def configurations() -> list[tuple[str, dict]]:
    """(name, knobs) of every recorded configuration: correct pipelines first, then the planted bugs."""
    c = [
        # --- correct pipelines: must be exactly A @ B^T
        _cfg("ok.f16.K.sw128.n64"),
        _cfg("ok.bf16.K.sw128.n128", dtype="bf16", N=128),
        _cfg("ok.f16.K.sw64.n64", swizzle_a=64, swizzle_b=64),
        _cfg("ok.f16.K.sw32.n64.k32", swizzle_a=32, swizzle_b=32, K=32),
        _cfg("ok.f16.K.sw0.n64", swizzle_a=0, swizzle_b=0),
        _cfg("ok.f16.K.sw128.n24", N=24),
        _cfg("ok.f16.K.sw128.n256.wg2", N=256, M=128, warpgroups=2),
        _cfg("ok.bf16.K.sw128.n64.k128.wg2", dtype="bf16", K=128, M=128, warpgroups=2),
        _cfg("ok.f16.K.sw64_128.n96.wg2", swizzle_a=64, swizzle_b=128, N=96, M=128, warpgroups=2),
        _cfg("ok.bf16.MN.sw128.n64", dtype="bf16", a_major="MN", b_major="MN"),
        _cfg("ok.f16.MN_K.sw64_128.n128", a_major="MN", swizzle_a=64, N=128),
        _cfg("ok.f16.K_MN.sw128_32.n64", b_major="MN", swizzle_b=32),
        _cfg("ok.f16.MN.sw0.n64.wg2", a_major="MN", b_major="MN", swizzle_a=0, swizzle_b=0, M=128, warpgroups=2),
        _cfg("ok.f16.K.sw128.base256_512", base_a=256, base_b=512),
        _cfg("ok.f16.K.sw128.base384_896.wg2", base_a=384, base_b=896, M=128, warpgroups=2),
        _cfg("ok.f16.K.sw64.base128", swizzle_a=64, swizzle_b=64, base_a=128, base_b=384),
        _cfg("ok.f16.MN.sw128.base640", a_major="MN", b_major="MN", base_a=640),
        # --- swizzle changed on one side (tensor map vs descriptor's mode)
        _cfg("bug.desc_sw.a128_as64", desc_swizzle_a=64),
        _cfg("bug.desc_sw.b128_as32", desc_swizzle_b=32),
        _cfg("bug.desc_sw.a128_as0", desc_swizzle_a=0),
        _cfg("bug.desc_sw.a64_as128", swizzle_a=64, swizzle_b=64, desc_swizzle_a=128),
        _cfg("bug.desc_sw.b0_as128", swizzle_b=0, desc_swizzle_b=128),
        _cfg("bug.desc_sw.aMN128_as64", a_major="MN", desc_swizzle_a=64),
        _cfg("bug.tma_sw.a64_desc128", swizzle_a=64, desc_swizzle_a=128, N=128),
        # --- base not aligned to the 1024-byte pattern: the descriptor's base-offset field
        _cfg("bug.base128.bo1", base_a=128, desc_base_offset_a=1),
        _cfg("bug.base256.bo2", base_a=256, desc_base_offset_a=2),
        _cfg("bug.base512.bo4", base_a=512, desc_base_offset_a=4),
        _cfg("bug.base_b384.bo3", base_b=384, desc_base_offset_b=3),
        _cfg("bug.base0.bo3", desc_base_offset_a=3),
        _cfg("bug.sw64.base256.bo2", swizzle_a=64, swizzle_b=64, base_a=256, desc_base_offset_a=2),
        _cfg("bug.sw32.base128.bo1", swizzle_a=32, swizzle_b=32, K=32, base_b=128, desc_base_offset_b=1),
        # --- LBO / SBO swapped, in the wrong units
        _cfg("bug.swap.a.sw128", lbo_a=1024, sbo_a=16),
        _cfg("bug.swap.b.sw0", swizzle_a=0, swizzle_b=0, lbo_b=128, sbo_b=1024),
        _cfg("bug.swap.a.sw0", swizzle_a=0, swizzle_b=0, lbo_a=128, sbo_a=1024),
        _cfg("bug.swap.aMN.sw64", a_major="MN", swizzle_a=64, lbo_a=1024, sbo_a=512),
        _cfg("bug.units.sbo_a_encoded", sbo_a=64),
        _cfg("bug.units.sbo_b_elements", sbo_b=512),
        _cfg("bug.units.lbo_a_encoded.sw0", swizzle_a=0, swizzle_b=0, lbo_a=64),
        _cfg("bug.units.sbo_a_elements.sw64", swizzle_a=64, swizzle_b=64, sbo_a=256),
        # --- the warpgroups' row blocks permuted
        _cfg("bug.wg_rows.10", M=128, warpgroups=2, wg_rows=(1, 0)),
        _cfg("bug.wg_rows.00.n128", M=128, warpgroups=2, wg_rows=(0, 0), N=128),
        _cfg("bug.wg_rows.10.sw64", M=128, warpgroups=2, wg_rows=(1, 0), swizzle_a=64, swizzle_b=64),
        # --- the epilogue
        _cfg("bug.trans.n64", epilogue_trans=True),
        _cfg("bug.trans.n128.wg2", epilogue_trans=True, N=128, M=128, warpgroups=2),
        _cfg("bug.trans.n24", epilogue_trans=True, N=24),
        _cfg("bug.cols48.n64", epilogue_cols=48),
        _cfg("bug.cols8.n64", epilogue_cols=8),
        _cfg("bug.cols120.n128.wg2", epilogue_cols=120, N=128, M=128, warpgroups=2),
        _cfg("bug.cols16.n24", epilogue_cols=16, N=24),
        # --- more of the same, on other types, majors, depths and warpgroups
        _cfg("bug.desc_sw.bf16.a128_as32.wg2", dtype="bf16", desc_swizzle_a=32, M=128, warpgroups=2),
        _cfg("bug.desc_sw.k128.b64_as128", K=128, swizzle_a=64, swizzle_b=64, desc_swizzle_b=128),
        _cfg("bug.desc_sw.a0_as32", swizzle_a=0, swizzle_b=0, desc_swizzle_a=32),
        _cfg("bug.base.MN.sw128.base256.bo2", a_major="MN", b_major="MN", base_b=256, desc_base_offset_b=2),
        _cfg("bug.units.MN.sbo_b_encoded", b_major="MN", sbo_b=64),
        _cfg("bug.trans.bf16.n64.wg2.cols32", dtype="bf16", epilogue_trans=True, M=128, warpgroups=2, epilogue_cols=32),
        _cfg("bug.wg_rows.10.k128.n32", M=128, warpgroups=2, wg_rows=(1, 0), K=128, N=32),
        # --- probes: fields the PTX ISA calls unused, base offsets of the smaller swizzles, corners (no outcome assumed)
        _cfg("probe.sw0.bo3", swizzle_a=0, swizzle_b=0, desc_base_offset_a=3),
        _cfg("probe.sw128.lbo_a2048", lbo_a=2048),
        _cfg("probe.MN.sw128.lbo_a4096", a_major="MN", lbo_a=4096),
        _cfg("probe.sw32.bo1", swizzle_a=32, swizzle_b=32, K=32, desc_base_offset_a=1),
        _cfg("probe.sw32.bo2", swizzle_a=32, swizzle_b=32, K=32, desc_base_offset_a=2),
        _cfg("probe.sw32.bo4", swizzle_a=32, swizzle_b=32, K=32, desc_base_offset_a=4),
        _cfg("probe.sw64.bo2", swizzle_a=64, swizzle_b=64, desc_base_offset_a=2),
        _cfg("probe.sw64.bo4", swizzle_a=64, swizzle_b=64, desc_base_offset_a=4),
        _cfg("probe.sw128.base896.bo7", base_a=896, desc_base_offset_a=7),
        _cfg("probe.sw32.base128", swizzle_a=32, swizzle_b=32, K=32, base_a=128, base_b=128),
        _cfg("probe.bf16.MN.sw64.base384", dtype="bf16", a_major="MN", swizzle_a=64, base_a=384),
        _cfg("probe.MN.sw32.b_swap", b_major="MN", swizzle_b=32, lbo_b=1024, sbo_b=256),
        _cfg("probe.MN.wg_rows10", M=128, warpgroups=2, a_major="MN", wg_rows=(1, 0)),
        _cfg("probe.sw32.k128.sbo_a_elements", swizzle_a=32, swizzle_b=32, K=128, sbo_a=128),
        _cfg("probe.sw0.k128.n40.trans.cols24", swizzle_a=0, swizzle_b=0, K=128, N=40, epilogue_trans=True,
             epilogue_cols=24),
        # --- two bugs at once
        _cfg("bug.base256.bo2+trans", base_a=256, desc_base_offset_a=2, epilogue_trans=True),
        _cfg("bug.desc_sw.b128_as64+cols32", desc_swizzle_b=64, epilogue_cols=32),
    ]
    return c


# --- the host side: operands, tensor maps, descriptors ---------------------------------------------
def _global(major: str, rows: int, K: int):
    from ..layout import Layout

    return Layout((rows, K), (K, 1)) if major == "K" else Layout((rows, K), (1, rows))


def _field(word: int, lo: int, bits: int, value: int) -> int:
    mask = ((1 << bits) - 1) << lo
    return (word & ~mask) | ((value << lo) & mask)


def descriptor_words(k: dict, op: str) -> list[list[int]]:
    """The descriptor words the kernel issues for operand ``op`` ("a" / "b"): per 64-row block (A) or
    the one N block (B), per k-block; start addresses relative to the 1024-byte aligned region (the
    kernel adds its shared address >> 4). Derived for the tile of the descriptor's swizzle
    (``desc_swizzle_*``, by default the TMA's) at the base, then the knobs' field overrides."""
    from ..composed import ComposedLayout
    from ..nvidia.hopper.wgmma import k_block_descriptors, tile

    major, base = k[f"{op}_major"], k[f"base_{op}"]
    sw = k[f"swizzle_{op}"] if k[f"desc_swizzle_{op}"] is None else k[f"desc_swizzle_{op}"]
    rows = k["M"] if op == "a" else k["N"]
    t = tile(major, sw, k["dtype"], (rows, k["K"]))  # the tile the author believes is there
    shifted = ComposedLayout(t.outer, base // 2, t.inner) if base else t
    kbs = k_block_descriptors(shifted, k["dtype"], f"m64n{k['N']}k16", operand=op.upper(), major=major)
    blocks: dict[int, list[int]] = {}
    for kb in kbs:
        w = kb.descriptor.encode()
        if k[f"lbo_{op}"] is not None:
            w = _field(w, 16, 14, k[f"lbo_{op}"] >> 4)
        if k[f"sbo_{op}"] is not None:
            w = _field(w, 32, 14, k[f"sbo_{op}"] >> 4)
        if k[f"desc_base_offset_{op}"] is not None:
            w = _field(w, 49, 3, k[f"desc_base_offset_{op}"])
        blocks.setdefault(kb.mn_block, []).append(int(w))
    return [blocks[i] for i in sorted(blocks)]


def _round(x: np.ndarray, dtype: str) -> np.ndarray:
    """x rounded to the output type (f16, or bf16 by round-to-nearest-even), as float64."""
    if dtype == "f16":
        return x.astype(np.float16).astype(np.float64)
    u = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    one, half, sh = np.uint64(1), np.uint64(0x7FFF), np.uint64(16)
    u = ((u + half + ((u >> sh) & one)) >> sh) << sh
    return u.astype(np.uint32).view(np.float32).astype(np.float64)


def plan(knobs: dict, seed: int = 0) -> dict:
    """Everything the host hands the kernel for one trial: operands, their TMA copies, descriptor words,
    the shared-memory regions, and the reference ``A @ B^T`` rounded to the output type."""
    from ..nvidia.hopper.tma import make_tma_copy
    from ..nvidia.hopper.wgmma import tile
    from . import encode as enc

    k = knobs_of(knobs)
    rng = np.random.default_rng(seed)
    M, N, K = k["M"], k["N"], k["K"]
    out: dict[str, Any] = {"knobs": k}
    mats = {}
    off = 0
    for op, rows in (("a", M), ("b", N)):
        major = k[f"{op}_major"]
        X = rng.integers(-2, 3, (rows, K)).astype(np.float64)
        gl = _global(major, rows, K)
        codes = enc.encode(X.ravel(), k["dtype"]).astype(np.uint16).reshape(rows, K)
        buf = np.ascontiguousarray(codes if major == "K" else codes.T).ravel()  # gl: (r, c) -> r*K + c or r + c*rows
        copy = make_tma_copy(gl, tile(major, k[f"swizzle_{op}"], k["dtype"], (rows, K)), k["dtype"])
        region = -(-(rows * K * 2 + 1024) // 1024) * 1024
        out[op] = {"buf": buf, "copy": copy, "coords": copy.coordinates((0, 0)),
                   "dst": [k[f"base_{op}"] + ld.smem_offset for ld in copy.loads],
                   "words": descriptor_words(k, op), "region": off}
        off += region
        mats[op] = X
    out["c_off"] = off
    out["smem"] = off + M * N * 2
    out["ref"] = _round(mats["a"] @ mats["b"].T, k["dtype"])
    return out


def derived(knobs: dict) -> dict:
    """What the host derives for a configuration and the kernel runs: per operand the descriptor words (hex, per
    64-row block for A, per k-block), the tensor map's driver arguments (address 0) and the loads' shared
    destinations (bytes from the 1024-byte aligned region). Recorded beside each hardware result, so that a
    replay can tell when the library's derivation no longer is what the hardware ran."""
    p = plan(knobs)
    out: dict[str, Any] = {}
    for op in ("a", "b"):
        out[f"descriptors_{op}"] = [[hex(w) for w in blk] for blk in p[op]["words"]]
        out[f"tensor_map_{op}"] = p[op]["copy"].tensor_map.driver_args()
        out[f"dst_{op}"] = [int(x) for x in p[op]["dst"]]
    return out


def compare(got: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """The wrong-element mask: ``got != ref`` (NaN, i.e. never written, is wrong)."""
    return ~(got == ref)


def mask_hex(mask: np.ndarray) -> str:
    """A boolean mask as hex of its row-major bits packed big-endian (numpy.packbits)."""
    return np.packbits(np.asarray(mask, dtype=bool).ravel()).tobytes().hex()


def mask_from_hex(text: str, shape: tuple[int, int]) -> np.ndarray:
    """The inverse of :func:`mask_hex`."""
    bits = np.unpackbits(np.frombuffer(bytes.fromhex(text), np.uint8))[: shape[0] * shape[1]]
    return bits.astype(bool).reshape(shape)


# --- the kernel --------------------------------------------------------------------------------------
def kernel_key(knobs: dict) -> str:
    """The compiled variant a configuration needs: type, majors, N, stmatrix .trans."""
    k = knobs_of(knobs)
    return f"pipe_{k['dtype']}_{k['a_major']}{k['b_major']}_n{k['N']}_t{int(bool(k['epilogue_trans']))}"


_PRELUDE = r"""
#include <cstdint>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
struct alignas(64) TmaDesc { unsigned long long w[16]; };

__device__ __forceinline__ void tma_load2(unsigned dst, const TmaDesc* map, int c0, int c1, unsigned bar) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
               :: "r"(dst), "l"(reinterpret_cast<unsigned long long>(map)), "r"(c0), "r"(c1), "r"(bar) : "memory");
}
// wait for phase 0; 1 on time-out (a transaction count that never completes would hang the GPU)
__device__ __forceinline__ int bar_wait(unsigned bar) {
  long long t0 = clock64();
  while (true) {
    unsigned ok;
    asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0;\nselp.u32 %0, 1, 0, p;\n}\n"
                 : "=r"(ok) : "r"(bar) : "memory");
    if (ok) return 0;
    if (clock64() - t0 > 2000000000LL) return 1;
  }
}
"""


def cuda_source(key: str) -> str:
    """CUDA C of the variant ``key`` (:func:`kernel_key`)."""
    _, dt, majors, n, t = key.split("_")
    ma, mb = ("K" if majors[0] == "K" else "MN"), ("K" if majors.endswith("K") else "MN")
    N, trans = int(n[1:]), t == "t1"
    pack = "__floats2half2_rn" if dt == "f16" else "__floats2bfloat162_rn"
    nan = "0x7E00u" if dt == "f16" else "0x7FC0u"
    stm = f"stmatrix.sync.aligned.m8n8.x4{'.trans' if trans else ''}.shared.b16"
    stm2 = f"stmatrix.sync.aligned.m8n8.x2{'.trans' if trans else ''}.shared.b16"
    loop = wgmma_mainloop(N, 16, dt, ma, mb, "da[wg * nk + s] + (sA >> 4)", "db[s] + (sB >> 4)")
    epi = []
    for jj in range(-(-N // 16)):
        r = [f"pk(d[{8 * jj + 2 * i}], d[{8 * jj + 2 * i + 1}])" for i in range(4)]
        if 16 * jj + 16 <= N:
            epi.append(f"""  if ({16 * jj + 16} <= cols) {{
    asm volatile("{stm} [%0], {{%1, %2, %3, %4}};"
                 :: "r"(caddr + {32 * jj}), "r"({r[0]}), "r"({r[1]}), "r"({r[2]}), "r"({r[3]}) : "memory");
  }} else""")
        epi.append(f"""  if ({16 * jj + 8} <= cols) {{
    asm volatile("{stm2} [%0], {{%1, %2}};" :: "r"(caddr + {32 * jj}), "r"({r[0]}), "r"({r[1]}) : "memory");
  }}""")
    epilogue = "\n".join(epi)
    return f"""
__device__ __forceinline__ unsigned pk(float a, float b) {{
  auto h = {pack}(a, b);
  return *reinterpret_cast<unsigned*>(&h);
}}

extern "C" __global__ void __launch_bounds__(256) {key}(
    const __grid_constant__ TmaDesc mapA, const __grid_constant__ TmaDesc mapB,
    const int* cA, const unsigned* dA, int nA, unsigned boxA, const int* cB, const unsigned* dB, int nB, unsigned boxB,
    const unsigned long long* da, const unsigned long long* db, int nk, unsigned b_off, unsigned c_off, int M, int cols,
    unsigned short* out, unsigned* info) {{
  extern __shared__ __align__(1024) unsigned char dyn[];
  __shared__ __align__(8) unsigned long long mbar;
  unsigned base = (unsigned)__cvta_generic_to_shared(dyn);
  unsigned pad = (1024u - (base & 1023u)) & 1023u;
  unsigned s0 = base + pad, sA = s0, sB = s0 + b_off, sC = s0 + c_off;
  unsigned short* cw = reinterpret_cast<unsigned short*>(dyn + pad + c_off);
  unsigned bar = (unsigned)__cvta_generic_to_shared(&mbar);
  int tid = threadIdx.x, nthreads = blockDim.x;
  for (int i = tid; i < M * {N}; i += nthreads) cw[i] = {nan};
  if (tid == 0) {{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(bar) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }}
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  if (tid == 0) {{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(bar), "r"(boxA * nA + boxB * nB) : "memory");
    for (int l = 0; l < nA; ++l) tma_load2(sA + dA[l], &mapA, cA[2 * l], cA[2 * l + 1], bar);
    for (int l = 0; l < nB; ++l) tma_load2(sB + dB[l], &mapB, cB[2 * l], cB[2 * l + 1], bar);
  }}
  int late = bar_wait(bar);
  __syncthreads();
  if (tid == 0) {{ info[0] = s0; info[1] = late; }}
  int wg = tid / 128, t = tid % 128, wi = t / 32, l = t % 32;
{loop}
  unsigned caddr = sC + (unsigned)(((wg * 64 + wi * 16 + ((l >> 3) & 1) * 8 + (l & 7)) * {N} + (l >> 4) * 8) * 2);
{epilogue}
  __syncthreads();
  const uint4* src = reinterpret_cast<const uint4*>(cw);
  uint4* dst = reinterpret_cast<uint4*>(out);
  for (int i = tid; i < M * {N} / 8; i += nthreads) dst[i] = src[i];
}}
"""


# --- running ------------------------------------------------------------------------------------
def _launch(drv, fn, args: list, threads: int, smem: int) -> None:
    holders = [(ctypes.c_void_p * 1)(ctypes.addressof(a)) for a in args]
    params = (ctypes.c_void_p * len(args))(*[h[0] for h in holders])
    drv._check(drv.lib.cuLaunchKernel(fn, 1, 1, 1, threads, 1, 1, smem, None, params, None), "cuLaunchKernel")
    drv._check(drv.lib.cuCtxSynchronize(), "cuCtxSynchronize (kernel)")


def _decode(raw: bytes, dtype: str) -> np.ndarray:
    u = np.frombuffer(raw, np.uint16)
    if dtype == "f16":
        return u.view(np.float16).astype(np.float64)
    return (u.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def execute(drv, cubin: str, knobs: dict, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """One trial on the GPU: (the output M x N as float64, NaN where never written; the reference)."""
    from .tma_driver import map_arg

    p = plan(knobs, seed)
    k = p["knobs"]
    M, N = k["M"], k["N"]
    fn = drv.function(cubin, kernel_key(k))
    ptrs: list[int] = []

    def upload(arr: np.ndarray) -> int:
        b = np.ascontiguousarray(arr).tobytes()
        ptr = drv.alloc(len(b) + 64)
        ptrs.append(ptr)
        drv.htod(ptr, b)
        return ptr

    try:
        args: list = []
        maps, loads = [], []
        for op in ("a", "b"):
            o = p[op]
            gp = upload(o["buf"])
            r, blob = drv.encode_tiled(o["copy"].tensor_map.driver_args(gp))
            if r:
                raise RuntimeError(f"the driver refused the tensor map of {op}: {drv.error_name(r)}")
            maps.append(map_arg(blob))
            coords = np.array([list(c) for c in o["coords"]], np.int32).reshape(-1, 2)
            loads.append((upload(coords), upload(np.array(o["dst"], np.uint32)), len(o["dst"]),
                          o["copy"].tensor_map.box_bytes))
        wa = np.array([w for blk in (p["a"]["words"][r] for r in k["wg_rows"]) for w in blk], np.uint64)
        wb = np.array(p["b"]["words"][0], np.uint64)
        nk = len(p["b"]["words"][0])
        outp = upload(np.full(M * N, 0x7E00 if k["dtype"] == "f16" else 0x7FC0, np.uint16))
        info = upload(np.zeros(4, np.uint32))
        args = [maps[0], maps[1]]
        for cp_, dp_, n_, box in loads:
            args += [ctypes.c_uint64(cp_), ctypes.c_uint64(dp_), ctypes.c_int(n_), ctypes.c_uint32(box)]
        args += [ctypes.c_uint64(upload(wa)), ctypes.c_uint64(upload(wb)), ctypes.c_int(nk),
                 ctypes.c_uint32(p["b"]["region"]), ctypes.c_uint32(p["c_off"]), ctypes.c_int(M), ctypes.c_int(k["epilogue_cols"]),
                 ctypes.c_uint64(outp), ctypes.c_uint64(info)]
        _launch(drv, fn, args, 128 * k["warpgroups"], p["smem"] + 2048)
        got = _decode(drv.dtoh(outp, M * N * 2), k["dtype"]).reshape(M, N)
        inf = np.frombuffer(drv.dtoh(info, 8), np.uint32)
        if inf[0] % 1024:
            raise RuntimeError(f"shared region at {int(inf[0])} is not 1024-byte aligned")
        if inf[1]:
            raise RuntimeError("mbarrier wait timed out: the TMA transaction count never completed")
    finally:
        for ptr in ptrs:
            drv.free(ptr)
    return got, p["ref"]


def _child(cubins: dict, names: list[str]) -> None:
    """In a child process: run the named configurations; one ``RESULT name json`` line each. A CUDA error
    poisons the context: print ``CRASH name error`` and stop (the parent restarts after it)."""
    from .tma_driver import Driver

    cfgs = dict(configurations())
    drv = Driver()
    for name in names:
        knobs = cfgs[name]
        print(f"START {name}", flush=True)
        try:
            wrong, nan, exact_any = None, None, False
            for seed in range(TRIALS):
                got, ref = execute(drv, cubins[kernel_key(knobs)], knobs, seed)
                w = compare(got, ref)
                wrong = w if wrong is None else wrong | w
                nan = np.isnan(got) if nan is None else nan & np.isnan(got)
                exact_any = exact_any or not w.any()
                if seed == 0:
                    sample = [[int(m), int(n), float(got[m, n]), float(ref[m, n])] for m, n in np.argwhere(w)[:4]]
        except Exception as e:  # noqa: BLE001 - a CUDA error poisons this process: report and stop
            print(f"CRASH {name} " + json.dumps(f"{type(e).__name__}: {str(e)[:300]}"), flush=True)
            return
        assert wrong is not None and nan is not None
        print(f"RESULT {name} " + json.dumps({
            "mask": mask_hex(wrong), "wrong": int(wrong.sum()), "exact": not bool(wrong.any()),
            "all_nan": bool(nan.all()), "nan": int(nan.sum()), "some_trial_exact": exact_any,
            "examples": sample}), flush=True)


def compile_all(names: list[str] | None = None, workdir: str | None = None) -> dict[str, str]:
    """{kernel key: cubin path} for the configurations (all nvcc processes at once)."""
    workdir = workdir or tempfile.mkdtemp(prefix="layoutalg_pipe_")
    keys = sorted({kernel_key(kn) for n, kn in configurations() if names is None or n in names})
    srcs = {key: _PRELUDE + cuda_source(key) for key in keys}
    prefetch_cubins(srcs, workdir)
    return {key: nvcc_cubin(src, key, workdir) for key, src in srcs.items()}


def run(names: list[str] | None = None, log=print, timeout: float = 120.0) -> dict:
    """Compile and run the configurations (all by default): {name: record}. Each record: the knobs, and
    ``mask`` (:func:`mask_hex`, M x N), ``wrong``, ``exact``, ``all_nan``, ``examples`` (m, n, got, want),
    or ``status: "fault"`` with the error (a CUDA error or a hang; such a configuration has no mask)."""
    t0 = time.time()
    cfgs = [(n, kn) for n, kn in configurations() if names is None or n in names]
    cubins = compile_all([n for n, _ in cfgs])
    log(f"[pipeline] compiled {len(cubins)} variants in {time.time() - t0:.1f}s")
    todo = [n for n, _ in cfgs]
    results: dict[str, dict] = {}
    while todo:
        p = subprocess.Popen([sys.executable, "-m", "layoutalg.gpu.pipeline", "--child", json.dumps(cubins),
                              json.dumps(todo)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=child_env())
        try:
            so, se = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            so, se = p.communicate()
            se = "timeout (hang)\n" + se
        started = None
        for line in so.splitlines():
            if line.startswith("START "):
                started = line.split(" ", 1)[1]
            elif line.startswith("RESULT "):
                _, name, js = line.split(" ", 2)
                results[name] = {"status": "ran", **json.loads(js)}
                started = None
            elif line.startswith("CRASH "):
                _, name, js = line.split(" ", 2)
                results[name] = {"status": "fault", "error": json.loads(js)}
                started = None
        if started is not None:
            results[started] = {"status": "fault", "error": f"child died: {se[-400:]}"}
        left = [n for n in todo if n not in results]
        if len(left) == len(todo):  # no progress at all
            for n in left:
                results[n] = {"status": "fault", "error": f"child made no progress: {se[-400:]}"}
            left = []
        todo = left
    out = {}
    for name, kn in cfgs:
        out[name] = {"knobs": kn, "shape": [knobs_of(kn)["M"], knobs_of(kn)["N"]], "derived": derived(kn),
                     **results[name]}
    log(f"[pipeline] {len(out)} configurations in {time.time() - t0:.1f}s")
    return out


def record(outdir: str, log=print) -> str:
    """Run every configuration and write ``outdir/pipeline.json`` (with the machine it came from)."""
    from .common import write_recording

    env = environment()
    try:
        from .tma_driver import Driver

        env["cuda_driver_api"] = Driver().version
    except Exception as e:  # noqa: BLE001
        env["cuda_driver_api"] = f"unavailable: {e}"
    res = run(log=log)
    return write_recording("pipeline", {"trials": TRIALS, "configurations": res,
                                        "kernel": "layoutalg.gpu.pipeline (TMA -> wgmma SS -> stmatrix -> st.global)"},
                           env, outdir)


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        _child(json.loads(sys.argv[2]), json.loads(sys.argv[3]))
    elif len(sys.argv) == 3 and sys.argv[1] == "--record":
        print(record(sys.argv[2]))
    else:
        print(f"usage: python -m layoutalg.gpu.pipeline --record OUTDIR   (got {sys.argv[1:]})", file=sys.stderr)
        sys.exit(2)
    os._exit(0)
