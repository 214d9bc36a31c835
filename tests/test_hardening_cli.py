"""No wrong answer, crash or hang at the edges of the command line: options, input files, outputs,
signals and worker processes (the CLI items of the hardening issue, numbered as there).

Signals and special files are tried on a real ``python -m verify`` process (with a timeout, so a
hang fails instead of blocking the suite); the rest in process through ``conftest.cli``.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from conftest import DOCS, ROOT, SPECS, cli

from verify import api
from verify.checks import fixes, run as check_run
from verify.cli.main import build_parser
from verify.errors import SpecError
from verify.outputs import baseline, svg

SMALL = str(SPECS / "mma.m8n8k16.toml")
A16 = "mma.m16n8k16.A.f16_bf16"
P3 = "9-7-14-5-3-matrix-fragments-for-mma-m8n8k16.md"
K256_PAGE = "9-7-14-5-13-matrix-fragments-for-mma-m16n8k256.md"
CUTE_A16 = "((4,8),(2,2,2)):((32,1),(16,8,128))"
LINUX = sys.platform.startswith("linux")


def one_error_line(rc: int, out: str, err: str, *words: str) -> str:
    """Exit 2, nothing on stdout, one line on stderr with ``error:`` and ``words``, no traceback."""
    assert rc == 2 and out == "", (rc, out[-300:], err[-300:])
    assert err.count("\n") == 1 and "error: " in err and "Traceback" not in err, err
    for w in words:
        assert w in err, (w, err)
    return err.strip()


def broken_spec(tmp_path: Path) -> Path:
    """m8n8k16 with C's col formula off by one: an unexpected refutation (exit 1)."""
    text = Path(SMALL).read_text(encoding="utf-8")
    old = "col = (threadID_in_group * 2) + i "
    assert text.count(old) == 1
    p = tmp_path / "broken.toml"
    p.write_text(text.replace(old, "col = (threadID_in_group * 2) + i + 1 "), encoding="utf-8")
    return p


def changed_page(tmp_path: Path, docs_dir: Path) -> Path:
    """P3 with one fragment's formula no longer parsing: a page the reviewed specs do not record."""
    text = (docs_dir / P3).read_text(encoding="utf-8")
    at = text.index("col = (threadID_in_group * 4)")
    page = tmp_path / P3
    page.write_text(text[:at] + text[at:].replace("threadID_in_group", "threadID_in_grp", 1), encoding="utf-8")
    return page


@pytest.fixture(autouse=True)
def _ctrl_c_reaches_the_commands():
    """The commands these tests start get Ctrl-C as a terminal's foreground job does. A suite started as a
    background job of a non-interactive shell (``pytest ... &``) inherits SIGINT ignored, and so would every
    command it starts: they keep ignoring it, as POSIX programs must, and the tests that send SIGINT would see
    the command finish. A Python handler here is the default disposition in a started program."""
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        yield
        return
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def python_cli(*args: str, **kw) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "verify", *args], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True, **kw)


# ----------------------------------------------------------------------------- 3. options take one value

def _options(parser: argparse.ArgumentParser):
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name, p in sorted(sub.choices.items()):
        for a in p._actions:
            if not isinstance(a, argparse._HelpAction):
                yield name, a


def test_no_option_takes_several_values():
    """An option with nargs '+'/'*' swallows the positional arguments after it (``check --against specs
    PAGE`` checked the bundled specs and never read PAGE): options take one value and repeat instead."""
    many = [(name, a.option_strings) for name, a in _options(build_parser())
            if a.option_strings and a.nargs in ("+", "*", argparse.REMAINDER)]
    assert many == []


def test_check_against_before_the_page_reads_the_page(tmp_path, docs_dir, capsys):
    page = changed_page(tmp_path, docs_dir)
    rc_after, out_after, _ = cli(capsys, "check", str(page), "--against", str(SPECS), "--format", "json")
    rc_before, out_before, _ = cli(capsys, "check", "--against", str(SPECS), str(page), "--format", "json")
    assert rc_after == rc_before == 1 and out_before == out_after  # the page is judged, wherever the option is
    assert [f["check"] for f in json.loads(out_before)["findings"] if not f["as_expected"]] == ["syntax"]


def test_against_repeats_and_needs_a_page(tmp_path, docs_dir, capsys):
    page = str(docs_dir / P3)
    specs = sorted(str(p) for p in SPECS.glob("*.toml"))
    rc, _, err = cli(capsys, "check", page, *[x for s in specs for x in ("--against", s)])
    assert rc == 0, err
    one_error_line(*cli(capsys, "check", SMALL, "--against", str(SPECS)), "--against", "no doc page")
    one_error_line(*cli(capsys, "check", "--against", str(SPECS)), "no doc page")  # the bundled specs: no page


