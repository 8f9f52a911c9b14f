"""The NVIDIA side against CuTe C++: the catalog's TV layouts printed exactly as CuTe's MMA_Traits print
them, the GMMA shared-memory atoms and their tiles, ``make_gmma_desc``'s fields for the wgmma tiles,
and the C++ that :func:`layoutalg.interop.cute.to_cute_cpp` exports (both spellings) compiled and
printed back. One batch of snippets for the whole module.
"""

from __future__ import annotations

import random
import re

import pytest

import cute_oracle as co
from oracle_recorder import SnippetRecorder
from layoutalg import Layout, parse
from layoutalg.composed import ComposedLayout
from layoutalg.interop import cutecpp
from layoutalg.interop.cute import CUTE_MMA_SYNC_ATOMS, CUTE_TYPES, to_cute_cpp
from layoutalg.nvidia.hopper import wgmma, wgmma_fragments
from layoutalg.nvidia.hopper.descriptor import MatrixDescriptor
from layoutalg.nvidia import atoms
from layoutalg.nvidia.ampere import mma
from layoutalg.nvidia.ampere.mma import fragment
from layoutalg.swizzle import Swizzle
from test_nvidia_mma_cute import HEADERS, SM80_ATOMS

pytestmark = pytest.mark.skipif(cutecpp.available() is not None, reason=str(cutecpp.available()))

#: where CuTe's own spelling of a catalog layout cannot be reproduced, and why (checked as functions)
NOT_TEXT = {
    ("SM80_16x8x128_S32U1U1S32_TN_XORPOPC", "A"): "CuTe's stride Stride<_512,_1>,Stride<Stride<_16,_8>>> is not "
    "congruent with its shape (a 1-tuple around the pair); layoutalg requires congruence",
    ("SM80_16x8x32_S32S4S4S32_TN", "B"): "CuTe's BLayout is not a bijection (tests/test_nvidia_mma_cute.py)",
    ("SM80_16x8x32_S32U4U4S32_TN", "B"): "the same BLayout as S4's: not a bijection",
}

WGMMA_N = sorted({int(e[0][4:].split("k")[0]) for e in wgmma_fragments.catalog() if e[2] == "D"})
A_REGS = {8: "tf32", 16: "bf16", 32: "e4m3"}  # wgmma A-from-registers fragments: K -> a dtype of that width
GMMA_DTYPES = list(CUTE_TYPES)
TILES = [(64, 64), (128, 64), (64, 128), (128, 128), (256, 64)]
SWIZZLE_NAMES = {0: "INTER", 32: "SW32", 64: "SW64", 128: "SW128"}


def _gmma_desc_snippet(major: str, swizzle: int, dtype: str, shape: tuple[int, int]) -> str:
    """CuTe's make_gmma_desc of every (64 x one-instruction-K) slice of the tile, as hex words."""
    T = CUTE_TYPES[dtype]
    kb = 256 // wgmma.dtype_bits(dtype)  # 32 bytes of K per instruction
    atom = f"GMMA::Layout_{major}_{SWIZZLE_NAMES[swizzle]}_Atom<{T}>{{}}"
    return "\n".join([
        f"alignas(1024) static {T} buf[{shape[0] * shape[1]}];",
        f"auto t = make_tensor(make_smem_ptr(buf), tile_to_shape({atom}, make_shape(Int<{shape[0]}>{{}}, Int<{shape[1]}>{{}})));",
        f"for (int k = 0; k < {shape[1] // kb}; ++k) {{",
        f"  auto s = local_tile(t, make_shape(Int<64>{{}}, Int<{kb}>{{}}), make_coord(0, k));",
        f"  auto d = SM90::GMMA::make_gmma_desc<SM90::GMMA::Major::{major}>(s);",
        '  printf(" D=%llx", (unsigned long long)d.desc_);',
        "}",
    ])


def _catalog_exports() -> list[tuple[str, object, object]]:
    """(key, fragment, to_cute_cpp of it) for every mma.sync / wgmma catalog fragment that names a CuTe atom."""
    out = []
    for e in mma.catalog():
        if e.operand not in "ABC" or e.stype or e.sparse or e.scale_vec:
            continue
        kw = {k: v for k, v in (("alayout", e.alayout), ("blayout", e.blayout), ("ctype", e.ctype), ("kind", e.kind)) if v}
        f = fragment(e.shape, e.dtype, e.operand, **kw)
        c = to_cute_cpp(f, dtype=e.dtype if e.operand == "C" else None)
        if c.atom is not None:
            out.append((f"atomexport|{e.shape}|{e.dtype}|{e.operand}|{sorted(kw.items())}", f, c))
    for entry in wgmma_fragments.catalog():
        shape, dtype, op = entry[:3]
        f = wgmma_fragments.fragment(*entry)
        dtype = f.dtype  # the key names the fragment's element type (the accumulator of D), as before
        for mult in ([None] if op == "A" else ["f16", "bf16", "tf32", "e4m3", "e5m2", "s8", "u8"]):
            c = to_cute_cpp(f, dtype=mult)
            if c.atom is not None:
                out.append((f"atomexport|{shape}|{dtype}|{op}|{mult}", f, c))
    return out


