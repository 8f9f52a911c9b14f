"""The NVIDIA atoms of :mod:`layoutalg.tiled`: MMA and copy instructions, named as CuTe names them.

Every atom here is built from the catalog, not typed in a second time:

* an ``mma.sync`` atom's A/B/C TV layouts are :func:`layoutalg.nvidia.mma.fragment`'s (proven
  against the PTX formulas and the H100); ``mma.m8n8k4`` ``.f16`` is cut down to one *quadpair*
  (lanes ``0-3, 16-19`` compute one 8x8x4 product, CuTe's ``SM70_QuadPair`` thread ids);
* a ``wgmma`` atom's C (and register A, ``_RS``) are :mod:`~layoutalg.nvidia.wgmma_fragments`'
  over the warpgroup's 128 threads; an operand read from shared memory (``_SS`` A, always B) is
  CuTe's ``ABLayout``: every thread "holds" the whole ``M x K`` tile (stride 0 over threads);
* ``ldmatrix`` / ``stmatrix`` copy atoms come from :func:`layoutalg.nvidia.ldmatrix.fragment` and
  :func:`~layoutalg.nvidia.ldmatrix.address_lanes`, re-indexed to CuTe's bit numbering: element
  ``(row, col)`` of matrix ``j`` is bits ``16*(8*row + col + 64*j) .. +15`` (CuTe numbers an
  8x8 b16 matrix row by row; the catalog column by column);
* ``cp.async`` (4/8/16 bytes) and ``UniversalCopy<uintN_t>`` are one-thread atoms moving one
  N-bit vector.

Worked example, ``ldmatrix.x4`` (``SM75_U32x4_LDSM_N``), by hand. Lane 6 receives, in register
``r_2``, row ``6 >> 2 = 1``, columns ``2*(6 % 4) = 4, 5`` of matrix 2: CuTe index ``8*1 + 4 + 64*2
= 140``, bits ``140*16 = 2240 ..``; the bit layout ``(32,(32,4)):(32,(1,1024))`` gives
``6*32 + 0 + 2*1024 = 2240``. And lane 6 *supplies* the address of row 6 of matrix 0: bits
``6*128 ..`` of ``(32,128):(128,1)``::

    >>> a = copy_atom("SM75_U32x4_LDSM_N", "f16")
    >>> str(a.dst_bits), a.dst_bits(6, 2 * 32), str(a.src_bits), a.src_bits(6, 0)
    ('(32,(32,4)):(32,(1,1024))', 2240, '(32,128):(128,1)', 768)
    >>> m = mma_atom("SM80_16x8x16_F32F16F16F32_TN")
    >>> str(m.layout_a_tv), m.shape_mnk
    ('((4,8),(2,2,2)):((32,1),(16,8,128))', (16, 8, 16))
"""

from __future__ import annotations

import re
from functools import cache, wraps
from typing import Any

from ..algebra import coalesce, composition, right_inverse
from ..errors import LayoutError
from ..hooks import provide
from ..layout import Layout, make_layout
from ..tiled import CopyAtom, MMAAtom
from . import ldmatrix as _ldm
from . import mma as _mma
from . import wgmma_fragments as _wf
from .dtypes import dtype_bits, dtype_name

__all__ = [
    "mma_atom",
    "copy_atom",
    "mma_atom_names",
    "copy_atom_names",
    "value_bits",
    "cute_mma_name",
]

# ---------------------------------------------------------------------------------------------
# types
# ---------------------------------------------------------------------------------------------
#: CuTe's spelling in atom names -> PTX type
_NAME_TYPES = {
    "F16": "f16", "BF16": "bf16", "TF32": "tf32", "F32": "f32", "F64": "f64", "S32": "s32",
    "S8": "s8", "U8": "u8", "S4": "s4", "U4": "u4", "U1": "b1", "E4M3": "e4m3", "E5M2": "e5m2",
    "E3M2": "e3m2", "E2M3": "e2m3", "E2M1": "e2m1",
}
_PTX_TO_NAME = {v: k for k, v in _NAME_TYPES.items()}
_TYPE_TOKEN = re.compile("|".join(sorted(_NAME_TYPES, key=len, reverse=True)))

