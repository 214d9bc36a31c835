"""Wrong answers, wrong statuses and API holes of the hardening issue, each pinned by a test that
failed before its fix: handoff/conform on maps the doc leaves unspecified, vacuous proofs, points
outside a layout's domain, sparse handoffs, engine 'disagreements' that were only a witness not yet
minimised, budget-dependent memos, large tables, unknown element types, internal reprs in messages,
sparse CuTe extents, API argument validation, the given's own checks in conform and the SM70 ThrID hint."""
from __future__ import annotations

import functools
import json
import math
import re

import pytest
import z3
from conftest import SPECS, cli

from verify.outputs.text_results import result_text
from verify import api
from verify.checks import fragment
from verify.errors import SpecError
from verify.results import combine_engines


@functools.cache
def specs() -> tuple:
    return tuple(api.load(SPECS))


def lay(layout_id: str) -> api.Layout:
    return api.layout(list(specs()), layout_id)


# ============================================================================ 1. unspecified wmma maps

@pytest.mark.parametrize("src,dst", [
    ("wmma.m16n16k16.C.f32", "wmma.m16n16k16.A.f16"),
    ("mma.m16n8k16.float.C.f32", "wmma.m16n16k16.A.f16"),
    ("wmma.m16n16k16.C.f16", "wmma.m16n16k16.B.f16"),
])
def test_handoff_into_or_between_wmma_fragments_is_unspecified_never_free(capsys, src, dst):
    rc, out, err = cli(capsys, "handoff", src, dst)
    assert rc == 1 and err == ""
    assert out.splitlines()[0] == f"handoff {src} -> {dst}: unspecified"
    assert "leaves the map of" in out and "unspecified and target architecture dependent" in out
    assert "free" not in out and "proved" not in out and "no lane holds it" not in out
    rc, out, _ = cli(capsys, "handoff", src, dst, "--format", "json")
    doc = json.loads(out)["handoff"]
    assert rc == 1 and doc["status"] == "unspecified" and doc["plan"] == [] and doc["engines"] == {}
    assert "unspecified" in doc["message"] and doc["views"]["to"]["view"] == "unspecified"
    res = api.handoff(src, dst, specs=list(specs()))
    assert res.status == "unspecified" and res.exit_code() == 1