def _cases() -> dict[str, str]:
    """name -> snippet."""
    out: dict[str, str] = {}
    for key, _f, c in _catalog_exports():
        out[key] = f"print({c.cute});"
    # every CuTe name the catalog could produce: those in CUTE_MMA_SYNC_ATOMS must compile, the rest not
    for name in atoms.mma_atom_names(include_wgmma=False):
        if "_KIND_" not in name:
            out[f"name|{name}"] = f"print(typename MMA_Traits<{name}>::ALayout{{}});"
    for trait, *_ in SM80_ATOMS:
        for op in "ABC":
            out[f"mma|{trait}|{op}"] = f"print(typename MMA_Traits<{trait}>::{op}Layout{{}});"
    for n in WGMMA_N:
        out[f"wgmma-D|{n}"] = f"print(SM90::GMMA::CLayout_64xN<{n}>{{}});"
    for k in A_REGS:
        out[f"wgmma-A|{k}"] = f"print(SM90::GMMA::ALayout_64x{k}{{}});"
    for dtype in GMMA_DTYPES:
        for name in wgmma.ATOM_NAMES:
            out[f"atom|{name}|{dtype}"] = f"print(GMMA::{name}<{CUTE_TYPES[dtype]}>{{}});"
    for dtype in GMMA_DTYPES:
        for major in ("K", "MN"):
            if major == "MN" and wgmma.dtype_bits(dtype) != 16:
                continue  # wgmma reads MN-major operands of 16-bit types only
            for sw in (0, 32, 64, 128):
                for shape in TILES:
                    try:
                        t = wgmma.tile(major, sw, dtype, shape)
                    except Exception:  # noqa: BLE001 - a shape the atom does not divide
                        continue
                    c = to_cute_cpp(t, dtype=dtype)
                    assert c.cute is not None, (major, sw, dtype, shape)
                    out[f"tile|{major}|{sw}|{dtype}|{shape}"] = f"print({c.cute});"
                    if shape in ((64, 64), (128, 128)):
                        out[f"desc|{major}|{sw}|{dtype}|{shape}"] = _gmma_desc_snippet(major, sw, dtype, shape)
    # the exported spellings of random layouts: the value and the type print back as the layout
    r = random.Random(11)
    for k in range(300):
        L = co.rand_layout(r) if k % 2 else co.rand_compact(r)
        if k % 5 == 0:
            L = ComposedLayout(Swizzle(r.randint(1, 3), r.randint(0, 3), 3), r.choice([0, 8]), L)
        c = to_cute_cpp(L)
        out[f"export-expr|{k}|{L}"] = f"print({c.expr});"
        out[f"export-type|{k}|{L}"] = f"print({c.type}{{}});"
    return out


REC = SnippetRecorder("cute_nvidia", lambda: [(list(_cases().values()), {"headers": HEADERS, "chunk": 150})],
                      script="test_cute_nvidia")


@pytest.fixture(scope="module")
def printed() -> dict[str, str]:
    cases = _cases()
    names = list(cases)
    res = REC.run_snippets([cases[n] for n in names], headers=HEADERS, chunk=150)
    bad = {n: r for n, r in zip(names, res) if isinstance(r, cutecpp.CompileFailure) and not n.startswith("name|")}
    assert not bad, f"CuTe refused {len(bad)} snippets, e.g. {next(iter(bad.items()))}"
    return dict(zip(names, res))


def _text(s: str) -> str:
    return co.normalize(s)


def _gmma_value(text: str):
    """CuTe's GMMA atom text -> layoutalg: ``Sw<B,4,3> o smem_ptr[Nb](unset) o L`` swizzles the byte
    address of an N-bit element pointer; parse reads it as the same swizzle in element units."""
    assert "smem_ptr[" in text, text
    return parse(text)


def test_mma_sync_atoms_print_identically(printed):
    checked = 0
    for trait, shape, dtype, ctype in SM80_ATOMS:
        for op in "ABC":
            ours = fragment(shape, dtype, op, ctype=ctype).layout
            theirs = printed[f"mma|{trait}|{op}"]
            if (trait, op) in NOT_TEXT:
                continue
            assert _text(theirs) == str(ours), (trait, op, theirs, str(ours))
            checked += 1
    assert checked >= 70


def test_wgmma_fragments_print_identically(printed):
    for n in WGMMA_N:
        ours = wgmma_fragments.fragment(f"m64n{n}k16", "f16", "D").layout
        assert _text(printed[f"wgmma-D|{n}"]) == str(ours), n
    for k, dtype in A_REGS.items():
        ours = wgmma_fragments.fragment(f"m64n8k{k}", dtype, "A").layout
        assert _text(printed[f"wgmma-A|{k}"]) == str(ours), k