def value_bits(value_type: Any) -> int:
    """Bits of a value type named as in PTX (``"f16"``), CuTe C++ (``"half_t"``, ``"cutlass::float_e4m3_t"``)
    or any spelling :func:`layoutalg.nvidia.dtypes.dtype_name` reads, or given as an int.

    >>> value_bits("half_t"), value_bits("e4m3"), value_bits(32), value_bits("cute::uint128_t")
    (16, 8, 32, 128)
    """
    if isinstance(value_type, int) and not isinstance(value_type, bool):
        if value_type < 1:
            raise LayoutError(f"value_bits: {value_type} bits is not positive")
        return value_type
    return dtype_bits(value_type, op="value_bits")


def _value_type_name(value_type: Any) -> str:
    """The name a copy atom records for its value type: the PTX name, or ``b<N>`` for N bits."""
    if isinstance(value_type, int) and not isinstance(value_type, bool):
        return f"b{value_type}"
    return dtype_name(value_type, op="copy_atom")


def _hashable_cache(fn: Any) -> Any:
    """``functools.cache`` that answers an unhashable argument (a list, say) with a LayoutError naming it."""
    cached = cache(fn)

    @wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            hash((args, tuple(sorted(kwargs.items()))))
        except TypeError:
            bad = next((a for a in (*args, *kwargs.values()) if not _is_hashable(a)), None)
            raise LayoutError(f"{fn.__name__}: argument {bad!r} is not a name or a value type "
                              "(a str or an int, not a list)") from None
        return cached(*args, **kwargs)

    call.cache_clear = cached.cache_clear  # type: ignore[attr-defined]
    return call


def _is_hashable(x: Any) -> bool:
    try:
        hash(x)
    except TypeError:
        return False
    return True


# ---------------------------------------------------------------------------------------------
# MMA atoms
# ---------------------------------------------------------------------------------------------
_QUADPAIR = Layout((4, 2), (1, 16))  # SM70_QuadPair: logical thread (lane in quad, high half) -> lane

_SYNC_NAME = re.compile(r"^SM(\d+)_(\d+)x(\d+)x(\d+)_([A-Z0-9]+?)_(TN|NT|NN|TT)(_SATURATE|_XORPOPC|_ANDPOPC)?(?:_KIND_([A-Z0-9]+))?$")
_WGMMA_NAME = re.compile(r"^SM90_64x(\d+)x(\d+)_([A-Z0-9]+?)_(SS|RS)(_TN)?(_SATURATE)?(?:<\s*(.*?)\s*>)?$")
_SPARSE_NAME = re.compile(r"^SM(\d+)_SPARSE_(\d+)x(\d+)x(\d+)_([A-Z0-9]+?)_TN()()(?:_KIND_([A-Z0-9]+))?$")


def _split_types(text: str, n: int, name: str) -> list[str]:
    toks = _TYPE_TOKEN.findall(text)
    if "".join(toks) != text or len(toks) != n:
        raise LayoutError(f"mma_atom: cannot read {n} types from {text!r} in {name!r}")
    return [_NAME_TYPES[t] for t in toks]


def _sm_number(min_sm: str) -> int:
    return int(re.sub(r"[^0-9]", "", min_sm))


