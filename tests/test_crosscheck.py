"""``crosscheck``: CuTe's MMA_Traits headers against the spec, trait operand by trait operand.

The test data holds the headers of the nvidia-cutlass 4.2.0 wheel and of current CUTLASS main
(``tests/data/notations/README.md``): 4.2 still has PR #3140's int4 B bug (8 traits), main has
the fix; both have the malformed m16n8k128 b1 trait.
"""
from __future__ import annotations

import functools
import json
import os
import shutil
from pathlib import Path

import pytest
from conftest import SPECS, cli

from verify import api
from verify.checks.crosscheck import SpecIndex, _variant

DATA = Path(__file__).resolve().parent / "data" / "notations"
WHEEL, MAIN = DATA / "cutlass-4.2.0", DATA / "cutlass-main"
PR3140 = sorted(f"SM80_16x8x32_S32{a}{b}S32_TN{s}" for a in ("S4", "U4") for b in ("S4", "U4") for s in ("", "_SATURATE"))


@functools.cache
def specs() -> tuple:
    return tuple(api.load(SPECS))


@functools.cache
def report(root: Path):
    return api.crosscheck(root, list(specs()))



def test_wheel_4_2_has_the_pr3140_bug_in_eight_traits():
    rep = report(WHEEL)
    differ = [r for r in rep.rows if r.kind == "differ"]
    assert sorted(r.trait for r in differ) == PR3140 and {r.operand for r in differ} == {"B"}
    assert all(r.status == "differs" for r in differ)
    # the difference, and that CuTe's B itself is no bijection (conform checks the given too)
    assert {r.detail for r in differ} == {"first difference: lane 1 element b0: spec (8, 0), given (4, 0); the CuTe "
                                          "layout itself: injective refuted (lane 0 element b4 and lane 1 element b0 "
                                          "both land at cell (4, 0)); surjective refuted (cell (20, 0) is held by no lane)"}
    assert {r.layout for r in differ} == {"((4,8),(8)):((32,1),(8))"}
    assert rep.count("agree") >= 200 and rep.exit_code() == 1


def test_main_has_the_fix():
    rep = report(MAIN)
    assert rep.count("differ") == 0 and rep.count("agree") >= 150
    b = [r for r in rep.rows if r.trait == "SM80_16x8x32_S32S4S4S32_TN" and r.operand == "B"]
    assert b[0].kind == "agree" and b[0].layout == "((4,8),(8)):((64,1),(8))"


def test_malformed_traits_are_listed_with_their_header_position():
    for rep in (report(WHEEL), report(MAIN)):
        bad = [r for r in rep.rows if r.kind == "malformed"]
        assert [r.trait for r in bad] == ["SM80_16x8x128_S32U1U1S32_TN_XORPOPC", "SM80_16x8x128_S32U1U1S32_TN_ANDPOPC"]
        assert (bad[0].header, bad[0].line) == ("mma_traits_sm80.hpp", 670)
        assert "mma_traits_sm80.hpp:680:47: error: stride ((16,8)) is not congruent with shape (32,2)" in bad[0].detail


def test_sm80_traits_match_the_catalog_or_its_correction():
    rows = {(r.trait, r.operand): r for r in report(MAIN).rows}
    assert rows[("SM80_16x8x256_S32U1U1S32_TN_XORPOPC", "A")].spec.endswith("@corrected")   # the doc's b1 A is wrong
    assert rows[("SM80_16x8x256_S32U1U1S32_TN_XORPOPC", "A")].kind == "agree"
    assert rows[("SM80_16x8x16_F32F16F16F32_TN", "A")].spec == "mma.m16n8k16.A.f16_bf16"
    by_id = {x.id: x for x in api.layouts(specs())}
    c16, a16 = rows[("SM80_16x8x16_F16F16F16F16_TN", "C")], rows[("SM80_16x8x16_F16F16F16F16_TN", "A")]
    assert c16.kind == "agree" and by_id[c16.spec].types == ("f16",) and by_id[c16.spec].operand == "C"
    assert by_id[c16.spec].provenance.source.section == by_id[a16.spec].provenance.source.section   # the f16 section's, not the f8 one's
    sm80 = [r for r in report(MAIN).rows if r.trait.startswith("SM80_") and r.kind in ("agree", "differ")]
    assert len(sm80) >= 150 and all(r.kind == "agree" for r in sm80)


def test_sm70_quadpair_traits_are_lifted_and_match_their_variants():
    rows = [r for r in report(WHEEL).rows if r.trait.startswith("SM70_")]
    assert len(rows) == 24 and all(r.kind == "agree" for r in rows)
    by = {(r.trait, r.operand): r.spec for r in rows}
    assert by[("SM70_8x8x4_F16F16F16F16_TN", "A")].endswith("A.f16.row")
    assert by[("SM70_8x8x4_F16F16F16F16_TN", "B")].endswith("B.f16.col")
    assert by[("SM70_8x8x4_F16F16F16F16_NT", "A")].endswith("A.f16.col")
    assert "f32" in by[("SM70_8x8x4_F32F16F16F32_NN", "C")]


def test_unmatched_traits_say_why():
    reasons = {r.trait: r.detail for r in report(WHEEL).rows if r.kind == "unmatched"}
    assert reasons["SM61_DP4A"] == "no mma spec of shape m1n1k4"
    assert reasons["SM80_8x8x4_C64C64C64C64_TN"] == "value type 'complex<double>' has no PTX type"


def test_variant_and_index():
    assert [_variant("SM70_8x8x4_F16F16F16F16_" + m, op) for m in ("TN", "NT") for op in "AB"] == \
        ["row", "col", "col", "row"]
    assert _variant("SM80_16x8x8_F16F16F16F16_TN", "C") is None
    index = SpecIndex(api.layouts(specs()))
    assert index.match("m16n8k256", "A", "b1", None, "b1").corrected
    assert index.match("m64n8k16", "A", "f16", None, "f16") is None


def test_cli_text_json_and_determinism(capsys):
    rc, out, err = cli(capsys, "crosscheck", "--cute", str(WHEEL))
    assert (rc, err) == (1, "")
    lines = out.splitlines()
    assert lines[0] == f"crosscheck: CuTe MMA_Traits in {WHEEL} (6 headers) against the spec"
    assert any(ln.startswith("  differ     SM80_16x8x32_S32S4S4S32_TN ") and "lane 1 element b0" in ln for ln in lines)
    assert any(ln.startswith("  malformed  SM80_16x8x128_S32U1U1S32_TN_XORPOPC ") and
               "mma_traits_sm80.hpp:670:" in ln for ln in lines)
    assert lines[-1].startswith("summary: ") and "8 differ, 2 malformed" in lines[-1]
    runs = [cli(capsys, "crosscheck", "--cute", str(WHEEL), "--format", "json")[1] for _ in range(2)]
    assert runs[0] == runs[1]
    doc = json.loads(runs[0])["crosscheck"]
    assert doc["summary"]["differ"] == 8 and doc["summary"]["malformed"] == 2
    assert doc["headers"] == sorted(doc["headers"]) and len(doc["headers"]) == 6


def test_main_headers_alone_exit_1_only_for_the_malformed_trait(capsys, tmp_path):
    shutil.copy(MAIN / "mma_traits_sm80.hpp", tmp_path / "mma_traits_sm80.hpp")
    rc, out, _ = cli(capsys, "crosscheck", "--cute", str(tmp_path))
    assert rc == 1 and " 0 differ, 2 malformed" in out


def test_no_headers_says_how_to_get_them(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(api, "cutlass_headers", lambda: None)
    rc, out, err = cli(capsys, "crosscheck")
    assert rc == 2 and out == "" and "pip install 'ptx-layout-verify[cutlass]'" in err and err.count("\n") == 1
    rc, out, err = cli(capsys, "crosscheck", "--cute", str(tmp_path))
    assert rc == 2 and out == "" and "no mma_traits_sm*.hpp under" in err
    rc, out, err = cli(capsys, "crosscheck", "--cute", str(tmp_path / "missing"))
    assert rc == 2 and out == "" and "no such file" in err


def test_unreadable_header_is_one_positioned_line(capsys, tmp_path):
    (tmp_path / "mma_traits_sm80.hpp").write_bytes(b"struct X {};\n// caf\xe9\n")
    rc, out, err = cli(capsys, "crosscheck", "--cute", str(tmp_path))
    assert rc == 2 and out == "" and err.startswith(str(tmp_path / "mma_traits_sm80.hpp") + ":2:")
    assert "Traceback" not in err


@pytest.mark.skipif(not os.environ.get("PTX_CUTLASS_INCLUDE"), reason="set PTX_CUTLASS_INCLUDE to a CUTLASS include dir (docs/ci.md)")
def test_whole_cutlass_include_dir():  # e.g. the nvidia-cutlass 4.2 wheel's cutlass_library/source/include
    rep = api.crosscheck(os.environ["PTX_CUTLASS_INCLUDE"], list(specs()))
    assert rep.count("agree") >= 230 and rep.count("malformed") == 2
    assert sorted(r.trait for r in rep.rows if r.kind == "differ") in (PR3140, [])   # 4.2: the bug; main: fixed
    assert any(r.kind == "agree" and r.spec.startswith("wgmma.") for r in rep.rows)   # GMMA traits are matched


def test_installed_nvidia_cutlass_headers_are_found_without_importing(capsys, tmp_path, monkeypatch):
    pkg = tmp_path / "cutlass_library"
    (pkg / "source" / "include" / "cute" / "atom").mkdir(parents=True)
    (pkg / "__init__.py").write_text("raise RuntimeError('must not be imported')\n")
    shutil.copy(MAIN / "mma_traits_sm80.hpp", pkg / "source" / "include" / "cute" / "atom")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert api.cutlass_headers() == pkg / "source" / "include"
    rc, out, err = cli(capsys, "crosscheck")
    assert (rc, err) == (1, "") and "cute/atom/mma_traits_sm80.hpp:670:" in out


def test_one_header_file_and_unreadable_paths(capsys, tmp_path):
    rc, out, err = cli(capsys, "crosscheck", "--cute", str(MAIN / "mma_traits_sm80.hpp"))
    assert rc == 1 and err == "" and "mma_traits_sm80.hpp:670:" in out and " 0 differ, 2 malformed" in out
    (tmp_path / "mma_traits_sm80.hpp").mkdir()
    rc, out, err = cli(capsys, "crosscheck", "--cute", str(tmp_path))
    assert rc == 2 and out == "" and err.startswith(str(tmp_path / "mma_traits_sm80.hpp") + ":1:1: error:")
