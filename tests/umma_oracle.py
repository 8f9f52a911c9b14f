"""CuTe C++ 4.2 as the oracle of the sm100 UMMA atoms, smem atoms and descriptors (tests only).

Snippets print CuTe's own answers on the host (:mod:`layoutalg.interop.cutecpp`); the full sweeps are
recorded in ``tests/data/cute/umma_*.json`` by ``python tests/umma_oracle.py --record`` / ``--record-smem`` and
replayed by the default test run, which also compiles a small live sample.
"""

from __future__ import annotations

from layoutalg.interop import cutecpp
from oracle_recorder import OracleRecorder

HEADERS = cutecpp.DEFAULT_HEADERS + ("cute/atom/mma_traits_sm100.hpp",)


def atom_snippet(cpp: str) -> str:
    """Print Shape_MNK|ThrID|ALayout|BLayout|CLayout|idesc (hex) of MMA_Traits<cpp>.

    The instruction struct itself is instantiated too (``sizeof``): its static_asserts (legal M, N,
    majors) live there, not in the traits."""
    op = "" if cpp.startswith(("SM100_MMA_F8F6F4_SS,", "SM100_MMA_F8F6F4_2x1SM_SS,")) else f"(void)sizeof({cpp}); "
    return op + (
        f"using T = MMA_Traits<{cpp}>; print(typename T::Shape_MNK{{}}); printf(\"|\"); print(typename T::ThrID{{}});"
        " printf(\"|\"); print(typename T::ALayout{}); printf(\"|\"); print(typename T::BLayout{}); printf(\"|\");"
        " print(typename T::CLayout{}); printf(\"|\"); T t{}; printf(\"%08x\", uint32_t(t.idesc_));"
    )


def run(snippets: list[str], **kw) -> list:
    return cutecpp.run_snippets(snippets, headers=HEADERS, chunk=50, jobs=1, **kw)


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
    from layoutalg.nvidia.blackwell import umma

    split = umma.split_umma_name(name)
    assert split is not None, name
    fam, args = split
    f = umma.UMMA_FAMILIES[fam]
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


def compact(rec: dict) -> dict:
    """The atoms' prints with the layouts stored once: ``layouts`` (unique ``Shape|ThrID|A|B|C`` texts) and
    ``atoms`` {name: [index, idesc hex]} (CuTe's layouts depend on M, N, K and the CTA group only)."""
    if "layouts" in rec:
        return rec
    table: dict[str, int] = {}
    atoms = {}
    for n, p in rec["atoms"].items():
        if p is None:
            atoms[n] = None
            continue
        head, _, idesc = p.rpartition("|")
        atoms[n] = [table.setdefault(head, len(table)), idesc]
    out = dict(rec)
    out["format"] = "atoms: name -> [index into layouts (Shape_MNK|ThrID|ALayout|BLayout|CLayout), idesc hex]"
    out["layouts"] = list(table)
    out["atoms"] = atoms
    return out


def load_atoms() -> dict:
    """{name: 'Shape|ThrID|A|B|C|idesc'} of the recorded sweep, and the refusals: (atoms, refused)."""
    rec = ATOMS.data
    if "layouts" not in rec:
        return rec["atoms"], rec["refused"]
    lay = rec["layouts"]
    return {n: (None if v is None else f"{lay[v[0]]}|{v[1]}") for n, v in rec["atoms"].items()}, rec["refused"]


def record_atoms(rec: OracleRecorder) -> dict:
    """CuTe's print of every atom of umma_atom_names() (and CuTe's refusals): umma_atoms.json."""
    from layoutalg.nvidia.blackwell.umma import umma_atom, umma_atom_names

    names = list(umma_atom_names())
    sn = [atom_snippet(umma_atom(n).cute_cpp) for n in names]
    bad = [atom_snippet(_illegal_cpp(n)) for n in ILLEGAL_ATOMS]
    res = cutecpp.run_snippets(sn + bad, headers=HEADERS, chunk=50, jobs=1,
                               expect_refusal=[False] * len(sn) + [True] * len(bad), refusal_chunk=20)
    return compact({
        **rec.provenance("python tests/umma_oracle.py --record (CuTe C++ MMA_Traits<SM100_MMA_*> compiled with g++ on the host)"),
        "format": "Shape_MNK|ThrID|ALayout|BLayout|CLayout|idesc (32-bit hex, traits idesc_)",
        "atoms": {n: (r if r else None) for n, r in zip(names, res[: len(sn)])},
        "refused": {n: (None if r else r.message) for n, r in zip(ILLEGAL_ATOMS, res[len(sn):])},
    })


