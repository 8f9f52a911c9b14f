"""Triton 3.6 Gluon as an oracle of the tcgen05 instruction descriptor, on the CPU.

A one-MMA Gluon kernel (``tcgen05_mma`` or ``tcgen05_mma_scaled`` on shared-memory operands of
the requested majors, accumulator in tensor memory) is compiled for ``cuda:100`` (``sm_100a``) to
PTX; the instruction descriptor is the 32-bit immediate Triton moves into the register that
``tcgen05.mma`` reads. The wheel's ``ptxas-blackwell`` can assemble the PTX (``assemble``).

    python tests/gluon_idesc_oracle.py --record   # (re)writes tests/data/gluon_idesc.json

No sm_100 GPU runs anything here.
"""

from __future__ import annotations

import hashlib
import pathlib
import re
import subprocess
import tempfile
from typing import Any

from gluon_oracle import load_module
from oracle_recorder import DATA as _DATA_DIR, OracleRecorder

SOURCE = '''
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia import blackwell as bw


# (Triton 3.6 asserts "Currently don't support transpose for F32": its tf32 MMAs are K-major)
@gluon.jit
def mma(out_ptr, M: gl.constexpr, N: gl.constexpr, K: gl.constexpr, DT: gl.constexpr, ACC: gl.constexpr,
        BITS: gl.constexpr, A_MN: gl.constexpr, B_MN: gl.constexpr, COLS: gl.constexpr):
    # A is M x K, B is K x N; "transposed" NVMMA layouts put the first dimension fastest
    a_l: gl.constexpr = gl.NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=BITS, rank=2, transposed=A_MN)
    b_l: gl.constexpr = gl.NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=BITS, rank=2, transposed=not B_MN)
    a = gl.allocate_shared_memory(DT, [M, K], a_l)
    b = gl.allocate_shared_memory(DT, [K, N], b_l)
    acc = bw.allocate_tensor_memory(ACC, [M, N], bw.TensorMemoryLayout(block=(M, N), col_stride=COLS))
    bw.tcgen05_mma(a, b, acc, use_acc=False)
    reg: gl.constexpr = bw.get_tmem_reg_layout(ACC, (M, N), bw.TensorMemoryLayout(block=(M, N), col_stride=COLS), 4)
    v = acc.load(reg)
    offs_m = gl.arange(0, M, layout=gl.SliceLayout(1, reg))
    offs_n = gl.arange(0, N, layout=gl.SliceLayout(0, reg))
    gl.store(out_ptr + offs_m[:, None] * N + offs_n[None, :], v)


@gluon.jit
def mma_2cta(out_ptr, M: gl.constexpr, N: gl.constexpr, K: gl.constexpr, DT: gl.constexpr, ACC: gl.constexpr,
             BITS: gl.constexpr, A_MN: gl.constexpr, B_MN: gl.constexpr, COLS: gl.constexpr):
    # cta_group::2: two CTAs of a cluster split A's M and B's N; the accumulator is M/2 rows per CTA
    a_l: gl.constexpr = gl.NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=BITS, rank=2, transposed=A_MN,
                                             cga_layout=[[1, 0]])
    b_l: gl.constexpr = gl.NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=BITS, rank=2, transposed=not B_MN,
                                             cga_layout=[[0, 1]])
    a = gl.allocate_shared_memory(DT, [M, K], a_l)
    b = gl.allocate_shared_memory(DT, [K, N], b_l)
    acc_l: gl.constexpr = bw.TensorMemoryLayout(block=(M // 2, N), col_stride=COLS, cta_split_num=(2, 1), two_ctas=True)
    acc = bw.allocate_tensor_memory(ACC, [M, N], acc_l)
    bw.tcgen05_mma(a, b, acc, use_acc=False)


@gluon.jit
def mma_scaled(out_ptr, M: gl.constexpr, N: gl.constexpr, K: gl.constexpr, A_FMT: gl.constexpr,
               B_FMT: gl.constexpr, KA: gl.constexpr, KB: gl.constexpr, VS: gl.constexpr, SDT: gl.constexpr):
    # SDT: the scales' type, uint8 (ue8m0) or float8e4nv (ue4m3: nvfp4, kind::mxf4nvf4 with 16-element vectors)
    # operands as Triton stores them: 8-bit elements, or e2m1 packed two to a byte (K/2 bytes)
    a_l: gl.constexpr = gl.NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=8, rank=2)
    b_l: gl.constexpr = gl.NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=8, rank=2, transposed=True)
    a = gl.allocate_shared_memory(gl.uint8, [M, KA], a_l)
    b = gl.allocate_shared_memory(gl.uint8, [KB, N], b_l)
    acc_l: gl.constexpr = bw.TensorMemoryLayout(block=(M, N), col_stride=1)
    acc = bw.allocate_tensor_memory(gl.float32, [M, N], acc_l)
    a_s = bw.allocate_tensor_memory(SDT, [M, K // VS], bw.TensorMemoryScalesLayout())
    b_s = bw.allocate_tensor_memory(SDT, [N, K // VS], bw.TensorMemoryScalesLayout())
    bw.tcgen05_mma_scaled(a, b, acc, a_s, b_s, A_FMT, B_FMT, use_acc=False)
    reg: gl.constexpr = bw.get_tmem_reg_layout(gl.float32, (M, N), acc_l, 4)
    v = acc.load(reg)
    offs_m = gl.arange(0, M, layout=gl.SliceLayout(1, reg))
    offs_n = gl.arange(0, N, layout=gl.SliceLayout(0, reg))
    gl.store(out_ptr + offs_m[:, None] * N + offs_n[None, :], v)
'''

