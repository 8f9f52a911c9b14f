"""The other TMEM fragments of CuTe 4.2's mma_traits_sm100.hpp, as CuTe C++ builds them.

Each case is (kind, template arguments, shape): ``tmem_frg_ws_1sm<T, S>`` (the ``.ws`` accumulator),
``tmem_sf_frg<SF, VS, N_SM, Is_SFA, alloc>`` (block-scale factors) and ``tmem_e_frg<T>`` /
``tmem_e_frg_ws<T>`` (sparse metadata). Its snippet prints ``make_tensor<Frg>(shape).layout()``.
``flock /tmp/cute.lock python tests/cute_tmem_frags_cases.py --record`` writes
``tests/data/cute/tmem_frags.json``; ``tests/test_nvidia_tmem_frags.py`` replays it.
"""

from __future__ import annotations

import random
from typing import Any

from cute_oracle import norm, parse_fields as parse  # noqa: F401 (norm, parse: the tests read C.norm / C.parse)
from oracle_recorder import OracleRecorder, sha  # noqa: F401 (the tests read C.sha)

HEADERS = ("cute/tensor.hpp", "cute/atom/mma_atom.hpp", "cute/atom/mma_traits_sm100.hpp", "cutlass/version.h")
CPP = {"f32": ("float", 32), "s32": ("int32_t", 32), "f16": ("half_t", 16), "bf16": ("bfloat16_t", 16),
       "u32": ("uint32_t", 32), "tf32": ("tfloat32_t", 32), "u8": ("uint8_t", 8), "e4m3": ("float_e4m3_t", 8),
       "s8": ("int8_t", 8), "e2m1": ("float_e2m1_t", 4), "e3m2": ("float_e3m2_t", 6),
       "ue8m0": ("float_ue8m0_t", 8), "ue4m3": ("float_ue4m3_t", 8)}
E_N = {32: 16, 16: 32, 8: 64, 4: 128}


def _rest(rng: random.Random, n: int) -> tuple:
    return tuple(rng.choice([1, 1, 2, 3, 4]) for _ in range(n))


