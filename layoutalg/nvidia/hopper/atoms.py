"""The Hopper atoms: ``wgmma`` MMA atoms and ``stmatrix`` copy atoms, as CuTe names them.

Registered into :mod:`layoutalg.registry` when this module is imported (vendor ``"nvidia"``, arch ``sm90``):

* ``wgmma`` (``SM90_64x128x16_F32BF16BF16_SS``; D, A, B types, ``_SS`` or ``_RS``, ``_TN`` for the
  K-major-only types; CuTe's ``<GMMA::Major::K, ...>`` arguments may follow and do not change the TV
  layouts): C (and register A, ``_RS``) are :mod:`~layoutalg.nvidia.hopper.wgmma_fragments`' over the
  warpgroup's 128 threads; an operand read from shared memory (``_SS`` A, always B) is CuTe's
  ``ABLayout``: every thread "holds" the whole ``M x K`` tile (stride 0 over threads);
* ``stmatrix`` (``SM90_U32x{1,2,4}_STSM_N``, ``SM90_U16x{2,4,8}_STSM_T``): ldmatrix's bit layouts
  (:func:`layoutalg.nvidia.ampere.atoms.ldsm_bit_layouts`) with source and destination swapped.

    >>> str(wgmma_atom("SM90_64x64x16_F32F16F16_SS").layout_b_tv)
    '(128,(64,16)):(0,(1,64))'
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

from ...errors import LayoutError, guarded
from ...layout import Layout
from ...registry import AtomFamily, register
from ...tiled import CopyAtom, MMAAtom
from ..ampere.atoms import ldsm_bit_layouts, ldsm_matrices
from ..common.atom_types import PTX_TO_NAME, copy_family_builder, normalise_copy_name, split_types
from . import wgmma_fragments as _wf

__all__ = ["wgmma_atom", "wgmma_atom_names", "wgmma_name", "is_wgmma_name", "stsm_copy_atom", "stsm_names"]

_WGMMA_NAME = re.compile(r"^SM90_64x(\d+)x(\d+)_([A-Z0-9]+?)_(SS|RS)(_TN)?(_SATURATE)?(?:<\s*(.*?)\s*>)?$")


@guarded
def is_wgmma_name(name: str) -> bool:
    """Is ``name`` spelled as a wgmma atom (``SM90_64x<N>x<K>_<D><A><B>_{SS,RS}...``)?"""
    return bool(_WGMMA_NAME.match(name))


@guarded
def wgmma_name(N: int, K: int, acc: str, dtype: str, source: str = "SS") -> str:
    """CuTe's name of a wgmma atom (``_SS`` / ``_RS``), without the ``_TN`` of K-major-only types.

    >>> wgmma_name(128, 16, "f32", "bf16")
    'SM90_64x128x16_F32BF16BF16_SS'
    """
    types = PTX_TO_NAME.get(acc, "?") + PTX_TO_NAME.get(dtype, "?") * 2
    return f"SM90_64x{N}x{K}_{types}_{source}"


def _wgmma_atom(name: str, N: int, K: int, types: list[str], src: str, majors: str | None) -> MMAAtom:
    acc, atype, btype = types
    shape = f"m64n{N}k{K}"
    if atype != btype and not ({atype, btype} <= {"e4m3", "e5m2"} or {atype, btype} <= {"s8", "u8"}):
        raise LayoutError(f"mma_atom: {name!r}: wgmma A and B types must match (or be e4m3/e5m2, s8/u8 mixes)")
    if _wf.K_BY_TYPE.get(atype) != K:
        raise LayoutError(f"mma_atom: {name!r}: .{atype} wgmma has K = {_wf.K_BY_TYPE.get(atype)}, not {K}")
    if N not in _wf.valid_n(atype):
        raise LayoutError(f"mma_atom: {name!r}: N = {N} is not legal for .{atype}; valid: {_wf.valid_n(atype)}")
    D = _wf.fragment(shape, atype, "D", acc)
    smem_a = Layout((128, (64, K)), (0, (1, 64)))
    smem_b = Layout((128, (N, K)), (0, (1, N)))
    if src == "RS":
        if majors is not None and majors.split(",")[0].strip().split("::")[-1] != "K":
            raise LayoutError(f"mma_atom: {name!r}: A from registers must be K-major")
        A = _wf.fragment(shape, atype, "A").layout
        frg_a = "value"
    else:
        A, frg_a = smem_a, "smem_desc"
    return MMAAtom(name, (64, N, K), Layout(128), A, smem_b, D.layout, (acc, atype, btype, acc), frg_a=frg_a,
                   frg_b="smem_desc", notes=f"wgmma.mma_async, A from {'registers' if src == 'RS' else 'shared memory'}")


@cache
def wgmma_atom(name: str) -> MMAAtom:
    """The wgmma atom CuTe names ``name`` (a LayoutError saying why one cannot be built)."""
    m = _WGMMA_NAME.match(name)
    if not m:
        raise LayoutError(f"mma_atom: {name!r} is not a wgmma atom name like 'SM90_64x128x16_F32BF16BF16_SS'")
    N, K = int(m.group(1)), int(m.group(2))
    return _wgmma_atom(re.sub(r"<.*", "", name), N, K, split_types(m.group(3), 3, name), m.group(4), m.group(7))


@cache
def wgmma_atom_names() -> tuple[str, ...]:
    """Every wgmma atom (SS and RS) by CuTe name.

    >>> "SM90_64x256x16_F32BF16BF16_RS" in wgmma_atom_names()
    True
    """
    out: list[str] = []
    for atype in ("f16", "bf16", "tf32", "e4m3", "e5m2", "s8", "u8"):
        K = _wf.K_BY_TYPE[atype]
        tn = "" if atype in ("f16", "bf16") else "_TN"  # CuTe: K-major only
        for acc in _wf.ACC_BY_TYPE[atype]:
            for N in _wf.valid_n(atype):
                out.append(wgmma_name(N, K, acc, atype, "SS") + tn)
                out.append(wgmma_name(N, K, acc, atype, "RS") + tn)
    return tuple(dict.fromkeys(out))


def _build_wgmma(name: str, **kwargs: Any) -> MMAAtom | None:
    if not is_wgmma_name(name):
        return None
    if kwargs:
        raise LayoutError(f"mma_atom: {name!r} takes no options (got {', '.join(sorted(kwargs))})")
    return wgmma_atom(name)


_STSM = re.compile(r"^SM90_U(32|16)x([1248])_STSM_(N|T)$")


@guarded
def stsm_copy_atom(name: str, vb: int, vt: str) -> CopyAtom:
    """The ``stmatrix`` atom ``SM90_U32x{1,2,4}_STSM_N`` / ``SM90_U16x{2,4,8}_STSM_T`` moving ``vb``-bit values."""
    m = _STSM.match(name)
    if not m:
        raise LayoutError(f"copy_atom: unknown copy atom {name!r}")
    width, count, trans = int(m.group(1)), int(m.group(2)), m.group(3) == "T"
    num = ldsm_matrices(name, width, count, trans)
    reg, addr = ldsm_bit_layouts(num, trans)
    return CopyAtom(name, Layout(32), reg, addr, reg, vb, 32, 128, "D", vt,
                    notes=f"stmatrix.sync.aligned.m8n8.x{num}{'.trans' if trans else ''}.shared.b16")


def stsm_names() -> tuple[str, ...]:
    """The ``stmatrix`` atom names."""
    return tuple([f"SM90_U32x{n}_STSM_N" for n in (1, 2, 4)] + [f"SM90_U16x{n}_STSM_T" for n in (2, 4, 8)])


register(AtomFamily("nvidia", "sm90", "mma", "wgmma", wgmma_atom_names, _build_wgmma))
register(AtomFamily("nvidia", "sm90", "copy", "stmatrix", stsm_names,
                    copy_family_builder(lambda n: bool(_STSM.match(n)), lambda n: "b16", stsm_copy_atom),
                    normalise_copy_name))
