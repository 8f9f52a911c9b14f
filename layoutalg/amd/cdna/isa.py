"""The MFMA instructions of CDNA1-CDNA4, as the ISA reference guides list them.

Each CDNA generation's ISA guide ("AMD Instinct MI100 / MI200 / MI300 / CDNA4 Instruction Set
Architecture", chapter "Matrix Arithmetic Instructions") tables its ``v_mfma_*`` instructions with
the output type, the M x N x K shape of one block, the number of blocks and the input types. This
module writes those tables down as data (:data:`INSTRUCTIONS`); :mod:`layoutalg.amd.cdna.mfma`
turns each row into register maps. A row reads like the mnemonic it names::

    v_mfma_f32_32x32x8_f16   ->  D f32, M=32 N=32 K=8, 1 block, A and B f16
    v_mfma_f32_4x4x4_16b_f16 ->  D f32, M=4 N=4 K=4, 16 blocks (sixteen independent 4x4x4 products)

CDNA1/2 spell the same instructions without the underscore before the input type and without the
block tag (``v_mfma_f32_32x32x8f16``, ``v_mfma_f32_4x4x4f16``); CDNA2's ``*bf16_1k`` are CDNA3's
plain ``*_bf16``. Every row keeps its own generation's spelling; :func:`spellings` gives the
others, which name the same instruction.

    >>> row = INSTRUCTIONS["cdna3"]["v_mfma_f32_4x4x4_16b_f16"]
    >>> (row.m, row.n, row.k, row.blocks, row.a, row.out)
    (4, 4, 4, 16, 'f16', 'f32')
    >>> len(INSTRUCTIONS["cdna1"]), len(INSTRUCTIONS["cdna2"]), len(INSTRUCTIONS["cdna3"]), len(INSTRUCTIONS["cdna4"])
    (20, 27, 46, 68)

Scope: the dense ``v_mfma_*`` (with the scaled ``v_mfma_scale_*`` of CDNA4) and the 4:2 sparse
``v_smfmac_*`` of CDNA3 and CDNA4 (CDNA4 keeps CDNA3's and adds the double-K ones).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["MfmaInstruction", "INSTRUCTIONS", "spellings", "F8F6F4"]

#: The element formats of CDNA4's ``*_f8f6f4`` instructions, by the CBSZ (A) / BLGP (B) value that selects them.
F8F6F4 = ("fp8", "bf8", "fp6", "bf6", "fp4")


@dataclass(frozen=True)
class MfmaInstruction:
    """One ``v_mfma_*`` row of an ISA table: ``D[M x N] (out) += A[M x K] (a) * B[K x N] (b)``, per block.

    ``a`` / ``b`` are the element types of A and B (``"f8f6f4"`` where CBSZ / BLGP choose one of
    :data:`F8F6F4`); ``scaled`` marks CDNA4's ``v_mfma_scale_*`` (E8M0 scales for every 32 K-elements);
    ``sparse`` marks the 4:2 structured-sparse ``v_smfmac_*`` (A holds 2 of every 4 K-elements: its
    registers hold the compressed M x K/2 matrix; the compression index travels in SrcC).
    """

    name: str
    arch: str
    out: str
    a: str
    b: str
    m: int
    n: int
    k: int
    blocks: int = 1
    scaled: bool = False
    sparse: bool = False

    @property
    def shape(self) -> tuple[int, int, int]:
        """``(M, N, K)`` of one block."""
        return (self.m, self.n, self.k)


def _old(out: str, m: int, n: int, k: int, t: str, suffix: str = "") -> str:
    """CDNA1/2 spelling: ``v_mfma_f32_32x32x8f16``."""
    return f"v_mfma_{out}_{m}x{n}x{k}{t}{suffix}"


def _new(out: str, m: int, n: int, k: int, blocks: int, a: str, b: str | None = None) -> str:
    """CDNA3/4 spelling: ``v_mfma_f32_4x4x4_16b_f16``, ``v_mfma_f32_16x16x32_fp8_bf8``."""
    tag = f"_{blocks}b" if blocks > 1 else ""
    types = a if b is None else f"{a}_{b}"
    return f"v_mfma_{out}_{m}x{n}x{k}{tag}_{types}"


# (M, N, K, blocks) of the five shapes each input type comes in on CDNA1, K per input type
_CDNA1_SHAPES = {
    "f32": [(32, 32, 1, 2), (16, 16, 1, 4), (4, 4, 1, 16), (32, 32, 2, 1), (16, 16, 4, 1)],
    "f16": [(32, 32, 4, 2), (16, 16, 4, 4), (4, 4, 4, 16), (32, 32, 8, 1), (16, 16, 16, 1)],
    "i8": [(32, 32, 4, 2), (16, 16, 4, 4), (4, 4, 4, 16), (32, 32, 8, 1), (16, 16, 16, 1)],
    "bf16": [(32, 32, 2, 2), (16, 16, 2, 4), (4, 4, 2, 16), (32, 32, 4, 1), (16, 16, 8, 1)],
}
_BF16_1K = [(32, 32, 4, 2), (16, 16, 4, 4), (4, 4, 4, 16), (32, 32, 8, 1), (16, 16, 16, 1)]
_F64 = [(16, 16, 4, 1), (4, 4, 4, 4)]


def _out(t: str) -> str:
    return {"i8": "i32", "f64": "f64"}.get(t, "f32")


def _cdna1(arch: str) -> list[MfmaInstruction]:
    rows = []
    for t, shapes in _CDNA1_SHAPES.items():
        for m, n, k, b in shapes:
            rows.append(MfmaInstruction(_old(_out(t), m, n, k, t), arch, _out(t), t, t, m, n, k, b))
    return rows


def _cdna2() -> list[MfmaInstruction]:
    rows = _cdna1("cdna2")
    rows += [MfmaInstruction(_old("f32", m, n, k, "bf16", "_1k"), "cdna2", "f32", "bf16", "bf16", m, n, k, b)
             for m, n, k, b in _BF16_1K]
    rows += [MfmaInstruction(_old("f64", m, n, k, "f64"), "cdna2", "f64", "f64", "f64", m, n, k, b) for m, n, k, b in _F64]
    return rows


_FP8 = [("bf8", "bf8"), ("bf8", "fp8"), ("fp8", "bf8"), ("fp8", "fp8")]


def _cdna3(arch: str = "cdna3") -> list[MfmaInstruction]:
    def row(out: str, m: int, n: int, k: int, b: int, a: str, bt: str | None = None) -> MfmaInstruction:
        return MfmaInstruction(_new(out, m, n, k, b, a, bt), arch, out, a, bt or a, m, n, k, b)

    rows = []
    if arch == "cdna3":  # xf32 is CDNA3 only (CDNA4 removed it)
        rows += [row("f32", 16, 16, 8, 1, "xf32"), row("f32", 32, 32, 4, 1, "xf32")]
    rows += [row("f32", m, n, k, b, "f32") for m, n, k, b in _CDNA1_SHAPES["f32"]]
    rows += [row("f32", m, n, k, b, "f16") for m, n, k, b in _CDNA1_SHAPES["f16"]]
    rows += [row("i32", m, n, k, b, "i8") for m, n, k, b in [(32, 32, 4, 2), (16, 16, 4, 4), (4, 4, 4, 16),
                                                               (32, 32, 16, 1), (16, 16, 32, 1)]]
    rows += [row("f32", m, n, k, b, "bf16") for m, n, k, b in _BF16_1K]
    rows += [row("f64", m, n, k, b, "f64") for m, n, k, b in _F64]
    rows += [row("f32", m, n, k, 1, a, bt) for m, n, k in [(16, 16, 32), (32, 32, 16)] for a, bt in _FP8]
    return rows + (_smfmac(arch, _SMFMAC_CDNA3) if arch == "cdna3" else [])


def _smfmac(arch: str, shapes: list[tuple[str, str, int, int, int]]) -> list[MfmaInstruction]:
    """``v_smfmac_<out>_<M>x<N>x<K>_<types>`` rows; fp8/bf8 shapes come in the four A x B combinations."""
    rows = []
    for out, t, m, n, k in shapes:
        for a, b in (_FP8 if t == "f8" else [(t, t)]):
            types = a if a == b and t != "f8" else f"{a}_{b}"
            rows.append(MfmaInstruction(f"v_smfmac_{out}_{m}x{n}x{k}_{types}", arch, out, a, b, m, n, k, sparse=True))
    return rows


_SMFMAC_CDNA3 = [("f32", "f16", 16, 16, 32), ("f32", "f16", 32, 32, 16), ("f32", "bf16", 16, 16, 32),
                 ("f32", "bf16", 32, 32, 16), ("i32", "i8", 16, 16, 64), ("i32", "i8", 32, 32, 32),
                 ("f32", "f8", 16, 16, 64), ("f32", "f8", 32, 32, 32)]
_SMFMAC_CDNA4 = [("f32", "f16", 16, 16, 64), ("f32", "f16", 32, 32, 32), ("f32", "bf16", 16, 16, 64),
                 ("f32", "bf16", 32, 32, 32), ("i32", "i8", 16, 16, 128), ("i32", "i8", 32, 32, 64),
                 ("f32", "f8", 16, 16, 128), ("f32", "f8", 32, 32, 64)]


def _cdna4() -> list[MfmaInstruction]:
    rows = _cdna3("cdna4")
    rows += [MfmaInstruction(_new(out, m, n, k, 1, t), "cdna4", out, t, t, m, n, k)
             for out, t, shapes in [("f32", "f16", [(16, 16, 32), (32, 32, 16)]), ("f32", "bf16", [(16, 16, 32), (32, 32, 16)]),
                                    ("i32", "i8", [(16, 16, 64), (32, 32, 32)])]
             for m, n, k in shapes]
    for m, n, k in [(16, 16, 128), (32, 32, 64)]:
        rows.append(MfmaInstruction(f"v_mfma_f32_{m}x{n}x{k}_f8f6f4", "cdna4", "f32", "f8f6f4", "f8f6f4", m, n, k))
        rows.append(MfmaInstruction(f"v_mfma_scale_f32_{m}x{n}x{k}_f8f6f4", "cdna4", "f32", "f8f6f4", "f8f6f4", m, n, k,
                                    scaled=True))
    return rows + _smfmac("cdna4", _SMFMAC_CDNA3 + _SMFMAC_CDNA4)


#: ``INSTRUCTIONS[arch][mnemonic]``: every MFMA and SMFMAC of each CDNA generation, in the ISA's spelling.
INSTRUCTIONS: dict[str, dict[str, MfmaInstruction]] = {
    arch: {r.name: r for r in rows}
    for arch, rows in (("cdna1", _cdna1("cdna1")), ("cdna2", _cdna2()), ("cdna3", _cdna3()), ("cdna4", _cdna4()))
}


def spellings(row: MfmaInstruction) -> tuple[str, ...]:
    """The mnemonics naming ``row``'s instruction: its own and the other generations' (CDNA1/2 or CDNA3/4 style).

    Lookups ignore case and underscores (:func:`layoutalg.amd.common.name_key`), so CDNA1's
    untagged ``v_mfma_f32_4x4x4f16`` also covers ``v_mfma_f32_4x4x4_f16``.

    >>> spellings(INSTRUCTIONS["cdna1"]["v_mfma_f32_4x4x4f16"])
    ('v_mfma_f32_4x4x4f16', 'v_mfma_f32_4x4x4_16b_f16')
    """
    out: list[str] = [row.name]
    t = row.a
    if row.a == row.b and t != "f8f6f4" and not row.scaled and not row.sparse:
        # CDNA2's bf16 "_1k" instructions are CDNA3's bf16 ones; CDNA1/2's plain bf16 have no CDNA3 name
        is_1k = t == "bf16" and (row.arch in ("cdna3", "cdna4") or row.name.endswith("_1k"))
        if t != "bf16" or is_1k:
            out.append(_new(row.out, row.m, row.n, row.k, row.blocks, t))
        out.append(_old(row.out, row.m, row.n, row.k, t, "_1k" if is_1k else ""))
    return tuple(dict.fromkeys(out))
