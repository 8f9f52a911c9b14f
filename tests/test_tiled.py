"""Tiled MMAs and copies: properties that hold for any atom, a CPU execution of tiled GEMMs through
the library's partitions, the copy/MMA register agreement, the atoms against the catalog, errors."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import cute_tiled_cases as C
from layoutalg import ComposedLayout, Layout, LayoutError, Swizzle
from layoutalg.nvidia.ampere import ldmatrix, mma as catalog_mma
from layoutalg.nvidia.hopper import wgmma_fragments
from layoutalg.nvidia.atoms import copy_atom, copy_atom_names, cute_mma_name, mma_atom, mma_atom_names, value_bits
from layoutalg.tensor import make_tensor
from layoutalg.tensor import underscore as _
from layoutalg.tiled import (
    CopyAtom,
    MMAAtom,
    TiledCopy,
    copy,
    make_tiled_copy,
    make_tiled_copy_A,
    make_tiled_copy_B,
    make_tiled_copy_C,
    make_tiled_copy_C_atom,
    make_tiled_copy_D,
    make_tiled_copy_S,
    make_tiled_mma,
    partition_shape_A,
    partition_shape_C,
)

DENSE = [c for c in C.MMA_CASES if mma_atom(c.atom).a_k_compression == 1]


def _table(L):
    return np.asarray(L.table(), dtype=np.int64)


# --------------------------------------------------------------------------- a tiled GEMM on the CPU
def simulate_gemm(mma, A, B, hardware=None):
    """D = the tiled MMA run on (A: M x K, B: N x K), every operand moved only as the library says.

    Each thread's registers are its ``partition_A/B/C`` of the global tensors. One atom instance is
    the group of threads sharing (ThrM, ThrN, ThrK); the instruction (``hardware``, default the
    tiled MMA's own atom) rebuilds its M x K and N x K tiles from those threads' registers through
    its TV layouts, multiplies, and scatters into C registers the same way. D sums each element's
    registers over the threads that hold it.
    """
    atom = mma.atom
    hw = hardware or atom
    V, TM, TN, TK = (int(mma.thr_layout_vmnk[i].size()) for i in range(4))
    Ma, Na, Ka = atom.shape_mnk
    M, K = A.shape
    N = B.shape[0]
    tA, tB, tC = make_tensor(A), make_tensor(B), make_tensor(np.zeros((M, N)))
    regs = []  # per thread: A values (VA, RM, RK), B values (VB, RN, RK), C addresses (VC, RM, RN)
    for t in range(mma.num_threads):
        th = mma.get_slice(t)
        pa, pb, pc = th.partition_A(tA), th.partition_B(tB), th.partition_C(tC)
        sh = [tuple(int(p.layout[k].size()) for k in range(3)) for p in (pa, pb, pc)]
        regs.append((A.reshape(-1)[pa.addresses()].reshape(sh[0][::-1]).T,
                     B.reshape(-1)[pb.addresses()].reshape(sh[1][::-1]).T,
                     pc.addresses().reshape(sh[2][::-1]).T))
    (VA, RM, RK), (VB, RN, _), (VC, _, _) = (r.shape for r in regs[0])
    aA = _table(hw.layout_a_tv).reshape(VA, V).T  # aA[j, i]: atom thread j's value i -> m + M k
    aB = _table(hw.layout_b_tv).reshape(VB, V).T
    aC = _table(hw.layout_c_tv).reshape(VC, V).T
    D = np.zeros(M * N)
    vmnk = mma.thr_layout_vmnk
    for tm, tn, tk in itertools.product(range(TM), range(TN), range(TK)):
        threads = [int(vmnk(j, tm, tn, tk)) for j in range(V)]
        for rm, rn, rk in itertools.product(range(RM), range(RN), range(RK)):
            At = np.zeros(Ma * Ka)
            Bt = np.zeros(Na * Ka)
            At[aA] = np.stack([regs[t][0][:, rm, rk] for t in threads])
            Bt[aB] = np.stack([regs[t][1][:, rn, rk] for t in threads])
            Ct = (At.reshape(Ka, Ma).T @ Bt.reshape(Ka, Na)).T.reshape(-1)  # m + M n
            addr = np.stack([regs[t][2][:, rm, rn] for t in threads])
            np.add.at(D, addr.reshape(-1), Ct[aC].reshape(-1))
    return D.reshape(M, N)


GEMM_CASES = [c for c in DENSE if c.key in {
    "sm80_16x8x16_f16_1x1", "sm80_16x8x16_f16_2x2_t32x32x16", "sm80_16x8x16_f16_2x2_permN",
    "sm80_16x8x16_f16_2x2x2", "sm80_16x8x16_bf16_permM", "sm70_8x8x4_f32_2x2", "sm80_8x8x4_f64_2x2",
    "sm90_64x64x16_f16_ss_2wg", "sm90_64x32x16_f16_rs_2x1x1_permM", "sm80_16x8x8_tf32_2x2",
}]


@pytest.mark.parametrize("case", GEMM_CASES, ids=lambda c: c.key)
def test_tiled_gemm_on_the_cpu_is_a_at_b(case):
    mma = case.tiled_mma()
    M, N, K = mma.tile_size_mnk
    rng = np.random.default_rng(1)
    A = rng.integers(-3, 4, size=(M, 2 * K)).astype(float)
    B = rng.integers(-3, 4, size=(N, 2 * K)).astype(float)
    assert np.array_equal(simulate_gemm(mma, A, B), A @ B.T)


def test_gemm_simulation_can_fail():
    """A library whose A fragment mislabels two registers (as if a2/a3 were a4/a5) computes a wrong D
    on the real instruction."""
    true = mma_atom("SM80_16x8x16_F32F16F16F32_TN")
    wrong = MMAAtom("wrong", true.shape_mnk, true.thr_id, Layout(((4, 8), (2, 2, 2)), ((32, 1), (16, 128, 8))),
                    true.layout_b_tv, true.layout_c_tv)
    A = np.arange(32 * 16, dtype=float).reshape(32, 16) % 7
    B = np.arange(8 * 16, dtype=float).reshape(8, 16) % 5
    assert np.array_equal(simulate_gemm(make_tiled_mma(true, (2, 1, 1)), A, B), A @ B.T)
    assert not np.array_equal(simulate_gemm(make_tiled_mma(wrong, (2, 1, 1)), A, B, hardware=true), A @ B.T)


# --------------------------------------------------------------------------- TV layout properties
@pytest.mark.parametrize("case", C.MMA_CASES, ids=lambda c: c.key)
def test_tv_layouts_cover_the_tile(case):
    mma = case.tiled_mma()
    M, N, K = mma.tile_size_mnk
    comp = mma.atom.a_k_compression
    TM, TN, TK = (int(mma.thr_layout_vmnk[i].size()) for i in (1, 2, 3))
    if TK == 1:  # (with threads along K, CuTe's get_layoutC_TV runs past the tile: its thrfrg_C has no K)
        c = np.bincount(_table(mma.get_layoutC_TV()), minlength=M * N)
        assert c.size == M * N and (c == 1).all()  # each C element held once
    for L, size, along in ((mma.get_layoutA_TV(), M * K // comp, TN), (mma.get_layoutB_TV(), N * K, TM)):
        cnt = np.bincount(_table(L), minlength=size)
        assert cnt.size == size and cnt.min() >= along and (cnt == cnt[0]).all()


@pytest.mark.parametrize("case", [c for c in C.MMA_CASES
                                  if c.key.startswith(("sm80_16x8x16_f16", "sm90_64x64")) and "2x2x2" not in c.key],
                         ids=lambda c: c.key)
def test_partition_of_the_tile_is_the_tv_layout(case):
    """For a tile-sized compact tensor, thread t's partition_C value i is element C_TV(t, i)."""
    mma = case.tiled_mma()
    M, N, _K = mma.tile_size_mnk
    CT = _table(mma.get_layoutC_TV()).reshape(-1, mma.num_threads).T
    T = make_tensor(Layout((M, N)))
    for t in (0, 1, mma.num_threads - 1):
        assert mma.get_slice(t).partition_C(T).addresses().tolist() == CT[t].tolist()


@pytest.mark.parametrize("name", mma_atom_names())
def test_one_atom_tiles_to_itself(name):
    atom = mma_atom(name)
    mma = make_tiled_mma(atom)
    assert mma.tile_size_mnk == tuple(atom.shape_mnk[:2]) + (atom.shape_mnk[2],)
    for got, want in ((mma.get_layoutC_TV(), atom.layout_c_tv), (mma.get_layoutB_TV(), atom.layout_b_tv)):
        if atom.num_threads == int(mma.thr_layout_vmnk.size()) and atom.thr_id == Layout(atom.num_threads):
            assert np.array_equal(_table(got), _table(want))


def test_atoms_are_the_catalog():
    # mma.sync: the catalog's fragments, name by name
    seen = 0
    for e in catalog_mma.catalog():
        if e.operand != "C" or (e.shape, e.dtype) == ("m8n8k4", "f16"):
            continue
        a = mma_atom(cute_mma_name(e.shape, e.dtype, e.ctype, sparse=e.sparse, kind=e.kind))
        get = catalog_mma.sparse_fragment if e.sparse else catalog_mma.fragment
        assert a.layout_c_tv == get(e.shape, e.dtype, "C", ctype=e.ctype, kind=e.kind).layout
        assert a.layout_a_tv == get(e.shape, e.dtype, "A", kind=e.kind).layout
        assert a.layout_b_tv == get(e.shape, e.dtype, "B", kind=e.kind).layout
        seen += 1
    assert seen > 60  # every mma.sync / mma.sp entry, kind:: forms included
    # the Volta quadpair: lane (l%4) + 16*(l>=16) of computation 0, as the catalog's m8n8k4 fragment
    q = mma_atom("SM70_8x8x4_F32F16F16F32_TN")
    f = catalog_mma.fragment("m8n8k4", "f16", "C", ctype="f32")
    for t in range(8):
        lane = int(q.thr_id(t))
        for v in range(8):
            assert f.index(lane, v) == q.layout_c_tv(t, v)
    # wgmma: D and register A from wgmma_fragments; smem operands broadcast to all 128 threads
    w = mma_atom("SM90_64x96x16_F16F16F16_RS")
    assert w.layout_c_tv == wgmma_fragments.fragment("m64n96k16", "f16", "D").layout
    assert w.layout_a_tv == wgmma_fragments.fragment("m64n96k16", "f16", "A").layout
    assert set(_table(mma_atom("SM90_64x96x16_F16F16F16_SS").layout_a_tv).reshape(-1, 128)[:, 5]) == set(range(64 * 16))


def test_ldmatrix_atoms_are_the_catalog_fragments():
    """CuTe's bit numbering (row-major 8x8 b16 matrices) against the catalog's (lane, value) -> (row, col)."""
    for n in (1, 2, 4):
        for trans in (False, True):
            name = f"SM75_U16x{2 * n}_LDSM_T" if trans else f"SM75_U32x{n}_LDSM_N"
            a = copy_atom(name, "f16")
            f = ldmatrix.fragment(n, trans)
            dst = a.val_layout_dst
            for lane in range(32):
                for v in range(2 * n):
                    mat, (r, c) = f.batch_index(lane, v), f.coords(lane, v)
                    assert dst(lane, v) == 64 * mat + 8 * r + c
            src = a.val_layout_src  # lane l < 8n supplies row l % 8 of matrix l // 8: 8 consecutive elements
            for lane in range(8 * n):
                assert [src(lane, e) for e in range(8)] == [8 * lane + e for e in range(8)]
            st = copy_atom(name.replace("SM75", "SM90").replace("LDSM", "STSM"), "f16")
            assert st.val_layout_src == a.val_layout_dst and st.val_layout_dst == a.val_layout_src


# --------------------------------------------------------------------------- copies line up with MMA registers
def _copies():
    for case in C.MMA_CASES:
        for k, cs in enumerate(case.copies):
            yield pytest.param(case, cs, id=f"{case.key}-cp{k}")


@pytest.mark.parametrize("case,cs", list(_copies()))
def test_retiled_registers_hold_what_the_copy_moves(case, cs):
    """copy(tiled_copy, partition_S(smem), retile_D(fragment)) lands each element in the MMA register
    that partition_A says holds it (and symmetrically for stmatrix from C registers)."""
    mma = case.tiled_mma()
    op = cs.operand
    atom = copy_atom(cs.atom, value_bits(C.value_type_of(case, op)))
    tc = {"A": make_tiled_copy_A, "B": make_tiled_copy_B, "C": make_tiled_copy_C}[op](atom, mma)
    mem = "S" if cs.atom.startswith("SM75") else "D"
    T = make_tensor(C.smem_tensor(case, op, cs.swizzle, cs.major))
    for t in C.threads_of(mma.num_threads):
        th_m, th_c = mma.get_slice(t), tc.get_slice(t)
        part = getattr(th_m, f"partition_{op}")(T)
        frag = getattr(th_m, f"partition_fragment_{op}")(T) if op != "C" else th_m.partition_fragment_C(T)
        reg_of = {int(r): k for k, r in enumerate(_table(frag.layout))}  # register -> fragment index
        reg = "D" if mem == "S" else "S"
        retiled = getattr(th_c, f"retile_{reg}")(frag)
        # which tile elements end up in (or leave) this thread's registers: the register side's partition
        landed = getattr(th_c, f"partition_{reg}")(T)
        assert retiled.size() == landed.size()
        regs, elems, held = retiled.addresses(), landed.addresses(), part.addresses()
        for j in range(landed.size()):
            assert elems[j] == held[reg_of[int(regs[j])]]
        moved = getattr(th_c, f"partition_{mem}")(T)  # what this thread addresses in shared memory
        if cs.vectorizes:
            copy(tc, moved, retiled) if mem == "S" else copy(tc, retiled, moved)
        else:  # e.g. an M permutation that scatters the 8 rows one ldmatrix.trans row-address reads
            with pytest.raises(LayoutError, match="not vectorisable"):
                copy(tc, moved, retiled) if mem == "S" else copy(tc, retiled, moved)


def test_make_tiled_copy_variants():
    mma = make_tiled_mma(mma_atom("SM80_16x8x8_F16F16F16F16_TN"), (2, 1, 1), (32, 16, 16))
    st = copy_atom("SM90_U32x4_STSM_N", "f16")
    tc = make_tiled_copy_C(st, mma)
    small = make_tiled_copy_C_atom(st, mma)
    assert small.layout_tv.size() <= tc.layout_tv.size() and small.num_threads == 64
    assert make_tiled_copy_S(copy_atom("UniversalCopy<uint32_t>", "f16"), tc).layout_tv == tc.get_layoutS_TV()
    assert make_tiled_copy_D(copy_atom("UniversalCopy<uint32_t>", "f16"), tc).layout_tv == tc.get_layoutD_TV()
    # tile 32x16x16 of 16x8x8 atoms, 2 warps along M: C values (2,2), 64/32 = 2 along M, 32/8 = 4 along N
    assert partition_shape_C(mma, (64, 32)) == ((2, 2), 2, 4)
    # A: values (2,2) of an m16n8k8 A, 2 along M, 32/8 = 4 k-blocks along K
    assert partition_shape_A(mma, (64, 32)) == ((2, 2), 2, 4)


def test_universal_copy_moves_the_tile():
    tc = make_tiled_copy(copy_atom("UniversalCopy<uint64_t>", "f16"), Layout((8, 4), (4, 1)), Layout((1, 4)))
    src = make_tensor(np.arange(32 * 32, dtype=float).reshape(32, 32))
    dst = make_tensor(ComposedLayout(Swizzle(2, 2, 3), 0, Layout((32, 32), (32, 1))), np.zeros(32 * 32))
    for t in range(tc.num_threads):
        th = tc.get_slice(t)
        copy(tc, th.partition_S(src), th.partition_D(dst))
    got = np.array([[dst(i, j) for j in range(32)] for i in range(32)])
    assert np.array_equal(got, src.data.reshape(32, 32))


# --------------------------------------------------------------------------- errors
def test_errors_name_the_problem():
    mma = make_tiled_mma(mma_atom("SM80_16x8x16_F32F16F16F32_TN"), (2, 2, 1))
    with pytest.raises(LayoutError, match="rank 4 > 3"):
        make_tiled_mma(mma.atom, (2, 2, 1, 1))
    with pytest.raises(LayoutError, match="not a multiple"):
        make_tiled_mma(mma.atom, (2, 2, 1), (24, _, _))
    with pytest.raises(LayoutError, match="permutation entry"):
        make_tiled_mma(mma.atom, (2, 2, 1), (-4, _, _))
    with pytest.raises(LayoutError, match="at most 3"):
        make_tiled_mma(mma.atom, (2, 2, 1), (32, 32, 16, 1))
    with pytest.raises(LayoutError, match="not an MMAAtom"):
        make_tiled_mma(42)
    with pytest.raises(LayoutError, match="not an atom name"):
        make_tiled_mma("SM80_16x8x16_F32F16F16F32")
    with pytest.raises(LayoutError, match="outside"):
        mma.get_slice(128)
    with pytest.raises(LayoutError, match="rank 1"):
        mma.get_slice(0).partition_A(make_tensor(Layout(64)))
    u32 = copy_atom("UniversalCopy<uint32_t>", "f16")
    with pytest.raises(LayoutError, match="bijection"):
        make_tiled_copy(u32, Layout((32, 4), (1, 64)), Layout((1, 2)))
    with pytest.raises(LayoutError, match="bijection"):
        make_tiled_copy(u32, Layout((32, 4)), Layout((1, 2), (0, 0)))
    with pytest.raises(LayoutError, match="does not cover its tile"):
        TiledCopy(u32, Layout((32, 2), (2, 1)), (16, 8))
    with pytest.raises(LayoutError, match="outside its"):
        TiledCopy(u32, Layout((32, 2), (2, 1)), (8, 4))
    with pytest.raises(LayoutError, match="too few thrs"):
        TiledCopy(copy_atom("SM75_U32x4_LDSM_N", "f16"), Layout((16, 8)), (16, 8))
    tc = make_tiled_copy(u32, Layout((4, 8), (8, 1)), Layout((1, 2)))
    with pytest.raises(LayoutError, match="does not cover the tensor"):
        tc.get_slice(0).partition_S(make_tensor(Layout((6, 16))))
    with pytest.raises(LayoutError, match="not valid for Src"):
        copy_atom("UniversalCopy<uint8_t>", "f16")
    with pytest.raises(LayoutError, match="unknown copy atom"):
        copy_atom("SM75_U32x3_LDSM_N")
    with pytest.raises(LayoutError, match="cp.async"):
        copy_atom("SM80_CP_ASYNC_CACHEGLOBAL<uint64_t>")
    with pytest.raises(LayoutError, match="not an atom name"):
        mma_atom("SM80_16x8x16_F32F16F16F32")
    with pytest.raises(LayoutError, match="not in the catalog"):
        mma_atom("SM80_16x8x24_F32F16F16F32_TN")
    with pytest.raises(LayoutError, match="K = 16"):
        mma_atom("SM90_64x64x32_F32F16F16_SS")
    with pytest.raises(LayoutError, match="N = 12"):
        mma_atom("SM90_64x12x16_F32F16F16_SS")
    with pytest.raises(LayoutError, match="K-major"):
        mma_atom("SM90_64x64x16_F32F16F16_RS<GMMA::Major::MN,GMMA::Major::K>")
    with pytest.raises(LayoutError, match="not a TV layout"):
        MMAAtom("x", (16, 8, 16), Layout(32), Layout(32), Layout(32), Layout(32))
    with pytest.raises(LayoutError, match="threads"):
        CopyAtom("x", Layout(32), Layout((16, 32)), Layout((16, 32)), Layout((16, 32)), 16)
    sp = make_tiled_mma(mma_atom("SM80_SPARSE_16x8x32_F32F16F16F32_TN"), (2, 2, 1), (_, _, Layout(64)))
    with pytest.raises(LayoutError, match="sparse"):
        sp.get_layoutA_TV()


def test_sparse_atoms_tile_over_the_compressed_a():
    mma = make_tiled_mma(mma_atom("SM80_SPARSE_16x8x32_F32F16F16F32_TN"), (2, 2, 1), (32, 32, 64))
    assert mma.tile_size_mnk == (32, 32, 64)
    A = _table(mma.get_layoutA_TV())
    assert np.bincount(A).size == 32 * 32 and (np.bincount(A) == 2).all()  # M x K/2, two warps along N


def test_catalogue_names_round_trip():
    names = mma_atom_names()
    assert len(names) > 400 and len(set(names)) == len(names)
    assert all(n == mma_atom(n).name for n in names[:60] + names[-60:])
    assert all(copy_atom(n, 8 if "uint8" in n else 16).name.replace(" ", "") == n for n in copy_atom_names())
    assert mma_atom(shape="m16n8k16", dtype="bf16").name == "SM80_16x8x16_F32BF16BF16F32_TN"
    assert mma_atom(shape="m64n64k16", dtype="f16", source="RS").name == "SM90_64x64x16_F32F16F16_RS"
    assert mma_atom("SM75_16x8x8_F32F16F16F32_TN").layout_a_tv == mma_atom("SM80_16x8x8_F32F16F16F32_TN").layout_a_tv


# --------------------------------------------------------------------------- laws on random tilings
from hypothesis import assume, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_ATOMS = ["SM80_16x8x16_F32F16F16F32_TN", "SM80_16x8x8_F32TF32TF32F32_TN", "SM80_8x8x4_F64F64F64F64_TN",
          "SM80_16x8x32_S32S8S8S32_TN", "SM70_8x8x4_F32F16F16F32_NT", "SM90_64x16x16_F32F16F16_RS",
          "SM80_SPARSE_16x8x32_F32F16F16F32_TN", "SM120_16x8x32_F32E2M1E2M1F32_TN_KIND_F8F6F4"]


@st.composite
def tilings(draw):
    atom = mma_atom(draw(st.sampled_from(_ATOMS)))
    shape = tuple(draw(st.sampled_from([1, 2])) for _ in range(2)) + (1,)
    row_major = draw(st.booleans())
    al = Layout(shape, (shape[1], 1, 0)) if row_major else Layout(shape, (1, shape[0], 0))
    mult = [draw(st.sampled_from([1, 2])) for _ in range(3)]
    perm = tuple(atom.shape_mnk[i] * shape[i] * mult[i] for i in range(3))
    return make_tiled_mma(atom, al, perm if draw(st.booleans()) else None)


@settings(max_examples=40, deadline=None)
@given(tilings())
def test_tiling_laws(mma):
    """For any tiling whose threads are 0..T-1: C is held exactly once, A (B) once per thread group along
    N (M), and thread t's partition of a tile-sized tensor is its row of the TV layout. (A lone Volta
    quadpair is lanes 0-3 and 16-19: CuTe's get_layoutC_TV then indexes thread slots, not lanes.)"""
    assume(sorted(_table(mma.thr_layout_vmnk).tolist()) == list(range(mma.num_threads)))
    M, N, K = mma.tile_size_mnk
    Kc = K // mma.atom.a_k_compression
    TM, TN = int(mma.thr_layout_vmnk[1].size()), int(mma.thr_layout_vmnk[2].size())
    c = np.bincount(_table(mma.get_layoutC_TV()), minlength=M * N)
    assert c.size == M * N and (c == 1).all()
    a = np.bincount(_table(mma.get_layoutA_TV()), minlength=M * Kc)
    b = np.bincount(_table(mma.get_layoutB_TV()), minlength=N * K)
    assert a.size == M * Kc and a.min() >= TN and b.size == N * K and b.min() >= TM
    T = mma.num_threads
    CT = _table(mma.get_layoutC_TV()).reshape(-1, T).T
    AT = _table(mma.get_layoutA_TV()).reshape(-1, T).T
    for t in (0, T // 2 + 1, T - 1):
        th = mma.get_slice(t)
        assert th.partition_C(make_tensor(Layout((M, N)))).addresses().tolist() == CT[t].tolist()
        assert th.partition_A(make_tensor(Layout((M, Kc)))).addresses().tolist() == AT[t].tolist()


@settings(max_examples=40, deadline=None)
@given(st.sampled_from([(4, 8), (8, 4), (16, 2), (2, 16), (32, 1)]), st.booleans(),
       st.sampled_from([(1, 1), (1, 2), (2, 1), (2, 2), (1, 4)]), st.booleans())
def test_make_tiled_copy_laws(thr_shape, thr_row, val_shape, val_row):
    """make_tiled_copy covers its tile exactly once, and thread t's partition of the tile is its TV row."""
    thr = Layout(thr_shape, (thr_shape[1], 1)) if thr_row else Layout(thr_shape)
    val = Layout(val_shape, (val_shape[1], 1)) if val_row else Layout(val_shape)
    tc = make_tiled_copy(copy_atom("UniversalCopy<uint16_t>", "f16"), thr, val)
    M, N = tc.tile_shape
    assert (M, N) == (thr_shape[0] * val_shape[0], thr_shape[1] * val_shape[1])
    tv = _table(tc.layout_tv)
    assert sorted(tv.tolist()) == list(range(M * N))
    rows = tv.reshape(-1, tc.num_threads).T
    for t in (0, tc.num_threads - 1):
        assert tc.get_slice(t).partition_S(make_tensor(Layout((M, N)))).addresses().tolist() == rows[t].tolist()
