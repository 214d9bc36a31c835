"""Spec model: element lists, corrected layouts, lane groups, known syntax errata."""
from __future__ import annotations

import pytest

from verify import api
from verify.checks.fragment import check_elements
from verify.checks.family import check_any as check_layout
from verify.catalog.spec import SpecError, load_spec_text, parse_element_list

from conftest import SPECS

BASE = (SPECS / "mma.m8n8k16.toml").read_text()


def test_ellipsis_element_lists_expand():
    assert len(parse_element_list("a0, a1, \u2026, a30, a31")) == 32
    assert len(parse_element_list("b0, b1, ..., b7")) == 8


def test_ellipsis_list_passes_elements_check_and_gap_fails():
    good = BASE.replace('elements = "a0, a1, a2, a3"', 'elements = "a0, a1, ..., a3"')
    lay = load_spec_text(good).layouts[0]
    assert check_elements(lay).status == "proved"
    bad = BASE.replace('elements = "a0, a1, a2, a3"', 'elements = "a0, a1, a3, a4"')
    c = check_elements(load_spec_text(bad).layouts[0])
    assert c.status == "refuted" and c.counterexample["position"] == 2


def test_corrected_layout_is_checked_separately():
    text = BASE.replace('elements = "a0, a1, a2, a3"',
                        'elements = "a0, a1, a2, a3"\nexpect = { packing = "refuted" }\n'
                        'erratum = "wrong register"\nregister_type_note = 1', 1)
    with pytest.raises(SpecError, match="unknown field 'register_type_note'"):
        load_spec_text(text)
    text = BASE.replace('register_type = "b32"\nelements_per_register = 4\nelements = "a0, a1, a2, a3"',
                        'register_type = "b16"\nelements_per_register = 4\nelements = "a0, a1, a2, a3"\n'
                        'expect = { packing = "refuted" }\nerratum = "a .b16 holds two"\n'
                        'corrected = { register_type = "b32" }', 1)
    spec = load_spec_text(text)
    ids = [lay.id for lay in spec.layouts]
    assert ids[:2] == ["mma.m8n8k16.A.u8_s8", "mma.m8n8k16.A.u8_s8@corrected"]
    doc, fix = spec.layouts[:2]
    assert doc.correction is fix and fix.correction is None      # the doc layout holds its correction
    assert (doc.corrected, fix.corrected, fix.corrects, fix.doc_id, doc.doc_id) == (
        False, True, doc.id, doc.id, doc.id)
    assert (doc.regs.type, fix.regs.type) == ("b16", "b32")
    assert check_layout(spec.layouts[0]).as_expected
    assert check_layout(spec.layouts[1]).as_expected


def test_unparseable_doc_formula_needs_expect_and_correction():
    broken = BASE.replace("row = groupID\n\ncol =  (", "row = (groupID\n\ncol =  (", 1)
    with pytest.raises(SpecError, match="expected '\\)'"):
        load_spec_text(broken)
    recorded = broken.replace('figure = "mma-8816-A-i8"', 'figure = "mma-8816-A-i8"\nexpect = { syntax = "refuted" }\n'
                              'erratum = "unbalanced"\ncorrected = { formula = "row = %laneid >> 2\\ncol = (%laneid % 4) * 4 + i" }', 1)
    spec = load_spec_text(recorded, "x.toml")
    assert [lay.id for lay in spec.layouts][0] == "mma.m8n8k16.A.u8_s8@corrected"
    assert spec.layouts[0].corrects == "mma.m8n8k16.A.u8_s8"  # a correction with no doc layout to hold it
    assert spec.syntax_findings[0].message.startswith("expected ')'")


def test_group_formula_must_use_lane_only():
    text = (SPECS / "mma.m8n8k4.f16.toml").read_text().replace('group = "(%laneid >> 2) % 4"', 'group = "(i >> 2) % 4"')
    with pytest.raises(SpecError, match="cannot depend on i"):
        load_spec_text(text)


def test_lane_group_mutation_is_caught():
    """m8n8k4 with the wrong lane groups: lanes of one group no longer cover the local matrix."""
    text = (SPECS / "mma.m8n8k4.f16.toml").read_text().replace('group = "(%laneid >> 2) % 4"', 'group = "%laneid % 4"')
    res = check_layout(api.layout([load_spec_text(text)], "mma.m8n8k4.A.f16.row"))
    assert not res.bijective
    assert res.get("injective").counterexample["first"]["lane"] == 0


def test_a_family_member_holds_the_member_of_its_correction():
    """A family's instance holds its correction's instance at the same parameters (what a probe or a reference
    compares at one ``N``, one ``NUM``), for fragments and for map layouts."""
    from verify.catalog.spec import load_spec_file
    from verify.layout.corrections import in_use
    spec = load_spec_file(SPECS / "wgmma.m64nNk16.toml")
    doc = next(x for x in spec.layouts if x.id == "wgmma.m64nNk16.D.f16")
    assert doc.correction is not None and doc.correction.is_family
    member = doc.instance(N=16)
    assert member.correction is doc.correction.instance(N=16) and in_use(member) is member.correction
    assert member.correction.corrects == doc.id and isinstance(member.correction.regs.count, int)
    shared = next(s for s in (load_spec_file(p) for p in sorted(SPECS.glob("wgmma.shared*.toml")))
                  if any(m.id == "wgmma.shared.K.128B" for m in s.maps))
    m = next(x for x in shared.maps if x.id == "wgmma.shared.K.128B")
    assert m.correction is not None and m.correction.corrects == m.id
    env = {p.name: p.values[0] for p in m.params}
    one = m.instance(**env)
    assert one.correction is not None and not one.correction.is_family and one.correction.id == m.correction.id
