"""Late binding between layers: a lower layer calls a hook that a higher layer fills when imported.

Imports in layoutalg flow one way (docs/architecture.md): ``layout`` knows nothing of ``viz``,
``composed`` nothing of ``parse`` or ``linear``. Where an object of a lower layer needs a service
that lives above it -- a Layout drawing itself in a notebook, a composed layout's inverse written
in its simplest F2-linear form -- the lower module asks this registry, and the upper module
registers the service when it is imported. ``import layoutalg`` imports every provider, so in a
running program the hooks are always filled. Worked example: a picture for a class is looked up
along its MRO, so a drawer registered for ``object`` answers for everything::

    >>> class Tile: pass
    >>> register_svg("hooks-doctest.Tile", lambda t: "<svg/>")
    >>> svg_of(Tile()) is None          # registered under another name
    True
    >>> register_svg(Tile, lambda t: "<svg>tile</svg>")
    >>> svg_of(Tile())
    '<svg>tile</svg>'
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .errors import LayoutError

__all__ = ["register_svg", "svg_of", "provide", "service"]

_SVG: dict[Any, Callable[[Any], str]] = {}
_SERVICES: dict[str, Callable[..., Any]] = {}


def register_svg(cls: type | str, draw: Callable[[Any], str]) -> None:
    """Register ``draw(obj) -> svg text`` as the notebook picture of ``cls`` (a class, or its
    ``"module.QualName"`` when the provider should not import the class's module)."""
    _SVG[cls] = draw


def svg_of(obj: Any) -> str | None:
    """The registered picture of ``obj`` (searched along its class's MRO), or None when no drawer is
    registered or drawing fails (a notebook's display hook must never raise)."""
    for klass in type(obj).__mro__:
        draw = _SVG.get(klass) or _SVG.get(f"{klass.__module__}.{klass.__qualname__}")
        if draw is not None:
            try:
                return draw(obj)
            except Exception:
                return None
    return None


def provide(name: str, fn: Callable[..., Any]) -> None:
    """Register the service ``name`` (called by the upper module that implements it, on import)."""
    _SERVICES[name] = fn


def service(name: str) -> Callable[..., Any]:
    """The service ``name``; LayoutError when no module has provided it (``import layoutalg`` does)."""
    if not isinstance(name, str):
        raise LayoutError(f"service: a service is named by a str, got {name!r}")
    fn = _SERVICES.get(name)
    if fn is None:
        raise LayoutError(f"{name}: not available until layoutalg is imported (import layoutalg registers it)")
    return fn
