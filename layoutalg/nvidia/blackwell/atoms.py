"""The Blackwell atoms: ``tcgen05.mma`` (UMMA) and the TMEM copies ``tcgen05.ld`` / ``st`` / ``cp``.

Registered into :mod:`layoutalg.registry` when this module is imported (vendor ``"nvidia"``, arch ``sm100``):

* ``tcgen05.mma``: CuTe's ``SM100_MMA_F16BF16_SS<bf16,bf16,float,128,256,K,K>`` (the template text,
  also wrapped as ``MMA_Atom<MMA_Traits<...>>``): :func:`layoutalg.nvidia.blackwell.umma.umma_atom`;
* ``tcgen05.mma`` of sm_103 (arch ``sm103``): ``SM103::SM103_MXF4_ULTRA_SS_VS<...>`` / ``_2x1SM_SS_VS``
  (K = 96): :func:`layoutalg.nvidia.blackwell.sm103.sm103_atom`;
* ``mma.sync`` of sm_120 (arch ``sm120``): CuTe's ``SM120_16x8x32_TN<...>``,
  ``SM120::BLOCKSCALED::SM120_16x8x32_TN_VS<...>``, ``SM120_16x8x64_TN_VS<...>`` and the sparse
  ``SM120_SPARSE_*``: :func:`layoutalg.nvidia.blackwell.sm120.sm120_atom`;
* ``tcgen05.copy``: ``SM100_TMEM_LOAD_*`` / ``SM100_TMEM_STORE_*`` / ``SM100_UTCCP_*``, moving
  32-bit TMEM cells unless a value type is named: :func:`layoutalg.nvidia.blackwell.tmem_copy.tmem_copy_atom`.

    >>> from layoutalg.registry import copy_atom
    >>> copy_atom("SM100_TMEM_LOAD_32dp32b1x").value_type
    'b32'
"""

from __future__ import annotations

from typing import Any

from ...registry import AtomFamily, register
from ...errors import guarded
from ...tiled import CopyAtom, MMAAtom
from ..common.atom_types import copy_family_builder, normalise_copy_name
from .sm103 import is_sm103_name, sm103_atom, sm103_atom_names
from .sm120 import is_sm120_name, normalise_sm120_name, sm120_atom, sm120_atom_names
from .tmem_copy import tmem_copy_atom, tmem_copy_names
from .umma import UMMAAtom, umma_atom, umma_atom_names

__all__ = ["is_umma_name", "is_tmem_copy_name"]


@guarded
def is_umma_name(name: str) -> bool:
    """Does ``name`` name a tcgen05.mma atom (``SM100_MMA_...``, bare or wrapped in ``MMA_Atom<...>``)?"""
    return "SM100_MMA_" in name


@guarded
def is_tmem_copy_name(name: str) -> bool:
    """Does ``name`` name a TMEM copy atom (``SM100_TMEM_...`` or ``SM100_UTCCP_...``)?"""
    return name.startswith(("SM100_TMEM_", "SM100_UTCCP_"))


def _build_umma(name: str, **kwargs: Any) -> UMMAAtom | None:
    if not is_umma_name(name):
        return None
    return umma_atom(name, **kwargs)


def _build_sm103(name: str, **kwargs: Any) -> UMMAAtom | None:
    if not is_sm103_name(name):
        return None
    return sm103_atom(name, **kwargs)


def _build_sm120(name: str, **kwargs: Any) -> MMAAtom | None:
    if not is_sm120_name(name):
        return None
    return sm120_atom(name, **kwargs)


def _tmem_atom(name: str, vb: int, vt: str) -> CopyAtom:
    return tmem_copy_atom(name, vt)


register(AtomFamily("nvidia", "sm100", "mma", "tcgen05.mma", lambda: umma_atom_names(), _build_umma))
register(AtomFamily("nvidia", "sm103", "mma", "tcgen05.mma sm_103", sm103_atom_names, _build_sm103))
register(AtomFamily("nvidia", "sm120", "mma", "mma.sync sm_120", sm120_atom_names, _build_sm120, normalise_sm120_name))
register(AtomFamily("nvidia", "sm100", "copy", "tcgen05.copy", tmem_copy_names,
                    copy_family_builder(is_tmem_copy_name, lambda n: "b32", _tmem_atom), normalise_copy_name))
