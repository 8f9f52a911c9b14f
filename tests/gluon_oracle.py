"""Triton as an oracle on the CPU: its layout engine, its bank-conflict count, and its compiler's output.

Three ways to ask Triton 3.6 (no GPU needed):

* ``engine_bases(layout, shape)``: ``GluonOpBuilder.to_linear_layout`` for distributed layouts.
* ``engine_bank_conflicts(reg, shared, shape, bits)``: ``GluonOpBuilder.get_shared_bank_conflicts``.
* ``shared_placements(cases)``: where Triton's *compiler* puts each element of a shared layout.
  Passing a shared layout to ``to_linear_layout`` aborts the process (it wraps the answer in a
  distributed attribute), so instead a Gluon kernel is generated that stores, for each case, the
  tensor ``v[r, c] = r*C + c`` held entirely in every thread's registers (a
  ``DistributedLinearLayout`` with only register bases) into a shared allocation of that layout.
  Compiled for sm_90, LLVM folds every store to ``store <constants>, ptr addrspace(3)
  @global_smem + byte offset``; reading those stores back gives ``where[r*C + c]`` = element
  offset. The cases of one element width share one kernel; their stores are told apart by
  program order and each group is checked to be a permutation of the tile's indices (8-bit tiles
  are stored twice, low and high byte of the index).
* ``compile_ptx(source, name, constexprs, num_warps)``: compile generated Gluon source to PTX.

Every compile is cached for the test session (same source and constants, same answer).
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
import re
import sys
import tempfile

import numpy as np

_TMP = tempfile.mkdtemp(prefix="layoutalg-gluon-")


@functools.lru_cache(maxsize=1)
def builder():
    import triton._C.libtriton as lt

    ctx = lt.ir.context()
    lt.ir.load_dialects(ctx)
    return ctx, lt.gluon_ir.GluonOpBuilder(ctx)


def engine_bases(layout, shape) -> dict:
    """Triton's own linear layout of a distributed Gluon layout object (standard dict)."""
    _, b = builder()
    r = b.to_linear_layout(layout._to_ir(b), list(shape))
    return {"register": r.reg_bases, "lane": r.lane_bases, "warp": r.warp_bases, "block": r.block_bases}


def engine_bank_conflicts(reg, shared, shape, bits) -> int:
    """Triton's bank-conflict count for ``reg`` reading/writing ``shared`` (``get_shared_bank_conflicts``)."""
    _, b = builder()
    return int(b.get_shared_bank_conflicts(reg._to_ir(b), shared._to_ir(b), list(shape), bits))


def load_module(source: str):
    """Import Gluon kernel source (``@gluon.jit`` needs a real file) once per distinct text."""
    name = "gluon_oracle_" + hashlib.sha1(source.encode()).hexdigest()[:16]
    if name in sys.modules:
        return sys.modules[name]
    path = os.path.join(_TMP, name + ".py")
    with open(path, "w") as f:
        f.write(source)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


_ASM_CACHE: dict = {}


def compile_asm(source: str, name: str, signature: dict, constexprs: dict, num_warps: int = 4,
                upto: str = "llir", arch: int = 90) -> dict:
    """Compile kernel ``name`` of generated Gluon ``source`` for sm_90 (or ``arch``, e.g. 100) on the CPU,
    up to stage ``upto``: {stage: text}.

    The stages are Triton's own (``backend.add_stages``), run as ``triton.compile`` runs them;
    stopping at ``llir`` or ``ptx`` skips ptxas, which nothing here needs.
    """
    key = (source, name, repr(sorted(signature.items())), repr(sorted((k, repr(v)) for k, v in constexprs.items())),
           num_warps, upto) + ((arch,) if arch != 90 else ())
    if key not in _ASM_CACHE:
        from triton._C.libtriton import ir
        from triton.backends.compiler import GPUTarget
        from triton.compiler.compiler import make_backend
        from triton.experimental.gluon._runtime import GluonASTSource

        fn = getattr(load_module(source), name)
        src = GluonASTSource(fn, signature=signature, constexprs=constexprs)
        target = GPUTarget("cuda", arch, 32)
        backend = make_backend(target)
        options = backend.parse_options({"num_warps": num_warps})
        stages: dict = {}
        backend.add_stages(stages, options, src.language)
        ctx = ir.context()
        ir.load_dialects(ctx)
        backend.load_dialects(ctx)
        module = src.make_ir(target, options, backend.get_codegen_implementation(options), backend.get_module_map(), ctx)
        metadata = {"hash": hashlib.sha256(repr(key).encode()).hexdigest(), "target": target, **options.__dict__}
        out = {}
        for ext, step in list(stages.items())[list(stages).index(src.ext) + 1:]:
            module = step(module, metadata)
            out[ext] = module if isinstance(module, str) else str(module)
            if ext == upto:
                break
        _ASM_CACHE[key] = out
    return _ASM_CACHE[key]


# ----------------------------------------------------------------------------------- placements
_DT = {8: "int8", 16: "int16", 32: "int32"}
_STORE = re.compile(
    r"store (?P<ty><(?P<n>\d+) x i(?P<vw>\d+)>|i(?P<sw>\d+)) (?P<val>zeroinitializer|splat \([^)]*\)|<[^>]*>|-?\d+), "
    r"ptr addrspace\(3\) (?P<ptr>@global_smem|getelementptr[^,]*, ptr addrspace\(3\) @global_smem(?:, i32 (?P<off>-?\d+))?\))"
)