#: tiled MMAs of UMMA atoms: (atom, atom layout (M, N, K) shape, permutation entries or None)
TILED_CASES = [
    ("SM100_MMA_F16BF16_SS<bf16,bf16,float,128,256,K,K>", (1, 1, 1), None),
    ("SM100_MMA_F16BF16_SS<bf16,bf16,float,128,128,K,K>", (2, 1, 1), None),
    ("SM100_MMA_F16BF16_SS<bf16,bf16,float,64,64,K,MN>", (1, 2, 1), (128, 256, None)),
    ("SM100_MMA_F16BF16_2x1SM_SS<bf16,bf16,float,256,128,K,K>", (1, 2, 1), None),
    ("SM100_MMA_F16BF16_2x1SM_SS<bf16,bf16,float,256,256,K,K>", (2, 1, 1), (512, None, 32)),
    ("SM100_MMA_TF32_2x1SM_TS<tf32,tf32,float,128,64,K,K>", (1, 1, 1), (None, "(32,2):(2,1)", None)),
    ("SM100_MMA_S8_SS<s8,s8,int32_t,64,64,K,K>", (2, 2, 1), None),
    ("SM100_MMA_MXF4_2x1SM_SS<e2m1,e2m1,float,ue8m0,256,128,32,K,K>", (1, 1, 1), None),
    ("SM100_MMA_F8F6F4_SS_SPARSE<e4m3,e4m3,float,128,64,K,K>", (1, 2, 1), None),
    ("SM100_MMA_MXF8F6F4_2x1SM_SS<e4m3,e4m3,float,ue8m0,256,64,K,K>", (2, 1, 1), (None, None, 64)),
]


def _perm_cpp(p) -> str:
    from layoutalg import parse

    if p is None:
        return "Underscore{}"
    if isinstance(p, int):
        return f"Int<{p}>{{}}"
    L = parse(p)

    def tup(t, kind):
        return (f"{kind}<" + ",".join(tup(x, kind) for x in t) + ">") if isinstance(t, tuple) else f"Int<{t}>"

    return f"Layout<{tup(L.shape, 'Shape')},{tup(L.stride, 'Stride')}>{{}}"


def tiled_snippet(c: tuple) -> str:
    from layoutalg.nvidia.blackwell.umma import umma_atom

    name, al, perm = c
    at = umma_atom(name)
    ptxt = "" if perm is None else ", make_tile(" + ", ".join(_perm_cpp(p) for p in perm) + ")"
    return (f"auto mma = make_tiled_mma(MMA_Atom<MMA_Traits<{at.cute_cpp}>>{{}}, "
            f"Layout<Shape<Int<{al[0]}>,Int<{al[1]}>,Int<{al[2]}>>>{{}}{ptxt});"
            " print(mma.get_layoutC_TV()); printf(\"|\"); print(mma.get_layoutA_TV()); printf(\"|\");"
            " print(mma.get_layoutB_TV()); printf(\"|%d %d %d\", int(tile_size<0>(mma)), int(tile_size<1>(mma)),"
            " int(tile_size<2>(mma)));")


# ---------------------------------------------------------------------------------------------
# shared-memory atoms, tiles and descriptors
# ---------------------------------------------------------------------------------------------
SMEM_TYPES = {32: "tfloat32_t", 16: "half_t", 8: "uint8_t", 4: "float_e2m1_t"}
SMEM_ATOMS = ["Layout_MN_INTER_Atom", "Layout_MN_SW32_Atom", "Layout_MN_SW64_Atom", "Layout_MN_SW128_Atom",
              "Layout_MN_SW128_32B_Atom", "Layout_K_INTER_Atom", "Layout_K_SW32_Atom", "Layout_K_SW64_Atom",
              "Layout_K_SW128_Atom"]


def smem_cases() -> list[dict]:
    """(atom, bits, tile shape, order, instruction block) of the smem sweep."""
    from layoutalg.nvidia.blackwell.umma_smem import SMEM_ATOM_NAMES, smem_atom

    out = []
    for name in SMEM_ATOMS:
        major, mode = SMEM_ATOM_NAMES[name]
        for bits in SMEM_TYPES:
            a = smem_atom(major, mode, bits)
            r = int(a.inner[0].size()) if major == "MN" else int(a.inner[1].size())  # elements per swizzle row
            kb = 256 // bits  # an instruction reads 32 bytes of K
            if major == "K":
                shape, block = (128, max(2 * r, 2 * kb)), (64, kb)
            else:
                shape, block = (2 * r, 2 * kb), (2 * r, kb)
            for order in (None, (1, 0)):
                out.append(dict(atom=name, bits=bits, shape=shape, order=order, block=block))
    return out


