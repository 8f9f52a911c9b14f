"""Write the notebooks of notebooks/ from the cell sources below and execute them, keeping outputs.

Run ``python notebooks/build_notebooks.py`` after changing a notebook's cells here (the .ipynb files
are generated; edit this file, not them). ``tests/test_notebooks.py`` executes every notebook top to
bottom in CI.
"""

from __future__ import annotations

import pathlib
import sys

import nbformat
from nbclient import NotebookClient

HERE = pathlib.Path(__file__).resolve().parent

NOTEBOOKS: dict[str, list[tuple[str, str]]] = {}


def nb(name: str, *cells: tuple[str, str]) -> None:
    NOTEBOOKS[name] = list(cells)


def md(text: str) -> tuple[str, str]:
    return ("markdown", text.strip("\n"))


def code(text: str) -> tuple[str, str]:
    return ("code", text.strip("\n"))


# --------------------------------------------------------------------------------------------------
nb(
    "01_algebra_tour.ipynb",
    md("""
# The layout algebra, a tour

A layout is a function from coordinates to offsets, written `Shape:Stride`. This notebook walks
through the operations a CuTe user reaches for, with pictures: every `Layout` draws itself.
"""),
    code("""
import layoutalg as la
from layoutalg import Layout, parse

L = parse("(4,8):(8,1)")      # a 4x8 row-major matrix
print(L, "size", L.size(), "cosize", L.cosize())
L                             # a rank-2 layout shows as its grid of offsets
"""),
    md("""
Index `i` is split colexicographically (mode 0 fastest): `L(5)` is `L(1, 1)` = `1*8 + 1*1`.
"""),
    code("""
L(5), L(1, 1), L.table()[:8].tolist()
"""),
    md("""
## Coalesce and composition

`coalesce` keeps the function and merges modes. `composition(A, B)` is the function `A(B(i))`;
here `B` re-reads the 4x8 row-major matrix as an 8x4 column-major one (a transpose of the index
space).
"""),
    code("""
print(la.coalesce(parse("(2,(2,4)):(16,(8,1))")))
T = la.composition(L, Layout((8, 4), (4, 1)))
print(T)
T
"""),
    md("""
Composition is functional, or it refuses: `((2,6,6),6):((6,2,8),0) o 3:1` has no layout answer
(pycute returns a wrong one of size 2).
"""),
    code("""
try:
    la.composition(parse("((2,6,6),6):((6,2,8),0)"), Layout(3, 1))
except la.LayoutError as e:
    print("LayoutError:", e)
"""),
    md("""
## Complement and divide

`complement(B, n)` enumerates the "rest" of `B` up to `n`; `logical_divide(A, B)` is
`A o (B, complement(B, size(A)))`: mode 0 is the tile, mode 1 iterates over the tiles.
"""),
    code("""
B = Layout(4, 2)
print(la.complement(B, 24))
D = la.logical_divide(parse("(4,2,3):(2,1,8)"), B)
print(D)
la.zipped_divide(parse("(8,16):(16,1)"), (Layout(2, 1), Layout(4, 1)))
"""),
    md("""
## Products

`blocked_product` repeats a block over a tiler; `raked_product` interleaves the repeats.
"""),
    code("""
block = parse("(2,5):(5,1)")
tiler = parse("(3,4):(1,3)")
print(la.blocked_product(block, tiler))
la.blocked_product(block, tiler)
"""),
    code("""
la.raked_product(block, tiler)
"""),
    md("""
## Inverses

`right_inverse(L)` undoes `L` from the right; `left_inverse` from the left (for injective `L`).
"""),
    code("""
R = la.right_inverse(L)
print(R, [L(R(i)) for i in range(8)])
Li = la.left_inverse(L)
print(Li, all(Li(L(i)) == i for i in range(L.size())))
"""),
)

# --------------------------------------------------------------------------------------------------
nb(
    "02_swizzles_and_wgmma.ipynb",
    md("""
# Swizzles, the canonical wgmma layouts, and their descriptors

The PTX ISA gives the shared-memory layouts a `wgmma` operand may have as CuTe layouts with
parameters `T, m, k, LBO, SBO`, and five worked examples. layoutalg writes them down, parses the
ISA's own spelling, and derives the 64-bit descriptor from a layout.
"""),
    code("""
from layoutalg import Swizzle
from layoutalg.nvidia.hopper import wgmma

sw = Swizzle(3, 4, 3)              # the 128B swizzle, on byte addresses
print(sw, [sw(a) for a in (0, 16, 128, 144, 1024 + 128)])
print(sw.to_elements(2))           # the same permutation on 2-byte element offsets
"""),
    md("""
## The canonical forms, symbolically

With no parameters given, `canonical_layout` returns the ISA's table entry, in the ISA's spelling.
"""),
    code("""
for major in ("K", "MN"):
    for swz in (0, 32, 64, 128):
        print(f"{major:>2} {swz:>3}B  ", wgmma.canonical_layout(major, swz).ptx)
"""),
    code("""
C = wgmma.canonical_layout("K", 0)
print(C.size(), "elements;", C.subs({"T": 4, "m": 2, "k": 2, "SBO": 32, "LBO": 64}).ptx)
"""),
    md("""
## The ISA's five worked examples, derived

Each exact layout, as the ISA spells it, goes through `descriptor_from_layout`; the derived
`T, m, k, LBO, SBO` and encodings stand beside the ISA's numbers. Figure 167 is not injective as
printed (see docs/wgmma.md); its encodings are still those of the slice one instruction reads.
"""),
    code("""
for ex in wgmma.seed_examples():
    same = "agrees" if ex.agrees else "DIFFERS"
    print(f"{ex.figure}: {ex.title}")
    print("   exact  :", ex.exact)
    print("   ISA    :", {k: ex.seed[k] for k in ('T', 'm', 'k', 'LBO', 'SBO', 'LBO_encoded', 'SBO_encoded') if k in ex.seed})
    print("   derived:", {k: ex.derived.get(k) for k in ('T', 'm', 'k', 'LBO', 'SBO', 'LBO_encoded', 'SBO_encoded')}, same)
"""),
    md("""
## A real operand tile

A 64x64 bf16 K-major tile with the 128-byte swizzle, built from CuTe's `Layout_K_SW128_Atom` with
`tile_to_shape`, its descriptor, and the start-address steps of a `m64n64k16` mainloop.
"""),
    code("""
t = wgmma.tile("K", 128, "bf16", (64, 64))
d = wgmma.descriptor_from_layout(t, "bf16")
print(t)
print(d.descriptor, hex(d.descriptor.encode()))
print([kb.offset_bytes for kb in wgmma.k_block_descriptors(t, "bf16", instruction="m64n64k16")])
"""),
    code("""
from layoutalg import viz
viz.swizzle_scene(t, 2)
"""),
)

