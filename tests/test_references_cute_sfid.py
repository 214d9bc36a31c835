"""The compiled-CuTe reference for ``tcgen05.mma.m1n4.SFA.*`` (issue 40): which byte of a Tensor Memory word the
MMA given ``SFA_ID`` reads for its j-th scale factor, from CuTe's ``tmem_sf_frg`` slice of each MMA, its
``tmem_ptr`` addresses and ``make_runtime_instr_desc_block_scaled``'s ``a_sf_id_`` (``references/cute_sfid.py``).

Tested on what CUTLASS 4.2's program prints (no toolchain), on a spec whose sub-column is read highest byte first
(caught as a difference through the same code path), on printed values that are no one sub-column (findings
about the reference), and on the installed CUTLASS where a compiler and the CUDA headers are present.
"""
from __future__ import annotations

import functools

import pytest
from conftest import SPECS

from verify import api
from verify.checks.references import compile_cute
from verify.checks.references import cute as cute_ref
from verify.checks.references import cute_tmem
from verify.checks.references.common import conform_rows
from verify.checks.references.cute_sfid import HEADER, M1N4, sfid_layouts, sfid_requests
from verify.layout.notations.cute_compiled import Printed, Request, parse_output

# per MMA: a_sf_id_, rows not in row 0's byte, then (byte, word) per factor, as CUTLASS 4.2's program prints them
PRINTED = {
    1: "(_1,_1,_1,_1,_1,_1,_1,_1,_1,_1,_1,_1,_1,_1,_1,_1):(0,0,0,0,1,0,1,0,2,0,2,0,3,0,3,0)",
    2: "(_1,_1,_1,_1,_1,_1,_1,_1,_1,_1,_1,_1):(0,0,0,0,1,0,2,0,2,0,3,0)",
    4: "(_1,_1,_1,_1,_1,_1,_1,_1,_1,_1):(0,0,0,0,1,0,2,0,3,0)",
}
IDS = {1: [0, 1, 2, 3], 2: [0, 2], 4: [0]}
KIND = {1: ("cutlass::float_ue8m0_t", 32), 2: ("cutlass::float_ue8m0_t", 32), 4: ("cutlass::float_ue4m3_t", 16)}


@functools.cache
def _layouts() -> tuple:
    return tuple(api.layouts(api.load(SPECS)))


def _request(vs: int) -> Request:
    sf, sfv = KIND[vs]
    name = (f"SFID UMMA::make_runtime_instr_desc_block_scaled(tmem_sf_frg<{sf}, {sfv}, 1, true> NSF={vs} "
            f"MMAs={4 // vs}) [{M1N4[vs]}]")
    return Request("expr", name, "expr", HEADER, 2766)


def _rows(vs: int, printed: str, layouts) -> list:
    req = _request(vs)
    return conform_rows(sfid_layouts(req, Printed("expr", req.name, {"Layout": (printed, 1)}), list(layouts)), 10.0)


def _planted(tmp_path) -> list:
    """The m1n4 specs with each sub-column read highest byte first (same ids, same families)."""
    text = (SPECS / "tcgen05.mma.block_scale.toml").read_text(encoding="utf-8")
    for v, w in (("1X", 1), ("2X", 2), ("4X", 4)):
        old = f"col = i - SFA_ID_{v}\n"
        assert text.count(old) == 1
        text = text.replace(old, f"col = SFA_ID_{v} + {w - 1} - i\n")
    (tmp_path / "planted.toml").write_text(text, encoding="utf-8")
    return api.layouts(api.load(tmp_path / "planted.toml"))


@pytest.mark.parametrize("vs", [1, 2, 4])
def test_each_mma_of_cutes_tile_reads_its_sub_column_at_its_sfa_id(vs):
    rows = _rows(vs, PRINTED[vs], _layouts())
    pname = f"SFA_ID_{vs}X"
    assert [(r.kind, r.spec, r.params, r.operand, r.header) for r in rows] == \
        [("agree", M1N4[vs], ((pname, i),), "SFA", HEADER) for i in IDS[vs]]


@pytest.mark.parametrize("vs", [2, 4])
def test_a_spec_reading_the_sub_column_highest_byte_first_differs(tmp_path, vs):
    rows = _rows(vs, PRINTED[vs], _planted(tmp_path))
    assert {r.kind for r in rows} == {"differ"}
    assert all(r.spec == M1N4[vs] for r in rows)


