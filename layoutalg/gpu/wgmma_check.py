"""``wgmma.mma_async`` end to end: shared-memory images and descriptors from the library, D from the GPU.

For each mode (element type x K-/MN-major x swizzle 0/32/64/128 B) the host

1. builds the operand tiles A (64 x KT) and B (N=64 x KT) with :func:`layoutalg.nvidia.wgmma.tile`
   (the canonical layout tiled to shape; ``KT`` = 256 bytes of K, so every tile has several
   k-blocks and, where the swizzle row is narrower than 256 B, several swizzle atoms along K,
   which makes LBO / SBO non-trivial);
2. writes element ``(mn, k)`` of random small integers at the byte offset the tile says, swizzle
   included -- this *is* the shared-memory image;
3. asks :func:`layoutalg.nvidia.wgmma.k_block_descriptors` for the descriptor of each k-block
   (start addresses relative to the tile; the kernel adds the tile's shared address, which is
   1024-byte aligned, so the base offset is 0);
4. runs one warpgroup that copies the images to shared memory, issues one ``wgmma`` per k-block
   and writes its accumulator registers out;
5. reads D through :func:`layoutalg.nvidia.wgmma_fragments.fragment` and compares it exactly with
   ``A @ B^T``.

Why CUDA C and not Triton: the descriptors must point into shared memory the kernel lays out
byte by byte; Triton's inline asm cannot name a shared-memory address, so the kernels are
CUDA C with inline PTX, compiled by ``nvcc -arch=sm_90a -cubin`` and launched with CuPy.

Negative controls run in a child process each (a bad descriptor can raise
``cudaErrorIllegalAddress``, which poisons the CUDA context): LBO and SBO swapped, and a wrong
swizzle code. Either a wrong D or a CUDA error counts as *caught*.

    >>> m = modes()[0]
    >>> m["name"], m["KT"], len(descriptors(m)["A"])
    ('f16.K.sw0', 128, 8)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import numpy as np

from . import encode as enc

__all__ = ["modes", "descriptors", "images", "cuda_source", "run", "replay", "NEGATIVES"]

N = 64
_BYTES = {"f16": 2, "bf16": 2, "tf32": 4, "e4m3": 1}


def modes() -> list[dict]:
    """Every mode the harness runs: f16/bf16 in both majors, tf32/e4m3 K-major (wgmma's rule), 4 swizzles."""
    out = []
    for dt in ("f16", "bf16", "tf32", "e4m3"):
        for major in (("K", "MN") if dt in ("f16", "bf16") else ("K",)):
            for sw in (0, 32, 64, 128):
                nb = _BYTES[dt]
                out.append({"name": f"{dt}.{major}.sw{sw}", "dtype": dt, "major": major, "swizzle": sw,
                            "KT": 256 // nb, "K": 32 // nb, "N": N})
    return out


def _tiles(m: dict):
    from ..nvidia.wgmma import tile

    return (tile(m["major"], m["swizzle"], m["dtype"], (64, m["KT"])),
            tile(m["major"], m["swizzle"], m["dtype"], (m["N"], m["KT"])))


def descriptors(m: dict) -> dict:
    """{"A": [word...], "B": [word...], "offsets_A": [...], "offsets_B": [...]}: the library's k-block descriptors."""
    from ..nvidia.wgmma import k_block_descriptors

    ta, tb = _tiles(m)
    instr = f"m64n{m['N']}k{m['K']}"
    ka = k_block_descriptors(ta, m["dtype"], instr, operand="A", major=m["major"])
    kb = k_block_descriptors(tb, m["dtype"], instr, operand="B", major=m["major"])
    return {"A": [b.descriptor.encode() for b in ka], "B": [b.descriptor.encode() for b in kb],
            "offsets_A": [b.offset_bytes for b in ka], "offsets_B": [b.offset_bytes for b in kb]}


def images(m: dict, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(A, B, image_A bytes, image_B bytes): random integer operands placed by the library's tiles."""
    ta, tb = _tiles(m)
    rng = np.random.default_rng(seed)
    nb = _BYTES[m["dtype"]]
    out = []
    mats = []
    for t, rows in ((ta, 64), (tb, m["N"])):
        X = rng.integers(-2, 3, (rows, m["KT"])).astype(np.float64)
        off = np.asarray(t.table(), dtype=np.int64)  # column-major (mn, k): index mn + rows*k
        size = int(off.max()) + 1
        img = np.zeros(size * nb, dtype=np.uint8)
        codes = enc.encode(X.T.reshape(-1), m["dtype"])  # column-major order of (mn, k)
        for j in range(nb):
            img[off * nb + j] = ((codes >> np.uint64(8 * j)) & np.uint64(0xFF)).astype(np.uint8)
        pad = (-len(img)) % 16
        out.append(np.concatenate([img, np.zeros(pad, np.uint8)]))
        mats.append(X)
    return mats[0], mats[1], out[0], out[1]


def _kernel_name(dt: str, major: str) -> str:
    return f"wg_{dt}_{major}"


def cuda_source() -> str:
    """CUDA C of every wgmma kernel the modes need (one per type and majorness)."""
    parts = ["#include <cstdint>"]
    done = set()
    for m in modes():
        key = (m["dtype"], m["major"])
        if key in done:
            continue
        done.add(key)
        dt, major = key
        nreg = m["N"] // 2  # f32 accumulators per thread: 64*N/128
        dlist = ", ".join(f"%{j}" for j in range(nreg))
        tail = ""
        if dt in ("f16", "bf16"):
            t = 1 if major == "MN" else 0
            tail = f", {t}, {t}"
        asm = (f'"{{\\n.reg .pred p;\\nsetp.ne.b32 p, %{nreg + 2}, 0;\\n"\n'
               f'      "wgmma.mma_async.sync.aligned.m64n{m["N"]}k{m["K"]}.f32.{dt}.{dt} '
               f'{{{dlist}}}, %{nreg}, %{nreg + 1}, p, 1, 1{tail};\\n}}\\n"')
        outs = ", ".join(f'"+f"(d[{j}])' for j in range(nreg))
        parts.append(f"""
extern "C" __global__ void __launch_bounds__(128) {_kernel_name(dt, major)}(
    const uint4* a_img, const uint4* b_img, int a_words, int b_words,
    const unsigned long long* da, const unsigned long long* db, int nk, float* out) {{
  __shared__ __align__(1024) uint4 smA[1024];
  __shared__ __align__(1024) uint4 smB[1024];
  int tid = threadIdx.x;
  for (int i = tid; i < a_words; i += 128) smA[i] = a_img[i];
  for (int i = tid; i < b_words; i += 128) smB[i] = b_img[i];
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  unsigned long long a_base = ((unsigned)__cvta_generic_to_shared(smA)) >> 4;
  unsigned long long b_base = ((unsigned)__cvta_generic_to_shared(smB)) >> 4;
  float d[{nreg}];
  #pragma unroll
  for (int j = 0; j < {nreg}; ++j) d[j] = 0.f;
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
  for (int s = 0; s < nk; ++s) {{
    unsigned long long descA = da[s] + a_base;
    unsigned long long descB = db[s] + b_base;
    asm volatile({asm}
      : {outs}
      : "l"(descA), "l"(descB), "r"(s) : "memory");
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
  }}
  #pragma unroll
  for (int j = 0; j < {nreg}; ++j) out[tid * {nreg} + j] = d[j];
}}
""")
    return "\n".join(parts)


def compile_cubin(workdir: str) -> str:
    """nvcc -arch sm_90a -cubin of :func:`cuda_source`; the cubin's path."""
    src = os.path.join(workdir, "wgmma_kernels.cu")
    cub = os.path.join(workdir, "wgmma_kernels.cubin")
    with open(src, "w") as fh:
        fh.write(cuda_source())
    r = subprocess.run(["nvcc", "-gencode=arch=compute_90a,code=sm_90a", "-cubin", "-O2", "-o", cub, src],
                       capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(f"nvcc failed: {r.stderr[-1500:]}")
    return cub


def _execute(cubin: str, m: dict, words_a: list, words_b: list, seed: int = 0) -> dict:
    """Run one mode with the given descriptor words; compare with the host product."""
    import cupy as cp

    from ..nvidia.wgmma_fragments import fragment

    A, B, ia, ib = images(m, seed)
    mod = cp.RawModule(path=cubin)
    fn = mod.get_function(_kernel_name(m["dtype"], m["major"]))
    nreg = m["N"] // 2
    out = cp.full(128 * nreg, cp.nan, dtype=cp.float32)
    da = cp.asarray(np.array(words_a, dtype=np.uint64))
    db = cp.asarray(np.array(words_b, dtype=np.uint64))
    fn((1,), (128,), (cp.asarray(ia), cp.asarray(ib), np.int32(len(ia) // 16), np.int32(len(ib) // 16),
                      da, db, np.int32(len(words_a)), out))
    cp.cuda.runtime.deviceSynchronize()
    d = out.get().reshape(128, nreg).astype(np.float64)
    f = fragment(f"m64n{m['N']}k{m['K']}", "f32", "D")
    got = np.full((64, m["N"]), np.nan)
    for tid in range(128):
        for j in range(nreg):
            r, c = f.coords(tid, j)
            got[r, c] = d[tid, j]
    ref = A @ B.T
    err = np.abs(got - ref)
    bad = np.argwhere(~(err == 0))
    return {"ok": bool(len(bad) == 0), "max_abs_err": float(np.nanmax(err)) if np.isfinite(err).any() else None,
            "mismatched_elements": int(len(bad)),
            "examples": [{"element": [int(a), int(b)], "hw": float(got[a, b]), "ref": float(ref[a, b])} for a, b in bad[:4]]}


# --- negative controls: deliberately wrong descriptors ------------------------------------------
def _swap_lbo_sbo(w: int) -> int:
    lbo, sbo = (w >> 16) & 0x3FFF, (w >> 32) & 0x3FFF
    return (w & ~((0x3FFF << 16) | (0x3FFF << 32))) | (sbo << 16) | (lbo << 32)


def _swizzle_code(w: int, code: int) -> int:
    return (w & ~(3 << 62)) | (code << 62)


#: name -> (mode name, how the library's words are corrupted)
NEGATIVES = {
    "K.sw0.lbo_sbo_swapped": ("bf16.K.sw0", "swap"),
    "MN.sw64.lbo_sbo_swapped": ("bf16.MN.sw64", "swap"),
    "K.sw128.coded_as_64B": ("f16.K.sw128", "sw64"),
    "K.sw32.coded_as_none": ("bf16.K.sw32", "sw0"),
}


def corrupt_words(words: list, how: str) -> list:
    """The library's descriptor words with one deliberate error."""
    if how == "swap":
        return [_swap_lbo_sbo(w) for w in words]
    code = {"sw0": 0, "sw128": 1, "sw64": 2, "sw32": 3}[how]
    return [_swizzle_code(w, code) for w in words]


def _negative_child(cubin: str, name: str) -> None:
    mode_name, how = NEGATIVES[name]
    m = next(x for x in modes() if x["name"] == mode_name)
    d = descriptors(m)
    try:
        res = _execute(cubin, m, corrupt_words(d["A"], how), corrupt_words(d["B"], how))
        res["cuda_error"] = None
    except Exception as e:  # noqa: BLE001 - the CUDA error is the expected outcome
        res = {"ok": False, "cuda_error": f"{type(e).__name__}: {str(e)[:200]}"}
    print("RESULT " + json.dumps(res))


def _run_negatives(cubin: str) -> dict:
    procs = {}
    env = dict(os.environ)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    for name in NEGATIVES:
        procs[name] = subprocess.Popen([sys.executable, "-m", "layoutalg.gpu.wgmma_check", "--negative", cubin, name],
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    out = {}
    for name, p in procs.items():
        mode_name, how = NEGATIVES[name]
        m = next(x for x in modes() if x["name"] == mode_name)
        d = descriptors(m)
        try:
            so, se = p.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            p.kill()
            so, se = "", "timeout"
        line = [x for x in so.splitlines() if x.startswith("RESULT ")]
        res = json.loads(line[-1][7:]) if line else {"ok": False, "cuda_error": f"child died: {se[-300:]}"}
        caught = not res.get("ok", False)
        out[name] = {"mode": mode_name, "corruption": how, "caught": caught,
                     "how_caught": ("CUDA error" if res.get("cuda_error") else "wrong D") if caught else "NOT CAUGHT",
                     "detail": res.get("cuda_error") or res.get("examples", [])[:2],
                     "words_A": [hex(w) for w in corrupt_words(d["A"], how)],
                     "status": "pass" if caught else "fail"}
    return out


def run(log=print) -> dict:
    """Compile, run every mode, run the negative controls; the recording (dict)."""
    import tempfile

    t0 = time.time()
    workdir = tempfile.mkdtemp(prefix="layoutalg_wgmma_")
    try:
        cubin = compile_cubin(workdir)
    except Exception as e:  # noqa: BLE001
        return {"results": {}, "negatives": {}, "error": f"{type(e).__name__}: {e}", "seconds": {"total": time.time() - t0}}
    t_compile = time.time() - t0
    # negative controls start first (children), while the parent runs the good modes
    neg_holder = {}
    import threading

    th = threading.Thread(target=lambda: neg_holder.update(_run_negatives(cubin)))
    th.start()
    results = {}
    for m in modes():
        rec = dict(m)
        try:
            d = descriptors(m)
            rec["descriptors_A"] = [hex(w) for w in d["A"]]
            rec["descriptors_B"] = [hex(w) for w in d["B"]]
            rec["offsets_A"], rec["offsets_B"] = d["offsets_A"], d["offsets_B"]
            res = _execute(cubin, m, d["A"], d["B"])
            rec.update(res)
            rec["status"] = "pass" if res["ok"] else "fail"
        except Exception as e:  # noqa: BLE001
            rec.update({"status": "error", "error": f"{type(e).__name__}: {str(e)[-500:]}"})
        results[m["name"]] = rec
    th.join()
    return {"results": results, "negatives": neg_holder,
            "seconds": {"compile": t_compile, "total": time.time() - t0}}


def replay(recording: dict) -> list[str]:
    """Recorded wgmma runs the library no longer reproduces: its descriptors for a passing mode must be
    the words the hardware accepted, and never the words of a caught negative control."""
    problems = []
    for name, rec in recording["results"].items():
        if rec.get("status") != "pass":
            continue
        m = {k: rec[k] for k in ("name", "dtype", "major", "swizzle", "KT", "K", "N")}
        d = descriptors(m)
        for op in ("A", "B"):
            now = [hex(w) for w in d[op]]
            if now != rec[f"descriptors_{op}"]:
                problems.append(f"{name} {op}: library descriptors {now[:2]}... differ from the hardware-checked "
                                f"{rec[f'descriptors_{op}'][:2]}...")
    for name, neg in recording.get("negatives", {}).items():
        if not neg.get("caught"):
            continue
        m = next((x for x in modes() if x["name"] == neg["mode"]), None)
        if m is None:
            continue
        if [hex(w) for w in descriptors(m)["A"]] == neg["words_A"]:
            problems.append(f"{name}: the library now produces the descriptors the hardware rejected")
    return problems


if __name__ == "__main__":  # child process of the negative controls
    if len(sys.argv) == 4 and sys.argv[1] == "--negative":
        _negative_child(sys.argv[2], sys.argv[3])
