"""The CUDA C the GPU checks generate, and the helpers they share, checked on the CPU (no GPU in CI).

The wgmma kernels of :mod:`~layoutalg.gpu.wgmma_check`, :mod:`~layoutalg.gpu.tma_check` and
:mod:`~layoutalg.gpu.tiled_check` share one main loop (:func:`layoutalg.gpu.common.wgmma_mainloop`).
Two checks here: each kernel issues the wgmma the PTX ISA asks for its mode (shape, types, the
transpose immediates only for 16-bit types, one ``+f`` accumulator per D register), and the
sources are byte for byte the ones the harness generated at 71dcd90, before the shared main loop
replaced three copies of it: a harness change that alters what the GPU runs must change these
digests on purpose (and the recordings be made again). The ncu table reader and the exact
comparison of D that the checks share are checked on hand-written inputs.
"""

from __future__ import annotations

import hashlib
import os
import re

import numpy as np
import pytest

from layoutalg.gpu import bank_check, synth_check, tiled_check, tma_check, wgmma_check
from layoutalg.gpu.common import compare_exact, ncu_launches, wgmma_mainloop

#: sha256 of each generated source at 71dcd90 (the three wgmma copies, before wgmma_mainloop)
DIGESTS = {
    "wgmma": "14bb144dff3abef79f2655d55b6b8d0b1deb88e80a2a107b1298005205f59820",
    "tma": "98eac8e7d4dd323878f5df02d89f287ac9dbc88301df8e08f0748958b5260dff",
    "tiled": "cc26ed0f9924fb24861273e4d2f54bb3c6b38381bf0db60ba011e58fa9a0fdd0",
    "banks": "227a8f621b98fa5fef31bdcafdd431dc0ed0340a1d69676002d7a76a91ac8943",
    "synth": "9397287d5f13b8086351e0a40d858d0b4db0323fe1c0e6791695edb063c53fd0",
}
SOURCES = {"wgmma": wgmma_check.cuda_source, "tma": tma_check.kernel_source, "tiled": tiled_check.cuda_source,
           "banks": bank_check.cuda_source, "synth": synth_check.cuda_source}


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_generated_cuda_is_unchanged(name):
    assert hashlib.sha256(SOURCES[name]().encode()).hexdigest() == DIGESTS[name]


_WGMMA = re.compile(r'"wgmma\.mma_async\.sync\.aligned\.m64n(\d+)k(\d+)\.f32\.(\w+)\.(\w+) \{([^}]*)\}, '
                    r'%(\d+), %(\d+), p, 1, 1((?:, \d)*);')


def _kernels(src: str) -> dict[str, str]:
    """Kernel name -> its text, for every ``extern "C" __global__`` function of ``src``."""
    parts = re.split(r'extern "C" __global__ void (?:__launch_bounds__\(\d+\) )?(\w+)\(', src)
    return dict(zip(parts[1::2], parts[2::2]))


def _expect(text: str, n: int, k: int, dtype: str, trans: tuple[int, int] | None) -> None:
    (m,) = [x.groups() for x in _WGMMA.finditer(text)]
    nreg = n // 2
    assert (int(m[0]), int(m[1]), m[2], m[3]) == (n, k, dtype, dtype)
    assert m[4] == ", ".join(f"%{j}" for j in range(nreg))            # D: n/2 f32 registers per thread
    assert (int(m[5]), int(m[6])) == (nreg, nreg + 1)                  # then the two descriptors
    assert f"setp.ne.b32 p, %{nreg + 2}, 0;" in text                   # scale-d = (k-block != 0)
    assert m[7] == ("" if trans is None else f", {trans[0]}, {trans[1]}")
    assert text.count('"+f"(d[') == nreg and f"float d[{nreg}];" in text


