"""Reports for doc reviewers: ``ptx-verify report PATH... --out DIR``.

Writes ``DIR/report.md`` (Markdown, pictures linked from ``DIR/svg/``), ``DIR/report.html``
(one self-contained page: inline CSS, inline SVG, no external resources) and
``DIR/svg/<layout id>.svg``, one picture per layout that has a finding.

Everything here is a pure function of the report's model (``verify.results.report.Model``, built from the checked
``Report`` by ``checks.report_model.build`` before anything is rendered): no timestamps, no timings,
sorted order, integer coordinates, so the same input gives byte-identical files.  The
files are written into a temporary directory next to ``DIR`` and renamed into place at
the end, so a failed run never leaves a half-written report.

Suggested corrections, in the model, come from (a) the spec's ``[fragment.corrected]`` layout
(``ID@corrected``) when there is one, else (b) the fix search (``verify.checks.fixes``): the smallest
change to one integer constant of the formula that makes the fragment a bijection, proved by
both engines.  This module runs no check.
"""
from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence
from urllib.parse import quote

from ..engines import oracle
from ..files import OutputError, Owns, check_output_dir, output_error
from ..layout.ids import corrected_id
from ..layout.model import CHECK_NAMES, Layout
from ..results import AnyFinding
from ..results.report import LayoutEntry, Model, slug, svg_name
from ..witnesses import CellOutside, CellUnreached, ElementsCollide
from .baseline import SVG_MARK
from .svg import esc, fragment_svg, needs_condensing, summary_counts
from .table import table_entries

REPORT = Owns("a report", (("report.md", "^# PTX warp-level fragment layouts: verification report"),
                           ("report.html", "<title>PTX fragment layouts: verification report</title>"),
                           ("*.svg", SVG_MARK)), dirs=("svg",))


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


# ----------------------------------------------------------------------------- Markdown

def _md(text: str) -> str:
    """Escape Markdown inline specials (the doc's words are shown, never interpreted)."""
    return re.sub(r"([\\`*_\[\]<>|#])", r"\\\1", text)


