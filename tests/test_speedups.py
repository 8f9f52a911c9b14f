"""The C fast paths (``layoutalg/speedups/_ext.c``) against the pure-Python code they stand in for.

``Layout(shape, stride)`` and ``Layout(shape)`` are checked in C for plain-int tuples and by
``layout.checked``/``checked_compact`` otherwise; ``coalesce``, ``filter``, ``right_inverse``, ``composition``
(and the composition inside ``logical_divide``), ``size``, ``cosize`` and ``L(i)`` run a C kernel
on flat int64 modes. Here every input -- valid or not, ints past 64 bits, bools, floats, numpy and
sympy leaves, lists, nesting past the depth limit -- must give what the pure-Python class gives:
the same fields (shape, stride, flat, static) or the same exception and message. The pure-Python
build itself (``LAYOUTALG_PURE_PYTHON=1``, what a machine without a C compiler runs) passes the
core tests in a child process.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

import layoutalg as la
from layoutalg import Layout, speedups
from layoutalg import layout as lm
from layoutalg.inttuple import flatten, unflatten

ROOT = Path(__file__).resolve().parents[1]
built = pytest.mark.skipif(speedups.ext is None, reason="the C fast paths are not built (pure Python)")


def default_and_exhaustive(n: int, *strategies: Any) -> Any:
    """A test body -> (the default test: ``n // 2`` examples of ``strategies``, its ``exhaustive`` twin: ``4 n``)."""

    def deco(body: Any) -> tuple[Any, Any]:
        ci = settings(max_examples=n // 2)(given(*strategies)(body))
        big = pytest.mark.exhaustive(settings(max_examples=4 * n)(given(*strategies)(body)))
        return built(ci), built(big)

    return deco


def test_built_where_a_compiler_is() -> None:
    """setup.py builds the extension (optional=True): with a C compiler present it must be there."""
    if os.environ.get("LAYOUTALG_PURE_PYTHON"):
        pytest.skip("LAYOUTALG_PURE_PYTHON is set")
    if not (shutil.which("cc") or shutil.which("gcc")):
        pytest.skip("no C compiler: layoutalg runs in pure Python")
    assert speedups.ext is not None, "a C compiler is here, but layoutalg.speedups._ext was not built"
    assert Layout.__mro__[1] is speedups.ext.LayoutBase


def _pure(shape: Any, stride: Any = None) -> tuple:
    """What the pure-Python class builds, or the exception it raises."""
    try:
        e = lm.checked(shape, stride) if stride is not None else lm.checked_compact(shape)
    except Exception as err:  # noqa: BLE001 - compared with what the C path raises
        return ("raised", type(err).__name__, str(err))
    flat = e[4] if e[4] is not None else lm.flatten_pair(e[2], e[3])
    static = e[5] if e[5] is not None else all(type(x) is int for x in flat[0] + flat[1])
    return ("layout", repr(e[2]), repr(e[3]), repr(flat), static)


def _fast(shape: Any, stride: Any = None) -> tuple:
    try:
        L = Layout(shape, stride) if stride is not None else Layout(shape)
    except Exception as err:  # noqa: BLE001
        return ("raised", type(err).__name__, str(err))
    assert L._hash is None or L._hash == hash(L)
    return ("layout", repr(L.shape), repr(L.stride), repr(L.flat), L.is_static)


BIG = 1 << 70
m = sympy.Symbol("m", positive=True, integer=True)
LEAVES = st.one_of(
    st.integers(-3, 40), st.sampled_from([1, 2, 4, 8, 1024, 0, -1, (1 << 63) - 1, 1 << 63, 1 << 64, BIG, -BIG]),
    st.sampled_from([True, False, 2.0, np.int64(4), np.int32(2), m, 2 * m, sympy.Integer(3), "4", None]),
)


def _nest(draw: Any, leaves: list, lists: bool = True) -> Any:
    """The leaves nested at random (a list for a tuple now and then, with ``lists``)."""
    if len(leaves) == 1 and draw(st.integers(0, 3)):
        return leaves[0]
    out, i = [], 0
    while i < len(leaves):
        k = draw(st.integers(1, len(leaves) - i))
        out.append(_nest(draw, leaves[i:i + k], lists) if k > 1 or draw(st.booleans()) else leaves[i])
        i += k
    t = tuple(out)
    return list(t) if lists and draw(st.integers(0, 30)) == 0 else t


@st.composite
def pairs(draw: Any) -> tuple[Any, Any]:
    """(shape, stride), mostly congruent int tuples, sometimes bent: a leaf swapped for a bad one,
    a mode dropped, a list for a tuple."""
    n = draw(st.integers(0, 6))
    shape = _nest(draw, [draw(st.integers(1, 16)) for _ in range(n)]) if n else ()
    flat = flatten(shape) if type(shape) is tuple else [shape]
    stride = unflatten([draw(st.integers(-8, 2048)) for _ in flat], shape) if type(shape) is tuple else 1
    kind = draw(st.integers(0, 5))
    if kind == 1:  # a shape leaf swapped for anything
        leaves = list(flatten(shape)) if type(shape) is tuple else [shape]
        if leaves:
            leaves[draw(st.integers(0, len(leaves) - 1))] = draw(LEAVES)
            shape = unflatten(leaves, shape) if type(shape) is tuple else leaves[0]
    elif kind == 2:  # a stride leaf swapped for anything
        leaves = list(flatten(stride)) if type(stride) is tuple else [stride]
        if leaves:
            leaves[draw(st.integers(0, len(leaves) - 1))] = draw(LEAVES)
            stride = unflatten(leaves, stride) if type(stride) is tuple else leaves[0]
    elif kind == 3 and type(stride) is tuple and stride:  # not congruent
        stride = stride[:-1]
    elif kind == 4:  # anything nested anyhow
        shape = _nest(draw, [draw(LEAVES) for _ in range(draw(st.integers(1, 5)))])
        stride = _nest(draw, [draw(LEAVES) for _ in range(draw(st.integers(1, 5)))])
    return shape, stride


def _construction_matches_pure_python(p: tuple[Any, Any]) -> None:
    shape, stride = p
    assert _fast(shape, stride) == _pure(shape, stride)
    assert _fast(shape) == _pure(shape)


test_construction_matches_pure_python, test_construction_matches_pure_python_exhaustive = \
    default_and_exhaustive(2000, pairs())(_construction_matches_pure_python)


@built
@pytest.mark.parametrize("shape, stride", [
    (4, 1), (1, 0), ((), ()), ((1,), (0,)), ((4, (2, 8)), (2, (1, 8))), ((BIG, 2), (1, BIG)),
    ((2, 3), (1 << 63, -(1 << 63))), ((True, 2), (1, 2)), ((2, 2), (True, False)), ((0, 2), (1, 2)),
    ([4, 2], (1, 4)), ((4, 2), [1, 4]), ((np.int64(4), 2), (1, 4)), ((m, 2), (1, m)), ((4, 2), (1,)),
    (((((((1,),),),),),), ((((((0,),),),),),)), (4, None),
])
def test_construction_cases(shape: Any, stride: Any) -> None:
    assert _fast(shape, stride) == _pure(shape, stride)


@built
def test_nesting_past_the_limit() -> None:
    deep: Any = 2
    for _ in range(lm.MAX_DEPTH + 3):
        deep = (deep,)
    assert _fast(deep, deep) == _pure(deep, deep)
    assert _fast(deep)[0] == "raised" == _pure(deep)[0]


@built
def test_compact_past_64_bits() -> None:
    # the product of the extents leaves int64 only after the last stride: Python finishes it
    assert _fast((1 << 40, 1 << 30)) == _pure((1 << 40, 1 << 30))
    assert Layout((1 << 40, 1 << 30, 3)).stride == (1, 1 << 40, 1 << 70)


@built
def test_fields_and_protocols() -> None:
    L = Layout((4, (2, 8)), (2, (1, 8)))
    assert (L.shape, L.stride, L.flat, L.is_static) == ((4, (2, 8)), (2, (1, 8)), ((4, 2, 8), (2, 1, 8)), True)
    with pytest.raises(AttributeError):
        L.shape = 3  # type: ignore[misc]
    import copy
    import pickle

    assert pickle.loads(pickle.dumps(L)) == L == copy.deepcopy(L)
    assert hash(L) == hash(Layout((4, (2, 8)), (2, (1, 8)))) and L._hash == hash(L)
    R = Layout._make((2, 2), (1, 2))
    assert type(R) is Layout and (R.shape, R.stride, R._flat, R._static, R._hash) == ((2, 2), (1, 2), None, None, None)
    assert R.flat == ((2, 2), (1, 2)) and R.is_static
    with pytest.raises(TypeError):
        Layout()  # type: ignore[call-arg]
    assert Layout(shape=(2, 2), stride=(2, 1)) == Layout((2, 2), (2, 1))


# ---- the C kernels of coalesce, filter, right_inverse and composition --------------------------------------------------

WIDE = st.sampled_from([1, 2, 3, 4, 8, 1 << 20, 1 << 31, 1 << 32, 1 << 62, 1 << 63, 1 << 64])


@st.composite
def wide_layouts(draw: Any) -> Layout:
    """Layouts whose extents and strides reach past 64 bits, so that the kernels' overflow checks hand over."""
    n = draw(st.integers(1, 6))
    shape = _nest(draw, [draw(st.sampled_from([1, 2, 3, 4, 8, 1 << 20, 1 << 32])) for _ in range(n)], lists=False)
    flat = flatten(shape) if type(shape) is tuple else [shape]
    signs = [draw(st.sampled_from([1, 1, 1, 0, -1])) for _ in flat]
    stride = [s * draw(WIDE) for s in signs]
    return Layout(shape, unflatten(stride, shape) if type(shape) is tuple else stride[0])


def _outcome(f: Any, L: Layout) -> tuple:
    try:
        r = f(L)
    except Exception as e:  # noqa: BLE001
        return ("raised", type(e).__name__, str(e))
    return ("layout", repr(r.shape), repr(r.stride), repr(r.flat))


def _kernels_match_the_reference(L: Layout) -> None:
    for f in (la.coalesce, la.right_inverse, la.filter):
        fast = _outcome(f, L)
        with speedups.reference_only():
            assert fast == _outcome(f, L)


test_kernels_match_the_reference, test_kernels_match_the_reference_exhaustive = \
    default_and_exhaustive(1500, st.one_of(wide_layouts()))(_kernels_match_the_reference)


def _complement_kernel_matches_the_reference(L: Layout, m: int) -> None:
    for f in (lambda x: la.complement(x, m), la.complement):
        fast = _outcome(f, L)
        with speedups.reference_only():
            assert fast == _outcome(f, L)


test_complement_kernel_matches_the_reference, test_complement_kernel_matches_the_reference_exhaustive = \
    default_and_exhaustive(1000, wide_layouts(), st.sampled_from([1, 2, 7, 64, 1000, 1 << 40, 1 << 62, (1 << 63) + 5]))(
        _complement_kernel_matches_the_reference)


def _outcome2(f: Any, A: Layout, B: Layout) -> tuple:
    try:
        r = f(A, B)
    except Exception as e:  # noqa: BLE001
        return ("raised", type(e).__name__, str(e))
    return ("layout", repr(r.shape), repr(r.stride), repr(r.flat))


@built
# 300: past that the derandomized draw reaches B of 2**21 elements with strides past 64 bits, whose functional check
# enumerates B's domain in Python ints (seconds per example: 50 s of CI for the same comparison)
@settings(max_examples=300)
@given(wide_layouts(), st.one_of(wide_layouts(), st.builds(Layout, st.sampled_from([1, 2, 4, (2, 2), (4, (2, 2))]))))
def test_composition_kernel_matches_the_reference(A: Layout, B: Layout) -> None:
    for f in (la.composition, la.logical_divide):
        fast = _outcome2(f, A, B)
        with speedups.reference_only():
            assert fast == _outcome2(f, A, B)


@built
def test_kernels_hand_over() -> None:
    """Where the C kernels decline (past 64 bits, symbolic, size 1), the Python code answers."""
    sp = speedups.ext
    assert sp.coalesce(Layout((2, 1 << 64), (1 << 63, 1))) is None
    assert sp.coalesce(la.parse("(m,2):(1,m)")) is None
    assert sp.coalesce(Layout((4, 2), (1, 4))) == Layout(8, 1)
    assert sp.right_inverse(Layout((1, 1), (3, 5))) is None
    assert sp.right_inverse(Layout((2, 2), (-1, 2))) is None
    assert sp.right_inverse(Layout((4, 2), (2, 1))) == Layout((2, 4), (4, 1))
    assert sp.coalesce("4:1") is None and sp.right_inverse(3) is None and sp.filter(None) is None
    assert sp.filter(Layout((4, 2), (0, 0))) == Layout(1, 0) and sp.filter(Layout((), ())) == Layout(1, 0)
    assert sp.filter(Layout((4, 3, 2), (1, 0, 4))) == Layout(8, 1)
    A = Layout((4, 8), (8, 1))
    assert sp.compose(A, Layout((2, 2), (1, 4))) == la.composition(A, Layout((2, 2), (1, 4)))
    assert sp.compose(A, Layout(4, 1 << 62)) == Layout(4, 1 << 60) and sp.compose(A, Layout(4, 1 << 63)) is None
    assert sp.compose(A, Layout((2, 2), (4, 1))) is None  # B's leaves do not chain: Python checks the function
    assert sp.compose(A, Layout(3, 2)) is None  # 3 elements at stride 2 of the extent 4: the reference refuses
    assert sp.complement(Layout((4, 2), (1, 16)), 128) == Layout((4, 4), (4, 32))
    assert sp.complement(Layout((2, 2), (1, 3)), 6) is None  # an inexact gap: the reference words the error
    assert sp.complement(Layout(4, -1), 8) is None and sp.complement(Layout(4, 1), (2, 4)) is None
    assert sp.complement(Layout(4, 1), 1 << 64) is None and sp.complement(Layout(4, 1), 0) is None
    assert sp.complement(Layout((), ()), 8) == Layout(8, 1) and sp.complement(Layout(4, 0), 1) == Layout(1, 0)


def test_pure_python_build() -> None:
    """The package without its C part (a machine with no compiler): the core and algebra tests. (The Python
    twins of the C kernels are also compared with C and the reference in this process: test_algebra_fast.)"""
    env = dict(os.environ, LAYOUTALG_PURE_PYTHON="1")
    tests = ["tests/test_layout.py", "tests/test_algebra_laws.py", "tests/test_errors.py",
             "tests/test_parse_fuzz.py", "layoutalg/layout.py", "layoutalg/algebra", "layoutalg/speedups"]
    code = ("import layoutalg.speedups as sp, sys, pytest; assert sp.ext is None; "
            f"sys.exit(pytest.main(['-q', '-p', 'no:cacheprovider', '-n', '0', '-x', *{tests!r}]))")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
