"""One atom registry for every vendor: MMA and copy atoms looked up by the name the vendor gives them.

A *family* is a set of atoms one instruction defines -- NVIDIA's ``mma.sync`` (CuTe's
``SM80_16x8x16_F32F16F16F32_TN``), ``wgmma`` (``SM90_64x128x16_F32BF16BF16_SS``), ``tcgen05.mma``,
``ldmatrix``, ``cp.async``, ...; later AMD's MFMA and WMMA. Each generation's atoms module
(``layoutalg.nvidia.ampere.atoms``, ``layoutalg.nvidia.hopper.atoms``, ...) describes its families
with :class:`AtomFamily` and :func:`register` s them when it is imported. :func:`mma_atom` and
:func:`copy_atom` then ask the families in turn: the first whose ``build`` recognises the name
returns the atom (a family that recognises a name it cannot build raises a LayoutError saying
why). A name no family recognises is a LayoutError listing close names.

A vendor's atoms are imported only when first asked for: ``import layoutalg`` adds a *provider*
(:func:`add_provider`, a function that imports the vendor's atom modules) and the registry calls
it on the first lookup. Worked example, a family of one made-up atom::

    >>> from layoutalg.tiled import MMAAtom
    >>> from layoutalg.layout import Layout
    >>> toy = Layout((1, 1), (0, 0))
    >>> def build(name, **kw):
    ...     if name != "TOY_1x1x1":
    ...         return None            # not this family's name: the registry asks the next one
    ...     return MMAAtom(name, (1, 1, 1), Layout(1), toy, toy, toy, ("f32", "f32", "f32", "f32"))
    >>> register(AtomFamily("doctest", "toy1", "mma", "toy.mma", lambda: ("TOY_1x1x1",), build))
    >>> mma_atom("TOY_1x1x1").shape_mnk, atom_names("mma", vendor="doctest")
    ((1, 1, 1), ('TOY_1x1x1',))
    >>> mma_atom("TOY_1x1x2")     # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    layoutalg.errors.LayoutError: mma_atom: unknown mma atom 'TOY_1x1x2': ...; close names: TOY_1x1x1
    >>> unregister("doctest", "toy.mma")
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal

from .errors import LayoutError

__all__ = [
    "AtomFamily",
    "register",
    "unregister",
    "add_provider",
    "remove_provider",
    "families",
    "mma_atom",
    "copy_atom",
    "find_atom",
    "atom_names",
    "close_names",
]

Kind = Literal["mma", "copy"]


@dataclass(frozen=True)
class AtomFamily:
    """The atoms of one instruction of one vendor's architecture.

    * ``vendor``: ``"nvidia"``, ``"amd"``, ...; ``arch``: the architecture that introduced it, as the
      vendor writes it (``"sm80"``, ``"sm90"``, ``"sm100"``; ``"cdna3"``, ``"rdna4"``, ...);
      ``kind``: ``"mma"`` or ``"copy"``; ``label``: the family's name (``"mma.sync"``, ``"wgmma"``),
      unique within the vendor.
    * ``names()``: every atom name the family builds (may be computed once and cached); used by
      :func:`atom_names` and for the close names of an error.
    * ``build(name, **kw)``: the atom (an :class:`~layoutalg.tiled.MMAAtom` or
      :class:`~layoutalg.tiled.CopyAtom`), or ``None`` when ``name`` is not the family's. Copy
      families are called ``build(name, value_type)``. A name the family recognises but cannot build
      raises a LayoutError saying why.
    * ``normalise(name)``: optional; the spelling ``build`` is given (strip namespaces, spaces).
      Without it the name is stripped of surrounding blanks.
    """

    vendor: str
    arch: str
    kind: Kind
    label: str
    names: Callable[[], tuple[str, ...]]
    build: Callable[..., Any]
    normalise: Callable[[str], str] | None = None

    def __post_init__(self) -> None:
        if self.kind not in ("mma", "copy"):
            raise LayoutError(f"AtomFamily {self.label!r}: kind {self.kind!r} is not 'mma' or 'copy'")

    def spelling(self, name: str) -> str:
        """``name`` as :attr:`build` reads it (:attr:`normalise`, or stripped)."""
        return self.normalise(name) if self.normalise is not None else name.strip()


_FAMILIES: dict[tuple[str, str], AtomFamily] = {}
_PROVIDERS: dict[str, Callable[[], Any]] = {}
_LOADED: set[str] = set()


def register(family: AtomFamily) -> None:
    """Add ``family`` (replacing a family of the same vendor and label: re-importing is harmless)."""
    _FAMILIES[(family.vendor, family.label)] = family


def unregister(vendor: str, label: str) -> None:
    """Remove the family ``label`` of ``vendor`` (tests and doctests that register a toy family)."""
    _FAMILIES.pop((vendor, label), None)


def add_provider(vendor: str, load: Callable[[], Any]) -> None:
    """Let the registry import ``vendor``'s atom modules when it is first asked: ``load()`` imports
    them (each registers its families). ``layoutalg/__init__.py`` adds ``"nvidia"``."""
    _PROVIDERS[vendor] = load
    _LOADED.discard(vendor)


def remove_provider(vendor: str) -> None:
    """Forget ``vendor``'s provider (its registered families stay)."""
    _PROVIDERS.pop(vendor, None)
    _LOADED.discard(vendor)


