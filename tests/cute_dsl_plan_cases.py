"""The CuTe DSL's GEMM-tile helpers as the oracle of :func:`layoutalg.kernel.plan.plan_gemm` (tests only).

For every case of :func:`cases` (arch x dtypes x tile x majors x cta_group x C type and major) the DSL
(``nvidia-cutlass-dsl``, traced on the CPU, no GPU) is asked what its helpers choose, as its GEMM
examples call them (``examples/python/CuTeDSL/{hopper,blackwell}/dense_gemm.py``):

* sm_90: ``sm90_utils.make_trivial_tiled_mma(a, b, a_major, b_major, acc, atom_layout_mnk, (64, N))``
  (``atom_layout_mnk`` = (2,1,1) when M > 64 and N > 128), ``make_smem_layout_a/b``,
  ``compute_tile_shape_or_override``, ``make_smem_layout_epi``, ``get_smem_store_op``;
* sm_100: ``sm100_utils.make_trivial_tiled_mma(a, b, a_major, b_major, acc, cta_group, (M, N))``,
  ``make_smem_layout_a/b(tiled_mma, (M, N, K), dtype, stages)``, ``compute_epilogue_tile_shape``,
  ``get_tmem_load_op``, ``make_smem_layout_epi``, ``cutlass.memory.get_num_tmem_alloc_cols`` of
  ``tiled_mma.make_fragment_C``, and ``tcgen05.make_tmem_copy`` of the load atom over the epilogue
  subtile of that accumulator.

Each answer is the DSL's own text (layouts as it prints them, ops by ``repr``), or the refusal (the
exception's type and its message's ``error:`` line). Both archs cannot be traced in one process (the DSL
fixes the target from ``CUTE_DSL_ARCH``), so the recorder runs one worker process per arch.

    python tests/cute_dsl_plan_cases.py --record     # (re)writes tests/data/cute-dsl/plans.json (~1 min)
    python tests/cute_dsl_plan_cases.py --record-descriptors   # tests/data/cute/plan_descriptors.json (g++)

tests/test_kernel_plan.py replays the recording and re-asks a live sample where the DSL is installed.
"""

from __future__ import annotations

import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile
from typing import Any

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from oracle_recorder import OracleRecorder, SnippetRecorder, sha  # noqa: E402

#: (a, b, acc) per arch; refusals included on purpose (tf32 on sm_90, an int accumulator for floats)
DTYPES = {
    "sm_90": [("f16", "f16", "f32"), ("f16", "f16", "f16"), ("bf16", "bf16", "f32"), ("e4m3", "e4m3", "f32"),
              ("e4m3", "e5m2", "f32"), ("e5m2", "e5m2", "f16"), ("s8", "s8", "s32"), ("u8", "s8", "s32"),
              ("tf32", "tf32", "f32"), ("s8", "s8", "f32")],
    "sm_100": [("f16", "f16", "f32"), ("f16", "f16", "f16"), ("bf16", "bf16", "f32"), ("tf32", "tf32", "f32"),
               ("e4m3", "e4m3", "f32"), ("e5m2", "e4m3", "f32"), ("e4m3", "e4m3", "f16"), ("s8", "s8", "s32"),
               ("u8", "u8", "s32"), ("f16", "bf16", "f32")],
}
INST_K = {"f16": 16, "bf16": 16, "tf32": 8, "e4m3": 32, "e5m2": 32, "s8": 32, "u8": 32}
#: (C type, C major) cycled over the cases
C_CHOICES = [("f16", "N"), ("f32", "N"), ("bf16", "M"), ("f32", "M"), ("e4m3", "N"), ("bf16", "N"), ("e5m2", "M")]


def _tiles(arch: str, cta_group: int) -> list[tuple[int, int]]:
    if arch == "sm_90":
        return [(64, 64), (64, 128), (64, 256), (128, 64), (128, 128), (128, 256), (128, 96), (64, 24)]
    if cta_group == 1:
        return [(64, 64), (64, 128), (64, 256), (128, 64), (128, 128), (128, 256), (128, 96), (128, 16)]
    return [(128, 64), (128, 128), (128, 256), (256, 64), (256, 128), (256, 256), (256, 96)]


def case_key(c: dict) -> str:
    """A case's name: ``sm_100 f16,f16,f32 128x256x64 K,MN cta1 st4 c=f16:N`` (`` e3 acc2`` when the epilogue
    stages are not 2 or the accumulator has two stages)."""
    tail = (f" e{c['epi_stages']}" if c["epi_stages"] != 2 else "") + (
        f" acc{c['acc_stages']}" if c.get("acc_stages", 1) != 1 else "")
    return (f"{c['arch']} {c['a']},{c['b']},{c['acc']} {'x'.join(map(str, c['tile']))} {c['a_major']},{c['b_major']} "
            f"cta{c['cta_group']} st{c['stages']} c={c['c']}:{c['c_major']}" + tail)


