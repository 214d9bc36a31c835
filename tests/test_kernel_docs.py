"""docs/kernels.md is a contract: every transcript it shows (``$ ptx-verify kernel ...`` followed by output) is what
the tool prints today (a line ``...`` stands for any lines), and its CuTe launch reads.  The Triton transcript
compiles (slow; skipped without Triton)."""
from __future__ import annotations

import contextlib
import importlib.util
import io
import re
import shlex

import pytest

from conftest import ROOT
from verify.cli.main import main
from verify.kernel.launch import parse_launch

DOC = (ROOT / "docs" / "kernels.md").read_text(encoding="utf-8")


def _transcripts() -> list[tuple[list[str], str]]:
    out = []
    for block in re.findall(r"^```sh\n(.*?)^```", DOC, re.S | re.M):
        lines = block.splitlines()
        assert lines[0].startswith("$ ptx-verify "), lines[0]
        out.append((shlex.split(lines[0][len("$ ptx-verify "):]), "\n".join(lines[1:]) + "\n"))
    return out


def _pattern(shown: str) -> str:
    parts = []
    for line in shown.splitlines():
        parts.append(r"(?:[^\n]*\n)*?" if line.strip() == "..." else re.escape(line) + r"\n")
    return "".join(parts)


def _run(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.chdir(ROOT)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = main(argv)
    assert rc in (0, 1)
    return out.getvalue()


FIXTURES = [t for t in _transcripts() if "--triton" not in t[0]]
COMPILED = [t for t in _transcripts() if "--triton" in t[0]]


def test_the_transcripts_were_found():
    assert len(FIXTURES) == 7 and len(COMPILED) == 1


@pytest.mark.parametrize("argv,shown", FIXTURES, ids=[t[0][-1] for t in FIXTURES])
def test_a_transcript_is_todays_output(argv, shown, monkeypatch):
    got = _run(argv, monkeypatch)
    assert re.fullmatch(_pattern(shown), got), got


@pytest.mark.slow
@pytest.mark.parametrize("argv,shown", COMPILED, ids=["triton"])
def test_the_triton_transcript_is_todays_output(argv, shown, monkeypatch):
    if importlib.util.find_spec("triton") is None:
        pytest.skip("Triton is not installed (pip install -e '.[refs]' gives triton==3.9.0)")
    got = _run(argv, monkeypatch)
    assert re.fullmatch(_pattern(shown), got), got


def test_the_cute_launch_reads():
    (toml,) = re.findall(r"^```toml\n(ptx = \"sgemm_sm80.ptx\".*?)^```", DOC, re.S | re.M)
    launch = parse_launch(toml, "sgemm.toml")
    assert launch.computes.describe() == "C[m, n] = A[m, k] * B[n, k]" and len(launch.args) == 18
    from test_kernel_compiled import CUTE  # the launch the slow test verifies
    assert toml.strip() in CUTE
