"""Record Triton's gfx1250 layouts (``AMDWMMALayout(version=3)``): the Triton oracle of ``layoutalg.amd.gfx1250``.

One warp, one instruction: the accumulator ``AMDWMMALayout(3, False, [1, 1], instr_shape)`` on 16 x 16,
the operands ``DotOperandLayout(0 / 1, ..., k_width)`` on ``[16, K]`` / ``[K, 16]`` (fp4: Triton's packed
bytes, ``[16, K/2]`` with ``instr_shape=[16, 16, 64]`` and ``k_width=16``, as ``wmma_scaled`` asks), and
the scale layouts ``get_wmma_scale_layout`` on ``[16, K/32]``; answered by Triton 3.6's engine through
``tests/gluon_amd_oracle.py`` (a worker process; refusals recorded). Writes
``tests/data/amd/triton_gfx1250.json``.

Run: ``python tests/amd_gfx1250_cases.py``.
"""

from __future__ import annotations

import datetime
import json
import pathlib
from typing import Any

OUT = pathlib.Path(__file__).resolve().parent / "data" / "amd" / "triton_gfx1250.json"

#: (layoutalg instruction, f8f6f4 format or None, Triton instr_shape of the operands, k_width, elements a byte)
CONFIGS: list[tuple[str, str | None, list[int], int, int]] = [
    ("v_wmma_f32_16x16x4_f32", None, [16, 16, 4], 2, 1),
    ("v_wmma_f32_16x16x32_f16", None, [16, 16, 32], 8, 1),
    ("v_wmma_f16_16x16x32_f16", None, [16, 16, 32], 8, 1),
    ("v_wmma_f32_16x16x32_bf16", None, [16, 16, 32], 8, 1),
    ("v_wmma_i32_16x16x64_iu8", None, [16, 16, 64], 8, 1),
    ("v_wmma_f32_16x16x64_fp8_fp8", None, [16, 16, 64], 8, 1),
    ("v_wmma_f32_16x16x128_bf8_bf8", None, [16, 16, 128], 8, 1),
    ("v_wmma_scale_f32_16x16x128_f8f6f4", "fp8", [16, 16, 128], 8, 1),
    ("v_wmma_scale_f32_16x16x128_f8f6f4", "fp4", [16, 16, 64], 16, 2),
]


def configurations() -> list[tuple[tuple, list[dict[str, Any]]]]:
    """Each CONFIGS row with the gluon_amd_oracle configurations that ask for its D, A, B (and SA, SB)."""
    out = []
    for row in CONFIGS:
        name, fmt, ish, kw, per_byte = row
        K = ish[2]
        wm = {"version": 3, "transposed": False, "warps_per_cta": [1, 1], "tiles_per_warp": [1, 1]}
        acc_k = 128 if fmt else K
        asks = [{"op": "D", "kind": "wmma", "layout": {**wm, "instr_shape": [16, 16, acc_k]}, "shape": [16, 16]},
                {"op": "A", "kind": "wmma_dot", "layout": {**wm, "instr_shape": ish}, "shape": [16, K],
                 "operand_index": 0, "k_width": kw},
                {"op": "B", "kind": "wmma_dot", "layout": {**wm, "instr_shape": ish}, "shape": [K, 16],
                 "operand_index": 1, "k_width": kw}]
        if name.startswith("v_wmma_scale"):
            asks += [{"op": s, "kind": "wmma_scale", "layout": {**wm, "instr_shape": [16, 16, 128]}, "shape": [16, 4],
                      "operand_index": i} for i, s in enumerate(("SA", "SB"))]
        out.append((row, asks))
    return out


def main() -> None:
    import triton

    import gluon_amd_oracle as orc

    cases = []
    for row, asks in configurations():
        answers = orc.engine(asks)
        cases.append({"instruction": row[0], "fmt": row[1], "instr_shape": row[2], "k_width": row[3],
                      "per_byte": row[4], "layouts": {a["op"]: {**a, **ans} for a, ans in zip(asks, answers)}})
    OUT.write_text(json.dumps({"source": f"Triton {triton.__version__} AMDWMMALayout(version=3) / DotOperandLayout / "
                                         "get_amd_wmma_scale_layout (CPU)",
                               "recorded": datetime.date.today().isoformat(), "recorder": "tests/amd_gfx1250_cases.py",
                               "cases": cases}, separators=(",", ":")) + "\n")
    print(f"wrote {len(cases)} instructions to {OUT}")


if __name__ == "__main__":
    main()
