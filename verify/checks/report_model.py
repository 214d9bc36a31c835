"""The report's model: what ``ptx-verify report`` shows, decided before anything is rendered.

``build(report)`` orders the layouts, groups the findings per layout, searches the smallest constant change
that repairs a layout (``verify.checks.fixes``), reads each counterexample's named values with the scalar
reference (``counterexample_lines``: the doc's terms) and picks the layout each picture shows.  The
renderers (``verify.outputs.report_markdown``, ``report_html``, ``report_parts``: Markdown, HTML, SVG) read the
model (its types: ``verify.results.report``) and never run a check; ``ptx-verify report`` builds it before it
renders anything.
"""
from __future__ import annotations

from typing import Any, Mapping, Protocol, Sequence

from ..engines import oracle
from ..errors import SpecError
from ..files import read_text
from ..layout.model import CHECK_NAMES, Layout, section_key
from ..results import AnyFinding, LayoutResult, Report
from ..results.fixes import MAX_DELTA, ConstantFix
from ..results.report import LayoutEntry, Model, slug, svg_name
from ..witnesses import CellOutside, ElementsCollide, TextPosition, Witness
from .fixes import BIJECTION_CHECKS, search_fix
from .fragment import DEFAULT_TIMEOUT


class _Stage(Protocol):
    def stage(self, label: str, total: int | None = None) -> Any: ...


class _NoProgress:
    def stage(self, label: str, total: int | None = None) -> Any:
        import contextlib

        @contextlib.contextmanager
        def run() -> Any:
            yield lambda n=1: None
        return run()



def _layout_order(results: Sequence[LayoutResult]) -> list[LayoutResult]:
    idx = {id(r): k for k, r in enumerate(results)}
    return sorted(results, key=lambda r: (section_key(r.layout.provenance.source.section), idx[id(r)]))


def _excerpt(cex: Witness | None) -> list[str]:
    """For a syntax finding: the offending line of the spec file with a caret."""
    if not isinstance(cex, TextPosition):
        return []
    try:
        lines = read_text(cex.file).split("\n")
        text = lines[int(cex.line) - 1]
    except (SpecError, IndexError, ValueError):
        return []
    col = max(1, int(cex.col))
    return [text.rstrip(), " " * (col - 1) + "^"]


def build(report: Report, timeout: float = DEFAULT_TIMEOUT, max_delta: int = MAX_DELTA,
          search: bool = True, progress: _Stage | None = None, references: Mapping[str, Any] | None = None) -> Model:
    """The report's model of ``report``.  ``references``: the ``"references"`` object of a ``crosscheck --matrix
    --format json`` document; the model keeps the matrix rows of the layouts ``report`` checked (the section
    "Independent references")."""
    progress = progress or _NoProgress()
    results = _layout_order(report.results)
    by_id = {r.layout.id: r for r in results}
    order = {r.layout.id: k for k, r in enumerate(results)}
    fixes = {r.layout.corrects: r for r in results if r.layout.corrected}  # doc id -> its correction's result

    def rank(lid: str) -> float:
        if lid in order:
            return order[lid]
        if lid in fixes:
            return order[fixes[lid].layout.id] - 0.5
        return float(len(order))

    check_rank = {c: k for k, c in enumerate(("syntax",) + CHECK_NAMES)}
    grouped: dict[str, list[AnyFinding]] = {}
    other: list[AnyFinding] = []
    for f in report.findings:
        if f.layout in by_id or (f.check == "syntax" and f.layout in fixes):
            grouped.setdefault(f.layout, []).append(f)
        else:
            other.append(f)
    entries: list[LayoutEntry] = []
    with progress.stage("report: pictures and suggested corrections", total=len(grouped)) as step:
        for lid in sorted(grouped, key=lambda x: (rank(x), x)):
            entries.append(_entry(lid, grouped[lid], by_id, fixes, check_rank, timeout, max_delta, search))
            step(1)

    instructions = [i.to_json() for i in report.instructions]
    ins_ok = [i.as_expected for i in report.instructions]
    docs = sorted({f"{s.source.document} {s.source.version}".strip() for s in report.specs})
    m = Model(results, entries, instructions, ins_ok, other, report.as_expected, docs, len(report.specs),
              list(report.doc_findings))
    if references is not None:   # the matrix rows of the layouts this report checked
        ids = {r.layout.id for r in report.results} | {r.layout.id for r in report.maps}
        m.references = {**references, "layouts": [e for e in references["layouts"] if e["id"] in ids]}
    return m


