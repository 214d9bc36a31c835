"""A new PTX release, in whatever shape it comes (issue 39): PTX ISA 9.1's pages (``../shared/ptx-isa-9.1``, another
export's markdown) read as 9.0's are, sections found by anchor and title, ``diff`` between releases, the facts 9.1
adds (the tcgen05 descriptor page and its errata, ``.scale_vec::4X`` with ``.ue8m0``), ``check --release``.

The pages are read from ``../shared`` (``$PTX_DOCS_DIR`` for 9.0, ``$PTX_DOCS_DIR_9_1`` for 9.1); tests that need them
skip, saying so, where they are absent.  No page text is copied here: variants of the pages are made in a temporary
directory from the pages themselves.
"""
from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from verify import api
from verify.catalog.docpage import read_page
from verify.catalog.page_model import Caption, Code, Image, Table, Text
from verify.catalog.known import applies, pair_sections, squeeze
from verify.results.diff import Named
from verify.checks.diff import _unnumbered, diff
from verify.layout.records import Source
from verify.outputs import json as out_json
from verify.outputs.reports_text import diff_lines

from conftest import ROOT, SPECS, cli

pytestmark = pytest.mark.xdist_group("releases")  # the 9.1 pages are checked once per run, in one worker

BASELINES = ROOT / "ci" / "releases"
MMA_91 = "9.7.14.5-matrix-multiply-accumulate-operation-usingmmainstruction.md"
DESCRIPTOR_91 = "9.7.16.4-matrix-descriptors.md"
# the exact summary of `diff ../shared/ptx-isa-9.0 ../shared/ptx-isa-9.1`, worked out in docs/releases.md
SUMMARY = ("137 unchanged, 0 changed, 6 added, 0 removed, 0 undecided; errata in the text: 50 persisting, 4 new, "
           "0 fixed; sections: 138 in both (0 renumbered, 3 retitled), 44 added, 2 removed  -> DIFFERENT")


def _rel(path: Path) -> str:
    return os.path.relpath(path, ROOT)


@pytest.fixture(scope="module")
def check91(docs91_dir: Path) -> dict:
    """``check ../shared/ptx-isa-9.1 --format json``, as a user in the checkout gives it."""
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        specs, findings = api.load_with_doc_findings([_rel(docs91_dir)])
        report = api.check_all(specs, doc_findings=findings)
    finally:
        os.chdir(cwd)
    assert report.as_expected
    return json.loads(out_json.to_json(out_json.check_json(report)))


def _baseline(name: str) -> dict:
    return json.loads((BASELINES / name).read_text(encoding="utf-8"))


def _statuses(doc: dict, key: str) -> dict[str, tuple]:
    return {x["id"]: (x.get("digest"), tuple((c, v["status"], v["expected"]) for c, v in x["checks"].items()))
            for x in doc.get(key, [])}


def _errata(doc: dict) -> list[tuple]:
    """The errata of the text by kind, section (9.0 and 9.1 number these alike), operand, types and message with the
    page's numbering masked."""
    return sorted((f["kind"], f["section"], f["operand"], tuple(f["types"]), _unnumbered(f["message"]))
                  for f in doc["doc_findings"])


# ----------------------------------------------------------------------------- check on the 9.1 pages

def test_9_1_states_every_layout_of_9_0_with_the_same_maps_and_verdicts(check91: dict) -> None:
    """Every layout, map and instruction ``check`` finds on the 9.0 pages (the committed 9.0 baseline, held current
    below) it finds on 9.1's, with the same digest (the same map) and every check the same status; 9.1 adds the two
    maps of its tcgen05 descriptor page."""
    old = _baseline("ptx-isa-9.0.json")
    for key in ("layouts", "instructions"):
        assert _statuses(check91, key) == _statuses(old, key), key
    maps, old_maps = _statuses(check91, "maps"), _statuses(old, "maps")
    assert {k: v for k, v in maps.items() if k in old_maps} == old_maps
    assert sorted(set(maps) - set(old_maps)) == ["tcgen05.descriptor.fields", "tcgen05.descriptor.swizzle",
                                                 "tcgen05.zero_column.coverage.m128", "tcgen05.zero_column.coverage.m32",
                                                 "tcgen05.zero_column.coverage.m64", "tcgen05.zero_column.fields"]
    assert len(check91["layouts"]) == 107 and len(maps) == 36
    assert all(v["status"] == "proved" for m in check91["maps"] if m["id"].startswith("tcgen05.descriptor.")
               for v in m["checks"].values())  # in range, injective, and the descriptor command's model


