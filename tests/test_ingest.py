"""Ingest: doc pages -> spec TOML.  Reads NVIDIA's pages from ../shared (never copied here)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from verify.catalog.docpage import parse_page

from verify.catalog.page_model import Code, Table
from verify.catalog.emit import emit_toml
from verify.catalog.ingest import IngestFinding, ingest_pages, ingest_text
from verify.catalog.pages import specs_from_pages
from verify.catalog.spec import load_spec_text, load_specs

from conftest import cli

ROOT = Path(__file__).resolve().parents[1]
DOCS = Path(os.environ.get("PTX_DOCS_DIR", ROOT.parent / "shared" / "ptx-isa-9.0"))
SEEDS = Path(os.environ.get("PTX_SEEDS_DIR", ROOT.parent / "shared" / "seeds"))

needs_docs = pytest.mark.skipif(not DOCS.is_dir(), reason=f"PTX ISA pages not found at {DOCS} (set PTX_DOCS_DIR)")
needs_seeds = pytest.mark.skipif(not SEEDS.is_dir(), reason=f"seed excerpts not found at {SEEDS} (set PTX_SEEDS_DIR)")


def fragment_pages() -> list[Path]:
    return sorted(DOCS.glob("9-7-14-5-*.md")) + sorted(DOCS.glob("9-7-14-6-2-*.md"))


def reference_pages() -> list[Path]:
    """Every page of the doc directory: what ``--docs DIR`` names, so that a page given alone finds the
    sections it refers to and the parent page that gives its anchor."""
    return sorted(DOCS.glob("*.md"))


def seeds() -> list[Path]:
    return sorted(SEEDS.glob("00*.txt"))


@needs_docs
def test_every_fragment_page_ingests_to_loadable_specs() -> None:
    pages = fragment_pages()
    assert pages
    for page in pages:
        for name, text in specs_from_pages([page], [DOCS]):
            spec = load_spec_text(text, name)
            assert spec.layouts, name
            assert all(lay.provenance.source.line > 0 for lay in spec.layouts)


@needs_docs
def test_all_pages_sections_and_fragments() -> None:
    res = ingest_pages(fragment_pages())
    numbers = [s.number for s in res.sections]
    assert numbers == sorted(set(numbers), key=lambda n: tuple(map(int, n.split("."))))
    # 9.7.14.5.1 .. .13 and 9.7.14.6.2.1 .. .8
    assert len(numbers) == 21
    for s in res.sections:
        assert s.fragments, s.number
        for f in s.fragments:
            assert f.formula_line > 0
            assert f.row.registers and f.row.register_type and f.row.per_register
    # ids are unique across the whole catalog
    ids = [lay.id for name, text in res.specs() for lay in load_spec_text(text, name).layouts]
    assert len(ids) == len(set(ids))


@needs_docs
def test_same_input_same_bytes() -> None:
    pages = fragment_pages()
    a = ingest_pages(pages).specs()
    assert a == ingest_pages(pages).specs()
    for page in pages[:6]:
        assert specs_from_pages([page]) == specs_from_pages([page])
    b = ingest_pages(list(reversed(pages))).specs()
    assert sorted(n for n, _ in a) == sorted(n for n, _ in b)


@needs_docs
def test_m16n8k8_fields() -> None:
    page = next(DOCS.glob("9-7-14-5-7-*.md"))
    (sec,) = ingest_pages([page], reference_pages()).sections
    assert (sec.instruction, sec.shape, sec.number) == ("mma", "m16n8k8", "9.7.14.5.7")
    assert sec.anchor == "warp-level-matrix-fragment-mma-1688"  # from the parent page's link
    got = {(f.operand, f.types): (f.row.registers, f.row.register_type, f.row.per_register) for f in sec.fragments}
    assert got[("A", ("f16", "bf16"))] == (2, "f16x2", 2)
    assert got[("A", ("tf32",))] == (4, "b32", 1)
    assert got[("B", ("f16", "bf16"))] == (1, "f16x2", 2)       # "a single .f16x2 register"
    assert got[("C", ("f32",))] == (4, "f32", 1)                # "four .f32 registers", list spans rows
    a = next(f for f in sec.fragments if f.operand == "A" and f.types == ("f16", "bf16"))
    assert a.formula_line == 26 and a.figures == ("mma-1688-A-f16",)
    assert a.formula.splitlines()[0] == "groupID = %laneid >> 2"


@needs_docs
def test_sparse_fragment_fields() -> None:
    page = next(DOCS.glob("9-7-14-6-2-6-*.md"))
    (sec,) = ingest_pages([page], reference_pages()).sections
    assert sec.instruction == "mma.sp" and sec.shape == "m16n8k64"
    a = [f for f in sec.fragments if f.operand == "A"]
    assert [f.types for f in a] == [("u8", "s8"), ("e4m3", "e5m2", "e3m2", "e2m3", "e2m1")]
    for f in a:
        assert (f.rows, f.cols) == (16, 32)
        sp = dict(f.sparse)
        assert (sp["kept"], sp["chunk"]) == (2, 4)
        # the metadata layout is derived (CuTe), and says so
        assert sp["selectors"] == [0] and "CUTLASS" in sp["metadata_derived"]
        assert "[firstcol ... lastcol]" in f.formula and "firstcol = threadID_in_group * 8" in f.formula
    assert a[1].row.element_bits == 8  # sub-byte floats packed four to a .b32 here
    assert any("4 non-zero" in stmt or "non-zero" in stmt for _, stmt in sec.sparsity)
    # C and D "same as" the dense m16n8k16 integer section: derived, said so
    c = [f for f in sec.fragments if f.operand == "C"]
    assert c and all(f.derived.startswith("same as 9.7.14.5.9 per the doc's reference") for f in c)


@needs_docs
def test_sparse_kept_chunk_per_width() -> None:
    want = {"6-2-1": (2, 4), "6-2-2": (2, 4), "6-2-4": (1, 2), "6-2-7": (4, 8), "6-2-8": (4, 8)}
    for key, kc in want.items():
        (sec,) = ingest_pages([next(DOCS.glob(f"9-7-14-{key}-*.md"))]).sections
        for f in sec.fragments:
            if f.operand == "A":
                sp = dict(f.sparse)
                assert (sp["kept"], sp["chunk"]) == kc, key


@needs_seeds
def test_every_seed_ingests() -> None:
    for seed in seeds():
        specs = specs_from_pages([seed])
        assert specs, seed
        for name, text in specs:
            load_spec_text(text, name)
            assert f'seed = "{seed.name}"' in text


@needs_seeds
def test_flattened_seed_structure() -> None:
    page = parse_page((SEEDS / "002_cc1e68b80931eb9b.txt").read_text(encoding="utf-8"), "002.txt")
    assert page.format == "flat"
    numbers = [s.number for s in page.sections]
    assert "9.7.14.5.8" in numbers and "9.7.14.5.9" in numbers
    sec = next(s for s in page.sections if s.number == "9.7.14.5.9")
    assert sec.heading.line == 88  # glued onto the end of a formula line
    codes = [b for b in sec.blocks if isinstance(b, Code)]
    assert codes[0].lines[-1].text.endswith("i = {0,..,7}")  # "Multiplicand B:" split off
    tables = [b for b in sec.blocks if isinstance(b, Table)]
    assert [len(t.rows) for t in tables] == [2, 2, 3]


def test_ingest_text_minimal_page() -> None:
    page = "\n".join([
        "##### 1.2.3. Matrix Fragments for mma.m8n8k4 with .f64 type",
        "* Multiplicand A:",
        "",
        "  | .atype | Fragment | Elements (low to high) |",
        "  | --- | --- | --- |",
        "  | `.f64` | containing two `.f64` registers, containing two `.f64` elements. | a0, a1 |",
        "",
        "  ```",
        "  row = %laneid >> 2",
        "  col = (%laneid % 4) * 2 + i   for ai where i = {0, 1}",
        "  ```",
    ])
    res = ingest_text(page, "mini.md")
    (sec,) = res.sections
    (f,) = sec.fragments
    assert (f.row.registers, f.row.per_register, f.formula_line) == (2, 1, 9)
    text = emit_toml(sec)
    spec = load_spec_text(text, "mini.toml")
    (lay,) = spec.layouts
    assert lay.id == "mma.m8n8k4.A.f64" and lay.provenance.source.line == 9
    # 8 x 4 matrix but 64 cells named: a count erratum found from the text alone
    kinds = {x.kind for x in res.findings}
    assert "count-matrix" in kinds and 'expect = { count = "refuted"' in text


def test_html_page() -> None:
    html = """<html><body>