def _cs(text: str) -> str:
    """A Markdown code span holding ``text`` verbatim."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def _fence(text: str) -> str:
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def _code(text: str, lang: str = "") -> list[str]:
    body = text.strip("\n")
    f = _fence(body)
    return [f + lang, body, f]


def render_markdown(m: Model, pics: Mapping[str, Mapping[str, Any]] | None = None) -> str:
    pics = pics if pics is not None else draw(m)
    o: list[str] = []
    a = o.append
    n_find = sum(len(e.findings) for e in m.entries) + len(m.other_findings)
    unexpected = sum(1 for e in m.entries for f in e.findings if not f.as_expected) + sum(
        1 for f in m.other_findings if not f.as_expected)
    bad_layouts = sum(1 for r in m.results if not r.as_expected)
    a("# PTX warp-level fragment layouts: verification report")
    a("")
    a(f"Documents: {', '.join(m.documents) or 'none'} ({m.n_specs} spec file{'' if m.n_specs == 1 else 's'}). "
      f"{len(m.results)} layouts checked, {n_find} findings, {unexpected} unexpected.")
    a("")
    a("**Verdict: everything as expected.**" if m.as_expected else "**Verdict: UNEXPECTED results (see below).**")
    a("")
    a("Statuses: `ok` proved by both engines (Z3 and exhaustive enumeration); `FAIL (known)` refuted, as the spec "
      "records (a known erratum); `FAIL` refuted unexpectedly; `unknown` Z3 gave up; `ERROR` the engines disagree.")
    a("")
    a("## Summary")
    a("")
    a("| Section | Instruction | Operand | Types | " + " | ".join(CHECK_NAMES) + " | Layout: notes |")
    a("|---|---|---|---|" + "---|" * len(CHECK_NAMES) + "---|")
    syntax_ids = {f.layout for e in m.entries for f in e.findings if f.check == "syntax"}
    shown_syntax: set[str] = set()
    for r in m.results:
        lay = r.layout
        base = lay.doc_id
        if lay.corrected and base in syntax_ids and base not in shown_syntax:
            shown_syntax.add(base)
            a(_md_row_syntax(lay, base))
        cells = []
        for name in CHECK_NAMES:
            c = r.get(name)
            w = status_word(c.status, c.expected)
            cells.append(w if c.as_expected else f"**{w}**")
        types = "/".join(lay.types) + (f" ({lay.variant})" if lay.variant else "")
        notes = _notes(lay, syntax_ids)
        ident = f"[{_md(lay.id)}](#{_md_anchor(lay.id)})" if any(e.layout_id == lay.id for e in m.entries) else _md(lay.id)
        a(f"| {_md(lay.provenance.source.section)} | {_md(lay.instruction)}.{lay.shape} | {lay.operand} | {_md(types)} | "
          + " | ".join(cells) + f" | {ident}" + (f": {_md(', '.join(notes))}" if notes else "") + " |")
    a("")
    if m.instructions:
        a("## Instruction-level checks")
        a("")
        names = instruction_columns(m.instructions)
        a("| Instruction | " + " | ".join(_md(n) for n in names) + " | As expected |")
        a("|---|" + "---|" * len(names) + "---|")
        for j, ok in zip(m.instructions, m.instruction_ok):
            cs = _instr_checks(j)
            cells = [("ok (by design)" if _by_design(n, *cs[n]) else status_word(*cs[n])) if n in cs else "\u2014"
                     for n in names]
            a(f"| {_md(_instr_name(j))} | " + " | ".join(_md(c) for c in cells) + f" | {'yes' if ok else '**no**'} |")
        a("")
    a("## Findings")
    a("")
    if not m.entries and not m.other_findings:
        a("None: every property of every layout is proved.")
        a("")
    for e in m.entries:
        o.extend(_md_entry(e, pics[e.layout_id]))
    if m.other_findings:
        a("### Other findings")
        a("")
        for f in m.other_findings:
            a(f"- **{_md(f.layout)}**, {_md(f.check)}: {status_word(f.status, f.expected)} "
              f"(expected {f.expected}). {_md(f.message)}")
        a("")
    if m.doc_findings:
        a("## Errata in the doc text")
        a("")
        pages = sorted({str(Path(f.page).parent) for f in m.doc_findings})
        a("Found by `ptx-verify ingest` in the pages themselves (tables, element lists, figures, formulas); "
          f"pages in {_md(', '.join(pages))}.")
        a("")
        a("| Page:line:col | Severity | Kind | Section | The doc's words | Finding |")
        a("|---|---|---|---|---|---|")
        for df in m.doc_findings:
            a(f"| {_md(f'{Path(df.page).name}:{df.line}:{df.column}')} | {df.severity} | {_md(df.kind)} | "
              f"{_md(df.section)} | {_cs(df.words) if df.words else ''} | {_md(df.message)} |")
        a("")
    if m.references is not None:
        o.extend(_md_references(m.references))
    a("---")
    a("")
    a(f"{len(m.results)} layouts: {len(m.results) - bad_layouts} as expected, {bad_layouts} unexpected. "
      "Generated by `ptx-verify report`.")
    return "\n".join(o).rstrip("\n") + "\n"


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


def _md_references(refs: Mapping[str, Any]) -> list[str]:
    names = list(refs.get("names", []))
    ran, line = _ref_summary(refs)
    o = ["## Independent references", "", f"References: {_md(ran)}. {_md(line)}", "", REF_LEGEND, "",
         "| Layout | " + " | ".join(_md(n) for n in names) + " | Independent | Why fewer than two |",
         "|---|" + "---|" * len(names) + "---|---|"]
    for e in refs.get("layouts", []):
        cells = [_ref_mark(e["cells"].get(n, {})) for n in names]
        o.append(f"| {_md(e['id'])} | " + " | ".join(cells) + f" | {len(e.get('origins_agreeing', []))} | "
                 f"{_md(e.get('explained', ''))} |")
    o.append("")
    return o


def _html_references(refs: Mapping[str, Any]) -> list[str]:
    names = list(refs.get("names", []))
    ran, line = _ref_summary(refs)
    o = ['<h2 id="references">Independent references</h2>', f"<p>References: {esc(ran)}. {esc(line)}</p>",
         f'<p class="note">{esc(REF_LEGEND.replace("`", ""))}</p>',
         "<table><thead><tr><th>Layout</th>" + "".join(f"<th>{esc(n)}</th>" for n in names)
         + "<th>Independent</th><th>Why fewer than two</th></tr></thead><tbody>"]
    for e in refs.get("layouts", []):
        cells = "".join(f"<td>{esc(_ref_mark(e['cells'].get(n, {})))}</td>" for n in names)
        o.append(f'<tr><td class="id">{esc(e["id"])}</td>{cells}<td>{len(e.get("origins_agreeing", []))}</td>'
                 f"<td>{esc(e.get('explained', ''))}</td></tr>")
    o.append("</tbody></table>")
    return o


def _md_anchor(lid: str) -> str:
    # GitHub-style heading anchors are unpredictable for ids with dots; use explicit ids.
    return "finding-" + slug(lid).replace(".", "-").replace("@", "-").lower()


def _md_row_syntax(lay: Layout, base: str) -> str:
    types = "/".join(lay.types) + (f" ({lay.variant})" if lay.variant else "")
    cells = ["\u2014"] * len(CHECK_NAMES)
    return (f"| {_md(lay.provenance.source.section)} | {_md(lay.instruction)}.{lay.shape} | {lay.operand} | {_md(types)} | "
            + " | ".join(cells) + f" | [{_md(base)}](#{_md_anchor(base)}): **syntax FAIL (known)**, the doc formula does not parse |")


def _md_entry(e: LayoutEntry, pic: Mapping[str, Any]) -> list[str]:
    o: list[str] = []
    a = o.append
    lay = e.layout or e.corrected
    a(f'<a id="{_md_anchor(e.layout_id)}"></a>')
    a("")
    a(f"### {_md(e.layout_id)}")
    a("")
    if lay is not None:
        a(f"- **Source:** {_md(_source_line(lay))}")
        if lay.provenance.erratum:
            a(f"- **Erratum (spec):** {_md(lay.provenance.erratum)}")
        if lay.provenance.derived:
            a(f"- **Derived:** {_md(lay.provenance.derived)}")
        if pic['counts'] and any(pic['counts'].values()):
            a(f"- **Grid:** {pic['counts']['shared']} cells with several owners, {pic['counts']['empty']} empty cells, "
              f"{pic['counts']['outside']} elements outside the matrix")
    a("")
    if e.layout is not None:
        a("The doc's formula:")
        a("")
        o.extend(_code(e.layout.provenance.formula_text))
        a("")
        if e.layout.regs.elements_text is not None:
            a(f"The doc's element list: {_cs(e.layout.regs.elements_text)}")
            a("")
    elif e.source_excerpt:
        a("The doc's formula does not parse; at the marked column:")
        a("")
        o.extend(_code("\n".join(e.source_excerpt)))
        a("")
    for f, cl in zip(e.findings, e.cex_lines):
        w = status_word(f.status, f.expected)
        a(f"#### {_md(f.check)}: {w}" + ("" if f.as_expected else f" (expected {f.expected})"))
        a("")
        a(_md(f.message))
        a("")
        if cl:
            a("Counterexample:")
            a("")
            for line in cl:
                a(f"- {_md(line)}")
            a("")
    o.extend(_md_correction(e))
    if pic['svg_file']:
        a(f"![{_md(e.pictured.id if e.pictured else e.layout_id)}]({quote(pic['svg_file'])})")
        a("")
        if pic['svg_full_file']:
            a(f"Condensed picture; every cell: [{_md(pic['svg_full_file'])}]({quote(pic['svg_full_file'])}).")
            a("")
    return o


def _md_correction(e: LayoutEntry) -> list[str]:
    o: list[str] = []
    a = o.append
    if e.corrected is not None and e.corrected_result is not None:
        cr = e.corrected_result
        ok = all(c.status == "proved" for c in cr.checks)
        a(f"**Suggested correction** (the spec's `[fragment.corrected]`, checked as {_cs(e.corrected.id)}: "
          + ("every property proved" if ok else "not every property proved: "
             + ", ".join(f"{c.check} {c.status}" for c in cr.checks if c.status != "proved")) + "):")
        a("")
        if e.layout is None or e.corrected.provenance.formula_text != e.layout.provenance.formula_text:
            o.extend(_code(e.corrected.provenance.formula_text))
            a("")
        fixed = e.corrected.regs
        if e.layout is not None and fixed.elements_text != e.layout.regs.elements_text and fixed.elements_text:
            a(f"Element list: {_cs(fixed.elements_text)}")
            a("")
        if e.layout is not None and (fixed.count, fixed.elements_per_register) != (
                e.layout.regs.count, e.layout.regs.elements_per_register):
            a(f"Registers: {fixed.count} x {fixed.elements_per_register} elements (.{fixed.type})")
            a("")
    elif e.fix is not None:
        fx = e.fix
        a(f"**Suggested correction** (search over one integer constant, |change| \u2264 {e.fix_bound}): in "
          f"{_cs(fx.definition)}, change {fx.old} to {fx.new} (formula line {fx.pos.line}, column {fx.pos.col}). "
          "The changed fragment is a bijection, proved by Z3 and by enumeration.")
        a("")
        if fx.old_line:
            o.extend(_code(f"- {fx.old_line}\n+ {fx.new_line}", "diff"))
            a("")
    elif e.fix_searched:
        a(f"No suggested correction: no change of one integer constant by at most {e.fix_bound} makes the fragment "
          "a bijection." + _stopped(e))
        a("")
    return o


def _stopped(e: LayoutEntry) -> str:
    """Where the constant-fix search ran out of budget before the bound asked for."""
    if e.fix is not None or e.fix_bound >= e.fix_asked:
        return ""
    return (f" The search stopped there: its budget (from --timeout) was spent before every change up to "
            f"{e.fix_asked} was tried.")


# ----------------------------------------------------------------------------- HTML

CSS = """
body{font-family:"DejaVu Sans",Helvetica,Arial,sans-serif;font-size:14px;margin:24px auto;max-width:1760px;color:#1a1a1a;
line-height:1.45;padding:0 16px}
h1{font-size:24px;margin-bottom:4px}h2{font-size:20px;border-bottom:1px solid #ccc;padding-bottom:4px;margin-top:32px}
h3{font-size:17px;margin:0 0 8px 0;font-family:"DejaVu Sans Mono",monospace}h4{font-size:14px;margin:14px 0 4px 0}
table{border-collapse:collapse;font-size:12.5px}th,td{border:1px solid #c8c8c8;padding:3px 7px;text-align:left;
vertical-align:top}th{background:#f0f0f0;position:sticky;top:0}tr:nth-child(even) td{background:#fafafa}
td.id{font-family:"DejaVu Sans Mono",monospace;font-size:12px}td.notes{font-size:12px;color:#444}
table.summary td,table.ins td{white-space:nowrap}
table.summary td.id,table.summary td.notes,table.summary td.syn,table.summary td:nth-child(4),
table.ins td.id{white-space:normal}
th{font-size:12px}th.c{white-space:nowrap}th.c.w{white-space:normal}td.c .st{white-space:normal}
.st{display:inline-block;min-width:34px;text-align:center;border-radius:3px;padding:0 4px;font-size:11.5px;
font-weight:bold;white-space:nowrap}
.ok{background:#d9f2d9;color:#145214}.known{background:#ffe8c2;color:#7a4300}.bad{background:#d00000;color:#fff}
.unk{background:#ddd;color:#333}.none{color:#999}
.verdict{font-size:16px;font-weight:bold;padding:6px 10px;display:inline-block;border-radius:4px}
.verdict.good{background:#d9f2d9;color:#145214}.verdict.fail{background:#d00000;color:#fff}
.entry{border:1px solid #ccc;border-left:6px solid #e0a040;border-radius:4px;padding:12px 16px;margin:18px 0;
background:#fff}.entry.unexpected{border-left-color:#d00000}
pre{background:#f5f5f5;border:1px solid #ddd;padding:8px 10px;font-size:12.5px;overflow-x:auto;margin:6px 0}
pre.diff .del{color:#a00000}pre.diff .add{color:#006000}
dl{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;margin:0 0 8px 0;font-size:13.5px}
dt{font-weight:bold}dd{margin:0}
ul.cex{margin:4px 0;font-family:"DejaVu Sans Mono",monospace;font-size:12.5px}
.pic{overflow-x:auto;margin-top:10px}.note{color:#555;font-size:13px}
code{font-family:"DejaVu Sans Mono",monospace;font-size:12.5px;background:#f3f3f3;padding:0 3px}
"""


def _badge(status: str, expected: str) -> str:
    w = status_word(status, expected)
    if status != expected:
        cls = "bad"
    else:
        cls = {"proved": "ok", "refuted": "known"}.get(status, "unk")
    return f'<span class="st {cls}">{esc(w)}</span>'


def _design_badge() -> str:
    return ('<span class="st ok" title="refuted by design: a doc-invalid metadata value collides, as the doc '
            'predicts">ok*</span>')


def _wrap(text: str) -> str:
    """Escaped text that may break after '.' and '_' (long layout ids and check names)."""
    return re.sub(r"([._])", r"\1<wbr>", esc(text))


# short notes in the HTML summary, each with its full words as a tooltip (and in the legend below it)
_SHORT_NOTES = {"corrected (doc formula does not parse)": "corrected (syntax)",
                "derived (not stated by the doc text)": "derived", "known erratum": "erratum",
                "corrected": "corrected"}


def _notes_html(notes: Sequence[str]) -> str:
    return ", ".join(f'<span title="{esc(n)}">{esc(_SHORT_NOTES.get(n, n))}</span>' for n in notes)


def _h_anchor(lid: str) -> str:
    return "finding-" + slug(lid)


def render_html(m: Model, pics: Mapping[str, Mapping[str, Any]] | None = None) -> str:
    pics = pics if pics is not None else draw(m)
    o: list[str] = []
    a = o.append
    n_find = sum(len(e.findings) for e in m.entries) + len(m.other_findings)
    unexpected = sum(1 for e in m.entries for f in e.findings if not f.as_expected) + sum(
        1 for f in m.other_findings if not f.as_expected)
    a("<!DOCTYPE html>")
    a('<html lang="en">')
    a("<head>")
    a('<meta charset="utf-8">')
    a('<meta name="viewport" content="width=device-width, initial-scale=1">')
    a("<title>PTX fragment layouts: verification report</title>")
    a("<style>" + CSS.strip() + "</style>")
    a("</head>")
    a("<body>")
    a("<h1>PTX warp-level fragment layouts: verification report</h1>")
    a(f'<p>Documents: {esc(", ".join(m.documents) or "none")} ({m.n_specs} spec file{"" if m.n_specs == 1 else "s"}). '
      f"{len(m.results)} layouts checked, {n_find} findings, {unexpected} unexpected.</p>")
    a('<p><span class="verdict good">Everything as expected</span></p>' if m.as_expected
      else '<p><span class="verdict fail">UNEXPECTED results</span></p>')
    a('<p class="note">Statuses: <span class="st ok">ok</span> proved by both engines (Z3 and exhaustive '
      'enumeration); <span class="st known">FAIL (known)</span> refuted, as the spec records (a known erratum); '
      '<span class="st bad">FAIL</span> refuted unexpectedly; <span class="st unk">unknown</span> Z3 gave up; '
      "ERROR: the engines disagree.</p>")
    a('<h2 id="summary">Summary</h2>')
    a('<table class="summary">')
    a("<thead><tr><th>Section</th><th>Instruction</th><th>Operand</th><th>Types</th>"
      + "".join(f'<th class="c">{esc(c)}</th>' for c in CHECK_NAMES) + "<th>Layout</th><th>Notes</th></tr></thead>")
    a("<tbody>")
    syntax_ids = {f.layout for e in m.entries for f in e.findings if f.check == "syntax"}
    with_entry = {e.layout_id for e in m.entries}
    shown: set[str] = set()
    for r in m.results:
        lay = r.layout
        base = lay.doc_id
        types = "/".join(lay.types) + (f" ({lay.variant})" if lay.variant else "")
        head = (f"<td>{esc(lay.provenance.source.section)}</td><td>{esc(lay.instruction)}.{lay.shape}</td>"
                f"<td>{esc(lay.operand)}</td><td>{esc(types).replace('/', '/<wbr>')}</td>")
        if lay.corrected and base in syntax_ids and base not in shown:
            shown.add(base)
            a(f"<tr>{head}" + f'<td class="syn" colspan="{len(CHECK_NAMES)}">{_badge("refuted", "refuted")} '
              "the doc formula does not parse (syntax)</td>"
              f'<td class="id"><a href="#{esc(_h_anchor(base))}">{_wrap(base)}</a></td>'
              f'<td class="notes">{_notes_html(["known erratum"])}</td></tr>')
        cells = "".join(f'<td class="c">{_badge(r.get(c).status, r.get(c).expected)}</td>' for c in CHECK_NAMES)
        ident = (f'<a href="#{esc(_h_anchor(lay.id))}">{_wrap(lay.id)}</a>' if lay.id in with_entry else _wrap(lay.id))
        a(f"<tr>{head}{cells}<td class=\"id\">{ident}</td><td class=\"notes\">"
          f"{_notes_html(_notes(lay, syntax_ids))}</td></tr>")
    a("</tbody></table>")
    a('<p class="note">Notes: <b>erratum</b> a known erratum (the spec expects the failure); <b>corrected</b> the '
      f"spec&#x27;s correction of a doc layout, checked as <code>{corrected_id('ID')}</code> (<b>syntax</b>: the doc formula "
      "does not parse); <b>derived</b> not stated by the doc text (taken from figures or CUTLASS, with "
      "provenance in the spec).</p>")
    if m.instructions:
        a('<h2 id="instructions">Instruction-level checks</h2>')
        names = instruction_columns(m.instructions)
        a('<table class="ins"><thead><tr><th>Instruction</th>' + "".join(f'<th class="c w">{_wrap(n)}</th>' for n in names)
          + "<th>As expected</th></tr></thead><tbody>")
        for j, ok in zip(m.instructions, m.instruction_ok):
            cs = _instr_checks(j)
            cells = "".join((f'<td class="c">{_design_badge()}</td>' if _by_design(n, *cs[n])
                             else f'<td class="c">{_badge(*cs[n])}</td>') if n in cs else '<td class="c none">\u2014</td>'
                            for n in names)
            a(f'<tr><td class="id">{_wrap(_instr_name(j))}</td>{cells}<td>{"yes" if ok else "<b>no</b>"}</td></tr>')
        a("</tbody></table>")
        a('<p class="note"><span class="st ok">ok*</span> metadata_invalid: refuted by design, as the spec expects '
          "(a doc-invalid metadata value makes two kept elements collide; the witness is in the JSON).</p>")
    a('<h2 id="findings">Findings</h2>')
    if not m.entries and not m.other_findings:
        a("<p>None: every property of every layout is proved.</p>")
    for e in m.entries:
        o.extend(_html_entry(e, pics[e.layout_id]))
    if m.other_findings:
        a("<h3>Other findings</h3><ul>")
        for f in m.other_findings:
            a(f"<li><code>{esc(f.layout)}</code>, {esc(f.check)}: {_badge(f.status, f.expected)} {esc(f.message)}</li>")
        a("</ul>")
    if m.doc_findings:
        a('<h2 id="doc-errata">Errata in the doc text</h2>')
        a('<p class="note">Found by <code>ptx-verify ingest</code> in the pages themselves (tables, element '
          "lists, figures, formulas).</p>")
        a("<table><thead><tr><th>Page:line:col</th><th>Severity</th><th>Kind</th><th>Section</th>"
          "<th>The doc's words</th><th>Finding</th></tr></thead><tbody>")
        for df in m.doc_findings:
            a(f'<tr><td class="id" title="{esc(df.page)}">{esc(f"{Path(df.page).name}:{df.line}:{df.column}")}</td>'
              f"<td>{esc(df.severity)}</td>"
              f"<td>{esc(df.kind)}</td><td>{esc(df.section)}</td><td><code>{esc(df.words)}</code></td>"
              f"<td>{esc(df.message)}</td></tr>")
        a("</tbody></table>")
    if m.references is not None:
        o.extend(_html_references(m.references))
    a('<p class="note">Generated by <code>ptx-verify report</code>.</p>')
    a("</body>")
    a("</html>")
    return "\n".join(o) + "\n"


def _html_entry(e: LayoutEntry, pic: Mapping[str, Any]) -> list[str]:
    o: list[str] = []
    a = o.append
    lay = e.layout or e.corrected
    cls = "entry" + ("" if e.as_expected else " unexpected")
    a(f'<section class="{cls}" id="{esc(_h_anchor(e.layout_id))}">')
    a(f"<h3>{esc(e.layout_id)}</h3>")
    a("<dl>")
    if lay is not None:
        a(f"<dt>Source</dt><dd>{esc(_source_line(lay))}</dd>")
        if lay.provenance.erratum:
            a(f"<dt>Erratum (spec)</dt><dd>{esc(lay.provenance.erratum)}</dd>")
        if lay.provenance.derived:
            a(f"<dt>Derived</dt><dd>{esc(lay.provenance.derived)}</dd>")
        if pic['counts'] and any(pic['counts'].values()):
            a(f"<dt>Grid</dt><dd>{pic['counts']['shared']} cells with several owners, {pic['counts']['empty']} empty cells, "
              f"{pic['counts']['outside']} elements outside the matrix</dd>")
    a("</dl>")
    if e.layout is not None:
        a("<div>The doc&#x27;s formula:</div>")
        a(f"<pre>{esc(e.layout.provenance.formula_text.strip(chr(10)))}</pre>")
        if e.layout.regs.elements_text is not None:
            a(f"<div>The doc&#x27;s element list: <code>{esc(e.layout.regs.elements_text)}</code></div>")
    elif e.source_excerpt:
        a("<div>The doc&#x27;s formula does not parse; at the marked column:</div>")
        a(f"<pre>{esc(chr(10).join(e.source_excerpt))}</pre>")
    for f, cl in zip(e.findings, e.cex_lines):
        a(f"<h4>{esc(f.check)}: {_badge(f.status, f.expected)}"
          + ("" if f.as_expected else f" (expected {esc(f.expected)})") + "</h4>")
        a(f"<div>{esc(f.message)}</div>")
        if cl:
            a("<div>Counterexample:</div><ul class=\"cex\">" + "".join(f"<li>{esc(x)}</li>" for x in cl) + "</ul>")
    if e.corrected is not None and e.corrected_result is not None:
        cr = e.corrected_result
        ok = all(c.status == "proved" for c in cr.checks)
        a(f"<h4>Suggested correction</h4><div>The spec&#x27;s <code>[fragment.corrected]</code>, checked as "
          f"<code>{esc(e.corrected.id)}</code>: "
          + ("every property proved." if ok else "not every property proved: " + esc(
              ", ".join(f"{c.check} {c.status}" for c in cr.checks if c.status != "proved"))) + "</div>")
        if e.layout is None or e.corrected.provenance.formula_text != e.layout.provenance.formula_text:
            a(f"<pre>{esc(e.corrected.provenance.formula_text.strip(chr(10)))}</pre>")
        fixed = e.corrected.regs
        if e.layout is not None and fixed.elements_text != e.layout.regs.elements_text and fixed.elements_text:
            a(f"<div>Element list: <code>{esc(fixed.elements_text)}</code></div>")
        if e.layout is not None and (fixed.count, fixed.elements_per_register) != (
                e.layout.regs.count, e.layout.regs.elements_per_register):
            a(f"<div>Registers: {fixed.count} x {fixed.elements_per_register} elements "
              f"(.{esc(fixed.type)})</div>")
    elif e.fix is not None:
        fx = e.fix
        a(f"<h4>Suggested correction</h4><div>Search over one integer constant (|change| \u2264 {e.fix_bound}): in "
          f"<code>{esc(fx.definition)}</code>, change {fx.old} to {fx.new} (formula line {fx.pos.line}, column "
          f"{fx.pos.col}). The changed fragment is a bijection, proved by Z3 and by enumeration.</div>")
        if fx.old_line:
            a(f'<pre class="diff"><span class="del">- {esc(fx.old_line)}</span>\n'
              f'<span class="add">+ {esc(fx.new_line)}</span></pre>')
    elif e.fix_searched:
        a(f"<h4>Suggested correction</h4><div>None found: no change of one integer constant by at most {e.fix_bound} "
          f"makes the fragment a bijection.{esc(_stopped(e))}</div>")
    if pic['svg']:
        a('<div class="pic">' + pic["svg"].strip() + "</div>")
        if pic['svg_full_file']:
            a(f'<div class="note">Condensed picture; every cell: <a href="{esc(quote(pic["svg_full_file"]))}">'
              f"{esc(pic['svg_full_file'])}</a>.</div>")
    a("</section>")
    return o


# ----------------------------------------------------------------------------- files



def render_files(m: Model) -> dict[str, str]:
    """Relative path -> text, for every file of the report."""
    pics = draw(m)
    files = {"report.md": render_markdown(m, pics), "report.html": render_html(m, pics)}
    for pic in pics.values():
        if pic['svg_file']:
            files[pic['svg_file']] = pic['svg']
        if pic['svg_full_file']:
            files[pic['svg_full_file']] = pic['svg_full']
    return dict(sorted(files.items()))


def check_tree(out: str | Path, owns: Owns = REPORT) -> None:
    """Refuse, before any work, an output directory that cannot be written or replaced (``OutputError``):
    one that cannot be made, or that holds anything the command did not write (``files.check_output_dir``)."""
    check_output_dir(out, owns)


def write_tree(files: Mapping[str, str], out: str | Path, owns: Owns = REPORT) -> None:
    """Write ``files`` into ``out`` all at once: temp dir beside it, then rename into place.

    An existing ``out`` is replaced only if it holds nothing but what ``owns`` says the command wrote (by
    default a previous report).
    """
    shown, out = out, Path(out)
    check_tree(out, owns)
    parent = out.resolve().parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=parent))
    except OSError as e:
        raise output_error(shown, e) from None
    old: Path | None = None
    try:
        for rel, text in files.items():
            p = tmp / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            with open(p, "w", encoding="utf-8", newline="\n") as fh:
                fh.write(text)
        for p in sorted(tmp.rglob("*")):
            os.chmod(p, 0o755 if p.is_dir() else 0o644)
        os.chmod(tmp, 0o755)
        if out.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=parent))
            os.rmdir(old)
            os.rename(out, old)
        os.rename(tmp, out)
    except BaseException as e:  # an interrupt too: nothing half-written is left, the old output is back
        shutil.rmtree(tmp, ignore_errors=True)
        if old is not None and old.exists() and not out.exists():
            os.rename(old, out)
        if isinstance(e, OSError):
            raise output_error(shown, e) from None
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def read_references(path: str | Path) -> dict[str, Any]:
    """The ``references`` object of a ``crosscheck --matrix --format json`` file; ``OutputError`` (one line)
    when it cannot be read or is no such document."""
    import json
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as e:
        raise OutputError(f"--references {path}: {e.strerror or 'cannot read'}") from None
    except ValueError as e:
        raise OutputError(f"--references {path}: not JSON ({str(e).splitlines()[0]})") from None
    refs = doc.get("references") if isinstance(doc, dict) else None
    if not (isinstance(refs, dict) and isinstance(refs.get("layouts"), list) and isinstance(refs.get("names"), list)
            and all(isinstance(e, dict) and isinstance(e.get("id"), str) and isinstance(e.get("cells"), dict)
                    for e in refs["layouts"])):
        raise OutputError(f"--references {path}: not a `ptx-verify crosscheck --matrix --format json` document")
    return refs


def write_report(m: Model, out: str | Path) -> int:
    """Render the model (``checks.report_model.build``: ``api.report_model``) and write the tree; the number of
    SVG files written."""
    files = render_files(m)
    write_tree(files, out)
    return sum(1 for name in files if name.endswith(".svg"))


__all__ = ["REPORT", "SVG_MARK", "Model", "OutputError", "check_tree", "read_references",
           "render_files", "render_html", "render_markdown", "write_report", "write_tree"]
