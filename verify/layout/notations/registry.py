"""The registry of notations: a notation is one module that registers itself once.

A ``Notation`` says everything the rest of the tool needs: its name (also the name of its API constructor,
``api.cute``), its command-line flag and metavar (``--cute TEXT``: the text itself; ``--triton FILE``: a
path), its help, its extra options (``--thr-id``), and ``read(text, like, source=..., **options)``, which
parses the untrusted text with the notation's own grammar and returns a ``TVImport`` shaped like the spec
layout ``like``.  ``conform``'s options, ``api``'s constructors and ``import_as`` all follow from the
registrations, so adding a notation is one new module in ``verify/layout/notations/`` that calls
``register`` (the package imports every module in it).

A notation may also read other kinds of layout: ``register_reader(kind, name, reader)`` adds the parser of
one kind (``"shared"``: a shared-memory tile ``(row, col) -> offset``, a ``SharedReader``; ``"map"``: a
``[[layout]]``'s map over its own names, a ``MapReader``), and
``reader(kind, name)`` is the one lookup every command makes for it (``api.shared_layout``, ``consistent``'s
sides, ``conform`` of a shared map, ``descriptor`` and ``banks``), so a new shared-memory notation is one
module here that calls ``register_reader``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from .errors import TVImport


@dataclass(frozen=True)
class Option:
    """An extra option of one notation: the keyword the reader takes, its flag, metavar and help."""

    name: str
    flag: str
    metavar: str
    help: str


@dataclass(frozen=True)
class Notation:
    """One notation (see the module docstring).  ``order`` sorts the notations in help texts."""

    name: str
    flag: str
    metavar: str
    inline: bool
    help: str
    read: Callable[..., TVImport]
    options: tuple[Option, ...] = ()
    order: int = 100
    api_doc: str = ""
    api_name: str = ""  # the API constructor (``api.index_code``), default the name

    @property
    def constructor(self) -> str:
        return self.api_name or self.name

    @property
    def dest(self) -> str:
        """The argparse attribute of the flag (``--formula`` -> ``formula``)."""
        return self.flag.lstrip("-").replace("-", "_")


_REGISTRY: dict[str, Notation] = {}


def register(notation: Notation) -> Notation:
    """Add ``notation`` (its name and flag must be new)."""
    for other in _REGISTRY.values():
        if other.name == notation.name or other.flag == notation.flag:
            raise ValueError(f"notation {notation.name!r} ({notation.flag}) is registered twice")
    _REGISTRY[notation.name] = notation
    return notation


def notations() -> tuple[Notation, ...]:
    """Every registered notation, in help order."""
    _load_all()
    return tuple(sorted(_REGISTRY.values(), key=lambda n: (n.order, n.name)))


def notation(name: str) -> Notation:
    """The notation called ``name`` (``KeyError`` naming the known ones)."""
    _load_all()
    if name not in _REGISTRY:
        raise KeyError(f"unknown notation {name!r} (one of {', '.join(n.name for n in notations())})")
    return _REGISTRY[name]


_MARK = "register(Notation("


def _load_all(mark: str = _MARK) -> None:
    """Import every module of the package whose source registers with ``mark`` (``register(Notation(``: the
    fragment notations; ``register_reader(``: the readers of other kinds), so that each registers itself; the
    package's other modules (CuTe header readers, the errors and build modules) are not imported for it."""
    import importlib
    from pathlib import Path

    if mark in _LOADED:
        return
    for path in sorted(Path(__file__).parent.glob("*.py")):
        if path.name != "registry.py" and mark in path.read_text(encoding="utf-8"):
            importlib.import_module(f"{__package__}.{path.stem}")
    _LOADED.append(mark)


_LOADED: list[str] = []


@dataclass(frozen=True)
class SharedReader:
    """The shared-memory reader of one notation: ``read(text, *, bits, tile, base, unit, source, params, buffer)``
    gives a ``layout.shared.SharedLayout`` (``bits``: the element width, None where the text must say it;
    ``tile``: (rows, cols) where the text does not say it; ``params``: values the text may read by name, only
    where ``reads_params``; ``buffer``: the buffer's size in elements, where the caller declares it).  It raises
    ``NotationError`` at a position for bad text, ``NeedsType`` when the element type is missing and the text
    cannot do without it, and ``ValueError`` for a tile the notation's rules refuse.  ``looks_shared(text)``:
    whether the text can only be a shared-memory tile (``consistent`` reads a CuTe or Triton text without
    ``--type`` as a plain map otherwise); ``order`` sorts the readers in messages and options; ``flag``,
    ``metavar``, ``inline`` and ``help``: the option of ``descriptor`` and ``banks`` that takes the text."""

    name: str
    read: Callable[..., Any]
    reads_params: bool = False
    looks_shared: Callable[[str], bool] | None = None
    unpositioned: bool = False  # its errors name no position: a caller that reports one puts them at 1:1
    order: int = 100
    flag: str = ""  # ``descriptor``/``banks``: the option that takes the text (``--tma BOX``)
    metavar: str = "TEXT"
    inline: bool = True  # the option's value is the text itself, not a file
    help: str = ""
    needs_tile: bool = False  # the command line must give --tile and --type

    @property
    def dest(self) -> str:
        return self.flag.lstrip("-").replace("-", "_")


@dataclass(frozen=True)
class MapReader:
    """The reader of one notation for a ``[[layout]]``'s map (``conform`` of a map layout, ``table --formula``):
    ``read(text, *, inputs, outputs, params, source)`` gives a named map over the spec's ``inputs`` ->
    ``outputs`` (``params``: the family's parameters and the names the text may read, only where
    ``reads_params``).  Bad text is a ``NotationError`` at its position.  A notation with no map reader may
    still give a shared layout's map through its ``SharedReader``."""

    name: str
    read: Callable[..., Any]
    reads_params: bool = False
    order: int = 100


class NeedsType(ValueError):
    """The element type is missing, and the text does not state it: ``what`` needs it (``TMA box``)."""

    def __init__(self, message: str, what: str) -> None:
        super().__init__(message)
        self.what = what


_READERS: dict[str, dict[str, Any]] = {}
_READER_MARK = "register_reader("


def register_reader(kind: str, reader: Any) -> Any:
    """Add the reader of one kind of layout (``"shared"``: a ``SharedReader``; ``"map"``: a ``MapReader``) under
    its name (new for the kind)."""
    readers_ = _READERS.setdefault(kind, {})
    if reader.name in readers_:
        raise ValueError(f"the {kind} reader {reader.name!r} is registered twice")
    readers_[reader.name] = reader
    return reader


def readers(kind: str) -> tuple[Any, ...]:
    """Every reader of ``kind``, in message order."""
    _load_all(_READER_MARK)
    return tuple(sorted(_READERS.get(kind, {}).values(), key=lambda r: (r.order, r.name)))


def reader(kind: str, name: str) -> Any | None:
    """The reader of ``kind`` that notation ``name`` registered, or None (one lookup: no other module parses)."""
    _load_all(_READER_MARK)
    return _READERS.get(kind, {}).get(name)


def read_options(n: Notation, options: dict[str, Any]) -> dict[str, Any]:
    """``options`` checked against the notation's own (``TypeError`` for one it does not take)."""
    known = {o.name for o in n.options}
    extra = [k for k, v in options.items() if k not in known and v is not None]
    if extra:
        raise TypeError(f"the {n.name} notation takes no option {', '.join(extra)}"
                        + (f" (its options: {', '.join(sorted(known))})" if known else ""))
    return {k: v for k, v in options.items() if k in known}


__all__ = ["MapReader", "NeedsType", "Notation", "Option", "SharedReader", "notation", "notations", "read_options", "reader",
           "readers", "register", "register_reader"]
