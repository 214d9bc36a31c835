"""Documentation pages -> spec TOML text (README "Spec format") plus findings.

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

import json
import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np

from ..engines.oracle import EvalError
from ..formula import Formula, FormulaError, parse_formula
from ..layout.enumerate import decide
from ..layout.formula import FormulaMap
from ..layout.model import Domain, Shape
from ..layout.types import ACCUMULATOR_TYPES, ELEMENT_BITS, REGISTER_BITS
from .docpage import Caption, Code, Image, Page, PageError, Section, Table, Text, read_page

# ----------------------------------------------------------------------------- findings

SEVERITIES = ("error", "warning", "info")


@dataclass(frozen=True)
class IngestFinding:
    """Something wrong (or noteworthy) in the doc text, at page:line:column."""

    kind: str
    severity: str  # error | warning | info
    page: str
    line: int
    column: int
    words: str  # the doc's words, short
    message: str
    witness: tuple[tuple[str, Any], ...] = ()
    section: str = ""
    operand: str = ""
    types: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind, "severity": self.severity, "page": self.page, "line": self.line,
            "column": self.column, "section": self.section, "operand": self.operand,
            "types": list(self.types), "words": self.words, "message": self.message,
            "witness": {k: (list(v) if isinstance(v, tuple) else v) for k, v in self.witness},
        }

    def one_line(self) -> str:
        return f"{self.page}:{self.line}:{self.column}: {self.severity}: {self.kind}: {self.message}"


Finding = IngestFinding

# ----------------------------------------------------------------------------- derived metadata layouts

# Which lane and nibble of the metadata register hold the index field of which (row, chunk).
# The doc shows this only in figures; these are read from CUTLASS CuTe's sparse ELayouts
# (include/cute/atom/mma_traits_sm80_sparse.hpp, NVIDIA CUTLASS, BSD-3-Clause) and are emitted
# with that provenance, never as doc-stated facts.  Key: (shape, type family of A).
_CUTE = "CUTLASS CuTe include/cute/atom/mma_traits_sm80_sparse.hpp (NVIDIA CUTLASS, BSD-3-Clause)"
_HALVES = ("groupID = %laneid >> 2\nrow = groupID          for ei where i < 4\n"
           "      groupID + 8      for ei where i >= 4\n")
_WHOLE_ROW = "groupID = %laneid >> 2\nrow = groupID + (8 * (%laneid % 2))\n"
DERIVED_METADATA: dict[tuple[str, str], dict[str, Any]] = {
    ("m16n8k16", "16bit"): {"selectors": [0, 1, 2, 3], "selector": "%laneid % 4",
                            "metadata": _HALVES + "col = i % 4\n",
                            "why": "MMA_Traits<SM80_SPARSE_16x8x16_F16F16F16F16_TN>::ELayout = ((4,8),(16,2)):((0,1),(0,8)): "
                                   "one lane of each group of four (any, by the selector), row groupID in the low 16 bits, "
                                   "groupID + 8 in the high 16 bits"},
    ("m16n8k8", "tf32"): {"selectors": [0, 1, 2, 3], "selector": "%laneid % 4",
                          "metadata": _HALVES + "col = i % 4\n",
                          "why": "MMA_Traits<SM80_SPARSE_16x8x8_F32TF32TF32F32_TN>::ELayout = ((4,8),(8,2)):((0,1),(0,8)): "
                                 "one lane of each group of four, row groupID in the low 16 bits, groupID + 8 in the high"},
    ("m16n8k32", "16bit"): {"selectors": [0, 1], "selector": "(%laneid % 4) >> 1",
                            "metadata": _HALVES + "col = (i % 4) + (4 * (%laneid % 2))\n",
                            "why": "MMA_Traits<SM80_SPARSE_16x8x32_F16F16F16F16_TN>::ELayout = ((2,2,8),(16,2)):((256,0,1),(0,8)): "
                                   "lane bit 0 selects the K half, lane bit 1 (the selector pair) has stride 0, the high "
                                   "16 bits hold row groupID + 8"},
    ("m16n8k16", "tf32"): {"selectors": [0, 1], "selector": "(%laneid % 4) >> 1",
                           "metadata": _HALVES + "col = (i % 4) + (4 * (%laneid % 2))\n",
                           "why": "MMA_Traits<SM80_SPARSE_16x8x16_F32TF32TF32F32_TN>::ELayout = ((2,2,8),(8,2)):((128,0,1),(0,8)): "
                                  "lane bit 0 selects the K half, lane bit 1 (the selector pair) has stride 0, the high "
                                  "16 bits hold row groupID + 8"},
    ("m16n8k32", "8bit"): {"selectors": [0, 1], "selector": "(%laneid % 4) >> 1",
                           "metadata": _WHOLE_ROW + "col = i                          for ei where i = {0,..,7}\n",
                           "why": "MMA_Traits<SM80_SPARSE_16x8x32_S32S8S8S32_TN>::ELayout = ((2,2,8),32):((8,0,1),0): "
                                  "lane bit 0 adds 8 to the row, lane bit 1 (the selector pair) has stride 0, one word "
                                  "covers a whole row"},
    ("m16n8k64", "4bit"): {"selectors": [0, 1], "selector": "(%laneid % 4) >> 1",
                           "metadata": _WHOLE_ROW + "col = i                          for ei where i = {0,..,7}\n",
                           "why": "MMA_Traits<SM80_SPARSE_16x8x64_S32S4S4S32_TN>::ELayout = ((2,2,8),64):((8,0,1),0): "
                                  "lane bit 0 adds 8 to the row, lane bit 1 (the selector pair) has stride 0, one word "
                                  "covers a whole row"},
    ("m16n8k64", "8bit"): {"selectors": [0], "selector": "0",
                           "metadata": _WHOLE_ROW + "col = i + (8 * ((%laneid >> 1) % 2))\n",
                           "why": "MMA_Traits<SM80_SPARSE_16x8x64_S32S8S8S32_TN>::ELayout = ((2,2,8),32):((8,512,1),0): "
                                  "all four lanes of a group, lane bit 0 adds 8 to the row, lane bit 1 selects the K half"},
    ("m16n8k128", "4bit"): {"selectors": [0], "selector": "0",
                            "metadata": _WHOLE_ROW + "col = i + (8 * ((%laneid >> 1) % 2))\n",
                            "why": "MMA_Traits<SM80_SPARSE_16x8x128_S32S4S4S32_TN>::ELayout = ((2,2,8),64):((8,1024,1),0): "
                                   "all four lanes of a group, lane bit 0 adds 8 to the row, lane bit 1 selects the K half"},
}


# Sparse B layouts the doc gives only as figures, from CuTe's BLayouts (same provenance as above).
_B_HEAD = "groupID = %laneid >> 2\nthreadID_in_group = %laneid % 4\n"
DERIVED_B: dict[tuple[str, str], dict[str, str]] = {
    ("m16n8k32", "16bit"): {"formula": _B_HEAD + "row = (threadID_in_group * 2) + (i & 0x1) + (8 * (i >> 1))\ncol = groupID\n",
                            "why": "MMA_Traits<SM80_SPARSE_16x8x32_F16F16F16F16_TN>::BLayout = ((4,8),(2,4)):((16,1),(8,64))"},
    ("m16n8k64", "8bit"): {"formula": _B_HEAD + "row = (threadID_in_group * 4) + (i & 0x3) + (16 * (i >> 2))\ncol = groupID\n",
                           "why": "MMA_Traits<SM80_SPARSE_16x8x64_S32S8S8S32_TN>::BLayout = ((4,8),(4,4)):((32,1),(8,128))"},
    ("m16n8k128", "4bit"): {"formula": _B_HEAD + "row = (threadID_in_group * 8) + (i & 0x7) + (32 * (i >> 3))\ncol = groupID\n",
                            "why": "MMA_Traits<SM80_SPARSE_16x8x128_S32S4S4S32_TN>::BLayout = ((4,8),(8,4)):((64,1),(8,256))"},
    ("m16n8k16", "tf32"): {"formula": _B_HEAD + "row = threadID_in_group + (i * 4) for bi where i < 4\ncol = groupID\n",
                           "why": "MMA_Traits<SM80_SPARSE_16x8x16_F32TF32TF32F32_TN>::BLayout = ((4,8),4):((8,1),32)"},
}


def _b_family(types: Sequence[str], per_register: int | None) -> str:
    """B's storage family, from its types and how many share a .b32 (fp4 is 8-bit under
    kind::f8f6f4, 4-bit under mxf4)."""
    if set(types) <= {"f16", "bf16"}:
        return "16bit"
    if set(types) <= {"tf32"}:
        return "tf32"
    return {4: "8bit", 8: "4bit"}.get(per_register or 0, "") if set(types) <= {
        "u8", "s8", "u4", "s4", "e4m3", "e5m2", "e3m2", "e2m3", "e2m1"} else ""


def _type_family(types: Sequence[str], kept: int, chunk: int) -> str:
    """Storage family of A: the fp8/fp6/fp4 kinds share the 8-bit (2:4) or 4-bit (4:8) scheme."""
    if set(types) <= {"f16", "bf16"}:
        return "16bit"
    if set(types) <= {"tf32"}:
        return "tf32"
    if set(types) <= {"u8", "s8", "e4m3", "e5m2", "e3m2", "e2m3", "e2m1"} and (kept, chunk) == (2, 4):
        return "8bit"
    if set(types) <= {"u4", "s4", "e2m1"} and (kept, chunk) == (4, 8):
        return "4bit"
    return ""


def derived_metadata(shape: str, types: Sequence[str], kept: int, chunk: int) -> tuple[tuple[str, Any], ...]:
    """The derived metadata keys of a sparse A fragment's ``[fragment.sparse]`` table (or none)."""
    d = DERIVED_METADATA.get((shape, _type_family(types, kept, chunk)))
    if d is None:
        return ()
    return (("selectors", list(d["selectors"])), ("selector", d["selector"]), ("metadata", d["metadata"]),
            ("metadata_derived", f"{_CUTE}: {d['why']}. The order of chunks inside a word (LSB first) is our "
                                 "reading; the doc shows the mapping only in a figure."))


