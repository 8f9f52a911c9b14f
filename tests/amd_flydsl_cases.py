"""Record FlyDSL's MMA atom TV layouts (A, B, C): the third oracle of the AMD catalog (CDNA3, CDNA4, RDNA3, RDNA4, gfx1250).

FlyDSL 0.5.0 (AMD's CuTe-style DSL, ``pip install flydsl``) builds its atoms without a GPU:
``fly.MmaAtomType.get(<MmaOp>.get(m, n, k, A, B, Acc, ...))`` has ``tv_layout_a/b/c``, printed in CuTe
notation as ``!fly.layout<shape:stride>``: ``(thread, value) -> m + M*k`` (A), ``n + N*k`` (B),
``m + M*n`` (C), the orientation of layoutalg's fragments, and the atom's own text
(``!fly.mma_atom<...>``, what :func:`layoutalg.interop.flydsl.to_flydsl` writes). Each configuration of :data:`CONFIGS`
is asked in its own process (an invalid one aborts FlyDSL) and the three layouts are written to
``tests/data/amd/flydsl_atoms.json`` with the layoutalg instruction they stand for.

Run: ``python tests/amd_flydsl_cases.py`` (needs ``flydsl``; the ``amd`` extra).
"""

from __future__ import annotations

import datetime
import json
import pathlib
import subprocess
import sys
from typing import Any

OUT = pathlib.Path(__file__).resolve().parent / "data" / "amd" / "flydsl_atoms.json"

#: (layoutalg arch, layoutalg instruction, f8f6f4 format or None, FlyDSL op type, m, n, k, A, B, Acc)
CONFIGS: list[tuple[str, str, str | None, str, int, int, int, str, str, str]] = [
    ("cdna3", "v_mfma_f32_32x32x8_f16", None, "CDNA3_MFMA", 32, 32, 8, "f16", "f16", "f32"),
    ("cdna3", "v_mfma_f32_16x16x16_f16", None, "CDNA3_MFMA", 16, 16, 16, "f16", "f16", "f32"),
    ("cdna3", "v_mfma_f32_32x32x8_bf16", None, "CDNA3_MFMA", 32, 32, 8, "bf16", "bf16", "f32"),
    ("cdna3", "v_mfma_f32_16x16x16_bf16", None, "CDNA3_MFMA", 16, 16, 16, "bf16", "bf16", "f32"),
    ("cdna3", "v_mfma_i32_32x32x16_i8", None, "CDNA3_MFMA", 32, 32, 16, "i8", "i8", "i32"),
    ("cdna3", "v_mfma_i32_16x16x32_i8", None, "CDNA3_MFMA", 16, 16, 32, "i8", "i8", "i32"),
    ("cdna3", "v_mfma_f32_32x32x16_fp8_fp8", None, "CDNA3_MFMA", 32, 32, 16, "fp8fnuz", "fp8fnuz", "f32"),
    ("cdna3", "v_mfma_f32_16x16x32_fp8_fp8", None, "CDNA3_MFMA", 16, 16, 32, "fp8fnuz", "fp8fnuz", "f32"),
    ("cdna3", "v_mfma_f32_32x32x2_f32", None, "CDNA3_MFMA", 32, 32, 2, "f32", "f32", "f32"),
    ("cdna3", "v_mfma_f32_16x16x4_f32", None, "CDNA3_MFMA", 16, 16, 4, "f32", "f32", "f32"),
    ("cdna4", "v_mfma_f32_16x16x32_f16", None, "CDNA3_MFMA", 16, 16, 32, "f16", "f16", "f32"),
    ("cdna4", "v_mfma_f32_32x32x16_f16", None, "CDNA3_MFMA", 32, 32, 16, "f16", "f16", "f32"),
    ("cdna4", "v_mfma_f32_16x16x32_bf16", None, "CDNA3_MFMA", 16, 16, 32, "bf16", "bf16", "f32"),
    ("cdna4", "v_mfma_i32_16x16x64_i8", None, "CDNA3_MFMA", 16, 16, 64, "i8", "i8", "i32"),
    ("cdna4", "v_mfma_i32_32x32x32_i8", None, "CDNA3_MFMA", 32, 32, 32, "i8", "i8", "i32"),
    ("cdna4", "v_mfma_scale_f32_16x16x128_f8f6f4", "fp8", "CDNA4_MFMAScale", 16, 16, 128, "fp8", "fp8", "f32"),
    ("cdna4", "v_mfma_scale_f32_16x16x128_f8f6f4", "fp6", "CDNA4_MFMAScale", 16, 16, 128, "fp6", "fp6", "f32"),
    ("cdna4", "v_mfma_scale_f32_16x16x128_f8f6f4", "fp4", "CDNA4_MFMAScale", 16, 16, 128, "fp4", "fp4", "f32"),
    ("cdna4", "v_mfma_scale_f32_32x32x64_f8f6f4", "fp8", "CDNA4_MFMAScale", 32, 32, 64, "fp8", "fp8", "f32"),
    ("cdna4", "v_mfma_scale_f32_32x32x64_f8f6f4", "fp4", "CDNA4_MFMAScale", 32, 32, 64, "fp4", "fp4", "f32"),
    ("rdna3", "v_wmma_f32_16x16x16_f16", None, "GFX11_WMMA", 16, 16, 16, "f16", "f16", "f32"),
    ("rdna3", "v_wmma_f32_16x16x16_bf16", None, "GFX11_WMMA", 16, 16, 16, "bf16", "bf16", "f32"),
    ("rdna3", "v_wmma_f16_16x16x16_f16", None, "GFX11_WMMA", 16, 16, 16, "f16", "f16", "f16"),
    ("rdna3", "v_wmma_i32_16x16x16_iu8", None, "GFX11_WMMA", 16, 16, 16, "i8", "i8", "i32"),
    ("rdna4", "v_wmma_f32_16x16x16_f16", None, "GFX120X_WMMA", 16, 16, 16, "f16", "f16", "f32"),
    ("rdna4", "v_wmma_f32_16x16x16_bf16", None, "GFX120X_WMMA", 16, 16, 16, "bf16", "bf16", "f32"),
    ("rdna4", "v_wmma_f16_16x16x16_f16", None, "GFX120X_WMMA", 16, 16, 16, "f16", "f16", "f16"),
    ("rdna4", "v_wmma_i32_16x16x16_iu8", None, "GFX120X_WMMA", 16, 16, 16, "i8", "i8", "i32"),
    ("rdna4", "v_wmma_f32_16x16x16_fp8_fp8", None, "GFX120X_WMMA", 16, 16, 16, "fp8", "fp8", "f32"),
    ("rdna4", "v_wmma_f32_16x16x16_bf8_fp8", None, "GFX120X_WMMA", 16, 16, 16, "bf8", "fp8", "f32"),
    ("gfx1250", "v_wmma_f32_16x16x4_f32", None, "GFX1250_WMMA", 16, 16, 4, "f32", "f32", "f32"),
    ("gfx1250", "v_wmma_f32_16x16x32_f16", None, "GFX1250_WMMA", 16, 16, 32, "f16", "f16", "f32"),
    ("gfx1250", "v_wmma_f16_16x16x32_f16", None, "GFX1250_WMMA", 16, 16, 32, "f16", "f16", "f16"),
    ("gfx1250", "v_wmma_f32_16x16x32_bf16", None, "GFX1250_WMMA", 16, 16, 32, "bf16", "bf16", "f32"),
    ("gfx1250", "v_wmma_i32_16x16x64_iu8", None, "GFX1250_WMMA", 16, 16, 64, "i8", "i8", "i32"),
    ("gfx1250", "v_wmma_f32_16x16x64_fp8_fp8", None, "GFX1250_WMMA", 16, 16, 64, "fp8", "fp8", "f32"),
    ("gfx1250", "v_wmma_f16_16x16x64_bf8_fp8", None, "GFX1250_WMMA", 16, 16, 64, "bf8", "fp8", "f16"),
    ("gfx1250", "v_wmma_f32_16x16x128_fp8_bf8", None, "GFX1250_WMMA", 16, 16, 128, "fp8", "bf8", "f32"),
    ("gfx1250", "v_wmma_scale_f32_16x16x128_f8f6f4", "fp8", "GFX1250_WMMAScale", 16, 16, 128, "fp8", "fp8", "f32"),
    ("gfx1250", "v_wmma_scale_f32_16x16x128_f8f6f4", "bf8", "GFX1250_WMMAScale", 16, 16, 128, "bf8", "bf8", "f32"),
    ("gfx1250", "v_wmma_scale_f32_16x16x128_f8f6f4", "fp6", "GFX1250_WMMAScale", 16, 16, 128, "fp6", "fp6", "f32"),
    ("gfx1250", "v_wmma_scale_f32_16x16x128_f8f6f4", "fp4", "GFX1250_WMMAScale", 16, 16, 128, "fp4", "fp4", "f32"),
]

