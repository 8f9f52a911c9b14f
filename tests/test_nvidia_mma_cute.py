"""Read CuTe's TV layouts straight out of the CUTLASS headers shipped with ``nvidia-cutlass``.

The expected layouts of the catalog tests come from here: the C++ text of
``cute/atom/mma_traits_sm*.hpp`` (``using ALayout = Layout<Shape<...>, Stride<...>>;``) parsed into
pycute layouts, so nothing is copied by hand from either side.
"""

from __future__ import annotations

import os
import re
from functools import cache


def header_dir() -> str | None:
    try:
        import cutlass_library
    except ImportError:  # pragma: no cover
        return None
    d = os.path.join(os.path.dirname(cutlass_library.__file__), "source", "include", "cute", "atom")
    return d if os.path.isdir(d) else None


class _Parser:
    def __init__(self, text: str, aliases: dict, params: dict):
        text = re.sub(r"//[^\n]*", "", text)
        self.s = re.sub(r"\s+", "", text)
        self.p = 0
        self.aliases = aliases
        self.params = params

    def peek(self, lit: str) -> bool:
        return self.s.startswith(lit, self.p)

    def eat(self, lit: str) -> None:
        assert self.peek(lit), (lit, self.s[self.p : self.p + 40])
        self.p += len(lit)

    def name(self) -> str:
        m = re.compile(r"[A-Za-z_][\w:]*").match(self.s, self.p)
        assert m, self.s[self.p :]
        self.p = m.end()
        return m.group(0)

    def value(self):
        if self.peek("Layout<"):
            self.eat("Layout<")
            shape = self.value()
            self.eat(",")
            stride = self.value()
            self.eat(">")
            return ("layout", shape, stride)
        if self.peek("Shape<") or self.peek("Stride<"):
            self.eat("Shape<" if self.peek("Shape<") else "Stride<")
            items = [self.value()]
            while self.peek(","):
                self.eat(",")
                items.append(self.value())
            self.eat(">")
            return tuple(items)
        if self.peek("Int<"):
            self.eat("Int<")
            start = self.p
            depth = 1
            while depth:
                c = self.s[self.p]
                depth += {"<": 1, ">": -1}.get(c, 0)
                self.p += 1
            expr = self.s[start : self.p - 1]
            return int(eval(expr, {}, dict(self.params)))  # noqa: S307 - tiny arithmetic from a header
        m = re.compile(r"_(\d+)").match(self.s, self.p)
        if m and not re.compile(r"_\d+[A-Za-z_]").match(self.s, self.p):
            self.p = m.end()
            return int(m.group(1))
        nm = self.name()
        if self.peek("<"):  # templated alias such as CLayout_64xN<N>
            self.eat("<")
            args = [self.value_or_int()]
            while self.peek(","):
                self.eat(",")
                args.append(self.value_or_int())
            self.eat(">")
            tmpl_params, body = self.aliases[nm]
            return _Parser(body, self.aliases, dict(zip(tmpl_params, args))).value()
        alias = self.aliases[nm]
        if isinstance(alias, tuple) and len(alias) == 2 and isinstance(alias[1], str):
            return _Parser(alias[1], self.aliases, {}).value()
        return alias

    def value_or_int(self):
        m = re.compile(r"\d+").match(self.s, self.p)
        if m:
            self.p = m.end()
            return int(m.group(0))
        return self.value()


@cache
def _file(name: str) -> str:
    with open(os.path.join(header_dir(), name)) as fh:
        return fh.read()


@cache
def _aliases() -> dict:
    out: dict = {}
    for fname in sorted(os.listdir(header_dir())):
        if not fname.startswith("mma_traits"):
            continue
        text = _file(fname)
        for m in re.finditer(r"template\s*<\s*int\s+(\w+)\s*>\s*using\s+(\w+)\s*=\s*(Layout<.*?>)\s*;", text, re.S):
            out[m.group(2)] = ((m.group(1),), m.group(3))
        for m in re.finditer(r"(?<!>)\busing\s+(\w+)\s*=\s*(Layout<.*?>)\s*;", text, re.S):
            out.setdefault(m.group(1), ((), m.group(2)))
    return out


