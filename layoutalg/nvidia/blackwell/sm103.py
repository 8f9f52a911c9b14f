"""sm_103 (B300) ``tcgen05.mma`` ULTRA atoms: CuTe 4.2's ``SM103_MXF4_ULTRA_SS_VS`` and ``_2x1SM_SS_VS``.

sm_103 adds a dense ``kind::mxf4nvf4`` MMA with K = 96 (``.block16`` / ``.block32``, CuTe's VS 16 / 32).
CuTe's ``MMA_Traits`` (``cute/atom/mma_traits_sm100.hpp``) describe it as the sm_100 UMMA atoms with
``K = 96``::

    SM103::SM103_MXF4_ULTRA_SS_VS<a, b, c, sf, M, N, VS, a_major, b_major[, a_neg, b_neg]>        M = 128
    SM103::SM103_MXF4_ULTRA_2x1SM_SS_VS<a, b, c, sf, M, N, VS, a_major, b_major[, a_neg, b_neg]>  M = 128 or 256

N is a multiple of 16 in [16, 256]; both operands are K-major (CuTe: "This MMA does not support
transpose"); VS = 32 only with e2m1 operands and ue8m0 factors, VS = 16 with ue8m0 or ue4m3.
The atom's :meth:`~Sm103UltraAtom.idesc` is CuTe's ``MMA_Traits::idesc_`` (its
``make_instr_desc_block_scaled``, which leaves the K bit 0); CuTe's ``mma_unpack`` sets the
K-dimension bit (31, ``k_size_ = 1``: K = 96) when it issues the instruction, and sets the
descriptors' ``lbo_mode`` (bit 52) with the LBO field holding the *absolute* start address of the next
k-block (:attr:`~Sm103UltraAtom.issued_idesc`; ``layoutalg desc --target sm_103`` reads such words).

    >>> a = sm103_atom("SM103_MXF4_ULTRA_2x1SM_SS_VS<e2m1,e2m1,float,ue8m0,256,128,32,K,K>")
    >>> a.shape_mnk, str(a.CLayout), hex(a.idesc().word), hex(a.issued_idesc)
    ((256, 128, 96), '(2,(128,128)):(128,(1,256))', '0x10a00480', '0x90a00480')

Checked against CuTe C++ 4.2 on the host (tests/data/cute/sm103_atoms.json); not run on sm_103.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Any

from ...errors import LayoutError
from ...layout import Layout
from .umma import UMMAAtom, cute_cpp_type, umma_type

__all__ = ["SM103_FAMILIES", "Sm103UltraAtom", "sm103_atom", "sm103_atom_names", "is_sm103_name"]

#: CuTe 4.2's SM103 ULTRA families -> CTA group
SM103_FAMILIES: dict[str, int] = {"SM103_MXF4_ULTRA_SS_VS": 1, "SM103_MXF4_ULTRA_2x1SM_SS_VS": 2}
_NAME_RE = re.compile(r"^(?:cute::)?(?:SM103::)?(?P<fam>SM103_MXF4_ULTRA_(?:2x1SM_)?SS_VS)<(?P<args>[^<>]*)>$")
_K = 96


def _normalise(name: str) -> str:
    s = re.sub(r"\s+", "", str(name))
    for wrap in ("cute::MMA_Atom<", "MMA_Atom<", "cute::MMA_Traits<", "MMA_Traits<"):
        if s.startswith(wrap) and s.endswith(">"):
            s = s[len(wrap):-1]
    return s.replace("cutlass::", "").replace("UMMA::Major::", "").replace("UMMA::ScaleIn::", "")


def is_sm103_name(name: str) -> bool:
    """Does ``name`` name an SM103 ULTRA atom?"""
    return isinstance(name, str) and "SM103_MXF4_ULTRA_" in name


@dataclass(frozen=True)
class Sm103UltraAtom(UMMAAtom):
    """An sm_103 ``tcgen05.mma`` ULTRA atom (K = 96): a :class:`~layoutalg.nvidia.blackwell.umma.UMMAAtom`."""

    @property
    def cute_cpp(self) -> str:
        """CuTe's C++ type of the atom (``cute::SM103::SM103_MXF4_ULTRA_SS_VS<...>``)."""
        neg = {False: "UMMA::ScaleIn::One", True: "UMMA::ScaleIn::Neg"}
        args = [cute_cpp_type(self.a_type, "mxf4"), cute_cpp_type(self.b_type, "mxf4"), cute_cpp_type(self.c_type),
                cute_cpp_type(str(self.sf_type)), str(self.M), str(self.N), str(self.vector_size),
                "UMMA::Major::K", "UMMA::Major::K"]
        if self.negate_a or self.negate_b:
            args += [neg[self.negate_a], neg[self.negate_b]]
        return f"cute::SM103::{self.family}<{', '.join(args)}>"

    @property
    def cute_dsl(self) -> str:
        """The CuTe DSL op (``from cutlass.cute.nvgpu import tcgen05``): ``SM103MmaMXF4Op`` (VS 32) or
        ``SM103MmaMXF4NVF4Op(sf_dtype, ...)`` (VS 16)."""
        if self.negate_a or self.negate_b:
            raise LayoutError(f"to_cute_dsl: {self.name}: the CuTe DSL spelling covers unnegated atoms only")
        common = f"({self.M}, {self.N}, {self.K}), tcgen05.CtaGroup.{'ONE' if self.cta_group == 1 else 'TWO'}, " \
                 "tcgen05.OperandSource.SMEM"
        if self.vector_size == 32:
            return f"tcgen05.SM103MmaMXF4Op({common})"
        sf = {"ue8m0": "cutlass.Float8E8M0FNU", "ue4m3": "cutlass.Float8E4M3FN"}[str(self.sf_type)]
        return f"tcgen05.SM103MmaMXF4NVF4Op({sf}, {common})"

    @property
    def scale_factor_atom(self) -> UMMAAtom:
        """CuTe's ``MMA_Traits<...>::MMA_ScaleFactor``: the sm_100 ``SM100_MMA_MXF4_SS`` atom whose scale-factor
        layouts the ULTRA atom's collectives use -- N rounded up to 128, M as is (1SM) or ``M/2 > 64 ? M/2 : M``
        (2x1SM), the same types, VS and negation.

        >>> sm103_atom("SM103_MXF4_ULTRA_2x1SM_SS_VS<e2m1,e2m1,float,ue8m0,256,64,32,K,K>").scale_factor_atom.name
        'SM100_MMA_MXF4_SS<e2m1,e2m1,float,ue8m0,128,128,32,K,K>'
        """
        from .umma import umma_atom

        m = self.M if self.cta_group == 1 else (self.M // 2 if self.M // 2 > 64 else self.M)
        n = -(-self.N // 128) * 128
        neg = f",{'Neg' if self.negate_a else 'One'},{'Neg' if self.negate_b else 'One'}" if self.negate_a or self.negate_b else ""
        return umma_atom(f"SM100_MMA_MXF4_SS<e2m1,e2m1,float,{self.sf_type},{m},{n},{self.vector_size},K,K{neg}>")

    def idesc(self) -> Any:
        """CuTe's ``MMA_Traits<...>::idesc_``: ``make_instr_desc_block_scaled`` of the types, M, N (K bit 0)."""
        from . import idesc as _idesc

        return _idesc.make_instr_desc(self.kind, self.a_type, self.b_type, self.c_type, self.M, self.N, "K", "K",
                                      negate_a=self.negate_a, negate_b=self.negate_b, scale_type=self.sf_type,
                                      cta_group=self.cta_group)

    @property
    def issued_idesc(self) -> int:
        """The 32-bit word the instruction receives: :meth:`idesc` with the K-dimension bit 31 set
        (CuTe's ``mma_unpack``: ``instr_desc.k_size_ = 1``, K = 96)."""
        return int(self.idesc().word) | (1 << 31)


def _check(fam: str, a: str, b: str, c: str, sf: str, M: int, N: int, vs: int, am: str, bm: str) -> None:
    op = f"sm103_atom: {fam}"
    ms = (128,) if SM103_FAMILIES[fam] == 1 else (128, 256)
    if M not in ms:
        raise LayoutError(f"{op}: M = {M} is not legal; M must be {' or '.join(map(str, ms))}")
    if not (16 <= N <= 256 and N % 16 == 0):
        raise LayoutError(f"{op}: N = {N} is not legal: N must be a multiple of 16 in [16, 256]")
    if a != "e2m1" or b != "e2m1" or c != "f32":
        raise LayoutError(f"{op}: kind::mxf4nvf4 K=96 takes A, B e2m1 and C f32 (got {a}, {b}, {c})")
    if sf not in ("ue8m0", "ue4m3"):
        raise LayoutError(f"{op}: scale factors are ue8m0 or ue4m3 (got {sf})")
    if vs not in (16, 32) or (vs == 32 and sf != "ue8m0"):
        raise LayoutError(f"{op}: VS = {vs} with {sf}: the vector size is 16 (4x mode) or 32 (2x mode, e2m1 with ue8m0 "
                          "only)")
    if am != "K" or bm != "K":
        raise LayoutError(f"{op}: A and B are K-major only (CuTe: 'This MMA does not support transpose'; got {am}, {bm})")


def _major(x: str) -> str:
    s = str(x).replace("UMMA::Major::", "").upper()
    if s not in ("K", "MN"):
        raise LayoutError(f"sm103_atom: major {x!r} is not K or MN")
    return s


def _int(v: Any, what: str) -> int:
    if isinstance(v, bool):
        raise LayoutError(f"sm103_atom: {what} {v!r} is not an integer")
    try:
        return int(str(v).rstrip("u"))
    except ValueError:
        raise LayoutError(f"sm103_atom: {what} {v!r} is not an integer") from None


@cache
def _build(fam: str, a: str, b: str, c: str, sf: str, M: int, N: int, vs: int, am: str, bm: str,
           neg_a: bool, neg_b: bool) -> Sm103UltraAtom:
    _check(fam, a, b, c, sf, M, N, vs, am, bm)
    g = SM103_FAMILIES[fam]
    K = _K
    if g == 1:
        thr, A = Layout(1, 0), Layout((1, (M, K)), (0, (1, M)))
        B, C = Layout((1, (N, K)), (0, (1, N))), Layout((1, (M, N)), (0, (1, M)))
    else:
        thr, A = Layout(2, 1), Layout((2, (M // 2, K)), (M // 2, (1, M)))
        B, C = Layout((2, (N // 2, K)), (N // 2, (1, N))), Layout((2, (M // 2, N)), (M // 2, (1, M)))
    tail = [] if not (neg_a or neg_b) else ["Neg" if neg_a else "One", "Neg" if neg_b else "One"]
    name = f"SM103::{fam}<{','.join(['e2m1', 'e2m1', 'float', sf, str(M), str(N), str(vs), 'K', 'K'] + tail)}>"
    kind = "mxf4" if vs == 32 else "mxf4nvf4"
    notes = (f"tcgen05.mma.cta_group::{g}.kind::mxf4nvf4.block_scale.block{vs} (sm_103a; K = 96), A and B from "
             "shared memory, D in tensor memory (checked against CuTe C++ 4.2 on the host; not run on sm_103)")
    return Sm103UltraAtom(name, (M, N, K), thr, A, B, C, (c, a, b, c), frg_a="smem_desc", frg_b="smem_desc",
                          notes=notes, family=fam, kind=kind, a_type=a, b_type=b, c_type=c, sf_type=sf, M=M, N=N,
                          K=K, cta_group=g, source="SS", block_scaled=True, vector_size=vs, negate_a=neg_a,
                          negate_b=neg_b, tail=("a_neg", "b_neg"))


def sm103_atom(name: str | None = None, *, a_type: str = "e2m1", b_type: str | None = None, c_type: str = "f32",
               sf_type: str = "ue8m0", m: int | None = None, n: int | None = None, vector_size: int | None = None,
               cta_group: int = 1, negate_a: bool = False, negate_b: bool = False) -> Sm103UltraAtom:
    """The SM103 ULTRA atom CuTe spells ``name``, or the one with these keywords (``m``, ``n``,
    ``cta_group`` 1 or 2, ``sf_type``, ``vector_size`` (default 32 with ue8m0, 16 with ue4m3)).

    >>> sm103_atom(m=128, n=64, sf_type="ue4m3").name
    'SM103::SM103_MXF4_ULTRA_SS_VS<e2m1,e2m1,float,ue4m3,128,64,16,K,K>'
    """
    if name is not None:
        if not isinstance(name, str):
            raise LayoutError(f"sm103_atom: the atom name must be a str, not {type(name).__name__}")
        given = {k: v for k, v in dict(a_type=(a_type, "e2m1"), b_type=(b_type, None), c_type=(c_type, "f32"),
                                        sf_type=(sf_type, "ue8m0"), m=(m, None), n=(n, None),
                                        vector_size=(vector_size, None), cta_group=(cta_group, 1),
                                        negate_a=(negate_a, False), negate_b=(negate_b, False)).items()
                 if v[0] != v[1]}
        if given:
            raise LayoutError(f"sm103_atom: give a name or keywords, not both (the name fixes {sorted(given)})")
        mt = _NAME_RE.match(_normalise(name))
        if not mt:
            raise LayoutError(f"sm103_atom: {name!r} is not an atom name like "
                              "'SM103_MXF4_ULTRA_SS_VS<e2m1,e2m1,float,ue8m0,128,128,32,K,K>'")
        args = mt.group("args").split(",")
        if len(args) not in (9, 11):
            raise LayoutError(f"sm103_atom: {mt.group('fam')} takes 9 or 11 template arguments (a, b, c, sf, M, N, VS, "
                              f"a_major, b_major[, a_neg, b_neg]); got {len(args)}")
        neg = [x == "Neg" for x in args[9:]] or [False, False]
        for x in args[9:]:
            if x not in ("Neg", "One"):
                raise LayoutError(f"sm103_atom: {x!r} is not UMMA::ScaleIn::One or Neg")
        a, b, c, sf = (umma_type(x) for x in args[:4])
        return _build(mt.group("fam"), a, b, c, sf, _int(args[4], "M"), _int(args[5], "N"), _int(args[6], "VS"),
                      _major(args[7]), _major(args[8]), neg[0], neg[1])
    if m is None or n is None:
        raise LayoutError("sm103_atom: give a CuTe name, or m= and n=")
    if not isinstance(negate_a, bool) or not isinstance(negate_b, bool):
        raise LayoutError(f"sm103_atom: negate_a={negate_a!r}, negate_b={negate_b!r} must be bools")
    if cta_group not in (1, 2) or isinstance(cta_group, bool):
        raise LayoutError(f"sm103_atom: cta_group {cta_group!r} is not 1 or 2")
    fam = "SM103_MXF4_ULTRA_SS_VS" if cta_group == 1 else "SM103_MXF4_ULTRA_2x1SM_SS_VS"
    for what, t in (("a_type", a_type), ("c_type", c_type), ("sf_type", sf_type)):
        if not isinstance(t, str):
            raise LayoutError(f"sm103_atom: {what} must be a type name (str), not {type(t).__name__}")
    sf = umma_type(sf_type)
    vs = _int(vector_size, "vector_size") if vector_size is not None else (32 if sf == "ue8m0" else 16)
    return _build(fam, umma_type(a_type), umma_type(b_type if b_type is not None else a_type), umma_type(c_type), sf,
                  _int(m, "m"), _int(n, "n"), vs, "K", "K", bool(negate_a), bool(negate_b))


@cache
def sm103_atom_names() -> tuple[str, ...]:
    """Every SM103 ULTRA atom over M, N, scale type and VS (no negation).

    >>> len(sm103_atom_names())
    144
    """
    out = []
    for fam, g in SM103_FAMILIES.items():
        for M in ((128,) if g == 1 else (128, 256)):
            for sf, vs in (("ue8m0", 32), ("ue8m0", 16), ("ue4m3", 16)):
                for N in range(16, 257, 16):
                    out.append(_build(fam, "e2m1", "e2m1", "f32", sf, M, N, vs, "K", "K", False, False).name)
    return tuple(out)
