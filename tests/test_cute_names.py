"""Names as CuTe spells them, checked against CuTe C++ 4.2 compiled on the host (one batch of snippets).

* every CuTe C++ type name :mod:`layoutalg.nvidia.common.dtypes` knows has CuTe's ``sizeof_bits``;
* ``wgmma.tile(..., order=(2, 1))`` is CuTe's ``tile_to_shape(GMMA atom, shape, Step<_2,_1>{})``
  (and the default order CuTe's default), for every GMMA atom type, both majors, every swizzle;
* ``copy_atom(name, T)`` is refused exactly where CuTe's ``Copy_Atom<name, T>`` fails to compile, and
  the widths its error lists are exactly those CuTe accepts.
"""

from __future__ import annotations

import pytest

from oracle_recorder import SnippetRecorder
from layoutalg import parse
from layoutalg.errors import LayoutError
from layoutalg.interop import cutecpp
from layoutalg.interop.cute import CUTE_TYPES, to_cute_cpp
from layoutalg.nvidia import atoms
from layoutalg.nvidia.hopper import wgmma
from layoutalg.nvidia.common.dtypes import CUTE_NAMES, DTYPE_BITS, dtype_name

pytestmark = pytest.mark.skipif(cutecpp.available() is not None, reason=str(cutecpp.available()))

HEADERS = cutecpp.DEFAULT_HEADERS + ("cute/atom/copy_traits_sm75.hpp", "cute/atom/copy_traits_sm80.hpp",
                                     "cute/atom/copy_traits_sm90.hpp", "cutlass/numeric_types.h",
                                     "cutlass/float8.h", "cutlass/float_subbyte.h")
TILE_SHAPES = [(64, 64), (128, 128), (256, 64)]
#: (CuTe copy op, value types): which of them compile is what copy_atom must predict
COPIES = ["SM75_U32x4_LDSM_N", "SM75_U32x1_LDSM_N", "SM75_U16x8_LDSM_T", "SM90_U32x2_STSM_N",
          "UniversalCopy<uint32_t>", "UniversalCopy<uint128_t>", "SM80_CP_ASYNC_CACHEALWAYS<uint64_t>"]
VALUE_TYPES = {"uint8_t": 8, "half_t": 16, "float": 32, "double": 64}
#: where CuTe compiles a Copy_Atom that cannot do what it says, and layoutalg refuses it (a named difference)
CUTE_ACCEPTS_WRONGLY = {
    ("UniversalCopy<uint32_t>", "double"): "a 32-bit copy cannot move a 64-bit value: CuTe's recast_layout rounds "
    "32/64 bits up to one value (ValLayoutSrc (1,1)), and the copy would move half of each double",
}


def _cases() -> tuple[dict[str, str], dict[str, bool]]:
    out: dict[str, str] = {}
    refuse: dict[str, bool] = {}
    for t, cute in CUTE_NAMES.items():
        ns = "" if cute in ("float", "double") or cute.endswith("int8_t") or cute.endswith("int16_t") \
            or cute.endswith("int32_t") or cute.endswith("int64_t") else "cutlass::"
        out[f"bits|{t}"] = f'printf("%d", int(sizeof_bits_v<{ns}{cute}>));'
    for dtype in CUTE_TYPES:
        for name, (major, sw) in wgmma.ATOM_NAMES.items():
            if major == "MN" and wgmma.dtype_bits(dtype) != 16:
                continue
            for shape in TILE_SHAPES:
                try:
                    t = wgmma.tile(major, sw, dtype, shape, order=(2, 1))
                except LayoutError:
                    continue
                atom_text = f"GMMA::{name}<{CUTE_TYPES[dtype]}>{{}}"
                out[f"tile|{major}|{sw}|{dtype}|{shape[0]}|{shape[1]}"] = (
                    f"print(tile_to_shape({atom_text}, make_shape(Int<{shape[0]}>{{}}, Int<{shape[1]}>{{}}), "
                    "Step<_2,_1>{}));")
                # what to_cute_cpp writes for it must be CuTe's spelling of the same layout
                out[f"export|{major}|{sw}|{dtype}|{shape[0]}|{shape[1]}"] = f"print({to_cute_cpp(t, dtype).cute});"
    for op in COPIES:
        for vt, bits in VALUE_TYPES.items():
            key = f"copy|{op}|{vt}"
            out[key] = f"Copy_Atom<{op}, {vt}> a; print(size(typename Copy_Atom<{op}, {vt}>::ValLayoutSrc{{}}));"
            try:
                atoms.copy_atom(op, bits)
                refuse[key] = False
            except LayoutError:
                refuse[key] = True
    return out, refuse


