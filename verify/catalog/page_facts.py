"""What a fragment section of a doc page states, read off its blocks: the reading context (``_Ctx``: the section,
its instruction and shape, the findings so far), the element lists, the fragment table's rows (types, register
count and type, elements per register) checked against each other and against the matrix, and the formula text
after them (positions kept, the one mechanical repair tried, the formula's cells judged by the one decider).
``verify.catalog.section_reader`` walks a section with these; ``verify.catalog.ingest`` reads pages into
sections.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any, Iterable

from ..checks import maps
from ..engines.oracle import EvalError
from ..formula import Formula, FormulaError, parse_formula
from ..formula.parser import parse_lane_expression
from ..layout.elements import MAX_ELEMENTS
from ..layout.fragment_maps import FormulaFragment
from ..layout.model import MAP_CHECKS, Codomain, Domain
from ..layout.records import Shape
from ..layout.types import ELEMENT_BITS, REGISTER_BITS, elements_per_thread, packs
from ..witnesses import OutputUnreached, PointOutside, PointsCollide
from .page_model import Code, Section, Table
from .sections import (NUM, SUBBYTE_FLOATS, ElementList, IngestFinding,
                       RowFacts, freeze, num_word, types_in)


def parse_elements(text: str, prefix: str) -> tuple[ElementList, list[tuple[str, int, str]]]:
    """The doc's element list; problems as (kind, offset in text, detail)."""
    problems: list[tuple[str, int, str]] = []
    items: list[tuple[str, int]] = []
    pos = 0
    for part in text.split(","):
        lead = len(part) - len(part.lstrip())
        item = part.strip()
        m = re.match(r"^(…|\.{2,3})\s*(?=[A-Za-z])", item)
        if m:  # "… a30": an ellipsis without its own comma
            items.append((m.group(1), pos + lead))
            items.append((item[m.end():], pos + lead + m.end()))
        else:
            items.append((item, pos + lead))
        pos += len(part) + 1
    names: list[int] = []
    ellipsis_at: dict[int, int] = {}  # index in names -> offset of the ellipsis before it
    for item, off in items:
        if item in ("…", "...", ".."):
            ellipsis_at.setdefault(len(names), off)
            continue
        found = list(re.finditer(r"([A-Za-z]+)(\d+)", item))
        if not found:
            problems.append(("punctuation", off, f"item {item!r} names no element"))
            continue
        if len(found) > 1 or not re.fullmatch(r"[A-Za-z]+\d+", item):
            bad = re.search(r"[^A-Za-z0-9 ]", item)
            problems.append(("punctuation", off + (bad.start() if bad else 0),
                             f"{item!r}: elements not separated by ', '"))
        for m in found:
            if m.group(1) != prefix:
                problems.append(("prefix", off + m.start(), f"{m.group(0)!r} is not an element of this operand"))
            if int(m.group(2)) >= MAX_ELEMENTS:  # page text is untrusted: no list is expanded beyond the bound
                problems.append(("range", off + m.start(), f"{m.group(0)!r}: no fragment has {MAX_ELEMENTS} or more "
                                                           "elements per thread"))
                continue
            names.append(int(m.group(2)))
    expanded: list[int] = []
    for k, n in enumerate(names):
        if k in ellipsis_at and expanded:
            if len(expanded) + max(0, n - expanded[-1] - 1) > MAX_ELEMENTS:
                problems.append(("range", ellipsis_at[k], f"the ellipsis before {prefix}{n} names more than "
                                                          f"{MAX_ELEMENTS} elements"))
            else:
                expanded.extend(range(expanded[-1] + 1, n))
        expanded.append(n)
    seen: set[int] = set()
    dups = sorted({n for n in expanded if n in seen or seen.add(n)})  # type: ignore[func-returns-value]
    if dups:
        problems.append(("duplicate", text.find(f"{prefix}{dups[0]}", text.find(f"{prefix}{dups[0]}") + 1),
                         "named twice: " + ", ".join(f"{prefix}{d}" for d in dups)))
    want = list(range(len(expanded)))
    if not dups and sorted(expanded) != want:
        missing = sorted(set(range(max(expanded) + 1 if expanded else 0)) - set(expanded))
        problems.append(("gap", 0, "missing: " + ", ".join(f"{prefix}{d}" for d in missing)))
    elif not dups and expanded != want:
        problems.append(("gap", 0, "elements out of order"))
    if dups:
        missing = sorted(set(range(len(expanded))) - set(expanded))
        if missing:
            problems.append(("gap", 0, "missing: " + ", ".join(f"{prefix}{d}" for d in missing)))
    el = ElementList(text, tuple(f"{prefix}{n}" for n in expanded), bool(ellipsis_at),
                     tuple(sorted({p[0] for p in problems})))
    return el, problems


