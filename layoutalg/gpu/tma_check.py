"""TMA on the hardware: tensor maps encoded by the driver, boxes copied by ``cp.async.bulk.tensor``.

Four checks, all planned on the CPU (numpy) and run by :func:`run` on an sm_90 GPU:

1. **Placement** (:func:`placement_cases`, :func:`layout_cases`): a global allocation whose every
   element holds its own index (encoded so that any element size identifies it, see
   :func:`encode_ids`) is viewed as a strided tensor that is *not* a multiple of the box; the driver
   encodes the tensor map, a kernel fills shared memory with a sentinel, issues the loads, waits on
   the mbarrier and copies shared memory out. Every shared slot then says which global element
   landed there, or that it was zero-filled (out of bounds) or left untouched. The library's
   prediction (:meth:`layoutalg.nvidia.hopper.tma.TensorMap.placement`) must match slot for slot.
   Raw cases sweep swizzle x {8, 16, 32}-bit types x box shapes; layout cases take the map and loads
   from :func:`layoutalg.nvidia.hopper.tma.make_tma_copy` (wgmma tiles, plain layouts, 3-D tensors).
2. **Refusals** (:func:`refusal_cases`): arguments that break one driver rule each, and their twins
   that do not; the driver's ``CUresult`` beside the library's :meth:`TensorMap.violations`.
3. **CuTe** (:func:`cute_cases`): a host program built with CuTe's headers calls ``make_tma_copy``;
   a shim in place of ``cuTensorMapEncodeTiled`` prints the arguments CuTe chose and (on the GPU
   machine) encodes them with the real driver; the library's arguments and encoded bytes must match.
4. **TMA -> wgmma** (:func:`e2e_modes`): A and B tiles loaded by TMA with the library's tensor maps,
   multiplied by ``wgmma`` with the library's descriptors, D exact; negative controls (a descriptor
   whose swizzle disagrees with the map) in child processes must give a wrong D, and
   :func:`layoutalg.nvidia.hopper.tma.check_wgmma` must have said so beforehand.

The driver is reached through ``ctypes`` (``libcuda.so.1``: no CuPy or cuda-python needed); if
``cuda.bindings`` is importable its ``cuTensorMapEncodeTiled`` is cross-checked byte for byte.
Kernels are CUDA C with inline PTX built by ``nvcc`` for sm_90a (:func:`layoutalg.gpu.common.nvcc_cubin`).
Recordings: ``tests/data/hardware/tma.json``, replayed by ``tests/test_gpu_replay_tma.py``.

The check lives in five modules, this one running it (and re-exporting their public names):
:mod:`~layoutalg.gpu.tma_cases` (ids, cases, the library's images), :mod:`~layoutalg.gpu.tma_driver`
(the driver through ctypes), :mod:`~layoutalg.gpu.tma_cute` (CuTe's ``make_tma_copy`` shim),
:mod:`~layoutalg.gpu.tma_e2e` (TMA -> wgmma). Placement cases run in child processes (a CUDA error
poisons a context): the cases that are expected to fault each in their own child, all children at once
and beside the parent's refusals, CuTe and TMA -> wgmma work. :func:`run_placement` and
:func:`run_refusals` take any object with :class:`Driver`'s methods (the tests pass a simulated GPU).

    >>> c = placement_cases()[0]
    >>> c["name"], c["map"].swizzle, len(c["loads"])
    ('p.UINT8.NONE.row64', 'NONE', 2)
    >>> int((predict(c) >= 0).sum()) > 0
    True
"""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import traceback

import numpy as np

from ..nvidia.hopper.tma import TensorMap
from .common import child_env, nvcc_cubin
from .tma_cases import (NAN_FILL, SENTINEL, UNDECODABLE, UNTOUCHED, ZERO_FILL, all_placement_cases, decode_ids,
                        encode_ids, fault_cases, image_hash, layout_cases, layout_image, placement_cases, predict,
                        refusal_cases, refusal_map, sm100_cases)