# --------------------------------------------------------------------------------------------------
nb(
    "03_fragments_and_proofs.ipynb",
    md("""
# mma fragments, and proving a PTX formula

"Which lane holds which element?" Every fragment in the catalog is a TV layout
`(thread, value) -> element`, proven equal to the formula the PTX ISA prints for it. Here we do
it by hand for the ISA's `mma.m8n8k4` (Figures 46-55) and sparse `m16n8k128`.
"""),
    code("""
import sympy

from layoutalg import verify
from layoutalg.nvidia.ampere import mma
from layoutalg.symbolic import bitand, shr

lane, i = sympy.symbols("lane i", integer=True, nonnegative=True)
A = mma.fragment("m8n8k4", "f16", "A", alayout="row")
print(A)
A
"""),
    md("""
The ISA: `row = %laneid % 4` if `%laneid < 16`, else `(%laneid % 4) + 4`; `col = i`.
"""),
    code("""
row = sympy.Piecewise((lane % 4, lane < 16), (lane % 4 + 4, True))
v = verify(A, (row, i), (lane, i))
print(bool(v), v.method, v)
"""),
    md("""
A wrong formula -- `+ 2` instead of `+ 4` -- is caught, with the first input where it differs.
"""),
    code("""
wrong = sympy.Piecewise((lane % 4, lane < 16), (lane % 4 + 2, True))
bad = verify(A, (wrong, i), (lane, i))
print(bool(bad), bad.counterexample)
"""),
    md("""
The f32 accumulator of `m8n8k4` with its bit formula:
`row = X (+4 for lanes >= 16)`, `X = (%laneid & 0b1) + (i & 0b10)`,
`col = (i & 0b100) + (%laneid & 0b10) + (i & 0b1)`.
"""),
    code("""
Cf = mma.fragment("m8n8k4", "f16", "C", ctype="f32")
X = bitand(lane, 1) + bitand(i, 2)
rowC = sympy.Piecewise((X, lane < 16), (X + 4, True))
colC = bitand(i, 4) + bitand(lane, 2) + bitand(i, 1)
print(verify(Cf, (rowC, colC), (lane, i)))
"""),
    md("""
## Sparse `m16n8k128` (Figures 140-147)

The A fragment is a layout over the compressed matrix; `column_range` gives the ISA's
`firstcol .. lastcol` of the uncompressed one.
"""),
    code("""
S = mma.sparse_fragment("m16n8k128", "u4", "A")
print(S)
groupID, tig = shr(lane, 2), lane % 4
rowS = sympy.Piecewise((groupID, (i < 8) | ((i >= 16) & (i < 24))), (groupID + 8, True))
firstcol = sympy.Piecewise((tig * 16, i < 16), (tig * 16 + 64, True))
print(verify(S, (rowS, firstcol, firstcol + 15), (lane, i)))
S
"""),
    md("""
## Partitioning a CTA tile

Tile the `m16n8k16` accumulator over a 64x64 C tile with 2x2 warps: which elements does a thread
hold?
"""),
    code("""
C = mma.fragment("m16n8k16", "f16", "C", ctype="f32")
tiled = mma.tile_fragment(C, (64, 64), (2, 2))
print(tiled.layout)
print(tiled.elements(0)[:8], "...", len(tiled.elements(0)), "elements for thread 0")
"""),
    code("""
print(len(mma.catalog()), "catalog entries; first:", mma.catalog()[0])
"""),
)

# --------------------------------------------------------------------------------------------------
nb(
    "04_bank_conflicts.ipynb",
    md("""
# Bank conflicts, and choosing a swizzle

Shared memory is 32 banks of 4 bytes; a warp's request costs as many *wavefronts* as its busiest
bank has distinct words. `layoutalg.banks.analyze` takes a shared-memory layout, the element size
and an access pattern (a TV layout `(thread, value) -> coordinate`) and counts them. Swizzles exist
to make these numbers small.
"""),
    code("""
from layoutalg import Layout, parse
from layoutalg import banks

rowmajor = Layout((64, 64), (64, 1))              # 64x64 fp16, row-major: 128 B per row
swizzled = parse("Sw<3,3,3> o (64,64):(64,1)")     # the 128B swizzle, on fp16 element offsets

# each lane reads 8 fp16 (16 bytes) of row `lane`, starting at column 0 (an ldmatrix-like access)
rows16 = Layout((32, 8), (1, 64))
for name, smem in (("row-major", rowmajor), ("128B-swizzled", swizzled)):
    r = banks.analyze(smem, rows16, 2, 16)
    print(f"{name:>14}: {r.wavefronts} wavefronts, ideal {r.ideal}")
"""),
    code("""
banks.analyze(rowmajor, rows16, 2, 16)
"""),
    code("""
banks.analyze(swizzled, rows16, 2, 16)
"""),
    md("""
Scalar 2-byte reads down one column are a different story: the swizzle spreads the 32 rows over
8 chunks, so a 32-way conflict becomes a 4-way one, not none. Choose the access width with the
swizzle.
"""),
    code("""
col = Layout((32, 1), (1, 0))
for name, smem in (("row-major", rowmajor), ("128B-swizzled", swizzled)):
    r = banks.analyze(smem, col, 2)
    print(f"{name:>14}: {r.wavefronts} wavefronts, ideal {r.ideal} ({r.ways}-way)")
"""),
    md("""
## Which swizzle for which row width?

For each swizzle mode, a warp of 16-byte row reads over a row-major fp16 tile whose rows are as
wide as the swizzle (the wgmma K-major atoms):
"""),
    code("""
from layoutalg.nvidia.hopper import wgmma
for swz in (0, 32, 64, 128):
    tile = wgmma.tile("K", swz, "f16", (64, 64))
    r = banks.analyze(tile, rows16, 2, 16)
    print(f"{swz:>3}B: {tile}  ->  {r.wavefronts} wavefronts (ideal {r.ideal})")
"""),
)

# --------------------------------------------------------------------------------------------------
nb(
    "05_gpu_harness.ipynb",
    md("""
# The GPU harness: what the hardware says

`layoutalg.gpu` runs the tensor-core instructions on an NVIDIA GPU (Triton inline asm for
`mma.sync`, Gluon for shared-memory placement, CuPy for `wgmma`) and records what it observed in
`tests/data/hardware/`. Without a GPU this notebook shows the recordings and replays them against
the library's current layouts -- the same check CI runs.
"""),
    code("""
import json
import pathlib

from layoutalg import gpu

root = pathlib.Path(gpu.__file__).resolve().parents[2] / "tests" / "data" / "hardware"
for p in sorted(root.glob("*.json")):
    data = json.loads(p.read_text())
    print(p.name, data["environment"])
"""),
    code("""
if gpu.gpu_available():
    import tempfile
    recordings = gpu.run_all(outdir=tempfile.mkdtemp())  # keep the committed recordings as they are
    print("failures:", gpu.failures(recordings) or "none")
else:
    print("no GPU here: replaying the recordings against the library's current layouts")
    for name, problems in gpu.replay_all().items():
        print(f"  {name}: {'all observations explained' if not problems else problems[:5]}")
"""),
    code("""
from layoutalg.gpu.harness import load_recording, table
print(table({name: load_recording(name) for name in ("mma", "smem", "wgmma")})[:3000])
"""),
)


