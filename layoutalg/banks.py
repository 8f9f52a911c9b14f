"""Shared-memory bank conflicts: how many wavefronts one warp-wide access takes, and who collides.

Shared memory is 32 *banks*, each 4 bytes wide: byte address ``a`` lives in 4-byte word
``a // 4`` of bank ``(a // 4) % 32``. In one pass (a *wavefront*) every bank delivers one
word, to as many threads as asked for that word (a broadcast costs nothing). So a request
needs as many wavefronts as the busiest bank has *distinct* words to deliver.

Worked by hand: 32 threads read ``float`` ``x[2*t]``. Thread ``t`` reads word ``2t``, bank
``2t % 32``; banks 0, 2, ..., 30 each get two distinct words (``t`` and ``t + 16``), odd banks
none: 2 wavefronts where one would do -- a 2-way conflict::

    >>> r = address_report([8 * t for t in range(32)], 4)
    >>> r.wavefronts, r.ideal, r.ways
    (2, 1, 2)
    >>> r.conflicts[0]
    BankConflict(bank=0, words=((0, (0,)), (32, (16,))))

The model (the usual one for sm_70 .. sm_90; NVIDIA's CUDA C++ Programming Guide, "Shared
Memory" of compute capability 5.x and later, for the 32 banks of 4 bytes and the broadcast
rule; the 8/16-byte phases are NVIDIA's long-standing description of wide accesses, which
Nsight Compute reports as "shared wavefronts"):

- accesses of at most 4 bytes: all 32 threads form one *phase*;
- 8-byte accesses: two phases, threads 0-15 and 16-31;
- 16-byte accesses (``ld.shared.v4``, ``ldmatrix``, where each group of 8 lanes supplies
  the 8 row addresses of one 8x8 matrix): four phases of 8 threads.

Each phase is served on its own: ``wavefronts(phase) = max over banks of the distinct
4-byte words requested in that bank``; an instruction costs the sum over its phases. The
*ideal* is what the same bytes would cost with no bank asked twice:
``sum over phases of ceil(distinct words / 32)`` -- 1 for a 4-byte access of 32 threads, 4
for 16-byte accesses. An access is conflict-free when the two agree. The model ignores
hardware details that make some patterns cheaper (e.g. merging of phases that touch the
same words) and is therefore an upper bound in those cases.

:func:`analyze` takes what a kernel author writes down: a shared-memory layout
(coordinate -> element offset, a :class:`~layoutalg.layout.Layout` or a swizzled
:class:`~layoutalg.composed.ComposedLayout`), the element size, and an *access pattern*: a
TV layout ``(thread, value) -> coordinate index`` of that smem layout (its 1-D,
colexicographic index), the values of one instruction being ``vector_bytes /
element_bytes`` consecutive values of a thread.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from collections.abc import Sequence

import numpy as np

from .errors import LayoutError, guarded
from .hooks import svg_of
from .layout import check_table_size
from .parse import as_concrete_layout
from .tensor import Tensor, make_tensor, underscore
from .tiled import TiledCopy, copy_instructions

__all__ = [
    "NUM_BANKS",
    "BANK_BYTES",
    "WAVEFRONT_BYTES",
    "phases",
    "phase_report",
    "phase_costs",
    "address_costs",
    "BankConflict",
    "Instruction",
    "BankReport",
    "address_report",
    "analyze",
    "access_addresses",
    "analyze_copy",
    "FirstConflict",
]

#: Banks of shared memory.
NUM_BANKS = 32
#: Width of one bank (bytes).
BANK_BYTES = 4
#: Bytes one wavefront can deliver: 32 banks x 4 bytes.
WAVEFRONT_BYTES = NUM_BANKS * BANK_BYTES

_ACCESS_BYTES = (1, 2, 4, 8, 16)


def phases(access_bytes: int, num_threads: int = 32) -> tuple[tuple[int, ...], ...]:
    """The groups of lanes served together: 1 phase for <= 4 B, 2 half-warps for 8 B, 4 quarter-warps for 16 B.

    >>> [len(p) for p in phases(16)], phases(8)[1][:3]
    ([8, 8, 8, 8], (16, 17, 18))
    """
    if access_bytes not in _ACCESS_BYTES:
        raise LayoutError(
            f"phases: access of {access_bytes} bytes; shared-memory accesses are {_ACCESS_BYTES} bytes"
        )
    per = 32 if access_bytes <= 4 else (16 if access_bytes == 8 else 8)
    return tuple(tuple(range(s, min(s + per, num_threads))) for s in range(0, num_threads, per))


@dataclass(frozen=True)
class BankConflict:
    """One bank asked for more than one distinct word in one phase: ``words`` = ((word, lanes), ...)."""

    bank: int
    words: tuple

    @property
    def ways(self) -> int:
        """Distinct words the bank must deliver (the conflict's degree)."""
        return len(self.words)


@dataclass(frozen=True)
class Instruction:
    """One warp-wide access: byte address per lane, the model's wavefronts and who collided.

    ``schedule[w]`` is wavefront ``w``: a tuple of ``(bank, word, lanes)`` served in it
    (phases one after another, within a phase a bank's words in increasing order).
    """

    addresses: tuple  # byte address per lane (None: lane inactive)
    access_bytes: int
    wavefronts: int
    ideal: int
    conflicts: tuple  # BankConflict, in phase order then bank order
    schedule: tuple
    label: str = ""

    @property
    def ways(self) -> int:
        """Largest number of distinct words any bank had to deliver in one phase (1: conflict-free banks)."""
        return max([c.ways for c in self.conflicts], default=1)

    @property
    def conflict_free(self) -> bool:
        """wavefronts == ideal."""
        return self.wavefronts == self.ideal

    @property
    def first_conflict(self) -> FirstConflict | None:
        """The first bank asked for two distinct words in one phase, and the first lane of each word."""
        for c in self.conflicts:
            (w0, l0), (w1, l1) = c.words[0], c.words[1]
            return FirstConflict(self.label, c.bank, l0[0], l1[0], 4 * w0, 4 * w1)
        return None


@dataclass(frozen=True)
class FirstConflict:
    """Two lanes of one instruction that collide: same bank, different 4-byte words (byte addresses)."""

    instruction: str
    bank: int
    lane_a: int
    lane_b: int
    address_a: int
    address_b: int

    def __str__(self) -> str:
        return (f"{self.instruction}: lanes {self.lane_a} and {self.lane_b} both hit bank {self.bank} "
                f"(bytes {self.address_a} and {self.address_b})")


@guarded
def phase_costs(addresses: Sequence[Any], access_bytes: int, groups: Sequence[Sequence[int]], *,
                num_banks: int = NUM_BANKS, bank_bytes: int = BANK_BYTES) -> tuple[int, int]:
    """``(wavefronts, ideal)`` of :func:`phase_report` on the same arguments, without its conflicts and schedule
    (the same bank model, at about a third of the cost: what a search over many layouts needs). Per phase: the
    distinct bank words its lanes touch; it costs its busiest bank's count, ideally ``ceil(words / num_banks)``.

    >>> phase_costs([0, 256, 4, 4], 4, [(0, 1), (2, 3)], num_banks=64)
    (3, 2)
    """
    total = ideal = 0
    n_addr = len(addresses)
    span = access_bytes - 1
    for phase in groups:
        words: set[int] = set()
        for lane in phase:
            a = addresses[lane] if lane < n_addr else None
            if a is None:
                continue
            w0, w1 = a // bank_bytes, (a + span) // bank_bytes
            if w0 == w1:
                words.add(w0)
            else:
                words.update(range(w0, w1 + 1))
        if not words:
            continue
        per_bank: dict[int, int] = {}
        for w in words:
            b = w % num_banks
            per_bank[b] = per_bank.get(b, 0) + 1
        total += max(per_bank.values())
        ideal += -(-len(words) // num_banks)
    return total, ideal


@guarded
def address_costs(addresses: Sequence[Any], access_bytes: int) -> tuple[int, int]:
    """``(wavefronts, ideal)`` of :func:`address_report` (one warp access, NVIDIA's phases), by :func:`phase_costs`.

    >>> address_costs([16 * t for t in range(32)], 16), address_costs([0] * 32, 4)
    ((4, 4), (1, 1))
    """
    addrs = _check_addresses(addresses, access_bytes, "address_costs")
    return phase_costs(addrs, access_bytes, phases(access_bytes, len(addrs)))


def _instruction(addresses: Sequence[Any], access_bytes: int, label: str = "") -> Instruction:
    return phase_report(addresses, access_bytes, phases(access_bytes, len(addresses)), label=label)


@guarded
def phase_report(addresses: Sequence[Any], access_bytes: int, groups: Sequence[Sequence[int]], *,
                 num_banks: int = NUM_BANKS, bank_bytes: int = BANK_BYTES, label: str = "") -> Instruction:
    """One access under any bank model: ``groups`` are the lanes served together (one phase each),
    ``num_banks`` banks of ``bank_bytes`` bytes. Lane ``l`` touches the bank words of bytes
    ``[addresses[l], addresses[l] + access_bytes)`` (``None``: idle); a phase costs its busiest bank's
    distinct words. :func:`address_report` is this with NVIDIA's phases, 32 banks of 4 bytes;
    :mod:`layoutalg.amd.lds` passes AMD's LDS phases (no checks here: callers check addresses).

    >>> phase_report([0, 256, 4, 4], 4, [(0, 1), (2, 3)], num_banks=64).wavefronts   # 2-way, then broadcast
    3
    """
    total = ideal = 0
    conflicts: list[BankConflict] = []
    schedule: list[tuple] = []
    n_addr = len(addresses)
    span = access_bytes - 1
    for phase in groups:
        by_bank: dict[int, dict[int, list[int]]] = {}
        for lane in phase:
            a = addresses[lane] if lane < n_addr else None
            if a is None:
                continue
            for word in range(a // bank_bytes, (a + span) // bank_bytes + 1):
                bank = word % num_banks
                ws_of = by_bank.get(bank)
                if ws_of is None:
                    by_bank[bank] = {word: [lane]}
                else:
                    ls = ws_of.get(word)
                    if ls is None:
                        ws_of[word] = [lane]
                    else:
                        ls.append(lane)
        if not by_bank:
            continue
        # per bank, its words in order, each with the lanes that touch it (sorted once, read by both lists below)
        words = []
        depth = distinct = 0
        for bank in sorted(by_bank):
            d = by_bank[bank]
            ws = [(w, tuple(d[w])) for w in sorted(d)] if len(d) > 1 else [(w, tuple(ls)) for w, ls in d.items()]
            words.append((bank, ws))
            distinct += len(ws)
            if len(ws) > depth:
                depth = len(ws)
            if len(ws) > 1:
                conflicts.append(BankConflict(bank, tuple(ws)))
        total += depth
        ideal += -(-distinct // num_banks)
        if depth == 1:
            schedule.append(tuple((bank,) + ws[0] for bank, ws in words))
        else:
            for w in range(depth):
                schedule.append(tuple((bank,) + ws[w] for bank, ws in words if w < len(ws)))
    return Instruction(tuple(addresses), access_bytes, total, ideal, tuple(conflicts), tuple(schedule), label)


@dataclass(frozen=True)
class BankReport:
    """The analysis of one or more warp-wide accesses: per-instruction results and totals."""

    instructions: tuple
    access_bytes: int
    description: str = ""

    @property
    def wavefronts(self) -> int:
        """Sum of the instructions' wavefronts."""
        return sum(i.wavefronts for i in self.instructions)

    @property
    def ideal(self) -> int:
        """Sum of the instructions' ideal wavefronts."""
        return sum(i.ideal for i in self.instructions)

    @property
    def conflict_free(self) -> bool:
        """Every instruction takes its ideal number of wavefronts."""
        return all(i.conflict_free for i in self.instructions)

    @property
    def ways(self) -> int:
        """The worst conflict degree over all instructions (1 when no bank is asked twice)."""
        return max((i.ways for i in self.instructions), default=1)

    @property
    def conflicts(self) -> tuple:
        """All BankConflict records, instruction after instruction."""
        return tuple(c for i in self.instructions for c in i.conflicts)

    @property
    def first_conflict(self) -> FirstConflict | None:
        """The first conflicting pair of lanes of the first instruction that has one (None if conflict-free)."""
        for ins in self.instructions:
            fc = ins.first_conflict
            if fc is not None:
                return fc
        return None

    def summary(self, max_conflicts: int = 4, *, detail: bool = False) -> str:
        """A few lines of text: the totals and, for up to four instructions, each one's wavefronts and
        worst conflicts; a longer report is folded into groups of instructions with the same outcome
        (count, wavefronts, ideal, degree), its worst instruction and its first conflict -- at most
        about ten lines. ``detail=True`` (or :meth:`details`) lists every instruction."""
        if detail or len(self.instructions) <= 4:
            return self.details(max_conflicts)
        lines = self.details(max_conflicts).splitlines()[: 2 if self.description else 1]
        groups: dict = {}
        for ins in self.instructions:
            groups.setdefault((ins.wavefronts, ins.ideal, ins.ways), []).append(ins)
        for (wf, ideal, ways), members in sorted(groups.items(), key=lambda kv: (-kv[0][2], -kv[0][0]))[:4]:
            how = "conflict-free" if wf == ideal else f"{ways}-way bank conflict"
            lines.append(f"  {len(members)} instruction{'s' if len(members) > 1 else ''}: {wf} wavefronts "
                         f"(ideal {ideal}), {how}; e.g. {members[0].label or 'instruction'}")
        if len(groups) > 4:
            lines.append(f"  ... {len(groups) - 4} more kinds of instruction")
        worst = max(self.instructions, key=lambda i: (i.wavefronts - i.ideal, i.ways))
        if not worst.conflict_free:
            for c in sorted(worst.conflicts, key=lambda c: -c.ways)[: min(2, max_conflicts)]:
                desc = ", ".join(f"word {w} <- lane{'s' if len(ls) > 1 else ''} {','.join(map(str, ls))}"
                                 for w, ls in c.words)
                lines.append(f"  worst, {worst.label}: bank {c.bank:2d}: {c.ways}-way: {desc}")
        fc = self.first_conflict
        if fc is not None:
            lines.append(f"  first conflict: {fc}")
        lines.append(f"  ({len(self.instructions)} instructions; every one: report.details())")
        return "\n".join(lines)

    def details(self, max_conflicts: int = 4) -> str:
        """Every instruction: its wavefronts and its worst ``max_conflicts`` conflicting banks."""
        head = self.description + "\n" if self.description else ""
        verdict = "conflict-free" if self.conflict_free else f"{self.ways}-way bank conflict"
        lines = [
            f"{head}{len(self.instructions)} instruction(s) of {self.access_bytes}-byte accesses: "
            f"{self.wavefronts} wavefronts, ideal {self.ideal} ({verdict})"
        ]
        for k, ins in enumerate(self.instructions):
            name = ins.label or f"instruction {k}"
            lines.append(f"  {name}: {ins.wavefronts} wavefronts (ideal {ins.ideal})")
            worst = sorted(ins.conflicts, key=lambda c: -c.ways)[:max_conflicts]
            for c in worst:
                desc = ", ".join(
                    f"word {w} <- lane{'s' if len(ls) > 1 else ''} {','.join(map(str, ls))}"
                    for w, ls in c.words
                )
                lines.append(f"    bank {c.bank:2d}: {c.ways}-way: {desc}")
            if len(ins.conflicts) > max_conflicts:
                lines.append(f"    ... {len(ins.conflicts) - max_conflicts} more conflicting banks")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()

    def __repr__(self) -> str:
        verdict = "conflict-free" if self.conflict_free else f"{self.ways}-way bank conflict"
        return (f"BankReport({len(self.instructions)} instruction(s) of {self.access_bytes}-byte accesses: "
                f"{self.wavefronts} wavefronts, ideal {self.ideal}, {verdict})")

    def _repr_html_(self) -> str:
        """Notebooks: the short summary, the picture (drawn by layoutalg.viz through
        :mod:`layoutalg.hooks`) and every instruction folded in a ``<details>`` element."""
        import html

        svg = svg_of(self) or ""
        return (f"<div><pre>{html.escape(self.summary())}</pre>{svg}<details><summary>every instruction "
                f"({len(self.instructions)})</summary><pre>{html.escape(self.details())}</pre></details></div>")


def _check_addresses(addresses: Any, access_bytes: int, op: str) -> list:
    if access_bytes not in _ACCESS_BYTES:
        raise LayoutError(
            f"{op}: access_bytes={access_bytes}; shared-memory accesses are {_ACCESS_BYTES} bytes"
        )
    # the common case first: a list of at most 32 lanes, every one an aligned int
    if (type(addresses) in (list, tuple) and 1 <= len(addresses) <= 32
            and all(type(a) is int and a >= 0 and not a % access_bytes for a in addresses)):
        return list(addresses)
    out: list[int | None] = []
    if isinstance(addresses, (str, bytes)) or not hasattr(addresses, "__iter__"):
        raise LayoutError(f"{op}: addresses {addresses!r} is not a sequence of byte addresses (ints, None for idle lanes)")
    for lane, a in enumerate(addresses):
        if a is None:
            out.append(None)
            continue
        if isinstance(a, bool) or not isinstance(a, (int, np.integer)):
            raise LayoutError(f"{op}: lane {lane} has address {a!r}, not an int (or None for an idle lane)")
        a = int(a)
        if a < 0:
            raise LayoutError(f"{op}: lane {lane} has negative byte address {a}")
        if a % access_bytes:
            raise LayoutError(
                f"{op}: lane {lane} address {a} is not aligned to the {access_bytes}-byte access "
                f"(shared-memory accesses must be naturally aligned)"
            )
        out.append(a)
    if not 1 <= len(out) <= 32:
        raise LayoutError(f"{op}: {len(out)} addresses given; one warp-wide access has 1 to 32 lanes")
    return out


def address_report(addresses: Sequence[Any], access_bytes: int, *, description: str = "") -> BankReport:
    """Wavefronts of one warp access: lane ``l`` touches bytes ``[addresses[l], addresses[l] + access_bytes)``.

    ``None`` marks an inactive lane. Preconditions: at most 32 lanes, addresses >= 0 and
    aligned to ``access_bytes`` (one of 1, 2, 4, 8, 16).

    >>> address_report([16 * t for t in range(32)], 16).wavefronts    # 512 contiguous bytes
    4
    >>> address_report([0] * 32, 4).wavefronts                          # broadcast
    1
    """
    addrs = _check_addresses(addresses, access_bytes, "address_report")
    return BankReport((_instruction(addrs, access_bytes),), access_bytes, description)


def _as_layout(x: Any, op: str, what: str) -> Any:
    return as_concrete_layout(x, op, what)


def access_addresses(
    smem: Any, access: Any, element_bytes: int, vector_bytes: int | None = None
) -> np.ndarray:
    """Byte address array ``A[t, k]``: thread ``t``'s ``k``-th vector access, ``element_bytes * smem(access(t, k*n))``.

    ``n = vector_bytes / element_bytes`` consecutive values of a thread form one vector access;
    they must land on consecutive, ``vector_bytes``-aligned bytes (LayoutError otherwise).
    """
    op = "access_addresses"
    smem = _as_layout(smem, op, "shared-memory layout")
    access = _as_layout(access, op, "access pattern")
    if element_bytes not in _ACCESS_BYTES:
        raise LayoutError(f"{op}: element_bytes={element_bytes} is not one of {_ACCESS_BYTES}")
    vb = element_bytes if vector_bytes is None else vector_bytes
    if vb not in _ACCESS_BYTES or vb % element_bytes:
        raise LayoutError(
            f"{op}: vector_bytes={vb} must be one of {_ACCESS_BYTES} and a multiple of element_bytes={element_bytes}"
        )
    if len(access) != 2:
        raise LayoutError(
            f"{op}: access pattern {access} has rank {len(access)}; expected a TV layout (thread, value)"
        )
    check_table_size(access, op)
    check_table_size(smem, op)
    T, V = int(access[0].size()), int(access[1].size())
    n = vb // element_bytes
    if V % n:
        raise LayoutError(
            f"{op}: {V} values per thread is not a multiple of the {n} elements of a {vb}-byte vector"
        )
    idx = np.asarray(access.table(), dtype=np.int64).reshape(V, T).T  # idx[t, v] = access(t, v)
    S = int(smem.size())
    if idx.min() < 0 or idx.max() >= S:
        bad = np.argwhere((idx < 0) | (idx >= S))[0]
        raise LayoutError(
            f"{op}: access({bad[0]}, {bad[1]}) = {idx[bad[0], bad[1]]} is outside the shared-memory layout's "
            f"domain [0, {S}) of {smem}"
        )
    offsets = np.asarray(smem.table(), dtype=np.int64)[idx] * element_bytes  # bytes[t, v]
    vec = offsets.reshape(T, V // n, n)
    want = vec[:, :, :1] + element_bytes * np.arange(n)
    if n > 1 and not np.array_equal(vec, want):
        t, k, e = np.argwhere(vec != want)[0]
        raise LayoutError(
            f"{op}: thread {t}'s {vb}-byte vector {k} is not contiguous: value {k * n + e} is at byte "
            f"{vec[t, k, e]}, expected {want[t, k, e]} (a vector access needs consecutive elements)"
        )
    starts = vec[:, :, 0]
    if np.any(starts % vb):
        t, k = np.argwhere(starts % vb)[0]
        raise LayoutError(
            f"{op}: thread {t}'s vector {k} starts at byte {starts[t, k]}, not aligned to {vb} bytes"
        )
    return starts


def analyze(
    smem: Any, access: Any, element_bytes: int, vector_bytes: int | None = None, *, description: str = ""
) -> BankReport:
    """Bank analysis of ``access`` reading ``smem``: per warp and per vector, wavefronts vs the ideal.

    ``smem``: coordinate -> element offset (Layout, ComposedLayout or text); ``access``: TV
    layout ``(thread, value) -> coordinate index of smem``; ``element_bytes``: bytes per
    element; ``vector_bytes``: bytes one thread moves per instruction (default one element).
    Threads beyond 32 form further warps, each analysed on its own.

    A warp reading one column of a row-major 64x64 fp16 tile (thread ``t`` reads row ``t``):
    every address is a multiple of 128 bytes, so all 32 land in bank 0::

        >>> from layoutalg import Layout
        >>> analyze(Layout((64, 64), (64, 1)), Layout((32, 1), (1, 0)), 2).ways
        32
    """
    starts = access_addresses(smem, access, element_bytes, vector_bytes)
    vb = element_bytes if vector_bytes is None else vector_bytes
    T, K = starts.shape
    instrs = []
    for w in range(0, T, 32):
        for k in range(K):
            lanes = [int(a) for a in starts[w : w + 32, k]]
            label = (f"warp {w // 32} " if T > 32 else "") + f"vector {k}"
            instrs.append(_instruction(lanes, vb, label))
    if not description:
        description = f"{access} reading {smem}, {element_bytes}-byte elements"
    return BankReport(tuple(instrs), vb, description)


def analyze_copy(
    tiled_copy: Any, smem: Any, *, side: str | None = None, element_bytes: int | None = None, description: str = ""
) -> BankReport:
    """Banks of every shared-memory instruction a :class:`~layoutalg.tiled.TiledCopy` issues over ``smem``.

    ``smem`` is the shared-memory tile the copy partitions (a Tensor, a Layout or a swizzled
    ComposedLayout: coordinate -> element offset from a 1024-byte aligned base); ``side`` the side
    of the copy in shared memory (default: the atom's, ``"S"`` for ldmatrix, ``"D"`` for stmatrix
    and cp.async). Every thread's partition is split into instructions as CuTe's ``copy`` does;
    instruction ``k`` of warp ``w`` is the ``k``-th of each of its 32 lanes, one vector per lane
    (a 16-byte row address for ``ldmatrix``; lanes whose address an ``.x1``/``.x2`` ignores are
    inactive). The report has one entry per (warp, instruction) of the whole CTA / warp-group.

    By hand, ldmatrix.x4 of the A operand of a 2x2-warp m16n8k16 tiling over a row-major 64x32 f16
    tile: each lane's 16-byte row starts at ``64*row`` bytes, so the 8 rows of one matrix fall in
    banks ``16*row mod 32``: two distinct banks, a 4-way conflict per matrix -- 16 wavefronts where
    4 would do. ``Swizzle<2,3,3>`` (XOR of row bits into the 16-byte chunk) spreads them::

        >>> from layoutalg import Layout, ComposedLayout, Swizzle
        >>> from layoutalg.nvidia.atoms import copy_atom, mma_atom
        >>> from layoutalg.tiled import make_tiled_mma, make_tiled_copy_A
        >>> mma = make_tiled_mma(mma_atom("SM80_16x8x16_F32F16F16F32_TN"), (2, 2, 1), (32, 32, 16))
        >>> tc = make_tiled_copy_A(copy_atom("SM75_U32x4_LDSM_N", "f16"), mma)
        >>> r = analyze_copy(tc, Layout((64, 32), (32, 1)))
        >>> r.instructions[0].wavefronts, r.instructions[0].ideal
        (16, 4)
        >>> str(r.first_conflict)
        'warp 0 instruction 0: lanes 0 and 2 both hit bank 0 (bytes 0 and 128)'
        >>> analyze_copy(tc, ComposedLayout(Swizzle(2, 3, 3), 0, Layout((64, 32), (32, 1)))).conflict_free
        True
    """
    op = "analyze_copy"
    if not isinstance(tiled_copy, TiledCopy):
        raise LayoutError(f"{op}: {tiled_copy!r} is not a TiledCopy")
    atom = tiled_copy.atom
    side = side or atom.smem_side
    if side not in ("S", "D"):
        raise LayoutError(f"{op}: the copy {atom.name} does not say which side is shared memory; pass side='S' or 'D'")
    eb = element_bytes if element_bytes is not None else max(1, atom.value_bits // 8)
    if atom.value_bits % 8 and element_bytes is None:
        raise LayoutError(f"{op}: {atom.value_bits}-bit values are not whole bytes; pass element_bytes")
    reg_bits = atom.src_register_bits if side == "S" else atom.dst_register_bits
    vb = max(eb, reg_bits // 8) if reg_bits else eb
    if vb not in _ACCESS_BYTES:
        raise LayoutError(f"{op}: {atom.name} moves {vb} bytes per lane on its shared-memory side; "
                          f"shared-memory accesses are {_ACCESS_BYTES} bytes")
    T = smem if isinstance(smem, Tensor) else make_tensor(_as_layout(smem, op, "shared-memory layout"))
    val = atom.val_layout_src if side == "S" else atom.val_layout_dst
    nthr_atom = atom.num_threads
    # lanes of an atom whose values repeat an earlier lane's (ldmatrix .x1/.x2 address lanes >= 8*num)
    rows = np.asarray(val.table(), dtype=np.int64).reshape(-1, nthr_atom).T
    inactive = {j for j in range(nthr_atom) if any(np.array_equal(rows[j], rows[i]) for i in range(j))}
    # every thread's partition_S / partition_D is a slice of one (Thr, Frg, Rest) view of the tile: derived once
    # here, sliced per thread as ThrCopy.partition_S/_D slice it (the same tensors, without re-deriving the view)
    whole = tiled_copy.tidfrg_S(T) if side == "S" else tiled_copy.tidfrg_D(T)
    rank = len(T.layout) if type(T.layout.shape) is tuple else 1
    rest = tuple([underscore] * rank) if rank > 1 else underscore
    per_thread = [[int(c.addresses()[0]) * eb for c in copy_instructions(tiled_copy, part, side)]
                  for part in whole.slices([(t, underscore, rest) for t in range(tiled_copy.num_threads)])]
    ncalls = len(per_thread[0])
    instrs = []
    for w in range(0, tiled_copy.num_threads, 32):
        lanes = range(w, min(w + 32, tiled_copy.num_threads))
        for k in range(ncalls):
            addrs = [None if (t % nthr_atom) in inactive else per_thread[t][k] for t in lanes]
            instrs.append(_instruction(_check_addresses(addrs, vb, op), vb, f"warp {w // 32} instruction {k}"))
    if not description:
        description = f"{atom.name} ({'source' if side == 'S' else 'destination'} in shared memory) over {T.layout}"
    return BankReport(tuple(instrs), vb, description)
