"""sm_120 / sm_121 (consumer Blackwell: RTX 50, RTX PRO 6000, DGX Spark) MMA atoms -- CuTe 4.2's ``SM120_*``.

sm_120 has no ``tcgen05``: its tensor cores are driven by the warp-level ``mma.sync`` of
``kind::f8f6f4`` (dense and sparse) and the block-scaled ``kind::mxf8f6f4`` / ``kind::mxf4nvf4``.
CuTe names the atoms by template (``cute/arch/mma_sm120*.hpp``, ``cute/atom/mma_traits_sm120*.hpp``)::

    SM120_16x8x32_TN<a, b, c>                                       mma.sync ... kind::f8f6f4
    SM120::BLOCKSCALED::SM120_16x8x32_TN_VS<a, b, c, sf, VS>        kind::mxf8f6f4, scale_vec::1X
    SM120::BLOCKSCALED::SM120_16x8x64_TN_VS<e2m1, e2m1, float, sf, VS>   kind::mxf4nvf4 (2X ue8m0, 4X ue4m3)
    SM120::SPARSE::SM120_SPARSE_16x8x64_TN<a, b, c>                 mma.sp::ordered_metadata kind::f8f6f4
    SM120::BLOCKSCALED::SPARSE::SM120_SPARSE_16x8x64_TN_VS<a, b, c, sf, VS>    kind::mxf8f6f4 sparse
    SM120::BLOCKSCALED::SPARSE::SM120_SPARSE_16x8x128_TN_VS<e2m1, e2m1, float, sf, VS>   kind::mxf4nvf4 sparse

``a``, ``b``: ``e4m3``, ``e5m2``, ``e3m2``, ``e2m3``, ``e2m1`` (C++ ``float_e4m3_t`` ... or short);
``c``: ``float`` (also ``half_t`` for the unscaled forms); ``sf``: ``ue8m0`` / ``ue4m3``; ``VS``: the
scale-factor vector size. The namespaces may be left out, and the name may be wrapped in
``MMA_Atom<...>`` / ``MMA_Traits<...>``. The block-scaled atoms carry CuTe's ``SFALayout`` and
``SFBLayout`` ((thread, k) -> m + 16 k / n + 8 k: the scale factor that multiplies element k), the
sparse ones ``ELayout`` (the metadata). Why this module lives in ``nvidia/blackwell``: sm_120 is a
Blackwell part (CUDA's ``sm_12x`` is the Blackwell GeForce/workstation family and CuTe files its
atoms beside sm_100's), even though its instruction is warp-level like Ampere's; its layouts are
CuTe's constants, and tests/test_nvidia_sm120.py proves them against the PTX ISA's fragments
(:func:`layoutalg.nvidia.ampere.mma.fragment`, :func:`~layoutalg.nvidia.ampere.mma.scale_fragment`).

    >>> a = sm120_atom("SM120::BLOCKSCALED::SM120_16x8x64_TN_VS<float_e2m1_t,float_e2m1_t,float,float_ue4m3_t,16>")
    >>> a.shape_mnk, str(a.SFALayout), a.kind, a.scale_vec
    ((16, 8, 64), '((2,2,8),64):((8,0,1),16)', 'mxf4nvf4', 4)
    >>> sm120_atom(kind="f8f6f4", a_type="e4m3", b_type="e2m1", c_type="f16").name
    'SM120_16x8x32_TN<e4m3,e2m1,f16>'

Checked against: CuTe C++ 4.2 ``MMA_Traits`` compiled with g++ on the host (Shape_MNK, ThrID, A, B, C,
SFA, SFB, E layouts of every type combination; tests/data/cute/sm120_atoms.json). Not run on an sm_120 GPU.
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass
from functools import cache
from typing import Any

from ...errors import LayoutError
from ...layout import Layout
from ...tiled import MMAAtom
from .umma import umma_type

__all__ = ["SM120_FAMILIES", "SM120Atom", "sm120_atom", "sm120_atom_names", "is_sm120_name", "normalise_sm120_name"]

F8F6F4 = ("e4m3", "e5m2", "e3m2", "e2m3", "e2m1")
_CPP = {"e4m3": "cutlass::float_e4m3_t", "e5m2": "cutlass::float_e5m2_t", "e3m2": "cutlass::float_e3m2_t",
        "e2m3": "cutlass::float_e2m3_t", "e2m1": "cutlass::float_e2m1_t", "f32": "float", "f16": "cutlass::half_t",
        "ue8m0": "cutlass::float_ue8m0_t", "ue4m3": "cutlass::float_ue4m3_t"}
_SPELL = {"f32": "float"}
#: CuTe DSL (``cutlass``) type names
DSL_TYPES = {"e4m3": "cutlass.Float8E4M3FN", "e5m2": "cutlass.Float8E5M2", "e2m3": "cutlass.Float6E2M3FN",
             "e3m2": "cutlass.Float6E3M2FN", "e2m1": "cutlass.Float4E2M1FN", "f32": "cutlass.Float32",
             "f16": "cutlass.Float16", "ue8m0": "cutlass.Float8E8M0FNU", "ue4m3": "cutlass.Float8E4M3FN"}


def _L(shape: Any, stride: Any) -> Layout:
    return Layout(shape, stride)


_C = _L(((4, 8), (2, 2)), ((32, 1), (16, 8)))  # SM80_16x8_Row: (T32,V4) -> (M16,N8)
_A32 = _L(((4, 8), (4, 2, 2)), ((64, 1), (16, 8, 256)))  # SM80_16x8x32_S32S8S8S32_TN: (T32,V16) -> (M16,K32)
_B32 = _L(((4, 8), (4, 2)), ((32, 1), (8, 128)))
_A64 = _L(((4, 8), (8, 2, 2)), ((128, 1), (16, 8, 512)))  # (T32,V32) -> (M16,K64)
_B64 = _L(((4, 8), (8, 2)), ((64, 1), (8, 256)))  # (T32,V16) -> (N8,K64)
_B64_SPARSE = _L(((4, 8), (4, 4)), ((32, 1), (8, 128)))
_A128 = _L(((4, 8), (16, 2, 2)), ((256, 1), (16, 8, 1024)))  # (T32,V64) -> (M16,K128)
_B128 = _L(((4, 8), (8, 4)), ((64, 1), (8, 256)))  # (T32,V32) -> (N8,K128)


def _sfa(k: int) -> Layout:
    """CuTe's SFALayout: (T32, Vk) -> (M16, Kk); 16 threads hold the factors (the 2:0 mode)."""
    return _L(((2, 2, 8), k), ((8, 0, 1), 16))


