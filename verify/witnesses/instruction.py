"""The witnesses of an instruction's checks (``verify.checks.instruction``, ``verify.checks.sparse``,
``verify.checks.tmem_lanes``): each a frozen ``CheckWitness`` that owns its JSON and its words.  Re-exported by
``verify.witnesses`` (import them from there).

* ``OperandRegisters``, ``OperandExtent``, ``AxisCoverage``, ``KCoverage``, ``LaneGroups``: an instruction's
  operands against its shape;
* ``SparseRange``, ``SparseMetadata``, ``MetadataField``, ``MetadataBudget``: sparse A and its metadata;
* ``TmemLane``: a warp reaching a TMEM lane outside its quarter (``tmem_lanes``).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .checks import CheckWitness, _copy
from .core import _mma, _with_params


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


# ----------------------------------------------------------------------------- Tensor Memory

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


__all__ = ["AxisCoverage", "KCoverage", "LaneGroups", "MetadataBudget", "MetadataField", "OperandExtent",
           "OperandRegisters", "SparseMetadata", "SparseRange", "TmemLane"]
