"""No input passes silently, crashes or hangs: one test per class of defect found by trying the tool
as a new user would (planted doc changes, hostile formulas, bad options, JSON outputs)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from verify import api
from verify.cli import main

from conftest import SPECS

P3 = "9-7-14-5-3-matrix-fragments-for-mma-m8n8k16.md"
P11 = "9-7-14-5-11-matrix-fragments-for-mma-m16n8k64.md"
P622 = "9-7-14-6-2-2-matrix-fragments-for-sparse-mma-m16n8k32-with-f16-and-bf16-types.md"
P624 = "9-7-14-6-2-4-matrix-fragments-for-sparse-mma-m16n8k8-with-tf32-floating-point-type.md"
P627 = "9-7-14-6-2-7-matrix-fragments-for-sparse-mma-m16n8k64-with-u4-s4-integer-type.md"
P628 = "9-7-14-6-2-8-matrix-fragments-for-sparse-mma-m16n8k128-with-u4-s4-integer-type.md"


def plant(tmp_path: Path, docs_dir: Path, page: str, old: str, new: str, after: str = "") -> Path:
    """A copy of one doc page with one change (after the first ``after``, if given)."""
    text = (docs_dir / page).read_text(encoding="utf-8")
    start = text.index(after) if after else 0
    assert old in text[start:], old
    out = tmp_path / page
    out.write_text(text[:start] + text[start:].replace(old, new, 1), encoding="utf-8")
    return out


def check_json(capsys, *args: str) -> tuple[int, dict]:
    rc = main(["check", *args, "--format", "json"])
    return rc, json.loads(capsys.readouterr().out)


def unexpected(data: dict) -> list[dict]:
    return [f for f in data["findings"] if not f["as_expected"]]


# ----------------------------------------------------------------------------- doc pages are judged by reviewed specs

def test_unchanged_pages_are_as_the_reviewed_specs_record(docs_check):
    rc, data = docs_check
    assert rc == 0 and data["as_expected"] and not unexpected(data)


def test_a_formula_that_no_longer_parses_fails_ci(tmp_path, docs_dir, capsys):
    page = plant(tmp_path, docs_dir, P3, "threadID_in_group", "threadID_in_grp", after="col = (threadID_in_group * 4)")
    rc, data = check_json(capsys, str(page))
    assert rc == 1
    [f] = unexpected(data)
    assert (f["layout"], f["check"], f["expected"]) == ("mma.m8n8k16.A.u8_s8", "syntax", "proved")
    assert f["counterexample"]["file"] == str(page) and f["counterexample"]["line"] == 34  # the page line at fault
    assert "threadID_in_grp" in f["message"]


def test_a_definition_made_twice_is_not_dropped(tmp_path, docs_dir, capsys):
    page = plant(tmp_path, docs_dir, P11, "threadID_in_group = %laneid % 4", "groupID = %laneid % 4")
    rc, data = check_json(capsys, str(page))
    assert rc == 1 and {f["check"] for f in unexpected(data)} == {"syntax"}


def test_a_repaired_parenthesis_is_still_a_new_erratum(tmp_path, docs_dir, capsys):
    """ingest repairs the formula, but no reviewed spec records the erratum: unexpected."""
    page = plant(tmp_path, docs_dir, P3, "(threadID_in_group * 4)", "(threadID_in_group * 4",
                 after="col = (threadID_in_group * 4)")
    rc, data = check_json(capsys, str(page))
    assert rc == 1 and [f["check"] for f in unexpected(data)] == ["syntax"]


def test_a_new_count_erratum_is_not_called_known(tmp_path, docs_dir, capsys):
    page = plant(tmp_path, docs_dir, P3, "a single `.b32` register", "two `.b32` registers")
    rc, data = check_json(capsys, str(page))
    assert rc == 1
    lay = next(x for x in data["layouts"] if x["id"] == "mma.m8n8k16.A.u8_s8")
    assert lay["checks"]["packing"]["status"] == "refuted" and lay["checks"]["packing"]["expected"] == "proved"


P57 = "9-7-14-5-7-matrix-fragments-for-mma-m16n8k8.md"


@pytest.mark.parametrize("old,new,after,facts", [
    # an element list deleted: ingest names the elements itself, every check passes (found by benchmarks/fuzz.py)
    ("| b0, b1 |", "|  |", "`.f64` | A vector expression containing two `.f64` registers", {"elements"}),
    # a register type changed where the map and the counts stay consistent
    ("two `.f64` registers, containing two `.f64` elements from the matrix B",
     "two `.b64` registers, containing two `.b64` elements from the matrix B", "", {"register_type"}),
])
def test_register_facts_the_page_changes_are_findings(tmp_path, docs_dir, capsys, old, new, after, facts):
    page = plant(tmp_path, docs_dir, P57, old, new, after=after)
    rc, data = check_json(capsys, str(page))
    assert rc == 1
    bad = unexpected(data)
    assert [(f["layout"], f["check"]) for f in bad] == [("mma.m16n8k8.B.f64", "register_facts")]
    assert set(bad[0]["counterexample"]["facts"]) == facts
    assert main(["check", str(page)]) == 1
    assert "register_facts:FAIL" in capsys.readouterr().out


P58 = "9-7-14-5-8-matrix-fragments-for-mma-m16n8k16-with-floating-point-type.md"


@pytest.mark.parametrize("old,new,after", [
    # found by benchmarks/fuzz.py: a second break in a formula the reviewed spec records as broken
    ("groupID + 8 Otherwise", "groupID + 1099511627776 Otherwise", "row = groupID for ai where i % 2 = 0"),
    ("(threadID_in_group Otherwise", "(threadID_in_group ] Otherwise", ""),
    ("col = (i * 2) + threadID_in_group for ai", "col = (i * 2) + threadID_in_group for ai for ai", ""),
])
def test_a_known_broken_formula_broken_another_way_is_new(tmp_path, docs_dir, capsys, old, new, after):
    rc, data = check_json(capsys, str(docs_dir / P58))
    [known] = [f for f in data["findings"] if f["check"] == "syntax"]
    assert rc == 0 and known["as_expected"] and known["layout"] == "mma.m16n8k16.A.f64"
    page = plant(tmp_path, docs_dir, P58, old, new, after=after)
    rc, data = check_json(capsys, str(page))
    assert rc == 1
    assert [(f["layout"], f["check"]) for f in unexpected(data)] == [("mma.m16n8k16.A.f64", "syntax")]


def test_a_different_bijection_is_a_finding(tmp_path, docs_dir, capsys):
    """Still a bijection, but not the reviewed layout: only the comparison with the reviewed spec sees it."""
    page = plant(tmp_path, docs_dir, P3, "(threadID_in_group * 4) + i", "(threadID_in_group * 4) + (3 - i)",
                 after="col = (threadID_in_group * 4)")
    rc, data = check_json(capsys, str(page))
    assert rc == 1
    lay = next(x for x in data["layouts"] if x["id"] == "mma.m8n8k16.A.u8_s8")
    assert all(c["status"] == "proved" for c in lay["checks"].values())
    [f] = unexpected(data)
    assert f["check"] == "reviewed" and f["counterexample"]["lane"] == 0 and f["counterexample"]["i"] == 0
    assert f["counterexample"]["first"] == {"row": 0, "col": 0} and f["counterexample"]["second"] == {"row": 0, "col": 3}


def test_division_by_zero_on_a_page_is_a_finding_in_check_and_ingest(tmp_path, docs_dir, capsys):
    page = plant(tmp_path, docs_dir, P3, "(threadID_in_group * 4) + i", "(threadID_in_group * 4) + i / 0",
                 after="col = (threadID_in_group * 4)")
    rc, data = check_json(capsys, str(page))
    assert rc == 1
    [f] = unexpected(data)
    assert f["check"] == "evaluation" and f["counterexample"]["file"] == str(page)
    assert "division by zero" in f["message"]
    assert main(["ingest", str(page), "--out", str(tmp_path / "out")]) == 1  # the same verdict
    out, err = capsys.readouterr()
    # findings are diagnostics, on stderr, at the severity JSON gives them (an evaluation failure is an error)
    assert f"{page}:34:37: error: evaluation: the formula cannot be evaluated: division by zero" in err.splitlines()
    assert out.startswith("wrote ") and "evaluation" not in out


def test_a_sparse_page_whose_a_does_not_parse_points_at_the_page(tmp_path, docs_dir):
    page = plant(tmp_path, docs_dir, P627, "groupID", "threadID_in_grp", after="row = groupID")
    specs, doc = api.load_with_doc_findings([page])
    report = api.check_all(specs, doc_findings=doc)
    bad = [f for f in report.findings if not f.as_expected]
    assert bad and all(f.counterexample is None or str(page) == f.counterexample.get("file") for f in bad)
    syntax = [f for f in bad if f.check == "syntax"]
    assert [f.layout for f in syntax] == ["mma.sp.m16n8k64.A.u4_s4"] and f"{page}:29:9:" in syntax[0].message
    # B and C are given by reference to a sibling page that is not here: reported, not dropped
    assert {f.layout for f in bad if f.check == "reviewed"} == {"mma.sp.m16n8k64.B.u4_s4", "mma.sp.m16n8k64.u4.C.s32"}
    assert not report.as_expected


def test_ingest_findings_in_text_say_the_severity_json_says(docs_dir, capsys):
    """U6: one severity vocabulary: each text line's level is the finding's JSON ``severity``."""
    page = str(docs_dir / "9-7-14-5-13-matrix-fragments-for-mma-m16n8k256.md")
    assert main(["ingest", page, "-v", "--no-check"]) == 0
    err = capsys.readouterr().err
    diagnostics = [ln for ln in err.splitlines() if ".md:" in ln]
    assert main(["ingest", page, "--findings", "json", "--no-check"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert diagnostics and len(diagnostics) == len(found)
    for ln, f in zip(diagnostics, found):
        assert ln.startswith(f"{f['page']}:{f['line']}:{f['column']}: {f['severity']}: {f['kind']}: "), (ln, f)


def test_doc_finding_witnesses_are_json_objects(docs_dir, capsys):
    rc, data = check_json(capsys, str(docs_dir / "9-7-14-5-13-matrix-fragments-for-mma-m16n8k256.md"))
    w = next(f["witness"] for f in data["doc_findings"] if f["kind"] == "not-bijective")
    assert isinstance(w["collision"], dict) and w["collision"]["row"] == 8 and w["collision"]["col"] == 128


# ----------------------------------------------------------------------------- the two engines mean the same property

@pytest.mark.parametrize("page,old,new,after", [
    (P624, "% 4", "% 3", ""),
    (P622, "threadID_in_group * 4", "groupID * 4", ""),
])
def test_sparse_checks_engines_agree_on_planted_changes(tmp_path, docs_dir, capsys, page, old, new, after):
    path = plant(tmp_path, docs_dir, page, old, new, after)
    rc, data = check_json(capsys, str(path))
    assert rc == 1
    for item in data["layouts"] + data.get("instructions", []):
        for name, c in item["checks"].items():
            assert c["status"] != "error", (item["id"], name, c["message"])
            engines = {k: v for k, v in c["engines"].items() if k in ("z3", "enumeration")}
            assert len(set(engines.values())) <= 1, (item["id"], name, engines)


def test_verdicts_do_not_depend_on_the_time_limit(tmp_path, docs_dir, capsys):
    """Work is bounded by deterministic budgets: the same page gives the same JSON at 10 s and 4 s."""
    page = plant(tmp_path, docs_dir, P628, "0 <= i < 8", "0 < i < 8")
    outs = []
    for t in ("10", "4"):
        rc, data = check_json(capsys, str(page), "--timeout", t)
        outs.append(json.dumps(data, sort_keys=True))
        assert not any(c["status"] == "unknown" for x in data["layouts"] for c in x["checks"].values())
    assert outs[0] == outs[1]


# ----------------------------------------------------------------------------- hostile formulas: positioned errors

DEEP = {
    "nested parentheses": "row = " + "(" * 100 + "i" + ")" * 100,
    "deep condition": "row = i for ci where " + "(" * 100 + "i < 2" + ")" * 100,
    "unary minuses": "row = " + "-" * 500 + "i",
    "long sum": "row = " + " + ".join(["i"] * 400),
    "huge text": "row = " + "1 + " * 200_000 + "1",
    "definition chain": "\n".join(["v0 = i"] + [f"v{k} = v{k - 1} + 0" for k in range(1, 250)]) + "\nrow = v249",
    "cycle": "a = b\nb = a\nrow = a",
}


@pytest.mark.parametrize("name", sorted(DEEP))
@pytest.mark.parametrize("command", ["check", "list", "table", "report"])
def test_deep_or_long_formulas_are_positioned_errors(tmp_path, capsys, name, command):
    spec = (SPECS / "mma.m8n8k16.toml").read_text()
    start = spec.index("[[fragment]]", spec.index("operand = \"C\"") - 200)
    body = DEEP[name] + "\ncol = i"
    text = spec[:start] + ('[[fragment]]\noperand = "C"\ntypes = ["s32"]\nregisters = 2\nregister_type = "s32"\n'
                           'elements_per_register = 1\nformula = """\n' + body.replace("\\", "\\\\") + '\n"""\n')
    p = tmp_path / "deep.toml"
    p.write_text(text)
    args = {"check": ["check", str(p)], "list": ["list", "--specs", str(p)],
            "table": ["table", "C.s32", "--specs", str(p)], "report": ["report", str(p), "--out", str(tmp_path / "r")]}
    assert main(args[command]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"{p}:") and ": error: " in err[0], err
    assert not (tmp_path / "r").exists()


def test_a_shape_out_of_range_says_so(tmp_path, capsys):
    p = tmp_path / "s.toml"
    p.write_text((SPECS / "mma.m8n8k16.toml").read_text().replace('shape = "m8n8k16"', 'shape = "m8000000n8k16"'))
    assert main(["check", str(p)]) == 2
    assert "M = 8000000 is out of range (1..4096)" in capsys.readouterr().err


# ----------------------------------------------------------------------------- options and outputs

@pytest.mark.parametrize("args", [["check", "--timeout", "nan"], ["check", "--timeout", "inf"],
                                  ["check", "--timeout", "0"], ["check", "--timeout", "-1"],
                                  ["check", "--jobs", "0"], ["check", "--jobs", "-1"],
                                  ["report", "specs", "--out", "x", "--max-delta", "-5"],
                                  ["confirm", "--timeout", "nan"]])
def test_every_option_is_validated(capsys, args):
    with pytest.raises(SystemExit) as e:
        main(args)
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "error: argument" in err[0]


def test_confirm_json_is_one_json_document(capsys):
    assert main(["confirm", "mma.m8n8k16.A.u8_s8", "--device", "simulated", "--format", "json"]) == 0
    out, err = capsys.readouterr()
    data = json.loads(out)
    assert data["schema"] == 1 and data["simulated"] is True and "SIMULATED" in err
    assert list(data) == ["schema", "simulated", "results"]  # the contract order, not sorted


def test_probe_refuses_ambiguous_and_unprobeable_ids(tmp_path, capsys):
    assert main(["probe", "m8n8k16", "--emit", str(tmp_path / "a")]) == 2
    assert "matches 3 layouts" in capsys.readouterr().err and not (tmp_path / "a").exists()
    # every bundled layout can be probed; a spec whose C cannot hold its accumulators leaves A with no probe
    bad = tmp_path / "specs"
    bad.mkdir()
    text = (SPECS / "mma.m8n8k16.toml").read_text().splitlines()
    text[56] = text[56].replace("elements_per_register = 1", "elements_per_register = 2")  # C: 2 s32 per register
    (bad / "mma.m8n8k16.toml").write_text("\n".join(text) + "\n")
    assert main(["probe", "mma.m8n8k16.A.u8_s8", "--specs", str(bad), "--emit", str(tmp_path / "b")]) == 2
    err = capsys.readouterr().err
    assert "mma.m8n8k16.A.u8_s8 cannot be probed" in err and "registers" in err, err
    assert not (tmp_path / "b").exists()


@pytest.mark.gpu
def test_confirm_on_a_real_gpu(tmp_path, capsys):
    """The real hardware path: every probe-able instruction of the bundled specs confirmed on this GPU."""
    from verify.hardware.cuda import cuda_devices, find_nvcc
    cc, why = cuda_devices()
    if not cc:
        pytest.skip(f"no GPU: {why}")
    if not find_nvcc():
        pytest.skip("no nvcc: install a CUDA toolkit or `pip install -e '.[cuda]'`")
    out = tmp_path / "obs"
    rc = main(["confirm", "--out", str(out)])
    text = capsys.readouterr().out
    assert "SIMULATED" not in text and list(out.glob("*.json")), text
    for f in out.glob("*.json"):
        assert json.loads(f.read_text())["simulated"] is False
    assert rc in (0, 1), text
