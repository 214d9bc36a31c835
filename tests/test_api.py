"""The Python API that proof scripts import."""
from __future__ import annotations

import subprocess
import sys

import pytest
import z3

from verify import api

from conftest import ROOT, SPECS


def test_load_find_evaluate():
    specs = api.load([SPECS / "mma.m16n8k16.float.toml"])
    lay = api.layout(specs, "mma.m16n8k16.A.f16_bf16")
    assert lay.evaluate(5, 3) == (9, 3)
    assert api.layout(specs, "A.f16_bf16").id == lay.id  # unique substring
    res = api.check(lay)
    assert res.bijective and res.as_expected


def test_loads_from_string_and_layout_from_formula():
    lay = api.layout_from_formula("row = %laneid >> 2\ncol = (%laneid % 4) * 2 + i", operand="C",
                                  rows=8, cols=8, elements=2, types=("f16",), registers=1)
    assert api.check(lay).bijective
    spec = api.loads((SPECS / "mma.m8n8k16.toml").read_text())
    assert [x.operand for x in spec.layouts] == ["A", "B", "C"]


def test_prove_and_refute():
    lane, i = api.variables("lane i")
    assert api.prove((lane >> 2) * 4 + (lane & 3) == lane, assuming=[lane >= 0, lane < 32]).status == "proved"
    p = api.prove(lane < 16, assuming=[lane >= 0, lane < 32])
    assert p.status == "refuted" and p.counterexample["lane"] >= 16


