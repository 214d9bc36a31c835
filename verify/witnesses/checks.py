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
* ``OperandRegisters``, ``OperandExtent``, ``AxisCoverage``, ``KCoverage``, ``LaneGroups``: an instruction's
  operands against its shape;
* ``CellHeldBy``: a cell a lane needs and who holds it (``handoff``);
* ``ReductionLanes``: the lane pair that breaks a butterfly reduction inside a fragment (``handoff --reduce``);
* ``SparseRange``, ``SparseMetadata``, ``MetadataField``, ``MetadataBudget``: sparse A and its metadata;
* ``LaneAddress``: a lane's shared-memory access that is unplaced or misaligned (``banks``);
* ``BufferPlace``: where a writer's and a reader's maps of one buffer disagree (``consistency``);
* ``TmemLane``: a warp reaching a TMEM lane outside its quarter (``tmem_lanes``);
* ``ReviewedFacts``: a page's register facts that differ from the reviewed spec's (``register_facts``);
* ``TileDiffers``, ``CellCoverage``: a given that is not the spec tiled over a block (``conform``'s ``tiled``).

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


# ----------------------------------------------------------------------------- an instruction's operands

@dataclass(frozen=True, eq=True)
class OperandRegisters(CheckWitness):
    """One operand's register facts against the instruction's shape (rows x cols over ``threads``:
    ``expected_per_thread``; ``k``: the shape's K, if any)."""

    operand: str
    layout: str
    registers: Any
    register_type: str
    register_bits: int | None
    elements_per_register: Any
    element_bits: int | None
    listed: int | None
    per_thread: Any
    expected_per_thread: Any
    rows: int
    cols: int
    threads: int
    k: int | None
    params: Mapping[str, int] | None = None

    def to_json(self) -> dict[str, Any]:
        return _with_params(self.params, {
            "operand": self.operand, "layout": self.layout, "registers": self.registers,
            "register_type": self.register_type, "register_bits": self.register_bits,
            "elements_per_register": self.elements_per_register, "element_bits": self.element_bits,
            "listed": self.listed, "per_thread": self.per_thread, "expected_per_thread": self.expected_per_thread,
            "rows": self.rows, "cols": self.cols, "threads": self.threads, "k": self.k})

    def words(self) -> list[str]:
        return [f"{self.operand} ({self.layout}): {self.registers} .{self.register_type} registers x "
                f"{self.elements_per_register} = {self.per_thread} per thread, {self.rows} x {self.cols} over "
                f"{self.threads} threads needs {self.expected_per_thread}"]


@dataclass(frozen=True, eq=True)
class OperandExtent(CheckWitness):
    """An operand declared ``declared`` (rows, cols) where the instruction's shape needs ``expected``."""

    operand: str
    layout: str
    declared: tuple[int, int]
    expected: tuple[int, int]
    params: Mapping[str, int] | None = None

    def to_json(self) -> dict[str, Any]:
        return _with_params(self.params, {"operand": self.operand, "layout": self.layout,
                                          "declared": list(self.declared), "expected": list(self.expected)})

    def words(self) -> list[str]:
        return [f"{self.operand} ({self.layout}) is declared {self.declared[0]} x {self.declared[1]}, the shape "
                f"needs {self.expected[0]} x {self.expected[1]}"]


@dataclass(frozen=True, eq=True)
class AxisCoverage(CheckWitness):
    """An operand whose ``axis`` (row, col) misses value ``missing`` or reaches ``extra`` outside its extent
    (in MMA computation ``mma``)."""

    operand: str
    layout: str
    axis: str
    missing: int | None
    extra: int | None
    mma: int | None = None
    params: Mapping[str, int] | None = None

    def to_json(self) -> dict[str, Any]:
        body = {"operand": self.operand, "layout": self.layout, "axis": self.axis, "missing": self.missing,
                "extra": self.extra}
        if self.mma is not None:
            body["mma"] = self.mma
        return _with_params(self.params, body)

    def words(self) -> list[str]:
        what = f"reaches no {self.axis} {self.missing}" if self.missing is not None else \
            f"reaches {self.axis} {self.extra}, outside its extent"
        return [f"{self.operand} ({self.layout}) {what}{_mma(self.mma)}"]


@dataclass(frozen=True, eq=True)
class KCoverage(CheckWitness):
    """A ``k`` that A and B do not both reach inside [0, K): the first element of each reaching it (``A``,
    ``B``: ``{"lane", "i", "element"}``; ``None``: none), in MMA computation ``mma``."""

    k: int
    A: Mapping[str, Any] | None
    B: Mapping[str, Any] | None
    mma: int | None = None
    params: Mapping[str, int] | None = None

    def to_json(self) -> dict[str, Any]:
        body = {"k": self.k, "A": _copy(self.A), "B": _copy(self.B)}
        if self.mma is not None:
            body["mma"] = self.mma
        return _with_params(self.params, body)

    def words(self) -> list[str]:
        def who(e: Mapping[str, Any] | None) -> str:
            return "no element" if e is None else f"lane {e['lane']}, element {e['element']}"
        return [f"k = {self.k}{_mma(self.mma)}: A {who(self.A)}, B {who(self.B)}"]


@dataclass(frozen=True, eq=True)
class LaneGroups(CheckWitness):
    """The lanes of the MMA computations: a lane assigned a computation ``mma`` that does not exist (``kind``
    ``range``), a computation with ``lanes`` lanes, not ``expected`` (``size``), or a lane holding elements
    of operand ``holds`` but none of ``lacks`` (``holders``)."""

    kind: str
    mma: int
    lane: int | None = None
    lanes: int | None = None
    expected: int | None = None
    holds: str | None = None
    lacks: str | None = None
    params: Mapping[str, int] | None = None

    def to_json(self) -> dict[str, Any]:
        if self.kind == "size":
            body: dict[str, Any] = {"kind": self.kind, "mma": self.mma, "lanes": self.lanes, "expected": self.expected}
        elif self.kind == "range":
            body = {"kind": self.kind, "lane": self.lane, "mma": self.mma}
        else:
            body = {"kind": self.kind, "lane": self.lane, "mma": self.mma, "holds": self.holds, "lacks": self.lacks}
        return _with_params(self.params, body)

    def words(self) -> list[str]:
        if self.kind == "size":
            return [f"MMA computation {self.mma + 1} has {self.lanes} lanes, expected {self.expected}"]
        if self.kind == "range":
            return [f"lane {self.lane} is assigned MMA computation index {self.mma}, which does not exist"]
        return [f"lane {self.lane}{_mma(self.mma)} holds {self.holds} but no {self.lacks}"]


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


# ----------------------------------------------------------------------------- sparse A

@dataclass(frozen=True, eq=True)
class SparseRange(CheckWitness):
    """A kept element of sparse A (row ``row``) whose range [firstcol ... lastcol] (rank ``rank``) is not
    whole chunks inside [0, K): ``reason``."""

    lane: int
    i: int
    element: str
    row: int
    firstcol: int
    lastcol: int
    rank: int
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {"lane": self.lane, "i": self.i, "element": self.element, "row": self.row, "firstcol": self.firstcol,
                "lastcol": self.lastcol, "rank": self.rank, "reason": self.reason}

    def words(self) -> list[str]:
        return [f"lane {self.lane}, element {self.element} (row {self.row}): {self.reason}"]


@dataclass(frozen=True, eq=True)
class SparseMetadata(CheckWitness):
    """A metadata value ``metadata`` that sends element ``first`` outside its chunk (``second`` None: at
    ``logical_col``), or two kept elements of one (row, chunk) to one logical column or out of order."""

    metadata: int
    first: Mapping[str, Any]
    second: Mapping[str, Any] | None
    row: int
    chunk: int
    logical_col: int | None
    logical_cols: tuple[int, int] | None = None
    compressed_cols: tuple[int, int] | None = None

    def to_json(self) -> dict[str, Any]:
        if self.second is None:
            return {"metadata": self.metadata, "first": _copy(self.first), "second": None, "row": self.row,
                    "logical_col": self.logical_col, "chunk": self.chunk}
        return {"metadata": self.metadata, "first": _copy(self.first), "second": _copy(self.second), "row": self.row,
                "chunk": self.chunk, "logical_col": self.logical_col, "logical_cols": list(self.logical_cols or ()),
                "compressed_cols": list(self.compressed_cols or ())}

    def words(self) -> list[str]:
        a = self.first
        if self.second is None:
            return [f"metadata {self.metadata}: lane {a['lane']}, element {a['element']} goes to column "
                    f"{self.logical_col}, outside chunk {self.chunk} (row {self.row})"]
        b = self.second
        return [f"metadata {self.metadata}: lane {a['lane']}, element {a['element']} and lane {b['lane']}, element "
                f"{b['element']} (row {self.row}, chunk {self.chunk}) go to columns "
                f"{' and '.join(str(c) for c in self.logical_cols or ())}"]


@dataclass(frozen=True, eq=True)
class MetadataField(CheckWitness):
    """A metadata field (lane ``lane``, nibble ``nibble``) a selector value names: undefined or outside rows x
    chunks (``kind`` ``in_range``), the same (row, chunk) as (lane2, nibble2) (``injective``), no field for
    (row, chunk) (``surjective``), or of a row the lane's group of four does not hold (``kind`` None)."""

    selector: int
    kind: str | None
    row: int | None
    chunk: int | None
    lane: int | None = None
    nibble: int | None = None
    lane2: int | None = None
    nibble2: int | None = None

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {"selector": self.selector}
        if self.kind is not None:
            body["kind"] = self.kind
        if self.lane is not None:
            body |= {"lane": self.lane, "nibble": self.nibble}
        if self.lane2 is not None:
            body |= {"lane2": self.lane2, "nibble2": self.nibble2}
        return body | {"row": self.row, "chunk": self.chunk}

    def words(self) -> list[str]:
        where = f"(row {self.row}, chunk {self.chunk})"
        if self.lane is None:
            return [f"selector {self.selector}: no field for {where}"]
        field = f"selector {self.selector}, lane {self.lane}, nibble {self.nibble}"
        if self.lane2 is not None:
            return [f"{field} and lane {self.lane2}, nibble {self.nibble2}: both {where}"]
        return [f"{field}: {where}"]


@dataclass(frozen=True, eq=True)
class MetadataBudget(CheckWitness):
    """The metadata's arithmetic: the selector values ``selectors``, the lanes each needs, the fields."""

    selectors: tuple[int, ...]
    lanes_needed: Any
    fields: Any

    def to_json(self) -> dict[str, Any]:
        return {"selectors": list(self.selectors), "lanes_needed": _copy(self.lanes_needed),
                "fields": _copy(self.fields)}

    def words(self) -> list[str]:
        return [f"selectors {list(self.selectors)}: {self.lanes_needed} lanes needed, {self.fields} fields"]


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


# ----------------------------------------------------------------------------- Tensor Memory, reviewed facts

@dataclass(frozen=True, eq=True)
class TmemLane(CheckWitness):
    """A thread (warp ``warp``, lane ``lane``) of a warpgroup whose element reaches TMEM lane ``tmem_lane``
    (None: undefined), outside its warp's quarter ``allowed`` (lane base + ``offset``)."""

    offset: int
    warp: int
    thread: int
    lane: int
    i: int
    element: str
    tmem_lane: int | None
    allowed: tuple[int, int]
    params: Mapping[str, int] | None = None

    def to_json(self) -> dict[str, Any]:
        return _with_params(self.params, {"offset": self.offset, "warp": self.warp, "thread": self.thread,
                                          "lane": self.lane, "i": self.i, "element": self.element,
                                          "tmem_lane": self.tmem_lane, "allowed": list(self.allowed)})

    def words(self) -> list[str]:
        where = "no TMEM lane" if self.tmem_lane is None else f"TMEM lane {self.tmem_lane}"
        return [f"warp {self.warp} (thread {self.thread}, lane {self.lane}), element {self.element}: {where}, "
                f"outside {self.allowed[0]}-{self.allowed[1]}"]


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

__all__ = ["AxisCoverage", "BufferPlace", "CellCoverage", "CellHeldBy", "CheckWitness", "DomainDiffers", "ElementList",
           "FragmentDiffers", "KCoverage", "LaneAddress", "LaneGroups", "MetadataBudget", "MetadataField",
           "NotPermuted", "OperandExtent", "OperandRegisters", "ParamsDiffer", "RegisterCount", "RegisterPacking",
           "ReplicaDiffers", "ReviewedFacts", "SparseMetadata", "SparseRange", "SpecGivenDiffer", "TileDiffers",
           "TmemLane", "at_member"]
