"""Bank conflicts over a tile: proofs, degrees and witnesses by both engines, alignment and placement,
other lane addressings, families, and the command."""
from __future__ import annotations

import json

import pytest

from verify import api
from verify.layout.smem_access import default_pattern, parse_access, pattern_from_text

from conftest import ROOT, cli

SW128 = "tile_to_shape(GMMA::Layout_K_SW128_Atom<half_t>{}, Shape<_128,_128>{})"


def _banks(text: str, access: str, type: str | None = "f16", addresses: str | None = None):
    return api.banks(api.shared_layout("cute", text, type=type), access, addresses=addresses)


def test_swizzled_tile_is_conflict_free_for_ldmatrix() -> None:
    for access in ("ldmatrix.x4", "ldmatrix.x4.trans", "stmatrix.x4", "ldmatrix.x2", "ldmatrix.x1"):
        r = _banks(SW128, access)
        assert r.ok, access
        assert all(c.engines == {"z3": "proved", "enumeration": "proved"} for c in r.checks)
        assert r.degree == 1 and r.wavefronts == r.ideal


def test_row_major_tile_conflicts_with_a_witness() -> None:
    r = _banks("(128,128):(128,1)", "ldmatrix.x4")
    c = r.get("conflict_free")
    assert c.status == "refuted" and c.engines == {"z3": "refuted", "enumeration": "refuted"}
    assert c.counterexample.to_json() == {"params": {}, "origin": [0, 0], "lanes": [0, 1], "cells": [[0, 0], [1, 0]],
                                "addresses": [0, 256], "bank": 0, "group": 0}
    assert r.degree == 8 and r.wavefronts == 32 and r.ideal == 4
    assert r.worst["lanes"] == list(range(8)) and r.worst["bank"] == 0
    # padding the row by 16 bytes removes the conflict
    assert _banks("(128,128):(136,1)", "ldmatrix.x4").ok


def test_vector_loads() -> None:
    # the mma-operand pattern (4 lanes per row) on a 128B-swizzled tile: rows 0 and 1 share banks
    r = _banks(SW128, "ld.shared.v4")
    assert r.get("conflict_free").status == "refuted" and r.degree == 2 and r.access.group == 8
    # eight lanes per 128-byte row: conflict-free
    r = _banks(SW128, "ld.shared.v4", addresses="row = %laneid / 8\ncol = (%laneid % 8) * 8")
    assert r.ok
    assert _banks("(64,64):(64,1)", "ld.shared.b32").get("conflict_free").status == "refuted"
    # 32-bit loads of one row: 32 consecutive words
    assert _banks("(64,64):(64,1)", "ld.shared.b32", addresses="row = 0\ncol = %laneid * 2").ok
    # the same word for two lanes is a broadcast, not a conflict
    assert _banks("(64,64):(64,1)", "ld.shared.b16", addresses="row = 0\ncol = %laneid / 2 * 2").ok


def test_alignment_and_placement() -> None:
    r = _banks("(16,32):(32,1)", "ldmatrix.x4", addresses="row = %laneid % 16\ncol = (%laneid / 16) * 8 + 1")
    assert r.get("aligned").status == "refuted"
    assert r.get("aligned").counterexample["lane"] == 0 and r.get("aligned").counterexample["address"] == 2
    hole = api.shared_layout("index", "off = row * 32 + col * 2 if col < 8", tile=(16, 16), type="f16")
    r = api.banks(hole, "ldmatrix.x4")
    assert r.get("defined").status == "refuted" and r.get("defined").counterexample["lane"] == 16