from .tma_cute import (compare_cute, cute_cases, cute_program, library_cute_args, parse_cute_output, replay_cute,
                       run_cute_cpu, run_cute_gpu)
from .tma_driver import Driver, bindings_encode, map_arg
from .tma_e2e import (E2E_NEGATIVES, e2e_execute, e2e_modes, e2e_operands, e2e_record, kernel_source, negative_child,
                      replay_e2e, run_negatives)

__all__ = [
    "placement_cases", "layout_cases", "refusal_cases", "cute_cases", "e2e_modes", "E2E_NEGATIVES",
    "encode_ids", "decode_ids", "predict", "image_hash", "cute_program", "parse_cute_output",
    "library_cute_args", "kernel_source", "run", "replay", "replay_placement", "replay_refusals", "replay_cute",
    "replay_e2e", "SENTINEL", "Driver", "all_placement_cases", "run_placement", "run_refusals", "e2e_operands",
    "e2e_execute", "run_cute_cpu", "compare_cute", "layout_image", "fault_cases", "sm100_cases", "refusal_map",
    "UNTOUCHED", "ZERO_FILL", "UNDECODABLE", "NAN_FILL",
]


def run_placement(drv: Driver, cubin: str, case: dict) -> dict:
    """Run one placement case on ``drv`` (a :class:`Driver`, or a simulated one) with the ``tma_place``
    kernel of ``cubin``: encode its map, fill the allocation with element ids, load, decode the shared
    image and compare it with :func:`predict` slot for slot; the case's record."""
    m: TensorMap = case["map"]
    nb = m.bytes_per_element
    rec: dict = {"name": case["name"], "kind": case["kind"], "map": m.driver_args(), "base": case["base"],
                 "loads": [[int(d), [int(x) for x in c]] for d, c in case["loads"]], "smem_bytes": case["smem_bytes"]}
    for k in ("layout", "global", "origin"):
        if k in case:
            rec[k] = case[k]
    passes = 2 if nb == 1 else 1
    images = []
    fn = drv.function(cubin, "tma_place")
    gbytes = case["alloc"] * nb
    gp = drv.alloc(gbytes + 64)
    out = drv.alloc(case["smem_bytes"])
    info = drv.alloc(16)
    coords = np.zeros((len(case["loads"]), 5), np.int32)
    for i, (_, c) in enumerate(case["loads"]):
        coords[i, : len(c)] = c
    dsts = np.array([d for d, _ in case["loads"]], np.uint32)
    cp, dp = drv.alloc(coords.nbytes), drv.alloc(dsts.nbytes)
    drv.htod(cp, coords.tobytes())
    drv.htod(dp, dsts.tobytes())
    try:
        args = m.driver_args(gp + case["base"])
        r, blob = drv.encode_tiled(args)
        rec["encode_result"] = r
        if r:
            rec.update(status="error", error=f"driver refused the map: {drv.error_name(r)}")
            return rec
        for p in range(passes):
            ids = encode_ids(case["alloc"], nb, p)
            raw = ids.astype({1: np.uint8, 2: np.uint16, 4: np.uint32}[nb]).tobytes()
            drv.htod(gp, raw)
            sent = {1: 0xFFFFFFFF, 2: 0xFFFFFFFF, 4: SENTINEL[4]}[nb]
            drv.launch(fn, [map_arg(blob), ctypes.c_uint64(cp), ctypes.c_uint64(dp), ctypes.c_int(len(dsts)),
                            ctypes.c_int(m.rank), ctypes.c_uint32(m.box_bytes), ctypes.c_uint32(case["smem_bytes"]),
                            ctypes.c_uint32(sent), ctypes.c_uint64(out), ctypes.c_uint64(info)],
                       case["smem_bytes"] + 1024)
            got = np.frombuffer(drv.dtoh(out, case["smem_bytes"]), {1: np.uint8, 2: np.uint16, 4: np.uint32}[nb])
            images.append(got.astype(np.int64))
        inf = np.frombuffer(drv.dtoh(info, 8), np.uint32)
        rec["smem_base"] = int(inf[0])
        if inf[1]:
            rec.update(status="error", error="mbarrier wait timed out: the transaction count never completed")
            return rec
    finally:
        for ptr in (gp, out, info, cp, dp):
            drv.free(ptr)
    if nb == 1:
        d0 = decode_ids(images[0], 1)
        d1 = decode_ids(images[1], 1)
        meas = np.where(d0 >= 0, d0 + 254 * np.maximum(d1, 0), d0)
        meas = np.where((d0 >= 0) & (d1 < 0), UNDECODABLE, meas)
    else:
        meas = decode_ids(images[0], nb, nan_fill=m.oob_fill != "NONE")
    rec["measured_sha256"] = image_hash(meas)
    try:
        pred = predict(case)
    except Exception as e:  # noqa: BLE001 - the library refuses a load the hardware ran: record both
        rec.update(status="refused", library_refusal=str(e), measured_elements=int((meas >= 0).sum()))
        return rec
    bad = np.nonzero(meas != pred)[0]
    rec["counts"] = {"slots": int(len(meas)), "elements": int((meas >= 0).sum()), "zero_fill": int((meas == ZERO_FILL).sum()),
                     "nan_fill": int((meas == NAN_FILL).sum()), "untouched": int((meas == UNTOUCHED).sum()),
                     "undecodable": int((meas == UNDECODABLE).sum())}
    if m.oob_fill != "NONE" and (meas == NAN_FILL).any():
        rec["nan_fill_bits"] = sorted({hex(int(v)) for v in images[0][meas == NAN_FILL]})[:4]
    rec["mismatches"] = int(len(bad))
    rec["first_mismatches"] = [{"slot": int(i), "hardware": int(meas[i]), "library": int(pred[i])} for i in bad[:6]]
    rec["sample"] = {str(int(i)): int(meas[i]) for i in np.linspace(0, len(meas) - 1, 24).astype(int)}
    if case["kind"] == "layout":
        li = layout_image(case)
        rec["layout_mismatches"] = int((li != meas).sum())
    rec["status"] = "pass" if not len(bad) and rec.get("layout_mismatches", 0) == 0 else "fail"
    return rec


