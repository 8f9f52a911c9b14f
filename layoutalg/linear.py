"""F2-linear layouts: a layout given by the images of its input bits, as Triton's LinearLayout.

A map f from n-bit inputs to offsets is *linear over F2* when it sends XOR to XOR:
``f(a ^ b) = f(a) ^ f(b)``. Then f is fixed by its values on single bits, the *basis*
``f(1), f(2), f(4), ...``, and ``f(x)`` is the XOR of the basis vectors of x's set bits.
Triton's ``LinearLayout`` stores exactly that: for each input dimension, one output vector
per input bit.

Worked by hand: ``L = (2,4):(4,1)`` (a 2x4 row-major tile). Its 1-D input has 3 bits; bit 0
moves along the first mode (stride 4), bits 1 and 2 along the second (strides 1, 2), so the
bases are ``[4], [1], [2]``. Check ``L(5) = L(1, 2) = 4 + 2 = 6`` against ``4 ^ 2 = 6``::

    >>> from layoutalg.layout import Layout
    >>> lin = to_linear(Layout((2, 4), (4, 1)))
    >>> lin.as_dict()
    {'dim0': [[4]], 'dim1': [[1], [2]]}
    >>> lin.flat_bases(), lin(1, 2)
    ((4, 1, 2), (6,))
    >>> from_linear(lin)
    Layout((2, 4), (4, 1))

Triton's conventions (``shape=``): a TV layout ``(thread, value) -> d0 + D0*d1 + ...`` gives
Triton's distributed bases, in-dims ``register`` (the value mode), ``lane`` (thread bits 0-4),
``warp``, ``block``, each basis ``[d0, d1, ...]``; a shared layout ``(d0, d1, ...) -> offset``
gives Triton's ``offset -> [d0, d1, ...]`` bases (the inverse map). These are the lists
``DistributedLinearLayout`` / ``SharedLinearLayout`` take, in Triton's order::

    >>> tv = Layout(((4, 8), (2, 2)), ((32, 1), (16, 8)))     # the m16n8 accumulator
    >>> to_linear(tv, shape=(16, 8)).as_dict()["lane"]
    [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]]
    >>> from_linear(to_linear(tv, shape=(16, 8)), shape=(16, 8))
    Layout((((4, 8), 1, 1), (2, 2)), (((32, 1), 0, 0), (16, 8)))

When is a layout F2-linear? Every shape leaf must be a power of two and the integer sum of the
basis vectors must equal their XOR: the non-zero bases must use pairwise disjoint bits. A
swizzle ``Sw<B,M,S>`` is always F2-linear, so ``Sw o _0 o L`` is linear whenever L is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from collections.abc import Iterable

import numpy as np

from .composed import ComposedLayout
from .errors import LayoutError, guarded
from .hooks import provide
from .inttuple import flatten
from .layout import Layout
from .swizzle import Swizzle

__all__ = ["LinearLayout", "to_linear", "from_linear", "is_f2_linear", "invert_f2"]


@dataclass(frozen=True)
class LinearLayout:
    """An F2-linear map: ``bases[d][j]`` is the output vector for bit j of input dimension d.

    Invariant: ``bases`` is a tuple of ``(in_dim_name, vectors)`` in input order, each vector a
    tuple with one int per output dimension; ``out_dims`` is a tuple of ``(name, size)`` with
    each size a power of two above every basis component. The value at inputs ``(x_d)`` is the
    XOR, over set bits j of each x_d, of ``bases[d][j]``.
    """

    bases: tuple[tuple[str, tuple[tuple[int, ...], ...]], ...]
    out_dims: tuple[tuple[str, int], ...] = (("offset", 1),)

    @property
    def in_dims(self) -> dict[str, int]:
        """Input dimension sizes: 2**(number of bits) each."""
        return {name: 1 << len(vecs) for name, vecs in self.bases}

    def as_dict(self) -> dict[str, list[list[int]]]:
        """Triton's format: ``{in_dim: [[out components of bit 0], [.. of bit 1], ...]}``."""
        return {name: [list(v) for v in vecs] for name, vecs in self.bases}

    def flat_bases(self) -> tuple[int, ...]:
        """All bases in input-bit order (first output component): the map on the 1-D index."""
        return tuple(v[0] for _, vecs in self.bases for v in vecs)

    def __call__(self, *inputs: Any) -> tuple:
        """The outputs at one input value per input dimension (ints or numpy arrays)."""
        if len(inputs) != len(self.bases):
            raise LayoutError(f"LinearLayout: {len(inputs)} inputs given, {len(self.bases)} dimensions exist")
        n_out = len(self.out_dims)
        outs: list[Any] = [0] * n_out
        for x, (_name, vecs) in zip(inputs, self.bases):
            arr = isinstance(x, np.ndarray)
            for j, v in enumerate(vecs):
                bit = (x >> j) & 1
                for o in range(n_out):
                    if v[o]:
                        outs[o] = outs[o] ^ (bit * v[o]) if arr else outs[o] ^ (v[o] if bit else 0)
        return tuple(outs)

    def __str__(self) -> str:
        return f"LinearLayout({self.as_dict()}, out={dict(self.out_dims)})"


