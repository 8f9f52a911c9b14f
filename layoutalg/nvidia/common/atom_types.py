"""What every generation's atoms share: the type spellings in CuTe's atom names and copy value types.

CuTe spells the D, A, B, C types of an MMA atom in its name (``SM80_16x8x16_F32BF16BF16F32_TN``:
``F32``, ``BF16``, ``BF16``, ``F32``); :func:`split_types` reads them back as PTX types. A copy
atom moves values of a type named as in PTX, CuTe C++ or by bits (:func:`value_bits`);
:func:`copy_family_builder` turns a generation's copy-atom maker into a registry ``build`` with
the same checks and hints for every generation (:mod:`layoutalg.registry`).

    >>> split_types("F32BF16BF16F32", 4, "SM80_16x8x16_F32BF16BF16F32_TN")
    ['f32', 'bf16', 'bf16', 'f32']
    >>> PTX_TO_NAME["e4m3"], sm_number("sm_90a")
    ('E4M3', 90)
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache, wraps
from typing import Any

from ...errors import LayoutError, guarded
from ...tiled import CopyAtom
from .dtypes import dtype_bits, dtype_name

__all__ = [
    "NAME_TYPES",
    "PTX_TO_NAME",
    "UINT_BITS",
    "split_types",
    "sm_number",
    "value_bits",
    "value_type_name",
    "hashable_cache",
    "tuple_scale",
    "normalise_copy_name",
    "copy_family_builder",
]

#: CuTe's spelling in atom names -> PTX type
NAME_TYPES = {
    "F16": "f16", "BF16": "bf16", "TF32": "tf32", "F32": "f32", "F64": "f64", "S32": "s32",
    "S8": "s8", "U8": "u8", "S4": "s4", "U4": "u4", "U1": "b1", "E4M3": "e4m3", "E5M2": "e5m2",
    "E3M2": "e3m2", "E2M3": "e2m3", "E2M1": "e2m1",
}
#: PTX type -> CuTe's spelling in atom names
PTX_TO_NAME = {v: k for k, v in NAME_TYPES.items()}
_TYPE_TOKEN = re.compile("|".join(sorted(NAME_TYPES, key=len, reverse=True)))
#: CuTe's unsigned vector types -> bits (cp.async, UniversalCopy)
UINT_BITS = {"uint8_t": 8, "uint16_t": 16, "uint32_t": 32, "uint64_t": 64, "uint128_t": 128}


@guarded
def split_types(text: str, n: int, name: str) -> list[str]:
    """The ``n`` PTX types CuTe spells run together in ``text`` (a LayoutError naming ``name`` if not)."""
    toks = _TYPE_TOKEN.findall(text)
    if "".join(toks) != text or len(toks) != n:
        raise LayoutError(f"mma_atom: cannot read {n} types from {text!r} in {name!r}")
    return [NAME_TYPES[t] for t in toks]


@guarded
def sm_number(min_sm: str) -> int:
    """The number of an ``sm_XX`` target (``"sm_90a"`` -> 90)."""
    return int(re.sub(r"[^0-9]", "", min_sm))


def value_bits(value_type: Any) -> int:
    """Bits of a value type named as in PTX (``"f16"``), CuTe C++ (``"half_t"``, ``"cutlass::float_e4m3_t"``)
    or any spelling :func:`layoutalg.nvidia.common.dtypes.dtype_name` reads, or given as an int.

    >>> value_bits("half_t"), value_bits("e4m3"), value_bits(32), value_bits("cute::uint128_t")
    (16, 8, 32, 128)
    """
    if isinstance(value_type, int) and not isinstance(value_type, bool):
        if value_type < 1:
            raise LayoutError(f"value_bits: {value_type} bits is not positive")
        return value_type
    return dtype_bits(value_type, op="value_bits")


def value_type_name(value_type: Any) -> str:
    """The name a copy atom records for its value type: the PTX name, or ``b<N>`` for N bits.

    >>> value_type_name("half_t"), value_type_name(64)
    ('f16', 'b64')
    """
    if isinstance(value_type, int) and not isinstance(value_type, bool):
        return f"b{value_type}"
    return dtype_name(value_type, op="copy_atom")


def hashable_cache(fn: Any) -> Any:
    """``functools.cache`` that answers an unhashable argument (a list, say) with a LayoutError naming it."""
    if not callable(fn):
        raise LayoutError(f"hashable_cache: decorates a function, got {fn!r}")
    cached = cache(fn)

    @wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            hash((args, tuple(sorted(kwargs.items()))))
        except TypeError:
            bad = next((a for a in (*args, *kwargs.values()) if not _is_hashable(a)), None)
            raise LayoutError(f"{fn.__name__}: argument {bad!r} is not a name or a value type "
                              "(a str or an int, not a list)") from None
        return cached(*args, **kwargs)

    call.cache_clear = cached.cache_clear  # type: ignore[attr-defined]
    return call


def _is_hashable(x: Any) -> bool:
    try:
        hash(x)
    except TypeError:
        return False
    return True


@guarded
def tuple_scale(t: Any, k: int) -> Any:
    """Every integer of the (nested) tuple ``t`` times ``k``.

    >>> tuple_scale((1, (2, 3)), 16)
    (16, (32, 48))
    """
    if type(t) is tuple:
        return tuple(tuple_scale(x, k) for x in t)
    return t * k


def normalise_copy_name(name: str) -> str:
    """A copy atom's name without blanks and ``cute::`` / ``cutlass::`` / ``SM<nn>::`` namespaces.

    >>> normalise_copy_name(" cute::SM80_CP_ASYNC_CACHEALWAYS< uint128_t > ")
    'SM80_CP_ASYNC_CACHEALWAYS<uint128_t>'
    """
    name = re.sub(r"\s+", "", str(name))
    return re.sub(r"^(?:cute::|cutlass::|SM\d+::)+", "", name).replace("cute::", "")


#: the value widths a copy atom may be asked for (bits), tried to say which fit
_WIDTHS = (4, 8, 16, 32, 64, 128)
#: a type of each width, for the error's examples
_TYPE_OF_WIDTH = {4: "s4", 8: "e4m3/s8/u8", 16: "f16/bf16", 32: "f32/tf32/s32", 64: "f64", 128: "b128 (uint128_t)"}
#: errors about the name itself, not the value type: raised as they are (no widths hint)
_NAME_ERRORS = ("unknown copy atom", "names are", "moves 4, 8 or 16", "moves 16 bytes only", "takes uint8_t")


def copy_family_builder(matches: Callable[[str], bool], natural: Callable[[str], str | None],
                        make: Callable[[str, int, str], CopyAtom]) -> Callable[[str, Any], CopyAtom | None]:
    """A registry ``build(name, value_type)`` for a family of NVIDIA copy atoms.

    ``matches(name)``: is the (normalised) name this family's; ``natural(name)``: the value type the
    instruction moves when none is named; ``make(name, bits, type_name)``: the atom. A value type the
    instruction cannot move is a LayoutError naming the widths that fit. Atoms are cached.
    """

    @cache
    def build_cached(name: str, value_type: Any) -> CopyAtom:
        if value_type is None:
            value_type = natural(name)
            if value_type is None:
                raise LayoutError(f"copy_atom: unknown copy atom {name!r}")
        vb = value_bits(value_type)
        vt = value_type_name(value_type)
        try:
            return make(name, vb, vt)
        except LayoutError as e:
            if any(s in str(e) for s in _NAME_ERRORS):
                raise
            fits = []
            for w in _WIDTHS:
                try:
                    make(name, w, f"b{w}")
                    fits.append(w)
                except LayoutError:
                    continue
            hint = (f"the value widths that fit: {', '.join(map(str, fits))} bits "
                    f"(e.g. {', '.join(_TYPE_OF_WIDTH[w] for w in fits)})") if fits else "no value width fits"
            raise LayoutError(f"copy_atom: {name} cannot move {vb}-bit values ({vt}): {e}; {hint}") from None

    def build(name: str, value_type: Any = None) -> CopyAtom | None:
        if not matches(name):
            return None
        if not _is_hashable(value_type):
            raise LayoutError(f"copy_atom: argument {value_type!r} is not a name or a value type "
                              "(a str or an int, not a list)")
        return build_cached(name, value_type)

    return build
