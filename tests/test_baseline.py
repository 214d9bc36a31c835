"""``check --baseline FILE`` / ``--update-baseline``: differences from a committed JSON, and bad baselines."""
from __future__ import annotations

import copy
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from verify.cli import main
from verify.errors import SpecError
from verify.files import OutputError
from verify.outputs import baseline

from conftest import ROOT, SPECS

SMALL = str(SPECS / "mma.m8n8k16.toml")
GOOD = (SPECS / "mma.m8n8k16.toml").read_text(encoding="utf-8")
# m8n8k16 A with collisions and holes (col * 3 instead of * 4): injective and surjective refuted
MUTATED = GOOD.replace("col =  (threadID_in_group * 4) + i", "col =  (threadID_in_group * 3) + i")


def run(args: list[str], capsys) -> tuple[int, str, str]:
    rc = main(args)
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.fixture()
def small_baseline(tmp_path: Path, capsys) -> Path:
    f = tmp_path / "base.json"
    rc, out, err = run(["check", SMALL, "--baseline", str(f), "--update-baseline"], capsys)
    assert rc == 0 and f.is_file(), err
    return f


def _doc() -> dict:
    """A small schema-1 check document, by hand (the comparison is a pure function of two of them)."""
    def checks(**over: tuple[str, str]) -> dict:
        base = {c: {"status": "proved", "expected": "proved"} for c in
                ("count", "elements", "packing", "in_range", "injective", "surjective")}
        for k, (s, e) in over.items():
            base[k] = {"status": s, "expected": e}
        return base
    return {"schema": 1, "as_expected": True,
            "layouts": [{"id": "L.A", "digest": "sha256:aa", "checks": checks()},
                        {"id": "L.B", "digest": "sha256:bb",
                         "checks": checks(injective=("refuted", "refuted"))},
                        {"id": "L.C", "digest": "sha256:cc", "checks": checks()}],
            "findings": [{"layout": "L.B", "check": "injective", "status": "refuted", "expected": "refuted"},
                         {"layout": "L.S", "check": "syntax", "status": "refuted", "expected": "refuted"}],
            "instructions": [{"id": "I.1", "checks": {"shapes": {"status": "proved", "expected": "proved"},
                                                       "k": {"status": "proved", "expected": "proved"}}}]}


# ----------------------------------------------------------------------------- the pure comparison

def test_identical_documents_have_no_difference():
    d = _doc()
    diff = baseline.compare(d, copy.deepcopy(d))
    assert not diff and diff.count == 0 and diff.lines() == []


def test_every_kind_of_difference_is_found():
    old, new = _doc(), _doc()
    new["layouts"][0]["checks"]["in_range"] = {"status": "refuted", "expected": "proved"}  # new failure
    new["layouts"][1]["checks"]["injective"] = {"status": "proved", "expected": "refuted"}  # fixed erratum
    new["findings"] = [f for f in new["findings"] if f["layout"] != "L.B"]
    new["layouts"][2]["digest"] = "sha256:c2"  # the mapping changed, every check the same
    new["layouts"].append({"id": "L.D", "digest": "sha256:dd", "checks": {}})
    del old["layouts"][2]["checks"]["packing"]  # a check the baseline did not have
    new["instructions"][0]["checks"]["k"] = {"status": "refuted", "expected": "proved"}
    new["instructions"].append({"id": "I.2", "checks": {}})
    old["instructions"].append({"id": "I.0", "checks": {}})
    old["layouts"].append({"id": "L.Z", "digest": "sha256:zz", "checks": {}})
    diff = baseline.compare(old, new)
    assert [(c.id, c.check, c.was, c.now) for c in diff.new_failures] == [
        ("L.A", "in_range", "proved", "refuted"), ("L.C", "packing", "absent", "proved")]
    assert [(c.id, c.check, c.was, c.now) for c in diff.fixed_errata] == [("L.B", "injective", "refuted", "proved")]
    assert diff.layouts_added == ("L.D",) and diff.layouts_removed == ("L.Z",)
    assert [(m.id, m.was, m.now) for m in diff.mappings_changed] == [("L.C", "sha256:cc", "sha256:c2")]
    assert [(c.id, c.check, c.was, c.now) for c in diff.instructions_changed] == [("I.1", "k", "proved", "refuted")]
    assert diff.instructions_added == ("I.2",) and diff.instructions_removed == ("I.0",)
    assert diff.count == 9 and len(diff.lines()) == 9
    j = diff.to_json("b.json")
    assert j["file"] == "b.json" and j["differences"] == 9 and list(j)[2:] == list(baseline.KINDS)
    assert j["fixed_errata"] == [{"id": "L.B", "check": "injective", "was": "refuted", "now": "proved",
                                  "expected": "refuted"}]
    assert diff.differs("L.D", "count") and diff.differs("L.A", "in_range") and not diff.differs("L.A", "count")


