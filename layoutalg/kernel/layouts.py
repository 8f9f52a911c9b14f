"""ttgir's layout attributes as layoutalg layouts: :func:`read_layout` turns a parsed ``#ttg.*`` /
``#ttng.*`` attribute into a :class:`KernelLayout`.

Each attribute is first read into the Gluon constructor call it stands for (a
:class:`~layoutalg.interop.gluon_layouts.GluonLayout`: ``#ttg.blocked<{sizePerThread = ...}>`` is
``BlockedLayout(size_per_thread=...)``), whose conversion to Triton's linear layout and to a
layoutalg layout is :mod:`layoutalg.interop.gluon_layouts` (Triton's ``LinearLayoutConversions.cpp``
restated, checked against Triton's engine). Tensor-memory encodings go through
:mod:`layoutalg.interop.gluon_tmem`.

    >>> from layoutalg.kernel.mlir import parse_attribute
    >>> kl = read_layout(parse_attribute("#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, "
    ...                                   "warpsPerCTA = [1, 1], instrShape = [16, 8]}>"))
    >>> kl.gluon.source
    'gl.NVMMADistributedLayout(version=[2, 0], warps_per_cta=[1, 1], instr_shape=[16, 8])'
    >>> str(kl.layout((16, 8)))
    '(((4,8),1,1),(2,2)):(((32,1),0,0),(16,8))'
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import LayoutError
from ..interop.gluon_layouts import GluonLayout, from_gluon, linear_bases, make_gluon
from ..interop.gluon_tmem import tmem_linear_layout, tmem_scales_linear_layout
from .mlir import AliasRef, Attr

__all__ = ["KernelLayout", "read_layout", "LAYOUT_ATTRIBUTES", "MEMORY_SPACES"]

#: memory-space attributes of a memdesc (not layouts)
MEMORY_SPACES = {"ttg.shared_memory": "shared", "ttng.tensor_memory": "tensor memory"}


@dataclass
class KernelLayout:
    """One layout attribute of a kernel, read.

    ``attribute``: the dialect name (``ttg.blocked``); ``text``: the attribute as written;
    ``alias``: its name in the module (``blocked1``) or None; ``gluon``: the Gluon constructor call
    it stands for (None for tensor memory and AMD layouts); ``params``: the attribute's own fields;
    ``memory``: ``registers``, ``shared`` or ``tensor memory``.
    """

    attribute: str
    text: str
    gluon: GluonLayout | None = None
    params: dict[str, Any] = field(default_factory=dict)
    alias: str | None = None
    memory: str = "registers"
    line: int = 0
    col: int = 0
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def name(self) -> str:
        """``#alias`` where the module named it, else the attribute text."""
        return f"#{self.alias}" if self.alias else self.text

    def gluon_for(self, shape: Sequence[int]) -> GluonLayout:
        """The Gluon layout on a tensor of ``shape`` (what ttgir leaves to the type filled in: the rank of an
        NVMMA shared layout, the shape of a linear or padded layout)."""
        g = self.gluon
        if g is None and self.attribute == "ttg.amd_rotating_shared":
            return make_gluon("SharedLinearLayout", {"offset_bases": _rotating_bases(self.params, [int(s) for s in shape]),
                                                     "block_bases": [], "alignment": 16})
        if g is None:
            why = ("an AMD layout: its fields are in .params, its linear layout is .bases(shape)"
                   if self.attribute.startswith("ttg.amd_") or self.amd is not None else "it has no Gluon layout to read")
            raise LayoutError(f"line {self.line}, column {self.col}: #{self.attribute}: {why}")
        if g.kind == "NVMMASharedLayout" and len(shape) < 2:
            # the layout's own rank is 2 (a memdesc of rank 3 holds buffers of rank-2 tiles, as Triton reads it)
            g = make_gluon(g.kind, {**dict(g.params), "rank": len(shape)})
        if g.kind in ("DistributedLinearLayout", "SliceLayout"):
            return _fill_linear(g, [int(s) for s in shape])
        if g.kind == "PaddedSharedLayout" and not g["shape"]:
            g = make_gluon(g.kind, {**dict(g.params), "shape": list(shape)})
        if g.kind == "PaddedSharedLayout" and not g["offset_bases"]:
            g = make_gluon(g.kind, {**dict(g.params), "offset_bases": _identity_bases(self.params["order"], shape)})
        return g

    def _cached(self, what: str, shape: Sequence[int], fn: Callable[[], Any]) -> Any:
        key = (what, tuple(int(s) for s in shape))
        if key not in self._cache:
            try:
                self._cache[key] = fn()
            except LayoutError as e:
                raise LayoutError(f"line {self.line}, column {self.col}: {self.name} on {list(key[1])}: {e}") from None
        return self._cache[key]

    def bases(self, shape: Sequence[int]) -> dict[str, list[list[int]]]:
        """Triton's linear layout on a tensor of ``shape``: ``{register, lane, warp, block}`` (distributed),
        ``{offset, block}`` (shared; offset -> coordinate) or ``{row, col}`` (tensor memory; TMEM row /
        32-bit column -> coordinate)."""
        if self.memory == "tensor memory":
            return self._cached("bases", shape, lambda: self._tmem(shape))
        if self.amd is not None:
            return self._cached("bases", shape, lambda: self._amd_bases(shape))
        return self._cached("bases", shape, lambda: linear_bases(self.gluon_for(shape), shape))

    @property
    def amd(self) -> str | None:
        """``mfma`` / ``wmma`` for an AMD distributed layout (an accumulator or a dot operand of one), else None."""
        if self.attribute in ("ttg.amd_mfma", "ttg.amd_wmma"):
            return self.attribute[8:]
        if self.attribute == "ttg.dot_op":
            parent = self.params.get("parent")
            if isinstance(parent, KernelLayout) and parent.attribute in ("ttg.amd_mfma", "ttg.amd_wmma"):
                return parent.attribute[8:]
        if self.attribute == "ttg.slice":
            parent = self.params.get("parent")
            if isinstance(parent, KernelLayout) and parent.amd is not None:
                return parent.amd
        return None

    def _amd_bases(self, shape: Sequence[int]) -> dict[str, list[list[int]]]:
        from .amd import amd_bases, amd_dot_bases

        shape = [int(s) for s in shape]
        if self.attribute == "ttg.dot_op":
            parent = self.params["parent"]
            return amd_dot_bases(int(self.params["opIdx"]), int(self.params["kWidth"]), parent.attribute,
                                 parent.params, shape)
        if self.attribute == "ttg.slice":
            dim = int(self.params["dim"])
            pb = self.params["parent"].bases(shape[:dim] + [1] + shape[dim:])
            out = {k: [[x for i, x in enumerate(v) if i != dim] for v in vs] for k, vs in pb.items()}
            out["register"] = [v for v in out["register"] if any(v)]
            return out
        return amd_bases(self.attribute, self.params, shape)

    def layout(self, shape: Sequence[int]) -> Any:
        """The layoutalg layout on ``shape``: a TV layout ``((lane, warp, block), register) -> d0 + D0*d1 + ...``
        (distributed) or ``(d0, d1, ...) -> element offset`` (shared); see :func:`~layoutalg.interop.gluon.from_gluon`."""
        if self.memory == "tensor memory":
            raise LayoutError(f"{self.name}: a tensor-memory encoding has bases (row, col -> coordinate), no layoutalg layout")
        if self.amd is not None:
            from ..linear import from_linear

            return self._cached("layout", shape, lambda: from_linear(self.bases(shape), shape=[int(s) for s in shape]))
        return self._cached("layout", shape, lambda: from_gluon(self.gluon_for(shape), shape))

    def _tmem(self, shape: Sequence[int]) -> dict[str, list[list[int]]]:
        p = self.params
        split = (int(p.get("CTASplitM", 1)), int(p.get("CTASplitN", 1)))
        if self.attribute == "ttng.tensor_memory_scales_encoding":
            f2 = tmem_scales_linear_layout(shape, split)
        else:
            f2 = tmem_linear_layout(shape, (int(p["blockM"]), int(p["blockN"])), int(p.get("colStride", 1)), split)
        b = f2.to_triton()
        return {k: [list(v) for v in vs] for k, vs in b.items()}

    def __str__(self) -> str:
        what = self.gluon.source if self.gluon is not None else self.text
        return f"{self.name} = {what}" if self.alias else what