def cases() -> list[dict]:
    """Every case the recording answers."""
    out: list[dict] = []
    n = 0
    for arch in ("sm_90", "sm_100"):
        for a, b, acc in DTYPES[arch]:
            for cta in ((1,) if arch == "sm_90" else (1, 2)):
                for M, N in _tiles(arch, cta):
                    for am, bm in (("K", "K"), ("MN", "K"), ("K", "MN"), ("MN", "MN")):
                        if (am, bm) != ("K", "K") and (M, N) not in ((128, 128), (64, 64), (256, 128), (128, 256)):
                            continue
                        cdt, cmaj = C_CHOICES[n % len(C_CHOICES)]
                        K = 4 * INST_K[a]
                        out.append(dict(arch=arch, a=a, b=b, acc=acc, tile=(M, N, K), a_major=am, b_major=bm,
                                        cta_group=cta, stages=2 + n % 4, c=cdt, c_major=cmaj, epi_stages=2))
                        n += 1
    return out + random_cases()


#: the random extension's C types (any width the epilogue handles; integers for the integer GEMMs)
_RANDOM_C = ["f16", "bf16", "f32", "e4m3", "e5m2", "s32", "s8", "u8"]


def random_cases(n: int = 300, seed: int = 27) -> list[dict]:
    """Seeded random cases beyond the grid: any legal-looking M, N multiple of 8 (16 on sm_100) up to 256, K of
    1 to 8 instructions' K (whole 16-byte rows), C types of every width, 1 to 7 stages, 1 to 4 epilogue stages,
    one or two accumulator stages (sm_100)."""
    import random

    r = random.Random(seed)
    out: list[dict] = []
    seen: set[str] = set()
    while len(out) < n:
        arch = r.choice(("sm_90", "sm_100"))
        a, b, acc = r.choice(DTYPES[arch])
        cta = 1 if arch == "sm_90" else r.choice((1, 2))
        if arch == "sm_90":
            M = r.choice((64, 128, 192, 256))
        else:
            M = r.choice((64, 128) if cta == 1 else (128, 256))
        N = r.choice(range(8 if arch == "sm_90" else 16 * cta, 257, 8 if arch == "sm_90" else 16 * cta))
        K = INST_K[a] * r.choice((2, 4, 4, 8) if INST_K[a] < 32 else (1, 2, 4, 8))
        c = dict(arch=arch, a=a, b=b, acc=acc, tile=(M, N, K), a_major=r.choice(("K", "K", "MN")),
                 b_major=r.choice(("K", "K", "MN")), cta_group=cta, stages=r.randint(1, 7), c=r.choice(_RANDOM_C),
                 c_major=r.choice(("N", "N", "M")), epi_stages=r.randint(1, 4))
        if arch == "sm_100":
            c["acc_stages"] = r.choice((1, 1, 2))
        k = case_key(c)
        if k not in seen:
            seen.add(k)
            out.append(c)
    return out


# ----------------------------------------------------------------------------------------------- the DSL side
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def refusal(e: BaseException) -> dict:
    """The DSL's refusal: the exception's type and its first ``error:`` line (or first line)."""
    text = _ANSI.sub("", str(e))
    lines = [x.strip() for x in text.splitlines() if x.strip()]
    err = next((x for x in lines if x.startswith("error:")), lines[0] if lines else "")
    return {"refused": type(e).__name__, "message": err[:300]}


def _dsl_type(name: str) -> Any:
    import cutlass

    return {"f16": cutlass.Float16, "bf16": cutlass.BFloat16, "tf32": cutlass.TFloat32, "f32": cutlass.Float32,
            "e4m3": cutlass.Float8E4M3FN, "e5m2": cutlass.Float8E5M2, "s8": cutlass.Int8, "u8": cutlass.Uint8,
            "s32": cutlass.Int32}[name]