def cute_mma_name(shape: str, dtype: str, ctype: str | None = None, *, btype: str | None = None,
                  layouts: str = "TN", sparse: bool = False, kind: str | None = None) -> str:
    """CuTe's name of the ``mma.sync`` atom for a catalog shape/type (``_XORPOPC`` for ``.b1``).

    The ``SM<nn>`` prefix is CuTe's: ``SM70`` for ``m8n8k4 .f16``, ``SM80`` for every sm_75/sm_80
    shape (CuTe also has ``SM75_16x8x8_F32F16F16F32_TN`` and ``SM75_8x8x16_S32S8S8S32_TN``, which
    :func:`mma_atom` accepts too); otherwise the catalog's minimum target. The ``kind::`` forms of
    sm_120 (``f8f6f4``, ``mxf8f6f4``, ``mxf4``, ``mxf4nvf4``) get layoutalg's suffix ``_KIND_<KIND>``
    (CuTe names its SM120 atoms by template instead); their block-scale factors are not part of the atom.

    >>> cute_mma_name("m16n8k16", "bf16"), cute_mma_name("m8n8k4", "f16", "f32", layouts="NT")
    ('SM80_16x8x16_F32BF16BF16F32_TN', 'SM70_8x8x4_F32F16F16F32_NT')
    """
    M, N, K = _mma._parse_mnk(shape)
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
    sm = _sm_number(f.min_sm)
    if sm == 75:
        sm = 80  # CuTe spells every Turing/Ampere mma.sync atom SM80_ (two also exist as SM75_)
    if shape == "m8n8k4" and dtype == "f16":
        sm = 70
    try:
        types = _PTX_TO_NAME[acc] + _PTX_TO_NAME[dtype] + _PTX_TO_NAME[btype or dtype] + _PTX_TO_NAME[acc]
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
    M, N, K = _mma._parse_mnk(shape)
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


def _wgmma_atom(name: str, N: int, K: int, types: list[str], src: str, majors: str | None) -> MMAAtom:
    acc, atype, btype = types
    shape = f"m64n{N}k{K}"
    if atype != btype and not ({atype, btype} <= {"e4m3", "e5m2"} or {atype, btype} <= {"s8", "u8"}):
        raise LayoutError(f"mma_atom: {name!r}: wgmma A and B types must match (or be e4m3/e5m2, s8/u8 mixes)")
    if _wf.K_BY_TYPE.get(atype) != K:
        raise LayoutError(f"mma_atom: {name!r}: .{atype} wgmma has K = {_wf.K_BY_TYPE.get(atype)}, not {K}")
    if N not in _wf.valid_n(atype):
        raise LayoutError(f"mma_atom: {name!r}: N = {N} is not legal for .{atype}; valid: {_wf.valid_n(atype)}")
    D = _wf.fragment(shape, atype, "D", acc)
    smem_a = Layout((128, (64, K)), (0, (1, 64)))
    smem_b = Layout((128, (N, K)), (0, (1, N)))
    if src == "RS":
        if majors is not None and majors.split(",")[0].strip().split("::")[-1] != "K":
            raise LayoutError(f"mma_atom: {name!r}: A from registers must be K-major")
        A = _wf.fragment(shape, atype, "A").layout
        frg_a = "value"
    else:
        A, frg_a = smem_a, "smem_desc"
    return MMAAtom(name, (64, N, K), Layout(128), A, smem_b, D.layout, (acc, atype, btype, acc), frg_a=frg_a,
                   frg_b="smem_desc", notes=f"wgmma.mma_async, A from {'registers' if src == 'RS' else 'shared memory'}")


