"""Junk arguments to every public callable of every module, found by walking the package (issue 29, part 6).

The harness imports every module under ``layoutalg`` (a new module cannot escape it), takes each
public function and each class with a constructor of its own (defined in that module, named in its
``__all__``, or, for a module without one, every name without a leading underscore), and calls it with junk in every required argument. Only
:class:`LayoutError` may escape. ``SIDE_EFFECTS`` names the few callables that are not fed junk
because they change global state or start a compiler or a GPU run (each is checked to exist);
``DEBT`` lists the (callable, exception) pairs still open when this harness came in, so that any
new one fails at once, and a fixed one must be struck off (the test says so).

The CI share uses 6 junk values (a few seconds); ``pytest -m exhaustive`` uses 16.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import pkgutil
import signal
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import layoutalg
from layoutalg import Layout, LayoutError

#: callables that are not fed junk: they register into global tables, or compile, or run on a GPU
SIDE_EFFECTS = {
    "layoutalg.hooks.register_svg": "registers a drawing for a class (global table)",
    "layoutalg.hooks.provide": "registers a service (global table)",
    "layoutalg.registry.register": "registers an atom family (global table)",
    "layoutalg.registry.unregister": "removes an atom family (global table)",
    "layoutalg.registry.add_provider": "registers a provider (global table)",
    "layoutalg.registry.remove_provider": "removes a provider (global table)",
    "layoutalg.viz.output.register_scene": "registers a scene for a class (global table)",
    "layoutalg.interop.cutecpp.run_snippets": "compiles and runs C++ with g++",
    "layoutalg.cli.main": "the command line: exits the process",
    "layoutalg.cli.catalog.prove_catalog": "proves the whole catalog (15 s); tests/test_cli*.py cover it",
    "layoutalg.cli.harness.cmd_harness": "replays every GPU recording (12 s); tests/test_gpu_replay*.py cover it",
}
#: modules whose import has an effect (argument parsing)
SKIP_MODULES = ("__main__",)
#: the device harness: it drives the CUDA driver through ctypes (junk there is a segfault, not an
#: exception) and reads the library's own recordings; tests/test_gpu_*.py cover it
SKIP_PACKAGES = ("layoutalg.gpu",)

JUNK_CI = [None, "banana", -1, (), Layout((2, 2), (-1, 2)), {"a": 1}]
JUNK_ALL = JUNK_CI + [0, 2.5, "(2,2", [], (2, 2, 2, 2), float("nan"), True, 1 << 40, [3, "x"], Layout(1, 0)]


def modules() -> list[Any]:
    out = [layoutalg]
    for m in pkgutil.walk_packages(layoutalg.__path__, "layoutalg."):
        if m.name.rsplit(".", 1)[-1] in SKIP_MODULES or m.name.startswith(SKIP_PACKAGES):
            continue
        out.append(importlib.import_module(m.name))
    return out


def _own_constructor(cls: type) -> bool:
    if issubclass(cls, BaseException) or dataclasses.is_dataclass(cls) or hasattr(cls, "_fields"):
        return False  # records (dataclasses, named tuples): built by the library, not from user input
    return any(k in vars(c) for c in cls.__mro__[:-1] for k in ("__init__", "__new__"))


def public_callables() -> Iterator[tuple[str, Callable[..., Any]]]:
    seen: set[int] = set()
    for mod in modules():
        exported = getattr(mod, "__all__", None)
        for name, obj in sorted(vars(mod).items()):
            if name.startswith("_") or getattr(obj, "__module__", None) != mod.__name__ or id(obj) in seen:
                continue
            if exported is not None and name not in exported:
                continue  # a module with __all__ names its public surface; the rest serves the package
            if inspect.isfunction(obj) or (inspect.isclass(obj) and _own_constructor(obj)):
                seen.add(id(obj))
                yield f"{mod.__name__}.{name}", obj


def _required(fn: Callable[..., Any]) -> int:
    """How many junk arguments to pass: the required positional ones, at least one -- or 0 for a callable
    that takes no argument at all (there is nothing to pass it junk through)."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return 1
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    if not any(p.kind in kinds or p.kind is inspect.Parameter.VAR_POSITIONAL for p in sig.parameters.values()):
        return 0
    return max(1, sum(1 for p in sig.parameters.values() if p.default is p.empty and p.kind in kinds))


class _Slow(Exception):
    pass


def _alarm(*_: Any) -> None:
    raise _Slow


def escapes(junk: list) -> dict[str, set[str]]:
    """Every (callable, exception class) that escapes on junk, other than LayoutError."""
    out: dict[str, set[str]] = {}
    old = signal.signal(signal.SIGALRM, _alarm)
    try:
        for qual, fn in public_callables():
            if qual in SIDE_EFFECTS:
                continue
            n = _required(fn)
            if n == 0:
                continue
            for j in junk:
                signal.setitimer(signal.ITIMER_REAL, 2.0)
                try:
                    fn(*([j] * n))
                except (LayoutError, _Slow):
                    pass
                except KeyboardInterrupt:
                    raise
                except BaseException as e:  # noqa: BLE001 - the harness collects every other one, SystemExit too
                    out.setdefault(qual, set()).add(type(e).__name__)
                finally:
                    signal.setitimer(signal.ITIMER_REAL, 0)
    finally:
        signal.signal(signal.SIGALRM, old)
    return out


