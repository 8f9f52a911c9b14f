"""CuTe's ``make_tma_copy`` beside the library's: the C++ side of the TMA check.

A host program built with CuTe's headers calls ``make_tma_copy`` for each of :func:`cute_cases`; a shim
in place of ``cuTensorMapEncodeTiled`` prints the arguments CuTe chose (:func:`cute_program`,
:func:`parse_cute_output`) and, on the GPU machine, encodes them with the real driver
(:func:`run_cute_gpu`). The library's arguments (:func:`library_cute_args`) and encoded bytes must match
(:func:`compare_cute`, :func:`replay_cute`). :func:`run_cute_cpu` builds the same snippets with g++ on a CPU.

    >>> case = cute_cases()[0]
    >>> case["name"], library_cute_args(case)["box_dim"]
    ('K.SW128.f16.64x64', [64, 64])
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from typing import Any

from ..nvidia.hopper.tma import make_tma_copy
from .tma_driver import Driver

__all__ = ["cute_cases", "library_cute_args", "cute_snippet", "cute_program", "parse_cute_output", "run_cute_cpu",
           "compare_cute", "run_cute_gpu", "replay_cute"]

#: (name, CuTe element type, layoutalg dtype, global (shape, stride), smem layout expression, library layout)
_CUTE = [
    ("K.SW128.f16.64x64", "half_t", "f16", ((1000, 512), (512, 1)),
     "tile_to_shape(GMMA::Layout_K_SW128_Atom<half_t>{}, make_shape(_64{}, _64{}))", ("K", 128, (64, 64))),
    ("K.SW128.f16.128x128", "half_t", "f16", ((1000, 512), (512, 1)),
     "tile_to_shape(GMMA::Layout_K_SW128_Atom<half_t>{}, make_shape(_128{}, _128{}))", ("K", 128, (128, 128))),
    ("K.SW64.bf16.64x32", "bfloat16_t", "bf16", ((300, 96), (104, 1)),
     "tile_to_shape(GMMA::Layout_K_SW64_Atom<bfloat16_t>{}, make_shape(_64{}, _32{}))", ("K", 64, (64, 32))),
    ("K.SW32.f16.64x16", "half_t", "f16", ((256, 80), (80, 1)),
     "tile_to_shape(GMMA::Layout_K_SW32_Atom<half_t>{}, make_shape(_64{}, _16{}))", ("K", 32, (64, 16))),
    ("K.INTER.f16.64x64", "half_t", "f16", ((128, 128), (136, 1)),
     "tile_to_shape(GMMA::Layout_K_INTER_Atom<half_t>{}, make_shape(_64{}, _64{}))", ("K", 0, (64, 64))),
    ("MN.SW128.f16.128x64", "half_t", "f16", ((512, 256), (1, 520)),
     "tile_to_shape(GMMA::Layout_MN_SW128_Atom<half_t>{}, make_shape(_128{}, _64{}))", ("MN", 128, (128, 64))),
    ("MN.SW64.bf16.64x32", "bfloat16_t", "bf16", ((256, 64), (1, 256)),
     "tile_to_shape(GMMA::Layout_MN_SW64_Atom<bfloat16_t>{}, make_shape(_64{}, _32{}))", ("MN", 64, (64, 32))),
    ("MN.SW32.f16.64x16", "half_t", "f16", ((64, 48), (1, 72)),
     "tile_to_shape(GMMA::Layout_MN_SW32_Atom<half_t>{}, make_shape(_64{}, _16{}))", ("MN", 32, (64, 16))),
    ("MN.INTER.bf16.64x16", "bfloat16_t", "bf16", ((200, 32), (1, 208)),
     "tile_to_shape(GMMA::Layout_MN_INTER_Atom<bfloat16_t>{}, make_shape(_64{}, _16{}))", ("MN", 0, (64, 16))),
    ("K.SW128.tf32.64x32", "tfloat32_t", "tf32", ((128, 64), (64, 1)),
     "tile_to_shape(GMMA::Layout_K_SW128_Atom<tfloat32_t>{}, make_shape(_64{}, _32{}))", ("K", 128, (64, 32))),
    ("K.SW128.e4m3.64x128", "float_e4m3_t", "e4m3", ((128, 384), (384, 1)),
     "tile_to_shape(GMMA::Layout_K_SW128_Atom<float_e4m3_t>{}, make_shape(_64{}, _128{}))", ("K", 128, (64, 128))),
    ("K.SW128.int8.128x128", "int8_t", "s8", ((256, 256), (256, 1)),
     "tile_to_shape(GMMA::Layout_K_SW128_Atom<int8_t>{}, make_shape(_128{}, _128{}))", ("K", 128, (128, 128))),
    ("rowmajor.f16.32x64", "half_t", "f16", ((100, 64), (64, 1)),
     "make_layout(make_shape(_32{}, _64{}), make_stride(_64{}, _1{}))", "(32,64):(64,1)"),
    ("rows.f16.4x64", "half_t", "f16", ((100, 64), (64, 1)),
     "make_layout(make_shape(_4{}, _64{}), make_stride(_64{}, _1{}))", "(4,64):(64,1)"),
    ("merged.static.f16.4x64", "half_t", "f16", ((100, 64), ("_64", 1)),
     "make_layout(make_shape(_4{}, _64{}), make_stride(_64{}, _1{}))", "(4,64):(64,1)"),
    ("colmajor.f32.32x8", "float", "f32", ((100, 40), (1, 104)),
     "make_layout(make_shape(_32{}, _8{}), make_stride(_1{}, _32{}))", "(32,8):(1,32)"),
    ("K.SW128.bf16.batch3d", "bfloat16_t", "bf16", ((300, 64, 7), (64, 1, 19200)),
     "tile_to_shape(GMMA::Layout_K_SW128_Atom<bfloat16_t>{}, make_shape(_64{}, _64{}))", ("K", 128, (64, 64))),
]


def cute_cases() -> list[dict]:
    """The shared layouts given to CuTe's make_tma_copy, with the same tile as a library layout."""
    out = []
    for name, ctype, dt, (gs, gst), expr, lib in _CUTE:
        static = any(isinstance(s, str) for s in gst)
        gst = tuple(int(str(s).strip("_")) for s in gst)
        out.append({"name": name, "ctype": ctype, "dtype": dt, "global": [list(gs), list(gst)], "cute_layout": expr,
                    "library_layout": lib if isinstance(lib, str) else list(lib), "static_strides": static})
    return out


