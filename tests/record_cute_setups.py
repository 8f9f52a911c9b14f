"""Record a CuTe kernel's setup as CuTe C++ 4.2 prints it (g++ on the host), for layoutalg.kernel.cute_prints.

``python tests/record_cute_setups.py`` writes tests/data/cute/kernel_setups.json: for each setup, the text a CuTe
user would paste -- ``print`` of the tiled MMA, of the tiled copies and of the shared-memory tensors, each after a
``name:`` line -- and CuTe's own answers: ``make_gmma_desc`` of every (64-row, one-instruction-K) k-block of the
wgmma operands in shared memory (hex words; on the host CuTe cannot read a shared address, so their start
address fields are 0 -- LBO, SBO, base offset and swizzle are CuTe's).
"""

from __future__ import annotations

import json
import pathlib
import re
import sys

DATA = pathlib.Path(__file__).parent / "data" / "cute" / "kernel_setups.json"


def _tensor(name: str, T: str, layout: str, addr: str = "0x2000") -> str:
    return (f'print("{name}: "); print(make_tensor(make_smem_ptr(reinterpret_cast<{T}*>({addr})), {layout}));'
            ' print("\\n");')


def _descs(name: str, T: str, layout: str, major: str, rows: int, kb: int, ktiles: int, block: int = 64) -> str:
    """make_gmma_desc of every (``block`` rows: 64 for A, the instruction's N for B) x kb slice of the tile."""
    return (f"{{ auto t = make_tensor(make_smem_ptr(reinterpret_cast<{T}*>(0x2000)), {layout});"
            f' print("desc {name}:"); for (int m = 0; m < {rows // block}; ++m) for (int k = 0; k < {ktiles}; ++k) {{'
            f" auto s = local_tile(t, make_shape(Int<{block}>{{}}, Int<{kb}>{{}}), make_coord(m, k));"
            f" auto d = SM90::GMMA::make_gmma_desc<SM90::GMMA::Major::{major}>(s);"
            ' printf(" %llx", (unsigned long long)d.desc_); } print("\\n"); }')


def setups() -> list[tuple[str, str]]:
    """(name, C++ body printing the setup)."""
    out = []
    # Hopper: wgmma SS, K-major A and B, 128B swizzle, cp.async G->S copy
    for T, tn, instr, n, bm, sw in (("half_t", "F16F16", "64x128x16", 128, 128, "SW128"),
                                    ("half_t", "F16F16", "64x64x16", 64, 64, "SW64"),
                                    ("bfloat16_t", "BF16BF16", "64x128x16", 128, 128, "SW32")):
        elems = {"SW128": 64, "SW64": 32, "SW32": 16}[sw]
        la = f"tile_to_shape(GMMA::Layout_K_{sw}_Atom<{T}>{{}}, Shape<_{bm},_{elems}>{{}})"
        lb = f"tile_to_shape(GMMA::Layout_K_{sw}_Atom<{T}>{{}}, Shape<_{n},_{elems}>{{}})"
        body = "\n".join([
            f"auto mma = make_tiled_mma(SM90_{instr}_F32{tn}_SS<GMMA::Major::K, GMMA::Major::K>{{}});",
            'print("tiled_mma:\\n"); print(mma); print("\\n");',
            f"auto cp = make_tiled_copy(Copy_Atom<SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>, {T}>{{}},"
            f" Layout<Shape<_{128 // (elems // 8)},_{elems // 8}>, Stride<_{elems // 8},_1>>{{}}, Layout<Shape<_1,_8>>{{}});",
            'print("g2s_copy:\\n"); print(cp); print("\\n");',
            _tensor("sA", T, la), _tensor("sB", T, lb),
            _descs("sA", T, la, "K", bm, 16, elems // 16), _descs("sB", T, lb, "K", n, 16, elems // 16, n),
        ])
        out.append((f"sm90_{T}_{instr}_{sw}", body))
    # Hopper: MN-major B
    lb = "tile_to_shape(GMMA::Layout_MN_SW128_Atom<half_t>{}, Shape<_128,_64>{})"
    la = "tile_to_shape(GMMA::Layout_K_SW128_Atom<half_t>{}, Shape<_64,_64>{})"
    out.append(("sm90_half_mn_b", "\n".join([
        "auto mma = make_tiled_mma(SM90_64x128x16_F32F16F16_SS<GMMA::Major::K, GMMA::Major::MN>{});",
        'print("tiled_mma:\\n"); print(mma); print("\\n");',
        _tensor("sA", "half_t", la), _tensor("sB", "half_t", lb),
        _descs("sA", "half_t", la, "K", 64, 16, 4), _descs("sB", "half_t", lb, "MN", 128, 16, 4, 128)])))
    # Ampere: ldmatrix from a swizzled and an unswizzled tile, cp.async in
    for name, layout in (("sm80_swizzled", "composition(Swizzle<3,3,3>{}, Layout<Shape<_128,_64>,Stride<_64,_1>>{})"),
                         ("sm80_plain", "Layout<Shape<_128,_64>,Stride<_64,_1>>{}")):
        out.append((name, "\n".join([
            "auto mma = make_tiled_mma(SM80_16x8x16_F32F16F16F32_TN{}, Layout<Shape<_2,_2,_1>>{}, Tile<_32,_32,_16>{});",
            'print("tiled_mma:\\n"); print(mma); print("\\n");',
            "auto ld = make_tiled_copy_A(Copy_Atom<SM75_U32x4_LDSM_N, half_t>{}, mma);",
            'print("s2r_copy_A:\\n"); print(ld); print("\\n");',
            "auto cp = make_tiled_copy(Copy_Atom<SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>, half_t>{},"
            " Layout<Shape<_16,_8>, Stride<_8,_1>>{}, Layout<Shape<_1,_8>>{});",
            'print("g2s_copy:\\n"); print(cp); print("\\n");',
            _tensor("sA", "half_t", layout)])))
    return out


def record() -> dict:
    from layoutalg.interop import cutecpp

    cases = setups()
    outs = cutecpp.run_snippets([b for _, b in cases], cache=False)
    bad = [(n, o) for (n, _), o in zip(cases, outs) if not o]
    if bad:
        raise SystemExit(f"CuTe refused {bad[0][0]}: {bad[0][1]}")
    recs = []
    for (name, _), o in zip(cases, outs):
        out = str(o)
        cut = out.find("desc ")
        text = (out if cut < 0 else out[:cut]).strip()
        # on the host CuTe cannot read a shared address (it prints an ERROR and uses start address 0): the words
        # hold LBO, SBO, base offset and swizzle
        descs = {}
        for part in (out[cut:].split("desc ")[1:] if cut >= 0 else []):
            key, rest = part.split(":", 1)
            descs[key] = [int(w, 16) for w in re.findall(r"(?<![0-9a-f])([0-9a-f]{16})(?![0-9a-f])", rest)]
        recs.append({"name": name, "print": text, "gmma_desc": descs})
    return {"source": "tests/record_cute_setups.py", "cute": cutecpp.cute_version(), "setups": recs}


if __name__ == "__main__":
    DATA.write_text(json.dumps(record(), indent=1) + "\n")
    print(f"wrote {DATA}", file=sys.stderr)