def _bits_of_layout(L: Layout, op: str) -> list[list[int]]:
    """Per top-level mode, the image of each input bit under the integer layout L."""
    if not L.is_static:
        raise LayoutError(f"{op}: layout {L} has symbolic entries; substitute values first")
    modes = [L] if type(L.shape) is not tuple else [L[i] for i in range(len(L))]
    out = []
    for mode in modes:
        vecs: list[int] = []
        for s, d in zip(flatten(mode.shape), flatten(mode.stride)):
            if s & (s - 1):
                raise LayoutError(f"{op}: shape leaf {s} of {L} is not a power of two; not F2-linear")
            if d < 0:
                raise LayoutError(f"{op}: stride {d} of {L} is negative; not F2-linear")
            vecs.extend(d << j for j in range(s.bit_length() - 1))
        out.append(vecs)
    return out


def _check_disjoint(vecs: Iterable[int], what: Any, op: str) -> None:
    seen = 0
    for v in vecs:
        if v & seen:
            raise LayoutError(
                f"{op}: {what} is not F2-linear: basis image {v} shares bits with others "
                "(the integer sum of input bits is not their XOR)"
            )
        seen |= v


def _bases_of(f: Any, op: str) -> list[list[int]]:
    if isinstance(f, Layout):
        per_mode = _bits_of_layout(f, op)
        _check_disjoint([v for m in per_mode for v in m], f, op)
        return per_mode
    if isinstance(f, ComposedLayout):
        if f.offset != 0:
            raise LayoutError(f"{op}: {f} has offset {f.offset}; an offset makes the map affine, not linear")
        inner = _bases_of(f.inner, op)
        outer = f.outer
        if isinstance(outer, Swizzle):
            return [[outer(v) for v in m] for m in inner]
        outer_b = [v for m in _bases_of(outer, op) for v in m]
        size_outer = 1 << len(outer_b)
        reach = 0
        for m in inner:
            for v in m:
                reach |= v
        if reach >= size_outer:
            raise LayoutError(f"{op}: inner values of {f} leave the domain of its outer layout")

        def through(v: int) -> int:
            r = 0
            for j, b in enumerate(outer_b):
                if (v >> j) & 1:
                    r ^= b
            return r

        return [[through(v) for v in m] for m in inner]
    raise LayoutError(f"{op}: {f!r} is not a Layout or ComposedLayout")


