"""Results -> SARIF 2.1.0 (``check --format sarif``), for code-scanning dashboards and editors.

One result per finding of the ``Report`` (every property that is not proved-as-expected, doc
formulas that do not parse, hardware observations), plus any unexpected instruction-level check
not already among them, plus one ``warning`` per erratum of the doc text (``doc_findings``, rule
``ptx-layout/doc/<kind>``, at the page, line and column; informational, as in the text output).  Each result names:

* its rule, ``ptx-layout/<check>`` (``ptx-layout/in_range``, ``ptx-layout/metadata_budget``...),
  with a short description and help text in ``tool.driver.rules``;
* the physical location of the formula at fault: the spec file and the line where the fragment's
  formula starts (``Layout.spec_path``, ``Layout.formula_line``) or, for a layout ingested from a
  doc page, the page and the page line of the formula; a syntax error points at its line and
  column; the layout or instruction id is the logical location;
* the counterexample, in words and as JSON, in the message text (and in ``properties``).

A known erratum (``status == expected``, the spec records it) is a ``note`` with an ``inSource``
suppression whose justification is the spec's erratum text; an unexpected result is an ``error``.
With a baseline (``check --baseline FILE``) only the differences are errors: the other results
keep their verdict as a ``warning`` (unexpected but unchanged) or a suppressed ``note``, each
result carries ``baselineState``, and differences that are no finding (a layout removed, a fixed
erratum...) get results of their own (rules ``ptx-layout/baseline/...``).

Deterministic: no timestamps, no absolute paths that were not given, results in report order,
rules in a fixed order, keys in a fixed order; the same input gives the same bytes.
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence
from urllib.parse import quote

from ..layout.corrections import correction_of
from .. import __version__
from ..layout.model import CHECK_NAMES, Layout
from ..results import AnyFinding, InstructionResult, Report
from ..witnesses import TextPosition, Witness, witness_json
from .baseline import BaselineDiff

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
TOOL = "ptx-verify"
RULE_PREFIX = "ptx-layout/"
FINGERPRINT = "ptxLayoutFinding/v1"

# check -> (name, short description, help text).  Order: layout checks, syntax, instruction checks
# in the order they run, hardware, then the baseline differences.
RULES: dict[str, tuple[str, str, str]] = {
    "count": ("RegisterCount", "registers x elements per register x threads = rows x cols = the element list",
              "The doc's register count and elements per register must account for every matrix element exactly "
              "once per warp (per MMA computation for m8n8k4), and agree with the length of its element list. "
              "Fix the register table of the section, or record the erratum in the spec (expect = { count = "
              "\"refuted\" } with its erratum text)."),
    "elements": ("ElementList", "the doc's element list is exactly a0, a1, ... in order",
                 "The element list must name each element once, in order, separated by commas: no duplicate, gap "
                 "or stray punctuation. The counterexample names the first position that differs."),
    "packing": ("RegisterPacking", "elements per register = register width / element width",
                "A .b32 register holds one .tf32, two .f16, four .s8 or eight .s4 elements. The counterexample "
                "gives the register type, the element type and both widths."),
    "in_range": ("InRange", "every (lane, element) has a defined cell inside the rows x cols matrix",
                 "Some element of some lane is placed outside the matrix, or no case of the piecewise formula "
                 "applies to it. The counterexample names the lane, the element and the cell it reaches (row and "
                 "col null when no case applies). Proved or refuted by Z3 and by exhaustive enumeration."),
    "injective": ("Injective", "no two (lane, element) pairs share a cell",
                  "Two elements land on the same matrix cell, so some other cell is lost. The counterexample names "
                  "the first colliding pair in (lane, i) order and their cell. Proved or refuted by Z3 and by "
                  "exhaustive enumeration."),
    "surjective": ("Surjective", "every cell of the matrix is held by some (lane, element)",
                   "Some matrix cell is held by no lane. The counterexample is the first such hole in (row, col) "
                   "order. Proved or refuted by Z3 and by exhaustive enumeration."),
    "syntax": ("FormulaSyntax", "the doc's formula parses",
               "The formula as the doc prints it is not well-formed pseudo-code (the location is the column "
               "where parsing stopped). The spec records it with expect = { syntax = \"refuted\" } and a "
               "[fragment.corrected] formula, which is checked instead."),
    "shapes": ("OperandShapes", "A is M x K, B is K x N, C/D is M x N, and each fragment reaches exactly that",
               "An operand's declared extent, or the rows and columns its fragment reaches, do not match the "
               "instruction shape."),
    "k": ("SharedK", "A and B reach the same k, exactly [0, K), per MMA computation",
          "The k values that A's fragment reaches differ from those B's reaches; the counterexample is the k "
          "missing on one side with the lane and element that hold it on the other."),
    "registers": ("OperandRegisters", "registers x elements per register = element list = rows x cols / threads",
                  "For every operand of the instruction, as the doc states it, the register arithmetic must agree "
                  "with the matrix size per thread."),
    "lane_groups": ("LaneGroups", "m8n8k4: each MMA computation's A, B and C/D are held by one lane group",
                    "For each of the four MMA computations of m8n8k4, the lanes holding its A, B and C/D must be the "
                    "same lane group, and each operand a bijection onto its local matrix."),
    "chunk_ranges": ("SparseChunkRanges", "sparse A: every [firstcol ... lastcol] is whole chunks inside [0, K)",
                     "A sparse A element's logical column range must cover whole chunks of the sparsity pattern "
                     "inside the K extent."),
    "metadata_distinct": ("SparseMetadataDistinct", "every valid metadata value puts a chunk's kept elements on "
                                                    "distinct columns",
                          "Under each valid metadata value, the kept elements of one chunk must land on distinct "
                          "logical columns."),
    "metadata_ordered": ("SparseMetadataOrdered", "every ::ordered_metadata value keeps them in increasing order",
                         "Under each ::ordered_metadata value, the kept elements of a chunk must be in increasing "
                         "column order."),
    "metadata_invalid": ("SparseMetadataInvalid", "a doc-invalid metadata value makes two kept elements collide "
                                                  "(expected refuted)",
                         "Refuted by design: the doc calls metadata values with equal indices invalid, and the "
                         "verifier shows the collision such a value causes (value, elements and cell)."),
    "metadata_budget": ("SparseMetadataBudget", "each (row, chunk) metadata field is supplied by exactly one "
                                                "(lane, nibble)",
                        "For each sparsity-selector value, every index field of the metadata must be supplied by "
                        "exactly one lane and nibble, and by the lanes the selector names."),
    "metadata_group": ("SparseMetadataGroup", "each metadata field a lane supplies belongs to a row its group holds",
                       "A lane must supply only the metadata of rows its own group of four holds in A."),
    "reviewed": ("ReviewedLayout", "a doc page states the map the reviewed spec records",
                 "A doc page checked against the reviewed specs must give every reviewed layout the same map, state "
                 "no layout the specs do not record, and drop none."),
    "register_facts": ("ReviewedRegisterFacts", "a doc page states the register facts the reviewed spec records",
                       "Register count and type, element list, domain and matrix as a doc page states them must be "
                       "what the reviewed spec records, even where the map is the same."),
    "doc_text": ("PageTextErratum", "a doc page's text has no error the reviewed spec does not record",
                 "A register count, packing or element list in a doc page that contradicts the rest of the page "
                 "must be an erratum the reviewed spec of its layout records."),
    "evaluation": ("PageFormulaEvaluation", "a doc page's formula can be evaluated on its domain",
                   "A doc formula that cannot be evaluated (division by zero, ...) leaves its fragment unchecked."),
    "hardware": ("HardwareObservation", "the layout explains what the GPU computes",
                 "Probe kernels ran the real instruction on a GPU (ptx-verify confirm); the spec's formulas must "
                 "explain every observed relation between A, B, C and D elements."),
}
BASELINE_RULES: dict[str, tuple[str, str, str]] = {
    "baseline/check-changed": ("BaselineCheckChanged", "a check's status differs from the baseline's",
                               "The status of this check is not the one recorded in the baseline file. If the "
                               "change is meant, update the baseline (ptx-verify check --baseline FILE "
                               "--update-baseline) in the same commit."),
    "baseline/fixed-erratum": ("BaselineFixedErratum", "a known erratum is fixed",
                               "The baseline shows this check refuted as the spec expects (a known erratum); it is "
                               "now proved. Update the spec's expect and the baseline."),
    "baseline/layout-added": ("BaselineLayoutAdded", "a layout that the baseline does not have",
                              "A new layout is checked; update the baseline to record it."),
    "baseline/layout-removed": ("BaselineLayoutRemoved", "a layout of the baseline is gone",
                                "A layout that the baseline records is no longer checked."),
    "baseline/mapping-changed": ("BaselineMappingChanged", "a layout's mapping differs from the baseline's",
                                 "The digest of the map (every (lane, i) -> (MMA computation, row, col)) changed: "
                                 "the layout itself is different, even where every check has the same status."),
    "baseline/instruction-added": ("BaselineInstructionAdded", "an instruction that the baseline does not have",
                                   "A new instruction is checked; update the baseline to record it."),
    "baseline/instruction-removed": ("BaselineInstructionRemoved", "an instruction of the baseline is gone",
                                     "An instruction that the baseline records is no longer checked."),
}
_DESIGNED = {"metadata_invalid": "Refuted by design: the doc calls these metadata values invalid, and the "
                                 "collision they cause is the one it predicts."}


# ----------------------------------------------------------------------------- where things are

@dataclass(frozen=True)
class Origins:
    """Where the layouts of a run were read from, as the user gave the paths.

    ``pages``: doc page file name -> path as given, for the pages that were ingested;
    ``spec_files``: the spec files that were read (a layout of any other spec came from a page).
    Without pages, every layout is located in its spec file.
    """

    pages: Mapping[str, str] = field(default_factory=dict)
    spec_files: frozenset[str] = frozenset()

    def from_page(self, lay: Layout) -> str | None:
        """The page path of a layout ingested from a doc page, else None."""
        if not self.pages or lay.provenance.spec_path in self.spec_files:
            return None
        return self.pages.get(Path(lay.provenance.source.file).name)


@dataclass(frozen=True)
class Where:
    path: str  # as given (relative stays relative)
    line: int = 0  # 0: unknown
    col: int = 0

    def text(self) -> str:
        return self.path + (f":{self.line}" if self.line else "") + (f":{self.col}" if self.col else "")


def layout_where(lay: Layout, origins: Origins = Origins()) -> Where:
    """The formula of ``lay``: its page line (ingested from a page) or its spec file line."""
    page = origins.from_page(lay)
    if page is not None:
        return Where(page, max(0, lay.provenance.source.line))
    return Where(lay.provenance.spec_path or lay.provenance.source.file, max(0, lay.provenance.formula_line))


class Index:
    """Layouts and instructions of a report by id, with their locations."""

    def __init__(self, report: Report, origins: Origins = Origins()) -> None:
        self.origins = origins
        self.layouts: dict[str, Layout] = {r.layout.id: r.layout for r in report.results}
        self.layouts.update({m.layout.id: m.layout for m in report.maps})  # layouts with no register facts too
        self.instructions: dict[str, InstructionResult] = {i.id: i for i in report.instructions}

    def operands(self, sid: str) -> Sequence[Layout]:
        ins = self.instructions.get(sid)
        return ins.operands if ins is not None else ()

    def anchor(self, sid: str) -> Layout | None:
        """The layout a result about ``sid`` is located at (an instruction: its operand with an erratum,
        else its first; a layout whose doc formula does not parse: its corrected twin)."""
        if sid in self.layouts:
            return self.layouts[sid]
        ops = self.operands(sid)
        if ops:  # the operand whose doc text is at fault, if one is
            return next((op for op in ops if op.provenance.erratum),
                        next((op for op in ops if any(v != "proved" for v in op.expect.values())), ops[0]))
        return correction_of(self.layouts, sid)

    def where(self, f: AnyFinding) -> Where | None:
        c = f.counterexample
        lay = self.anchor(f.layout)
        if f.check == "syntax" and isinstance(c, TextPosition) and not (lay is not None and self.origins.from_page(lay)):
            return Where(c.file, c.line or 0, c.col or 0)
        if f.check == "doc_text" and isinstance(c, TextPosition):  # the words at fault, on the page as given
            return Where(c.file, c.line or 0, c.col or 0)
        return layout_where(lay, self.origins) if lay is not None else None

    def erratum(self, sid: str, check: str) -> str:
        """The spec's words for an expected finding (its erratum text), for a suppression."""
        if check in _DESIGNED:
            return _DESIGNED[check]
        lays = [self.layouts[sid]] if sid in self.layouts else list(self.operands(sid))
        fix = correction_of(self.layouts, sid)
        if fix is not None:
            lays.append(fix)
        texts = []
        for lay in lays:
            if lay.provenance.erratum and lay.provenance.erratum.strip() not in texts:
                texts.append(lay.provenance.erratum.strip())
        return " ".join(texts) or f"Recorded in the spec as expected (expect = {{ {check} = \"refuted\" }})."


