"""AMD's MMA atoms in the atom registry: importing this module registers every MFMA (CDNA1-CDNA4) and
WMMA (RDNA3, RDNA4) family into :mod:`layoutalg.registry`, labelled ``v_mfma.<arch>`` / ``v_wmma.<arch>``.

``import layoutalg`` adds this module as the ``"amd"`` provider, so the registry imports it on the first
lookup: an AMD mnemonic in any of AMD's spellings names its atom wherever an atom name is taken::

    >>> from layoutalg.registry import mma_atom
    >>> mma_atom("v_mfma_f32_32x32x8_f16").shape_mnk
    (32, 32, 8)
    >>> mma_atom("V_WMMA_F32_16X16X16_F16", vendor="amd").num_threads
    32

A mnemonic that several generations share (``v_mfma_f32_32x32x8f16`` on CDNA1 and CDNA2) is built by
the newest generation that has it, as :func:`layoutalg.amd.mfma` does by default (give it ``arch`` to
choose another): the families are registered newest first.
"""

from __future__ import annotations

from ..registry import register
from . import families

for _family in reversed(families()):  # newest first: the registry asks families in order
    register(_family)
