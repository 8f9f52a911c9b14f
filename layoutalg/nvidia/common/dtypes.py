"""Element type names: the one place that reads a dtype, however CuTe, CUTLASS, PTX or Python spell it.

Every function of the catalog that takes a dtype (``mma.fragment``, ``wgmma.tile``, ``atoms.copy_atom``,
``tma.make_tma_copy``, ...) and every CLI option naming one reads it through :func:`dtype_name`, which
returns the PTX name (``f16``, ``bf16``, ``tf32``, ``f32``, ``f64``, ``e4m3``, ``e5m2``, ``s8``, ...).
Accepted spellings, case-insensitively and with or without a ``cutlass::`` / ``cute::`` /
``cutlass.`` / ``torch.`` / ``tl.`` / ``gl.`` / ``np.`` prefix and a trailing ``{}``:

* PTX: ``f16``, ``.f16``, ``e4m3``, ``s8``, ``b16``, ...
* CuTe / CUTLASS C++: ``half_t``, ``bfloat16_t``, ``tfloat32_t``, ``float``, ``double``,
  ``float_e4m3_t``, ``float_e5m2_t``, ``float_e2m1_t``, ``float_e2m3_t``, ``float_e3m2_t``,
  ``float_ue8m0_t``, ``float_ue4m3_t``, ``int8_t``, ``uint8_t``, ``int32_t``, ``int4b_t``,
  ``uint4b_t``, ``uint1b_t``, ``uint16_t``, ``uint32_t``, ``uint64_t``, ``uint128_t``;
* the CuTe DSL (``cutlass.Float16``, ``BFloat16``, ``TFloat32``, ``Float32``, ``Float8E4M3FN``,
  ``Float8E5M2``, ``Int8``, ``Uint8``, ``Int32``, ``Float4E2M1FN``, ...), Triton (``fp8e4nv``,
  ``fp8e5``), torch / numpy (``float16``, ``bfloat16``, ``float8_e4m3fn``, ``int8``, ...);
* CUDA (``__half``, ``__nv_bfloat16``, ``__nv_fp8_e4m3``, ``__nv_fp8_e5m2``).

    >>> [dtype_name(t) for t in ("cutlass::half_t", "tfloat32_t", "float_e4m3_t", "cute::int8_t", "float")]
    ['f16', 'tf32', 'e4m3', 's8', 'f32']
    >>> dtype_name("cutlass::float_e5m2_t"), dtype_name("Float8E4M3FN"), dtype_name("torch.bfloat16")
    ('e5m2', 'e4m3', 'bf16')
    >>> dtype_name("f64", allowed=("f16", "bf16"), op="wgmma")
    Traceback (most recent call last):
    ...
    layoutalg.errors.LayoutError: wgmma: dtype 'f64' (f64) is not allowed here; the types that fit: f16, bf16
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from ...errors import LayoutError

__all__ = ["dtype_name", "dtype_bits", "DTYPE_BITS", "CUTE_NAMES", "spellings", "operand_major"]

#: bits of one element of each PTX type name (the canonical names :func:`dtype_name` returns)
DTYPE_BITS: dict[str, int] = {
    "f16": 16, "bf16": 16, "tf32": 32, "f32": 32, "f64": 64,
    "e4m3": 8, "e5m2": 8, "e3m2": 6, "e2m3": 6, "e2m1": 4, "ue8m0": 8, "ue4m3": 8,  # CuTe's sizeof_bits
    "s4": 4, "u4": 4, "s8": 8, "u8": 8, "s16": 16, "u16": 16, "s32": 32, "u32": 32, "s64": 64, "u64": 64,
    "b1": 1, "b8": 8, "b16": 16, "b32": 32, "b64": 64, "b128": 128,
}

#: the CuTe C++ spelling of each PTX type (what layoutalg prints for C++)
CUTE_NAMES: dict[str, str] = {
    "f16": "half_t", "bf16": "bfloat16_t", "tf32": "tfloat32_t", "f32": "float", "f64": "double",
    "e4m3": "float_e4m3_t", "e5m2": "float_e5m2_t", "e3m2": "float_e3m2_t", "e2m3": "float_e2m3_t",
    "e2m1": "float_e2m1_t", "ue8m0": "float_ue8m0_t", "ue4m3": "float_ue4m3_t",
    "s4": "int4b_t", "u4": "uint4b_t", "s8": "int8_t", "u8": "uint8_t", "s16": "int16_t", "u16": "uint16_t",
    "s32": "int32_t", "u32": "uint32_t", "s64": "int64_t", "u64": "uint64_t", "b1": "uint1b_t",
    "b8": "uint8_t", "b16": "uint16_t", "b32": "uint32_t", "b64": "uint64_t", "b128": "uint128_t",
}

_ALIASES: dict[str, tuple[str, ...]] = {
    "f16": ("fp16", "half", "half_t", "float16", "float16_t", "__half", "f16x2"),
    "bf16": ("bfloat16", "bfloat16_t", "__nv_bfloat16", "bf16x2"),
    "tf32": ("tfloat32", "tfloat32_t"),
    "f32": ("fp32", "float", "float32", "float32_t"),
    "f64": ("fp64", "double", "float64", "float64_t"),
    "e4m3": ("float_e4m3", "float_e4m3_t", "float8_e4m3fn", "float8e4m3fn", "float8_e4m3", "fp8e4m3", "fp8e4nv",
             "fp8_e4m3", "__nv_fp8_e4m3", "e4m3fn", "e4m3x2"),
    "e5m2": ("float_e5m2", "float_e5m2_t", "float8_e5m2", "float8e5m2", "fp8e5m2", "fp8e5", "fp8_e5m2",
             "__nv_fp8_e5m2", "e5m2x2"),
    "e3m2": ("float_e3m2_t", "float_e3m2", "float6_e3m2fn", "float6e3m2fn", "float6_e3m2", "float_e3m2_unpacksmem_t"),
    "e2m3": ("float_e2m3_t", "float_e2m3", "float6_e2m3fn", "float6e2m3fn", "float6_e2m3", "float_e2m3_unpacksmem_t"),
    "e2m1": ("float_e2m1_t", "float_e2m1", "float4_e2m1fn", "float4e2m1fn", "fp4e2m1", "float4_e2m1",
             "float_e2m1_unpacksmem_t"),
    "ue8m0": ("float_ue8m0_t", "float_ue8m0", "float8_e8m0fnu", "float8e8m0fnu", "e8m0"),
    "ue4m3": ("float_ue4m3_t", "float_ue4m3"),
    "s4": ("int4b_t", "int4", "i4"),
    "u4": ("uint4b_t", "uint4"),
    "s8": ("int8", "int8_t", "i8"),
    "u8": ("uint8", "uint8_t"),
    "s16": ("int16", "int16_t", "i16"),
    "u16": ("uint16", "uint16_t"),
    "s32": ("int32", "int32_t", "i32", "int"),
    "u32": ("uint32", "uint32_t", "unsigned"),
    "s64": ("int64", "int64_t", "i64"),
    "u64": ("uint64", "uint64_t"),
    "b1": ("uint1b_t", "bin", "bit"),
    "b8": (),
    "b16": (),
    "b32": (),
    "b64": (),
    "b128": ("uint128_t", "uint128"),
}

_BY_SPELLING: dict[str, str] = {}
for _canon, _names in _ALIASES.items():
    _BY_SPELLING[_canon] = _canon
    for _n in _names:
        _BY_SPELLING[_n.lower()] = _canon

_PREFIX = re.compile(r"^(?:(?:cutlass|cute|std|detail|numeric)\s*::\s*|::|(?:cutlass|cute|torch|tl|gl|ttgl|np|numpy|"
                     r"triton\.language|cutlass\.cute|jnp)\s*\.\s*)+")


def _key(text: str) -> str:
    k = text.strip()
    k = _PREFIX.sub("", k)
    k = re.sub(r"\s*(\{\s*\}|\(\s*\))\s*$", "", k)  # half_t{} / Float16()
    k = k.lstrip(".")  # PTX's .f16
    return k.lower()


def spellings(name: str) -> tuple[str, ...]:
    """Every spelling :func:`dtype_name` reads as the PTX type ``name``.

    >>> spellings("e4m3")[:4]
    ('e4m3', 'float_e4m3', 'float_e4m3_t', 'float8_e4m3fn')
    """
    return (name,) + _ALIASES[dtype_name(name)]


def dtype_name(dtype: Any, *, allowed: Iterable[str] | None = None, op: str = "dtype") -> str:
    """The PTX name of ``dtype`` (any spelling above); with ``allowed``, also one of those, else a LayoutError
    naming the types that fit. The error for an unknown name lists the PTX names and the CuTe ones."""
    if not isinstance(dtype, str):
        raise LayoutError(f"{op}: dtype {dtype!r} is not a type name (e.g. 'f16', 'half_t', 'bfloat16_t', 'float_e4m3_t')")
    canon = _BY_SPELLING.get(_key(dtype))
    fits = list(dict.fromkeys(allowed)) if allowed is not None else None
    if canon is None:
        listed = f"the types that fit: {', '.join(fits)}" if fits is not None else f"known types: {', '.join(DTYPE_BITS)}"
        cute = ", ".join(CUTE_NAMES[t] for t in (fits or ["f16", "bf16", "tf32", "f32", "e4m3", "s8"]) if t in CUTE_NAMES)
        raise LayoutError(f"{op}: unknown dtype {dtype!r}; {listed} (CuTe spellings such as {cute} are accepted too)")
    if fits is not None and canon not in fits:
        raise LayoutError(f"{op}: dtype {dtype!r} ({canon}) is not allowed here; the types that fit: {', '.join(fits)}")
    return canon


def dtype_bits(dtype: Any, *, op: str = "dtype") -> int:
    """Bits of one element of ``dtype`` (any spelling), as CuTe's ``sizeof_bits`` (e2m1 4, e2m3/e3m2 6; a
    fragment's register container is :func:`layoutalg.nvidia.common.fragment.element_bits`).

    >>> dtype_bits("half_t"), dtype_bits("cutlass::float_e4m3_t"), dtype_bits("tf32"), dtype_bits("uint128_t")
    (16, 8, 32, 128)
    """
    return DTYPE_BITS[dtype_name(dtype, op=op)]


def operand_major(major: str, op: str = "wgmma") -> str:
    """The major-ness of a matrix operand in shared memory, normalised: ``"K"`` or ``"MN"``.

    Accepts ``"K"``, ``"MN"``, ``"M"``, ``"N"`` (any case, ``"-major"`` suffix and ``/``, ``|`` ignored);
    anything else is a LayoutError naming ``op``.

    >>> operand_major("k"), operand_major("M/N"), operand_major("N-major")
    ('K', 'MN', 'MN')
    """
    if isinstance(major, str):
        key = major.strip().upper().replace("-MAJOR", "").replace("/", "").replace("|", "")
        if key == "K":
            return "K"
        if key in ("MN", "M", "N"):
            return "MN"
    raise LayoutError(f"{op}: major {major!r} is not 'K' or 'MN' (also accepted: 'M', 'N')")
