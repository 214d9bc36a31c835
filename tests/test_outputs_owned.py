"""No command that writes replaces a file it did not make (issue 35, item 9).

``probe ID --emit .`` in a project root overwrote its ``README.md``; ``pictures`` and ``report`` already refused a
directory holding other files.  Every writing command now applies one rule (``verify.files.check_output_dir`` /
``check_output_file``): each is tried on a directory (or file) of a user's, which it must refuse before any work,
leaving every byte as it was, and on its own earlier output, which it may replace."""
from __future__ import annotations

from pathlib import Path

import pytest
from conftest import DOCS, ROOT, cli

from verify import files

ID = "mma.m16n8k16.float.C.f32"
SPEC = str(ROOT / "specs" / "mma.m8n8k16.toml")
USER_README = "# my project\n\nnotes nobody may lose\n"


def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "README.md").write_text(USER_README, encoding="utf-8")
    (root / "pyproject.toml").write_text("[project]\nname = 'mine'\n", encoding="utf-8")
    return root


def snapshot(d: Path) -> dict[str, bytes]:
    return {str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


def refused(rc: int, out: str, err: str, *words: str) -> None:
    assert rc == 2 and out == "" and err.count("\n") == 1 and "Traceback" not in err, (rc, out, err)
    for w in words:
        assert w in err, (w, err)


def test_probe_into_a_project_root_keeps_its_readme(capsys, tmp_path):
    root = project(tmp_path)
    before = snapshot(root)
    refused(*cli(capsys, "probe", ID, "--emit", str(root)), "README.md", "pyproject.toml", "`probe` does not write")
    assert snapshot(root) == before
    (root / "pyproject.toml").unlink()  # the README alone is still not probe's
    refused(*cli(capsys, "probe", ID, "--emit", str(root)), "README.md")
    assert (root / "README.md").read_text(encoding="utf-8") == USER_README


def test_probe_adds_to_and_replaces_its_own_output(capsys, tmp_path):
    out = tmp_path / "probes"
    rc, _, err = cli(capsys, "probe", ID, "--emit", str(out))
    assert rc == 0, err
    rc, stdout, err = cli(capsys, "probe", "mma.m16n8k16.A.f16_bf16", "--emit", str(out))  # README and .cu are its own
    assert rc == 0 and "README.md" in stdout, err
    (out / "mine.cu").write_text("// my kernel\n", encoding="utf-8")
    refused(*cli(capsys, "probe", ID, "--emit", str(out)), "mine.cu")


def test_ingest_out_refuses_a_spec_it_did_not_write(capsys, tmp_path):
    if not DOCS.is_dir():
        pytest.skip(f"no doc pages at {DOCS}")
    page = str(DOCS / "9-7-14-5-3-matrix-fragments-for-mma-m8n8k16.md")
    out = tmp_path / "specs"
    out.mkdir()
    (out / "mma.m8n8k16.toml").write_text("# my reviewed spec\nschema = 1\n", encoding="utf-8")
    before = snapshot(out)
    refused(*cli(capsys, "ingest", page, "--out", str(out), "--no-check"), "mma.m8n8k16.toml", "`ingest`")
    assert snapshot(out) == before
    (out / "mma.m8n8k16.toml").unlink()
    assert cli(capsys, "ingest", page, "--out", str(out), "--no-check")[0] == 0
    assert cli(capsys, "ingest", page, "--out", str(out), "--no-check")[0] == 0  # its own spec: replaced


def test_confirm_out_refuses_a_directory_of_other_files(capsys, tmp_path):
    root = project(tmp_path)
    before = snapshot(root)
    refused(*cli(capsys, "confirm", ID, "--device", "cuda", "--out", str(root)), "README.md", "`confirm`")
    assert snapshot(root) == before


@pytest.mark.parametrize("argv", [["pictures", SPEC, "--out"], ["report", SPEC, "--out"]])
def test_pictures_and_report_still_refuse_other_files(capsys, tmp_path, argv):
    root = project(tmp_path)
    before = snapshot(root)
    refused(*cli(capsys, *argv, str(root)), "README.md")
    assert snapshot(root) == before


def test_pictures_refuse_an_svg_ptx_verify_did_not_draw(capsys, tmp_path):
    out = tmp_path / "pics"
    out.mkdir()
    (out / "diagram.svg").write_text('<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg"/>\n',
                                     encoding="utf-8")
    refused(*cli(capsys, "pictures", SPEC, "--out", str(out)), "diagram.svg")
    assert (out / "diagram.svg").exists()
    (out / "diagram.svg").unlink()
    assert cli(capsys, "pictures", SPEC, "--out", str(out))[0] == 0
    assert cli(capsys, "pictures", SPEC, "--out", str(out))[0] == 0  # its own pictures: replaced


@pytest.mark.parametrize("argv", [
    ["table", ID, "--format", "svg", "--out"],
    ["banks", "--tma", "64x64:128B", "--type", "f16", "--access", "ldmatrix.x4", "--svg"],
    ["check", SPEC, "--update-baseline", "--baseline"],
])
def test_a_file_output_never_replaces_a_file_of_another_kind(capsys, tmp_path, argv):
    mine = tmp_path / "notes.md"
    mine.write_text(USER_README, encoding="utf-8")
    refused(*cli(capsys, *argv, str(mine)), "notes.md", "remove it or choose another name")
    assert mine.read_text(encoding="utf-8") == USER_README
    own = tmp_path / "own.out"
    rc, _, err = cli(capsys, *argv, str(own))
    assert rc in (0, 1) and own.stat().st_size > 0, err
    rc, _, err = cli(capsys, *argv, str(own))  # what it wrote itself: replaced
    assert rc in (0, 1), err
    empty = tmp_path / "empty.out"
    empty.write_text("", encoding="utf-8")
    assert cli(capsys, *argv, str(empty))[0] in (0, 1)


def test_the_rule_reads_no_link_and_no_file_of_another_name(tmp_path):
    owns = files.Owns("`x`", (("*.cu", "by ptx-layout-verify (verify/"),))
    good = tmp_path / "a.cu"
    good.write_text("// Probe\n// Generated by ptx-layout-verify (verify/probes.py)\n", encoding="utf-8")
    (tmp_path / "b.txt").write_text("// Generated by ptx-layout-verify (verify/probes.py)\n", encoding="utf-8")
    (tmp_path / "c.cu").symlink_to(good)
    assert owns.owns(good) and not owns.owns(tmp_path / "b.txt") and not owns.owns(tmp_path / "c.cu")
    with pytest.raises(files.OutputError) as e:
        files.check_output_dir(tmp_path, owns)
    assert "b.txt" in str(e.value) and "c.cu" in str(e.value) and "a.cu" not in str(e.value)
