"""``ptx-verify kernel`` on compiled kernels (the fixtures of examples/kernels, made by make_fixtures.py): real
Triton and hand-written CUDA kernels are proved; changes planted in their PTX are each reported with the right first
wrong element and the chain that made it, and changes that keep the meaning stay proved; both engines agree on every
one (the verdict is ``error`` when they do not)."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import cli
from kernel_plants import KERNELS, agree, first, mutant
from verify import api
from verify.errors import SpecError
from verify.kernel.frontdoor import verify
from verify.kernel.launch import parse_launch
from verify.outputs.kernel import kernel_sarif, kernel_text



@pytest.mark.parametrize("name", ["triton_fp16_64", "mma_inline", "mma_inline_swizzled"])  # triton_fp16: docs test
def test_the_compiled_kernels_are_proved(name):
    r = verify(str(KERNELS / f"{name}.toml"))
    assert r.status == "proved", kernel_text(r)
    assert r.findings == ()
    agree(r)


# ----------------------------------------------------------------------------- planted changes

def swap_operand_registers(lines: list[str]) -> None:
    """Two registers of the first mma's A list swapped (a1 and a2)."""
    k = first(lines, r"mma\.sync")
    lines[k] = lines[k].replace("{ %r98, %r99, %r100, %r101 }", "{ %r98, %r100, %r99, %r101 }", 1)


def drop_trans(lines: list[str]) -> None:
    """.trans removed from the first ldmatrix of B."""
    k = first(lines, r"ldmatrix.*\.trans")
    lines[k] = lines[k].replace(".trans", "")


def add_trans(lines: list[str]) -> None:
    """.trans added to the first ldmatrix of A."""
    k = first(lines, r"ldmatrix\.sync\.aligned\.m8n8\.x4\.shared")
    lines[k] = lines[k].replace(".x4.shared", ".x4.trans.shared")


def move_offset(lines: list[str]) -> None:
    """A shared-memory address offset moved by 16 bytes (the second ldmatrix of A in the prologue)."""
    k = first(lines, r"\[%r13\+2048\]")
    lines[k] = lines[k].replace("+2048]", "+2064]")


def skip_step(lines: list[str]) -> None:
    """The K loop steps by 64 where the tile is 32: every other step skipped."""
    k = first(lines, r"add\.s32\s+%r261, %r261, 32;")
    lines[k] = lines[k].replace(", 32;", ", 64;")


def rename_register(lines: list[str]) -> None:
    """%r98 renamed %r262 everywhere (a register the function now declares)."""
    k = first(lines, r"\.reg \.b32\s+%r<262>")
    lines[k] = lines[k].replace("%r<262>", "%r<263>")
    for n, s in enumerate(lines):
        lines[n] = re.sub(r"%r98\b", "%r262", s)


def reorder_independent(lines: list[str]) -> None:
    """The first two mma instructions (different accumulators) trade places."""
    a, b = [k for k, s in enumerate(lines) if "mma.sync" in s][:2]
    lines[a], lines[b] = lines[b], lines[a]


# (change, first wrong element, words it starts with, how many wrong, the chain's opcodes and PTX lines)
PLANTED = [
    (swap_operand_registers, "C[0, 0]", "expected sum over k of A[0, k] * B[k, 0]; has A[8, 0] * B[8, 0] (A's m is 8, "
     "the element's is 0)", 2048,
     [("st.global.v4", 554), ("mma.m16n8k16", 316), ("ldmatrix.x4", 154), ("cp.async", 115)]),
    (drop_trans, "C[0, 0]", "expected sum over k of A[0, k] * B[k, 0]; has A[0, 1] * B[0, 1] (B's n is 1, the "
     "element's is 0)", 8192, [("st.global.v4", 554), ("mma.m16n8k16", 316), ("ldmatrix.x4", 166), ("cp.async", 133)]),
    (add_trans, "C[0, 0]", "expected sum over k of A[0, k] * B[k, 0]; has A[1, 0] * B[1, 0] (A's m is 1, the "
     "element's is 0)", 8192,
     [("st.global.v4", 554), ("mma.m16n8k16", 316), ("ldmatrix.x4.trans", 154), ("cp.async", 115)]),
    (move_offset, "C[32, 0]", "expected sum over k of A[32, k] * B[k, 0]; has A[32, 8] * B[0, 0] (k 0 of B meets "
     "k 8 of A)", 8192, [("st.global.v4", 574), ("mma.m16n8k16", 336), ("ldmatrix.x4", 155), ("cp.async", 121)]),
    (skip_step, "C[0, 0]", "expected sum over k of A[0, k] * B[k, 0]; lacks A[0, 64] * B[64, 0]", 16384,
     [("st.global.v4", 554)]),
]


