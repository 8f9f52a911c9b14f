"""Random conformance cases against CuTe C++: each case is one operation on random static inputs,
computed by layoutalg and spelled as a C++ snippet for :func:`layoutalg.interop.cutecpp.run_snippets`.

The inputs are spelled with :func:`layoutalg.interop.cute.to_cute_cpp`, so the harness also checks
the export: CuTe must read back exactly the layouts layoutalg holds. Cases are seeded and
deterministic; a case where layoutalg refuses (LayoutError) is kept too, and CuTe's answer for it
is judged separately (a compile-time refusal agrees; an answer CuTe gives must then be shown wrong).
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from collections.abc import Callable
from typing import Any

import layoutalg as la
from layoutalg import Layout, LayoutError
from layoutalg.composed import ComposedLayout
from layoutalg.inttuple import flatten, unflatten
from layoutalg.interop.cute import to_cute_cpp
from layoutalg.swizzle import Swizzle


@dataclass
class Case:
    op: str
    inputs: tuple[Any, ...]
    cpp: str  # snippet body: prints the result
    ours: Any = None  # layoutalg's result (Layout, ComposedLayout, int) or the LayoutError it raised
    check: Callable[[Any], str | None] | None = field(default=None, repr=False)  # judges a CuTe answer to a refused case

    @property
    def refused(self) -> bool:
        return isinstance(self.ours, LayoutError)


_UNDERSCORE = re.compile(r"(?<![A-Za-z0-9])_(?=-?\d)")


def norm(text: str) -> str:
    """CuTe's printed static integers ``_8`` / ``_-16`` as plain numbers, wherever they stand (the recorders'
    reading; :func:`normalize` leaves an underscore after a letter or digit alone)."""
    return re.sub(r"_(?=-?\d)", "", text.strip())


def parse_fields(text: str) -> dict:
    """A snippet's ``key = value`` lines -> {key: value}."""
    out = {}
    for line in text.splitlines():
        k, _, v = line.partition("=")
        out[k.strip()] = v.strip()
    return out


def normalize(text: str) -> str:
    """CuTe text with the underscores of static integers removed (``(_2,_3):(_1,_2)`` -> ``(2,3):(1,2)``)."""
    return _UNDERSCORE.sub("", text.strip())


def ours_text(x: Any) -> str:
    return normalize(str(x))


def cpp(x: Any) -> str:
    return to_cute_cpp(x).expr


def _int(v: int) -> str:
    return f"Int<{v}>{{}}"


def _tuple_cpp(t: Any, maker: str = "make_shape") -> str:
    if type(t) is tuple:
        return f"{maker}(" + ", ".join(_tuple_cpp(x, maker) for x in t) + ")"
    return _int(t)


# ---------------------------------------------------------------------------------------------
# random inputs
# ---------------------------------------------------------------------------------------------
LEAVES = [1, 1, 2, 2, 2, 3, 4, 4, 4, 5, 6, 8, 8, 16]


def rand_shape(r: random.Random, max_leaves: int = 4, max_size: int = 1024, leaves: list[int] = LEAVES) -> Any:
    n = r.randint(1, max_leaves)
    fs = [r.choice(leaves) for _ in range(n)]
    while len(fs) > 1 and _prod(fs) > max_size:
        fs.pop()
    return _nest(r, fs, top=True)


def _prod(xs: list[int]) -> int:
    p = 1
    for x in xs:
        p *= x
    return p


def _nest(r: random.Random, fs: list[int], top: bool = False) -> Any:
    if len(fs) == 1:
        return (fs[0],) if r.random() < 0.1 else fs[0]
    out: list[Any] = []
    i = 0
    while i < len(fs):
        k = r.randint(1, len(fs) - i)
        grp = fs[i : i + k]
        out.append(grp[0] if k == 1 else _nest(r, grp))
        i += k
    if len(out) == 1:
        return out[0] if type(out[0]) is tuple else (out[0],)
    return tuple(out)


STRIDE_LEAVES = [0, 1, 1, 2, 3, 4, 4, 6, 8, 8, 12, 16, 32, -1, -2, -4]


def rand_layout(r: random.Random, **kw: Any) -> Layout:
    """An arbitrary layout: random strides, zeros and negatives included."""
    shape = rand_shape(r, **kw)
    return Layout(shape, unflatten([r.choice(STRIDE_LEAVES) for _ in flatten(shape)], shape))


