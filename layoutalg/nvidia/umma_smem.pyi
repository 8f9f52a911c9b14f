"""Type stub of the old path: ``layoutalg.nvidia.umma_smem`` is
``layoutalg.nvidia.blackwell.umma_smem`` (:mod:`layoutalg.nvidia.aliases`)."""

from .blackwell.umma_smem import *  # noqa: F403
