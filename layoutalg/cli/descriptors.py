"""``layoutalg desc`` (wgmma / tcgen05 shared-memory matrix descriptors) and ``layoutalg tma`` (TMA tensor maps).
"""

from __future__ import annotations

import argparse
from typing import Any

from ..errors import LayoutError
from .common import command, format_table, need, parse_coord, parse_layout, parse_tile, parse_word, refuse_unused


@command
def cmd_desc(args: argparse.Namespace) -> int:
    if args.target == "sm_103":
        word = parse_word(args.source) if args.source is not None else None
        args.target = "sm_100"  # the same descriptor format; sm_103 adds the absolute LBO reading of a word
        if word is not None:
            return _desc_word_sm103(args, word)
    if args.target == "sm_100" and (args.source is None or parse_word(args.source) is None) and not args.instruction:
        return _desc_umma(args)
    if args.source is None:
        return _desc_tile(args)
    word = parse_word(args.source)
    if word is not None:
        refuse_unused(args, "desc", "when decoding a descriptor word (the word holds them, or they need a layout)",
                       {"swizzle": "--swizzle", "tile": "--tile", "operand": "--operand",
                        "instruction": "--instruction", "start": "--start"})
        return _desc_word(args, word)
    refuse_unused(args, "desc", "with a layout (it builds a canonical tile when no layout is given)",
                   {"tile": "--tile"})
    layout = parse_layout(args.source)
    if args.dtype is None:
        raise LayoutError("desc: --dtype is needed to derive a descriptor from a layout (its elements' type)")
    return _desc_derive(args, layout, args.dtype, args.major, args.swizzle, None)


def _desc_tile(args: argparse.Namespace) -> int:
    """desc --major/--swizzle/--dtype/--tile: a canonical tile built from the atom."""
    wg = need("layoutalg.nvidia.hopper.wgmma", "desc")
    mn, k = parse_tile(args.tile or "64x64")
    major, swizzle, dtype = args.major or "K", 128 if args.swizzle is None else args.swizzle, args.dtype or "bf16"
    if args.instruction:
        try:
            wg.parse_instruction(args.instruction, dtype)
        except LayoutError as e:
            raise LayoutError(f"desc: --instruction {args.instruction}: {e}") from None
    tile = wg.tile(major, swizzle, dtype, (mn, k))
    print(f"tile      : {major}-major, {swizzle}B swizzle, {wg.dtype_name(dtype)}, {mn}x{k} (MN x K)")
    return _desc_derive(args, tile, dtype, major, swizzle, mn)


def _desc_derive(args: argparse.Namespace, layout: Any, dtype: str, major: Any, swizzle: Any, mn: int | None) -> int:
    """The descriptor of ``layout`` (when it is one canonical block) and of each k-block of the instruction."""
    import warnings

    wg = need("layoutalg.nvidia.hopper.wgmma", "desc")
    bits = wg.dtype_bits(dtype)
    operand = args.operand or "A"
    start = args.start or 0
    if args.instruction:
        try:  # a bad --instruction is an error before anything is printed
            wg.parse_instruction(args.instruction, dtype)
        except LayoutError as e:
            raise LayoutError(f"desc: --instruction {args.instruction}: {e}") from None
    print(f"layout    : {layout}")
    whole: LayoutError | None = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            d = wg.descriptor_from_layout(layout, dtype, major=major, swizzle=swizzle, start_address=start,
                                          target=args.target)
        except LayoutError as e:
            whole = e
    if whole is None:
        p = d.params
        lbo = "unused (encoded 1)" if p.lbo_bytes is None else f"{p.lbo_bytes} B"
        print(f"canonical : {p.major}-major, {p.swizzle}B swizzle, T={p.T} m={p.m} k={p.k} LBO={lbo} SBO={p.sbo_bytes} B")
        print(d.descriptor.describe())
        for note in d.notes:
            print(f"note      : {note}")
        for w in caught:
            print(f"warning   : {w.message}")
    else:
        print(f"whole tile: not one canonical block ({whole}); per k-block:")
    if mn is None:
        f_rows = int(layout[0].size()) if len(layout) == 2 else 0
        mn = f_rows
    K = 256 // bits
    instr = args.instruction or f"m64n{mn if operand == 'B' and 8 <= mn <= 256 and mn % 8 == 0 else 128}k{K}"
    try:
        blocks = wg.k_block_descriptors(layout, dtype, instr, operand=operand, major=major, swizzle=swizzle,
                                        start_address=start, mn_block=None)
    except LayoutError as e:
        if whole is not None:
            raise LayoutError(f"desc: {layout} is not a canonical wgmma operand as a whole ({whole}) nor in "
                              f"{instr} k-blocks ({e})") from None
        if args.instruction:
            raise LayoutError(f"desc: {layout} is one canonical block, but not in {instr} operand {operand} "
                              f"k-blocks: {e}") from None
        print(f"\n{instr} operand {operand}: no k-blocks ({e})")
        return 1  # the tile cannot be an operand of the instruction: a failure
    print(f"\n{instr} operand {operand}: {len(blocks)} slice(s)")
    rows = [
        {
            "mn": b.mn_block,
            "k": b.k_block,
            "offset B": b.offset_bytes,
            "start": f"{b.descriptor.start_address:#x}",
            "start>>4": b.descriptor.start_encoded,
            "word": f"{_target_word(b.descriptor, args.target):#018x}",
        }
        for b in blocks
    ]
    print(format_table(rows, ["mn", "k", "offset B", "start", "start>>4", "word"]))
    return 0


