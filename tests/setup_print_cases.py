"""A CuTe kernel's setup printed by CuTe C++ 4.2 (g++) and by the CuTe DSL: tiled MMAs, tiled copies,
tilers, and the k-block slices of swizzled shared-memory tiles (issue 29, part 5).

``python tests/setup_print_cases.py`` records tests/data/cute/setup_prints.json:

- ``cpp``: each snippet's print (``print(tiled_mma)``, ``print(tiled_copy)``, ``print(make_tile(..))``);
- ``sliced``: the print of ``local_tile`` of a swizzled GMMA tile and CuTe's element offset of every
  index, ``&k(i)`` from the tile's start (``0x2000``), in elements;
- ``dsl``: the CuTe DSL's prints of the same tiled MMA and tiled copy as the first and third ``cpp``.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import pathlib
import sys

DATA = pathlib.Path(__file__).parent / "data" / "cute" / "setup_prints.json"

CPP = [
    "print(make_tiled_mma(SM80_16x8x16_F32F16F16F32_TN{}, Layout<Shape<_2,_2,_1>>{}));",
    "print(make_tiled_mma(SM80_16x8x8_F16F16F16F16_TN{}, Layout<Shape<_2,_1,_1>>{}, Tile<_32,_32,_16>{}));",
    "print(make_tiled_copy(Copy_Atom<UniversalCopy<uint128_t>, half_t>{}, Layout<Shape<_32,_4>,Stride<_4,_1>>{},"
    " Layout<Shape<_1,_8>>{}));",
    "print(make_tiled_copy_A(Copy_Atom<SM75_U32x4_LDSM_N, half_t>{},"
    " make_tiled_mma(SM80_16x8x16_F32F16F16F32_TN{}, Layout<Shape<_2,_2,_1>>{})));",
    "print(make_tile(Layout<Shape<_4,_32>,Stride<_32,_1>>{}, Layout<_32,_1>{}));",
    "print(make_tiled_mma(SM90_64x64x16_F32F16F16_SS<GMMA::Major::K, GMMA::Major::K>{}));",
    "print(make_tiled_mma(SM100_MMA_F16BF16_SS<half_t,half_t,float,128,256,UMMA::Major::K,UMMA::Major::K>{}));",
    "print(make_tiled_mma(SM100_MMA_F16BF16_2x1SM_SS<half_t,half_t,float,256,128,UMMA::Major::K,UMMA::Major::MN>{}));",
    "print(make_tiled_mma(SM80_16x8x16_F32F16F16F32_TN{}, Layout<Shape<_2,_2,_1>>{}).get_slice(3));",
    "print(make_tmem_copy(SM100_TMEM_LOAD_32dp32b8x{}, make_tensor(make_tmem_ptr<float>(),"
    " Layout<Shape<_128,_64>,Stride<_65536,_1>>{})));",
]
HEADERS = ["cute/atom/mma_traits_sm100.hpp", "cute/atom/copy_traits_sm100.hpp"]
#: (GMMA atom, element type, tile shape, k-block shape, k-block coordinate)
SLICED = [("GMMA::Layout_K_SW64_Atom", "uint8_t", "_64,_128", "_64,_32", "0,1"),
          ("GMMA::Layout_K_SW128_Atom", "half_t", "_64,_64", "_64,_16", "0,1"),
          ("GMMA::Layout_MN_SW128_Atom", "half_t", "_64,_64", "_64,_16", "0,3"),
          ("GMMA::Layout_K_SW32_Atom", "float", "_32,_16", "_8,_8", "1,1"),
          ("GMMA::Layout_MN_SW64_Atom", "half_t", "_64,_32", "_32,_8", "1,2")]

DSL = '''import cutlass
import cutlass.cute as cute
from cutlass.cute.nvgpu import warp


@cute.jit
def run():
    op = warp.MmaF16BF16Op(cutlass.Float16, cutlass.Float32, (16, 8, 16))
    print(cute.make_tiled_mma(op, cute.make_layout((2, 2, 1))))
    atom = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), cutlass.Float16, num_bits_per_copy=128)
    print(cute.make_tiled_copy_tv(atom, cute.make_layout((32, 4), stride=(4, 1)), cute.make_layout((1, 8))))
'''


def sliced_snippet(atom: str, T: str, shape: str, kt: str, coord: str) -> str:
    return (f"using T = {T}; auto t = make_tensor(make_smem_ptr(reinterpret_cast<T*>(0x2000)),"
            f" tile_to_shape({atom}<T>{{}}, Shape<{shape}>{{}})); auto k = local_tile(t, Shape<{kt}>{{}},"
            f" make_coord({coord})); print(k); print(\"\\n\"); for (int i = 0; i < size(k); ++i) {{"
            " print(int(reinterpret_cast<uintptr_t>(&k(i)) - 0x2000) / int(sizeof(T))); print(\" \"); }")


def record() -> dict:
    from layoutalg.interop import cutecpp

    outs = cutecpp.run_snippets(CPP + [sliced_snippet(*c) for c in SLICED], cache=False,
                                headers=list(cutecpp.DEFAULT_HEADERS) + HEADERS)
    bad = [o for o in outs if not o]
    if bad:
        raise SystemExit(f"CuTe refused: {bad[0]}")
    cpp = [str(o).strip() for o in outs[:len(CPP)]]
    sliced = []
    for o in outs[len(CPP):]:
        head, offs = str(o).strip().split("\n")
        sliced.append({"print": head, "offsets": [int(x) for x in offs.split()]})
    return {"cute": cutecpp.cute_version(), "cpp": cpp, "sliced": sliced, "dsl": run_dsl()}


def run_dsl() -> list[str]:
    path = pathlib.Path("/tmp/layoutalg_setup_prints_dsl.py")
    path.write_text(DSL)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        mod.run()
    text = buf.getvalue()
    cut = text.index("Tiled Copy")
    return [text[:cut].strip(), text[cut:].strip()]


if __name__ == "__main__":
    DATA.write_text(json.dumps(record(), indent=1) + "\n")
    print(f"wrote {DATA}", file=sys.stderr)