def cases(seed: int = 0) -> list[tuple[str, tuple, Any, bool]]:
    """(kind, template args, shape, CuTe refuses?): a random sweep of the three fragment kinds."""
    from layoutalg.nvidia.blackwell.blockscale import smem_sf_layout

    rng = random.Random(seed)
    out: list = []
    # --- tmem_frg_ws_1sm<T, S>: M 32/64/128, N 64/128/256, value/storage types, rest of rank 0..3
    while len(out) < 44:
        t, s = rng.choice([("f32", "u32"), ("s32", "u32"), ("f16", "u32"), ("bf16", "u32"), ("f16", "f16")])
        M, N = rng.choice([32, 64, 128]), rng.choice([64, 128, 256])
        shape = ((M, N),) + _rest(rng, rng.choice([0, 1, 2, 2, 3]))
        import math
        if math.prod(shape[0]) * math.prod(shape[1:]) * CPP[s][1] > 128 * 512 * 32:
            continue
        out.append(("ws", (t, s), shape, len(shape) == 1))  # no MMA repeat modes: CuTe has no make_layout()
    out += [("ws", ("f32", "u32"), ((64, 32), 1, 1), True),       # N = 32: not a dense .ws N
            ("ws", ("f32", "u32"), ((16, 64), 1, 1), True),       # M = 16
            ("ws", ("f32", "u32"), ((128, 256), 2, 2), True),     # 4 x 128 x 256 x 32 bits: more than TMEM
            ("ws", ("f32", "f16"), ((128, 64), 1, 1), True)]      # storage smaller than the value
    # --- tmem_e_frg<T> (M = 128) and tmem_e_frg_ws<T> (M 32/64/128)
    n0 = len(out)
    while len(out) - n0 < 44:
        ws = rng.random() < 0.5
        t = rng.choice(["tf32", "f16", "bf16", "u8", "e4m3", "s8"] + ([] if ws else ["e2m1"]))
        M = rng.choice([32, 64, 128]) if ws else 128
        shape = ((M, E_N[CPP[t][1]]),) + _rest(rng, rng.choice([1, 2, 2, 3]))
        out.append(("e_ws" if ws else "e", (t,), shape, False))
    out += [("e", ("f16",), ((64, 32), 1, 1), True),              # non-.ws metadata: M = 128 only
            ("e", ("f16",), ((128, 64), 1, 1), True),             # 16-bit A: K = 32
            ("e_ws", ("e2m1",), ((128, 128), 1, 1), True),        # .ws metadata has no 4-bit layout
            ("e_ws", ("u8",), ((16, 64), 1, 1), True),            # M = 16
            ("e", ("e3m2",), ((128, 64), 1, 1), True)]            # a 6-bit type: no branch of CuTe's make
    # --- tmem_sf_frg<SF, VS, N_SM, Is_SFA, alloc>: the shapes CUTLASS passes (the smem SF layout's) and random ones
    n0 = len(out)
    while len(out) - n0 < 48:
        sf = rng.choice(["ue8m0", "ue4m3"])
        vs = rng.choice([16, 32])
        n_sm = rng.choice([1, 2])
        is_a = rng.random() < 0.5
        alloc = rng.choice(["ScaleFactorDuplicated4by1", "ScaleFactorDuplicated2by2"]) if n_sm == 2 \
            else "ScaleFactorDuplicated4by1"
        if rng.random() < 0.5:
            mma_k = rng.choice([vs, 2 * vs, 4 * vs]) if vs == 16 else rng.choice([vs, 2 * vs])
            tile = (rng.choice([128, 256]) * n_sm, rng.choice([64, 128, 192, 256]), 4 * vs * rng.choice([1, 2]))
            try:
                shape = smem_sf_layout("A" if is_a else "B", vs, mma_k, tile, n_sm).shape
            except Exception:
                continue
        else:
            mn = rng.choice([64, 128, 256]) if not is_a and alloc.endswith("2by2") else rng.choice([32, 64, 128, 256])
            shape = ((mn, (vs, rng.choice([1, 2, 4]))),) + _rest(rng, rng.choice([2, 2, 3]))
        out.append(("sf", (sf, vs, n_sm, is_a, alloc), shape, False))
    out += [("sf", ("ue8m0", 32, 1, False, "ScaleFactorDuplicated2by2"), ((128, (32, 1)), 1, 1), True),  # 2x2 needs 2 SMs
            ("sf", ("ue8m0", 32, 1, True, "ScaleFactorDuplicated4by1"), ((128, (32, 1)), 1), True),      # rank 2
            ("sf", ("ue8m0", 32, 1, True, "ScaleFactorDuplicated4by1"), ((128, 32), 1, 1), True),        # K not (VS, NSF)
            # MN not a multiple of 32: CuTe does not refuse, it truncates Int<MN/32>; layoutalg raises (see the test)
            ("sf", ("ue8m0", 32, 1, True, "ScaleFactorDuplicated4by1"), ((48, (32, 1)), 1, 1), False)]
    seen: set = set()
    return [c for c in out if not (key(c) in seen or seen.add(key(c)))]


def cpp_shape(s: Any) -> str:
    if isinstance(s, tuple):
        return "make_shape(" + ", ".join(cpp_shape(x) for x in s) + ")"
    return f"Int<{s}>{{}}"


def frg_type(case: tuple) -> str:
    kind, args, _shape, _ = case
    if kind == "ws":
        return f"UMMA::tmem_frg_ws_1sm<{CPP[args[0]][0]}, {CPP[args[1]][0]}>"
    if kind in ("e", "e_ws"):
        return f"UMMA::tmem_{kind}_frg<{CPP[args[0]][0]}>".replace("_e_ws_frg", "_e_frg_ws")
    sf, vs, n_sm, is_a, alloc = args
    return f"UMMA::tmem_sf_frg<{CPP[sf][0]}, {vs}, {n_sm}, {'true' if is_a else 'false'}, UMMA::TmemAllocMode::{alloc}>"


