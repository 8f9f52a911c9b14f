"""Layouts: functions from coordinates to offsets, written ``Shape:Stride``.

A layout pairs a shape with a congruent stride. It maps a coordinate to the inner product of
coordinate and stride; a 1-D index is first turned into a coordinate colexicographically (the
leftmost mode moves fastest). Take ``L = (4,2):(2,1)``, a 4x2 row-major matrix::

    index i    0  1  2  3  4  5  6  7
    coord    (0,0)(1,0)(2,0)(3,0)(0,1)(1,1)(2,1)(3,1)
    L(i)       0  2  4  6  1  3  5  7

Check one by hand: ``L(5) = L(1,1) = 1*2 + 1*1 = 3``.

    >>> L = Layout((4, 2), (2, 1))
    >>> L(5), L(1, 1), str(L), L.size(), L.cosize()
    (3, 3, '(4,2):(2,1)', 8, 8)
    >>> L.table().tolist()
    [0, 2, 4, 6, 1, 3, 5, 7]
    >>> L.grid().tolist()
    [[0, 1], [2, 3], [4, 5], [6, 7]]
    >>> Layout((8, 4))        # compact column-major by default
    Layout((8, 4), (1, 8))
    >>> make_layout((8, 4), order="right")
    Layout((8, 4), (4, 1))

Beyond its size a layout is extended as CuTe extends it: the last mode absorbs the overflow
(``Layout((4, 2), (2, 1))(9) == 1*2 + 2*1``). Shapes and strides may hold sympy integer
expressions (see :mod:`layoutalg.inttuple`); such layouts evaluate to expressions and
``subs`` turns them into concrete layouts.
"""

from __future__ import annotations

import marshal
from operator import attrgetter as _attrgetter
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import sympy

from . import inttuple as it
from .errors import LayoutError
from .hooks import svg_of
from .inttuple import IntTuple, flatten, is_tuple, product
from .speedups import ext, register_layout

__all__ = [
    "Layout",
    "make_layout",
    "make_ordered_layout",
    "size",
    "cosize",
    "rank",
    "depth",
    "shape",
    "stride",
    "append",
    "prepend",
    "group",
    "flatten_layout",
    "is_layout",
]


def _check_positive_shape(shape: IntTuple, op: str) -> None:
    for s in flatten(shape):
        if type(s) is int:
            if s < 1:
                raise LayoutError(f"{op}: shape {shape!s} has entry {s}; shape entries must be >= 1")
        elif s.is_positive is False:
            raise LayoutError(f"{op}: shape {shape!s} has entry {s}, which is not positive")


def fmt_tuple(t: Any) -> str:
    """An int tuple as CuTe prints it, without spaces: ``(4,(2,m))``.

    >>> fmt_tuple((4, (2, 8)))
    '(4,(2,8))'
    """
    if type(t) is tuple:
        return "(" + ",".join(fmt_tuple(x) for x in t) + ")"
    if type(t) is int:
        return str(t)
    if not isinstance(t, sympy.Expr) or t.is_Number:  # numbers compare equal across types: not cached
        return str(t).replace(" ", "")
    text = _LEAF_TEXT.get(t)
    if text is None:  # sympy's printer is slow; a value prints the same every time
        if len(_LEAF_TEXT) >= 4096:
            _LEAF_TEXT.clear()
        text = _LEAF_TEXT[t] = str(t).replace(" ", "")
    return text


#: the text of each symbolic sympy leaf printed so far
_LEAF_TEXT: dict[Any, str] = {}


class _PyLayoutFields:
    """The five fields of a :class:`Layout` and its checked construction, in pure Python.

    ``layoutalg.speedups._ext.LayoutBase`` is the same in C (built where a compiler is at hand): it
    validates plain-int tuples itself and defers to the same Python checks (``checked``) for the
    rest, so results and error messages are one. ``LAYOUTALG_PURE_PYTHON=1`` selects this class.
    """

    __slots__ = ("_shape", "_stride", "_flat", "_hash", "_static")
    _shape: IntTuple
    _stride: IntTuple
    _flat: tuple[tuple[Any, ...], tuple[Any, ...]] | None
    _hash: int | None
    _static: bool | None

    if TYPE_CHECKING:

        @property
        def shape(self) -> IntTuple:
            """The shape: an int, a sympy integer expression, or a tuple of shapes."""

        @property
        def stride(self) -> IntTuple:
            """The stride, congruent with the shape."""

    else:
        # read-only fields (a C getter: about as fast as reading a slot)
        shape = property(_attrgetter("_shape"), doc="The shape: an int, a sympy integer expression, or a tuple of shapes.")
        stride = property(_attrgetter("_stride"), doc="The stride, congruent with the shape.")

    def __init__(self, shape: Any, stride: Any = None) -> None:
        if stride is not None:
            e = _SEEN.get(id(shape))
            if e is None or e[1] is not stride:
                e = checked(shape, stride)
        else:
            e = _SEEN_COMPACT.get(id(shape))
            if e is None:
                e = checked_compact(shape)
        self._shape = e[2]
        self._stride = e[3]
        self._flat = e[4]
        self._hash = None
        self._static = e[5]


