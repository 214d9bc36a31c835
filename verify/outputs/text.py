"""Results -> the text a person reads in a terminal: one line per layout and instruction."""
from __future__ import annotations

from typing import Sequence

from ..layout.model import Layout, MapLayout
from ..results import LayoutResult, MapResult, Report
from .table import table_text
from .text_results import instruction_lines

_MARK = {"proved": "ok", "refuted": "FAIL", "unknown": "??", "error": "ERR"}


def check_text(report: Report) -> str:
    lines: list[str] = []
    rows: list[LayoutResult | MapResult] = [*report.results, *report.maps]
    for r in rows:
        lay = r.layout
        marks = " ".join(f"{c.check}:{_MARK.get(c.status, c.status)}" for c in r.checks)
        tag = "" if r.as_expected else "  <-- UNEXPECTED"
        known = "  (known erratum)" if r.as_expected and any(c.expected == "refuted" for c in r.checks) else ""
        derived = "  [derived: not stated by the doc text]" if lay.provenance.derived and not lay.provenance.derived.startswith("same as") else ""
        lines.append(f"{lay.id:44s} {marks}{known}{derived}{tag}")
        for c in r.checks:
            if (c.status, c.expected) not in (("proved", "proved"), ("n/a", "n/a")):
                exp = "" if c.as_expected else f" [expected {c.expected}]"
                lines.append(f"    {c.check} {c.status}{exp}: {c.message}")
    for ins in report.instructions:
        lines.extend(instruction_lines(ins))
    for f in report.findings:
        if f.check in OTHER_CHECKS:  # findings of no layout line above: doc syntax, reviews, hardware
            exp = "" if f.as_expected else f" [expected {f.expected}]"
            lines.append(f"{f.layout:44s} {f.check}:{_MARK.get(f.status, f.status.upper())}{exp}  {f.message}")
    if report.doc_findings:
        lines.append("")
        lines.append("errata in the doc text (from ingest):")
        lines.extend(f"  {f.one_line()}" for f in report.doc_findings)
    if report.statements:
        lines.append("")
        lines.extend(statement_lines(report))
    lines.append("")
    lines.append(summary(report))
    return "\n".join(lines) + "\n"


OTHER_CHECKS = ("syntax", "reviewed", "register_facts", "doc_text", "evaluation", "hardware", "reference", "statement")


def statement_lines(report: Report) -> list[str]:
    """What each page states, judged: per page, how many statements of each kind, and how many agree, are known
    errata, or differ (those are findings above)."""
    out = ["statements of the doc pages, judged against the reviewed specs and the pages' other statements:"]
    pages: dict[str, list] = {}
    for s in report.statements:
        pages.setdefault(s.page, []).append(s)
    for page, sts in pages.items():
        agree = sum(1 for s in sts if s.status == "proved")
        known = sum(1 for s in sts if s.status != "proved" and s.as_expected)
        bad = len(sts) - agree - known
        out.append(f"  {page}: {len(sts)} judged: {agree} agree, {known} known errata, {bad} differ")
        kinds: dict[str, int] = {}
        for s in sts:
            kinds[s.kind] = kinds.get(s.kind, 0) + 1
        out.append("    " + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())))
    return out


def summary(report: Report) -> str:
    """One line: what was checked, how many findings, how many of them unexpected (what exit 1 means)."""
    n, k = len(report.results), len(report.instructions)
    known = sum(1 for f in report.findings if f.as_expected)
    bad = len(report.findings) - known
    maps = f"{len(report.maps)} maps, " if report.maps else ""
    stated = f"{len(report.statements)} statements, " if report.statements else ""
    return (f"{n} layouts, {maps}{k} instructions, {stated}".replace("instructions, :", "instructions:").rstrip(", ")
            + f": {len(report.findings)} findings ({known} known errata), "
            f"{bad} unexpected" + ("" if report.as_expected else "  -> FAIL"))


def list_text(layouts: Sequence[Layout], maps: Sequence[MapLayout] = ()) -> str:
    rows = [f"{lay.id:48s} {lay.provenance.source.section:12s} {'corrected' if lay.corrected else ''}"
            for lay in layouts]
    rows += [f"{m.id:48s} {m.provenance.source.section:12s} {m.kind}{' corrected' if m.corrected else ''}" for m in maps]
    return "\n".join(r.rstrip() for r in rows) + "\n"


__all__ = ["check_text", "list_text", "table_text"]
