"""Type stub of the old path: ``layoutalg.nvidia.idesc`` is
``layoutalg.nvidia.blackwell.idesc`` (:mod:`layoutalg.nvidia.aliases`)."""

from .blackwell.idesc import *  # noqa: F403
