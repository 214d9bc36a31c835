"""Independent references (``verify.checks.references``): CuTe compiled, CuTe as text, Triton, tensor-layouts.

The pure parts (discovering traits, the generated program, reading its output, copy traits into
cells, the matrix) are tested on literal inputs with no extra installed.  Each reference also runs
for real where its extra is installed (skipped with the reason otherwise), and the committed
``reports/references.json`` is checked against what the installed references say now.
"""
from __future__ import annotations

from types import SimpleNamespace

import functools
import json
import textwrap
from pathlib import Path

import pytest
from conftest import ROOT, SPECS, cli
from test_crosscheck import PR3140

from verify import api
from verify.results.crosscheck import CrosscheckReport, Row
from verify.checks.references import NAMES, compile_cute, matrix, reference
from verify.checks.references import cute as cute_ref
from verify.checks.references import cute_copy, cute_tmem
from verify.checks.references import tensor_layouts as tl_ref
from verify.checks.references import triton as triton_ref
from verify.checks.references.common import conform_rows
from verify.layout.notations import NotationError
from verify.outputs import reports_text
from verify.layout.notations.cute_compiled import Printed, Request, discover_text, parse_output, program

COMMITTED = ROOT / "reports" / "references.json"


@functools.cache
def specs() -> tuple:
    return tuple(api.load(SPECS))


@functools.cache
def lays() -> list:
    return api.layouts(specs())


def _need(name: str) -> None:
    why = reference(name).probe()
    if why:
        pytest.skip(f"reference {name} unavailable: {why}")


# ----------------------------------------------------------------------------- the generated program

HEADER = textwrap.dedent("""\
    namespace cute {
    template <>
    struct MMA_Traits<SM80_16x8x8_F16F16F16F16_TN>   // an explicit specialisation
    {
      using ALayout = Layout<Shape<_32>>;
    };
    template <GMMA::Major tnspA, GMMA::Major tnspB, GMMA::ScaleIn scaleA, GMMA::ScaleIn scaleB>
    struct MMA_Traits<SM90_64x8x16_F16F16F16_RS<tnspA, tnspB, scaleA, scaleB>> {};
    template <class a_type, class b_type, class c_type>
    struct MMA_Traits<SM120_16x8x32_TN<a_type, b_type, c_type>> {};
    template <class Op, class... Args>
    struct MMA_Traits<SM100_MMA_X, Args...> {};
    /* struct MMA_Traits<CommentedOut> {}; */
    template <>
    struct Copy_Traits<SM75_U32x1_LDSM_N> {};
    }
    """)


def test_discover_instantiates_gmma_enums_and_records_what_it_cannot():
    reqs = discover_text(HEADER, "cute/atom/x.hpp")
    got = [(r.kind, r.name, r.instance, r.line, r.skipped.split(" (")[0]) for r in reqs]
    assert got == [
        ("mma", "SM80_16x8x8_F16F16F16F16_TN", "SM80_16x8x8_F16F16F16F16_TN", 3, ""),
        ("mma", "SM90_64x8x16_F16F16F16_RS",
         "SM90_64x8x16_F16F16F16_RS<GMMA::Major::K, GMMA::Major::K, GMMA::ScaleIn::One, GMMA::ScaleIn::One>", 8, ""),
        ("mma", "SM120_16x8x32_TN<cutlass::float_e4m3_t, cutlass::float_e4m3_t, float>",
         "SM120_16x8x32_TN<cutlass::float_e4m3_t, cutlass::float_e4m3_t, float>", 10, ""),
        ("mma", "SM120_16x8x32_TN<cutlass::float_e4m3_t, cutlass::float_e4m3_t, cutlass::half_t>",
         "SM120_16x8x32_TN<cutlass::float_e4m3_t, cutlass::float_e4m3_t, cutlass::half_t>", 10, ""),
        ("mma", "SM100_MMA_X", "", 12, "templated over trait arguments"),
        ("copy", "SM75_U32x1_LDSM_N", "SM75_U32x1_LDSM_N", 15, ""),
    ]


def test_program_names_each_trait_by_its_line_and_skips_the_templated():
    reqs = discover_text(HEADER, "cute/atom/x.hpp")
    src, where = program(reqs)
    lines = src.splitlines()
    assert "#include <cute/atom/x.hpp>" in lines
    assert sorted(where.values()) == [0, 1, 2, 3, 5]
    for line, k in where.items():
        assert f"ptxv_{k}()" in lines[line - 1] and reqs[k].instance in lines[line - 1]


