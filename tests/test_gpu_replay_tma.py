"""Replay the H100's TMA recording (tests/data/hardware/tma.json) against the library, on any CPU.

The recording holds, per case: the tensor map the driver encoded, the loads, and a fingerprint
(sha256) of where every element landed in shared memory (plus sampled slots); the driver's verdict on
arguments that break one rule each; the arguments CuTe's make_tma_copy passed to the driver and the
128 bytes it got; and TMA -> wgmma runs with their negative controls. The second half shows that
these checks fail when the library is wrong, runs the harness pipeline on a simulated GPU, and
compares the library with CuTe's make_tma_copy compiled on this CPU.
"""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

from layoutalg.gpu import encode as enc
from layoutalg.gpu import tma_check as tc
from layoutalg.gpu.common import load_recording
from layoutalg.nvidia.hopper import tma
from layoutalg.nvidia.hopper.tma import RULES, TensorMap, descriptor_reads, make_tma_copy

TMA = load_recording("tma")
needs = pytest.mark.skipif(TMA is None, reason="no TMA hardware recording")


@needs
def test_recording_says_where_it_comes_from():
    env = TMA["environment"]
    assert env["gpu"].startswith("NVIDIA H100") and env["capability"] == "sm_90"
    assert env["driver"] and env["date"] and env["nvcc"]


@needs
def test_placements_measured_and_all_agree():
    pl = TMA["placement"]
    runs = {n: r for n, r in pl.items() if r.get("kind") in ("raw", "layout")}
    assert len(runs) >= 60
    assert all(r["status"] == "pass" and r["mismatches"] == 0 for r in runs.values())
    swz = {(r["map"]["swizzle"], r["map"]["tensorDataType"]) for r in runs.values()}
    assert {s for s, _ in swz} == {0, 1, 2, 3}  # NONE, 32B, 64B, 128B
    bits = {tma.DATA_TYPES[tma.tma_data_type(d)][1] for _, d in swz}
    assert bits == {8, 16, 32}
    assert sum(r["counts"]["zero_fill"] > 0 for r in runs.values()) >= 60  # out-of-bounds fill everywhere
    assert sum(r["kind"] == "layout" for r in runs.values()) >= 12
    assert tc.replay_placement(TMA) == []


def _ptx_unswizzle(b: np.ndarray, span: int) -> np.ndarray:
    """The PTX ISA swizzle tables, written independently: 16-byte chunk ^= 128-byte line mod (span / 16)."""
    if not span:
        return b
    rows = span // 16
    line, chunk = b >> 7, (b >> 4) & 7
    return (b & ~0x70) | ((chunk ^ (line % rows)) << 4)


@needs
def test_sampled_slots_follow_the_ptx_text():
    """Independent of the library: every sampled slot of every 2-D raw case, from the PTX tables, box rows a
    swizzle span apart (padded) when swizzled, dense otherwise, and zero fill outside the tensor."""
    checked = 0
    for name, rec in TMA["placement"].items():
        m = rec["map"]
        if rec.get("kind") != "raw" or m["tensorRank"] != 2 or m["elementStrides"] != [1, 1] or m["oobFill"]:
            continue
        nb = {0: 1, 1: 2, 6: 2, 9: 2, 2: 4, 3: 4, 7: 4, 11: 4}[m["tensorDataType"]]
        span = {0: 0, 1: 32, 2: 64, 3: 128}[m["swizzle"]]
        box0, box1 = m["boxDim"]
        R = span if span else box0 * nb
        for slot, val in rec["sample"].items():
            b = int(slot) * nb
            want = tc.UNTOUCHED
            for dst, (c0, c1) in rec["loads"]:
                off = int(_ptx_unswizzle(np.int64(b), span)) - dst
                if 0 <= off < R * box1 and (off % R) < box0 * nb:
                    g0, g1 = c0 + (off % R) // nb, c1 + off // R
                    inb = 0 <= g0 < m["globalDim"][0] and 0 <= g1 < m["globalDim"][1]
                    want = (rec["base"] + g0 * nb + g1 * m["globalStrides"][0]) // nb if inb else tc.ZERO_FILL
            assert val == want, (name, slot)
            checked += 1
    assert checked > 1000


@needs
def test_nan_fill_bits_recorded():
    pl = TMA["placement"]
    assert pl["p.FLOAT16.64B.nanfill"]["counts"]["nan_fill"] > 0
    assert pl["p.FLOAT16.64B.nanfill"]["nan_fill_bits"] == ["0x7ff7"]
    assert pl["p.FLOAT32.NONE.nanfill"]["nan_fill_bits"] == ["0x7ff77ff7"]