# ----------------------------------------------------------------------------- results

def counterexample_text(cex: Witness | None) -> str:
    """A counterexample's JSON form on one line (empty when there is none)."""
    return json.dumps(cex.to_json(), ensure_ascii=False, separators=(", ", ": ")) if cex else ""


def finding_text(f: AnyFinding) -> str:
    """``id: check status (...): message. Counterexample: {...}``, one line."""
    if f.as_expected and f.check in _DESIGNED:
        verdict = f"{f.status} (by design, as the spec expects)"
    elif f.as_expected:
        verdict = f"{f.status} (known erratum, as the spec expects)" if f.status != "proved" else f.status
    else:
        verdict = f"{f.status}, expected {f.expected}"
    text = f"{f.layout}: {f.check} {verdict}"
    if f.message:
        text += f": {f.message.rstrip('.')}."
    if f.counterexample:
        text += f" Counterexample: {counterexample_text(f.counterexample)}"
    return text


def all_findings(report: Report) -> list[AnyFinding]:
    """``Report.findings`` plus any instruction-level check not proved-as-expected that is not among them."""
    out = list(report.findings)
    seen = {(f.layout, f.check) for f in out}
    for ins in report.instructions:
        for f in ins.findings:
            if (f.layout, f.check) not in seen:
                seen.add((f.layout, f.check))
                out.append(f)
    return out


