"""handoff between two block layouts of one kernel (issue 18, item 4): free, shuffle within warps, or through
shared memory, each decided by Z3 and the enumeration.  Inputs: the Ampere dump Triton 3.9 printed
(tests/data/ttgir/ampere_matmul_f16.ttgir) and a small hand-written one (handoff_32x16.ttgir)."""
from __future__ import annotations

import json

import pytest

from verify import api
from verify.outputs.text_results import result_text
from verify.checks.handoff import WARP
from verify.cli.main import main

AMPERE = "tests/data/ttgir/ampere_matmul_f16.ttgir"
SMALL = "tests/data/ttgir/handoff_32x16.ttgir"
C = "mma.m16n8k16.float.C.f32"


@pytest.fixture(scope="module")
def spec():
    return api.layout(api.load("specs"), C)


def read(spec, path, tensor):
    with open(path, encoding="utf-8") as f:
        return api.triton(f.read(), spec, tensor=tensor)


def engines_agree(r):
    assert r.engines["z3"] == r.engines["enumeration"]
    assert r.engines["z3_plan"] == "proved"
    if "z3_warps" in r.engines:
        assert r.engines["z3_warps"] == r.engines["enumeration_warps"]


def test_identical_block_layouts_are_free(spec):
    mma = read(spec, AMPERE, "#mma")
    r = api.handoff(mma, mma)
    assert r.status == "free" and r.identity() and r.exit_code() == 0
    engines_agree(r)
    assert "the same layout" in result_text(r)


def test_ampere_mma_to_blocked_store_needs_shared_memory(spec):
    """The accumulator (#mma, warps 2 x 4) into the store's #blocked1 (each warp a row of 256 columns): before,
    this was `shuffle`, which cannot move values between warps."""
    r = api.handoff(read(spec, AMPERE, "#mma"), read(spec, AMPERE, "128x256, #blocked1"))
    assert r.status == "shared" and r.exit_code() == 1
    engines_agree(r)
    assert r.engines["z3_warps"] == "refuted"
    c = r.counterexample
    assert (c["lane"], c["i"], c["cell"], c["held_by"]["lane"]) == (0, 16, {"row": 16, "col": 0}, 128)
    assert c["lane"] // WARP != c["held_by"]["lane"] // WARP
    pairs = r.warp_exchange()
    assert len(pairs) == 56 and all(k == 512 for _, _, k in pairs)  # every warp sends 512 values to every other
    assert "through shared memory: 28672 values cross warps" in result_text(r)


def test_same_warp_tiles_shuffle_within_warps(spec):
    r = api.handoff(read(spec, SMALL, "#mma"), read(spec, SMALL, "#blocked"))
    assert r.status == "shuffle" and r.exit_code() == 1
    engines_agree(r)
    assert r.engines["z3_warps"] == "proved"
    assert all(s.src_lane // WARP == s.lane // WARP for s in r.plan if s.src_lane is not None)
    assert r.warp_exchange() == ()
    text = result_text(r)
    assert "every value stays inside its warp (4 warps)" in text and "lane 0: c2 <- lane 4 C c0" in text


def test_warps_stacked_along_m_cross_warps(spec):
    """The mutation of #blocked that stacks the warps along M (warpsPerCTA [4, 1]) is caught."""
    r = api.handoff(read(spec, SMALL, "#mma"), read(spec, SMALL, "#blocked1"))
    assert r.status == "shared"
    engines_agree(r)
    assert (r.counterexample["lane"], r.counterexample["i"], r.counterexample["held_by"]["lane"]) == (0, 4, 32)


def test_a_mutated_layout_is_not_free(spec):
    """#mma with its warps transposed ([4, 2] for [2, 4]) is not the same layout: caught, across warps."""
    mma = read(spec, AMPERE, "#mma")
    with open(AMPERE, encoding="utf-8") as f:
        text = f.read().replace("warpsPerCTA = [2, 4], instrShape", "warpsPerCTA = [4, 2], instrShape")
    r = api.handoff(mma, api.triton(text, spec, tensor="#mma"))
    assert r.status == "shared"
    engines_agree(r)


def test_z3_decides_the_warp_question_itself(spec):
    """Z3's own query (not the enumeration's plan) finds the first cell that crosses warps: a layout where warp
    1 holds warp 0's cells by relabelling threads is caught by z3_warps too."""
    from verify.checks import handoff as H
    from verify.checks.fragment import width
    from verify.engines import smt
    a, b = read(spec, SMALL, "#mma"), read(spec, SMALL, "#blocked1")
    res, pt = H._z3_first_not_in_warp(a, b, max(width(a), width(b)), smt.Budget(30))
    assert (res, pt) == ("sat", (0, 4))
    res, pt = H._z3_first_not_in_warp(a, read(spec, SMALL, "#blocked"), max(width(a), width(b)), smt.Budget(30))
    assert (res, pt) == ("unsat", None)


def run(capsys, *argv):
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def test_cli_from_one_dump(capsys):
    rc, out, _ = run(capsys, "handoff", C, "--triton", SMALL, "--tensor", "#mma", "--to-tensor", "#blocked1")
    assert rc == 1
    assert out.splitlines()[0] == f"handoff triton {SMALL} #mma -> triton {SMALL} #blocked1: shared"
    rc, out, _ = run(capsys, "handoff", C, "--triton", SMALL, "--tensor", "#mma", "--to-triton", SMALL,
                     "--to-tensor", "#mma", "--format", "json")
    data = json.loads(out)["handoff"]
    assert rc == 0 and data["status"] == "free" and data["engines"]["z3"] == "proved"


def test_cli_bad_inputs(capsys):
    rc, _, err = run(capsys, "handoff", C, "--triton", SMALL, "--tensor", "#mma", "--to-tensor", "#nope")
    assert rc == 2 and err.startswith(f"{SMALL}:1:1: error: ") and "Traceback" not in err
    rc, _, err = run(capsys, "handoff", C)
    assert rc == 2 and "give TO_ID" in err
    rc, _, err = run(capsys, "handoff", C, C, "--to-tensor", "#mma")
    assert rc == 2 and "give TO's layout with a notation" in err
    rc, _, err = run(capsys, "handoff", C, "--triton", SMALL, "--tensor", "#mma", "--to-thr-id", "(4,2):(1,16)")
    assert rc == 2 and "--to-thr-id goes with --to-cute" in err