def test_report_pages_before_the_paths(tmp_path, docs_dir, capsys):
    out = tmp_path / "r"
    rc, stdout, err = cli(capsys, "report", "--pages", str(docs_dir / P3), SMALL, "--out", str(out))
    assert rc == 0 and (out / "report.md").is_file(), err
    assert "3 layouts checked" in (out / "report.md").read_text(encoding="utf-8")  # SMALL is a PATH, not a page


# ----------------------------------------------------------------------------- 10. unwritable outputs

def _writers(blocked: Path, tmp_path: Path) -> list[tuple[str, list[str]]]:
    """Every command that writes, with its output under ``blocked`` (a path that cannot be written)."""
    page = str(DOCS / P3)
    return [
        ("table", ["table", A16, "--format", "svg", "--out", str(blocked / "x.svg")]),
        ("pictures", ["pictures", SMALL, "--out", str(blocked / "pics")]),
        ("report", ["report", SMALL, "--out", str(blocked / "report")]),
        ("ingest", ["ingest", page, "--out", str(blocked / "specs"), "--no-check"]),
        ("probe", ["probe", A16, "--emit", str(blocked / "probes")]),
        ("confirm", ["confirm", A16, "--device", "cuda", "--out", str(blocked / "obs")]),
        ("baseline", ["check", SMALL, "--baseline", str(blocked / "b.json"), "--update-baseline"]),
    ]


def test_every_writer_refuses_an_unwritable_output_in_one_line(tmp_path, capsys):
    """Under a regular file nothing can be written, not even by root: one line naming the path the user
    gave, exit 2, before any work (nothing on stdout), no temporary name, nothing left behind."""
    blocker = tmp_path / "a-file"
    blocker.write_text("x", encoding="utf-8")
    for name, argv in _writers(blocker, tmp_path):
        if name == "ingest" and not Path(argv[1]).is_file():
            continue
        line = one_error_line(*cli(capsys, *argv), "cannot write", str(blocker))
        assert ".tmp" not in line and "Errno" not in line, (name, line)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file"]


def _as_unprivileged(argv: list[str], cwd: Path) -> subprocess.CompletedProcess | None:
    """Run ``ptx-verify ARGV`` so that directory permissions apply (root ignores them: drop to nobody)."""
    cmd = [sys.executable, "-m", "verify", *argv]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1"}
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            return None
        cmd = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", *cmd]
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env, timeout=300)


@pytest.mark.skipif(not hasattr(os, "geteuid"), reason="POSIX permissions")
def test_a_read_only_directory_is_one_line_not_a_traceback():
    """``table --out RO/x.svg`` and ``check --update-baseline`` into a read-only directory printed a
    PermissionError traceback (the baseline after the whole check had run)."""
    work = Path(tempfile.mkdtemp(prefix="ptx-ro-"))
    try:
        os.chmod(work, 0o755)
        ro = work / "ro"
        ro.mkdir()
        os.chmod(ro, 0o555)
        for name, argv in _writers(ro, work):
            if name in ("ingest", "confirm", "probe"):  # the same check; keep the run short
                continue
            r = _as_unprivileged(argv, ROOT)
            if r is None:
                pytest.skip("running as root without setpriv: directory permissions cannot be tested")
            line = one_error_line(r.returncode, r.stdout, r.stderr, "cannot write", str(ro), "permission denied")
            assert ".tmp" not in line, (name, line)
        assert list(ro.iterdir()) == []
    finally:
        os.chmod(work / "ro", 0o755)
        shutil.rmtree(work, ignore_errors=True)


