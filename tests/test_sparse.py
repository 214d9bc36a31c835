"""Sparse A (mma.sp): compressed cells, logical columns, metadata, selector; both engines agree."""
from __future__ import annotations

import pytest
import z3

from verify import api
from verify.checks import sparse as sparse_checks
from verify.engines import smt
from verify.outputs.table import sparse_entries, sparse_grid_text
from verify.checks.family import check_any as check_layout
from verify.layout.model import cell_at
from verify.layout.sparse import is_sparse as is_sparse_range
from verify.errors import SpecError

from conftest import SPECS

def _map(lay):
    return lay.map


U8 = SPECS / "mma.sp.m16n8k32.u8_s8.toml"
TF32 = SPECS / "mma.sp.m16n8k16.tf32.toml"


def sparse_layouts() -> list:
    return [lay for lay in api.layouts(api.load([SPECS])) if is_sparse_range(lay)]


def mutate(path, old: str, new: str):
    text = path.read_text()
    assert old in text, old
    return api.loads(text.replace(old, new, 1), str(path))


def a_of(spec):
    return next(lay for lay in spec.layouts if lay.operand == "A")


def by_name(results):
    return {r.check: r for r in results}


def assert_agree(r) -> None:
    """Both engines ran and gave the combined verdict."""
    assert r.status in ("proved", "refuted"), r
    assert r.engines["z3"] == r.engines["enumeration"] == r.status, r


# ----------------------------------------------------------------------------- compressed cells

@pytest.mark.parametrize("lay", sparse_layouts(), ids=lambda x: x.id)
def test_compressed_a_is_a_bijection_onto_rows_by_half_k(lay) -> None:
    cells = _map(lay)
    md = cells.model
    assert lay.cols == md.k * md.kept // md.chunk
    res = check_layout(lay)
    for name in ("in_range", "injective", "surjective"):
        c = res.get(name)
        assert c.status == "proved" and c.engines["z3"] == c.engines["enumeration"] == "proved", (name, c)


@pytest.mark.parametrize("lay", sparse_layouts()[:4], ids=lambda x: x.id)
def test_two_implementations_agree_pointwise(lay) -> None:
    """z3_info evaluated at each concrete (lane, i) equals py_info (independent code paths)."""
    cells = _map(lay)
    w = 16
    lane, i, m = z3.BitVecs("lane1 i1 metadata", w)
    info = cells.z3_info(lane, i)
    logical = cells.z3_logical(info, m)
    for ln in range(0, lay.threads, 5):
        for ix in range(lay.n_elements):
            sub = [(lane, smt.bv(ln, w)), (i, smt.bv(ix, w))]
            p = cells.point_info(ln, ix)
            ok = z3.is_true(z3.simplify(z3.substitute(info["ok"], *sub)))
            assert ok == (p is not None and p.ok)
            if not ok:
                continue
            col = z3.simplify(z3.substitute(info["col"], *sub)).as_signed_long()
            assert (p.row, col) == cell_at(lay, ln, ix)
            for mv in (0b0100, 0b1110, 0b1001, 0b0000):
                lv = z3.simplify(z3.substitute(logical, *sub, (m, smt.bv(mv, w)))).as_signed_long()
                assert lv == cells.point_logical(ln, ix, mv)


def test_compressed_columns_are_consecutive_slots() -> None:
    A = a_of(api.load([U8])[0])
    cells = _map(A)
    # lane 5 (groupID 1, threadID_in_group 1): range [8 ... 15] of rows 1 (a0..a3) and 9 (a4..a7)
    assert [cell_at(A, 5, i) for i in range(8)] == [(1, 4), (1, 5), (1, 6), (1, 7), (9, 4), (9, 5), (9, 6), (9, 7)]
    p = cells.point_info(5, 2)
    assert (p.first, p.last, p.rank, p.chunk, p.j) == (8, 15, 2, 3, 0)
    # metadata 0b1101 = indices (1, 3): kept elements of chunk 2 on logical 9 and 11
    assert [cells.point_logical(5, i, 0b1101) for i in range(4)] == [9, 11, 13, 15]