def test_9_1_reports_the_errata_of_9_0_where_the_text_is_unchanged(check91: dict) -> None:
    """The 50 errata of 9.0's text are in 9.1's (line and table numbers masked: 9.1's Table 54 is 9.0's 52), and
    9.1 adds exactly the three of its new descriptor page."""
    old, new = _errata(_baseline("ptx-isa-9.0.json")), _errata(check91)
    assert len(set(old)) == 50
    extra = list(new)
    for e in old:  # as many times on each side
        extra.remove(e)
    assert [(e[0], e[1]) for e in extra] == [("base-offset", "9.7.16.4.1")] * 2 + [("descriptor-format", "9.7.16.4.1"),
                                                                                    ("zero-column-spans", "9.7.16.4.3")]
    assert "0xb00000000, a 36-bit value" in extra[2][4]
    k_major = [e for e in new if e[0] == "smem-injective" and "exact layout Swizzle<1,4,3>" in e[4]]
    assert k_major  # the non-injective K-major 32B tf32 example is still in 9.1's text


def test_the_release_baselines_are_current(check91: dict, docs_check: tuple) -> None:
    """ci/releases holds what `check` gives for each release's pages (what CI's `check PAGES --baseline` reads)."""
    from verify.outputs.baseline import compare
    for doc, name in ((docs_check[1], "ptx-isa-9.0.json"), (check91, "ptx-isa-9.1.json")):
        d = compare(_baseline(name), doc)
        assert d.count == 0, (name, d.to_json(name))


def test_the_issue_s_page_is_checked_alone(docs91_dir: Path, capsys) -> None:
    """The page the issue tried: every mma fragment of the catalog, none 'nothing to check'."""
    rc, out, err = cli(capsys, "check", str(docs91_dir / MMA_91))
    assert rc == 0, err
    # (with the page's ldmatrix, stmatrix and movmatrix statements, their known errata among the findings)
    assert out.splitlines()[-1] == "71 layouts, 32 instructions, 312 statements: 14 findings (14 known errata), 0 unexpected"


# ----------------------------------------------------------------------------- diff between the releases

def test_diff_of_9_0_and_9_1_is_exact(docs_dir: Path, docs91_dir: Path) -> None:
    """The summary docs/releases.md works out from the two releases, and the JSON committed for CI, byte for byte."""
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        sides = []
        for d in (docs_dir, docs91_dir):
            specs, found = api.load_with_doc_findings([_rel(d)])
            release, sections = api.release([_rel(d)])
            sides.append((specs, found, release, sections))
    finally:
        os.chdir(cwd)
    (a, fa, ra, sa), (b, fb, rb, sb) = sides
    r = diff(a, b, fa, fb, 10.0, sa, sb, (ra, rb))
    lines = diff_lines(r)
    assert lines[0] == "PTX ISA 9.0 -> 9.1" and lines[-1] == SUMMARY
    assert r.added == ("tcgen05.descriptor.fields", "tcgen05.descriptor.swizzle", "tcgen05.zero_column.coverage.m128",
                       "tcgen05.zero_column.coverage.m32", "tcgen05.zero_column.coverage.m64",
                       "tcgen05.zero_column.fields") and not r.changed
    assert [(a.number, b.title) for a, b in r.sections.retitled] == [
        ("1.3", "PTX ISA Version 9.1"), ("9.7.14.3", "Block Scaling formma.sync"),
        ("9.7.16.10.7", "Block Scaling for tcgen05.mma.sync")]
    assert out_json.to_json(r.to_json()) == (BASELINES / "diff-9.0-9.1.json").read_text(encoding="utf-8")


