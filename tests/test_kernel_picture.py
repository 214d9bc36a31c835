"""The kernel counterexample picture (``ptx-verify kernel ... --svg FILE [--full]``, ``verify.outputs.svg_kernel``)
and what it draws from (``KernelResult.cells``, ``verify.kernel.cells``): every output element coloured by what the
verdict says of it, the first wrong one outlined with its chain beside it, a legend, condensed when large,
deterministic bytes, no label under the stated font size.  The browser renders it in
``tests/test_browser_pictures.py`` (the ``kernel`` kind) and in the slow test at the end."""
from __future__ import annotations

import html
import re
from pathlib import Path

import numpy as np
import pytest

from conftest import ROOT, cli
from verify import api
from verify.kernel.cells import EXACT, NEVER, TWICE, WRONG, Holding, OutOfBounds, OutputCells
from verify.kernel.frontdoor import verify
from verify.kernel.result import Finding, KernelResult, Link
from verify.outputs.svg_kernel import kernel_svg

KERNELS = ROOT / "examples" / "kernels"
REFUTED = str(KERNELS / "mma_inline_read_swizzled.toml")
PROVED = str(KERNELS / "mma_inline.toml")
OUTLINE = re.compile(r'<rect x="(\d+)" y="(\d+)" width="(\d+)" height="(\d+)" fill="none" stroke="#0050c8" '
                     r'stroke-width="2" stroke-dasharray="5,3"/>')
FILLS = {"exact": "#c8f0c8", "wrong": "#ffb4b4", "twice": "#ffd28c", "never": "url(#hatch-kernel)"}


@pytest.fixture(scope="module")
def refuted() -> KernelResult:
    return verify(REFUTED)


@pytest.fixture(scope="module")
def proved() -> KernelResult:
    return verify(PROVED)


def outlines(svg: str) -> list[tuple[int, int, int, int]]:
    """The dashed blue outlines of the grid (not the legend's swatch)."""
    return [(int(x), int(y), int(w), int(h)) for x, y, w, h in OUTLINE.findall(svg) if (w, h) != ("22", "14")]


def texts(svg: str) -> list[str]:
    return [html.unescape(re.sub(r"<[^>]+>", "", t)) for t in re.findall(r"<text[^>]*>.*?</text>", svg)]


def tile_lines(svg: str) -> list[tuple[int, int, int, int]]:
    """The thick lines where CTAs' tiles meet (not the legend's 14 px swatch)."""
    lines = re.findall(r'<line x1="(\d+)" y1="(\d+)" x2="(\d+)" y2="(\d+)" stroke="#000000" stroke-width="2"/>', svg)
    return [(int(a), int(b), int(c), int(d)) for a, b, c, d in lines if (int(c) - int(a), int(d) - int(b)) != (0, 14)]


def cell_rects(svg: str) -> dict[str, int]:
    """How many grid cells of each verdict are drawn (a cell is a rect with a tooltip naming its element)."""
    out = {}
    for name, fill in FILLS.items():
        out[name] = len(re.findall(rf'<rect [^>]*fill="{re.escape(fill)}" stroke="#ffffff"><title>', svg))
    return out


def assert_readable(svg: str) -> None:
    """The root states font-size 10 and nothing is drawn smaller; integer coordinates only."""
    root = re.match(r'<svg [^>]*font-size="(\d+)"', svg)
    assert root is not None and root.group(1) == "10"
    assert all(int(s) >= 10 for s in re.findall(r'font-size="(\d+)"', svg))
    assert not re.search(r'(?:x|y|width|height)="-?\d+\.\d', svg)


# ----------------------------------------------------------------------------- what the verdict says of each element

