"""The worked examples of the public CuTe documentation, reproduced as tests of layoutalg.

Every expected value below is the answer *printed in the documentation* (CUTLASS repository,
``media/docs/cpp/cute/*.md``, the older ``media/docs/cute/*.md`` and the CuTe DSL notebook
``examples/python/CuTeDSL/notebooks/cute_layout_algebra.ipynb``), never a value computed by layoutalg.
Doc strings are pasted in CuTe spelling (``_8`` = static 8); ``doc()`` strips the underscores.

Two kinds of check:

- ``assert_prints(got, text)``: layoutalg prints exactly what CuTe prints (``str`` equality);
- ``assert_same_function(got, text)``: same size, same evaluation table and compatible shapes; used
  where CuTe's spelling may legitimately differ (a dynamic-integer result keeping size-1 modes, an
  older doc showing an un-coalesced mode, ...). The comment next to each such use says why.

Where a doc is self-inconsistent (an example whose stated answer contradicts its own stated inputs)
the test is an ``xfail(strict=True)`` that records the typo; the corrected doc version is tested too.
"""

from __future__ import annotations

import numpy as np
import pytest

from layoutalg import (
    Layout,
    append,
    blocked_product,
    coalesce,
    complement,
    composition,
    flat_divide,
    flat_product,
    group,
    logical_divide,
    logical_product,
    make_layout,
    make_ordered_layout,
    parse,
    prepend,
    raked_product,
    size,
    tiled_divide,
    tiled_product,
    zipped_divide,
    zipped_product,
)
from layoutalg import flatten as flatten_any
from layoutalg import inttuple as it


def doc(text: str) -> Layout:
    """A layout written in CuTe's printed notation (static ints as ``_8``)."""
    return parse(text.replace("_", ""))


def assert_prints(got: Layout, text: str) -> None:
    """layoutalg prints exactly what CuTe prints (underscores of static ints stripped)."""
    assert str(got) == text.replace("_", "").replace(" ", "")


def assert_same_function(got: Layout, text: str) -> None:
    """Same function as the documented layout: size, table, and compatible shapes."""
    exp = doc(text)
    assert size(got) == size(exp)
    assert got.table().tolist() == exp.table().tolist()
    # CuTe keeps size-1 modes it cannot prove static ("The 1s in the shape don't affect the layout as a
    # mathematical function", 02_layout_algebra.md); such spellings match once the 1s are dropped.
    assert (
        it.compatible(got.shape, exp.shape)
        or it.compatible(exp.shape, got.shape)
        or _non_unit_leaves(got.shape) == _non_unit_leaves(exp.shape)
    ), (got, exp)


def _non_unit_leaves(shape) -> tuple:
    return tuple(s for s in it.flatten(shape) if s != 1)


def grid_of(rows: str) -> list[list[int]]:
    """A printed table (rows of integers, whitespace separated) as a list of lists."""
    return [[int(v) for v in line.split()] for line in rows.strip().splitlines()]


def print_layout_body(text: str) -> list[list[int]]:
    """The cell values of a ``print_layout`` box table (``| 0 | 2 | ...``)."""
    out = []
    for line in text.strip().splitlines():
        if "|" in line:
            cells = [c.strip() for c in line.split("|")[1:-1]]
            out.append([int(c) for c in cells])
    return out


def md_table_body(text: str) -> list[list[int]]:
    """The cells (without the row label) of a markdown table ``| (0,0) | 0 | 2 | ...``."""
    out = []
    for line in text.strip().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not cells[0].startswith("(") or cells[1].startswith("("):
            continue  # header or separator
        out.append([int(c) for c in cells[1:]])
    return out


# =============================================================================================
# media/docs/cpp/cute/01_layout.md -- constructing, printing and evaluating layouts
# =============================================================================================


@pytest.mark.parametrize(
    "made, printed",
    [
        # 01_layout.md "Constructing a Layout": print of each layout (all exact spellings).
        (lambda: Layout(8), "_8:_1"),  # s8
        (lambda: Layout((2, 4)), "(_2,_4):(_1,_2)"),  # s2xs4
        (lambda: Layout((2, 4), (12, 1)), "(_2,4):(_12,_1)"),  # s2xd4_a
        (lambda: make_layout((2, 4), order="right"), "(_2,4):(4,_1)"),  # s2xd4_row
        (lambda: Layout((2, (2, 2)), (4, (2, 1))), "(2,(2,2)):(4,(2,1))"),  # s2xh4
        (lambda: Layout((2, (2, 2))), "(2,(2,2)):(_1,(2,4))"),  # s2xh4_col (LayoutLeft)
        # "the strides of s2xh4 above could be generated with LayoutRight"
        (lambda: make_layout((2, (2, 2)), order="right"), "(2,(2,2)):(4,(2,1))"),
    ],
)
def test_01_layout_construction_prints(made, printed):
    assert_prints(made(), printed)


S2XS4 = "(_2,_4):(_1,_2)"
S2XD4_A = "(_2,4):(_12,_1)"
S2XH4_COL = "(2,(2,2)):(_1,(2,4))"
S2XH4 = "(2,(2,2)):(4,(2,1))"


@pytest.mark.parametrize(
    "text, table2d, table1d",
    [
        # 01_layout.md "Using a Layout": print2D and print1D outputs.
        (S2XS4, "0 2 4 6\n1 3 5 7", "0 1 2 3 4 5 6 7"),
        (S2XD4_A, "0 1 2 3\n12 13 14 15", "0 12 1 13 2 14 3 15"),
        (S2XH4_COL, "0 2 4 6\n1 3 5 7", "0 1 2 3 4 5 6 7"),
        (S2XH4, "0 2 1 3\n4 6 5 7", "0 4 2 6 1 5 3 7"),
    ],
)
def test_01_layout_print2d_print1d(text, table2d, table1d):
    L = doc(text)
    assert L.grid().tolist() == grid_of(table2d)
    assert L.table().tolist() == [int(v) for v in table1d.split()]
    # layout(m, n) with a 1-D coordinate into the hierarchical second mode
    G = grid_of(table2d)
    assert [[L(m, n) for n in range(len(G[0]))] for m in range(len(G))] == G


