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
"""

from __future__ import annotations

from functools import lru_cache

from ..errors import LayoutError
from ..layout import Layout
from .fragment import Fragment
from .ptx_formulas import FORMULAS

__all__ = ["fragment", "address_lanes", "catalog"]


def _check(num: int, dtype: str, op: str) -> None:
    if num not in (1, 2, 4):
        raise LayoutError(f"{op}: .x{num} is not one of .x1, .x2, .x4 (num must be 1, 2 or 4)")
    if dtype != "b16":
        raise LayoutError(f"{op}: only .m8n8 .b16 is catalogued; got dtype {dtype!r}")


@lru_cache(maxsize=None)
def fragment(num: int = 4, trans: bool = False, *, dtype: str = "b16", store: bool = False) -> Fragment:
    """The register fragment of ``ldmatrix`` (or ``stmatrix`` with ``store=True``) ``.m8n8.x{num}{.trans}.b16``.

    >>> fragment(1, trans=True).coords(6, 1)
    (5, 1)
    """
    op = "stmatrix fragment" if store else "ldmatrix fragment"
    _check(num, dtype, op)
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
