"""The descriptors in a kernel's PTX checked against their derivation from its ttgir.

Triton's PTX builds each ``wgmma`` shared-memory descriptor as ``start | C`` (``or`` / ``add`` of a
64-bit constant ``C`` to the tile's start address) and moves each ``tcgen05.mma`` instruction
descriptor into a register as a 32-bit immediate. layoutalg derives both from the ttgir alone:

* wgmma: the operand's ``#ttg.nvmma_shared`` layout on its tile (``KernelLayout.layout``) and
  :func:`~layoutalg.nvidia.hopper.wgmma.k_block_descriptors` for the instruction ``#ttg.nvidia_mma``
  names (``instrShape``) -- every (MN block, k-block) slice's descriptor at start address 0, whose
  start field is the slice's offset, which is what Triton adds; where several warp groups split the
  tile (``warpsPerCTA``), each group's own offset is a run-time value, so the constants are those of
  the first group's MN blocks;
* tcgen05: :func:`~layoutalg.nvidia.blackwell.idesc.make_instr_desc` from the operands' element
  types and majors (``transposed``) and the accumulator's ``#ttng.tensor_memory_encoding`` block.

One documented difference is allowed (docs/gluon.md): the leading byte offset of a swizzled
K-major wgmma operand, which the hardware does not read, is 0 in Triton's words and 1 in layoutalg's
(CuTe's and the PTX ISA's convention); it is left out of the comparison there.

The PTX is searched with regular expressions for these two instruction forms only; nothing in it is
evaluated.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..composed import ComposedLayout
from ..errors import LayoutError
from ..layout import Layout
from ..nvidia.blackwell.idesc import make_instr_desc
from ..nvidia.hopper.descriptor import MatrixDescriptor
from ..nvidia.hopper.wgmma import k_block_descriptors
from .layouts import KernelLayout
from .mlir import MlirType, require_text
from .ttgir import Op, TtgirModule, read_ttgir

__all__ = ["DescriptorCheck", "ptx_wgmma_words", "ptx_tcgen05_idescs", "check_ptx", "ptx_type"]

_CONST = re.compile(r"(?:or|add)\.[bsu]64\s+(%rd\d+),\s*%rd\d+,\s*(-?\d+);")
_WGMMA = re.compile(r"wgmma\.mma_async\.sync\.aligned\.m64n(\d+)k(\d+)\.\S+\s+\{[^}]*\},\s*(\{[^}]*\}|%rd\d+),\s*(%rd\d+),")
_TCGEN05 = re.compile(r"tcgen05\.mma\.[^\s]*\s+\[[^\]]*\],\s*[^,]+,\s*[^,]+,\s*(?P<idesc>[^,;]+)")
_PTX_TYPES = {"f16": "f16", "bf16": "bf16", "f8E4M3FN": "e4m3", "f8E5M2": "e5m2", "f32": "tf32", "i8": "s8"}


def ptx_type(element: Any) -> str:
    """The PTX name of a ttgir element type as an MMA operand (``f8E4M3FN`` -> ``e4m3``, ``f32`` -> ``tf32``)."""
    if not isinstance(element, str) or element not in _PTX_TYPES:
        raise LayoutError(f"{element!r} is no MMA operand type read here ({', '.join(_PTX_TYPES)})")
    return _PTX_TYPES[element]


def ptx_wgmma_words(ptx: str) -> list[tuple[int | None, int]]:
    """(A word or None for a register A, B word) of every ``wgmma.mma_async`` in program order: the 64-bit
    constant Triton combines with each operand's start address."""
    require_text(ptx, "ptx_wgmma_words")
    const = {m[1]: int(m[2]) % (1 << 64) for m in _CONST.finditer(ptx)}
    out = []
    for m in _WGMMA.finditer(ptx):
        a, b = m[3], m[4]
        if b not in const or (not a.startswith("{") and a not in const):
            raise LayoutError(f"wgmma at offset {m.start()}: its descriptor registers are not start | constant")
        out.append((None if a.startswith("{") else const[a], const[b]))
    return out


