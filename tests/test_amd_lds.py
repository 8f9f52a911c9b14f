"""amd.lds: Triton's AMD shared layouts against Triton's compiler, the LDS bank model against a brute-force count."""

from __future__ import annotations

import importlib.util
import json
import pathlib
import random

import pytest

from layoutalg import Layout
from layoutalg.amd.lds import (LDS, LdsAccess, analyze_lds, lds_addresses, lds_costs, lds_model, lds_report, padded_shared,
                               padding_layout, swizzled_shared, synthesize_lds)
from layoutalg.errors import LayoutError

DATA = pathlib.Path(__file__).resolve().parent / "data" / "amd" / "lds_triton.json"
HAVE_TRITON = importlib.util.find_spec("triton") is not None


def _ours(case: dict) -> list[int]:
    R, C = case["shape"]
    if case["kind"] == "swizzled":
        L = swizzled_shared((R, C), case["vec"], case["per_phase"], case["max_phase"], case["order"])
    else:
        L = padded_shared((R, C), case["pairs"], case.get("order"), offset_bases=case.get("offset_bases"))
    return [int(L(r, c)) for r in range(R) for c in range(C)]


def _cases() -> list[dict]:
    return json.loads(DATA.read_text())["cases"]


# ------------------------------------------------------------------------------- layouts vs Triton
def test_recorded_placements_equal_triton() -> None:
    """Every recorded case (swizzled: shapes x orders x vec x per_phase x max_phase; padded: one and two
    intervals, both orders, remapped bases) places every element where Triton's compiler stored it."""
    import hashlib

    cases = _cases()
    assert len(cases) > 400
    bad = []
    for c in cases:
        ours = _ours(c)
        R, C = c["shape"]
        steps = ([ours[(1 << i) * C] for i in range(R.bit_length() - 1)], [ours[1 << j] for j in range(C.bit_length() - 1)])
        assert steps == (c["rows"], c["cols"]), (c, steps)  # where a difference lies, before the whole-list digest
        if hashlib.sha1(",".join(map(str, ours)).encode()).hexdigest() != c["sha1"]:
            bad.append(c)
    assert not bad, f"{len(bad)} cases differ, e.g. {bad[0]}"
    kinds = {c["kind"] for c in cases}
    assert kinds == {"swizzled", "padded"}


@pytest.mark.skipif(not HAVE_TRITON, reason="Triton not importable")
@pytest.mark.parametrize("arch", ["gfx942", "gfx950"])
def test_live_sample_equals_triton(arch: str) -> None:
    import sys

    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
    import amd_lds_cases as oracle

    rng = random.Random(28 if arch == "gfx942" else 950)
    sample = rng.sample(oracle.swizzled_cases(), 3) + rng.sample(oracle.padded_cases(), 2)
    for case in sample:
        assert oracle.record(case, arch) == _ours(case), case