@_hashable_cache
def mma_atom(name: str | None = None, *, shape: str | None = None, dtype: str | None = None,
             ctype: str | None = None, sparse: bool = False, source: str = "SS") -> MMAAtom:
    """The MMA atom named as CuTe names it, or built from the catalog (``shape``, ``dtype``, ``ctype``).

    Names: ``"SM80_16x8x16_F32F16F16F32_TN"`` (``mma.sync``; D, A, B, C types then the majors),
    ``"SM70_8x8x4_F32F16F16F32_NT"`` (a Volta quadpair), ``"SM90_64x128x16_F32BF16BF16_SS"``
    (``wgmma``; D, A, B types, ``_SS`` or ``_RS``; CuTe's ``<GMMA::Major::K, ...>`` arguments may
    follow and do not change the TV layouts), and, for ``mma.sp``, ``"SM80_SPARSE_16x8x32_F32F16F16F32_TN"``
    (layoutalg's spelling: CuTe has no sm_80 sparse atoms); ``"SM100_MMA_F16BF16_SS<bf16,bf16,float,128,256,K,K>"``
    (``tcgen05.mma``, CuTe's template text: :func:`layoutalg.nvidia.umma.umma_atom`). From the catalog:
    ``mma_atom(shape="m16n8k16", dtype="bf16")``, ``mma_atom(shape="m64n64k16", dtype="f16",
    source="RS")`` for wgmma.

    >>> mma_atom("SM70_8x8x4_F32F16F16F32_NT").thr_id
    Layout((4, 2), (1, 16))
    >>> str(mma_atom("SM90_64x64x16_F32F16F16_SS").layout_b_tv)
    '(128,(64,16)):(0,(1,64))'
    """
    if name is None:
        if shape is None or dtype is None:
            raise LayoutError("mma_atom: give a CuTe name, or shape= and dtype= of a catalog entry")
        M, N, K = _mma._parse_mnk(shape)
        dtype = dtype_name(dtype, op="mma_atom")
        ctype = None if ctype is None else dtype_name(ctype, op="mma_atom: ctype")
        if source not in ("SS", "RS"):
            raise LayoutError(f"mma_atom: source={source!r} is not 'SS' (A from shared memory) or 'RS' (A from registers)")
        if M == 64:
            if sparse:
                raise LayoutError("mma_atom: sparse=True names an mma.sp atom; wgmma (M = 64) has no sparse atom here")
            accs = _wf.ACC_BY_TYPE.get(dtype, ("f32",))
            acc = ctype or ("f32" if "f32" in accs else accs[0])
            types = _PTX_TO_NAME.get(acc, "?") + _PTX_TO_NAME.get(dtype, "?") * 2
            return mma_atom(f"SM90_64x{N}x{K}_{types}_{source}")
        if source != "SS":
            raise LayoutError(f"mma_atom: source={source!r} chooses between wgmma's SS and RS atoms; {shape} is mma.sync")
        return mma_atom(cute_mma_name(shape, dtype, ctype, sparse=sparse))
    if (shape, dtype, ctype, sparse, source) != (None, None, None, False, "SS"):
        raise LayoutError(f"mma_atom: {name!r} names the atom; shape=, dtype=, ctype=, sparse= and source= build one "
                          "from the catalog instead (give one or the other)")
    name = str(name).strip()
    if "SM100_MMA_" in name:  # tcgen05 (UMMA) atoms, also as MMA_Atom<MMA_Traits<...>>: layoutalg.nvidia.umma
        from .umma import umma_atom

        return umma_atom(name)
    m = _WGMMA_NAME.match(name)
    if m:
        N, K = int(m.group(1)), int(m.group(2))
        return _wgmma_atom(re.sub(r"<.*", "", name), N, K, _split_types(m.group(3), 3, name), m.group(4), m.group(7))
    m = _SPARSE_NAME.match(name)
    sparse = bool(m)
    if not m:
        m = _SYNC_NAME.match(name)
    if not m:
        raise LayoutError(
            f"mma_atom: {name!r} is not an atom name like 'SM80_16x8x16_F32F16F16F32_TN', "
            f"'SM90_64x128x16_F32BF16BF16_SS' or 'SM80_SPARSE_16x8x32_F32F16F16F32_TN'{_close_names(name)}"
        )
    M, N, K = int(m.group(2)), int(m.group(3)), int(m.group(4))
    d, a, b, c = _split_types(m.group(5), 4, name)
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
        raise LayoutError(f"mma_atom: {name!r} is not in the catalog: {e}{_close_names(name)}") from None


