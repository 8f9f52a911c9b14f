"""layoutalg.kernel.plan: every tile plan equals the CuTe DSL's helpers' choices (tests/data/cute-dsl/plans.json).

The recording (tests/cute_dsl_plan_cases.py) holds the DSL's answers over a grid of archs (sm_90, sm_100),
A/B/accumulator types, tiles, majors, CTA groups, C types and majors, stages: the MMA op and its tiled
MMA, the staged shared layouts of A, B and the epilogue, the epilogue tile, the smem store (sm_90), the
TMEM accumulator, its allocation, the tcgen05.ld op and its tiled copy over an epilogue subtile (sm_100),
or the DSL's refusal. Each replayed case is planned by layoutalg and compared field by field; a small live
sample is re-asked of the DSL where it is installed. The descriptors and the instruction descriptor come
from layoutalg's own derivations (tested against CuTe C++ in test_nvidia_umma / test_nvidia_wgmma); here
they are checked to describe the planned layouts (read back) and to be CuTe's for the canonical cases.
"""

from __future__ import annotations

import re

import pytest

import cute_dsl_plan_cases as cases_mod
from layoutalg import inttuple as it
from layoutalg.errors import LayoutError
from layoutalg.layout import Layout, make_layout
from layoutalg.parse import parse
from layoutalg.kernel.plan import RULES, PlanError, TilePlan, plan_gemm

REC = cases_mod.REC
pytestmark = REC.needs


def norm(text: str) -> str:
    """A layout's text as the DSL prints it: ``S<B,M,S> o 0 o``, no CuTe C++ underscores, no blanks."""
    return re.sub(r"(?<![\w>])_(\d)", r"\1", str(text)).replace("Sw<", "S<").replace(" ", "")


def _plan(c: dict, strict: bool = True) -> TilePlan:
    return plan_gemm(c["arch"], c["a"], c["b"], c["acc"], tuple(c["tile"]), c["a_major"], c["b_major"],
                     cta_group=c["cta_group"], stages=c["stages"], c_dtype=c["c"], c_major=c["c_major"],
                     epi_stages=c["epi_stages"], strict=strict, acc_stages=c.get("acc_stages", 1))


#: the DSL's refusal (type, a phrase of its message) -> the plan's rule
REFUSALS = [("TypeError", "", "dtype"), ("DSLUserCodeError", "acc_dtype", "accumulator"),
            ("DSLUserCodeError", "N-mode", "mma-shape"), ("ValueError", "acc/d type", "tmem-load"),
            ("ValueError", "too small", "epilogue-tile"), ("ValueError", "num dp", "tmem-load")]


def expected_rule(ans: dict) -> str:
    for typ, phrase, rule in REFUSALS:
        if ans["refused"] == typ and phrase.lower() in ans["message"].lower():
            return rule
    raise AssertionError(f"a DSL refusal the test does not map to a rule: {ans}")


def same_function(ours: Layout, text: str) -> bool:
    """The same top-level modes, each the same shape and strides once its size-1 modes are left out (the DSL
    writes a one-thread atom's thread mode 1:128 where CuTe C++ and layoutalg write 1:0, and drops a trailing
    size-1 value mode of an N = 8 wgmma accumulator)."""
    theirs = parse(text)
    if len(ours) != len(theirs):
        return False

    def modes(L: Layout) -> list:
        return [(s, d) for s, d in zip(it.flatten(L.shape), it.flatten(L.stride)) if s != 1]

    return all(modes(ours[i]) == modes(theirs[i]) for i in range(len(ours)))


def _field(text: str, name: str) -> str:
    m = re.search(rf"{name}:\s*(.+)", text)
    assert m, (name, text)
    return m.group(1).strip()


