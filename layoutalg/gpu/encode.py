"""Bit patterns of PTX element types, and packing of elements into 32-bit registers (numpy only).

A tensor-core instruction takes its operands as 32-bit registers that hold ``32 / bits`` elements,
element 0 in the low bits ("low to high", as the PTX ISA lists them). To feed a fragment from the
host we need the bit pattern of each value in its PTX type and the packing. Worked by hand: the
``.f16`` values 1.0 (0x3C00) and 2.0 (0x4000) packed as elements 0 and 1 of one register give
``0x40003C00``::

    >>> hex(pack_register([1.0, 2.0], "f16"))
    '0x40003c00'
    >>> decode(encode([3.0, -2.0], "e4m3"), "e4m3").tolist()
    [3.0, -2.0]

Only values that are exact in the type are accepted (the harness uses small integers, so every
product and sum is exact and a comparison with the host reference can demand equality).
"""

from __future__ import annotations

import numpy as np

from ..errors import LayoutError

__all__ = ["BITS", "encode", "decode", "pack_register", "pack_lane", "unpack_lane", "max_code"]

#: Bits per element in a register, by PTX type (``b1`` one bit, ``s4``/``u4`` four).
BITS = {
    "f64": 64, "f32": 32, "tf32": 32, "s32": 32,
    "f16": 16, "bf16": 16,
    "e4m3": 8, "e5m2": 8, "s8": 8, "u8": 8,
    "s4": 4, "u4": 4, "b1": 1,
}

# (exponent bits, mantissa bits, bias) of the 8-bit floats
_FP8 = {"e4m3": (4, 3, 7), "e5m2": (5, 2, 15)}

#: Largest non-negative integer ``v`` such that every integer in [0, v] is exact in the type
#: and in its products with values of the same range (what the harness uses for codes).
_MAX_CODE = {"f64": 1 << 20, "f32": 1 << 11, "tf32": 1 << 10, "f16": 1 << 10, "bf16": 1 << 7,
             "e4m3": 16, "e5m2": 8, "s8": 127, "u8": 255, "s4": 7, "u4": 15, "b1": 1}


def max_code(dtype: str) -> int:
    """max_code(t) = the largest v with every integer in [0, v] exact in t (codes the harness may use).

    >>> max_code("s4"), max_code("e5m2"), max_code("b1")
    (7, 8, 1)
    """
    _check(dtype, "max_code")
    return _MAX_CODE[dtype]


def _check(dtype: str, op: str) -> None:
    if dtype not in BITS:
        raise LayoutError(f"{op}: unknown PTX type {dtype!r}; known: {sorted(BITS)}")


def _fp8_encode(v: np.ndarray, dtype: str) -> np.ndarray:
    ebits, mbits, bias = _FP8[dtype]
    out = np.zeros(v.shape, dtype=np.uint64)
    sign = (v < 0).astype(np.uint64) << np.uint64(7)
    a = np.abs(v)
    nz = a != 0
    e = np.floor(np.log2(np.where(nz, a, 1.0))).astype(np.int64)
    frac = np.where(nz, a / np.exp2(e) - 1.0, 0.0) * (1 << mbits)
    if np.any(frac != np.round(frac)) or np.any(nz & (e + bias <= 0)) or np.any(e + bias >= (1 << ebits) - 1):
        bad = v[(frac != np.round(frac)) | (nz & ((e + bias <= 0) | (e + bias >= (1 << ebits) - 1)))]
        raise LayoutError(f"encode: values {bad[:4].tolist()} are not exact normal .{dtype} numbers")
    code = ((e + bias).astype(np.uint64) << np.uint64(mbits)) | np.round(frac).astype(np.uint64)
    out = np.where(nz, code, 0).astype(np.uint64) | sign
    return out


