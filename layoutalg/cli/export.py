"""``layoutalg export``: a layout as code (CuTe C++, CuTe DSL, Gluon) or a TMEM copy atom as CuTe writes it.
"""

from __future__ import annotations

import argparse

from ..errors import LayoutError
from .common import command, parse_layout, parse_shape, refuse_unused


@command
def cmd_export(args: argparse.Namespace) -> int:
    gluon_text = args.gluon if isinstance(args.gluon, str) else None
    text = gluon_text or args.layout
    if not text:
        raise LayoutError("export: give a layout, e.g. layoutalg export --cpp \"(8,64):(64,1)\"")
    if gluon_text is not None and args.layout:
        raise LayoutError("export: give the layout once (after --gluon, or as the argument)")
    if args.gluon is not None:
        refuse_unused(args, "export", "with --gluon (it is the element type of a wgmma tile for --cpp; "
                       "--bits gives Gluon the element width)", {"dtype": "--dtype", "target": "--target"})
        if not args.shape:
            raise LayoutError("export --gluon: give the tensor shape with --shape, e.g. --shape 64,64")
        from ..interop.gluon import to_gluon

        r = to_gluon(parse_layout(text), parse_shape(args.shape, "export --gluon"), kind=args.kind,
                     element_bitwidth=args.bits)
        print(r.source)
        return 0
    from ..interop.cute import to_cute_cpp, to_cute_dsl

    lang = "with --dsl" if args.dsl else "with --cpp"
    refuse_unused(args, "export", f"{lang} (they are read by --gluon)",
                   {"shape": "--shape", "bits": "--bits", "kind": "--kind"})
    if args.dsl:
        refuse_unused(args, "export", "with --dsl (it names the GMMA atom type of --cpp)",
                       {"dtype": "--dtype", "target": "--target"})
    if text.strip().startswith(("SM100_TMEM_", "SM100_UTCCP_")):  # a TMEM copy atom: Copy_Atom<Op, T> / tcgen05 op
        from ..nvidia.blackwell.tmem_copy import tmem_copy_op

        op = tmem_copy_op(text)
        if args.dsl:
            print(to_cute_dsl(op))
        else:
            c = to_cute_cpp(op, dtype=args.dtype)
            print(f"{c.expr}\n{c.text}")
        return 0
    layout = parse_layout(text)
    if args.dsl:
        print(to_cute_dsl(layout))
    else:
        print(to_cute_cpp(layout, dtype=args.dtype, target=getattr(args, "target", None)))
    return 0
