"""Synthesised shared-memory layouts measured: Nsight Compute's wavefront counters for three kernels' accesses.

For each kernel of :data:`layoutalg.synth.KERNELS` (an Ampere GEMM A tile, attention's transposed
V read, an fp8 transpose) :func:`layoutalg.synth.synthesize_swizzle` gives four layouts -- the
synthesised one, no swizzle, the best CuTe GMMA atom, the best padding -- and each access of the
kernel becomes one *case*: the byte address of every lane of every warp-level instruction, computed
by :func:`layoutalg.banks.access_addresses`, and the analyser's wavefronts for them. On the GPU one
warp replays the instructions of a case from an address table, with the kernel's own instruction
(``cp.async.cg.shared.global`` 16 B, ``ldmatrix.x4{.trans}``, ``ld.shared.b32``; the row stores are
also replayed as ``st.shared.v4``), one launch per case, under ``ncu``; the recording keeps every
shared-memory wavefront and bank-conflict counter ncu offers for the launch.

    >>> cs = cases()
    >>> len(cs), cs[0]["kernel"], cs[0]["layout"], cs[0]["op"]
    (36, 'ampere_gemm_a', 'synthesised', 'cp.async16')
    >>> [c["predicted"]["wavefronts"] for c in cs if c["kernel"] == "fp8_transpose" and c["op"] == "lds32"]
    [32, 128, 64, 64]
"""

from __future__ import annotations

import subprocess
import sys
import time
from functools import cache

import numpy as np

from .common import child_env, ncu_launches, ncu_path, ncu_query_metrics, nvcc_cubin

__all__ = ["cases", "cuda_source", "run", "replay", "agreement", "ldgsts_aligned", "measured", "measured_table", "OPS",
           "predict_text"]

_SMEM_BYTES = 32768
#: instruction kinds replayed on the GPU: name -> (PTX of one lane's access, vector bytes)
OPS = {
    "cp.async16": "cp.async.cg.shared.global [16 B]",
    "sts128": "st.shared.v4.u32",
    "ldsm4": "ldmatrix.sync.aligned.m8n8.x4.shared.b16",
    "ldsm4t": "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16",
    "lds32": "ld.shared.b32",
}


def _op_of(instruction: str) -> str:
    if instruction.startswith("cp.async"):
        return "cp.async16"
    if instruction.startswith("ldmatrix") and ".x4" in instruction:
        return "ldsm4t" if ".trans" in instruction else "ldsm4"
    if instruction == "ld.shared.b32":
        return "lds32"
    raise ValueError(f"synth_check: no GPU replay for instruction {instruction!r}")


@cache
def _syntheses() -> dict:
    from ..synth import KERNELS, kernel_accesses, synthesize_swizzle

    out = {}
    for name in KERNELS:
        k = kernel_accesses(name)
        out[name] = (k, synthesize_swizzle(k.shape, k.dtype, k.accesses))
    return out


