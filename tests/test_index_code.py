"""Index code, the code people write, read the same way everywhere it is taken (issue 35, items 1, 4, 10, 11, 13).

One grammar (``verify/formula/index.py``): ``#`` starts a comment, ``//`` is floor division, and a ``//`` that
starts a line (or precedes an error) is refused with a line that says so, in ``conform --formula`` (fragments and
``[[layout]]`` maps), ``table --formula``, ``banks``/``descriptor --formula``, ``banks --addresses``,
``consistent index:`` and the formula of a ``[[layout]]``.  Then: ``consistent`` sizes an index-code writer to the
declared tile; ``--param`` reaches index code; ``table FAMILY --formula`` takes ``--param``; a writer's copies
are not limited to 64, and a reader may broadcast or take the writer's names by extent.  Every verdict here is
both engines'."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

import pytest

from verify import api
from verify.checks.consistency_sides import Given
from verify.formula import FormulaError, parse_formula

from conftest import cli

SWZ = "off = row * 128 + col * 2\nswz = off ^ (((off >> 7) & 7) << 4)\n"


def _write(tmp: Path, name: str, text: str) -> str:
    p = tmp / name
    p.write_text(text, encoding="utf-8")
    return str(p)


def _both(d) -> None:
    for c in d.checks:
        assert c.engines["z3"] == c.engines["enumeration"] == c.status, (c.check, c.engines)


# ----------------------------------------------------------------------------- item 1: one language

# Each place that takes index code: (argv for a code file, code that reads // and #, the same code without them).
PLACES: dict[str, tuple[Callable[[str], list[str]], str, str]] = {
    "conform fragment": (lambda f: ["conform", "mma.m16n8k16.A.f16_bf16", "--formula", f],
                         "# m16n8k16 A\nrow = lane // 4 + 8 * ((i // 2) % 2)  # the group\ncol = (lane % 4) * 2 + i % 2 + 8 * (i // 4)\n",
                         "row = lane / 4 + 8 * ((i / 2) % 2)\ncol = (lane % 4) * 2 + i % 2 + 8 * (i / 4)\n"),
    "table fragment": (lambda f: ["table", "mma.m16n8k16.A.f16_bf16", "--formula", f, "--format", "json"],
                       "row = lane // 4 + 8 * ((i // 2) % 2)  # the group\ncol = (lane % 4) * 2 + i % 2 + 8 * (i // 4)\n",
                       "row = lane / 4 + 8 * ((i / 2) % 2)\ncol = (lane % 4) * 2 + i % 2 + 8 * (i / 4)\n"),
    "conform map": (lambda f: ["conform", "wgmma.shared.atom.K.128B", "--formula", f, "--param", "T=8", "--format", "json"],
                    "# the 128B atom, 16-bit elements\nlin = row * 64 + col\noffset = lin ^ ((lin // 64) * 8)  # swizzled\n",
                    "lin = row * 64 + col\noffset = lin ^ ((lin >> 6) * 8)\n"),
    "banks": (lambda f: ["banks", "--formula", f, "--tile", "64x64", "--type", "f16", "--access", "ld.shared.v4",
                         "--format", "json"],
              "off = (row * 128 + col * 2) // 2  # bytes\n", "off = row * 64 + col\n"),
    "descriptor": (lambda f: ["descriptor", "--formula", f, "--tile", "64x64", "--type", "f16", "--format", "json"],
                   "off = (row * 256 + col * 4) // 2  # bytes\nswz = off ^ (((off // 128) % 8) * 16)\n", SWZ),
    "addresses": (lambda f: ["banks", "--formula", "examples/shared/swizzle128.txt", "--tile", "128x64", "--type", "f16",
                             "--access", "ld.shared.v4", "--addresses", f, "--format", "json"],
                  "# eight lanes per row\nrow = lane // 8\ncol = (lane % 8) * 8\n", "row = %laneid / 8\ncol = (%laneid % 8) * 8\n"),
    "consistent shared": (lambda f: ["consistent", "--writer", "tma:64x64:128B", "--reader", "index:" + f, "--type", "f16",
                                     "--format", "json"],
                          "off = (row * 256 + col * 4) // 2  # bytes\nswz = off ^ (((off // 128) % 8) * 16)\n", SWZ),
    "consistent storage": (lambda f: ["consistent", "--writer", "storage.sf.cutlass.128x4.tile", "--reader", "index:" + f,
                                      "--format", "json"],
                           "# row groups of 32\noffset = 16 * (row % 32) + 4 * (row // 32) + kb\n",
                           "offset = 16 * (row % 32) + 4 * (row / 32) + kb\n"),
}


def _run(capsys, tmp_path: Path, place: str, code: str, monkeypatch) -> tuple[int, str, str]:
    monkeypatch.chdir(Path(__file__).resolve().parent.parent)
    argv = PLACES[place][0](_write(tmp_path, "code.txt", code))
    return cli(capsys, *argv)


def _comparable(out: str) -> object:
    """The output without the code's own text (JSON echoes it as ``text``)."""
    try:
        return json.loads(out, object_hook=lambda d: {k: v for k, v in d.items() if k != "text"})
    except ValueError:
        return out


