"""What a compiled kernel does with its data: :func:`inspect_ttgir` reads ttgir and reports every op that
moves data -- its source line, tensor types and layouts, and for each shared-memory access between
registers and shared memory the predicted wavefronts and bank conflicts.

The bank analysis is :func:`layoutalg.interop.gluon.bank_report`: the register layout against the
shared layout, each thread moving the widest vector of registers that sit at consecutive shared
offsets (up to 16 bytes), the access Triton's lowering issues; its conflict count equals Triton's
own ``get_shared_bank_conflicts`` (checked in the test suite). Below, each thread of a warp holds one
row of a row-major fp16 tile and stores it in 16-byte vectors: the 8 threads of a phase write rows
128 bytes apart, the same four banks, an 8-way conflict.

    >>> r = inspect_ttgir('''
    ... #blocked = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [32, 1], warpsPerCTA = [4, 1], order = [0, 1]}>
    ... #shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
    ... #smem = #ttg.shared_memory
    ... module attributes {"ttg.num-warps" = 4 : i32, ttg.target = "cuda:80"} {
    ...   tt.func public @k(%x: tensor<64x64xf16, #blocked>) {
    ...     %m = ttg.local_alloc %x : (tensor<64x64xf16, #blocked>) -> !ttg.memdesc<64x64xf16, #shared, #smem> loc("k.py":3:4)
    ...     tt.return
    ...   }
    ... }''')
    >>> a = r.accesses[0]
    >>> a.op.name, a.location, a.banks.access_bytes, a.banks.ways
    ('ttg.local_alloc', 'k.py:3:4', 16, 8)
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import LayoutError
from ..interop.gluon import bank_report
from ..interop.gluon_tmem import tmem_reg_layout
from ..linear import flat_index
from .layouts import KernelLayout
from .mlir import MlirType
from .ttgir import DATA_OPS, Op, TtgirModule, read_ttgir

__all__ = ["ValueInfo", "OpReport", "KernelReport", "inspect_ttgir", "element_bits"]

#: ops that access shared memory from registers: (index of the register tensor, index of the memdesc) in
#: op.types, and whether the registers write ("store") or read ("load") shared memory
_SHARED_ACCESS = {
    "ttg.local_alloc": "store",
    "ttg.local_store": "store",
    "ttg.local_load": "load",
    "ttg.async_copy_global_to_local": "store",
    "amdg.buffer_load_to_local": "store",
    "amdg.local_load_packed_tranposed": "load",
}


def element_bits(element: Any) -> int | None:
    """Bits of an MLIR element type (``f16`` 16, ``bf16`` 16, ``f8E4M3FN`` 8, ``i1`` 8 as stored, a pointer 64);
    None where it is not a number type.

    >>> element_bits("f8E5M2"), element_bits("bf16"), element_bits("i1")
    (8, 16, 8)
    """
    if isinstance(element, MlirType):
        return 64 if element.kind == "ptr" else None
    if not isinstance(element, str):
        return None
    m = re.match(r"(?:bf|f|i|ui|si|tf)(\d+)", element)
    if not m:
        return None
    bits = int(m.group(1))
    return 8 if bits == 1 else bits


@dataclass
class ValueInfo:
    """One operand or result: its memory (registers, shared, tensor memory, global), shape, element type and layout."""

    role: str
    memory: str
    shape: tuple[int, ...]
    element: str
    layout: KernelLayout | None
    type_text: str

    def __str__(self) -> str:
        shape = "x".join(str(s) for s in self.shape) or "scalar"
        where = f" {self.layout.name}" if self.layout is not None else ""
        return f"{self.role} {shape}x{self.element} in {self.memory}{where}"


@dataclass
class OpReport:
    """One data-moving op: what moves (``what``), where in the source (``location``), its values, and for a
    register <-> shared access its :class:`~layoutalg.banks.BankReport` (``banks``) and ``direction``."""

    op: Op
    what: str
    values: list[ValueInfo]
    banks: Any = None
    direction: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def location(self) -> str | None:
        return self.op.location

    def summary(self) -> str:
        where = self.op.location or f"ttgir line {self.op.line}"
        head = f"{where}  {self.op.name}  ({self.what})"
        lines = [head] + [f"    {v}" for v in self.values]
        if self.banks is not None:
            b = self.banks
            ways = "conflict-free" if b.conflict_free else f"{b.ways}-way bank conflicts"
            lines.append(f"    shared memory {self.direction}: {b.access_bytes}-byte vectors, {len(b.instructions)} "
                         f"warp instructions (all warps), {b.wavefronts} wavefronts (ideal {b.ideal}), {ways}")
        lines += [f"    note: {n}" for n in self.notes]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()


@dataclass
class KernelReport:
    """A kernel's data path as data: module attributes, the layouts by alias, and one :class:`OpReport` per
    data-moving op in program order. ``str`` is the readable report."""

    target: str | None
    num_warps: int
    threads_per_warp: int
    num_ctas: int
    layouts: dict[str, KernelLayout]
    ops: list[OpReport]
    functions: list[str]
    unknown_ops: list[tuple[int, int, str]] = field(default_factory=list)
    module: TtgirModule | None = field(default=None, repr=False, compare=False)

    @property
    def proof(self) -> Any:
        """The proof of the kernel's MMA path (:func:`layoutalg.kernel.proof_ttgir.prove_ttgir`)."""
        from .proof_ttgir import prove_ttgir

        if self.module is None:
            raise LayoutError("KernelReport.proof: the report holds no module (made by inspect_module / inspect_ttgir)")
        return prove_ttgir(self.module, accesses=self.accesses)

    @property
    def accesses(self) -> list[OpReport]:
        """The register <-> shared-memory accesses (those with a bank report)."""
        return [o for o in self.ops if o.banks is not None]

    def to_dict(self) -> dict[str, Any]:
        """The report as plain data (JSON-ready): layouts by alias as Gluon source, ops with their values and
        bank figures."""
        def value(v: ValueInfo) -> dict[str, Any]:
            return {"role": v.role, "memory": v.memory, "shape": list(v.shape), "element": v.element,
                    "layout": v.layout.name if v.layout is not None else None}

        def op(o: OpReport) -> dict[str, Any]:
            d: dict[str, Any] = {"op": o.op.name, "what": o.what, "location": o.location, "ttgir_line": o.op.line,
                                 "values": [value(v) for v in o.values], "notes": list(o.notes)}
            if o.banks is not None:
                d["shared_memory"] = {"direction": o.direction, "vector_bytes": o.banks.access_bytes,
                                      "instructions": len(o.banks.instructions), "wavefronts": o.banks.wavefronts,
                                      "ideal": o.banks.ideal, "ways": o.banks.ways}
            return d

        return {"target": self.target, "num_warps": self.num_warps, "threads_per_warp": self.threads_per_warp,
                "num_ctas": self.num_ctas, "functions": list(self.functions),
                "unknown_ops": [{"line": ln, "column": col, "op": name} for ln, col, name in self.unknown_ops],
                "layouts": {k: (v.gluon.source if v.gluon is not None else v.text) for k, v in self.layouts.items()},
                "ops": [op(o) for o in self.ops]}

    def __str__(self) -> str:
        fn = ", ".join(self.functions) or "?"
        out = [f"kernel {fn}: target {self.target}, {self.num_warps} warps x {self.threads_per_warp} threads, "
               f"{self.num_ctas} CTA(s)", "", "layouts:"]
        out += [f"  {kl}" for kl in self.layouts.values()]
        out += ["", f"data movement ({len(self.ops)} ops):"]
        out += ["  " + o.summary().replace("\n", "\n  ") for o in self.ops]
        if self.unknown_ops:
            out += ["", "ops the reader does not know (Triton 3.6's dialects): "
                    + ", ".join(f"{name} (line {ln})" for ln, _, name in self.unknown_ops[:8])]
        acc = self.accesses
        if acc:
            bad = [o for o in acc if not o.banks.conflict_free]
            out += ["", f"shared memory: {len(acc)} accesses, {sum(o.banks.wavefronts for o in acc)} wavefronts "
                        f"(ideal {sum(o.banks.ideal for o in acc)}), {len(bad)} with bank conflicts"]
        return "\n".join(out)


