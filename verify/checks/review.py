"""A doc page against the reviewed specs: the same maps, nothing dropped, nothing new.

Per-fragment properties cannot see a page formula that still gives a bijection but another one (two
branch conditions swapped, two registers exchanged); comparing it with the reviewed layout of the same
id can.  Every difference is a finding, expected only where the reviewed record says so:

* ``reviewed``: the page's map differs from the reviewed one (first differing (lane, i), both engines; for a
  map layout of the page, a shared-memory canonical layout, the first differing point of ``maps.same``),
  a page layout no reviewed spec records, or a reviewed layout the page no longer states;
* ``register_facts``: what the page says of the registers (count, type, element list, domain, matrix)
  differs from the reviewed layout, even where the map is the same (a dropped element list, a count
  changed in the text: ingest derives the page's own expectations from that text, so only the review
  can see it);
* ``syntax``: a fragment whose formula does not parse and could not be built (at the page position);
* ``doc_text``: an error in the text (a register count, a packing, an element list that contradicts the
  rest of the page) that the reviewed layout of its row does not record (at the page position; one the
  reviewed spec records is a known erratum, seen in that layout's own check);
* ``evaluation``: a page formula that cannot be evaluated on its domain (division by zero, ...).
"""
from __future__ import annotations

from ..errors import SpecError
from ..layout.model import Layout, MapLayout, Spec
from ..results import Finding
from ..witnesses import Facts, ReviewedFacts, TextPosition
from .equivalence import register_facts, same_map
from .maps import same


def review_findings(spec: Spec, checked: set[str], timeout: float) -> list[Finding]:
    """The findings of one page spec against its review (``checked``: the page layouts that could be
    evaluated; the others have an ``evaluation`` finding already)."""
    if not spec.page:
        return []
    out: list[Finding] = []
    reviewed = {r.id: r for r in spec.reviewed}
    for lay in spec.layouts:
        if lay.id not in checked:
            continue
        ref = reviewed.get(lay.id)
        if ref is None:
            if not lay.corrected:  # a correction ingest proposes is judged by its own checks
                out.append(Finding(lay.id, "reviewed", "refuted", "proved",
                                   f"{_where(lay)}: no reviewed spec records {lay.id}: the doc states a layout that "
                                   "is new (review it and add it to the specs)", Facts(_at(lay))))
            continue
        assert isinstance(ref, Layout)  # a register layout's id names a reviewed register layout (a map's is its own)
        r = same_map(ref, lay, timeout, names=("reviewed", "page"), check="reviewed")
        if r.status != "proved":
            out.append(Finding(lay.id, "reviewed", r.status, "proved",
                               f"{_where(lay)}: the page's layout is not the reviewed one: {r.message}", r.counterexample))
        fr, fp = register_facts(ref), register_facts(lay)
        if what := [k for k in fr if fr[k] != fp[k]]:
            out.append(Finding(lay.id, "register_facts", "refuted", "proved",
                               f"{_where(lay)}: the page states other register facts than the reviewed spec: "
                               + "; ".join(f"{k}: {fr[k]!r} -> {fp[k]!r}" for k in what),
                               ReviewedFacts(*lay.locate(1, 1), facts={k: {"reviewed": fr[k], "page": fp[k]} for k in what})))
    for m in spec.maps:  # a map layout of the page (a shared-memory canonical layout) against its reviewed map
        ref = reviewed.get(m.id)
        if not isinstance(ref, MapLayout):
            continue
        r = same(ref.map, m.map, timeout, ("reviewed", "page"), check="reviewed")
        if r.status != "proved":
            out.append(Finding(m.id, "reviewed", r.status, "proved",
                               f"{m.provenance.spec_path}:{m.provenance.formula_line}:1: the page's layout is not the reviewed one: {r.message}",
                               r.counterexample))
    for u in spec.unbuilt:
        out.append(Finding(u.layout, "syntax", "refuted", u.expected,
                           f"{u.file}:{u.line}:{u.col}: {u.message}; the fragment could not be built or checked",
                           TextPosition(u.file, u.line, u.col)))
    for t in spec.text_errata:
        if t.expected != "refuted":
            why = (f"the reviewed spec of {t.layout} records no {t.check} erratum" if t.check
                   else "no reviewed spec records an erratum of this kind")
            out.append(Finding(t.layout, "doc_text", "refuted", "proved",
                               f"{t.file}:{t.line}:{t.col}: {t.kind}: {t.message}; {why}",
                               TextPosition(t.file, t.line, t.col, t.kind)))
    stated = {lay.id for lay in spec.layouts} | {f.layout for f in spec.syntax_findings} | {u.layout for u in spec.unbuilt}
    for lid in spec.covers:
        if lid not in stated:
            out.append(Finding(lid, "reviewed", "refuted", "proved",
                               f"{spec.page}: the reviewed specs record {lid}, but the given pages do not state it "
                               "(dropped from the page, or the page refers to a section that is not among the pages: give that "
                               "page too, or its directory with --docs)",
                               None))
    return out


def evaluation_finding(lay: Layout, err: SpecError) -> Finding:
    """A page formula that cannot be evaluated: a finding at the page position (a spec file's would be
    bad input, exit 2)."""
    return Finding(lay.id, "evaluation", "refuted", "proved", err.one_line().replace(": error: ", ": ", 1),
                   TextPosition(err.path, err.line, err.col))


def _where(lay: Layout) -> str:
    f, line, col = lay.locate(1, 1)
    return f"{f}:{line}:{col}"


def _at(lay: Layout) -> dict[str, str | int]:
    f, line, col = lay.locate(1, 1)
    return {"file": f, "line": line, "col": col}
