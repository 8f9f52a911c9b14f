"""A bank report reads at a glance: ``str`` is a short summary (the 450-line report of a CTA's
ldmatrix copy is folded into groups of alike instructions), ``details()`` lists every instruction,
and notebooks fold the detail in a ``<details>`` element."""

from __future__ import annotations

import re

from layoutalg import ComposedLayout, Layout, Swizzle
from layoutalg.banks import analyze_copy
from layoutalg.nvidia.atoms import copy_atom, mma_atom
from layoutalg.tiled import make_tiled_copy_A, make_tiled_mma


def _report(smem):
    mma = make_tiled_mma(mma_atom("SM80_16x8x16_F32F16F16F32_TN"), (2, 2, 1), (128, 128, 64))
    return analyze_copy(make_tiled_copy_A(copy_atom("SM75_U32x4_LDSM_N", "f16"), mma), smem)


def test_str_is_short_and_details_are_complete():
    r = _report(Layout((128, 64), (64, 1)))
    text = str(r)
    assert len(text.splitlines()) <= 12 < len(r.details().splitlines())
    groups = [(int(n), int(wf), int(ideal)) for n, wf, ideal in
              re.findall(r"^  (\d+) instructions?: (\d+) wavefronts \(ideal (\d+)\)", text, re.M)]
    assert sum(n for n, _, _ in groups) == len(r.instructions) == 64
    assert sum(n * wf for n, wf, _ in groups) == r.wavefronts and sum(n * i for n, _, i in groups) == r.ideal
    assert f"first conflict: {r.first_conflict}" in text
    for ins in r.instructions:  # details: one line per instruction
        assert f"  {ins.label}: {ins.wavefronts} wavefronts (ideal {ins.ideal})" in r.details()
    assert r.summary(detail=True) == r.details()
    html = r._repr_html_()
    assert "<details>" in html and html.count("wavefronts (ideal") >= 64


def test_conflict_free_report_and_small_reports():
    r = _report(ComposedLayout(Swizzle(3, 3, 3), 0, Layout((128, 64), (64, 1))))
    assert r.conflict_free and "conflict-free" in str(r) and "first conflict" not in str(r)
    assert len(str(r).splitlines()) <= 6
    from layoutalg.banks import analyze

    small = analyze(Layout((64, 64), (64, 1)), Layout((32, 1), (1, 64)), 2)
    assert str(small) == small.details()  # up to four instructions: every one, as before


def test_repr_is_one_line():
    # ldmatrix rows of a 64-element (128-byte) row-major tile: the 8 rows of each 8x8 matrix start 128 B
    # apart, all in banks 0-3: 8-way, 32 wavefronts where 4 would do; 64 instructions
    r = _report(Layout((128, 64), (64, 1)))
    assert repr(r) == ("BankReport(64 instruction(s) of 16-byte accesses: 2048 wavefronts, ideal 256, "
                       "8-way bank conflict)")
    assert r.wavefronts == sum(i.wavefronts for i in r.instructions)