@pytest.mark.parametrize("place", sorted(PLACES))
def test_floor_division_and_hash_comments_mean_one_thing_in_every_place(place, capsys, tmp_path, monkeypatch) -> None:
    _, with_ops, plain = PLACES[place]
    code1, out1, err1 = _run(capsys, tmp_path, place, with_ops, monkeypatch)
    code2, out2, err2 = _run(capsys, tmp_path, place, plain, monkeypatch)
    assert err1 == err2 == "" and code1 == code2 and code1 in (0, 1), (err1, err2)
    assert _comparable(out1) == _comparable(out2)


def test_the_issues_banks_code_is_read_as_floor_division(capsys, tmp_path) -> None:
    """``off = (row * 128 + col * 2) // 2`` was read as ``row * 128 + col * 2`` (a comment): a conflict of degree
    2 at lanes 0 and 4; read as written it is ``row * 64 + col`` bytes, the same answer as that code."""
    f = _write(tmp_path, "c.txt", "off = (row * 128 + col * 2) // 2\n")
    g = _write(tmp_path, "d.txt", "off = row * 64 + col\n")
    wrong = _write(tmp_path, "e.txt", "off = row * 128 + col * 2\n")
    base = ["--tile", "64x64", "--type", "f16", "--access", "ld.shared.v4", "--format", "json"]
    results = [_comparable(cli(capsys, "banks", "--formula", p, *base)[1]) for p in (f, g, wrong)]
    assert results[0] == results[1] != results[2]


C_COMMENT = "// a C comment\n"


@pytest.mark.parametrize("place", sorted(PLACES))
def test_a_c_comment_is_refused_in_every_place_never_read(place, capsys, tmp_path, monkeypatch) -> None:
    code, out, err = _run(capsys, tmp_path, place, C_COMMENT + PLACES[place][1], monkeypatch)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert ":1:1: error: '//' starts no comment here: in index code it is floor division; start a comment with '#'" in err


@pytest.mark.parametrize("place", sorted(PLACES))
def test_a_trailing_c_comment_is_an_error_that_names_the_rule(place, capsys, tmp_path, monkeypatch) -> None:
    text = PLACES[place][2].rstrip("\n").split("\n")
    text[-1] += "   // the last definition"
    code, out, err = _run(capsys, tmp_path, place, "\n".join(text) + "\n", monkeypatch)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "in index code '//' is floor division; a comment starts with '#'" in err


def test_a_layout_formula_in_a_spec_file_is_index_code(capsys, tmp_path) -> None:
    head = 'schema = 1\n[source]\nsection = "0.0"\ntitle = "mine"\n\n[[layout]]\nid = "mine.half"\nkind = "storage"\n' \
           'inputs = { x = 64 }\noutputs = { offset = 32 }\nformula = """\n'
    spec = _write(tmp_path, "mine.toml", head + "# two elements per place\noffset = x // 2\n\"\"\"\n")
    code, out, err = cli(capsys, "table", "mine.half", "--specs", spec, "--format", "json")
    assert code == 0 and err == ""
    assert [e["offset"] for e in json.loads(out)["entries"]][:5] == [0, 0, 1, 1, 2]
    bad = _write(tmp_path, "bad.toml", head + "offset = x // the half\n\"\"\"\n")
    code, out, err = cli(capsys, "check", bad)
    assert code == 2 and "in index code '//' is floor division" in err


