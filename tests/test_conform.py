"""``conform``: is the layout someone wrote the spec's?  equal / permuted / replicated / differs.

Every notation round-trips (spec -> notation -> layout conforms ``equal``), the known bugs are
reproduced (wrong layout flagged with the right status and counterexample, the fix proved), every
status is decided by both engines (a lying engine is an ``error``), and bad input through the CLI
is one positioned line and exit 2, never a traceback.
"""
from __future__ import annotations

import dataclasses
import functools
import json
from pathlib import Path

import pytest
import tomllib
from conftest import SPECS, cli
from tiers import layouts_by_kind

from verify import api
from verify.checks.conform import conform, replication_candidates
from verify.results.conform import Permutation
from verify.formula import render
from verify.layout.fragment_maps import FormulaFragment as FormulaMap
from verify.layout.notations import NotationError
from verify.outputs import json as out_json

DATA = Path(__file__).resolve().parent / "data" / "notations"


# ============================================================================ helpers

@functools.cache
def catalog() -> tuple:
    return tuple(api.layouts(api.load(SPECS)))


def spec(shape: str, operand: str, ptype: str, variant: str | None = None, corrected: bool = False,
         instruction: str = "mma") -> api.Layout:
    """A spec layout by what it is (ids may be renamed; the properties are not)."""
    hits = [x for x in catalog() if x.instruction == instruction and str(x.shape) == shape and x.operand == operand
            and ptype in x.types and x.variant == variant and x.corrected == corrected]
    assert hits, (shape, operand, ptype, variant, corrected)
    return hits[0]



def index_code_of(lay: api.Layout) -> str:
    """A spec formula written as index code (``lane`` for ``%laneid``)."""
    lines = []
    for d in lay.formula.definitions:
        for k, c in enumerate(d.cases):
            text = render(c).replace("%laneid", "lane")
            lines.append(f"{d.name} = {text}" if k == 0 else f"    {text}")
    return "# generated from the spec\n" + "\n".join(lines) + "\n"


A16816 = ("m16n8k16", "A", "f16")
C16816 = ("m16n8k16", "C", "f32")


# ============================================================================ every notation round-trips

@pytest.mark.parametrize("spec", layouts_by_kind(lay for lay in catalog() if not lay.unspecified))  # wmma: no map
def test_every_spec_layout_round_trips_through_a_table(spec):
    """Each layout's own table (a family: its smallest instance) is equal to it, by both engines."""
    lay = spec.representative()
    text = out_json.to_json(out_json.table_json(lay, None))
    res = api.conform(lay, api.table(text, lay, source=f"{lay.id}.json"))
    assert res.status == "equal" and res.engines == {"z3": "proved", "enumeration": "proved"}, (lay.id, res.message)


def test_every_plain_spec_layout_round_trips_through_index_code():
    bad = []
    checked = 0
    for lay in catalog():
        if not isinstance(lay.map, FormulaMap) or type(lay.map) is not FormulaMap:
            continue  # sparse A: its col is a range, not index code
        lay = lay.representative()
        res = api.conform(lay, api.index_code(index_code_of(lay), lay, source="idx.txt"))
        checked += 1
        if res.status != "equal":
            bad.append((lay.id, res.status, res.message))
    assert checked >= 70 and not bad


def test_table_through_the_cli_is_equal(tmp_path, capsys):
    rc, out, _ = cli(capsys, "table", "m16n8k8.C.f32", "--format", "json")
    assert rc == 0
    f = tmp_path / "c.json"
    f.write_text(out)
    rc, out, err = cli(capsys, "conform", "m16n8k8.C.f32", "--table", str(f))
    assert (rc, err) == (0, "")
    assert out.splitlines()[0] == f"conform mma.m16n8k8.C.f32 <- table {f}: equal"