_REG_RX = re.compile(r"(?:containing|of)(?:\s+of)?\s+" + NUM + r"\s+\.([a-z0-9]+)\s+registers?\b", re.I)


_EACH_RX = re.compile(r"each(?:\s+register)?\s*,?\s+containing\s+" + NUM + r"\s+(non-zero\s+)?(.*?)\belements?\b"
                      r"(?:\s+out of\s+(\d+)\s+consecutive)?", re.I)


_TOTAL_RX = re.compile(r"containing\s+" + NUM + r"\s+(non-zero\s+)?(\.[^,]*?)\belements?\b"
                       r"(?:\s+out of\s+(\d+)\s+consecutive)?", re.I)


def _element_bits(t: str, per_register: int | None, register_type: str | None) -> int | None:
    return ELEMENT_BITS.get(t)


@dataclass
class _Ctx:
    section: Section
    number: str
    instruction: str
    shape: Shape
    findings: list[IngestFinding] = field(default_factory=list)

    def find(self, kind: str, severity: str, line: int, col: int, words: str, message: str,
             witness: dict[str, Any] | None = None, operand: str = "", types: Iterable[str] = ()) -> None:
        w = tuple((k, freeze(v)) for k, v in (witness or {}).items())
        self.findings.append(IngestFinding(kind, severity, self.section.page, line, col, _short(words),
                                           message, w, self.number, operand, tuple(types)))


def _short(words: str, limit: int = 120) -> str:
    words = re.sub(r"\s+", " ", words).strip()
    return words if len(words) <= limit else words[: limit - 1] + "…"


