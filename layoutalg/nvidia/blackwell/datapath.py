"""The PTX ISA's tcgen05 data-path layouts (A to G) as formulas, and proofs that the TMEM layouts equal them.

PTX ISA 9.x, section 9.7.16.10.5 "Data Path Layout Organization", lists which *layout* a
``tcgen05.mma`` uses to hold D (and an A read from tensor memory) in the 128 lanes of TMEM::

    M    cta_group  A-sparsity  .ws     organization               layout  lane alignment
    32   ::1        either      yes     1x4                        G       0
    64   ::1        either      yes     2x3 (sic; the figure: 2x2) E       0
    64   ::1        either      no      4x1 (1/2 datapath used)    F       0 or 16
    128  ::1        either      either  4x1                        D       0
    128  ::2        dense       -       2x2                        B       0
    128  ::2        sparse      -       4x1 (1/2 datapath used)    C       0 or 16
    256  ::2        either      -       4x1                        A       0

An organization ``R x C`` puts a CTA's rows down ``R`` of the four 32-lane sub-partitions and its N
columns in ``C`` blocks side by side across the other sub-partitions; "1/2 datapath used" fills 16 of
each sub-partition's 32 lanes (from lane 0 or 16: the alignment). Written as formulas in the CTA's row
``m`` and column ``n`` of D (``w`` = 16 or 32 lanes used per sub-partition, ``N/C`` columns per block)::

    lane   = 32 * (m // w) + m % w + align + 32 * R * (n // (N / C))
    column = n % (N / C)

and as CuTe addresses a TMEM cell (lane stride ``TMEM::DP``, :func:`~layoutalg.nvidia.blackwell.tmem_accum.dp`):
``dp(bits) * lane + (32 / bits) * column`` for a ``bits``-wide accumulator in 32-bit cells. The
formulas are written from the table above (the text), not from the layouts; :func:`prove` compares
a layout of :mod:`layoutalg.nvidia.blackwell.tmem_accum` with one of them using :func:`layoutalg.verify.verify`.

    >>> f = data_path(64, cta_group=1)
    >>> f.layout_id, f.organization, f.half, f.formula(128)
    ('F', '4x1', True, '65536*(32*(m // 16) + m % 16) + 1*(n)')
    >>> bool(prove("F", 128))
    True

The sparsity metadata (9.7.16.10.8) is written the same way, :func:`metadata_formula`, and
:func:`prove_metadata` proves CuTe's ``tmem_e_frg`` equal to it for the 8-bit and fp4 kinds; for kind::f16
and kind::tf32 CuTe packs 16 rows by halves (:func:`cute_metadata_formula`), which the ISA draws and does
not write: a named difference.

Where CuTe and the ISA disagree, :func:`differences` names it with both sides shown: CuTe 4.2 holds
the accumulator of the sparse ``cta_group::2`` M = 128 atoms (``SM100_MMA_*_2x1SM_SS_SPARSE``) in
``tmem_frg_2sm``, the dense 2x2 layout B, where the ISA's table names layout C (4x1, half the lanes).
Nothing here ran on sm_100 hardware.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...errors import LayoutError
from ...layout import Layout

__all__ = ["DataPath", "DATA_PATHS", "data_path", "prove", "prove_a", "prove_scale_factors", "differences",
           "cute_accumulator", "METADATA_ELEMENTS_PER_BYTE", "metadata_formula", "prove_metadata",
           "cute_metadata_formula"]


@dataclass(frozen=True)
class DataPath:
    """One row of the ISA's data-path table (see the module docstring)."""

    layout_id: str
    m: int  # the instruction's M
    cta_group: int
    sparsity: str  # "dense", "sparse" or "either"
    ws: bool | None  # .ws mode: True, False, None (either / not applicable)
    organization: str  # "4x1", "2x2", "1x4"
    half: bool  # "1/2 datapath utilized"
    alignments: tuple[int, ...]
    figure: int  # the ISA's figure number (PTX ISA 9.1)
    isa_text: str = ""  # the organization as the table prints it, where it differs

    @property
    def rows(self) -> int:
        """Rows of D per CTA."""
        return self.m // self.cta_group

    def _rc(self) -> tuple[int, int]:
        r, c = self.organization.split("x")
        return int(r), int(c)

    def lane(self, n: int, align: int = 0) -> str:
        """The lane of D's element (m, n) as formula text (``N = n`` columns per CTA)."""
        R, C = self._rc()
        w = 16 if self.half else 32
        self._check(n, align)
        text = f"32*(m // {w}) + m % {w}" if w < 32 else "m"
        if align:
            text += f" + {align}"
        if C > 1:
            text += f" + {32 * R}*(n // {n // C})"
        return text

    def column(self, n: int) -> str:
        """The TMEM column of D's element (m, n) as formula text."""
        self._check(n, 0)
        R, C = self._rc()
        return f"n % {n // C}" if C > 1 else "n"

    def formula(self, n: int, value_bits: int = 32, align: int = 0) -> str:
        """The TMEM address of D's (m, n) in CuTe's addressing, ``dp(bits)*lane + (32/bits)*column``."""
        from .tmem_accum import dp

        if isinstance(value_bits, bool) or value_bits not in (8, 16, 32):
            raise LayoutError(f"data path {self.layout_id}: value_bits {value_bits!r} is not 8, 16 or 32 "
                              "(a value in a 32-bit TMEM cell)")
        return f"{dp(value_bits)}*({self.lane(n, align)}) + {32 // value_bits}*({self.column(n)})"

    def _check(self, n: Any, align: Any) -> None:
        R, C = self._rc()
        if isinstance(n, bool) or not isinstance(n, int) or n <= 0 or n % C:
            raise LayoutError(f"data path {self.layout_id}: N = {n!r} is not a positive multiple of {C}")
        if align not in self.alignments:
            raise LayoutError(f"data path {self.layout_id}: lane alignment {align!r} is not one of {self.alignments}")


