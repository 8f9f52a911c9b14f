"""Record AMD's Matrix Instruction Calculator: every listed instruction's register maps, compactly.

AMD's calculator (github.com/ROCm/amd_matrix_instruction_calculator, one script,
``matrix_calculator.py``, needing only ``tabulate``) prints, for an instruction and an operand,
which matrix element every ``(lane, register bits)`` cell holds::

    python matrix_calculator.py -a cdna3 -i v_mfma_f32_32x32x8_f16 -D -M --csv
    lane,v0,v1,...
    0,D[0][0],D[1][0],...

This recorder runs it (as a subprocess, through its command line only) for every instruction that
``-L`` lists on an architecture and for the operands A, B and D, and writes
``tests/data/amd/calculator_<arch>.json``::

    {"provenance": {...},
     "instructions": {"v_mfma_f32_32x32x8_f16": {"wave64": {"A": {...}, "B": {...}, "D": {...}}}}}

One operand record is ``{"dims": [rows, cols, blocks], "columns": ["v0.[15:0]", ...],
"cells": [[code, ...] per lane]}`` where the calculator's cell ``X[row][col].B<block>`` is stored
as ``code = row + rows * (col + cols * block)`` (rows/cols as the calculator prints them: A is
M x K, B is K x N, D is M x N), ``-1`` is an empty cell and a list of codes is a cell that holds
one of several elements (the 4:2 sparse A of ``v_smfmac``). RDNA architectures are recorded for
wave32 and wave64.

Run (the calculator is not part of this project; bring it yourself)::

    LAYOUTALG_AMD_CALCULATOR=/path/to/matrix_calculator.py python tests/amd_calculator_cases.py [arch ...]
    LAYOUTALG_AMD_CALCULATOR=... python tests/amd_calculator_cases.py modifiers   # calculator_modifiers.json
"""

from __future__ import annotations

import datetime
import json
import os
import pathlib
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from typing import Any

DATA = pathlib.Path(__file__).resolve().parent / "data" / "amd"
ENV = "LAYOUTALG_AMD_CALCULATOR"
ARCHS = ("cdna1", "cdna2", "cdna3", "rdna3", "rdna4")
OPERANDS = ("A", "B", "D")
_CELL = re.compile(r"([ABCDK])\[(\d+)\]\[(\d+)\](?:\.B(\d+))?")


def calculator_path() -> pathlib.Path | None:
    """The calculator script named by ``$LAYOUTALG_AMD_CALCULATOR``, or None when absent."""
    p = os.environ.get(ENV)
    if not p:
        return None
    path = pathlib.Path(p)
    return path if path.is_file() else None


def run(path: pathlib.Path, *args: str) -> str:
    """The calculator's standard output for ``args`` (raises on a non-zero exit)."""
    out = subprocess.run([sys.executable, str(path), *args], capture_output=True, text=True, check=True)
    return out.stdout


def version(path: pathlib.Path) -> str:
    return run(path, "-v").strip()


def instructions(path: pathlib.Path, arch: str) -> list[str]:
    """The instruction mnemonics ``-L`` lists for ``arch``, in the calculator's order."""
    lines = run(path, "-a", arch, "-L").splitlines()
    return [ln.strip() for ln in lines[1:] if ln.strip()]


def parse_matrix_layout(text: str) -> tuple[list[str], list[list[list[tuple[int, int, int]]]]]:
    """``(columns, cells)`` of ``-M --csv`` output: cells[lane][column] lists (row, col, block).

    Lanes the output skips (nothing read from them under CBSZ/ABID or BLGP) get empty cells.
    """
    lines = [ln for ln in text.splitlines() if ln.strip()]
    head = next(k for k, ln in enumerate(lines) if ln.startswith("lane,"))
    columns = lines[head].split(",")[1:]
    cells: list[list[list[tuple[int, int, int]]]] = []
    for ln in lines[head + 1:]:
        parts = ln.split(",")
        if int(parts[0]) < len(cells):
            raise ValueError(f"lanes out of order at {ln!r}")
        while len(cells) < int(parts[0]):  # a lane the instruction does not read (broadcast modifiers)
            cells.append([[] for _ in columns])
        row = []
        for cell in parts[1:]:
            row.append([(int(r), int(c), int(b or 0)) for _, r, c, b in _CELL.findall(cell)])
        cells.append(row)
    return columns, cells