def _fill_linear(g: GluonLayout, shape: list[int]) -> GluonLayout:
    """``g`` with every ``#ttg.linear`` in it (itself, or the parent of a slice) fitted to its tensor's shape."""
    if g.kind == "DistributedLinearLayout" and not g["shape"]:
        return make_gluon(g.kind, _linear_on(dict(g.params), shape))
    if g.kind == "SliceLayout":
        dim = int(g["dim"])
        parent = _fill_linear(g["parent"], shape[:dim] + [1] + shape[dim:])
        if parent is not g["parent"]:
            return make_gluon(g.kind, {**dict(g.params), "parent": parent})
    return g


def _linear_on(params: dict[str, Any], shape: list[int]) -> dict[str, Any]:
    """A ``#ttg.linear`` layout on a tensor of ``shape``, as Triton's ``LinearEncodingAttr::toLinearLayout``
    fits it: where the bases reach past an extent, the largest ones go first -- a register basis is dropped
    (the registers broadcast), a lane / warp / block basis becomes 0 in that dimension -- until the layout
    fits (``ensureLayoutNotLargerThan``); where the tensor is larger, registers repeat the layout
    (``ensureLayoutNotSmallerThan``)."""
    fields = ("reg_bases", "lane_bases", "warp_bases", "block_bases")
    bases = {f: [list(b) for b in params[f]] for f in fields}
    rank = len(shape)
    for f in fields:
        for b in bases[f]:
            if len(b) != rank:
                raise LayoutError(f"#ttg.linear: {f} entry {b} has {len(b)} entries for a tensor of shape {shape}")
    dropped: set[int] = set()
    for d in range(rank):
        size = 1
        for f in fields:
            for b in bases[f]:
                size = max(size, 2 * b[d]) if b[d] > 0 else size
        if size <= shape[d]:
            continue
        order = sorted(((b[d], fi, i) for fi, f in enumerate(fields) for i, b in enumerate(bases[f]) if b[d] > 0),
                       key=lambda x: -x[0])
        for _value, fi, i in order:
            if size <= shape[d]:
                break
            if fields[fi] == "reg_bases":
                dropped.add(i)
            else:
                bases[fields[fi]][i][d] = 0
            size >>= 1
    bases["reg_bases"] = [b for i, b in enumerate(bases["reg_bases"]) if i not in dropped]
    for d in range(rank):  # a tensor larger than the layout: registers repeat it
        size = 1
        for f in fields:
            for b in bases[f]:
                size = max(size, 2 * b[d]) if b[d] > 0 else size
        while size < shape[d]:
            v = [0] * rank
            v[d] = size
            bases["reg_bases"].append(v)
            size *= 2
    return {**params, **bases, "shape": list(shape)}


