"""Gluon's AMD layouts in: ``AMDMFMALayout`` (the MFMA accumulator over warps and tiles) as a TV layout.

Triton's ``AMDMFMALayout(version, instr_shape, transposed, warps_per_cta, element_bitwidth,
tiles_per_warp)`` places a CTA's accumulator tile: one MFMA instruction's D fragment (the ISA's
register map, :mod:`layoutalg.amd.cdna.mfma`), repeated ``tiles_per_warp`` times in each warp's
registers, then over ``warps_per_cta`` warps, then over the tensor in registers; dimension 1 (N)
before dimension 0 (M) at each level. ``transposed`` holds D transposed (lanes along M): the tile's
row and column swap, the tiling does not. Read as Triton's bases (``[dim0, dim1]`` per input bit,
XOR-combined), with ``H`` rows a register group (4; 1 for 64-bit results) and ``G = min(M/H, 64/N)``
lane bands (the ISA rule)::

    register: [1,0] .. [H/2,0], then [H*G,0], [2*H*G,0] ..     lane: [0,1] .. [0,N/2], then [H,0], [2H,0] ..
    then, dimension 1 first, its tiles [0,N], [0,2N] .. and its repetitions over the tensor [0,E1] ..,
    then dimension 0's; warp: [0, N*tn] .. then [M*tm, 0] ..

(``E1`` the CTA tile's extent ``N*tn*wn``, doubling.) A tensor smaller
than it broadcasts the registers, lanes and warps that fall outside (their bases become 0), as
Triton's ``combineCtaCgaWithShape`` does.

Worked by hand, ``AMDMFMALayout(3, [32, 32, 8], False, [1, 1])`` on 32 x 32 (the bases AMD's
calculator and Triton print): register ``[1,0],[2,0],[8,0],[16,0]``, lane ``[0,1] .. [0,16], [4,0]``;
lane 37 (``5 + 32``), register 5 (bits 0 and 2): ``[0,1]^[0,4]^[4,0]^[1,0]^[8,0] = [13, 5]`` --
``v5{37} = D[13][5]``::

    >>> tv = from_gluon_amd("AMDMFMALayout(version=3, instr_shape=[32, 32, 8], transposed=False, warps_per_cta=[1, 1])", (32, 32))
    >>> str(tv), tv(37, 5) == 13 + 32 * 5
    ('(((32,2),1,1),(4,4)):(((32,4),0,0),(1,8))', True)

Checked against Triton 3.6's ``to_linear_layout`` (``tests/test_gluon_amd.py``: recorded
configurations over versions, shapes, warps, tiles and transposition, and a live sample).
The dot operands, ``AMDWMMALayout`` and the scale layouts are not covered here yet; shared layouts
(``SwizzledSharedLayout``, ``PaddedSharedLayout``) are :func:`layoutalg.interop.gluon.from_gluon`'s
and :mod:`layoutalg.amd.lds`'s.
"""

from __future__ import annotations

import ast
from typing import Any
from collections.abc import Sequence

from ..errors import LayoutError

__all__ = ["MFMA_FIELDS", "mfma_params", "mfma_bases", "from_gluon_amd"]

#: ``AMDMFMALayout``'s fields in constructor order, with their defaults.
MFMA_FIELDS: tuple[tuple[str, Any], ...] = (("version", None), ("instr_shape", None), ("transposed", None),
                                            ("warps_per_cta", None), ("element_bitwidth", None),
                                            ("tiles_per_warp", None), ("cga_layout", ()))


def _log2(x: int, op: str, what: str) -> int:
    if isinstance(x, bool) or not isinstance(x, int) or x < 1 or x & (x - 1):
        raise LayoutError(f"{op}: {what} {x!r} is not a power of two")
    return x.bit_length() - 1


def mfma_params(layout: Any) -> dict[str, Any]:
    """The fields of an ``AMDMFMALayout``: a Gluon object, its source text, or a dict of its fields.

    >>> mfma_params("AMDMFMALayout(4, [16, 16, 32], True, [2, 2])")["tiles_per_warp"]
    [1, 1]
    """
    op = "mfma_params"
    if isinstance(layout, dict):
        given = dict(layout)
    elif isinstance(layout, str):
        try:
            call = ast.parse(layout.strip().removeprefix("amd.").removeprefix("gl.amd."), mode="eval").body
        except SyntaxError as e:
            raise LayoutError(f"{op}: {layout!r} is not a constructor call: {e.msg}") from None
        if not isinstance(call, ast.Call) or getattr(call.func, "id", getattr(call.func, "attr", "")) != "AMDMFMALayout":
            raise LayoutError(f"{op}: {layout!r} is not an AMDMFMALayout(...) call")
        try:
            given = {name: ast.literal_eval(a) for (name, _), a in zip(MFMA_FIELDS, call.args)}
            given.update({k.arg: ast.literal_eval(k.value) for k in call.keywords if k.arg})
        except ValueError:
            raise LayoutError(f"{op}: the arguments of {layout!r} must be literals") from None
    elif type(layout).__name__ == "AMDMFMALayout":
        given = {name: getattr(layout, name) for name, _ in MFMA_FIELDS}
    else:
        raise LayoutError(f"{op}: {layout!r} is not an AMDMFMALayout (object, source text or dict of fields)")
    unknown = set(given) - {n for n, _ in MFMA_FIELDS}
    if unknown:
        raise LayoutError(f"{op}: AMDMFMALayout has no field {sorted(unknown)[0]!r}")
    out = {n: given.get(n, d) for n, d in MFMA_FIELDS}
    for n in ("version", "instr_shape", "transposed", "warps_per_cta"):
        if out[n] is None:
            raise LayoutError(f"{op}: AMDMFMALayout needs {n}")
    out["instr_shape"] = [int(x) for x in out["instr_shape"]]
    out["warps_per_cta"] = [int(x) for x in out["warps_per_cta"]]
    out["element_bitwidth"] = 32 if out["element_bitwidth"] is None else int(out["element_bitwidth"])
    rank = len(out["warps_per_cta"])
    out["tiles_per_warp"] = [1] * rank if out["tiles_per_warp"] is None else [int(x) for x in out["tiles_per_warp"]]
    out["cga_layout"] = [list(v) for v in (out["cga_layout"] or [])]
    return out


