"""Shared pieces of the ``layoutalg`` command: reading arguments, refusing options a mode does not read,
the progress bar, the one line a written file prints, and :class:`Unavailable` (exit 2).

:func:`command` marks a subcommand's handler (it takes the ``argparse.Namespace`` the parser built) and
:func:`adds_parser` a function that adds a subcommand to the parser's subcommands; anything else given to
them is a :class:`~layoutalg.errors.LayoutError`. The argument readers (``positive_int``, ``address``,
``swizzle_arg``, ``parse_*``, ...) are argparse's ``type=`` callables and the subcommands' own helpers: they
raise what argparse reports as a usage error and are not part of the public surface (``__all__``).
"""

from __future__ import annotations

import argparse
import ast
import functools
import os
import sys
from typing import Any, NoReturn
from collections.abc import Sequence

from ..errors import LayoutError

__all__ = ["ArgumentParser", "Progress", "Unavailable", "adds_parser", "command", "one_line", "parse_layout"]


def command(fn: Any) -> Any:
    """Mark a subcommand's handler ``fn(args, ...)``: ``args`` must be an ``argparse.Namespace`` (what the
    CLI's parser builds); anything else raises a LayoutError naming the handler."""

    @functools.wraps(fn)
    def handler(args: Any, *rest: Any, **kw: Any) -> Any:
        if not isinstance(args, argparse.Namespace):
            raise LayoutError(f"{fn.__name__}: expects the argparse.Namespace the layoutalg command line builds, "
                              f"got {type(args).__name__}")
        return fn(args, *rest, **kw)

    return handler


def adds_parser(fn: Any) -> Any:
    """Mark ``fn(sub)`` that adds a subcommand to ``sub``, the object ``ArgumentParser.add_subparsers()``
    returns: anything without ``add_parser`` raises a LayoutError naming ``fn``."""

    @functools.wraps(fn)
    def adder(sub: Any, *rest: Any, **kw: Any) -> Any:
        if not callable(getattr(sub, "add_parser", None)):
            raise LayoutError(f"{fn.__name__}: expects the subcommands of an argparse parser (add_subparsers()), "
                              f"got {type(sub).__name__}")
        return fn(sub, *rest, **kw)

    return adder


class Unavailable(Exception):
    """A part of the library the subcommand needs cannot be imported (yet)."""


def need(modname: str, what: str) -> Any:
    """The module ``modname``, imported now; :class:`Unavailable` (exit 2) naming ``what`` if it cannot be."""
    import importlib

    try:
        return importlib.import_module(modname)
    except ImportError as e:
        raise Unavailable(f"{what} needs {modname}, which cannot be imported: {e}") from e


class Progress:
    """A progress bar on stderr, ``[#####     ] 5/10 label``, redrawn in place on a terminal.

    ``enabled=None`` (the default) shows it only when stderr is a terminal, so CI logs and notebooks
    stay quiet; True forces it (one line per step when stderr is not a terminal); False silences it.
    """

    def __init__(self, total: int, enabled: bool | None = None, width: int = 30):
        for what, v in (("total", total), ("width", width)):
            if isinstance(v, bool) or not isinstance(v, int):
                raise LayoutError(f"Progress: {what} is an int, got {v!r}")
        self.tty = _isatty(sys.stderr)
        self.total, self.done, self.width = max(1, total), 0, width
        self.enabled = self.tty if enabled is None else enabled

    def step(self, label: str) -> None:
        self.done += 1
        if not self.enabled:
            return
        fill = round(self.width * self.done / self.total)
        line = f"[{'#' * fill}{' ' * (self.width - fill)}] {self.done}/{self.total} {label}"
        if self.tty:
            sys.stderr.write("\r" + line[:110].ljust(110))
            if self.done == self.total:
                sys.stderr.write("\n")
        else:
            sys.stderr.write(line + "\n")
        sys.stderr.flush()


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def parse_layout(text: str) -> Any:
    """A layout in CuTe notation (or what CuTe prints for a tensor: its layout) read by :func:`layoutalg.parse`."""
    from ..parse import ParsedTensor, parse

    x = parse(text)
    return x.function if isinstance(x, ParsedTensor) else x  # a printed tensor: coordinate -> element offset


def option_given(args: argparse.Namespace, attr: str) -> bool:
    """Was the option given on the command line? (Options whose use depends on the mode default to None.)"""
    v = getattr(args, attr, None)
    return not (v is None or v is False or (isinstance(v, list) and not v))  # 0 is a value given


