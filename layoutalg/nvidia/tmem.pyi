"""Type stub of the old path: ``layoutalg.nvidia.tmem`` is
``layoutalg.nvidia.blackwell.tmem`` (:mod:`layoutalg.nvidia.aliases`)."""

from .blackwell.tmem import *  # noqa: F403
