"""The registry of notations: a notation is one module that registers itself once.

A ``Notation`` says everything the rest of the tool needs: its name (also the name of its API constructor,
``api.cute``), its command-line flag and metavar (``--cute TEXT``: the text itself; ``--triton FILE``: a
path), its help, its extra options (``--thr-id``), and ``read(text, like, source=..., **options)``, which
parses the untrusted text with the notation's own grammar and returns a ``TVImport`` shaped like the spec
layout ``like``.  ``conform``'s options, ``api``'s constructors and ``import_as`` all follow from the
registrations, so adding a notation is one new module in ``verify/layout/notations/`` that calls
``register`` (the package imports every module in it).
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


def _load_all() -> None:
    """Import every notation module of the package, so that each registers itself.  A notation module is
    one whose source calls ``register(Notation(...))``; the package's other modules (CuTe header readers,
    shared-memory readers, the errors and build modules) are not imported for it."""
    import importlib
    from pathlib import Path

    if _LOADED:
        return
    for path in sorted(Path(__file__).parent.glob("*.py")):
        if path.name != "registry.py" and _MARK in path.read_text(encoding="utf-8"):
            importlib.import_module(f"{__package__}.{path.stem}")
    _LOADED.append(True)


_LOADED: list[bool] = []


def read_options(n: Notation, options: dict[str, Any]) -> dict[str, Any]:
    """``options`` checked against the notation's own (``TypeError`` for one it does not take)."""
    known = {o.name for o in n.options}
    extra = [k for k, v in options.items() if k not in known and v is not None]
    if extra:
        raise TypeError(f"the {n.name} notation takes no option {', '.join(extra)}"
                        + (f" (its options: {', '.join(sorted(known))})" if known else ""))
    return {k: v for k, v in options.items() if k in known}


__all__ = ["Notation", "Option", "notation", "notations", "read_options", "register"]
