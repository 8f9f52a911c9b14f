"""Every algebra operation against its defining property, on the whole domain (issue 23).

Each test draws layouts from :mod:`strategies` (negative, zero and huge strides, size-1 modes,
the empty layout ``()`` and its nested spellings, scalars, deep nesting, swizzled and composed
layouts) and checks the operation's result against the operation's *definition* with an evaluator
written here, independent of the library's ``__call__``, ``table`` and ``idx2crd``. The rule: an
operation returns a result that satisfies its property, or raises :class:`LayoutError`; any other
exception fails the test.

Profiles: the default (CI) run is derandomized, about 500 examples per property; the
``exhaustive`` marker (deselected by default, ``pytest -m exhaustive``) runs 20x as many, random.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import any_layouts, composed_layouts, injective_layouts, tilers

import layoutalg as la
from layoutalg import ComposedLayout, Layout, LayoutError, Swizzle
from layoutalg.parse import parse

_CI = settings(deadline=None, derandomize=True, database=None, print_blob=True,
               suppress_health_check=list(HealthCheck))
_EXHAUSTIVE = settings(deadline=None, database=None, suppress_health_check=list(HealthCheck))


#: the share of each property's ``n`` the default (CI) run draws: ~10,000 derandomized examples in all (the
#: hypothesis draws cost more than the checks; the exhaustive tier keeps 20 n random ones per property)
CI_SHARE = 0.35


def prop(n: int, *strategies: Any) -> Callable:
    """Two tests of one property: ``CI_SHARE * n`` derandomized examples (CI) and ``20 n`` random ones (exhaustive)."""

    def deco(body: Callable) -> tuple[Callable, Callable]:
        ci = settings(_CI, max_examples=max(1, round(CI_SHARE * n)))(given(*strategies)(body))
        sweep = settings(_EXHAUSTIVE, max_examples=20 * n)(given(*strategies)(body))

        @pytest.mark.exhaustive
        def ex(request: pytest.FixtureRequest) -> None:
            # deselected by pyproject's addopts; a run with another -m (say -m "not slow") skips it too
            if "exhaustive" not in (request.config.option.markexpr or ""):
                pytest.skip("a large sweep: run it with -m exhaustive")
            sweep()

        ex.__doc__ = body.__doc__
        return ci, ex

    return deco


# ---------------------------------------------------------------------------------------------
# the independent evaluator
# ---------------------------------------------------------------------------------------------


def leaves(s: Any, d: Any) -> list[tuple[Any, Any]]:
    """The (shape, stride) leaf pairs of congruent s, d in order."""
    if type(s) is tuple:
        out: list = []
        for x, y in zip(s, d):
            out.extend(leaves(x, y))
        return out
    return [(s, d)]


@functools.lru_cache(maxsize=1 << 12)
def modes(L: Layout) -> list[tuple[int, int]]:
    """The (shape, stride) leaves of L (remembered per layout: ``ev`` reads them at every index; read only)."""
    return leaves(L.shape, L.stride)


def nelems(L: Any) -> int:
    if isinstance(L, ComposedLayout):
        return nelems(L.inner)
    return math.prod(s for s, _ in modes(L))


def ev(L: Any, i: int) -> int:
    """L at index ``i >= 0``: colexicographic coordinates, the last mode absorbing the overflow past size
    (CuTe's extension). A rank-0 layout maps every index to 0."""
    if isinstance(L, ComposedLayout):
        x = L.offset + ev(L.inner, i)
        return ev_outer(L.outer, x)
    assert i >= 0
    return _ev_modes(modes(L), i)


def _ev_modes(ms: list[tuple[Any, Any]], i: int) -> int:
    """``ev`` of the layout whose (shape, stride) leaves are ``ms``, at ``i >= 0``."""
    off = 0
    last = len(ms) - 1
    for k, (s, d) in enumerate(ms):
        if k == last:
            off += i * d
        else:
            off += (i % s) * d
            i //= s
    return off


def ev_outer(outer: Any, x: int) -> int:
    if isinstance(outer, Swizzle):
        return sw(outer, x)
    return ev_ext(outer, x)


def sw(s: Swizzle, x: int) -> int:
    """Swizzle<B,M,S>(x), from its definition (masks built here)."""
    if s.B == 0:
        return x
    mask = ((1 << s.B) - 1) << (s.M + max(0, s.S))
    y = x & mask
    return x ^ (y >> s.S if s.S >= 0 else y << -s.S)


def table(L: Any, n: int | None = None) -> list[int]:
    """``[ev(L, i) for i in range(n)]`` (n = the size by default), the leaves read once."""
    n = nelems(L) if n is None else n
    if isinstance(L, ComposedLayout):
        return [ev_outer(L.outer, L.offset + x) for x in table(L.inner, n)]
    ms = modes(L)
    return [_ev_modes(ms, i) for i in range(n)]


def ev_ext(A: Any, x: int) -> int:
    """A at any integer: past its size by CuTe's extension; below 0 as CuTe's C++ splits a negative
    index (truncating division), which makes every layout odd: ``A(-x) == -A(x)``."""
    if isinstance(A, ComposedLayout):  # the split applies to the inner layout
        return ev_outer(A.outer, A.offset + ev_ext(A.inner, x))
    return ev(A, x) if x >= 0 else -ev(A, -x)


def compatible(a: Any, b: Any) -> bool:
    """CuTe's compatible(a, b): b refines a (each leaf of a is a leaf or a tuple of equal size in b)."""
    if type(a) is tuple:
        return type(b) is tuple and len(a) == len(b) and all(compatible(x, y) for x, y in zip(a, b))
    return math.prod(s for s, _ in leaves(b, b)) == a


def attempt(f: Callable, *args: Any) -> Any:
    """f(*args), or None where it raises LayoutError. Any other exception propagates: a failure."""
    try:
        return f(*args)
    except LayoutError:
        return None


def is_compact_chain(ms: list[tuple[int, int]]) -> bool:
    """The layout with these modes is a bijection onto [0, product of sizes): sorted by stride the
    non-trivial modes go 1, s0, s0*s1, ... (exactly characterises it for any signs)."""
    body = sorted((d, s) for s, d in ms if s != 1)
    nxt = 1
    for d, s in body:
        if d != nxt:
            return False
        nxt = d * s
    return True


def flat_layout(ms: list[tuple[int, int]]) -> Layout:
    if not ms:
        return Layout(1, 0)
    return Layout(tuple(s for s, _ in ms), tuple(d for _, d in ms))


ENUM = 4096  # enumerate domains up to this size


# ---------------------------------------------------------------------------------------------
# coalesce, filter
# ---------------------------------------------------------------------------------------------


@prop(1500, any_layouts())
def _coalesce(L):
    R = attempt(la.coalesce, L)
    assert R is not None, f"coalesce refused {L}"
    assert nelems(R) == nelems(L)
    assert table(R) == table(L), (L, R)
    assert all(type(s) is not tuple for s in (R.shape if type(R.shape) is tuple else (R.shape,)))
    R2 = la.coalesce(R)
    assert table(R2) == table(R)
    if len(modes(L)) > 0:
        prof = tuple(1 for _ in range(len(L.shape))) if type(L.shape) is tuple else None
        if prof:
            Rp = attempt(la.coalesce, L, prof)
            if Rp is not None:
                assert table(Rp) == table(L) and len(Rp.shape) == len(L.shape), (L, Rp)


test_coalesce_same_function, test_coalesce_exhaustive = _coalesce


@prop(1500, any_layouts())
def _filter(L):
    R = attempt(la.filter, L)
    assert R is not None, f"filter refused {L}"
    # the definition: coalesce of L with its stride-0 modes made size 1
    kept = [(s, d) for s, d in modes(L) if d != 0]
    assert table(R) == table(flat_layout(kept)), (L, R)
    assert all(d != 0 for s, d in modes(R) if s != 1)


test_filter_same_function, test_filter_exhaustive = _filter


# ---------------------------------------------------------------------------------------------
# composition, with_shape
# ---------------------------------------------------------------------------------------------


def check_composition(A: Layout, B: Layout, R: Layout) -> None:
    assert compatible(B.shape, R.shape) or (modes(B) == [] and nelems(R) == 1), (A, B, R)
    assert nelems(R) == nelems(B)
    for i in range(nelems(B)):
        want = ev_ext(A, ev(B, i))
        assert ev(R, i) == want, f"composition({A}, {B}) = {R}: R({i}) = {ev(R, i)} != A(B({i})) = {want}"


@prop(2500, st.one_of(any_layouts(), injective_layouts()), tilers())
def _composition(A, B):
    R = attempt(la.composition, A, B)
    if R is not None:
        check_composition(A, B, R)


test_composition_is_A_after_B, test_composition_exhaustive = _composition


@prop(800, any_layouts(max_size=128), st.data())
def _composition_tilers(A, data):
    """A tuple tiler composes mode by mode (modes of A past it dropped); an int n is n:1; None is A."""
    if type(A.shape) is tuple and len(A.shape) > 0:
        k = data.draw(st.integers(1, len(A.shape)))
        T = tuple(data.draw(st.one_of(tilers(max_size=8), st.sampled_from([1, 2, 3, 4, None]))) for _ in range(k))
        R = attempt(la.composition, A, T)
        if R is not None:
            assert len(R.shape) == k, (A, T, R)
            for j, t in enumerate(T):
                Aj, Rj = mode(A, j), mode(R, j) if k > 1 or type(R.shape) is tuple else R
                if t is None:
                    assert same_function(Rj, Aj)
                else:
                    check_composition(Aj, t if isinstance(t, Layout) else Layout(t, 1), Rj)
    n = data.draw(st.sampled_from([1, 2, 3, 4, 8, 64]))
    R = attempt(la.composition, A, n)
    if R is not None:
        check_composition(A, Layout(n, 1), R)
    assert la.composition(A, None) is A


test_composition_with_tilers, test_composition_with_tilers_exhaustive = _composition_tilers


@prop(800, any_layouts(), st.sampled_from([(), 1, 2, 4, (2, 2), (4, (2, 3)), ((), 4), (1, (2,)), 8, (3, 4)]))
def _with_shape(L, S):
    R = attempt(la.with_shape, L, S)
    if R is not None:
        B = Layout(S)
        check_composition(L, B, R)


test_with_shape, test_with_shape_exhaustive = _with_shape


# ---------------------------------------------------------------------------------------------
# complement
# ---------------------------------------------------------------------------------------------

COTARGETS = st.sampled_from([1, 2, 3, 6, 8, 16, 24, 64, 100, 256, (2, 4), (4, 8), (3, 5), (2, (3, 4)), (16, 16)])


@prop(2000, st.one_of(any_layouts(), injective_layouts()), st.one_of(st.none(), COTARGETS))
def _complement(L, M):
    C = attempt(la.complement, L, M) if M is not None else attempt(la.complement, L)
    if C is None:
        return
    fl = [(s, d) for s, d in modes(L) if s != 1 and d != 0]
    if M is None:  # cosize of filter(L)
        m = 1 + sum((s - 1) * d for s, d in fl) if fl else 1
    else:
        m = math.prod(leaves(M, M)[k][0] for k in range(len(leaves(M, M))))
    n = nelems(C)
    cm = modes(C)
    assert all(d >= 0 for s, d in cm if s != 1), (L, M, C)
    assert all(d > 0 for _, d in fl), (L, M, C)
    both = fl + cm
    N = math.prod(s for s, _ in both)
    top = sum((s - 1) * d for s, d in both)  # cosize((filter(L), C)) - 1
    # reaches the cotarget
    assert top + 1 >= m, f"complement({L}, {M}) = {C}: (filter(L), C) reaches {top + 1} < {m}"
    # bounded: one copy fewer at C's largest stride would not reach it
    big = max(((d, s) for s, d in cm if s != 1), default=None)
    if big is not None and big[0] > max((d for _, d in fl), default=0):
        assert top + 1 - big[0] < m or type(M) is tuple, f"complement({L}, {M}) = {C} reaches further than {m}"
    # injective and ordered, by enumeration or (past ENUM) by the sorted strides' non-overlap
    if N <= ENUM:
        img = set(table(flat_layout(both)))
        assert len(img) == N, f"complement({L}, {M}) = {C}: (filter(L), C) is not injective"
        t = table(C)
        assert all(t[i - 1] < t[i] for i in range(1, n)), f"complement({L}, {M}) = {C} is not ordered"
    else:
        acc = 0
        for d, s in sorted((d, s) for s, d in both if s != 1):
            assert d > acc, f"complement({L}, {M}) = {C}: modes overlap"
            acc += (s - 1) * d
    if is_compact_chain(fl):  # exact gaps: a bijection onto [0, N)
        assert is_compact_chain(both), f"complement({L}, {M}) = {C} is not a bijection onto [0, {N})"


test_complement_defining_properties, test_complement_exhaustive = _complement


# ---------------------------------------------------------------------------------------------
# inverses
# ---------------------------------------------------------------------------------------------


def injective(L: Layout) -> bool:
    t = table(L)
    return len(set(t)) == len(t)


@prop(2000, st.one_of(any_layouts(), injective_layouts()))
def _right_inverse(L):
    R = attempt(la.right_inverse, L)
    if R is None:
        return
    n = nelems(R)
    for i in range(min(n, ENUM)):
        j = ev(R, i)
        assert 0 <= j < nelems(L), f"right_inverse({L}) = {R}: R({i}) = {j} is outside L's domain"
        assert ev(L, j) == i, f"right_inverse({L}) = {R}: L(R({i})) = {ev(L, j)}"
    if is_compact_chain(modes(L)):
        assert n == nelems(L), f"right_inverse({L}) = {R} is not the full inverse of a bijection"


test_right_inverse, test_right_inverse_exhaustive = _right_inverse


@prop(2000, st.one_of(any_layouts(), injective_layouts()))
def _left_inverse(L):
    R = attempt(la.left_inverse, L)
    if R is None:
        return
    t = table(L)
    if len(set(t)) == len(t):
        for i, x in enumerate(t):
            assert ev_ext(R, x) == i, f"left_inverse({L}) = {R}: R(L({i})) = {ev_ext(R, x)} != {i}"
    else:  # the quasi-inverse the docstring promises
        for i, x in enumerate(t):
            j = ev_ext(R, x)
            assert 0 <= j < len(t) and t[j] == x, f"left_inverse({L}) = {R}: L(R(L({i}))) != L({i})"


test_left_inverse, test_left_inverse_exhaustive = _left_inverse


# ---------------------------------------------------------------------------------------------
# divides and products
# ---------------------------------------------------------------------------------------------


def mode(L: Layout, k: int) -> Layout:
    """Mode k of L; a scalar layout is its own mode 0."""
    if type(L.shape) is not tuple:
        assert k == 0
        return L
    return Layout(L.shape[k], L.stride[k])


def same_function(X: Layout, Y: Layout) -> bool:
    return nelems(X) == nelems(Y) and table(X) == table(Y)


@prop(1500, any_layouts(max_size=128), tilers(max_size=32))
def _logical_divide(A, B):
    R = attempt(la.logical_divide, A, B)
    if R is None:
        return
    # the definition: A o (B, complement(B, shape(coalesce(A))))
    C = la.complement(B, la.coalesce(A).shape)
    BC = la.make_layout(B, C)
    check_composition(A, BC, R)
    for op in (la.zipped_divide, la.tiled_divide, la.flat_divide):
        Z = attempt(op, A, B)
        assert Z is not None, f"{op.__name__} refused what logical_divide accepts: {A}, {B}"
        assert same_function(Z, R), (op.__name__, A, B, Z, R)


test_logical_divide, test_logical_divide_exhaustive = _logical_divide


@prop(800, any_layouts(max_size=128), st.data())
def _divide_by_mode(A, data):
    if type(A.shape) is not tuple or len(A.shape) == 0:
        return
    k = data.draw(st.integers(1, len(A.shape)))
    T = tuple(data.draw(st.one_of(tilers(max_size=8), st.sampled_from([1, 2, 4, None]))) for _ in range(k))
    for op in (la.logical_divide, la.zipped_divide, la.tiled_divide, la.flat_divide,
               la.logical_product, la.zipped_product, la.tiled_product, la.flat_product):
        R = attempt(op, A, T)
        if R is None:
            continue
        assert nelems(R) == nelems(R)  # evaluated: no exception
        # mode by mode, as the single-mode operation
        base = la.logical_divide if "divide" in op.__name__ else la.logical_product
        parts = []
        for j, t in enumerate(T):
            Aj = A[j]
            parts.append(Aj if t is None else attempt(base, Aj, t))
        if any(p is None for p in parts):
            raise AssertionError(f"{op.__name__}({A}, {T}) = {R} but a mode's {base.__name__} refuses")
        leaves_r = sorted(modes(R))
        want = sorted(sum((modes(p) for p in parts), []) + sum((modes(A[j]) for j in range(len(T), len(A.shape))), []))
        assert leaves_r == want, (op.__name__, A, T, R)


test_divides_and_products_by_mode, test_divides_and_products_by_mode_exhaustive = _divide_by_mode


@prop(1500, any_layouts(max_size=64), tilers(max_size=16))
def _logical_product(A, B):
    R = attempt(la.logical_product, A, B)
    if R is None:
        return
    # the definition: (A, complement(A, size(A) * cosize(B)) o B)
    assert same_function(mode(R, 0), A), (A, B, R)
    cos = max(ev(B, i) for i in range(nelems(B))) + 1
    C = la.complement(A, nelems(A) * cos)
    for i in range(nelems(B)):
        x = ev(B, i)
        want = ev_ext(C, x)
        assert ev(mode(R, 1), i) == want, (A, B, R, i)
    for op in (la.zipped_product, la.tiled_product, la.flat_product):
        Z = attempt(op, A, B)
        assert Z is not None
        assert same_function(Z, R), (op.__name__, A, B, Z, R)


test_logical_product, test_logical_product_exhaustive = _logical_product


@prop(800, any_layouts(max_leaves=3, max_size=32), tilers(max_size=16))
def _rank_products(A, B):
    for op, raked in ((la.blocked_product, False), (la.raked_product, True)):
        R = attempt(op, A, B)
        if R is None:
            continue
        r = max(len(A.shape) if type(A.shape) is tuple else 1, len(B.shape) if type(B.shape) is tuple else 1)
        Ap, Bp = la.append(A, n=r), la.append(B, n=r)
        P = la.logical_product(Ap, Bp)
        assert len(R.shape) == r
        for k in range(r):
            Rk = mode(R, k)
            blk, rep = (mode(Rk, 1), mode(Rk, 0)) if raked else (mode(Rk, 0), mode(Rk, 1))
            assert same_function(blk, mode(Ap, k) if r > 1 else Ap), (op.__name__, A, B, R, k)
            assert same_function(rep, mode(mode(P, 1), k) if r > 1 else mode(P, 1)), (op.__name__, A, B, R, k)


test_blocked_and_raked_products, test_blocked_and_raked_products_exhaustive = _rank_products


@prop(800, any_layouts(max_leaves=3, max_size=16), st.sampled_from([(4, 6), (8,), (4, 4), (2, 3, 4), ((2, 2), 8), 16]),
      st.sampled_from([None, "right"]))
def _tile_to_shape(A, S, order):
    R = attempt(la.tile_to_shape, A, S, order)
    if R is None:
        return
    prod_each = [math.prod(x for x, _ in leaves(s, s)) for s in (S if type(S) is tuple else (S,))]
    assert [nelems(mode(R, k)) for k in range(len(prod_each))] == prod_each, (A, S, R)
    Ap = la.append(A, n=len(prod_each))
    for k in range(len(prod_each)):
        assert same_function(mode(mode(R, k), 0), mode(Ap, k)), (A, S, R, k)


test_tile_to_shape, test_tile_to_shape_exhaustive = _tile_to_shape


# ---------------------------------------------------------------------------------------------
# common vectors, casts, nullspace
# ---------------------------------------------------------------------------------------------


def preimage(B: Any, x: int) -> list[int]:
    return [j for j in range(nelems(B)) if ev(B, j) == x]


@prop(1500, st.one_of(any_layouts(max_size=64), injective_layouts(max_size=64), composed_layouts(max_size=64)),
      st.data())
def _max_common(A, data):
    B = data.draw(st.one_of(st.just(A.inner if isinstance(A, ComposedLayout) else A), any_layouts(max_size=64),
                            injective_layouts(max_size=64)))
    if nelems(A) != nelems(B):
        B = data.draw(injective_layouts(max_size=64)) if nelems(A) > 64 else Layout(nelems(A))
    N = attempt(la.max_common_vector, A, B)
    if N is not None and N > 1:
        # elements 0..N-1 of B are one run of contiguous offsets in A too
        js = []
        for i in range(N):
            pre = preimage(B, i)
            assert pre, f"max_common_vector({A}, {B}) = {N}, but B never reaches {i}"
            js.append(pre[0])
        a0 = ev(A, js[0])
        assert all(ev(A, j) == a0 + i for i, j in enumerate(js)), f"max_common_vector({A}, {B}) = {N}: not contiguous in A"
    if isinstance(A, ComposedLayout):
        return
    R = attempt(la.max_common_layout, A, B)
    if R is not None:
        for i in range(nelems(R)):
            j = ev(R, i)
            assert 0 <= j < nelems(B), (A, B, R)
            assert ev(A, j) == i and ev(B, j) == i, f"max_common_layout({A}, {B}) = {R}: at {i}"
        if N is not None:
            assert nelems(R) == N, (A, B, R, N)


test_max_common_vector_and_layout, test_max_common_exhaustive = _max_common


def image(L: Layout) -> set[int]:
    return set(table(L))


@prop(1500, st.one_of(any_layouts(max_size=64), injective_layouts(max_size=64)), st.sampled_from([1, 2, 3, 4, 8]))
def _upcast(L, n):
    U = attempt(la.upcast, L, n)
    if U is None:
        return
    assert image(U) == {x // n for x in table(L)}, f"upcast({L}, {n}) = {U}: its offsets are not L's vectors"
    C = attempt(la.upcast, la.coalesce(L), n)
    if C is not None:
        assert image(C) == image(U)


test_upcast, test_upcast_exhaustive = _upcast


@prop(1500, st.one_of(any_layouts(max_size=64), injective_layouts(max_size=64)), st.sampled_from([1, 2, 3, 4, 8]))
def _downcast(L, n):
    D = attempt(la.downcast, L, n)
    if D is None:
        return
    assert nelems(D) == nelems(L) * n, f"downcast({L}, {n}) = {D}: size"
    assert image(D) == {x * n + r for x in table(L) for r in range(n)}, f"downcast({L}, {n}) = {D}"
    C = attempt(la.downcast, la.coalesce(L), n)
    if C is not None:
        assert image(C) == image(D)


test_downcast, test_downcast_exhaustive = _downcast


@prop(800, st.one_of(any_layouts(max_size=64), injective_layouts(max_size=64)), st.sampled_from([8, 16, 24, 32, 64]),
      st.sampled_from([8, 16, 24, 32, 64]))
def _recast(L, old, new):
    R = attempt(la.recast_layout, L, old, new)
    if R is None:
        return
    g = math.gcd(old, new)
    num, den = new // g, old // g
    U = L if num == 1 else la.upcast(L, num)
    D = U if den == 1 else la.downcast(U, den)
    assert same_function(R, D)
    C = attempt(la.recast_layout, la.coalesce(L), old, new)
    if C is not None:
        assert image(C) == image(R), f"recast_layout of {L} and of coalesce(L) differ: {R} vs {C}"


test_recast_layout, test_recast_layout_exhaustive = _recast


@prop(1500, any_layouts())
def _nullspace(L):
    R = attempt(la.nullspace, L)
    if R is None:
        return
    t = table(R)
    assert len(set(t)) == len(t), f"nullspace({L}) = {R} is not injective"
    for j in t:
        assert 0 <= j < max(nelems(L), 1) and ev(L, j) == 0, f"nullspace({L}) = {R}: L({j}) != 0"
    zero_modes = [s for s, d in modes(L) if d == 0]
    assert nelems(R) == math.prod(zero_modes)
    kept = [(s, d) for s, d in modes(L) if d != 0]
    if nelems(L) <= ENUM and injective(flat_layout(kept)):
        assert nelems(R) == sum(1 for x in table(L) if x == 0)


test_nullspace, test_nullspace_exhaustive = _nullspace


# ---------------------------------------------------------------------------------------------
# swizzles and composed layouts
# ---------------------------------------------------------------------------------------------


@prop(300, st.integers(0, 4), st.integers(0, 4), st.integers(-6, 6))
def _swizzle(b, m, s):
    S = attempt(Swizzle, b, m, s)
    if S is None:
        assert abs(s) < b
        return
    p = 1 << (b + m + abs(s)) if b else 1
    img = [sw(S, x) for x in range(p)]
    assert sorted(img) == list(range(p)), f"{S} is not a bijection of [0, {p})"
    assert [S(x) for x in range(p)] == img
    assert all(sw(S, sw(S, x)) == x for x in range(p))
    assert S.period == p


test_swizzle_is_a_bijection, test_swizzle_exhaustive = _swizzle


@prop(300, st.integers(0, 3), st.integers(0, 3), st.integers(-4, 4), st.integers(0, 3), st.integers(0, 3), st.integers(-4, 4))
def _swizzle_composition(b1, m1, s1, b2, m2, s2):
    S1, S2 = attempt(Swizzle, b1, m1, s1), attempt(Swizzle, b2, m2, s2)
    if S1 is None or S2 is None:
        return
    R = attempt(la.composition, S1, S2)
    if R is None:
        return
    p = max(S1.period, S2.period, 2) * 4
    for x in range(p):
        want = sw(S1, sw(S2, x))
        got = sw(R, x) if isinstance(R, Swizzle) else ev(R, x)
        assert got == want, f"composition({S1}, {S2}) = {R} at {x}"


test_swizzle_composition, test_swizzle_composition_exhaustive = _swizzle_composition


@prop(1000, composed_layouts(max_size=64), tilers(max_size=16))
def _composed(C, B):
    n = nelems(C)
    assert [C(i) for i in range(n)] == table(C)
    R = attempt(la.composition, C, B)
    if R is not None:
        for i in range(nelems(B)):
            want = ev_outer(C.outer, C.offset + ev_ext(C.inner, ev(B, i)))
            assert ev(R, i) == want, f"composition({C}, {B}) = {R} at {i}"
    Ri = attempt(la.right_inverse, C)
    if Ri is not None:
        for i in range(min(nelems(Ri), ENUM)):
            j = ev(Ri, i)
            assert 0 <= j < n, f"right_inverse({C}) = {Ri}: R({i}) = {j} is outside C's domain"
            assert ev(C, j) == i, f"right_inverse({C}) = {Ri}: C(R({i})) = {ev(C, j)}"
    Li = attempt(la.left_inverse, C)
    if Li is not None and len(set(table(C))) == n:
        for i in range(n):
            assert ev_ext(Li, ev(C, i)) == i, f"left_inverse({C}) = {Li}: at {i}"
    for n in (2, 4):
        U = attempt(la.upcast, C, n)
        if U is not None:
            assert {ev(U, i) for i in range(nelems(U))} == {x // n for x in table(C)}, f"upcast({C}, {n}) = {U}"
        D = attempt(la.downcast, C, n)
        if D is not None:
            assert {ev(D, i) for i in range(nelems(D))} == {x * n + r for x in table(C) for r in range(n)}, \
                f"downcast({C}, {n}) = {D}"
    p = str(C)
    assert parse(p) == C, p


test_composed_layouts, test_composed_layouts_exhaustive = _composed


# ---------------------------------------------------------------------------------------------
# text
# ---------------------------------------------------------------------------------------------


@prop(1500, st.one_of(any_layouts(), injective_layouts()))
def _parse(L):
    assert parse(str(L)) == L, str(L)
    assert la.Layout(L.shape, L.stride) == L


test_parse_str_roundtrip, test_parse_exhaustive = _parse


# ---------------------------------------------------------------------------------------------
# symbolic sizes: a result for a symbol n, with n substituted, meets the property of the concrete case
# ---------------------------------------------------------------------------------------------

_N = __import__("sympy").Symbol("n", positive=True, integer=True)


@st.composite
def symbolic_layouts(draw):
    """A compact layout (column- or row-major, or a permutation) with one shape leaf replaced by n."""
    from layoutalg.inttuple import flatten, unflatten

    shape = draw(st.sampled_from([(4, 2), ((2, 2), 4), (2, (2, 4)), (8,), (2, 3, 2), 4]))
    fs = list(flatten(shape))
    k = draw(st.integers(0, len(fs) - 1))
    fs[k] = _N
    sshape = unflatten(fs, shape) if type(shape) is tuple else _N
    order = draw(st.sampled_from(["left", "right"]))
    return la.make_layout(sshape, order=order) if type(sshape) is tuple else Layout(sshape)


@prop(150, symbolic_layouts(), tilers(max_size=8), st.sampled_from([1, 2, 3, 4, 6]))
def _symbolic(L, B, v):
    Lv = L.subs({_N: v})
    for name, f, check in (
        ("coalesce", lambda X: la.coalesce(X), lambda R: same_function(R, Lv)),
        ("right_inverse", lambda X: la.right_inverse(X),
         lambda R: all(0 <= ev(R, i) < nelems(Lv) and ev(Lv, ev(R, i)) == i for i in range(nelems(R)))),
        ("composition", lambda X: la.composition(X, B), None),
        ("logical_divide", lambda X: la.logical_divide(X, B), None),
    ):
        R = attempt(f, L)
        if R is None:
            continue
        Rv = R.subs({_N: v})
        if name == "composition":
            check_composition(Lv, B, Rv)
        elif name == "logical_divide":
            BC = la.make_layout(B, la.complement(B, la.coalesce(Lv).shape))
            assert compatible(BC.shape, Rv.shape), f"logical_divide({L}, {B}) = {R}; at n = {v}: {Rv}, not shaped as {BC}"
            check_composition(Lv, BC, Rv)
        else:
            assert check(Rv), f"{name}({L}) = {R}, at n = {v}: {Rv}"
    C = attempt(la.complement, B, 8 * _N)
    if C is not None:
        Cv = C.subs({_N: v})
        fl = [(s, d) for s, d in modes(B) if s != 1 and d != 0]
        assert is_compact_chain(fl + modes(Cv)), f"complement({B}, 8n) = {C}, at n = {v}: {Cv}"
        assert math.prod(s for s, _ in fl) * nelems(Cv) >= 8 * v


test_symbolic_sizes, test_symbolic_sizes_exhaustive = _symbolic
