"""The tcgen05 instruction descriptor (layoutalg.nvidia.blackwell.idesc) against CuTe C++, Triton's PTX and the ISA.

* tests/data/cute/idesc.json: 1000 words CuTe 4.2 built on the host (UMMA::make_*instr_desc* over a
  random sweep of the legal space, and SM100 atoms' MMA_Traits::idesc_), replayed: encode equals
  CuTe's word, decode reads CuTe's word back to the same configuration. A small live sample is
  compiled each run, with atoms CuTe must refuse where the ISA does.
* tests/data/gluon_idesc.json: the idescs in the PTX Triton 3.6's Gluon emits for sm_100a
  (ptxas-blackwell assembled each); one configuration is compiled live.
* hypothesis: decode(encode(x)) == x over the legal space.
None of it ran on sm_100 hardware.
"""

from __future__ import annotations

import pathlib
import random
import sys

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from layoutalg import LayoutError
from layoutalg.nvidia.blackwell.idesc import (
    BLOCK_SCALED_FIELDS,
    KINDS,
    PLAIN_FIELDS,
    IdescError,
    InstrDescriptor,
    atom_instr_desc,
    decode,
    make_instr_desc,
    readings,
)

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import cute_idesc_cases as cases  # noqa: E402
import gluon_idesc_oracle as G  # noqa: E402

CUTE = cases.REC.data
GLUON = G.REC.data


def _qualifiers(args):
    return dict(cta_group=args.get("cta_group", 1), ws=args.get("ws", False), sf_vec_size=args.get("sf_vec_size"))


# ------------------------------------------------------------------------------------ CuTe, recorded
def test_cute_recording_is_broad():
    rows = CUTE["cases"]
    assert len(rows) >= 1000
    assert {r["args"]["kind"] for r in rows} == set(KINDS)
    hows = {r["how"] for r in rows}
    assert "make_instr_desc" in hows and sum(h.startswith("MMA_Traits") for h in hows) >= 10
    seen = lambda key: {r["args"].get(key) for r in rows}  # noqa: E731
    assert {True, False} <= seen("sparse") and {True, False} <= seen("negate_a") and {1, 2} <= seen("cta_group")
    assert {0, 8, 16, 32} <= seen("max_shift") and {0, 1, 2, 3} <= seen("sfa_id") and {"ue8m0", "ue4m3"} <= seen("scale_type")


def test_encode_equals_cute_words():
    bad = [(r["how"], r["args"], r["word"], hex(make_instr_desc(**r["args"]).word))
           for r in CUTE["cases"] if make_instr_desc(**r["args"]).word != int(r["word"], 16)]
    assert not bad, bad[:5]


def test_atom_instr_desc_equals_cute_atoms():
    """Derived from the atom's name: the idesc_ each recorded CuTe atom carries."""
    n = 0
    for r in CUTE["cases"]:
        if not r["how"].startswith("MMA_Traits<"):
            continue
        atom = r["how"][len("MMA_Traits<"):-len(">::idesc_")]
        a = dict(r["args"])
        kind = a.pop("kind")
        a.pop("cta_group", None)
        a.pop("sparse", None)
        if atom.startswith("SM100_MMA_MXF4_"):
            a["sf_vec_size"] = a.get("sf_vec_size") or (32 if kind == "mxf4" else 16)
        d = atom_instr_desc(atom, **a)
        assert d.kind == kind and d.word == int(r["word"], 16), (atom, r)
        n += 1
    assert n >= 400
    with pytest.raises(IdescError, match="not an SM100 UMMA atom"):
        atom_instr_desc("SM90_64x128x16_F32BF16BF16_SS", "bf16", "bf16", "f32", 128, 128)
    with pytest.raises(IdescError, match="can't be transposed"):
        atom_instr_desc("SM100_MMA_F16BF16_TS", "bf16", "bf16", "f32", 128, 128, "MN")
    with pytest.raises(IdescError, match="cta_group::2 atom"):
        atom_instr_desc("SM100_MMA_F16BF16_2x1SM_SS", "bf16", "bf16", "f32", 256, 128, cta_group=1)