def _library_layout(case: dict) -> Any:
    from ..nvidia.hopper.wgmma import tile

    lib = case["library_layout"]
    if isinstance(lib, str):
        return lib
    major, sw, shape = lib
    return tile(major, sw, case["dtype"], tuple(shape))


def library_cute_args(case: dict) -> dict:
    """The library's cuTensorMapEncodeTiled arguments for a CuTe case, in the shim's print format."""
    from ..layout import Layout

    gs, gst = case["global"]
    t = make_tma_copy(Layout(tuple(gs), tuple(gst)), _library_layout(case), case["dtype"], coalesce=case["static_strides"])
    a = t.tensor_map.driver_args()
    return {"dtype": a["tensorDataType"], "rank": a["tensorRank"], "global_dim": a["globalDim"],
            "global_strides": a["globalStrides"], "box_dim": a["boxDim"], "element_strides": a["elementStrides"],
            "interleave": a["interleave"], "swizzle": a["swizzle"], "l2": a["l2Promotion"], "oob": a["oobFill"]}


_SHIM = r"""
#define CUTLASS_ENABLE_DIRECT_CUDA_DRIVER_CALL 1
#ifndef __CUDACC_VER_MAJOR__
#define __CUDACC_VER_MAJOR__ 12
#define __CUDACC_VER_MINOR__ 8
#endif
#include <cuda.h>
#include <cstdio>
#ifdef LAYOUTALG_REAL_DRIVER
#include <dlfcn.h>
typedef CUresult (*layoutalg_encode_t)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
    const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,
    CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
#endif
// The shim CuTe calls in place of the driver: print the arguments CuTe chose (and, with the real
// driver, encode them and print the result and the 128 bytes).
extern "C" CUresult cuTensorMapEncodeTiled(CUtensorMap* tm, CUtensorMapDataType dt, cuuint32_t rank, void* addr,
    const cuuint64_t* gdim, const cuuint64_t* gstr, const cuuint32_t* box, const cuuint32_t* es,
    CUtensorMapInterleave il, CUtensorMapSwizzle sw, CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill oob) {
  std::printf("{\"dtype\":%d,\"rank\":%u,\"address\":%llu,\"global_dim\":[", (int)dt, rank, (unsigned long long)addr);
  for (unsigned i = 0; i < rank; ++i) std::printf("%s%llu", i ? "," : "", (unsigned long long)gdim[i]);
  std::printf("],\"global_strides\":[");
  for (unsigned i = 0; i + 1 < rank; ++i) std::printf("%s%llu", i ? "," : "", (unsigned long long)gstr[i]);
  std::printf("],\"box_dim\":[");
  for (unsigned i = 0; i < rank; ++i) std::printf("%s%u", i ? "," : "", box[i]);
  std::printf("],\"element_strides\":[");
  for (unsigned i = 0; i < rank; ++i) std::printf("%s%u", i ? "," : "", es[i]);
  std::printf("],\"interleave\":%d,\"swizzle\":%d,\"l2\":%d,\"oob\":%d", (int)il, (int)sw, (int)l2, (int)oob);
  CUresult r = CUDA_SUCCESS;
#ifdef LAYOUTALG_REAL_DRIVER
  static void* lib = dlopen("libcuda.so.1", RTLD_NOW);
  layoutalg_encode_t real = lib ? (layoutalg_encode_t)dlsym(lib, "cuTensorMapEncodeTiled") : nullptr;
  if (real) {
    typedef CUresult (*init_t)(unsigned);
    typedef CUresult (*devget_t)(CUdevice*, int);
    typedef CUresult (*retain_t)(CUcontext*, CUdevice);
    typedef CUresult (*setcur_t)(CUcontext);
    static bool inited = false;
    if (!inited) {  // the encode needs a current context (CUDA_ERROR_INVALID_CONTEXT otherwise)
      CUdevice dev = 0; CUcontext ctx = nullptr;
      ((init_t)dlsym(lib, "cuInit"))(0);
      ((devget_t)dlsym(lib, "cuDeviceGet"))(&dev, 0);
      ((retain_t)dlsym(lib, "cuDevicePrimaryCtxRetain"))(&ctx, dev);
      ((setcur_t)dlsym(lib, "cuCtxSetCurrent"))(ctx);
      inited = true;
    }
    r = real(tm, dt, rank, addr, gdim, gstr, box, es, il, sw, l2, oob);
    std::printf(",\"result\":%d,\"bytes\":\"", (int)r);
    const unsigned char* p = reinterpret_cast<const unsigned char*>(tm);
    for (int i = 0; i < 128; ++i) std::printf("%02x", p[i]);
    std::printf("\"");
  } else {
    std::printf(",\"result\":-1");
  }
#endif
  std::printf("}\n");
  return r;
}
"""