def _memory(t: MlirType) -> str:
    if t.kind == "memdesc":
        return t.space if isinstance(t.space, str) else "shared"
    if t.kind == "tensor":
        return "global (pointers)" if isinstance(t.element, MlirType) and t.element.kind == "ptr" else "registers"
    if t.kind == "tensordesc":
        return "global (TMA descriptor)"
    return "scalar"


def _element(t: MlirType) -> str:
    e = t.element
    if isinstance(e, MlirType):
        if e.kind == "ptr":
            return f"ptr<{_element(e) if isinstance(e.element, MlirType) else e.element}>"
        return e.text
    return str(e)


def _values(op: Op) -> list[ValueInfo]:
    out = []
    for role, types in (("in", op.operands), ("out", op.result_types)):
        for t in types:
            if t.kind in ("scalar", "ptr"):
                continue
            if t.kind == "tensordesc" and isinstance(t.element, MlirType):
                inner = t.element
                layout = inner.encoding if isinstance(inner.encoding, KernelLayout) else None
                out.append(ValueInfo(role, "global (TMA descriptor)", inner.shape, _element(inner), layout, t.text))
                continue
            layout = t.encoding if isinstance(t.encoding, KernelLayout) else None
            out.append(ValueInfo(role, _memory(t), t.shape, _element(t), layout, t.text))
    # tt.load / tt.store print only the pointers' type: the values have the pointers' shape and layout
    if op.name in ("tt.load", "tt.store") and op.operands:
        t = op.operands[0]
        if t.kind == "tensor" and isinstance(t.element, MlirType) and t.element.kind == "ptr":
            layout = t.encoding if isinstance(t.encoding, KernelLayout) else None
            pointee = t.element.element
            elem = pointee.text if isinstance(pointee, MlirType) else str(pointee)
            out.append(ValueInfo("out" if op.name == "tt.load" else "in", "registers", t.shape, elem, layout,
                                 f"(the {'loaded' if op.name == 'tt.load' else 'stored'} values)"))
    return out