def test_the_cells_say_what_the_findings_say(refuted: KernelResult) -> None:
    """The picture's data agrees with the verdict: the wrong elements are the finding's count, the first of them is
    its element, and what it holds starts as the finding's words do."""
    c = refuted.cells
    assert c is not None and c.shape == (64, 32) and c.tensor == "C" and c.products == 64
    (f,) = refuted.findings
    assert c.count("wrong") == f.count == 1024 and c.count("exact") == 1024
    assert c.count("never written") == c.count("written twice") == 0
    assert c.name(c.first("wrong")) == f.element == "C[1, 0]"
    h = c.holding((1, 0))
    assert (h.first, h.second) == ("A[1,8]", "\u00d7B[0,0]")
    assert f.words.split("; ")[1].startswith("has " + h.words.split(" and ")[0][4:])
    assert h.words == "has A[1, 8] * B[0, 0] and 63 more wrong products; lacks 64 of its 64 products"
    assert c.verdict((0, 0)) == "exact" and c.holding((0, 0)) is None
    assert c.writer((1, 0)) == ((0, 0, 0), 4)  # the chain's store: CTA 0, thread 4
    assert c.writer((63, 31)) == ((1, 1, 0), 127)
    assert (c.verdicts[1::2] == WRONG).all() and (c.verdicts[0::2] == EXACT).all()  # the odd rows
    with pytest.raises(ValueError):
        c.verdicts[0, 0] = NEVER  # read-only


def test_the_api_result_carries_the_cells_and_the_json_is_unchanged(refuted: KernelResult) -> None:
    r = api.verify_kernel(REFUTED)
    assert r.cells is not None and r.cells.verdict((1, 0)) == "wrong"
    assert r.to_json() == refuted.to_json() and "cells" not in r.to_json()
    assert kernel_svg(r) == kernel_svg(refuted)


def _mutant(tmp_path: Path, by: int) -> str:
    """mma_inline with its first store of C moved ``by`` bytes (``tests/test_kernel_verify.py``'s plant)."""
    lines = (KERNELS / "mma_inline.ptx").read_text(encoding="utf-8").split("\n")
    k = next(n for n, s in enumerate(lines) if re.search(r"st\.global\.f32\s+\[%rd\d+\],", s))
    lines[k] = re.sub(r"\[(%rd\d+)\]", rf"[\1+{by}]", lines[k])
    (tmp_path / "k.ptx").write_text("\n".join(lines), encoding="utf-8")
    toml = (KERNELS / "mma_inline.toml").read_text(encoding="utf-8").replace("mma_inline.ptx", "k.ptx")
    (tmp_path / "k.toml").write_text(toml, encoding="utf-8")
    return str(tmp_path / "k.toml")


def test_a_store_moved_by_one_element_is_never_written_and_written_twice(tmp_path: Path) -> None:
    r = verify(_mutant(tmp_path, 4))
    c = r.cells
    kinds = {f.kind: f for f in r.findings}
    assert c.count("never written") == kinds["never_written"].count == 512
    assert c.count("written twice") == kinds["written_twice"].count == 512 and c.count("wrong") == 0
    assert c.name(c.first("never written")) == kinds["never_written"].element == "C[0, 0]"
    assert c.name(c.first("written twice")) == kinds["written_twice"].element == "C[0, 1]"
    assert int(c.writes[0, 1]) == 2 and c.writer((0, 0)) is None
    svg = kernel_svg(r)
    t = texts(svg)
    assert "C[0, 0]: never written (the first of 512)" in t  # outlined: no wrong element, the first never written
    assert "never written (512)" in t and "written twice, value exact (512)" in t
    assert "T0" in t and "\u00d72" in t and "never" in t
    assert any(s.startswith("written twice (512 such): C[0, 1]: written 2 times") for s in t)
    assert len(outlines(svg)) == 1
    assert 'fill="url(#hatch-kernel)" stroke="#ffffff"><title>C[0, 0]: never written</title>' in svg


def test_a_store_past_the_tensor_is_drawn_where_it_lands(tmp_path: Path) -> None:
    r = verify(_mutant(tmp_path, 64 * 32 * 4))
    c = r.cells
    oob = c.out_of_bounds
    assert oob is not None and oob.store and oob.index == (64, 0)
    assert oob.count == next(f.count for f in r.findings if f.kind == "global_out_of_bounds") == 512
    svg = kernel_svg(r)
    t = texts(svg)
    assert "out of bounds (512 accesses)" in t
    assert "C[64, 0]: the first of 512 accesses out of bounds, line 452" in t
    assert re.search(r'fill="#d8b4ff" stroke="#d00000" stroke-width="2"><title>C\[64, 0\]: the first of 512 accesses '
                     r"out of bounds, line 452: st.global.f32 writes 0x30000002000 \(outside every tensor\)", svg)
    assert "64" in t  # the row past the end is labelled


# ----------------------------------------------------------------------------- the picture

