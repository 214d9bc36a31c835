"""Results -> JUnit XML (``check --format junit``), the flavour Jenkins, GitLab and GitHub Actions
test reporters read.

    <testsuites name="ptx-verify check" tests=".." failures=".." errors=".." skipped="0">
      <testsuite name="specs/mma.m16n8k256.toml" tests=".." failures=".." errors=".." skipped="0">
        <testcase classname="mma.m16n8k256.A.b1" name="injective">
          <system-out>known erratum: ...</system-out>
        </testcase>
        ...

One ``testsuite`` per spec file (or doc page, for layouts ingested from pages), in report order;
one ``testcase`` per layout property (``classname`` = layout id, ``name`` = the check) and per
instruction-level check (``classname`` = instruction id), plus one per other finding (a doc formula
that does not parse: ``syntax``; a GPU observation: ``hardware``).

* an unexpected refutation (or a proof where the spec expects a refutation) is a ``failure``, an
  ``unknown`` (Z3 gave up) or ``error`` (the engines disagree) an ``error``; both carry the message,
  the counterexample and the location of the formula;
* a known erratum (refuted as the spec expects) **passes**, with a ``system-out`` note naming it.
  Not ``skipped``: the property was decided, and decided as recorded, so the test ran and its
  expectation held; a permanently non-zero "skipped" count would teach people to ignore skips, and
  GitLab and Jenkins show skipped tests as needing attention.  The note keeps it visible.

With a baseline (``check --baseline FILE``) only the differences fail: an unexpected result that
the baseline already had passes with a ``system-out`` note, and differences that are no test case
(a layout removed, a changed mapping, a fixed erratum...) are test cases of a last
``baseline`` suite.  No timestamps or timings: the same input gives the same bytes.
"""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import Any

from ..results import AnyFinding, Report
from .baseline import BaselineDiff
from .sarif import Index, Origins, Where, all_findings, counterexample_text, layout_where

_BAD_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _clean(text: str) -> str:
    """Text XML 1.0 can hold (control characters are written as \\xNN)."""
    return _BAD_XML.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


class _Suites:
    def __init__(self) -> None:
        self.order: list[str] = []
        self.cases: dict[str, list[ET.Element]] = {}

    def add(self, suite: str, classname: str, name: str) -> ET.Element:
        if suite not in self.cases:
            self.order.append(suite)
            self.cases[suite] = []
        case = ET.Element("testcase", {"classname": _clean(classname), "name": _clean(name)})
        self.cases[suite].append(case)
        return case


def _child(case: ET.Element, tag: str, text: str, message: str = "", kind: str = "") -> None:
    attrs = {}
    if message:
        attrs["message"] = _clean(message)
    if kind:
        attrs["type"] = kind
    el = ET.SubElement(case, tag, attrs)
    el.text = _clean(text)


def _details(f: AnyFinding, where: Where | None) -> str:
    lines = [f"{f.check}: {f.status} (expected {f.expected})"]
    if f.message:
        lines.append(f.message)
    if f.counterexample:
        lines.append(f"counterexample: {counterexample_text(f.counterexample)}")
    if where is not None:
        lines.append(f"formula: {where.text()}")
    return "\n".join(lines)