def _rotating_bases(p: dict[str, Any], shape: list[int]) -> list[list[int]]:
    """``#ttg.amd_rotating_shared<{vec, perPhase, maxPhase, order}>`` on ``shape`` as offset -> coordinate bases (Triton's
    ``sharedToLinearLayoutAMDRotating`` restated): a swizzled layout whose phase of row ``r``, ``(r / perPhase) %
    maxPhase``, is XORed with its block of ``perPhase * maxPhase`` rows, ``r / (perPhase * maxPhase) % maxPhase``."""
    vec, per, mx = int(p["vec"]), int(p["perPhase"]), int(p["maxPhase"])
    order = [int(x) for x in p["order"]]
    rank = len(shape)
    if len(order) != rank or rank < 2:
        raise LayoutError(f"#ttg.amd_rotating_shared: order {order} for a tensor of rank {rank} (rank 2 or more read)")
    col_dim, row_dim = order[0], order[1]
    cols, rows = shape[col_dim], shape[row_dim]
    out = []

    def vec_at(row: int, col: int) -> list[int]:
        v = [0] * rank
        v[row_dim], v[col_dim] = row, col
        return v

    c = 1
    while c < cols:
        out.append(vec_at(0, c))
        c *= 2
    r = 1
    while r < rows:
        phase = (r // per) % mx
        block = r // mx // per % mx
        out.append(vec_at(r, (vec * (phase ^ block)) % cols))
        r *= 2
    for d in order[2:]:
        e = 1
        while e < shape[d]:
            v = [0] * rank
            v[d] = e
            out.append(v)
            e *= 2
    return out


def _identity_bases(order: Sequence[int], shape: Sequence[int]) -> list[list[int]]:
    out = []
    for d in order:
        for i in range(int(shape[d]).bit_length() - 1):
            v = [0] * len(shape)
            v[d] = 1 << i
            out.append(v)
    return out


def _ints(v: Any, attr: Attr, key: str) -> list:
    if not isinstance(v, list):
        raise LayoutError(f"line {attr.line}, column {attr.col}: {attr.name}.{key} = {v!r} is not a list")
    return v


def _cga(attr: Attr) -> list:
    p = attr.params
    for k in ("CTAsPerCGA", "CTASplitNum", "CTAOrder"):
        if k in p and any(int(x) != 1 for x in p[k]) and k != "CTAOrder":
            raise LayoutError(f"line {attr.line}, column {attr.col}: {attr.name} split over several CTAs ({k}) is not read yet")
    return list(p.get("CGALayout", p.get("cga_layout", [])))


def _need(attr: Attr, *keys: str) -> list:
    missing = [k for k in keys if k not in attr.params]
    if missing:
        raise LayoutError(f"line {attr.line}, column {attr.col}: {attr.name} lacks {', '.join(missing)}")
    return [attr.params[k] for k in keys]


def _parent(v: Any, attr: Attr, key: str, read: Callable[[Attr], KernelLayout]) -> GluonLayout:
    if not isinstance(v, Attr):
        raise LayoutError(f"line {attr.line}, column {attr.col}: {attr.name}.{key} is not a layout attribute")
    g = read(v).gluon
    if g is None:
        raise LayoutError(f"line {attr.line}, column {attr.col}: {attr.name}'s {key} {v.name} is not read yet")
    return g


def _blocked(a: Attr, r: Any) -> GluonLayout:
    spt, tpw, wpc, order = _need(a, "sizePerThread", "threadsPerWarp", "warpsPerCTA", "order")
    return make_gluon("BlockedLayout", {"size_per_thread": spt, "threads_per_warp": tpw, "warps_per_cta": wpc,
                                        "order": order, "cga_layout": _cga(a)})


def _amd_parent(a: Attr) -> bool:
    p = a.params.get("parent")
    while isinstance(p, Attr) and p.name in ("ttg.slice", "ttg.dot_op"):
        p = p.params.get("parent")
    return isinstance(p, Attr) and p.name.startswith("ttg.amd_")


def _slice(a: Attr, r: Any) -> GluonLayout | None:
    dim, parent = _need(a, "dim", "parent")
    if _amd_parent(a):
        return None
    return make_gluon("SliceLayout", {"dim": dim, "parent": _parent(parent, a, "parent", r)})


def _dot_op(a: Attr, r: Any) -> GluonLayout | None:
    idx, parent = _need(a, "opIdx", "parent")
    if _amd_parent(a):
        _need(a, "kWidth")
        return None
    k_width = a.params.get("kWidth")
    if k_width is None:
        raise LayoutError(f"line {a.line}, column {a.col}: ttg.dot_op without kWidth is not read (Gluon needs it)")
    return make_gluon("DotOperandLayout", {"operand_index": idx, "parent": _parent(parent, a, "parent", r),
                                           "k_width": k_width})


def _nvidia_mma(a: Attr, r: Any) -> GluonLayout:
    major, minor, wpc, instr = _need(a, "versionMajor", "versionMinor", "warpsPerCTA", "instrShape")
    return make_gluon("NVMMADistributedLayout", {"version": [major, minor], "warps_per_cta": wpc,
                                                 "instr_shape": instr, "cga_layout": _cga(a)})


def _linear(a: Attr, r: Any) -> GluonLayout:
    reg, lane, warp = _need(a, "register", "lane", "warp")
    return make_gluon("DistributedLinearLayout", {"reg_bases": reg, "lane_bases": lane, "warp_bases": warp,
                                                  "block_bases": a.params.get("block", []), "shape": []})


def _nvmma_shared(a: Attr, r: Any) -> GluonLayout:
    sw, bits = _need(a, "swizzlingByteWidth", "elementBitWidth")
    return make_gluon("NVMMASharedLayout", {"swizzle_byte_width": sw, "element_bitwidth": bits,
                                            "transposed": bool(a.params.get("transposed", False)),
                                            "fp4_padded": bool(a.params.get("fp4Padded", False)),
                                            "cga_layout": _cga(a)})


def _swizzled_shared(a: Attr, r: Any) -> GluonLayout:
    vec, pp, mp, order = _need(a, "vec", "perPhase", "maxPhase", "order")
    return make_gluon("SwizzledSharedLayout", {"vec": vec, "per_phase": pp, "max_phase": mp, "order": order,
                                               "cga_layout": _cga(a)})


def _padded_shared(a: Attr, r: Any) -> GluonLayout:
    (pairs,) = _need(a, "intervals")
    offsets = a.params.get("offset", [])
    if not offsets and "order" not in a.params:
        raise LayoutError(f"line {a.line}, column {a.col}: ttg.padded_shared needs offset = [...] or order = [...]")
    return make_gluon("PaddedSharedLayout", {"interval_padding_pairs": pairs, "offset_bases": offsets,
                                             "block_bases": a.params.get("block", []),
                                             "shape": a.params.get("shape", [])})


def _shared_linear(a: Attr, r: Any) -> GluonLayout:
    (offsets,) = _need(a, "offset")
    return make_gluon("SharedLinearLayout", {"offset_bases": offsets, "block_bases": a.params.get("block", []),
                                             "alignment": a.params.get("alignment", 16)})


_READERS: dict[str, tuple[str, Callable[[Attr, Any], GluonLayout | None] | None]] = {
    "ttg.blocked": ("registers", _blocked),
    "ttg.slice": ("registers", _slice),
    "ttg.dot_op": ("registers", _dot_op),
    "ttg.nvidia_mma": ("registers", _nvidia_mma),
    "ttg.linear": ("registers", _linear),
    "ttg.nvmma_shared": ("shared", _nvmma_shared),
    "ttg.swizzled_shared": ("shared", _swizzled_shared),
    "ttg.padded_shared": ("shared", _padded_shared),
    "ttg.shared_linear": ("shared", _shared_linear),
    "ttng.tensor_memory_encoding": ("tensor memory", None),
    "ttng.tensor_memory_scales_encoding": ("tensor memory", None),
    "ttg.amd_mfma": ("registers", None),
    "ttg.amd_wmma": ("registers", None),
    "ttg.amd_rotating_shared": ("shared", None),
}
#: the layout attributes read, by dialect name
LAYOUT_ATTRIBUTES = tuple(_READERS)


def read_layout(attr: Attr, alias: str | None = None) -> KernelLayout:
    """The :class:`KernelLayout` of a parsed layout attribute (aliases already resolved: a parent given as
    ``#blocked`` must have been replaced by its attribute). LayoutError, naming the line and column, for
    an attribute that is no layout or lacks a field.

    >>> from layoutalg.kernel.mlir import parse_attribute
    >>> read_layout(parse_attribute("#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>")).gluon.source
    'gl.SwizzledSharedLayout(vec=8, per_phase=1, max_phase=8, order=[1, 0])'
    """
    if not isinstance(attr, Attr):
        raise LayoutError(f"{attr!r} is not a layout attribute")
    if attr.name not in _READERS:
        raise LayoutError(f"line {attr.line}, column {attr.col}: unknown layout attribute #{attr.name} "
                          f"(read: {', '.join('#' + n for n in LAYOUT_ATTRIBUTES)})")
    for k, v in attr.params.items():
        if isinstance(v, AliasRef):
            raise LayoutError(f"line {attr.line}, column {attr.col}: #{attr.name}.{k} refers to #{v.name}, never defined")
    memory, reader = _READERS[attr.name]
    g = reader(attr, read_layout) if reader is not None else None
    params = dict(attr.params)
    if attr.name in ("ttg.dot_op", "ttg.slice") and isinstance(params.get("parent"), Attr):
        params["parent"] = read_layout(params["parent"])
    return KernelLayout(attr.name, attr.text, g, params, alias, memory, attr.line, attr.col)