_LayoutFields = _PyLayoutFields
if ext is not None and not TYPE_CHECKING:
    _LayoutFields = ext.LayoutBase  # the C twin of the class above


class Layout(_LayoutFields):
    """A layout ``shape:stride``; immutable and hashable.

    ``Layout(shape)`` is compact column-major (CuTe's LayoutLeft): stride = prefix products.

    Invariant: ``shape`` and ``stride`` are congruent IntTuples of normalised leaves (Python ints
    or sympy integer expressions), every shape leaf >= 1. Every construction checks it; a
    (shape, stride) pair of plain ints already checked is recognised and not walked again.
    """

    __slots__ = ()

    @staticmethod
    def _make(shape: IntTuple, stride: IntTuple, static: bool | None = None,
              flat: tuple[tuple, tuple] | None = None) -> Layout:
        """Construct without validation (for internal use: inputs already normalised and congruent;
        ``flat``, when given, is their flattening)."""
        self = _new(Layout)
        self._shape = shape
        self._stride = stride
        self._flat = flat
        self._hash = None
        self._static = static
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        return (Layout, (self._shape, self._stride))

    # --- structure -------------------------------------------------------------------------

    @property
    def flat(self) -> tuple[tuple, tuple]:
        """(flat shape, flat stride) leaves, cached."""
        f = self._flat
        if f is None:
            f = flatten_pair(self.shape, self.stride)
            self._flat = f
        return f

    @property
    def is_static(self) -> bool:
        """True iff every shape and stride leaf is a concrete int (no symbols)."""
        s = self._static
        if s is None:
            fs, fd = self.flat
            # sums of Python ints are ints; any sympy leaf makes the sum a sympy object
            s = type(sum(fs)) is int and type(sum(fd)) is int
            self._static = s
        return s

    def __len__(self) -> int:
        return len(self.shape) if type(self.shape) is tuple else 1

    def rank(self) -> int:
        """Number of top-level modes."""
        return len(self)

    def depth(self) -> int:
        """Nesting depth of the shape (0 for a single integer mode)."""
        return it.depth(self.shape)

    def size(self) -> Any:
        """size(L) = product of the shape: the size of the domain."""
        if _c_size is not None:
            n = _c_size(self)
            if n is not None:
                return n
        fs = self.flat[0]
        p = 1
        for s in fs:
            p = p * s
        return p

    def cosize(self) -> Any:
        """cosize(L) = max offset + 1 over the domain (``L(size-1) + 1`` for non-negative strides)."""
        if _c_cosize is not None:
            n = _c_cosize(self)
            if n is not None:
                return n
        fs, fd = self.flat
        hi = 0
        lo = 0
        for s, d in zip(fs, fd):
            if type(s) is int and type(d) is int:
                if d > 0:
                    hi += (s - 1) * d
                else:
                    lo += (s - 1) * d
            else:
                sg = it.signum(d)
                if sg >= 0:
                    hi = hi + (s - 1) * d
                else:
                    lo = lo + (s - 1) * d
        return hi + 1

    def __getitem__(self, i: Any) -> "Layout":
        if type(self.shape) is not tuple:
            if i in (0, -1):
                return self
            raise LayoutError(f"Layout[{i}]: layout {self} has rank 1")
        shape, stride = self.shape, cast(tuple, self.stride)
        try:
            return Layout._make(shape[i], stride[i])
        except (IndexError, TypeError):
            raise LayoutError(f"Layout[{i!r}]: no such mode in {self} (rank {len(self)})") from None

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    # --- evaluation ------------------------------------------------------------------------

    def __call__(self, *coord: Any) -> Any:
        """Offset of a coordinate: ``L(i)`` for a 1-D index, ``L(c0, c1, ...)`` one coordinate per mode.

        Each per-mode coordinate is an int (a 1-D index within that mode) or a nested tuple.
        numpy integer arrays evaluate element-wise; sympy symbols give an expression.
        """
        if len(coord) == 1:
            c = coord[0]
            if _c_eval_index is not None:
                r = _c_eval_index(self, c)
                if r is not None:
                    return r
        elif len(coord) == 0:
            raise LayoutError(f"Layout.__call__: no coordinate given to {self}")
        else:
            c = coord
            if len(c) != len(self):
                raise LayoutError(
                    f"Layout.__call__: {len(c)} coordinates given to {self}, which has rank {len(self)}"
                )
        if type(c) is int:
            fs, fd = self.flat
            n = len(fs)
            r = 0
            if c < 0:
                # CuTe (C++) splits a negative index with truncating division: -1 in (2,2) is (-1, 0)
                for k in range(n - 1):
                    q = -((-c) // fs[k])
                    r += (c - q * fs[k]) * fd[k]
                    c = q
                return r + c * fd[n - 1] if n else 0
            for k in range(n - 1):
                s = fs[k]
                r += (c % s) * fd[k]
                c //= s
            return r + c * fd[n - 1] if n else 0
        if isinstance(c, np.ndarray):
            return self._eval_array(c)
        if type(c) is tuple:
            if type(self.shape) is not tuple or len(c) != len(self.shape):
                raise LayoutError(
                    f"Layout.__call__: coordinate {c} is not congruent with the modes of {self}"
                )
            sh, st = self.shape, self.stride
            r = 0
            for x, s, d in zip(c, sh, cast(tuple, st)):  # the common case: int coordinates of int modes, x * d each
                if type(x) is not int or type(s) is not int or type(d) is not int:
                    break
                r += x * d
            else:
                return r
            if any(isinstance(x, np.ndarray) for x in c):
                return sum(self[k]._eval_any(x) for k, x in enumerate(c))
            return it.crd2idx(c, sh, st)
        if isinstance(c, (np.integer,)):
            return self(int(c))
        if isinstance(c, sympy.Basic):
            if isinstance(c, sympy.Integer):
                return self(int(c))
            return it.crd2idx(c, self.shape, self.stride)
        raise LayoutError(f"Layout.__call__: cannot evaluate {self} at {c!r}")

    def _eval_any(self, c: Any) -> Any:
        if isinstance(c, np.ndarray):
            return self._eval_array(c)
        return self(c)

    def _eval_array(self, idx: np.ndarray) -> np.ndarray:
        if not self.is_static:
            raise LayoutError(f"Layout: cannot evaluate symbolic layout {self} on an array")
        idx = np.asarray(idx, dtype=np.int64)
        fs, fd = self.flat
        out = np.zeros(idx.shape, dtype=np.int64)
        rest = idx
        n = len(fs)
        neg = bool((idx < 0).any())
        for k in range(n - 1):
            q, r = np.divmod(rest, fs[k])
            if neg:  # truncating division for negative indices, as CuTe's C++ does
                q = np.where(rest < 0, -((-rest) // fs[k]), q)
                r = rest - q * fs[k]
            if fd[k]:
                out += r * fd[k]
            rest = q
        if n:
            out += rest * fd[n - 1]
        return out

    def table(self) -> np.ndarray:
        """numpy int64 array of ``L(i)`` for every ``i < size(L)``, in index order (vectorized).

        Precondition: ``size(L) <= MAX_TABLE`` (a LayoutError names both, before any allocation).
        """
        if not self.is_static:
            raise LayoutError(f"table: layout {self} has symbolic entries; substitute values first (subs)")
        check_table_size(self, "table")
        fs, fd = self.flat
        modes = [(s, d) for s, d in zip(fs, fd) if s != 1]
        # merge contiguous modes to keep the broadcast small
        merged: list[list[int]] = []
        for s, d in modes:
            if merged and merged[-1][0] * merged[-1][1] == d:
                merged[-1][0] *= s
            else:
                merged.append([s, d])
        if not merged:
            return np.zeros(1, dtype=np.int64)
        # colexicographic: mode 0 varies fastest, so grow the table from mode 0 outwards; each step
        # broadcasts a mode over the (long, contiguous) table built so far
        s0, d0 = merged[0]
        t = np.arange(0, s0 * d0, d0, dtype=np.int64) if d0 else np.zeros(s0, dtype=np.int64)
        for s, d in merged[1:]:
            a = np.arange(0, s * d, d, dtype=np.int64) if d else np.zeros(s, dtype=np.int64)
            t = np.add.outer(a, t).reshape(-1)
        return t

    def grid(self) -> np.ndarray:
        """For a rank-2 layout, the rows x cols int64 array ``G[r, c] = L(r, c)``."""
        if len(self) != 2:
            raise LayoutError(f"grid: layout {self} has rank {len(self)}, grid needs rank 2")
        check_table_size(self, "grid")
        return np.add.outer(self[0].table(), self[1].table())

    # --- symbolic --------------------------------------------------------------------------

    @property
    def free_symbols(self) -> set:
        """The sympy symbols appearing in shape or stride."""
        out: set = set()
        for x in self.flat[0] + self.flat[1]:
            if type(x) is not int:
                out |= x.free_symbols
        return out

    def subs(self, mapping: dict | None = None, **kwargs: Any) -> "Layout":
        """Substitute values for symbols: ``L.subs({m: 2, k: 2})`` or ``L.subs(m=2, k=2)``."""
        m: dict = {}
        for key, v in dict(mapping or {}, **kwargs).items():
            if isinstance(v, str):  # sympy would evaluate text as Python: text is data, never code
                raise LayoutError(f"subs: the value {v!r} for {key} is text; give an int or a sympy expression")
            if isinstance(key, str):
                hits = [s for s in self.free_symbols if s.name == key]
                for s in hits:
                    m[s] = v
            else:
                m[key] = v

        def go(t):
            if type(t) is tuple:
                return tuple(go(x) for x in t)
            if type(t) is int:
                return t
            return it.as_leaf(sympy.sympify(t).subs(m), "subs")

        return Layout(go(self.shape), go(self.stride))

    # --- printing and comparison -----------------------------------------------------------

    def __str__(self) -> str:
        return f"{fmt_tuple(self.shape)}:{fmt_tuple(self.stride)}"

    def __repr__(self) -> str:
        if self.is_static:
            return f"Layout({self.shape!r}, {self.stride!r})"
        return f"parse({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Layout):
            return NotImplemented
        return self.shape == other.shape and self.stride == other.stride

    def __hash__(self) -> int:
        h = self._hash
        if h is None:
            h = hash((self.shape, self.stride))
            self._hash = h
        return h

    def _repr_svg_(self) -> str | None:  # pragma: no cover - exercised in notebooks
        """The picture a notebook shows (drawn by layoutalg.viz through :mod:`layoutalg.hooks`)."""
        return svg_of(self)




def flatten_pair(s: Any, d: Any) -> tuple[tuple, tuple]:
    """Flatten a congruent (shape, stride) pair in one pass."""
    if type(s) is not tuple:
        return (s,), (d,)
    fs: list = []
    fd: list = []
    for x, y in zip(s, d):
        if type(x) is tuple:
            for x2, y2 in zip(x, y):  # depth 2 inline: the common case for tile layouts
                if type(x2) is tuple:
                    a, b = flatten_pair(x2, y2)
                    fs += a
                    fd += b
                else:
                    fs.append(x2)
                    fd.append(y2)
        else:
            fs.append(x)
            fd.append(y)
    return tuple(fs), tuple(fd)


MAX_DEPTH = 64  # deeper nesting than any layout needs; refused so no operation can recurse too far


def _static_flat(s: Any, d: Any) -> tuple[tuple, tuple] | None:
    """(flat shape, flat stride) if ``s``/``d`` are congruent tuples of plain ints with shapes >= 1, else None.

    One pass validates and flattens (depth <= 2 inline, deeper via _static_congruent).
    """
    if type(s) is int:
        if type(d) is int and s >= 1:
            return (s,), (d,)
        return None
    if type(s) is not tuple or type(d) is not tuple or len(s) != len(d):
        return None
    fs: list = []
    fd: list = []
    for x, y in zip(s, d):
        if type(x) is int:
            if type(y) is not int or x < 1:
                return None
            fs.append(x)
            fd.append(y)
        elif type(x) is tuple and type(y) is tuple and len(x) == len(y):
            for x2, y2 in zip(x, y):
                if type(x2) is int:
                    if type(y2) is not int or x2 < 1:
                        return None
                    fs.append(x2)
                    fd.append(y2)
                elif _static_congruent(x2, y2, 2):
                    a, b = flatten_pair(x2, y2)
                    fs += a
                    fd += b
                else:
                    return None
        else:
            return None
    return tuple(fs), tuple(fd)


def _static_congruent(s: Any, d: Any, depth: int = 0) -> bool:
    """True iff shape ``s`` and stride ``d`` are congruent tuples of plain ints with every shape >= 1."""
    if type(s) is int:
        return type(d) is int and s >= 1
    if type(s) is tuple and type(d) is tuple and len(s) == len(d) and depth < MAX_DEPTH:
        for x, y in zip(s, d):
            if type(x) is int:
                if type(y) is not int or x < 1:
                    return False
            elif type(x) is tuple and type(y) is tuple and len(x) == len(y):
                for x2, y2 in zip(x, y):  # depth 2 inline
                    if type(x2) is int:
                        if type(y2) is not int or x2 < 1:
                            return False
                    elif not _static_congruent(x2, y2, depth + 2):
                        return False
            else:
                return False
        return True
    return False


_new = Layout.__new__
_dumps = marshal.dumps

# A checked construction is one of:  (shape given, stride given, shape, stride, flat, static).
_Checked = tuple[Any, Any, IntTuple, IntTuple, "tuple[tuple[Any, ...], tuple[Any, ...]] | None", "bool | None"]

#: id(shape) -> the checked construction from that very shape object (and the stride object in
#: slot 1). The entry holds both objects, so no other live object can have that id: a hit means
#: the same immutable tuples of ints were checked before.
_SEEN: dict[int, _Checked] = {}
_SEEN_COMPACT: dict[int, _Checked] = {}
#: marshal.dumps((shape, stride), 2) -> checked construction. marshal spells every type apart (1, True
#: and 1.0 differ; lists are not tuples), so equal keys mean equal tuples of plain ints.
_KNOWN: dict[bytes, _Checked] = {}
_KNOWN_MAX = 4096
_SEEN_MAX = 512  # small: the tuples it holds alive are mostly short-lived


def _remember(table: dict, key: Any, e: _Checked, limit: int = _SEEN_MAX) -> None:
    if len(table) >= limit:
        table.clear()
    table[key] = e


def checked(shape: Any, stride: Any) -> _Checked:
    """Validate and normalise ``shape``:``stride`` (Layout's invariant), or raise LayoutError.

    What the pure-Python ``Layout(shape, stride)`` runs (and the C construction defers to for
    anything but plain ints): a test hook too, tests/test_speedups.py compares it with the C path."""
    try:
        key: bytes | None = _dumps((shape, stride), 2)
    except (ValueError, RecursionError):  # numpy or sympy leaves, or nested too deeply
        key = None
    if key is not None:
        k = _KNOWN.get(key)
        if k is not None:
            e: _Checked = (shape, stride, k[2], k[3], k[4], True)
            _remember(_SEEN, id(shape), e)
            return e
    flat = _static_flat(shape, stride)
    if flat is not None:
        e = (shape, stride, shape, stride, flat, True)
        if key is not None:
            _remember(_KNOWN, key, e, _KNOWN_MAX)
        _remember(_SEEN, id(shape), e)
        return e
    return checked_symbolic(shape, stride)


#: sympy leaves seen normalised before (``as_leaf(x) is x``) -> True if ``x`` passed as a shape leaf
#: (not known to be <= 0), False if only as a stride leaf. sympy expressions are immutable values, so
#: a layout whose every leaf is an int or one of these is valid as the full check would find it.
_SYM_LEAVES: dict[Any, bool] = {}
_SYM_LEAVES_MAX = 4096


def _mixed_walk(s: Any, d: Any, fs: list, fd: list, depth: int) -> bool:
    """Flatten ``s``:``d`` into ``fs``/``fd`` if they are congruent tuples of ints (shapes >= 1) and known
    sympy leaves (_SYM_LEAVES); False as soon as anything else is met."""
    if type(s) is tuple:
        if type(d) is not tuple or len(s) != len(d) or depth >= MAX_DEPTH:
            return False
        for x, y in zip(s, d):  # noqa: SIM110 - a loop: all() over a generator is slower
            if not _mixed_walk(x, y, fs, fd, depth + 1):
                return False
        return True
    if type(s) is int:
        if s < 1 or type(d) is tuple:
            return False
    elif type(s) in _SYM_TYPES:
        if _SYM_LEAVES.get(s) is not True:
            return False
    else:
        return False
    if type(d) is not int and (type(d) not in _SYM_TYPES or _SYM_LEAVES.get(d) is None):
        return False
    fs.append(s)
    fd.append(d)
    return True


#: the sympy classes of the leaves in _SYM_LEAVES (a type test before the dict lookup keeps other
#: objects, unhashable or comparing equal to a sympy value, out of it)
_SYM_TYPES: set[type] = set()


def checked_symbolic(shape: Any, stride: Any) -> _Checked:
    """The check of a layout that is not congruent tuples of plain ints: sympy leaves, numpy ints,
    lists, or bad input (the LayoutError is raised here)."""
    fs: list = []
    fd: list = []
    if _SYM_LEAVES and _mixed_walk(shape, stride, fs, fd, 0):
        return (shape, stride, shape, stride, (tuple(fs), tuple(fd)), False)
    try:
        shape = it.normalize(shape, "Layout shape")
        stride = it.normalize(stride, "Layout stride")
    except RecursionError:
        raise LayoutError(f"Layout: shape or stride is nested deeper than {MAX_DEPTH} levels") from None
    if it.depth(shape) > MAX_DEPTH:
        raise LayoutError(f"Layout: shape is nested {it.depth(shape)} levels deep, more than {MAX_DEPTH}")
    _check_positive_shape(shape, "Layout")
    if not it.congruent(shape, stride):
        raise LayoutError(
            f"Layout: stride {fmt_tuple(stride)} is not congruent with shape {fmt_tuple(shape)} "
            "(they must have the same nesting)"
        )
    if len(_SYM_LEAVES) >= _SYM_LEAVES_MAX:
        _SYM_LEAVES.clear()
    for leaves, as_shape in ((flatten(shape), True), (flatten(stride), False)):
        for x in leaves:
            if isinstance(x, sympy.Basic):
                _SYM_TYPES.add(type(x))
                if as_shape or x not in _SYM_LEAVES:
                    _SYM_LEAVES[x] = as_shape
    return (None, None, shape, stride, None, None)


def checked_compact(shape: Any) -> _Checked:
    """Validate ``shape`` and give it CuTe's compact column-major (LayoutLeft) stride (``Layout(shape)``
    in pure Python; a test hook like :func:`checked`)."""
    given = shape
    try:
        shape = it.normalize(shape, "Layout shape")
    except RecursionError:
        raise LayoutError(f"Layout: shape is nested deeper than {MAX_DEPTH} levels") from None
    if it.depth(shape) > MAX_DEPTH:
        raise LayoutError(f"Layout: shape is nested {it.depth(shape)} levels deep, more than {MAX_DEPTH}")
    _check_positive_shape(shape, "Layout")
    stride = it.compact_major(shape)
    flat = _static_flat(given, stride)
    if flat is not None:  # ``given`` is an (immutable) int or tuple of ints: remember it
        e: _Checked = (given, None, given, stride, flat, True)
        _remember(_SEEN_COMPACT, id(given), e)
        return e
    return (None, None, shape, stride, None, None)


#: the C kernels of size, cosize and L(i), where built (each returns None where Python must answer)
_c_size = ext.size if ext is not None else None
_c_cosize = ext.cosize if ext is not None else None
_c_eval_index = ext.eval_index if ext is not None else None

register_layout(Layout, checked_symbolic, checked_compact)
if ext is not None:
    # C construction: plain-int tuples are checked in C, anything else by checked/checked_compact
    Layout._make = ext.make  # type: ignore[method-assign]


#: The most entries an int64 array of a whole layout's offsets may have (512 MiB): Layout.table and
#: grid, and the pictures and bank analyses built on them, refuse larger layouts before allocating.
MAX_TABLE = 1 << 26


def check_table_size(L: Any, op: str, n: Any = None) -> int:
    """``size(L)`` (or ``n``) as an int, or a LayoutError naming ``op``, the size and MAX_TABLE when larger."""
    n = L.size() if n is None else n
    if type(n) is not int:
        raise LayoutError(f"{op}: {L} has symbolic size {n}; substitute values first (subs)")
    if n > MAX_TABLE:
        raise LayoutError(
            f"{op}: {L} has {n} entries, more than the limit of {MAX_TABLE} ({op} needs every offset); "
            "work on a part of it (e.g. its composition with a smaller tile)"
        )
    return n


def is_layout(x: Any) -> bool:
    """True iff ``x`` is a plain :class:`Layout`."""
    return isinstance(x, Layout)


def make_layout(*args: Any, stride: Any = None, order: Any = None) -> Layout:
    """Build a layout.

    - ``make_layout(L0, L1, ...)``: concatenate layouts into one whose mode i is ``Li``;
    - ``make_layout(shape)``: compact column-major (LayoutLeft), or ``order="right"`` for row-major;
    - ``make_layout(shape, stride)``: the given stride;
    - ``make_layout(shape, order=(...))``: compact with modes ordered by the given ranks.

    >>> make_layout(Layout(4, 2), Layout(3, 8))
    Layout((4, 3), (2, 8))
    >>> make_layout((2, 3, 4), order=(1, 2, 0))
    Layout((2, 3, 4), (4, 8, 1))
    """
    if args and all(isinstance(a, Layout) for a in args):
        if stride is not None or order is not None:
            raise LayoutError("make_layout: stride/order apply to a shape, not to layouts")
        if len(args) == 1 and False:
            return args[0]
        return Layout._make(tuple(a.shape for a in args), tuple(a.stride for a in args))
    if len(args) == 2 and stride is None:
        shp, stride = args
    elif len(args) == 1:
        shp = args[0]
    else:
        raise LayoutError(f"make_layout: expected layouts, or a shape (and stride), got {args!r}")
    if isinstance(shp, Layout):
        raise LayoutError("make_layout: cannot mix a layout with a stride")
    if stride is not None:
        if order is not None:
            raise LayoutError("make_layout: give a stride or an order, not both")
        return Layout(shp, stride)
    if isinstance(order, str):
        key = order.lower().replace("_", "").replace("-", "")
        aliases = {"left": "left", "layoutleft": "left", "col": "left", "colmajor": "left", "columnmajor": "left",
                   "right": "right", "layoutright": "right", "row": "right", "rowmajor": "right"}
        if key not in aliases:
            raise LayoutError(f"make_layout: order {order!r} is not 'left' (column-major) or 'right' (row-major)")
        order = aliases[key]
    if order is None or order == "left":
        return Layout(shp)
    if order == "right":
        shp = it.normalize(shp, "make_layout shape")
        return Layout(shp, it.compact_major(shp, right=True))
    return make_ordered_layout(shp, order)


def make_ordered_layout(shp: Any, order: Any) -> Layout:
    """Compact layout of ``shp`` whose modes get strides in increasing ``order`` (CuTe's compact_order).

    ``order`` is congruent with ``shp`` or gives one rank per mode; a mode's strides start at the
    product of the extents of the modes of lower order and run compact column-major inside it
    (modes of equal order start at the same stride, as in CuTe; a size-1 leaf gets stride 0).

    >>> make_ordered_layout((2, 2, 2, 2), (0, 2, 3, 1))
    Layout((2, 2, 2, 2), (1, 4, 8, 2))
    """
    shp = it.normalize(shp, "make_ordered_layout shape")
    if isinstance(order, list):
        order = tuple(order)
    if not it.weakly_congruent(order, shp) or not all(type(o) is int for o in it.flatten(order)):
        raise LayoutError(f"make_ordered_layout: order {order!r} does not match shape {fmt_tuple(shp)}")
    # ref_shape/ref_order: one entry per leaf of the order, the shape's extent under that leaf
    ref_shape: list = []
    ref_order: list = []

    def collect(o: Any, s: Any) -> None:
        if type(o) is tuple:
            for a, b in zip(o, s):
                collect(a, b)
        else:
            ref_shape.append(it.product(s))
            ref_order.append(o)

    collect(order, shp)

    def strides(o: Any, s: Any) -> Any:
        if type(o) is tuple:
            return tuple(strides(a, b) for a, b in zip(o, s))
        start: Any = 1
        for rs, ro in zip(ref_shape, ref_order):
            if ro < o:
                start = start * rs
        return it.compact_major(s, start)

    return Layout(shp, strides(order, shp))


def _layout_arg(x: Any, op: str) -> Layout:
    if isinstance(x, Layout):
        return x
    raise LayoutError(f"{op}: expected a Layout, got {x!r}")


def size(x: Any, mode: int | None = None) -> Any:
    """size(L): the size of the domain of a layout (or the product of a shape); ``size(L, i)`` of mode i."""
    if _c_size is not None and type(x) is Layout and mode is None:
        n = _c_size(x)
        if n is not None:
            return n
    if mode is not None:
        return size(x[mode])
    if isinstance(x, Layout):
        return x.size()
    if is_tuple(x) or it.is_integer(x):
        return product(x)
    if hasattr(x, "size"):
        return x.size()
    raise LayoutError(f"size: {x!r} is neither a layout nor a shape")


def cosize(x: Any) -> Any:
    """cosize(L): one past the largest offset of a layout."""
    if _c_cosize is not None and type(x) is Layout:
        n = _c_cosize(x)
        if n is not None:
            return n
    if hasattr(x, "cosize"):
        return x.cosize()
    raise LayoutError(f"cosize: {x!r} is not a layout")


def rank(x: Any) -> int:
    """rank(L): number of top-level modes (of a layout or a shape)."""
    if isinstance(x, Layout):
        return len(x)
    if hasattr(x, "rank") and callable(x.rank):
        return x.rank()
    return it.rank(x)


def depth(x: Any) -> int:
    """depth(L): nesting depth of the shape."""
    if isinstance(x, Layout):
        return x.depth()
    if hasattr(x, "depth") and callable(x.depth):
        return x.depth()
    return it.depth(x)


def shape(x: Any) -> IntTuple:
    """shape(L): the shape of a Layout (or of anything with a ``shape``: a ComposedLayout, a Tensor)."""
    try:
        return x.shape
    except AttributeError:
        raise LayoutError(f"shape: {type(x).__name__} {x!r:.80} has no shape") from None


def stride(x: Any) -> IntTuple:
    """stride(L): the stride of a Layout (or of anything with a ``stride``)."""
    try:
        return x.stride
    except AttributeError:
        raise LayoutError(f"stride: {type(x).__name__} {x!r:.80} has no stride") from None


def _modes(L: Layout) -> list[Layout]:
    if type(L.shape) is tuple:
        return [Layout._make(s, d) for s, d in zip(L.shape, cast(tuple, L.stride))]
    return [L]


def append(L: Layout, x: Layout | None = None, n: int | None = None) -> Layout:
    """append(L, x): L with mode ``x`` added last; with ``n``, pad with ``x`` (default ``1:0``) to rank n.

    >>> append(Layout(4, 1), Layout(2, 4))
    Layout((4, 2), (1, 4))
    >>> append(Layout((4, 2)), n=3)
    Layout((4, 2, 1), (1, 4, 0))
    """
    L = _layout_arg(L, "append")
    x = Layout._make(1, 0) if x is None else _layout_arg(x, "append")
    modes = _modes(L)
    if n is None:
        modes.append(x)
    else:
        if n < len(modes):
            raise LayoutError(f"append: layout {L} already has rank {len(modes)} > {n}")
        if n == len(modes):
            return L
        modes.extend([x] * (n - len(modes)))
    return make_layout(*modes)


def prepend(L: Layout, x: Layout | None = None, n: int | None = None) -> Layout:
    """prepend(L, x): L with mode ``x`` added first; with ``n``, pad at the front to rank n."""
    L = _layout_arg(L, "prepend")
    x = Layout._make(1, 0) if x is None else _layout_arg(x, "prepend")
    modes = _modes(L)
    if n is None:
        modes.insert(0, x)
    else:
        if n < len(modes):
            raise LayoutError(f"prepend: layout {L} already has rank {len(modes)} > {n}")
        if n == len(modes):
            return L
        modes = [x] * (n - len(modes)) + modes
    return make_layout(*modes)


def group(L: Layout, begin: int, end: int) -> Layout:
    """group(L, b, e): modes ``b..e-1`` gathered into one nested mode.

    >>> group(Layout((2, 3, 4, 5)), 1, 3)
    Layout((2, (3, 4), 5), (1, (2, 6), 24))
    """
    L = _layout_arg(L, "group")
    modes = _modes(L)
    r = len(modes)
    for what, v in (("begin", begin), ("end", end)):
        if isinstance(v, bool) or not isinstance(v, int):
            raise LayoutError(f"group: {what} = {v!r} is not an int")
    if not (0 <= begin < end <= r):
        raise LayoutError(f"group: range [{begin}, {end}) is not inside the {r} modes of {L}")
    mid = make_layout(*modes[begin:end])
    return make_layout(*modes[:begin], mid, *modes[end:])


def flatten_layout(L: Layout) -> Layout:
    """flatten(L): the same function with every leaf a top-level mode.

    >>> flatten_layout(Layout(((2, 3), 4)))
    Layout((2, 3, 4), (1, 2, 6))
    """
    L = _layout_arg(L, "flatten")
    fs, fd = L.flat
    if type(L.shape) is not tuple:
        return L
    return Layout._make(fs, fd)
