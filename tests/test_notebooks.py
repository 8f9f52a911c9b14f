"""Every notebook executes top to bottom without error (CI has no GPU: the harness notebook replays).

The notebooks run in one Jupyter kernel, started once for this module, each from a fresh namespace
(``%reset -f`` and every figure closed before its first cell): a kernel start with ``import layoutalg``
and matplotlib costs ~2 CPU-s, paid once instead of once per notebook. The cells still run through
nbclient in a real ipykernel, so their rich outputs (HTML grids, inline figures) are formatted as in
Jupyter. A notebook must not depend on what an earlier one left in the kernel: the order is the names'.
"""

from __future__ import annotations

import pathlib

import pytest

NOTEBOOKS = sorted((pathlib.Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))
HERE = NOTEBOOKS[0].parent if NOTEBOOKS else pathlib.Path(".")

#: run in the shared kernel before each notebook's first cell: the state a fresh kernel starts from
FRESH = """\
%reset -f
import sys as _sys
if "matplotlib.pyplot" in _sys.modules:
    _sys.modules["matplotlib.pyplot"].close("all")
del _sys
"""


@pytest.fixture(scope="module")
def kernel():
    """One ipykernel for the module's notebooks, its working directory the notebooks' folder (as
    nbclient's ``resources={"metadata": {"path": ...}}`` gives each notebook)."""
    jupyter_client = pytest.importorskip("jupyter_client")  # here, not at module level: each xdist worker
    pytest.importorskip("nbclient")  # collects this module, only the one that runs it needs them (~0.6 CPU-s)
    from jupyter_core.utils import run_sync

    km = jupyter_client.AsyncKernelManager(kernel_name="python3")
    run_sync(km.start_kernel)(cwd=str(HERE))
    yield km
    run_sync(km.shutdown_kernel)(now=True)
    run_sync(km.cleanup_resources)()


def test_there_are_the_notebooks():
    assert [p.name[:2] for p in NOTEBOOKS][:5] == ["01", "02", "03", "04", "05"]  # and more may follow


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs(path, kernel):
    import nbclient
    import nbformat

    book = nbformat.read(path, as_version=4)
    assert any(c.get("outputs") for c in book.cells if c.cell_type == "code"), "stored outputs missing"
    book.cells.insert(0, nbformat.v4.new_code_cell(FRESH))
    client = nbclient.NotebookClient(book, timeout=600, km=kernel, resources={"metadata": {"path": str(path.parent)}})
    try:
        client.execute()
    finally:
        if client.kc is not None:
            client.kc.stop_channels()
    assert not book.cells[0].outputs, book.cells[0].outputs  # the reset itself printed nothing, raised nothing
    errors = [o for c in book.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors
