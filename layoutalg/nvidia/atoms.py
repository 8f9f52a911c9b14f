"""The NVIDIA atoms of :mod:`layoutalg.tiled`, every generation behind one door, named as CuTe names them.

Each generation owns and registers its atoms (:mod:`layoutalg.registry`):
:mod:`layoutalg.nvidia.ampere.atoms` (``mma.sync`` / ``mma.sp``, ``ldmatrix``, ``cp.async``,
``UniversalCopy``), :mod:`layoutalg.nvidia.hopper.atoms` (``wgmma``, ``stmatrix``) and
:mod:`layoutalg.nvidia.blackwell.atoms` (``tcgen05.mma``, the TMEM copies). This module is the
NVIDIA facade over them: :func:`mma_atom` also builds an atom from the catalog (``shape=``,
``dtype=``), and its errors name the NVIDIA spellings. Every atom is built from the catalog, not
typed in a second time (an ``mma.sync`` atom's TV layouts are
:func:`layoutalg.nvidia.ampere.mma.fragment`'s, proven against the PTX formulas and the H100).

Worked example, ``ldmatrix.x4`` (``SM75_U32x4_LDSM_N``), by hand. Lane 6 receives, in register
``r_2``, row ``6 >> 2 = 1``, columns ``2*(6 % 4) = 4, 5`` of matrix 2: CuTe index ``8*1 + 4 + 64*2
= 140``, bits ``140*16 = 2240 ..``; the bit layout ``(32,(32,4)):(32,(1,1024))`` gives
``6*32 + 0 + 2*1024 = 2240``. And lane 6 *supplies* the address of row 6 of matrix 0: bits
``6*128 ..`` of ``(32,128):(128,1)``::

    >>> a = copy_atom("SM75_U32x4_LDSM_N", "f16")
    >>> str(a.dst_bits), a.dst_bits(6, 2 * 32), str(a.src_bits), a.src_bits(6, 0)
    ('(32,(32,4)):(32,(1,1024))', 2240, '(32,128):(128,1)', 768)
    >>> m = mma_atom("SM80_16x8x16_F32F16F16F32_TN")
    >>> str(m.layout_a_tv), m.shape_mnk
    ('((4,8),(2,2,2)):((32,1),(16,8,128))', (16, 8, 16))
"""

from __future__ import annotations

from functools import cache
from typing import Any

from .. import registry
from ..errors import LayoutError
from ..tiled import CopyAtom, MMAAtom
from .ampere import atoms as _ampere
from .ampere.atoms import cute_mma_name, mma_close_names, sync_atom_names
from .hopper import atoms as _hopper
from .hopper import wgmma_fragments as _wf
from .blackwell import atoms as _blackwell  # noqa: F401  (registers tcgen05.mma and the TMEM copies)
from .common.atom_types import PTX_TO_NAME, hashable_cache, normalise_copy_name, tuple_scale, value_bits  # noqa: F401
from .common.dtypes import dtype_name
from .common.fragment import parse_mnk

__all__ = [
    "mma_atom",
    "copy_atom",
    "mma_atom_names",
    "copy_atom_names",
    "value_bits",
    "cute_mma_name",
]


@hashable_cache
def mma_atom(name: str | None = None, *, shape: str | None = None, dtype: str | None = None,
             ctype: str | None = None, sparse: bool = False, source: str = "SS") -> MMAAtom:
    """The MMA atom named as CuTe names it, or built from the catalog (``shape``, ``dtype``, ``ctype``).

    Names: ``"SM80_16x8x16_F32F16F16F32_TN"`` (``mma.sync``; D, A, B, C types then the majors),
    ``"SM70_8x8x4_F32F16F16F32_NT"`` (a Volta quadpair), ``"SM90_64x128x16_F32BF16BF16_SS"``
    (``wgmma``; D, A, B types, ``_SS`` or ``_RS``; CuTe's ``<GMMA::Major::K, ...>`` arguments may
    follow and do not change the TV layouts), and, for ``mma.sp``, ``"SM80_SPARSE_16x8x32_F32F16F16F32_TN"``
    (layoutalg's spelling: CuTe has no sm_80 sparse atoms); ``"SM100_MMA_F16BF16_SS<bf16,bf16,float,128,256,K,K>"``
    (``tcgen05.mma``, CuTe's template text: :func:`layoutalg.nvidia.blackwell.umma.umma_atom`). From the catalog:
    ``mma_atom(shape="m16n8k16", dtype="bf16")``, ``mma_atom(shape="m64n64k16", dtype="f16",
    source="RS")`` for wgmma.

    >>> mma_atom("SM70_8x8x4_F32F16F16F32_NT").thr_id
    Layout((4, 2), (1, 16))
    >>> str(mma_atom("SM90_64x64x16_F32F16F16_SS").layout_b_tv)
    '(128,(64,16)):(0,(1,64))'
    """
    if name is None:
        if shape is None or dtype is None:
            raise LayoutError("mma_atom: give a CuTe name, or shape= and dtype= of a catalog entry")
        M, N, K = parse_mnk(shape)
        dtype = dtype_name(dtype, op="mma_atom")
        ctype = None if ctype is None else dtype_name(ctype, op="mma_atom: ctype")
        if source not in ("SS", "RS"):
            raise LayoutError(f"mma_atom: source={source!r} is not 'SS' (A from shared memory) or 'RS' (A from registers)")
        if M == 64:
            if sparse:
                raise LayoutError("mma_atom: sparse=True names an mma.sp atom; wgmma (M = 64) has no sparse atom here")
            accs = _wf.ACC_BY_TYPE.get(dtype, ("f32",))
            acc = ctype or ("f32" if "f32" in accs else accs[0])
            types = PTX_TO_NAME.get(acc, "?") + PTX_TO_NAME.get(dtype, "?") * 2
            return mma_atom(f"SM90_64x{N}x{K}_{types}_{source}")
        if source != "SS":
            raise LayoutError(f"mma_atom: source={source!r} chooses between wgmma's SS and RS atoms; {shape} is mma.sync")
        return mma_atom(cute_mma_name(shape, dtype, ctype, sparse=sparse))
    if (shape, dtype, ctype, sparse, source) != (None, None, None, False, "SS"):
        raise LayoutError(f"mma_atom: {name!r} names the atom; shape=, dtype=, ctype=, sparse= and source= build one "
                          "from the catalog instead (give one or the other)")
    name = str(name).strip()
    atom = registry.find_atom("mma", name, vendor="nvidia")
    if atom is None:
        raise LayoutError(
            f"mma_atom: {name!r} is not an atom name like 'SM80_16x8x16_F32F16F16F32_TN', "
            f"'SM90_64x128x16_F32BF16BF16_SS' or 'SM80_SPARSE_16x8x32_F32F16F16F32_TN'{mma_close_names(name)}"
        )
    return atom


