"""TMA on the hardware: tensor maps encoded by the driver, boxes copied by ``cp.async.bulk.tensor``.

Four checks, all planned on the CPU (numpy) and run by :func:`run` on an sm_90 GPU:

1. **Placement** (:func:`placement_cases`, :func:`layout_cases`): a global allocation whose every
   element holds its own index (encoded so that any element size identifies it, see
   :func:`encode_ids`) is viewed as a strided tensor that is *not* a multiple of the box; the driver
   encodes the tensor map, a kernel fills shared memory with a sentinel, issues the loads, waits on
   the mbarrier and copies shared memory out. Every shared slot then says which global element
   landed there, or that it was zero-filled (out of bounds) or left untouched. The library's
   prediction (:meth:`layoutalg.nvidia.tma.TensorMap.placement`) must match slot for slot.
   Raw cases sweep swizzle x {8, 16, 32}-bit types x box shapes; layout cases take the map and loads
   from :func:`layoutalg.nvidia.tma.make_tma_copy` (wgmma tiles, plain layouts, 3-D tensors).
2. **Refusals** (:func:`refusal_cases`): arguments that break one driver rule each, and their twins
   that do not; the driver's ``CUresult`` beside the library's :meth:`TensorMap.violations`.
3. **CuTe** (:func:`cute_cases`): a host program built with CuTe's headers calls ``make_tma_copy``;
   a shim in place of ``cuTensorMapEncodeTiled`` prints the arguments CuTe chose and (on the GPU
   machine) encodes them with the real driver; the library's arguments and encoded bytes must match.
4. **TMA -> wgmma** (:func:`e2e_modes`): A and B tiles loaded by TMA with the library's tensor maps,
   multiplied by ``wgmma`` with the library's descriptors, D exact; negative controls (a descriptor
   whose swizzle disagrees with the map) in child processes must give a wrong D, and
   :func:`layoutalg.nvidia.tma.check_wgmma` must have said so beforehand.

The driver is reached through ``ctypes`` (``libcuda.so.1``: no CuPy or cuda-python needed); if
``cuda.bindings`` is importable its ``cuTensorMapEncodeTiled`` is cross-checked byte for byte.
Kernels are CUDA C with inline PTX built by ``nvcc`` for sm_90a (:func:`layoutalg.gpu.harness.nvcc_cubin`).
Recordings: ``tests/data/hardware/tma.json``, replayed by ``tests/test_gpu_replay_tma.py``.

    >>> c = placement_cases()[0]
    >>> c["name"], c["map"].swizzle, len(c["loads"])
    ('p.UINT8.NONE.row64', 'NONE', 2)
    >>> int((predict(c) >= 0).sum()) > 0
    True
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import math
import os
import subprocess
import sys
import tempfile
import time
import traceback
from typing import Any

import numpy as np

from ..nvidia.tma import SWIZZLE_MODES, TensorMap, check_wgmma, element_bytes, make_tma_copy
from .common import child_env, compare_exact, wgmma_mainloop

__all__ = [
    "placement_cases", "layout_cases", "refusal_cases", "cute_cases", "e2e_modes", "E2E_NEGATIVES",
    "encode_ids", "decode_ids", "predict", "image_hash", "cute_program", "parse_cute_output",
    "library_cute_args", "kernel_source", "run", "replay", "replay_placement", "replay_refusals", "replay_cute",
    "replay_e2e", "SENTINEL",
]

#: value written to every shared byte before the loads (per element size): marks untouched slots
SENTINEL = {1: 0xFF, 2: 0xFFFF, 4: 0xDEADBEEF}
UNTOUCHED, ZERO_FILL, UNDECODABLE, NAN_FILL = -2, -1, -3, -4
_SMEM_CAP = 160 * 1024


# --- identifying every element by its value -------------------------------------------------------
def encode_ids(n: int, nb: int, digit: int = 0) -> np.ndarray:
    """Bit patterns (uint64, low ``8 * nb`` bits) that identify allocation elements 0..n-1 (never 0, never the sentinel).

    4 bytes: normal floats that tf32 keeps exactly -- ``id = index + 1``, exponent ``(id >> 10) + 1``,
    mantissa ``(id & 1023) << 13`` (no denormals, nothing a TMA data type could flush or round);
    2 bytes: ``id`` itself (< 0xFFFF; < 0x7C00 stays clear of f16/bf16 NaN patterns);
    1 byte: base-254 digit ``digit`` of ``index`` plus 1 (two runs identify 64516 elements).

    >>> [hex(int(x)) for x in encode_ids(2, 4)], decode_ids(encode_ids(3, 2), 2).tolist()
    (['0x802000', '0x804000'], [0, 1, 2])
    """
    idx = np.arange(n, dtype=np.int64)
    if nb == 4:
        i = idx + 1
        if n + 1 >= 253 << 10:
            raise ValueError(f"encode_ids: {n} elements exceed the 32-bit id range")
        return (((i >> 10) + 1) << 23 | (i & 1023) << 13).astype(np.uint64)
    if nb == 2:
        if n + 1 >= 0xFFFF:
            raise ValueError(f"encode_ids: {n} elements exceed the 16-bit id range")
        return (idx + 1).astype(np.uint64)
    if nb == 1:
        if n > 254 * 254:
            raise ValueError(f"encode_ids: {n} elements exceed two base-254 digits")
        return ((idx // (254 ** digit)) % 254 + 1).astype(np.uint64)
    raise ValueError(f"encode_ids: element size {nb}")


def decode_ids(vals: np.ndarray, nb: int, nan_fill: bool = False) -> np.ndarray:
    """Inverse of :func:`encode_ids` (one 1-byte digit): index, or ZERO_FILL / UNTOUCHED / NAN_FILL / UNDECODABLE."""
    v = np.asarray(vals, np.int64)
    out = np.full(v.shape, UNDECODABLE, np.int64)
    if nb == 4:
        e = (v >> 23) & 0xFF
        ok = ((v >> 31) == 0) & (e >= 1) & (e < 255) & ((v & 0x1FFF) == 0)
        out[ok] = (((e[ok] - 1) << 10) | ((v[ok] >> 13) & 1023)) - 1
        out[((v >> 23) & 0xFF) == 0xFF] = NAN_FILL
    elif nb == 2:
        out = v - 1
        if nan_fill:
            out[(v >= 0x7C00) & (v != SENTINEL[2])] = NAN_FILL
    else:
        out = v - 1
    out[v == 0] = ZERO_FILL
    out[v == SENTINEL[nb]] = UNTOUCHED
    return out


def image_hash(image: np.ndarray) -> str:
    """sha256 of an image (int64 slot values), the recorded fingerprint of a measured placement."""
    return hashlib.sha256(np.ascontiguousarray(image, dtype="<i8").tobytes()).hexdigest()


# --- cases ---------------------------------------------------------------------------------------
def _pitch(nbytes: int, pad: int = 48) -> int:
    return -(-(nbytes + pad) // 16) * 16


def _raw_case(name: str, dt: str, swz: str, box: tuple, gdim: tuple, coords: list, *, estr=None,
              oob: str = "NONE", dst0: int = 0, base: int = 32, pad: int = 48) -> dict:
    nb = element_bytes(dt)
    strides = []
    acc = _pitch(gdim[0] * nb, pad)
    for d in gdim[1:]:
        strides.append(acc)
        acc = _pitch(acc * d, 16 * (len(strides) + 1))
    alloc_bytes = base + acc
    m = TensorMap(dt, gdim, tuple(strides), box, estr or (), swizzle=swz, l2_promotion="128B", oob_fill=oob)
    step = -(-(max(m.box_bytes, m.smem_footprint) + dst0) // 1024) * 1024
    loads = [(dst0 + k * step, tuple(c)) for k, c in enumerate(coords)]
    return {"name": name, "kind": "raw", "dtype": dt, "map": m, "loads": loads, "base": base,
            "alloc": alloc_bytes // nb + 1, "smem_bytes": step * len(coords)}


def placement_cases() -> list[dict]:
    """Raw tensor maps: swizzle NONE/32B/64B/128B x UINT8 / 16-bit / 32-bit types x box shapes, plus specials.

    Each case has two loads: one inside the tensor, one across its far corner (out of bounds in every
    dimension, so zero fill is exercised); global extents are not multiples of the box, rows are padded.
    """
    out: list[dict] = []
    types = {1: ("UINT8",), 2: ("FLOAT16", "BFLOAT16"), 4: ("FLOAT32", "TFLOAT32", "INT32")}
    for swz in ("NONE", "32B", "64B", "128B"):
        span = SWIZZLE_MODES[swz].span or 64
        for nb, names in types.items():
            dt = names[len(out) % len(names)]
            T = 16 // nb
            shapes = {
                f"row{span}": ((span // nb, 8), (3 * span // nb + T, 21)),
                f"half{span // 2}": ((max(16, span // 2) // nb, 5), (2 * span // nb + 3 * T, 13)),
                "row16": ((T, 3), (5 * T + T // 2 if nb < 4 else 5 * T + 1, 11)),
                "box3d": ((span // nb, 4, 3), (span // nb + T, 9, 5)),
                "tall": ((span // nb, 32), (2 * span // nb, 45)),
            }
            if swz == "NONE":
                shapes["row48"] = ((48 // nb, 6), (7 * 48 // nb // 2 + 1, 9))
                shapes["row256"] = ((256 // nb, 2), (256 // nb + 3 * T, 7))
            for sname, (box, gdim) in shapes.items():
                if gdim[0] * nb * math.prod(gdim[1:]) > (60000 if nb < 4 else 200000):
                    raise AssertionError(sname)
                # dimension 0 starts 16-byte aligned (cp.async.bulk.tensor faults otherwise: rule box_start_align)
                inside = [T if gdim[0] - box[0] >= T else 0] + [min(1, g - b) for b, g in zip(box[1:], gdim[1:])]
                corner = [(gdim[0] - box[0] // 2) // T * T] + [g - b // 2 for b, g in zip(box[1:], gdim[1:])]
                if sname == "tall":
                    corner = [-T * max(1, box[0] // (2 * T)), -5]  # negative coordinates: zero fill before the start
                out.append(_raw_case(f"p.{dt}.{swz}.{sname}", dt, swz, box, gdim, [inside, corner]))
    # element strides (traversal steps) on dimensions 1 and 2
    out.append(_raw_case("p.FLOAT16.128B.estride2", "FLOAT16", "128B", (64, 8), (100, 40), [[8, 1], [56, 33]], estr=(1, 2)))
    out.append(_raw_case("p.UINT8.64B.estride3", "UINT8", "64B", (64, 9, 4), (90, 30, 9), [[0, 0, 0], [48, 25, 6]], estr=(1, 3, 2)))
    # ranks 4 and 5
    out.append(_raw_case("p.FLOAT32.32B.rank4", "FLOAT32", "32B", (8, 3, 2, 2), (13, 5, 3, 3), [[0, 0, 0, 0], [8, 4, 2, 2]]))
    out.append(_raw_case("p.FLOAT16.NONE.rank5", "FLOAT16", "NONE", (8, 2, 2, 2, 2), (11, 3, 3, 3, 3), [[0, 0, 0, 0, 0], [8, 2, 2, 1, 2]]))
    # destinations inside the swizzle pattern (the TMA swizzles by absolute shared address)
    out.append(_raw_case("p.BFLOAT16.128B.dst384", "BFLOAT16", "128B", (64, 8), (80, 20), [[8, 2], [40, 17]], dst0=384))
    out.append(_raw_case("p.UINT8.64B.dst256", "UINT8", "64B", (64, 6), (99, 10), [[16, 1], [64, 7]], dst0=256))
    # NaN fill of out-of-bounds elements
    out.append(_raw_case("p.FLOAT16.64B.nanfill", "FLOAT16", "64B", (32, 8), (40, 12), [[0, 0], [16, 9]], oob="NAN_REQUEST_ZERO_FMA"))
    out.append(_raw_case("p.FLOAT32.NONE.nanfill", "FLOAT32", "NONE", (16, 4), (21, 6), [[0, 0], [8, 4]], oob="NAN_REQUEST_ZERO_FMA"))
    # global base not at the allocation start (a sliced view), 16 B aligned
    out.append(_raw_case("p.FLOAT16.32B.base80", "FLOAT16", "32B", (16, 7), (30, 15), [[8, 3], [24, 12]], base=80))
    return out


def fault_cases() -> list[dict]:
    """Loads at the edge of the rules, run last (a CUDA error ends the child process, the next one goes on).

    ``f.*``: dimension 0 starting off a 16-byte boundary (rule box_start_align): a CUDA error expected.
    ``q.*``: shared destinations 16 / 64 bytes aligned (rule smem_address_align asks 128): the outcome is
    recorded, whatever it is, and the library must agree with it.
    """
    out = [_raw_case("f.FLOAT16.NONE.c0_8B", "FLOAT16", "NONE", (16, 4), (40, 8), [[4, 0]]),
           _raw_case("f.UINT8.128B.c0_1B", "UINT8", "128B", (128, 4), (200, 8), [[1, 0]]),
           _raw_case("f.FLOAT32.64B.c0_neg4B", "FLOAT32", "64B", (16, 4), (40, 8), [[-1, 0]]),
           _raw_case("q.FLOAT16.NONE.dst16", "FLOAT16", "NONE", (16, 4), (40, 8), [[8, 1]], dst0=16),
           _raw_case("q.FLOAT16.128B.dst64", "FLOAT16", "128B", (64, 4), (80, 8), [[8, 1]], dst0=64)]
    for c in out:
        c["kind"] = "fault"
        c["expect_fault"] = c["name"].startswith("f.")
    return out


def sm100_cases() -> list[dict]:
    """The sm_100 swizzle modes (128B with 32B / 64B atomicity): only run if the driver accepts them here."""
    out = [_raw_case(f"p.FLOAT16.{s}.row128", "FLOAT16", s, (64, 8), (70, 12), [[0, 0], [40, 9]])
           for s in ("128B_ATOM_32B", "128B_ATOM_32B_FLIP_8B", "128B_ATOM_64B")]
    for c in out:
        c["target"] = "sm_100"
    return out


def layout_cases(lenient: bool = False) -> list[dict]:
    """Tensor maps and loads derived by make_tma_copy from shared layouts over strided, ragged global tensors.

    ``lenient``: a case the library refuses becomes ``{"name", "error"}`` instead of raising.
    """
    from ..layout import Layout
    from ..nvidia.wgmma import tile

    specs = [
        # (name, dtype, global (shape, stride), smem layout, tile origin)
        ("l.f16.K.sw128.64x128", "f16", ((100, 200), (208, 1)), tile("K", 128, "f16", (64, 128)), (48, 96)),
        ("l.bf16.MN.sw128.128x32", "bf16", ((150, 40), (1, 160)), tile("MN", 128, "bf16", (128, 32)), (64, 16)),
        ("l.bf16.K.sw64.64x64", "bf16", ((70, 90), (96, 1)), tile("K", 64, "bf16", (64, 64)), (32, 40)),
        ("l.f16.MN.sw32.64x32", "f16", ((72, 30), (1, 80)), tile("MN", 32, "f16", (64, 32)), (16, 8)),
        ("l.f16.K.inter.64x32", "f16", ((64, 40), (48, 1)), tile("K", 0, "f16", (64, 32)), (8, 16)),
        ("l.bf16.MN.inter.64x16", "bf16", ((66, 20), (1, 72)), tile("MN", 0, "bf16", (64, 16)), (8, 8)),
        ("l.tf32.K.sw128.64x32", "tf32", ((90, 50), (52, 1)), tile("K", 128, "tf32", (64, 32)), (40, 24)),
        ("l.tf32.K.sw32.64x16", "tf32", ((64, 20), (24, 1)), tile("K", 32, "tf32", (64, 16)), (0, 8)),
        ("l.e4m3.K.sw128.64x256", "e4m3", ((80, 300), (304, 1)), tile("K", 128, "e4m3", (64, 256)), (32, 128)),
        ("l.e4m3.K.sw64.128x64", "e4m3", ((140, 70), (80, 1)), tile("K", 64, "e4m3", (128, 64)), (64, 32)),
        ("l.f16.rowmajor.32x64", "f16", ((40, 70), (80, 1)), Layout((32, 64), (64, 1)), (16, 32)),
        ("l.f16.merged.4x64", "f16", ((30, 64), (64, 1)), Layout((4, 64), (64, 1)), (28, 0)),
        ("l.bf16.K.sw128.batch3d", "bf16", ((70, 64, 5), (64, 1, 70 * 64)), tile("K", 128, "bf16", (64, 64)), (32, 0, 4)),
        ("l.f32.colmajor.sw64.16x24", "f32", ((40, 30), (1, 48)), "Sw<2,2,3> o (16,24):(1,16)", (32, 10)),
    ]
    out = []
    for name, dt, (gs, gst), lay, origin in specs:
        try:
            out.append(_layout_case(name, dt, gs, gst, lay, origin))
        except Exception as e:  # noqa: BLE001
            if not lenient:
                raise
            out.append({"name": name, "error": f"{type(e).__name__}: {e}"})
    return out


def _layout_case(name: str, dt: str, gs: tuple, gst: tuple, lay: Any, origin: tuple) -> dict:
    from ..layout import Layout

    t = make_tma_copy(Layout(gs, gst), lay, dt, coalesce="merged" in name)
    nb = t.bytes_per_element
    coords = t.coordinates(origin)
    span = max(int(t.writes().max()) + nb, max(ld.smem_offset for ld in t.loads) + t.tensor_map.smem_footprint)
    extent = sum((g - 1) * s for g, s in zip(gs, gst)) + 1
    base = 64
    return {"name": name, "kind": "layout", "dtype": t.tensor_map.data_type, "map": t.tensor_map,
            "loads": [(ld.smem_offset, c) for ld, c in zip(t.loads, coords)], "base": base,
            "alloc": base // nb + extent + 8, "smem_bytes": -(-span // 1024) * 1024,
            "layout": str(lay), "global": [list(gs), list(gst)], "origin": list(origin), "copy": t}


def predict(case: dict) -> np.ndarray:
    """The library's image of a case: per shared slot (element of the case's type), the allocation element
    that lands there, ZERO_FILL / NAN_FILL for out-of-bounds fill, or UNTOUCHED."""
    m: TensorMap = case["map"]
    nb = m.bytes_per_element
    img = np.full(case["smem_bytes"] // nb, UNTOUCHED, np.int64)
    fill = NAN_FILL if m.oob_fill != "NONE" else ZERO_FILL
    for dst, coords in case["loads"]:
        p = m.placement(coords, dst, case.get("target", "sm_90"))
        val = np.where(p["in_bounds"], (case["base"] + p["gmem"]) // nb, fill)
        img[p["smem"] // nb] = val
    return img


def layout_image(case: dict) -> np.ndarray:
    """For a layout case: the image the shared layout itself prescribes (tile element -> its global element)."""
    t = case["copy"]
    nb = t.bytes_per_element
    gs, gst = case["global"]
    img = np.full(case["smem_bytes"] // nb, UNTOUCHED, np.int64)
    n = math.prod(t.tile_shape)
    x = (np.arange(n)[:, None] // np.cumprod((1,) + t.tile_shape[:-1])[None, :]) % np.asarray(t.tile_shape)[None, :]
    g = x + np.asarray(case["origin"])[None, :]
    inb = np.all((g >= 0) & (g < np.asarray(gs)[None, :]), axis=1)
    val = np.where(inb, case["base"] // nb + g @ np.asarray(gst), ZERO_FILL)
    img[t.expected() // nb] = val
    return img


def refusal_cases() -> list[dict]:
    """Tensor-map arguments each breaking one driver rule (``expect`` = that rule) and twins that break none.

    ``probe`` marks arguments the documentation does not decide; the driver's answer is recorded.
    """
    F, U8, F32 = "FLOAT16", "UINT8", "FLOAT32"
    base = dict(data_type=F, global_dim=(64, 32), global_strides=(128,), box_dim=(64, 8))
    c = []

    def add(name, expect, probe=False, address=0, **kw):
        args = {**base, **kw}
        c.append({"name": name, "expect": expect, "probe": probe, "address": address, "args": args})

    add("ok.base", None)
    add("rank.0", "rank", global_dim=(), global_strides=(), box_dim=(), element_strides=())
    add("rank.6", "rank", global_dim=(8,) * 6, global_strides=(16, 32, 64, 128, 256), box_dim=(8,) * 6, element_strides=(1,) * 6)
    add("ok.rank5", None, global_dim=(8,) * 5, global_strides=(16, 32, 64, 128), box_dim=(8,) * 5, element_strides=(1,) * 5)
    add("rank_interleave.2", "rank_interleave", interleave="16B", swizzle="NONE")
    add("ok.interleave16B.rank3", None, global_dim=(8, 32, 4), global_strides=(16, 512), box_dim=(8, 8, 2), interleave="16B")
    add("address.8", "global_address_align", address=8)
    add("ok.address.16", None, address=16)
    add("address.interleave32B.16", "global_address_align", address=16, global_dim=(16, 32, 4), global_strides=(32, 1024),
        box_dim=(16, 8, 2), interleave="32B", swizzle="32B")
    add("global_dim.0", "global_dim", global_dim=(0, 32))
    add("ok.global_dim.2^32", None, data_type=U8, global_dim=(1 << 32, 1), global_strides=(1 << 32,), box_dim=(64, 1))
    add("global_dim.2^32+1", "global_dim", data_type=U8, global_dim=((1 << 32) + 1, 1), global_strides=(1 << 33,), box_dim=(64, 1))
    add("stride.200", "global_stride_align", global_strides=(200,))
    add("ok.stride.208", None, global_strides=(208,))
    add("stride.2^40", "global_stride_max", global_strides=(1 << 40,))
    add("ok.stride.2^40-16", None, global_strides=((1 << 40) - 16,))
    add("stride.interleave32B.48", "global_stride_align", global_dim=(16, 32, 4), global_strides=(48, 1536),
        box_dim=(16, 8, 2), interleave="32B", swizzle="32B")
    add("box.0", "box_dim", box_dim=(64, 0))
    add("box.257", "box_dim", box_dim=(64, 257), global_dim=(64, 300))
    add("ok.box.256", None, box_dim=(64, 256), global_dim=(64, 300))
    add("box_inner.8B", "box_inner_bytes", box_dim=(4, 8))
    add("ok.box_inner.16B", None, box_dim=(8, 8))
    add("box_inner.24B.u8", "box_inner_bytes", data_type=U8, box_dim=(24, 8))
    add("span.32B.64", "box_inner_swizzle_span", box_dim=(32, 8), swizzle="32B")
    add("ok.span.32B.32", None, box_dim=(16, 8), swizzle="32B")
    add("span.64B.128", "box_inner_swizzle_span", box_dim=(64, 8), swizzle="64B")
    add("ok.span.64B.64", None, box_dim=(32, 8), swizzle="64B")
    add("span.128B.256", "box_inner_swizzle_span", data_type=F32, box_dim=(64, 8), swizzle="128B", global_strides=(256,))
    add("ok.span.128B.128", None, data_type=F32, box_dim=(32, 8), swizzle="128B", global_strides=(256,))
    add("estride.0", "element_strides", element_strides=(1, 0))
    add("estride.9", "element_strides", element_strides=(1, 9))
    add("ok.estride.8", None, element_strides=(1, 8))
    add("interleave32B.sw64", None, global_dim=(16, 32, 4), global_strides=(32, 1024),  # documented, not enforced
        box_dim=(16, 8, 2), interleave="32B", swizzle="64B")
    add("ok.interleave32B.sw32", None, global_dim=(16, 32, 4), global_strides=(32, 1024), box_dim=(16, 8, 2),
        interleave="32B", swizzle="32B")
    add("nanfill.u8", "oob_fill_float", data_type=U8, oob_fill="NAN_REQUEST_ZERO_FMA")
    add("ok.nanfill.f16", None, oob_fill="NAN_REQUEST_ZERO_FMA")
    add("dtype.99", "data_type", data_type=99)
    add("swizzle.99", "swizzle", swizzle=99)
    add("interleave.9", "interleave", interleave=9)
    add("l2.9", "l2_promotion", l2_promotion=9)
    add("oob.9", "oob_fill", oob_fill=9)
    # not decided by the documentation: recorded
    add("probe.estride0.2", None, probe=True, element_strides=(2, 1))
    add("probe.stride_overlap", None, probe=True, global_dim=(64, 32), global_strides=(64,))
    add("probe.stride_decreasing", None, probe=True, global_dim=(8, 4, 4), global_strides=(256, 16), box_dim=(8, 4, 4),
        element_strides=(1, 1, 1))
    add("probe.box_gt_global", None, probe=True, global_dim=(8, 4), global_strides=(16,), box_dim=(64, 8))
    add("probe.stride0", None, probe=True, global_strides=(0,))
    for s in ("128B_ATOM_32B", "128B_ATOM_32B_FLIP_8B", "128B_ATOM_64B"):
        add(f"sm100.{s}", "swizzle_target", swizzle=s)
    add("probe.interleave16B.sw128.inner256", None, probe=True, global_dim=(128, 32, 4), global_strides=(256, 8192),
        box_dim=(128, 8, 2), interleave="16B", swizzle="128B")
    return c


def refusal_map(case: dict) -> TensorMap:
    """The TensorMap of a refusal case (global_address = its address)."""
    a = dict(case["args"])
    n = len(a["global_dim"])
    a.setdefault("element_strides", (1,) * n)
    return TensorMap(global_address=case["address"], l2_promotion=a.pop("l2_promotion", "NONE"), **a)


# --- CuTe's make_tma_copy ------------------------------------------------------------------------
#: (name, CuTe element type, layoutalg dtype, global (shape, stride), smem layout expression, library layout)
_CUTE = [
    ("K.SW128.f16.64x64", "half_t", "f16", ((1000, 512), (512, 1)),
     "tile_to_shape(GMMA::Layout_K_SW128_Atom<half_t>{}, make_shape(_64{}, _64{}))", ("K", 128, (64, 64))),
    ("K.SW128.f16.128x128", "half_t", "f16", ((1000, 512), (512, 1)),
     "tile_to_shape(GMMA::Layout_K_SW128_Atom<half_t>{}, make_shape(_128{}, _128{}))", ("K", 128, (128, 128))),
    ("K.SW64.bf16.64x32", "bfloat16_t", "bf16", ((300, 96), (104, 1)),
     "tile_to_shape(GMMA::Layout_K_SW64_Atom<bfloat16_t>{}, make_shape(_64{}, _32{}))", ("K", 64, (64, 32))),
    ("K.SW32.f16.64x16", "half_t", "f16", ((256, 80), (80, 1)),
     "tile_to_shape(GMMA::Layout_K_SW32_Atom<half_t>{}, make_shape(_64{}, _16{}))", ("K", 32, (64, 16))),
    ("K.INTER.f16.64x64", "half_t", "f16", ((128, 128), (136, 1)),
     "tile_to_shape(GMMA::Layout_K_INTER_Atom<half_t>{}, make_shape(_64{}, _64{}))", ("K", 0, (64, 64))),
    ("MN.SW128.f16.128x64", "half_t", "f16", ((512, 256), (1, 520)),
     "tile_to_shape(GMMA::Layout_MN_SW128_Atom<half_t>{}, make_shape(_128{}, _64{}))", ("MN", 128, (128, 64))),
    ("MN.SW64.bf16.64x32", "bfloat16_t", "bf16", ((256, 64), (1, 256)),
     "tile_to_shape(GMMA::Layout_MN_SW64_Atom<bfloat16_t>{}, make_shape(_64{}, _32{}))", ("MN", 64, (64, 32))),
    ("MN.SW32.f16.64x16", "half_t", "f16", ((64, 48), (1, 72)),
     "tile_to_shape(GMMA::Layout_MN_SW32_Atom<half_t>{}, make_shape(_64{}, _16{}))", ("MN", 32, (64, 16))),
    ("MN.INTER.bf16.64x16", "bfloat16_t", "bf16", ((200, 32), (1, 208)),
     "tile_to_shape(GMMA::Layout_MN_INTER_Atom<bfloat16_t>{}, make_shape(_64{}, _16{}))", ("MN", 0, (64, 16))),
    ("K.SW128.tf32.64x32", "tfloat32_t", "tf32", ((128, 64), (64, 1)),
     "tile_to_shape(GMMA::Layout_K_SW128_Atom<tfloat32_t>{}, make_shape(_64{}, _32{}))", ("K", 128, (64, 32))),
    ("K.SW128.e4m3.64x128", "float_e4m3_t", "e4m3", ((128, 384), (384, 1)),
     "tile_to_shape(GMMA::Layout_K_SW128_Atom<float_e4m3_t>{}, make_shape(_64{}, _128{}))", ("K", 128, (64, 128))),
    ("K.SW128.int8.128x128", "int8_t", "s8", ((256, 256), (256, 1)),
     "tile_to_shape(GMMA::Layout_K_SW128_Atom<int8_t>{}, make_shape(_128{}, _128{}))", ("K", 128, (128, 128))),
    ("rowmajor.f16.32x64", "half_t", "f16", ((100, 64), (64, 1)),
     "make_layout(make_shape(_32{}, _64{}), make_stride(_64{}, _1{}))", "(32,64):(64,1)"),
    ("rows.f16.4x64", "half_t", "f16", ((100, 64), (64, 1)),
     "make_layout(make_shape(_4{}, _64{}), make_stride(_64{}, _1{}))", "(4,64):(64,1)"),
    ("merged.static.f16.4x64", "half_t", "f16", ((100, 64), ("_64", 1)),
     "make_layout(make_shape(_4{}, _64{}), make_stride(_64{}, _1{}))", "(4,64):(64,1)"),
    ("colmajor.f32.32x8", "float", "f32", ((100, 40), (1, 104)),
     "make_layout(make_shape(_32{}, _8{}), make_stride(_1{}, _32{}))", "(32,8):(1,32)"),
    ("K.SW128.bf16.batch3d", "bfloat16_t", "bf16", ((300, 64, 7), (64, 1, 19200)),
     "tile_to_shape(GMMA::Layout_K_SW128_Atom<bfloat16_t>{}, make_shape(_64{}, _64{}))", ("K", 128, (64, 64))),
]


def cute_cases() -> list[dict]:
    """The shared layouts given to CuTe's make_tma_copy, with the same tile as a library layout."""
    out = []
    for name, ctype, dt, (gs, gst), expr, lib in _CUTE:
        static = any(isinstance(s, str) for s in gst)
        gst = tuple(int(str(s).strip("_")) for s in gst)
        out.append({"name": name, "ctype": ctype, "dtype": dt, "global": [list(gs), list(gst)], "cute_layout": expr,
                    "library_layout": lib if isinstance(lib, str) else list(lib), "static_strides": static})
    return out


