"""Pictures of map layouts (``table ID --format svg``, ``pictures``): shared-memory tiles drawn as CuTe draws
swizzled layouts (the offset in every cell, bank colours, swizzle atoms outlined), Tensor Memory cells coloured
by lane quarter, storage offsets; families at one member named in the title; deterministic bytes."""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from verify import api
from verify.cli.main import main
from verify.layout.named import evaluate_all
from verify.outputs import svg_maps
from verify.outputs.svg import PALETTE
from verify.outputs.svg_shared import bank_colour

from conftest import SPECS

NS = "{http://www.w3.org/2000/svg}"


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    rc = main(argv)
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


@pytest.fixture(scope="module")
def specs():
    return api.load([SPECS])


def _cells(svg: str) -> tuple[list[tuple[int, int, str]], list[tuple[int, int, str]]]:
    """(x, y, fill) of every filled cell rectangle and (x, y, text) of every text, from the document."""
    root = ET.fromstring(svg)
    rects = [(int(e.get("x")), int(e.get("y")), e.get("fill")) for e in root.iter(NS + "rect")
             if e.get("fill") not in (None, "none", "#ffffff")]
    texts = [(int(e.get("x")), int(e.get("y")), e.text or "") for e in root.iter(NS + "text")]
    return rects, texts


