"""Type stub of the old path: ``layoutalg.nvidia.ptx_formulas`` is
``layoutalg.nvidia.common.ptx_formulas`` (:mod:`layoutalg.nvidia.aliases`)."""

from .common.ptx_formulas import *  # noqa: F403
