"""Explicit layout tables: one ``{"lane", "i", "row", "col"}`` entry per fragment element.

A table is the notation of last resort (a layout dumped from hardware, from another tool, or from
``ptx-verify table ID --format json``), so it is read strictly: every entry is checked with its
position, a (lane, i) given twice is an error, a missing one is simply undefined, and ``row`` /
``col`` of ``null`` mean "this element holds no cell".  The formula stays small however large the
table: one definition ``key = %laneid * values + i`` and, for ``row`` and ``col``, one case per
distinct value with the set of keys that take it (``row = 8 if key = {4, 5, ...}``) — about two
numbers per entry, evaluated by set membership.
"""
from __future__ import annotations

from typing import Any, Literal, overload

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property, lru_cache

import numpy as np

from verify.formula import BinOp, Case, Definition, Formula, InSet, Num, Ref, Var

from .cute import domain_condition
from ...files import json_text
from .errors import JsonDoc, NotationError, TVImport, decode_source, load_json
from .registry import Notation, register

MAX_ENTRIES = 1 << 18
MAX_LANE = 1 << 10          # threads: a CTA has at most 1024
MAX_I = 1 << 12             # elements per thread
MAX_COORD = 1 << 20


@dataclass(frozen=True)
class TableEntry:
    lane: int
    i: int
    row: int | None
    col: int | None


@dataclass(frozen=True)
class LayoutTable:
    entries: tuple[TableEntry, ...]
    rows: int | None = None
    cols: int | None = None

    @property
    def threads(self) -> int:
        return int(self.columns["lane"].max(initial=-1)) + 1

    @property
    def values(self) -> int:
        return int(self.columns["i"].max(initial=-1)) + 1

    @cached_property
    def columns(self) -> dict[str, np.ndarray]:
        """The entries as columns (``lane``, ``i``, ``row``, ``col``; -1 where a cell is undefined), read once."""
        n = len(self.entries)
        out = {k: np.fromiter((getattr(e, k) for e in self.entries), np.int64, n) for k in ("lane", "i")}
        for k in ("row", "col"):
            out[k] = np.fromiter((-1 if getattr(e, k) is None else getattr(e, k) for e in self.entries), np.int64, n)
        return out

    def lookup(self) -> dict[tuple[int, int], tuple[int | None, int | None]]:
        return {(e.lane, e.i): (e.row, e.col) for e in self.entries}


@overload
def _int_field(doc: JsonDoc, entry: dict, key: str, limit: int, nullable: Literal[False]) -> int: ...


@overload
def _int_field(doc: JsonDoc, entry: dict, key: str, limit: int, nullable: bool) -> int | None: ...


def _int_field(doc: JsonDoc, entry: dict, key: str, limit: int, nullable: bool) -> int | None:
    if key not in entry:
        raise doc.error(f"entry has no {key!r}", entry)
    v = entry[key]
    if v is None and nullable:
        return None
    if isinstance(v, bool) or not isinstance(v, int):
        raise doc.error(f"{key!r} must be an integer{' or null' if nullable else ''}, found {json_text(v)}", entry, key)
    if not 0 <= v < limit:
        raise doc.error(f"{key!r} = {v} is outside 0..{limit - 1}", entry, key)
    return v


def table_document(text: str | bytes, source: str) -> tuple[Any, Any]:
    """A table file's JSON with positions (decoded, not empty): the document and its top value."""
    text = decode_source(text, source)
    if not text.strip():
        raise NotationError("empty table", 1, 1, source)
    doc = load_json(text, source)
    return doc, doc.value


def entry_list(doc: Any, top: Any, entries: Any) -> list:
    """The entries of a table document: ``entries`` (read from an object ``top`` by the caller), or ``top``
    itself when it is a bare list; anything else is an error; at most ``MAX_ENTRIES``."""
    if isinstance(top, list):
        entries = top
    elif not isinstance(top, dict):
        raise doc.error("expected an object with \"entries\" or a list of entries", top)
    if len(entries) > MAX_ENTRIES:
        raise doc.error(f"{len(entries)} entries (limit {MAX_ENTRIES})", entries)
    return entries


