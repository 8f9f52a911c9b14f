"""Triton's LinearLayout, the few operations its layout conversions use (``LinearLayout.h`` semantics, restated).

Shared by the readers of Gluon's layouts (:mod:`layoutalg.interop.gluon_layouts`,
:mod:`layoutalg.interop.gluon_amd`): :class:`TritonLL` (bases per input dimension, out dims with
sizes, Triton's product), ``identityStandardND`` (:func:`identity_nd`), ``combineCtaCgaWithShape``
(:func:`combine_cta_cga`) and ``broadcastedDotOperandLayout`` (:func:`broadcast_dot_operand`).

    >>> ll = TritonLL.identity(4, "register", "dim1") * TritonLL.identity(2, "lane", "dim0")
    >>> ll.bases, ll.outs
    ({'register': [(1, 0), (2, 0)], 'lane': [(0, 1)]}, [('dim1', 4), ('dim0', 2)])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

#: The class is this module's public face; its helpers (identity_nd, combine_cta_cga, broadcast_dot_operand,
#: dim_names) are for the Gluon readers, which give them checked arguments.
__all__ = ["TritonLL"]


class TritonLL:
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
    def identity(size: int, ind: str, outd: str) -> TritonLL:
        n = max(size, 1).bit_length() - 1
        return TritonLL({ind: [(1 << i,) for i in range(n)]}, [(outd, 1 << n)])

    @staticmethod
    def zeros(size: int, ind: str, outd: str) -> TritonLL:
        n = max(size, 1).bit_length() - 1
        return TritonLL({ind: [(0,)] * n}, [(outd, 1)])

    @staticmethod
    def from_bases(bases: Mapping[str, Sequence[Sequence[int]]], names: Sequence[str]) -> TritonLL:
        """Out sizes inferred as Triton does: the smallest power of two above every component."""
        vecs = {k: [tuple(int(c) for c in v) for v in vs] for k, vs in bases.items()}
        outs = []
        for i, n in enumerate(names):
            m = 0
            for vs in vecs.values():
                for v in vs:
                    m |= v[i]
            outs.append((n, 1 << m.bit_length() if m else 1))
        return TritonLL(vecs, outs)

    def out_names(self) -> list[str]:
        return [n for n, _ in self.outs]

    def size(self, name: str) -> int:
        for n, s in self.outs:
            if n == name:
                return s
        return 1

    def __mul__(self, other: TritonLL) -> TritonLL:
        a_sizes = dict(self.outs)
        b_sizes = dict(other.outs)
        names = [n for n, _ in self.outs] + [n for n, _ in other.outs if n not in a_sizes]
        outs = [(n, a_sizes.get(n, 1) * b_sizes.get(n, 1)) for n in names]
        ia = {n: i for i, (n, _) in enumerate(self.outs)}
        ib = {n: i for i, (n, _) in enumerate(other.outs)}
        # each output component: (index into the factor's vector or -1, scale)
        pick_a = [(ia.get(n, -1), 1) for n in names]
        pick_b = [(ib.get(n, -1), a_sizes.get(n, 1)) for n in names]

        def lift(vs: list[tuple[int, ...]], pick: list[tuple[int, int]]) -> list[tuple[int, ...]]:
            return [tuple(v[i] * s if i >= 0 else 0 for i, s in pick) for v in vs]

        bases: dict[str, list[tuple[int, ...]]] = {}
        for k in list(self.bases) + [k for k in other.bases if k not in self.bases]:
            bases[k] = lift(self.bases.get(k, []), pick_a) + lift(other.bases.get(k, []), pick_b)
        return TritonLL(bases, outs)

    def transpose_outs(self, names: Sequence[str]) -> TritonLL:
        idx = [self.out_names().index(n) for n in names]
        return TritonLL({k: [tuple(v[i] for i in idx) for v in vs] for k, vs in self.bases.items()},
                   [self.outs[i] for i in idx])

    def not_smaller(self, shape: dict[str, int]) -> TritonLL:
        """ensureLayoutNotSmallerThan: repeat along the first in-dim until each out dim reaches shape."""
        first = next(iter(self.bases))
        ret = self
        for n, s in self.outs:
            want = shape[n]
            if want > s:
                ret = ret * TritonLL.identity(want // s, first, n)
        return ret

    def not_larger(self, shape: dict[str, int]) -> TritonLL:
        """ensureLayoutNotLargerThan: the bases reaching past shape become 0 (broadcast)."""
        bases = {k: [list(v) for v in vs] for k, vs in self.bases.items()}
        for i, (n, s) in enumerate(self.outs):
            if s <= shape[n]:
                continue
            for vs in bases.values():
                for v in vs:
                    if v[i] >= shape[n]:
                        v[i] = 0
        return TritonLL.from_bases(bases, self.out_names())


def dim_names(rank: int) -> list[str]:
    return [f"dim{i}" for i in range(rank)]


def identity_nd(ind: str, sizes: Sequence[int], order: Sequence[int], names: Sequence[str]) -> TritonLL:
    """identityStandardND: identity along order[0] first; out dims in that order."""
    ll = TritonLL({ind: []}, [])
    for d in order:
        ll = ll * TritonLL.identity(sizes[d], ind, names[d])
    return ll


def combine_cta_cga(cta: TritonLL, cga: Sequence[Sequence[int]], shape: Sequence[int]) -> TritonLL:
    """combineCtaCgaWithShape: fit the CTA layout to shape / (CTA split), then the CGA's block bases."""
    names = dim_names(len(shape))
    want = dict(zip(names, shape))
    cgall = TritonLL.from_bases({"block": [tuple(b) for b in cga]}, names).not_larger(want)
    cgall = cgall.transpose_outs(cta.out_names())
    cta_shape = {n: max(1, want[n] // cgall.size(n)) for n in cta.out_names()}
    cta = cta.not_smaller(cta_shape).not_larger(cta_shape)
    return (cta * cgall).transpose_outs(names)


def broadcast_dot_operand(sizes: Sequence[int], order: Sequence[int], k_dim: int, ind: str) -> TritonLL:
    names = dim_names(len(sizes))
    ll = TritonLL({ind: []}, [])
    for d in order:
        ll = ll * (TritonLL.zeros(sizes[d], ind, names[d]) if d == k_dim else TritonLL.identity(sizes[d], ind, names[d]))
    return ll