def encode(columns: list[str], cells: list[list[list[tuple[int, int, int]]]]) -> dict[str, Any]:
    """The compact record of one operand (see the module docstring)."""
    flat = [e for row in cells for cell in row for e in cell]
    rows = 1 + max(e[0] for e in flat)
    cols = 1 + max(e[1] for e in flat)
    blocks = 1 + max(e[2] for e in flat)
    out = []
    for row in cells:
        codes: list[Any] = []
        for cell in row:
            cs = [r + rows * (c + cols * b) for r, c, b in cell]
            codes.append(-1 if not cs else cs[0] if len(cs) == 1 else cs)
        out.append(codes)
    return {"dims": [rows, cols, blocks], "columns": columns, "cells": out}


def decode(record: dict[str, Any]) -> dict[tuple[int, int], list[tuple[int, int, int]]]:
    """``{(lane, column): [(row, col, block), ...]}`` of a stored operand record (empty cells left out)."""
    rows, cols, _ = record["dims"]
    out = {}
    for lane, codes in enumerate(record["cells"]):
        for c, code in enumerate(codes):
            cs = code if isinstance(code, list) else [code]
            if cs != [-1]:
                out[(lane, c)] = [(x % rows, (x // rows) % cols, x // (rows * cols)) for x in cs]
    return out


def column_name(fragment: Any, value: int, pair: bool = False) -> str:
    """The calculator's column header for ``value`` of a layoutalg.amd fragment: ``v3``, ``v1.[15:0]``, ``v[1:0]``;
    ``pair``: the header of values ``value, value+1`` together (how it prints a 4:2 sparse A)."""
    reg, lo, bits = fragment.register_bits(value)
    bits *= 2 if pair else 1
    return reg if bits in (32, 64) else f"{reg}.[{lo + bits - 1}:{lo}]"


def compare(fragment: Any, record: dict[str, Any]) -> None:
    """Assert that a layoutalg.amd fragment and a stored operand record are the same register map.

    Every column header equals the fragment's register bits; every non-empty cell equals the
    fragment's ``(row, col, block)``; the calculator leaves exactly the lanes the fragment does not
    cover empty. A sparse A cell (two compressed values from one group of four K-columns) lists
    the four dense columns: ``column_range`` of both values.
    """
    cells = decode(record)
    columns = record["columns"]
    f = fragment
    per = 2 if f.sparse else 1
    assert columns == [column_name(f, per * c, f.sparse) for c in range(f.num_values // per)], (f.name, columns)
    assert len(cells) == f.num_threads * len(columns), f"{f.name}: {len(cells)} cells, the layout fills {f.num_threads * len(columns)}"
    assert all(ln < f.num_threads for ln, _ in cells), f"{f.name}: the calculator fills lanes the layout leaves out"
    for (ln, c), want in cells.items():
        for v in range(per * c, per * c + per):
            row, col, blk = f.coords(ln, v)
            got = [(row, k, blk) for k in range(f.column_range(ln, v)[0], f.column_range(ln, v)[1] + 1)] \
                if f.sparse else [(row, col, blk)]
            assert got == want, f"{f.name} lane {ln} {columns[c]} value {v}: layout {got}, calculator {want}"


def operand(path: pathlib.Path, arch: str, inst: str, matrix: str, wave: int | None = None,
            extra: tuple[str, ...] = ()) -> dict[str, Any]:
    """Run the calculator for one operand and return its compact record."""
    args = ["-a", arch, "-i", inst, f"-{matrix}", "-M", "--csv", *extra]
    if wave is not None:
        args += ["-w", str(wave)]
    return encode(*parse_matrix_layout(run(path, *args)))


def waves(arch: str) -> tuple[int | None, ...]:
    return (None,) if arch.startswith("cdna") else (32, 64)


def record(path: pathlib.Path, arch: str, workers: int = 2) -> dict[str, Any]:
    """Every instruction of ``arch``: A, B, D for each wave size, with provenance."""
    insts = instructions(path, arch)
    jobs = [(inst, w, m) for inst in insts for w in waves(arch) for m in OPERANDS]
    with ThreadPoolExecutor(workers) as pool:
        results = list(pool.map(lambda j: operand(path, arch, j[0], j[2], j[1]), jobs))
    table: dict[str, Any] = {}
    for (inst, w, m), rec in zip(jobs, results):
        table.setdefault(inst, {}).setdefault(f"wave{w or 64}", {})[m] = rec
    return {
        "provenance": {
            "tool": "AMD Matrix Instruction Calculator (github.com/ROCm/amd_matrix_instruction_calculator)",
            "version": version(path),
            "arch": arch,
            "date": datetime.date.today().isoformat(),
            "command": f"python matrix_calculator.py -a {arch} -i <instruction> -<A|B|D> -M --csv"
                       + ("" if arch.startswith("cdna") else " -w <32|64>"),
            "instructions": len(insts),
            "encoding": "cells[lane][column] = row + rows*(col + cols*block); -1 empty; list = one of several",
        },
        "instructions": table,
    }


#: (arch, instruction) of the broadcast-modifier recordings: A under every legal CBSZ/ABID, B under BLGP 1-7
MODIFIER_CASES = [("cdna3", "v_mfma_f32_4x4x4_16b_f16"), ("cdna3", "v_mfma_f32_16x16x1_4b_f32"),
                  ("cdna3", "v_mfma_f32_32x32x1_2b_f32"), ("cdna3", "v_mfma_i32_16x16x4_4b_i8"),
                  ("cdna3", "v_mfma_f32_32x32x2_f32"), ("cdna3", "v_mfma_f64_16x16x4_f64"),
                  ("cdna2", "v_mfma_f32_32x32x8f16"), ("cdna1", "v_mfma_f32_4x4x2bf16"),
                  ("cdna2", "v_mfma_f32_16x16x4bf16_1k")]


def record_modifiers(path: pathlib.Path, workers: int = 2) -> dict[str, Any]:
    """A under every legal (cbsz, abid), B under every blgp 1..7, for :data:`MODIFIER_CASES`.

    Blocks per instruction come from the unmodified A's record (``dims[2]``); cbsz runs to log2 of it
    (f64 has no CBSZ). Every listed instruction takes BLGP.
    """
    jobs: list[tuple[str, str, str, tuple[str, ...]]] = []
    for arch, inst in MODIFIER_CASES:
        blocks = operand(path, arch, inst, "A")["dims"][2]
        for cbsz in range(1, blocks.bit_length() if "f64" not in inst else 1):
            jobs += [(arch, inst, "A", ("--cbsz", str(cbsz), "--abid", str(abid))) for abid in range(2 ** cbsz)]
        jobs += [(arch, inst, "B", ("--blgp", str(blgp))) for blgp in range(1, 8)]
    with ThreadPoolExecutor(workers) as pool:
        results = list(pool.map(lambda j: operand(path, j[0], j[1], j[2], None, j[3]), jobs))
    cases = [{"arch": a, "instruction": i, "operand": m, "modifiers": " ".join(x), "record": r}
             for (a, i, m, x), r in zip(jobs, results)]
    return {"provenance": {"tool": "AMD Matrix Instruction Calculator", "version": version(path),
                           "date": datetime.date.today().isoformat(),
                           "command": "python matrix_calculator.py -a <arch> -i <instruction> -<A|B> -M --csv "
                                      "--cbsz <c> --abid <a> | --blgp <b>"},
            "cases": cases}


def main(argv: list[str]) -> int:
    path = calculator_path()
    if path is None:
        print(f"set {ENV} to the path of AMD's matrix_calculator.py", file=sys.stderr)
        return 2
    DATA.mkdir(parents=True, exist_ok=True)
    if argv == ["modifiers"]:
        rec = record_modifiers(path)
        out = DATA / "calculator_modifiers.json"
        out.write_text(json.dumps(rec, separators=(",", ":")) + "\n")
        print(f"modifiers: {len(rec['cases'])} cases -> {out}")
        return 0
    for arch in argv or ARCHS:
        rec = record(path, arch)
        out = DATA / f"calculator_{arch}.json"
        text = json.dumps(rec, separators=(",", ":"))
        out.write_text(text + "\n")
        print(f"{arch}: {rec['provenance']['instructions']} instructions -> {out} ({len(text) // 1024} KiB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
