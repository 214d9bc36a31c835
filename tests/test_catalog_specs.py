"""Issue 9: the catalog beyond mma (wgmma, wgmma.sp, ldmatrix, stmatrix, movmatrix, tcgen05.ld/st, wmma,
block-scale selectors): every layout proved by both engines or refuted exactly where its spec records a
doc erratum; families proved for every parameter value; unspecified layouts (wmma) by counts only."""
from __future__ import annotations

import dataclasses
import functools

import numpy as np
import pytest

from verify import api
from verify.catalog.spec import load_spec_text
from verify.checks.equivalence import same_map as same_family_map
from verify.checks.family import NOT_APPLICABLE, check_any
from verify.errors import SpecError
from verify.formula import parse_formula

from conftest import SPECS
from verify.layout.model import cells_of

NEW = ("wgmma", "wgmma.sp", "ldmatrix", "stmatrix", "movmatrix", "wmma", "tcgen05.ld", "tcgen05.st",
       "mma.block_scale", "tcgen05.mma")
BIJECTION = ("in_range", "injective", "surjective")


@functools.cache
def catalog():
    return tuple(lay for lay in api.layouts(api.load([SPECS])) if lay.instruction in NEW)


@functools.cache
def result(lid: str):
    return check_any(next(x for x in catalog() if x.id == lid))


def test_the_catalog_covers_every_instruction_and_shape() -> None:
    ids = {x.id for x in catalog()}
    for lid in ("wgmma.m64nNk16.A.f16_bf16", "wgmma.m64nNk16.D.f16", "wgmma.m64nNk16.D.f32", "wgmma.m64nNk8.A.tf32",
                "wgmma.m64nNk32.A.u8_s8", "wgmma.m64nNk32.A.e4m3_e5m2", "wgmma.m64nNk32.D.s32",
                "wgmma.m64nNk256.A.b1", "wgmma.m64nNk256.D.s32", "wgmma.sp.m64nNk32.A.f16_bf16",
                "wgmma.sp.m64nNk16.A.tf32", "wgmma.sp.m64nNk64.A.u8_s8", "wgmma.sp.m64nNk64.A.e4m3_e5m2",
                "ldmatrix.m8n8.R.b16", "ldmatrix.m8n8.R.b16.trans", "ldmatrix.m16n16.R.b8_b8x16.trans",
                "ldmatrix.m8n16.R.b8x16", "stmatrix.m8n8.R.b16", "stmatrix.m8n8.R.b16.trans", "stmatrix.m16n8.R.b8.trans",
                "movmatrix.m8n8.A.b16", "movmatrix.m8n8.D.b16", "mma.block_scale.m16n8k32.SFA.ue8m0",
                "mma.block_scale.m16n8k64.SFB.ue4m3", "tcgen05.mma.m1n4.SFA.ue8m0.2x", "wmma.m16n16k16.A.f16",
                "wmma.m8n8k4.C.f64", "wmma.m8n8k128.A.b1"):
        assert lid in ids, lid
    for op in ("ld", "st"):
        for shape in ("32x32b", "16x64b", "16x128b", "16x256b", "16x32bx2"):
            assert f"tcgen05.{op}.{shape}.R.b32" in ids
    assert len(catalog()) >= 100


@pytest.mark.parametrize("lid", [x.id for x in catalog()])
def test_every_new_layout_is_as_its_spec_expects(lid: str) -> None:
    """Both engines agree on every bijection check; a refuted check is exactly an expected erratum."""
    lay = next(x for x in catalog() if x.id == lid)
    res = result(lid)
    for c in res.checks:
        assert c.as_expected, (lid, c.check, c.status, c.expected, c.message)
        if c.check in BIJECTION:
            if lay.unspecified:
                assert c.status == NOT_APPLICABLE and c.engines == {}  # never reported as proved
            else:
                assert c.engines["z3"] == c.engines["enumeration"] == c.status, (lid, c.check, c.engines)
    if lay.corrected:  # a correction is a bijection (where a layout is stated at all)
        assert all(res.get(c).status in ("proved", NOT_APPLICABLE) for c in BIJECTION)


