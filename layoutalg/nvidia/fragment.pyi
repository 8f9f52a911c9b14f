"""Type stub of the old path: ``layoutalg.nvidia.fragment`` is
``layoutalg.nvidia.common.fragment`` (:mod:`layoutalg.nvidia.aliases`)."""

from .common.fragment import *  # noqa: F403
