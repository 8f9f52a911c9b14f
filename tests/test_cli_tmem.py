"""``layoutalg tmem``: tcgen05.ld/st/cp atoms, UMMA accumulators and the epilogue's load from a shell.

The printed maps are checked against the PTX ISA's shape formulas and data paths written out here by
hand (not against layoutalg's own tables); the rules' failures name the rule. None of it ran on
sm_100 hardware."""

from __future__ import annotations

import os
import re

import pytest

import cute_tmem_cases as C
from layoutalg import viz
from layoutalg.cli import main

ACC = "SM100_MMA_F16BF16_SS<bf16,bf16,float,128,64,K,K>"
ACC64 = "SM100_MMA_F16BF16_SS<bf16,bf16,float,64,128,K,K>"
ACC2 = "SM100_MMA_MXF8F6F4_2x1SM_SS<e4m3,e4m3,float,ue8m0,256,256,K,K>"


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def _thread_cells(out: str, t: int) -> list[tuple[int, int]]:
    line = next(x for x in out.splitlines() if x.strip().startswith(f"thread {t:>2}") or x.strip().startswith(f"thread {t} "))
    return [(int(a), int(b)) for a, b in re.findall(r"-> \((\d+), (\d+)\)", line)]


def test_load_atom_map_is_the_isa_formula(capsys):
    code, out, _ = run(capsys, "tmem", "SM100_TMEM_LOAD_16dp256b1x")
    assert code == 0
    # PTX ISA .16x256b: lane t//4 + 8*((r//2)%2), column r%2 + 2*(t%4) + 8*(r//4)
    for t in (0, 1, 5, 31):
        assert _thread_cells(out, t) == [(t // 4 + 8 * ((r // 2) % 2), r % 2 + 2 * (t % 4) + 8 * (r // 4)) for r in range(4)]
    assert "tcgen05.ld.sync.aligned.16x256b.x1.b32" in out and "DstLayout ((4,8),(64,2)):((64,256),(1,2048))" in out
    assert out.count("[ok]") == 3 and "verified    : yes" in out and "none of it ran on sm_100 hardware" in out


def test_store_and_16x64b(capsys):
    code, out, _ = run(capsys, "tmem", "SM100_TMEM_STORE_16dp64b2x")
    assert code == 0 and "tcgen05.st.sync.aligned.16x64b.x2.b32" in out
    # .16x64b: lane t//4 + 8*(t%2), column (t//2)%2 + 2r
    assert _thread_cells(out, 5) == [(5 // 4 + 8, (5 // 2) % 2 + 2 * r) for r in range(2)]


def test_utccp(capsys):
    code, out, _ = run(capsys, "tmem", "SM100_UTCCP_4x32dp128bit_2cta")
    assert code == 0 and "tcgen05.cp.cta_group::2.32x128b.warpx4" in out and "ThrID 2:1" in out
    code, _, err = run(capsys, "tmem", "SM100_UTCCP_4x32dp128bit_2cta", "-o", "x.svg")
    assert code == 2 and "-o does nothing for SM100_UTCCP_4x32dp128bit_2cta (a tcgen05.cp" in err


def test_allocation_rules(capsys):
    code, out, _ = run(capsys, "tmem", "SM100_TMEM_LOAD_32dp32b64x", "--alloc", "32")
    assert code == 1 and "[FAILED] TMEM bounds:" in out and "overrun the allocation of 32 columns" in out
    code, out, _ = run(capsys, "tmem", "SM100_TMEM_LOAD_32dp32b64x", "--alloc", "64")
    assert code == 0
    code, _, err = run(capsys, "tmem", "SM100_TMEM_LOAD_32dp32b64x", "--alloc", "48")
    assert code == 2 and "TMEM allocation" in err and "power of two from 32 to 512" in err


def test_accumulator_data_paths(capsys):
    code, out, _ = run(capsys, "tmem", ACC64)
    assert code == 0
    assert "accumulator : ((16,4),128):((65536,2097152),1)" in out  # ISA: M=64, 16 lanes of each quarter
    assert "lanes 0..111 (64 used)" in out
    code, out, _ = run(capsys, "tmem", ACC)
    assert code == 0 and "accumulator : (128,64):(65536,1)" in out  # ISA: M=128, lane m, column n


def test_epilogue_load(capsys):
    code, out, _ = run(capsys, "tmem", "SM100_TMEM_LOAD_32dp32b32x", "--acc", ACC2)
    assert code == 0 and out.count("[ok]") == 4
    # .32x32b over lane m, column n: thread t gets row t, value v is column v (+ 32 per repeat)
    formula = next(x for x in out.splitlines() if x.strip().startswith("offset ="))
    assert formula.strip() == "offset = 128 * v + t"
    code, out, _ = run(capsys, "tmem", "SM100_TMEM_LOAD_16dp256b1x", "--acc", ACC)
    assert "offset = 1024 * (v >> 3) + 256 * (t % 4) + 128 * (v % 2) + (t & 96) + 4 * (v & 6) + ((t >> 2) & 7)" in out
    code, _, err = run(capsys, "tmem", "SM100_TMEM_LOAD_32dp32b1x", "--acc", ACC64)  # lanes 16..31 hold nothing
    assert code == 2 and "does not exist in the data layout" in err


def test_picture_one_line_and_verbose(capsys, tmp_path):
    p = str(tmp_path / "t.svg")
    code, out, _ = run(capsys, "tmem", "SM100_TMEM_LOAD_16dp256b1x", "--acc", ACC2, "-o", p)
    assert code == 0 and len(out.splitlines()) == 1 and out.startswith(f"wrote {p} (") and "-v also prints" in out
    assert os.path.getsize(p) < 200_000
    code, out, _ = run(capsys, "tmem", "SM100_TMEM_LOAD_16dp256b1x", "--acc", ACC2, "-o", p, "-v", "--window", "0:8,0:8")
    assert code == 0 and "rules       :" in out and out.splitlines()[-1].startswith(f"wrote {p}")
    with open(p) as fh:
        assert len(viz.svg_cells(fh.read())) == 64
    code, out, _ = run(capsys, "tmem", "SM100_TMEM_LOAD_16dp64b1x", "--warps", "1", "-o", p, "--mode", "cells")
    assert code == 0 and len(out.splitlines()) == 1


@pytest.mark.parametrize("argv, msg", [
    (["SM100_TMEM_LOAD_16dp256b1x", "--warps", "2"], "--warps does nothing without -o"),
    (["SM100_TMEM_LOAD_16dp256b1x", "--tile", "128x64"], "--tile does nothing for a copy atom alone"),
    (["SM100_TMEM_LOAD_16dp256b1x", "-v"], "-v does nothing without -o"),
    (["SM100_TMEM_LOAD_16dp256b1x", "--window", "0:8,0:8"], "--window does nothing without -o"),
    (["SM100_TMEM_LOAD_16dp256b1x", "--mode", "cells"], "--mode does nothing without -o"),
    ([ACC, "--acc", ACC], "NAME is already a UMMA atom"),
    (["SM100_TMEM_STORE_16dp256b1x", "--acc", ACC], "--acc takes a tcgen05.ld atom"),
    ([ACC, "--warps", "2", "-o", "x.svg"], "--warps does nothing for the accumulator of"),
    (["SM100_TMEM_LOAD_16dp256b1x", "--acc", ACC, "--warps", "2", "-o", "x.svg"], "--warps does nothing with --acc"),
    ([ACC, "--tile", "256x64"], "several 128x64 MMAs"),
    ([ACC, "-o", "x.svg", "--window", "0-8"], "is not LANE0:LANE1,COL0:COL1"),
    (["SM100_TMEM_LOAD_16dp256b3x"], ".num x3 is not valid"),
])
def test_bad_input_names_the_rule(capsys, argv, msg):
    code, out, err = run(capsys, "tmem", *argv)
    assert code == 2 and msg in err and out == "", err


def test_atoms_and_export_know_the_tmem_atoms(capsys):
    code, out, _ = run(capsys, "atoms", "--list", "TMEM_STORE_16dp32b")
    assert code == 0 and out.count("copy SM100_TMEM_STORE_16dp32b") == 16  # x1 .. x128, plain and _16b
    code, out, _ = run(capsys, "atoms", "--list", "UTCCP")
    assert code == 0 and out.count("copy SM100_UTCCP_") == 12
    code, out, _ = run(capsys, "atoms", "SM100_TMEM_LOAD_32dp32b4x", "--dtype", "f32")
    assert code == 0 and "ValLayoutDst: (32,4):(4,1)" in out  # thread t's 4 registers: values 4t .. 4t+3
    if C.REC.data is not None:  # and the whole print is CuTe 4.2's Copy_Atom<SM100_TMEM_LOAD_32dp32b4x, float>
        want = C.REC.data["atoms"]["SM100_TMEM_LOAD_32dp32b4x"]["atom.float"]
        assert C.norm(want) in out
    code, out, _ = run(capsys, "export", "--cpp", "SM100_TMEM_LOAD_16dp256b1x", "--dtype", "f16")
    assert code == 0 and out.splitlines()[0] == "Copy_Atom<SM100_TMEM_LOAD_16dp256b1x, half_t>{}"
    code, out, _ = run(capsys, "export", "--dsl", "SM100_UTCCP_128dp128bit_2cta")
    assert code == 0 and out.strip() == "tcgen05.Cp128x128bOp(tcgen05.CtaGroup.TWO)"
    code, _, err = run(capsys, "export", "--cpp", "SM100_TMEM_LOAD_16dp256b1x")
    assert code == 2 and "needs the value type" in err