# --------------------------------------------------------------------------------------------------
nb(
    "06_tma.ipynb",
    md("""
# TMA tensor maps and wgmma

Hopper kernels fill shared memory with the Tensor Memory Accelerator (`cp.async.bulk.tensor`) and read
it with `wgmma`. Two descriptors must agree: the TMA *tensor map* (built on the host by
`cuTensorMapEncodeTiled`) decides where each element lands, the wgmma *matrix descriptor* where it is
read. `layoutalg.nvidia.hopper.tma` derives the tensor map from the shared layout (as CuTe's `make_tma_copy`
does) and proves the two agree -- or names the first element where they do not. See docs/tma.md.
"""),
    code("""
from layoutalg import Layout
from layoutalg.nvidia.hopper.tma import make_tma_copy, check_wgmma, TensorMap
from layoutalg.nvidia.hopper.wgmma import tile

A = Layout((1000, 512), (512, 1))          # bf16 A[M][K], row-major: (M, K):(K, 1) in elements
t = tile("K", 64, "bf16", (128, 64))       # the wgmma tile: K-major, 64-byte swizzle
c = make_tma_copy(A, t, "bf16")
print(c)
print()
print(c.tensor_map.c_call())
"""),
    md("""
The 64-byte swizzle atom is 32 bf16 wide, so the box is one atom column (32 K x 128 rows) and the
tile takes two loads, 8 KiB apart. The tile origin only moves the tensor coordinates -- along K it
must stay on 16 bytes (the H100 raises an illegal instruction otherwise):
"""),
    code("""
print(c.coordinates((256, 128)))
try:
    c.coordinates((256, 4))
except Exception as e:
    print(type(e).__name__, e)
"""),
    md("""
## What one load writes

A box row narrower than the swizzle span is padded to the span (measured on the H100): 16-byte rows
under a 128-byte swizzle land 128 bytes apart. The layout a load writes, and its picture:
"""),
    code("""
m = TensorMap("FLOAT16", (64, 20), (128,), (8, 4), swizzle="128B")
print(m.box_bytes, "bytes of data,", m.smem_footprint, "bytes of shared memory")
m.smem_layout()
"""),
    md("""
## Does wgmma read what TMA wrote?

The check compares, element by element, the byte the tensor map puts each element at with the byte the
descriptor of its k-block reads. The same tile's descriptors agree; descriptors of a 128-byte-swizzled
tile read the wrong bytes, and the check names the first:
"""),
    code("""
print(check_wgmma(c, t))
print(check_wgmma(c, tile("K", 128, "bf16", (128, 64))))
"""),
    md("""
## What the H100 said

The harness (`layoutalg.gpu.tma_check`) encoded tensor maps with the driver, ran the loads, and
recorded where every element landed; CI replays the recording against the library:
"""),
    code("""
from collections import Counter
from layoutalg.gpu import tma_check
from layoutalg.gpu.harness import load_recording

rec = load_recording("tma")
print(rec["environment"]["gpu"], "driver", rec["environment"]["driver"], rec["environment"]["date"])
runs = [r for r in rec["placement"].values() if r.get("kind") in ("raw", "layout")]
print(len(runs), "placements:", Counter(r["status"] for r in runs))
print(len(rec["refusals"]), "driver verdicts; agree with the library:", all(r["agree"] for r in rec["refusals"].values()))
print(len(rec["cute"]["cases"]), "CuTe make_tma_copy maps, bytes equal:", all(r["bytes_equal"] for r in rec["cute"]["cases"].values()))
print("TMA -> wgmma:", Counter(r["status"] for r in rec["e2e"].values()),
      "negatives:", {k: r["how_caught"] for k, r in rec["negatives"].items()})
print("replay problems:", tma_check.replay(rec) or "none")
"""),
)


# --------------------------------------------------------------------------------------------------
nb(
    "07_explain_and_synthesize.ipynb",
    md("""
# Explaining layouts, synthesising swizzles

Two inverse problems. `layoutalg.explain` writes a layout as the formula a person would put in a
comment -- `row = groupID + 8 * (i >> 1)` -- and proves it with `verify`. `layoutalg.synthesize_swizzle`
finds the shared-memory layout under which a kernel's accesses take the fewest wavefronts. See
`docs/explain.md` for how both work.
"""),
    md("""
## Five fragments

Each explanation is proven (`verify`) and counted against the PTX ISA's own formula.
"""),
    code("""
from layoutalg import explain
from layoutalg.nvidia.ampere import mma
from layoutalg.nvidia.hopper import wgmma_fragments

fragments = [
    mma.fragment("m16n8k16", "f16", "A"),
    mma.fragment("m16n8k8", "bf16", "C"),
    mma.fragment("m8n8k4", "f16", "C", ctype="f32"),
    mma.sparse_fragment("m16n8k128", "s4", "A"),
    wgmma_fragments.fragment("m64n64k16", "f32", "D"),
]
for f in fragments:
    print(explain(f), end="\\n\\n")
"""),
    md("""
The expressions are sympy, in `lane` and `i`, so they substitute, simplify and evaluate:
"""),
    code("""
e = explain(fragments[0])
print(e.exprs)
print([int(x.subs({e.inputs[0]: 5, e.inputs[1]: 6})) for x in e.exprs], fragments[0].coords(5, 6))
"""),
    md("""
A swizzled tile comes back in its XOR form: the 16-byte chunk `col >> 3` XOR-ed with the row.
"""),
    code("""
from layoutalg.nvidia.hopper import wgmma
print(explain(wgmma.tile("K", 128, "bf16", (64, 64))))
"""),
    md("""
## Three kernels' shared-memory tiles

`layoutalg.synth.kernel_accesses` holds the tile and accesses of an Ampere GEMM's A tile
(`cp.async` row stores, `ldmatrix.x4` reads), attention's V tile (row stores, `ldmatrix.x4.trans`
reads) and an fp8 transpose (row stores, 4x4-block word reads). For each, the synthesised layout
beside no swizzle, the best CuTe GMMA atom and the best padding, per access, in wavefronts.
"""),
    code("""
from layoutalg.synth import KERNELS, kernel_accesses, synthesize_swizzle

for name in KERNELS:
    k = kernel_accesses(name)
    print(k.description)
    print(synthesize_swizzle(k.shape, k.dtype, k.accesses), end="\\n\\n")
"""),
    md("""
Your own access set: any TV layout `(thread, value) -> row + rows * col` with its vector width.
Here one warp reads a column of an fp8 tile byte by byte while 16-byte row stores keep the low four
bits fixed: no layout reaches one wavefront, and the search widens to compositions of two swizzles
and F2-linear XOR maps.
"""),
    code("""
from layoutalg import Layout
from layoutalg.synth import Access, row_copy

s = synthesize_swizzle((64, 64), "e4m3", [row_copy((64, 64), "e4m3"), Access("column bytes", Layout((32, 64), (1, 64)), 1)])
print(s.table())
for family, n in s.searched:
    print(f"  {n:6d}  {family}")
"""),
    md("""
## What the H100 counted

`layoutalg.gpu.synth_check` replays every instruction of these accesses on an H100 under the four
layouts and reads Nsight Compute's wavefront counters (recorded in `tests/data/hardware/synth.json`).
The analyser's prediction is in brackets where the counter differs: `cp.async` into padded rows,
whose 8-lane phases straddle two 128-byte lines, costs more than the bank model says, while
`st.shared.v4` at the same addresses costs exactly the model's number.
"""),
    code("""
from layoutalg.gpu import synth_check
from layoutalg.gpu.harness import load_recording

rec = load_recording("synth")
print(rec["environment"]["gpu"], rec["environment"]["driver"], rec["environment"]["date"])
print(synth_check.measured_table(rec))
print("replay against the library now:", synth_check.replay(rec) or "all counters explained")
"""),
)