def test_diff_of_the_specs_and_the_9_1_pages_is_empty(docs91_dir: Path, capsys) -> None:
    """The reviewed specs (with 9.1's facts) and 9.1's pages state the same: every page layout unchanged, the
    descriptor's maps included; what pages give only as figures is outside."""
    rc, out, err = cli(capsys, "diff", str(SPECS), str(docs91_dir), "--format", "json")
    data = json.loads(out)
    assert rc == 0 and not data["differs"], err
    assert len(data["unchanged"]) == 143 and {"tcgen05.descriptor.fields", "tcgen05.descriptor.swizzle"} <= set(
        data["unchanged"]) and len(data["outside"]) == 158  # Table 52's and Table 55's maps (no page reader of Table 55 yet), the 5 tcgen05.cp shapes of specs/tcgen05.cp.toml, the 2 shared-memory packings of 4- and 6-bit elements (figures only) and 10 storage and map layouts no page states (CUTLASS, DeepGEMM, Triton)


def _renumbered(src: Path, dst: Path, old: str, new: str) -> None:
    """The pages of ``src`` with section numbers ``old.*`` written ``new.*`` (headings, YAML headers, file names):
    what PTX 9.3 did to tcgen05 (9.7.16 -> 9.7.17)."""
    dst.mkdir()
    rx = re.compile(r"(?<![\d.])" + re.escape(old) + r"(?=\.)")
    for p in src.iterdir():
        if p.suffix == ".md":
            (dst / rx.sub(new, p.name)).write_text(rx.sub(new, p.read_text(encoding="utf-8")), encoding="utf-8")


def test_renumbered_sections_are_listed_and_nothing_else_moves(tmp_path: Path, docs91_dir: Path, capsys) -> None:
    """Sections are paired by what they say: tcgen05 renumbered 9.7.16 -> 9.7.17 is the same layouts, maps and
    errata, every tcgen05 section listed as renumbered, exit 0."""
    _renumbered(docs91_dir, tmp_path / "new", "9.7.16", "9.7.17")
    rc, out, err = cli(capsys, "diff", str(docs91_dir), str(tmp_path / "new"), "--format", "json")
    data = json.loads(out)
    assert rc == 0 and not data["differs"], err
    moved = data["sections"]["renumbered"]
    assert moved and all(m["old"]["number"].startswith("9.7.16.") or m["old"]["number"] == "9.7.16" for m in moved)
    assert {m["new"]["number"] for m in moved} == {m["old"]["number"].replace("9.7.16", "9.7.17", 1) for m in moved}
    assert not data["sections"]["added"] and not data["sections"]["removed"]
    assert len(data["unchanged"]) == 143 and len(data["errata_persisting"]) == 54 and not data["errata_added"]


# ----------------------------------------------------------------------------- a page in whatever shape it comes

def _html(page_path: Path) -> str:
    """A page as saved HTML: headings with ids, tables, <pre> formulas, paragraphs (made from the page itself)."""
    page = read_page(page_path)
    esc = lambda t: t.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")  # noqa: E731
    out = ["<html><body>"]
    for s in page.sections:
        out.append(f'<h5 id="{s.heading.anchor}">{s.number}. {esc(s.heading.title)}</h5>')
        for b in s.blocks:
            if isinstance(b, Text):
                out.append(f"<{'li' if b.bullet else 'p'}>{esc(b.text)}</{'li' if b.bullet else 'p'}>")
            elif isinstance(b, Table):
                out.append("<table><thead><tr>" + "".join(f"<th>{esc(h)}</th>" for h in b.header) + "</tr></thead><tbody>")
                out += ["<tr>" + "".join(f"<td>{esc(c.text)}</td>" for c in r.cells) + "</tr>" for r in b.rows]
                out.append("</tbody></table>")
            elif isinstance(b, Code):
                out.append("<pre>" + esc(b.text) + "</pre>")
            elif isinstance(b, Image):
                out.append(f'<img src="{b.src}"/>')
            elif isinstance(b, Caption):
                out.append(f"<p>{esc(b.text)}</p>")
    return "\n".join(out + ["</body></html>"])


