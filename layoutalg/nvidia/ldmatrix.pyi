"""Type stub of the old path: ``layoutalg.nvidia.ldmatrix`` is
``layoutalg.nvidia.ampere.ldmatrix`` (:mod:`layoutalg.nvidia.aliases`)."""

from .ampere.ldmatrix import *  # noqa: F403