def test_output_is_read_back_and_a_broken_layout_spoils_only_its_trait():
    reqs = [Request("mma", "A", "A", "h.hpp", 1), Request("copy", "B", "B", "h.hpp", 2)]
    out = ("@mma 0\nShape_MNK (_16,_8,_8)\nALayout ((_4,_8),(_2,_2)):((_32,_1),(_16,_8))\n"
           "BLayout (_32,_2):((_1,_2))\nValTypeA const char* ptxv_type() [with T = cutlass::half_t]\n"
           "@copy 1\nThrID _32:_1\n")
    got = parse_output(out, reqs)
    assert got[0].types["ValTypeA"] == "cutlass::half_t"
    assert str(got[0].layout("ALayout")) == "((4,8),(2,2)):((32,1),(16,8))"
    with pytest.raises(NotationError) as e:
        got[0].layout("BLayout")
    assert e.value.line == 4 and "not congruent" in e.value.message
    assert str(got[1].layout("ThrID")) == "32:1"
    for bad in ("ALayout (_1):(_1)\n", "@mma 7\n", "@mma 0\nNope 1\n"):
        with pytest.raises(NotationError):
            parse_output(bad, reqs)


def test_compiler_errors_are_attributed_to_the_trait_and_its_header_line(tmp_path):
    reqs = [Request("mma", "Good", "Good", "cute/atom/t.hpp", 3), Request("mma", "Bad", "Bad", "cute/atom/t.hpp", 9)]
    _, where = program(reqs)
    bad_line = next(line for line, k in where.items() if k == 1)
    gen = str(tmp_path / "ptxv_traits.cpp")
    stderr = (f"{gen}: In instantiation of 'void ptxv_mma(const char*) [with Tr = cute::MMA_Traits<Bad>]':\n"
              f"{gen}:{bad_line}:40:   required from here\n"
              f"{tmp_path}/cute/atom/t.hpp:12:17: error: static assertion failed: bad layout\n")
    failures, fatal = compile_cute._attribute(stderr, gen, where, tmp_path, reqs)
    assert fatal == "" and list(failures) == [1]
    assert (failures[1].header, failures[1].line) == ("cute/atom/t.hpp", 12)
    assert "static assertion failed" in failures[1].message
    _, fatal = compile_cute._attribute(f"{tmp_path}/cute/x.hpp:3:1: error: expected ';'\n", gen, where, tmp_path, reqs)
    assert fatal == "cute/x.hpp:3: error: expected ';'"


FAKE = textwrap.dedent("""\
    #pragma once
    #include <cstdio>
    namespace cute {
    template <class T> struct MMA_Traits;
    template <int N> struct L { L() { static_assert(N > 0, "bad layout"); } };
    template <int N> void print(L<N> const&) { printf("_%d:_1", N); }
    struct GoodOp {}; struct BadOp {};
    template <> struct MMA_Traits<GoodOp> {
      using ValTypeA = float; using ValTypeB = float; using ValTypeC = float; using ValTypeD = float;
      using Shape_MNK = L<1>; using ThrID = L<32>; using ALayout = L<32>; using BLayout = L<32>; using CLayout = L<32>;
    };
    template <> struct MMA_Traits<BadOp> {
      using ValTypeA = float; using ValTypeB = float; using ValTypeC = float; using ValTypeD = float;
      using Shape_MNK = L<1>; using ThrID = L<32>; using ALayout = L<0>; using BLayout = L<32>; using CLayout = L<32>;
    };
    }
    """)


@pytest.mark.slow  # runs the toolchain (nvcc/ptxas or g++): an integration test
def test_a_trait_that_does_not_compile_is_dropped_with_its_header_line(tmp_path):
    if compile_cute.probe():
        pytest.skip(f"no toolchain: {compile_cute.probe()}")
    (tmp_path / "cute" / "atom").mkdir(parents=True)
    (tmp_path / "cute" / "atom" / "mma_traits_fake.hpp").write_text(FAKE)
    reqs = discover_text(FAKE, "cute/atom/mma_traits_fake.hpp")
    run = compile_cute.run(tmp_path, reqs, use_cache=False)
    assert [(reqs[f.index].name, f.header, f.line) for f in run.failures] == \
        [("BadOp", "cute/atom/mma_traits_fake.hpp", 5)]
    printed = parse_output(run.output, reqs)
    assert list(printed) == [0] and printed[0].raw["ALayout"][0] == "_32:_1"


# ----------------------------------------------------------------------------- copy traits into cells

def _printed(name: str, **fields: str) -> Printed:
    return Printed("copy", name, {k: (v, 1) for k, v in fields.items()})


def _rows(name: str, **fields: str) -> list[Row]:
    return conform_rows(cute_copy.copy_layouts(Request("copy", name, name, "h.hpp", 7), _printed(name, **fields),
                                              lays()), 10.0)