_CUTE_INCLUDES = """
#include <cute/tensor.hpp>
#include <cute/atom/copy_traits_sm90_tma.hpp>
#include <cute/atom/mma_traits_sm90_gmma.hpp>
"""


def cute_snippet(case: dict) -> str:
    """The body of one C++ function that calls CuTe's make_tma_copy for a case (``using namespace cute``)."""
    gs, gst = case["global"]
    shape = ", ".join(str(s) for s in gs)
    stride = ", ".join("_1{}" if s == 1 else (f"_{s}{{}}" if case["static_strides"] else str(s)) for s in gst)
    ct = case["ctype"]
    return (f"  alignas(128) static {ct} buf[{sum((g - 1) * s for g, s in zip(gs, gst)) + 1}];\n"
            f"  auto g = make_tensor(make_gmem_ptr(buf), make_layout(make_shape({shape}), make_stride({stride})));\n"
            f"  auto sl = {case['cute_layout']};\n"
            f"  auto tma = make_tma_copy(SM90_TMA_LOAD{{}}, g, sl);\n"
            f"  (void)tma;\n")


def cute_program(cases: list[dict]) -> str:
    """A whole C++ program (shim + one function per case + main printing ``@@case name`` markers)."""
    parts = [_SHIM, _CUTE_INCLUDES, "using namespace cute;"]
    for k, c in enumerate(cases):
        parts.append(f"static void case_{k}() {{\n{cute_snippet(c)}}}")
    parts.append("int main() {")
    for k, c in enumerate(cases):
        parts.append(f'  std::printf("@@case {c["name"]}\\n"); case_{k}();')
    parts.append("  return 0;\n}")
    return "\n".join(parts) + "\n"


def parse_cute_output(text: str) -> dict[str, list[dict]]:
    """{case name: [the shim's JSON line per make_tma_copy call]} from the program's output."""
    out: dict[str, list[dict]] = {}
    cur = None
    for line in text.splitlines():
        if line.startswith("@@case "):
            cur = line[7:].strip()
            out[cur] = []
        elif line.startswith("{") and cur is not None:
            out[cur].append(json.loads(line))
    return out


