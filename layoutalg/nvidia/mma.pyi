"""Type stub of the old path: ``layoutalg.nvidia.mma`` is
``layoutalg.nvidia.ampere.mma`` (:mod:`layoutalg.nvidia.aliases`)."""

from .ampere.mma import *  # noqa: F403
