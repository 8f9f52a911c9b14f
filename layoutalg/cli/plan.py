"""``layoutalg plan``: a GEMM tile's data path planned as CuTe's and the CuTe DSL's helpers plan it
(:func:`layoutalg.kernel.plan.plan_gemm`): MMA atom, shared-memory atoms and layouts, descriptors per
k-block, instruction descriptor, TMEM columns, the epilogue's tcgen05.ld atom and register layout."""

from __future__ import annotations

import argparse
from typing import Any

from ..errors import LayoutError

__all__ = ["add_plan_parser", "cmd_plan"]


def add_plan_parser(sub: Any) -> None:
    """Add the ``plan`` verb to the subparsers ``sub``."""
    if not callable(getattr(sub, "add_parser", None)):
        raise LayoutError(f"add_plan_parser: {sub!r} is not argparse subparsers")
    s = sub.add_parser(
        "plan",
        help="plan a GEMM tile (sm_90 wgmma / sm_100 tcgen05) as the CuTe DSL's helpers do",
        description="Plan a GEMM tile's data path the way CuTe's and the CuTe DSL's helpers do: the MMA atom, the "
        "shared-memory atoms and staged layouts of A, B and the epilogue, the per-k-block shared-memory "
        "descriptors (LBO/SBO encoded >> 4) and the instruction descriptor, the TMEM allocation, the epilogue's "
        "tcgen05.ld atom and the register layout the epilogue works in. Example: "
        "layoutalg plan sm_100 bf16 --tile 256x256x64 --cta-group 2 --c bf16",
    )
    s.add_argument("arch", help="sm_90 or sm_100")
    s.add_argument("dtype", help="the A element type (f16, bf16, tf32, e4m3, e5m2, s8, u8)")
    s.add_argument("--b", dest="b_dtype", help="the B element type (default: A's)")
    s.add_argument("--acc", help="the accumulator type (default f32; s32 for s8/u8)")
    s.add_argument("--c", dest="c_dtype", help="C's element type (default: the accumulator's)")
    s.add_argument("--tile", default="128x128x64", help="MxNxK of the MMA tile (default 128x128x64); with "
                   "--cta-group 2, M spans the CTA pair")
    s.add_argument("--a-major", default="K", choices=["K", "MN"], help="A's major mode (default K)")
    s.add_argument("--b-major", default="K", choices=["K", "MN"], help="B's major mode (default K)")
    s.add_argument("--c-major", default="N", choices=["N", "M"], help="C's major mode (default N: row-major)")
    s.add_argument("--cta-group", type=int, default=1, choices=[1, 2], help="CTAs per MMA (sm_100; default 1)")
    s.add_argument("--stages", type=int, default=4, help="pipeline stages of A and B (default 4)")
    s.add_argument("--epi-stages", type=int, default=2, help="epilogue stages (default 2)")
    s.add_argument("--loose", action="store_true", help="plan what the DSL's helpers plan though the instruction "
                   "cannot run it (8-bit MN-major wgmma operands), without its descriptors")
    s.add_argument("--json", action="store_true", help="print the plan as JSON")
    s.set_defaults(func=cmd_plan)


def _tile(text: str) -> tuple[int, int, int]:
    parts = text.lower().replace("*", "x").replace(",", "x").split("x")
    try:
        m, n, k = (int(p) for p in parts)
    except ValueError:
        raise LayoutError(f"plan: --tile {text!r} is not of the form MxNxK, e.g. 128x256x64") from None
    return m, n, k


def cmd_plan(args: argparse.Namespace) -> int:
    from ..kernel.plan import plan_gemm

    if not isinstance(args, argparse.Namespace) or not hasattr(args, "dtype"):
        raise LayoutError(f"plan: {args!r} is not the parsed arguments of 'layoutalg plan'")
    p = plan_gemm(args.arch, args.dtype, args.b_dtype, args.acc, _tile(args.tile), args.a_major, args.b_major,
                  cta_group=args.cta_group, stages=args.stages, c_dtype=args.c_dtype, c_major=args.c_major,
                  epi_stages=args.epi_stages, strict=not args.loose)
    print(p.to_json(indent=1) if args.json else str(p))
    return 0