def test_the_refuted_fixture_is_drawn_with_its_counterexample_and_chain(tmp_path: Path, capsys) -> None:
    out = tmp_path / "c.svg"
    rc, text, err = cli(capsys, "kernel", REFUTED, "--svg", str(out))
    assert (rc, err) == (1, "")
    assert text == cli(capsys, "kernel", REFUTED)[1]  # the text is the same with or without the picture
    svg = out.read_text(encoding="utf-8")
    assert_readable(svg)
    t = texts(svg)
    assert t[0] == "kernel mma_gemm (mma_inline_read_swizzled.ptx): refuted"
    for need in ("exactly its sum (1024)", "wrong: what it holds (1024)", "never written (0)",
                 "written twice, value exact (0)", "out of bounds (0 accesses)",
                 "counterexample (its chain beside the grid)", "thick line: where one CTA's tile meets another's",
                 "C[1, 0]: wrong (the first of 1024)", "the chain that made it:", "st.global at line 455 [mma_inline.cu:47]",
                 "<- mma.m16n8k16 at line 416 [mma_inline.cu:42]", "<- ldmatrix.x4 at line 406 [mma_inline.cu:35]",
                 "<- st.shared at line 214 [mma_inline.cu:29]", "<- ld.global at line 209 [mma_inline.cu:29]",
                 "(thread 1) read shared 0x30", "A[1,8]", "\u00d7B[0,0]", "T0", "T1"):
        assert need in t, need
    assert any(s.startswith("(warp 0, lane 4, register a0 = %r221, element 0)") for s in t)
    assert any(s.startswith("condensed: ") for s in t)  # 64 rows of 30 px: condensed, the outlined one in sight
    # the outline is around the cell of C[1, 0]: row 1, column 0
    ((x, y, w, h),) = outlines(svg)
    cell = re.search(rf'<rect x="{x + 3}" y="{y + 3}" width="{w - 6}" height="{h - 6}" fill="#ffb4b4" '
                     r'stroke="#ffffff"><title>C\[1, 0\]: wrong: has A\[1, 8\] \* B\[0, 0\]', svg)
    assert cell is not None
    width = int(re.match(r'<svg [^>]*width="(\d+)"', svg).group(1))
    assert width <= 1400 and y < 900  # on the first screen, with the chain beside it
    drawn = cell_rects(svg)
    assert drawn["wrong"] > 100 and drawn["exact"] > 100 and drawn["never"] == drawn["twice"] == 0


def test_full_draws_every_cell(tmp_path: Path, capsys, refuted: KernelResult) -> None:
    out = tmp_path / "c.svg"
    assert cli(capsys, "kernel", REFUTED, "--svg", str(out), "--full")[0] == 1
    svg = out.read_text(encoding="utf-8")
    assert_readable(svg)
    assert cell_rects(svg) == {"exact": 1024, "wrong": 1024, "twice": 0, "never": 0}
    assert not any(s.startswith("condensed") for s in texts(svg))
    assert svg == kernel_svg(refuted, full=True)
    assert len(outlines(svg)) == 1


def test_the_proved_fixture_is_every_element_exact(proved: KernelResult) -> None:
    svg = kernel_svg(proved)
    assert_readable(svg)
    t = texts(svg)
    assert t[0] == "kernel mma_gemm (mma_inline.ptx): proved"
    assert "exactly its sum (2048)" in t and "wrong: what it holds (0)" in t
    assert not outlines(svg) and "the chain that made it:" not in t and "counterexample" not in t
    assert proved.cells.count("exact") == 2048
    # four CTAs of 2 x 2: their tiles meet along column 16 and row 32
    full = kernel_svg(proved, full=True)
    assert cell_rects(full)["exact"] == 2048
    assert len(tile_lines(full)) == 2  # x = 16 and y = 32, each the whole grid's length


def test_the_picture_is_deterministic(refuted: KernelResult) -> None:
    again = verify(REFUTED)
    assert kernel_svg(again) == kernel_svg(refuted) and kernel_svg(again, full=True) == kernel_svg(refuted, full=True)