def _addresses(layout, access, eb: int) -> list[list[int]]:
    """Per warp-level instruction, the 32 lanes' byte addresses (-1: lane not read)."""
    from ..banks import access_addresses

    starts = access_addresses(layout, access.tv, eb, access.vector_bytes)
    T, K = starts.shape
    out = []
    for w in range(T // 32):
        for k in range(K):
            out.append([int(a) if lane < access.active_lanes else -1 for lane, a in enumerate(starts[32 * w:32 * w + 32, k])])
    return out


def _predict(layout, access, eb: int) -> dict:
    from ..synth import per_access

    wf, ideal = per_access(layout, [access], eb)
    return {"wavefronts": wf[0], "ideal": ideal[0]}


def cases() -> list[dict]:
    """Every measured case: kernel, layout role and text, access, GPU op, addresses and the analyser's prediction."""
    from ..synth import dtype_bytes

    out = []
    for kname, (k, syn) in _syntheses().items():
        eb = dtype_bytes(k.dtype)
        roles = [("synthesised", syn.best), ("no_swizzle", syn.no_swizzle), ("best_atom", syn.best_atom),
                 ("padding", syn.padding)]
        for role, cand in roles:
            if cand is None:
                continue
            for j, acc in enumerate(k.accesses):
                ops = [_op_of(acc.instruction)]
                if ops[0] == "cp.async16":
                    ops.append("sts128")
                for op in ops:
                    out.append({"name": f"{kname}.{role}.{j}.{op}", "kernel": kname, "layout": role,
                                "layout_text": str(cand.layout), "access": acc.name, "access_index": j, "op": op,
                                "element_bytes": eb, "addresses": _addresses(cand.layout, acc, eb),
                                "predicted": _predict(cand.layout, acc, eb)})
    return out


def cuda_source() -> str:
    """One kernel per op: a single warp executes ``ninst`` instructions at the lane addresses of the table."""
    bodies = {
        "cp.async16": ('asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(a), '
                       '"l"(gsrc + (k * 32 + lane)) : "memory");'),
        "sts128": ('asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};" :: "r"(a), "r"(lane), "r"(k), "r"(acc), '
                   '"r"(ninst) : "memory");'),
        "ldsm4": ('asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];" : "=r"(x0), '
                  '"=r"(x1), "=r"(x2), "=r"(x3) : "r"(a)); acc ^= x0 ^ x1 ^ x2 ^ x3;'),
        "ldsm4t": ('asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];" : "=r"(x0), '
                   '"=r"(x1), "=r"(x2), "=r"(x3) : "r"(a)); acc ^= x0 ^ x1 ^ x2 ^ x3;'),
        "lds32": 'asm volatile("ld.volatile.shared.b32 %0, [%1];" : "=r"(x0) : "r"(a)); acc ^= x0;',
    }
    out = []
    for op, body in bodies.items():
        fn = "synth_" + op.replace(".", "_")
        tail = '  asm volatile("cp.async.wait_all;" ::: "memory");\n' if op == "cp.async16" else ""
        out.append(f"""
extern "C" __global__ void {fn}(const unsigned* addr, int ninst, const uint4* gsrc, unsigned* sink) {{
  __shared__ __align__(1024) unsigned char sm[{_SMEM_BYTES}];
  int lane = threadIdx.x;
  unsigned base = (unsigned)__cvta_generic_to_shared(sm);
  unsigned acc = 0, x0 = 0, x1 = 0, x2 = 0, x3 = 0;
  for (int k = 0; k < ninst; ++k) {{
    int off = (int)addr[k * 32 + lane];
    if (off < 0) continue;
    unsigned a = base + (unsigned)off;
    {body}
  }}
{tail}  sink[lane] = acc ^ x1 ^ x2 ^ x3;
}}""")
    return "\n".join(out)


def _launch(cubin: str, case: dict) -> None:
    import cupy as cp

    mod = cp.RawModule(path=cubin)
    fn = mod.get_function("synth_" + case["op"].replace(".", "_"))
    table = np.asarray(case["addresses"], dtype=np.int64)
    if table.max() + 16 > _SMEM_BYTES:
        raise RuntimeError(f"{case['name']}: address {table.max()} beyond the {_SMEM_BYTES}-byte buffer")
    addr = cp.asarray(table.astype(np.int32).view(np.uint32).reshape(-1))
    gsrc = cp.zeros(16 * 32 * len(table), dtype=cp.uint8)
    sink = cp.zeros(32, dtype=cp.uint32)
    fn((1,), (32,), (addr, np.int32(len(table)), gsrc, sink))
    cp.cuda.runtime.deviceSynchronize()


def _ncu_child(cubin: str) -> None:
    for c in cases():
        _launch(cubin, c)


#: counters asked for when the device's ncu lists them (base names; ``.sum`` is appended)
_WANTED = (
    "l1tex__data_pipe_lsu_wavefronts_mem_shared",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ldsm",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ldgsts",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_cmd_read",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_cmd_write",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ldsm",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ldgsts",
    "sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldgsts",
    "sm__sass_l1tex_data_bank_conflicts_pipe_lsu_mem_shared_op_ldgsts",
    "sm__sass_data_bytes_mem_shared_op_ldgsts",
    "smsp__inst_executed_op_ldgsts",
    "smsp__inst_executed_op_ldsm",
    "smsp__inst_executed_op_shared_ld",
    "smsp__inst_executed_op_shared_st",
)

#: per op, the counters that measure its wavefronts, most specific first
PREFERRED = {
    "lds32": ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum"),
    "ldsm4": ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ldsm.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
              "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum"),
    "ldsm4t": ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ldsm.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
               "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum"),
    "sts128": ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum"),
    # LDGSTS fills shared memory outside the LSU's l1tex__data_pipe counters (on an H100 those read
    # ninst - 3 for any layout): its smem wavefronts are sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldgsts
    "cp.async16": ("sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldgsts.sum",),
}