def test_wgmma_kernels_issue_the_instruction_of_their_mode():
    """imm-trans-a/b exist only for .f16/.bf16 (PTX ISA, wgmma.mma_async): 1 for an MN-major operand."""
    ks = _kernels(wgmma_check.cuda_source())
    seen = set()
    for m in wgmma_check.modes() + wgmma_check.mixed_modes():
        ma, mb = m["major"], m.get("major_B", m["major"])
        name = f"wg_{m['dtype']}_{ma}_{mb}"
        trans = (int(ma == "MN"), int(mb == "MN")) if m["dtype"] in ("f16", "bf16") else None
        _expect(ks[name], m["N"], m["K"], m["dtype"], trans)
        seen.add(name)
    assert seen == set(ks)
    ks = _kernels(tma_check.kernel_source())
    for m in tma_check.e2e_modes():
        trans = (int(m["major"] == "MN"),) * 2 if m["dtype"] in ("f16", "bf16") else None
        _expect(ks[f"tma_wgmma_{m['dtype']}_{m['major']}"], m["N"], m["K"], m["dtype"], trans)
    hopper = _kernels(tiled_check.cuda_source())["hopper_step"]
    _expect(hopper, 64, 16, "f16", (0, 0))                             # SM90_64x64x16_F32F16F16_SS, K-major
    assert "da[wg * nk + s] + a_base" in hopper                        # each warpgroup its own A descriptors


def test_mainloop_names_the_callers_descriptors():
    loop = wgmma_mainloop(16, 8, "tf32", "K", "K", "da[s] + X", "db[s] + Y")
    assert "unsigned long long descA = da[s] + X;" in loop and "unsigned long long descB = db[s] + Y;" in loop
    _expect(loop, 16, 8, "tf32", None)
    assert loop.startswith("  float d[8];") and loop.endswith("  }")


def test_ncu_table_is_read_per_launch():
    text = ("==PROF== Connected to process 7\n"
            '"ID","Process ID","Kernel Name","Metric Name","Metric Unit","Metric Value"\n'
            '"0","7","k","l1tex__a.sum","","1,024"\n'
            '"0","7","k","l1tex__b.sum","","0"\n'
            '"1","7","k","l1tex__a.sum","","n/a"\n'
            '"2","7","k","l1tex__a.sum","","7.5"\n')
    assert ncu_launches(text) == {0: {"l1tex__a.sum": 1024.0, "l1tex__b.sum": 0.0}, 2: {"l1tex__a.sum": 7.5}}
    assert ncu_launches("==ERROR== no kernels were profiled") is None


def test_exact_comparison_counts_nan_as_a_mismatch():
    ref = np.arange(12.0).reshape(3, 4)
    got = ref.copy()
    got[0, 1], got[2, 3], got[1, 0] = np.nan, 12.5, 3.0
    r = compare_exact(got, ref, examples=2)
    assert (r["ok"], r["mismatched_elements"], r["max_abs_err"]) == (False, 3, 1.5)
    assert [e["element"] for e in r["examples"]] == [[0, 1], [1, 0]]
    assert compare_exact(ref, ref) == {"ok": True, "max_abs_err": 0.0, "mismatched_elements": 0, "examples": []}
    assert compare_exact(np.full((2, 2), np.nan), ref[:2, :2])["max_abs_err"] is None


def test_children_cache_their_bytecode_and_lanes_cover_every_check(monkeypatch):
    """The harness's speed-ups keep the checks: children write bytecode (the GPU image forbids it by default),
    and the two lanes of ``run_all(jobs=2)`` hold every check exactly once."""
    from layoutalg.gpu import common, harness

    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    env = common.child_env()
    assert "PYTHONDONTWRITEBYTECODE" not in env and env["PYTHONPYCACHEPREFIX"] == common.pycache_dir()
    assert env["PYTHONPATH"].split(os.pathsep)[0] == common.PACKAGE_ROOT
    assert sorted(c for lane in harness.LANES for c in lane) == sorted(harness.CHECKS)
