"""Every C++ spelling ``to_cute_cpp`` exports for a tcgen05 shared-memory tile compiles with CuTe 4.2's
``make_fragment_A/B`` (g++ on the host), and the descriptors CuTe makes from it are layoutalg's
(issue 29, part 5): the idiom (``UMMA::tile_to_mma_shape(UMMA::Layout_*_Atom<T>{}, ...)``), the spelled-out
type and the spelled-out expression, for CuTe's partitioned shapes ``((MMA_MN,MMA_K),rest_MN,rest_K[,PIPE])``.
"""

from __future__ import annotations

import pytest

from layoutalg.interop import cutecpp
from layoutalg.interop.cute import to_cute_cpp
from layoutalg.nvidia.blackwell.umma import umma_atom
from layoutalg.nvidia.blackwell.umma_smem import k_block_descriptors, smem_atom, smem_tile, tile_to_mma_shape

pytestmark = pytest.mark.skipif(cutecpp.available() is not None, reason=f"CuTe C++: {cutecpp.available()}")

#: (atom name, operand, major, swizzle, dtype, the tile's partitioned shape)
CASES = [
    ("SM100_MMA_F16BF16_SS<bf16,bf16,float,128,128,K,K>", "A", "K", 128, "bf16", ((128, 16), 1, 4)),
    ("SM100_MMA_F16BF16_SS<f16,f16,float,128,64,MN,MN>", "B", "MN", 64, "f16", ((64, 16), 2, 2)),
    ("SM100_MMA_F16BF16_SS<f16,f16,float,128,128,K,K>", "A", "K", 32, "f16", ((128, 16), 1, 2, 2)),
    ("SM100_MMA_TF32_SS<tf32,tf32,float,128,256,MN,MN>", "B", "MN", "128B_base32B", "tf32", ((256, 8), 1, 2)),
]


def _snippet(name: str, operand: str, spelling: str, rank: int) -> str:
    atom = umma_atom(name)
    at = "0, 0, k" + ", 0" * (rank - 3)  # the first pipeline stage
    return (f"auto mma = make_tiled_mma({atom.cute_cpp}{{}}); auto L = {spelling}; "
            f"auto s = make_tensor(make_smem_ptr(reinterpret_cast<typename decltype(mma)::ValType{operand}*>(0)), L); "
            f"auto f = mma.make_fragment_{operand}(s); "
            f"for (int k = 0; k < size<2>(f); ++k) {{ print(uint64_t(f({at}))); print(' '); }}")


def test_exports_compile_with_make_fragment_and_give_layoutalgs_descriptors():
    snippets, expect = [], []
    for name, operand, major, swizzle, dtype, shape in CASES:
        t = tile_to_mma_shape(smem_atom(major, swizzle, dtype), shape)
        c = to_cute_cpp(t, dtype)
        assert c.cute.startswith("UMMA::tile_to_mma_shape(UMMA::Layout_") and "smem_ptr_flag_bits" in c.type
        words = [kb.descriptor.encode() for kb in
                 k_block_descriptors(t, dtype, umma_atom(name), operand=operand)]
        for spelling in (c.cute, c.type + "{}", c.expr):
            snippets.append(_snippet(name, operand, spelling, len(shape)))
            expect.append(words)
    outs = cutecpp.run_snippets(snippets, headers=list(cutecpp.DEFAULT_HEADERS) + ["cute/atom/mma_traits_sm100.hpp"])
    for snip, out, words in zip(snippets, outs, expect):
        assert out, f"CuTe refused {snip}: {getattr(out, 'message', '')[:400]}"
        # CuTe says "ERROR: cast_smem_ptr_to_uint not supported" on the host (start address 0): the words follow
        got = [int(w) for w in str(out).split() if w.isdigit()]
        assert got == words, (snip, [hex(w) for w in got], [hex(w) for w in words])


def test_sm100_tiles_are_named_by_umma_atoms():
    t = smem_tile("K", 128, "bf16", (128, 64))
    assert to_cute_cpp(t, "bf16").cute.startswith("tile_to_shape(GMMA::")  # the default: the sm_90 name
    c = to_cute_cpp(t, "bf16", target="sm_100")
    assert c.cute.startswith("tile_to_shape(UMMA::Layout_K_SW128_Atom<") and c.type.startswith(
        "ComposedLayout<Swizzle<3,4,3>,smem_ptr_flag_bits<16>,")