#: the ISA's table (PTX ISA 9.1, 9.7.16.10.5), keyed by layout ID
DATA_PATHS: dict[str, DataPath] = {d.layout_id: d for d in (
    DataPath("A", 256, 2, "either", None, "4x1", False, (0,), 205),
    DataPath("B", 128, 2, "dense", None, "2x2", False, (0,), 207),
    DataPath("C", 128, 2, "sparse", None, "4x1", True, (0, 16), 209),
    DataPath("D", 128, 1, "either", None, "4x1", False, (0,), 211),
    DataPath("E", 64, 1, "either", True, "2x2", False, (0,), 213, isa_text="2x3"),
    DataPath("F", 64, 1, "either", False, "4x1", True, (0, 16), 215),
    DataPath("G", 32, 1, "either", True, "1x4", False, (0,), 217),
)}


def data_path(m: int, cta_group: int = 1, *, sparse: bool = False, ws: bool = False) -> DataPath:
    """The ISA's data-path layout of a ``tcgen05.mma`` with instruction ``M = m``.

    >>> data_path(128, cta_group=2, sparse=True).layout_id, data_path(32, ws=True).organization
    ('C', '1x4')
    """
    for what, v in (("m", m), ("cta_group", cta_group)):
        if isinstance(v, bool) or not isinstance(v, int):
            raise LayoutError(f"data_path: {what} = {v!r} is not an int")
    if not isinstance(sparse, bool) or not isinstance(ws, bool):
        raise LayoutError("data_path: sparse and ws are bools")
    for d in DATA_PATHS.values():
        if d.m != m or d.cta_group != cta_group:
            continue
        if d.sparsity != "either" and (d.sparsity == "sparse") != sparse:
            continue
        if d.ws is not None and d.ws != ws:
            continue
        if ws and cta_group != 1:
            break
        return d
    raise LayoutError(f"data_path: no tcgen05 data path for M = {m}, cta_group::{cta_group}"
                      f"{', sparse' if sparse else ''}{', .ws' if ws else ''} (PTX ISA 9.7.16.10.5)")


def cute_accumulator(layout_id: str, n: int, value_bits: int = 32, *, ws: bool | None = None) -> Layout:
    """The (m, n) -> TMEM address layout CuTe 4.2 builds for the accumulator of that data path
    (:mod:`layoutalg.nvidia.blackwell.tmem_accum`; layout C: the sparse 2x1SM atoms' ``tmem_frg_2sm``)."""
    from .tmem_accum import accumulator_layout

    d = _get(layout_id)
    if ws is not None and not isinstance(ws, bool):
        raise LayoutError(f"cute_accumulator: ws = {ws!r} is not a bool")
    d.formula(n, value_bits)  # checks N and the value width
    use_ws = bool(d.ws) if ws is None else ws
    return accumulator_layout(d.rows, n, cta_group=d.cta_group, value_bits=value_bits, ws=use_ws)


