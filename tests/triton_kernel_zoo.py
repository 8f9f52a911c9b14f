"""Triton and Gluon kernel sources compiled by tests/record_triton_kernels.py (``record_zoo``): the kernels a
reader of real ttgir meets -- attention forward, persistent and warp-specialized matmuls over tensor
descriptors, tf32 / int8 / fp8 / transposed operands, block-scaled dots, reductions, softmax and
transposes that convert layouts through shared memory, and Gluon kernels (Hopper wgmma, Blackwell
tcgen05) written with their layouts by hand.

Each entry of :func:`configs` is ``(name, source, kernel, signature, constexprs, arch, num_warps,
num_stages)``; nothing here runs a kernel.
"""

from __future__ import annotations

ATTENTION = '''
import triton
import triton.language as tl


@triton.jit
def attn_fwd(Q, K, V, Out, sm_scale, stride_m, N_CTX, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
             HEAD_DIM: tl.constexpr):
    start_m = tl.program_id(0)
    off_h = tl.program_id(1).to(tl.int64) * N_CTX * stride_m
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + off_h + offs_m[:, None] * stride_m + offs_d[None, :])
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504
    for start_n in tl.range(0, N_CTX, BLOCK_N):
        k = tl.load(K + off_h + (start_n + offs_n)[None, :] * stride_m + offs_d[:, None])
        qk = tl.dot(q, k)
        m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
        qk = qk * qk_scale - m_ij[:, None]
        p = tl.math.exp2(qk)
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = tl.load(V + off_h + (start_n + offs_n)[:, None] * stride_m + offs_d[None, :])
        acc = tl.dot(p.to(v.dtype), v, acc)
        m_i = m_ij
    acc = acc / l_i[:, None]
    tl.store(Out + off_h + offs_m[:, None] * stride_m + offs_d[None, :], acc.to(Out.dtype.element_ty))
'''

ATTENTION_TMA = '''
import triton
import triton.language as tl


@triton.jit
def attn_fwd_tma(desc_q, desc_k, desc_v, desc_o, sm_scale, N_CTX, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                 HEAD_DIM: tl.constexpr, WS: tl.constexpr):
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    qo_offset_y = off_hz * N_CTX + start_m * BLOCK_M
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504
    q = desc_q.load([qo_offset_y, 0])
    for start_n in tl.range(0, N_CTX, BLOCK_N, warp_specialize=WS):
        k = desc_k.load([off_hz * N_CTX + start_n, 0]).T
        qk = tl.dot(q, k)
        m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
        qk = qk * qk_scale - m_ij[:, None]
        p = tl.math.exp2(qk)
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = desc_v.load([off_hz * N_CTX + start_n, 0])
        acc = tl.dot(p.to(v.dtype), v, acc)
        m_i = m_ij
    acc = acc / l_i[:, None]
    desc_o.store([qo_offset_y, 0], acc.to(desc_o.dtype))
'''

PERSISTENT = '''
import triton
import triton.language as tl


@triton.jit
def matmul_persistent(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                      NUM_SMS: tl.constexpr, WS: tl.constexpr):
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[K, 1], block_shape=[BN, BK])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    start_pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BM)
    num_pid_n = tl.cdiv(N, BN)
    k_tiles = tl.cdiv(K, BK)
    for tile_id in tl.range(start_pid, num_pid_m * num_pid_n, NUM_SMS, flatten=True, warp_specialize=WS):
        pid_m = tile_id // num_pid_n
        pid_n = tile_id % num_pid_n
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for ki in range(k_tiles):
            a = a_desc.load([pid_m * BM, ki * BK])
            b = b_desc.load([pid_n * BN, ki * BK])
            acc = tl.dot(a, b.T, acc)
        c_desc.store([pid_m * BM, pid_n * BN], acc.to(c_ptr.dtype.element_ty))
'''

