"""Timing of descriptor derivation and encoding (pure Python; run: python benchmarks/bench_descriptor.py)."""

from __future__ import annotations

import timeit

from layoutalg.nvidia.hopper.descriptor import MatrixDescriptor
from layoutalg.nvidia.hopper.wgmma import descriptor_from_layout, k_block_descriptors, tile


def main() -> None:
    t = tile("K", 128, "bf16", (128, 64))
    seed = "Swizzle<1,4,3> o ((8,2,2),(8,2)):((1,8,128),(16,256))"
    d = MatrixDescriptor(0x400, 16, 1024, 0, 128)
    word = d.encode()
    cases = {
        "MatrixDescriptor.encode": lambda: d.encode(),
        "MatrixDescriptor.decode": lambda: MatrixDescriptor.decode(word),
        "descriptor_from_layout(seed text)": lambda: descriptor_from_layout(seed, "bf16"),
        "descriptor_from_layout(64x64 tile)": lambda: descriptor_from_layout(tile("K", 128, "bf16", (64, 64)), "bf16"),
        "k_block_descriptors(128x64, all blocks)": lambda: k_block_descriptors(t, "bf16", mn_block=None),
    }
    for name, fn in cases.items():
        n, total = timeit.Timer(fn).autorange()
        print(f"{name:45s} {total / n * 1e6:10.1f} us")


if __name__ == "__main__":
    main()
