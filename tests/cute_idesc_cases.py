"""CuTe C++ as the oracle of the tcgen05 instruction descriptor (layoutalg.nvidia.blackwell.idesc).

Cases are drawn at random over the legal space (kinds, types, majors, M, N, negate, saturate,
sparsity and its selector, scale types, scale-factor ids, .ws max shift); each becomes a snippet that
prints the word CuTe 4.2 builds: ``UMMA::make_instr_desc`` / ``make_runtime_instr_desc`` (plain),
``make_instr_desc_block_scaled`` / ``make_runtime_instr_desc_block_scaled`` (block-scaled; the
scale-factor ids enter through the TMEM addresses' top two bits, as CuTe takes them), or the
``idesc_`` an SM100 MMA atom's ``MMA_Traits`` carries.

    python tests/cute_idesc_cases.py --record   # (re)writes tests/data/cute/idesc.json (g++, ~2 min)

tests/test_nvidia_idesc.py replays the recorded words and compiles a small live sample.
"""

from __future__ import annotations

import json
import random
from typing import Any

from oracle_recorder import OracleRecorder

HEADERS_EXTRA = ("cute/atom/mma_traits_sm100.hpp", "cute/arch/mma_sm100_desc.hpp")

_CPP = {
    "f16": "cutlass::half_t", "bf16": "cutlass::bfloat16_t", "tf32": "cutlass::tfloat32_t",
    "e4m3": "cutlass::float_e4m3_t", "e5m2": "cutlass::float_e5m2_t",
    "s8": "int8_t", "u8": "uint8_t", "f32": "float", "s32": "int32_t",
    "ue8m0": "cutlass::float_ue8m0_t", "ue4m3": "cutlass::float_ue4m3_t",
}


def cpp_type(t: str, kind: str) -> str:
    """The CuTe type a kernel passes for PTX type ``t`` under ``kind``: the sub-byte types of
    kind::f8f6f4 / mxf8f6f4 are CuTe's ``*_unpacksmem_t`` (one element per byte in smem, ISA code 5
    for e2m1), those of kind::mxf4 / mxf4nvf4 the packed ``float_e2m1_t`` (ISA code 1)."""
    if t in ("e2m3", "e3m2", "e2m1"):
        if kind in ("f8f6f4", "mxf8f6f4"):
            return f"cutlass::detail::float_{t}_unpacksmem_t"
        return f"cutlass::float_{t}_t"
    return _CPP[t]


def _major(m: str) -> str:
    return f"UMMA::Major::{m}"


def _neg(b: bool) -> str:
    return "UMMA::ScaleIn::Neg" if b else "UMMA::ScaleIn::One"


def snippet(args: dict[str, Any]) -> str:
    """C++ printing the 8-hex-digit word CuTe's make_*instr_desc* builds for ``args``."""
    kind = args["kind"]
    a, b, c = cpp_type(args["a_type"], kind), cpp_type(args["b_type"], kind), _CPP[args["c_type"]]
    m, n = args["m"], args["n"]
    am, bm = _major(args.get("a_major", "K")), _major(args.get("b_major", "K"))
    na, nb = _neg(args.get("negate_a", False)), _neg(args.get("negate_b", False))
    sparse = "true" if args.get("sparse") else "false"
    if kind in ("mxf8f6f4", "mxf4", "mxf4nvf4"):
        sf = _CPP[args.get("scale_type") or "ue8m0"]
        tmpl = f"{a}, {b}, {c}, {sf}, {m}, {n}, {am}, {bm}, {na}, {nb}, {sparse}"
        sfa, sfb = args.get("sfa_id", 0), args.get("sfb_id", 0)
        return (
            f"uint64_t d = UMMA::make_runtime_instr_desc_block_scaled<{tmpl}>({sfa}u << 30, {sfb}u << 30);"
            ' printf("%08x", uint32_t(d >> 32));'
        )
    sat = "UMMA::Saturate::True" if args.get("saturate") else "UMMA::Saturate::False"
    shift = {0: "NoShift", 8: "MaxShift8", 16: "MaxShift16", 32: "MaxShift32"}[args.get("max_shift", 0)]
    tmpl = f"{a}, {b}, {c}, {m}, {n}, {am}, {bm}, {na}, {nb}, {sat}, {sparse}, UMMA::MaxShift::{shift}"
    sel = args.get("sparse_selector", 0)
    return f'uint64_t d = UMMA::make_runtime_instr_desc<{tmpl}>({sel}); printf("%08x", uint32_t(d >> 32));'