def mfma_bases(layout: Any, shape: Sequence[int]) -> dict[str, list[list[int]]]:
    """Triton's linear layout of an ``AMDMFMALayout`` on ``shape``: ``{register, lane, warp, block}`` bases.

    Refused by name (as Triton refuses them, or not covered): versions other than 1-4, instruction
    shapes other than 16 x 16 and 32 x 32, element widths other than 32 and 64, rank other than 2,
    CGA layouts.

    >>> mfma_bases("AMDMFMALayout(3, [16, 16, 16], False, [2, 2], tiles_per_warp=[2, 2])", (64, 64))["warp"]
    [[0, 32], [32, 0]]
    """
    op = "mfma_bases"
    p = mfma_params(layout)
    if p["version"] not in (1, 2, 3, 4):
        raise LayoutError(f"{op}: AMDMFMALayout version {p['version']}; versions are 1-4 (CDNA1-CDNA4)")
    if len(p["warps_per_cta"]) != 2 or len(p["tiles_per_warp"]) != 2:
        raise LayoutError(f"{op}: rank {len(p['warps_per_cta'])} (batched) MFMA layouts are not covered; rank 2 only")
    if p["cga_layout"]:
        raise LayoutError(f"{op}: CGA layouts (several CTAs) are not covered")
    if len(p["instr_shape"]) < 2:
        raise LayoutError(f"{op}: instr_shape {p['instr_shape']} needs [M, N, K]")
    m, n = p["instr_shape"][:2]
    if (m, n) not in ((16, 16), (32, 32)):
        raise LayoutError(f"{op}: instr_shape {p['instr_shape']}: the accumulator maps covered are 16 x 16 and "
                          f"32 x 32 (4 x 4 and 64 x 4 blocks are not)")
    bits = p["element_bitwidth"]
    if bits not in (32, 64):
        raise LayoutError(f"{op}: element_bitwidth {bits}; MFMA accumulators are 32 or 64 bits")
    shape = [int(s) for s in shape]
    if len(shape) != 2:
        raise LayoutError(f"{op}: shape {shape} has rank {len(shape)}; the layout has rank 2")
    for s in shape:
        _log2(s, op, "extent")
    tm, tn = (1 << _log2(t, op, "tiles_per_warp entry") for t in p["tiles_per_warp"])
    wm, wn = (1 << _log2(w, op, "warps_per_cta entry") for w in p["warps_per_cta"])
    # one instruction's D (the ISA's rule; rows M, columns N)
    H = 1 if bits == 64 else 4
    G = min(m // H, 64 // n)
    lane = [[0, 1 << b] for b in range(_log2(n, op, "N"))] + [[H << t, 0] for t in range(_log2(64 // n, op, "bands"))]
    reg = [[1 << b, 0] for b in range(_log2(H, op, "H"))] + [[(H * G) << t, 0] for t in range(_log2(m // (H * G), op, "M"))]
    if p["transposed"]:
        lane = [[c, r] for r, c in lane]
        reg = [[c, r] for r, c in reg]
    warp = ([[0, (n * tn) << t] for t in range(_log2(wn, op, "warps"))]
            + [[(m * tm) << t, 0] for t in range(_log2(wm, op, "warps"))])
    extent = [m * tm * wm, n * tn * wn]
    for d, inst, tiles in ((1, n, tn), (0, m, tm)):  # dimension 1 first: its tiles, then its repetitions
        unit = [1, 0] if d == 0 else [0, 1]
        reg += [[x * (inst << t) for x in unit] for t in range(_log2(tiles, op, "tiles"))]
        while extent[d] < shape[d]:  # a larger tensor repeats the CTA tile in registers
            reg.append([x * extent[d] for x in unit])
            extent[d] *= 2

    def inside(v: list[int]) -> bool:
        return v[0] < shape[0] and v[1] < shape[1]

    reg = [v if inside(v) else [0, 0] for v in reg]
    lane = [v if inside(v) else [0, 0] for v in lane]
    warp = [v if inside(v) else [0, 0] for v in warp]
    return {"register": reg, "lane": lane, "warp": warp, "block": []}


def from_gluon_amd(layout: Any, shape: Sequence[int]) -> Any:
    """The TV layout ``((lane, warp, block), register) -> d0 + D0*d1`` of an AMD Gluon distributed layout.

    Today: ``AMDMFMALayout`` (:func:`mfma_bases`); the conversion is :func:`layoutalg.linear.from_linear`'s.
    """
    from ..linear import from_linear

    return from_linear(mfma_bases(layout, shape), shape=[int(s) for s in shape])