SM80 = [  # CuTe TV layouts of CuTe's SM80 MMA_Traits (mma_traits_sm80.hpp), PTX shape, operand, type
    ("((4,8),(2,2)):((32,1),(16,8))", "m16n8k8", "A", "f16"),
    ("((4,8),2):((16,1),8)", "m16n8k8", "B", "f16"),
    ("((4,8),(2,2)):((32,1),(16,8))", "m16n8k8", "C", "f32"),
    ("((4,8),(2,2)):((16,1),(8,64))", "m16n8k8", "A", "tf32"),
    ("((4,8),(2,2,2)):((32,1),(16,8,128))", "m16n8k16", "A", "f16"),
    ("((4,8),(2,2)):((16,1),(8,64))", "m16n8k16", "B", "bf16"),
    ("((4,8),(4,2)):((64,1),(16,8))", "m16n8k16", "A", "s8"),
    ("((4,8),(4,2,2)):((64,1),(16,8,256))", "m16n8k32", "A", "s8"),
    ("((4,8),(4,2)):((32,1),(8,128))", "m16n8k32", "B", "u8"),
    ("((4,8),(8,2)):((128,1),(16,8))", "m16n8k32", "A", "s4"),
    ("((4,8),(8)):((64,1),(8))", "m16n8k32", "B", "s4"),
    ("((4,8),(8,2,2)):((128,1),(16,8,512))", "m16n8k64", "A", "u4"),
    ("((4,8),(32,2)):((256,1),(8,1024))", "m16n8k256", "B", "b1"),
    ("((4,8),32):((256,1),8)", "m8n8k128", "A", "b1"),
]


@pytest.mark.parametrize("text, shape, operand, ptype", SM80, ids=[f"{s}-{o}-{t}" for _, s, o, t in SM80])
def test_cute_sm80_layouts_conform(text, shape, operand, ptype):
    res = api.conform(spec(shape, operand, ptype), api.cute(text, spec(shape, operand, ptype)))
    assert res.status == "equal", res.message


def test_cute_sm80_b1_a_conforms_to_the_corrected_spec_not_the_doc():
    text = "((4,8),(32,2,2)):((512,1),(16,8,2048))"
    fixed = spec("m16n8k256", "A", "b1", corrected=True)
    assert api.conform(fixed, api.cute(text, fixed)).status == "equal"
    doc = spec("m16n8k256", "A", "b1")
    res = api.conform(doc, api.cute(text, doc))
    assert res.status == "differs"                     # the doc's formula is the erratum (lane 0 a32 -> col 128)
    assert res.counterexample["lane"] == 0 and res.counterexample["element"] == "a32"


TRITON = [
    ("triton_mma_v2_acc_16x8.json", "m16n8k16", "C", "f32"),
    ("triton_mma_v2_f16_a_16x16.json", "m16n8k16", "A", "f16"),
    ("triton_mma_v2_f16_b_16x8.json", "m16n8k16", "B", "f16"),
    ("triton_mma_v2_tf32_a_16x8.json", "m16n8k8", "A", "tf32"),
    ("triton_mma_v2_tf32_b_8x8.json", "m16n8k8", "B", "tf32"),
    ("triton_mma_v2_i8_a_16x32.json", "m16n8k32", "A", "s8"),
    ("triton_mma_v2_i8_b_32x8.json", "m16n8k32", "B", "s8"),
]


@pytest.mark.parametrize("name, shape, operand, ptype", TRITON)
def test_triton_mma_v2_layouts_conform(name, shape, operand, ptype, capsys):
    lay = spec(shape, operand, ptype)
    rc, out, err = cli(capsys, "conform", lay.id, "--triton", str(DATA / name), "--format", "json")
    doc = json.loads(out)["conform"]
    assert (rc, err, doc["status"]) == (0, "", "equal")
    assert doc["given"]["notation"] == "triton" and doc["engines"] == {"z3": "proved", "enumeration": "proved"}


# ============================================================================ the known bugs

PR3140_BEFORE = "Layout<Shape <Shape < _4, _8>, Shape <_8>>, Stride<Stride<_32, _1>, Stride<_8>>>"
PR3140_AFTER = "Layout<Shape <Shape < _4, _8>, Shape <_8>>, Stride<Stride<_64, _1>, Stride<_8>>>"


def test_pr3140_int4_b_thread_stride_32_differs_and_64_is_equal(capsys):
    lay = spec("m16n8k32", "B", "s4")
    rc, out, err = cli(capsys, "conform", lay.id, "--cute", PR3140_BEFORE)
    assert (rc, err) == (1, "")
    assert out.splitlines()[0].endswith(": differs")
    assert "first difference: lane 1 element b0: spec (8, 0), given (4, 0)" in out
    res = api.conform(lay, api.cute(PR3140_BEFORE, lay))
    assert res.counterexample.to_json() == {"kind": "point", "lane": 1, "i": 0, "element": "b0",
                                  "first": {"row": 8, "col": 0}, "second": {"row": 4, "col": 0}}
    assert api.check(api.cute(PR3140_BEFORE, lay)).get("injective").status == "refuted"   # not even a bijection
    rc, out, _ = cli(capsys, "conform", lay.id, "--cute", PR3140_AFTER)
    assert rc == 0 and out.splitlines()[0].endswith(": equal")


