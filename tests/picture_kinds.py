"""Every kind of picture the tool draws, and the HTML report, as a user makes them: the command, and what a user
needs to see in it.  The browser tests (``tests/test_browser_pictures.py``) render each in headless Chromium and
check it; the screenshot tool (``tests/screenshots.py``) makes ``docs/pictures/<name>.png`` of each from the
same rendering.

A new kind of picture is one more ``Kind`` here (``argv`` with ``{out}`` where the picture is written):
``test_every_command_that_draws_has_a_kind`` fails for a command that draws (an ``--svg`` option or ``--format svg``)
that no kind renders.
"""
from __future__ import annotations

import contextlib
import io
import os
from dataclasses import dataclass
from pathlib import Path

from conftest import ROOT

C = "mma.m16n8k16.float.C.f32"
HIGHLIGHT = 'rect[stroke="#0050c8"][stroke-dasharray]'  # a counterexample's dashed outline
CONFLICT = 'rect[stroke="#d00000"][stroke-width="3"]'   # a bank conflict's two cells
COLLISION = 'rect[stroke="#d00000"]'                     # cells sharing a place (red border)


@dataclass(frozen=True)
class Kind:
    """One kind of picture: ``argv`` draws it (``{out}``: the file written; for the report, the directory), and
    a user needs the texts ``needs`` rendered, the marks ``marks`` (CSS selectors) on screen, and a large layout
    ``condensed`` (a ``condensed: ...`` note, at most 1400 px wide)."""

    name: str
    what: str
    argv: tuple[str, ...] | None
    needs: tuple[str, ...] = ()
    marks: tuple[str, ...] = ()
    condensed: bool = False
    report: bool = False  # the HTML report (``argv`` writes a directory; the page is its report.html)

    def make(self, tmp: Path) -> Path:
        """Draw it into ``tmp``; the file to open (``ptx-verify`` in this process, in the repository root: paths in
        ``argv`` are relative to it)."""
        from verify.cli.main import main
        assert self.argv is not None, f"{self.name}: no command draws it yet"
        out = tmp / (self.name if self.report else f"{self.name}.svg")
        argv = [a.replace("{out}", str(out)) for a in self.argv]
        here = os.getcwd()
        os.chdir(ROOT)  # paths in the pictures are as a user in the repository gives them
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                rc = main(argv)
        finally:
            os.chdir(here)
        assert rc in (0, 1) and out.exists(), (self.name, rc)
        return out / "report.html" if self.report else out