def test_decode_reads_cute_words_back():
    for r in CUTE["cases"]:
        w = int(r["word"], 16)
        d = decode(w, kind=r["args"]["kind"], **_qualifiers(r["args"]))
        assert d == make_instr_desc(**r["args"]), r
        assert d.word == w


@cases.REC.live
def test_cute_live_sample():
    """A fresh sample through g++ now (12 words, 4 atoms), and atoms CuTe refuses where the ISA does."""
    from layoutalg.interop import cutecpp

    seed = random.randrange(1 << 30)  # a new sample each run; the seed is in every failure message
    sample = [("make_instr_desc", a) for a in cases.legal_cases(12, seed=seed)]
    sample += [("atom", a) for a in cases.legal_cases(60, seed=seed + 1) if cases.atom_name(a)][:4]
    refused = [  # (CuTe atom args, our rule): CuTe's static_asserts and our IdescError agree
        dict(kind="f16", a_type="bf16", b_type="bf16", c_type="f32", m=96, n=128),
        dict(kind="f16", a_type="bf16", b_type="bf16", c_type="f32", m=256, n=24, cta_group=2),
        dict(kind="i8", a_type="s8", b_type="s8", c_type="f32", m=128, n=64),
        dict(kind="mxf8f6f4", a_type="e4m3", b_type="e4m3", c_type="f32", m=64, n=64),
        dict(kind="mxf4", a_type="e2m1", b_type="e2m1", c_type="f32", m=128, n=64, scale_type="ue4m3", sf_vec_size=32),
    ]
    for a in refused:
        with pytest.raises(IdescError):
            make_instr_desc(**a)
    snippets = [cases.snippet(a) if how == "make_instr_desc" else cases.atom_snippet(a) for how, a in sample]
    snippets += [cases.atom_snippet(a) for a in refused]
    res = cutecpp.run_snippets(snippets, headers=cutecpp.DEFAULT_HEADERS + cases.HEADERS_EXTRA, chunk=50,
                               expect_refusal=[False] * len(sample) + [True] * len(refused), refusal_chunk=50)
    for (how, a), r in zip(sample, res):
        assert isinstance(r, str), (seed, a, r)
        assert int(r, 16) == make_instr_desc(**a).word, (seed, how, a, r)
    for a, r in zip(refused, res[len(sample):]):
        assert not isinstance(r, str), f"CuTe accepted {a}: {r}"
        assert "static assert" in r.message or "static_assert" in r.message, r.message


# ------------------------------------------------------------------------------------ Triton, recorded
def test_gluon_ptx_idescs():
    n = 0
    for row in GLUON["cases"]:
        if "triton_refused" in row:
            continue
        assert row["ptxas_blackwell_ok"], row
        assert (f"cta_group::{row['args'].get('cta_group', 1)}.kind::{row['args']['kind']}") in row["ptx_line"], row
        for w in (int(x, 16) for x in row["idescs"]):
            d = decode(w, kind=row["args"]["kind"], sf_vec_size=row["args"].get("sf_vec_size"))
            want = make_instr_desc(**row["args"], sfa_id=d.sfa_id, sfb_id=d.sfb_id)
            assert d == want and want.word == w, (row["args"], hex(w))
            n += 1
    assert n >= 80 and sum(r["args"].get("cta_group") == 2 and "idescs" in r for r in GLUON["cases"]) >= 4
    # the scaled MMAs of one tile step the scale-factor ids: 0..3 for mxf8f6f4, 0 and 2 for mxf4
    # (two ue8m0 per 64-element K step), 0 only for nvfp4 (four ue4m3 per K step fill the 32-bit column)
    ids = {row["args"]["kind"]: {decode(int(x, 16), kind=row["args"]["kind"]).sfa_id for x in row["idescs"]}
           for row in GLUON["cases"] if "idescs" in row and row["args"]["kind"].startswith("mx")}
    assert ids == {"mxf8f6f4": {0, 1, 2, 3}, "mxf4": {0, 2}, "mxf4nvf4": {0}}
    assert GLUON["cases"][0]["idescs"][0] == "0x08200490"