def _entry(lid: str, found: list[AnyFinding], by_id: Mapping[str, LayoutResult], fixes: Mapping[str, LayoutResult],
           check_rank: Mapping[str, int], timeout: float, max_delta: int, search: bool) -> LayoutEntry:
    """One layout with findings: its picture(s), the doc's words and a suggested correction (``fixes``: doc id ->
    the result of its correction)."""
    fs = sorted(found, key=lambda f: (check_rank.get(f.check, 99), f.check))
    res = by_id.get(lid)
    lay = res.layout if res else None
    e = LayoutEntry(lid, lay, fs)
    cres = fixes.get(lid)
    if cres is not None and not (lay is not None and lay.corrected):
        e.corrected, e.corrected_result = cres.layout, cres
    e.pictured = lay if lay is not None else e.corrected
    if e.pictured is not None and e.pictured.unspecified:
        e.pictured = None  # wmma: the doc states no cell to draw
    if e.pictured is not None and e.pictured.is_family:  # the instance the finding names (else the smallest)
        params = next((p for p in (f.counterexample.member() for f in fs if f.counterexample is not None) if p),
                      None)
        e.pictured = e.pictured.instance(**params) if params else e.pictured.representative()
    bij_failed = any(f.check in BIJECTION_CHECKS and f.status == "refuted" for f in fs)
    if search and lay is not None and e.corrected is None and bij_failed and not lay.corrected and not lay.is_family:
        searched = search_fix(lay, timeout, max_delta)
        e.fix_searched, e.fix, e.fix_asked = True, searched.fix, max_delta
        e.fix_bound = max_delta if searched.fix is not None else searched.complete_to
    for f in fs:
        if f.check == "syntax":
            e.source_excerpt = _excerpt(f.counterexample)
    e.cex_lines = [counterexample_lines(f, e.layout) for f in fs]
    return e


# ----------------------------------------------------------------------------- doc terms

def _trace(layout: Layout, lane: int, i: int) -> str:
    """The formula's named values at (lane, i): ``groupID = 1, threadID_in_group = 1, row = 9, col = 2``."""
    ev = oracle.Evaluator(layout.formula, lane, i)
    parts = []
    for d in layout.formula.definitions:
        try:
            v = ev.value(d.name)
            s = f"[{v[0]} ... {v[1]}]" if isinstance(v, tuple) else str(v)
        except oracle.Undefined:
            s = "undefined (no case applies)"
        except oracle.EvalError as err:
            s = f"error ({err.message})"
        parts.append(f"{d.name} = {s}")
    return ", ".join(parts)


def counterexample_lines(f: AnyFinding, layout: Layout | None) -> list[str]:
    """The counterexample in the doc's terms, one statement per line (the witness's own words), with the
    formula's named values at each element it names (the scalar reference, when the layout is known)."""
    c = f.counterexample
    if not c:
        return []
    if isinstance(c, TextPosition) and f.check == "syntax":
        return []  # the message names file:line:col, and the entry shows the line with a caret
    out = c.lines()
    if layout is not None and isinstance(c, CellOutside):
        out.append(f"at lane {c.lane}, i = {c.i}: {_trace(layout, c.lane, c.i)}")
    elif layout is not None and isinstance(c, ElementsCollide):
        for x in (c.first, c.second):
            out.append(f"at lane {x.lane}, i = {x.i}: {_trace(layout, x.lane, x.i)}")
    return out


__all__ = ["ConstantFix", "LayoutEntry", "Model", "build", "counterexample_lines", "slug", "svg_name"]
