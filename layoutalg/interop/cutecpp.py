"""CuTe C++ as an oracle on the host: build small programs against CuTe's headers and read what they print.

CuTe is header-only, and its layout algebra is ``constexpr`` host code, so ``g++ -std=c++17`` can
build a program that prints CuTe's own answer for any static layout expression -- no GPU, no nvcc.
The headers come from PyPI wheels: ``nvidia-cutlass`` (``cute/`` and ``cutlass/`` under
``cutlass_library/source/include``), ``nvidia-cuda-runtime-cu12`` (``cuda_runtime.h``),
``nvidia-cuda-nvcc-cu12`` (the ``crt/`` headers) and ``nvidia-cuda-cccl-cu12`` (libcu++'s
``cuda/std``). Set ``LAYOUTALG_CUTE_INCLUDE`` (``:``-separated folders) to use other headers.

A *snippet* is the body of a C++ function in which ``using namespace cute`` holds; whatever it
prints (with CuTe's ``print``) is its answer. :func:`run_snippets` batches many snippets into a few
translation units, compiles them in parallel, runs them and hands back one string per snippet, or a
:class:`CompileFailure` for a snippet CuTe rejects (a ``static_assert``, say)::

    >>> if available() is None:                                   # doctest: +SKIP
    ...     run_snippets(["print(coalesce(make_layout(make_shape(_2{}, _4{}))));"])
    ['_8:_1']

Results are cached by the hash of the program text, the compiler's version, the CuTe version and the
flags (``LAYOUTALG_CACHE``, default ``~/.cache/layoutalg``; written atomically), so a second run costs no
compilation. Programs whose headers are among :data:`SHARED_HEADERS` (and whose prelude defines no macro)
share one precompiled header of all of them, built once per toolchain (~10 s; :func:`prepare` builds it ahead)
and used by every later build: a program then costs its own templates, not CuTe's ~4 s of parsing. Other
header sets are precompiled once each when a call builds four programs or more. ``LAYOUTALG_CUTE_PCH=1``
precompiles any header set, ``=0`` none.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import pathlib
import re
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

__all__ = [
    "DEFAULT_HEADERS",
    "SHARED_HEADERS",
    "CompileFailure",
    "available",
    "compiler",
    "cute_version",
    "include_dirs",
    "prepare",
    "run_snippets",
]

#: headers every generated program includes (the algebra, swizzles, MMA atoms and GMMA atoms)
DEFAULT_HEADERS: tuple[str, ...] = (
    "cute/tensor.hpp",
    "cute/swizzle_layout.hpp",
    "cute/atom/mma_atom.hpp",
    "cute/atom/copy_atom.hpp",
    "cute/atom/mma_traits_sm80.hpp",
    "cute/atom/mma_traits_sm90_gmma.hpp",
    "cutlass/version.h",
)

#: the headers of the one precompiled header shared by every program whose headers are among them: CuTe's
#: algebra and the MMA and copy atoms and traits of sm_61 to sm_120 (the generated GMMA extension and sparse
#: tables included: they add ~3 CPU-s to the header's build and 0.03 s to a program that loads it, and save
#: ~4 s of parsing in each program that names them), block-scaling layouts and the number types
SHARED_HEADERS: tuple[str, ...] = DEFAULT_HEADERS + (
    "cute/atom/mma_traits_sm61.hpp",
    "cute/atom/mma_traits_sm70.hpp",
    "cute/atom/mma_traits_sm75.hpp",
    "cute/atom/mma_traits_sm89.hpp",
    "cute/atom/mma_traits_sm90.hpp",
    "cute/arch/mma_sm90_gmma_ext.hpp",
    "cute/atom/mma_traits_sm90_gmma_ext.hpp",
    "cute/atom/mma_traits_sm90_gmma_sparse.hpp",
    "cute/atom/copy_traits_sm75.hpp",
    "cute/atom/copy_traits_sm80.hpp",
    "cute/atom/copy_traits_sm90.hpp",
    "cute/atom/mma_traits_sm100.hpp",
    "cute/atom/copy_traits_sm100.hpp",
    "cute/arch/mma_sm100_desc.hpp",
    "cute/atom/mma_traits_sm120.hpp",
    "cute/atom/mma_traits_sm120_sparse.hpp",
    "cutlass/gemm/collective/builders/sm1xx_sparse_config.inl",
    "cutlass/detail/sm100_blockscaled_layout.hpp",
    "cutlass/numeric_types.h",
    "cutlass/float8.h",
    "cutlass/float_subbyte.h",
    "cute/util/print_latex.hpp",
    "cute/layout.hpp",  # parts of cute/tensor.hpp: a program of them alone takes the shared header too
    "cute/int_tuple.hpp",
    "cute/swizzle.hpp",
)


@dataclass(frozen=True)
class CompileFailure:
    """A snippet the compiler refused: ``message`` holds the first error line that names it."""

    index: int
    message: str

    def __bool__(self) -> bool:
        return False


def _package_dir(name: str) -> pathlib.Path | None:
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    if spec.submodule_search_locations:
        return pathlib.Path(next(iter(spec.submodule_search_locations)))
    return pathlib.Path(spec.origin).parent if spec.origin else None


def include_dirs() -> list[str]:
    """The ``-I`` folders: ``LAYOUTALG_CUTE_INCLUDE`` if set, else the wheels' header folders that exist."""
    env = os.environ.get("LAYOUTALG_CUTE_INCLUDE")
    if env:
        return [d for d in env.split(os.pathsep) if d]
    dirs = []
    cutlass = _package_dir("cutlass_library")
    if cutlass is not None:
        dirs.append(cutlass / "source" / "include")
    for sub in ("cuda_runtime", "cuda_nvcc", "cuda_cccl"):
        d = _package_dir(f"nvidia.{sub}")
        if d is not None:
            dirs.append(d / "include")
    return [str(d) for d in dirs if d.is_dir()]