def test_families_of_the_specs() -> None:
    specs = api.load("specs/wgmma.shared.toml")
    fam = api.shared_from_map(api.layout(specs, "wgmma.shared.K.128B"), "f16", Rk=4)  # 8 Rm x 64 halves
    r = api.banks(fam, "ldmatrix.x1")
    assert r.ok and r.placements == (1 + 9 + 17) * 8  # every member (Rm = 1, 2, 3: 8, 16, 24 rows), every row origin
    fam = api.shared_from_map(api.layout(specs, "wgmma.shared.K.none"), "f16", Rk=4)
    assert api.banks(fam, "ldmatrix.x1").ok  # core matrices: 128 contiguous bytes per 8x8 matrix
    with pytest.raises(ValueError, match=r"\(8 x 64\) is smaller than the access's footprint \(16 x 16\) at Rm = 1"):
        api.banks(api.shared_from_map(api.layout(specs, "wgmma.shared.K.128B"), "f16", Rk=4), "ldmatrix.x4")


def test_access_and_address_errors() -> None:
    with pytest.raises(ValueError, match="unknown qualifier .x3"):
        parse_access("ldmatrix.x3")
    with pytest.raises(ValueError, match="takes .x1 or .x2"):
        parse_access("ldmatrix.m16n16.x4")
    with pytest.raises(ValueError, match="not whole 16-bit elements"):
        default_pattern(parse_access("ld.shared.b8"), 16)
    with pytest.raises(ValueError, match="smaller than the access's footprint"):
        _banks("(8,8):(8,1)", "ldmatrix.x4")
    from verify.formula import FormulaError
    with pytest.raises(FormulaError):
        pattern_from_text("row = %laneid +\ncol = 0", parse_access("ldmatrix.x4"), 16)
    acc = parse_access("ldmatrix.m16n16.x2.trans.b8")
    assert (acc.lanes, acc.bytes, acc.group, acc.trans) == (32, 16, 8, True)
    assert parse_access("st.shared.v2.b32").group == 16 and parse_access("ld.shared.v4").bytes == 16


def test_banks_command(capsys: pytest.CaptureFixture[str], tmp_path) -> None:
    code, out, _ = cli(capsys, "banks", "--cute", SW128, "--access", "ldmatrix.x4")
    assert code == 0 and out.splitlines()[-1] == "conflict-free: 4 wavefronts per instruction (the minimum)"
    code, out, _ = cli(capsys, "banks", "--cute", "(128,128):(128,1)", "--type", "f16", "--access", "ldmatrix.x4",
                       "--format", "json")
    doc = json.loads(out)
    assert code == 1 and doc["degree"] == 8 and doc["checks"]["conflict_free"]["status"] == "refuted"
    svg = tmp_path / "t.svg"
    code, out, _ = cli(capsys, "banks", "--cute", "(16,64):(64,1)", "--type", "f16", "--access", "ldmatrix.x4",
                       "--svg", str(svg))
    assert code == 1 and svg.read_text().startswith("<svg") and 'stroke="#d00000"' in svg.read_text()
    addr = tmp_path / "lanes.txt"
    addr.write_text("row = %laneid +\ncol = 0\n")
    code, _, err = cli(capsys, "banks", "--cute", SW128, "--access", "ldmatrix.x4", "--addresses", str(addr))
    assert code == 2 and err.startswith(f"{addr}:1:")
    code, _, err = cli(capsys, "banks", "--cute", SW128, "--access", "ldmatrix.x9")
    assert code == 2 and err.startswith("ptx-verify: error: ldmatrix.x9")
    code, out, _ = cli(capsys, "banks", "--id", "wgmma.shared.K.128B", "--type", "f16", "--param", "Rk=4",
                       "--access", "ldmatrix.x1")
    assert code == 0
    code, _, err = cli(capsys, "banks", "--id", "mma.m16n8k16.A.f16_bf16", "--type", "f16", "--access", "ldmatrix.x4")
    assert code == 2 and "is not a shared-memory layout" in err


ATOMS = [(kind, major, t) for kind in ("INTER", "SW32", "SW64", "SW128") for major in ("K", "MN")
         for t in ("uint8_t", "half_t", "float")]