def _get(layout_id: Any) -> DataPath:
    if not isinstance(layout_id, str) or layout_id.upper() not in DATA_PATHS:
        raise LayoutError(f"data path {layout_id!r}: the ISA's layouts are {', '.join(DATA_PATHS)}")
    return DATA_PATHS[layout_id.upper()]


def prove(layout_id: str, n: int, value_bits: int = 32, *, ws: bool | None = None) -> Any:
    """``verify`` of CuTe's accumulator (:func:`cute_accumulator`) against the ISA's formula of the layout.

    >>> print(prove("C", 64).counterexample)   # the named difference: CuTe's 2x2 against the ISA's 4x1 half
    at (m, n) = (0, 32): the layout gives 4194304, the formula gives 32
    """
    from ...verify import verify

    d = _get(layout_id)
    return verify(cute_accumulator(d.layout_id, n, value_bits, ws=ws), formula=d.formula(n, value_bits), inputs="m, n")


def prove_a(atom: Any, k: int) -> Any:
    """``verify`` of A in TMEM of a ``_TS`` atom (:func:`~layoutalg.nvidia.blackwell.tmem_accum.umma_tmem_a`,
    ``M x k`` per CTA) against the data path of its D, A's elements packed ``32 / bits`` to a column:
    address ``dp(bits) * lane(m) + k``."""
    from ...verify import verify
    from .tmem_accum import dp, umma_tmem_a
    from .umma import UMMAAtom, umma_atom, umma_type_bits

    if isinstance(atom, str):
        atom = umma_atom(atom)
    if not isinstance(atom, UMMAAtom):
        raise LayoutError(f"prove_a: {atom!r} is not a tcgen05 atom (an UMMAAtom or its CuTe name)")
    if isinstance(k, bool) or not isinstance(k, int) or k <= 0:
        raise LayoutError(f"prove_a: k = {k!r} is not a positive int")
    bits = umma_type_bits(atom.a_type)
    d = data_path(atom.M, atom.cta_group, sparse=atom.sparse)
    L = umma_tmem_a(atom, (atom.M, k))
    return verify(L[0], formula=f"{dp(bits)}*({d.lane(k)}) + n", inputs="m, n")


def prove_scale_factors(mn: int, vs: int, nsf: int, operand: str = "A", n_sm: int = 1, sf_bits: int = 8) -> Any:
    """``verify`` of CuTe's scale factors in TMEM (``tmem_sf_frg``, 4x1 duplication) against the ISA's rule
    "scale factors ... need to be duplicated to all 32 lane partitions": row ``r`` of the ``mn`` rows and
    its replica ``q`` (CuTe's coordinate ``r + mn q``) in lane ``r % 32 + 32 q``; factor ``s = k // VS`` in
    byte ``s`` of the word (SF_ID 0: "the byte offset in the Tensor Memory word"), row block ``r // 32`` in
    word column ``r // 32`` (read off Figures 231-233, not the text).

    >>> bool(prove_scale_factors(128, 16, 4)), bool(prove_scale_factors(256, 32, 2))
    (True, True)
    """
    from ...verify import verify
    from .tmem_accum import dp, tmem_sf_frg

    for what, v in (("mn", mn), ("vs", vs), ("nsf", nsf), ("n_sm", n_sm), ("sf_bits", sf_bits)):
        if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
            raise LayoutError(f"prove_scale_factors: {what} = {v!r} is not a positive int")
    if sf_bits != 8:
        raise LayoutError(f"prove_scale_factors: scale factors are 8-bit (ue8m0, ue4m3), not {sf_bits}-bit")
    L = tmem_sf_frg(((mn, (vs, nsf)), 1, 1), sf_bits, n_sm, operand)[0]
    f = f"{dp(sf_bits)}*(r % 32 + 32*(r // {mn})) + 4*((r % {mn}) // 32) + k // {vs}"
    return verify(L, formula=f, inputs="r, k")


