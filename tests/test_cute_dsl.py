"""The CuTe DSL (``nvidia-cutlass-dsl``) reads back what :func:`layoutalg.interop.cute.to_cute_dsl` writes.

The exported Python of 240 random layouts (nested, size-1 modes, zero and negative strides, swizzled
and offset composed layouts) runs inside one ``@cute.jit`` function on the CPU; the DSL prints each
static layout while tracing, and every print must be the layout's own text. The DSL prints static
integers without CuTe C++'s underscores and a swizzle as ``S<B,M,S>`` (docs/architecture.md).
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import random
import re

import pytest

import cute_oracle as co
from layoutalg.composed import ComposedLayout
from layoutalg.interop.cute import to_cute_dsl
from layoutalg.swizzle import Swizzle

_NO_DSL = "the CuTe DSL (nvidia-cutlass-dsl) is not installed"
# the DSL (about 2 s to import) is imported by the worker that runs these tests, not at every collection
pytestmark = pytest.mark.skipif(importlib.util.find_spec("cutlass") is None, reason=_NO_DSL)


@pytest.fixture(autouse=True, scope="module")
def _cute_dsl() -> None:
    pytest.importorskip("cutlass.cute", reason=_NO_DSL)


def _layouts(n: int = 240) -> list:
    r = random.Random(5)
    out = []
    for k in range(n):
        L = co.rand_layout(r) if k % 2 else co.rand_compact(r)
        if k % 5 == 0:
            L = ComposedLayout(Swizzle(r.randint(1, 3), r.randint(0, 3), r.choice([3, 4, -3])), r.choice([0, 8]), L)
        out.append(L)
    return out


def _dsl_prints(layouts: list, tmp_path) -> list[str]:
    """Run the exported text in one jit function (the DSL compiles from a source file) and collect its prints."""
    body = "".join(f"    print({to_cute_dsl(L)})\n" for L in layouts)
    path = tmp_path / "layoutalg_dsl_roundtrip.py"
    path.write_text("import cutlass\nimport cutlass.cute as cute\n\n\n@cute.jit\ndef run():\n" + body)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        mod.run()
    return buf.getvalue().strip().splitlines()


#: the DSL writes a swizzle S<B,M,S>, and (nvidia-cutlass-dsl 4.8.1) drops the closing '>' when S < 0
_DSL_SWIZZLE = re.compile(r"^S<(\d+),(\d+),(-?\d+)>? o ")


def dsl_text(line: str) -> str:
    """The DSL's print of a static layout in CuTe C++'s text, underscores aside."""
    return _DSL_SWIZZLE.sub(r"Sw<\1,\2,\3> o ", line)


def test_dsl_swizzle_spelling():
    assert dsl_text("S<2,2,-3 o 8 o 1:8") == dsl_text("S<2,2,-3> o 8 o 1:8") == "Sw<2,2,-3> o 8 o 1:8"


def test_exported_dsl_prints_back(tmp_path):
    layouts = _layouts()
    lines = _dsl_prints(layouts, tmp_path)
    assert len(lines) == len(layouts)
    bad = [(str(L), line) for L, line in zip(layouts, lines) if co.normalize(str(L)) != dsl_text(line)]
    assert not bad, f"{len(bad)} of {len(layouts)} differ, e.g. {bad[:5]}"
