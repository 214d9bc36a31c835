"""The witness base (``Witness``: its JSON, its words, a read-only mapping view of its JSON) and the witnesses
of a map's and a fragment's three properties, of a bank conflict and of a place in a text; ``Facts`` for a
mapping a check or a proof script gives with no class of its own.  Import them from ``verify.witnesses``.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Iterator


def _point(p: Mapping[str, Any]) -> str:
    return ", ".join(f"{k} = {v}" for k, v in p.items())


class Witness(Mapping[str, Any]):
    """A counterexample: its JSON form, its words, and a read-only mapping view of the JSON form.  Every
    witness states the family member it is at, if any (``member``)."""

    def to_json(self) -> dict[str, Any]:
        raise NotImplementedError

    def lines(self) -> list[str]:
        """The counterexample in the doc's terms, one statement a line."""
        return [", ".join(f"{k} = {v}" for k, v in self.to_json().items())]

    def describe(self) -> str:
        """The counterexample on one line."""
        return "; ".join(self.lines())

    def member(self) -> Mapping[str, int] | None:
        """The parameter values of the family member the witness is at (``None``: not a family's, or none
        stated)."""
        p = self.to_json().get("params")
        return p if isinstance(p, Mapping) and p else None

    def __getitem__(self, key: str) -> Any:
        return self.to_json()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.to_json())

    def __len__(self) -> int:
        return len(self.to_json())


def _with_params(params: Mapping[str, int] | None, body: dict[str, Any]) -> dict[str, Any]:
    return {"params": dict(params), **body} if params is not None else body


def _mma(mma: int | None) -> str:
    return f" of MMA computation {mma + 1}" if mma is not None else ""


# ----------------------------------------------------------------------------- any named map

@dataclass(frozen=True, eq=True)
class PointOutside(Witness):
    """A map's input ``point`` (parameters ``params``) is undefined (``at`` None) or lands at ``at``,
    outside the output box."""

    params: Mapping[str, int]
    point: Mapping[str, int]
    at: Mapping[str, int] | None

    def to_json(self) -> dict[str, Any]:
        return {"params": dict(self.params), "point": dict(self.point),
                "at": None if self.at is None else dict(self.at)}

    def lines(self) -> list[str]:
        where = "is undefined" if self.at is None else f"lands at ({_point(self.at)}), outside the output box"
        return [f"({_point(self.point)}) {where}"]


@dataclass(frozen=True, eq=True)
class PointsCollide(Witness):
    """Two input points of a map, ``first`` before ``second``, land on one output point ``at``."""

    params: Mapping[str, int]
    first: Mapping[str, int]
    second: Mapping[str, int]
    at: Mapping[str, int] | None

    def to_json(self) -> dict[str, Any]:
        return {"params": dict(self.params), "first": dict(self.first), "second": dict(self.second),
                "at": None if self.at is None else dict(self.at)}

    def lines(self) -> list[str]:
        at = "" if self.at is None else _point(self.at)
        return [f"({_point(self.first)}) and ({_point(self.second)}) both land at ({at})"]


@dataclass(frozen=True, eq=True)
class OutputUnreached(Witness):
    """An output point ``at`` of a map that no input point reaches."""

    params: Mapping[str, int]
    at: Mapping[str, int]

    def to_json(self) -> dict[str, Any]:
        return {"params": dict(self.params), "at": dict(self.at)}

    def lines(self) -> list[str]:
        return [f"({_point(self.at)}) is reached by no point"]


@dataclass(frozen=True, eq=True)
class PointDiffers(Witness):
    """The first input point where two maps differ: what each (named ``names``) gives there, ``outputs``
    (``None``: undefined).  (Not ``values``: that is the mapping view's ``values()``.)"""

    params: Mapping[str, int]
    point: Mapping[str, int]
    names: tuple[str, str]
    outputs: tuple[Mapping[str, int] | None, Mapping[str, int] | None]

    def to_json(self) -> dict[str, Any]:
        return {"params": dict(self.params), "point": dict(self.point),
                **{n: None if v is None else dict(v) for n, v in zip(self.names, self.outputs)}}

    def lines(self) -> list[str]:
        said = ["undefined" if v is None else f"({_point(v)})" for v in self.outputs]
        return [f"at {_point(self.point)}: {self.names[0]} {said[0]}, {self.names[1]} {said[1]}"]


# ----------------------------------------------------------------------------- register fragments

@dataclass(frozen=True, eq=True)
class Element:
    """One element of a fragment: a lane, its element index ``i`` and the doc's name for it."""

    lane: int
    i: int
    element: str

    def to_json(self) -> dict[str, Any]:
        return {"lane": self.lane, "i": self.i, "element": self.element}


@dataclass(frozen=True, eq=True)
class CellOutside(Witness):
    """An element that no case of the formula defines (``row`` None), or that lands at cell (row, col)
    outside the matrix (of MMA computation ``mma``)."""

    lane: int
    i: int
    element: str
    row: int | None
    col: int | None
    mma: int | None = None
    params: Mapping[str, int] | None = None  # the family member's parameters, if a family

    def to_json(self) -> dict[str, Any]:
        body = {"lane": self.lane, "i": self.i, "element": self.element, "row": self.row, "col": self.col}
        if self.mma is not None:
            body["mma"] = self.mma
        return _with_params(self.params, body)

    def lines(self) -> list[str]:
        where = ("no case of the formula applies" if self.row is None
                 else f"cell ({self.row}, {self.col}){_mma(self.mma)}, outside the matrix")
        return [f"lane {self.lane}, element {self.element}: {where}"]