def _sfb(k: int) -> Layout:
    """CuTe's SFBLayout: (T32, Vk) -> (N8, Kk); 8 threads hold the factors (the 4:0 mode)."""
    return _L(((4, 8), k), ((0, 1), 8))


@dataclass(frozen=True)
class _Family:
    name: str  # CuTe's struct name
    namespace: str  # CuTe's namespace of the struct (without cute::)
    kind: str
    k: int
    sparse: bool
    scaled: bool
    ab: tuple[str, ...]  # legal A and B types
    cs: tuple[str, ...]  # legal C types
    instr: str  # the PTX instruction (types filled in)


#: CuTe 4.2's SM120 MMA atom families (struct name -> fixed properties)
SM120_FAMILIES: dict[str, _Family] = {f.name: f for f in (
    _Family("SM120_16x8x32_TN", "", "f8f6f4", 32, False, False, F8F6F4, ("f32", "f16"),
            "mma.sync.aligned.kind::f8f6f4.m16n8k32.row.col"),
    _Family("SM120_16x8x32_TN_VS", "SM120::BLOCKSCALED::", "mxf8f6f4", 32, False, True, F8F6F4, ("f32",),
            "mma.sync.aligned.kind::mxf8f6f4.block_scale.scale_vec::1X.m16n8k32.row.col"),
    _Family("SM120_16x8x64_TN_VS", "SM120::BLOCKSCALED::", "mxf4nvf4", 64, False, True, ("e2m1",), ("f32",),
            "mma.sync.aligned.kind::mxf4nvf4.block_scale.scale_vec::{V}X.m16n8k64.row.col"),
    _Family("SM120_SPARSE_16x8x64_TN", "SM120::SPARSE::", "f8f6f4", 64, True, False, F8F6F4, ("f32", "f16"),
            "mma.sp::ordered_metadata.sync.aligned.kind::f8f6f4.m16n8k64.row.col"),
    _Family("SM120_SPARSE_16x8x64_TN_VS", "SM120::BLOCKSCALED::SPARSE::", "mxf8f6f4", 64, True, True, F8F6F4,
            ("f32",), "mma.sync.aligned.kind::mxf8f6f4.sp::ordered_metadata.block_scale.scale_vec::1X.m16n8k64.row.col"),
    _Family("SM120_SPARSE_16x8x128_TN_VS", "SM120::BLOCKSCALED::SPARSE::", "mxf4nvf4", 128, True, True, ("e2m1",),
            ("f32",), "mma.sync.aligned.kind::mxf4nvf4.sp::ordered_metadata.block_scale.scale_vec::{V}X.m16n8k128.row.col"),
)}

