"""The TMEM accumulator of UMMA atoms and the epilogue's make_tmem_copy partitions, as CuTe C++ 4.2 builds them.

Each case is (UMMA atom, tile (M, N), tcgen05.ld atom). Its snippet prints the TMEM layout of
``partition_fragment_C(make_tiled_mma(atom), tile)`` (and of ``make_fragment_A`` for ``_TS`` atoms),
then ``make_tmem_copy(op, acc(_,_,0,0))``: its TiledLayout_TV, layoutS/D_TV and tiler, and for
threads 0, 37, 127 ``partition_S`` of the TMEM tensor and ``partition_D`` of a column-major
register/global tile (layout and offset). ``python tests/cute_tmem_accum_cases.py --record`` writes
``tests/data/cute/tmem_accum.json``; ``tests/test_nvidia_tmem_accum.py`` replays it.
"""

from __future__ import annotations

import functools
import random

from cute_oracle import norm, parse_fields as parse  # noqa: F401 (norm, parse: the tests read C.norm / C.parse)
from oracle_recorder import OracleRecorder, sha  # noqa: F401 (the tests read C.sha)

HEADERS = ("cute/tensor.hpp", "cute/atom/mma_atom.hpp", "cute/atom/copy_atom.hpp", "cute/atom/mma_traits_sm100.hpp",
           "cute/atom/copy_traits_sm100.hpp", "cutlass/version.h")
PRELUDE = "alignas(1024) static float gbuf[1 << 17];"
THREADS = (0, 37, 127)
FAMILIES = ["F16BF16_SS", "F16BF16_2x1SM_SS", "F16BF16_TS", "F16BF16_2x1SM_TS", "TF32_SS", "TF32_2x1SM_TS",
            "S8_SS", "S8_TS", "S8_2x1SM_SS", "F8F6F4_SS", "F8F6F4_2x1SM_SS", "MXF8F6F4_SS", "MXF8F6F4_2x1SM_SS",
            "MXF4_SS", "MXF4_2x1SM_SS", "F16BF16_SS_SPARSE"]


@functools.cache
def cases(n: int = 48, seed: int = 0) -> list[tuple[str, tuple, str, bool]]:
    """(atom, tile, load op, CuTe refuses?): random atoms of the families above, legal loads, and a few misfits."""
    from layoutalg.nvidia.blackwell.tmem_copy import SHAPES, ld_name, tmem_copy_op
    from layoutalg.nvidia.blackwell.umma import UMMA_FAMILIES, umma_atom, umma_atom_names

    rng = random.Random(seed)
    by_family: dict = {}
    for fam in UMMA_FAMILIES:  # the atoms of umma_atom_names() of these families only
        if fam in FAMILIES:
            for name in umma_atom_names(fam):
                if ",K,K" in name:
                    by_family.setdefault(fam, []).append(name)
    out = []
    while len(out) < n:
        fam = FAMILIES[len(out) % len(FAMILIES)]
        name = rng.choice(by_family[fam])
        a = umma_atom(name)
        m_cta = a.M // a.cta_group
        n_mma = a.N
        if a.N % 8 or (a.cta_group == 2 and m_cta == 64 and a.N % 16):
            continue
        tile = (a.M * rng.choice([1, 2]), a.N * rng.choice([1, 1, 2]))
        misfit = len(out) % 12 == 11
        shapes = ["32x32b"] if misfit and m_cta == 64 and a.cta_group == 1 else (
            ["16x64b", "16x128b", "16x256b", "16x32bx2"] if m_cta == 64 and a.cta_group == 1 else list(SHAPES))
        shape = rng.choice(shapes)
        pack = a.c_type == "f16" and not misfit  # 16-bit accumulators sit one per 32-bit column: .pack::16b
        cols_per = SHAPES[shape][1] // (16 if pack else 32)
        if a.cta_group == 2 and m_cta == 64:
            n_cols = n_mma // 2
        else:
            n_cols = n_mma
        nums = [k for k in (1, 2, 4, 8, 16, 32, 64, 128) if k <= SHAPES[shape][3] and k * cols_per <= n_cols
                and n_cols % (k * cols_per) == 0]
        if not nums:
            continue
        op = ld_name(shape, rng.choice(nums), pack)
        tmem_copy_op(op)
        refuses = misfit and ((m_cta == 64 and a.cta_group == 1) or a.c_type == "f16")
        out.append((name, tile, op, refuses))
    return out


