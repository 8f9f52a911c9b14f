"""CuTe C++ 4.2 as the oracle of the sm100 UMMA atoms, smem atoms and descriptors (tests only).

Snippets print CuTe's own answers on the host (:mod:`layoutalg.interop.cutecpp`); the full sweeps are
recorded in ``tests/data/cute/umma_*.json`` by ``python tests/umma_oracle.py`` (see ``record``) and
replayed by the default test run, which also compiles a small live sample.
"""

from __future__ import annotations

import json
import pathlib
import sys

from layoutalg.interop import cutecpp

HEADERS = cutecpp.DEFAULT_HEADERS + ("cute/atom/mma_traits_sm100.hpp",)
DATA = pathlib.Path(__file__).parent / "data" / "cute"


def atom_snippet(cpp: str) -> str:
    """Print Shape_MNK|ThrID|ALayout|BLayout|CLayout|idesc (hex) of MMA_Traits<cpp>."""
    return (
        f"using T = MMA_Traits<{cpp}>; print(typename T::Shape_MNK{{}}); printf(\"|\"); print(typename T::ThrID{{}});"
        " printf(\"|\"); print(typename T::ALayout{}); printf(\"|\"); print(typename T::BLayout{}); printf(\"|\");"
        " print(typename T::CLayout{}); printf(\"|\"); T t{}; printf(\"%08x\", uint32_t(t.idesc_));"
    )


def run(snippets: list[str], **kw) -> list:
    return cutecpp.run_snippets(snippets, headers=HEADERS, chunk=50, jobs=1, **kw)


def available() -> bool:
    return cutecpp.available() is None


#: shapes CuTe must refuse (static_assert), with the rule layoutalg names
ILLEGAL_ATOMS = [
    "SM100_MMA_F16BF16_SS<bf16,bf16,float,96,128,K,K>",
    "SM100_MMA_F16BF16_SS<bf16,bf16,float,128,12,K,K>",
    "SM100_MMA_F16BF16_2x1SM_SS<bf16,bf16,float,256,24,K,K>",
    "SM100_MMA_F16BF16_TS<bf16,bf16,float,128,24,K,K>",
    "SM100_MMA_F16BF16_TS<bf16,bf16,float,128,64,MN,K>",
    "SM100_MMA_TF32_2x1SM_TS<tf32,tf32,float,256,48,K,K>",
    "SM100_MMA_S8_SS<s8,s8,int32_t,128,24,K,K>",
    "SM100_MMA_S8_2x1SM_SS<s8,s8,int32_t,256,48,K,K>",
    "SM100_MMA_F8F6F4_SS<e4m3,e4m3,float,128,24,K,MN>",
    "SM100_MMA_F8F6F4_2x1SM_SS<e4m3,e4m3,float,256,16,K,MN>",
    "SM100_MMA_MXF8F6F4_SS<e4m3,e4m3,float,ue8m0,64,128,K,K>",
    "SM100_MMA_MXF8F6F4_2x1SM_SS<e4m3,e4m3,float,ue8m0,128,128,K,K>",
    "SM100_MMA_MXF4_SS<e2m1,e2m1,float,ue4m3,128,128,32,K,K>",
    "SM100_MMA_MXF4_SS<e2m1,e2m1,float,ue8m0,64,128,32,K,K>",
]


def _illegal_cpp(name: str) -> str:
    """The C++ of an atom layoutalg refuses: its spelling with the checks skipped."""
    from layoutalg.nvidia import umma

    m = umma._NAME_RE.match(name)
    f = umma.UMMA_FAMILIES[m.group("fam")]
    args = [x.strip() for x in m.group("args").split(",")]
    need = ["a", "b", "c"] + (["sf"] if f.block_scaled else []) + ["M", "N"] + (["vs"] if f.vs else []) + ["am", "bm"]
    v = dict(zip(need, args))
    kind = f.kind
    types = [umma.cute_cpp_type(v[k], kind) for k in ("a", "b", "c")] + ([umma.cute_cpp_type(v["sf"], kind)] if f.block_scaled else [])
    maj = {"K": "UMMA::Major::K", "MN": "UMMA::Major::MN"}
    if f.name in ("F8F6F4_SS", "F8F6F4_2x1SM_SS"):
        return (f"SM100_MMA_{f.name}, {', '.join(types)}, C<{v['M']}>, C<{v['N']}>, integral_constant<UMMA::Major, "
                f"{maj[v['am']]}>, integral_constant<UMMA::Major, {maj[v['bm']]}>, integral_constant<UMMA::ScaleIn, "
                "UMMA::ScaleIn::One>, integral_constant<UMMA::ScaleIn, UMMA::ScaleIn::One>")
    rest = [v["M"], v["N"]] + ([v["vs"]] if f.vs else []) + [maj[v["am"]], maj[v["bm"]]]
    return f"SM100_MMA_{f.name}<{', '.join(types + rest)}>"


def record_atoms() -> None:
    """Record CuTe's print of every atom of umma_atom_names() (and CuTe's refusals) in umma_atoms.json."""
    import datetime

    from layoutalg.nvidia.umma import umma_atom, umma_atom_names

    names = list(umma_atom_names())
    sn = [atom_snippet(umma_atom(n).cute_cpp) for n in names]
    bad = [atom_snippet(_illegal_cpp(n)) for n in ILLEGAL_ATOMS]
    res = cutecpp.run_snippets(sn + bad, headers=HEADERS, chunk=50, jobs=1,
                               expect_refusal=[False] * len(sn) + [True] * len(bad), refusal_chunk=20)
    out = {
        "produced_by": "python tests/umma_oracle.py atoms (CuTe C++ MMA_Traits<SM100_MMA_*> compiled with g++ on the host)",
        "produced_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "cute_version": cutecpp.cute_version(),
        "format": "Shape_MNK|ThrID|ALayout|BLayout|CLayout|idesc (32-bit hex, traits idesc_)",
        "atoms": {n: (r if r else None) for n, r in zip(names, res[: len(sn)])},
        "refused": {n: (None if r else r.message) for n, r in zip(ILLEGAL_ATOMS, res[len(sn):])},
    }
    DATA.mkdir(parents=True, exist_ok=True)
    (DATA / "umma_atoms.json").write_text(json.dumps(out, indent=0, sort_keys=True) + "\n")


if __name__ == "__main__":  # pragma: no cover - the recorder
    sys.path.insert(0, str(pathlib.Path(__file__).parent.parent))
    what = sys.argv[1:] or ["atoms"]
    if "atoms" in what:
        record_atoms()
