"""The PTX ISA's figures rebuilt from the catalog, and the way out of a picture: :func:`scene_of` (the default
picture of an object, with the pictures higher modules register through :func:`register_scene`),
:func:`save` (SVG or PNG) and :func:`render_png`; the notebook pictures of the lower layers' objects
(:mod:`layoutalg.hooks`).
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from ..banks import BankReport
from ..composed import ComposedLayout
from ..errors import LayoutError, guarded
from ..hooks import register_svg
from ..layout import Layout
from .core import banks_scene, banks_svg, fragment_scene, fragment_svg, layout_scene, layout_svg, swizzle_scene, tv_scene
from .scene import Scene


# ---------------------------------------------------------------------------------------------
# The PTX ISA's figures
# ---------------------------------------------------------------------------------------------
#: Figure number -> what it shows (the PTX ISA's mma, wgmma and sparse-mma figures).
PTX_FIGURES: dict[int, str] = {
    46: "mma.m8n8k4 .f16 A, row-major",
    47: "mma.m8n8k4 .f16 A, column-major",
    48: "mma.m8n8k4 .f16 B, row-major",
    49: "mma.m8n8k4 .f16 B, column-major",
    50: "mma.m8n8k4 C/D, .ctype .f16",
    51: "mma.m8n8k4 C/D .f32, computations 1 and 2",
    52: "mma.m8n8k4 C/D .f32, computations 3 and 4",
    53: "mma.m8n8k4 .f64 A",
    54: "mma.m8n8k4 .f64 B",
    55: "mma.m8n8k4 .f64 C/D",
    140: "sparse mma.m16n8k128 .s4 A, columns 0-63",
    141: "sparse mma.m16n8k128 .s4 A, columns 64-127",
    142: "sparse mma.m16n8k128 .s4 B, rows 0-31",
    143: "sparse mma.m16n8k128 .s4 B, rows 32-63",
    144: "sparse mma.m16n8k128 .s4 B, rows 64-95",
    145: "sparse mma.m16n8k128 .s4 B, rows 96-127",
    156: "MN-major 128B swizzling (16-byte units)",
    157: "K-major 128B swizzling (16-byte units)",
    158: "MN-major 64B swizzling (16-byte units)",
    159: "K-major 64B swizzling (16-byte units)",
    160: "MN-major 32B swizzling (16-byte units)",
    161: "K-major 32B swizzling (16-byte units)",
    162: "MN-major interleaved (16-byte units)",
    163: "K-major interleaved (16-byte units)",
    164: "K-major 128B swizzling, tf32",
    165: "MN-major 128B swizzling, tf32",
    166: "K-major, no swizzling, tf32 (the PTX ISA's worked example)",
    167: "K-major, 32B swizzling, tf32 (the PTX ISA's worked example)",
    168: "MN-major, no swizzling, bf16 (the PTX ISA's worked example)",
    169: "MN-major, 32B swizzling, bf16 (the PTX ISA's worked example)",
    170: "MN-major, 64B swizzling, bf16 (the PTX ISA's worked example)",
}

_SWIZZLE_FIGS = {
    156: ("MN", 128),
    157: ("K", 128),
    158: ("MN", 64),
    159: ("K", 64),
    160: ("MN", 32),
    161: ("K", 32),
    162: ("MN", 0),
    163: ("K", 0),
}


@guarded
def ptx_figure(number: int) -> Scene:
    """ptx_figure(n): the PTX ISA's Figure n rebuilt from the catalog (see :data:`PTX_FIGURES`).

    Figures 146/147 (sparse metadata) are not reproduced: the catalog has the lanes that hold
    metadata, not a layout of the metadata bits.

    >>> ptx_figure(53).title
    'Figure 53: mma.m8n8k4 .f64 A'
    """
    if number not in PTX_FIGURES:
        extra = (
            " (sparse metadata figures are not reproduced: the catalog has no metadata layout)"
            if number in (146, 147)
            else ""
        )
        raise LayoutError(f"ptx_figure: figure {number} is not one of {sorted(PTX_FIGURES)}{extra}")
    title = f"Figure {number}: {PTX_FIGURES[number]}"
    from ..nvidia.ampere import mma

    if number <= 55:
        if number in (46, 47):
            F = mma.fragment("m8n8k4", "f16", "A", alayout="row" if number == 46 else "col")
        elif number in (48, 49):
            F = mma.fragment("m8n8k4", "f16", "B", blayout="row" if number == 48 else "col")
        elif number in (50, 51, 52):
            F = mma.fragment("m8n8k4", "f16", "C", ctype="f16" if number == 50 else "f32")
        else:
            F = mma.fragment("m8n8k4", "f64", {53: "A", 54: "B", 55: "C"}[number])
        batch = {51: (0, 1), 52: (2, 3)}.get(number, "all" if F.batch > 1 else 0)
        return fragment_scene(F, batch=batch, title=title)
    if number <= 145:
        if number <= 141:
            F = mma.sparse_fragment("m16n8k128", "s4", "A")
            lo = 0 if number == 140 else 32
            return fragment_scene(F, cols=(lo, lo + 32), title=title)
        F = mma.sparse_fragment("m16n8k128", "s4", "B")
        lo = 32 * (number - 142)
        return fragment_scene(F, rows=(lo, lo + 32), title=title)
    from ..nvidia.hopper import wgmma

    if number in _SWIZZLE_FIGS:
        major, sw = _SWIZZLE_FIGS[number]
        return swizzle_scene(
            wgmma.atom(major, sw, "bf16"), 2, title=title + f": atom {wgmma.atom(major, sw, 'bf16')}"
        )
    if number in (164, 165):
        a = wgmma.atom("K" if number == 164 else "MN", 128, "tf32")
        return swizzle_scene(a, 4, title=title + f": atom {a}")
    ex = wgmma.seed_examples()[number - 166]
    return swizzle_scene(
        ex.exact, {"tf32": 4, "bf16": 2}[ex.dtype], swizzle_unit="byte", title=f"{title}: {ex.exact}"
    )


# ---------------------------------------------------------------------------------------------
# Output
# ---------------------------------------------------------------------------------------------
#: class -> function(obj, **kwargs) -> Scene, filled by the picture modules above this one
_SCENES: dict[Any, Any] = {}


def register_scene(cls: type | str, draw: Any) -> None:
    """Make ``draw(obj, **kwargs) -> Scene`` the picture :func:`scene_of` (and :func:`save`) gives ``cls`` (a
    class, or its ``"module.QualName"`` when the provider should not import the class's module)."""
    _SCENES[cls] = draw


def scene_of(obj: Any, **kwargs: Any) -> Scene:
    """The default picture of ``obj``: Scene as is; Fragment -> fragment_scene; BankReport -> banks_scene;
    a registered class (TiledMMA, TiledCopy: :mod:`layoutalg.viz.tiled`) -> its picture; Layout / ComposedLayout /
    text -> layout_scene, or with ``tv=(M, N)`` -> tv_scene (the layout read as a TV layout on an M x N tile;
    a TV layout is never guessed)."""
    if isinstance(obj, Scene):
        if kwargs:
            raise LayoutError(f"scene_of: a Scene is drawn as it is; {sorted(kwargs)} would be ignored")
        return obj
    if "tv" in kwargs:  # an explicit TV layout: the tile with T/V labels (never guessed)
        tile = kwargs.pop("tv")
        if tile is not None:
            return tv_scene(obj, tile, **kwargs)
    for klass in type(obj).__mro__:  # pictures of higher layers (layoutalg.viz.tiled and .tmem register theirs)
        draw = _SCENES.get(klass) or _SCENES.get(f"{klass.__module__}.{klass.__qualname__}")
        if draw is not None:
            return draw(obj, **kwargs)
    if isinstance(obj, BankReport):
        return banks_scene(obj, **kwargs)
    if all(hasattr(obj, a) for a in ("layout", "codomain", "operand", "num_threads")):
        return fragment_scene(obj, **kwargs)
    return layout_scene(obj, **kwargs)


def render_png(obj: Any, dpi: int = 100, **kwargs: Any) -> np.ndarray:
    """The picture of ``obj`` rasterised with matplotlib's Agg at ``dpi``: an (H, W, 4) float array in [0, 1]."""
    fig = scene_of(obj, **kwargs).to_figure()
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    fig.set_dpi(dpi)
    canvas.draw()
    return np.asarray(canvas.buffer_rgba(), dtype=np.float64) / 255.0


@guarded
def save(obj: Any, path: str | os.PathLike, *, dpi: int = 100, **kwargs: Any) -> str:
    """save(obj, path): write the picture of ``obj`` as SVG or PNG, chosen by the suffix; returns the path.

    ``obj`` is a Scene, a matplotlib Figure, or anything :func:`scene_of` draws; keyword arguments go
    to the picture (``tv=(M, N)`` draws a layout as a TV layout, :func:`tv_scene`). SVG is written
    without matplotlib; PNG needs it.
    """
    path = os.fspath(path)
    suffix = os.path.splitext(path)[1].lower()
    if suffix not in (".svg", ".png"):
        raise LayoutError(f"save: {path!r} has suffix {suffix!r}; expected .svg or .png")
    if hasattr(obj, "savefig"):  # a matplotlib Figure
        obj.savefig(path, dpi=dpi)
        return path
    scene = scene_of(obj, **kwargs)
    if suffix == ".svg":
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(scene.to_svg())
    else:
        scene.to_figure().savefig(path, dpi=dpi)
    return path


# the notebook pictures of the lower layers' objects (their _repr_svg_ asks layoutalg.hooks)
register_svg(Layout, layout_svg)
register_svg(ComposedLayout, layout_svg)
register_svg(BankReport, banks_svg)
register_svg("layoutalg.nvidia.common.fragment.Fragment", fragment_svg)
