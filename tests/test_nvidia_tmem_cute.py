"""The TMEM copy atoms (tcgen05.ld / st / cp) against CuTe C++ 4.2, every atom the headers define.

``tests/data/cute/tmem_atoms.json`` holds what CuTe prints for each of the 160 ``SM100_TMEM_LOAD_*``,
``SM100_TMEM_STORE_*`` and ``SM100_UTCCP_*`` atoms of ``cute/atom/copy_traits_sm100.hpp``
(``Copy_Traits``' ThrID, ValID, SrcLayout, DstLayout, RefLayout, and ``Copy_Atom<Op, float>`` /
``Copy_Atom<Op, half_t>``), recorded by ``python tests/cute_tmem_cases.py --record`` (g++ on the host;
no GPU). The tests require layoutalg's layouts to print the same text, and recompile a small sample
each run so the recording cannot drift from CuTe.
"""

from __future__ import annotations

import cute_tmem_cases as C
from layoutalg.interop import cutecpp
from layoutalg.nvidia.blackwell import tmem_copy as TC

REC = C.REC.data
needs = C.REC.needs
FIELDS = ("ThrID", "ValID", "Src", "Dst", "Ref")


def mine(name: str) -> dict:
    op = TC.tmem_copy_op(name)
    out = dict(zip(FIELDS, map(str, (op.thr_id, op.val_id, op.src_bits, op.dst_bits, op.ref_bits))))
    out["atom.float"] = str(op.copy_atom("f32"))
    out["atom.half_t"] = str(op.copy_atom("f16"))
    return out


@needs
def test_recording_covers_every_atom_and_is_current():
    assert REC["cute_version"] == "4.2.0" and REC["date"] and "g++" in REC["how"]
    assert sorted(REC["atoms"]) == sorted(TC.tmem_copy_names()) and len(REC["atoms"]) == 160
    stale = C.REC.stale({n: C.snippet(n) for n in TC.tmem_copy_names()}, "atoms")
    assert not stale


@needs
@C.REC.live
def test_every_atom_of_the_headers_is_known():
    assert sorted(C.header_atom_names()) == sorted(TC.tmem_copy_names())


@needs
def test_every_atom_prints_as_cute():
    bad = []
    for name, rec in REC["atoms"].items():
        m = mine(name)
        bad += [(name, k, m[k], rec[k]) for k in m if m[k] != C.norm(rec[k])]
    assert not bad, bad[:5]


@needs
def test_comparison_can_fail():
    rec = REC["atoms"]["SM100_TMEM_LOAD_16dp64b2x"]
    wrong = TC.tmem_copy_op("SM100_TMEM_LOAD_16dp64b4x")
    assert str(wrong.dst_bits) != C.norm(rec["Dst"]) and str(wrong.val_id) != C.norm(rec["ValID"])


@needs
@C.REC.live
def test_recording_is_what_cute_prints_today():
    """Recompile one atom of each family (one program, a few seconds) and require the recording's text."""
    pick = ["SM100_TMEM_LOAD_16dp256b2x_16b", "SM100_TMEM_STORE_16dp32b8x", "SM100_TMEM_LOAD_16dp64b1x",
            "SM100_UTCCP_2x64dp128bitlw0123_2cta", "SM100_UTCCP_4dp256bit_1cta"]
    out = cutecpp.run_snippets([C.snippet(n) for n in pick], headers=C.HEADERS, chunk=len(pick))
    for n, o in zip(pick, out):
        assert isinstance(o, str), o
        got = C.parse_output(o)
        assert {k: got[k] for k in got} == {k: REC["atoms"][n][k] for k in got}
