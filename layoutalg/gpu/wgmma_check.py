"""``wgmma.mma_async`` end to end: shared-memory images and descriptors from the library, D from the GPU.

For each mode (element type x K-/MN-major x swizzle 0/32/64/128 B) the host

1. builds the operand tiles A (64 x KT) and B (N=64 x KT) with :func:`layoutalg.nvidia.hopper.wgmma.tile`
   (the canonical layout tiled to shape; ``KT`` = 256 bytes of K, so every tile has several
   k-blocks and, where the swizzle row is narrower than 256 B, several swizzle atoms along K,
   which makes LBO / SBO non-trivial);
2. writes element ``(mn, k)`` of random small integers at the byte offset the tile says, swizzle
   included -- this *is* the shared-memory image;
3. asks :func:`layoutalg.nvidia.hopper.wgmma.k_block_descriptors` for the descriptor of each k-block
   (start addresses relative to the tile; the kernel adds the tile's shared address, which is
   1024-byte aligned, so the base offset is 0);
4. runs one warpgroup that copies the images to shared memory, issues one ``wgmma`` per k-block
   and writes its accumulator registers out;
5. reads D through :func:`layoutalg.nvidia.hopper.wgmma_fragments.fragment` and compares it exactly with
   ``A @ B^T``.

Why CUDA C and not Triton: the descriptors must point into shared memory the kernel lays out
byte by byte; Triton's inline asm cannot name a shared-memory address, so the kernels are
CUDA C with inline PTX, compiled by ``nvcc -arch=sm_90a -cubin`` and launched with CuPy.

Two further sets: **mixed majorness** (:func:`mixed_modes`: A K-major with B MN-major and vice
versa, f16/bf16, equal and unequal swizzles) and **base offset** (:func:`offset_cases`: a tile
that starts ``delta`` = 128 .. 8*swizzle-128 bytes inside its swizzle pattern). Each base-offset
case is placed two ways -- ``abs``: swizzled by absolute buffer offset (the tile is a slice of an
aligned pattern, ``Swizzle o delta o L``; CuTe's case) and ``rel``: swizzled relative to the tile
start (the pattern itself starts at ``delta``) -- and run with A's base-offset field set to each
of 0..7 (B at the library's value, so that a K permutation common to A and B cannot hide an
error). Measured on an H100: ``abs`` reads exactly with 0, ``rel`` with ``(delta >> 7)`` modulo
the pattern's row count (8 / 4 / 2 rows for 128 / 64 / 32 B): the swizzle XOR takes the row bits
from the absolute address, minus the base offset -- the PTX rule, as the library derives it.

Negative controls run in a child process each (a bad descriptor can raise
``cudaErrorIllegalAddress``, which poisons the CUDA context): LBO and SBO swapped, and a wrong
swizzle code. Either a wrong D or a CUDA error counts as *caught*.

    >>> m = modes()[0]
    >>> m["name"], m["KT"], len(descriptors(m)["A"])
    ('f16.K.sw0', 128, 8)
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from typing import Any

import numpy as np

from . import encode as enc
from .common import child_env, compare_exact, nvcc_cubin, wgmma_mainloop

__all__ = ["modes", "mixed_modes", "offset_cases", "descriptors", "images", "cuda_source", "run", "replay",
           "replay_mixed", "replay_offsets", "NEGATIVES", "with_base_offset", "execute", "readout", "gather_d",
           "compile_cubin", "corrupt_words"]

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


def mixed_modes() -> list[dict]:
    """A and B of different majorness (and some of different swizzles): f16/bf16 only (MN-major rule)."""
    out = []
    pairs = [(0, 0), (32, 32), (64, 64), (128, 128), (128, 32), (0, 64), (64, 128)]
    for dt in ("f16", "bf16"):
        for ma, mb in (("K", "MN"), ("MN", "K")):
            for swa, swb in pairs:
                out.append({"name": f"{dt}.A{ma}{swa}.B{mb}{swb}", "dtype": dt, "major": ma, "major_B": mb,
                            "swizzle": swa, "swizzle_B": swb, "KT": 128, "K": 16, "N": N})
    return out


def offset_cases() -> list[dict]:
    """Operands whose swizzle pattern is *not* aligned to its repeat: f16, K/MN-major, 32/64/128 B swizzle.

    ``delta`` (bytes, a multiple of 128 below the pattern repeat 8 * swizzle) is where the tile
    starts inside the pattern. Each case is run with two physical placements and all 8 values of
    the base-offset field (see :func:`run_offsets`).
    """
    out = []
    for major in ("K", "MN"):
        for sw in (128, 64, 32):
            for delta in range(128, 8 * sw, 128):
                out.append({"name": f"f16.{major}.sw{sw}.at{delta}", "dtype": "f16", "major": major,
                            "swizzle": sw, "KT": 128, "K": 16, "N": N, "delta": delta})
    return out


def _ab(m: dict) -> tuple[tuple[str, int], tuple[str, int]]:
    """((major, swizzle) of A, (major, swizzle) of B) of a mode."""
    return ((m["major"], m["swizzle"]), (m.get("major_B", m["major"]), m.get("swizzle_B", m["swizzle"])))


def _tiles(m: dict):
    from ..nvidia.hopper.wgmma import tile

    (ma, sa), (mb, sb) = _ab(m)
    return (tile(ma, sa, m["dtype"], (64, m["KT"])), tile(mb, sb, m["dtype"], (m["N"], m["KT"])))


def _shifted(t, delta_elems: int):
    """The tile ``t`` = Swizzle o 0 o L moved ``delta_elems`` into its swizzle pattern: Swizzle o delta o L."""
    from ..composed import ComposedLayout

    return ComposedLayout(t.outer, delta_elems, t.inner) if delta_elems else t


def descriptors(m: dict, delta: int = 0, how: str = "sliced") -> dict:
    """{"A": [word...], "B": [word...], "offsets_A": [...], "offsets_B": [...]}: the library's k-block descriptors.

    ``delta`` bytes: where the tile starts inside the (1024-byte aligned) buffer. ``how="sliced"``:
    the tile is ``Swizzle o delta o L`` (a slice of an aligned pattern, as CuTe slices a tile),
    ``start_address=0``; ``how="origin"``: the tile's own pattern starts at ``delta``
    (``k_block_descriptors(tile, start_address=delta)``).
    """
    from ..nvidia.hopper.wgmma import k_block_descriptors

    ta, tb = _tiles(m)
    (ma, _), (mb, _) = _ab(m)
    nb = _BYTES[m["dtype"]]
    instr = f"m64n{m['N']}k{m['K']}"
    out = {}
    for op, t, major in (("A", ta, ma), ("B", tb, mb)):
        if how == "sliced":
            kbs = k_block_descriptors(_shifted(t, delta // nb), m["dtype"], instr, operand=op, major=major)
        elif how == "origin":
            kbs = k_block_descriptors(t, m["dtype"], instr, operand=op, major=major, start_address=delta)
        else:
            raise ValueError(f"descriptors: how={how!r} is not 'sliced' or 'origin'")
        out[op] = [b.descriptor.encode() for b in kbs]
        out[f"offsets_{op}"] = [b.offset_bytes for b in kbs]
    return out


def with_base_offset(words: list, bo: int) -> list:
    """The descriptor words with the base-offset field (bits 49-51) set to ``bo``."""
    return [(w & ~(7 << 49)) | (bo << 49) for w in words]


def images(m: dict, seed: int = 0, delta: int = 0, placement: str = "abs"
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(A, B, image_A bytes, image_B bytes): random integer operands placed by the library's tiles.

    The image is the buffer from its (1024-byte aligned) start. ``delta`` bytes moves the tile:
    ``placement="abs"`` swizzles by the absolute buffer offset (element at ``Sw(delta + L(c))``,
    the tile is a slice of an aligned pattern); ``"rel"`` swizzles relative to the tile's start
    (element at ``delta + Sw(L(c))``, the pattern itself starts at ``delta``).
    """
    ta, tb = _tiles(m)
    rng = np.random.default_rng(seed)
    nb = _BYTES[m["dtype"]]
    de = delta // nb
    out = []
    mats = []
    for t, rows in ((ta, 64), (tb, m["N"])):
        X = rng.integers(-2, 3, (rows, m["KT"])).astype(np.float64)
        if placement == "abs":
            off = np.asarray(_shifted(t, de).table(), dtype=np.int64)  # column-major (mn, k): index mn + rows*k
        elif placement == "rel":
            off = de + np.asarray(t.table(), dtype=np.int64)
        else:
            raise ValueError(f"images: placement={placement!r} is not 'abs' or 'rel'")
        size = int(off.max()) + 1
        img = np.zeros(size * nb, dtype=np.uint8)
        codes = enc.encode(X.T.reshape(-1), m["dtype"])  # column-major order of (mn, k)
        for j in range(nb):
            img[off * nb + j] = ((codes >> np.uint64(8 * j)) & np.uint64(0xFF)).astype(np.uint8)
        pad = (-len(img)) % 16
        out.append(np.concatenate([img, np.zeros(pad, np.uint8)]))
        mats.append(X)
    return mats[0], mats[1], out[0], out[1]


