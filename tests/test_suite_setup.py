"""What the suite's configuration (tests/conftest.py, tests/budget.py) relies on."""

from __future__ import annotations

import gc
import pathlib
import re

from budget import cpu_budget, gc_paused

ROOT = pathlib.Path(__file__).resolve().parents[1]

#: numpy's global generator: ``np.random.<function>(`` other than the seeded generators' constructors
_GLOBAL_NP_RANDOM = re.compile(r"\b(?:np|numpy)\.random\.(?!default_rng\b|Generator\b|PCG64\b|SeedSequence\b)\w+\s*\(")


def test_nothing_draws_from_numpys_global_generator() -> None:
    """conftest leaves numpy's global generator out of hypothesis's per-example seeding: no test or library code
    may draw from it (a seeded ``np.random.default_rng`` is the way)."""
    files = [*ROOT.glob("layoutalg/**/*.py"), *ROOT.glob("tests/**/*.py"), *ROOT.glob("benchmarks/**/*.py"),
             *ROOT.glob("notebooks/*.ipynb")]
    assert len(files) > 100
    hits = [f"{f.relative_to(ROOT)}: {m.group(0)}" for f in files for m in _GLOBAL_NP_RANDOM.finditer(f.read_text())]
    assert not hits, hits
    assert _GLOBAL_NP_RANDOM.search("x = np." + "random.randint(4)") and not _GLOBAL_NP_RANDOM.search("np.random.default_rng(0)")


def test_budgets_pause_the_collector() -> None:
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
    with cpu_budget() as t:
        assert not gc.isenabled()
        sum(range(10_000))
    assert gc.isenabled() and t.seconds >= 0.0


def test_the_longest_modules_go_out_first(request) -> None:
    """pytest-xdist's loadscope reorders modules by their number of tests unless told not to, which would undo
    conftest's longest-first order (mypy's one test, 26 s, went out last); every name in that order is a module."""
    import conftest

    assert "--no-loadscope-reorder" in str(request.config.getini("addopts"))
    assert all((ROOT / "tests" / name).is_file() for name in conftest.LONG_MODULES)
    items = request.session.items  # this process's collection, in the order the controller hands it out
    if len(items) > 1000:  # a whole-suite run: the longest module comes first
        assert items[0].path.name == max(conftest.LONG_MODULES, key=conftest.LONG_MODULES.get), items[0].path
