"""mma.sp metadata register layouts and the sparse fp8 .f16-accumulator target, proven three ways.

1. Each :class:`~layoutalg.nvidia.ampere.mma.SparseMetadata` layout equals its formula in
   :mod:`layoutalg.nvidia.common.ptx_formulas` (``sp.meta.*``), on every ``(lane, field)``.
2. It reproduces what an H100 did (``HARDWARE`` below, recorded by a probe: A all ones, metadata
   ``0x44444444`` (non-zeros at positions 0,1 of every chunk) except one 4-bit field of one lane set to
   ``0xE`` (positions 2,3); B one-hot per chunk upper half, so exactly one ``D[row][n]`` moves and names
   the (row, chunk) that field encodes; run as ``mma.sp.sync.aligned`` with nvcc 13.0 for sm_90a).
3. Where CUTLASS has the atom, it equals CuTe's ``ELayout`` as a function (GMMA sparse per warp,
   SM120 sparse), read from the installed headers.
"""

from __future__ import annotations

import numpy as np
import pytest

from layoutalg import LayoutError
from layoutalg.nvidia.ampere.mma import catalog, sparse_fragment, sparse_metadata
from layoutalg.nvidia.common.ptx_formulas import i, lane
from layoutalg.verify import verify

# (shape, dtype, lanes per group, chunk width, selectors) -- the ISA's "Sparse matrix storage" text
# (9.7.14.6.1): granularity 2:4 (f16/bf16, u8/s8, fp8), 1:2 (tf32), pair-wise 4:8 (u4/s4, e2m1 mxf4);
# one thread of four (k16 f16, k8 tf32, selector 0..3), a pair (selector 0 -> T0,T1 or 1 -> T2,T3),
# or all four (selector 0).
ISA = [
    ("m16n8k16", "f16", 1, 4, 4), ("m16n8k16", "bf16", 1, 4, 4),
    ("m16n8k32", "f16", 2, 4, 2), ("m16n8k32", "bf16", 2, 4, 2),
    ("m16n8k8", "tf32", 1, 2, 4), ("m16n8k16", "tf32", 2, 2, 2),
    ("m16n8k32", "u8", 2, 4, 2), ("m16n8k32", "s8", 2, 4, 2),
    ("m16n8k64", "u8", 4, 4, 1), ("m16n8k64", "s8", 4, 4, 1), ("m16n8k64", "e4m3", 4, 4, 1),
    ("m16n8k64", "e5m2", 4, 4, 1), ("m16n8k64", "e2m1", 4, 4, 1),
    ("m16n8k64", "u4", 2, 8, 2), ("m16n8k64", "s4", 2, 8, 2),
    ("m16n8k128", "u4", 4, 8, 1), ("m16n8k128", "s4", 4, 8, 1), ("m16n8k128", "e2m1", 4, 8, 1),
]


def _all(shape, dtype, nsel):
    return [sparse_metadata(shape, dtype, selector=s) for s in range(nsel)]


