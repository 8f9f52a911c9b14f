"""layoutalg's tiled MMAs and tiled copies against CuTe C++ (CUTLASS 4.2), case by case.

Every case of :mod:`cute_tiled_cases` is one C++ snippet that builds the same TiledMMA / TiledCopy
with CuTe and prints its TV layouts, tile sizes, and, for three threads, the partitions of real
tensors (layout, engine offset, every element's address), fragments and retiles. CuTe's answers
are recorded in ``tests/data/cute/tiled.json`` (``python tests/cute_tiled_cases.py --record``,
about five minutes of g++ on two cores: far past this suite's budget), and these tests hold the
library to them -- as text (after dropping CuTe's ``_`` of static integers) and as functions.
``test_recording_is_what_cute_prints_today`` recompiles a sample of the snippets (one tiled MMA
with its ldmatrix copy, one cp.async copy, a few atoms) and requires CuTe's output to be the
recording, character for character; ``test_recording_matches_the_cases`` requires every case's
C++ source to be the one recorded, so cases and recording cannot drift apart.
"""

from __future__ import annotations

import pytest

import cute_tiled_cases as C
from layoutalg import LayoutError, parse
from layoutalg.interop import cutecpp
from layoutalg.nvidia.atoms import copy_atom, mma_atom, value_bits



REC = C.REC.data
needs = C.REC.needs


@needs
def test_recording_matches_the_cases():
    ms, cs = C.all_snippets()
    am, ac = C.atom_snippets()
    stale = C.REC.stale({c.key: s for c, s in zip(C.MMA_CASES, ms)}, "mma")
    stale += C.REC.stale({c.key: s for c, s in zip(C.COPY_CASES, cs)}, "copy")
    stale += C.REC.stale(dict(zip(C.cute_atom_names(), am)), "mma_atoms")
    stale += C.REC.stale({k: v[0] for k, v in C.NEGATIVE_CASES.items()}, "negative")
    assert not stale, f"cases changed since the recording; re-record (python tests/cute_tiled_cases.py --record): {stale}"
    assert REC["cute_version"] == "4.2.0"
    assert len(C.MMA_CASES) >= 30 and len(C.COPY_CASES) + sum(len(c.copies) for c in C.MMA_CASES) >= 20


@needs
@pytest.mark.parametrize("case", C.MMA_CASES, ids=lambda c: c.key)
def test_tiled_mma_prints_as_cute(case):
    """TV layouts, tile, thread layout, partitions of A/B/C by 3 threads, fragments, derived copies: identical."""
    rec = REC["mma"][case.key]["records"]
    mine = C.py_mma_records(case)
    assert C.compare(case, rec, mine) == []
    # the comparison is not vacuous: every record of layoutalg's side was found in CuTe's
    assert {k for k in mine} <= set(rec)


@needs
@pytest.mark.parametrize("case", C.COPY_CASES, ids=lambda c: c.key)
def test_tiled_copy_prints_as_cute(case):
    rec = REC["copy"][case.key]["records"]
    assert C.compare(case, rec, C.py_copy_records(case)) == []


@needs
def test_comparison_can_fail():
    """A wrong permutation, a wrong thread, a wrong address: each is caught."""
    case = C.MMA_CASES[2]
    rec = REC["mma"][case.key]["records"]
    mine = C.py_mma_records(case)
    bad = dict(mine, **{"C_TV": mine["C_TV"].replace("256", "128", 1)})
    assert any(m.startswith("C_TV") for m in C.compare(case, rec, bad))
    key = next(k for k in mine if k.endswith(".addr"))
    bad = dict(mine, **{key: [x + 1 for x in mine[key]]})
    assert any(m.startswith(key) for m in C.compare(case, rec, bad))
    other = C.MMACase(case.key, case.atom, case.atom_layout, (32, 32, 32), case.copies)
    assert C.compare(case, rec, C.py_mma_records(other)) != []


@needs
@pytest.mark.parametrize("name", C.cute_atom_names())
def test_mma_atom_prints_as_cute(name):
    printed = REC["mma_atoms"][name]["print"]
    assert printed is not None, f"CuTe did not build {name}"
    atom = mma_atom(name)
    got = dict(line.split(":", 1) for line in str(atom).splitlines()[1:])
    want = dict(line.split(":", 1) for line in C.norm(printed).splitlines()[1:])
    for field, op in (("  LayoutA_TV", "A"), ("  LayoutB_TV", "B"), ("  LayoutC_TV", "C")):
        quirk = C.CUTE_ATOM_QUIRKS.get((name, op))
        if quirk is None:
            assert got[field].strip() == want[field].strip(), (field, quirk)
        elif "injective" not in quirk and "congruent" not in quirk:
            assert C.same_function(parse(got[field].strip()), parse(want[field].replace("(8)", "8").strip()))
    assert got["  ThrID"] == want["  ThrID"] and got["  Shape_MNK"] == want["  Shape_MNK"]


@needs
@pytest.mark.parametrize("name,vt", C.COPY_ATOM_CASES)
def test_copy_atom_prints_as_cute(name, vt):
    printed = REC["copy_atoms"][f"{name}|{vt}"]["print"]
    assert str(copy_atom(name, value_bits(vt))) == C.norm(printed)


@needs
@pytest.mark.parametrize("key", sorted(C.NEGATIVE_CASES))
def test_what_cute_refuses_is_a_layout_error(key):
    _src, reason, call = C.NEGATIVE_CASES[key]
    rec = REC["negative"][key]
    assert not rec["compiled"] and reason in rec["error"]
    with pytest.raises(LayoutError, match="vectoris|values"):
        call()


@needs
@C.REC.live
def test_recording_is_what_cute_prints_today():
    """Recompile a sample and require CuTe's output to equal the recording exactly."""
    mma_keys = ["sm80_16x8x16_f16_2x2"]
    copy_keys = ["cpasync8_f16"]
    ms, cs = C.all_snippets()
    am, _ac = C.atom_snippets()
    names = C.cute_atom_names()
    pick = [n for n in names if n in ("SM70_8x8x4_F32F16F16F32_NT", "SM80_16x8x8_F32TF32TF32F32_TN",
                                      "SM90_64x128x16_F32BF16BF16_RS")]
    snips = [ms[[c.key for c in C.MMA_CASES].index(k)] for k in mma_keys]
    snips += [cs[[c.key for c in C.COPY_CASES].index(k)] for k in copy_keys]
    snips += [am[names.index(n)] for n in pick]
    out = cutecpp.run_snippets(snips, headers=C.HEADERS, prelude=C.PRELUDE, chunk=len(snips))  # one program: xdist keeps the cores busy
    assert all(isinstance(o, str) for o in out), out
    for k, o in zip(mma_keys, out):
        assert C.cute_records(o) == REC["mma"][k]["records"]
    for k, o in zip(copy_keys, out[len(mma_keys):]):
        assert C.cute_records(o) == REC["copy"][k]["records"]
    for n, o in zip(pick, out[len(mma_keys) + len(copy_keys):]):
        assert o == REC["mma_atoms"][n]["print"]
