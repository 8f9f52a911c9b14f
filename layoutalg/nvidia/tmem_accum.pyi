"""Type stub of the old path: ``layoutalg.nvidia.tmem_accum`` is
``layoutalg.nvidia.blackwell.tmem_accum`` (:mod:`layoutalg.nvidia.aliases`)."""

from .blackwell.tmem_accum import *  # noqa: F403