def _ask_sm90(c: dict) -> dict:
    from cutlass.cute.nvgpu import OperandMajorMode
    from cutlass.tensor_utils import LayoutEnum
    from cutlass.utils import hopper_helpers as hp

    t = _dsl_type
    M, N, K = c["tile"]
    mm = {"K": OperandMajorMode.K, "MN": OperandMajorMode.MN}
    atom_layout = (2, 1, 1) if M > 64 and N > 128 else (1, 1, 1)
    ans: dict[str, Any] = {}
    tm = hp.make_trivial_tiled_mma(t(c["a"]), t(c["b"]), mm[c["a_major"]], mm[c["b_major"]], t(c["acc"]),
                                   atom_layout, (64, N))
    ans["op"] = repr(tm.op)
    ans["tiled_mma"] = str(tm)
    ans["tv_C_tiled"] = str(tm.tv_layout_C_tiled)
    # LayoutEnum (of the (M,K) A, (N,K) B, (M,N) C tensors): ROW_MAJOR = the last mode contiguous
    la = LayoutEnum.ROW_MAJOR if c["a_major"] == "K" else LayoutEnum.COL_MAJOR
    lb = LayoutEnum.ROW_MAJOR if c["b_major"] == "K" else LayoutEnum.COL_MAJOR
    lc = LayoutEnum.ROW_MAJOR if c["c_major"] == "N" else LayoutEnum.COL_MAJOR
    ans["smem_a"] = str(hp.make_smem_layout_a(la, (M, N, K), t(c["a"]), c["stages"]))
    ans["smem_b"] = str(hp.make_smem_layout_b(lb, (M, N, K), t(c["b"]), c["stages"]))
    epi = hp.compute_tile_shape_or_override((M, N, K), t(c["c"]), is_cooperative=atom_layout == (2, 1, 1))
    ans["epi_tile"] = str(epi)
    ans["smem_epi"] = str(hp.make_smem_layout_epi(t(c["c"]), lc, epi, c["epi_stages"]))
    st = hp.get_smem_store_op(lc, t(c["c"]), t(c["acc"]))
    ans["store_op"] = repr(st.op)
    return ans