MATMUL_T = '''
import triton
import triton.language as tl


@triton.jit
def matmul_t(a_ptr, b_ptr, c_ptr, M, N, K, stride_a, stride_b, stride_c, BM: tl.constexpr, BN: tl.constexpr,
             BK: tl.constexpr, A_T: tl.constexpr, B_T: tl.constexpr, PREC: tl.constexpr, ACC: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=ACC)
    for k in range(0, K, BK):
        if A_T:
            a = tl.load(a_ptr + (k + rk)[None, :] * stride_a + rm[:, None])
        else:
            a = tl.load(a_ptr + rm[:, None] * stride_a + (k + rk)[None, :])
        if B_T:
            b = tl.load(b_ptr + rn[None, :] * stride_b + (k + rk)[:, None])
        else:
            b = tl.load(b_ptr + (k + rk)[:, None] * stride_b + rn[None, :])
        acc = tl.dot(a, b, acc, input_precision=PREC, out_dtype=ACC)
    tl.store(c_ptr + rm[:, None] * stride_c + rn[None, :], acc)
'''

DOT_SCALED = '''
import triton
import triton.language as tl


@triton.jit
def dot_scaled(a_ptr, b_ptr, as_ptr, bs_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
               KS: tl.constexpr, FMT: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    rs = tl.arange(0, KS)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * BN + rn[None, :])
        a_s = tl.load(as_ptr + rm[:, None] * K + (k + rs)[None, :])
        b_s = tl.load(bs_ptr + rn[:, None] * K + (k + rs)[None, :])
        acc = tl.dot_scaled(a, a_s, FMT, b, b_s, FMT, acc)
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc)
'''

SHUFFLES = '''
import triton
import triton.language as tl


@triton.jit
def softmax(x_ptr, y_ptr, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    tl.store(y_ptr + row * stride + cols, num / tl.sum(num, axis=0), mask=cols < n_cols)


@triton.jit
def transpose(x_ptr, y_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    x = tl.load(x_ptr + rm[:, None] * N + rn[None, :])
    tl.store(y_ptr + rn[:, None] * M + rm[None, :], tl.trans(x))


@triton.jit
def row_sum(x_ptr, y_ptr, N, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    x = tl.load(x_ptr + rm[:, None] * N + rn[None, :])
    s = tl.sum(x, axis=1)
    y = x / s[:, None]
    tl.store(y_ptr + rm[:, None] * N + rn[None, :], tl.sum(y.to(tl.float32), axis=0)[None, :] + y)


@triton.jit
def softmax_2d(x_ptr, y_ptr, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    x = tl.load(x_ptr + rm[:, None] * BN + rn[None, :]).to(tl.float32)
    x = x - tl.max(x, axis=1)[:, None]
    e = tl.exp(x)
    y = e / tl.sum(e, axis=1)[:, None]
    tl.store(y_ptr + rn[:, None] * BM + rm[None, :], tl.trans(y).to(y_ptr.dtype.element_ty))
'''

GLUON_HOPPER = '''
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import fence_async_shared, mbarrier, tma, warpgroup_mma
from triton.experimental.gluon.language.nvidia.hopper import warpgroup_mma_wait


@gluon.jit
def wgmma_gemm(a_desc, b_desc, c_desc, K, BM: gl.constexpr, BN: gl.constexpr, BK: gl.constexpr,
               ACC: gl.constexpr, EPI: gl.constexpr):
    a_s = gl.allocate_shared_memory(a_desc.dtype, [BM, BK], a_desc.layout)
    b_s = gl.allocate_shared_memory(b_desc.dtype, [BK, BN], b_desc.layout)
    bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    mbarrier.init(bar, count=1)
    acc = gl.zeros((BM, BN), dtype=gl.float32, layout=ACC)
    phase = 0
    for k in range(0, K, BK):
        mbarrier.expect(bar, a_desc.block_type.nbytes + b_desc.block_type.nbytes)
        tma.async_copy_global_to_shared(a_desc, [gl.program_id(0) * BM, k], bar, a_s)
        tma.async_copy_global_to_shared(b_desc, [k, gl.program_id(1) * BN], bar, b_s)
        mbarrier.wait(bar, phase)
        phase ^= 1
        acc = warpgroup_mma(a_s, b_s, acc, is_async=True)
        acc = warpgroup_mma_wait(num_outstanding=0, deps=(acc,))
    mbarrier.invalidate(bar)
    c = gl.convert_layout(acc.to(c_desc.dtype), EPI)
    c_s = gl.allocate_shared_memory(c_desc.dtype, [BM, BN], c_desc.layout, c)
    fence_async_shared()
    tma.async_copy_shared_to_global(c_desc, [gl.program_id(0) * BM, gl.program_id(1) * BN], c_s)
    tma.store_wait(0)
'''

