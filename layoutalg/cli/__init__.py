"""The ``layoutalg`` command: look at layouts, fragments, descriptors and bank conflicts from a shell.

Subcommands (``layoutalg <cmd> --help`` for each)::

    layoutalg show "(4,2):(2,1)"              # offset grid as text (CuTe's print_layout)
    layoutalg show "Sw<3,3,3> o (8,64):(64,1)" -o atom.svg
    layoutalg show --tiled-mma SM80_16x8x16_F32F16F16F32_TN --atom-layout 2x2x1 -o mma.svg
    layoutalg eval "(4,2):(2,1)" "(1,1)"      # -> 3
    layoutalg desc --major K --swizzle 128 --dtype bf16 --tile 64x64
    layoutalg frag m16n8k16 f16 A -o a.svg
    layoutalg frag --list "m16n8k16 C"        # the catalog's fragments, filtered
    layoutalg atoms --list LDSM               # CuTe's atom names, filtered
    layoutalg verify                          # proves the whole catalog, prints a table
    layoutalg banks "(64,64):(64,1)" --bytes 2 --vector 16
    layoutalg harness run                     # hardware checks (needs a GPU and Triton)
    layoutalg explain m16n8k16 f16 A          # the formula a person writes, proven
    layoutalg explain "Sw<3,3,3> o (64,64):(64,1)"
    layoutalg synth 128x64 f16 cp.async ldmatrix   # the swizzle with the fewest wavefronts
    layoutalg synth --kernel fp8_transpose
    layoutalg report -o report/               # everything above, pictures in a folder
    layoutalg idesc encode --kind f16 --a bf16 --b bf16 --c f32 -m 128 -n 256   # tcgen05 idesc
    layoutalg idesc decode 0x08200490 --kind f16
    layoutalg plan sm_100 bf16 --tile 256x256x64 --cta-group 2 --c bf16   # a GEMM tile, planned

Exit codes: 0 success; 1 a verification failed (or a value of the PTX ISA's examples disagrees); 2 bad input
(a :class:`~layoutalg.errors.LayoutError`, printed on stderr) or a part of the library
that is not available.

The verbs live in one module each (:mod:`.layouts` show/eval, :mod:`.descriptors` desc/tma, :mod:`.idesc`,
:mod:`.fragments` frag/atoms, :mod:`.catalog` verify, :mod:`.analysis` explain/synth/banks, :mod:`.export`,
:mod:`.report`, :mod:`.harness`, :mod:`.tmem`); :mod:`.parser` builds the argument parser and :mod:`.common`
holds the shared argument helpers. This module is the entry point, :func:`main`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from ..errors import LayoutError
from .catalog import catalog_items, prove_catalog
from .common import Progress as Progress  # the CLI's own pieces, for tests and tools
from .common import Unavailable, one_line
from .fragments import fragment_lines as fragment_lines
from .layouts import print_layout
from .parser import build_parser

__all__ = ["main", "print_layout", "prove_catalog", "catalog_items"]


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``layoutalg`` console script; returns the exit code.

    Bad input never ends in a traceback: an argument argparse refuses or a LayoutError exits 2 with one
    line on stderr, a file that cannot be written exits 2, and an unexpected exception (a bug) exits 3
    with one line (``LAYOUTALG_TRACEBACK=1`` shows the traceback).
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except LayoutError as e:
        print(f"layoutalg {args.command}: error: {one_line(str(e))}", file=sys.stderr)
        return 2
    except Unavailable as e:
        print(f"layoutalg {args.command}: unavailable: {one_line(str(e))}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # pragma: no cover - e.g. piped into head
        return 0
    except KeyboardInterrupt:  # pragma: no cover
        print(f"layoutalg {args.command}: interrupted", file=sys.stderr)
        return 130
    except OSError as e:
        print(f"layoutalg {args.command}: error: {one_line(str(e))}", file=sys.stderr)
        return 2
    except Exception as e:  # a bug: say so in one line unless asked for the traceback
        if os.environ.get("LAYOUTALG_TRACEBACK"):
            raise
        print(f"layoutalg {args.command}: internal error: {type(e).__name__}: {one_line(str(e))} "
              "(LAYOUTALG_TRACEBACK=1 shows where)", file=sys.stderr)
        return 3
