"""layoutalg.interop.gluon_tmem.tmem_reg_layout against Triton 3.6's get_tmem_reg_layout, on the CPU.

``tests/data/gluon/tmem_reg_layouts.json`` holds Triton's answers for 400 random configurations
(element type f32/f16/bf16/f8e4m3/i8, M 32..512, N 4..1024, blockM 64/128, blockN, packed and
unpacked column strides, 4/8/16 warps, every instruction variant Gluon accepts, CTA splits along M
and N with their CGA layouts, and the scales layout), recorded by ``python
tests/gluon_tmem_oracle.py --record`` (Triton's C++ run in a worker process, since it aborts on some
inputs). Every configuration must come out the same: the same linear-layout bases, None where
Triton says the variant is unsupported, a LayoutError where Triton's verifier refuses the buffer.
A few configurations are asked of Triton live each run. None of it ran on sm_100 hardware.
"""

from __future__ import annotations

import importlib.util
import json

import pytest

import gluon_tmem_oracle as O
from layoutalg import LayoutError
from layoutalg.interop.gluon_tmem import F2Layout, tmem_linear_layout, tmem_reg_layout

REC = O.REC.data
needs = O.REC.needs
has_triton = importlib.util.find_spec("triton") is not None


def mine(cfg: dict):
    try:
        L = tmem_reg_layout(cfg["dtype"], cfg["shape"], block=None if cfg["scales"] else cfg["block"],
                            col_stride=cfg["col_stride"], cta_split=cfg["cta_split"], scales=cfg["scales"],
                            num_warps=cfg["num_warps"], instr_variant=cfg["instr_variant"],
                            cga_layout=cfg["cga_layout"])
    except LayoutError as e:
        return {"error": str(e)}
    return {"unsupported": None} if L is None else {"bases": L.to_triton()}


def agrees(cfg: dict, triton: dict) -> bool:
    m = mine(cfg)
    if "bases" in triton:
        return m.get("bases") == triton["bases"]
    if "unsupported" in triton:
        if "unsupported for shape" in triton["unsupported"]:
            return "unsupported" in m
        return "error" in m  # Gluon's front-end checks (splitn needs two 32-bit registers, ...)
    if "error" in triton:  # the MemDesc verifier refused the TMEM buffer
        return "error" in m
    return True  # a configuration that aborted Triton is not compared


@needs
def test_recording_says_where_it_comes_from():
    assert REC["triton"].startswith("3.6") and REC["date"] and "get_tmem_reg_layout" in REC["how"]
    kinds = [next(iter(c["triton"])) for c in REC["cases"]]
    assert len(kinds) == 400 and kinds.count("bases") >= 250 and "abort" not in kinds
    assert [c["config"] for c in REC["cases"]] == O.random_configs(400)
    laid = [c["config"] for c in REC["cases"] if "bases" in c["triton"]]
    assert sum(c["scales"] for c in laid) >= 30 and sum(bool(c["cga_layout"]) for c in laid) >= 50
    assert {c["instr_variant"] for c in laid} == {"32x32b", "16x64b", "16x128b", "16x256b", "32x32b_splitn"}


@needs
def test_every_recorded_configuration_agrees_with_triton():
    bad = [c["config"] for c in REC["cases"] if not agrees(c["config"], c["triton"])]
    assert not bad, bad[:3]


@needs
def test_comparison_can_fail():
    case = next(c for c in REC["cases"] if "bases" in c["triton"] and c["triton"]["bases"]["register"])
    wrong = json.loads(json.dumps(case["triton"]))
    wrong["bases"]["register"][0], wrong["bases"]["lane"][0] = wrong["bases"]["lane"][0], wrong["bases"]["register"][0]
    assert not agrees(case["config"], wrong)
    assert not agrees(case["config"], {"unsupported": "TMEM layout '32x32b' unsupported for shape"})


def test_by_hand_and_errors():
    L = tmem_reg_layout("f32", (128, 128), block=(128, 128))
    assert L(register=5, lane=7, warp=2) == (64 + 7, 5)  # warp 2 reads lanes 64..95, register r is column r
    L = tmem_reg_layout("f32", (128, 128), block=(128, 128), instr_variant="16x256b")
    # .16x256b: register 0/1 hold columns 2(t%4)+{0,1} of row t//4; register 2 is 8 rows down
    assert L(lane=6, register=1) == (1, 5) and L(lane=6, register=2) == (9, 4)
    with pytest.raises(LayoutError, match="16x32bx2"):
        tmem_reg_layout("f32", (128, 128), block=(128, 128), instr_variant="16x32bx2")
    with pytest.raises(LayoutError, match="num_warps"):
        tmem_reg_layout("f32", (128, 128), block=(128, 128), num_warps=6)
    with pytest.raises(LayoutError, match="bitwidth \\* colStride"):
        tmem_reg_layout("f16", (128, 128), block=(128, 128), col_stride=4)
    with pytest.raises(LayoutError, match="at least 128x64"):
        tmem_reg_layout("f32", (128, 32), block=(128, 64))
    with pytest.raises(LayoutError, match="8-bit"):
        tmem_reg_layout("f16", (128, 4), scales=True)
    with pytest.raises(LayoutError, match="unknown element type"):
        tmem_reg_layout("f12", (128, 4), block=(128, 4))