def test_the_grammar_is_one_function() -> None:
    """Every reader calls ``parse_index``: the same text gives the same formula whatever the place."""
    from verify.formula.index import parse_index
    f = parse_index("a = row // 3  # x\noffset = -a // 2\n", "x", ("row",), ("offset",))
    assert [d.name for d in f.definitions][-2:] == ["a", "offset"]
    with pytest.raises(FormulaError, match="floor division"):
        parse_index("// note\noffset = row\n", "x", ("row",), ("offset",))


def test_the_doc_pseudo_code_never_reads_code_as_a_comment() -> None:
    """Spec formulas (the doc's pseudo-code) keep the doc's ``// prose`` comments; a ``//`` followed by code is an
    error, not a comment."""
    f = parse_formula("row = %laneid >> 2 // As per the mapping\ncol = i", "a")
    assert [d.name for d in f.definitions] == ["row", "col"]
    for text in ("row = (%laneid * 8) // 2\ncol = i", "row = %laneid // x + 1\ncol = i", "row = %laneid //i\ncol = i"):
        with pytest.raises(FormulaError, match="code follows it"):
            parse_formula(text, "a")


# ----------------------------------------------------------------------------- item 4: the declared tile

def test_an_index_code_writer_past_its_declared_tile_is_out_of_range(capsys, tmp_path) -> None:
    """Rows of 144 bytes in a 16 x 64 f16 tile (2048 bytes): row 15 is at byte 2160.  The buffer is the tile."""
    w = _write(tmp_path, "w.txt", "off = row * 144 + col * 2\n")
    code, out, err = cli(capsys, "consistent", "--writer", "index:" + w, "--reader", "index:" + w, "--type", "f16",
                         "--tile", "16x64", "--format", "json")
    doc = json.loads(out)
    assert code == 1 and err == "" and doc["status"] == "out_of_range"
    wr = doc["checks"]["writer_in_range"]
    assert wr["status"] == "refuted" and wr["engines"] == {"z3": "refuted", "enumeration": "refuted"}
    assert wr["counterexample"]["element"] == {"row": 14, "col": 16} and wr["counterexample"]["at"] == {"offset": 1024}
    d = api.consistent(Given("index", "off = row * 144 + col * 2\n"), Given("index", "off = row * 128 + col * 2\n"),
                       type="f16", tile=(16, 64))
    _both(d)
    assert d.get("writer_in_range").status == "refuted"
    lay = api.shared_layout("index", "off = row * 144 + col * 2\n", type="f16", tile=(16, 64))
    assert lay.address(15, 0) == 2160 and lay.address(15, 0) >= 16 * 64 * 2
    # a writer inside its tile stays consistent
    ok = _write(tmp_path, "ok.txt", "off = row * 128 + col * 2\n")
    code, out, _ = cli(capsys, "consistent", "--writer", "index:" + ok, "--reader", "tma:16x64:none", "--type", "f16",
                       "--tile", "16x64")
    assert code == 0 and out.splitlines()[-1] == "consistent"


# ----------------------------------------------------------------------------- item 10: --param reaches index code

ATOM_T = "lin = row * 8 * T + col\noffset = lin ^ (((lin // T) // 8 % 8) * T)\n"


def test_conform_of_a_map_reads_the_param_in_index_code(capsys, tmp_path) -> None:
    f = _write(tmp_path, "atom.txt", ATOM_T)
    code, out, err = cli(capsys, "conform", "wgmma.shared.atom.K.128B", "--formula", f, "--param", "T=8")
    assert code == 0 and err == "" and "(T = 8) <- index" in out and out.split("\n")[0].endswith(": equal")
    wrong = _write(tmp_path, "wrong.txt", ATOM_T.replace("% 8", "% 4"))
    code, out, err = cli(capsys, "conform", "wgmma.shared.atom.K.128B", "--formula", wrong, "--param", "T=8",
                         "--format", "json")
    doc = json.loads(out)["conform"]
    assert code == 1 and doc["status"] == "differs" and doc["compared"][0]["engines"] == {"enumeration": "refuted",
                                                                                          "z3": "refuted"}
    r = api.conform_map("wgmma.shared.atom.K.128B", "index", ATOM_T, params={"T": 4})
    assert r.status == "equal" and r.member == {"T": 4}