def compare(c: dict, ans: dict, strict: bool = True) -> list[str]:
    """The differences between layoutalg's plan of ``c`` and the DSL's answer (empty: identical).

    layoutalg's one stricter rule (RULES['wgmma-transpose']: the DSL's helpers plan an 8-bit MN-major wgmma
    operand, which the instruction cannot read): the strict plan must refuse exactly those cases, and the
    ``strict=False`` plan must equal the DSL's."""
    if "refused" in ans:
        try:
            _plan(c)
        except PlanError as e:
            return [] if e.rule == expected_rule(ans) else [f"rule {e.rule}, the DSL's refusal says {expected_rule(ans)}"]
        return [f"the DSL refuses ({ans['refused']}: {ans['message']}), layoutalg plans it"]
    transposed8 = c["arch"] == "sm_90" and c["a"] not in ("f16", "bf16") and "MN" in (c["a_major"], c["b_major"])
    try:
        p = _plan(c, strict)
    except PlanError as e:
        if strict and transposed8 and e.rule == "wgmma-transpose":
            return compare(c, ans, strict=False)
        if e.rule == "mma-shape" and c["arch"] == "sm_90" and c["a"] in ("s8", "u8") and c["tile"][1] % 16 \
                and c["tile"][1] > 32:
            return []  # RULES['mma-shape']: the DSL's helper plans a K-major s8/u8 wgmma N no instruction has
        return [f"layoutalg refuses ({e}), the DSL plans it"]
    if strict and transposed8:
        return ["layoutalg plans an 8-bit MN-major wgmma operand (RULES['wgmma-transpose'])"]
    bad = []

    def eq(what: str, ours: object, theirs: object) -> None:
        if ours != theirs:
            bad.append(f"{what}: layoutalg {ours!r}, DSL {theirs!r}")

    op = ans["op"]
    eq("op class", p.dsl["mma_op"].split("(")[0], op.split("(")[0])
    eq("shape_mnk", tuple(p.mma_atom.shape_mnk), tuple(int(x) for x in re.search(r"shape_mnk=\(([^)]*)\)", op).group(1).split(",")))
    eq("a major", p.a.major, re.search(r"a_major_mode=<OperandMajorMode\.(\w+)>", op).group(1))
    eq("b major", p.b.major, re.search(r"b_major_mode=<OperandMajorMode\.(\w+)>", op).group(1))
    if c["arch"] == "sm_100":
        eq("cta_group", p.cta_group, {"ONE": 1, "TWO": 2}[re.search(r"CtaGroup\.(\w+)", op).group(1)])
    tm = ans["tiled_mma"]
    atom = p.mma_atom
    eq("ThrID", norm(atom.thr_id), norm(_field(tm, "ThrID")))
    for x in "ABC":
        ours_tv, theirs_tv = getattr(atom, f"layout_{x.lower()}_tv"), _field(tm, f"TV Layout {x}")
        if norm(ours_tv) != norm(theirs_tv) and not same_function(ours_tv, theirs_tv):
            bad.append(f"TV {x}: layoutalg {ours_tv}, DSL {theirs_tv}")
    eq("Thr Layout VMNK", norm(p.tiled_mma.thr_layout_vmnk), norm(_field(tm, "Thr Layout VMNK")))
    eq("smem A", norm(p.a.smem_layout), norm(ans["smem_a"]))
    eq("smem B", norm(p.b.smem_layout), norm(ans["smem_b"]))
    eq("epi tile", norm(p.dsl["epi_tile"]), norm(ans["epi_tile"]))
    eq("smem epi", norm(p.epi_smem_layout), norm(ans["smem_epi"]))
    if c["arch"] == "sm_90":
        eq("smem store", p.dsl["smem_store"], re.sub(r"unpack_bits=None", "", ans["store_op"]).replace(", )", ")"))
        if not same_function(p.register_layout, ans["tv_C_tiled"]):
            bad.append(f"registers (tiled MMA C): layoutalg {p.register_layout}, DSL {ans['tv_C_tiled']}")
    else:
        eq("accumulator", norm(p.accumulator_staged), norm(ans["acc"]))
        eq("accumulator stage 0", norm(make_layout(p.accumulator, Layout(1, 0), Layout(1, 0), Layout(1, 0))),
           norm(make_layout(p.accumulator_staged[0], Layout(1, 0), Layout(1, 0), Layout(1, 0))))
        eq("tmem cols", p.tmem_cols, ans["tmem_cols"])
        m = re.match(r"(\w+)\(repeat=<Repetition\.x(\d+)>, pack=<Pack\.(\w+)>\)", ans["tmem_load"])
        eq("tcgen05.ld", p.dsl["tmem_load"], f"{m.group(1)}(repeat=Repetition.x{m.group(2)}, pack=Pack.{m.group(3)})")
        eq("t2r TV", norm(p.tmem_copy.layout_tv), norm(ans["t2r_tv"]))
        eq("t2r tiler", norm("(" + ",".join(str(t) for t in p.tmem_copy.tiler) + ")"), norm(ans["t2r_tiler"]))
    return bad


