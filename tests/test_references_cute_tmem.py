"""The compiled-CuTe reference for Tensor Memory scale factors and Layout C (issue 21).

``tcgen05.sf.A.4x1`` is compared with ``UMMA::tmem_sf_frg`` (one 128 x 4 scale-factor tile per VS);
``tcgen05.datapath.C`` with the allocator CuTe's 2x1SM sparse traits use for D (``tmem_frg_2sm``, 64 rows per
CTA), which lays it out 2x2, not the table's 4x1 with half the datapath: a difference the spec states.  The
pairing is tested on CuTe's printed layouts (CUTLASS 4.2, as the compiler prints them) with no toolchain, on
a spec with two bytes swapped (caught as a difference through the same code path), and on the installed
CUTLASS where a compiler and the CUDA headers are present.
"""
from __future__ import annotations

import functools

import pytest
from conftest import SPECS

from verify import api
from verify.results.crosscheck import CrosscheckReport, Row
from verify.checks.references import compile_cute, matrix
from verify.checks.references import cute as cute_ref
from verify.checks.references import cute_tmem
from verify.checks.references.common import conform_rows
from verify.layout.notations.cute_compiled import Printed, Request, parse_output

HEADER = "cute/atom/mma_traits_sm100.hpp"
C_USE = "SM100_MMA_F16BF16_2x1SM_SS_SPARSE"
# UMMA::tmem_sf_frg<...>::make(((128, (SFVecSize, VS)), 1, 4 / VS)).layout() as CUTLASS 4.2 compiles it
PRINTED_SF = {
    1: "((((_32,_4),_4),(_32,_1)),_1,_4):((((_262144,_4),_8388608),(_0,_1)),_0,_1)",
    2: "((((_32,_4),_4),(_32,_2)),_1,_2):((((_262144,_4),_8388608),(_0,_1)),_0,_2)",
    4: "((((_32,_4),_4),(_16,_4)),_1,_1):((((_262144,_4),_8388608),(_0,_1)),_0,_0)",
}
SF_NAME = {1: "UMMA::tmem_sf_frg<cutlass::float_ue8m0_t, 32, 1, true> M=128 NSF=1 MMAs=4",
           2: "UMMA::tmem_sf_frg<cutlass::float_ue8m0_t, 32, 1, true> M=128 NSF=2 MMAs=2",
           4: "UMMA::tmem_sf_frg<cutlass::float_ue4m3_t, 16, 1, true> M=128 NSF=4 MMAs=1"}


@functools.cache
def _maps() -> tuple:
    return tuple(api.map_layouts(api.load(SPECS)))


def _planted(tmp_path) -> list:
    """tcgen05.sf.A.4x1 with bytes 1 and 2 of every 32-bit column swapped (same id, same family)."""
    text = (SPECS / "tcgen05.scale_factors.toml").read_text(encoding="utf-8")
    assert text.count("byte = sfa_id + j\n") == 1
    (tmp_path / "planted.toml").write_text(
        text.replace("byte = sfa_id + j\n", "byte = (sfa_id + j) % 2 * 2 + (sfa_id + j) / 2\n"), encoding="utf-8")
    return api.map_layouts(api.load(tmp_path / "planted.toml"))


def _sf_rows(vs: int, printed: str, maps) -> list[Row]:
    name = f"{SF_NAME[vs]} [tcgen05.sf.A.4x1]"
    req = Request("expr", name, "expr", HEADER, 853)
    return conform_rows([cute_tmem.sf_tmem_layout(req, Printed("expr", name, {"Layout": (printed, 1)}), list(maps))],
                        10.0)


def _datapath_rows(name: str, printed: str) -> list[Row]:
    req = Request("tmem", name, "", HEADER, 462)
    return conform_rows([cute_tmem.datapath_layout(req, Printed("tmem", name, {"Layout": (printed, 1)}),
                                                  list(_maps()))], 10.0)


@pytest.mark.parametrize("vs", [1, 2, 4])
def test_cutes_scale_factor_allocation_is_the_spec_for_every_vs(vs):
    rows = _sf_rows(vs, PRINTED_SF[vs], _maps())
    assert [(r.kind, r.spec, r.params, r.header, r.line) for r in rows] == \
        [("agree", "tcgen05.sf.A.4x1", (("VS", vs),), HEADER, 853)]