@dataclass(frozen=True, eq=True)
class ElementsCollide(Witness):
    """Two elements, ``first`` before ``second``, land on one cell (row, col) of MMA computation ``mma``."""

    first: Element
    second: Element
    row: int
    col: int
    mma: int | None = None
    params: Mapping[str, int] | None = None

    def to_json(self) -> dict[str, Any]:
        body = {"first": self.first.to_json(), "second": self.second.to_json(), "row": self.row, "col": self.col}
        if self.mma is not None:
            body["mma"] = self.mma
        return _with_params(self.params, body)

    def lines(self) -> list[str]:
        a, b, cell = self.first, self.second, f"cell ({self.row}, {self.col}){_mma(self.mma)}"
        return [f"lane {a.lane}, element {a.element}, {cell}",
                f"lane {b.lane}, element {b.element}, {cell}  (the same cell)"]


@dataclass(frozen=True, eq=True)
class CellUnreached(Witness):
    """A cell (row, col) of MMA computation ``mma`` that no lane holds."""

    row: int
    col: int
    mma: int | None = None
    params: Mapping[str, int] | None = None

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {"row": self.row, "col": self.col}
        if self.mma is not None:
            body["mma"] = self.mma
        return _with_params(self.params, body)

    def lines(self) -> list[str]:
        return [f"cell ({self.row}, {self.col}){_mma(self.mma)}: no lane holds it"]


def _element(d: Mapping[str, Any]) -> Element:
    return Element(int(d["lane"]), int(d["i"]), str(d["element"]))


def fragment_witness(check: str, fields: Mapping[str, Any] | None) -> Witness | None:
    """The typed witness of a fragment's ``in_range``/``injective``/``surjective`` from the engines' fields
    (``params`` first when a family's member, ``mma`` when the fragment spans several MMA computations)."""
    if fields is None or isinstance(fields, Witness):
        return fields
    c = dict(fields)
    member = c.pop("params", None)
    mma = c.get("mma")
    if check == "in_range":
        return CellOutside(c["lane"], c["i"], c["element"], c["row"], c["col"], mma, member)
    if check == "injective":
        return ElementsCollide(_element(c["first"]), _element(c["second"]), c["row"], c["col"], mma, member)
    if check == "surjective":
        return CellUnreached(c["row"], c["col"], mma, member)
    raise ValueError(f"no fragment witness for check {check!r}")


# ----------------------------------------------------------------------------- shared memory

@dataclass(frozen=True, eq=True)
class BankConflict(Witness):
    """Two lanes of one wavefront group (``group``), at one placement (tile ``origin``), reach cells
    ``cells`` at byte addresses ``addresses``: different words of one bank ``bank``."""

    params: Mapping[str, int]
    origin: tuple[int, int]
    lanes: tuple[int, int]
    cells: tuple[tuple[int, int], tuple[int, int]]
    addresses: tuple[int, int]
    bank: int
    group: int

    def to_json(self) -> dict[str, Any]:
        return {"params": dict(self.params), "origin": list(self.origin), "lanes": list(self.lanes),
                "cells": [list(c) for c in self.cells], "addresses": list(self.addresses), "bank": self.bank,
                "group": self.group}

    def lines(self) -> list[str]:
        return [f"at origin {self.origin}, lanes {self.lanes[0]} and {self.lanes[1]} (cells {self.cells[0]} and "
                f"{self.cells[1]}) address {self.addresses[0]:#x} and {self.addresses[1]:#x}: both bank "
                f"{self.bank}, in wavefront group {self.group}"]


# ----------------------------------------------------------------------------- text and facts

@dataclass(frozen=True, eq=True)
class TextPosition(Witness):
    """A place in a file: the formula that does not parse, the words of the doc at fault."""

    file: str
    line: int
    col: int
    kind: str = ""  # an error in the doc's text: its kind (``register_count``, ``element_list``...)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"file": self.file, "line": self.line, "col": self.col}
        if self.kind:
            out["kind"] = self.kind
        return out


@dataclass(frozen=True, eq=True)
class Facts(Witness):
    """The values a check compared, under the check's own names (register arithmetic, element lists,
    conform and handoff kinds, sparse metadata, bank conflicts...), in the order the check gave them."""

    fields: Mapping[str, Any]

    def to_json(self) -> dict[str, Any]:
        return dict(self.fields)


def as_witness(value: Witness | Mapping[str, Any] | None) -> Witness | None:
    """A counterexample as a witness: a witness as is, the fields of a check with no witness class of its
    own as ``Facts``, nothing as ``None``."""
    if value is None or isinstance(value, Witness):
        return value
    return Facts(dict(value))


def witness_json(value: Witness | None) -> dict[str, Any] | None:
    """A counterexample's JSON form (``None`` when there is none)."""
    return None if value is None else value.to_json()


__all__ = ["BankConflict", "CellOutside", "CellUnreached", "Element", "ElementsCollide", "Facts", "OutputUnreached",
           "PointDiffers", "PointOutside", "PointsCollide", "TextPosition", "Witness", "as_witness", "fragment_witness",
           "witness_json"]
