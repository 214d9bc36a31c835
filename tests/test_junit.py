"""``check --format junit``: JUnit XML in the shape Jenkins, GitLab and GitHub Actions reporters read."""
from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from verify.cli import main
from verify.outputs.junit import parse_counts

from conftest import ROOT, SPECS

SOME = [f"specs/{n}" for n in ("mma.m16n8k256.toml", "mma.m16n8k16.float.toml", "mma.sp.m16n8k16.tf32.toml")]
GOOD = (SPECS / "mma.m8n8k16.toml").read_text(encoding="utf-8")
MUTATED = GOOD.replace("col =  (threadID_in_group * 4) + i", "col =  (threadID_in_group * 3) + i")

# The common JUnit shape (Jenkins junit plugin / Ant junit-10.xsd, GitLab's JUnit report parser, the GitHub
# Actions test reporters): which element may hold which, and the attributes each may carry.
SHAPE = {
    "testsuites": ({"testsuite"}, {"name", "tests", "failures", "errors", "skipped", "disabled", "time"}),
    "testsuite": ({"properties", "testcase", "system-out", "system-err"},
                  {"name", "tests", "failures", "errors", "skipped", "disabled", "time", "timestamp", "hostname",
                   "id", "package", "file"}),
    "testcase": ({"failure", "error", "skipped", "system-out", "system-err"},
                 {"name", "classname", "time", "assertions", "status", "file", "line"}),
    "failure": (set(), {"message", "type"}),
    "error": (set(), {"message", "type"}),
    "skipped": (set(), {"message"}),
    "system-out": (set(), set()),
    "system-err": (set(), set()),
}


@pytest.fixture(autouse=True)
def _in_the_repository(monkeypatch):
    monkeypatch.chdir(ROOT)  # spec paths relative, as a user in the repository gives them


def junit_of(args: list[str], capsys) -> tuple[int, str, ET.Element]:
    rc = main(["check", *args, "--format", "junit"])
    out, _ = capsys.readouterr()
    return rc, out, ET.fromstring(out)


def check_shape(root: ET.Element) -> list[str]:
    """Every element and attribute where the common JUnit shape allows it; counts that add up."""
    bad = []
    if root.tag != "testsuites":
        bad.append(f"root is {root.tag}")
    for el in root.iter():
        children, attrs = SHAPE.get(el.tag, (None, None))
        if children is None:
            bad.append(f"unknown element {el.tag}")
            continue
        bad += [f"{el.tag} holds {c.tag}" for c in el if c.tag not in children]
        bad += [f"{el.tag} has attribute {a}" for a in el.attrib if a not in attrs]
    for suite in root.iter("testsuite"):
        cases = suite.findall("testcase")
        for key, tag in (("tests", None), ("failures", "failure"), ("errors", "error"), ("skipped", "skipped")):
            n = len(cases) if tag is None else sum(1 for c in cases if c.find(tag) is not None)
            if suite.get(key) != str(n):
                bad.append(f"suite {suite.get('name')}: {key}={suite.get(key)}, counted {n}")
        for c in cases:
            if not c.get("classname") or not c.get("name"):
                bad.append("a testcase without classname or name")
            if sum(1 for x in c if x.tag in ("failure", "error", "skipped")) > 1:
                bad.append("a testcase with two outcomes")
    for key in ("tests", "failures", "errors", "skipped"):
        total = sum(int(s.get(key)) for s in root.iter("testsuite"))
        if root.get(key) != str(total):
            bad.append(f"testsuites {key}={root.get(key)}, suites add up to {total}")
    return bad


def test_output_parses_and_has_the_common_junit_shape(capsys):
    rc, text, root = junit_of(SOME, capsys)
    assert rc == 0 and text.startswith('<?xml version="1.0" encoding="UTF-8"?>\n<testsuites ')
    assert check_shape(root) == []
    names = [s.get("name") for s in root]
    assert len(names) == len(set(names))  # one suite per spec file
    assert {s.get("name") for s in root} == {"specs/mma.m16n8k256.toml", "specs/mma.m16n8k16.float.toml",
                                              "specs/mma.sp.m16n8k16.tf32.toml"}
    assert parse_counts(text) == {"tests": len(list(root.iter("testcase"))), "failures": 0, "errors": 0, "skipped": 0}


