"""A doc page's specs are built from the ingested sections directly (issue 22 item 1).

``page_spec`` feeds a section's tables (``verify.catalog.tables``) to the spec reader with page positions:
no TOML text in between, no positions patched in by id afterwards.  ``ingest --out`` writes the same tables
as TOML, and reading that file gives the same layouts (only where their text is differs).
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from verify.catalog import spec as spec_module
from verify.catalog.emit import emit_toml
from verify.catalog.pages import IngestError, ingest, page_spec
from verify.catalog.spec import load_spec_text
from verify.catalog.tables import as_read
from verify.cli import main

ROOT = Path(__file__).resolve().parents[1]
PAGE_8 = "9-7-14-5-8-matrix-fragments-for-mma-m16n8k16-with-floating-point-type.md"


def _fragment_pages(docs: Path) -> list[Path]:
    return sorted(docs.glob("9-7-14-5-*.md")) + sorted(docs.glob("9-7-14-6-2-*.md"))


def _where_free(lay):
    return dataclasses.replace(lay, provenance=dataclasses.replace(lay.provenance, spec_path="", text_map=(),
                                                                  formula_line=0))


def test_page_specs_equal_the_spec_files_ingest_writes(docs_dir):
    """Every section of every fragment page: the direct build and the reading of the emitted spec file give
    the same spec, and the direct one carries the page positions ingest found (no patching by id)."""
    sections = 0
    for page in _fragment_pages(docs_dir):
        for sec in ingest([page], [docs_dir]).sections:
            built = [fr for fr in sec.fragments if fr.formula]
            if not built:
                continue
            sections += 1
            name = sec.name + ".toml"
            direct, read = page_spec(sec, name), load_spec_text(emit_toml(sec), name)
            assert [_where_free(x) for x in direct.layouts] == [_where_free(x) for x in read.layouts], name
            assert direct.source == read.source and (direct.instruction, direct.shape) == (read.instruction, read.shape)
            assert [(f.layout, f.message, f.expected) for f in direct.syntax_findings] == \
                   [(f.layout, f.message, f.expected) for f in read.syntax_findings]
            by_id = {fr.layout_id: fr for fr in built}
            for lay in direct.layouts:
                fr = by_id[lay.doc_id]
                assert (lay.provenance.spec_path, lay.provenance.text_map, lay.provenance.formula_line) == (fr.page or sec.page, fr.where, fr.formula_line)
            for f in direct.syntax_findings:
                assert (f.line, f.col) == by_id[f.layout].syntax_error[:2]
            assert direct.path == direct.page == sec.page
    assert sections >= 15


def test_a_page_spec_is_built_without_spec_text(docs_dir, monkeypatch):
    """No TOML is written or parsed to build a page's spec (the text is for ``ingest --out`` only)."""
    sec = ingest([docs_dir / PAGE_8], [docs_dir]).sections[0]

    def refuse(*a, **k):
        raise AssertionError("a page's spec went through spec text")
    monkeypatch.setattr(spec_module, "_load_spec_text", refuse)
    monkeypatch.setattr(spec_module, "parse_toml", refuse)
    monkeypatch.setattr("verify.catalog.emit.emit_toml", refuse)
    spec = page_spec(sec, sec.name + ".toml")
    assert [lay.id for lay in spec.layouts] == ["mma.m16n8k16.A.f16_bf16", "mma.m16n8k16.A.f64@corrected",
                                                "mma.m16n8k16.B.f16_bf16", "mma.m16n8k16.B.f64",
                                                "mma.m16n8k16.float.C.f64", "mma.m16n8k16.float.C.f32",
                                                "mma.m16n8k16.float.C.f16"]
    assert spec.syntax_findings[0].layout == "mma.m16n8k16.A.f64"
    assert (spec.syntax_findings[0].line, spec.syntax_findings[0].col) == (73, 41)


def test_what_the_reader_refuses_is_reported_on_the_row_or_heading(docs_dir):
    sec = ingest([docs_dir / PAGE_8], [docs_dir]).sections[0]
    fr = sec.fragments[1]
    bad = dataclasses.replace(sec, fragments=(sec.fragments[0], dataclasses.replace(
        fr, row=dataclasses.replace(fr.row, registers=300)), *sec.fragments[2:]))
    with pytest.raises(IngestError) as e:
        page_spec(bad, sec.name + ".toml")
    assert e.value.one_line() == (f"{sec.page}:{fr.row.line}:1: error: section {sec.number}: "
                                  "'registers' = 300 is out of range (1..256)")
    with pytest.raises(IngestError) as e:
        page_spec(dataclasses.replace(sec, instruction="mmx"), sec.name + ".toml")
    assert e.value.one_line() == f"{sec.page}:{sec.line}:1: error: section {sec.number}: unknown instruction 'mmx'"


