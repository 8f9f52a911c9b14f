"""The TMEM accumulator (and TS A) of UMMA atoms and make_tmem_copy partitions against CuTe C++ 4.2.

``tests/data/cute/tmem_accum.json`` holds, for random (UMMA atom, tile, tcgen05.ld atom) cases of
``tests/cute_tmem_accum_cases.py`` (1SM and 2x1SM, M 64/128/256, SS/TS, f32/f16/s32 accumulators,
every ld shape), what CuTe prints: the accumulator's TMEM layout (``partition_fragment_C``), the
TMEM A of ``_TS`` atoms (``make_fragment_A``), ``make_tmem_copy``'s TiledLayout_TV, layoutS/D_TV and
tiler, and threads 0, 37 and 127's ``partition_S`` (TMEM) and ``partition_D`` (a column-major tile):
layout and offset. layoutalg must print the same; where CuTe refuses (a static_assert: the atom
reads TMEM cells the accumulator does not have, or the tile needs more TMEM than exists) layoutalg
raises a LayoutError. None of it ran on sm_100 hardware.
"""

from __future__ import annotations

import pytest

import cute_tmem_accum_cases as C
from layoutalg import Layout, LayoutError
from layoutalg.interop import cutecpp
from layoutalg.nvidia.blackwell.tmem_accum import accumulator_layout, dp, make_tmem_copy, tmem_frg, umma_accumulator, umma_tmem_a
from layoutalg.nvidia.blackwell.umma import umma_atom
from layoutalg.tensor import make_tensor

REC = C.REC.data
needs = C.REC.needs
CASES = C.cases()


def _tiler_str(t) -> str:
    return "(" + ",".join(str(x) for x in t) + ")"