def test_01_layout_print_layout_s2xh4():
    # 01_layout.md: print_layout(s2xh4)
    printed = """
      0   1   2   3
    +---+---+---+---+
 0  | 0 | 2 | 1 | 3 |
    +---+---+---+---+
 1  | 4 | 6 | 5 | 7 |
    +---+---+---+---+
"""
    assert doc(S2XH4).grid().tolist() == print_layout_body(printed)


@pytest.mark.parametrize(
    "text, indices",
    [
        # 01_layout.md "Vector Layouts"
        ("8:1", "0  1  2  3  4  5  6  7"),
        ("8:2", "0  2  4  6  8 10 12 14"),
        ("((4,2)):((2,1))", "0  2  4  6  1  3  5  7"),
        ("((4,2)):((1,4))", "0  1  2  3  4  5  6  7"),
    ],
)
def test_01_layout_vector_layouts(text, indices):
    L = doc(text)
    assert len(L) == 1  # "we also interpret ((4,2)):((2,1)) as a vector, since its shape is rank-1"
    assert L.table().tolist() == [int(v) for v in indices.split()]


def test_01_layout_vector_identity_is_8_1():
    # "As a function from integers to integers, it's identical to 8:1."
    assert_same_function(doc("((4,2)):((1,4))"), "8:1")
    assert_prints(coalesce(doc("((4,2)):((1,4))")), "8:1")


@pytest.mark.parametrize(
    "text, rows",
    [
        # 01_layout.md "Matrix examples"
        ("(4,2):(1,4)", "0 4\n1 5\n2 6\n3 7"),
        ("(4,2):(2,1)", "0 1\n2 3\n4 5\n6 7"),
        ("((2,2),2):((4,1),2)", "0 2\n4 6\n1 3\n5 7"),
    ],
)
def test_01_layout_matrix_examples(text, rows):
    assert doc(text).grid().tolist() == grid_of(rows)


@pytest.mark.parametrize(
    "a, b, expected",
    [
        # 01_layout.md "Layout compatibility" (all ten statements)
        (24, 32, False),
        (24, (4, 6), True),
        ((4, 6), ((2, 2), 6), True),
        (((2, 2), 6), ((2, 2), (3, 2)), True),
        (24, ((2, 2), (3, 2)), True),
        (24, ((2, 3), 4), True),
        (((2, 3), 4), ((2, 2), (3, 2)), False),
        (((2, 2), (3, 2)), ((2, 3), 4), False),
        (24, (24,), True),
        ((24,), 24, False),
        ((24,), (4, 6), False),
    ],
)
def test_01_layout_compatibility(a, b, expected):
    assert it.compatible(a, b) is expected


# 01_layout.md "Coordinate Mapping": the table of 1-D, 2-D and natural coordinates of (3,(2,3)).
COORD_TABLE = """
|  `0`  | `(0,0)` | `(0,(0,0))` | |  `9`  | `(0,3)` | `(0,(1,1))` |
|  `1`  | `(1,0)` | `(1,(0,0))` | | `10`  | `(1,3)` | `(1,(1,1))` |
|  `2`  | `(2,0)` | `(2,(0,0))` | | `11`  | `(2,3)` | `(2,(1,1))` |
|  `3`  | `(0,1)` | `(0,(1,0))` | | `12`  | `(0,4)` | `(0,(0,2))` |
|  `4`  | `(1,1)` | `(1,(1,0))` | | `13`  | `(1,4)` | `(1,(0,2))` |
|  `5`  | `(2,1)` | `(2,(1,0))` | | `14`  | `(2,4)` | `(2,(0,2))` |
|  `6`  | `(0,2)` | `(0,(0,1))` | | `15`  | `(0,5)` | `(0,(1,2))` |
|  `7`  | `(1,2)` | `(1,(0,1))` | | `16`  | `(1,5)` | `(1,(1,2))` |
|  `8`  | `(2,2)` | `(2,(0,1))` | | `17`  | `(2,5)` | `(2,(1,2))` |
"""


def _coord_rows():
    rows = []
    for line in COORD_TABLE.strip().splitlines():
        cells = [c.strip().strip("`") for c in line.strip().strip("|").split("|")]
        for k in (0, 4):
            rows.append((int(cells[k]), eval(cells[k + 1]), eval(cells[k + 2])))  # noqa: S307 - literal tuples
    return rows


@pytest.mark.parametrize("idx, crd2, natural", _coord_rows())
def test_01_layout_coordinate_mapping_table(idx, crd2, natural):
    shape = (3, (2, 3))
    assert it.idx2crd(idx, shape) == natural
    assert it.idx2crd(crd2, shape) == natural
    assert it.idx2crd(natural, shape) == natural


def test_01_layout_idx2crd_examples():
    # 01_layout.md: print(idx2crd(16, shape)) etc. with shape (_3,(_2,_3)) -> (1,(1,2)) in every case
    shape = (3, (2, 3))
    assert it.idx2crd(16, shape) == (1, (1, 2))
    assert it.idx2crd((1, 5), shape) == (1, (1, 2))
    assert it.idx2crd((1, (1, 2)), shape) == (1, (1, 2))