def _pr_layouts():
    return {(d["pr"], d["operand"]): d for d in tomllib.loads((DATA / "cute_pr_layouts.toml").read_text())["layout"]}


def test_pr1856_b1_b_was_a_bijection_but_not_ptx():
    d = _pr_layouts()[(1856, "B")]
    lay = spec("m16n8k256", "B", "b1")
    before = api.cute(d["before"], lay)
    assert api.check(before).bijective                      # bijectivity cannot see it ...
    res = api.conform(lay, before)
    assert res.status == "differs"                          # ... conform can: not even a permutation
    assert res.message.startswith("first difference: lane 0 element b1: spec (1, 0), given (0, 1)")
    assert "not a permutation within lanes" in res.message
    assert [c.check for c in res.checks] == ["equal", "permuted"]
    assert all(c.engines == {"z3": "refuted", "enumeration": "refuted"} for c in res.checks)
    assert api.conform(lay, api.cute(d["after"], lay)).status == "equal"


def test_pr1856_b1_a_before_collides_and_after_is_the_corrected_spec():
    d = _pr_layouts()[(1856, "A")]
    lay = spec("m16n8k256", "A", "b1", corrected=True)
    res = api.conform(lay, api.cute(d["before"], lay))
    assert res.status == "differs" and res.counterexample["lane"] == 0 and res.counterexample["element"] == "a1"
    assert api.conform(lay, api.cute(d["after"], lay)).status == "equal"


# ============================================================================ permuted

SWAP_A = """\
# m16n8k16 A (f16), with registers a0/a1 and a2/a3 exchanged: a0<->a2, a1<->a3
group = lane // 4
tig = lane % 4
j = i ^ 2 if i < 4
    i otherwise
row = group + 8 * ((j // 2) % 2)
col = tig * 2 + j % 2 + 8 * (j // 4)
"""


def test_swapped_registers_are_permuted_with_the_permutation(tmp_path, capsys):
    lay = spec(*A16816)
    f = tmp_path / "swap.txt"
    f.write_text(SWAP_A)
    rc, out, err = cli(capsys, "conform", lay.id, "--formula", str(f))
    assert (rc, err) == (1, "")
    lines = out.splitlines()
    assert lines[0] == f"conform {lay.id} <- index {f}: permuted"
    assert "(given <- spec): a0<->a2, a1<->a3" in lines[1]
    assert "first difference: lane 0 element a0: spec (0, 0), given (8, 0)" in out
    rc, out, _ = cli(capsys, "conform", lay.id, "--formula", str(f), "--format", "json")
    doc = json.loads(out)["conform"]
    assert doc["status"] == "permuted" and doc["permutation"]["uniform"] is True
    assert doc["permutation"]["lanes"] == [{"lanes": list(range(32)), "given_to_spec": [2, 3, 0, 1, 4, 5, 6, 7]}]
    assert doc["engines"] == {"z3": "proved", "enumeration": "proved", "z3_permutation": "proved"}


def test_a_permutation_that_differs_per_lane_and_a_three_cycle():
    lay = spec(*C16816)
    code = ("row = lane / 4 + 8 * (j / 2)\ncol = (lane % 4) * 2 + j % 2\n"
            "j = (i + 1) % 3 if lane >= 16 && i < 3\n    i otherwise\n")
    res = api.conform(lay, api.index_code(code, lay))
    assert res.status == "permuted"
    assert res.permutation.text() == "lanes 0-15: as spec; lanes 16-31: (c0 c1 c2)"
    assert res.permutation.of_lane(20) == (1, 2, 0, 3)
    assert res.counterexample["lane"] == 16


def test_cycles_text():
    p = Permutation(((tuple(range(4)), (1, 0, 3, 2)),), "b")
    assert p.text() == "b0<->b1, b2<->b3"
    assert Permutation(((tuple(range(4)), (0, 1, 2, 3)),), "b").text() == "as spec"


def test_same_cells_but_a_lane_holds_one_twice_is_differs_not_permuted():
    lay = spec(*C16816)
    code = "row = lane / 4 + 8 * (k / 2)\ncol = (lane % 4) * 2 + k % 2\nk = 0 if i == 1\n    i otherwise\n"
    res = api.conform(lay, api.index_code(code, lay))
    assert res.status == "differs"
    perm = res.checks[1]
    assert perm.counterexample["kind"] == "lane_repeats" and perm.counterexample["side"] == "given"
    assert perm.message == "given lane 0 elements c0 and c1 both hold (0, 0)"


