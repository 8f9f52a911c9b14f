"""A CuTe kernel's setup, as CuTe prints it, reported like a compiled kernel: :func:`inspect_cute_prints`.

Paste what a CuTe C++ or CuTe DSL kernel prints of its setup -- ``print(tiled_mma)``, ``print(tiled_copy)``,
``print(sA)`` of its shared-memory tensors or layouts (swizzled ones included) -- each optionally after a
``name:`` line or as ``name: <print>`` on one line. Every block is read by :func:`layoutalg.parse.parse_setup`
and every layout or tensor by :func:`layoutalg.parse.parse` (grammars; nothing is evaluated). The report gives:

* each object with its layouts (a tiled MMA's A / B / C TV layouts, a tiled copy's TV layout and tiler, a
  shared tensor's coordinate -> element offset);
* for every tiled copy and every shared-memory tile it can partition, the bank wavefronts of each
  instruction (:func:`layoutalg.banks.analyze_copy`; the copy atom is rebuilt from its printed value
  layouts; its shared side is the side whose value layout differs from the reference one -- ``S`` for
  ``ldmatrix``, ``D`` for ``stmatrix`` -- and, where source and destination are alike, ``cp.async`` /
  ``UniversalCopy``, the side written ``*_s2r`` / ``*_r2s`` / ``*_g2s`` in the copy's name, else the
  source);
* for a wgmma tiled MMA reading A and/or B from shared memory (its printed A / B TV layouts give every
  thread the whole tile), the descriptors of every k-block of the shared tiles named ``sA`` / ``sB``
  (:func:`layoutalg.nvidia.hopper.wgmma.k_block_descriptors`, element width from the tensor's pointer).

    >>> r = inspect_cute_prints('''
    ... copy:
    ... TiledCopy
    ...   Tiler_MN:       (_16,_64)
    ...   TiledLayout_TV: ((_8,_16),_8):((_128,_1),_16)
    ... Copy_Atom
    ...   ThrID:        _1:_0
    ...   ValLayoutSrc: (_1,_8):(_0,_1)
    ...   ValLayoutDst: (_1,_8):(_0,_1)
    ...   ValLayoutRef: (_1,_8):(_0,_1)
    ...   ValueType:    16b
    ... sA: smem_ptr[16b](0x2000) o (_128,_64):(_64,_1)''')
    >>> [o.name for o in r.objects], r.copies[0].banks.ways
    (['copy', 'sA'], 1)
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..errors import LayoutError

__all__ = ["CuteObject", "CopyBanks", "MmaDescriptors", "CuteReport", "inspect_cute_prints", "is_cute_prints"]


@dataclass
class CuteObject:
    """One pasted object: its ``name`` (given, or ``object<n>``), ``kind`` (``TiledMMA``, ``TiledCopy``,
    ``shared tensor``, ``tensor``, ``layout``), the parsed ``value`` and the ``line`` it starts on."""

    name: str
    kind: str
    value: Any
    line: int
    text: str

    @property
    def shared(self) -> bool:
        """Is this a shared-memory tile (a tensor on a shared pointer, a swizzled layout, or named ``s...``)?"""
        if self.kind == "shared tensor":
            return True
        if self.kind in ("layout", "composed layout"):
            return self.kind == "composed layout" or bool(re.match(r"(?i)s[A-Z_]|smem|shared", self.name))
        return False

    def layouts(self) -> dict[str, Any]:
        """The object's layouts by label."""
        from ..parse.prints import SetupPrint

        v = self.value
        if isinstance(v, SetupPrint):
            return v.layouts()
        if self.kind.endswith("tensor"):
            return {"layout": v.layout, "coordinate -> element offset": v.function}
        return {"layout": v}


@dataclass
class CopyBanks:
    """The banks of one tiled copy over one shared tile: ``side`` in shared memory (``S`` / ``D``), the
    :class:`~layoutalg.banks.BankReport`."""

    copy: str
    smem: str
    side: str
    banks: Any
    note: str = ""

    def __str__(self) -> str:
        b = self.banks
        ways = "conflict-free" if b.conflict_free else f"{b.ways}-way bank conflicts"
        side = "reads" if self.side == "S" else "writes"
        return (f"{self.copy} {side} {self.smem}: {b.access_bytes}-byte accesses, {len(b.instructions)} warp instructions, "
                f"{b.wavefronts} wavefronts (ideal {b.ideal}), {ways}" + (f" ({self.note})" if self.note else ""))


