"""CuTe C++ 4.2 as the oracle of the sm_120 ``SM120_*`` and sm_103 ``SM103_MXF4_ULTRA_*`` atoms (tests only).

Each snippet instantiates the atom's operation (its primary template's static_assert refuses a type
combination CuTe has no instruction for) and prints its ``MMA_Traits``:

* SM120: ``Shape_MNK|ThrID|ALayout|BLayout|CLayout|SFALayout|SFBLayout|ELayout`` (``-`` where the
  traits have none);
* SM103: ``Shape_MNK|ThrID|ALayout|BLayout|CLayout|idesc_`` (32-bit hex), and its ``MMA_ScaleFactor``;
* ``make_tiled_mma`` of a few of them (C, A, B TV layouts and tile sizes).

    python tests/sm120_oracle.py --record     # (re)writes tests/data/cute/sm120_atoms.json (g++, ~3 min)

(or ``LAYOUTALG_RECORD=sm120_atoms`` in a pytest run: :mod:`oracle_recorder`). tests/test_nvidia_sm120.py
replays the recording and compiles a small live sample.
"""

from __future__ import annotations

import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from oracle_recorder import OracleRecorder  # noqa: E402

SM120_HEADERS = ("cute/atom/mma_traits_sm120.hpp", "cute/atom/mma_traits_sm120_sparse.hpp")
SM103_HEADERS = ("cute/atom/mma_traits_sm100.hpp",)

#: names CuTe must refuse (no specialization / a static_assert), with what layoutalg says
ILLEGAL_SM120 = [
    "cute::SM120_16x8x32_TN<int8_t, int8_t, float>",
    "cute::SM120::BLOCKSCALED::SM120_16x8x64_TN_VS<cutlass::float_e4m3_t, cutlass::float_e4m3_t, float, cutlass::float_ue8m0_t, 32>",
    "cute::SM120::BLOCKSCALED::SM120_16x8x32_TN_VS<cutlass::float_e4m3_t, cutlass::float_e4m3_t, cutlass::half_t, "
    "cutlass::float_ue8m0_t, 32>",
    "cute::SM120::SPARSE::SM120_SPARSE_16x8x64_TN<cutlass::float_e4m3_t, cutlass::float_e4m3_t, int32_t>",
]
_U = "cute::SM103::SM103_MXF4_ULTRA_SS_VS<cutlass::float_e2m1_t, cutlass::float_e2m1_t, float, cutlass::float_{}_t, {}, " \
     "UMMA::Major::K, UMMA::Major::K>"
ILLEGAL_SM103 = [_U.format("ue8m0", "256, 128, 32"), _U.format("ue8m0", "128, 24, 32"), _U.format("ue4m3", "128, 128, 32")]


#: C++17 detection of the optional layouts (SFALayout, SFBLayout, ELayout)
PRELUDE = "\n".join(
    f"template <class T, class = void> struct has_{m} : std::false_type {{}};\n"
    f"template <class T> struct has_{m}<T, std::void_t<typename T::{m}>> : std::true_type {{}};\n"
    f"template <class T> void print_{m}() {{ if constexpr (has_{m}<T>::value) print(typename T::{m}{{}}); "
    f"else printf(\"-\"); }}"
    for m in ("SFALayout", "SFBLayout", "ELayout"))


def sm120_snippet(cpp: str) -> str:
    """Print the SM120 atom's traits (``-`` for a layout it lacks)."""
    def opt(member: str) -> str:
        return f"print_{member}<T>();"
    return (f"(void)sizeof({cpp}); using T = MMA_Traits<{cpp}>; print(typename T::Shape_MNK{{}}); printf(\"|\");"
            " print(typename T::ThrID{}); printf(\"|\"); print(typename T::ALayout{}); printf(\"|\");"
            " print(typename T::BLayout{}); printf(\"|\"); print(typename T::CLayout{}); printf(\"|\"); "
            + opt("SFALayout") + ' printf("|"); ' + opt("SFBLayout") + ' printf("|"); ' + opt("ELayout"))