#: logical elements of A per byte of sparsity metadata, from the ISA's granularities (PTX ISA 9.1, 9.7.16.10.8.1-3):
#: kind::tf32 1:2 with a 4-bit index per two-wide chunk (2 bits an element); kind::f16 / f8f6f4 / mxf8f6f4 / i8 2:4
#: with two 2-bit indices per four-wide chunk (1 bit an element); kind::mxf4 / mxf4nvf4 4:8 in pairs with two 2-bit
#: indices per eight-wide chunk (1/2 bit an element). CuTe's ``sparse_elem<S, uint8_t>`` of the metadata has this S.
METADATA_ELEMENTS_PER_BYTE = {"tf32": 4, "f16": 8, "i8": 8, "f8f6f4": 8, "mxf8f6f4": 8, "mxf4": 16, "mxf4nvf4": 16}
_META_K = {"tf32": 16, "f16": 32, "i8": 64, "f8f6f4": 64, "mxf8f6f4": 64, "mxf4": 128, "mxf4nvf4": 128}


def metadata_formula(kind: str, m: int = 128, cta_group: int = 1) -> str:
    """The ISA's sparsity metadata of one ``tcgen05.mma.sp`` in TMEM, as an address of A's logical element (m, k).

    Written from the text of PTX ISA 9.1, 9.7.16.10.8 "Sparse Matrices": the metadata of row ``m`` is in the lane
    of row ``m`` of the instruction's data path (9.7.16.10.8.5: the half-lane layouts use "the same alignment
    across matrices A, D and the sparsity metadata matrix"), its indices in order along the row from bit 0 of
    that lane (``8/S`` bits an element, :data:`METADATA_ELEMENTS_PER_BYTE`), and for the 8-bit and fp4 kinds
    "the sparsity selector ... must be 0 / is assumed to be 0 ... and all of the columns are selected"
    (9.7.16.10.8.4.5-6). In CuTe's TMEM addressing, in units of the ``8/S``-bit metadata element (lane stride
    ``TMEM::DP_b * S / 8``, ``DP_b = 1 << 21``)::

        address = (2**21 * S / 8) * lane(m) + k

    For kind::f16 and kind::tf32 the ISA gives the packing by figures only (262-265: "which sub-columns get
    selected for different values of Sparsity Selector"); this is the same reading of the text, and CuTe differs
    from it (:func:`differences`).

    >>> metadata_formula("f8f6f4")
    '2097152*(m) + k'
    """
    if not isinstance(kind, str) or kind not in METADATA_ELEMENTS_PER_BYTE:
        raise LayoutError(f"metadata_formula: kind {kind!r} is none of {', '.join(METADATA_ELEMENTS_PER_BYTE)}")
    d = data_path(m, cta_group, sparse=True)
    lane = d.lane(_META_K[kind])
    return f"{(1 << 21) * METADATA_ELEMENTS_PER_BYTE[kind] // 8}*({lane}) + k"


def prove_metadata(kind: str, cta_group: int = 1) -> Any:
    """``verify`` of CuTe's ``tmem_e_frg`` (:func:`~layoutalg.nvidia.blackwell.tmem_accum.tmem_e_frg`, one MMA's
    128 x K block, as ``FrgTypeE`` of the kind's sparse atoms builds it) against :func:`metadata_formula`.
    CuTe builds the metadata of 128 rows per CTA only (M = 128 with cta_group::1, layout D; M = 256 with
    cta_group::2, layout A -- lane ``m`` in both).

    >>> bool(prove_metadata("f8f6f4")), bool(prove_metadata("mxf4nvf4", cta_group=2))
    (True, True)
    """
    from ...verify import verify
    from .tmem_accum import E_BITS, tmem_e_frg

    if not isinstance(kind, str) or kind not in METADATA_ELEMENTS_PER_BYTE:
        raise LayoutError(f"prove_metadata: kind {kind!r} is none of {', '.join(METADATA_ELEMENTS_PER_BYTE)}")
    if isinstance(cta_group, bool) or cta_group not in (1, 2):
        raise LayoutError(f"prove_metadata: cta_group {cta_group!r} is 1 or 2")
    L = tmem_e_frg(((128, _META_K[kind]), 1, 1), E_BITS[kind])
    return verify(L[0], formula=metadata_formula(kind, 128 * cta_group, cta_group), inputs="m, k")