def _raw(offset: int, bits: int) -> int:
    """CuTe's raw TMEM pointer of an offset in T units: rotr(offset, log2(32 / bits)) on 32 bits."""
    sh = (32 // bits).bit_length() - 1
    return ((offset >> sh) | (offset << (32 - sh))) & 0xFFFFFFFF if sh else offset


def mine(case) -> dict:
    name, (M, N), op, _ = case
    a = umma_atom(name)
    bits = C_BITS[a.c_type]
    out = {}
    acc = umma_accumulator(a, (M, N))
    out["acc"] = str(acc)
    if a.source == "TS":
        out["A"] = str(umma_tmem_a(a, (M, 4 * a.K)))
    accm = acc[0]
    out["accm"] = str(accm)
    tc = make_tmem_copy(op, accm, bits)
    out["tiledtv"] = str(tc.layout_tv)
    out["tvS"] = str(tc.get_layoutS_TV())
    out["tvD"] = str(tc.get_layoutD_TV())
    out["tiler"] = _tiler_str(tc.tiler)
    g = make_tensor(Layout(accm.shape))
    for t in C.THREADS:
        thr = tc.get_slice(t)
        s = thr.partition_S(accm)
        d = thr.partition_D(g)
        out[f"S{t}"] = f"{s.layout} @{_raw(s.offset, bits)}"
        out[f"D{t}"] = f"{d.layout} @{d.offset}"
    return out


C_BITS = {"f32": 32, "f16": 16, "s32": 32, "bf16": 16}


@needs
def test_recording_is_current():
    assert REC["cute_version"] == "4.2.0" and REC["date"] and "g++" in REC["how"]
    assert sorted(REC["cases"]) == sorted(C.key(c) for c in CASES)
    assert not C.REC.stale({C.key(c): C.snippet(c) for c in CASES})


@needs
@pytest.mark.parametrize("case", CASES, ids=C.key)
def test_accumulator_and_tmem_copy_as_cute(case):
    rec = REC["cases"][C.key(case)]
    if "refused" in rec:
        with pytest.raises(LayoutError):
            mine(case)
        return
    got = mine(case)
    want = {k: C.norm(v) for k, v in rec.items() if k != "sha1"}
    assert got == want


def test_by_hand():
    # M = 64 per CTA: 16 lanes of each quarter; the second MMA along M interleaves into lanes 16..31
    L = tmem_frg(((64, 32), 2, 1))
    assert L((17, 3), 0, 0) == (32 + 1) * dp(32) + 3 and L((1, 0), 1, 0) == 16 * dp(32) + 1 * 0 + 65536
    assert accumulator_layout(128, 8)(5, 7) == 5 * 65536 + 7
    # cta_group::2, 64 rows per CTA: the second half of the columns goes to lanes 64..127
    L2 = tmem_frg(((64, 128), 1, 1), n_sm=2)
    assert L2((3, 64), 0, 0) == (3 + 64) * 65536 + 0
    with pytest.raises(LayoutError, match="more than"):
        tmem_frg(((128, 512), 2, 1))
    with pytest.raises(LayoutError, match="64 or 128"):
        tmem_frg(((96, 64), 1, 1))


@needs
def test_cases_cover_the_data_paths():
    seen = set()
    for name, _tile, _op, refuses in CASES:
        a = umma_atom(name)
        if not refuses:
            seen.add((a.cta_group, a.M // a.cta_group, a.source, a.c_type))
    assert {(1, 64), (1, 128), (2, 64), (2, 128)} <= {(g, m) for g, m, _s, _c in seen}
    assert {"SS", "TS"} <= {s for *_x, s, _c in seen} and {"f32", "f16", "s32"} <= {c for *_x, c in seen}
    assert sum("refused" in v for v in REC["cases"].values()) >= 3


@needs
@C.REC.live
def test_recording_is_what_cute_prints_today():
    pick = [c for c in CASES if not c[3]][30:31]  # one case (a 2x1SM block-scaled atom): the headers dominate
    out = cutecpp.run_snippets([C.snippet(c) for c in pick], headers=C.HEADERS, prelude=C.PRELUDE, chunk=len(pick))
    for c, o in zip(pick, out):
        assert isinstance(o, str), o
        assert C.parse(o) == {k: v for k, v in REC["cases"][C.key(c)].items() if k != "sha1"}


@needs
@pytest.mark.parametrize("case", [c for c in CASES if not c[3]][::5], ids=C.key)
def test_epilogue_tv_is_every_threads_partition_and_explains(case):
    """epilogue_tv(t, .) is partition_D of thread t (as a set, for all 128 threads); explain proves a formula for it."""
    import numpy as np

    from layoutalg import explain
    from layoutalg.nvidia.blackwell.tmem_accum import epilogue_tv

    name, (M, N), op, _ = case
    a = umma_atom(name)
    accm = umma_accumulator(a, (M, N))[0]
    tc = make_tmem_copy(op, accm, C_BITS[a.c_type])
    shape = tuple(accm.shape) if isinstance(accm.shape, tuple) else (accm.shape,)
    shape = tuple(int(np.prod(s)) if isinstance(s, tuple) else s for s in shape)
    tv = epilogue_tv(tc, shape)
    g = make_tensor(Layout(shape))
    for t in range(128):
        d = tc.get_slice(t).partition_D(g)
        got = sorted(d.offset + int(d.layout(i)) for i in range(int(d.layout.size())))
        assert got == sorted(int(tv(t, i)) for i in range(int(tv[1].size())))
    e = explain(tv, names=("t", "v"))
    assert "proven" in e.text


# --- tcgen05.cp tiled over TMEM (CuTe's make_utccp_copy) ---------------------------------------------
UREC = C.UREC.data
UCASES = C.utccp_cases()


@C.UREC.needs
def test_utccp_tilings_as_cute():
    """All 12 UTCCP ops x (uint32_t, uint8_t) x two TMEM widths: make_utccp_copy's TV, tiler, thread 0's partition_D."""
    from layoutalg.nvidia.blackwell.tmem_accum import make_utccp_copy

    assert sorted(UREC["cases"]) == sorted(C.utccp_key(c) for c in UCASES) and len(UCASES) == 48
    bad = []
    for case in UCASES:
        rec = UREC["cases"][C.utccp_key(case)]
        assert rec["sha1"] == C.sha(C.utccp_snippet(case))
        op, t, _c = case
        bits = C.UTCCP_TYPES[t]
        L = C.utccp_tensor(case)
        tc = make_utccp_copy(op, L, t)
        d = tc.get_slice(0).partition_D(make_tensor(L))
        got = {"tiledtv": str(tc.layout_tv), "tiler": _tiler_str(tc.tiler), "tvS": str(tc.get_layoutS_TV()),
               "tvD": str(tc.get_layoutD_TV()), "D0": f"{d.layout} @{_raw(d.offset, bits)}"}
        want = {k: C.norm(v) for k, v in rec.items() if k != "sha1"}
        if got != want:
            bad.append((case, got, want))
    assert not bad, bad[:2]
