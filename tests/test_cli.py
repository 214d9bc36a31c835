"""CLI contract: exit codes, JSON schema 1, bad input -> one line with file:line:col and exit 2."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from verify.cli import main

from conftest import ROOT, SPECS

GOOD = (SPECS / "mma.m8n8k16.toml").read_text()


def run(args: list[str], capsys) -> tuple[int, str, str]:
    rc = main(args)
    out, err = capsys.readouterr()
    return rc, out, err


def write(tmp_path: Path, text: str | bytes, name: str = "s.toml") -> Path:
    p = tmp_path / name
    p.write_bytes(text if isinstance(text, bytes) else text.encode())
    return p


def test_check_good_spec_exit_0(capsys):
    rc, out, _ = run(["check", str(SPECS / "mma.m8n8k16.toml")], capsys)
    assert rc == 0
    assert "mma.m8n8k16.A.u8_s8" in out and "surjective:ok" in out


def test_check_json_contract(capsys):
    rc, out, _ = run(["check", str(SPECS / "mma.m8n8k16.toml"), "--format", "json"], capsys)
    data = json.loads(out)
    assert rc == 0 and data["schema"] == 1
    lay = data["layouts"][0]
    for key in ("id", "instruction", "shape", "operand", "types", "variant", "threads", "elements",
                "rows", "cols", "source", "checks"):
        assert key in lay
    assert lay["shape"] == {"m": 8, "n": 8, "k": 16}
    assert lay["types"] == ["s8", "u8"] and lay["variant"] is None
    assert set(lay["source"]) == {"file", "line", "section"}
    for name in ("count", "in_range", "injective", "surjective"):
        c = lay["checks"][name]
        assert c["status"] == "proved" and c["expected"] == "proved" and "seconds" in c and "counterexample" in c
    assert data["findings"] == [] or all(f["as_expected"] for f in data["findings"])


@pytest.mark.slow
def test_check_json_is_byte_identical(capsys):
    """Two independent runs: one in worker processes, one here after every memoised verdict is forgotten."""
    from verify.checks.fragment import clear_caches
    _, a, _ = run(["check", "--format", "json", "--jobs", "2"], capsys)
    clear_caches()
    _, b, _ = run(["check", "--format", "json", "--jobs", "1"], capsys)
    assert a == b and a.startswith("{")


def test_unexpected_refutation_exits_1_with_counterexample(tmp_path, capsys):
    bad = GOOD.replace("(threadID_in_group * 4) + i       for ai", "(threadID_in_group * 4) + i + 1 for ai")
    rc, out, _ = run(["check", str(write(tmp_path, bad)), "--format", "json"], capsys)
    data = json.loads(out)
    assert rc == 1
    a = data["layouts"][0]["checks"]
    assert a["in_range"]["status"] == "refuted"
    cex = a["in_range"]["counterexample"]
    assert set(cex) >= {"lane", "i", "element", "row", "col"} and cex["col"] == 16
    inj = a["injective"]
    assert inj["status"] == "proved"
    sur = a["surjective"]["counterexample"]
    assert sur == {"row": sur["row"], "col": 0}
    f = [f for f in data["findings"] if f["check"] == "in_range"][0]
    assert f["layout"] == "mma.m8n8k16.A.u8_s8" and "lane" in f["message"]


def test_expected_erratum_keeps_exit_0(tmp_path, capsys):
    bad = GOOD.replace("(threadID_in_group * 4) + i       for ai", "(threadID_in_group * 2) + i for ai")
    bad = bad.replace('figure = "mma-8816-A-i8"', 'figure = "mma-8816-A-i8"\nexpect = { in_range = "proved", injective = "refuted", surjective = "refuted" }\n'
                      'erratum = "the doc multiplies by 2"\ncorrected = { formula = "row = %laneid >> 2\\ncol = (%laneid % 4) * 4 + i" }')
    rc, out, _ = run(["check", str(write(tmp_path, bad))], capsys)
    assert rc == 0, out
    assert "known erratum" in out and "both land at cell" in out


def test_list_and_table(capsys):
    rc, out, _ = run(["list", "--format", "json"], capsys)
    ids = [x["id"] for x in json.loads(out)["layouts"]]
    assert rc == 0 and "mma.m16n8k16.A.f16_bf16" in ids and len(ids) == len(set(ids))
    rc, out, _ = run(["table", "mma.m16n8k16.A.f16_bf16", "--format", "json"], capsys)
    t = json.loads(out)
    assert rc == 0 and t["rows"] == 16 and t["cols"] == 16 and len(t["entries"]) == 256
    e = [e for e in t["entries"] if e["lane"] == 5 and e["i"] == 3][0]
    assert (e["element"], e["row"], e["col"]) == ("a3", 9, 3)
    rc, out, _ = run(["table", "mma.m8n8k4.f16.C.f32", "--format", "json"], capsys)
    assert all("mma" in e for e in json.loads(out)["entries"])
    rc, out, _ = run(["table", "mma.m16n8k16.A.f16_bf16"], capsys)
    assert "T5:a3" in out.splitlines()[2 + 9]


def test_table_marks_collisions_and_holes(tmp_path, capsys):
    bad = GOOD.replace("(threadID_in_group * 4) + i       for ai", "(threadID_in_group * 2) + i for ai")
    rc, out, _ = run(["table", "A.u8_s8", "--specs", str(write(tmp_path, bad))], capsys)
    assert rc == 0 and "!" in out and "empty cells (.)" in out


def test_unknown_layout_id_exit_2(capsys):
    rc, _, err = run(["table", "no.such.layout"], capsys)
    assert rc == 2 and "no layout" in err


BAD_INPUTS = {
    "syntax": (GOOD.replace("row = groupID\n\ncol =  (", "row = (groupID\n\ncol =  ("), "expected ')'"),
    "unknown identifier": (GOOD.replace("row = groupID\n\ncol =  (", "row = groupId\n\ncol =  ("), "unknown identifier 'groupId'"),
    "division by zero": (GOOD.replace("row = groupID\n\ncol =  (", "row = groupID / 0\n\ncol =  ("), "division by zero"),
    "negative count": (GOOD.replace("registers = 1\n", "registers = -1\n", 1), "out of range"),
    "huge value": (GOOD.replace("row = groupID\n\ncol =  (", "row = groupID * 99999999999\n\ncol =  ("), "too large"),
    "huge shift": (GOOD.replace("row = groupID\n\ncol =  (", "row = groupID << 62 << 62\n\ncol =  ("), "64"),
    "missing field": (GOOD.replace('register_type = "b32"\n', "", 1), "missing field 'register_type'"),
    "unknown field": (GOOD.replace("registers = 1\n", "registers = 1\nregisterz = 2\n", 1), "unknown field 'registerz'"),
    "toml": (GOOD.replace("[instruction]", "[instruction"), "TOML"),
    "injection": (GOOD.replace("row = groupID\n\ncol =  (", "row = __import__('os').system('touch PWNED')\n\ncol =  ("), "unexpected character"),
}


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_bad_input_one_line_exit_2(case, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    text, words = BAD_INPUTS[case]
    p = write(tmp_path, text)
    rc, out, err = run(["check", str(p), "--format", "json"], capsys)
    assert rc == 2, (case, err)
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and words in lines[0], err
    assert "Traceback" not in err
    assert not (tmp_path / "PWNED").exists()
    assert lines[0].startswith(f"{p}:"), lines[0]
    _, line, col = lines[0].split(":")[:3]
    assert int(line) >= 1 and int(col) >= 1


def test_evaluation_error_in_a_worker_process_is_one_line(tmp_path, capsys):
    """Division by zero found while checking in parallel still names file:line:col."""
    for name in ("mma.m8n8k4.f16.toml", "mma.m16n8k16.float.toml", "mma.m16n8k16.int.toml"):
        (tmp_path / name).write_text((SPECS / name).read_text())
    bad = GOOD.replace("row = groupID\n\ncol =  (", "row = groupID / (%laneid - 3)\n\ncol =  (")
    p = write(tmp_path, bad, "z.toml")
    rc, out, err = run(["check", str(tmp_path), "--jobs", "2"], capsys)
    line_no = next(k for k, s in enumerate(bad.split("\n"), 1) if "/ (%laneid - 3)" in s)
    assert rc == 2 and out == ""
    assert err.strip() == f"{p}:{line_no}:15: error: mma.m8n8k16.A.u8_s8: division by zero"


def test_syntax_error_points_at_file_line_and_column(tmp_path, capsys):
    text = GOOD.replace("row = groupID\n\ncol =  (", "row = groupID +\n\ncol =  (")
    p = write(tmp_path, text)
    rc, _, err = run(["check", str(p)], capsys)
    lines = text.split("\n")
    line_no = next(k for k, s in enumerate(lines, 1) if s.startswith("row = groupID +"))
    assert rc == 2 and err.startswith(f"{p}:{line_no}:16: error:"), err


def test_non_utf8_byte(tmp_path, capsys):
    p = write(tmp_path, GOOD.encode().replace(b"Matrix Fragments", b"Matrix \xff Fragments"))
    rc, _, err = run(["check", str(p)], capsys)
    assert rc == 2 and ":8:17:" in err and "not valid UTF-8" in err


def test_missing_path_exit_2(capsys):
    rc, _, err = run(["check", "does/not/exist.toml"], capsys)
    assert rc == 2 and "no such file" in err


def test_console_script_and_module_entry_points():
    r = subprocess.run([sys.executable, "-m", "verify", "check", str(SPECS / "mma.m8n8k16.toml")],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0 and "3 layouts" in r.stdout


def test_sparse_table_metadata(capsys):
    rc, out, _ = run(["table", "mma.sp.m16n8k32.A.u8_s8", "--format", "json", "--metadata", "0xEEEEEEEE"], capsys)
    t = json.loads(out)
    assert rc == 0 and t["metadata"] == "0xeeeeeeee" and (t["rows"], t["cols"]) == (16, 16)
    e = [e for e in t["entries"] if e["lane"] == 0 and e["i"] in (0, 1)]
    assert [(x["col"], x["chunk"], x["logical_col"]) for x in e] == [(0, 0, 2), (1, 0, 3)]
    rc, out, _ = run(["table", "mma.sp.m16n8k32.A.u8_s8", "--metadata", "0x4444"], capsys)
    assert rc == 0 and "compressed" in out and "logical" in out and "invalid metadata" in out
    rc, _, err = run(["table", "mma.sp.m16n8k32.A.u8_s8", "--metadata", "0x1ffffffff"], capsys)
    assert rc == 2 and "32-bit" in err


def test_check_on_doc_pages_reports_text_errata(docs_dir, capsys):
    rc, out, _ = run(["check", str(docs_dir / "9-7-14-5-9-matrix-fragments-for-mma-m16n8k16-with-integer-type.md"),
                      "--format", "json"], capsys)
    data = json.loads(out)
    assert rc == 0
    kinds = {(f["kind"], f["line"]) for f in data["doc_findings"]}
    assert ("element-list-punctuation", 44) in kinds and ("element-list-duplicate", 74) in kinds
    rc, out, _ = run(["check", str(docs_dir / "9-7-14-5-9-matrix-fragments-for-mma-m16n8k16-with-integer-type.md")], capsys)
    assert "errata in the doc text" in out and "b0, b1. b2. b3" in out


def test_bad_pages_and_empty_inputs_exit_2(tmp_path, capsys):
    page = tmp_path / "bad.md"
    page.write_bytes(b"# 9.7.14.5.3. x\n\xff\n")
    rc, out, err = run(["check", str(page)], capsys)
    assert rc == 2 and out == "" and err.strip() == f"{page}:2:1: error: byte 0xff is not valid UTF-8"
    empty = tmp_path / "empty.md"
    empty.write_text("# nothing here\n")
    rc, _, err = run(["check", str(empty)], capsys)
    assert rc == 2 and "nothing to check" in err


@pytest.mark.slow
def test_json_is_byte_identical_across_processes_and_hash_seeds():
    import os
    outs = set()
    for seed, jobs in (("1", "1"), ("4242", "2")):
        r = subprocess.run([sys.executable, "-m", "verify", "check", "specs/mma.sp.m16n8k32.u8_s8.toml",
                            "specs/mma.m8n8k4.f16.toml", "specs/mma.m16n8k256.toml", "--format", "json", "--jobs", jobs],
                           cwd=ROOT, capture_output=True, text=True, env={**os.environ, "PYTHONHASHSEED": seed})
        assert r.returncode == 0, r.stderr
        outs.add(r.stdout)
    assert len(outs) == 1


@pytest.mark.parametrize("argv", [
    ["check"], ["check", "--jobs", "1", "--timeout", "3", "--format", "json", "specs"],
    ["check", "a.toml", "b.md", "--docs", "d", "--baseline", "x.json", "--update-baseline"],
    ["check", "--observations", "obs", "--against", "s", "--references", "--timings"],
])
def test_the_check_only_parser_reads_a_check_line_as_the_whole_parser_does(argv: list[str], capsys) -> None:
    """``check`` builds a parser with only its own subcommand (no other command's module, no notation loads) for
    a line that uses none of the options of a layout on its own (``--triton FILE``...): the same values as the
    whole parser's (whose other options stay at their defaults) and the same errors; ``--help`` and any other
    option get the whole parser."""
    from verify.cli.main import build_parser
    whole, only = build_parser(), build_parser("check", argv[1:])
    assert only is not whole and set(only._subparsers._group_actions[0].choices) == {"check"}
    got, want = vars(only.parse_args(argv)), vars(whole.parse_args(argv))
    assert got == {k: want[k] for k in got}
    assert all(v in (None, [], ()) or k == "given_flags" for k, v in want.items() if k not in got)
    for more in (["--help"], ["--triton", "x.ttgir"], ["--cute=(4,8):(1,4)"], ["specs", "--tile", "16x8"]):
        assert build_parser("check", more) is whole
    for bad in (["check", "--jobs", "x"], ["check", "--format", "nope"], ["check", "--bogus"]):
        errors = []
        for p in (whole, only):
            with pytest.raises(SystemExit) as e:
                p.parse_args(bad)
            errors.append((e.value.code, capsys.readouterr().err))
        assert errors[0] == errors[1] and errors[0][0] == 2 and errors[0][1]