def run_refusals(drv: Driver) -> dict:
    """Every :func:`refusal_cases` argument set encoded by ``drv``: the driver's verdict beside the
    library's :meth:`TensorMap.violations` (``agree``), and the cuda.bindings cross-check."""
    out = {}
    for c in refusal_cases():
        m = refusal_map(c)
        a = m.driver_args()
        r, blob = drv.encode_tiled(a)
        rules = sorted({v.rule for v in m.violations()})
        rec = {"args": a, "expect": c["expect"], "probe": c["probe"], "driver_result": r, "driver_error": drv.error_name(r),
               "library_rules": rules, "agree": (r != 0) == bool(rules)}
        b = bindings_encode(a)
        if b is not None:
            rec["bindings_result"] = b[0]
            rec["bindings_same_bytes"] = (b[1] == blob) if b[0] == 0 and r == 0 else None
            if b[0] == -1:
                rec["bindings_error"] = b[1].decode(errors="replace")
        out[c["name"]] = rec
    return out


def _placement_list(drv: Driver) -> tuple[list[dict], dict]:
    """The placement cases in the order children index them (the sm_100 ones the driver accepts), and
    the driver's verdicts on the sm_100 swizzles."""
    cases = placement_cases() + layout_cases()
    accepted = {}
    for s in sm100_cases():
        r, _ = drv.encode_tiled(s["map"].driver_args(4096))
        accepted[s["name"]] = r
    cases += [s for s in sm100_cases() if accepted[s["name"]] == 0] + fault_cases()
    return cases, accepted


