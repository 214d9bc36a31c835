"""Why a layout has fewer than two references, as the agreement matrix explains it: the same map as one two
references back (``verify.checks.references.equal_maps``), one reference and a reviewed reason no second can
state it (``SINGLE``), or no reference and a reviewed reason (``UNREFERENCED``)."""
from __future__ import annotations

import dataclasses
import re
import functools

from conftest import SPECS

from verify import api
from verify.results.crosscheck import CrosscheckReport, Row
from verify.checks.references import matrix
from verify.checks.references.equal_maps import equal_backed


@functools.cache
def lays() -> dict:
    specs = api.load(SPECS)
    return {x.id: x for x in [*api.layouts(specs), *api.map_layouts(specs)]}


def test_the_same_map_is_paired():
    sp, dense = lays()["mma.sp.m16n8k8.B.tf32"], lays()["mma.m16n8k8.B.tf32"]
    assert equal_backed([sp], [dense]) == {"mma.sp.m16n8k8.B.tf32": "mma.m16n8k8.B.tf32"}


def test_a_different_map_of_the_same_shape_is_not():
    doc, fixed = lays()["tcgen05.ld.16x128b.R.b32"], lays()["tcgen05.ld.16x128b.R.b32@corrected"]
    assert equal_backed([doc], [fixed]) == {}                      # the doc's erratum is another map
    copy = dataclasses.replace(fixed, id="copy")
    assert equal_backed([copy], [fixed, doc]) == {"copy": fixed.id}


def test_families_are_compared_member_by_member():
    k256 = lays()["wgmma.m64nNk256.D.s32@corrected"]
    assert equal_backed([k256], [lays()["wgmma.m64nNk32.D.s32@corrected"]]) == \
        {k256.id: "wgmma.m64nNk32.D.s32@corrected"}
    doc, fixed = lays()["ldmatrix.m16n16.R.b8_b8x16.trans"], lays()["ldmatrix.m16n16.R.b8_b8x16.trans@corrected"]
    assert doc.is_family and doc.params == fixed.params
    assert equal_backed([doc], [fixed]) == {}                       # a member differs (the doc's erratum)


def test_the_same_operand_is_preferred():
    """Two backed layouts with the sparse compressed A's map: the A one is named, not the C one."""
    a = lays()["mma.sp.m16n8k16.A.tf32"]
    cands = [lays()["mma.m16n8k8.A.tf32"]]
    assert equal_backed([a], cands) == {a.id: "mma.m16n8k8.A.tf32"}


def test_the_matrix_explains_and_counts_it():
    ids = ["mma.m16n8k8.B.tf32", "mma.sp.m16n8k8.B.tf32", "mma.m16n8k8.A.tf32"]
    rows = [Row("agree", "T", "B", "h.hpp", 1, "mma.m16n8k8.B.tf32"), Row("agree", "T", "A", "h.hpp", 2,
                                                                         "mma.m16n8k8.A.tf32")]
    reports = {"cute": CrosscheckReport("cute 1", (), tuple(rows), {}, 0.0, "cute"),
               "triton": CrosscheckReport("triton 1", (), (rows[0],), {}, 0.0, "triton")}
    m = matrix.build([lays()[i] for i in ids], reports)
    assert m.origins("mma.sp.m16n8k8.B.tf32") == []                # never counted as a reference's agreement
    assert m.explained("mma.sp.m16n8k8.B.tf32").startswith("the same map as mma.m16n8k8.B.tf32 (proved, both")
    assert m.explained("mma.m16n8k8.A.tf32") == ""                 # one origin, no equal backed layout
    cov = m.coverage()
    assert (cov["two_or_more"], cov["explained_below_two"], cov["explained_by_equal_map"]) == (1, 1, 1)
    entry = next(e for e in m.to_json()["references"]["layouts"] if e["id"] == "mma.sp.m16n8k8.B.tf32")
    assert entry["origins_agreeing"] == [] and "same map as" in entry["explained"]


def test_a_reviewed_single_source_needs_the_one_reference_to_agree():
    """``SINGLE``: a layout only one reference can state is explained when that one agrees, never when none
    does (the reason is why a *second* is missing)."""
    lid = "wgmma.shared.MN.none"
    assert any(re.fullmatch(p, lid) for p, _ in matrix.SINGLE)
    lay = lays()[lid]
    agree = CrosscheckReport("cute 1", (), (Row("agree", "Layout_MN_INTER_Atom", "", "h.hpp", 3, lid),), {}, 0.0,
                             "cute")
    m = matrix.build([lay], {"cute": agree})
    assert m.explained(lid).startswith("one reference agrees; no second can state it (reviewed): Triton's swizzle-0")
    assert m.coverage()["explained_single_source"] == 1
    none = matrix.build([lay], {"cute": CrosscheckReport("cute 1", (), (), {}, 0.0, "cute")})
    assert none.explained(lid) == "" and none.coverage()["explained_below_two"] == 0


def test_a_reviewed_unreferenced_layout_is_explained_only_while_no_reference_states_it():
    """``UNREFERENCED``: no reference states the layout, a reviewed reason says why, and the explanation names
    the probe that would confirm it; once a reference agrees, the reason no longer holds."""
    lid = "wgmma.m64nNk256.A.b1"
    lay = lays()[lid]
    m = matrix.build([lay], {"cute": CrosscheckReport("cute 1", (), (), {}, 0.0, "cute")})
    assert m.explained(lid).startswith("no reference states it (reviewed): binary wgmma")
    assert m.explained(lid).endswith(f"(ptx-verify probe {lid})")
    assert m.coverage()["explained_unreferenced"] == 1
    agree = CrosscheckReport("cute 1", (), (Row("agree", "T", "A", "h.hpp", 1, lid),), {}, 0.0, "cute")
    assert matrix.build([lay], {"cute": agree}).explained(lid) == ""
