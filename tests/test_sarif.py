"""``check --format sarif``: SARIF 2.1.0, validated against the official OASIS schema
(``tests/data/sarif/sarif-schema-2.1.0.json``, see the README there)."""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from pathlib import Path

import jsonschema
import pytest

from verify import __version__, api
from verify.cli import main
from verify.outputs import sarif

from conftest import ROOT, SPECS

SCHEMA_FILE = ROOT / "tests" / "data" / "sarif" / "sarif-schema-2.1.0.json"
SCHEMA_SHA256 = "c3b4bb2d6093897483348925aaa73af03b3e3f4bd4ca38cef26dcb4212a2682e"  # OASIS errata01 (README)
# k256 (an injective/surjective erratum), the f64 syntax erratum, sparse tf32 (count/packing/registers
# errata, metadata checks)
SOME = [str(SPECS / n) for n in ("mma.m16n8k256.toml", "mma.m16n8k16.float.toml", "mma.sp.m16n8k16.tf32.toml")]
GOOD = (SPECS / "mma.m8n8k16.toml").read_text(encoding="utf-8")
MUTATED = GOOD.replace("col =  (threadID_in_group * 4) + i", "col =  (threadID_in_group * 3) + i")


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft4Validator:
    raw = SCHEMA_FILE.read_bytes()
    assert hashlib.sha256(raw).hexdigest() == SCHEMA_SHA256, "the committed schema is not the official one"
    schema = json.loads(raw)
    assert schema["id"] == sarif.SCHEMA_URI == \
        "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
    jsonschema.Draft4Validator.check_schema(schema)
    return jsonschema.Draft4Validator(schema, format_checker=jsonschema.FormatChecker())


def sarif_of(args: list[str], capsys) -> tuple[int, dict, str]:
    rc = main(["check", *args, "--format", "sarif"])
    out, err = capsys.readouterr()
    return rc, json.loads(out), out


@pytest.fixture(scope="module")
def some() -> tuple[api.Report, dict]:
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        report = api.check_all(api.load([os.path.relpath(p, ROOT) for p in SOME]))
    finally:
        os.chdir(cwd)
    return report, sarif.check_sarif(report)


def errors_of(validator: jsonschema.Draft4Validator, log: dict) -> list[str]:
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(log)]


@pytest.mark.slow
def test_output_validates_against_the_official_schema(validator, some, tmp_path, capsys):
    assert errors_of(validator, some[1]) == []
    bad = tmp_path / "mma.m8n8k16.toml"
    bad.write_text(MUTATED, encoding="utf-8")
    rc, log, _ = sarif_of([str(bad)], capsys)
    assert rc == 1 and errors_of(validator, log) == []
    base = tmp_path / "base.json"
    main(["check", str(SPECS / "mma.m8n8k16.toml"), "--baseline", str(base), "--update-baseline"])
    capsys.readouterr()
    rc, log, _ = sarif_of([str(bad), "--baseline", str(base)], capsys)
    assert rc == 1 and errors_of(validator, log) == []


def test_the_validation_can_fail(validator, some):
    broken = json.loads(json.dumps(some[1]))
    broken["runs"][0]["results"][0]["level"] = "fatal"
    del broken["runs"][0]["tool"]["driver"]["name"]
    assert len(errors_of(validator, broken)) == 2


def test_one_result_per_finding_with_rule_metadata(some):
    report, log = some
    run = log["runs"][0]
    findings = sarif.all_findings(report)
    assert len(run["results"]) == len(findings) >= 6
    rules = run["tool"]["driver"]["rules"]
    assert run["tool"]["driver"]["name"] == "ptx-verify" and run["tool"]["driver"]["version"] == __version__
    ids = [r["id"] for r in rules]
    assert ids[:6] == [f"ptx-layout/{c}" for c in
                       ("count", "elements", "packing", "in_range", "injective", "surjective")]
    assert len(ids) == len(set(ids))
    for r in rules:
        assert r["shortDescription"]["text"] and r["help"]["text"] and r["fullDescription"]["text"]
    for res, f in zip(run["results"], findings):
        assert res["ruleId"] == f"ptx-layout/{f.check}" and rules[res["ruleIndex"]]["id"] == res["ruleId"]
        assert res["properties"]["id"] == f.layout and res["properties"]["counterexample"] == (f.counterexample.to_json() if f.counterexample else None)
        assert res["partialFingerprints"][sarif.FINGERPRINT] == f"{f.layout}:{f.check}"