def test_a_shared_tile_shows_offsets_banks_and_atoms(specs, capsys) -> None:
    rc, out, err = run(["table", "wgmma.shared.MN.64B", "--format", "svg", "--param", "T=8", "--param", "Rm=1",
                        "--param", "Rk=2"], capsys)
    assert rc == 0 and err == ""
    lay = api.layout(specs, "wgmma.shared.MN.64B").instance(T=8, Rm=1, Rk=2)
    v = evaluate_all(lay.map)
    offs = np.asarray(v.out["offset"])
    rows, cols = offs.shape
    assert (rows, cols) == (32, 16)
    rects, texts = _cells(out)
    assert texts[0][2] == "wgmma.shared.MN.64B  (T = 8, Rm = 1, Rk = 2)" and "16-bit elements" in texts[1][2]
    top = 54  # the grid starts under the heading and the line that says what it shows
    # every cell: its offset, and the colour of the bank of its byte address (16-bit elements, base 0)
    cell_rects = [r for r in rects if r[2] != "#f2f2f2"]
    assert len(cell_rects) == rows * cols
    labels = [t for t in texts if t[2].isdigit()]
    by_pos = {(x, y): f for x, y, f in cell_rects}
    for r in range(rows):
        for c in range(cols):
            x, y = 40 + c * 34, top + r * 18
            assert by_pos[(x, y)] == bank_colour((int(offs[r, c]) * 2 // 4) % 32)
            assert (x + 17, y + 13, str(int(offs[r, c]))) in labels
    # the 64B atom (8 rows of K by 64 bytes = 32 halves of M) outlined: a border between rows 31/32 of M would
    # be outside; between K columns 7 and 8 (the next atom along K) there is one in every row
    root = ET.fromstring(out)
    lines = {(int(e.get("x1")), int(e.get("y1")), int(e.get("x2")), int(e.get("y2"))) for e in root.iter(NS + "line")}
    for r in range(rows):
        y = top + r * 18
        assert (40 + 8 * 34, y, 40 + 8 * 34, y + 18) in lines        # columns 7 | 8: two atoms
        assert (40 + 4 * 34, y, 40 + 4 * 34, y + 18) not in lines    # columns 3 | 4: one atom
    assert "thick outline: a swizzle atom" in out and "red:" not in out


def test_a_collision_of_the_k_major_erratum_is_drawn_red(specs, capsys) -> None:
    rc, out, _ = run(["table", "wgmma.shared.K.32B", "--format", "svg", "--param", "T=4", "--param", "Rm=1",
                      "--param", "Rk=2"], capsys)
    assert rc == 0
    lay = api.layout(specs, "wgmma.shared.K.32B").instance(T=4, Rm=1, Rk=2)
    offs = np.asarray(evaluate_all(lay.map).out["offset"]).reshape(-1)
    u, cnt = np.unique(offs, return_counts=True)
    shared = int(np.isin(offs, u[cnt > 1]).sum())
    assert shared > 0
    assert out.count('stroke="#d00000"') == shared
    assert "red: a cell whose offset another cell has too" in out
    # the corrected family at its member: no red
    rc, out, _ = run(["table", "wgmma.shared.K.32B@corrected", "--format", "svg", "--param", "T=4", "--param", "Rm=1",
                      "--param", "Rk=1"], capsys)
    assert rc == 0 and 'stroke="#d00000"' not in out


def test_tensor_memory_cells_are_coloured_by_lane_quarter(specs, capsys) -> None:
    rc, out, _ = run(["table", "tcgen05.datapath.D", "--format", "svg", "--param", "N=8"], capsys)
    assert rc == 0
    lay = api.layout(specs, "tcgen05.datapath.D").instance(N=8)
    v = evaluate_all(lay.map)
    rects, texts = _cells(out)
    cells = [r for r in rects if r[2] in PALETTE]
    assert len(cells) == 128 * 8 + 4  # every cell and the 4 legend swatches
    rows_y = sorted({y for _, y, _ in cells})[:128]
    for r, y in enumerate(rows_y):
        fills = {f for _, yy, f in cells if yy == y}
        assert fills == {PALETTE[int(v.out["tmem_lane"][r, 0]) // 32]}
    assert any(t == "40,3" for _, _, t in texts)  # row 40, col 3 -> (lane 40, column 3)
    assert "lanes 96-127" in out
    # a CTA pair: the second CTA's quarters in the lighter shades
    rc, out, _ = run(["table", "tcgen05.datapath.A", "--format", "svg", "--param", "N=16"], capsys)
    assert rc == 0 and all(PALETTE[k] in out for k in range(8)) and "CTA 1, lanes 0-31" in out


def test_storage_and_multi_input_maps_draw_offsets_in_panels(capsys) -> None:
    rc, out, _ = run(["table", "storage.sf.cutlass.128x4", "--format", "svg", "--param", "M=64", "--param", "KB=2",
                      "--param", "L=2"], capsys)
    assert rc == 0
    assert "l = 0" in out and "l = 1" in out and "rows: m, columns: kb" in out
    rc, out, _ = run(["table", "tcgen05.cp.32x128b.warpx4", "--format", "svg"], capsys)
    assert rc == 0 and all(f"copy = {c}" in out for c in range(4)) and "rows: src_row, columns: src_byte" in out


def test_a_large_map_is_condensed_unless_full(capsys, tmp_path: Path) -> None:
    rc, out, _ = run(["table", "tcgen05.packing.A.mxf4", "--format", "svg"], capsys)
    assert rc == 0 and "condensed:" in out and "--full draws every cell" in out
    rc, _, _ = run(["table", "tcgen05.packing.A.mxf4", "--format", "svg", "--full", "--out", str(tmp_path / "f.svg")],
                   capsys)
    full = (tmp_path / "f.svg").read_text()
    assert rc == 0 and "condensed:" not in full and full.count("<rect") > 128 * 256


def test_pictures_draw_every_map_layout_at_its_smallest_member(tmp_path: Path, capsys) -> None:
    paths = [str(SPECS / "wgmma.shared.toml"), str(SPECS / "tcgen05.datapath.toml"), str(SPECS / "mma.m8n8k16.toml")]
    rc, out, err = run(["pictures", *paths, "--out", str(tmp_path / "p")], capsys)
    assert rc == 0, err
    specs = api.load(paths)
    maps, lays = api.map_layouts(specs), api.layouts(specs)
    names = sorted(p.name for p in (tmp_path / "p").iterdir())
    for m in maps:
        assert f"{m.id}.svg" in names
        text = (tmp_path / "p" / f"{m.id}.svg").read_text()
        ET.fromstring(text)  # well-formed
        if m.params:
            first = ", ".join(f"{p.name} = {p.values[0]}" for p in m.params)
            assert f"{m.id}  ({first})" in text
    assert all(f"{x.id}.svg" in names for x in lays)
    assert out.startswith(f"{tmp_path / 'p'}: {len(names)} svg for {len(maps) + len(lays)} layouts")
    first = {n: (tmp_path / "p" / n).read_bytes() for n in names}
    rc, _, _ = run(["pictures", *paths, "--out", str(tmp_path / "p")], capsys)
    assert rc == 0 and {n: (tmp_path / "p" / n).read_bytes() for n in names} == first  # byte for byte


def test_element_width_and_swizzle_are_read_off_the_spec(specs) -> None:
    lay = api.layout(specs, "wgmma.shared.example.K.32B.tf32")
    assert svg_maps.element_bits_of(lay, {}) == 32
    assert svg_maps.swizzle_of(lay).text() == "Swizzle<1,4,3>"
    fam = api.layout(specs, "tcgen05.shared.atom.MN.128B_base32B")
    assert svg_maps.element_bits_of(fam, {"T": 32}) == 4 and svg_maps.swizzle_of(fam).text() == "Swizzle<2,5,2>"
    assert svg_maps.shared_view(api.layout(specs, "tcgen05.cp.source.32x128b"), {}) is None  # offset -> (row, byte)
    assert re.search(r"\(T = 4\)", svg_maps.map_svg(fam))
