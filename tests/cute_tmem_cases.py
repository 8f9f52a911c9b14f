"""The Blackwell TMEM copy atoms (tcgen05.ld / st / cp) as CuTe C++ 4.2 prints them: snippets and recording.

One C++ snippet per atom prints ``Copy_Traits<Op>``'s ``ThrID``, ``ValID`` (logical bit -> TMEM
bit address), ``SrcLayout``, ``DstLayout``, ``RefLayout`` and ``Copy_Atom<Op, T>`` for ``T`` =
``float`` and ``half_t``. ``python tests/cute_tmem_cases.py --record`` compiles every atom the
headers define (``cute/atom/copy_traits_sm100.hpp``; 4 programs of ~50 snippets, about a minute of
g++) and writes ``tests/data/cute/tmem_atoms.json``; ``tests/test_nvidia_tmem_cute.py`` replays
it against :mod:`layoutalg.nvidia.blackwell.tmem_copy` and recompiles a small sample every run.
"""

from __future__ import annotations

import pathlib
import re

from cute_oracle import norm  # noqa: F401 (the tests read C.norm)
from oracle_recorder import OracleRecorder, sha  # noqa: F401 (the tests read C.sha)

HEADERS = (
    "cute/tensor.hpp",
    "cute/atom/copy_atom.hpp",
    "cute/atom/copy_traits_sm100.hpp",
    "cutlass/version.h",
)
VALUE_TYPES = ("float", "half_t")
_TRAITS = re.compile(r"struct Copy_Traits<(SM100_(?:TMEM_LOAD|TMEM_STORE|UTCCP)_[A-Za-z0-9_]+)>")


def header_atom_names() -> list[str]:
    """Every TMEM copy atom ``cute/atom/copy_traits_sm100.hpp`` specialises ``Copy_Traits`` for."""
    from layoutalg.interop.cutecpp import include_dirs

    for d in include_dirs():
        p = pathlib.Path(d) / "cute" / "atom" / "copy_traits_sm100.hpp"
        if p.exists():
            return list(dict.fromkeys(_TRAITS.findall(p.read_text())))
    raise RuntimeError("cute/atom/copy_traits_sm100.hpp not found")


def snippet(name: str) -> str:
    lines = [f"using Tr = Copy_Traits<{name}>;"]
    for key, member in (("ThrID", "ThrID"), ("ValID", "ValID"), ("Src", "SrcLayout"), ("Dst", "DstLayout"),
                        ("Ref", "RefLayout")):
        lines.append(f'printf("{key}="); print(typename Tr::{member}{{}}); printf("\\n");')
    for t in VALUE_TYPES:
        lines.append(f'printf("atom.{t}=\\n"); print(Copy_Atom<{name}, {t}>{{}}); printf("\\n@@\\n");')
    return "\n".join(lines)


def parse_output(text: str) -> dict:
    """CuTe's printout of one snippet -> {"ThrID": ..., ..., "atom.float": "Copy_Atom\\n  ThrID: ..."}."""
    out: dict = {}
    rest = text
    for key in ("ThrID", "ValID", "Src", "Dst", "Ref"):
        line, _, rest = rest.partition("\n")
        k, _, v = line.partition("=")
        if k != key:
            raise ValueError(f"unexpected CuTe output line {line!r}")
        out[key] = v.strip()
    for t in VALUE_TYPES:
        head, _, rest = rest.partition("\n")
        if head.strip() != f"atom.{t}=":
            raise ValueError(f"unexpected CuTe output line {head!r}")
        body, _, rest = rest.partition("\n@@")
        out[f"atom.{t}"] = body.strip("\n")
        rest = rest.lstrip("\n")
    return out


def record(rec: OracleRecorder) -> dict:
    """Compile every TMEM copy atom of the headers (~50 per program): the recording."""
    from layoutalg.interop.cutecpp import run_snippets

    names = header_atom_names()
    snips = [snippet(n) for n in names]
    res = run_snippets(snips, headers=HEADERS, chunk=50, jobs=1)
    data: dict = {
        **rec.provenance("flock /tmp/cute.lock python tests/cute_tmem_cases.py --record (g++ -std=c++17 on the host, "
                         "CUTLASS 4.2 wheel headers; no GPU)"),
        "header": "cute/atom/copy_traits_sm100.hpp",
        "atoms": {},
    }
    for n, s, out in zip(names, snips, res):
        if not isinstance(out, str):
            raise RuntimeError(f"{n}: CuTe refused it: {out.message}")
        data["atoms"][n] = {"sha1": sha(s), **parse_output(out)}
    return data


REC = OracleRecorder("cute", "tmem_atoms", record, script="cute_tmem_cases")
RECORDING = str(REC.path)

if __name__ == "__main__":  # pragma: no cover - a recording tool
    raise SystemExit(REC.main())