def _ask_sm100(c: dict) -> dict:
    import cutlass.cute as cute
    import cutlass.memory as mem
    from cutlass.cute.nvgpu import OperandMajorMode, tcgen05
    from cutlass.tensor_utils import LayoutEnum
    from cutlass.utils import blackwell_helpers as bw

    t = _dsl_type
    M, N, K = c["tile"]
    mm = {"K": OperandMajorMode.K, "MN": OperandMajorMode.MN}
    two = c["cta_group"] == 2
    ans: dict[str, Any] = {}
    tm = bw.make_trivial_tiled_mma(t(c["a"]), t(c["b"]), mm[c["a_major"]], mm[c["b_major"]], t(c["acc"]),
                                   tcgen05.CtaGroup.TWO if two else tcgen05.CtaGroup.ONE, (M, N))
    ans["op"] = repr(tm.op)
    ans["tiled_mma"] = str(tm)
    ans["smem_a"] = str(bw.make_smem_layout_a(tm, (M, N, K), t(c["a"]), c["stages"]))
    ans["smem_b"] = str(bw.make_smem_layout_b(tm, (M, N, K), t(c["b"]), c["stages"]))
    acc_shape = tm.partition_shape_C((M, N))
    fake = tm.make_fragment_C(cute.append(acc_shape, c.get("acc_stages", 1)))
    ans["acc"] = str(fake.layout)
    ans["tmem_cols"] = int(mem.get_num_tmem_alloc_cols(fake))
    lc = LayoutEnum.ROW_MAJOR if c["c_major"] == "N" else LayoutEnum.COL_MAJOR
    cta_tile = (M // c["cta_group"], N, K)
    epi = bw.compute_epilogue_tile_shape(cta_tile, two, lc, t(c["c"]))
    ans["epi_tile"] = str(epi)
    ld = bw.get_tmem_load_op(cta_tile, lc, t(c["c"]), t(c["acc"]), epi, two)
    ans["tmem_load"] = repr(ld.op)
    tacc = fake[((None, None), 0, 0, 0)]
    sub = cute.flat_divide(tacc, epi)[(None, None, 0, 0)]
    ans["epi_acc"] = str(sub.layout)
    tc = tcgen05.make_tmem_copy(ld, sub)
    ans["t2r_tv"] = str(tc.layout_tv_tiled)
    ans["t2r_tiler"] = str(tc.tiler_mn)
    ans["smem_epi"] = str(bw.make_smem_layout_epi(t(c["c"]), lc, epi, c["epi_stages"]))
    return ans


def ask(c: dict) -> dict:
    """The DSL's answer to one case (call inside a ``@cute.jit`` function of the case's arch)."""
    try:
        return _ask_sm90(c) if c["arch"] == "sm_90" else _ask_sm100(c)
    except Exception as e:  # noqa: BLE001 - the refusal is the answer
        return refusal(e)


def ask_all(todo: list[dict]) -> list[dict]:
    """Trace one ``@cute.jit`` function that asks every case of one arch."""
    import cutlass.cute as cute

    out: list[dict] = []

    @cute.jit
    def run() -> None:
        for c in todo:
            out.append(ask(c))

    run()
    return out


def worker(arch: str, in_path: str, out_path: str) -> None:
    todo = json.loads(pathlib.Path(in_path).read_text())
    res = ask_all([c for c in todo if c["arch"] == arch])
    pathlib.Path(out_path).write_text(json.dumps(res))


def ask_processes(todo: list[dict]) -> list[dict]:
    """The DSL's answers to ``todo`` (any archs): one worker process per arch (``CUTE_DSL_ARCH``), run side by side."""
    answers: dict[int, dict] = {}
    with tempfile.TemporaryDirectory() as d:
        src = pathlib.Path(d) / "cases.json"
        src.write_text(json.dumps(todo))
        running = []
        for arch, dsl_arch in (("sm_90", "sm_90a"), ("sm_100", "sm_100a")):
            idx = [i for i, c in enumerate(todo) if c["arch"] == arch]
            if not idx:
                continue
            dst = pathlib.Path(d) / f"{arch}.json"
            env = dict(os.environ, CUTE_DSL_ARCH=dsl_arch)
            proc = subprocess.Popen([sys.executable, __file__, "--worker", arch, str(src), str(dst)], env=env,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            running.append((arch, idx, dst, proc))
        for arch, idx, dst, proc in running:
            _, err = proc.communicate(timeout=900)
            if proc.returncode:
                raise RuntimeError(f"the CuTe DSL worker for {arch} failed:\n{err[-3000:]}")
            for i, a in zip(idx, json.loads(dst.read_text())):
                answers[i] = a
    return [answers[i] for i in range(len(todo))]


def snippet(c: dict) -> str:
    """What a case asks, as text (its fingerprint tells a stale recording)."""
    return json.dumps(c, sort_keys=True)


def record(rec: OracleRecorder) -> dict:
    todo = cases()
    got = ask_processes(todo)
    return {**rec.provenance(f"{rec.command} (the CuTe DSL's helpers traced on the CPU, one process per arch)"),
            "cases": {case_key(c): {"case": c, "sha1": sha(snippet(c)), "answer": a} for c, a in zip(todo, got)}}


REC = OracleRecorder("cute-dsl", "plans", record, script="cute_dsl_plan_cases",
                     json_options={"indent": 0, "sort_keys": True})


# ----------------------------------------------------------------------------------------------- CuTe C++: descriptors
# The DSL makes its descriptors at run time (from the shared-memory pointer), so CuTe C++ on the host answers
# for them: the same atom and smem tile (sm_90: tile_to_shape of CuTe's GMMA:: atom over (MN, K), K first for an
# MN-major operand, as the DSL orders it, and each warpgroup's partition; sm_100: UMMA::tile_to_mma_shape over one
# CTA's ((MN, MMA_K), 1, K tiles), as CUTLASS's kernels make it), a TiledMMA's make_fragment_A/B of it, and every
# descriptor word of the fragment (start field 0 on the host; CuTe's DescriptorIterator adds each k-block's
# offset); for sm_100 also the atom's idesc_. GMMA atoms by their SM90::GMMA::MMA_* names (every N: the _ext
# header's too).
CPP_HEADERS = ("cute/tensor.hpp", "cute/atom/mma_atom.hpp", "cute/atom/mma_traits_sm90_gmma.hpp",
               "cute/arch/mma_sm90_gmma_ext.hpp", "cute/atom/mma_traits_sm90_gmma_ext.hpp",
               "cute/atom/mma_traits_sm100.hpp")


def descriptor_cases() -> list[dict]:
    """The cases the descriptor oracle asks: every 7th case of the grid and its random extension that layoutalg
    plans (strict), both archs."""
    from layoutalg.kernel.plan import PlanError, plan_gemm

    out = []
    for c in cases()[::7]:
        try:
            plan_gemm(c["arch"], c["a"], c["b"], c["acc"], tuple(c["tile"]), c["a_major"], c["b_major"],
                      cta_group=c["cta_group"], stages=c["stages"], c_dtype=c["c"], c_major=c["c_major"],
                      epi_stages=c["epi_stages"], acc_stages=c.get("acc_stages", 1))
        except PlanError:
            continue
        out.append(c)
    return out


def descriptor_snippet(c: dict, op: str) -> str:
    """CuTe C++ printing ``idesc|words of thread 0|words of thread 128`` of operand ``op`` of the plan of ``c``."""
    from layoutalg.interop.cute import CUTE_TYPES
    from layoutalg.kernel.plan import plan_gemm

    p = plan_gemm(c["arch"], c["a"], c["b"], c["acc"], tuple(c["tile"]), c["a_major"], c["b_major"],
                  cta_group=c["cta_group"], stages=c["stages"], c_dtype=c["c"], c_major=c["c_major"],
                  epi_stages=c["epi_stages"], acc_stages=c.get("acc_stages", 1))
    o = p.a if op == "A" else p.b
    M, N, K = p.tile
    mn = M if op == "A" else N
    step = ", Step<_2,_1>{}" if o.major == "MN" else ""
    if c["arch"] == "sm_90":
        T = CUTE_TYPES[o.dtype]
        name = p.mma_atom.name.replace("SM90_", "SM90::GMMA::MMA_")  # every N (the _ext header's too)
        if name.endswith("_SS"):
            name += f"<GMMA::Major::{p.a.major}, GMMA::Major::{p.b.major}>"
        mma = f"make_tiled_mma({name}{{}}, Layout<Shape<{', '.join(f'_{x}' for x in p.atom_layout_mnk)}>>{{}})"
        idesc = 'printf("-|");'
        threads = (0, 128) if p.tiled_mma.num_threads > 128 else (0,)
    else:
        from layoutalg.nvidia.blackwell.umma import cute_cpp_type

        at = p.mma_atom
        T = cute_cpp_type(o.dtype, at.kind)
        mma = f"make_tiled_mma(MMA_Atom<MMA_Traits<{at.cute_cpp}>>{{}})"
        idesc = 'printf("%08x|", uint32_t(MMA_Traits<' + at.cute_cpp + '>{}.idesc_));'
        threads = ()
    kind = o.atom_kind
    size = mn * K * {"half_t": 2, "bfloat16_t": 2, "tfloat32_t": 4}.get(T, 1) + 1024
    body = [f"using T = {T};", f"auto mma = {mma};", idesc]
    if c["arch"] == "sm_90":
        body += [f"auto sL = tile_to_shape(GMMA::Layout_{kind}_Atom<T>{{}}, Shape<Int<{mn}>,Int<{K}>>{{}}{step});",
                 f"alignas(1024) static uint8_t buf[{size}];",
                 "auto sT = make_tensor(make_smem_ptr<T>(static_cast<void*>(buf)), sL);"]
        for t in threads:
            body += [f"{{ auto thr = mma.get_slice({t}); auto f = thr.make_fragment_{op}(thr.partition_{op}(sT));",
                     "  for (int i = 0; i < size<1>(f); ++i) for (int j = 0; j < size<2>(f); ++j)",
                     '    printf("%016llx ", (unsigned long long)uint64_t(f(0, i, j))); printf("|"); }']
    else:
        # one CTA's operand, as CUTLASS's sm100 kernels make it: tile_to_mma_shape of the atom over
        # ((MMA_MN per CTA, MMA_K), 1, K tiles), and the TiledMMA's make_fragment of that smem tensor
        ik = p.mma_atom.shape_mnk[2]
        order = ", Step<_2,_1>{}" if o.major == "MN" else ""
        body += [f"auto sL = UMMA::tile_to_mma_shape(UMMA::Layout_{kind}_Atom<T>{{}}, make_shape(make_shape("
                 f"Int<{mn // p.cta_group}>{{}}, Int<{ik}>{{}}), _1{{}}, Int<{K // ik}>{{}}){order});",
                 f"alignas(1024) static uint8_t buf[{size}];",
                 "auto sT = make_tensor(make_smem_ptr<T>(static_cast<void*>(buf)), sL);",
                 f"{{ auto f = mma.make_fragment_{op}(sT);",
                 "  for (int i = 0; i < size<1>(f); ++i) for (int j = 0; j < size<2>(f); ++j)",
                 '    printf("%016llx ", (unsigned long long)uint64_t(f(0, i, j))); printf("|"); }']
    return "\n".join(body)


def descriptor_snippets() -> list[tuple[str, str, str]]:
    """(case key, operand, snippet) of the descriptor oracle."""
    return [(case_key(c), op, descriptor_snippet(c, op)) for c in descriptor_cases() for op in "AB"]


DESC = SnippetRecorder("plan_descriptors", lambda: [([s for _, _, s in descriptor_snippets()],
                                                     {"headers": CPP_HEADERS, "chunk": 60})],
                       script="cute_dsl_plan_cases", live=0)
DESC.flag = "--record-descriptors"

if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker(*sys.argv[2:5])
        sys.exit(0)
    sys.exit(REC.main(others=[DESC]))