def cute_metadata_formula(kind: str) -> str:
    """CuTe 4.2's packing of the kind::f16 / kind::tf32 metadata (``tmem_e_frg``) as a formula in A's (m, k), the
    other side of the named difference (:func:`differences`): within each 16 rows, rows ``m`` and ``m + 8`` share
    a lane, each holding half the row's K; the second half of row ``m``'s K goes to lane ``m + 8``::

        lane = m % 8 + 8*(k // (K/2)) + 16*(m // 16),  unit = k % (K/2) + (K/2)*((m // 8) % 2)

    >>> cute_metadata_formula("f16")
    '2097152*(m % 8 + 8*(k // 16) + 16*(m // 16)) + k % 16 + 16*((m // 8) % 2)'
    """
    if kind not in ("f16", "tf32"):
        raise LayoutError(f"cute_metadata_formula: CuTe packs by halves the kind::f16 and kind::tf32 metadata only, "
                          f"not {kind!r}")
    h = _META_K[kind] // 2
    return (f"{(1 << 21) * METADATA_ELEMENTS_PER_BYTE[kind] // 8}*(m % 8 + 8*(k // {h}) + 16*(m // 16)) "
            f"+ k % {h} + {h}*((m // 8) % 2)")


def differences() -> list[str]:
    """The places where CuTe 4.2's TMEM layouts and the ISA's data-path table disagree, both sides shown."""
    out = []
    v = prove("C", 64)
    if not v:
        d = DATA_PATHS["C"]
        out.append(f"layout C (M = 128, cta_group::2, sparse A): the ISA's table says {d.organization} with half the "
                   f"lanes (lane = {d.lane(64)}), CuTe 4.2's SM100_MMA_*_2x1SM_SS_SPARSE use tmem_frg_2sm "
                   f"(2x2, layout B: lane = {DATA_PATHS['B'].lane(64)}, column = {DATA_PATHS['B'].column(64)}); "
                   f"{v.counterexample}")
    from .umma import umma_atom

    ts = umma_atom("SM100_MMA_F16BF16_2x1SM_TS<bf16,bf16,float,128,64,K,K>")
    va = prove_a(ts, 16)
    if not va:
        out.append("A in TMEM of the cta_group::2 M = 128 _TS atoms (layout B for D): CuTe 4.2 allocates A "
                   "'Duplicated' (tmem_frg_2sm<a, a, Duplicated>: rows m in lanes m and m + 64, every column), the "
                   f"2x2 organization of D would put the second half of the columns in lanes 64..127 "
                   f"(lane = {DATA_PATHS['B'].lane(16)}); the ISA's table gives A no organization of its own; {va.counterexample}")
    out.append("scale factors of B with the 2x2 allocation (SFB of the cta_group::2 M = 128 atoms, CuTe's "
               "ScaleFactorDuplicated2by2): CuTe puts the first half of the N rows in lanes r % 32 and r % 32 + 32 "
               "and the second half in lanes 64.. and 96.. (each row in two lane partitions); the ISA's text asks for "
               "scale factors 'duplicated to all 32 lane partitions' (each row in all four) -- prove_scale_factors "
               "covers the 4x1 allocation (SFA, and SFB elsewhere), which meets it")
    for kind, what in (("f16", "kind::f16 (F16/BF16)"), ("tf32", "kind::tf32")):
        vm = prove_metadata(kind)
        if not vm:
            out.append(f"sparsity metadata of {what}, M = 128: the ISA's text (row m in its data-path lane, indices in "
                       f"row order from bit 0: {metadata_formula(kind)}) against CuTe 4.2's tmem_e_frg, which packs "
                       f"16 rows by halves ({cute_metadata_formula(kind)}, proven: cute_metadata_formula) -- the "
                       "packing the ISA draws in Figures 263/265 (selector sub-columns), not in its text; JAX's "
                       "Mosaic GPU (format_tcgen05_sparse_metadata) formats the same packing independently; "
                       f"{vm.counterexample}")
    out.append("sparsity metadata of M = 64 (cta_group::1, layout F, half the lanes) and of the .ws forms: the ISA "
               "draws them (Figures 262, 264, 266); CuTe 4.2's tmem_e_frg builds 128 rows per CTA only "
               "(static_assert 'Only 128 implemented right now'), so there is no CuTe layout to prove")
    out.append(f"layout E (M = 64, .ws): the ISA's table prints the organization {DATA_PATHS['E'].isa_text!r}; 64 rows "
               "in 32-lane sub-partitions can only be 2x2 (its figure 213), which CuTe's tmem_frg_ws is and "
               "prove('E', N) confirms")
    return out
