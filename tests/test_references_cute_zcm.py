"""CuTe's zero-column mask descriptor as a reference for ``tcgen05.zero_column.*`` (``references/cute_zcm.py``):
``union MaskAndShiftB``'s bit-fields laid out from the header text, and ``make_column_zero_mask``'s ``step_q`` per
CTA_M.  Tested on literal struct bodies (the layout rules), on a cut-down header of the same shape (agreement, a
moved field differs, a missing case or loop is refused) and on the installed wheel's header where it is present."""
from __future__ import annotations

import functools

import pytest
from conftest import SPECS

from verify import api
from verify.checks.references import cute_zcm as z
from verify.checks.references.common import conform_rows
from verify.checks.references.pyfunc import Refused

HEADER = '''\
// using MaskAndShiftB = uint32_t[2];
union MaskAndShiftB
{
  uint32_t uri[2];

  struct {
    uint8_t  start_count_ [4];  // bit [ 0:32)
    uint32_t first_span_  : 4,  // bit [32:36)
                          : 3,  //
             nzm_         : 1,  // bit [39:40)
             skip_span_   : 8,
             use_span_    : 8,
             shift_       : 6,
                          : 2;
  };
};

template <typename ShapeType, int FLT_S, int CTA_M, int CTA_N>
CUTE_HOST_DEVICE constexpr auto
make_column_zero_mask(ShapeType conv_q, int32_t cta_coord_q, int32_t num_pixels_skip_left) {
  int step_q =   CTA_M == 128 ? CTA_N / 1
               : CTA_M == 64  ? CTA_N / 2
               : CTA_M == 32  ? CTA_N / 4
                              : 0;

  for (int mask_iter = 0; mask_iter < int(CTA_N / step_q); ++mask_iter) {
    for (int s_iter = 0; s_iter < FLT_S; s_iter += 1) {
      column_zero_masks[s_iter].start_count_[mask_iter] = start_count;
      column_zero_masks[s_iter].first_span_             |= first_span << mask_iter;
    }
    cta_q += step_q;
  }
  return column_zero_masks;
}
'''


def _layout(body: str) -> list[tuple[str, int, int]]:
    return [(f.name, f.lo, f.bits) for f in z.struct_fields(body)]


def test_bitfields_pack_in_declaration_order_after_the_byte_array():
    body = "uint8_t sc [2]; uint32_t a : 4, : 3, b : 1, c : 8;"
    assert _layout(body) == [("sc[0]", 0, 8), ("sc[1]", 8, 8), ("a", 16, 4), ("", 20, 3), ("b", 23, 1), ("c", 24, 8)]
    rows = z.bit_rows(z.table_fields(z.struct_fields(body)))
    assert rows == tuple((k, k) for k in range(32))


def test_a_padding_change_moves_the_later_fields():
    assert _layout("uint32_t a : 4, : 5, b : 1, c : 8;") == [("a", 0, 4), ("", 4, 5), ("b", 9, 1), ("c", 10, 8)]
    # a zero-width field ends the unit; a field that would cross a unit starts the next one
    assert _layout("uint32_t a : 4, : 0, b : 1;") == [("a", 0, 4), ("b", 32, 1)]
    assert _layout("uint8_t a : 6, b : 4;") == [("a", 0, 6), ("b", 8, 4)]
    # a plain member after bit-fields starts at its type's next boundary
    assert _layout("uint32_t a : 4; uint16_t h;") == [("a", 0, 4), ("h", 16, 16)]


def test_trailing_padding_is_not_a_field_of_the_table():
    fields = z.struct_fields("uint32_t a : 4, : 3, b : 1, : 24;")
    assert [(f.name, f.lo) for f in z.table_fields(fields)] == [("a", 0), ("", 4), ("b", 7)]


@pytest.mark.parametrize("body, why", [
    ("float x;", "fixed-width integer type"),
    ("uint32_t a : 40;", "a 40-bit field"),
    ("uint32_t a : W;", "no decimal width"),
    ("uint32_t *p;", "no declarator"),
])
def test_outside_the_grammar_is_refused(body, why):
    with pytest.raises(Refused, match=why):
        z.struct_fields(body)


@functools.cache
def _maps() -> tuple:
    return tuple(api.map_layouts(api.load(SPECS)))


def _rows(tmp_path, text: str) -> list:
    f = tmp_path / z.HEADER
    f.parent.mkdir(parents=True, exist_ok=True)
    f.write_text(text, encoding="utf-8")
    return conform_rows(z.zero_column_items(list(_maps()), tmp_path), 30.0)


def _by_spec(rows: list) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for r in rows:
        out.setdefault(r.spec, set()).add(r.kind)
    return out


def test_the_header_states_the_fields_and_the_coverage(tmp_path):
    rows = _rows(tmp_path, HEADER)
    assert _by_spec(rows) == {z.FIELDS_SPEC: {"agree"}, **{s: {"agree"} for s in z.COVERAGE_SPECS.values()}}
    fields = [r for r in rows if r.spec == z.FIELDS_SPEC]
    assert [(r.header, r.line) for r in fields] == [(z.HEADER, 2)]
    assert {r.line for r in rows if r.spec == z.COVERAGE_SPECS[64]} == {22}
    assert len([r for r in rows if r.spec == z.COVERAGE_SPECS[32]]) == 5        # one row per N


@pytest.mark.parametrize("old, new, spec, kind, why", [
    ("                          : 3,  //", "                          : 2,  //", z.FIELDS_SPEC, "differ", ""),
    ("nzm_         : 1,", "nzm_         : 1, : 0,", z.FIELDS_SPEC, "differ", ""),
    ("CTA_M == 64  ? CTA_N / 2", "CTA_M == 64  ? CTA_N / 4", z.COVERAGE_SPECS[64], "differ", ""),
    ("               : CTA_M == 32  ? CTA_N / 4\n", "", z.COVERAGE_SPECS[32], "malformed", "no case CTA_M == 32"),
    ("    cta_q += step_q;\n", "", z.COVERAGE_SPECS[128], "malformed", "cta_q"),
    ("uint8_t  start_count_ [4];", "uint8_t  start_count_ [N];", z.FIELDS_SPEC, "malformed", "no decimal"),
])
def test_a_changed_header_differs_or_is_refused(tmp_path, old, new, spec, kind, why):
    assert HEADER.count(old) == 1
    rows = [r for r in _rows(tmp_path, HEADER.replace(old, new)) if r.spec == spec]
    assert rows and {r.kind for r in rows} == {kind} and all(why in r.detail for r in rows)


def test_no_header_no_rows(tmp_path):
    assert z.zero_column_items(list(_maps()), tmp_path) == []


def test_installed_cute_header_agrees_with_the_catalog():
    from verify.checks.references.cute import installed_headers
    root = installed_headers()
    if root is None or not (root / z.HEADER).is_file():
        pytest.skip(f"no nvidia-cutlass wheel with {z.HEADER} installed (pip install 'ptx-layout-verify[refs]')")
    rows = conform_rows(z.zero_column_items(list(_maps()), root), 30.0)
    assert _by_spec(rows) == {z.FIELDS_SPEC: {"agree"}, **{s: {"agree"} for s in z.COVERAGE_SPECS.values()}}
    fields = next(r for r in rows if r.spec == z.FIELDS_SPEC)
    assert "nzm_ 39-39" in fields.layout and "shift_ 56-61" in fields.layout