@cache
def _traits() -> dict:
    """trait name -> {"ALayout": text, ...} with inheritance ``: MMA_Traits<Base>`` resolved."""
    raw: dict = {}
    for fname in sorted(os.listdir(header_dir())):
        if not fname.startswith("mma_traits"):
            continue
        text = _file(fname)
        pat = re.compile(r"struct\s+MMA_Traits<\s*([\w:]+)(?:<[^{;]*?>)?\s*>\s*(?::\s*MMA_Traits<\s*([\w:]+)[^{]*)?\{")
        for m in pat.finditer(text):
            body_start = m.end()
            depth, p = 1, body_start
            while depth:
                depth += {"{": 1, "}": -1}.get(text[p], 0)
                p += 1
            body = text[body_start : p - 1]
            layouts = {}
            for lm in re.finditer(r"using\s+(\w*Layout)\s*=\s*(.*?);", body, re.S):
                layouts[lm.group(1)] = lm.group(2)
            raw[m.group(1).split("::")[-1]] = (m.group(2).split("::")[-1] if m.group(2) else None, layouts)
    resolved: dict = {}

    def get(name):
        if name in resolved:
            return resolved[name]
        base, layouts = raw[name]
        merged = dict(get(base)) if base and base in raw else {}
        merged.update({k: v for k, v in layouts.items() if not v.startswith("typename")})
        resolved[name] = merged
        return merged

    for n in raw:
        get(n)
    return resolved


def _fix_profile(shape, stride):
    """CuTe's 16x8x128 b1 ALayout nests one stride too deep (``Stride<Stride<_16,_8>>`` for
    ``Shape<_32,_2>``); unwrap a 1-tuple stride where the shape has more modes."""
    if isinstance(shape, tuple) and isinstance(stride, tuple):
        if len(stride) == 1 and len(shape) > 1 and isinstance(stride[0], tuple):
            stride = stride[0]
        return tuple(_fix_profile(a, b)[0] for a, b in zip(shape, stride)), tuple(
            _fix_profile(a, b)[1] for a, b in zip(shape, stride)
        )
    return shape, stride


def cute_layout(trait: str, which: str):
    """pycute Layout ``which`` (``"ALayout"``, ``"SFALayout"``, ...) of MMA_Traits<``trait``>."""
    import pycute

    text = _traits()[trait][which]
    val = _Parser(text, _aliases(), {}).value()
    assert val[0] == "layout", val
    shape, stride = _fix_profile(val[1], val[2])
    return pycute.Layout(shape, stride)


def cute_alias(name: str, *args):
    """pycute Layout of a header alias (``SM70_QuadPair``, ``CLayout_64xN`` with ``args``)."""
    import pycute

    params, body = _aliases()[name]
    val = _Parser(body, _aliases(), dict(zip(params, args))).value()
    shape, stride = _fix_profile(val[1], val[2])
    return pycute.Layout(shape, stride)


# ---------------------------------------------------------------------------------------------
# The tests: our hand-written TV layouts equal CuTe's as functions (thread, value) -> index.
# ---------------------------------------------------------------------------------------------
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from layoutalg.nvidia.mma import fragment, scale_fragment, sparse_fragment  # noqa: E402

pytestmark = pytest.mark.skipif(header_dir() is None, reason="CUTLASS headers (nvidia-cutlass) not installed")


def _ours(f):
    T, V = f.verify_domain()
    t, v = np.meshgrid(np.arange(T), np.arange(V), indexing="ij")
    return f.index(t, v)


def _theirs(L, T, V, thread_of=None):
    out = np.empty((T, V), dtype=np.int64)
    for t in range(T):
        for v in range(V):
            out[t, v] = L(t if thread_of is None else thread_of[t], v)
    return out


