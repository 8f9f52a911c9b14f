"""Type stub of the old path: ``layoutalg.nvidia.wgmma_fragments`` is
``layoutalg.nvidia.hopper.wgmma_fragments`` (:mod:`layoutalg.nvidia.aliases`)."""

from .hopper.wgmma_fragments import *  # noqa: F403
