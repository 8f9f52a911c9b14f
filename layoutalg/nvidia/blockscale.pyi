"""Type stub of the old path: ``layoutalg.nvidia.blockscale`` is
``layoutalg.nvidia.blackwell.blockscale`` (:mod:`layoutalg.nvidia.aliases`)."""

from .blackwell.blockscale import *  # noqa: F403
