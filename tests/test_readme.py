"""The README is a contract: its command table (and docs/commands.md's) names real subcommands and options, it
shows an example of every command, its test command is what CI runs, and the proof script of the Python API's
page runs as shown.  Its transcripts, and every page's under docs/, are ``tests/test_docs.py``'s.  A renamed
option or a changed verdict breaks these tests, not a user's first try."""
from __future__ import annotations

import re

import pytest

from conftest import ROOT
from verify.cli.main import build_parser

README = (ROOT / "README.md").read_text(encoding="utf-8")


def _table_rows(text: str, heading: str) -> list[tuple[str, str]]:
    """(subcommand, the whole row) for every row of the commands table under ``heading``."""
    section = text.split(heading, 1)[1].split("\n## ", 1)[0]
    return [(m.group(1), m.group(0)) for m in re.finditer(r"^\| `([a-z]+)[^|]*.*$", section, re.M)]


def _subparsers() -> dict:
    parser = build_parser()
    action = next(a for a in parser._actions if a.dest == "command")
    return action.choices


@pytest.mark.parametrize("page,heading", [("README.md", "## Commands"), ("docs/commands.md", "## The commands")])
def test_command_table_names_every_subcommand_and_only_real_options(page: str, heading: str) -> None:
    """The README's table (one line per command) and docs/commands.md's (every option)."""
    subs = _subparsers()
    rows = _table_rows((ROOT / page).read_text(encoding="utf-8"), heading)
    assert rows, f"the commands table of {page} was not found"
    assert {name for name, _ in rows} == set(subs), f"{page}'s table and the CLI's subcommands differ"
    for name, row in rows:
        known = {s for a in subs[name]._actions for s in a.option_strings}
        for opt in re.findall(r"(?<![\w-])--[a-z][a-z-]*", row):
            assert opt in known, f"{page} says `{name} {opt}`, the CLI has no such option"


def test_the_readme_is_a_front_door() -> None:
    """At most about 250 lines; an example of every command; the guides and the reference it points to exist
    (tests/test_docs.py holds every link and transcript)."""
    from transcripts import transcripts
    assert len(README.splitlines()) <= 260
    shown = {t.argv[0] for t in transcripts(ROOT / "README.md")}
    assert shown == set(_subparsers()), sorted(set(_subparsers()) - shown)
    for page in ("docs/commands.md", "docs/reference/json.md", "docs/reference/api.md", "docs/reference/formula.md",
                 "docs/reference/spec-format.md", "benchmarks/README.md", "docs/testing.md"):
        assert f"]({page})" in README, page


_HARNESS = r'''
import ast, sys
code = sys.stdin.read()
ns = {}
for node in ast.parse(code).body:
    if isinstance(node, ast.Expr):
        value = eval(compile(ast.Expression(node.value), "README", "eval"), ns)
        print(f"{node.end_lineno}\t{value!r}")
    else:
        exec(compile(ast.Module([node], []), "README", "exec"), ns)
'''


@pytest.mark.slow
def test_the_python_api_example_runs_and_shows_its_results() -> None:
    """The proof-script block of docs/reference/api.md runs as shown, and every value its comments show is what it
    gives (``# (9, 3)``, ``# "equal"``, ``# Proof(status='proved')`` on the line after a call)."""
    import subprocess
    import sys
    api_page = (ROOT / "docs" / "reference" / "api.md").read_text(encoding="utf-8")
    [block] = re.findall(r"^```python\n(.*?)^```", api_page, re.S | re.M)
    r = subprocess.run([sys.executable, "-c", _HARNESS], input=block, capture_output=True, text=True, cwd=ROOT,
                       timeout=600, check=False)
    assert r.returncode == 0, r.stderr
    lines = block.splitlines()
    shown = 0
    for out in r.stdout.splitlines():
        lineno, value = out.split("\t", 1)
        here = lines[int(lineno) - 1]
        below = lines[int(lineno)] if int(lineno) < len(lines) else ""
        comment = here.split("#", 1)[1].strip() if "#" in here else below.strip().removeprefix("#").strip()
        claim = re.match(r"""(\([^)]*\)|"[^"]*"|\w+\([^)]*\))""", comment)
        if claim:
            shown += 1
            assert value.replace("'", '"') == claim.group(1).replace("'", '"').split("  ")[0], (here, value)
    assert shown >= 4


def test_the_check_text_excerpt_is_todays_output(catalog_report) -> None:
    """docs/commands.md's excerpt of ``check`` text output: each line it shows is a line ``check`` prints today."""
    from verify.outputs.text import check_text
    page = (ROOT / "docs" / "commands.md").read_text(encoding="utf-8")
    section = page.split("## `check` text output", 1)[1].split("\n## ", 1)[0]
    [excerpt] = re.findall(r"^```\n(.*?)^```", section, re.S | re.M)
    printed = set(check_text(catalog_report[1]).splitlines())
    shown = [ln for ln in excerpt.splitlines() if ln.strip() != "..."]
    assert len(shown) >= 8
    assert [ln for ln in shown if ln not in printed] == []


def test_ci_runs_the_readmes_test_command_and_then_the_integration_tests() -> None:
    """The README's second command is the fast tier (``-m "not slow"``); ``.ci/run`` runs exactly it, and then
    the integration tests it deselects, so no test is left out of CI."""
    blocks = re.findall(r"```sh\n(.*?)```", README, re.S)
    test_command = blocks[1].strip().split(" && ")[-1]
    assert test_command == '.venv/bin/python -m pytest -q -n auto -m "not slow"'
    ci = [line for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
          if line.startswith(".ci-venv/bin/python -m pytest")]
    assert ci == [test_command.replace(".venv/", ".ci-venv/"), ".ci-venv/bin/python -m pytest -q -n auto -m slow"]
    assert "`.venv/bin/python -m pytest -q -n auto -m slow`" in README
