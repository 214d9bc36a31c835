"""The formula language: every notation of the seeds parses; bad text fails with a position."""
from __future__ import annotations

import pytest

from verify.formula import FormulaError, InSet, parse_formula, render, tokenize
from verify.engines.oracle import evaluate

GROUP = "groupID = %laneid >> 2\nthreadID_in_group = %laneid % 4\n"


def cell(text: str, lane: int, i: int, prefix: str = "a"):
    f = parse_formula(text, prefix)
    return evaluate(f, "row", lane, i), evaluate(f, "col", lane, i)


def test_piecewise_with_or_and_otherwise():
    f = GROUP + ("row = groupID for ai where 0 <= i < 2 || 4 <= i < 6\n"
                 "      groupID + 8 Otherwise\n"
                 "col = (threadID_in_group * 2) + (i & 0x1) for ai where i < 4\n"
                 "      (threadID_in_group * 2) + (i & 0x1) + 8 for ai where i >= 4\n")
    assert cell(f, 5, 3) == (9, 3)
    assert cell(f, 5, 4) == (1, 10)
    assert cell(f, 31, 7) == (15, 15)


def test_element_names_and_sets():
    f = GROUP + "row = groupID for a0 and a2\n groupID + 8 for a1 and a3\ncol = threadID_in_group for ai where i = {0,..,3}\n"
    assert [cell(f, 6, i)[0] for i in range(4)] == [1, 9, 1, 9]
    f2 = "row = 0\ncol = i for ai where i = {0, ...,63}\n"
    assert cell(f2, 0, 63) == (0, 63) and cell(f2, 0, 64) == (0, None)


def test_lane_conditions_and_where_helper():
    f = ("row =     X           if %laneid < 16\n        X + 4         otherwise\n\n"
         "          where X = (%laneid & 0b1) + (i & 0b10)  for ci where i = {0,..,7}\n\n"
         "col = (i & 0b100) + (%laneid & 0b10) + (i & 0b1)  for ci where i = {0,..,7}\n")
    assert cell(f, 17, 6, "c") == (1 + 2 + 4, 4 + 0 + 0)
    assert cell(f, 3, 5, "c") == (1, 4 + 2 + 1)


def test_lane_condition_combined_with_element_selector():
    f = ("row =        i % 4            for ai  where i = {0,..,3}   if %laneid < 16\n"
         "            (i % 4) + 4       for ai  where i = {0,..,3}   otherwise\n"
         "col =        %laneid % 4\n")
    assert cell(f, 17, 2) == (6, 1)
    assert cell(f, 2, 4) == (None, 2)  # a4 is outside i = {0,..,3}


def test_modulo_equality_and_capital_for():
    f = GROUP + ("row = groupID for ai where i % 2 = 0\n groupID + 8 Otherwise\n"
                 "col = threadID_in_group * 4 For ai where i < 4\n (threadID_in_group * 4) + 16 for ai where i >= 4\n")
    assert cell(f, 4, 1) == (9, 0)
    assert cell(f, 4, 4) == (1, 16)


def test_sparse_column_range():
    f = GROUP + ("row = groupID for ai where 0 <= i < 4\n groupID + 8 Otherwise\n"
                 "col = [firstcol ... lastcol]  // As per the mapping\n   // of non-zero elements\n"
                 "Where\nfirstcol = threadID_in_group * 8\nlastcol  = firstcol + 7\n")
    assert cell(f, 5, 0) == (1, (8, 15))


def test_hex_binary_and_precedence():
    f = "row = 1 + 2 * 3 - (0x10 >> 2) | 0b1\ncol = 7 & 3 ^ 1\n"
    assert cell(f, 0, 0) == ((1 + 2 * 3 - (0x10 >> 2)) | 0b1, (7 & 3) ^ 1)


def test_operators_group_by_precedence_and_from_the_left():
    f = parse_formula("row = 1 | 2 ^ 3 & 4 << 5 + 6 * 7 - 8 / 2 % 3\ncol = 9 - 4 - 2 << 1 << 1\n", "c")
    assert render(f.get("row")) == "row = (1 | (2 ^ (3 & (4 << ((5 + (6 * 7)) - ((8 / 2) % 3))))))"
    assert render(f.get("col")) == "col = ((((9 - 4) - 2) << 1) << 1)"


def test_c_division_and_remainder_semantics():
    f = "row = (0 - 7) / 2\ncol = (0 - 7) % 2\n"
    assert cell(f, 0, 0) == (-3, -1)


def test_for_numbered_elements_becomes_a_set():
    f = parse_formula("row = 0 for a0 and a2\ncol = 0\n", "a")
    assert isinstance(f.get("row").cases[0].cond, InSet)
    assert f.get("row").cases[0].cond.values == (0, 2)


@pytest.mark.parametrize("text, line, col, words", [
    ("row = (i * 2\ncol = 0\n", 1, 13, "expected ')'"),
    ("row = 0\ncol = (i * 2) - 2 + (threadID_in_group Otherwise\n", 2, 40, "expected ')'"),
    ("row = groupID\ncol = 0\n", 1, 7, "unknown identifier 'groupID'"),
    ("row = 0\n", 1, 1, "no 'col'"),
    ("row = 0\ncol = __import__(\"os\").system(\"x\")\n", 2, 18, "unexpected character"),
    ("row = 0\ncol = system(1)\n", 2, 7, "function call"),
    ("row = 0\ncol = i $ 2\n", 2, 9, "unexpected character"),
    ("row = 99999999999\ncol = 0\n", 1, 7, "too large"),
    ("row = 07\ncol = 0\n", 1, 7, "leading zero"),
    ("row = 0 for bi\ncol = 0\n", 1, 13, "does not belong"),
    ("row = x\nx = row\ncol = 0\n", 2, 5, "refers to itself"),
    ("row = 0\nrow = 1\ncol = 0\n", 2, 1, "defined twice"),
    ("row = 0 for ai where i = {3,..,1}\ncol = 0\n", 1, 33, "empty range"),
    ("row = [0 ... 1]\ncol = 0\n", 1, 7, "only allowed as the value of col"),
])
def test_errors_carry_positions(text, line, col, words):
    with pytest.raises(FormulaError) as e:
        parse_formula(text, "a")
    assert words in e.value.message
    assert (e.value.line, e.value.col) == (line, col), e.value.message


def test_unbalanced_paren_position_matches_doc():
    text = GROUP + "row = 0\ncol = (i * 2) + threadID_in_group for ai where i % 2 = 0\n (i * 2) - 2 + (threadID_in_group Otherwise\n"
    with pytest.raises(FormulaError) as e:
        parse_formula(text, "a")
    assert e.value.line == 5 and "expected ')'" in e.value.message
    assert e.value.text.strip().startswith("(i * 2) - 2")


def test_tokenizer_rejects_python():
    for bad in ["lambda: 0", "a.__class__", "'x'", "`x`", "x; y", "@"]:
        with pytest.raises(FormulaError):
            parse_formula(f"row = {bad}\ncol = 0\n", "a")


def test_render_roundtrip_is_stable():
    f = parse_formula(GROUP + "row = groupID + 8 for ai where i >= 4\ncol = 0\n", "a")
    assert "(groupID + 8)" in render(f.get("row"))
    assert len(tokenize("a >> 2")) == 4