<section id="frag-x"><h5>1.2.4. Matrix Fragments for mma.m8n8k16<a class="headerlink" href="#frag-x">#</a></h5>
<ul><li><p>Multiplicand A:</p>
<table><thead><tr><th>.atype</th><th>Fragment</th><th>Elements (low to high)</th></tr></thead>
<tbody><tr><td>.s8</td><td>containing a single .b32 register, containing four .s8 elements</td><td>a0, a1, a2, a3</td></tr></tbody></table>
<img src="_images/mma-8816-A-i8.png"/>
<pre>groupID = %laneid &gt;&gt; 2
row = groupID
col = (%laneid % 4) * 4 + i   for ai where i = {0,..,3}</pre>
</li></ul></section></body></html>"""
    res = ingest_text(html, "page.html")
    (sec,) = res.sections
    assert sec.anchor == "frag-x" and sec.number == "1.2.4"
    (f,) = sec.fragments
    assert f.formula.splitlines()[0] == "groupID = %laneid >> 2" and f.formula_line == 7
    assert f.figures == ("mma-8816-A-i8",)
    load_spec_text(emit_toml(sec), "page.toml")
    assert not [x for x in res.findings if x.severity != "info"]


def test_finding_json() -> None:
    f = IngestFinding("count-list", "error", "p.md", 3, 4, "words", "msg", (("listed", 4),), "1.2", "B", ("tf32",))
    j = f.to_json()
    assert j["witness"] == {"listed": 4} and j["line"] == 3 and j["types"] == ["tf32"]
    with pytest.raises(Exception):
        f.line = 5


def test_cli_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.md"
    bad.write_bytes(b"# x\n\xff\n")
    rc, _, err = cli(capsys, "ingest", str(bad), "--out", str(tmp_path / "out"))
    assert rc == 2
    assert err.strip().splitlines() == [f"{bad}:2:1: error: byte 0xff is not valid UTF-8"]
    assert not (tmp_path / "out").exists()
    rc, _, err = cli(capsys, "ingest", str(tmp_path / "missing.md"))
    assert rc == 2 and err.count("\n") == 1 and ":1:1: error:" in err


@needs_docs
def test_cli_writes_specs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    page = next(DOCS.glob("9-7-14-5-7-*.md"))
    rc, _, err = cli(capsys, "ingest", str(page), "--out", str(tmp_path), "--findings", "none")
    assert rc == 0, err
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files == ["mma.m16n8k8.toml"]
    assert load_specs([tmp_path])


@needs_docs
def test_committed_catalog_matches_ingest() -> None:
    """specs/ written by ingest are what ingest gives today (regenerate with `ptx-verify ingest`)."""
    for page in fragment_pages():
        for name, text in specs_from_pages([page], [DOCS]):
            committed = ROOT / "specs" / name
            if not committed.exists():
                continue
            old = committed.read_text(encoding="utf-8")
            if "Generated by `ptx-verify ingest`" in old and f'page = "{page.name}"' in old:
                assert old == text, name