def _placement_child(cubin: str, start: int, stop: int | None = None) -> None:
    """Run placement cases ``start`` (inclusive) to ``stop`` (exclusive; default: all) of :func:`_placement_list`
    (one RESULT line each); stop at the first CUDA error."""
    drv = Driver()
    cases, accepted = _placement_list(drv)
    print("SM100 " + json.dumps(accepted), flush=True)
    print(f"COUNT {len(cases)}", flush=True)
    stop = len(cases) if stop is None else min(stop, len(cases))
    for idx in range(start, stop):
        try:
            rec = run_placement(drv, cubin, cases[idx])
        except Exception as e:  # noqa: BLE001
            print(f"CRASH {idx} " + json.dumps({"name": cases[idx]["name"], "error": f"{type(e).__name__}: {str(e)[:300]}"}),
                  flush=True)
            return
        print(f"RESULT {idx} " + json.dumps(rec, default=str), flush=True)
    print("DONE", flush=True)


def _placement_range(cubin: str, start: int, stop: int | None, got: dict, sm100: dict, log=print) -> None:
    """Run cases ``start`` .. ``stop`` in child processes, restarting past a case that ends one (CUDA error)."""
    env = child_env()
    for _ in range(24):
        cmd = [sys.executable, "-m", "layoutalg.gpu.tma_check", "--placement", cubin, str(start)]
        if stop is not None:
            cmd.append(str(stop))
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
            stdout, stderr = p.stdout, p.stderr
        except subprocess.TimeoutExpired as e:
            stdout = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
            stderr = "timeout"
        nxt = None
        done = False
        for line in stdout.splitlines():
            if line.startswith("RESULT "):
                _, idx, js = line.split(" ", 2)
                rec = json.loads(js)
                got[rec["name"]] = rec
                nxt = int(idx) + 1
            elif line.startswith("CRASH "):
                _, idx, js = line.split(" ", 2)
                rec = json.loads(js)
                got[rec["name"]] = {"status": "error", **rec}
                nxt = int(idx) + 1
            elif line.startswith("SM100 "):
                sm100.update(json.loads(line[6:]))
            elif line == "DONE":
                done = True
        if done or (stop is not None and nxt is not None and nxt >= stop):
            break
        if stderr == "timeout":
            at = nxt if nxt is not None else start
            got[f"(timeout at case {at})"] = {"status": "error", "error": "placement child timed out"}
            start = at + 1
            continue
        if nxt is None:
            log(f"[tma placement] child made no progress at {start}: {stderr[-600:]}")
            got[f"(child at {start})"] = {"status": "error", "error": stderr[-600:]}
            break
        start = nxt