def test_a_known_erratum_is_a_suppressed_note_at_its_formula(some):
    report, log = some
    lay = api.layout(report.specs, "mma.m16n8k256.A.b1")
    res = [r for r in log["runs"][0]["results"] if r["properties"]["id"] == lay.id and
           r["ruleId"] == "ptx-layout/injective"]
    assert len(res) == 1
    r = res[0]
    assert r["level"] == "note"
    assert r["suppressions"] == [{"kind": "inSource", "justification": lay.provenance.erratum}]
    loc = r["locations"][0]
    assert loc["physicalLocation"]["artifactLocation"]["uri"] == "specs/mma.m16n8k256.toml"
    assert loc["physicalLocation"]["region"] == {"startLine": lay.provenance.formula_line}
    assert (SPECS / "mma.m16n8k256.toml").read_text().split("\n")[lay.provenance.formula_line - 1].strip() == \
        lay.provenance.formula_text.strip().split("\n")[0].strip()  # the first line of the formula
    assert loc["logicalLocations"] == [{"fullyQualifiedName": lay.id, "kind": "object"}]
    text = r["message"]["text"]
    assert "lane 0 element a96 and lane 3 element a32 both land at cell (8, 128)" in text
    assert 'Counterexample: {"first": {"lane": 0, "i": 96, "element": "a96"}' in text


def test_a_syntax_error_points_at_its_line_and_column(some):
    r = [r for r in some[1]["runs"][0]["results"] if r["ruleId"] == "ptx-layout/syntax"][0]
    loc = r["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"]["uri"] == "specs/mma.m16n8k16.float.toml"
    line, col = loc["region"]["startLine"], loc["region"]["startColumn"]
    text = (SPECS / "mma.m16n8k16.float.toml").read_text().split("\n")[line - 1]
    assert text[col - 1:].startswith("Otherwise")
    assert r["level"] == "note" and "parenthesis" in r["suppressions"][0]["justification"]


def test_instruction_level_results_point_at_the_operand_with_the_erratum(some):
    report, log = some
    res = {(r["properties"]["id"], r["ruleId"]): r for r in log["runs"][0]["results"]}
    reg = [r for (i, rule), r in res.items() if rule == "ptx-layout/registers"]
    assert len(reg) == 1 and reg[0]["locations"][0]["logicalLocations"][0]["kind"] == "instruction"
    b = next(lay for lay in api.layouts(report.specs) if lay.id.startswith("mma.sp.m16n8k16.B.tf32")
             and not lay.corrected)
    assert reg[0]["locations"][0]["physicalLocation"]["region"]["startLine"] == b.provenance.formula_line
    assert b.provenance.erratum.strip() in reg[0]["suppressions"][0]["justification"]
    designed = [r for (i, rule), r in res.items() if rule == "ptx-layout/metadata_invalid"]
    assert designed == []  # .tf32 has no invalid metadata values; see the next test for the others


def test_by_design_refutations_say_so(capsys):
    rc, log, _ = sarif_of([str(SPECS / "mma.sp.m16n8k32.u8_s8.toml")], capsys)
    res = [r for r in log["runs"][0]["results"] if r["ruleId"] == "ptx-layout/metadata_invalid"]
    assert rc == 0 and res and all(r["level"] == "note" and "by design" in r["message"]["text"] and
                                   "by design" in r["suppressions"][0]["justification"].lower() for r in res)


