"""Spec text is untrusted: whatever arrives, the loader answers with a SpecError or a spec, nothing else."""
from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from verify.formula import FormulaError, parse_formula
from verify.catalog.spec import SpecError, load_spec_text

from conftest import SPECS

BASE = (SPECS / "mma.m8n8k16.toml").read_text()
PIECES = ["row", "col", "=", " ", "\n", "%laneid", "i", "ai", "a0", "for", "where", "if", "otherwise", "and",
          "(", ")", "{", "}", "[", "]", ",", "..", "...", "0", "7", "0x1F", "0b10", "<", "<=", "==", "||", "&&",
          "+", "-", "*", "/", "%", ">>", "<<", "&", "|", "^", "groupID", "Where", "firstcol", "//", "x"]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(PIECES), max_size=40))
def test_formula_parser_only_raises_formula_errors(pieces):
    text = "".join(pieces)
    try:
        parse_formula(text, "a")
    except FormulaError as e:
        assert e.line >= 1 and e.col >= 1 and e.message


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=60))
def test_formula_parser_on_arbitrary_text(text):
    try:
        parse_formula(text, "a")
    except FormulaError as e:
        assert e.line >= 1 and e.col >= 1


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, len(BASE) - 1), st.text(max_size=12))
def test_spec_loader_only_raises_spec_errors(at, insert):
    text = BASE[:at] + insert + BASE[at:]
    try:
        load_spec_text(text, "fuzz.toml")
    except SpecError as e:
        assert e.line >= 1 and e.col >= 1 and e.one_line().startswith("fuzz.toml:")
