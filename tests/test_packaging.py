"""Installable anywhere: the bundled specs resolver, the wheel's package data, ``--version``, ``--help``."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

import verify
from verify import api
from verify.catalog import bundled
from verify.cli import main

from conftest import ROOT, SPECS

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

COMMANDS = ("check", "list", "table", "pictures", "ingest", "probe", "confirm", "report", "conform", "handoff",
            "crosscheck")


def run(args: list[str], capsys) -> tuple[int, str, str]:
    try:
        rc = main(args)
    except SystemExit as e:  # --help and --version exit through argparse
        rc = int(e.code or 0)
    out, err = capsys.readouterr()
    return rc, out, err


# ----------------------------------------------------------------------------- the resolver

def test_specs_of_a_checkout_of_this_project_come_first(tmp_path, monkeypatch):
    (tmp_path / "specs").mkdir()
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "ptx-layout-verify"\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert bundled.resolve() == bundled.Bundled("specs", "current directory")
    assert bundled.default_paths(None) == ["specs"] and bundled.default_paths(["x.toml"]) == ["x.toml"]


@pytest.mark.parametrize("pyproject", [None, '[project]\nname = "other-project"\n', "x = " + "[" * 5000,
                                       "name = 'ptx-layout-verify'\n", b"\xff\xfe"])
def test_the_specs_of_another_project_are_passed_over_and_named(tmp_path, monkeypatch, capsys, pyproject):
    """U17: a ./specs of another project (no pyproject.toml naming this one) is not checked silently."""
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "theirs.toml").write_text("not = 'a spec'\n", encoding="utf-8")
    if isinstance(pyproject, bytes):
        (tmp_path / "pyproject.toml").write_bytes(pyproject)
    elif pyproject is not None:
        (tmp_path / "pyproject.toml").write_text(pyproject, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    found = bundled.resolve()
    assert found.ignored == "specs" and found.origin in ("installed package", "source checkout")
    assert sorted(p.name for p in Path(found.path).glob("*.toml")) == sorted(p.name for p in SPECS.glob("*.toml"))
    rc, out, err = run(["list"], capsys)
    assert rc == 0 and "mma.m16n8k256.A.b1" in out
    assert err.startswith("ptx-verify: note: ./specs is not a ptx-layout-verify checkout's") and err.count("\n") == 1


def test_elsewhere_the_installed_or_checked_out_specs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    found = bundled.resolve()
    assert found.origin in ("installed package", "source checkout")
    assert sorted(p.name for p in Path(found.path).glob("*.toml")) == sorted(p.name for p in SPECS.glob("*.toml"))


@pytest.mark.slow
def test_check_with_no_path_works_from_any_directory(tmp_path):
    r = subprocess.run([sys.executable, "-m", "verify", "check", "--format", "json"], cwd=tmp_path,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    # what `check --format json` prints in the checkout (recorded, and kept current by test_golden_outputs)
    here = (ROOT / "tests" / "golden" / "check_specs.json").read_text(encoding="utf-8")
    strip = lambda s: re.sub(r'"(specs/|/[^"]*/specs/)', '"', s)  # noqa: E731 - spec paths differ
    assert strip(r.stdout) == strip(here)
    listed = subprocess.run([sys.executable, "-m", "verify", "list"], cwd=tmp_path, capture_output=True, text=True)
    assert listed.returncode == 0 and "mma.m16n8k256.A.b1" in listed.stdout


def test_help_says_where_the_default_specs_are(tmp_path, monkeypatch, capsys):
    rc, out, _ = run(["check", "--help"], capsys)
    assert rc == 0 and "(here: specs, current directory)" in " ".join(out.split())
    monkeypatch.chdir(tmp_path)
    rc, out, _ = run(["check", "--help"], capsys)
    assert rc == 0 and re.search(r"\(here: /\S+, (installed package|source checkout)\)", " ".join(out.split()))


# ----------------------------------------------------------------------------- version and help

def test_version(capsys):
    rc, out, _ = run(["--version"], capsys)
    assert rc == 0 and out == f"ptx-verify {verify.__version__}\n"
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" in pyproject["project"]["dynamic"]
    assert pyproject["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "verify.__version__"}


@pytest.mark.parametrize("command", (None,) + COMMANDS)
def test_every_command_has_help_with_an_example_and_exit_codes(command, capsys):
    rc, out, _ = run(([command] if command else []) + ["--help"], capsys)
    assert rc == 0
    assert re.search(r"^examples?:\n  ptx-verify ", out, re.M), out
    assert re.search(r"^exit codes:\n  0  .*\n(.*\n)*  2  bad input", out, re.M), out
    if command:
        assert "options:" in out


@pytest.mark.slow
def test_help_examples_run(tmp_path, monkeypatch, capsys):
    """The cheap examples in the epilogs are real command lines that work."""
    from verify.cli.epilogs import EPILOGS
    monkeypatch.chdir(ROOT)
    ran = 0
    for name in ("list", "table", "probe", "confirm", "conform", "handoff"):
        for line in EPILOGS[name].splitlines():
            line, _, comment = line.partition("  #")
            line = line.strip()
            if not line.startswith("ptx-verify ") or "--device cuda" in line or "--full >" in line:
                continue
            args = [a.strip('"') for a in line.split()[1:]]
            args = [str(tmp_path / Path(a).name) if a.startswith("/tmp/") or a.endswith(".svg") else a for a in args]
            rc, _, err = run(args, capsys)
            assert rc == (1 if comment.strip().startswith("exit 1") else 0), (line, err)
            ran += 1
    assert ran >= 6


# ----------------------------------------------------------------------------- the package

def test_pyproject_lists_every_package():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    listed = set(pyproject["tool"]["setuptools"]["packages"])
    on_disk = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "verify").rglob("__init__.py")}
    assert listed == on_disk | {"verify.specs"}, "add the new package to [tool.setuptools] packages"
    assert pyproject["tool"]["setuptools"]["package-dir"] == {"verify.specs": "specs"}
    assert pyproject["tool"]["setuptools"]["package-data"] == {"verify.specs": ["*.toml"]}


def _source_copy(dst: Path) -> Path:
    """The files git would ship (tracked and not ignored), so the build does not write into the checkout."""
    r = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip("not a git checkout")
    for rel in r.stdout.splitlines():
        src = ROOT / rel
        if src.is_file() and not rel.startswith(("reports/", "tests/")):
            (dst / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst / rel)
    return dst


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    src = _source_copy(tmp_path_factory.mktemp("src"))
    out = tmp_path_factory.mktemp("wheel")
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", ".", "--no-deps", "-q", "-w", str(out)], cwd=src,
                       capture_output=True, text=True, timeout=600)
    if r.returncode != 0 and re.search(r"No matching distribution|Could not find a version|Network is unreachable|"
                                       r"Failed to establish", r.stdout + r.stderr):
        pytest.skip("no package index to fetch setuptools for the isolated build: " + r.stderr.strip()[-200:])
    assert r.returncode == 0, r.stdout + r.stderr
    (whl,) = out.glob("ptx_layout_verify-*.whl")
    return whl


@pytest.mark.slow
def test_the_wheel_ships_the_specs(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    shipped = sorted(n.split("/")[-1] for n in names if n.startswith("verify/specs/"))
    assert shipped == sorted(p.name for p in SPECS.glob("*.toml"))
    assert "verify/catalog/bundled.py" in names and not any(n.startswith(("specs/", "tests/")) for n in names)
    assert f"-{verify.__version__}-" in wheel.name


@pytest.mark.slow
def test_the_installed_wheel_checks_its_specs_from_anywhere(wheel, tmp_path):
    """A fresh virtual environment with only the wheel installed (its dependencies borrowed from this one)."""
    env_dir = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env_dir)], check=True, timeout=300)
    py = env_dir / "bin" / "python"
    r = subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "-q", "--no-deps",
                        "--no-index", str(wheel)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    site = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    # z3, numpy, tqdm... from this environment, after the new one's own site-packages
    deps = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    Path(site, "borrowed-deps.pth").write_text("\n".join(sorted(deps)) + "\n", encoding="utf-8")
    exe = env_dir / "bin" / "ptx-verify"
    work = tmp_path / "elsewhere"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    where = subprocess.run([str(py), "-c", "import verify; print(verify.__file__)"], cwd=work, capture_output=True,
                           text=True, env=env)
    assert where.stdout.startswith(str(env_dir)), where.stdout + where.stderr  # the installed copy, not ours
    v = subprocess.run([str(exe), "--version"], cwd=work, capture_output=True, text=True, env=env)
    assert v.returncode == 0 and v.stdout == f"ptx-verify {verify.__version__}\n", v.stderr
    h = subprocess.run([str(exe), "check", "--help"], cwd=work, capture_output=True, text=True, env=env)
    assert "installed package" in " ".join(h.stdout.split())
    c = subprocess.run([str(exe), "check"], cwd=work, capture_output=True, text=True, env=env, timeout=600)
    assert c.returncode == 0, c.stdout[-2000:] + c.stderr
    n = len(api.layouts(api.load([str(SPECS)])))
    assert re.search(rf"^{n} layouts\b", c.stdout, re.M), c.stdout[-300:]  # every bundled spec, as in the checkout
    assert str(env_dir) in c.stdout  # the syntax erratum names the installed spec file


# ----------------------------------------------------------------------------- ready-made CI

WORKFLOW = ROOT / ".github" / "workflows" / "layout-check.yml"
HOOKS = ROOT / ".pre-commit-hooks.yaml"


def _run_blocks(text: str) -> list[str]:
    """The shell of every ``run:`` step of a workflow (``run: cmd`` or a ``run: |`` block)."""
    lines = text.split("\n")
    out = []
    for k, line in enumerate(lines):
        m = re.match(r"^(\s*)(?:- )?run: ?(.*)$", line)
        if not m:
            continue
        if m.group(2).strip() != "|":
            out.append(m.group(2).strip())
            continue
        body = []
        indent = None
        for nxt in lines[k + 1:]:
            if nxt.strip() and indent is None:
                indent = len(nxt) - len(nxt.lstrip())
            if nxt.strip() and len(nxt) - len(nxt.lstrip()) < (indent or 0):
                break
            body.append(nxt[indent or 0:])
        out.append("\n".join(body).rstrip() + "\n")
    return out


def _hooks(text: str) -> list[dict]:
    """The hooks of a .pre-commit-hooks.yaml: ``- id:`` items of ``key: value`` lines (scalars, flow lists)."""
    hooks: list[dict] = []
    for line in text.split("\n"):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        m = re.match(r"^(- |  )(\w+): (.*)$", line)
        assert m, f"not a simple key: value line: {line!r}"
        if m.group(1) == "- ":
            hooks.append({})
        value = m.group(3).strip()
        if value.startswith("["):
            hooks[-1][m.group(2)] = [v.strip() for v in value.strip("[]").split(",") if v.strip()]
        elif value in ("true", "false"):
            hooks[-1][m.group(2)] = value == "true"
        else:
            hooks[-1][m.group(2)] = value
    return hooks


@pytest.fixture()
def ci_dir(tmp_path: Path) -> Path:
    """A working directory like the workflow's checkout: specs/ and the baseline (links to ours)."""
    (tmp_path / "specs").symlink_to(SPECS, target_is_directory=True)
    (tmp_path / "tests" / "golden").mkdir(parents=True)
    (tmp_path / "tests" / "golden" / "check_specs.json").symlink_to(ROOT / "tests" / "golden" / "check_specs.json")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    exe = bin_dir / "ptx-verify"  # the installed command, as `pip install .` makes it
    exe.write_text(f"#!/bin/sh\nexec {sys.executable} -m verify \"$@\"\n", encoding="utf-8")
    exe.chmod(0o755)
    return tmp_path


