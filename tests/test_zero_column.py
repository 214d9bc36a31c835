"""The zero-column mask descriptor's model (verify/layout/zero_column.py), one literal test per function: the
page's worked examples (PTX ISA 9.1, 9.7.16.4.3; their masks are written here as the page writes them, most
significant bit first, the page's leading "..." left out) and the two readings of Table 45's spans."""
import pytest

from verify.layout.zero_column import ZeroColumnMask, decode, mask, max_shift, sub_mask_bit, sub_mask_text


def Z(sc, fs, nzm, skip, use, shift):
    return ZeroColumnMask(tuple(sc), tuple(fs), nzm, skip, use, shift)


def test_example_1_no_mask():
    assert mask(Z((0, 0, 0, 0), (0, 0, 0, 0), 0, 4, 3, 0), 128, 64) == (0,) * 64


def test_example_2_m128():
    assert sub_mask_text(Z((0, 0, 0, 0), (0, 0, 0, 0), 1, 2, 3, 0), 128, 14, 0).endswith("1110000" "1110000")


def test_example_3_m64():
    d = Z((0, 0, 0, 0), (1, 0, 0, 0), 1, 2, 3, 0)
    assert sub_mask_text(d, 64, 36, 0).endswith("111" "0000" "111" "0000" "111")
    assert sub_mask_text(d, 64, 36, 1).endswith("0000" "111" "0000" "111" "0000")


def test_example_4_m32_start_counts():
    d = Z((0, 1, 2, 1), (1, 1, 0, 0), 1, 2, 3, 2)
    assert sub_mask_text(d, 32, 56, 0).endswith("0000" "111" "0000" "111")
    assert sub_mask_text(d, 32, 56, 1).endswith("0000" "111" "0000" "11")
    assert sub_mask_text(d, 32, 56, 2).endswith("111" "0000" "111" "00")
    assert sub_mask_text(d, 32, 56, 3).endswith("111" "0000" "111" "000")


def test_the_table_reading_is_not_the_examples():
    d = Z((0, 0, 0, 0), (0, 0, 0, 0), 1, 2, 3, 0)
    assert sub_mask_text(d, 128, 14, 0, "table") == "0b" "1111" "000" "1111" "000"     # runs of 0s 3 long, of 1s 4
    assert sub_mask_text(d, 128, 14, 0) == "0b" "111" "0000" "111" "0000"                # the page's: 4 and 3


def test_sub_mask_bit_counts_from_the_start_count():
    d = Z((3, 0, 0, 0), (1, 0, 0, 0), 1, 0, 0, 0)        # 1 0 1 0 ... with 3 bits dropped: 0 1 0 1 ...
    assert [sub_mask_bit(d, 0, j) for j in range(4)] == [0, 1, 0, 1]


def test_decode_encode_round_trip_and_fields():
    d = Z((0, 1, 2, 1), (1, 1, 0, 0), 1, 2, 3, 2)
    v = d.encode()
    assert v == 0x02_03_02_83_01_02_01_00      # shift 2, use 3, skip 2, nzm | fs = 0b0011, sc3..sc0 = 1, 2, 1, 0
    assert decode(v) == d and (v >> 39) & 1 == 1 and (v >> 56) == 2


@pytest.mark.parametrize("value, words", [(1 << 36, "reserved bits 36-38"), (1 << 62, "bits 62-63"),
                                          (1 << 64, "64-bit value")])
def test_decode_refuses(value, words):
    with pytest.raises(ValueError, match=words):
        decode(value)


def test_mask_refuses_what_the_page_does_not_state():
    d = Z((0, 0, 0, 0), (0, 0, 0, 0), 1, 0, 0, 17)
    assert max_shift(32) == 16 and max_shift(64) == 32
    with pytest.raises(ValueError, match="more than the 16"):
        mask(d, 32, 64)
    assert len(mask(d, 64, 64)) == 64
    with pytest.raises(ValueError, match="M = 256"):
        mask(d, 256, 64)
    with pytest.raises(ValueError, match="sub-masks"):
        mask(d, 32, 30)


# ----------------------------------------------------------------------------- the page read and judged (9.1)

from pathlib import Path  # noqa: E402

from verify.catalog import shared_pages  # noqa: E402
from verify.catalog.sections import thaw  # noqa: E402
from verify.checks import maps  # noqa: E402
from verify.layout.zero_column import shown_map, sub_mask_map  # noqa: E402