# ----------------------------------------------------------------------------- reviewed errata

# Errata that the text checks cannot repair by themselves, reviewed by reading the page against
# the figures and the neighbouring shapes.  "doc" must occur verbatim in the doc formula; when the
# doc is fixed the entry no longer applies and an info finding says so.
REVIEWED_ERRATA: tuple[dict[str, Any], ...] = (
    {
        "section": "9.7.14.5.13", "operand": "A",
        "doc": "(threadID_in_group * 32) + i for ai where i < 64",
        "fixed": "(threadID_in_group * 32) + (i & 0x1F) for ai where i < 64",
        "expect": {"injective": "refuted", "surjective": "refuted"},
        "erratum": "col of a32..a63 lacks '& 0x1F' (compare a64..a127 and mma.m16n8k128): lanes collide "
                   "and columns 0..31 of rows groupID + 8 are never covered",
    },
)

# ----------------------------------------------------------------------------- vocabulary

_NUM_WORDS = {
    "a single": 1, "single": 1, "one": 1, "a": 1, "two": 2, "three": 3, "four": 4, "five": 5,
    "six": 6, "seven": 7, "eight": 8, "sixteen": 16, "thirty two": 32, "thirty-two": 32,
}
_NUM = r"(a single|single|one|two|three|four|five|six|seven|eight|sixteen|thirty[ -]two|\d+)"
_TYPES = ("f16", "bf16", "tf32", "f32", "f64", "s8", "u8", "s4", "u4", "b1", "s32", "e4m3",
          "e5m2", "e3m2", "e2m3", "e2m1")
