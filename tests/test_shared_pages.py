"""The shared-memory pages (9.7.15.5.1.2, 9.7.16.10.3, 9.7.16.10.6): their layouts as maps, their errata
computed from their own statements at their lines, nothing else; a fixed page gives none, a page changed
another way gives a new one; the reviewed specs are the pages' maps (both engines)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from verify import api
from verify.catalog import shared_pages
from verify.checks import maps

from conftest import ROOT, cli

WGMMA = "9-7-15-5-1-2-shared-memory-matrix-layout.md"
VALID = "9-7-16-10-3-valid-combinations-of-type-size-major-ness-and-swizzling.md"
SWIZZLE = "9-7-16-10-6-shared-memory-layout-and-swizzling.md"

EXPECTED = [  # (page, line, kind): each computed from the page's own statements
    (WGMMA, 164, "smem-injective"),  # K-major 32B canonical layout: k >= 2 collides
    (WGMMA, 165, "smem-injective"),  # 64B: k >= 3
    (WGMMA, 166, "smem-injective"),  # 128B: k >= 5
    (WGMMA, 208, "smem-injective"),  # the K-major 32B tf32 example's exact layout
    (WGMMA, 319, "base-offset"),     # 32-Byte swizzle: a pattern at 0x20 gets base offset 0
    (WGMMA, 319, "base-offset"),     # 64-Byte swizzle: at 0x40
    (VALID, 12, "smem-table"),       # Table 52 allows K-major 128B/32B atomicity, Table 53 has no such atom
]


def _found(paths: list[Path]) -> list[tuple[str, int, str]]:
    _, findings = shared_pages.read([str(p) for p in paths])
    return [(Path(f.page).name, f.line, f.kind) for f in findings]


def _copy(docs: Path, tmp: Path, *names: str) -> list[Path]:
    out = []
    for n in names:
        shutil.copy(docs / n, tmp / n)
        out.append(tmp / n)
    return out


def test_the_pages_errata_and_nothing_else(docs_dir: Path) -> None:
    assert _found(sorted(docs_dir.iterdir())) == EXPECTED  # the whole directory: no other finding
    _, findings = shared_pages.read([str(docs_dir / WGMMA)])
    k32 = next(f for f in findings if f.line == 164)
    assert (k32.column, dict(k32.witness)["k_values"]) == (19, (2, 3, 4, 5))
    assert "(row 0, col 8) and (row 1, col 0) both at element offset 8" in k32.message
    base = [f for f in findings if f.kind == "base-offset"]
    assert [dict(f.witness)["start"] for f in base] == [0x20, 0x40]


def test_the_maps_of_the_pages(docs_dir: Path) -> None:
    specs, _ = shared_pages.read([str(docs_dir / WGMMA), str(docs_dir / SWIZZLE)])
    ids = [m.id for s in specs for m in s.maps]
    assert len(ids) == 30 and "wgmma.shared.MN.128B" in ids and "tcgen05.shared.atom.MN.128B_base32B" in ids
    m = next(m for s in specs for m in s.maps if m.id == "wgmma.shared.K.32B")
    assert m.provenance.source.line == 164 and m.provenance.spec_path.endswith(WGMMA) and m.expect == {"injective": "refuted"}


def test_the_reviewed_specs_are_the_pages_maps(docs_dir: Path) -> None:
    specs, _ = shared_pages.read([str(docs_dir / WGMMA), str(docs_dir / SWIZZLE)])
    reviewed = {m.id: m for m in api.map_layouts(api.load([ROOT / "specs" / "wgmma.shared.toml",
                                                            ROOT / "specs" / "tcgen05.shared.toml"]))}
    for page_map in (m for s in specs for m in s.maps):
        r = maps.same(reviewed[page_map.id].map, page_map.map, names_=("spec", "page"))
        assert r.status == "proved", (page_map.id, r.message)
        assert r.engines == {"z3": "proved", "enumeration": "proved"}


def _fix(path: Path, *pairs: tuple[str, str]) -> None:
    text = path.read_text(encoding="utf-8")
    for old, new in pairs:
        assert old in text, old
        text = text.replace(old, new)
    path.write_text(text, encoding="utf-8")


def test_a_fixed_page_gives_no_finding(docs_dir: Path, tmp_path: Path) -> None:
    wgmma, valid, swizzle = _copy(docs_dir, tmp_path, WGMMA, VALID, SWIZZLE)
    _fix(wgmma, ("(T,2k)):((2T,SBO),(1,T))", "(T,2)):((2T,SBO),(1,T))"),
         ("(T,2k)):((4T,SBO),(1,T))", "(T,2)):((4T,SBO),(1,T))"),
         ("(T,2k)):((8T,SBO),(1,T))", "(T,2)):((8T,SBO),(1,T))"),
         ("((8,2),(4,4)):((8,64),(1,4))", "((8,2),(4,2)):((8,64),(1,4))"),
         ("the base offset must be a non-zero value, computed", "the base offset is computed"))
    _fix(valid, ("| A | All swizzling modes |", "| A | All except 128B swizzling with 32B atomicity |"))
    assert _found([wgmma, valid, swizzle]) == []


@pytest.mark.parametrize("old,new,where", [
    ("| (LBO) >> 4 = 16 |\n  | Encoding of SBO in descriptor | (SBO) >> 4 = 8 |\n* K-Major, 32B",
     "| (LBO) >> 4 = 17 |\n  | Encoding of SBO in descriptor | (SBO) >> 4 = 8 |\n* K-Major, 32B", (197, "smem-example")),
    ("offset from the first 8 columns to the next 8 columns. * Swizzled layouts",
     "offset from the first 4 columns to the next 4 columns. * Swizzled layouts", (139, "smem-definition")),
    ("| 13–0 | 14 |", "| 13–0 | 13 |", (296, "descriptor-format")),
    ("| 51–49 | 3 |", "| 46–44 | 3 |", (299, "descriptor-format")),
    ("| T | 8 |\n  | m | 2 |\n  | k | 2 |\n  | LBO | 128\\*sizeof(bf16) |\n  | SBO | 256",
     "| T | 4 |\n  | m | 2 |\n  | k | 2 |\n  | LBO | 128\\*sizeof(bf16) |\n  | SBO | 256", (258, "smem-example")),
    ("| 1024-Byte boundary |", "| 2048-Byte boundary |", (313, "base-offset")),
    ("| K | 8x4 |\n| 32B", "| K | 8x2 |\n| 32B", (36, "smem-table")),
])
def test_a_page_changed_another_way_gives_a_finding(docs_dir: Path, tmp_path: Path, old: str, new: str,
                                                    where: tuple[int, str]) -> None:
    (wgmma,) = _copy(docs_dir, tmp_path, WGMMA)
    _fix(wgmma, (old, new))
    assert (WGMMA, *where) in _found([wgmma])


def test_table_53_against_table_38(docs_dir: Path, tmp_path: Path) -> None:
    wgmma, swizzle = _copy(docs_dir, tmp_path, WGMMA, SWIZZLE)
    _fix(swizzle, ("| 64B Swizzling Mode | M/N | 4x8 |", "| 64B Swizzling Mode | M/N | 4x4 |"))
    found = _found([wgmma, swizzle])
    assert (SWIZZLE, 40, "smem-table") in found


@pytest.mark.slow
def test_check_on_the_three_pages(docs_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pages = _copy(docs_dir, tmp_path, WGMMA, VALID, SWIZZLE)
    code, out, _ = cli(capsys, "check", *map(str, pages))
    assert code == 0
    assert "wgmma.shared.K.32B                           in_range:ok injective:FAIL  (known erratum)" in out
    assert out.count(": warning: smem-") == 5 and out.count(": warning: base-offset:") == 2
    assert out.rstrip().endswith("0 layouts, 30 maps, 0 instructions, 365 statements: 4 findings (4 known errata), 0 unexpected")
    code, out, _ = cli(capsys, "check", *map(str, pages), "--format", "json")
    doc = json.loads(out)
    assert len(doc["doc_findings"]) == 7 and len(doc["maps"]) == 30
    code, out, _ = cli(capsys, "check", *map(str, pages), "--format", "sarif")
    sarif = json.loads(out)
    res = [r for r in sarif["runs"][0]["results"] if r["properties"].get("id") == "wgmma.shared.example.K.32B.tf32"]
    assert res and res[0]["locations"][0]["physicalLocation"]["region"]["startLine"] == 208
    doc = [r for r in sarif["runs"][0]["results"] if r["ruleId"].startswith("ptx-layout/doc/")]
    assert [(r["ruleId"], r["locations"][0]["physicalLocation"]["region"]["startLine"]) for r in doc] == [
        ("ptx-layout/doc/smem-injective", 164), ("ptx-layout/doc/smem-injective", 165),
        ("ptx-layout/doc/smem-injective", 166), ("ptx-layout/doc/smem-injective", 208),
        ("ptx-layout/doc/base-offset", 319), ("ptx-layout/doc/base-offset", 319), ("ptx-layout/doc/smem-table", 12)]
    assert all(r["level"] == "warning" for r in doc)


def test_a_page_that_swaps_lbo_and_sbo_states_another_layout(docs_dir: Path, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 35 item 7: the canonical layouts took LBO and SBO by position, so a row that swaps the two names
    gave the same map and `check` exited 0 with warnings.  Each name now takes the value of its role (the
    field's meaning, ``stride_roles``), and the page's map is compared with the reviewed one."""
    (wgmma,) = _copy(docs_dir, tmp_path, WGMMA)
    _fix(wgmma, ("((T,8,m),(8,k)):((1,T,LBO),(8T,SBO))", "((T,8,m),(8,k)):((1,T,SBO),(8T,LBO))"))
    code, out, _ = cli(capsys, "check", str(wgmma))
    assert code == 1
    line = next(x for x in out.splitlines() if "reviewed:FAIL" in x)
    assert line.startswith("wgmma.shared.MN.128B ") and f"{wgmma}:162:1: the page's layout is not the reviewed one: " \
        "T = 4, Rm = 2, Rk = 1: at row 32, col 0: reviewed (offset 256), page (offset 512)" in line
    code, out, _ = cli(capsys, "check", str(wgmma), "--format", "json")
    doc = json.loads(out)
    [f] = [f for f in doc["findings"] if f["check"] == "reviewed"]
    assert f["layout"] == "wgmma.shared.MN.128B" and f["status"] == "refuted"
    # the page as it is: its maps are the reviewed ones, by both engines, and check passes
    specs, _ = shared_pages.read([str(docs_dir / WGMMA)])
    from verify.checks.review import review_findings
    assert [review_findings(s, set(), 10.0) for s in specs] == [[]]


def test_reviewed_specs_that_do_not_load_are_an_error_not_no_expectations(tmp_path):
    """The page reader's expectations come from the reviewed specs: when those fail to load, the reader
    stops with their error (it once answered "no expectations", a silent pass)."""
    from verify.errors import SpecError
    bad = tmp_path / "bad.toml"
    bad.write_text("[instruction\nname = 1\n", encoding="utf-8")
    with pytest.raises(SpecError, match="bad.toml"):
        shared_pages._reviewed([bad])
    assert shared_pages._reviewed(None)  # the bundled specs load and hold reviewed maps