def _target_word(d: Any, target: str) -> int:
    """The word of an sm_90 descriptor ``d``, or of the tcgen05 descriptor with its fields (sm_100)."""
    if target == "sm_100" and d.target != "sm_100":
        dm = need("layoutalg.nvidia.blackwell.descriptor", "desc")
        d = dm.Tcgen05Descriptor(d.start_address, d.leading_byte_offset, d.stride_byte_offset, d.base_offset, d.swizzle)
    return int(d.encode())


def _desc_word(args: argparse.Namespace, word: int) -> int:
    """desc WORD: the fields of a descriptor word, its swizzle mode and the canonical layout it implies."""
    dm = need("layoutalg.nvidia.blackwell.descriptor", "desc")
    wg = need("layoutalg.nvidia.hopper.wgmma", "desc")
    cls = dm.Tcgen05Descriptor if args.target == "sm_100" else dm.MatrixDescriptor
    d = cls.decode(word)
    print(d.describe())
    if d.swizzle == "128B_base32B":
        print("swizzle   : 128B with 32-byte atomicity (tcgen05 only); no canonical layout for it in layoutalg")
        return 0
    sw = wg.canonical_swizzle(d.swizzle)
    print(f"swizzle   : {'none (interleave, 16-byte core matrices)' if d.swizzle == 0 else f'{d.swizzle}B'}: "
          f"{sw.ptx} on byte addresses" + (f", pattern repeats every {d.repeat_bytes} B" if d.swizzle else "")
          + (f"; base offset {d.base_offset} (pattern starts {d.base_offset * 128} B into a repeat)" if d.base_offset else ""))
    majors = [args.major.upper() if args.major.upper() == "K" else "MN"] if args.major else ["K", "MN"]
    dtype = args.dtype
    for major in majors:
        uses_lbo = not (major == "K" and d.swizzle)
        if dtype is None:
            form = wg.canonical_layout(major, d.swizzle)
            vals = (f"LBO = {d.leading_byte_offset} B, " if uses_lbo else "LBO unused, ") + f"SBO = {d.stride_byte_offset} B"
            print(f"{major + '-major':9s} : {form.ptx}  with {vals} (strides in elements = bytes / sizeof; give --dtype)")
            continue
        nb = wg.dtype_bits(dtype) // 8
        for name, b in (("LBO", d.leading_byte_offset if uses_lbo else 0), ("SBO", d.stride_byte_offset)):
            if b % nb:
                raise LayoutError(f"desc: {name} = {b} B is not a whole number of {wg.dtype_name(dtype)} elements")
        lbo = d.leading_byte_offset // nb if uses_lbo else None
        sbo = d.stride_byte_offset // nb
        if (lbo is not None and lbo <= 0) or sbo <= 0:
            print(f"{major + '-major':9s} : LBO/SBO of 0 describe no {major}-major canonical layout")
            continue
        form = wg.canonical_layout(major, d.swizzle, dtype, lbo=lbo, sbo=sbo)
        print(f"{major + '-major':9s} : {form}   ({wg.dtype_name(dtype)}; m, k: the tile's extent in core matrices)")
    return 0