_TYPE_RX = re.compile(r"\.(" + "|".join(sorted(_TYPES, key=len, reverse=True)) + r")\b")
_SUBBYTE_FLOATS = {"e3m2", "e2m3", "e2m1"}  # stored in 8-bit containers by some shapes
_SECTION_TITLE = re.compile(r"^Matrix Fragments for (sparse )?mma\.(m\d+n\d+k\d+)\b\s*(.*)$", re.I)


def _num(word: str) -> int:
    w = word.lower().strip()
    return int(w) if w.isdigit() else _NUM_WORDS[w]


def _types_in(text: str) -> list[str]:
    out: list[str] = []
    for t in _TYPE_RX.findall(text):
        if t not in out:
            out.append(t)
    return out


# ----------------------------------------------------------------------------- model

@dataclass(frozen=True)
class ElementList:
    text: str                       # verbatim
    names: tuple[str, ...] | None   # expanded names (ellipsis filled in) or None when unusable
    ellipsis: bool = False
    problems: tuple[str, ...] = ()  # "punctuation", "duplicate", "gap", "prefix"


@dataclass(frozen=True)
class RowFacts:
    """One fragment-table row, as the doc states it."""

    types: tuple[str, ...]
    registers: int | None
    register_type: str | None
    per_register: int | None        # elements per register, stated or implied
    per_register_stated: str        # "each" | "total" | "" (implied by the widths)
    elements: ElementList | None
    elements_inherited: bool
    line: int
    words: str                      # the fragment cell, for findings
    sparse_kept: int | None = None  # "N non-zero ... out of W consecutive" (per register)
    sparse_out_of: int | None = None
    element_bits: int | None = None
    count_ok: bool = True
    packing_ok: bool = True
    corrected: tuple[tuple[str, Any], ...] = ()  # fixes to the row facts (text errata)
    errata: tuple[str, ...] = ()


@dataclass(frozen=True)
class FragmentSpec:
    operand: str
    types: tuple[str, ...]
    variant: str | None
    row: RowFacts
    formula: str
    formula_line: int
    figures: tuple[str, ...]
    rows: int | None = None
    cols: int | None = None
    sparse: tuple[tuple[str, Any], ...] = ()
    derived: str = ""
    expect: tuple[tuple[str, str], ...] = ()
    erratum: str = ""
    corrected: tuple[tuple[str, Any], ...] = ()
    layout_id: str = ""
    comments: tuple[str, ...] = ()


@dataclass(frozen=True)
class SectionSpec:
    number: str
    title: str
    anchor: str
    page: str
    line: int
    instruction: str
    shape: str
    tag: str
    name: str  # spec file stem, e.g. "mma.sp.m16n8k64.u8"
    fragments: tuple[FragmentSpec, ...]
    figures: tuple[str, ...]
    sparsity: tuple[tuple[int, str], ...]     # (line, statement) for sparse sections
    references: tuple[tuple[int, str], ...]   # (line, "B,C -> 9.7.14.5.8")
    groups: int = 1
    group: str = ""
    version: str = ""
    findings: tuple[IngestFinding, ...] = ()

    def toml(self) -> str:
        return emit_toml(self)


@dataclass(frozen=True)
class IngestResult:
    sections: tuple[SectionSpec, ...]
    findings: tuple[IngestFinding, ...]
    pages: tuple[str, ...] = ()

    def specs(self) -> list[tuple[str, str]]:
        return [(s.name + ".toml", s.toml()) for s in self.sections]

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
    ellipsis_at: list[int] = []
    for item, off in items:
        if item in ("…", "...", ".."):
            ellipsis_at.append(len(names))
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
            names.append(int(m.group(2)))
    expanded: list[int] = []
    for k, n in enumerate(names):
        if k in ellipsis_at and expanded:
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