def _per_section(page_path: Path, out: Path) -> None:
    """A many-section page as 9.0's export has it: one file per section, no YAML header, '|' on both sides of
    tables and fenced code (made from the page's parsed blocks)."""
    page = read_page(page_path)
    for s in page.sections:
        lines = [f"##### {s.number}. {s.heading.title}", ""]
        for b in s.blocks:
            if isinstance(b, Text):
                lines += [("* " if b.bullet else "") + b.text, ""]
            elif isinstance(b, Table):
                lines += ["| " + " | ".join(b.header) + " |", "|" + " --- |" * len(b.header)]
                lines += ["| " + " | ".join(c.text for c in r.cells) + " |" for r in b.rows] + [""]
            elif isinstance(b, Code):
                lines += ["```", b.text, "```", ""]
            elif isinstance(b, Image):
                lines += [f"![{b.src}]({b.src})", ""]
            elif isinstance(b, Caption):
                lines += [b.text, ""]
        (out / f"{s.number.replace('.', '-')}.md").write_text("\n".join(lines), encoding="utf-8")


@pytest.mark.parametrize("shape", ["per-section", "html", "no-yaml-header"])
def test_a_page_in_another_shape_states_the_same(tmp_path: Path, docs91_dir: Path, capsys, shape: str) -> None:
    """The 9.1 mma page (one file of 17 sections, YAML header, the 9.1 export's markdown) made one file per
    section in 9.0's markdown, saved HTML, or stripped of its header: `diff` finds every layout unchanged.
    (Flattened HTML text is the seeds' shape: tests/test_ingest.py reads those.)"""
    src = docs91_dir / MMA_91
    other = tmp_path / "other"
    other.mkdir()
    if shape == "per-section":
        _per_section(src, other)
    elif shape == "html":
        (other / "page.html").write_text(_html(src), encoding="utf-8")
    else:
        text = src.read_text(encoding="utf-8")
        (other / "page.md").write_text(text[text.index("\n---\n", 4) + 5:], encoding="utf-8")
    rc, out, err = cli(capsys, "diff", str(src), str(other), "--format", "json")
    data = json.loads(out)
    assert not data["changed"] and not data["added"] and not data["removed"], err
    assert len(data["unchanged"]) == 71 and not data["errata_added"] and not data["errata_removed"]


def test_a_section_that_cannot_be_read_says_which_and_why(tmp_path: Path, docs91_dir: Path, capsys) -> None:
    """The m16n8k8 section with its tables' separator rows lost: an error naming the section and what was not
    found, and the reviewed layouts it no longer gives reported lost (exit 1), never 'no layouts'."""
    text = (docs91_dir / MMA_91).read_text(encoding="utf-8")
    start, end = text.index("9.7.14.5.7."), text.index("9.7.14.5.8.")
    broken = text[:start] + re.sub(r"^(> )?---\|---\|---\s*$", "", text[start:end], flags=re.M) + text[end:]
    page = tmp_path / "mma.md"
    page.write_text(broken, encoding="utf-8")
    rc, out, err = cli(capsys, "check", str(page))
    assert rc == 1
    why = [ln for ln in out.splitlines() if "unread-section" in ln]
    assert len(why) == 1 and "section 9.7.14.5.7 (Matrix Fragments for mma.m16n8k8)" in why[0]
    assert "no fragment table" in why[0]
    lost = [ln.split()[0] for ln in out.splitlines() if "the given pages do not state it" in ln]
    assert len(lost) == 9 and all(x.startswith("mma.m16n8k8.") for x in lost)
    table = tmp_path / "descriptor.md"  # a shared-memory page whose table lost its header: that section, and why
    table.write_text((docs91_dir / DESCRIPTOR_91).read_text(encoding="utf-8").replace("Bit-field |", "Bits |"),
                     encoding="utf-8")
    rc, out, err = cli(capsys, "check", str(table))
    assert rc == 1 and "error: unread-section: section 9.7.16.4.1 (Shared memory descriptor): the table of the " \
        "descriptor's fields" in out and out.splitlines()[-1].endswith("1 unexpected  -> FAIL")
    (tmp_path / "prose.md").write_text("Some prose\nwith no heading at all\n", encoding="utf-8")
    rc, out, err = cli(capsys, "check", str(tmp_path / "prose.md"))
    assert rc == 2 and "no numbered section heading" in err and "prose.md" in err


