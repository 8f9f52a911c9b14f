"""Gluon interop, with Triton 3.6 (CPU wheel) as the oracle: its layout engine, its bank-conflict
count and its compiler, against layoutalg's reading of every Gluon layout class.

Needs the ``triton`` test extra; skipped (not failed) where Triton is not importable.
"""

from __future__ import annotations

import json
import os
import random

import numpy as np
import pytest

gl = pytest.importorskip("triton.experimental.gluon.language")

import gluon_oracle as oracle  # noqa: E402
import oracle_recorder as O  # noqa: E402
from oracle_recorder import OracleRecorder  # noqa: E402

from layoutalg.errors import LayoutError  # noqa: E402
from layoutalg.gpu.mma_check import unpack_array  # noqa: E402
from layoutalg.gpu.smem_check import expected_nvmma, expected_swizzled  # noqa: E402
from layoutalg.interop.gluon import (  # noqa: E402
    bank_report,
    from_gluon,
    gluon_layout,
    linear_bases,
    to_gluon,
)
from layoutalg.nvidia.ampere import mma  # noqa: E402
from layoutalg.nvidia.hopper import wgmma_fragments  # noqa: E402

HERE = os.path.dirname(__file__)


def p2(rng, lo, hi):
    return 1 << rng.randint(lo, hi)


def split(rng, total, rank):
    out = [1] * rank
    for _ in range(total.bit_length() - 1):
        out[rng.randrange(rank)] *= 2
    return out


