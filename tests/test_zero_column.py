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