def test_recorded_errata_are_the_expected_ones() -> None:
    refuted = {(x.id, c.check) for x in catalog() for c in result(x.id).checks if c.status == "refuted"}
    d_lists = {(x.id, c) for x in catalog() if x.operand == "D" and x.instruction.startswith("wgmma") and not x.corrected
               for c in ("count", "elements")}
    counts = {("tcgen05.ld.16x128b.R.b32", "count"), ("tcgen05.ld.16x128b.R.b32", "surjective"),
              ("tcgen05.st.16x128b.R.b32", "count"), ("tcgen05.st.16x128b.R.b32", "surjective"),
              ("tcgen05.ld.16x256b.R.b32", "count"), ("tcgen05.ld.16x256b.R.b32", "surjective"),
              ("tcgen05.st.16x256b.R.b32", "count"), ("tcgen05.st.16x256b.R.b32", "surjective"),
              ("ldmatrix.m16n16.R.b8_b8x16.trans", "count"), ("ldmatrix.m16n16.R.b8_b8x16.trans", "surjective"),
              ("wmma.m8n8k4.C.f64", "count")}
    assert refuted == d_lists | counts


def test_family_witness_names_the_parameter_value() -> None:
    """The doc's generic D list degenerates at N = 8 only: the witness is the smallest N."""
    c = result("wgmma.m64nNk16.D.f32").get("elements")
    assert c.counterexample["params"] == {"N": 8} and "N = 8" in c.message
    t = result("tcgen05.ld.16x128b.R.b32").get("surjective")
    assert t.counterexample["params"] == {"NUM": 1}
    assert t.engines["z3"] == t.engines["enumeration"] == "refuted"


def test_families_are_proved_for_every_value_by_one_symbolic_query() -> None:
    d = next(x for x in catalog() if x.id == "wgmma.m64nNk32.D.s32@corrected")
    assert [p.values for p in d.domain.params] == [(8, 16, 24, 32) + tuple(range(48, 257, 16))]
    res = check_any(d)
    assert res.get("in_range").engines == {"z3": "proved", "enumeration": "proved"}
    assert res.get("surjective").engines["z3_method"] == "pigeonhole"
    assert res.get("count").engines["polynomial"] == "proved"


def test_a_wrong_family_is_refuted_at_its_first_failing_value() -> None:
    """Columns wrap at 128: injective fails from N = 136 on, and both engines name N = 136."""
    d = next(x for x in catalog() if x.id == "wgmma.m64nNk16.D.f32@corrected")
    text = d.provenance.formula_text.replace("col = (8 * (i >> 2))", "col = ((8 * (i >> 2)) % 128)")
    bad = d.with_formula(parse_formula(text, "d", ("N",)))
    inj = check_any(bad).get("injective")
    assert inj.status == "refuted" and inj.engines == {"z3": "refuted", "enumeration": "refuted"}
    assert inj.counterexample["params"] == {"N": 136}


def test_wgmma_a_per_warp_is_the_mma_a_layout() -> None:
    """Warp w's part of each A-in-registers layout is the mma m16n8kK A layout with rows + 16 w."""
    mma = {x.id: x for x in api.layouts(api.load([SPECS]))}
    for wg, m in (("wgmma.m64nNk16.A.f16_bf16", "mma.m16n8k16.A.f16_bf16"), ("wgmma.m64nNk8.A.tf32", "mma.m16n8k8.A.tf32"),
                  ("wgmma.m64nNk32.A.u8_s8", "mma.m16n8k32.A.u8_s8"),
                  ("wgmma.m64nNk256.A.b1", "mma.m16n8k256.A.b1@corrected")):
        a, ref = mma[wg], mma[m]
        got, want = cells_of(a), cells_of(ref)  # every (thread, i) at once
        lane, warp = np.arange(128) % 32, (np.arange(128) >> 5)[:, None]
        assert got.ok.shape == (128, a.n_elements) and got.ok.all() and want.ok.all(), wg
        bad = np.argwhere((got.row != want.row[lane] + 16 * warp) | (got.col != want.col[lane]))
        assert bad.size == 0, (wg, "thread, i", tuple(bad[0]))


def test_wmma_counts_and_replication() -> None:
    f16 = result("wmma.m8n32k16.A.f16")
    assert f16.get("count").status == "proved"
    lay = f16.layout
    assert lay.domain.replication == 4 and lay.regs.count * lay.regs.elements_per_register * 32 == 8 * 16 * 4
    f64 = result("wmma.m8n8k4.C.f64").get("count")
    assert f64.status == "refuted" and f64.counterexample["total"] == 32 and f64.counterexample["matrix"] == 64
    assert result("wmma.m8n8k4.C.f64@corrected").get("count").status == "proved"
    # a replication the counts do not give is refuted
    wrong = dataclasses.replace(lay, domain=dataclasses.replace(lay.domain, replication=2))
    assert check_any(wrong).get("count").status == "refuted"