def to_linear(L: Any, in_dims: Iterable[str] | None = None, out_dim: str = "offset", *,
              shape: Iterable[int] | None = None, kind: str | None = None) -> LinearLayout:
    """to_linear(L) -> the F2 basis of L: bases[mode i][j] = L(bit j of mode i's coordinate).

    One input dimension per top-level mode (named ``dim0, dim1, ...`` unless ``in_dims`` gives
    names) and one output dimension. Preconditions: L static, every shape leaf a power of two,
    non-negative strides whose bit images are disjoint, zero offsets (LayoutError otherwise).

    With ``shape`` (a tensor shape), Triton's convention instead (see the module doc):
    ``kind="distributed"`` (default for a rank-2 L whose modes are not ``shape``) gives in-dims
    ``register, lane, warp, block`` and out-dims ``dim0, dim1, ...``; ``kind="shared"`` gives
    in-dim ``offset`` (the inverse of L). Any F2-linear L is accepted there, swizzled or not.

    >>> from layoutalg.composed import parse_composed
    >>> to_linear(parse_composed("Sw<1,1,1> o 8:1")).flat_bases()
    (1, 2, 6)
    """
    if shape is not None:
        return _triton_linear(L, [int(x) for x in shape], kind)
    per_mode = _bases_of(L, "to_linear")
    names = list(in_dims) if in_dims is not None else [f"dim{i}" for i in range(len(per_mode))]
    if len(names) != len(per_mode):
        raise LayoutError(f"to_linear: {len(names)} names given for the {len(per_mode)} modes of {L}")
    reach = 0
    for m in per_mode:
        for v in m:
            reach |= v
    out_size = 1 << reach.bit_length()
    bases = tuple((n, tuple((v,) for v in m)) for n, m in zip(names, per_mode))
    return LinearLayout(bases, ((out_dim, out_size),))


def is_f2_linear(L: Any) -> bool:
    """True iff :func:`to_linear` accepts L."""
    try:
        to_linear(L)
        return True
    except LayoutError:
        return False


def mode_layout(vecs: list[int]) -> Layout:
    """The coalesced 1-mode layout with bit images ``vecs`` (pairwise disjoint)."""
    leaves: list[list[int]] = []
    for v in vecs:
        if leaves and leaves[-1][1] * leaves[-1][0] == v and leaves[-1][1] != 0 or leaves and leaves[-1][1] == 0 and v == 0:
            leaves[-1][0] *= 2
        else:
            leaves.append([2, v])
    if not leaves:
        return Layout(1, 0)
    if len(leaves) == 1:
        return Layout(leaves[0][0], leaves[0][1])
    return Layout(tuple(s for s, _ in leaves), tuple(d for _, d in leaves))


def _disjoint(vecs: Iterable[int]) -> bool:
    seen = 0
    for v in vecs:
        if v & seen:
            return False
        seen |= v
    return True


def _find_swizzle(flat: list[int]) -> Swizzle | None:
    nbits = max((v.bit_length() for v in flat), default=0)
    for b in range(1, nbits + 1):
        for s_abs in range(b, nbits + 1):
            for s in (s_abs, -s_abs):
                for m in range(0, nbits):
                    sw = Swizzle(b, m, s)
                    if sw.yyy_mask >= (1 << nbits) or sw.zzz_mask >= (1 << nbits):
                        continue
                    if _disjoint(sw(v) for v in flat):
                        return sw
    return None


@guarded
def from_linear(lin: Any, *, shape: Iterable[int] | None = None) -> Any:
    """from_linear(bases) -> a Layout, or ``Sw<B,M,S> o _0 o Layout``, with those bit images.

    With ``shape``, ``lin`` is in Triton's convention (multi-component bases): in-dims
    ``register/lane/warp/block`` give the TV layout ``((lane, warp, block), register) -> d0 +
    D0*d1 + ...``; in-dim ``offset`` gives the shared layout ``(d0, d1, ...) -> offset``.

    ``lin`` is a :class:`LinearLayout` or Triton's dict ``{in_dim: [[v], ...]}`` with one
    output dimension. One mode per input dimension, coalesced. A Layout needs pairwise
    disjoint images; otherwise a single swizzle is searched whose application makes them
    disjoint. LayoutError when neither exists.

    >>> from_linear({"dim0": [[1], [2], [6]]})
    Sw<1,1,1> o _0 o 8:1
    >>> from_linear({"row": [[1], [2]], "col": [[4], [8]]})
    Layout((4, 4), (1, 4))
    """
    if shape is not None:
        return _from_triton(lin, [int(x) for x in shape])
    if isinstance(lin, LinearLayout):
        if len(lin.out_dims) != 1:
            raise LayoutError(f"from_linear: {lin} has {len(lin.out_dims)} output dimensions; a layout has one")
        per_mode = [[v[0] for v in vecs] for _, vecs in lin.bases]
    elif isinstance(lin, dict):
        per_mode = []
        for name, vecs in lin.items():
            mode = []
            for v in vecs:
                v = list(v) if isinstance(v, (list, tuple)) else [v]
                if len(v) != 1:
                    raise LayoutError(f"from_linear: basis {v} of {name!r} has {len(v)} outputs; a layout has one")
                if not isinstance(v[0], (int, np.integer)) or v[0] < 0:
                    raise LayoutError(f"from_linear: basis {v} of {name!r} must be a non-negative integer")
                mode.append(int(v[0]))
            per_mode.append(mode)
    else:
        raise LayoutError(f"from_linear: {lin!r} is not a LinearLayout or a dict of bases")
    flat = [v for m in per_mode for v in m]

    def build(modes: list[list[int]]) -> Layout:
        layouts = [mode_layout(m) for m in modes]
        if len(layouts) == 1:
            return layouts[0]
        return Layout(tuple(x.shape for x in layouts), tuple(x.stride for x in layouts))

    if _disjoint(flat):
        return build(per_mode)
    sw = _find_swizzle(flat)
    if sw is None:
        raise LayoutError(
            f"from_linear: bases {per_mode} are neither disjoint (a layout) nor made disjoint by one swizzle"
        )
    return ComposedLayout(sw, 0, build([[sw(v) for v in m] for m in per_mode]))