def parse_table(text: str | bytes, source: str = "argument") -> LayoutTable:
    """``{"entries": [...], "rows": R, "cols": C, ...}`` or a bare list of entries.  Keys other
    than lane/i/row/col (``element``, ``mma``...) are tolerated."""
    doc, top = table_document(text, source)
    rows = cols = None
    entries = None
    if isinstance(top, dict):
        if "entries" not in top:
            raise doc.error("expected an object with \"entries\" (or a bare list of entries)", top)
        for key in ("rows", "cols"):
            if key in top and top[key] is not None:
                v = _int_field(doc, top, key, MAX_COORD + 1, False)
                if v == 0:
                    raise doc.error(f"{key!r} must be >= 1", top, key)
                rows, cols = (v, cols) if key == "rows" else (rows, v)
        entries = top["entries"]
        if not isinstance(entries, list):
            raise doc.error("\"entries\" must be a list", top, "entries")
    entries = entry_list(doc, top, entries)
    seen: dict[tuple[int, int], int] = {}  # (lane, i) -> its entry's index (a position only when an error asks)
    out = []
    for j, e in enumerate(entries):
        if not isinstance(e, dict):
            raise doc.error("an entry must be an object with lane, i, row, col", entries, j)
        lane = _int_field(doc, e, "lane", MAX_LANE, False)
        i = _int_field(doc, e, "i", MAX_I, False)
        row = _int_field(doc, e, "row", MAX_COORD, True)
        col = _int_field(doc, e, "col", MAX_COORD, True)
        if rows is not None and row is not None and row >= rows:
            raise doc.error(f"row {row} is outside the table's {rows} rows", e, "row")
        if cols is not None and col is not None and col >= cols:
            raise doc.error(f"col {col} is outside the table's {cols} cols", e, "col")
        point = (lane, i)
        if point in seen:
            first = doc.where(entries, seen[point])
            raise doc.error(f"lane {lane}, i {i} appears twice (first at {first[0]}:{first[1]})", entries, j)
        seen[point] = j
        out.append(TableEntry(lane, i, row, col))
    if not out:
        raise doc.error("the table has no entries", entries)
    return LayoutTable(tuple(out), rows, cols)


def table_to_formula(table: LayoutTable, prefix: str | None = None, *, operand: str | None = None,
                     text: str = "") -> TVImport:
    """``row``/``col`` as one case per distinct value over a set of ``key = %laneid * values + i``
    (the element prefix defaults to the operand letter, ``a`` when no operand is given)."""
    threads, values = table.threads, table.values
    if threads < 1:
        raise NotationError("the table has no entries")
    key_expr = BinOp("+", BinOp("*", Var("lane"), Num(values)), Var("i")) if values > 1 else Var("lane")
    defs = [Definition("key", (Case(key_expr, domain_condition(threads, values)),))]
    c = table.columns
    keys = c["lane"] * values + c["i"]
    for name in ("row", "col"):
        defined = c[name] >= 0  # a table's cells are never negative: -1 stands for undefined
        v, k = c[name][defined], keys[defined]
        order = np.lexsort((k, v))  # by value, then key: each value's keys in order
        v, k = v[order], k[order]
        starts = np.flatnonzero(np.r_[True, v[1:] != v[:-1]]) if v.size else np.zeros(0, np.int64)
        cases = tuple(Case(Num(int(v[a])), InSet(Ref("key"), tuple(part.tolist())))
                      for a, part in zip(starts.tolist(), np.split(k, starts[1:])))
        if not cases:  # nothing defined: a case that never applies keeps the definition well-formed
            cases = (Case(Num(0), InSet(Ref("key"), (-1,))),)
        defs.append(Definition(name, cases))
    extent = (table.rows, table.cols) if table.rows is not None and table.cols is not None else None
    op = operand.upper() if operand else None
    formula = Formula(tuple(defs), prefix if prefix is not None else (op.lower() if op else "a"))
    return TVImport(formula, threads, values, text, "table", extent, op)


def table_from_entries(entries: Iterable[tuple[int, int, int | None, int | None]], rows: int | None = None,
                       cols: int | None = None) -> LayoutTable:
    """A table built in code (e.g. from a formula evaluated cell by cell); same checks as text."""
    seen: set[tuple[int, int]] = set()
    out = []
    for lane, i, row, col in entries:
        if (lane, i) in seen:
            raise NotationError(f"lane {lane}, i {i} appears twice")
        for label, v, limit in (("lane", lane, MAX_LANE), ("i", i, MAX_I), ("row", row, MAX_COORD),
                                ("col", col, MAX_COORD)):
            if v is None and label in ("row", "col"):
                continue
            if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < limit:
                raise NotationError(f"{label} = {json_text(v)} is outside 0..{limit - 1}")
        seen.add((lane, i))
        out.append(TableEntry(lane, i, row, col))
    if not out:
        raise NotationError("the table has no entries")
    return LayoutTable(tuple(out), rows, cols)


def import_table(text: str | bytes, prefix: str | None = None, *, operand: str | None = None,
                 source: str = "argument") -> TVImport:
    """``parse_table`` then ``table_to_formula`` (the ``conform --table FILE`` path).  Memoised by value (the
    text, prefix, operand and source; the result is immutable): a table given against a family is read against
    each member (32 for a wgmma N), and reading one 16,384-entry table took 0.8 s, 26 s for the 32 members."""
    return _import_table(text, prefix, operand, source)


@lru_cache(maxsize=4)
def _import_table(text: str | bytes, prefix: str | None, operand: str | None, source: str) -> TVImport:
    table = parse_table(text, source)
    raw = text.decode("utf-8") if isinstance(text, (bytes, bytearray)) else text
    return table_to_formula(table, prefix, operand=operand, text=raw)


def _read(text: str | bytes, like: Any, *, source: str = "argument") -> TVImport:
    return import_table(text, like.prefix, operand=like.operand, source=source)


register(Notation(
    "table", "--table", "FILE", False, "table JSON: entries {lane, i, row, col} (as 'table --format json')", _read,
    order=4, api_doc="An explicit table: ``{\"entries\": [{\"lane\", \"i\", \"row\", \"col\"}, ...]}`` (what "
                     "``ptx-verify table ID --format json`` prints) or a bare list of entries."))
