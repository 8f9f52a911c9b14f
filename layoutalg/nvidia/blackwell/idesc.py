"""The tcgen05 (UMMA) instruction descriptor: the 32-bit word that configures one ``tcgen05.mma``.

Blackwell's ``tcgen05.mma`` takes its types, shape, majors, negation, sparsity, scale-factor ids
and weight-stationary shift from a 32-bit *instruction descriptor* (``idesc``). Its layout depends on
the kind: one table for ``kind::tf32``, ``kind::f16``, ``kind::f8f6f4`` and ``kind::i8`` (CuTe's
``UMMA::InstrDescriptor``), one for the block-scaled ``kind::mxf8f6f4``, ``kind::mxf4`` and
``kind::mxf4nvf4`` (``UMMA::InstrDescriptorBlockScaled``)::

    >>> from layoutalg.nvidia.blackwell.idesc import make_instr_desc, decode
    >>> d = make_instr_desc("f16", "bf16", "bf16", "f32", 128, 128)
    >>> d
    InstrDescriptor(0x08200490: kind::f16 bf16 x bf16 -> f32, M=128 N=128 K=16, A K-major, B K-major)
    >>> decode(0x08a00000, kind="mxf8f6f4").describe().splitlines()[0]
    'kind::mxf8f6f4 e4m3 x e4m3 -> f32, scale ue8m0, M=128 N=128 K=32, A K-major, B K-major'

:func:`make_instr_desc` encodes, :func:`decode` reads a word back (naming every field as the PTX
ISA does), and both refuse what the ISA forbids with a :class:`IdescError` that names the rule:
shapes per kind and CTA group (PTX ISA "Various combinations of .kind and shapes"), type
combinations per kind, MN-major sub-byte operands, scale types and scale-factor ids per kind,
negate on ``kind::i8``, saturate outside ``kind::i8``, set reserved bits.

Checked against (no sm_100 hardware ran any of this): the words ``UMMA::make_instr_desc`` /
``make_instr_desc_block_scaled`` and the SM100 MMA atoms' ``MMA_Traits::idesc_`` print when CuTe
4.2's sm100 headers are compiled with g++ on the host (tests/data/cute/idesc.json), the immediates
in the PTX that Triton 3.6's Gluon emits for ``tcgen05_mma`` / ``tcgen05_mma_scaled`` for
``sm_100a`` (tests/data/gluon_idesc.json, assembled by the wheel's ``ptxas-blackwell``), and the
PTX ISA's instruction-descriptor tables.
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import asdict, dataclass
from typing import Any

from ...errors import LayoutError, guarded
from ..common.dtypes import dtype_name

__all__ = [
    "BLOCK_SCALED_KINDS",
    "IdescError",
    "K96_RULE",
    "InstrDescriptor",
    "KINDS",
    "PLAIN_KINDS",
    "canonical_kind",
    "canonical_type",
    "decode",
    "atom_instr_desc",
    "make_instr_desc",
    "readings",
]


class IdescError(LayoutError):
    """An instruction descriptor the PTX ISA (or CuTe's encoder) does not allow."""


PLAIN_KINDS: tuple[str, ...] = ("tf32", "f16", "f8f6f4", "i8")
BLOCK_SCALED_KINDS: tuple[str, ...] = ("mxf8f6f4", "mxf4", "mxf4nvf4")
KINDS: tuple[str, ...] = PLAIN_KINDS + BLOCK_SCALED_KINDS

# --------------------------------------------------------------------------------------------
# names
# --------------------------------------------------------------------------------------------

_PTX_TYPES = ("f16", "bf16", "tf32", "e4m3", "e5m2", "e2m3", "e3m2", "e2m1", "s8", "u8", "f32", "s32", "ue8m0", "ue4m3")
#: CuTe's run-time-typed operands: make_instr_desc writes the placeholder MXF8F6F4Format::INVALID (7)
_RUNTIME_TYPES = (
    "type_erased_dynamic_float8_t", "type_erased_dynamic_float6_t", "type_erased_dynamic_float4_t",
    "type_erased_dynamic_float4_unpacksmem_t", "type_erased_dynamic_float6_unpacksmem_t",
)


def canonical_type(name: str, what: str = "type") -> str:
    """The PTX name (``bf16``, ``e4m3``, ``s32``, ...) of a PTX or CuTe type spelling.

    >>> canonical_type("cutlass::float_e4m3_t"), canonical_type(".bf16"), canonical_type("int32_t")
    ('e4m3', 'bf16', 's32')
    """
    if not isinstance(name, str):
        raise IdescError(f"make_instr_desc: {what} must be a type name (PTX or CuTe spelling), got {name!r}")
    s = re.sub(r"^(?:(?:cutlass|cute|detail|std)::)+", "", name.strip()).lstrip(".").lower()
    if s in _RUNTIME_TYPES:
        raise IdescError(
            f"make_instr_desc: {what} {name!r} is one of CuTe's run-time-typed operands: "
            "UMMA::make_instr_desc writes the placeholder format 7 (MXF8F6F4Format::INVALID) and the "
            "kernel patches the real format in before issuing; name the actual type (e4m3, e5m2, e2m3, e3m2, e2m1)"
        )
    try:
        t = dtype_name(name, op="make_instr_desc")
    except LayoutError:
        t = None
    if t not in _PTX_TYPES:
        raise IdescError(
            f"make_instr_desc: unknown {what} {name!r}; known: {', '.join(_PTX_TYPES)} "
            "(or CuTe's half_t, bfloat16_t, tfloat32_t, float_e4m3_t, ..., int8_t, uint8_t, float, int32_t, float_ue8m0_t, float_ue4m3_t)"
        )
    return t


def canonical_kind(kind: str) -> str:
    """``f16`` for ``kind::f16``, ``.kind::f16``, ``F16BF16`` (CuTe's atom family name), ...

    >>> canonical_kind("kind::mxf8f6f4"), canonical_kind("F16BF16"), canonical_kind("S8")
    ('mxf8f6f4', 'f16', 'i8')
    """
    if not isinstance(kind, str):
        raise IdescError(f"instruction descriptor: kind must be one of {', '.join(KINDS)}, got {kind!r}")
    s = kind.strip().lstrip(".").lower()
    if s.startswith("kind::"):
        s = s[len("kind::"):]
    s = {"f16bf16": "f16", "s8": "i8", "int8": "i8", "mxf4nvf4": "mxf4nvf4", "nvf4": "mxf4nvf4"}.get(s, s)
    if s not in KINDS:
        raise IdescError(
            f"instruction descriptor: unknown kind {kind!r}; the tcgen05.mma kinds are "
            + ", ".join(f"kind::{k}" for k in KINDS)
            + " (CuTe's atom families TF32, F16BF16, F8F6F4, S8, MXF8F6F4, MXF4, MXF4NVF4)"
        )
    return s


def _canonical_major(major: Any, operand: str) -> str:
    if isinstance(major, str):
        s = major.strip()
        for prefix in ("UMMA::Major::", "Major::", "cute::UMMA::Major::"):
            if s.startswith(prefix):
                s = s[len(prefix):]
        s = s.upper().replace("-MAJOR", "").replace("_MAJOR", "")
        if s in ("K", "MN"):
            return s
    raise IdescError(f"make_instr_desc: {operand}_major must be 'K' or 'MN' (UMMA::Major::K / MN), got {major!r}")


# --------------------------------------------------------------------------------------------
# the ISA's tables
# --------------------------------------------------------------------------------------------

#: (PTX type -> atype/btype code) per kind
_AB_CODES: dict[str, dict[str, int]] = {
    "tf32": {"tf32": 2},
    "f16": {"f16": 0, "bf16": 1},
    "f8f6f4": {"e4m3": 0, "e5m2": 1, "e2m3": 3, "e3m2": 4, "e2m1": 5},
    "i8": {"u8": 0, "s8": 1},
    "mxf8f6f4": {"e4m3": 0, "e5m2": 1, "e2m3": 3, "e3m2": 4, "e2m1": 5},
    "mxf4": {"e2m1": 1},
    "mxf4nvf4": {"e2m1": 1},
}
_C_CODES = {"f16": 0, "f32": 1, "s32": 2}
_SCALE_CODES = {"ue4m3": 0, "ue8m0": 1}
_SHIFT_CODES = {0: 0, 8: 1, 16: 2, 32: 3}
#: K of one instruction (dense), in elements
_K_DENSE = {"tf32": 8, "f16": 16, "f8f6f4": 32, "i8": 32, "mxf8f6f4": 32, "mxf4": 64, "mxf4nvf4": 64}
#: sub-byte types: MN-major is refused for them (CuTe's InstrDescriptor: "Major value of 1 is only
#: valid for E4M3, E5M2, INT8 (signed and unsigned), F16, BF16 and TF32 source formats")
_SUB_BYTE = ("e2m3", "e3m2", "e2m1")

#: (field, low bit, width, the ISA's description) of the plain form
PLAIN_FIELDS: tuple[tuple[str, int, int, str], ...] = (
    ("sparsity_selector", 0, 2, "Sparsity selector, if Sparsity is enabled"),
    ("sparsity", 2, 1, "Sparsity (Dense = 0, Sparse = 1)"),
    ("saturate", 3, 1, "Saturate for integer types"),
    ("dtype", 4, 2, "dtype (Matrix D type)"),
    ("reserved_6", 6, 1, "Reserved"),
    ("atype", 7, 3, "atype (Matrix A type)"),
    ("btype", 10, 3, "btype (Matrix B type)"),
    ("negate_a", 13, 1, "Negate A Matrix"),
    ("negate_b", 14, 1, "Negate B Matrix"),
    ("transpose_a", 15, 1, "Transpose A Matrix (1 = MN-major)"),
    ("transpose_b", 16, 1, "Transpose B Matrix (1 = MN-major)"),
    ("n_dim", 17, 6, "N, Dimension of Matrix B (3 LSBs not included): N >> 3"),
    ("reserved_23", 23, 1, "Reserved"),
    ("m_dim", 24, 5, "M, Dimension of Matrix A (4 LSBs not included): M >> 4"),
    ("reserved_29", 29, 1, "Reserved"),
    ("max_shift", 30, 2, "Maximum shift while attempting B matrix-reuse in .ws"),
)
#: (field, low bit, width, the ISA's description) of the block-scaled form. The ISA writes M as
#: M >> 7 in bits 27-28 (24-26 reserved); CuTe's bit field writes M >> 4 in bits 24-28: the same
#: bits for the legal M (128, 256).
BLOCK_SCALED_FIELDS: tuple[tuple[str, int, int, str], ...] = (
    ("reserved_0", 0, 2, "Reserved"),
    ("sparsity", 2, 1, "Sparsity (Dense = 0, Sparse = 1)"),
    ("reserved_3", 3, 1, "Reserved"),
    ("b_scale_factor_id", 4, 2, "Matrix B Scale Factor Data ID"),
    ("reserved_6", 6, 1, "Reserved"),
    ("atype", 7, 3, "atype (Matrix A type)"),
    ("btype", 10, 3, "btype (Matrix B type); bits 10-11 for kind::mxf4/mxf4nvf4, bit 12 reserved"),
    ("negate_a", 13, 1, "Negate A Matrix"),
    ("negate_b", 14, 1, "Negate B Matrix"),
    ("transpose_a", 15, 1, "Transpose A Matrix (1 = MN-major)"),
    ("transpose_b", 16, 1, "Transpose B Matrix (1 = MN-major)"),
    ("n_dim", 17, 6, "N, Dimension of Matrix B (3 LSBs not included): N >> 3"),
    ("scale_type", 23, 1, "Scale Matrix Type, for both scale_A / scale_B (UE4M3 = 0, UE8M0 = 1)"),
    ("reserved_24", 24, 3, "Reserved"),
    ("m_dim", 27, 2, "M, Dimension of Matrix A (7 LSBs not included): M >> 7"),
    ("a_scale_factor_id", 29, 2, "Matrix A Scale Factor Data ID"),
    ("k_dim", 31, 1, "K Dimension (kind::mxf4/mxf4nvf4: 0 = dense K 64 / sparse K 128, 1 = dense K 96); reserved otherwise"),
)


#: the rule of the dense K = 96 form (the ``k_dim`` bit 31 of kind::mxf4 / mxf4nvf4), as the ISA's shape table
#: writes it: PTX ISA 9.1, section 9.7.16.2.1 "Matrix Shape", Table 39 "Various combinations of .kind and shapes"
#: lists ``256xNxK1, K1 = 96`` only in the dense ``cta_group 2`` rows of .kind::mxf4 and .kind::mxf4nvf4 (the
#: cta_group 1 rows: ``128xNxK``, K = 64 dense / 128 sparse), and section 9.7.16.2.1.1 "Target ISA Note": "K = 96
#: is only supported for target architecture sm_103a". Table 56 (9.7.16.10.7.1) gives K = 96 six scale factors
#: per row with .block16 and three with .block32.
K96_RULE = ("dense, cta_group::2 and M=256 only (PTX ISA 9.1, 9.7.16.2.1 Table 39: 256xNxK1, K1 = 96 in the "
            "cta_group 2 dense rows only; 9.7.16.2.1.1: sm_103a only)")
#: the named difference with CuTe 4.2 (docs/blackwell.md): its SM103_MXF4_ULTRA atoms issue K = 96 at M = 128
_K96_CUTE = (" -- CuTe 4.2's SM103_MXF4_ULTRA_SS_VS / _2x1SM_SS_VS issue such a word (mma_unpack sets k_size_ = 1 at "
             "M = 128), which the ISA's table does not list: a named difference, read the atom's idesc() instead")


def _legal_shapes(kind: str, cta_group: int, ws: bool, sparse: bool) -> tuple[tuple[int, ...], str, Any]:
    """(legal M, words for N, predicate on N) from the PTX ISA's "Various combinations of .kind and
    shapes" table; () for M when the combination is invalid."""
    def step(s: int, lo: int) -> Any:
        return lambda n: lo <= n <= 256 and n % s == 0

    if ws:
        if kind in BLOCK_SCALED_KINDS or cta_group != 1:
            return (), "", None
        if sparse:
            return (32, 64, 128), "N in {64, 128}", lambda n: n in (64, 128)
        return (32, 64, 128), "N in {64, 128, 256}", lambda n: n in (64, 128, 256)
    if kind == "i8":
        if cta_group == 1:
            return (64, 128), "N = 8, 16, 24, 32 or a multiple of 16 up to 256", \
                lambda n: n in (8, 16, 24, 32) or (32 < n <= 256 and n % 16 == 0)
        return (128, 256), "N a multiple of 32 from 32 to 256", step(32, 32)
    if kind in PLAIN_KINDS:
        if cta_group == 1:
            return (64, 128), "N a multiple of 8 from 8 to 256", step(8, 8)
        return (128, 256), "N a multiple of 16 from 16 to 256", step(16, 16)
    # block-scaled
    if cta_group == 1:
        return (128,), "N a multiple of 8 from 8 to 256", step(8, 8)
    return ((256,) if sparse else (128, 256)), "N a multiple of 16 from 16 to 256", step(16, 16)


# --------------------------------------------------------------------------------------------
# the descriptor
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class InstrDescriptor:
    """One tcgen05 instruction descriptor: the configuration, its 32-bit ``word`` and its ``fields``.

    Build one with :func:`make_instr_desc` (every argument checked against the ISA) or
    :func:`decode`. ``block_scaled`` tells which of the ISA's two layouts the word uses (CuTe's
    ``InstrDescriptor`` vs ``InstrDescriptorBlockScaled``). ``cta_group``, ``ws``, ``k`` and
    ``sf_vec_size`` are not in the word: they are the instruction's qualifiers the shape rules
    depend on, checked and kept for ``describe()``.
    """

    kind: str
    a_type: str
    b_type: str
    c_type: str
    m: int
    n: int
    a_major: str = "K"
    b_major: str = "K"
    negate_a: bool = False
    negate_b: bool = False
    saturate: bool = False
    sparse: bool = False
    sparse_selector: int = 0
    scale_type: str | None = None
    sfa_id: int = 0
    sfb_id: int = 0
    max_shift: int = 0
    cta_group: int = 1
    ws: bool = False
    k: int = 0
    sf_vec_size: int | None = None

    def __post_init__(self) -> None:
        # built directly (not through make_instr_desc): check it, and insist on the canonical spelling
        mine = asdict(self)
        if _normalize(**mine) != mine:
            raise IdescError(
                f"InstrDescriptor: {mine} is not in canonical form (PTX type names, 'K'/'MN', the kind's K); "
                "build it with make_instr_desc"
            )

    # ---- derived ---------------------------------------------------------------------------
    @property
    def block_scaled(self) -> bool:
        """True for kind::mxf8f6f4 / mxf4 / mxf4nvf4 (CuTe's ``InstrDescriptorBlockScaled``)."""
        return self.kind in BLOCK_SCALED_KINDS

    @property
    def fields(self) -> dict[str, int]:
        """Every field of the word by the ISA's name (reserved bits left out: they are 0), as integers."""
        ab = _AB_CODES[self.kind]
        f: dict[str, int]
        if self.block_scaled:
            f = {
                "sparsity": int(self.sparse),
                "b_scale_factor_id": self.sfb_id,
                "atype": ab[self.a_type],
                "btype": ab[self.b_type],
                "negate_a": int(self.negate_a),
                "negate_b": int(self.negate_b),
                "transpose_a": int(self.a_major == "MN"),
                "transpose_b": int(self.b_major == "MN"),
                "n_dim": self.n >> 3,
                "scale_type": _SCALE_CODES[self.scale_type or "ue8m0"],
                "m_dim": self.m >> 7,
                "a_scale_factor_id": self.sfa_id,
                "k_dim": int(self.k == 96),
            }
        else:
            f = {
                "sparsity_selector": self.sparse_selector,
                "sparsity": int(self.sparse),
                "saturate": int(self.saturate),
                "dtype": _C_CODES[self.c_type],
                "atype": ab[self.a_type],
                "btype": ab[self.b_type],
                "negate_a": int(self.negate_a),
                "negate_b": int(self.negate_b),
                "transpose_a": int(self.a_major == "MN"),
                "transpose_b": int(self.b_major == "MN"),
                "n_dim": self.n >> 3,
                "m_dim": self.m >> 4,
                "max_shift": _SHIFT_CODES[self.max_shift],
            }
        return f

    @property
    def word(self) -> int:
        """The 32-bit descriptor, as ``tcgen05.mma`` reads it (and as CuTe's ``uint32_t(desc)`` prints it)."""
        table = BLOCK_SCALED_FIELDS if self.block_scaled else PLAIN_FIELDS
        lo = {name: (bit, width) for name, bit, width, _ in table}
        w = 0
        for name, value in self.fields.items():
            bit, width = lo[name]
            assert 0 <= value < (1 << width), (name, value)
            w |= value << bit
        return w

    @property
    def runtime_word(self) -> int:
        """The 64-bit value CuTe's ``make_runtime_instr_desc`` hands the MMA: the word in the upper half."""
        return self.word << 32

    @property
    def ptx(self) -> str:
        """The instruction's opcode with its qualifiers (no operands)."""
        s = "tcgen05.mma" + (".ws" if self.ws else "") + (".sp" if self.sparse else "")
        s += f".cta_group::{self.cta_group}.kind::{self.kind}"
        if self.block_scaled:
            s += ".block_scale"
        return s

    # ---- words -----------------------------------------------------------------------------
    def describe(self) -> str:
        """The descriptor in words: the operation on the first line, then every field with its bits."""
        head = f"kind::{self.kind} {self.a_type} x {self.b_type} -> {self.c_type}"
        if self.block_scaled:
            head += f", scale {self.scale_type}"
            if self.sf_vec_size is not None:
                head += f" per {self.sf_vec_size} elements"
        head += f", M={self.m} N={self.n} K={self.k}, A {self.a_major}-major, B {self.b_major}-major"
        extra = []
        if self.sparse:
            extra.append("sparse" + ("" if self.block_scaled else f" (selector {self.sparse_selector})"))
        if self.negate_a:
            extra.append("negate A")
        if self.negate_b:
            extra.append("negate B")
        if self.saturate:
            extra.append("saturate")
        if self.ws:
            extra.append("weight-stationary (.ws)" + (f", max shift {self.max_shift}" if self.max_shift else ""))
        if self.block_scaled and (self.sfa_id or self.sfb_id):
            extra.append(f"scale-factor ids A {self.sfa_id}, B {self.sfb_id}")
        if extra:
            head += ", " + ", ".join(extra)
        lines = [head, f"{self.ptx}  idesc 0x{self.word:08x}"]
        table = BLOCK_SCALED_FIELDS if self.block_scaled else PLAIN_FIELDS
        values = self.fields
        for name, bit, width, desc in table:
            if name not in values:
                continue
            bits = f"{bit}" if width == 1 else f"{bit}-{bit + width - 1}"
            lines.append(f"  [{bits:>5}] {name:<18} = {values[name]:<3} {desc}{self._meaning(name)}")
        return "\n".join(lines)

    def _meaning(self, name: str) -> str:
        if name == "atype":
            return f": {self.a_type}"
        if name == "btype":
            return f": {self.b_type}"
        if name == "dtype":
            return f": {self.c_type}"
        if name == "n_dim":
            return f": N = {self.n}"
        if name == "m_dim":
            return f": M = {self.m}"
        if name == "scale_type":
            return f": {self.scale_type}"
        if name == "max_shift" and self.max_shift:
            return f": {self.max_shift}"
        return ""

    def __repr__(self) -> str:
        return f"InstrDescriptor(0x{self.word:08x}: {self.describe().splitlines()[0]})"

    def __int__(self) -> int:
        return self.word

    def replace(self, **changes: Any) -> InstrDescriptor:
        """A copy with some arguments changed, checked again by :func:`make_instr_desc`."""
        args = asdict(self)
        args.update(changes)
        return make_instr_desc(**args)

    @classmethod
    def decode(cls, word: int, kind: str | None = None, **qualifiers: Any) -> InstrDescriptor:
        """See :func:`decode`."""
        return decode(word, kind=kind, **qualifiers)


# --------------------------------------------------------------------------------------------
# encode
# --------------------------------------------------------------------------------------------


def _fail(rule: str) -> IdescError:
    return IdescError(f"make_instr_desc: {rule}")


def make_instr_desc(
    kind: str,
    a_type: str,
    b_type: str,
    c_type: str,
    m: int,
    n: int,
    a_major: str = "K",
    b_major: str = "K",
    *,
    negate_a: bool = False,
    negate_b: bool = False,
    saturate: bool = False,
    sparse: bool = False,
    sparse_selector: int = 0,
    scale_type: str | None = None,
    sfa_id: int = 0,
    sfb_id: int = 0,
    max_shift: int = 0,
    cta_group: int = 1,
    ws: bool = False,
    k: int | None = None,
    sf_vec_size: int | None = None,
) -> InstrDescriptor:
    """The instruction descriptor of one ``tcgen05.mma``, bit for bit as CuTe's
    ``UMMA::make_instr_desc`` / ``make_instr_desc_block_scaled`` builds it.

    ``kind``: ``f16``, ``tf32``, ``f8f6f4``, ``i8``, ``mxf8f6f4``, ``mxf4``, ``mxf4nvf4`` (also
    ``kind::f16``, CuTe's ``F16BF16``, ``S8``). Types in PTX (``bf16``, ``e4m3``, ``s32``) or CuTe
    (``bfloat16_t``, ``float_e4m3_t``, ``int32_t``) spelling; ``c_type`` is the accumulator (D).
    ``a_major`` / ``b_major``: ``"K"`` or ``"MN"`` (the ISA's "transpose" bits).
    ``max_shift`` (0, 8, 16, 32) needs ``ws=True`` (``tcgen05.mma.ws``); ``sparse_selector`` (0-3)
    needs ``sparse``; ``scale_type`` (``ue8m0``/``ue4m3``), ``sfa_id``, ``sfb_id`` and
    ``sf_vec_size`` (16 or 32 elements per scale factor) are for the block-scaled kinds only.
    ``k`` defaults to the kind's K (doubled when sparse); ``k=96`` selects the dense K=96 form of
    kind::mxf4/mxf4nvf4 (the ``k_dim`` bit; :data:`K96_RULE`: cta_group::2, M=256, as the ISA's Table 39
    lists it; CuTe's ``make_instr_desc`` never sets the bit, its sm_103 ``mma_unpack`` does, at M = 128 too).

    >>> make_instr_desc("f16", "bf16", "bf16", "f32", 128, 256, "K", "MN").word == 0x08410490
    True
    >>> make_instr_desc("f16", "bf16", "bf16", "f32", 96, 128)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    layoutalg.nvidia.blackwell.idesc.IdescError: make_instr_desc: kind::f16 with cta_group::1 takes M in (64, 128), got M=96 (PTX ISA: ...)
    """
    return InstrDescriptor(**_normalize(
        kind, a_type, b_type, c_type, m, n, a_major, b_major, negate_a=negate_a, negate_b=negate_b,
        saturate=saturate, sparse=sparse, sparse_selector=sparse_selector, scale_type=scale_type,
        sfa_id=sfa_id, sfb_id=sfb_id, max_shift=max_shift, cta_group=cta_group, ws=ws, k=k,
        sf_vec_size=sf_vec_size,
    ))


def _normalize(
    kind: str, a_type: str, b_type: str, c_type: str, m: int, n: int, a_major: str = "K", b_major: str = "K", *,
    negate_a: bool = False, negate_b: bool = False, saturate: bool = False, sparse: bool = False,
    sparse_selector: int = 0, scale_type: str | None = None, sfa_id: int = 0, sfb_id: int = 0,
    max_shift: int = 0, cta_group: int = 1, ws: bool = False, k: int | None = None, sf_vec_size: int | None = None,
) -> dict[str, Any]:
    """make_instr_desc's checks: the canonical arguments of a legal descriptor, or IdescError."""
    kind = canonical_kind(kind)
    a = canonical_type(a_type, "a_type")
    b = canonical_type(b_type, "b_type")
    c = canonical_type(c_type, "c_type")
    a_major = _canonical_major(a_major, "a")
    b_major = _canonical_major(b_major, "b")
    blk = kind in BLOCK_SCALED_KINDS
    flags: tuple[tuple[str, object], ...] = (
        ("negate_a", negate_a), ("negate_b", negate_b), ("saturate", saturate), ("sparse", sparse), ("ws", ws))
    for name, flag in flags:
        if not isinstance(flag, bool):
            raise _fail(f"{name} must be True or False, got {flag!r}")
    for name, value in (("m", m), ("n", n), ("sparse_selector", sparse_selector), ("sfa_id", sfa_id), ("sfb_id", sfb_id),
                        ("max_shift", max_shift), ("cta_group", cta_group)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise _fail(f"{name} must be an int, got {value!r}")
    if cta_group not in (1, 2):
        raise _fail(f"cta_group must be 1 or 2 (tcgen05.mma.cta_group::1 / ::2), got {cta_group}")

    # ---- types ---------------------------------------------------------------------------
    codes = _AB_CODES[kind]
    for operand, t in (("A", a), ("B", b)):
        if t not in codes:
            raise _fail(
                f"kind::{kind} takes {operand} of type {', '.join(codes)}, got {t} "
                "(PTX ISA: instruction descriptor atype/btype values per kind)"
            )
    if kind == "f16" and c == "f16" and (a, b) != ("f16", "f16"):
        raise _fail(f"kind::f16 with an f16 accumulator takes f16 x f16 only (bf16 accumulates in f32), got {a} x {b}")
    allowed_c = {"tf32": ("f32",), "f16": ("f16", "f32"), "f8f6f4": ("f16", "f32"), "i8": ("s32",)}.get(kind, ("f32",))
    if c not in allowed_c:
        raise _fail(f"kind::{kind} accumulates in {' or '.join(allowed_c)}, got c_type {c} (PTX ISA: dtype values per kind)")

    # ---- majors ----------------------------------------------------------------------------
    for operand, t, major in (("A", a, a_major), ("B", b, b_major)):
        if major != "MN":
            continue
        if kind in ("mxf4", "mxf4nvf4"):
            raise _fail(f"kind::{kind} takes K-major operands only ({operand} is MN-major; the ISA's Transpose {operand} must be 0)")
        if t in _SUB_BYTE:
            raise _fail(
                f"{operand} of type {t} is a sub-byte (fp6/fp4) operand and must be K-major, got MN-major "
                "(MN-major is valid only for e4m3, e5m2, s8/u8, f16, bf16 and tf32: CuTe's UMMA::InstrDescriptor)"
            )

    # ---- modifiers -------------------------------------------------------------------------
    if kind == "i8" and (negate_a or negate_b):
        raise _fail("kind::i8 cannot negate A or B (PTX ISA: Negate A/B Matrix is 'No Negate = 0' only for kind::i8)")
    if saturate and kind != "i8":
        raise _fail(f"saturate is for kind::i8 only (PTX ISA: 'Saturate for integer types'), got kind::{kind}")
    if sparse_selector and not sparse:
        raise _fail(f"sparse_selector={sparse_selector} needs sparse=True (it selects the metadata of a sparse MMA)")
    if sparse_selector:
        if blk:
            raise _fail(f"kind::{kind} has no sparsity selector (bits 0-1 are reserved in the block-scaled descriptor)")
        if not 0 <= sparse_selector <= 3:
            raise _fail(f"sparse_selector must be 0..3, got {sparse_selector}")
    if max_shift not in _SHIFT_CODES:
        raise _fail(f"max_shift must be 0, 8, 16 or 32 (the .ws B-reuse shift), got {max_shift}")
    if ws and blk:
        raise _fail(f"kind::{kind} has no .ws (weight-stationary) form (PTX ISA: Various combinations of .kind and shapes)")
    if max_shift and not ws:
        raise _fail(f"max_shift={max_shift} is the B-reuse shift of tcgen05.mma.ws: pass ws=True")
    if ws and cta_group != 1:
        raise _fail("tcgen05.mma.ws exists for cta_group::1 only (PTX ISA: Various combinations of .kind and shapes)")

    # ---- scale factors ---------------------------------------------------------------------
    if blk:
        if scale_type is None:
            if kind == "mxf4nvf4":
                raise _fail("kind::mxf4nvf4 needs scale_type ue8m0 or ue4m3")
            scale_type = "ue8m0"
        st = canonical_type(scale_type, "scale_type")
        allowed_s = ("ue8m0", "ue4m3") if kind == "mxf4nvf4" else ("ue8m0",)
        if st not in allowed_s:
            raise _fail(f"kind::{kind} takes scale_type {' or '.join(allowed_s)}, got {st} (PTX ISA: Scale Matrix Type per kind)")
        scale_type = st
        ids = (0, 1, 2, 3) if kind == "mxf8f6f4" else (0, 2)
        for name, v in (("sfa_id", sfa_id), ("sfb_id", sfb_id)):
            if v not in ids:
                raise _fail(f"kind::{kind} takes {name} in {ids} (the byte of the scale-factor TMEM column), got {v}")
        if sf_vec_size is not None:
            if isinstance(sf_vec_size, bool) or not isinstance(sf_vec_size, int):
                raise _fail(f"sf_vec_size must be an int, got {sf_vec_size!r}")
            legal_vs = {"mxf8f6f4": (32,), "mxf4": (32,), "mxf4nvf4": (16,) if scale_type == "ue4m3" else (16, 32)}[kind]
            if sf_vec_size not in legal_vs:
                raise _fail(
                    f"kind::{kind} with scale_type {scale_type} takes sf_vec_size in {legal_vs}, got {sf_vec_size} "
                    "(PTX ISA: ue4m3 scales only with scale_vec::4X, i.e. one scale per 16 elements; ue8m0 per 32 "
                    "elements for mxf8f6f4 (1X) and mxf4 (2X), per 32 or 16 for mxf4nvf4)"
                )
    else:
        opt: tuple[tuple[str, object], ...] = (("scale_type", scale_type), ("sf_vec_size", sf_vec_size))
        for name, o in opt:
            if o is not None:
                raise _fail(f"{name} is for the block-scaled kinds (mxf8f6f4, mxf4, mxf4nvf4); kind::{kind} has none")
        for name, v in (("sfa_id", sfa_id), ("sfb_id", sfb_id)):
            if v:
                raise _fail(f"{name} is for the block-scaled kinds (mxf8f6f4, mxf4, mxf4nvf4); kind::{kind} has none")

    # ---- shape -----------------------------------------------------------------------------
    ms, nwords, n_ok = _legal_shapes(kind, cta_group, ws, sparse)
    form = f"kind::{kind}{' .ws' if ws else ''}{' sparse' if sparse else ''} with cta_group::{cta_group}"
    if not ms:
        raise _fail(f"{form} does not exist (PTX ISA: Various combinations of .kind and shapes)")
    if m not in ms:
        raise _fail(f"{form} takes M in {ms}, got M={m} (PTX ISA: Various combinations of .kind and shapes)")
    if not n_ok(n):
        raise _fail(f"{form} takes {nwords}, got N={n} (PTX ISA: Various combinations of .kind and shapes)")
    if kind == "f8f6f4" and b_major == "MN" and n % (16 * cta_group):
        raise _fail(
            f"kind::f8f6f4 with B MN-major and cta_group::{cta_group} takes N a multiple of {16 * cta_group} "
            f"(16 columns of B per CTA), got N={n} (PTX ISA: 'N steps of 8 OR steps of 16'; CuTe's "
            "SM100_MMA_F8F6F4_SS / _2x1SM_SS static_asserts)"
        )
    k_default = _K_DENSE[kind] * (2 if sparse else 1)
    if k is None:
        k = k_default
    elif k != k_default:
        if kind in ("mxf4", "mxf4nvf4") and k == 96:
            if sparse or cta_group != 2 or m != 256:
                raise _fail(f"K=96 of kind::{kind} is {K96_RULE}; got {'sparse, ' if sparse else ''}"
                            f"cta_group::{cta_group}, M={m}{_K96_CUTE if not sparse and m == 128 else ''}")
        else:
            raise _fail(f"{form} has K={k_default}, got k={k}")
    return dict(
        kind=kind, a_type=a, b_type=b, c_type=c, m=m, n=n, a_major=a_major, b_major=b_major,
        negate_a=negate_a, negate_b=negate_b, saturate=saturate, sparse=sparse,
        sparse_selector=sparse_selector, scale_type=scale_type if blk else None,
        sfa_id=sfa_id, sfb_id=sfb_id, max_shift=max_shift, cta_group=cta_group, ws=ws, k=k,
        sf_vec_size=sf_vec_size,
    )


# --------------------------------------------------------------------------------------------
# decode
# --------------------------------------------------------------------------------------------


def _bits(word: int, bit: int, width: int) -> int:
    return (word >> bit) & ((1 << width) - 1)


def _decode_as(word: int, kind: str, cta_group: int | None, ws: bool, sf_vec_size: int | None) -> InstrDescriptor:
    blk = kind in BLOCK_SCALED_KINDS
    table = BLOCK_SCALED_FIELDS if blk else PLAIN_FIELDS
    raw = {name: _bits(word, bit, width) for name, bit, width, _ in table}
    where = f"decode: 0x{word:08x} as kind::{kind}"
    for name, bit, width, _ in table:
        if name.startswith("reserved") and raw[name]:
            raise IdescError(f"{where}: reserved bit(s) {bit}{'' if width == 1 else f'-{bit + width - 1}'} set (must be 0)")
    if kind in ("mxf4", "mxf4nvf4") and raw["btype"] & 0b100:
        raise IdescError(f"{where}: bit 12 set (btype is bits 10-11 for kind::{kind}; bit 12 is reserved)")
    if blk and kind not in ("mxf4", "mxf4nvf4") and raw["k_dim"]:
        raise IdescError(f"{where}: bit 31 set (the K-dimension bit exists for kind::mxf4/mxf4nvf4 only; reserved here)")
    inv = {v: t for t, v in _AB_CODES[kind].items()}
    try:
        a = inv[raw["atype"]]
        b = inv[raw["btype"]]
    except KeyError:
        bad = raw["atype"] if raw["atype"] not in inv else raw["btype"]
        hint = " (7 is CuTe's MXF8F6F4Format::INVALID, the placeholder of a run-time-typed operand)" if bad == 7 else ""
        raise IdescError(f"{where}: type code {bad} is not a kind::{kind} type (codes {inv}){hint}") from None
    if blk:
        c = "f32"
        scale = {v: t for t, v in _SCALE_CODES.items()}[raw["scale_type"]]
        m = raw["m_dim"] << 7
        kw: dict[str, Any] = dict(scale_type=scale, sfa_id=raw["a_scale_factor_id"], sfb_id=raw["b_scale_factor_id"],
                                  sf_vec_size=sf_vec_size)
        k96 = raw["k_dim"] == 1
    else:
        cinv = {v: t for t, v in _C_CODES.items()}
        if raw["dtype"] not in cinv:
            raise IdescError(f"{where}: dtype code {raw['dtype']} is none of F16 = 0, F32 = 1, S32 = 2")
        c = cinv[raw["dtype"]]
        m = raw["m_dim"] << 4
        shift = {v: s for s, v in _SHIFT_CODES.items()}[raw["max_shift"]]
        kw = dict(saturate=bool(raw["saturate"]), sparse_selector=raw["sparsity_selector"], max_shift=shift, ws=ws or bool(shift))
        if sf_vec_size is not None:
            raise IdescError(f"decode: sf_vec_size is for the block-scaled kinds; kind::{kind} has none")
        k96 = False
    groups = (cta_group,) if cta_group is not None else (1, 2)
    last: IdescError | None = None
    for g in groups:
        try:
            return make_instr_desc(
                kind, a, b, c, m, raw["n_dim"] << 3,
                "MN" if raw["transpose_a"] else "K", "MN" if raw["transpose_b"] else "K",
                negate_a=bool(raw["negate_a"]), negate_b=bool(raw["negate_b"]), sparse=bool(raw["sparsity"]),
                cta_group=g, k=96 if k96 else None, **kw,
            )
        except IdescError as e:
            last = e
    assert last is not None
    raise IdescError(f"{where}: {str(last).removeprefix('make_instr_desc: ')}") from None


def decode(word: int, kind: str | None = None, *, cta_group: int | None = None, ws: bool = False,
           sf_vec_size: int | None = None) -> InstrDescriptor:
    """Read a 32-bit instruction descriptor back into its configuration (checked as :func:`make_instr_desc` checks).

    The word does not say its kind completely (``kind::f16`` bf16 and ``kind::f8f6f4`` e5m2 share
    codes): without ``kind`` the one kind whose reading is legal is taken, and an ambiguous word
    raises, listing the readings. ``cta_group`` (not in the word) defaults to the first legal one.

    >>> decode(0x08200490, kind="f16").a_type
    'bf16'
    >>> decode(0x08200490)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    layoutalg.nvidia.blackwell.idesc.IdescError: decode: 0x08200490 reads legally as more than one kind: kind::f16 (bf16 x bf16 -> f32), ...
    """
    if isinstance(word, bool) or not isinstance(word, int) or not 0 <= word < 1 << 32:
        raise IdescError(f"decode: an instruction descriptor is a 32-bit unsigned int, got {word!r}")
    if kind is not None:
        return _decode_as(word, canonical_kind(kind), cta_group, ws, sf_vec_size)
    found = readings(word, cta_group=cta_group, ws=ws)
    if len(found) == 1:
        return found[0]
    if not found:
        errs = []
        for k in KINDS:
            try:
                _decode_as(word, k, cta_group, ws, None)
            except IdescError as e:
                errs.append(str(e).split(": ", 2)[-1])
        raise IdescError(f"decode: 0x{word:08x} is no legal descriptor of any kind: "
                         + "; ".join(f"kind::{k}: {e}" for k, e in zip(KINDS, errs)))
    names = ", ".join(f"kind::{d.kind} ({d.a_type} x {d.b_type} -> {d.c_type})" for d in found)
    raise IdescError(f"decode: 0x{word:08x} reads legally as more than one kind: {names}; pass kind=")


@guarded
def readings(word: int, *, cta_group: int | None = None, ws: bool = False) -> list[InstrDescriptor]:
    """Every kind's legal reading of ``word`` (empty if none).

    >>> [d.kind for d in readings(0x08200490)]
    ['f16', 'f8f6f4']
    """
    out = []
    for k in KINDS:
        with contextlib.suppress(IdescError):
            out.append(_decode_as(word, k, cta_group, ws, None))
    return out



# --------------------------------------------------------------------------------------------
# from a CuTe atom's name
# --------------------------------------------------------------------------------------------

_ATOM = re.compile(r"^(?:cute::)?SM100_MMA_(?P<fam>TF32|F16BF16|S8|F8F6F4|MXF8F6F4|MXF4NVF4|MXF4)"
                   r"(?P<two>_2x1SM)?_(?P<src>SS|TS)(?P<sfx>_SPARSE|_SCALED)?$")


def atom_instr_desc(atom: str, a_type: str, b_type: str, c_type: str, m: int, n: int, a_major: str = "K",
                    b_major: str = "K", *, sf_vec_size: int | None = None, **options: Any) -> InstrDescriptor:
    """The descriptor CuTe's ``MMA_Traits<atom<...>>::idesc_`` carries: the kind, ``cta_group`` and
    sparsity read from the atom's name (``SM100_MMA_F16BF16_2x1SM_SS``, ``SM100_MMA_S8_SS_SPARSE``,
    ...), the rest as :func:`make_instr_desc` takes it. ``SM100_MMA_MXF4_*`` is ``kind::mxf4`` with
    32-element scale vectors and ``kind::mxf4nvf4`` with 16 (``sf_vec_size``, CuTe's ``VS``).
    The shape is checked against the ISA; CuTe 4.2's atoms are stricter in places (their
    static_asserts: the TS and some sparse atoms want N a multiple of 16 at M=128 and of 32 with two
    CTAs, ``MXF8F6F4_2x1SM`` wants M=256, the S8 1SM atoms refuse N=24): whether CuTe offers the
    atom at that shape is the atom catalog's question, not this word's.

    >>> atom_instr_desc("SM100_MMA_F16BF16_2x1SM_SS", "bf16", "bf16", "f32", 256, 256).word == 0x10400490
    True
    >>> atom_instr_desc("SM100_MMA_MXF4_SS", "e2m1", "e2m1", "f32", 128, 128, sf_vec_size=16, scale_type="ue4m3").kind
    'mxf4nvf4'
    """
    mt = _ATOM.match(atom.strip()) if isinstance(atom, str) else None
    if mt is None:
        raise IdescError(
            f"atom_instr_desc: {atom!r} is not an SM100 UMMA atom of CuTe 4.2 "
            "(SM100_MMA_{TF32,F16BF16,S8,F8F6F4,MXF8F6F4,MXF4,MXF4NVF4}[_2x1SM]_{SS,TS}[_SPARSE|_SCALED])"
        )
    fam = mt["fam"]
    kind = {"TF32": "tf32", "F16BF16": "f16", "S8": "i8", "F8F6F4": "f8f6f4", "MXF8F6F4": "mxf8f6f4", "MXF4NVF4": "mxf4nvf4"}.get(fam)
    if fam == "MXF4":
        if sf_vec_size not in (16, 32):
            raise IdescError(f"atom_instr_desc: {atom} needs sf_vec_size 16 (kind::mxf4nvf4) or 32 (kind::mxf4), "
                             f"CuTe's VS; got {sf_vec_size!r}")
        kind = "mxf4" if sf_vec_size == 32 else "mxf4nvf4"
    if mt["src"] == "TS" and _canonical_major(a_major, "a") != "K":
        raise IdescError(f"atom_instr_desc: {atom} reads A from tensor memory, which is K-major (CuTe: 'A from TMEM can't be transposed')")
    options.setdefault("cta_group", 2 if mt["two"] else 1)
    if options["cta_group"] != (2 if mt["two"] else 1):
        raise IdescError(f"atom_instr_desc: {atom} is a cta_group::{2 if mt['two'] else 1} atom, got cta_group={options['cta_group']}")
    if mt["sfx"] == "_SPARSE":
        options.setdefault("sparse", True)
    if bool(options.get("sparse")) != (mt["sfx"] == "_SPARSE"):
        raise IdescError(f"atom_instr_desc: sparse={options.get('sparse')} contradicts the atom {atom}")
    assert kind is not None
    return make_instr_desc(kind, a_type, b_type, c_type, m, n, a_major, b_major, sf_vec_size=sf_vec_size, **options)
