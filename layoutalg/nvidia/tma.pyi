"""Type stub of the old path: ``layoutalg.nvidia.tma`` is
``layoutalg.nvidia.hopper.tma`` (:mod:`layoutalg.nvidia.aliases`)."""

from .hopper.tma import *  # noqa: F403