def _library_layout(case: dict) -> Any:
    from ..nvidia.wgmma import tile

    lib = case["library_layout"]
    if isinstance(lib, str):
        return lib
    major, sw, shape = lib
    return tile(major, sw, case["dtype"], tuple(shape))


def library_cute_args(case: dict) -> dict:
    """The library's cuTensorMapEncodeTiled arguments for a CuTe case, in the shim's print format."""
    from ..layout import Layout

    gs, gst = case["global"]
    t = make_tma_copy(Layout(tuple(gs), tuple(gst)), _library_layout(case), case["dtype"], coalesce=case["static_strides"])
    a = t.tensor_map.driver_args()
    return {"dtype": a["tensorDataType"], "rank": a["tensorRank"], "global_dim": a["globalDim"],
            "global_strides": a["globalStrides"], "box_dim": a["boxDim"], "element_strides": a["elementStrides"],
            "interleave": a["interleave"], "swizzle": a["swizzle"], "l2": a["l2Promotion"], "oob": a["oobFill"]}


_SHIM = r"""
#define CUTLASS_ENABLE_DIRECT_CUDA_DRIVER_CALL 1
#ifndef __CUDACC_VER_MAJOR__
#define __CUDACC_VER_MAJOR__ 12
#define __CUDACC_VER_MINOR__ 8
#endif
#include <cuda.h>
#include <cstdio>
#ifdef LAYOUTALG_REAL_DRIVER
#include <dlfcn.h>
typedef CUresult (*layoutalg_encode_t)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
    const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,
    CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
#endif
// The shim CuTe calls in place of the driver: print the arguments CuTe chose (and, with the real
// driver, encode them and print the result and the 128 bytes).
extern "C" CUresult cuTensorMapEncodeTiled(CUtensorMap* tm, CUtensorMapDataType dt, cuuint32_t rank, void* addr,
    const cuuint64_t* gdim, const cuuint64_t* gstr, const cuuint32_t* box, const cuuint32_t* es,
    CUtensorMapInterleave il, CUtensorMapSwizzle sw, CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill oob) {
  std::printf("{\"dtype\":%d,\"rank\":%u,\"address\":%llu,\"global_dim\":[", (int)dt, rank, (unsigned long long)addr);
  for (unsigned i = 0; i < rank; ++i) std::printf("%s%llu", i ? "," : "", (unsigned long long)gdim[i]);
  std::printf("],\"global_strides\":[");
  for (unsigned i = 0; i + 1 < rank; ++i) std::printf("%s%llu", i ? "," : "", (unsigned long long)gstr[i]);
  std::printf("],\"box_dim\":[");
  for (unsigned i = 0; i < rank; ++i) std::printf("%s%u", i ? "," : "", box[i]);
  std::printf("],\"element_strides\":[");
  for (unsigned i = 0; i < rank; ++i) std::printf("%s%u", i ? "," : "", es[i]);
  std::printf("],\"interleave\":%d,\"swizzle\":%d,\"l2\":%d,\"oob\":%d", (int)il, (int)sw, (int)l2, (int)oob);
  CUresult r = CUDA_SUCCESS;
#ifdef LAYOUTALG_REAL_DRIVER
  static void* lib = dlopen("libcuda.so.1", RTLD_NOW);
  layoutalg_encode_t real = lib ? (layoutalg_encode_t)dlsym(lib, "cuTensorMapEncodeTiled") : nullptr;
  if (real) {
    typedef CUresult (*init_t)(unsigned);
    typedef CUresult (*devget_t)(CUdevice*, int);
    typedef CUresult (*retain_t)(CUcontext*, CUdevice);
    typedef CUresult (*setcur_t)(CUcontext);
    static bool inited = false;
    if (!inited) {  // the encode needs a current context (CUDA_ERROR_INVALID_CONTEXT otherwise)
      CUdevice dev = 0; CUcontext ctx = nullptr;
      ((init_t)dlsym(lib, "cuInit"))(0);
      ((devget_t)dlsym(lib, "cuDeviceGet"))(&dev, 0);
      ((retain_t)dlsym(lib, "cuDevicePrimaryCtxRetain"))(&ctx, dev);
      ((setcur_t)dlsym(lib, "cuCtxSetCurrent"))(ctx);
      inited = true;
    }
    r = real(tm, dt, rank, addr, gdim, gstr, box, es, il, sw, l2, oob);
    std::printf(",\"result\":%d,\"bytes\":\"", (int)r);
    const unsigned char* p = reinterpret_cast<const unsigned char*>(tm);
    for (int i = 0; i < 128; ++i) std::printf("%02x", p[i]);
    std::printf("\"");
  } else {
    std::printf(",\"result\":-1");
  }
#endif
  std::printf("}\n");
  return r;
}
"""