def test_ldmatrix_and_stmatrix_traits_from_their_bits():
    # CUTLASS 4.2 copy_traits_sm75.hpp / copy_traits_sm90.hpp, as the compiler prints them
    x4 = _rows("SM75_U32x4_LDSM_N", ThrID="_32:_1", SrcLayout="(_32,_128):(_128,_1)",
               DstLayout="(_32,(_32,_4)):(_32,(_1,_1024))")
    assert [(r.kind, r.spec, r.params) for r in x4] == [("agree", "ldmatrix.m8n8.R.b16", (("NUM", 4),))]
    x1 = _rows("SM75_U32x1_LDSM_N", ThrID="_32:_1", SrcLayout="((_8,_4),_128):((_128,_0),_1)",
               DstLayout="(_32,_32):(_32,_1)")
    assert x1[0].kind == "agree" and x1[0].params == (("NUM", 1),)
    t = _rows("SM90_U16x8_STSM_T", ThrID="_32:_1", SrcLayout="((_4,_8),(_16,_2,_4)):((_256,_16),(_1,_128,_1024))",
              DstLayout="(_32,_128):(_128,_1)")
    assert (t[0].kind, t[0].spec) == ("agree", "stmatrix.m8n8.R.b16.trans")
    # a register layout with the column order swapped is a difference, with the first differing point
    bad = _rows("SM75_U32x1_LDSM_N", ThrID="_32:_1", SrcLayout="((_8,_4),_128):((_128,_0),_1)",
                DstLayout="(_32,(_16,_2)):(_32,(_1,_16))")
    assert bad[0].kind == "agree"   # the same bits in the same order: (16,2):(1,16) is (32):(1)
    swapped = _rows("SM75_U32x1_LDSM_N", ThrID="_32:_1", SrcLayout="((_8,_4),_128):((_128,_0),_1)",
                    DstLayout="(_32,(_16,_2)):(_32,(_1,_512))")
    assert swapped[0].kind in ("differ", "malformed")


def test_tensor_memory_traits_through_valid():
    rows = _rows("SM100_TMEM_LOAD_16dp256b1x", ThrID="_32:_1", SrcLayout="(_32,_4096):(_0,_1)",
                 DstLayout="((_4,_8),(_64,_2)):((_64,_256),(_1,_2048))", ValID="(_256,_16):(_1,_2097152)")
    assert [(r.kind, r.spec, r.params) for r in rows] == [("agree", "tcgen05.ld.16x256b.R.b32@corrected",
                                                           (("NUM", 1),))]
    rows = _rows("SM100_TMEM_STORE_32dp32b2x", ThrID="_32:_1", SrcLayout="(_32,_64):(_64,_1)",
                 DstLayout="(_32,_2048):(_0,_1)", ValID="(_64,_32):(_1,_2097152)")
    assert (rows[0].kind, rows[0].spec) == ("agree", "tcgen05.st.32x32b.R.b32")
    packed = _rows("SM100_TMEM_LOAD_32dp32b1x_16b", ThrID="_32:_1")
    assert packed[0].kind == "unmatched" and ".pack::16b" in packed[0].detail


def test_an_element_whose_bits_split_across_cells_is_a_finding():
    rows = _rows("SM75_U32x4_LDSM_N", ThrID="_32:_1", SrcLayout="(_32,_128):(_128,_1)",
                 DstLayout="(_32,(_32,_4)):(_32,(_2,_1024))")
    assert rows[0].kind == "malformed" and "not one element" in rows[0].detail


# ----------------------------------------------------------------------------- the matrix

def _report(name: str, rows: list[Row]) -> CrosscheckReport:
    return CrosscheckReport(f"{name} 1.0", (), tuple(rows), {}, 0.0, name)


def test_matrix_cells_coverage_and_findings():
    class L:
        def __init__(self, lid: str, derived: str = "", correction: "L | None" = None) -> None:
            self.id, self.provenance, self.correction = lid, SimpleNamespace(derived=derived), correction
    fix = L("z@corrected")
    layouts = [L("x"), L("y", "from a figure"), L("z", correction=fix), fix, L("w")]
    reports = {
        "cute": _report("cute", [Row("agree", "T1", "A", "h.hpp", 3, "x"), Row("agree", "T2", "A", "h.hpp", 4, "y"),
                                 Row("agree", "T3", "C", "h.hpp", 5, "z@corrected"),
                                 Row("differ", "SM80_16x8x32_S32S4S4S32_TN", "B", "h.hpp", 9, "w", "differs",
                                     "first difference: lane 1")]),
        "triton": _report("triton", [Row("agree", "acc", "C", "t.py", 0, "x"),
                                     Row("differ", "acc", "A", "t.py", 0, "y", "differs", "lane 2", params=(("N", 8),)),
                                     Row("agree", "acc", "A", "t.py", 0, "y", params=(("N", 16),))]),
        "cute-text": _report("cute-text", [Row("agree", "T1", "A", "h.hpp", 3, "x")]),
        "tensor-layouts": "no tensor-layouts: pip install",
    }
    m = matrix.build(layouts, reports, {"cute": "nvidia-cutlass 4.2.0.0"})
    assert m.status("x") == {"cute": "agrees", "cute-text": "agrees", "triton": "agrees",
                             "tensor-layouts": "unavailable"}
    assert m.origins("x") == ["CUTLASS CuTe", "Triton"]           # cute and cute-text count once
    assert m.status("y")["triton"] == "differs" and m.cells["y"]["triton"].members == ("N=8", "N=16")
    assert m.cells["z"]["cute"].erratum and m.status("z")["cute"] == "differs"
    assert m.status("w")["triton"] == "absent"
    cov = m.coverage()
    assert (cov["layouts"], cov["two_or_more"], cov["derived"], cov["derived_two_or_more"]) == (5, 1, 1, 0)
    f = {(x.layout, x.message.split(":")[0]): x for x in m.findings()}
    assert set(f) == {("y", "triton"), ("w", "cute")}              # no finding for the doc's erratum z
    assert not f[("y", "triton")].as_expected and "[N=8] lane 2" in f[("y", "triton")].message
    assert f[("w", "cute")].as_expected and "PR #3140" in f[("w", "cute")].message and "h.hpp:9" in \
        f[("w", "cute")].message
    assert m.exit_code() == 1
    doc = m.to_json()["references"]
    assert doc["ran"] == {"cute": "nvidia-cutlass 4.2.0.0", "cute-text": "cute-text 1.0", "triton": "triton 1.0"}
    assert doc["unavailable"] == {"tensor-layouts": "no tensor-layouts: pip install"}
    assert doc["layouts"][1]["cells"]["triton"]["status"] == "differs"
    text = reports_text.matrix_text(m)
    assert text.splitlines()[0].split() == ["layout", "cute", "cute-text", "triton", "tensor-layouts", "independent"]
    assert "UNEXPECTED" in text and "1 of 5 layouts (20.0%)" in text
    groups = text.split("\n\n")[1].splitlines()             # the table by group: n, agreeing, >=2, explained
    assert groups[0].split() == ["group", "n", "cute", "cute-text", "triton", "tensor-layouts", ">=2", "explained"]
    assert groups[1].split() == ["other", "5", "3", "1", "1", "0", "1", "2"]
    assert groups[2].split() == ["all", "5", "3", "1", "1", "0", "1", "2"]


