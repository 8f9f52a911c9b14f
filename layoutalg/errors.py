"""The one exception type of layoutalg.

Every violated precondition of the public API raises :class:`LayoutError`, a
``ValueError``, with a message that names the operation, the offending input and
the rule it broke::

    >>> from layoutalg import Layout, composition
    >>> composition(Layout((4, 6), (1, 10)), Layout(6, 1))
    Traceback (most recent call last):
    ...
    layoutalg.errors.LayoutError: composition: ...
"""

from __future__ import annotations

__all__ = ["LayoutError", "LayoutWarning"]


class LayoutError(ValueError):
    """A layout operation's precondition does not hold for the given inputs."""


class LayoutWarning(UserWarning):
    """A result was computed, but its input has a flaw worth knowing (e.g. a seed example that overlaps)."""