_NAME_RE = re.compile(r"^(?:cute::)?(?:SM120::)?(?:BLOCKSCALED::)?(?:SPARSE::)?(?P<fam>SM120_\w+?)\s*<(?P<args>[^<>]*)>$")


def normalise_sm120_name(name: str) -> str:
    """``name`` without blanks, ``cute::`` and an ``MMA_Atom<...>`` / ``MMA_Traits<...>`` wrapper."""
    s = re.sub(r"\s+", "", str(name))
    for wrap in ("cute::MMA_Atom<", "MMA_Atom<", "cute::MMA_Traits<", "MMA_Traits<"):
        if s.startswith(wrap) and s.endswith(">"):
            s = s[len(wrap):-1]
    return s.replace("cutlass::", "")


def is_sm120_name(name: str) -> bool:
    """Does ``name`` name an SM120 atom (``SM120_16x8x32_TN<...>``, with or without CuTe's namespaces)?"""
    return isinstance(name, str) and bool(_NAME_RE.match(normalise_sm120_name(name)))


@dataclass(frozen=True)
class SM120Atom(MMAAtom):
    """An sm_120 ``mma.sync`` atom: an :class:`~layoutalg.tiled.MMAAtom` with CuTe's configuration.

    Fields: ``family`` (CuTe's struct name), ``kind`` (``f8f6f4``, ``mxf8f6f4``, ``mxf4nvf4``),
    ``a_type``/``b_type``/``c_type``/``sf_type`` (canonical names), ``vector_size`` (CuTe's VS),
    ``scale_vec`` (the ISA's ``scale_vec::NX``: scale factors per row and instruction), ``sparse``;
    CuTe's ``ThrID``, ``ALayout``, ``BLayout``, ``CLayout``, ``SFALayout``, ``SFBLayout``, ``ELayout``
    are properties (None where the atom has none).
    """

    family: str = ""
    kind: str = ""
    a_type: str = ""
    b_type: str = ""
    c_type: str = ""
    sf_type: str | None = None
    vector_size: int | None = None
    scale_vec: int | None = None
    sparse: bool = False
    sfa_layout: Layout | None = None
    sfb_layout: Layout | None = None
    e_layout: Layout | None = None

    @property
    def ThrID(self) -> Layout:  # noqa: N802 - CuTe's name
        """CuTe's ``ThrID``: ``32:1`` (one warp)."""
        return self.thr_id

    @property
    def ALayout(self) -> Layout:  # noqa: N802
        """CuTe's ``ALayout``: (thread, value) -> m + 16 k over the logical 16 x K tile (sparse: K before compression)."""
        return self.layout_a_tv

    @property
    def BLayout(self) -> Layout:  # noqa: N802
        """CuTe's ``BLayout``: (thread, value) -> n + 8 k."""
        return self.layout_b_tv

    @property
    def CLayout(self) -> Layout:  # noqa: N802
        """CuTe's ``CLayout``: (thread, value) -> m + 16 n (``SM80_16x8_Row``)."""
        return self.layout_c_tv

    @property
    def SFALayout(self) -> Layout | None:  # noqa: N802
        """CuTe's ``SFALayout``: (thread, k) -> m + 16 k: thread ``t`` holds the scale factor of row m for element k."""
        return self.sfa_layout

    @property
    def SFBLayout(self) -> Layout | None:  # noqa: N802
        """CuTe's ``SFBLayout``: (thread, k) -> n + 8 k."""
        return self.sfb_layout

    @property
    def ELayout(self) -> Layout | None:  # noqa: N802
        """CuTe's ``ELayout`` of a sparse atom: (thread, value) -> m + 16 k of the metadata."""
        return self.e_layout

    @property
    def instruction(self) -> str:
        """The PTX instruction the atom issues."""
        f = SM120_FAMILIES[self.family]
        types = [self.c_type, self.a_type, self.b_type, self.c_type] + ([str(self.sf_type)] if f.scaled else [])
        return f.instr.replace("{V}", str(self.scale_vec)) + "".join("." + t for t in types)

    @property
    def cute_dsl(self) -> str:
        """The CuTe DSL op of the atom (``from cutlass.cute.nvgpu import warp``): ``warp.MmaMXF8Op``,
        ``warp.MmaMXF4Op``, ``warp.MmaMXF4NVF4Op`` or, for e4m3/e5m2 ``SM120_16x8x32_TN``, ``warp.MmaFP8Op``;
        a LayoutError where the DSL has no op (the sparse atoms, mixed A/B types)."""
        t = DSL_TYPES
        if self.sparse or self.a_type != self.b_type:
            raise LayoutError(f"to_cute_dsl: {self.name}: the CuTe DSL's warp ops cover dense atoms with one A/B type")
        ab, acc = t[self.a_type], t[self.c_type]
        if self.family == "SM120_16x8x32_TN":
            if self.a_type not in ("e4m3", "e5m2"):
                raise LayoutError(f"to_cute_dsl: {self.name}: the CuTe DSL's warp.MmaFP8Op takes e4m3/e5m2 only")
            return f"warp.MmaFP8Op({ab}, {acc}, (16, 8, 32))"
        sf = t[str(self.sf_type)]
        if self.family == "SM120_16x8x32_TN_VS":
            return f"warp.MmaMXF8Op({ab}, {acc}, {sf})"
        if self.sf_type == "ue8m0" and self.vector_size == 32:
            return f"warp.MmaMXF4Op({ab}, {acc}, {sf})"
        if self.sf_type == "ue4m3" and self.vector_size == 16:
            return f"warp.MmaMXF4NVF4Op({ab}, {acc}, {sf})"
        raise LayoutError(f"to_cute_dsl: {self.name}: the CuTe DSL has MXF4 (ue8m0, VS 32) and MXF4NVF4 (ue4m3, VS 16)")

    @property
    def cute_cpp(self) -> str:
        """The C++ type CuTe spells for this atom (the argument of ``MMA_Traits<...>`` / ``MMA_Atom<...>``)."""
        f = SM120_FAMILIES[self.family]
        args = [_CPP[self.a_type], _CPP[self.b_type], _CPP[self.c_type]]
        if f.scaled:
            args += [_CPP[str(self.sf_type)], str(self.vector_size)]
        return f"cute::{f.namespace}{f.name}<{', '.join(args)}>"


