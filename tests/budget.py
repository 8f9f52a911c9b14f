"""CPU-time budgets for the tests that guard against blow-ups.

A budget is measured in CPU seconds of this process (a loaded machine must not fail it on wall time) with the cyclic
garbage collector paused: late in a suite run a worker's heap holds about a million objects, and one full collection
pass over it (up to ~1.4 s measured) may fall inside any timed block, though it is no part of the code under test.

>>> with cpu_budget() as t:
...     _ = sum(range(1000))
>>> 0.0 <= t.seconds < 1.0
True
"""

from __future__ import annotations

import gc
import time
from collections.abc import Iterator
from contextlib import contextmanager


class Elapsed:
    """CPU seconds of a ``cpu_budget`` block, set when the block ends."""

    seconds: float = 0.0


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic collector for the block (no collection before or after: a full pass costs ~0.4 s late in a
    run; the collector's own thresholds run it again soon after the block)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@contextmanager
def cpu_budget() -> Iterator[Elapsed]:
    """Time the block in process CPU seconds, the cyclic collector paused."""
    elapsed = Elapsed()
    with gc_paused():
        t0 = time.process_time()
        try:
            yield elapsed
        finally:
            elapsed.seconds = time.process_time() - t0
