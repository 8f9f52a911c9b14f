"""Record Triton's linear layouts of ``AMDMFMALayout`` accumulators: the oracle for ``interop.gluon_amd``.

Triton 3.6 (CPU build) answers ``GluonOpBuilder.to_linear_layout(AMDMFMALayout(...)._to_ir(b), shape)``
without a GPU. The configurations: versions 3 and 4 (CDNA3, CDNA4), their 16 x 16 and 32 x 32
instruction shapes, transposed or not, 32- and 64-bit elements, five warp grids, four
``tiles_per_warp``, five tensor shapes (smaller and larger than the CTA tile); a seeded sample of
300 of the 1600 combinations is written to ``tests/data/gluon/amd_mfma.json``.

Run: ``python tests/gluon_amd_cases.py``.
"""

from __future__ import annotations

import datetime
import json
import pathlib
import random

OUT = pathlib.Path(__file__).resolve().parent / "data" / "gluon" / "amd_mfma.json"


def configs() -> list[dict]:
    out = []
    for v in (3, 4):
        for ish in (([16, 16, 16], [32, 32, 8]) if v == 3 else ([16, 16, 32], [32, 32, 16])):
            for tr in (False, True):
                for w in ([1, 1], [2, 2], [4, 1], [1, 4], [2, 1]):
                    for tpw in ([1, 1], [2, 1], [1, 2], [2, 2]):
                        for shape in ([32, 32], [64, 64], [16, 128], [128, 32], [16, 16]):
                            for bits in (32, 64):
                                out.append({"version": v, "instr_shape": ish, "transposed": tr, "warps_per_cta": w,
                                            "tiles_per_warp": tpw, "element_bitwidth": bits, "shape": shape})
    return out


def engine_bases(cfg: dict) -> dict:
    from triton._C.libtriton import gluon_ir, ir
    from triton.experimental.gluon.language import amd

    ctx = ir.context()
    ir.load_dialects(ctx)
    b = gluon_ir.GluonOpBuilder(ctx)
    lay = amd.AMDMFMALayout(cfg["version"], cfg["instr_shape"], cfg["transposed"], cfg["warps_per_cta"],
                            cfg["element_bitwidth"], cfg["tiles_per_warp"])
    r = b.to_linear_layout(lay._to_ir(b), cfg["shape"])
    return {"register": r.reg_bases, "lane": r.lane_bases, "warp": r.warp_bases, "block": r.block_bases}


def main() -> None:
    import triton

    sample = random.Random(28).sample(configs(), 300)
    cases = [{**c, "bases": engine_bases(c)} for c in sample]
    OUT.write_text(json.dumps({"source": f"Triton {triton.__version__} GluonOpBuilder.to_linear_layout (CPU)",
                               "recorded": datetime.date.today().isoformat(), "recorder": "tests/gluon_amd_cases.py",
                               "cases": cases}, separators=(",", ":")) + "\n")
    print(f"wrote {len(cases)} cases to {OUT}")


if __name__ == "__main__":
    main()