def sm103_snippet(cpp: str) -> str:
    """Print the SM103 atom's traits and idesc_."""
    return (f"(void)sizeof({cpp}); using T = MMA_Traits<{cpp}>; print(typename T::Shape_MNK{{}}); printf(\"|\");"
            " print(typename T::ThrID{}); printf(\"|\"); print(typename T::ALayout{}); printf(\"|\");"
            " print(typename T::BLayout{}); printf(\"|\"); print(typename T::CLayout{}); printf(\"|\");"
            " T t{}; printf(\"%08x\", uint32_t(t.idesc_));")


#: tiled MMAs: (atom, atom layout (M, N, K), permutation entries or None)
TILED_CASES = [
    ("SM120_16x8x32_TN<e4m3,e4m3,float>", (2, 2, 1), None),
    ("SM120::BLOCKSCALED::SM120_16x8x64_TN_VS<e2m1,e2m1,float,ue4m3,16>", (4, 1, 1), (None, 16, None)),
    ("SM120::BLOCKSCALED::SM120_16x8x32_TN_VS<e5m2,e2m3,float,ue8m0,32>", (2, 4, 1), (32, 32, 32)),
    ("SM120::SPARSE::SM120_SPARSE_16x8x64_TN<e4m3,e4m3,f16>", (2, 2, 1), None),
    ("SM120::BLOCKSCALED::SPARSE::SM120_SPARSE_16x8x128_TN_VS<e2m1,e2m1,float,ue8m0,64>", (1, 2, 1), None),
    ("SM103::SM103_MXF4_ULTRA_SS_VS<e2m1,e2m1,float,ue8m0,128,128,32,K,K>", (1, 1, 1), None),
    ("SM103::SM103_MXF4_ULTRA_2x1SM_SS_VS<e2m1,e2m1,float,ue4m3,256,64,16,K,K>", (1, 2, 1), None),
]


def tiled_snippet(case: tuple) -> str:
    from layoutalg import registry

    name, al, perm = case
    at = registry.mma_atom(name)
    ptxt = "" if perm is None else ", make_tile(" + ", ".join("Underscore{}" if p is None else f"Int<{p}>{{}}"
                                                             for p in perm) + ")"
    return (f"auto mma = make_tiled_mma(MMA_Atom<MMA_Traits<{at.cute_cpp}>>{{}}, "
            f"Layout<Shape<Int<{al[0]}>,Int<{al[1]}>,Int<{al[2]}>>>{{}}{ptxt});"
            " print(mma.get_layoutC_TV()); printf(\"|\"); print(mma.get_layoutA_TV()); printf(\"|\");"
            " print(mma.get_layoutB_TV()); printf(\"|%d %d %d\", int(tile_size<0>(mma)), int(tile_size<1>(mma)),"
            " int(tile_size<2>(mma)));")


def scale_factor_snippet(cpp: str) -> str:
    """Shape_MNK and idesc_ of ``MMA_Traits<MMA_Traits<cpp>::MMA_ScaleFactor>``."""
    return (f"using S = typename MMA_Traits<{cpp}>::MMA_ScaleFactor; using T = MMA_Traits<S>; "
            "print(typename T::Shape_MNK{}); T t{}; printf(\"|%08x\", uint32_t(t.idesc_));")


def run(snippets: list[str], sm103: bool = False, **kw) -> list:
    from layoutalg.interop import cutecpp

    heads = cutecpp.DEFAULT_HEADERS + (SM103_HEADERS if sm103 else SM120_HEADERS)
    return cutecpp.run_snippets(snippets, headers=heads, prelude="" if sm103 else PRELUDE, chunk=60, jobs=1, **kw)