def test_tf32_decode_matches_the_doc_values() -> None:
    A = a_of(api.load([TF32])[0])
    cells = _map(A)
    assert cells.model.index_bits == 4 and cells.model.valid == (0b0100, 0b1110)
    # lane 1, a2: row 0, range [10 ... 11]
    assert cells.point_logical(1, 2, 0b0100) == 10 and cells.point_logical(1, 2, 0b1110) == 11


# ----------------------------------------------------------------------------- sparse checks

@pytest.mark.parametrize("path", [U8, TF32], ids=lambda p: p.name)
def test_bundled_sparse_semantics(path) -> None:
    A = a_of(api.load([path])[0])
    results, derived = sparse_checks.sparse_checks(A, 10.0)
    r = by_name(results)
    for name in ("chunk_ranges", "metadata_distinct", "metadata_ordered", "metadata_budget", "metadata_group"):
        assert r[name].status == "proved" and r[name].as_expected, r[name]
        assert_agree(r[name])
    assert "metadata_budget" in derived and "CuTe" in derived["metadata_budget"]


def test_invalid_metadata_collides_with_a_witness() -> None:
    A = a_of(api.load([U8])[0])
    r = by_name(sparse_checks.sparse_checks(A, 10.0)[0])["metadata_invalid"]
    assert r.status == "refuted" and r.expected == "refuted" and r.as_expected
    assert_agree(r)
    c = r.counterexample
    m = c["metadata"]
    assert m in (0b0000, 0b0101, 0b1010, 0b1111) and (m & 3) == (m >> 2)
    cells = _map(A)
    a, b = c["first"], c["second"]
    assert cells.point_logical(a["lane"], a["i"], m) == cells.point_logical(b["lane"], b["i"], m) == c["logical_col"]
    assert "each of the 4 invalid values" in r.message


def test_mutation_equal_indices_declared_valid_is_caught() -> None:
    spec = mutate(U8, "invalid = [0b0000, 0b0101, 0b1010, 0b1111]", "invalid = [0b0101, 0b1010, 0b1111]")
    r = by_name(sparse_checks.sparse_checks(a_of(spec), 10.0)[0])["metadata_distinct"]
    assert r.status == "refuted" and not r.as_expected
    assert_agree(r)
    assert r.counterexample["metadata"] == 0b0000


def test_mutation_unordered_value_in_ordered_list_is_caught() -> None:
    spec = mutate(U8, "ordered = [0b0100,", "ordered = [0b0001, 0b0100,")
    r = by_name(sparse_checks.sparse_checks(a_of(spec), 10.0)[0])["metadata_ordered"]
    assert r.status == "refuted" and not r.as_expected
    assert_agree(r)
    assert r.counterexample["metadata"] == 0b0001
    assert r.counterexample["logical_cols"][0] > r.counterexample["logical_cols"][1]


@pytest.mark.parametrize("old,new,kind", [
    ("row = groupID + (8 * (%laneid % 2))", "row = groupID", "injective"),
    ('selector = "(%laneid % 4) >> 1"', 'selector = "%laneid % 4"', "surjective"),
    ("col = i                          for ei where i = {0,..,7}", "col = i + 1", "in_range"),
])
def test_mutation_metadata_layout_is_caught(old, new, kind) -> None:
    spec = mutate(U8, old, new)
    r = by_name(sparse_checks.sparse_checks(a_of(spec), 10.0)[0])["metadata_budget"]
    assert r.status == "refuted" and not r.as_expected
    assert_agree(r)
    assert r.counterexample["kind"] == kind
    assert f"selector {r.counterexample['selector']}" in r.message


