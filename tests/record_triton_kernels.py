"""Record Triton 3.6 as the oracle of layoutalg.kernel (run by hand; CI replays the recordings).

    PYTHONPATH=. python tests/record_triton_kernels.py [layouts|kernels|zoo|amd]  # writes tests/data/triton/*.json

* ``layouts.json``: Gluon layout objects of every class (seeded random distributed layouts, the shared
  modes, tensor-memory encodings) placed in Gluon kernels and printed as ttgir by Triton; for each case
  the ttgir text of its kernel, the case's position among the kernel's data-moving ops, the Gluon
  source of the object, and Triton's answer: for distributed layouts the engine's linear layout
  (``to_linear_layout``), for shared layouts a digest of where Triton's *compiler* puts every element
  (``gluon_oracle.shared_placements``: the engine aborts on shared layouts).
* ``kernels.json``: Triton matmuls (f16 / bf16 / fp8, block sizes, warps, stages; sm_80, sm_90a,
  sm_100a) and Gluon kernels that convert layouts through shared memory, compiled on the CPU to ttgir;
  for each, Triton's own reading of every data-moving op's types (the module parsed by Triton's MLIR
  context, ``get_gluon_layout_from_tensor`` / ``_from_memdesc``), the engine's linear layout of each
  distributed one, and Triton's bank-conflict count (``get_shared_bank_conflicts``) of each
  register <-> shared access; for sm_90a / sm_100a the PTX lines that hold the wgmma descriptors and
  tcgen05 instruction descriptors (``ptx_excerpt``).
* ``kernels_zoo.json``: the same for every kernel of ``tests/triton_kernel_zoo.py`` (attention forward with
  pointers and tensor descriptors, persistent and warp-specialized matmuls, tf32 / int8 / fp8 / transposed
  operands, ``tl.dot_scaled``, reductions / softmax / transposes, Gluon wgmma and tcgen05 GEMMs, Gluon
  conversions through shared memory of every class); every kernel's PTX excerpt.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import gluon_oracle as oracle  # noqa: E402

OUT = os.path.join(HERE, "data", "triton")
DATA_OPS_SHARED = ("ttg.local_alloc", "ttg.local_store", "ttg.local_load", "ttg.async_copy_global_to_local")


def _gl():
    from triton.experimental.gluon import language as gl

    return gl


def digest(where: np.ndarray) -> str:
    return hashlib.sha1(np.asarray(where, dtype=np.int64).tobytes()).hexdigest()


# ----------------------------------------------------------------------------------- the stages
def ttgir_of(src, arch: int, num_warps: int, num_stages: int = 3, upto: str = "ttgir", raw: bool = False) -> dict:
    """Compile ``src`` (an ASTSource or GluonASTSource) for sm_<arch> on the CPU up to stage ``upto``, as
    ``triton.compile`` runs the stages (``raw``: the module as the front end built it, no stage run)."""
    from triton._C.libtriton import ir
    from triton.backends.compiler import GPUTarget
    from triton.compiler.compiler import make_backend

    target = GPUTarget("hip", arch, 32 if arch.startswith("gfx1") else 64) if isinstance(arch, str) else GPUTarget("cuda", arch, 32)
    backend = make_backend(target)
    options = backend.parse_options({"num_warps": num_warps, "num_stages": num_stages})
    stages: dict = {}
    backend.add_stages(stages, options, src.language)
    ctx = ir.context()
    ir.load_dialects(ctx)
    backend.load_dialects(ctx)
    module = src.make_ir(target, options, backend.get_codegen_implementation(options), backend.get_module_map(), ctx)
    metadata = {"hash": hashlib.sha256(repr((arch, num_warps, num_stages, id(src))).encode()).hexdigest(),
                "target": target, **options.__dict__}
    out = {}
    if raw:
        return {src.ext: str(module)}
    for ext, step in list(stages.items())[list(stages).index(src.ext):]:
        module = step(module, metadata)
        out[ext] = module if isinstance(module, str) else str(module)
        if ext == upto:
            break
    return out


def gluon_ttgir(source: str, name: str, signature: dict, constexprs: dict, num_warps: int, arch: int = 90,
                upto: str = "ttgir", raw: bool = False) -> str:
    from triton.experimental.gluon._runtime import GluonASTSource

    fn = getattr(oracle.load_module(source), name)
    return ttgir_of(GluonASTSource(fn, signature=signature, constexprs=constexprs), arch, num_warps, upto=upto,
                    raw=raw)[upto]


# ----------------------------------------------------------------------------------- layouts.json
def _warps(layout) -> int:
    name = type(layout).__name__
    if name in ("SliceLayout", "DotOperandLayout"):
        return _warps(layout.parent)
    if name == "DistributedLinearLayout":
        return 1 << len(layout.warp_bases)
    return int(np.prod(layout.warps_per_cta))


def distributed_cases(n: int, seed: int = 27) -> list:
    from test_gluon_interop import random_distributed

    gl = _gl()
    rng = random.Random(seed)
    out = [random_distributed(rng) for _ in range(n)]
    # linear layouts, as Triton prints them (#ttg.linear)
    out.append((gl.DistributedLinearLayout([[0, 1], [0, 2], [0, 8], [0, 16], [0, 32]], [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0]],
                                           [[32, 0], [0, 4]], [], [64, 64]), [64, 64]))
    out.append((gl.DistributedLinearLayout([[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [0, 32], [0, 64]],
                                           [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0]], [[32, 0], [64, 0]], [], [128, 128]),
                [128, 128]))
    return out


def shared_cases() -> list:
    from test_gluon_interop import SWIZZLED

    gl = _gl()
    out = []
    for bits in (8, 16, 32):
        for sw in (0, 32, 64, 128):
            for tr in (False, True):
                contig = max(sw * 8 // bits, 8) * 2
                out.append((gl.NVMMASharedLayout(sw, bits, transposed=tr), (contig, 16) if tr else (16, contig), bits))
    out += [(gl.SwizzledSharedLayout(*p), (32, 64), 16) for p in SWIZZLED]
    out += [(gl.SwizzledSharedLayout(4, 2, 4, [1, 0]), (16, 32), 32), (gl.SwizzledSharedLayout(16, 1, 8, [0, 1]), (64, 32), 8)]
    out += [(gl.PaddedSharedLayout.with_identity_for([[64, 4]], [32, 64], [1, 0]), (32, 64), 16),
            (gl.PaddedSharedLayout.with_identity_for([[32, 2], [256, 8]], [32, 64], [0, 1]), (32, 64), 16),
            (gl.PaddedSharedLayout([[64, 8]], [[0, 1], [0, 2], [0, 4], [1, 0], [2, 0], [0, 8], [0, 16], [0, 32],
                                               [4, 0], [8, 0], [16, 0]], [], [32, 64]), (32, 64), 16),
            (gl.SharedLinearLayout([[0, 1], [0, 2], [1, 0], [0, 4], [2, 0], [4, 0]]), (8, 8), 16)]
    return out


def tmem_cases() -> list:
    from triton.experimental.gluon.language.nvidia import blackwell as bw

    return [(bw.TensorMemoryLayout((128, 128), col_stride=1), (128, 128), "float32"),
            (bw.TensorMemoryLayout((128, 64), col_stride=2), (128, 256), "float16"),
            (bw.TensorMemoryLayout((64, 64), col_stride=1), (128, 128), "float32"),
            (bw.TensorMemoryLayout((128, 32), col_stride=1), (256, 64), "float32"),
            (bw.TensorMemoryScalesLayout(), (128, 8), "int8")]


_DT = {8: "int8", 16: "float16", 32: "float32"}


def _layout_kernel(cases: list) -> tuple[str, dict, dict]:
    """One Gluon kernel holding every case: a store for a distributed layout, an allocation for the others."""
    lines = ["from triton.experimental import gluon", "from triton.experimental.gluon import language as gl",
             "from triton.experimental.gluon.language.nvidia import blackwell as bw", "", "",
             "@gluon.jit", "def kern(ptr, " + ", ".join(f"L{i}: gl.constexpr" for i in range(len(cases))) + "):"]
    sig, consts = {"ptr": "*fp16"}, {}
    for i, (kind, layout, shape, extra) in enumerate(cases):
        sig[f"L{i}"] = "constexpr"
        consts[f"L{i}"] = layout
        if kind == "distributed":
            lines.append(f"    gl.store(ptr + gl.full({list(shape)}, 0, gl.int32, L{i}), gl.full({list(shape)}, 0, gl.float16, L{i}))")
        elif kind == "shared":
            lines.append(f"    gl.allocate_shared_memory(gl.{_DT[extra]}, {list(shape)}, L{i})")
        else:
            lines.append(f"    bw.allocate_tensor_memory(gl.{extra}, {list(shape)}, L{i})")
    return "\n".join(lines) + "\n", sig, consts


def record_layouts() -> dict:
    from layoutalg.interop.gluon import gluon_layout

    records = []
    by_warps: dict[int, list] = {}
    for layout, shape in distributed_cases(120):
        by_warps.setdefault(_warps(layout), []).append(("distributed", layout, shape, None))
    groups = list(by_warps.items())
    groups.append((4, [("shared", layout, shape, bits) for layout, shape, bits in shared_cases()]))
    groups.append((4, [("tmem", layout, shape, dt) for layout, shape, dt in tmem_cases()]))
    for warps, cases in groups:
        arch = 100 if cases[0][0] == "tmem" else 90
        kept = []
        for case in cases:  # a case Triton refuses is left out (its reason printed)
            src, sig, consts = _layout_kernel([case])
            try:
                gluon_ttgir(src, "kern", sig, consts, warps, arch, raw=True)
                kept.append(case)
            except Exception as e:  # noqa: BLE001 - the recorder reports and goes on
                print("left out:", case[1], case[2], str(e).splitlines()[0][:100])
        src, sig, consts = _layout_kernel(kept)
        text = gluon_ttgir(src, "kern", sig, consts, warps, arch, raw=True)
        shared = [(c[1], tuple(c[2]), c[3]) for c in kept if c[0] == "shared"]
        wheres = {}
        for bits in sorted({c[2] for c in shared}):
            group = [c for c in shared if c[2] == bits]
            for c, where in zip(group, oracle.shared_placements(group)):
                wheres[id(c[0])] = where
        for k, (kind, layout, shape, extra) in enumerate(kept):
            rec = {"kind": kind, "op_index": k, "shape": list(shape), "ttgir": text}
            if kind == "tmem":
                rec["gluon"] = {"type": type(layout).__name__, "block": list(getattr(layout, "block", []) or []),
                                "col_stride": getattr(layout, "col_stride", None),
                                "cta_split_num": list(getattr(layout, "cta_split_num", None) or [1, 1])}
            else:
                rec["gluon"] = gluon_layout(layout).source
            if kind == "distributed":
                rec["triton_bases"] = oracle.engine_bases(layout, list(shape))
            elif kind == "shared":
                rec["element_bits"] = extra
                rec["triton_placement_sha1"] = digest(wheres[id(layout)])
            records.append(rec)
    # one ttgir text per kernel: store texts once
    texts: list[str] = []
    for r in records:
        if r["ttgir"] not in texts:
            texts.append(r["ttgir"])
        r["ttgir"] = texts.index(r["ttgir"])
    return {"source": "tests/record_triton_kernels.py", "triton": _version(), "texts": texts, "cases": records}


# ----------------------------------------------------------------------------------- kernels.json
MATMUL = '''
import triton
import triton.language as tl


@triton.jit
def matmul(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
           BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, STAGES: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * stride_am + rk[None, :]
    b_ptrs = b_ptr + rk[:, None] * stride_bk + rn[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in tl.range(0, tl.cdiv(K, BK), num_stages=STAGES):
        a = tl.load(a_ptrs, mask=rk[None, :] < K - k * BK, other=0.0)
        b = tl.load(b_ptrs, mask=rk[:, None] < K - k * BK, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BK
        b_ptrs += BK * stride_bk
    c = acc.to(c_ptr.dtype.element_ty)
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :], c, mask=(rm[:, None] < M) & (rn[None, :] < N))
'''

MATMUL_TMA = '''
import triton
import triton.language as tl


@triton.jit
def matmul_tma(a_desc, b_desc, c_desc, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
               STAGES: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in tl.range(0, tl.cdiv(K, BK), num_stages=STAGES):
        a = a_desc.load([pid_m * BM, k * BK])
        b = b_desc.load([k * BK, pid_n * BN])
        acc = tl.dot(a, b, acc)
    c_desc.store([pid_m * BM, pid_n * BN], acc.to(c_desc.dtype))
'''

CONVERT = '''
from triton.experimental import gluon
from triton.experimental.gluon import language as gl


@gluon.jit
def convert(in_ptr, out_ptr, R: gl.constexpr, C: gl.constexpr, L_IN: gl.constexpr, L_OUT: gl.constexpr,
            SMEM: gl.constexpr):
    rows = gl.arange(0, R, layout=gl.SliceLayout(1, L_IN))
    cols = gl.arange(0, C, layout=gl.SliceLayout(0, L_IN))
    x = gl.load(in_ptr + rows[:, None] * C + cols[None, :])
    buf = gl.allocate_shared_memory(gl.float16, [R, C], SMEM, x)
    y = buf.load(L_OUT)
    rows2 = gl.arange(0, R, layout=gl.SliceLayout(1, L_OUT))
    cols2 = gl.arange(0, C, layout=gl.SliceLayout(0, L_OUT))
    gl.store(out_ptr + rows2[:, None] * C + cols2[None, :], y)
'''


_EXCERPT = re.compile(r"wgmma\.mma_async|tcgen05\.mma\.|(?:or|add)\.[bsu]64\s+%rd\d+,\s*%rd\d+,\s*-?\d+;|mov\.[bu]32\s+%r\d+,\s*-?\d+;")


def ptx_excerpt(ptx: str) -> str:
    """The PTX lines the descriptor check reads (the MMAs, 64-bit constants added to registers, 32-bit constant
    moves): the whole PTX is large, these lines keep the recording small."""
    return "\n".join(line for line in ptx.splitlines() if _EXCERPT.search(line))


def matmul_configs() -> list[dict]:
    out = []
    for arch, dtypes in ((80, ("fp16", "bf16")), (90, ("fp16", "bf16", "fp8e4nv", "fp8e5")), (100, ("fp16", "bf16", "fp8e4nv"))):
        for i, dt in enumerate(dtypes):
            tiles = ((128, 128, 64, 4, 3), (64, 128, 32, 4, 4), (128, 256, 64, 8, 3), (64, 64, 64, 4, 2))
            for bm, bn, bk, w, s in tiles[2 * (i % 2): 2 * (i % 2) + 2]:  # two tiles per dtype, all four per arch
                if dt.startswith("fp8") and bk < 64:
                    bk = 64
                out.append({"kind": "matmul", "arch": arch, "dtype": dt, "BM": bm, "BN": bn, "BK": bk,
                            "num_warps": w, "num_stages": s})
    return out


def convert_configs() -> list:
    gl = _gl()
    mma = gl.NVMMADistributedLayout([2, 0], [4, 1], [16, 8])
    return [
        (gl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0]), gl.BlockedLayout([8, 1], [8, 4], [1, 4], [0, 1]),
         gl.SwizzledSharedLayout(1, 1, 1, [1, 0])),
        (gl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0]), gl.BlockedLayout([8, 1], [8, 4], [1, 4], [0, 1]),
         gl.SwizzledSharedLayout(8, 1, 8, [1, 0])),
        (gl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0]), gl.DotOperandLayout(0, mma, 2), gl.NVMMASharedLayout(128, 16)),
        (gl.BlockedLayout([1, 1], [32, 1], [4, 1], [0, 1]), gl.BlockedLayout([1, 4], [8, 4], [4, 1], [1, 0]),
         gl.NVMMASharedLayout(64, 16)),
    ]


def triton_reading(text: str) -> list[dict]:
    """Triton's own reading of every data-moving op's types: parse the module with Triton's MLIR context."""
    import triton._C.libtriton as lt

    from layoutalg.kernel import DATA_OPS

    ctx, b = oracle.builder()
    lt.nvidia.load_dialects(ctx)
    lt.amd.load_dialects(ctx)
    with tempfile.NamedTemporaryFile("w", suffix=".ttgir", delete=False) as f:
        f.write(text)
    module = lt.ir.parse_mlir_module(f.name, ctx)
    os.unlink(f.name)
    out: list[dict] = []

    def visit(op) -> None:
        name = op.get_name()
        if name not in DATA_OPS:
            return
        values = []
        for get, n in ((op.get_operand, op.get_num_operands()), (op.get_result, op.get_num_results())):
            for i in range(n):
                v = get(i)
                t = str(v.get_type())
                rec: dict = {"type": t}
                if t.startswith("tensor<") and "#ttg." in t:
                    g = b.get_gluon_layout_from_tensor(v)
                    rec["gluon"] = _source(g)
                    shape = [int(x) for x in t[len("tensor<"):].split("x")[:-1] if x.isdigit()]
                    rec["shape"] = shape
                    rec["triton_bases"] = oracle.engine_bases(g, shape)
                    rec["_obj"] = g
                elif t.startswith("!ttg.memdesc<") and "#ttg.shared_memory" in t:
                    try:
                        g = b.get_gluon_layout_from_memdesc(v)
                    except ValueError:  # a shared encoding Gluon has no class for (amd_rotating_shared)
                        values.append(rec)
                        continue
                    rec["gluon"] = _source(g)
                    rec["_obj"] = g
                values.append(rec)
        rec_op = {"op": name, "values": values}
        if name in DATA_OPS_SHARED:
            regs = [v for v in values if v["type"].startswith("tensor<") and "_obj" in v]
            mems = [v for v in values if v["type"].startswith("!ttg.memdesc<") and "_obj" in v]
            if regs and mems:
                shape, bits = regs[0]["shape"], _bits(mems[0]["type"])
                if bits and "#ttg.padded_shared" not in mems[0]["type"]:  # the engine aborts on padded layouts
                    rec_op["triton_bank_conflicts"] = oracle.engine_bank_conflicts(regs[0]["_obj"], mems[0]["_obj"], shape, bits)
        out.append(rec_op)

    module.walk(visit)
    for o in out:
        for v in o["values"]:
            v.pop("_obj", None)
    return out