def test_svg_usage_errors_are_one_line_before_any_work(tmp_path: Path, capsys) -> None:
    rc, out, err = cli(capsys, "kernel", REFUTED, "--full")
    assert (rc, out) == (2, "") and err == "ptx-verify: error: --full is for --svg FILE (the picture)\n"
    mine = tmp_path / "notes.txt"
    mine.write_text("mine\n", encoding="utf-8")
    rc, out, err = cli(capsys, "kernel", REFUTED, "--svg", str(mine))
    assert (rc, out) == (2, "") and err.count("\n") == 1 and str(mine) in err
    assert mine.read_text(encoding="utf-8") == "mine\n"
    rc, out, err = cli(capsys, "kernel", REFUTED, "--svg", str(tmp_path / "no" / "c.svg"))
    assert (rc, out) == (2, "") and err.startswith("ptx-verify: error: cannot write") and err.count("\n") == 1


# ----------------------------------------------------------------------------- condensing, shapes (made-up results)

def made_up(shape: tuple[int, ...], verdicts: np.ndarray, *, grid: tuple[int, int, int] = (1, 1, 1),
            cta: np.ndarray | None = None, oob: OutOfBounds | None = None) -> KernelResult:
    """A result with these verdicts (wrong elements hold ``A[i,0] x B[0,j]``), as ``verify`` would give it."""
    v = verdicts.astype(np.uint8).reshape(shape)
    flat = v.reshape(-1)
    holdings = {int(k): Holding(f"A[{k},0]", f"\u00d7B[0,{k}]", f"has A[{k}, 0] * B[0, {k}]")
                for k in np.flatnonzero(flat == WRONG)}
    findings = []
    wrong = np.flatnonzero(flat == WRONG)
    if len(wrong):
        idx = ", ".join(str(int(i)) for i in np.unravel_index(int(wrong[0]), shape))
        findings.append(Finding("wrong_element", "expected sum over k; has ...", f"C[{idx}]", 10, 1, "k.cu:3",
                                len(wrong), (Link("st.global", 12, 1, "k.cu:4", "(CTA 0, thread 0) wrote it"),
                                             Link("mma.m16n8k16", 10, 1, "k.cu:3", "(warp 0, lane 0, register a0)"))))
    never = np.flatnonzero(flat == NEVER)
    if len(never):
        findings.append(Finding("never_written", "never written", "C[0]", count=len(never)))
    writes = np.where(v == TWICE, 2, np.where(v == NEVER, 0, 1)).astype(np.uint8)
    c = np.zeros(shape, np.int64) if cta is None else cta.reshape(shape)
    threads = (np.arange(v.size) % 128).reshape(shape)
    cells = OutputCells("C", "f32", shape, grid, 16, v, writes, np.where(v == NEVER, -1, c),
                        np.where(v == NEVER, -1, threads), holdings, oob)
    return KernelResult("refuted" if findings else "proved", "k.ptx", "k", "k.toml", grid, (128, 1, 1),
                        "C[m, n] = A[m, k] * B[k, n]", tuple(findings), cells=cells)


def test_a_large_output_is_condensed_around_the_first_wrong_element() -> None:
    v = np.zeros((256, 512), np.uint8)
    v[200, 300] = WRONG
    v[201:210, 300:310] = WRONG
    svg = kernel_svg(made_up((256, 512), v))
    assert_readable(svg)
    width = int(re.match(r'<svg [^>]*width="(\d+)"', svg).group(1))
    height = int(re.match(r'<svg [^>]*height="(\d+)"', svg).group(1))
    assert width <= 1400 and height < 1700
    t = texts(svg)
    note = " ".join(s for s in t if s.startswith("condensed") or s.startswith("  "))
    assert re.search(r"condensed: \d+ of 512 columns and \d+ of 256 rows shown", note)
    assert "columns 2\u2013297 not shown (296)" in re.findall(r"<title>(.*?)</title>", svg)
    ((x, _, w, _),) = outlines(svg)
    assert 'C[200, 300]: wrong: has A[' in svg and x + w < 1400
    for r in (0, 1, 198, 199, 200, 201, 202, 254, 255):
        assert str(r) in t, r
    assert cell_rects(svg)["wrong"] >= 9  # the wrong block after the first one is in sight


