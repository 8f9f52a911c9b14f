"""A kernel author's first hour, timed: ``import layoutalg``, the first ``show`` of a 128x128 tile, the
report, and the weight of the pictures.

Run: ``python benchmarks/bench_first_hour.py [--no-report]``. Each step that can run cold runs in a
fresh interpreter (``python -c``), so imports and first-call caches count as a new user meets them.
Target: the SVG of a 128x128 bf16 128B-swizzled tile (the default picture ``viz.save`` and
``layoutalg show -o`` write) under 200 KB (tests/test_viz_palette.py checks it).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TILE = 'wgmma.tile("K", 128, "bf16", (128, 128))'


def fresh(code: str) -> float:
    """Seconds a fresh interpreter takes to run ``code`` (interpreter start-up included)."""
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    t = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, env=env, capture_output=True)
    return time.perf_counter() - t


def main() -> None:
    base = fresh("pass")
    print(f"python start-up                          {base:7.2f} s (subtracted below)")
    print(f"import layoutalg                         {fresh('import layoutalg') - base:7.2f} s")
    with tempfile.TemporaryDirectory() as d:
        svg = os.path.join(d, "tile.svg")
        code = ("from layoutalg import viz\nfrom layoutalg.nvidia import wgmma\n"
                f"viz.save({TILE}, {svg!r})")
        print(f"first show of a 128x128 tile (SVG)       {fresh(code) - base:7.2f} s  (import included)")
        text = wgmma_text()
        cli = [sys.executable, "-m", "layoutalg", "show", text, "-o", os.path.join(d, "cli.svg")]
        env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
        t = time.perf_counter()
        out = subprocess.run(cli, check=True, env=env, capture_output=True, text=True).stdout
        print(f"layoutalg show <tile> -o tile.svg        {time.perf_counter() - t - base:7.2f} s  "
              f"({len(out.encode())} bytes printed)")
        if "--no-report" not in sys.argv:
            t = time.perf_counter()
            subprocess.run([sys.executable, "-m", "layoutalg", "report", "-o", os.path.join(d, "report")],
                           check=True, env=env, capture_output=True)
            print(f"layoutalg report -o report/              {time.perf_counter() - t - base:7.2f} s")
        sizes(d)


def wgmma_text() -> str:
    sys.path.insert(0, ROOT)
    from layoutalg.nvidia.hopper import wgmma

    return str(wgmma.tile("K", 128, "bf16", (128, 128)))


def sizes(d: str) -> None:
    sys.path.insert(0, ROOT)
    from layoutalg import viz
    from layoutalg.banks import analyze_copy
    from layoutalg.nvidia.hopper import wgmma, wgmma_fragments
    from layoutalg.nvidia.atoms import copy_atom, mma_atom
    from layoutalg.tiled import make_tiled_copy_A, make_tiled_mma

    T = wgmma.tile("K", 128, "bf16", (128, 128))
    pictures = {
        "128x128 bf16 128B tile, default window (64x64 cells)": viz.layout_scene(T),
        "128x128 bf16 128B tile, whole (128x128 cells)": viz.layout_scene(T, max_rows=128, max_cols=128),
        "128x128 bf16 128B tile, shared-memory lines": viz.swizzle_scene(T, 2),
        "wgmma m64n256k16 D fragment (64x64 window)": viz.fragment_scene(wgmma_fragments.fragment("m64n256k16", "f16", "D")),
        "tiled MMA SM80 16x8x16, 2x2 warps, 32x32x16": viz.scene_of(
            make_tiled_mma(mma_atom("SM80_16x8x16_F32F16F16F32_TN"), (2, 2, 1), (32, 32, 16))),
    }
    print("\npicture sizes (SVG bytes; limit for the default picture: 200,000)")
    for name, scene in pictures.items():
        t = time.perf_counter()
        svg = scene.to_svg()
        print(f"  {name:55s} {len(svg.encode()):>10,d}  ({time.perf_counter() - t:.2f} s, {len(scene.cells)} cells)")
    mma = make_tiled_mma(mma_atom("SM80_16x8x16_F32F16F16F32_TN"), (2, 2, 1), (128, 128, 64))
    r = analyze_copy(make_tiled_copy_A(copy_atom("SM75_U32x4_LDSM_N", "f16"), mma), "(128,64):(64,1)")
    print(f"\nstr(analyze_copy(...)) of a 64-instruction ldmatrix copy: {len(str(r).splitlines())} lines "
          f"(details(): {len(r.details().splitlines())})")


if __name__ == "__main__":
    main()