PAGE = Path(__file__).resolve().parents[1].parent / "shared" / "ptx-isa-9.1" / "9.7.16.4-matrix-descriptors.md"
if not PAGE.exists():
    PAGE = Path("/work/shared/ptx-isa-9.1/9.7.16.4-matrix-descriptors.md")
needs_page = pytest.mark.skipif(not PAGE.exists(), reason="PTX ISA 9.1's descriptor page is not here")


def _read(tmp_path, old="", new=""):
    text = PAGE.read_text(encoding="utf-8")
    assert old in text
    page = tmp_path / PAGE.name
    page.write_text(text.replace(old, new, 1), encoding="utf-8")
    specs, findings = shared_pages.read([page])
    return {m.id for s in specs for m in s.maps}, [f for f in findings if "zero-column" in f.kind]


def test_the_table_reading_differs_from_example_2_at_bit_3_by_both_engines():
    d = Z((0, 0, 0, 0), (0, 0, 0, 0), 1, 2, 3, 0)
    shown = tuple(int(c) for c in reversed("1110000" "1110000"))
    both = {"z3": "refuted", "enumeration": "refuted"}
    table = maps.same(shown_map(shown), sub_mask_map(d, 0, len(shown), "table"))
    assert (table.status, dict(table.engines), dict(table.counterexample.point)) == ("refuted", both, {"j": 3})
    ours = maps.same(shown_map(shown), sub_mask_map(d, 0, len(shown)))
    assert ours.status == "proved" and dict(ours.engines) == {"z3": "proved", "enumeration": "proved"}
    flipped = shown[:5] + (1 - shown[5],) + shown[6:]
    assert dict(maps.same(shown_map(flipped), sub_mask_map(d, 0, len(shown))).counterexample.point) == {"j": 5}


def test_the_sub_mask_map_is_the_model_s_rule_at_every_bit():
    for d in (Z((0, 1, 2, 1), (1, 1, 0, 0), 1, 2, 3, 2), Z((5, 0, 0, 0), (0, 0, 0, 0), 1, 0, 6, 0),
              Z((0, 0, 0, 0), (1, 0, 0, 0), 0, 2, 3, 0)):
        for i in range(4):
            for reading in ("examples", "table"):
                m = sub_mask_map(d, i, 24, reading)
                assert [m.at({"j": j}, {})["bit"] for j in range(24)] == \
                    [sub_mask_bit(d, i, j, reading) for j in range(24)]


@needs_page
def test_the_page_s_span_erratum_is_one_finding_at_the_skip_span_row(tmp_path):
    ids, found = _read(tmp_path)
    assert {"tcgen05.zero_column.fields", "tcgen05.zero_column.coverage.m128", "tcgen05.zero_column.coverage.m64",
            "tcgen05.zero_column.coverage.m32"} <= ids
    assert [(f.kind, f.line, f.column) for f in found] == [("zero-column-spans", 137, 25)]
    w = dict(found[0].witness)
    assert (w["example"], w["mask"], w["bit"], w["table"], w["page"], w["line"]) == (2, 0, 3, 1, 0, 181)
    assert thaw(w["engines"]) == {"z3": "refuted", "enumeration": "refuted"}
    assert "mask0 bit 3 is 1; the page shows 0 (line 181)" in found[0].message


@needs_page
def test_a_mutated_example_is_reported_at_its_output_line(tmp_path):
    _, found = _read(tmp_path, "Output mask2: 0b … 111 0000 111 00", "Output mask2: 0b … 111 0000 111 01")
    ex = [f for f in found if f.kind == "zero-column-example"]
    assert [(f.line, dict(f.witness)["mask"], dict(f.witness)["bit"]) for f in ex] == [(207, 2, 0)]
    assert "example 4 (M = 32): mask2 bit 0 is 1 on the page, but the descriptor" in ex[0].message


@needs_page
def test_a_page_with_the_spans_words_swapped_has_no_span_erratum(tmp_path):
    text = PAGE.read_text(encoding="utf-8")
    page = tmp_path / PAGE.name
    page.write_text(text.replace("where B matrix is used) - 1", "where 0s are used) - 1  ", 1)
                    .replace("where 0s ar used) - 1", "where B matrix is used) - 1", 1), encoding="utf-8")
    _, findings = shared_pages.read([page])
    assert not [f for f in findings if "zero-column" in f.kind]
