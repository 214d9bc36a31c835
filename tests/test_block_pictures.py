"""Pictures of block tiles coloured by warp: `table ID --triton FILE --tensor ... --format svg` (and any other
notation flag) draws the given layout, each cell in its warp's colour with T<thread> in it."""
from __future__ import annotations

import re

from verify.cli.main import main
from verify.outputs.svg import WARP_PALETTE, warp_colour

C = "mma.m16n8k16.float.C.f32"
SMALL = "tests/data/ttgir/handoff_32x16.ttgir"
ACC = "tests/data/tilelang/acc_16x64_4warps.txt"


def cells(svg: str) -> dict[str, str]:
    """label T<thread> -> fill of the cell it is drawn in (cells are a rect followed by their label)."""
    out = {}
    for fill, label in re.findall(r'<rect [^>]*fill="(#[0-9a-f]{6})" stroke="#555555"[^>]*/>\s*<text [^>]*>(T\d+)</text>',
                                  svg):
        out.setdefault(label, fill)
    return out


def test_warp_colours():
    assert warp_colour(0) == warp_colour(31) != warp_colour(32) == WARP_PALETTE[1]


def test_ttgir_block_tile_is_coloured_by_warp(capsys):
    assert main(["table", C, "--triton", SMALL, "--tensor", "#mma", "--format", "svg"]) == 0
    svg = capsys.readouterr().out
    drawn = cells(svg)
    assert len(drawn) == 128  # every thread of the 2 x 2 warps appears
    assert all(fill == warp_colour(int(t[1:])) for t, fill in drawn.items())
    assert ">warp:<" in svg and f"triton {SMALL} #mma" in svg


def test_tilelang_block_tile_is_coloured_by_warp(capsys):
    assert main(["table", C, "--tilelang", ACC, "--format", "svg"]) == 0
    drawn = cells(capsys.readouterr().out)
    assert {fill for fill in drawn.values()} == set(WARP_PALETTE[:4])


def test_spec_pictures_keep_the_lane_palette(capsys):
    assert main(["table", C, "--format", "svg"]) == 0
    svg = capsys.readouterr().out
    assert "lane % 8:" in svg and ">warp:<" not in svg


def test_table_text_of_a_given_and_bad_input(capsys, tmp_path):
    assert main(["table", C, "--triton", SMALL, "--tensor", "#mma"]) == 0
    assert "T127" in capsys.readouterr().out
    assert main(["table", C, "--triton", SMALL, "--tensor", "#nope"]) == 2
    assert capsys.readouterr().err.startswith(f"{SMALL}:1:1: error: ")


def test_the_block_picture_header_names_what_its_cells_show(capsys):
    """Issue 35 item 18: a block tile's cells hold thread numbers (T0..T127), and its header said ``T<lane>``."""
    assert main(["table", C, "--triton", SMALL, "--tensor", "#mma", "--format", "svg"]) == 0
    svg = capsys.readouterr().out
    header = re.findall(r'<text x="8" y="38"[^>]*>([^<]*)</text>', svg)
    assert header == ["32 x 16, 128 threads x 4 elements; cell = T&lt;thread&gt; / element; colour = warp (thread / 32)"]
    assert max(int(t[1:]) for t in cells(svg)) == 127
    assert main(["table", C, "--format", "svg"]) == 0  # one warp's fragment: its cells are lanes
    assert "cell = T&lt;lane&gt; / element<" in capsys.readouterr().out
