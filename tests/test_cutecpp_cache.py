"""The CuTe C++ oracle's answer cache (layoutalg.interop.cutecpp): keyed on what the answer depends on.

A new clone or virtual environment with the same CUTLASS release and compiler reuses the answers (the key
holds the compiler's version, the CuTe version and the flags, not the folder the wheels sit in), and a
cache file is written whole (a temporary file renamed over it) so that pytest-xdist's workers never read
half of one.
"""

from __future__ import annotations

import os
import pathlib

import pytest

from layoutalg.interop import cutecpp

pytestmark = pytest.mark.skipif(cutecpp.available() is not None, reason=f"CuTe C++: {cutecpp.available()}")

SNIPPET = "print(coalesce(make_layout(make_shape(_2{}, _4{}))));"
#: the algebra alone: a program of these costs ~1 s of g++, not the ~4 s of the default headers
ALGEBRA = ("cute/layout.hpp",)


def test_answers_are_reused_from_another_header_folder(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LAYOUTALG_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("LAYOUTALG_CUTE_PCH", "0")  # no precompiled header in this throw-away cache
    monkeypatch.delenv("LAYOUTALG_CUTE_INCLUDE", raising=False)
    assert cutecpp.run_snippets([SNIPPET], headers=ALGEBRA) == ["_8:_1"]
    files = sorted((tmp_path / "cache" / "cutecpp").glob("*.json"))
    assert len(files) == 1
    # the same headers seen through other folders (another venv of the same wheels): the same cache entry
    real = cutecpp.include_dirs()
    links = []
    for k, d in enumerate(real):
        link = tmp_path / f"venv2-{k}"
        os.symlink(d, link)
        links.append(str(link))
    monkeypatch.setattr(cutecpp, "include_dirs", lambda: links)
    assert cutecpp.run_snippets([SNIPPET], headers=ALGEBRA) == ["_8:_1"]
    assert sorted((tmp_path / "cache" / "cutecpp").glob("*.json")) == files
    # nothing but whole files in the cache: no temporary file left behind
    assert [p.name for p in (tmp_path / "cache" / "cutecpp").iterdir() if p.name.startswith(".")] == []


def test_shared_precompiled_header_gives_the_same_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Programs whose headers are among SHARED_HEADERS take one precompiled header of all of them (the suite builds
    it at its start); what they print is what the same program prints built from its own headers."""
    monkeypatch.delenv("LAYOUTALG_CUTE_PCH", raising=False)
    monkeypatch.delenv("LAYOUTALG_CUTE_INCLUDE", raising=False)
    gch = cutecpp.prepare()
    assert gch is not None and gch.exists() and gch.stat().st_size > 0
    assert set(cutecpp.DEFAULT_HEADERS) <= set(cutecpp.SHARED_HEADERS)
    # the algebra and a swizzle: headers among the shared ones, so the first build takes the precompiled header
    snippets = ["print(coalesce(make_layout(make_shape(_2{}, _4{}), make_stride(_4{}, _1{}))));",
                "print(composition(Swizzle<2,0,3>{}, Layout<Shape<_4,_8>,Stride<_8,_1>>{}));"]
    headers = ("cute/layout.hpp", "cute/swizzle_layout.hpp")
    assert set(headers) <= set(cutecpp.SHARED_HEADERS)
    shared = cutecpp.run_snippets(snippets, headers=headers, cache=False)
    monkeypatch.setenv("LAYOUTALG_CUTE_PCH", "0")
    own = cutecpp.run_snippets(snippets, headers=headers, cache=False)
    assert shared == own and shared[0] == "(_2,_4):(_4,_1)" and shared[1].startswith("Sw<2,0,3> o ")
