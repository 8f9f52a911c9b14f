"""ldmatrix / stmatrix: which lane holds which element of the 8x8 matrices, and who supplies addresses.

``ldmatrix.sync.aligned.m8n8.x{1,2,4}{.trans}.shared.b16`` loads one, two or four 8x8 matrices of
16-bit elements. Lanes ``8j .. 8j+7`` supply the row addresses of matrix ``j``; afterwards every
lane holds, in its register ``r_j``, two consecutive elements of a row of matrix ``j``: lane ``l``
gets row ``l >> 2``, columns ``2*(l % 4)`` and ``2*(l % 4) + 1`` (the layout of an ``mma`` m8n8
accumulator). ``.trans`` delivers the transposed matrix: lane ``l`` gets *column* ``l >> 2``,
rows ``2*(l % 4)`` and ``+1``. ``stmatrix`` stores the same fragment back.

The TV layout maps ``(lane, value)`` to ``row + 8*col + 64*matrix``, value ``i = 2*j + e``
(element ``e`` of register ``r_j``)::

    x4:        ((4,8),(2,4)):((16,1),(8,64))
    x4.trans:  ((4,8),(2,4)):((2,8),(1,64))

By hand, lane 6 (thread coordinate (2, 1)), value 5 (element 1 of r_2) without ``.trans``:
``2*16 + 1 + 8 + 2*64 = 169 = 1 + 8*5 + 64*2``, matrix 2, row 1, column 5.

    >>> f = fragment(4)
    >>> f.batch_index(6, 5), f.coords(6, 5)
    (2, (1, 5))
    >>> [int(l) for l in address_lanes(2).table()[:10]]
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]

Not catalogued: the 8/6/4-bit shapes of ``ldmatrix`` (ISA 9.7.9.26 syntax
``ldmatrix.sync.aligned.m16n16.num.trans{.ss}.dst_fmt.src_fmt`` / ``.m16n16 ... .b8`` and
``ldmatrix.sync.aligned.m8n16.num{.ss}.b8x16.{b6x16_p32,b4x16_p64}``; ``.m16n16`` takes only ``.x1`` /
``.x2`` and ``.trans`` is mandatory). Why not, precisely: (1) the ISA gives their register layouts only
as figures ("ldmatrix fragment layout for one 16x16 matrix with 8-bit elements", and the 8x16 ones),
with no printed formula, so the independent transcription every other entry is proven against does not
exist in text; the text says only that four consecutive threads load a row, each thread four consecutive
bytes, a 16x16 matrix landing in two registers per thread; (2) the machine-readable second source,
CUTLASS's ``Copy_Traits<SM100_U8x8_LDSM_T>`` / ``SM100_U8x16_LDSM_T`` (``cute/atom/copy_traits_sm100.hpp``),
describes the registers *after* a byte shuffle its ``copy()`` applies to the instruction's output
(``{t0.x, t0.y, t1.x, t1.y}``, ...), so it is not the instruction's layout and cannot stand in for the
figure; its ``SM100_SU{4,6}_DU8x16_x{1,2,4}_LDSM_N`` (``.m8n16``) maps lane ``l`` to 32 contiguous bits,
row ``l >> 2``, bytes ``4*(l % 4) .. +3`` of each 8x16 matrix -- the ISA's sentence -- but how the 6-/4-bit
source values sit in the 8-bit containers is again only in a figure; (3) these forms need an
``sm_100a``-class target (CUTLASS guards them with ``CUTE_ARCH_LDSM_SM100A_ENABLED``; PTX ISA 8.6), and the
only machine at hand, an H100 (``sm_90a``), cannot record them. ``dtype="b8"`` therefore raises :class:`LayoutError` naming this.
"""

from __future__ import annotations

from functools import cache

from ...errors import LayoutError
from ...layout import Layout
from ..common.dtypes import dtype_name
from ..common.fragment import Fragment
from ..common.ptx_formulas import FORMULAS

__all__ = ["fragment", "address_lanes", "catalog"]


def _check(num: int, dtype: str, op: str) -> None:
    if num not in (1, 2, 4):
        raise LayoutError(f"{op}: .x{num} is not one of .x1, .x2, .x4 (num must be 1, 2 or 4)")
    if not isinstance(dtype, str) or dtype_name(dtype, op=op) not in ("b16", "f16", "bf16", "s16", "u16"):
        raise LayoutError(
            f"{op}: only .m8n8 .b16 is catalogued; got dtype {dtype!r} (the .m16n16/.m8n16 .b8 forms, sm_100a-class, "
            "exist in the ISA only as figures; see the module docstring)"
        )


@cache
def fragment(num: int = 4, trans: bool = False, *, dtype: str = "b16", store: bool = False) -> Fragment:
    """The register fragment of ``ldmatrix`` (or ``stmatrix`` with ``store=True``) ``.m8n8.x{num}{.trans}.b16``.

    >>> fragment(1, trans=True).coords(6, 1)
    (5, 1)
    """
    op = "stmatrix fragment" if store else "ldmatrix fragment"
    _check(num, dtype, op)
    dtype = "b16"  # any 16-bit type moves as .b16
    if trans:
        layout = Layout(((4, 8), (2, num)), ((2, 8), (1, 64)))
    else:
        layout = Layout(((4, 8), (2, num)), ((16, 1), (8, 64)))
    fkey = "ldmatrix.m8n8.b16.trans" if trans else "ldmatrix.m8n8.b16"
    f = FORMULAS[fkey]
    verb = "stmatrix" if store else "ldmatrix"
    instr = f"{verb}.sync.aligned.m8n8.x{num}{'.trans' if trans else ''}.shared.b16"
    return Fragment(
        instruction=instr,
        shape="m8n8",
        operand="M",
        dtype=dtype,
        layout=layout,
        codomain=(8, 8),
        formula_key=fkey,
        element_bits=16,
        batch=num,
        batch_name="matrix",
        variant=(("num", num), ("trans", trans)),
        ptx_section=f.section,
        figure=f.figure,
        min_sm="sm_90" if store else "sm_75",
        ptx_isa="7.8" if store else "6.5",
    )


def address_lanes(num: int = 4) -> Layout:
    """``(row, matrix) -> lane`` that supplies the shared-memory address of that row: ``(8, num):(1, 8)``.

    For ``.x1`` lanes 0-7 are read, for ``.x2`` lanes 0-15, for ``.x4`` all 32.
    """
    _check(num, "b16", "address_lanes")
    return Layout((8, num), (1, 8))


def catalog() -> tuple:
    """Every catalogued ``(num, trans, store)`` combination."""
    return tuple((n, t, s) for s in (False, True) for t in (False, True) for n in (1, 2, 4))
