"""The docs and the report speak the user's words: the PTX ISA's examples (not "the seed"), defaults
as the code has them, and every Python example written as a doctest (tests/test_docs.py runs them).
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pathlib
import pkgutil
import re

import layoutalg

ROOT = pathlib.Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
GENERATED = ("api.md", "ptx-crossref.md")
PAGES = [p for p in sorted(DOCS.glob("*.md")) if p.name not in GENERATED] + [ROOT / "README.md"]
#: identifiers that keep the word (API names the user calls, test names)
_API = re.compile(r"seed_examples|\.seed\b|test_seed_\w+|seeded")


def test_no_internal_jargon_in_docs():
    for p in PAGES:
        for k, line in enumerate(p.read_text().splitlines(), 1):
            assert not re.search(r"\bseeds?\b", _API.sub("", line), re.I), f"{p.name}:{k}: {line.strip()}"


def test_no_internal_jargon_in_cli_text():
    """The strings the CLI prints (report, verify, help) say "the PTX ISA's examples"."""
    sources = sorted((ROOT / "layoutalg" / "cli").glob("*.py"))  # the cli package: a module per group of verbs
    assert len(sources) > 1
    bad = []
    for path in sources:
        tree = ast.parse(path.read_text())
        bad += [(path.name, n.lineno, n.value) for n in ast.walk(tree)
                if isinstance(n, ast.Constant) and isinstance(n.value, str) and re.search(r"\bseeds?\b", _API.sub("", n.value))]
        for n in ast.walk(tree):  # f-strings: their literal parts
            if isinstance(n, ast.JoinedStr):
                for v in n.values:
                    if isinstance(v, ast.Constant) and re.search(r"\bseeds?\b", _API.sub("", str(v.value))):
                        bad.append((path.name, n.lineno, v.value))
    assert not bad, bad


def _defaults() -> dict[str, set[str]]:
    """{parameter name: the defaults (repr) it has in any public function of layoutalg}."""
    out: dict[str, set[str]] = {}
    mods = [layoutalg] + [importlib.import_module(m.name) for m in pkgutil.walk_packages(layoutalg.__path__, "layoutalg.")
                          if ".gpu" not in m.name and "._" not in m.name]
    for mod in mods:
        for _, f in inspect.getmembers(mod, inspect.isfunction):
            try:
                sig = inspect.signature(f)
            except (TypeError, ValueError):
                continue
            for name, prm in sig.parameters.items():
                if prm.default is not inspect.Parameter.empty:
                    out.setdefault(name, set()).add(repr(prm.default))
    return out


def test_stated_defaults_are_the_codes():
    """Every "the default is `x=v`" / "`x=v` (the default)" in the docs is a real default of that name."""
    defaults = _defaults()
    stated = []
    for p in PAGES:
        text = re.sub(r"\s+", " ", p.read_text())
        stated += [(p.name, m.group(1), m.group(2)) for m in re.finditer(r"the default is `(\w+)=([^`]+)`", text)]
        stated += [(p.name, m.group(1), m.group(2)) for m in re.finditer(r"`(\w+)=([^`]+)`,? \(?the default", text)]
    assert ("wgmma.md", "strict", "False") in stated
    for page, name, value in stated:
        assert value in defaults.get(name, set()), f"{page}: the default {name}={value} is not the code's ({defaults.get(name)})"
    from layoutalg.nvidia.hopper.wgmma import descriptor_from_layout

    assert inspect.signature(descriptor_from_layout).parameters["strict"].default is False


def test_every_python_example_is_a_doctest():
    for p in PAGES:
        for m in re.finditer(r"```(\w*)\n(.*?)```", p.read_text(), re.S):
            lang, body = m.group(1), m.group(2)
            if lang in ("python", "py", "pycon"):
                assert ">>>" in body, f"{p.name}: a Python example that does not run as a doctest: {body[:80]!r}"
