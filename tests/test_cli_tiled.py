"""``layoutalg show --tiled-mma``: CuTe's print, the TV layouts, pictures, a tiled copy and its banks."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from layoutalg.cli import main


def test_show_tiled_mma(tmp_path, capsys):
    out = tmp_path / "mma.svg"
    cp = tmp_path / "copy.svg"
    rc = main(["show", "--tiled-mma", "SM80_16x8x16_F32F16F16F32_TN", "--atom-layout", "2x2x1", "--permutation",
               "32,32,16", "--copy", "A:SM75_U32x4_LDSM_N", "--banks", "(128,64):(64,1)", "-o", str(out),
               "--copy-output", str(cp), "-v"])
    text = capsys.readouterr().out
    assert rc == 0
    # CuTe's own print of this TiledMMA (tests/data/cute/tiled.json, case sm80_16x8x16_f16_2x2_t32x32x16)
    assert "ThrLayoutVMNK:  (32,2,2,1):(1,32,64,0)" in text and "PermutationMNK: (32,32,16)" in text
    assert "LayoutC_TV: ((4,8,2,2),((2,2),(1,2))):((64,1,16,256),((32,8),(0,512)))" in text
    assert "Tiler_MN:       (32,16)" in text
    assert "2048 wavefronts, ideal 256 (8-way bank conflict)" in text
    assert "lanes 0 and 1 both hit bank 0" in text
    ET.parse(out)
    ET.parse(cp)


def test_show_tiled_mma_window_and_errors(tmp_path, capsys):
    rc = main(["show", "--tiled-mma", "SM90_64x64x16_F32F16F16_SS", "--atom-layout", "(2,1,1):(1,0,0)",
               "--window", "0:8,0:8", "-o", str(tmp_path / "w.svg"), "-v"])
    assert rc == 0 and "(128,2,1,1):(1,128,0,0)" in capsys.readouterr().out
    # without -v, writing the picture prints one line
    rc = main(["show", "--tiled-mma", "SM90_64x64x16_F32F16F16_SS", "--atom-layout", "(2,1,1):(1,0,0)",
               "--window", "0:8,0:8", "-o", str(tmp_path / "w.svg")])
    out = capsys.readouterr().out
    assert rc == 0 and out.count("\n") == 1 and out.startswith(f"wrote {tmp_path / 'w.svg'} (")
    assert main(["show"]) == 2
    assert main(["show", "--tiled-mma", "SM80_16x8x16_F32F16F16F32_TN", "--copy", "Q:SM75_U32x4_LDSM_N"]) == 2
    assert main(["show", "--tiled-mma", "SM80_16x8x17_F32F16F16F32_TN"]) == 2