def test_full_above_4096_cells_draws_colours_only() -> None:
    v = np.zeros((128, 128), np.uint8)
    v[64:] = WRONG
    svg = kernel_svg(made_up((128, 128), v), full=True)
    assert_readable(svg)
    assert "every cell, colours only (more than 4096 cells)" in texts(svg)
    assert len(re.findall(r'fill="#ffb4b4" stroke="#ffffff"><title>', svg)) == 64 * 128  # wrong: with a tooltip
    assert len(re.findall(r'fill="#c8f0c8" stroke="#ffffff"/?>', svg)) == 64 * 128  # exact: colour only
    assert "A[8192,0]" not in svg.split("</title>")[-1]  # no cell labels


def test_one_dimension_is_wrapped_and_more_are_panels() -> None:
    v = np.zeros(100, np.uint8)
    v[70] = NEVER
    svg = kernel_svg(made_up((100,), v))
    t = texts(svg)
    assert "cell = C[row * 32 + col]: the thread that wrote it (T&lt;thread&gt; in its CTA), or what a wrong element " \
           "holds (its first wrong product)" in svg
    assert all(r in t for r in ("0", "32", "64", "96"))
    assert 'fill="url(#hatch-kernel)" stroke="#ffffff"><title>C[70]: never written</title>' in svg
    assert len(outlines(svg)) == 1 and cell_rects(svg)["never"] == 1
    assert cell_rects(kernel_svg(made_up((100,), v), full=True)) == {"exact": 99, "wrong": 0, "twice": 0, "never": 1}
    v3 = np.zeros((6, 4, 8), np.uint8)
    v3[5, 1, 2] = WRONG
    svg = kernel_svg(made_up((6, 4, 8), v3))
    t = texts(svg)
    panels = [s for s in t if re.fullmatch(r"C\[\d, row, col\]", s)]
    assert panels == ["C[5, row, col]", "C[0, row, col]", "C[1, row, col]", "C[2, row, col]"]
    assert "4 of 6 grids drawn (one per leading index)" in t and "C[5, 1, 2]: wrong" in t
    assert cell_rects(svg)["wrong"] == 1


def test_tiles_of_different_ctas_are_outlined() -> None:
    v = np.zeros((8, 8), np.uint8)
    cta = np.zeros((8, 8), np.int64)
    cta[:, 4:] = 1
    cta[4:, :] += 2
    svg = kernel_svg(made_up((8, 8), v, grid=(2, 2, 1), cta=cta))
    (x1, y1, x2, y2), (x3, y3, x4, y4) = tile_lines(svg)  # one vertical, one horizontal, the whole grid's length
    assert x1 == x2 and y2 - y1 == 8 * 30 and y3 == y4 and x4 - x3 == x2 - x3 + x4 - x2
    assert "thick line: where one CTA's tile meets another's" in texts(svg)
    assert "(last written by CTA (1, 1, 0), thread" in svg


@pytest.mark.slow
def test_the_kernel_pictures_read_in_a_browser(tmp_path: Path, proved: KernelResult) -> None:
    """The proved fixture, a never-written/written-twice store, a store past the tensor and a --full picture, in
    headless Chromium: no console error, drawn at their stated size, no label under 10 px or out of the picture,
    the outline on screen (the refuted fixture is the ``kernel`` kind of tests/test_browser_pictures.py)."""
    import browser as chromium
    from picture_kinds import HIGHLIGHT, MARKS, MEASURE, Kind, check
    exe = chromium.find()
    if exe is None:
        pytest.skip(chromium.missing())
    pictures = {"proved": (kernel_svg(proved), ("exactly its sum (2048)",), (), True),
                "moved": (kernel_svg(verify(_mutant(tmp_path, 4))), ("never written (512)",), (HIGHLIGHT,), True),
                "oob": (kernel_svg(verify(_mutant(tmp_path, 8192))), ("out of bounds (512 accesses)",), (HIGHLIGHT,),
                        True),
                "full": (kernel_svg(verify(REFUTED), full=True), ("C[1, 0]: wrong (the first of 1024)",), (HIGHLIGHT,),
                         False)}
    with chromium.Browser.start(exe) as b:
        for name, (svg, needs, marks, condensed) in pictures.items():
            f = tmp_path / f"{name}.svg"
            f.write_text(svg, encoding="utf-8")
            page = b.open(f, 1400, 900)
            m = page.evaluate(MEASURE)
            got = {sel: page.evaluate(f"{MARKS}({sel!r})") for sel in marks}
            k = Kind(name, "", None, needs=needs, marks=marks, condensed=condensed)
            assert check(k, m, got, page.errors) == [], name
            page.close()