# --------------------------------------------------------------------------------------------------
nb(
    "08_gluon_kernel.ipynb",
    md("""
# A Gluon kernel's layouts, read by layoutalg

A Hopper GEMM in Triton's Gluon names its layouts in Python: a `BlockedLayout` for the global loads,
an `NVMMASharedLayout` for the shared tile that `warpgroup_mma` reads, an `NVMMADistributedLayout` for
the accumulator, a `DotOperandLayout` for an operand held in registers. `layoutalg.from_gluon` turns each
into a layoutalg layout (Triton need not be installed: the constructor call is read as text, and
Triton 3.6's conversion rules are restated -- and checked against Triton's own engine in the tests).
See docs/gluon.md.
"""),
    code("""
from layoutalg import from_gluon, to_gluon

shape = (64, 64)                                   # a 64x64 fp16 tile of A
smem = "NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16)"
load = "BlockedLayout(size_per_thread=[1, 8], threads_per_warp=[4, 8], warps_per_cta=[4, 1], order=[1, 0])"
acc = "NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, 1], instr_shape=[16, 64, 16])"
mma = "NVMMADistributedLayout(version=[2, 0], warps_per_cta=[4, 1], instr_shape=[16, 8])"
dot = f"DotOperandLayout(operand_index=0, parent={mma}, k_width=2)"

S = from_gluon(smem, shape)      # coordinate -> element offset
L = from_gluon(load, shape)      # ((lane, warp, block), register) -> element index d0 + 64*d1
print("shared:     ", S)
print("global load:", L)
print("accumulator:", from_gluon(acc, shape))
"""),
    md("""
The shared tile is CuTe's 128-byte swizzle in element units, `Sw<3,3,3>`: 16-byte chunks XOR-ed with
the row. Drawn in shared memory (one 16-byte chunk a cell, coloured by bank group):
"""),
    code("""
from IPython.display import SVG
from layoutalg import viz

SVG(viz.swizzle_svg(S, 2))
"""),
    md("""
## Banks: what the loads and the operand reads cost

`bank_report` builds the access Triton's lowering issues (each thread's widest vector of registers at
consecutive shared offsets) and analyses it with `layoutalg.banks`; Triton's own
`get_shared_bank_conflicts` is `ways - 1` of it (the tests compare 203 pairs). The register-held A
operand reads an unswizzled tile 8-way; the NVMMA swizzle (or a swizzled `SwizzledSharedLayout`)
makes it conflict-free, and the 16-byte global-load stores stay conflict-free either way:
"""),
    code("""
from layoutalg.interop.gluon import bank_report

tiles = {"unswizzled": "SwizzledSharedLayout(1, 1, 1, [1, 0])", "NVMMA 128B": smem,
         "Swizzled(8,1,8)": "SwizzledSharedLayout(8, 1, 8, [1, 0])"}
for tile_name, shared in tiles.items():
    for name, reg in (("load stores", load), ("A operand reads", dot)):
        r = bank_report(reg, shared, shape, 16)
        print(f"{tile_name:16s} {name:16s} {r.wavefronts:4d} wavefronts (ideal {r.ideal}), {r.ways}-way")
"""),
    md("""
## The wgmma descriptors Triton will emit

From the shared layout alone, `k_block_descriptors` derives the descriptor of every k-block of
`wgmma.m64n64k16`: 128-byte swizzle (mode 1), SBO 1024 B, +32 B per k16 block. Triton's PTX for this
operand holds the same words except the leading-byte-offset field of a swizzled K-major operand, which
the hardware does not read: Triton writes 0 there and CuTe (and layoutalg) 1. The tests compile Gluon
kernels to PTX on the CPU and compare every field under that rule.
"""),
    code("""
from layoutalg.nvidia.hopper.wgmma import k_block_descriptors

for kb in k_block_descriptors(S, "f16", "m64n64k16"):
    d = kb.descriptor
    word = d.encode(start_address=kb.offset_bytes)
    triton_word = word & ~(0x3FFF << 16)          # Triton: LBO field 0 where the hardware ignores it
    print(f"k-block {kb.k_block}: +{kb.offset_bytes:3d} B  layoutalg {word:#018x}  Triton {triton_word:#018x}")
"""),
    md("""
## And back

`to_gluon` writes a layoutalg layout as the Gluon constructor call (and, with Triton installed, the
object itself); a swizzled tile that is an `NVMMASharedLayout` comes back as one:
"""),
    code("""
print(to_gluon(S, shape, element_bitwidth=16).source)
print(to_gluon(L, shape).source)
"""),
)



