"""coalesce and filter."""

from __future__ import annotations

from typing import Any, overload

from ..errors import LayoutError
from ..layout import Layout, make_layout
from ..speedups import c_enabled, enabled
from .core import EMPTY, coalesce_flat, coalesce_flat_int, dispatch, from_flat, is_zero, iter_leaves, modes_of, no_modes
from .kernels import c_coalesce, c_filter, coalesce_fast

_new = Layout.__new__


# ---------------------------------------------------------------------------------------------
# coalesce, filter
# ---------------------------------------------------------------------------------------------


@overload
def coalesce(layout: Layout, profile: Any = None) -> Layout: ...


@overload
def coalesce(layout: Any, profile: Any = None) -> Any: ...


def coalesce(layout: Any, profile: Any = None) -> Any:
    """coalesce(L) -> R with R(i) == L(i) for all i < size(L), and as few modes as possible.

    Flattens, drops size-1 modes, and merges adjacent modes ``(s0:d0),(s1:d1)`` with ``s0*d0 == d1``.
    With a tuple ``profile``, coalesces each mode ``i < len(profile)`` separately (by-mode),
    keeping the rank; a leaf profile coalesces the whole layout.

    >>> str(coalesce(Layout((2, (1, 6)), (1, (6, 2)))))
    '12:1'
    >>> str(coalesce(Layout(((4, 2), (2, 3)), ((1, 4), (16, 32))), (1, 1)))
    '(8,6):(1,16)'
    """
    if profile is None and c_coalesce is not None and enabled() and c_enabled():
        R = c_coalesce(layout)  # the kernel below, in C, for modes that fit in 64 bits
        if R is not None:
            return R
    if type(layout) is Layout and not isinstance(profile, tuple) and no_modes(layout):
        return EMPTY  # no modes to coalesce: the rank-0 layout (as the CuTe DSL answers), any leaf profile
    if type(layout) is Layout and (layout._static or layout.is_static) and profile is None and enabled():
        # concrete ints: drop size-1 modes and merge (s0:d0),(s1:d1) when s0*d0 == d1, in one pass.
        # A leading size-1 mode is carried as the current mode: it merges with the next one only
        # when their strides are equal (1*d == d'), which gives that next mode -- as dropping it would.
        f = layout._flat
        fs, fd = f if f is not None else layout.flat
        cs = fs[0]
        cd = fd[0]
        rs: list = []
        rd: list = []
        for k in range(1, len(fs)):
            sh = fs[k]
            st = fd[k]
            if cs * cd == st:  # merge (a size-1 mode merges as a no-op)
                cs *= sh
            elif sh != 1:
                if cs != 1:
                    rs.append(cs)
                    rd.append(cd)
                cs = sh
                cd = st
        R = _new(Layout)
        R._hash = None
        R._static = True
        if rs:
            rs.append(cs)
            rd.append(cd)
            R._shape = ts = tuple(rs)
            R._stride = td = tuple(rd)
            R._flat = (ts, td)
        elif cs == 1:
            R._shape = 1
            R._stride = 0
            R._flat = None
        else:
            R._shape = cs
            R._stride = cd
            R._flat = None
        return R
    if profile is None and type(layout) is Layout and layout._static:
        rs = []
        rd = []
        f = layout._flat
        pairs = zip(*f) if f is not None else iter_leaves(layout.shape, layout.stride)
        for sh, st in pairs:
            if sh == 1:
                continue
            if rs and rs[-1] * rd[-1] == st:
                rs[-1] *= sh
            else:
                rs.append(sh)
                rd.append(st)
        if not rs:
            return Layout._make(1, 0, True)
        if len(rs) == 1:
            return Layout._make(rs[0], rd[0], True)
        return Layout._make(tuple(rs), tuple(rd), True)
    if not isinstance(layout, Layout):
        return dispatch("coalesce", layout, profile)
    if type(profile) is tuple:
        modes = modes_of(layout)
        if len(profile) > len(modes):
            raise LayoutError(
                f"coalesce: profile {profile} has more modes than layout {layout} (rank {len(modes)})"
            )
        out = [coalesce(m, p) for m, p in zip(modes, profile)] + modes[len(profile):]
        return make_layout(*out) if out else EMPTY  # profile (): a rank-0 layout stays ():()
    fs, fd = layout.flat
    if layout.is_static:
        return from_flat(*coalesce_flat_int(fs, fd), True)
    return from_flat(*coalesce_flat(fs, fd))


@overload
def filter(layout: Layout, profile: Any = None) -> Layout: ...


@overload
def filter(layout: Any, profile: Any = None) -> Any: ...


def filter(layout: Any, profile: Any = None) -> Any:  # noqa: A001 - CuTe's name
    """filter(L) -> coalesce(L) with every stride-0 mode removed: the image of L, enumerated once.

    >>> str(filter(Layout((4, 2, 3), (1, 0, 4))))
    '12:1'
    """
    if not isinstance(profile, tuple) and type(layout) is Layout and no_modes(layout):
        return EMPTY
    if profile is None and type(layout) is Layout and layout._static and enabled():
        if c_filter is not None and c_enabled():
            R = c_filter(layout)  # the construction below, in C, for modes that fit in 64 bits
            if R is not None:
                return R
        fs, fd = layout._flat or layout.flat
        return from_flat(*coalesce_fast([s for s, d in zip(fs, fd) if d], [d for d in fd if d]), True)
    if not isinstance(layout, Layout):
        return dispatch("filter", layout, profile)
    if type(profile) is tuple:
        modes = modes_of(layout)
        if len(profile) > len(modes):
            raise LayoutError(
                f"filter: profile {profile} has more modes than layout {layout} (rank {len(modes)})"
            )
        out = [filter(m, p) for m, p in zip(modes, profile)] + modes[len(profile):]
        return make_layout(*out) if out else EMPTY
    fs, fd = layout.flat
    ks = [s for s, d in zip(fs, fd) if not is_zero(d)]
    kd = [d for d in fd if not is_zero(d)]
    return from_flat(*coalesce_flat(ks, kd))