def test_a_doc_formula_that_parses_now_is_a_fixed_erratum():
    old, new = _doc(), _doc()
    new["findings"] = [f for f in new["findings"] if f["check"] != "syntax"]
    diff = baseline.compare(old, new)
    assert [(c.id, c.check, c.was, c.now) for c in diff.fixed_errata] == [("L.S", "syntax", "refuted", "proved")]
    diff = baseline.compare(new, old)  # and the other way: a formula that no longer parses
    assert [(c.id, c.check, c.was, c.now) for c in diff.new_failures] == [("L.S", "syntax", "proved", "refuted")]


def test_the_comparison_imports_no_engine():
    code = ("import sys, verify.outputs.baseline; "
            "bad = sorted(m for m in sys.modules if m in ('z3', 'numpy') or m.startswith(('verify.engines', "
            "'verify.checks', 'verify.layout', 'verify.catalog'))); print(bad); sys.exit(1 if bad else 0)")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


# ----------------------------------------------------------------------------- reading and writing

@pytest.mark.parametrize("text, where, words", [
    ('{"schema": 1,\n "layouts": [,]}', ":2:14:", "not valid JSON"),
    ('[1, 2]', ":1:1:", "not a JSON object"),
    ('{"schema": 2, "layouts": []}', ":1:2:", "schema is 2"),
    ('{"schema": 1}', ":1:1:", 'no "layouts"'),
    ('{"schema": 1, "layouts": [\n  {"id": "x.A", "checks": {}}]}', ":2:10:", 'no "digest"'),
    ('{"schema": 1, "layouts": [{"id": "x", "digest": "d", "checks": {"count": 3}}]}', ":1:34:", "no checks"),
])
def test_malformed_baselines_are_bad_input(tmp_path, text, where, words):
    p = tmp_path / "b.json"
    p.write_text(text, encoding="utf-8")
    with pytest.raises(SpecError) as e:
        baseline.read(p)
    assert e.value.one_line().startswith(f"{p}{where} error: ") and words in e.value.one_line()


def test_write_atomic_replaces_and_leaves_no_temp_files(tmp_path):
    p = tmp_path / "b.json"
    p.write_text("old", encoding="utf-8")
    baseline.write_atomic(p, "new\n")
    assert p.read_text(encoding="utf-8") == "new\n" and sorted(x.name for x in tmp_path.iterdir()) == ["b.json"]
    with pytest.raises(OutputError, match="cannot write .*dir.json: no directory"):
        baseline.write_atomic(tmp_path / "no" / "such" / "dir.json", "x")


# ----------------------------------------------------------------------------- the command line

def test_update_then_compare_has_no_difference(small_baseline, capsys):
    rc, out, _ = run(["check", SMALL, "--format", "json"], capsys)
    assert small_baseline.read_text(encoding="utf-8") == out  # the baseline is the JSON output
    rc, out, err = run(["check", SMALL, "--baseline", str(small_baseline)], capsys)
    assert rc == 0 and out.rstrip().endswith("baseline " + str(small_baseline) + ": 0 differences"), out
    rc, out, _ = run(["check", SMALL, "--baseline", str(small_baseline), "--format", "json"], capsys)
    j = json.loads(out)["baseline"]
    assert rc == 0 and j["differences"] == 0 and all(j[k] == [] for k in baseline.KINDS)


