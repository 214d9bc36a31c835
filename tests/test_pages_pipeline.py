"""Doc pages through one pipeline, judged the same wherever they are: which pages take part is what the
command line names (no environment variable, no directory search), a section given twice is judged
in every copy or refused, every `error` the text has fails the run unless the reviewed specs record
it, ``diff`` of specs against pages tells what pages cannot state from what they dropped, and an empty
observations directory is bad input."""
from __future__ import annotations

import json
import os
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


def test_no_directory_beside_the_page_is_searched(tmp_path, docs_dir):
    """A ``ptx-isa-*`` directory next to the page's directory (searched before) changes nothing; the
    same page in the full doc directory is judged as the copy alone is."""
    beside = tmp_path / "ptx-isa-9.0"
    shutil.copytree(docs_dir, beside)
    page = copy_page(docs_dir, P623, tmp_path / "mine")
    args = ["check", str(page), "--format", "json", "--jobs", "1"]
    near = run_cli(args, tmp_path, {})
    far = tmp_path / "elsewhere"
    shutil.copytree(page.parent, far)
    alone = run_cli(["check", str(far / P623), "--format", "json", "--jobs", "1"], tmp_path, {})
    assert near.returncode == alone.returncode == 1
    assert near.stdout.replace("mine/", "elsewhere/") == alone.stdout
    in_docs = run_cli(["check", str(beside / P623), "--format", "json", "--jobs", "1"], tmp_path, {})
    assert in_docs.returncode == 1 and in_docs.stdout.replace("ptx-isa-9.0/", "mine/") == near.stdout


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