def test_01_layout_index_mapping_table_and_crd2idx():
    # 01_layout.md "Index Mapping": layout (3,(2,3)):(3,(12,1)) drawn with i as row, (j,k) as column
    printed = """
       0     1     2     3     4     5     <== 1-D col coord
     (0,0) (1,0) (0,1) (1,1) (0,2) (1,2)   <== 2-D col coord (j,k)
    +-----+-----+-----+-----+-----+-----+
 0  |  0  |  12 |  1  |  13 |  2  |  14 |
    +-----+-----+-----+-----+-----+-----+
 1  |  3  |  15 |  4  |  16 |  5  |  17 |
    +-----+-----+-----+-----+-----+-----+
 2  |  6  |  18 |  7  |  19 |  8  |  20 |
    +-----+-----+-----+-----+-----+-----+
"""
    L = doc("(3,(2,3)):(3,(12,1))")
    assert L.grid().tolist() == print_layout_body(printed)
    # crd2idx examples: all print 17
    shape, stride = (3, (2, 3)), (3, (12, 1))
    assert it.crd2idx(16, shape, stride) == 17
    assert it.crd2idx((1, 5), shape, stride) == 17
    assert it.crd2idx((1, (1, 2)), shape, stride) == 17
    assert L(16) == L(1, 5) == L(1, (1, 2)) == 17


def test_01_layout_sublayouts():
    # 01_layout.md "Sublayouts": layout<I...>, select<I...>, take<B,E>
    a = Layout((4, (3, 6)))
    assert_prints(a, "(4,(3,6)):(1,(4,12))")
    assert_prints(a[0], "4:1")
    assert_prints(a[1], "(3,6):(4,12)")
    assert_prints(a[1][0], "3:4")
    assert_prints(a[1][1], "6:12")
    b = Layout((2, 3, 5, 7))
    assert_prints(b, "(2,3,5,7):(1,2,6,30)")
    assert_prints(make_layout(b[1], b[3]), "(3,7):(2,30)")  # select<1,3>
    assert_prints(make_layout(b[0], b[1], b[3]), "(2,3,7):(1,2,30)")  # select<0,1,3>
    assert_prints(make_layout(b[2]), "(5):(6)")  # select<2>
    assert_prints(b[1:3], "(3,5):(2,6)")  # take<1,3>
    assert_prints(b[1:4], "(3,5,7):(2,6,30)")  # take<1,4>


def test_01_layout_concatenation():
    # 01_layout.md "Concatenation": make_layout, append, prepend (all exact)
    a, b = doc("_3:_1"), doc("_4:_3")
    assert_prints(make_layout(a, b), "(3,4):(1,3)")
    assert_prints(make_layout(b, a), "(4,3):(3,1)")
    row, col = make_layout(a, b), make_layout(b, a)
    assert_prints(make_layout(row, col), "((3,4),(4,3)):((1,3),(3,1))")
    assert_prints(make_layout(a), "(3):(1)")
    assert_prints(make_layout(make_layout(a)), "((3)):((1))")
    assert_prints(make_layout(a, make_layout(a), a), "(3,(3),3):(1,(1),1)")
    ab = append(a, b)
    assert_prints(ab, "(3,4):(1,3)")
    assert_prints(prepend(a, b), "(4,3):(3,1)")
    c = append(ab, ab)
    assert_prints(c, "(3,4,(3,4)):(1,3,(1,3))")
    assert_prints(make_layout(c[0], c[1], b), "(3,4,4):(1,3,3)")  # replace<2>(c, b)


def test_01_layout_group_and_flatten():
    # 01_layout.md "Grouping and flattening"
    a = doc("(_2,_3,_5,_7):(_1,_2,_6,_30)")
    assert_prints(Layout((2, 3, 5, 7)), "(_2,_3,_5,_7):(_1,_2,_6,_30)")
    b = group(a, 0, 2)
    assert_prints(b, "((_2,_3),_5,_7):((_1,_2),_6,_30)")
    c = group(b, 1, 3)
    assert_prints(c, "((_2,_3),(_5,_7)):((_1,_2),(_6,_30))")
    assert_prints(flatten_any(b), "(_2,_3,_5,_7):(_1,_2,_6,_30)")
    assert_prints(flatten_any(c), "(_2,_3,_5,_7):(_1,_2,_6,_30)")


def test_old_02_layout_operations_flatten_examples():
    # media/docs/cute/02_layout_operations.md "Flatten"
    assert_prints(flatten_any(doc("((_4,_3),_1):((_3,_1),_0)")), "(_4,_3,_1):(_3,_1,_0)")
    assert_prints(flatten_any(doc("(_4,(_4,_2)):(_4,(_1,_16))")), "(_4,_4,_2):(_4,_1,_16)")


def test_old_02_layout_operations_print_layout_2x3():
    # media/docs/cute/02_layout_operations.md "Layout": print_layout((_2,_3):(_3,_1)), the 1-D loop,
    # and layout(1,1) == 4
    printed = """
      0   1   2
    +---+---+---+
 0  | 0 | 1 | 2 |
    +---+---+---+
 1  | 3 | 4 | 5 |
    +---+---+---+
"""
    L = doc("(_2,_3):(_3,_1)")
    assert L.grid().tolist() == print_layout_body(printed)
    assert L.table().tolist() == [0, 3, 1, 4, 2, 5]
    assert L(1, 1) == 4


@pytest.mark.xfail(strict=True, reason="media/docs/cute/01_layout.md (old) typo: layout_2x4 is declared "
                   "(2,(2,2)):(4,(1,2)) but its print2D/print1D outputs are those of (2,(2,2)):(4,(2,1)); "
                   "the current 01_layout.md fixes the stride")
def test_old_01_layout_layout_2x4_typo():
    L = Layout((2, (2, 2)), (4, (1, 2)))
    assert L.grid().tolist() == grid_of("0 2 1 3\n4 6 5 7")
    assert L.table().tolist() == [0, 4, 2, 6, 1, 5, 3, 7]


# =============================================================================================
# media/docs/cpp/cute/02_layout_algebra.md -- coalesce and composition
# =============================================================================================