def _close_names(name: str) -> str:
    """'; close names: ...' from the catalog's atom names (layoutalg atoms --list shows them all)."""
    import difflib

    close = difflib.get_close_matches(name, mma_atom_names(), n=4, cutoff=0.75)
    return f"; close names: {', '.join(close)}" if close else "; layoutalg atoms --list shows every name"


@cache
def mma_atom_names(include_wgmma: bool = True) -> tuple:
    """Every atom :func:`mma_atom` builds from the catalog, by name (mma.sync, mma.sp, and wgmma SS/RS).

    >>> names = mma_atom_names()
    >>> "SM80_16x8x16_F32F16F16F32_TN" in names, "SM90_64x256x16_F32BF16BF16_RS" in names
    (True, True)
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
    if include_wgmma:
        for atype in ("f16", "bf16", "tf32", "e4m3", "e5m2", "s8", "u8"):
            K = _wf.K_BY_TYPE[atype]
            tn = "" if atype in ("f16", "bf16") else "_TN"  # CuTe: K-major only
            for acc in _wf.ACC_BY_TYPE[atype]:
                types = _PTX_TO_NAME[acc] + _PTX_TO_NAME[atype] * 2
                for N in _wf.valid_n(atype):
                    out.append(f"SM90_64x{N}x{K}_{types}_SS{tn}")
                    out.append(f"SM90_64x{N}x{K}_{types}_RS{tn}")
    return tuple(dict.fromkeys(out))


# ---------------------------------------------------------------------------------------------
# Copy atoms
# ---------------------------------------------------------------------------------------------
_LDSM = re.compile(r"^SM75_U(32|16)x([1248])_LDSM_(N|T)$")
_STSM = re.compile(r"^SM90_U(32|16)x([1248])_STSM_(N|T)$")
_CPASYNC = re.compile(r"^SM80_CP_ASYNC_(CACHEALWAYS|CACHEGLOBAL)(?:_ZFILL)?\s*<\s*([a-z0-9_]+)\s*(?:,\s*([a-z0-9_]+)\s*)?>$")
_UNIVERSAL = re.compile(r"^UniversalCopy\s*<\s*([a-z0-9_]+)\s*(?:,\s*([a-z0-9_]+)\s*)?>$")
_UINT_BITS = {"uint8_t": 8, "uint16_t": 16, "uint32_t": 32, "uint64_t": 64, "uint128_t": 128}


def _rm_from_cm(num: int) -> Layout:
    """Catalog index (row + 8*col + 64*matrix) -> CuTe's (8*row + col + 64*matrix)."""
    return Layout((8, 8, num), (8, 1, 64))


def _to_bits(elem: Layout, bits: int = 16) -> Layout:
    """(thread, value) -> element  ==>  (thread, (bit, value)) -> bit, values coalesced as CuTe writes them."""
    thr = coalesce(Layout(elem[0].shape, tuple_scale(elem[0].stride, bits)))
    val = coalesce(make_layout(Layout(bits, 1), Layout(elem[1].shape, tuple_scale(elem[1].stride, bits))))
    return make_layout(thr, val)


def tuple_scale(t: Any, k: int) -> Any:
    if type(t) is tuple:
        return tuple(tuple_scale(x, k) for x in t)
    return t * k


def _ldsm_layouts(num: int, trans: bool) -> tuple[Layout, Layout]:
    """(register side, address side) bit layouts of ldmatrix .x{num}{.trans}, from the catalog."""
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


#: the value widths a copy atom may be asked for (bits), tried to say which fit
_WIDTHS = (4, 8, 16, 32, 64, 128)
#: a type of each width, for the error's examples
_TYPE_OF_WIDTH = {4: "s4", 8: "e4m3/s8/u8", 16: "f16/bf16", 32: "f32/tf32/s32", 64: "f64", 128: "b128 (uint128_t)"}


