"""Type stub of the old path: ``layoutalg.nvidia.wgmma`` is
``layoutalg.nvidia.hopper.wgmma`` (:mod:`layoutalg.nvidia.aliases`)."""

from .hopper.wgmma import *  # noqa: F403
