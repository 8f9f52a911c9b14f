"""wgmma register fragments: proven against the formula read off the ISA's figures and against CUTLASS."""

from __future__ import annotations

import importlib.util
import os

import numpy as np
import pytest

from layoutalg import LayoutError
from layoutalg.nvidia.hopper import wgmma_fragments as wf
from layoutalg.nvidia.ampere.mma import fragment as mma_fragment
from layoutalg.nvidia.common.ptx_formulas import i, lane
from layoutalg.verify import verify

_spec = importlib.util.spec_from_file_location(
    "_cute_headers", os.path.join(os.path.dirname(__file__), "test_nvidia_mma_cute.py")
)
cute = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cute)

ENTRIES = wf.catalog()


def test_catalog_counts():
    # D: f32 for tf32 (k8), f16 (k16), e4m3 (k32); f16 for f16, e4m3; s32 for s8 (k32), b1 (k256).
    # N = 8..256 step 8 (32 values) for float types; 8, 16, 24, 32, 48, ..., 256 (18) for integer/b1.
    assert len(wf.valid_n("f16")) == 32 and len(wf.valid_n("u8")) == 18
    n_d = 3 * 32 + 2 * 32 + 2 * 18
    n_a = 5 * 32 + 2 * 18  # f16, bf16, tf32, e4m3, e5m2; s8, u8
    assert sum(e[2] == "D" for e in ENTRIES) == n_d
    assert sum(e[2] == "A" for e in ENTRIES) == n_a
    assert len(set(ENTRIES)) == len(ENTRIES)


@pytest.mark.parametrize("entry", ENTRIES, ids=["-".join(e) for e in ENTRIES])
def test_entry_equals_figure_formula(entry):
    f = wf.fragment(*entry)
    v = verify(f, f.formula.outputs, (lane, i), symbolic=False)
    assert v, v.counterexample
    assert f.num_threads == 128


def test_symbolic_proof_for_power_of_two_n():
    f = wf.fragment("m64n64k16", "f32", "D")
    v = verify(f, f.formula.outputs, (lane, i))
    assert v and v.method == "symbolic"


@pytest.mark.parametrize("n", [8, 16, 24, 64, 96, 128, 192, 256])
def test_accumulator_equals_cute_clayout_64xn(n):
    f = wf.fragment(f"m64n{n}k16", "f32", "D")
    L = cute.cute_alias("CLayout_64xN", n)
    T, V = f.verify_domain()
    for t in range(T):
        assert [int(f.index(t, v)) for v in range(V)] == [L(t, v) for v in range(V)]


@pytest.mark.parametrize("shape,dtype,alias", [("m64n8k8", "tf32", "ALayout_64x8"), ("m64n8k16", "bf16", "ALayout_64x16"),
                                               ("m64n8k32", "e5m2", "ALayout_64x32"), ("m64n8k32", "s8", "ALayout_64x32")])
def test_a_from_registers_equals_cute(shape, dtype, alias):
    f = wf.fragment(shape, dtype, "A")
    L = cute.cute_alias(alias)
    T, V = f.verify_domain()
    got = np.array([[int(f.index(t, v)) for v in range(V)] for t in range(T)])
    want = np.array([[L(t, v) for v in range(V)] for t in range(T)])
    assert (got == want).all()


def test_each_warp_holds_an_m16n8_fragment():
    # By the ISA's structure: warp w of the warpgroup holds rows 16w..16w+15 exactly as an
    # mma.m16n8k16 accumulator holds rows 0..15, repeated every 8 columns.
    d = wf.fragment("m64n32k16", "f32", "D")
    c = mma_fragment("m16n8k16", "f16", "C")
    for tid in range(128):
        w, l = divmod(tid, 32)
        for v in range(d.num_values):
            r, col = d.coords(tid, v)
            cr, cc = c.coords(l, v % 4)
            assert (r, col) == (cr + 16 * w, cc + 8 * (v // 4))


def test_by_hand():
    # tid 37 = warp 1, lane 5 (groupID 1, threadID_in_group 1); d6: row 16 + 1 + 8 = 25, col 2 + 8 = 10
    assert wf.fragment("m64n16k16", "f32", "D").coords(37, 6) == (25, 10)
    # f16 accumulators pack two per register: N/4 registers
    assert wf.fragment("m64n256k16", "f16", "D", "f16").num_registers == 64
    # the catalog's one accumulator rule: the type named is the multiplicand, f32 accumulation by default
    assert wf.fragment("m64n256k16", "f16", "D").num_registers == 128
    assert wf.fragment("m64n256k16", "f32", "D").num_registers == 128
    assert wf.fragment("m64n8k32", "e4m3", "A").num_registers == 4


def test_errors():
    with pytest.raises(LayoutError, match="N = 40"):
        wf.fragment("m64n40k32", "s8", "A")
    with pytest.raises(LayoutError, match="shared memory"):
        wf.fragment("m64n64k16", "f16", "B")
    with pytest.raises(LayoutError, match="K = 16"):
        wf.fragment("m64n64k32", "f16", "A")
    with pytest.raises(LayoutError, match="M = 64"):
        wf.fragment("m32n64k16", "f32", "D")
    with pytest.raises(LayoutError, match="neither a multiplicand"):
        wf.fragment("m64n64k8", "s32", "D")
    with pytest.raises(LayoutError, match="not valid for .bf16"):
        wf.fragment("m64n64k16", "bf16", "D", ctype="f16")
    with pytest.raises(LayoutError, match="unknown dtype 'banana'"):
        wf.fragment("m64n64k16", "f16", "D", ctype="banana")
    with pytest.raises(LayoutError, match="does not depend on it"):
        wf.fragment("m64n64k16", "f16", "A", ctype="f32")