def _source(g) -> str:
    """Gluon source of a layout object layoutalg describes, else the object's repr (AMD layouts)."""
    from layoutalg.errors import LayoutError
    from layoutalg.interop.gluon import gluon_layout

    try:
        return gluon_layout(g).source
    except LayoutError:
        return "repr:" + repr(g)


def _bits(memdesc: str) -> int | None:
    import re

    m = re.match(r"!ttg\.memdesc<(?:\d+x)+(bf16|f16|f32|i32|i8|i16|f8E4M3FN|f8E5M2)", memdesc)
    if not m:
        return None
    e = m.group(1)
    return 8 if e.startswith(("f8", "i8")) else 16 if "16" in e else 32


def record_kernels() -> dict:
    from triton.compiler import ASTSource

    records = []
    mm = oracle.load_module(MATMUL).matmul
    for cfg in matmul_configs():
        dt = cfg["dtype"]
        sig = {"a_ptr": f"*{dt}", "b_ptr": f"*{dt}", "c_ptr": "*fp16" if not dt.startswith("fp8") else "*fp32",
               **{n: "i32" for n in ("M", "N", "K", "stride_am", "stride_bk", "stride_cm")}}
        src = ASTSource(mm, sig, {"BM": cfg["BM"], "BN": cfg["BN"], "BK": cfg["BK"], "STAGES": cfg["num_stages"]},
                        attrs={(k,): [["tt.divisibility", 16]] for k in (0, 1, 2, 3, 4, 5, 6, 7, 8)})
        try:
            asm = ttgir_of(src, cfg["arch"], cfg["num_warps"], cfg["num_stages"], upto="ptx" if cfg["arch"] >= 90 else "ttgir")
        except Exception as e:  # noqa: BLE001
            print("left out:", cfg, str(e).splitlines()[0][:120])
            continue
        text = asm["ttgir"]
        records.append({"config": cfg, "ttgir": text, "triton": triton_reading(text)})
        if "ptx" in asm:
            records[-1]["ptx_excerpt"] = ptx_excerpt(asm["ptx"])
        print("recorded", cfg)
    tma = oracle.load_module(MATMUL_TMA).matmul_tma
    for arch, dt, bm, bn, bk, w in ((90, "fp16", 128, 128, 64, 4), (90, "fp8e4nv", 128, 128, 128, 8),
                                    (100, "bf16", 128, 128, 64, 4), (100, "fp16", 128, 256, 64, 8)):
        cfg = {"kind": "matmul_tma", "arch": arch, "dtype": dt, "BM": bm, "BN": bn, "BK": bk, "num_warps": w,
               "num_stages": 3}
        sig = {"a_desc": f"tensordesc<{dt}[{bm}, {bk}]>", "b_desc": f"tensordesc<{dt}[{bk}, {bn}]>",
               "c_desc": f"tensordesc<fp16[{bm}, {bn}]>", "K": "i32"}
        src = ASTSource(tma, sig, {"BM": bm, "BN": bn, "BK": bk, "STAGES": 3})
        try:
            asm = ttgir_of(src, arch, w, 3, upto="ptx")
        except Exception as e:  # noqa: BLE001
            print("left out:", cfg, str(e).splitlines()[0][:120])
            continue
        text = asm["ttgir"]
        records.append({"config": cfg, "ttgir": text, "triton": triton_reading(text), "ptx_excerpt": ptx_excerpt(asm["ptx"])})
        print("recorded", cfg)
    for lin, lout, smem in convert_configs():
        from layoutalg.interop.gluon import gluon_layout

        consts = {"R": 64, "C": 64, "L_IN": lin, "L_OUT": lout, "SMEM": smem}
        sig = {"in_ptr": "*fp16", "out_ptr": "*fp16", **{k: "constexpr" for k in consts}}
        text = gluon_ttgir(CONVERT, "convert", sig, consts, 4, 90)
        cfg = {"kind": "gluon_convert", "arch": 90, "num_warps": 4, "L_IN": gluon_layout(lin).source,
               "L_OUT": gluon_layout(lout).source, "SMEM": gluon_layout(smem).source}
        records.append({"config": cfg, "ttgir": text, "triton": triton_reading(text)})
        print("recorded", cfg)
    return {"source": "tests/record_triton_kernels.py", "triton": _version(), "kernels": records}