def _available_metrics(ncu: str) -> tuple[list[str], str]:
    """The wanted counters the device's ncu lists, and every shared-memory counter name it lists (for the record)."""
    text = ncu_query_metrics(ncu)
    names = {line.split()[0] for line in text.splitlines() if line.strip() and not line.startswith(" ")}
    shared = sorted(n for n in names if "shared" in n or "ldgsts" in n or "ldsm" in n)
    return [w for w in _WANTED if w in names], " ".join(shared)


def _run_ncu(cubin: str) -> dict:
    ncu = ncu_path()
    if not ncu:
        return {"error": "ncu not found"}
    try:
        metrics, listed = _available_metrics(ncu)
    except Exception as e:  # noqa: BLE001
        return {"error": f"ncu --query-metrics: {type(e).__name__}: {e}"}
    if not metrics:
        return {"error": "ncu lists none of the wanted counters", "listed": listed}
    p = subprocess.run([ncu, "--csv", "--metrics", ",".join(m + ".sum" for m in metrics), "-k", "regex:synth_",
                        sys.executable, "-m", "layoutalg.gpu.synth_check", "--ncu-child", cubin],
                       capture_output=True, text=True, env=child_env(), timeout=400)
    text = p.stdout
    per_id = ncu_launches(text)
    if per_id is None:
        return {"error": f"no ncu table (rc {p.returncode}): {(p.stdout + p.stderr)[-1500:]}", "listed": listed}
    ids = sorted(per_id)
    cs = cases()
    if len(ids) != len(cs):
        return {"error": f"ncu reported {len(ids)} launches, expected {len(cs)}", "raw": text[-1500:], "listed": listed}
    return {"metrics": [m + ".sum" for m in metrics], "listed": listed,
            "per_case": {c["name"]: per_id[i] for c, i in zip(cs, ids)}}


def measured(rec: dict) -> tuple[str | None, float | None]:
    """The counter that measures this case's wavefronts (see :data:`PREFERRED`) and its value, or (None, None)."""
    got = rec.get("ncu") or {}
    for m in PREFERRED[rec["op"]]:
        if got.get(m) is not None:
            return m, got[m]
    return None, None


def ldgsts_aligned(addresses: list) -> bool:
    """True iff every 8-lane phase of every instruction writes inside one 128-byte-aligned line of shared memory.

    Measured on an H100 (tests/data/hardware/synth.json): where this holds, ``cp.async`` (LDGSTS) costs
    exactly the wavefronts of the bank model; where rows are padded so that a phase straddles two lines,
    LDGSTS costs more (240 against 128 predicted for a 80-byte pitch) while ``st.shared.v4`` at the very
    same addresses costs what the model says. The bank model is then a lower bound for LDGSTS.
    """
    for row in addresses:
        for p in range(0, 32, 8):
            lines = {a // 128 for a in row[p:p + 8] if a >= 0}
            if len(lines) > 1:
                return False
    return True


def agreement(results: dict) -> list[str]:
    """Where the recorded counters contradict the analyser, and where the synthesised layout does not win.

    * every case: the measured wavefronts equal the analyser's prediction for its instructions -- except
      ``cp.async`` into rows that straddle 128-byte lines (:func:`ldgsts_aligned` False), where the
      prediction is a lower bound: measured >= predicted;
    * every kernel and access: the synthesised layout's measured wavefronts are at most the best atom's and
      the unswizzled layout's.
    """
    out = []
    for name, r in results.items():
        m, v = measured(r)
        want = r["predicted"]["wavefronts"]
        if m is None:
            out.append(f"{name}: no ncu counter recorded")
        elif r["op"] == "cp.async16" and not ldgsts_aligned(r["addresses"]):
            if v < want:
                out.append(f"{name}: ncu {m} = {v:g}, below the analyser's lower bound {want} for LDGSTS across lines")
        elif v != want:
            out.append(f"{name}: ncu {m} = {v:g}, the analyser predicts {want}")
    by = {(r["kernel"], r["access_index"], r["op"], r["layout"]): measured(r)[1] for r in results.values()}
    for (kname, j, op, role), v in by.items():
        if role != "synthesised" or v is None:
            continue
        for other in ("best_atom", "no_swizzle"):
            w = by.get((kname, j, op, other))
            if w is not None and v > w:
                out.append(f"{kname} access {j} ({op}): synthesised {v:g} wavefronts > {other} {w:g}")
    return out


def measured_table(recording: dict) -> str:
    """The recording as text: per kernel, access and instruction, the ncu wavefronts of each layout (the
    analyser's prediction in brackets where it differs)."""
    roles = ("synthesised", "best_atom", "no_swizzle", "padding")
    rows: dict = {}
    for r in recording.get("results", {}).values():
        _, v = measured(r)
        cell = "-" if v is None else f"{v:g}" + ("" if v == r["predicted"]["wavefronts"] else f" [{r['predicted']['wavefronts']}]")
        rows.setdefault((r["kernel"], r["access"], r["op"]), {})[r["layout"]] = cell
    head = ["kernel", "access", "instruction", *roles]
    body = [[k, a, op, *(cells.get(x, "-") for x in roles)] for (k, a, op), cells in rows.items()]
    widths = [max(len(h), *(len(b[j]) for b in body)) for j, h in enumerate(head)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(head, widths)).rstrip()]
    lines += ["  ".join(c.ljust(w) for c, w in zip(b, widths)).rstrip() for b in body]
    return "\n".join(lines)


