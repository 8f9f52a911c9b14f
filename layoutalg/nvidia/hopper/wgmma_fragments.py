"""wgmma register fragments: the accumulator D and A-from-registers over a 128-thread warpgroup.

``wgmma.mma_async.m64nNkK`` is executed by a warpgroup of four warps. Warp ``w`` owns rows
``16w .. 16w+15`` and, inside them, holds exactly what an ``mma.m16n8kK`` fragment holds, repeated
along N every 8 columns. So the TV layout is the m16n8 layout with one more thread mode (the warp,
stride 16 rows) and one more value mode (the N/8 column blocks, stride ``8*64``). For D over the
64xN matrix (index ``m + 64*n``)::

    ((4,8,4),(2,2,N/8)):((128,1,16),(64,8,512))

By hand: thread 37 is lane 5 of warp 1, thread coordinate (1, 1, 1); value 6 is (0, 1, 1).
``128 + 1 + 16 + 8 + 512 = 665 = 25 + 64*10``: D[25][10] (row 16 + groupID 1 + 8, column
2*1 + 8).

    >>> d = fragment("m64n16k16", "f32", "D")
    >>> str(d.layout), d.coords(37, 6), d.num_registers
    ('((4,8,4),(2,2,2)):((128,1,16),(64,8,512))', (25, 10), 8)

The ISA draws these fragments (Figures 148, 149 and their k8 / k32 siblings) without printing a
formula; :mod:`layoutalg.nvidia.common.ptx_formulas` holds the formula read off the figures
(``source="figure"``), and the tests check these layouts against it and against CUTLASS's
``CLayout_64xN`` / ``ALayout_64x{8,16,32}``.
"""

from __future__ import annotations

from functools import cache

from ...errors import LayoutError
from ...layout import Layout
from ..common.dtypes import dtype_name
from ..common.fragment import Fragment, parse_mnk, element_bits
from ..common.ptx_formulas import FORMULAS

__all__ = ["fragment", "catalog", "valid_n"]

#: K of the instruction by multiplicand type (dense wgmma).
K_BY_TYPE = {"f16": 16, "bf16": 16, "tf32": 8, "e4m3": 32, "e5m2": 32, "s8": 32, "u8": 32, "b1": 256}
#: Accumulator types by multiplicand type.
ACC_BY_TYPE = {
    "f16": ("f32", "f16"),
    "bf16": ("f32",),
    "tf32": ("f32",),
    "e4m3": ("f32", "f16"),
    "e5m2": ("f32", "f16"),
    "s8": ("s32",),
    "u8": ("s32",),
    "b1": ("s32",),
}
#: Multiplicand types that may come from registers (A only).
A_REGISTER_TYPES = ("f16", "bf16", "tf32", "e4m3", "e5m2", "s8", "u8")

_INT_N = tuple([8, 16, 24] + list(range(32, 257, 16)))


def valid_n(dtype: str) -> tuple:
    """Legal N of ``wgmma.mma_async.m64nNkK`` for multiplicand ``dtype`` ("Matrix Shape" table).

    >>> valid_n("f16")[:3], len(valid_n("f16")), valid_n("s8")[:5]
    ((8, 16, 24), 32, (8, 16, 24, 32, 48))
    """
    dtype = dtype_name(dtype, allowed=K_BY_TYPE, op="wgmma valid_n")
    return _INT_N if dtype in ("s8", "u8", "b1") else tuple(range(8, 257, 8))


_W = (4, 8, 4)  # (threadID_in_group, groupID, warp)