def uri(path: str) -> str:
    """A URI reference for a path as given: relative stays relative, absolute becomes file://."""
    p = path.replace(os.sep, "/")
    if os.path.isabs(path):
        return Path(path).as_uri()
    return quote(p, safe="/!$&'()*+,;=:@-._~")


def _location(w: Where, logical: str, kind: str) -> dict[str, Any]:
    phys: dict[str, Any] = {"artifactLocation": {"uri": uri(w.path)}}
    if w.line:
        phys["region"] = {"startLine": w.line, **({"startColumn": w.col} if w.col else {})}
    return {"physicalLocation": phys, "logicalLocations": [{"fullyQualifiedName": logical, "kind": kind}]}


def _rule_list(report_checks: Iterable[str], baseline: bool) -> list[str]:
    known = list(RULES)
    extra = sorted({c for c in report_checks if c not in RULES})
    return known + extra + (list(BASELINE_RULES) if baseline else [])


DOC_PREFIX = "doc/"  # rules of the errata found in the doc text itself (``doc_findings``)


def _rule_json(key: str) -> dict[str, Any]:
    if key.startswith(DOC_PREFIX):
        kind_ = key[len(DOC_PREFIX):]
        text = (f"An erratum of the doc text ({kind_}), computed from the page's own statements one against another; "
                "the message names the statements and the numbers that contradict each other. Informational: it does "
                "not change the exit code.")
        return {"id": RULE_PREFIX + key, "name": "Doc" + "".join(p.title() for p in re.split(r"[-_]", kind_)),
                "shortDescription": {"text": f"An erratum of the doc text: {kind_}."}, "fullDescription": {"text": text},
                "help": {"text": text}, "defaultConfiguration": {"level": "warning"},
                "properties": {"tags": ["ptx-layout", "doc"]}}
    name, short, help_text = RULES.get(key) or BASELINE_RULES.get(key) or (
        "".join(p.title() for p in key.split("_")), f"the {key} check", f"The {key} check of ptx-verify.")
    if key in BASELINE_RULES:
        kind = "baseline"
    elif key in CHECK_NAMES or key in ("syntax", "hardware", "reviewed", "register_facts", "doc_text", "evaluation"):
        kind = "layout"
    else:
        kind = "instruction"
    return {"id": RULE_PREFIX + key, "name": name, "shortDescription": {"text": short[0].upper() + short[1:] + "."},
            "fullDescription": {"text": help_text}, "help": {"text": help_text},
            "defaultConfiguration": {"level": "error"}, "properties": {"tags": ["ptx-layout", kind]}}