_CUTE_INCLUDES = """
#include <cute/tensor.hpp>
#include <cute/atom/copy_traits_sm90_tma.hpp>
#include <cute/atom/mma_traits_sm90_gmma.hpp>
"""


def cute_snippet(case: dict) -> str:
    """The body of one C++ function that calls CuTe's make_tma_copy for a case (``using namespace cute``)."""
    gs, gst = case["global"]
    shape = ", ".join(str(s) for s in gs)
    stride = ", ".join("_1{}" if s == 1 else (f"_{s}{{}}" if case["static_strides"] else str(s)) for s in gst)
    ct = case["ctype"]
    return (f"  alignas(128) static {ct} buf[{sum((g - 1) * s for g, s in zip(gs, gst)) + 1}];\n"
            f"  auto g = make_tensor(make_gmem_ptr(buf), make_layout(make_shape({shape}), make_stride({stride})));\n"
            f"  auto sl = {case['cute_layout']};\n"
            f"  auto tma = make_tma_copy(SM90_TMA_LOAD{{}}, g, sl);\n"
            f"  (void)tma;\n")


def cute_program(cases: list[dict]) -> str:
    """A whole C++ program (shim + one function per case + main printing ``@@case name`` markers)."""
    parts = [_SHIM, _CUTE_INCLUDES, "using namespace cute;"]
    for k, c in enumerate(cases):
        parts.append(f"static void case_{k}() {{\n{cute_snippet(c)}}}")
    parts.append("int main() {")
    for k, c in enumerate(cases):
        parts.append(f'  std::printf("@@case {c["name"]}\\n"); case_{k}();')
    parts.append("  return 0;\n}")
    return "\n".join(parts) + "\n"