# --------------------------------------------------------------------------------------------------
nb(
    "09_tiled_gemm.ipynb",
    md("""
# From the atom to the CTA tile: a Hopper and an Ampere GEMM tiling, end to end

A tensor-core instruction is an *atom*: a TV layout per operand saying which thread holds which
element. Kernels work one level up, with CuTe's `TiledMMA` (atoms repeated over warps and tiles),
`TiledCopy` (copy instructions tiled so that their values land in the MMA's registers) and the
`partition_*` calls that cut each thread's share out of a tile. `layoutalg.tiled` builds them with
CuTe's construction (checked against CuTe C++ for 34 tiled MMAs and 25 tiled copies, and on an H100),
`layoutalg.viz.tiled` draws them and `layoutalg.banks.analyze_copy` counts their bank conflicts.
"""),
    md("""
## Hopper: two warpgroups of `wgmma.m64n128k16` (bf16 -> f32)

The shared-memory tiles are the canonical 128B-swizzled K-major layouts of the wgmma atoms; the
`TiledMMA` puts two warpgroups along M, so one step covers a 128 x 128 x 16 tile.
"""),
    code("""
from layoutalg import Layout, ComposedLayout, Swizzle
from layoutalg.nvidia.hopper import wgmma
from layoutalg.nvidia.atoms import mma_atom, copy_atom
from layoutalg.tensor import make_tensor, _
from layoutalg.tiled import make_tiled_mma, make_tiled_copy, make_tiled_copy_A, make_tiled_copy_B, make_tiled_copy_C
from layoutalg.banks import analyze_copy

sA = wgmma.tile("K", 128, "bf16", (128, 64))   # CTA tile: 128 x 128 x 64, K-major, 128B swizzle
sB = wgmma.tile("K", 128, "bf16", (128, 64))
hopper = make_tiled_mma(mma_atom("SM90_64x128x16_F32BF16BF16_SS"), (2, 1, 1))
print(hopper)
print("tile", hopper.tile_size_mnk, "threads", hopper.num_threads)
hopper          # the picture: A left, B top, C middle (aggregated by warp at this size)
"""),
    md("""
Each warpgroup's share of A is its 64 rows; per k-block the sub-tile is exactly what one wgmma
descriptor names. The descriptors derived from the *partition* equal the k-block descriptors of the
whole tile (the ones the H100 ran in `layoutalg.gpu.wgmma_check`):
"""),
    code("""
TA = make_tensor(sA, swizzle_ptr=True)        # CuTe keeps a GMMA tile's swizzle in the pointer
for t in (0, 128):
    pA = hopper.get_slice(t).partition_A(TA)
    words = []
    for k in range(pA.layout[2].size()):
        sub = pA(_, 0, k)
        words.append(hex(wgmma.descriptor_from_layout(ComposedLayout(TA.swizzle, sub.offset, sub.layout[0]), "bf16").encode()))
    print(f"thread {t}: {pA}  ->  {words}")
print([hex(b.descriptor.encode()) for b in wgmma.k_block_descriptors(sA, "bf16", "m64n128k16", mn_block=None)])
"""),
    md("""
The accumulators: thread 37 holds 64 floats of C; `partition_C` says where they go. The epilogue
writes them (as bf16) with `stmatrix` through a tiled copy built from the MMA: its source values are
exactly the MMA's C registers. Into a plain row-major C tile it conflicts; a swizzle fixes it.
"""),
    code("""
gC = make_tensor(Layout((128, 128), (128, 1)))
print(hopper.get_slice(37).partition_C(gC))
epilogue = make_tiled_copy_C(copy_atom("SM90_U32x4_STSM_N", "bf16"), hopper)
for smem in (Layout((128, 128), (128, 1)), ComposedLayout(Swizzle(3, 3, 4), 0, Layout((128, 128), (128, 1)))):
    r = analyze_copy(epilogue, smem)
    print(f"{str(smem):40s} {r.wavefronts:5d} wavefronts, ideal {r.ideal}; first conflict: {r.first_conflict}")
"""),
    md("""
## Ampere: 2 x 2 warps of `mma.sync.m16n8k16`, ldmatrix from swizzled shared memory

The permutation `(32, 32, 16)` makes each warp do two atoms along N, so that B has 8 values per
thread -- what one `ldmatrix.x4` delivers. The picture of a 32 x 32 step shows who holds what; the
copy pictures show which lane *addresses* each row (left) and which registers receive it (right).
"""),
    code("""
ampere = make_tiled_mma(mma_atom("SM80_16x8x16_F32F16F16F32_TN"), (2, 2, 1), (32, 32, 16))
ldsm = copy_atom("SM75_U32x4_LDSM_N", "f16")
s2r_A, s2r_B = make_tiled_copy_A(ldsm, ampere), make_tiled_copy_B(ldsm, ampere)
g2s = make_tiled_copy(copy_atom("SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>", "f16"), Layout((16, 8), (8, 1)), Layout((1, 8)))
print(s2r_A)
from IPython.display import SVG
from layoutalg.viz.tiled import tiled_mma_svg, tiled_copy_svg
SVG(tiled_mma_svg(ampere, window=((0, 8), (0, 16))))   # zoom: rows 0-7 x columns 0-15 of C (and of A, B)
"""),
    code("""
SVG(tiled_copy_svg(s2r_A, window=((0, 8), (0, 16))))
"""),
    md("""
The banks of the whole pipeline over a 128 x 64 f16 tile: the `cp.async` writes and the ldmatrix
reads of A, unswizzled and with `Swizzle<3,3,3>` (128-byte rows: every row of a matrix starts in
bank 0 without it).
"""),
    code("""
plain = Layout((128, 64), (64, 1))
swz = ComposedLayout(Swizzle(3, 3, 3), 0, plain)
for name, tc in (("cp.async G->S", g2s), ("ldmatrix A S->R", s2r_A)):
    for smem in (plain, swz):
        r = analyze_copy(tc, smem)
        print(f"{name:16s} {str(smem):34s} {len(r.instructions):3d} instructions, {r.wavefronts:5d} wavefronts "
              f"(ideal {r.ideal}, {r.ways}-way)")
print(analyze_copy(s2r_A, plain).first_conflict)
"""),
    md("""
A permutation that breaks vectorisation is caught: permuting M as `(2,8,2):(1,4,2)` scatters the 8
rows one `ldmatrix.trans` row address must read from an M-major tile, and the copy refuses (CuTe
refuses it at compile time, in `copy_unpack`).
"""),
    code("""
from layoutalg.tiled import copy
from layoutalg import LayoutError
bad = make_tiled_mma(mma_atom("SM80_16x8x16_F32BF16BF16F32_TN"), (2, 2, 1), (Layout((2, 8, 2), (1, 4, 2)), 32, 16))
tc = make_tiled_copy_A(copy_atom("SM75_U16x8_LDSM_T", "bf16"), bad)
sA_mn = make_tensor(Layout((64, 32)))                       # M-major A
th = tc.get_slice(0)
try:
    copy(tc, th.partition_S(sA_mn), th.retile_D(bad.get_slice(0).partition_fragment_A(sA_mn)))
except LayoutError as e:
    print("LayoutError:", str(e)[:220], "...")
"""),
    md("""
## What the H100 said

`layoutalg.gpu.tiled_check` ran both steps with every address, register index and descriptor taken
from these partitions (D was exactly A @ B), and ran the ldmatrix partitions under Nsight Compute:
"""),
    code("""
from layoutalg.gpu import tiled_check
from layoutalg.gpu.harness import load_recording
rec = load_recording("tiled")
print(rec["environment"]["gpu"], rec["environment"]["driver"], rec["environment"]["date"])
for name, r in rec["results"].items():
    print(f"{name:7s} D exact: {r['ok']}  (A in shared memory as {r['config']['smem_A']})")
for name, b in rec["banks"].items():
    n = b["ncu"]
    print(f"{name:18s} analyser {b['predicted']['wavefronts']:5d} wavefronts  ncu "
          f"{int(n['l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum']):5d}  conflicts ncu "
          f"{int(n['l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum'])}")
print("replay against the library now:", tiled_check.replay(rec) or "all explained")
"""),
)