def test_coverage_with_corrections_preferred_counts_origins_not_references():
    """A layout with a reviewed correction is counted once, by its correction; a modelled program is no layout
    a reference can state; CuTe compiled and CuTe as text are one origin."""
    class L:
        def __init__(self, lid: str, derived: str = "", correction: "L | None" = None) -> None:
            self.id, self.provenance, self.correction = lid, SimpleNamespace(derived=derived), correction
    fix = L("z@corrected", "a figure")
    layouts = [L("x"), L("z", "a figure", fix), fix, L("v"), L("storage.sf.linear", "model")]
    both = [Row("agree", "T", "A", "h.hpp", 1, "x"), Row("agree", "T", "A", "h.hpp", 2, "z@corrected")]
    m = matrix.build(layouts, {"cute": _report("cute", [*both, Row("agree", "T", "A", "h.hpp", 3, "v")]),
                               "cute-text": _report("cute-text", [Row("agree", "T", "A", "h.hpp", 3, "v")]),
                               "triton": _report("triton", both)})
    assert m.preferred() == ["x", "z@corrected", "v", "storage.sf.linear"]
    assert m.origins("v") == ["CUTLASS CuTe"]                      # two references, one origin
    pref = m.coverage()["corrections_preferred"]
    assert (pref["layouts"], pref["two_or_more"], pref["percent_two_or_more"]) == (4, 2, 50.0)
    assert (pref["derived"], pref["derived_two_or_more"]) == (2, 1)
    assert (pref["statable"], pref["statable_two_or_more"], pref["percent_statable_two_or_more"], pref["modelled"]) \
        == (3, 2, 66.7, 1)
    assert m.coverage()["origins_ran"] == 2
    note = "\n".join(reports_text.matrix_note(m))
    assert "corrections preferred (2 origins ran): 2 of 4 layouts (50.0%) agreed by two or more origins" in note


def test_tensor_layouts_types_from_ptx_and_names():
    assert tl_ref._types("mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32") == \
        ("cutlass::bfloat16_t", "cutlass::bfloat16_t", "float", "float")
    assert tl_ref._types("wgmma.mma_async.sync.aligned.m64n128k16") is None
    assert tl_ref._name_types("SM90_64x128x16_F32BF16BF16_SS") == \
        ("cutlass::bfloat16_t", "cutlass::bfloat16_t", "float", "float")


def test_triton_pairings_use_triton_shapes_and_corrections():
    pairs = triton_ref.requests_for(lays())
    ids = {lay.id for _, lay, _ in pairs}
    assert "mma.m16n8k16.A.f16_bf16" in ids and "mma.m16n8k16.int.C.f16@corrected" in ids
    assert "mma.m16n8k16.int.C.f16" not in ids                     # compared in its corrected form
    ns = sorted(dict(p)["N"] for req, lay, p in pairs if lay.id == "wgmma.m64nNk16.D.f32@corrected")
    assert ns == [8, 16, 32, 64, 128, 256]                          # Triton's shapes are powers of two


# ----------------------------------------------------------------------------- the references for real

def test_reference_unavailable_is_exit_2_with_the_reason(capsys, monkeypatch):
    monkeypatch.setattr(compile_cute, "find_compiler", lambda: None)
    rc, out, err = cli(capsys, "crosscheck", "--reference", "cute")
    assert (rc, out) == (2, "") and "reference cute is unavailable: no C++ compiler" in err and err.count("\n") == 1
    assert reference("cute").probe().startswith("no C++ compiler")
    with pytest.raises(KeyError):
        reference("nope")


