"""The Markdown of the report (``DIR/report.md``, pictures linked from ``DIR/svg/``): a pure function of the
report's model (``verify.results.report.Model``) and its pictures (``report_parts.draw``); the doc's words are
escaped, shown and never interpreted."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Mapping
from urllib.parse import quote

from ..layout.model import CHECK_NAMES, Layout
from ..results.report import LayoutEntry, Model, slug
from .report_parts import (REF_LEGEND, _by_design, _instr_checks, _instr_name, _notes, _ref_mark, _ref_summary,
                           _stopped, draw, entry_facts, finding_counts, instruction_columns,
                           status_word)


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
    n_find, unexpected = finding_counts(m)
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
    for label, words in entry_facts(lay, pic['counts']):
        a(f"- **{label}:** {_md(words)}")
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



__all__ = ["render_markdown"]