def test_values_that_are_no_sub_column_are_findings_about_the_reference():
    # 2X, MMA 1's factor 1 in another word (column 1): not one sub-column
    split = _rows(2, "(_1,_1,_1,_1,_1,_1,_1,_1,_1,_1,_1,_1):(0,0,0,0,1,0,2,0,2,0,3,1)", _layouts())
    assert [r.kind for r in split] == ["agree", "malformed"] and "not one sub-column" in split[1].detail
    # 1X, a descriptor id the spec does not allow
    bad_id = _rows(1, "(_1,_1,_1,_1,_1,_1,_1,_1,_1,_1,_1,_1,_1,_1,_1,_1):(0,0,0,0,1,0,1,0,2,0,2,0,7,0,3,0)", _layouts())
    assert bad_id[3].kind == "malformed" and "a_sf_id_ 7" in bad_id[3].detail
    # 4X, some rows' factors in other bytes than row 0's
    moved = _rows(4, "(_1,_1,_1,_1,_1,_1,_1,_1,_1,_1):(0,5,0,0,1,0,2,0,3,0)", _layouts())
    assert moved[0].kind == "malformed" and "not in row 0's byte" in moved[0].detail
    # a descriptor id that is not the byte of the first factor: the MMA reads other bytes than CuTe wrote
    off = _rows(2, "(_1,_1,_1,_1,_1,_1,_1,_1,_1,_1,_1,_1):(2,0,0,0,1,0,2,0,2,0,3,0)", _layouts())
    assert [r.kind for r in off] == ["differ", "agree"]
    # not the number of values the request asks for
    short = _rows(4, "(_1,_1):(0,0)", _layouts())
    assert short[0].kind == "malformed" and "is not 10 values" in short[0].detail


def test_requests_name_the_descriptor_the_allocator_and_the_traits_line(tmp_path):
    (tmp_path / "cute" / "atom").mkdir(parents=True)
    (tmp_path / HEADER).write_text("a\nb\n    uint64_t idesc = UMMA::make_runtime_instr_desc_block_scaled<>(traits.idesc_, "
                                   "traits.tsfa_addr_, traits.tsfb_addr_);\n")
    reqs = sfid_requests(tmp_path, list(_layouts()), cute_tmem.SF_TMEM_KINDS)
    assert [(r.kind, r.name, r.line) for r in reqs] == [("expr", _request(v).name, 3) for v in (1, 2, 4)]
    assert "UMMA::tmem_sf_frg<cutlass::float_ue8m0_t, 32, 1, true>::make(" in reqs[0].instance
    assert "d.a_sf_id_" in reqs[0].instance and "raw_pointer_cast(t(_, _, i).data())" in reqs[0].instance
    assert sfid_requests(tmp_path / "none", list(_layouts()), cute_tmem.SF_TMEM_KINDS) == []


@pytest.mark.slow
def test_installed_cutlass_states_the_sub_columns_and_a_planted_spec_differs(tmp_path):
    why = cute_ref.probe()
    if why:
        pytest.skip(f"reference cute unavailable: {why}")
    root = cute_ref.installed_headers()
    reqs = sfid_requests(root, list(_layouts()), cute_tmem.SF_TMEM_KINDS)
    assert len(reqs) == 3
    run = compile_cute.run(root, reqs)
    assert run.failures == ()
    printed = parse_output(run.output, reqs)
    assert [printed[k].raw["Layout"][0] for k in range(3)] == [PRINTED[v] for v in (1, 2, 4)]
    good = conform_rows([e for k, r in enumerate(reqs) for e in sfid_layouts(r, printed[k], list(_layouts()))], 10.0)
    assert [(r.kind, r.spec, dict(r.params)) for r in good] == \
        [("agree", M1N4[v], {f"SFA_ID_{v}X": i}) for v in (1, 2, 4) for i in IDS[v]]
    planted = _planted(tmp_path)
    bad = conform_rows([e for k, r in enumerate(reqs) for e in sfid_layouts(r, printed[k], planted)], 10.0)
    assert [r.kind for r in bad] == ["agree"] * 4 + ["differ"] * 3   # 1X: one byte each, nothing to reverse