def _natural_value_type(name: str) -> str | None:
    """The value type a copy instruction moves when none is named: ldmatrix/stmatrix .b16; cp.async and
    UniversalCopy their uintN_t (one value per thread)."""
    if _LDSM.match(name) or _STSM.match(name):
        return "b16"
    m = _CPASYNC.match(name) or _UNIVERSAL.match(name)
    if m:
        bits = _UINT_BITS.get(m.group(2) if m.re is _CPASYNC else m.group(1))
        return f"b{bits}" if bits else None
    if name.startswith(("SM100_TMEM_", "SM100_UTCCP_")):  # tcgen05.ld / st / cp move 32-bit TMEM cells
        return "b32"
    return None


@_hashable_cache
def copy_atom(name: str, value_type: Any = None) -> CopyAtom:
    """The copy atom CuTe calls ``Copy_Atom<name, value_type>``.

    Without ``value_type`` the instruction's own unit is used and recorded: ``b16`` for
    ldmatrix/stmatrix, the ``uintN_t`` (``bN``) of cp.async and UniversalCopy. A value type the
    instruction cannot move is a LayoutError naming the widths that fit.

    ``name``: ``"SM75_U32x{1,2,4}_LDSM_N"``, ``"SM75_U16x{2,4,8}_LDSM_T"`` (ldmatrix),
    ``"SM90_U32x{1,2,4}_STSM_N"``, ``"SM90_U16x{2,4,8}_STSM_T"`` (stmatrix),
    ``"SM80_CP_ASYNC_CACHEALWAYS<uint32_t|uint64_t|uint128_t>"``,
    ``"SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>"`` (cp.async, 4/8/16 bytes) and
    ``"UniversalCopy<uint8_t..uint128_t>"`` (a plain vectorised load/store). ``value_type`` names
    the element type (``"f16"``, ``"half_t"``, ``"bf16"``, ``"f32"``, ...) or its bits.

    >>> str(copy_atom("SM75_U16x8_LDSM_T", "f16").val_layout_dst)   # the (1):(1) is the 16 bits of a value
    '((4,8),(1,2,4)):((16,1),(1,8,64))'
    >>> copy_atom("SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>", "bf16").num_val_src
    8
    >>> copy_atom("SM75_U32x4_LDSM_N").value_type, copy_atom("UniversalCopy<uint64_t>").num_val_src
    ('b16', 1)
    >>> copy_atom("SM75_U32x4_LDSM_N", "f64")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    layoutalg.errors.LayoutError: copy_atom: SM75_U32x4_LDSM_N cannot move 64-bit values (f64): ...; the value widths that fit: ...
    """
    name = re.sub(r"\s+", "", str(name))
    name = re.sub(r"^(?:cute::|cutlass::|SM\d+::)+", "", name).replace("cute::", "")
    if value_type is None:
        value_type = _natural_value_type(name)
        if value_type is None:
            raise LayoutError(f"copy_atom: unknown copy atom {name!r}; known: {', '.join(copy_atom_names())}")
    vb = value_bits(value_type)
    vt = _value_type_name(value_type)
    try:
        return _copy_atom(name, vb, vt)
    except LayoutError as e:
        if "unknown copy atom" in str(e) or "names are" in str(e) or "moves 4, 8 or 16" in str(e) \
                or "moves 16 bytes only" in str(e) or "takes uint8_t" in str(e):
            raise
        fits = []
        for w in _WIDTHS:
            try:
                _copy_atom(name, w, f"b{w}")
                fits.append(w)
            except LayoutError:
                continue
        hint = (f"the value widths that fit: {', '.join(map(str, fits))} bits "
                f"(e.g. {', '.join(_TYPE_OF_WIDTH[w] for w in fits)})") if fits else "no value width fits"
        raise LayoutError(f"copy_atom: {name} cannot move {vb}-bit values ({vt}): {e}; {hint}") from None