def _load(vendor: str | None = None) -> None:
    for v, load in list(_PROVIDERS.items()):
        if v not in _LOADED and (vendor is None or v == vendor):
            _LOADED.add(v)
            try:
                load()
            except BaseException:
                _LOADED.discard(v)
                raise


def _as_set(x: str | Iterable[str] | None) -> set[str] | None:
    if x is None:
        return None
    return {x} if isinstance(x, str) else set(x)


def families(kind: Kind | None = None, vendor: str | None = None,
             arch: str | Iterable[str] | None = None) -> tuple[AtomFamily, ...]:
    """The registered families (loading the providers asked for), in registration order, filtered by
    ``kind``, ``vendor`` and ``arch`` (one name or several).

    >>> {f.label for f in families("mma", vendor="nvidia")} >= {"mma.sync", "wgmma", "tcgen05.mma"}
    True
    """
    _load(vendor)
    archs = _as_set(arch)
    return tuple(f for f in _FAMILIES.values()
                 if (kind is None or f.kind == kind) and (vendor is None or f.vendor == vendor)
                 and (archs is None or f.arch in archs))


def atom_names(kind: Kind, vendor: str | None = None, arch: str | Iterable[str] | None = None) -> tuple[str, ...]:
    """Every atom name of ``kind`` the registered families build (filtered by vendor and arch).

    >>> "SM90_64x256x16_F32BF16BF16_RS" in atom_names("mma", vendor="nvidia", arch="sm90")
    True
    >>> "SM75_U32x4_LDSM_N" in atom_names("copy", arch="sm80")
    True
    """
    out: list[str] = []
    for f in families(kind, vendor, arch):
        out += f.names()
    return tuple(dict.fromkeys(out))


def close_names(name: str, kind: Kind, vendor: str | None = None, arch: str | Iterable[str] | None = None,
                n: int = 4) -> tuple[str, ...]:
    """Up to ``n`` registered names close to ``name`` (``difflib``, ratio >= 0.75), for error messages."""
    return tuple(difflib.get_close_matches(str(name), atom_names(kind, vendor, arch), n=n, cutoff=0.75))


def find_atom(kind: Kind, name: str, *args: Any, vendor: str | None = None, **kwargs: Any) -> Any | None:
    """The atom of the first family (of ``kind``, of ``vendor``) that recognises ``name``, or None."""
    for f in families(kind, vendor):
        atom = f.build(f.spelling(str(name)), *args, **kwargs)
        if atom is not None:
            return atom
    return None


def _unknown(kind: Kind, name: str, vendor: str | None) -> LayoutError:
    labels = ", ".join(f"{f.vendor} {f.label}" for f in families(kind, vendor)) or "none"
    close = close_names(name, kind, vendor)
    hint = f"; close names: {', '.join(close)}" if close else "; layoutalg atoms --list shows every name"
    return LayoutError(f"{kind}_atom: unknown {kind} atom {name!r}: not an atom name of any registered family "
                       f"({labels}){hint}")


def mma_atom(name: str, *, vendor: str | None = None, **kwargs: Any) -> Any:
    """The MMA atom named ``name`` as its vendor names it (``kwargs`` go to the family's ``build``).

    >>> mma_atom("SM80_16x8x16_F32F16F16F32_TN").shape_mnk
    (16, 8, 16)
    """
    if not isinstance(name, str):
        raise LayoutError(f"mma_atom: the atom name must be a str, not {type(name).__name__}")
    atom = find_atom("mma", name, vendor=vendor, **kwargs)
    if atom is None:
        raise _unknown("mma", name, vendor)
    return atom


def copy_atom(name: str, value_type: Any = None, *, vendor: str | None = None) -> Any:
    """The copy atom ``name`` moving values of ``value_type`` (None: the instruction's own unit).

    >>> copy_atom("SM75_U32x4_LDSM_N", "f16").num_val_src
    8
    """
    if not isinstance(name, str):
        raise LayoutError(f"copy_atom: the atom name must be a str, not {type(name).__name__}")
    atom = find_atom("copy", name, value_type, vendor=vendor)
    if atom is None:
        raise _unknown("copy", name, vendor)
    return atom
