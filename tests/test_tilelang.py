"""TileLang Fragment notation (--tilelang): TileLang's print read with our own grammar, (row, col, rep) ->
(thread, index) inverted by the enumeration and confirmed by Z3, conformed as a block tile.

The fixtures in tests/data/tilelang/ are real prints (copied from a TileLang compile log; each file says where
from); the format is FragmentNode::DebugOutput in tile-ai/tilelang src/layout/layout.cc."""
from __future__ import annotations

import pytest

from verify import api
from verify.cli.main import main
from verify.layout.notations.errors import NotationError
from verify.layout.notations.tilelang import parse_fragment
from verify.layout.model import cell_at

ACC = "tests/data/tilelang/acc_16x64_4warps.txt"
REP = "tests/data/tilelang/acc_16x64_replicated.txt"
C = "mma.m16n8k16.float.C.f32"
A = "mma.m16n8k16.A.f16_bf16"
# The m16n8k16 A operand in TileLang's older tuple print ("Fragment((16, 16) -> (8,), ...)"); the forward_thread is
# the one a TileLang user's log shows for a 16 x 16 one-warp fragment, the forward_index is written here.
A_PRINT = ("Fragment((16, 16) -> (8,), replicate: 1, thread: 32, forward_thread: _i % 8 * 4 + _j % 8 // 2, "
           "forward_index: [_j // 8 * 4 + _i // 8 * 2 + _j % 2])")


@pytest.fixture(scope="module")
def specs():
    return api.load("specs")


def text(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def test_accumulator_over_four_warps_is_tiled(specs):
    spec = api.layout(specs, C)
    given = api.tilelang(text(ACC), spec)
    assert (given.threads, given.n_elements, given.rows, given.cols) == (128, 8, 16, 64)
    assert cell_at(given, 33, 0) == (0, 10)   # thread 33 = warp 1 lane 1: row 0, col 8 + 2
    assert cell_at(given, 0, 4) == (0, 32)    # element 4: the second repeat, 32 columns on
    r = api.conform(spec, given)
    assert r.status == "tiled" and r.exit_code() == 0
    assert r.engines["z3"] == r.engines["enumeration"] == "proved"
    assert r.tiling.units == 4 and r.tiling.multiplicity == 1


def test_replicated_loop_layout_is_tiled_with_copies(specs):
    spec = api.layout(specs, C)
    r = api.conform(spec, api.tilelang(text(REP), spec))
    assert r.status == "tiled" and r.tiling.multiplicity == 4


def test_one_warp_a_operand_in_the_tuple_print_is_equal(specs):
    spec = api.layout(specs, A)
    r = api.conform(spec, api.tilelang(A_PRINT, spec))
    assert r.status == "equal" and r.engines["z3"] == r.engines["enumeration"] == "proved"


def test_a_bijective_but_wrong_fragment_differs(specs):
    spec = api.layout(specs, A)
    wrong = A_PRINT.replace("_i % 8 * 4 + _j % 8 // 2", "_j % 8 // 2 * 8 + _i % 8")  # lanes transposed
    r = api.conform(spec, api.tilelang(wrong, spec))
    assert r.status == "differs" and r.engines["z3"] == r.engines["enumeration"] == "refuted"


def test_a_print_that_is_not_a_bijection_is_refused(specs):
    spec = api.layout(specs, A)
    bad = A_PRINT.replace("+ _j % 2]", "+ _i % 2]")  # two cells on one (thread, index)
    with pytest.raises(NotationError, match="not a bijection.*land on the same point"):
        api.tilelang(bad, spec)


def test_floor_semantics_of_tvm_operators():
    """TVM's // and % are floor division and floor modulo: -1 // 4 = -1 and -1 % 4 = 3 (C would give 0 and -1)."""
    from verify.engines import oracle
    f = parse_fragment("Fragment([4, 4] -> [1], replicate: 1, thread: 16, forward_thread: (_i - 1) // 3 + 7, "
                       "forward_index: [(_j - 1) % 3])")
    ev = oracle.Evaluator(f.forward, 0, 0, {"row": 0, "col": 0, "rep": 0})
    assert (ev.value("thread"), ev.value("index")) == (6, 2)


@pytest.mark.parametrize("body, where, message", [
    ("Fragment([16, 64] -> [8], replicate: 1, thread: 64 + tk_i // 16 * 32, forward_thread: _i, forward_index: [_j])",
     (1, 49), "symbolic thread count"),  # at '64'

    ("Fragment([16, 16] -> [8], replicate: 1, thread: 32, forward_thread: _i * _k, forward_index: [_j])",
     (1, 74), "unknown name '_k'"),
    ("Fragment([16, 16] -> [8], replicate: 1, thread: 32, forward_thread: _i // _j, forward_index: [_j])",
     (1, 75), "only a positive constant divisor"),
    ("Fragment([16, 16] -> [8, 2], replicate: 1, thread: 32, forward_thread: _i, forward_index: [_j, _i])",
     (1, 22), "only one"),
    ("no fragment here", (1, 1), "no 'Fragment(' print"),
    ("Fragment([2] -> [1], replicate: 1, thread: 2, forward_thread: _i, forward_index: [0])\n"
     "Fragment([2] -> [1], replicate: 1, thread: 2, forward_thread: _i, forward_index: [0])", (2, 1), "2 'Fragment('"),
    ("Fragment([16, 16] -> [8], replicate: 1, thread: 32, forward_thread: _i, forward_index: [_j], "
     "thread_range: I.Range(32, 64))", (1, 108), "only a range 0..thread"),
])
def test_bad_prints_are_positioned_errors(body, where, message):
    with pytest.raises(NotationError) as e:
        parse_fragment(body, "f.txt")
    assert (e.value.line, e.value.col) == where and message in e.value.message


def test_cli(capsys, tmp_path):
    assert main(["conform", C, "--tilelang", ACC]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == f"conform {C} <- tilelang {ACC}: tiled"
    bad = tmp_path / "bad.txt"
    bad.write_text(A_PRINT.replace("+ _j % 2]", "+ _i % 2]"), encoding="utf-8")
    assert main(["conform", A, "--tilelang", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"{bad}:1:1: error: the Fragment is not a bijection") and "Traceback" not in err
