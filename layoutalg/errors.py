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

import functools
from collections.abc import Callable
from typing import Any, TypeVar, cast

__all__ = ["LayoutError", "LayoutWarning", "guarded"]


class LayoutError(ValueError):
    """A layout operation's precondition does not hold for the given inputs."""


class LayoutWarning(UserWarning):
    """A result was computed, but its input has a flaw worth knowing (e.g. a seed example that overlaps)."""


#: what junk arguments raise deep inside an operation before any check of its own names them
_JUNK_ERRORS = (TypeError, ValueError, IndexError, KeyError, AttributeError, AssertionError, ZeroDivisionError,
                OverflowError, RecursionError)

_F = TypeVar("_F", bound=Callable[..., Any])


def guarded(fn: _F) -> _F:
    """Decorate an entry point so that bad arguments raise :class:`LayoutError` and nothing else.

    A ``TypeError``, ``IndexError``, ``KeyError``, ``AttributeError`` (or a plain ``ValueError``, ...)
    raised inside ``fn`` becomes a ``LayoutError`` that names ``fn``, the arguments and the original
    exception (chained as its ``__cause__``); a ``LayoutError`` passes as it is.

    >>> @guarded
    ... def first(xs):
    ...     return xs[0]
    >>> try:
    ...     first(())
    ... except LayoutError as e:
    ...     print(e, "|", type(e.__cause__).__name__)
    first: bad arguments (()): IndexError: tuple index out of range | IndexError
    """

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except LayoutError:
            raise
        except _JUNK_ERRORS as e:
            shown = ", ".join([repr(a)[:80] for a in args] + [f"{k}={v!r}"[:80] for k, v in kwargs.items()])
            raise LayoutError(f"{fn.__name__}: bad arguments ({shown}): {type(e).__name__}: {e}") from e

    return cast(_F, wrapper)