def _check(f: _Family, a: str, b: str, c: str, sf: str | None, vs: int | None, name: str) -> int | None:
    """CuTe 4.2's specializations (and their VS asserts); returns the ISA's scale_vec."""
    op = f"sm120_atom: {name}"
    if a not in f.ab or b not in f.ab:
        raise LayoutError(f"{op}: {f.name} takes A and B in {list(f.ab)} (got {a}, {b})")
    if c not in f.cs:
        raise LayoutError(f"{op}: {f.name} accumulates in {' or '.join(f.cs)} (got {c})")
    if not f.scaled:
        return None
    if f.kind == "mxf8f6f4":
        if sf != "ue8m0":
            raise LayoutError(f"{op}: kind::mxf8f6f4 scale factors are ue8m0 (got {sf})")
        want = 64 if f.sparse else 32
        if vs != want:
            raise LayoutError(f"{op}: {f.name} has one scale factor per {want} elements (VS = {want}, got {vs}; "
                              "CuTe: 'Scaling factor vector size has to be ...', the ISA's scale_vec::1X)")
        return 1
    if sf not in ("ue8m0", "ue4m3"):
        raise LayoutError(f"{op}: kind::mxf4nvf4 scale factors are ue8m0 or ue4m3 (got {sf})")
    legal = {(False, "ue8m0"): (16, 32), (False, "ue4m3"): (16, 32), (True, "ue8m0"): (32, 64),
             (True, "ue4m3"): (32,)}[(f.sparse, sf)]
    if vs not in legal:
        raise LayoutError(f"{op}: {f.name} with {sf} scale factors takes VS in {list(legal)} (CuTe's assert), got {vs}")
    return 2 if sf == "ue8m0" else 4  # CuTe issues scale_vec::2X with ue8m0 and 4X with ue4m3