def test_02_coalesce():
    # 02_layout_algebra.md "Coalesce": exact
    assert_prints(coalesce(doc("(_2,(_1,_6)):(_1,(_6,_2))")), "_12:_1")


def test_02_coalesce_by_mode():
    # 02_layout_algebra.md "By-mode Coalesce": coalesce(a, Step<_1,_1>{}) -> (_2,_6):(_1,_2), exact
    a = doc("(_2,(_1,_6)):(_1,(_6,_2))")
    assert_prints(coalesce(a, (1, 1)), "(_2,_6):(_1,_2)")
    assert coalesce(a, (1, 1)) == make_layout(coalesce(a[0]), coalesce(a[1]))


def test_notebook_coalesce_post_conditions_example():
    # cute_layout_algebra.ipynb "coalesce_post_conditions": exact print (24,6):(4,2)
    L = doc("((2,(3,4)),(3,2),1):((4,(8,24)),(2,6),12)")
    R = coalesce(L)
    assert_prints(R, "(24,6):(4,2)")
    assert size(R) == 144
    assert R.table().tolist() == L.table().tolist()


def test_old_02_layout_operations_coalesce_row_major_unchanged():
    # media/docs/cute/02_layout_operations.md: "coalescing the row-major layout (2,2):(2,1) is (2,2):(2,1)"
    assert_prints(coalesce(doc("(2,2):(2,1)")), "(2,2):(2,1)")


def test_02_composition_worked_example():
    # 02_layout_algebra.md "Composition": A=(6,2):(8,2), B=(4,3):(3,1); R = ((2,2),3):((24,2),8) (exact,
    # also printed by the DSL notebook) and the listed values R(0..11)
    A, B = doc("(6,2):(8,2)"), doc("(4,3):(3,1)")
    R = composition(A, B)
    assert_prints(R, "((2,2),3):((24,2),8)")
    assert R.table().tolist() == [0, 24, 2, 26, 8, 32, 10, 34, 16, 40, 18, 42]
    assert it.compatible(B.shape, R.shape)
    # the two sub-compositions of "Example 1"
    assert_prints(composition(A, doc("4:3")), "(2,2):(24,2)")
    assert_same_function(composition(A, doc("3:1")), "(3,1):(8,2)")  # CuTe shows the size-1 mode


@pytest.mark.parametrize(
    "a, d, expected",
    [
        # 02_layout_algebra.md "Computing Composition": dividing out the first d elements of a shape
        ((6, 2), 2, (3, 2)),
        ((6, 2), 3, (2, 2)),
        ((6, 2), 6, (1, 2)),
        ((6, 2), 12, (1, 1)),
        ((3, 6, 2, 8), 3, (1, 6, 2, 8)),
        ((3, 6, 2, 8), 6, (1, 3, 2, 8)),
        ((3, 6, 2, 8), 9, (1, 2, 2, 8)),
        ((3, 6, 2, 8), 72, (1, 1, 1, 4)),
        # media/docs/cute/02_layout_algebra.md (old)
        ((42, 16, 3), 2, (21, 16, 3)),
        ((42, 16, 3), 6, (7, 16, 3)),
    ],
)
def test_02_shape_div_examples(a, d, expected):
    assert it.shape_div(a, d) == expected


@pytest.mark.parametrize(
    "shape, s, kept",
    [
        # 02_layout_algebra.md: "modding out" the first s elements. Checked through composition: the
        # first s elements of the compact layout `shape` keep exactly the documented modes.
        ((6, 2), 2, (2, 1)),
        ((6, 2), 3, (3, 1)),
        ((6, 2), 6, (6, 1)),
        ((6, 2), 12, (6, 2)),
        ((3, 6, 2, 8), 6, (3, 2, 1, 1)),
        ((3, 6, 2, 8), 9, (3, 3, 1, 1)),
        ((1, 2, 2, 8), 2, (1, 2, 1, 1)),
        ((1, 2, 2, 8), 16, (1, 2, 2, 4)),
    ],
)
def test_02_shape_mod_examples(shape, s, kept):
    strides = (1000, 100, 10, 1)[: len(shape)]
    A = Layout(shape, strides)
    R = composition(A, Layout(s, 1))
    assert_same_function(R, str(Layout(kept, strides)))


def test_02_composition_with_symbolic_strides():
    # 02_layout_algebra.md: (3,6,2,8):(w,x,y,z) o 16:9 = (1,2,2,4):(9*w,3*x,y,z)
    from layoutalg import symbol

    w, x, y, z = (symbol(c) for c in "wxyz")
    R = composition(Layout((3, 6, 2, 8), (w, x, y, z)), Layout(16, 9))
    vals = {w: 1000, x: 100, y: 10, z: 1}
    # CuTe's spelling keeps the leading size-1 mode; compare as functions
    assert_same_function(R.subs(vals), "(1,2,2,4):(9000,300,10,1)")


def test_02_composition_example_reshape_row_major():
    # 02_layout_algebra.md "Example 2": 20:2 o (5,4):(4,1) = (5,4):(8,2), exact
    assert_prints(composition(doc("20:2"), doc("(5,4):(4,1)")), "(5,4):(8,2)")
    assert_prints(composition(doc("20:2"), doc("5:4")), "5:8")
    assert_prints(composition(doc("20:2"), doc("4:1")), "4:2")


def test_02_composition_example_reshape_column_major():
    # 02_layout_algebra.md "Example 3": (10,2):(16,4) o (5,4):(1,5)
    R = composition(doc("(10,2):(16,4)"), doc("(5,4):(1,5)"))
    # static CuTe prints (_5,(_2,_2)):(_16,(_80,_4)) -- exact (layoutalg integers are static)
    assert_prints(R, "(_5,(_2,_2)):(_16,(_80,_4))")
    # dynamic CuTe prints ((5,1),(2,2)):((16,4),(80,4)) -- a spelling kept only for dynamic ints
    assert_same_function(R, "((5,1),(2,2)):((16,4),(80,4))")
    assert_same_function(composition(doc("(10,2):(16,4)"), doc("5:1")), "(5,1):(16,4)")
    assert_prints(composition(doc("(10,2):(16,4)"), doc("4:5")), "(2,2):(80,4)")