@cache
def mma_atom_names(include_wgmma: bool = True) -> tuple:
    """Every atom :func:`mma_atom` builds from the catalog, by name (mma.sync, mma.sp, and wgmma SS/RS).

    The tcgen05 (UMMA) atoms are listed by :func:`layoutalg.nvidia.blackwell.umma.umma_atom_names`;
    :func:`layoutalg.registry.atom_names` lists every registered family's.

    >>> names = mma_atom_names()
    >>> "SM80_16x8x16_F32F16F16F32_TN" in names, "SM90_64x256x16_F32BF16BF16_RS" in names
    (True, True)
    """
    out = list(sync_atom_names())
    if include_wgmma:
        out += _hopper.wgmma_atom_names()
    return tuple(dict.fromkeys(out))


@hashable_cache
def copy_atom(name: str, value_type: Any = None) -> CopyAtom:
    """The copy atom CuTe calls ``Copy_Atom<name, value_type>``.

    Without ``value_type`` the instruction's own unit is used and recorded: ``b16`` for
    ldmatrix/stmatrix, the ``uintN_t`` (``bN``) of cp.async and UniversalCopy, ``b32`` for the TMEM
    copies. A value type the instruction cannot move is a LayoutError naming the widths that fit.

    ``name``: ``"SM75_U32x{1,2,4}_LDSM_N"``, ``"SM75_U16x{2,4,8}_LDSM_T"`` (ldmatrix),
    ``"SM90_U32x{1,2,4}_STSM_N"``, ``"SM90_U16x{2,4,8}_STSM_T"`` (stmatrix),
    ``"SM80_CP_ASYNC_CACHEALWAYS<uint32_t|uint64_t|uint128_t>"``,
    ``"SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>"`` (cp.async, 4/8/16 bytes),
    ``"UniversalCopy<uint8_t..uint128_t>"`` (a plain vectorised load/store) and the TMEM copies
    ``"SM100_TMEM_LOAD_*"``, ``"SM100_TMEM_STORE_*"``, ``"SM100_UTCCP_*"``. ``value_type`` names
    the element type (``"f16"``, ``"half_t"``, ``"bf16"``, ``"f32"``, ...) or its bits.

    >>> str(copy_atom("SM75_U16x8_LDSM_T", "f16").val_layout_dst)   # the (1):(1) is the 16 bits of a value
    '((4,8),(1,2,4)):((16,1),(1,8,64))'
    >>> copy_atom("SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>", "bf16").num_val_src
    8
    >>> copy_atom("SM75_U32x4_LDSM_N").value_type, copy_atom("UniversalCopy<uint64_t>").num_val_src
    ('b16', 1)
    >>> copy_atom("SM75_U32x4_LDSM_N", "f64")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    layoutalg.errors.LayoutError: copy_atom: SM75_U32x4_LDSM_N cannot move 64-bit values (f64): ...; the value widths that fit: ...
    """
    name = normalise_copy_name(name)
    try:
        atom = registry.find_atom("copy", name, value_type, vendor="nvidia")
    except LayoutError as e:
        if str(e) == f"copy_atom: unknown copy atom {name!r}":
            atom = None
        else:
            raise
    if atom is None:
        raise LayoutError(f"copy_atom: unknown copy atom {name!r}; known: {', '.join(copy_atom_names())}")
    return atom


def copy_atom_names() -> tuple:
    """The copy atom names :func:`copy_atom` knows (the TMEM copies: :func:`layoutalg.nvidia.blackwell.tmem_copy.tmem_copy_names`)."""
    return (_ampere.ldsm_names() + _hopper.stsm_names() + _ampere.cp_async_names()
            + _ampere.universal_copy_names())
