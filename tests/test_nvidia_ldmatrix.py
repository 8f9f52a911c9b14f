"""ldmatrix / stmatrix maps, proven against the fragment read off the ISA's ldmatrix figure."""

from __future__ import annotations

import numpy as np
import pytest

from layoutalg import LayoutError
from layoutalg.nvidia.ampere import ldmatrix as ld
from layoutalg.nvidia.ampere.mma import fragment as mma_fragment
from layoutalg.nvidia.common.ptx_formulas import i, lane
from layoutalg.verify import verify


def test_catalog_count():
    assert len(ld.catalog()) == 3 * 2 * 2  # .x1/.x2/.x4, .trans or not, ldmatrix / stmatrix


@pytest.mark.parametrize("num,trans,store", ld.catalog())
def test_equals_formula(num, trans, store):
    f = ld.fragment(num, trans, store=store)
    v = verify(f, f.formula.outputs, (lane, i))
    assert v and v.method == "symbolic"
    assert f.verify_domain() == (32, 2 * num) and f.num_registers == num
    assert f.instruction.startswith("stmatrix" if store else "ldmatrix")


def test_bijection_and_transpose():
    for num in (1, 2, 4):
        a, t = ld.fragment(num), ld.fragment(num, True)
        assert (np.sort(a.layout.table()) == np.arange(64 * num)).all()
        for l in range(32):
            for v in range(2 * num):
                r, c = a.coords(l, v)
                assert t.coords(l, v) == (c, r) and t.batch_index(l, v) == a.batch_index(l, v) == v // 2


def test_by_hand():
    # lane 6: groupID 1, threadID_in_group 2; register r2 element 1: row 1, col 2*2 + 1 = 5 of matrix 2
    f = ld.fragment(4)
    assert (f.batch_index(6, 5), f.coords(6, 5)) == (2, (1, 5))
    # without .trans each matrix lands like an m8n8 accumulator (the reason ldmatrix feeds mma)
    c = mma_fragment("m8n8k16", "s8", "C")
    assert all(f.coords(l, v) == c.coords(l, v) for l in range(32) for v in range(2))


def test_address_lanes():
    a = ld.address_lanes(4)
    # lanes 8j .. 8j+7 supply the row addresses of matrix j
    assert [a(r, j) for j in range(4) for r in range(8)] == list(range(32))
    assert ld.address_lanes(1).size() == 8


def test_errors():
    with pytest.raises(LayoutError, match=".x3"):
        ld.fragment(3)
    with pytest.raises(LayoutError, match="b16"):
        ld.fragment(1, dtype="b8")