def random_distributed(rng):
    """A random distributed Gluon layout (any spelling) and a power-of-two shape."""
    kind = rng.choice(["blocked", "blocked", "mma", "dot", "slice", "blocked3", "mma3", "dot3"])
    rank = 3 if kind.endswith("3") else rng.choice([1, 2, 2]) if kind == "blocked" else 2

    def blocked(r):
        order = list(range(r))
        rng.shuffle(order)
        return gl.BlockedLayout([p2(rng, 0, 2) for _ in range(r)], split(rng, 32, r), split(rng, p2(rng, 0, 3), r), order)

    def nvmma(r):
        if r == 2 and rng.random() < 0.5:
            w = 4 * p2(rng, 0, 1)
            a = p2(rng, 0, w.bit_length() - 3)
            return gl.NVMMADistributedLayout([3, 0], [w // a, a], [16, p2(rng, 3, 8), 16])
        return gl.NVMMADistributedLayout([2, 0], split(rng, p2(rng, 0, 3), r), [16, 8] if r == 2 else [1, 16, 8])

    def dot(r):
        parent = nvmma(r)
        return gl.DotOperandLayout(0 if parent.version[0] == 3 else rng.randint(0, 1), parent, p2(rng, 0, 3))

    if kind.startswith("blocked"):
        layout = blocked(rank)
    elif kind.startswith("mma"):
        layout = nvmma(rank)
    elif kind.startswith("dot"):
        layout = dot(rank)
    else:
        layout = gl.SliceLayout(rng.randint(0, 1), rng.choice([blocked, nvmma, dot])(2))
        rank = 1
    return layout, [p2(rng, 0, 8) for _ in range(rank)]


# ------------------------------------------------------------------ (a) distributed layouts
def test_distributed_bases_equal_tritons_engine():
    """linear_bases (layoutalg's restatement of Triton's rules) == GluonOpBuilder.to_linear_layout, 400 layouts."""
    rng = random.Random(14)
    checked = 0
    while checked < 400:
        layout, shape = random_distributed(rng)
        try:
            want = oracle.engine_bases(layout, shape)
        except Exception:  # noqa: BLE001 - Triton refused the combination; so must we
            with pytest.raises(LayoutError):
                linear_bases(layout, shape)
            continue
        assert linear_bases(layout, shape) == want, (layout, shape)
        checked += 1


def test_to_linear_gives_tritons_bases():
    """to_linear(from_gluon(L), shape=) == Triton's engine bases (same order, same convention); from_linear inverts it."""
    from layoutalg.linear import from_linear, to_linear

    rng = random.Random(3)
    done = 0
    while done < 150:
        layout, shape = random_distributed(rng)
        try:
            want = oracle.engine_bases(layout, shape)
        except Exception:  # noqa: BLE001
            continue
        tv = from_gluon(layout, shape)
        lin = to_linear(tv, shape=shape, kind="distributed")
        assert lin.as_dict() == want, (layout, shape)
        assert from_linear(lin, shape=shape) == tv
        assert gl.DistributedLinearLayout(lin.as_dict()["register"], lin.as_dict()["lane"], lin.as_dict()["warp"],
                                          lin.as_dict()["block"], list(shape)) is not None
        done += 1


def _v2(warps=(1, 1)):
    return gl.NVMMADistributedLayout(version=[2, 0], warps_per_cta=list(warps), instr_shape=[16, 8])


def _v3(n, warps=(4, 1)):
    return gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=list(warps), instr_shape=[16, n, 16])


# (Gluon layout, shape, catalog fragment, operand is B (tensor K x N, catalog N-major))
CATALOG = [
    (_v2(), (16, 8), mma.fragment("m16n8k16", "f16", "C"), False),
    (_v2(), (16, 8), mma.fragment("m16n8k8", "tf32", "C"), False),
    (_v2(), (16, 8), mma.fragment("m16n8k32", "s8", "C"), False),
    (gl.DotOperandLayout(0, _v2(), 1), (16, 8), mma.fragment("m16n8k8", "tf32", "A"), False),
    (gl.DotOperandLayout(0, _v2(), 2), (16, 16), mma.fragment("m16n8k16", "f16", "A"), False),
    (gl.DotOperandLayout(0, _v2(), 2), (16, 16), mma.fragment("m16n8k16", "bf16", "A"), False),
    (gl.DotOperandLayout(0, _v2(), 4), (16, 32), mma.fragment("m16n8k32", "s8", "A"), False),
    (gl.DotOperandLayout(0, _v2(), 4), (16, 32), mma.fragment("m16n8k32", "e4m3", "A"), False),
    (gl.DotOperandLayout(1, _v2(), 1), (8, 8), mma.fragment("m16n8k8", "tf32", "B"), True),
    (gl.DotOperandLayout(1, _v2(), 2), (16, 8), mma.fragment("m16n8k16", "f16", "B"), True),
    (gl.DotOperandLayout(1, _v2(), 4), (32, 8), mma.fragment("m16n8k32", "s8", "B"), True),
] + [
    (_v3(n), (64, n), wgmma_fragments.fragment(f"m64n{n}k16", "f32", "D"), False) for n in (8, 16, 32, 64, 128, 256)
] + [
    (gl.DotOperandLayout(0, _v3(64), 1), (64, 8), wgmma_fragments.fragment("m64n8k8", "tf32", "A"), False),
    (gl.DotOperandLayout(0, _v3(64), 2), (64, 16), wgmma_fragments.fragment("m64n8k16", "f16", "A"), False),
    (gl.DotOperandLayout(0, _v3(64), 4), (64, 32), wgmma_fragments.fragment("m64n8k32", "e4m3", "A"), False),
]


@pytest.mark.parametrize("layout,shape,frag,is_b", CATALOG, ids=[f"{c[2].name}" for c in CATALOG])
def test_fragments_equal_catalog(layout, shape, frag, is_b):
    """Every mma.sync / wgmma fragment Gluon spells: Triton's engine, from_gluon and the catalog agree per (lane, register)."""
    assert linear_bases(layout, shape) == oracle.engine_bases(layout, shape)
    tv = from_gluon(layout, shape)
    T, V = frag.num_threads, frag.num_values
    assert int(tv[0].size()) == T and int(tv[1].size()) == V
    table = np.asarray(tv.table()).reshape(V, T).T  # table[t, v] = d0 + D0*d1
    d0, d1 = table % shape[0], table // shape[0]
    for t in range(T):
        for v in range(V):
            assert frag.coords(t, v) == (int(d0[t, v]), int(d1[t, v])), (t, v)
    if not is_b:  # same TV function as the catalog's layout, index for index
        assert np.array_equal(table, frag.index(*np.meshgrid(np.arange(T), np.arange(V), indexing="ij")))


# ------------------------------------------------------------------ (b) shared layouts
def _nvmma_cases(bits):
    """Each mode on 16 rows x 256 bytes, the tiles the H100 recorded (8-bit: two swizzle rows wide, to compile faster)."""
    out = []
    for sw in (0, 32, 64, 128):
        contig = 256 * 8 // bits if bits > 8 else 2 * max(sw, 16)
        out += [(gl.NVMMASharedLayout(sw, bits, transposed=tr), (contig, 16) if tr else (16, contig), bits) for tr in (False, True)]
    return out


SWIZZLED = [(8, 1, 8, [1, 0]), (4, 2, 4, [1, 0]), (2, 1, 4, [1, 0]), (8, 2, 4, [1, 0]), (1, 1, 1, [1, 0]),
            (8, 1, 4, [0, 1]), (4, 2, 4, [0, 1]), (4, 1, 8, [1, 0]), (2, 4, 2, [0, 1])]


def _where(layout, R, C):
    """where[r*C + c] = layout(r, c) for a layoutalg shared layout."""
    return np.asarray(layout.table()).reshape(C, R).T.reshape(-1)


def _shared_cases(bits):
    cases = _nvmma_cases(bits)
    if bits == 16:
        cases += [(gl.SwizzledSharedLayout(*p), (32, 64), 16) for p in SWIZZLED]
        cases += [(gl.PaddedSharedLayout.with_identity_for([[64, 4]], [32, 64], [1, 0]), (32, 64), 16),
                  (gl.PaddedSharedLayout.with_identity_for([[32, 2], [256, 8]], [32, 64], [0, 1]), (32, 64), 16),
                  (gl.SharedLinearLayout([[0, 1], [0, 2], [1, 0], [0, 4], [2, 0], [4, 0]]), (8, 8), 16)]
    return cases


def _case_key(case) -> str:
    return f"{case[2]}|{case[0]!r}|{case[1]}"


def _record_placements(rec: OracleRecorder) -> dict:
    """Triton's compiler's placement of every case, one kernel per element width."""
    out = {}
    for bits in (8, 16, 32):
        cases = _shared_cases(bits)
        out.update({_case_key(c): [int(x) for x in w] for c, w in zip(cases, oracle.shared_placements(cases))})
    return {**rec.provenance("python tests/test_gluon_interop.py --record (Gluon kernels compiled for sm_90 to LLVM IR "
                             "on the CPU: each shared layout's element offsets read off the stores)"), "placements": out}


PLACEMENTS = OracleRecorder("gluon", "shared_placements", _record_placements, script="test_gluon_interop",
                            json_options={"sort_keys": True, "separators": (",", ":")})
LIVE_BITS = 32  # the element width whose kernel is compiled live each run (8 cases; the others are replayed)


@pytest.fixture(scope="module")
def placements():
    """Triton's compiler's placement of every case (recorded; one element width's kernel compiled live and
    required to place every element as recorded)."""
    if PLACEMENTS.data is None:
        pytest.skip(f"no recording {PLACEMENTS.relpath} ({PLACEMENTS.command})")
    recorded = PLACEMENTS.data["placements"]
    out = {}
    for bits in (8, 16, 32):
        cases = _shared_cases(bits)
        missing = [c for c in cases if _case_key(c) not in recorded]
        assert not missing, f"cases not in {PLACEMENTS.relpath}; re-record ({PLACEMENTS.command}): {missing}"
        wheres = [np.asarray(recorded[_case_key(c)], dtype=np.int64) for c in cases]
        if PLACEMENTS.unavailable() is None and (bits == LIVE_BITS or O.live_setting() == "all"):
            for c, live, want in zip(cases, oracle.shared_placements(cases), wheres):
                assert np.array_equal(live, want), f"Triton now places {c} differently from {PLACEMENTS.relpath}"
        for case, where in zip(cases, wheres):
            out[(gluon_layout(case[0]), case[1])] = (case, where)
    return out


def test_shared_layouts_equal_tritons_compiler(placements):
    """Every shared mode: from_gluon's layout puts each element where Triton's compiled stores put it."""
    assert len(placements) == 24 + len(SWIZZLED) + 3
    for (layout, _, _), where in placements.values():
        R, C = layout_shape = next(k[1] for k in placements if placements[k][0][0] is layout)
        assert np.array_equal(_where(from_gluon(layout, layout_shape), R, C), where), layout


def test_shared_layouts_equal_library_reading_and_h100(placements):
    """from_gluon == smem_check's reading (the layouts the H100 recorded) == the H100 recording itself."""
    with open(os.path.join(HERE, "data", "hardware", "smem.json")) as f:
        h100 = json.load(f)["results"]
    seen = 0
    for (layout, (R, C), bits), where in placements.values():
        g = gluon_layout(layout)
        if g.kind == "NVMMASharedLayout":
            lib = expected_nvmma(g["swizzle_byte_width"], bits, g["transposed"], R, C)
            name = f"nvmma.sw{g['swizzle_byte_width']}.b{bits}.{'T' if g['transposed'] else 'N'}"
        elif g.kind == "SwizzledSharedLayout":
            lib = expected_swizzled(g["vec"], g["per_phase"], g["max_phase"], list(g["order"]), R, C)
            o = g["order"]
            name = f"swz.v{g['vec']}.p{g['per_phase']}.m{g['max_phase']}.o{o[0]}{o[1]}"
        else:
            continue
        assert np.array_equal(lib, where), name
        rec = h100.get(name)
        if rec and rec["status"] == "pass" and (rec["R"], rec["C"]) == (R, C):
            assert np.array_equal(unpack_array(rec["observed"]), where), name
            seen += 1
    # the 16 NVMMA modes of 16/32-bit, the 8-bit 128 B ones, and the 7 swizzled sets the H100 measured on
    # these very tiles (the other 8-bit modes: same layouts on smaller tiles; tests/test_gpu_replay.py
    # holds the library to the recorded ones)
    assert seen == 16 + 2 + 7


def test_shared_rejects_what_triton_rejects():
    with pytest.raises(LayoutError, match="swizzle row"):
        from_gluon(gl.NVMMASharedLayout(128, 8, transposed=True), (64, 128))  # Triton: "Block shape is too small"
    with pytest.raises(LayoutError, match="power of two"):
        from_gluon("SwizzledSharedLayout(8, 1, 8, [1, 0])", (24, 64))
    with pytest.raises(LayoutError, match="no CuTe layout"):
        from_gluon("SharedLinearLayout([[0, 1], [0, 2], [0, 4], [1, 4], [2, 0], [4, 1]])", (8, 8))


# ------------------------------------------------------------------ (c) bank conflicts
def _bank_pairs():
    rng = random.Random(7)
    regs = [
        gl.BlockedLayout([1, 1], [32, 1], [4, 1], [1, 0]), gl.BlockedLayout([1, 8], [32, 1], [4, 1], [1, 0]),
        gl.BlockedLayout([1, 1], [1, 32], [4, 1], [1, 0]), gl.BlockedLayout([2, 1], [16, 2], [4, 1], [1, 0]),
        gl.BlockedLayout([1, 4], [8, 4], [4, 1], [1, 0]), gl.BlockedLayout([8, 1], [4, 8], [1, 4], [0, 1]),
        gl.BlockedLayout([1, 2], [4, 8], [2, 2], [0, 1]),
        gl.DotOperandLayout(0, _v2((4, 1)), 2), gl.DotOperandLayout(1, _v2((1, 4)), 2),
        gl.DotOperandLayout(0, _v2((2, 2)), 1), _v2((2, 2)), _v3(64), gl.DotOperandLayout(0, _v3(64), 2),
    ]
    shared = [gl.NVMMASharedLayout(sw, 16, transposed=tr) for sw in (0, 32, 64, 128) for tr in (False, True)]
    shared += [gl.SwizzledSharedLayout(*p) for p in SWIZZLED[:6]]
    # (PaddedSharedLayout: Triton 3.6's toLinearLayout aborts on it -- "unknown layout" -- so it has no count)
    pairs = [(r, s, (64, 64), 16) for r in regs for s in shared]
    pairs += [(r, gl.NVMMASharedLayout(sw, 32, transposed=False), (64, 64), 32) for r in regs[:7] for sw in (0, 64, 128)]
    rng.shuffle(pairs)
    return pairs


BANK_PAIRS = _bank_pairs()


def test_bank_conflicts_equal_tritons():
    """Triton's get_shared_bank_conflicts == layoutalg.banks' worst conflict degree - 1, same access, all pairs."""
    assert len(BANK_PAIRS) >= 50
    differ = []
    for reg, sh, shape, bits in BANK_PAIRS:
        want = oracle.engine_bank_conflicts(reg, sh, shape, bits)
        got = bank_report(reg, sh, shape, bits).ways - 1
        if want != got:
            differ.append((reg, sh, want, got))
    # No difference to decide: where the two models could part (broadcast lanes, sub-word
    # accesses) they count the same, so neither the H100 recordings nor ncu were needed.
    assert differ == []


def test_bank_report_matches_h100_ncu():
    """The same model, on the access the H100 measured: a 128B-swizzled fp16 column read, 16-byte vectors (ncu: 0 conflicts)."""
    with open(os.path.join(HERE, "data", "hardware", "banks.json")) as f:
        rec = json.load(f)["results"]["sw128.col.16B"]
    reg = gl.BlockedLayout([1, 8], [32, 1], [1, 1], [1, 0])  # thread t holds row t's first 8 halves: one ld.v4
    r = bank_report(reg, gl.NVMMASharedLayout(128, 16), (32, 64), 16)
    assert r.access_bytes == rec["vector_bytes"] == 16
    assert r.instructions[0].wavefronts == rec["predicted"]["wavefronts"]
    assert rec["ncu"]["bank_conflicts"] == 0 == oracle.engine_bank_conflicts(reg, gl.NVMMASharedLayout(128, 16), (32, 64), 16)


# ------------------------------------------------------------------ round trip
def canonical_layouts(rng, n):
    """Gluon layouts in the spelling to_gluon answers with (see its docstring), with shapes."""
    out = []
    while len(out) < n:
        k = rng.randrange(9)
        if k == 0:  # mma.sync accumulator, several warp arrangements
            w = split(rng, p2(rng, 0, 3), 2)
            out.append((_v2(w), (16 * w[0] * p2(rng, 0, 2), 8 * w[1] * p2(rng, 0, 2)), None))
        elif k == 1:  # wgmma accumulator: instr N visible when warps split N
            n_, wn = p2(rng, 3, 6), p2(rng, 1, 2)
            out.append((_v3(n_, (4, wn)), (64 * p2(rng, 0, 1), n_ * wn * p2(rng, 0, 1)), None))
        elif k == 2:  # mma.sync operands (N split across warps so that A is not the accumulator's spelling)
            kw, opi = p2(rng, 0, 3), rng.randint(0, 1)
            w = [1, 2 * p2(rng, 0, 1)] if opi == 0 else [2 * p2(rng, 0, 1), 1]
            shape = (16 * w[0] * 2, 8 * kw * 2) if opi == 0 else (8 * kw * 2, 8 * w[1] * 2)
            out.append((gl.DotOperandLayout(opi, _v2(w), kw), shape, None))
        elif k == 3:  # wgmma A from registers
            kw = p2(rng, 0, 2)
            out.append((gl.DotOperandLayout(0, _v3(8, (4, 2)), kw), (128 * p2(rng, 0, 1), 32 * kw), None))
        elif k == 4:  # blocked, tile dividing the shape; spt 1 where no thread or warp moves
            rank = rng.choice([1, 2, 2, 2, 3])
            tpw, wpc = split(rng, 32, rank), split(rng, p2(rng, 0, 3), rank)
            spt = [p2(rng, 0, 2) if tpw[d] * wpc[d] > 1 else 1 for d in range(rank)]
            order = list(range(rank))[::-1]
            shape = tuple(spt[d] * tpw[d] * wpc[d] * p2(rng, 0, 1) for d in range(rank))
            out.append((gl.BlockedLayout(spt, tpw, wpc, order), shape, None))
        elif k == 5:  # NVMMA shared, every mode
            bits, sw, tr = rng.choice([8, 16, 32]), rng.choice([32, 64, 128]), rng.random() < 0.5
            w = 8 * sw // bits
            shape = (w * p2(rng, 0, 1), 8 * p2(rng, 0, 2)) if tr else (8 * p2(rng, 0, 2), w * p2(rng, 0, 1))
            out.append((gl.NVMMASharedLayout(sw, bits, transposed=tr), shape, bits))
        elif k == 6:  # padded, identity remap
            R, C = p2(rng, 3, 6), p2(rng, 4, 7)
            pairs = sorted([[C, p2(rng, 0, 3)]] + ([[C * 4, p2(rng, 2, 4)]] if rng.random() < 0.5 else []))
            out.append((gl.PaddedSharedLayout.with_identity_for(pairs, [R, C], rng.choice([[1, 0], [0, 1]])), (R, C), None))
        elif k == 7:  # a shared linear layout that is a permutation of offset bits, not row/column-major
            R, C = p2(rng, 2, 4), p2(rng, 2, 4)
            bases = [[1 << i, 0] for i in range(R.bit_length() - 1)] + [[0, 1 << i] for i in range(C.bit_length() - 1)]
            while True:
                rng.shuffle(bases)
                rows = [b for b in bases if b[0]]
                if bases not in (sorted(bases, key=lambda b: (b[0], b[1])), sorted(bases, key=lambda b: (b[1], b[0]))) \
                        and rows == sorted(rows) and rows != bases[-len(rows):]:
                    break
            out.append((gl.SharedLinearLayout([list(b) for b in bases]), (R, C), None))
        else:  # distributed linear: lanes and warps scattered (no named class has them so)
            R, C = 32, 32
            bits = [[1 << i, 0] for i in range(5)] + [[0, 1 << i] for i in range(5)]
            rng.shuffle(bits)
            out.append((gl.DistributedLinearLayout(reg_bases=bits[7:], lane_bases=bits[:5], warp_bases=bits[5:7],
                                                   block_bases=[], shape=[R, C]), (R, C), None))
    return out


def test_round_trip_gives_back_the_layout_object():
    """Gluon -> layoutalg -> Gluon: an equal Triton layout object, 240 layouts of every class."""
    rng = random.Random(2026)
    cases = canonical_layouts(rng, 240)
    kinds = set()
    for layout, shape, bits in cases:
        x = from_gluon(layout, shape)
        back = to_gluon(x, shape, kind="shared" if gluon_layout(layout).is_shared else "distributed",
                        element_bitwidth=bits)
        assert back.layout == layout, (layout, shape, back.source)
        assert back.gluon == gluon_layout(layout)
        assert gluon_layout(back.source) == back.gluon  # the source text parses back to the same call
        kinds.add(type(layout).__name__)
    assert kinds == {"NVMMADistributedLayout", "DotOperandLayout", "BlockedLayout", "NVMMASharedLayout",
                     "PaddedSharedLayout", "SharedLinearLayout", "DistributedLinearLayout"}


def test_round_trip_of_any_spelling_is_the_same_layout_to_triton():
    """Any spelling (slices, aliases) comes back as a layout Triton's engine maps identically (200 layouts)."""
    rng = random.Random(99)
    done = exact = 0
    while done < 200:
        layout, shape = random_distributed(rng)
        try:
            want = oracle.engine_bases(layout, shape)
        except Exception:  # noqa: BLE001
            continue
        back = to_gluon(from_gluon(layout, shape), shape, kind="distributed")
        assert oracle.engine_bases(back.layout, shape) == want, (layout, shape, back.source)
        done += 1
        exact += back.layout == layout
    assert exact >= 90  # the rest are other spellings of the same layout (Triton agrees above)


def test_slice_is_recognised():
    s = gl.SliceLayout(0, gl.BlockedLayout([1, 1], [4, 8], [2, 2], [1, 0]))
    back = to_gluon(from_gluon(s, (64,)), (64,))
    assert type(back.layout).__name__ == "SliceLayout"
    assert oracle.engine_bases(back.layout, [64]) == oracle.engine_bases(s, [64])


def test_nvmma_shared_is_returned_as_one():
    """A swizzled layoutalg tile that is an NVMMASharedLayout comes back as one, not as a SharedLinearLayout."""
    from layoutalg.algebra import tile_to_shape
    from layoutalg.composed import ComposedLayout
    from layoutalg.nvidia.hopper.wgmma import atom, tile

    for sw in (32, 64, 128):
        for dt, bits in (("bf16", 16), ("tf32", 32), ("e4m3", 8)):
            shape = (64, 64) if bits != 8 else (128, 128)
            r = to_gluon(tile("K", sw, dt, shape), shape, element_bitwidth=bits)
            assert r.source == f"gl.NVMMASharedLayout(swizzle_byte_width={sw}, element_bitwidth={bits})"
            # MN-major (dim0 contiguous): Gluon's transposed layout, its atoms tiled K first
            a = atom("MN", sw, dt)
            mn_first = ComposedLayout(a.outer, 0, tile_to_shape(a.inner, shape, (1, 0)))
            r = to_gluon(mn_first, shape, element_bitwidth=bits)
            assert (r.gluon.kind, r.gluon["swizzle_byte_width"], r.gluon["transposed"]) == ("NVMMASharedLayout", sw, True)
            # CuTe's default tiling of the MN-major atom (MN first) is another layout when the atom repeats along
            # both dims; Gluon has no NVMMA spelling for it, so it comes back as a SharedLinearLayout
            cute = tile("MN", sw, dt, shape)
            if int(a.inner[0].size()) < shape[0]:
                assert to_gluon(cute, shape, element_bitwidth=bits).gluon.kind == "SharedLinearLayout"


def test_errors_say_why():
    from layoutalg import Layout

    with pytest.raises(LayoutError, match="not F2-linear"):
        to_gluon(Layout((4, 4), (1, 3)), (4, 4), kind="shared")
    # (4,4):(1,5) is F2-linear plus a pad: row stride 5 = 4 + 1 -> PaddedSharedLayout([[4, 1]], ...)
    assert to_gluon(Layout((4, 4), (1, 5)), (4, 4), kind="shared").gluon["interval_padding_pairs"] == ((4, 1),)
    with pytest.raises(LayoutError, match="power of two"):
        to_gluon(Layout((3, 4), (4, 1)), (3, 4))
    with pytest.raises(LayoutError, match="two dimensions"):
        to_gluon(Layout(((32,), 2), ((1,), 96)), (64, 2), kind="distributed")  # register 1 -> (32, 1)
    with pytest.raises(LayoutError, match="not one of Gluon's layout classes"):
        gluon_layout("gl.FancyLayout(1)")
    with pytest.raises(LayoutError, match="not a literal"):
        gluon_layout("BlockedLayout(x, [32], [4], [0])")


def test_cli_export_and_show(capsys):
    from layoutalg.cli import main

    assert main(["export", "--gluon", "Sw<3,3,3> o (64,64):(64,1)", "--shape", "64,64", "--bits", "16"]) == 0
    assert capsys.readouterr().out.strip() == "gl.NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16)"
    assert main(["show", "--gluon", "NVMMASharedLayout(128, 16)", "--shape", "64,64"]) == 0
    assert "Sw<3,3,3> o _0 o (64,64):(64,1)" in capsys.readouterr().out


if __name__ == "__main__":  # pragma: no cover - a recording tool
    raise SystemExit(PLACEMENTS.main())