#: (make_instr_desc arguments, Gluon kernel, its constexprs) of every configuration compiled
_GL_DT = {"f16": "gl.float16", "bf16": "gl.bfloat16", "tf32": "gl.float32", "e4m3": "gl.float8e4nv", "e5m2": "gl.float8e5",
          "f32": "gl.float32"}
_BITS = {"f16": 16, "bf16": 16, "tf32": 32, "e4m3": 8, "e5m2": 8}


def configurations() -> list[dict[str, Any]]:
    """The configurations compiled: plain kinds over types, shapes and majors, and scaled MMAs."""
    out: list[dict[str, Any]] = []
    for t, c, m, n, am, bm in [
        ("bf16", "f32", 128, 128, "K", "K"), ("bf16", "f32", 128, 128, "K", "MN"), ("bf16", "f32", 128, 256, "MN", "MN"),
        ("f16", "f32", 128, 64, "K", "K"), ("f16", "f16", 128, 128, "MN", "K"), ("f16", "f32", 64, 128, "K", "K"),
        ("tf32", "f32", 128, 64, "K", "K"), ("tf32", "f32", 128, 256, "K", "K"), ("tf32", "f32", 64, 32, "K", "K"),
        ("e4m3", "f32", 128, 128, "K", "K"), ("e5m2", "f32", 128, 256, "K", "K"), ("e4m3", "f16", 128, 64, "K", "K"),
    ]:
        kind = {"bf16": "f16", "f16": "f16", "tf32": "tf32", "e4m3": "f8f6f4", "e5m2": "f8f6f4"}[t]
        k = {"f16": 16, "tf32": 8, "f8f6f4": 32}[kind] * 4
        out.append({"args": dict(kind=kind, a_type=t, b_type=t, c_type=c, m=m, n=n, a_major=am, b_major=bm),
                    "kernel": "mma", "constexprs": dict(M=m, N=n, K=k, DT=_GL_DT[t], ACC=_GL_DT[c], BITS=_BITS[t],
                                                        A_MN=am == "MN", B_MN=bm == "MN", COLS=2 if c == "f16" else 1)})
    for t, c, m, n, am, bm in [
        ("bf16", "f32", 256, 128, "K", "K"), ("f16", "f16", 256, 256, "MN", "MN"), ("bf16", "f32", 128, 64, "K", "MN"),
        ("e4m3", "f32", 256, 64, "K", "K"), ("tf32", "f32", 256, 32, "K", "K"),
    ]:
        kind = {"bf16": "f16", "f16": "f16", "tf32": "tf32", "e4m3": "f8f6f4", "e5m2": "f8f6f4"}[t]
        k = {"f16": 16, "tf32": 8, "f8f6f4": 32}[kind] * 4
        out.append({"args": dict(kind=kind, a_type=t, b_type=t, c_type=c, m=m, n=n, a_major=am, b_major=bm, cta_group=2),
                    "kernel": "mma_2cta", "num_ctas": 2,
                    "constexprs": dict(M=m, N=n, K=k, DT=_GL_DT[t], ACC=_GL_DT[c], BITS=_BITS[t],
                                       A_MN=am == "MN", B_MN=bm == "MN", COLS=2 if c == "f16" else 1)})
    for af, bf, m, n in [("e4m3", "e4m3", 128, 128), ("e5m2", "e4m3", 128, 256), ("e2m1", "e2m1", 128, 128), ("e4m3", "e2m1", 128, 64)]:
        k = 256 if "e2m1" in (af, bf) else 128  # packed e2m1: 128 bytes of K fill one 128B swizzle row
        both4 = af == bf == "e2m1"
        kind = "mxf4" if both4 else "mxf8f6f4"
        args = dict(kind=kind, a_type=af, b_type=bf, c_type="f32", m=m, n=n, scale_type="ue8m0")
        out.append({"args": args, "kernel": "mma_scaled", "constexprs": dict(
            M=m, N=n, K=k, A_FMT=af, B_FMT=bf, KA=k // 2 if af == "e2m1" else k, KB=k // 2 if bf == "e2m1" else k, VS=32, SDT="gl.uint8")})
    # nvfp4: e2m1 with ue4m3 scales, one per 16 elements (Triton emits kind::mxf4nvf4 .scale_vec::4X)
    for m, n in [(128, 128), (128, 64)]:
        args = dict(kind="mxf4nvf4", a_type="e2m1", b_type="e2m1", c_type="f32", m=m, n=n, scale_type="ue4m3", sf_vec_size=16)
        out.append({"args": args, "kernel": "mma_scaled", "constexprs": dict(
            M=m, N=n, K=256, A_FMT="e2m1", B_FMT="e2m1", KA=128, KB=128, VS=16, SDT="gl.float8e4nv")})
    return out


def compile_ptx(kernel: str, constexprs: dict[str, Any], num_ctas: int = 1) -> str:
    """PTX of one kernel of SOURCE for cuda:100 (sm_100a), compiled on the CPU (``num_ctas``: the cluster)."""
    import triton.experimental.gluon.language as gl
    from triton._C.libtriton import ir
    from triton.backends.compiler import GPUTarget
    from triton.compiler.compiler import make_backend
    from triton.experimental.gluon._runtime import GluonASTSource

    cx = {k: (eval(v, {"gl": gl}) if isinstance(v, str) and v.startswith("gl.") else v) for k, v in constexprs.items()}  # noqa: S307 (our own table)
    fn = getattr(load_module(SOURCE), kernel)
    src = GluonASTSource(fn, signature={"out_ptr": "*fp32"}, constexprs=cx)
    target = GPUTarget("cuda", 100, 32)
    backend = make_backend(target)
    options = backend.parse_options({"num_warps": 4, "num_ctas": num_ctas})
    stages: dict = {}
    backend.add_stages(stages, options, src.language)
    ctx = ir.context()
    ir.load_dialects(ctx)
    backend.load_dialects(ctx)
    module = src.make_ir(target, options, backend.get_codegen_implementation(options), backend.get_module_map(), ctx)
    metadata = {"hash": hashlib.sha256(repr((kernel, sorted(constexprs.items()))).encode()).hexdigest(), "target": target,
                **options.__dict__}
    for ext, step in list(stages.items())[list(stages).index(src.ext) + 1:]:
        module = step(module, metadata)
        if ext == "ptx":
            return module
    raise RuntimeError("no ptx stage")


_MMA = re.compile(r"tcgen05\.mma\.[^\s]*\s+\[[^\]]*\],\s*[^,]+,\s*[^,]+,\s*(?P<idesc>[^,;]+)")


def idescs_of(ptx: str) -> tuple[list[int], str]:
    """(the idesc of every tcgen05.mma in program order, the first MMA line). Triton issues one MMA
    per K step; each descriptor is an immediate or the constant one ``mov`` puts into its register
    (the scaled MMAs of one tile differ in their scale-factor ids)."""
    mmas = [ln.strip() for ln in ptx.splitlines() if re.search(r"\btcgen05\.mma\.", ln)]
    if not mmas:
        raise AssertionError("no tcgen05.mma in the PTX")
    words = []
    for line in mmas:
        m = _MMA.search(line)
        if m is None:
            raise AssertionError(f"cannot read the idesc operand of {line}")
        op = m["idesc"].strip()
        if re.fullmatch(r"-?\d+|0[xX][0-9a-fA-F]+", op):
            words.append(int(op, 0) & 0xFFFFFFFF)
            continue
        movs = re.findall(rf"mov\.[bu]32\s+{re.escape(op)},\s*(-?\d+|0[xX][0-9a-fA-F]+);", ptx)
        if len(movs) != 1:
            raise AssertionError(f"register {op} of {line} is not set by one mov of a constant: {movs}")
        words.append(int(movs[0], 0) & 0xFFFFFFFF)
    return words, mmas[0]


def ptxas() -> str | None:
    import triton

    p = pathlib.Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "ptxas-blackwell"
    return str(p) if p.exists() else None


def assemble(ptx: str) -> subprocess.CompletedProcess:
    """Assemble with the wheel's ptxas-blackwell for sm_100a (returncode 0: valid)."""
    with tempfile.TemporaryDirectory() as d:
        src = pathlib.Path(d) / "k.ptx"
        src.write_text(ptx)
        return subprocess.run([ptxas(), "-arch=sm_100a", str(src), "-o", str(pathlib.Path(d) / "k.cubin")],
                              capture_output=True, text=True, timeout=120)


def record(rec: OracleRecorder) -> dict:
    rows = []
    for cfg in configurations():
        try:
            ptx = compile_ptx(cfg["kernel"], cfg["constexprs"], cfg.get("num_ctas", 1))
        except Exception as e:  # Triton refuses some configurations: say which, keep going
            print(f"{cfg['args']}: Triton refused: {str(e)[:200]}")
            rows.append({**cfg, "triton_refused": str(e)[:300]})
            continue
        words, line = idescs_of(ptx)
        asm = assemble(ptx)
        rows.append({**cfg, "idescs": [f"0x{w:08x}" for w in words], "ptx_line": line, "ptxas_blackwell_ok": asm.returncode == 0})
        print(f"{cfg['args']}: {[hex(w) for w in words]}  {line}  ptxas rc={asm.returncode} {asm.stderr.strip()[:200]}")
    return {**rec.provenance("python tests/gluon_idesc_oracle.py --record (Gluon compiled for cuda:100 to PTX on a CPU; "
                             "ptxas-blackwell -arch=sm_100a)"), "cases": rows}


# the recording keeps its place (tests/data/gluon_idesc.json: the library's docs and notebooks name it)
REC = OracleRecorder("gluon", "idesc", record, script="gluon_idesc_oracle", path=_DATA_DIR / "gluon_idesc.json",
                     json_options={"indent": 1})
DATA = REC.path

if __name__ == "__main__":  # pragma: no cover - a recording tool
    raise SystemExit(REC.main())
