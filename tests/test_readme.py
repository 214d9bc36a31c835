"""The README is a contract: its command table names real subcommands and options, every command line
it shows parses, and every transcript it shows (``$ ptx-verify ...`` followed by output) is what the
tool prints today.  A renamed option or a changed verdict breaks this test, not a user's first try."""
from __future__ import annotations

import contextlib
import io
import re
import shlex
from pathlib import Path

import pytest

from verify.cli.main import build_parser, main

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _sh_blocks() -> list[list[str]]:
    return [b.splitlines() for b in re.findall(r"^```sh\n(.*?)^```", README, re.S | re.M)]


def _argv(line: str) -> list[str] | None:
    """The ptx-verify arguments of one shell line (comment dropped), or None if it runs something else."""
    line = line.removeprefix("$ ").split("  #")[0].strip()
    for prog in ("ptx-verify ", ".venv/bin/ptx-verify ", "python -m verify "):
        if prog in line:
            return shlex.split(line.split(prog, 1)[1].split("&&")[0])
    return None


def _table_rows() -> list[tuple[str, str]]:
    """(subcommand, the whole row) for every row of the Commands table."""
    section = README.split("## Commands", 1)[1].split("\n## ", 1)[0]
    return [(m.group(1), m.group(0)) for m in re.finditer(r"^\| `([a-z]+)[^|]*.*$", section, re.M)]


def _subparsers() -> dict:
    parser = build_parser()
    action = next(a for a in parser._actions if a.dest == "command")  # noqa: SLF001
    return action.choices


def test_command_table_names_every_subcommand_and_only_real_options() -> None:
    subs = _subparsers()
    rows = _table_rows()
    assert rows, "the Commands table was not found"
    assert {name for name, _ in rows} == set(subs), "README table and CLI subcommands differ"
    for name, row in rows:
        known = {s for a in subs[name]._actions for s in a.option_strings}  # noqa: SLF001
        for opt in re.findall(r"(?<![\w-])--[a-z][a-z-]*", row):
            assert opt in known, f"README says `{name} {opt}`, the CLI has no such option"


def test_every_shown_command_line_parses() -> None:
    parser = build_parser()
    lines = [argv for block in _sh_blocks() for line in block if (argv := _argv(line)) is not None]
    assert len(lines) >= 8
    for argv in lines:
        parser.parse_args(argv)  # SystemExit (exit 2) on an unknown option or a missing argument


def _transcripts() -> list[tuple[list[str], str]]:
    """(argv, expected stdout) for every ``$ ptx-verify`` line followed by output in an sh block."""
    out = []
    for block in _sh_blocks():
        i = 0
        while i < len(block):
            if block[i].startswith("$ ") and (argv := _argv(block[i])) is not None:
                j = i + 1
                while j < len(block) and block[j] and not block[j].startswith("$ "):
                    j += 1
                if j > i + 1:
                    out.append((argv, "\n".join(block[i + 1:j]) + "\n"))
                i = j
            else:
                i += 1
    return out


@pytest.mark.parametrize("argv,expected", _transcripts(), ids=lambda v: v[0] if isinstance(v, list) else "")
def test_shown_output_is_todays_output(argv: list[str], expected: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = main(argv)
    assert rc in (0, 1)
    assert re.fullmatch(_pattern(expected), out.getvalue()), out.getvalue()


def _pattern(shown: str) -> str:
    """Shown output as a pattern: a line ``...`` stands for any lines, a line ending in ``...`` for the
    rest of that line; everything else must match exactly."""
    parts = []
    for line in shown.splitlines():
        if line.strip() == "...":
            parts.append(r"(?:[^\n]*\n)*?")
        elif line.endswith("..."):
            parts.append(re.escape(line[:-3]) + r"[^\n]*\n")
        else:
            parts.append(re.escape(line) + r"\n")
    return "".join(parts)


def test_transcripts_were_found() -> None:
    assert len(_transcripts()) >= 3


def test_pattern_elides_only_what_it_says() -> None:
    pat = _pattern("a: shuffle\n  lane 0: x, ...\n  ...\nend\n")
    assert re.fullmatch(pat, "a: shuffle\n  lane 0: x, y, z\n  1\n  2\nend\n")
    assert not re.fullmatch(pat, "a: free\n  lane 0: x, y\nend\n")
    assert not re.fullmatch(pat, "a: shuffle\n  lane 0: x, y\nend\nmore\n")


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
    """The README's proof-script block runs as shown, and every value its comments show is what it gives
    (``# (9, 3)``, ``# "equal"``, ``# Proof(status='proved')`` on the line after a call)."""
    import subprocess  # noqa: PLC0415
    import sys  # noqa: PLC0415
    [block] = re.findall(r"^```python\n(.*?)^```", README, re.S | re.M)
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
    """The README's excerpt of ``check`` text output: each line it shows is a line ``check`` prints today."""
    from verify.outputs.text import check_text  # noqa: PLC0415
    section = README.split("### `check` text output", 1)[1].split("\n### ", 1)[0]
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
