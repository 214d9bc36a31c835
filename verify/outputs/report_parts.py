"""What both renderings of the report (``report_markdown``, ``report_html``) take from the model: the
pictures (``draw``: one SVG per layout that has a finding, condensed ones with an every-cell twin), the status words,
a layout's source line and notes, the instruction-level check columns, the independent references' marks and
summary, and where the constant-fix search stopped.

Suggested corrections, in the model, come from (a) the spec's ``[fragment.corrected]`` layout
(``ID@corrected``) when there is one, else (b) the fix search (``verify.checks.fixes``): the smallest
change to one integer constant of the formula that makes the fragment a bijection, proved by
both engines.  This module runs no check.
"""
from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

from ..engines import oracle
from ..layout.model import Layout
from ..results import AnyFinding
from ..results.report import LayoutEntry, Model, slug, svg_name
from ..witnesses import CellOutside, CellUnreached, ElementsCollide
from .svg import fragment_svg, needs_condensing, summary_counts
from .table import table_entries


# ----------------------------------------------------------------------------- pictures

def _highlight_elements(findings: Iterable[AnyFinding]) -> set[tuple[int, int]]:
    """The elements an ``in_range`` finding names (lane, i)."""
    return {(c.lane, c.i) for c in (f.counterexample for f in findings) if isinstance(c, CellOutside)}


def _highlights(findings: Iterable[AnyFinding]) -> set[tuple[int, int, int]]:
    """The cells an ``injective`` or ``surjective`` finding names (mma, row, col)."""
    return {(c.mma or 0, c.row, c.col) for c in (f.counterexample for f in findings)
            if isinstance(c, (ElementsCollide, CellUnreached))}


def draw(m: Model) -> dict[str, dict[str, Any]]:
    """The pictures of the report's entries (rendering only: each entry's layout drawn from its cells):
    layout id -> ``svg``, ``svg_file``, ``svg_full``, ``svg_full_file``, ``counts``."""
    out: dict[str, dict[str, Any]] = {}
    for e in m.entries:
        pic: dict[str, Any] = {"svg": "", "svg_file": "", "svg_full": "", "svg_full_file": "", "counts": {}}
        out[e.layout_id] = pic
        if e.pictured is None:
            continue
        try:
            entries_tab = table_entries(e.pictured)
        except (oracle.EvalError, ImportError, ValueError):
            continue
        lay, fs, lid = e.layout, e.findings, e.layout_id
        title = e.pictured.id + ("  (corrected: the doc formula does not parse)" if lay is None else "")
        highlight = _highlights(fs) if lay is not None else ()
        highlight_elements = _highlight_elements(fs) if lay is not None else ()
        pic['svg'] = fragment_svg(e.pictured, entries_tab, title=title, uid=slug(lid), highlight=highlight,
                                  highlight_elements=highlight_elements)
        pic['svg_file'] = "svg/" + svg_name(lid)
        if needs_condensing(e.pictured):
            pic['svg_full'] = fragment_svg(e.pictured, entries_tab, title=title + "  (every cell)",
                                           uid=slug(lid) + "-full", full=True, highlight=highlight,
                                           highlight_elements=highlight_elements)
            pic['svg_full_file'] = "svg/" + slug(lid) + ".full.svg"
        pic["counts"] = summary_counts(e.pictured, entries_tab)
    return out


def status_word(status: str, expected: str) -> str:
    if status == expected:
        return {"proved": "ok", "refuted": "FAIL (known)"}.get(status, status)
    if status == "proved":
        return f"ok (expected {expected})"
    return {"refuted": "FAIL", "unknown": "unknown", "error": "ERROR"}.get(status, status)


def _source_line(lay: Layout) -> str:
    s = lay.provenance.source
    doc = f"{s.document} {s.version}".strip()
    where = f"{doc} \u00a7{s.section}"
    if s.title:
        where += f" \u201c{s.title}\u201d"
    page = s.file if s.file != lay.provenance.spec_path else ""
    if page:
        where += f", page {page}" + (f" line {s.line}" if s.line else "")
    if lay.provenance.spec_path:
        where += f"; spec {lay.provenance.spec_path}" + (f":{lay.provenance.formula_line}" if lay.provenance.formula_line else "")
    return where


def entry_facts(lay: Layout | None, counts: Mapping[str, int] | None) -> list[tuple[str, str]]:
    """An entry's facts as (label, words), in the order both renderings list them: its source, the spec's erratum
    and derivation, and its grid's counts where the picture found shared, empty or outside cells."""
    if lay is None:
        return []
    facts = [("Source", _source_line(lay))]
    if lay.provenance.erratum:
        facts.append(("Erratum (spec)", lay.provenance.erratum))
    if lay.provenance.derived:
        facts.append(("Derived", lay.provenance.derived))
    if counts and any(counts.values()):
        facts.append(("Grid", f"{counts['shared']} cells with several owners, {counts['empty']} empty cells, "
                              f"{counts['outside']} elements outside the matrix"))
    return facts


