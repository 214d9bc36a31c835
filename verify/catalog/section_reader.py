"""One fragment section of a doc page read into a ``SectionSpec``: the blocks walked in order (``_SectionReader``),
each operand's table rows paired with the formula that follows, figures checked against their operand, the
m8n8k4 lane grouping read from its table, a section that states its fragments by reference to another, and the
reviewed errata applied while the text still matches (``verify.catalog.page_facts`` reads each block's facts).
"""
from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..formula import Formula, FormulaError, parse_formula
from ..layout.ids import section_tag
from ..layout.model import UNPARSED
from ..layout.records import Shape
from .derived import _CUTE, DERIVED_B, REVIEWED_ERRATA, _b_family, derived_metadata, find_doc_text
from .page_model import Caption, Code, Image, Section, Table, Text
from .sections import (SECTION_TITLE, TYPES, FragmentSpec, IngestFinding,
                       RowFacts, SectionSpec, types_in)
from .page_facts import (_Ctx, _Table, _check_row, _enumerate, _extent, _formula_text,
                         _operand_of, _parses, _repair, _row_facts, _short)


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
        k_rows, n_cols = _extent("B", shape, False)
        if names * lanes == k_rows * n_cols:  # the doc's list fits the matrix: keep it (and its errata)
            row, n = r, names
            listed = ""
        else:  # the list is the wrong size (reported above); the derived formula names b0..b(n-1)
            listed = f"the doc lists {r.elements.text!r}; " if r.elements is not None else ""
            row = replace(r, elements=None, elements_inherited=False, count_ok=n * lanes == k_rows * n_cols)
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