def test_unexpected_results_are_errors_without_suppression(tmp_path, capsys):
    bad = tmp_path / "mma.m8n8k16.toml"
    bad.write_text(MUTATED, encoding="utf-8")
    rc, log, _ = sarif_of([str(bad)], capsys)
    res = log["runs"][0]["results"]
    errors = [r for r in res if r["level"] == "error"]
    assert rc == 1 and {r["ruleId"].split("/")[-1] for r in errors} >= {"injective", "surjective", "shapes", "k"}
    assert all("suppressions" not in r and "expected proved" in r["message"]["text"] for r in errors)
    inj = [r for r in errors if r["ruleId"] == "ptx-layout/injective"][0]
    assert inj["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == Path(bad).as_uri()  # absolute as given
    assert "Counterexample:" in inj["message"]["text"] and log["runs"][0]["properties"]["as_expected"] is False


def test_with_a_baseline_only_differences_are_errors(tmp_path, capsys):
    bad = tmp_path / "mma.m8n8k16.toml"
    bad.write_text(MUTATED, encoding="utf-8")
    accepted = tmp_path / "accepted.json"
    main(["check", str(bad), "--baseline", str(accepted), "--update-baseline"])
    capsys.readouterr()
    rc, log, _ = sarif_of([str(bad), "--baseline", str(accepted)], capsys)
    res = log["runs"][0]["results"]
    assert rc == 0 and res and not [r for r in res if r["level"] == "error"]
    assert {r["baselineState"] for r in res} == {"unchanged"} and "warning" in {r["level"] for r in res}
    original = tmp_path / "original.json"
    main(["check", str(SPECS / "mma.m8n8k16.toml"), "--baseline", str(original), "--update-baseline"])
    capsys.readouterr()
    rc, log, _ = sarif_of([str(bad), "--baseline", str(original)], capsys)
    res = log["runs"][0]["results"]
    errors = [r for r in res if r["level"] == "error"]
    assert rc == 1 and {r["baselineState"] for r in errors} == {"new", "updated"}
    assert "ptx-layout/baseline/mapping-changed" in {r["ruleId"] for r in errors}
    assert log["runs"][0]["properties"]["baseline"]["differences"] == 5


def test_layouts_from_doc_pages_point_at_the_page(docs_dir, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    page = os.path.relpath(docs_dir / "9-7-14-5-13-matrix-fragments-for-mma-m16n8k256.md", ROOT)
    rc, log, _ = sarif_of([page], capsys)
    res = [r for r in log["runs"][0]["results"] if r["ruleId"] == "ptx-layout/injective"]
    assert rc == 0 and len(res) == 1
    loc = res[0]["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"]["uri"] == page  # relative, as given
    lines = Path(page).read_text(encoding="utf-8").split("\n")
    first = loc["region"]["startLine"] - 1
    assert lines[first].strip() == "groupID = %laneid >> 2"  # where the formula starts on the page
    assert any("(threadID_in_group * 32) + i for ai where i < 64" in x for x in lines[first:first + 16])


def test_sarif_is_deterministic_and_has_no_timestamps(some, capsys):
    _, a = sarif_of(SOME, capsys)[1:]
    _, b = sarif_of(SOME, capsys)[1:]
    assert a == b
    text = json.dumps(a)
    assert "Utc" not in text and "time" not in text.lower().replace("timeout", "")


def test_instruction_checks_missing_from_findings_are_still_reported(some):
    report, _ = some
    bare = dataclasses.replace(report, findings=tuple(f for f in report.findings
                                                      if f.layout not in {i.id for i in report.instructions}))
    log = sarif.check_sarif(bare)
    ids = {r["properties"]["id"] for r in log["runs"][0]["results"]}
    assert {i.id for i in report.instructions if not all(c.status == c.expected == "proved" for c in i.checks)} <= ids


def test_uris_are_relative_as_given_and_escaped():
    assert sarif.uri("specs/a b.toml") == "specs/a%20b.toml"
    assert sarif.uri("../shared/x.md") == "../shared/x.md"
    assert sarif.uri("/tmp/a.toml") == "file:///tmp/a.toml"


@pytest.mark.slow
def test_sarif_and_junit_are_byte_identical_across_processes_hash_seeds_and_jobs():
    import subprocess
    import sys
    for fmt in ("sarif", "junit"):
        outs = set()
        for seed, jobs in (("1", "1"), ("4242", "2")):
            r = subprocess.run([sys.executable, "-m", "verify", "check", "specs/mma.sp.m16n8k32.u8_s8.toml",
                                "specs/mma.m8n8k4.f16.toml", "specs/mma.m16n8k256.toml", "--format", fmt,
                                "--jobs", jobs], cwd=ROOT, capture_output=True, text=True,
                               env={**os.environ, "PYTHONHASHSEED": seed})
            assert r.returncode == 0, r.stderr
            outs.add(r.stdout)
        assert len(outs) == 1, fmt