def ptx_tcgen05_idescs(ptx: str) -> list[int]:
    """The instruction descriptor of every ``tcgen05.mma`` in program order (an immediate, or the constant one
    ``mov`` puts into its register)."""
    require_text(ptx, "ptx_tcgen05_idescs")
    out = []
    for line in ptx.splitlines():
        if not re.search(r"\btcgen05\.mma\.", line):
            continue
        m = _TCGEN05.search(line)
        if m is None:
            raise LayoutError(f"cannot read the instruction descriptor of {line.strip()}")
        op = m["idesc"].strip()
        if re.fullmatch(r"-?\d+|0[xX][0-9a-fA-F]+", op):
            out.append(int(op, 0) & 0xFFFFFFFF)
            continue
        movs = set(re.findall(rf"mov\.[bu]32\s+{re.escape(op)},\s*(-?\d+|0[xX][0-9a-fA-F]+);", ptx))
        if len(movs) != 1:
            raise LayoutError(f"{line.strip()}: register {op} is not set by one constant")
        out.append(int(movs.pop(), 0) & 0xFFFFFFFF)
    return out


@dataclass
class DescriptorCheck:
    """One operand's descriptors (``what``: ``wgmma A``, ``wgmma B``, ``tcgen05 idesc``) of ttgir op ``op``:
    the words derived from the ttgir, the words found in the PTX, and whether the two sets agree."""

    op: Op
    what: str
    derived: list[int]
    found: list[int]
    ok: bool
    notes: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        verdict = "equal" if self.ok else "DIFFER"
        where = self.op.location or f"ttgir line {self.op.line}"
        d = ", ".join(f"0x{w:x}" for w in self.derived[:4]) + (" ..." if len(self.derived) > 4 else "")
        f = ", ".join(f"0x{w:x}" for w in sorted(set(self.found))[:4])
        return f"{where}  {self.what}: derived {d}; PTX {f}: {verdict}" + "".join(f"; {n}" for n in self.notes)


def _fields(word: int, ignore_lbo: bool) -> tuple:
    d = MatrixDescriptor.decode(word)
    return (d.start_address >> 4, None if ignore_lbo else d.lbo_encoded, d.sbo_encoded, d.base_offset, d.swizzle)


def _swap_modes(layout: Any) -> Any:
    """(k, n) -> offset as (n, k) -> offset."""
    inner: Any = layout.inner if isinstance(layout, ComposedLayout) else layout
    swapped = Layout((inner.shape[1], inner.shape[0]), (inner.stride[1], inner.stride[0]))
    return ComposedLayout(layout.outer, layout.offset, swapped) if isinstance(layout, ComposedLayout) else swapped


def _shared(t: MlirType) -> KernelLayout | None:
    enc = t.encoding
    return enc if t.kind == "memdesc" and isinstance(enc, KernelLayout) and enc.memory == "shared" else None