# (trait, shape, dtype, ctype) -- one per atom CuTe provides for mma.sync
SM80_ATOMS = [
    ("SM75_16x8x8_F32F16F16F32_TN", "m16n8k8", "f16", "f32"),
    ("SM80_16x8x8_F16F16F16F16_TN", "m16n8k8", "f16", "f16"),
    ("SM80_16x8x16_F16F16F16F16_TN", "m16n8k16", "f16", "f16"),
    ("SM80_16x8x16_F32F16F16F32_TN", "m16n8k16", "f16", "f32"),
    ("SM80_16x8x8_F32BF16BF16F32_TN", "m16n8k8", "bf16", "f32"),
    ("SM80_16x8x16_F32BF16BF16F32_TN", "m16n8k16", "bf16", "f32"),
    ("SM80_16x8x4_F32TF32TF32F32_TN", "m16n8k4", "tf32", "f32"),
    ("SM80_16x8x8_F32TF32TF32F32_TN", "m16n8k8", "tf32", "f32"),
    ("SM80_8x8x4_F64F64F64F64_TN", "m8n8k4", "f64", "f64"),
    ("SM90_16x8x4_F64F64F64F64_TN", "m16n8k4", "f64", "f64"),
    ("SM90_16x8x8_F64F64F64F64_TN", "m16n8k8", "f64", "f64"),
    ("SM90_16x8x16_F64F64F64F64_TN", "m16n8k16", "f64", "f64"),
    ("SM75_8x8x16_S32S8S8S32_TN", "m8n8k16", "s8", "s32"),
    ("SM80_8x8x16_S32S8S8S32_TN", "m8n8k16", "s8", "s32"),
    ("SM80_16x8x16_S32S8S8S32_TN", "m16n8k16", "s8", "s32"),
    ("SM80_16x8x32_S32U8U8S32_TN", "m16n8k32", "u8", "s32"),
    ("SM80_8x8x32_S32S4S4S32_TN", "m8n8k32", "s4", "s32"),
    ("SM80_16x8x32_S32S4S4S32_TN", "m16n8k32", "s4", "s32"),
    ("SM80_16x8x64_S32U4U4S32_TN", "m16n8k64", "u4", "s32"),
    ("SM80_8x8x128_S32U1U1S32_TN_XORPOPC", "m8n8k128", "b1", "s32"),
    ("SM80_16x8x128_S32U1U1S32_TN_XORPOPC", "m16n8k128", "b1", "s32"),
    ("SM80_16x8x256_S32U1U1S32_TN_XORPOPC", "m16n8k256", "b1", "s32"),
    ("SM89_16x8x32_F32E4M3E4M3F32_TN", "m16n8k32", "e4m3", "f32"),
    ("SM89_16x8x32_F16E5M2E5M2F16_TN", "m16n8k32", "e5m2", "f16"),
]


@pytest.mark.parametrize("trait,shape,dtype,ctype", SM80_ATOMS, ids=[a[0] for a in SM80_ATOMS])
@pytest.mark.parametrize("operand", ["A", "B", "C"])
def test_equals_cute_tv_layout(trait, shape, dtype, ctype, operand):
    if (trait, operand) == ("SM80_16x8x32_S32S4S4S32_TN", "B"):
        pytest.skip("CuTe's layout is not injective here; see test_cute_sm80_16x8x32_s4_blayout_is_not_a_bijection")
    f = fragment(shape, dtype, operand, ctype=ctype)
    L = cute_layout(trait, f"{operand}Layout")
    assert L.size() == f.num_threads * f.num_values
    assert (_ours(f) == _theirs(L, *f.verify_domain())).all(), (trait, operand, str(f.layout), L)


def test_f8f6f4_and_blockscaled_equal_cute_sm120():
    for dtype in ("e4m3", "e3m2", "e2m1"):
        for op in "ABC":
            f = fragment("m16n8k32", dtype, op, kind="f8f6f4")
            assert (_ours(f) == _theirs(cute_layout("SM120_16x8x32_TN", f"{op}Layout"), *f.verify_domain())).all()
    for op in "ABC":
        f = fragment("m16n8k64", "e2m1", op, kind="mxf4")
        assert (_ours(f) == _theirs(cute_layout("SM120_16x8x64_TN_VS", f"{op}Layout"), *f.verify_domain())).all()


