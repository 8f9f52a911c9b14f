"""tcgen05 (UMMA) shared-memory operands: CuTe's canonical smem atoms, their tiles, and descriptors.

``tcgen05.mma`` reads A and B from shared memory through the 64-bit descriptor of
:class:`~layoutalg.nvidia.blackwell.descriptor.Tcgen05Descriptor` -- the same canonical layouts as Hopper's
wgmma (:mod:`layoutalg.nvidia.hopper.wgmma`), plus one mode wgmma lacks: **128B swizzle with 32-byte
atomicity** (``128B_base32B``, layout-type code 1), ``Swizzle<2,5,2>`` on byte addresses, MN-major
only. CuTe writes its atom in bits: ``Sw<2,5,2> o (1024,4):(1,1024)`` -- 128-byte MN rows, 4 K rows,
32-byte chunks swapped by K row.

CuTe's atoms (``UMMA::Layout_{MN,K}_{INTER,SW32,SW64,SW128}_Atom<T>`` and
``UMMA::Layout_MN_SW128_32B_Atom<T>``) are bit layouts upcast to the element type; this module
builds them for every element width down to 4 bits (packed fp4 of ``kind::mxf4*``; fp6/fp4 of
``kind::f8f6f4`` are stored one per byte: pass ``"e2m1_unpacked"`` or ``8``; CuTe's own
``float_e2m1_unpacksmem_t`` gives CuTe's 4-bit atoms, :func:`smem_bits` says why). By hand: the K-major
128B atom of a 4-bit type is 8 rows of 128 bytes = 256 elements, ``(8,256):(256,1)``; element
``(1, 0)`` is byte 128, whose 16-byte chunk 8 is XORed with row 1 -> byte 144 = element 288::

    >>> a = smem_atom("K", 128, "e2m1")
    >>> str(a), a(1, 0)
    ('Sw<3,5,3> o _0 o (8,256):(256,1)', 288)
    >>> print(smem_atom("MN", "128B_base32B", "bf16", swizzle_unit="byte"))
    Sw<2,5,2> o _0 o (64,4):(1,64)

The descriptor of a tile is *derived* from its layout (:func:`descriptor_from_layout`): the
standard modes through :func:`layoutalg.nvidia.hopper.wgmma.descriptor_from_layout` (4-bit tiles read as
the byte tile they are), the ``128B_base32B`` mode here. :func:`k_block_descriptors` lists the
words a mainloop issues, stepped as CuTe's ``UMMA::DescriptorIterator`` steps them: one descriptor
made from the first k-block, every other block adding its (unswizzled) 16-byte offset to the start
address::

    >>> t = smem_tile("K", 128, "bf16", (128, 64))
    >>> [hex(kb.descriptor.encode()) for kb in k_block_descriptors(t, "bf16", K=16)]
    ['0x4000404000010000', '0x4000404000010002', '0x4000404000010004', '0x4000404000010006']

Checked against CuTe C++ 4.2 on the host (the atoms, ``tile_to_shape`` / ``tile_to_mma_shape``
of them, ``UMMA::make_umma_desc<Major>`` words and the k-block words of ``make_fragment_A/B``; CuTe's
start field is 0 on the host) and against the smem descriptors in Triton 3.6's PTX for sm_100a.
**None of it ran on sm_100 hardware.**
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...algebra import logical_divide, tile_to_shape, tiled_divide, upcast
from ...composed import ComposedLayout
from ...errors import LayoutError, LayoutWarning
from ...hooks import provide
from ...layout import Layout, make_layout
from ...parse import parse_composed
from ...swizzle import Swizzle
from ..hopper import wgmma as _wg
from ..common.descriptor import DerivedDescriptor, base_offset_for
from .descriptor import Tcgen05Descriptor

__all__ = [
    "SMEM_ATOM_NAMES",
    "smem_bits",
    "smem_swizzle",
    "smem_atom",
    "smem_atom_by_name",
    "smem_tile",
    "tile_to_mma_shape",
    "UMMADescriptorDerivation",
    "UMMAKBlock",
    "descriptor_from_layout",
    "k_block_descriptors",
]

BASE32B = "128B_base32B"

#: CuTe's UMMA smem atom names -> (major, swizzle): 0 (interleave), 32, 64, 128 bytes or "128B_base32B"
SMEM_ATOM_NAMES: dict[str, tuple[str, Any]] = {
    "Layout_MN_INTER_Atom": ("MN", 0), "Layout_MN_SW32_Atom": ("MN", 32), "Layout_MN_SW64_Atom": ("MN", 64),
    "Layout_MN_SW128_Atom": ("MN", 128), "Layout_MN_SW128_32B_Atom": ("MN", BASE32B),
    "Layout_K_INTER_Atom": ("K", 0), "Layout_K_SW32_Atom": ("K", 32), "Layout_K_SW64_Atom": ("K", 64),
    "Layout_K_SW128_Atom": ("K", 128),
}

_BITS = {
    "tf32": 32, "f32": 32, "float": 32, "s32": 32, "int32_t": 32, "tfloat32_t": 32,
    "f16": 16, "bf16": 16, "half_t": 16, "bfloat16_t": 16, "half": 16,
    "s8": 8, "u8": 8, "int8_t": 8, "uint8_t": 8, "e4m3": 8, "e5m2": 8, "float_e4m3_t": 8, "float_e5m2_t": 8,
    "ue8m0": 8, "ue4m3": 8, "float_ue8m0_t": 8, "float_ue4m3_t": 8,
    "e2m1": 4, "float_e2m1_t": 4,
}


def smem_bits(dtype: Any) -> int:
    """Bits of one element in shared memory: 32, 16, 8 or 4 (``e2m1`` packed).

    Two spellings of kind::f8f6f4's fp6/fp4, on purpose different:

    - CuTe's ``float_e2m1_unpacksmem_t`` is CuTe's type, and gives CuTe's atoms:
      ``sizeof_bits_v<float_e2m1_unpacksmem_t>`` is 4, so ``UMMA::Layout_K_INTER_Atom<float_e2m1_unpacksmem_t>``
      is built on 4-bit elements (``(8,32):(32,1)``, ``smem_ptr[4b]``), as for ``float_e2m1_t``. CuTe
      refuses its atoms on the 6-bit ``float_e2m3_unpacksmem_t`` / ``float_e3m2_unpacksmem_t``
      ("Divisibility condition"), and so does this function.
    - layoutalg's own ``"e2m1_unpacked"`` / ``"e2m3_unpacked"`` / ``"e3m2_unpacked"`` is the storage the
      tensor core reads in kind::f8f6f4, one element per byte: 8 bits. CUTLASS kernels allocate such
      operands as ``uint8_t`` (the byte atoms, ``UMMA::Layout_K_SW128_Atom<uint8_t>``).

    >>> smem_bits("bf16"), smem_bits("e2m1"), smem_bits("e2m1_unpacked"), smem_bits(32)
    (16, 4, 8, 32)
    >>> smem_bits("cutlass::detail::float_e2m1_unpacksmem_t")
    4
    """
    if isinstance(dtype, int) and not isinstance(dtype, bool):
        if dtype not in (4, 8, 16, 32):
            raise LayoutError(f"smem_bits: {dtype} bits is not a UMMA shared-memory element width (4, 8, 16, 32)")
        return dtype
    if not isinstance(dtype, str):
        raise LayoutError(f"smem_bits: {dtype!r} is not a type name or a bit width")
    key = dtype.strip().lower().replace("cutlass::", "").replace("detail::", "")
    if key.endswith("_unpacksmem_t"):  # CuTe's type: its sizeof_bits (4 for e2m1; no atom on the 6-bit ones)
        base = key.replace("_unpacksmem_t", "").replace("float_", "")
        if base == "e2m1":
            return 4
        if base in ("e2m3", "e3m2"):
            raise LayoutError(f"smem_bits: CuTe builds no UMMA shared-memory atom on the 6-bit {dtype!r} (its upcast "
                              f"fails 'Divisibility condition'); for the one-per-byte storage of kind::f8f6f4 pass "
                              f"'{base}_unpacked' (8 bits; CUTLASS allocates it as uint8_t)")
    if key.endswith("_unpacked"):  # layoutalg's spelling of the one-per-byte storage
        base = key.replace("_unpacked", "")
        if base in ("e2m1", "e2m3", "e3m2", "float_e2m1_t", "float_e2m3_t", "float_e3m2_t"):
            return 8
    if key in ("e2m3", "e3m2", "float_e2m3_t", "float_e3m2_t"):
        raise LayoutError(f"smem_bits: {dtype!r} is a 6-bit type; kind::f8f6f4 stores it one per byte in shared "
                          f"memory: pass '{key.replace('float_', '').replace('_t', '')}_unpacked' (8 bits)")
    if key not in _BITS:
        raise LayoutError(f"smem_bits: unknown type {dtype!r}; known: {sorted(_BITS)} (+ '_unpacked' fp6/fp4)")
    return _BITS[key]


def _mode(swizzle: Any) -> Any:
    if swizzle == BASE32B or (isinstance(swizzle, str) and swizzle.upper().replace("_", "") in ("128BBASE32B", "SW12832B")):
        return BASE32B
    if isinstance(swizzle, bool) or swizzle not in (0, 32, 64, 128):
        raise LayoutError(f"umma_smem: swizzle {swizzle!r} is not 0 (interleave), 32, 64, 128 or '128B_base32B'")
    return int(swizzle)


def _major(major: Any) -> str:
    s = str(major).strip().upper().replace("UMMA::MAJOR::", "").replace("-MAJOR", "")
    if s == "K":
        return "K"
    if s in ("MN", "M", "N"):
        return "MN"
    raise LayoutError(f"umma_smem: major {major!r} is not 'K' or 'MN'")


def _log2(n: int) -> int:
    return n.bit_length() - 1


def smem_swizzle(swizzle: Any, dtype: Any = None, *, swizzle_unit: str = "byte") -> Swizzle:
    """The swizzle of a mode: ``Swizzle<B,4,3>`` (B = log2(bytes/16)) or ``Swizzle<2,5,2>`` (128B_base32B) on
    byte addresses; on element offsets M grows by log2(8/bits) (shrinks for wider types).

    >>> smem_swizzle("128B_base32B"), smem_swizzle(128, "e2m1", swizzle_unit="element"), smem_swizzle(64, "tf32", swizzle_unit="element")
    (Sw<2,5,2>, Sw<3,5,3>, Sw<2,2,3>)
    """
    mode = _mode(swizzle)
    sw = Swizzle(2, 5, 2) if mode == BASE32B else Swizzle(_log2(max(mode, 16) // 16), 4, 3)
    if swizzle_unit == "byte":
        return sw
    if swizzle_unit != "element":
        raise LayoutError(f"umma_smem: swizzle_unit {swizzle_unit!r} is not 'byte' or 'element'")
    if dtype is None:
        raise LayoutError("umma_smem: swizzle_unit='element' needs the dtype")
    bits = smem_bits(dtype)
    if mode == 0:
        return Swizzle(0, 4 + 3 - _log2(bits), 3) if bits >= 8 else Swizzle(0, 5, 3)
    return Swizzle(sw.B, sw.M + 3 - _log2(bits), sw.S)


def smem_atom(major: Any, swizzle: Any, dtype: Any, *, swizzle_unit: str = "element") -> ComposedLayout:
    """CuTe's ``UMMA::Layout_{MN,K}_{INTER,SW32,SW64,SW128}_Atom<T>`` / ``Layout_MN_SW128_32B_Atom<T>``:
    (mn, k) -> element offset, composed with the mode's swizzle (exact element form by default,
    ``swizzle_unit="byte"`` for CuTe's spelling, which keeps the swizzle on byte addresses).

    K-major: ``(8, R):(R, 1)``; MN-major: ``(R, 8):(1, R)``; R = the swizzle width in elements (16
    bytes for interleave); the base32B atom is ``(128 bytes, 4):(1, 128 bytes)``.

    >>> print(smem_atom("K", 128, "bf16", swizzle_unit="byte"))
    Sw<3,4,3> o _0 o (8,64):(64,1)
    >>> print(smem_atom("MN", 32, "tf32"))
    Sw<1,2,3> o _0 o (8,8):(1,8)
    """
    major, mode, bits = _major(major), _mode(swizzle), smem_bits(dtype)
    if mode == BASE32B:
        if major != "MN":
            raise LayoutError("smem_atom: the 128B_base32B mode is MN-major only (CuTe: invalid for Major-K)")
        r = 1024 // bits
        inner = Layout((r, 4), (1, r))
    else:
        r = (max(mode, 16) * 8) // bits
        inner = Layout((r, 8), (1, r)) if major == "MN" else Layout((8, r), (r, 1))
    return ComposedLayout(smem_swizzle(mode, dtype, swizzle_unit=swizzle_unit), 0, inner)


_ATOM_NAME = re.compile(r"^\s*(?:cute::)?(?:UMMA::|GMMA::)?(Layout_\w+?_Atom)\s*(?:<\s*(.*?)\s*>)?\s*$")


def smem_atom_by_name(name: str, dtype: Any = None, *, swizzle_unit: str = "element") -> ComposedLayout:
    """``smem_atom_by_name("UMMA::Layout_MN_SW128_32B_Atom<float_e2m1_t>")``: CuTe's names (the type in
    the brackets or as ``dtype``).

    >>> smem_atom_by_name("UMMA::Layout_K_SW64_Atom<half_t>") == smem_atom("K", 64, "f16")
    True
    """
    m = _ATOM_NAME.match(str(name))
    if not m or m.group(1) not in SMEM_ATOM_NAMES:
        raise LayoutError(f"smem_atom_by_name: {name!r} is not one of {sorted(SMEM_ATOM_NAMES)}")
    if (m.group(2) is None) == (dtype is None):
        raise LayoutError(f"smem_atom_by_name: give the element type once, in {name!r} or as dtype=")
    major, mode = SMEM_ATOM_NAMES[m.group(1)]
    return smem_atom(major, mode, dtype if dtype is not None else m.group(2), swizzle_unit=swizzle_unit)


def smem_tile(major: Any, swizzle: Any, dtype: Any, shape: Any, order: Any = None, *,
              swizzle_unit: str = "element") -> ComposedLayout:
    """``tile_to_shape(smem_atom(major, swizzle, dtype), shape, order)``: an operand tile ((MN, K), ...).

    >>> print(smem_tile("MN", "128B_base32B", "e2m1", (256, 64), swizzle_unit="byte"))
    Sw<2,5,2> o _0 o ((256,1),(4,16)):((1,0),(256,1024))
    """
    a = smem_atom(major, swizzle, dtype, swizzle_unit=swizzle_unit)
    try:
        return tile_to_shape(a, shape, order) if order is not None else tile_to_shape(a, shape)
    except LayoutError as e:
        raise LayoutError(f"smem_tile: {major}-major {swizzle} atom {a} does not tile {shape}: {e}") from None


def tile_to_mma_shape(atom: Any, mma_tile_shape: Any, order: Any = None) -> Any:
    """CuTe's ``UMMA::tile_to_mma_shape(atom, ((MMA_M, MMA_K), M_MMAs, K_MMAs, ...))``: the atom tiled to
    ``(MMA_M*M_MMAs, MMA_K*K_MMAs, ...)`` and divided back into ``((MMA_M,MMA_K), M_MMAs, K_MMAs, ...)``.

    >>> print(tile_to_mma_shape(smem_atom("K", 128, "bf16", swizzle_unit="byte"), ((128, 16), 1, 4)))
    Sw<3,4,3> o _0 o ((128,16),1,4):((64,1),0,16)
    """
    if not (isinstance(mma_tile_shape, tuple) and len(mma_tile_shape) >= 3 and isinstance(mma_tile_shape[0], tuple)
            and len(mma_tile_shape[0]) == 2):
        raise LayoutError(f"tile_to_mma_shape: {mma_tile_shape!r} is not ((MMA_M, MMA_N), M_MMAs, N_MMAs, ...)")
    mma0 = mma_tile_shape[0]

    def prod(x: Any) -> int:
        return int(np.prod([prod(y) for y in x])) if isinstance(x, tuple) else int(x)

    mn_shape = ((mma0[0], mma_tile_shape[1]), (mma0[1], mma_tile_shape[2])) + tuple(mma_tile_shape[3:])
    tiled = tile_to_shape(atom, mn_shape, order) if order is not None else tile_to_shape(atom, mn_shape)
    return tiled_divide(tiled, (prod(mma0[0]), prod(mma0[1])))


# ---------------------------------------------------------------------------------------------
# descriptors
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class UMMADescriptorDerivation(DerivedDescriptor):
    """descriptor_from_layout's answer: the tcgen05 descriptor and the solved canonical parameters.

    ``lbo_bytes``/``sbo_bytes`` are None where the form has no such stride or its mode has one block
    (the field then holds 0, or 16 B = 1 for the unused K-major swizzled LBO, as CuTe writes it).
    """

    descriptor: Tcgen05Descriptor
    major: str
    swizzle: Any
    bits: int
    m: int
    k: int
    lbo_bytes: int | None
    sbo_bytes: int | None
    pattern_start: int
    issues: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class UMMAKBlock:
    """One instruction's slice of a tile: block indices, byte offset from the tile origin, descriptor."""

    mn_block: int
    k_block: int
    offset_bytes: int
    descriptor: Tcgen05Descriptor
    derivation: UMMADescriptorDerivation = field(repr=False)