@pytest.mark.parametrize("shape,dtype,per_group,chunk,nsel", ISA, ids=[f"{a}.{b}" for a, b, *_ in ISA])
def test_metadata_equals_formula_and_isa_text(shape, dtype, per_group, chunk, nsel):
    for e in _all(shape, dtype, nsel):
        v = verify(e, e.formula.outputs, (lane, i))
        assert v, v.counterexample
        assert e.verify_domain() == (32, 8) and e.num_registers == 1 and e.element_bits == 4
        assert e.threads_per_group == per_group and e.chunk == chunk and e.valid_selectors == tuple(range(nsel))
        read = e.reading_lanes()
        assert len(read) == 8 * per_group and all((l % 4) // per_group == e.selector for l in read)
        # the lanes read cover every chunk of every row of A exactly once
        M, _, K = e.mnk
        cells = sorted(int(e.index(l, j)) for l in read for j in range(8))
        assert cells == list(range(M * K // chunk)), (shape, dtype, e.selector)
    with pytest.raises(LayoutError, match=f"selector {nsel}"):
        sparse_metadata(shape, dtype, selector=nsel)


def test_every_sparse_catalog_type_has_metadata():
    for e in catalog():
        if e.sparse and e.operand == "A":
            m = sparse_metadata(e.shape, e.dtype, kind=e.kind)
            assert m.instruction == e.instruction and m.shape == e.shape


# Recorded on an H100 (sm_90a), see the module docstring: (shape, dtype, selector, lanes read,
# "lane: row,chunk for fields 0..7 | ..." for the first four lanes read and the last).
HARDWARE = [
    ("m16n8k16", "f16", 0, (0, 4, 8, 12, 16, 20, 24, 28),
     "0: 0,0 0,1 0,2 0,3 8,0 8,1 8,2 8,3 | 4: 1,0 1,1 1,2 1,3 9,0 9,1 9,2 9,3 | 8: 2,0 2,1 2,2 2,3 10,0 10,1 10,2 10,3 | 12: 3,0 3,1 3,2 3,3 11,0 11,1 11,2 11,3 | 28: 7,0 7,1 7,2 7,3 15,0 15,1 15,2 15,3"),
    ("m16n8k16", "f16", 1, (1, 5, 9, 13, 17, 21, 25, 29),
     "1: 0,0 0,1 0,2 0,3 8,0 8,1 8,2 8,3 | 5: 1,0 1,1 1,2 1,3 9,0 9,1 9,2 9,3 | 9: 2,0 2,1 2,2 2,3 10,0 10,1 10,2 10,3 | 13: 3,0 3,1 3,2 3,3 11,0 11,1 11,2 11,3 | 29: 7,0 7,1 7,2 7,3 15,0 15,1 15,2 15,3"),
    ("m16n8k16", "f16", 2, (2, 6, 10, 14, 18, 22, 26, 30),
     "2: 0,0 0,1 0,2 0,3 8,0 8,1 8,2 8,3 | 6: 1,0 1,1 1,2 1,3 9,0 9,1 9,2 9,3 | 10: 2,0 2,1 2,2 2,3 10,0 10,1 10,2 10,3 | 14: 3,0 3,1 3,2 3,3 11,0 11,1 11,2 11,3 | 30: 7,0 7,1 7,2 7,3 15,0 15,1 15,2 15,3"),
    ("m16n8k16", "f16", 3, (3, 7, 11, 15, 19, 23, 27, 31),
     "3: 0,0 0,1 0,2 0,3 8,0 8,1 8,2 8,3 | 7: 1,0 1,1 1,2 1,3 9,0 9,1 9,2 9,3 | 11: 2,0 2,1 2,2 2,3 10,0 10,1 10,2 10,3 | 15: 3,0 3,1 3,2 3,3 11,0 11,1 11,2 11,3 | 31: 7,0 7,1 7,2 7,3 15,0 15,1 15,2 15,3"),
    ("m16n8k32", "f16", 0, (0, 1, 4, 5, 8, 9, 12, 13, 16, 17, 20, 21, 24, 25, 28, 29),
     "0: 0,0 0,1 0,2 0,3 8,0 8,1 8,2 8,3 | 1: 0,4 0,5 0,6 0,7 8,4 8,5 8,6 8,7 | 4: 1,0 1,1 1,2 1,3 9,0 9,1 9,2 9,3 | 5: 1,4 1,5 1,6 1,7 9,4 9,5 9,6 9,7 | 29: 7,4 7,5 7,6 7,7 15,4 15,5 15,6 15,7"),
    ("m16n8k32", "f16", 1, (2, 3, 6, 7, 10, 11, 14, 15, 18, 19, 22, 23, 26, 27, 30, 31),
     "2: 0,0 0,1 0,2 0,3 8,0 8,1 8,2 8,3 | 3: 0,4 0,5 0,6 0,7 8,4 8,5 8,6 8,7 | 6: 1,0 1,1 1,2 1,3 9,0 9,1 9,2 9,3 | 7: 1,4 1,5 1,6 1,7 9,4 9,5 9,6 9,7 | 31: 7,4 7,5 7,6 7,7 15,4 15,5 15,6 15,7"),
    ("m16n8k8", "tf32", 0, (0, 4, 8, 12, 16, 20, 24, 28),
     "0: 0,0 0,1 0,2 0,3 8,0 8,1 8,2 8,3 | 4: 1,0 1,1 1,2 1,3 9,0 9,1 9,2 9,3 | 8: 2,0 2,1 2,2 2,3 10,0 10,1 10,2 10,3 | 12: 3,0 3,1 3,2 3,3 11,0 11,1 11,2 11,3 | 28: 7,0 7,1 7,2 7,3 15,0 15,1 15,2 15,3"),
    ("m16n8k8", "tf32", 1, (1, 5, 9, 13, 17, 21, 25, 29),
     "1: 0,0 0,1 0,2 0,3 8,0 8,1 8,2 8,3 | 5: 1,0 1,1 1,2 1,3 9,0 9,1 9,2 9,3 | 9: 2,0 2,1 2,2 2,3 10,0 10,1 10,2 10,3 | 13: 3,0 3,1 3,2 3,3 11,0 11,1 11,2 11,3 | 29: 7,0 7,1 7,2 7,3 15,0 15,1 15,2 15,3"),
    ("m16n8k8", "tf32", 2, (2, 6, 10, 14, 18, 22, 26, 30),
     "2: 0,0 0,1 0,2 0,3 8,0 8,1 8,2 8,3 | 6: 1,0 1,1 1,2 1,3 9,0 9,1 9,2 9,3 | 10: 2,0 2,1 2,2 2,3 10,0 10,1 10,2 10,3 | 14: 3,0 3,1 3,2 3,3 11,0 11,1 11,2 11,3 | 30: 7,0 7,1 7,2 7,3 15,0 15,1 15,2 15,3"),
    ("m16n8k8", "tf32", 3, (3, 7, 11, 15, 19, 23, 27, 31),
     "3: 0,0 0,1 0,2 0,3 8,0 8,1 8,2 8,3 | 7: 1,0 1,1 1,2 1,3 9,0 9,1 9,2 9,3 | 11: 2,0 2,1 2,2 2,3 10,0 10,1 10,2 10,3 | 15: 3,0 3,1 3,2 3,3 11,0 11,1 11,2 11,3 | 31: 7,0 7,1 7,2 7,3 15,0 15,1 15,2 15,3"),
    ("m16n8k16", "tf32", 0, (0, 1, 4, 5, 8, 9, 12, 13, 16, 17, 20, 21, 24, 25, 28, 29),
     "0: 0,0 0,1 0,2 0,3 8,0 8,1 8,2 8,3 | 1: 0,4 0,5 0,6 0,7 8,4 8,5 8,6 8,7 | 4: 1,0 1,1 1,2 1,3 9,0 9,1 9,2 9,3 | 5: 1,4 1,5 1,6 1,7 9,4 9,5 9,6 9,7 | 29: 7,4 7,5 7,6 7,7 15,4 15,5 15,6 15,7"),
    ("m16n8k16", "tf32", 1, (2, 3, 6, 7, 10, 11, 14, 15, 18, 19, 22, 23, 26, 27, 30, 31),
     "2: 0,0 0,1 0,2 0,3 8,0 8,1 8,2 8,3 | 3: 0,4 0,5 0,6 0,7 8,4 8,5 8,6 8,7 | 6: 1,0 1,1 1,2 1,3 9,0 9,1 9,2 9,3 | 7: 1,4 1,5 1,6 1,7 9,4 9,5 9,6 9,7 | 31: 7,4 7,5 7,6 7,7 15,4 15,5 15,6 15,7"),
    ("m16n8k32", "u8", 0, (0, 1, 4, 5, 8, 9, 12, 13, 16, 17, 20, 21, 24, 25, 28, 29),
     "0: 0,0 0,1 0,2 0,3 0,4 0,5 0,6 0,7 | 1: 8,0 8,1 8,2 8,3 8,4 8,5 8,6 8,7 | 4: 1,0 1,1 1,2 1,3 1,4 1,5 1,6 1,7 | 5: 9,0 9,1 9,2 9,3 9,4 9,5 9,6 9,7 | 29: 15,0 15,1 15,2 15,3 15,4 15,5 15,6 15,7"),
    ("m16n8k32", "u8", 1, (2, 3, 6, 7, 10, 11, 14, 15, 18, 19, 22, 23, 26, 27, 30, 31),
     "2: 0,0 0,1 0,2 0,3 0,4 0,5 0,6 0,7 | 3: 8,0 8,1 8,2 8,3 8,4 8,5 8,6 8,7 | 6: 1,0 1,1 1,2 1,3 1,4 1,5 1,6 1,7 | 7: 9,0 9,1 9,2 9,3 9,4 9,5 9,6 9,7 | 31: 15,0 15,1 15,2 15,3 15,4 15,5 15,6 15,7"),
    ("m16n8k64", "u8", 0, (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31),
     "0: 0,0 0,1 0,2 0,3 0,4 0,5 0,6 0,7 | 1: 8,0 8,1 8,2 8,3 8,4 8,5 8,6 8,7 | 2: 0,8 0,9 0,10 0,11 0,12 0,13 0,14 0,15 | 3: 8,8 8,9 8,10 8,11 8,12 8,13 8,14 8,15 | 31: 15,8 15,9 15,10 15,11 15,12 15,13 15,14 15,15"),
    ("m16n8k64", "u4", 0, (0, 1, 4, 5, 8, 9, 12, 13, 16, 17, 20, 21, 24, 25, 28, 29),
     "0: 0,0 0,1 0,2 0,3 0,4 0,5 0,6 0,7 | 1: 8,0 8,1 8,2 8,3 8,4 8,5 8,6 8,7 | 4: 1,0 1,1 1,2 1,3 1,4 1,5 1,6 1,7 | 5: 9,0 9,1 9,2 9,3 9,4 9,5 9,6 9,7 | 29: 15,0 15,1 15,2 15,3 15,4 15,5 15,6 15,7"),
    ("m16n8k64", "u4", 1, (2, 3, 6, 7, 10, 11, 14, 15, 18, 19, 22, 23, 26, 27, 30, 31),
     "2: 0,0 0,1 0,2 0,3 0,4 0,5 0,6 0,7 | 3: 8,0 8,1 8,2 8,3 8,4 8,5 8,6 8,7 | 6: 1,0 1,1 1,2 1,3 1,4 1,5 1,6 1,7 | 7: 9,0 9,1 9,2 9,3 9,4 9,5 9,6 9,7 | 31: 15,0 15,1 15,2 15,3 15,4 15,5 15,6 15,7"),
    ("m16n8k128", "u4", 0, (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31),
     "0: 0,0 0,1 0,2 0,3 0,4 0,5 0,6 0,7 | 1: 8,0 8,1 8,2 8,3 8,4 8,5 8,6 8,7 | 2: 0,8 0,9 0,10 0,11 0,12 0,13 0,14 0,15 | 3: 8,8 8,9 8,10 8,11 8,12 8,13 8,14 8,15 | 31: 15,8 15,9 15,10 15,11 15,12 15,13 15,14 15,15"),
    ("m16n8k64", "e4m3", 0, (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31),
     "0: 0,0 0,1 0,2 0,3 0,4 0,5 0,6 0,7 | 1: 8,0 8,1 8,2 8,3 8,4 8,5 8,6 8,7 | 2: 0,8 0,9 0,10 0,11 0,12 0,13 0,14 0,15 | 3: 8,8 8,9 8,10 8,11 8,12 8,13 8,14 8,15 | 31: 15,8 15,9 15,10 15,11 15,12 15,13 15,14 15,15"),
]


@pytest.mark.parametrize("shape,dtype,sel,lanes,cells", HARDWARE, ids=[f"{h[0]}.{h[1]}.sel{h[2]}" for h in HARDWARE])
def test_metadata_matches_the_h100(shape, dtype, sel, lanes, cells):
    e = sparse_metadata(shape, dtype, selector=sel)
    assert e.reading_lanes() == lanes
    for part in cells.split(" | "):
        ln, rest = part.split(": ")
        want = [tuple(int(x) for x in rc.split(",")) for rc in rest.split()]
        assert [e.coords(int(ln), j) for j in range(8)] == want, (shape, dtype, sel, ln)


def _cute():
    from test_nvidia_mma_cute import cute_alias, cute_layout, header_dir

    if header_dir() is None:
        pytest.skip("CUTLASS headers (nvidia-cutlass) not installed")
    return cute_alias, cute_layout


# (our shape, dtype, CuTe layout, rows M of its codomain)
CUTE = [
    ("m16n8k32", "f16", ("alias", "ELayout_64x32"), 64),
    ("m16n8k16", "tf32", ("alias", "ELayout_64x16"), 64),
    ("m16n8k64", "s8", ("alias", "ELayout_64x64"), 64),
    ("m16n8k64", "e4m3", ("trait", "SM120_SPARSE_16x8x64_TN"), 16),
    ("m16n8k128", "e2m1", ("trait", "SM120_SPARSE_16x8x128_TN_VS"), 16),
]


@pytest.mark.parametrize("shape,dtype,src,rows", CUTE, ids=[c[2][1] for c in CUTE])
def test_metadata_equals_cute_elayout(shape, dtype, src, rows):
    # CuTe's ELayout maps (thread, value) -> m + rows*k over the uncompressed A (warp 0 of a GMMA
    # warpgroup holds rows 0..15); its values fill the 32-bit register in order, so value v sits at
    # bit v * 32 / V, i.e. in field (v * 32 / V) // 4. Each of our fields must be exactly the k of its chunk.
    cute_alias, cute_layout = _cute()
    L = cute_alias(src[1]) if src[0] == "alias" else cute_layout(src[1], "ELayout")
    V = int(np.prod(L.shape[1])) if isinstance(L.shape[1], tuple) else int(L.shape[1])
    e = sparse_metadata(shape, dtype)
    for t in e.reading_lanes():
        got: dict = {}
        for v in range(V):
            idx = L(t, v)
            got.setdefault((v * 32 // V) // 4, set()).add((idx % rows, idx // rows))
        for j in range(8):
            row, c = e.coords(t, j)
            assert got[j] == {(row, k) for k in range(c * e.chunk, (c + 1) * e.chunk)}, (t, j)


def test_metadata_codes_are_the_isas_meaningful_values():
    # "0b0100, 0b1000, 0b1001, 0b1100, 0b1101, 0b1110 are the meaningful values of indices" (2:4 and the
    # pair-wise 4:8); ".tf32: 0b1110 and 0b0100 are the only meaningful index values" (9.7.14.6.1).
    from itertools import combinations

    meaningful = {0b0100, 0b1000, 0b1001, 0b1100, 0b1101, 0b1110}
    f16 = sparse_metadata("m16n8k16", "f16")
    assert {f16.encode(p) for p in combinations(range(4), 2)} == meaningful
    u4 = sparse_metadata("m16n8k128", "u4")
    pairs = [(2 * a, 2 * a + 1, 2 * b, 2 * b + 1) for a, b in combinations(range(4), 2)]
    assert {u4.encode(p) for p in pairs} == meaningful
    tf = sparse_metadata("m16n8k16", "tf32", selector=1)
    assert (tf.encode((0,)), tf.encode((1,))) == (0b0100, 0b1110)
    with pytest.raises(LayoutError, match="chunk of 4"):
        f16.encode((2, 2))
    with pytest.raises(LayoutError, match="aligned pairs"):
        u4.encode((1, 2, 4, 5))


def test_metadata_by_hand():
    # m16n8k16 .f16, selector 2: lane 4*3 + 2 = 14 supplies group 3: field 5 -> row 3 + 8, chunk 1 = columns 4..7
    e = sparse_metadata("m16n8k16", "f16", selector=2)
    assert 14 in e.reading_lanes() and 12 not in e.reading_lanes()
    assert e.coords(14, 5) == (11, 1) and e.chunk_columns(14, 5) == (4, 7) and e.field_bits(5) == (20, 23)
    # m16n8k128 .u4 (seed 004: "16 2-bit vectors ... four non-zero elements from a 8-wide chunk"):
    # lane 7 = groupID 1, lanes 2,3 of the group hold columns 64..127: field 2 -> row 1 + 8, columns 80..87
    e = sparse_metadata("m16n8k128", "u4")
    assert e.coords(7, 2) == (9, 10) and e.chunk_columns(7, 2) == (80, 87)
    assert e.name == "m16n8k128.u4.E[selector=0]"


def test_sparse_fp8_f16_accumulator_needs_sm_120():
    # mma.sp (9.7.14.6.3), PTX ISA Notes: "Support for shape .m16n8k32 and .f16 dtype/ctype with
    # .e4m3/.e5m2 alternate floating point type mma operation introduced in PTX ISA version 8.7."
    # Target ISA Notes: "... requires sm_120". (An H100 with ptxas 13.0 for sm_90a rejects it:
    # "mma with F16 accumulator and F8 floating point type not supported".) The .f32 forms stay sm_89 / 8.4,
    # and the dense mma's .f16-accumulator fp8 forms stay sm_89 (no such note there).
    by = {(e.dtype, e.operand, e.ctype, e.kind, e.sparse, e.shape): e for e in catalog()}
    for dt in ("e4m3", "e5m2"):
        for op in ("C", "D"):
            sp16 = by[(dt, op, "f16", None, True, "m16n8k64")]
            assert (sp16.min_sm, sp16.ptx_isa) == ("sm_120", "8.7")
            assert sp16.instruction == f"mma.sp.sync.aligned.m16n8k64.row.col.f16.{dt}.{dt}.f16"
            sp32 = by[(dt, op, "f32", None, True, "m16n8k64")]
            assert (sp32.min_sm, sp32.ptx_isa) == ("sm_89", "8.4")
            assert by[(dt, op, "f16", None, False, "m16n8k32")].min_sm == "sm_89"
        assert by[(dt, "A", None, None, True, "m16n8k64")].min_sm == "sm_89"
    assert sparse_fragment("m16n8k64", "e4m3", "C", ctype="f16").min_sm == "sm_120"


def test_sparse_kind_forms_are_spelled_ordered_metadata():
    # mma.sp syntax: the .kind forms are "mma.sp::ordered_metadata.sync.aligned...", block-scaled too
    # (".spvariant = {.sp::ordered_metadata}").
    for e in catalog():
        if e.sparse:
            head = "mma.sp::ordered_metadata.sync.aligned." if e.kind else "mma.sp.sync.aligned."
            assert e.instruction.startswith(head), e.instruction