@G.REC.live
def test_gluon_live_compile_and_ptxas():
    cfg = next(c for c in G.configurations() if c["args"]["b_major"] == "MN" and c["args"]["a_major"] == "K")
    ptx = G.compile_ptx(cfg["kernel"], cfg["constexprs"])
    words, line = G.idescs_of(ptx)
    assert set(words) == {make_instr_desc(**cfg["args"]).word} == {0x08210490}
    assert ".target sm_100a" in ptx and "kind::f16" in line
    if G.ptxas() is not None:
        asm = G.assemble(ptx)
        assert asm.returncode == 0, asm.stderr


# ------------------------------------------------------------------------------------ properties
@st.composite
def legal_args(draw):
    rng = random.Random(draw(st.integers(0, 1 << 40)))
    for _ in range(50):
        a = cases.random_args(rng)
        if a["kind"].startswith("mx") and draw(st.booleans()):  # qualifiers CuTe's encoder has no say in
            a["sf_vec_size"] = draw(st.sampled_from([16, 32]))
        if a["kind"] in ("mxf4", "mxf4nvf4") and draw(st.integers(0, 9)) == 0:
            a.update(k=96, m=256, cta_group=2, sparse=False)
        try:
            make_instr_desc(**a)
            return a
        except IdescError:
            continue
    assume(False)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(legal_args())
def test_decode_encode_roundtrip(args):
    d = make_instr_desc(**args)
    assert decode(d.word, kind=d.kind, **_qualifiers(args)) == d
    assert d in readings(d.word, cta_group=d.cta_group, ws=d.ws) or d.sf_vec_size is not None
    assert 0 <= d.word < 1 << 32
    table = BLOCK_SCALED_FIELDS if d.block_scaled else PLAIN_FIELDS
    assert sum(w for _, _, w, _ in table) == 32  # the table covers the word exactly
    assert d.replace() == d
    assert repr(d).startswith(f"InstrDescriptor(0x{d.word:08x}: kind::{d.kind} ")


@settings(max_examples=200, deadline=None)
@given(st.integers(0, (1 << 32) - 1), st.sampled_from(KINDS))
def test_decode_any_word_is_sound(word, kind):
    """Any 32-bit word: decode either refuses (naming the rule) or gives a descriptor that encodes back to it."""
    try:
        d = decode(word, kind=kind)
    except IdescError as e:
        assert str(e).startswith("decode: ")
        return
    assert d.word == word


# ------------------------------------------------------------------------------------ by hand and errors
def test_by_hand_against_the_isa_table():
    d = make_instr_desc("kind::f16", "cutlass::bfloat16_t", ".bf16", "float", 128, 256, "K", "UMMA::Major::MN")
    assert d.word == (1 << 4) | (1 << 7) | (1 << 10) | (1 << 16) | ((256 >> 3) << 17) | ((128 >> 4) << 24)
    assert d.fields["transpose_b"] == 1 and d.fields["n_dim"] == 32 and d.fields["m_dim"] == 8
    d = make_instr_desc("i8", "int8_t", "uint8_t", "int32_t", 64, 24, saturate=True, sparse=True, sparse_selector=3)
    assert d.word == 3 | (1 << 2) | (1 << 3) | (2 << 4) | (1 << 7) | (0 << 10) | (3 << 17) | (4 << 24)
    d = make_instr_desc("tf32", "tf32", "tf32", "f32", 32, 64, ws=True, max_shift=32)
    assert d.fields["max_shift"] == 3 and d.fields["m_dim"] == 2 and d.word >> 30 == 3
    d = make_instr_desc("mxf4nvf4", "float_e2m1_t", "float_e2m1_t", "float", 256, 128, cta_group=2,
                        scale_type="float_ue4m3_t", sfa_id=2, sfb_id=2, k=96, sf_vec_size=16)
    assert d.word == (2 << 4) | (1 << 7) | (1 << 10) | (16 << 17) | (0 << 23) | (2 << 27) | (2 << 29) | (1 << 31)
    assert "scale ue4m3 per 16 elements" in d.describe() and "K=96" in d.describe()
    # e2m1 is code 5 in kind::f8f6f4 / mxf8f6f4, code 1 in kind::mxf4 / mxf4nvf4
    assert make_instr_desc("f8f6f4", "e2m1", "e2m1", "f32", 128, 64).fields["atype"] == 5
    assert make_instr_desc("mxf4", "e2m1", "e2m1", "f32", 128, 64).fields["atype"] == 1