def _atoms(rec: dict) -> None:
    """CuTe's print of every SM120 and SM103 atom of the sweeps, and CuTe's refusals."""
    from layoutalg.nvidia.blackwell.sm103 import sm103_atom, sm103_atom_names
    from layoutalg.nvidia.blackwell.sm120 import sm120_atom, sm120_atom_names

    n120 = list(sm120_atom_names())
    n103 = list(sm103_atom_names())
    n103 += ["SM103::SM103_MXF4_ULTRA_SS_VS<e2m1,e2m1,float,ue8m0,128,64,32,K,K,Neg,One>",
             "SM103::SM103_MXF4_ULTRA_2x1SM_SS_VS<e2m1,e2m1,float,ue4m3,256,256,16,K,K,One,Neg>"]
    r120 = run([sm120_snippet(sm120_atom(n).cute_cpp) for n in n120] + [sm120_snippet(c) for c in ILLEGAL_SM120],
               expect_refusal=[False] * len(n120) + [True] * len(ILLEGAL_SM120), refusal_chunk=10, cache=False)
    r103 = run([sm103_snippet(sm103_atom(n).cute_cpp) for n in n103] + [sm103_snippet(c) for c in ILLEGAL_SM103],
               sm103=True, expect_refusal=[False] * len(n103) + [True] * len(ILLEGAL_SM103), refusal_chunk=10,
               cache=False)
    rec["format"] = {"sm120": "Shape_MNK|ThrID|ALayout|BLayout|CLayout|SFALayout|SFBLayout|ELayout ('-': none)",
                     "sm103": "Shape_MNK|ThrID|ALayout|BLayout|CLayout|idesc_ (32-bit hex)",
                     "tiled": "get_layoutC_TV|get_layoutA_TV|get_layoutB_TV|tile sizes",
                     "scale_factor_atom": "Shape_MNK|idesc_ of MMA_Traits<...>::MMA_ScaleFactor"}
    rec["sm120"] = {n: (r if r else None) for n, r in zip(n120, r120[: len(n120)])}
    rec["sm103"] = {n: (r if r else None) for n, r in zip(n103, r103[: len(n103)])}
    rec["refused"] = {c: (None if r else r.message[:300]) for c, r in
                      zip(ILLEGAL_SM120 + ILLEGAL_SM103, list(r120[len(n120):]) + list(r103[len(n103):]))}


def _tiled(rec: dict) -> None:
    """CuTe's make_tiled_mma of TILED_CASES."""
    s120 = [c for c in TILED_CASES if not c[0].startswith("SM103")]
    s103 = [c for c in TILED_CASES if c[0].startswith("SM103")]
    r = run([tiled_snippet(c) for c in s120], cache=False) + run([tiled_snippet(c) for c in s103], sm103=True, cache=False)
    rec["tiled"] = [{"atom": c[0], "atom_layout": list(c[1]), "permutation": None if c[2] is None else list(c[2]),
                     "printed": p if p else None} for c, p in zip(s120 + s103, r)]


def _scale_factor_atoms(rec: dict) -> None:
    """CuTe's MMA_ScaleFactor of a sample of SM103 atoms."""
    from layoutalg.nvidia.blackwell.sm103 import sm103_atom, sm103_atom_names

    names = list(sm103_atom_names())[::9] + ["SM103::SM103_MXF4_ULTRA_SS_VS<e2m1,e2m1,float,ue8m0,128,64,32,K,K,Neg,One>"]
    r = run([scale_factor_snippet(sm103_atom(n).cute_cpp) for n in names], sm103=True, cache=False)
    rec["scale_factor_atom"] = {n: (p if p else None) for n, p in zip(names, r)}


def record(recorder: OracleRecorder) -> dict:
    """The whole recording: the atoms, the refusals, the tiled MMAs and the SM103 scale-factor atoms."""
    rec = recorder.provenance("python tests/sm120_oracle.py --record (CuTe C++ 4.2 MMA_Traits<SM120_* / SM103_*> "
                              "compiled with g++ on the host, no GPU)")
    _atoms(rec)
    _tiled(rec)
    _scale_factor_atoms(rec)
    return rec


RECORDER = OracleRecorder("cute", "sm120_atoms", record, script="sm120_oracle",
                          json_options={"indent": 0, "sort_keys": True})

if __name__ == "__main__":  # pragma: no cover - the recorder
    sys.path.insert(0, str(HERE.parent))
    raise SystemExit(RECORDER.main())
