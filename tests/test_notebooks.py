"""Every notebook executes top to bottom without error (CI has no GPU: the harness notebook replays)."""

from __future__ import annotations

import pathlib

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

NOTEBOOKS = sorted((pathlib.Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


def test_there_are_the_notebooks():
    assert [p.name[:2] for p in NOTEBOOKS][:5] == ["01", "02", "03", "04", "05"]  # and more may follow


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs(path):
    book = nbformat.read(path, as_version=4)
    assert any(c.get("outputs") for c in book.cells if c.cell_type == "code"), "stored outputs missing"
    nbclient.NotebookClient(book, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}}).execute()
    errors = [o for c in book.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors
