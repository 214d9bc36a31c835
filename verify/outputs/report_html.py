"""The HTML of the report (``DIR/report.html``): one self-contained page (inline CSS, inline SVG, no external
resources), a pure function of the report's model (``verify.results.report.Model``) and its pictures
(``report_parts.draw``)."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Mapping, Sequence
from urllib.parse import quote

from ..layout.ids import corrected_id
from ..layout.model import CHECK_NAMES
from ..results.report import LayoutEntry, Model, slug
from .report_parts import (REF_LEGEND, _by_design, _instr_checks, _instr_name, _notes, _ref_mark, _ref_summary,
                           _stopped, draw, entry_facts, finding_counts, instruction_columns,
                           status_word)
from .svg import esc


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
    n_find, unexpected = finding_counts(m)
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
    for label, words in entry_facts(lay, pic['counts']):
        a(f"<dt>{label}</dt><dd>{esc(words)}</dd>")
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


__all__ = ["CSS", "render_html"]