@pytest.mark.parametrize(
    "b, expected",
    [
        # media/docs/cute/02_layout_operations.md "Examples: Reshape a vector into a matrix" (exact)
        ("(4,5):(1,4)", "(4,5):(2,8)"),
        ("(4,5):(5,1)", "(4,5):(10,2)"),
    ],
)
def test_old_02_layout_operations_composition_reshape(b, expected):
    assert_prints(composition(doc("20:2"), doc(b)), expected)


def test_02_composition_by_mode_tiler():
    # 02_layout_algebra.md "By-mode Composition": a = (12,(4,8)):(59,(13,1)), tiler <3:4, 8:2>
    a = doc("(12,(4,8)):(59,(13,1))")
    tiler = (doc("_3:_4"), doc("_8:_2"))
    R = composition(a, tiler)
    assert_prints(R, "(_3,(2,4)):(236,(26,1))")
    assert make_layout(composition(a[0], tiler[0]), composition(a[1], tiler[1])) == R


def test_02_composition_shape_tiler():
    # 02_layout_algebra.md: a Shape (3,8) as tiler <3:1, 8:1> -> (_3,(4,2)):(59,(13,1)); the DSL notebook
    # prints the same (3,(4,2)):(59,(13,1))
    a = doc("(12,(4,8)):(59,(13,1))")
    assert_prints(composition(a, (3, 8)), "(_3,(4,2)):(59,(13,1))")
    assert composition(a, (3, 8)) == composition(a, (Layout(3, 1), Layout(8, 1)))


# =============================================================================================
# 02_layout_algebra.md -- complement
# =============================================================================================


@pytest.mark.parametrize(
    "a, cotarget, expected",
    [
        # 02_layout_algebra.md "Complement Examples" (all static; exact spellings)
        ("4:1", 24, "6:4"),
        ("6:4", 24, "4:1"),
        ("(4,6):(1,4)", 24, "1:0"),
        ("4:2", 24, "(2,3):(1,8)"),
        ("(2,4):(1,6)", 24, "3:2"),
        ("(2,2):(1,6)", 24, "(3,2):(2,12)"),
    ],
)
def test_02_complement_examples(a, cotarget, expected):
    A = doc(a)
    R = complement(A, cotarget)
    assert_prints(R, expected)
    # "Note that (A, R) has cosize 24 [and produces unique indices]"
    AR = make_layout(A, R)
    assert AR.cosize() == 24
    assert len(set(AR.table().tolist())) == size(AR)


# =============================================================================================
# 02_layout_algebra.md -- division
# =============================================================================================


def test_02_logical_divide_1d():
    # 02_layout_algebra.md "Logical Divide 1-D Example" (and the DSL notebook print): exact
    A, B = doc("(4,2,3):(2,1,8)"), doc("4:2")
    Bstar = complement(B, size(A))
    assert_prints(Bstar, "(2,3):(1,8)")
    assert_prints(make_layout(B, Bstar), "(4,(2,3)):(2,(1,8))")
    assert_prints(logical_divide(A, B), "((2,2),(2,3)):((4,1),(2,8))")


@pytest.mark.xfail(strict=True, reason="media/docs/cute/02_layout_algebra.md (old) typo: with "
                   "A = (2,4,3):(4,1,8) the stated result ((2,2),(2,3)):((4,1),(2,8)) is wrong (A o 4:2 = 4:1); "
                   "the current doc uses A = (4,2,3):(2,1,8)")
def test_old_02_logical_divide_1d_typo():
    assert_prints(logical_divide(doc("(2,4,3):(4,1,8)"), doc("4:2")), "((2,2),(2,3)):((4,1),(2,8))")


A_9_32 = "(9,(4,8)):(59,(13,1))"
TILER_9_32 = ("3:3", "(2,4):(1,8)")


def _tiler_9_32():
    return tuple(doc(t) for t in TILER_9_32)


def test_02_logical_divide_2d():
    # 02_layout_algebra.md "Logical Divide 2-D Example"; exact print from the DSL notebook
    A = doc(A_9_32)
    R = logical_divide(A, _tiler_9_32())
    assert_prints(R, "((3,3),((2,4),(2,2))):((177,59),((13,2),(26,1)))")
    # "the first mode of each mode of the result is the sublayout (3,(2,4)):(177,(13,2)) and is precisely
    #  the result we would have received if we had applied composition"
    first = make_layout(R[0][0], R[1][0])
    assert_prints(first, "(3,(2,4)):(177,(13,2))")
    assert first == composition(A, _tiler_9_32())
    # "((TileM,RestM), (TileN,RestN)) with shape ((3,3), (8,4))"
    assert size(R[0]) == 9 and tuple(size(m) for m in (R[0][0], R[0][1])) == (3, 3)
    assert tuple(size(m) for m in (R[1][0], R[1][1])) == (8, 4)


@pytest.mark.xfail(strict=True, reason="media/docs/cute/02_layout_algebra.md (old) typo: the tile of the 2-D "
                   "logical divide is stated as (3,(2,4)):(236,(13,52)); the current doc (and CuTe DSL) give "
                   "(3,(2,4)):(177,(13,2))")
def test_old_02_logical_divide_2d_tile_typo():
    R = logical_divide(doc(A_9_32), _tiler_9_32())
    assert_prints(make_layout(R[0][0], R[1][0]), "(3,(2,4)):(236,(13,52))")


