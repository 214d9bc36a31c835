"""``consistent`` across kinds and notations: shared-memory writers against readers (a swizzled store against a
load with another swizzle, a TMA box against a wgmma descriptor, a spec tile against CuTe), and storage layouts
given in CuTe ``shape:stride``, index code over named variables and Triton offset bases; bad text is one
positioned line, exit 2.  Every decision is both engines'."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from verify import api
from verify.checks.consistency_sides import Given
from verify.checks.descriptor import check as check_descriptor, derive
from verify.results.shared import first_cell
from verify.checks.smem_load import writer_reader

from conftest import cli

SW128 = "Sw<3,4,3> o smem_ptr[16b](unset) o (_8,_64):(_64,_1)"
SW64 = "Sw<2,4,3> o smem_ptr[16b](unset) o (_8,_64):(_64,_1)"
CP = ["tcgen05.cp.source.32x128b", "tcgen05.cp.32x128b.warpx4"]


def _both(d) -> None:
    for c in d.checks:
        assert c.engines["z3"] == c.engines["enumeration"] == c.status, (c.check, c.engines)


# ----------------------------------------------------------------------------- shared memory

def test_a_store_with_one_swizzle_against_a_load_with_another_is_a_difference_at_its_first_cell() -> None:
    d = api.consistent(Given("cute", SW128), Given("cute", SW64))
    _both(d)
    assert d.status == "mismatch"
    cex = d.get("same_place").counterexample
    assert cex["element"] == {"row": 4, "col": 0} and cex["written"] == {"offset": 288} and cex["read"] == {"offset": 256}
    # the same first cell as the shared-memory API's writer/reader comparison (maps.same)
    w = api.shared_layout("cute", SW128)
    r = api.shared_layout("cute", SW64)
    same = writer_reader(w, r)
    assert same.status == "refuted" and same.counterexample["point"] == {"row": 4, "col": 0}
    assert api.consistent(Given("cute", SW128), Given("cute", SW128)).status == "consistent"


def test_a_tma_box_read_through_a_wgmma_descriptor(capsys) -> None:
    tile = api.shared_layout("tma", "64x64:128B", type="f16")
    good = derive(tile, "wgmma", "K")
    assert good.ok
    d = api.consistent(Given("tma", "64x64:128B"), Given("descriptor", hex(good.descriptor.encode())), type="f16",
                       major="K")
    _both(d)
    assert d.status == "consistent"
    wrong = 0x8000004000010000  # 64B swizzling
    d = api.consistent(Given("tma", "64x64:128B"), Given("descriptor", hex(wrong)), type="f16", major="K")
    _both(d)
    cell = d.get("same_place").counterexample["element"]
    assert d.status == "mismatch" and cell == {"row": 1, "col": 0}
    # the descriptor command names the same first cell
    chk = first_cell(check_descriptor(tile, wrong, "wgmma", "K"))
    assert (chk["row"], chk["col"]) == (1, 0)
    code, out, err = cli(capsys, "consistent", "--writer", "tma:64x64:128B", "--reader", f"descriptor:{hex(wrong)}",
                         "--type", "f16", "--major", "K")
    assert code == 1 and err == "" and out.splitlines()[-1] == "mismatch"
    assert "same_place       REFUTED: element (row 1, col 0) is written at (offset 72) and read from (offset 32)" in out


def test_a_spec_tile_against_cute_binds_t_from_the_type(capsys) -> None:
    cute = "cute:tile_to_shape(GMMA::Layout_K_SW128_Atom<half_t>{}, Shape<_8,_64>{})"
    base = ["consistent", "--writer", cute, "--param", "Rm=1", "--param", "Rk=4", "--type", "f16"]
    code, out, _ = cli(capsys, *base, "--reader", "wgmma.shared.K.128B@corrected")
    assert code == 0 and out.splitlines()[-1] == "consistent"
    other = "cute:tile_to_shape(GMMA::Layout_K_SW64_Atom<half_t>{}, Shape<_8,_64>{})"
    code, out, _ = cli(capsys, "consistent", "--writer", other, "--reader", "wgmma.shared.K.128B@corrected",
                       "--param", "Rm=1", "--param", "Rk=4", "--type", "f16")
    assert code == 1 and "same_place       REFUTED: element (row 0, col 32)" in out


def test_shared_sides_must_agree_on_the_element_width() -> None:
    with pytest.raises(ValueError, match="different widths"):
        api.consistent(Given("cute", SW128), Given("cute", "Sw<3,4,3> o smem_ptr[32b](unset) o (_8,_32):(_32,_1)"))


# ----------------------------------------------------------------------------- storage in notations

def test_a_storage_layout_in_cute_takes_the_other_sides_names(capsys) -> None:
    code, out, _ = cli(capsys, "consistent", "--writer", "storage.sf.cutlass.128x4.tile", "--reader",
                       "cute:((32,4),4):((16,4),1)", "--format", "json")
    doc = json.loads(out)
    assert code == 0 and doc["status"] == "consistent" and doc["reader"] == "cute:((32,4),4):((16,4),1)"
    d = api.consistent("storage.sf.cutlass.128x4.tile", Given("cute", "((32,4),4):((4,128),1)"))
    _both(d)
    assert d.status == "mismatch" and d.get("same_place").counterexample["element"] == {"row": 1, "kb": 0}


def test_a_cute_storage_writer_through_tcgen05_cp() -> None:
    d = api.consistent([Given("cute", "((32,4),4):((16,4),1)"), *CP], "tcgen05.sf.A.4x1")
    _both(d)
    assert d.status == "consistent" and d.params == {"VS": (1, 2, 4)}
    d = api.consistent([Given("cute", "((32,4),4):((16,4),1)"), *CP], "tcgen05.sf.A.4x1.sfa_id0")
    assert d.status == "mismatch" and d.get("same_place").counterexample["element"] == {"row": 0, "kb": 1}


def test_index_code_over_named_variables(tmp_path: Path, capsys) -> None:
    (tmp_path / "good.txt").write_text("r0 = row % 32\nr1 = row / 32\noffset = 16 * r0 + 4 * r1 + kb\n")
    (tmp_path / "bad.txt").write_text("offset = 4 * row + kb\n")
    code, out, _ = cli(capsys, "consistent", "--writer", f"index:{tmp_path / 'good.txt'}", "--reader",
                       "storage.sf.cutlass.128x4.tile")
    assert code == 0 and out.splitlines()[-1] == "consistent"
    d = api.consistent(Given("index", (tmp_path / "bad.txt").read_bytes(), "bad.txt"), "storage.sf.cutlass.128x4.tile")
    _both(d)
    assert d.status == "mismatch" and d.get("same_place").counterexample["element"] == {"row": 1, "kb": 0}


def _bases(swap: bool = False) -> str:
    # offset = 16 (row % 32) + 4 (row / 32) + kb: bit 0, 1 -> kb; 2, 3 -> row / 32; 4..8 -> row % 32
    bases = [[0, 1], [0, 2], [32, 0], [64, 0]] + [[1 << k, 0] for k in range(5)]
    if swap:
        bases[0], bases[2] = bases[2], bases[0]
    return "#ttg.shared_linear<{offset = [" + ", ".join(f"[{a}, {b}]" for a, b in bases) + "]}>\n"


def test_triton_offset_bases(tmp_path: Path) -> None:
    d = api.consistent(Given("triton", _bases(), "sf.mlir"), "storage.sf.cutlass.128x4.tile")
    _both(d)
    assert d.status == "consistent"
    d = api.consistent(Given("triton", _bases(swap=True), "sf.mlir"), "storage.sf.cutlass.128x4.tile")
    _both(d)
    assert d.status == "mismatch"


# ----------------------------------------------------------------------------- bad input: one positioned line

@pytest.mark.parametrize("side, where", [
    ("cute:((32,4),4):((16,4),1", "argument:1:26:"),        # the column counts the whole argument
    ("cute:((32,4),4):((16,x),1)", "argument:1:"),
    ("tma:64x64", "argument:1:5:"),
    ("descriptor:0xZZ", "argument:1:12:"),
])
def test_bad_text_on_the_command_line(side: str, where: str, capsys) -> None:
    code, out, err = cli(capsys, "consistent", "--writer", "tma:64x64:128B", "--reader", side, "--type", "f16",
                         "--major", "K") if side.startswith("descriptor") else \
        cli(capsys, "consistent", "--writer", "storage.sf.cutlass.128x4.tile", "--reader", side)
    assert code == 2 and out == "" and err.count("\n") == 1 and err.startswith(where), err


def test_a_position_quoted_in_the_message_counts_from_the_argument_too(capsys) -> None:
    code, _, err = cli(capsys, "consistent", "--writer", "storage.sf.cutlass.128x4.tile", "--reader",
                       "cute:((32,4),4):((16,4),1")
    assert code == 2 and err == "argument:1:26: error: expected ',' or ')', found end of input (tuple opened at 1:17)\n"


def test_bad_files(tmp_path: Path, capsys) -> None:
    (tmp_path / "ix.txt").write_text("r = row\noffset = 4 * r + kbb\n")
    code, out, err = cli(capsys, "consistent", "--writer", f"index:{tmp_path / 'ix.txt'}", "--reader",
                         "storage.sf.cutlass.128x4.tile")
    assert code == 2 and out == "" and err == f"{tmp_path / 'ix.txt'}:2:18: error: unknown identifier 'kbb' (not defined nor an input; a parameter is bound with --param kbb=VALUE)\n"
    (tmp_path / "b.mlir").write_text("#ttg.shared_linear<{offset = [[0, 1], [0, 2]]}>\n")
    code, out, err = cli(capsys, "consistent", "--writer", f"triton:{tmp_path / 'b.mlir'}", "--reader",
                         "storage.sf.cutlass.128x4.tile")
    assert code == 2 and err.startswith(f"{tmp_path / 'b.mlir'}:1:") and "bases cannot cover" in err
    code, _, err = cli(capsys, "consistent", "--writer", f"index:{tmp_path / 'none.txt'}", "--reader", "storage.sf.linear")
    assert code == 2 and err.count("\n") == 1 and "none.txt:1:1: error:" in err
    code, _, err = cli(capsys, "consistent", "--writer", "index:", "--reader", "storage.sf.linear")
    assert code == 2 and err.count("\n") == 1 and "give the file" in err


def test_a_notation_that_borrows_names_needs_a_side_that_has_them(tmp_path: Path, capsys) -> None:
    (tmp_path / "i.txt").write_text("offset = row\n")
    code, _, err = cli(capsys, "consistent", "--writer", f"index:{tmp_path / 'i.txt'}", "--reader",
                       f"index:{tmp_path / 'i.txt'}")
    assert code == 2 and err.count("\n") == 1 and "index code names" in err
    code, _, err = cli(capsys, "consistent", "--writer", "tma:64x64:128B", "--reader", "descriptor:0x0")
    assert code == 2 and "--type" in err and err.count("\n") == 1


def test_a_notation_against_a_family_asks_for_its_parameters_in_the_docs_terms(capsys) -> None:
    code, out, err = cli(capsys, "consistent", "--writer", "triton:examples/layouts/sf_128x4_bases.mlir", "--reader",
                         "storage.sf.cutlass.128x4.quantizer")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "l runs over L values on the other side" in err and "--param" in err and "Var(" not in err


def test_the_example_files_are_the_cutlass_tile(capsys) -> None:
    for side in ("index:examples/layouts/sf_128x4_index.txt", "triton:examples/layouts/sf_128x4_bases.mlir"):
        d = api.consistent(Given(side.split(":")[0], Path(side.split(":")[1]).read_bytes(), side.split(":")[1]),
                           "storage.sf.cutlass.128x4.tile")
        _both(d)
        assert d.status == "consistent", side