def test_a_page_the_reader_refuses_is_one_line_and_exit_2(tmp_path, docs_dir, capsys):
    text = (docs_dir / PAGE_8).read_text(encoding="utf-8")
    old = "containing four `.f16x2` registers, with each register containing two `.f16` / `.bf16` elements from the matrix A"
    assert old in text
    page = tmp_path / PAGE_8
    page.write_text(text.replace(old, old.replace("four", "300")), encoding="utf-8")
    line = text[:text.index(old)].count("\n") + 1
    assert main(["check", str(page)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err == f"{page}:{line}:1: error: section 9.7.14.5.8: 'registers' = 300 is out of range (1..256)\n"


@pytest.mark.parametrize("value, read", [
    ("row = a\ncol = b", "row = a\ncol = b\n"),      # a block: its last newline comes back
    ("one line", "one line"),                       # a quoted string
    ("has ''' in it\nx", "has ''' in it\nx"),        # quoted: no block can hold it
    ("tab\there\x01\nx", "tab\there\x01\nx"),       # a control character: quoted
    (("f16", "bf16"), ["f16", "bf16"]),
    ({"kept": 2, "note": "a\nb"}, {"kept": 2, "note": "a\nb\n"}),
    (7, 7), (True, True),
])
def test_as_read_is_what_reading_the_emitted_toml_gives(value, read):
    from verify.catalog.emit import _value
    from verify.catalog.spec import parse_toml
    assert as_read(value) == read == parse_toml("x.toml", f"x = {_value(value)}\n")["x"]


def test_the_formula_is_read_back_as_a_block():
    from verify.catalog.emit import _multiline
    from verify.catalog.spec import parse_toml
    for f in ("row = a", "row = a\ncol = b"):
        assert as_read(f, block=True) == parse_toml("x.toml", f"x = {_multiline(f)}\n")["x"] == f + "\n"


def test_a_page_is_judged_by_the_bundled_specs_that_state_its_layouts(docs_dir):
    """Only the bundled specs that state a layout of the page are built (no formula of the others is parsed),
    and every page spec is judged exactly as by the whole bundled set."""
    from verify.catalog import bundled, review
    from verify.catalog.pages import reviewed_specs
    from verify.catalog.review import Reviewed
    from verify.catalog.spec import load_specs
    whole = Reviewed.of(load_specs([bundled.resolve().path]))
    judged = 0
    for page in _fragment_pages(docs_dir):
        built = [page_spec(sec, sec.name + ".toml") for sec in ingest([page], [docs_dir]).sections]
        some = reviewed_specs(None, built)
        assert len(some) < len(load_specs([bundled.resolve().path])) // 4, page.name
        part = Reviewed.of(some)
        for spec in built:
            assert review.apply(spec, part) == review.apply(spec, whole), page.name
            judged += bool(spec.layouts)
    assert judged >= 15


def test_fragment_ids_are_the_ids_the_reader_gives():
    from verify.catalog import bundled
    from verify.catalog.spec import fragment_ids, load_spec_file, spec_files
    for path in spec_files([bundled.resolve().path]):
        spec = load_spec_file(path)
        assert fragment_ids(path) == {x.doc_id for x in spec.layouts} | {f.layout for f in spec.syntax_findings}, path


def test_bad_against_specs_are_still_read_in_full(tmp_path, docs_dir, capsys):
    """``--against`` specs are all read: a bad one is bad input even where the page states none of its layouts."""
    bad = tmp_path / "bad.toml"
    bad.write_text('schema = 1\n[source]\nsection = "1"\n[instruction]\nname = "mma"\nshape = "m8n8k4"\n'
                   '[[fragment]]\noperand = "A"\ntypes = ["f16"]\nregisters = 2\nregister_type = "f16x2"\n'
                   'elements_per_register = 2\nformula = "row = lane +\\ncol = i"\n', encoding="utf-8")
    assert main(["check", "--against", str(bad), str(docs_dir / PAGE_8)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"{bad}:") and err.count("\n") == 1


def test_ingest_out_writes_the_committed_generated_specs(tmp_path, docs_dir, capsys):
    """``ingest --out`` (the one writer of spec text) writes every committed generated spec byte for byte."""
    pages = [str(p) for p in _fragment_pages(docs_dir)]
    assert main(["ingest", *pages, "--docs", str(docs_dir), "--out", str(tmp_path), "--findings", "none",
                 "--no-check"]) == 0
    capsys.readouterr()
    generated = [p for p in sorted((ROOT / "specs").glob("*.toml"))
                 if p.read_text(encoding="utf-8").startswith("# Generated by `ptx-verify ingest`")]
    assert len(generated) >= 10
    for committed in generated:
        assert (tmp_path / committed.name).read_text(encoding="utf-8") == committed.read_text(encoding="utf-8"), \
            committed.name
