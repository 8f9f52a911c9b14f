"""The README's examples run as written."""

from __future__ import annotations

import doctest
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_readme_examples():
    res = doctest.testfile(str(ROOT / "README.md"), module_relative=False, optionflags=doctest.ELLIPSIS)
    assert res.failed == 0 and res.attempted > 5


def test_readme_starts_with_the_two_commands():
    lines = (ROOT / "README.md").read_text().splitlines()
    assert lines[0] == "```bash"
    assert "layoutalg report" in lines[1] and "pip install" in lines[1]
    assert "pytest" in lines[2] and ".[test]" in lines[2]
    assert lines[3] == "```"
    ci = (ROOT / ".ci" / "run").read_text()
    assert lines[2] in ci