def _desc_word_sm103(args: argparse.Namespace, word: int) -> int:
    """desc WORD --target sm_103: the tcgen05 fields, and bit 52 (lbo_mode) read as sm_103a reads it: with
    lbo_mode 1 the LBO field (bits 16-29, >> 4) is the *absolute* shared-memory start address of the next
    K block -- what CuTe's SM103 ULTRA atoms (K = 96) put there (``leading_byte_offset_ = start_address_``
    of the next k-block's descriptor)."""
    dm = need("layoutalg.nvidia.blackwell.descriptor", "desc")
    d = dm.Tcgen05Descriptor.decode(word)
    if not d.lbo_mode:
        print("lbo_mode  : 0 (LBO is a byte offset relative to the start address, as on sm_100)")
        return _desc_word(args, word)
    refuse_unused(args, "desc", "when decoding a descriptor word (the word holds them, or they need a layout)",
                   {"swizzle": "--swizzle", "tile": "--tile", "operand": "--operand",
                    "instruction": "--instruction", "start": "--start"})
    print(d.describe())
    nxt = d.leading_byte_offset
    print(f"lbo_mode  : 1 (absolute, sm_103a): the LBO field holds the start address of the next K block, "
          f"{nxt:#07x} ({nxt} B); this block starts at {d.start_address:#07x}, "
          f"{nxt - d.start_address:+d} B from it")
    if d.swizzle != "128B_base32B":
        wg = need("layoutalg.nvidia.hopper.wgmma", "desc")
        sw = wg.canonical_swizzle(d.swizzle)
        print(f"swizzle   : {'none' if d.swizzle == 0 else f'{d.swizzle}B'}: {sw.ptx} on byte addresses; "
              f"SBO = {d.stride_byte_offset} B")
    print("(CuTe 4.2's SM103 mma_unpack writes such words; transcribed, not run on sm_103)")
    return 0


def _desc_umma(args: argparse.Namespace) -> int:
    """desc --target sm_100 on a layout or a tile: tcgen05 descriptors (layoutalg.nvidia.blackwell.umma_smem: also
    the 128B_base32B mode and 4-bit types), the whole block and each k-block (K = 32 bytes)."""
    us = need("layoutalg.nvidia.blackwell.umma_smem", "desc --target sm_100")
    if args.operand is not None:
        raise LayoutError("desc: --operand picks a wgmma instruction's block (--instruction); with --target sm_100 the "
                          "k-blocks span the whole MN extent of the tile")
    dtype = args.dtype or "bf16"
    if args.source is None:
        mn, k = parse_tile(args.tile or "64x64")
        major, swizzle = args.major or "K", 128 if args.swizzle is None else args.swizzle
        layout = us.smem_tile(major, swizzle, dtype, (mn, k))
        print(f"tile      : {major}-major, {swizzle} swizzle, {dtype} ({us.smem_bits(dtype)}-bit), {mn}x{k} (MN x K)")
    else:
        refuse_unused(args, "desc", "with a layout (it builds a canonical tile when no layout is given)",
                       {"tile": "--tile", "swizzle": "--swizzle"})
        if args.dtype is None:
            raise LayoutError("desc: --dtype is needed to derive a descriptor from a layout (its elements' type)")
        layout = parse_layout(args.source)
    print(f"layout    : {layout}")
    try:
        d = us.descriptor_from_layout(layout, dtype, major=args.major, start_address=args.start or 0)
        lbo = "unused (encoded 1)" if d.lbo_bytes is None else f"{d.lbo_bytes} B"
        print(f"canonical : {d.major}-major, {d.swizzle} swizzle, m={d.m} k={d.k} LBO={lbo} SBO={d.sbo_bytes} B")
        print(d.descriptor.describe())
    except LayoutError as e:
        print(f"whole tile: not one canonical block ({e}); per k-block:")
    kb = 256 // us.smem_bits(dtype)
    blocks = us.k_block_descriptors(layout, dtype, K=kb, major=args.major, start_address=args.start or 0)
    print(f"\nk-blocks of K = {kb} ({dtype}, 32 bytes): {len(blocks)} (CuTe's descriptor iterator: start += offset >> 4)")
    rows = [{"k": b.k_block, "offset B": b.offset_bytes, "start>>4": b.descriptor.start_encoded,
             "word": f"{b.descriptor.encode():#018x}"} for b in blocks]
    print(format_table(rows, ["k", "offset B", "start>>4", "word"]))
    print("(checked against CuTe C++ 4.2 make_umma_desc and Triton's sm_100a PTX on the host; not run on sm_100)")
    return 0


