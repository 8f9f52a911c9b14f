"""Type stub of the old path: ``layoutalg.nvidia.umma`` is
``layoutalg.nvidia.blackwell.umma`` (:mod:`layoutalg.nvidia.aliases`)."""

from .blackwell.umma import *  # noqa: F403