from junk_debt import DEBT  # noqa: E402  (the open pairs, one line each)


def _check(junk: list, strict: bool) -> None:
    found = escapes(junk)
    new = sorted(f"{q}: {e}" for q, es in found.items() for e in es if e not in DEBT.get(q, set()))
    assert not new, "exceptions other than LayoutError on junk arguments:\n" + "\n".join(new)
    if strict:
        fixed = sorted(f"{q}: {e}" for q, es in DEBT.items() for e in es if e not in found.get(q, set()))
        assert not fixed, "fixed: strike these off tests/junk_debt.py:\n" + "\n".join(fixed)


def test_side_effect_names_exist():
    names = {q for q, _ in public_callables()}
    assert set(SIDE_EFFECTS) <= names, set(SIDE_EFFECTS) - names


def test_the_walk_reaches_every_module():
    mods = {m.__name__ for m in modules()}
    for name in ("layoutalg.nvidia.blackwell.tmem_accum", "layoutalg.interop.gluon_tmem", "layoutalg.viz.tmem",
                 "layoutalg.nvidia.blackwell.blockscale", "layoutalg.nvidia.blackwell.idesc", "layoutalg.parse.notation"):
        assert name in mods


def test_junk_arguments_raise_only_layout_errors(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)  # a callable that writes a file writes it here
    _check(JUNK_CI, strict=True)


@pytest.mark.exhaustive
def test_junk_arguments_raise_only_layout_errors_exhaustive(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    _check(JUNK_ALL, strict=False)


# --- every function that takes an atom takes its name too ---------------------------------------------------
SS = "SM100_MMA_F16BF16_SS<half_t,half_t,float,128,128,K,K>"
TS = "SM100_MMA_F16BF16_TS<half_t,half_t,float,128,128,K,K>"
BS = "SM100_MMA_MXF8F6F4_SS<e4m3,e4m3,float,ue8m0,128,128,K,K>"


def test_blackwell_functions_take_an_atom_by_its_name():
    from layoutalg.nvidia.blackwell import tmem_accum as ta
    from layoutalg.nvidia.blackwell.umma import umma_atom
    from layoutalg.tiled import make_tiled_mma, partition_shape_A, partition_shape_C

    assert ta.umma_accumulator(SS, (128, 128)) == ta.umma_accumulator(umma_atom(SS), (128, 128))
    assert ta.umma_tmem_a(TS, (128, 64)) == ta.umma_tmem_a(umma_atom(TS), (128, 64))
    assert ta.umma_tmem_sf(BS, "B", (128, 128, 128)) == ta.umma_tmem_sf(umma_atom(BS), "B", (128, 128, 128))
    op = "SM100_TMEM_LOAD_16dp256b1x"
    assert ta.epilogue_tv(op, (128, 64)) == ta.epilogue_tv(ta.make_tmem_copy(op, ta.accumulator_layout(128, 64)),
                                                           (128, 64))
    assert partition_shape_A(SS, (128, 64)) == partition_shape_A(make_tiled_mma(SS), (128, 64))
    assert partition_shape_C(SS, (128, 128)) == partition_shape_C(make_tiled_mma(umma_atom(SS)), (128, 128))
    for f, args in ((ta.umma_tmem_a, ("banana", (128, 64))), (ta.umma_tmem_sf, (SS, "A", (128, 128, 128))),
                    (ta.epilogue_tv, (None, (128, 64))), (ta.umma_accumulator, (SS, "banana"))):
        with pytest.raises(LayoutError):
            f(*args)


def test_blackwell_entry_points_on_mixed_arguments():
    """Plausible values and junk mixed in every argument (held-out style): only LayoutError."""
    import random

    from layoutalg.nvidia.blackwell.umma import umma_atom

    pool = [None, -1, 0, 1, 32, 128, 2.5, "banana", "A", "B", "f32", "e4m3", "K", "MN", True, (), [], (128, 64),
            (128, 128, 64), ((128, 64), 1, 1), (2, 2, 2, 2), SS, TS, BS, umma_atom(SS), "SM100_TMEM_LOAD_16dp256b1x",
            "16x256b", Layout((128, 64), (65536, 1)), Layout((2, 2), (-1, 2)), {"a": 1}, float("nan"), 1 << 40,
            0x08200490, "Interleaved"]
    fns = [(q, f) for q, f in public_callables()
           if q.startswith(("layoutalg.nvidia.blackwell", "layoutalg.interop.gluon_tmem"))]
    assert len(fns) > 40
    r = random.Random(29)
    escaped = set()
    for _ in range(1500):
        q, f = r.choice(fns)
        args: list = []
        kw: dict = {}
        for p in inspect.signature(f).parameters.values():
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                continue
            if p.default is p.empty or r.random() < 0.3:
                v = r.choice(pool)
                if p.kind == p.KEYWORD_ONLY or p.default is not p.empty:
                    kw[p.name] = v
                else:
                    args.append(v)
        try:
            f(*args, **kw)
        except LayoutError:
            pass
        except Exception as e:  # noqa: BLE001
            escaped.add(f"{q}: {type(e).__name__}: {e}")
    assert not escaped, "\n".join(sorted(escaped))