def rand_compact(r: random.Random, gaps: bool = True, zeros: bool = False, **kw: Any) -> Layout:
    """An injective layout: the modes of a compact layout in random order, with optional gaps
    (and, if ``zeros``, some stride-0 modes, making it non-injective)."""
    shape = rand_shape(r, **kw)
    fs = list(flatten(shape))
    order = list(range(len(fs)))
    r.shuffle(order)
    strides = [0] * len(fs)
    p = 1
    for k in order:
        if gaps and r.random() < 0.25:
            p *= r.choice([2, 3])
        strides[k] = p
        p *= fs[k]
    if zeros:
        for k in range(len(fs)):
            if r.random() < 0.2:
                strides[k] = 0
    return Layout(shape, unflatten(strides, shape))


def rand_profile(r: random.Random, shape: Any) -> Any:
    """A profile congruent to a prefix of the shape: 1 where a mode is coalesced whole."""
    if type(shape) is not tuple:
        return 1
    return tuple(1 if type(s) is not tuple or r.random() < 0.5 else rand_profile(r, s) for s in shape)


def divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def rand_tile_layout(r: random.Random, size: int) -> Layout:
    """A small layout B for tilers: size dividing ``size``, compact with an occasional stride."""
    s = r.choice(divisors(size))
    kind = r.random()
    if kind < 0.4:
        return Layout(s, r.choice([1, 1, 2, size // s if size % s == 0 else 1]))
    if kind < 0.8:
        parts = [d for d in divisors(s) if d > 1] or [1]
        a = r.choice(parts)
        b = s // a
        strides = r.choice([(1, a), (b, 1), (1, 2 * a), (2, 2 * a), (b, 0)])
        return Layout((a, b), strides)
    return rand_compact(r, max_leaves=2, max_size=max(1, s))


# ---------------------------------------------------------------------------------------------
# cases
# ---------------------------------------------------------------------------------------------
def rand_tiler(r: random.Random, A: Layout, holes: random.Random) -> tuple[tuple, str]:
    """A tiler of A's first modes (per mode a tile layout or a divisor of its size, or, drawn from the
    stream ``holes``, None: CuTe's ``_``) and its C++ make_tile."""
    tiler = _underscores(holes, tuple(rand_tile_layout(r, Layout(s).size()) if r.random() < 0.6
                                      else r.choice(divisors(Layout(s).size())) for s in A.shape[: r.randint(1, len(A.shape))]))
    return tiler, _tiler_cpp(tiler)


def _run(f: Callable[[], Any]) -> Any:
    try:
        return f()
    except LayoutError as e:
        return e


def _case(op: str, inputs: tuple, cpp_body: str, f: Callable[[], Any], check: Callable | None = None) -> Case:
    return Case(op, inputs, cpp_body, _run(f), check)


def _print(expr: str) -> str:
    # evaluated at compile time: the program then only holds the code that prints the answer
    return f"constexpr auto r = {expr};\nprint(r);"


def _composition_check(A: Layout, B: Any) -> Callable[[Any], str | None]:
    """Judge a CuTe answer R for A o B: R(i) must equal A(B(i)) for every i in B's domain."""

    def check(R: Any) -> str | None:
        if not isinstance(B, Layout):
            return None
        for i in range(min(B.size(), 4096)):
            if R(i) != A(B(i)):
                return f"R({i}) = {R(i)} but A(B({i})) = {A(B(i))}"
        return "CuTe's answer is correct"

    return check


def _complement_check(A: Layout, cotarget: Any) -> Callable[[Any], str | None]:
    def check(R: Any) -> str | None:
        a_img = {A(i) for i in range(A.size())}
        if len(a_img) < A.size():
            return "A is not injective, so no complement exists"
        return "CuTe gave an answer for an injective layout"

    return check


def _underscores(holes: random.Random, tiler: tuple) -> tuple:
    """The tiler with some modes left alone (None, CuTe's ``_``), drawn from a stream of its own."""
    return tuple(None if holes.random() < 0.15 else t for t in tiler)


def _tiler_cpp(tiler: tuple) -> str:
    return "make_tile(" + ", ".join("_" if t is None else cpp(t) if isinstance(t, Layout) else _int(t) for t in tiler) + ")"


def algebra_cases(seed: int = 20261123, per_op: int = 110) -> list[Case]:
    """Random cases for every algebra operation layoutalg shares with CuTe."""
    r = random.Random(seed)
    holes = random.Random(seed + 1)
    cases: list[Case] = []
    add = cases.append

    for _ in range(per_op):
        A = rand_layout(r)
        add(_case("coalesce", (A,), _print(f"coalesce({cpp(A)})"), lambda A=A: la.coalesce(A)))
    for _ in range(per_op // 2):
        A = rand_layout(r)
        if type(A.shape) is not tuple:
            continue
        prof = rand_profile(r, A.shape)
        add(_case("coalesce/profile", (A, prof), _print(f"coalesce({cpp(A)}, {_tuple_cpp(prof, 'make_tuple')})"),
                  lambda A=A, p=prof: la.coalesce(A, p)))
    for _ in range(per_op // 2):
        A = rand_layout(r)
        add(_case("filter", (A,), _print(f"filter({cpp(A)})"), lambda A=A: la.filter(A)))

    # composition: A compact-ish, B a small layout inside A's domain
    for _ in range(per_op * 2):
        A = rand_compact(r, gaps=r.random() < 0.3, zeros=r.random() < 0.2)
        B = rand_tile_layout(r, A.size()) if r.random() < 0.7 else rand_layout(r, max_leaves=3, max_size=A.size())
        add(_case("composition", (A, B), _print(f"composition({cpp(A)}, {cpp(B)})"),
                  lambda A=A, B=B: la.composition(A, B), _composition_check(A, B)))
    for _ in range(per_op // 2):
        A = rand_compact(r, max_leaves=4)
        if type(A.shape) is not tuple:
            continue
        tiler, t_cpp = rand_tiler(r, A, holes)
        add(_case("composition/tiler", (A, tiler), _print(f"composition({cpp(A)}, {t_cpp})"),
                  lambda A=A, t=tiler: la.composition(A, t)))

    # complement
    for _ in range(per_op * 2):
        A = rand_compact(r, zeros=r.random() < 0.15, max_size=256)
        cos = A.cosize()
        m = r.random()
        if m < 0.3:
            cot: Any = cos * r.choice([1, 2, 4])
            c_cpp = _int(cot)
        elif m < 0.5:
            cot = r.choice([1, max(1, cos // 2), cos + r.randint(0, 5)])
            c_cpp = _int(cot)
        elif m < 0.7:
            cot = None
            c_cpp = ""
        else:
            cot = (r.choice([2, 4, 8]), cos)
            c_cpp = _tuple_cpp(cot)
        body = _print(f"complement({cpp(A)}{', ' + c_cpp if c_cpp else ''})")
        add(_case("complement", (A, cot), body, lambda A=A, c=cot: la.complement(A) if c is None else la.complement(A, c),
                  _complement_check(A, cot)))

    # inverses
    for _ in range(per_op):
        A = rand_compact(r, gaps=r.random() < 0.4, zeros=r.random() < 0.2)
        add(_case("right_inverse", (A,), _print(f"right_inverse({cpp(A)})"), lambda A=A: la.right_inverse(A)))
    for _ in range(per_op):
        A = rand_compact(r, gaps=r.random() < 0.4)
        add(_case("left_inverse", (A,), _print(f"left_inverse({cpp(A)})"), lambda A=A: la.left_inverse(A)))

    # divides and products
    for op in ("logical_divide", "zipped_divide", "tiled_divide", "flat_divide"):
        f = getattr(la, op)
        for _ in range(per_op // 2):
            A = rand_compact(r, gaps=r.random() < 0.2)
            B = rand_tile_layout(r, A.size())
            add(_case(op, (A, B), _print(f"{op}({cpp(A)}, {cpp(B)})"), lambda A=A, B=B, f=f: f(A, B)))
        for _ in range(per_op // 4):
            A = rand_compact(r, max_leaves=4)
            if type(A.shape) is not tuple:
                continue
            tiler, t_cpp = rand_tiler(r, A, holes)
            add(_case(op + "/tiler", (A, tiler), _print(f"{op}({cpp(A)}, {t_cpp})"), lambda A=A, t=tiler, f=f: f(A, t)))
    for op in ("logical_product", "zipped_product", "tiled_product", "flat_product"):
        f = getattr(la, op)
        for _ in range(per_op // 2):
            A = rand_compact(r, max_size=64, max_leaves=3)
            B = rand_compact(r, max_size=16, max_leaves=2, gaps=False)
            add(_case(op, (A, B), _print(f"{op}({cpp(A)}, {cpp(B)})"), lambda A=A, B=B, f=f: f(A, B)))
    for op in ("blocked_product", "raked_product"):
        f = getattr(la, op)
        for _ in range(per_op // 2):
            rank = r.randint(1, 3)
            A = Layout(tuple(r.choice([1, 2, 3, 4]) for _ in range(rank)))
            A = Layout(A.shape, unflatten([r.choice([1, 2, 4, 0]) for _ in flatten(A.shape)], A.shape)) if r.random() < 0.3 else A
            B = rand_compact(r, max_leaves=3, max_size=32, gaps=False)
            add(_case(op, (A, B), _print(f"{op}({cpp(A)}, {cpp(B)})"), lambda A=A, B=B, f=f: f(A, B)))

    # tile_to_shape (with an order)
    for _ in range(per_op):
        rank = r.randint(1, 3)
        block = rand_compact(r, max_leaves=rank + 1, max_size=32, gaps=False)
        if type(block.shape) is not tuple or len(block.shape) != rank:
            block = Layout(tuple(r.choice([1, 2, 4]) for _ in range(rank)))
        target = tuple(Layout(s).size() * r.choice([1, 1, 2, 3, 4]) for s in block.shape)
        if r.random() < 0.4:
            order = tuple(r.sample(range(rank), rank))
            body = _print(f"tile_to_shape({cpp(block)}, {_tuple_cpp(target)}, {_tuple_cpp(order, 'make_step')})")
            add(_case("tile_to_shape/order", (block, target, order), body, lambda b=block, t=target, o=order: la.tile_to_shape(b, t, o)))
        else:
            body = _print(f"tile_to_shape({cpp(block)}, {_tuple_cpp(target)})")
            add(_case("tile_to_shape", (block, target), body, lambda b=block, t=target: la.tile_to_shape(b, t)))

    # max_common_vector / layout
    for _ in range(per_op):
        a = rand_compact(r, gaps=r.random() < 0.3)
        b = rand_compact(r, gaps=r.random() < 0.3) if r.random() < 0.3 else Layout(a.shape)
        if b.size() != a.size():
            b = Layout(a.shape)
        for op in ("max_common_vector", "max_common_layout"):
            f = getattr(la, op)
            add(_case(op, (a, b), _print(f"{op}({cpp(a)}, {cpp(b)})"), lambda a=a, b=b, f=f: f(a, b)))

    # upcast / downcast / recast
    for _ in range(per_op):
        A = rand_layout(r) if r.random() < 0.5 else rand_compact(r)
        n = r.choice([2, 4, 8])
        add(_case("upcast", (A, n), _print(f"upcast<{n}>({cpp(A)})"), lambda A=A, n=n: la.upcast(A, n)))
        add(_case("downcast", (A, n), _print(f"downcast<{n}>({cpp(A)})"), lambda A=A, n=n: la.downcast(A, n)))
        ob, nb = r.choice([(8, 16), (16, 8), (8, 32), (32, 8), (16, 32), (32, 16), (16, 64), (64, 16), (16, 16)])
        ty = {8: "uint8_t", 16: "uint16_t", 32: "uint32_t", 64: "uint64_t"}
        add(_case("recast_layout", (A, ob, nb), _print(f"recast_layout<{ty[ob]}, {ty[nb]}>({cpp(A)})"),
                  lambda A=A, o=ob, n=nb: la.recast_layout(A, o, n)))

    # nullspace
    for _ in range(per_op // 2):
        A = rand_compact(r, zeros=True)
        add(_case("nullspace", (A,), _print(f"nullspace({cpp(A)})"), lambda A=A: la.nullspace(A)))
    return cases


def swizzle_cases(seed: int = 7, n: int = 120) -> list[Case]:
    """Swizzles and composed layouts: construction, composition with a layout, and the algebra on them."""
    r = random.Random(seed)
    cases: list[Case] = []
    for _ in range(n):
        B = r.randint(0, 3)
        M = r.randint(0, 4)
        S = r.choice([s for s in range(-5, 6) if abs(s) >= B and s != 0] or [B])
        sw = Swizzle(B, M, S)
        L = rand_compact(r, max_size=512, gaps=False)
        C = la.composition(sw, L)  # an identity swizzle gives L itself, as in CuTe
        cases.append(_case("composed/make", (sw, L), _print(f"composition({cpp(sw)}, {cpp(L)})"),
                           lambda sw=sw, L=L: la.composition(sw, L)))
        T = rand_tile_layout(r, L.size())
        cases.append(_case("composed/composition", (C, T), _print(f"composition({cpp(C)}, {cpp(T)})"),
                           lambda C=C, T=T: la.composition(C, T)))
        cases.append(_case("composed/logical_divide", (C, T), _print(f"logical_divide({cpp(C)}, {cpp(T)})"),
                           lambda C=C, T=T: la.logical_divide(C, T)))
        off = r.choice([0, 1, 8, 32])
        C2 = ComposedLayout(sw, off, L)
        if sw.is_identity and off == 0:
            C2 = L
        i = r.randrange(L.size())
        cases.append(_case("composed/eval", (C2, i), _print(f"{cpp(C2)}({i})"), lambda C=C2, i=i: C(i)))
    return cases


# ---------------------------------------------------------------------------------------------
# named differences: where CuTe answers and layoutalg answers differently or refuses, CuTe's answer
# is shown wrong by evaluating the operation's defining property on it (docs/model.md, "Negative
# strides and the edges of the domain", lists each difference)
# ---------------------------------------------------------------------------------------------


def _offsets(L: Any) -> list[int]:
    return [L(i) for i in range(L.size())]


def _wrong_complement(A: Layout, cot: Any, C: Any) -> str | None:
    """Why CuTe's complement C of A is not one: (filter(A), C) not injective, or not reaching the cotarget."""
    fa = la.filter(A)
    m = _prod(list(flatten(cot))) if type(cot) is tuple else (fa.cosize() if cot is None else cot)
    n = fa.size() * C.size()
    img = {fa(i) + C(j) for i in range(fa.size()) for j in range(C.size())}
    if len(img) < n:
        return f"(filter(A), C) is not injective: {n} indices, {len(img)} offsets"
    if max(img) + 1 < m:
        return f"(filter(A), C) reaches {max(img) + 1} < {m}"
    return None


def _wrong_upcast(L: Layout, n: int, U: Any) -> str | None:
    want = {x // n for x in _offsets(L)}
    got = set(_offsets(U))
    return None if got == want else f"its offsets {sorted(got)[:8]}... are not L's vectors {sorted(want)[:8]}..."


def _wrong_downcast(L: Layout, n: int, D: Any) -> str | None:
    if D.size() != n * L.size():
        return f"size {D.size()} is not {n} * size(L) = {n * L.size()}"
    want = {n * x + r for x in _offsets(L) for r in range(n)}
    return None if set(_offsets(D)) == want else "its offsets are not L's elements split in " + str(n)


def _wrong_left_inverse(L: Layout, R: Any) -> str | None:
    for i in range(L.size()):
        if L(R(L(i))) != L(i):
            return f"L(R(L({i}))) = {L(R(L(i)))} != L({i}) = {L(i)}"
    return None


def named_refusal(c: Case, message: str) -> str | None:
    """The documented case where CuTe refuses at compile time and layoutalg answers soundly: ``downcast`` (or
    ``recast_layout`` to narrower elements) of a layout whose only unit-stride modes are reversed (stride -1)
    -- docs/model.md: ``s:-1`` grows into ``(N,s):(1,-N)``; CuTe asks for a stride +1 mode. The answer must
    satisfy downcast's defining property."""
    if "Downcast requires adjacent elements" not in message or c.refused:
        return None
    if c.op == "downcast":
        L, n = c.inputs
    elif c.op == "recast_layout" and c.inputs[2] < c.inputs[1]:
        L, n = c.inputs[0], c.inputs[1] // c.inputs[2]
    else:
        return None
    strides = L.flat[1]
    if 1 in strides or -1 not in strides or _wrong_downcast(L, n, c.ours) is not None:
        return None
    return "downcast: a lone reversed mode grows (CuTe asks for a stride +1 mode)"


def named_difference(c: Case, cute: Any) -> str | None:
    """The documented difference a case falls under, when CuTe's answer ``cute`` is shown wrong by direct
    evaluation of the operation's defining property; None otherwise (then the difference is a failure)."""
    op = c.op
    if not isinstance(cute, (Layout, ComposedLayout)):
        return None
    why: str | None = None
    if op == "complement":
        A, cot = c.inputs
        why = _wrong_complement(A, cot, cute)
        name = "complement: a shape cotarget folded short" if type(cot) is tuple else \
            "complement: an inexact gap, CuTe's rest short of the cotarget"
    elif op == "upcast":
        why = _wrong_upcast(c.inputs[0], c.inputs[1], cute)
        name = "upcast: sub-vector modes that are not a layout of vectors"
    elif op == "downcast":
        why = _wrong_downcast(c.inputs[0], c.inputs[1], cute)
        name = "downcast: CuTe grows every unit-stride mode"
    elif op == "recast_layout":
        L, old, new = c.inputs
        if new > old:
            why, name = _wrong_upcast(L, new // old, cute), "recast_layout: upcast's refusals"
        else:
            why, name = _wrong_downcast(L, old // new, cute), "recast_layout: downcast's one growing mode"
    elif op == "left_inverse":
        why = _wrong_left_inverse(c.inputs[0], cute)
        name = "left_inverse: overlapping modes have no quasi-inverse"
    elif op == "right_inverse":
        L = c.inputs[0]
        bad = [i for i in range(cute.size()) if not (0 <= cute(i) < L.size() and L(cute(i)) == i)]
        why = f"L(R({bad[0]})) != {bad[0]} or R({bad[0]}) outside L's domain" if bad else None
        name = "right_inverse: negative strides"
    else:
        return None
    return f"{name} (CuTe: {why})" if why else None


def named_cases() -> list[Case]:
    """Issue 23's cases, hand-picked: each is either identical to CuTe or a named difference."""
    P = la.parse
    out = [
        _case("complement", (P("3:1"), (2, 4)), _print(f"complement({cpp(P('3:1'))}, {_tuple_cpp((2, 4))})"),
              lambda: la.complement(P("3:1"), (2, 4))),
    ]
    for a, m in (("(2,2):(1,3)", 6), ("(2,2):(3,8)", 16)):
        out.append(_case("complement", (P(a), m), _print(f"complement({cpp(P(a))}, {_int(m)})"),
                         lambda a=a, m=m: la.complement(P(a), m)))
    for a in ("(2,3):(2,1)", "(2,(4,3,6)):(4,(0,4,2))"):
        out.append(_case("left_inverse", (P(a),), _print(f"left_inverse({cpp(P(a))})"), lambda a=a: la.left_inverse(P(a))))
    for a in ("(4,2):(-1,4)", "(2,3):(-3,1)", "(4,2):(2,-1)", "(3,4):(4,-1)", "2:-1"):
        out.append(_case("right_inverse", (P(a),), _print(f"right_inverse({cpp(P(a))})"), lambda a=a: la.right_inverse(P(a))))
    for a, n in (("2:-1", 2), ("8:-1", 4)):
        out.append(_case("upcast", (P(a), n), _print(f"upcast<{n}>({cpp(P(a))})"), lambda a=a, n=n: la.upcast(P(a), n)))
    out.append(_case("downcast", (P("(1,2):(1,1)"), 2), _print(f"downcast<2>({cpp(P('(1,2):(1,1)'))})"),
                     lambda: la.downcast(P("(1,2):(1,1)"), 2)))
    for a, b in (("(2,2):(1,3)", "(2,2):(-1,2)"), ("(4,4):(4,1)", "(2,2):(-2,4)")):
        out.append(_case("composition", (P(a), P(b)), _print(f"composition({cpp(P(a))}, {cpp(P(b))})"),
                         lambda a=a, b=b: la.composition(P(a), P(b)), _composition_check(P(a), P(b))))
    for op in ("max_common_vector", "max_common_layout"):
        out.append(_case(op, (P("2:-1"), P("2:-1")), _print(f"{op}({cpp(P('2:-1'))}, {cpp(P('2:-1'))})"),
                         lambda op=op: getattr(la, op)(P("2:-1"), P("2:-1"))))
    return out