# --------------------------------------------------------------------------------------------------
nb(
    "10_blackwell_gemm_tile.ipynb",
    md("""
# One Blackwell GEMM tile, end to end: a 2-CTA, 256-row, block-scaled `tcgen05.mma`

A Blackwell (sm_100) GEMM tile touches every layout of the tcgen05 generation: the shared-memory
tiles of A and B and the 64-bit descriptors the MMA reads them through (one per k-block), the
32-bit instruction descriptor (idesc), the accumulator in **tensor memory** (TMEM, 128 lanes x 512
columns per CTA), the epilogue's `tcgen05.ld` that brings it back to registers, and the
scale-factor tensors of the block-scaled kinds. This notebook walks one tile of
`SM100_MMA_MXF8F6F4_2x1SM_SS` -- e4m3 x e4m3 -> f32, one ue8m0 scale per 32 K elements, a pair of
CTAs (`cta_group::2`) computing a 256 x 256 tile, K = 128 per stage (4 MMAs of K = 32).

**What is checked against what.** None of this ran on sm_100 hardware: there is no Blackwell GPU
here. The layouts below are checked, in the test suite, against CuTe C++ 4.2's sm100 headers
compiled on the host with g++ (`MMA_Traits`, `make_umma_desc` and its k-block iterator,
`UMMA::make_instr_desc`, `UMMA::tmem_frg`, `make_tmem_copy`, `Copy_Traits<SM100_TMEM_*>`,
`Sm1xxBlockScaledConfig`), against Triton 3.6's Gluon compiler emitting PTX for `sm_100a` on the
CPU (descriptors, idesc, `get_tmem_reg_layout`, the `tcgen05.ld` shapes it picks; assembled by
`ptxas-blackwell`), and against the PTX ISA's tcgen05 sections (shape formulas proven symbolically).
Where this notebook replays a CuTe recording or proves a formula, the cell says so.
"""),
    md("""
## The atom: two CTAs, one instruction

CuTe describes a `cta_group::2` atom with one "thread" per CTA (`ThrID = 2:1`): CTA 0 holds rows
0..127 of A and C, CTA 1 rows 128..255; B's 256 columns are split the same way (each CTA stages half
of B; the MMA reads both halves). Below, the atom's layouts are compared with what CuTe 4.2 printed
for it (`tests/data/cute/umma_atoms.json`, recorded by compiling `MMA_Traits<...>` on the host).
"""),
    code("""
import json, re
from layoutalg import Layout, explain
from layoutalg.nvidia.blackwell.umma import umma_atom
from layoutalg.tiled import make_tiled_mma, partition_shape_A, partition_shape_B, partition_shape_C

atom = umma_atom("SM100_MMA_MXF8F6F4_2x1SM_SS<e4m3,e4m3,float,ue8m0,256,256,K,K>")
mma = make_tiled_mma(atom)
print(atom.name, "shape MNK", atom.shape_mnk, "ThrID", atom.ThrID)
print("A", atom.ALayout, " B", atom.BLayout, " C", atom.CLayout)
print("per CTA:  A", partition_shape_A(mma, (256, 128)), " B", partition_shape_B(mma, (256, 128)),
      " C", partition_shape_C(mma, (256, 256)))

rec = json.load(open("../tests/data/cute/umma_atoms.json"))
idx, word = rec["atoms"][atom.name]
cute = [re.sub(r"_(?=\\d)", "", x) for x in rec["layouts"][idx].split("|")]
ours = [str(atom.shape_mnk).replace(" ", ""), str(atom.ThrID), str(atom.ALayout), str(atom.BLayout), str(atom.CLayout)]
print("CuTe 4.2 printed the same layouts:", cute == ours, "| the same idesc:", int(word, 16) == atom.idesc().word)
"""),
    md("""
## Shared memory and the descriptors, per k-block

Each CTA stages its 128 rows of A (and its 128 columns of B) x K = 128 e4m3 in the canonical
K-major 128-byte-swizzled layout (`UMMA::Layout_K_SW128_Atom<float_e4m3_t>`: 8 rows of 128 bytes,
`Swizzle<3,4,3>`). `tile_to_mma_shape` cuts it as CuTe does, one MMA's (128, 32) block per k-block;
`k_block_descriptors` derives the tcgen05 descriptor from the layout and steps it as CuTe's
`DescriptorIterator` does: 32 e4m3 = 32 bytes per k-block, i.e. +2 in the 16-byte start field.
"""),
    code("""
from layoutalg.nvidia.blackwell.umma_smem import smem_atom, smem_tile, tile_to_mma_shape, k_block_descriptors

sA = smem_tile("K", 128, "e4m3", (128, 128))          # one CTA's A: 128 rows x K 128
print("A tile          ", sA)
print("cut per MMA     ", tile_to_mma_shape(smem_atom("K", 128, "e4m3"), partition_shape_A(mma, (256, 128))))
for op in ("A", "B"):
    kb = k_block_descriptors(sA, "e4m3", atom, operand=op)
    print(op, "descriptors   ", [hex(k.descriptor.encode()) for k in kb])
print(kb[0].descriptor.describe())
"""),
    md("""
## The instruction descriptor

The block-scaled kinds use the ISA's second idesc table: f32 accumulator implied, bit 23 the
scale type (ue8m0 = 1), the scale-factor ids in bits 4-5 (B) and 29-30 (A), M >> 7 in bits 27-28.
The word equals CuTe's `MMA_Traits<...>::idesc_` (replayed above) and the idesc Triton puts in
the PTX of a Gluon `tcgen05_mma_scaled` kernel (`tests/data/gluon_idesc.json`).
"""),
    code("""
d = atom.idesc()
print(d.describe())
"""),
    md("""
## The accumulator in tensor memory

With M = 128 rows per CTA the accumulator is the simplest data path of the ISA: row `m` in lane
`m`, column `n` in column `n` (CuTe's `UMMA::tmem_frg_2sm<float>`), 256 columns -- a
`tcgen05.alloc` of 256 of the 512 columns. The picture is one CTA's TMEM (CTA 1 holds rows
128..255 in the same cells of its own TMEM), the four lane quarters as bands: warp `w` of the
epilogue may read only lanes `32 w .. 32 w + 31`.
"""),
    code("""
from layoutalg.nvidia.blackwell.tmem_accum import umma_accumulator, make_tmem_copy, epilogue_tv
from layoutalg.nvidia.blackwell.tmem import TmemAllocation
from layoutalg.viz.tmem import tmem_scene

acc = umma_accumulator(atom, (256, 256))
print("accumulator (per CTA):", acc)
alloc = TmemAllocation(256)
alloc.check_access(None, range(128), range(256))     # raises a TmemError naming the rule if it did not fit
tmem_scene(atom)
"""),
    md("""
## The epilogue: which thread receives which element after `tcgen05.ld`

CuTe's `make_tmem_copy(Copy_Atom<SM100_TMEM_LOAD_16dp256b1x, float>, acc)` puts four warps on the
four lane quarters and tiles the `.16x256b` atom over the accumulator. `epilogue_tv` is the result
as one (thread, value) -> `m + 128 n` layout; `explain` writes it as a formula and proves it
(symbolically). By hand, from the ISA's `.16x256b` figure: lane `t // 4 (+ 8)`, 32-bit columns
`2 (t % 4) + {0, 1}` of each 8-column group -- `(t >> 2) & 7` and `t & 96` (the warp's 32 rows),
`256 (t % 4)` and `128 (v % 2)` (the column pair), `1024 (v >> 3)` (the next 8 columns).
"""),
    code("""
LOAD = "SM100_TMEM_LOAD_16dp256b1x"
tc = make_tmem_copy(LOAD, acc[0])
tv = epilogue_tv(tc, (128, 256))
print("TiledCopy TV", tc.layout_tv, " tiler", tc.tiler)
print(explain(tv, names=("t", "v")).text)
"""),
    md("""
The same load drawn in TMEM, zoomed into the corner where warp 0 meets warp 1 (cell = thread,
value). `layoutalg tmem` prints it all and checks the rules (every element of D reaches exactly one
(thread, value); each thread reads only its warp's quarter); with `-o` it writes the picture.
"""),
    code("""
tmem_scene(atom, load=LOAD, window=((28, 36), (0, 8)))
"""),
    code("""
from layoutalg.cli import main
rc = main(["tmem", LOAD, "--acc", atom.name])   # exit code 0: every rule holds
"""),
    md("""
The copy atom itself, as CuTe C++ and the CuTe DSL spell it (`to_cute_cpp` / `to_cute_dsl`; the
test suite compiles the C++ on the host and requires CuTe's print of it to be layoutalg's):
"""),
    code("""
from layoutalg.interop.cute import to_cute_cpp, to_cute_dsl
from layoutalg.nvidia.blackwell.tmem_copy import tmem_copy_op
c = to_cute_cpp(tmem_copy_op(LOAD), dtype="f32")
print(c.expr)
print(c.text)
print(to_cute_dsl(tmem_copy_op(LOAD)))
"""),
    md("""
## The scale factors

`kind::mxf8f6f4` scales every 32 K elements of A's rows and B's columns by one ue8m0 factor. In
global memory the factors are **blocked** (the layout cuBLAS documents, torch's `to_blocked`
builds and CUTLASS's `Sm1xxBlockScaledConfig<32>` tiles): 128 rows x 4 factor columns per
512-byte block, row `m` at `(m % 32) * 16 + (m % 128 // 32) * 4`. `sf_layout` is
`tile_atom_to_shape_SFA/SFB` over the problem (M, N, K, L); `verify` proves cuBLAS's index formula
equal to it *for every number of blocks* (symbolically), and one entry is worked by hand.
"""),
    code("""
from layoutalg.nvidia.blackwell.blockscale import sf_layout, blocked_formula, blocked_offset, symbolic_sf_layout, smem_sf_layout
from layoutalg.verify import verify

SFA = sf_layout((256, 256, 128, 1), 32, "A")
print("SFA", SFA)
print("SFB", sf_layout((256, 256, 128, 1), 32, "B"))
# A[130, 70]: row block 1 (1 * 512), K block 0, 130 % 32 = 2 (2 * 16), quarter 0, factor column 70 // 32 = 2
print(SFA((130, 70, 0)), blocked_offset(130, 70 // 32, n_col_blocks=1), 512 + 2 * 16 + 2)
expr, inputs, sizes = blocked_formula(32)
print("blocked formula:", expr)
print(verify(symbolic_sf_layout(32), expr, inputs))
"""),
    md("""
Per CTA, the factors are staged in shared memory in the order `tcgen05.cp` moves them into TMEM
(`deduce_smem_layoutSFA/SFB`; checked against CuTe for 24 atoms and tiles): SFA the CTA's 128
rows, SFB all 256 columns (the MMA reads B's factors for the whole N). CUTLASS copies them with
`SM100_UTCCP_4x32dp128bit_2cta` -- `tcgen05.cp.cta_group::2.32x128b.warpx4`, which writes its 32
rows to all four lane quarters:
"""),
    code("""
print("smem SFA", smem_sf_layout("A", 32, 32, (256, 256, 128), cta_group=2))
print("smem SFB", smem_sf_layout("B", 32, 32, (256, 256, 128), cta_group=2))
cp = tmem_copy_op("SM100_UTCCP_4x32dp128bit_2cta")
print(cp.ptx, " ValID (logical bit -> TMEM bit address)", cp.val_id)
print(to_cute_cpp(cp, dtype="u32").expr, "|", to_cute_dsl(cp))
"""),
    md("""
**Summary of the evidence** (none of it from sm_100 hardware): atom layouts and idesc -- CuTe C++ 4.2
(replayed above) and Triton's sm_100a PTX; descriptors -- CuTe's `make_umma_desc` words per k-block
and Triton's PTX; accumulator and `make_tmem_copy` partitions -- CuTe 4.2 on the host (48 cases);
the `tcgen05.ld` fragment -- the PTX ISA's formula, proven; the scale-factor layouts -- CuTe's
`Sm1xxBlockScaledConfig` and the blocked formula, proven for every size.
"""),
)