def test_the_compiled_cute_cache_is_keyed_by_the_cuda_headers_too(monkeypatch, tmp_path):
    """A result compiled with one CUDA toolkit's headers ($CUDA_HOME) is never read back for another's."""
    compiled = []

    def compile_(root, requests, cxx, incs, version, cfile, use_cache):
        compiled.append(incs)
        cfile.write_text(json.dumps({"output": f"with {incs[0]}", "compiler": version, "failures": []}))
        return compile_cute.Run(f"with {incs[0]}", (), version)
    monkeypatch.setattr(compile_cute, "_compile", compile_)
    monkeypatch.setattr(compile_cute, "find_compiler", lambda: "c++")
    monkeypatch.setattr(compile_cute, "_compiler_version", lambda cxx: "c++ 1.0")
    (tmp_path / "cute").mkdir()
    runs = []
    for inc in ("/cuda-12/include", "/cuda-13/include", "/cuda-12/include"):
        monkeypatch.setattr(compile_cute, "cuda_include_dirs", lambda inc=inc: [Path(inc)])
        runs.append(compile_cute.run(tmp_path, [], cache=tmp_path / "cache"))
    assert [r.output for r in runs] == ["with /cuda-12/include", "with /cuda-13/include", "with /cuda-12/include"]
    assert [r.cached for r in runs] == [False, False, True] and len(compiled) == 2


@pytest.mark.slow
def test_text_reader_now_matches_gmma_traits_to_wgmma_specs():
    """U10: crosscheck said "the catalog has no wgmma specs" and never checked SM90 GMMA traits."""
    _need("cute-text")
    rep = api.reference("cute-text", specs())
    wg = [r for r in rep.rows if r.spec.startswith("wgmma")]
    assert len(wg) >= 200 and all(r.kind == "agree" for r in wg)
    assert not any("no wgmma specs" in r.detail for r in rep.rows)


@pytest.mark.slow
def test_triton_reference_agrees_everywhere():
    _need("triton")
    rep = api.reference("triton", specs())
    assert rep.count("agree") >= 100 and rep.count("differ") == rep.count("malformed") == 0


@pytest.mark.slow
def test_tensor_layouts_reference_has_cutlass_4_2s_int4_b():
    _need("tensor-layouts")
    rep = api.reference("tensor-layouts", specs())
    assert sorted({(r.trait, r.operand) for r in rep.rows if r.kind in ("differ", "malformed")}) == \
        [("SM80_16x8x32_S32S4S4S32_TN", "B")]
    assert rep.count("agree") >= 150


@functools.cache
def _cute_report():
    """Compiled CuTe's report, evaluated once per worker (the slowest reference) and shared with the matrix."""
    return api.reference("cute", specs())


@functools.cache
def _matrix():
    return api.references(specs(), reports={} if reference("cute").probe() else {"cute": _cute_report()})


C_USE = "SM100_MMA_F16BF16_2x1SM_SS_SPARSE"


@pytest.mark.slow
@pytest.mark.xdist_group("compiled-cute")
def test_compiled_cute_reference():
    _need("cute")
    rep = _cute_report()
    rows = [r for r in rep.rows if r.kind != "unmatched"]
    bad = sorted({(r.kind, r.trait, r.operand) for r in rows if r.kind != "agree"})
    assert bad == sorted([("differ", t, "B") for t in PR3140]
                         + [("malformed", f"SM80_16x8x128_S32U1U1S32_TN_{x}POPC", "A") for x in ("XOR", "AND")]
                         + [("differ", f"SM100_U8x{n}_LDSM_T", "R") for n in (8, 16)]
                         # Layout C vs tmem_frg_2sm, 64 rows per CTA (2x2; tests/test_references_cute_tmem.py)
                         + [("differ", f"UMMA::tmem_frg<float, uint32_t, 2> M=64 N={n} b=32 for {C_USE}", "")
                            for n in range(16, 257, 16)])
    assert {r.spec for r in rows if r.kind == "differ" and r.trait.startswith("UMMA::")} == {"tcgen05.datapath.C"}
    xor = next(r for r in rows if r.trait == "SM80_16x8x128_S32U1U1S32_TN_XORPOPC")
    assert (xor.header, xor.line, xor.spec) == ("cute/atom/mma_traits_sm80.hpp", 670, "mma.m16n8k128.A.b1")
    agreed = {r.spec for r in rows if r.kind == "agree"}
    for lid in ("wgmma.m64nNk16.D.f32@corrected", "wgmma.m64nNk16.A.f16_bf16", "wgmma.sp.m64nNk32.D.f16@corrected",
                "ldmatrix.m8n8.R.b16.trans", "stmatrix.m16n8.R.b8.trans", "tcgen05.ld.32x32b.R.b32",
                "tcgen05.st.16x128b.R.b32@corrected", "movmatrix.m8n8.D.b16", "mma.m8n8k4.A.f16.col",
                "wgmma.sp.m64nNk32.A.f16_bf16", "mma.sp.m16n8k64.A.e4m3_e5m2_e3m2_e2m3_e2m1",
                "tcgen05.datapath.B", "tcgen05.packing.A.b16.packed", "mma.block_scale.m16n8k64.SFB.ue4m3",
                "tcgen05.sf.A.4x1"):
        assert lid in agreed, lid
    wg = {dict(r.params)["N"] for r in rows if r.spec == "wgmma.m64nNk16.D.f32@corrected"}
    assert wg == set(range(8, 257, 8))   # every N


