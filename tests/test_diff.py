"""``ptx-verify diff OLD NEW``: layouts paired by id, maps compared by both engines."""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from verify import api
from verify.checks.diff import diff
from verify.cli import main

from conftest import SPECS

P3 = "9-7-14-5-3-matrix-fragments-for-mma-m8n8k16.md"


@pytest.fixture
def two_releases(tmp_path, docs_dir) -> tuple[Path, Path]:
    """Two copies of the mma and mma.sp pages, one page per section: a change planted in one page is then
    the release's only statement of that section (the parent pages, which repeat every section, are left
    out; a section given twice with different text is refused, see tests/test_pages_pipeline.py)."""
    old, new = tmp_path / "old", tmp_path / "new"
    for d in (old, new):
        d.mkdir()
        for p in docs_dir.glob("9-7-14-[56]-*.md"):
            if len(re.findall(r"^#{1,6} 9\.", p.read_text(encoding="utf-8"), re.M)) == 1:
                shutil.copy(p, d / p.name)
    return old, new


def _plant(page: Path, old: str, new: str, after: str = "") -> None:
    text = page.read_text(encoding="utf-8")
    start = text.index(after) if after else 0
    assert old in text[start:]
    page.write_text(text[:start] + text[start:].replace(old, new, 1), encoding="utf-8")


def test_identical_releases_differ_in_nothing(two_releases, capsys):
    old, new = two_releases
    assert main(["diff", str(old), str(new), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["differs"] is False and not data["changed"] and len(data["unchanged"]) == 107


def test_a_planted_bijection_is_reported_exactly(two_releases, capsys):
    """Still a bijection, but another one: the only change, with its first differing (lane, i)."""
    old, new = two_releases
    _plant(new / P3, "(threadID_in_group * 4) + i", "(threadID_in_group * 4) + (i ^ 1)",
           after="col = (threadID_in_group * 4)")
    assert main(["diff", str(old), str(new), "--format", "json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert [c["layout"] for c in data["changed"]] == ["mma.m8n8k16.A.u8_s8"]
    c = data["changed"][0]
    assert c["what"] == ["map"] and c["engines"]["z3"] == c["engines"]["enumeration"] == "refuted"
    assert (c["counterexample"]["lane"], c["counterexample"]["i"]) == (0, 0)
    assert c["counterexample"]["first"] == {"row": 0, "col": 0} and c["counterexample"]["second"] == {"row": 0, "col": 1}
    assert not data["added"] and not data["removed"] and not data["errata_added"]


def test_swapped_branch_conditions_are_a_change(two_releases, capsys):
    old, new = two_releases
    page = new / "9-7-14-5-8-matrix-fragments-for-mma-m16n8k16-with-floating-point-type.md"
    _plant(page, "0 <= i < 2 || 4 <= i < 6", "2 <= i < 4 || 6 <= i < 8")
    assert main(["diff", str(old), str(new)]) == 1
    out = capsys.readouterr().out
    changed = [ln for ln in out.splitlines() if ln.startswith("changed")]
    assert changed and all("(map)" in ln for ln in changed) and "lane 0 element a0" in changed[0]


def test_count_text_changes_and_new_errata_are_reported(two_releases, capsys):
    old, new = two_releases
    _plant(new / P3, "a single `.b32` register", "two `.b32` registers")
    assert main(["diff", str(old), str(new), "--format", "json"]) == 1
    data = json.loads(capsys.readouterr().out)
    [c] = data["changed"]
    assert c["layout"] == "mma.m8n8k16.A.u8_s8" and "registers" in c["what"]
    assert any("packing" in e or "count" in e for e in data["errata_added"])


def test_added_and_removed_layouts(tmp_path):
    specs = api.load([SPECS / "mma.m8n8k16.toml"])
    fewer = [s.__class__(**{**s.__dict__, "layouts": s.layouts[:2]}) for s in specs]
    r = diff(specs, fewer)
    assert r.removed == ("mma.m8n8k16.C.s32",) and not r.added and r.differs
    r = diff(fewer, specs)
    assert r.added == ("mma.m8n8k16.C.s32",)


def test_bad_input_is_exit_2(tmp_path, capsys):
    assert main(["diff", str(tmp_path / "missing"), str(SPECS)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "error" in err[0]


# ----------------------------------------------------------------------------- layouts with no register facts

def test_map_layouts_are_paired_and_compared_by_both_engines(tmp_path):
    """A `[[layout]]` whose formula changes is `changed` with the first differing point; the same map
    written another way (`8 * T` for `T * 8`) is unchanged."""
    from verify import api
    from verify.checks.diff import diff
    from conftest import ROOT
    text = (ROOT / "specs" / "storage.scale_factors.toml").read_text(encoding="utf-8")
    old = api.loads(text, "old.toml")
    m = next(x for x in old.maps if not x.is_family and "injective" in x.checks)
    line = m.provenance.formula_text.strip().splitlines()[-1]
    name, _, expr = line.partition("=")
    changed = text.replace(line, f"{name}= ({expr.strip()}) ^ 1", 1)
    new = api.loads(changed, "new.toml")
    r = diff([old], [new])
    assert [c.layout for c in r.changed] == [m.id] and r.changed[0].what[0] == "map"
    assert r.changed[0].engines == {"z3": "refuted", "enumeration": "refuted"}
    assert "at " in r.changed[0].message and r.differs
    same = diff([old], [api.loads(text, "again.toml")])
    assert not same.differs and m.id in same.unchanged
