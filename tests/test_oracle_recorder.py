"""The oracle recorder itself (tests/oracle_recorder.py): samples, staleness, atomic writes, re-recording on
demand, and the snippet recorder's replay -- with a stand-in tool, so nothing here compiles or imports Triton."""

from __future__ import annotations

import json
import os
import stat

import pytest

import oracle_recorder as O


@pytest.fixture
def fake(tmp_path, monkeypatch):
    """A recorder of a stand-in 'cute' tool writing to tmp_path (removed from the registry afterwards)."""
    monkeypatch.setattr(O, "unavailable", lambda tool: None)
    monkeypatch.setattr(O, "tool_version", lambda tool: "9.9.9")
    calls = []

    def record(rec):
        calls.append(1)
        return {**rec.provenance("a test"), "cases": {"a": {"sha1": O.sha("snippet a"), "out": "1"}}}

    rec = O.OracleRecorder("cute", "unit_test_recording", record, script="nowhere", path=tmp_path / "r.json",
                           json_options={"indent": 0, "sort_keys": True})
    yield rec, calls
    O.OracleRecorder.registry.pop(rec.key, None)


def test_every_recording_is_registered_and_present():
    recs = O.requested("all")
    assert len(recs) >= 15 and all(r.exists for r in recs), [r.relpath for r in recs if not r.exists]
    assert {r.tool for r in recs} == {"cute", "cute-dsl", "gluon"}
    assert [r.key for r in O.requested("cute/idesc")] == ["cute/idesc"]
    assert {r.key for r in O.requested("idesc")} == {"cute/idesc", "gluon/idesc"}
    assert all(r.tool == "gluon" for r in O.requested("gluon"))
    with pytest.raises(ValueError, match="unknown recording"):
        O.requested("no_such_recording")


def test_sample(monkeypatch):
    monkeypatch.delenv(O.LIVE_ENV, raising=False)
    items = list(range(100))
    assert O.OracleRecorder.sample(items, every=25) == [0, 25, 50, 75]
    assert O.OracleRecorder.sample(items, 4) == [0, 25, 50, 75]
    assert O.OracleRecorder.sample(items, 3) == [0, 33, 66]
    assert O.OracleRecorder.sample(items[:2], 5) == [0, 1]
    monkeypatch.setenv(O.LIVE_ENV, "all")
    assert O.OracleRecorder.sample(items, 3) == items


def test_live_can_be_turned_off(fake, monkeypatch):
    rec, _ = fake
    monkeypatch.setenv(O.LIVE_ENV, "0")
    assert "off" in rec.unavailable()
    with pytest.raises(pytest.skip.Exception):
        rec.require_live()
    monkeypatch.delenv(O.LIVE_ENV)
    assert rec.unavailable() is None


def test_record_write_and_replay(fake):
    rec, calls = fake
    assert not rec.exists and rec.data is None
    assert rec.main([]) == 2 and not calls  # no flag: usage, nothing recorded
    assert rec.main(["--record"]) == 0 and calls == [1]
    text = rec.path.read_text()
    assert text == json.dumps(json.loads(text), indent=0, sort_keys=True) + "\n"
    d = rec.data
    assert d["tool"] == "cute" and d["cute_version"] == "9.9.9" and d["how"] == "a test" and d["date"].endswith("Z")
    assert stat.S_IMODE(os.stat(rec.path).st_mode) & 0o044  # readable by others, as a checked-in file is
    assert [p.name for p in rec.path.parent.iterdir()] == ["r.json"]  # no temporary left behind
    assert rec.stale({"a": "snippet a"}) == [] and rec.stale({"a": "snippet b", "z": "x"}) == ["a", "z"]


def test_record_on_demand_by_environment(fake, monkeypatch):
    rec, calls = fake
    monkeypatch.setattr(O, "MODULES", ())
    assert O.requested("unit_test_recording") == [rec]
    assert O.requested("") == []


def test_snippet_recorder_replays_without_the_tool(tmp_path, monkeypatch):
    from layoutalg.interop import cutecpp

    monkeypatch.setenv(O.LIVE_ENV, "0")
    rec = O.SnippetRecorder("unit_test_snippets", lambda: [], script="nowhere", path=tmp_path / "s.json")
    try:
        fp = rec.fingerprint
        rec.write({"answers": {fp("print(1);"): {"out": "1"}, fp("bad;"): {"refused": "error: no"}}})
        out = rec.run_snippets(["print(1);", "bad;"])
        assert out[0] == "1" and isinstance(out[1], cutecpp.CompileFailure) and out[1].message == "error: no"
        assert rec.missing(["print(1);", "print(2);"]) == [1]
        assert fp("print(1);") != fp("print(1);", headers=("cute/tensor.hpp",)) != fp("print(1);", prelude="int x;")
        monkeypatch.setattr(O, "unavailable", lambda tool: "no g++ here")
        with pytest.raises(pytest.skip.Exception, match="not in .*no g\\+\\+ here"):
            rec.run_snippets(["print(2);"])
        assert rec.run_snippets(["print(1);"]) == ["1"]  # replayed all the same
    finally:
        O.OracleRecorder.registry.pop(rec.key, None)


def test_installed_finds_submodules_without_importing_their_package() -> None:
    import importlib.util
    import sys

    for name in ("json.decoder", "json.nosuch", "nosuch_pkg.x", "numpy", "numpy.linalg", "numpy.nosuch",
                 "xml.etree.ElementTree", "xml.etree.Nosuch"):
        try:
            expected = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):
            expected = False
        assert O.installed(name) == expected, name
    pristine = [n for n in ("cutlass", "triton") if n not in sys.modules]
    for n in pristine:
        O.installed(f"{n}.anything")
    assert [n for n in pristine if n in sys.modules] == []
