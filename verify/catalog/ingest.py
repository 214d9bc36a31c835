"""Documentation pages -> spec TOML text (docs/reference/spec-format.md) plus findings.

``ingest_pages(paths)`` reads pages with ``verify.docpage``, finds the sections
"Matrix Fragments for [sparse] mma.mMnNkK ...", and for each operand block
pairs the fragment table rows (types, register count and type, elements per
register, element list) with the formula that follows, keeping every page line.

While doing so it checks the text itself and reports ``IngestFinding``s: element
lists with duplicates, gaps or stray punctuation; register counts that contradict
the element list or the matrix size; missing element cells; a table header naming
the wrong operand; formulas that do not parse (with the position, and the repair
that was tried); figures whose image belongs to another operand or instruction;
and, by enumerating the formula over every (lane, i), layouts that do not cover
the matrix exactly once.

The TOML is written by a small emitter (no dependency), deterministically: the
same pages give byte-identical text.  Known errata that need a reviewed
correction (a bijectivity error cannot be repaired mechanically) are listed in
``REVIEWED_ERRATA``; each is applied only while the doc text still matches.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable, Sequence

from ..checks import maps
from ..engines.oracle import EvalError
from ..formula import Formula, FormulaError, parse_formula
from ..formula.parser import parse_lane_expression
from ..layout.elements import MAX_ELEMENTS
from ..layout.fragment_maps import FormulaFragment
from ..layout.ids import layout_id, section_tag
from ..layout.model import MAP_CHECKS, UNPARSED, Codomain, Domain, Shape
from ..layout.types import ACCUMULATOR_TYPES, ELEMENT_BITS, REGISTER_BITS, elements_per_thread, packs
from ..witnesses import OutputUnreached, PointOutside, PointsCollide
from .derived import _CUTE, DERIVED_B, REVIEWED_ERRATA, _b_family, derived_metadata, find_doc_text
from .docpage import Caption, Code, Image, Page, PageError, Section, Table, Text, read_page
from .catalog_errata import catalog_findings
from .known import release_of
from .sections import (NUM, SECTION_TITLE, SUBBYTE_FLOATS, TYPES, ElementList, FragmentSpec, IngestFinding,
                       RowFacts, SectionSpec, freeze, num_word, types_in)


@dataclass(frozen=True)
class IngestResult:
    sections: tuple[SectionSpec, ...]
    findings: tuple[IngestFinding, ...]
    pages: tuple[str, ...] = ()

    def specs(self) -> list[tuple[str, str]]:
        """[(spec file name, TOML text)] of every section: written by ``ingest --out`` (checks read the
        sections directly, ``verify.catalog.pages.page_spec``)."""
        from .emit import emit_toml
        return [(s.name + ".toml", emit_toml(s)) for s in self.sections if s.fragments]  # an unread one: its error

    @property
    def fragments(self) -> int:
        return sum(len(s.fragments) for s in self.sections)




# ----------------------------------------------------------------------------- element lists

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


# ----------------------------------------------------------------------------- fragment cells

_REG_RX = re.compile(r"(?:containing|of)(?:\s+of)?\s+" + NUM + r"\s+\.([a-z0-9]+)\s+registers?\b", re.I)
_EACH_RX = re.compile(r"each(?:\s+register)?\s*,?\s+containing\s+" + NUM + r"\s+(non-zero\s+)?(.*?)\belements?\b"
                      r"(?:\s+out of\s+(\d+)\s+consecutive)?", re.I)
_TOTAL_RX = re.compile(r"containing\s+" + NUM + r"\s+(non-zero\s+)?(\.[^,]*?)\belements?\b"
                       r"(?:\s+out of\s+(\d+)\s+consecutive)?", re.I)


def _element_bits(t: str, per_register: int | None, register_type: str | None) -> int | None:
    return ELEMENT_BITS.get(t)


# ----------------------------------------------------------------------------- the section reader

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
    if operand == "A":
        return (shape.m, shape.k // 2) if sparse else (shape.m, shape.k)
    if operand == "B":
        return shape.k, shape.n
    return shape.m, shape.n


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


def _section_kind(title: str) -> tuple[str, str, str] | None:
    m = SECTION_TITLE.match(title.replace("`", "").strip())
    if not m:
        return None
    instruction = "mma.sp" if m.group(1) else "mma"
    return instruction, m.group(2), section_tag(title)


def _figure_checks(ctx: _Ctx, operand: str, images: list[Image], captions: list[Caption], types: tuple[str, ...]) -> None:
    code = "".join(re.findall(r"\d+", str(ctx.shape)))
    sparse = ctx.instruction == "mma.sp"
    for img in images:
        toks = img.stem.split("-")
        if "mma" not in toks or "metadata" in toks:
            continue
        k = toks.index("mma")
        shape_tok = next((t for t in toks[k + 1:] if t.isdigit()), None)
        letter = next((m.group(1) for t in toks[k + 1:] for m in [re.fullmatch(r"([ABC])(?:_?\d+)?", t)] if m), None)
        problems = []
        if (k > 0 and toks[k - 1] == "sparse") != sparse:
            problems.append("a sparse mma figure" if not sparse else "a dense mma figure")
        if shape_tok is not None and shape_tok != code:
            problems.append(f"shape code {shape_tok} (this section is {code})")
        if letter is not None and letter != operand:
            problems.append(f"operand {letter} (this fragment is {operand})")
        if problems:
            cap = captions[0] if captions else None
            ctx.find("figure-mismatch", "warning", img.line, 1, img.src,
                     f"the figure for operand {operand} ({', '.join('.' + t for t in types)}) shows image "
                     f"{img.src.rsplit('/', 1)[-1]}: " + "; ".join(problems),
                     {"image": img.src, "caption": cap.text if cap else "", "anchor": cap.anchor if cap else ""},
                     operand, types)
    for cap in captions:
        m = re.search(r"\bfor (?:accumulator )?matrix ([ABCD])\b", cap.text)
        named = m.group(1) if m else None
        if named == "D":
            named = "C"
        if named and named != operand:
            ctx.find("figure-mismatch", "warning", cap.line, 1, cap.text,
                     f"figure {cap.number} is captioned for matrix {named} in the block of operand {operand}",
                     {"caption": cap.text}, operand, types)


def _group_table(ctx: _Ctx, table: Table) -> tuple[int, str, dict[int, int]] | None:
    """'MMA computation k | Threads with %laneid a-b (low group) and c-d (high group)'."""
    if not table.header or "MMA Computation" not in table.header[0]:
        return None
    lane_group: dict[int, int] = {}
    for k, row in enumerate(table.rows):
        text = " ".join(c.text for c in row.cells[1:])
        for a, b in re.findall(r"(\d+)\s*-\s*(\d+)", text):
            for lane in range(int(a), int(b) + 1):
                lane_group[lane] = k
    groups = len(table.rows)
    candidate = "(%laneid >> 2) % 4"
    if groups == 4 and all(lane_group.get(lane) == (lane >> 2) % 4 for lane in range(32)):
        return groups, candidate, lane_group
    ctx.find("group-table", "error", table.line, 1, table.header[0],
             "the thread table of the MMA computations does not match any known lane grouping",
             {"lanes": {str(k): v for k, v in sorted(lane_group.items())}})
    return None


_OPERAND_OF_HEADER = {"atype": "A", "btype": "B", "ctype": "C", "dtype": "C"}
_REFERENCE = re.compile(r"^Matrix fragments for (.*?) (?:is|are) the same as in case of (.*)$", re.I)


class _SectionReader:
    """Reads one fragment section block by block, as the doc lays it out.

    The state is what the doc's order implies: the operand being described ("Multiplicand A",
    "Accumulators"), its fragment table, the sub-item that narrows the table to some rows
    (".ctype is .f16", "Row Major"), and the figures seen since.  A formula (code block) gives
    the layout of the table rows the sub-item selects; table rows no formula followed are
    closed by ``_close_table`` when the next operand or table starts.
    """

    def __init__(self, section: Section, version: str, instruction: str, shape_text: str, tag: str) -> None:
        self.section, self.version = section, version
        self.instruction, self.shape_text, self.tag = instruction, shape_text, tag
        self.shape = Shape.parse(shape_text)
        assert self.shape is not None
        self.ctx = _Ctx(section, section.number, instruction, self.shape)
        self.sparse = instruction == "mma.sp"
        self.operand: str | None = None
        self.table: _Table | None = None
        self.operand_of_table = ""
        self.sub_ctx = ""
        self.images: list[Image] = []
        self.captions: list[Caption] = []
        self.fragments: list[FragmentSpec] = []
        self.refs: list[dict[str, Any]] = []
        self.sparsity: list[tuple[int, str]] = []
        self.all_figures: list[str] = []
        self.groups, self.group_text = 1, ""
        self.group_of: dict[int, int] | None = None
        self.chunk_width: int | None = None  # "a W-wide chunk" of the metadata text
        self.lanes = 32
        self.seen: dict[str, int] = {"operands": 0, "tables": 0, "formulas": 0}  # what was read, for "why nothing"

    def read(self) -> tuple[SectionSpec, list[dict[str, Any]], list[IngestFinding]]:
        handlers = {Text: self._text, Table: self._table, Image: self._image, Caption: self._caption,
                    Code: self._code}
        for block in self.section.blocks:
            handler = handlers.get(type(block))
            if handler is not None:
                handler(block)  # type: ignore[operator]
        self._close_table()
        return self._spec(), self.refs, self.ctx.findings

    # -- state changes
    def _close_table(self) -> None:
        self.fragments += _unused(self.ctx, self.table, self.operand_of_table, self.shape, self.sparse,  # type: ignore[arg-type]
                                  self.lanes, self.group_of)

    def _start_operand(self, operand: str | None) -> None:
        self.seen["operands"] += 1
        self._close_table()
        self.operand, self.table, self.sub_ctx, self.images, self.captions = operand, None, "", [], []

    # -- blocks
    def _text(self, block: Text) -> None:
        text = block.text
        op = _operand_of(text)
        if (op == "C" and text.startswith("Accumulators")) or op in ("A", "B"):
            self._start_operand(op)
            return
        ref = _REFERENCE.match(text)
        if ref:
            self._reference(block, ref)
            return
        if re.match(r"^Metadata\s*:", text):
            self._close_table()
            self.operand, self.table = None, None
            self.sparsity.append((block.line, _short(text, 200)))
            m = re.search(r"(\d+)-wide chunk", text)
            if m:
                self.chunk_width = int(m.group(1))
            return
        if block.bullet or re.fullmatch(r"\.[a-z0-9]+(\s*(and|or|/|,)\s*\.[a-z0-9]+)*\s*:", text):
            # a sub-item after the table narrows it (".ctype is .f16", "Row Major");
            # one before the table only introduces it
            self.sub_ctx = text if self.table is not None else ""
            self.images, self.captions = [], []

    def _reference(self, block: Text, ref: re.Match[str]) -> None:
        """"Matrix fragments for B and C are the same as in case of <section> [for .x formats]"."""
        ops = (["B"] if re.search(r"multiplicand B", ref.group(1), re.I) else []) + \
              (["C"] if re.search(r"accumulator", ref.group(1), re.I) else [])
        target = ref.group(2)
        qual = re.search(r"\bfor\s+((?:\.[a-z0-9]+\s*/?\s*)+?)\s*formats?\b", target)
        anchors = [a.split("#", 1)[1] for a in block.links if "#" in a]
        title = re.sub(r"\s+for\s+(?:\.[a-z0-9]+\s*/?\s*)+\s*formats?\.?\s*$", "", target).rstrip(". ")
        qual_types = tuple(re.findall(r"\.([a-z0-9]+)", qual.group(1))) if qual else ()
        for t in qual_types:
            if t not in TYPES:
                self.ctx.find("type-name", "warning", block.line, block.col, block.text,
                              f"'.{t}' is not an mma type" + (" (probably .bf16)" if t == "b16" else ""),
                              {"type": t}, "")
        self.refs.append({"operands": ops, "anchor": anchors[0] if anchors else "", "title": title,
                          "types": qual_types, "line": block.line, "col": block.col})
        self._close_table()
        self.operand, self.table = None, None

    def _table(self, block: Table) -> None:
        gt = _group_table(self.ctx, block)
        if gt is not None:
            self.groups, self.group_text, self.group_of = gt
            self.lanes = 32 // self.groups
            return
        operand = self.operand
        if operand is None or not block.header or not block.header[0].strip().startswith("."):
            return
        self.seen["tables"] += 1
        hdr = block.header[0]
        hop = [_OPERAND_OF_HEADER[w] for w in re.findall(r"\.([abcd]type)", hdr) if w in _OPERAND_OF_HEADER]
        if hop and operand not in hop:
            self.ctx.find("table-header", "warning", block.line, 1, hdr,
                          f"the table of operand {operand} is headed '{hdr}'", {"header": hdr}, operand)
        facts: list[RowFacts] = []
        prev: RowFacts | None = None
        for k, row in enumerate(block.rows):
            f = _row_facts(self.ctx, block, operand, self.lanes, self.sparse, prev, k)
            if f is None:
                continue
            ext = _extent(operand, self.shape, self.sparse)  # type: ignore[arg-type]
            col = row.cells[1].col if len(row.cells) > 1 else 1
            f = _check_row(self.ctx, f, operand, ext, self.lanes, col)
            if self.sparse and operand == "A" and f.sparse_kept is not None:
                self.sparsity.append((row.line, _short(f.words, 200)))
            facts.append(f)
            prev = f
        self._close_table()
        self.table = _Table(block, facts)
        self.operand_of_table = operand
        self.sub_ctx = ""
        self.images, self.captions = [], []

    def _image(self, block: Image) -> None:
        self.images.append(block)
        if block.stem not in self.all_figures:
            self.all_figures.append(block.stem)

    def _caption(self, block: Caption) -> None:
        self.captions.append(block)

    def _code(self, block: Code) -> None:
        """A formula: the layout of the table rows the current sub-item selects."""
        operand, table = self.operand, self.table
        if operand is None:
            return
        self.seen["formulas"] += 1
        if table is None or not table.rows:
            self.ctx.find("formula-without-table", "warning", block.line, 1, block.text.split("\n")[0],
                          f"a formula for operand {operand} with no fragment table before it", None, operand)
            return
        ctx_types = set(types_in(self.sub_ctx))
        chosen = [k for k, r in enumerate(table.rows) if ctx_types & set(r.types)]
        if not chosen or len(chosen) == len(table.rows):
            chosen = list(range(len(table.rows)))
        variant = None
        if re.search(r"\brow[- ]major\b", self.sub_ctx, re.I):
            variant = "row"
        elif re.search(r"\bcolumn[- ]major\b", self.sub_ctx, re.I):
            variant = "col"
        text, where, first = _formula_text(block)
        _figure_checks(self.ctx, operand, self.images, self.captions,
                       tuple(t for k in chosen for t in table.rows[k].types))
        for k in chosen:
            r = table.rows[k]
            table.used[k] = True
            fr = FragmentSpec(operand, r.types, variant, r, text, first, tuple(i.stem for i in self.images),
                              comments=(f"table row: line {r.line}",), expect=(), corrected=(), rows=None,
                              cols=None, sparse=(), derived="", erratum="", layout_id="", where=tuple(where),
                              page=self.section.page)
            self.fragments.append(_finish_formula(self.ctx, fr, where, self.shape, self.sparse,  # type: ignore[arg-type]
                                                  self.lanes, self.group_of))

    # -- the result
    def _sparse_a(self, fr: FragmentSpec) -> FragmentSpec:
        """Sparse A: kept non-zeros per chunk from "N non-zero out of W consecutive" and "a C-wide
        chunk", plus the derived metadata layout."""
        r = fr.row
        rows, cols = _extent("A", self.shape, True)  # type: ignore[arg-type]
        sp: tuple[tuple[str, Any], ...] = ()
        if r.sparse_kept and r.sparse_out_of and self.chunk_width:
            chunk = self.chunk_width
            if (r.sparse_kept * chunk) % r.sparse_out_of == 0:
                sp = (("kept", r.sparse_kept * chunk // r.sparse_out_of), ("chunk", chunk))
        elif r.sparse_kept and r.sparse_out_of:
            sp = (("kept", r.sparse_kept), ("chunk", r.sparse_out_of))
        if not sp:
            self.ctx.find("sparsity-words", "warning", r.line, 1, r.words,
                          "cannot read the sparsity (non-zeros per chunk) of this sparse A fragment", None, "A",
                          r.types)
        else:
            sp += derived_metadata(self.shape_text, fr.types, dict(sp)["kept"], dict(sp)["chunk"])
        return replace(fr, rows=rows, cols=cols, sparse=sp)

    def _unread(self) -> None:
        """A section whose title states mma layouts but of which nothing could be read: an error that says
        which section and why (what the reader looked for and did not find)."""
        if self.fragments or self.refs:
            return
        seen = self.seen
        if not self.section.blocks:
            why = "the section has no text under its heading"
        elif not seen["operands"]:
            why = "no operand item (\"Multiplicand A:\", \"Multiplicand B:\", \"Accumulators (C or D):\") was found"
        elif not seen["tables"]:
            why = (f"{seen['operands']} operand item(s) but no fragment table (a table headed '.atype', '.btype', "
                   "'.ctype' / '.dtype') after any of them")
        elif not seen["formulas"]:
            why = f"{seen['tables']} fragment table(s) but no formula (a code block) after any of them"
        else:
            why = "its fragment tables and formulas could not be paired"
        heading = self.section.heading
        self.ctx.find("unread-section", "error", heading.line, 1, heading.title,
                      f"section {self.section.number} ({heading.title}) states {self.instruction} layouts, but none "
                      f"could be read from this page: {why}", {"why": why})

    def _spec(self) -> SectionSpec:
        self._unread()
        section = self.section
        out = [self._sparse_a(fr) if self.sparse and fr.operand == "A" else fr for fr in self.fragments]
        return SectionSpec(
            number=section.number, title=section.heading.title.replace("\uf0c1", "").strip(),
            anchor=section.heading.anchor, page=section.page, line=section.heading.line,
            instruction=self.instruction, shape=self.shape_text, tag=self.tag,
            name=".".join([self.instruction, self.shape_text] + ([self.tag] if self.tag else [])),
            fragments=tuple(out), figures=tuple(self.all_figures), sparsity=tuple(self.sparsity), references=(),
            groups=self.groups, group=self.group_text, version=self.version, findings=(),
        )


def _read_section(section: Section, version: str) -> tuple[SectionSpec | None, list[dict[str, Any]], list[IngestFinding]]:
    kind = _section_kind(section.heading.title)
    if kind is None:
        return None, [], []
    return _SectionReader(section, version, *kind).read()


def _unused(ctx: _Ctx, table: "_Table | None", operand: str, shape: Shape, sparse: bool, lanes: int,
            group_of: dict[int, int] | None) -> list[FragmentSpec]:
    """Table rows no formula followed (the doc gives them as figures only): reported; a sparse B
    with a known derived layout (``DERIVED_B``) becomes a fragment marked ``derived``."""
    out: list[FragmentSpec] = []
    if table is None:
        return out
    for used, r in zip(table.used, table.rows):
        if used:
            continue
        ctx.find("no-formula", "info", r.line, 1, r.words,
                 f"no formula follows this row of operand {operand} (the layout is given by a figure only)",
                 None, operand, r.types)
        d = DERIVED_B.get((str(shape), _b_family(r.types, r.per_register))) if sparse and operand == "B" else None
        if d is None or not r.registers or not r.per_register:
            continue
        n = r.registers * r.per_register
        names = len(r.elements.names or ()) if r.elements is not None else 0
        if names * lanes == shape.k * shape.n:  # the doc's list fits the matrix: keep it (and its errata)
            row, n = r, names
            listed = ""
        else:  # the list is the wrong size (reported above); the derived formula names b0..b(n-1)
            listed = f"the doc lists {r.elements.text!r}; " if r.elements is not None else ""
            row = replace(r, elements=None, elements_inherited=False, count_ok=n * lanes == shape.k * shape.n)
        fr = FragmentSpec(operand, r.types, None, row, d["formula"], r.line, (),
                          comments=(f"table row: line {r.line}; no formula in the doc (figure only)",
                                    f"elements: {listed}the formula covers {operand.lower()}0..{operand.lower()}{n - 1}"),
                          expect=(), corrected=(), rows=None, cols=None, sparse=(),
                          derived=f"{_CUTE}: {d['why']}. Not stated by the doc text (figure only); confirm on a GPU.",
                          erratum="", layout_id="", where=((r.line, 1),) * (d["formula"].count("\n") + 1),
                          page=ctx.section.page)
        out.append(_finish_formula(ctx, fr, [(r.line, 1)] * (d["formula"].count("\n") + 1), shape, sparse, lanes,
                                   group_of))
    table.used = [True] * len(table.rows)
    return out


def _reviewed_errata(ctx: _Ctx, operand: str) -> list[dict[str, Any]]:
    """The reviewed errata (``derived.REVIEWED_ERRATA``) of this section's operand, by what the section states."""
    return [e for e in REVIEWED_ERRATA if (e["instruction"], e["shape"], e["operand"]) ==
            (ctx.instruction, str(ctx.shape), operand)]


def _finish_formula(ctx: _Ctx, fr: FragmentSpec, where: list[tuple[int, int]], shape: Shape,
                    sparse: bool, lanes: int, group_of: dict[int, int] | None) -> FragmentSpec:
    """Parse the doc formula; syntax errata, reviewed errata, text errata -> expect/corrected."""
    prefix = fr.operand.lower()
    expect: dict[str, str] = {}
    corrected: dict[str, Any] = dict(fr.row.corrected)
    errata: list[str] = list(fr.row.errata)
    formula: Formula | None = None
    cformula_text: str | None = None
    try:
        formula = parse_formula(fr.formula, prefix)
    except FormulaError as e:
        pl, pc = where[e.line - 1] if 0 < e.line <= len(where) else (fr.formula_line, 1)
        col = pc + e.col - 1
        line_text = fr.formula.split("\n")[e.line - 1] if 0 < e.line <= len(where) else ""
        fix = _repair(fr.formula)
        if fix is not None and _parses(fix[0], prefix):
            cformula_text = fix[0]
            ctx.find("formula-syntax", "error", pl, col, line_text,
                     f"formula does not parse: {e.message}; recovered by {fix[1]}",
                     {"error": e.message, "recovered": fix[1]}, fr.operand, fr.types)
            expect["syntax"] = "refuted"
            fr = replace(fr, syntax_error=(pl, col, UNPARSED + e.message))
            errata.append(f"doc formula does not parse ({e.message} at {Path(ctx.section.page).name}:{pl}:{col}); "
                          f"corrected by {fix[1]}")
        else:
            ctx.find("formula-syntax", "error", pl, col, line_text,
                     f"formula does not parse: {e.message}; no repair found, fragment left out",
                     {"error": e.message}, fr.operand, fr.types)
            return replace(fr, formula="", comments=fr.comments + ("formula does not parse; left out",),
                           syntax_error=(pl, col, UNPARSED + e.message))
    for entry in _reviewed_errata(ctx, fr.operand):
        base = cformula_text or fr.formula
        at = find_doc_text(base, entry["doc"])
        if at is not None:
            cformula_text = base[:at.start()] + entry["fixed"] + base[at.end():]
            expect.update(entry["expect"])
            errata.append(entry["erratum"])
        else:
            ctx.find("reviewed-erratum-stale", "info", fr.formula_line, 1, entry["doc"],
                     "a reviewed erratum no longer matches the doc text (fixed upstream?)",
                     None, fr.operand, fr.types)
    # text errata on the row
    if not fr.row.count_ok:
        expect["count"] = "refuted"
    if not fr.row.packing_ok:
        expect["packing"] = "refuted"
    if fr.row.elements and fr.row.elements.problems and not fr.row.elements.ellipsis \
            and not fr.row.elements_inherited:
        expect["elements"] = "refuted"
    # enumerate (not sparse A: its col is a range, another module's semantics)
    if formula is not None and not (sparse and fr.operand == "A") and fr.row.registers and fr.row.per_register:
        rows, cols = _extent(fr.operand, shape, sparse)
        n = len(fr.row.elements.names) if fr.row.elements and fr.row.elements.names else \
            fr.row.registers * fr.row.per_register
        n = min(n, 1024)
        bad = _enumerate(formula, lanes, n, rows, cols, group_of)
        if bad and "error" in bad:  # the formula cannot even be evaluated (division by zero, ...)
            el, ec = bad["pos"]
            pl, pc = where[el - 1] if 0 < el <= len(where) and where[el - 1][0] else (fr.formula_line, 1)
            ctx.find("evaluation", "error", pl, pc + ec - 1, fr.formula.split("\n")[el - 1] if 0 < el <= len(where) else "",
                     f"the formula cannot be evaluated: {bad['error']}", {"error": bad["error"]}, fr.operand, fr.types)
        elif bad:
            hits = [e for e in _reviewed_errata(ctx, fr.operand) if find_doc_text(fr.formula, e["doc"])]
            reviewed = bool(hits)
            ctx.find("not-bijective", "error" if not reviewed else "warning", fr.formula_line, 1,
                     hits[0]["doc"] if hits else fr.formula.split("\n")[-1],
                     "the formula does not map the thread elements one-to-one onto the "
                     f"{rows}x{cols} matrix" + (" (a reviewed erratum)" if reviewed else ""),
                     dict(sorted(bad.items())), fr.operand, fr.types)
        if cformula_text is not None:
            try:
                cf = parse_formula(cformula_text, prefix)
                cbad = _enumerate(cf, lanes, n, rows, cols, group_of)
                if cbad:
                    ctx.find("correction-not-bijective", "error", fr.formula_line, 1, "",
                             "the corrected formula is not a bijection either", dict(sorted(cbad.items())),
                             fr.operand, fr.types)
            except FormulaError:
                pass
    if cformula_text is not None:
        corrected["formula"] = cformula_text
    if corrected and not errata:
        errata.append("corrected from the doc's own statements")
    return replace(fr, expect=tuple(sorted(expect.items())), corrected=tuple(sorted(corrected.items())),
                   erratum="; ".join(errata) if corrected else "", layout_id="")


# ----------------------------------------------------------------------------- pages -> sections

class _Library:
    """The sections of the pages that take part, and nothing else: the pages given (judged) and the
    reference pages (``docs``: read only so that cross references and anchors resolve).  No directory
    is searched and no environment variable is read, so a page's verdict depends on the pages named."""

    def __init__(self) -> None:
        self.pages: dict[str, Page] = {}
        self.resolved: set[str] = set()

    def load(self, path: str) -> Page:
        if path not in self.pages:
            self.pages[path] = read_page(path)
            self.resolved.add(str(Path(path).resolve()))
        return self.pages[path]

    def add_reference(self, path: str) -> None:
        """A reference page, unless it is one of the pages given (by its real path)."""
        if path not in self.pages and str(Path(path).resolve()) not in self.resolved:
            self.load(path)

    def sections(self) -> list[Section]:
        return [s for p in self.pages.values() for s in p.sections]


def _norm_title(t: str) -> str:
    return re.sub(r"[^a-z0-9.]+", " ", t.lower().replace("`", "")).strip()


def ingest_pages(paths: Sequence[str | Path], docs: Sequence[str | Path] = ()) -> IngestResult:
    """Read pages and return one ``SectionSpec`` per matrix-fragment section, with findings.

    A cross reference ("the same as in case of <section>") and the anchor of a per-section page
    resolve among ``paths`` first, then among the reference pages ``docs`` (read, never judged);
    nothing else is read."""
    lib = _Library()
    order: list[str] = []
    for p in paths:
        sp = str(p)
        lib.load(sp)
        if sp not in order:
            order.append(sp)
    for p in docs:
        lib.add_reference(str(p))
    findings: list[IngestFinding] = []
    specs: list[SectionSpec] = []
    release = release_of(lib.pages[sp] for sp in order)  # what the pages state (their version page), as specs record it
    first: dict[str, _Copy] = {}  # section number -> its first copy among the pages given
    refs_of: dict[str, list[dict[str, Any]]] = {}
    for sp in order:
        page = lib.pages[sp]
        for section in page.sections:
            seen = first.get(section.number)
            if seen is not None and seen.blocks == _blocks_key(section):
                continue  # the same blocks again (a parent page repeats its sections): the same statement
            spec, refs, fnd = _read_section(section, release)
            if spec is None:
                continue
            copy = _Copy(section, _blocks_key(section), _statement(spec, refs, fnd))
            if seen is not None:
                _same_statement(seen, copy)  # a copy that says something else is refused, never dropped
                continue
            first[section.number] = copy
            if not spec.fragments and not refs and not any(f.kind == "unread-section" for f in fnd):
                findings.extend(fnd)
                continue
            specs.append(spec)
            refs_of[section.number] = refs
            findings.extend(fnd)
    # "Matrix fragments for multiplicand B and accumulators C and D are the same as in case of ..."
    resolved: list[SectionSpec] = []
    for spec in specs:
        refs = refs_of.get(spec.number, [])
        extra: list[FragmentSpec] = []
        notes: list[tuple[int, str]] = []
        for ref in refs:
            target = _resolve(lib, spec, ref, specs)
            if target is None:
                findings.append(IngestFinding("unresolved-reference", "warning", spec.page, ref["line"], ref["col"],
                                              _short(ref["title"]), "cannot find the section this fragment refers to",
                                              (("anchor", ref["anchor"]), ("title", ref["title"])), spec.number))
                continue
            tspec, tfind = target
            a_types = {t for f in spec.fragments if f.operand == "A" for t in f.types}
            for op in ref["operands"]:
                for f in tspec.fragments:
                    if f.operand != op or not f.formula:
                        continue
                    if op == "B":
                        want = set(ref["types"]) or a_types
                        if not (set(f.types) & want):
                            continue
                    else:
                        acc = set().union(*(ACCUMULATOR_TYPES.get(t, frozenset()) for t in a_types)) if a_types else set()
                        if acc and not (set(f.types) & acc):
                            continue
                    note = (f"same as {tspec.number} per the doc's reference (line {ref['line']}); "
                            f"formula from {Path(tspec.page).name}:{f.formula_line}")
                    extra.append(replace(f, derived=note, formula_line=ref["line"],
                                         comments=(f"doc: {tspec.number} {tspec.title}",)))
            notes.append((ref["line"], f"{','.join(ref['operands'])} -> {tspec.number}"))
        resolved.append(replace(spec, fragments=spec.fragments + tuple(extra), references=tuple(notes)))
    # anchors: a per-section page has a bare heading; its parent page links it
    for k, spec in enumerate(resolved):
        if not spec.anchor:
            anchor = next((sec.heading.anchor for sec in lib.sections()
                           if sec.number == spec.number and sec.heading.anchor), "")
            if anchor:
                resolved[k] = replace(spec, anchor=anchor)
    resolved = _assign_ids(resolved)
    by_section = {s.number: s for s in resolved}
    final = []
    for s in resolved:
        mine = tuple(f for f in findings if f.section == s.number and f.page == s.page)
        final.append(replace(s, findings=mine))
    final.sort(key=lambda s: tuple(int(x) for x in s.number.split(".")))
    del by_section
    findings.extend(catalog_findings(order))  # wmma, ldmatrix/stmatrix/movmatrix, wgmma, tcgen05 pages
    findings.sort(key=lambda f: (f.page, f.line, f.column, f.kind, f.operand, f.types))
    return IngestResult(tuple(final), tuple(findings), tuple(order))


# ----------------------------------------------------------------------------- a section given twice

Item = tuple[str, str, tuple[int, int]]  # (what, the statement without positions, page (line, column))


@dataclass(frozen=True)
class _Copy:
    section: Section
    blocks: tuple[Any, ...]
    statement: tuple[Item, ...]


def _blocks_key(section: Section) -> tuple[Any, ...]:
    """A section's blocks without their positions: equal for two copies of the same text."""
    def key(b: Any) -> Any:
        if isinstance(b, Table):
            return ("table", b.header, tuple(tuple(c.text for c in r.cells) for r in b.rows))
        if isinstance(b, Code):
            return ("code", tuple(cl.text for cl in b.lines))
        if isinstance(b, Text):
            return ("text", b.text, b.bullet, b.links)
        if isinstance(b, Image):
            return ("image", b.src)
        if isinstance(b, Caption):
            return ("caption", b.number, b.text, b.anchor)
        return (type(b).__name__,)
    return (" ".join(section.heading.title.replace("\uf0c1", " ").split()),) + tuple(key(b) for b in section.blocks)


def _statement(spec: SectionSpec, refs: list[dict[str, Any]], findings: list[IngestFinding]) -> tuple[Item, ...]:
    """What one copy of a section states, item by item, each with its page position: the layouts
    (table row facts, formula, figures), the cross references and the errata of its text."""
    items: list[Item] = [("section", f"{spec.instruction} {spec.shape} {spec.tag} groups {spec.groups} {spec.group}".strip(),
                          (spec.line, 1))]
    for f in spec.fragments:
        what = f"operand {f.operand} ({', '.join('.' + t for t in f.types)}{', ' + f.variant if f.variant else ''})"
        r = f.row
        facts = (f"{r.registers} .{r.register_type} registers, {r.per_register} elements each, elements "
                 f"{' '.join(r.elements.text.split()) if r.elements else '-'}")
        items.append((what + " table row", facts, (r.line, 1)))
        lines = f.formula.split("\n")
        where = list(f.where) if len(f.where) == len(lines) else [(f.formula_line, 1)] * len(lines)
        items += [(what + " formula", text, pos if pos[0] else (f.formula_line, 1)) for text, pos in zip(lines, where)]
        items.append((what + " formula end", "", (f.formula_line, 1)))
        items.append((what + " figures", ", ".join(f.figures), (f.formula_line, 1)))
    for ref in refs:
        items.append(("reference", f"{'/'.join(ref['operands'])} the same as {ref['title']} (#{ref['anchor']}) "
                                   f"{' '.join(ref['types'])}".strip(), (ref["line"], ref["col"])))
    for stmt_line, stmt in spec.sparsity:
        items.append(("sparsity", stmt, (stmt_line, 1)))
    for x in findings:
        items.append((f"{x.severity} {x.kind}", f"{x.operand} {' '.join(x.types)}: {x.message}".strip(),
                      (x.line, x.column)))
    return tuple(items)


def _same_statement(first: _Copy, other: _Copy) -> None:
    """Two copies of one section (a page saved as .md and .html, a page and a changed copy of it) are
    judged once only when they state the same; otherwise the second is bad input, at its first
    difference, naming both files."""
    a, b = first.statement, other.statement
    for k in range(max(len(a), len(b))):
        x = a[k] if k < len(a) else None
        y = b[k] if k < len(b) else None
        if x is not None and y is not None and x[:2] == y[:2]:
            continue
        line, col = y[2] if y is not None else (other.section.heading.line, 1)
        what = (y or x)[0]  # type: ignore[index]
        here = f"this copy has {what} {_short(y[1], 80)!r}" if y is not None else f"this copy has no {what}"
        there = (f"{first.section.page}:{x[2][0]}:{x[2][1]} has {x[0]} {_short(x[1], 80)!r}" if x is not None
                 else f"{first.section.page} has no {what}")
        raise PageError(other.section.page, line or other.section.heading.line, col or 1,
                        f"section {other.section.number} is given twice and the copies differ: {here}; {there}. "
                        "Give one copy of each section")


def _resolve(lib: _Library, spec: SectionSpec, ref: dict[str, Any],
             specs: list[SectionSpec]) -> tuple[SectionSpec, list[IngestFinding]] | None:
    def match(section: Section) -> bool:
        if ref["anchor"] and section.heading.anchor == ref["anchor"]:
            return True
        return bool(ref["title"]) and _norm_title(section.heading.title) == _norm_title(ref["title"])

    for s in specs:
        if (ref["anchor"] and s.anchor == ref["anchor"]) or _norm_title(s.title) == _norm_title(ref["title"]):
            return s, []
    for section in lib.sections():
        if match(section) and section.number != spec.number:
            tspec, _refs, fnd = _read_section(section, spec.version)
            if tspec is not None and tspec.fragments:
                return tspec, fnd
    return None


def _assign_ids(specs: list[SectionSpec]) -> list[SectionSpec]:
    """Layout ids by the one grammar (``verify.layout.ids``), as the spec loader computes them."""
    return [replace(s, fragments=tuple(replace(f, layout_id=layout_id(s.instruction, s.shape, f.operand, f.types,
                                                                      f.variant, s.tag))
                                       for f in s.fragments)) for s in specs]


def ingest_text(text: str, path: str = "<page>") -> IngestResult:
    """Ingest one page given as text (for tests and tools); cross references resolve within it."""
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / Path(path).name
        p.write_text(text, encoding="utf-8")
        res = ingest_pages([str(p)])
    fix = lambda s: s.replace(str(p), path)  # noqa: E731
    return IngestResult(tuple(replace(s, page=fix(s.page), findings=tuple(replace(f, page=fix(f.page)) for f in s.findings))
                              for s in res.sections),
                        tuple(replace(f, page=fix(f.page)) for f in res.findings), (path,))
