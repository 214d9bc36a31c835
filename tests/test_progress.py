"""Progress on stderr: shown when stderr is a terminal (after ``DELAY`` seconds), nothing extra otherwise."""
from __future__ import annotations

import io
import os
import pty
import re
import subprocess
import sys
import time

import pytest

from verify.cli import main
from verify.outputs import progress

from conftest import ROOT, SPECS

K256 = str(SPECS / "mma.m16n8k256.toml")


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_stage_draws_on_a_terminal_and_clears_its_line():
    term = Terminal()
    p = progress.Progress.for_stream(term, delay=0)
    assert p.enabled
    with p.stage("checking") as step:
        time.sleep(3 * progress.TICK)  # the ticker redraws the elapsed time
        step()
    with p.stage("pictures", total=3) as step:
        for _ in range(3):
            step()
    text = term.getvalue()
    assert "checking [00:00]" in text and "pictures: " in text and text.endswith("\r")


def test_nothing_is_drawn_when_not_a_terminal_or_before_the_delay():
    plain = io.StringIO()
    with progress.Progress.for_stream(plain, delay=0).stage("checking", total=2) as step:
        step(2)
    assert plain.getvalue() == ""
    term = Terminal()
    with progress.Progress.for_stream(term, delay=60).stage("checking"):  # a short run: nothing
        time.sleep(2 * progress.TICK)
    assert term.getvalue() == ""


def test_lines_printed_during_a_stage_are_not_mixed_with_the_bar():
    term = Terminal()
    out = io.StringIO()
    real = sys.stdout
    sys.stdout = out
    try:
        with progress.Progress.for_stream(term, delay=0).stage("confirm"):
            time.sleep(2 * progress.TICK)
            print("line one")
            print("line two")
    finally:
        sys.stdout = real
    assert out.getvalue() == "line one\nline two\n"  # stdout unchanged; the bar was cleared around each write


@pytest.mark.parametrize("argv, stage", [
    (["check", K256], "checking 4 layouts in 1 spec file: "),
    (["check", K256, "--format", "sarif"], "checking 4 layouts in 1 spec file: "),
    (["pictures", K256, "--out"], "pictures: "),
    (["report", K256, "--out"], "report: pictures and suggested corrections: "),
    (["confirm", "mma.m8n8k16.A.", "--device", "simulated"], "confirm: building and running probes"),
])
def test_the_cli_shows_progress_only_on_a_terminal(argv, stage, capsys, monkeypatch, tmp_path):
    out_dir = argv[-1] == "--out"
    rc = main(argv + ([str(tmp_path / "p")] if out_dir else []))
    out_plain, err_plain = capsys.readouterr()
    assert rc == 0 and err_plain == ""  # not a terminal: nothing extra
    monkeypatch.setattr(progress, "DELAY", 0.0)
    monkeypatch.setattr(progress, "is_terminal", lambda stream: True)
    rc = main(argv + ([str(tmp_path / "q")] if out_dir else []))
    out_term, err_term = capsys.readouterr()
    assert rc == 0 and out_term.replace(str(tmp_path / "q"), str(tmp_path / "p")) == out_plain  # the same stdout
    assert "\r" in err_term and stage in err_term, err_term


def test_a_real_terminal_gets_progress_and_a_pipe_gets_none():
    """A child process with its stderr on a pseudo-terminal draws progress; with stderr on a pipe, nothing."""
    code = ("import sys, verify.outputs.progress as p; p.DELAY = 0; from verify.cli import main; "
            f"sys.exit(main(['check', {K256!r}, '--format', 'json']))")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0 and r.stderr == "" and r.stdout.startswith("{")
    master, slave = pty.openpty()
    seen = b""
    try:
        proc = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, stdout=subprocess.PIPE, stderr=slave,
                                env={**os.environ, "COLUMNS": "120"})
        os.close(slave)
        slave = -1
        while True:  # read while the child runs: a closed pseudo-terminal drops what was not read
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the child closed its end
                break
            if not chunk:
                break
            seen += chunk
        stdout, _ = proc.communicate(timeout=120)
    finally:
        if slave != -1:
            os.close(slave)
        os.close(master)
    assert proc.returncode == 0 and stdout.decode() == r.stdout  # the same JSON
    assert b"checking 4 layouts" in seen and b"\r" in seen


def test_the_check_line_shows_done_total_and_what_is_left(capsys, monkeypatch):
    """Issue 35 item 18: the line said ``checking 215 layouts in 40 spec files (1 workers) [00:07]``, elapsed time
    and a worker count; now what is done of the total and what is left, counted in layouts."""
    monkeypatch.setattr(progress, "DELAY", 0.0)
    monkeypatch.setattr(progress, "is_terminal", lambda stream: True)
    specs = [K256, str(SPECS / "mma.m8n8k16.toml"), str(SPECS / "mma.m16n8k8.toml")]
    for jobs in ("1", "2"):
        assert main(["check", *specs, "--jobs", jobs]) == 0
        err = capsys.readouterr().err
        lines = [x.strip() for x in err.split("\r") if x.strip().startswith("checking")]
        assert lines and all("workers" not in x and not re.search(r"\[\d\d:\d\d\]", x) for x in lines), err
        counts = [re.fullmatch(r"checking (\d+) layouts in 3 spec files: (\d+)/(\d+) done, (\d+) left \(.+ to go\)",
                               x) for x in lines]
        assert all(counts), lines
        assert all(int(m[1]) == int(m[3]) == int(m[2]) + int(m[4]) for m in counts)  # done + left = total


def test_a_stage_with_a_total_counts_what_is_left():
    term = Terminal()
    with progress.Progress.for_stream(term, delay=0).stage("pictures", total=5) as step:
        step(2)
        time.sleep(2 * progress.TICK)
    assert "pictures: 2/5 done, 3 left (" in term.getvalue()