def test_the_workflow_runs_what_the_docs_say():
    text = WORKFLOW.read_text(encoding="utf-8")
    assert "github/codeql-action/upload-sarif@" in text and "sarif_file: results.sarif" in text
    runs = _run_blocks(text)
    assert runs[0] == "python -m pip install ."
    assert 'ptx-verify check --baseline "$BASELINE" --format sarif > results.sarif' in runs[1]
    assert 'ptx-verify check --baseline "$BASELINE" --format junit > results.xml' in runs[1]
    assert "BASELINE: tests/golden/check_specs.json" in text
    assert (ROOT / "tests" / "golden" / "check_specs.json").is_file()


@pytest.mark.slow
def test_the_workflow_commands_against_the_bundled_specs(ci_dir):
    import json
    import xml.etree.ElementTree as ET

    import jsonschema
    runs = _run_blocks(WORKFLOW.read_text(encoding="utf-8"))
    env = {**os.environ, "PATH": f"{ci_dir / 'bin'}{os.pathsep}{os.environ['PATH']}",
           "BASELINE": "tests/golden/check_specs.json", "GITHUB_OUTPUT": str(ci_dir / "github_output"),
           "GITHUB_STEP_SUMMARY": str(ci_dir / "summary.md")}
    for script in runs[1:3]:  # the check and the JUnit summary
        r = subprocess.run(["bash", "-e", "-c", script], cwd=ci_dir, env=env, capture_output=True, text=True,
                           timeout=600)
        assert r.returncode == 0, r.stderr
    assert (ci_dir / "github_output").read_text(encoding="utf-8") == "sarif=0\njunit=0\n"
    schema = json.loads((ROOT / "tests" / "data" / "sarif" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
    log = json.loads((ci_dir / "results.sarif").read_text(encoding="utf-8"))
    assert not list(jsonschema.Draft4Validator(schema).iter_errors(log))
    assert not [r for r in log["runs"][0]["results"] if r["level"] == "error"]
    root = ET.parse(ci_dir / "results.xml").getroot()
    assert root.get("failures") == "0" and int(root.get("tests")) > 500
    summary = (ci_dir / "summary.md").read_text(encoding="utf-8")
    assert summary.startswith("### PTX layout check\n") and ": 0 failures, 0 errors" in summary
    final = runs[-1]
    assert final == 'exit "${{ steps.check.outputs.sarif }}"'


@pytest.mark.slow
def test_the_pre_commit_hooks(ci_dir):
    hooks = {h["id"]: h for h in _hooks(HOOKS.read_text(encoding="utf-8"))}
    assert set(hooks) == {"ptx-verify-check", "ptx-verify-baseline"}
    for h in hooks.values():
        assert h["language"] == "python" and h["entry"].startswith("ptx-verify ") and h["name"] and h["description"]
    env = {**os.environ, "PATH": f"{ci_dir / 'bin'}{os.pathsep}{os.environ['PATH']}"}
    h = hooks["ptx-verify-check"]
    assert h["pass_filenames"] is True and re.search(h["files"], "specs/mma.m16n8k256.toml")
    r = subprocess.run([*h["entry"].split(), "specs/mma.m16n8k256.toml", "specs/mma.m8n8k16.toml"],
                       cwd=ci_dir, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    h = hooks["ptx-verify-baseline"]
    assert h["pass_filenames"] is False
    r = subprocess.run([*h["entry"].split(), *h["args"]], cwd=ci_dir, env=env, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0 and "0 differences" in r.stdout, r.stdout[-500:] + r.stderr