def _jsonable(v):
    if isinstance(v, (bool, int, float, str)) or v is None:
        return v
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    try:
        from layoutalg.interop.gluon import gluon_layout

        return gluon_layout(v).source
    except Exception:  # noqa: BLE001 - a dtype or another constant: its name
        return str(v)


def compile_zoo_entry(c: dict, upto: str = "ptx") -> dict:
    """Compile one entry of triton_kernel_zoo.configs() on the CPU: {stage: text}."""
    from triton.compiler import ASTSource

    fn = getattr(oracle.load_module(c["source"]), c["kernel"])
    consts = dict(c["constexprs"])
    if consts.get("ACC") == "fp32":  # the zoo names the accumulator type
        import triton.language as tl

        consts["ACC"] = tl.float32
    c = {**c, "constexprs": consts}
    if c["gluon"]:
        from triton.experimental.gluon._runtime import GluonASTSource

        src = GluonASTSource(fn, signature=c["signature"], constexprs=c["constexprs"])
    else:
        src = ASTSource(fn, c["signature"], c["constexprs"])
    return ttgir_of(src, c["arch"], c["num_warps"], c["num_stages"], upto=upto)


def record_zoo() -> dict:
    """kernels_zoo.json: every kernel of tests/triton_kernel_zoo.py compiled, with Triton's reading and the PTX
    lines of its descriptors."""
    import triton_kernel_zoo as zoo

    records = []
    for c in zoo.configs():
        cfg = {k: _jsonable(v) for k, v in c.items() if k not in ("source",)}
        try:
            asm = compile_zoo_entry(c)
        except Exception as e:  # noqa: BLE001
            print("left out:", cfg["kind"], cfg["arch"], str(e).splitlines()[0][:120] if str(e) else repr(e))
            continue
        text = asm["ttgir"]
        records.append({"config": cfg, "ttgir": text, "triton": triton_reading(text),
                        "ptx_excerpt": ptx_excerpt(asm["ptx"])})
        print("recorded", cfg["kind"], cfg["arch"], cfg.get("dtype"))
    return {"source": "tests/record_triton_kernels.py", "triton": _version(), "kernels": records}