@needs
def test_faults_are_the_library_refusals():
    faults = {n: r for n, r in TMA["placement"].items() if r.get("kind") == "fault"}
    assert {n.split(".")[0] for n in faults} == {"f", "q"}
    for n, r in faults.items():
        assert r["status"] == "pass" and "CUresult" in r["hardware"], n
        rule = "box_start_align" if n.startswith("f.") else "smem_address_align"
        assert f"[{rule}]" in r["library_refusal"], n
        assert ("ILLEGAL_INSTRUCTION" if n.startswith("f.") else "MISALIGNED_ADDRESS") in r["hardware"]


@needs
def test_driver_refusals_agree_with_the_rules():
    ref = TMA["refusals"]
    assert all(r["agree"] for r in ref.values())
    assert tc.replay_refusals(TMA) == []
    driver_rules = set(RULES) - tma.DOCUMENTED_ONLY - {
        "packed_type", "smem_address_align", "smem_gmem_major", "smem_layout", "box_start_align", "box_inner_swizzle_pitch"}
    refused = {r["expect"] for r in ref.values() if r["expect"] and r["driver_result"] != 0}
    assert refused == driver_rules  # every enforced rule: the driver refused a case that breaks only it
    assert all(r["driver_error"] == "CUDA_ERROR_INVALID_VALUE" for r in ref.values() if r["driver_result"])
    twins = [r for n, r in ref.items() if n.startswith("ok.")]
    assert len(twins) >= 12 and all(r["driver_result"] == 0 for r in twins)
    same = [r["bindings_same_bytes"] for r in ref.values() if r.get("bindings_same_bytes") is not None]
    assert len(same) >= 20 and all(same)  # cuda.bindings encodes the same 128 bytes as the ctypes path


@needs
def test_cute_make_tma_copy_equals_the_library():
    cases = TMA["cute"]["cases"]
    assert len(cases) >= 10
    assert all(r["status"] == "pass" and r["bytes_equal"] and r["differences"] == [] for r in cases.values())
    assert tc.replay_cute(TMA) == []


@needs
def test_tma_to_wgmma_end_to_end():
    e2e, neg = TMA["e2e"], TMA["negatives"]
    assert {r["major"] for r in e2e.values()} == {"K", "MN"} and {r["swizzle"] for r in e2e.values()} == {0, 32, 64, 128}
    assert all(r["status"] == "pass" and r["mismatched_elements"] == 0 for r in e2e.values())
    assert len(neg) >= 3
    for name, r in neg.items():
        assert r["caught_by_hardware"] and r["how_caught"] == "wrong D" and r["mismatched_elements"] > 1000, name
        assert r["predicted_by_library"] and not r["check_A"]["ok"], name
    assert tc.replay_e2e(TMA) == []


# --------------------------------------------------------------------------------------------------
# the checks can fail
# --------------------------------------------------------------------------------------------------
@needs
def test_dense_rows_model_is_contradicted(monkeypatch):
    """Before the H100 said otherwise, the model stored box rows densely under a swizzle too."""
    monkeypatch.setattr(TensorMap, "smem_row_bytes", property(lambda self: self.smem_box[0] * self.bytes_per_element))
    problems = tc.replay_placement(TMA)
    names = {p.split(":")[0] for p in problems}
    assert "p.FLOAT16.128B.row16" in names and "p.UINT8.32B.half16" in names
    assert not any(".NONE." in n or n.startswith("l.") for n in names)  # full-span rows are unaffected


@needs
def test_wrong_swizzle_is_contradicted(monkeypatch):
    class Wrong64(tma.SwizzleMode):  # recognised as the 64B mode, but XORs the wrong line bits
        def __call__(self, address):
            return tma.Swizzle(2, 4, 2)(address)

    monkeypatch.setitem(tma.SWIZZLE_MODES, "64B", Wrong64("64B", 2, 64, 512, (tma.Swizzle(2, 4, 3),), True))
    problems = tc.replay_placement(TMA)
    assert problems and all(".64B." in p or ".sw64." in p for p in problems)


@needs
def test_missing_rule_is_contradicted(monkeypatch):
    good = TensorMap.violations

    def lax(self, *a, **k):
        return tuple(v for v in good(self, *a, **k) if v.rule != "box_inner_swizzle_span")

    monkeypatch.setattr(TensorMap, "violations", lax)
    problems = tc.replay_refusals(TMA)
    assert any(p.startswith("span.") for p in problems)