def _split(layout: Any, bits: int) -> tuple[Any, int, Layout]:
    """(mode, offset in elements, inner Layout) of a tile; accepts the byte and the element swizzle spellings."""
    op = "umma descriptor_from_layout"
    if isinstance(layout, str):
        layout = parse_composed(layout)
    if isinstance(layout, Layout):
        return 0, 0, layout
    if not isinstance(layout, ComposedLayout) or not isinstance(layout.outer, Swizzle) or not isinstance(layout.inner, Layout):
        raise LayoutError(f"{op}: {layout} is not 'Swizzle o offset o Layout' (or a Layout), the form of a UMMA operand")
    sw = layout.outer
    shift = 3 - _log2(bits)  # element-form M minus byte-form M
    found: Any = None
    if sw.B == 0:
        found = 0
    elif sw.S == 3 and sw.B in (1, 2, 3) and sw.M in (4, 4 + shift):
        found = 16 << sw.B
    elif (sw.B, sw.S) == (2, 2) and sw.M in (5, 5 + shift):
        found = BASE32B
    if found is None:
        raise LayoutError(f"{op}: swizzle {sw.ptx} is not a tcgen05 mode for {bits}-bit elements: Swizzle<B,4,3> "
                          f"(B = 1..3) or Swizzle<2,5,2> on bytes, or Swizzle<B,{4 + shift},3> / Swizzle<2,{5 + shift},2> "
                          "on elements")
    off = layout.offset
    if not isinstance(off, int):
        raise LayoutError(f"{op}: offset {off} of {layout} is symbolic; substitute values first")
    return found, off, mn_k_view(layout.inner)