def check_sarif(report: Report, origins: Origins = Origins(), diff: BaselineDiff | None = None,
                baseline_file: str = "") -> dict[str, Any]:
    """The SARIF log of a ``check`` run (see the module docstring)."""
    idx = Index(report, origins)
    findings = all_findings(report)
    doc = list(report.doc_findings)
    rules = _rule_list([*(f.check for f in findings), *(DOC_PREFIX + d.kind for d in doc)], diff is not None)
    rule_index = {k: n for n, k in enumerate(rules)}
    new_ids = diff.added_ids() if diff is not None else set()
    results: list[dict[str, Any]] = []

    def result(key: str, level: str, text: str, w: Where | None, logical: str, kind: str,
               props: dict[str, Any], fingerprint: str) -> dict[str, Any]:
        r: dict[str, Any] = {"ruleId": RULE_PREFIX + key, "ruleIndex": rule_index[key], "level": level,
                             "message": {"text": text}}
        if w is not None:
            r["locations"] = [_location(w, logical, kind)]
        else:
            r["locations"] = [{"logicalLocations": [{"fullyQualifiedName": logical, "kind": kind}]}]
        r["partialFingerprints"] = {FINGERPRINT: fingerprint}
        r["properties"] = props
        return r

    reported: set[tuple[str, str]] = set()
    for f in findings:
        reported.add((f.layout, f.check))
        is_ins = f.layout in idx.instructions
        props = {"id": f.layout, "check": f.check, "status": f.status, "expected": f.expected,
                 "as_expected": f.as_expected, "counterexample": witness_json(f.counterexample)}
        level = "error" if not f.as_expected else "note"
        if f.as_expected and f.status in ("proved", "confirmed"):
            level = "none"
        state = None
        if diff is not None:
            differs = diff.differs(f.layout, f.check)
            state = ("new" if f.layout in new_ids or _was_fine(diff, f) else "updated") if differs else "unchanged"
            if not differs and level == "error":
                level = "warning"  # unexpected, but the same in the baseline: only differences are errors
        r = result(f.check, level, finding_text(f), idx.where(f), f.layout, "instruction" if is_ins else "object",
                   props, f"{f.layout}:{f.check}")
        if state is not None:
            r["baselineState"] = state
        if f.as_expected and level == "note":
            r["suppressions"] = [{"kind": "inSource", "justification": idx.erratum(f.layout, f.check)}]
        results.append(r)
    for d in doc:  # errata of the doc text: a warning at the page position
        r = result(DOC_PREFIX + d.kind, "warning", f"{d.kind}: {d.message}", Where(d.page, d.line, d.column),
                   d.section or d.page, "object", d.to_json(), f"{Path(d.page).name}:{d.line}:{d.column}:{d.kind}")
        results.append(r)
    if diff is not None:
        results.extend(_baseline_results(diff, idx, reported, result, baseline_file))
    run: dict[str, Any] = {
        "tool": {"driver": {"name": TOOL, "fullName": "ptx-layout-verify: PTX warp-level fragment layout verifier",
                            "version": __version__, "semanticVersion": __version__,
                            "rules": [_rule_json(k) for k in rules]}},
        "columnKind": "unicodeCodePoints",
        "results": results,
        "properties": {"as_expected": report.as_expected, "layouts": len(report.results),
                       "instructions": len(report.instructions)},
    }
    if diff is not None:
        run["properties"]["baseline"] = {"file": baseline_file, "differences": diff.count}
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}


