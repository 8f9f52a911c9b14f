"""Type stub of the old path: ``layoutalg.nvidia.tmem_copy`` is
``layoutalg.nvidia.blackwell.tmem_copy`` (:mod:`layoutalg.nvidia.aliases`)."""

from .blackwell.tmem_copy import *  # noqa: F403