def test_the_shape_check_can_fail():
    root = ET.fromstring('<testsuites tests="2" failures="0" errors="0" skipped="0"><testsuite name="s" tests="1" '
                         'failures="0" errors="0" skipped="0"><testcase name="x"><failure/></testcase><bogus/>'
                         "</testsuite></testsuites>")
    assert len(check_shape(root)) >= 4


def test_one_testcase_per_layout_property_and_instruction_check(capsys):
    _, _, root = junit_of(["specs/mma.m16n8k256.toml"], capsys)
    cases = [(c.get("classname"), c.get("name")) for c in root.iter("testcase")]
    assert ("mma.m16n8k256.A.b1", "injective") in cases and ("mma.m16n8k256.A.b1@corrected", "surjective") in cases
    layouts = {k for k, _ in cases if ".A." in k or ".B." in k or ".C." in k}
    assert all(sum(1 for k, _ in cases if k == lid) == 6 for lid in layouts)
    ins = [n for k, n in cases if k not in layouts]
    assert ins == ["shapes", "k", "registers"]


def test_known_errata_pass_with_a_note(capsys):
    _, _, root = junit_of(["specs/mma.m16n8k256.toml"], capsys)
    case = [c for c in root.iter("testcase")
            if (c.get("classname"), c.get("name")) == ("mma.m16n8k256.A.b1", "injective")][0]
    assert case.find("failure") is None and case.find("skipped") is None
    out = case.find("system-out").text
    assert out.startswith("known erratum, refuted as the spec expects")
    assert "both land at cell (8, 128)" in out and 'counterexample: {"first"' in out
    assert "formula: specs/mma.m16n8k256.toml:" in out and "lacks '& 0x1F'" in out


def test_unexpected_results_fail_with_message_and_counterexample(tmp_path, capsys):
    bad = tmp_path / "mma.m8n8k16.toml"
    bad.write_text(MUTATED, encoding="utf-8")
    rc, text, root = junit_of([str(bad)], capsys)
    assert rc == 1 and check_shape(root) == []
    fails = {(c.get("classname").split(".")[-2], c.get("name")): c.find("failure") for c in root.iter("testcase")
             if c.find("failure") is not None}
    assert {n for _, n in fails} == {"injective", "surjective", "shapes", "k"}
    inj = next(f for (_, n), f in fails.items() if n == "injective")
    assert inj.get("type") == "refuted" and inj.get("message").startswith("refuted, expected proved: lane ")
    assert "counterexample: {" in inj.text and f"formula: {bad}:" in inj.text
    assert parse_counts(text)["failures"] == 4


def test_with_a_baseline_only_differences_fail(tmp_path, capsys):
    bad = tmp_path / "mma.m8n8k16.toml"
    bad.write_text(MUTATED, encoding="utf-8")
    accepted = tmp_path / "accepted.json"
    main(["check", str(bad), "--baseline", str(accepted), "--update-baseline"])
    capsys.readouterr()
    rc, text, root = junit_of([str(bad), "--baseline", str(accepted)], capsys)
    assert rc == 0 and parse_counts(text)["failures"] == 0 and check_shape(root) == []
    notes = [c.find("system-out").text for c in root.iter("testcase") if c.find("system-out") is not None]
    assert len(notes) == 4 and all(n.startswith("unexpected, but the same in the baseline") for n in notes)
    original = tmp_path / "original.json"
    main(["check", str(SPECS / "mma.m8n8k16.toml"), "--baseline", str(original), "--update-baseline"])
    capsys.readouterr()
    rc, text, root = junit_of([str(bad), "--baseline", str(original)], capsys)
    assert rc == 1 and parse_counts(text)["failures"] == 5 and check_shape(root) == []
    assert [s.get("name") for s in root][-1] == f"baseline {original}"  # the changed mapping


def test_junit_is_deterministic(capsys):
    a = junit_of(SOME, capsys)[1]
    b = junit_of(SOME, capsys)[1]
    assert a == b and "time=" not in a and "timestamp" not in a


@pytest.mark.parametrize("raw", ["a\x00b", "x\x1by", "ok"])
def test_text_xml_cannot_hold_is_escaped(raw):
    from verify.outputs.junit import _clean
    ET.fromstring(f"<a>{_clean(raw)}</a>")