@pytest.mark.parametrize("vs", [1, 2, 4])
def test_a_spec_with_two_bytes_swapped_differs(tmp_path, vs):
    rows = _sf_rows(vs, PRINTED_SF[vs], _planted(tmp_path))
    assert [(r.kind, r.spec, r.params) for r in rows] == [("differ", "tcgen05.sf.A.4x1", (("VS", vs),))]
    assert "byte" in rows[0].detail and "kb 1" in rows[0].detail


def test_cute_layouts_that_are_no_four_fold_duplicate_or_no_tile_are_findings():
    # the copies in lane quarters 0, 0, 0, 0 (REP stride 0): not the doc's duplication to the four quarters
    no_dup = _sf_rows(4, "((((_32,_4),_4),(_16,_4)),_1,_1):((((_262144,_4),_0),(_0,_1)),_0,_0)", _maps())
    assert no_dup[0].kind == "malformed" and "is not its cell in lane quarter 1" in no_dup[0].detail
    # a scale factor whose SFVecSize elements are at different addresses
    spread = _sf_rows(4, "((((_32,_4),_4),(_16,_4)),_1,_1):((((_262144,_4),_8388608),(_1,_16)),_0,_0)", _maps())
    assert spread[0].kind == "malformed" and "are not one scale factor" in spread[0].detail
    # an allocation of another shape (64 rows) is not the spec's tile
    other = _sf_rows(4, "((((_32,_2),_4),(_16,_4)),_1,_1):((((_262144,_4),_8388608),(_0,_1)),_0,_0)", _maps())
    assert other[0].kind == "malformed" and "is not ((((32,4),4),(16,4)),1,1)" in other[0].detail


def test_sf_requests_name_the_allocator_its_tile_and_the_atom_line(tmp_path):
    (tmp_path / "cute" / "atom").mkdir(parents=True)
    (tmp_path / HEADER).write_text("x\nstruct tmem_sf_frg: tmem_frg_base\n{\n  y;\n  auto tmem_atom = 1;\n}\n")
    reqs = cute_tmem.sf_tmem_requests(tmp_path, list(_maps()))
    assert [(r.kind, r.name.split(" [")[0], r.line) for r in reqs] == [("expr", SF_NAME[v], 5) for v in (1, 2, 4)]
    assert reqs[0].instance == ("UMMA::tmem_sf_frg<cutlass::float_ue8m0_t, 32, 1, true>::make(make_shape(make_shape("
                                "Int<128>{}, make_shape(Int<32>{}, Int<1>{})), Int<1>{}, Int<4>{})).layout()")
    assert cute_tmem.sf_tmem_requests(tmp_path / "none", list(_maps())) == []


def test_layout_c_differs_from_cutes_2x1sm_allocator_and_agrees_with_a_4x1_half_datapath():
    """CuTe's tmem_frg_2sm at 64 rows per CTA is the 2x2 atom (Layout B): the table's Layout C differs; the
    same comparison agrees with the 4x1, half-datapath placement (CuTe's 1SM M_MMA = 64 atom, per CTA)."""
    two_by_two = _datapath_rows(f"UMMA::tmem_frg<float, uint32_t, 2> M=64 N=32 b=32 for {C_USE} [tcgen05.datapath.C]",
                                "((_64,(_16,_2)),_1,_1):((_65536,(_1,_4194304)),_0,_0)")
    assert [(r.kind, r.spec, r.params) for r in two_by_two] == \
        [("differ", "tcgen05.datapath.C", (("BASE", 0), ("N", 32)))]
    assert "reference (cta 0, tmem_lane 64, tmem_col 0)" in two_by_two[0].detail
    half = _datapath_rows("UMMA::tmem_frg<float, uint32_t, 1> M=64 N=32 b=32 [tcgen05.datapath.C]",
                          "(((_16,_4),_32),_1,_1):(((_65536,_2097152),_1),_0,_0)")
    assert half[0].kind == "agree"
    assert ("tcgen05.datapath.C", "UMMA::tmem_frg<float, uint32_t, 2>", 64) in cute_tmem.DATAPATHS
    # the matrix: a difference, the reviewed one (KNOWN), so not an unexpected finding
    lay = next(m for m in _maps() if m.id == "tcgen05.datapath.C")
    m = matrix.build([lay], {"cute": CrosscheckReport("cute 1.0", (), tuple(two_by_two), {}, 0.0, "cute")})
    assert m.status("tcgen05.datapath.C") == {"cute": "differs"}
    assert "CuTe has no 2-SM allocator" in m.explained("tcgen05.datapath.C") and m.exit_code() == 0
    # the same difference from an allocator no trait names is not the reviewed one
    other = [Row(r.kind, "UMMA::tmem_frg<float, uint32_t, 2> M=64 N=32 b=32", r.operand, r.header, r.line, r.spec,
                 r.status, r.detail, r.counterexample, r.layout, r.params) for r in two_by_two]
    m2 = matrix.build([lay], {"cute": CrosscheckReport("cute 1.0", (), tuple(other), {}, 0.0, "cute")})
    assert m2.status("tcgen05.datapath.C") == {"cute": "differs"} and m2.exit_code() == 1


