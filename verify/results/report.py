"""The report's model (``ptx-verify report``): decided by ``checks.report_model.build`` before anything is
rendered; ``outputs.report_markdown``, ``report_html`` and ``report_parts`` read it (Markdown, HTML, SVG) and run no
check."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Mapping

from ..layout.model import Layout
from . import AnyFinding, DocFinding, LayoutResult
from .fixes import MAX_DELTA, ConstantFix


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.@+-]", "-", text)


def svg_name(layout_id: str) -> str:
    return slug(layout_id) + ".svg"


@dataclass
class LayoutEntry:
    """One layout with findings: the doc's words, each finding, picture, correction."""

    layout_id: str
    layout: Layout | None  # None for a doc formula that does not parse
    findings: list[AnyFinding]
    pictured: Layout | None = None  # the layout drawn (the corrected one for a syntax finding)
    cex_lines: list[list[str]] = field(default_factory=list)  # per finding: its counterexample in the doc's terms
    corrected: Layout | None = None
    corrected_result: LayoutResult | None = None
    fix: ConstantFix | None = None
    fix_searched: bool = False
    fix_bound: int = MAX_DELTA  # every change up to this size was tried
    fix_asked: int = MAX_DELTA  # the bound asked for (--max-delta); more than fix_bound when the budget ran out
    source_excerpt: list[str] = field(default_factory=list)

    @property
    def as_expected(self) -> bool:
        return all(f.as_expected for f in self.findings)


@dataclass
class Model:
    results: list[LayoutResult]
    entries: list[LayoutEntry]
    instructions: list[dict[str, Any]]
    instruction_ok: list[bool]
    other_findings: list[AnyFinding]  # findings not tied to a layout (instruction-level)
    as_expected: bool
    documents: list[str]
    n_specs: int
    doc_findings: list[DocFinding] = field(default_factory=list)  # errata in the doc text (ingest)
    references: Mapping[str, Any] | None = None  # the agreement matrix (``crosscheck --matrix --format json``)