def test_check_references_json_and_text(capsys, monkeypatch):
    fake = matrix.build(lays()[:3], {"cute": _report("cute", [Row("agree", "T", "A", "h.hpp", 1, lays()[0].id)]),
                                     "triton": "no triton"})
    monkeypatch.setattr(api, "references", lambda *a, **k: fake)
    path = str(SPECS / "mma.m16n8k8.toml")
    rc, out, _ = cli(capsys, "check", path, "--references", "--format", "json")
    doc = json.loads(out)
    assert rc == 0 and doc["references"]["unavailable"] == {"triton": "no triton"}
    by = {e["id"]: e for e in doc["layouts"]}
    assert all("references" not in e for e in by.values() if e["id"] not in fake.cells)
    rc, out, _ = cli(capsys, "check", path, "--references")
    assert "backed by two or more independent references: 0 of 3 layouts" in out
    assert "fewer than two independent references (3):" in out


@pytest.mark.slow
@pytest.mark.xdist_group("compiled-cute")
def test_committed_matrix_is_what_the_installed_references_say():
    """reports/references.json is `ptx-verify crosscheck --matrix --format json`; each reference installed here
    (at the committed version) must give the committed column."""
    m = _matrix()
    committed = json.loads(COMMITTED.read_text())["references"]
    now = m.to_json()["references"]
    compared = [r for r in NAMES if r in now["ran"] and now["ran"][r] == committed["ran"].get(r)]
    if not compared:
        pytest.skip("no reference installed at its committed version: " + json.dumps(committed["ran"]))
    assert [e["id"] for e in now["layouts"]] == [e["id"] for e in committed["layouts"]], \
        "regenerate: ptx-verify crosscheck --matrix --format json > reports/references.json"
    for new, old in zip(now["layouts"], committed["layouts"]):
        for r in compared:
            assert new["cells"][r] == old["cells"][r], (new["id"], r, "regenerate: ptx-verify crosscheck --matrix "
                                                        "--format json > reports/references.json")
    if len(compared) == len(NAMES):
        assert now == committed


def test_report_has_the_matrix_section(capsys, tmp_path):
    """``report --references FILE``: the section Independent references, rows of the layouts checked."""
    fake = matrix.build(lays(), {"cute": _report("cute", [Row("agree", "T", "A", "h.hpp", 1, "mma.m16n8k8.A.tf32")]),
                                 "triton": "no triton"})
    (tmp_path / "refs.json").write_text(json.dumps(fake.to_json()))
    out = tmp_path / "rep"
    rc, stdout, err = cli(capsys, "report", str(SPECS / "mma.m16n8k8.toml"), "--references",
                          str(tmp_path / "refs.json"), "--out", str(out))
    assert rc == 0, err
    md = (out / "report.md").read_text()
    section = md.split("## Independent references", 1)[1].split("\n---", 1)[0]
    rows = [ln for ln in section.splitlines() if ln.startswith("| mma")]
    assert len(rows) == 9 and "| mma.m16n8k8.A.tf32 | = | ? | 1 |" in section
    assert "wgmma" not in section                                   # only the layouts this report checked
    assert '<h2 id="references">Independent references</h2>' in (out / "report.html").read_text()
    assert "Each reviewed correction in place of its doc layout: 0 of " in section
    (tmp_path / "bad.json").write_text('{"schema": 1}')
    rc, stdout, err = cli(capsys, "report", str(SPECS / "mma.m16n8k8.toml"), "--references",
                          str(tmp_path / "bad.json"), "--out", str(tmp_path / "rep2"))
    assert (rc, stdout) == (2, "") and "not a `ptx-verify crosscheck --matrix --format json` document" in err
    assert not (tmp_path / "rep2").exists()


def test_a_toolchain_that_fails_makes_the_reference_unavailable_with_the_reason(monkeypatch):
    def broken(*a, **k):
        raise compile_cute.ToolchainError("CuTe's headers do not compile here: cute/x.hpp:1: error: boom")
    monkeypatch.setattr(compile_cute, "run", broken)
    m = api.references(specs(), names=["cute"])
    assert set(m.status(lays()[0].id).values()) == {"unavailable"}
    assert m.unavailable["cute"] and m.findings() == []


def _maps() -> list:
    return api.map_layouts(specs())


