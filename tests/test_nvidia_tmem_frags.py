"""The .ws accumulator, block-scale factor and sparse-metadata TMEM fragments against CuTe C++ 4.2.

``tests/data/cute/tmem_frags.json`` holds what CuTe prints for ``make_tensor<Frg>(shape).layout()``
over a random sweep of ``tests/cute_tmem_frags_cases.py`` (``UMMA::tmem_frg_ws_1sm``,
``tmem_sf_frg``, ``tmem_e_frg``, ``tmem_e_frg_ws``; value types, M, N, allocation modes and MMA
repeats). layoutalg must print the same layout; where CuTe refuses to compile (a static_assert, a
missing overload) layoutalg raises a LayoutError. A small sample is compiled live each run. None of
it ran on sm_100 hardware.
"""

from __future__ import annotations

import pytest

import cute_tmem_frags_cases as C
from layoutalg import LayoutError

from layoutalg.nvidia.blackwell.tmem_accum import tmem_e_frg, tmem_frg_ws, tmem_sf_frg

REC = C.REC.data
needs = C.REC.needs
CASES = C.cases()


def mine(case) -> str:
    kind, args, shape, _ = case
    if kind == "ws":
        return str(tmem_frg_ws(shape, C.CPP[args[0]][1], C.CPP[args[1]][1]))
    if kind in ("e", "e_ws"):
        return str(tmem_e_frg(shape, C.CPP[args[0]][1], ws=kind == "e_ws"))
    sf, vs, n_sm, is_a, alloc = args
    return str(tmem_sf_frg(shape, C.CPP[sf][1], n_sm, "A" if is_a else "B", alloc, sf_vec=vs))


def _truncated(case) -> bool:
    """CuTe builds (no static_assert) but Int<MN/32> truncates: rows of the SF go missing. layoutalg raises."""
    from layoutalg import inttuple as it

    return case[0] == "sf" and it.product(case[2][0][0]) % 32 != 0


@needs
def test_recording_is_current():
    assert REC["cute_version"] == "4.2.0" and REC["date"] and "g++" in REC["how"]
    assert sorted(REC["cases"]) == sorted(C.key(c) for c in CASES)
    assert not C.REC.stale({C.key(c): C.snippet(c) for c in CASES})


@needs
def test_fragments_as_cute():
    bad = []
    for case in CASES:
        rec = REC["cases"][C.key(case)]
        if "refused" in rec or _truncated(case):
            try:
                got = mine(case)
            except LayoutError:
                continue
            bad.append((C.key(case), "should raise", got))
            continue
        try:
            got = mine(case)
        except LayoutError as e:
            bad.append((C.key(case), "raised", str(e)))
            continue
        if got != C.norm(rec["L"]):
            bad.append((C.key(case), got, C.norm(rec["L"])))
    assert not bad, "\n".join(map(str, bad[:10])) + f"\n({len(bad)} of {len(CASES)})"


@needs
def test_cases_cover_the_kinds():
    kinds = {(c[0], c[3]) for c in CASES}
    assert {("ws", False), ("ws", True), ("e", False), ("e", True), ("e_ws", False), ("e_ws", True),
            ("sf", False), ("sf", True)} <= kinds
    ws_m = {c[2][0][0] for c in CASES if c[0] == "ws" and not c[3]}
    ews_m = {c[2][0][0] for c in CASES if c[0] == "e_ws" and not c[3]}
    assert ws_m == {32, 64, 128} and ews_m == {32, 64, 128}
    sf = {(c[1][2], c[1][3], c[1][4]) for c in CASES if c[0] == "sf" and "refused" not in REC["cases"][C.key(c)]}
    assert {(1, True, "ScaleFactorDuplicated4by1"), (1, False, "ScaleFactorDuplicated4by1"),
            (2, True, "ScaleFactorDuplicated2by2"), (2, False, "ScaleFactorDuplicated2by2"),
            (2, False, "ScaleFactorDuplicated4by1")} <= sf
    assert sum("refused" in v for v in REC["cases"].values()) >= 20


@needs
def test_recording_is_what_cute_prints_today():
    """One case of each kind compiled live (one program: the headers dominate the cost)."""
    from layoutalg.interop import cutecpp

    C.REC.require_live()
    pick = [next(c for c in CASES if c[0] == k and not c[3] and "refused" not in REC["cases"][C.key(c)])
            for k in ("ws", "sf", "e", "e_ws")]
    out = cutecpp.run_snippets([C.snippet(c) for c in pick], headers=C.HEADERS, chunk=len(pick))
    for c, o in zip(pick, out):
        assert isinstance(o, str), o
        assert C.parse(o) == {k: v for k, v in REC["cases"][C.key(c)].items() if k != "sha1"}
        assert mine(c) == C.norm(C.parse(o)["L"])


