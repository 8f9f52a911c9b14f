"""The atom registry (layoutalg.registry) and the NVIDIA generation folders behind it, with the old paths."""

from __future__ import annotations

import functools
import importlib
import os
import pathlib
import subprocess
import sys

import pytest

from layoutalg import LayoutError, registry
from layoutalg.layout import Layout
from layoutalg.nvidia import aliases, atoms
from layoutalg.tiled import CopyAtom, MMAAtom, make_tiled_mma


ROOT = pathlib.Path(__file__).resolve().parents[1]


def _run(code: str) -> subprocess.CompletedProcess:
    """``code`` in a fresh interpreter importing this checkout's layoutalg."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT)


@pytest.mark.parametrize("name, arch, label", [
    ("SM80_16x8x16_F32F16F16F32_TN", "sm80", "mma.sync"),
    ("SM70_8x8x4_F32F16F16F32_NT", "sm80", "mma.sync"),
    ("SM80_SPARSE_16x8x32_F32F16F16F32_TN", "sm80", "mma.sync"),
    ("SM90_64x128x16_F32BF16BF16_SS", "sm90", "wgmma"),
    ("SM90_64x64x32_F32E4M3E4M3_RS_TN", "sm90", "wgmma"),
    ("SM100_MMA_F16BF16_SS<bf16,bf16,float,128,256,K,K>", "sm100", "tcgen05.mma"),
])
def test_mma_lookup_across_generations(name: str, arch: str, label: str) -> None:
    atom = registry.mma_atom(name)
    assert isinstance(atom, MMAAtom)
    assert atom == atoms.mma_atom(name)  # the NVIDIA facade answers the same
    assert name in registry.atom_names("mma", vendor="nvidia", arch=arch)
    fam = [f for f in registry.families("mma", "nvidia") if f.build(f.spelling(name)) is not None]
    assert [(f.arch, f.label) for f in fam] == [(arch, label)]  # exactly one family claims a name


@pytest.mark.parametrize("name, arch", [
    ("SM75_U32x4_LDSM_N", "sm80"), ("SM80_CP_ASYNC_CACHEALWAYS<uint128_t>", "sm80"),
    ("UniversalCopy<uint64_t>", "generic"), ("SM90_U16x8_STSM_T", "sm90"), ("SM100_TMEM_LOAD_32dp32b4x", "sm100"),
])
def test_copy_lookup_across_generations(name: str, arch: str) -> None:
    atom = registry.copy_atom(name, "f16" if arch != "sm100" else "f32")
    assert isinstance(atom, CopyAtom)
    assert atom == atoms.copy_atom(name, "f16" if arch != "sm100" else "f32")
    assert name in registry.atom_names("copy", arch=arch)


def test_copy_lookup_normalises_and_uses_the_natural_value_type() -> None:
    assert registry.copy_atom(" cute::SM75_U32x4_LDSM_N ") == atoms.copy_atom("SM75_U32x4_LDSM_N")
    assert registry.copy_atom("SM100_UTCCP_128dp256bit_1cta").value_type == "b32"


def test_unknown_names_raise_with_close_names() -> None:
    with pytest.raises(LayoutError, match=r"unknown mma atom .*close names: SM80_16x8x16_F32F16F16F32_TN"):
        registry.mma_atom("SM80_16x8x16_F32F16F16F32_TM")
    with pytest.raises(LayoutError, match="unknown copy atom 'SM75_U32x3_LDSM_N'.*close names: SM75_U32x"):
        registry.copy_atom("SM75_U32x3_LDSM_N")
    with pytest.raises(LayoutError, match="must be a str"):
        registry.mma_atom(["SM80_16x8x16_F32F16F16F32_TN"])  # type: ignore[arg-type]
    # a name a family recognises but cannot build: that family's reason
    with pytest.raises(LayoutError, match="K = 16"):
        registry.mma_atom("SM90_64x64x32_F32F16F16_SS")
    # the facade keeps its NVIDIA wording
    with pytest.raises(LayoutError, match="not an atom name like"):
        atoms.mma_atom("SM80_16x8x16_F32F16F16F32")
    with pytest.raises(LayoutError, match="unknown copy atom .*; known: SM75_U32x1_LDSM_N"):
        atoms.copy_atom("SM75_U32x3_LDSM_N")


def test_names_listing() -> None:
    nv = registry.atom_names("mma", vendor="nvidia", arch=("sm80", "sm90"))
    assert nv == atoms.mma_atom_names()
    assert set(atoms.copy_atom_names()) <= set(registry.atom_names("copy", vendor="nvidia"))
    amd = registry.atom_names("mma", vendor="amd")
    assert "v_mfma_f32_32x32x8_f16" in amd and "v_wmma_f32_16x16x16_f16" in amd
    assert {f.arch for f in registry.families(vendor="amd")} == {"cdna1", "cdna2", "cdna3", "cdna4", "rdna3", "rdna4", "gfx1250"}
    assert {f.arch for f in registry.families(vendor="nvidia")} == {"sm80", "sm90", "sm100", "sm103", "sm120", "generic"}
    assert all(f.vendor == "nvidia" for f in registry.families(vendor="nvidia"))


def test_amd_atoms_through_the_registry() -> None:
    """AMD's mnemonics, in AMD's spellings, are atoms wherever a name is taken (the "amd" provider)."""
    atom = registry.mma_atom("V_MFMA_F32_32X32X8F16")
    assert atom.shape_mnk == (32, 32, 8) and atom.num_threads == 64
    assert str(atom.layout_c_tv) == "((32,2),(4,4)):((32,4),(1,8))"
    assert make_tiled_mma("v_mfma_f32_16x16x16_f16", (2, 2, 1)).tile_size_mnk == (32, 32, 16)
    assert registry.mma_atom("v_wmma_f32_16x16x16_f16", vendor="amd").num_threads == 32
    with pytest.raises(LayoutError, match="takes no options"):
        registry.mma_atom("v_mfma_f32_32x32x8_f16", ctype="f16")
    with pytest.raises(LayoutError, match="unknown mma atom"):
        registry.mma_atom("v_mfma_f32_33x32x8_f16")


def test_make_tiled_mma_reads_names_through_the_registry() -> None:
    t = make_tiled_mma("SM90_64x64x16_F32F16F16_SS")
    assert t.atom == registry.mma_atom("SM90_64x64x16_F32F16F16_SS")
    with pytest.raises(LayoutError, match="unknown mma atom"):
        make_tiled_mma("NOT_AN_ATOM")


def test_a_generation_registers_a_family() -> None:
    """What an AMD generation will do: describe its family and register it; lookups then find it."""
    seen: list[str] = []
    tv = Layout((64, 4), (1, 64))

    def build(name: str, **kw: object) -> MMAAtom | None:
        seen.append(name)
        if name != "V_MFMA_F32_16X16X4F32":
            return None
        return MMAAtom(name, (16, 16, 4), Layout(64), Layout((64, 1), (1, 0)), Layout((64, 1), (1, 0)), tv,
                       ("f32", "f32", "f32", "f32"))

    fam = registry.AtomFamily("amd-test", "cdna3", "mma", "mfma", lambda: ("V_MFMA_F32_16X16X4F32",), build,
                              normalise=lambda n: n.strip().upper())
    registry.register(fam)
    try:
        assert fam in registry.families("mma", vendor="amd-test", arch="cdna3")
        assert registry.mma_atom(" v_mfma_f32_16x16x4f32 ").shape_mnk == (16, 16, 4)
        assert registry.atom_names("mma", vendor="amd-test") == ("V_MFMA_F32_16X16X4F32",)
        assert registry.find_atom("mma", "SM80_16x8x16_F32F16F16F32_TN", vendor="amd-test") is None
        registry.register(fam)  # registering again replaces, never duplicates
        assert len(registry.families(vendor="amd-test")) == 1
    finally:
        registry.unregister("amd-test", "mfma")
    assert registry.families(vendor="amd-test") == ()
    with pytest.raises(LayoutError):
        registry.AtomFamily("x", "y", "load", "z", tuple, build)  # type: ignore[arg-type]


def test_providers_load_lazily() -> None:
    calls: list[int] = []
    registry.add_provider("lazy-test", lambda: calls.append(1))
    try:
        registry.families(vendor="nvidia")
        assert calls == []  # another vendor's lookup does not load it
        registry.families(vendor="lazy-test")
        registry.families(vendor="lazy-test")
        assert calls == [1]  # loaded once
    finally:
        registry.remove_provider("lazy-test")


#: what a fresh interpreter sees: ``import layoutalg`` alone (line 1: the vendor modules it loaded), then the old
#: module paths imported before any other vendor module (line 2: ok). One child for both tests (a Python start
#: and the package import are ~1.5 CPU-s): the second part starts from the state the first checks, which is a
#: fresh interpreter's after ``import layoutalg`` (what ``import layoutalg.nvidia.x`` first does anyway).
FRESH = ("import sys, layoutalg\n"
         "print(sorted(m for m in sys.modules if m.startswith(('layoutalg.nvidia', 'layoutalg.amd'))))\n"
         "import layoutalg.nvidia.blackwell.umma_smem, layoutalg.nvidia.blackwell.umma_smem as n\n"
         "from layoutalg.nvidia.blackwell.tmem_accum import umma_accumulator\n"
         "from layoutalg.nvidia import mma\n"
         "import layoutalg.nvidia.blackwell.tmem_accum as ta, layoutalg.nvidia.ampere.mma as m\n"
         "import layoutalg\n"
         "assert layoutalg.nvidia.blackwell.umma_smem is n and umma_accumulator is ta.umma_accumulator and mma is m\n"
         "assert layoutalg.nvidia.hopper.wgmma.descriptor_from_layout.__module__ == 'layoutalg.nvidia.hopper.wgmma'\n"
         "print('ok')\n")


@functools.cache
def _fresh() -> tuple[list[str], str]:
    """The lines ``FRESH`` printed in a fresh interpreter, and its stderr."""
    out = _run(FRESH)
    return out.stdout.splitlines(), out.stderr


def test_import_layoutalg_stays_lazy() -> None:
    lines, err = _fresh()
    assert lines[:1] == ["[]"], err


@pytest.mark.parametrize("old", sorted(aliases.OLD_PATHS))
def test_old_module_paths_are_the_same_module_objects(old: str) -> None:
    new = f"layoutalg.nvidia.{aliases.OLD_PATHS[old]}.{old}"
    mod = importlib.import_module(new)
    assert importlib.import_module(f"layoutalg.nvidia.{old}") is mod
    assert sys.modules[f"layoutalg.nvidia.{old}"] is mod
    import layoutalg.nvidia as nv

    assert getattr(nv, old) is mod
    assert aliases.new_path(f"layoutalg.nvidia.{old}") == new
    assert old in dir(nv)


def test_old_paths_in_a_fresh_interpreter() -> None:
    """``import layoutalg.nvidia.<old>`` and ``from layoutalg.nvidia.<old> import X`` before any other vendor module
    (``FRESH``'s second part)."""
    lines, err = _fresh()
    assert lines[1:] == ["ok"], err


def test_unknown_old_names_are_not_invented() -> None:
    assert aliases.new_path("layoutalg.nvidia.nothing") is None
    assert aliases.new_path("layoutalg.mma") is None
    with pytest.raises(ImportError):
        importlib.import_module("layoutalg.nvidia.nothing")