@pytest.mark.parametrize("change,element,words,count,chain", PLANTED, ids=[p[0].__name__ for p in PLANTED])
def test_a_planted_change_is_the_first_wrong_element_with_its_chain(tmp_path, change, element, words, count, chain):
    r = verify(mutant(tmp_path, "triton_fp16_64", change))
    assert r.status == "refuted"
    agree(r)
    (f,) = r.findings
    assert (f.kind, f.element, f.count) == ("wrong_element", element, count)
    assert f.words.startswith(words), f.words
    assert [(c.opcode, c.line) for c in f.chain] == chain
    assert all(c.source.endswith(("matmul.py:33", "matmul.py:29")) for c in f.chain)


@pytest.mark.parametrize("change", [rename_register, reorder_independent])
def test_a_change_that_keeps_the_meaning_stays_proved(tmp_path, change):
    r = verify(mutant(tmp_path, "triton_fp16_64", change))
    assert r.status == "proved", kernel_text(r)
    agree(r)


def test_a_swizzle_on_one_side_only_is_caught_where_both_sides_stay_proved():
    """mma_inline_swizzled swizzles sA where it is written and where ldmatrix reads it (proved above);
    mma_inline_read_swizzled only where it is read."""
    r = verify(str(KERNELS / "mma_inline_read_swizzled.toml"))
    agree(r)
    (f,) = r.findings
    assert (f.element, f.count) == ("C[1, 0]", 1024)
    assert f.words.startswith("expected sum over k of A[1, k] * B[k, 0]; has A[1, 8] * B[0, 0] (k 0 of B meets k 8 of A)")
    assert [c.opcode for c in f.chain] == ["st.global", "mma.m16n8k16", "ldmatrix.x4", "st.shared", "ld.global"]
    assert f.chain[2].words.startswith("(thread 1) read shared 0x30")
    assert f.chain[4].words.startswith("(thread 24) read A[1, 8]")


# ----------------------------------------------------------------------------- memory findings

def _inline_mutant(tmp_path: Path, change) -> str:
    return mutant(tmp_path, "mma_inline", change)


def _drop_nth(pattern: str, n: int):
    def change(lines: list[str]) -> None:
        hits = [k for k, s in enumerate(lines) if re.search(pattern, s)]
        del lines[hits[n]]
    change.__name__ = f"drop_{n}"
    return change


def test_a_missing_barrier_before_the_reads_is_a_race(tmp_path):
    r = verify(_inline_mutant(tmp_path, _drop_nth(r"bar\.sync", 0)))
    agree(r)
    kinds = [f.kind for f in r.findings]
    assert kinds[0] == "race"
    assert "reads shared" in r.findings[0].words and "with no bar.sync between" in r.findings[0].words


def test_a_missing_barrier_before_the_next_writes_is_a_race(tmp_path):
    r = verify(_inline_mutant(tmp_path, _drop_nth(r"bar\.sync", 1)))
    agree(r)
    assert r.findings[0].kind == "race" and "writes shared" in r.findings[0].words


def test_a_read_of_a_copy_still_in_flight_is_reported(tmp_path):
    r = verify(mutant(tmp_path, "triton_fp16_64", _drop_nth(r"cp\.async\.wait_group", 0)))
    agree(r)
    f = r.findings[0]
    assert f.kind == "read_in_flight"
    assert re.search(r"ldmatrix\.sync\.aligned\.m8n8\.x4\.shared\.b16 reads shared 0x[0-9a-f]+ before the cp.async at "
                     r"line 115 that writes it has completed", f.words)


def test_stores_to_the_wrong_place(tmp_path):
    """The first store of C moved one element on: C[r, c] never written, C[r, c + 1] written twice (its last value
    right); moved past the tensor: out of bounds."""
    def shift(by: int):
        def change(lines: list[str]) -> None:
            k = first(lines, r"st\.global\.f32\s+\[%rd\d+\],")
            lines[k] = re.sub(r"\[(%rd\d+)\]", rf"[\1+{by}]", lines[k])
        return change
    r = verify(_inline_mutant(tmp_path, shift(4)))
    agree(r)
    kinds = {f.kind: f for f in r.findings}
    assert set(kinds) == {"never_written", "written_twice"}
    assert (kinds["never_written"].element, kinds["never_written"].count) == ("C[0, 0]", 512)
    assert (kinds["written_twice"].element, kinds["written_twice"].count) == ("C[0, 1]", 512)
    assert kinds["written_twice"].words.startswith("written 2 times (the last by CTA 0, thread 0)")
    r = verify(_inline_mutant(tmp_path, shift(64 * 32 * 4)))
    agree(r)
    kinds = {f.kind: f for f in r.findings}
    assert set(kinds) == {"global_out_of_bounds", "never_written"}
    assert kinds["global_out_of_bounds"].words.startswith("st.global.f32 writes 0x") and \
        "(outside every tensor): no output tensor holds those 4 bytes" in kinds["global_out_of_bounds"].words


def test_a_store_into_an_input(tmp_path):
    def to_a(lines: list[str]) -> None:
        k = first(lines, r"ld\.param\.u64\s+%rd\d+, \[mma_gemm_param_2\]")
        lines[k] = lines[k].replace("mma_gemm_param_2", "mma_gemm_param_0")
    r = verify(_inline_mutant(tmp_path, to_a))
    agree(r)
    kinds = [f.kind for f in r.findings]
    assert "input_written" in kinds and "never_written" in kinds


# ----------------------------------------------------------------------------- the launch

LAUNCH = (KERNELS / "mma_inline.toml").read_text(encoding="utf-8")

BAD_LAUNCH = [
    (LAUNCH.replace("grid = [2, 2, 1]", "grid = [2, 2, 1]\ncolour = 3"), 4, 1, "unknown field 'colour'"),
    (LAUNCH.replace("grid = [2, 2, 1]", "grid = [0, 2]"), 3, 8, "'grid': 0 is out of range"),
    (LAUNCH.replace('type = "f16", shape = [64, 64]', 'type = "f17", shape = [64, 64]'), 7, 3, "type 'f17'"),
    (LAUNCH.replace("A[m, k] * B[k, n]", "A[m, k] * D[k, n]"), 5, 13, "computes names D, which is no tensor"),
    (LAUNCH.replace("A[m, k] * B[k, n]", "A[m, k] ** B[k, n]"), 5, 32, "expected a tensor name"),
    (LAUNCH.replace("shape = [64, 32] },\n  { tensor = \"C\"", "shape = [32, 32] },\n  { tensor = \"C\""), 5, 13,
     "index k is 64 in A and 32 in B"),
    (LAUNCH.replace('shape = [64, 64] }', 'shape = [64, 64], strides = [1, 32] }'), 7, 3, "place two elements at one"),
]


@pytest.mark.parametrize("text,line,col,message", BAD_LAUNCH)
def test_a_bad_launch_is_one_error_at_its_field(tmp_path, text, line, col, message):
    with pytest.raises(SpecError) as e:
        parse_launch(text, str(tmp_path / "bad.toml"))
    assert (e.value.line, e.value.col) == (line, col), e.value.one_line()
    assert message in e.value.message


def test_too_many_arguments_and_a_parameter_left_out(tmp_path):
    (tmp_path / "mma_inline.ptx").write_text((KERNELS / "mma_inline.ptx").read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "a.toml").write_text(LAUNCH.replace("64, 32, 64,", "64, 32, 64, 9,"), encoding="utf-8")
    with pytest.raises(SpecError) as e:
        verify(str(tmp_path / "a.toml"))
    assert (e.value.line, e.value.message) == (10, "7 arguments for 6 parameters of mma_gemm")
    (tmp_path / "b.toml").write_text(LAUNCH.replace("64, 32, 64,", "64, 32,"), encoding="utf-8")
    with pytest.raises(SpecError) as e:
        verify(str(tmp_path / "b.toml"))
    assert "parameter 5 of mma_gemm (mma_gemm_param_5, .u32) is not given" in e.value.message


def test_trailing_scratch_pointers_need_not_be_listed():
    """triton_fp16.ptx has 11 parameters; its launch lists 9 (Triton's two scratch pointers are null)."""
    text = (KERNELS / "triton_fp16.ptx").read_text(encoding="utf-8")
    assert text.count("_param_") >= 11 and len(parse_launch((KERNELS / "triton_fp16.toml").read_text(encoding="utf-8"),
                                                            str(KERNELS / "triton_fp16.toml")).args) == 9


# ----------------------------------------------------------------------------- command line, formats, API

def test_the_command_line_formats_and_exit_codes(capsys):
    proved = str(KERNELS / "mma_inline.toml")
    refuted = str(KERNELS / "mma_inline_read_swizzled.toml")
    rc, out, err = cli(capsys, "kernel", proved)
    assert rc == 0 and err == "" and out.splitlines()[1].startswith("proved: every one of the 2048 output elements")
    rc, out, _ = cli(capsys, "kernel", refuted)
    assert rc == 1 and "wrong element (1024 such): C[1, 0]: expected sum over k of A[1, k] * B[k, 0]" in out
    assert "  <- ldmatrix.x4 at line 406 [mma_inline.cu:35] (thread 1) read shared 0x30" in out
    rc, out, _ = cli(capsys, "kernel", refuted, "--format", "json")
    doc = json.loads(out)
    assert rc == 1 and doc["status"] == "refuted" and doc["findings"][0]["element"] == "C[1, 0]"
    assert [c["line"] for c in doc["findings"][0]["chain"]] == [455, 416, 406, 214, 209]
    rc, out, _ = cli(capsys, "kernel", refuted, "--format", "sarif")
    log = json.loads(out)
    (res,) = log["runs"][0]["results"]
    assert rc == 1 and res["ruleId"] == "ptx-layout/kernel/wrong_element"
    loc = res["locations"][0]["physicalLocation"]
    assert loc["region"] == {"startLine": 416, "startColumn": 2} and loc["artifactLocation"]["uri"].endswith(
        "mma_inline_read_swizzled.ptx")
    assert any(r["physicalLocation"]["artifactLocation"]["uri"] == "examples/kernels/mma_inline.cu"
               for r in res["relatedLocations"])


def test_the_same_launch_from_options_as_from_the_file(capsys):
    rc, out, _ = cli(capsys, "kernel", str(KERNELS / "mma_inline.ptx"), "--grid", "2,2", "--block", "128",
                     "--computes", "C[m, n] = A[m, k] * B[k, n]", "--arg", "A:f16:64x64", "--arg", "B:f16:64x32",
                     "--arg", "C:f32:64x32", "--arg", "64", "--arg", "32", "--arg", "64", "--format", "json")
    doc = json.loads(out)
    rc2, out2, _ = cli(capsys, "kernel", str(KERNELS / "mma_inline.toml"), "--format", "json")
    doc2 = json.loads(out2)
    assert rc == rc2 == 0
    doc.pop("launch"), doc2.pop("launch")
    assert doc == doc2


@pytest.mark.parametrize("argv,message", [
    (["--grid", "1"], "give a launch file"),
    (["X.toml", "--grid", "1"], "is a launch file"),
    (["k.cu", "--grid", "1"], "needs --arch"),
    (["k.ptx", "--arg", "A:f16"], "expected NAME:TYPE:SHAPE"),
    (["k.ptx", "--arg", "q8=1"], "'q8' is not a type"),
    (["k.ptx", "--grid", "1,2,3,4"], "expected 1 to 3 whole numbers"),
    (["k.ptx", "--constexpr", "BM=128"], "--constexpr is for --triton"),
])
def test_bad_options_are_one_line(capsys, argv, message):
    rc, out, err = cli(capsys, "kernel", *argv)
    assert rc == 2 and out == "" and message in err and err.count("\n") == 1


def test_the_api_takes_a_launch_file_or_its_fields():
    r = api.verify_kernel(str(KERNELS / "mma_inline.toml"))
    assert r.status == "proved"
    r2 = api.verify_kernel(ptx=KERNELS / "mma_inline_read_swizzled.ptx", grid=[2, 2], block=[128],
                           computes="C[m, n] = A[m, k] * B[k, n]",
                           args=[{"tensor": "A", "type": "f16", "shape": [64, 64]},
                                 {"tensor": "B", "type": "f16", "shape": [64, 32]},
                                 {"tensor": "C", "type": "f32", "shape": [64, 32]}, 64, 32, 64])
    assert r2.status == "refuted" and r2.findings[0].element == "C[1, 0]"
    with pytest.raises(SpecError) as e:
        api.verify_kernel(ptx=KERNELS / "mma_inline.ptx", grid=[2, 2], block=[128], computes="C[m, n] = A[m, k]",
                          args=[])
    assert e.value.path == "<api>" and "1 factors" in e.value.message


def test_the_output_is_deterministic():
    a = verify(str(KERNELS / "mma_inline_read_swizzled.toml"))
    b = verify(str(KERNELS / "mma_inline_read_swizzled.toml"))
    assert kernel_text(a) == kernel_text(b) and kernel_sarif(a) == kernel_sarif(b)


def test_inputs_are_read_by_the_safe_reader(tmp_path, capsys):
    (tmp_path / "d.toml").mkdir()
    rc, out, err = cli(capsys, "kernel", str(tmp_path / "d.toml"))
    assert rc == 2 and err == f"{tmp_path / 'd.toml'}:1:1: error: is a directory, not a file that can be read\n"
    (tmp_path / "k.toml").write_text(LAUNCH.replace('ptx = "mma_inline.ptx"', 'ptx = "missing.ptx"'), encoding="utf-8")
    rc, out, err = cli(capsys, "kernel", str(tmp_path / "k.toml"))
    assert rc == 2 and err == f"{tmp_path / 'missing.ptx'}:1:1: error: no such file or directory\n"