def test_02_zipped_tiled_flat_divide():
    # 02_layout_algebra.md "Zipped, Tiled, Flat Divides"; exact prints from the DSL notebook
    A, T = doc(A_9_32), _tiler_9_32()
    zd = zipped_divide(A, T)
    assert_prints(zd, "((3,(2,4)),(3,(2,2))):((177,(13,2)),(59,(26,1)))")
    # "((TileM,TileN), (RestM,RestN)) with shape ((3,8), (3,4))"
    assert it.product_each(zd[0].shape) == (3, 8) and it.product_each(zd[1].shape) == (3, 4)
    # "layout<0>(zipped_divide(a, b)) == composition(a, b)"
    assert zd[0] == composition(A, T)
    assert_prints(tiled_divide(A, T), "((3,(2,4)),3,(2,2)):((177,(13,2)),59,(26,1))")
    assert_prints(flat_divide(A, T), "(3,(2,4),3,(2,2)):(177,(13,2),59,(26,1))")


@pytest.mark.parametrize(
    "tiler, expected",
    [
        # media/docs/cute/02_layout_operations.md "Division": vec = 16:3 (exact)
        ("4:1", "(4,4):(3,12)"),
        ("4:4", "(4,4):(12,3)"),
        ("4:2", "(4,(2,2)):(6,(3,24))"),
        ("(2,2):(4,1)", "((2,2),(2,2)):((12,3),(6,24))"),
    ],
)
def test_old_02_layout_operations_divide_vector(tiler, expected):
    assert_prints(logical_divide(doc("16:3"), doc(tiler)), expected)


@pytest.mark.parametrize(
    "layout, logical, zipped",
    [
        # media/docs/cute/02_layout_operations.md "More Examples of Divide": tile_shape (_4,_8) (exact)
        (
            "(_12,_32,_6):(_1,_128,_0)",
            "((_4,_3),(_8,_4),_6):((_1,_4),(_128,_1024),_0)",
            "((_4,_8),(_3,_4,_6)):((_1,_128),(_4,_1024,_0))",
        ),
        (
            "(_12,(_4,_8),_6):(_1,(_32,_512),_0)",
            "((_4,_3),((_4,_2),_4),_6):((_1,_4),((_32,_512),_1024),_0)",
            "((_4,(_4,_2)),(_3,_4,_6)):((_1,(_32,_512)),(_4,_1024,_0))",
        ),
    ],
)
def test_old_02_layout_operations_divide_by_shape(layout, logical, zipped):
    L = doc(layout)
    assert_prints(logical_divide(L, (4, 8)), logical)
    assert_prints(zipped_divide(L, (4, 8)), zipped)


# =============================================================================================
# 02_layout_algebra.md -- products
# =============================================================================================


def test_02_logical_product_1d():
    # 02_layout_algebra.md "Logical Product 1-D Example" (and DSL notebook print): exact
    A, B = doc("(2,2):(4,1)"), doc("6:1")
    Astar = complement(A, size(A) * B.cosize())
    assert_prints(Astar, "(2,3):(2,8)")
    assert_prints(composition(Astar, B), "(2,3):(2,8)")
    R = logical_product(A, B)
    assert_prints(R, "((2,2),(2,3)):((4,1),(2,8))")
    # "Note that the result is identical to the result of the 1-D Logical Divide example."
    assert logical_divide(doc("(4,2,3):(2,1,8)"), doc("4:2")) == R


def test_notebook_blocked_and_raked_product():
    # cute_layout_algebra.ipynb: A = (2,5):(5,1), B = (3,4):(1,3)
    A, B = doc("(2,5):(5,1)"), doc("(3,4):(1,3)")
    blocked = blocked_product(A, B)
    raked = raked_product(A, B)
    # DSL prints blocked ((2,3),(5,4)):((5,10),(1,30)); layoutalg coalesces each mode (mode 0
    # (2,3):(5,10) becomes 6:5), so compare as functions + rank-2 shape, see the disagreement note.
    assert_same_function(blocked, "((2,3),(5,4)):((5,10),(1,30))")
    assert len(blocked) == 2 and blocked.grid().tolist() == doc("((2,3),(5,4)):((5,10),(1,30))").grid().tolist()
    # raked prints exactly (no mode of it can be coalesced)
    assert_prints(raked, "((3,2),(4,5)):((10,5),(30,1))")


# current CuTe (include/cute/layout.hpp) zips blocked_product without coalescing; so does layoutalg
def test_notebook_blocked_product_exact_spelling():
    assert_prints(blocked_product(doc("(2,5):(5,1)"), doc("(3,4):(1,3)")), "((2,3),(5,4)):((5,10),(1,30))")


def test_notebook_zipped_tiled_flat_product():
    # cute_layout_algebra.ipynb: exact prints
    A, B = doc("(2,5):(5,1)"), doc("(3,4):(1,3)")
    assert_prints(zipped_product(A, B), "((2,5),(3,4)):((5,1),(10,30))")
    assert_prints(tiled_product(A, B), "((2,5),3,4):((5,1),10,30)")
    assert_prints(flat_product(A, B), "(2,5,3,4):(5,1,10,30)")


# media/docs/cute/02_layout_operations.md "Example: Tiled matrix": tile (2,2):(1,2), matrix_of_tiles
# (3,4):(4,1), with the hand-drawn tables of the three products.
TILE, MATRIX_OF_TILES = "(_2,_2):(_1,_2)", "(_3,_4):(_4,_1)"