def test_conform_with_a_wmma_spec_is_unspecified_not_differs(capsys):
    # a table over the whole 32 x 16 domain of wmma A: the old answer was "differs ... spec undefined"
    table = {"entries": [{"lane": ln, "i": i, "row": (ln * 16 + i) // 16 % 16, "col": i} for ln in range(32)
                         for i in range(16)]}
    given = api.table(json.dumps(table), "wmma.m16n16k16.A.f16", specs=list(specs()))
    res = api.conform(lay("wmma.m16n16k16.A.f16"), given)
    assert res.status == "unspecified" and res.exit_code() == 1 and res.engines == {}
    assert "unspecified and target architecture dependent" in res.message and res.counterexample is None
    assert "unspecified" in result_text(res).splitlines()[0] and "differs" not in result_text(res)
    assert res.to_json()["conform"]["status"] == "unspecified"
    rc, out, _ = cli(capsys, "conform", "wmma.m16n16k16.A.f16", "--cute", "((4,8),(2,2,2)):((32,1),(16,8,128))")
    assert rc == 1 and out.splitlines()[0].endswith(": unspecified")


# ============================================================================ 4. prove: vacuous, budget

def test_unsatisfiable_assumptions_are_vacuous_not_proved():
    A = lay("mma.m16n8k16.A.f16_bf16")
    la, ia = api.variables("la ia")
    for assuming in ([api.domain(A, la, ia), la < 0], [z3.BoolVal(False)]):
        p = api.prove(la == 5, assuming=assuming)      # a false claim
        assert p.status == "vacuous" and "cannot all hold" in p.message and p.counterexample is None
    assert api.prove(la >= 0, assuming=[api.domain(A, la, ia)]).status == "proved"   # satisfiable: as before
    assert api.prove(la == 5, assuming=[api.domain(A, la, ia)]).status == "refuted"


def test_prove_draws_on_the_deterministic_solver_budget(monkeypatch):
    from verify.engines import smt
    made = []

    class Spy(smt.Budget):
        def __init__(self, *a, **kw):
            super().__init__(*a, **kw)
            made.append(self.units)

    real = smt.Budget
    monkeypatch.setattr(smt, "Budget", Spy)
    x, y = api.variables("x y", width=32)
    assert api.prove(x * 3 + y != 40, assuming=[x > 0, x < 10, y > 0, y < 5]).status == "proved"
    assert made == [smt.RLIMIT_PER_SECOND * 10]
    # one resource unit is not enough for any real query: unknown, whatever the machine's load
    # (before: a wall-clock timeout of int(1e-6 * 1000) = 0 ms, which Z3 reads as no limit: proved)
    monkeypatch.setattr(smt, "Budget", real)
    assert api.prove(x * 3 + y != 40, assuming=[x > 0, x < 10, y > 0, y < 5], timeout=1e-6).status == "unknown"


# ============================================================================ 5. evaluate outside the domain

@pytest.mark.parametrize("lane,i", [(99, 0), (-1, 0), (0, 8), (0, -1), (32, 0)])
def test_evaluate_outside_the_domain_is_a_value_error_naming_it(lane, i):
    A = lay("mma.m16n8k16.A.f16_bf16")
    with pytest.raises(ValueError, match=r"outside the domain of mma\.m16n8k16\.A\.f16_bf16: lane from 0 to 31, "
                                         r"i from 0 to 7"):
        A.evaluate(lane=lane, i=i)
    assert A.evaluate(lane=5, i=3) == (9, 3) and A.evaluate(31, 7) == (15, 15)


def test_evaluate_of_a_family_and_of_an_unspecified_map():
    D = lay("wgmma.m64nNk16.D.f32")
    assert D.evaluate(lane=3, i=1) == D.instance(N=8).evaluate(lane=3, i=1)
    with pytest.raises(ValueError, match=r"largest member; pick one with \.instance\(N=\.\.\.\)"):
        D.evaluate(lane=3, i=128)
    with pytest.raises(ValueError, match="leaves its map unspecified"):
        lay("wmma.m16n16k16.A.f16").evaluate(0, 0)
    with pytest.raises(TypeError):
        D.evaluate(lane=1.5, i=0)


# ============================================================================ 6. sparse handoff

def test_handoff_into_sparse_a_says_it_compares_the_compressed_view(capsys):
    src, dst = "mma.m16n8k16.float.C.f32", "mma.sp.m16n8k16.A.f16_bf16"
    rc, out, _ = cli(capsys, "handoff", src, dst)
    assert rc == 0 and out.splitlines()[0].endswith(": free")
    assert "compressed 16 x 8 view" in out and "logical 16 x 16" in out
    assert "sparsity metadata" in out and "pruned to that 2:4 pattern" in out
    rc, out, _ = cli(capsys, "handoff", src, dst, "--format", "json")
    doc = json.loads(out)["handoff"]
    assert doc["views"]["to"] == {"view": "compressed", "rows": 16, "cols": 8, "logical_cols": 16, "kept": 2,
                                  "chunk": 4}
    assert doc["views"]["from"] == {"view": "dense", "rows": 16, "cols": 8}
    assert any("metadata" in n for n in doc["notes"]) and any("compressed" in n for n in doc["notes"])
    dense = api.handoff(src, "mma.m16n8k16.A.f16_bf16", specs=list(specs()))
    assert dense.notes == () and dense.to_json()["handoff"]["views"]["to"]["view"] == "dense"


# ============================================================================ 7. witnesses not yet minimal

HASH = "x = (%laneid * 1024) + i\nh = (x * 40502) % 1048576\nrow = h / 1024\ncol = h % 1024"


def test_both_engines_refuting_is_refuted_with_the_canonical_witness_even_on_a_small_budget():
    fragment.clear_caches()
    big = api.layout_from_formula(HASH, operand="C", rows=1024, cols=1024, elements=1024, threads=1024)
    inj = api.check(big, timeout=1).get("injective")     # before: error, Z3's witness not yet minimal
    assert inj.status == "refuted" and inj.engines == {"z3": "refuted", "enumeration": "refuted"}
    assert inj.counterexample.to_json() == {"first": {"lane": 0, "i": 0, "element": "c0"},
                                  "second": {"lane": 512, "i": 0, "element": "c0"}, "row": 0, "col": 0}
    assert inj.message == "thread 0 element c0 and thread 512 element c0 both land at cell (0, 0)"
    assert api.check(big).get("injective").counterexample == inj.counterexample


def test_differing_witnesses_are_told_in_words_never_as_dicts():
    msg = lambda c: f"lane {c['lane']} element a{c['i']}"  # noqa: E731
    r = combine_engines("in_range", "proved", "refuted", {"lane": 3, "i": 1}, {"lane": 0, "i": 0}, msg, 0.0,
                        confirm=lambda c: True, same_witness=True)
    assert r.status == "error" and "{" not in r.message
    assert r.message == "the engines' canonical witnesses differ: Z3: lane 3 element a1; enumeration: lane 0 element a0"


# ============================================================================ 8. only decided verdicts are memoised

def _fresh(formula: str) -> api.Layout:
    return api.layout_from_formula(formula, operand="C", rows=64, cols=64, elements=32, threads=128)


def test_an_unknown_on_a_small_budget_is_not_returned_under_a_larger_one():
    lay_ = _fresh("row = (%laneid / 4) % 64\ncol = ((%laneid % 4) * 16 + i + 7 * (%laneid / 256)) % 64")
    small = api.check(lay_, timeout=1e-6)
    assert small.get("injective").status == "unknown"
    big = api.check(lay_, timeout=10)                # before: the memoised unknown came back
    assert {big.get(c).status for c in ("in_range", "injective", "surjective")} <= {"proved", "refuted"}
    assert not big.engine_cached
    again = api.check(lay_, timeout=10)              # a decided verdict is reused
    assert again.engine_cached and again.get("injective") == dataclass_with_seconds(big.get("injective"))


def dataclass_with_seconds(c):
    import dataclasses
    return dataclasses.replace(c, seconds=0.0)


def test_a_family_unknown_is_not_memoised_either():
    text = (SPECS / "ldmatrix.m8n8.toml").read_text()
    # a map of our own (a '+ 0' changes the formula, so no earlier verdict of the catalog applies)
    mine = re.sub(r"(?m)^(row = .*)$", r"\1 + 0", text, count=1)
    assert mine != text
    fam = next(x for x in api.loads(mine, "mine.toml").layouts if x.is_family)
    assert api.check(fam, timeout=1e-6).get("injective").status == "unknown"
    assert api.check(fam, timeout=10).get("injective").status in ("proved", "refuted")


# ============================================================================ 15. large tables: extent first

def _table(entries) -> str:
    return json.dumps({"entries": [{"lane": a, "i": b, "row": r, "col": c} for a, b, r, c in entries]})


def test_a_table_with_cells_outside_the_spec_differs_before_any_solver_runs(tmp_path, capsys):
    path = tmp_path / "big.json"
    path.write_text(_table((ln, i, (ln * 128 + i) // 1024, (ln * 128 + i) % 1024) for ln in range(64)
                           for i in range(128)))
    rc, out, _ = cli(capsys, "conform", "mma.m16n8k16.A.f16_bf16", "--table", str(path), "--timeout", "1",
                     "--format", "json")
    doc = json.loads(out)["conform"]
    assert rc == 1 and doc["status"] == "differs" and doc["engines"] == {"arithmetic": "refuted"}
    assert doc["counterexample"] == {"kind": "extent", "spec": [16, 16], "given": [16, 16],
                                     "outside": {"lane": 0, "i": 16, "element": "a16", "row": 0, "col": 16}}
    assert doc["message"] == "thread 0 element a16 of the given holds (0, 16), outside the spec's 16 x 16 A"
    assert doc["given"]["checks"]["in_range"]["status"] in ("refuted", "unknown")


def test_the_table_shortcut_stays_out_of_the_way_of_a_spec_that_is_itself_outside():
    from verify.checks.conform import _table_outside
    A = lay("mma.m16n8k16.A.f16_bf16")
    inside = api.table(_table((ln, i, *A.evaluate(ln, i)) for ln in range(32) for i in range(8)), A)
    assert _table_outside(A, inside) is None and api.conform(A, inside).status == "equal"
    bad = api.layout_from_formula("row = %laneid / 4\ncol = (%laneid % 4) * 4 + i", operand="A", rows=8, cols=8,
                                  elements=4)  # cols 12..15 lie outside its own 8 x 8
    copy = api.table(_table((ln, i, *bad.evaluate(ln, i)) for ln in range(32) for i in range(4)), bad)
    assert _table_outside(bad, copy) is None          # only the full comparison can tell
    assert api.conform(bad, copy).status == "equal"


# ============================================================================ U3. unknown element types

def test_an_unknown_element_type_is_bad_input_at_its_position(tmp_path, capsys):
    text = (SPECS / "mma.m16n8k16.float.toml").read_text().replace('types = ["f16", "bf16"]',
                                                                   'types = ["f16", "bf17"]', 1)
    with pytest.raises(SpecError) as info:
        api.loads(text, "bad.toml")
    line = next(n for n, t in enumerate(text.splitlines(), 1) if "bf17" in t)
    assert (info.value.line, info.value.col) == (line, text.splitlines()[line - 1].index("bf17") + 1)
    assert "unknown element type 'bf17'" in info.value.message
    path = tmp_path / "bad.toml"
    path.write_text(text)
    rc, out, err = cli(capsys, "check", str(path))
    assert rc == 2 and out == "" and err.startswith(f"{path}:{line}:") and "unknown element type" in err
    # element_bits says the width: any type name then
    ok = text.replace('types = ["f16", "bf17"]', 'types = ["f16", "bf17"]\nelement_bits = 16', 1)
    assert api.loads(ok, "ok.toml").layouts


# ============================================================================ U7. no internal reprs

REPRS = re.compile(r"Var\(|Pos\(|BinOp\(|Num\(|Ref\(|Formula\(|Definition\(|Case\(|Layout\(|Domain\(|\{'|"
                   r"object at 0x|Traceback")


def _runs(tmp_path):
    table = tmp_path / "t.json"
    table.write_text('[{"lane": 0, "i": 0, "row": 0, "col": 0}]')
    index = tmp_path / "i.txt"
    index.write_text("row = lane / 4\ncol = i\n")
    return [
        ("conform", "wgmma.m64nNk16.D.f32", "--table", str(table)),
        ("conform", "ldmatrix.m8n8.R.b16", "--formula", str(index)),
        ("conform", "tcgen05.ld.32x32b.R.b32", "--formula", str(index)),
        ("handoff", "wgmma.m64nNk16.D.f32", "wgmma.m64nNk16.A.f16_bf16"),
        ("handoff", "ldmatrix.m8n8.R.b16", "mma.m16n8k16.B.f16_bf16"),  # .x4 -> A is free (issue 35 item 2)
        ("handoff", "wmma.m16n16k16.C.f32", "wmma.m16n16k16.A.f16"),
        ("handoff", "mma.m16n8k32.C.s32", "mma.m16n8k32.A.u8_s8"),
        ("conform", "mma.m16n8k32.B.u4_s4", "--cute", "((4,8),(8)):((32,1),(8))"),
        ("conform", "mma.m16n8k32.B.u4_s4", "--cute", "((4,8),(8)):((32,1),(8))", "--format", "json"),
        ("conform", "mma.m8n8k4.A.f16.row", "--cute", "(8,4):(1,8)"),
        ("conform", "mma.m16n8k16.A.f16_bf16", "--table", str(table)),
        ("conform", "mma.m16n8k16.A.f16_bf16", "--cute", "((4,8),(2,2,2)):((32,1),(16,8,129))"),
    ]


def test_no_message_prints_an_internal_repr(tmp_path, capsys):
    seen = 0
    for argv in _runs(tmp_path):
        rc, out, err = cli(capsys, *argv)
        assert rc in (1, 2), argv
        text = out + err
        assert not REPRS.search(text), (argv, REPRS.search(text).group(), text[:400])
        seen += bool(text)
    assert seen == len(_runs(tmp_path))
    # the API's answers too
    lane, i = api.variables("lane i")
    for thunk in (lambda: api.prove(lane + 1 > lane).message, lambda: api.prove(lane == 5, [lane < 0, lane > 0]).message):
        assert not REPRS.search(thunk())


def test_conform_and_handoff_answer_for_a_family_in_words(capsys):
    """Families used to end in TypeError tracebacks and internal reprs; they are answered member by member
    (the layout model issue's 'families everywhere'; tests/test_families.py has the rest)."""
    rc, out, err = cli(capsys, "handoff", "wgmma.m64nNk16.D.f32", "wgmma.m64nNk16.A.f16_bf16")
    assert rc == 1 and err == "" and not REPRS.search(out)
    assert out.splitlines()[0] == ("handoff wgmma.m64nNk16.D.f32 -> wgmma.m64nNk16.A.f16_bf16: incompatible "
                                   "(free at N = 8, 16; incompatible at N = 24..256 step 8)")
    D = lay("wgmma.m64nNk16.D.f32")
    with pytest.raises(api.FamilyError, match="is no member of wgmma.m64nNk16.D.f32"):
        api.table('[{"lane": 0, "i": 0, "row": 0, "col": 0}]', D)
    assert api.conform(D, D.instance(N=8)).status == "equal"
    member = D.instance(N=8)
    given = api.index_code("row = (lane / 32) * 16 + (lane % 32) / 4 + 8 * ((i / 2) % 2)\n"
                           "col = (lane % 4) * 2 + i % 2 + 8 * (i / 4)", member)
    assert api.conform(member, given).status == "equal"


# ============================================================================ U9. sparse A from CuTe

def test_a_sparse_a_from_cute_takes_the_compressed_extent(capsys):
    rc, out, _ = cli(capsys, "conform", "mma.sp.m16n8k16.A.f16_bf16", "--cute", "((4,8),(2,2)):((32,1),(16,8))")
    assert rc == 0 and out.splitlines()[0].endswith(": equal")   # before: differs, a 16 x 16 tile
    given = api.cute("((4,8),(2,2)):((32,1),(16,8))", "mma.sp.m16n8k16.A.f16_bf16", specs=list(specs()))
    assert (given.rows, given.cols) == (16, 8)


# ============================================================================ U15. API arguments

@pytest.mark.parametrize("bad,kind", [(math.inf, ValueError), (math.nan, ValueError), (-1, ValueError),
                                      (0, ValueError), (1e9, ValueError), ("5", TypeError), (True, TypeError),
                                      (None, TypeError)])
def test_api_timeouts_are_validated(bad, kind):
    A = lay("mma.m16n8k16.A.f16_bf16")
    x, = api.variables("x")
    for call in (lambda: api.check(A, timeout=bad), lambda: api.conform(A, A, timeout=bad),
                 lambda: api.handoff("mma.m16n8k16.float.C.f32", A, timeout=bad, specs=list(specs())),
                 lambda: api.prove(x > 0, timeout=bad), lambda: api.check_all(list(specs())[:1], timeout=bad)):
        with pytest.raises(kind, match="timeout"):
            call()


def test_api_argument_types_are_checked_with_clear_messages():
    A = lay("mma.m16n8k16.A.f16_bf16")
    x, = api.variables("x")
    for call, words in ((lambda: api.check("mma.m16n8k16.A.f16_bf16"), "lay must be a Layout"),
                        (lambda: api.check(None), "lay must be a Layout"),
                        (lambda: api.conform(3, A), "spec must be a Layout or a layout id"),
                        (lambda: api.conform(A, "x"), "given must be a Layout"),
                        (lambda: api.handoff(1, 2), "source must be a Layout or a layout id"),
                        (lambda: api.layout(list(specs()), 5), "layout_id must be a str"),
                        (lambda: api.layouts("specs"), "specs must be the list api.load returns"),
                        (lambda: api.check_all("specs"), "specs must be the list api.load returns"),
                        (lambda: api.load(5), "paths must be a path"),
                        (lambda: api.cute(5, like=A), "text must be str or bytes"),
                        (lambda: api.cute("(4,8):(1,4)", like=A, thr_id=4), "thr_id must be"),
                        (lambda: api.prove(True), "claim must be a Z3 condition"),
                        (lambda: api.prove(x > 0, assuming=5), "assuming must be a list"),
                        (lambda: api.prove(x > 0, assuming=[True]), r"assuming\[0\] must be a Z3 condition")):
        with pytest.raises(TypeError, match=words):
            call()


# ============================================================================ U18. the given's own checks

def test_conform_reports_the_given_layouts_own_checks(capsys):
    argv = ("conform", "mma.m16n8k32.B.u4_s4", "--cute", "((4,8),(8)):((32,1),(8))")   # CUTLASS 4.2's s4 B
    rc, out, _ = cli(capsys, *argv)
    assert rc == 1 and out.splitlines()[0].endswith(": differs")
    assert "  the given itself: in_range proved, injective refuted, surjective refuted" in out
    assert "    injective: lane 0 element b4 and lane 1 element b0 both land at cell (4, 0)" in out
    rc, out, _ = cli(capsys, *argv, "--format", "json")
    checks = json.loads(out)["conform"]["given"]["checks"]
    assert list(checks) == ["in_range", "injective", "surjective"]
    assert checks["injective"]["status"] == "refuted" and checks["injective"]["engines"] == {
        "z3": "refuted", "enumeration": "refuted"}
    assert checks["injective"]["counterexample"]["second"] == {"lane": 1, "i": 0, "element": "b0"}
    ok = api.conform(lay("mma.m16n8k32.B.u4_s4"), api.cute("((4,8),(8)):((64,1),(8))", "mma.m16n8k32.B.u4_s4",
                                                          specs=list(specs())))
    assert ok.status == "equal" and [c.status for c in ok.given_checks] == ["proved"] * 3


# ============================================================================ U19. the SM70 ThrID hint

def test_an_sm70_atom_without_thr_id_gets_a_hint(capsys):
    rc, out, _ = cli(capsys, "conform", "mma.m8n8k4.A.f16.row", "--cute", "(8,4):(1,8)")
    assert rc == 1 and out.splitlines()[0].endswith(": differs")
    assert '  hint: mma.m8n8k4.A.f16.row runs 4 MMA computations per warp, one per quad-pair;' in out
    assert '--thr-id "(4,2):(1,16)"' in out
    rc, out, _ = cli(capsys, "conform", "mma.m8n8k4.A.f16.row", "--cute", "(8,4):(1,8)", "--format", "json")
    assert '--thr-id \\"(4,2):(1,16)\\"' in json.loads(out)["conform"]["hint"].replace('"', '\\"')
    rc, out, _ = cli(capsys, "conform", "mma.m8n8k4.A.f16.row", "--cute", "(8,4):(1,8)", "--thr-id", "(4,2):(1,16)")
    assert rc == 0 and out.splitlines()[0].endswith(": equal") and "hint" not in out
    rc, out, _ = cli(capsys, "conform", "mma.m16n8k16.A.f16_bf16", "--cute", "((4,8),(2,2,2)):((32,1),(8,16,128))",
                     "--format", "json")
    assert json.loads(out)["conform"]["hint"] is None       # one MMA computation per warp: no hint