# ============================================================================ replicated

ACC = '"lane": [[0,2],[0,4],[1,0],[2,0],[4,0]], "shape": [16, 8]'


def test_triton_warps_holding_copies_are_replicated(capsys, tmp_path):
    f = tmp_path / "acc4.json"
    f.write_text('{"register": [[0,1],[8,0]], "warp": [[0,0],[0,0]], ' + ACC + "}")
    lay = spec(*C16816)
    rc, out, err = cli(capsys, "conform", lay.id, "--triton", str(f))
    assert (rc, err) == (1, "")
    assert out.splitlines()[0].endswith(": replicated")
    assert "4 copies of the spec: 4 copies along the threads (thread t acts as lane t mod 32)" in out
    assert cli(capsys, "conform", lay.id, "--triton", str(f), "--allow-replication")[0] == 0
    doc = json.loads(cli(capsys, "conform", lay.id, "--triton", str(f), "--format", "json")[1])["conform"]
    assert doc["replication"]["k"] == 4 and doc["replication"]["thread_copies"] == 4
    assert doc["engines"] == {"z3": "proved", "enumeration": "proved"}


def test_a_zero_register_basis_is_replication_along_that_bit():
    lay = spec(*C16816)
    res = api.conform(lay, api.triton('{"register": [[0,1],[0,0],[8,0]], ' + ACC + "}", lay))
    assert res.status == "replicated"
    assert res.replication.copy_bits == (1,) and res.replication.projection == (0, 1, 0, 1, 2, 3, 2, 3)
    both = api.triton('{"register": [[0,1],[8,0],[0,0]], "warp": [[0,0]], ' + ACC + "}", lay)
    rep = api.conform(lay, both).replication
    assert (rep.k, rep.thread_copies, rep.copy_bits) == (4, 2, (2,))


def test_copies_in_another_order_are_not_replication():
    lay = spec(*C16816)
    res = api.conform(lay, api.triton('{"register": [[0,1],[8,0],[0,0]], "warp": [[0,1]], ' + ACC + "}", lay))
    assert res.status == "differs"
    assert res.message.startswith("threads differ: spec has 32, given has 64; elements differ: spec has 4, given has 8")
    assert "not a consistent replica (copies along element bit 2): thread 32 element c0 (as lane 0 element c0): " \
           "spec (0, 0), given (0, 1)" in res.message
    assert res.engines == {"z3": "refuted", "enumeration": "refuted"}


def test_volta_quadpair_atom_is_lifted_to_the_warp_and_a_two_warp_copy_is_replicated():
    lay = spec("m8n8k4", "A", "f16", variant="row")
    quadpair = api.cute("(8,4):(1,8)", lay, thr_id="(4,2):(1,16)")    # SM70_8x4_Row, SM70_QuadPair
    assert "lifted" in quadpair.provenance.derived
    assert api.conform(lay, quadpair).status == "equal"
    warp = api.table(out_json.to_json(out_json.table_json(lay, None)), lay)
    entries = [{"lane": e.lane + 32 * w, "i": e.i, "row": e.row, "col": e.col}
               for w in range(2) for e in _table_entries(warp)]
    two = api.table(json.dumps(entries), lay)
    res = api.conform(lay, two)
    assert res.status == "replicated" and res.replication.thread_copies == 2


def _table_entries(lay):
    from verify.layout.notations import parse_table
    return parse_table(lay.provenance.formula_text).entries


def test_replication_candidates_are_finite_and_ordered():
    lay = spec(*C16816)
    given = api.triton('{"register": [[0,1],[8,0],[0,0],[0,0]], ' + ACC + "}", lay)
    cands = replication_candidates(lay, given)
    assert [c.copy_bits for c in cands] == [(3, 2), (3, 1), (3, 0), (2, 1), (2, 0), (1, 0)]
    assert "not a multiple" in replication_candidates(lay, dataclasses.replace(
        given, domain=dataclasses.replace(given.domain, elements=6)))


# ============================================================================ differs

