"""The Ampere-era atoms (and the older ones CuTe keeps): ``mma.sync`` / ``mma.sp``, ``ldmatrix``, ``cp.async``.

Registered into :mod:`layoutalg.registry` when this module is imported (vendor ``"nvidia"``):

* ``mma.sync`` (arch ``sm80``): CuTe's ``SM80_16x8x16_F32F16F16F32_TN``, ``SM70_8x8x4_*`` (a Volta
  quadpair), ``SM75_*``, ``SM89_*`` (``e4m3`` / ``e5m2``), the ``kind::`` forms of sm_120
  (``..._KIND_F8F6F4``) and layoutalg's ``SM80_SPARSE_*`` (``mma.sp``). An atom's A/B/C TV
  layouts are :func:`layoutalg.nvidia.ampere.mma.fragment`'s (proven against the PTX formulas);
  ``mma.m8n8k4`` ``.f16`` is cut down to one *quadpair* (lanes ``0-3, 16-19``, CuTe's
  ``SM70_QuadPair`` thread ids);
* ``ldmatrix`` (``SM75_U32x{1,2,4}_LDSM_N``, ``SM75_U16x{2,4,8}_LDSM_T``), from
  :func:`layoutalg.nvidia.ampere.ldmatrix.fragment` and :func:`~layoutalg.nvidia.ampere.ldmatrix.address_lanes`,
  re-indexed to CuTe's bit numbering (:func:`ldsm_bit_layouts`; Hopper's ``stmatrix`` reuses them);
* ``cp.async`` (``SM80_CP_ASYNC_CACHEALWAYS<uint32_t|uint64_t|uint128_t>``,
  ``SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>``) and ``UniversalCopy<uintN_t>`` (arch ``generic``):
  one-thread atoms moving one N-bit vector.

    >>> str(sync_atom("SM80_16x8x16_F32F16F16F32_TN").layout_a_tv)
    '((4,8),(2,2,2)):((32,1),(16,8,128))'
    >>> cute_mma_name("m16n8k16", "bf16")
    'SM80_16x8x16_F32BF16BF16F32_TN'
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

from ...algebra import coalesce, composition, right_inverse
from ...errors import LayoutError, guarded
from ...layout import Layout, make_layout
from ...registry import AtomFamily, close_names, register
from ...tiled import CopyAtom, MMAAtom
from ..common.atom_types import (
    PTX_TO_NAME,
    UINT_BITS,
    copy_family_builder,
    normalise_copy_name,
    sm_number,
    split_types,
    tuple_scale,
)
from ..common.dtypes import dtype_name
from ..common.fragment import parse_mnk
from . import ldmatrix as _ldm
from . import mma as _mma

__all__ = [
    "cute_mma_name",
    "sync_atom",
    "sync_atom_names",
    "is_sync_name",
    "ldsm_bit_layouts",
    "ldsm_matrices",
    "ldsm_copy_atom",
    "ldsm_names",
    "cp_async_names",
    "universal_copy_names",
    "mma_close_names",
]

# ---------------------------------------------------------------------------------------------
# mma.sync / mma.sp
# ---------------------------------------------------------------------------------------------
_QUADPAIR = Layout((4, 2), (1, 16))  # SM70_QuadPair: logical thread (lane in quad, high half) -> lane

_SYNC_NAME = re.compile(r"^SM(\d+)_(\d+)x(\d+)x(\d+)_([A-Z0-9]+?)_(TN|NT|NN|TT)(_SATURATE|_XORPOPC|_ANDPOPC)?(?:_KIND_([A-Z0-9]+))?$")
_SPARSE_NAME = re.compile(r"^SM(\d+)_SPARSE_(\d+)x(\d+)x(\d+)_([A-Z0-9]+?)_TN()()(?:_KIND_([A-Z0-9]+))?$")


@guarded
def cute_mma_name(shape: str, dtype: str, ctype: str | None = None, *, btype: str | None = None,
                  layouts: str = "TN", sparse: bool = False, kind: str | None = None) -> str:
    """CuTe's name of the ``mma.sync`` atom for a catalog shape/type (``_XORPOPC`` for ``.b1``).

    The ``SM<nn>`` prefix is CuTe's: ``SM70`` for ``m8n8k4 .f16``, ``SM80`` for every sm_75/sm_80
    shape (CuTe also has ``SM75_16x8x8_F32F16F16F32_TN`` and ``SM75_8x8x16_S32S8S8S32_TN``, which
    :func:`~layoutalg.nvidia.atoms.mma_atom` accepts too); otherwise the catalog's minimum target. The ``kind::`` forms of
    sm_120 (``f8f6f4``, ``mxf8f6f4``, ``mxf4``, ``mxf4nvf4``) get layoutalg's suffix ``_KIND_<KIND>``
    (CuTe names its SM120 atoms by template instead); their block-scale factors are not part of the atom.

    >>> cute_mma_name("m16n8k16", "bf16"), cute_mma_name("m8n8k4", "f16", "f32", layouts="NT")
    ('SM80_16x8x16_F32BF16BF16F32_TN', 'SM70_8x8x4_F32F16F16F32_NT')
    """
    M, N, K = parse_mnk(shape)
    dtype = dtype_name(dtype, op="cute_mma_name")
    if layouts not in ("TN", "NT", "NN", "TT"):
        raise LayoutError(f"cute_mma_name: layouts={layouts!r} is not TN, NT, NN or TT")
    if layouts != "TN" and not (shape == "m8n8k4" and dtype == "f16"):
        raise LayoutError(f"cute_mma_name: {shape} .{dtype} is .row.col only (layouts='TN'); got {layouts!r}")
    btype = None if btype is None else dtype_name(btype, op="cute_mma_name: btype")
    if sparse:
        f = _mma.sparse_fragment(shape, dtype, "C", ctype=ctype, kind=kind)
    else:
        f = _mma.fragment(shape, dtype, "C", ctype=ctype, kind=kind)
    acc = f.dtype
    sm = sm_number(f.min_sm)
    if sm == 75:
        sm = 80  # CuTe spells every Turing/Ampere mma.sync atom SM80_ (two also exist as SM75_)
    if shape == "m8n8k4" and dtype == "f16":
        sm = 70
    try:
        types = PTX_TO_NAME[acc] + PTX_TO_NAME[dtype] + PTX_TO_NAME[btype or dtype] + PTX_TO_NAME[acc]
    except KeyError as e:
        raise LayoutError(f"cute_mma_name: no CuTe spelling for type {e.args[0]!r}") from None
    head = f"SM{sm}_SPARSE" if sparse else f"SM{sm}"
    suffix = "_XORPOPC" if dtype == "b1" else ""
    if kind:
        suffix += "_KIND_" + str(kind).replace("kind::", "").upper()
    return f"{head}_{M}x{N}x{K}_{types}_{layouts}{suffix}"


def _quadpair(layout: Layout) -> Layout:
    """One computation of m8n8k4 .f16: drop the computation mode (stride = matrix size) and coalesce."""
    t = layout[0]
    # thread mode is (lane-in-quad..., computation 4, high half 2); keep modes whose stride is not
    # the computation's (the stacked codomain's matrix size)
    fs, fd = t.flat
    keep = [(s, d) for s, d in zip(fs, fd) if not (s == 4 and d in (32, 64))]
    thr = coalesce(Layout(tuple(s for s, _ in keep), tuple(d for _, d in keep)))
    return make_layout(thr, coalesce(layout[1]))


def _sync_atom(name: str, shape: str, atype: str, btype: str, acc: str, lay: str, sparse: bool,
               kind: str | None = None) -> MMAAtom:
    M, N, K = parse_mnk(shape)
    base = _mma.sparse_fragment if sparse else _mma.fragment

    def get(shp: str, dt: str, op: str, **kw: Any) -> Any:
        return base(shp, dt, op, kind=kind, **kw)

    if shape == "m8n8k4" and atype == "f16":
        al = {"T": "row", "N": "col"}[lay[0]]
        bl = {"N": "col", "T": "row"}[lay[1]]
        fa = _mma.fragment(shape, atype, "A", alayout=al)
        fb = _mma.fragment(shape, atype, "B", blayout=bl)
        fc = _mma.fragment(shape, atype, "C", ctype=acc)
        return MMAAtom(name, (M, N, K), _QUADPAIR, _quadpair(fa.layout), _quadpair(fb.layout), _quadpair(fc.layout),
                       (acc, atype, btype, acc), notes="one quadpair of mma.m8n8k4 .f16 (lanes 0-3, 16-19)")
    if lay != "TN":
        raise LayoutError(f"mma_atom: {name!r}: {shape} .{atype} takes only .row.col (TN)")
    fa = get(shape, atype, "A")
    fb = get(shape, btype if btype in ("s8", "u8", "s4", "u4") and atype in ("s8", "u8", "s4", "u4") else atype, "B")
    fc = get(shape, atype, "C", ctype=acc)
    if fc.dtype != acc:
        raise LayoutError(f"mma_atom: {name!r}: accumulator .{acc} is not valid for {shape} .{atype}")
    if sparse:
        # A indexes the compressed M x K/2 matrix: the atom's A tile is M x K/2
        a = MMAAtom(name, (M, N, K), Layout(32), fa.layout, fb.layout, fc.layout, (acc, atype, btype, acc),
                    notes="mma.sp: A over the compressed M x K/2 matrix", a_k_compression=2)
        return a
    return MMAAtom(name, (M, N, K), Layout(32), fa.layout, fb.layout, fc.layout, (acc, atype, btype, acc))


def mma_close_names(name: str) -> str:
    """'; close names: ...' from the mma.sync and wgmma atom names (layoutalg atoms --list shows them all)."""
    close = close_names(name, "mma", vendor="nvidia", arch=("sm80", "sm90"))
    return f"; close names: {', '.join(close)}" if close else "; layoutalg atoms --list shows every name"


@guarded
def is_sync_name(name: str) -> bool:
    """Is ``name`` spelled as an ``mma.sync`` / ``mma.sp`` atom (``SM<nn>_<M>x<N>x<K>_<types>_<majors>``)?"""
    return bool(_SPARSE_NAME.match(name) or _SYNC_NAME.match(name))


@cache
def sync_atom(name: str) -> MMAAtom:
    """The ``mma.sync`` / ``mma.sp`` atom CuTe names ``name`` (see the module's list of spellings)."""
    m = _SPARSE_NAME.match(name)
    sparse = bool(m)
    if not m:
        m = _SYNC_NAME.match(name)
    if not m:
        raise LayoutError(
            f"mma_atom: {name!r} is not an atom name like 'SM80_16x8x16_F32F16F16F32_TN', "
            f"'SM90_64x128x16_F32BF16BF16_SS' or 'SM80_SPARSE_16x8x32_F32F16F16F32_TN'{mma_close_names(name)}"
        )
    M, N, K = int(m.group(2)), int(m.group(3)), int(m.group(4))
    d, a, b, c = split_types(m.group(5), 4, name)
    if d != c:
        raise LayoutError(f"mma_atom: {name!r}: D type .{d} differs from C type .{c}")
    lay = "TN" if sparse else m.group(6)
    suffix = None if sparse else m.group(7)
    kind = m.group(8).lower() if m.group(8) else None
    if a == "b1" and suffix not in ("_XORPOPC", "_ANDPOPC"):
        raise LayoutError(f"mma_atom: {name!r}: a .b1 atom needs _XORPOPC or _ANDPOPC")
    shape = f"m{M}n{N}k{K}"
    if a != b and not ({a, b} <= {"s8", "u8"} or {a, b} <= {"s4", "u4"} or {a, b} <= {"e4m3", "e5m2"} or kind):
        raise LayoutError(f"mma_atom: {name!r}: A .{a} and B .{b} are not a valid pair")
    try:
        return _sync_atom(name, shape, a, b, d, lay, sparse, kind)
    except LayoutError as e:
        raise LayoutError(f"mma_atom: {name!r} is not in the catalog: {e}{mma_close_names(name)}") from None


@cache
def sync_atom_names() -> tuple[str, ...]:
    """Every ``mma.sync`` / ``mma.sp`` atom the catalog builds, by CuTe name (catalog order).

    >>> "SM80_16x8x16_F32F16F16F32_TN" in sync_atom_names()
    True
    """
    out: list[str] = []
    seen = set()
    for e in _mma.catalog():
        if e.operand != "C":
            continue
        key = (e.shape, e.dtype, e.ctype, e.sparse, e.kind)
        if key in seen:
            continue
        seen.add(key)
        if e.shape == "m8n8k4" and e.dtype == "f16":
            for lay in ("TN", "NT", "NN", "TT"):
                out.append(cute_mma_name(e.shape, e.dtype, e.ctype, layouts=lay))
            continue
        try:
            out.append(cute_mma_name(e.shape, e.dtype, e.ctype, sparse=e.sparse, kind=e.kind))
        except LayoutError:  # pragma: no cover - every catalog type has a spelling
            continue
    return tuple(dict.fromkeys(out))


def _build_sync(name: str, **kwargs: Any) -> MMAAtom | None:
    if not is_sync_name(name):
        return None
    if kwargs:
        raise LayoutError(f"mma_atom: {name!r} takes no options (got {', '.join(sorted(kwargs))})")
    return sync_atom(name)


# ---------------------------------------------------------------------------------------------
# ldmatrix (and the bit layouts stmatrix shares), cp.async, UniversalCopy
# ---------------------------------------------------------------------------------------------
_LDSM = re.compile(r"^SM75_U(32|16)x([1248])_LDSM_(N|T)$")
_CPASYNC = re.compile(r"^SM80_CP_ASYNC_(CACHEALWAYS|CACHEGLOBAL)(?:_ZFILL)?\s*<\s*([a-z0-9_]+)\s*(?:,\s*([a-z0-9_]+)\s*)?>$")
_UNIVERSAL = re.compile(r"^UniversalCopy\s*<\s*([a-z0-9_]+)\s*(?:,\s*([a-z0-9_]+)\s*)?>$")


def _rm_from_cm(num: int) -> Layout:
    """Catalog index (row + 8*col + 64*matrix) -> CuTe's (8*row + col + 64*matrix)."""
    return Layout((8, 8, num), (8, 1, 64))


def _to_bits(elem: Layout, bits: int = 16) -> Layout:
    """(thread, value) -> element  ==>  (thread, (bit, value)) -> bit, values coalesced as CuTe writes them."""
    thr = coalesce(Layout(elem[0].shape, tuple_scale(elem[0].stride, bits)))
    val = coalesce(make_layout(Layout(bits, 1), Layout(elem[1].shape, tuple_scale(elem[1].stride, bits))))
    return make_layout(thr, val)


@cache
def ldsm_bit_layouts(num: int, trans: bool) -> tuple[Layout, Layout]:
    """(register side, address side) bit layouts of ``ldmatrix`` / ``stmatrix`` ``.x{num}{.trans}``, from the catalog.

    CuTe numbers the bits of an 8x8 b16 matrix row by row: element ``(row, col)`` of matrix ``j`` is
    bits ``16*(8*row + col + 64*j) .. +15``. Lane ``l`` supplies the address of row ``l % 8`` of
    matrix ``l // 8`` (lanes past ``8*num`` repeat them, stride 0).

    >>> [str(x) for x in ldsm_bit_layouts(4, False)]
    ['(32,(32,4)):(32,(1,1024))', '(32,128):(128,1)']
    """
    frag = _ldm.fragment(num, trans)
    elem = composition(_rm_from_cm(num), frag.layout)  # (lane, value) -> CuTe element index
    reg = _to_bits(elem)
    # address side: lane l supplies row (l % 8) of matrix l // 8 for l < 8*num (address_lanes is
    # (row, matrix) -> lane); the other lanes repeat them (stride 0), as CuTe writes it
    lanes = right_inverse(_ldm.address_lanes(num))  # lane -> row + 8*matrix
    row_start = composition(Layout((8, num), (8, 64)), lanes)  # lane -> first element of its row
    addr_thr = coalesce(Layout(row_start.shape, tuple_scale(row_start.stride, 16)))
    if 8 * num < 32:
        addr_thr = make_layout(addr_thr, Layout(32 // (8 * num), 0))
    addr = make_layout(addr_thr, Layout(128, 1))
    return reg, addr


@guarded
def ldsm_matrices(name: str, width: int, count: int, trans: bool) -> int:
    """The number of 8x8 matrices of an ldmatrix/stmatrix atom ``U{width}x{count}_{N|T}`` (a LayoutError
    for the spellings CuTe does not have)."""
    num = count if width == 32 else count // 2
    if (width == 32 and trans) or (width == 16 and not trans) or num not in (1, 2, 4):
        raise LayoutError(f"copy_atom: {name!r}: ldmatrix/stmatrix names are U32x{{1,2,4}}_N or U16x{{2,4,8}}_T")
    return num


@guarded
def ldsm_copy_atom(name: str, vb: int, vt: str) -> CopyAtom:
    """The ``ldmatrix`` atom ``SM75_U32x{1,2,4}_LDSM_N`` / ``SM75_U16x{2,4,8}_LDSM_T`` moving ``vb``-bit values."""
    m = _LDSM.match(name)
    if not m:
        raise LayoutError(f"copy_atom: unknown copy atom {name!r}")
    width, count, trans = int(m.group(1)), int(m.group(2)), m.group(3) == "T"
    num = ldsm_matrices(name, width, count, trans)
    reg, addr = ldsm_bit_layouts(num, trans)
    return CopyAtom(name, Layout(32), addr, reg, reg, vb, 128, 32, "S", vt,
                    notes=f"ldmatrix.sync.aligned.m8n8.x{num}{'.trans' if trans else ''}.shared.b16")


def _cp_async_atom(name: str, vb: int, vt: str) -> CopyAtom:
    m = _CPASYNC.match(name)
    assert m is not None
    s = UINT_BITS.get(m.group(2))
    d = UINT_BITS.get(m.group(3) or m.group(2))
    if s is None or d is None or s != d or s not in (32, 64, 128):
        raise LayoutError(f"copy_atom: {name!r}: cp.async moves 4, 8 or 16 bytes (uint32_t, uint64_t, uint128_t)")
    if m.group(1) == "CACHEGLOBAL" and s != 128:
        raise LayoutError(f"copy_atom: {name!r}: cp.async.cg moves 16 bytes only (uint128_t)")
    L = Layout((1, s), (0, 1))
    return CopyAtom(name, Layout(1, 0), L, Layout((1, d), (0, 1)), L, vb, s, d, "D", vt,
                    notes=f"cp.async.{'ca' if m.group(1) == 'CACHEALWAYS' else 'cg'}.shared.global [{s // 8} bytes]")


def _universal_atom(name: str, vb: int, vt: str) -> CopyAtom:
    m = _UNIVERSAL.match(name)
    assert m is not None
    s = UINT_BITS.get(m.group(1))
    d = UINT_BITS.get(m.group(2) or m.group(1))
    if s is None or d is None:
        raise LayoutError(f"copy_atom: {name!r}: UniversalCopy takes uint8_t .. uint128_t")
    return CopyAtom(name, Layout(1, 0), Layout((1, s), (0, 1)), Layout((1, d), (0, 1)), Layout((1, s), (0, 1)),
                    vb, s, d, "", vt, notes=f"one {s}-bit vector load and {d}-bit store per thread")


def _uint_natural(rx: re.Pattern[str], group: int) -> Any:
    def natural(name: str) -> str | None:
        m = rx.match(name)
        bits = UINT_BITS.get(m.group(group)) if m else None
        return f"b{bits}" if bits else None
    return natural


def ldsm_names() -> tuple[str, ...]:
    """The ``ldmatrix`` atom names."""
    return tuple([f"SM75_U32x{n}_LDSM_N" for n in (1, 2, 4)] + [f"SM75_U16x{n}_LDSM_T" for n in (2, 4, 8)])


def cp_async_names() -> tuple[str, ...]:
    """The ``cp.async`` atom names."""
    return tuple([f"SM80_CP_ASYNC_CACHEALWAYS<{t}>" for t in ("uint32_t", "uint64_t", "uint128_t")]
                 + ["SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>"])


def universal_copy_names() -> tuple[str, ...]:
    """The ``UniversalCopy<uintN_t>`` atom names."""
    return tuple(f"UniversalCopy<{t}>" for t in UINT_BITS)


register(AtomFamily("nvidia", "sm80", "mma", "mma.sync", sync_atom_names, _build_sync))
register(AtomFamily("nvidia", "sm80", "copy", "ldmatrix", ldsm_names,
                    copy_family_builder(lambda n: bool(_LDSM.match(n)), lambda n: "b16", ldsm_copy_atom),
                    normalise_copy_name))
register(AtomFamily("nvidia", "sm80", "copy", "cp.async", cp_async_names,
                    copy_family_builder(lambda n: bool(_CPASYNC.match(n)), _uint_natural(_CPASYNC, 2), _cp_async_atom),
                    normalise_copy_name))
register(AtomFamily("nvidia", "generic", "copy", "UniversalCopy", universal_copy_names,
                    copy_family_builder(lambda n: bool(_UNIVERSAL.match(n)), _uint_natural(_UNIVERSAL, 1),
                                        _universal_atom),
                    normalise_copy_name))