KINDS: tuple[Kind, ...] = (
    Kind("fragment", "a register fragment with its counterexamples (m16n8k256 A: two owners at (8, 128), no "
         "owner at (8, 0)), condensed around them",
         ("table", "mma.m16n8k256.A.b1", "--format", "svg", "--out", "{out}"),
         needs=("mma.m16n8k256.A.b1", "lane % 8:", "several owners", "no owner", "counterexample",
                "cell (8, 128): 2 owners: T0:a96, T3:a32", "cell (8, 0): no owner"),
         marks=(HIGHLIGHT,), condensed=True),
    Kind("family", "a family member: wgmma's m64nNk16 D at N = 16, a warpgroup's 128 threads",
         ("table", "wgmma.m64nNk16.D.f16", "--param", "N=16", "--format", "svg", "--out", "{out}"),
         needs=("wgmma.m64nNk16.D.f16  (N = 16)", "64 x 16, 128 threads x 8 elements; cell = T<thread> / element",
                "lane % 8:")),
    Kind("sparse", "a sparse A (mma.sp m16n8k16): the compressed operand",
         ("table", "mma.sp.m16n8k16.A.f16_bf16", "--format", "svg", "--out", "{out}"),
         needs=("mma.sp.m16n8k16.A.f16_bf16", "lane % 8:")),
    Kind("block", "a block tile coloured by warp: Triton's Ampere matmul accumulator, 8 warps over 128 x 256, "
         "condensed", ("table", C, "--triton", "tests/data/ttgir/ampere_matmul_f16.ttgir", "--tensor", "#mma",
                       "--format", "svg", "--out", "{out}"),
         needs=("warp:", "128 x 256, 256 threads x 128 elements; cell = T<thread> / element; colour = warp "
                "(thread / 32)"), condensed=True),
    Kind("shared", "a shared-memory tile: offsets, banks and the 128B swizzle atom",
         ("table", "wgmma.shared.atom.K.128B", "--param", "T=4", "--format", "svg", "--out", "{out}"),
         needs=("wgmma.shared.atom.K.128B  (T = 4)", "thick outline: a swizzle atom")),
    Kind("banks", "a bank-conflict access: ld.shared.v4 over a 64 x 64 tile, the conflicting pair in red, "
         "condensed around it",
         ("banks", "--formula", "examples/shared/swizzle128.txt", "--tile", "64x64", "--type", "f16",
          "--access", "ld.shared.v4", "--svg", "{out}"),
         needs=("ld.shared.v4: red: lanes 1 and 4 at origin (0, 0) hit bank 4 in one wavefront group (degree 2); "
                "grey dashed band: rows or columns not shown",), marks=(CONFLICT,), condensed=True),
    Kind("tmem", "a Tensor Memory data path: tcgen05 layout D at N = 8, coloured by TMEM lane quarter",
         ("table", "tcgen05.datapath.D", "--param", "N=8", "--format", "svg", "--out", "{out}"),
         needs=("tcgen05.datapath.D  (N = 8)", "lanes 0-31", "lanes 96-127")),
    Kind("mismatch", "a writer/reader mismatch: a TMA box of 128B swizzling read through a 64B-swizzling descriptor",
         ("consistent", "--writer", "tma:64x64:128B", "--reader", "descriptor:0x8000004000010000", "--type", "f16",
          "--major", "K", "--svg", "{out}"),
         needs=("consistent: tma:64x64:128B -> descriptor:0x8000004000010000: mismatch", "read where written",
                "read from another place", "counterexample"), marks=(HIGHLIGHT,), condensed=True),
    Kind("kernel", "a kernel counterexample: mma_inline.cu with its shared tile swizzled where ldmatrix reads it but "
         "not where it is written, every output element coloured by its verdict, the first wrong one outlined with "
         "its chain beside it, condensed",
         ("kernel", "examples/kernels/mma_inline_read_swizzled.toml", "--svg", "{out}"),
         needs=("kernel mma_gemm (mma_inline_read_swizzled.ptx): refuted", "exactly its sum (1024)",
                "wrong: what it holds (1024)", "never written (0)", "out of bounds (0 accesses)",
                "counterexample", "C[1, 0]: wrong (the first of 1024)", "A[1,8]", "\u00d7B[0,0]",
                "mma.m16n8k16 at line 416 [mma_inline.cu:42]", "(warp 0, lane 4, register a0 = %r221",
                "ldmatrix.x4 at line 406 [mma_inline.cu:35]", "ld.global at line 209 [mma_inline.cu:29]"),
         marks=(HIGHLIGHT,), condensed=True),
    Kind("report", "the HTML report (of m16n8k256: its findings, the condensed picture inlined)",
         ("report", "specs/mma.m16n8k256.toml", "--out", "{out}", "--jobs", "1"),
         needs=("mma.m16n8k256.A.b1", "cell (8, 128): 2 owners: T0:a96, T3:a32"), marks=(HIGHLIGHT,), report=True),
)


def kind(name: str) -> Kind:
    return next(k for k in KINDS if k.name == name)


# ----------------------------------------------------------------------------- in the browser

MIN_FONT = 10      # px: what every picture states (its root's font-size); no label is drawn smaller
SCREEN_W = 1400    # the window a condensed picture and its marks fit in
SHOT = (1240, 820)  # the largest screenshot kept for the docs (the top left of the picture: what a reader sees)

MEASURE = """(() => {
  const root = document.documentElement;
  const svgs = root.tagName === 'svg' ? [root] : [...document.querySelectorAll('svg')];
  const pics = svgs.map(s => {
    const r = s.getBoundingClientRect();
    const stated = parseFloat(s.getAttribute('font-size'));
    const small = [], outside = [], texts = [];
    for (const t of s.querySelectorAll('text')) {
      const m = t.getScreenCTM();
      const px = parseFloat(getComputedStyle(t).fontSize) * Math.hypot(m.a, m.b);
      if (!(px >= stated - 0.01)) small.push([t.textContent.slice(0, 60), px]);
      const b = t.getBoundingClientRect();
      if (b.width > 0 && (b.left < r.left - 1 || b.right > r.right + 1 || b.top < r.top - 1 || b.bottom > r.bottom + 1))
        outside.push([t.textContent.slice(0, 60), Math.round(b.left - r.left), Math.round(b.right - r.right)]);
      texts.push(t.textContent);
    }
    return {left: r.left + scrollX, top: r.top + scrollY, width: r.width, height: r.height,
            attr: [+s.getAttribute('width'), +s.getAttribute('height')], stated, small, outside, texts};
  });
  return {tag: root.tagName, parse_error: !!document.querySelector('parsererror'), pics,
          scroll_width: root.scrollWidth, client_width: root.clientWidth};
})()"""