def _amd_family(target: str | None) -> str | None:
    """``cdna3`` / ``cdna4`` / ``rdna3`` ... for a ``hip:gfx...`` target, else None."""
    if not target or not str(target).startswith("hip:"):
        return None
    from ..amd.common import arch_name

    try:
        return arch_name(str(target)[4:])
    except LayoutError:
        return "unknown AMD architecture " + str(target)[4:]


def _lds_access(reg: MlirType, mem: MlirType, shape: tuple[int, ...], bits: int, direction: str, family: str,
                rep: OpReport) -> None:
    """An AMD register <-> LDS access: the widest vector of consecutive LDS elements each lane moves (up to 16
    bytes), wave by wave, under :mod:`layoutalg.amd.lds`'s bank model of the target's family."""
    from ..amd.lds import LDS, analyze_lds

    if family not in LDS:
        rep.notes.append(f"no LDS bank analysis: no bank model for {family} (modelled: {', '.join(LDS)})")
        return
    eb = bits // 8
    access = reg.encoding.layout(shape)
    try:
        smem = mem.encoding.layout(shape)
    except LayoutError:  # an F2-linear shared layout no CuTe layout spells (amd_rotating_shared): by its offsets
        _lds_by_offsets(reg, mem, shape, eb, direction, family, rep)
        return
    last: LayoutError | None = None
    for vb in (16, 8, 4, 2, 1):
        if vb < eb or vb % eb:
            continue
        try:
            kind = "read" if direction == "load" else "write"
            rep.banks = analyze_lds(smem, access, eb, vb, arch=family, op=kind,
                                    description=f"{family} LDS ({LDS[family].banks} banks), ds_{kind}_b{8 * vb}")
            rep.direction = direction
            rep.notes.append(f"LDS bank model: {family} ({LDS[family].banks} banks, layoutalg.amd.lds)")
            return
        except LayoutError as e:
            last = e
    rep.notes.append(f"no LDS bank analysis: {last}")


