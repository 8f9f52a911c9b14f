"""``python -m layoutalg.gpu [OUTDIR] [--only mma,smem,wgmma]``: run the hardware harness."""

from __future__ import annotations

import argparse
import os
import sys

from . import failures
from .common import DEFAULT_DIR
from .harness import run_all


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m layoutalg.gpu", description=__doc__)
    ap.add_argument("outdir", nargs="?", default=DEFAULT_DIR, help="where to write the JSON recordings")
    ap.add_argument("--only", default="mma,smem,wgmma,banks,tma,synth,tiled", help="comma-separated checks to run")
    ap.add_argument("--jobs", type=int, default=2, help="1: the checks one after the other; 2: data checks beside "
                    "counting/timing checks (layoutalg.gpu.harness.LANES)")
    a = ap.parse_args(argv)
    recs = run_all(a.outdir, checks=tuple(x for x in a.only.split(",") if x), jobs=a.jobs)
    return 1 if failures(recs) else 0


# pytest --doctest-modules imports this file under the name "__main__" too: run only as a program
if __name__ == "__main__" and sys.argv and sys.argv[0].endswith(os.path.join("gpu", "__main__.py")):
    raise SystemExit(main())
