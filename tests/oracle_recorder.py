"""One recorder for every oracle the conformance tests ask: CuTe C++ (g++), the CuTe DSL and Triton's Gluon.

An :class:`OracleRecorder` owns one recording, ``tests/data/<tool>/<name>.json``, of a real tool's
answers, and the three ways the tests use it:

* **replay** (every run, CI included): :attr:`OracleRecorder.data` is the recording, loaded once per
  process; :attr:`OracleRecorder.needs` skips a test when the file is missing. The test compares
  layoutalg's answer with the recorded one; :meth:`OracleRecorder.stale` names the cases whose
  snippet changed since the recording (their recorded answer is then not about the case any more).
* **live sample** (every run where the tool is here): :attr:`OracleRecorder.live` skips cleanly where
  the tool is missing (no g++ / CuTe headers, no Triton, no CuTe DSL) and :meth:`OracleRecorder.sample`
  picks the cases re-asked of the real tool. ``LAYOUTALG_ORACLE_LIVE=0`` turns the live samples off,
  ``LAYOUTALG_ORACLE_LIVE=all`` re-asks every case a live test samples from.
* **re-recording** on demand: ``python tests/<module>.py --record`` (each module's ``__main__`` calls
  :meth:`OracleRecorder.main`), or ``LAYOUTALG_RECORD=<name>[,<name>...]`` / ``LAYOUTALG_RECORD=all``
  in a pytest run (tests/conftest.py re-records those before any test starts). A recording starts
  with its provenance (:meth:`OracleRecorder.provenance`: the tool, its version, the date, how) and
  is written atomically (a reader never sees half a file, also with pytest-xdist's workers).
"""

from __future__ import annotations

import datetime
import hashlib
import importlib.util
import json
import os
import pathlib
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from typing import Any

HERE = pathlib.Path(__file__).resolve().parent
DATA = HERE / "data"

#: the modules that own recordings (conftest imports them to re-record on demand)
MODULES = ("cute_blockscale_cases", "cute_dsl_plan_cases", "cute_idesc_cases", "cute_tiled_cases", "cute_tmem_accum_cases",
           "cute_tmem_cases", "cute_tmem_e_cases", "cute_tmem_frags_cases", "gluon_idesc_oracle", "gluon_tmem_oracle", "print_cases",
           "sm120_oracle", "umma_oracle", "test_cute_conformance", "test_cute_names", "test_cute_nvidia",
           "test_gluon_interop", "test_parse_cpp")

#: the tools, what each needs, and how the recordings name them
TOOLS = {
    "cute": "CuTe C++ (the CUTLASS headers, compiled with g++ on the host; no GPU)",
    "cute-dsl": "the CuTe DSL (nvidia-cutlass-dsl, traced on the CPU)",
    "gluon": "Triton's Gluon (its layout engine and compiler on the CPU; no GPU)",
}

LIVE_ENV = "LAYOUTALG_ORACLE_LIVE"
RECORD_ENV = "LAYOUTALG_RECORD"


def unavailable(tool: str) -> str | None:
    """Why ``tool`` cannot be asked here, or None when it can."""
    if tool == "cute":
        from layoutalg.interop import cutecpp

        return cutecpp.available()
    module = {"cute-dsl": "cutlass.cute", "gluon": "triton.experimental.gluon"}[tool]
    return None if installed(module) else f"{TOOLS[tool]}: {module} is not installed"


def installed(module: str) -> bool:
    """Whether the dotted ``module`` is installed, found without importing it: ``find_spec`` of a submodule
    imports its parents (the CuTe DSL's ``cutlass`` costs ~2 s, paid at collection by every worker)."""
    head, _, rest = module.partition(".")
    try:
        spec = importlib.util.find_spec(head)
    except (ImportError, ValueError):
        return False
    if spec is None:
        return False
    parts = rest.split(".") if rest else []
    for loc in spec.submodule_search_locations or ([] if parts else [""]):
        if not parts:
            return True
        path = pathlib.Path(loc).joinpath(*parts)
        if (path / "__init__.py").exists() or path.with_suffix(".py").exists():
            return True
    return False


def tool_version(tool: str) -> str:
    """The version of ``tool`` that answers here."""
    if tool == "cute":
        from layoutalg.interop import cutecpp

        return cutecpp.cute_version()
    from importlib.metadata import version

    return version("nvidia-cutlass-dsl" if tool == "cute-dsl" else "triton")


def sha(text: str) -> str:
    """The fingerprint a recording keeps of each case's snippet."""
    return hashlib.sha1(text.encode()).hexdigest()


