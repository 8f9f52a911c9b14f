"""composition: CuTe's mode-by-mode construction, checked to be the functional composition."""

from __future__ import annotations

from typing import Any, overload

from .. import inttuple as it
from ..errors import LayoutError
from ..layout import Layout, fmt_tuple, make_layout
from ..speedups import c_enabled, enabled
from .core import UNIT, check_functional, coalesce_flat, coalesce_flat_int, dispatch, is_one, is_zero, modes_of, no_modes
from .kernels import c_compose, coalesce_x_fast, compose_fast

# ---------------------------------------------------------------------------------------------
# composition
# ---------------------------------------------------------------------------------------------


def _cmod(a: int, b: int) -> int:
    """C's remainder (sign of the dividend)."""
    r = abs(a) % abs(b)
    return -r if a < 0 else r


def _compose_leaf_int(S: list, D: list, s: int, d: int, A: Layout, B: Layout, flags: list) -> tuple[Any, Any]:
    """CuTe's ``composition_impl`` for one integral right-hand mode ``s:d`` on concrete ints.

    ``S:D`` is ``coalesce_x(A)`` flattened. Returns the (shape, stride) of the result mode exactly
    as CuTe builds it (size-1 modes keep their strides). ``flags[0]`` is set when a step relied on
    CuTe's weak stride condition (the stride is below the shape without dividing it), after which
    CuTe's construction need not be the functional composition and the caller checks it.
    """
    if d == 0:  # static stride-0 shortcut
        return s, 0
    R = len(S)
    if R == 1:  # integral left-hand shape
        return s, d * D[0]
    rshape: list = []
    rstride: list = []
    rest_shape, rest_stride = s, d
    for j in range(R - 1):
        cs, cd = S[j], D[j]
        if _cmod(rest_stride, cs) != 0 and not rest_stride < cs:
            raise LayoutError(
                f"composition: stride {rest_stride} (from {B}) is neither a multiple of, nor below, the shape {cs} "
                f"of the left-hand layout {A} (stride divisibility condition)"
            )
        ars = -rest_stride if rest_stride < 0 else rest_stride
        next_shape = -(-cs // ars)
        next_stride = -(-ars // cs) * (1 if rest_stride > 0 else -1)
        if cs % ars and ars % cs:
            flags[0] = True
        if next_shape == 1 or rest_shape == 1:
            rest_stride = next_stride
            continue
        new_shape = next_shape if next_shape < rest_shape else rest_shape
        if rest_shape % new_shape:
            raise LayoutError(
                f"composition: shape {rest_shape} (from {B}) is not a multiple of {new_shape}, the part of the "
                f"left-hand layout {A} it spans (shape divisibility condition)"
            )
        rshape.append(new_shape)
        rstride.append(rest_stride * cd)
        rest_shape //= new_shape
        rest_stride = next_stride
    if not rshape:
        return rest_shape, rest_stride * D[R - 1]
    if rest_shape == 1:
        return (rshape[0], rstride[0]) if len(rshape) == 1 else (tuple(rshape), tuple(rstride))
    rshape.append(rest_shape)
    rstride.append(rest_stride * D[R - 1])
    return tuple(rshape), tuple(rstride)


def _coalesce_x_int(fs: tuple | list, fd: tuple | list) -> tuple[list, list]:
    """CuTe's ``coalesce_x`` on concrete flat modes: coalesce, keeping the function past the size.

    A trailing size-1 mode is read as extent 2 (a placeholder), so its stride survives: past
    ``size(A)`` the last mode absorbs the overflow, as CuTe's ``crd2idx`` does.
    """
    ns: list = [2 if fs[-1] == 1 else fs[-1]]
    nd: list = [fd[-1]]
    for k in range(len(fs) - 2, -1, -1):
        sk, dk = fs[k], fd[k]
        if sk == 1:
            continue
        if ns[0] == 1:
            ns[0], nd[0] = sk, dk
        elif sk * dk == nd[0]:
            ns[0] *= sk
            nd[0] = dk
        else:
            ns.insert(0, sk)
            nd.insert(0, dk)
    if ns == [1]:
        return [1], [0]
    return ns, nd


def _compose_leaf(S: list, D: list, s: Any, d: Any, A: Layout, B: Layout) -> tuple[list, list]:
    """Compose the flat, coalesced modes S:D with one integral mode s:d (CuTe's composition_impl)."""
    if is_zero(d) or is_one(s):
        return [s], [0]
    R = len(S)
    if R == 1:
        return [s], [d * D[0]]
    if type(d) is int and d < 0:
        raise LayoutError(f"composition: right-hand layout {B} has negative stride {d}")
    rest_stride = d
    newS = []
    newD = []
    try:
        # divide out the stride of the right-hand mode from the left-hand shape
        for j in range(R - 1):
            Sj = S[j]
            ns = it.shape_div(Sj, rest_stride)
            rest_stride = it.shape_div(rest_stride, Sj)
            newS.append(ns)
            newD.append(D[j] * it.shape_div(Sj, ns))
    except LayoutError as e:
        why = "" if "neither" in str(e) else f" [{e}]"
        raise LayoutError(
            f"composition: stride {d} of the right-hand layout {B} does not divide, and is not divided "
            f"by, the shapes {fmt_tuple(tuple(S))} of the left-hand layout {A} (stride divisibility condition){why}"
        ) from None
    rest_shape = s
    outS = []
    try:
        # mod out the shape of the right-hand mode
        for j in range(R - 1):
            ns = newS[j]
            try:
                fits = it.less(rest_shape, ns) or it.equal(rest_shape, ns)
            except LayoutError:
                fits = False
            if fits:  # the rest of B fits inside this mode of A: no divisibility needed
                outS.append(rest_shape)
                rest_shape = 1
                continue
            outS.append(it.leaf_min(ns, rest_shape))
            rest_shape = it.shape_div(rest_shape, ns)
    except LayoutError as e:
        why = "" if "neither" in str(e) else f" [{e}]"
        raise LayoutError(
            f"composition: shape {s} (stride {d}) of the right-hand layout {B} does not divide, and is not "
            f"divided by, the shapes of the left-hand layout {A} it spans (shape divisibility condition){why}"
        ) from None
    outS.append(rest_shape)
    newD.append(rest_stride * D[R - 1])
    rs, rd = coalesce_flat(outS, newD)
    if not rs:
        return [1], [0]
    return rs, rd


def _coalesce_x(A: Layout) -> tuple[list, list]:
    """Coalesce that also keeps A's function past its size (CuTe's coalesce_x).

    Past ``size(A)`` the last mode absorbs the overflow, so a trailing size-1 mode's stride matters:
    ``(4,1):(1,0)`` is 0 at index 4 whereas ``4:1`` is 4. Only the last mode's stride is used by
    composition, so a placeholder shape keeps that mode from being dropped.
    """
    fs, fd = A.flat
    cf = coalesce_flat_int if A.is_static else coalesce_flat
    if is_one(fs[-1]):
        return cf(fs[:-1] + (2,), fd)
    S, D = cf(fs, fd)
    if not S:
        return [1], [0]
    return S, D


def _compose_layouts(A: Layout, B: Layout) -> Layout:
    if A.is_static and B.is_static:
        S, D = _coalesce_x_int(*A.flat)
        flags = [False]

        def go_int(bs: Any, bd: Any) -> tuple[Any, Any]:
            if type(bs) is tuple:
                pairs = [go_int(x, y) for x, y in zip(bs, bd)]
                return tuple(p[0] for p in pairs), tuple(p[1] for p in pairs)
            return _compose_leaf_int(S, D, bs, bd, A, B, flags)

        shp, strd = go_int(B.shape, B.stride)
        R = Layout._make(shp, strd, True)
        if len(S) > 1 and (flags[0] or type(B.shape) is tuple):
            check_functional(A, B, R, force=flags[0])
        return R
    S, D = _coalesce_x(A)

    def go(bs: Any, bd: Any) -> tuple[Any, Any]:
        if type(bs) is tuple:
            ss = []
            ds = []
            for x, y in zip(bs, bd):
                a, b = go(x, y)
                ss.append(a)
                ds.append(b)
            return tuple(ss), tuple(ds)
        rs, rd = _compose_leaf(S, D, bs, bd, A, B)
        if len(rs) == 1:
            return rs[0], rd[0]
        return tuple(rs), tuple(rd)

    shp, strd = go(B.shape, B.stride)
    R = Layout._make(shp, strd, None)
    if type(B.shape) is tuple and len(S) > 1:
        check_functional(A, B, R)
    return R



@overload
def composition(A: Layout, B: Any) -> Layout: ...


@overload
def composition(A: Any, B: Any) -> Any: ...


def composition(A: Any, B: Any) -> Any:
    """composition(A, B) -> R with R(c) = A(B(c)) for every coordinate c of B; R is compatible with B.

    ``B`` may be a layout, an integer ``n`` (meaning ``n:1``), ``None`` (identity), or a tuple
    tiler applied by-mode: ``R = (A[0] o B[0], A[1] o B[1], ...)``; as in CuTe, modes of A beyond
    the tiler's rank are dropped.

    Preconditions (CuTe's weak divisibility conditions, checked where CuTe's static_asserts check them):
    a stride of B is a multiple of, or below, each shape of ``coalesce(A)`` it passes, and a shape of
    B is a multiple of the part of A it spans. Where CuTe's construction then is still not the
    composition (B's modes overlap in A's coordinates, or a stride below a shape does not divide it),
    a :class:`CompositionError` is raised where CuTe would return the wrong layout.

    >>> str(composition(Layout((6, 2), (8, 2)), Layout((4, 3), (3, 1))))
    '((2,2),3):((24,2),8)'
    >>> str(composition(Layout((10, 2), (16, 4)), (Layout(5, 2), Layout(2, 1))))
    '(5,2):(32,4)'
    """
    if type(A) is Layout and type(B) is Layout:
        if no_modes(A):
            A = UNIT  # a rank-0 layout is 1:0
        if no_modes(B):
            return B  # B's domain is {0}: R(0) = A(0) = 0, shaped as B
        if enabled() and (A._static or A.is_static) and (B._static or B.is_static):
            if c_compose is not None and c_enabled():
                R = c_compose(A, B)  # the kernel below in C, where it is exact and chained
                if R is not None:
                    return R
            f = A._flat
            S, D = coalesce_x_fast(f if f is not None else A.flat)
            f = B._flat
            R = compose_fast(S, D, B._shape, B._stride, f if f is not None else B.flat, lambda: (A, B))
            if R is not None:
                return R
        return _compose_layouts(A, B)
    if not isinstance(A, Layout):
        return dispatch("composition", A, B)
    if B is None:
        return A
    if no_modes(A):
        return composition(UNIT, B)
    if isinstance(B, Layout):
        return _compose_layouts(A, B)
    if type(B) is tuple:
        modes = modes_of(A)
        if len(B) > len(modes):
            raise LayoutError(
                f"composition: tiler {B!r} has {len(B)} modes but layout {A} has only {len(modes)}"
            )
        return make_layout(*[composition(m, b) for m, b in zip(modes, B)])
    if it.is_integer(B):
        b = it.as_leaf(B, "composition tiler")
        if type(b) is int and b < 1:
            raise LayoutError(f"composition: tiler size {b} must be >= 1")
        return _compose_layouts(A, Layout._make(b, 1))
    if hasattr(B, "_algebra_rhs_"):
        return B._algebra_rhs_("composition", A)
    raise LayoutError(f"composition: cannot compose {A} with {B!r}")