BLOCKED_TABLE = """
|       | (0,0) | (1,0) | (0,1) | (1,1) | (0,2) | (1,2) | (0,3) | (1,3) |
| ---   | ---   | ---   | ---   | ---   | ---   | ---   | ---   | ---   |
| (0,0) |  0    |  2    |  4    |  6    |  8    | 10    | 12    | 14    |
| (1,0) |  1    |  3    |  5    |  7    |  9    | 11    | 13    | 15    |
| (0,1) | 16    | 18    | 20    | 22    | 24    | 26    | 28    | 30    |
| (1,1) | 17    | 19    | 21    | 23    | 25    | 27    | 29    | 31    |
| (0,2) | 32    | 34    | 36    | 38    | 40    | 42    | 44    | 46    |
| (1,2) | 33    | 35    | 37    | 39    | 41    | 43    | 45    | 47    |
"""

LOGICAL_TABLE = """
|       | (0,0) | (1,0) | (2,0) | (0,1) | (1,1) | (2,1) | (0,2) | (1,2) | (2,2) | (0,3) | (1,3) | (2,3) |
| ---   | ---   | ---   | ---   | ---   | ---   | ---   | ---   | ---   | ---   | ---   | ---   | ---   |
| (0,0) |  0    | 16    | 32    |  4    | 20    | 36    |  8    | 24    | 40    | 12    | 28    | 44    |
| (1,0) |  1    | 17    | 33    |  5    | 21    | 37    |  9    | 25    | 41    | 13    | 29    | 45    |
| (0,1) |  2    | 18    | 34    |  6    | 22    | 38    | 10    | 26    | 42    | 14    | 30    | 46    |
| (1,1) |  3    | 19    | 35    |  7    | 23    | 39    | 11    | 27    | 43    | 15    | 31    | 47    |
"""

RAKED_TABLE = """
|       | (0,0) | (1,0) | (2,0) | (3,0) | (0,1) | (1,1) | (2,1) | (3,1) |
| ---   | ---   | ---   | ---   | ---   | ---   | ---   | ---   | ---   |
| (0,0) |  0    |  4    |  8    | 12    |  2    |  6    | 10    | 14    |
| (1,0) | 16    | 20    | 24    | 28    | 18    | 22    | 26    | 30    |
| (2,0) | 32    | 36    | 40    | 44    | 34    | 38    | 42    | 46    |
| (0,1) |  1    |  5    |  9    | 13    |  3    |  7    | 11    | 15    |
| (1,1) | 17    | 21    | 25    | 29    | 19    | 23    | 27    | 31    |
| (2,1) | 33    | 37    | 41    | 45    | 35    | 39    | 43    | 47    |
"""


def test_old_02_layout_operations_blocked_product_table():
    R = blocked_product(doc(TILE), doc(MATRIX_OF_TILES))
    assert R.grid().tolist() == md_table_body(BLOCKED_TABLE)
    # "Shape ((2,3),(2,4)), and Stride ((1,16),(2,4)), and the second mode can be coalesced":
    # layoutalg does coalesce it, printing ((2,3),8):((1,16),2).
    assert_same_function(R, "((2,3),(2,4)):((1,16),(2,4))")
    assert_prints(R[0], "(2,3):(1,16)")


def test_old_02_layout_operations_logical_product_table():
    R = logical_product(doc(TILE), doc(MATRIX_OF_TILES))
    assert_prints(R, "((2,2),(3,4)):((1,2),(16,4))")  # exact
    assert R.grid().tolist() == md_table_body(LOGICAL_TABLE)


def test_old_02_layout_operations_raked_product_table():
    R = raked_product(doc(TILE), doc(MATRIX_OF_TILES))
    assert_prints(R, "((3,2),(4,2)):((16,1),(4,2))")  # exact (nothing to coalesce)
    assert R.grid().tolist() == md_table_body(RAKED_TABLE)


def test_old_02_layout_operations_divide_raked_back_to_blocked():
    # "Logical divide: the intuitive tiling": logical_divide(raked_prod, <2:3, 2:4>) is the blocked table;
    # "Zipped divide": zipped_divide(raked_prod, same) is the logical-product table.
    raked = doc("((_3,_2),(_4,_2)):((_16,_1),(_4,_2))")
    subtile = (doc("_2:_3"), doc("_2:_4"))
    assert logical_divide(raked, subtile).grid().tolist() == md_table_body(BLOCKED_TABLE)
    assert zipped_divide(raked, subtile).grid().tolist() == md_table_body(LOGICAL_TABLE)


# =============================================================================================
# media/docs/cpp/cute/03_tensor.md and 0x_gemm_tutorial.md -- tiling shapes, sublayouts, TV layouts
# =============================================================================================


def test_03_tensor_slice_sublayouts():
    # 03_tensor.md "Slicing a Tensor": A = ((_3,2),(2,_5,_2)):((4,1),(_2,13,100)); the layouts of the slices
    A = doc("((_3,2),(2,_5,_2)):((4,1),(_2,13,100))")
    assert_prints(make_layout(A[1]), "((2,_5,_2)):((_2,13,100))")  # B = A(2,_)
    assert_prints(make_layout(A[0]), "((_3,2)):((4,1))")  # C = A(_,5)
    assert_prints(A[0], "(_3,2):(4,1)")  # D = A(make_coord(_,_),5)
    assert_prints(make_layout(A[0][0], A[1][1]), "(_3,_5):(4,13)")  # E
    assert_prints(make_layout(A[0][1], A[1][0], A[1][2]), "(2,2,_2):(1,_2,100)")  # F


def test_03_tensor_zipped_divide_shapes():
    # 03_tensor.md "Inner and outer partitioning": zipped_divide((8,24), (_4,_8)) has shape ((_4,_8),(2,3))
    zd = zipped_divide(Layout((8, 24)), (4, 8))
    assert zd.shape == ((4, 8), (2, 3))
    # "Copy a subtile": zipped_divide((24,16), Shape<_8,_4>) -> ((_8,_4),Rest)
    zd2 = zipped_divide(Layout((24, 16)), (8, 4))
    assert zd2[0].shape == (8, 4) and size(zd2[1]) == 12


