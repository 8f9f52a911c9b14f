"""Reading the prints of a CuTe kernel's setup: ``print(tiled_mma)``, ``print(tiled_copy)``, atoms, tilers.

CuTe C++ 4.2 prints a TiledMMA as a block of labelled lines, then its atom's block::

    TiledMMA
      ThrLayoutVMNK:  (_32,_2,_2,_1):(_1,_32,_64,_0)
      PermutationMNK: (_,_,_)
    MMA_Atom
      ThrID:      _32:_1
      Shape_MNK:  (_16,_8,_16)
      LayoutA_TV: ((_4,_8),(_2,_2,_2)):((_32,_1),(_16,_8,_128))
      ...

(``TiledCopy`` / ``Tiler_MN`` / ``TiledLayout_TV`` and ``Copy_Atom`` / ``ValLayoutSrc`` ... likewise);
the CuTe DSL prints the same blocks with spaced names (``Tiled MMA``, ``Thr Layout VMNK:``,
``TV Layout A:``, ``Copy Atom``, ``Value type:``). :func:`parse_setup` reads either into a
:class:`SetupPrint`: the block's kind, each label's value (a layout, a tiler, a shape, or the text
of a ``ValueType``) and the atom's block under its header. A tiler prints as a tuple of layouts,
``_`` or integers (``((_4,_32):(_32,_1),_32:_1)``, ``(_,_,_)``, ``(_32,_32,_16)``);
:func:`parse_tiler` reads it as the tuple CuTe's ``Tile<...>`` is. One labelled line
(``TiledLayout_TV: ((_4,_32),_8):((_256,_1),_32)``) reads as its value (:func:`strip_label`).

>>> S = parse_setup('''TiledCopy
...   Tiler_MN:       (_32,_32)
...   TiledLayout_TV: ((_4,_32),_8):((_256,_1),_32)
... Copy_Atom
...   ThrID:        _1:_0
...   ValueType:    16b''')
>>> S.kind, str(S["TiledLayout_TV"]), S["Tiler_MN"], S.atom.kind, S.atom["ValueType"]
('TiledCopy', '((4,32),8):((256,1),32)', (32, 32), 'Copy_Atom', '16b')
>>> parse_tiler("((_4,_32):(_32,_1),_32:_1)")
(Layout((4, 32), (32, 1)), Layout(32, 1))
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ..errors import LayoutError
from ..layout import Layout

__all__ = ["SetupPrint", "parse_setup", "parse_tiler", "strip_label", "is_setup_print", "HEADERS", "DSL_LABELS"]

#: the block headers CuTe C++ and the CuTe DSL print, by the name layoutalg gives the block
HEADERS = {"TiledMMA": "TiledMMA", "Tiled MMA": "TiledMMA", "MMA_Atom": "MMA_Atom", "MMA Atom": "MMA_Atom",
           "TiledCopy": "TiledCopy", "Tiled Copy": "TiledCopy", "Copy_Atom": "Copy_Atom", "Copy Atom": "Copy_Atom",
           "ThrMMA": "ThrMMA", "ThrCopy": "ThrCopy"}
#: the block printed after each: a thread's slice, then its tiled block, then the atom
_NEXT = {"ThrMMA": "TiledMMA", "TiledMMA": "MMA_Atom", "ThrCopy": "TiledCopy", "TiledCopy": "Copy_Atom"}
#: the CuTe DSL's labels, by CuTe C++'s (a SetupPrint keys every value by CuTe C++'s label)
DSL_LABELS = {"Thr Layout VMNK": "ThrLayoutVMNK", "Permutation MNK": "PermutationMNK", "Shape MNK": "Shape_MNK",
              "TV Layout A": "LayoutA_TV", "TV Layout B": "LayoutB_TV", "TV Layout C": "LayoutC_TV",
              "Tiler MN": "Tiler_MN", "TV Layout tiled": "TiledLayout_TV", "TV Layout Src": "ValLayoutSrc",
              "TV Layout Dst": "ValLayoutDst", "TV Layout Ref": "ValLayoutRef", "Value type": "ValueType"}
#: ``Label: value`` -- a label of two or more characters (words, underscores, inner spaces), a colon, a space
_LABEL = re.compile(r"\s*([A-Za-z][A-Za-z0-9_]*(?: [A-Za-z0-9_]+)*)\s*:\s+(\S.*?)\s*")
_TEXT_VALUES = re.compile(r"\d+b|[A-Za-z][\w:<>]*")  # ValueType: 16b, Value type: f16


class SetupPrint(dict):
    """One printed block: ``kind`` (``"TiledMMA"``, ``"MMA_Atom"``, ``"TiledCopy"``, ``"Copy_Atom"``,
    ``"ThrMMA"``), its labelled values keyed by CuTe C++'s label (the DSL's ``TV Layout A`` is
    ``LayoutA_TV``, :data:`DSL_LABELS`), and ``atom``, the block printed after it (a tiled block's atom,
    a ``ThrMMA``'s tiled MMA), or None."""

    def __init__(self, kind: str, values: dict[str, Any], atom: SetupPrint | None = None):
        if kind not in HEADERS.values() or not isinstance(values, dict) \
                or not (atom is None or isinstance(atom, SetupPrint)):
            raise LayoutError(f"SetupPrint: kind {kind!r} is one of {sorted(set(HEADERS.values()))}, values a dict "
                              f"and atom a SetupPrint or None"[:300])
        super().__init__(values)
        self.kind = kind
        self.atom = atom

    def layouts(self) -> dict[str, Any]:
        """Every labelled layout of this block and of its atom (the atom's labels prefixed ``atom.``)."""
        out = {k: v for k, v in self.items() if isinstance(v, Layout) or hasattr(v, "inner")}
        if self.atom is not None:
            out.update({f"atom.{k}": v for k, v in self.atom.layouts().items()})
        return out

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}: {v}" for k, v in self.items())
        return f"SetupPrint({self.kind}: {inner}{'; atom ' + repr(self.atom) if self.atom is not None else ''})"


