"""The docs pages' examples run as written, and the generated pages match the code."""

from __future__ import annotations

import doctest
import importlib.util
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
GENERATED = ("api.md", "ptx-crossref.md")


def _gen_docs():
    spec = importlib.util.spec_from_file_location("gen_docs", DOCS / "gen_docs.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# Hand-written pages with examples. The generated pages quote docstrings whose examples already
# run under --doctest-modules (in their own module's namespace), so they are not run again here.
_PROMPT = re.compile(r"^\s*>>> ", re.M)
PAGES = sorted(p.name for p in DOCS.glob("*.md") if p.name not in GENERATED and _PROMPT.search(p.read_text()))
#: pages this test owns the style of (the others are checked for running examples only)
OWN_PAGES = ("index.md", "model.md")


def _run_examples(path: pathlib.Path) -> doctest.TestResults:
    """doctest the page, with Markdown fence lines blanked so a fence never reads as expected output."""
    text = "\n".join("" if line.strip().startswith("```") else line for line in path.read_text().splitlines())
    test = doctest.DocTestParser().get_doctest(text, {"__name__": path.stem}, path.name, str(path), 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test)
    return runner.summarize(verbose=False)


@pytest.mark.parametrize("page", PAGES)
def test_page_examples_run(page):
    res = _run_examples(DOCS / page)
    assert res.failed == 0
    assert res.attempted > 0


def test_model_page_runs_under_plain_testfile():
    # the form the brief promises: `doctest.testfile` on the page as written
    res = doctest.testfile(str(DOCS / "model.md"), module_relative=False, optionflags=doctest.ELLIPSIS)
    assert res.failed == 0 and res.attempted > 30


def test_model_page_has_examples_for_every_topic():
    text = (DOCS / "model.md").read_text()
    assert PAGES.count("model.md") == 1
    for name in ("coalesce(", "composition(", "complement(", "logical_divide(", "blocked_product(", "Swizzle(",
                 "ComposedLayout(", "verify(", ".coords(", "to_elements("):
        assert name in text, name


def test_code_fences_close_after_a_blank_line():
    # doctest reads the closing fence as expected output unless a blank line ends the example.
    for page in OWN_PAGES:
        lines = (DOCS / page).read_text().splitlines()
        in_example = False
        for n, line in enumerate(lines):
            if line.startswith(">>>"):
                in_example = True
            if line.strip() == "```" and in_example:
                assert lines[n - 1].strip() == "", f"{page}:{n + 1}: put a blank line before the closing fence"
                in_example = False


@pytest.fixture(scope="module")
def gen():
    return _gen_docs()


def test_generated_pages_are_fresh(gen):
    _, skipped = gen.generate_api()
    if skipped:
        pytest.skip(f"optional modules not importable here, api.md cannot be compared: {skipped}")
    stale = gen.stale()
    assert stale == [], f"stale generated docs {stale}: run `python docs/gen_docs.py`"


def test_check_flag_reports_stale_pages(gen, tmp_path):
    for name, text in gen.generated().items():
        (tmp_path / name).write_text(text)
    assert gen.stale(tmp_path) == []
    (tmp_path / "api.md").write_text("old\n")
    assert gen.stale(tmp_path) == ["api.md"]


def test_api_covers_every_public_name(gen):
    import layoutalg
    import layoutalg.nvidia.ampere.mma as mma
    import layoutalg.nvidia.hopper.wgmma as wgmma

    text, _ = gen.generate_api()
    for mod in (layoutalg, mma, wgmma):
        for name in mod.__all__:
            assert f"`{name}" in text, f"{mod.__name__}.{name} missing from api.md"


def test_crossref_calls_rebuild_the_catalog(gen):
    """Every mma catalog entry's call, as printed in the cross-reference, rebuilds that entry's fragment."""
    from layoutalg.nvidia.ampere import mma

    entries = mma.catalog()
    for e in entries:
        assert gen.eval_call(gen.mma_call(e)) == e.fragment()
    text = gen.generate_crossref()
    # every PTX formula of the catalog, and every mma section, appears
    from layoutalg.nvidia.common.ptx_formulas import FORMULAS

    for key in FORMULAS:
        assert f'FORMULAS["{key}"]' in text, key
    for e in entries:
        assert e.ptx_section in text


def test_crossref_names_the_wgmma_smem_figures(gen):
    text = gen.generate_crossref()
    for fig in range(156, 171):
        assert re.search(rf"\| Figure {fig} \|", text), fig
    assert "Table 38" in text and "Matrix Descriptor Format" in text


def test_crossref_calls_in_backticks_evaluate(gen):
    """Every concrete call in the wgmma / ldmatrix rows evaluates (no stale call strings)."""
    text = gen.generate_crossref()
    calls = re.findall(r"`((?:wgmma|wgmma_fragments|ldmatrix|mma)\.[a-z_]+\((?:[^`()]|\([^`()]*\))*\))`", text)
    assert len(calls) > 50
    for call in calls:
        if "layout, dtype" in call or "tile, dtype" in call:
            continue
        gen.eval_call(call)


def test_index_links_every_page():
    text = (DOCS / "index.md").read_text()
    for target in ("model.md", "model.md#conventions", "api.md", "ptx-crossref.md", "architecture.md", "wgmma.md",
                   "cli.md", "gpu-harness.md", "../notebooks/"):
        assert f"]({target})" in text, target
    for target in re.findall(r"\]\(([^)#]+\.md)", text):
        if target not in ("cli.md", "gpu-harness.md"):  # written by other work in progress
            assert (DOCS / target).exists(), target
