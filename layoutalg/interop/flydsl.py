"""FlyDSL (AMD's CuTe-style Python DSL) spellings: layouts and MMA atoms as FlyDSL's own text, and back.

FlyDSL prints a layout as the MLIR type ``!fly.layout<shape:stride>`` (CuTe's notation) and an MMA
atom as ``!fly.mma_atom<!fly_rocdl.<target>.<op><MxNxK, (A, B) -> Acc, ...>>``; ``ir.Type.parse`` reads
both back in FlyDSL. :func:`to_flydsl` writes them for a layoutalg layout, a catalog fragment (its TV
layout) or an AMD instruction (:func:`layoutalg.amd.mfma`, :func:`~layoutalg.amd.wmma`,
:func:`~layoutalg.amd.wmma1250`); :func:`from_flydsl` reads a layout's text. FlyDSL is not imported.

FlyDSL's atoms hold the same TV layouts as the catalog's fragments (``tests/test_amd_flydsl.py``, 42
atoms of CDNA3, CDNA4, RDNA3, RDNA4 and gfx1250), with two named differences that a fragment's
``form="flydsl"`` reproduces: RDNA4's 16-bit A/B (a K permutation of the ISA's map, Triton's too) and
gfx1250's 16-bit D (another value order of the same elements).

    >>> from layoutalg.amd import mfma, wmma1250
    >>> to_flydsl(mfma("v_mfma_f32_32x32x8_f16", "cdna3"))
    '!fly.mma_atom<!fly_rocdl.cdna3.mfma<32x32x8, (f16, f16) -> f32>>'
    >>> to_flydsl(wmma1250("v_wmma_f32_16x16x32_f16").fragment("A"))
    '!fly.layout<((16,2),(8,2)):((1,128),(16,256))>'
    >>> str(from_flydsl("!fly.layout<((32,2),4):((1,128),32)>"))
    '((32,2),4):((1,128),32)'
"""

from __future__ import annotations

from typing import Any

from ..errors import LayoutError

__all__ = ["to_flydsl", "from_flydsl", "flydsl_type"]

_TYPES = {"f16": "f16", "bf16": "bf16", "f32": "f32", "i32": "i32", "i8": "i8", "iu8": "i8",
          "fp8": "f8E4M3FN", "bf8": "f8E5M2", "fp6": "f6E2M3FN", "bf6": "f6E3M2FN", "fp4": "f4E2M1FN"}


def flydsl_type(dtype: str, arch: str) -> str:
    """The MLIR element type FlyDSL takes for AMD's ``dtype`` on ``arch`` (CDNA3's fp8/bf8 are the FNUZ types).

    >>> flydsl_type("fp8", "cdna3"), flydsl_type("fp8", "gfx1250"), flydsl_type("iu8", "rdna4")
    ('f8E4M3FNUZ', 'f8E4M3FN', 'i8')
    """
    if not isinstance(dtype, str) or dtype not in _TYPES:
        raise LayoutError(f"flydsl_type: FlyDSL has no element type for AMD's {dtype!r}; known: {', '.join(_TYPES)}")
    t = _TYPES[dtype]
    if arch == "cdna3" and dtype in ("fp8", "bf8"):
        t += "UZ"
    return t


def _atom(x: Any, fmt: str | None) -> str:
    r = x.row
    arch = x.arch
    name = type(x).__name__
    if name == "Mfma":
        if r.sparse or r.blocks > 1 or r.out == "f64":
            raise LayoutError(f"to_flydsl: FlyDSL has no atom for {x.name} (sparse, multi-block and f64 MFMA are not "
                              "among its MmaOp types)")
        ta, tb = (x.operand_dtype(op, fmt) for op in ("A", "B"))
        types = f"({flydsl_type(ta, arch)}, {flydsl_type(tb, arch)}) -> {flydsl_type(r.out, arch)}"
        if r.scaled:
            return f"!fly.mma_atom<!fly_rocdl.cdna4.mfma_scale<{r.m}x{r.n}x{r.k}, {types}, opselA = 0, opselB = 0>>"
        return f"!fly.mma_atom<!fly_rocdl.cdna3.mfma<{r.m}x{r.n}x{r.k}, {types}>>"
    if name == "Wmma":
        if r.sparse:
            raise LayoutError(f"to_flydsl: FlyDSL has no atom for the sparse {x.name}")
        target = {"rdna3": "gfx11", "rdna4": "gfx120x"}[arch]
        types = f"({flydsl_type(r.a, arch)}, {flydsl_type(r.b, arch)}) -> {flydsl_type(r.out, arch)}"
        return (f"!fly.mma_atom<!fly_rocdl.{target}.wmma<{r.m}x{r.n}x{r.k}, {types}, signA = false, signB = false, "
                "clamp = false>>")
    if name == "Wmma1250":
        ta, tb = (x.operand_dtype(op, fmt) for op in ("A", "B"))
        if r.out == "bf16f32":
            raise LayoutError(f"to_flydsl: FlyDSL has no atom for {x.name}")
        types = f"({flydsl_type(ta, arch)}, {flydsl_type(tb, arch)}) -> {flydsl_type(r.out, arch)}"
        if r.scale:
            return (f"!fly.mma_atom<!fly_rocdl.gfx1250.wmma_scale<{r.m}x{r.n}x{r.k}, {types}, opselA = 0, opselB = 0, "
                    f"modC = 0, reuseA = false, reuseB = false, blockSize = {r.scale}>>")
        return (f"!fly.mma_atom<!fly_rocdl.gfx1250.wmma<{r.m}x{r.n}x{r.k}, {types}, signA = false, signB = false, "
                "clamp = false>>")
    raise LayoutError(f"to_flydsl: {x!r} is not an AMD instruction")


def to_flydsl(x: Any, fmt: str | None = None) -> str:
    """FlyDSL's text of ``x``: a Layout (``!fly.layout<...>``), a catalog fragment (its TV layout), or an AMD
    MFMA / WMMA instruction (``!fly.mma_atom<...>``; ``fmt`` picks an ``f8f6f4`` operand's format, fp8
    by default). LayoutError for what FlyDSL has no spelling of (swizzled layouts, sparse atoms).
    """
    from ..layout import Layout

    if type(x).__name__ in ("Mfma", "Wmma", "Wmma1250"):
        return _atom(x, fmt)
    if fmt is not None:
        raise LayoutError("to_flydsl: fmt= applies to an f8f6f4 instruction, not to a layout")
    if type(x).__name__ == "MatrixFragment":
        x = x.layout
    if isinstance(x, Layout):
        if not x.is_static:
            raise LayoutError(f"to_flydsl: {x} has symbolic entries; FlyDSL's static layouts take integers")
        return f"!fly.layout<{x}>"
    raise LayoutError(f"to_flydsl: {x!r} is not a Layout, an AMD fragment or an AMD instruction (a swizzled or "
                      "composed layout has no !fly.layout spelling here)")


def from_flydsl(text: str) -> Any:
    """The Layout of FlyDSL's ``!fly.layout<shape:stride>`` text (read by layoutalg's CuTe-notation grammar)."""
    from ..parse import parse

    if not isinstance(text, str):
        raise LayoutError(f"from_flydsl: {text!r} is not text")
    t = text.strip()
    if not (t.startswith("!fly.layout<") and t.endswith(">")):
        raise LayoutError(f"from_flydsl: {text!r} is not FlyDSL's '!fly.layout<shape:stride>'")
    return parse(t[len("!fly.layout<"):-1])