def test_tensor_memory_allocations_as_data_path_and_packing_maps():
    """CuTe's tmem_frg layouts ((M, N) -> TMEM address, as the compiler prints them) against the maps."""
    def rows(name: str, printed: str) -> list[Row]:
        req = Request("tmem", name, "", "cute/atom/mma_traits_sm100.hpp", 462)
        return conform_rows([cute_tmem.datapath_layout(req, Printed("tmem", name, {"Layout": (printed, 1)}),
                                                      _maps())], 10.0)
    f = rows("F M=64 N=32 b=32 [tcgen05.datapath.F]", "(((_16,_4),_32),_1,_1):(((_65536,_2097152),_1),_0,_0)")
    assert [(r.kind, r.spec, r.params) for r in f] == [("agree", "tcgen05.datapath.F", (("BASE", 0), ("N", 32)))]
    b = rows("B M=64 N=32 b=32 [tcgen05.datapath.B]", "((_64,(_16,_2)),_1,_1):((_65536,(_1,_4194304)),_0,_0)")
    assert (b[0].kind, b[0].params) == ("agree", (("N", 32),))       # two CTAs: rows 64-127 in CTA 1
    packed = rows("P M=128 N=64 b=16 [tcgen05.packing.A.b16.packed]", "((_128,_64),_1,_1):((_131072,_1),_0,_0)")
    assert packed[0].kind == "agree"
    unpacked = rows("P M=128 N=64 b=16 [tcgen05.packing.A.b16.packed]", "((_128,_64),_1,_1):((_131072,_2),_0,_0)")
    assert unpacked[0].kind == "differ" and "slot" in unpacked[0].detail
    wrong = rows("D M=128 N=16 b=32 [tcgen05.datapath.D]", "((_128,_16),_1,_1):((_1,_65536),_0,_0)")
    assert wrong[0].kind == "differ"


def test_triton_tensor_memory_bases_keep_the_smallest_lane():
    doc = {"rows": [[1, 0], [2, 0], [4, 0], [8, 0], [0, 0], [16, 0], [32, 0]], "cols": [[0, 1]]}
    got = triton_ref._tmem_map_rows(doc, 2)
    assert len(got) == 128 and got[:2] == ((0, 0, 0, 0), (0, 1, 0, 1))
    assert (16, 0, 32, 0) in got and all(lane % 32 < 16 for _, _, lane, _ in got)


def test_sparse_a_is_read_as_its_compressed_fragment():
    """CuTe's sparse A (sparse_elem<2, T>) maps to the logical M x K tile, two values per stored element."""
    from verify.checks.crosscheck import sparse_a_import
    from verify.layout.notations import TraitEntry, parse_cute, to_layout
    like = next(x for x in lays() if x.id == "mma.sp.m16n8k64.A.e4m3_e5m2_e3m2_e2m3_e2m1")
    thr = parse_cute("_32:_1")
    good = parse_cute("((_4,_8),(_8,_2,_2)):((_128,_1),(_16,_8,_512))")   # SM120 sparse f8 ALayout, 4.2

    def entry(a):
        return TraitEntry("X_SPARSE", ("cute::sparse_elem<2, cutlass::float_e4m3_t>",) * 2 + ("float",) * 2,
                          (16, 8, 64), thr, a, a, a, 1)
    res = api.conform(like, to_layout(sparse_a_import(entry(good), like), like))
    assert res.status == "equal"
    # two values of one stored element that are not neighbours in K: not a sparse fragment at all
    with pytest.raises(NotationError, match="different compressed cells"):
        sparse_a_import(entry(parse_cute("((_4,_8),(_8,_2,_2)):((_128,_1),(_512,_8,_16))")), like)


@pytest.mark.slow
def test_block_scale_factors_from_cutes_sf_layouts():
    """SM120 block-scaled traits: which row (SFA) / column (SFB) each lane serves, every thread-id/byte-id."""
    def rows(sfa: str) -> list[Row]:
        name = "SM120_16x8x32_TN_VS<cutlass::float_e4m3_t, cutlass::float_e4m3_t, float, cutlass::float_ue8m0_t, 32>"
        req = Request("mma", name, name, "cute/atom/mma_traits_sm120.hpp", 171, type_args=("a", "b", "c"))
        p = Printed("mma", name, {"Shape_MNK": ("(_16,_8,_32)", 1), "SFALayout": (sfa, 2),
                                  "SFBLayout": ("((_4,_8),_32):((_0,_1),_8)", 3)}, {"SFVecSize": "32"})
        return conform_rows(cute_ref.scale_factor_layouts(req, p, lays()), 10.0)
    good = rows("((_2,_2,_8),_32):((_8,_0,_1),_16)")                 # CUTLASS 4.2, mma_traits_sm120.hpp:194
    assert {(r.operand, r.kind) for r in good} == {("SFA", "agree"), ("SFB", "agree")}
    assert len([r for r in good if r.operand == "SFA"]) == 8        # THREAD_ID_A x BYTE_ID_A
    swapped = rows("((_2,_2,_8),_32):((_1,_0,_2),_16)")              # rows g and 8 (lane % 2) exchanged
    assert {r.kind for r in swapped if r.operand == "SFA"} == {"differ"}