def _batch() -> tuple[list[str], list[str], dict]:
    cases, refuse = _cases()
    names = list(cases)
    return names, [cases[n] for n in names], {"headers": HEADERS, "chunk": 200,
                                              "expect_refusal": [refuse.get(n, False) for n in names]}


REC = SnippetRecorder("cute_names", lambda: [_batch()[1:]], script="test_cute_names")


@pytest.fixture(scope="module")
def printed() -> dict[str, object]:
    cases, refuse = _cases()
    names = list(cases)
    res = REC.run_snippets([cases[n] for n in names], headers=HEADERS, chunk=200,
                               expect_refusal=[refuse.get(n, False) for n in names])
    return dict(zip(names, res))


def test_cute_type_names_have_cutes_sizeof_bits(printed) -> None:
    n = 0
    for key, text in printed.items():
        if key.startswith("bits|"):
            t = key.split("|")[1]
            assert text, (key, text)
            assert int(str(text).strip()) == DTYPE_BITS[t], (t, text)
            assert dtype_name(CUTE_NAMES[t]) == t or CUTE_NAMES[t] in ("uint8_t", "uint16_t", "uint32_t", "uint64_t")
            assert dtype_name("cutlass::" + CUTE_NAMES[t]) == dtype_name(CUTE_NAMES[t])
            n += 1
    assert n == len(CUTE_NAMES)


def test_wgmma_tile_order_is_cutes_tile_to_shape_order(printed) -> None:
    n = 0
    for key, text in printed.items():
        if key.startswith(("tile|", "export|")):
            _, major, sw, dtype, m, k = key.split("|")
            ours = wgmma.tile(major, int(sw), dtype, (int(m), int(k)), order=(2, 1))
            assert text, (key, text)
            assert parse(str(text)) == ours, (key, text, str(ours))
            n += 1
    assert n >= 60
    # the order matters (else the check above could not fail): K first differs from MN first
    assert wgmma.tile("K", 128, "f16", (128, 128), order=(2, 1)) != wgmma.tile("K", 128, "f16", (128, 128))
    assert wgmma.tile("K", 128, "f16", (128, 128), order="left") == wgmma.tile("K", 128, "f16", (128, 128))
    assert wgmma.tile("K", 128, "f16", (128, 128), order="right") == wgmma.tile("K", 128, "f16", (128, 128), order=(2, 1))


def test_copy_atom_refuses_exactly_where_cute_does(printed) -> None:
    checked = refused = 0
    for op in COPIES:
        fits_cute = []
        for vt, bits in VALUE_TYPES.items():
            r = printed[f"copy|{op}|{vt}"]
            ok = not isinstance(r, cutecpp.CompileFailure)
            try:
                a = atoms.copy_atom(op, bits)
                ours = True
                assert int(str(r).strip().lstrip("_")) == a.val_layout_src.size(), (op, vt, r)
            except LayoutError as e:
                ours = False
                msg = str(e)
            if (op, vt) in CUTE_ACCEPTS_WRONGLY:
                assert ok and not ours, (op, vt, r)  # still a difference: else drop it from the list
                ok = False
            assert ours == ok, (op, vt, r)
            checked += 1
            refused += not ok
            if ok:
                fits_cute.append(bits)
        if len(fits_cute) < len(VALUE_TYPES):
            listed = msg.split("the value widths that fit: ")[1].split(" bits")[0]
            widths = [int(w) for w in listed.split(", ")]
            assert [w for w in widths if w in VALUE_TYPES.values()] == fits_cute, (op, msg)
    assert checked == len(COPIES) * len(VALUE_TYPES) and refused >= 4


if __name__ == "__main__":  # pragma: no cover - a recording tool
    raise SystemExit(REC.main())