def atom_name(args: dict[str, Any]) -> str | None:
    """The SM100 SS MMA atom of CuTe 4.2 with this configuration (None where CuTe has none)."""
    kind, g, sp = args["kind"], args.get("cta_group", 1), args.get("sparse", False)
    if args.get("ws") or args.get("sparse_selector") or args.get("k") == 96:
        return None
    fam = {"tf32": "TF32", "f16": "F16BF16", "i8": "S8", "f8f6f4": "F8F6F4", "mxf8f6f4": "MXF8F6F4", "mxf4": "MXF4",
           "mxf4nvf4": "MXF4"}[kind]
    if sp and kind not in ("tf32", "f16", "i8"):
        return None
    if kind in ("mxf4", "mxf4nvf4") and args.get("sfa_id", 0) | args.get("sfb_id", 0):
        return None
    if kind == "mxf8f6f4" and args.get("sfa_id", 0) | args.get("sfb_id", 0):
        return None
    # CuTe 4.2's atoms are stricter than the ISA here (their static_asserts refuse ISA-legal shapes):
    if kind == "mxf8f6f4" and g == 2 and args["m"] != 256:  # SM100_MMA_MXF8F6F4_2x1SM_SS: M == 256
        return None
    if kind == "i8" and g == 1 and args["n"] == 24:  # SM100_MMA_S8_SS: N == 8 or a multiple of 16
        return None
    return f"SM100_MMA_{fam}{'_2x1SM' if g == 2 else ''}_SS{'_SPARSE' if sp else ''}"


def atom_snippet(args: dict[str, Any]) -> str:
    """C++ printing the ``idesc_`` of the atom's MMA_Traits."""
    kind = args["kind"]
    name = atom_name(args)
    assert name is not None
    a, b, c = cpp_type(args["a_type"], kind), cpp_type(args["b_type"], kind), _CPP[args["c_type"]]
    m, n = args["m"], args["n"]
    am, bm = _major(args.get("a_major", "K")), _major(args.get("b_major", "K"))
    na, nb = _neg(args.get("negate_a", False)), _neg(args.get("negate_b", False))
    if kind == "f8f6f4":
        traits = (
            f"MMA_Traits<{name}, {a}, {b}, {c}, C<{m}>, C<{n}>, integral_constant<UMMA::Major, {am}>, "
            f"integral_constant<UMMA::Major, {bm}>, integral_constant<UMMA::ScaleIn, {na}>, integral_constant<UMMA::ScaleIn, {nb}>>"
        )
    elif kind == "i8":
        sat = "UMMA::Saturate::True" if args.get("saturate") else "UMMA::Saturate::False"
        traits = f"MMA_Traits<{name}<{a}, {b}, {c}, {m}, {n}, {am}, {bm}, {sat}>>"
    elif kind == "mxf8f6f4":
        sf = _CPP[args.get("scale_type") or "ue8m0"]
        traits = f"MMA_Traits<{name}<{a}, {b}, {c}, {sf}, {m}, {n}, {am}, {bm}, {na}, {nb}>>"
    elif kind in ("mxf4", "mxf4nvf4"):
        sf = _CPP[args.get("scale_type") or "ue8m0"]
        vs = args.get("sf_vec_size") or (32 if kind == "mxf4" else 16)
        traits = f"MMA_Traits<{name}<{a}, {b}, {c}, {sf}, {m}, {n}, {vs}, {am}, {bm}, {na}, {nb}>>"
    else:
        traits = f"MMA_Traits<{name}<{a}, {b}, {c}, {m}, {n}, {am}, {bm}, {na}, {nb}>>"
    op = name if kind == "f8f6f4" else traits[len("MMA_Traits<"):-1]
    # instantiate the operation too: its static_asserts (shapes) live there, the traits' in the traits
    return f'{op} op_; (void)op_; {traits} t; printf("%08x", uint32_t(t.idesc_));'


# ---------------------------------------------------------------------------------------------
# random legal cases
# ---------------------------------------------------------------------------------------------

_TYPES = {
    "tf32": (["tf32"], ["f32"]),
    "f16": (["f16", "bf16"], ["f16", "f32"]),
    "f8f6f4": (["e4m3", "e5m2", "e2m3", "e3m2", "e2m1"], ["f16", "f32"]),
    "i8": (["s8", "u8"], ["s32"]),
    "mxf8f6f4": (["e4m3", "e5m2", "e2m3", "e3m2", "e2m1"], ["f32"]),
    "mxf4": (["e2m1"], ["f32"]),
    "mxf4nvf4": (["e2m1"], ["f32"]),
}