def snippet(case: tuple) -> str:
    from layoutalg.nvidia.blackwell.umma import umma_atom

    name, (M, N), op, _ = case
    a = umma_atom(name)
    lines = [f"auto mma = make_tiled_mma(MMA_Atom<MMA_Traits<{a.cute_cpp}>>{{}});",
             f"auto acc = partition_fragment_C(mma, make_shape(Int<{M}>{{}}, Int<{N}>{{}}));",
             'printf("acc="); print(acc.layout()); printf("\\n");']
    if a.source == "TS":
        lines += [f"auto tA = mma.make_fragment_A(partition_shape_A(mma, make_shape(Int<{M}>{{}}, Int<{4 * a.K}>{{}})));",
                  'printf("A="); print(tA.layout()); printf("\\n");']
    lines += ["auto accm = acc(make_coord(_,_),0,0);",
              'printf("accm="); print(accm.layout()); printf("\\n");',
              f"auto tc = make_tmem_copy({op}{{}}, accm);",
              'printf("tiledtv="); print(typename decltype(tc)::TiledLayout_TV{}); printf("\\n");',
              'printf("tvS="); print(tc.get_layoutS_TV()); printf("\\n");',
              'printf("tvD="); print(tc.get_layoutD_TV()); printf("\\n");',
              'printf("tiler="); print(typename decltype(tc)::Tiler_MN{}); printf("\\n");',
              "auto g = make_tensor(make_gmem_ptr(gbuf), make_layout(shape(accm)));"]
    for t in THREADS:
        lines += [f"{{ auto thr = tc.get_slice({t}); auto s = thr.partition_S(accm); auto d = thr.partition_D(g);",
                  f'  printf("S{t}="); print(s.layout()); printf(" @%u\\n", (unsigned)raw_pointer_cast(s.data()));',
                  f'  printf("D{t}="); print(d.layout()); printf(" @%d\\n", int(d.data().get() - gbuf)); }}']
    return "\n".join(lines)


def key(case: tuple) -> str:
    name, (M, N), op, _ = case
    return f"{name}|{M}x{N}|{op}"


def record(rec: OracleRecorder) -> dict:
    from layoutalg.interop.cutecpp import run_snippets

    cs = cases()
    snips = [snippet(c) for c in cs]
    res = run_snippets(snips, headers=HEADERS, prelude=PRELUDE, chunk=50, jobs=1,
                       expect_refusal=[c[3] for c in cs], refusal_chunk=8)
    data: dict = {
        **rec.provenance("flock /tmp/cute.lock python tests/cute_tmem_accum_cases.py --record (g++ -std=c++17 on the host, "
               "CUTLASS 4.2 wheel headers; no GPU)"),
        "cases": {},
    }
    for c, s, out in zip(cs, snips, res):
        entry = {"sha1": sha(s)}
        if isinstance(out, str):
            entry.update(parse(out))
        else:
            entry["refused"] = out.message
        data["cases"][key(c)] = entry
    return data


# ------------------------------------------------------------------------------ tcgen05.cp tilings
UTCCP_TYPES = {"uint32_t": 32, "uint8_t": 8}


def utccp_cases() -> list[tuple[str, str, int]]:
    """(UTCCP op, value type, 32-bit columns of the TMEM tensor): every op, two types, two widths."""
    from layoutalg.nvidia.blackwell.tmem_copy import tmem_copy_names

    return [(op, t, c) for op in tmem_copy_names() if "UTCCP" in op for t in UTCCP_TYPES for c in (8, 16)]


def utccp_tensor(case: tuple):
    from layoutalg.layout import Layout
    from layoutalg.nvidia.blackwell.tmem_accum import dp

    _op, t, c = case
    bits = UTCCP_TYPES[t]
    return Layout((128, c * 32 // bits), (dp(bits), 1))


def utccp_snippet(case: tuple) -> str:
    op, t, c = case
    L = utccp_tensor(case)
    n = L.shape[1]
    lines = [f"auto t = make_tensor(make_tmem_ptr<{t}>(), make_layout(make_shape(Int<128>{{}}, Int<{n}>{{}}), "
             f"make_stride(TMEM::DP<{t}>{{}}, Int<1>{{}})));",
             f"auto tc = make_utccp_copy({op}{{}}, t);",
             'printf("tiledtv="); print(typename decltype(tc)::TiledLayout_TV{}); printf("\\n");',
             'printf("tiler="); print(typename decltype(tc)::Tiler_MN{}); printf("\\n");',
             'printf("tvS="); print(tc.get_layoutS_TV()); printf("\\n");',
             'printf("tvD="); print(tc.get_layoutD_TV()); printf("\\n");',
             "auto d = tc.get_slice(0).partition_D(t);",
             'printf("D0="); print(d.layout()); printf(" @%u\\n", (unsigned)raw_pointer_cast(d.data()));']
    return "\n".join(lines)


def utccp_key(case: tuple) -> str:
    return "{}|{}|{}cols".format(*case)


def record_utccp(rec: OracleRecorder) -> dict:
    from layoutalg.interop.cutecpp import run_snippets

    cs = utccp_cases()
    snips = [utccp_snippet(c) for c in cs]
    res = run_snippets(snips, headers=HEADERS, chunk=50, jobs=1)
    data: dict = {**rec.provenance("flock /tmp/cute.lock python tests/cute_tmem_accum_cases.py --record-utccp (g++ on the "
                         "host, CUTLASS 4.2 wheel headers; no GPU)", compiler_line=False), "cases": {}}
    for c, s, out in zip(cs, snips, res):
        entry = {"sha1": sha(s)}
        if isinstance(out, str):
            entry.update(parse(out))
        else:
            entry["refused"] = out.message
        data["cases"][utccp_key(c)] = entry
    return data


REC = OracleRecorder("cute", "tmem_accum", record, script="cute_tmem_accum_cases")
UREC = OracleRecorder("cute", "tmem_utccp", record_utccp, script="cute_tmem_accum_cases", flag="--record-utccp")
RECORDING, UTCCP_RECORDING = str(REC.path), str(UREC.path)

if __name__ == "__main__":  # pragma: no cover - a recording tool
    raise SystemExit(REC.main(others=[UREC]))