def _lane_col(addr: int, value_bits: int = 32) -> tuple[int, int]:
    sh = 16 + (32 // value_bits).bit_length() - 1
    return addr >> sh, (addr & ((1 << sh) - 1))


@pytest.mark.parametrize("N", [64, 128, 256])
def test_ws_data_paths_by_hand(N):
    """The .ws data paths written out from the ISA's description (checked for every (m, n)):
    M = 128 lane m, column n; M = 64 ("2x2", the ISA's layout E) lane m + 64 (n // (N/2)), column n % (N/2);
    M = 32 ("1x4", layout G) lane m + 32 (n // (N/4)), column n % (N/4)."""
    for M in (32, 64, 128):
        L = tmem_frg_ws(((M, N), 1, 1))
        k = 128 // M
        for m in range(M):
            for n in range(N):
                assert _lane_col(L((m, n), 0, 0)) == (m + M * (n // (N // k)), n % (N // k))
    # a second MMA along M goes to the next columns of the allocation (lanes are full), along N further still
    L = tmem_frg_ws(((64, 128), 2, 2))
    assert _lane_col(L((3, 70), 1, 0)) == (3 + 64, 6 + 64) and _lane_col(L((3, 70), 0, 1)) == (3 + 64, 6 + 128)
    # 16-bit values in 32-bit cells: same lanes and columns, the sub-word index 0
    L16 = tmem_frg_ws(((32, N), 1, 1), 16, 32)
    assert _lane_col(L16((5, N // 4 + 1), 0, 0), 16) == (37, 2)


def test_sf_by_hand():
    """SFA rows in all four lane quarters (4x1); SFB of the 2x2 path: halves of the rows in lanes 0..63 / 64..127."""
    L = tmem_sf_frg(((128, (32, 4)), 1, 1))[0]
    for r in range(128):
        for q in range(4):
            for s in range(4):
                lane, col = divmod(int(L(r + 128 * q, (0, s))), 1 << 18)
                assert (lane, col) == (r % 32 + 32 * q, 4 * (r // 32) + s)
                assert L(r + 128 * q, (17, s)) == L(r + 128 * q, (0, s))  # the 32 K elements share the factor
    B = tmem_sf_frg(((256, (16, 4)), 1, 1), operand="B", n_sm=2, alloc="ScaleFactorDuplicated2by2")[0]
    for r in range(256):
        for d in range(2):
            lane, col = divmod(int(B(r + 256 * d, (0, 1))), 1 << 18)
            assert (lane, col) == (r % 32 + 64 * (r // 128) + 32 * d, 4 * ((r // 32) % 4) + 1)


def test_e_by_hand():
    """8-bit A (K = 64): E is 128 lanes x 64 bit-columns of metadata, lane m; F4 (K = 128): lane stride 1 << 22."""
    L = tmem_e_frg(((128, 64), 1, 1), 8)
    assert L((5, 9), 0, 0) == 5 * (1 << 21) + 9
    L4 = tmem_e_frg(((128, 128), 1, 1), 4)
    assert L4((5, 9), 0, 0) == 5 * (1 << 22) + 9


@pytest.mark.parametrize("call, rule", [
    (lambda: tmem_frg_ws(((64, 32), 1, 1)), "N is 64, 128 or 256"),
    (lambda: tmem_frg_ws(((96, 64), 1, 1)), "M is 32, 64 or 128"),
    (lambda: tmem_frg_ws(((128, 64), 1, 1), n_sm=2), "cta_group::1 only"),
    (lambda: tmem_frg_ws(((128, 256), 2, 2)), "more than"),
    (lambda: tmem_frg_ws(((128, 64),)), "without MMA repeat modes"),
    (lambda: tmem_frg_ws((128, 64)), "partitioned shape"),
    (lambda: tmem_sf_frg(((48, (32, 1)), 1, 1)), "multiple of the 32 lanes"),
    (lambda: tmem_sf_frg(((128, (32, 1)), 1, 1), operand="B", alloc="ScaleFactorDuplicated2by2"), "N_SM == 2"),
    (lambda: tmem_sf_frg(((128, (32, 1)), 1, 1), alloc="Interleaved"), "TmemAllocMode"),
    (lambda: tmem_sf_frg(((128, (32, 1)), 1, 1), sf_vec=16), "SFVecSize"),
    (lambda: tmem_sf_frg(((128, 32), 1, 1)), "VecSize, NSF"),
    (lambda: tmem_e_frg(((64, 32), 1, 1), 16), "M = 128 only"),
    (lambda: tmem_e_frg(((128, 64), 1, 1), 16), "needs 32"),
    (lambda: tmem_e_frg(((128, 128), 1, 1), 4, ws=True), "no metadata layout"),
])
def test_named_errors(call, rule):
    with pytest.raises(LayoutError, match=rule):
        call()


ATOM_CASES = C.atom_cases()


@needs
def test_block_scaled_atoms_sf_as_cute():
    """FrgTypeSFA/SFB of MXF8F6F4, MXF4 and MXF4NVF4 atoms (1SM, 2x1SM) over CTA tiles: CUTLASS's make_tensor."""
    from layoutalg.nvidia.blackwell.tmem_accum import umma_tmem_sf
    from layoutalg.nvidia.blackwell.umma import umma_atom

    assert sorted(REC["atom_cases"]) == sorted(C.atom_key(c) for c in ATOM_CASES)
    fams = set()
    for case in ATOM_CASES:
        rec = REC["atom_cases"][C.atom_key(case)]
        assert rec["sha1"] == C.sha(C.atom_snippet(case))
        a = umma_atom(case[0])
        fams.add((a.family, a.vector_size, a.cta_group == 2 and a.M == 128))
        for op in ("A", "B"):
            assert str(umma_tmem_sf(a, op, case[1])) == C.norm(rec["SF" + op]), (case, op)
    assert {("MXF8F6F4_SS", 32, False), ("MXF8F6F4_2x1SM_SS", 32, False), ("MXF4_SS", 32, False),
            ("MXF4_SS", 16, False), ("MXF4_2x1SM_SS", 16, True), ("MXF4_2x1SM_SS", 32, True)} <= fams
    with pytest.raises(LayoutError, match="not a block-scaled"):
        umma_tmem_sf(umma_atom("SM100_MMA_F16BF16_SS<f16,f16,float,128,64,K,K>"), "A", (128, 64, 64))


def test_accumulator_layout_ws_is_the_atom_of_tmem_frg_ws():
    from layoutalg.nvidia.blackwell.tmem_accum import accumulator_layout

    for M in (32, 64, 128):
        for N in (64, 128, 256):
            assert accumulator_layout(M, N, ws=True) == tmem_frg_ws(((M, N), 1, 1))[0]
            assert accumulator_layout(M, N, ws=True, value_bits=16, rest=(2, 1)) == tmem_frg_ws(((M, N), 2, 1), 16)
    with pytest.raises(LayoutError, match="cta_group::1 only"):
        accumulator_layout(128, 64, cta_group=2, ws=True)


_WS = [((M, N), r) for M in (32, 64, 128) for N in (64, 128, 256)
       for r in [(1, 1), (2, 1), (1, 2), (2, 2), (4, 1), (1, 4), (3, 1), (1, 1, 2), (2, 2, 2)]]


@pytest.mark.parametrize("bits", [32, 16])
def test_ws_fragments_are_one_to_one_inside_tmem(bits):
    """Every element of every MMA repeat its own TMEM cell, within 128 lanes x 512 columns, for all legal shapes."""
    import numpy as np

    n = 0
    for mn, r in _WS:
        shape = (mn,) + r
        size = mn[0] * mn[1] * int(np.prod(r))
        if size * 32 > 128 * 512 * 32:
            with pytest.raises(LayoutError, match="more than"):
                tmem_frg_ws(shape, bits, 32)
            continue
        L = tmem_frg_ws(shape, bits, 32)
        addr = np.asarray(L.table(), dtype=np.int64)  # L(i) for every i (test_algebra_laws checks table() by brute force)
        assert addr.size == size
        sh = 16 + (32 // bits).bit_length() - 1
        lanes, cols = addr >> sh, addr & ((1 << sh) - 1)
        assert len(set(addr.tolist())) == size and lanes.max() < 128 and (cols >> (sh - 16)).max() < 512
        assert not (cols & ((1 << (sh - 16)) - 1)).any()  # one value per 32-bit cell (storage 32 bits)
        n += 1
    assert n >= 60


@needs
def test_sf_fragments_are_sound():
    """Every SF fragment CuTe builds (recorded sweep and atoms): the VecSize mode has stride 0 (one factor per
    vector), and with it fixed, distinct (row or replica, factor, repeat) coordinates are distinct cells inside TMEM."""
    from layoutalg import inttuple as it
    from layoutalg.layout import Layout
    from layoutalg.nvidia.blackwell.tmem_accum import umma_tmem_sf
    from layoutalg.nvidia.blackwell.umma import umma_atom

    frags = [tmem_sf_frg(c[2], C.CPP[c[1][0]][1], c[1][2], "A" if c[1][3] else "B", c[1][4]) for c in CASES
             if c[0] == "sf" and "refused" not in REC["cases"][C.key(c)] and not _truncated(c)]
    frags += [umma_tmem_sf(umma_atom(c[0]), op, c[1]) for c in ATOM_CASES for op in "AB"]
    for L in frags:
        vs_shape, vs_stride = L.shape[0][1][0], L.stride[0][1][0]
        assert it.product(vs_shape) > 1 and all(d == 0 for d in it.flatten(vs_stride))
        rows, nsf = L[0][0], L[0][1][1]
        rest = [L[i] for i in range(1, len(L.shape))]
        K = Layout((rows.shape, nsf.shape) + tuple(r.shape for r in rest),
                   (rows.stride, nsf.stride) + tuple(r.stride for r in rest))
        addr = [int(K(i)) for i in range(int(K.size()))]
        assert len(set(addr)) == len(addr)
        assert max(a >> 18 for a in addr) < 128 and max(a & 0x3FFFF for a in addr) < 512 * 4
    assert len(frags) >= 100
