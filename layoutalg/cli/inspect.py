"""``layoutalg inspect FILE``: a compiled Triton / Gluon kernel's ttgir read, its data path reported (layouts,
source lines, shared-memory wavefronts and bank conflicts)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..errors import LayoutError
from .common import adds_parser, command

__all__ = ["add_inspect_parser", "cmd_inspect"]


@adds_parser
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
    s.add_argument("--ptx", metavar="PTX",
                   help="the kernel's PTX (compiled.asm['ptx']): check its wgmma descriptors and tcgen05 instruction "
                        "descriptors against their derivation from the ttgir (exit 1 when one differs)")
    s.add_argument("--check", action="store_true",
                   help="exit 1 when a shared-memory access has bank conflicts")
    s.set_defaults(func=cmd_inspect)


def _read(path: str) -> str:
    if path == "-":
        return sys.stdin.read()
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError as e:
        raise LayoutError(f"cannot read {path}: {e.strerror}") from None
    except UnicodeDecodeError:
        raise LayoutError(f"{path} is not UTF-8 text") from None


@command
def cmd_inspect(args: argparse.Namespace) -> int:
    from ..kernel import check_ptx, inspect_ttgir

    text = _read(args.file)
    try:
        rep = inspect_ttgir(text)
    except LayoutError as e:
        raise LayoutError(f"{args.file}: {e}") from None
    checks = []
    if args.ptx:
        try:
            checks = check_ptx(text, _read(args.ptx))
        except LayoutError as e:
            raise LayoutError(f"{args.ptx}: {e}") from None
    if args.json:
        data = rep.to_dict()
        if args.ptx:
            data["descriptors"] = [{"what": c.what, "location": c.op.location, "derived": [hex(w) for w in c.derived],
                                    "ptx": sorted({hex(w) for w in c.found}), "equal": c.ok} for c in checks]
        print(json.dumps(data, indent=1))
    else:
        print(rep)
        if args.ptx:
            print("")
            print(f"descriptors in {args.ptx} ({len(checks)} checks):")
            for c in checks:
                print(f"  {c}")
    if args.check and any(not o.banks.conflict_free for o in rep.accesses):
        return 1
    return 1 if any(not c.ok for c in checks) else 0