def run_cute_cpu(cases: list[dict] | None = None) -> dict[str, dict]:
    """CuTe's arguments on this CPU through :mod:`layoutalg.interop.cutecpp` (g++; no driver): {name: args}."""
    from ..interop import cutecpp

    cases = cases or cute_cases()
    # the runner builds with -fno-exceptions; CuTe's TMA header throws in a branch no case reaches
    prelude = _SHIM + "#define throw (void)\n" + _CUTE_INCLUDES + "#undef throw\n"
    # one program for all cases: a second g++ build of CuTe's TMA headers costs more CPU than it saves in wall time
    res = cutecpp.run_snippets([cute_snippet(c) for c in cases], headers=("cute/int_tuple.hpp",), prelude=prelude,
                               chunk=max(1, len(cases)))
    out = {}
    for c, r in zip(cases, res):
        if not r:
            out[c["name"]] = {"error": getattr(r, "message", "compile failure")}
            continue
        lines = [json.loads(x) for x in str(r).splitlines() if x.startswith("{")]
        out[c["name"]] = lines[0] if len(lines) == 1 else {"error": f"{len(lines)} encode calls"}
    return out


_CUTE_FIELDS = ("dtype", "rank", "global_dim", "global_strides", "box_dim", "element_strides", "interleave", "swizzle",
                "l2", "oob")


def compare_cute(cute_args: dict, lib_args: dict) -> list[str]:
    """Fields where CuTe's arguments and the library's differ (empty: equal)."""
    return [f"{k}: CuTe {cute_args.get(k)} vs library {lib_args.get(k)}" for k in _CUTE_FIELDS if cute_args.get(k) != lib_args.get(k)]


def run_cute_gpu(drv: Driver, workdir: str, include: str | None) -> dict:
    """Build CuTe's program with ``nvcc`` (the shim encoding with the real driver), run it, and compare every
    case's arguments and bytes with the library's: ``{"cases": {name: record}, ...}``."""
    drv.lib.cuCtxSetCurrent(drv.ctx)  # this runs in its own thread: make the context current here too
    cases = cute_cases()
    src = os.path.join(workdir, "cute_tma.cu")
    exe = os.path.join(workdir, "cute_tma")
    with open(src, "w") as fh:
        fh.write("#define LAYOUTALG_REAL_DRIVER 1\n" + cute_program(cases))
    inc = [f"-I{include}"] if include else []
    cmd = ["nvcc", "-std=c++17", "-O0", "-w", *inc, src, "-o", exe, "-ldl"]
    t0 = time.time()
    p = subprocess.run(cmd, capture_output=True, text=True)
    res: dict = {"compiler": " ".join(cmd[:4]), "compile_seconds": time.time() - t0}
    if p.returncode:
        res["error"] = f"nvcc failed: {p.stderr[-2000:]}"
        return res
    q = subprocess.run([exe], capture_output=True, text=True, timeout=300)
    parsed = parse_cute_output(q.stdout)
    res["cases"] = {}
    for c in cases:
        calls = parsed.get(c["name"], [])
        rec: dict = {"global": c["global"], "cute_layout": c["cute_layout"], "library_layout": c["library_layout"],
                     "dtype": c["dtype"]}
        if len(calls) != 1:
            rec.update(status="error", error=f"{len(calls)} encode calls; stderr {q.stderr[-300:]}")
            res["cases"][c["name"]] = rec
            continue
        cute = calls[0]
        rec["cute"] = {k: cute[k] for k in _CUTE_FIELDS}
        rec["cute_result"] = cute.get("result")
        try:
            lib = library_cute_args(c)
            rec["library"] = lib
            rec["differences"] = compare_cute(cute, lib)
            from ..layout import Layout

            gs, gst = c["global"]
            t = make_tma_copy(Layout(tuple(gs), tuple(gst)), _library_layout(c), c["dtype"], coalesce=c["static_strides"])
            r, blob = drv.encode_tiled(t.tensor_map.driver_args(cute["address"]))
            rec["library_encode_result"] = r
            rec["bytes_equal"] = (blob.hex() == cute.get("bytes")) if r == 0 and cute.get("result") == 0 else None
            rec["loads_per_tile"] = len(t.loads)
            rec["status"] = "pass" if not rec["differences"] and rec["bytes_equal"] else "fail"
        except Exception as e:  # noqa: BLE001
            rec.update(status="error", error=f"{type(e).__name__}: {e}")
        res["cases"][c["name"]] = rec
    return res



def replay_cute(recording: dict) -> list[str]:
    """The library's arguments for each recorded CuTe case must be CuTe's (and its bytes were the driver's)."""
    problems = []
    cases = {c["name"]: c for c in cute_cases()}
    for name, rec in recording.get("cute", {}).get("cases", {}).items():
        if rec.get("status") != "pass":
            problems.append(f"{name}: recorded status {rec.get('status')}: {rec.get('error', rec.get('differences'))}")
            continue
        diff = compare_cute(rec["cute"], library_cute_args(cases[name]))
        if diff:
            problems.append(f"{name}: " + "; ".join(diff))
    return problems