def _was_fine(diff: BaselineDiff, f: AnyFinding) -> bool:
    """True when the baseline had no finding for this check (it was proved or absent)."""
    for c in diff.new_failures + diff.fixed_errata + diff.instructions_changed:
        if (c.id, c.check) == (f.layout, f.check):
            return c.was in ("proved", "absent")
    return False


def _baseline_results(diff: BaselineDiff, idx: Index, reported: set[tuple[str, str]], result: Any,
                      baseline_file: str) -> list[dict[str, Any]]:
    """Results for the differences that are not a finding of this run."""
    out = []
    base = Where(baseline_file) if baseline_file else None

    def at(sid: str) -> Where | None:
        lay = idx.anchor(sid)
        return layout_where(lay, idx.origins) if lay is not None else base

    def add(key: str, text: str, sid: str, w: Where | None, state: str, props: dict[str, Any], fp: str) -> None:
        kind = "instruction" if sid in idx.instructions or key.startswith("baseline/instruction") else "object"
        r = result(key, "error", text, w, sid, kind, props, fp)
        r["baselineState"] = state
        out.append(r)

    for c in diff.new_failures + diff.instructions_changed:
        if (c.id, c.check) not in reported:
            add("baseline/check-changed", f"{c.id}: {c.check} was {c.was} in the baseline, now {c.now}.", c.id,
                at(c.id), "updated", c.to_json(), f"{c.id}:{c.check}:changed")
    for c in diff.fixed_errata:
        if (c.id, c.check) not in reported:
            add("baseline/fixed-erratum", f"{c.id}: {c.check} was refuted (a known erratum) in the baseline, "
                f"now {c.now}.", c.id, at(c.id), "updated", c.to_json(), f"{c.id}:{c.check}:fixed")
    for lid in diff.layouts_added:
        add("baseline/layout-added", f"{lid}: a layout the baseline does not have.", lid, at(lid), "new",
            {"id": lid}, f"{lid}:added")
    for lid in diff.layouts_removed:
        add("baseline/layout-removed", f"{lid}: in the baseline, no longer checked.", lid, base, "absent",
            {"id": lid}, f"{lid}:removed")
    for m in diff.mappings_changed:
        add("baseline/mapping-changed", f"{m.id}: the mapping differs from the baseline's ({m.was} -> {m.now}).",
            m.id, at(m.id), "updated", m.to_json(), f"{m.id}:mapping")
    for iid in diff.instructions_added:
        add("baseline/instruction-added", f"{iid}: an instruction the baseline does not have.", iid, at(iid), "new",
            {"id": iid}, f"{iid}:added")
    for iid in diff.instructions_removed:
        add("baseline/instruction-removed", f"{iid}: in the baseline, no longer checked.", iid, base, "absent",
            {"id": iid}, f"{iid}:removed")
    return out


def to_text(log: Mapping[str, Any]) -> str:
    """Canonical text: two-space indent, keys as built, trailing newline."""
    return json.dumps(log, indent=2, ensure_ascii=False) + "\n"


__all__ = ["BASELINE_RULES", "RULES", "Index", "Origins", "Where", "all_findings", "check_sarif",
           "counterexample_text", "finding_text", "layout_where", "to_text", "uri"]