def test_mutation_metadata_rows_outside_the_group_are_caught() -> None:
    spec = mutate(U8, "groupID = %laneid >> 2\nrow = groupID + (8 * (%laneid % 2))",
                  "groupID = %laneid >> 2\nrow = ((groupID + 1) % 8) + (8 * (%laneid % 2))")
    r = by_name(sparse_checks.sparse_checks(a_of(spec), 10.0)[0])
    assert r["metadata_budget"].status == "proved"  # still a bijection ...
    g = r["metadata_group"]
    assert g.status == "refuted"  # ... but onto rows of another group of four
    assert_agree(g)
    assert (g.counterexample["row"] % 8) == ((g.counterexample["lane"] >> 2) + 1) % 8


def test_mutation_range_too_narrow_is_caught() -> None:
    spec = mutate(U8, "lastcol  = firstcol + 7", "lastcol  = firstcol + 3")
    A = a_of(spec)
    r = by_name(sparse_checks.sparse_checks(A, 10.0)[0])["chunk_ranges"]
    assert r.status == "refuted"
    assert_agree(r)
    assert r.counterexample["rank"] >= 2 and "holds only 2" in r.message
    assert check_layout(A).get("in_range").status == "refuted"


def test_mutation_misaligned_range_is_caught() -> None:
    spec = mutate(U8, "firstcol = threadID_in_group * 8", "firstcol = (threadID_in_group * 8) + 2")
    r = by_name(sparse_checks.sparse_checks(a_of(spec), 10.0)[0])["chunk_ranges"]
    assert r.status == "refuted"
    assert_agree(r)
    assert "whole 4-wide chunks" in r.message


# ----------------------------------------------------------------------------- table

def test_table_entries_default_metadata_is_canonical() -> None:
    A = a_of(api.load([U8])[0])
    entries = sparse_entries(A)
    assert len(entries) == 32 * 8
    e = entries[0]
    assert set(e) >= {"lane", "i", "element", "row", "col", "chunk", "logical_col"}
    assert all(x["metadata"] == 0b0100 and x["valid"] for x in entries)
    logical = {(x["row"], x["logical_col"]) for x in entries}
    assert len(logical) == len(entries)  # canonical metadata is collision-free
    assert all(x["logical_col"] % 4 in (0, 1) for x in entries)


def test_table_with_invalid_metadata_shows_collisions() -> None:
    A = a_of(api.load([U8])[0])
    text = sparse_grid_text(A, 0x00004444)
    assert "compressed" in text and "logical" in text and "!" in text
    assert "invalid metadata fields used: 0b0000" in text
    assert "0x00004444" in text


def test_table_tf32_logical_view() -> None:
    A = a_of(api.load([TF32])[0])
    entries = sparse_entries(A, 0xEEEEEEEE)
    assert all(x["logical_col"] % 2 == 1 for x in entries)


# ----------------------------------------------------------------------------- spec fields

def test_unknown_sparse_field_is_a_spec_error() -> None:
    with pytest.raises(SpecError) as e:
        mutate(U8, "index_bits = 2", "index_bitz = 2")
    assert "unknown field 'index_bitz' in sparse" in str(e.value)
    assert e.value.line > 1


def test_metadata_needs_provenance() -> None:
    with pytest.raises(SpecError) as e:
        mutate(U8, "metadata_derived = ", "note = ")
    assert "metadata_derived" in str(e.value)


def test_bad_selector_formula_is_a_spec_error() -> None:
    with pytest.raises(SpecError) as e:
        mutate(U8, 'selector = "(%laneid % 4) >> 1"', 'selector = "(%laneid % 4) >> i"')
    assert "cannot depend on i" in str(e.value)


def test_defaults_without_sparse_table() -> None:
    """Specs that give only kept/chunk (or nothing) get the doc's general rules."""
    spec = mutate(U8, "[fragment.sparse]\nkept = 2\nchunk = 4\nindex_bits = 2\nfields = 16\n"
                      "invalid = [0b0000, 0b0101, 0b1010, 0b1111]\n", "[fragment.sparse]\n")
    md = a_of(spec).map.model
    assert (md.kept, md.chunk, md.index_bits, md.lanes_needed, md.selectors) == (2, 4, 2, 2, (0, 1))
    assert md.invalid == (0b0000, 0b0101, 0b1010, 0b1111)