def test_f2_layout_algebra():
    a = F2Layout.identity1D(4, "x", "o") * F2Layout.identity1D(2, "y", "o")
    assert a(x=3, y=1) == (7,) and a.is_injective()
    assert a.divide_left(F2Layout.identity1D(4, "x", "o")) == F2Layout({"x": [], "y": [(1,)]}, [("o", 2)])
    assert a.divide_right(F2Layout.identity1D(2, "y", "o")) == F2Layout({"x": [(1,), (2,)], "y": []}, [("o", 4)])
    assert a.divide_left(F2Layout.identity1D(2, "y", "o")) is None
    z = F2Layout.zeros1D(2, "x", "o") * F2Layout.identity1D(2, "x", "o")
    assert not z.is_injective()
    # an M=64 block: rows 16..31 of TMEM hold columns N.. (the 64-row accumulator's second half)
    t = tmem_linear_layout((64, 64), (64, 32))
    assert t(row=16, col=0) == (0, 32) and t(row=32, col=0) == (16, 0)


@needs
@O.REC.live
def test_triton_answers_today_as_recorded():
    pick = O.REC.sample([c for c in REC["cases"] if "bases" in c["triton"]], every=40)
    pick += [c for c in REC["cases"] if "unsupported" in c["triton"]][:1]
    got = O.ask([c["config"] for c in pick])
    for c, g in zip(pick, got):
        assert g == c["triton"], c["config"]


# --- the tcgen05.ld Triton emits for sm_100a, against layoutalg's atoms ------------------------------
PTX_CASES = [  # (M, N, blockM, blockN, variant, warps)
    (128, 128, 128, 128, "32x32b", 4),
    (128, 64, 128, 64, "32x32b", 8),
    (64, 64, 64, 64, "32x32b", 4),  # lane 16 on columns: Triton switches to .16x32bx2
    (128, 64, 128, 64, "16x256b", 4),
    (128, 64, 128, 64, "16x128b", 8),
    (128, 64, 128, 64, "16x64b", 4),
]


def _explained_by_atoms(L, ll, instrs):
    """Warp 0's registers of L are, in order, the TMEM cells of ``instrs`` (one atom each, at some base)."""
    from layoutalg.nvidia.blackwell import tmem_copy as TC

    inv = {}  # (dim0, dim1) -> (row, col) of the TMEM buffer
    for row in range(128 if len(ll.bases["row"]) == 7 else 1 << len(ll.bases["row"])):
        for col in range(ll.in_size("col")):
            inv.setdefault(ll(row=row, col=col), (row, col))
    r0 = 0
    for shape, num in instrs:
        op = TC.tmem_copy_op(TC.ld_name(shape, num))
        frag = op.fragment()
        bases = set()
        for t in range(32):
            for j in range(op.registers):
                row, col = inv[L(register=r0 + j, lane=t, warp=0)]
                a = frag(t, j)
                bases.add((row - (a >> 16), col - (a & 0xFFFF)))
        if len(bases) != 1:
            return False
        (lane0, _col0), = bases
        if not 0 <= lane0 <= 16:  # warp 0's lane quarter
            return False
        r0 += op.registers
    return r0 == 1 << len(L.bases["register"])


@pytest.mark.skipif(not has_triton, reason="Triton is not installed")
@pytest.mark.parametrize("case", PTX_CASES, ids=lambda c: "_".join(map(str, c)))
def test_triton_ptx_loads_with_layoutalg_atoms(case):
    import re

    M, N, BM, BN, var, nw = case
    ptx = O.tmem_load_ptx(M, N, BM, BN, var, nw)
    assert ".target sm_100a" in ptx
    found = re.findall(r"tcgen05\.ld\.sync\.aligned\.(\w+)\.x(\d+)\.b32", ptx)
    instrs = [(s, int(n)) for s, n in found]
    assert instrs and all(s == (var if (M, var) != (64, "32x32b") else "16x32bx2") for s, _ in instrs)
    L = tmem_reg_layout("f32", (M, N), block=(BM, BN), num_warps=nw, instr_variant=var)
    ll = tmem_linear_layout((M, N), (BM, BN))
    assert _explained_by_atoms(L, ll, instrs)
    # the check can fail: the same registers read as the other shape do not fit
    other = [("16x64b" if s != "16x64b" else "16x128b", n if s != "16x128b" else 2 * n) for s, n in instrs]
    assert not _explained_by_atoms(L, ll, other)
    if O.ptxas_blackwell() is not None:
        r = O.assemble(ptx)
        assert r.returncode == 0, r.stderr[-2000:]


@needs
@pytest.mark.skipif(not has_triton, reason="Triton is not installed")
def test_gluon_objects_round_trip_and_equal_tritons():
    """Our get_tmem_reg_layout with Gluon's arguments returns the DistributedLinearLayout Triton returns."""
    from triton.experimental.gluon import language as ttgl

    from layoutalg.interop.gluon_tmem import from_gluon_tmem_layout, get_tmem_reg_layout, to_gluon_tmem_layout

    laid = [c for c in REC["cases"] if "bases" in c["triton"]][::23]
    assert len(laid) >= 10
    for c in laid:
        cfg, tri = c["config"], c["triton"]
        lay = to_gluon_tmem_layout(None if cfg["scales"] else cfg["block"], cfg["col_stride"], cfg["cta_split"],
                                   scales=cfg["scales"])
        back = from_gluon_tmem_layout(lay)
        assert back["cta_split"] == tuple(cfg["cta_split"]) and back.get("scales", False) == cfg["scales"]
        ours = get_tmem_reg_layout(cfg["dtype"], cfg["shape"], lay, cfg["num_warps"], cfg["instr_variant"],
                                   cfg["cga_layout"])
        want = ttgl.DistributedLinearLayout(reg_bases=tri["bases"]["register"], lane_bases=tri["bases"]["lane"],
                                            warp_bases=tri["bases"]["warp"], block_bases=tri["bases"]["block"],
                                            shape=tri["shape"])
        assert ours == want
    with pytest.raises(LayoutError):
        from_gluon_tmem_layout(object())
