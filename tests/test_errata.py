"""Errata found from the doc text itself, at the right page lines (real pages from ../shared)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from verify.catalog.ingest import ingest_pages
from verify.catalog.spec import load_spec_text

ROOT = Path(__file__).resolve().parents[1]
DOCS = Path(os.environ.get("PTX_DOCS_DIR", ROOT.parent / "shared" / "ptx-isa-9.0"))
SEEDS = Path(os.environ.get("PTX_SEEDS_DIR", ROOT.parent / "shared" / "seeds"))

needs_docs = pytest.mark.skipif(not DOCS.is_dir(), reason=f"PTX ISA pages not found at {DOCS} (set PTX_DOCS_DIR)")
needs_seeds = pytest.mark.skipif(not SEEDS.is_dir(), reason=f"seed excerpts not found at {SEEDS} (set PTX_SEEDS_DIR)")


def found(paths: list[Path]) -> set[tuple[str, str, int, int]]:
    return {(Path(f.page).name, f.kind, f.line, f.column) for f in ingest_pages(paths).findings}


def kinds_at(paths: list[Path]) -> set[tuple[str, str, int]]:
    return {(Path(f.page).name, f.kind, f.line) for f in ingest_pages(paths).findings}


@needs_seeds
def test_seed_errata_at_their_lines() -> None:
    got = found(sorted(SEEDS.glob("00*.txt")))
    s2, s4 = "002_cc1e68b80931eb9b.txt", "004_78e27cc040189fec.txt"
    assert (s2, "formula-syntax", 38, 34) in got          # (threadID_in_group Otherwise
    assert (s2, "table-header", 55, 1) in got            # .atype heading the B table
    assert (s2, "element-list-punctuation", 118, 7) in got  # b0, b1. b2. b3
    assert (s2, "element-list-duplicate", 138, 9) in got    # c0, c1, c1, c2
    assert (s2, "element-list-gap", 138, 1) in got
    assert (s4, "table-header", 45, 1) in got
    assert (s4, "count-list", 47, 15) in got             # four .b32 each holding four .tf32 vs b0..b3
    assert (s4, "count-matrix", 47, 15) in got           # ... vs a 16x8 B over 32 threads
    errors = {(p, k) for p, k, *_ in got}
    for clean in ("000_5e384ddfee6261b0.txt", "001_1cbd6daafd0e6ed2.txt", "003_63d9b6e8958126be.txt"):
        assert not {k for p, k in errors if p == clean} - {"missing-elements", "no-formula", "unresolved-reference"}


@needs_seeds
def test_seed_errata_become_expectations() -> None:
    res = ingest_pages([SEEDS / "002_cc1e68b80931eb9b.txt"])
    texts = dict(res.specs())
    fl = load_spec_text(texts["mma.m16n8k16.float.toml"], "f.toml")
    assert [(s.layout, s.line, s.col) for s in fl.syntax_findings] and fl.syntax_findings[0].expected == "refuted"
    ids = {lay.id: lay for lay in fl.layouts}
    fixed = ids["mma.m16n8k16.A.f64@corrected"]
    assert "(threadID_in_group) Otherwise" in fixed.provenance.formula_text
    it = {lay.id: lay for lay in load_spec_text(texts["mma.m16n8k16.int.toml"], "i.toml").layouts}
    assert it["mma.m16n8k16.int.C.f16"].expect == {"elements": "refuted"}
    assert it["mma.m16n8k16.int.C.f16@corrected"].regs.elements_text == "c0, c1, c2, c3"
    assert it["mma.m16n8k16.B.e4m3_e5m2"].expect == {"elements": "refuted"}


@needs_docs
def test_page_errata() -> None:
    pages = sorted(DOCS.glob("9-7-14-5-[0-9]*.md")) + sorted(DOCS.glob("9-7-14-6-2-[0-9]*.md"))
    got = kinds_at(pages)
    p58 = "9-7-14-5-8-matrix-fragments-for-mma-m16n8k16-with-floating-point-type.md"
    p59 = "9-7-14-5-9-matrix-fragments-for-mma-m16n8k16-with-integer-type.md"
    assert (p58, "formula-syntax", 73) in got
    assert (p58, "table-header", 109) in got
    assert (p58, "figure-mismatch", 115) in got          # .f64 B shows sparse-mma-16816-tf32-B.png
    assert (p59, "element-list-punctuation", 44) in got
    assert (p59, "element-list-duplicate", 74) in got
    p623 = next(p.name for p in pages if p.name.startswith("9-7-14-6-2-3-"))
    p622 = next(p.name for p in pages if p.name.startswith("9-7-14-6-2-2-"))
    assert (p623, "count-matrix", 55) in got and (p623, "table-header", 53) in got
    assert (p622, "count-list", 55) in got               # four .b32 x two .f16 vs b0..b3
    p13 = next(p.name for p in pages if p.name.startswith("9-7-14-5-13-"))
    assert (p13, "not-bijective", 24) in got             # a32..a63 lack & 0x1F


@needs_docs
def test_no_false_alarm_on_correct_sections() -> None:
    for key in ("5-2", "5-3", "5-4", "5-5", "5-6", "5-7", "5-10", "5-11", "5-12"):
        page = next(DOCS.glob(f"9-7-14-{key}-*.md"))
        bad = [f.one_line() for f in ingest_pages([page]).findings if f.severity != "info"]
        assert not bad, bad


@needs_docs
def test_reviewed_bijectivity_erratum_in_spec() -> None:
    page = next(DOCS.glob("9-7-14-5-13-*.md"))
    (name, text), = ingest_pages([page]).specs()
    lays = {lay.id: lay for lay in load_spec_text(text, name).layouts}
    a = lays["mma.m16n8k256.A.b1"]
    assert a.expect == {"injective": "refuted", "surjective": "refuted"}
    assert "(threadID_in_group * 32) + i for ai where i < 64" in a.provenance.formula_text
    assert "(i & 0x1F) for ai where i < 64" in lays["mma.m16n8k256.A.b1@corrected"].provenance.formula_text
    # the correction itself enumerates as a bijection (no finding against it)
    assert not [f for f in ingest_pages([page]).findings if f.kind == "correction-not-bijective"]