def refuse_unused(args: argparse.Namespace, cmd: str, mode: str, options: dict[str, str]) -> None:
    """An option the chosen mode does not read is an error naming the mode (never silently ignored).

    ``options``: attribute -> how the user spells it (``"--ctype"``)."""
    given = [flag for attr, flag in options.items() if option_given(args, attr)]
    if given:
        verb = "does" if len(given) == 1 else "do"
        raise LayoutError(f"{cmd}: {', '.join(given)} {verb} nothing {mode}")


def need_option(args: argparse.Namespace, cmd: str, attr: str, flag: str, needs: list[tuple[str, str]]) -> None:
    """``flag`` is read only together with one of ``needs`` (attr, flag): an error otherwise."""
    if option_given(args, attr) and not any(option_given(args, a) for a, _ in needs):
        raise LayoutError(f"{cmd}: {flag} does nothing without {' or '.join(f for _, f in needs)}")


def wrote(path: str, what: str) -> None:
    """The one line a command prints when it writes a file."""
    try:
        size = os.path.getsize(path)
        unit = f"{size / 1024:.1f} KB" if size >= 1024 else f"{size} B"
    except OSError:
        unit = "?"
    print(f"wrote {path} ({unit}): {what}")


def parse_coord(text: str) -> Any:
    """``eval``'s coordinate: an int or a (nested) tuple of ints, read as a literal (never evaluated)."""
    try:
        value = ast.literal_eval(text.strip())
    except (ValueError, SyntaxError) as e:
        raise LayoutError(
            f"eval: coordinate {text!r} is not an int or a tuple of ints like (1,2) or ((1,0),3)"
        ) from e

    def ok(v: Any) -> bool:
        return (isinstance(v, int) and not isinstance(v, bool)) or (
            isinstance(v, tuple) and all(ok(x) for x in v)
        )

    if not ok(value):
        raise LayoutError(f"eval: coordinate {text!r} is not an int or a tuple of ints")
    return value


def parse_tile(text: str) -> tuple[int, int]:
    """``MNxK`` (``64x64``, ``128*64``) as two ints."""
    parts = text.lower().replace("*", "x").split("x")
    try:
        mn, k = (int(p) for p in parts)
    except ValueError as e:
        raise LayoutError(f"desc: --tile {text!r} is not of the form MNxK, e.g. 64x64") from e
    return mn, k


def parse_shape(text: str | None, what: str) -> list[int]:
    """``--shape 64,64`` (or ``64x64``) as a list of ints; ``what`` names the command in the error."""
    if not text:
        raise LayoutError(f"{what}: give the tensor shape with --shape, e.g. --shape 64,64")
    try:
        return [int(x) for x in text.replace("x", ",").split(",") if x.strip()]
    except ValueError:
        raise LayoutError(f"{what}: --shape {text!r} is not a list of ints like 64,64") from None


def format_table(rows: list[dict], cols: Sequence[str]) -> str:
    """``rows`` (dicts) as a text table of the columns ``cols``, each as wide as its widest cell."""
    widths = [max(len(c), *(len(str(r[c])) for r in rows)) for c in cols]
    out = ["  ".join(c.ljust(w) for c, w in zip(cols, widths)), "  ".join("-" * w for w in widths)]
    for r in rows:
        out.append("  ".join(str(r[c]).ljust(w) for c, w in zip(cols, widths)))
    return "\n".join(out)


def parse_word(text: str) -> int | None:
    """The integer a descriptor word is written as (0x... hex, 0b..., or decimal), else None."""
    t = text.strip().replace("_", "").replace("'", "")
    try:
        return int(t, 0)
    except ValueError:
        return None


def swizzle_arg(text: str) -> Any:
    """--swizzle: bytes (0, 32, 64, 128) or 128B_base32B (tcgen05)."""
    t = text.strip()
    if t.isdigit():
        return int(t)
    if t.lower().replace("_", "") in ("128bbase32b", "base32b"):
        return "128B_base32B"
    raise argparse.ArgumentTypeError(f"{text!r} is not 0, 32, 64, 128 or 128B_base32B")


def address(text: str) -> int:
    """argparse type of a shared-memory byte address: a non-negative integer (0x... accepted)."""
    try:
        v = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer (e.g. 0x2000 or 8192)") from None
    if v < 0:
        raise argparse.ArgumentTypeError(f"{v} is not a non-negative address")
    return v


def positive_int(text: str) -> int:
    """argparse type of a positive integer (0x... accepted)."""
    try:
        v = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"{v} is not a positive integer")
    return v


class ArgumentParser(argparse.ArgumentParser):
    """argparse, with a bad argument reported in one line (no usage block): ``layoutalg desc: error: ...``."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def one_line(text: str, limit: int = 400) -> str:
    """``text`` on one line, cut to ``limit`` characters: how an error is printed."""
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 3] + "..."