@command
def cmd_tma(args: argparse.Namespace) -> int:
    """`layoutalg tma`: derive the TMA tensor map of a shared tile; optionally check it against wgmma."""
    tm = need("layoutalg.nvidia.hopper.tma", "tma")
    wg = need("layoutalg.nvidia.hopper.wgmma", "tma")
    if args.smem:
        refuse_unused(args, "tma", "with --smem (they build the wgmma tile used when --smem is not given)",
                       {"major": "--major", "swizzle": "--swizzle", "tile": "--tile", "desc_swizzle": "--desc-swizzle"})
    if not (args.check or args.desc_swizzle is not None):
        refuse_unused(args, "tma", "without --check (they choose the wgmma descriptors checked)",
                       {"operand": "--operand", "instruction": "--instruction"})
    args.major = args.major or "K"
    args.swizzle = 128 if args.swizzle is None else args.swizzle
    shape = parse_tile(args.tile or "64x64")
    smem = parse_layout(args.smem) if args.smem else wg.tile(args.major, args.swizzle, args.dtype, shape)
    g = parse_layout(args.gtensor)
    c = tm.make_tma_copy(g, smem, args.dtype, base_alignment=args.align, coalesce=args.coalesce)
    m = c.tensor_map
    origin = parse_coord(args.origin) if args.origin else (0,) * len(c.global_shape)
    origin = origin if isinstance(origin, tuple) else (origin,)
    print(f"global    : {g}  ({m.data_type})")
    print(f"smem tile : {smem}")
    print(f"rank      : {m.rank}  (TMA dimension k walks global modes {[list(d.modes) for d in c.dims]})")
    print(f"globalDim : {list(m.global_dim)}")
    print(f"strides   : {list(m.global_strides)} B")
    print(f"boxDim    : {list(m.box_dim)}  ({m.box_bytes} B per load, rows {m.smem_row_bytes} B apart in shared memory)")
    print(f"swizzle   : {m.swizzle}   interleave {m.interleave}   l2 {m.l2_promotion}   oob fill {m.oob_fill}")
    coords = c.coordinates(origin)
    print(f"\n{len(c.loads)} load(s) per tile, {c.transaction_bytes} B (mbarrier expect-tx), tile origin {list(origin)}:")
    rows = [{"load": i, "smem +B": ld.smem_offset, "coords": str(list(co)), "tile element": str(list(ld.tile_coord))}
            for i, (ld, co) in enumerate(zip(c.loads, coords))]
    print(format_table(rows[:32], ["load", "smem +B", "coords", "tile element"]))
    if len(rows) > 32:
        print(f"... {len(rows) - 32} more")
    for note in c.notes:
        print(f"note      : {note}")
    print("\n" + m.c_call())
    if args.check or args.desc_swizzle is not None:
        if args.smem and args.desc_swizzle is not None:
            raise LayoutError("tma: --desc-swizzle builds a wgmma tile from --major/--tile; it does not combine with --smem")
        dl = smem if args.desc_swizzle is None else wg.tile(args.major, args.desc_swizzle, args.dtype, shape)
        r = tm.check_wgmma(c, dl, operand_name=args.operand or "A", instruction=args.instruction)
        print(f"\nwgmma     : {r}")
        return 0 if r.ok else 1
    return 0