def _stores(llir: str) -> list[tuple[int, int, list[int]]]:
    """(byte address, bits per value, values) of every constant store to shared memory, in program order."""
    out = []
    for m in _STORE.finditer(llir):
        width = int(m["vw"] or m["sw"])
        n = int(m["n"] or 1)
        val = m["val"]
        if val == "zeroinitializer":
            vals = [0] * n
        elif val.startswith("splat"):
            vals = [int(val.split()[-1].rstrip(")"))] * n
        elif val.startswith("<"):
            vals = [int(x.split()[1]) for x in val[1:-1].split(",")]
        else:
            vals = [int(val)]
        vals = [v & ((1 << width) - 1) for v in vals]
        out.append((int(m["off"] or 0), width, vals))
    return out


def _bytes_of(stores) -> list[tuple[int, int]]:
    """(byte address, byte value) in program order."""
    out = []
    for addr, width, vals in stores:
        for k, v in enumerate(vals):
            for j in range(width // 8):
                out.append((addr + k * width // 8 + j, (v >> (8 * j)) & 0xFF))
    return out


def _kernel_source(cases) -> str:
    lines = ["from triton.experimental import gluon", "from triton.experimental.gluon import language as gl", "",
             "", "@gluon.jit", "def kern(out_ptr, " + ", ".join(f"L{i}: gl.constexpr, S{i}: gl.constexpr, R{i}: gl.constexpr"
                                                          for i in range(len(cases))) + "):"]
    for i, (_, shape, bits) in enumerate(cases):
        R, C = shape
        dt = _DT[bits]
        lines += [
            f"    rows{i} = gl.arange(0, {R}, layout=gl.SliceLayout(1, R{i}))",
            f"    cols{i} = gl.arange(0, {C}, layout=gl.SliceLayout(0, R{i}))",
            f"    idx{i} = rows{i}[:, None] * {C} + cols{i}[None, :]",
        ]
        parts = [f"idx{i}"] if bits > 8 else [f"idx{i} & 255", f"idx{i} >> 8"]
        for j, p in enumerate(parts):
            lines += [f"    m{i}_{j} = gl.allocate_shared_memory(gl.{dt}, [{R}, {C}], L{i})",
                      f"    m{i}_{j}.store(({p}).to(gl.{dt}))"]
    return "\n".join(lines) + "\n"


def _register_everything(shape, order=None):
    """A DistributedLinearLayout in which every thread holds the whole tile in registers.

    ``order``: the register bases (default row-major). Listing them in the shared layout's own
    offset order lets the stores vectorize (much faster to compile); it does not change what is
    measured, since every value names its own element.
    """
    from triton.experimental.gluon import language as gl

    R, C = shape
    regs = order or [[0, 1 << i] for i in range(C.bit_length() - 1)] + [[1 << i, 0] for i in range(R.bit_length() - 1)]
    return gl.DistributedLinearLayout(reg_bases=regs, lane_bases=[[0, 0]] * 5, warp_bases=[], block_bases=[], shape=[R, C])


def _offset_order(layout, shape):
    try:
        from layoutalg.interop.gluon import linear_bases

        bases = linear_bases(layout, shape)["offset"]
    except Exception:  # noqa: BLE001 - fall back to row-major registers
        return None
    units = [[r, 0] if r else [0, c] for r, c in bases]  # a distributed basis moves along one dim only
    full = sorted([[1 << i, 0] for i in range(shape[0].bit_length() - 1)] + [[0, 1 << i] for i in range(shape[1].bit_length() - 1)])
    return units if sorted(units) == full else None


def shared_placements(cases) -> list[np.ndarray]:
    """For each (gluon shared layout object, (R, C), element bits): where[r*C + c] = element offset, from Triton's compiler.

    All cases must share one element width.
    """
    bits = {c[2] for c in cases}
    assert len(bits) == 1, "one element width per kernel"
    bits = bits.pop()
    src = _kernel_source(cases)
    sig = {"out_ptr": f"*i{bits}"}
    consts = {}
    for i, (layout, shape, _) in enumerate(cases):
        for p in ("L", "S", "R"):
            sig[f"{p}{i}"] = "constexpr"
        consts[f"L{i}"] = layout
        consts[f"S{i}"] = 0
        consts[f"R{i}"] = _register_everything(shape, _offset_order(layout, shape))
    asm = compile_asm(src, "kern", sig, consts, num_warps=1)
    stream = _bytes_of(_stores(asm["llir"]))
    nb = bits // 8
    out, pos = [], 0
    for layout, (R, C), _ in cases:
        n = R * C
        parts = 1 if bits > 8 else 2
        idx_by_addr = []
        for _ in range(parts):
            chunk = stream[pos:pos + n * nb]
            pos += n * nb
            vals = dict(chunk)
            idx_by_addr.append(vals)
        # element value at each element-aligned address
        lo = min(idx_by_addr[0])
        addrs = sorted(a for a in idx_by_addr[0] if (a - lo) % nb == 0)
        high = idx_by_addr[1] if parts == 2 else {}
        shift = min(high) - lo if high else 0  # the high bytes' stream starts at its own address
        base = None
        where = np.full(n, -1, dtype=np.int64)
        decoded = {}
        for a in addrs:
            v = 0
            for j in range(nb):
                v |= idx_by_addr[0][a + j] << (8 * j)
            if parts == 2:
                v |= high[a + shift] << 8
            decoded[a] = v
        if sorted(decoded.values()) != list(range(n)):
            raise AssertionError(f"shared_placements: the stores of {layout} do not decode to a permutation of 0..{n - 1}")
        base = next(a for a, v in decoded.items() if v == 0)
        for a, v in decoded.items():
            where[v] = (a - base) // nb
        out.append(where)
    if pos != len(stream):
        raise AssertionError(f"shared_placements: {len(stream) - pos} stored bytes left over")
    return out