def _split_top(text: str) -> list[str]:
    """The top-level comma-separated items of ``(a,b,...)`` (None when ``text`` is not one tuple)."""
    t = text.strip()
    if not (t.startswith("(") and t.endswith(")")):
        raise LayoutError(f"parse: a tiler is a parenthesised tuple, not {t!r}")
    depth = 0
    items: list[str] = []
    cur: list[str] = []
    for k, ch in enumerate(t[1:-1]):
        if ch in "(<":
            depth += 1
        elif ch in ")>":
            depth -= 1
            if depth < 0:
                raise LayoutError(f"parse: unbalanced parentheses at column {k + 2} of {t!r}")
        if ch == "," and depth == 0:
            items.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if depth != 0:
        raise LayoutError(f"parse: unbalanced parentheses in {t!r}")
    items.append("".join(cur))
    return [i.strip() for i in items]


def _int_or_shape(text: str) -> Any:
    t = text.strip()
    if re.fullmatch(r"_?-?\d+", t):
        return int(t.lstrip("_"))
    if t.startswith("("):
        return tuple(_int_or_shape(x) for x in _split_top(t))
    raise LayoutError(f"parse: {t!r} is not an integer, a shape, a layout or '_'")


def parse_tiler(text: str, parse: Callable[[str], Any] | None = None) -> tuple:
    """A printed tiler -> CuTe's ``Tile<...>`` as a tuple: a layout per mode (``4:1``), ``None`` for ``_``,
    an integer or a shape where the mode is one.

    >>> parse_tiler("(_,_,_)"), parse_tiler("(_32,_32,_16)")
    ((None, None, None), (32, 32, 16))
    """
    if parse is None:
        from . import parse as parse_fn

        parse = parse_fn
    if type(text) is not str:
        raise LayoutError(f"parse_tiler: expected text, got {text!r}"[:200])
    out: list[Any] = []
    for item in _split_top(text):
        if item == "_":
            out.append(None)
        elif ":" in item or "Sw<" in item or " o " in item:
            out.append(parse(item))
        else:
            out.append(_int_or_shape(item))
    return tuple(out)