def compiler() -> str:
    """The host C++ compiler: ``$CXX`` or ``g++``."""
    return os.environ.get("CXX", "g++")


def available() -> str | None:
    """None when CuTe programs can be built here, else the reason they cannot."""
    if shutil.which(compiler()) is None:
        return f"no C++ compiler {compiler()!r} on PATH"
    dirs = [pathlib.Path(d) for d in include_dirs()]
    need = {
        "cute/layout.hpp": "nvidia-cutlass",
        "cuda_runtime.h": "nvidia-cuda-runtime-cu12",
        "crt/host_defines.h": "nvidia-cuda-nvcc-cu12",
        "cuda/std/cstdint": "nvidia-cuda-cccl-cu12",
    }
    missing = [wheel for hdr, wheel in need.items() if not any((d / hdr).exists() for d in dirs)]
    if missing:
        return "CuTe headers not found; pip install " + " ".join(missing)
    return None


def cute_version() -> str:
    """CUTLASS/CuTe version of the headers in use, read from ``cutlass/version.h`` (e.g. ``'4.2.0'``)."""
    for d in include_dirs():
        p = pathlib.Path(d) / "cutlass" / "version.h"
        if p.exists():
            text = p.read_text()
            parts = [re.search(rf"#define CUTLASS_{k} (\d+)", text) for k in ("MAJOR", "MINOR", "PATCH")]
            if all(parts):
                return ".".join(m.group(1) for m in parts if m)
    return "unknown"


_FLAGS = ("-std=c++17", "-Og", "-w", "-fno-exceptions")
#: GCC only: collect the compiler's own garbage later (a CuTe program's instantiations take ~600 MB; GCC's default
#: collects from 4 MB of heap on, ~10% of the build), at ~10% more peak memory
_GCC_FLAGS = ("--param", "ggc-min-expand=100", "--param", "ggc-min-heapsize=1048576")
_MARK = "@@layoutalg-snippet@@"


def _cache_root() -> pathlib.Path:
    return pathlib.Path(os.environ.get("LAYOUTALG_CACHE", pathlib.Path.home() / ".cache" / "layoutalg")) / "cutecpp"


_TOOLCHAIN: dict[tuple[str, str], str] = {}
_VERSIONS: dict[str, str] = {}


def _version_line(cxx: str) -> str:
    """``cxx --version``'s output (asked once per compiler and process; '' when it cannot run)."""
    if cxx not in _VERSIONS:
        try:
            _VERSIONS[cxx] = subprocess.run([cxx, "--version"], capture_output=True, text=True, check=False).stdout
        except OSError:
            _VERSIONS[cxx] = ""
    return _VERSIONS[cxx]