def _replayed() -> list[tuple[str, dict, dict]]:
    return [(k, v["case"], v["answer"]) for k, v in REC.data["cases"].items()]


def test_recording_is_fresh():
    snippets = {cases_mod.case_key(c): cases_mod.snippet(c) for c in cases_mod.cases()}
    assert not REC.stale(snippets), f"stale cases (re-record: {REC.command})"


def test_every_plan_equals_the_dsl():
    bad = {}
    for key, c, ans in _replayed():
        diff = compare(c, ans)
        if diff:
            bad[key] = diff
    assert not bad, f"{len(bad)} of {len(REC.data['cases'])} plans differ, e.g. {list(bad.items())[:4]}"


def test_grid_covers_refusals_and_plans():
    answers = [a for _, _, a in _replayed()]
    refused = [a for a in answers if "refused" in a]
    assert len(answers) - len(refused) > 300 and len(refused) > 50
    assert {expected_rule(a) for a in refused} >= {"dtype", "accumulator", "tmem-load"}


@REC.live
def test_live_sample_answers_as_recorded():
    items = _replayed()
    sample = REC.sample(items, 6)
    got = cases_mod.ask_processes([c for _, c, _ in sample])
    for (key, c, ans), live in zip(sample, got):
        assert live == ans, f"{key}: the DSL now answers {live}, recorded {ans} ({REC.command})"
        assert not compare(c, live), key


# ------------------------------------------------------------------------------------------------ descriptors
DESC = cases_mod.DESC


def _words(text: str) -> tuple[str, list[list[int]]]:
    """CuTe's ``idesc|words of thread 0|words of thread 128|`` print: (idesc, [[words], ...]) (CuTe's host-side
    note that a shared-memory address is 0 there left out)."""
    text = re.sub(r"ERROR: cast_smem_ptr_to_uint not supported but used\.\s*", "", text)
    parts = text.strip().split("|")
    return parts[0], [[int(w, 16) for w in p.split()] for p in parts[1:] if p.strip()]


