"""What ingest reads out of a doc section, before it becomes a spec: facts, findings, vocabulary.

A ``SectionSpec`` holds one "Matrix Fragments for ..." section: its fragments (``FragmentSpec``),
each from one fragment-table row (``RowFacts``) and the formula after it, and the findings about
the doc's text (``IngestFinding``, at page:line:column).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

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
            "witness": {k: thaw(v) for k, v in self.witness},
        }

    def one_line(self) -> str:
        """A compiler-style diagnostic whose level is the severity, the one word JSON says too
        (``error``, ``warning``, ``info``), followed by the kind; input the tool cannot read is a line
        with no kind, and exit 2."""
        return f"{self.page}:{self.line}:{self.column}: {self.severity}: {self.kind}: {self.message}"


Finding = IngestFinding

def freeze(v: Any) -> Any:
    """A JSON-like value as nested tuples (findings are frozen and hashable); ``thaw`` undoes it."""
    if isinstance(v, dict):
        return ("__dict__",) + tuple((k, freeze(x)) for k, x in v.items())
    if isinstance(v, (list, tuple)):
        return tuple(freeze(x) for x in v)
    return v


def thaw(v: Any) -> Any:
    if isinstance(v, tuple) and v[:1] == ("__dict__",):
        return {k: thaw(x) for k, x in v[1:]}
    if isinstance(v, tuple):
        return [thaw(x) for x in v]
    return v


# ----------------------------------------------------------------------------- the doc's vocabulary

NUM_WORDS = {
    "a single": 1, "single": 1, "one": 1, "a": 1, "two": 2, "three": 3, "four": 4, "five": 5,
    "six": 6, "seven": 7, "eight": 8, "sixteen": 16, "thirty two": 32, "thirty-two": 32,
}
NUM = r"(a single|single|one|two|three|four|five|six|seven|eight|sixteen|thirty[ -]two|\d+)"
TYPES = ("f16", "bf16", "tf32", "f32", "f64", "s8", "u8", "s4", "u4", "b1", "s32", "e4m3",
          "e5m2", "e3m2", "e2m3", "e2m1")
TYPE_RX = re.compile(r"\.(" + "|".join(sorted(TYPES, key=len, reverse=True)) + r")\b")
SUBBYTE_FLOATS = {"e3m2", "e2m3", "e2m1"}  # stored in 8-bit containers by some shapes
# the instructions whose layouts ingest reads from doc pages ("Matrix Fragments for [sparse] mma..."); the
# pages state the others' layouts (wmma, ldmatrix, wgmma, tcgen05, block-scale selectors) as figures only
PAGE_INSTRUCTIONS = ("mma", "mma.sp")
SECTION_TITLE = re.compile(r"^Matrix Fragments for (sparse )?mma\.(m\d+n\d+k\d+)\b\s*(.*)$", re.I)


def num_word(word: str) -> int:
    w = word.lower().strip()
    return int(w) if w.isdigit() else NUM_WORDS[w]


def types_in(text: str) -> list[str]:
    out: list[str] = []
    for t in TYPE_RX.findall(text):
        if t not in out:
            out.append(t)
    return out


# ----------------------------------------------------------------------------- model

@dataclass(frozen=True)
class ElementList:
    text: str                       # verbatim
    names: tuple[str, ...] | None   # expanded names (ellipsis filled in) or None when unusable
    ellipsis: bool = False
    problems: tuple[str, ...] = ()  # "punctuation", "duplicate", "gap", "prefix", "range"


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
    where: tuple[tuple[int, int], ...] = ()  # page (line, column) of each formula line ((0, 0): folded blank)
    page: str = ""  # the page the formula is on (another section's page when the doc refers to it)
    syntax_error: tuple[int, int, str] = ()  # type: ignore[assignment]  # page (line, col, message) when the doc's formula does not parse


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