def test_partial_selector_layouts_are_bijections_for_every_selector() -> None:
    sfa = result("mma.block_scale.m16n8k32.SFA.ue8m0")
    assert all(sfa.get(c).status == "proved" for c in BIJECTION)
    lay = sfa.layout
    assert [p.name for p in lay.domain.params] == ["THREAD_ID_A", "BYTE_ID_A"]
    # the doc's thread-pair without the row offset of the second lane: two lanes on one row
    text = lay.provenance.formula_text.replace(" + (8 * (%laneid % 2))", "")
    bad = check_any(lay.with_formula(parse_formula(text, "sfa", ("THREAD_ID_A", "BYTE_ID_A"))))
    inj = bad.get("injective")
    assert inj.status == "refuted" and inj.engines == {"z3": "refuted", "enumeration": "refuted"}
    assert inj.counterexample["params"] == {"THREAD_ID_A": 0, "BYTE_ID_A": 0}
    # an invalid byte-id (2X at byte 3) leaves a scale factor out of the word: a hole
    two = next(x for x in catalog() if x.id == "mma.block_scale.m16n8k64.SFA.ue8m0")
    p = two.domain.params[1]
    wide = dataclasses.replace(two, domain=dataclasses.replace(two.domain, params=(two.domain.params[0],
                                                                                   dataclasses.replace(p, values=(0, 3)))))
    sur = check_any(wide).get("surjective")
    assert sur.status == "refuted" and sur.counterexample["params"]["BYTE_ID_A"] == 3


def test_same_family_map_both_engines() -> None:
    d = next(x for x in catalog() if x.id == "wgmma.m64nNk8.D.f32@corrected")
    assert same_family_map(d, d).status == "proved"
    text = d.provenance.formula_text.replace("(i & 0x1)", "((i + (N / 128)) & 0x1)")
    other = d.with_formula(parse_formula(text, "d", ("N",)))
    r = same_family_map(d, other)
    assert r.status == "refuted" and r.engines == {"z3": "refuted", "enumeration": "refuted"}
    assert r.counterexample["params"] == {"N": 128} and r.counterexample["lane"] == 0


def test_instances_keep_shape_text_and_dims() -> None:
    lay = next(x for x in catalog() if x.id == "tcgen05.ld.16x32bx2.R.b32")
    inst = lay.instance(NUM=4)
    assert str(inst.shape) == "16x32bx2" and inst.codomain.dims == ("lane", "column")
    assert (inst.rows, inst.cols, inst.n_elements) == (16, 8, 4)
    assert lay.representative().params_bound == (("NUM", 1),) and lay.max_elements == 128


SPEC = '''schema = 1
[source]
section = "9.9.9"
[instruction]
name = "wmma"
shape = "m16n16k16"
[[fragment]]
operand = "A"
types = ["f16"]
registers = 8
register_type = "f16x2"
elements_per_register = 2
'''


def test_spec_format_new_fields_are_validated() -> None:
    lay = load_spec_text(SPEC + 'layout = "unspecified"\nreplication = 2\n').layouts[0]
    assert lay.unspecified and lay.domain.replication == 2
    for extra, words in (('layout = "unspecified"\nformula = "row = 0"\n', "no formula"),
                         ('formula = """row = 0\ncol = 0"""\nreplication = 2\n', "unspecified layouts"),
                         ('layout = "picture"\n', "'layout' must be"),
                         ('layout = "unspecified"\npartial = 3\n', "'partial' must be"),
                         ('layout = "unspecified"\ndims = ["lane"]\n', "'dims' must name"),
                         ('layout = "unspecified"\nvariant = "sideways"\n', "'variant' must be")):
        with pytest.raises(SpecError, match=words):
            load_spec_text(SPEC + extra)
    with pytest.raises(SpecError, match="parameter combinations"):
        load_spec_text(SPEC.replace('shape = "m16n16k16"', 'shape = "m16nNk16"\nparams = { N = { from = 1, to = 100, '
                                    'step = 1 }, M = { from = 1, to = 100, step = 1 } }'))
    with pytest.raises(SpecError, match="from <= to"):
        load_spec_text(SPEC.replace('shape = "m16n16k16"', 'shape = "m16nNk16"\nparams = { N = { from = -1, to = 8, step = 1 } }'))


def test_tid_names_the_thread_of_the_domain() -> None:
    f = parse_formula("row = %tid >> 5\ncol = %laneid % 32\n", "a")
    g = parse_formula("row = %laneid >> 5\ncol = %tid % 32\n", "a")
    assert f == g
