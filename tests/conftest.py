"""Shared test configuration: the tests folder on sys.path (for ``strategies`` and ``budget``), hypothesis profiles
(numpy's global generator left out of hypothesis's per-example seeding), the cyclic collector's settings after
collection, the longest modules first, and CuTe's shared precompiled header built in the background."""

from __future__ import annotations

import gc
import os
import sys

from hypothesis import HealthCheck, settings

sys.path.insert(0, os.path.dirname(__file__))

# collection builds ~1M objects that live to the end: the young generation is collected every 50,000 allocations
# from the start, not 700 (collection ~0.5-1 s faster a process); pytest_collection_finish then freezes them
gc.set_threshold(50_000, 50, 100)

settings.register_profile(
    "default", max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "ci", max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)
settings.load_profile("ci" if os.environ.get("CI") else "default")


def _leave_numpy_random_alone() -> None:
    """Once numpy is imported, hypothesis saves, seeds and restores numpy's global generator around every example
    (so that a test drawing from ``np.random`` repeats): ~150 us an example, 12% of the property tests' CPU time.
    Nothing here draws from it (tests/test_suite_setup.py checks: the package and the tests use seeded
    ``np.random.default_rng`` generators), so it is not registered; Python's ``random`` stays managed. hypothesis
    registers numpy's generator only while ``entropy.NP_RANDOM`` is None; a version without it is left as it is."""
    from hypothesis.internal import entropy

    if getattr(entropy, "NP_RANDOM", False) is None:
        entropy.NP_RANDOM = object()


_leave_numpy_random_alone()


def _cute_line() -> str:
    """Name the CuTe headers the C++ conformance tests compile against (or why they cannot)."""
    from layoutalg.interop import cutecpp

    why = cutecpp.available()
    if why is not None:
        return f"CuTe C++ oracle: unavailable ({why})"
    dirs = cutecpp.include_dirs()
    return f"CuTe C++ oracle: CUTLASS/CuTe {cutecpp.cute_version()} headers at {dirs[0] if dirs else '?'}, {cutecpp.compiler()}"


def pytest_report_header(config):
    return _cute_line()


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    # also under -q, which hides the header: the version the harness compiled against is in the output
    terminalreporter.write_line(_cute_line())


def pytest_configure(config):
    # large property sweeps kept out of the default run (`pytest -m exhaustive` runs them); the algebra
    # helper's branch registers the same marker in pyproject.toml -- registering it twice is harmless
    config.addinivalue_line("markers", "exhaustive: large property sweeps, deselected by default (pytest -m exhaustive)")


#: the modules that take longest (seconds of a whole-suite run on one of 2 workers, setup and teardown included,
#: rounded), run first: with ``--no-loadscope-reorder`` (pyproject.toml) pytest-xdist's loadscope hands modules out
#: in collection order (by default it reorders them by their number of tests, which put mypy's one test last), so a
#: long module started last would keep one worker busy while the other idles
LONG_MODULES = {
    "test_properties.py": 27, "test_types.py": 26, "test_properties_tiled.py": 24, "test_speedups.py": 24,
    "test_notebooks.py": 21, "test_algebra_vs_pycute.py": 15, "test_kernel_plan.py": 11, "test_explain.py": 10,
    "test_gluon_interop.py": 10, "test_algebra_laws.py": 9, "test_cli.py": 9, "test_kernel_pipeline.py": 8,
    "test_algebra_fast.py": 8, "test_kernel.py": 8, "test_amd_lds.py": 7, "test_viz_tiled.py": 7, "test_synth.py": 6,
}


def pytest_collection_modifyitems(config, items):
    if "exhaustive" not in (config.getoption("markexpr") or ""):  # -m names the marker: pytest's own -m decides
        keep, drop = [], []
        for item in items:
            (drop if item.get_closest_marker("exhaustive") else keep).append(item)
        if drop:
            config.hook.pytest_deselected(items=drop)
            items[:] = keep
    # longest modules first (a stable sort: each module's tests keep their order, every worker the same order)
    items.sort(key=lambda item: -LONG_MODULES.get(item.path.name, 0))


def pytest_collection_finish(session):
    # the cyclic collector's full passes cost each worker ~14 CPU-s of a suite run (37 passes over a heap growing to
    # ~1M objects): what collection built (modules, tables, items) lives to the end, so it is frozen out of those
    # passes; the young generation is collected every 50,000 allocations, not 700, set above (5% less CPU on the
    # property, kernel and explain modules than 10,000); tests/budget.py pauses the collector for budgets
    gc.collect()
    gc.freeze()


def pytest_sessionfinish(session):
    # pytest's unraisable-exception plugin runs five full collections at the end of the session (so that garbage
    # cycles' finalizers run while it listens), each walking every object the tests left alive (~2.5 CPU-s a
    # worker): one collection here, under the same listener, then the survivors are frozen out of those five
    gc.collect()
    gc.freeze()


_PREPARING: list = []


def pytest_sessionstart(session):
    if hasattr(session.config, "workerinput"):
        return  # pytest-xdist's workers: what follows runs once, in the controlling process
    _prepare_cute_headers(session.config)
    # LAYOUTALG_RECORD=<name>[,<name>...] | all: re-record those oracle recordings with the real tool before any
    # test reads them (tests/oracle_recorder.py)
    if not os.environ.get("LAYOUTALG_RECORD"):
        return
    import oracle_recorder

    for rec in oracle_recorder.requested():
        rec.record()
        session.config.get_terminal_writer().line(f"re-recorded {rec.key} -> {rec.relpath} ({rec.command})")


def _prepare_cute_headers(config) -> None:
    """A whole-suite run (pytest's testpaths) builds CuTe's shared precompiled header (once per toolchain, ~10 s) in
    the background from the start, while the workers collect, rather than in the first live CuTe sample, which
    would keep one worker waiting; a run of chosen tests builds it when a test first needs it."""
    import pytest

    if getattr(config, "args_source", None) is not pytest.Config.ArgsSource.TESTPATHS or config.option.collectonly:
        return
    if os.environ.get("LAYOUTALG_ORACLE_LIVE", "").strip().lower() in ("0", "no", "off", "false"):
        return
    if os.environ.get("LAYOUTALG_CUTE_PCH", "").strip() == "0":
        return
    import threading

    from layoutalg.interop import cutecpp

    worker = threading.Thread(target=cutecpp.prepare, name="cute-pch", daemon=True)
    worker.start()
    _PREPARING.append(worker)


def pytest_unconfigure(config):
    for worker in _PREPARING:  # a g++ left running would leave its temporary file (~180 MB) in the cache
        worker.join()
