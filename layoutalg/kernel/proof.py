"""One proof for a GEMM tile's whole data path: every product ``A[m,k]*B[k,n]`` accumulates into the cell
the epilogue writes to ``out[m,n]``.

:func:`prove` runs the pipeline's trace (the hardware model of each stage, :mod:`layoutalg.kernel.pipeline`)
and checks it exhaustively over the tile with numpy: for every output element ``(m, n)``, the accumulator
cell that lands there must have received, over all k-blocks and warp(group)s, exactly the products
``A[m,k]*B[k,n]`` for ``k = 0 .. K-1`` -- each once, nothing else. An output that is never written is
wrong (the hardware run fills ``out`` with NaN first). A K order permuted the same way in A and B leaves
the sum unchanged and is not wrong (that stage's check then says so).

:class:`Proof` answers ``.ok``, ``.wrong_outputs`` (the M x N bool mask), ``.first_wrong`` (the first
stage, in data-path order, whose movement differs from the intended one and makes an output wrong; within
a stage the first element in the stage's order: operand reads by (warpgroup, k-block, mn, k), the epilogue
by (warpgroup, warp, instruction, lane, value) then the places nothing was written to), ``.stages`` (per stage
what was checked) and ``.accesses`` (bank conflicts, wavefronts and vector width of every shared-memory
access by threads; TMA's are not bank-limited and excluded).

    >>> from layoutalg.kernel.pipeline import hopper_pipeline
    >>> prove(hopper_pipeline()).ok
    True
    >>> bad = prove(hopper_pipeline(desc_swizzle_a=64))      # MatmulTutorial#14: the swizzle changed on one side
    >>> bad.first_wrong["stage"], int(bad.wrong_outputs.sum())
    ('wgmma_read_a', 4096)
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import LayoutError
from .pipeline import TAG_A, TAG_B, Pipeline, StageCheck, Trace, OWNER_SHIFT

__all__ = ["Proof", "prove"]


@dataclass(frozen=True)
class Proof:
    """The answer of :func:`prove` (see the module doc)."""

    ok: bool
    wrong_outputs: np.ndarray = field(repr=False)
    first_wrong: dict | None
    stages: tuple
    accesses: tuple = ()
    notes: tuple = ()
    title: str = ""

    def __bool__(self) -> bool:
        return self.ok

    @property
    def wrong_elements(self) -> list:
        """The sorted list of wrong ``(m, n)`` output elements."""
        return [(int(m), int(n)) for m, n in np.argwhere(self.wrong_outputs)]

    def __str__(self) -> str:
        M, N = self.wrong_outputs.shape
        nbad = int(self.wrong_outputs.sum())
        lines = [self.title]
        if self.ok:
            lines.append(f"PROVEN: every one of the {M}x{N} outputs accumulates exactly its K products")
        else:
            lines.append(f"WRONG: {nbad} of {M * N} outputs ({100 * nbad / (M * N):.1f}%)")
            f = self.first_wrong or {}
            lines.append(f"  first wrong at stage {f.get('stage')}: {f.get('location')}")
            lines.append(f"    lands : {f.get('lands')}")
            lines.append(f"    should: {f.get('should')}")
            if "output" in f:
                lines.append(f"    first wrong output: out{f['output']}")
        lines.append("  stages:")
        for s in self.stages:
            mark = "ok " if not s.mismatches else ("K~ " if s.operand and self.ok else "BAD")
            extra = f", {s.mismatches} differ" if s.mismatches else ""
            lines.append(f"    [{mark}] {s.stage:<18} {s.what}{extra}")
        if self.accesses:
            lines.append("  shared-memory accesses by threads:")
            lines.extend("    " + str(a) for a in self.accesses)
        lines.extend("  note: " + n for n in self.notes)
        return "\n".join(lines)


def _cell_products_ok(prod_a: np.ndarray, prod_b: np.ndarray, m: np.ndarray, n: np.ndarray, K: int) -> np.ndarray:
    """For each row: the products are exactly A[m, k] * B[k, n], k = 0..K-1, each once.

    >>> code = lambda tag, e: (tag << OWNER_SHIFT) | e
    >>> pa = np.array([[code(TAG_A, 2 + 1), code(TAG_A, 2 + 0)], [code(TAG_A, 0), code(TAG_A, 0)]])
    >>> pb = np.array([[code(TAG_B, 0 + 1), code(TAG_B, 0 + 0)], [code(TAG_B, 0), code(TAG_B, 0)]])
    >>> _cell_products_ok(pa, pb, np.array([1, 0]), np.array([0, 0]), 2).tolist()  # row 1: k = 0 twice
    [True, False]
    """
    ok = _cell_products_ok_fast(prod_a, prod_b, m, n, K)
    if ok is not None:
        return ok
    mask = (1 << OWNER_SHIFT) - 1
    ta, tb = prod_a >> OWNER_SHIFT, prod_b >> OWNER_SHIFT
    ea, eb = prod_a & mask, prod_b & mask
    am, ak = ea // K, ea % K
    bn, bk = eb // K, eb % K
    good = ((prod_a >= 0) & (prod_b >= 0) & (ta == TAG_A) & (tb == TAG_B) & (am == m[:, None]) & (bn == n[:, None])
            & (ak == bk))
    ok = good.all(axis=1)
    # each k once: count (row, k) pairs of the rows that are good everywhere
    rows = np.nonzero(ok)[0]
    if len(rows):
        counts = np.bincount((np.arange(len(rows))[:, None] * K + ak[rows]).ravel(), minlength=len(rows) * K)
        ok[rows] = (counts.reshape(len(rows), K) == 1).all(axis=1)
    return ok  # type: ignore[no-any-return]


def _cell_products_ok_fast(prod_a: np.ndarray, prod_b: np.ndarray, m: np.ndarray, n: np.ndarray,
                           K: int) -> np.ndarray | None:
    """``_cell_products_ok`` in a few passes over the products (None where its shortcut does not apply).

    A's code of ``A[m, k]`` is ``TAG_A << OWNER_SHIFT | (m*K + k)``: the row's codes less ``TAG_A << OWNER_SHIFT
    | m*K`` are its ks, which must lie in ``[0, K)`` and equal B's (same for B with n). That reading is exact when
    every (m + 1) * K and (n + 1) * K fits the element bits and m, n >= 0 (then the tag and the element of a code in
    range are the intended ones, and a code out of range is wrong either way).
    """
    if prod_a.ndim != 2 or prod_a.shape != prod_b.shape or prod_a.dtype != np.int64 or prod_b.dtype != np.int64:
        return None
    if len(m) and (min(int(m.min()), int(n.min())) < 0
                   or (max(int(m.max()), int(n.max())) + 1) * K > (1 << OWNER_SHIFT)):
        return None
    ka = prod_a - ((TAG_A << OWNER_SHIFT) + np.asarray(m, np.int64) * K)[:, None]
    kb = prod_b - ((TAG_B << OWNER_SHIFT) + np.asarray(n, np.int64) * K)[:, None]
    good = ka == kb
    good &= ka.view(np.uint64) < K  # 0 <= k < K in one comparison
    ok: np.ndarray = good.all(axis=1)
    rows = np.nonzero(ok)[0]
    if len(rows):
        # each k once: the row's ks, all in [0, K), are K of them (one per column) -- a permutation iff each
        # appears once
        kr = ka[rows]
        kr += (np.arange(len(rows), dtype=np.int64) * K)[:, None]
        counts = np.bincount(kr.ravel(), minlength=len(rows) * K)
        ok[rows] = (counts.reshape(len(rows), K) == 1).all(axis=1)
    return ok


def prove(pipeline: Pipeline) -> Proof:
    """Prove ``pipeline`` computes ``out = A @ B`` (see the module doc), or name the first wrong element.

    >>> from layoutalg.kernel.pipeline import hopper_pipeline
    >>> p = prove(hopper_pipeline(epilogue_cols=48))          # cutlass#3345: the epilogue misses part of C
    >>> p.first_wrong["stage"], p.first_wrong["lands"], bool(p.wrong_outputs[:, 48:].all()), bool(p.wrong_outputs[:, :48].any())
    ('epilogue_stmatrix', 'nothing (no stmatrix writes it)', True, False)
    """
    if not isinstance(pipeline, Pipeline):
        raise LayoutError(f"prove: {pipeline!r} is not a Pipeline (hopper_pipeline, ampere_pipeline, ...)")
    tr: Trace = pipeline.trace()
    M, N, K = tr.M, tr.N, tr.K
    # the cells as designed: products right for the cell's intended (m, n)?
    cell_ok = _cell_products_ok(tr.prod_a, tr.prod_b, tr.cell_target[:, 0], tr.cell_target[:, 1], K)
    # the outputs: the cell landing at (m, n) has exactly the products of (m, n)
    oc = tr.out_cell.ravel()
    written = oc >= 0
    mm, nn = np.divmod(np.arange(M * N), N)
    right = np.zeros(M * N, bool)
    if written.any():
        cells = oc[written]
        # a cell landing where it is meant to be: its verdict is cell_ok; the others are checked for their output
        meant = (tr.cell_target[cells, 0] == mm[written]) & (tr.cell_target[cells, 1] == nn[written])
        verdict = cell_ok[cells]
        other = ~meant
        if other.any():
            c2 = cells[other]
            verdict[other] = _cell_products_ok(tr.prod_a[c2], tr.prod_b[c2], mm[written][other], nn[written][other], K)
        right[written] = verdict
    wrong = ~right.reshape(M, N)
    ok = not wrong.any()
    notes = list(tr.notes)
    first = None
    checks: list[StageCheck] = list(tr.checks)
    if not ok:
        for c in checks:
            if not c.mismatches or c.first is None:
                continue
            if c.operand and cell_ok.all():
                continue  # harmless here: the cells get their products in another K order
            first = dict(c.first)
            break
        if first is None:  # no stage differs, yet an output is wrong (e.g. two cells to one output)
            bad = int(np.argmax(wrong.ravel()))
            cell = int(oc[bad])
            first = {"stage": "accumulator", "location": tr.cell_name(cell) if cell >= 0 else "no cell",
                     "lands": "products of another output", "should": f"A[{bad // N}, :] @ B[:, {bad % N}]"}
        fo = np.argwhere(wrong)[0]
        first["output"] = (int(fo[0]), int(fo[1]))
    elif any(c.operand and c.mismatches for c in checks):
        notes.append("an operand is read in another K order than stored, identically in A and B: "
                     "every output still gets its K products")
    title = f"proof of {pipeline.arch} {M}x{N}x{K} {pipeline.dtype} pipeline"
    return Proof(ok, wrong, first, tuple(checks), tuple(tr.accesses), tuple(notes), title)