MARKS = """((sel) => [...document.querySelectorAll(sel)].map(e => {
  const r = e.getBoundingClientRect(), s = e.ownerSVGElement.getBoundingClientRect();
  return [r.left - s.left, r.top - s.top, r.width, r.height, s.width, s.height, r.left + scrollX];
}))"""


def check(k: Kind, m: dict, marks: dict[str, list], errors: list[str]) -> list[str]:
    """What is wrong with ``k`` as the browser rendered it (``m``: ``MEASURE``; ``marks``: ``MARKS`` of each of its
    selectors; ``errors``: the page's console errors), one line each; [] when nothing is."""
    bad = [f"console: {e}" for e in errors]
    if m["parse_error"] or (not k.report and m["tag"] != "svg"):
        return bad + [f"the document does not parse as {'HTML' if k.report else 'SVG'} ({m['tag']})"]
    if not m["pics"]:
        return bad + ["no picture on the page"]
    for p in m["pics"]:
        if [p["width"], p["height"]] != p["attr"]:
            bad.append(f"rendered {p['width']} x {p['height']} px where the SVG states {p['attr'][0]} x {p['attr'][1]}")
        if not p["stated"] >= MIN_FONT:
            bad.append(f"the picture states no font of at least {MIN_FONT} px (font-size {p['stated']})")
        bad += [f"label {t!r} is {px:.1f} px, smaller than the stated {p['stated']}" for t, px in p["small"]]
        bad += [f"label {t!r} runs out of the picture ({dl:+d} px left, {dr:+d} px right)" for t, dl, dr in p["outside"]]
    texts = [t for p in m["pics"] for t in p["texts"]]
    bad += [f"no label {need!r}" for need in k.needs if not any(need in t for t in texts)]
    for sel, rects in marks.items():
        if not rects:
            bad.append(f"no mark {sel}")
        for x, y, w, h, pw, ph, page_x in rects:
            if w <= 0 or h <= 0 or x < -4 or y < -4 or x + w > pw + 4 or y + h > ph + 4:
                bad.append(f"mark {sel} at ({x:.0f}, {y:.0f}) is not inside its picture ({pw:.0f} x {ph:.0f})")
            elif page_x + w > SCREEN_W:
                bad.append(f"mark {sel} is {page_x + w - SCREEN_W:.0f} px off a {SCREEN_W} px screen")
    shown = any(t.startswith("condensed: ") or "condensed: " in t for t in texts)
    if k.condensed and not shown:
        bad.append("a large layout is not condensed (no 'condensed: ...' note)")
    if k.condensed and not k.report and m["pics"][0]["width"] > SCREEN_W:
        bad.append(f"condensed, but {m['pics'][0]['width']} px wide (more than {SCREEN_W})")
    if not k.condensed and not k.report and shown:
        bad.append("condensed, though it fits")
    if k.report and m["scroll_width"] > m["client_width"]:
        bad.append(f"the page scrolls sideways ({m['scroll_width']} > {m['client_width']} px)")
    return bad


def render(browser, k: Kind, tmp: Path) -> tuple[object, dict, list[str]]:
    """``k`` drawn into ``tmp`` and opened in ``browser`` (``tests/browser.py``) at 100 % in a ``SCREEN_W`` x 900
    window: (the page, its measure, what is wrong with it)."""
    page = browser.open(k.make(tmp), SCREEN_W, 900)
    m = page.evaluate(MEASURE)
    marks = {sel: page.evaluate(f"{MARKS}({sel!r})") for sel in k.marks}
    return page, m, check(k, m, marks, page.errors)


def screenshot(page, m: dict, k: Kind, png: Path) -> Path:
    """The top left of the picture (the report: the first screen), at most ``SHOT``, as ``png``."""
    if k.report:
        return page.screenshot(png, (0, 0, SCREEN_W, 900))
    p = m["pics"][0]
    return page.screenshot(png, (int(p["left"]), int(p["top"]), min(int(p["width"]), SHOT[0]),
                                 min(int(p["height"]), SHOT[1])))