_REG_RX = re.compile(r"(?:containing|of)(?:\s+of)?\s+" + _NUM + r"\s+\.([a-z0-9]+)\s+registers?\b", re.I)
_EACH_RX = re.compile(r"each(?:\s+register)?\s*,?\s+containing\s+" + _NUM + r"\s+(non-zero\s+)?(.*?)\belements?\b"
                      r"(?:\s+out of\s+(\d+)\s+consecutive)?", re.I)
_TOTAL_RX = re.compile(r"containing\s+" + _NUM + r"\s+(non-zero\s+)?(\.[^,]*?)\belements?\b"
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
        w = tuple((k, tuple(v) if isinstance(v, list) else v) for k, v in (witness or {}).items())
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
    types = tuple(_types_in(cells[0].text) or [t.strip(". ") for t in re.split(r"[/,]| or ", cells[0].text) if t.strip(". ")])
    frag = cells[1].text if len(cells) > 1 else ""
    fcol = cells[1].col if len(cells) > 1 else 1
    registers = register_type = per = None
    stated = ""
    kept = out_of = None
    m = _REG_RX.search(frag)
    if m:
        registers, register_type = _num(m.group(1)), m.group(2).lower()
        rest = frag[m.end():]
        e = _EACH_RX.search(rest)
        t = _TOTAL_RX.search(rest)
        if e:
            per, stated = _num(e.group(1)), "each"
            if e.group(2):
                kept, out_of = per, int(e.group(4)) if e.group(4) else None
        elif t:
            total = _num(t.group(1))
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
    if per and rbits and rbits % per == 0 and rbits // per == 8 and any(t in _SUBBYTE_FLOATS for t in types) \
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
    want = rows * cols // lanes if rows * cols % lanes == 0 else None
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
            if ebits and (rbits % ebits or rbits // ebits != per):
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
            try:
                parse_formula("\n".join(trial), "x")
            except FormulaError:
                pass
            except Exception:  # pragma: no cover - defensive
                continue
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


def _enumerate(formula: Formula, lanes: int, n: int, rows: int, cols: int,
               group_of: dict[int, int] | None) -> dict[str, Any] | None:
    """Out of range, collisions and holes of a doc formula (None when it is a bijection),
    judged exactly as ``check`` judges it (the layout model's evaluation and ``decide``)."""
    groups = (max(group_of.values()) + 1) if group_of else 1
    try:
        cells = FormulaMap(formula).cells(Domain(32, n))
    except EvalError as err:
        return {"error": err.message}
    if group_of:
        cells = replace(cells, group=np.array([group_of.get(lane, 0) for lane in range(32)], np.int64))
    e = decide(cells, rows, cols, groups, lambda i: f"{formula.element_prefix}{i}")
    bad: dict[str, Any] = {}
    if e.in_range is not None:
        bad["undefined" if e.in_range["row"] is None else "out_of_range"] = e.in_range
    if e.injective is not None:
        bad["collision"] = e.injective
    if e.surjective is not None:
        bad["hole"] = e.surjective
    return bad or None


def _section_kind(title: str) -> tuple[str, str, str] | None:
    m = _SECTION_TITLE.match(title.replace("`", "").strip())
    if not m:
        return None
    instruction = "mma.sp" if m.group(1) else "mma"
    rest = m.group(3)
    tag = ""
    if rest.lower().startswith("with"):
        ts = _types_in(rest)
        if ts:
            tag = ts[0]
        elif "floating" in rest.lower():
            tag = "float"
        elif "integer" in rest.lower():
            tag = "int"
    return instruction, m.group(2), tag


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


def _read_section(section: Section, version: str) -> tuple[SectionSpec | None, list[dict[str, Any]], list[IngestFinding]]:
    kind = _section_kind(section.heading.title)
    if kind is None:
        return None, [], []
    instruction, shape_text, tag = kind
    shape = Shape.parse(shape_text)
    assert shape is not None
    ctx = _Ctx(section, section.number, instruction, shape)
    sparse = instruction == "mma.sp"
    operand: str | None = None
    table: _Table | None = None
    sub_ctx = ""
    images: list[Image] = []
    captions: list[Caption] = []
    fragments: list[FragmentSpec] = []
    pending_refs: list[dict[str, Any]] = []
    sparsity: list[tuple[int, str]] = []
    all_figures: list[str] = []
    groups, group_text, group_of = 1, "", None
    kept_chunk: tuple[int, int] | None = None
    lanes = 32
    operand_of_table = ""

    for block in section.blocks:
        if isinstance(block, Text):
            text = block.text
            op = _operand_of(text)
            if op == "C" and text.startswith("Accumulators"):
                fragments += _unused(ctx, table, operand_of_table, shape, sparse, lanes, group_of)
                operand, table, sub_ctx, images, captions = "C", None, "", [], []
                continue
            if op in ("A", "B"):
                fragments += _unused(ctx, table, operand_of_table, shape, sparse, lanes, group_of)
                operand, table, sub_ctx, images, captions = op, None, "", [], []
                continue
            ref = re.match(r"^Matrix fragments for (.*?) (?:is|are) the same as in case of (.*)$", text, re.I)
            if ref:
                ops = (["B"] if re.search(r"multiplicand B", ref.group(1), re.I) else []) + \
                      (["C"] if re.search(r"accumulator", ref.group(1), re.I) else [])
                target = ref.group(2)
                qual = re.search(r"\bfor\s+((?:\.[a-z0-9]+\s*/?\s*)+?)\s*formats?\b", target)
                anchors = [a.split("#", 1)[1] for a in block.links if "#" in a]
                title = re.sub(r"\s+for\s+(?:\.[a-z0-9]+\s*/?\s*)+\s*formats?\.?\s*$", "", target).rstrip(". ")
                qual_types = tuple(re.findall(r"\.([a-z0-9]+)", qual.group(1))) if qual else ()
                for t in qual_types:
                    if t not in _TYPES:
                        ctx.find("type-name", "warning", block.line, block.col, text,
                                 f"'.{t}' is not an mma type" + (" (probably .bf16)" if t == "b16" else ""),
                                 {"type": t}, "")
                pending_refs.append({"operands": ops, "anchor": anchors[0] if anchors else "",
                                     "title": title, "types": qual_types, "line": block.line, "col": block.col})
                fragments += _unused(ctx, table, operand_of_table, shape, sparse, lanes, group_of)
                operand, table = None, None
                continue
            if re.match(r"^Metadata\s*:", text):
                fragments += _unused(ctx, table, operand_of_table, shape, sparse, lanes, group_of)
                operand, table = None, None
                sparsity.append((block.line, _short(text, 200)))
                m = re.search(r"(\d+)-wide chunk", text)
                if m:
                    kept_chunk = (0, int(m.group(1)))
                continue
            if block.bullet or re.fullmatch(r"\.[a-z0-9]+(\s*(and|or|/|,)\s*\.[a-z0-9]+)*\s*:", text):
                # a sub-item after the table narrows it (".ctype is .f16", "Row Major");
                # one before the table only introduces it
                sub_ctx = text if table is not None else ""
                images, captions = [], []
            continue
        if isinstance(block, Table):
            gt = _group_table(ctx, block)
            if gt is not None:
                groups, group_text, group_of = gt
                lanes = 32 // groups
                continue
            if operand is None or not block.header or not block.header[0].strip().startswith("."):
                continue
            hdr = block.header[0]
            named = {"atype": "A", "btype": "B", "ctype": "C", "dtype": "C"}
            hop = [named[w] for w in re.findall(r"\.([abcd]type)", hdr) if w in named]
            if hop and operand not in hop:
                ctx.find("table-header", "warning", block.line, 1, hdr,
                         f"the table of operand {operand} is headed '{hdr}'", {"header": hdr}, operand)
            facts: list[RowFacts] = []
            prev: RowFacts | None = None
            for k, row in enumerate(block.rows):
                f = _row_facts(ctx, block, operand, lanes, sparse, prev, k)
                if f is None:
                    continue
                ext = _extent(operand, shape, sparse)
                col = row.cells[1].col if len(row.cells) > 1 else 1
                f = _check_row(ctx, f, operand, ext, lanes, col)
                if sparse and operand == "A" and f.sparse_kept is not None:
                    sparsity.append((row.line, _short(f.words, 200)))
                facts.append(f)
                prev = f
            fragments += _unused(ctx, table, operand_of_table, shape, sparse, lanes, group_of)
            table = _Table(block, facts)
            operand_of_table = operand
            sub_ctx = ""
            images, captions = [], []
            continue
        if isinstance(block, Image):
            images.append(block)
            if block.stem not in all_figures:
                all_figures.append(block.stem)
            continue
        if isinstance(block, Caption):
            captions.append(block)
            continue
        if isinstance(block, Code):
            if operand is None:
                continue
            if table is None or not table.rows:
                ctx.find("formula-without-table", "warning", block.line, 1, block.text.split("\n")[0],
                         f"a formula for operand {operand} with no fragment table before it", None, operand)
                continue
            ctx_types = set(_types_in(sub_ctx))
            chosen = [k for k, r in enumerate(table.rows) if ctx_types & set(r.types)]
            if not chosen or len(chosen) == len(table.rows):
                chosen = list(range(len(table.rows)))
            variant = None
            if re.search(r"\brow[- ]major\b", sub_ctx, re.I):
                variant = "row"
            elif re.search(r"\bcolumn[- ]major\b", sub_ctx, re.I):
                variant = "col"
            text, where, first = _formula_text(block)
            _figure_checks(ctx, operand, images, captions,
                           tuple(t for k in chosen for t in table.rows[k].types))
            for k in chosen:
                r = table.rows[k]
                table.used[k] = True
                fragments.append(FragmentSpec(operand, r.types, variant, r, text, first,
                                              tuple(i.stem for i in images),
                                              comments=(f"table row: line {r.line}",),
                                              expect=(), corrected=(), rows=None, cols=None,
                                              sparse=(), derived="", erratum="",
                                              layout_id="", ))
                fragments[-1] = _finish_formula(ctx, fragments[-1], where, shape, sparse, lanes, group_of)
            continue
    fragments += _unused(ctx, table, operand_of_table, shape, sparse, lanes, group_of)
    # table rows that no formula followed
    # (sparse B pages give a figure only; the text checks above still ran on them)
    if kept_chunk is not None:
        pass
    # sparse A: kept non-zeros per chunk from "N non-zero out of W consecutive" and "a C-wide chunk"
    out: list[FragmentSpec] = []
    for fr in fragments:
        if sparse and fr.operand == "A":
            r = fr.row
            rows, cols = _extent("A", shape, True)
            sp: tuple[tuple[str, Any], ...] = ()
            if r.sparse_kept and r.sparse_out_of and kept_chunk and kept_chunk[1]:
                chunk = kept_chunk[1]
                if (r.sparse_kept * chunk) % r.sparse_out_of == 0:
                    sp = (("kept", r.sparse_kept * chunk // r.sparse_out_of), ("chunk", chunk))
            elif r.sparse_kept and r.sparse_out_of:
                sp = (("kept", r.sparse_kept), ("chunk", r.sparse_out_of))
            if not sp:
                ctx.find("sparsity-words", "warning", r.line, 1, r.words,
                         "cannot read the sparsity (non-zeros per chunk) of this sparse A fragment", None, "A", r.types)
            else:
                sp += derived_metadata(str(shape), fr.types, dict(sp)["kept"], dict(sp)["chunk"])
            fr = replace(fr, rows=rows, cols=cols, sparse=sp)
        out.append(fr)
    spec = SectionSpec(
        number=section.number, title=section.heading.title.replace("\uf0c1", "").strip(),
        anchor=section.heading.anchor, page=section.page, line=section.heading.line,
        instruction=instruction, shape=shape_text, tag=tag,
        name=".".join([instruction, shape_text] + ([tag] if tag else [])),
        fragments=tuple(out), figures=tuple(all_figures), sparsity=tuple(sparsity), references=(),
        groups=groups, group=group_text, version=version, findings=(),
    )
    if table is not None:
        pass
    return spec, pending_refs, ctx.findings


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
                          erratum="", layout_id="")
        out.append(_finish_formula(ctx, fr, [(r.line, 1)] * (d["formula"].count("\n") + 1), shape, sparse, lanes,
                                   group_of))
    table.used = [True] * len(table.rows)
    return out


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
            errata.append(f"doc formula does not parse ({e.message} at {Path(ctx.section.page).name}:{pl}:{col}); "
                          f"corrected by {fix[1]}")
        else:
            ctx.find("formula-syntax", "error", pl, col, line_text,
                     f"formula does not parse: {e.message}; no repair found, fragment left out",
                     {"error": e.message}, fr.operand, fr.types)
            return replace(fr, formula="", comments=fr.comments + ("formula does not parse; left out",))
    for entry in REVIEWED_ERRATA:
        if entry["section"] == ctx.number and entry["operand"] == fr.operand:
            base = cformula_text or fr.formula
            if entry["doc"] in base:
                cformula_text = base.replace(entry["doc"], entry["fixed"])
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
        if bad:
            hits = [e for e in REVIEWED_ERRATA
                    if e["section"] == ctx.number and e["operand"] == fr.operand and e["doc"] in fr.formula]
            reviewed = bool(hits)
            ctx.find("not-bijective", "error" if not reviewed else "warning", fr.formula_line, 1,
                     hits[0]["doc"] if hits else fr.formula.split("\n")[-1],
                     "the formula does not map the thread elements one-to-one onto the "
                     f"{rows}x{cols} matrix" + (" (reviewed erratum)" if reviewed else " (not reviewed)"),
                     {k: json.dumps(v, sort_keys=True) for k, v in sorted(bad.items())}, fr.operand, fr.types)
        if cformula_text is not None:
            try:
                cf = parse_formula(cformula_text, prefix)
                cbad = _enumerate(cf, lanes, n, rows, cols, group_of)
                if cbad:
                    ctx.find("correction-not-bijective", "error", fr.formula_line, 1, "",
                             "the corrected formula is not a bijection either",
                             {k: json.dumps(v, sort_keys=True) for k, v in sorted(cbad.items())}, fr.operand, fr.types)
            except FormulaError:
                pass
    if cformula_text is not None:
        corrected["formula"] = cformula_text
    if corrected and not errata:
        errata.append("corrected from the doc's own statements")
    return replace(fr, expect=tuple(sorted(expect.items())), corrected=tuple(sorted(corrected.items())),
                   erratum="; ".join(errata) if corrected else "", layout_id="")


# ----------------------------------------------------------------------------- pages -> sections

def _version_of(path: str) -> str:
    m = re.search(r"ptx-isa-(\d+\.\d+)", path)
    return m.group(1) if m else ""


class _Library:
    """All sections of the given pages, plus sibling pages (for cross references)."""

    def __init__(self) -> None:
        self.pages: dict[str, Page] = {}
        self.dirs_loaded: set[str] = set()
        self.resolved: set[str] = set()

    def load(self, path: str) -> Page:
        if path not in self.pages:
            self.pages[path] = read_page(path)
            self.resolved.add(str(Path(path).resolve()))
        return self.pages[path]

    def siblings(self, path: str, number: str) -> None:
        """Load the pages of the same chapter next to ``path`` (and in the doc directory:
        ``$PTX_DOCS_DIR``, or a ``ptx-isa-*`` directory beside the page's directory)."""
        here = Path(path).resolve().parent
        dirs = [here]
        env = os.environ.get("PTX_DOCS_DIR")
        if env:
            dirs.append(Path(env).resolve())
        dirs.extend(sorted(q.resolve() for q in here.parent.glob("ptx-isa-*") if q.is_dir()))
        chapter = "-".join(number.split(".")[:3]) + "-"
        for d in dirs:
            if str(d) in self.dirs_loaded or not d.is_dir():
                continue
            self.dirs_loaded.add(str(d))
            for q in sorted(d.glob(chapter + "*")):
                if q.is_file() and q.suffix.lower() in (".md", ".txt", ".html", ".htm") \
                        and str(q) not in self.pages and str(q.resolve()) not in self.resolved:
                    try:
                        self.load(str(q))
                    except PageError:
                        continue

    def sections(self) -> list[Section]:
        return [s for p in self.pages.values() for s in p.sections]


def _norm_title(t: str) -> str:
    return re.sub(r"[^a-z0-9.]+", " ", t.lower().replace("`", "")).strip()


def ingest_pages(paths: Sequence[str | Path]) -> IngestResult:
    """Read pages and return one ``SectionSpec`` per matrix-fragment section, with findings."""
    lib = _Library()
    order: list[str] = []
    for p in paths:
        sp = str(p)
        lib.load(sp)
        if sp not in order:
            order.append(sp)
    findings: list[IngestFinding] = []
    specs: list[SectionSpec] = []
    seen_sections: set[str] = set()
    refs_of: dict[str, list[dict[str, Any]]] = {}
    for sp in order:
        page = lib.pages[sp]
        for section in page.sections:
            if section.number in seen_sections:
                continue
            spec, refs, fnd = _read_section(section, _version_of(sp))
            if spec is None:
                continue
            if not spec.fragments and not refs:
                findings.extend(fnd)
                continue
            seen_sections.add(section.number)
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
            lib.siblings(spec.page, spec.number)
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
    findings.sort(key=lambda f: (f.page, f.line, f.column, f.kind, f.operand, f.types))
    return IngestResult(tuple(final), tuple(findings), tuple(order))


def _resolve(lib: _Library, spec: SectionSpec, ref: dict[str, Any],
             specs: list[SectionSpec]) -> tuple[SectionSpec, list[IngestFinding]] | None:
    def match(section: Section) -> bool:
        if ref["anchor"] and section.heading.anchor == ref["anchor"]:
            return True
        return bool(ref["title"]) and _norm_title(section.heading.title) == _norm_title(ref["title"])

    for s in specs:
        if (ref["anchor"] and s.anchor == ref["anchor"]) or _norm_title(s.title) == _norm_title(ref["title"]):
            return s, []
    lib.siblings(spec.page, spec.number)
    for section in lib.sections():
        if match(section) and section.number != spec.number:
            tspec, _refs, fnd = _read_section(section, spec.version)
            if tspec is not None and tspec.fragments:
                return tspec, fnd
    return None


def _assign_ids(specs: list[SectionSpec]) -> list[SectionSpec]:
    """Layout ids: instruction.shape[.tag].operand.types[.variant]; the tag only where the types
    do not already tell this section from another of the same shape."""
    out = []
    for s in specs:
        frs = []
        for f in s.fragments:
            parts = [s.instruction, s.shape]
            if s.tag and s.tag not in f.types:
                parts.append(s.tag)
            parts += [f.operand, "_".join(f.types)]
            if f.variant:
                parts.append(f.variant)
            frs.append(replace(f, layout_id=".".join(parts)))
        out.append(replace(s, fragments=tuple(frs)))
    # any remaining clash: qualify with the section number
    seen: dict[str, int] = {}
    for s in out:
        for f in s.fragments:
            seen[f.layout_id] = seen.get(f.layout_id, 0) + 1
    fixed = []
    for s in out:
        frs = []
        for f in s.fragments:
            if seen[f.layout_id] > 1:
                f = replace(f, layout_id=f.layout_id + "." + s.number.replace(".", "_"))
            frs.append(f)
        fixed.append(replace(s, fragments=tuple(frs)))
    return fixed


# ----------------------------------------------------------------------------- TOML emitter

def _q(s: str) -> str:
    out = ['"']
    for ch in s:
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _multiline(s: str) -> str:
    if "'''" in s or any(ord(c) < 0x20 and c not in "\n\t" for c in s):
        return _q(s)
    return "'''\n" + s + "\n'''"


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str):
        return _multiline(v) if "\n" in v else _q(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{k} = {_value(x)}" for k, x in v.items()) + " }"
    raise TypeError(type(v))


def _comment(text: str) -> str:
    return "# " + re.sub(r"\s+", " ", text).strip()


def emit_toml(spec: SectionSpec) -> str:
    page = Path(spec.page).name
    is_seed = bool(re.fullmatch(r"\d{3}_[0-9a-f]+\.txt", page))
    lines = [
        f"# Generated by `ptx-verify ingest` from {page} (section {spec.number}).",
        "# Formulas are the doc's lines verbatim (runs of blank lines folded); doc_line is the page line.",
        "schema = 1",
        "",
        "[source]",
        'document = "PTX ISA"',
    ]
    if spec.version:
        lines.append(f"version = {_q(spec.version)}")
    lines.append(f"section = {_q(spec.number)}")
    lines.append(f"title = {_q(spec.title)}")
    if spec.anchor:
        lines.append(f"anchor = {_q(spec.anchor)}")
    lines.append(f"{'seed' if is_seed else 'page'} = {_q(page)}")
    lines += ["", "[instruction]", f"name = {_q(spec.instruction)}", f"shape = {_q(spec.shape)}"]
    if spec.groups > 1:
        lines.append(f"groups = {spec.groups}")
        lines.append(f"group = {_q(spec.group)}")
        lines.append(_q("group formula checked lane by lane against the doc's table of MMA computations")
                     .join(["note = ", ""]))
    for line, stmt in spec.sparsity:
        lines.append(_comment(f"sparsity (doc line {line}): {_sparsity_fact(stmt)}"))
    for line, ref in spec.references:
        lines.append(_comment(f"reference (line {line}): {ref}"))
    by_frag = {}
    for f in spec.findings:
        by_frag.setdefault((f.operand, f.types), []).append(f)
    for fr in spec.fragments:
        lines.append("")
        if not fr.formula:
            lines.append(_comment(f"operand {fr.operand} .{'/.'.join(fr.types)} (table line {fr.row.line}) "
                                  f"left out: {'; '.join(fr.comments)}"))
            continue
        for c in fr.comments:
            lines.append(_comment(c))
        if not fr.derived:
            for f in by_frag.get((fr.operand, fr.types), []):
                if f.severity != "info":
                    lines.append(_comment(f"finding {f.kind} at line {f.line}:{f.column}: {f.message}"))
        lines.append("[[fragment]]")
        if fr.layout_id and fr.layout_id != _default_id(spec, fr):
            lines.append(f"id = {_q(fr.layout_id)}")
        lines.append(f"operand = {_q(fr.operand)}")
        lines.append(f"types = {_value(list(fr.types))}")
        if fr.variant:
            lines.append(f"variant = {_q(fr.variant)}")
        r = fr.row
        lines.append(f"registers = {r.registers or 1}")
        lines.append(f"register_type = {_q(r.register_type or 'b32')}")
        lines.append(f"elements_per_register = {r.per_register or 1}")
        if r.elements is not None and r.elements_inherited and r.elements.problems:
            lines.append(_comment("elements: no list in this row; the row above has a malformed one"))
        elif r.elements is not None:
            lines.append(f"elements = {_q(r.elements.text)}")
        if r.element_bits:
            lines.append(f"element_bits = {r.element_bits}")
        if fr.rows is not None:
            lines.append(f"rows = {fr.rows}")
            lines.append(f"cols = {fr.cols}")
        simple_sparse = all(k in ("kept", "chunk") for k, _ in fr.sparse)
        if fr.sparse and simple_sparse:
            lines.append(f"sparse = {_value(dict(fr.sparse))}")
        if fr.figures:
            lines.append(f"figure = {_q(', '.join(fr.figures))}")
        lines.append(f"doc_line = {fr.formula_line}")
        lines.append(f"formula = {_multiline(fr.formula)}")
        if fr.derived:
            lines.append(f"derived = {_q(fr.derived)}")
        if fr.expect:
            lines.append(f"expect = {_value(dict(fr.expect))}")
        if fr.corrected:
            lines.append(f"erratum = {_q(fr.erratum)}")
        if fr.sparse and not simple_sparse:  # sub-tables last: every key after a header belongs to it
            lines.append("")
            lines.append("[fragment.sparse]")
            for k, v in fr.sparse:
                lines.append(f"{k} = {_multiline(v) if isinstance(v, str) and chr(10) in v else _value(v)}")
        if fr.corrected:
            lines.append("")
            lines.append("[fragment.corrected]")
            for k, v in fr.corrected:
                lines.append(f"{k} = {_value(v)}")
    return "\n".join(lines) + "\n"


def _sparsity_fact(stmt: str) -> str:
    """The numbers of a sparsity statement, without the doc's prose."""
    m = re.search(r"containing\s+" + _NUM + r"\s+non-zero\b.*?\bout of\s+(\d+)\s+consecutive", stmt, re.I)
    if m:
        return f"{_num(m.group(1))} non-zero of {m.group(2)} consecutive elements per register"
    m = re.search(r"(\d+)\s+(\d+)-bit vectors.*?(\d+)-wide chunk", stmt)
    if m:
        return f"metadata: {m.group(1)} {m.group(2)}-bit indices, {m.group(3)}-wide chunks"
    return "see the page"


def _default_id(spec: SectionSpec, fr: FragmentSpec) -> str:
    return ".".join([spec.instruction, spec.shape, fr.operand, "_".join(fr.types)] + ([fr.variant] if fr.variant else []))


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
