"""CuTe C++ 4.2 as the oracle of a sparse UMMA atom's metadata E in TMEM over a CTA tile (tests only).

The snippet does what CUTLASS 4.2's sparse collective (``sm100_sparse_mma_warpspecialized.hpp``) does to
allocate E: ``Sm1xxGemmSparseConfig<ValTypeA, RowMajor, ValTypeE>::TensorEAtomK`` (its shared-memory metadata
atom's K), the shape ``partition_shape_A(tiled_mma, (M_tile, lcm(K_tile, TensorEAtomK)))`` and
``make_tensor<FrgTypeE>(shape)`` -- and prints the K atom, the shape and the layout. (The config recognises
kind::i8 by an ``int8_t`` A only -- "Ambiguous Input Type Config" for ``uint8_t`` -- so a u8 A asks it as s8: the
S8 atoms' ``FrgTypeE`` is ``tmem_e_frg<uint8_t>`` for both.) Atoms that CuTe refuses
(``tmem_e_frg``'s static_assert "Only 128 implemented right now": 64 rows per CTA) are recorded as refusals.
``flock /tmp/cute.lock python tests/cute_tmem_e_cases.py --record`` writes ``tests/data/cute/tmem_e.json``;
``tests/test_nvidia_tmem_e.py`` replays it.
"""

from __future__ import annotations

import functools
import random

from cute_oracle import norm, parse_fields as parse  # noqa: F401 (the tests read C.norm)
from oracle_recorder import OracleRecorder, sha  # noqa: F401 (the tests read C.sha)

HEADERS = ("cute/tensor.hpp", "cute/atom/mma_atom.hpp", "cute/atom/mma_traits_sm100.hpp",
           "cutlass/gemm/collective/builders/sm1xx_sparse_config.inl", "cutlass/version.h")


@functools.cache
def cases(seed: int = 29) -> list[tuple[str, tuple[int, int]]]:
    """(sparse SM100 atom by CuTe's name, CTA tile (M, K)): three atoms of 128 rows per CTA from every sparse
    family and, from every other family, one of 64 rows per CTA (CuTe refuses those); tile K 1-4 atom Ks, tile M
    the atom's M (twice it for some 1SM atoms)."""
    from layoutalg.nvidia.blackwell.umma import umma_atom
    from layoutalg.registry import atom_names

    rng = random.Random(seed)
    names = sorted(n for n in atom_names("mma") if n.startswith("SM100_MMA_") and "_SPARSE<" in n)
    fams: dict[str, list[str]] = {}
    for n in names:
        fams.setdefault(n.split("<")[0], []).append(n)
    out = []
    for i, fam in enumerate(sorted(fams)):
        good: list[str] = []
        bad: list[str] = []
        for n in fams[fam]:
            (bad if refused((n, ())) else good).append(n)
        picks = rng.sample(good, 3) + ([rng.choice(bad)] if bad and i % 2 == 0 else [])
        for n in picks:
            a = umma_atom(n)
            tm = a.M * (2 if a.cta_group == 1 and rng.random() < 0.3 else 1)
            out.append((n, (tm, a.K * rng.choice([1, 2, 3, 4]))))
    return out


def refused(case: tuple) -> bool:
    """CuTe's tmem_e_frg builds 128 rows per CTA only (its static_assert)."""
    from layoutalg.nvidia.blackwell.umma import umma_atom

    a = umma_atom(case[0])
    return a.M // a.cta_group != 128


def snippet(case: tuple) -> str:
    from layoutalg.nvidia.blackwell.umma import umma_atom

    a = umma_atom(case[0])
    tm, tk = case[1]
    return "\n".join([
        f"using Atom = {a.cute_cpp};",
        "auto mma = make_tiled_mma(Atom{});",
        "using TM = decltype(mma);",
        "using VA = typename TM::ValTypeA;",
        "using CfgA = cute::conditional_t<cute::is_same_v<typename VA::raw_type, uint8_t> && VA::sparsity == 2,",
        "                                 sparse_elem<2, int8_t>, VA>;  // the config names int8_t for kind::i8 only",
        "using Cfg = cutlass::Sm1xxGemmSparseConfig<CfgA, cutlass::layout::RowMajor, typename TM::ValTypeE>;",
        f"constexpr int EK = cute::lcm({tk}, int(typename Cfg::TensorEAtomK{{}}));",
        f"auto shapeE = partition_shape_A(mma, make_shape(Int<{tm}>{{}}, Int<EK>{{}}));",
        "auto t = make_tensor<typename TM::FrgTypeE>(shapeE);",
        'printf("EK=%d\\n", int(typename Cfg::TensorEAtomK{}));',
        'printf("S="); print(shapeE); printf("\\n");',
        'printf("L="); print(t.layout()); printf("\\n");'])


def key(case: tuple) -> str:
    return "{}|{}x{}".format(case[0], *case[1])


def record(rec: OracleRecorder) -> dict:
    from layoutalg.interop.cutecpp import run_snippets

    cs = cases()
    snips = [snippet(c) for c in cs]
    res = run_snippets(snips, headers=HEADERS, chunk=50, jobs=1, expect_refusal=[refused(c) for c in cs],
                       refusal_chunk=8)
    data: dict = {
        **rec.provenance("flock /tmp/cute.lock python tests/cute_tmem_e_cases.py --record (g++ -std=c++17 on the host, "
                         "CUTLASS 4.2 wheel headers; no GPU): Sm1xxGemmSparseConfig::TensorEAtomK, "
                         "partition_shape_A(tiled_mma, (M, lcm(K, TensorEAtomK))), make_tensor<FrgTypeE>(shape).layout()"),
        "cases": {},
    }
    for c, s, o in zip(cs, snips, res):
        entry: dict = {"sha1": sha(s)}
        if isinstance(o, str):
            entry.update(parse(o))
        else:
            entry["refused"] = o.message[-400:]
        data["cases"][key(c)] = entry
    return data


REC = OracleRecorder("cute", "tmem_e", record, script="cute_tmem_e_cases")

if __name__ == "__main__":  # pragma: no cover - a recording tool
    raise SystemExit(REC.main())