@pytest.mark.parametrize("kwargs, rule", [
    (dict(kind="f16", a_type="bf16", b_type="bf16", c_type="f32", m=96, n=128), "takes M in (64, 128), got M=96"),
    (dict(kind="f16", a_type="bf16", b_type="bf16", c_type="f32", m=128, n=12), "N a multiple of 8 from 8 to 256, got N=12"),
    (dict(kind="f16", a_type="bf16", b_type="bf16", c_type="f32", m=256, n=24, cta_group=2), "N a multiple of 16 from 16 to 256, got N=24"),
    (dict(kind="i8", a_type="s8", b_type="s8", c_type="s32", m=128, n=40), "N = 8, 16, 24, 32 or a multiple of 16"),
    (dict(kind="i8", a_type="s8", b_type="s8", c_type="s32", m=256, n=48, cta_group=2), "multiple of 32"),
    (dict(kind="f8f6f4", a_type="e2m1", b_type="e4m3", c_type="f32", m=128, n=64, a_major="MN"),
     "sub-byte (fp6/fp4) operand and must be K-major"),
    (dict(kind="mxf8f6f4", a_type="e4m3", b_type="e3m2", c_type="f32", m=128, n=64, b_major="MN"), "sub-byte"),
    (dict(kind="mxf4", a_type="e2m1", b_type="e2m1", c_type="f32", m=128, n=64, b_major="MN"), "K-major operands only"),
    (dict(kind="f8f6f4", a_type="e4m3", b_type="e4m3", c_type="f32", m=128, n=24, b_major="MN"), "multiple of 16"),
    (dict(kind="mxf8f6f4", a_type="e4m3", b_type="e4m3", c_type="f32", m=128, n=64, scale_type="ue4m3"),
     "takes scale_type ue8m0, got ue4m3"),
    (dict(kind="mxf4nvf4", a_type="e2m1", b_type="e2m1", c_type="f32", m=128, n=64, scale_type="ue4m3", sf_vec_size=32),
     "sf_vec_size in (16,)"),
    (dict(kind="mxf4nvf4", a_type="e2m1", b_type="e2m1", c_type="f32", m=128, n=64), "needs scale_type"),
    (dict(kind="mxf4", a_type="e2m1", b_type="e2m1", c_type="f32", m=128, n=64, sfa_id=1), "sfa_id in (0, 2)"),
    (dict(kind="mxf8f6f4", a_type="e4m3", b_type="e4m3", c_type="f32", m=128, n=64, sfb_id=4), "sfb_id in (0, 1, 2, 3)"),
    (dict(kind="i8", a_type="s8", b_type="s8", c_type="s32", m=128, n=64, negate_a=True), "cannot negate"),
    (dict(kind="f16", a_type="f16", b_type="f16", c_type="f32", m=128, n=64, saturate=True), "saturate is for kind::i8 only"),
    (dict(kind="f16", a_type="f16", b_type="f16", c_type="f32", m=128, n=64, scale_type="ue8m0"), "kind::f16 has none"),
    (dict(kind="tf32", a_type="tf32", b_type="tf32", c_type="f32", m=128, n=64, sfa_id=1), "kind::tf32 has none"),
    (dict(kind="i8", a_type="s8", b_type="s8", c_type="f32", m=128, n=64), "accumulates in s32"),
    (dict(kind="f8f6f4", a_type="e4m3", b_type="e4m3", c_type="s32", m=128, n=64), "accumulates in f16 or f32"),
    (dict(kind="f16", a_type="bf16", b_type="bf16", c_type="f16", m=128, n=64), "f16 x f16 only"),
    (dict(kind="f16", a_type="e4m3", b_type="e4m3", c_type="f32", m=128, n=64), "takes A of type f16, bf16"),
    (dict(kind="mxf8f6f4", a_type="e4m3", b_type="e4m3", c_type="f32", m=64, n=64), "takes M in (128,)"),
    (dict(kind="mxf8f6f4", a_type="e4m3", b_type="e4m3", c_type="f32", m=128, n=64, sparse=True, cta_group=2), "takes M in (256,)"),
    (dict(kind="f16", a_type="f16", b_type="f16", c_type="f32", m=128, n=64, max_shift=8), "pass ws=True"),
    (dict(kind="f16", a_type="f16", b_type="f16", c_type="f32", m=128, n=64, ws=True, cta_group=2), "cta_group::1 only"),
    (dict(kind="f16", a_type="f16", b_type="f16", c_type="f32", m=32, n=96, ws=True), "N in {64, 128, 256}"),
    (dict(kind="mxf8f6f4", a_type="e4m3", b_type="e4m3", c_type="f32", m=128, n=64, ws=True), "no .ws"),
    (dict(kind="f16", a_type="f16", b_type="f16", c_type="f32", m=128, n=64, sparse_selector=1), "needs sparse=True"),
    (dict(kind="mxf4", a_type="e2m1", b_type="e2m1", c_type="f32", m=128, n=64, k=96), "cta_group::2 and M=256 only"),
    (dict(kind="f16", a_type="f16", b_type="f16", c_type="f32", m=128, n=64, k=32), "has K=16"),
    (dict(kind="f8f6f4", a_type="type_erased_dynamic_float8_t", b_type="e4m3", c_type="f32", m=128, n=64), "run-time-typed"),
    (dict(kind="f17", a_type="f16", b_type="f16", c_type="f32", m=128, n=64), "unknown kind"),
    (dict(kind="f16", a_type="fp17", b_type="f16", c_type="f32", m=128, n=64), "unknown a_type"),
    (dict(kind="f16", a_type="f16", b_type="f16", c_type="f32", m=128, n=64, a_major="T"), "'K' or 'MN'"),
    (dict(kind="f16", a_type="f16", b_type="f16", c_type="f32", m=128, n=64, negate_a=1), "True or False"),
])
def test_named_errors(kwargs, rule):
    with pytest.raises(IdescError, match=None) as ei:
        make_instr_desc(**kwargs)
    assert rule in str(ei.value), str(ei.value)
    assert isinstance(ei.value, LayoutError) and isinstance(ei.value, ValueError)


def test_decode_errors():
    with pytest.raises(IdescError, match="reserved bit"):
        decode(0x08200490 | 1 << 6, kind="f16")
    with pytest.raises(IdescError, match="reserved bit"):
        decode(0x08a00000 | 1 << 24, kind="mxf8f6f4")
    with pytest.raises(IdescError, match="more than one kind"):
        decode(0x08200490)
    assert [d.kind for d in readings(0x08200490)] == ["f16", "f8f6f4"]
    assert decode(0x08a00000).kind == "mxf8f6f4"  # only one reading is legal
    with pytest.raises(IdescError, match="type code 7"):
        decode(0x08200390 | 7 << 7, kind="f8f6f4")
    with pytest.raises(IdescError, match="32-bit unsigned"):
        decode(1 << 32)
    with pytest.raises(IdescError, match="no legal descriptor"):
        decode(0xFFFFFFFF)
    with pytest.raises(IdescError, match="canonical form"):
        InstrDescriptor("kind::f16", "bf16", "bf16", "f32", 128, 128, k=16)