@pytest.mark.parametrize("kind,major,t", ATOMS)
def test_every_gmma_atom_tile_is_conflict_free_for_ldmatrix(kind: str, major: str, t: str) -> None:
    """The tiles CuTe builds from its GMMA atoms, read 16 bytes a row address: K-major tiles row by row
    (ldmatrix.x4), M/N-major ones along their contiguous rows of M/N (ldmatrix.x4.trans, lane l at K row l % 16,
    M/N chunk l / 16)."""
    bits = {"uint8_t": 8, "half_t": 16, "float": 32}[t]
    e = 128 // bits  # elements per 16-byte row
    w = {"INTER": 1, "SW32": 2, "SW64": 4, "SW128": 8}[kind] * e
    if major == "K":
        tile = f"tile_to_shape(GMMA::Layout_K_{kind}_Atom<{t}>{{}}, Shape<_64,_{max(w, 2 * e)}>{{}})"
        r = _banks(tile, "ldmatrix.x4", type=None)
    else:
        tile = f"tile_to_shape(GMMA::Layout_MN_{kind}_Atom<{t}>{{}}, Shape<_{max(w, 2 * e)},_16>{{}})"
        r = _banks(tile, "ldmatrix.x4.trans", type=None, addresses=f"row = (%laneid / 16) * {e}\ncol = %laneid % 16")
    assert r.ok, (tile, r.get("conflict_free").message)
    assert r.wavefronts == 4


@pytest.mark.parametrize("width", [32, 64, 128])
def test_triton_nvmma_tiles_are_conflict_free_for_ldmatrix(width: int) -> None:
    lay = api.shared_layout("triton", f"#ttg.nvmma_shared<{{swizzlingByteWidth = {width}, transposed = false, "
                            "elementBitWidth = 16}>", tile=(64, 64))
    assert api.banks(lay, "ldmatrix.x4").ok


# lanes 8k .. 8k+7 on row 2k (rows 0, 2, 4, 6): a pattern with gaps, covering the tile only together with its
# placements one row down.  Even rows are spread over the banks, odd rows 1, 3, 5 (and, in the 8-row tile, 7)
# all sit on banks 0-7.
ROWS_0246 = "row = 2 * (%laneid / 8)\ncol = %laneid % 8"
ODD_ROWS_CONFLICT = "off = 4 * (32 * row + col + 8 * ((row / 2) % 4) * (1 - row % 2))"
ODD_ROWS_BELOW_7 = "off = 4 * (32 * row + col + 8 * ((row / 2) % 4) * (1 - (row % 2) * (1 - row / 7)))"


def test_a_strided_lane_pattern_is_placed_at_every_row() -> None:
    """Issue 35 item 3: the pattern on rows 0, 2, 4, 6 was placed only at multiples of its 7-row footprint
    (origin 0 in an 8-row tile, 0 and 7 in a 14-row one) and the conflict one row down went unseen."""
    lay = api.shared_layout("index", ODD_ROWS_CONFLICT, tile=(8, 8), type="f32")
    r = api.banks(lay, "ld.shared.b32", addresses=ROWS_0246)
    c = r.get("conflict_free")
    assert c.status == "refuted" and c.engines == {"z3": "refuted", "enumeration": "refuted"}
    assert c.counterexample.to_json() == {"params": {}, "origin": [1, 0], "lanes": [0, 8], "cells": [[1, 0], [3, 0]],
                                          "addresses": [0x80, 0x180], "bank": 0, "group": 0}
    assert r.degree == 4 and r.worst["origin"] == [1, 0] and r.worst["lanes"] == [0, 8, 16, 24]
    assert r.placements == 2  # origins (0, 0) and (1, 0): a 4-byte load of 32-bit elements may start at any cell
    lay = api.shared_layout("index", ODD_ROWS_BELOW_7, tile=(14, 8), type="f32")
    r = api.banks(lay, "ld.shared.b32", addresses=ROWS_0246)
    assert r.get("conflict_free").counterexample["origin"] == [1, 0] and r.degree == 3
    assert r.placements == 8  # rows 0 .. 7: origins 0 and 7 alone are conflict-free
    # the same pattern over a layout that spreads every row: every placement is conflict-free, by both engines
    even = api.shared_layout("index", "off = 4 * (32 * row + col + 8 * ((row / 2) % 4))", tile=(14, 8), type="f32")
    r = api.banks(even, "ld.shared.b32", addresses=ROWS_0246)
    assert r.ok and all(x.engines == {"z3": "proved", "enumeration": "proved"} for x in r.checks)