def test_a_new_failure_exits_1_and_is_printed(small_baseline, tmp_path, capsys):
    bad = tmp_path / "mma.m8n8k16.toml"
    bad.write_text(MUTATED, encoding="utf-8")
    rc, out, _ = run(["check", str(bad), "--baseline", str(small_baseline)], capsys)
    assert rc == 1
    tail = out[out.index("baseline " + str(small_baseline)):].splitlines()
    assert tail[0].endswith(": 5 differences  -> FAIL"), tail
    assert re.fullmatch(r"  changed check: (mma\.m8n8k16\.A\.\S+) injective: proved -> refuted \(expected proved\)",
                        tail[1]), tail
    a_id = tail[1].split()[2]
    assert tail[2] == f"  changed check: {a_id} surjective: proved -> refuted (expected proved)"
    assert tail[3].startswith(f"  mapping changed: {a_id} (")
    assert [x.split()[-6] for x in tail[4:]] == ["shapes:", "k:"] and all(
        x.startswith("  instruction check changed: mma.m8n8k16.") for x in tail[4:])
    rc, out, _ = run(["check", str(bad), "--baseline", str(small_baseline), "--format", "json"], capsys)
    j = json.loads(out)["baseline"]
    assert rc == 1 and {c["check"] for c in j["new_failures"]} == {"injective", "surjective"}
    assert [m["id"] for m in j["mappings_changed"]] == [a_id]


def test_with_a_baseline_only_differences_fail(small_baseline, tmp_path, capsys):
    """An unexpected failure recorded in the baseline exits 0; the same failure without it exits 1."""
    bad = tmp_path / "mma.m8n8k16.toml"
    bad.write_text(MUTATED, encoding="utf-8")
    rc, _, _ = run(["check", str(bad)], capsys)
    assert rc == 1
    accepted = tmp_path / "accepted.json"
    rc, _, _ = run(["check", str(bad), "--baseline", str(accepted), "--update-baseline"], capsys)
    assert rc == 0
    rc, out, _ = run(["check", str(bad), "--baseline", str(accepted)], capsys)
    assert rc == 0 and "0 differences" in out and "UNEXPECTED" in out


@pytest.mark.parametrize("content, words", [(None, "no such file"), ("{oops", "not valid JSON")])
def test_missing_or_malformed_baseline_exits_2_before_any_work(tmp_path, capsys, content, words):
    f = tmp_path / "b.json"
    if content is not None:
        f.write_text(content, encoding="utf-8")
    rc, out, err = run(["check", SMALL, "--baseline", str(f), "--format", "sarif"], capsys)
    lines = err.strip().splitlines()
    assert rc == 2 and out == "" and len(lines) == 1 and lines[0].startswith(f"{f}:1:") and words in lines[0]
    assert "Traceback" not in err


def test_update_baseline_needs_a_file_and_replaces_a_broken_one(tmp_path, capsys):
    rc, out, err = run(["check", SMALL, "--update-baseline"], capsys)
    assert rc == 2 and out == "" and err.startswith("ptx-verify: error: --update-baseline needs --baseline")
    nowhere = tmp_path / "no" / "dir" / "b.json"
    rc, out, err = run(["check", SMALL, "--baseline", str(nowhere), "--update-baseline"], capsys)
    assert rc == 2 and out == "" and err.startswith(f"ptx-verify: error: cannot write {nowhere}: no directory")
    f = tmp_path / "b.json"
    f.write_text("{broken", encoding="utf-8")
    rc, _, err = run(["check", SMALL, "--baseline", str(f), "--update-baseline"], capsys)
    assert rc == 0 and json.loads(f.read_text(encoding="utf-8"))["schema"] == 1 and "wrote the baseline" in err


def test_baseline_run_is_byte_identical_across_processes(small_baseline):
    outs = set()
    for seed in ("1", "99"):
        r = subprocess.run([sys.executable, "-m", "verify", "check", SMALL, "--baseline", str(small_baseline),
                            "--format", "json"], cwd=ROOT, capture_output=True, text=True,
                           env={**os.environ, "PYTHONHASHSEED": seed})
        assert r.returncode == 0, r.stderr
        outs.add(r.stdout)
    assert len(outs) == 1