QUANTIZER = """# the quantizer's own layout, over its parameters M and KB
tiles_m = (M + 127) // 128
tiles_k = (KB + 3) // 4
tile = (l * tiles_m + m // 128) * tiles_k + kb // 4
offset = 512 * tile + 16 * (m % 32) + 4 * ((m // 32) % 4) + kb % 4 if m < M && kb < KB
"""


def test_index_code_in_consistent_reads_the_familys_parameters(capsys, tmp_path) -> None:
    q = _write(tmp_path, "q.txt", QUANTIZER)
    code, out, err = cli(capsys, "consistent", "--writer", "storage.sf.cutlass.128x4.quantizer", "--reader", "index:" + q,
                         "--param", "M=200", "--param", "KB=8", "--param", "L=2")
    assert code == 0 and err == "" and out.splitlines()[-1] == "consistent"
    # a parameter --param leaves free: the code is a family, judged for every value (VS of the MMA's ids)
    good = _write(tmp_path, "vs.txt", "tmem_lane = row\ntmem_col = row // 32\nbyte = VS * (kb // VS) + kb % VS\n")
    bad = _write(tmp_path, "vs2.txt", "tmem_lane = row\ntmem_col = row // 32\nbyte = kb // VS\n")
    code, out, _ = cli(capsys, "consistent", "--writer", "index:" + good, "--reader", "tcgen05.sf.A.4x1")
    assert code == 0 and "for every VS in {1, 2, 4}" in out and out.splitlines()[-1] == "consistent"
    code, out, _ = cli(capsys, "consistent", "--writer", "index:" + bad, "--reader", "tcgen05.sf.A.4x1", "--format", "json")
    doc = json.loads(out)
    assert code == 1 and doc["status"] == "mismatch" and doc["checks"]["same_place"]["counterexample"]["params"] == {"VS": 2}
    assert all(c["engines"]["z3"] == c["engines"]["enumeration"] for c in doc["checks"].values())
    code, out, _ = cli(capsys, "consistent", "--writer", "index:" + bad, "--reader", "tcgen05.sf.A.4x1", "--param", "VS=1")
    assert code == 0 and out.splitlines()[-1] == "consistent"


# ----------------------------------------------------------------------------- item 11: table FAMILY --formula

def test_table_of_a_family_given_as_index_code_takes_param(capsys, tmp_path) -> None:
    f = _write(tmp_path, "l.txt", "row = lane / 4 + 8 * (i // 2)\ncol = (lane % 4) * 2 + i % 2\n")
    code, out, err = cli(capsys, "table", "ldmatrix.m8n8.R.b16", "--formula", f, "--param", "NUM=2")
    assert code == 0 and err == "" and out.startswith(f"index {f}  (16 x 8, 32 threads x 4 elements)")
    # code that reads the parameter
    g = _write(tmp_path, "n.txt", "row = lane / 4 + 8 * (i // 2)\ncol = (lane % 4) * 2 + i % 2 + 0 * NUM\n")
    code, out, err = cli(capsys, "table", "ldmatrix.m8n8.R.b16", "--formula", g, "--param", "NUM=4", "--format", "json")
    assert code == 0 and err == "" and len(json.loads(out)["entries"]) == 32 * 8
    code, out, err = cli(capsys, "table", "ldmatrix.m8n8.R.b16", "--formula", f)
    assert code == 2 and "--param NUM=VALUE" in err


# ----------------------------------------------------------------------------- item 13: copies and broadcasts

MINE = '''schema = 1
[source]
section = "0.0"
title = "broadcasts"
''' + "".join(f'''
[[layout]]
id = "{lid}"
kind = "storage"
inputs = {{ {ins} }}
outputs = {{ offset = 8192 }}
formula = """
offset = {off}
"""
''' for lid, ins, off in (("mine.rows128", "r = 128, c = 64", "r * 64 + c"), ("mine.vec", "c = 64", "c"),
                          ("mine.vec.last", "c = 64", "64 * 127 + c"), ("mine.vec.shifted", "c = 64", "64 * 127 + (c + 1) % 64"),
                          ("mine.bcast", "r = 128, c = 64", "c"), ("mine.rows", "r = 128, c = 64", "r * 64 + c")))


@pytest.fixture()
def mine(tmp_path: Path) -> str:
    return _write(tmp_path, "mine.toml", MINE)