def test_block_scale_storage_from_cutlass():
    """CUTLASS's 128 x 4 scale-factor tile (SfKMajorAtom, as the compiler prints it) over scale-factor coordinates."""
    def rows(printed: str) -> list[Row]:
        req = Request("expr", "SfKMajorAtom [storage.sf.cutlass.128x4.tile]", "X", cute_ref.SF_HEADER, 54)
        ev = cute_ref.storage_layout(req, Printed("expr", req.name, {"Layout": (printed, 1)}), _maps())
        return conform_rows([ev], 10.0)
    assert rows("((_32,_4),(_32,_4)):((_16,_4),(_0,_1))")[0].kind == "agree"
    assert rows("((_32,_4),(_32,_4)):((_4,_16),(_0,_1))")[0].kind == "differ"


def test_tcgen05_cp_warpx4_from_valid():
    def rows(valid: str) -> list[Row]:
        name = "SM100_UTCCP_4x32dp128bit_1cta"
        return _rows_all(name, ThrID="_1:_0", ValID=valid)
    assert rows("(_32,_128,_4):(_2097152,_1,_67108864)")[0].kind == "agree"        # CUTLASS 4.2
    assert rows("(_32,_128,_4):(_2097152,_1,_2097152)")[0].kind in ("differ", "malformed")   # copies overlap
    assert rows("(_32,_128,_4):(_1,_32,_67108864)")[0].kind == "malformed"         # a byte's bits scattered


@pytest.mark.parametrize("name,valid", [
    ("SM100_UTCCP_128dp256bit_1cta", "(_128,_256):(_2097152,_1)"),
    ("SM100_UTCCP_128dp128bit_1cta", "(_128,_128):(_2097152,_1)"),
    ("SM100_UTCCP_4dp256bit_1cta", "(_128,_256):(_2097152,_1)"),
    ("SM100_UTCCP_2x64dp128bitlw0213_1cta", "(_64,_128,_2):(_2097152,_1,_134217728)"),
    ("SM100_UTCCP_2x64dp128bitlw0123_1cta", "(_32,_128,_2,_2):(_2097152,_1,_134217728,_67108864)"),
])
def test_every_tcgen05_cp_shape_from_valid(name, valid):
    """CUTLASS 4.2's ValID of each cta_group::1 UTCCP atom agrees with the catalog's copy layout; the broadcast and
    the repeat of the two .warpx2 forms swapped, or the rows' lanes made the bits', differ or are malformed."""
    assert _rows_all(name, ThrID="_1:_0", ValID=valid)[0].kind == "agree"
    if "2x64" in name:
        swapped = valid.replace("_134217728,_67108864", "_67108864,_134217728") if "0123" in name else \
            valid.replace("_134217728)", "_67108864)")
        assert _rows_all(name, ThrID="_1:_0", ValID=swapped)[0].kind in ("differ", "malformed")
    assert _rows_all(name, ThrID="_1:_0", ValID=valid.replace("(_2097152,_1", "(_1,_2097152"))[0].kind == "malformed"


def test_a_cta_pair_s_tcgen05_cp_is_not_in_the_catalog():
    (row,) = _rows_all("SM100_UTCCP_128dp256bit_2cta", ThrID="_2:_1", ValID="(_128,_256):(_2097152,_1)")
    assert row.kind == "unmatched"


def _rows_all(name: str, **fields: str) -> list[Row]:
    return conform_rows(cute_copy.copy_layouts(Request("copy", name, name, "h.hpp", 7), _printed(name, **fields),
                                              [*lays(), *_maps()]), 10.0)


def test_references_takes_reports_already_evaluated():
    """``api.references(reports=...)``: a reference given already evaluated is used as given, not run again."""
    lid = lays()[0].id
    given = _report("tensor-layouts", [Row("agree", "T", "A", "h.hpp", 1, lid)])
    m = api.references(specs(), names=["tensor-layouts"], reports={"tensor-layouts": given})
    assert m.status(lid) == {"tensor-layouts": "agrees"} and m.versions["tensor-layouts"] == "tensor-layouts 1.0"
    assert {m.status(x.id)["tensor-layouts"] for x in lays()[1:]} == {"absent"}


@pytest.mark.slow
def test_references_in_worker_processes_give_the_matrix_of_one_process():
    """``references(jobs=2)`` evaluates each reference in its own worker process (its solver state dies with
    it); the matrix is the one a single process builds, unavailable references included."""
    names = ("cute-text", "tensor-layouts", "tilelang")
    for name in names:
        _need(name)
    one = api.references(specs(), names=names, jobs=1)
    two = api.references(specs(), names=names, jobs=2)
    assert json.dumps(two.to_json(), sort_keys=True) == json.dumps(one.to_json(), sort_keys=True)
    assert set(one.to_json()["references"]["ran"]) >= set(names)


def test_refs_files_pins_are_the_readers_versions():
    """pyproject's ``refs-files`` (installed with --no-deps by .ci/run) pins each reference read from files at the
    version its reader names in its install hint."""
    import tomllib

    from verify.checks.references import flashinfer, mosaic, tilelang, tinygrad
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["refs-files"]
    assert extra == [f"tilelang=={tilelang.VERSION}", f"{mosaic.DIST}=={mosaic.VERSION}",
                     f"{flashinfer.DIST}=={flashinfer.VERSION}", f"tinygrad=={tinygrad.VERSION}"]
    assert "refs-files" in (ROOT / ".ci" / "run").read_text()
