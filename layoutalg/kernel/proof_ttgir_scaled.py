"""The block scale factors of ``ttng.tc_gen5_mma_scaled`` (``tl.dot_scaled`` on sm_100), proven to reach their products.

A block-scaled ``tcgen05.mma`` (``kind::mxf8f6f4`` / ``kind::mxf4``) multiplies ``A[m, k] * B[k, n]`` by
``SFA[m, k // 32] * SFB[n, k // 32]``: one 8-bit (``ue8m0``) factor per 32 elements along K. Triton keeps the
factors in tensor memory in ``#ttng.tensor_memory_scales_encoding`` (written by the ``tmem_alloc`` that takes
them from registers, ``tcgen05.st``). This module places every factor where that encoding says (row = TMEM
lane, col = the byte slot: four per 32-bit column) and reads them back as the hardware does -- the catalog's
``umma_tmem_sf`` (CuTe's ``tmem_sf_frg``: row ``r`` of each 128-row block in lane ``r % 32`` of *every* lane
quarter, the row block ``r // 32`` at 32-bit column ``r // 32``, factor ``s`` at byte ``s``), each lane
quarter reading its own copy, k-step after k-step (the instruction descriptor's scale-factor id advances the
byte). Every replica must hold the factor of its block, and each lane of the storing warps must hold the
factors it writes (warp ``w`` writes TMEM lanes ``32 (w % 4) ..``). The answer, per operand, is which
``(row, k)`` products get their own block's factor; :mod:`~layoutalg.kernel.proof_ttgir` drops the others
from the proof's products.

    >>> import json, os, layoutalg
    >>> from layoutalg.kernel.ttgir import read_ttgir
    >>> root = os.path.dirname(os.path.dirname(layoutalg.__file__))
    >>> d = json.load(open(os.path.join(root, "tests", "data", "triton", "kernels_zoo.json")))
    >>> k = next(k for k in d["kernels"] if k["config"]["kind"] == "dot_scaled" and k["config"]["dtype"] == "e4m3")
    >>> mod = read_ttgir(k["ttgir"])
    >>> op = next(o for o in mod.ops if o.name == "ttng.tc_gen5_mma_scaled")
    >>> scaled_formats(op)
    ('e4m3', 'e4m3')
    >>> checks, ok_a, ok_b = scale_checks(mod, op, 128, 128, 128)
    >>> [(c.stage, c.mismatches) for c in checks]
    [('tmem_store_scales_a', 0), ('tmem_store_scales_b', 0), ('scales_a', 0), ('scales_b', 0)]
    >>> bool(ok_a.all() and ok_b.all())
    True
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import LayoutError, guarded
from .layouts import KernelLayout
from .pipeline import StageCheck
from .ttgir import Op, TtgirModule

__all__ = ["scaled_formats", "scale_checks", "SCALED_FORMATS", "SF_VECTOR"]

#: the operand formats of tc_gen5_mma_scaled read here (``lhs = e4m3 rhs = e4m3``)
SCALED_FORMATS = ("e4m3", "e5m2", "e2m1")
#: K elements per scale factor (the mx formats: one ue8m0 per 32)
SF_VECTOR = 32


@guarded
def scaled_formats(op: Op) -> tuple[str, str]:
    """``(lhs, rhs)`` operand formats of a ``ttng.tc_gen5_mma_scaled`` op, read from its text."""
    words = op.text.replace(",", " ").split()
    got = {}
    for i, w in enumerate(words[:-2]):
        if w in ("lhs", "rhs") and words[i + 1] == "=":
            got[w] = words[i + 2]
    if set(got) != {"lhs", "rhs"} or not all(v in SCALED_FORMATS for v in got.values()):
        raise LayoutError(f"ttgir line {op.line}: {op.name} without 'lhs = <format> rhs = <format>' of "
                          f"{', '.join(SCALED_FORMATS)}")
    return got["lhs"], got["rhs"]


def _span(vecs: list, ndim: int) -> np.ndarray:
    out = np.zeros((1 << len(vecs), ndim), np.int64)
    for i, v in enumerate(vecs):
        out[1 << i: 2 << i] = out[: 1 << i] ^ np.asarray(v, np.int64)[None, :]
    return out


def _image(kl: KernelLayout, shape: tuple) -> np.ndarray:
    """image[lane, byte slot] = row * shape[1] + factor of the scale held there (every replica), -1 where none."""
    b = kl.bases(shape)
    rows, cols = _span(b.get("row", []), 2), _span(b.get("col", []), 2)
    c = rows[:, None, :] ^ cols[None, :, :]
    img = c[..., 0] * shape[1] + c[..., 1]
    out = np.full((128, max(len(cols), 1)), -1, np.int64)
    out[: len(rows)] = img
    return out


def _hardware_reads(kind: str, fmt: str, operand: str, M: int, N: int, K: int) -> tuple[np.ndarray, np.ndarray, int]:
    """(lane, byte) the tcgen05.mma reads the factor of (row r, K element k, lane quarter q) from:
    arrays [MN, K, 4], by the catalog's umma_tmem_sf; and the instruction K."""
    from ..nvidia.blackwell.tmem_accum import dp, umma_tmem_sf
    from ..nvidia.blackwell.umma import umma_atom

    atom = umma_atom(kind=kind, a_type=fmt, b_type=fmt, m=M, n=N, sf_type="ue8m0")
    ki = atom.shape_mnk[2]
    lay = umma_tmem_sf(atom, operand, (M, N, K))
    MN = M if operand == "A" else N
    J = K // ki
    vs = atom.vector_size or SF_VECTOR
    nsf = ki // vs
    # colexicographic over ((((32, MN/32), 4), (VS, NSF)), 1, (J, 1))
    tab = np.asarray(lay.table(), np.int64).reshape((32, MN // 32, 4, vs, nsf, J), order="F")
    r = np.arange(MN)
    k = np.arange(K)
    q = np.arange(4)
    addr = tab[(r % 32)[:, None, None], (r // 32)[:, None, None], q[None, None, :], (k % vs)[None, :, None],
               ((k % ki) // vs)[None, :, None], (k // ki)[None, :, None]]
    return addr // dp(8), addr % dp(8), ki


def _store_check(module: TtgirModule, t: Any, img: np.ndarray, shape: tuple, X: str) -> tuple[StageCheck, np.ndarray]:
    """Each tcgen05.st lane of the tmem_alloc writing the factors holds the factor it writes; the image with the
    cells written wrong emptied."""
    src = next((o for o in module.ops if o.name == "ttng.tmem_alloc" and o.operands and o.result_types
                and o.result_types[0].text == t.text), None)
    stage = f"tmem_store_scales_{X.lower()}"
    if src is None or not isinstance(src.operands[0].encoding, KernelLayout):
        return StageCheck(stage, f"the factors of {X}: no tmem_alloc from registers found (not checked)", 0), img
    enc = src.operands[0].encoding
    b = enc.bases(shape)
    reg, lane, warp = (_span(b.get(n, []), 2) for n in ("register", "lane", "warp"))
    holds = np.zeros((shape[0] * shape[1], len(warp), len(lane)), bool)
    c = reg[:, None, None, :] ^ lane[None, :, None, :] ^ warp[None, None, :, :]
    holds[(c[..., 0] * shape[1] + c[..., 1]), np.arange(len(warp))[None, None, :], np.arange(len(lane))[None, :, None]] = True
    L, S = np.nonzero(img >= 0)
    nw = len(warp)
    if nw < 4:
        raise LayoutError(f"ttgir line {src.line}: {nw} warps cannot reach the 4 lane quarters of tensor memory")
    # lane L is written by the same lane of a warp of its quarter: w = L // 32 + 4 j (which of them writes which
    # column is the lowering's choice; one of them must hold the factor)
    # (operands named first: mypy checks a nested numpy expression once per overload of the one around it)
    quarter_of: npt.NDArray[np.intp] = (L // 32)[:, None]
    other_warps: npt.NDArray[np.intp] = 4 * np.arange(nw // 4)[None, :]
    warp_of: npt.NDArray[np.intp] = quarter_of + other_warps
    lane_of: npt.NDArray[np.intp] = (L % 32)[:, None]
    quarter = holds[:, warp_of, lane_of]  # [el, cells, j]
    ok = quarter[img[L, S], np.arange(len(L))].any(axis=1)
    first = None
    if not ok.all():
        i = int(np.argmax(~ok))
        el = int(img[L[i], S[i]])
        ws = ", ".join(str(int(L[i]) // 32 + 4 * j) for j in range(nw // 4))
        first = {"stage": stage, "location": f"TMEM lane {int(L[i])} byte {int(S[i])} (ttgir line {src.line})",
                 "lands": f"lane {int(L[i]) % 32} of warp(s) {ws}, none holding SF{X}[{el // shape[1]}, "
                          f"{el % shape[1]}]", "should": f"SF{X}[{el // shape[1]}, {el % shape[1]}]"}
    out = img.copy()
    out[L[~ok], S[~ok]] = -1
    return StageCheck(stage, f"tcgen05.st of line {src.line}: each lane writes factors of {X} it holds ({enc.name})",
                      len(L), int((~ok).sum()), first), out


@guarded
def scale_checks(module: TtgirModule, op: Op, M: int, N: int, K: int) -> tuple[list, np.ndarray, np.ndarray]:
    """``(checks, ok_a [M, K], ok_b [N, K])`` for a tc_gen5_mma_scaled of an ``M x N`` tile over ``K`` elements
    (fp4 elements for e2m1): which products get the factors of their own blocks."""
    fa, fb = scaled_formats(op)
    kind = "mxf4" if fa == fb == "e2m1" else "mxf8f6f4"
    if len(op.operands) < 5:
        raise LayoutError(f"ttgir line {op.line}: {op.name} without its two scale operands")
    checks: list = []
    oks = []
    stores = []
    for X, t, fmt, MN in (("A", op.operands[3], fa, M), ("B", op.operands[4], fb, N)):
        enc = t.encoding
        if t.kind != "memdesc" or not isinstance(enc, KernelLayout) or enc.attribute != "ttng.tensor_memory_scales_encoding":
            raise LayoutError(f"ttgir line {op.line}: the scale factors of {X} are not in tensor memory "
                              "(#ttng.tensor_memory_scales_encoding)")
        shape = tuple(int(s) for s in t.shape[-2:])
        if shape[0] != MN or shape[1] * SF_VECTOR != K:
            raise LayoutError(f"ttgir line {op.line}: scale factors {shape} of {X} for {MN} rows and K = {K} "
                              f"(one per {SF_VECTOR})")
        st, img = _store_check(module, t, _image(enc, shape), shape, X)
        stores.append(st)
        lane, byte, _ = _hardware_reads(kind, fmt, X, M, N, K)
        inside = byte < img.shape[1]
        got = np.where(inside, img[lane, np.minimum(byte, img.shape[1] - 1)], -1)  # [MN, K, 4]
        r, k = np.meshgrid(np.arange(MN), np.arange(K), indexing="ij")
        want = (r * shape[1] + k // SF_VECTOR)[:, :, None]
        bad = got != want
        first = None
        if bad.any():
            i, kk, q = (int(v) for v in np.argwhere(bad)[0])
            g = int(got[i, kk, q])
            first = {"stage": f"scales_{X.lower()}",
                     "location": f"{X}[{i}, {kk}] scaled by TMEM lane {int(lane[i, kk, q])} byte {int(byte[i, kk, q])} "
                                 f"(lane quarter {q})",
                     "lands": "nothing" if g < 0 else f"SF{X}[{g // shape[1]}, {g % shape[1]}]",
                     "should": f"SF{X}[{i}, {kk // SF_VECTOR}]"}
        checks.append(StageCheck(f"scales_{X.lower()}", f"{enc.name}: the factor of each of the {MN}x{K} {X} "
                                 f"products, read by the {kind} data path in every lane quarter", int(got.size),
                                 int(bad.sum()), first))
        oks.append(~bad.any(axis=2))
    return stores + checks, oks[0], oks[1]