def test_a_writer_with_128_copies_is_decided(capsys, mine) -> None:
    """The element (c) written at 128 rows (copies r:128), read from row 0, the last row, or the wrong column."""
    for reader, status in (("mine.vec", "consistent"), ("mine.vec.last", "consistent"), ("mine.vec.shifted", "mismatch")):
        code, out, err = cli(capsys, "consistent", "--specs", mine, "--writer", "mine.rows128", "--reader", reader,
                             "--format", "json")
        assert err == "" and code == (0 if status == "consistent" else 1), err
        doc = json.loads(out)
        assert doc["status"] == status and doc["copies"] == [{"name": "r", "size": "128"}]
        assert all(c["engines"]["z3"] == c["engines"]["enumeration"] == c["status"] for c in doc["checks"].values())
    cex = doc["checks"]["no_foreign_read"]["counterexample"]
    assert cex["element"] == {"c": 0} and cex["owner"] == {"c": 1} and cex["owner_copy"] == {"r": 127}


def test_a_reader_that_broadcasts_is_judged_once(capsys, mine) -> None:
    code, out, err = cli(capsys, "consistent", "--specs", mine, "--writer", "mine.vec", "--reader", "mine.bcast")
    assert code == 0 and err == "" and out.splitlines()[-1] == "consistent"
    assert "broadcast: (r:128): the reader reads the same place for every one (proved), judged at 0" in out
    # a reader input the writer lacks that changes the reads is not a broadcast: the names do not match
    code, out, err = cli(capsys, "consistent", "--specs", mine, "--writer", "mine.vec", "--reader", "mine.rows")
    assert code == 2 and out == "" and "the reader's inputs r are not inputs of the writer (c:64)" in err
    assert "at r 1, c 0" in err


def test_a_notation_reader_takes_the_writers_names_by_extent(capsys, mine) -> None:
    code, out, err = cli(capsys, "consistent", "--specs", mine, "--writer", "mine.rows128", "--reader", "cute:(64):(1)")
    assert code == 0 and err == "" and "reader: cute:(64):(1) over (c)" in out and out.splitlines()[-1] == "consistent"
    code, out, err = cli(capsys, "consistent", "--specs", mine, "--writer", "mine.vec", "--reader", "cute:(128,64):(0,1)")
    assert code == 0 and "over (broadcast, c)" in out and out.splitlines()[-1] == "consistent"
    code, out, err = cli(capsys, "consistent", "--specs", mine, "--writer", "mine.vec", "--reader", "cute:(128,64):(1,0)")
    assert code == 2 and "what the reader reads changes along them" in err
    code, out, err = cli(capsys, "consistent", "--specs", mine, "--writer", "mine.vec", "--reader", "cute:(64,64):(0,1)")
    assert code == 2 and "more than one way to match them by extent" in err
    # the same reader stated over the writer's rows is element by element: reading row 0 for every row is a mismatch
    code, out, err = cli(capsys, "consistent", "--specs", mine, "--writer", "mine.rows", "--reader", "cute:(128,64):(0,1)")
    assert code == 1 and out.splitlines()[-1] == "mismatch"


def test_a_map_with_an_output_box_wider_than_its_values_is_decided_alike(capsys, mine) -> None:
    """The Z3 bit width holds the output box (8192 here, values below 128): the engines agreed on nothing before."""
    code, out, _ = cli(capsys, "check", mine, "--format", "json")
    doc = json.loads(out)
    for m in doc["maps"]:
        for name, c in m["checks"].items():
            assert c["engines"]["z3"] == c["engines"]["enumeration"], (m["id"], name, c)


def test_a_read_of_a_place_two_elements_are_written_at_is_foreign_by_both_engines() -> None:
    """Found by the fuzzer: an OR in place of the swizzle's XOR writes (1, 0) and (1, 8) at one place; the reader
    reads (1, 0) there.  Another element is written where it is read: both engines refute (the enumeration took
    the first writer of a place as its only owner, and proved it)."""
    w = Given("index", "off = (col*2)+ row*128\nswz = off | (7 & off >> 7) << 4\n")
    r = Given("index", "off = (col*2) + row*128\nswz = ((off >> 7) & 7) << 4 ^ off\n")
    d = api.consistent(w, r, type="f16", tile=(8, 64))
    _both(d)
    cex = d.get("no_foreign_read").counterexample
    assert cex["element"] == {"row": 1, "col": 0} and cex["owner"] == {"row": 1, "col": 8} and cex["at"] == {"offset": 72}