# --- Triton's conventions -------------------------------------------------------------------
def flat_index(v: Iterable[int], shape: list[int]) -> int:
    """Column-major index v[0] + shape[0]*v[1] + ... of a coordinate."""
    x, m = 0, 1
    for c, s in zip(v, shape):
        x += int(c) * m
        m *= s
    return x


def unflat_index(x: int, shape: list[int]) -> list[int]:
    """The coordinate of the column-major index ``x`` in ``shape`` (the inverse of :func:`flat_index`)."""
    out = []
    for s in shape:
        out.append(x % s)
        x //= s
    return out


def invert_f2(images: list[int], op: str = "invert_f2") -> list[int]:
    """The preimage of each output bit of a bijective F2-linear map given by ``images[j]`` = f(1 << j).

    >>> invert_f2([1, 2, 6])          # f swaps nothing but XORs bit 1 into bit 2's image
    [1, 2, 6]
    """
    if not isinstance(images, (list, tuple)) or any(isinstance(x, bool) or not isinstance(x, int) or x < 0
                                                     for x in images):
        raise LayoutError(f"{op}: the images are a list of non-negative ints (bit masks), got {images!r}")
    n = len(images)
    rows: dict[int, tuple[int, int]] = {}
    for j, img in enumerate(images):
        pre = 1 << j
        for bit in sorted(rows, reverse=True):
            if img >> bit & 1:
                img ^= rows[bit][0]
                pre ^= rows[bit][1]
        if img == 0:
            raise LayoutError(f"{op}: the map is not injective (images {images})")
        rows[img.bit_length() - 1] = (img, pre)
    if sorted(rows) != list(range(n)):
        raise LayoutError(f"{op}: the images {images} do not cover [0, {1 << n})")
    for bit in sorted(rows):  # reduce every row to a single output bit
        img, pre = rows[bit]
        for low in range(bit):
            if img >> low & 1:
                img ^= rows[low][0]
                pre ^= rows[low][1]
        rows[bit] = (img, pre)
    return [rows[b][1] for b in range(n)]


def _check_pow2(shape: list[int], op: str) -> None:
    for s in shape:
        if s < 1 or s & (s - 1):
            raise LayoutError(f"{op}: shape {shape} has an entry that is not a power of two")


