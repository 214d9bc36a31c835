"""Messages that say what is wrong (issue 35, item 17): each test runs the input a new user tried and holds the
message to what the input really lacks, with the exit code and the one line of every bad input."""
from __future__ import annotations

import ast
import os
import re

import pytest
from conftest import DOCS, ROOT, cli

from verify import files

BLOCK_TILE = ("row = (tid % 32) // 4 + 8 * ((i // 2) % 2)\n"
              "col = 8 * ((tid // 32) % 2) + (tid % 4) * 2 + (i % 2)\n")  # warps 2 and 3 repeat warps 0 and 1


def one_line(rc: int, out: str, err: str) -> str:
    assert rc == 2 and out == "" and err.count("\n") == 1 and "Traceback" not in err, (rc, out, err)
    return err.strip()


def test_a_tma_box_without_its_type_asks_for_the_type_not_another_box(capsys):
    err = one_line(*cli(capsys, "banks", "--tma", "64x64:128B", "--access", "ldmatrix.x4"))
    assert "--type" in err and "element type" in err and "ROWSxCOLS" not in err, err
    rc, out, _ = cli(capsys, "banks", "--tma", "64x64:128B", "--type", "f16", "--access", "ldmatrix.x4")
    assert rc == 0 and "conflict_free  ok" in out
    err = one_line(*cli(capsys, "banks", "--tma", "64x64", "--type", "f16", "--access", "ldmatrix.x4"))
    assert "ROWSxCOLS:MODE" in err  # a box written wrong is still said to be


@pytest.mark.parametrize("argv", [["table", "wgmma.m64nNk16.D.f32"],
                                  ["conform", "wgmma.m64nNk16.D.f32", "--cute", "(128,4):(1,128)"],
                                  ["banks", "--id", "wgmma.shared.atom.K.128B", "--type", "f16", "--access",
                                   "ldmatrix.x4"]])
def test_a_parameter_value_too_large_is_said_to_be_too_large(capsys, argv):
    err = one_line(*cli(capsys, *argv, "--param", "N=99999999999999999999"))
    assert "too large" in err and "write NAME=VALUE" not in err, err
    assert "999999999999..." in err  # the value is shown, cut short


def test_diff_of_specs_and_pages_names_every_kind_of_layout_outside(capsys):
    if not DOCS.is_dir():
        pytest.skip(f"no doc pages at {DOCS}")
    rc, out, err = cli(capsys, "diff", str(ROOT / "specs"), str(DOCS))
    line = next(x for x in out.splitlines() if x.startswith("outside"))
    names = line.split(": ", 1)[1].rsplit("): not compared", 1)[0].split(", ")
    assert all(n.strip() for n in names), line  # no empty name (", ldmatrix, ..." before)
    assert "storage layouts" in names, line


def test_a_read_only_file_system_is_not_called_permission_denied(tmp_path, monkeypatch):
    class ReadOnly:
        f_flag = getattr(os, "ST_RDONLY", 1)

    real = os.statvfs
    monkeypatch.setattr(os, "statvfs", lambda p: ReadOnly() if str(p).startswith(str(tmp_path)) else real(p))
    monkeypatch.setattr(os, "ST_RDONLY", ReadOnly.f_flag, raising=False)
    for check in (files.check_writable_dir, files.check_writable_file):
        with pytest.raises(files.OutputError) as e:
            check(tmp_path / "out")
        assert "read-only file system" in str(e.value) and "permission denied" not in str(e.value)


def test_a_block_tile_witness_names_threads_not_lanes(capsys, tmp_path):
    code = tmp_path / "tile.txt"
    code.write_text(BLOCK_TILE, encoding="utf-8")
    rc, out, err = cli(capsys, "conform", "mma.m16n8k16.float.C.f32", "--formula", str(code), "--threads", "128")
    assert rc == 0 and "injective: thread 0 element c0 and thread 64 element c0" in out, out
    assert "lane 64" not in out
    rc, out, err = cli(capsys, "conform", "mma.m16n8k16.float.C.f32", "--formula", str(code), "--threads", "128",
                       "--warps", "2x2", "--block", "32x16")
    assert rc == 1 and "first difference: thread 64 element c0" in out and "within threads" in out, out
    assert not re.search(r"lane (6[4-9]|[7-9]\d|1\d\d)", out), out
    rc, out, err = cli(capsys, "conform", "mma.m16n8k16.float.C.f32", "--formula", str(code))  # one warp: lanes
    assert "thread" not in out.split("the given itself")[0]


@pytest.mark.parametrize("name,text,flag", [
    ("t.json", '{"register": [[0, true]], "lane": [[0,1],[0,2],[0,4],[1,0],[2,0]]}', "--triton"),
    ("tb.json", '{"entries": [{"lane": 0, "i": true, "row": 0, "col": 0}]}', "--table"),
    ("tn.json", '{"entries": [{"lane": 0, "i": 0, "row": null, "col": false}]}', "--table"),
])
def test_a_json_value_is_echoed_as_json(capsys, tmp_path, name, text, flag):
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    err = one_line(*cli(capsys, "conform", "mma.m16n8k16.float.C.f32", flag, str(p)))
    assert "True" not in err and "False" not in err and re.search(r"found (true|false)\b", err), err


def test_a_baseline_schema_is_echoed_as_json(capsys, tmp_path):
    p = tmp_path / "b.json"
    p.write_text('{"schema": true, "layouts": []}', encoding="utf-8")
    err = one_line(*cli(capsys, "check", str(ROOT / "specs" / "mma.m8n8k16.toml"), "--baseline", str(p)))
    assert "schema is true" in err, err


@pytest.mark.parametrize("argv,hint", [
    (["check", "--bogus"], None),
    (["banks", "--tma", "64x64:128B", "--tyep", "f16", "--access", "ldmatrix.x4"], "--type"),
    (["conform", "mma.m16n8k16.A.f16_bf16", "--cute", "(32,8):(8,1)", "--trtion", "x"], "--triton"),
    (["table", "mma.m16n8k16.A.f16_bf16", "--fromat", "json"], "--format"),
])
def test_a_misspelled_option_points_to_the_commands_own_help(capsys, argv, hint):
    rc, out, err = cli(capsys, *argv)
    assert rc == 2 and out == "" and "Traceback" not in err
    assert err.startswith(f"ptx-verify {argv[0]}: error: unrecognized arguments") and \
        f"(see ptx-verify {argv[0]} --help)" in err, err
    if hint:
        assert f"did you mean {hint}?" in err, err


def _environment_the_tests_read() -> set[str]:
    names: set[str] = set()
    for path in sorted((ROOT / "tests").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
                    and isinstance(node.func, ast.Attribute) and node.func.attr in ("get", "getenv") \
                    and isinstance(node.args[0].value, str) and node.args[0].value.startswith("PTX_"):
                names.add(node.args[0].value)
    return names


def test_every_environment_variable_a_test_asks_for_is_documented():
    """A skipped test that asks for ``PTX_CUTLASS_INCLUDE`` must be able to say where it is explained."""
    read = _environment_the_tests_read()
    assert "PTX_CUTLASS_INCLUDE" in read
    docs = "".join(p.read_text(encoding="utf-8") for p in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))])
    assert not sorted(n for n in read if n not in docs)