def smem_snippet(c: dict) -> str:
    T = SMEM_TYPES[c["bits"]]
    mn, k = c["shape"]
    bm, bk = c["block"]
    major = "MN" if "_MN_" in c["atom"] else "K"
    order = "" if c["order"] is None else ", Step<_2,_1>{}"
    return f"""using T = {T};
auto atom = UMMA::{c['atom']}<T>{{}};
print(atom); printf("|");
auto sL = tile_to_shape(atom, Shape<Int<{mn}>,Int<{k}>>{{}}{order});
print(sL); printf("|");
alignas(1024) static uint8_t buf[{mn * k * c['bits'] // 8 + 1024}];
auto sT = make_tensor(make_smem_ptr<T>(static_cast<void*>(buf)), sL);
auto tD = tiled_divide(sT, make_tile(Int<{bm}>{{}}, Int<{bk}>{{}}));
auto d = make_tensor<UMMA::smem_desc<UMMA::Major::{major}>>(tD);
for (int i = 0; i < size<1>(d); ++i) for (int j = 0; j < size<2>(d); ++j)
  printf("%016llx ", (unsigned long long)uint64_t(d(0, i, j)));"""


#: tile_to_mma_shape cases: (atom, bits, mma tile shape ((MMA_M,MMA_K), M_MMAs, K_MMAs))
MMA_SHAPE_CASES = [
    ("Layout_K_SW128_Atom", 16, ((128, 16), 1, 4)),
    ("Layout_K_SW128_Atom", 16, ((64, 16), 2, 4)),
    ("Layout_MN_SW128_Atom", 16, ((128, 16), 1, 4)),
    ("Layout_K_SW64_Atom", 8, ((128, 32), 2, 2)),
    ("Layout_MN_SW64_Atom", 32, ((64, 8), 2, 4)),
    ("Layout_K_SW128_Atom", 4, ((128, 64), 1, 4)),
    ("Layout_MN_SW128_32B_Atom", 4, ((256, 64), 1, 2)),
    ("Layout_MN_SW128_32B_Atom", 16, ((128, 16), 1, 2)),
    ("Layout_K_INTER_Atom", 16, ((128, 16), 1, 2)),
    ("Layout_MN_INTER_Atom", 8, ((64, 32), 2, 2)),
]


def mma_shape_snippet(c: tuple) -> str:
    name, bits, ((m, k), a, b) = c
    return (f"print(UMMA::tile_to_mma_shape(UMMA::{name}<{SMEM_TYPES[bits]}>{{}}, "
            f"make_shape(make_shape(Int<{m}>{{}}, Int<{k}>{{}}), Int<{a}>{{}}, Int<{b}>{{}})));")


#: k-block words through a real TiledMMA: (atom name, operand, smem atom, tile (MN, K))
FRAGMENT_CASES = [
    ("SM100_MMA_F16BF16_SS<bf16,bf16,float,128,256,K,K>", "A", "Layout_K_SW128_Atom", (128, 64)),
    ("SM100_MMA_F16BF16_SS<bf16,bf16,float,128,256,K,K>", "B", "Layout_K_SW128_Atom", (256, 64)),
    ("SM100_MMA_F16BF16_SS<bf16,bf16,float,128,128,K,MN>", "B", "Layout_MN_SW128_Atom", (128, 64)),
    ("SM100_MMA_F16BF16_2x1SM_SS<bf16,bf16,float,256,256,K,K>", "A", "Layout_K_SW128_Atom", (256, 64)),
    ("SM100_MMA_F16BF16_2x1SM_SS<bf16,bf16,float,256,256,MN,K>", "A", "Layout_MN_SW64_Atom", (256, 64)),
    ("SM100_MMA_TF32_SS<tf32,tf32,float,64,64,MN,MN>", "A", "Layout_MN_SW32_Atom", (64, 32)),
    ("SM100_MMA_S8_SS<s8,s8,int32_t,128,128,K,K>", "B", "Layout_K_SW64_Atom", (128, 128)),
    ("SM100_MMA_F8F6F4_SS<e4m3,e4m3,float,128,128,K,MN>", "B", "Layout_MN_SW128_Atom", (128, 128)),
    ("SM100_MMA_MXF4_SS<e2m1,e2m1,float,ue8m0,128,128,32,K,K>", "A", "Layout_K_SW128_Atom", (128, 256)),
    ("SM100_MMA_MXF4_SS<e2m1,e2m1,float,ue8m0,128,128,32,K,K>", "B", "Layout_K_INTER_Atom", (128, 128)),
    ("SM100_MMA_F16BF16_SS_SPARSE<bf16,bf16,float,128,64,K,K>", "B", "Layout_K_SW128_Atom", (64, 128)),
    ("SM100_MMA_F16BF16_TS<bf16,bf16,float,128,64,K,MN>", "B", "Layout_MN_SW64_Atom", (64, 64)),
]