# --------------------------------------------------------------------------------------------------
nb(
    "amd.ipynb",
    md("""
# An MFMA GEMM tile on CDNA3, end to end

One `v_mfma_f32_32x32x8_f16` (MI300X, gfx942) as an atom, four waves of it as a tiled MMA, the A
tile in LDS with its bank report (and a layout with no conflicts), then the same layouts spelled for
Gluon and FlyDSL. No AMD GPU is used: each step says what it was checked against.
"""),
    code("""
from layoutalg import Layout
from layoutalg.amd import mfma, analyze_lds, synthesize_lds
from layoutalg.amd.common import lane, i
from layoutalg.verify import verify

m = mfma("v_mfma_f32_32x32x8_f16", "gfx942")
A, B, D = (m.fragment(op) for op in "ABD")
for f in (A, B, D):
    print(f.name, f.layout, "rows x cols", f.codomain)
"""),
    md("""
## The atom

A lane holds 4 consecutive K of one row of A (lanes 0-31 rows 0-31 at K 0-3, lanes 32-63 at K 4-7);
D fills "multi-rows" of 4. AMD's Matrix Instruction Calculator prints `v5{37} = D[13][5]`; the
fragment says the same, and its TV layout is proven equal to the ISA's rule for every lane and value
(symbolically):
"""),
    code("""
print(D.coords(37, 5), D.register_bits(5))
print(verify(D, D.formula, (lane, i)).method, verify(A, A.formula, (lane, i)).method)
"""),
    md("""
## Four waves: a 64 x 64 x 8 tiled MMA

The atom is an `MMAAtom` of 64 threads; `make_tiled_mma` repeats it 2 x 2 over M and N, CuTe's way.
"""),
    code("""
from layoutalg.tiled import make_tiled_mma

mma = make_tiled_mma(m.atom(), (2, 2, 1))
print("tile", mma.tile_size_mnk, "threads", mma.num_threads)
print("C TV layout of the tile:", mma.get_layoutC_TV())
"""),
    md("""
## The A tile in LDS, and its bank report

Wave 0 reads its 32 x 8 block of A from a 64 x 32 `f16` tile in LDS, 8 bytes a lane (`ds_read_b64`:
lane `l` reads row `l % 32`, K `4*(l // 32)` .. +3). Row-major, each row is 64 bytes: rows 0, 2, 4 ...
land on the same banks. The report counts LDS passes with CDNA3's bank model (32 banks of 4 bytes; a
wave's 64-bit read goes in 4 phases of 16 lanes, 128 bytes each):
"""),
    code("""
access = Layout(((32, 2), 4), ((1, 256), 64))   # (lane, value) -> m + 64*k in the 64 x 32 tile
row_major = Layout((64, 32), (32, 1))
report = analyze_lds(row_major, access, 2, 8)
print(report.wavefronts, "passes, ideal", report.ideal, "->", report.ways, "-way conflict")
report
"""),
    md("""
`synthesize_lds` ranks Triton's shared layouts for this access (swizzled and padded); the best ones
reach the ideal. The counts were checked against an independent count of bank accesses on held-out
access sets, and Triton's padded / swizzled layouts against Triton's own compiled kernels
(`tests/test_amd_lds.py`).
"""),
    code("""
best = synthesize_lds((64, 32), 2, [(access, 8)], top=3)
for c in best:
    print(c.cycles, c.lds_bytes, "bytes ", c.triton)
print(analyze_lds(best[0].layout, access, 2, 8).wavefronts, "passes with", best[0].layout)
"""),
    md("""
## Gluon and FlyDSL spellings

`to_gluon` finds the Gluon layout equal to a fragment or a shared layout (checked through Triton's
own rules, restated in `layoutalg.interop.gluon_amd` and compared with Triton 3.6's engine over 1,500
recorded configurations, refusals included). The tiled MMA's accumulator is
`AMDMFMALayout(version=3, instr_shape=[32, 32, 8], warps_per_cta=[2, 2])` up to the order of the
waves: Gluon puts wave 1 along N, CuTe's `(2, 2, 1)` atom layout along M (checked below).
"""),
    code("""
from layoutalg.interop.gluon import from_gluon, to_gluon
from layoutalg.interop.flydsl import to_flydsl

print(to_gluon(D, (32, 32)).source)
print(to_gluon(A, (32, 8)).source)
acc = from_gluon("AMDMFMALayout(3, [32, 32, 8], False, [2, 2])", (64, 64))
print("64 x 64 accumulator, 4 waves:", acc)
cute_c = mma.get_layoutC_TV()
relabel = {0: 0, 1: 2, 2: 1, 3: 3}            # Gluon's wave w is CuTe's atom relabel[w]
print("same elements, waves 1 and 2 swapped:",
      all(acc(t, v) == cute_c(64 * relabel[t // 64] + t % 64, v) for t in range(256) for v in range(16)))
print(to_gluon(best[0].layout, (64, 32), kind="shared").source)
print(to_flydsl(m))
"""),
    md("""
**What each result was checked against** (no AMD GPU): the atom's A/B/D -- AMD's Matrix Instruction
Calculator 1.3.2 (every CDNA3 instruction), Triton 3.6's linear layouts and FlyDSL 0.5.0's atoms; the
Gluon layouts -- Triton 3.6's `to_linear_layout`; the LDS layouts -- Triton's compiled kernels; the
bank counts -- CDNA3's documented bank model and an independent count.
"""),
)

