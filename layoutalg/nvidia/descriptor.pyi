"""Type stub of the old path: ``layoutalg.nvidia.descriptor`` is ``layoutalg.nvidia.common.descriptor`` (:mod:`layoutalg.nvidia.aliases`)."""

from .common.descriptor import *  # noqa: F403
