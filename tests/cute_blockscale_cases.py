"""Block-scale factor layouts as CuTe C++ 4.2 builds them: ``Sm1xxBlockScaledConfig<V>::tile_atom_to_shape_SFA/SFB``.

``python tests/cute_blockscale_cases.py --record`` compiles one snippet per random problem shape
(M, N, K, L) and scale-factor vector size V (16, 32) -- 100 cases, two programs of 50 -- and
writes ``tests/data/cute/blockscale.json``; ``tests/test_nvidia_blockscale.py`` replays it against
:func:`layoutalg.nvidia.blackwell.blockscale.sf_layout` and recompiles a small sample each run.
"""

from __future__ import annotations

import random

from cute_oracle import norm, parse_fields as parse  # noqa: F401 (norm, parse: the tests read C.norm / C.parse)
from oracle_recorder import OracleRecorder, sha  # noqa: F401 (the tests read C.sha)

HEADERS = ("cute/tensor.hpp", "cutlass/detail/sm100_blockscaled_layout.hpp", "cutlass/version.h")
SMEM_HEADERS = ("cute/tensor.hpp", "cute/atom/mma_atom.hpp", "cute/atom/mma_traits_sm100.hpp",
                "cutlass/detail/sm100_blockscaled_layout.hpp", "cutlass/version.h")
#: deduce_smem_layoutSFA for a 2x1SM MXF4 atom with tile M = 128 (64 rows per CTA): reported to divide by zero
#: (SIGFPE); in this harness CuTe returns an SFA layout with a 0-extent block mode (no storage at all)
TRAP = ("SM100_MMA_MXF4_2x1SM_SS<e2m1,e2m1,float,ue8m0,128,128,32,K,K>", (128, 128, 256))


def cases(n: int = 100, seed: int = 0) -> list[tuple[int, int, int, int, int]]:
    """(sf_vec, M, N, K, L): random problem shapes, half of them multiples of the block, half not."""
    rng = random.Random(seed)
    out = []
    for j in range(n):
        v = (16, 32)[j % 2]
        if j % 4 < 2:
            M, N, K = 128 * rng.randint(1, 8), 128 * rng.randint(1, 8), 4 * v * rng.randint(1, 8)
        else:
            M, N, K = rng.randint(1, 1100), rng.randint(1, 1100), v * rng.randint(1, 40)
        out.append((v, M, N, K, rng.choice([1, 1, 2, 3, 7])))
    return out


def snippet(case: tuple) -> str:
    v, M, N, K, L = case
    return "\n".join([
        f"using Cfg = cutlass::detail::Sm1xxBlockScaledConfig<{v}>;",
        f"auto ps = make_shape(int({M}), int({N}), int({K}), int({L}));",
        'printf("SFA="); print(Cfg::tile_atom_to_shape_SFA(ps)); printf("\\n");',
        'printf("SFB="); print(Cfg::tile_atom_to_shape_SFB(ps)); printf("\\n");',
        'printf("atom="); print(typename Cfg::SfAtom{}); printf("\\n");',
    ])


def smem_cases(n: int = 24, seed: int = 1) -> list[tuple[str, tuple]]:
    """(block-scaled UMMA atom, CTA tile (M, N, K)) for deduce_smem_layoutSFA/SFB (M per CTA >= 128)."""
    from layoutalg.nvidia.blackwell.umma import UMMA_FAMILIES, umma_atom, umma_atom_names

    rng = random.Random(seed)
    # the names of umma_atom_names() of these families, in its order (building only these families' atoms)
    pool = [x for fam in UMMA_FAMILIES if fam in ("MXF8F6F4_SS", "MXF8F6F4_2x1SM_SS", "MXF4_SS", "MXF4_2x1SM_SS")
            for x in umma_atom_names(fam) if ",K,K" in x]
    out = []
    while len(out) < n:
        a = umma_atom(rng.choice(pool))
        M = a.M * rng.choice([1, 2])
        if M // a.cta_group < 128 or a.N % 64:
            continue
        K = 4 * a.vector_size * rng.choice([1, 2, 4])
        if K % a.K:
            continue
        c = (a.name, (M, a.N * rng.choice([1, 2]), K))
        if c not in out:
            out.append(c)
    return out


def smem_snippet(case: tuple) -> str:
    from layoutalg.nvidia.blackwell.umma import umma_atom

    name, (M, N, K) = case
    a = umma_atom(name)
    return "\n".join([
        f"auto mma = make_tiled_mma(MMA_Atom<MMA_Traits<{a.cute_cpp}>>{{}});",
        f"using Cfg = cutlass::detail::Sm1xxBlockScaledConfig<{a.vector_size}>;",
        f"auto ts = make_shape(Int<{M}>{{}}, Int<{N}>{{}}, Int<{K}>{{}});",
        'printf("SFA="); print(Cfg::deduce_smem_layoutSFA(mma, ts)); printf("\\n");',
        'printf("SFB="); print(Cfg::deduce_smem_layoutSFB(mma, ts)); printf("\\n");',
    ])


def smem_key(case: tuple) -> str:
    return "{}|{}x{}x{}".format(case[0], *case[1])


def key(case: tuple) -> str:
    return "V{}_M{}_N{}_K{}_L{}".format(*case)


def record(rec: OracleRecorder) -> dict:
    from layoutalg.interop.cutecpp import run_snippets

    cs = cases()
    snips = [snippet(c) for c in cs]
    res = run_snippets(snips, headers=HEADERS, chunk=50, jobs=1)
    data: dict = {
        **rec.provenance("flock /tmp/cute.lock python tests/cute_blockscale_cases.py --record (g++ -std=c++17 on the host, "
               "CUTLASS 4.2 wheel headers, cutlass/detail/sm100_blockscaled_layout.hpp; no GPU)"),
        "cases": {},
    }
    for c, s, out in zip(cs, snips, res):
        if not isinstance(out, str):
            raise RuntimeError(f"{c}: CuTe refused it: {out.message}")
        data["cases"][key(c)] = {"sha1": sha(s), **parse(out)}
    sc = smem_cases()
    ss = [smem_snippet(c) for c in sc]
    sres = run_snippets(ss, headers=SMEM_HEADERS, chunk=50, jobs=1)
    data["smem"] = {}
    for c, s, out in zip(sc, ss, sres):
        if not isinstance(out, str):
            raise RuntimeError(f"{c}: CuTe refused it: {out.message}")
        data["smem"][smem_key(c)] = {"sha1": sha(s), **parse(out)}
    try:  # the reported SIGFPE trap: recorded, not chased
        out = run_snippets([smem_snippet(TRAP)], headers=SMEM_HEADERS, cache=False)[0]
        data["trap"] = {"case": smem_key(TRAP), "crashed": False, **(parse(out) if isinstance(out, str) else {})}
    except RuntimeError as e:
        data["trap"] = {"case": smem_key(TRAP), "crashed": True, "message": str(e)[-300:]}
    return data


REC = OracleRecorder("cute", "blockscale", record, script="cute_blockscale_cases")
RECORDING = str(REC.path)

if __name__ == "__main__":  # pragma: no cover - a recording tool
    raise SystemExit(REC.main())
