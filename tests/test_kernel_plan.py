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
from layoutalg.layout import Layout, make_layout
from layoutalg.parse import parse
from layoutalg.kernel.plan import RULES, PlanError, TilePlan, plan_gemm

REC = cases_mod.REC
pytestmark = REC.needs


def norm(text: str) -> str:
    """A layout's text as the DSL prints it: ``S<B,M,S> o 0 o``, no CuTe C++ underscores, no blanks."""
    return re.sub(r"(?<![\w>])_(\d)", r"\1", str(text)).replace("Sw<", "S<").replace(" ", "")


def _plan(c: dict) -> TilePlan:
    return plan_gemm(c["arch"], c["a"], c["b"], c["acc"], tuple(c["tile"]), c["a_major"], c["b_major"],
                     cta_group=c["cta_group"], stages=c["stages"], c_dtype=c["c"], c_major=c["c_major"],
                     epi_stages=c["epi_stages"])


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
    """The same shape and strides, a stride of a size-1 mode aside (the DSL writes a one-thread atom's
    thread mode 1:128, CuTe C++ and layoutalg 1:0)."""
    theirs = parse(text)
    if it.flatten(ours.shape) != it.flatten(theirs.shape):
        return False
    return all(s == 1 or a == b for s, a, b in zip(it.flatten(ours.shape), it.flatten(ours.stride), it.flatten(theirs.stride)))


def _field(text: str, name: str) -> str:
    m = re.search(rf"{name}:\s*(.+)", text)
    assert m, (name, text)
    return m.group(1).strip()


def compare(c: dict, ans: dict) -> list[str]:
    """The differences between layoutalg's plan of ``c`` and the DSL's answer (empty: identical)."""
    if "refused" in ans:
        try:
            _plan(c)
        except PlanError as e:
            return [] if e.rule == expected_rule(ans) else [f"rule {e.rule}, the DSL's refusal says {expected_rule(ans)}"]
        return [f"the DSL refuses ({ans['refused']}: {ans['message']}), layoutalg plans it"]
    try:
        p = _plan(c)
    except PlanError as e:
        # layoutalg's one stricter rule (RULES['wgmma-transpose']): the DSL's helpers accept the op
        if e.rule == "wgmma-transpose" and c["arch"] == "sm_90" and "MN" in (c["a_major"], c["b_major"]) \
                and c["a"] not in ("f16", "bf16"):
            return []
        return [f"layoutalg refuses ({e}), the DSL plans it"]
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
        if not same_function(getattr(atom, f"layout_{x.lower()}_tv"), _field(tm, f"TV Layout {x}")):
            bad.append(f"TV {x}: layoutalg {getattr(atom, f'layout_{x.lower()}_tv')}, DSL {_field(tm, f'TV Layout {x}')}")
    eq("Thr Layout VMNK", norm(p.tiled_mma.thr_layout_vmnk), norm(_field(tm, "Thr Layout VMNK")))
    eq("smem A", norm(p.a.smem_layout), norm(ans["smem_a"]))
    eq("smem B", norm(p.b.smem_layout), norm(ans["smem_b"]))
    eq("epi tile", norm(p.dsl["epi_tile"]), norm(ans["epi_tile"]))
    eq("smem epi", norm(p.epi_smem_layout), norm(ans["smem_epi"]))
    if c["arch"] == "sm_90":
        eq("smem store", p.dsl["smem_store"], re.sub(r"unpack_bits=None", "", ans["store_op"]).replace(", )", ")"))
        eq("registers (tiled MMA C)", norm(p.register_layout), norm(ans["tv_C_tiled"]))
    else:
        eq("accumulator", norm(make_layout(p.accumulator, *[Layout(1, 0)] * 3)), norm(ans["acc"]))
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