GLUON_BLACKWELL = '''
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.blackwell import TensorMemoryLayout, allocate_tensor_memory
from triton.experimental.gluon.language.nvidia.blackwell import get_tmem_reg_layout, tcgen05_commit, tcgen05_mma
from triton.experimental.gluon.language.nvidia.hopper import fence_async_shared, mbarrier, tma


@gluon.jit
def tcgen05_gemm(a_desc, b_desc, c_desc, K, BM: gl.constexpr, BN: gl.constexpr, BK: gl.constexpr,
                 num_warps: gl.constexpr):
    a_s = gl.allocate_shared_memory(a_desc.dtype, [BM, BK], a_desc.layout)
    b_s = gl.allocate_shared_memory(b_desc.dtype, [BN, BK], b_desc.layout)
    tma_bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    mma_bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    mbarrier.init(tma_bar, count=1)
    mbarrier.init(mma_bar, count=1)
    tmem_layout: gl.constexpr = TensorMemoryLayout([BM, BN], col_stride=1)
    acc_t = allocate_tensor_memory(gl.float32, [BM, BN], tmem_layout)
    phase = 0
    use_acc = False
    for k in range(0, K, BK):
        mbarrier.expect(tma_bar, a_desc.block_type.nbytes + b_desc.block_type.nbytes)
        tma.async_copy_global_to_shared(a_desc, [gl.program_id(0) * BM, k], tma_bar, a_s)
        tma.async_copy_global_to_shared(b_desc, [gl.program_id(1) * BN, k], tma_bar, b_s)
        mbarrier.wait(tma_bar, phase)
        tcgen05_mma(a_s, b_s.permute((1, 0)), acc_t, use_acc=use_acc)
        tcgen05_commit(mma_bar)
        mbarrier.wait(mma_bar, phase)
        use_acc = True
        phase ^= 1
    mbarrier.invalidate(tma_bar)
    mbarrier.invalidate(mma_bar)
    reg: gl.constexpr = get_tmem_reg_layout(gl.float32, (BM, BN), tmem_layout, num_warps)
    acc = acc_t.load(reg)
    c_s = gl.allocate_shared_memory(c_desc.dtype, [BM, BN], c_desc.layout, acc.to(c_desc.dtype))
    fence_async_shared()
    tma.async_copy_shared_to_global(c_desc, [gl.program_id(0) * BM, gl.program_id(1) * BN], c_s)
    tma.store_wait(0)
'''

GLUON_LAYOUTS = '''
from triton.experimental import gluon
from triton.experimental.gluon import language as gl


@gluon.jit
def shuffle(in_ptr, out_ptr, R: gl.constexpr, C: gl.constexpr, L_IN: gl.constexpr, L_MID: gl.constexpr,
            L_OUT: gl.constexpr, SMEM: gl.constexpr):
    rows = gl.arange(0, R, layout=gl.SliceLayout(1, L_IN))
    cols = gl.arange(0, C, layout=gl.SliceLayout(0, L_IN))
    x = gl.load(in_ptr + rows[:, None] * C + cols[None, :])
    y = gl.convert_layout(x, L_MID)
    s = gl.sum(y.to(gl.float32), axis=1)
    buf = gl.allocate_shared_memory(gl.float16, [R, C], SMEM)
    buf.store(y)
    z = buf.load(L_OUT)
    buf.permute((1, 0)).load(L_OUT)
    rows2 = gl.arange(0, R, layout=gl.SliceLayout(1, L_OUT))
    cols2 = gl.arange(0, C, layout=gl.SliceLayout(0, L_OUT))
    gl.store(out_ptr + rows2[:, None] * C + cols2[None, :], z)
    t = gl.convert_layout(s, gl.SliceLayout(1, L_IN))
    gl.store(out_ptr + rows, t.to(gl.float16))
'''