def fragment_snippet(c: tuple) -> str:
    from layoutalg.nvidia.blackwell.umma import cute_cpp_type, umma_atom

    name, op, smem, (mn, k) = c
    at = umma_atom(name)
    t = cute_cpp_type(at.a_type if op == "A" else at.b_type, at.kind)
    return f"""using T = {t};
auto mma = make_tiled_mma(MMA_Atom<MMA_Traits<{at.cute_cpp}>>{{}});
auto sL = tile_to_shape(UMMA::{smem}<T>{{}}, Shape<Int<{mn}>,Int<{k}>>{{}});
alignas(1024) static uint8_t buf[{mn * k} + 1024];
auto sT = make_tensor(make_smem_ptr<T>(static_cast<void*>(buf)), sL);
auto thr = mma.get_slice(0);
auto p = thr.partition_{op}(sT);
auto f = thr.make_fragment_{op}(p);
print(shape(f)); printf("|");
for (int i = 0; i < size<1>(f); ++i) for (int j = 0; j < size<2>(f); ++j)
  printf("%016llx ", (unsigned long long)uint64_t(f(0, i, j)));"""


def record_smem(rec: OracleRecorder) -> dict:
    """CuTe's smem atoms, tiles, tile_to_mma_shape and descriptor words: umma_smem.json."""
    cases = smem_cases()
    sn = [smem_snippet(c) for c in cases] + [mma_shape_snippet(c) for c in MMA_SHAPE_CASES]
    sn += [fragment_snippet(c) for c in FRAGMENT_CASES] + [tiled_snippet(c) for c in TILED_CASES]
    res = cutecpp.run_snippets(sn, headers=HEADERS, chunk=50, jobs=1)
    n1, n2 = len(cases), len(MMA_SHAPE_CASES)
    n3 = n1 + n2 + len(FRAGMENT_CASES)
    return {
        **rec.provenance("python tests/umma_oracle.py --record-smem (CuTe C++ UMMA smem atoms, tile_to_shape, tile_to_mma_shape, "
                       "make_tensor<UMMA::smem_desc<Major>> (make_umma_desc + DescriptorIterator) and "
                       "TiledMMA make_fragment_A/B words, compiled with g++ on the host; start field 0 on the host)"),
        "smem": [dict(c, printed=(r if r else None), error=(None if r else r.message)) for c, r in zip(cases, res[:n1])],
        "mma_shape": [dict(atom=c[0], bits=c[1], shape=c[2], printed=(r if r else None))
                      for c, r in zip(MMA_SHAPE_CASES, res[n1:n1 + n2])],
        "fragments": [dict(atom=c[0], operand=c[1], smem=c[2], tile=c[3], printed=(r if r else None),
                           error=(None if r else r.message)) for c, r in zip(FRAGMENT_CASES, res[n1 + n2:n3])],
        "tiled": [dict(atom=c[0], atom_layout=c[1], permutation=c[2], printed=(r if r else None),
                       error=(None if r else r.message)) for c, r in zip(TILED_CASES, res[n3:])],
    }


ATOMS = OracleRecorder("cute", "umma_atoms", record_atoms, script="umma_oracle",
                       json_options={"indent": 0, "sort_keys": True, "separators": (",", ":")})
SMEM = OracleRecorder("cute", "umma_smem", record_smem, script="umma_oracle", flag="--record-smem", json_options={"indent": 0})

if __name__ == "__main__":  # pragma: no cover - the recorder
    raise SystemExit(ATOMS.main(others=[SMEM]))
