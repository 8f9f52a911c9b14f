"""Blackwell (sm_100) ``tcgen05.mma`` atoms -- CuTe's ``SM100_MMA_*`` -- as layouts.

One thread issues a ``tcgen05.mma`` for the whole CTA (``cta_group::1``) or for a pair of CTAs
(``cta_group::2``, CuTe's ``_2x1SM`` atoms). A and B are read from shared memory through
descriptors (``_SS``; A may come from tensor memory, ``_TS``), and D lives in tensor memory. CuTe's
``MMA_Traits`` therefore describe an atom with one "thread" per CTA:

* 1SM: ``ThrID = 1:0``; ``ALayout = (1,(M,K)):(0,(1,M))``, ``BLayout = (1,(N,K)):(0,(1,N))``,
  ``CLayout = (1,(M,N)):(0,(1,M))`` -- the one thread holds the whole tile;
* 2x1SM: ``ThrID = 2:1``; each CTA of the pair holds half of the rows of A and C and half of the
  columns of B: ``ALayout = (2,(M/2,K)):(M/2,(1,M))``, ``BLayout = (2,(N/2,K)):(N/2,(1,N))``,
  ``CLayout = (2,(M/2,N)):(M/2,(1,M))``.

K is 256 bits of the operand type (``tf32`` 8, ``f16``/``bf16`` 16, ``s8``/fp8 32 (also fp6/fp4 in
``kind::f8f6f4``, which stores them one per byte), packed fp4 in ``kind::mxf4*`` 64); sparse atoms
double it (CuTe's A layout of a sparse atom is over the logical ``M x K`` tile).

Worked by hand: ``SM100_MMA_F16BF16_2x1SM_SS<bf16,bf16,float,256,256,K,K>``: K = 256/16 = 16; CTA 1
holds C rows 128..255, so value ``(m, n) = (5, 7)`` of thread 1 is element ``128 + 5 + 256*7 = 1925``
of the column-major 256x256 tile -- the layout ``(2,(128,256)):(128,(1,256))`` at ``(1, 5 + 128*7)``::

    >>> a = umma_atom("SM100_MMA_F16BF16_2x1SM_SS<bf16,bf16,float,256,256,K,K>")
    >>> a.shape_mnk, str(a.CLayout), a.CLayout(1, 5 + 128 * 7)
    ((256, 256, 16), '(2,(128,256)):(128,(1,256))', 1925)

Legal shapes and types are CuTe 4.2's ``static_assert``\\s (``cute/arch/mma_sm100_umma.hpp``,
``cute/atom/mma_traits_sm100.hpp``) together with the PTX ISA's tcgen05 rules (operand types per
``.kind``; ``M``; ``N`` steps; A from tensor memory and 4/6-bit operands are K-major only). A
configuration outside them raises a :class:`~layoutalg.errors.LayoutError` naming the rule.

Checked against: CuTe C++ 4.2 ``MMA_Traits<SM100_MMA_*>`` compiled on the host (Shape_MNK, ThrID,
A/B/C layouts of every atom family over types, majors, M and N; recorded in
``tests/data/cute/umma_atoms.json``) and the PTX ISA's tcgen05 shape table. **None of it ran on
sm_100 hardware** (there is no Blackwell GPU here).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from ...errors import LayoutError
from ...layout import Layout
from ...tiled import MMAAtom
from ..common.dtypes import dtype_name

__all__ = [
    "UMMA_FAMILIES",
    "UMMAAtom",
    "umma_atom",
    "umma_atom_names",
    "umma_type",
    "umma_type_bits",
    "cute_cpp_type",
    "split_umma_name",
]

# ---------------------------------------------------------------------------------------------
# types
# ---------------------------------------------------------------------------------------------
#: canonical type name -> (bits in a register/tile, C++ spelling CuTe uses)
_TYPES: dict[str, tuple[int, str]] = {
    "f16": (16, "half_t"), "bf16": (16, "bfloat16_t"), "tf32": (32, "tfloat32_t"), "f32": (32, "float"),
    "s32": (32, "int32_t"), "s8": (8, "int8_t"), "u8": (8, "uint8_t"),
    "e4m3": (8, "float_e4m3_t"), "e5m2": (8, "float_e5m2_t"),
    "e2m3": (6, "float_e2m3_t"), "e3m2": (6, "float_e3m2_t"), "e2m1": (4, "float_e2m1_t"),
    "ue8m0": (8, "float_ue8m0_t"), "ue4m3": (8, "float_ue4m3_t"),
}
#: how a canonical type is spelled in atom names (c_type f32 as CuTe's ``float``)
_NAME_SPELLING = {"f32": "float", "s32": "int32_t"}

_FP8 = ("e4m3", "e5m2")
_FP6 = ("e2m3", "e3m2")
_F8F6F4 = _FP8 + _FP6 + ("e2m1",)


def umma_type(name: Any) -> str:
    """The canonical name of a tcgen05 operand/accumulator/scale type, from PTX, CuTe C++ or short text.

    >>> umma_type("bfloat16_t"), umma_type("cutlass::float_e2m1_t"), umma_type("float")
    ('bf16', 'e2m1', 'f32')
    """
    return dtype_name(name, allowed=_TYPES, op="umma_type")


def umma_type_bits(name: Any) -> int:
    """Bits of one element of the type (``e2m1`` 4, ``e2m3`` 6; see :func:`cute_cpp_type` for smem storage).

    >>> umma_type_bits("tf32"), umma_type_bits("e2m1")
    (32, 4)
    """
    return _TYPES[umma_type(name)][0]


def cute_cpp_type(name: Any, kind: str | None = None) -> str:
    """CuTe's C++ spelling of a type; in ``kind::f8f6f4`` / ``mxf8f6f4`` fp6/fp4 are stored one per byte
    (``cutlass::detail::float_e2m1_unpacksmem_t``), in ``kind::mxf4*`` e2m1 is packed (``float_e2m1_t``).

    >>> cute_cpp_type("e2m1", "f8f6f4"), cute_cpp_type("e2m1", "mxf4"), cute_cpp_type("bf16")
    ('cutlass::detail::float_e2m1_unpacksmem_t', 'cutlass::float_e2m1_t', 'cutlass::bfloat16_t')
    """
    t = umma_type(name)
    cpp = _TYPES[t][1]
    if t in ("f32", "s32", "s8", "u8"):
        return cpp
    if kind in ("f8f6f4", "mxf8f6f4") and t in _FP6 + ("e2m1",):
        return "cutlass::detail::" + cpp.replace("_t", "_unpacksmem_t")
    return "cutlass::" + cpp


# ---------------------------------------------------------------------------------------------
# families
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Family:
    name: str  # CuTe's name without SM100_MMA_
    kind: str  # tcgen05 kind (mxf4 families: the VS picks mxf4 or mxf4nvf4)
    cta_group: int
    source: str  # "SS" or "TS"
    sparse: bool
    scaled: bool  # _SCALED: a scale_input_d template argument (ScaleC)
    block_scaled: bool  # a scale-factor type (mx kinds)
    vs: bool  # a vector-size template argument
    tail: tuple[str, ...]  # optional template arguments after the majors, in order
    n_rule: str  # see _n_ok


def _fam(name: str, kind: str, *, sparse: bool = False, scaled: bool = False, tail: tuple[str, ...] = ("a_neg", "b_neg"),
         n_rule: str = "") -> list[_Family]:
    out = []
    for cta in (1, 2):
        for src in ("SS", "TS"):
            full = f"{name}{'_2x1SM' if cta == 2 else ''}_{src}{'_SCALED' if scaled else ''}{'_SPARSE' if sparse else ''}"
            out.append(_Family(full, kind, cta, src, sparse, scaled, kind.startswith("mx"), name.startswith("MXF4"),
                               tail, n_rule))
    return out


def _families() -> dict[str, _Family]:
    fams: list[_Family] = []
    keep = {
        # (family name): the forms CuTe 4.2 has
        "TF32_SS", "TF32_TS", "TF32_2x1SM_SS", "TF32_2x1SM_TS", "TF32_SS_SPARSE", "TF32_2x1SM_SS_SPARSE",
        "F16BF16_SS", "F16BF16_TS", "F16BF16_2x1SM_SS", "F16BF16_2x1SM_TS", "F16BF16_SS_SPARSE",
        "F16BF16_2x1SM_SS_SPARSE", "F16BF16_SS_SCALED", "F16BF16_TS_SCALED", "F16BF16_2x1SM_SS_SCALED",
        "F16BF16_2x1SM_TS_SCALED",
        "S8_SS", "S8_TS", "S8_2x1SM_SS", "S8_2x1SM_TS", "S8_SS_SPARSE", "S8_2x1SM_SS_SPARSE",
        "F8F6F4_SS", "F8F6F4_TS", "F8F6F4_2x1SM_SS", "F8F6F4_2x1SM_TS", "F8F6F4_SS_SPARSE", "F8F6F4_2x1SM_SS_SPARSE",
        "MXF8F6F4_SS", "MXF8F6F4_2x1SM_SS", "MXF8F6F4_SS_SPARSE", "MXF8F6F4_2x1SM_SS_SPARSE",
        "MXF4_SS", "MXF4_2x1SM_SS", "MXF4NVF4_SS_SPARSE", "MXF4NVF4_2x1SM_SS_SPARSE",
    }
    for sparse in (False, True):
        fams += _fam("TF32", "tf32", sparse=sparse)
        fams += _fam("F16BF16", "f16", sparse=sparse)
        fams += _fam("S8", "i8", sparse=sparse, tail=("c_sat",))
        fams += _fam("F8F6F4", "f8f6f4", sparse=sparse)
        fams += _fam("MXF8F6F4", "mxf8f6f4", sparse=sparse)
        fams += _fam("MXF4", "mxf4", sparse=sparse)
        fams += _fam("MXF4NVF4", "mxf4nvf4", sparse=sparse)
    fams += _fam("F16BF16", "f16", scaled=True)
    out = {}
    for f in fams:
        if f.name not in keep:
            continue
        tail = f.tail
        if f.source == "TS":  # every TS atom takes (a_neg, b_neg, c_sat)
            tail = ("a_neg", "b_neg", "c_sat")
        if f.name in ("S8_SS", "S8_2x1SM_SS", "S8_SS_SPARSE", "S8_2x1SM_SS_SPARSE"):
            tail = ("c_sat",)
        out[f.name] = _Family(f.name, f.kind, f.cta_group, f.source, f.sparse, f.scaled, f.block_scaled, f.vs,
                              tail, f.n_rule)
    return out


#: CuTe 4.2's SM100 MMA atom families (name without ``SM100_MMA_``) -> their fixed properties
UMMA_FAMILIES: dict[str, _Family] = _families()


# ---------------------------------------------------------------------------------------------
# legality: CuTe 4.2's static_asserts and the PTX ISA's rules
# ---------------------------------------------------------------------------------------------
def _m_rule(f: _Family) -> tuple[int, ...]:
    if f.kind in ("mxf8f6f4",):
        return (128,) if f.cta_group == 1 else (256,)
    if f.name.startswith("MXF4NVF4") and f.sparse and f.cta_group == 2:
        return (256,)  # PTX ISA: sparse kind::mxf4nvf4 / mxf4 with cta_group::2 is M = 256 (CuTe has no assert)
    if f.name.startswith("MXF4"):
        return (128,) if f.cta_group == 1 else (128, 256)
    return (64, 128) if f.cta_group == 1 else (128, 256)


def _n_rule(f: _Family, M: int, b_major: str) -> tuple[int, int, str]:
    """(min N, step, extra) of the family; extra 'or8' means N = 8 is also legal."""
    fam, cta, ts = f.name, f.cta_group, f.source == "TS"
    if fam.startswith("S8"):
        return (16, 16, "or8") if cta == 1 else (32, 32, "")
    if fam.startswith("F8F6F4") and not ts:
        if f.sparse:
            if cta == 1:
                return (8, 8, "") if M == 64 else (16, 16, "")
            return (32, 32, "")
        if cta == 1:
            return (8, 8, "") if b_major == "K" else (16, 16, "")
        return (16, 16, "") if b_major == "K" else (32, 32, "")
    if ts:
        if cta == 1:
            return (8, 8, "") if M == 64 else (16, 16, "")
        return (32, 32, "")
    return (8, 8, "") if cta == 1 else (16, 16, "")


def _check(f: _Family, name: str, types: dict[str, str], M: int, N: int, a_major: str, b_major: str,
           vs: int | None, scale_c: int | None) -> None:
    op = f"umma_atom: {name}"
    ms = _m_rule(f)
    if M not in ms:
        raise LayoutError(f"{op}: M = {M} is not legal for SM100_MMA_{f.name} (cta_group::{f.cta_group}); "
                          f"M must be {' or '.join(map(str, ms))}")
    lo, step, extra = _n_rule(f, M, b_major)
    if f.kind == "f8f6f4" and b_major == "MN" and step < 16:
        # PTX ISA: kind::f8f6f4 N "steps of 8 OR steps of 16" -- 16 when B is MN-major (CuTe's
        # SM100_MMA_F8F6F4_SS asserts it; its TS and sparse forms do not, the ISA does)
        lo, step = max(lo, 16), 16
    if not (lo <= N <= 256 and N % step == 0) and not (extra == "or8" and N == 8):
        rule = f"a multiple of {step} in [{lo}, 256]" + (" or 8" if extra else "")
        why = f" with B {b_major}-major" if f.name.startswith("F8F6F4") and not f.sparse and f.source == "SS" else ""
        why += f" for M = {M}" if (f.source == "TS" or f.sparse) and f.cta_group == 1 and f.name.startswith(("TF32", "F16", "F8")) else ""
        raise LayoutError(f"{op}: N = {N} is not legal for SM100_MMA_{f.name}{why}: N must be {rule}")
    a, b, c = types["a"], types["b"], types["c"]
    kind = f.kind
    if kind == "tf32":
        if a != "tf32" or b != "tf32" or c != "f32":
            raise LayoutError(f"{op}: kind::tf32 takes A, B tf32 and C f32 (got {a}, {b}, {c})")
    elif kind == "f16":
        if a not in ("f16", "bf16") or b != a:
            raise LayoutError(f"{op}: kind::f16 takes A and B both f16 or both bf16 (got {a}, {b})")
        if c not in ("f32", "f16") or (c == "f16" and a != "f16"):
            raise LayoutError(f"{op}: kind::f16 accumulates in f32, or in f16 for f16 inputs (got {a} -> {c})")
    elif kind == "i8":
        if a not in ("s8", "u8") or b not in ("s8", "u8") or c != "s32":
            raise LayoutError(f"{op}: kind::i8 takes A, B s8/u8 and C s32 (got {a}, {b}, {c})")
    elif kind in ("f8f6f4", "mxf8f6f4"):
        if a not in _F8F6F4 or b not in _F8F6F4:
            raise LayoutError(f"{op}: kind::{kind} takes A and B in {list(_F8F6F4)} (got {a}, {b})")
        cs = ("f32", "f16") if kind == "f8f6f4" else ("f32",)
        if c not in cs:
            raise LayoutError(f"{op}: kind::{kind} accumulates in {' or '.join(cs)} (got {c})")
        for who, t, maj in (("A", a, a_major), ("B", b, b_major)):
            if maj == "MN" and t not in _FP8:
                raise LayoutError(f"{op}: {who} is {t} ({umma_type_bits(t)}-bit) and MN-major; the ISA reads "
                                  "4- and 6-bit operands of kind::f8f6f4/mxf8f6f4 K-major only")
    else:  # mxf4 families
        if a != "e2m1" or b != "e2m1" or c != "f32":
            raise LayoutError(f"{op}: kind::mxf4 / mxf4nvf4 take A, B e2m1 and C f32 (got {a}, {b}, {c})")
        if a_major != "K" or b_major != "K":
            raise LayoutError(f"{op}: kind::mxf4 / mxf4nvf4 read packed fp4 K-major only (got A {a_major}, B {b_major})")
    if f.block_scaled:
        sf = types.get("sf")
        if f.kind == "mxf8f6f4" and sf != "ue8m0":
            raise LayoutError(f"{op}: kind::mxf8f6f4 scale factors are ue8m0 (got {sf})")
        if f.vs:
            small, big = (32, 64) if f.sparse else (16, 32)
            if vs not in (small, big):
                raise LayoutError(f"{op}: vector size {vs} is not {small} or {big}")
            if sf not in ("ue8m0", "ue4m3"):
                raise LayoutError(f"{op}: scale factor type {sf} is not ue8m0 or ue4m3")
            if vs == big and sf != "ue8m0":
                raise LayoutError(f"{op}: vector size {vs} (kind::mxf4) takes ue8m0 scale factors only (got {sf})")
    if f.source == "TS" and a_major != "K":
        raise LayoutError(f"{op}: A from tensor memory (_TS) can't be transposed: a_major must be K")
    if f.scaled and (scale_c is None or not 0 <= scale_c <= 15):
        raise LayoutError(f"{op}: scale_input_d (ScaleC) = {scale_c} is outside [0, 15]")


def _kind_of(f: _Family, vs: int | None) -> str:
    if f.vs:
        small = 32 if f.sparse else 16
        return "mxf4nvf4" if vs == small else "mxf4"
    return f.kind


def _k_of(f: _Family, a: str) -> int:
    if f.name.startswith("MXF4"):
        k = 64
    elif f.kind in ("f8f6f4", "mxf8f6f4"):
        k = 32
    else:
        k = 256 // umma_type_bits(a)
    return 2 * k if f.sparse else k


# ---------------------------------------------------------------------------------------------
# the atom
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class UMMAAtom(MMAAtom):
    """A ``tcgen05.mma`` atom: an :class:`~layoutalg.tiled.MMAAtom` with its CuTe configuration.

    Fields (stable API): ``family`` (CuTe's name less ``SM100_MMA_``), ``kind`` (``"f16"``, ``"tf32"``,
    ``"i8"``, ``"f8f6f4"``, ``"mxf8f6f4"``, ``"mxf4"``, ``"mxf4nvf4"``), ``a_type``/``b_type``/``c_type``
    (canonical names), ``sf_type`` (scale factors of block-scaled kinds, else None), ``M``, ``N``,
    ``K``, ``a_major``/``b_major`` (``"K"``/``"MN"``), ``cta_group`` (1 or 2), ``source`` (``"SS"``:
    A from shared memory, ``"TS"``: from tensor memory), ``sparse``, ``scaled`` (the ``_SCALED``
    forms' ``scale_c``), ``block_scaled``, ``vector_size``, ``negate_a``/``negate_b``, ``saturate``;
    CuTe's ``ThrID``, ``ALayout``, ``BLayout``, ``CLayout`` are properties (the inherited TV layouts).
    """

    family: str = ""
    kind: str = ""
    a_type: str = ""
    b_type: str = ""
    c_type: str = ""
    sf_type: str | None = None
    M: int = 0
    N: int = 0
    K: int = 0
    a_major: str = "K"
    b_major: str = "K"
    cta_group: int = 1
    source: str = "SS"
    sparse: bool = False
    scaled: bool = False
    scale_c: int | None = None
    block_scaled: bool = False
    vector_size: int | None = None
    negate_a: bool = False
    negate_b: bool = False
    saturate: bool = False
    tail: tuple = field(default=(), compare=False, repr=False)

    @property
    def ThrID(self) -> Layout:  # noqa: N802 - CuTe's name
        """CuTe's ``MMA_Traits::ThrID``: ``1:0`` (one CTA) or ``2:1`` (a CTA pair)."""
        return self.thr_id

    @property
    def ALayout(self) -> Layout:  # noqa: N802
        """CuTe's ``ALayout``: (CTA, (m, k)) -> m + M*k."""
        return self.layout_a_tv

    @property
    def BLayout(self) -> Layout:  # noqa: N802
        """CuTe's ``BLayout``: (CTA, (n, k)) -> n + N*k."""
        return self.layout_b_tv

    @property
    def CLayout(self) -> Layout:  # noqa: N802
        """CuTe's ``CLayout``: (CTA, (m, n)) -> m + M*n."""
        return self.layout_c_tv

    @property
    def cute_cpp(self) -> str:
        """The C++ type CuTe spells for this atom (``MMA_Traits<...>`` argument; F8F6F4 SS atoms are
        CuTe's ``MMA_Traits<SM100_MMA_F8F6F4_SS, a, b, c, C<M>, C<N>, ...>`` form)."""
        return _cpp_spelling(self)

    def idesc(self) -> Any:
        """The atom's 32-bit instruction descriptor (:func:`layoutalg.nvidia.blackwell.idesc.make_instr_desc` with the
        atom's kind, types, M, N, majors, negation, saturation, sparsity, cta_group and scale type): equal
        to CuTe's ``MMA_Traits<...>::idesc_`` for every atom of the sweep (tests/test_nvidia_umma.py).

        >>> hex(umma_atom("SM100_MMA_F16BF16_SS<bf16,bf16,float,128,256,K,MN>").idesc().word)
        '0x8410490'
        """
        from . import idesc as _idesc
        kw: dict[str, Any] = dict(negate_a=self.negate_a, negate_b=self.negate_b, saturate=self.saturate,
                                  sparse=self.sparse, cta_group=self.cta_group)
        if self.block_scaled:
            kw["scale_type"] = self.sf_type
        return _idesc.make_instr_desc(self.kind, self.a_type, self.b_type, self.c_type, self.M, self.N,
                                      self.a_major, self.b_major, **kw)


def _spell(t: str) -> str:
    return _NAME_SPELLING.get(t, t)


def _name(f: _Family, a: str, b: str, c: str, sf: str | None, M: int, N: int, vs: int | None, am: str, bm: str,
          scale_c: int | None, neg_a: bool, neg_b: bool, sat: bool) -> str:
    args = [_spell(a), _spell(b), _spell(c)]
    if f.block_scaled:
        args.append(str(sf))
    args += [str(M), str(N)]
    if f.vs:
        args.append(str(vs))
    args += [am, bm]
    if f.scaled:
        args.append(str(scale_c))
    vals = {"a_neg": "Neg" if neg_a else "One", "b_neg": "Neg" if neg_b else "One", "c_sat": "True" if sat else "False"}
    tail = [vals[t] for t in f.tail]
    defaults = [{"a_neg": "One", "b_neg": "One", "c_sat": "False"}[t] for t in f.tail]
    while tail and tail[-1] == defaults[len(tail) - 1]:
        tail.pop()
    args += tail
    return f"SM100_MMA_{f.name}<{','.join(args)}>"


def _cpp_spelling(at: UMMAAtom) -> str:
    f = UMMA_FAMILIES[at.family]
    k = at.kind
    maj = {"K": "UMMA::Major::K", "MN": "UMMA::Major::MN"}
    neg = {False: "UMMA::ScaleIn::One", True: "UMMA::ScaleIn::Neg"}
    sat = {False: "UMMA::Saturate::False", True: "UMMA::Saturate::True"}
    types = [cute_cpp_type(at.a_type, k), cute_cpp_type(at.b_type, k), cute_cpp_type(at.c_type, k)]
    if f.name in ("F8F6F4_SS", "F8F6F4_2x1SM_SS"):
        return (f"SM100_MMA_{f.name}, {', '.join(types)}, C<{at.M}>, C<{at.N}>, "
                f"integral_constant<UMMA::Major, {maj[at.a_major]}>, integral_constant<UMMA::Major, {maj[at.b_major]}>, "
                f"integral_constant<UMMA::ScaleIn, {neg[at.negate_a]}>, integral_constant<UMMA::ScaleIn, {neg[at.negate_b]}>")
    args = list(types)
    if f.block_scaled:
        args.append(cute_cpp_type(at.sf_type, k))
    args += [str(at.M), str(at.N)]
    if f.vs:
        args.append(str(at.vector_size))
    args += [maj[at.a_major], maj[at.b_major]]
    if f.scaled:
        args.append(f"{at.scale_c}u")
    vals = {"a_neg": neg[at.negate_a], "b_neg": neg[at.negate_b], "c_sat": sat[at.saturate]}
    args += [vals[t] for t in f.tail]
    return f"SM100_MMA_{f.name}<{', '.join(args)}>"


def _major(x: Any, op: str) -> str:
    s = str(x).strip().replace("UMMA::Major::", "").replace("cute::", "").upper()
    if s in ("K",):
        return "K"
    if s in ("MN", "M", "N"):
        return "MN"
    raise LayoutError(f"{op}: major {x!r} is not K or MN")


def _flag(x: Any, op: str, what: str, true: str, false: str) -> bool:
    if isinstance(x, bool):
        return x
    s = str(x).strip()
    for pre in ("UMMA::ScaleIn::", "UMMA::Saturate::", "cute::"):
        s = s.replace(pre, "")
    if s in (true, "1", "true"):
        return True
    if s in (false, "0", "false"):
        return False
    raise LayoutError(f"{op}: {what} {x!r} is not {true} or {false}")


_WRAP = re.compile(r"^\s*(?:cute::)?(?:MMA_Atom|MMA_Traits)\s*<(.*)>\s*(?:\{\s*\})?\s*$", re.S)
_F8F6F4_TRAITS = re.compile(r"^\s*(?:cute::)?(SM100_MMA_F8F6F4(?:_2x1SM)?_SS)\s*,(.*)$", re.S)
_INTEGRAL = re.compile(r"^(?:cute::)?(?:C|Int|integral_constant\s*<[^,<>]*,)\s*<?\s*([^<>]+?)\s*>$")


def _unwrap_cpp(text: str) -> str:
    """CuTe's C++ spellings of an atom -> layoutalg's: ``MMA_Atom<MMA_Traits<X>>{}`` -> X, and the traits form
    of the non-template F8F6F4 SS atoms, ``SM100_MMA_F8F6F4_SS, a, b, c, C<M>, C<N>,
    integral_constant<UMMA::Major, UMMA::Major::K>, ...`` -> ``SM100_MMA_F8F6F4_SS<a,b,c,M,N,K,...>``."""
    prev = None
    while prev != text:
        prev = text
        m = _WRAP.match(text)
        if m:
            text = m.group(1)
    m = _F8F6F4_TRAITS.match(text)
    if not m:
        return text
    args = []
    depth, cur = 0, ""
    for ch in m.group(2):
        if ch == "," and depth == 0:
            args.append(cur.strip())
            cur = ""
            continue
        depth += {"<": 1, ">": -1}.get(ch, 0)
        cur += ch
    args.append(cur.strip())
    out = []
    for a in args:
        mm = re.match(r"^(?:cute::)?(?:C|Int)\s*<\s*(\d+)\s*>\s*(?:\{\s*\})?$", a)
        if mm:
            out.append(mm.group(1))
            continue
        mm = re.match(r"^(?:cute::)?integral_constant\s*<[^,]*,\s*(.*?)\s*>\s*(?:\{\s*\})?$", a)
        out.append(mm.group(1) if mm else a)
    return f"{m.group(1)}<{','.join(out)}>"


_NAME_RE = re.compile(r"^\s*(?:cute::)?SM100_MMA_(?P<fam>[A-Z0-9_x]+?)\s*<(?P<args>.*)>\s*$", re.S)


def split_umma_name(name: str) -> tuple[str, list[str]] | None:
    """``(family, template arguments)`` of a UMMA atom's name, read without any check (None if it is not
    spelled ``SM100_MMA_<family><args...>``). A documented hook for tests that spell atoms layoutalg refuses.

    >>> split_umma_name("SM100_MMA_F16BF16_SS<bf16, bf16, float, 128, 256, K, K>")
    ('F16BF16_SS', ['bf16', 'bf16', 'float', '128', '256', 'K', 'K'])
    """
    m = _NAME_RE.match(str(name))
    if not m:
        return None
    return m.group("fam"), [x.strip() for x in m.group("args").split(",")]


def _int(x: Any, op: str, what: str) -> int:
    s = str(x).strip().rstrip("uU")
    if not re.fullmatch(r"\d+", s):
        raise LayoutError(f"{op}: {what} {x!r} is not a non-negative integer")
    return int(s)


@cache
def _build(fam: str, a: str, b: str, c: str, sf: str | None, M: int, N: int, vs: int | None, am: str, bm: str,
           scale_c: int | None, neg_a: bool, neg_b: bool, sat: bool) -> UMMAAtom:
    f = UMMA_FAMILIES[fam]
    name = _name(f, a, b, c, sf, M, N, vs, am, bm, scale_c, neg_a, neg_b, sat)
    _check(f, name, {"a": a, "b": b, "c": c, "sf": sf or ""}, M, N, am, bm, vs, scale_c)
    # PTX ISA 9.1 Table 49 ("Transpose and Negate operation for various MMA-Kind"): negate A/B is
    # supported by every kind but kind::i8 (mxf4 and mxf4nvf4 included; CuTe 4.2 compiles those atoms too)
    if neg_a and f.kind == "i8":
        raise LayoutError(f"umma_atom: {name}: negate is not valid for kind::i8 (the ISA allows it for every other "
                          "kind)")
    if neg_b and f.kind == "i8":
        raise LayoutError(f"umma_atom: {name}: negate is not valid for kind::i8")
    if sat and f.kind != "i8":
        raise LayoutError(f"umma_atom: {name}: saturate applies to kind::i8 only")
    K = _k_of(f, a)
    if f.cta_group == 1:
        thr = Layout(1, 0)
        A = Layout((1, (M, K)), (0, (1, M)))
        B = Layout((1, (N, K)), (0, (1, N)))
        C = Layout((1, (M, N)), (0, (1, M)))
    else:
        thr = Layout(2, 1)
        A = Layout((2, (M // 2, K)), (M // 2, (1, M)))
        B = Layout((2, (N // 2, K)), (N // 2, (1, N)))
        C = Layout((2, (M // 2, N)), (M // 2, (1, M)))
    kind = _kind_of(f, vs)
    notes = (f"tcgen05.mma{'.sp' if f.sparse else ''}.cta_group::{f.cta_group}.kind::{kind}"
             f"{'.block_scale' if f.block_scaled else ''}, A from {'tensor' if f.source == 'TS' else 'shared'} memory, "
             "D in tensor memory (checked against CuTe C++ 4.2 on the host; not run on sm_100 hardware)")
    return UMMAAtom(name, (M, N, K), thr, A, B, C, (c, a, b, c), frg_a="tmem" if f.source == "TS" else "smem_desc",
                    frg_b="smem_desc", notes=notes, family=f.name, kind=kind, a_type=a, b_type=b, c_type=c,
                    sf_type=sf, M=M, N=N, K=K, a_major=am, b_major=bm, cta_group=f.cta_group, source=f.source,
                    sparse=f.sparse, scaled=f.scaled, scale_c=scale_c, block_scaled=f.block_scaled,
                    vector_size=vs if f.vs else (None if not f.block_scaled else (64 if f.sparse else 32)),
                    negate_a=neg_a, negate_b=neg_b, saturate=sat, tail=f.tail)


def _family_for(kind: str, cta_group: int, source: str, sparse: bool, scaled: bool) -> str:
    k = str(kind).replace("kind::", "").lower()
    base = {"f16": "F16BF16", "tf32": "TF32", "i8": "S8", "f8f6f4": "F8F6F4", "mxf8f6f4": "MXF8F6F4",
            "mxf4": "MXF4", "mxf4nvf4": "MXF4"}.get(k)
    if base is None:
        raise LayoutError(f"umma_atom: kind {kind!r} is not one of f16, tf32, i8, f8f6f4, mxf8f6f4, mxf4, mxf4nvf4")
    if base == "MXF4" and sparse:
        base = "MXF4NVF4"
    if cta_group not in (1, 2):
        raise LayoutError(f"umma_atom: cta_group {cta_group!r} is not 1 or 2")
    src = str(source).upper()
    if src not in ("SS", "TS"):
        raise LayoutError(f"umma_atom: source {source!r} is not 'SS' (A in shared memory) or 'TS' (A in tensor memory)")
    name = f"{base}{'_2x1SM' if cta_group == 2 else ''}_{src}{'_SCALED' if scaled else ''}{'_SPARSE' if sparse else ''}"
    if name not in UMMA_FAMILIES:
        raise LayoutError(f"umma_atom: CuTe 4.2 has no SM100_MMA_{name} (kind::{k}, cta_group::{cta_group}, {src}"
                          f"{', sparse' if sparse else ''}{', scaled' if scaled else ''})")
    return name


def umma_atom(name: str | None = None, *, kind: str | None = None, a_type: str | None = None,
              b_type: str | None = None, c_type: str | None = None, m: int | None = None, n: int | None = None,
              a_major: str = "K", b_major: str = "K", cta_group: int = 1, source: str = "SS", sparse: bool = False,
              sf_type: str | None = None, vector_size: int | None = None, scale_c: int | None = None,
              negate_a: bool = False, negate_b: bool = False, saturate: bool = False) -> UMMAAtom:
    """The UMMA atom CuTe spells ``name`` (template text), or the one with these keywords.

    ``name``: ``"SM100_MMA_F16BF16_SS<bf16,bf16,float,128,256,K,K>"`` -- CuTe's template argument
    order (a, b, c types, [scale-factor type], M, N, [vector size], A major, B major, [ScaleC],
    [a_neg, b_neg][, c_sat]), with C++ or short type names and ``K``/``MN`` or
    ``UMMA::Major::K``. CuTe's ``SM100_MMA_F8F6F4_SS`` is not a template (its traits take the
    arguments); layoutalg spells it as the others. Keywords: ``kind`` (``f16``, ``tf32``, ``i8``,
    ``f8f6f4``, ``mxf8f6f4``, ``mxf4``, ``mxf4nvf4``), ``a_type``, ``b_type``, ``c_type`` (default f32;
    s32 for i8), ``m``,
    ``n``, majors, ``cta_group`` (1 or 2), ``source`` (``SS``/``TS``), ``sparse``, ``sf_type``
    (block-scaled kinds; default ue8m0), ``vector_size`` (mxf4 kinds; default by kind), ``scale_c``
    (the ``_SCALED`` forms).

    >>> a = umma_atom(kind="f8f6f4", a_type="e4m3", b_type="e2m1", m=128, n=64)
    >>> a.name, a.shape_mnk, str(a.BLayout)
    ('SM100_MMA_F8F6F4_SS<e4m3,e2m1,float,128,64,K,K>', (128, 64, 32), '(1,(64,32)):(0,(1,64))')
    >>> umma_atom("SM100_MMA_F16BF16_SS<bf16,bf16,float,96,128,K,K>")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    layoutalg.errors.LayoutError: umma_atom: ...: M = 96 is not legal for SM100_MMA_F16BF16_SS (cta_group::1); M must be 64 or 128
    """
    op = "umma_atom"
    if name is not None:
        name = _unwrap_cpp(str(name))
        given: dict[str, Any] = {k: v for k, v in dict(kind=kind, a_type=a_type, b_type=b_type, c_type=c_type, m=m, n=n,
                                       sf_type=sf_type, vector_size=vector_size, scale_c=scale_c).items() if v is not None}
        flags: dict[str, Any] = dict(a_major=a_major, b_major=b_major, cta_group=cta_group, source=source,
                                     sparse=sparse, negate_a=negate_a, negate_b=negate_b, saturate=saturate)
        given.update({k: v for k, v in flags.items()
                      if v != {"a_major": "K", "b_major": "K", "cta_group": 1, "source": "SS"}.get(k, False)})
        if given:
            raise LayoutError(f"{op}: give a name or keywords, not both (the name fixes {sorted(given)})")
        mt = _NAME_RE.match(str(name))
        if not mt:
            raise LayoutError(f"{op}: {name!r} is not an atom name like 'SM100_MMA_F16BF16_SS<bf16,bf16,float,128,256,K,K>'")
        fam = mt.group("fam")
        if fam not in UMMA_FAMILIES:
            raise LayoutError(f"{op}: SM100_MMA_{fam} is not a CuTe 4.2 UMMA atom; known: "
                              f"{', '.join('SM100_MMA_' + k for k in UMMA_FAMILIES)}")
        f = UMMA_FAMILIES[fam]
        args = [x.strip() for x in mt.group("args").split(",")]
        need = ["a", "b", "c"] + (["sf"] if f.block_scaled else []) + ["M", "N"] + (["vs"] if f.vs else []) + ["am", "bm"]
        need += ["scale_c"] if f.scaled else []
        if not len(need) <= len(args) <= len(need) + len(f.tail):
            raise LayoutError(f"{op}: SM100_MMA_{fam} takes {len(need)} to {len(need) + len(f.tail)} template "
                              f"arguments ({', '.join(need + list(f.tail))}); got {len(args)} in {name!r}")
        v = dict(zip(need + list(f.tail), args))
        tps = {k: umma_type(v[k]) for k in ("a", "b", "c")}
        sf = umma_type(v["sf"]) if f.block_scaled else None
        return _build(fam, tps["a"], tps["b"], tps["c"], sf, _int(v["M"], op, "M"), _int(v["N"], op, "N"),
                      _int(v["vs"], op, "vector size") if f.vs else None, _major(v["am"], op), _major(v["bm"], op),
                      _int(v["scale_c"], op, "ScaleC") if f.scaled else None,
                      _flag(v.get("a_neg", "One"), op, "a_neg", "Neg", "One"),
                      _flag(v.get("b_neg", "One"), op, "b_neg", "Neg", "One"),
                      _flag(v.get("c_sat", "False"), op, "c_sat", "True", "False"))
    if kind is None or a_type is None or m is None or n is None:
        raise LayoutError(f"{op}: give a CuTe name, or kind=, a_type=, m=, n= (b_type defaults to a_type)")
    fam = _family_for(kind, cta_group, source, sparse, scale_c is not None)
    f = UMMA_FAMILIES[fam]
    k = str(kind).replace("kind::", "").lower()
    a = umma_type(a_type)
    b = umma_type(b_type or a_type)
    c = umma_type(c_type if c_type is not None else ("s32" if k == "i8" else "f32"))
    sf = umma_type(sf_type or "ue8m0") if f.block_scaled else None
    if sf_type is not None and not f.block_scaled:
        raise LayoutError(f"{op}: sf_type={sf_type!r} given for kind::{k}, which is not block-scaled")
    vs: int | None = None
    if f.vs:
        small, big = (32, 64) if sparse else (16, 32)
        default = small if k == "mxf4nvf4" else big
        vs = default if vector_size is None else int(vector_size)
        if (vs == small) != (k == "mxf4nvf4"):
            raise LayoutError(f"{op}: vector size {vs} is kind::{'mxf4nvf4' if vs == small else 'mxf4'}, not kind::{k}")
    elif vector_size is not None:
        raise LayoutError(f"{op}: vector_size={vector_size} given for kind::{k}, which has a fixed (or no) vector size")
    if isinstance(m, bool) or not isinstance(m, int) or isinstance(n, bool) or not isinstance(n, int):
        raise LayoutError(f"{op}: m={m!r}, n={n!r} must be ints")
    return _build(fam, a, b, c, sf, m, n, vs, _major(a_major, op), _major(b_major, op), scale_c,
                  bool(negate_a), bool(negate_b), bool(saturate))


def _legal_types(f: _Family) -> list[tuple[str, str, str, str | None, int | None]]:
    """A representative sweep of (a, b, c, sf, vs) per family."""
    k = f.kind
    if k == "tf32":
        return [("tf32", "tf32", "f32", None, None)]
    if k == "f16":
        return [("f16", "f16", "f32", None, None), ("bf16", "bf16", "f32", None, None), ("f16", "f16", "f16", None, None)]
    if k == "i8":
        return [("s8", "s8", "s32", None, None), ("u8", "s8", "s32", None, None)]
    if k == "f8f6f4":
        return [("e4m3", "e4m3", "f32", None, None), ("e5m2", "e4m3", "f16", None, None), ("e2m1", "e3m2", "f32", None, None),
                ("e2m3", "e5m2", "f32", None, None)]
    if k == "mxf8f6f4":
        return [("e4m3", "e4m3", "f32", "ue8m0", None), ("e2m1", "e5m2", "f32", "ue8m0", None)]
    small, big = (32, 64) if f.sparse else (16, 32)
    return [("e2m1", "e2m1", "f32", "ue8m0", big), ("e2m1", "e2m1", "f32", "ue4m3", small)]


@cache
def umma_atom_names(family: str | None = None) -> tuple[str, ...]:
    """Names of the atoms of a sweep: every family, representative types, both majors (where legal),
    every legal M and N.

    >>> names = umma_atom_names()
    >>> "SM100_MMA_F16BF16_SS<bf16,bf16,float,128,256,K,K>" in names, len(names) > 5000
    (True, True)
    """
    if family is None:  # every family's names, in UMMA_FAMILIES order (each family's sweep built once)
        return tuple(n for fam in UMMA_FAMILIES for n in umma_atom_names(fam))
    out = []
    for fam in (family,):
        f = UMMA_FAMILIES[fam]
        for (a, b, c, sf, vs) in _legal_types(f):
            for M in _m_rule(f):
                for am in ("K", "MN"):
                    for bm in ("K", "MN"):
                        for N in range(8, 257, 8):
                            try:
                                at = _build(fam, a, b, c, sf, M, N, vs, am, bm, 1 if f.scaled else None,
                                            False, False, False)
                            except LayoutError:
                                continue
                            out.append(at.name)
    return tuple(out)