def live_setting() -> str:
    """``LAYOUTALG_ORACLE_LIVE``: '' (the default sample), '0' (no live sample) or 'all'."""
    return os.environ.get(LIVE_ENV, "").strip().lower()


class OracleRecorder:
    """The recording ``tests/data/<tool>/<name>.json`` (or ``path``) of ``tool``'s answers.

    ``record(recorder)`` asks the real tool and returns the recording: a dict (written as JSON with
    ``json_options``) or the text itself. ``script`` is the module that records (``python tests/<script>.py``).
    """

    registry: dict[str, OracleRecorder] = {}

    def __init__(self, tool: str, name: str, record: Callable[[OracleRecorder], dict | str] | None = None, *,
                 script: str, path: str | os.PathLike | None = None, flag: str = "--record",
                 json_options: Mapping[str, Any] | None = None) -> None:
        if tool not in TOOLS:
            raise ValueError(f"OracleRecorder: unknown tool {tool!r} (one of {sorted(TOOLS)})")
        self.tool, self.name, self.script, self.flag = tool, name, script, flag
        self.path = pathlib.Path(path) if path is not None else DATA / tool / f"{name}.json"
        self._record = record
        self.json_options = dict(json_options) if json_options is not None else {"indent": 1, "sort_keys": True}
        self._data: dict | None = None
        self._loaded = False
        OracleRecorder.registry[self.key] = self

    @property
    def key(self) -> str:
        """``<tool>/<name>``: how LAYOUTALG_RECORD names it (the bare name or the tool alone name it too)."""
        return f"{self.tool}/{self.name}"

    def __repr__(self) -> str:
        return f"OracleRecorder({self.tool!r}, {self.name!r}, path={str(self.path)!r})"

    # ----------------------------------------------------------------------------- replay
    @property
    def exists(self) -> bool:
        return self.path.exists()

    @property
    def data(self) -> Any:
        """The recording (loaded once per process), or None when there is none."""
        if not self._loaded:
            self._data = json.loads(self.path.read_text()) if self.exists else None
            self._loaded = True
        return self._data

    @property
    def command(self) -> str:
        return f"python tests/{self.script}.py {self.flag}".rstrip()

    @property
    def needs(self):
        """pytest mark: skip when the recording is missing."""
        import pytest

        return pytest.mark.skipif(not self.exists, reason=f"no {self.tool} recording {self.relpath} ({self.command})")

    @property
    def relpath(self) -> str:
        try:
            return str(self.path.relative_to(HERE.parent))
        except ValueError:
            return str(self.path)

    def stale(self, snippets: Mapping[str, str], section: str | Callable[[Any], Mapping] = "cases",
              field: str = "sha1") -> list[str]:
        """The keys of ``snippets`` ({key: snippet}) missing from the recording's ``section`` or recorded
        from another snippet (their recorded answer is not about the case any more)."""
        recorded = section(self.data) if callable(section) else self.data[section]
        return [k for k, s in snippets.items() if k not in recorded or recorded[k].get(field) != sha(s)]

    # ----------------------------------------------------------------------------- live samples
    def unavailable(self) -> str | None:
        """Why the live sample cannot run here (the tool is missing, or LAYOUTALG_ORACLE_LIVE=0), or None."""
        if live_setting() in ("0", "no", "off", "false"):
            return f"live oracle samples are off ({LIVE_ENV}=0)"
        return unavailable(self.tool)

    @property
    def live(self):
        """pytest mark: skip a live sample where the tool is not here (or live samples are off)."""
        import pytest

        why = self.unavailable()
        return pytest.mark.skipif(why is not None, reason=str(why))

    def require_live(self) -> None:
        """Inside a test: skip it where the tool is not here (or live samples are off)."""
        why = self.unavailable()
        if why is not None:
            import pytest

            pytest.skip(why)

    @staticmethod
    def sample(items: Sequence[Any], n: int | None = None, *, every: int | None = None) -> list[Any]:
        """The live sample of ``items``: ``n`` evenly spaced ones (``items[k * len // n]``), or every ``every``-th
        one from the first (``items[::every]``); all of them under ``LAYOUTALG_ORACLE_LIVE=all``."""
        items = list(items)
        if live_setting() == "all":
            return items
        if every is not None:
            return items[::every]
        if n is None or n >= len(items):
            return items
        return [items[k * len(items) // n] for k in range(n)]

    def run_cute(self, snippets: Sequence[str], **kw: Any) -> list:
        """CuTe C++'s answers to ``snippets`` (:func:`layoutalg.interop.cutecpp.run_snippets`), after the tool check."""
        self.require_live()
        from layoutalg.interop import cutecpp

        return cutecpp.run_snippets(list(snippets), **kw)

    # ----------------------------------------------------------------------------- recording
    def provenance(self, how: str, *, compiler_line: bool = True, version_key: str | None = None,
                   **extra: Any) -> dict:
        """What a recording starts with: the tool, its version, the date and how it was made.

        CuTe recordings keep the keys the tests read (``cute_version``, ``compiler``, ``date``, ``how``)."""
        head: dict[str, Any] = {"tool": self.tool}
        key = version_key or {"cute": "cute_version", "cute-dsl": "cute_dsl", "gluon": "triton"}[self.tool]
        head[key] = tool_version(self.tool)
        if self.tool == "cute" and compiler_line:
            import subprocess

            from layoutalg.interop.cutecpp import compiler

            head["compiler"] = subprocess.run([compiler(), "--version"], capture_output=True, text=True).stdout.splitlines()[0]
        head["date"] = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        head["how"] = how
        head.update(extra)
        return head

    def write(self, content: dict | str) -> None:
        """Write the recording atomically (a temporary file beside it, then renamed over it)."""
        text = content if isinstance(content, str) else json.dumps(content, **self.json_options) + "\n"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", dir=self.path.parent)
        umask = os.umask(0)
        os.umask(umask)
        try:
            os.chmod(tmp, 0o666 & ~umask)  # mkstemp's file is private: the recording is not
            with os.fdopen(fd, "w") as fh:
                fh.write(text)
            os.replace(tmp, self.path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
        self._loaded = False

    def record(self) -> Any:
        """Ask the real tool for every case and write the recording; returns it."""
        if self._record is None:
            raise RuntimeError(f"{self!r} has no recorder")
        why = unavailable(self.tool)
        if why is not None:
            raise RuntimeError(f"cannot record {self.name}: {why}")
        content = self._record(self)
        self.write(content)
        return self.data

    def main(self, argv: Sequence[str] | None = None, *, others: Sequence[OracleRecorder] = (),
             default: bool = False) -> int:
        """``python tests/<script>.py --record``: re-record this recording (and each of ``others`` whose flag
        is given). ``default``: record this one also when no flag is given."""
        args = list(sys.argv[1:] if argv is None else argv)
        done = 0
        for rec in (self, *others):
            if rec.flag in args or (rec is self and default and not args):
                data = rec.record()
                print(f"recorded {rec.name} -> {rec.relpath} ({summary(data)})", file=sys.stderr)
                done += 1
        if not done:
            flags = " | ".join(dict.fromkeys(r.flag for r in (self, *others)))
            print(f"usage: python tests/{self.script}.py [{flags}]", file=sys.stderr)
            return 2
        return 0


def summary(data: Any) -> str:
    """How many entries a recording holds, per section."""
    if not isinstance(data, dict):
        return "?"
    parts = [f"{k}: {len(v)}" for k, v in data.items() if isinstance(v, (dict, list)) and k not in ("differences",)]
    return ", ".join(parts) or "written"


def requested(env: str | None = None) -> list[OracleRecorder]:
    """The recorders ``LAYOUTALG_RECORD`` names, comma-separated: ``<tool>/<name>``, a bare name, a tool
    (every recording of it) or ``all``; their modules imported."""
    names = [x.strip() for x in (os.environ.get(RECORD_ENV, "") if env is None else env).split(",") if x.strip()]
    if not names:
        return []
    import importlib

    for m in MODULES:
        try:
            importlib.import_module(m)
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException:  # noqa: BLE001 - a module whose tool is not installed skips itself (pytest.importorskip)
            continue
    recs = list(OracleRecorder.registry.values())
    if "all" in names:
        return recs
    out: list[OracleRecorder] = []
    for n in names:
        hit = [r for r in recs if n in (r.key, r.name, r.tool)]
        if not hit:
            raise ValueError(f"{RECORD_ENV}: unknown recording {n!r} (known: {sorted(OracleRecorder.registry)})")
        out += [r for r in hit if r not in out]
    return out


class SnippetRecorder(OracleRecorder):
    """CuTe C++'s answers to C++ snippets (:func:`layoutalg.interop.cutecpp.run_snippets`), recorded.

    ``snippets(rec)`` returns every batch a test module asks: ``[(snippets, run_snippets keywords), ...]``;
    the recording keeps each snippet's answer under a fingerprint of the snippet and its headers and
    prelude: ``{"out": printed text}`` or ``{"refused": the compiler's message}``.
    :meth:`run_snippets` then answers from the recording, compiles only what it lacks (where g++ and the
    headers are here), and re-asks CuTe a live sample of ``live`` recorded snippets (one program), which
    must answer as recorded.
    """

    def __init__(self, name: str, snippets: Callable[[], Sequence[tuple[Sequence[str], Mapping[str, Any]]]], *,
                 script: str, live: int = 24, path: str | os.PathLike | None = None) -> None:
        super().__init__("cute", name, self._record_all, script=script, path=path,
                         json_options={"indent": 0, "sort_keys": True})
        self._snippets = snippets
        self.live_count = live

    @staticmethod
    def fingerprint(snippet: str, headers: Sequence[str] | None = None, prelude: str = "") -> str:
        from layoutalg.interop import cutecpp

        hdrs = cutecpp.DEFAULT_HEADERS if headers is None else tuple(headers)
        return sha("\0".join(hdrs) + "\0" + prelude + "\0" + snippet)

    def _record_all(self, rec: OracleRecorder) -> dict:
        from layoutalg.interop import cutecpp

        answers: dict[str, dict] = {}
        for snips, kw in self._snippets():
            out = cutecpp.run_snippets(list(snips), **kw)
            for s, o in zip(snips, out):
                key = self.fingerprint(s, kw.get("headers"), kw.get("prelude", ""))
                answers[key] = {"out": o} if isinstance(o, str) else {"refused": o.message[-600:]}
        return {**self.provenance(f"{self.command} (g++ on the host against the CUTLASS headers; no GPU)"),
                "answers": answers}

    def missing(self, snippets: Sequence[str], **kw: Any) -> list[int]:
        """Indices of ``snippets`` the recording lacks."""
        recorded = (self.data or {}).get("answers", {})
        return [i for i, s in enumerate(snippets)
                if self.fingerprint(s, kw.get("headers"), kw.get("prelude", "")) not in recorded]

    def run_snippets(self, snippets: Sequence[str], **kw: Any) -> list:
        """CuTe's answer to each snippet (text, or a falsy CompileFailure), as ``cutecpp.run_snippets`` gives it:
        recorded answers replayed, the rest compiled now, and a live sample checked against the recording."""
        from layoutalg.interop import cutecpp

        snippets = list(snippets)
        recorded = (self.data or {}).get("answers", {})
        keys = [self.fingerprint(s, kw.get("headers"), kw.get("prelude", "")) for s in snippets]
        out: list = [None] * len(snippets)
        for i, k in enumerate(keys):
            if k in recorded:
                a = recorded[k]
                out[i] = a["out"] if "out" in a else cutecpp.CompileFailure(i, a["refused"])
        todo = [i for i, o in enumerate(out) if o is None]
        sample: list[int] = []
        if self.unavailable() is None:  # the live sample (LAYOUTALG_ORACLE_LIVE=0 turns it off)
            answered = [i for i in range(len(snippets)) if isinstance(out[i], str)]
            refused = [i for i in range(len(snippets)) if out[i] is not None and not isinstance(out[i], str)]
            sample = self.sample(answered, self.live_count) + self.sample(refused, 1)  # a refusal costs a rebuild
        why = unavailable(self.tool)
        if todo and why is not None:
            import pytest

            pytest.skip(f"{len(todo)} snippets are not in {self.relpath} ({self.command}) and CuTe cannot compile here: {why}")
        ask = todo + sample
        if ask:
            flags = kw.pop("expect_refusal", None)
            kw.pop("chunk", None)
            expect = [bool(flags is not None and flags[i]) or (out[i] is not None and not isinstance(out[i], str)) for i in ask]
            live = cutecpp.run_snippets([snippets[i] for i in ask], chunk=max(1, len(ask)), expect_refusal=expect, **kw)
            for i, o in zip(ask, live):
                if out[i] is None:
                    out[i] = o if isinstance(o, str) else cutecpp.CompileFailure(i, o.message)
                else:  # the live sample: CuTe must answer today as recorded
                    want = out[i]
                    assert isinstance(o, str) == isinstance(want, str), (
                        f"{self.relpath}: CuTe now {'answers' if isinstance(o, str) else 'refuses'} a snippet the "
                        f"recording has {'answered' if isinstance(want, str) else 'refused'} ({self.command}):\n{snippets[i]}")
                    if isinstance(o, str):
                        assert o == want, f"{self.relpath}: CuTe now prints {o!r}, recorded {want!r} ({self.command})"
        return out
