"""Random tensors, swizzled and composed layouts, printed by CuTe C++ and by the CuTe DSL themselves.

Each C++ case is a snippet that builds a tensor (or layout) of a random element type in a random
address space and prints it as CuTe prints it -- ``print(t)``, or ``print_tensor(t)`` with values --
then, after a marker line, CuTe's own element offsets of every index ``i < size``: ``&t(i) - base``
for tensors over a (possibly swizzled) pointer of whole bytes, ``t.layout()(i)`` otherwise. parse
must read the print and give that function. ``python tests/print_cases.py --record`` records the answers in
tests/data/cute/prints.json; the tests replay them and compile a small live sample each run.

The DSL cases print ``cute.make_tensor(ptr, L)`` and ``L`` for layouts exported with
:func:`layoutalg.interop.cute.to_cute_dsl`; the function is the layout that was exported.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import pathlib
import random
from typing import Any

import cute_oracle as co
from oracle_recorder import OracleRecorder
from layoutalg import Layout
from layoutalg.composed import ComposedLayout
from layoutalg.swizzle import Swizzle

MARK = "@@offsets@@"

#: C++ element types and their widths in bits
CPP_TYPES = [("half_t", 16), ("bfloat16_t", 16), ("float", 32), ("double", 64), ("int8_t", 8),
             ("uint16_t", 16), ("tfloat32_t", 32), ("float_e4m3_t", 8), ("int32_t", 32)]
SUBBYTE = [("int4b_t", 4), ("uint2b_t", 2)]
SPACES = ["gmem", "smem", "rmem", "raw"]


def _leaf(v: int, dynamic: bool) -> str:
    return f"int({v})" if dynamic else f"Int<{v}>{{}}"


def _tup(t: Any, maker: str, dynamic: bool) -> str:
    if type(t) is tuple:
        return f"{maker}(" + ", ".join(_tup(x, maker, dynamic) for x in t) + ")"
    return _leaf(t, dynamic)


def cpp_layout(L: Layout, dynamic: bool = False) -> str:
    return f"make_layout({_tup(L.shape, 'make_shape', dynamic)}, {_tup(L.stride, 'make_stride', dynamic)})"


def cpp_expr(x: Any, dynamic: bool = False) -> str:
    if isinstance(x, Layout):
        return cpp_layout(x, dynamic)
    if isinstance(x, Swizzle):
        return f"Swizzle<{x.B},{x.M},{x.S}>{{}}"
    return f"make_composed_layout({cpp_expr(x.outer)}, Int<{x.offset}>{{}}, {cpp_expr(x.inner, dynamic)})"


def _rand_swizzle(r: random.Random) -> Swizzle:
    b = r.randint(1, 3)
    return Swizzle(b, r.randint(0, 4), r.choice([b, 3, 4, -b - 1]))


def cpp_cases(seed: int = 20, n: int = 140) -> list[dict]:
    """``n`` snippets (with what each builds, for the record): plain tensors, composed layouts in
    tensors, swizzled pointers (``ComposedLayout<Swizzle, smem_ptr_flag_bits<b>, L>`` made a tensor),
    nested composed layouts, sub-byte tensors, owning register tensors printed with their values."""
    r = random.Random(seed)
    out = []
    for k in range(n):
        kind = ["plain", "composed", "swizzled_ptr", "nested", "subbyte", "values", "layout"][k % 7]
        T, bits = r.choice(CPP_TYPES)
        dynamic = r.random() < 0.3
        L = co.rand_compact(r, max_size=512) if kind in ("composed", "swizzled_ptr", "nested") else co.rand_layout(r, max_size=512)
        space = r.choice(SPACES)
        addr = r.choice([0x400, 0x7f00, 0x1000, 0x10000, 0x7ffd0000]) if kind != "swizzled_ptr" else r.choice([0x400 * 8, 0x10000])
        body = ""
        if kind == "plain":
            lay = cpp_layout(L, dynamic)
        elif kind == "composed":
            lay = cpp_expr(ComposedLayout(_rand_swizzle(r), r.choice([0, 0, 8, 32]), L), dynamic)
        elif kind == "nested":
            inner = ComposedLayout(_rand_swizzle(r), r.choice([0, 4]), L)
            outer = co.rand_compact(r, max_size=4096)
            outer = Layout(outer.shape, outer.stride)
            if r.random() < 0.5:  # a layout outside a composed layout
                lay = f"make_composed_layout({cpp_layout(outer)}, Int<{r.choice([0, 2])}>{{}}, {cpp_expr(inner)})"
            else:  # a composed layout outside a layout
                sw = _rand_swizzle(r)
                lay = (f"make_composed_layout(make_composed_layout({cpp_expr(sw)}, Int<{r.choice([0, 2])}>{{}}, "
                       f"{cpp_layout(outer)}), Int<{r.choice([0, 4])}>{{}}, {cpp_layout(L)})")
        elif kind == "swizzled_ptr":
            T, bits = r.choice([c for c in CPP_TYPES if c[1] in (8, 16, 32)])
            sw = Swizzle(r.randint(1, 3), 4, 3)
            lay = f"ComposedLayout<Swizzle<{sw.B},{sw.M},{sw.S}>, smem_ptr_flag_bits<{bits}>, decltype({cpp_layout(L)})>{{}}"
            space = "smem"
        elif kind == "subbyte":
            T, bits = r.choice(SUBBYTE)
            lay = cpp_layout(L, dynamic)
            space = r.choice(["gmem", "raw"])
        elif kind == "layout":
            lay = cpp_layout(L, dynamic)
        elif kind == "values":  # owning tensors are static
            L = co.rand_compact(r, max_size=512)
            lay = cpp_layout(L)
        if kind == "layout":  # a layout (no tensor) printed alone, dynamic or static
            body = f"auto L = {lay}; print(L); printf(\"\\n{MARK}\\n\"); for (int i = 0; i < size(L); ++i) printf(\"%d \", int(L(i)));"
        elif kind == "values":
            T = r.choice(["float", "int", "half_t"])
            body = (f"auto t = make_tensor<{T}>({lay}); for (int i = 0; i < size(t); ++i) t(i) = {T}(i % 100);"
                    f" print_tensor(t); printf(\"\\n{MARK}\\n\"); for (int i = 0; i < size(t); ++i) printf(\"%d \", int(t.layout()(i)));")
        else:
            ptr = f"({T}*)0x{addr:x}"
            if kind == "subbyte":
                ptr = f"subbyte_iterator<{T}>((void*)0x{addr:x})"
            mk = {"gmem": f"make_gmem_ptr({ptr})", "smem": f"make_smem_ptr({ptr})", "rmem": f"make_rmem_ptr({ptr})", "raw": ptr}[space]
            if kind == "subbyte" and space == "gmem":
                mk = f"make_gmem_ptr<{T}>((void*)0x{addr:x})"
            off = "int(t.layout()(i))"
            if kind == "swizzled_ptr":
                off = f"int(&t(i) - ({T}*)0x{addr:x})"
            body = (f"auto t = make_tensor({mk}, {lay}); print(t); printf(\"\\n{MARK}\\n\"); "
                    f"for (int i = 0; i < size(t); ++i) printf(\"%d \", {off});")
        out.append({"kind": kind, "snippet": body})
    return out


def split(output: str) -> tuple[str, list[int]]:
    """CuTe's print and its offsets, from one snippet's output."""
    text, _, offs = output.partition(MARK)
    return text.strip("\n"), [int(x) for x in offs.split()]


def run_cpp(cases: list[dict]) -> list[dict]:
    from layoutalg.interop import cutecpp

    outs = cutecpp.run_snippets([c["snippet"] for c in cases])
    rec = []
    for c, o in zip(cases, outs):
        if not o:
            rec.append({**c, "refused": o.message})
            continue
        text, offs = split(o)
        rec.append({**c, "printed": text, "offsets": offs})
    return rec


# ---------------------------------------------------------------------------------------------
# the CuTe DSL
# ---------------------------------------------------------------------------------------------

DSL_TYPES = [("Float16", 16), ("BFloat16", 16), ("Float32", 32), ("TFloat32", 32), ("Int8", 8),
             ("Float8E4M3FN", 8), ("Float64", 64), ("Int4", 4), ("Int32", 32)]
DSL_SPACES = ["gmem", "smem", "rmem"]


def dsl_cases(seed: int = 21, n: int = 100) -> list[tuple[Any, str]]:
    """(layout, DSL expression printed) pairs: layouts, swizzled/offset/nested composed layouts, and
    tensors over pointers of random element types, spaces and alignments (some swizzled)."""
    from layoutalg.interop.cute import to_cute_dsl

    r = random.Random(seed)
    out = []
    for k in range(n):
        kind = k % 5
        L = co.rand_compact(r, max_size=512) if kind else co.rand_layout(r, max_size=512)
        if kind in (1, 3):
            L = ComposedLayout(_rand_swizzle(r), r.choice([0, 8]), L)
        if kind == 4:
            outer = co.rand_compact(r, max_size=2048)
            L = ComposedLayout(ComposedLayout(_rand_swizzle(r), 0, outer), r.choice([0, 4]), L)
        expr = str(to_cute_dsl(L))
        if kind in (2, 3):
            T, bits = r.choice(DSL_TYPES)
            space = r.choice(DSL_SPACES)
            align = r.choice([None, 16, 1024]) if bits >= 8 else None
            a = "" if align is None else f", assumed_align={align}"
            ptr = f"cute.make_ptr(cutlass.{T}, 0x{0x10000:x}, cute.AddressSpace.{space}{a})"
            expr = f"cute.make_tensor({ptr}, {expr})"
        out.append((L, expr))
    return out


def run_dsl(exprs: list[str], tmp_dir: pathlib.Path) -> list[str]:
    """Each expression printed inside one ``@cute.jit`` function traced on the CPU."""
    body = "".join(f"    print({e})\n" for e in exprs)
    path = tmp_dir / "layoutalg_dsl_prints.py"
    path.write_text("import cutlass\nimport cutlass.cute as cute\n\n\n@cute.jit\ndef run():\n" + body)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        mod.run()
    return buf.getvalue().strip().splitlines()


def offsets(L: Any) -> list[int]:
    return [int(L(i)) for i in range(int(L.size()))]


def record(rec: OracleRecorder) -> str:
    """CuTe C++'s prints and offsets of :func:`cpp_cases`, the CuTe DSL's prints of :func:`dsl_cases`: the recording."""
    import tempfile
    from importlib.metadata import version

    cases = run_cpp(cpp_cases())
    with tempfile.TemporaryDirectory() as d:
        dsl = dsl_cases()
        lines = run_dsl([e for _, e in dsl], pathlib.Path(d))
    head = rec.provenance("python tests/print_cases.py --record: CuTe C++ prints (g++ against the CUTLASS headers) with CuTe's "
                          "own element offsets; CuTe DSL prints (@cute.jit traced on the CPU) of layouts exported by to_cute_dsl",
                          version_key="cute_cpp", compiler_line=False, cute_dsl=version("nvidia-cutlass-dsl"))
    rows = {"cpp": cases, "dsl": [{"layout": str(L), "expr": e, "printed": p, "offsets": offsets(L)} for (L, e), p in zip(dsl, lines)]}
    return json.dumps(head, indent=1)[:-2] + ",\n" + ",\n".join(
        f' "{k}": [\n' + ",\n".join("  " + json.dumps(x) for x in v) + "\n ]" for k, v in rows.items()) + "\n}\n"


REC = OracleRecorder("cute", "prints", record, script="print_cases")
DATA = REC.path

if __name__ == "__main__":  # pragma: no cover - a recording tool
    raise SystemExit(REC.main())