def test_placements_follow_the_vector_of_one_address() -> None:
    """16-byte rows of 16-bit elements: origins every row and every 8 columns (a 16-byte vector never starts
    between two of them); down the rows of an M/N-major tile: every 8 rows and every column."""
    r = _banks("(32,32):(40,1)", "ldmatrix.x4")  # footprint 16 x 16
    assert r.placements == 17 * 3
    mn = _banks("(32,32):(1,40)", "ldmatrix.x4.trans", addresses="row = (%laneid / 16) * 8\ncol = %laneid % 16")
    assert mn.placements == 3 * 17  # footprint 16 x 16, rows step 8 (the vector), columns step 1


def test_a_64_by_64_banks_picture_is_condensed_as_fragment_pictures_are(capsys: pytest.CaptureFixture[str],
                                                                       tmp_path) -> None:
    """Issue 35 item 18: ``banks --svg`` of a 64 x 64 tile drew every one of its 4,096 offsets, 2,256 px wide, a
    wall of numbers; now it is condensed around the conflict as fragment pictures are (``--full``: every cell)."""
    import re
    import xml.etree.ElementTree as ET

    ns = "{http://www.w3.org/2000/svg}"
    svg = tmp_path / "b.svg"
    args = ["banks", "--formula", str(ROOT / "examples" / "shared" / "swizzle128.txt"), "--tile", "64x64", "--type",
            "f16", "--access", "ld.shared.v4", "--svg", str(svg)]
    code, _, _ = cli(capsys, *args)
    root = ET.parse(svg).getroot()
    assert code == 1 and int(root.get("width")) <= 1240
    texts = [t.text or "" for t in root.iter(ns + "text")]
    note = [t for t in texts if t.startswith("condensed: ")]
    assert len(note) == 1 and "of 64 columns shown" in note[0] and "--full" in note[0]
    gaps = [t.text for t in root.iter(ns + "title")]
    assert gaps and all(re.fullmatch(r"columns \d+\u2013\d+ not shown \(\d+\)", g) for g in gaps)
    header = {int(t.text) for t in root.iter(ns + "text") if t.get("y") == "64" and (t.text or "").isdigit()}
    assert {0, 1, 8, 62, 63} <= header and len(header) < 64  # the conflict's column 8 is in sight
    cells = [r for r in root.iter(ns + "rect") if r.get("width") == "34" and r.get("height") == "18"]
    assert len(cells) == len(header) * 64  # every row, the columns shown
    red = [(int(r.get("x")), int(r.get("y"))) for r in root.iter(ns + "rect") if r.get("stroke") == "#d00000"]
    x_of = {int(t.text): int(t.get("x")) - 17 for t in root.iter(ns + "text") if t.get("y") == "64"
            and (t.text or "").isdigit()}
    assert sorted(red) == sorted([(x_of[8] + 1, 68 + 1), (x_of[0] + 1, 68 + 18 + 1)])  # cells (0, 8) and (1, 0)
    code, _, _ = cli(capsys, *args, "--full")
    root = ET.parse(svg).getroot()
    assert code == 1 and int(root.get("width")) > 2000 and not [t for t in root.iter(ns + "title")]
    assert len([r for r in root.iter(ns + "rect") if r.get("width") == "34" and r.get("height") == "18"]) == 4096
    code, _, err = cli(capsys, *args[:-2], "--full")
    assert code == 2 and "--full is for --svg" in err
