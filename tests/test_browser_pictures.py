"""Every kind of picture, and the HTML report, rendered the way users look at them: in a real browser (headless
Chromium over the DevTools protocol, ``tests/browser.py``), at 100 % zoom in a 1400 px window (issue 42).

For each kind of ``tests/picture_kinds.py`` (a register fragment, a family member, a sparse A, a block tile
coloured by warp, a shared-memory tile with its banks and swizzle atoms, a bank-conflict access, a Tensor Memory
data path, a writer/reader mismatch, the kernel counterexample, the report): the page
loads with no console error, the picture is rendered at the size its SVG states, no label is smaller than the
font the picture states or runs out of it, the labels and marks a user needs are there (the counterexample's
cell outlined and on screen, the legend), and a large layout is condensed.  Each run keeps a screenshot of each
kind (``PTX_SCREENSHOTS_DIR``); ``tests/screenshots.py`` writes them into ``docs/pictures/``.

The browser tests start Chromium, so they are integration tests (``slow``), run by CI's second command; without
a browser they skip, saying how to install one.  The tests of the registry itself run everywhere.
"""
from __future__ import annotations

import os
import shutil
import struct
from pathlib import Path

import pytest

import browser as chromium
from picture_kinds import KINDS, MEASURE, MIN_FONT, Kind, check, kind, render, screenshot

from conftest import ROOT

CHROMIUM = chromium.find()
DRAWN = [k for k in KINDS if k.argv is not None]


@pytest.fixture(scope="module")
def browser():
    if CHROMIUM is None:
        pytest.skip(chromium.missing())
    with chromium.Browser.start(CHROMIUM) as b:
        yield b


def _keep(png: Path) -> None:
    keep = os.environ.get("PTX_SCREENSHOTS_DIR")  # to look at them: PTX_SCREENSHOTS_DIR=/tmp/shots
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(png, Path(keep) / png.name)


@pytest.mark.slow
@pytest.mark.parametrize("k", DRAWN, ids=[k.name for k in DRAWN])
def test_every_kind_of_picture_reads_in_a_browser(k: Kind, browser, tmp_path: Path) -> None:
    page, m, problems = render(browser, k, tmp_path)
    assert problems == [], f"{k.name}: " + "\n".join(problems)
    png = screenshot(page, m, k, tmp_path / f"{k.name}.png")
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    w, h = struct.unpack(">II", data[16:24])
    assert 0 < w <= 1400 and 0 < h <= 900
    _keep(png)
    page.close()


@pytest.mark.slow
def test_the_whole_bundled_report_reads_in_a_browser(browser, bundled_report_dir) -> None:
    """The report of every bundled spec: every inlined picture at its stated size, no small label, no console
    error, no sideways scrolling at 1400 px."""
    out, _ = bundled_report_dir
    page = browser.open(out / "report.html", 1400, 900)
    m = page.evaluate(MEASURE)
    whole = Kind("bundled report", "", None, needs=("mma.m16n8k256.A.b1",), condensed=True, report=True)
    assert check(whole, m, {}, page.errors) == []
    assert len(m["pics"]) > 10
    page.close()