# ----------------------------------------------------------------------------- sections paired across releases

def test_sections_are_paired_by_anchor_then_title_never_number() -> None:
    old = [Named("9.7.16", "TensorCore 5th Generation Family Instructions"),
           Named("9.7.16.2", "Matrix Shape", "tcgen05-matrix-shape"),
           Named("9.7.16.3", "Canonical Layouts"), Named("9.7.15.2", "Matrix Shape"),
           Named("9.7.14.3", "Block Scaling"), Named("9.7.15.1", "Warpgroup")]
    new = [Named("9.7.17", "TensorCore 5th Generation Family Instructions"),
           Named("9.7.17.2", "Matrix Shape", "tcgen05-matrix-shape"),  # the anchor decides
           Named("9.7.17.3", "Canonical Layouts"),  # a title unique on both sides
           Named("9.7.15.2", "Matrix Shape"),  # a shared title: the same number, nothing says otherwise
           Named("9.7.14.3", "Block Scaling for mma.sync"), Named("9.7.15.9", "Other")]
    pairs = [(a.number, b.number) for a, b in pair_sections(old, new)]
    assert pairs == [("9.7.16", "9.7.17"), ("9.7.16.2", "9.7.17.2"), ("9.7.16.3", "9.7.17.3"),
                     ("9.7.15.2", "9.7.15.2"), ("9.7.14.3", "9.7.14.3")]
    assert squeeze("Matrix multiply-accumulate operation usingmmainstruction") == \
        squeeze("Matrix multiply-accumulate operation using `mma` instruction")


def test_erratum_identity_masks_the_page_s_numbering() -> None:
    a = "Table 52 allows ... but Table 53 gives that mode no K-major atom (its row, line 36, is MN only)"
    b = "Table 54 allows ... but Table 55 gives that mode no K-major atom (its row, line 313, is MN only)"
    assert _unnumbered(a) == _unnumbered(b) and _unnumbered("lines 164-166 of 9.7.15.5.1.2") == "lines # of §"
    assert _unnumbered("4 registers x 4 elements") == "4 registers x 4 elements"  # the counts are the erratum


# ----------------------------------------------------------------------------- what 9.1 adds

