"""wgmma shared-memory operands: canonical layouts, swizzle atoms, tiles and their descriptors.

A ``wgmma.mma_async`` operand in shared memory is read through a 64-bit matrix
descriptor (:mod:`layoutalg.nvidia.hopper.descriptor`) that holds only a start address,
two byte strides (LBO, SBO) and a swizzle mode. The PTX ISA spells out which
layouts those five numbers can describe, as CuTe layouts with parameters
(section "Canonical Layouts"; the layout is a function (mn, k) -> element offset)::

    K-major,  no swizzle : Swizzle<0,4,3> o ((8,m),(T,2k)):((1T,SBO),(1,LBO))
    K-major,  32/64/128B : Swizzle<B,4,3> o ((8,m),(T,2k)):((W*T,SBO),(1,T))
    MN-major, no swizzle : Swizzle<0,4,3> o ((T,1,m),(8,k)):((1,T,SBO),(1T,LBO))
    MN-major, 32/64/128B : Swizzle<B,4,3> o ((T,W,m),(8,k)):((1,T,LBO),(W*T,SBO))

with ``T = 128 / bits(dtype)`` elements per 16 bytes, ``W = swizzle bytes / 16``
(2, 4, 8) and ``B = log2 W`` (1, 2, 3).

Units -- the part that is easy to get wrong. Shapes and strides above are in
*elements*, and so are ``LBO``/``SBO`` inside the layout (the seed's table then
writes the byte value, e.g. ``LBO = 64*sizeof(tf32)`` = 256 B, and the descriptor
holds ``256 >> 4 = 16``). The swizzle ``Swizzle<B,4,3>`` however acts on *byte
addresses*: it keeps 2**4 = 16-byte chunks whole and XORs the chunk index
(address bits 4..4+B) with the row bits 7..7+B. So the seed's
``Swizzle<B,4,3> o L`` means ``byte_address = Swizzle<B,4,3>(bytes * L(c))``.
On element offsets the same permutation is ``Swizzle<B, log2 T, 3>``: for
16-bit types ``Swizzle<3,3,3>``, which is what CuTe's ``Layout_K_SW128_Atom<half>``
is once the swizzle is moved off the pointer. Check by hand for bf16 (2 bytes),
128B swizzle, row 1, element 0: byte address 128 -> bits 7..9 = 1 flip chunk
bit 4 -> byte 144 = element 72; on elements ``Sw<3,3,3>(64) = 64 ^ (64 >> 3) = 72``::

    >>> sw_bytes = canonical_swizzle(128)                      # the seed's spelling
    >>> sw_elems = canonical_swizzle(128, "bf16", swizzle_unit="element")
    >>> sw_bytes, sw_elems, sw_bytes(2 * 64) // 2, sw_elems(64)
    (Sw<3,4,3>, Sw<3,3,3>, 72, 72)

This module returns the exact element form (``swizzle_unit="element"``) whenever
the element type is known, and the seed's byte form (``swizzle_unit="byte"``)
when asked or when ``T`` is a symbol. :func:`descriptor_from_layout` accepts
both spellings (``M == 4``: bytes; ``M == log2 T``: elements; for 8-bit types
they coincide).

    >>> print(canonical_layout("K", 0).ptx)                   # the seed's table entry
    Swizzle<0,4,3> o ((8,m),(T,2*k)):((T,SBO),(1,LBO))
    >>> d = descriptor_from_layout("Swizzle<0,4,3> o ((8,2),(4,4)):((4,32),(1,64))", "tf32")
    >>> d.params.T, d.params.m, d.params.k, d.params.lbo_bytes, d.params.sbo_bytes
    (4, 2, 2, 256, 128)
    >>> d.lbo_encoded, d.sbo_encoded
    (16, 8)

See docs/wgmma.md for the seed's quirks and inconsistencies.
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np
import sympy

from ...algebra import tile_to_shape
from ...composed import ComposedLayout
from ...errors import LayoutError, LayoutWarning, guarded
from ...hooks import service
from ...layout import Layout
from ...parse import parse_composed
from ...swizzle import Swizzle

from ..common import dtypes as _dtypes
from ..common.dtypes import operand_major
from ..common.descriptor import DerivedDescriptor, base_offset_for
from .descriptor import MatrixDescriptor

__all__ = [
    "WGMMA_DTYPE_BITS",
    "SWIZZLE_MODES",
    "ATOM_NAMES",
    "dtype_bits",
    "elements_per_16B",
    "canonical_swizzle",
    "canonical_layout",
    "atom",
    "atom_by_name",
    "tile",
    "CanonicalParams",
    "DescriptorDerivation",
    "KBlock",
    "descriptor_from_layout",
    "k_block_descriptors",
    "parse_instruction",
    "SeedExample",
    "seed_examples",
]

#: Bits per element of every wgmma operand type read from shared memory.
WGMMA_DTYPE_BITS: dict[str, int] = {"tf32": 32, "f16": 16, "bf16": 16, "e4m3": 8, "e5m2": 8, "s8": 8, "u8": 8}

#: Swizzle modes in bytes -> B of Swizzle<B,4,3> (0 = no swizzle / "interleave").
SWIZZLE_MODES: dict[int, int] = {0: 0, 32: 1, 64: 2, 128: 3}

#: CuTe's GMMA atom names -> (major, swizzle bytes).
ATOM_NAMES: dict[str, tuple[str, int]] = {
    "Layout_MN_INTER_Atom": ("MN", 0),
    "Layout_MN_SW32_Atom": ("MN", 32),
    "Layout_MN_SW64_Atom": ("MN", 64),
    "Layout_MN_SW128_Atom": ("MN", 128),
    "Layout_K_INTER_Atom": ("K", 0),
    "Layout_K_SW32_Atom": ("K", 32),
    "Layout_K_SW64_Atom": ("K", 64),
    "Layout_K_SW128_Atom": ("K", 128),
}


def _sym(name: str) -> sympy.Symbol:
    # same assumptions as the parser's symbols, so parsed seed text compares equal
    return sympy.Symbol(name, integer=True, positive=True)


# --- small validators -----------------------------------------------------------------------
def dtype_name(dtype: str) -> str:
    """The canonical name ('tf32', 'f16', 'bf16', 'e4m3', 'e5m2', 's8', 'u8') of a wgmma operand type, from any
    spelling :func:`layoutalg.nvidia.common.dtypes.dtype_name` reads (``"bfloat16_t"``, ``"cutlass::float_e4m3_t"``).

    >>> dtype_name("cutlass::bfloat16_t"), dtype_name("tfloat32_t")
    ('bf16', 'tf32')
    """
    return _dtypes.dtype_name(dtype, allowed=WGMMA_DTYPE_BITS, op="wgmma")


def dtype_bits(dtype: str) -> int:
    """bits(dtype): 32 for tf32, 16 for f16/bf16, 8 for e4m3/e5m2/s8/u8.

    >>> dtype_bits("bf16"), dtype_bits("tf32"), dtype_bits("e4m3")
    (16, 32, 8)
    """
    return WGMMA_DTYPE_BITS[dtype_name(dtype)]


def elements_per_16B(dtype: str) -> int:
    """T = 128 / bits(dtype): elements per 16-byte (128-bit) chunk, the PTX ISA's normalising factor.

    >>> [elements_per_16B(t) for t in ("tf32", "bf16", "s8")]
    [4, 8, 16]
    """
    return 128 // dtype_bits(dtype)


def _swizzle_B(swizzle: int) -> int:
    if isinstance(swizzle, bool) or swizzle not in SWIZZLE_MODES:
        raise LayoutError(f"wgmma: swizzle {swizzle!r} is not a swizzle mode; expected 0, 32, 64 or 128 (bytes)")
    return SWIZZLE_MODES[swizzle]


@guarded
def canonical_swizzle(swizzle: int, dtype: str | None = None, *, swizzle_unit: str = "byte") -> Swizzle:
    """Swizzle<B,4,3> on byte addresses, or Swizzle<B, log2 T, 3> on element offsets, B = log2(swizzle/16).

    >>> canonical_swizzle(64), canonical_swizzle(64, "tf32", swizzle_unit="element")
    (Sw<2,4,3>, Sw<2,2,3>)
    """
    B = _swizzle_B(swizzle)
    if dtype is not None:
        dtype_name(dtype)  # checked even where the byte form does not depend on it
    if swizzle_unit == "byte":
        return Swizzle(B, 4, 3)
    if swizzle_unit == "element":
        if dtype is None:
            raise LayoutError("canonical_swizzle: swizzle_unit='element' needs the dtype (T = 128/bits)")
        return Swizzle(B, 4, 3).to_elements(dtype_bits(dtype) // 8)
    raise LayoutError(f"wgmma: swizzle_unit {swizzle_unit!r} is not 'byte' or 'element'")


def _resolve_unit(swizzle_unit: str | None, dtype: str | None) -> str:
    if swizzle_unit is None:
        return "byte" if dtype is None else "element"
    if swizzle_unit not in ("byte", "element"):
        raise LayoutError(f"wgmma: swizzle_unit {swizzle_unit!r} is not 'byte' or 'element'")
    return swizzle_unit


# --- canonical layouts ----------------------------------------------------------------------
def canonical_layout(
    major: str,
    swizzle: int,
    dtype: str | None = None,
    *,
    m: Any = None,
    k: Any = None,
    lbo: Any = None,
    sbo: Any = None,
    swizzle_unit: str | None = None,
) -> ComposedLayout:
    """The PTX ISA canonical layout (mn, k) -> element offset of one wgmma operand.

    K-major:  ((8,m),(T,2k)):((T,SBO),(1,LBO)) without swizzle, ((8,m),(T,2k)):((W*T,SBO),(1,T)) with;
    MN-major: ((T,1,m),(8,k)):((1,T,SBO),(T,LBO)) without swizzle, ((T,W,m),(8,k)):((1,T,LBO),(W*T,SBO)) with;
    composed with the swizzle of the mode; ``W = swizzle/16``, ``T = 128/bits(dtype)``.

    Parameters left ``None`` become positive-integer sympy symbols ``T``, ``m``,
    ``k``, ``LBO``, ``SBO``, so the result is the seed's table entry. ``lbo`` and
    ``sbo`` are in **elements** (as they appear in the layout); bytes =
    elements * bits/8. Swizzled K-major layouts have no LBO (passing one raises).
    ``swizzle_unit``: ``"byte"`` gives the seed's ``Swizzle<B,4,3>`` (acting on
    byte addresses), ``"element"`` the exact ``Swizzle<B, log2 T, 3>`` on element
    offsets; default: element when ``dtype`` is given, else byte.

    >>> print(canonical_layout("MN", 64).ptx)
    Swizzle<2,4,3> o ((T,4,m),(8,k)):((1,T,LBO),(4*T,SBO))
    >>> print(canonical_layout("K", 128, "bf16", m=8, k=1, sbo=512))
    Sw<3,3,3> o _0 o ((8,8),(8,2)):((64,512),(1,8))
    """
    major = operand_major(major)
    B = _swizzle_B(swizzle)
    unit = _resolve_unit(swizzle_unit, dtype)
    T = _sym("T") if dtype is None else elements_per_16B(dtype)
    m = _sym("m") if m is None else _positive("canonical_layout", "m", m)
    k = _sym("k") if k is None else _positive("canonical_layout", "k", k)
    sbo = _sym("SBO") if sbo is None else _positive("canonical_layout", "sbo", sbo)
    W = 1 << B
    if major == "K":
        if B == 0:
            lbo = _sym("LBO") if lbo is None else _positive("canonical_layout", "lbo", lbo)
            inner = Layout(((8, m), (T, 2 * k)), ((T, sbo), (1, lbo)))
        else:
            if lbo is not None:
                raise LayoutError(
                    f"canonical_layout: lbo={lbo} given for a K-major {swizzle}B-swizzled layout; "
                    "swizzled K-major layouts do not use LBO (the descriptor field is assumed 1)"
                )
            inner = Layout(((8, m), (T, 2 * k)), ((W * T, sbo), (1, T)))
    else:
        lbo = _sym("LBO") if lbo is None else _positive("canonical_layout", "lbo", lbo)
        if B == 0:
            inner = Layout(((T, 1, m), (8, k)), ((1, T, sbo), (T, lbo)))
        else:
            inner = Layout(((T, W, m), (8, k)), ((1, T, lbo), (W * T, sbo)))
    return ComposedLayout(canonical_swizzle(swizzle, dtype, swizzle_unit=unit), 0, inner)


def _positive(op: str, name: str, v: Any) -> Any:
    if isinstance(v, sympy.Basic) and not v.is_number:
        return v
    if isinstance(v, bool) or not isinstance(v, (int, np.integer, sympy.Integer)) or int(v) <= 0:
        raise LayoutError(f"{op}: {name}={v!r} must be a positive integer")
    return int(v)


# --- atoms and tiles ------------------------------------------------------------------------
def atom(major: str, swizzle: int, dtype: str, *, swizzle_unit: str = "element") -> ComposedLayout:
    """CuTe's GMMA swizzle atom (mn, k) -> element offset: the smallest tile of one swizzle pattern.

    MN-major: (W*T, 8):(1, W*T); K-major: (8, W*T):(W*T, 1); W = max(1, swizzle/16), T = 128/bits;
    composed with the mode's swizzle (exact element form by default). These are
    ``GMMA::Layout_{MN,K}_{INTER,SW32,SW64,SW128}_Atom<dtype>`` (PTX Table 38: 8x8,
    4x8/8x4, 2x8/8x2, 1x8/8x1 in 16-byte units).

    >>> print(atom("K", 128, "bf16"))
    Sw<3,3,3> o _0 o (8,64):(64,1)
    >>> print(atom("MN", 32, "tf32", swizzle_unit="byte").ptx)
    Swizzle<1,4,3> o (8,8):(1,8)
    """
    major = operand_major(major)
    B = _swizzle_B(swizzle)
    w = (1 << B) * elements_per_16B(dtype)  # elements per row of the pattern
    inner = Layout((w, 8), (1, w)) if major == "MN" else Layout((8, w), (w, 1))
    return ComposedLayout(canonical_swizzle(swizzle, dtype, swizzle_unit=swizzle_unit), 0, inner)


@guarded
def atom_by_name(name: str, dtype: str, *, swizzle_unit: str = "element") -> ComposedLayout:
    """atom_by_name('Layout_K_SW128_Atom', dtype) = atom('K', 128, dtype): CuTe's names.

    >>> atom_by_name("Layout_MN_SW64_Atom", "f16") == atom("MN", 64, "f16")
    True
    """
    key = name.split("<")[0].replace("GMMA::", "").strip()
    if key not in ATOM_NAMES:
        raise LayoutError(f"atom_by_name: {name!r} is not one of {sorted(ATOM_NAMES)}")
    major, swizzle = ATOM_NAMES[key]
    return atom(major, swizzle, dtype, swizzle_unit=swizzle_unit)


def tile(major: str, swizzle: int, dtype: str, shape: tuple[int, int], *, order: Any = None,
         swizzle_unit: str = "element") -> ComposedLayout:
    """tile_to_shape(atom(major, swizzle, dtype), (MN, K), order): an operand tile made of repeated atoms.

    ``order`` is CuTe's ``tile_to_shape`` order: by default (``None`` or ``"left"``, CuTe's
    ``LayoutLeft``) the atom repeats column-major, MN first, then K; ``(2, 1)`` (CuTe's
    ``Step<_2,_1>``) or ``"right"`` repeats it along K first. Precondition: MN and K are multiples
    of the atom's shape.

    >>> print(tile("K", 128, "bf16", (64, 64)))
    Sw<3,3,3> o _0 o ((8,8),(64,1)):((64,512),(1,0))
    >>> print(tile("MN", 128, "bf16", (128, 32)))
    Sw<3,3,3> o _0 o ((64,2),(8,4)):((1,512),(64,1024))
    >>> print(tile("K", 64, "f16", (16, 64), order=(2, 1)))
    Sw<2,3,3> o _0 o ((8,2),(32,2)):((32,512),(1,256))
    """
    if isinstance(order, list):
        order = tuple(order)
    if not (order is None or order in ("left", "right") or (
            isinstance(order, tuple) and len(order) == 2 and all(type(o) is int for o in order))):
        raise LayoutError(f"tile: order {order!r} is not 'left', 'right' or a pair of ranks like (2, 1) "
                          "(CuTe's Step<_2,_1>: the mode of lower rank repeats first)")
    a = atom(major, swizzle, dtype, swizzle_unit=swizzle_unit)
    if not (isinstance(shape, tuple) and len(shape) == 2 and all(isinstance(s, int) and s > 0 for s in shape)):
        raise LayoutError(f"tile: shape {shape!r} is not a pair (MN, K) of positive ints")
    a_shape = (a.inner[0].size(), a.inner[1].size())
    if shape[0] % a_shape[0] or shape[1] % a_shape[1]:
        raise LayoutError(
            f"tile: shape {shape} is not a multiple of the {major}-major {swizzle}B {dtype_name(dtype)} "
            f"atom shape {a_shape}"
        )
    return ComposedLayout(a.outer, 0, tile_to_shape(a.inner, shape, order))


# --- derivation -----------------------------------------------------------------------------
@dataclass(frozen=True)
class CanonicalParams:
    """The parameters of a canonical layout: the seed's T, m, k, LBO, SBO (LBO/SBO in elements).

    ``lbo``/``sbo`` are None where the canonical form has no such stride (LBO of a
    swizzled K-major layout) or where it is undetermined because its mode has size
    1 (m == 1 or k == 1); the descriptor then holds 0 (or 16 B = encoded 1 for the
    unused K-major LBO, as the PTX ISA says "assumed 1").
    """

    major: str
    swizzle: int
    dtype: str
    T: int
    m: int
    k: int
    lbo: int | None
    sbo: int | None

    @property
    def bytes_per_element(self) -> int:
        """bits(dtype) / 8."""
        return dtype_bits(self.dtype) // 8

    @property
    def lbo_bytes(self) -> int | None:
        """LBO in bytes = lbo * bytes_per_element (None if there is no LBO)."""
        return None if self.lbo is None else self.lbo * self.bytes_per_element

    @property
    def sbo_bytes(self) -> int | None:
        """SBO in bytes = sbo * bytes_per_element (None if undetermined)."""
        return None if self.sbo is None else self.sbo * self.bytes_per_element

    def layout(self, *, swizzle_unit: str = "element") -> ComposedLayout:
        """canonical_layout(major, swizzle, dtype, m=, k=, lbo=, sbo=) with these parameters.

        An undetermined stride (size-1 mode) is filled with the smallest value that keeps
        the layout injective."""
        W = max(1, self.swizzle // 16)
        lbo, sbo = self.lbo, self.sbo
        if self.major == "K":
            sbo = sbo if sbo is not None else 8 * W * self.T
            lbo = None if self.swizzle else (lbo if lbo is not None else 8 * self.T * self.m)
        else:
            if self.swizzle:
                lbo = lbo if lbo is not None else 8 * W * self.T
                sbo = sbo if sbo is not None else 8 * W * self.T * self.m
            else:
                sbo = sbo if sbo is not None else 8 * self.T
                lbo = lbo if lbo is not None else 8 * self.T * self.m
        return canonical_layout(
            self.major, self.swizzle, self.dtype, m=self.m, k=self.k, lbo=lbo, sbo=sbo, swizzle_unit=swizzle_unit
        )


@dataclass(frozen=True)
class DescriptorDerivation(DerivedDescriptor):
    """descriptor_from_layout's answer: the descriptor, the solved canonical parameters and findings.

    ``issues``: reasons the layout cannot be read by the hardware as written (empty when it can);
    ``notes``: remarks that do not invalidate it (e.g. MN-major for a type wgmma only reads K-major).
    """

    descriptor: MatrixDescriptor
    params: CanonicalParams
    pattern_start: int
    issues: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


def _split(layout: Any, dtype: str, swizzle: int | None, swizzle_unit: str) -> tuple[int, int, Layout, str]:
    """(swizzle bytes, offset, inner rank-2 Layout, unit note) of a layout of one operand."""
    op = "descriptor_from_layout"
    if swizzle_unit not in ("auto", "byte", "element"):
        raise LayoutError(f"{op}: swizzle_unit {swizzle_unit!r} is not 'auto', 'byte' or 'element'")
    if isinstance(layout, str):
        layout = parse_composed(layout)
    bytes_per = dtype_bits(dtype) // 8
    logT = elements_per_16B(dtype).bit_length() - 1
    if isinstance(layout, Layout):
        sw_bytes = 0 if swizzle is None else swizzle
        _swizzle_B(sw_bytes)
        return sw_bytes, 0, layout, ("pre-swizzle layout; swizzle given by the caller" if sw_bytes else "")
    if not isinstance(layout, ComposedLayout):
        raise LayoutError(f"{op}: {layout!r} is not a Layout, a ComposedLayout or layout text")
    if not isinstance(layout.outer, Swizzle) or not isinstance(layout.inner, Layout):
        raise LayoutError(f"{op}: {layout} is not 'Swizzle o offset o Layout', the form of a wgmma operand")
    sw = layout.outer
    if sw.B == 0:
        found = 0
    else:
        if sw.B not in (1, 2, 3) or sw.S != 3:
            raise LayoutError(
                f"{op}: swizzle {sw.ptx} is not a wgmma swizzle mode: expected Swizzle<B,4,3> on bytes "
                f"(or Swizzle<B,{logT},3> on {dtype_name(dtype)} elements) with B in 1..3"
            )
        if sw.M == 4 and swizzle_unit in ("auto", "byte") or logT == sw.M and swizzle_unit in ("auto", "element"):
            pass
        else:
            want = {"auto": f"Swizzle<{sw.B},4,3> (bytes) or Swizzle<{sw.B},{logT},3> (elements)",
                    "byte": f"Swizzle<{sw.B},4,3>", "element": f"Swizzle<{sw.B},{logT},3>"}[swizzle_unit]
            raise LayoutError(
                f"{op}: swizzle {sw.ptx} does not fit {dtype_name(dtype)} ({bytes_per} B elements): "
                f"the {16 << sw.B}B mode is {want}"
            )
        found = 16 << sw.B
    if swizzle is not None and _swizzle_B(swizzle) is not None and swizzle != found:
        raise LayoutError(f"{op}: swizzle={swizzle} was asked for but the layout carries {sw.ptx} ({found}B mode)")
    off = layout.offset
    if not isinstance(off, int):
        raise LayoutError(f"{op}: offset {off} of {layout} is symbolic; substitute values first")
    return found, off, layout.inner, ""


def _mode_tables(inner: Layout) -> tuple[np.ndarray, np.ndarray]:
    op = "descriptor_from_layout"
    if not inner.is_static:
        raise LayoutError(f"{op}: layout {inner} has symbolic entries; substitute values first")
    if len(inner) != 2:
        raise LayoutError(f"{op}: layout {inner} has rank {len(inner)}; a wgmma operand is rank 2 (MN, K)")
    return inner[0].table(), inner[1].table()


def _first_mismatch(got: np.ndarray, want: np.ndarray) -> int | None:
    bad = np.nonzero(got != want)[0]
    return None if len(bad) == 0 else int(bad[0])


def _derive_modes(
    f: np.ndarray, g: np.ndarray, dtype: str, swizzle: int, major: str | None, *, context: str = ""
) -> tuple[CanonicalParams, list[str], list[str]]:
    """Solve the canonical parameters from the MN-mode offsets f and the K-mode offsets g (elements)."""
    op = "descriptor_from_layout"
    dt = dtype_name(dtype)
    T = elements_per_16B(dt)
    nb = dtype_bits(dt) // 8
    W = max(1, swizzle // 16)
    sw_name = f"{swizzle}B-swizzled" if swizzle else "no-swizzle"
    n_mn, n_k = len(f), len(g)
    issues: list[str] = []
    notes: list[str] = []
    if major is None:
        f_unit = n_mn > 1 and f[1] == 1
        g_unit = n_k > 1 and g[1] == 1
        if f_unit == g_unit:
            raise LayoutError(
                f"{op}: cannot tell the major mode of {context}: stride-1 step in "
                f"{'both modes' if f_unit else 'neither mode'} (MN mode starts {f[:2].tolist()}, "
                f"K mode starts {g[:2].tolist()}); pass major='K' or 'MN'"
            )
        major = "MN" if f_unit else "K"
    major = operand_major(major)

    def check_bytes(name: str, elems: int | None) -> None:
        if elems is None:
            return
        if elems <= 0:
            raise LayoutError(f"{op}: {name} = {elems} elements of {context} is not positive")
        if (elems * nb) % 16:
            raise LayoutError(
                f"{op}: {name} = {elems} elements = {elems * nb} bytes of {context} is not a multiple of 16 bytes"
            )

    def mismatch(mode: str, idx: int, got: int, want: int, form: str) -> LayoutError:
        return LayoutError(
            f"{op}: {context} is not the canonical {major}-major {sw_name} form {form}: "
            f"{mode} mode offset at index {idx} is {got}, the form gives {want}"
        )

    if major == "K":
        form = f"((8,m),(T,2k)):(({'T' if not swizzle else f'{W}T'},SBO),(1,{'LBO' if not swizzle else 'T'}))"
        if n_mn % 8:
            raise LayoutError(f"{op}: K-major {context} has MN extent {n_mn}, not a multiple of 8 rows")
        if n_k % (2 * T):
            raise LayoutError(
                f"{op}: K-major {context} has K extent {n_k} {dt} elements = {n_k * nb} B, not a multiple of "
                f"2T = {2 * T} elements (two 16-byte core-matrix columns)"
            )
        m, k = n_mn // 8, n_k // (2 * T)
        pitch = int(f[1])
        if (pitch * nb) % 16:
            raise LayoutError(
                f"{op}: stride {pitch} of the row mode of {context} is {pitch * nb} bytes, "
                "not a multiple of 16 bytes"
            )
        if swizzle == 0 and pitch != T:
            hint = f"; a {pitch * nb} B pitch is the {pitch * nb}B swizzle mode" if pitch * nb in (32, 64, 128) else ""
            raise LayoutError(
                f"{op}: the no-swizzle K-major form needs a 16 B row pitch (T = {T} elements); "
                f"{context} has {pitch} elements = {pitch * nb} B{hint}"
            )
        if swizzle and pitch * nb != swizzle:
            raise LayoutError(
                f"{op}: swizzle {canonical_swizzle(swizzle).ptx} ({swizzle}B) does not match the "
                f"{pitch * nb} B row pitch of {context}"
            )
        sbo = int(f[8]) if m > 1 else None
        rows = np.arange(n_mn)
        want_f = (rows % 8) * pitch + (rows // 8) * (sbo or 0)
        bad = _first_mismatch(f, want_f)
        if bad is not None:
            raise mismatch("MN", bad, int(f[bad]), int(want_f[bad]), form)
        cols = np.arange(n_k)
        if swizzle == 0:
            lbo = int(g[T])
            want_g = (cols % T) + (cols // T) * lbo
        else:
            lbo = None
            want_g = cols
        bad = _first_mismatch(g, want_g)
        if bad is not None:
            if swizzle and bad % T == 0 and n_k > W * T and bad >= W * T:
                raise LayoutError(
                    f"{op}: K mode of {context} leaves the {swizzle}B swizzle row after {W * T} elements "
                    f"(offset {int(g[bad])} at k={bad}); one descriptor describes one swizzle-atom column: "
                    "use k_block_descriptors for tiles wider than the atom"
                )
            raise mismatch("K", bad, int(g[bad]), int(want_g[bad]), form)
        if swizzle and 2 * k * T * nb > swizzle:
            issues.append(
                f"K extent 2k*16 = {2 * k * 16} B exceeds the {swizzle} B swizzle row: consecutive rows overlap "
                f"(offset T*W = {W * T} is reached by both (row 1, k=0) and (row 0, k={W * T})); the hardware "
                f"reads K = 32 bytes per instruction and strides between rows by {swizzle} B"
            )
    else:
        form = (
            "((T,1,m),(8,k)):((1,T,SBO),(T,LBO))" if not swizzle else f"((T,{W},m),(8,k)):((1,T,LBO),({W}T,SBO))"
        )
        blk = W * T
        if n_mn % blk:
            raise LayoutError(
                f"{op}: MN-major {context} has MN extent {n_mn}, not a multiple of {blk} "
                f"({W} x 16 B of {dt})"
            )
        if n_k % 8:
            raise LayoutError(f"{op}: MN-major {context} has K extent {n_k}, not a multiple of 8")
        m, k = n_mn // blk, n_k // 8
        pitch = int(g[1])
        if (pitch * nb) % 16:
            raise LayoutError(
                f"{op}: stride {pitch} of the K mode of {context} is {pitch * nb} bytes, not a multiple of 16 bytes"
            )
        if swizzle == 0 and pitch != T:
            hint = f"; a {pitch * nb} B pitch is the {pitch * nb}B swizzle mode" if pitch * nb in (32, 64, 128) else ""
            raise LayoutError(
                f"{op}: the no-swizzle MN-major form needs a 16 B K-row pitch (T = {T} elements); "
                f"{context} has {pitch} elements = {pitch * nb} B{hint}"
            )
        if swizzle and pitch * nb != swizzle:
            raise LayoutError(
                f"{op}: swizzle {canonical_swizzle(swizzle).ptx} ({swizzle}B) does not match the "
                f"{pitch * nb} B row pitch of {context}"
            )
        idx = np.arange(n_mn)
        big = int(f[blk]) if m > 1 else None
        want_f = (idx % blk) + (idx // blk) * (big or 0)
        bad = _first_mismatch(f, want_f)
        if bad is not None:
            raise mismatch("MN", bad, int(f[bad]), int(want_f[bad]), form)
        kk = np.arange(n_k)
        kbig = int(g[8]) if k > 1 else None
        want_g = (kk % 8) * pitch + (kk // 8) * (kbig or 0)
        bad = _first_mismatch(g, want_g)
        if bad is not None:
            raise mismatch("K", bad, int(g[bad]), int(want_g[bad]), form)
        if swizzle:
            lbo, sbo = big, kbig
        else:
            lbo, sbo = kbig, big
        if dt not in ("f16", "bf16"):
            notes.append(
                f"wgmma (sm_90) reads MN-major (transposed) operands only for f16/bf16; {dt} must be K-major"
            )
    check_bytes("LBO", lbo)
    check_bytes("SBO", sbo)
    offsets = np.add.outer(f, g).ravel()
    distinct = _distinct_count(offsets)
    if distinct != len(offsets) and not any("overlap" in s for s in issues):
        issues.append(f"not injective: {len(offsets)} coordinates map to {distinct} distinct offsets")
    return CanonicalParams(major, swizzle, dt, T, m, k, lbo, sbo), issues, notes


def _distinct_count(a: np.ndarray) -> int:
    """How many distinct values the int array ``a`` holds: marked in a table over its range when that is at most 8x
    its length (no sort), else by ``np.unique``."""
    if a.size < 2:
        return int(a.size)
    lo, hi = int(a.min()), int(a.max())
    if hi - lo > 8 * a.size:
        return len(np.unique(a))
    seen = np.zeros(hi - lo + 1, dtype=bool)
    seen[a - lo] = True
    return int(np.count_nonzero(seen))


def _descriptor(params: CanonicalParams, start: int, pattern_start: int, target: str = "sm_90") -> MatrixDescriptor:
    nb = params.bytes_per_element
    if params.major == "K" and params.swizzle:
        lbo_b = 16  # "not used, assumed to be 1" (encoded)
    else:
        lbo_b = 0 if params.lbo is None else params.lbo * nb
    sbo_b = 0 if params.sbo is None else params.sbo * nb
    if params.swizzle and pattern_start % 128:
        raise LayoutError(
            f"descriptor_from_layout: the swizzle pattern starts at byte {pattern_start}, not a multiple of "
            "128 B; the base-offset field (pattern start >> 7) & 7 cannot express that"
        )
    if target not in ("sm_90", "sm_100"):
        raise LayoutError(f"descriptor_from_layout: target {target!r} is not 'sm_90' or 'sm_100'")
    cls = MatrixDescriptor
    if target != "sm_90":  # the sm_100 word (tcgen05), which extends sm_90's
        from ..blackwell.descriptor import Tcgen05Descriptor

        cls = Tcgen05Descriptor
    return cls(
        start_address=start,
        leading_byte_offset=lbo_b,
        stride_byte_offset=sbo_b,
        base_offset=base_offset_for(pattern_start, params.swizzle),
        swizzle=params.swizzle,
    )


def descriptor_from_layout(
    layout: Any,
    dtype: str,
    *,
    major: str | None = None,
    swizzle: int | None = None,
    start_address: int = 0,
    swizzle_unit: str = "auto",
    strict: bool = False,
    target: str = "sm_90",
) -> DescriptorDerivation:
    """descriptor_from_layout(L, dtype) -> the sm_90 descriptor d with L = canonical_layout(d.params).

    ``layout`` is one operand in shared memory, (mn, k) -> element offset: a
    ``ComposedLayout`` ``Swizzle o offset o Layout`` (either swizzle spelling, see
    the module doc), a plain ``Layout`` (no swizzle, or the pre-swizzle layout when
    ``swizzle=`` is given), or CuTe/PTX text. ``major`` and the swizzle mode are
    inferred when not given. ``start_address`` is the shared-memory byte address of
    the swizzle pattern's origin (offset 0); the descriptor's start address is
    ``start_address + offset * bytes`` and its base offset follows the PTX rule
    (:func:`~layoutalg.nvidia.common.descriptor.base_offset_for`). ``target="sm_100"``
    returns the same fields as a :class:`~layoutalg.nvidia.blackwell.descriptor.Tcgen05Descriptor`
    (tcgen05 reads the same canonical forms; not checked on hardware); tcgen05-only operands (the
    ``128B_base32B`` mode, 4-bit types) go to :func:`layoutalg.nvidia.blackwell.umma_smem.descriptor_from_layout`.

    Raises LayoutError when the layout is not of a canonical form (naming the
    mode, index and the offending stride). When it matches a form but the hardware
    could not read it as written (e.g. the ISA's own Figure 167, whose rows overlap),
    the descriptor is still derived, the problems are in ``.issues`` and a
    :class:`~layoutalg.errors.LayoutWarning` says so; ``strict=True`` raises instead.

    >>> d = descriptor_from_layout("Swizzle<1,4,3> o ((8,2,2),(8,2)):((1,8,128),(16,256))", "bf16")
    >>> d.params
    CanonicalParams(major='MN', swizzle=32, dtype='bf16', T=8, m=2, k=2, lbo=128, sbo=256)
    >>> d.lbo_encoded, d.sbo_encoded, hex(d.encode())
    (16, 32, '0xc000002000100000')
    """
    if target == "sm_100" and _tcgen05_only(layout, dtype, swizzle):
        # the 128B_base32B mode and 4-bit types exist on tcgen05 only: layoutalg.nvidia.blackwell.umma_smem derives them
        # (asked through layoutalg.hooks, which umma_smem fills on import: no import circle wgmma <-> umma_smem)
        umma_descriptor = service("umma_descriptor_from_layout")
        return umma_descriptor(layout, dtype, major=major, start_address=start_address, strict=strict)  # type: ignore[no-any-return]
    sw, off, inner, unit_note = _split(layout, dtype, swizzle, swizzle_unit)
    f, g = _mode_tables(inner)
    params, issues, notes = _derive_modes(f, g, dtype, sw, major, context=str(inner))
    if unit_note:
        notes.append(unit_note)
    nb = params.bytes_per_element
    if (off * nb) % 16 or off < 0:
        raise LayoutError(
            f"descriptor_from_layout: offset {off} elements = {off * nb} B is not a non-negative multiple of 16 bytes"
        )
    desc = _descriptor(params, start_address + off * nb, start_address, target)
    if issues:
        msg = f"descriptor_from_layout: {inner} matches the canonical form but " + "; ".join(issues)
        if strict:
            raise LayoutError(msg)
        warnings.warn(msg, LayoutWarning, stacklevel=2)
    return DescriptorDerivation(desc, params, start_address, tuple(issues), tuple(notes))


def _tcgen05_only(layout: Any, dtype: Any, swizzle: Any) -> bool:
    """True for a tcgen05-only operand: 4-bit elements, or the 128B_base32B mode (Swizzle<2,5,2> on bytes)."""
    if swizzle == "128B_base32B":
        return True
    try:
        dtype_name(dtype)
    except LayoutError:
        return True
    if isinstance(layout, str):
        layout = parse_composed(layout)
    return isinstance(layout, ComposedLayout) and isinstance(layout.outer, Swizzle) and layout.outer.S == 2


# --- k-blocks of a tile ---------------------------------------------------------------------
_INSTR = re.compile(r"^m(\d+)n(\d+)k(\d+)$")


def parse_instruction(instruction: str, dtype: str) -> tuple[int, int, int]:
    """(M, N, K) of a wgmma shape 'm64nNkK', checked: M = 64, N in 8..256 step 8, K * bits = 256 (32 bytes).

    >>> parse_instruction("m64n128k16", "bf16"), parse_instruction("m64n8k8", "tf32")
    ((64, 128, 16), (64, 8, 8))
    """
    mt = _INSTR.match(instruction.strip().lower()) if isinstance(instruction, str) else None
    if not mt:
        raise LayoutError(f"k_block_descriptors: instruction {instruction!r} is not a shape like 'm64n128k16'")
    M, N, K = (int(x) for x in mt.groups())
    bits = dtype_bits(dtype)
    if M != 64:
        raise LayoutError(f"k_block_descriptors: {instruction}: wgmma has M = 64, got {M}")
    if N % 8 or not 8 <= N <= 256:
        raise LayoutError(f"k_block_descriptors: {instruction}: N = {N} is not a multiple of 8 in [8, 256]")
    if K * bits != 256:
        raise LayoutError(
            f"k_block_descriptors: {instruction}: K = {K} {dtype_name(dtype)} elements = {K * bits // 8} bytes; "
            f"wgmma reads K = 32 bytes per instruction (k{256 // bits} for {dtype_name(dtype)})"
        )
    return M, N, K


@dataclass(frozen=True)
class KBlock:
    """One instruction's slice of a tile: block indices, byte offset from the tile origin, derivation."""

    mn_block: int
    k_block: int
    offset_bytes: int
    derivation: DescriptorDerivation = field(repr=False)

    @property
    def descriptor(self) -> MatrixDescriptor:
        """The descriptor of this slice."""
        return self.derivation.descriptor

    def __repr__(self) -> str:
        d = self.descriptor
        return (f"KBlock(mn_block={self.mn_block}, k_block={self.k_block}, offset_bytes={self.offset_bytes}, "
                f"descriptor={int(d.encode()):#018x}, start_address={d.start_address:#x})")


def k_block_descriptors(
    layout: Any,
    dtype: str,
    instruction: str = "m64n128k16",
    *,
    operand: str = "A",
    major: str | None = None,
    swizzle: int | None = None,
    start_address: int = 0,
    mn_block: int | None = None,
    swizzle_unit: str = "auto",
) -> tuple[KBlock, ...]:
    """The descriptors a mainloop issues for a tile: slice (i, j) = rows [i*MNb, (i+1)*MNb) x cols [j*K, (j+1)*K).

    MNb = 64 for operand A, N for operand B; K = 32 bytes of ``dtype``. Each slice
    must itself be canonical; its descriptor starts at ``start_address + bytes *
    L(i*MNb, j*K)`` (the unswizzled offset, as CuTe's descriptor iterator adds it),
    while the base offset stays that of the tile's pattern start. By default (``mn_block=None``)
    every slice of the tile is returned (MN-block-major order); ``mn_block=i`` returns only that
    MN block's k-blocks.

    For a 128B-swizzled K-major bf16 tile, k-blocks step by 16 elements = +32 B; a 128-row tile has
    two MN blocks of 64 rows for operand A:

    >>> from layoutalg.nvidia.hopper.wgmma import tile
    >>> [kb.offset_bytes for kb in k_block_descriptors(tile("K", 128, "bf16", (64, 64)), "bf16")]
    [0, 32, 64, 96]
    >>> [(kb.mn_block, kb.k_block) for kb in k_block_descriptors(tile("K", 128, "bf16", (128, 64)), "bf16")]
    [(0, 0), (0, 1), (0, 2), (0, 3), (1, 0), (1, 1), (1, 2), (1, 3)]
    >>> k_block_descriptors(tile("K", 128, "bf16", (128, 64)), "bf16", mn_block=1)[0]
    KBlock(mn_block=1, k_block=0, offset_bytes=8192, descriptor=0x4000004000010200, start_address=0x2000)
    """
    op = "k_block_descriptors"
    M, N, K = parse_instruction(instruction, dtype)
    if operand not in ("A", "B"):
        raise LayoutError(f"{op}: operand {operand!r} is not 'A' or 'B'")
    mnb = M if operand == "A" else N
    sw, off, inner, _ = _split(layout, dtype, swizzle, swizzle_unit)
    f, g = _mode_tables(inner)
    n_mn, n_k = len(f), len(g)
    if n_mn % mnb or n_k % K:
        raise LayoutError(
            f"{op}: tile {n_mn}x{n_k} is not a multiple of the {instruction} operand {operand} block {mnb}x{K}"
        )
    nb = dtype_bits(dtype) // 8
    if mn_block is not None and (isinstance(mn_block, bool) or not isinstance(mn_block, int)
                                 or not 0 <= mn_block < n_mn // mnb):
        raise LayoutError(f"{op}: mn_block {mn_block!r} is not an MN block of the tile: 0 .. {n_mn // mnb - 1} "
                          f"({n_mn} rows in blocks of {mnb}), or None for all")
    blocks = range(n_mn // mnb) if mn_block is None else [mn_block]
    out = []
    for i in blocks:
        fi = f[i * mnb:(i + 1) * mnb]
        for j in range(n_k // K):
            gj = g[j * K:(j + 1) * K]
            base = int(fi[0] + gj[0])
            ctx = f"block (mn={i}, k={j}) of {inner}"
            params, issues, notes = _derive_modes(fi - fi[0], gj - gj[0], dtype, sw, major, context=ctx)
            if issues:
                raise LayoutError(f"{op}: {ctx}: " + "; ".join(issues))
            if params.major == "MN" and params.dtype not in ("f16", "bf16"):
                raise LayoutError(f"{op}: {ctx}: " + notes[0])
            elems = off + base
            if (elems * nb) % 16 or elems < 0:
                raise LayoutError(f"{op}: {ctx} starts at {elems * nb} B, not a multiple of 16 bytes")
            desc = _descriptor(params, start_address + elems * nb, start_address)
            out.append(KBlock(i, j, elems * nb, DescriptorDerivation(desc, params, start_address, (), tuple(notes))))
    return tuple(out)


# --- the seed's worked examples -------------------------------------------------------------
@dataclass(frozen=True)
class SeedExample:
    """One worked example of PTX ISA 9.7.15.5.1.2.1.3 (seed 002): the seed's values and ours side by side."""

    figure: str
    title: str
    dtype: str
    exact: str
    canonical: str
    seed: dict
    derived: dict
    derivation: DescriptorDerivation | None = field(repr=False, default=None)

    @property
    def agrees(self) -> dict:
        """Per parameter: does our derived value equal the seed's (None where the seed gives none)."""
        return {key: (None if self.seed.get(key) is None else self.seed[key] == self.derived.get(key)) for key in self.seed}


# Transcribed from /work/shared/seeds/002 (PTX ISA, "Canonical Layouts", Examples).
# LBO/SBO as the seed writes them: element count * sizeof(type), i.e. bytes.
_SEED_002 = [
    ("Figure 166", "K-Major, no-swizzling and tf32 type", "tf32",
     "Swizzle<0,4,3> o ((8,2),(4,4)):((4,32),(1,64))",
     "Swizzle<0,4,3> o ((8,m),(T,2k)):((1T,SBO),(1,LBO))",
     dict(T=4, m=2, k=2, LBO=64 * 4, SBO=32 * 4, LBO_encoded=16, SBO_encoded=8)),
    ("Figure 167", "K-Major, 32B swizzling and tf32 type", "tf32",
     "Swizzle<1,4,3> o ((8,2),(4,4)):((8,64),(1,4))",
     "Swizzle<1,4,3> o ((8,m),(T,2k)):((2T,SBO),(1,T))",
     dict(T=4, m=2, k=2, LBO="NA", SBO=64 * 4, LBO_encoded=1, SBO_encoded=16)),
    ("Figure 168", "MN-Major, no-swizzling and bf16 type", "bf16",
     "Swizzle<0,4,3> o ((8,1,2),(8,2)):((1,8,64),(8,128))",
     "Swizzle<0,4,3> o ((T,1,m),(8,k)):((1,T,SBO),(1T,LBO))",
     dict(T=8, m=2, k=2, LBO=128 * 2, SBO=64 * 2, LBO_encoded=16, SBO_encoded=8)),
    ("Figure 169", "MN-Major, 32B swizzling and bf16 type", "bf16",
     "Swizzle<1,4,3> o ((8,2,2),(8,2)):((1,8,128),(16,256))",
     "Swizzle<1,4,3> o ((T,2,m),(8,k)):((1,T,LBO),(2T,SBO))",
     dict(T=8, m=2, k=2, LBO=128 * 2, SBO=256 * 2, LBO_encoded=16, SBO_encoded=32)),
    ("Figure 170", "MN-Major, 64B swizzling and bf16 type", "bf16",
     "Swizzle<2,4,3> o ((8,4,2),(8,2)):((1,8,256),(32,512))",
     "Swizzle<2,4,3> o ((T,4,m),(8,k)):((1,T,LBO),(4T,SBO))",
     # the seed's excerpt ends before the SBO encoding row of this example
     dict(T=8, m=2, k=2, LBO=256 * 2, SBO=512 * 2, LBO_encoded=32, SBO_encoded=None)),
]


def seed_examples() -> list[SeedExample]:
    """The five worked examples of seed 002, each derived from its exact layout as the seed spells it.

    ``seed`` holds the seed's T, m, k, LBO, SBO (bytes; "NA" where the seed says so)
    and encodings; ``derived`` ours, from :func:`descriptor_from_layout` (non-strict:
    the 32B tf32 example overlaps itself, see ``derivation.issues``).

    >>> [ex.figure for ex in seed_examples() if not all(v in (True, None) for v in ex.agrees.values())]
    []
    """
    out = []
    for fig, title, dt, exact, canon, seed in _SEED_002:
        with warnings.catch_warnings():  # the flaw of Figure 167 is recorded in ``issues`` instead
            warnings.simplefilter("ignore", LayoutWarning)
            d = descriptor_from_layout(exact, dt, strict=False)
        p = d.params
        derived: dict[str, Any] = dict(
            T=p.T, m=p.m, k=p.k,
            LBO="NA" if p.lbo is None else p.lbo_bytes, SBO=p.sbo_bytes,
            LBO_encoded=d.lbo_encoded, SBO_encoded=d.sbo_encoded,
            word=d.encode(), issues=d.issues,
        )
        out.append(SeedExample(fig, title, dt, exact, canon, dict(cast(dict, seed)), derived, d))
    return out


from .wgmma_fragments import fragment  # noqa: E402,F401  (register fragments: wgmma_fragments.py)