def _int(v: str, what: str, name: str) -> int:
    try:
        return int(v.rstrip("u"))
    except ValueError:
        raise LayoutError(f"sm120_atom: {name}: {what} {v!r} is not an integer") from None


@cache
def _build(fam: str, a: str, b: str, c: str, sf: str | None, vs: int | None) -> SM120Atom:
    f = SM120_FAMILIES[fam]
    args = [_SPELL.get(t, t) for t in (a, b, c)] + ([str(sf), str(vs)] if f.scaled else [])
    name = f"{f.namespace}{f.name}<{','.join(args)}>"
    sv = _check(f, a, b, c, sf, vs, name)
    K = f.k
    A, B = {32: (_A32, _B32), 64: (_A64, _B64_SPARSE if f.sparse else _B64), 128: (_A128, _B128)}[K]
    sfa = _sfa(K) if f.scaled else None
    sfb = _sfb(K) if f.scaled else None
    e = None
    if f.sparse:
        e = (_L(((2, 2, 8), 32), ((8, 512, 1), 16)) if K == 64
             else _L(((2, 2, 8), (64,)), ((8, 1024, 1), (16,))))
    notes = (f"sm_120 warp-level MMA ({f.kind}{', sparse' if f.sparse else ''}{', block-scaled' if f.scaled else ''}); "
             "layouts checked against CuTe C++ 4.2 MMA_Traits on the host, not run on an sm_120 GPU")
    return SM120Atom(name, (16, 8, K), Layout(32), A, B, _C, (c, a, b, c), notes=notes, family=fam, kind=f.kind,
                     a_type=a, b_type=b, c_type=c, sf_type=sf, vector_size=vs, scale_vec=sv, sparse=f.sparse,
                     sfa_layout=sfa, sfb_layout=sfb, e_layout=e)


def _type(x: Any, what: str) -> str:
    if not isinstance(x, str):
        raise LayoutError(f"sm120_atom: {what} must be a type name (str), not {type(x).__name__}")
    return umma_type(x)