def snippet(case: tuple) -> str:
    return (f"auto t = make_tensor<{frg_type(case)}>({cpp_shape(case[2])});\n"
            'printf("L="); print(t.layout()); printf("\\n");')


def key(case: tuple) -> str:
    return f"{frg_type(case)}|{case[2]}"


# --- the FrgTypeSFA / FrgTypeSFB of block-scaled UMMA atoms over CTA tiles, as CUTLASS's collective makes them
ATOM_HEADERS = ("cute/tensor.hpp", "cute/atom/mma_atom.hpp", "cute/atom/mma_traits_sm100.hpp",
                "cutlass/detail/sm100_blockscaled_layout.hpp", "cutlass/version.h")


def atom_cases() -> list[tuple[str, tuple]]:
    """(block-scaled atom: MXF8F6F4 / MXF4 (sf_vec 32) / MXF4NVF4 (sf_vec 16), 1SM and 2x1SM; CTA tile (M, N, K))."""
    from cute_blockscale_cases import smem_cases

    return smem_cases(48, seed=7)


def atom_snippet(case: tuple) -> str:
    from cute_blockscale_cases import smem_snippet
    from layoutalg.nvidia.blackwell.umma import umma_atom

    a = umma_atom(case[0])
    lines = smem_snippet(case).splitlines()[:3]  # the tiled MMA, the config, the tile shape
    return "\n".join(lines + [
        f"using Tr = MMA_Traits<{a.cute_cpp}>;",
        "auto sfa = make_tensor<typename Tr::FrgTypeSFA>(shape(Cfg::deduce_smem_layoutSFA(mma, ts)));",
        "auto sfb = make_tensor<typename Tr::FrgTypeSFB>(shape(Cfg::deduce_smem_layoutSFB(mma, ts)));",
        'printf("SFA="); print(sfa.layout()); printf("\\n");',
        'printf("SFB="); print(sfb.layout()); printf("\\n");'])


def atom_key(case: tuple) -> str:
    return "{}|{}x{}x{}".format(case[0], *case[1])


def record(rec: OracleRecorder) -> dict:
    from layoutalg.interop.cutecpp import run_snippets

    cs = cases()
    snips = [snippet(c) for c in cs]
    res = run_snippets(snips, headers=HEADERS, chunk=50, jobs=1, expect_refusal=[c[3] for c in cs], refusal_chunk=6)
    data: dict = {
        **rec.provenance("flock /tmp/cute.lock python tests/cute_tmem_frags_cases.py --record (g++ -std=c++17 on the host, "
               "CUTLASS 4.2 wheel headers; no GPU): make_tensor<UMMA::tmem_*_frg*<...>>(shape).layout()"),
        "cases": {},
    }
    for c, s, o in zip(cs, snips, res):
        entry: dict = {"sha1": sha(s)}
        if isinstance(o, str):
            entry.update(parse(o))
        else:
            entry["refused"] = o.message[-400:]
        data["cases"][key(c)] = entry
    acs = atom_cases()
    asnips = [atom_snippet(c) for c in acs]
    data["atom_cases"] = {}
    for c, s, o in zip(acs, asnips, run_snippets(asnips, headers=ATOM_HEADERS, chunk=50, jobs=1)):
        entry = {"sha1": sha(s)}
        if isinstance(o, str):
            entry.update(parse(o))
        else:
            entry["refused"] = o.message[-400:]
        data["atom_cases"][atom_key(c)] = entry
    return data


REC = OracleRecorder("cute", "tmem_frags", record, script="cute_tmem_frags_cases")
RECORDING = str(REC.path)

if __name__ == "__main__":  # pragma: no cover - a recording tool
    raise SystemExit(REC.main())