def random_args(rng: random.Random) -> dict[str, Any]:
    """One configuration, drawn without regard to legality (callers filter through make_instr_desc)."""
    kind = rng.choice(list(_TYPES))
    ab, cs = _TYPES[kind]
    blk = kind.startswith("mx")
    ws = (not blk) and rng.random() < 0.15
    args: dict[str, Any] = {
        "kind": kind, "a_type": rng.choice(ab), "b_type": rng.choice(ab), "c_type": rng.choice(cs),
        "m": rng.choice([32, 64, 128, 256]) if ws else rng.choice([64, 128, 128, 256]),
        "n": rng.choice([64, 128, 256]) if ws else 8 * rng.randint(1, 32),
        "a_major": rng.choice(["K", "K", "MN"]), "b_major": rng.choice(["K", "K", "MN"]),
        "cta_group": 1 if ws else rng.choice([1, 2]), "sparse": rng.random() < 0.2,
    }
    if kind != "i8":
        args["negate_a"] = rng.random() < 0.25
        args["negate_b"] = rng.random() < 0.25
    else:
        args["saturate"] = rng.random() < 0.3
    if not blk:
        if args["sparse"]:
            args["sparse_selector"] = rng.randint(0, 3)
        if ws:
            args["ws"] = True
            args["max_shift"] = rng.choice([0, 8, 16, 32])
    else:
        args["scale_type"] = rng.choice(["ue8m0", "ue4m3"]) if kind == "mxf4nvf4" else "ue8m0"
        ids = [0, 1, 2, 3] if kind == "mxf8f6f4" else [0, 2]
        args["sfa_id"] = rng.choice(ids) if rng.random() < 0.4 else 0
        args["sfb_id"] = rng.choice(ids) if rng.random() < 0.4 else 0
    return args


def legal_cases(n: int, seed: int) -> list[dict[str, Any]]:
    """``n`` distinct legal configurations (their canonical make_instr_desc arguments)."""
    from layoutalg.nvidia.blackwell.idesc import IdescError, make_instr_desc

    rng = random.Random(seed)
    out: dict[str, dict[str, Any]] = {}
    while len(out) < n:
        args = random_args(rng)
        try:
            make_instr_desc(**args)
        except IdescError:
            continue
        out.setdefault(json.dumps(args, sort_keys=True), args)
    return list(out.values())


def run(cases: list[tuple[str, dict[str, Any]]], cache: bool = True) -> list[Any]:
    """CuTe's word (int) or CompileFailure per (how, args) case; how is 'make_instr_desc' or 'atom'."""
    from layoutalg.interop import cutecpp

    snippets = [snippet(a) if how == "make_instr_desc" else atom_snippet(a) for how, a in cases]
    res = cutecpp.run_snippets(snippets, headers=cutecpp.DEFAULT_HEADERS + HEADERS_EXTRA, chunk=50, cache=cache)
    return [int(r, 16) if isinstance(r, str) else r for r in res]


def write_rows(head: dict[str, Any], rows: list[dict[str, Any]]) -> str:
    """The JSON text: the header's keys, then one case per line."""
    lines = [json.dumps(head)[:-1] + ', "cases": [']
    lines += [json.dumps(r, sort_keys=True) + ("," if k + 1 < len(rows) else "") for k, r in enumerate(rows)]
    return "\n".join(lines) + "\n]}\n"


def record(rec: OracleRecorder, n_desc: int = 600, n_atoms: int = 400, seed: int = 2126) -> str:
    desc = [("make_instr_desc", a) for a in legal_cases(n_desc, seed)]
    atoms = [("atom", a) for a in legal_cases(n_atoms * 8, seed + 1) if atom_name(a) is not None][:n_atoms]
    cases = desc + atoms
    words = run(cases, cache=False)
    rows = []
    for (how, args), w in zip(cases, words):
        if not isinstance(w, int):
            raise SystemExit(f"CuTe refused {how} {args}: {w.message}")
        rows.append({"how": how if how == "make_instr_desc" else f"MMA_Traits<{atom_name(args)}>::idesc_",
                     "args": args, "word": f"0x{w:08x}"})
    head = {
        **rec.provenance("python tests/cute_idesc_cases.py --record (g++ -std=c++17 on the host, no GPU)", version_key="cutlass"),
        "seed": seed,
        "note": "word = uint32_t of UMMA::make_runtime_instr_desc[_block_scaled]<...>(...) >> 32, or of an SM100 atom's MMA_Traits::idesc_",
    }
    return write_rows(head, rows)


REC = OracleRecorder("cute", "idesc", record, script="cute_idesc_cases")
DATA = REC.path

if __name__ == "__main__":  # pragma: no cover - a recording tool
    raise SystemExit(REC.main())
