"""Types: mypy, with the checked-in configuration ([tool.mypy] in pyproject.toml), finds no error in
layoutalg/, and the public API is typed so that a checker or an IDE sees Layout, ComposedLayout and
Fragment rather than Any.

Run it yourself with ``python -m mypy`` from the repository root (the configuration names the files).
"""

from __future__ import annotations

import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
pytest.importorskip("mypy")


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    """One mypy cache for both runs: the second reuses the first's analysis of the package."""
    return tmp_path_factory.mktemp("mypy-cache")


def _mypy(*args: str, cache: pathlib.Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", str(cache), *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)


def test_mypy_finds_no_errors_in_the_package(cache: pathlib.Path) -> None:
    assert "[tool.mypy]" in (ROOT / "pyproject.toml").read_text()
    r = _mypy(cache=cache)
    assert r.returncode == 0 and "Success: no issues found" in r.stdout, r.stdout[-6000:] + r.stderr[-2000:]


PROBE = '''
from layoutalg import ComposedLayout, Layout, Swizzle, coalesce, complement, composition, logical_divide
from layoutalg import logical_product, make_layout, parse, right_inverse, verify
from layoutalg.nvidia.ampere import mma
from layoutalg.nvidia.hopper import wgmma
import sympy

L = Layout((4, 2), (2, 1))
reveal_type(L)
reveal_type(L.shape)
reveal_type(make_layout((8, 4)))
reveal_type(coalesce(L))
reveal_type(composition(L, Layout(4, 2)))
reveal_type(complement(L, 16))
reveal_type(logical_divide(L, Layout(2, 1)))
reveal_type(logical_product(L, Layout(2, 1)))
reveal_type(right_inverse(L))
reveal_type(parse("(4,2):(2,1)"))
reveal_type(ComposedLayout(Swizzle(3, 4, 3), 0, L))
reveal_type(mma.fragment("m16n8k16", "f16", "A"))
reveal_type(wgmma.atom("K", 128, "bf16"))
reveal_type(verify(L, sympy.Symbol("i"), (sympy.Symbol("i"),)))
'''


def test_the_public_api_reveals_its_types(tmp_path: pathlib.Path, cache: pathlib.Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text(PROBE)
    r = _mypy("--config-file", str(ROOT / "pyproject.toml"), str(probe), cache=cache)
    revealed = re.findall(r'Revealed type is "([^"]+)"', r.stdout)
    assert len(revealed) == PROBE.count("reveal_type"), r.stdout
    want = ["Layout", "int | Any | tuple", "Layout", "Layout", "Layout", "Layout", "Layout", "Layout", "Layout",
            "Layout | layoutalg.composed.ComposedLayout | layoutalg.swizzle.Swizzle", "ComposedLayout", "Fragment",
            "ComposedLayout", "Verdict"]
    for got, w in zip(revealed, want):
        assert w in got and got != "Any", (got, w)