def parse_cute_output(text: str) -> dict[str, list[dict]]:
    """{case name: [the shim's JSON line per make_tma_copy call]} from the program's output."""
    out: dict[str, list[dict]] = {}
    cur = None
    for line in text.splitlines():
        if line.startswith("@@case "):
            cur = line[7:].strip()
            out[cur] = []
        elif line.startswith("{") and cur is not None:
            out[cur].append(json.loads(line))
    return out


def run_cute_cpu(cases: list[dict] | None = None) -> dict[str, dict]:
    """CuTe's arguments on this CPU through :mod:`layoutalg.interop.cutecpp` (g++; no driver): {name: args}."""
    from ..interop import cutecpp

    cases = cases or cute_cases()
    # the runner builds with -fno-exceptions; CuTe's TMA header throws in a branch no case reaches
    prelude = _SHIM + "#define throw (void)\n" + _CUTE_INCLUDES + "#undef throw\n"
    res = cutecpp.run_snippets([cute_snippet(c) for c in cases], headers=("cute/int_tuple.hpp",), prelude=prelude,
                               chunk=max(1, -(-len(cases) // 2)))
    out = {}
    for c, r in zip(cases, res):
        if not r:
            out[c["name"]] = {"error": getattr(r, "message", "compile failure")}
            continue
        lines = [json.loads(x) for x in str(r).splitlines() if x.startswith("{")]
        out[c["name"]] = lines[0] if len(lines) == 1 else {"error": f"{len(lines)} encode calls"}
    return out


_CUTE_FIELDS = ("dtype", "rank", "global_dim", "global_strides", "box_dim", "element_strides", "interleave", "swizzle",
                "l2", "oob")


def compare_cute(cute_args: dict, lib_args: dict) -> list[str]:
    """Fields where CuTe's arguments and the library's differ (empty: equal)."""
    return [f"{k}: CuTe {cute_args.get(k)} vs library {lib_args.get(k)}" for k in _CUTE_FIELDS if cute_args.get(k) != lib_args.get(k)]


# --- end to end: TMA -> wgmma --------------------------------------------------------------------
_E2E_BYTES = {"f16": 2, "bf16": 2, "tf32": 4, "e4m3": 1}


def e2e_modes() -> list[dict]:
    """TMA-loaded operand tiles (64 x KT, KT = 256 bytes of K) read by wgmma m64n64: majorness x swizzle x type.

    The global operands are bigger than the tile, row-padded, and the tile origin is chosen so that the
    last rows of A and the last K columns of B are out of bounds (zero filled): D must equal the product
    of the zero-extended tiles.
    """
    out = []
    for dt, major, sw in (("bf16", "K", 128), ("f16", "MN", 128), ("f16", "K", 64), ("bf16", "MN", 32),
                          ("tf32", "K", 128), ("e4m3", "K", 128), ("f16", "K", 0), ("bf16", "MN", 64)):
        nb = _E2E_BYTES[dt]
        out.append({"name": f"{dt}.{major}.sw{sw}", "dtype": dt, "major": major, "swizzle": sw, "KT": 256 // nb,
                    "K": 32 // nb, "N": 64})
    return out


#: name -> (mode, how the wgmma operand differs from what the tensor maps write)
E2E_NEGATIVES = {
    "map128.desc64": ("bf16.K.sw128", {"desc_swizzle": 64}),
    "mapMN128.desc32": ("f16.MN.sw128", {"desc_swizzle": 32}),
    "map64.desc128": ("f16.K.sw64", {"desc_swizzle": 128}),
}


def _e2e_operands(m: dict, seed: int = 0, desc_swizzle: int | None = None) -> dict:
    """Global operands, their tensor maps / loads / tile origins, the wgmma descriptors and the reference D."""
    from ..gpu import encode as enc
    from ..layout import Layout
    from ..nvidia.wgmma import k_block_descriptors, tile

    dt, major, KT = m["dtype"], m["major"], m["KT"]
    nb = _E2E_BYTES[dt]
    rng = np.random.default_rng(seed)
    hi = 2
    res: dict = {}
    tiles = {}
    for op, rows in (("A", 64), ("B", m["N"])):
        t = tile(major, m["swizzle"], dt, (rows, KT))
        Rg, Kg = rows + 24, KT + KT // 2           # global extents (the tile's origin makes part of it OOB)
        org = (Rg - rows + 8, 0) if op == "A" else (8, Kg - KT + KT // 4)
        X = rng.integers(-hi, hi + 1, (Rg, Kg)).astype(np.float64)
        if major == "K":
            pitch = -(-(Kg * nb + 32) // 16) * 16 // nb
            gl = Layout((Rg, Kg), (pitch, 1))
            alloc = Rg * pitch
        else:
            pitch = -(-(Rg * nb + 32) // 16) * 16 // nb
            gl = Layout((Rg, Kg), (1, pitch))
            alloc = Kg * pitch
        buf = np.zeros(alloc, np.uint64)
        rr, kk = np.meshgrid(np.arange(Rg), np.arange(Kg), indexing="ij")
        buf[gl(rr, kk).ravel()] = enc.encode(X.ravel(), dt)
        copy = make_tma_copy(gl, t, dt)
        Xt = np.zeros((rows, KT))
        r0, k0 = org
        rs, ks = slice(r0, min(Rg, r0 + rows)), slice(k0, min(Kg, k0 + KT))
        Xt[: rs.stop - r0, : ks.stop - k0] = X[rs, ks]
        dlay = t if desc_swizzle is None else tile(major, desc_swizzle, dt, (rows, KT))
        instr = f"m64n{m['N']}k{m['K']}"
        kbs = k_block_descriptors(dlay, dt, instr, operand=op, major=major)
        res[op] = {"buf": buf, "copy": copy, "origin": org, "coords": copy.coordinates(org), "tile": Xt,
                   "words": [kb.descriptor.encode() for kb in kbs], "desc_layout": dlay}
        tiles[op] = Xt
    res["D"] = tiles["A"] @ tiles["B"].T
    res["check"] = {op: check_wgmma(res[op]["copy"], [int(w) for w in res[op]["words"]], operand_name=op,
                                    major=major, instruction=f"m64n{m['N']}k{m['K']}") for op in ("A", "B")}
    return res


def kernel_source() -> str:
    """CUDA C of the TMA placement kernel and the TMA -> wgmma kernels (sm_90a)."""
    parts = [r"""
#include <cstdint>
struct alignas(64) TmaDesc { unsigned long long w[16]; };

__device__ __forceinline__ void tma_load(unsigned dst, const TmaDesc* map, const int* c, int rank, unsigned bar) {
  unsigned long long m = reinterpret_cast<unsigned long long>(map);
  switch (rank) {
  case 1: asm volatile("cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2}], [%3];"
            :: "r"(dst), "l"(m), "r"(c[0]), "r"(bar) : "memory"); break;
  case 2: asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
            :: "r"(dst), "l"(m), "r"(c[0]), "r"(c[1]), "r"(bar) : "memory"); break;
  case 3: asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];"
            :: "r"(dst), "l"(m), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(bar) : "memory"); break;
  case 4: asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
            " [%0], [%1, {%2, %3, %4, %5}], [%6];"
            :: "r"(dst), "l"(m), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(bar) : "memory"); break;
  default: asm volatile("cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
            " [%0], [%1, {%2, %3, %4, %5, %6}], [%7];"
            :: "r"(dst), "l"(m), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4]), "r"(bar) : "memory"); break;
  }
}

__device__ __forceinline__ void bar_init(unsigned bar) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(bar) : "memory");
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

__device__ __forceinline__ void bar_expect(unsigned bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(bar), "r"(bytes) : "memory");
}

// Wait for phase 0 of the mbarrier; give up after ~4e9 cycles (a transaction count that never
// completes would hang the GPU): returns 1 on time-out.
__device__ __forceinline__ int bar_wait(unsigned bar) {
  long long t0 = clock64();
  while (true) {
    unsigned ok;
    asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0;\nselp.u32 %0, 1, 0, p;\n}\n"
                 : "=r"(ok) : "r"(bar) : "memory");
    if (ok) return 0;
    if (clock64() - t0 > 4000000000LL) return 1;
  }
}

// One CTA: fill shared memory with the sentinel, issue the loads, wait, copy shared memory out.
extern "C" __global__ void __launch_bounds__(128) tma_place(const __grid_constant__ TmaDesc map,
    const int* coords, const unsigned* dst, int nloads, int rank, unsigned box_bytes, unsigned smem_bytes,
    unsigned sentinel, unsigned* out, unsigned* info) {
  extern __shared__ __align__(1024) unsigned char dyn[];
  __shared__ __align__(8) unsigned long long mbar;
  unsigned base = (unsigned)__cvta_generic_to_shared(dyn);
  unsigned pad = (1024u - (base & 1023u)) & 1023u;
  unsigned* sw = reinterpret_cast<unsigned*>(dyn + pad);
  for (unsigned i = threadIdx.x; i < smem_bytes / 4; i += blockDim.x) sw[i] = sentinel;
  unsigned bar = (unsigned)__cvta_generic_to_shared(&mbar);
  if (threadIdx.x == 0) bar_init(bar);
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  if (threadIdx.x == 0) {
    bar_expect(bar, box_bytes * nloads);
    for (int l = 0; l < nloads; ++l) tma_load(base + pad + dst[l], &map, coords + 5 * l, rank, bar);
  }
  int late = bar_wait(bar);
  __syncthreads();
  for (unsigned i = threadIdx.x; i < smem_bytes / 4; i += blockDim.x) out[i] = sw[i];
  if (threadIdx.x == 0) { info[0] = base + pad; info[1] = late; }
}
"""]
    done = set()
    for m in e2e_modes():
        key = f"{m['dtype']}_{m['major']}"
        if key in done:
            continue
        done.add(key)
        nreg = m["N"] // 2
        loop = wgmma_mainloop(m["N"], m["K"], m["dtype"], m["major"], m["major"],
                              "da[s] + (sA >> 4)", "db[s] + (sB >> 4)")
        parts.append(f"""
extern "C" __global__ void __launch_bounds__(128) tma_wgmma_{key}(
    const __grid_constant__ TmaDesc mapA, const __grid_constant__ TmaDesc mapB,
    const int* cA, const unsigned* dA, int nA, int rankA, unsigned boxA,
    const int* cB, const unsigned* dB, int nB, int rankB, unsigned boxB, unsigned b_off,
    const unsigned long long* da, const unsigned long long* db, int nk, float* out, unsigned* info) {{
  extern __shared__ __align__(1024) unsigned char dyn[];
  __shared__ __align__(8) unsigned long long mbar;
  unsigned base = (unsigned)__cvta_generic_to_shared(dyn);
  unsigned pad = (1024u - (base & 1023u)) & 1023u;
  unsigned sA = base + pad, sB = base + pad + b_off;
  unsigned bar = (unsigned)__cvta_generic_to_shared(&mbar);
  int tid = threadIdx.x;
  if (tid == 0) bar_init(bar);
  __syncthreads();
  if (tid == 0) {{
    bar_expect(bar, boxA * nA + boxB * nB);
    for (int l = 0; l < nA; ++l) tma_load(sA + dA[l], &mapA, cA + 5 * l, rankA, bar);
    for (int l = 0; l < nB; ++l) tma_load(sB + dB[l], &mapB, cB + 5 * l, rankB, bar);
  }}
  int late = bar_wait(bar);
  __syncthreads();
  if (tid == 0) {{ info[0] = sA; info[1] = sB; info[2] = late; }}
{loop}
  #pragma unroll
  for (int j = 0; j < {nreg}; ++j) out[tid * {nreg} + j] = d[j];
}}
""")
    return "\n".join(parts)


# --- the driver, through ctypes ------------------------------------------------------------------
class Driver:
    """The few CUDA driver calls the harness needs (libcuda.so.1 via ctypes; one primary context)."""

    def __init__(self) -> None:
        self.lib = ctypes.CDLL("libcuda.so.1")
        self._check(self.lib.cuInit(0), "cuInit")
        dev = ctypes.c_int()
        self._check(self.lib.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
        self.ctx = ctypes.c_void_p()
        self._check(self.lib.cuDevicePrimaryCtxRetain(ctypes.byref(self.ctx), dev), "cuDevicePrimaryCtxRetain")
        self._check(self.lib.cuCtxSetCurrent(self.ctx), "cuCtxSetCurrent")
        self.modules: dict = {}
        ver = ctypes.c_int()
        self.lib.cuDriverGetVersion(ctypes.byref(ver))
        self.version = ver.value

    def error_name(self, code: int) -> str:
        p = ctypes.c_char_p()
        self.lib.cuGetErrorName(int(code), ctypes.byref(p))
        return (p.value or b"?").decode()

    def _check(self, r: int, what: str) -> None:
        if r:
            raise RuntimeError(f"{what} failed: CUresult {r} ({self.error_name(r) if hasattr(self, 'lib') else ''})")

    def encode_tiled(self, args: dict) -> tuple[int, bytes]:
        """cuTensorMapEncodeTiled(args) -> (CUresult, the 128 bytes)."""
        buf = (ctypes.c_uint8 * 192)()
        addr = ctypes.addressof(buf)
        off = (-addr) % 64
        tm = ctypes.c_void_p(addr + off)
        n = args["tensorRank"]
        gdim = (ctypes.c_uint64 * max(n, 1))(*args["globalDim"])
        gstr = (ctypes.c_uint64 * max(n, 1))(*args["globalStrides"])
        box = (ctypes.c_uint32 * max(n, 1))(*args["boxDim"])
        es = (ctypes.c_uint32 * max(n, 1))(*args["elementStrides"])
        f = self.lib.cuTensorMapEncodeTiled
        f.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                      ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int]
        r = f(tm, args["tensorDataType"], n, ctypes.c_void_p(args["globalAddress"]), gdim, gstr, box, es,
              args["interleave"], args["swizzle"], args["l2Promotion"], args["oobFill"])
        return int(r), bytes(buf[off:off + 128])

    def alloc(self, nbytes: int) -> int:
        p = ctypes.c_uint64()
        self._check(self.lib.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(max(nbytes, 16))), "cuMemAlloc")
        return p.value

    def free(self, p: int) -> None:
        self.lib.cuMemFree_v2(ctypes.c_uint64(p))

    def htod(self, p: int, data: bytes) -> None:
        self._check(self.lib.cuMemcpyHtoD_v2(ctypes.c_uint64(p), ctypes.c_char_p(data), ctypes.c_size_t(len(data))), "cuMemcpyHtoD")

    def dtoh(self, p: int, nbytes: int) -> bytes:
        buf = ctypes.create_string_buffer(nbytes)
        self._check(self.lib.cuMemcpyDtoH_v2(buf, ctypes.c_uint64(p), ctypes.c_size_t(nbytes)), "cuMemcpyDtoH")
        return buf.raw

    def function(self, cubin: str, name: str) -> ctypes.c_void_p:
        if cubin not in self.modules:
            mod = ctypes.c_void_p()
            self._check(self.lib.cuModuleLoad(ctypes.byref(mod), cubin.encode()), "cuModuleLoad")
            self.modules[cubin] = mod
        fn = ctypes.c_void_p()
        self._check(self.lib.cuModuleGetFunction(ctypes.byref(fn), self.modules[cubin], name.encode()), "cuModuleGetFunction")
        self._check(self.lib.cuFuncSetAttribute(fn, 8, 200 * 1024), "cuFuncSetAttribute")  # max dynamic smem
        return fn

    def launch(self, fn: ctypes.c_void_p, args: list, smem: int) -> None:
        """args: list of ctypes values (a 128-byte map is a ctypes array); one CTA of 128 threads."""
        holders = [(ctypes.c_void_p * 1)(ctypes.addressof(a)) for a in args]
        params = (ctypes.c_void_p * len(args))(*[h[0] for h in holders])
        self._check(self.lib.cuLaunchKernel(fn, 1, 1, 1, 128, 1, 1, smem, None, params, None), "cuLaunchKernel")
        self._check(self.lib.cuCtxSynchronize(), "cuCtxSynchronize (kernel)")


def _map_arg(blob: bytes) -> ctypes.Array:
    a = (ctypes.c_uint8 * 128)()
    ctypes.memmove(a, blob, 128)
    return a


def _bindings_encode(args: dict) -> tuple[int, bytes] | None:
    """The same encode through cuda.bindings, if importable (a cross-check of the ctypes path)."""
    try:
        from cuda.bindings import driver as cbd
    except Exception:  # noqa: BLE001
        return None
    try:
        u64, u32 = cbd.cuuint64_t, cbd.cuuint32_t
        r, tm = cbd.cuTensorMapEncodeTiled(
            cbd.CUtensorMapDataType(args["tensorDataType"]), args["tensorRank"], args["globalAddress"],
            [u64(x) for x in args["globalDim"]], [u64(x) for x in args["globalStrides"]], [u32(x) for x in args["boxDim"]],
            [u32(x) for x in args["elementStrides"]], cbd.CUtensorMapInterleave(args["interleave"]),
            cbd.CUtensorMapSwizzle(args["swizzle"]), cbd.CUtensorMapL2promotion(args["l2Promotion"]),
            cbd.CUtensorMapFloatOOBfill(args["oobFill"]))
        raw = b""
        if int(r) == 0:
            op = tm.opaque
            raw = np.array([int(x) for x in op], dtype=np.uint64).tobytes() if not isinstance(op, (bytes, bytearray)) else bytes(op)
        return int(r), raw
    except Exception as e:  # noqa: BLE001 - an enum the bindings refuse to build, say
        return -1, repr(e).encode()[:200]


# --- running ------------------------------------------------------------------------------------
def _run_placement(drv: Driver, cubin: str, case: dict) -> dict:
    m: TensorMap = case["map"]
    nb = m.bytes_per_element
    rec: dict = {"name": case["name"], "kind": case["kind"], "map": m.driver_args(), "base": case["base"],
                 "loads": [[int(d), [int(x) for x in c]] for d, c in case["loads"]], "smem_bytes": case["smem_bytes"]}
    for k in ("layout", "global", "origin"):
        if k in case:
            rec[k] = case[k]
    passes = 2 if nb == 1 else 1
    images = []
    fn = drv.function(cubin, "tma_place")
    gbytes = case["alloc"] * nb
    gp = drv.alloc(gbytes + 64)
    out = drv.alloc(case["smem_bytes"])
    info = drv.alloc(16)
    coords = np.zeros((len(case["loads"]), 5), np.int32)
    for i, (_, c) in enumerate(case["loads"]):
        coords[i, : len(c)] = c
    dsts = np.array([d for d, _ in case["loads"]], np.uint32)
    cp, dp = drv.alloc(coords.nbytes), drv.alloc(dsts.nbytes)
    drv.htod(cp, coords.tobytes())
    drv.htod(dp, dsts.tobytes())
    try:
        args = m.driver_args(gp + case["base"])
        r, blob = drv.encode_tiled(args)
        rec["encode_result"] = r
        if r:
            rec.update(status="error", error=f"driver refused the map: {drv.error_name(r)}")
            return rec
        for p in range(passes):
            ids = encode_ids(case["alloc"], nb, p)
            raw = ids.astype({1: np.uint8, 2: np.uint16, 4: np.uint32}[nb]).tobytes()
            drv.htod(gp, raw)
            sent = {1: 0xFFFFFFFF, 2: 0xFFFFFFFF, 4: SENTINEL[4]}[nb]
            drv.launch(fn, [_map_arg(blob), ctypes.c_uint64(cp), ctypes.c_uint64(dp), ctypes.c_int(len(dsts)),
                            ctypes.c_int(m.rank), ctypes.c_uint32(m.box_bytes), ctypes.c_uint32(case["smem_bytes"]),
                            ctypes.c_uint32(sent), ctypes.c_uint64(out), ctypes.c_uint64(info)],
                       case["smem_bytes"] + 1024)
            got = np.frombuffer(drv.dtoh(out, case["smem_bytes"]), {1: np.uint8, 2: np.uint16, 4: np.uint32}[nb])
            images.append(got.astype(np.int64))
        inf = np.frombuffer(drv.dtoh(info, 8), np.uint32)
        rec["smem_base"] = int(inf[0])
        if inf[1]:
            rec.update(status="error", error="mbarrier wait timed out: the transaction count never completed")
            return rec
    finally:
        for ptr in (gp, out, info, cp, dp):
            drv.free(ptr)
    if nb == 1:
        d0 = decode_ids(images[0], 1)
        d1 = decode_ids(images[1], 1)
        meas = np.where(d0 >= 0, d0 + 254 * np.maximum(d1, 0), d0)
        meas = np.where((d0 >= 0) & (d1 < 0), UNDECODABLE, meas)
    else:
        meas = decode_ids(images[0], nb, nan_fill=m.oob_fill != "NONE")
    rec["measured_sha256"] = image_hash(meas)
    try:
        pred = predict(case)
    except Exception as e:  # noqa: BLE001 - the library refuses a load the hardware ran: record both
        rec.update(status="refused", library_refusal=str(e), measured_elements=int((meas >= 0).sum()))
        return rec
    bad = np.nonzero(meas != pred)[0]
    rec["counts"] = {"slots": int(len(meas)), "elements": int((meas >= 0).sum()), "zero_fill": int((meas == ZERO_FILL).sum()),
                     "nan_fill": int((meas == NAN_FILL).sum()), "untouched": int((meas == UNTOUCHED).sum()),
                     "undecodable": int((meas == UNDECODABLE).sum())}
    if m.oob_fill != "NONE" and (meas == NAN_FILL).any():
        rec["nan_fill_bits"] = sorted({hex(int(v)) for v in images[0][meas == NAN_FILL]})[:4]
    rec["mismatches"] = int(len(bad))
    rec["first_mismatches"] = [{"slot": int(i), "hardware": int(meas[i]), "library": int(pred[i])} for i in bad[:6]]
    rec["sample"] = {str(int(i)): int(meas[i]) for i in np.linspace(0, len(meas) - 1, 24).astype(int)}
    if case["kind"] == "layout":
        li = layout_image(case)
        rec["layout_mismatches"] = int((li != meas).sum())
    rec["status"] = "pass" if not len(bad) and rec.get("layout_mismatches", 0) == 0 else "fail"
    return rec


def _run_refusals(drv: Driver) -> dict:
    out = {}
    for c in refusal_cases():
        m = refusal_map(c)
        a = m.driver_args()
        r, blob = drv.encode_tiled(a)
        rules = sorted({v.rule for v in m.violations()})
        rec = {"args": a, "expect": c["expect"], "probe": c["probe"], "driver_result": r, "driver_error": drv.error_name(r),
               "library_rules": rules, "agree": (r != 0) == bool(rules)}
        b = _bindings_encode(a)
        if b is not None:
            rec["bindings_result"] = b[0]
            rec["bindings_same_bytes"] = (b[1] == blob) if b[0] == 0 and r == 0 else None
            if b[0] == -1:
                rec["bindings_error"] = b[1].decode(errors="replace")
        out[c["name"]] = rec
    return out


def _run_cute_gpu(drv: Driver, workdir: str, include: str | None) -> dict:
    drv.lib.cuCtxSetCurrent(drv.ctx)  # this runs in its own thread: make the context current here too
    cases = cute_cases()
    src = os.path.join(workdir, "cute_tma.cu")
    exe = os.path.join(workdir, "cute_tma")
    with open(src, "w") as fh:
        fh.write("#define LAYOUTALG_REAL_DRIVER 1\n" + cute_program(cases))
    inc = [f"-I{include}"] if include else []
    cmd = ["nvcc", "-std=c++17", "-O0", "-w", *inc, src, "-o", exe, "-ldl"]
    t0 = time.time()
    p = subprocess.run(cmd, capture_output=True, text=True)
    res: dict = {"compiler": " ".join(cmd[:4]), "compile_seconds": time.time() - t0}
    if p.returncode:
        res["error"] = f"nvcc failed: {p.stderr[-2000:]}"
        return res
    q = subprocess.run([exe], capture_output=True, text=True, timeout=300)
    parsed = parse_cute_output(q.stdout)
    res["cases"] = {}
    for c in cases:
        calls = parsed.get(c["name"], [])
        rec: dict = {"global": c["global"], "cute_layout": c["cute_layout"], "library_layout": c["library_layout"],
                     "dtype": c["dtype"]}
        if len(calls) != 1:
            rec.update(status="error", error=f"{len(calls)} encode calls; stderr {q.stderr[-300:]}")
            res["cases"][c["name"]] = rec
            continue
        cute = calls[0]
        rec["cute"] = {k: cute[k] for k in _CUTE_FIELDS}
        rec["cute_result"] = cute.get("result")
        try:
            lib = library_cute_args(c)
            rec["library"] = lib
            rec["differences"] = compare_cute(cute, lib)
            from ..layout import Layout

            gs, gst = c["global"]
            t = make_tma_copy(Layout(tuple(gs), tuple(gst)), _library_layout(c), c["dtype"], coalesce=c["static_strides"])
            r, blob = drv.encode_tiled(t.tensor_map.driver_args(cute["address"]))
            rec["library_encode_result"] = r
            rec["bytes_equal"] = (blob.hex() == cute.get("bytes")) if r == 0 and cute.get("result") == 0 else None
            rec["loads_per_tile"] = len(t.loads)
            rec["status"] = "pass" if not rec["differences"] and rec["bytes_equal"] else "fail"
        except Exception as e:  # noqa: BLE001
            rec.update(status="error", error=f"{type(e).__name__}: {e}")
        res["cases"][c["name"]] = rec
    return res


def _e2e_execute(drv: Driver, cubin: str, m: dict, ops: dict, words: dict | None = None) -> dict:
    from .wgmma_check import gather_d

    nb = _E2E_BYTES[m["dtype"]]
    fn = drv.function(cubin, f"tma_wgmma_{m['dtype']}_{m['major']}")
    ptrs = []
    try:
        args: list = []
        maps = []
        load_args = {}
        for op in ("A", "B"):
            o = ops[op]
            buf = o["buf"].astype({1: np.uint8, 2: np.uint16, 4: np.uint32}[nb]).tobytes()
            gp = drv.alloc(len(buf) + 64)
            ptrs.append(gp)
            drv.htod(gp, buf)
            r, blob = drv.encode_tiled(o["copy"].tensor_map.driver_args(gp))
            if r:
                raise RuntimeError(f"driver refused the {op} map: {drv.error_name(r)}")
            maps.append(_map_arg(blob))
            coords = np.zeros((len(o["coords"]), 5), np.int32)
            for i, c in enumerate(o["coords"]):
                coords[i, : len(c)] = c
            dsts = np.array([ld.smem_offset for ld in o["copy"].loads], np.uint32)
            cp, dp = drv.alloc(coords.nbytes), drv.alloc(dsts.nbytes)
            ptrs += [cp, dp]
            drv.htod(cp, coords.tobytes())
            drv.htod(dp, dsts.tobytes())
            load_args[op] = (cp, dp, len(dsts), o["copy"].tensor_map.rank, o["copy"].tensor_map.box_bytes)
        a_bytes = max(int(ops["A"]["copy"].writes().max()) + nb, 0)
        b_off = -(-a_bytes // 1024) * 1024
        b_bytes = int(ops["B"]["copy"].writes().max()) + nb
        wa = np.array((words or {}).get("A", ops["A"]["words"]), np.uint64)
        wb = np.array((words or {}).get("B", ops["B"]["words"]), np.uint64)
        pa, pb = drv.alloc(wa.nbytes), drv.alloc(wb.nbytes)
        ptrs += [pa, pb]
        drv.htod(pa, wa.tobytes())
        drv.htod(pb, wb.tobytes())
        nreg = m["N"] // 2
        out = drv.alloc(128 * nreg * 4)
        info = drv.alloc(16)
        ptrs += [out, info]
        args = [maps[0], maps[1]]
        for op in ("A", "B"):
            cp, dp, n, rank, box = load_args[op]
            args += [ctypes.c_uint64(cp), ctypes.c_uint64(dp), ctypes.c_int(n), ctypes.c_int(rank), ctypes.c_uint32(box)]
            if op == "B":
                args.append(ctypes.c_uint32(b_off))
        args += [ctypes.c_uint64(pa), ctypes.c_uint64(pb), ctypes.c_int(len(wa)), ctypes.c_uint64(out), ctypes.c_uint64(info)]
        drv.launch(fn, args, b_off + b_bytes + 2048)
        d = np.frombuffer(drv.dtoh(out, 128 * nreg * 4), np.float32).reshape(128, nreg).astype(np.float64)
        inf = np.frombuffer(drv.dtoh(info, 12), np.uint32)
        bases = [int(x) for x in inf[:2]]
        if inf[2]:
            raise RuntimeError("mbarrier wait timed out: the transaction count never completed")
    finally:
        for p in ptrs:
            drv.free(p)
    return {**compare_exact(gather_d(d, m["N"], m["K"]), ops["D"], examples=3), "smem_bases": bases}


def _e2e_record(m: dict, ops: dict) -> dict:
    rec = {k: m[k] for k in ("name", "dtype", "major", "swizzle", "KT", "K", "N")}
    for op in ("A", "B"):
        o = ops[op]
        rec[f"map_{op}"] = o["copy"].tensor_map.driver_args()
        rec[f"loads_{op}"] = len(o["copy"].loads)
        rec[f"origin_{op}"] = list(o["origin"])
        rec[f"descriptors_{op}"] = [hex(int(w)) for w in o["words"]]
        ck = ops["check"][op]
        rec[f"check_{op}"] = {"ok": ck.ok, "mismatches": ck.mismatches, "first": ck.first}
    return rec


def _negative_child(cubin: str, name: str) -> None:
    mode_name, how = E2E_NEGATIVES[name]
    m = next(x for x in e2e_modes() if x["name"] == mode_name)
    ops = _e2e_operands(m, seed=3, desc_swizzle=how["desc_swizzle"])
    rec = _e2e_record(m, ops)
    try:
        drv = Driver()
        res = _e2e_execute(drv, cubin, m, ops)
        res["cuda_error"] = None
    except Exception as e:  # noqa: BLE001 - a CUDA error is an acceptable outcome
        res = {"ok": False, "cuda_error": f"{type(e).__name__}: {str(e)[:200]}"}
    rec.update(res)
    print("RESULT " + json.dumps(rec, default=str))


def _run_negatives(cubin: str) -> dict:
    env = child_env()
    procs = {n: subprocess.Popen([sys.executable, "-m", "layoutalg.gpu.tma_check", "--negative", cubin, n],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env) for n in E2E_NEGATIVES}
    out = {}
    for name, p in procs.items():
        try:
            so, se = p.communicate(timeout=180)
        except subprocess.TimeoutExpired:
            p.kill()
            so, se = "", "timeout"
        line = [x for x in so.splitlines() if x.startswith("RESULT ")]
        rec: dict = json.loads(line[-1][7:]) if line else {"ok": False, "cuda_error": f"child died: {se[-400:]}"}
        caught_hw = not rec.get("ok", False)
        caught_lib = not (rec.get("check_A", {}).get("ok", True) and rec.get("check_B", {}).get("ok", True))
        rec.update(mode=E2E_NEGATIVES[name][0], corruption=E2E_NEGATIVES[name][1], caught_by_hardware=caught_hw,
                   predicted_by_library=caught_lib,
                   how_caught=("CUDA error" if rec.get("cuda_error") else "wrong D") if caught_hw else "NOT CAUGHT",
                   status="pass" if caught_hw and caught_lib else "fail")
        out[name] = rec
    return out


def _placement_child(cubin: str, start: int) -> None:
    """Run placement cases from index ``start`` on (one RESULT line each); stop at the first CUDA error."""
    cases = placement_cases() + layout_cases()
    drv = Driver()
    accepted = {}
    for s in sm100_cases():
        r, _ = drv.encode_tiled(s["map"].driver_args(4096))
        accepted[s["name"]] = r
    cases += [s for s in sm100_cases() if accepted[s["name"]] == 0] + fault_cases()
    print("SM100 " + json.dumps(accepted), flush=True)
    for idx in range(start, len(cases)):
        try:
            rec = _run_placement(drv, cubin, cases[idx])
        except Exception as e:  # noqa: BLE001
            print(f"CRASH {idx} " + json.dumps({"name": cases[idx]["name"], "error": f"{type(e).__name__}: {str(e)[:300]}"}),
                  flush=True)
            return
        print(f"RESULT {idx} " + json.dumps(rec, default=str), flush=True)
    print("DONE", flush=True)


def _run_placements(cubin: str, log=print) -> tuple[dict, dict]:
    env = child_env()
    got: dict = {}
    sm100: dict = {}
    start = 0
    for _ in range(24):
        try:
            p = subprocess.run([sys.executable, "-m", "layoutalg.gpu.tma_check", "--placement", cubin, str(start)],
                               capture_output=True, text=True, env=env, timeout=300)
            stdout, stderr = p.stdout, p.stderr
        except subprocess.TimeoutExpired as e:
            stdout = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
            stderr = "timeout"
        nxt = None
        done = False
        for line in stdout.splitlines():
            if line.startswith("RESULT "):
                _, idx, js = line.split(" ", 2)
                rec = json.loads(js)
                got[rec["name"]] = rec
                nxt = int(idx) + 1
            elif line.startswith("CRASH "):
                _, idx, js = line.split(" ", 2)
                rec = json.loads(js)
                got[rec["name"]] = {"status": "error", **rec}
                nxt = int(idx) + 1
            elif line.startswith("SM100 "):
                sm100 = json.loads(line[6:])
            elif line == "DONE":
                done = True
        if done:
            break
        if stderr == "timeout":
            at = nxt if nxt is not None else start
            got[f"(timeout at case {at})"] = {"status": "error", "error": "placement child timed out"}
            start = at + 1
            continue
        if nxt is None:
            log(f"[tma placement] child made no progress at {start}: {stderr[-600:]}")
            got[f"(child at {start})"] = {"status": "error", "error": stderr[-600:]}
            break
        start = nxt
    for c in fault_cases():
        rec = got.get(c["name"]) or {"status": "error", "error": "not run"}
        try:
            predict(c)
            refusal = None
        except Exception as e:  # noqa: BLE001
            refusal = str(e)
        faulted = rec.get("status") == "error" and "CUresult" in rec.get("error", "")
        rec.update(name=c["name"], kind="fault", map=c["map"].driver_args(), loads=[[int(d), list(x)] for d, x in c["loads"]],
                   hardware=rec.get("error", "ran") if faulted else "ran", library_refusal=refusal,
                   expect_fault=c["expect_fault"])
        if faulted:
            rec["status"] = "pass" if refusal else "fail"
        elif rec.get("status") in ("pass", "fail"):  # ran, and the library predicted it: as any placement
            pass
        elif rec.get("status") == "refused":
            rec["status"] = "fail"  # the hardware ran a load the library refuses
        got[c["name"]] = rec
    return got, sm100


def run(log=print, include: str | None = None) -> dict:
    """Compile, run placements (child process), refusals, CuTe (``include``: a folder with CuTe's ``cute/`` and
    ``cutlass/`` headers; default the nvidia-cutlass wheel's, if installed), TMA -> wgmma."""
    t0 = time.time()
    if include is None:
        from ..interop import cutecpp

        include = next((d for d in cutecpp.include_dirs() if os.path.isdir(os.path.join(d, "cute"))), None)
    workdir = tempfile.mkdtemp(prefix="layoutalg_tma_")
    result: dict = {"seconds": {}}
    from .common import nvcc_cubin

    cute_thread = None
    cute_holder: dict = {}
    try:
        cubin = nvcc_cubin(kernel_source(), "tma_kernels", workdir)
    except Exception as e:  # noqa: BLE001
        return {"error": f"{type(e).__name__}: {e}", "seconds": {"total": time.time() - t0}}
    result["seconds"]["compile"] = time.time() - t0
    drv = Driver()
    result["driver_version"] = drv.version
    if include:
        import threading

        def cute_job() -> None:
            try:
                cute_holder.update(_run_cute_gpu(drv, workdir, include))
            except Exception as e:  # noqa: BLE001
                cute_holder["error"] = f"{type(e).__name__}: {e}\n{traceback.format_exc()[-800:]}"

        cute_thread = threading.Thread(target=cute_job)
        cute_thread.start()
    t = time.time()
    try:
        result["refusals"] = _run_refusals(drv)
    except Exception as e:  # noqa: BLE001
        result["refusals"] = {"(error)": {"error": f"{type(e).__name__}: {e}\n{traceback.format_exc()[-800:]}"}}
    result["seconds"]["refusals"] = time.time() - t
    t = time.time()
    neg_holder: dict = {}
    import threading

    th = threading.Thread(target=lambda: neg_holder.update(_run_negatives(cubin)))
    th.start()
    e2e = {}
    for m in e2e_modes():
        try:
            ops = _e2e_operands(m)
            rec = _e2e_record(m, ops)
            rec.update(_e2e_execute(drv, cubin, m, ops))
            rec["status"] = "pass" if rec["ok"] and rec["check_A"]["ok"] and rec["check_B"]["ok"] else "fail"
        except Exception as e:  # noqa: BLE001
            rec = {"name": m["name"], "status": "error", "error": f"{type(e).__name__}: {e}\n{traceback.format_exc()[-600:]}"}
        e2e[m["name"]] = rec
    result["e2e"] = e2e
    th.join()
    result["negatives"] = neg_holder
    result["seconds"]["e2e"] = time.time() - t
    t = time.time()
    placements, sm100 = _run_placements(cubin, log)
    result["placement"] = placements
    result["sm100_encode"] = sm100
    result["seconds"]["placement"] = time.time() - t
    if cute_thread is not None:
        cute_thread.join()
        result["cute"] = cute_holder
    result["seconds"]["total"] = time.time() - t0
    return result


# --- replay (CPU) --------------------------------------------------------------------------------
def _all_placement_cases(lenient: bool = False) -> dict:
    return {c["name"]: c for c in placement_cases() + layout_cases(lenient) + sm100_cases() + fault_cases()}


def replay_placement(recording: dict, cases: dict | None = None) -> list[str]:
    """Recorded placements the library no longer predicts: each recorded image's fingerprint must be the
    fingerprint of the library's current prediction for the same case (and its map and loads the same)."""
    cases = cases or _all_placement_cases(lenient=True)
    problems = []
    for name, rec in recording.get("placement", {}).items():
        if rec.get("kind") == "fault" and rec.get("hardware", "ran") != "ran":
            c = cases.get(name)
            try:
                predict(c) if c else None
                problems.append(f"{name}: the hardware faulted ({rec.get('hardware')}) but the library accepts the load")
            except Exception as e:  # noqa: BLE001
                if "[box_start_align]" not in str(e) and "[smem_address_align]" not in str(e):
                    problems.append(f"{name}: the library refuses for another reason: {e}")
            continue
        if rec.get("status") != "pass":
            problems.append(f"{name}: recorded status {rec.get('status')}: {rec.get('error', rec.get('first_mismatches'))}")
            continue
        c = cases.get(name)
        if c is None:
            problems.append(f"{name}: no such case in the library any more")
            continue
        if "error" in c:
            problems.append(f"{name}: the library no longer derives this case: {c['error']}")
            continue
        if c["map"].driver_args() != rec["map"]:
            problems.append(f"{name}: tensor map {c['map'].driver_args()} differs from the recorded {rec['map']}")
        if [[int(d), [int(x) for x in cc]] for d, cc in c["loads"]] != rec["loads"]:
            problems.append(f"{name}: loads differ from the recorded ones")
        pred = predict(c)
        if image_hash(pred) != rec["measured_sha256"]:
            diff = [k for k, v in rec["sample"].items() if int(pred[int(k)]) != v]
            problems.append(f"{name}: the library's placement differs from the H100's (sampled slots differing: {diff[:6]})")
    return problems


def replay_refusals(recording: dict) -> list[str]:
    """Each recorded driver verdict must be the library's: refused iff :meth:`TensorMap.violations` is non-empty."""
    problems = []
    cases = {c["name"]: c for c in refusal_cases()}
    for name, rec in recording.get("refusals", {}).items():
        c = cases.get(name)
        if c is None:
            problems.append(f"{name}: no such refusal case")
            continue
        m = refusal_map(c)
        rules = sorted({v.rule for v in m.violations()})
        refused = rec["driver_result"] != 0
        if refused != bool(rules):
            problems.append(f"{name}: driver {'refused' if refused else 'accepted'} ({rec['driver_error']}) but the library "
                            f"finds violations {rules}")
        if not c["probe"] and c["expect"] is not None and c["expect"] not in rules:
            problems.append(f"{name}: the library does not name rule {c['expect']} (it names {rules})")
    return problems


def replay_cute(recording: dict) -> list[str]:
    """The library's arguments for each recorded CuTe case must be CuTe's (and its bytes were the driver's)."""
    problems = []
    cases = {c["name"]: c for c in cute_cases()}
    for name, rec in recording.get("cute", {}).get("cases", {}).items():
        if rec.get("status") != "pass":
            problems.append(f"{name}: recorded status {rec.get('status')}: {rec.get('error', rec.get('differences'))}")
            continue
        diff = compare_cute(rec["cute"], library_cute_args(cases[name]))
        if diff:
            problems.append(f"{name}: " + "; ".join(diff))
    return problems


def replay(recording: dict) -> list[str]:
    """Everything in a TMA recording the library no longer reproduces (placements, refusals, CuTe, TMA -> wgmma)."""
    return replay_placement(recording) + replay_refusals(recording) + replay_cute(recording) + replay_e2e(recording)


def replay_e2e(recording: dict) -> list[str]:
    """TMA -> wgmma: the library's maps and descriptors for every passing mode must be the recorded ones,
    and for every caught negative the library's check must still find the disagreement."""
    problems = []
    modes = {m["name"]: m for m in e2e_modes()}
    for name, rec in recording.get("e2e", {}).items():
        if rec.get("status") != "pass":
            problems.append(f"{name}: recorded status {rec.get('status')}")
            continue
        ops = _e2e_operands(modes[name])
        for op in ("A", "B"):
            if ops[op]["copy"].tensor_map.driver_args() != rec[f"map_{op}"]:
                problems.append(f"{name} {op}: tensor map differs from the hardware-checked one")
            if [hex(int(w)) for w in ops[op]["words"]] != rec[f"descriptors_{op}"]:
                problems.append(f"{name} {op}: descriptors differ from the hardware-checked ones")
            if not ops["check"][op].ok:
                problems.append(f"{name} {op}: check_wgmma now reports a mismatch: {ops['check'][op]}")
    for name, rec in recording.get("negatives", {}).items():
        if not rec.get("caught_by_hardware"):
            problems.append(f"{name}: the hardware did not show the wrong D")
            continue
        mode, how = E2E_NEGATIVES[name]
        ops = _e2e_operands(modes[mode], seed=3, desc_swizzle=how["desc_swizzle"])
        if ops["check"]["A"].ok and ops["check"]["B"].ok:
            problems.append(f"{name}: check_wgmma no longer predicts the disagreement the hardware showed")
    return problems


if __name__ == "__main__":  # child processes
    if len(sys.argv) == 4 and sys.argv[1] == "--negative":
        _negative_child(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 4 and sys.argv[1] == "--placement":
        _placement_child(sys.argv[2], int(sys.argv[3]))
    elif len(sys.argv) >= 3 and sys.argv[1] == "--run":
        from .common import environment, write_recording

        data = run(include=sys.argv[3] if len(sys.argv) > 3 else None)
        print(json.dumps({k: v for k, v in data.items() if k == "seconds"}))
        write_recording("tma", data, environment(), sys.argv[2])
