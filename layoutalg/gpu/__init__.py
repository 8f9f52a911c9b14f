"""The hardware harness: measure the library's layouts on an NVIDIA GPU, record, replay on a CPU.

The checks, each a module:

* :mod:`~layoutalg.gpu.mma_check` -- every ``mma.sync`` / ``mma.sp`` instruction an sm_90 GPU
  runs, through Triton inline asm; measures which (lane, value) holds which element of A, B, D.
* :mod:`~layoutalg.gpu.smem_check` -- Gluon's ``NVMMASharedLayout`` / ``SwizzledSharedLayout``
  placements against the canonical wgmma tiles and ``Swizzle<B,M,S>``.
* :mod:`~layoutalg.gpu.wgmma_check` -- ``wgmma.mma_async`` end to end with shared-memory images
  and descriptors from :mod:`layoutalg.nvidia.hopper.wgmma`: every majorness x swizzle, mixed majorness,
  tiles starting inside their swizzle pattern (the base-offset field), plus negative controls.
* :mod:`~layoutalg.gpu.bank_check` -- shared-memory bank conflicts timed with ``clock64`` (and
  Nsight Compute counters where available) against :func:`layoutalg.banks.analyze`.
* :mod:`~layoutalg.gpu.tma_check` -- TMA tensor maps encoded by the driver and ``cp.async.bulk.tensor``
  placements against :mod:`layoutalg.nvidia.hopper.tma`, the driver's refusals, CuTe's ``make_tma_copy``, and
  TMA -> wgmma end to end (``python -m layoutalg.gpu --only tma``).
* :mod:`~layoutalg.gpu.synth_check` -- the layouts :func:`layoutalg.synth.synthesize_swizzle` finds for
  three kernels, beside no swizzle, the best CuTe atom and padding: ncu's shared-memory wavefronts.
* :mod:`~layoutalg.gpu.tiled_check` -- tiled GEMM steps (mma.sync fed by ldmatrix from a swizzled
  tile; two-warpgroup wgmma) executed exactly as :mod:`layoutalg.tiled` partitions them, and the
  ldmatrix partitions' bank conflicts under Nsight Compute against :func:`layoutalg.banks.analyze_copy`.

What the checks share lives below them in :mod:`~layoutalg.gpu.common` (nvcc, child processes, Nsight
Compute, recordings); :mod:`~layoutalg.gpu.harness` runs them all. The TMA check is split along its parts:
:mod:`~layoutalg.gpu.tma_cases`, :mod:`~layoutalg.gpu.tma_driver`, :mod:`~layoutalg.gpu.tma_cute`,
:mod:`~layoutalg.gpu.tma_e2e`, run by :mod:`~layoutalg.gpu.tma_check`.

Only the ``run`` functions import Triton, torch or CuPy (lazily); planning, analysis and
``replay`` are numpy only, so recordings are checked on any machine. ``run_all`` runs them all::

    python -m layoutalg.gpu            # writes tests/data/hardware/{mma,smem,wgmma,banks,tma,synth,tiled}.json
"""

from __future__ import annotations

__all__ = ["run_all", "gpu_available", "failures", "replay_all"]


def run_all(*args, **kwargs):
    """Run every check (see :func:`layoutalg.gpu.harness.run_all`)."""
    from .harness import run_all as _run_all

    return _run_all(*args, **kwargs)


def gpu_available() -> bool:
    """True iff torch sees a CUDA device (torch is imported here, lazily)."""
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


def failures(recordings: dict) -> list[str]:
    """The checks of ``run_all``'s result that neither passed nor were unsupported by the device."""
    return [
        f"{name}: {key}"
        for name, d in recordings.items()
        for key, r in d.get("results", {}).items()
        if r.get("status") not in ("pass", "unsupported")
    ]


def replay_all(directory: str | None = None) -> dict[str, list[str]]:
    """Replay the stored recordings against the library's current layouts: per check, what disagrees."""
    from . import bank_check, mma_check, smem_check, synth_check, tiled_check, tma_check, wgmma_check
    from .common import DEFAULT_DIR, load_recording

    out = {}
    for name, mod in (("mma", mma_check), ("smem", smem_check), ("wgmma", wgmma_check), ("banks", bank_check),
                      ("tma", tma_check), ("synth", synth_check), ("tiled", tiled_check)):
        rec = load_recording(name, directory or DEFAULT_DIR)
        out[name] = ["no recording"] if rec is None else mod.replay(rec)
    return out
