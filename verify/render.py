"""Renderers: results -> text and JSON (schema 1).  Pure functions of their input."""
from __future__ import annotations

import json
from typing import Any, Sequence

from .api import Report
from .checks import cells_for, is_sparse_range
from .results import SCHEMA
from .spec import Layout

_MARK = {"proved": "ok", "refuted": "FAIL", "unknown": "??", "error": "ERR"}


def to_json(obj: Any) -> str:
    """Canonical JSON: stable key order as built, two-space indent, trailing newline."""
    return json.dumps(obj, indent=2, ensure_ascii=False) + "\n"


def check_json(report: Report, timings: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {
        "schema": SCHEMA,
        "as_expected": report.as_expected,
        "layouts": [r.to_json(timings) for r in report.results],
        "findings": [f.to_json() for f in report.findings],
    }
    if report.instructions:
        out["instructions"] = [i.to_json() for i in report.instructions]  # type: ignore[attr-defined]
    if report.doc_findings:
        out["doc_findings"] = [f.to_json() for f in report.doc_findings]
    return out


def check_text(report: Report) -> str:
    lines: list[str] = []
    for r in report.results:
        lay = r.layout
        marks = " ".join(f"{c.check}:{_MARK.get(c.status, c.status)}" for c in r.checks)
        tag = "" if r.as_expected else "  <-- UNEXPECTED"
        known = "  (known erratum)" if r.as_expected and any(c.expected == "refuted" for c in r.checks) else ""
        derived = "  [derived: not stated by the doc text]" if lay.derived and not lay.derived.startswith("same as") else ""
        lines.append(f"{lay.id:44s} {marks}{known}{derived}{tag}")
        for c in r.checks:
            if c.status != "proved" or c.expected != "proved":
                exp = "" if c.as_expected else f" [expected {c.expected}]"
                lines.append(f"    {c.check} {c.status}{exp}: {c.message}")
    for ins in report.instructions:
        lines.extend(ins.text_lines())  # type: ignore[attr-defined]
    for f in report.findings:
        if f.check == "syntax":
            exp = "" if f.as_expected else f" [expected {f.expected}]"
            lines.append(f"{f.layout:44s} syntax:FAIL{exp}  {f.message}")
    if report.doc_findings:
        lines.append("")
        lines.append("errata in the doc text (from ingest):")
        lines.extend(f"  {f.one_line()}" for f in report.doc_findings)
    n = len(report.results)
    bad = sum(1 for r in report.results if not r.as_expected)
    errata = sum(1 for r in report.results if r.as_expected and any(c.expected == "refuted" for c in r.checks))
    lines.append("")
    lines.append(f"{n} layouts: {n - bad} as expected ({errata} with known errata), {bad} unexpected"
                 + ("" if report.as_expected else "  -> FAIL"))
    return "\n".join(lines) + "\n"


def list_json(layouts: Sequence[Layout]) -> dict[str, Any]:
    return {"schema": SCHEMA, "layouts": [
        {"id": lay.id, "instruction": lay.instruction, "shape": str(lay.shape), "operand": lay.operand,
         "types": list(lay.types), "variant": lay.variant, "section": lay.source.section,
         "corrected": lay.corrected, "derived": lay.derived or None} for lay in layouts]}


def list_text(layouts: Sequence[Layout]) -> str:
    rows = [f"{lay.id:48s} {lay.source.section:12s} {'corrected' if lay.corrected else ''}"
            for lay in layouts]
    return "\n".join(r.rstrip() for r in rows) + "\n"


# ----------------------------------------------------------------------------- table

def table_entries(lay: Layout) -> list[dict[str, Any]]:
    cells = cells_for(lay)
    out = []
    for lane in range(lay.threads):
        for i in range(lay.n_elements):
            cell = cells.py_cell(lane, i)
            e: dict[str, Any] = {"lane": lane, "i": i, "element": lay.element_name(i),
                                 "row": cell[0] if cell else None, "col": cell[1] if cell else None}
            if lay.groups > 1:
                e["mma"] = lay.group_of(lane)
            out.append(e)
    return out


def table_json(lay: Layout, metadata: int | None = None) -> dict[str, Any]:
    """Schema-1 table; sparse A entries add chunk and logical column for a metadata value."""
    out: dict[str, Any] = {"schema": SCHEMA, "id": lay.id, "rows": lay.rows, "cols": lay.cols,
                           "groups": lay.groups}
    if is_sparse_range(lay):
        from .sparse import model, table_entries as sparse_entries  # noqa: PLC0415
        md = model(lay)
        out["metadata"] = f"0x{(md.canonical if metadata is None else metadata):08x}"
        out["entries"] = sparse_entries(lay, metadata)
    else:
        out["entries"] = table_entries(lay)
    return out


def table_text(lay: Layout, metadata: int | None = None) -> str:
    """The matrix as a grid; each cell ``T<lane>:<element>``, '.' empty, '!' shared.

    Sparse A shows the compressed view and the logical view (under ``metadata``) side by side.
    """
    if is_sparse_range(lay):
        from .sparse import table_text as sparse_text  # noqa: PLC0415
        return sparse_text(lay, metadata)
    entries = table_entries(lay)
    out: list[str] = [f"{lay.id}  ({lay.rows} x {lay.cols}, {lay.threads} threads x {lay.n_elements} elements)"]
    for g in range(lay.groups):
        grid: dict[tuple[int, int], list[str]] = {}
        outside: list[str] = []
        for e in entries:
            if e.get("mma", 0) != g:
                continue
            label = f"T{e['lane']}:{e['element']}"
            if e["row"] is None or not (0 <= e["row"] < lay.rows and 0 <= e["col"] < lay.cols):
                outside.append(f"{label}->({e['row']},{e['col']})")
                continue
            grid.setdefault((e["row"], e["col"]), []).append(label)
        width = max([len(v[0]) + (1 if len(v) > 1 else 0) for v in grid.values()] + [6])
        if lay.groups > 1:
            out.append(f"MMA computation {g + 1}:")
        out.append(" " * 5 + "".join(f"{c:>{width + 1}}" for c in range(lay.cols)))
        for r in range(lay.rows):
            row = f"{r:>4} "
            for c in range(lay.cols):
                owners = grid.get((r, c))
                s = "." if not owners else owners[0] + ("!" if len(owners) > 1 else "")
                row += f"{s:>{width + 1}}"
            out.append(row)
        shared = {k: v for k, v in grid.items() if len(v) > 1}
        empty = sum(1 for r in range(lay.rows) for c in range(lay.cols) if (r, c) not in grid)
        if shared:
            out.append("  cells with several owners (!): " + "; ".join(
                f"({r},{c}) {' '.join(v)}" for (r, c), v in sorted(shared.items())))
        if empty:
            out.append(f"  empty cells (.): {empty}")
        if outside:
            out.append("  outside the matrix or undefined: " + " ".join(outside[:16])
                       + (" ..." if len(outside) > 16 else ""))
    return "\n".join(out) + "\n"