def test_swizzle_is_triton_rule_by_formula() -> None:
    """The Swizzle form equals Triton's rule written out: column vector XOR ((row // per_phase) % max_phase)."""
    for R, C in ((16, 32), (64, 64), (8, 128), (128, 8)):
        for vec in (v for v in (1, 2, 4, 8, 16) if v <= C):
            for pp in (1, 2, 4):
                for mp in (1, 2, 4, 8, 16):
                    L = swizzled_shared((R, C), vec, pp, mp, (1, 0))
                    for r in range(R):
                        phase = (r // pp) % mp
                        for c in range(C):
                            want = r * C + (((c // vec) ^ phase) % (C // vec)) * vec + c % vec
                            assert L(r, c) == want, (R, C, vec, pp, mp, r, c)


def test_padding_layout_is_the_sum_of_floors() -> None:
    for pairs in ([(4, 1)], [(2, 1), (4, 2)], [(8, 4), (64, 8)], [(16, 2), (32, 2), (128, 4)]):
        L = padding_layout(256, pairs)
        assert [L(o) for o in range(256)] == [o + sum((o // i) * p for i, p in pairs) for o in range(256)]


def test_layout_errors_are_named() -> None:
    with pytest.raises(LayoutError, match="power of two"):
        swizzled_shared((16, 24), 4, 1, 4)
    with pytest.raises(LayoutError, match="permutation"):
        swizzled_shared((16, 32), 4, 1, 4, order=(0, 0))
    with pytest.raises(LayoutError, match="XOR remapping"):
        padded_shared((4, 4), [(4, 1)], offset_bases=[[0, 1], [0, 2], [1, 1], [2, 0]])
    with pytest.raises(LayoutError, match="bijection"):
        padded_shared((4, 4), [(4, 1)], offset_bases=[[0, 1], [0, 2], [0, 1], [2, 0]])
    with pytest.raises(LayoutError, match="repeat"):
        padding_layout(64, [(8, 1), (8, 2)])


# ------------------------------------------------------------------------------------- bank model
def brute_force_passes(addresses, nbytes, groups, banks) -> tuple[int, int]:
    """An independent count: byte by byte, which dword each lane touches; per phase, per bank, the distinct dwords."""
    total = ideal = 0
    for g in groups:
        dwords_of_bank: dict[int, set] = {b: set() for b in range(banks)}
        for lane in g:
            if lane >= len(addresses) or addresses[lane] is None:
                continue
            for byte in range(addresses[lane], addresses[lane] + nbytes):
                dwords_of_bank[(byte >> 2) % banks].add(byte >> 2)
        depth = max(len(s) for s in dwords_of_bank.values())
        distinct = sum(len(s) for s in dwords_of_bank.values())
        if distinct:
            total += depth
            ideal += -(-distinct // banks)
    return total, ideal


def test_models_partition_the_wave_and_fit_the_banks() -> None:
    for arch, m in LDS.items():
        assert set(m.groups) == set(m.sources)
        for (op, nbytes), groups in m.groups.items():
            lanes = sorted(lane for g in groups for lane in g)
            assert lanes == list(range(64)), (arch, op, nbytes)
            assert all(len(g) * nbytes <= m.banks * m.bank_bytes for g in groups), (arch, op, nbytes)


def test_hand_worked_phases() -> None:
    # CDNA3 ds_read_b128: lanes 0 and 20 share a phase, lanes 0 and 4 do not (ROCm blog's groups)
    a = [None] * 64
    a[0], a[20] = 0, 128
    assert lds_report(a, 16).wavefronts == 2
    a = [None] * 64
    a[0], a[4] = 0, 128
    assert lds_report(a, 16).wavefronts == 2 and lds_report(a, 16).ways == 1
    # CDNA4 ds_read_b128: 0 and 12 share a phase; 256 bytes apart is the same bank (64 banks)
    a = [None] * 64
    a[0], a[12] = 0, 256
    assert lds_report(a, 16, "gfx950").ways == 2
    a[12] = 128
    assert lds_report(a, 16, "gfx950").ways == 1
    # broadcast: every lane the same dword
    assert lds_report([0] * 64, 4).wavefronts == 2  # two CDNA3 phases, one pass each
    assert lds_report([0] * 64, 4, "cdna4").wavefronts == 1
    # ds_write_b64 on CDNA4: 16-lane phases
    assert lds_report([8 * lane for lane in range(64)], 8, "cdna4", "write").wavefronts == 4


@pytest.mark.parametrize("arch", ["cdna3", "cdna4"])
def test_passes_equal_brute_force_on_random_access_sets(arch: str) -> None:
    rng = random.Random(2028 + len(arch))
    m = lds_model(arch)
    for _trial in range(400):
        nbytes = rng.choice([1, 2, 4, 8, 12, 16])
        op = rng.choice(["read", "write"])
        align = min(nbytes, 4)
        span = rng.choice([64, 512, 4096, 65536 - 16])
        style = rng.random()
        addrs: list = []
        for _lane in range(64):
            if style < 0.2 and rng.random() < 0.3:
                addrs.append(None)
            elif style < 0.5:
                addrs.append(rng.randrange(0, 8) * rng.choice([128, 256, 132, 144]) // align * align)
            else:
                addrs.append(rng.randrange(0, span // align) * align)
        got = lds_report(addrs, nbytes, arch, op)
        want = brute_force_passes(addrs, nbytes, m.lane_groups(nbytes, op), m.banks)
        assert (got.wavefronts, got.ideal) == want, (arch, nbytes, op, addrs)


def test_analyze_lds_equals_lds_report_wave_by_wave() -> None:
    smem = swizzled_shared((64, 64), 8, 1, 8, (1, 0))
    mfma = Layout(((64, 2), 8), ((1, 64 * 8), 64))  # 128 threads: lane l row l, wave 1 the next 8 columns
    r = analyze_lds(smem, mfma, 2, 16)
    starts = lds_addresses(smem, mfma, 2, 16)
    assert len(r.instructions) == 2
    for w in range(2):
        assert r.instructions[w].wavefronts == lds_report([int(x) for x in starts[64 * w:64 * w + 64, 0]], 16).wavefronts
    assert r.conflict_free


def test_bank_model_errors_are_named() -> None:
    with pytest.raises(LayoutError, match="no LDS bank model"):
        lds_model("rdna3")
    with pytest.raises(LayoutError, match="1, 2, 4, 8, 12 or 16"):
        lds_report([0] * 64, 32)
    with pytest.raises(LayoutError, match="aligned"):
        lds_report([2] * 64, 8)
    with pytest.raises(LayoutError, match="KiB LDS"):
        lds_report([65536] * 64, 4, "cdna3")
    with pytest.raises(LayoutError, match="1 to 64 lanes"):
        lds_report([0] * 65, 4)
    with pytest.raises(LayoutError, match="not contiguous"):
        analyze_lds(Layout((64, 64), (1, 64)), Layout((64, 8), (1, 64)), 2, 16)


@pytest.mark.parametrize("arch", sorted(LDS))
def test_lds_costs_are_analyze_lds_counts(arch: str) -> None:
    """The synthesis's counter (no schedule) gives analyze_lds's numbers on random swizzled and padded tiles."""
    rng = random.Random(arch)
    for _ in range(12):
        eb, vb = rng.choice([(1, 4), (2, 4), (2, 8), (2, 16), (4, 16), (1, 16)])
        C = 64
        n = vb // eb
        tiles = [Layout((64, C), (C, 1)), padded_shared((64, C), [(C, rng.choice([1, 2, 4, 8]) * max(1, 4 // eb))], (1, 0)),
                 swizzled_shared((64, C), rng.choice([1, 2, 4, 8]), rng.choice([1, 2, 4]), rng.choice([1, 4, 8]), (1, 0))]
        per_row = C // n  # TV layouts onto the tile's coordinates row + 64 col: a row per lane, or lanes along a row
        rows_per_pass = 64 // per_row
        access = (Layout((64, C), (1, 64)) if rng.random() < 0.5 else
                  Layout(((per_row, rows_per_pass), (n, 64 // rows_per_pass)), ((64 * n, 1), (64, rows_per_pass))))
        for smem in tiles:
            for op in ("read", "write"):
                try:
                    r = analyze_lds(smem, access, eb, vb, arch=arch, op=op)
                except LayoutError:
                    with pytest.raises(LayoutError):
                        lds_costs(smem, access, eb, vb, arch=arch, op=op)
                    continue
                assert lds_costs(smem, access, eb, vb, arch=arch, op=op) == (r.wavefronts, r.ideal), (smem, access, op)


# -------------------------------------------------------------------------------------- synthesis
def test_synthesis_beats_the_plain_tile_and_reports_true_counts() -> None:
    rows = Layout(((8, 64), 8), ((512, 1), 64))
    mfma = Layout((64, 64), (1, 64))
    accs = [LdsAccess("store rows", rows, 16, "write"), LdsAccess("mfma A", mfma, 16, "read")]
    for arch in ("cdna3", "cdna4"):
        best = synthesize_lds((64, 64), 2, accs, arch=arch, top=3)
        plain = [analyze_lds(Layout((64, 64), (64, 1)), a.tv, 2, 16, arch=arch, op=a.op).wavefronts for a in accs]
        assert best[0].total < sum(plain)
        assert best[0].conflict_free
        for c in best:  # every reported number recomputed by the brute-force counter
            m = lds_model(arch)
            for a, cyc in zip(accs, c.cycles):
                starts = lds_addresses(c.layout, a.tv, 2, a.vector_bytes)
                want = sum(brute_force_passes([int(x) for x in starts[w:w + 64, k]], a.vector_bytes,
                                              m.lane_groups(a.vector_bytes, a.op), m.banks)[0]
                           for w in range(0, starts.shape[0], 64) for k in range(starts.shape[1]))
                assert cyc == want


@pytest.mark.skipif(not HAVE_TRITON, reason="Triton not importable")
def test_synthesis_spelling_is_triton_constructor() -> None:
    import sys

    from triton.experimental.gluon import language as gl

    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
    import amd_lds_cases as oracle

    rows = Layout(((8, 64), 8), ((512, 1), 64))
    cols = Layout((64, 64), (1, 64))
    cands = synthesize_lds((64, 64), 2, [(rows, 16, "write"), (cols, 2, "read")], top=4, aligned=False)
    for c in cands:
        lay = eval(c.triton, {"SwizzledSharedLayout": gl.SwizzledSharedLayout, "PaddedSharedLayout": gl.PaddedSharedLayout})
        assert isinstance(lay, (gl.SwizzledSharedLayout, gl.PaddedSharedLayout))
    # the spelling of the best padded candidate, compiled, places elements as its layout says
    pad = next(c for c in cands if c.triton.startswith("Padded"))
    interval, p = (int(x) for x in pad.triton.split("[[")[1].split("]]")[0].split(","))
    case = {"kind": "padded", "shape": [64, 64], "order": [1, 0], "pairs": [[interval, p]], "bits": 16}
    assert oracle.record(case) == [int(pad.layout(r, c)) for r in range(64) for c in range(64)]


def test_same_as_interop_gluon_reading() -> None:
    """The shared layouts agree with interop.gluon.from_gluon's reading of the same Gluon classes."""
    from layoutalg.interop.gluon import from_gluon

    for case in _cases()[::7]:
        R, C = case["shape"]
        if case["kind"] == "swizzled":
            text = f"SwizzledSharedLayout({case['vec']}, {case['per_phase']}, {case['max_phase']}, {case['order']})"
        elif "offset_bases" in case:
            text = f"PaddedSharedLayout({case['pairs']}, {case['offset_bases']}, [], {case['shape']})"
        else:
            continue
        L = from_gluon(text, (R, C))
        assert [int(L(r, c)) for r in range(R) for c in range(C)] == _ours(case), case
