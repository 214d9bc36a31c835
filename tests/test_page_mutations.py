"""Issue 41 item 4: seeded one-token changes of every page the catalog cites (benchmarks/page_mutations.py: the
statements of each page, the changes drawn per statement, and whether each changes what its statement says decided
by that file's own reading of the statement, not by the tool).  CI's slow tier runs them; docs/page-review.md has
the figures.  Each page: every change that alters a statement is noticed (exit 1, a finding at the changed line),
or makes a known erratum right (the known finding at that line goes); every change that states the same layout
another way gives no finding, no warning, exit 0."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import page_mutations as pm  # noqa: E402


@pytest.mark.slow
@pytest.mark.parametrize("page", pm.PAGES)
def test_no_changed_statement_passes_and_no_equivalent_one_is_flagged(docs_dir: Path, page: str) -> None:
    results = pm.run_tree(docs_dir, 3, 41, (page,), show=True)
    counts = results["pages"][page]
    assert counts["original_exit"] == 0
    changed = sum(counts.get(k, 0) for k in pm.CHANGED)
    caught = counts.get("noticed", 0) + counts.get("fixes an erratum", 0)
    assert changed and caught == changed, results["shown"]
    assert counts.get("false alarm", 0) == 0, results["shown"]


def test_the_mutants_are_drawn_alike(docs_dir: Path) -> None:
    """The same seed draws the same changes (the figures are reproducible), every statement's span is on its line,
    and each page has changes that alter a statement; the shared-memory page has equivalent ones too."""
    a = [(m.label(), b) for m, b in pm.mutants(docs_dir, 3, 41)]
    assert a == [(m.label(), b) for m, b in pm.mutants(docs_dir, 3, 41)]
    pages = {label.split(":")[0] for label, b in a if b}
    assert pages == set(pm.PAGES)
    assert any(not b and label.startswith(pm.SMEM) for label, b in a)


def test_a_finding_quoting_its_changed_statement_is_read_with_the_page_s_text() -> None:
    """An equivalent rewrite that a warning quotes ((T,2k) written (1T,2k)) is the same warning; a message that
    merely holds the changed token, or too little of the line around it, is left as it is."""
    st = pm.Statement("p.md", 3, r"\(\(8,m\).*")
    mu = pm.Mutant(st, 8, "T", "1T")
    original, changed = "((8,m),(T,2k)):((2T,SBO),(1,T))", "((8,m),(1T,2k)):((2T,SBO),(1,T))"
    assert changed[mu.col:mu.col + 2] == "1T"
    said = "K-major layout ((8,m),(1T,2k)):((2T,SBO),(1,T)) maps two cells to one offset"
    assert pm.quoted_back(said, changed, original, mu) == said.replace(changed, original)
    assert pm.quoted_back("k = 1T", changed, original, mu) == "k = 1T"
    assert pm.quoted_back("nothing quoted", changed, original, mu) == "nothing quoted"