def test_gmma_atoms_equal_cute(printed):
    """Every GMMA atom x type: CuTe's inner layout prints identically; its swizzle on byte addresses
    (smem_ptr flag) is the library's element-unit swizzle (docs/architecture.md)."""
    for dtype in GMMA_DTYPES:
        for name, (major, sw) in wgmma.ATOM_NAMES.items():
            theirs = printed[f"atom|{name}|{dtype}"]
            ours = wgmma.atom(major, sw, dtype)
            assert _gmma_value(theirs) == ours, (name, dtype, theirs, str(ours))
            assert _text(theirs).split(" o ")[-1] == str(ours.inner)


def test_gmma_tiles_equal_cute(printed):
    n = 0
    for key, theirs in printed.items():
        if not key.startswith("tile|"):
            continue
        _, major, sw, dtype, shape = key.split("|")
        ours = wgmma.tile(major, int(sw), dtype, eval(shape))  # noqa: S307 - our own key
        assert _gmma_value(theirs) == ours, (key, theirs, str(ours))
        n += 1
    assert n >= 60


def test_make_gmma_desc_fields_equal_the_derivation(printed):
    """LBO, SBO, swizzle mode and base offset of every k-block: CuTe's make_gmma_desc (start address
    0 on the host) against k_block_descriptors."""
    n = 0
    for key, text in printed.items():
        if not key.startswith("desc|"):
            continue
        _, major, sw, dtype, shape = key.split("|")
        t = wgmma.tile(major, int(sw), dtype, eval(shape))  # noqa: S307 - our own key
        words = [int(w, 16) for w in re.findall(r"D=([0-9a-f]+)", text)]
        kb = 256 // wgmma.dtype_bits(dtype)
        ours = wgmma.k_block_descriptors(t, dtype, f"m64n8k{kb}", operand="A", mn_block=0)  # CuTe: MN block 0
        assert len(ours) == len(words), key
        for k, (w, mine) in enumerate(zip(words, ours)):
            theirs = MatrixDescriptor.decode(w)
            d = mine.descriptor
            got = (theirs.leading_byte_offset, theirs.stride_byte_offset, theirs.swizzle, theirs.base_offset)
            want = (d.leading_byte_offset, d.stride_byte_offset, d.swizzle, d.base_offset)
            assert got == want, (key, k, got, want)
            n += 1
    assert n >= 50


def test_exported_cpp_prints_back(printed):
    """to_cute_cpp's expression and type, compiled and printed by CuTe, parse back to the layout."""
    n = 0
    for key, theirs in printed.items():
        if not key.startswith("export-"):
            continue
        text = key.split("|", 2)[2]
        assert _text(theirs) == co.normalize(text), (key, theirs)
        assert parse(_text(theirs)) == parse(text)
        n += 1
    assert n == 600


def test_wgmma_tile_export_spells_the_atom():
    c = to_cute_cpp(wgmma.tile("MN", 64, "f16", (128, 64)))
    assert c.cute == "tile_to_shape(GMMA::Layout_MN_SW64_Atom<half_t>{}, make_shape(Int<128>{}, Int<64>{}))"
    assert to_cute_cpp(Layout((8, 64), (64, 1))).cute is None


def test_cute_mma_sync_atom_set_is_exact(printed):
    """CUTE_MMA_SYNC_ATOMS holds exactly the catalog-derived names that CuTe defines."""
    compiled = {k.split("|", 1)[1] for k, v in printed.items() if k.startswith("name|") and not isinstance(v, cutecpp.CompileFailure)}
    refused = {k.split("|", 1)[1] for k, v in printed.items() if k.startswith("name|") and isinstance(v, cutecpp.CompileFailure)}
    assert compiled == CUTE_MMA_SYNC_ATOMS
    assert refused and not refused & CUTE_MMA_SYNC_ATOMS


def test_exported_atoms_print_the_fragments(printed):
    """A catalog fragment's exported atom, compiled: CuTe prints the fragment's own TV layout (a Volta
    quadpair atom: the fragment's first computation, as nvidia.atoms cuts it)."""
    n, names = 0, set()
    for key, f, c in _catalog_exports():
        theirs = _text(printed[key])
        bare = c.atom.split("<")[0]
        names.add(bare)
        if bare.startswith("SM70_"):
            op = key.split("|")[3]
            a = atoms.mma_atom(bare)
            want = str({"A": a.layout_a_tv, "B": a.layout_b_tv, "C": a.layout_c_tv}[op])
        else:
            want = str(f.layout)
        if (bare, key.split("|")[3]) in NOT_TEXT:
            continue
        assert theirs == want, (key, c.atom, theirs, want)
        n += 1
    assert n >= 150
    assert {x for x in names if x.startswith("SM90_64x")} and len(names) >= 60


if __name__ == "__main__":  # pragma: no cover - a recording tool
    raise SystemExit(REC.main())