@pytest.mark.parametrize(
    "trait,shape,kind,vec", [("SM120_16x8x64_TN_VS", "m16n8k64", "mxf4nvf4", 4),
                             ("SM120_16x8x64_TN_VS", "m16n8k64", "mxf4", 2),
                             ("SM120_16x8x32_TN_VS", "m16n8k32", "mxf8f6f4", 1)]
)
def test_scale_factor_rows_equal_cute_sm120(trait, shape, kind, vec):
    # CuTe maps (thread, k) over the M x K (resp. N x K) scale tensor, one entry per k: the scale
    # column of k is k // (K / vec). Ours maps (lane, scale column). Rows (cols) must agree everywhere.
    M, N, K = int(shape[1:3]), 8, int(shape.split("k")[1])
    for op, extent in (("A", M), ("B", N)):
        sf = scale_fragment(shape, kind, op, scale_vec=vec)
        L = cute_layout(trait, f"SF{op}Layout")
        for t in range(32):
            for k in range(K):
                v = k // (K // vec)
                mine = int(sf.index(t, v))
                assert mine % extent == L(t, k) % extent, (op, t, k)
                assert mine // extent == v


def test_sparse_b_equals_cute_sm120():
    for dtype in ("e4m3", "e2m1"):
        f = sparse_fragment("m16n8k64", dtype, "B", kind="f8f6f4")
        assert (_ours(f) == _theirs(cute_layout("SM120_SPARSE_16x8x64_TN", "BLayout"), *f.verify_domain())).all()


def test_sparse_a_chunks_cover_cute_sm120_full_a():
    # CuTe's sparse A layout is over the *uncompressed* 16x64 A (two logical k per stored value);
    # each of our compressed values must come from a column span CuTe gives the same lane and row.
    f = sparse_fragment("m16n8k64", "e4m3", "A", kind="f8f6f4")
    L = cute_layout("SM120_SPARSE_16x8x64_TN", "ALayout")
    for t in range(32):
        cute_cells = {(L(t, v) % 16, L(t, v) // 16) for v in range(L.shape[1][0] * 4)}
        for i in range(f.num_values):
            row, _ = f.coords(t, i)
            lo, hi = f.column_range(t, i)
            assert all((row, k) in cute_cells for k in range(lo, hi + 1)), (t, i)


@pytest.mark.parametrize("suffix,alayout,blayout", [("TN", "row", "col"), ("NT", "col", "row"),
                                                     ("NN", "col", "col"), ("TT", "row", "row")])
@pytest.mark.parametrize("acc", ["F16F16F16F16", "F32F16F16F32"])
def test_m8n8k4_quadpair_equals_cute_sm70(suffix, alayout, blayout, acc):
    # CuTe's SM70 atoms cover one quad pair: logical thread t -> lane SM70_QuadPair(t) =
    # (4,2):(1,16), i.e. computation 0. Our layout's computation 0 must be CuTe's atom.
    trait = f"SM70_8x8x4_{acc}_{suffix}"
    lanes = [cute_alias("SM70_QuadPair")(t) for t in range(8)]
    ctype = "f16" if acc.startswith("F16") else "f32"
    for op, f in (("A", fragment("m8n8k4", "f16", "A", alayout=alayout)),
                  ("B", fragment("m8n8k4", "f16", "B", blayout=blayout)),
                  ("C", fragment("m8n8k4", "f16", "C", ctype=ctype))):
        L = cute_layout(trait, f"{op}Layout")
        for t, lane in enumerate(lanes):
            for v in range(f.num_values):
                assert f.batch_index(lane, v) == 0
                assert int(f.index(lane, v)) == L(t, v), (trait, op, t, v)


def test_cute_sm80_16x8x32_s4_blayout_is_not_a_bijection():
    # A finding, kept as a test: CUTLASS's BLayout for SM80_16x8x32_S32S4S4S32_TN is
    # ((4,8),8):((32,1),8) over the 8x32 B (index n + 8*k), i.e. k = 4*threadID_in_group + i.
    # Lanes 0 and 1 would then both hold k = 4..7 of column 0, and k = 28..31 nobody. The PTX
    # formula (row = threadID_in_group*8 + i) needs thread stride 64, which is what we have.
    L = cute_layout("SM80_16x8x32_S32S4S4S32_TN", "BLayout")
    image = {L(t, v) for t in range(32) for v in range(8)}
    assert len(image) < 256
    f = fragment("m16n8k32", "s4", "B")
    assert sorted(int(x) for x in _ours(f).ravel()) == list(range(256))
    assert f.coords(1, 0) == f.formula.evaluate(1, 0) == (8, 0)  # lane 1: threadID_in_group 1