def test_layout_c_requests_point_at_the_sparse_2x1sm_traits_frgtypec(tmp_path):
    (tmp_path / "cute" / "atom").mkdir(parents=True)
    (tmp_path / HEADER).write_text("struct tmem_frg : tmem_frg_base\n{};\n"
                                   f"struct MMA_Traits<{C_USE}<a_type>>\n{{\n  using FrgTypeC = x;\n}};\n")
    reqs = [r for r in cute_tmem.tmem_requests(tmp_path, list(_maps())) if r.name.endswith("[tcgen05.datapath.C]")]
    assert [r.name.split(" [")[0] for r in reqs] == \
        [f"UMMA::tmem_frg<float, uint32_t, 2> M=64 N={n} b=32 for {C_USE}" for n in range(16, 257, 16)]
    assert {(r.line, r.instance.rsplit(",", 1)[0]) for r in reqs} == {(5, "UMMA::tmem_frg<float, uint32_t, 2>, 64")}
    b = [r for r in cute_tmem.tmem_requests(tmp_path, list(_maps())) if r.name.endswith("[tcgen05.datapath.B]")]
    assert b[0].line == 1 and " for " not in b[0].name


# ----------------------------------------------------------------------------- on the installed CUTLASS

def _installed() -> tuple:
    why = cute_ref.probe()
    if why:
        pytest.skip(f"reference cute unavailable: {why}")
    root = cute_ref.installed_headers()
    maps = list(_maps())
    reqs = cute_tmem.sf_tmem_requests(root, maps) + \
        [r for r in cute_tmem.tmem_requests(root, maps) if r.name.endswith("[tcgen05.datapath.C]")]
    run = compile_cute.run(root, reqs)
    assert run.failures == ()
    return root, reqs, parse_output(run.output, reqs)


@pytest.mark.slow
def test_installed_cutlass_scale_factors_agree_and_a_planted_spec_differs(tmp_path):
    root, reqs, printed = _installed()
    text = (root / HEADER).read_text(encoding="utf-8")
    atom_line = text.count("\n", 0, text.find("auto tmem_atom", text.find("struct tmem_sf_frg"))) + 1
    sf = [(k, r) for k, r in enumerate(reqs) if r.kind == "expr"]
    assert len(sf) == 3
    good = conform_rows([cute_tmem.sf_tmem_layout(r, printed[k], list(_maps())) for k, r in sf], 10.0)
    assert [(r.kind, r.params, r.line) for r in good] == [("agree", (("VS", v),), atom_line) for v in (1, 2, 4)]
    planted = _planted(tmp_path)
    bad = conform_rows([cute_tmem.sf_tmem_layout(r, printed[k], planted) for k, r in sf], 10.0)
    assert [r.kind for r in bad] == ["differ"] * 3


@pytest.mark.slow
def test_installed_cutlass_layout_c_differs_for_every_n():
    _, reqs, printed = _installed()
    rows = conform_rows([cute_tmem.datapath_layout(r, printed[k], list(_maps()))
                         for k, r in enumerate(reqs) if r.kind == "tmem"], 10.0)
    spec = next(m for m in _maps() if m.id == "tcgen05.datapath.C")
    assert sorted(dict(r.params)["N"] for r in rows) == sorted(dict((q.name, q.values) for q in spec.params)["N"])
    assert {r.kind for r in rows} == {"differ"}
    assert all("tmem_lane 64" in r.detail for r in rows)     # the second half of the columns in lanes 64..127
    text = (cute_ref.installed_headers() / HEADER).read_text(encoding="utf-8")
    frg_line = text.count("\n", 0, text.find("using FrgTypeC", text.find(f"struct MMA_Traits<{C_USE}<"))) + 1
    assert {(r.trait.split(" for ")[1], r.line) for r in rows} == {(C_USE, frg_line)}
    assert "using FrgTypeC = UMMA::tmem_frg_2sm<c_type>;" in text.splitlines()[frg_line - 1]