def _run_placements(cubin: str, n_cases: int, log=print) -> tuple[dict, dict]:
    """Every placement case (``n_cases`` of :func:`_placement_list`), in child processes all started at once:
    one for the cases before the fault cases, one per fault case (a CUDA error ends only its own child)."""
    got: dict = {}
    sm100: dict = {}
    n_faults = len(fault_cases())
    first_fault = n_cases - n_faults
    ranges = [(0, first_fault)] + [(i, i + 1) for i in range(first_fault, n_cases)]
    parts: list[tuple[dict, dict]] = [({}, {}) for _ in ranges]
    threads = [threading.Thread(target=_placement_range, args=(cubin, a, b, g, s, log))
               for (a, b), (g, s) in zip(ranges, parts)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for g, s in parts:  # in case order, as one child would have written them
        got.update(g)
        sm100.update(s)
    for c in fault_cases():
        rec = got.get(c["name"]) or {"status": "error", "error": "not run"}
        try:
            predict(c)
            refusal = None
        except Exception as e:  # noqa: BLE001
            refusal = str(e)
        faulted = rec.get("status") == "error" and "CUresult" in rec.get("error", "")
        rec.update(name=c["name"], kind="fault", map=c["map"].driver_args(), loads=[[int(d), list(x)] for d, x in c["loads"]],
                   hardware=rec.get("error", "ran") if faulted else "ran", library_refusal=refusal,
                   expect_fault=c["expect_fault"])
        if faulted:
            rec["status"] = "pass" if refusal else "fail"
        elif rec.get("status") in ("pass", "fail"):  # ran, and the library predicted it: as any placement
            pass
        elif rec.get("status") == "refused":
            rec["status"] = "fail"  # the hardware ran a load the library refuses
        got[c["name"]] = rec
    return got, sm100


def run(log=print, include: str | None = None) -> dict:
    """Compile, run placements (child processes, in the background), refusals, CuTe (``include``: a folder with
    CuTe's ``cute/`` and ``cutlass/`` headers; default the nvidia-cutlass wheel's, if installed), TMA -> wgmma."""
    t0 = time.time()
    if include is None:
        from ..interop import cutecpp

        include = next((d for d in cutecpp.include_dirs() if os.path.isdir(os.path.join(d, "cute"))), None)
    workdir = tempfile.mkdtemp(prefix="layoutalg_tma_")
    result: dict = {"seconds": {}}
    cute_thread = None
    cute_holder: dict = {}
    try:
        cubin = nvcc_cubin(kernel_source(), "tma_kernels", workdir)
    except Exception as e:  # noqa: BLE001
        return {"error": f"{type(e).__name__}: {e}", "seconds": {"total": time.time() - t0}}
    result["seconds"]["compile"] = time.time() - t0
    drv = Driver()
    result["driver_version"] = drv.version
    n_cases = len(_placement_list(drv)[0])
    place_holder: dict = {}

    def place_job() -> None:
        t = time.time()
        try:
            place_holder["got"] = _run_placements(cubin, n_cases, log)
        except Exception as e:  # noqa: BLE001
            place_holder["got"] = ({"(error)": {"status": "error", "error": f"{type(e).__name__}: {e}"}}, {})
        place_holder["seconds"] = time.time() - t

    place_thread = threading.Thread(target=place_job)
    place_thread.start()
    if include:
        def cute_job() -> None:
            try:
                cute_holder.update(run_cute_gpu(drv, workdir, include))
            except Exception as e:  # noqa: BLE001
                cute_holder["error"] = f"{type(e).__name__}: {e}\n{traceback.format_exc()[-800:]}"

        cute_thread = threading.Thread(target=cute_job)
        cute_thread.start()
    t = time.time()
    try:
        result["refusals"] = run_refusals(drv)
    except Exception as e:  # noqa: BLE001
        result["refusals"] = {"(error)": {"error": f"{type(e).__name__}: {e}\n{traceback.format_exc()[-800:]}"}}
    result["seconds"]["refusals"] = time.time() - t
    t = time.time()
    neg_holder: dict = {}
    th = threading.Thread(target=lambda: neg_holder.update(run_negatives(cubin)))
    th.start()
    e2e = {}
    for m in e2e_modes():
        try:
            ops = e2e_operands(m)
            rec = e2e_record(m, ops)
            rec.update(e2e_execute(drv, cubin, m, ops))
            rec["status"] = "pass" if rec["ok"] and rec["check_A"]["ok"] and rec["check_B"]["ok"] else "fail"
        except Exception as e:  # noqa: BLE001
            rec = {"name": m["name"], "status": "error", "error": f"{type(e).__name__}: {e}\n{traceback.format_exc()[-600:]}"}
        e2e[m["name"]] = rec
    result["e2e"] = e2e
    th.join()
    result["negatives"] = neg_holder
    result["seconds"]["e2e"] = time.time() - t
    place_thread.join()
    placements, sm100 = place_holder["got"]
    result["placement"] = placements
    result["sm100_encode"] = sm100
    result["seconds"]["placement"] = place_holder["seconds"]
    if cute_thread is not None:
        cute_thread.join()
        result["cute"] = cute_holder
    result["seconds"]["total"] = time.time() - t0
    return result


# --- replay (CPU) --------------------------------------------------------------------------------
def replay_placement(recording: dict, cases: dict | None = None) -> list[str]:
    """Recorded placements the library no longer predicts: each recorded image's fingerprint must be the
    fingerprint of the library's current prediction for the same case (and its map and loads the same)."""
    cases = cases or all_placement_cases(lenient=True)
    problems = []
    for name, rec in recording.get("placement", {}).items():
        if rec.get("kind") == "fault" and rec.get("hardware", "ran") != "ran":
            c = cases.get(name)
            try:
                predict(c) if c else None
                problems.append(f"{name}: the hardware faulted ({rec.get('hardware')}) but the library accepts the load")
            except Exception as e:  # noqa: BLE001
                if "[box_start_align]" not in str(e) and "[smem_address_align]" not in str(e):
                    problems.append(f"{name}: the library refuses for another reason: {e}")
            continue
        if rec.get("status") != "pass":
            problems.append(f"{name}: recorded status {rec.get('status')}: {rec.get('error', rec.get('first_mismatches'))}")
            continue
        c = cases.get(name)
        if c is None:
            problems.append(f"{name}: no such case in the library any more")
            continue
        if "error" in c:
            problems.append(f"{name}: the library no longer derives this case: {c['error']}")
            continue
        if c["map"].driver_args() != rec["map"]:
            problems.append(f"{name}: tensor map {c['map'].driver_args()} differs from the recorded {rec['map']}")
        if [[int(d), [int(x) for x in cc]] for d, cc in c["loads"]] != rec["loads"]:
            problems.append(f"{name}: loads differ from the recorded ones")
        pred = predict(c)
        if image_hash(pred) != rec["measured_sha256"]:
            diff = [k for k, v in rec["sample"].items() if int(pred[int(k)]) != v]
            problems.append(f"{name}: the library's placement differs from the H100's (sampled slots differing: {diff[:6]})")
    return problems


def replay_refusals(recording: dict) -> list[str]:
    """Each recorded driver verdict must be the library's: refused iff :meth:`TensorMap.violations` is non-empty."""
    problems = []
    cases = {c["name"]: c for c in refusal_cases()}
    for name, rec in recording.get("refusals", {}).items():
        c = cases.get(name)
        if c is None:
            problems.append(f"{name}: no such refusal case")
            continue
        m = refusal_map(c)
        rules = sorted({v.rule for v in m.violations()})
        refused = rec["driver_result"] != 0
        if refused != bool(rules):
            problems.append(f"{name}: driver {'refused' if refused else 'accepted'} ({rec['driver_error']}) but the library "
                            f"finds violations {rules}")
        if not c["probe"] and c["expect"] is not None and c["expect"] not in rules:
            problems.append(f"{name}: the library does not name rule {c['expect']} (it names {rules})")
    return problems


def replay(recording: dict) -> list[str]:
    """Everything in a TMA recording the library no longer reproduces (placements, refusals, CuTe, TMA -> wgmma)."""
    return replay_placement(recording) + replay_refusals(recording) + replay_cute(recording) + replay_e2e(recording)


if __name__ == "__main__":  # child processes
    if len(sys.argv) == 4 and sys.argv[1] == "--negative":
        negative_child(sys.argv[2], sys.argv[3])
    elif len(sys.argv) in (4, 5) and sys.argv[1] == "--placement":
        _placement_child(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]) if len(sys.argv) == 5 else None)
    elif len(sys.argv) >= 3 and sys.argv[1] == "--run":
        from .common import environment, write_recording

        data = run(include=sys.argv[3] if len(sys.argv) > 3 else None)
        print(json.dumps({k: v for k, v in data.items() if k == "seconds"}))
        write_recording("tma", data, environment(), sys.argv[2])