def test_fewer_elements_or_another_extent_differs_with_the_reason():
    lay = spec(*C16816)
    small = api.index_code("row = lane / 4\ncol = (lane % 4) * 2 + i", lay)
    small = dataclasses.replace(small, domain=dataclasses.replace(small.domain, elements=2))
    res = api.conform(lay, small)
    assert res.status == "differs" and res.counterexample["kind"] == "domain"
    assert res.message.startswith("elements differ: spec has 4, given has 2")
    # a larger extent over more warps is a block tile, judged tile by tile (it used to be 'differs: extent')
    big = api.triton((DATA / "triton_mma_v2_acc_2x2warps_32x16.json").read_text(), lay)
    res = api.conform(lay, big)
    assert res.status == "tiled" and res.tiling is not None


# ============================================================================ both engines decide

@dataclasses.dataclass(frozen=True)
class LyingZ3(FormulaMap):
    """The enumeration sees the formula; Z3 sees every row shifted by one at lane 7 (an engine bug)."""

    def _z3(self, thread, i, env=None):
        import z3
        ok, r, c = super()._z3(thread, i, env)
        return ok, z3.If(thread == 7, r + 1, r), c


def test_an_engine_disagreement_is_an_error_never_a_verdict():
    lay = spec(*C16816)
    given = api.index_code("row = lane / 4 + 8 * (i / 2)\ncol = (lane % 4) * 2 + i % 2", lay)
    assert api.conform(lay, given).status == "equal"
    liar = dataclasses.replace(given, map=LyingZ3(given.map.formula))
    res = api.conform(lay, liar)
    assert res.status == "error" and "engines disagree" in res.message
    assert res.engines == {"z3": "refuted", "enumeration": "proved"}


def test_a_z3_timeout_is_unknown_never_equal():
    lay = spec("m16n8k256", "A", "b1", corrected=True)
    given = api.cute("((4,8),(32,2,2)):((512,1),(16,8,2048))", lay)
    res = conform(lay, given, timeout=1e-6)
    assert res.status == "unknown" and res.engines["z3"] == "unknown"
    assert res.exit_code() == 1


def test_every_verdict_names_both_engines():
    lay = spec(*A16816)
    for given in (api.cute("((4,8),(2,2,2)):((32,1),(16,8,128))", lay), api.index_code(SWAP_A, lay),
                  api.cute("((4,8),(2,2,2)):((32,1),(8,16,128))", lay)):
        res = api.conform(lay, given)
        assert res.engines["z3"] == res.engines["enumeration"] == ("proved" if res.status != "differs" else "refuted")


# ============================================================================ output

def test_json_contract_and_byte_identical_runs(capsys):
    lay = spec("m16n8k32", "B", "s4")
    runs = [cli(capsys, "conform", lay.id, "--cute", PR3140_BEFORE, "--format", "json")[1] for _ in range(2)]
    assert runs[0] == runs[1]
    doc = json.loads(runs[0])
    assert list(doc) == ["schema", "conform"] and doc["schema"] == 1
    assert list(doc["conform"])[:7] == ["layout", "given", "status", "counterexample", "permutation", "replication",
                                        "message"]
    assert doc["conform"]["given"]["notation"] == "cute" and doc["conform"]["given"]["text"] == PR3140_BEFORE
    assert doc["conform"]["status"] == "differs" and doc["conform"]["counterexample"]["lane"] == 1


# ============================================================================ bad input: exit 2, a position, no traceback

def _bad(capsys, *argv: str) -> str:
    rc, out, err = cli(capsys, *argv)
    assert rc == 2 and out == "", (rc, out, err)
    assert err.count("\n") == 1 and "Traceback" not in err
    return err.strip()


@pytest.mark.parametrize("text, where, words", [
    ("((4,8),(2,2,2)):((32,1),(16,8,128)", "argument:1:35:", "expected ',' or ')'"),      # unbalanced
    ("((4,8),(2,2,2)):((32,1),(16,8),128)", "argument:1:17:", "not congruent"),             # mismatched nesting
    ("((4,8),(2,2,2)):((32,1),(16,8,99999999999))", "argument:1:31:", "too large"),          # huge stride
    ("((4,8),(2,2,2)):((32,1),(16,8,4294967296))", "argument:1:31:", "too large"),
    ("(" * 1_000_000, "argument:1:33:", "nested deeper"),                                      # 10^6-deep nesting
    ("((4,8),(2,2,2)):((32,1),(16,8,128)) x", "argument:1:37:", "after the layout"),
    ("Layout<Shape<_4,_8>, Stride<_1>>", "argument:1:22:", "not congruent"),
    ("", "argument:1:1:", "empty"),
])
def test_hostile_cute_text(capsys, text, where, words):
    err = _bad(capsys, "conform", spec(*A16816).id, "--cute", text)
    assert err.startswith(where) and ": error: " in err and words in err, err


