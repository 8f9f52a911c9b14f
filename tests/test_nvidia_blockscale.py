"""Block-scale factor layouts (layoutalg.nvidia.blackwell.blockscale) against CuTe C++ 4.2, cuBLAS's formula and torch's recipe.

* ``tests/data/cute/blockscale.json``: what ``Sm1xxBlockScaledConfig<V>::tile_atom_to_shape_SFA/SFB``
  prints for 100 random problem shapes (V = 16 and 32; half of them not multiples of the 128 x 4V
  block, which CuTe pads), recorded by ``python tests/cute_blockscale_cases.py --record`` (g++ on the
  host); :func:`sf_layout` must print the same text. A sample is recompiled each run.
* The blocked index formula (cuBLAS's "1D block scaling factors layout", torch's ``to_blocked``) is
  proven equal to the layout by :func:`layoutalg.verify.verify` symbolically, for every number of
  row blocks, column blocks and batches, for V = 16 and 32.
* torch's ``to_blocked`` recipe (pad, view, permute, reshape, transpose), replayed with numpy, puts
  every factor where the layout says.
* Shared memory: ``deduce_smem_layoutSFA/SFB`` of 24 block-scaled UMMA atoms (MXF8F6F4, MXF4; 1SM and
  2x1SM) and CTA tiles, recorded in the same file; the reported SIGFPE case (MXF4 2x1SM, tile M 128)
  is recorded as CuTe answers it here (an empty SFA layout) and refused with a LayoutError.

None of it ran on sm_100 hardware.
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy

import cute_blockscale_cases as C
from layoutalg import LayoutError, Layout
from layoutalg.interop import cutecpp
from layoutalg.nvidia.blackwell.blockscale import (
    blocked_formula,
    blocked_offset,
    sf_atom,
    sf_layout,
    symbolic_sf_layout,
)
from layoutalg.verify import verify

REC = C.REC.data
needs = C.REC.needs


@needs
def test_recording_is_current():
    assert REC["cute_version"] == "4.2.0" and REC["date"] and "g++" in REC["how"]
    assert sorted(C.key(c) for c in C.cases()) == sorted(REC["cases"]) and len(REC["cases"]) == 100
    assert not C.REC.stale({C.key(c): C.snippet(c) for c in C.cases()})


@needs
@pytest.mark.parametrize("case", C.cases(), ids=C.key)
def test_sf_layouts_print_as_cute(case):
    v, M, N, K, L = case
    rec = REC["cases"][C.key(case)]
    assert str(sf_layout((M, N, K, L), v, "A")) == C.norm(rec["SFA"])
    assert str(sf_layout((M, N, K, L), v, "B")) == C.norm(rec["SFB"])
    assert str(sf_atom(v)) == C.norm(rec["atom"])


@needs
def test_comparison_can_fail():
    rec = REC["cases"][C.key(C.cases()[0])]
    v, M, N, K, L = C.cases()[0]
    assert str(sf_layout((M, N, K, L), 48 - v, "A")) != C.norm(rec["SFA"])
    assert str(sf_layout((M + 128, N, K, L), v, "A")) != C.norm(rec["SFA"])


@needs
@C.REC.live
def test_recording_is_what_cute_prints_today():
    pick = C.REC.sample(C.cases(), every=25)
    spick = C.smem_cases()[:2]
    snips = [C.snippet(c) for c in pick] + [C.smem_snippet(c) for c in spick]
    out = cutecpp.run_snippets(snips, headers=C.SMEM_HEADERS, chunk=len(snips))  # one program
    for c, o in zip(pick, out):
        assert isinstance(o, str), o
        assert C.parse(o) == {k: v for k, v in REC["cases"][C.key(c)].items() if k != "sha1"}
    for c, o in zip(spick, out[len(pick):]):
        assert isinstance(o, str), o
        assert C.parse(o) == {k: v for k, v in REC["smem"][C.smem_key(c)].items() if k != "sha1"}


@pytest.mark.parametrize("sf_vec", [16, 32])
def test_blocked_formula_is_proven_for_every_size(sf_vec):
    expr, inputs, sizes = blocked_formula(sf_vec)
    v = verify(symbolic_sf_layout(sf_vec), expr, inputs)
    assert v and v.method == "symbolic" and v.proven
    # and it is the concrete layout for a few sizes
    for M, K, L in ((128, 4 * sf_vec, 1), (384, 12 * sf_vec, 2), (1000, 17 * sf_vec, 3)):
        lay = sf_layout((M, 8, K, L), sf_vec, "A")
        mb, kb = -(-M // 128), -(-K // (4 * sf_vec))
        assert verify(lay, expr.subs({sizes[0]: mb, sizes[1]: kb, sizes[2]: L}), inputs)


@pytest.mark.parametrize("sf_vec", [16, 32])
def test_proof_can_fail(sf_vec):
    expr, inputs, sizes = blocked_formula(sf_vec)
    m = inputs[0]
    swapped = expr - sympy.Mod(m, 32) * 16 - sympy.Mod(sympy.floor(m / 32), 4) * 4 \
        + sympy.Mod(m, 32) * 4 + sympy.Mod(sympy.floor(m / 32), 4) * 16  # the usual mistake: 4x32 read as 32x4
    assert not verify(symbolic_sf_layout(sf_vec), swapped, inputs)


def _torch_to_blocked(rows: int, cols: int) -> np.ndarray:
    """torch's ``to_blocked`` recipe on an index matrix (numpy): out[p] = row * cols_padded + col."""
    nrb, ncb = -(-rows // 128), -(-cols // 4)
    idx = np.arange(nrb * 128 * ncb * 4).reshape(nrb * 128, ncb * 4)
    blocks = idx.reshape(nrb, 128, ncb, 4).transpose(0, 2, 1, 3)
    return blocks.reshape(-1, 4, 32, 4).transpose(0, 2, 1, 3).reshape(-1)


@pytest.mark.parametrize("sf_vec,M,K", [(16, 128, 64), (32, 256, 512), (16, 300, 16 * 13), (32, 1, 32)])
def test_torch_to_blocked_puts_each_factor_where_the_layout_says(sf_vec, M, K):
    lay = sf_layout((M, 1, K, 1), sf_vec, "A")
    perm = _torch_to_blocked(M, K // sf_vec)
    cols_p = 4 * -(-(K // sf_vec) // 4)
    where = np.empty_like(perm)
    where[perm] = np.arange(len(perm))  # (row, sf col) -> position in the blocked buffer
    for m in range(0, M, max(1, M // 17)):
        for k in range(0, K, sf_vec):
            assert lay(m, k, 0) == where[m * cols_p + k // sf_vec] == blocked_offset(m, k // sf_vec, cols_p // 4)


def test_bad_input():
    for bad in (lambda: sf_atom(8), lambda: sf_layout((128, 128, 64), 64), lambda: sf_layout((128, 128, 64), 16, "C"),
                lambda: sf_layout((0, 128, 64), 16), lambda: blocked_offset(0, 8, 2), lambda: sf_atom(16, "M")):
        with pytest.raises(LayoutError):
            bad()
    assert sf_atom(16, "MN") == Layout(((16, 4), (32, 4)), ((0, 1), (16, 4)))


# --- shared memory: deduce_smem_layoutSFA / SFB ---------------------------------------------------
SMEM = C.smem_cases()


@needs
def test_smem_recording_is_current():
    assert sorted(REC["smem"]) == sorted(C.smem_key(c) for c in SMEM) and len(SMEM) == 24
    assert not C.REC.stale({C.smem_key(c): C.smem_snippet(c) for c in SMEM}, "smem")


@needs
@pytest.mark.parametrize("case", SMEM, ids=C.smem_key)
def test_smem_sf_layouts_print_as_cute(case):
    from layoutalg.nvidia.blackwell.blockscale import smem_sf_layout
    from layoutalg.nvidia.blackwell.umma import umma_atom

    name, tile = case
    a = umma_atom(name)
    rec = REC["smem"][C.smem_key(case)]
    for op in ("A", "B"):
        assert str(smem_sf_layout(op, a.vector_size, a.K, tile, a.cta_group)) == C.norm(rec["SF" + op])


@needs
def test_the_reported_sigfpe_case_is_refused():
    """MXF4 2x1SM with tile M = 128: 64 rows of SFA per CTA. CuTe (here) answers an empty layout; we raise."""
    from layoutalg.nvidia.blackwell.blockscale import smem_sf_layout

    trap = REC["trap"]
    assert trap["case"] == C.smem_key(C.TRAP)
    if not trap["crashed"]:
        assert C.norm(trap["SFA"]).startswith("((((32,4),0),")  # zero 128-row blocks: an empty layout
    with pytest.raises(LayoutError, match="less than one 128-row scale block"):
        smem_sf_layout("A", 32, 64, C.TRAP[1], cta_group=2)
