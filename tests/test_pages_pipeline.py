"""Doc pages through one pipeline, judged the same wherever they are: which pages take part is what the
command line names (no environment variable, no directory search), a section given twice is judged
in every copy or refused, every `error` the text has fails the run unless the reviewed specs record
it, ``diff`` of specs against pages tells what pages cannot state from what they dropped, and an empty
observations directory is bad input."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, SPECS, cli

P58 = "9-7-14-5-8-matrix-fragments-for-mma-m16n8k16-with-floating-point-type.md"
P623 = "9-7-14-6-2-3-matrix-fragments-for-sparse-mma-m16n8k16-with-tf32-floating-point-type.md"
P624 = "9-7-14-6-2-4-matrix-fragments-for-sparse-mma-m16n8k8-with-tf32-floating-point-type.md"


def copy_page(docs_dir: Path, name: str, to: Path, old: str = "", new: str = "", after: str = "") -> Path:
    """A copy of a real page in ``to`` (with one change when ``old`` is given)."""
    to.mkdir(parents=True, exist_ok=True)
    text = (docs_dir / name).read_text(encoding="utf-8")
    if old:
        start = text.index(after) if after else 0
        assert old in text[start:], old
        text = text[:start] + text[start:].replace(old, new, 1)
    out = to / name
    out.write_text(text, encoding="utf-8")
    return out


def run_cli(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``python -m verify ARGS`` in a fresh process with exactly the environment ``env`` (plus PATH)."""
    full = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(ROOT), **env}
    return subprocess.run([sys.executable, "-m", "verify", *args], cwd=cwd, env=full, capture_output=True,
                          text=True, timeout=300)


# ----------------------------------------------------------------------------- (a) which pages take part

def test_a_pages_verdict_does_not_depend_on_the_environment(tmp_path, docs_dir):
    """A sparse page whose B and C are "the same as in case of" another section: alone it cannot state
    them, with or without PTX_DOCS_DIR (which used to be searched for sibling pages)."""
    page = copy_page(docs_dir, P623, tmp_path / "alone")
    args = ["check", page.name, "--format", "json", "--jobs", "1"]
    plain = run_cli(args, page.parent, {})
    with_env = run_cli(args, page.parent, {"PTX_DOCS_DIR": str(docs_dir.resolve())})
    assert plain.returncode == with_env.returncode == 1, (plain.stderr, with_env.stderr)
    assert plain.stdout == with_env.stdout and plain.stderr == with_env.stderr
    data = json.loads(plain.stdout)
    dropped = [f for f in data["findings"] if f["check"] == "reviewed" and not f["as_expected"]]
    assert [f["layout"] for f in dropped] == ["mma.sp.m16n8k16.tf32.C.f32"]
    assert "--docs" in dropped[0]["message"]


def test_no_directory_beside_the_page_is_searched(tmp_path, docs_dir, capsys):
    """A ``ptx-isa-*`` directory next to the page's directory (searched before) changes nothing; the
    same page in the full doc directory is judged as the copy alone is.  (In process: the paths are
    absolute; the environment's own test above runs fresh processes.)"""
    beside = tmp_path / "ptx-isa-9.0"
    shutil.copytree(docs_dir, beside)
    page = copy_page(docs_dir, P623, tmp_path / "mine")
    near = cli(capsys, "check", str(page), "--format", "json", "--jobs", "1")
    far = tmp_path / "elsewhere"
    shutil.copytree(page.parent, far)
    alone = cli(capsys, "check", str(far / P623), "--format", "json", "--jobs", "1")
    assert near[0] == alone[0] == 1
    assert near[1].replace("mine/", "elsewhere/") == alone[1]
    in_docs = cli(capsys, "check", str(beside / P623), "--format", "json", "--jobs", "1")
    assert in_docs[0] == 1 and in_docs[1].replace("ptx-isa-9.0/", "mine/") == near[1]


