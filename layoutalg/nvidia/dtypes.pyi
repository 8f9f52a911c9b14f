"""Type stub of the old path: ``layoutalg.nvidia.dtypes`` is
``layoutalg.nvidia.common.dtypes`` (:mod:`layoutalg.nvidia.aliases`)."""

from .common.dtypes import *  # noqa: F403
