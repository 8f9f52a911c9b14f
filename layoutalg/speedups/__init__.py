"""The one Python front of the optional C extension ``layoutalg.speedups._ext`` (``layoutalg/speedups/_ext.c``).

The C part holds Layout's fields and its construction from plain-int tuples, and kernels of size,
cosize, ``L(i)``, coalesce, filter, right_inverse, composition and complement on flat int64 modes.
It is built where a C compiler is at hand; without it (or with ``LAYOUTALG_PURE_PYTHON=1``) the
package runs the same code in pure Python. :mod:`layoutalg.layout` and :mod:`layoutalg.algebra`
take the C part from here, never from the extension itself:

- :data:`ext` is the extension module, or None where it is not built (or switched off);
- :func:`register_layout` hands the extension the Layout class and its Python checks;
- :func:`enabled` says whether the algebra's fast kernels run (the C ones where built, else their
  Python twins); :func:`reference_only` switches them off for a block, so that every operation runs
  its reference construction; :func:`python_kernels` runs the Python twins instead of the C kernels for a
  block. Those are the test hooks: tests compare all three on the same inputs.

>>> from layoutalg import Layout, coalesce
>>> enabled()
True
>>> with reference_only():
...     print(enabled(), coalesce(Layout((4, 2), (1, 4))))
False 8:1
>>> enabled()
True
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from typing import Any

from ..errors import LayoutError

__all__ = ["ext", "built", "enabled", "reference_only", "c_enabled", "python_kernels", "register_layout"]

#: the C extension module ``layoutalg.speedups._ext``, or None (not built, or ``LAYOUTALG_PURE_PYTHON`` set)
ext: Any
if os.environ.get("LAYOUTALG_PURE_PYTHON"):
    ext = None
else:
    try:
        from . import _ext as ext
    except ImportError:  # not built (no C compiler at install): the same in pure Python
        ext = None

#: False inside :func:`reference_only`
_kernels_on = True
#: False inside :func:`python_kernels`
_c_kernels_on = True


def built() -> bool:
    """True where the C extension is built and in use."""
    return ext is not None


def enabled() -> bool:
    """True unless inside :func:`reference_only`: the algebra first tries its fast kernels."""
    return _kernels_on


@contextlib.contextmanager
def reference_only() -> Iterator[None]:
    """Within this block every algebra operation runs its reference construction (no fast kernels,
    neither C nor their Python twins). A test hook: results and errors must be the same either way."""
    global _kernels_on
    old = _kernels_on
    _kernels_on = False
    try:
        yield
    finally:
        _kernels_on = old


def c_enabled() -> bool:
    """True unless inside :func:`python_kernels`: the algebra's fast path runs its C kernels where they are built."""
    return _c_kernels_on


@contextlib.contextmanager
def python_kernels() -> Iterator[None]:
    """Within this block the algebra's fast path runs the Python twins of the C kernels (the pure-Python build's
    kernels), Layout construction staying as it is. A test hook: C, Python twins and reference give the same
    results and errors.

    >>> from layoutalg import Layout, coalesce
    >>> with python_kernels():
    ...     print(c_enabled(), coalesce(Layout((4, 2), (1, 4))))
    False 8:1
    """
    global _c_kernels_on
    old = _c_kernels_on
    _c_kernels_on = False
    try:
        yield
    finally:
        _c_kernels_on = old


def register_layout(cls: type, checked: Callable[..., Any], checked_compact: Callable[..., Any]) -> None:
    """Give the C construction the Layout class and the Python checks it defers to for anything but
    plain-int tuples (symbolic leaves, errors to word). Does nothing where the extension is not built.
    Anything but a class and two callables is refused before it reaches the extension (a LayoutError)."""
    if not isinstance(cls, type) or not callable(checked) or not callable(checked_compact):
        raise LayoutError("register_layout: expects the Layout class and its two checked constructors, got "
                          f"{cls!r:.60}, {checked!r:.60}, {checked_compact!r:.60}")
    if ext is not None:
        ext._register(cls, checked, checked_compact)
