"""The README and every page under docs/ are a contract (``tests/transcripts.py`` says how they are read): every
transcript they show (``$ ptx-verify ...`` followed by output) is what the tool prints today, every command line
they show parses, and every relative link and anchor between them resolves.  A transcript that cannot run in the
README's test command is in ``SLOW`` with the reason, and runs in CI's integration tier; none is skipped silently
(one whose pages or toolchain are absent is skipped, saying which)."""
from __future__ import annotations

import contextlib
import importlib.util
import io
import re
from pathlib import Path

import pytest

from conftest import ROOT, pages_as_recorded
from transcripts import Transcript, every, here, pages, pattern, rel
from verify.cli.main import build_parser, main

# (page, the command's first words) -> why the transcript is an integration test (marked slow)
SLOW = {
    ("docs/kernels.md", "kernel --triton"): "compiles a Triton kernel (Triton, seconds of compile)",
    ("docs/releases.md", "check specs --release"): "a whole-catalog command end to end (10 s each on 2 busy cores)",
}
# What a transcript needs beyond the checkout, and how to tell it is here.
NOTATION = {"--triton", "--cute", "--formula", "--tilelang", "--table", "--tiled-mma"}  # check of one given layout
NEEDS = {"kernel --triton": ("triton", "Triton is not installed (pip install -e '.[refs]' gives triton==3.9.0)")}


def _slow(t: Transcript) -> str | None:
    words = " ".join(t.argv)
    return next((why for (page, start), why in SLOW.items() if page == t.page and words.startswith(start)), None)


def _params() -> list:
    return [pytest.param(t, id=t.id, marks=[pytest.mark.slow] if _slow(t) else []) for t in every() if t.shown]


def _run(t: Transcript, monkeypatch: pytest.MonkeyPatch, tmp: Path) -> tuple[int, str]:
    """Run in this process from the checkout; stdout (unless the command line sends it elsewhere), then stderr.
    What it writes under ``/tmp/`` goes to ``tmp``.  A ``check`` or ``report`` of spec files runs with
    ``--jobs 1`` (their output does not depend on the workers; no pool of processes in a test worker)."""
    for name, where in t.needs():
        if not where.is_dir():
            pytest.skip(f"{t.id} names {name}: the PTX ISA pages are not at {where} (set PTX_DOCS_DIR / PTX_DOCS_DIR_9_1)")
    for start, (module, why) in NEEDS.items():
        if " ".join(t.argv).startswith(start) and importlib.util.find_spec(module) is None:
            pytest.skip(f"{t.id}: {why}")
    argv = [str(tmp) + a[len("/tmp"):] if a.startswith("/tmp/") else a for a in here(t.argv)]
    if argv[0] in ("check", "report") and "--jobs" not in argv and not NOTATION & set(argv):
        argv += ["--jobs", "1"]
    monkeypatch.chdir(ROOT)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(argv)
    got = (out.getvalue() if t.stdout else "") + err.getvalue()
    return rc, pages_as_recorded(got).replace(str(tmp), "/tmp")


@pytest.mark.parametrize("t", _params())
def test_a_transcript_is_todays_output(t: Transcript, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    rc, got = _run(t, monkeypatch, tmp_path)
    assert rc in (0, 1) or (rc == 2 and ": error:" in t.shown), (t.id, rc, got)
    assert re.fullmatch(pattern(t.shown), got), f"{t.id}: `ptx-verify {' '.join(t.argv)}` prints today:\n{got}"


def test_every_shown_command_line_parses() -> None:
    parser = build_parser()
    shown = [t for t in every()]
    assert len(shown) >= 60
    for t in shown:
        try:
            parser.parse_args(here(t.argv))
        except SystemExit:
            pytest.fail(f"{t.id}: `ptx-verify {' '.join(t.argv)}` does not parse")


def test_the_transcripts_were_found_and_every_slow_one_is_real() -> None:
    found = [t for t in every() if t.shown]
    assert len(found) >= 40
    assert {t.page for t in found} >= {"README.md", "docs/layouts.md", "docs/shared-memory.md", "docs/kernels.md",
                                       "docs/releases.md", "docs/tensor-memory.md", "docs/block-tiles.md"}
    for page, start in SLOW:
        assert any(t.page == page and " ".join(t.argv).startswith(start) for t in found), (page, start)


def test_the_reader_reads_what_a_page_shows() -> None:
    """Continued lines, elided output, a command line with no output, output that ends where the next begins."""
    from transcripts import transcripts
    page = ROOT / "tests" / "data" / "docs_reader.md"
    [two, one, three, four, five] = transcripts(page)
    assert one.argv == ("check", "--triton", "a.mlir") and one.shown == "line 1\n\nline 2\n"
    assert two.argv == ("table", "X", "--format", "svg", "--out", "x.svg") and two.shown is None
    assert three.argv == ("conform", "X", "--cute", "(4,8):(1,4)") and three.shown == "conform X: equal\n...\n"
    assert four.argv == ("list",) and four.shown is None and four.line == 20
    assert five.argv == ("ingest", "page.md") and not five.stdout and one.stdout and five.shown == "page.md:1:1: warning: ...\n"
    pat = pattern("a: shuffle\n  lane 0: x, ...\n  ...\nend\n")
    assert re.fullmatch(pat, "a: shuffle\n  lane 0: x, y, z\n  1\n  2\nend\n")
    assert not re.fullmatch(pat, "a: free\n  lane 0: x, y\nend\n")
    assert not re.fullmatch(pat, "a: shuffle\n  lane 0: x, y\nend\nmore\n")


# ----------------------------------------------------------------------------- links and anchors

def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation but ``-`` and ``_`` dropped, spaces to ``-``."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _outside_code(text: str) -> str:
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    return re.sub(r"`[^`\n]*`", "", text)


def _anchors(text: str) -> set[str]:
    out: set[str] = set()
    seen: dict[str, int] = {}
    for m in re.finditer(r"^#{1,6} (.*)$", re.sub(r"^```.*?^```", "", text, flags=re.S | re.M), re.M):
        s = _slug(m.group(1))
        out.add(s if s not in seen else f"{s}-{seen[s]}")
        seen[s] = seen.get(s, 0) + 1
    return out


def test_every_relative_link_and_anchor_resolves() -> None:
    docs = [*pages(), ROOT / "benchmarks" / "README.md"]
    bad, links = [], 0
    for page in docs:
        for target in re.findall(r"\]\(([^)\s]+)\)", _outside_code(page.read_text(encoding="utf-8"))):
            if re.match(r"[a-z]+:", target):
                continue
            links += 1
            path, _, anchor = target.partition("#")
            dest = (page.parent / path).resolve() if path else page
            if not dest.exists():
                bad.append(f"{rel(page)}: {target}: no such file")
            elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest.read_text(encoding="utf-8")):
                bad.append(f"{rel(page)}: {target}: no such anchor")
    assert links >= 40
    assert not bad, bad


def test_the_anchor_rule_is_githubs() -> None:
    assert _slug("Independent references: `crosscheck --reference`, `check --references`") == \
        "independent-references-crosscheck---reference-check---references"
    assert _anchors("# A\n## A\n```\n# not a heading\n```\n### B: c\n") == {"a", "a-1", "b-c"}
