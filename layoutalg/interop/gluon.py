"""Triton's Gluon layouts in and out: every Gluon layout class as a layoutalg layout, and back.

Gluon (``triton.experimental.gluon``) writes down where each element of a tensor lives with
layout objects: *distributed* layouts (``BlockedLayout``, ``NVMMADistributedLayout``,
``DotOperandLayout``, ``SliceLayout``, ``DistributedLinearLayout``) say which thread's which
register holds element ``(i, j)``; *shared* layouts (``NVMMASharedLayout``,
``SwizzledSharedLayout``, ``PaddedSharedLayout``, ``SharedLinearLayout``) say at which offset of
shared memory it sits. Underneath, Triton turns each into an F2-linear map (its
``LinearLayout``): a list of *bases*, one tensor coordinate per input bit, XORed together.

layoutalg reads them as CuTe layouts:

* a distributed layout on a tensor of shape ``(D0, D1, ...)`` becomes a TV layout
  ``((lane, warp, block), register) -> d0 + D0*d1 + ...`` (the column-major index, CuTe's
  convention for an operand matrix), each basis of Triton's becoming one stride;
* a shared layout becomes ``(d0, d1, ...) -> element offset``, the inverse of Triton's
  ``offset -> coordinate`` map: a ``Layout``, ``Swizzle o Layout``, or (padding) a Layout whose
  strides carry the pads.

Worked by hand: the m16n8 accumulator of ``mma.sync``, ``NVMMADistributedLayout(version=[2, 0],
warps_per_cta=[1, 1], instr_shape=[16, 8])`` on a 16x8 tile. Triton's bases are
``register: [0,1], [8,0]`` and ``lane: [0,2], [0,4], [1,0], [2,0], [4,0]``. In column-major
indices ``d0 + 16*d1`` those are ``16, 8`` and ``32, 64, 1, 2, 4``: lane strides ``(4,8):(32,1)``
after coalescing, register strides ``(2,2):(16,8)`` -- the catalog's ``mma.m16n8k8`` C fragment,
``((4,8),(2,2)):((32,1),(16,8))`` (with a size-1 warp and block mode). Lane 5, register 3:
``32 + 1 + 16 + 8 = 57 = 9 + 16*3``, element ``(9, 3)``::

    >>> tv = from_gluon("NVMMADistributedLayout(version=[2, 0], warps_per_cta=[1, 1], instr_shape=[16, 8])", (16, 8))
    >>> str(tv), tv(5, 3)
    ('(((4,8),1,1),(2,2)):(((32,1),0,0),(16,8))', 57)
    >>> to_gluon(tv, (16, 8)).source
    'gl.NVMMADistributedLayout(version=[2, 0], warps_per_cta=[1, 1], instr_shape=[16, 8])'

No Triton is needed for any of this: :class:`GluonLayout` mirrors the constructor calls, and the
conversion rules are Triton's own (``LinearLayoutConversions.cpp`` of Triton 3.6), re-stated here
and checked against Triton's engine in the test suite. When Triton is installed,
:attr:`GluonResult.layout` is the ``triton.experimental.gluon.language`` object itself.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any, cast
from collections.abc import Mapping, Sequence

from ..errors import LayoutError
from ..linear import flat_index, unflat_index, invert_f2

__all__ = [
    "GluonLayout",
    "GluonResult",
    "LAYOUT_CLASSES",
    "gluon_layout",
    "linear_bases",
    "from_gluon",
    "to_gluon",
    "padded_offset",
    "bank_report",
]

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
}
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
        return f"{prefix}{self.kind}({', '.join(parts)})"

    def to_triton(self) -> Any:
        """The ``triton.experimental.gluon.language`` object (imports Triton; LayoutError if it is absent)."""
        try:
            from triton.experimental.gluon import language as gl
        except ImportError as e:  # pragma: no cover - exercised only without triton
            raise LayoutError(f"GluonLayout.to_triton: Triton's Gluon is not importable ({e})") from e
        kwargs = {}
        for k, v in self.params:
            kwargs[k] = v.to_triton() if isinstance(v, GluonLayout) else _thaw(v)
        return getattr(gl, self.kind)(**kwargs)

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
    return _make(name, given)


def _make(kind: str, given: dict[str, Any]) -> GluonLayout:
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
    return _make(name, {k: getattr(x, k) for k, _ in LAYOUT_CLASSES[name]})


# ---------------------------------------------------------------------------------------------
# Triton's LinearLayout, the few operations its conversions use (LinearLayout.h semantics)
# ---------------------------------------------------------------------------------------------
def _shape_arg(shape: Any, op: str) -> list[int]:
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


def _log2(n: int, op: str, what: str) -> int:
    if not isinstance(n, int) or isinstance(n, bool) or n < 1 or n & (n - 1):
        raise LayoutError(f"{op}: {what} = {n!r} is not a positive power of two")
    return n.bit_length() - 1


class _LL:
    """Triton's LinearLayout: ``bases[in_dim][j]`` = the output (one int per out dim) of bit j.

    Invariant: every basis vector has one component per entry of ``outs`` (name, size), in
    that order; in-dims keep their insertion order. ``a * b`` is Triton's product: b's
    outputs are scaled by a's size on shared out dims, in-dims and out-dims of b that a lacks
    come after a's.
    """

    __slots__ = ("bases", "outs")

    def __init__(self, bases: dict[str, list[tuple[int, ...]]], outs: list[tuple[str, int]]):
        self.bases = bases
        self.outs = outs

    @staticmethod
    def identity(size: int, ind: str, outd: str) -> _LL:
        n = max(size, 1).bit_length() - 1
        return _LL({ind: [(1 << i,) for i in range(n)]}, [(outd, 1 << n)])

    @staticmethod
    def zeros(size: int, ind: str, outd: str) -> _LL:
        n = max(size, 1).bit_length() - 1
        return _LL({ind: [(0,)] * n}, [(outd, 1)])

    @staticmethod
    def from_bases(bases: Mapping[str, Sequence[Sequence[int]]], names: Sequence[str]) -> _LL:
        """Out sizes inferred as Triton does: the smallest power of two above every component."""
        vecs = {k: [tuple(int(c) for c in v) for v in vs] for k, vs in bases.items()}
        outs = []
        for i, n in enumerate(names):
            m = 0
            for vs in vecs.values():
                for v in vs:
                    m |= v[i]
            outs.append((n, 1 << m.bit_length() if m else 1))
        return _LL(vecs, outs)

    def out_names(self) -> list[str]:
        return [n for n, _ in self.outs]

    def size(self, name: str) -> int:
        for n, s in self.outs:
            if n == name:
                return s
        return 1

    def __mul__(self, other: _LL) -> _LL:
        names = self.out_names() + [n for n in other.out_names() if n not in self.out_names()]
        outs = [(n, self.size(n) * other.size(n)) for n in names]
        ia = {n: i for i, n in enumerate(self.out_names())}
        ib = {n: i for i, n in enumerate(other.out_names())}

        def lift(v: tuple[int, ...], idx: dict[str, int], scale: bool) -> tuple[int, ...]:
            return tuple(v[idx[n]] * (self.size(n) if scale else 1) if n in idx else 0 for n in names)

        bases: dict[str, list[tuple[int, ...]]] = {}
        for k in list(self.bases) + [k for k in other.bases if k not in self.bases]:
            bases[k] = [lift(v, ia, False) for v in self.bases.get(k, [])] + \
                       [lift(v, ib, True) for v in other.bases.get(k, [])]
        return _LL(bases, outs)

    def transpose_outs(self, names: Sequence[str]) -> _LL:
        idx = [self.out_names().index(n) for n in names]
        return _LL({k: [tuple(v[i] for i in idx) for v in vs] for k, vs in self.bases.items()},
                   [self.outs[i] for i in idx])

    def not_smaller(self, shape: dict[str, int]) -> _LL:
        """ensureLayoutNotSmallerThan: repeat along the first in-dim until each out dim reaches shape."""
        first = next(iter(self.bases))
        ret = self
        for n, s in self.outs:
            want = shape[n]
            if want > s:
                ret = ret * _LL.identity(want // s, first, n)
        return ret

    def not_larger(self, shape: dict[str, int]) -> _LL:
        """ensureLayoutNotLargerThan: the bases reaching past shape become 0 (broadcast)."""
        bases = {k: [list(v) for v in vs] for k, vs in self.bases.items()}
        for i, (n, s) in enumerate(self.outs):
            if s <= shape[n]:
                continue
            for vs in bases.values():
                for v in vs:
                    if v[i] >= shape[n]:
                        v[i] = 0
        return _LL.from_bases(bases, self.out_names())


def _names(rank: int) -> list[str]:
    return [f"dim{i}" for i in range(rank)]


def _identity_nd(ind: str, sizes: Sequence[int], order: Sequence[int], names: Sequence[str]) -> _LL:
    """identityStandardND: identity along order[0] first; out dims in that order."""
    ll = _LL({ind: []}, [])
    for d in order:
        ll = ll * _LL.identity(sizes[d], ind, names[d])
    return ll


def _combine(cta: _LL, cga: Sequence[Sequence[int]], shape: Sequence[int]) -> _LL:
    """combineCtaCgaWithShape: fit the CTA layout to shape / (CTA split), then the CGA's block bases."""
    names = _names(len(shape))
    want = dict(zip(names, shape))
    cgall = _LL.from_bases({"block": [tuple(b) for b in cga]}, names).not_larger(want)
    cgall = cgall.transpose_outs(cta.out_names())
    cta_shape = {n: max(1, want[n] // cgall.size(n)) for n in cta.out_names()}
    cta = cta.not_smaller(cta_shape).not_larger(cta_shape)
    return (cta * cgall).transpose_outs(names)


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


def _broadcast_dot(sizes: Sequence[int], order: Sequence[int], k_dim: int, ind: str) -> _LL:
    names = _names(len(sizes))
    ll = _LL({ind: []}, [])
    for d in order:
        ll = ll * (_LL.zeros(sizes[d], ind, names[d]) if d == k_dim else _LL.identity(sizes[d], ind, names[d]))
    return ll


def _pow2_list(v: Sequence[int], op: str, what: str) -> list[int]:
    for x in v:
        _log2(x, op, what)
    return list(v)


def _check_cga(cga: Sequence[Sequence[int]], rank: int, op: str) -> list[tuple[int, ...]]:
    for b in cga:
        if len(b) != rank:
            raise LayoutError(f"{op}: cga_layout basis {list(b)} has {len(b)} entries, the tensor rank is {rank}")
    return [tuple(b) for b in cga]


def _distributed(g: GluonLayout, shape: list[int], op: str) -> _LL:
    rank = len(shape)
    k = g.kind
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
        _log2(kw, op, "k_width")
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
            _log2(v, op, f"SwizzledSharedLayout.{name}")
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
        _log2(s, op, f"shape entry of {dims}")
    shape = dims
    ll = _shared(g, dims, op) if g.is_shared else _distributed(g, dims, op)
    keys = ("offset", "block") if g.is_shared else ("register", "lane", "warp", "block")
    return {k: [list(v) for v in ll.bases.get(k, [])] for k in keys}


def padded_offset(offset: Any, interval_padding_pairs: Sequence[Sequence[int]]) -> Any:
    """padded_offset(o) = o + sum over (interval, pad) of (o >> log2 interval) << log2 pad: PaddedSharedLayout's rule.

    >>> padded_offset(130, [[64, 8]])          # two full rows of 64 passed: 2 pads of 8
    146
    """
    out = offset
    for interval, pad in interval_padding_pairs:
        out = out + ((offset >> _log2(interval, "padded_offset", "interval")) << _log2(pad, "padded_offset", "padding"))
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
    g = gluon_layout(layout)
    shape = _shape_arg(shape, op)
    bases = linear_bases(g, shape)
    if g.is_shared:
        return _shared_layout(g, bases["offset"], shape, op)
    from ..linear import from_linear

    return from_linear(bases, shape=shape)


# ---------------------------------------------------------------------------------------------
# layoutalg -> Gluon
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class GluonResult:
    """to_gluon's answer: the Gluon spelling, its source text, Triton's bases, and the Triton object.

    ``layout`` is the ``triton.experimental.gluon.language`` object when Triton is importable,
    else None; ``bases`` is what ``linear_bases(gluon, shape)`` gives (Triton's convention).
    """

    gluon: GluonLayout
    shape: tuple[int, ...]
    bases: dict
    layout: Any = None

    @property
    def source(self) -> str:
        """The Gluon constructor call, ready to paste (``gl.`` prefix)."""
        return self.gluon.source

    def __str__(self) -> str:
        return self.source


def _table(x: Any, op: str) -> Any:
    import numpy as np

    from ..parse import as_concrete_layout

    x = as_concrete_layout(x, op, "layout")
    return x, np.asarray(x.table(), dtype=np.int64)


def _check_linear(table: Any, images: list[int], op: str, what: str) -> None:
    """table[i] must be the XOR of images over i's set bits (F2-linear), else LayoutError."""
    import numpy as np

    idx = np.arange(len(table))
    acc = np.zeros(len(table), dtype=np.int64)
    for j, v in enumerate(images):
        acc ^= np.where((idx >> j) & 1, v, 0)
    bad = np.nonzero(acc != table)[0]
    if len(bad):
        i = int(bad[0])
        raise LayoutError(f"{op}: {what} is not F2-linear: at index {i} it gives {int(table[i])}, the XOR of its bits' "
                          f"images gives {int(acc[i])} (a Gluon layout is a linear map over F2)")


def _bits_of(n: int, op: str, what: str) -> int:
    return _log2(n, op, what)


def _distributed_bases(x: Any, shape: list[int], op: str) -> dict[str, list[list[int]]]:
    """Triton's bases of a TV layout (thread, value) -> column-major element index of ``shape``."""
    import numpy as np

    x, table = _table(x, op)
    from ..layout import rank as _rank

    if _rank(x) != 2:
        raise LayoutError(f"{op}: {x} is not a TV layout (thread, value); a distributed layout has rank 2")
    T, V = int(x[0].size()), int(x[1].size())
    tb, vb = _bits_of(T, op, "thread count"), _bits_of(V, op, "values per thread")
    total = int(np.prod(shape))
    if table.min() < 0 or table.max() >= total:
        raise LayoutError(f"{op}: {x} reaches element {int(table.max())}, outside the {shape} tensor")
    # flat input bit order: thread bits (lanes first), then value bits, as table's colexicographic index
    images = [int(table[1 << j]) for j in range(tb + vb)]
    if table[0] != 0:
        raise LayoutError(f"{op}: {x} sends (0, 0) to {int(table[0])}; a linear layout sends it to element 0")
    _check_linear(table, images, op, str(x))
    thr = x[0]
    sub = thr.shape if isinstance(thr.shape, tuple) else (thr.shape,)
    from ..inttuple import product

    if len(sub) == 3 and int(product(sub[0])) == 32:
        lane_b, warp_b = 5, _bits_of(int(product(sub[1])), op, "warps")
    else:
        if T < 32:
            raise LayoutError(f"{op}: {x} has {T} threads; a Gluon layout spans whole warps of 32 lanes")
        lane_b, warp_b = 5, tb - 5
    vecs = [unflat_index(v, shape) for v in images]
    for j, v in enumerate(vecs):
        if sum(1 for c in v if c) > 1:
            level = "lane" if j < lane_b else "warp" if j < lane_b + warp_b else "block" if j < tb else "register"
            raise LayoutError(f"{op}: {level} basis {v} moves along two dimensions at once; Gluon's distributed "
                              "layouts need each basis to move along one dimension (or none)")
    missing = np.setdiff1d(np.arange(total), table)
    if len(missing):
        raise LayoutError(f"{op}: {x} reaches {total - len(missing)} of the {total} elements of the {shape} tensor "
                          f"(element {int(missing[0])} is held by no thread); a Gluon distributed layout must cover "
                          "its tensor (Triton aborts on one that does not: 'Layout is expected to be surjective')")
    return {"register": vecs[tb:], "lane": vecs[:lane_b], "warp": vecs[lane_b:lane_b + warp_b], "block": vecs[lane_b + warp_b:tb]}


def _shared_bases(x: Any, shape: list[int], op: str) -> tuple[dict[str, list[list[int]]], list[list[int]] | None]:
    """(Triton's offset -> coordinate bases, padding pairs or None) of a shared layout (coordinate -> offset)."""
    import numpy as np

    from ..composed import ComposedLayout
    from ..layout import Layout

    if isinstance(x, str):
        from ..parse import as_concrete_layout

        x = as_concrete_layout(x, op)  # a pasted tensor print: its coordinate -> element offset function
    if isinstance(x, Layout) and len(shape) > 1 and x.rank() != len(shape):
        raise LayoutError(f"{op}: {x} has rank {x.rank()}; a shared layout of a {shape} tensor has one mode per dim")
    x, table = _table(x, op)
    total = int(np.prod(shape))
    if len(table) != total:
        raise LayoutError(f"{op}: {x} has {len(table)} coordinates; the {shape} tensor has {total}")
    nbits = total.bit_length() - 1
    images = [int(table[1 << j]) for j in range(nbits)]
    pairs = None
    try:
        _check_linear(table, images, op, str(x))
    except LayoutError:
        pairs = _padding_of(x, images, op) if isinstance(x, Layout) and not isinstance(x, ComposedLayout) else None
        if pairs is None:
            raise
        images = [_unpad(v, pairs) for v in images]
        if not np.array_equal(np.asarray([padded_offset(_xor_of(images, i), pairs) for i in range(total)]), table):
            raise LayoutError(f"{op}: {x} is neither F2-linear nor a padded linear layout") from None
    pre = invert_f2(images, f"{op}: {x}")
    return {"offset": [unflat_index(p, shape) for p in pre], "block": []}, pairs


def _xor_of(images: list[int], i: int) -> int:
    acc = 0
    for j, v in enumerate(images):
        if i >> j & 1:
            acc ^= v
    return acc


def _padding_of(x: Any, images: list[int], op: str) -> list[list[int]] | None:
    """The (interval, padding) pairs that explain strides w_j = 2**j + pads, if any (unique when they exist)."""
    order = sorted(images)
    if len(set(order)) != len(order) or 0 in order:
        return None
    from fractions import Fraction

    pairs: list[list[int]] = []
    prev = Fraction(0)
    for j, w in enumerate(order):
        rate = Fraction(w - (1 << j), 1 << j)  # pad elements per element so far
        jump = rate - prev
        if jump < 0:
            return None
        if jump:
            pad = jump * (1 << j)
            if pad.denominator != 1 or int(pad) & (int(pad) - 1):
                return None
            pairs.append([1 << j, int(pad)])
        prev = rate
    return pairs or None


def _unpad(w: int, pairs: list[list[int]]) -> int:
    """The linear offset o with padded_offset(o) = w (w a padded single-bit stride)."""
    for j in range(w.bit_length() + 1):
        if padded_offset(1 << j, pairs) == w:
            return 1 << j
    raise LayoutError(f"to_gluon: stride {w} is not a padded power of two under {pairs}")


def _try(cands: Any, shape: list[int], target: dict, match: Any = None) -> GluonLayout | None:
    for c in cands:
        try:
            got = match(c) if match else linear_bases(c, shape)
        except LayoutError:
            continue
        if got == target:
            return c
    return None


def _pow2_splits(total: int, rank: int) -> list[list[int]]:
    """Every way to write total (a power of two) as a product of rank powers of two, last dim first."""
    n = total.bit_length() - 1
    out = []

    def rec(prefix: list[int], left: int) -> None:
        if len(prefix) == rank - 1:
            out.append(prefix + [1 << left])
            return
        for k in range(left + 1):
            rec(prefix + [1 << k], left - k)

    rec([], n)
    return out


def _mma_candidates(rank: int, warps: int, bits: int | None) -> list[GluonLayout]:
    out = []
    for w in _pow2_splits(warps, rank):
        out.append(_make("NVMMADistributedLayout", {"version": [2, 0], "warps_per_cta": w,
                                                    "instr_shape": [16, 8] if rank == 2 else [1] * (rank - 2) + [16, 8]}))
    if rank == 2 and warps >= 4:
        k = 256 // bits if bits else 16
        for w in _pow2_splits(warps, 2):
            if w[0] % 4 == 0:
                for n in (8, 16, 32, 64, 128, 256):
                    out.append(_make("NVMMADistributedLayout", {"version": [3, 0], "warps_per_cta": w, "instr_shape": [16, n, k]}))
    return out


def _mma_fits(c: GluonLayout, shape: list[int]) -> bool:
    instr, warps = list(c["instr_shape"]), list(c["warps_per_cta"])
    tile = instr[:2] if c["version"][0] == 3 else instr[-2:]
    return tile[0] * warps[-2] <= shape[-2] and tile[1] * warps[-1] <= shape[-1]


def _dot_candidates(rank: int, warps: int, bits: int | None) -> list[GluonLayout]:
    out = []
    seen_v3 = set()
    for p in _mma_candidates(rank, warps, bits):
        v3 = p["version"][0] == 3
        if v3:  # an A operand does not see the parent's instr N: one candidate per warp split
            if p["warps_per_cta"] in seen_v3:
                continue
            seen_v3.add(p["warps_per_cta"])
        for opi in ((0,) if v3 else (0, 1)):
            for kw in (1, 2, 4, 8, 16):
                out.append(_make("DotOperandLayout", {"operand_index": opi, "parent": p, "k_width": kw}))
    return out


def _blocked_candidates(target: dict, shape: list[int]) -> Any:
    """BlockedLayouts that could give target: orders (row-major first), register runs (spt smallest first), zero splits."""
    import itertools

    rank = len(shape)
    regs = target["register"]
    default = list(range(rank))[::-1]
    orders = [default] + [list(o) for o in itertools.permutations(range(rank)) if list(o) != default]

    def level_counts(vecs: list[list[int]]) -> list[list[int]]:
        counts = [0] * rank
        zeros = 0
        for v in vecs:
            nz = [i for i, c in enumerate(v) if c]
            if nz:
                counts[nz[0]] += 1
            else:
                zeros += 1
        out = []
        for split in _pow2_splits(1 << zeros, rank):
            out.append([1 << (c + s.bit_length() - 1) for c, s in zip(counts, split[::-1])])
        return out

    lanes = level_counts(target["lane"])
    warps = level_counts(target["warp"])
    for order in orders:
        # the register list starts with spt bits: order[0]'s run of 1, 2, 4, ... then order[1]'s, ...
        def spts(pos: int, k: int, acc: list[int], order: list[int] = order) -> Any:
            if k == rank:
                yield acc
                return
            d = order[k]
            run = 0
            while pos + run < len(regs):
                v = regs[pos + run]
                val = 1 << run
                unit = [0] * rank
                unit[d] = val if val < shape[d] else 0
                if v != unit:
                    break
                run += 1
            for take in range(run + 1):
                acc2 = list(acc)
                acc2[d] = 1 << take
                yield from spts(pos + take, k + 1, acc2, order)

        for spt in spts(0, 0, [1] * rank):
            for tpw in lanes:
                for wpc in warps:
                    yield _make("BlockedLayout", {"size_per_thread": spt, "threads_per_warp": tpw,
                                                  "warps_per_cta": wpc, "order": order})


def _recognize_distributed(target: dict, shape: list[int], bits: int | None, match: Any = None,
                           want: dict | None = None) -> GluonLayout | None:
    """The first named layout whose bases (``match(candidate)``, default its own) equal ``want`` (default target)."""
    if target["block"]:
        return None
    want = target if want is None else want
    rank = len(shape)
    warps = 1 << len(target["warp"])
    if rank >= 2:
        # an accumulator spelling only where its warps land inside the tensor (else it aliases an operand)
        fits = [c for c in _mma_candidates(rank, warps, bits) if _mma_fits(c, shape)]
        for cands in (fits, _dot_candidates(rank, warps, bits)):
            found = _try(cands, shape, want, match)
            if found:
                return found
    return _try(_blocked_candidates(target, shape), shape, want, match)


def _recognize_slice(target: dict, shape: list[int], bits: int | None) -> GluonLayout | None:
    rank = len(shape)
    for dim in range(rank + 1):
        pshape = shape[:dim] + [1] + shape[dim:]
        ptarget = {k: [v[:dim] + [0] + v[dim:] for v in vs] for k, vs in target.items()}

        def match(parent: GluonLayout, dim: int = dim) -> Any:
            return linear_bases(_make("SliceLayout", {"dim": dim, "parent": parent}), shape)

        found = _recognize_distributed(ptarget, pshape, bits, match, target)
        if found:
            return _make("SliceLayout", {"dim": dim, "parent": found})
    return None


def _recognize_shared(target: dict, shape: list[int], bits: int | None, pairs: list[list[int]] | None) -> GluonLayout:
    rank = len(shape)
    offsets = target["offset"]
    if pairs is not None:
        return _make("PaddedSharedLayout", {"interval_padding_pairs": pairs, "offset_bases": offsets, "block_bases": [],
                                            "shape": shape})
    if rank >= 2:
        widths = [bits] if bits else [16, 8, 32, 64]
        for b in widths:
            for sw in (128, 64, 32):
                found = _try([_make("NVMMASharedLayout", {"swizzle_byte_width": sw, "element_bitwidth": b, "rank": rank,
                                                          "transposed": tr}) for tr in (False, True)], shape, target)
                if found:
                    return found
        import itertools

        default = list(range(rank))[::-1]
        for order in [default] + [list(o) for o in itertools.permutations(range(rank)) if list(o) != default]:
            ncol, nrow = shape[order[0]], shape[order[1]]
            cands = [_make("SwizzledSharedLayout", {"vec": 1 << v, "per_phase": 1 << p, "max_phase": 1 << m, "order": order})
                     for m in range(nrow.bit_length()) for p in range(nrow.bit_length()) for v in range(ncol.bit_length())
                     if m or (p == 0 and v == 0)]
            found = _try(cands, shape, target)
            if found:
                return found
        if bits:
            found = _try([_make("NVMMASharedLayout", {"swizzle_byte_width": 0, "element_bitwidth": bits, "rank": rank})],
                         shape, target)
            if found:
                return found
    return _make("SharedLinearLayout", {"offset_bases": offsets})


#: the Gluon classes to_gluon can be asked for, and whether each is a shared layout
_DISTRIBUTED_CLASSES = ("NVMMADistributedLayout", "DotOperandLayout", "BlockedLayout", "SliceLayout",
                        "DistributedLinearLayout")
_SHARED_CLASSES = ("NVMMASharedLayout", "SwizzledSharedLayout", "PaddedSharedLayout", "SharedLinearLayout")


def to_gluon(x: Any, shape: Sequence[int], *, kind: str | None = None, element_bitwidth: int | None = None,
             cls: Any = None, version: Any = None, operand: int | None = None, like: Any = None) -> GluonResult:
    """to_gluon(x, shape) -> the Gluon layout equal to x on a tensor of ``shape``: spelling, source, object.

    ``x`` is a TV layout ``(thread, value) -> d0 + D0*d1 + ...`` (``kind="distributed"``), a
    shared layout ``(d0, d1, ...) -> element offset`` (``kind="shared"``), or a catalog
    :class:`~layoutalg.nvidia.fragment.Fragment` (an mma.sync or wgmma operand). By default x is
    shared when its modes match ``shape`` one to one, and distributed otherwise (a thread mode
    ``(lane, warp, block)`` as :func:`from_gluon` writes it is always distributed). The
    answer is the named Gluon class when one equals x (checked through :func:`linear_bases`):
    ``NVMMASharedLayout`` (swizzled; ``element_bitwidth`` narrows the search, and is needed for
    the unswizzled one), ``SwizzledSharedLayout``, ``PaddedSharedLayout``; for registers
    ``NVMMADistributedLayout``, ``DotOperandLayout``, ``BlockedLayout``, ``SliceLayout`` --
    else ``SharedLinearLayout`` / ``DistributedLinearLayout`` with Triton's bases. Where Gluon
    has several spellings of one layout, the first found is returned: row-major order first,
    the smallest ``size_per_thread``, the smallest swizzle parameters, the parent's smallest
    instr N (an A operand does not depend on it). LayoutError when x is not F2-linear (nor
    padded), a shape is not a power of two, or a basis of a register layout moves along two
    dimensions.

    Asking for a class: ``cls`` (a class name or the Gluon class) returns that class or raises;
    ``version=3`` (wgmma) or ``2`` (mma.sync) picks ``NVMMADistributedLayout``'s version (or a
    ``DotOperandLayout`` parent's); ``operand=0`` / ``1`` asks for ``DotOperandLayout`` of the A / B
    operand; ``like=<gluon layout>`` imitates one: its class, its version and operand, and the
    spelling closest to its fields (its ``instr_shape``, ``k_width``, ``order``...). A catalog
    fragment speaks for itself: a wgmma accumulator comes back as version 3 with its
    ``instr_shape=[16, N, K]``, an mma.sync one as version 2, an A/B operand as
    ``DotOperandLayout``. An argument that cannot apply (``version`` of a ``BlockedLayout``,
    ``operand`` with ``cls="NVMMASharedLayout"``) is a LayoutError.

    >>> from layoutalg.nvidia.wgmma import tile
    >>> to_gluon(tile("K", 128, "bf16", (64, 64)), (64, 64), element_bitwidth=16).source
    'gl.NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16)'
    >>> from layoutalg.nvidia import wgmma_fragments
    >>> to_gluon(wgmma_fragments.fragment("m64n64k16", "f16", "D"), (64, 64)).source
    'gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, 1], instr_shape=[16, 64, 16])'
    >>> to_gluon(wgmma_fragments.fragment("m64n64k16", "f16", "D"), (64, 64), version=2).source
    'gl.NVMMADistributedLayout(version=[2, 0], warps_per_cta=[4, 1], instr_shape=[16, 8])'
    """
    op = "to_gluon"
    shape = _shape_arg(shape, op)
    for s in shape:
        _log2(s, op, f"shape entry of {shape}")
    want = _wanted(op, cls, version, operand, like)
    if _is_fragment(x):
        x, want = _fragment_wish(x, shape, want, element_bitwidth, op)
        if kind not in (None, "distributed"):
            raise LayoutError(f"{op}: kind={kind!r} for a register fragment (an mma/wgmma operand is distributed)")
        kind = "distributed"
    if kind is None:
        kind = "shared" if want["cls"] in _SHARED_CLASSES else \
            "distributed" if want["cls"] in _DISTRIBUTED_CLASSES else _guess_kind(x, shape)
    if kind not in ("shared", "distributed"):
        raise LayoutError(f"{op}: kind={kind!r} is not 'shared' or 'distributed'")
    if want["cls"] is not None and (want["cls"] in _SHARED_CLASSES) != (kind == "shared"):
        raise LayoutError(f"{op}: cls={want['cls']!r} is a {'shared' if want['cls'] in _SHARED_CLASSES else 'distributed'} "
                          f"layout, but kind={kind!r}")
    g: GluonLayout | None
    if kind == "shared":
        target, pairs = _shared_bases(x, shape, op)
        if want["cls"] is None:
            g = _recognize_shared(target, shape, element_bitwidth, pairs)
        else:
            g = _shared_of_class(want, target, shape, element_bitwidth, pairs)
    else:
        target = _distributed_bases(x, shape, op)
        if want["cls"] is None and want["like"] is None:
            g = _recognize_distributed(target, shape, element_bitwidth)
            if g is None and not target["block"]:
                g = _recognize_slice(target, shape, element_bitwidth)
        else:
            g = _distributed_of_class(want, target, shape, element_bitwidth)
        if g is None and want["cls"] in (None, "DistributedLinearLayout"):
            g = _make("DistributedLinearLayout", {"reg_bases": target["register"], "lane_bases": target["lane"],
                                                  "warp_bases": target["warp"], "block_bases": target["block"], "shape": shape})
    if g is None:
        asked = want["cls"] + "".join(f", {k}={want[k]}" for k in ("version", "operand") if want[k] is not None)
        raise LayoutError(f"{op}: no {asked} equals {_short(x)} on shape {shape} (Triton's bases differ from every "
                          f"spelling tried); without the request it is "
                          f"{to_gluon(x, shape, kind=kind, element_bitwidth=element_bitwidth).source}")
    bases = linear_bases(g, shape)
    try:
        obj = g.to_triton()
    except (LayoutError, ImportError):
        obj = None
    return GluonResult(g, tuple(shape), bases, obj)


def _short(x: Any) -> str:
    s = str(x)
    return s if len(s) <= 80 else s[:77] + "..."


def _wanted(op: str, cls: Any, version: Any, operand: Any, like: Any) -> dict:
    """The request as a dict: cls, version, operand, like (a GluonLayout), checked for consistency."""
    if cls is not None and not isinstance(cls, str):
        cls = getattr(cls, "__name__", cls)
    if cls is not None and cls not in _DISTRIBUTED_CLASSES + _SHARED_CLASSES:
        raise LayoutError(f"{op}: cls={cls!r} is not one of the classes to_gluon writes: "
                          f"{list(_DISTRIBUTED_CLASSES + _SHARED_CLASSES)}")
    g = None
    if like is not None:
        g = gluon_layout(like)
        if cls is not None and cls != g.kind:
            raise LayoutError(f"{op}: cls={cls!r} and like={g.source} ask for different classes")
        cls = g.kind
    if version is not None:
        v = list(version) if isinstance(version, (list, tuple)) else [version]
        if not v or v[0] not in (2, 3) or any(type(e) is not int for e in v):
            raise LayoutError(f"{op}: version={version!r}: 2 (mma.sync) or 3 (wgmma), or [2, 0] / [3, 0]")
        version = v[0]
        if cls is None:
            cls = "DotOperandLayout" if operand is not None else "NVMMADistributedLayout"
        if cls not in ("NVMMADistributedLayout", "DotOperandLayout"):
            raise LayoutError(f"{op}: version={version} applies to NVMMADistributedLayout and DotOperandLayout "
                              f"(its parent), not to {cls}")
    if operand is not None:
        if operand not in (0, 1) or type(operand) is not int:
            raise LayoutError(f"{op}: operand={operand!r}: 0 (A) or 1 (B)")
        if cls is None:
            cls = "DotOperandLayout"
        if cls != "DotOperandLayout":
            raise LayoutError(f"{op}: operand={operand} asks for a DotOperandLayout, not {cls}")
        if version == 3 and operand == 1:
            raise LayoutError(f"{op}: operand=1 with version=3: wgmma reads B from shared memory (no register layout)")
    if g is not None:  # like's own version and operand, unless given (then they must agree)
        lv = g["version"][0] if g.kind == "NVMMADistributedLayout" else \
            g["parent"]["version"][0] if g.kind == "DotOperandLayout" and g["parent"].kind == "NVMMADistributedLayout" else None
        if lv is not None:
            if version is not None and version != lv:
                raise LayoutError(f"{op}: version={version} and like={g.source} (version {lv}) disagree")
            version = lv
        if g.kind == "DotOperandLayout":
            if operand is not None and operand != g["operand_index"]:
                raise LayoutError(f"{op}: operand={operand} and like={g.source} disagree")
            operand = g["operand_index"]
    return {"cls": cls, "version": version, "operand": operand, "like": g, "prefer": []}


def _is_fragment(x: Any) -> bool:
    return all(hasattr(x, a) for a in ("layout", "instruction", "operand", "mnk", "codomain", "num_threads"))


def _fragment_wish(frag: Any, shape: list[int], want: dict, bits: int | None, op: str) -> tuple[Any, dict]:
    """A catalog fragment's TV layout in Gluon's index convention, and what it asks for by default."""
    from ..algebra import composition
    from ..layout import Layout

    hopper = frag.instruction.startswith("wgmma")
    M, N, K = frag.mnk
    x = frag.layout
    if frag.operand in ("B",):
        if hopper:
            raise LayoutError(f"{op}: {frag.name}: wgmma reads B from shared memory; it has no register layout")
        n, k = frag.codomain  # stored N-major: index n + N*k; Gluon's B tensor is K x N: index k + K*n
        x = composition(Layout((n, k), (k, 1)), x)
    want = dict(want)
    role = {"A": ("DotOperandLayout", 0), "B": ("DotOperandLayout", 1), "C": ("NVMMADistributedLayout", None),
            "D": ("NVMMADistributedLayout", None)}.get(frag.operand)
    if role is None:
        raise LayoutError(f"{op}: {frag.name}: operand {frag.operand} has no Gluon register layout")
    if want["cls"] is None:
        want["cls"] = role[0]
    if want["cls"] == "DotOperandLayout" and want["operand"] is None:
        want["operand"] = role[1]
    if want["version"] is None and want["cls"] in ("NVMMADistributedLayout", "DotOperandLayout"):
        want["version"] = 3 if hopper else 2
    if want["cls"] == "NVMMADistributedLayout" and want["version"] == 3 and hopper:
        warps = frag.num_threads // 32
        want["prefer"] = [_make("NVMMADistributedLayout", {"version": [3, 0], "warps_per_cta": [warps, 1],
                                                            "instr_shape": [16, N, K]})]
    return x, want


def _closeness(c: GluonLayout, like: GluonLayout | None) -> int:
    """How many fields of c equal like's (nested layouts counted field by field); 0 without like."""
    if like is None or c.kind != like.kind:
        return 0
    n = 0
    for (_k, v), (_, w) in zip(c.params, like.params):
        if isinstance(v, GluonLayout) and isinstance(w, GluonLayout):
            n += _closeness(v, w)
        elif v == w:
            n += 1
    return n


def _distributed_of_class(want: dict, target: dict, shape: list[int], bits: int | None) -> GluonLayout | None:
    cls, like = want["cls"], want["like"]
    rank = len(shape)
    warps = 1 << len(target["warp"])
    if cls == "DistributedLinearLayout" or target["block"]:
        return None
    if cls == "SliceLayout":
        return _recognize_slice(target, shape, bits)
    if cls == "NVMMADistributedLayout":
        cands = [c for c in _mma_candidates(rank, warps, bits) if want["version"] in (None, c["version"][0])]
    elif cls == "DotOperandLayout":
        cands = [c for c in _dot_candidates(rank, warps, bits)
                 if want["operand"] in (None, c["operand_index"]) and want["version"] in (None, c["parent"]["version"][0])]
    elif cls == "BlockedLayout":
        cands = list(_blocked_candidates(target, shape))
    else:
        return None
    cands = list(want["prefer"]) + ([like] if like is not None else []) + \
        sorted(cands, key=lambda c: -_closeness(c, like))
    return _try(cands, shape, target)


def _shared_of_class(want: dict, target: dict, shape: list[int], bits: int | None,
                     pairs: list[list[int]] | None) -> GluonLayout | None:
    cls, like = want["cls"], want["like"]
    if cls == "PaddedSharedLayout":
        return _recognize_shared(target, shape, bits, pairs) if pairs is not None else None
    if pairs is not None:
        return None
    if cls == "SharedLinearLayout":
        return _make("SharedLinearLayout", {"offset_bases": target["offset"]})
    if like is not None and _try([like], shape, target):
        return like
    rank = len(shape)
    if cls == "NVMMASharedLayout":
        lb = like["element_bitwidth"] if like is not None else None
        widths = [bits] if bits else ([lb] if lb else []) + [16, 8, 32, 64]
        cands = [_make("NVMMASharedLayout", {"swizzle_byte_width": sw, "element_bitwidth": b, "rank": rank, "transposed": tr})
                 for b in widths for sw in (128, 64, 32, 0) for tr in (False, True)]
        return _try(sorted(cands, key=lambda c: -_closeness(c, like)), shape, target)
    if cls == "SwizzledSharedLayout":
        import itertools

        out = []
        for order in [list(o) for o in itertools.permutations(range(rank))][::-1]:
            ncol, nrow = shape[order[0]], shape[order[1]] if rank > 1 else 1
            out += [_make("SwizzledSharedLayout", {"vec": 1 << v, "per_phase": 1 << p, "max_phase": 1 << m, "order": order})
                    for m in range(nrow.bit_length()) for p in range(nrow.bit_length()) for v in range(ncol.bit_length())]
        return _try(sorted(out, key=lambda c: -_closeness(c, like)), shape, target)
    return None


def _guess_kind(x: Any, shape: list[int]) -> str:
    from ..composed import ComposedLayout
    from ..inttuple import product
    from ..layout import Layout
    from ..parse import ParsedTensor, parse

    if isinstance(x, str):
        x = parse(x)
    if isinstance(x, ParsedTensor):
        x = x.function
    inner = x.inner if isinstance(x, ComposedLayout) else x
    if not isinstance(inner, Layout):
        return "shared"
    if inner.rank() == 2:
        thr = cast(tuple, inner.shape)[0]
        if isinstance(thr, tuple) and len(thr) == 3 and int(product(thr[0])) == 32:
            return "distributed"
    if inner.rank() == len(shape) and all(int(product(cast(tuple, inner.shape)[i] if inner.rank() > 1 else inner.shape)) == s
                                        for i, s in enumerate(shape)):
        return "shared"
    return "distributed"


def bank_report(register: Any, shared: Any, shape: Sequence[int], element_bitwidth: int) -> Any:
    """bank_report(reg, smem, shape, bits) -> layoutalg.banks' report of ``reg`` reading/writing ``smem`` as Triton issues it.

    The access is the one Triton's lowering (and ``get_shared_bank_conflicts``) assumes: each
    thread moves the largest vector of registers that sit at consecutive shared offsets (up
    to 128 bits; registers may be taken in any order), one instruction per vector. For these
    linear accesses every phase of an instruction has the same conflict degree, and Triton's
    count is ``report.ways - 1``.

    >>> mma = "NVMMADistributedLayout(version=[2, 0], warps_per_cta=[4, 1], instr_shape=[16, 8])"
    >>> r = bank_report(f"DotOperandLayout(0, {mma}, 2)", "NVMMASharedLayout(128, 16)", (64, 64), 16)
    >>> r.ways - 1, r.access_bytes
    (0, 4)
    """
    from ..banks import analyze
    from ..layout import Layout
    from ..linear import mode_layout

    op = "bank_report"
    shape = [int(s) for s in shape]
    if element_bitwidth not in (8, 16, 32, 64):
        raise LayoutError(f"{op}: element_bitwidth {element_bitwidth} is not 8, 16, 32 or 64")
    reg = linear_bases(register, shape)
    g = gluon_layout(shared)
    if gluon_layout(register).is_shared or not g.is_shared:
        raise LayoutError(f"{op}: needs a distributed layout and a shared layout, got {gluon_layout(register).kind} and {g.kind}")
    smem = from_gluon(g, shape)
    table = smem.table()
    regs = [v for v in reg["register"] if any(v)]  # broadcast registers move nothing
    offs = [int(table[flat_index(v, shape)]) for v in regs]
    others = [int(table[flat_index(v, shape)]) for k in ("lane", "warp") for v in reg[k]]
    vec, order = 1, []
    # a vector of 2**k registers: registers at offsets 1, 2, .., 2**(k-1), no other basis touching those bits
    while vec * element_bitwidth < 128 and vec in offs:
        rest = [o for i, o in enumerate(offs) if i not in order and o != vec] + others
        if any(o & (2 * vec - 1) for o in rest):
            break
        order.append(offs.index(vec))
        vec *= 2
    order += [i for i in range(len(regs)) if i not in order]
    thr = [mode_layout([flat_index(v, shape) for v in reg[k]]) for k in ("lane", "warp")]
    val = mode_layout([flat_index(regs[i], shape) for i in order])
    access = Layout((tuple(t.shape for t in thr), val.shape), (tuple(t.stride for t in thr), val.stride))
    nbytes = element_bitwidth // 8
    return analyze(smem, access, nbytes, vec * nbytes)