def mn_k_view(inner: Layout) -> Layout:
    """CuTe's MMA-partitioned tile ``((MMA_MN,MMA_K),rest_MN,rest_K[,PIPE...])`` (``tile_to_mma_shape``, the
    DSL's print) as the rank-2 ``(MN, K)`` tile of its first pipeline stage; any other layout as it is.

    >>> str(mn_k_view(Layout(((128, 16), 1, 4, 3), ((64, 1), 0, 16, 8192))))
    '((128,1),(16,4)):((64,0),(1,16))'
    """
    shape = inner.shape
    if type(shape) is not tuple or len(shape) < 3 or type(shape[0]) is not tuple or len(shape[0]) != 2:
        return inner
    mma = inner[0]
    return make_layout(make_layout(mma[0], inner[1]), make_layout(mma[1], inner[2]))


def _tables(inner: Layout, op: str) -> tuple[np.ndarray, np.ndarray]:
    if not inner.is_static:
        raise LayoutError(f"{op}: layout {inner} has symbolic entries; substitute values first")
    if len(inner) != 2:
        raise LayoutError(f"{op}: layout {inner} has rank {len(inner)}; a UMMA operand is rank 2 (MN, K)")
    return np.asarray(inner[0].table()).ravel(), np.asarray(inner[1].table()).ravel()


