"""The Hopper RS pipeline: TMA -> shared memory -> ``ldmatrix`` -> registers -> ``wgmma`` RS -> stmatrix -> TMA store.

As :func:`~layoutalg.kernel.pipeline.hopper_pipeline`, except that A reaches the tensor cores from registers:
each warp of a warpgroup loads its 16 rows of every k-block of 16 with ``ldmatrix.x4`` into the catalog's
``wgmma`` A fragment (``nvidia.hopper.wgmma_fragments``; register ``r`` of the load is A value pair
``2r, 2r+1``). The row addresses are the kernel author's: the TMA wrote the K-major tile with its swizzle on
*absolute* shared addresses, so the address of row ``r``, column ``k0`` is ``Sw(base + offset(r, k0))``.
Computing the XOR from the buffer-relative offset instead (``Sw(offset) + base``, ``ldsm_relative=True``)
is the same thing only when the base is a multiple of the swizzle's repeat -- the bug of NVIDIA/Fuser#4096
and cloudrift-ai/emmy#200.

    >>> from layoutalg.kernel.proof import prove
    >>> prove(hopper_rs_pipeline(base_a=384)).ok
    True
    >>> p = prove(hopper_rs_pipeline(base_a=384, ldsm_relative=True))
    >>> p.first_wrong["stage"], p.first_wrong["lands"], p.first_wrong["should"]
    ('ldmatrix_a', 'A[0, 24]', 'A[0, 0]')
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from ..errors import LayoutError
from .pipeline import TAG_A, Pipeline, Stage, StageCheck, bank_report, element_name, hopper_pipeline, owner, read, \
    trace_hopper

__all__ = ["hopper_rs_pipeline", "RS_KNOBS"]

#: knobs of hopper_rs_pipeline beyond hopper_pipeline's (whose A-descriptor knobs it has not)
RS_KNOBS: dict = {"ldsm_swizzle_a": None, "ldsm_relative": False, "ldsm_trans_a": False}
_A_DESCRIPTOR_KNOBS = ("desc_swizzle_a", "desc_base_offset_a", "lbo_a", "sbo_a")


def _swz(x: np.ndarray, sw: int) -> np.ndarray:
    """Swizzle<B,4,3> on byte addresses: 16-byte chunk bits 4.. ^= row bits 7.. (B = log2(sw / 16))."""
    if sw == 0:
        return x
    return x ^ (((x >> 7) & (sw // 16 - 1)) << 4)  # type: ignore[no-any-return]


def hopper_rs_pipeline(**knobs: Any) -> Pipeline:
    """The Hopper RS GEMM tile pipeline (see the module doc); the defaults build a correct one.

    Knobs: those of :func:`~layoutalg.kernel.pipeline.hopper_pipeline` except A's descriptor knobs
    (``desc_swizzle_a``, ``desc_base_offset_a``, ``lbo_a``, ``sbo_a``: A has no descriptor), A K-major, and
    ``ldsm_swizzle_a`` (the swizzle the ldmatrix addresses assume; None = ``swizzle_a``), ``ldsm_relative``
    (the XOR from the buffer offset instead of the absolute address), ``ldsm_trans_a`` (``ldmatrix.trans``).

    >>> [s.name for s in hopper_rs_pipeline().stages][3:6]
    ['tiled_mma', 'ldmatrix_a', 'wgmma_read_b']
    """
    op = "hopper_rs_pipeline"
    bad = sorted(k for k in knobs if k in _A_DESCRIPTOR_KNOBS)
    if bad:
        raise LayoutError(f"{op}: {bad}: A comes from registers in wgmma RS; it has no shared-memory descriptor")
    rs = dict(RS_KNOBS)
    for k in list(knobs):
        if k in RS_KNOBS:
            rs[k] = knobs.pop(k)
    if knobs.get("a_major", "K") not in ("K", "k"):
        raise LayoutError(f"{op}: a_major={knobs['a_major']!r}: this RS path loads a K-major A (ldmatrix without .trans)")
    p = hopper_pipeline(**knobs)
    sw = p.knobs["swizzle_a"]
    lsw = sw if rs["ldsm_swizzle_a"] is None else rs["ldsm_swizzle_a"]
    if lsw not in (0, 32, 64, 128) or isinstance(lsw, bool):
        raise LayoutError(f"{op}: ldsm_swizzle_a={lsw!r} is not one of 0, 32, 64, 128")
    for k in ("ldsm_relative", "ldsm_trans_a"):
        if not isinstance(rs[k], bool):
            raise LayoutError(f"{op}: {k}={rs[k]!r} is not a bool")
    kn = dict(p.knobs)
    kn.update(rs, ldsm_swizzle_a=lsw)
    for k in _A_DESCRIPTOR_KNOBS:
        kn.pop(k, None)
    stages = []
    for s in p.stages:
        if s.name == "wgmma_read_a":
            how = "buffer offset + base" if rs["ldsm_relative"] else "absolute address"
            stages.append(Stage("ldmatrix_a", "operand",
                                f"ldmatrix.x4{'.trans' if rs['ldsm_trans_a'] else ''} of A into the wgmma A fragment, "
                                f"row addresses swizzled ({lsw} B) on the {how}", {"swizzle": lsw}))
        elif s.name == "tiled_mma":
            stages.append(replace(s, summary=s.summary.replace("wgmma.mma_async", "wgmma.mma_async (RS)")))
        else:
            stages.append(s)
    return Pipeline("sm_90a", p.M, p.N, p.K, p.dtype, kn, tuple(stages), lambda q: trace_hopper(q, _rs_reads))


def _rs_reads(p: Pipeline, smem: np.ndarray, rows: tuple) -> tuple[np.ndarray, StageCheck, list]:
    from ..nvidia.ampere.ldmatrix import fragment as ldsm_fragment
    from ..nvidia.hopper.wgmma_fragments import fragment as wgmma_fragment

    kn = p.knobs
    W, M, N, K = kn["warpgroups"], p.M, p.N, p.K
    st = p.stage("tma_load_a").details
    base, layout = st["base"], st["layout"]
    lin = 2 * np.asarray(layout.inner.table(), np.int64)  # unswizzled byte offset of (m, k), index m + M*k
    lsw, rel, trans = kn["ldsm_swizzle_a"], kn["ldsm_relative"], kn["ldsm_trans_a"]
    lf = ldsm_fragment(4, trans)
    af = wgmma_fragment(f"m64n{N}k16", p.dtype, "A")
    L = np.arange(32)[:, None]
    V = np.arange(8)[None, :]
    idx = lf.index(L, V)
    mat, r, c = idx // 64, idx % 8, (idx // 8) % 8
    J = K // 16
    got_a = np.full((W, J, 64, 16), -1, np.int64)
    got_tv = np.full((W, J, 4, 32, 8), -1, np.int64)
    want_tv = np.full_like(got_tv, -1)
    addr_tv = np.zeros_like(got_tv)
    lanes_addr = []
    for w in range(W):
        for j in range(J):
            for warp in range(4):
                ln = np.arange(32)
                row = 64 * rows[w] + 16 * warp + ln % 16
                k0 = 16 * j + 8 * (ln // 16)
                off = lin[row + M * k0]
                rowaddr = base + _swz(off, lsw) if rel else _swz(base + off, lsw)
                lanes_addr.append([int(a) for a in rowaddr])
                a = rowaddr[8 * mat + r] + 2 * c
                g = read(smem, a)
                t = 32 * warp + L
                fi = af.index(t, V)  # m + 64 * k of the wgmma A fragment value
                fm, fk = fi % 64, fi // 64
                got_tv[w, j, warp], addr_tv[w, j, warp] = g, a
                want_tv[w, j, warp] = owner(TAG_A, (64 * rows[w] + fm) * K + 16 * j + fk)
                got_a[w, j, fm, fk] = g
    bad = got_tv != want_tv
    first = None
    if bad.any():
        w, j, warp, ll, v = (int(x) for x in np.argwhere(bad)[0])
        first = {"stage": "ldmatrix_a",
                 "location": (f"warpgroup {w} warp {warp} k-block {j}: lane {ll} register {v // 2} half {v % 2}, from "
                              f"shared byte {int(addr_tv[w, j, warp, ll, v]):#x}"),
                 "lands": element_name(int(got_tv[w, j, warp, ll, v]), K),
                 "should": element_name(int(want_tv[w, j, warp, ll, v]), K)}
    check = StageCheck("ldmatrix_a", f"{got_tv.size} wgmma A fragment values loaded by ldmatrix", got_tv.size,
                       int(bad.sum()), first, operand=True)
    acc = bank_report("ldmatrix_a", f"ldmatrix.x4{'.trans' if trans else ''}", lanes_addr, 16)
    return got_a, check, [acc]