def _notes(lay: Layout, syntax_ids: set[str]) -> list[str]:
    out = []
    if lay.corrected:
        out.append("corrected" + (" (doc formula does not parse)" if lay.doc_id in syntax_ids else ""))
    if any(v == "refuted" for v in lay.expect.values()):
        out.append("known erratum")
    if lay.provenance.derived:
        out.append("derived (not stated by the doc text)")
    return out


def _instr_checks(j: Mapping[str, Any]) -> dict[str, tuple[str, str]]:
    checks = j.get("checks")
    items: Iterable[tuple[str, Any]]
    if isinstance(checks, dict):
        items = checks.items()
    elif isinstance(checks, list):
        items = [(str(c.get("check", c.get("name", k))), c) for k, c in enumerate(checks) if isinstance(c, dict)]
    else:
        items = [(k, v) for k, v in j.items() if isinstance(v, dict) and "status" in v]
    out = {}
    for k, v in items:
        if isinstance(v, dict):
            out[str(k)] = (str(v.get("status", "")), str(v.get("expected", v.get("status", ""))))
        else:
            out[str(k)] = (str(v), str(v))
    return out


# instruction-level checks in the order they run and read: the operands' shapes, then k, registers,
# lane groups (m8n8k4), then the sparse checks; anything else after them, by name
INSTRUCTION_CHECKS = ("shapes", "k", "registers", "lane_groups", "chunk_ranges", "metadata_distinct",
                      "metadata_ordered", "metadata_invalid", "metadata_budget", "metadata_group")


def instruction_columns(instructions: Sequence[Mapping[str, Any]]) -> list[str]:
    """The instruction-level check columns present, in ``INSTRUCTION_CHECKS`` order (unknown ones last)."""
    present = {k for j in instructions for k in _instr_checks(j)}
    rank = {c: n for n, c in enumerate(INSTRUCTION_CHECKS)}
    return sorted(present, key=lambda c: (rank.get(c, len(rank)), c))


def _by_design(check: str, status: str, expected: str) -> bool:
    """metadata_invalid refuted as expected: the collision the doc predicts (text output reads it ok)."""
    return check == "metadata_invalid" and status == expected == "refuted"


def _instr_name(j: Mapping[str, Any]) -> str:
    for k in ("id", "instruction", "name"):
        if isinstance(j.get(k), str):
            name = j[k]
            if k == "instruction" and isinstance(j.get("shape"), str):
                name += "." + j["shape"]
            return name
    return "?"


_REF_MARK = {"agrees": "=", "differs": "x", "absent": "-", "unavailable": "?"}
REF_LEGEND = ("`=` agrees (conform equal, both engines), `x` differs (a finding about the reference), `e` the doc's "
              "layout whose reviewed correction the reference agrees with (the doc's erratum), `-` absent, "
              "`?` unavailable; independent: the agreeing origins (`cute` and `cute-text` are both CuTe).")


def _ref_mark(cell: Mapping[str, Any]) -> str:
    return "e" if cell.get("erratum") else _REF_MARK.get(str(cell.get("status")), "?")


def _ref_summary(refs: Mapping[str, Any]) -> tuple[str, str]:
    ran = ", ".join(f"{k} ({v})" for k, v in refs.get("ran", {}).items()) or "none"
    cov = refs.get("coverage", {})
    line = (f"{cov.get('two_or_more', 0)} of {cov.get('layouts', 0)} layouts ({cov.get('percent_two_or_more', 0)}%) "
            f"are backed by two or more independent references ({cov.get('derived_two_or_more', 0)} of the "
            f"{cov.get('derived', 0)} derived ones); {cov.get('percent_two_or_more_or_explained', 0)}% counting "
            "those a finding explains.")
    pref = cov.get("corrections_preferred")
    if pref:
        line += (f" Each reviewed correction in place of its doc layout: {pref.get('two_or_more', 0)} of "
                 f"{pref.get('layouts', 0)} ({pref.get('percent_two_or_more', 0)}%) agreed by two or more origins, "
                 f"{pref.get('statable_two_or_more', 0)} of the {pref.get('statable', 0)} a reference can state "
                 f"({pref.get('percent_statable_two_or_more', 0)}%).")
    return ran, line

def finding_counts(m: Model) -> tuple[int, int]:
    """The report's findings (its entries' and the others') and how many of them are unexpected."""
    found = [f for e in m.entries for f in e.findings] + list(m.other_findings)
    return len(found), sum(1 for f in found if not f.as_expected)


def _stopped(e: LayoutEntry) -> str:
    """Where the constant-fix search ran out of budget before the bound asked for."""
    if e.fix is not None or e.fix_bound >= e.fix_asked:
        return ""
    return (f" The search stopped there: its budget (from --timeout) was spent before every change up to "
            f"{e.fix_asked} was tried.")



__all__ = ["INSTRUCTION_CHECKS", "REF_LEGEND", "draw", "instruction_columns", "status_word"]