nb(
    "kernels.ipynb",
    md("""
# Reading a compiled kernel

`layoutalg.kernel` reads what Triton compiled -- the kernel's ttgir -- by a grammar (the text is never
evaluated) and reports every op that moves data: its source line, its layouts as layoutalg layouts
(identical to Triton's own linear layouts), the shared-memory wavefronts and bank conflicts of every
register <-> shared access, and the descriptors the PTX must hold. The kernel here is a Triton matmul
(128 x 128 x 64 tile, fp16, 4 warps, 3 stages) compiled for sm_90a on the CPU; its ttgir and the PTX lines
that hold its wgmma descriptors were recorded by `tests/record_triton_kernels.py` into
`tests/data/kernels/`, so this notebook runs offline.
"""),
    code("""
import pathlib
from layoutalg.kernel import inspect_ttgir, check_ptx

data = pathlib.Path("..") / "tests" / "data" / "kernels"
ttgir = (data / "matmul_sm90.ttgir").read_text()
report = inspect_ttgir(ttgir)
print(report)
"""),
    md("""
## Its layouts

`report.layouts` holds every layout attribute by alias; `KernelLayout.bases(shape)` is Triton's linear
layout on a tile, `KernelLayout.layout(shape)` the layoutalg layout -- a TV layout
`((lane, warp, block), register) -> element` for registers, `coordinate -> offset` for shared memory.
The picture labels each element of the 128 x 64 A tile with the thread and register that load it.
"""),
    code("""
from layoutalg.viz import tv_scene, layout_scene

loads = [o for o in report.ops if o.op.name == "ttg.async_copy_global_to_local"]
a_tile = loads[0].values[0]            # the pointers' tensor: its shape and layout
print(a_tile)
tv = a_tile.layout.layout(a_tile.shape)
print("TV layout:", tv)
tv_scene(tv, a_tile.shape, max_rows=16, max_cols=32)
"""),
    code("""
shared = report.layouts["shared"]
print(shared)
layout_scene(shared.layout((128, 64)), max_rows=8, max_cols=64)   # the 128B swizzle, rows of offsets
"""),
    md("""
## Bank conflicts

Each register <-> shared-memory access carries a `BankReport` (the figure Triton's own
`get_shared_bank_conflicts` gives: checked in the test suite). The matmul's accesses are conflict-free;
a Gluon kernel that converts a row-per-thread layout through an unswizzled tile is not:
"""),
    code("""
from layoutalg.viz import banks_scene

conv = inspect_ttgir((data / "convert_sm90.ttgir").read_text())
for o in conv.accesses:
    print(o.summary(), end="\\n\\n")
bad = max(conv.accesses, key=lambda o: o.banks.ways)
banks_scene(bad.banks, instruction=0, max_rows=16)
"""),
    md("""
## The descriptors in the PTX

`check_ptx` derives every wgmma shared-memory descriptor from the ttgir (the operand's `nvmma_shared`
layout and the instruction `nvidia_mma` names) and compares it with the 64-bit constants the PTX combines
with each operand's address:
"""),
    code("""
for c in check_ptx(ttgir, (data / "matmul_sm90.ptx").read_text()):
    print(c)
report.to_dict()["ops"][0]        # the same report as data
"""),
    md("""
## The MMA path, proven

`prove_ttgir` builds the matmul's data path from the same ttgir -- the operands' shared layouts, the wgmma
descriptors derived from them and decoded as the hardware reads them, the accumulator's `#mma` layout --
and proves that every product `A[m,k]*B[k,n]` lands in the accumulator cell of `out[m,n]`
(`layoutalg inspect matmul_sm90.ttgir --prove` prints the same):
"""),
    code("""
from layoutalg.kernel import read_ttgir
from layoutalg.kernel.proof_ttgir import prove_ttgir

print(prove_ttgir(read_ttgir(ttgir)))
"""),
    md("""
## Planted bug

A hand-described Hopper pipeline: TMA loads A and B (128-byte swizzle) into shared memory, wgmma reads them
through one descriptor per k-block, the accumulator goes through `stmatrix` to shared memory and a TMA store
to `out`. The correct pipeline is proven; then the bug of tile-ai/tilelang#813: the author writes the
descriptor's stride byte offset already encoded (`64`, i.e. 1024 >> 4) where the library encodes it again.
The proof names the stage, the shared byte read, what lands there and what should:
"""),
    code("""
from layoutalg.kernel import hopper_pipeline, prove

print(prove(hopper_pipeline()).ok)
bug = prove(hopper_pipeline(sbo_a=64))
print(bug)
"""),
    md("""
The same knobs built a real TMA -> wgmma -> stmatrix -> store kernel on an H100 (`layoutalg.gpu.pipeline`,
recorded in `tests/data/hardware/pipeline.json`). The outputs the hardware got wrong are exactly the ones
the proof names:
"""),
    code("""
import json
import numpy as np
from layoutalg.gpu.pipeline import mask_from_hex

rec = json.loads((data.parent / "hardware" / "pipeline.json").read_text())
hw = rec["configurations"]["bug.units.sbo_a_encoded"]
print(rec["environment"]["gpu"], rec["environment"]["date"], hw["knobs"])
hw_mask = mask_from_hex(hw["mask"], tuple(hw["shape"]))
print("wrong on the H100:", int(hw_mask.sum()), " predicted:", int(bug.wrong_outputs.sum()),
      " identical:", bool(np.array_equal(hw_mask, bug.wrong_outputs)))
"""),
)


def build(execute: bool = True, only: str | None = None) -> list[pathlib.Path]:
    out = []
    for name, cells in NOTEBOOKS.items():
        if only is not None and name != only:
            continue
        book = nbformat.v4.new_notebook()
        book.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
        for kind, src in cells:
            book.cells.append(nbformat.v4.new_markdown_cell(src) if kind == "markdown" else nbformat.v4.new_code_cell(src))
        if execute:
            NotebookClient(book, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(HERE)}}).execute()
        path = HERE / name
        nbformat.write(book, path)
        out.append(path)
    return out


if __name__ == "__main__":
    only = sys.argv[sys.argv.index("--only") + 1] if "--only" in sys.argv else None
    for p in build(execute="--no-execute" not in sys.argv, only=only):
        print("wrote", p)
