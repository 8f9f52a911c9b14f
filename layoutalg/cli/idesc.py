"""``layoutalg idesc``: the tcgen05 (sm_100) instruction descriptor, encoded from a configuration or decoded from a word.
"""

from __future__ import annotations

import argparse
from typing import Any

from ..errors import LayoutError
from .common import adds_parser, command, parse_word


#: options of ``idesc encode`` that only the block-scaled kinds / only the plain kinds use
_IDESC_BLOCK_ONLY = (("scale_type", "--scale-type"), ("sfa_id", "--sfa-id"), ("sfb_id", "--sfb-id"), ("sf_vec_size", "--sf-vec-size"))


_IDESC_PLAIN_ONLY = (("saturate", "--saturate"), ("sparse_selector", "--sparse-selector"), ("max_shift", "--max-shift"), ("ws", "--ws"))


def _idesc_encode(args: argparse.Namespace) -> int:
    from ..nvidia.blackwell import idesc

    kind = idesc.canonical_kind(args.kind)
    blk = kind in idesc.BLOCK_SCALED_KINDS
    for dest, flag in _IDESC_PLAIN_ONLY if blk else _IDESC_BLOCK_ONLY:
        if getattr(args, dest) is not None and getattr(args, dest) is not False:
            raise LayoutError(f"idesc encode: {flag} is not an option of kind::{kind}")
    if kind == "i8" and (args.negate_a or args.negate_b):
        raise LayoutError("idesc encode: --negate-a/--negate-b are not options of kind::i8 (it cannot negate)")
    c = args.c
    if c is None:
        only = {"tf32": "f32", "i8": "s32"}.get(kind, "f32" if blk else None)
        if only is None:
            raise LayoutError(f"idesc encode: kind::{kind} needs --c (the accumulator type: f16 or f32)")
        c = only
    given = {dest: getattr(args, dest) for dest in (
        "negate_a", "negate_b", "saturate", "sparse", "sparse_selector", "scale_type", "sfa_id", "sfb_id",
        "max_shift", "cta_group", "ws", "k", "sf_vec_size") if getattr(args, dest) is not None and getattr(args, dest) is not False}
    d = idesc.make_instr_desc(kind, args.a, args.b, c, args.m, args.n, args.a_major, args.b_major, **given)
    print(f"0x{d.word:08x}")
    print(d.describe())
    return 0


def _idesc_decode(args: argparse.Namespace) -> int:
    from ..nvidia.blackwell import idesc

    word = parse_word(args.word)
    if word is None:
        raise LayoutError(f"idesc decode: {args.word!r} is not a number (write 0x08200490, 0b..., or decimal)")
    if args.kind is None:
        if args.sf_vec_size is not None:
            raise LayoutError("idesc decode: --sf-vec-size needs --kind (a block-scaled kind)")
        found = idesc.readings(word, cta_group=args.cta_group, ws=args.ws)
        if not found:
            idesc.decode(word, cta_group=args.cta_group, ws=args.ws)  # raises, naming each kind's rule
        if len(found) > 1:
            print(f"0x{word:08x} reads legally as {len(found)} kinds (pass --kind to pick one):")
        for k, d in enumerate(found):
            if k:
                print()
            print(d.describe())
        return 0
    d = idesc.decode(word, kind=args.kind, cta_group=args.cta_group, ws=args.ws, sf_vec_size=args.sf_vec_size)
    print(d.describe())
    return 0


@command
def cmd_idesc(args: argparse.Namespace) -> int:
    return _idesc_encode(args) if args.idesc_command == "encode" else _idesc_decode(args)


@adds_parser
def add_idesc_parser(sub: Any) -> None:
    """Add the ``idesc`` verb (``encode`` / ``decode``) to the subparsers ``sub``."""
    s = sub.add_parser(
        "idesc",
        help="the tcgen05 (sm_100 UMMA) instruction descriptor: encode or decode",
        description="Encode the 32-bit instruction descriptor of one tcgen05.mma bit for bit as CuTe's "
        "UMMA::make_instr_desc builds it, or decode a word into its fields in words. Checked against CuTe C++ "
        "4.2 on the host and Triton 3.6's PTX for sm_100a; none of it ran on sm_100 hardware.",
    )
    ss = s.add_subparsers(dest="idesc_command", metavar="encode|decode", required=True)
    e = ss.add_parser("encode", help="configuration -> word and its description")
    e.add_argument("--kind", required=True, help="f16, tf32, f8f6f4, i8, mxf8f6f4, mxf4, mxf4nvf4 (or kind::...)")
    e.add_argument("--a", required=True, help="A type: f16, bf16, tf32, e4m3, e5m2, e2m3, e3m2, e2m1, s8, u8 (or CuTe's names)")
    e.add_argument("--b", required=True, help="B type")
    e.add_argument("--c", help="accumulator (D) type: f16, f32, s32 (default: the kind's only one)")
    e.add_argument("-m", type=int, required=True, help="M of the instruction")
    e.add_argument("-n", type=int, required=True, help="N of the instruction")
    e.add_argument("--a-major", default="K", choices=["K", "MN"], help="A's major mode (default K)")
    e.add_argument("--b-major", default="K", choices=["K", "MN"], help="B's major mode (default K)")
    e.add_argument("--negate-a", action="store_true", help="negate A (not kind::i8)")
    e.add_argument("--negate-b", action="store_true", help="negate B (not kind::i8)")
    e.add_argument("--saturate", action="store_true", help="saturate (kind::i8 only)")
    e.add_argument("--sparse", action="store_true", help="sparse A (tcgen05.mma.sp)")
    e.add_argument("--sparse-selector", type=int, help="sparsity selector 0-3 (plain kinds, with --sparse)")
    e.add_argument("--cta-group", type=int, choices=[1, 2], help="cta_group::1 (default) or ::2")
    e.add_argument("--ws", action="store_true", help="tcgen05.mma.ws (plain kinds, cta_group::1)")
    e.add_argument("--max-shift", type=int, help="B-reuse max shift of .ws: 0, 8, 16, 32")
    e.add_argument("--k", type=int, help="K of the instruction (default the kind's; 96 for mxf4/mxf4nvf4 K=96)")
    e.add_argument("--scale-type", help="block-scaled kinds: ue8m0 or ue4m3 (mxf4nvf4)")
    e.add_argument("--sfa-id", type=int, help="block-scaled kinds: A scale-factor id")
    e.add_argument("--sfb-id", type=int, help="block-scaled kinds: B scale-factor id")
    e.add_argument("--sf-vec-size", type=int, help="block-scaled kinds: elements per scale factor (16 or 32)")
    e.set_defaults(func=cmd_idesc)
    d = ss.add_parser("decode", help="word -> its fields in words")
    d.add_argument("word", help="the descriptor: 0x08200490, 0b..., or decimal")
    d.add_argument("--kind", help="the kind (the word alone may read as several)")
    d.add_argument("--cta-group", type=int, choices=[1, 2], help="check the shape for this cta_group")
    d.add_argument("--ws", action="store_true", help="read it as a tcgen05.mma.ws descriptor")
    d.add_argument("--sf-vec-size", type=int, help="block-scaled kinds: elements per scale factor (16 or 32)")
    d.set_defaults(func=cmd_idesc)