def run(log=print) -> dict:
    """Compile, run every case under ncu, and return the recording (results, the counters, problems)."""
    import tempfile

    t0 = time.time()
    workdir = tempfile.mkdtemp(prefix="layoutalg_synth_")
    cubin = nvcc_cubin(cuda_source(), "synth_kernels", workdir)
    results = {}
    for c in cases():
        rec = {k: v for k, v in c.items()}
        try:
            _launch(cubin, c)  # runs, and every address is inside the buffer
            rec["status"] = "measured"
        except Exception as e:  # noqa: BLE001
            rec.update({"status": "error", "error": f"{type(e).__name__}: {str(e)[-400:]}"})
        results[c["name"]] = rec
    ncu = _run_ncu(cubin)
    for name, vals in ncu.get("per_case", {}).items():
        results[name]["ncu"] = vals
    problems = agreement(results) if "per_case" in ncu else [f"ncu: {ncu.get('error')}"]
    for rec in results.values():
        if rec["status"] == "measured":
            rec["status"] = "fail" if any(p.startswith(rec["name"]) for p in problems) else "pass"
        if rec["op"] == "cp.async16" and not ldgsts_aligned(rec["addresses"]):
            rec["note"] = ("LDGSTS into rows straddling 128-byte lines: the bank model is a lower bound "
                           "(st.shared.v4 at the same addresses matches it)")
    log(f"[synth] {len(results)} cases, {len(problems)} problems")
    for p in problems[:20]:
        log("   ", p)
    return {"results": results, "ncu": {k: v for k, v in ncu.items() if k != "per_case"}, "problems": problems,
            "seconds": {"total": time.time() - t0}}


def replay(recording: dict) -> list[str]:
    """The recording against the library now: same addresses and predictions for the recorded layouts, and the
    counters agree (see :func:`agreement`). A synthesised layout that changed since is compared by its wavefronts."""
    problems = []
    now = {c["name"]: c for c in cases()}
    results = {}
    for name, rec in recording.get("results", {}).items():
        c = now.get(name)
        if c is None:
            problems.append(f"{name}: no longer a case")
            continue
        if c["layout_text"] == rec["layout_text"]:
            if c["addresses"] != rec["addresses"]:
                problems.append(f"{name}: the library now gives other lane addresses than were measured")
        elif c["predicted"]["wavefronts"] > rec["predicted"]["wavefronts"]:
            problems.append(f"{name}: the layout is now {c['layout_text']} with {c['predicted']['wavefronts']} wavefronts, "
                            f"more than the {rec['predicted']['wavefronts']} measured for {rec['layout_text']}")
        results[name] = {**rec, "predicted": predict_text(rec)}
    return problems + agreement(results)


def predict_text(rec: dict) -> dict:
    """The analyser's prediction now for a recorded case's layout text and its kernel's access (what
    :func:`replay` compares the recorded counters with; tests replace it to show a wrong analyser is caught)."""
    from ..parse import parse
    from ..synth import kernel_accesses

    k = kernel_accesses(rec["kernel"])
    return _predict(parse(rec["layout_text"]), k.accesses[rec["access_index"]], rec["element_bytes"])


if __name__ == "__main__":  # child process under ncu
    if len(sys.argv) == 3 and sys.argv[1] == "--ncu-child":
        _ncu_child(sys.argv[2])