@needs
def test_cute_disagreement_is_caught(monkeypatch):
    from layoutalg.gpu import tma_cute  # where replay_cute looks make_tma_copy up

    good = tma_cute.make_tma_copy

    def merging(*a, **k):
        k["coalesce"] = True
        return good(*a, **k)

    monkeypatch.setattr(tma_cute, "make_tma_copy", merging)
    problems = tc.replay_cute(TMA)
    assert any(p.startswith("rows.f16.4x64") for p in problems)


# --------------------------------------------------------------------------------------------------
# the harness pipeline on a simulated GPU that obeys the library's model
# --------------------------------------------------------------------------------------------------
class SimDriver:
    """Stands in for tma_check.Driver: memory, the encode (the library's rules) and both kernels."""

    version = 0

    def __init__(self):
        self.mem, self.next, self.maps = {}, 1 << 20, {}

    def error_name(self, r):
        return "CUDA_ERROR_INVALID_VALUE" if r else "CUDA_SUCCESS"

    def encode_tiled(self, a):
        m = TensorMap(a["tensorDataType"], a["globalDim"], a["globalStrides"], a["boxDim"], a["elementStrides"],
                      a["interleave"], a["swizzle"], a["l2Promotion"], a["oobFill"], a["globalAddress"])
        if m.violations():
            return 1, bytes(128)
        blob = len(self.maps).to_bytes(8, "little") + bytes(120)
        self.maps[blob] = m
        return 0, blob

    def alloc(self, n):
        p = self.next
        self.next += -(-n // 4096) * 4096 + 4096
        self.mem[p] = bytearray(max(n, 16))
        return p

    def free(self, p):
        self.mem.pop(p, None)

    def _find(self, p):
        return next((b, buf) for b, buf in self.mem.items() if b <= p < b + len(buf))

    def htod(self, p, data):
        b, buf = self._find(p)
        buf[p - b:p - b + len(data)] = data

    def dtoh(self, p, n):
        b, buf = self._find(p)
        return bytes(buf[p - b:p - b + n])

    def function(self, cubin, name):
        return name

    def _read(self, p, n, dt):
        return np.frombuffer(self.dtoh(p, n * np.dtype(dt).itemsize), dt)

    def _tma(self, smem, m, coords, dst):
        nb = m.bytes_per_element
        p = m.placement(coords, dst)
        gb, gbuf = self._find(m.global_address)
        for s, g, ok in zip(p["smem"], p["gmem"], p["in_bounds"]):
            off = m.global_address - gb + int(g)
            smem[int(s):int(s) + nb] = gbuf[off:off + nb] if ok else (b"\xf7\x7f" * 2)[:nb] if m.oob_fill != "NONE" else bytes(nb)

    def launch(self, fn, args, smem_bytes):
        if fn == "tma_place":
            m = self.maps[bytes(args[0])]
            cp, dp, n, rank, _, sb, sent, out, info = (a.value for a in args[1:])
            coords, dsts = self._read(cp, 5 * n, np.int32).reshape(n, 5), self._read(dp, n, np.uint32)
            smem = bytearray(np.full(sb // 4, sent, np.uint32).tobytes())
            for c, d in zip(coords, dsts):
                self._tma(smem, m, c[:rank].tolist(), int(d))
            self.htod(out, bytes(smem))
            return
        dt, major = fn.split("_")[2], fn.split("_")[3]
        mA, mB = self.maps[bytes(args[0])], self.maps[bytes(args[1])]
        cA, dA, nA, rA, _, cB, dB, nB, rB, _, b_off, pa, pb, nk, out, info = (a.value for a in args[2:])
        smem = bytearray(smem_bytes)
        for cp, dp, n, r, m, off in ((cA, dA, nA, rA, mA, 0), (cB, dB, nB, rB, mB, b_off)):
            coords, dsts = self._read(cp, 5 * n, np.int32).reshape(n, 5), self._read(dp, n, np.uint32)
            for c, d in zip(coords, dsts):
                self._tma(smem, m, c[:r].tolist(), off + int(d))
        nb = {"f16": 2, "bf16": 2, "tf32": 4, "e4m3": 1}[dt]
        arr = np.frombuffer(bytes(smem), np.uint8)

        def block(word):
            a = descriptor_reads(int(word), dt, major, (64, 32 // nb))
            codes = np.zeros(a.shape, np.uint64)
            for j in range(nb):
                codes |= arr[a + j].astype(np.uint64) << np.uint64(8 * j)
            return enc.decode(codes.ravel(), dt).reshape(a.shape)

        wa, wb = self._read(pa, nk, np.uint64), self._read(pb, nk, np.uint64)
        D = sum(block(wa[s]) @ block(wb[s] + (b_off >> 4)).T for s in range(nk))
        from layoutalg.gpu.wgmma_check import readout

        rows, cols = readout(64, 32 // nb)
        self.htod(out, D[rows, cols].astype(np.float32).tobytes())


@pytest.mark.parametrize("name", ["p.UINT8.128B.half64", "p.BFLOAT16.NONE.row48", "p.TFLOAT32.32B.box3d",
                                  "p.FLOAT16.128B.estride2", "p.FLOAT16.64B.nanfill", "l.bf16.MN.sw128.128x32"])
def test_placement_pipeline_on_a_simulated_gpu(name):
    case = tc.all_placement_cases()[name]
    rec = tc.run_placement(SimDriver(), "sim", case)
    assert rec["status"] == "pass" and rec["mismatches"] == 0, rec
    if TMA is not None:  # the simulator obeys the library, and so did the H100
        assert rec["measured_sha256"] == TMA["placement"][name]["measured_sha256"]


def test_refusal_pipeline_on_a_simulated_gpu():
    rec = tc.run_refusals(SimDriver())
    assert all(r["agree"] for r in rec.values())


def test_e2e_pipeline_on_a_simulated_gpu():
    sim = SimDriver()
    m = next(x for x in tc.e2e_modes() if x["name"] == "bf16.MN.sw32")
    assert tc.e2e_execute(sim, "sim", m, tc.e2e_operands(m))["ok"]
    m = next(x for x in tc.e2e_modes() if x["name"] == "bf16.K.sw128")
    bad = tc.e2e_operands(m, seed=3, desc_swizzle=64)
    assert not tc.e2e_execute(sim, "sim", m, bad)["ok"] and not bad["check"]["A"].ok


def test_ids_round_trip():
    for nb in (2, 4):
        assert tc.decode_ids(tc.encode_ids(5000, nb), nb).tolist() == list(range(5000))
    d0, d1 = tc.decode_ids(tc.encode_ids(60000, 1, 0), 1), tc.decode_ids(tc.encode_ids(60000, 1, 1), 1)
    assert (d0 + 254 * d1).tolist() == list(range(60000))
    assert tc.decode_ids(np.array([0, 0xDEADBEEF, 0x7FC00000]), 4).tolist() == [tc.ZERO_FILL, tc.UNTOUCHED, tc.NAN_FILL]
    assert ctypes.sizeof(ctypes.c_uint64) == 8


# --------------------------------------------------------------------------------------------------
# CuTe's make_tma_copy, compiled on this CPU (g++; a shim stands in for the driver)
# --------------------------------------------------------------------------------------------------
def _cute_available():
    from layoutalg.interop import cutecpp

    return cutecpp.available()


# a few of the 17 recorded cases (each make_tma_copy instantiation costs seconds of g++); all 17 are in
# the recording, replayed above, with the bytes the driver encoded for CuTe's arguments
CUTE_LIVE = ["K.SW128.f16.128x128"]


@pytest.mark.skipif(_cute_available() is not None, reason="CuTe headers or g++ not available")
def test_cute_make_tma_copy_live():
    cases = [c for c in tc.cute_cases() if c["name"] in CUTE_LIVE]
    silent = {"name": "silent.bf16.64B-rows.sw128", "ctype": "bfloat16_t", "dtype": "bf16", "global": [[100, 64], [64, 1]],
              "cute_layout": "composition(Swizzle<3,4,3>{}, make_layout(make_shape(_8{}, _32{}), make_stride(_32{}, _1{})))",
              "library_layout": "Sw<3,4,3> o (8,32):(32,1)", "static_strides": False}
    got = tc.run_cute_cpu(cases + [silent])
    for c in cases:
        assert tc.compare_cute(got[c["name"]], tc.library_cute_args(c)) == [], c["name"]
    # CuTe builds a 128B map with 64-byte box rows for this layout; the TMA would put the rows 128 B apart
    # (measured), so the library refuses it instead of writing past the tile
    s = got[silent["name"]]
    assert s["box_dim"] == [32, 8] and s["swizzle"] == 3
    with pytest.raises(tma.LayoutError, match=r"\[box_inner_swizzle_pitch\]"):
        make_tma_copy("(100,64):(64,1)", "Sw<3,4,3> o (8,32):(32,1)", "bf16", swizzle_unit="byte")
    m = TensorMap("BFLOAT16", (64, 100), (128,), (32, 8), swizzle="128B")
    assert m.violations() == () and m.smem_footprint == 1024 > 8 * 32 * 2
