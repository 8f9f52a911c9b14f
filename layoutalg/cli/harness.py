"""``layoutalg harness run``: the GPU hardware checks (or, without a GPU, a replay of the recordings).
"""

from __future__ import annotations

import argparse
import sys


def cmd_harness(args: argparse.Namespace) -> int:
    try:
        from .. import gpu

        run_all = gpu.run_all
    except (ImportError, AttributeError) as e:
        print(
            f"layoutalg harness: the GPU harness is not available ({e}).\n"
            "It needs an NVIDIA GPU and `pip install 'layoutalg[gpu]'` (Triton, PyTorch); nothing was run.",
            file=sys.stderr,
        )
        return 0
    if not gpu.gpu_available():
        print("layoutalg harness: no CUDA GPU is visible; nothing was run. Replaying the recordings instead:")
        problems = gpu.replay_all()
        for name, probs in problems.items():
            print(f"  {name}: {'explained by the library' if not probs else f'{len(probs)} disagreements'}")
            for p in probs[:10]:
                print("    ", p)
        return 1 if any(problems.values()) else 0
    bad = gpu.failures(run_all())
    for b in bad:
        print("FAILED:", b)
    return 1 if bad else 0
