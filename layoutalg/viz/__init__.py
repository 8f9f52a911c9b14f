"""Pictures of layouts, tensor-core fragments, swizzled shared memory and bank conflicts.

Every picture is first built as a :class:`Scene` -- a list of labelled rectangles and texts
in pixel units -- and then written out by one of two back ends: :meth:`Scene.to_svg`
(plain Python, no dependency, used by ``_repr_svg_`` in notebooks) or
:meth:`Scene.to_figure` (a matplotlib ``Figure``, imported lazily; PNG output). One cell of a
grid is one element. The SVG is compact -- shared styles in one ``<style>``, one ``<path>`` per
fill colour holding the cells' rectangles, the labels as ``<tspan>`` s of one ``<text>`` per
label row; a grid that would pass :data:`SVG_MAX_BYTES` so, with more than :data:`LATTICE_CELLS`
cells of one size, is written in a lattice form (fills as a one-pixel-per-cell PNG scaled without smoothing, one path of grid lines, one
monospace text per label row) -- so that a picture of a 128 x 128 tile, its default 64 x 64 window
or the whole tile, stays under :data:`SVG_MAX_BYTES` (200 KB). :func:`svg_cells` reads the cells back from
the SVG, so a picture can be checked by reading it.

A 2x3 row-major layout, by hand: ``(2,3):(3,1)`` puts offset ``3r + c`` at row ``r``, column
``c``; the picture is the grid ``0 1 2 / 3 4 5``::

    >>> from layoutalg import Layout
    >>> svg = layout_svg(Layout((2, 3), (3, 1)))
    >>> [c[5] for c in sorted(svg_cells(svg), key=lambda c: (c[1], c[0]))]
    [['0'], ['1'], ['2'], ['3'], ['4'], ['5']]

What each picture shows:

- :func:`layout_scene`: a rank-2 layout as rows (mode 0) x columns (mode 1) of offsets,
  shaded by ``offset % 8`` like CuTe's ``print_latex``; other ranks are shown as one row
  (rank 1) or as mode 0 x (the remaining modes, flattened).
- :func:`fragment_scene`: an operand matrix in the PTX orientation (A is MxK, B is KxN,
  C/D is MxN) with each element labelled by the thread that holds it (``T5``) and its
  register element (``a3``), coloured by thread -- the style of the PTX ISA's fragment
  figures. :func:`ptx_figure` rebuilds the PTX ISA's Figures 46-55 (``mma.m8n8k4``), 140-145
  (sparse ``m16n8k128``) and 156-170 (wgmma shared-memory layouts) from the catalog.
- :func:`swizzle_scene`: shared memory as 128-byte lines of eight 16-byte chunks (banks
  ``4j .. 4j+3`` for chunk ``j``); each chunk is labelled and coloured by its *logical*
  16-byte chunk index within the 128-byte row before swizzling, as the PTX swizzle figures do.
- :func:`banks_scene`: a :class:`~layoutalg.banks.BankReport` as banks (columns) x
  wavefronts (rows), each cell naming the lanes served.

Large objects are cut to ``max_rows`` x ``max_cols`` cells (64 x 64 by default) and the title
says which part is shown.

The package: :mod:`.scene` (the Scene, its SVG and matplotlib back ends, colours, :func:`svg_cells`),
:mod:`.core` (the pictures above), :mod:`.output` (the PTX ISA's figures, :func:`scene_of`, :func:`save`,
:func:`render_png`, :func:`register_scene`), :mod:`.tiled` (TiledMMA / TiledCopy) and :mod:`.tmem` (tensor
memory); importing it registers every picture (:mod:`layoutalg.hooks`). matplotlib is imported only to
write a PNG.
"""

from __future__ import annotations

from . import tiled as tiled  # registers the pictures of TiledMMA / MMAAtom / TiledCopy
from . import tmem as tmem  # registers the picture of a TMEM copy atom
from .core import (
    MAX_SMEM_PICTURE as MAX_SMEM_PICTURE,  # public names of viz outside __all__, as before
    banks_scene,
    banks_svg,
    drawable_layout,
    fragment_scene,
    fragment_svg,
    layout_dims,
    layout_scene,
    layout_svg,
    layout_window,
    owners,
    swizzle_scene,
    swizzle_svg,
    tv_scene,
)
from .output import PTX_FIGURES, ptx_figure, register_scene, render_png, save, scene_of
from .scene import (
    CHUNK_COLORS,
    LATTICE_CELLS as LATTICE_CELLS,
    SVG_MAX_BYTES,
    THREAD_COLORS,
    WARP_BAND_COLORS,
    Scene,
    escape as escape,
    svg_cells,
    thread_color,
    warp_bands,
)

__all__ = [
    "Scene",
    "THREAD_COLORS",
    "WARP_BAND_COLORS",
    "thread_color",
    "warp_bands",
    "owners",
    "tv_scene",
    "CHUNK_COLORS",
    "layout_scene",
    "fragment_scene",
    "swizzle_scene",
    "banks_scene",
    "layout_svg",
    "fragment_svg",
    "swizzle_svg",
    "banks_svg",
    "ptx_figure",
    "PTX_FIGURES",
    "scene_of",
    "register_scene",
    "save",
    "render_png",
    "svg_cells",
    "SVG_MAX_BYTES",
    "drawable_layout",
    "layout_dims",
    "layout_window",
]
