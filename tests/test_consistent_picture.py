"""``consistent --svg FILE``: writer against reader drawn element by element (``verify/outputs/svg_consistent.py``):
where each element is written and read, the mismatch in red, the witness outlined, large grids condensed."""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from verify import api
from verify.checks.consistency_sides import Given
from verify.outputs.svg_consistent import FILLS, consistent_svg

from conftest import ROOT, cli

NS = "{http://www.w3.org/2000/svg}"


def _cells(svg: str) -> list[tuple[str, str, str]]:
    """(fill, written, read) of every cell: a rect followed by its two labels."""
    return re.findall(r'<rect x="\d+" y="\d+" width="\d+" height="28" fill="([^"]+)" stroke="#ffffff"/>\n'
                      r'<text [^>]*>([^<]*)</text>\n<text [^>]*>([^<]*)</text>', svg)


def test_a_storage_mismatch_is_drawn_at_the_witness_member(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "m.svg"
    rc, text, _ = cli(capsys, "consistent", "--writer", "storage.sf.flat_batch_padding", "--reader",
                      "storage.sf.cutlass.128x4.quantizer", "--svg", str(out))
    assert rc == 1 and text.strip().endswith("mismatch")
    svg = out.read_text(encoding="utf-8")
    root = ET.fromstring(svg)
    texts = [t.text or "" for t in root.iter(NS + "text")]
    assert texts[0] == "consistent: storage.sf.flat_batch_padding -> storage.sf.cutlass.128x4.quantizer: mismatch"
    assert "at M = 64, KB = 2, L = 2" in texts[1]  # the witness's member
    assert texts[2].startswith("same_place: M = 64, KB = 2, L = 2: element (l 1, m 0, kb 0) is written at (offset 8)")
    cells = _cells(svg)
    # the first panel is the witness's (l = 1): its first cell written at 8, read from 512 (outside the 512-byte buffer)
    assert cells[0] == (FILLS["outside"], "8", "512")
    assert "l = 1" in texts and texts.index("l = 1") < texts.index("l = 0")
    outlined = [r for r in root.iter(NS + "rect") if r.get("stroke-dasharray") == "5,3" and r.get("width") != "14"]
    assert len(outlined) == 1 and (int(outlined[0].get("x")) + 3, int(outlined[0].get("y")) + 3) == \
        next((int(r.get("x")), int(r.get("y"))) for r in root.iter(NS + "rect") if r.get("height") == "28")
    assert ("read where written", "read outside the buffer", "counterexample") == tuple(
        t for t in texts if t in ("read where written", "read outside the buffer", "counterexample"))
    assert any(t.startswith("condensed: ") for t in texts) and int(root.get("height")) < 1500
    rc, _, _ = cli(capsys, "consistent", "--writer", "storage.sf.flat_batch_padding", "--reader",
                   "storage.sf.cutlass.128x4.quantizer", "--svg", str(tmp_path / "again.svg"))
    assert (tmp_path / "again.svg").read_bytes() == out.read_bytes()  # deterministic


def test_a_tma_box_read_through_another_swizzle_marks_every_moved_element() -> None:
    """Every red cell is an element the writer puts at one place and the reader takes from another (checked here
    against the two maps point by point, by the scalar reference)."""
    d = api.consistent(Given("tma", "64x64:128B"), Given("descriptor", "0x8000004000010000"), type="f16", major="K")
    assert d.status == "mismatch"
    svg = consistent_svg(d, full=True)
    cells = _cells(svg)
    assert len(cells) == 64 * 64
    for k, (fill, written, read) in enumerate(cells):
        el = {"row": k // 64, "col": k % 64}
        w, r = d.writer_map.at(el, {}), d.reader_map.at(el, {})
        assert (written, read) == (str(w["offset"]), str(r["offset"]))
        assert fill == (FILLS["same"] if w == r else FILLS["moved"])
    condensed = consistent_svg(d)
    root = ET.fromstring(condensed)
    assert int(root.get("width")) <= 1240 and "condensed: 29 of 64 columns" in condensed
    assert _cells(condensed)[64 * 0 + 0] == (FILLS["same"], "0", "0")


def test_a_consistent_pipeline_is_all_green(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "c.svg"
    rc, text, _ = cli(capsys, "consistent", "--writer", f"index:{ROOT / 'examples/layouts/sf_128x4_index.txt'}",
                      "--writer", "tcgen05.cp.source.32x128b", "--writer", "tcgen05.cp.32x128b.warpx4", "--reader",
                      "tcgen05.sf.A.4x1", "--svg", str(out))
    assert rc == 0 and text.strip().endswith("consistent")
    svg = out.read_text(encoding="utf-8")
    fills = {f for f, _, _ in _cells(svg)}
    assert FILLS["same"] in fills and not fills & {FILLS["moved"], FILLS["outside"], FILLS["padding"]}
    assert "the writer writes every element 4 times (copy)" in svg and "counterexample" not in svg


def test_svg_usage_errors_are_one_line_before_any_work(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = cli(capsys, "consistent", "--writer", "storage.sf.flat_batch_padding", "--reader",
                       "storage.sf.cutlass.128x4.quantizer", "--full")
    assert rc == 2 and out == "" and "--full is for --svg" in err
    rc, out, err = cli(capsys, "consistent", "--writer", "storage.sf.flat_batch_padding", "--reader",
                       "storage.sf.cutlass.128x4.quantizer", "--svg", str(tmp_path / "no" / "such" / "dir" / "x.svg"))
    assert rc == 2 and out == "" and len(err.strip().splitlines()) == 1 and "cannot write" in err