def test_readme_proof_script_runs():
    r = subprocess.run([sys.executable, str(ROOT / "examples" / "same_row_lane_group.py")],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "same lane group: proved" in r.stdout


def test_symbolic_cell_matches_evaluation():
    lay = api.layout(api.load([SPECS / "mma.m8n8k4.f16.toml"]), "mma.m8n8k4.f16.C.f32")
    lane, i = api.variables("lane i")
    ok, row, col = api.cell(lay, lane, i)
    for ln, ix in [(0, 0), (17, 6), (31, 7)]:
        s = z3.Solver()
        s.add(lane == ln, i == ix)
        assert s.check() == z3.sat
        m = s.model()
        assert (m.eval(row).as_signed_long(), m.eval(col).as_signed_long()) == lay.evaluate(ln, ix)


# ============================================================================ layouts people write

from verify.errors import SpecError  # noqa: E402


def _spec_a16816():
    return next(x for x in api.layouts(api.load(SPECS)) if x.instruction == "mma" and str(x.shape) == "m16n8k16"
                and x.operand == "A" and "f16" in x.types)


def test_notation_constructors_and_conform():
    A = _spec_a16816()
    for given in (api.cute("((4,8),(2,2,2)):((32,1),(16,8,128))", like=A),
                  api.index_code("row = lane / 4 + 8 * ((i // 2) % 2)\ncol = lane % 4 * 2 + i % 2 + 8 * (i // 4)", like=A),
                  api.cute("((4,8),(2,2,2)):((32,1),(16,8,128))", like=A.id, specs=SPECS)):
        res = api.conform(A, given)
        assert isinstance(res, api.ConformResult) and res.status == "equal" and res.counterexample is None
        assert given.operand == "A" and given.shape == A.shape and given.types == A.types
        assert api.check(given).bijective                 # every existing check runs on an imported layout
    res = api.conform(A.id, api.cute("((4,8),(2,2,2)):((32,1),(8,16,128))", like=A), specs=SPECS)
    assert res.status == "permuted" and res.permutation.text() == "a1<->a2, a5<->a6"
    assert res.counterexample.to_json() == {"kind": "point", "lane": 0, "i": 1, "element": "a1", "first": {"row": 0, "col": 1},
                                  "second": {"row": 8, "col": 0}}


def test_handoff_in_the_api():
    res = api.handoff("mma.m16n8k16.A.f16_bf16", "mma.m16n8k16.A.f16_bf16", specs=SPECS)
    assert isinstance(res, api.HandoffResult) and res.status == "free" and res.grid == (1, 1)
    with pytest.raises(api.HandoffError):
        api.handoff("mma.m16n8k16.A.f16_bf16", "mma.m16n8k8.A.f16_bf16", specs=SPECS)


def test_proof_scripts_need_no_z3_import():
    lane, i = api.variables("lane i")
    claim = api.Implies(api.And(lane >= 0, lane < 32), api.Or(lane < 16, api.Not(lane < 16)))
    assert api.prove(claim).status == "proved"
    assert api.prove(api.If(lane > 3, lane, 3) >= 3).status == "proved"


def test_variables_are_64_bit_and_overflow_is_never_a_verdict():
    x, = api.variables("x")
    assert x.size() == 64
    assert api.prove(x * 4096 >= 0, assuming=[x >= 0, x < 32]).status == "proved"
    y, = api.variables("y", width=16)              # the old default: y * 4096 wraps for y >= 8
    p = api.prove(y * 4096 >= 0, assuming=[y >= 0, y < 32])
    assert p.status == "may_overflow" and "y*4096" in p.message and 8 <= p.counterexample["y"] < 32
    assert api.prove(x + 1 > x).status == "may_overflow"          # not "proved": it wraps at 2^63 - 1
    assert api.prove(x + 1 > x, assuming=[x < 100]).status == "proved"
    d = api.prove(100 / x >= 0, assuming=[x >= 0, x < 4])
    assert d.status == "may_overflow" and "divide by zero" in d.message and d.counterexample == {"x": 0}
    assert api.prove(api.If(x > 0, 100 / x, 0) >= 0, assuming=[x >= 0, x < 4]).status == "proved"


def test_mixed_widths_are_refused():
    x, = api.variables("x")
    y, = api.variables("y", width=16)
    with pytest.raises(ValueError, match="mixed bit widths"):
        api.prove(x > 0, assuming=[y > 0])
    lay = _spec_a16816()
    with pytest.raises(ValueError, match="mixed bit widths"):
        api.cell(lay, x, y)
    a, b = api.variables("a b", width=4)
    with pytest.raises(ValueError, match="at least"):
        api.cell(lay, a, b)
    with pytest.raises(ValueError):
        api.variables("z", width=1)


def test_layout_from_formula_builds_directly_and_points_at_the_formula():
    lay = api.layout_from_formula("row = %laneid >> 2\ncol = (%laneid % 4) * 2 + i", operand="C", rows=8, cols=8,
                                  elements=2, registers=1, types=("f16",), layout_id='my "odd" \'id\'')
    assert lay.id == 'my "odd" \'id\'' and api.check(lay).bijective and lay.provenance.spec_path == "<formula>"
    with pytest.raises(SpecError) as e:
        api.layout_from_formula("row = %laneid >> 2\ncol = (%laneid % 4) * 2 + j", rows=8, cols=8, elements=2)
    assert e.value.one_line() == "<formula>:2:27: error: unknown identifier 'j'"
    bad = api.layout_from_formula("row = %laneid / (i - 1)\ncol = 0", rows=8, cols=8, elements=2)
    with pytest.raises(SpecError) as e:
        api.check(bad)
    assert e.value.one_line().startswith("<formula>:1:15: error:") and "division by zero" in e.value.one_line()
    with pytest.raises(ValueError, match="registers"):
        api.layout_from_formula("row = 0\ncol = 0", rows=8, cols=8, elements=3, registers=2)
    with pytest.raises(ValueError, match="operand"):
        api.layout_from_formula("row = 0\ncol = 0", operand="X", rows=8, cols=8, elements=2)
    with pytest.raises(SpecError, match="sparse"):
        api.layout_from_formula("row = 0\ncol = [0 ... 1]", rows=8, cols=8, elements=2)


def test_layouts_proof_script_runs():
    r = subprocess.run([sys.executable, str(ROOT / "examples" / "check_my_layouts.py")],
                       capture_output=True, text=True, cwd=ROOT, check=False)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.count("\nok   ") + r.stdout.startswith("ok   ") == 5 and "FAIL" not in r.stdout


def test_one_z3_query_proves_a_fragments_in_range_and_injective(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bijective fragment: one joint Z3 query for in_range and injective, none for surjective (pigeonhole).
    A fragment that fails one of them gets each asked alone, with its canonical witness."""
    from verify.checks import fragment
    from verify.engines import smt
    queries: list[int] = []
    solve = smt.solve
    monkeypatch.setattr(smt, "solve", lambda cs, budget: queries.append(1) or solve(cs, budget))
    fragment.clear_caches()
    good = api.layout_from_formula("row = %laneid >> 2\ncol = (%laneid % 4) * 2 + i", rows=8, cols=8, elements=2)
    res = api.check(good)
    assert [res.get(c).engines.get("z3") for c in ("in_range", "injective", "surjective")] == ["proved"] * 3
    assert len(queries) == 1 and res.get("surjective").engines["z3_method"] == "pigeonhole"
    fragment.clear_caches()
    bad = api.layout_from_formula("row = %laneid >> 2\ncol = (%laneid % 4) * 2 + i + 1", rows=8, cols=8, elements=2)
    res = api.check(bad)
    assert [res.get(c).status for c in ("in_range", "injective")] == ["refuted", "proved"]
    assert res.get("in_range").counterexample.to_json()["lane"] == 3  # the first (lane, i) past col 7