def _derive_base32b(f: np.ndarray, g: np.ndarray, bits: int, major: str | None, ctx: str) -> tuple[int, int, int | None, int | None]:
    """(m, k, LBO, SBO) in elements of Swizzle<2,5,2> o ((R,m),(4,k)):((1,LBO),(R,SBO)), R = 128 bytes."""
    op = "umma descriptor_from_layout"
    if major is not None and _major(major) != "MN":
        raise LayoutError(f"{op}: the 128B_base32B mode is MN-major only; {ctx} was declared {major}-major")
    R = 1024 // bits
    form = f"((R,m),(4,k)):((1,LBO),(R,SBO)), R = {R} elements (128 B)"
    if len(f) % R or len(g) % 4:
        raise LayoutError(f"{op}: {ctx} is {len(f)}x{len(g)}, not a multiple of the 128B_base32B block {R}x4")
    m, k = len(f) // R, len(g) // 4
    lbo = int(f[R]) if m > 1 else None
    sbo = int(g[4]) if k > 1 else None
    idx = np.arange(len(f))
    want_f = idx % R + (idx // R) * (lbo or 0)
    kk = np.arange(len(g))
    want_g = (kk % 4) * R + (kk // 4) * (sbo or 0)
    for mode, got, want in (("MN", f, want_f), ("K", g, want_g)):
        bad = np.nonzero(got != want)[0]
        if len(bad):
            i = int(bad[0])
            raise LayoutError(f"{op}: {ctx} is not the canonical MN-major 128B_base32B form {form}: {mode} mode offset "
                              f"at index {i} is {int(got[i])}, the form gives {int(want[i])}")
    for name, v in (("LBO", lbo), ("SBO", sbo)):
        if v is not None and (v <= 0 or (v * bits) % 128):
            raise LayoutError(f"{op}: {name} = {v} elements of {ctx} is not a positive multiple of 16 bytes")
    return m, k, lbo, sbo


def _wgmma_name(bits: int) -> str:
    return {32: "tf32", 16: "f16", 8: "u8"}[bits]


def _derive(sw: Any, inner: Layout, bits: int, major: str | None, ctx: str) -> tuple[str, int, int, int | None, int | None,
                                                                                    list[str], list[str]]:
    """(major, m, k, LBO bytes, SBO bytes, issues, notes) of a tile's inner layout in swizzle mode ``sw``."""
    op = "umma descriptor_from_layout"
    if sw == BASE32B:
        f, g = _tables(inner, op)
        m, k, lbo, sbo = _derive_base32b(f, g, bits, major, ctx)
        return ("MN", m, k, None if lbo is None else lbo * bits // 8, None if sbo is None else sbo * bits // 8, [], [])
    four = bits == 4
    if four:
        # a 4-bit tile is the byte tile it packs: recast the inner layout (CuTe recasts to uint128_t)
        try:
            inner8 = upcast(inner, 2)
        except LayoutError as e:
            raise LayoutError(f"{op}: {ctx} does not pack into bytes (4-bit elements come in pairs): {e}") from None
        if int(inner8.size()) * 2 != int(inner.size()):
            raise LayoutError(f"{op}: {ctx} does not pack into bytes: no stride-1 mode of even extent")
        inner, bits = inner8, 8
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", LayoutWarning)
        try:
            d = _wg.descriptor_from_layout(inner, _wgmma_name(bits), major=major, swizzle=sw, target="sm_100")
        except LayoutError as e:
            if four:
                raise LayoutError(f"{op}: {ctx} (4-bit, read as the byte layout {inner}): {e}") from None
            raise
    issues = list(d.issues)
    notes = [n for n in d.notes if "wgmma (sm_90)" not in n and "pre-swizzle" not in n]
    p = d.params
    del caught
    return p.major, p.m, p.k, p.lbo_bytes, p.sbo_bytes, issues, notes


def _read_back(major: str, sw: Any, lbo_b: int | None, sbo_b: int | None, bits: int, f: np.ndarray, g: np.ndarray,
               ctx: str) -> None:
    """Check that the descriptor's canonical form (the PTX ISA's, written out in bytes) gives every element
    of the block its offset in the layout: (mn, k) -> f[mn] + g[k] (elements, pre-swizzle, from the block's
    origin). Raises LayoutError at the first element it misplaces (a layout no descriptor describes)."""
    lbo, sbo = lbo_b or 0, sbo_b or 0
    mn = np.arange(len(f))[:, None]
    k = np.arange(len(g))[None, :]
    if major == "K":
        kb = (k * bits) // 8
        if sw == 0:
            byte = (mn % 8) * 16 + (mn // 8) * sbo + (kb // 16) * lbo + kb % 16
        else:
            byte = (mn % 8) * sw + (mn // 8) * sbo + kb
        sub = (k * bits) % 8  # bit offset of a sub-byte element within its byte
    else:
        b = (mn * bits) // 8
        if sw == BASE32B:
            byte = b % 128 + (b // 128) * lbo + (k % 4) * 128 + (k // 4) * sbo
        elif sw == 0:
            byte = b % 16 + (b // 16) * sbo + (k % 8) * 16 + (k // 8) * lbo
        else:
            byte = b % sw + (b // sw) * lbo + (k % 8) * sw + (k // 8) * sbo
        sub = (mn * bits) % 8
    got = (byte * 8 + sub) // bits
    want = f[:, None] + g[None, :]
    bad = np.argwhere(got != want)
    if len(bad):
        i, j = (int(x) for x in bad[0])
        raise LayoutError(f"umma descriptor_from_layout: {ctx} is not the canonical {major}-major {sw} form its strides "
                          f"suggest: element ({i}, {j}) is at {int(want[i, j])}, the descriptor would read it at "
                          f"{int(got[i, j])}")


def _descriptor(major: str, sw: Any, lbo_b: int | None, sbo_b: int | None, start: int, pattern_start: int) -> Tcgen05Descriptor:
    if major == "K" and sw not in (0,):
        lbo = 16  # CuTe writes 1 (encoded) for the unused LBO of swizzled K-major layouts
    else:
        lbo = lbo_b or 0
    if sw not in (0,) and pattern_start % 128:
        raise LayoutError(f"umma descriptor_from_layout: the swizzle pattern starts at byte {pattern_start}, not a "
                          "multiple of 128 B; the base-offset field cannot express that")
    return Tcgen05Descriptor(start_address=start, leading_byte_offset=lbo, stride_byte_offset=sbo_b or 0,
                             base_offset=base_offset_for(pattern_start, sw), swizzle=sw)


def descriptor_from_layout(layout: Any, dtype: Any, *, major: str | None = None, start_address: int = 0,
                           strict: bool = False) -> UMMADescriptorDerivation:
    """The tcgen05 shared-memory descriptor of one operand tile, derived from its layout (mn, k) -> element.

    ``layout``: ``Swizzle o offset o Layout`` (byte or element swizzle spelling), a plain Layout (no
    swizzle) or CuTe text; ``dtype`` a type or bit width (:func:`smem_bits`). The tile must be one
    canonical form (one descriptor's worth: use :func:`k_block_descriptors` for a tile of several
    instructions). Version is 1, LBO mode 0 (relative), and the base offset follows the PTX rule
    from ``start_address`` (the byte address of the pattern's origin). Sound: before it returns, the
    descriptor's canonical form is checked to place every element of the block where the layout does.

    >>> d = descriptor_from_layout(smem_tile("MN", "128B_base32B", "bf16", (64, 8)), "bf16")
    >>> d.major, d.lbo_bytes, d.sbo_bytes, hex(d.encode())
    ('MN', None, 512, '0x2000402000000000')
    """
    bits = smem_bits(dtype)
    sw, off, inner = _split(layout, bits)
    major_, m, k, lbo_b, sbo_b, issues, notes = _derive(sw, inner, bits, major, str(inner))
    f, g = _tables(inner, "umma descriptor_from_layout")
    _read_back(major_, sw, lbo_b, sbo_b, bits, f - f[0], g - g[0], str(inner))
    if (off * bits) % 128 or off < 0:
        raise LayoutError(f"umma descriptor_from_layout: offset {off} elements = {off * bits / 8} B is not a "
                          "non-negative multiple of 16 bytes")
    desc = _descriptor(major_, sw, lbo_b, sbo_b, start_address + off * bits // 8, start_address)
    if issues:
        msg = f"umma descriptor_from_layout: {inner} matches the canonical form but " + "; ".join(issues)
        if strict:
            raise LayoutError(msg)
        warnings.warn(msg, LayoutWarning, stacklevel=2)
    return UMMADescriptorDerivation(desc, major_, sw, bits, m, k, lbo_b, sbo_b, start_address, tuple(issues), tuple(notes))


def k_block_descriptors(layout: Any, dtype: Any, atom: Any = None, *, operand: str | None = None, K: int | None = None,
                        mn_block: int | None = 0, k_blocks: Any = None, start_address: int = 0,
                        major: str | None = None) -> tuple[UMMAKBlock, ...]:
    """The descriptors a mainloop issues over a tile, as CuTe's ``DescriptorIterator`` steps them.

    The tile (mn, k) is cut into instruction blocks ``MNb x K``: ``MNb`` = the atom's M (A) or N (B)
    per CTA (``/ cta_group``), K the atom's K (K/2 for the compressed A of a sparse atom: 32 bytes) --
    or ``K=`` and the whole MN extent without an atom. ``operand``: ``"A"`` (default) or ``"B"`` of the
    atom. A ``_TS`` atom's A (tensor memory) has none.
    Like CuTe, the descriptor is made once from block (0, 0)'s layout and every block adds its
    unswizzled byte offset ``bytes * L(i*MNb, j*K)`` to the start address (base offset: that of the
    tile's pattern start); every block has block (0, 0)'s layout
    (a Layout is linear across block boundaries, so this is exact). ``mn_block=None`` lists every MN
    block; ``k_blocks`` (an iterable) selects k-blocks (default: every one).
    """
    op = "k_block_descriptors"
    bits = smem_bits(dtype)
    sw, off, inner = _split(layout, bits)
    if len(inner) != 2:
        raise LayoutError(f"{op}: layout {inner} has rank {len(inner)}; a UMMA operand tile is rank 2 (MN, K)")
    n_mn, n_k = int(inner[0].size()), int(inner[1].size())
    if atom is None and operand is not None:
        raise LayoutError(f"{op}: operand={operand!r} needs an atom (without one, give K= and the block is the whole MN)")
    if atom is not None:
        operand = "A" if operand is None else operand
        if operand not in ("A", "B"):
            raise LayoutError(f"{op}: operand {operand!r} is not 'A' or 'B'")
        if operand == "A" and getattr(atom, "source", "SS") == "TS":
            raise LayoutError(f"{op}: {atom.name} reads A from tensor memory (_TS): A has no shared-memory descriptor")
        cta = int(getattr(atom, "cta_group", 1))
        mnb = (atom.shape_mnk[0] if operand == "A" else atom.shape_mnk[1]) // cta
        # a sparse atom's A is the compressed M x K/2 matrix: K/2 stored elements per instruction
        k_atom = atom.shape_mnk[2] // (2 if operand == "A" and getattr(atom, "sparse", False) else 1)
        kb = k_atom if K is None else K
        if K is not None and K != k_atom:
            raise LayoutError(f"{op}: K={K} contradicts the atom's K = {k_atom} (stored elements of {operand})")
    else:
        if K is None:
            raise LayoutError(f"{op}: give an atom, or K= (the instruction's K in elements)")
        mnb, kb = n_mn, K
    if n_mn % mnb or n_k % kb:
        raise LayoutError(f"{op}: tile {n_mn}x{n_k} is not a multiple of the instruction block {mnb}x{kb}")
    f, g = _tables(inner, op)
    try:
        div = logical_divide(inner, (Layout(mnb), Layout(kb)))
    except LayoutError as e:
        raise LayoutError(f"{op}: tile {inner} does not divide into {mnb}x{kb} instruction blocks: {e}") from None
    block = make_layout(div[0][0] if len(div[0]) > 1 else div[0], div[1][0] if len(div[1]) > 1 else div[1])
    # a Layout is linear across the block boundary: every block has block (0, 0)'s layout, so CuTe's
    # iterator (one descriptor, offsets added) describes each block exactly
    ctx = f"instruction block {mnb}x{kb} of {inner}"
    major_, m, k, lbo_b, sbo_b, issues, notes = _derive(sw, block, bits, major, ctx)
    if issues:
        raise LayoutError(f"{op}: {ctx}: " + "; ".join(issues))
    fb, gb = _tables(block, op)
    _read_back(major_, sw, lbo_b, sbo_b, bits, fb - fb[0], gb - gb[0], ctx)
    out = []
    blocks = range(n_mn // mnb) if mn_block is None else [mn_block]
    ks = range(n_k // kb) if k_blocks is None else list(k_blocks)
    for i in blocks:
        if not 0 <= i < n_mn // mnb:
            raise LayoutError(f"{op}: mn_block {i} is outside [0, {n_mn // mnb})")
        for j in ks:
            if not 0 <= j < n_k // kb:
                raise LayoutError(f"{op}: k_block {j} is outside [0, {n_k // kb})")
            elems = off + int(f[i * mnb] + g[j * kb])
            if (elems * bits) % 128 or elems < 0:
                raise LayoutError(f"{op}: block (mn={i}, k={j}) starts at {elems * bits / 8} B, not a multiple of 16 bytes")
            start = start_address + elems * bits // 8
            desc = _descriptor(major_, sw, lbo_b, sbo_b, start, start_address)
            der = UMMADescriptorDerivation(desc, major_, sw, bits, m, k, lbo_b, sbo_b, start_address, (), tuple(notes))
            out.append(UMMAKBlock(i, j, elems * bits // 8, desc, der))
    return tuple(out)


provide("umma_descriptor_from_layout", descriptor_from_layout)  # asked by wgmma.descriptor_from_layout(target="sm_100")