def test_an_interrupted_write_leaves_nothing(tmp_path, monkeypatch):
    target = tmp_path / "b.json"
    target.write_text("old", encoding="utf-8")

    def interrupted(src, dst):
        raise KeyboardInterrupt
    monkeypatch.setattr(os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        baseline.write_atomic(target, "new")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.json"] and target.read_text(encoding="utf-8") == "old"


# ----------------------------------------------------------------------------- 11. deep nesting

DEEP = 5000


@pytest.mark.parametrize("command", [["check"], ["list", "--specs"], ["diff", SMALL]])
def test_deeply_nested_toml_is_a_positioned_error(tmp_path, capsys, command):
    p = tmp_path / "deep.toml"
    p.write_text("schema = 1\nx = " + "[" * DEEP + "]" * DEEP + "\n", encoding="utf-8")
    line = one_error_line(*cli(capsys, *command, str(p)), "nested deeper")
    assert line.startswith(f"{p}:2:69: error: TOML:"), line  # the 65th bracket: column 4 + 65


def test_deeply_nested_json_baseline_and_observation(tmp_path, capsys):
    p = tmp_path / "deep.json"
    p.write_text('{"schema": 1, "layouts": ' + "[" * DEEP + "]" * DEEP + "}", encoding="utf-8")
    line = one_error_line(*cli(capsys, "check", SMALL, "--baseline", str(p)), "nested deeper")
    assert line.startswith(f"{p}:1:"), line
    from verify.hardware.observe import load_observation
    with pytest.raises(SpecError, match="nested deeper"):
        load_observation(p)


def test_brackets_inside_strings_and_comments_are_not_nesting(tmp_path):
    p = tmp_path / "fine.toml"
    p.write_text(Path(SMALL).read_text(encoding="utf-8") + "# " + "[" * 200 + "\n", encoding="utf-8")
    assert api.load([p])  # loads: the comment's brackets do not count


# ----------------------------------------------------------------------------- 12./13. signals and workers

def _children(pid: int) -> list[int]:
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                fields = (d / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                out.append(int(d.name))
    return out


def _running(pid: int) -> bool:
    """Alive and not a zombie (a zombie holds no pipe and does no work)."""
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _gone(kids: list[int], within: float = 10) -> bool:
    """Whether every worker ended (within a few seconds); any left are killed, so no test leaves them behind."""
    deadline = time.monotonic() + within
    while any(_running(k) for k in kids) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = [k for k in kids if _running(k)]
    for k in left:
        try:
            os.kill(k, signal.SIGKILL)
        except OSError:
            pass
    return not left


def _finish(p: subprocess.Popen, kids: list[int]) -> tuple[str, str]:
    """The command's output; a hang (a worker holding the pipes open) fails, after killing what is left."""
    try:
        return p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        _gone(kids, within=0)
        p.kill()
        p.communicate()
        pytest.fail("the command or its workers still held the pipes open after 60 s")


def _start_with_workers(*args: str) -> tuple[subprocess.Popen, list[int]]:
    p = python_cli(*args)
    deadline = time.monotonic() + 120
    kids: list[int] = []
    while time.monotonic() < deadline and len(kids) < 2 and p.poll() is None:
        kids = _children(p.pid)
        time.sleep(0.05)
    assert len(kids) >= 2, f"no worker processes seen ({p.poll()})"
    time.sleep(0.5)  # the workers are at work
    return p, kids


@pytest.mark.skipif(not LINUX, reason="reads /proc to find the worker processes")
@pytest.mark.parametrize("command, sig, code, words", [
    pytest.param(*c, *s, id=f"{s[0].name}-{c[0][0]}", marks=() if i == j else (pytest.mark.slow, pytest.mark.kind_rest))
    for i, c in enumerate([(["check", "--jobs", "2", "--format", "json"],), (["report", str(SPECS), "--out", "{out}"],)])
    for j, s in enumerate([(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")])])
def test_a_signal_stops_the_run_and_every_worker(tmp_path, command, sig, code, words):
    """Each signal on each command; the README's command runs each signal and each command once (SIGINT on
    check, SIGTERM on report), CI's integration tier the other two pairs."""
    out = tmp_path / "report"
    p, kids = _start_with_workers(*[a.replace("{out}", str(out)) for a in command])
    os.kill(p.pid, sig)
    stdout, stderr = _finish(p, kids)  # a worker holding the pipes open would hang here
    gone = _gone(kids)
    assert p.returncode == code and stdout == "", (p.returncode, stderr[-500:])
    assert stderr.strip().splitlines() == [f"ptx-verify: {words}" + (" by signal 15" if sig == signal.SIGTERM else "")]
    assert gone
    assert list(tmp_path.iterdir()) == []  # nothing half-written (no report, no temporary directory)


@pytest.mark.skipif(not LINUX, reason="reads /proc to find the worker processes")
def test_ctrl_c_to_the_process_group_is_one_line(tmp_path):
    """A terminal's Ctrl-C reaches every process of the group: the workers leave it to the parent."""
    p, kids = _start_with_workers("check", "--jobs", "2")
    os.killpg(p.pid, signal.SIGINT)
    stdout, stderr = _finish(p, kids)
    gone = _gone(kids)
    assert p.returncode == 130 and stdout == "" and stderr == "ptx-verify: interrupted\n", stderr[-2000:]
    assert gone


@pytest.mark.skipif(not LINUX, reason="reads /proc to find the worker processes")
def test_workers_die_with_a_killed_parent():
    p, kids = _start_with_workers("check", "--jobs", "2")
    os.kill(p.pid, signal.SIGKILL)
    _finish(p, kids)
    assert _gone(kids)


@pytest.mark.skipif(not hasattr(os, "getppid") or sys.platform == "win32", reason="POSIX parents")
def test_the_portable_fallback_watches_the_parent():
    """Where ``PR_SET_PDEATHSIG`` is not available a worker thread watches its parent: a grandchild that
    runs it exits once its parent is killed."""
    code = ("import os, subprocess, sys, time\n"
            "g = subprocess.Popen([sys.executable, '-c', 'import sys; from verify.checks.run import _watch_parent; "
            "print(\\'watching\\', flush=True); _watch_parent(%d, 0.05)' % os.getpid()])\n"
            "print(g.pid, flush=True)\n"
            "time.sleep(120)\n")
    p = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, stdout=subprocess.PIPE, text=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    grandchild = int(p.stdout.readline())
    assert p.stdout.readline() == "watching\n"  # imported and in the loop
    time.sleep(0.3)
    assert _alive_any(grandchild)  # its parent is alive: it keeps running
    p.kill()
    p.wait()
    deadline = time.monotonic() + 20
    while _alive_any(grandchild) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive_any(grandchild)


def _alive_any(pid: int) -> bool:
    if LINUX:
        return _running(pid)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


_INTERRUPT_ON_IMPORT = """
import builtins, os, signal, sys
real_import = builtins.__import__
def hooked(name, *args, **kw):
    if name in {names!r} and not getattr(builtins, "_ptx_sent", False):
        builtins._ptx_sent = True
        os.kill(os.getpid(), signal.SIGINT)  # as a Ctrl-C would, while the modules load
    return real_import(name, *args, **kw)
builtins.__import__ = hooked
sys.argv = ["ptx-verify", "check", "--jobs", "2"]
{run}
"""


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("names, run", [
    (("z3",), "from verify.__main__ import main\nmain()"),  # the console script, while the modules load
    (("cli",), "import runpy\nrunpy.run_module('verify', run_name='__main__')"),  # python -m verify: `from .cli`
    (("concurrent.futures",), "from verify.__main__ import main\nmain()"),  # in check_all, before the pool
])
def test_ctrl_c_while_the_modules_load_is_one_line(names, run):
    code = _INTERRUPT_ON_IMPORT.format(names=names, run=run)
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert (r.returncode, r.stdout, r.stderr) == (130, "", "ptx-verify: interrupted\n"), r.stderr[-3000:]


def test_ctrl_c_in_process_is_one_line(monkeypatch, capsys):
    def interrupted(*a, **k):
        raise KeyboardInterrupt
    monkeypatch.setattr(api, "check_all", interrupted)
    rc, out, err = cli(capsys, "check", SMALL)
    assert (rc, out, err) == (130, "", "ptx-verify: interrupted\n")


def test_a_failing_worker_stops_the_pool(tmp_path, monkeypatch):
    """An error in one worker stops the others at once (no run to the end of every spec first)."""
    specs = api.load([SMALL, str(SPECS / "mma.m16n8k16.float.toml"), str(SPECS / "mma.m16n8k8.toml")])
    stopped = []
    real = check_run._stop_workers
    monkeypatch.setattr(check_run, "_stop_workers", lambda pool: (stopped.append(1), real(pool)))
    monkeypatch.setattr(check_run, "_check_spec_remote", _raise_spec_error)
    with pytest.raises(SpecError):
        check_run.check_all(specs, jobs=2)
    assert stopped == [1]


def _raise_spec_error(args):
    raise SpecError("x.toml", 1, 1, "planted")


# ----------------------------------------------------------------------------- 14. --max-delta

def test_max_delta_is_bounded(capsys):
    one_error_line(*cli(capsys, "report", SMALL, "--out", "never", "--max-delta", "1000000"),
                   "--max-delta", str(fixes.MAX_DELTA_LIMIT))
    assert not Path("never").exists()
    with pytest.raises(ValueError):
        fixes.search_fix(api.layout(api.load([SMALL]), "mma.m8n8k16.C.s32"), max_delta=fixes.MAX_DELTA_LIMIT + 1)


def _off_by_one() -> api.Layout:
    from verify.formula import parse_formula
    lay = api.layout(api.load([SPECS / "mma.m16n8k16.float.toml"]), A16)
    text = lay.provenance.formula_text.replace("+ 8", "+ 9", 1)
    return lay.with_formula(parse_formula(text, lay.formula.element_prefix), text,
                            id=lay.id + "#bad", expect={})


def _no_fix() -> api.Layout:
    from verify.formula import parse_formula
    lay = _off_by_one()
    text = lay.provenance.formula_text.replace("% 4", "% 5")
    return lay.with_formula(parse_formula(text, lay.formula.element_prefix), text, id="nofix", expect={})


def test_the_fix_search_is_bounded_by_the_solver_budget():
    """The search stops where its budget (from --timeout, in work units, not seconds) runs out, says how
    far it got, and stops at the same place every time."""
    lay = _no_fix()
    full = fixes.search_fix(lay, timeout=10, max_delta=4)
    assert full.fix is None and full.complete_to == 4 and not full.stopped
    short = fixes.search_fix(lay, timeout=0.05, max_delta=fixes.MAX_DELTA_LIMIT)
    assert short.stopped and short.complete_to < 4 and short.tried <= int(fixes.UNITS_PER_SECOND * 0.05)
    assert fixes.search_fix(lay, timeout=0.05, max_delta=fixes.MAX_DELTA_LIMIT) == short  # deterministic
    found = fixes.search_fix(_off_by_one(), timeout=10, max_delta=fixes.MAX_DELTA_LIMIT)
    assert found.fix is not None and (found.fix.old, found.fix.new) == (9, 8)


def test_a_stopped_search_is_said_in_the_report():
    from verify.outputs import report_parts
    from verify.results.report import LayoutEntry
    e = LayoutEntry("x", None, [])
    e.fix_searched, e.fix_bound, e.fix_asked = True, 2, 64
    assert "stopped there" in report_parts._stopped(e) and "64" in report_parts._stopped(e)
    e.fix_bound = 64
    assert report_parts._stopped(e) == ""


# ----------------------------------------------------------------------------- 16. special files

def _special(tmp_path: Path) -> dict[str, str]:
    fifo = tmp_path / "fifo.toml"
    os.mkfifo(fifo)
    return {"/dev/zero": "character device", str(fifo): "FIFO", str(tmp_path): "directory"}


@pytest.mark.slow
@pytest.mark.skipif(not Path("/dev/zero").exists() or not hasattr(os, "mkfifo"), reason="POSIX special files")
def test_special_files_are_refused_at_once(tmp_path):
    """``check /dev/zero`` grew to 8 GB, a FIFO without a writer blocked for ever, ``ingest /dev/zero``
    said "no such file": every reader refuses what is not a regular file, in one line (in a subprocess
    with a timeout, so that a reader that blocks fails the test instead of hanging it)."""
    fifo = tmp_path / "fifo.toml"
    os.mkfifo(fifo)
    cases = []
    for path, kind in (("/dev/zero", "character device"), (str(fifo), "FIFO")):
        cases += [["check", path], ["diff", path, SMALL], ["list", "--specs", path], ["ingest", path],
                  ["check", SMALL, "--baseline", path], ["table", A16, "--specs", path],
                  ["check", str(DOCS / P3), "--against", path]]
        cases += [["conform", A16, opt, path] for opt in ("--formula", "--triton", "--table")]
        # the map-layout and shared-memory commands (banks --formula read a FIFO with its own reader: it hung)
        cases += [["banks", "--formula", path, "--tile", "8x8", "--type", "f16", "--access", "ld.shared.v4"],
                  ["descriptor", "--formula", path, "--tile", "8x8", "--type", "f16"],
                  ["conform", "storage.sf.cutlass.128x4.tile", "--formula", path],
                  ["consistent", "--writer", "index:" + path, "--reader", "storage.sf.cutlass.128x4.tile"]]
        for argv in cases[-14:]:
            r = subprocess.run([sys.executable, "-m", "verify", *argv], cwd=ROOT, capture_output=True, text=True,
                               timeout=120)
            assert r.returncode == 2 and r.stdout == "" and r.stderr.count("\n") == 1, (argv, r.stderr[-500:])
            assert kind in r.stderr and "error:" in r.stderr and "no such file" not in r.stderr, (argv, r.stderr)


def test_a_directory_where_a_file_is_read(tmp_path, capsys):
    for argv in (["check", SMALL, "--baseline", str(tmp_path)], ["conform", A16, "--formula", str(tmp_path)],
                 ["conform", A16, "--triton", str(tmp_path)], ["conform", A16, "--table", str(tmp_path)]):
        one_error_line(*cli(capsys, *argv), str(tmp_path), "is a directory")


def test_report_of_nothing_is_bad_input_as_check_of_nothing(tmp_path, capsys):
    """Found by the fuzzer: ``report EMPTY_DIR`` wrote an empty report and exited 0 (``check`` exits 2)."""
    (tmp_path / "empty").mkdir()
    one_error_line(*cli(capsys, "report", str(tmp_path / "empty"), "--out", str(tmp_path / "r")), "nothing to report")
    one_error_line(*cli(capsys, "check", str(tmp_path / "empty")), "nothing to check")
    assert not (tmp_path / "r").exists()


def test_input_over_the_size_limit_is_refused_without_reading_it(tmp_path, capsys):
    from verify.files import MAX_INPUT_BYTES, read_bytes
    big = tmp_path / "big.toml"
    with open(big, "wb") as f:
        f.truncate(MAX_INPUT_BYTES + 1)  # sparse: nothing to read, the size is enough
    one_error_line(*cli(capsys, "check", str(big)), "larger than the limit")
    with pytest.raises(SpecError, match="larger than the limit"):
        read_bytes(big)


def test_stdin_is_read_up_to_the_limit(tmp_path):
    with open("/dev/zero", "rb") as zero:
        r = subprocess.run([sys.executable, "-m", "verify", "conform", A16, "--formula", "-"], cwd=ROOT,
                           stdin=zero, capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and r.stderr.startswith("<stdin>:1:1: error:") and r.stderr.count("\n") == 1, r.stderr
    r = subprocess.run([sys.executable, "-m", "verify", "conform", A16, "--formula", "-"], cwd=ROOT,
                       input=(ROOT / "examples" / "layouts" / "m16n8k16_a_swapped.txt").read_text(encoding="utf-8"),
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and "permuted" in r.stdout, r.stderr


# ----------------------------------------------------------------------------- U2. --param

def test_param_names_the_parameter_and_the_valid_ones(capsys):
    one_error_line(*cli(capsys, "table", A16, "--param", "N=24"), "--param N", "not a family")
    one_error_line(*cli(capsys, "table", "wgmma.m64nNk16.D.f16", "--param", "X=24"),
                   "--param X", "no parameter X", "N = 8..256 step 8")
    one_error_line(*cli(capsys, "table", "wgmma.m64nNk16.D.f16", "--param", "N=24", "--param", "N=32"), "twice")
    one_error_line(*cli(capsys, "table", "wgmma.m64nNk16.D.f16"), "--param N=VALUE", "8..256 step 8")
    rc, out, _ = cli(capsys, "table", "wgmma.m64nNk16.D.f16", "--param", "N=24")
    assert rc == 0 and out.startswith("wgmma.m64nNk16.D.f16  (64 x 24,")


# ----------------------------------------------------------------------------- U4. argument:LINE:COL

def test_inline_text_positions_are_line_and_column(capsys):
    line = one_error_line(*cli(capsys, "conform", A16, "--cute", CUTE_A16[:-1]))
    assert line.startswith("argument:1:35: error:"), line


# ----------------------------------------------------------------------------- U5. ingest stdout

def test_ingest_stdout_is_the_spec_and_findings_go_to_stderr(docs_dir, capsys):
    import tomllib
    rc, out, err = cli(capsys, "ingest", str(docs_dir / K256_PAGE))
    assert rc == 0
    assert out.startswith("# ---- mma.m16n8k256.toml\n") and "warning:" not in out and "error:" not in out
    doc = tomllib.loads(out)  # one section: stdout is one valid spec file
    assert doc["schema"] == 1 and doc["fragment"]
    assert api.load_spec_text(out, "stdout.toml").layouts
    assert ": warning: " in err and err.rstrip().splitlines()[-1].startswith("ingest: 1 sections")
    rc, out, _ = cli(capsys, "ingest", str(docs_dir / K256_PAGE), "--findings", "json", "--no-check")
    assert rc == 0 and isinstance(json.loads(out), list)  # --findings json: stdout is the JSON document


# ----------------------------------------------------------------------------- U12. byte-order marks

BOM = "\ufeff"


def test_a_byte_order_mark_is_accepted_everywhere_with_positions_unchanged(tmp_path, docs_dir, capsys):
    from verify.files import read_text
    spec = Path(SMALL).read_text(encoding="utf-8")
    (tmp_path / "bom.toml").write_text(BOM + spec, encoding="utf-8")
    assert [lay.id for lay in api.layouts(api.load([tmp_path / "bom.toml"]))] == \
        [lay.id for lay in api.layouts(api.load([SMALL]))]
    bad = spec.replace("schema = 1", "schema = 1\nnonsense = ", 1)
    (tmp_path / "bad.toml").write_text(bad, encoding="utf-8")
    (tmp_path / "bombad.toml").write_text(BOM + bad, encoding="utf-8")
    e1 = one_error_line(*cli(capsys, "check", str(tmp_path / "bad.toml")))
    e2 = one_error_line(*cli(capsys, "check", str(tmp_path / "bombad.toml")))
    assert e2 == e1.replace("bad.toml", "bombad.toml")  # the same line and column
    page = tmp_path / P3
    page.write_text(BOM + (docs_dir / P3).read_text(encoding="utf-8"), encoding="utf-8")
    rc, out, err = cli(capsys, "check", str(page), "--format", "json")
    assert rc == 0, err
    index = tmp_path / "index.txt"
    index.write_text(BOM + (ROOT / "examples" / "layouts" / "m16n8k16_a_swapped.txt").read_text(encoding="utf-8"),
                     encoding="utf-8")
    assert cli(capsys, "conform", A16, "--formula", str(index))[0] == 1  # read, and permuted as without the mark
    rc, table, _ = cli(capsys, "table", A16, "--format", "json")
    (tmp_path / "t.json").write_text(BOM + table, encoding="utf-8")
    assert cli(capsys, "conform", A16, "--table", str(tmp_path / "t.json"))[0] == 0
    assert cli(capsys, "conform", A16, "--cute", BOM + CUTE_A16)[0] == 0
    rc, js, _ = cli(capsys, "check", SMALL, "--format", "json")
    (tmp_path / "b.json").write_text(BOM + js, encoding="utf-8")
    assert cli(capsys, "check", SMALL, "--baseline", str(tmp_path / "b.json"))[0] == 0
    assert read_text(tmp_path / "b.json") == js


# ----------------------------------------------------------------------------- U16. pictures

def test_a_64_by_24_picture_is_drawn_whole():
    lay = api.layout(api.load([SPECS]), "wgmma.m64nNk16.D.f16").instance(N=24)
    assert (lay.rows, lay.cols) == (64, 24) and not svg.needs_condensing(lay)
    picture = svg.layout_svg(lay)
    assert "condensed" not in picture and picture.count("<rect") >= 64 * 24
    k256 = api.layout(api.load([SPECS]), "mma.m16n8k256.A.b1")
    assert svg.needs_condensing(k256) and "condensed" in svg.layout_svg(k256)


# ----------------------------------------------------------------------------- docs: help and exit codes

def test_every_option_has_help_and_one_timeout_text():
    missing = [(name, a.option_strings or a.dest) for name, a in _options(build_parser()) if not a.help]
    assert missing == []
    helps = {name: a.help for name, a in _options(build_parser()) if "--timeout" in a.option_strings}
    assert helps["check"] == helps["report"] == helps["diff"] == helps["conform"]


def test_help_lists_every_exit_code(capsys):
    for cmd in ("check", "ingest", "report", "diff", "conform", "handoff", "crosscheck", "confirm"):
        rc, out, _ = cli(capsys, cmd, "--help")
        assert rc == 0 and "\n  1  " in out and "\n  2  " in out and "130" in out, cmd


def _crosscheck_ok(tmp_path: Path) -> str:
    d = tmp_path / "cute-sm70"
    d.mkdir()
    shutil.copy(ROOT / "tests" / "data" / "notations" / "cutlass-4.2.0" / "mma_traits_sm70.hpp", d)
    return str(d)


def _deviating_device(monkeypatch) -> None:
    from verify.hardware import simdevice
    real = simdevice.run
    monkeypatch.setattr(simdevice, "run", lambda ins, model=None: real(ins, simdevice.swap_elements(
        simdevice.model_from_instruction(ins), "A", (5, 1), (5, 2))))


@pytest.mark.slow
def test_the_readme_exit_codes_hold_for_every_command(tmp_path, docs_dir, capsys, monkeypatch):
    """0 as expected, 1 not, 2 bad input, for each subcommand (those with no "not as expected" outcome: 0 and 2)."""
    broken, page, changed = str(broken_spec(tmp_path)), str(docs_dir / P3), str(changed_page(tmp_path, docs_dir))
    nowhere = str(tmp_path / "missing.toml")
    cases = {
        "check": ([SMALL], [broken], [nowhere]),
        "list": (["--specs", SMALL], None, ["--specs", nowhere]),
        "table": ([A16], None, [A16, "--format", "svg", "--metadata", "1"]),
        "pictures": ([SMALL, "--out", str(tmp_path / "p0")], None, [nowhere, "--out", str(tmp_path / "p2")]),
        "ingest": ([page, "--out", str(tmp_path / "i0")], [changed, "--out", str(tmp_path / "i1")], [nowhere]),
        "diff": ([SMALL, SMALL], [SMALL, broken], [SMALL, nowhere]),
        "report": ([SMALL, "--out", str(tmp_path / "r0")], [broken, "--out", str(tmp_path / "r1")],
                   [nowhere, "--out", str(tmp_path / "r2")]),
        "probe": ([A16, "--emit", str(tmp_path / "pr")], None, ["no.such.id", "--emit", str(tmp_path / "pr2")]),
        "confirm": ([A16, "--device", "simulated"], "deviating", ["no.such.id", "--device", "simulated"]),
        "conform": ([A16, "--cute", CUTE_A16], [A16, "--formula", str(ROOT / "examples" / "layouts" /
                                                                     "m16n8k16_a_swapped.txt")],
                    [A16, "--cute", "(("]),
        "handoff": (["mma.m16n8k16.float.C.f32", A16], ["mma.m16n8k32.C.s32", "mma.m16n8k32.A.u8_s8"],
                    ["no.such.id", A16]),
        "crosscheck": (["--cute", _crosscheck_ok(tmp_path)],
                       ["--cute", str(ROOT / "tests" / "data" / "notations" / "cutlass-4.2.0")],
                       ["--cute", nowhere]),
        "banks": (["--cute", "tile_to_shape(GMMA::Layout_K_SW128_Atom<half_t>{}, Shape<_64,_64>{})",
                   "--access", "ldmatrix.x4"],
                  ["--cute", "(64,64):(64,1)", "--type", "f16", "--access", "ldmatrix.x4"],
                  ["--cute", "((", "--type", "f16", "--access", "ldmatrix.x4"]),
        "descriptor": (["--cute", "GMMA::Layout_K_SW128_Atom<half_t>"], ["--cute", "(8,64):(64,1)", "--type", "f16"],
                       ["--cute", "((", "--type", "f16"]),
        "consistent": (["--writer", "storage.sf.cutlass.128x4.tile", "--writer", "tcgen05.cp.source.32x128b",
                        "--writer", "tcgen05.cp.32x128b.warpx4", "--reader", "tcgen05.sf.A.4x1"],
                       ["--writer", "storage.sf.flat_batch_padding", "--reader", "storage.sf.cutlass.128x4.quantizer"],
                       ["--writer", "no.such.id", "--reader", "tcgen05.sf.A.4x1"]),
        "kernel": ([str(ROOT / "examples" / "kernels" / "mma_inline.toml")],
                   [str(ROOT / "examples" / "kernels" / "mma_inline_read_swizzled.toml")], [nowhere]),
    }
    assert set(cases) == set(next(a for a in build_parser()._actions
                                  if isinstance(a, argparse._SubParsersAction)).choices)
    for cmd, (ok, fail, bad) in cases.items():
        rc, _, err = cli(capsys, cmd, *ok)
        assert rc == 0, (cmd, "success", err[-500:])
        if fail == "deviating":
            with monkeypatch.context() as m:
                _deviating_device(m)
                rc, out, err = cli(capsys, cmd, *ok)
            assert rc == 1 and "contradicted" in out, (cmd, err[-500:])
        elif fail is not None:
            rc, _, err = cli(capsys, cmd, *fail)
            assert rc == 1, (cmd, "failure", err[-500:])
        one_error_line(*cli(capsys, cmd, *bad))


@pytest.mark.parametrize("page,heading", [("README.md", "### Exit codes"), ("docs/commands.md", "## Exit codes")])
def test_the_docs_state_the_exit_codes_and_the_commands_that_never_exit_1(page, heading):
    text = (ROOT / page).read_text(encoding="utf-8")
    table = text[text.index(heading):].split("\n#", 1)[0]
    for code in ("| 0 |", "| 1 |", "| 2 |", "| 130 |", "| 143 |"):
        assert code in table, code
    assert "`list`, `table`, `pictures` and `probe`" in table