def check_junit(report: Report, origins: Origins = Origins(), diff: BaselineDiff | None = None,
                baseline_file: str = "") -> str:
    """The JUnit XML of a ``check`` run (see the module docstring)."""
    idx = Index(report, origins)
    findings = {(f.layout, f.check): f for f in all_findings(report)}
    suites = _Suites()
    done: set[tuple[str, str]] = set()

    def judge(case: ET.Element, sid: str, check: str, f: AnyFinding | None, where: Where | None) -> None:
        if f is None or (f.as_expected and f.status in ("proved", "confirmed")):
            if diff is not None and (sid, check) in diff.changed_checks():  # e.g. a baseline failure now proved
                text = _change(diff, sid, check)
                _child(case, "failure", text, message=text, kind="baseline")
            return  # proved as expected: a plain pass
        if f.as_expected:
            what = "by design" if check == "metadata_invalid" else "known erratum"
            _child(case, "system-out", f"{what}, {f.status} as the spec expects: "
                   + _details(f, where) + f"\nerratum: {idx.erratum(sid, check)}")
            return
        if diff is not None and not diff.differs(sid, check):
            _child(case, "system-out", f"unexpected, but the same in the baseline {baseline_file}: "
                   + _details(f, where))
            return
        tag = "error" if f.status in ("unknown", "error") else "failure"
        change = _change(diff, sid, check)
        _child(case, tag, (change + "\n" if change else "") + _details(f, where),
               message=f"{f.status}, expected {f.expected}: {f.message}"[:1000], kind=f.status)

    where: Where | None
    for r in report.results:
        lay = r.layout
        where = layout_where(lay, origins)
        for c in r.checks:
            f = findings.get((lay.id, c.check))
            done.add((lay.id, c.check))
            judge(suites.add(where.path, lay.id, c.check), lay.id, c.check, f, where)
        for key in sorted(k for k in findings if k[0] == lay.id and k not in done):
            done.add(key)
            judge(suites.add(where.path, lay.id, key[1]), lay.id, key[1], findings[key], where)
    for ins in report.instructions:
        sid = ins.id
        anchor = idx.anchor(sid)
        where = layout_where(anchor, origins) if anchor is not None else None
        suite = where.path if where is not None else "instructions"
        for c in ins.checks:
            done.add((sid, c.check))
            judge(suites.add(suite, sid, c.check), sid, c.check, findings.get((sid, c.check)), where)
    for key, f in findings.items():  # findings of no layout or instruction of this run (syntax, hardware)
        if key in done:
            continue
        where = idx.where(f)
        judge(suites.add(where.path if where is not None else "findings", f.layout, f.check), f.layout, f.check,
              f, where)
    if diff is not None:
        _baseline_cases(suites, diff, done, baseline_file or "baseline")

    root = ET.Element("testsuites", {"name": "ptx-verify check"})
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    suite_els = []
    for name in suites.order:
        cases = suites.cases[name]
        counts = {"tests": len(cases), "failures": sum(1 for c in cases if c.find("failure") is not None),
                  "errors": sum(1 for c in cases if c.find("error") is not None), "skipped": 0}
        s = ET.Element("testsuite", {"name": _clean(name), **{k: str(v) for k, v in counts.items()}})
        s.extend(cases)
        suite_els.append(s)
        for k in totals:
            totals[k] += counts[k]
    for k, v in totals.items():
        root.set(k, str(v))
    root.extend(suite_els)
    ET.indent(root, space="  ")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _change(diff: BaselineDiff | None, sid: str, check: str) -> str:
    if diff is None:
        return ""
    if sid in diff.added_ids():
        return "new since the baseline"
    for c in diff.new_failures + diff.fixed_errata + diff.instructions_changed:
        if (c.id, c.check) == (sid, check):
            return f"changed since the baseline: {c.was} -> {c.now}"
    return ""


def _baseline_cases(suites: _Suites, diff: BaselineDiff, done: set[tuple[str, str]], file: str) -> None:
    suite = f"baseline {file}"

    def fail(sid: str, name: str, text: str) -> None:
        _child(suites.add(suite, sid, name), "failure", text, message=text, kind="baseline")

    for c in diff.new_failures + diff.instructions_changed:
        if (c.id, c.check) not in done:
            fail(c.id, c.check, f"{c.check} was {c.was} in the baseline, now {c.now}")
    for c in diff.fixed_errata:
        if (c.id, c.check) in done:
            continue
        fail(c.id, f"{c.check} (fixed erratum)", f"{c.check} was refuted (a known erratum) in the baseline, "
             f"now {c.now}: update the spec's expect and the baseline")
    for lid in diff.layouts_added:
        fail(lid, "layout added", "a layout the baseline does not have")
    for lid in diff.layouts_removed:
        fail(lid, "layout removed", "in the baseline, no longer checked")
    for m in diff.mappings_changed:
        fail(m.id, "mapping", f"the mapping differs from the baseline's ({m.was} -> {m.now})")
    for iid in diff.instructions_added:
        fail(iid, "instruction added", "an instruction the baseline does not have")
    for iid in diff.instructions_removed:
        fail(iid, "instruction removed", "in the baseline, no longer checked")


def parse_counts(text: str) -> dict[str, Any]:
    """``tests``/``failures``/``errors``/``skipped`` of a JUnit document (for tests and scripts)."""
    root = ET.fromstring(text)
    return {k: int(root.get(k, "0")) for k in ("tests", "failures", "errors", "skipped")}


__all__ = ["check_junit", "parse_counts"]