def _triton_linear(L: Any, shape: list[int], kind: str | None) -> LinearLayout:
    op = "to_linear"
    _check_pow2(shape, op)
    table = np.asarray(L.table(), dtype=np.int64)
    total = int(np.prod(shape))
    if kind is None:
        sizes = [int(L[i].size()) for i in range(L.rank())] if isinstance(L, Layout) or hasattr(L, "inner") else []
        kind = "shared" if sizes == shape or (len(shape) == 1 and len(table) == total and L.rank() == 1) else "distributed"
    nbits = len(table).bit_length() - 1
    if len(table) != 1 << nbits:
        raise LayoutError(f"{op}: {L} has {len(table)} coordinates, not a power of two")
    images = [int(table[1 << j]) for j in range(nbits)]
    # acc[i] = XOR of images over i's set bits, built by doubling: acc[2^j + i] = acc[i] ^ images[j]
    acc = np.zeros(1, dtype=np.int64)
    for v in images:
        acc = np.concatenate([acc, acc ^ v])
    if not np.array_equal(acc, table):
        raise LayoutError(f"{op}: {L} is not F2-linear (some value is not the XOR of its bits' images)")
    names = [f"dim{i}" for i in range(len(shape))]
    outs = tuple(zip(names, shape))
    if kind == "shared":
        if len(table) != total:
            raise LayoutError(f"{op}: {L} has {len(table)} coordinates; the {shape} tensor has {total}")
        pre = invert_f2(images, op)
        return LinearLayout((("offset", tuple(tuple(unflat_index(p, shape)) for p in pre)),), outs)
    if kind != "distributed":
        raise LayoutError(f"{op}: kind={kind!r} is not 'distributed' or 'shared'")
    if L.rank() != 2:
        raise LayoutError(f"{op}: a distributed layout is a rank-2 TV layout (thread, value); {L} has rank {L.rank()}")
    if table.max() >= total:
        raise LayoutError(f"{op}: {L} reaches element {int(table.max())}, outside the {shape} tensor")
    T = int(L[0].size())
    tb = T.bit_length() - 1
    thr = L[0].shape if isinstance(L, Layout) else L.inner[0].shape
    if isinstance(thr, tuple) and len(thr) == 3 and int(np.prod(flatten(thr[0]))) == 32:
        wb = int(np.prod(flatten(thr[1]))).bit_length() - 1
    else:
        wb = max(tb - 5, 0)
    vecs = [tuple(unflat_index(v, shape)) for v in images]
    lb = min(5, tb)
    return LinearLayout((("register", tuple(vecs[tb:])), ("lane", tuple(vecs[:lb])), ("warp", tuple(vecs[lb:lb + wb])),
                         ("block", tuple(vecs[lb + wb:tb]))), outs)


def _from_triton(lin: Any, shape: list[int]) -> Any:
    op = "from_linear"
    _check_pow2(shape, op)
    bases = lin.as_dict() if isinstance(lin, LinearLayout) else dict(lin)
    for k, vs in bases.items():
        for v in vs:
            if len(v) != len(shape):
                raise LayoutError(f"from_linear: basis {list(v)} of {k!r} has {len(v)} components for shape {shape}")
    if set(bases) <= {"offset", "block"} and "offset" in bases:
        if bases.get("block"):
            raise LayoutError(f"{op}: shared bases over several CTAs (block) are not supported")
        pre = invert_f2([flat_index(v, shape) for v in bases["offset"]], op)
        per_dim, k = [], 0
        for s in shape:
            n = s.bit_length() - 1
            per_dim.append([[o] for o in pre[k:k + n]])
            k += n
        return from_linear({f"dim{i}": d for i, d in enumerate(per_dim)})
    if not set(bases) <= {"register", "lane", "warp", "block"}:
        raise LayoutError(f"{op}: in-dims {sorted(bases)} are neither Triton's distributed (register, lane, warp, "
                          "block) nor shared (offset) ones")
    levels = {k: [flat_index(v, shape) for v in bases.get(k, [])] for k in ("register", "lane", "warp", "block")}
    flat = [v for vs in levels.values() for v in vs if v]

    def build(f: Any) -> Layout:
        thr = [mode_layout([f(v) for v in levels[k]]) for k in ("lane", "warp", "block")]
        val = mode_layout([f(v) for v in levels["register"]])
        return Layout((tuple(t.shape for t in thr), val.shape), (tuple(t.stride for t in thr), val.stride))

    if _disjoint(flat):
        return build(lambda v: v)
    sw = _find_swizzle(flat)
    if sw is None:
        raise LayoutError(f"{op}: bases {bases} overlap and no single swizzle separates them: not a CuTe layout")
    return ComposedLayout(sw, 0, build(sw))


def _simplify_f2(C: ComposedLayout) -> Any:
    """A static composed layout in the simplest form from_linear finds (LayoutError if not F2-linear)."""
    return from_linear(to_linear(C))


provide("simplify_f2", _simplify_f2)
