"""Imports flow one way: a module may import only modules of lower layers (docs/architecture.md).

The layer order below is the architecture, as data. Every import in the package is checked -- at
module level, inside functions, and ``importlib.import_module("layoutalg....")`` -- and written
relative to the package. A lower layer that needs a service from above asks ``layoutalg.hooks``,
which the upper module fills when it is imported. A module that is not listed fails the test:
place it in LAYERS where it belongs.
"""

from __future__ import annotations

import ast
import pathlib

import pytest

PKG = pathlib.Path(__file__).resolve().parents[1] / "layoutalg"

#: lowest first; a unit is a top-level module or subpackage of layoutalg. Units in one layer may not
#: import each other either.
LAYERS: list[list[str]] = [
    ["errors"],
    ["hooks", "symbolic", "inttuple", "speedups"],  # speedups: the C fast paths (speedups/_ext.c) and their one Python front
    ["layout"],
    ["algebra"],
    ["swizzle"],
    ["composed"],
    ["linear", "parse", "formula"],  # formula: formula text read by a grammar (verify, explain, the CLI)
    ["verify"],
    ["tensor"],
    ["tiled"],
    ["registry"],  # the atom registry: every vendor's generations register their MMA / copy atom families
    ["banks"],  # the bank model, vendor-neutral (phase_report): below the vendors, whose LDS/smem models use it
    ["nvidia", "amd"],  # the vendors; a subfolder (nvidia/ampere, nvidia/hopper, ...) is inside its vendor's unit
    ["explain"],
    ["synth"],
    ["viz"],  # the pictures, one package: layouts, fragments, banks, PTX figures, TiledMMA/TiledCopy, TMEM
    ["interop"],
    ["kernel"],  # real kernels read: ttgir by a grammar, layouts, the data-moving ops and their bank conflicts
    ["gpu"],
    ["cli"],  # the console script, one package: a module per group of verbs
]
#: the package's entry points may import anything
ROOTS = {"__init__", "__main__"}

LAYER_OF = {unit: k for k, units in enumerate(LAYERS) for unit in units}


def _unit(path: pathlib.Path) -> str:
    rel = path.relative_to(PKG)
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


def _imports(path: pathlib.Path, text: str | None = None) -> list[tuple[int, str, bool]]:
    """(line, imported module, relative?) for every import of a layoutalg module in ``path`` (or in
    ``text`` read as if it were that module)."""
    tree = ast.parse(path.read_text() if text is None else text, str(path))
    package = list(path.relative_to(PKG.parent).with_suffix("").parts[:-1])
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)] if node.level > 1 else package
                mod = ".".join(base + ([node.module] if node.module else []))
                targets = [mod] if node.module else [f"{mod}.{a.name}" for a in node.names]
                out += [(node.lineno, t, True) for t in targets]
            elif node.module and node.module.split(".")[0] == "layoutalg":
                out.append((node.lineno, node.module, False))
        elif isinstance(node, ast.Import):
            out += [(node.lineno, a.name, False) for a in node.names if a.name.split(".")[0] == "layoutalg"]
        elif (isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) == "import_module"
              and node.args and isinstance(node.args[0], ast.Constant)
              and str(node.args[0].value).startswith("layoutalg.")):
            out.append((node.lineno, str(node.args[0].value), False))
    return out


def _sources() -> list[pathlib.Path]:
    return sorted(p for p in PKG.rglob("*.py") if "__pycache__" not in p.parts)


def test_every_module_has_a_layer() -> None:
    missing = sorted({_unit(p) for p in _sources()} - set(LAYER_OF) - ROOTS)
    assert not missing, f"add these modules to LAYERS in tests/test_layers.py, where they belong: {missing}"


@pytest.mark.parametrize("path", _sources(), ids=lambda p: str(p.relative_to(PKG)))
def test_imports_flow_down_and_are_relative(path: pathlib.Path) -> None:
    me = _unit(path)
    if me in ROOTS:
        return
    problems = []
    for line, target, relative in _imports(path):
        parts = target.split(".")
        if parts[0] != "layoutalg" or len(parts) < 2:
            continue
        other = parts[1]
        if not relative and other != me:
            problems.append(f"line {line}: absolute import of {target} (write it relative: from ..{other} import ...)")
        if other == me or other in ROOTS:
            if other in ROOTS and me not in ROOTS:
                problems.append(f"line {line}: imports the package root ({target})")
            continue
        if other not in LAYER_OF or me not in LAYER_OF:
            continue  # reported by test_every_module_has_a_layer
        if LAYER_OF[other] >= LAYER_OF[me]:
            problems.append(
                f"line {line}: {me} (layer {LAYER_OF[me]}) imports {target} (layer {LAYER_OF[other]}): "
                "a layer may import only lower ones (use layoutalg.hooks for a service from above)"
            )
    assert not problems, f"{path.relative_to(PKG.parent)}:\n" + "\n".join(problems)


def test_the_checker_sees_function_level_and_dynamic_imports() -> None:
    src = ("from .errors import LayoutError\n\ndef f():\n    from .viz import save\n    import importlib\n"
           "    importlib.import_module('layoutalg.cli')\n    from ..x import y\n")
    found = {t for _, t, _ in _imports(PKG / "nvidia" / "probe.py", src)}
    assert {"layoutalg.nvidia.errors", "layoutalg.nvidia.viz", "layoutalg.cli", "layoutalg.x"} <= found
    found = {t for _, t, _ in _imports(PKG / "layout.py", src)}
    assert {"layoutalg.errors", "layoutalg.viz", "layoutalg.cli"} <= found


#: inside layoutalg/gpu/, lowest first (units in one layer may not import each other): the helpers every check
#: shares, the checks, the modules built on other checks, the TMA check that runs its four parts, the harness
#: that runs them all. ``__init__`` / ``__main__`` are its entry points.
GPU_LAYERS: list[list[str]] = [
    ["encode", "common", "tma_driver"],
    ["mma_check", "wgmma_check", "bank_check", "synth_check", "tiled_check", "tma_cases", "tma_cute", "pipeline",
     "kernel_ncu"],
    ["smem_check", "tma_e2e"],
    ["tma_check"],
    ["harness"],
]
GPU_LAYER_OF = {unit: k for k, units in enumerate(GPU_LAYERS) for unit in units}
GPU = PKG / "gpu"


def test_every_gpu_module_has_a_gpu_layer() -> None:
    units = {p.stem for p in GPU.glob("*.py")} - ROOTS
    assert units == set(GPU_LAYER_OF), f"place these in GPU_LAYERS: {sorted(units - set(GPU_LAYER_OF))}"


@pytest.mark.parametrize("path", sorted(GPU.glob("*.py")), ids=lambda p: p.name)
def test_gpu_imports_flow_one_way(path: pathlib.Path) -> None:
    me = path.stem
    if me in ROOTS:
        return
    problems = []
    for line, target, _ in _imports(path):
        parts = target.split(".")
        if parts[:2] != ["layoutalg", "gpu"] or len(parts) < 3:
            continue
        other = parts[2]
        if other in ROOTS:
            problems.append(f"line {line}: imports the gpu package root ({target})")
        elif other != me and GPU_LAYER_OF.get(other, -1) >= GPU_LAYER_OF[me]:
            problems.append(f"line {line}: gpu.{me} (gpu layer {GPU_LAYER_OF[me]}) imports {target} "
                            f"(gpu layer {GPU_LAYER_OF.get(other)})")
    assert not problems, f"{path.relative_to(PKG.parent)}:\n" + "\n".join(problems)
