"""The old flat module paths of :mod:`layoutalg.nvidia`, kept working: ``layoutalg.nvidia.mma`` is
``layoutalg.nvidia.ampere.mma``, the same module object.

Until the generation folders (``common``, ``ampere``, ``hopper``, ``blackwell``), every NVIDIA module
sat in one folder; code written then says ``from layoutalg.nvidia import mma``,
``import layoutalg.nvidia.umma_smem`` or ``from layoutalg.nvidia.tmem_accum import umma_accumulator``.
:data:`OLD_PATHS` maps each old name to its new home; :class:`AliasFinder` (installed on
``sys.meta_path`` when :mod:`layoutalg.nvidia` is imported) answers an import of an old dotted name
with the new module itself, and ``layoutalg.nvidia.<old>`` is an attribute of the package::

    >>> import importlib
    >>> importlib.import_module("layoutalg.nvidia.tmem_accum") is importlib.import_module("layoutalg.nvidia.blackwell.tmem_accum")
    True
    >>> new_path("layoutalg.nvidia.wgmma")
    'layoutalg.nvidia.hopper.wgmma'
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
from types import ModuleType
from typing import Any

__all__ = ["OLD_PATHS", "AliasFinder", "new_path", "install"]

_PACKAGE = __name__.rpartition(".")[0]  # layoutalg.nvidia

#: old module name (under layoutalg.nvidia) -> its generation folder
OLD_PATHS: dict[str, str] = {
    "dtypes": "common", "ptx_formulas": "common", "fragment": "common",
    "descriptor": "blackwell",  # sm_100's descriptor module re-exports sm_90's and the common format: every old name
    "mma": "ampere", "ldmatrix": "ampere",
    "wgmma": "hopper", "wgmma_fragments": "hopper", "tma": "hopper",
    "umma": "blackwell", "umma_smem": "blackwell", "idesc": "blackwell", "tmem": "blackwell",
    "tmem_accum": "blackwell", "tmem_copy": "blackwell", "blockscale": "blackwell",
}


def new_path(old: str) -> str | None:
    """The new dotted name of an old ``layoutalg.nvidia.<module>`` (None if ``old`` is not one)."""
    if not isinstance(old, str):
        return None
    head, _, short = old.rpartition(".")
    if head != _PACKAGE or short not in OLD_PATHS:
        return None
    return f"{_PACKAGE}.{OLD_PATHS[short]}.{short}"


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, target: str) -> None:
        self.target = target

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        return importlib.import_module(self.target)

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run: the module was imported under its new name."""


class AliasFinder(importlib.abc.MetaPathFinder):
    """Finds ``layoutalg.nvidia.<old>`` as the module ``layoutalg.nvidia.<generation>.<old>``."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        new = new_path(fullname)
        if new is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(new))


def install() -> None:
    """Put one :class:`AliasFinder` first on ``sys.meta_path`` (idempotent)."""
    if not any(type(f).__name__ == "AliasFinder" and type(f).__module__ == __name__ for f in sys.meta_path):
        sys.meta_path.insert(0, AliasFinder())


def module(short: str) -> ModuleType:
    """The module an old short name (``"mma"``) names, imported under both names."""
    new = importlib.import_module(f"{_PACKAGE}.{OLD_PATHS[short]}.{short}")
    sys.modules.setdefault(f"{_PACKAGE}.{short}", new)
    return new
