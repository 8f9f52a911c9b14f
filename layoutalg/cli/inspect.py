"""``layoutalg inspect FILE``: a compiled Triton / Gluon kernel's ttgir read, its data path reported (layouts,
source lines, shared-memory wavefronts and bank conflicts)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..errors import LayoutError

__all__ = ["add_inspect_parser", "cmd_inspect"]


def add_inspect_parser(sub: Any) -> None:
    """Add the ``inspect`` verb to the subparsers ``sub``."""
    s = sub.add_parser(
        "inspect",
        help="a compiled kernel's ttgir: its layouts, data-moving ops and shared-memory bank conflicts",
        description="Read a ttgir file (Triton's compiled.asm['ttgir'], MLIR text; '-' reads stdin) by a grammar "
        "and report every op that moves data: its source line, tensor types and layouts, and for each "
        "register <-> shared-memory access the predicted wavefronts and bank conflicts.",
    )
    s.add_argument("file", help="a .ttgir / .mlir file, or - for stdin")
    s.add_argument("--json", action="store_true", help="print the report as JSON instead of text")
    s.add_argument("--check", action="store_true",
                   help="exit 1 when a shared-memory access has bank conflicts")
    s.set_defaults(func=cmd_inspect)


def cmd_inspect(args: argparse.Namespace) -> int:
    from ..kernel import inspect_ttgir

    if args.file == "-":
        text = sys.stdin.read()
    else:
        try:
            with open(args.file, encoding="utf-8") as f:
                text = f.read()
        except OSError as e:
            raise LayoutError(f"inspect: cannot read {args.file}: {e.strerror}") from None
        except UnicodeDecodeError:
            raise LayoutError(f"inspect: {args.file} is not UTF-8 text") from None
    try:
        rep = inspect_ttgir(text)
    except LayoutError as e:
        raise LayoutError(f"{args.file}: {e}") from None
    print(json.dumps(rep.to_dict(), indent=1) if args.json else rep)
    if args.check and any(not o.banks.conflict_free for o in rep.accesses):
        return 1
    return 0