def _lds_by_offsets(reg: MlirType, mem: MlirType, shape: tuple[int, ...], eb: int, direction: str, family: str,
                    rep: OpReport) -> None:
    """The LDS analysis of an access whose shared layout is given only as offset -> coordinate bases: each
    element's offset found by walking the bases, each lane's widest contiguous vector (up to 16 bytes)."""
    from ..amd.lds import LDS, lds_report
    from ..banks import BankReport

    bases = mem.encoding.bases(shape)["offset"]
    vecs = [flat_index(v, list(shape)) for v in bases]
    span = np.zeros(1 << len(vecs), dtype=np.int64)
    for i, v in enumerate(vecs):
        span[1 << i: 2 << i] = span[: 1 << i] ^ v
    where = np.empty(int(np.prod(shape)), dtype=np.int64)
    where[span] = np.arange(span.size)
    access = reg.encoding.layout(shape)
    T, V = int(access[0].size()), int(access[1].size())
    off = where[np.asarray(access.table(), dtype=np.int64).reshape(V, T).T] * eb
    kind = "read" if direction == "load" else "write"
    wave = LDS[family].wave
    for vb in (16, 8, 4, 2, 1):
        n = vb // eb
        if vb < eb or vb % eb or V % n:
            continue
        vec = off.reshape(T, V // n, n)
        if not np.array_equal(vec, vec[:, :, :1] + eb * np.arange(n)):
            continue
        starts = vec[:, :, 0]
        instrs = []
        for w in range(0, T, wave):
            for k in range(V // n):
                instrs += list(lds_report([int(a) for a in starts[w:w + wave, k]], vb, family, kind).instructions)
        rep.banks = BankReport(tuple(instrs), vb, f"{family} LDS ({LDS[family].banks} banks), ds_{kind}_b{8 * vb}")
        rep.direction = direction
        rep.notes.append(f"LDS bank model: {family} ({LDS[family].banks} banks, layoutalg.amd.lds)")
        return


def _shared_access(op: Op, rep: OpReport, family: str | None = None) -> None:
    direction = _SHARED_ACCESS[op.name]
    regs = [t for t in op.types if t.kind == "tensor" and isinstance(t.encoding, KernelLayout)]
    mems = [t for t in op.types if t.kind == "memdesc" and isinstance(t.encoding, KernelLayout)]
    if not regs or not mems:
        return  # an allocation without a value
    reg, mem = regs[0], mems[0]
    if reg.encoding.memory != "registers" or mem.encoding.memory != "shared":
        return
    bits = element_bits(mem.element)
    if bits not in (8, 16, 32, 64):
        rep.notes.append(f"no bank analysis for {bits}-bit elements")
        return
    shape = tuple(reg.shape)
    if tuple(mem.shape[-len(shape):]) != shape:
        rep.notes.append(f"no bank analysis: registers {list(shape)} and shared memory {list(mem.shape)} differ in shape")
        return
    if family is not None:
        try:
            _lds_access(reg, mem, shape, bits, direction, family, rep)
        except LayoutError as e:
            rep.notes.append(f"no LDS bank analysis: {e}")
        return
    try:
        rep.banks = bank_report(reg.encoding.gluon_for(shape), mem.encoding.gluon_for(shape), shape, bits)
        rep.direction = direction
    except LayoutError as e:
        rep.notes.append(f"no bank analysis: {e}")
    if op.name == "ttg.async_copy_global_to_local" and rep.banks is not None:
        rep.notes.append("cp.async: the vector is also bounded by the global pointers' contiguity")


#: tcgen05.ld / st data-movement shapes, as Gluon's get_tmem_reg_layout names them
TMEM_VARIANTS = ("32x32b", "16x64b", "16x128b", "16x256b", "32x32b_splitn")


def _tmem_access(op: Op, rep: OpReport, num_warps: int) -> None:
    """Which tcgen05.ld / st shape moves the op's register layout (Gluon's ``get_tmem_reg_layout`` computed by
    :func:`~layoutalg.interop.gluon_tmem.tmem_reg_layout`): the register layout must be that shape's."""
    regs = [t for t in op.types if t.kind == "tensor" and isinstance(t.encoding, KernelLayout)]
    mems = [t for t in op.types if t.kind == "memdesc" and isinstance(t.encoding, KernelLayout)
            and t.encoding.memory == "tensor memory"]
    if not regs or not mems or regs[0].encoding.memory != "registers":
        return
    reg, mem = regs[0], mems[0]
    enc = mem.encoding
    bits = element_bits(mem.element)
    shape = tuple(reg.shape)
    if bits is None or enc.attribute != "ttng.tensor_memory_encoding" or len(shape) != 2:
        return
    try:
        want = reg.encoding.bases(shape)
    except LayoutError as e:
        rep.notes.append(f"no tcgen05 shape check: {e}")
        return
    split = (int(enc.params.get("CTASplitM", 1)), int(enc.params.get("CTASplitN", 1)))
    found = []
    for variant in TMEM_VARIANTS:
        try:
            f2 = tmem_reg_layout(bits, shape, block=(int(enc.params["blockM"]), int(enc.params["blockN"])),
                                 col_stride=int(enc.params.get("colStride", 1)), cta_split=split, num_warps=num_warps,
                                 instr_variant=variant)
        except LayoutError:
            continue
        if f2 is None:
            continue
        got = {k: [list(v) for v in vs] for k, vs in f2.to_triton().items()}
        if all(got.get(k, []) == want.get(k, []) for k in ("register", "lane", "warp", "block")):
            found.append(variant)
    ld = "tcgen05.ld" if op.name == "ttng.tmem_load" else "tcgen05.st"
    if found:
        rep.notes.append(f"{ld}.{found[0]}: the register layout is the one this shape moves"
                         + (f" (also {', '.join(found[1:])})" if found[1:] else ""))
    else:
        rep.notes.append(f"no {ld} shape moves this register layout directly (a conversion through registers "
                         "or shared memory is needed)")


def _holders(bases: dict[str, list[list[int]]], shape: tuple[int, ...]) -> np.ndarray:
    """holds[e, t]: thread t (lane + 32 * (warp + W * block)) holds element e (column-major index)."""
    def span(level: str) -> np.ndarray:
        vecs = [flat_index(v, list(shape)) for v in bases.get(level, [])]
        out = np.zeros(1 << len(vecs), dtype=np.int64)
        for i, v in enumerate(vecs):
            out[1 << i: 2 << i] = out[: 1 << i] ^ v
        return out

    reg = span("register")
    lane, warp, block = span("lane"), span("warp"), span("block")
    thread = (lane[:, None, None] ^ warp[None, :, None] ^ block[None, None, :]).transpose(2, 1, 0).reshape(-1)
    elems = reg[:, None] ^ thread[None, :]
    holds = np.zeros((int(np.prod(shape)), thread.size), dtype=bool)
    holds[elems.reshape(-1), np.broadcast_to(np.arange(thread.size), elems.shape).reshape(-1)] = True
    return holds


def _conversion(op: Op, rep: OpReport, threads_per_warp: int) -> None:
    """What a ttg.convert_layout must move: nothing between threads, data within warps, or data across warps
    (through shared memory) or CTAs."""
    src, dst = (op.operands[:1] + op.result_types[:1]) if op.result_types else (None, None)
    if src is None or dst is None or not all(isinstance(t.encoding, KernelLayout) for t in (src, dst)):
        return
    shape = tuple(src.shape)
    try:
        a, b = src.encoding.bases(shape), dst.encoding.bases(shape)
    except LayoutError as e:
        rep.notes.append(f"no conversion analysis: {e}")
        return
    if len(a.get("lane", [])) != len(b.get("lane", [])) or threads_per_warp != 1 << len(a.get("lane", [])):
        return
    hs, hd = _holders(a, shape), _holders(b, shape)
    if hs.shape != hd.shape:
        return
    lanes = threads_per_warp
    warps_s = hs.reshape(hs.shape[0], -1, lanes).any(axis=2)
    warps_d = hd.reshape(hd.shape[0], -1, lanes).any(axis=2)
    nb = 1 << len(a.get("block", []))
    ctas_s = warps_s.reshape(warps_s.shape[0], nb, -1).any(axis=2)
    ctas_d = warps_d.reshape(warps_d.shape[0], nb, -1).any(axis=2)
    if not (hd & ~hs).any():
        rep.notes.append("no data moves between threads: every thread already holds what it receives")
    elif not (warps_d & ~warps_s).any():
        rep.notes.append("data moves between lanes of a warp only (warp shuffles, or shared memory)")
    elif not (ctas_d & ~ctas_s).any():
        rep.notes.append("data crosses warps: the conversion goes through shared memory")
    else:
        rep.notes.append("data crosses CTAs: the conversion goes through distributed shared memory")


def inspect_module(module: TtgirModule) -> KernelReport:
    """The :class:`KernelReport` of a module already read by :func:`~layoutalg.kernel.ttgir.read_ttgir`."""
    reports = []
    family = _amd_family(module.target)
    for op in module.ops:
        rep = OpReport(op, DATA_OPS[op.name], _values(op))
        if op.name in _SHARED_ACCESS:
            _shared_access(op, rep, family)
        elif op.name in ("ttng.tmem_load", "ttng.tmem_store"):
            _tmem_access(op, rep, module.num_warps)
        elif op.name == "ttg.convert_layout":
            _conversion(op, rep, module.threads_per_warp)
        reports.append(rep)
    return KernelReport(module.target, module.num_warps, module.threads_per_warp, module.num_ctas, module.layouts,
                        reports, module.functions, unknown_ops=list(module.unknown_ops), module=module)


def inspect_ttgir(text: str, strict: bool = False) -> KernelReport:
    """inspect_ttgir(text) -> KernelReport: every data-moving op of a ttgir module with its source line, layouts
    and, for register <-> shared-memory accesses, the predicted wavefronts and bank conflicts. LayoutError
    (naming the line and column) for text that is not well-formed ttgir (``strict``: also for an op of Triton's
    dialects the reader does not know)."""
    return inspect_module(read_ttgir(text, strict))
