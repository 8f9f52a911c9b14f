"""Gluon's layout classes read: :class:`GluonLayout` (a mirror of the constructor calls), Triton's conversion
rules to its F2-linear bases (:func:`linear_bases`, ``LinearLayoutConversions.cpp`` of Triton 3.6 restated),
and :func:`from_gluon` (Gluon -> layoutalg). The way back, :func:`~layoutalg.interop.gluon.to_gluon`, and
the overview live in :mod:`layoutalg.interop.gluon`, which re-exports every name here.

    >>> str(from_gluon("BlockedLayout([1, 4], [4, 8], [2, 1], [1, 0])", (8, 32)))
    '(((8,4),2,1),4):(((32,1),4,0),8)'
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import LayoutError, guarded
from ..linear import flat_index, invert_f2
from .triton_ll import TritonLL as _LL
from .triton_ll import broadcast_dot_operand as _broadcast_dot
from .triton_ll import combine_cta_cga as _combine
from .triton_ll import dim_names as _names
from .triton_ll import identity_nd as _identity_nd

__all__ = ["GluonLayout", "LAYOUT_CLASSES", "gluon_layout", "linear_bases", "from_gluon", "padded_offset"]


# ---------------------------------------------------------------------------------------------
# The constructor calls: one mirror class for all of Gluon's layout classes
# ---------------------------------------------------------------------------------------------
_NONE = object()

#: Gluon layout class -> its constructor's fields, in order, with defaults (``_NONE``: required).
LAYOUT_CLASSES: dict[str, tuple[tuple[str, Any], ...]] = {
    "BlockedLayout": (("size_per_thread", _NONE), ("threads_per_warp", _NONE), ("warps_per_cta", _NONE),
                      ("order", _NONE), ("cga_layout", ())),
    "SliceLayout": (("dim", _NONE), ("parent", _NONE)),
    "DistributedLinearLayout": (("reg_bases", _NONE), ("lane_bases", _NONE), ("warp_bases", _NONE),
                                ("block_bases", _NONE), ("shape", _NONE)),
    "DotOperandLayout": (("operand_index", _NONE), ("parent", _NONE), ("k_width", _NONE)),
    "NVMMADistributedLayout": (("version", _NONE), ("warps_per_cta", _NONE), ("instr_shape", _NONE),
                               ("cga_layout", ())),
    "NVMMASharedLayout": (("swizzle_byte_width", _NONE), ("element_bitwidth", _NONE), ("rank", 2),
                          ("transposed", False), ("fp4_padded", False), ("cga_layout", ())),
    "SwizzledSharedLayout": (("vec", _NONE), ("per_phase", _NONE), ("max_phase", _NONE), ("order", _NONE),
                             ("cga_layout", ())),
    "PaddedSharedLayout": (("interval_padding_pairs", _NONE), ("offset_bases", _NONE), ("block_bases", _NONE),
                           ("shape", _NONE)),
    "SharedLinearLayout": (("offset_bases", _NONE), ("block_bases", ()), ("alignment", 16)),
    # AMD's (gl.amd.*): their rules are layoutalg.interop.gluon_amd's
    "AMDMFMALayout": (("version", _NONE), ("instr_shape", _NONE), ("transposed", _NONE), ("warps_per_cta", _NONE),
                      ("element_bitwidth", 32), ("tiles_per_warp", ()), ("cga_layout", ())),
    "AMDWMMALayout": (("version", _NONE), ("transposed", _NONE), ("warps_per_cta", _NONE),
                      ("instr_shape", (16, 16, 16)), ("tiles_per_warp", ()), ("cga_layout", ())),
}
_AMD = ("AMDMFMALayout", "AMDWMMALayout")
_SHARED = ("NVMMASharedLayout", "SwizzledSharedLayout", "PaddedSharedLayout", "SharedLinearLayout")


def _freeze(v: Any, op: str, what: str) -> Any:
    """Lists -> tuples, Gluon objects -> GluonLayout, constexpr -> its value; ints and bools kept."""
    if type(v).__name__ == "constexpr" and hasattr(v, "value"):
        v = v.value
    if isinstance(v, GluonLayout):
        return v
    if type(v).__name__ in LAYOUT_CLASSES:
        return gluon_layout(v)
    if isinstance(v, (list, tuple)):
        return tuple(_freeze(x, op, what) for x in v)
    if isinstance(v, (bool, int)):
        return v
    if hasattr(v, "__index__"):
        return int(v)
    raise LayoutError(f"{op}: {what} = {v!r} is not an int, bool, list or Gluon layout")


def _thaw(v: Any) -> Any:
    if isinstance(v, tuple):
        return [_thaw(x) for x in v]
    return v


@dataclass(frozen=True)
class GluonLayout:
    """A Gluon layout constructor call, without Triton: ``kind`` is the class name, ``params`` every field.

    Invariant: ``params`` holds every field of ``LAYOUT_CLASSES[kind]`` in constructor order
    (defaults filled in), lists frozen to tuples, nested layouts as GluonLayout. Two calls
    that spell the same arguments compare equal.

    >>> g = gluon_layout("gl.NVMMASharedLayout(128, 16, transposed=True)")
    >>> g["swizzle_byte_width"], g["transposed"], g.is_shared
    (128, True, True)
    >>> g.source
    'gl.NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16, transposed=True)'
    """

    kind: str
    params: tuple[tuple[str, Any], ...]

    def __getitem__(self, name: str) -> Any:
        for k, v in self.params:
            if k == name:
                return v
        raise LayoutError(f"GluonLayout: {self.kind} has no field {name!r}")

    @property
    def is_shared(self) -> bool:
        """True for the shared-memory layout classes."""
        return self.kind in _SHARED

    @property
    def source(self) -> str:
        """The constructor call as Gluon source text (``gl.`` prefix, defaults left out)."""
        return self.to_source()

    def to_source(self, prefix: str = "gl.") -> str:
        """The constructor call, keyword arguments, defaults left out: paste it into a kernel."""
        defaults = dict(LAYOUT_CLASSES[self.kind])
        parts = []
        for k, v in self.params:
            if defaults[k] is not _NONE and v == defaults[k]:
                continue
            text = v.to_source(prefix) if isinstance(v, GluonLayout) else repr(_thaw(v))
            parts.append(f"{k}={text}")
        return f"{prefix}{'amd.' if self.kind in _AMD else ''}{self.kind}({', '.join(parts)})"

    def to_triton(self) -> Any:
        """The ``triton.experimental.gluon.language`` object (imports Triton; LayoutError if it is absent)."""
        try:
            from triton.experimental.gluon import language as gl
        except ImportError as e:  # pragma: no cover - exercised only without triton
            raise LayoutError(f"GluonLayout.to_triton: Triton's Gluon is not importable ({e})") from e
        kwargs = {}
        for k, v in self.params:
            if k == "tiles_per_warp" and not v:   # AMD's: () stands for Gluon's None (one tile per dim)
                continue
            kwargs[k] = v.to_triton() if isinstance(v, GluonLayout) else _thaw(v)
        return getattr(gl.amd if self.kind in _AMD else gl, self.kind)(**kwargs)

    def __str__(self) -> str:
        return self.source


def _from_call(node: ast.AST, text: str) -> GluonLayout:
    op = "gluon_layout"
    if not isinstance(node, ast.Call):
        raise LayoutError(f"{op}: {text!r} is not a Gluon layout constructor call")
    fn = node.func
    name = fn.attr if isinstance(fn, ast.Attribute) else (fn.id if isinstance(fn, ast.Name) else None)
    if name not in LAYOUT_CLASSES:
        raise LayoutError(f"{op}: {ast.unparse(fn)!r} is not one of Gluon's layout classes {sorted(LAYOUT_CLASSES)}")

    def value(n: ast.AST) -> Any:
        if isinstance(n, ast.Call):
            return _from_call(n, text)
        try:
            return ast.literal_eval(n)
        except ValueError as e:
            raise LayoutError(f"{op}: argument {ast.unparse(n)!r} of {name} is not a literal") from e

    fields = [k for k, _ in LAYOUT_CLASSES[name]]
    if len(node.args) > len(fields):
        raise LayoutError(f"{op}: {name} takes at most {len(fields)} arguments, got {len(node.args)}")
    given = {fields[i]: value(a) for i, a in enumerate(node.args)}
    for kw in node.keywords:
        if kw.arg not in fields:
            raise LayoutError(f"{op}: {name} has no argument {kw.arg!r}; its arguments are {fields}")
        given[kw.arg] = value(kw.value)
    return make_gluon(name, given)


def make_gluon(kind: str, given: dict[str, Any]) -> GluonLayout:
    """The GluonLayout of class ``kind`` with the arguments ``given`` (defaults filled in, values frozen)."""
    op = "gluon_layout"
    params = []
    for k, default in LAYOUT_CLASSES[kind]:
        if k in given and given[k] is not None:
            v = given[k]
        elif default is _NONE:
            raise LayoutError(f"{op}: {kind} needs argument {k!r}")
        else:
            v = default
        params.append((k, _freeze(v, op, f"{kind}.{k}")))
    return GluonLayout(kind, tuple(params))


def gluon_layout(x: Any) -> GluonLayout:
    """gluon_layout(x) -> the GluonLayout of a Gluon layout object, its source text, or a GluonLayout.

    Text is one constructor call, optionally prefixed (``gl.``, ``ttgl.``); arguments are
    literals or nested constructor calls. Nothing is evaluated.

    >>> gluon_layout("SliceLayout(0, BlockedLayout([1, 4], [8, 4], [4, 1], [1, 0]))")["parent"]["order"]
    (1, 0)
    """
    if isinstance(x, GluonLayout):
        return x
    if isinstance(x, str):
        try:
            tree = ast.parse(x.strip(), mode="eval")
        except SyntaxError as e:
            raise LayoutError(f"gluon_layout: {x!r} is not Python source of a constructor call ({e.msg})") from e
        return _from_call(tree.body, x)
    name = type(x).__name__
    if name not in LAYOUT_CLASSES:
        raise LayoutError(f"gluon_layout: {x!r} is not a Gluon layout (one of {sorted(LAYOUT_CLASSES)}) or its source text")
    return make_gluon(name, {k: getattr(x, k) for k, _ in LAYOUT_CLASSES[name]})


# ---------------------------------------------------------------------------------------------
# Shapes; Triton's LinearLayout operations are layoutalg.interop.triton_ll's
# ---------------------------------------------------------------------------------------------
def shape_arg(shape: Any, op: str) -> list[int]:
    """A tensor shape: a non-empty list/tuple of positive ints, at most 2^24 elements (LayoutError otherwise)."""
    import numpy as np

    if not isinstance(shape, (list, tuple)) or not shape or any(
            isinstance(s, bool) or not isinstance(s, (int, np.integer)) or s < 1 for s in shape):
        raise LayoutError(f"{op}: shape {shape!r} is not a non-empty list of positive ints")
    total = 1
    for s in shape:
        total *= int(s)
    if total > 1 << 24:
        raise LayoutError(f"{op}: shape {list(shape)} has {total} elements; layouts are tabulated up to 2^24")
    return [int(s) for s in shape]


def log2_exact(n: int, op: str, what: str) -> int:
    """log2 of ``n``, a positive power of two (LayoutError naming ``op`` and ``what`` otherwise)."""
    if not isinstance(n, int) or isinstance(n, bool) or n < 1 or n & (n - 1):
        raise LayoutError(f"{op}: {what} = {n!r} is not a positive power of two")
    return n.bit_length() - 1


def _matrix_order(rank: int, row_major: bool) -> list[int]:
    order = list(range(rank))[::-1]
    if not row_major:
        order[0], order[1] = order[1], order[0]
    return order


def _mma_tile(tile: Sequence[int], k_width: int, order: Sequence[int], rep_order: Sequence[int], op: str) -> _LL:
    """nvidiaMmaTile: k_width registers and 4 lanes along the inner dim, 8 lanes along the outer, then repeats."""
    names = _names(len(rep_order))
    ll = _identity_nd("register", [1] * len(rep_order), rep_order, names)
    inner, outer = order[0], order[1]
    m, n = tile[outer], tile[inner]
    if m % 8 or n % (k_width * 4):
        raise LayoutError(f"{op}: tile {list(tile)} with k_width {k_width}: needs {names[outer]} % 8 == 0 and "
                          f"{names[inner]} % (4*k_width) == 0")
    for size, ind, d in ((k_width, "register", inner), (4, "lane", inner), (8, "lane", outer),
                         (m // 8, "register", outer), (n // (k_width * 4), "register", inner)):
        ll = ll * _LL.identity(size, ind, names[d])
    return ll


def _pow2_list(v: Sequence[int], op: str, what: str) -> list[int]:
    for x in v:
        log2_exact(x, op, what)
    return list(v)


def _check_cga(cga: Sequence[Sequence[int]], rank: int, op: str) -> list[tuple[int, ...]]:
    for b in cga:
        if len(b) != rank:
            raise LayoutError(f"{op}: cga_layout basis {list(b)} has {len(b)} entries, the tensor rank is {rank}")
    return [tuple(b) for b in cga]


def _distributed(g: GluonLayout, shape: list[int], op: str) -> _LL:
    rank = len(shape)
    k = g.kind
    if k in _AMD or (k == "DotOperandLayout" and g["parent"].kind in _AMD):
        from .gluon_amd import amd_bases

        return _LL({kk: [tuple(v) for v in vs] for kk, vs in amd_bases(g, shape).items()},
                   list(zip(_names(rank), shape)))
    if k == "BlockedLayout":
        spt, tpw, wpc, order = (list(g[f]) for f in ("size_per_thread", "threads_per_warp", "warps_per_cta", "order"))
        for name, v in (("size_per_thread", spt), ("threads_per_warp", tpw), ("warps_per_cta", wpc), ("order", order)):
            if len(v) != rank:
                raise LayoutError(f"{op}: {k}.{name} = {v} has {len(v)} entries for a rank-{rank} shape {shape}")
            if name != "order":
                _pow2_list(v, op, f"{k}.{name} entry")
        if sorted(order) != list(range(rank)):
            raise LayoutError(f"{op}: {k}.order = {order} is not a permutation of 0..{rank - 1}")
        names = _names(rank)
        cta = _identity_nd("register", spt, order, names) * _identity_nd("lane", tpw, order, names) * \
            _identity_nd("warp", wpc, order, names)
        return _combine(cta, _check_cga(g["cga_layout"], rank, op), shape)
    if k == "NVMMADistributedLayout":
        version, warps, instr = list(g["version"]), list(g["warps_per_cta"]), list(g["instr_shape"])
        if len(warps) != rank:
            raise LayoutError(f"{op}: warps_per_cta = {warps} has {len(warps)} entries for shape {shape}")
        _pow2_list(warps, op, "warps_per_cta entry")
        if not version or version[0] not in (2, 3):
            raise LayoutError(f"{op}: NVMMADistributedLayout version {version}: only 2 (mma.sync) and 3 (wgmma) are NVIDIA's")
        hopper = version[0] == 3
        if hopper:
            if rank != 2 or len(instr) != 3:
                raise LayoutError(f"{op}: a version-3 (wgmma) layout is rank 2 with instr_shape [M, N, K]; got {instr}")
            tile = [instr[0], instr[1]]
        else:
            if len(instr) != rank:
                raise LayoutError(f"{op}: a version-2 (mma.sync) instr_shape has one entry per dim; got {instr}")
            tile = list(instr)
        order = _matrix_order(rank, True)
        cta = _mma_tile(tile, 2, order, order, op)
        cta = cta * _identity_nd("warp", warps, _matrix_order(rank, not hopper), _names(rank)).transpose_outs(cta.out_names())
        return _combine(cta, _check_cga(g["cga_layout"], rank, op), shape)
    if k == "DotOperandLayout":
        parent, opi, kw = g["parent"], g["operand_index"], g["k_width"]
        if parent.kind != "NVMMADistributedLayout":
            raise LayoutError(f"{op}: DotOperandLayout of a {parent.kind} parent is not supported (NVIDIA mma parents only)")
        hopper = list(parent["version"])[:1] == [3]
        if opi not in (0, 1) or (hopper and opi != 0):
            raise LayoutError(f"{op}: operand_index {opi}: 0 (A) or 1 (B) for version 2; only 0 for version 3 "
                              "(wgmma reads B from shared memory)")
        log2_exact(kw, op, "k_width")
        warps = list(parent["warps_per_cta"])
        if len(warps) != rank:
            raise LayoutError(f"{op}: the parent's warps_per_cta {warps} does not match shape {shape}")
        tile = [1] * rank
        if opi == 0:
            tile[rank - 2], tile[rank - 1] = 16, kw * 8
        else:
            tile[rank - 2], tile[rank - 1] = kw * 8, 8
        order = _matrix_order(rank, opi == 0)  # getOrderForDotOperand(kContig=True)
        cta = _mma_tile(tile, kw, order, order, op)
        k_dim = rank - 1 if opi == 0 else rank - 2
        cta = cta * _broadcast_dot(warps, _matrix_order(rank, not hopper), k_dim, "warp").transpose_outs(cta.out_names())
        cga = [list(b) for b in _check_cga(parent["cga_layout"], rank, op)]
        for b in cga:
            b[k_dim] = 0
        return _combine(cta, cga, shape)
    if k == "SliceLayout":
        dim = g["dim"]
        if not 0 <= dim <= rank:
            raise LayoutError(f"{op}: SliceLayout dim {dim} is outside 0..{rank} for shape {shape}")
        parent = _distributed(g["parent"], shape[:dim] + [1] + shape[dim:], op)
        keep = [i for i in range(rank + 1) if i != dim]
        bases = {kk: [tuple(v[i] for i in keep) for v in vs] for kk, vs in parent.bases.items()}
        bases["register"] = [v for v in bases.get("register", []) if any(v)]
        return _LL.from_bases(bases, _names(rank))
    if k == "DistributedLinearLayout":
        if list(g["shape"]) != shape:
            raise LayoutError(f"{op}: DistributedLinearLayout.shape {list(g['shape'])} is not the tensor shape {shape}")
        bases = {}
        for ind, f in (("register", "reg_bases"), ("lane", "lane_bases"), ("warp", "warp_bases"), ("block", "block_bases")):
            for b in g[f]:
                if len(b) != rank:
                    raise LayoutError(f"{op}: {f} entry {list(b)} has {len(b)} entries for shape {shape}")
                for c, s in zip(b, shape):
                    if not 0 <= c < s:
                        raise LayoutError(f"{op}: {f} entry {list(b)} reaches outside shape {shape}")
            bases[ind] = [tuple(b) for b in g[f]]
        return _LL(bases, list(zip(_names(rank), shape)))
    raise LayoutError(f"{op}: {k} is not a distributed layout")


def _tma_block_shape(shape: list[int], bits: int, swizzle: int, transposed: bool, op: str) -> list[int]:
    block = [min(s, 256) for s in shape]
    contig = 0 if transposed else len(block) - 1
    if swizzle:
        want = 8 * swizzle // bits
        if block[contig] < want:
            raise LayoutError(f"{op}: NVMMASharedLayout({swizzle} B, {bits}-bit) needs the contiguous dim of {shape} "
                              f"to hold at least one {want}-element swizzle row")
        block[contig] = want
    return block


def _reshape(ll: _LL, shape: Sequence[int]) -> _LL:
    """reshapeLayout: flatten the out dims row-major (last dim fastest) and split them to shape."""
    sizes = [s for _, s in ll.outs]
    names = _names(len(shape))

    def flat(v: tuple[int, ...]) -> int:
        x = 0
        for c, s in zip(v, sizes):
            x = x * s + c
        return x

    def split(x: int) -> tuple[int, ...]:
        out = []
        for s in reversed(list(shape)):
            out.append(x % s)
            x //= s
        return tuple(reversed(out))

    return _LL({k: [split(flat(v)) for v in vs] for k, vs in ll.bases.items()}, list(zip(names, shape)))


def _shared(g: GluonLayout, shape: list[int], op: str) -> _LL:
    rank = len(shape)
    names = _names(rank)
    k = g.kind
    if k in ("NVMMASharedLayout", "SwizzledSharedLayout") and g["cga_layout"]:
        raise LayoutError(f"{op}: shared layouts split over several CTAs (cga_layout) are not supported")
    if k == "SwizzledSharedLayout":
        vec, pp, mp, order = g["vec"], g["per_phase"], g["max_phase"], list(g["order"])
        for name, v in (("vec", vec), ("per_phase", pp), ("max_phase", mp)):
            log2_exact(v, op, f"SwizzledSharedLayout.{name}")
        if sorted(order) != list(range(rank)):
            raise LayoutError(f"{op}: SwizzledSharedLayout.order = {order} is not a permutation of 0..{rank - 1}")
        if rank == 1:
            return _combine(_LL.identity(shape[0], "offset", "dim0"), [], shape)
        col, row = order[0], order[1]
        ncol, nrow = shape[col], shape[row]
        b2 = [(0, 1 << i) for i in range(ncol.bit_length() - 1)]
        b2 += [(1 << i, (vec * (((1 << i) // pp) % mp)) % ncol) for i in range(nrow.bit_length() - 1)]
        cta = _LL.from_bases({"offset": b2}, [names[row], names[col]])
        for d in order[2:]:
            cta = cta * _LL.identity(shape[d], "offset", names[d])
        return _combine(cta, [], shape)
    if k == "NVMMASharedLayout":
        sw, bits, tr = g["swizzle_byte_width"], g["element_bitwidth"], bool(g["transposed"])
        if g["fp4_padded"]:
            raise LayoutError(f"{op}: NVMMASharedLayout(fp4_padded=True) is not supported")
        if sw not in (0, 32, 64, 128) or bits not in (8, 16, 32, 64):
            raise LayoutError(f"{op}: NVMMASharedLayout({sw}, {bits}): swizzle 0/32/64/128 B, element 8/16/32/64 bits")
        if g["rank"] != rank:
            raise LayoutError(f"{op}: NVMMASharedLayout(rank={g['rank']}) on a rank-{rank} shape {shape}")
        tma = _tma_block_shape(shape, bits, sw, tr, op)
        if sw == 0:
            ll = _LL.identity(tma[-1], "offset", names[-1])
            for d in range(rank - 2, -1, -1):
                ll = ll * _LL.identity(tma[d], "offset", names[d])
            return _combine(ll.not_smaller(dict(zip(names, shape))), [], shape)
        if rank < 2:
            raise LayoutError(f"{op}: a swizzled NVMMASharedLayout needs rank >= 2")
        collapsed = [1, tma[-1]]
        for s in tma[:-1]:
            collapsed[0] *= s
        if tr:
            collapsed.reverse()
        vec, (pp, mp) = 128 // bits, {32: (4, 2), 64: (2, 4), 128: (1, 8)}[sw]
        cols = 8 * sw // bits
        b2 = [(0, 1 << i) for i in range(cols.bit_length() - 1)]
        b2 += [(r, vec * ((r // pp) % mp)) for r in (1, 2, 4)]
        tile = _LL.from_bases({"offset": b2}, ["dim0", "dim1"])
        if collapsed[1] < cols or collapsed[0] < 8:
            raise LayoutError(f"{op}: NVMMASharedLayout({sw} B, {bits}-bit) on {shape}: the collapsed tile {collapsed} "
                              f"is smaller than one 8 x {cols} swizzle pattern")
        ll = tile.not_smaller({"dim0": collapsed[0], "dim1": collapsed[1]})
        tshape = tma[1:] + tma[:1] if tr else tma
        ll = _reshape(ll, tshape)
        if tr:
            order = [rank - 1] + list(range(rank - 1))
            ll = _LL({kk: [tuple(v[order.index(i)] for i in range(rank)) for v in vs] for kk, vs in ll.bases.items()},
                     [(names[i], ll.outs[order.index(i)][1]) for i in range(rank)])
        return _combine(ll.not_smaller(dict(zip(names, shape))), [], shape)
    if k in ("PaddedSharedLayout", "SharedLinearLayout"):
        if g["block_bases"]:
            raise LayoutError(f"{op}: shared layouts split over several CTAs (block_bases) are not supported")
        if k == "PaddedSharedLayout" and list(g["shape"]) != shape:
            raise LayoutError(f"{op}: PaddedSharedLayout.shape {list(g['shape'])} is not the tensor shape {shape}")
        for b in g["offset_bases"]:
            if len(b) != rank:
                raise LayoutError(f"{op}: offset basis {list(b)} has {len(b)} entries for shape {shape}")
        return _LL({"offset": [tuple(b) for b in g["offset_bases"]], "block": []}, list(zip(names, shape)))
    raise LayoutError(f"{op}: {k} is not a shared layout")


def linear_bases(layout: Any, shape: Sequence[int]) -> dict[str, list[list[int]]]:
    """linear_bases(layout, shape) -> Triton's bases of a Gluon layout on a tensor of ``shape``.

    Distributed layouts: ``{"register", "lane", "warp", "block"}``; shared layouts:
    ``{"offset", "block"}`` (offset -> coordinate, Triton's direction). Each basis lists
    ``[dim0, dim1, ...]``. These are the lists ``DistributedLinearLayout`` /
    ``SharedLinearLayout`` take, and what Triton's ``to_linear_layout`` returns.
    Preconditions: a power-of-two shape, and the layout's own rules (LayoutError otherwise).

    >>> linear_bases("BlockedLayout([1, 2], [8, 4], [1, 1], [1, 0])", (8, 8))["lane"]
    [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]]
    """
    op = "linear_bases"
    g = gluon_layout(layout)
    dims = [int(s) for s in shape] if isinstance(shape, (list, tuple)) else None
    if not dims:
        raise LayoutError(f"{op}: shape must be a non-empty list of ints, got {shape!r}")
    for s in dims:
        log2_exact(s, op, f"shape entry of {dims}")
    shape = dims
    ll = _shared(g, dims, op) if g.is_shared else _distributed(g, dims, op)
    keys = ("offset", "block") if g.is_shared else ("register", "lane", "warp", "block")
    return {k: [list(v) for v in ll.bases.get(k, [])] for k in keys}


@guarded
def padded_offset(offset: Any, interval_padding_pairs: Sequence[Sequence[int]]) -> Any:
    """padded_offset(o) = o + sum over (interval, pad) of (o >> log2 interval) << log2 pad: PaddedSharedLayout's rule.

    >>> padded_offset(130, [[64, 8]])          # two full rows of 64 passed: 2 pads of 8
    146
    """
    out = offset
    for interval, pad in interval_padding_pairs:
        out = out + ((offset >> log2_exact(interval, "padded_offset", "interval")) << log2_exact(pad, "padded_offset", "padding"))
    return out


# ---------------------------------------------------------------------------------------------
# Gluon -> layoutalg
# ---------------------------------------------------------------------------------------------
def _shared_layout(g: GluonLayout, offsets: list[list[int]], shape: Sequence[int], op: str) -> Any:
    """(d0, d1, ...) -> element offset: the inverse of Triton's offset -> coordinate bases."""
    from ..layout import Layout
    from ..linear import from_linear

    nbits = sum(s.bit_length() - 1 for s in shape)
    if len(offsets) != nbits:
        raise LayoutError(f"{op}: {g.kind} has {len(offsets)} offset bases; a {list(shape)} tile needs {nbits}")
    pre = invert_f2([flat_index(v, list(shape)) for v in offsets], f"{op}: {g.source}")
    per_dim, k = [], 0
    for s in shape:
        n = s.bit_length() - 1
        per_dim.append(pre[k:k + n])
        k += n
    if g.kind == "PaddedSharedLayout":
        pairs = [list(p) for p in g["interval_padding_pairs"]]
        if any(o & (o - 1) for o in pre):
            raise LayoutError(f"{op}: {g.source}: its offset_bases are not a permutation of the coordinate bits, so "
                              "offset + padding is no CuTe layout of the coordinates")
        modes = [_mode_strides(d, lambda o: padded_offset(o, pairs)) for d in per_dim]
        shapes = tuple(m[0] for m in modes)
        strides = tuple(m[1] for m in modes)
        return Layout(shapes, strides) if len(shape) > 1 else Layout(shapes[0], strides[0])
    try:
        return from_linear({f"dim{i}": [[o] for o in d] for i, d in enumerate(per_dim)})
    except LayoutError as e:
        raise LayoutError(f"{op}: {g.source} on {list(shape)} is F2-linear but no CuTe layout: {e}") from None