def record_amd() -> dict:
    """kernels_amd.json: the AMD kernels of triton_kernel_zoo.amd_configs() compiled to ttgir (gfx942, gfx950, gfx1100,
    gfx1200), with Triton's reading of every data-moving op (its engine's linear layouts)."""
    import triton_kernel_zoo as zoo

    records = []
    for c in zoo.amd_configs() + zoo.gluon_amd_configs():
        cfg = {k: _jsonable(v) for k, v in c.items() if k != "source"}
        try:
            asm = compile_zoo_entry(c, upto="ttgir")
        except Exception as e:  # noqa: BLE001
            print("left out:", cfg["kind"], cfg["arch"], str(e).splitlines()[0][:120] if str(e) else repr(e))
            continue
        text = asm["ttgir"]
        reading = triton_reading(text)
        for o in reading:  # Triton's bank count is NVIDIA's model: not the LDS's
            o.pop("triton_bank_conflicts", None)
        records.append({"config": cfg, "ttgir": text, "triton": reading})
        print("recorded", cfg["kind"], cfg["arch"], cfg.get("dtype"))
    return {"source": "tests/record_triton_kernels.py", "triton": _version(), "kernels": records}


def _version() -> str:
    import triton

    return triton.__version__


def main() -> None:
    os.makedirs(OUT, exist_ok=True)
    which = sys.argv[1:] or ["layouts", "kernels", "zoo", "amd"]
    if "amd" in which:
        with open(os.path.join(OUT, "kernels_amd.json"), "w") as f:
            json.dump(record_amd(), f, indent=0, sort_keys=True)
    if "zoo" in which:
        with open(os.path.join(OUT, "kernels_zoo.json"), "w") as f:
            json.dump(record_zoo(), f, indent=0, sort_keys=True)
    if "layouts" in which:
        with open(os.path.join(OUT, "layouts.json"), "w") as f:
            json.dump(record_layouts(), f, indent=0, sort_keys=True)
    if "kernels" in which:
        with open(os.path.join(OUT, "kernels.json"), "w") as f:
            json.dump(record_kernels(), f, indent=0, sort_keys=True)


if __name__ == "__main__":
    main()
