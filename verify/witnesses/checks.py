"""The witnesses of the checks beyond a map's three properties: each a frozen class that owns its JSON (the
keys and values of the contract, in the order the check has always written them) and its words.  Re-exported
by ``verify.witnesses`` (import them from there).

* ``FragmentDiffers``: the first (lane, i) where two fragments differ (``equal``, ``diff``, ``conform``);
* ``DomainDiffers``: two layouts over different domains (threads, elements, MMA computations, parameters);
* ``ParamsDiffer``: two releases of a family over different parameters (``diff``);
* ``SpecGivenDiffer``: a given whose extent or domain is not the spec's (``conform``);
* ``NotPermuted``: a lane whose cells are not the spec's in another order (``conform``'s ``permuted``);
* ``ReplicaDiffers``: a thread that is not the copy of its spec lane (``conform``'s ``replicated``);
* ``RegisterCount``, ``RegisterPacking``, ``ElementList``: the register arithmetic of one fragment;
* ``CellHeldBy``: a cell a lane needs and who holds it (``handoff``);
* ``ReductionLanes``: the lane pair that breaks a butterfly reduction inside a fragment (``handoff --reduce``);
* ``LaneAddress``: a lane's shared-memory access that is unplaced or misaligned (``banks``);
* ``BufferPlace``: where a writer's and a reader's maps of one buffer disagree (``consistency``);
* ``ReviewedFacts``: a page's register facts that differ from the reviewed spec's (``register_facts``);
* ``TileDiffers``, ``CellCoverage``: a given that is not the spec tiled over a block (``conform``'s ``tiled``).

The witnesses of an instruction's checks (its operands against its shape, sparse A, Tensor Memory lanes) are in
``verify.witnesses.instruction``, on the ``CheckWitness`` base defined here.

Each takes the family member it is at (``params``) as its first key when there is one; ``at_member`` adds it.
"""
from __future__ import annotations

import builtins
import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .core import Facts, Witness, _mma, _point, _with_params


