"""Results -> JSON (schema 1): one canonical document per command, byte-stable.

Keys keep the contract order (docs/reference/json.md); the same input gives byte-identical
output, so CI can diff it.
"""
from __future__ import annotations

from typing import Any, Sequence

from ..layout.model import Layout, MapLayout
from ..layout.sparse import SparseMap
from ..results import SCHEMA, Report, dumps
from .table import sparse_entries, table_entries


def to_json(obj: Any) -> str:
    """Canonical JSON (``verify.results.dumps``): stable key order as built, two-space indent, trailing newline."""
    return dumps(obj)


def check_json(report: Report, timings: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {
        "schema": SCHEMA,
        "as_expected": report.as_expected,
        "layouts": [r.to_json(timings) for r in report.results],
        "findings": [f.to_json() for f in report.findings],
    }
    if report.maps:
        out["maps"] = [m.to_json(timings) for m in report.maps]
    if report.instructions:
        out["instructions"] = [i.to_json() for i in report.instructions]
    if report.doc_findings:
        out["doc_findings"] = [f.to_json() for f in report.doc_findings]
    if report.statements:
        out["statements"] = [s.to_json() for s in report.statements]
    return out


def with_references(doc: dict[str, Any], matrix: Any) -> dict[str, Any]:
    """``check --references``: each layout and map entry gets ``"references": {name: status}``, and the
    document a ``"references"`` summary (what ran, what was unavailable and why, the coverage)."""
    def add(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{**e, "references": matrix.status(e["id"])} if e.get("id") in matrix.cells else e for e in entries]
    out = dict(doc)
    for key in ("layouts", "maps"):
        if key in out:
            out[key] = add(out[key])
    full = matrix.to_json()["references"]
    out["references"] = {k: full[k] for k in ("names", "origins", "ran", "unavailable", "coverage")}
    return out


def list_json(layouts: Sequence[Layout], maps: Sequence[MapLayout] = ()) -> dict[str, Any]:
    out: dict[str, Any] = {"schema": SCHEMA, "layouts": [
        {"id": lay.id, "instruction": lay.instruction, "shape": str(lay.shape), "operand": lay.operand,
         "types": list(lay.types), "variant": lay.variant, "section": lay.provenance.source.section,
         "corrected": lay.corrected, "derived": lay.provenance.derived or None} for lay in layouts]}
    if maps:
        out["maps"] = [{"id": m.id, "kind": m.kind, "instruction": m.instruction or None,
                        "inputs": [d.name for d in m.inputs], "outputs": [d.name for d in m.outputs],
                        "section": m.provenance.source.section, "corrected": m.corrected, "derived": m.provenance.derived or None}
                       for m in maps]
    return out


def table_json(lay: Layout, metadata: int | None = None) -> dict[str, Any]:
    """Schema-1 table; sparse A entries add chunk and logical column for a metadata value."""
    out: dict[str, Any] = {"schema": SCHEMA, "id": lay.id, "rows": lay.rows, "cols": lay.cols,
                           "groups": lay.groups}
    if isinstance(lay.map, SparseMap):
        md = lay.map.model
        out["metadata"] = f"0x{(md.canonical if metadata is None else metadata):08x}"
        out["entries"] = sparse_entries(lay, metadata)
    else:
        out["entries"] = table_entries(lay)
    return out