def _wgmma_derived(op: Op) -> list[tuple[str, list[int], bool, Any]]:
    """(operand, derived words, ignore LBO?, the comparison key per word) for the shared operands of a
    warp_group_dot."""
    a, b = op.operands[0], op.operands[1]
    acc = op.result_types[0] if op.result_types else op.operands[2]
    mma = acc.encoding
    if not isinstance(mma, KernelLayout) or mma.attribute != "ttg.nvidia_mma":
        raise LayoutError(f"ttgir line {op.line}: the accumulator of {op.name} has no #ttg.nvidia_mma layout")
    _, n_instr, k_instr = (int(x) for x in mma.params["instrShape"])
    dtype = ptx_type(b.element)
    instr = f"m64n{n_instr}k{k_instr}"
    out = []
    for name, t in (("A", a), ("B", b)):
        kl = _shared(t)
        if kl is None:
            continue
        shape = tuple(t.shape[-2:])
        layout = kl.layout(shape)
        transposed = bool(kl.params.get("transposed", False))
        major = ("MN" if transposed else "K") if name == "A" else ("K" if transposed else "MN")
        if name == "B":
            layout = _swap_modes(layout)
        note = ""
        try:
            kbs = k_block_descriptors(layout, dtype, instr, operand=name)
        except LayoutError:
            # an MN-major operand whose instruction N (a warp group's share) is narrower than its swizzle atom
            # (N = 32 of f16 in a 128B swizzle): each group's descriptor addresses a part of the atom; derived as
            # the atom-wide block at the group's start, whose LBO (the stride between MN atoms) is not read
            sw = int(kl.params.get("swizzlingByteWidth", 0))
            atom_n = sw * 8 // max(1, int(kl.params.get("elementBitWidth", 16)))
            if name != "B" or major != "MN" or not sw or n_instr >= atom_n:
                raise
            kbs = k_block_descriptors(layout, dtype, f"m64n{atom_n}k{k_instr}", operand=name)
            note = f"N = {n_instr} within one {sw}B swizzle atom of {atom_n} elements: LBO not compared"
        # warp groups split the tile (warpsPerCTA: M over groups of 4 warps, N over the second entry); a warp
        # group's own offset is added at run time, so the constants are those of the first group's blocks
        wpc = [int(x) for x in mma.params["warpsPerCTA"]]
        groups = max(1, wpc[0] // 4) if name == "A" else max(1, wpc[1])
        per_group = max(1, (max(kb.mn_block for kb in kbs) + 1) // groups)
        kbs = tuple(kb for kb in kbs if kb.mn_block < per_group)
        ignore = (major == "K" and int(kl.params.get("swizzlingByteWidth", 0)) != 0) or bool(note)
        out.append((name, [kb.descriptor.encode() for kb in kbs], ignore, major + ("; " + note if note else "")))
    return out


#: tc_gen5_mma_scaled's operand formats (``lhs = e4m3``) as PTX types, and K of one instruction per kind
_SCALED_TYPES = {"e4m3": "e4m3", "e5m2": "e5m2", "e2m3": "e2m3", "e3m2": "e3m2", "e2m1": "e2m1"}


def _scaled_formats(op: Op) -> tuple[str, str]:
    m = re.search(r"\blhs\s*=\s*(\w+)\s+rhs\s*=\s*(\w+)", op.text)
    if m is None or m[1] not in _SCALED_TYPES or m[2] not in _SCALED_TYPES:
        raise LayoutError(f"ttgir line {op.line}: {op.name} without 'lhs = <format> rhs = <format>' read here "
                          f"({', '.join(_SCALED_TYPES)})")
    return _SCALED_TYPES[m[1]], _SCALED_TYPES[m[2]]


def _idesc_derived(op: Op) -> list[int]:
    """The instruction descriptors of one tc_gen5_mma(_scaled): one word; block-scaled, one per k-step of the
    tile (the scale-factor ids select the byte of each 32-bit scale column: k-step mod 4)."""
    a, b, d = op.operands[0], op.operands[1], op.operands[2]
    acc = d.encoding
    if not isinstance(acc, KernelLayout) or acc.attribute != "ttng.tensor_memory_encoding":
        raise LayoutError(f"ttgir line {op.line}: the accumulator of {op.name} is not in tensor memory")
    a_kl, b_kl = _shared(a), _shared(b)
    a_major = ("MN" if a_kl.params.get("transposed") else "K") if a_kl is not None else "K"
    b_major = ("K" if b_kl.params.get("transposed") else "MN") if b_kl is not None else "K"
    m = int(acc.params["blockM"])
    n = min(int(acc.params["blockN"]), int(d.shape[-1]))
    if op.name == "ttng.tc_gen5_mma_scaled":
        at, bt = _scaled_formats(op)
        kind = "mxf4" if at == bt == "e2m1" else "mxf8f6f4"
        k_instr = 64 if kind == "mxf4" else 32
        k_tile = int(a.shape[-1]) * (2 if at == "e2m1" else 1)
        words = set()
        for step in range(max(1, k_tile // k_instr)):
            sf_id = (step * k_instr // 32) % 4
            words.add(int(make_instr_desc(kind, at, bt, "f32", m, n, a_major, b_major, scale_type="ue8m0",
                                          sfa_id=sf_id, sfb_id=sf_id, sf_vec_size=32).word))
        return sorted(words)
    at, bt = ptx_type(a.element), ptx_type(b.element)
    kind = {"f16": "f16", "bf16": "f16", "tf32": "tf32", "e4m3": "f8f6f4", "e5m2": "f8f6f4", "s8": "i8"}[at]
    c = {"f32": "f32", "f16": "f16", "i32": "s32"}.get(str(d.element))
    if c is None:
        raise LayoutError(f"ttgir line {op.line}: accumulator type {d.element} is not f32 or f16")
    return [int(make_instr_desc(kind, at, bt, c, m, n, a_major, b_major).word)]


def check_ptx(ttgir: str | TtgirModule, ptx: str) -> list[DescriptorCheck]:
    """Every wgmma descriptor and tcgen05 instruction descriptor of ``ptx`` against the derivation from the
    kernel's ``ttgir`` (text or a read module). One check per operand kind and op configuration: the set of
    words in the PTX must equal the set derived (start, LBO, SBO, base offset and swizzle compared; LBO
    left out where the hardware ignores it)."""
    require_text(ptx, "check_ptx")
    if not isinstance(ttgir, (str, TtgirModule)):
        raise LayoutError(f"check_ptx: expected ttgir text or a TtgirModule, got {type(ttgir).__name__}")
    module = read_ttgir(ttgir) if isinstance(ttgir, str) else ttgir
    checks: list[DescriptorCheck] = []
    wg = [op for op in module.ops if op.name == "ttng.warp_group_dot"]
    if wg:
        words = ptx_wgmma_words(ptx)
        per_op = [(op, d) for op in wg for d in _wgmma_derived(op)]
        seen: set = set()
        for op, (name, derived, ignore, major) in per_op:
            key = (name, tuple(derived))
            if key in seen:
                continue
            seen.add(key)
            got = [w for w in (pair[0] if name == "A" else pair[1] for pair in words) if w is not None]
            # several dots (attention: Q K^T, then P V) share the PTX: each op's words must all be there, and
            # every word there must be some op's
            others = [(d, ig) for _, (n, d, ig, _m) in per_op if n == name]
            mine = {_fields(w, ignore) for w in derived}
            have = {_fields(w, ignore) for w in got}
            stray = [w for w in got if not any(_fields(w, ig) in {_fields(x, ig) for x in d} for d, ig in others)]
            ok = mine <= have and not stray
            kind, _, why = major.partition("; ")
            notes = [f"{kind}-major; {why}" if why else f"{kind}-major; LBO not compared (the hardware ignores it)"] \
                if ignore else [f"{kind}-major"]
            if len(others) > 1:
                notes.append(f"{len(others)} dots share the PTX's wgmma {name} words")
            if stray:
                notes.append("PTX words no dot derives: " + ", ".join(f"0x{w:x}" for w in sorted(set(stray))[:4]))
            checks.append(DescriptorCheck(op, f"wgmma {name}", derived, got, ok, notes))
    mmas = [op for op in module.ops if op.name in ("ttng.tc_gen5_mma", "ttng.tc_gen5_mma_scaled")]
    if mmas:
        idescs = ptx_tcgen05_idescs(ptx)
        want = sorted({w for op in mmas for w in _idesc_derived(op)})
        checks.append(DescriptorCheck(mmas[0], "tcgen05 idesc", want, idescs, set(idescs) == set(want)))
    return checks
