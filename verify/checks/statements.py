"""A doc page's statements judged: each against the reviewed specs, and against the page's other statements.

The readers (``verify.catalog.page_statements``) read what a page states, one value at its words
(``verify.layout.statements.Statement``); here each is decided, never as text but by meaning:

* a fact the reviewed specs record (a register count, a type, an element list expanded for every N, a set of
  valid N, a matrix shape, the registers per ``.num``, the modes an atom exists for...) is compared with the
  reviewed layout of the same id, at every member of a family;
* a statement about a map (a group of four consecutive threads holds a row, the next register holds the next
  matrix, a layout written in CuTe notation, Table 52's allowed modes) is decided by both engines
  (``verify.checks.maps.same``) against the reviewed map;
* a fact no reviewed spec records is held against the page's other statements of the same fact (and the
  arithmetic the page writes is redone).

A statement that agrees with the reviewed doc layout where the reviewed record corrects it, or that states the
value of an erratum the reviewed record names (``KNOWN``), is a known erratum: refuted, expected refuted.  Any
other difference is a finding at the statement's words, expected proved: ``check`` exits 1.

``judge(spec, timeout)`` gives a ``StatementResult`` per statement and the ``Finding``s of the ones that are not
proved.  Every kind a reader states has a judge here (``JUDGES``); ``tests/test_page_statements.py`` holds that.
"""
from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from ..errors import SpecError
from ..formula import FormulaError
from ..layout.statements import Statement
from ..results import Finding, StatementResult
from ..witnesses import TextPosition
from . import statements_fragments, statements_matrix, statements_matrix_examples, statements_other, statements_shared  # noqa: F401 - they register
if TYPE_CHECKING:
    from ..layout.model import Spec
from .statement_base import CONSISTENT, JUDGES, KNOWN, PAGE, Context, Verdict, _known_subject, _show, agree, differ, known


# ----------------------------------------------------------------------------- the run

def _verdict(st: Statement, ctx: Context) -> Verdict:
    if st.unread:
        return differ(f"the words do not read as a statement of this kind: {st.unread}", PAGE)
    judge = JUDGES.get(st.kind)
    if judge is None:  # a reader states a kind no judge knows: never a silent pass
        return Verdict("error", f"no judge for statements of kind {st.kind!r}", PAGE)
    note = KNOWN.get((st.kind, _known_subject(st.subject), st.value))
    try:
        v = judge(st, ctx)
    except (SpecError, FormulaError, ArithmeticError, ValueError) as err:
        return differ(f"the statement cannot be evaluated: {err}", PAGE)
    if v is None:
        v = _by_the_page(st, ctx)
    if note and v.status == "refuted":
        return known(f"{v.message}; a known erratum: {note}", v.against)
    return v


def _by_the_page(st: Statement, ctx: Context) -> Verdict:
    """No reviewed fact: the statement against the page's other statements of the same fact."""
    others = [s for s in ctx.same(st) if s is not st]
    if not others:
        return agree("stated once; no reviewed spec records it", PAGE)
    votes = Counter(repr(s.value) for s in ctx.same(st))
    top, n = votes.most_common(1)[0]
    if repr(st.value) == top and (n > 1 or len(votes) == 1):
        return agree(f"as the page states it {n - 1} more time(s)", PAGE)
    elsewhere = next(s for s in others if repr(s.value) != repr(st.value))
    return differ(f"the page states {_show(elsewhere.value)} at line {elsewhere.line}", PAGE, (elsewhere,))


def judge(spec: Spec, timeout: float) -> tuple[list[StatementResult], list[Finding]]:
    """Every statement of ``spec`` judged (module docstring): the results, and a finding for each one not proved
    (a known erratum's is as expected)."""
    if not spec.statements:
        return [], []
    ctx = Context.of(spec, timeout)
    results: list[StatementResult] = []
    findings: list[Finding] = []
    for st in spec.statements:
        v = _verdict(st, ctx)
        if v.status == "proved" and st.kind in CONSISTENT:
            others = [s for s in ctx.same(st) if s.value != st.value]
            if others:
                o = others[0]
                v = differ(f"{v.message}, but the page states {_show(o.value)} at line {o.line}", v.against, (o,))
        results.append(StatementResult(st.page, st.line, st.col, st.kind, st.subject, st.words, v.status, v.expected,
                                       v.against, v.message))
        if v.status != "proved":
            findings.append(Finding(st.subject or st.kind, "statement", v.status, v.expected,
                                    f"{st.where()}: {st.kind}: {v.message}",
                                    TextPosition(st.page, st.line, st.col, st.kind)))
            for o in v.also:  # the statement it contradicts: the finding there too (either may be the one changed)
                if (o.line, o.col) != (st.line, st.col):
                    findings.append(Finding(o.subject or o.kind, "statement", v.status, v.expected,
                                            f"{o.where()}: {o.kind}: contradicted by line {st.line}: {v.message}",
                                            TextPosition(o.page, o.line, o.col, o.kind)))
    findings += _coverage(ctx)
    return _unique(results), _unique(findings)


def _unique(items: list) -> list:
    return list(dict.fromkeys(items))


def _coverage(ctx: Context) -> list[Finding]:
    """A section's reviewed layouts that none of its statements states (a row dropped from the page, or its type
    changed): a finding at the section's first statement."""
    out: list[Finding] = []
    stated = {s.value for s in ctx.statements if s.kind == "layout" and not s.unread}
    by_reference = {(s.subject, s.value[0]) for s in ctx.statements if s.kind == "operand" and s.value
                    and s.value[1] == "reference"}
    with_rows = {s.section for s in ctx.statements if s.kind == "layout"}
    seen: set[str] = set()
    for s in ctx.statements:
        if s.kind != "shape" or not s.subject.startswith("section:") or s.subject in seen or s.section not in with_rows:
            continue
        seen.add(s.subject)
        missing = [lay.id for lay in ctx.anchored(s.subject) if lay.id not in stated
                   and (s.subject, lay.operand) not in by_reference]
        for lid in missing:
            out.append(Finding(lid, "statement", "refuted", "proved",
                               f"{s.where()}: layout: the reviewed specs record {lid} in this section, but the page "
                               "no longer states it (a row dropped, or its instruction, shape, operand or types changed)",
                               TextPosition(s.page, s.line, s.col, "layout")))
    return out


def kinds() -> tuple[str, ...]:
    return tuple(sorted(JUDGES))


__all__ = ["CONSISTENT", "JUDGES", "KNOWN", "Verdict", "judge", "kinds"]