@dataclass
class MmaDescriptors:
    """The shared-memory descriptors of one MMA operand: every (MN block, k-block) of the tile."""

    mma: str
    operand: str
    smem: str
    instruction: str
    dtype: str
    blocks: list = field(default_factory=list)

    def __str__(self) -> str:
        words = ", ".join(f"0x{kb.descriptor.encode():016x}" for kb in self.blocks[:4])
        more = " ..." if len(self.blocks) > 4 else ""
        return (f"{self.mma} operand {self.operand} from {self.smem} ({self.instruction}, {self.dtype}): "
                f"{len(self.blocks)} k-block descriptors {words}{more}")


@dataclass
class CuteReport:
    """What :func:`inspect_cute_prints` found: the objects, the banks of each copy over each shared tile, the
    descriptors of each MMA operand read from shared memory, and notes (pairs that could not be analysed)."""

    objects: list[CuteObject]
    copies: list[CopyBanks]
    descriptors: list[MmaDescriptors]
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The report as plain data (JSON-ready)."""
        return {"objects": [{"name": o.name, "kind": o.kind, "line": o.line,
                             "layouts": {k: str(v) for k, v in o.layouts().items()}} for o in self.objects],
                "copies": [{"copy": c.copy, "smem": c.smem, "side": c.side, "vector_bytes": c.banks.access_bytes,
                            "instructions": len(c.banks.instructions), "wavefronts": c.banks.wavefronts,
                            "ideal": c.banks.ideal, "ways": c.banks.ways} for c in self.copies],
                "descriptors": [{"mma": d.mma, "operand": d.operand, "smem": d.smem, "instruction": d.instruction,
                                 "dtype": d.dtype, "words": [hex(kb.descriptor.encode()) for kb in d.blocks]}
                                for d in self.descriptors],
                "notes": list(self.notes)}

    def __str__(self) -> str:
        out = [f"CuTe setup: {len(self.objects)} objects", ""]
        for o in self.objects:
            out.append(f"{o.name} ({o.kind}, line {o.line})")
            out += [f"    {k}: {v}" for k, v in o.layouts().items()]
        if self.copies:
            out += ["", "shared-memory banks:"] + [f"  {c}" for c in self.copies]
        if self.descriptors:
            out += ["", "descriptors:"] + [f"  {d}" for d in self.descriptors]
        if self.notes:
            out += [""] + [f"note: {n}" for n in self.notes]
        return "\n".join(out)


def is_cute_prints(text: str) -> bool:
    """Does ``text`` look like pasted CuTe prints (a setup block header, or a CuTe layout / tensor print)?"""
    from ..parse.prints import HEADERS

    if not isinstance(text, str):
        return False
    for line in text.splitlines():
        s = line.strip()
        if not s or s.endswith(":") and " " not in s:
            continue
        if s in HEADERS:
            return True
        value = s.split(": ", 1)[1] if re.match(r"[A-Za-z_]\w*:\s", s) else s
        return bool(re.match(r"(Sw<|smem_ptr|gmem_ptr|ptr\[|\(|_\d|\d)", value))
    return False


_NAME_LINE = re.compile(r"([A-Za-z_][\w.]*)\s*:\s*$")
_NAMED_VALUE = re.compile(r"([A-Za-z_][\w.]*)\s*:\s+(\S.*)$")


def _chunks(text: str) -> list[tuple[str | None, int, str, bool]]:
    """(name, first line, text, is a setup block) of each pasted object."""
    from ..parse.prints import HEADERS

    out: list[tuple[str | None, int, str, bool]] = []
    pending: str | None = None
    block: list[str] = []
    start = 0
    bname: str | None = None

    def close() -> None:
        nonlocal block
        if block:
            out.append((bname, start, "\n".join(block), True))
            block = []

    for n, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        if not s:
            continue
        indented = line[:1] in (" ", "\t")
        if s in HEADERS:
            if block and not indented and _continues(block, s):
                block.append(line)
                continue
            close()
            bname, start, block = pending, n, [line]
            pending = None
            continue
        if block and indented:
            block.append(line)
            continue
        close()
        m = _NAME_LINE.fullmatch(s)
        if m:
            pending = m[1]
            continue
        m = _NAMED_VALUE.fullmatch(s)
        if m and not s.startswith(("Sw<", "smem_ptr", "gmem_ptr")):
            out.append((m[1], n, m[2], False))
        else:
            out.append((pending, n, s, False))
        pending = None
    close()
    return out


def _continues(block: list[str], header: str) -> bool:
    """Does ``header`` continue the setup block (a tiled block's atom, a slice's tiled block)?"""
    from ..parse.prints import HEADERS

    kinds = [HEADERS[x.strip()] for x in block if x.strip() in HEADERS]
    chain = {"ThrMMA": "TiledMMA", "TiledMMA": "MMA_Atom", "ThrCopy": "TiledCopy", "TiledCopy": "Copy_Atom"}
    return chain.get(kinds[-1]) == HEADERS[header]


def _read(name: str | None, line: int, text: str, is_block: bool, k: int) -> CuteObject:
    from ..composed import ComposedLayout
    from ..parse import parse, parse_setup
    from ..parse.tensors import ParsedTensor

    label = name or f"object{k}"
    try:
        if is_block:
            v: Any = parse_setup(text)
            return CuteObject(label, v.kind, v, line, text)
        v = parse(text)
    except LayoutError as e:
        raise LayoutError(f"line {line}: {label}: {e}") from None
    if isinstance(v, ParsedTensor):
        kind = "shared tensor" if v.pointer.space == "smem" else "tensor"
    elif isinstance(v, ComposedLayout):
        kind = "composed layout"
    else:
        kind = "layout"
    return CuteObject(label, kind, v, line, text)


def _value_bits(atom: Any) -> int:
    vt = str(atom.get("ValueType", ""))
    m = re.fullmatch(r"(\d+)b", vt)
    if m:
        return int(m[1])
    from ..nvidia.common.dtypes import dtype_name

    names = {"f16": 16, "bf16": 16, "f32": 32, "tf32": 32, "f64": 64, "e4m3": 8, "e5m2": 8, "s8": 8, "u8": 8,
             "s32": 32, "u32": 32, "s16": 16, "u16": 16}
    try:
        return names[dtype_name(vt)]
    except (LayoutError, KeyError):
        raise LayoutError(f"the copy atom's value type {vt!r} is not read (16b, f16, ...)") from None


def _tiled_copy(obj: CuteObject) -> tuple[Any, str, str]:
    """(TiledCopy, shared side, why that side) rebuilt from a TiledCopy print."""
    from ..algebra import recast_layout
    from ..tiled import CopyAtom, TiledCopy

    sp = obj.value
    atom = sp.atom
    if atom is None or atom.kind != "Copy_Atom":
        raise LayoutError(f"{obj.name}: the TiledCopy print has no Copy_Atom block")
    bits = _value_bits(atom)
    src, dst, ref = atom["ValLayoutSrc"], atom["ValLayoutDst"], atom["ValLayoutRef"]
    if src != ref and dst == ref:
        side, why = "S", "its source value layout differs from the reference (ldmatrix-like)"
    elif dst != ref and src == ref:
        side, why = "D", "its destination value layout differs from the reference (stmatrix-like)"
    elif re.search(r"(?i)r2s|s2g|store", obj.name):
        side, why = "D", "source and destination alike; the name says it writes shared memory"
    elif re.search(r"(?i)g2s|s2r|load|ldsm", obj.name):
        side, why = ("D", "source and destination alike; the name says global -> shared") if re.search(r"(?i)g2s", obj.name) \
            else ("S", "source and destination alike; the name says it reads shared memory")
    else:
        side, why = "S", "source and destination alike; taken as reading shared memory"

    def reg_bits(v: Any) -> int:
        return min(128, int(v[1].size()) * bits)

    ca = CopyAtom(f"{obj.name} atom", atom["ThrID"], recast_layout(src, bits, 1), recast_layout(dst, bits, 1),
                  recast_layout(ref, bits, 1), bits,
                  src_register_bits=reg_bits(src) if side == "S" else bits,
                  dst_register_bits=reg_bits(dst) if side == "D" else bits, smem_side=side)
    return TiledCopy(ca, sp["TiledLayout_TV"], sp["Tiler_MN"]), side, why


def _smem_function(obj: CuteObject) -> Any:
    return obj.value.function if obj.kind.endswith("tensor") else obj.value


def _element_bits(obj: CuteObject) -> int | None:
    return int(obj.value.bits) if obj.kind.endswith("tensor") else None


def _mma_descriptors(obj: CuteObject, shared: list[CuteObject], rep: CuteReport) -> None:
    from ..nvidia.hopper.wgmma import k_block_descriptors

    sp = obj.value
    atom = sp.atom
    if atom is None or "Shape_MNK" not in atom:
        return
    m, n, k = (int(x) for x in atom["Shape_MNK"])
    nthr = int(atom["ThrID"].size())
    for operand, key in (("A", "LayoutA_TV"), ("B", "LayoutB_TV")):
        tv = atom.get(key)
        if tv is None or int(tv[0].size()) != nthr or any(int(s) != 0 for s in _flat(tv[0].stride)):
            continue  # the operand is distributed over threads: registers, no descriptor
        if nthr != 128:
            rep.notes.append(f"{obj.name}: operand {operand} is read from shared memory by a {nthr}-thread atom; "
                             "descriptors are derived for wgmma (128 threads) here")
            continue
        cands = [s for s in shared if re.fullmatch(rf"(?i)s_?{operand}|smem_?{operand}|{operand}_?smem|s{operand}\w*", s.name)]
        if not cands:
            rep.notes.append(f"{obj.name}: operand {operand} comes from shared memory; name its tile s{operand} to "
                             "derive its descriptors")
            continue
        s = cands[0]
        bits = _element_bits(s)
        if bits is None:
            rep.notes.append(f"{obj.name}: {s.name} is a layout without a pointer; print the tensor (its pointer names "
                             "the element width) to derive descriptors")
            continue
        dtype = {16: "f16", 8: "e4m3", 32: "tf32"}.get(bits)
        if dtype is None:
            rep.notes.append(f"{obj.name}: {bits}-bit elements in {s.name} are no wgmma operand")
            continue
        instr = f"m{m}n{n}k{k}"
        try:
            blocks = k_block_descriptors(_smem_function(s), dtype, instr, operand=operand)
        except LayoutError as e:
            rep.notes.append(f"{obj.name} operand {operand} from {s.name}: no descriptors: {e}")
            continue
        rep.descriptors.append(MmaDescriptors(obj.name, operand, s.name, instr, dtype, list(blocks)))


def _flat(x: Any) -> list:
    if isinstance(x, tuple):
        return [y for e in x for y in _flat(e)]
    return [x]


def inspect_cute_prints(text: str) -> CuteReport:
    """inspect_cute_prints(text) -> CuteReport: pasted CuTe prints of a kernel's setup (see the module)."""
    from ..banks import analyze_copy

    if not isinstance(text, str):
        raise LayoutError(f"inspect_cute_prints: expected the pasted prints as text, got {type(text).__name__}")
    objects = [_read(name, line, chunk, blk, k) for k, (name, line, chunk, blk) in enumerate(_chunks(text))]
    if not objects:
        raise LayoutError("inspect_cute_prints: no CuTe print in the text")
    seen: dict[str, int] = {}
    for o in objects:
        if o.name in seen:
            raise LayoutError(f"line {o.line}: the name {o.name} is used twice (line {seen[o.name]})")
        seen[o.name] = o.line
    rep = CuteReport(objects, [], [])
    shared = [o for o in objects if o.shared]
    for o in objects:
        if o.kind == "TiledCopy":
            try:
                tc, side, why = _tiled_copy(o)
            except LayoutError as e:
                rep.notes.append(f"{o.name}: not rebuilt: {e}")
                continue
            for s in shared:
                try:
                    eb = max(1, tc.atom.value_bits // 8)
                    b = analyze_copy(tc, _smem_function(s), side=side, element_bytes=eb)
                except LayoutError as e:
                    rep.notes.append(f"{o.name} over {s.name}: no bank analysis: {e}")
                    continue
                rep.copies.append(CopyBanks(o.name, s.name, side, b, why))
        elif o.kind == "TiledMMA":
            _mma_descriptors(o, shared, rep)
    return rep