@DESC.needs
def test_descriptors_and_idesc_equal_cute():
    """Every k-block descriptor of stage 0 (A and B) and the sm_100 idesc equal CuTe C++'s, for 178 operands
    of 89 plans: the words of a TiledMMA's make_fragment_A/B of the same smem tile (start field 0 on the host,
    as the plan's offsets from the tile's start)."""
    snips = cases_mod.descriptor_snippets()
    out = DESC.run_snippets([s for _, _, s in snips], headers=cases_mod.CPP_HEADERS)
    by_key = {cases_mod.case_key(c): c for c in cases_mod.cases()}
    n = 0
    for (key, op, _), text in zip(snips, out):
        p = _plan(by_key[key])
        assert isinstance(text, str), (key, op, text.message)
        idesc, threads = _words(text)
        if p.arch == "sm_100":
            assert int(idesc, 16) == p.idesc.word, (key, idesc, hex(p.idesc.word))
        o = p.a if op == "A" else p.b
        words = {(kb.mn_block, kb.k_block): int(kb.descriptor.encode()) for kb in o.k_blocks}
        start = {(kb.mn_block, kb.k_block): kb.offset_bytes >> 4 for kb in o.k_blocks}
        nk = 1 + max(j for _, j in words)
        if op == "A" and len(threads) > 1:
            # warpgroup t's i-th MMA_M block is MN block i*W + t; on the host CuTe cannot read a shared-memory
            # pointer (start field 0), so the warpgroup's partition offset (its first block's start) is lost and
            # the iterator's offsets within the partition are kept
            # (with M not a multiple of 64 W, CuTe's partition runs past the tile: those words are left out)
            W = len(threads)
            pos = [(t, i, j) for t in range(W) for i in range(len(threads[t]) // nk) for j in range(nk)]
            theirs = [threads[t][i * nk + j] for t, i, j in pos if (i * W + t, j) in words]
            ours = [words[(i * W + t, j)] - start[(t, 0)] for t, i, j in pos if (i * W + t, j) in words]
            assert len(ours) == len(words), key
        else:
            theirs = threads[0]
            ours = [words[k] for k in sorted(words)]
        assert ours == theirs, (key, op, [hex(w) for w in ours], [hex(w) for w in theirs])
        n += len(ours)
    assert n >= 850, n  # 878 words


def test_descriptors_describe_the_planned_tile():
    """The plan's one-stage tile is stage 0 of the staged layout (every element), and each k-block's
    descriptor starts at the tile's offset of the block's first element."""
    n = 0
    for key, c, ans in _replayed()[::20]:
        if "refused" in ans or "MN" in (c["a_major"], c["b_major"]) and c["a"] not in ("f16", "bf16", "tf32"):
            continue
        p = _plan(c)
        for o in (p.a, p.b):
            tile, staged = o.tile.inner, o.smem_layout.inner
            mn, k = int(tile[0].size()), int(tile[1].size())
            ik = p.mma_atom.shape_mnk[2]
            for i in range(0, mn, 7):
                for j in range(0, k, 3):
                    at = (i, j, 0) if p.arch == "sm_90" else ((i, j % ik), 0, j // ik, 0)
                    assert staged(*at) == tile(i, j), (key, o.name, i, j)
            nb = {"f16": 2, "bf16": 2, "tf32": 4}.get(o.dtype, 1)
            mnb = mn // len({b.mn_block for b in o.k_blocks})
            kk = k // len({b.k_block for b in o.k_blocks})
            for kb in o.k_blocks:
                assert kb.offset_bytes == tile(kb.mn_block * mnb, kb.k_block * kk) * nb, (key, o.name)
                n += 1
    assert n > 50


def test_compare_catches_a_wrong_answer():
    """The comparison is not vacuous: an answer with another case's layouts, ops or refusal differs."""
    items = [(k, c, a) for k, c, a in _replayed() if "refused" not in a and c["arch"] == "sm_100"]
    (_, c1, a1), (_, _, a2) = items[0], next(x for x in items if x[2]["smem_a"] != items[0][2]["smem_a"]
                                                 and x[2]["tmem_load"] != items[0][2]["tmem_load"])
    assert not compare(c1, a1)
    assert any(d.startswith("smem A") for d in compare(c1, dict(a1, smem_a=a2["smem_a"])))
    assert any(d.startswith("tcgen05.ld") for d in compare(c1, dict(a1, tmem_load=a2["tmem_load"])))
    assert any(d.startswith("tmem cols") for d in compare(c1, dict(a1, tmem_cols=a1["tmem_cols"] * 2)))
    assert compare(c1, {"refused": "TypeError", "message": "unsupported"})


def test_plan_errors_name_their_rule():
    with pytest.raises(PlanError) as e:
        plan_gemm("sm_90", "tf32", tile=(128, 128, 32))
    assert e.value.rule == "dtype" and isinstance(e.value, LayoutError) and e.value.rule in RULES
    with pytest.raises(PlanError) as e:
        plan_gemm("sm_90", "f16", cta_group=2)
    assert e.value.rule == "cta-group"
    with pytest.raises(PlanError) as e:
        plan_gemm("sm_80", "f16")
    assert e.value.rule == "arch"
    with pytest.raises(PlanError) as e:
        plan_gemm("sm_100", "f16", "f16", "f16", c_dtype="f32")
    assert e.value.rule == "tmem-load"
    for bad in [dict(tile=(128, 128)), dict(tile="128x128x64"), dict(stages=0), dict(a_major="X"), dict(c_major="Q")]:
        with pytest.raises(PlanError):
            plan_gemm("sm_100", "f16", **bad)
    p = plan_gemm("sm_90", "s8", acc_dtype="s32", tile=(128, 128, 128), a_major="MN", strict=False)
    assert p.a.k_blocks == () and p.notes and p.b.k_blocks


def test_str_json_and_cli(capsys):
    import json

    from layoutalg.cli import main

    p = plan_gemm("sm_100", "bf16", tile=(256, 256, 64), cta_group=2, c_dtype="bf16")
    text = str(p)
    for want in ("SM100_MMA_F16BF16_2x1SM_SS", "K_SW128", "LBO 1 (>>4), SBO 64 (>>4)", "0x10400490", "256 columns",
                 "SM100_TMEM_LOAD_32dp32b32x"):
        assert want in text, want
    d = json.loads(p.to_json())
    assert d["idesc"] == "0x10400490" and d["tmem_cols"] == 256 and len(d["a"]["descriptors"]) == 4
    assert main(["plan", "sm_100", "bf16", "--tile", "256x256x64", "--cta-group", "2", "--c", "bf16", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == d
    assert main(["plan", "sm_90", "tf32"]) == 2
    assert "[dtype]" in capsys.readouterr().err
    assert main(["plan", "sm_100", "f16", "--tile", "12x"]) == 2


# ------------------------------------------------------------------------------------------------ plan -> pipeline -> proof
PIPELINE_PLANS = [
    dict(arch="sm_90", a_dtype="f16", tile=(64, 128, 64)),
    dict(arch="sm_90", a_dtype="bf16", tile=(128, 256, 64)),
    dict(arch="sm_90", a_dtype="f16", tile=(64, 64, 64), a_major="MN", b_major="MN"),
    dict(arch="sm_100", a_dtype="bf16", tile=(128, 128, 64)),
    dict(arch="sm_100", a_dtype="f16", tile=(256, 128, 64), cta_group=2),
    dict(arch="sm_100", a_dtype="f16", tile=(128, 64, 32), b_major="MN"),
    # MN-major tiles of several swizzle atoms: the DSL repeats the atom K first (the builders' order knob)
    dict(arch="sm_100", a_dtype="f16", tile=(128, 128, 64), a_major="MN"),
    dict(arch="sm_100", a_dtype="bf16", tile=(256, 256, 64), a_major="MN", b_major="MN", cta_group=2),
    dict(arch="sm_90", a_dtype="bf16", tile=(64, 256, 128), a_major="MN", b_major="MN"),
]


@pytest.mark.parametrize("kw", PIPELINE_PLANS, ids=lambda kw: " ".join(str(v) for v in kw.values()))
def test_plan_pipeline_proves(kw):
    """A plan's data path (kernel.pipeline's builders with the plan's knobs; the join checked: the pipeline's
    descriptor words are the plan's) proves; the same plan with one planted bug does not."""
    pytest.importorskip("layoutalg.kernel.pipeline")
    p = plan_gemm(**kw)
    assert p.prove().ok
    sw = p.pipeline_knobs()["swizzle_b"]
    bad = p.prove(desc_swizzle_b=64 if sw != 64 else 128)  # the descriptor's swizzle changed on one side
    assert not bad.ok and bad.first_wrong is not None


def test_plan_pipeline_refuses_what_it_does_not_model():
    pytest.importorskip("layoutalg.kernel.pipeline")
    for kw in (dict(arch="sm_90", a_dtype="f16", acc_dtype="f16", tile=(64, 64, 64)),  # an f16 accumulator
               dict(arch="sm_90", a_dtype="f16", tile=(128, 128, 64)),  # one warpgroup over 128 rows
               dict(arch="sm_100", a_dtype="f16", acc_dtype="f16", tile=(128, 64, 64))):  # a 16-bit accumulator
        with pytest.raises(PlanError) as e:
            plan_gemm(**kw).pipeline()
        assert e.value.rule == "pipeline", kw


# ------------------------------------------------------------------------------------------------ every recorded plan proves
def _legal_recorded() -> list[tuple[str, TilePlan]]:
    """The recorded plans layoutalg plans (strict: the DSL's 8-bit MN-major wgmma plans are refused)."""
    out = []
    for key, c, ans in _replayed():
        if "refused" in ans:
            continue
        try:
            out.append((key, _plan(c)))
        except PlanError:
            continue
    return out


def _modelled(plans: list) -> list[tuple[str, TilePlan]]:
    out = []
    for key, p in plans:
        try:
            p.pipeline_knobs()
        except PlanError:
            continue
        out.append((key, p))
    return out


def plan_class(p: TilePlan) -> tuple:
    """arch, A's and B's types, the majors, CTA group."""
    return (p.arch, p.a_dtype, p.b_dtype, p.a.major, p.b.major, p.cta_group)


def ld_class(p: TilePlan) -> tuple:
    """the epilogue: sm_100's tcgen05.ld shape (any .num) and the accumulator type, sm_90's C major."""
    return (p.arch, re.sub(r"\d+x(_16b)?$", "", p.tmem_load or ""), p.acc_dtype, p.c_major)


def representative(plans: list, n: int = 100) -> list:
    """The smallest tile of every :func:`plan_class` and of every :func:`ld_class`, then the smallest of the
    rest up to ``n``."""
    order = sorted(plans, key=lambda kp: (kp[1].tile[0] * kp[1].tile[1] * kp[1].tile[2], kp[0]))
    seen: set = set()
    first, rest = [], []
    for kp in order:
        keys = {("p",) + plan_class(kp[1]), ("l",) + ld_class(kp[1])}
        (rest if keys <= seen else first).append(kp)
        seen |= keys
    return first + rest[:max(0, n - len(first))]


def test_recorded_plans_prove_sample():
    """A representative sample (>= 100, every arch / type / major / CTA-group / tcgen05.ld class) of the recorded
    plans the data-path model covers proves: every product lands in its output (the full sweep: exhaustive)."""
    pytest.importorskip("layoutalg.kernel.pipeline")
    legal = _legal_recorded()
    modelled = _modelled(legal)
    assert len(modelled) >= 354, len(modelled)  # of the 539 legal recorded plans (see docs/kernels.md)
    sample = representative(modelled)
    assert len(sample) >= 100
    for cls in (plan_class, ld_class):
        assert {cls(p) for _, p in sample} == {cls(p) for _, p in modelled}
    bad = {k: r.first_wrong for k, p in sample if not (r := p.prove()).ok}
    assert not bad, list(bad.items())[:3]


@pytest.mark.exhaustive
def test_recorded_plans_prove_all():
    bad = {k: r.first_wrong for k, p in _modelled(_legal_recorded()) if not (r := p.prove()).ok}
    assert not bad, list(bad.items())[:3]


PLANTED = [dict(arch="sm_90", a_dtype="bf16", tile=(64, 128, 64), b_major="MN"),
           dict(arch="sm_100", a_dtype="e4m3", tile=(128, 128, 128), b_major="MN", c_major="M"),
           dict(arch="sm_100", a_dtype="tf32", tile=(256, 128, 32), cta_group=2),
           dict(arch="sm_100", a_dtype="s8", acc_dtype="s32", tile=(64, 64, 64))]


@pytest.mark.parametrize("kw", PLANTED, ids=lambda kw: " ".join(str(v) for v in kw.values()))
def test_planted_plan_bugs_are_caught(kw):
    """The plan proves; with its B descriptor's LBO and SBO swapped, or (sm_100) its epilogue issuing a
    tcgen05.ld of another shape than the tiled copy's atom (as many registers), the proof names the first wrong
    element at the stage that broke."""
    pytest.importorskip("layoutalg.kernel.pipeline")
    p = plan_gemm(**kw)
    kn = p.pipeline_knobs()
    assert p.prove().ok
    d = p.b.k_blocks[0].descriptor
    lbo, sbo = int(d.leading_byte_offset), int(d.stride_byte_offset)
    assert lbo != sbo
    bad = p.prove(**{**kn, "lbo_b": sbo, "sbo_b": lbo})
    assert not bad.ok and bad.first_wrong["stage"].endswith("read_b"), bad.first_wrong
    if p.arch == "sm_100":
        shape = re.match(r"SM100_TMEM_LOAD_(\w+?)(\d+)x$", p.tmem_load)
        regs = {"32dp32b": 1, "16dp64b": 1, "16dp32b": 1, "16dp128b": 2, "16dp256b": 4}
        per = regs[shape.group(1)] * int(shape.group(2))
        others = [(o, r) for o, r in regs.items() if o != shape.group(1) and per % r == 0]
        assert len(others) >= 3
        for other, r in others:
            wrong = p.prove(**{**kn, "epilogue_ld": f"SM100_TMEM_LOAD_{other}{per // r}x"})
            assert not wrong.ok and wrong.first_wrong["stage"] == "epilogue_tcgen05_ld", (other, wrong.first_wrong)
