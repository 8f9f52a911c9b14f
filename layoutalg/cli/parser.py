"""The argument parser of the ``layoutalg`` command: every verb, its options and help, in the order ``--help``
lists them (``idesc``, ``tmem`` and ``inspect`` add their own).
"""

from __future__ import annotations

import argparse

from .analysis import cmd_banks, cmd_explain, cmd_synth
from .catalog import cmd_verify
from .common import ArgumentParser, address, positive_int, swizzle_arg
from .descriptors import cmd_desc, cmd_tma
from .export import cmd_export
from .fragments import add_fragment_options, cmd_atoms, cmd_frag
from .harness import cmd_harness
from .idesc import add_idesc_parser
from .inspect import add_inspect_parser
from .plan import add_plan_parser
from .layouts import cmd_eval, cmd_show
from .report import cmd_report
from .tmem import add_tmem_parser


def build_parser() -> argparse.ArgumentParser:
    """The ``layoutalg`` argument parser: every verb with its options, in the order ``--help`` lists them."""
    p = ArgumentParser(
        prog="layoutalg",
        description="CuTe-style layouts and the NVIDIA tensor-core layouts, from the shell.",
        epilog="Exit codes: 0 ok; 1 a verification failed; 2 bad input or a missing part of the library.",
    )
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    s = sub.add_parser(
        "show",
        help="print a layout's offset grid; -o writes a picture",
        description="Print the offset grid of a layout given in CuTe notation (rows = mode 0).",
    )
    s.add_argument("layout", nargs="?", help='CuTe notation, e.g. "(4,2):(2,1)" or "Sw<3,3,3> o (8,64):(64,1)"')
    s.add_argument("--gluon", metavar="LAYOUT", help='a Gluon layout instead, e.g. "NVMMASharedLayout(128, 16)" (with --shape)')
    s.add_argument("--shape", help="the tensor shape of a --gluon layout, e.g. 64,64")
    s.add_argument("-o", "--output", help="write a picture (.svg or .png); prints one line (with -v also the grid)")
    s.add_argument("-v", "--verbose", action="store_true", help="with -o, also print the offset grid / CuTe's print")
    s.add_argument("--max", type=positive_int, help="largest number of rows/columns shown (default 64)")
    s.add_argument("--tv", metavar="M,N",
                   help="draw the layout as a TV layout (thread, value) -> tile index on an M x N tile, each cell "
                        "labelled T<thread> V<value> as CuTe's print_latex_tv (needs -o)")
    s.add_argument(
        "--swizzle-bytes",
        type=int,
        metavar="BYTES",
        help="draw the picture as shared memory (16-byte chunks, banks) with elements of BYTES bytes",
    )
    s.add_argument("--tiled-mma", metavar="ATOM",
                   help="show a TiledMMA of this atom (CuTe's name, e.g. SM80_16x8x16_F32F16F16F32_TN, "
                        "SM90_64x128x16_F32BF16BF16_SS): CuTe's print, TV layouts, -o picture")
    s.add_argument("--atom-layout", metavar="MxNxK", help="atoms over threads: 2x2x1 or a layout (2,2,1):(2,1,0)")
    s.add_argument("--permutation", metavar="M,N,K", help="tile/permutation per mode: 32,32,16 or _,(8,2,2):(1,16,8),_")
    s.add_argument("--copy", action="append", metavar="OP:ATOM",
                   help="also a make_tiled_copy_<OP> with this copy atom, e.g. A:SM75_U32x4_LDSM_N (repeatable)")
    s.add_argument("--copy-output", metavar="FILE", help="write the tiled copy's picture (.svg or .png)")
    s.add_argument("--banks", metavar="SMEM", help="bank report of the --copy over this shared-memory layout")
    s.add_argument("--mode", choices=("auto", "cells", "blocks"),
                   help="tiled pictures: every cell, aggregated blocks, or auto (the default: cells up to 64x64)")
    s.add_argument("--window", metavar="M0:M1,N0:N1", help="tiled-MMA picture: only these rows/columns of C")
    s.set_defaults(func=cmd_show)

    s = sub.add_parser(
        "export",
        help="write a layout as code: CuTe C++ (--cpp, default), CuTe DSL (--dsl) or Gluon (--gluon)",
        description="Print a layout as code for a kernel: the CuTe C++ value and type (--cpp; a wgmma tile also "
        "as tile_to_shape of its GMMA atom), the CuTe DSL call (--dsl), or the Gluon layout "
        "(triton.experimental.gluon) equal to it on a tensor shape (--gluon, with --shape).",
    )
    s.add_argument("layout", nargs="?", help='CuTe notation, e.g. "(8,64):(64,1)" or "Sw<3,3,3> o (8,64):(64,1)"')
    lang = s.add_mutually_exclusive_group()
    lang.add_argument("--cpp", action="store_true", help="CuTe C++ (the default)")
    lang.add_argument("--dsl", action="store_true", help="CuTe DSL Python (cutlass.cute)")
    lang.add_argument("--gluon", nargs="?", const=True, metavar="LAYOUT",
                      help='Gluon: a shared layout (coordinate -> offset) or a TV layout (thread, value)')
    s.add_argument("--dtype", help="element type of a wgmma tile for --cpp (default: from the swizzle)")
    s.add_argument("--target", choices=("sm_90", "sm_100"),
                   help="--cpp: name a shared-memory tile by its GMMA (sm_90) or UMMA (sm_100) atom")
    s.add_argument("--shape", help="the tensor shape for --gluon, e.g. 64,64")
    s.add_argument("--bits", type=int, choices=(4, 8, 16, 32, 64),
                   help="element bits (picks NVMMASharedLayout's element_bitwidth)")
    s.add_argument("--kind", choices=("shared", "distributed"), help="default: shared when the modes match --shape")
    s.set_defaults(func=cmd_export)

    s = sub.add_parser(
        "eval",
        help="evaluate a layout at a coordinate",
        description="Evaluate a layout at a 1-D index (5) or one coordinate per mode ((1,2)).",
    )
    s.add_argument("layout")
    s.add_argument("coord", help="an index like 5, or a coordinate like (1,2) or ((1,0),3)")
    s.set_defaults(func=cmd_eval)

    s = sub.add_parser(
        "desc",
        help="wgmma/tcgen05 matrix descriptors: decode a word, derive one from a layout, or of a canonical tile",
        description="layoutalg desc WORD decodes a descriptor word (0x...; --target sm_100 for tcgen05) into "
        "its fields, swizzle mode and the canonical layout it implies. layoutalg desc LAYOUT --dtype T "
        "derives the descriptor of a shared-memory layout given as text (and of each k-block of the "
        "instruction). Without either, --major/--swizzle/--dtype/--tile build a canonical tile from the atom.",
    )
    s.add_argument("source", nargs="?", help="a descriptor word (0x4000004000010001) or a layout in CuTe notation")
    s.add_argument("--major", help="K or MN (tile default K; inferred from a layout)")
    s.add_argument("--swizzle", type=swizzle_arg,
                   help="0, 32, 64 or 128 bytes, or 128B_base32B (sm_100) (tile default 128; inferred from a layout)")
    s.add_argument("--dtype", help="tf32, f16, bf16, e4m3, e5m2, s8, u8; with --target sm_100 also e2m1 (4-bit) "
                   "(tile default bf16)")
    s.add_argument("--tile", help="MNxK in elements (default 64x64)")
    s.add_argument("--operand", choices=["A", "B"], help="A (default) or B")
    s.add_argument("--instruction", help="wgmma shape, e.g. m64n128k16 (default from the tile and dtype)")
    s.add_argument("--target", default="sm_90", choices=["sm_90", "sm_100", "sm_103"],
                   help="sm_90 wgmma descriptor (default), sm_100 tcgen05, or sm_103 (tcgen05; a word's lbo_mode 1 "
                   "reads the LBO field as an absolute start address)")
    s.add_argument(
        "--start", type=address, help="shared-memory byte address of the tile (default 0)"
    )
    s.set_defaults(func=cmd_desc)

    s = sub.add_parser(
        "frag",
        help="an mma / wgmma / ldmatrix fragment: layout, PTX formula, proof, picture",
        description="Look up a fragment (e.g. 'm16n8k16 f16 A', 'm64n64k16 f32 D', "
        "'ldmatrix b16 x4') and prove it against the PTX formula.",
    )
    s.add_argument("shape", nargs="?", help="m16n8k16, m8n8k4, m64n128k16 (wgmma), ldmatrix, stmatrix, or a tcgen05 "
                   "atom 'SM100_MMA_F16BF16_SS<bf16,bf16,float,128,256,K,K>' (dtype '-')")
    s.add_argument("dtype", nargs="?", help="f16, bf16, tf32, f64, s8, e4m3, ... or CuTe's half_t, bfloat16_t, "
                   "float_e4m3_t, ... (b16 for ldmatrix)")
    s.add_argument("operand", nargs="?", help="A, B, C or D (x1/x2/x4 for ldmatrix)")
    add_fragment_options(s)
    s.add_argument("--batch", type=int, help="with -o: which stacked matrix to draw (default: all)")
    s.add_argument("-o", "--output", help="write a picture (.svg or .png); prints one line (-v: everything)")
    s.add_argument("-v", "--verbose", action="store_true", help="with -o, also print the fragment's details")
    s.add_argument("--list", nargs="?", const=True, metavar="FILTER",
                   help="list the catalog's fragments as frag arguments, those matching FILTER (words that must all "
                        "occur, * and ? wildcards; SHAPE DTYPE OPERAND given too filter as well)")
    s.set_defaults(func=cmd_frag)

    s = sub.add_parser(
        "verify",
        help="prove the whole catalog against the PTX formulas, or a layout against a formula",
        description="Without arguments: prove every catalogued fragment equal to its PTX formula and check the "
        "PTX ISA's worked descriptor examples. With LAYOUT FORMULA: prove the layout equal to the formula (text such as "
        "'8*r + c' or '64*row + 8*((col >> 3) ^ (row % 8)) + col % 8', read by a grammar, never evaluated). "
        "Exit 1 if anything differs.",
    )
    s.add_argument("layout", nargs="?", help='a layout in CuTe notation, e.g. "(4,8):(8,1)"')
    s.add_argument("formula", nargs="?", help="the formula of its offset, e.g. '8*r + c'")
    s.add_argument("--inputs", help="comma-separated input names, one per mode (default row,col for rank 2; i for rank 1)")
    s.set_defaults(func=cmd_verify)

    s = sub.add_parser(
        "banks",
        help="shared-memory bank conflicts of a warp access",
        description="Wavefronts of one warp reading a shared-memory layout (coordinate -> "
        "element offset). The access is a TV layout (thread, value) -> coordinate "
        "index (--access) or a preset (--pattern).",
    )
    s.add_argument("layout", help='shared-memory layout, e.g. "Sw<3,3,3> o (64,64):(64,1)"')
    s.add_argument("--bytes", type=int, default=2, help="bytes per element (default 2)")
    s.add_argument(
        "--vector", type=int, help="bytes per thread per instruction: 1, 2, 4, 8, 16 (default --bytes)"
    )
    s.add_argument("--access", help="TV layout (thread, value) -> coordinate index of the layout")
    s.add_argument(
        "--pattern",
        choices=("column", "row"),
        help="'column': thread t reads row t from column 0 (a vector along the row); "
        "'row': thread t reads the t-th vector of row 0 (default column)",
    )
    s.add_argument("-o", "--output", help="write a picture (.svg or .png); prints one line (-v: the report)")
    s.add_argument("-v", "--verbose", action="store_true", help="with -o, also print the whole report")
    s.set_defaults(func=cmd_banks)

    s = sub.add_parser("harness", help="run the GPU hardware checks (needs a GPU and Triton)")
    s.add_argument("action", choices=["run"])
    s.set_defaults(func=cmd_harness)

    s = sub.add_parser(
        "report",
        help="descriptor table, m8n8k4 formulas, catalog proof and pictures, in a folder",
        description="Reproduce the PTX ISA's worked descriptor examples and m8n8k4 fragment formulas, prove "
        "the catalog and write the pictures; exit 1 if a check fails.",
    )
    s.add_argument("-o", "--output", default="layoutalg-report", help="folder (default ./layoutalg-report)")
    s.add_argument("--png", action="store_true", help="also write a few PNGs (needs matplotlib)")
    s.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    s.add_argument("-v", "--verbose", action="store_true",
                   help="print the tables on the console too (by default one line: what was written, the verdict)")
    s.add_argument("--progress", action="store_true",
                   help="show progress even when stderr is not a terminal (by default only on a terminal)")
    s.set_defaults(func=cmd_report)

    s = sub.add_parser(
        "tma",
        help="TMA tensor map (cuTensorMapEncodeTiled arguments) of a shared tile; --check against wgmma",
        description="Derive the tensor map and the loads that write a shared tile from a global tensor "
        "(CuTe's make_tma_copy), print the cuTensorMapEncodeTiled call, and with --check prove that "
        "the wgmma descriptors of the tile read what the TMA writes (exit 1 if not).",
    )
    s.add_argument("gtensor", help='global tensor, shape:stride in elements, e.g. "(1000,512):(512,1)"')
    s.add_argument("--smem", help="shared tile layout (default: the wgmma tile of --major/--swizzle/--tile)")
    s.add_argument("--major", help="K or MN (default K)")
    s.add_argument("--swizzle", type=int, help="0, 32, 64 or 128 bytes (default 128)")
    s.add_argument("--dtype", default="bf16", help="f16, bf16, tf32, f32, e4m3, s8, ... or CuTe's half_t, "
                   "bfloat16_t, ... (default bf16)")
    s.add_argument("--tile", help="MNxK in elements (default 64x64)")
    s.add_argument("--origin", help="global coordinate of the tile's first element, e.g. (128,64)")
    s.add_argument("--align", type=int, default=16, help="alignment of the global base address in bytes (default 16)")
    s.add_argument("--coalesce", action="store_true", help="merge contiguous dimensions (CuTe with static strides)")
    s.add_argument("--check", action="store_true", help="check the tile's wgmma descriptors against the tensor map")
    s.add_argument("--desc-swizzle", type=int, help="check against the descriptors of this swizzle instead")
    s.add_argument("--operand", choices=["A", "B"], help="with --check: A (default) or B")
    s.add_argument("--instruction", help="wgmma shape for --check, e.g. m64n128k16 (default from the tile)")
    s.set_defaults(func=cmd_tma)

    s = sub.add_parser(
        "explain",
        help="a layout or fragment as the formula a person writes (proven)",
        description="Write each output of a layout (offset) or fragment (row, col) in the PTX ISA's C-like "
        "vocabulary -- groupID, threadID_in_group, i, shifts, masks, xor -- and prove it with verify. "
        "Give a layout ('Sw<3,3,3> o (64,64):(64,1)') or a fragment as for frag ('m16n8k16 f16 A').",
    )
    s.add_argument("target", nargs="+", help="a layout, or SHAPE DTYPE OPERAND of a fragment")
    s.add_argument("--names", help="comma-separated input names (e.g. tid,v for a TV layout)")
    add_fragment_options(s)
    s.set_defaults(func=cmd_explain)

    s = sub.add_parser(
        "synth",
        help="the shared-memory swizzle with the fewest wavefronts for a set of accesses",
        description="Search Swizzle<B,M,S>, compositions of two and F2 xor maps of a row-major tile for the "
        "fewest shared-memory wavefronts over the accesses, beside no swizzle, CuTe's GMMA atoms and padding. "
        "Accesses: cp.async, st.shared.v4, ldmatrix, ldmatrix.trans, ldmatrix.x2, ldmatrix.x1, "
        "ldmatrix.colfirst, block4, or TV-LAYOUT@BYTES (thread, value) -> row + rows*col.",
    )
    s.add_argument("shape", nargs="?", help="ROWSxCOLS in elements, e.g. 128x64")
    s.add_argument("dtype", nargs="?", help="f16, bf16, tf32, f32, e4m3, s8, ...")
    s.add_argument("access", nargs="*", help="accesses (see above)")
    s.add_argument("--kernel", help="one of the built-in kernels: ampere_gemm_a, attention_v, fp8_transpose")
    s.add_argument("--threads", type=positive_int, help="threads of the copy presets (default 128)")
    s.add_argument("--constraints", help="comma-separated: wgmma, tma")
    s.set_defaults(func=cmd_synth)

    s = sub.add_parser(
        "atoms",
        help="CuTe's MMA and copy atoms: list their names, or print one",
        description="layoutalg atoms --list [FILTER] lists the MMA atoms (mma.sync, mma.sp, wgmma) and copy atoms "
        "(ldmatrix, stmatrix, cp.async, UniversalCopy) by CuTe's names; layoutalg atoms NAME [--dtype T] prints "
        "the atom as CuTe prints it (a copy atom with value type T, CuTe spellings accepted).",
    )
    s.add_argument("name", nargs="?", help="an atom name, e.g. SM80_16x8x16_F32F16F16F32_TN or SM75_U32x4_LDSM_N")
    s.add_argument("--dtype", help="value type of a copy atom (default: the instruction's own unit)")
    s.add_argument("--list", nargs="?", const=True, metavar="FILTER",
                   help="list the atoms whose name matches FILTER (words that must all occur; * and ? wildcards)")
    s.set_defaults(func=cmd_atoms)

    add_idesc_parser(sub)
    add_tmem_parser(sub)
    add_inspect_parser(sub)
    add_plan_parser(sub)
    return p
