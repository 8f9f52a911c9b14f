"""Gluon's AMD layouts in and out: ``AMDMFMALayout``, ``AMDWMMALayout``, their ``DotOperandLayout`` operands
and the scale layouts of ``mfma_scaled`` / ``wmma_scaled``, as Triton's bases and as TV layouts.

Triton's rules (``LinearLayoutConversions.cpp`` of Triton 3.6, restated; what Triton refuses is
refused here by a named rule, :data:`RULES`):

- ``AMDMFMALayout(version, instr_shape, transposed, warps_per_cta, element_bitwidth, tiles_per_warp)``:
  one instruction's D tile (``H`` = 4 rows a register group, 1 for 64-bit results; lanes along N,
  then the lane groups along M; transposed swaps the roles of M and N inside the tile), then along
  N the ``tiles_per_warp`` tiles in registers, the warps, the tensor's repetitions in registers, then
  along M the tiles, the warps, and the rest of the tensor (``combineCtaCgaWithShape``).
- ``AMDWMMALayout(version, transposed, warps_per_cta, instr_shape, tiles_per_warp)``, wave32: version 1
  (RDNA3) puts the 8 values of a lane on every other row (lane 16 selects the odd rows), versions 2
  and 3 (RDNA4, gfx1250) on 8 consecutive rows (lane 16 selects rows 8-15); the tiling as MFMA's.
- ``DotOperandLayout(i, parent, k_width)``: ``k_width`` consecutive K values in registers, the
  non-K extent of one instruction in lanes, then the rest of the lanes along K (WMMA version 1:
  the upper half-wave duplicates the lower), repeated along K to the instruction's K and the
  tensor's, then ``tiles_per_warp`` along the non-K dimension; warps broadcast along K.
- scale layouts (``get_mfma_scale_layout`` / ``get_wmma_scale_layout``): one E8M0 scale per lane
  and 32 K values, laid as the instruction reads them.

Worked by hand, ``AMDMFMALayout(3, [32, 32, 8], False, [1, 1])`` on 32 x 32 (the bases AMD's
calculator and Triton print): register ``[1,0],[2,0],[8,0],[16,0]``, lane ``[0,1] .. [0,16], [4,0]``;
lane 37 (``5 + 32``), register 5 (bits 0 and 2): ``[0,1]^[0,4]^[4,0]^[1,0]^[8,0] = [13, 5]`` --
``v5{37} = D[13][5]``::

    >>> tv = from_gluon_amd("AMDMFMALayout(version=3, instr_shape=[32, 32, 8], transposed=False, warps_per_cta=[1, 1])", (32, 32))
    >>> str(tv), tv(37, 5) == 13 + 32 * 5
    ('(((32,2),1,1),(4,4)):(((32,4),0,0),(1,8))', True)
    >>> amd_bases("DotOperandLayout(0, AMDWMMALayout(2, False, [1, 1], [16, 16, 16]), 8)", (16, 16))["lane"]
    [[1, 0], [2, 0], [4, 0], [8, 0], [0, 8]]

Rank 3 (a batch dimension first) follows Triton's batched forms. Checked against Triton 3.6's engine
(``tests/test_gluon_amd.py``: 2000 recorded configurations of every kind, ranks 2 to 4, valid or
refused, one probe per rule, and a live held-out sample each run). Shared layouts
(``SwizzledSharedLayout``, ``PaddedSharedLayout``) are :func:`layoutalg.interop.gluon.from_gluon`'s
and :mod:`layoutalg.amd.lds`'s; :func:`to_gluon_amd` spells an AMD layout back.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import LayoutError
from .triton_ll import TritonLL, broadcast_dot_operand, combine_cta_cga, identity_nd

__all__ = ["MFMA_FIELDS", "WMMA_FIELDS", "RULES", "AmdGluonLayout", "amd_layout", "mfma_params", "amd_bases",
           "mfma_bases", "scale_bases", "from_gluon_amd", "amd_source", "to_gluon_amd"]

#: ``AMDMFMALayout``'s fields in constructor order, with their defaults.
MFMA_FIELDS: tuple[tuple[str, Any], ...] = (("version", None), ("instr_shape", None), ("transposed", None),
                                            ("warps_per_cta", None), ("element_bitwidth", None),
                                            ("tiles_per_warp", None), ("cga_layout", ()))
#: ``AMDWMMALayout``'s fields in constructor order, with their defaults.
WMMA_FIELDS: tuple[tuple[str, Any], ...] = (("version", None), ("transposed", None), ("warps_per_cta", None),
                                            ("instr_shape", None), ("tiles_per_warp", None), ("cga_layout", ()))

#: The rules a configuration must meet, by name: Triton refuses the configurations that break the
#: first ones (Gluon's ``verify``, or an abort of its C++); layoutalg names the rule in its LayoutError.
RULES: dict[str, str] = {
    "mfma-version": "AMDMFMALayout.version is 1-4 (gfx908, gfx90a, gfx942, gfx950)",
    "mfma-instr-shape": "AMDMFMALayout.instr_shape is [M, N, K] with [M, N] one of [32, 32], [16, 16], [64, 4], [4, 64]",
    "mfma-element-bitwidth": "AMDMFMALayout.element_bitwidth is 32 or 64",
    "mfma-64x4-transposed": "a 64 x 4 AMDMFMALayout must be transposed (Triton swaps A and B to use the 4 x 64 broadcast)",
    "wmma-version": "AMDWMMALayout.version is 1-3 (RDNA3, RDNA4, gfx1250)",
    "wmma-instr-shape": "AMDWMMALayout.instr_shape is [16, 16, K]: K = 16 (version 1), 16 or 32 (version 2), "
                        "4, 32, 64 or 128 (version 3)",
    "wmma-tensor-shape": "each of M and N of a tensor in an AMDWMMALayout is 1 or at least the instruction's 16",
    "power-of-two": "warps_per_cta, tiles_per_warp, k_width and the tensor shape are powers of two",
    "operand-index": "DotOperandLayout.operand_index is 0 (A) or 1 (B)",
    "k-width": "DotOperandLayout.k_width is given (not 0); WMMA parents: 8 or 16 (version 1), 4, 8 or 16 "
               "(version 2), 2, 8 or 16 (version 3)",
    "scale-instr-m": "an MFMA scale layout needs instr M = 16 or 32",
    "scale-tiles-per-warp": "a WMMA scale layout takes at most 2 tiles per warp along M (A) or N (B)",
    "rank": "rank 2, or 3 with a batch dimension first (an MFMA DotOperandLayout: any rank from 2); warps_per_cta "
            "(and tiles_per_warp) as long as the tensor's rank; scale layouts rank 2",
    "cga": "CGA layouts (several CTAs) are not covered by layoutalg",
}


def _refuse(op: str, rule: str, detail: str) -> LayoutError:
    return LayoutError(f"{op}: {detail} [rule {rule}: {RULES[rule]}]")


@dataclass(frozen=True)
class AmdGluonLayout:
    """An AMD Gluon layout read: ``kind`` ``"mfma"`` / ``"wmma"``, the parent's ``fields`` (defaults filled),
    and for a ``DotOperandLayout`` its ``operand_index`` and ``k_width`` (None for the accumulator)."""

    kind: str
    fields: tuple[tuple[str, Any], ...]
    operand_index: int | None = None
    k_width: int | None = None

    def __getitem__(self, name: str) -> Any:
        return dict(self.fields)[name]

    @property
    def is_dot(self) -> bool:
        return self.operand_index is not None


_CLASSES = {"AMDMFMALayout": ("mfma", MFMA_FIELDS), "AMDWMMALayout": ("wmma", WMMA_FIELDS)}


def _strip(name: str) -> str:
    return name.rsplit(".", 1)[-1]


def _parent(kind: str, given: dict[str, Any], op: str) -> AmdGluonLayout:
    cls, fields = ("AMDMFMALayout", MFMA_FIELDS) if kind == "mfma" else ("AMDWMMALayout", WMMA_FIELDS)
    unknown = set(given) - {n for n, _ in fields}
    if unknown:
        raise LayoutError(f"{op}: {cls} has no field {sorted(unknown)[0]!r}")
    out = {n: given.get(n, d) for n, d in fields}
    for n in ("version", "transposed", "warps_per_cta") + (("instr_shape",) if kind == "mfma" else ()):
        if out[n] is None:
            raise LayoutError(f"{op}: {cls} needs {n}")
    if kind == "wmma" and out["instr_shape"] is None:
        out["instr_shape"] = [16, 16, 16]
    try:
        out["instr_shape"] = [int(x) for x in out["instr_shape"]]
        out["warps_per_cta"] = [int(x) for x in out["warps_per_cta"]]
        rank = len(out["warps_per_cta"])
        out["tiles_per_warp"] = [1] * rank if not out["tiles_per_warp"] else [int(x) for x in out["tiles_per_warp"]]
        if kind == "mfma":
            out["element_bitwidth"] = 32 if out["element_bitwidth"] is None else int(out["element_bitwidth"])
        out["cga_layout"] = [[int(c) for c in v] for v in (out["cga_layout"] or [])]
    except (TypeError, ValueError):
        raise LayoutError(f"{op}: the fields of {cls} {given!r} are not integers / lists of integers") from None
    if not isinstance(out["version"], int) or isinstance(out["version"], bool):
        raise LayoutError(f"{op}: {cls}.version {out['version']!r} is not an integer")
    out["transposed"] = bool(out["transposed"])
    return AmdGluonLayout(kind, tuple((n, out[n]) for n, _ in fields))


def _from_node(node: ast.AST, text: str, op: str) -> AmdGluonLayout:
    if not isinstance(node, ast.Call):
        raise LayoutError(f"{op}: {text!r} is not a constructor call")
    name = _strip(ast.unparse(node.func))
    if name == "DotOperandLayout":
        fields = ("operand_index", "parent", "k_width")
        args = dict(zip(fields, node.args))
        args.update({k.arg: k.value for k in node.keywords if k.arg})
        if set(args) != set(fields):
            raise LayoutError(f"{op}: DotOperandLayout needs operand_index, parent and k_width: {text!r}")
        parent = _from_node(args["parent"], text, op)
        try:
            return _dot(parent, ast.literal_eval(args["operand_index"]), ast.literal_eval(args["k_width"]), op)
        except ValueError:
            raise LayoutError(f"{op}: the arguments of {text!r} must be literals") from None
    if name not in _CLASSES:
        raise LayoutError(f"{op}: {text!r} is not an AMDMFMALayout, AMDWMMALayout or DotOperandLayout of one")
    kind, fields2 = _CLASSES[name]
    if len(node.args) > len(fields2):
        raise LayoutError(f"{op}: {name} takes at most {len(fields2)} arguments: {text!r}")
    try:
        given = {n: ast.literal_eval(a) for (n, _), a in zip(fields2, node.args)}
        given.update({k.arg: ast.literal_eval(k.value) for k in node.keywords if k.arg})
    except ValueError:
        raise LayoutError(f"{op}: the arguments of {text!r} must be literals") from None
    return _parent(kind, given, op)


def _dot(parent: AmdGluonLayout, operand_index: Any, k_width: Any, op: str) -> AmdGluonLayout:
    if parent.is_dot:
        raise LayoutError(f"{op}: a DotOperandLayout's parent is an AMDMFMALayout or AMDWMMALayout, not another operand")
    for what, v in (("operand_index", operand_index), ("k_width", k_width)):
        if isinstance(v, bool) or not isinstance(v, int):
            raise LayoutError(f"{op}: DotOperandLayout.{what} {v!r} is not an integer")
    return AmdGluonLayout(parent.kind, parent.fields, operand_index, k_width)


def amd_layout(layout: Any) -> AmdGluonLayout:
    """An AMD Gluon layout read from a Gluon object, its source text, a dict of fields, or an AmdGluonLayout.

    A dict names its class by ``"kind"`` (``"mfma"`` / ``"wmma"``; MFMA when absent) and may carry
    ``operand_index`` and ``k_width`` (a ``DotOperandLayout`` of it). Nothing is evaluated.

    >>> amd_layout("gl.DotOperandLayout(1, amd.AMDWMMALayout(3, False, [2, 2], [16, 16, 32]), 8)").k_width
    8
    >>> amd_layout("AMDMFMALayout(4, [16, 16, 32], True, [2, 2])")["tiles_per_warp"]
    [1, 1]
    """
    op = "amd_layout"
    if isinstance(layout, AmdGluonLayout):
        return layout
    if isinstance(layout, dict):
        given = dict(layout)
        kind = given.pop("kind", "mfma")
        if kind not in ("mfma", "wmma"):
            raise LayoutError(f"{op}: kind {kind!r} is not 'mfma' or 'wmma'")
        oi, kw = given.pop("operand_index", None), given.pop("k_width", None)
        p = _parent(kind, given, op)
        return p if oi is None and kw is None else _dot(p, oi, kw, op)
    if isinstance(layout, str):
        try:
            node = ast.parse(layout.strip(), mode="eval").body
        except SyntaxError as e:
            raise LayoutError(f"{op}: {layout!r} is not a constructor call: {e.msg}") from None
        return _from_node(node, layout, op)
    name = type(layout).__name__
    if name == "GluonLayout":   # interop.gluon_layouts' mirror of a constructor call
        if layout.kind == "DotOperandLayout":
            return _dot(amd_layout(layout["parent"]), layout["operand_index"], layout["k_width"], op)
        if layout.kind in _CLASSES:
            kind, fields = _CLASSES[layout.kind]
            return _parent(kind, {n: _thawed(layout[n]) for n, _ in fields}, op)
    if name == "DotOperandLayout":
        return _dot(amd_layout(layout.parent), layout.operand_index, layout.k_width, op)
    if name in _CLASSES:
        kind, fields = _CLASSES[name]
        return _parent(kind, {n: getattr(layout, n) for n, _ in fields}, op)
    raise LayoutError(f"{op}: {layout!r} is not an AMD Gluon layout (object, source text or dict of fields)")


def _thawed(v: Any) -> Any:
    return [_thawed(x) for x in v] if isinstance(v, (tuple, list)) else v


def mfma_params(layout: Any) -> dict[str, Any]:
    """The fields of an ``AMDMFMALayout``: a Gluon object, its source text, or a dict of its fields.

    >>> mfma_params("AMDMFMALayout(4, [16, 16, 32], True, [2, 2])")["tiles_per_warp"]
    [1, 1]
    """
    g = amd_layout(layout)
    if g.kind != "mfma" or g.is_dot:
        raise LayoutError(f"mfma_params: {layout!r} is not an AMDMFMALayout")
    return dict(g.fields)


# ---------------------------------------------------------------------------------------------
# Triton's rules
# ---------------------------------------------------------------------------------------------
def _pow2(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 1 and not v & (v - 1)


def _check(g: AmdGluonLayout, shape: list[int], op: str) -> None:
    """Refuse what Triton refuses (Gluon's verify, its C++ asserts) and what layoutalg does not cover."""
    v, ish = g["version"], g["instr_shape"]
    if g.kind == "mfma":
        if v not in (1, 2, 3, 4):
            raise _refuse(op, "mfma-version", f"version {v}")
        if len(ish) != 3 or ish[:2] not in ([32, 32], [16, 16], [64, 4], [4, 64]):
            raise _refuse(op, "mfma-instr-shape", f"instr_shape {ish}")
        if g["element_bitwidth"] not in (32, 64):
            raise _refuse(op, "mfma-element-bitwidth", f"element_bitwidth {g['element_bitwidth']}")
    else:
        if v not in (1, 2, 3):
            raise _refuse(op, "wmma-version", f"version {v}")
    rank = len(g["warps_per_cta"])
    if any(len(b) != rank for b in g["cga_layout"]):
        raise LayoutError(f"{op}: cga_layout bases {g['cga_layout']} do not have the rank {rank} of warps_per_cta")
    if g.is_dot:
        if g.operand_index not in (0, 1):
            raise _refuse(op, "operand-index", f"operand_index {g.operand_index}")
        kw = g.k_width
        if g.kind == "wmma":
            if kw not in {1: (8, 16), 2: (4, 8, 16), 3: (2, 8, 16)}[v]:
                raise _refuse(op, "k-width", f"k_width {kw} for an AMDWMMALayout version {v}")
        elif kw == 0:
            raise _refuse(op, "k-width", "k_width 0")
    if g.kind == "wmma" and (ish[:2] != [16, 16] or len(ish) != 3
                             or ish[2] not in {1: (16,), 2: (16, 32), 3: (4, 32, 64, 128)}[v]):
        raise _refuse(op, "wmma-instr-shape", f"instr_shape {ish} for version {v}")
    if g.kind == "mfma" and not g.is_dot and ish[:2] == [64, 4] and not g["transposed"]:
        raise _refuse(op, "mfma-64x4-transposed", f"instr_shape {ish}, transposed=False")
    ranks_ok = rank >= 2 if (g.kind == "mfma" and g.is_dot) else rank in (2, 3)   # Triton's MFMA operands: any rank
    if not ranks_ok or len(shape) != rank or len(g["tiles_per_warp"]) < rank:
        raise _refuse(op, "rank", f"warps_per_cta {g['warps_per_cta']}, tiles_per_warp {g['tiles_per_warp']}, "
                                  f"shape {shape}")
    for what, vals in (("warps_per_cta", g["warps_per_cta"]), ("tiles_per_warp", g["tiles_per_warp"][:rank]),
                       ("shape", shape), ("k_width", [g.k_width] if g.is_dot else [])):
        if not all(_pow2(x) for x in vals):
            raise _refuse(op, "power-of-two", f"{what} {vals}")
    if g.kind == "wmma" and not g.is_dot and any(s != 1 and s < 16 for s in shape[-2:]):
        raise _refuse(op, "wmma-tensor-shape", f"shape {shape}")
    if g["cga_layout"]:
        raise _refuse(op, "cga", f"cga_layout {g['cga_layout']}")


def _accumulator(g: AmdGluonLayout, shape: list[int]) -> Any:
    m, n = g["instr_shape"][:2]
    b = len(shape) - 2                     # 1 with a batch dimension (dim0)
    tm, tn = g["tiles_per_warp"][b], g["tiles_per_warp"][b + 1]
    wm, wn = g["warps_per_cta"][b:]
    dm, dn = f"dim{b}", f"dim{b + 1}"
    I = TritonLL.identity
    if g.kind == "mfma":
        h = 1 if g["element_bitwidth"] == 64 else 4
        tiles = m * n // (64 * h)
        rows, cols = (dm, dn) if not g["transposed"] else (dn, dm)   # registers run along `rows`
        lane_first = n if not g["transposed"] else m
        tile = I(h, "register", rows) * (I(lane_first, "lane", cols) * I(64 // lane_first, "lane", rows))
        tile = tile * I(tiles, "register", rows)
    else:
        rows, cols = (dm, dn) if not g["transposed"] else (dn, dm)
        if g["version"] == 1:   # 8 values on every other row; lane 16 takes the odd rows
            tile = TritonLL.from_bases({"register": [(2, 0), (4, 0), (8, 0)],
                                        "lane": [(0, 1), (0, 2), (0, 4), (0, 8), (1, 0)]}, [rows, cols])
        else:                   # 8 consecutive rows; lane 16 takes rows 8-15
            tile = TritonLL.from_bases({"register": [(1, 0), (2, 0), (4, 0)],
                                        "lane": [(0, 1), (0, 2), (0, 4), (0, 8), (8, 0)]}, [rows, cols])
    tile = tile.transpose_outs([dn, dm])
    tile = tile * I(tn, "register", dn) * I(wn, "warp", dn)
    tile = tile * I(shape[b + 1] // (n * wn * tn), "register", dn) * I(tm, "register", dm) * I(wm, "warp", dm)
    if b:
        tile = tile * I(1, "register", "dim0") * I(1, "lane", "dim0") * I(g["warps_per_cta"][0], "warp", "dim0")
    return combine_cta_cga(tile, [], shape)


def _operand(g: AmdGluonLayout, shape: list[int]) -> Any:
    m, n, k = g["instr_shape"]
    opi, kw = int(g.operand_index or 0), int(g.k_width or 0)
    rank = len(shape)
    names = [f"dim{d}" for d in range(rank)]
    kdim = rank - 1 if opi == 0 else rank - 2
    nonkdim = rank - 2 if opi == 0 else rank - 1
    dk, dnk = names[kdim], names[nonkdim]
    k_size = shape[kdim]
    nonk = m if opi == 0 else n
    tiles_nonk = g["tiles_per_warp"][nonkdim]
    I = TritonLL.identity

    def batch(t: TritonLL) -> TritonLL:  # a batch dimension: size 1 in registers and lanes
        return t * I(1, "register", "dim0") * I(1, "lane", "dim0") if rank == 3 else t
    if g.kind == "mfma":
        tile = I(kw, "register", dk) * (I(nonk, "lane", dnk) * I(64 // nonk, "lane", dk))
        k_tile = 64 // nonk * kw
        if (m, n, opi) in ((64, 4, 0), (4, 64, 1)):   # the 64-wide operand repeats 16 times along K
            tile = tile * I(16, "register", dk)
            k_tile *= 16
        if k_size > k_tile:
            tile = tile * I(k_size // k_tile, "register", dk)
        tile = tile * I(tiles_nonk, "register", dnk)
        tile = batch(tile.transpose_outs([dk, dnk]))
        warps = identity_nd("warp", g["warps_per_cta"], list(range(rank))[::-1], names)
        return combine_cta_cga(tile * warps, [], shape).transpose_outs(names)
    depth = 32 // nonk
    tile = I(kw, "register", dk) * I(nonk, "lane", dnk)
    tile = tile * (TritonLL.zeros(depth, "lane", dk) if g["version"] == 1 else I(depth, "lane", dk))
    tile = tile * I(k // (depth * kw), "register", dk)
    k_tile = max(k, depth * kw)
    if k_size > k_tile:
        tile = tile * I(k_size // k_tile, "register", dk)
    tile = batch(tile * I(tiles_nonk, "register", dnk))
    rep = [dk, dnk] + names[:rank - 2]       # the operand's repetition order: K fastest, the batch last
    warps = broadcast_dot_operand(g["warps_per_cta"], list(range(rank))[::-1], kdim, "warp")
    return combine_cta_cga(tile.transpose_outs(rep) * warps.transpose_outs(rep), [], shape)


def amd_bases(layout: Any, shape: Sequence[int]) -> dict[str, list[list[int]]]:
    """Triton's linear layout of an AMD Gluon layout on ``shape``: ``{register, lane, warp, block}`` bases.

    ``layout``: ``AMDMFMALayout``, ``AMDWMMALayout`` or a ``DotOperandLayout`` of one (object, source
    text, dict, :class:`AmdGluonLayout`). Each basis is ``[dim0, dim1]`` (row, column), XOR-combined.
    A configuration Triton refuses is a LayoutError naming the rule of :data:`RULES` it breaks.

    >>> amd_bases("AMDMFMALayout(3, [16, 16, 16], False, [2, 2], tiles_per_warp=[2, 2])", (64, 64))["warp"]
    [[0, 32], [32, 0]]
    >>> amd_bases("AMDWMMALayout(1, False, [1, 1], [16, 16, 16])", (16, 16))["register"]
    [[2, 0], [4, 0], [8, 0]]
    """
    op = "amd_bases"
    g = amd_layout(layout)
    if not isinstance(shape, (list, tuple)) or not all(isinstance(s, int) and not isinstance(s, bool) for s in shape):
        raise LayoutError(f"{op}: shape {shape!r} is not a list of ints")
    dims = [int(s) for s in shape]
    _check(g, dims, op)
    ll = _operand(g, dims) if g.is_dot else _accumulator(g, dims)
    return {k: [list(v) for v in ll.bases.get(k, [])] for k in ("register", "lane", "warp", "block")}


def mfma_bases(layout: Any, shape: Sequence[int]) -> dict[str, list[list[int]]]:
    """:func:`amd_bases` of an ``AMDMFMALayout`` accumulator (the name this module first had).

    >>> mfma_bases("AMDMFMALayout(3, [32, 32, 8], False, [1, 1])", (32, 32))["lane"][-1]
    [4, 0]
    """
    g = amd_layout(layout)
    if g.kind != "mfma" or g.is_dot:
        raise LayoutError(f"mfma_bases: {layout!r} is not an AMDMFMALayout")
    return amd_bases(g, shape)


def scale_bases(operand: Any, shape: Sequence[int]) -> dict[str, list[list[int]]]:
    """The scale layout of ``mfma_scaled`` / ``wmma_scaled`` for ``operand`` (a ``DotOperandLayout`` of an
    AMD parent) on a scale tensor of ``shape`` = [M or N, K / 32]: Triton's ``get_mfma_scale_layout`` /
    ``get_wmma_scale_layout``.

    MFMA (CDNA4 ``v_mfma_scale``): a lane reads the scale of its 32 K values; the lanes of one
    K group run along M (N), the lane groups along K (2 groups for 32-row instructions, 4 for
    16), registers repeat along K then over ``tiles_per_warp``. WMMA (gfx1250): 4 scales a lane
    along K, 16 lanes along M (N), the upper half-wave the second tile (or a copy of the first).
    Warps run along M for A and along N for B. As Triton's engine, an ``operand_index`` other than 1
    reads as A.

    >>> scale_bases("DotOperandLayout(0, AMDMFMALayout(4, [32, 32, 64], False, [1, 1]), 16)", (32, 2))["lane"]
    [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0], [0, 1]]
    """
    op = "scale_bases"
    g = amd_layout(operand)
    if not isinstance(shape, (list, tuple)) or len(shape) != 2 or not all(
            isinstance(s, int) and not isinstance(s, bool) for s in shape):
        raise _refuse(op, "rank", f"scale shape {shape!r}")
    rows, k_size = int(shape[0]), int(shape[1])
    parent = AmdGluonLayout(g.kind, g.fields)
    if g.kind == "mfma":
        _check_parent_python(parent, op)
        mdim = g["instr_shape"][0]
        if mdim not in (16, 32):
            raise _refuse(op, "scale-instr-m", f"instr_shape {g['instr_shape']}")
    else:
        if g["version"] not in (1, 2, 3):
            raise _refuse(op, "wmma-version", f"version {g['version']}")
    opi = g.operand_index if g.is_dot else 0
    tpw, warps = list(g["tiles_per_warp"]), list(g["warps_per_cta"])
    if len(tpw) != 2 or len(warps) != 2:
        raise _refuse(op, "rank", f"warps_per_cta {warps}")
    for what, vals in (("warps_per_cta", warps), ("tiles_per_warp", tpw), ("shape", [rows, k_size])):
        if not all(_pow2(x) for x in vals):
            raise _refuse(op, "power-of-two", f"{what} {vals}")
    t_mn = tpw[1] if opi == 1 else tpw[0]
    I = TritonLL.identity
    if g.kind == "mfma":
        groups = 2 if mdim == 32 else 4
        reg = [(e, 0) for e in _doubling(groups, k_size)] + [(0, e) for e in _doubling(mdim, t_mn * mdim)]
        lane = [(0, 1 << i) for i in range(mdim.bit_length() - 1)] + [(1 << i, 0) for i in range(groups.bit_length() - 1)]
        tile = TritonLL.from_bases({"register": reg, "lane": lane}, ["dim1", "dim0"])
    else:
        if t_mn > 2:
            raise _refuse(op, "scale-tiles-per-warp", f"tiles_per_warp {tpw} for operand {opi}")
        tile = I(4, "register", "dim1") * I(16, "lane", "dim0")
        tile = tile * (I(2, "lane", "dim0") if t_mn > 1 else TritonLL.zeros(2, "lane", "dim0"))
        tile = tile * I(k_size // 4, "register", "dim1")
    wsizes, worder = ([warps[1], warps[0]], [0, 1]) if opi == 1 else (warps, [1, 0])
    wl = identity_nd("warp", wsizes, worder, ["dim0", "dim1"])
    names = ["dim0", "dim1"]
    ll = combine_cta_cga(tile.transpose_outs(names) * wl.transpose_outs(names), [], [rows, k_size])
    return {k: [list(v) for v in ll.bases.get(k, [])] for k in ("register", "lane", "warp", "block")}


def _doubling(start: int, stop: int) -> list[int]:
    out, e = [], start
    while e < stop:
        out.append(e)
        e *= 2
    return out


def _check_parent_python(g: AmdGluonLayout, op: str) -> None:
    """Gluon's Python ``verify`` of an AMDMFMALayout (what the scale layout's parent must pass)."""
    if g["version"] not in (1, 2, 3, 4):
        raise _refuse(op, "mfma-version", f"version {g['version']}")
    if len(g["instr_shape"]) != 3 or g["instr_shape"][:2] not in ([32, 32], [16, 16], [64, 4], [4, 64]):
        raise _refuse(op, "mfma-instr-shape", f"instr_shape {g['instr_shape']}")
    if g["element_bitwidth"] not in (32, 64):
        raise _refuse(op, "mfma-element-bitwidth", f"element_bitwidth {g['element_bitwidth']}")


def from_gluon_amd(layout: Any, shape: Sequence[int]) -> Any:
    """The TV layout ``((lane, warp, block), register) -> d0 + D0*d1`` of an AMD Gluon distributed layout.

    Any layout :func:`amd_bases` reads; the conversion is :func:`layoutalg.linear.from_linear`'s.

    >>> str(from_gluon_amd("DotOperandLayout(0, AMDMFMALayout(3, [32, 32, 8], False, [1, 1]), 4)", (32, 8)))
    '(((32,2),1,1),4):(((1,128),0,0),32)'
    """
    from ..linear import from_linear

    return from_linear(amd_bases(layout, shape), shape=[int(s) for s in shape])


# ---------------------------------------------------------------------------------------------
# layoutalg -> Gluon
# ---------------------------------------------------------------------------------------------
def amd_source(layout: Any, prefix: str = "gl.amd.") -> str:
    """The Gluon source of an AMD layout, every field spelled (``prefix`` before the AMD class names).

    >>> amd_source({"kind": "wmma", "version": 2, "transposed": False, "warps_per_cta": [2, 2], "operand_index": 0, "k_width": 8})
    'gl.DotOperandLayout(operand_index=0, parent=gl.amd.AMDWMMALayout(version=2, transposed=False, warps_per_cta=[2, 2]), k_width=8)'
    """
    g = amd_layout(layout)
    cls = "AMDMFMALayout" if g.kind == "mfma" else "AMDWMMALayout"
    defaults = {"cga_layout": [], "element_bitwidth": 32, "tiles_per_warp": [1] * len(g["warps_per_cta"])}
    if g.kind == "wmma":
        defaults["instr_shape"] = [16, 16, 16]
    args = ", ".join(f"{n}={v!r}" for n, v in g.fields if not (n in defaults and v == defaults[n]))
    parent = f"{prefix}{cls}({args})"
    if not g.is_dot:
        return parent
    return f"gl.DotOperandLayout(operand_index={g.operand_index}, parent={parent}, k_width={g.k_width})"


def _candidates(shape: list[int], kinds: Sequence[str], operand: int | None, versions: Sequence[int] | None,
                warps_total: int | None, first_shape: list[int] | None = None, threads: int | None = None) -> Any:
    """AMD Gluon layouts that could give a layout on ``shape`` (searched in this order)."""
    def grids(total: int | None) -> list[list[int]]:
        totals = [total] if total else [1, 2, 4, 8, 16]
        return [[a, t // a] for t in totals for a in (1 << i for i in range(t.bit_length())) if t % a == 0]

    for kind in kinds:
        lanes = 64 if kind == "mfma" else 32
        if threads is not None and (threads % lanes or (warps_total and threads != lanes * warps_total)):
            continue
        total = warps_total or (threads // lanes if threads else None)
        vs = [v for v in versions or ((3, 4, 1, 2) if kind == "mfma" else (2, 3, 1))
              if v in ((1, 2, 3, 4) if kind == "mfma" else (1, 2, 3))]
        for v in vs:
            shapes = ([[32, 32, 8], [16, 16, 16], [32, 32, 16], [16, 16, 32], [32, 32, 64], [16, 16, 128],
                       [32, 32, 4], [16, 16, 4], [32, 32, 2], [4, 64, 4], [64, 4, 4]]
                      if kind == "mfma" else
                      [[16, 16, k] for k in {1: (16,), 2: (16, 32), 3: (32, 4, 64, 128)}[v]])
            if first_shape in shapes:
                shapes = [first_shape] + [x for x in shapes if x != first_shape]
            for ish in shapes:
                for tr in (False, True):
                    for w in grids(total):
                        for t in ([1, 1], [2, 1], [1, 2], [2, 2], [4, 1], [1, 4]):
                            f: dict[str, Any] = {"kind": kind, "version": v, "instr_shape": ish, "transposed": tr,
                                                 "warps_per_cta": w, "tiles_per_warp": t}
                            if operand is None:
                                for bits in ((32, 64) if kind == "mfma" else (None,)):
                                    if bits:
                                        f["element_bitwidth"] = bits
                                    yield dict(f)
                            else:
                                for kw in (8, 4, 16, 2, 1, 32):
                                    yield {**f, "operand_index": operand, "k_width": kw}


def to_gluon_amd(x: Any, shape: Sequence[int], *, cls: str | None = None, operand: int | None = None,
                 version: int | None = None, prefer: Any = None) -> str:
    """The Gluon source of an AMD layout equal to ``x`` on ``shape`` (:func:`amd_source`'s spelling).

    ``x``: a TV layout ``(thread, value) -> d0 + D0*d1`` (as :func:`from_gluon_amd` gives), Triton's
    bases (a dict), or an AMD catalog fragment (:class:`~layoutalg.amd.MatrixFragment` of an MFMA or
    a wave32 WMMA: the accumulator ``D``/``C``, the operands ``A``/``B``). The search runs over the
    AMD classes (``cls`` ``"AMDMFMALayout"`` / ``"AMDWMMALayout"`` narrows it), versions, instruction
    shapes, transposition, warp grids of the layout's warp count, ``tiles_per_warp`` and (``operand``
    0 / 1) ``k_width``; the first match is returned, each candidate checked by :func:`amd_bases`
    (``prefer``, an AMD layout, is tried first: the spelling to keep when it is right). Rank 2 only.
    LayoutError when no AMD layout equals ``x``.

    >>> tv = from_gluon_amd("AMDWMMALayout(2, False, [2, 1], [16, 16, 16])", (32, 16))
    >>> to_gluon_amd(tv, (32, 16))
    'gl.amd.AMDWMMALayout(version=2, transposed=False, warps_per_cta=[2, 1])'
    """
    op = "to_gluon_amd"
    if not isinstance(shape, (list, tuple)) or not shape or not all(_pow2(s) for s in shape):
        raise LayoutError(f"{op}: shape {shape!r} is not a list of powers of two")
    dims = [int(s) for s in shape]
    if len(dims) != 2 or dims[0] * dims[1] > 1 << 22:
        raise LayoutError(f"{op}: shape {dims}: AMD's layouts here are rank 2, at most 2^22 elements")
    kinds: Sequence[str] = ("mfma", "wmma")
    if cls is not None:
        name = _strip(cls if isinstance(cls, str) else getattr(cls, "__name__", str(cls)))
        if name not in _CLASSES:
            raise LayoutError(f"{op}: cls {cls!r} is not AMDMFMALayout or AMDWMMALayout")
        kinds = (_CLASSES[name][0],)
    target, warp_count = _target(x, dims, op)
    first_shape = None
    versions = [version] if version is not None else None
    if _is_fragment(x):
        import re

        operand = {"A": 0, "B": 1}.get(x.operand, operand)
        kinds = [k for k in kinds if k == ("wmma" if x.wave == 32 else "mfma")]
        mnk = re.search(r"(\d+)x(\d+)x(\d+)", x.instruction)
        first_shape = [int(v) for v in mnk.groups()] if mnk else None
        if version is None and x.arch in _ARCH_VERSION:
            v = _ARCH_VERSION[x.arch]
            versions = [v] + [u for u in (1, 2, 3, 4) if u != v]
    if prefer is not None:
        try:
            if _same(amd_bases(prefer, dims), target):
                return amd_source(prefer)
        except LayoutError:
            pass
    lanes_ok: dict[tuple, bool] = {}
    for f in _candidates(dims, kinds, operand, versions, warp_count, first_shape, target.get("threads")):
        # the lane bases do not depend on the warps nor the tiles: one check per instruction spelling
        key = tuple((k, repr(v)) for k, v in f.items() if k not in ("warps_per_cta", "tiles_per_warp"))
        if key not in lanes_ok:
            try:
                lanes_ok[key] = _same_lanes(amd_bases({**f, "warps_per_cta": [1, 1], "tiles_per_warp": [1, 1]}, dims),
                                            target)
            except LayoutError:
                lanes_ok[key] = False
        if not lanes_ok[key]:
            continue
        try:
            if _same(amd_bases(f, dims), target):
                return amd_source(f)
        except LayoutError:
            continue
    raise LayoutError(f"{op}: no AMDMFMALayout / AMDWMMALayout{' operand' if operand is not None else ''} equals "
                      f"{x} on {dims}")


#: The catalog's architecture -> the version of Gluon's AMD class (MFMA: CDNA1-4; WMMA: RDNA3, RDNA4, gfx1250).
_ARCH_VERSION = {"cdna1": 1, "cdna2": 2, "cdna3": 3, "cdna4": 4, "rdna3": 1, "rdna4": 2, "gfx1250": 3}


def _is_fragment(x: Any) -> bool:
    return type(x).__name__ == "MatrixFragment"


def _target(x: Any, dims: list[int], op: str) -> tuple[dict[str, Any], int | None]:
    """The element of each (thread, value): a dict {(thread, value): flat index} and the warp count."""
    if isinstance(x, dict):
        b = {k: [list(v) for v in x.get(k, [])] for k in ("register", "lane", "warp", "block")}
        return {"bases": b}, 1 << len(b["warp"])
    if _is_fragment(x):
        if len(dims) != 2:
            raise LayoutError(f"{op}: a fragment's shape is [rows, cols]; got {dims}")
        if getattr(x, "blocks", 1) != 1:
            raise LayoutError(f"{op}: {x.name} has {x.blocks} blocks; Gluon's AMD layouts hold one block")
        nt, nv = x.num_threads, x.num_values
        cells = [x.coords(t, v) for v in range(nv) for t in range(nt)]   # index t + nt*v
        for r, c, _ in cells:
            if r >= dims[0] or c >= dims[1]:
                raise LayoutError(f"{op}: {x.name} reaches element ({r}, {c}), outside the shape {dims}")
        table = np.array([r + dims[0] * c for r, c, _ in cells], dtype=np.int64)
        return {"table": table, "threads": x.num_threads, "values": x.num_values, "rows": dims[0]}, 1
    from ..inttuple import product
    from ..layout import Layout

    if not isinstance(x, Layout) or not isinstance(x.shape, tuple) or len(x.shape) != 2 or not x.is_static:
        raise LayoutError(f"{op}: {x!r} is not a TV layout (rank 2), a dict of Triton's bases or an AMD fragment")
    nt, nv = product(x.shape[0]), product(x.shape[1])
    if nt * nv > 1 << 22:
        raise LayoutError(f"{op}: {x} has {nt * nv} entries; at most 2^22")
    table = np.asarray(x.table(), dtype=np.int64)   # index t + nt*v
    thread_mode = x.shape[0]
    warps = product(thread_mode[1]) if isinstance(thread_mode, tuple) and len(thread_mode) == 3 else None
    return {"table": table, "threads": nt, "values": nv, "rows": dims[0]}, warps


def _derived(target: dict[str, Any], lanes: int) -> dict[str, list[int]] | None:
    """The target's bases (flat element of each input bit) for ``lanes`` lanes a warp; None if not F2-linear."""
    key = f"derived{lanes}"
    if key not in target:
        table, nt, nv = target["table"], target["threads"], target["values"]
        out: dict[str, list[int]] | None = None
        if nt % lanes == 0 and all(_pow2(n) for n in (nt, nv)):
            regs = [int(table[nt << j]) for j in range(nv.bit_length() - 1)]
            thr = [int(table[1 << j]) for j in range(nt.bit_length() - 1)]
            nl = lanes.bit_length() - 1
            out = {"register": regs, "lane": thr[:nl], "warp": thr[nl:]}
            idx = np.arange(len(table), dtype=np.int64)
            acc = np.zeros(len(table), dtype=np.int64)
            for j, img in enumerate(thr + regs):   # bit j of the index t + nt*v
                acc ^= np.where(idx >> j & 1, img, 0)
            if not np.array_equal(acc, table):
                out = None
        target[key] = out
    return target[key]


def _same_lanes(bases: dict[str, list[list[int]]], target: dict[str, Any]) -> bool:
    if "bases" in target:
        return bases["lane"] == target["bases"]["lane"]
    want = _derived(target, 1 << len(bases["lane"]))
    return want is not None and [r + target["rows"] * c for r, c in bases["lane"]] == want["lane"]


def _same(bases: dict[str, list[list[int]]], target: dict[str, Any]) -> bool:
    if "bases" in target:
        return bases == target["bases"]
    want = _derived(target, 1 << len(bases["lane"]))
    if want is None:
        return False
    rows = target["rows"]
    return all([r + rows * c for r, c in bases[k]] == want[k] for k in ("register", "lane", "warp"))
