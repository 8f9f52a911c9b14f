"""The TMA harness on a real GPU (skipped cleanly without one): a few placements, a refusal, one TMA -> wgmma tile."""

from __future__ import annotations

import ctypes
import shutil

import pytest

try:
    ctypes.CDLL("libcuda.so.1")
    _HAVE_DRIVER = shutil.which("nvcc") is not None
except OSError:
    _HAVE_DRIVER = False

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not _HAVE_DRIVER, reason="needs the CUDA driver and nvcc")]


@pytest.fixture(scope="module")
def rig(tmp_path_factory):
    from layoutalg.gpu import tma_check
    from layoutalg.gpu.common import nvcc_cubin

    drv = tma_check.Driver()
    maj = ctypes.c_int()
    drv.lib.cuDeviceGetAttribute(ctypes.byref(maj), 75, 0)  # CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
    if maj.value < 9:
        pytest.skip("needs an sm_90 GPU")
    return drv, nvcc_cubin(tma_check.kernel_source(), "tma_kernels", str(tmp_path_factory.mktemp("tma")))


@pytest.mark.parametrize("name", ["p.FLOAT16.128B.row16", "p.UINT8.64B.tall", "l.bf16.MN.sw128.128x32"])
def test_placement_on_device(rig, name):
    from layoutalg.gpu import tma_check

    drv, cubin = rig
    rec = tma_check.run_placement(drv, cubin, tma_check.all_placement_cases()[name])
    assert rec["status"] == "pass", rec


def test_driver_refuses_what_the_rules_refuse(rig):
    from layoutalg.gpu import tma_check

    drv, _ = rig
    rec = tma_check.run_refusals(drv)
    assert all(r["agree"] for r in rec.values())


def test_tma_to_wgmma_on_device(rig):
    from layoutalg.gpu import tma_check

    drv, cubin = rig
    m = next(x for x in tma_check.e2e_modes() if x["name"] == "bf16.MN.sw64")
    assert tma_check.e2e_execute(drv, cubin, m, tma_check.e2e_operands(m))["ok"]