def test_the_descriptor_page_s_errata_and_model(tmp_path: Path, docs91_dir: Path, capsys) -> None:
    """The page alone: its fields and codes are the descriptor command's model (both engines), and its errata come
    from its own statements: a fixed page gives none, a page changed another way a new one."""
    page = docs91_dir / DESCRIPTOR_91
    rc, out, err = cli(capsys, "check", str(page), "--format", "json")
    data = json.loads(out)
    assert rc == 0, err
    assert {m["id"]: {c: v["status"] for c, v in m["checks"].items()} for m in data["maps"]} == {
        "tcgen05.descriptor.fields": {"in_range": "proved", "injective": "proved", "model": "proved"},
        "tcgen05.descriptor.swizzle": {"in_range": "proved", "injective": "proved", "model": "proved"},
        "tcgen05.zero_column.fields": {"in_range": "proved", "injective": "proved", "model": "proved"},
        **{f"tcgen05.zero_column.coverage.m{m}": {"in_range": "proved", "injective": "proved", "surjective": "proved",
                                                  "model": "proved"} for m in (128, 64, 32)}}
    kinds = sorted((f["kind"], f["line"]) for f in data["doc_findings"])
    assert kinds == [("base-offset", 37), ("base-offset", 37), ("descriptor-format", 24), ("zero-column-spans", 137)]
    text = page.read_text(encoding="utf-8")
    fixed = tmp_path / "fixed.md"
    fixed.write_text(text.replace("0xb00000000", "0b00000000"), encoding="utf-8")
    rc, out, _ = cli(capsys, "check", str(fixed), "--format", "json")
    assert rc == 0 and [f["kind"] for f in json.loads(out)["doc_findings"]] == ["base-offset", "base-offset",
                                                                                 "zero-column-spans"]
    changed = tmp_path / "changed.md"
    changed.write_text(text.replace("6\\. 32-Byte swizzling", "5\\. 32-Byte swizzling"), encoding="utf-8")
    rc, out, _ = cli(capsys, "check", str(changed), "--format", "json")
    data = json.loads(out)
    swz = next(m for m in data["maps"] if m["id"] == "tcgen05.descriptor.swizzle")["checks"]["model"]
    assert rc == 1 and swz["status"] == "refuted" and swz["engines"] == {"z3": "refuted", "enumeration": "refuted"}
    assert swz["counterexample"]["point"] == {"mode": 4}
    assert any("note calls 3, 5, 7 invalid" in f["message"] for f in data["doc_findings"])


def test_check_release_decides_which_facts_apply(capsys) -> None:
    """--release 9.0 leaves out what 9.1 added (the descriptor's maps, the .ue8m0 4X selectors); 9.1 keeps it. A fact
    of another document (CUTLASS, DeepGEMM, a Triton tutorial: its version is not a PTX release) always applies."""
    for release, summary in (("9.0", "215 layouts, 78 maps"), ("9.1", "217 layouts, 84 maps")):
        rc, out, _ = cli(capsys, "check", str(SPECS), "--release", release)
        assert rc == 0 and out.splitlines()[-1].startswith(summary + ", 87 instructions")
    ptx = lambda v: Source("x", 1, "s", version=v)  # noqa: E731
    assert applies(ptx("9.0"), "9.1") and not applies(ptx("9.1"), "9.0") and applies(ptx(""), "9.0")
    assert applies(ptx("9.1"), "")
    assert applies(Source("x", 1, "s", document="CUTLASS 4.2 / DeepGEMM", version="2025"), "9.0")
    rc, _, err = cli(capsys, "check", str(SPECS), "--release", "nine")
    assert rc == 2 and "is not a PTX ISA release" in err


def test_the_9_1_block_scale_selectors_are_the_4x_maps() -> None:
    """.scale_vec::4X with .ue8m0 (9.1) selects as with .ue4m3 (9.0): the same map at every selector value, by
    both engines; each spec records the release it comes from."""
    from verify.checks.equivalence import same_map
    old = {x.id: x for x in api.layouts(api.load([SPECS / "mma.block_scale.m16n8k64.4x.toml"]))}
    new_specs = api.load([SPECS / "mma.block_scale.m16n8k64.4x.ue8m0.toml"])
    assert new_specs[0].source.version == "9.1"
    for lay in api.layouts(new_specs):
        ref = old[f"mma.block_scale.m16n8k64.{lay.operand}.ue4m3"]
        for (env, a), (_, b) in zip(ref.instances(), lay.instances()):
            r = same_map(a, b, 10.0, names=("ue4m3", "ue8m0"))
            assert r.status == "proved" and r.engines == {"z3": "proved", "enumeration": "proved"}, (lay.id, env)
