"""Type stub of the old path: ``layoutalg.nvidia.descriptor`` is
``layoutalg.nvidia.blackwell.descriptor`` (:mod:`layoutalg.nvidia.aliases`)."""

from .blackwell.descriptor import *  # noqa: F403