def _extent(operand: str, shape: Shape, sparse: bool) -> tuple[int, int]:
    """The rows x cols of an operand of a page's section (its shape is concrete: mMnNkK)."""
    m, n, k = (int(x) for x in (shape.m, shape.n, shape.k))
    if operand == "A":
        return (m, k // 2) if sparse else (m, k)
    if operand == "B":
        return k, n
    return m, n


def _operand_of(text: str) -> str | None:
    m = re.match(r"^Multiplicand ([AB])\b", text)
    if m:
        return m.group(1)
    if re.match(r"^Accumulators?\b", text):
        return "C"
    return None


class _Table:
    def __init__(self, table: Table, rows: list[RowFacts]) -> None:
        self.table = table
        self.rows = rows
        self.used = [False] * len(rows)


def _row_facts(ctx: _Ctx, table: Table, operand: str, lanes: int, sparse_a: bool,
               prev: RowFacts | None, row_index: int) -> RowFacts | None:
    row = table.rows[row_index]
    cells = row.cells
    if not cells or not cells[0].text:
        return None
    types = tuple(types_in(cells[0].text) or [t.strip(". ") for t in re.split(r"[/,]| or ", cells[0].text) if t.strip(". ")])
    frag = cells[1].text if len(cells) > 1 else ""
    fcol = cells[1].col if len(cells) > 1 else 1
    registers = register_type = per = None
    stated = ""
    kept = out_of = None
    m = _REG_RX.search(frag)
    if m:
        registers, register_type = num_word(m.group(1)), m.group(2).lower()
        rest = frag[m.end():]
        e = _EACH_RX.search(rest)
        t = _TOTAL_RX.search(rest)
        if e:
            per, stated = num_word(e.group(1)), "each"
            if e.group(2):
                kept, out_of = per, int(e.group(4)) if e.group(4) else None
        elif t:
            total = num_word(t.group(1))
            stated = "total"
            if t.group(2):
                kept, out_of = None, int(t.group(4)) if t.group(4) else None
            if registers and total % registers == 0:
                per = total // registers
            else:
                ctx.find("count-words", "error", row.line, fcol, frag,
                         f"{total} elements cannot be spread evenly over {registers} registers",
                         {"registers": registers, "elements": total}, operand, types)
    else:
        ctx.find("fragment-words", "warning", row.line, fcol, frag,
                 "cannot read the register count and type of this fragment", None, operand, types)
    rbits = REGISTER_BITS.get(register_type or "")
    element_bits = None
    if per is None and rbits:
        widths = {ELEMENT_BITS.get(t) for t in types}
        if len(widths) == 1 and None not in widths:
            per = max(rbits // widths.pop(), 1)  # type: ignore[operator]
    if per and rbits and rbits % per == 0 and rbits // per == 8 and any(t in SUBBYTE_FLOATS for t in types) \
            and all(ELEMENT_BITS.get(t, 8) <= 8 for t in types):
        element_bits = 8  # the doc packs these sub-byte types one per byte here
    # element list
    prefix = operand.lower()
    elements: ElementList | None = None
    inherited = False
    ecell = cells[2] if len(cells) > 2 else None
    etext = ecell.text if ecell else ""
    if sparse_a and operand == "A" and ("non-zero" in etext or not re.search(r"\b[a-z]\d+\b", etext)):
        etext = ""  # sparse A: "mapping as described in Sparse matrix storage", no list
        ecell = None
        elements = None
    elif not re.search(r"\b[A-Za-z]\d+\b", etext):
        if prev is not None and prev.elements is not None:
            elements, inherited = prev.elements, True
            last = cells[-1]
            ctx.find("missing-elements", "info", last.line or row.line, last.col + len(last.text), row.raw or cells[0].text,
                     "no element list in this row; using the row above (a cell spanning rows in the original table)",
                     {"inherited": prev.elements.text}, operand, types)
        else:
            ctx.find("missing-elements", "warning", row.line, 1, row.raw or cells[0].text,
                     "no element list in this table row", None, operand, types)
    else:
        elements, problems = parse_elements(etext, prefix)
        for kind, off, detail in problems:
            ctx.find("element-list-" + kind, "error", (ecell.line if ecell else 0) or row.line,
                     (ecell.col if ecell else 1) + off, etext,
                     f"element list {etext!r}: {detail}", {"list": etext, "detail": detail}, operand, types)
    if sparse_a and operand == "A" and elements is not None and not elements.names:
        elements = None
    # counts: registers x per register, element list, matrix size
    facts = RowFacts(types, registers, register_type, per, stated, elements, inherited, row.line, frag,
                     kept, out_of, element_bits)
    return facts


def _check_row(ctx: _Ctx, facts: RowFacts, operand: str, extent: tuple[int, int], lanes: int,
               col: int) -> RowFacts:
    """Register count x elements per register vs the element list and the matrix size."""
    rows, cols = extent
    want = elements_per_thread(rows, cols, lanes)
    regs, per = facts.registers, facts.per_register
    listed = len(facts.elements.names) if facts.elements and facts.elements.names else None
    corrected: dict[str, Any] = {}
    errata: list[str] = []
    count_ok = packing_ok = True
    w = {"registers": regs, "elements_per_register": per, "listed": listed,
         "matrix": f"{rows}x{cols}", "threads": lanes, "per_thread": want}
    if regs and per:
        held = regs * per
        if want is not None and held != want:
            count_ok = False
            msg = (f"{regs} registers x {per} elements = {held} per thread, but a {rows}x{cols} matrix over "
                   f"{lanes} threads is {want} per thread")
            ctx.find("count-matrix", "error", facts.line, col, facts.words, msg, w, operand, facts.types)
            errata.append(msg)
            if listed == want and want % regs == 0:
                corrected["elements_per_register"] = want // regs
        if listed is not None and listed != held:
            count_ok = False
            msg = f"{regs} registers x {per} elements = {held} per thread, but the element list names {listed}"
            ctx.find("count-list", "error", facts.line, col, facts.words, msg, w, operand, facts.types)
            if held == want:
                corrected["elements"] = ", ".join(f"{operand.lower()}{k}" for k in range(held))
            errata.append(msg)
    if listed is not None and want is not None and listed != want and not (regs and per):
        count_ok = False
        msg = f"the element list names {listed} per thread, but a {rows}x{cols} matrix needs {want}"
        ctx.find("count-list", "error", facts.line, col, facts.words, msg, w, operand, facts.types)
        errata.append(msg)
    rbits = REGISTER_BITS.get(facts.register_type or "")
    if rbits and per:
        for t in facts.types:
            ebits = facts.element_bits or ELEMENT_BITS.get(t)
            if ebits and packs(facts.register_type, ebits) != per:
                packing_ok = False
                fixed = corrected.get("elements_per_register")
                msg = f"a .{facts.register_type} register ({rbits} bits) holds {rbits // ebits} .{t}, not {per}"
                if fixed is None or rbits // ebits != fixed:
                    ctx.find("packing", "error", facts.line, col, facts.words, msg,
                             {"register_type": facts.register_type, "type": t, "element_bits": ebits,
                              "elements_per_register": per}, operand, facts.types)
                errata.append(msg)
                break
    if facts.elements and facts.elements.problems and not facts.elements_inherited:
        if "elements" not in corrected:
            n = want if want is not None else (regs * per if regs and per else len(facts.elements.names or ()))
            corrected["elements"] = ", ".join(f"{operand.lower()}{k}" for k in range(n))
        errata.append(f"element list {facts.elements.text!r} is malformed ({', '.join(facts.elements.problems)})")
    return replace(facts, count_ok=count_ok, packing_ok=packing_ok,
                   corrected=tuple(sorted(corrected.items())), errata=tuple(errata))


def _formula_text(code: Code) -> tuple[str, list[tuple[int, int]], int]:
    """Formula lines verbatim (runs of blank lines folded); page (line, col) of each line."""
    out: list[str] = []
    where: list[tuple[int, int]] = []
    blanks = 0
    for cl in code.lines:
        if not cl.text.strip():
            blanks += 1
            continue
        if out and blanks >= 2 or (out and blanks == 1 and code.lines and _single_blank_groups(code)):
            out.append("")
            where.append((0, 0))
        blanks = 0
        out.append(cl.text.rstrip())
        where.append((cl.line, cl.col))
    first = next((ln for ln, _ in where if ln), code.line)
    return "\n".join(out), where, first


def _single_blank_groups(code: Code) -> bool:
    """True when the doc separates groups by single blank lines (no line-per-line blanks)."""
    texts = [cl.text.strip() for cl in code.lines]
    runs = [len(r) for r in re.findall(r"(?:0)+", "".join("0" if not t else "1" for t in texts))]
    return bool(runs) and max(runs) == 1 and texts.count("") < len([t for t in texts if t]) - 1


def _repair(text: str) -> tuple[str, str] | None:
    """Try to close an unbalanced bracket; return (fixed text, what was done)."""
    lines = text.split("\n")
    for n, line in enumerate(lines):
        depth: list[tuple[str, int]] = []
        for k, ch in enumerate(line):
            if ch in "([":
                depth.append((ch, k))
            elif ch in ")]" and depth:
                depth.pop()
        if not depth:
            continue
        opener, at = depth[-1]
        closer = ")" if opener == "(" else "]"
        # candidate positions: after each token following the opener
        for m in re.finditer(r"[A-Za-z_%][A-Za-z_0-9]*|0[xX][0-9a-fA-F]+|\d+|\)|\]", line[at + 1:]):
            pos = at + 1 + m.end()
            cand = line[:pos] + closer + line[pos:]
            trial = lines[:n] + [cand] + lines[n + 1:]
            fixed = "\n".join(trial)
            if _parses(fixed):
                return fixed, f"inserted '{closer}' after {line[at + 1:pos].strip()!r} on formula line {n + 1}"
    return None


def _parses(text: str, prefix: str | None = None) -> bool:
    for p in ([prefix] if prefix else ["a", "b", "c"]):
        try:
            parse_formula(text, p)
            return True
        except FormulaError:
            continue
    return False


_GROUP = "(%laneid >> 2) % 4"  # the one lane grouping ``_group_table`` accepts (m8n8k4's quad-pairs)


def _enumerate(formula: Formula, lanes: int, n: int, rows: int, cols: int,
               group_of: dict[int, int] | None) -> dict[str, Any] | None:
    """Out of range, collisions and holes of a doc formula (None when it is a bijection): the page's facts
    (the formula over (lane, i), the matrix, the lane grouping) as a named map, judged by the one decider
    (``verify.checks.maps``: in_range, injective, surjective, both engines agreeing) as ``check`` judges a
    layout; this reader only words the witnesses."""
    groups = (max(group_of.values()) + 1) if group_of else 1
    domain = Domain(32, n, groups, parse_lane_expression(_GROUP, "group") if group_of else None)
    if group_of and any(domain.group_of(lane) != group_of.get(lane, 0) for lane in range(32)):
        raise ValueError(f"the lane grouping {sorted(group_of.items())} is not {_GROUP}")  # _group_table's contract
    m = FormulaFragment(formula, domain=domain, codomain=Codomain(rows, cols))
    evaluated = maps.evaluations(m)
    try:
        evaluated({})
    except EvalError as err:
        return {"error": err.message, "pos": (err.pos.line, err.pos.col)}
    # collisions wherever two elements land, as the fragment checks count them (``anywhere``)
    outside, collision, hole = maps.verdicts(m, MAP_CHECKS, evaluated=evaluated, anywhere=True)

    def mma(d: dict[str, Any], lane: int) -> dict[str, Any]:
        return {**d, "mma": group_of.get(lane, 0)} if group_of and groups > 1 else d

    def elem(p: Any) -> dict[str, Any]:
        return {"lane": p["lane"], "i": p["i"], "element": f"{formula.element_prefix}{p['i']}"}

    bad: dict[str, Any] = {}
    if outside is not None:
        assert isinstance(outside, PointOutside)
        at = outside.at
        bad["undefined" if at is None else "out_of_range"] = mma(
            {**elem(outside.point), "row": None if at is None else at["row"], "col": None if at is None else at["col"]},
            outside.point["lane"])
    if collision is not None:
        assert isinstance(collision, PointsCollide) and collision.at is not None
        bad["collision"] = mma({"first": elem(collision.first), "second": elem(collision.second),
                                "row": collision.at["row"], "col": collision.at["col"]}, collision.second["lane"])
    if hole is not None:
        assert isinstance(hole, OutputUnreached)
        bad["hole"] = {"row": hole.at["row"], "col": hole.at["col"], **({"mma": hole.at["mma"]} if groups > 1 else {})}
    return bad or None