def _kernel_name(m: dict) -> str:
    (ma, _), (mb, _) = _ab(m)
    return f"wg_{m['dtype']}_{ma}_{mb}"


#: uint4 words of each operand's shared buffer (20 KiB: a 16 KiB tile plus up to 1 KiB of offset)
SMEM_WORDS = 1280


def cuda_source() -> str:
    """CUDA C of every wgmma kernel the modes need (one per type and majorness of A and B)."""
    parts = ["#include <cstdint>"]
    done = set()
    for m in modes() + mixed_modes():
        key = _kernel_name(m)
        if key in done:
            continue
        done.add(key)
        (ma, _), (mb, _) = _ab(m)
        nreg = m["N"] // 2  # f32 accumulators per thread: 64*N/128
        loop = wgmma_mainloop(m["N"], m["K"], m["dtype"], ma, mb, "da[s] + a_base", "db[s] + b_base")
        parts.append(f"""
extern "C" __global__ void __launch_bounds__(128) {key}(
    const uint4* a_img, const uint4* b_img, int a_words, int b_words,
    const unsigned long long* da, const unsigned long long* db, int nk, float* out, unsigned* info) {{
  __shared__ __align__(1024) uint4 smA[{SMEM_WORDS}];
  __shared__ __align__(1024) uint4 smB[{SMEM_WORDS}];
  int tid = threadIdx.x;
  for (int i = tid; i < a_words; i += 128) smA[i] = a_img[i];
  for (int i = tid; i < b_words; i += 128) smB[i] = b_img[i];
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  unsigned long long a_base = ((unsigned)__cvta_generic_to_shared(smA)) >> 4;
  unsigned long long b_base = ((unsigned)__cvta_generic_to_shared(smB)) >> 4;
  if (tid == 0) {{ info[0] = (unsigned)a_base << 4; info[1] = (unsigned)b_base << 4; }}
{loop}
  #pragma unroll
  for (int j = 0; j < {nreg}; ++j) out[tid * {nreg} + j] = d[j];
}}
""")
    return "\n".join(parts)


