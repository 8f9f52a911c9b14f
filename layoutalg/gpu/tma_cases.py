"""TMA placement and refusal cases, planned on the CPU: what :mod:`~layoutalg.gpu.tma_check` runs.

* every global element is identified by its value (:func:`encode_ids` / :func:`decode_ids`), so a copied
  shared-memory image says which element landed in each slot (:func:`image_hash` fingerprints it);
* :func:`placement_cases` (raw tensor maps), :func:`layout_cases` (maps derived by
  :func:`layoutalg.nvidia.hopper.tma.make_tma_copy`), :func:`sm100_cases`, :func:`fault_cases`, all by name in
  :func:`all_placement_cases`; the library's image of each (:func:`predict`, :func:`layout_image`);
* :func:`refusal_cases`: driver arguments that break one rule each (:func:`refusal_map`).

    >>> c = placement_cases()[0]
    >>> c["name"], c["map"].swizzle, len(c["loads"])
    ('p.UINT8.NONE.row64', 'NONE', 2)
    >>> int((predict(c) >= 0).sum()) > 0
    True
"""

from __future__ import annotations

import hashlib
import math
from typing import Any

import numpy as np

from ..nvidia.hopper.tma import SWIZZLE_MODES, TensorMap, element_bytes, make_tma_copy

__all__ = ["SENTINEL", "UNTOUCHED", "ZERO_FILL", "UNDECODABLE", "NAN_FILL", "encode_ids", "decode_ids", "image_hash",
           "placement_cases", "fault_cases", "sm100_cases", "layout_cases", "all_placement_cases", "predict",
           "layout_image", "refusal_cases", "refusal_map"]

#: value written to every shared byte before the loads (per element size): marks untouched slots
SENTINEL = {1: 0xFF, 2: 0xFFFF, 4: 0xDEADBEEF}
UNTOUCHED, ZERO_FILL, UNDECODABLE, NAN_FILL = -2, -1, -3, -4


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
    from ..nvidia.hopper.wgmma import tile

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



def all_placement_cases(lenient: bool = False) -> dict:
    """Every placement case by name: raw, layout (``lenient``: see :func:`layout_cases`), sm_100 and fault cases."""
    return {c["name"]: c for c in placement_cases() + layout_cases(lenient) + sm100_cases() + fault_cases()}
