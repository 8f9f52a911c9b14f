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

When is a layout F2-linear? Every shape leaf must be a power of two and the integer sum of the
basis vectors must equal their XOR: the non-zero bases must use pairwise disjoint bits. A
swizzle ``Sw<B,M,S>`` is always F2-linear, so ``Sw o _0 o L`` is linear whenever L is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from collections.abc import Iterable

import numpy as np

from layoutalg.errors import LayoutError
from layoutalg.inttuple import flatten
from layoutalg.layout import Layout
from layoutalg.swizzle import Swizzle

__all__ = ["LinearLayout", "to_linear", "from_linear", "is_f2_linear"]


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
    from layoutalg.composed import ComposedLayout

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


def to_linear(L: Any, in_dims: Iterable[str] | None = None, out_dim: str = "offset") -> LinearLayout:
    """to_linear(L) -> the F2 basis of L: bases[mode i][j] = L(bit j of mode i's coordinate).

    One input dimension per top-level mode (named ``dim0, dim1, ...`` unless ``in_dims`` gives
    names) and one output dimension. Preconditions: L static, every shape leaf a power of two,
    non-negative strides whose bit images are disjoint, zero offsets (LayoutError otherwise).

    >>> from layoutalg.composed import parse_composed
    >>> to_linear(parse_composed("Sw<1,1,1> o 8:1")).flat_bases()
    (1, 2, 6)
    """
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


def _mode_layout(vecs: list[int]) -> Layout:
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


def from_linear(lin: Any) -> Any:
    """from_linear(bases) -> a Layout, or ``Sw<B,M,S> o _0 o Layout``, with those bit images.

    ``lin`` is a :class:`LinearLayout` or Triton's dict ``{in_dim: [[v], ...]}`` with one
    output dimension. One mode per input dimension, coalesced. A Layout needs pairwise
    disjoint images; otherwise a single swizzle is searched whose application makes them
    disjoint. LayoutError when neither exists.

    >>> from_linear({"dim0": [[1], [2], [6]]})
    Sw<1,1,1> o _0 o 8:1
    >>> from_linear({"row": [[1], [2]], "col": [[4], [8]]})
    Layout((4, 4), (1, 4))
    """
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
        layouts = [_mode_layout(m) for m in modes]
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
    from layoutalg.composed import ComposedLayout

    return ComposedLayout(sw, 0, build([[sw(v) for v in m] for m in per_mode]))