def _flags() -> tuple[str, ...]:
    """The compiler flags of every build: :data:`_FLAGS`, and :data:`_GCC_FLAGS` when the compiler is GCC."""
    ver = _version_line(compiler())
    gcc = "Free Software Foundation" in ver and "clang" not in ver.lower()
    return _FLAGS + (_GCC_FLAGS if gcc else ())


def _toolchain_key() -> str:
    """What a cached answer depends on besides the program: the compiler's version line, the CuTe version and
    the flags (and ``LAYOUTALG_CUTE_INCLUDE`` when set). Not the wheels' folder: a new virtual environment with
    the same CUTLASS release and compiler reuses the answers."""
    custom = os.environ.get("LAYOUTALG_CUTE_INCLUDE", "")
    cxx = compiler()
    if (cxx, custom) not in _TOOLCHAIN:
        _TOOLCHAIN[(cxx, custom)] = _version_line(cxx) + "|" + cute_version() + "|" + custom + "|" + " ".join(_flags())
    return _TOOLCHAIN[(cxx, custom)]


def _write_atomic(path: pathlib.Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file renamed over it: a reader (another pytest-xdist
    worker, say) sees the old file or the whole new one, never half of it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _program(snippets: Sequence[str], headers: Sequence[str], prelude: str) -> tuple[str, list[tuple[int, int]]]:
    """Source text of one program and, per snippet, the (first, last) source line it occupies.

    ``headers`` are included here unless a precompiled header already provides them (then pass ()).
    """
    lines = [f"#include <{h}>" for h in headers]
    lines += ["#include <cstdio>", "using namespace cute;", *prelude.splitlines()]
    spans = []
    for k, body in enumerate(snippets):
        first = len(lines) + 1
        lines.append(f"static void snippet_{k}() {{")
        lines.extend(body.splitlines() or [""])
        lines.append("}")
        spans.append((first, len(lines)))
    lines.append("int main() {")
    for k in range(len(snippets)):
        lines.append(f'  std::printf("\\n{_MARK}{k}\\n"); snippet_{k}();')
    lines.append(f'  std::printf("\\n{_MARK}end\\n");')
    lines.append("  return 0;\n}")
    return "\n".join(lines) + "\n", spans


_ERROR_LINE = re.compile(r"^(?P<file>[^:\s]+\.cpp):(?P<line>\d+):(?:\d+:)?\s*(?P<rest>.*)$")


def _failing_snippets(stderr: str, src_name: str, spans: list[tuple[int, int]]) -> dict[int, str]:
    """Map each snippet that a compiler error points into to the first error message seen for it.

    g++ reports a failed ``static_assert`` deep in the headers after "required from here" notes
    that walk the instantiation chain back to a line of our own source; the last such line before
    the error names the snippet. Errors reported directly in our source (a typo) name it too.
    """
    failing: dict[int, str] = {}
    pending: int | None = None  # the snippet named by the latest line of our source
    for raw in stderr.splitlines():
        m = _ERROR_LINE.match(raw.strip())
        if m and m.group("file").endswith(src_name):
            line = int(m.group("line"))
            pending = next((k for k, (a, b) in enumerate(spans) if a <= line <= b), pending)
        if " error: " in raw or raw.startswith("error:"):
            if pending is not None:
                failing.setdefault(pending, raw.split(" error: ", 1)[-1].strip())
            pending = None
    return failing


def _pch_dir(headers: Sequence[str], key: str) -> pathlib.Path:
    # the header folders are part of this key: a precompiled header records the paths it was built from
    return _cache_root() / ("pch-" + hashlib.sha256((key + "|".join(include_dirs()) + "|" + "|".join(headers)).encode()).hexdigest()[:16])


def _precompiled_header(headers: Sequence[str], key: str, *, build: bool = True) -> pathlib.Path | None:
    """A precompiled header of ``headers`` in the cache (built once, ~10 s), or None.

    ``build=False``: only one already built. Concurrent callers (pytest-xdist workers) build it once: the
    others wait on a lock file for it rather than building it again. A build the compiler refuses is
    remembered (a ``failed`` file beside it), so later calls include the headers rather than try again.
    """
    root = _pch_dir(headers, key)
    hdr = root / "cute_all.hpp"
    gch = root / "cute_all.hpp.gch"
    if gch.exists():
        return hdr
    if not build or (root / "failed").exists():
        return None
    try:
        root.mkdir(parents=True, exist_ok=True)
        with open(root / "lock", "w") as lock:
            try:
                import fcntl

                fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
            except ImportError:  # not POSIX: at worst two processes build it
                pass
            if gch.exists():
                return hdr
            if (root / "failed").exists():
                return None
            _write_atomic(hdr, "".join(f"#include <{h}>\n" for h in headers))
            tmp = root / f"cute_all.hpp.gch.{os.getpid()}"
            cmd = [compiler(), *_flags(), *(f"-I{d}" for d in include_dirs()), "-x", "c++-header", str(hdr), "-o", str(tmp)]
            proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
            if proc.returncode != 0:
                _write_atomic(root / "failed", proc.stderr[-4000:])
                tmp.unlink(missing_ok=True)
                return None
            os.replace(tmp, gch)
    except OSError:
        return None
    return hdr


#: a preprocessor line other than ``#include``: a prelude with one may change what the headers mean, so it
#: cannot take the shared precompiled header (built without it)
_DIRECTIVE = re.compile(r"^\s*#\s*(?!include\b)\w", re.M)


def _pch_headers(headers: Sequence[str], prelude: str) -> tuple[tuple[str, ...], bool]:
    """The headers to precompile for a program with ``headers`` and ``prelude``, and whether they are the shared ones."""
    if set(headers) <= set(SHARED_HEADERS) and not _DIRECTIVE.search(prelude):
        return SHARED_HEADERS, True
    return tuple(headers), False


def prepare() -> pathlib.Path | None:
    """Build the precompiled :data:`SHARED_HEADERS` now (once per toolchain, ~10 s) rather than in the first
    :func:`run_snippets` that wants it, and return it (None where CuTe programs cannot be built here, or the
    compiler refused it). A test runner calls it at the start, in the background."""
    if available() is not None or os.environ.get("LAYOUTALG_CUTE_PCH", "").strip() == "0":
        return None
    hdr = _precompiled_header(SHARED_HEADERS, _toolchain_key())
    return None if hdr is None else hdr.with_name(hdr.name + ".gch")


def _compile_and_run(source: str, workdir: pathlib.Path, tag: str, pch: pathlib.Path | None = None) -> tuple[bool, str]:
    """(True, stdout) if the program built and ran, else (False, compiler stderr)."""
    src = workdir / f"{tag}.cpp"
    exe = workdir / f"{tag}.out"
    src.write_text(source)
    use = ["-include", str(pch)] if pch is not None else []
    cmd = [compiler(), *_flags(), *(f"-I{d}" for d in include_dirs()), *use, str(src), "-o", str(exe)]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        return False, proc.stderr
    run = subprocess.run([str(exe)], capture_output=True, text=True, check=False, timeout=600)
    if run.returncode != 0:
        raise RuntimeError(f"CuTe program {src} exited with {run.returncode}: {run.stderr[-2000:]}")
    return True, run.stdout


def _split_output(stdout: str, n: int) -> list[str]:
    out: list[str] = [""] * n
    parts = stdout.split(f"\n{_MARK}")
    for part in parts[1:]:
        head, _, body = part.partition("\n")
        if head == "end":
            break
        out[int(head)] = body.strip()
    return out


def _run_chunk(
    snippets: list[str], headers: Sequence[str], prelude: str, workdir: pathlib.Path, tag: str, pch: pathlib.Path | None
) -> list[str | CompileFailure]:
    """Build and run one chunk; snippets that fail to compile are dropped and the rest rebuilt.

    Put snippets expected to fail in small chunks of their own: each rebuild costs a compile.
    """
    results: list[str | CompileFailure | None] = [None] * len(snippets)
    live = list(range(len(snippets)))
    attempt = 0
    while live:
        # Each failed build names at least one refused snippet (g++ may hold back errors of
        # instantiations it never reached), so this ends after at most len(snippets) builds.
        source, spans = _program([snippets[k] for k in live], () if pch else headers, prelude)
        ok, text = _compile_and_run(source, workdir, f"{tag}_{attempt}", pch)
        if ok:
            for k, out in zip(live, _split_output(text, len(live))):
                results[k] = out
            break
        failing = _failing_snippets(text, f"{tag}_{attempt}.cpp", spans)
        if not failing:
            raise RuntimeError("CuTe program failed to compile outside any snippet:\n" + text[-4000:])
        for j, msg in failing.items():
            results[live[j]] = CompileFailure(live[j], msg)
        live = [k for j, k in enumerate(live) if j not in failing]
        attempt += 1
    return [r if r is not None else CompileFailure(i, "not built") for i, r in enumerate(results)]


def run_snippets(
    snippets: Sequence[str],
    *,
    headers: Sequence[str] = DEFAULT_HEADERS,
    prelude: str = "",
    chunk: int = 200,
    jobs: int | None = None,
    cache: bool = True,
    expect_refusal: Sequence[bool] | None = None,
    refusal_chunk: int = 40,
) -> list[str | CompileFailure]:
    """Run each snippet (a C++ function body, ``using namespace cute``) and return what it printed.

    Snippets are batched ``chunk`` to a program; programs are built ``jobs`` at a time (default:
    the CPU count), the largest first. A snippet the compiler refuses comes back as a
    :class:`CompileFailure` (falsy) carrying the compiler's message, and the rest of its program is
    rebuilt without it: snippets flagged in ``expect_refusal`` go into programs of their own of
    ``refusal_chunk`` (each refusal costs a rebuild), built in the same pool as the others.
    """
    reason = available()
    if reason is not None:
        raise RuntimeError(reason)
    snippets = list(snippets)
    flags = list(expect_refusal) if expect_refusal is not None else [False] * len(snippets)
    if len(flags) != len(snippets):
        raise ValueError("run_snippets: expect_refusal must have one flag per snippet")
    ok_idx = [i for i, f in enumerate(flags) if not f]
    bad_idx = [i for i, f in enumerate(flags) if f]
    index_groups = [ok_idx[i : i + chunk] for i in range(0, len(ok_idx), chunk)]
    index_groups += [bad_idx[i : i + refusal_chunk] for i in range(0, len(bad_idx), refusal_chunk)]
    groups = [[snippets[i] for i in g] for g in index_groups]
    toolchain = _toolchain_key()
    key = toolchain + "|" + "|".join(headers) + "|" + prelude
    paths = [_cache_root() / f"{hashlib.sha256((key + chr(0) + chr(0).join(g)).encode()).hexdigest()[:32]}.json" for g in groups]
    todo = [g for g in range(len(groups)) if not (cache and paths[g].exists())]
    # one precompiled header serves every program built in this call: the shared one (SHARED_HEADERS; built once
    # per toolchain, it saves ~4 s of parsing in this program and every later one), or one of this header set
    # when four programs or more are to be built; LAYOUTALG_CUTE_PCH=1: always, =0: never
    setting = os.environ.get("LAYOUTALG_CUTE_PCH", "").strip()
    pch_headers, shared = _pch_headers(headers, prelude)
    build = setting == "1" or (setting != "0" and (shared or len(todo) >= 4))
    pch = _precompiled_header(pch_headers, toolchain, build=build) if todo and setting != "0" else None

    def one(g: int) -> list[str | CompileFailure]:
        path = paths[g]
        if g not in todo:
            try:
                stored = json.loads(path.read_text())
                return [CompileFailure(r["index"], r["message"]) if isinstance(r, dict) else r for r in stored]
            except (OSError, ValueError, KeyError):
                pass
        with tempfile.TemporaryDirectory(prefix="layoutalg-cute-") as tmp:
            res = _run_chunk(groups[g], headers, prelude, pathlib.Path(tmp), f"chunk{g}", pch)
        if cache:
            try:
                payload = [{"index": r.index, "message": r.message} if isinstance(r, CompileFailure) else r for r in res]
                _write_atomic(path, json.dumps(payload))
            except OSError:
                pass
        return res

    workers = jobs or os.cpu_count() or 1
    order = sorted(range(len(groups)), key=lambda g: -len(groups[g]))  # big programs first: a balanced pool
    with ThreadPoolExecutor(max_workers=max(1, min(workers, len(groups) or 1))) as pool:
        done = dict(zip(order, pool.map(one, order)))
    out: list[str | CompileFailure | None] = [None] * len(snippets)
    for g, idx in enumerate(index_groups):
        for i, r in zip(idx, done[g]):
            out[i] = CompileFailure(i, r.message) if isinstance(r, CompileFailure) else r
    return [r if r is not None else CompileFailure(i, "not run") for i, r in enumerate(out)]