def _copy(v: Any) -> Any:
    """A JSON value copied (mappings as dicts, lists as lists, anything else as is), so a witness's JSON is
    never shared with the witness."""
    if isinstance(v, Mapping):
        return {k: _copy(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_copy(x) for x in v]
    return v


def _cell(c: Mapping[str, Any] | None) -> str:
    if c is None:
        return "undefined"
    return f"cell ({c['row']}, {c['col']})" + (_mma(c["mma"]) if "mma" in c else "")


def at_member(w: Witness | Mapping[str, Any] | None, params: Mapping[str, int]) -> Witness | None:
    """``w`` at the family member ``params``: its JSON gains ``"params"`` as the first key (a witness that
    already states its member keeps it, as ``{"params": params, **w}`` would)."""
    if w is None:
        return None
    if (isinstance(w, Witness) and not isinstance(w, Facts) and dataclasses.is_dataclass(w)  # (every concrete one is)
            and any(f.name == "params" for f in dataclasses.fields(w))):
        if getattr(w, "params") is not None:
            return w
        return dataclasses.replace(w, params=dict(params))
    return Facts({"params": params, **w})


class CheckWitness(Witness):
    """A witness of one of these checks: its words (``words``), prefixed with the family member it is at
    (``N = 8: ...``) when it names one."""

    def words(self) -> list[str]:
        raise NotImplementedError

    def lines(self) -> list[str]:
        out = self.words()
        member = self.member()
        if member and out:
            out = [f"{_point(member)}: {out[0]}", *out[1:]]
        return out


# ----------------------------------------------------------------------------- two layouts

@dataclass(frozen=True, eq=True)
class FragmentDiffers(CheckWitness):
    """The first (lane, i) where two fragments differ: the cell each puts it at (``first``, ``second``:
    ``{"row", "col"[, "mma"]}``; ``None``: undefined there)."""

    lane: int
    i: int
    element: str
    first: Mapping[str, int] | None
    second: Mapping[str, int] | None
    params: Mapping[str, int] | None = None

    def to_json(self) -> dict[str, Any]:
        return _with_params(self.params, {"kind": "point", "lane": self.lane, "i": self.i, "element": self.element,
                                          "first": _copy(self.first), "second": _copy(self.second)})

    def words(self) -> list[str]:
        return [f"lane {self.lane}, element {self.element}: {_cell(self.first)} against {_cell(self.second)}"]


@dataclass(frozen=True, eq=True)
class DomainDiffers(CheckWitness):
    """Two layouts over different domains: ``what`` (threads, elements, groups, parameters...) and, when the
    check states them, what each has (``first``, ``second``)."""

    what: str
    first: Any = None
    second: Any = None
    params: Mapping[str, int] | None = None

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {"kind": "domain", "what": self.what}
        if self.first is not None or self.second is not None:
            body |= {"first": _copy(self.first), "second": _copy(self.second)}
        return _with_params(self.params, body)

    def words(self) -> list[str]:
        if self.first is None and self.second is None:
            return [f"the domains differ ({self.what})"]
        return [f"{self.what} differ: {self.first} against {self.second}"]


@dataclass(frozen=True, eq=True)
class ParamsDiffer(CheckWitness):
    """Two releases of a family layout over different parameters (``old``, ``new``: as written)."""

    old: str
    new: str

    def to_json(self) -> dict[str, Any]:
        return {"kind": "params", "old": self.old, "new": self.new}

    def words(self) -> list[str]:
        return [f"parameters differ: old {self.old}, new {self.new}"]


@dataclass(frozen=True, eq=True)
class SpecGivenDiffer(CheckWitness):
    """A given that does not cover the spec's box: ``kind`` ``extent`` (``spec``, ``given``: [rows, cols];
    ``outside``: the given's first element outside the spec's matrix, if known) or ``domain`` (``spec``,
    ``given``: threads, elements, groups)."""

    kind: str
    spec: Any
    given: Any
    outside: Mapping[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        body = {"kind": self.kind, "spec": _copy(self.spec), "given": _copy(self.given)}
        if self.outside is not None:
            body["outside"] = _copy(self.outside)
        return body

    def words(self) -> list[str]:
        def side(v: Any) -> str:
            if isinstance(v, Mapping):
                return ", ".join(f"{n} {k}" for k, n in v.items())
            return " x ".join(str(n) for n in v) if isinstance(v, (list, tuple)) else str(v)
        out = [f"{self.kind}: spec {side(self.spec)}, given {side(self.given)}"]
        if self.outside is not None:
            o = self.outside
            out.append(f"lane {o['lane']}, element {o['element']}: cell ({o['row']}, {o['col']}), outside the spec")
        return out


@dataclass(frozen=True, eq=True)
class NotPermuted(CheckWitness):
    """Why a lane is not the spec's lane in another element order: on ``side``, lane ``lane``'s element
    ``i`` holds ``cell`` the other side's lane does not (``kind`` ``not_held``), or two of its elements
    (``first``, ``second``: ``{"i", "element"}``) hold one cell (``kind`` ``lane_repeats``)."""

    kind: str
    side: str
    lane: int
    cell: Mapping[str, int] | None
    i: int | None = None
    element: str | None = None
    first: Mapping[str, Any] | None = None
    second: Mapping[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        if self.kind == "not_held":
            return {"kind": self.kind, "side": self.side, "lane": self.lane, "i": self.i, "element": self.element,
                    "cell": _copy(self.cell)}
        return {"kind": self.kind, "side": self.side, "lane": self.lane, "first": _copy(self.first),
                "second": _copy(self.second), "cell": _copy(self.cell)}

    def words(self) -> list[str]:
        if self.kind == "not_held":
            return [f"{self.side} lane {self.lane}, element {self.element}: {_cell(self.cell)}, not held by the "
                    "other side's lane"]
        a, b = self.first or {}, self.second or {}
        return [f"{self.side} lane {self.lane}, elements {a.get('element')} and {b.get('element')}: both "
                f"{_cell(self.cell)}"]


@dataclass(frozen=True, eq=True)
class ReplicaDiffers(CheckWitness):
    """A thread of the given that is not the copy of its spec lane (copies along ``copy_bits``, or
    ``"blocks"``): its element (lane, i) read as (as_lane, as_i), and the cell each side puts it at."""

    copy_bits: Any
    lane: int
    i: int
    element: str
    as_lane: int
    as_i: int
    as_element: str
    spec: Mapping[str, int] | None
    given: Mapping[str, int] | None

    def to_json(self) -> dict[str, Any]:
        return {"kind": "replica", "copy_bits": _copy(self.copy_bits), "lane": self.lane, "i": self.i,
                "element": self.element, "as_lane": self.as_lane, "as_i": self.as_i, "as_element": self.as_element,
                "spec": _copy(self.spec), "given": _copy(self.given)}

    def words(self) -> list[str]:
        return [f"thread {self.lane}, element {self.element} (as lane {self.as_lane}, element {self.as_element}): "
                f"spec {_cell(self.spec)}, given {_cell(self.given)}"]


# ----------------------------------------------------------------------------- register arithmetic

@dataclass(frozen=True, eq=True)
class RegisterCount(CheckWitness):
    """registers x elements per register (``per_thread``) x ``threads`` = ``total`` against the matrix's
    ``matrix`` elements (held ``replication`` times, when stated); ``listed``: the element list's length.
    ``params_last``: the member is written after the arithmetic (a partial layout's count)."""

    registers: Any
    elements_per_register: Any
    per_thread: Any
    listed: int | None
    threads: int
    total: Any
    matrix: Any
    replication: int | None = None
    params: Mapping[str, int] | None = None
    params_last: bool = False

    def to_json(self) -> dict[str, Any]:
        body = {"registers": self.registers, "elements_per_register": self.elements_per_register,
                "per_thread": self.per_thread, "listed": self.listed, "threads": self.threads, "total": self.total,
                "matrix": self.matrix}
        if self.replication is not None:
            body["replication"] = self.replication
        if self.params_last:
            return body | ({"params": _copy(self.params)} if self.params else {})
        return _with_params(self.params, body)

    def words(self) -> list[str]:
        out = [f"{self.registers} registers x {self.elements_per_register} elements x {self.threads} threads = "
               f"{self.total}, the matrix has {self.matrix}"]
        if self.listed is not None:
            out.append(f"the element list names {self.listed}, {self.per_thread} per thread")
        return out


@dataclass(frozen=True, eq=True)
class RegisterPacking(CheckWitness):
    """A .``register_type`` register (``register_bits``) holds ``fits`` .``type`` elements (``element_bits``),
    not ``elements_per_register``."""

    register_type: str
    register_bits: int
    type: str
    element_bits: int
    elements_per_register: Any
    fits: int
    params: Mapping[str, int] | None = None

    def to_json(self) -> dict[str, Any]:
        return _with_params(self.params, {"register_type": self.register_type, "register_bits": self.register_bits,
                                          "type": self.type, "element_bits": self.element_bits,
                                          "elements_per_register": self.elements_per_register, "fits": self.fits})

    def words(self) -> list[str]:
        return [f"a .{self.register_type} register ({self.register_bits} bits) holds {self.fits} .{self.type}, "
                f"not {self.elements_per_register}"]


@dataclass(frozen=True, eq=True)
class ElementList(CheckWitness):
    """The doc's element list ``list`` names ``found`` at ``position``, where ``expected`` belongs."""

    position: int
    found: str
    expected: str
    list: str
    params: Mapping[str, int] | None = None

    def to_json(self) -> dict[str, Any]:
        return _with_params(self.params, {"position": self.position, "found": self.found, "expected": self.expected,
                                          "list": self.list})

    def words(self) -> builtins.list[str]:  # (``list`` here is the field)
        return [f"element list position {self.position}: {self.found}, expected {self.expected}"]


# ----------------------------------------------------------------------------- handoff

@dataclass(frozen=True, eq=True)
class CellHeldBy(CheckWitness):
    """A cell lane ``lane``'s element needs (``cell``) and the source element holding it (``held_by``:
    ``{"lane", "i", "tile", "element"}``; ``None``: no lane holds it)."""

    lane: int
    i: int
    element: str
    cell: Mapping[str, int] | None
    held_by: Mapping[str, Any] | None
    params: Mapping[str, int] | None = None

    def to_json(self) -> dict[str, Any]:
        return _with_params(self.params, {"lane": self.lane, "i": self.i, "element": self.element,
                                          "cell": _copy(self.cell), "held_by": _copy(self.held_by)})

    def words(self) -> list[str]:
        h = self.held_by
        who = "no lane holds it" if h is None else f"held by lane {h['lane']}, element {h['element']}"
        return [f"lane {self.lane}, element {self.element} needs {_cell(self.cell)}: {who}"]


@dataclass(frozen=True, eq=True)
class ReductionLanes(CheckWitness):
    """A butterfly reduction (``shfl.xor`` by ``masks``) along ``axis`` that is not exact: lane ``lane`` holds
    cells of line ``line`` (a row or a column; of MMA computation ``mma`` when there are several), and lane
    ``other`` is brought by the butterfly but holds no cell of it (``reached``), or holds cells of it but is never
    brought (not ``reached``)."""

    lane: int
    axis: str
    line: int
    other: int
    reached: bool
    masks: tuple[int, ...]
    mma: int | None = None
    params: Mapping[str, int] | None = None

    def to_json(self) -> dict[str, Any]:
        return _with_params(self.params, {"lane": self.lane, "axis": self.axis, "line": self.line, "other": self.other,
                                          "reached": self.reached, "masks": list(self.masks),
                                          **({"mma": self.mma} if self.mma is not None else {})})

    def words(self) -> list[str]:
        line = f"{self.axis} {self.line}{_mma(self.mma)}"
        how = f"lane {self.lane} xor {self.lane ^ self.other}"
        if self.reached:
            return [f"lane {self.lane} holds {line}; the butterfly brings lane {self.other} ({how}), which holds no "
                    f"cell of {line}"]
        return [f"lane {self.lane} holds {line}; lane {self.other} holds cells of {line} too, but the butterfly never "
                f"brings it ({how}: no xor of the masks {', '.join(map(str, self.masks))})"]


# ----------------------------------------------------------------------------- shared memory

@dataclass(frozen=True, eq=True)
class LaneAddress(CheckWitness):
    """A lane's access, at the tile placed at ``origin``, to ``cell``: unplaced (``address`` None) or at a
    misaligned byte ``address``."""

    params: Mapping[str, int]
    lane: int
    origin: Any
    cell: tuple[int, int]
    address: int | None = None

    def to_json(self) -> dict[str, Any]:
        body = {"params": dict(self.params), "lane": self.lane, "origin": _copy(self.origin), "cell": list(self.cell)}
        if self.address is not None:
            body["address"] = self.address
        return body

    def words(self) -> list[str]:
        cell = tuple(self.cell)
        if self.address is None:
            return [f"lane {self.lane} addresses cell {cell}, which the layout does not place"]
        return [f"lane {self.lane} addresses {self.address:#x} (cell {cell}): misaligned"]




# ----------------------------------------------------------------------------- tiled layouts

@dataclass(frozen=True, eq=True)
class TileDiffers(CheckWitness):
    """A thread of a tiled given (``unit`` ``index``, lane ``lane``, repeat ``repeat``) whose element is not
    the spec's element ``as_i`` moved by ``offset`` (read at ``reference``; None: undefined there)."""

    unit: str
    thread: int
    i: int
    element: str
    index: int
    lane: int
    repeat: int
    as_i: int
    as_element: str
    spec: Mapping[str, int] | None
    given: Mapping[str, int] | None
    reference: Mapping[str, Any]
    offset: list[int] | None
    repeat_bits: Any

    def to_json(self) -> dict[str, Any]:
        return {"kind": "tile", "unit": self.unit, "thread": self.thread, "i": self.i, "element": self.element,
                "index": self.index, "lane": self.lane, "repeat": self.repeat, "as_i": self.as_i,
                "as_element": self.as_element, "spec": _copy(self.spec), "given": _copy(self.given),
                "reference": _copy(self.reference), "offset": _copy(self.offset),
                "repeat_bits": _copy(self.repeat_bits)}

    def words(self) -> list[str]:
        return [f"thread {self.thread} ({self.unit} {self.index}, lane {self.lane}), element {self.element} "
                f"(repeat {self.repeat}, as spec element {self.as_element}): spec {_cell(self.spec)}, offset "
                f"{self.offset}, given {_cell(self.given)}"]


@dataclass(frozen=True, eq=True)
class CellCoverage(CheckWitness):
    """A cell (row, col) of a block its sub-tiles hold ``held`` times, not ``expected`` (None: not a whole
    number of times)."""

    row: int
    col: int
    held: int
    expected: int | None

    def to_json(self) -> dict[str, Any]:
        return {"kind": "coverage", "row": self.row, "col": self.col, "held": self.held, "expected": self.expected}

    def words(self) -> list[str]:
        return [f"cell ({self.row}, {self.col}) is held {self.held} times"
                + (f", expected {self.expected}" if self.expected is not None else "")]



# ----------------------------------------------------------------------------- writer and reader of one buffer

_PLACE_KEYS = {"writer_in_range": ("element", "copy", "at"), "reader_in_range": ("element", "at"),
               "no_padding_read": ("element", "at"), "same_place": ("element", "written", "read"),
               "written_once": ("first", "first_copy", "second", "second_copy", "at"),
               "no_foreign_read": ("element", "at", "owner", "owner_copy")}


@dataclass(frozen=True, eq=True)
class BufferPlace(CheckWitness):
    """Where a writer's and a reader's maps of one buffer disagree, at the member ``params``: the element (and
    copy) at fault and the places involved; which fields the check ``check`` states is fixed by it
    (``writer_in_range``, ``reader_in_range``, ``written_once``, ``same_place``, ``no_foreign_read``,
    ``no_padding_read``)."""

    check: str
    params: Mapping[str, int]
    element: Mapping[str, int] | None = None
    copy: Mapping[str, int] | None = None
    first: Mapping[str, int] | None = None
    first_copy: Mapping[str, int] | None = None
    second: Mapping[str, int] | None = None
    second_copy: Mapping[str, int] | None = None
    at: Mapping[str, int] | None = None
    written: Mapping[str, int] | None = None
    read: Mapping[str, int] | None = None
    owner: Mapping[str, int] | None = None
    owner_copy: Mapping[str, int] | None = None

    def to_json(self) -> dict[str, Any]:
        return {"params": _copy(self.params), **{k: _copy(getattr(self, k)) for k in _PLACE_KEYS[self.check]}}

    def words(self) -> list[str]:
        def pt(p: Mapping[str, int] | None) -> str:
            return "undefined" if p is None else "(" + ", ".join(f"{k} = {v}" for k, v in p.items()) + ")"
        if self.check == "written_once":
            return [f"{pt(self.first)} and {pt(self.second)} are written at one place {pt(self.at)}"]
        if self.check == "same_place":
            return [f"{pt(self.element)} is written at {pt(self.written)} and read from {pt(self.read)}"]
        if self.check == "no_foreign_read":
            return [f"{pt(self.element)} is read from {pt(self.at)}, where {pt(self.owner)} is written"]
        return [f"{pt(self.element)}: {self.check.replace('_', ' ')} fails at {pt(self.at)}"]


# ----------------------------------------------------------------------------- reviewed facts

@dataclass(frozen=True, eq=True)
class ReviewedFacts(CheckWitness):
    """A page's layout (at ``file``:``line``:``col``) whose register facts differ from the reviewed spec's
    (``facts``: FACT -> ``{"reviewed", "page"}``)."""

    file: str
    line: int
    col: int
    facts: Mapping[str, Mapping[str, str]]

    def to_json(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line, "col": self.col, "facts": _copy(self.facts)}

    def words(self) -> list[str]:
        return [f"{self.file}:{self.line}:{self.col}"] + [f"{k}: {v['reviewed']!r} -> {v['page']!r}"
                                                          for k, v in self.facts.items()]


__all__ = ["BufferPlace", "CellCoverage", "CellHeldBy", "CheckWitness", "DomainDiffers", "ElementList",
           "FragmentDiffers", "LaneAddress", "NotPermuted", "ParamsDiffer", "RegisterCount", "RegisterPacking",
           "ReplicaDiffers", "ReviewedFacts", "SpecGivenDiffer", "TileDiffers", "at_member"]