def encode(values, dtype: str) -> np.ndarray:
    """encode(v, t) = the bit pattern of each value in PTX type t, as uint64 (low ``BITS[t]`` bits used).

    Raises LayoutError for a value that is not exact in ``t``.

    >>> [hex(int(x)) for x in encode([1.0, -1.0], "bf16")]
    ['0x3f80', '0xbf80']
    >>> encode([-1, 7], "s4").tolist(), encode([1], "b1").tolist()
    ([15, 7], [1])
    """
    _check(dtype, "encode")
    v = np.asarray(values, dtype=np.float64)
    if dtype == "f64":
        return v.view(np.uint64).copy()
    if dtype in ("f32", "tf32"):
        f = v.astype(np.float32)
        if np.any(f.astype(np.float64) != v):
            raise LayoutError(f"encode: values are not exact .{dtype} numbers: {v[f != v][:4].tolist()}")
        return f.view(np.uint32).astype(np.uint64)
    if dtype == "f16":
        f = v.astype(np.float16)
        if np.any(f.astype(np.float64) != v):
            raise LayoutError(f"encode: values are not exact .f16 numbers: {v[f != v][:4].tolist()}")
        return f.view(np.uint16).astype(np.uint64)
    if dtype == "bf16":
        u = v.astype(np.float32).view(np.uint32)
        if np.any(u & 0xFFFF) or np.any(v.astype(np.float32) != v):
            raise LayoutError("encode: values are not exact .bf16 numbers")
        return (u >> 16).astype(np.uint64)
    if dtype in _FP8:
        return _fp8_encode(v, dtype)
    # integer types
    if np.any(v != np.round(v)):
        raise LayoutError(f"encode: .{dtype} takes integers, got {v[v != np.round(v)][:4].tolist()}")
    iv = v.astype(np.int64)
    bits = BITS[dtype]
    lo, hi = ((-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if dtype.startswith("s") else (0, (1 << bits) - 1))
    if np.any((iv < lo) | (iv > hi)):
        raise LayoutError(f"encode: .{dtype} values must lie in [{lo}, {hi}], got {iv[(iv < lo) | (iv > hi)][:4].tolist()}")
    return (iv & ((1 << bits) - 1)).astype(np.uint64)


def decode(codes, dtype: str) -> np.ndarray:
    """decode(encode(v, t), t) = v: the value of each bit pattern (float64).

    >>> decode([0x3C00, 0xC000], "f16").tolist(), decode([0xF], "s4").tolist()
    ([1.0, -2.0], [-1.0])
    """
    _check(dtype, "decode")
    c = np.asarray(codes, dtype=np.uint64)
    bits = BITS[dtype]
    if dtype == "f64":
        return c.view(np.float64).copy()
    if dtype in ("f32", "tf32"):
        return c.astype(np.uint32).view(np.float32).astype(np.float64)
    if dtype == "f16":
        return c.astype(np.uint16).view(np.float16).astype(np.float64)
    if dtype == "bf16":
        return (c.astype(np.uint32) << np.uint32(16)).view(np.float32).astype(np.float64)
    if dtype in _FP8:
        ebits, mbits, bias = _FP8[dtype]
        ci = c.astype(np.int64)
        sign = np.where(ci & 0x80, -1.0, 1.0)
        e = (ci >> mbits) & ((1 << ebits) - 1)
        m = ci & ((1 << mbits) - 1)
        val = np.where(e == 0, m / (1 << mbits) * 2.0 ** (1 - bias), (1 + m / (1 << mbits)) * np.exp2(e - bias))
        return sign * val
    iv = c.astype(np.int64) & ((1 << bits) - 1)
    if dtype.startswith("s"):
        iv = np.where(iv >= (1 << (bits - 1)), iv - (1 << bits), iv)
    return iv.astype(np.float64)


def pack_register(values, dtype: str) -> int:
    """pack_register([v0, v1, ...], t) = sum_j encode(v_j) << (j * bits(t)): one register, element 0 lowest.

    >>> hex(pack_register([1, 2, 3, 4, 5, 6, 7, 0], "u4"))
    '0x7654321'
    """
    codes = encode(values, dtype)
    bits = BITS[dtype]
    width = 64 if dtype == "f64" else 32
    if len(codes) * bits > width:
        raise LayoutError(f"pack_register: {len(codes)} .{dtype} values do not fit one {width}-bit register")
    word = 0
    for j, cv in enumerate(codes.tolist()):
        word |= int(cv) << (j * bits)
    return word


def pack_lane(values, dtype: str) -> np.ndarray:
    """One thread's fragment as 32-bit words: registers of ``32 // bits`` elements (f64: two words, low first).

    ``values`` has shape ``(..., V)``; the result ``(..., W)`` uint32 with ``W = ceil(V * bits / 32)``.

    >>> [hex(w) for w in pack_lane([1.0, 2.0, 3.0], "f16").tolist()]
    ['0x40003c00', '0x4200']
    """
    v = np.asarray(values, dtype=np.float64)
    codes = encode(v, dtype)
    bits = BITS[dtype]
    if dtype == "f64":
        lo = (codes & np.uint64(0xFFFFFFFF)).astype(np.uint32)
        hi = (codes >> np.uint64(32)).astype(np.uint32)
        return np.stack([lo, hi], axis=-1).reshape(*v.shape[:-1], 2 * v.shape[-1])
    per = 32 // bits
    V = v.shape[-1]
    W = -(-V // per)
    padded = np.zeros((*v.shape[:-1], W * per), dtype=np.uint64)
    padded[..., :V] = codes
    padded = padded.reshape(*v.shape[:-1], W, per)
    shifts = (np.arange(per, dtype=np.uint64) * np.uint64(bits))
    words = np.bitwise_or.reduce(padded << shifts, axis=-1)
    return words.astype(np.uint32)


def unpack_lane(words, dtype: str, num_values: int) -> np.ndarray:
    """unpack_lane(pack_lane(v, t), t, len(v)) = v: 32-bit words back to values (float64).

    >>> unpack_lane(pack_lane([[1.0, -2.0, 0.5]], "f16"), "f16", 3).tolist()
    [[1.0, -2.0, 0.5]]
    """
    w = np.asarray(words, dtype=np.uint64)
    bits = BITS[dtype]
    if dtype == "f64":
        w2 = w.reshape(*w.shape[:-1], -1, 2)
        codes = w2[..., 0] | (w2[..., 1] << np.uint64(32))
        return decode(codes, dtype)[..., :num_values]
    per = 32 // bits
    shifts = np.arange(per, dtype=np.uint64) * np.uint64(bits)
    codes = (w[..., :, None] >> shifts) & np.uint64((1 << bits) - 1)
    codes = codes.reshape(*w.shape[:-1], -1)[..., :num_values]
    return decode(codes, dtype)