def test_docs_names_the_pages_references_resolve_in(tmp_path, docs_dir, capsys):
    page = copy_page(docs_dir, P623, tmp_path / "alone")
    rc, out, err = cli(capsys, "check", str(page), "--docs", str(docs_dir), "--format", "json")
    assert rc == 0, err
    data = json.loads(out)
    assert "mma.sp.m16n8k16.tf32.C.f32" in [lay["id"] for lay in data["layouts"]]
    assert not [f for f in data["findings"] if not f["as_expected"]]
    # reference pages are read, never judged: only the page's own layouts are checked
    assert {lay["id"].split(".")[2] for lay in data["layouts"]} == {"m16n8k16"}
    rc, out, err = cli(capsys, "ingest", str(page), "--docs", str(docs_dir), "--out", str(tmp_path / "specs"))
    assert rc == 0, err
    assert [p.name for p in (tmp_path / "specs").iterdir()] == ["mma.sp.m16n8k16.tf32.toml"]
    rc, out, err = cli(capsys, "check", str(page), "--docs", str(tmp_path / "nowhere"))
    assert rc == 2 and out == "" and err.strip() == f"{tmp_path / 'nowhere'}:1:1: error: no such file or directory"


# ----------------------------------------------------------------------------- (2) a section given twice

P56 = "9-7-14-5-6-matrix-fragments-for-mma-m16n8k4.md"
C_F32_ROW = ("containing four `.f32` elements from the matrix C", "containing two `.f32` elements from the matrix C")


