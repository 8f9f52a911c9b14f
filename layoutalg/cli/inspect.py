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
        help="a compiled kernel (ttgir, or a .py file with a Triton / Gluon kernel) or a CuTe setup's prints: layouts, "
             "data-moving ops, shared-memory bank conflicts, descriptors",
        description="Read a ttgir file (Triton's compiled.asm['ttgir'], MLIR text; '-' reads stdin) by a grammar "
        "and report every op that moves data: its source line, tensor types and layouts, and for each "
        "register <-> shared-memory access the predicted wavefronts and bank conflicts.",
    )
    s.add_argument("file", help="a .ttgir / .mlir file, a .py file with a @triton.jit / @gluon.jit kernel (importing "
                   "it runs it), a text file of CuTe prints (print(tiled_mma), print(tiled_copy), print(sA)), or - for stdin")
    s.add_argument("--kernel", help="a .py file: the kernel to compile (default: LAYOUTALG_INSPECT's, or the only one)")
    s.add_argument("--signature", help="a .py file: argument types, 'a:*fp16,b:*fp16,M:i32'")
    s.add_argument("--constexpr", help="a .py file: constexpr values, 'BM=128,BN=64'")
    s.add_argument("--target", help="a .py file: sm_80, sm_90a, sm_100a, gfx942, gfx950, gfx1100, gfx1200")
    s.add_argument("--num-warps", type=int, help="a .py file: warps per CTA")
    s.add_argument("--num-stages", type=int, help="a .py file: pipeline stages")
    s.add_argument("--json", action="store_true", help="print the report as JSON instead of text")
    s.add_argument("--ptx", metavar="PTX",
                   help="the kernel's PTX (compiled.asm['ptx']): check its wgmma descriptors and tcgen05 instruction "
                        "descriptors against their derivation from the ttgir (exit 1 when one differs)")
    s.add_argument("--svg", metavar="DIR", help="write a picture of every layout (and of every access with bank "
                   "conflicts) into DIR as SVG files")
    s.add_argument("--html", metavar="FILE", help="write the report with its pictures as one HTML page")
    s.add_argument("--strict", action="store_true",
                   help="an op of Triton's dialects the reader does not know is an error (line and column)")
    s.add_argument("--check", action="store_true",
                   help="exit 1 when a shared-memory access has bank conflicts")
    s.add_argument("--prove", action="store_true",
                   help="a compiled kernel: prove its MMA data path end to end (every product A[m,k]*B[k,n] lands "
                        "in the accumulator cell stored to out[m,n]); exit 1 with the first wrong element")
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


def _cute(args: argparse.Namespace, text: str) -> int:
    """Pasted CuTe prints of a kernel's setup: objects, banks of each copy over each shared tile, descriptors."""
    from ..kernel.cute_prints import inspect_cute_prints

    for flag in ("ptx", "svg", "html", "prove"):
        if getattr(args, flag, None):
            raise LayoutError(f"--{flag} is for a compiled kernel; {args.file} holds CuTe prints")
    try:
        rep = inspect_cute_prints(text)
    except LayoutError as e:
        raise LayoutError(f"{args.file}: {e}") from None
    if args.json:
        print(json.dumps(rep.to_dict(), indent=1))
    else:
        print(rep)
    if args.check and any(not c.banks.conflict_free for c in rep.copies):
        return 1
    return 0


@command
def cmd_inspect(args: argparse.Namespace) -> int:
    from ..kernel import check_ptx, inspect_ttgir

    checks: list = []
    py_flags = [f for f in ("kernel", "signature", "constexpr", "target", "num_warps", "num_stages")
                if getattr(args, f, None) is not None]
    if args.file.endswith(".py"):
        from ..kernel.pyfile import inspect_python, parse_constexprs, parse_signature

        got = inspect_python(args.file, kernel=args.kernel,
                             signature=parse_signature(args.signature) if args.signature else None,
                             constexprs=parse_constexprs(args.constexpr) if args.constexpr else None,
                             target=args.target, num_warps=args.num_warps, num_stages=args.num_stages)
        text, rep, checks = got.ttgir, got.report, got.checks
        ptx_name = "the compiled PTX" if got.ptx else None
    else:
        if py_flags:
            raise LayoutError(f"--{py_flags[0].replace('_', '-')} is for a .py file (a kernel to compile); "
                              f"{args.file} is read as ttgir")
        text = _read(args.file)
        from ..kernel.cute_prints import is_cute_prints

        if is_cute_prints(text) and "tt.func" not in text:
            return _cute(args, text)
        try:
            rep = inspect_ttgir(text, strict=args.strict)
        except LayoutError as e:
            raise LayoutError(f"{args.file}: {e}") from None
        ptx_name = args.ptx
    if args.ptx:
        try:
            checks = check_ptx(text, _read(args.ptx))
        except LayoutError as e:
            raise LayoutError(f"{args.ptx}: {e}") from None
    proof = None
    if args.prove:
        try:
            proof = rep.proof
        except LayoutError as e:
            raise LayoutError(f"{args.file}: --prove: {e}") from None
    if args.json:
        data = rep.to_dict()
        if proof is not None:
            data["proof"] = {"ok": proof.ok, "wrong_outputs": int(proof.wrong_outputs.sum()),
                             "first_wrong": None if proof.first_wrong is None else {
                                 k: v if isinstance(v, (bool, int, str)) else str(v) for k, v in proof.first_wrong.items()},
                             "text": str(proof)}
        if ptx_name:
            data["descriptors"] = [{"what": c.what, "location": c.op.location, "derived": [hex(w) for w in c.derived],
                                    "ptx": sorted({hex(w) for w in c.found}), "equal": c.ok} for c in checks]
        print(json.dumps(data, indent=1))
    else:
        print(rep)
        if ptx_name:
            print("")
            print(f"descriptors in {ptx_name} ({len(checks)} checks):")
            for c in checks:
                print(f"  {c}")
        if proof is not None:
            print("")
            print(proof)
    if args.svg or args.html:
        from ..kernel.pictures import report_html, write_svgs

        if args.svg:
            paths = write_svgs(rep, args.svg)
            print(f"wrote {len(paths)} pictures into {args.svg}", file=sys.stderr)
        if args.html:
            extra = "\n".join(f"descriptors: {c}" for c in checks)
            try:
                with open(args.html, "w", encoding="utf-8") as f:
                    f.write(report_html(rep, extra))
            except OSError as e:
                raise LayoutError(f"cannot write {args.html}: {e.strerror}") from None
            print(f"wrote {args.html}", file=sys.stderr)
    if args.check and any(not o.banks.conflict_free for o in rep.accesses):
        return 1
    if proof is not None and not proof.ok:
        return 1
    return 1 if any(not c.ok for c in checks) else 0
