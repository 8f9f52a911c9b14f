"""A ttgir module read by a grammar: alias definitions, module attributes, source locations and the ops.

:func:`read_ttgir` reads the text Triton prints (``compiled.asm["ttgir"]``) line by line with the
tokenizer and grammar of :mod:`layoutalg.kernel.mlir`; nothing is evaluated. Alias definitions
(``#blocked = #ttg.blocked<...>``, ``#loc3 = loc("k.py":9:15)``) are resolved, layout attributes
read into :class:`~layoutalg.kernel.layouts.KernelLayout`, module attributes (``ttg.num-warps``,
``ttg.threads-per-warp``, ``ttg.target``) kept, and every op that moves data listed as an
:class:`Op` with its types and its location.

    >>> m = read_ttgir('''
    ... #blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
    ... #shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>
    ... #smem = #ttg.shared_memory
    ... #loc1 = loc("k.py":7:12)
    ... module attributes {"ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
    ...   tt.func public @k(%x: tensor<64x64xf16, #blocked>) {
    ...     %m = ttg.local_alloc %x : (tensor<64x64xf16, #blocked>) -> !ttg.memdesc<64x64xf16, #shared, #smem> loc(#loc2)
    ...     tt.return
    ...   }
    ... }
    ... #loc2 = loc("m"(#loc1))
    ... ''')
    >>> m.num_warps, m.target, m.ops[0].name, m.ops[0].location
    (4, 'cuda:90', 'ttg.local_alloc', 'k.py:7:12')
    >>> m.ops[0].operands[0].encoding.gluon.source
    'gl.BlockedLayout(size_per_thread=[1, 8], threads_per_warp=[4, 8], warps_per_cta=[4, 1], order=[1, 0])'
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from ..errors import LayoutError
from .layouts import MEMORY_SPACES, KernelLayout, read_layout
from .mlir import AliasRef, Attr, Cursor, MlirType, Token, parse_type_at, parse_value, tokenize

__all__ = ["DATA_OPS", "Op", "TtgirModule", "read_ttgir"]

#: ops that move data, by what they move
DATA_OPS: dict[str, str] = {
    "ttg.local_alloc": "registers -> shared (allocation)",
    "ttg.local_store": "registers -> shared",
    "ttg.local_load": "shared -> registers",
    "ttg.async_copy_global_to_local": "global -> shared (cp.async)",
    "ttng.async_tma_copy_global_to_local": "global -> shared (TMA)",
    "ttng.async_tma_copy_local_to_global": "shared -> global (TMA)",
    "ttng.async_tma_gather": "global -> shared (TMA gather)",
    "ttng.async_tma_scatter": "shared -> global (TMA scatter)",
    "ttng.async_tma_reduce": "shared -> global (TMA reduce)",
    "tt.descriptor_load": "global -> registers (TMA descriptor)",
    "tt.descriptor_store": "registers -> global (TMA descriptor)",
    "tt.make_tensor_descriptor": "TMA descriptor",
    "ttng.warp_group_dot": "wgmma (shared/registers -> registers)",
    "ttng.tc_gen5_mma": "tcgen05.mma (shared/tensor memory -> tensor memory)",
    "ttng.tc_gen5_mma_scaled": "tcgen05.mma block-scaled",
    "ttng.tmem_alloc": "tensor memory allocation",
    "ttng.tmem_load": "tensor memory -> registers (tcgen05.ld)",
    "ttng.tmem_store": "registers -> tensor memory (tcgen05.st)",
    "ttng.tmem_copy": "shared -> tensor memory (tcgen05.cp)",
    "ttg.convert_layout": "registers -> registers (layout conversion)",
    "tt.dot": "mma (registers -> registers)",
    "tt.dot_scaled": "block-scaled mma (registers -> registers)",
    "tt.load": "global -> registers",
    "tt.store": "registers -> global",
    # AMD (Triton's amdg dialect)
    "amdg.buffer_load": "global -> registers (buffer load)",
    "amdg.buffer_store": "registers -> global (buffer store)",
    "amdg.buffer_load_to_local": "global -> LDS (buffer load to LDS)",
    "amdg.buffer_atomic_rmw": "registers <-> global (buffer atomic)",
    "amdg.buffer_atomic_cas": "registers <-> global (buffer atomic compare-and-swap)",
    "amdg.masked_load": "global -> registers (masked load)",
    "amdg.masked_store": "registers -> global (masked store)",
    "amdg.in_thread_transpose": "registers -> registers (in-thread transpose before an LDS store)",
    "amdg.local_load_packed_tranposed": "LDS -> registers (transposing packed load)",
    "amdg.bypass_lds_load": "global -> registers (LDS bypassed)",
    "amdg.extract_slice": "registers -> registers (a slice)",
    "amdg.concat": "registers -> registers (concatenation)",
    "amdg.async_tdm_copy_global_to_local": "global -> LDS (tensor data mover)",
    "amdg.async_tdm_copy_local_to_global": "LDS -> global (tensor data mover)",
    "amdg.upcast_mxfp": "registers -> registers (mx upcast)",
}


#: the names of Triton 3.6's ops (and attributes) in the dialects a ttgir module holds (tt, ttg, ttng, amdg, gluon), read
#: from its compiled dialects; an op of these dialects not named here is unknown to the reader
KNOWN_NAMES = frozenset((  # noqa: SIM905 - a word list kept as text
    "amdg.amdgcn amdg.arrive_barrier amdg.async_copy_mbarrier_arrive amdg.async_tdm_copy_global_to_local "
    "amdg.async_tdm_copy_local_to_global amdg.async_tdm_wait amdg.async_wait amdg.buffer_atomic_cas "
    "amdg.buffer_atomic_rmw amdg.buffer_load amdg.buffer_load_to_local amdg.buffer_store amdg.bypass_lds_load "
    "amdg.concat amdg.cond_barrier amdg.decomposed_dot_scaled_source amdg.extract_slice amdg.in_thread_transpose "
    "amdg.in_thread_tter_wait amdg.init_barrier amdg.instruction_sched_hint amdg.local_load_amdg "
    "amdg.local_load_packed_tranposed amdg.masked_load amdg.masked_store amdg.memory_counter_wait "
    "amdg.scaled_upcast_fp4 amdg.scaled_upcast_fp8 amdg.upcast_mxfp amdg.upcast_mxfpip_fast_fdividefrocdl "
    "amdg.use_padded_scratch_shmem amdg.wait_barrier gluon.amd gluon.auto_encoding gluon.coalesced_encoding "
    "gluon.language gluon.nvidia gluon.set_auto_layout gluon.set_auto_ltt tt.addptr tt.advance tt.assert "
    "tt.atomic_cas tt.atomic_rmw tt.bitcast tt.broadcast tt.c3 tt.call tt.cat tt.clampf tt.constancy tt.contiguity "
    "tt.d3 tt.descriptor_gase tt.descriptor_gather tt.descriptor_load tt.descriptor_reduce tt.descriptor_scatter "
    "tt.descriptor_sctt tt.descriptor_st tt.descriptor_store tt.disallow_acc_multi_buffer tt.divisibility tt.dot "
    "tt.dot_scaled tt.elementwise_inline_asm tt.expand_dims tt.extern_elementwise tt.f3 tt.flatten tt.fp_to_fp "
    "tt.func tt.gather tt.get_num_programs tt.get_program_id tt.get_program_iescriptor_gather__triton_hip_fabtx "
    "tt.histogram tt.int_to_ptr tt.j3 tt.join tt.l3 tt.latency tt.load tt.loop_schedule tt.loop_unroll_factor "
    "tt.make_range tt.make_tensor_descriptor tt.make_tensor_ptr tt.map_elementwise tt.mulhiui tt.num_stages "
    "tt.nv_tma_desc tt.pointer_range tt.precise_divf tt.precise_sqrt tt.print tt.ptr tt.ptr_to_int tt.reduce "
    "tt.reshape tt.return tt.s3 tt.scan tt.scheduled_max_stage tt.self_latency tt.splat tt.split tt.store "
    "tt.tensordesc tt.trans tt.unsplat tt.warp_specialiasync_tma_reducellvm tt.warp_specialize ttg.always ttg.amdg "
    "ttg.async ttg.async_commit_group ttg.async_commitnvws ttg.async_copy_g_gen5_mma_scalednd_segment_sizesnvws "
    "ttg.async_copy_global_to_local ttg.async_wait ttg.convert_layout ttg.dot_op ttg.fp4_to_fp "
    "ttg.global_scratch_alloc ttg.global_scratch_memory_alignment ttg.global_scratch_memory_offset "
    "ttg.global_scratch_memory_size ttg.global_scratdesc_reinterpret ttg.local_alloc ttg.local_barrier "
    "ttg.local_dealloc ttg.local_load ttg.local_store ttg.mask ttg.maxnreg ttg.memdesc ttg.memdesc_index "
    "ttg.memdesc_reintensor_memory_eng ttg.memdesc_reinterpret ttg.memdesc_reshape ttg.memdesc_reshttng "
    "ttg.memdesc_subslice ttg.memdesc_trans ttg.memdesc_trantensor_memory_scttng ttg.must ttg.num ttg.partition "
    "ttg.predicate_stage ttg.profile_scratch_memory_alignment ttg.profile_scratch_memory_size ttg.shared "
    "ttg.shared_memory ttg.target ttg.tensor_memory_size ttg.threads ttg.total ttg.warp_return ttg.warp_special "
    "ttg.warp_specialize ttg.warp_yield ttng.arrive_barrier ttng.async_copy_mbarrier_arrive "
    "ttng.async_tma_copy_global_to_local ttng.async_tma_copy_local_to_global ttng.async_tma_gather "
    "ttng.async_tma_reduce ttng.async_tma_rt ttng.async_tma_scatter ttng.async_tma_store_wait ttng.barrier_expect "
    "ttng.cluster_arrive ttng.cluster_arrttng ttng.cluster_wait ttng.fence_async_shared ttng.fence_asyncttng "
    "ttng.init_barrier ttng.inval_barrier ttng.reinterpret_tensor_descriptor ttng.tc_gen5_commit "
    "ttng.tc_gen5_comon_hip_fast_expfnvvm ttng.tc_gen5_mma ttng.tc_gen5_mma_scaled ttng.tensor_memory "
    "ttng.tensormap_create ttng.tensormap_fenceproxy_acquire ttng.tmem_alloc ttng.tmem_copy ttng.tmem_load "
    "ttng.tmem_store ttng.tmem_subslice ttng.two ttng.wait_barrier ttng.warp_group_dot ttng.warp_group_dot_wait "
).split())
#: the dialects whose ops the reader knows by name
KNOWN_DIALECTS = ("tt.", "ttg.", "ttng.", "amdg.", "gluon.")


@dataclass
class Op:
    """One op of the module: ``name`` (``ttg.local_load``), ``results`` (``%x`` names), ``line`` in the ttgir,
    ``location`` (``file:line:col`` of the kernel source, or None), ``operands`` / ``result_types`` (the
    types after ``:``, encodings read into :class:`KernelLayout`), ``text`` (the line)."""

    name: str
    line: int
    text: str
    results: list[str] = field(default_factory=list)
    operands: list[MlirType] = field(default_factory=list)
    result_types: list[MlirType] = field(default_factory=list)
    location: str | None = None
    loc_name: str | None = None

    @property
    def types(self) -> list[MlirType]:
        return self.operands + self.result_types


@dataclass
class TtgirModule:
    """A read ttgir module: its module attributes, layouts by alias, and the ops that move data."""

    attributes: dict[str, Any]
    layouts: dict[str, KernelLayout]
    ops: list[Op]
    functions: list[str] = field(default_factory=list)
    #: (line, column, name) of each op of the tt / ttg / ttng / amdg dialects the reader does not know
    unknown_ops: list[tuple[int, int, str]] = field(default_factory=list)

    @property
    def num_warps(self) -> int:
        return int(self.attributes.get("ttg.num-warps", 4))

    @property
    def threads_per_warp(self) -> int:
        return int(self.attributes.get("ttg.threads-per-warp", 32))

    @property
    def num_ctas(self) -> int:
        return int(self.attributes.get("ttg.num-ctas", 1))

    @property
    def target(self) -> str | None:
        t = self.attributes.get("ttg.target")
        return str(t) if t is not None else None


# --------------------------------------------------------------------------------------- locations
def _loc_body(c: Cursor) -> Any:
    """The inside of ``loc(...)``: ("file", f, l, col) | ("name", s, inner) | ("ref", n) | ("unknown",) |
    ("callsite", a, b) | ("fused", [..])."""
    t = c.next()
    if t.kind == "str":
        if c.accept(":"):
            ln = c.next()
            c.expect(":")
            col = c.next()
            while c.peek() is not None and not c.at(")") and not c.at(",") and not c.at("]") and not c.at("at"):
                c.next()  # a range's end ("to l:c") is not needed
            return ("file", t.text[1:-1], ln.text, col.text)
        if c.accept("("):
            inner = _loc_body(c)
            c.expect(")")
            return ("name", t.text[1:-1], inner)
        return ("name", t.text[1:-1], ("unknown",))
    if t.kind == "hash":
        return ("ref", t.text[1:])
    if t.text == "unknown":
        return ("unknown",)
    if t.text == "callsite":
        c.expect("(")
        a = _loc_body(c)
        c.expect("at")
        b = _loc_body(c)
        c.expect(")")
        return ("callsite", a, b)
    if t.text == "fused":
        if c.accept("<"):
            parse_value(c)
            c.expect(">")
        c.expect("[")
        items = [_loc_body(c)]
        while c.accept(","):
            items.append(_loc_body(c))
        c.expect("]")
        return ("fused", items)
    raise c.error("a location", t)


def _resolve_loc(loc: Any, table: dict[str, Any], depth: int = 0) -> tuple[str | None, str | None]:
    """(file:line:col, the innermost name) of a location tree."""
    if depth > 64:
        raise LayoutError("locations refer to each other in a circle")
    kind = loc[0]
    if kind == "file":
        return f"{loc[1]}:{loc[2]}:{loc[3]}", None
    if kind == "name":
        where, name = _resolve_loc(loc[2], table, depth + 1)
        return where, name or loc[1]
    if kind == "ref":
        if loc[1] not in table:
            return None, None
        return _resolve_loc(table[loc[1]], table, depth + 1)
    if kind == "callsite":
        return _resolve_loc(loc[1], table, depth + 1)
    if kind == "fused":
        for item in loc[1]:
            where, name = _resolve_loc(item, table, depth + 1)
            if where:
                return where, name
    return None, None


# --------------------------------------------------------------------------------------- the reader
def _resolve(v: Any, defs: dict[str, Any], stack: tuple[str, ...] = ()) -> Any:
    """Aliases replaced by their definitions, recursively."""
    if isinstance(v, AliasRef):
        if v.name in stack:
            chain = " -> ".join("#" + s for s in stack + (v.name,))
            raise LayoutError(f"line {v.line}, column {v.col}: #{v.name} is defined through itself ({chain})")
        if v.name not in defs:
            return v
        return _resolve(defs[v.name][0], defs, stack + (v.name,))
    if isinstance(v, Attr):
        params = {k: _resolve(x, defs, stack) for k, x in v.params.items()}
        return replace(v, params=params)
    if isinstance(v, list):
        return [_resolve(x, defs, stack) for x in v]
    if isinstance(v, MlirType):
        return replace(v, element=_resolve(v.element, defs, stack), encoding=_resolve(v.encoding, defs, stack),
                       space=_resolve(v.space, defs, stack))
    return v


class _Reader:
    def __init__(self, text: str, strict: bool = False):
        self.strict = strict
        self.unknown: list[tuple[int, int, str]] = []
        self.lines = text.splitlines()
        self.defs: dict[str, tuple[Any, int]] = {}   # alias -> (value, line)
        self.locs: dict[str, Any] = {}
        self.attributes: dict[str, Any] = {}
        self.pending: list[tuple[int, list[Token]]] = []
        self.functions: list[str] = []
        self.layouts: dict[str, KernelLayout] = {}
        self.by_text: dict[str, KernelLayout] = {}
        self.saw_module = False

    def read(self) -> TtgirModule:
        opened: list[Token] = []
        for n, line in enumerate(self.lines, 1):
            s = line.strip()
            if not s or s.startswith("//"):
                continue
            toks = tokenize(line, n)
            for t in toks:
                if t.text == "{":
                    opened.append(t)
                elif t.text == "}":
                    if not opened:
                        raise LayoutError(f"line {t.line}, column {t.col}: '}}' closes nothing")
                    opened.pop()
            if not toks:
                continue
            if toks[0].kind == "hash" and len(toks) > 1 and toks[1].text == "=":
                self._definition(toks, n)
            elif toks[0].text == "module":
                self._module(toks)
            else:
                self.pending.append((n, toks))
        if opened:
            t = opened[-1]
            raise LayoutError(f"line {t.line}, column {t.col}: this '{{' is never closed: the text ends at line "
                              f"{len(self.lines)} (truncated MLIR?)")
        for name, (value, _) in self.defs.items():
            v = _resolve(value, self.defs, (name,))
            if isinstance(v, Attr) and v.name not in MEMORY_SPACES:
                kl = read_layout(v, name)
                self.layouts[name] = kl
                self.by_text.setdefault(v.text, kl)
        if not self.saw_module:
            raise LayoutError(f"line 1, column 1: no 'module' in the text (read to line {len(self.lines)}): "
                              "not ttgir, or truncated")
        ops = [op for op in (self._op(n, toks) for n, toks in self.pending) if op is not None]
        return TtgirModule(self.attributes, self.layouts, ops, self.functions, self.unknown)

    def _definition(self, toks: list[Token], n: int) -> None:
        name = toks[0].text[1:]
        c = Cursor(toks[2:], n, toks[-1].end)
        if c.at("loc") and c.peek(1) is not None and c.peek(1).text == "(":  # type: ignore[union-attr]
            c.next()
            c.next()
            self.locs[name] = _loc_body(c)
            c.expect(")")
            return
        value = parse_value(c)
        if c.peek() is not None:
            t = c.peek()
            raise LayoutError(f"line {t.line}, column {t.col}: unexpected {t.text!r} after #{name}'s value")  # type: ignore[union-attr]
        if isinstance(value, Attr) and value.name not in MEMORY_SPACES and not value.name.startswith(("ttg.", "ttng.")):
            raise LayoutError(f"line {value.line}, column {value.col}: unknown attribute #{value.name}")
        self.defs[name] = (value, n)

    def _module(self, toks: list[Token]) -> None:
        self.saw_module = True
        c = Cursor(toks, toks[0].line, toks[-1].end)
        c.next()
        if c.peek() is not None and c.peek().kind == "at":  # type: ignore[union-attr]
            c.next()
        if c.accept("attributes"):
            c.expect("{")
            c.i -= 1
            value = parse_value(c)
            if isinstance(value, dict):
                self.attributes.update(value)

    def _layout_of(self, v: Any) -> Any:
        v = _resolve(v, self.defs)
        if isinstance(v, AliasRef):
            raise LayoutError(f"line {v.line}, column {v.col}: #{v.name} is used but never defined")
        if isinstance(v, Attr):
            if v.name in MEMORY_SPACES:
                return MEMORY_SPACES[v.name]
            kl = self.by_text.get(v.text)
            if kl is None:
                kl = read_layout(v)
                self.by_text[v.text] = kl
            return kl
        return v

    def _typed(self, t: MlirType) -> MlirType:
        enc = self._layout_of(t.encoding) if t.encoding is not None else None
        space = self._layout_of(t.space) if t.space is not None else None
        elem = self._typed(t.element) if isinstance(t.element, MlirType) else t.element
        return replace(t, encoding=enc, space=space, element=elem)

    def _op(self, n: int, toks: list[Token]) -> Op | None:
        i = 0
        results: list[str] = []
        while i < len(toks) and toks[i].kind == "pct":
            results.append(toks[i].text)
            i += 1
            if i < len(toks) and toks[i].text == ":" and i + 1 < len(toks) and toks[i + 1].kind == "num":
                i += 2
            if i < len(toks) and toks[i].text == ",":
                i += 1
        if results:
            if i >= len(toks) or toks[i].text != "=":
                return None
            i += 1
        if i >= len(toks):
            return None
        head = toks[i]
        if head.kind == "id" and head.text == "tt.func":
            for t in toks[i:]:
                if t.kind == "at":
                    self.functions.append(t.text[1:])
                    break
            return None
        name = head.text[1:-1] if head.kind == "str" else head.text
        if name.startswith(KNOWN_DIALECTS) and name not in KNOWN_NAMES and ".".join(name.split(".")[:2]) not in KNOWN_NAMES:
            if self.strict:
                raise LayoutError(f"line {n}, column {head.col}: unknown op {name} (not an op of Triton 3.6's "
                                  f"{name.split('.')[0]} dialect)")
            self.unknown.append((n, head.col, name))
        if name not in DATA_OPS:
            return None
        op = Op(name, n, self.lines[n - 1].strip(), results)
        # the trailing loc(...)
        end = len(toks)
        for j in range(len(toks) - 1, i, -1):
            if toks[j].text == "loc" and j + 1 < len(toks) and toks[j + 1].text == "(":
                c = Cursor(toks[j + 2:], n, toks[-1].end)
                loc = _loc_body(c)
                c.expect(")")
                op.location, op.loc_name = _resolve_loc(loc, self.locs)
                end = j
                break
        # the types after the top-level ':'
        depth, colon = 0, None
        for j in range(i + 1, end):
            text = toks[j].text
            if text in ("(", "[", "{", "<"):
                depth += 1
            elif text in (")", "]", "}", ">"):
                depth -= 1
            elif text == ":" and depth == 0:
                colon = j
                break
        if colon is None:
            return op
        c = Cursor(toks[colon + 1:end], n, toks[end - 1].end)
        out = op.operands
        while c.peek() is not None:
            if c.accept("->"):
                out = op.result_types
                continue
            if c.accept(",") or c.accept("*") or c.accept(")") or c.accept("[") or c.accept("]"):
                continue  # amdg.buffer_* print their offsets' type in brackets: <f16>[tensor<...>]
            if c.at("(") and not (c.peek(1) is not None and c.peek(1).text == ")"):  # type: ignore[union-attr]
                c.next()
                continue
            if c.accept("("):
                c.expect(")")
                continue
            ty = parse_type_at(c)
            if ty.kind == "memdesc" and not ty.shape and ty.encoding is None:  # amdg prints a scalar pointer as <f16>
                ty = replace(ty, kind="ptr")
            out.append(self._typed(ty))
        return op


def read_ttgir(text: str, strict: bool = False) -> TtgirModule:
    """Read ttgir (MLIR text as Triton prints it) into a :class:`TtgirModule`. Bad input -- an unclosed
    brace (truncated text), an unknown attribute, a layout missing a field, a malformed type -- is a
    LayoutError naming the line and column. An op of Triton's dialects the reader does not know is listed in
    ``unknown_ops`` (``strict``: a LayoutError naming its line and column)."""
    if not isinstance(text, str):
        raise LayoutError(f"read_ttgir: expected MLIR text, got {type(text).__name__}")
    if not isinstance(strict, bool):
        raise LayoutError(f"read_ttgir: strict is True or False, got {strict!r}")
    return _Reader(text, strict).read()