@pytest.mark.parametrize("option, text, where, words", [
    ("--triton", '{"register": [[0,1]], "shape": [12, 8]}', ":1:33:", "power of two"),
    ("--triton", "[" * 1_000_000, ":1:", "expected a linear layout"),
    ("--triton", '{"register": ' + "[" * 1_000_000, ":1:", "nesting deeper"),
    ("--table", "[" * 1_000_000, ":1:", "nesting deeper"),
    ("--table", '[{"lane": 0, "i": 0, "row": 0, "col": 0}, {"lane": 0, "i": 0, "row": 1, "col": 1}]', ":1:43:",
     "appears twice"),
    ("--formula", "row = lane / 4\ncol = (i +\n", ":2:11:", "expected an expression"),
    ("--formula", "row = lane // 0\ncol = i\n", ":1:12:", "division by zero"),
    ("--formula", "row = lane // (lane - 3)\ncol = i\n", ":1:12:", "division by zero"),
    ("--formula", "row = " + "(" * 40 + "lane" + ")" * 40 + "\ncol = i\n", ":1:39:", "nested more than"),
    ("--formula", "row = " + "(" * 1_000_000 + "\ncol = i\n", ":1:1:", "limit"),
    ("--formula", "row = " + "(" * 100_000 + "\ncol = i\n", ":1:1:", "too long"),
    ("--formula", "row = lane\n", ":1:1:", "defines no 'col'"),
    ("--formula", "row = lane * warp\ncol = i\n", ":1:14:", "unknown identifier 'warp'"),
    ("--formula", "row = lane << 70\ncol = i\n", ":1:12:", "shift by 70"),
    ("--formula", "row = lane\ncol = 0x7fffffff * 0x7fffffff * 0x7fffffff * lane\n", ":2:31:", "does not fit in 64 bits"),
    ("--formula", "lane = 3\nrow = lane\ncol = i\n", ":1:1:", "thread index"),
])
def test_hostile_files(capsys, tmp_path, option, text, where, words):
    f = tmp_path / "layout.txt"
    f.write_text(text)
    err = _bad(capsys, "conform", spec(*A16816).id, option, str(f))
    assert err.startswith(str(f) + where) and words in err, err


def test_non_power_of_two_basis_is_a_layout_not_an_error(capsys, tmp_path):
    f = tmp_path / "odd.json"
    f.write_text('{"register": [[0,1],[8,0]], "lane": [[0,2],[0,4],[1,0],[2,0],[3,0]], "shape": [16, 8]}')
    rc, out, err = cli(capsys, "conform", spec(*C16816).id, "--triton", str(f))
    assert (rc, err) == (1, "") and out.splitlines()[0].endswith(": differs")   # a legal GF(2) basis, not PTX's


def test_bad_files_ids_and_options(capsys, tmp_path):
    assert _bad(capsys, "conform", spec(*A16816).id, "--table", str(tmp_path / "none.json")).startswith(
        str(tmp_path / "none.json") + ":1:1: error:")
    (tmp_path / "latin1.txt").write_bytes(b"row = lane\ncol = i  # caf\xe9\n")
    assert _bad(capsys, "conform", spec(*A16816).id, "--formula", str(tmp_path / "latin1.txt")).startswith(
        str(tmp_path / "latin1.txt") + ":2:15: error: input is not UTF-8")
    assert "no layout" in _bad(capsys, "conform", "no.such.layout", "--cute", "(32,8):(1,32)")
    assert "matches" in _bad(capsys, "conform", "m16n8k16", "--cute", "(32,8):(1,32)")
    assert "--timeout" in _bad(capsys, "conform", spec(*A16816).id, "--cute", "(32,8):(1,32)", "--timeout", "nan")
    assert "one of the arguments" in _bad(capsys, "conform", "m16n8k16.A.f16")
    assert "not allowed with" in _bad(capsys, "conform", spec(*A16816).id, "--cute", "1", "--table", "x")


def test_multi_line_cute_argument_names_line_and_column(capsys):
    err = _bad(capsys, "conform", spec(*A16816).id, "--cute", "Layout<Shape<_4,_8>,\n  Stride<_1>>")
    assert err.startswith("argument:2:3: error:"), err


def test_notation_errors_in_the_api_are_positioned():
    with pytest.raises(NotationError) as e:
        api.index_code("row = lane +\ncol = i", spec(*A16816), source="k.txt")
    assert e.value.one_line().startswith("k.txt:1:13: error:")