@pytest.mark.slow
def test_the_checks_see_what_they_must_catch(browser, tmp_path: Path) -> None:
    """A picture with a 9 px label, a title wider than itself, scaled by CSS, and a page with a console error and a
    missing image: each is reported; and the two defects of issue 42 (a 64 x 64 banks picture drawn whole, a block
    picture whose header says T<lane>) fail the kinds' checks."""
    svg = ('<svg xmlns="http://www.w3.org/2000/svg" width="200" height="60" viewBox="0 0 200 60" font-size="10">'
           '<text x="4" y="20" font-size="9">tiny</text><text x="4" y="40">' + "wide " * 30 + "</text></svg>")
    (tmp_path / "bad.svg").write_text(svg, encoding="utf-8")
    page = browser.open(tmp_path / "bad.svg", 1400, 900)
    problems = check(Kind("bad", "", None, needs=("legend",)), page.evaluate(MEASURE), {}, page.errors)
    assert any("'tiny' is 9.0 px" in p for p in problems) and any("runs out of the picture" in p for p in problems)
    assert "no label 'legend'" in problems
    html = ("<!DOCTYPE html><html><body><div style='width:100px'>" + svg.replace('width="200"', 'style="width:100%"')
            + "</div><img src='missing.png'><script>console.error('boom')</script></body></html>")
    (tmp_path / "bad.html").write_text(html, encoding="utf-8")
    page = browser.open(tmp_path / "bad.html", 1400, 900)
    problems = check(Kind("bad", "", None, report=True), page.evaluate(MEASURE), {}, page.errors)
    assert any(p.startswith("console: console.error: boom") for p in problems)
    assert any("missing.png" in p for p in problems) and any("where the SVG states 0 x 60" in p for p in problems)
    # the banks picture drawn whole, as before issue 35's item 18: 64 columns, 2256 px wide
    banks = kind("banks")
    whole = Kind("banks", "", banks.argv + ("--full",), banks.needs, banks.marks, condensed=True)
    _, _, problems = render(browser, whole, tmp_path)
    assert "a large layout is not condensed (no 'condensed: ...' note)" in problems
    assert any(p.startswith("condensed, but 2256 px wide") for p in problems)
    # a block picture whose header names lanes: the label the kind needs is not there
    block = kind("block")
    wrong = Kind("block", "", block.argv, tuple(n.replace("T<thread>", "T<lane>") for n in block.needs),
                 condensed=True)
    _, _, problems = render(browser, wrong, tmp_path)
    assert problems == [f"no label {wrong.needs[1]!r}"]


# ----------------------------------------------------------------------------- the registry (no browser)

def _drawing_commands() -> set[str]:
    """The commands that draw a picture: an ``--svg`` option, or ``svg`` among ``--format``'s choices."""
    from verify.cli.main import build_parser
    import argparse
    p = build_parser()
    sub = next(a for a in p._actions if isinstance(a, argparse._SubParsersAction))
    out = set()
    for name, cmd in sub.choices.items():
        for a in cmd._actions:
            if "--svg" in a.option_strings or ("--format" in a.option_strings and "svg" in (a.choices or ())):
                out.add(name)
    return out


def test_every_command_that_draws_has_a_kind() -> None:
    """The hook for new pictures: a command that draws (an ``--svg`` option or ``--format svg``) is rendered in the
    browser tests once its picture is a ``Kind`` in ``tests/picture_kinds.py``; ``kernel --svg`` is the ``kernel``
    kind."""
    drawing = _drawing_commands()
    assert {"table", "banks", "consistent", "kernel"} <= drawing
    covered = {k.argv[0] for k in DRAWN}
    missing = sorted(drawing - covered)
    assert not missing, (f"{', '.join(missing)} draw(s) pictures that no Kind of tests/picture_kinds.py renders: add "
                         "one (argv with {out}), and its screenshot to docs/pictures.md")
    assert kind("kernel").argv is not None and kind("kernel").argv[0] == "kernel"


def test_the_docs_show_a_screenshot_of_every_kind() -> None:
    """docs/pictures.md shows docs/pictures/<kind>.png of every kind drawn (``tests/screenshots.py`` makes them)."""
    page = (ROOT / "docs" / "pictures.md").read_text(encoding="utf-8")
    for k in DRAWN:
        png = ROOT / "docs" / "pictures" / f"{k.name}.png"
        assert f"](pictures/{k.name}.png)" in page, k.name
        data = png.read_bytes()
        w, h = struct.unpack(">II", data[16:24])
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and 0 < w <= 1400 and 0 < h <= 900, k.name
    assert MIN_FONT == 10 and "10 px" in page


@pytest.mark.slow
def test_every_picture_of_the_catalog_reads_in_a_browser(browser, tmp_path: Path) -> None:
    """``pictures --out DIR`` of the bundled specs: every picture (condensed or not) loads without an error, at
    its stated size, with no label under the stated font or out of the picture."""
    from verify.cli.main import main
    out = tmp_path / "pics"
    assert main(["pictures", "--out", str(out)]) == 0
    bad = {}
    for svg in sorted(out.glob("*.svg")):
        if svg.name.endswith(".full.svg"):
            continue
        page = browser.open(svg, 1400, 900)
        problems = [p for p in check(Kind(svg.name, "", None), page.evaluate(MEASURE), {}, page.errors)
                    if not p.startswith("condensed, though")]  # a kind's own question; here any picture
        page.close()
        if problems:
            bad[svg.name] = problems
    assert not bad, bad