def _mode_strides(offs: list[int], f: Any) -> tuple[Any, Any]:
    from ..linear import mode_layout

    m = mode_layout([f(o) for o in offs])
    return m.shape, m.stride


def _is_amd_mfma(layout: Any) -> bool:
    """An AMD layout (``AMDMFMALayout``, ``AMDWMMALayout`` or an operand of one): the Gluon object or its source text."""
    if isinstance(layout, str):
        return any(c in layout for c in _AMD)
    if type(layout).__name__ == "DotOperandLayout":
        layout = getattr(layout, "parent", None)
    return type(layout).__name__ in _AMD


def from_gluon(layout: Any, shape: Sequence[int]) -> Any:
    """from_gluon(layout, shape) -> the layoutalg layout of a Gluon layout on a tensor of ``shape``.

    Distributed layouts give a TV layout ``((lane, warp, block), register) -> d0 + D0*d1 + ...``
    (the column-major index of the element; a mode of size 1 where a level has no bases);
    shared layouts give ``(d0, d1, ...) -> element offset`` (``Layout``, ``Sw o Layout``, or
    for padding a Layout whose strides include the pads). ``layout`` is a Gluon object, its
    source text, or a :class:`GluonLayout`. LayoutError when the layout breaks Gluon's rules,
    the shape is not a power of two, or the map is no CuTe layout (bases that overlap and no
    single swizzle separates).

    >>> str(from_gluon("NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16)", (64, 64)))
    'Sw<3,3,3> o _0 o (64,64):(64,1)'
    >>> str(from_gluon("BlockedLayout([1, 4], [4, 8], [2, 1], [1, 0])", (8, 32)))
    '(((8,4),2,1),4):(((32,1),4,0),8)'
    """
    op = "from_gluon"
    if _is_amd_mfma(layout):  # AMD's layouts: layoutalg.interop.gluon_amd (identical to Triton's engine)
        from .gluon_amd import from_gluon_amd

        return from_gluon_amd(layout, shape)
    g = gluon_layout(layout)
    shape = shape_arg(shape, op)
    bases = linear_bases(g, shape)
    if g.is_shared:
        return _shared_layout(g, bases["offset"], shape, op)
    from ..linear import from_linear

    return from_linear(bases, shape=shape)