def test_03_tensor_tv_layout_composition_shape():
    # 03_tensor.md "Thread-Value partitioning": tv_layout (T8,V4) -> (M4,N8), A = (4,8) LayoutRight;
    # composition(A, tv_layout) is (8,4) and covers each of the 32 elements once.
    tv = doc("((_2,_4),(_2,_2)):((_8,_1),(_4,_16))")
    A = make_layout((4, 8), order="right")
    R = composition(A, tv)
    assert it.product_each(R.shape) == (8, 4)
    assert sorted(R.table().tolist()) == list(range(32))


@pytest.mark.parametrize(
    "data, threads, per_thread",
    [
        # 0x_gemm_tutorial.md: tA 32x8 threads over a 128x8 tile -> "a 4x1 subtensor for each thread";
        # tC 16x16 threads over a 128x128 tile -> "its own 8x8 subtensor"
        ((128, 8), (32, 8), (4, 1)),
        ((128, 128), (16, 16), (8, 8)),
    ],
)
def test_0x_gemm_local_partition_shapes(data, threads, per_thread):
    zd = zipped_divide(Layout(data), threads)
    assert it.product_each(zd[0].shape) == threads
    assert it.product_each(zd[1].shape) == per_thread


# =============================================================================================
# media/docs/cpp/cute/0t_mma_atom.md -- the TV layouts written down there
# =============================================================================================


def test_0t_sm70_thrid_quadpair():
    # "this layout function maps the logical thread id [0,8) ... onto [0,4)U[16,20)"
    assert doc("(_4,_2):(_1,_16)").table().tolist() == [0, 1, 2, 3, 16, 17, 18, 19]


def test_0t_sm70_clayout_f32():
    C = doc("((_2,_2,_2),(_2,_2,_2)):((_1,_16,_4),(_8,_2,_32))")
    # (T0..T7, V0) located at 0,1,16,17,4,5,20,21 ; (T0, V0..V7) located at 0,8,2,10,32,40,34,42
    assert [C(t, 0) for t in range(8)] == [0, 1, 16, 17, 4, 5, 20, 21]
    assert [C(0, v) for v in range(8)] == [0, 8, 2, 10, 32, 40, 34, 42]
    assert sorted(C.table().tolist()) == list(range(64))  # every (m,n) of the 8x8 C once


def test_0t_sm70_clayout_f16_and_tn_ab():
    # F16 accumulators: "Each row of accumulators (m, :) is held by a single thread" -> (8,8):(1,8)
    C = doc("(_8,_8):(_1,_8)")
    assert all(C(t, v) % 8 == t for t in range(8) for v in range(8))
    # TN A and B: (8,4):(1,8), (T0,V0)->(T1,V0) stride 1, (T0,V0)->(T0,V1) stride 8
    A = doc("(_8,_4):(_1,_8)")
    assert A(1, 0) - A(0, 0) == 1 and A(0, 1) - A(0, 0) == 8


def test_0t_sm70_alayout_nt():
    # NT A: "down the M mode ... the four values of T0 first and then the four values of T4"
    # (stride 1 for 4 values, stride 4 from T0 to T4); along K "increment the thr_id ... stride 8"
    A = doc("((_4,_2),_4):((_8,_4),_1)")
    for t in range(8):
        for v in range(4):
            m, k = v + 4 * (t // 4), t % 4
            assert A(t, v) == m + 8 * k


def test_0t_sm90_gmma_clayout():
    C = doc("((_4,_8,_4),(_2,_2)):((_128,_1,_16),(_64,_8))")  # (T128,V4) -> (M64,N8)
    assert sorted(C.table().tolist()) == list(range(512))
    assert C(0, 2) == 8  # "we wrap back again to T0, but this time to (T0, V2)" at the next core matrix
    assert C(32, 0) == 16  # "(T32, V0)": the next warp starts at (m,n) = (16,0) = 16
    C128 = doc("((_4,_8,_4),(_2,_2,_16)):((_128,_1,_16),(_64,_8,_512))")  # (T128,V64) -> (M64,N128)
    assert sorted(C128.table().tolist()) == list(range(64 * 128))
    assert C128(0, 4) == 512  # "this starts at (m,n) = (0,8) = 512"


def test_0t_sm90_gmma_alayout_all_threads_at_origin():
    A = doc("(_128,(_64,_16)):(_0,(_1,_64))")
    assert all(A(t, 0) == 0 for t in range(128))
    assert sorted(A[1].table().tolist()) == list(range(64 * 16))


def test_0t_tiled_mma_m_permutation():
    # "That layout (4,4,2):(1,8,4) is read like a scatter permutation"
    old_new = """
old m-coord:  0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31
new m-coord:  0  1  2  3  8  9 10 11 16 17 18 19 24 25 26 27  4  5  6  7 12 13 14 15 20 21 22 23 28 29 30 31
"""
    lines = old_new.strip().splitlines()
    old = [int(v) for v in lines[0].split(":")[1].split()]
    new = [int(v) for v in lines[1].split(":")[1].split()]
    P = doc("(_4,_4,_2):(_1,_8,_4)")
    assert [P(i) for i in old] == new


# =============================================================================================
# include/cute/layout.hpp -- the example in the comment of make_ordered_layout
# =============================================================================================


def test_layout_hpp_make_ordered_layout_comment_example():
    # make_ordered_layout(Shape<_2,_2,_2,_2>{}, Step<_0,_2,_3,_1>{}) -> (_2,_2,_2,_2):(_1,_4,_8,_2)
    assert_prints(make_ordered_layout((2, 2, 2, 2), (0, 2, 3, 1)), "(_2,_2,_2,_2):(_1,_4,_8,_2)")


def test_doc_tables_are_numpy_compatible():
    # grid() returns numpy arrays; the comparisons above rely on tolist(); sanity-check the dtype
    assert doc(S2XH4).grid().dtype == np.int64