def sm120_atom(name: str | None = None, *, kind: str | None = None, a_type: str | None = None,
               b_type: str | None = None, c_type: str | None = None, sf_type: str | None = None,
               vector_size: int | None = None, sparse: bool = False) -> SM120Atom:
    """The SM120 atom CuTe spells ``name`` (template text), or the one with these keywords.

    Keywords: ``kind`` (``f8f6f4``, ``mxf8f6f4``, ``mxf4nvf4``; also ``mxf4``, which CuTe issues as
    ``mxf4nvf4`` with ue8m0 factors), ``a_type``, ``b_type`` (default ``a_type``), ``c_type``
    (default f32), ``sf_type`` (default ue8m0), ``vector_size`` (default: 32 dense, 64 sparse for
    mxf8f6f4; for mxf4nvf4 32 with ue8m0 and 16 (dense) / 32 (sparse) with ue4m3), ``sparse``.

    >>> str(sm120_atom("SM120_SPARSE_16x8x64_TN<e4m3,e4m3,float>").ELayout)
    '((2,2,8),32):((8,512,1),16)'
    >>> sm120_atom("SM120_16x8x32_TN<e4m3,e4m3,int32_t>")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    layoutalg.errors.LayoutError: sm120_atom: ...: SM120_16x8x32_TN accumulates in f32 or f16 (got s32)
    """
    if name is not None:
        if not isinstance(name, str):
            raise LayoutError(f"sm120_atom: the atom name must be a str, not {type(name).__name__}")
        given = {k: v for k, v in dict(kind=kind, a_type=a_type, b_type=b_type, c_type=c_type, sf_type=sf_type,
                                       vector_size=vector_size).items() if v is not None}
        if given or sparse:
            raise LayoutError(f"sm120_atom: give a name or keywords, not both (the name fixes {sorted(given) or ['sparse']})")
        s = normalise_sm120_name(name)
        m = _NAME_RE.match(s)
        if not m or m.group("fam") not in SM120_FAMILIES:
            raise LayoutError(f"sm120_atom: {name!r} is not a CuTe 4.2 SM120 atom like 'SM120_16x8x32_TN<e4m3,e4m3,float>' "
                              f"(families: {', '.join(SM120_FAMILIES)})")
        fam = m.group("fam")
        f = SM120_FAMILIES[fam]
        ns = s[: s.index(fam)].replace("cute::", "")
        if ns and ns != f.namespace:
            raise LayoutError(f"sm120_atom: {name!r}: CuTe declares {fam} in namespace cute::{f.namespace or ''} "
                              f"(got {ns})")
        args = [x for x in m.group("args").split(",")]
        need = 5 if f.scaled else 3
        if len(args) != need:
            raise LayoutError(f"sm120_atom: {fam} takes {need} template arguments "
                              f"(a, b, c{', sf, VS' if f.scaled else ''}); got {len(args)} in {name!r}")
        a, b, c = (umma_type(x) for x in args[:3])
        sf = umma_type(args[3]) if f.scaled else None
        vs = _int(args[4], "VS", name) if f.scaled else None
        return _build(fam, a, b, c, sf, vs)
    if kind is None or a_type is None:
        raise LayoutError("sm120_atom: give a CuTe name, or kind= and a_type= (b_type defaults to a_type)")
    if not isinstance(kind, str):
        raise LayoutError(f"sm120_atom: kind must be a str, not {type(kind).__name__}")
    if not isinstance(sparse, bool):
        raise LayoutError(f"sm120_atom: sparse={sparse!r} must be a bool")
    k = kind.replace("kind::", "").lower()
    a = _type(a_type, "a_type")
    b = _type(b_type if b_type is not None else a_type, "b_type")
    c = _type(c_type if c_type is not None else "f32", "c_type")
    sp = bool(sparse)
    if k == "f8f6f4":
        if sf_type is not None or vector_size is not None:
            raise LayoutError("sm120_atom: kind::f8f6f4 has no scale factors (leave sf_type and vector_size out)")
        return _build("SM120_SPARSE_16x8x64_TN" if sp else "SM120_16x8x32_TN", a, b, c, None, None)
    if k not in ("mxf8f6f4", "mxf4nvf4", "mxf4"):
        raise LayoutError(f"sm120_atom: kind {kind!r} is not f8f6f4, mxf8f6f4 or mxf4nvf4 (sm_120's mma.sync kinds)")
    sf = _type(sf_type if sf_type is not None else "ue8m0", "sf_type")
    if vector_size is not None and (isinstance(vector_size, bool) or not isinstance(vector_size, int)):
        raise LayoutError(f"sm120_atom: vector_size must be an int, not {type(vector_size).__name__}")
    if k == "mxf8f6f4":
        fam = "SM120_SPARSE_16x8x64_TN_VS" if sp else "SM120_16x8x32_TN_VS"
        vs = vector_size if vector_size is not None else (64 if sp else 32)
    else:
        fam = "SM120_SPARSE_16x8x128_TN_VS" if sp else "SM120_16x8x64_TN_VS"
        vs = vector_size if vector_size is not None else (32 if sf == "ue8m0" or sp else 16)
    return _build(fam, a, b, c, sf, vs)


@cache
def sm120_atom_names() -> tuple[str, ...]:
    """Every SM120 atom of CuTe 4.2 (every specialization; block-scaled ones at each VS CuTe accepts).

    >>> names = sm120_atom_names()
    >>> len(names), "SM120_16x8x32_TN<e5m2,e2m3,f16>" in names
    (157, True)
    """
    out = []
    for fam, f in SM120_FAMILIES.items():
        for a in f.ab:
            for b in f.ab:
                for c in f.cs:
                    if not f.scaled:
                        out.append(_build(fam, a, b, c, None, None).name)
                        continue
                    for sf in ("ue8m0", "ue4m3"):
                        for vs in (16, 32, 64):
                            with contextlib.suppress(LayoutError):  # a VS CuTe refuses for this scale type
                                out.append(_build(fam, a, b, c, sf, vs).name)
    return tuple(out)