def strip_label(text: str) -> tuple[str | None, str]:
    """``"Label: value"`` -> ``("Label", "value")``; text without a label -> ``(None, text)``.

    >>> strip_label("TiledLayout_TV: ((_32,_4),_8):((_1,_32),_128)")
    ('TiledLayout_TV', '((_32,_4),_8):((_1,_32),_128)')
    >>> strip_label("(8,4):(1,8)")
    (None, '(8,4):(1,8)')
    """
    if type(text) is not str:
        raise LayoutError(f"strip_label: expected text, got {text!r}"[:200])
    m = _LABEL.fullmatch(text.strip()) if "\n" not in text.strip() else None
    if m is None or len(m.group(1)) < 2:
        return None, text
    return m.group(1), m.group(2)


def _value(label: str, text: str, parse: Callable[[str], Any]) -> Any:
    t = text.strip()
    if "Permutation" in label or "Tiler" in label:
        return parse_tiler(t, parse)
    if "Shape" in label or label == "Thr VMNK":  # a shape, or a ThrMMA's coordinate (3,0,0,_0)
        return _int_or_shape(t)
    if _TEXT_VALUES.fullmatch(t) and not re.fullmatch(r"_?\d+", t):
        return t  # ValueType: 16b, Value type: f16
    return parse(t)


def is_setup_print(text: str) -> bool:
    """Does ``text`` start with a block header (``TiledMMA``, ``Copy Atom``, ...)?"""
    if type(text) is not str:
        raise LayoutError(f"is_setup_print: expected text, got {text!r}"[:200])
    first = text.strip().split("\n", 1)[0].strip()
    return first in HEADERS


def parse_setup(text: str, parse: Callable[[str], Any] | None = None) -> SetupPrint:
    """Read ``print(tiled_mma)``, ``print(tiled_copy)`` or an atom's print (CuTe C++ or the CuTe DSL).

    Returns the first block; an atom block after a tiled one is its ``atom``. Every labelled line's
    value is read (layouts through ``parse``); a line that is neither a header nor ``Label: value``
    is a LayoutError naming it.
    """
    if parse is None:
        from . import parse as parse_fn

        parse = parse_fn
    if type(text) is not str:
        raise LayoutError(f"parse_setup: expected text, got {text!r}"[:200])
    blocks: list[tuple[str, dict[str, Any]]] = []
    for n, line in enumerate(text.strip().splitlines(), 1):
        s = line.strip()
        if not s:
            continue
        if s in HEADERS:
            blocks.append((HEADERS[s], {}))
            continue
        label, value = strip_label(s)
        if label is None or not blocks:
            raise LayoutError(f"parse: line {n} of a setup print, {s!r}, is neither a block header "
                              f"({', '.join(sorted(set(HEADERS.values())))}) nor 'Label: value'")
        try:
            blocks[-1][1][DSL_LABELS.get(label, label)] = _value(label, value, parse)
        except LayoutError as e:
            raise LayoutError(f"parse: line {n} ({label}): {e}") from None
    if not blocks:
        raise LayoutError("parse: empty setup print")
    kinds = [b[0] for b in blocks]
    if any(_NEXT.get(a) != b for a, b in zip(kinds, kinds[1:])):
        raise LayoutError(f"parse: a setup print is one block, a tiled block and its atom, or a thread's slice, its "
                          f"tiled block and the atom; got {kinds}")
    inner = None
    for kind, values in reversed(blocks):  # each block holds the next one as its atom
        inner = SetupPrint(kind, values, inner)
    assert inner is not None
    return inner