def _copy_atom(name: str, vb: int, vt: str) -> CopyAtom:
    m = _LDSM.match(name) or _STSM.match(name)
    if m:
        store = name.startswith("SM90")
        width, count, nt = int(m.group(1)), int(m.group(2)), m.group(3)
        trans = nt == "T"
        num = count if width == 32 else count // 2
        if (width == 32 and trans) or (width == 16 and not trans) or num not in (1, 2, 4):
            raise LayoutError(f"copy_atom: {name!r}: ldmatrix/stmatrix names are U32x{{1,2,4}}_N or U16x{{2,4,8}}_T")
        reg, addr = _ldsm_layouts(num, trans)
        if store:
            return CopyAtom(name, Layout(32), reg, addr, reg, vb, 32, 128, "D", vt,
                            notes=f"stmatrix.sync.aligned.m8n8.x{num}{'.trans' if trans else ''}.shared.b16")
        return CopyAtom(name, Layout(32), addr, reg, reg, vb, 128, 32, "S", vt,
                        notes=f"ldmatrix.sync.aligned.m8n8.x{num}{'.trans' if trans else ''}.shared.b16")
    m = _CPASYNC.match(name)
    if m:
        s = _UINT_BITS.get(m.group(2))
        d = _UINT_BITS.get(m.group(3) or m.group(2))
        if s is None or d is None or s != d or s not in (32, 64, 128):
            raise LayoutError(f"copy_atom: {name!r}: cp.async moves 4, 8 or 16 bytes (uint32_t, uint64_t, uint128_t)")
        if m.group(1) == "CACHEGLOBAL" and s != 128:
            raise LayoutError(f"copy_atom: {name!r}: cp.async.cg moves 16 bytes only (uint128_t)")
        L = Layout((1, s), (0, 1))
        return CopyAtom(name, Layout(1, 0), L, Layout((1, d), (0, 1)), L, vb, s, d, "D", vt,
                        notes=f"cp.async.{'ca' if m.group(1) == 'CACHEALWAYS' else 'cg'}.shared.global [{s // 8} bytes]")
    m = _UNIVERSAL.match(name)
    if m:
        s = _UINT_BITS.get(m.group(1))
        d = _UINT_BITS.get(m.group(2) or m.group(1))
        if s is None or d is None:
            raise LayoutError(f"copy_atom: {name!r}: UniversalCopy takes uint8_t .. uint128_t")
        return CopyAtom(name, Layout(1, 0), Layout((1, s), (0, 1)), Layout((1, d), (0, 1)), Layout((1, s), (0, 1)),
                        vb, s, d, "", vt, notes=f"one {s}-bit vector load and {d}-bit store per thread")
    if name.startswith(("SM100_TMEM_", "SM100_UTCCP_")):  # tcgen05.ld / st / cp (layoutalg.nvidia.tmem_copy)
        from .tmem_copy import tmem_copy_atom

        return tmem_copy_atom(name, vt)
    raise LayoutError(f"copy_atom: unknown copy atom {name!r}; known: {', '.join(copy_atom_names())}")


def copy_atom_names() -> tuple:
    """The copy atom names :func:`copy_atom` knows."""
    out = [f"SM75_U32x{n}_LDSM_N" for n in (1, 2, 4)] + [f"SM75_U16x{n}_LDSM_T" for n in (2, 4, 8)]
    out += [f"SM90_U32x{n}_STSM_N" for n in (1, 2, 4)] + [f"SM90_U16x{n}_STSM_T" for n in (2, 4, 8)]
    out += [f"SM80_CP_ASYNC_CACHEALWAYS<{t}>" for t in ("uint32_t", "uint64_t", "uint128_t")]
    out += ["SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>"]
    out += [f"UniversalCopy<{t}>" for t in _UINT_BITS]
    return tuple(out)


provide("mma_atom", mma_atom)  # make_tiled_mma("SM80_16x8x16_F32F16F16F32_TN", ...) in layoutalg.tiled
