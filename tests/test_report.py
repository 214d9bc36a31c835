"""``ptx-verify report``: files, determinism, findings with counterexamples, SVG pictures, fixes."""
from __future__ import annotations

import dataclasses
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from verify import api
from verify.checks import fixes
from verify.checks import report_model
from verify.outputs import report_html, report_markdown, svg
from verify.cli import main
from verify.outputs.table import table_entries

from conftest import SPECS

SVG_NS = "{http://www.w3.org/2000/svg}"

MUTATED_A = "col =  (threadID_in_group * 3) + i"  # m8n8k16 A: collisions and holes; the fix is 3 -> 4
MUTATED_C = "col = (threadID_in_group * 3) + i"  # m8n8k16 C: elements outside the 8 x 8 matrix; 3 -> 2


def spec_paths() -> list[Path]:
    """Every bundled spec."""
    return sorted(SPECS.glob("*.toml"))


def tree(d: Path) -> dict[str, bytes]:
    return {str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def mutated_spec(tmp_path_factory: pytest.TempPathFactory) -> Path:
    text = (SPECS / "mma.m8n8k16.toml").read_text(encoding="utf-8")
    text = text.replace("col =  (threadID_in_group * 4) + i", MUTATED_A)
    text = text.replace("col = (threadID_in_group * 2) + i", MUTATED_C)
    assert MUTATED_A in text and MUTATED_C in text
    d = tmp_path_factory.mktemp("mutated")
    p = d / "mma.m8n8k16.mutated.toml"
    p.write_text(text, encoding="utf-8")
    return p


@pytest.fixture(scope="module")
def real_report(tmp_path_factory: pytest.TempPathFactory, bundled_report_dir) -> tuple[Path, Path, int, int]:
    """The session's report of the bundled specs, and an independent second run (every memoised
    verdict forgotten first) for the determinism test."""
    from verify.checks.fragment import clear_caches
    one, rc1 = bundled_report_dir
    clear_caches()
    two = tmp_path_factory.mktemp("real") / "two"
    rc2 = main(["report", *[str(p) for p in spec_paths()], "--out", str(two)])
    return one, two, rc1, rc2


@pytest.fixture(scope="module")
def mutated_report(tmp_path_factory: pytest.TempPathFactory, mutated_spec: Path) -> tuple[Path, int]:
    out = tmp_path_factory.mktemp("mut") / "rep"
    rc = main(["report", str(mutated_spec), "--out", str(out)])
    return out, rc


# ----------------------------------------------------------------------------- files

@pytest.mark.slow
def test_report_files_are_produced(real_report):
    one, _two, rc, _ = real_report
    assert rc == 0  # the bundled specs are as expected
    files = tree(one)
    assert "report.md" in files and "report.html" in files
    svgs = [k for k in files if k.startswith("svg/")]
    assert svgs, "every layout with a finding gets a picture"
    md = files["report.md"].decode()
    for rel in svgs:
        assert rel.replace("@", "%40") in md  # linked from the Markdown


@pytest.mark.slow
def test_report_is_deterministic(real_report):
    one, two, rc1, rc2 = real_report
    assert rc1 == rc2
    assert tree(one) == tree(two)


@pytest.mark.slow
def test_rewriting_in_place_is_byte_identical(real_report, tmp_path):
    one, _two, _rc, _ = real_report
    before = tree(one)
    assert main(["report", *map(str, spec_paths()), "--out", str(one)]) == 0
    assert tree(one) == before
    assert not [p for p in one.parent.iterdir() if p.name.startswith(".one.")], "temporary directories left"


@pytest.mark.slow
def test_html_is_self_contained(real_report):
    html = (real_report[0] / "report.html").read_text(encoding="utf-8")
    assert "<script" not in html and "<link" not in html and " src=" not in html
    urls = set(re.findall(r"https?://[^\s\"'<>)]+", html))
    assert urls <= {"http://www.w3.org/2000/svg"}
    # every picture is inlined; a condensed one's every-cell twin (.full.svg) is linked, not inlined
    pics = list((real_report[0] / "svg").iterdir())
    assert html.count("<svg") == len([p for p in pics if not p.name.endswith(".full.svg")])
    assert all(f'href="svg/{p.name}"' in html for p in pics if p.name.endswith(".full.svg"))


def test_every_finding_appears_with_its_counterexample(mutated_report, mutated_spec):
    out, rc = mutated_report
    assert rc == 1  # the mutations are not expected by the spec
    md = (out / "report.md").read_text(encoding="utf-8")
    html = (out / "report.html").read_text(encoding="utf-8")
    m = report_model.build(api.check_all(api.load([mutated_spec])))
    findings = [(f, e.layout) for e in m.entries for f in e.findings]
    assert {f.check for f, _ in findings} >= {"in_range", "injective", "surjective"}
    for f, lay in findings:
        lines = report_model.counterexample_lines(f, lay)
        assert lines
        assert report_markdown._md(f.message) in md and svg.esc(f.message) in html
        for line in lines:
            assert report_markdown._md(line) in md, line
            assert svg.esc(line) in html, line
    # the doc's words: the formula text as written
    assert MUTATED_A in md and svg.esc(MUTATED_A) in html
    # in doc terms: lane, element, cell
    assert re.search(r"lane \d+, element a\d, cell \(\d+, \d+\)", md)


def test_counterexamples_do_not_depend_on_solver_history(mutated_spec):
    """Z3's witnesses drift between calls in one process; the report's do not."""
    specs = api.load([mutated_spec])
    outs = {report_markdown.render_markdown(report_model.build(api.check_all(specs))) for _ in range(3)}
    assert len(outs) == 1
    md = outs.pop()
    # the first witnesses in (lane, i) and (row, col) order
    assert "lane 0, element a3, cell (0, 3)" in md and "lane 1, element a0, cell (0, 3)" in md
    assert "cell (0, 13): no lane holds it" in md


def test_constant_fixes_are_suggested(mutated_report):
    md = (mutated_report[0] / "report.md").read_text(encoding="utf-8")
    assert "in `col`, change 3 to 4" in md
    assert "+ col =  (threadID_in_group * 4) + i" in md
    assert "in `col`, change 3 to 2" in md


@pytest.mark.slow
def test_spec_correction_is_suggested(real_report):
    md = (real_report[0] / "report.md").read_text(encoding="utf-8")
    html = (real_report[0] / "report.html").read_text(encoding="utf-8")
    assert "mma.m16n8k16.A.f64@corrected" in md
    assert "(threadID_in_group) Otherwise" in md  # the corrected formula text, closing the parenthesis
    assert "The element list &#x27;b0, b1. b2. b3&#x27;" in html  # the erratum string, escaped


# ----------------------------------------------------------------------------- SVG

def _rects(root: ET.Element) -> list[ET.Element]:
    return list(root.iter(SVG_NS + "rect"))


@pytest.mark.slow
def test_svgs_are_well_formed(real_report, mutated_report):
    for d in (real_report[0], mutated_report[0]):
        files = sorted((d / "svg").glob("*.svg"))
        assert files
        for p in files:
            root = ET.parse(p).getroot()
            assert root.tag == SVG_NS + "svg"


def test_svg_marks_collisions_and_holes(mutated_report):
    root = ET.parse(mutated_report[0] / "svg" / "mma.m8n8k16.A.u8_s8.svg").getroot()
    marked = [r for r in _rects(root) if r.get("stroke") == svg.COLLISION and r.get("fill") == "none"]
    assert len(marked) == 24  # 8 rows x 3 columns hold two elements each
    titles = [r.find(SVG_NS + "title").text for r in marked]
    assert "(0, 6): T1:a3, T2:a0" in titles  # both owners listed
    texts = [t.text for t in root.iter(SVG_NS + "text")]
    assert texts.count("empty") == 24
    assert "T1:a3" in texts and "T2:a0" in texts


def test_svg_lists_elements_outside_the_matrix(mutated_report):
    root = ET.parse(mutated_report[0] / "svg" / "mma.m8n8k16.C.s32.svg").getroot()
    texts = [t.text or "" for t in root.iter(SVG_NS + "text")]
    assert any(t.startswith("outside the matrix (16)") for t in texts)
    assert "T3:c0 \u2192 (0, 9)" in texts


def test_svg_of_a_bijection_has_no_marks():
    lay = api.layout(api.load([SPECS / "mma.m8n8k16.toml"]), "mma.m8n8k16.A.u8_s8")
    text = svg.fragment_svg(lay, table_entries(lay), uid="t")
    root = ET.fromstring(text)
    assert not [r for r in _rects(root) if r.get("stroke") == svg.COLLISION and r.get("fill") == "none"]
    assert "empty" not in [t.text for t in root.iter(SVG_NS + "text")]
    assert svg.summary_counts(lay, table_entries(lay)) == {"shared": 0, "empty": 0, "outside": 0}


def test_svg_escapes_text():
    lay = api.layout_from_formula("row = %laneid >> 2\ncol = (%laneid % 4) * 2 + i", operand="C",
                                  rows=8, cols=8, elements=2)
    text = svg.fragment_svg(lay, table_entries(lay), title='<b>"x" & y</b>', uid="a&b")
    ET.fromstring(text)
    assert "&lt;b&gt;&quot;x&quot; &amp; y&lt;/b&gt;" in text


def test_svg_draws_each_mma_computation():
    lay = api.layout(api.load([SPECS / "mma.m8n8k4.f16.toml"]), "mma.m8n8k4.A.f16.row")
    root = ET.fromstring(svg.fragment_svg(lay, table_entries(lay)))
    texts = [t.text for t in root.iter(SVG_NS + "text")]
    assert [t for t in texts if t and t.startswith("MMA computation")] == [f"MMA computation {g}" for g in range(1, 5)]


# ----------------------------------------------------------------------------- constant-fix search

def test_constant_fix_finds_the_known_fix():
    lay = api.layout_from_formula(
        "groupID = %laneid >> 2\nthreadID_in_group = %laneid % 4\nrow = groupID\n"
        "col = (threadID_in_group * 3) + i for ai where i = {0,..,3}",
        operand="A", rows=8, cols=16, elements=4, registers=1, types=("s8",))
    assert not api.check(lay).bijective
    fix = fixes.constant_fix(lay)
    assert fix is not None
    assert (fix.definition, fix.old, fix.new) == ("col", 3, 4)
    assert fix.new_line == "col = (threadID_in_group * 4) + i for ai where i = {0,..,3}"
    # proved by both engines
    for name in fixes.BIJECTION_CHECKS:
        c = fix.result.get(name)
        assert c.status == "proved" and (c.engines["z3"], c.engines["enumeration"]) == ("proved", "proved")
    # the rebuilt layout is the original with only the formula changed
    assert fix.layout.with_formula(lay.formula, lay.provenance.formula_text,
                               id=lay.id, expect=lay.expect) == lay


def test_constant_fix_is_none_when_no_single_constant_helps():
    lay = api.layout_from_formula("row = %laneid >> 2\ncol = 0", operand="C", rows=8, cols=8, elements=2)
    assert fixes.constant_fix(lay, max_delta=2) is None


def test_constant_fix_search_order_is_deterministic():
    lay = api.layout_from_formula("row = %laneid >> 3\ncol = (%laneid % 4) * 2 + i", operand="C",
                                  rows=8, cols=8, elements=2)
    a, b = fixes.constant_fix(lay), fixes.constant_fix(lay)
    assert a is not None and b is not None
    assert (a.definition, a.pos, a.old, a.new, a.tried) == (b.definition, b.pos, b.old, b.new, b.tried)
    assert (a.old, a.new) == (3, 2)


# ----------------------------------------------------------------------------- instruction checks

@dataclasses.dataclass(frozen=True)
class FakeInstruction:
    as_expected: bool = True

    def to_json(self) -> dict:
        return {"id": "mma.m8n8k16.s8", "checks": {"shapes": {"status": "proved", "expected": "proved"},
                                                   "registers": {"status": "refuted", "expected": "proved"}}}


def test_instruction_checks_are_tabulated():
    specs = api.load([SPECS / "mma.m8n8k16.toml"])
    rep = api.check_all(specs)
    rep = api.Report(rep.specs, rep.results, rep.findings, (FakeInstruction(False),))
    m = report_model.build(rep)
    md, html = report_markdown.render_markdown(m), report_html.render_html(m)
    assert "## Instruction-level checks" in md
    assert "| Instruction | shapes | registers | As expected |" in md  # logical order, not alphabetical
    assert "| mma.m8n8k16.s8 | ok | FAIL | **no** |" in md
    assert "mma.m8n8k16.s8" in html.replace("<wbr>", "")  # long ids may break after '.' and '_'
    assert html.index(">shapes<") < html.index(">registers<")


# ----------------------------------------------------------------------------- bad input

def test_bad_spec_is_one_line_and_exit_2(tmp_path, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text("schema = 1\n[source\n", encoding="utf-8")
    out = tmp_path / "out"
    assert main(["report", str(bad), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and re.match(rf"{re.escape(str(bad))}:\d+:\d+: error: ", err[0])
    assert not out.exists()


def test_foreign_output_directory_is_refused(tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine", encoding="utf-8")
    assert main(["report", str(SPECS / "mma.m8n8k16.toml"), "--out", str(out)]) == 2
    assert "notes.txt" in capsys.readouterr().err
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]