_CHILD = r"""
import json, sys
from flydsl._mlir import ir
from flydsl._mlir.dialects import fly
from flydsl._mlir._mlir_libs import _mlirDialectsFlyROCDL as R
op, m, n, k, a, b, acc = json.loads(sys.argv[1])
with ir.Context() as ctx, ir.Location.unknown():
    ctx.load_all_available_dialects()
    T = {"f16": ir.F16Type.get, "bf16": ir.BF16Type.get, "f32": ir.F32Type.get,
         "i32": lambda: ir.IntegerType.get_signless(32), "i8": lambda: ir.IntegerType.get_signless(8),
         "fp8": ir.Float8E4M3FNType.get, "bf8": ir.Float8E5M2Type.get, "fp8fnuz": ir.Float8E4M3FNUZType.get,
         "fp6": ir.Float6E2M3FNType.get, "fp4": ir.Float4E2M1FNType.get}
    t = fly.MmaAtomType.get(getattr(R, "MmaOp" + op + "Type").get(m, n, k, T[a](), T[b](), T[acc]()))
    print(json.dumps({"A": str(t.tv_layout_a), "B": str(t.tv_layout_b), "C": str(t.tv_layout_c), "atom": str(t)}))
"""


def ask(cfg: tuple) -> dict[str, str] | None:
    """FlyDSL's three TV layouts for one configuration (its printed spelling), None when FlyDSL refuses it."""
    p = subprocess.run([sys.executable, "-c", _CHILD, json.dumps(list(cfg[3:]))], capture_output=True, text=True,
                       timeout=300)
    if p.returncode != 0:
        return None
    return dict(json.loads(p.stdout.strip().splitlines()[-1]))


def main() -> None:
    from importlib.metadata import version

    cases: list[dict[str, Any]] = []
    for cfg in CONFIGS:
        cases.append({"arch": cfg[0], "instruction": cfg[1], "fmt": cfg[2], "op": cfg[3], "mnk": list(cfg[4:7]),
                      "types": list(cfg[7:]), "layouts": ask(cfg)})
    OUT.write_text(json.dumps({"source": f"FlyDSL {version('flydsl')} fly.MmaAtomType(...).tv_layout_a/b/c (CPU)",
                               "recorded": datetime.date.today().isoformat(), "recorder": "tests/amd_flydsl_cases.py",
                               "cases": cases}, indent=1) + "\n")
    print(f"wrote {len(cases)} atoms to {OUT}; refused: {[c['instruction'] for c in cases if c['layouts'] is None]}")


if __name__ == "__main__":
    main()