def compile_cubin(workdir: str) -> str:
    """nvcc -arch sm_90a -cubin of :func:`cuda_source`; the cubin's path."""
    return nvcc_cubin(cuda_source(), "wgmma_kernels", workdir)


_READOUT: dict = {}
_MODULES: dict = {}


def readout(n: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(rows, cols) [128, N/2] of the library's m64nNk D fragment: where register (tid, j) lands.

        >>> rows, cols = readout(64, 16)
        >>> rows.shape, int(rows[0, 0]), int(cols[0, 1])
        ((128, 32), 0, 1)
    """
    key = (n, k)
    if key not in _READOUT:
        from ..nvidia.hopper.wgmma_fragments import fragment

        f = fragment(f"m64n{n}k{k}", "f32", "D")
        rc = np.array([[f.coords(tid, j) for j in range(n // 2)] for tid in range(128)], dtype=np.int64)
        _READOUT[key] = (rc[..., 0], rc[..., 1])
    return _READOUT[key]


def gather_d(d: np.ndarray, n: int, k: int) -> np.ndarray:
    """D (64 x n, NaN where no register lands) from the accumulators ``d[tid, j]`` of an m64n<n>k<k> wgmma,
    placed by the library's D fragment."""
    rows, cols = readout(n, k)
    got = np.full((64, n), np.nan)
    got[rows, cols] = d
    return got


def execute(cubin: str, m: dict, words_a: list, words_b: list, seed: int = 0,
            delta: int = 0, placement: str = "abs") -> dict:
    """Run mode ``m`` (of :func:`modes`, :func:`mixed_modes` or :func:`offset_cases`) on the GPU with the given
    descriptor words (k-block by k-block) over :func:`images` ``(m, seed, delta, placement)``, through the kernel
    of ``cubin`` (:func:`compile_cubin`): :func:`~layoutalg.gpu.common.compare_exact` of D with the host product.
    Needs CuPy and an sm_90 GPU."""
    import cupy as cp

    A, B, ia, ib = images(m, seed, delta, placement)
    if max(len(ia), len(ib)) > 16 * SMEM_WORDS:
        raise ValueError(f"{m['name']}: image of {max(len(ia), len(ib))} B exceeds the {16 * SMEM_WORDS} B buffer")
    if cubin not in _MODULES:
        _MODULES[cubin] = cp.RawModule(path=cubin)
    fn = _MODULES[cubin].get_function(_kernel_name(m))
    nreg = m["N"] // 2
    out = cp.full(128 * nreg, cp.nan, dtype=cp.float32)
    info = cp.zeros(2, dtype=cp.uint32)
    da = cp.asarray(np.array(words_a, dtype=np.uint64))
    db = cp.asarray(np.array(words_b, dtype=np.uint64))
    fn((1,), (128,), (cp.asarray(ia), cp.asarray(ib), np.int32(len(ia) // 16), np.int32(len(ib) // 16),
                      da, db, np.int32(len(words_a)), out, info))
    cp.cuda.runtime.deviceSynchronize()
    d = out.get().reshape(128, nreg).astype(np.float64)
    bases = [int(x) for x in info.get()]
    if any(b % 1024 for b in bases):
        raise RuntimeError(f"shared buffers at {bases} are not 1024-byte aligned; the base-offset analysis needs that")
    return compare_exact(gather_d(d, m["N"], m["K"]), A @ B.T)


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
        res = execute(cubin, m, corrupt_words(d["A"], how), corrupt_words(d["B"], how))
        res["cuda_error"] = None
    except Exception as e:  # noqa: BLE001 - the CUDA error is the expected outcome
        res = {"ok": False, "cuda_error": f"{type(e).__name__}: {str(e)[:200]}"}
    print("RESULT " + json.dumps(res))


def _run_negatives(cubin: str) -> dict:
    procs = {}
    env = child_env()
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
        res: dict[str, Any] = json.loads(line[-1][7:]) if line else {"ok": False, "cuda_error": f"child died: {se[-300:]}"}
        caught = not res.get("ok", False)
        out[name] = {"mode": mode_name, "corruption": how, "caught": caught,
                     "how_caught": ("CUDA error" if res.get("cuda_error") else "wrong D") if caught else "NOT CAUGHT",
                     "detail": res.get("cuda_error") or res.get("examples", [])[:2],
                     "words_A": [hex(w) for w in corrupt_words(d["A"], how)],
                     "status": "pass" if caught else "fail"}
    return out


# --- base offset: tiles that start inside their swizzle pattern ---------------------------------
PLACEMENTS = ("abs", "rel")


def _offset_items() -> list[tuple[dict, str, int]]:
    return [(c, p, bo) for c in offset_cases() for p in PLACEMENTS for bo in range(8)]


def _offsets_child(cubin: str, start: int) -> None:
    """Run offset items from ``start`` on; one ``RESULT idx json`` line each; ``CRASH idx`` on a CUDA error."""
    items = _offset_items()
    cache: dict = {}
    for idx in range(start, len(items)):
        c, placement, bo = items[idx]
        if c["name"] not in cache:
            cache[c["name"]] = (descriptors(c, c["delta"], "sliced"), descriptors(c, c["delta"], "origin"))
        sl, og = cache[c["name"]]
        # A's base offset is swept; B keeps the library's value for its placement, so that a wrong
        # A is never hidden by the same wrong permutation of K in B
        words_b = sl["B"] if placement == "abs" else og["B"]
        try:
            res = execute(cubin, c, with_base_offset(sl["A"], bo), words_b,
                           delta=c["delta"], placement=placement)
        except Exception as e:  # noqa: BLE001 - a CUDA error poisons this process: report and stop
            print(f"CRASH {idx} " + json.dumps(f"{type(e).__name__}: {str(e)[:200]}"), flush=True)
            return
        print(f"RESULT {idx} " + json.dumps({"ok": res["ok"], "mismatched": res["mismatched_elements"]}), flush=True)


def run_offsets(cubin: str, log=print) -> dict:
    """Every offset case x placement (abs / rel) x base-offset field 0..7, in child processes.

    Recorded per case: the library's descriptors for the tile as a slice of an aligned pattern
    (``sliced``: ``Swizzle o delta o L`` at 0) and with its own pattern at ``delta`` (``origin``),
    and for each placement the list over A's base offset 0..7 of [exact D?, mismatched elements]
    (B keeps the library's descriptor of that placement: ``sliced`` for abs, ``origin`` for rel)
    (``None`` where the process had crashed: a CUDA error).
    """
    items = _offset_items()
    got: dict = {}
    start, launches = 0, 0
    while start < len(items) and launches < 12:
        launches += 1
        p = subprocess.run([sys.executable, "-m", "layoutalg.gpu.wgmma_check", "--offsets", cubin, str(start)],
                           capture_output=True, text=True, env=child_env(), timeout=300)
        nxt = None
        for line in p.stdout.splitlines():
            if line.startswith("RESULT "):
                _, pos, js = line.split(" ", 2)
                got[int(pos)] = json.loads(js)
            elif line.startswith("CRASH "):
                _, pos, js = line.split(" ", 2)
                got[int(pos)] = {"ok": False, "mismatched": None, "cuda_error": json.loads(js)}
                nxt = int(pos) + 1
        if nxt is None:
            done = max(got) + 1 if got else start
            if done == start or done >= len(items):
                if done == start:
                    log(f"[wgmma offsets] child made no progress at item {start}: {p.stderr[-400:]}")
                    got[start] = {"ok": False, "mismatched": None, "cuda_error": f"child died: {p.stderr[-300:]}"}
                    nxt = start + 1
                else:
                    break
            else:
                nxt = done
        start = nxt
    cases: dict[str, Any] = {}
    for idx, (c, placement, bo) in enumerate(items):
        rec = cases.get(c["name"])
        if rec is None:
            sl, og = descriptors(c, c["delta"], "sliced"), descriptors(c, c["delta"], "origin")
            rec = cases[c["name"]] = {
                **{k: c[k] for k in ("name", "dtype", "major", "swizzle", "KT", "K", "N", "delta")},
                "sliced_A": [hex(w) for w in sl["A"]], "sliced_B": [hex(w) for w in sl["B"]],
                "origin_A": [hex(w) for w in og["A"]], "origin_B": [hex(w) for w in og["B"]],
                "abs": [None] * 8, "rel": [None] * 8,
                "swept": "base offset of A; B at the library's base offset for the placement"}
        r = got.get(idx)
        rec[placement][bo] = None if r is None else [bool(r["ok"]), r.get("mismatched")]
        if r is not None and r.get("cuda_error"):
            rec.setdefault("cuda_errors", {})[f"{placement}.{bo}"] = r["cuda_error"]
    for rec in cases.values():
        bo_s = (int(rec["sliced_A"][0], 16) >> 49) & 7
        bo_o = (int(rec["origin_A"][0], 16) >> 49) & 7
        rec["library_bo"] = {"sliced": bo_s, "origin": bo_o}
        ok_abs = [b for b, r in enumerate(rec["abs"]) if r and r[0]]
        ok_rel = [b for b, r in enumerate(rec["rel"]) if r and r[0]]
        rec["hardware_bo"] = {"abs": ok_abs, "rel": ok_rel}
        agree_s = bo_s in ok_abs
        agree_o = bo_o in ok_rel
        rec["library_agrees"] = {"sliced": agree_s, "origin": agree_o}
        rec["status"] = "pass" if agree_s and agree_o else "fail"
    return cases


def run(log=print) -> dict:
    """Compile, run every mode, the mixed-major modes, the base-offset cases and the negative controls."""
    import tempfile
    import threading

    t0 = time.time()
    workdir = tempfile.mkdtemp(prefix="layoutalg_wgmma_")
    try:
        cubin = compile_cubin(workdir)
    except Exception as e:  # noqa: BLE001
        return {"results": {}, "negatives": {}, "error": f"{type(e).__name__}: {e}", "seconds": {"total": time.time() - t0}}
    t_compile = time.time() - t0
    # negative controls and the base-offset sweep run in children while the parent runs the good modes
    neg_holder: dict = {}
    off_holder: dict = {}

    def offsets_job():
        t = time.time()
        try:
            off_holder.update(run_offsets(cubin, log))
        except Exception as e:  # noqa: BLE001
            off_holder["(error)"] = {"status": "error", "error": f"{type(e).__name__}: {str(e)[-500:]}"}
        off_holder["(seconds)"] = time.time() - t

    th = threading.Thread(target=lambda: neg_holder.update(_run_negatives(cubin)))
    th.start()
    th2 = threading.Thread(target=offsets_job)
    th2.start()
    results = {}
    for m in modes():
        rec = dict(m)
        try:
            d = descriptors(m)
            rec["descriptors_A"] = [hex(w) for w in d["A"]]
            rec["descriptors_B"] = [hex(w) for w in d["B"]]
            rec["offsets_A"], rec["offsets_B"] = d["offsets_A"], d["offsets_B"]
            res = execute(cubin, m, d["A"], d["B"])
            rec.update(res)
            rec["status"] = "pass" if res["ok"] else "fail"
        except Exception as e:  # noqa: BLE001
            rec.update({"status": "error", "error": f"{type(e).__name__}: {str(e)[-500:]}"})
        results[m["name"]] = rec
    mixed = {}
    for m in mixed_modes():
        rec = dict(m)
        try:
            d = descriptors(m)
            rec["descriptors_A"] = [hex(w) for w in d["A"]]
            rec["descriptors_B"] = [hex(w) for w in d["B"]]
            res = execute(cubin, m, d["A"], d["B"], seed=1)
            rec.update(res)
            rec["status"] = "pass" if res["ok"] else "fail"
        except Exception as e:  # noqa: BLE001
            rec.update({"status": "error", "error": f"{type(e).__name__}: {str(e)[-500:]}"})
        mixed[m["name"]] = rec
    t_modes = time.time() - t0
    th.join()
    th2.join()
    off_secs = off_holder.pop("(seconds)", None)
    return {"results": results, "mixed": mixed, "offsets": off_holder, "negatives": neg_holder,
            "seconds": {"compile": t_compile, "modes": t_modes, "offsets": off_secs, "total": time.time() - t0}}


def replay(recording: dict) -> list[str]:
    """Recorded wgmma runs the library no longer reproduces: its descriptors for a passing mode must be
    the words the hardware accepted, and never the words of a caught negative control."""
    problems = []
    for name, rec in recording["results"].items():
        if rec.get("status") != "pass":
            continue
        case = {k: rec[k] for k in ("name", "dtype", "major", "swizzle", "KT", "K", "N")}
        d = descriptors(case)
        for op in ("A", "B"):
            now = [hex(w) for w in d[op]]
            if now != rec[f"descriptors_{op}"]:
                problems.append(f"{name} {op}: library descriptors {now[:2]}... differ from the hardware-checked "
                                f"{rec[f'descriptors_{op}'][:2]}...")
    for name, neg in recording.get("negatives", {}).items():
        if not neg.get("caught"):
            continue
        m: dict[str, Any] | None = next((x for x in modes() if x["name"] == neg["mode"]), None)
        if m is None:
            continue
        if [hex(w) for w in descriptors(m)["A"]] == neg["words_A"]:
            problems.append(f"{name}: the library now produces the descriptors the hardware rejected")
    return problems


def replay_mixed(recording: dict) -> list[str]:
    """Mixed-major modes: the library's descriptors for each passing mode must be the recorded words."""
    problems = []
    for name, rec in recording.get("mixed", {}).items():
        if rec.get("status") != "pass":
            problems.append(f"{name}: recorded status {rec.get('status')}")
            continue
        d = descriptors({k: rec[k] for k in ("name", "dtype", "major", "major_B", "swizzle", "swizzle_B", "KT", "K", "N")})
        for op in ("A", "B"):
            if [hex(w) for w in d[op]] != rec[f"descriptors_{op}"]:
                problems.append(f"{name} {op}: library descriptors differ from the hardware-checked words")
    return problems


def _strip_bo(words) -> list[int]:
    return [int(w, 16) & ~(7 << 49) if isinstance(w, str) else w & ~(7 << 49) for w in words]


def replay_offsets(recording: dict, how: str = "sliced") -> list[str]:
    """Base-offset cases: the library's descriptors (``how`` = "sliced" or "origin") must read D exactly.

    The recording holds, for every case and both placements, which base-offset values gave an
    exact D (all other fields as the library's). ``sliced`` pairs with the ``abs`` placement (the
    tile is a slice of an aligned pattern), ``origin`` with ``rel`` (the pattern starts at delta).
    A problem is reported when the library's start/LBO/SBO/swizzle differ from the recorded ones
    or when its base offset is one the hardware did not accept.
    """
    placement = {"sliced": "abs", "origin": "rel"}[how]
    problems = []
    for name, rec in recording.get("offsets", {}).items():
        if name.startswith("("):
            problems.append(f"offsets: {rec}")
            continue
        c = {k: rec[k] for k in ("name", "dtype", "major", "swizzle", "KT", "K", "N", "delta")}
        d = descriptors(c, c["delta"], how)
        for op in ("A", "B"):
            if _strip_bo(d[op]) != _strip_bo(rec[f"sliced_{op}"]):
                problems.append(f"{name} {op}: library start/LBO/SBO/swizzle differ from the recorded run")
        bo = (d["A"][0] >> 49) & 7
        if any(((w >> 49) & 7) != bo for w in d["A"] + d["B"]):
            problems.append(f"{name}: the library's base offsets differ between k-blocks / operands")
        bo_b = (d["B"][0] >> 49) & 7
        want_b = _strip_bo(rec["sliced_B"])
        if how == "origin":
            want_b = [w | ((int(rec["origin_B"][0], 16) >> 49) & 7) << 49 for w in want_b]
        if d["B"] != want_b:
            problems.append(f"{name} B ({how}): library base_offset {bo_b} differs from the B words of the run")
        r = rec[placement][bo]
        if not (r and r[0]):
            ok = [b for b, x in enumerate(rec[placement]) if x and x[0]]
            problems.append(f"{name} ({how}, delta {c['delta']} B): library base_offset {bo}; "
                            f"the hardware read D exactly only with base_offset in {ok}")
    return problems


if __name__ == "__main__":  # child process of the negative controls
    if len(sys.argv) == 4 and sys.argv[1] == "--negative":
        _negative_child(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 4 and sys.argv[1] == "--offsets":
        _offsets_child(sys.argv[2], int(sys.argv[3]))