def _desc(dt: str, block: list[int], layout: object = None) -> str:
    return f"tensordesc<{dt}[{', '.join(str(b) for b in block)}]" + (f",{layout!r}>" if layout is not None else ">")


def configs() -> list[dict]:
    """Every kernel of the zoo: {kind, source, kernel, signature, constexprs, arch, num_warps, num_stages, gluon}."""
    import triton.language as tl
    from triton.experimental.gluon import language as gl

    out: list[dict] = []

    def add(kind: str, source: str, kernel: str, sig: dict, consts: dict, arch: int, warps: int = 4,
            stages: int = 3, gluon: bool = False, **extra: object) -> None:
        out.append({"kind": kind, "source": source, "kernel": kernel, "signature": sig, "constexprs": consts,
                    "arch": arch, "num_warps": warps, "num_stages": stages, "gluon": gluon, **extra})

    # attention forward, pointers: sm_80 / 90 / 100, head dims 64 / 128
    for arch, dt, bm, bn, d, w, s in ((80, "fp16", 128, 64, 64, 4, 2), (80, "bf16", 64, 64, 128, 4, 3),
                                      (90, "fp16", 128, 64, 64, 8, 3), (90, "bf16", 128, 128, 128, 8, 2),
                                      (100, "fp16", 128, 64, 64, 4, 3), (100, "bf16", 128, 128, 128, 8, 2)):
        sig = {"Q": f"*{dt}", "K": f"*{dt}", "V": f"*{dt}", "Out": f"*{dt}", "sm_scale": "fp32",
               "stride_m": "i32", "N_CTX": "i32"}
        add("attention", ATTENTION, "attn_fwd", sig, {"BLOCK_M": bm, "BLOCK_N": bn, "HEAD_DIM": d}, arch, w, s,
            dtype=dt)
    # attention forward over tensor descriptors (warp-specialized on sm_100)
    for arch, dt, d, w, ws in ((90, "fp16", 64, 8, False), (100, "fp16", 128, 4, False), (100, "bf16", 64, 4, True),
                               (90, "fp8e4nv", 128, 8, False)):
        bm, bn = 128, 64 if d == 128 or dt.startswith("fp8") else 128
        sig = {"desc_q": _desc(dt, [bm, d]), "desc_k": _desc(dt, [bn, d]), "desc_v": _desc(dt, [bn, d]),
               "desc_o": _desc(dt if not dt.startswith("fp8") else "fp16", [bm, d]), "sm_scale": "fp32", "N_CTX": "i32"}
        add("attention_tma", ATTENTION_TMA, "attn_fwd_tma", sig,
            {"BLOCK_M": bm, "BLOCK_N": bn, "HEAD_DIM": d, "WS": ws}, arch, w, 3, dtype=dt)
    # persistent matmuls over device-side tensor descriptors; warp-specialized on sm_100
    for arch, dt, bm, bn, bk, w, s, ws in ((90, "fp16", 128, 128, 64, 4, 3, False), (90, "fp8e4nv", 128, 256, 128, 8, 4, False),
                                           (100, "fp16", 128, 256, 64, 4, 3, True), (100, "bf16", 128, 128, 64, 8, 4, False),
                                           (100, "fp8e5", 128, 128, 128, 4, 2, True)):
        sig = {"a_ptr": f"*{dt}", "b_ptr": f"*{dt}", "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32"}
        add("persistent", PERSISTENT, "matmul_persistent", sig,
            {"BM": bm, "BN": bn, "BK": bk, "NUM_SMS": 132, "WS": ws}, arch, w, s, dtype=dt)
    # tf32, int8, transposed operands
    transposed = ((80, "fp32", "fp32", "tf32", False, True, 4, 3), (90, "fp32", "fp32", "tf32", True, False, 4, 3),
                  (100, "fp32", "fp32", "tf32", False, False, 4, 2), (80, "i8", "int32", "ieee", False, True, 4, 2),
                  (90, "i8", "int32", "ieee", False, True, 8, 4), (100, "i8", "int32", "ieee", False, True, 4, 3),
                  (80, "fp16", "fp32", "ieee", True, True, 8, 4), (90, "fp16", "fp32", "ieee", True, True, 4, 4),
                  (100, "bf16", "fp32", "ieee", True, False, 8, 3), (90, "fp8e5", "fp32", "ieee", False, True, 4, 2))
    for arch, dt, acc, prec, at, bt, w, s in transposed:
        out_dt = {"fp32": "fp32", "int32": "i32"}[acc]
        sig = {"a_ptr": f"*{dt}", "b_ptr": f"*{dt}", "c_ptr": f"*{out_dt}", "M": "i32", "N": "i32", "K": "i32",
               "stride_a": "i32", "stride_b": "i32", "stride_c": "i32"}
        bk = 64 if dt in ("i8", "fp8e5") else 32
        add("matmul_t", MATMUL_T, "matmul_t", sig,
            {"BM": 128, "BN": 128, "BK": bk, "A_T": at, "B_T": bt, "PREC": prec,
             "ACC": {"fp32": tl.float32, "int32": tl.int32}[acc]}, arch, w, s, dtype=dt)
    # found by a sweep: two warp groups along N, each an MN-major B share (N = 32) narrower than its 128B swizzle atom
    sig = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp32", "M": "i32", "N": "i32", "K": "i32",
           "stride_a": "i32", "stride_b": "i32", "stride_c": "i32"}
    add("matmul_t", MATMUL_T, "matmul_t", sig, {"BM": 64, "BN": 64, "BK": 32, "A_T": False, "B_T": False, "PREC": "ieee",
                                                "ACC": tl.float32}, 90, 8, 4, dtype="fp16")
    # block-scaled dots on sm_100a
    for fmt, bk, w in (("e4m3", 128, 4), ("e5m2", 128, 8), ("e2m1", 128, 4)):
        dt = "u8" if fmt == "e2m1" else ("fp8e4nv" if fmt == "e4m3" else "fp8e5")
        sig = {"a_ptr": f"*{dt}", "b_ptr": f"*{dt}", "as_ptr": "*u8", "bs_ptr": "*u8", "c_ptr": "*fp32", "K": "i32"}
        add("dot_scaled", DOT_SCALED, "dot_scaled", sig, {"BM": 128, "BN": 128, "BK": bk if fmt != "e2m1" else bk // 2,
                                                          "KS": bk // 32, "FMT": fmt}, 100, w, 3, dtype=fmt)
    # reductions, softmax and transposes (layout conversions through shared memory)
    for arch, w in ((80, 4), (90, 8), (100, 4)):
        add("softmax", SHUFFLES, "softmax", {"x_ptr": "*fp32", "y_ptr": "*fp32", "stride": "i32", "n_cols": "i32"},
            {"BLOCK": 1024}, arch, w)
        add("transpose", SHUFFLES, "transpose", {"x_ptr": "*fp16", "y_ptr": "*fp16", "M": "i32", "N": "i32"},
            {"BM": 64, "BN": 64 if w == 4 else 128}, arch, w)
        add("row_sum", SHUFFLES, "row_sum", {"x_ptr": "*fp16", "y_ptr": "*fp32", "N": "i32"}, {"BM": 32, "BN": 128}, arch, w)
        add("softmax_2d", SHUFFLES, "softmax_2d", {"x_ptr": "*bf16", "y_ptr": "*bf16"}, {"BM": 64, "BN": 128}, arch, w)
    # Gluon: Hopper wgmma, Blackwell tcgen05 (TMA in and out)
    for dt, bm, bn, bk, w in (("fp16", 128, 128, 64, 4), ("bf16", 64, 256, 64, 4), ("fp16", 128, 256, 64, 8)):
        gdt = {"fp16": gl.float16, "bf16": gl.bfloat16}[dt]
        la = gl.NVMMASharedLayout.get_default_for([bm, bk], gdt)
        lb = gl.NVMMASharedLayout.get_default_for([bk, bn], gdt)
        lc = gl.NVMMASharedLayout.get_default_for([bm, bn], gl.float16)
        acc = gl.NVMMADistributedLayout([3, 0], [w, 1], [16, bn, 16])
        epi = gl.BlockedLayout([1, 8], [4, 8], [w, 1], [1, 0])
        sig = {"a_desc": _desc(dt, [bm, bk], la), "b_desc": _desc(dt, [bk, bn], lb),
               "c_desc": _desc("fp16", [bm, bn], lc), "K": "i32"}
        add("gluon_wgmma", GLUON_HOPPER, "wgmma_gemm", {**sig, **{k: "constexpr" for k in ("BM", "BN", "BK", "ACC", "EPI")}},
            {"BM": bm, "BN": bn, "BK": bk, "ACC": acc, "EPI": epi}, 90, w, gluon=True, dtype=dt)
    for dt, bm, bn, bk, w in (("fp16", 128, 128, 64, 4), ("bf16", 128, 256, 64, 8), ("fp8e4nv", 128, 64, 128, 4)):
        gdt = {"fp16": gl.float16, "bf16": gl.bfloat16, "fp8e4nv": gl.float8e4nv}[dt]
        la = gl.NVMMASharedLayout.get_default_for([bm, bk], gdt)
        lb = gl.NVMMASharedLayout.get_default_for([bn, bk], gdt)
        lc = gl.NVMMASharedLayout.get_default_for([bm, bn], gl.float16)
        sig = {"a_desc": _desc(dt, [bm, bk], la), "b_desc": _desc(dt, [bn, bk], lb),
               "c_desc": _desc("fp16", [bm, bn], lc), "K": "i32"}
        add("gluon_tcgen05", GLUON_BLACKWELL, "tcgen05_gemm",
            {**sig, **{k: "constexpr" for k in ("BM", "BN", "BK", "num_warps")}},
            {"BM": bm, "BN": bn, "BK": bk, "num_warps": w}, 100, w, gluon=True, dtype=dt)
    # Gluon: conversions between layouts of every distributed class through shared memory of every class
    mma2 = gl.NVMMADistributedLayout([2, 0], [2, 2], [16, 8])
    mma3 = gl.NVMMADistributedLayout([3, 0], [4, 1], [16, 64, 16])
    lin = gl.DistributedLinearLayout([[0, 1], [0, 2], [0, 4], [0, 32], [32, 0]], [[1, 0], [2, 0], [4, 0], [0, 8], [0, 16]],
                                     [[8, 0], [16, 0]], [], [64, 64])
    blocked = gl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0])
    col = gl.BlockedLayout([4, 1], [16, 2], [1, 4], [0, 1])
    shared = [gl.SwizzledSharedLayout(8, 2, 4, [1, 0]), gl.SwizzledSharedLayout(1, 1, 1, [0, 1]),
              gl.NVMMASharedLayout(128, 16), gl.NVMMASharedLayout(64, 16, transposed=True),
              gl.PaddedSharedLayout.with_identity_for([[64, 8]], [64, 64], [1, 0]),
              gl.SharedLinearLayout([[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [0, 32], [1, 0], [2, 0], [4, 0], [8, 0],
                                     [16, 0], [32, 0]])]
    pairs = [(blocked, mma2, gl.DotOperandLayout(0, mma2, 2)), (col, lin, blocked), (blocked, mma3, gl.DotOperandLayout(0, mma3, 2)),
             (lin, col, gl.DotOperandLayout(1, mma2, 2)), (mma2, blocked, col), (blocked, gl.DotOperandLayout(1, mma2, 4), lin)]
    for i, smem in enumerate(shared):
        for j in (i, (i + 3) % len(pairs)):
            l_in, l_mid, l_out = pairs[j]
            add("gluon_shuffle", GLUON_LAYOUTS, "shuffle",
                {"in_ptr": "*fp16", "out_ptr": "*fp16", **{k: "constexpr" for k in ("R", "C", "L_IN", "L_MID", "L_OUT", "SMEM")}},
                {"R": 64, "C": 64, "L_IN": l_in, "L_MID": l_mid, "L_OUT": l_out, "SMEM": smem}, 90, 4, gluon=True)
    return out


def amd_configs() -> list[dict]:
    """AMD kernels: Triton matmuls and attention for gfx942 / gfx950 (wave64) and gfx1100 / gfx1200 (wave32)."""
    out: list[dict] = []
    base = {"source": None, "gluon": False, "num_stages": 2}
    for target, dt, bm, bn, bk, w in (("gfx942", "fp16", 128, 128, 64, 4), ("gfx942", "bf16", 64, 128, 32, 8),
                                      ("gfx942", "fp8e4b8", 128, 128, 64, 4), ("gfx950", "fp16", 128, 128, 64, 4),
                                      ("gfx950", "bf16", 256, 128, 64, 8), ("gfx950", "fp8e4nv", 128, 128, 128, 4),
                                      ("gfx1100", "fp16", 64, 64, 32, 4), ("gfx1100", "bf16", 128, 64, 32, 8),
                                      ("gfx1200", "fp16", 64, 128, 32, 4), ("gfx1200", "fp8e4nv", 64, 64, 64, 4)):
        sig = {"a_ptr": f"*{dt}", "b_ptr": f"*{dt}", "c_ptr": "*fp32", "M": "i32", "N": "i32", "K": "i32",
               "stride_a": "i32", "stride_b": "i32", "stride_c": "i32"}
        for at, bt in ((False, False), (False, True)):
            out.append({**base, "kind": "amd_matmul", "source": MATMUL_T, "kernel": "matmul_t", "signature": sig,
                        "constexprs": {"BM": bm, "BN": bn, "BK": bk, "A_T": at, "B_T": bt, "PREC": "ieee",
                                       "ACC": "fp32"},
                        "arch": target, "num_warps": w, "dtype": dt})
    for target, d, w in (("gfx942", 64, 4), ("gfx950", 128, 4), ("gfx1100", 64, 4), ("gfx1200", 64, 4)):
        sig = {"Q": "*fp16", "K": "*fp16", "V": "*fp16", "Out": "*fp16", "sm_scale": "fp32", "stride_m": "i32",
               "N_CTX": "i32"}
        out.append({**base, "kind": "amd_attention", "source": ATTENTION, "kernel": "attn_fwd", "signature": sig,
                    "constexprs": {"BLOCK_M": 64, "BLOCK_N": 64, "HEAD_DIM": d}, "arch": target, "num_warps": w,
                    "dtype": "fp16"})
    for target in ("gfx942", "gfx1200"):
        out.append({**base, "kind": "amd_softmax", "source": SHUFFLES, "kernel": "softmax_2d",
                    "signature": {"x_ptr": "*bf16", "y_ptr": "*bf16"}, "constexprs": {"BM": 64, "BN": 128},
                    "arch": target, "num_warps": 4, "dtype": "bf16"})
    return out


GLUON_AMD = '''
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.amd import cdna3, cdna4


@gluon.jit
def amd_gemm(a_ptr, b_ptr, c_ptr, M: gl.constexpr, N: gl.constexpr, K: gl.constexpr, L_LOAD: gl.constexpr,
             ACC: gl.constexpr, SMEM_A: gl.constexpr, SMEM_B: gl.constexpr, KW: gl.constexpr, ASYNC: gl.constexpr):
    rm = gl.arange(0, M, layout=gl.SliceLayout(1, L_LOAD))
    rk = gl.arange(0, K, layout=gl.SliceLayout(0, L_LOAD))
    rk2 = gl.arange(0, K, layout=gl.SliceLayout(1, L_LOAD))
    rn = gl.arange(0, N, layout=gl.SliceLayout(0, L_LOAD))
    a_s = gl.allocate_shared_memory(a_ptr.dtype.element_ty, [M, K], SMEM_A)
    b_s = gl.allocate_shared_memory(b_ptr.dtype.element_ty, [K, N], SMEM_B)
    if ASYNC:
        cdna4.async_copy.buffer_load_to_shared(a_s, a_ptr, rm[:, None] * K + rk[None, :])
        cdna4.async_copy.buffer_load_to_shared(b_s, b_ptr, rk2[:, None] * N + rn[None, :])
        cdna4.async_copy.commit_group()
        cdna4.async_copy.wait_group(0)
    else:
        a_s.store(cdna3.buffer_load(a_ptr, rm[:, None] * K + rk[None, :]))
        b_s.store(cdna3.buffer_load(b_ptr, rk2[:, None] * N + rn[None, :]))
    a = a_s.load(gl.DotOperandLayout(0, ACC, KW))
    b = b_s.load(gl.DotOperandLayout(1, ACC, KW))
    acc = cdna3.mfma(a, b, gl.zeros([M, N], gl.float32, ACC))
    rm2 = gl.arange(0, M, layout=gl.SliceLayout(1, ACC))
    rn2 = gl.arange(0, N, layout=gl.SliceLayout(0, ACC))
    cdna3.buffer_store(acc, c_ptr, rm2[:, None] * N + rn2[None, :])
'''


def gluon_amd_configs() -> list[dict]:
    """Gluon kernels for CDNA3 / CDNA4: buffer loads (and, on gfx950, buffer loads straight to LDS), padded and
    swizzled LDS layouts, MFMA operands loaded from LDS, buffer stores."""
    from triton.experimental.gluon import language as gl
    from triton.experimental.gluon.language.amd import AMDMFMALayout

    out = []
    cases = [("gfx942", 3, [32, 32, 8], 4, gl.PaddedSharedLayout.with_identity_for([[64, 4]], [64, 64], [1, 0]),
              gl.SwizzledSharedLayout(4, 1, 16, [1, 0]), False),
             ("gfx942", 3, [16, 16, 16], 4, gl.SwizzledSharedLayout(4, 2, 8, [1, 0]),
              gl.PaddedSharedLayout.with_identity_for([[64, 8]], [64, 64], [1, 0]), False),
             ("gfx950", 4, [16, 16, 32], 8, gl.PaddedSharedLayout.with_identity_for([[64, 8]], [64, 64], [1, 0]),
              gl.SwizzledSharedLayout(8, 1, 8, [1, 0]), False),
             ("gfx950", 4, [32, 32, 16], 8, gl.SwizzledSharedLayout(1, 1, 1, [1, 0]),
              gl.SwizzledSharedLayout(1, 1, 1, [1, 0]), True)]
    for target, ver, instr, kw, sa, sb, asyn in cases:
        acc = AMDMFMALayout(ver, instr, True, [2, 2])
        load = gl.BlockedLayout([1, 8], [8, 8], [4, 1], [1, 0])
        consts = {"M": 64, "N": 64, "K": 64, "L_LOAD": load, "ACC": acc, "SMEM_A": sa, "SMEM_B": sb, "KW": kw, "ASYNC": asyn}
        sig = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp32", **{k: "constexpr" for k in consts}}
        out.append({"kind": "gluon_amd_gemm", "source": GLUON_AMD, "kernel": "amd_gemm", "signature": sig,
                    "constexprs": consts, "arch": target, "num_warps": 4, "num_stages": 2, "gluon": True,
                    "dtype": "fp16"})
    return out