def page_as_html(md: Path) -> str:
    """The page saved as HTML: the same headings, text, tables, formulas and figures (from the parsed
    markdown, so that both copies state the same)."""
    import html

    from verify.catalog.docpage import read_page

    from verify.catalog.page_model import Caption, Code, Image, Table, Text
    esc = html.escape
    out = ["<html><body>"]
    for sec in read_page(md).sections:
        h = sec.heading
        out.append(f'<section id="{esc(h.anchor)}">' if h.anchor else "<section>")
        out.append(f"<h5>{esc(h.number)}. {esc(h.title)}</h5>")
        for b in sec.blocks:
            if isinstance(b, Text):
                tag = "li" if b.bullet else "p"
                out.append(f"<{tag}>{esc(b.text)}" + "".join(f'<a href="{esc(t)}"></a>' for t in b.links) + f"</{tag}>")
            elif isinstance(b, Caption):
                out.append(f'<figcaption>{esc(b.text)}<a href="#{esc(b.anchor)}"></a></figcaption>')
            elif isinstance(b, Image):
                out.append(f'<img src="{esc(b.src)}"/>')
            elif isinstance(b, Table):
                head = "".join(f"<th>{esc(c)}</th>" for c in b.header)
                rows = "".join("<tr>" + "".join(f"<td>{esc(c.text)}</td>" for c in r.cells) + "</tr>" for r in b.rows)
                out.append(f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>")
            elif isinstance(b, Code):
                out.append("<pre>" + esc(b.text) + "</pre>")
        out.append("</section>")
    return "\n".join(out + ["</body></html>"]) + "\n"


def test_a_page_saved_as_md_and_html_is_judged_once(tmp_path, docs_dir, capsys):
    md = copy_page(docs_dir, P56, tmp_path / "both")
    md.with_suffix(".html").write_text(page_as_html(md), encoding="utf-8")
    rc, out, err = cli(capsys, "check", str(md.parent), "--format", "json")
    assert rc == 0, err
    both = json.loads(out)
    rc, out, _ = cli(capsys, "check", str(md), "--format", "json")
    alone = json.loads(out)
    assert rc == 0 and [x["id"] for x in both["layouts"]] == [x["id"] for x in alone["layouts"]]
    assert [x["checks"] for x in both["layouts"]] == [x["checks"] for x in alone["layouts"]]


@pytest.mark.parametrize("changed", ["html", "md"])
def test_a_page_saved_as_md_and_html_that_differ_is_refused(tmp_path, docs_dir, capsys, changed):
    """Whichever of the two is changed (the .html sorts first), the run is refused at the difference,
    naming both files; before, the first copy was judged and the second never read."""
    md = copy_page(docs_dir, P56, tmp_path / "both", *(C_F32_ROW if changed == "md" else ()))
    html = md.with_suffix(".html")
    html.write_text(page_as_html(copy_page(docs_dir, P56, tmp_path / "changed", *C_F32_ROW) if changed == "html"
                                 else docs_dir / P56), encoding="utf-8")
    rc, out, err = cli(capsys, "check", str(md.parent))
    assert rc == 2 and out == "", err
    [line] = err.strip().splitlines()
    assert line.startswith(f"{md}:") and ": error: section 9.7.14.5.6 is given twice and the copies differ" in line
    assert str(html) in line and "count-words" in line and "Give one copy of each section" in line


@pytest.mark.parametrize("copy_name", ["9-7-14-5-6-copy.md", "0-copy-first.md"])
def test_a_page_and_a_changed_copy_of_it_are_refused(tmp_path, docs_dir, capsys, copy_name):
    """A page followed (or preceded) by a changed copy of itself: refused whichever file name sorts first;
    the changed copy alone fails, so refusing hides nothing."""
    page = copy_page(docs_dir, P56, tmp_path / "pages")
    changed = copy_page(docs_dir, P56, tmp_path / "changed", *C_F32_ROW)
    copy = page.parent / copy_name
    shutil.copyfile(changed, copy)
    first, second = sorted([page, copy])
    for command in (["check", str(page.parent)], ["ingest", str(page.parent), "--out", str(tmp_path / "specs")],
                    ["check", str(page), str(copy)], ["check", str(copy), str(page)]):
        rc, out, err = cli(capsys, *command)
        assert rc == 2 and out == "", (command, err)
        [line] = err.strip().splitlines()
        assert "is given twice and the copies differ" in line and str(page) in line and str(copy) in line, line
    assert not (tmp_path / "specs").exists()
    rc, out, err = cli(capsys, "check", str(first.parent))
    assert err.strip().startswith(f"{second}:")
    assert cli(capsys, "check", str(changed))[0] == 1
    # the same page twice is the same statement: judged once
    shutil.copyfile(page, copy)
    rc, out, err = cli(capsys, "check", str(page.parent), "--format", "json")
    assert rc == 0 and len(json.loads(out)["layouts"]) == 6, err


def test_parent_pages_repeat_their_sections_and_are_judged_once(docs_dir):
    """The doc directory gives each mma section on its own page and again on its parent pages: the copies
    are the same statement, each section is one spec."""
    from verify.catalog.pages import ingest
    res = ingest([docs_dir])
    numbers = [s.number for s in res.sections]
    assert len(numbers) == len(set(numbers)) == 21  # 13 mma sections, 8 mma.sp
    assert all(Path(s.page).name.startswith(s.number.replace(".", "-") + "-") for s in res.sections)


# ----------------------------------------------------------------------------- (b) errors in the text fail the run

PLANTED_TEXT_ERRATA = [
    # a C row whose words say fewer elements than the four-element list (found by benchmarks/fuzz.py; the
    # register facts stay the same, as the element width gives one element per register)
    ("9-7-14-5-6-matrix-fragments-for-mma-m16n8k4.md", "containing four `.f32` elements from the matrix C",
     "containing two `.f32` elements from the matrix C", "mma.m16n8k4.C.f32", "count-words", 134),
    ("9-7-14-5-2-matrix-fragments-for-mma-m8n8k4-with-f64-floating-point-type.md",
     "containing two `.f64` elements from the matrix C", "containing one `.f64` elements from the matrix C",
     "mma.m8n8k4.C.f64", "count-words", 57),
    ("9-7-14-5-5-matrix-fragments-for-mma-m8n8k128.md", "containing two `.s32` elements from the matrix C",
     "containing one `.s32` elements from the matrix C", "mma.m8n8k128.C.s32", "count-words", 68),
    ("9-7-14-5-13-matrix-fragments-for-mma-m16n8k256.md", "containing four `.s32` elements from the matrix C",
     "containing two `.s32` elements from the matrix C", "mma.m16n8k256.C.s32", "count-words", 81),
    # an element of B in A's list: the names still number a0..a7 (the .f64 A formula is a known syntax erratum)
    (P58, "element from the matrix A. | a0, a1, a2,", "element from the matrix A. | a0, b1, a2,", "mma.m16n8k16.A.f64",
     "element-list-prefix", 47),
]


@pytest.mark.parametrize("page,old,new,layout,kind,line", PLANTED_TEXT_ERRATA,
                         ids=[p[3] + ":" + p[4] for p in PLANTED_TEXT_ERRATA])
def test_a_new_error_in_the_text_fails_the_run(tmp_path, docs_dir, capsys, page, old, new, layout, kind, line):
    rc, out, _ = cli(capsys, "check", str(docs_dir / page), "--format", "json")
    assert rc == 0 and not [f for f in json.loads(out).get("doc_findings", []) if f["kind"] == kind and f["line"] == line]
    planted = copy_page(docs_dir, page, tmp_path, old, new)
    rc, out, _ = cli(capsys, "check", str(planted), "--format", "json")
    data = json.loads(out)
    [error] = [f for f in data["doc_findings"] if f["severity"] == "error" and f["line"] == line]
    assert error["kind"] == kind
    assert rc == 1 and not data["as_expected"]
    [f] = [f for f in data["findings"] if not f["as_expected"]]
    assert (f["layout"], f["check"], f["status"], f["expected"]) == (layout, "doc_text", "refuted", "proved")
    assert f["counterexample"] == {"file": str(planted), "line": line, "col": error["column"], "kind": kind}
    assert f["message"].startswith(f"{planted}:{line}:{error['column']}: {kind}: ")
    rc, out, _ = cli(capsys, "check", str(planted))
    assert rc == 1 and f"{layout}" in out and "doc_text:FAIL [expected proved]" in out
    # ingest judges the pages as check does
    rc, _, err = cli(capsys, "ingest", str(planted), "--out", str(tmp_path / "specs"))
    assert rc == 1 and "1 unexpected finding" in err


def test_errors_the_reviewed_specs_record_are_known(docs_check):
    """The real pages' own text errors (element lists, counts) are errata the reviewed specs record:
    no doc_text finding, exit 0; the same errors judged by specs that do not record them fail."""
    rc, data = docs_check
    errors = [f for f in data["doc_findings"] if f["severity"] == "error"]
    assert rc == 0 and len(errors) == 7 and not [f for f in data["findings"] if f["check"] == "doc_text"]


def test_an_error_is_known_only_to_specs_that_record_it(tmp_path, docs_dir, capsys):
    page = docs_dir / "9-7-14-5-9-matrix-fragments-for-mma-m16n8k16-with-integer-type.md"
    spec = (SPECS / "mma.m16n8k16.int.toml").read_text(encoding="utf-8")
    assert spec.count('expect = { elements = "refuted" }') == 2
    unrecorded = tmp_path / "mma.m16n8k16.int.toml"
    corrected_only = tmp_path / "corrected" / "mma.m16n8k16.int.toml"  # no expect, but the lists corrected
    corrected_only.parent.mkdir()
    corrected_only.write_text(spec.replace('expect = { elements = "refuted" }\n', ""), encoding="utf-8")
    rc, out, _ = cli(capsys, "check", str(page), "--against", str(corrected_only), "--format", "json")
    assert not [f for f in json.loads(out)["findings"] if f["check"] == "doc_text"]
    for fixed in ("b0, b1, b2, b3", "c0, c1, c2, c3"):  # the reviewer's corrections of the lists record them too
        spec = spec.replace(f'\n[fragment.corrected]\nelements = "{fixed}"\n', "\n", 1)
    unrecorded.write_text(spec.replace('expect = { elements = "refuted" }\n', ""), encoding="utf-8")
    rc, out, _ = cli(capsys, "check", str(page), "--against", str(unrecorded), "--format", "json")
    data = json.loads(out)
    bad = sorted((f["layout"], f["check"], f["counterexample"]["kind"]) for f in data["findings"]
                 if not f["as_expected"] and f["check"] == "doc_text")
    assert rc == 1 and bad == [("mma.m16n8k16.B.e4m3_e5m2", "doc_text", "element-list-punctuation"),
                               ("mma.m16n8k16.int.C.f16", "doc_text", "element-list-duplicate"),
                               ("mma.m16n8k16.int.C.f16", "doc_text", "element-list-gap")]


# ----------------------------------------------------------------------------- (U11) diff of specs against pages

def test_diff_of_specs_and_pages_of_one_release_is_empty(docs_dir, capsys):
    """The layouts the doc gives only as figures (wmma, ldmatrix, wgmma, tcgen05, block-scale selectors)
    are outside what pages state, not 'removed'; errata are text, which spec files do not have."""
    rc, out, err = cli(capsys, "diff", str(SPECS), str(docs_dir), "--format", "json")
    data = json.loads(out)
    assert rc == 0 and data["differs"] is False, err
    # 107 register fragments and the 30 shared-memory maps the pages state (Table 38's atoms, the canonical
    # layouts, the worked examples; 9.7.16.10.6's atoms)
    maps = [x for x in data["unchanged"] if ".shared." in x]
    assert not data["removed"] and not data["added"] and not data["changed"] and len(data["unchanged"]) == 137
    assert len(maps) == 30 and all(x.startswith(("wgmma.shared.", "tcgen05.shared.")) for x in maps)
    assert len(data["outside"]) == 156 and not any(x.startswith(("mma.m", "mma.sp.")) for x in data["outside"])
    assert data["errata_compared"] is False and not data["errata_added"]
    rc, out, _ = cli(capsys, "diff", str(docs_dir), str(SPECS))  # the other way round
    lines = out.splitlines()
    assert rc == 0 and lines[0].startswith("outside    156 layouts no doc page states") and "wmma" in lines[0]
    assert lines[-1] == ("137 unchanged, 0 changed, 0 added, 0 removed, 0 undecided, 156 outside what pages "
                         "state; errata in the text: not compared (one side is spec files)")


def test_diff_of_specs_and_pages_still_reports_what_pages_dropped(tmp_path, docs_dir, capsys):
    pages = tmp_path / "pages"
    pages.mkdir()
    for p in docs_dir.glob("9-7-14-[56]-*.md"):  # one page per section, 9.7.14.5.3 left out
        if len(re.findall(r"^#{1,6} 9\.", p.read_text(encoding="utf-8"), re.M)) == 1 and "-5-3-" not in p.name:
            shutil.copy(p, pages / p.name)
    shutil.copy(docs_dir / "1-3-ptx-isa-version-9-0.md", pages)  # the release the pages state: 9.0's facts apply
    rc, out, _ = cli(capsys, "diff", str(SPECS), str(pages), "--format", "json")
    data = json.loads(out)
    assert rc == 1 and data["differs"] and len(data["outside"]) == 156 + 9  # + tcgen05's 9 atoms (swizzles derived)
    # what the pages dropped: 9.7.14.5.3's fragments, and the wgmma shared-memory maps (9.7.15.5.1.2 not copied)
    assert [x for x in data["removed"] if ".shared." not in x] == [
        "mma.m8n8k16.A.u8_s8", "mma.m8n8k16.B.u8_s8", "mma.m8n8k16.C.s32"]
    assert len(data["removed"]) == 3 + 21 and all(x.startswith("wgmma.shared.") for x in data["removed"][3:])


def test_diff_of_two_spec_sets_has_nothing_outside(capsys):
    rc, out, _ = cli(capsys, "diff", str(SPECS), str(SPECS), "--format", "json")
    data = json.loads(out)
    assert rc == 0 and not data["outside"] and data["errata_compared"] is True and len(data["unchanged"]) == 217 + 84  # layouts + maps


# ----------------------------------------------------------------------------- (U13) observations

def test_an_empty_observations_directory_is_bad_input(tmp_path, capsys):
    """Checked against no observation, nothing would be confirmed: exit 2 before any work, one line."""
    empty = tmp_path / "observations"
    empty.mkdir()
    (empty / "notes.txt").write_text("not an observation\n", encoding="utf-8")
    rc, out, err = cli(capsys, "check", str(SPECS / "mma.m8n8k16.toml"), "--observations", str(empty))
    assert rc == 2 and out == ""
    assert err.strip() == f"{empty}:1:1: error: no observation files (*.json) in this directory " \
                          "(`ptx-verify confirm --out DIR` writes them)"
    from verify.hardware import kinds, observe
    with pytest.raises(observe.ObservationError):
        kinds.check_observations([], empty)


# ----------------------------------------------------------------------------- element lists are bounded

@pytest.mark.parametrize("text", ["a0, a1, …, a5000", "a0, a3000", "a0, …, a1000, a0, …, a1000"])
def test_an_element_list_is_never_expanded_beyond_the_bound(text):
    """Page text is untrusted: an element number or an ellipsis beyond MAX_ELEMENTS is a problem of the
    list, never a list that long (``a0, …, a99999999`` used to take minutes and memory)."""
    from verify.catalog.page_facts import parse_elements
    from verify.layout.elements import MAX_ELEMENTS
    el, problems = parse_elements(text, "a")
    assert len(el.names) <= MAX_ELEMENTS and "range" in el.problems
    assert [p for p in problems if p[0] == "range"]


def test_a_huge_element_number_on_a_page_is_a_text_erratum(tmp_path, docs_dir, capsys):
    page = copy_page(docs_dir, "9-7-14-5-3-matrix-fragments-for-mma-m8n8k16.md", tmp_path,
                     "| a0, a1, a2, a3 |", "| a0, a1, …, a99999999999 |")
    rc, out, _ = cli(capsys, "check", str(page), "--format", "json")
    data = json.loads(out)
    assert rc == 1
    kinds = {(f["layout"], f["counterexample"]["kind"]) for f in data["findings"] if f["check"] == "doc_text"}
    assert ("mma.m8n8k16.A.u8_s8", "element-list-range") in kinds


# ----------------------------------------------------------------------------- (d) one register arithmetic

def test_register_arithmetic_has_one_implementation():
    """Elements per thread and register packing are computed in ``verify.layout.types`` only; ingest (a
    table row's errata), the count and packing checks and the instruction's registers check call it."""
    import ast

    from verify.layout.types import elements_per_thread, packs
    assert elements_per_thread(16, 8, 32) == 4 and elements_per_thread(8, 4, 32) == 1
    assert elements_per_thread(16, 8, 3) is None
    assert packs("b32", 8) == 4 and packs("f16x2", 16) == 2 and packs("f64", 64) == 1
    assert packs("b32", 64) is None and packs("b32", 0) is None and packs("x7", 8) is None and packs(None, 8) is None
    divisors = {"ebits", "element_bits", "lanes", "lanes_per_group", "threads"}
    own = {}
    for rel in ("catalog/ingest.py", "checks/fragment.py", "checks/instruction.py"):
        tree = ast.parse((ROOT / "verify" / rel).read_text(encoding="utf-8"))
        own[rel] = [n.lineno for n in ast.walk(tree) if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mod)
                    and ({x.id for x in ast.walk(n.right) if isinstance(x, ast.Name)}
                         | {x.attr for x in ast.walk(n.right) if isinstance(x, ast.Attribute)}) & divisors]
    assert own == {k: [] for k in own}, own
