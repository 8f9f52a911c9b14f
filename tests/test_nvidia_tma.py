"""TMA tensor maps (layoutalg.nvidia.hopper.tma): the driver's rules, the placement model, the derivation from
shared layouts, and the consistency check with wgmma descriptors.

Oracles: the driver documentation's rules written out by hand below (and, in
tests/test_gpu_replay_tma.py, the driver's and the H100's own answers); the PTX ISA's swizzle tables as
hand formulas; CuTe's make_tma_copy compiled on this CPU (tests at the end); the wgmma canonical
layouts of layoutalg.nvidia.hopper.wgmma as an independent implementation of what the descriptor reads.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from layoutalg import Layout, parse
from layoutalg.composed import ComposedLayout
from layoutalg.errors import LayoutError
from layoutalg.nvidia.hopper import tma
from layoutalg.nvidia.hopper.tma import (
    RULES,
    SWIZZLE_MODES,
    TensorMap,
    check_wgmma,
    descriptor_reads,
    make_tma_copy,
    swizzle_mode_of,
    tma_data_type,
)
from layoutalg.nvidia.hopper.wgmma import canonical_layout, k_block_descriptors, tile
from layoutalg.swizzle import Swizzle

BYTES = {"f16": 2, "bf16": 2, "tf32": 4, "e4m3": 1}


def rules_of(m: TensorMap, **kw) -> set[str]:
    return {v.rule for v in m.violations(**kw)}


# --------------------------------------------------------------------------------------------------
# the driver's rules, one by one (cuTensorMapEncodeTiled, CUDA driver API)
# --------------------------------------------------------------------------------------------------
BASE = dict(data_type="FLOAT16", global_dim=(64, 32), global_strides=(128,), box_dim=(64, 8))

RULE_CASES = [
    # (rule broken, arguments changed from BASE); each has a twin just inside the rule
    ("rank", dict(global_dim=(8,) * 6, global_strides=(16, 32, 64, 128, 256), box_dim=(8,) * 6)),
    ("rank_interleave", dict(interleave="16B")),
    ("global_address_align", dict(global_address=8)),
    ("global_dim", dict(global_dim=(0, 32))),
    ("global_dim", dict(data_type="UINT8", global_dim=(2**32 + 1, 1), global_strides=(2**33,))),
    ("global_stride_align", dict(global_strides=(200,))),
    ("global_stride_max", dict(global_strides=(2**40,))),
    ("box_dim", dict(box_dim=(64, 257))),
    ("box_dim", dict(box_dim=(0, 8))),
    ("box_inner_bytes", dict(box_dim=(4, 8))),
    ("box_inner_swizzle_span", dict(box_dim=(32, 8), swizzle="32B")),
    ("box_inner_swizzle_span", dict(data_type="FLOAT32", box_dim=(64, 8), swizzle="128B", global_strides=(256,))),
    ("element_strides", dict(element_strides=(1, 9))),
    ("element_strides", dict(element_strides=(1, 0))),
    ("oob_fill_float", dict(data_type="UINT8", oob_fill="NAN_REQUEST_ZERO_FMA")),
    ("swizzle_target", dict(swizzle="128B_ATOM_32B")),
    ("data_type", dict(data_type=99)),
    ("swizzle", dict(swizzle=99)),
    ("interleave", dict(interleave=9)),
    ("l2_promotion", dict(l2_promotion=9)),
    ("oob_fill", dict(oob_fill=9)),
]
TWINS = [
    dict(global_dim=(8,) * 5, global_strides=(16, 32, 64, 128), box_dim=(8,) * 5),
    dict(global_dim=(8, 32, 4), global_strides=(16, 512), box_dim=(8, 8, 2), interleave="16B"),
    dict(global_address=16),
    dict(data_type="UINT8", global_dim=(2**32, 1), global_strides=(2**32,)),
    dict(global_strides=(208,)),
    dict(global_strides=(2**40 - 16,)),
    dict(box_dim=(64, 256), global_dim=(64, 300)),
    dict(box_dim=(8, 8)),
    dict(box_dim=(16, 8), swizzle="32B"),
    dict(data_type="FLOAT32", box_dim=(32, 8), swizzle="128B", global_strides=(256,)),
    dict(element_strides=(1, 8)),
    dict(oob_fill="NAN_REQUEST_ZERO_FMA"),
    dict(element_strides=(2, 1)),  # dimension 0's element stride is ignored (interleave NONE)
    dict(global_strides=(64,)),  # overlapping rows: not a documented rule, and the driver accepts it
]


def _map(**kw) -> TensorMap:
    a = {**BASE, **kw}
    a.setdefault("element_strides", (1,) * len(a["global_dim"]))
    return TensorMap(**a)


@pytest.mark.parametrize("rule,kw", RULE_CASES, ids=[f"{r}-{i}" for i, (r, _) in enumerate(RULE_CASES)])
def test_each_rule_is_named(rule, kw):
    assert rule in RULES
    assert rules_of(_map(**kw)) == {rule}
    with pytest.raises(LayoutError, match=rf"\[{rule}\]"):
        _map(**kw).check()


@pytest.mark.parametrize("kw", TWINS)
def test_twins_inside_the_rules(kw):
    assert rules_of(_map(**kw)) == set()


def test_documented_but_not_enforced_rule():
    # the driver documentation says INTERLEAVE_32B needs SWIZZLE_32B; driver 580 accepted 64B (recorded)
    m = _map(global_dim=(16, 32, 4), global_strides=(32, 1024), box_dim=(16, 8, 2), interleave="32B", swizzle="64B")
    assert rules_of(m) == set()
    assert rules_of(m, documented=True) == {"interleave_32B_swizzle"}
    assert tma.DOCUMENTED_ONLY == {"interleave_32B_swizzle"}


def test_sm100_swizzles_are_refused_for_sm90_only():
    m = _map(swizzle="128B_ATOM_64B")
    assert rules_of(m) == {"swizzle_target"} and rules_of(m, target="sm_100") == set()
    assert not SWIZZLE_MODES["128B_ATOM_32B"].checked and SWIZZLE_MODES["128B"].checked


def test_names_and_enums():
    assert tma_data_type("bf16") == "BFLOAT16" and tma_data_type("CU_TENSOR_MAP_DATA_TYPE_UINT8") == "UINT8"
    assert tma.swizzle_mode("SWIZZLE_64B").code == 2 and tma.swizzle_mode(3).name == "128B"
    a = _map(swizzle="128B", l2_promotion="L2_256B").driver_args(0x1000)
    assert (a["tensorDataType"], a["swizzle"], a["l2Promotion"], a["globalAddress"]) == (6, 3, 3, 0x1000)
    with pytest.raises(LayoutError, match="not a TMA data type"):
        tma_data_type("f8")
    with pytest.raises(LayoutError, match="global_strides"):
        TensorMap("FLOAT16", (64, 32), (), (64, 8))


# --------------------------------------------------------------------------------------------------
# the placement model
# --------------------------------------------------------------------------------------------------
def _ptx_table(swizzle_bytes: int, line: int, chunk: int) -> int:
    """The PTX ISA tables ("Swizzling Modes"), on 16-byte chunks of 128-byte lines."""
    rows = {32: 2, 64: 4, 128: 8}[swizzle_bytes]
    return chunk ^ (line % rows)


@pytest.mark.parametrize("sw", [32, 64, 128])
def test_swizzle_modes_are_the_ptx_tables(sw):
    mode = tma.swizzle_mode(sw)
    for line in range(16):
        for chunk in range(8):
            assert mode(line * 128 + chunk * 16 + 5) == line * 128 + _ptx_table(sw, line, chunk) * 16 + 5


def test_sm100_atom_swizzles_follow_their_tables():
    # 32-byte atoms: chunks of 32 B XOR the line (mod 4); 64-byte atoms: halves swap on odd lines
    a32, a64 = SWIZZLE_MODES["128B_ATOM_32B"], SWIZZLE_MODES["128B_ATOM_64B"]
    for line in range(8):
        for c in range(4):
            assert a32(line * 128 + c * 32 + 7) == line * 128 + (c ^ (line % 4)) * 32 + 7
        for h in range(2):
            assert a64(line * 128 + h * 64 + 9) == line * 128 + (h ^ (line % 2)) * 64 + 9
    flip = SWIZZLE_MODES["128B_ATOM_32B_FLIP_8B"]
    assert flip(128) == a32(128) ^ 8 and flip(256) == a32(256)


def test_placement_by_hand():
    # bf16 box of 64 x 8 under 128B swizzle at shared byte 1024: row 1, element 0 is linear byte 1024 + 128,
    # line 9 -> chunk 0 ^ (9 % 8) = 1 -> byte 1024 + 144; it holds global element (c0, c1 + 1)
    m = TensorMap("BFLOAT16", (64, 100), (128,), (64, 8), swizzle="128B")
    p = m.placement((0, 96), dst=1024)
    k = 64  # box element (0, 1)
    assert int(p["smem"][k]) == 1024 + 144 and p["coord"][k].tolist() == [0, 97]
    assert int(p["gmem"][k]) == 97 * 128 and bool(p["in_bounds"][k])
    assert int(p["in_bounds"].sum()) == 64 * 4  # rows 96..99 of 100


def test_narrow_rows_are_padded_to_the_swizzle_span():
    # measured on the H100 (tests/data/hardware/tma.json, *.row16 / *.half*): a 16-byte row under a
    # 128B swizzle occupies a whole 128-byte line; the transaction count stays the data
    m = TensorMap("FLOAT16", (64, 20), (128,), (8, 3), swizzle="128B")
    assert m.smem_row_bytes == 128 and m.smem_footprint == 384 and m.box_bytes == 48
    p = m.placement((0, 0))
    assert p["smem"][8] == 128 ^ 16  # row 1 starts on line 1, chunk 0 ^ 1
    assert TensorMap("FLOAT16", (64, 20), (128,), (8, 3)).smem_row_bytes == 16  # no swizzle: dense


def test_element_strides_and_out_of_bounds():
    m = TensorMap("FLOAT16", (100, 40), (208,), (64, 8), (1, 2), swizzle="128B")
    assert m.smem_box == (64, 4) and m.box_bytes == 512
    p = m.placement((56, 33))
    assert p["coord"][64].tolist() == [56, 35]  # second stored row is global row 33 + 2
    inb = p["in_bounds"].reshape(4, 64)  # rows 33, 35, 37, 39 < 40; columns 56 + j < 100 for j < 44
    assert inb[:, :44].all() and not inb[:, 44:].any()
    p = m.placement((0, 36))  # rows 36, 38, 40, 42: the last two are out of bounds
    assert p["in_bounds"].reshape(4, 64).all(axis=1).tolist() == [True, True, False, False]


def test_placement_refuses_what_the_hardware_refuses():
    m = TensorMap("FLOAT16", (64, 20), (128,), (16, 3))
    with pytest.raises(LayoutError, match=r"\[box_start_align\]"):
        m.placement((4, 0))  # 8 bytes: the H100 raised an illegal instruction
    with pytest.raises(LayoutError, match=r"\[smem_address_align\]"):
        m.placement((0, 0), dst=16)  # the H100 raised a misaligned address
    with pytest.raises(LayoutError, match="INTERLEAVE"):
        TensorMap("FLOAT16", (8, 32, 4), (16, 512), (8, 8, 2), interleave="16B").placement((0, 0, 0))


maps = st.builds(
    lambda nb_log, sw, rows, inner16, gpad, rank3: (nb_log, sw, rows, inner16, gpad, rank3),
    st.integers(0, 2), st.sampled_from(["NONE", "32B", "64B", "128B"]), st.integers(1, 9), st.integers(1, 8),
    st.integers(0, 3), st.booleans(),
)


@given(maps, st.integers(-3, 3))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_placement_is_injective_and_inside_the_footprint(spec, shift):
    nb_log, sw, rows, inner16, gpad, rank3 = spec
    nb = 1 << nb_log
    dt = {1: "UINT8", 2: "FLOAT16", 4: "FLOAT32"}[nb]
    span = SWIZZLE_MODES[sw].span
    inner = min(inner16 * 16, span) if span else inner16 * 16
    box = (inner // nb, rows) + ((3,) if rank3 else ())
    gdim = (box[0] * 2, rows + 5) + ((4,) if rank3 else ())
    pitch = gdim[0] * nb + 16 * gpad
    strides = (pitch,) + ((pitch * gdim[1],) if rank3 else ())
    m = TensorMap(dt, gdim, strides, box, swizzle=sw)
    assert m.violations() == ()
    dst = 1024 * 3
    p = m.placement((16 // nb * shift, 2) + ((1,) if rank3 else ()), dst)
    s = p["smem"]
    assert len(np.unique(s)) == len(s) == math.prod(box)
    assert s.min() >= dst and s.max() < dst + m.smem_footprint
    assert np.all(s % nb == 0)
    # the swizzle permutes within 16-byte chunks' positions of each line: undoing it gives the dense rows
    lin = SWIZZLE_MODES[sw](s - dst) if sw != "NONE" else s - dst
    rowsz = m.smem_row_bytes
    j0 = (lin % rowsz) // nb
    assert np.array_equal(j0, np.tile(np.arange(box[0]), math.prod(box[1:])))
    # the same map as a layout (box coordinate -> element offset), for a destination on the pattern repeat
    assert np.array_equal(m.smem_layout().table() * nb + dst, s)


# --------------------------------------------------------------------------------------------------
# make_tma_copy: the derivation
# --------------------------------------------------------------------------------------------------
def _gmma_tiles():
    out = []
    for dt, nb in BYTES.items():
        for major in ("K", "MN") if nb == 2 else ("K",):
            for sw in (0, 32, 64, 128):
                W = max(1, sw // 16)
                atom_mn, atom_k = (8, W * 16 // nb) if major == "K" else (W * 16 // nb, 8)
                for reps in ((1, 1), (2, 1), (1, 2), (2, 4)):
                    shape = (atom_mn * reps[0] * (8 if major == "K" else 1), atom_k * reps[1] * (1 if major == "K" else 2))
                    if shape[0] <= 256 and shape[1] * nb <= 1024:
                        out.append((dt, major, sw, shape))
    return out


GMMA = _gmma_tiles()


@pytest.mark.parametrize("dt,major,sw,shape", GMMA, ids=[f"{d}.{m}.sw{s}.{a}x{b}" for d, m, s, (a, b) in GMMA])
def test_gmma_tiles_derive_verify_and_agree_with_wgmma(dt, major, sw, shape):
    nb = BYTES[dt]
    t = tile(major, sw, dt, shape)
    MN, K = shape
    g = Layout((MN + 40, K * 3), (K * 3 + 16 // nb, 1)) if major == "K" else Layout((MN * 2 + 8, K + 5), (1, MN * 2 + 16))
    c = make_tma_copy(g, t, dt)
    m = c.tensor_map
    assert c.verify() and m.violations() == ()
    # independent facts: the box row is the swizzle atom's row (or 16 B); the loads tile the tile
    span = sw if sw else 16
    assert m.box_dim[0] * nb == (span if (major == "K" or sw) else 16)
    assert m.box_bytes * len(c.loads) == MN * K * nb
    assert all(ld.smem_offset % 128 == 0 for ld in c.loads)
    assert sorted(c.writes().tolist()) == sorted(c.expected().tolist())
    if (K * nb) % 32 == 0:  # whole wgmma k-blocks (32 bytes of K)
        chk = check_wgmma(c, t, operand_name="B", instruction=f"m64n{MN}k{32 // nb}")
        assert chk.ok and chk.checked == MN * K and chk.first is None


def test_cute_example_by_hand():
    # CuTe's SW128 K-major f16 atom tiled to 128 x 128 over a row-major (1000, 512) tensor: the box is one
    # atom column (64 K) by all 128 rows; the tile takes two loads, 16 KiB apart (64 x 128 f16)
    c = make_tma_copy("(1000,512):(512,1)", tile("K", 128, "f16", (128, 128)), "f16")
    m = c.tensor_map
    assert (m.global_dim, m.global_strides, m.box_dim, m.swizzle, m.l2_promotion) == ((512, 1000), (1024,), (64, 128), "128B", "128B")
    assert [ld.smem_offset for ld in c.loads] == [0, 16384]
    assert c.coordinates((256, 64)) == [(64, 256), (128, 256)]
    assert c.transaction_bytes == 128 * 128 * 2


def test_merged_dimensions_only_when_asked():
    g = "(100,64):(64,1)"
    assert make_tma_copy(g, Layout((4, 64), (64, 1)), "f16").tensor_map.box_dim == (64, 4)
    m = make_tma_copy(g, Layout((4, 64), (64, 1)), "f16", coalesce=True).tensor_map
    assert (m.rank, m.box_dim, m.global_dim) == (1, (256,), (6400,))


def test_extra_global_modes_become_unit_boxes():
    c = make_tma_copy("(300,64,7):(64,1,19200)", tile("K", 128, "bf16", (64, 64)), "bf16")
    assert c.tensor_map.box_dim == (64, 64, 1) and c.tensor_map.global_strides == (128, 38400)
    assert c.coordinates((64, 0, 5)) == [(0, 64, 5)]


def test_element_and_byte_swizzle_spellings_agree():
    a = make_tma_copy("(64,64):(64,1)", "Sw<3,3,3> o (8,64):(64,1)", "f16")
    b = make_tma_copy("(64,64):(64,1)", "Sw<3,4,3> o (8,64):(64,1)", "f16")
    assert a.tensor_map == b.tensor_map and a.tensor_map.swizzle == "128B"
    assert "element" in a.notes[0] and "byte" in b.notes[0]
    with pytest.raises(LayoutError, match=r"\[swizzle\]"):
        make_tma_copy("(64,64):(64,1)", "Sw<2,4,2> o (8,64):(64,1)", "f16", swizzle_unit="byte")


class _Foreign:
    """Stands for a shared layout from another library (e.g. a Gluon NVMMASharedLayout wrapper)."""

    def to_layout(self):
        return tile("K", 64, "bf16", (64, 32))


def test_to_layout_hook():
    c = make_tma_copy("(256,32):(32,1)", _Foreign(), "bf16")
    assert c.tensor_map.swizzle == "64B" and c.verify()


@pytest.mark.parametrize("g,layout,dt,rule,kw", [
    ("(64,256):(1,64)", tile("K", 128, "f16", (64, 64)), "f16", "smem_gmem_major", {}),          # global is M-major
    ("(100,60):(60,1)", tile("K", 32, "f16", (64, 16)), "f16", "global_stride_align", {}),        # 120-byte rows
    ("(100,64):(64,1)", tile("K", 128, "f16", (64, 64)), "f16", "global_address_align", {"base_alignment": 8}),
    ("(400,64):(64,1)", Layout((512, 64), (64, 1)), "f16", "box_dim", {}),                        # 512 rows in a box
    ("(100,64):(64,1)", "Sw<3,2,3> o (8,64):(64,1)", "f32", "box_inner_swizzle_span", {}),        # 256-B swizzled rows
    ("(100,64):(64,1)", "Sw<3,4,3> o (8,32):(32,1)", "bf16", "box_inner_swizzle_pitch", {"swizzle_unit": "byte"}),
    ("(2,2,2,2,2,64):(64,128,256,512,1024,1)", Layout((2, 1, 1, 1, 1, 64), (64, 0, 0, 0, 0, 1)), "u8", "rank", {}),
    ("(64,64):(64,1)", Layout((8, 8), (1, 1)), "f16", "smem_layout", {}),                         # not injective
    ("(64,64):(64,1)", Layout((8, 8), (2, 16)), "f16", "smem_layout", {}),                         # holes
    ("(64,64):(0,1)", Layout((8, 64), (64, 1)), "f16", "smem_gmem_major", {}),                     # broadcast mode
])
def test_refusals_name_the_rule(g, layout, dt, rule, kw):
    with pytest.raises(LayoutError, match=rf"\[{rule}\]"):
        make_tma_copy(g, layout, dt, **kw)


def test_misaligned_origin_is_refused():
    c = make_tma_copy("(100,64):(64,1)", tile("K", 128, "f16", (64, 64)), "f16")
    assert c.coordinates((3, 0)) == [(0, 3)]  # rows may start anywhere
    with pytest.raises(LayoutError, match=r"\[box_start_align\]"):
        c.coordinates((0, 4))  # K (dimension 0) must start on 16 bytes = 8 f16


def test_bad_inputs_are_layout_errors():
    for bad in ("(4,4", 17, Layout(((2, 2), 4), ((1, 2), 4))):
        with pytest.raises(LayoutError):
            make_tma_copy(bad, Layout((4, 64), (64, 1)), "f16")
    with pytest.raises(LayoutError):
        make_tma_copy("(100,64):(64,1)", object(), "f16")
    with pytest.raises(LayoutError):
        make_tma_copy("(100,64):(-64,1)", Layout((4, 64), (64, 1)), "f16")
    for kw in ({"base_alignment": 0}, {"swizzle_unit": "bits"}, {"l2_promotion": "512B"}):
        with pytest.raises(LayoutError):
            make_tma_copy("(100,64):(64,1)", "Sw<3,3,3> o (8,64):(64,1)", "f16", **kw)
    with pytest.raises(LayoutError):
        make_tma_copy("(100,64):(64,1)", Layout((4, 64), (64, 1)), "f8")


@st.composite
def plain_tiles(draw):
    """Random compact shared layouts over a (rows, cols) tile: a permutation of small modes."""
    nb = draw(st.sampled_from([1, 2, 4]))
    inner = draw(st.sampled_from([16, 32, 64])) // nb
    rows = draw(st.sampled_from([2, 4, 8]))
    split = draw(st.sampled_from([1, 2]))
    order = draw(st.permutations([0, 1, 2]))
    shapes = [inner, rows, split]
    # modes: column-fast (0), rows (1), a second column block (2), stored in 'order'
    strides = [0, 0, 0]
    acc = 1
    for k in order:
        strides[k] = acc
        acc *= shapes[k]
    L = Layout(((shapes[1]), (shapes[0], shapes[2])), ((strides[1]), (strides[0], strides[2])))
    return nb, L


@given(plain_tiles(), st.integers(0, 3))
@settings(max_examples=60, deadline=None)
def test_derivation_verifies_or_names_a_rule(spec, pad):
    nb, L = spec
    dt = {1: "u8", 2: "f16", 4: "f32"}[nb]
    R, C = L[0].size(), L[1].size()
    g = Layout((R + 3, C + 16 // nb), (C + 16 // nb * (pad + 1), 1))
    try:
        c = make_tma_copy(g, L, dt)
    except LayoutError as e:
        assert any(f"[{r}]" in str(e) for r in RULES), str(e)
        return
    assert c.verify()
    assert math.prod(c.tile_shape) * nb == c.transaction_bytes


# --------------------------------------------------------------------------------------------------
# what wgmma reads, and the consistency check
# --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("major,sw,dt", [(m, s, d) for d in BYTES for m in ("K", "MN") for s in (0, 32, 64, 128)
                                         if m == "K" or BYTES[d] == 2])
def test_descriptor_reads_equal_the_canonical_layout(major, sw, dt):
    """descriptor_reads (closed formulas) against layoutalg.nvidia.hopper.wgmma's canonical layouts (CuTe form)."""
    nb = BYTES[dt]
    T, W = 16 // nb, max(1, sw // 16)
    K = 32 // nb
    if major == "K":
        m, k = 8, 1
        lbo, sbo = (None if sw else 8 * T * 8 + T), 8 * W * T + 4 * T  # padded SBO: a stride the reads must use
    else:
        m, k = (64 // (T * W)), K // 8
        lbo, sbo = (8 * W * T + 2 * T, 8 * W * T * m + 4 * T) if sw else (8 * T * m + T, 8 * T + T)
    lay = canonical_layout(major, sw, dt, m=m, k=k, lbo=lbo, sbo=sbo, swizzle_unit="byte")
    from layoutalg.nvidia.hopper.descriptor import MatrixDescriptor

    d = MatrixDescriptor(start_address=2048, leading_byte_offset=16 if (major == "K" and sw) else lbo * nb,
                         stride_byte_offset=sbo * nb, base_offset=0, swizzle=sw)
    reads = descriptor_reads(d, dt, major, (64, K))
    inner = lay.inner
    mn, kk = np.meshgrid(np.arange(64), np.arange(K), indexing="ij")
    want = 2048 + nb * np.vectorize(lambda a, b: inner(a, b))(mn, kk)
    if sw:
        want = Swizzle({32: 1, 64: 2, 128: 3}[sw], 4, 3)(want)
    assert np.array_equal(reads, want)


def test_check_wgmma_negative_names_the_first_element():
    c = make_tma_copy("(256,64):(64,1)", tile("K", 128, "f16", (64, 64)), "f16")
    bad = check_wgmma(c, tile("K", 64, "f16", (64, 64)))
    assert not bad and bad.first["element"] == (1, 0)
    # by hand: element (1, 0) is TMA row 1 -> byte 128 ^ 16 = 144; a 64B descriptor reads row 1 at byte 64,
    # where the 128B map put row 0's K = 32
    assert (bad.first["tma_byte"], bad.first["wgmma_byte"], bad.first["reads_instead"]) == (144, 64, (0, 32))
    words = [kb.descriptor.encode() for kb in k_block_descriptors(tile("K", 128, "f16", (64, 64)), "f16", "m64n8k16")]
    assert check_wgmma(c, words, major="K")
    swapped = [(w & ~(3 << 62)) | (2 << 62) for w in words]  # the same words coded as 64B
    assert not check_wgmma(c, swapped, major="K")
    with pytest.raises(LayoutError, match="major"):
        check_wgmma(c, words)


def test_check_wgmma_multiple_mn_blocks_and_tile_base():
    t = tile("MN", 128, "bf16", (128, 64))
    c = make_tma_copy("(512,256):(1,520)", t, "bf16")
    assert check_wgmma(c, t, operand_name="A", tile_base=8192)  # two 64-row blocks for A
    # a tile 128 B past the pattern boundary: the TMA swizzles absolute addresses (a slice of the aligned
    # pattern), while descriptors derived with the pattern starting at the tile (base offset 1) read a
    # pattern that starts there -- they disagree (the H100's wgmma base-offset recording says the same)
    r = check_wgmma(c, t, operand_name="A", tile_base=8192 + 128)
    assert not r and r.first is not None


def test_swizzle_mode_of():
    assert swizzle_mode_of(None).name == "NONE"
    assert swizzle_mode_of(Swizzle(1, 6, 1)).name == "128B_ATOM_64B"
    assert isinstance(parse("Sw<3,4,3> o (8,64):(64,1)"), ComposedLayout)


# --------------------------------------------------------------------------------------------------
# the command line
# --------------------------------------------------------------------------------------------------
def test_cli_tma(capsys):
    from layoutalg import cli

    assert cli.main(["tma", "(1000,512):(512,1)", "--tile", "128x128", "--dtype", "f16", "--origin", "(256,64)", "--check"]) == 0
    out = capsys.readouterr().out
    assert "boxDim    : [64, 128]" in out and "[128, 256]" in out and "CU_TENSOR_MAP_SWIZZLE_128B" in out
    assert "TMA writes what wgmma reads: 16384 elements" in out
    assert cli.main(["tma", "(1000,512):(512,1)", "--desc-swizzle", "64"]) == 1
    assert "disagree" in capsys.readouterr().out
    assert cli.main(["tma", "(1000,500):(500,1)"]) == 2
    assert "[global_stride_align]" in capsys.readouterr().err
    assert cli.main(["tma", "(64,256):(1,64)", "--smem", "Sw<3,3,3> o (8,64):(64,1)", "--dtype", "f16"]) == 2
    assert "[smem_gmem_major]" in capsys.readouterr().err