def _d_layout(N: int) -> Layout:
    return Layout((_W, (2, 2, N // 8)), ((128, 1, 16), (64, 8, 512)))


_A_LAYOUTS = {
    # bits: (value shape, (thread stride tig, value strides)) over the 64xK matrix, index m + 64*k
    32: ((2, 2), (64, (8, 256))),  # k8 tf32: k = t + 4*(i>>1), m = g + 8*(i&1)
    16: ((2, 2, 2), (128, (64, 8, 512))),  # k16: k = 2t + (i&1) + 8*(i>>2), m = g + 8*((i>>1)&1)
    8: ((4, 2, 2), (256, (64, 8, 1024))),  # k32: k = 4t + (i&3) + 16*(i>>3), m = g + 8*((i>>2)&1)
}


def _resolve_type(dtype: str, operand: str, K: int, op: str, ctype: str | None = None):
    """(multiplicand type, accumulator type) for the requested fragment (the catalog's accumulator rule:
    see :func:`layoutalg.nvidia.ampere.mma.fragment`)."""
    dtype = dtype_name(dtype, op=op)
    if ctype is not None:
        ctype = dtype_name(ctype, op=f"{op}: ctype")
    if operand == "A":
        if ctype is not None:
            raise LayoutError(f"{op}: ctype={ctype!r} is the accumulator type of D; the A fragment does not depend on "
                              "it (leave it out, or ask for operand 'D')")
        if dtype not in A_REGISTER_TYPES:
            raise LayoutError(f"{op}: A from registers takes .{'/.'.join(A_REGISTER_TYPES)}; got {dtype!r}")
        if K_BY_TYPE[dtype] != K:
            raise LayoutError(f"{op}: .{dtype} wgmma has K = {K_BY_TYPE[dtype]}, not {K}")
        return dtype, None
    # D: dtype names the multiplicand when this K has one of that name, else the accumulator
    mults = [t for t, k in K_BY_TYPE.items() if k == K]
    if not mults:
        raise LayoutError(f"{op}: no wgmma has K = {K}; K is {sorted(set(K_BY_TYPE.values()))}")
    if dtype in mults:
        ins = dtype
        accs = ACC_BY_TYPE[ins]
        if ctype is None:
            ctype = "f32" if "f32" in accs else accs[0]
        if ctype not in accs:
            raise LayoutError(f"{op}: accumulator .{ctype} is not valid for .{ins}; valid: {', '.join(accs)}")
        return ins, ctype
    valid = sorted({a for t in mults for a in ACC_BY_TYPE[t]})
    if dtype not in valid:
        raise LayoutError(f"{op}: {dtype!r} is neither a multiplicand (K = {K}: {', '.join(mults)}) nor an "
                          f"accumulator ({', '.join(valid)}) of a K = {K} wgmma")
    if ctype is not None and ctype != dtype:
        raise LayoutError(f"{op}: dtype {dtype!r} names the accumulator here, and ctype={ctype!r} another one")
    ins = next(t for t in mults if dtype in ACC_BY_TYPE[t])
    return ins, dtype


@cache
def fragment(shape: str, dtype: str, operand: str, ctype: str | None = None) -> Fragment:
    """wgmma register fragment of ``operand`` ``"D"`` (or ``"C"``) or ``"A"`` for ``shape = "m64n{N}k{K}"``.

    The catalog's one accumulator rule (as :func:`layoutalg.nvidia.ampere.mma.fragment`): ``dtype`` is the
    multiplicand type (any spelling :func:`~layoutalg.nvidia.common.dtypes.dtype_name` reads, e.g. CuTe's
    ``"half_t"``); for D, ``ctype`` is the accumulator, by default ``f32`` where the instruction allows
    it (``s32`` for integers); a ``dtype`` that is no multiplicand of this K names the accumulator
    (``fragment("m64n8k16", "f32", "D")``). Threads are the warpgroup's 128 ``%tid`` values (warp
    ``tid // 32``, lane ``tid % 32``).

    >>> fragment("m64n8k16", "f16", "D").dtype, fragment("m64n8k16", "f16", "D", ctype="f16").dtype
    ('f32', 'f16')

    >>> fragment("m64n8k8", "tf32", "A").coords(33, 3)
    (24, 5)
    """
    op = "wgmma fragment"
    M, N, K = parse_mnk(shape)
    operand = str(operand).upper()
    if operand not in ("A", "C", "D"):
        raise LayoutError(f"{op}: operand {operand!r} must be 'A' (registers) or 'D'/'C'; B is always in shared memory")
    if M != 64:
        raise LayoutError(f"{op}: wgmma has M = 64, got {shape!r}")
    ins, acc = _resolve_type(dtype, operand, K, op, ctype)
    if N not in valid_n(ins):
        raise LayoutError(f"{op}: N = {N} is not legal for .{ins}; valid N: {valid_n(ins)}")
    if operand == "A":
        bits = element_bits(ins)
        vshape, (tstride, vstride) = _A_LAYOUTS[bits]
        layout = Layout((_W, vshape), ((tstride, 1, 16), vstride))
        fkey, codomain, elem = f"wgmma.A.{bits}bit", (M, K), ins
    else:
        layout = _d_layout(N)
        fkey, codomain, elem, bits = "wgmma.D", (M, N), acc, element_bits(acc)
    f = FORMULAS[fkey]
    instr = f"wgmma.mma_async.sync.aligned.{shape}.{acc or ACC_BY_TYPE[ins][0]}.{ins}.{ins}"
    return Fragment(
        instruction=instr,
        shape=shape,
        operand=operand,
        dtype=elem,
        layout=layout,
        codomain=codomain,
        formula_key=fkey,
        element_bits=bits,
        variant=(("ctype", acc),) if acc else (),
        ptx_section=f.section,
        figure=f.figure,
        min_sm="sm_90a",
        ptx_isa="8.0",
    )


def catalog() -> tuple:
    """Every wgmma register fragment, as the arguments of ``fragment``: ``(shape, dtype, "A")`` and
    ``(shape, dtype, "D", ctype)`` (one D per accumulator type and K; its layout is the same for every
    multiplicand of that K).

    >>> entries = catalog()
    >>> ("m64n256k16", "f16", "D", "f32") in entries, ("m64n8k32", "s8", "A") in entries
    (True, True)
    """
    out: list[tuple] = []
    for acc, types in (("f32", ("tf32", "f16", "e4m3")), ("f16", ("f16", "e4m3")), ("s32", ("s8", "b1"))):
        for ins in types:
            for n in valid_n(ins):
                out.append((f"m64n{n}k{K_BY_TYPE[ins]}", ins, "D", acc))
    for ins in A_REGISTER_TYPES:
        for n in valid_n(ins):
            out.append((f"m64n{n}k{K_BY_TYPE[ins]}", ins, "A"))
    return tuple(out)
