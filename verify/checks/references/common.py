"""What every reference shares: a reference layout evaluated into a table, conformed to its spec layout.

A reference (CuTe compiled, Triton, tensor-layouts...) evaluates its own layouts numerically; each
becomes a table of (lane, i) -> (row, col) entries (``layout.notations.table``), read as a layout of
the spec's instruction operand (``to_layout``), and ``conform`` decides it with both engines.  The row
is the crosscheck ``Row`` (``agree``, ``differ``, ``malformed``, ``unmatched``), so every reference
reports in one format.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...layout.model import Layout, MapLayout
from ...layout.named import TableMap
from ...layout.notations import NotationError, table_from_entries, table_to_formula, to_layout
from ..conform import conform
from ..crosscheck import Row
from ..maps import same

Entry = tuple[int, int, "int | None", "int | None"]


@dataclass(frozen=True)
class Evaluated:
    """One layout of a reference, evaluated: its entries and where the reference states it."""

    name: str          # the reference's name for it (trait, Gluon layout, atom)
    part: str          # operand or field (A, B, C, R, ...)
    where: str         # file (relative to the reference's root) or module
    line: int
    spec: Layout | MapLayout | None   # the spec layout (a family: its id; a map layout) it claims to be
    params: tuple[tuple[str, int], ...] = ()
    entries: tuple[Entry, ...] = ()
    text: str = ""     # the reference's own text for the layout
    unmatched: str = ""   # why there is no spec to compare with
    error: str = ""       # why it could not be evaluated (a finding about the reference)
    map_rows: tuple[tuple[int, ...], ...] = ()   # for a map spec (MapLayout): (inputs..., outputs...) per point


def conform_rows(items: Iterable[Evaluated], timeout: float, cache: dict | None = None) -> list[Row]:
    """Each evaluated layout against its spec (member), as rows; identical tables are decided once."""
    cache = {} if cache is None else cache
    out: list[Row] = []
    for ev in items:
        if ev.error:
            out.append(Row("malformed", ev.name, ev.part, ev.where, ev.line,
                           spec=ev.spec.id if ev.spec is not None else "", detail=ev.error, layout=ev.text,
                           params=ev.params))
            continue
        if ev.spec is None or ev.unmatched:
            out.append(Row("unmatched", ev.name, ev.part, ev.where, ev.line, detail=ev.unmatched or "no spec",
                           layout=ev.text, params=ev.params))
            continue
        key = (ev.spec.id, ev.params, ev.entries, ev.map_rows)
        if key not in cache:
            cache[key] = _decide(ev, timeout)
        res = cache[key]
        if isinstance(res, str):
            out.append(Row("malformed", ev.name, ev.part, ev.where, ev.line, spec=ev.spec.id, detail=res,
                           layout=ev.text, params=ev.params))
            continue
        kind = "agree" if res.status == "equal" else "differ"
        detail = "" if kind == "agree" else res.message.split("\n")[0]
        out.append(Row(kind, ev.name, ev.part, ev.where, ev.line, ev.spec.id, res.status, detail, res.counterexample,
                       ev.text, ev.params))
    return out


def _decide(ev: Evaluated, timeout: float) -> Any:
    assert ev.spec is not None
    member = ev.spec.instance(**dict(ev.params)) if ev.params else ev.spec
    if isinstance(member, MapLayout):
        return _decide_map(ev, member, timeout)
    try:
        imp = table_to_formula(table_from_entries(ev.entries), member.prefix, text=ev.text)
        given = to_layout(imp, member, source=ev.where)
        return conform(member, given, timeout, notation="table")
    except NotationError as e:
        return e.message


@dataclass(frozen=True)
class _MapVerdict:
    """A map comparison in conform's terms (``equal`` or not), for the rows."""

    status: str
    message: str
    counterexample: Any


def _decide_map(ev: Evaluated, member: MapLayout, timeout: float) -> Any:
    """The reference's table against the spec map member: ``maps.same``, both engines."""
    try:
        table = TableMap(tuple(member.inputs), tuple(member.outputs), ev.map_rows)
    except ValueError as e:
        return str(e)
    res = same(member.map, table, timeout, ("spec", "reference"))
    status = "equal" if res.status == "proved" else ("differs" if res.status == "refuted" else res.status)
    return _MapVerdict(status, res.message, res.counterexample)


def find(layouts: Iterable[Layout], layout_id: str) -> Layout | None:
    for lay in layouts:
        if lay.id == layout_id:
            return lay
    return None


def located(dist: str, rel: str) -> Path | None:
    """``rel`` inside the installed distribution ``dist`` (found through its metadata: nothing is imported), or
    None when the distribution is not installed."""
    from importlib.metadata import PackageNotFoundError, distribution
    try:
        return Path(str(distribution(dist).locate_file(rel)))
    except PackageNotFoundError:
        return None


def version_of(dist: str) -> str:
    """The installed version of ``dist`` ('?' when it is not installed)."""
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version(dist)
    except PackageNotFoundError:
        return "?"


def files_root(path: str | Path | None, installed: Path | None, missing: str, files: Iterable[str]) -> Path:
    """The directory a file-reading reference reads: ``path`` when given, else the installed one;
    ``FileNotFoundError`` with ``missing`` (the install hint) or with the files expected."""
    root = Path(path) if path is not None else installed
    if root is None:
        raise FileNotFoundError(missing)
    if not root.is_dir():
        raise FileNotFoundError(f"{root}: not a directory holding {', '.join(files)}")
    return root
