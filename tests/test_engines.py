"""The two engines (Z3, enumeration) agree everywhere, and every counterexample is real."""
from __future__ import annotations


import pytest
from verify.engines import smt
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from verify import api
from verify.checks.family import check_any as check_layout
from verify.layout.sparse import is_sparse as is_sparse_range
from verify.formula import Num, replace_node, walk
from verify.layout.model import Layout

from conftest import SPECS
from tiers import by_kind
from verify.layout.model import cell_at, cells_of

ENGINE_CHECKS = ("in_range", "injective", "surjective")


def all_layouts() -> list[Layout]:
    return api.layouts(api.load([SPECS]))


def assert_counterexample_is_real(lay: Layout, check: str, cex: dict) -> None:
    """Re-evaluate the witness from the cell map, independently of either engine's verdict (a family's
    witness names its parameter value: the instance is checked)."""
    if "params" in cex:
        lay, cex = lay.instance(**cex["params"]), {k: v for k, v in cex.items() if k != "params"}
    if check == "in_range":
        cell = cell_at(lay, cex["lane"], cex["i"])
        assert cell is None or not (0 <= cell[0] < lay.rows and 0 <= cell[1] < lay.cols)
        assert cex["element"] == lay.element_name(cex["i"])
    elif check == "injective":
        a, b = cex["first"], cex["second"]
        assert (a["lane"], a["i"]) != (b["lane"], b["i"])
        assert cell_at(lay, a["lane"], a["i"]) == (cex["row"], cex["col"])
        assert cell_at(lay, b["lane"], b["i"]) == (cex["row"], cex["col"])
        assert lay.group_of(a["lane"]) == lay.group_of(b["lane"])
    elif check == "surjective":
        g = cex.get("mma", 0)
        assert 0 <= cex["row"] < lay.rows and 0 <= cex["col"] < lay.cols
        for lane in range(lay.threads):
            if lay.group_of(lane) == g:
                for i in range(lay.n_elements):
                    assert cell_at(lay, lane, i) != (cex["row"], cex["col"])


def assert_engines_agree(lay: Layout, timeout: float = 20.0):
    res = check_layout(lay, timeout)
    for c in res.checks:
        if c.check in ENGINE_CHECKS:
            assert c.status in ("proved", "refuted"), (lay.id, c.check, c.status, c.message)
            assert c.engines["z3"] == c.engines["enumeration"], (lay.id, c.check, c.engines)
            if c.status == "refuted":
                assert c.counterexample is not None
                assert_counterexample_is_real(lay, c.check, c.counterexample)
    return res


@pytest.mark.parametrize("lay", [lay for lay in all_layouts() if not lay.unspecified], ids=lambda lay: lay.id)
def test_real_specs_engines_agree_and_match_expectations(lay: Layout):
    res = assert_engines_agree(lay)
    assert res.as_expected, [(c.check, c.status, c.expected, c.message) for c in res.checks if not c.as_expected]


def test_unspecified_layouts_get_counts_and_no_engine_verdict():
    """wmma: the doc states no map, so the bijection checks are n/a (never proved) and the counts still hold."""
    unspecified = [lay for lay in all_layouts() if lay.unspecified]
    assert len(unspecified) >= 20
    for lay in unspecified:
        res = check_layout(lay, 5.0)
        by = {c.check: c for c in res.checks}
        assert all(by[c].status == "n/a" for c in ENGINE_CHECKS), lay.id
        assert by["count"].status == by["count"].expected, lay.id


def _constants(lay: Layout) -> list[Num]:
    return [n for d in lay.formula.definitions for n in walk(d) if isinstance(n, Num)]


def mutants(lay: Layout):
    for k, num in enumerate(_constants(lay)):
        for delta in (-1, 1):
            if num.value + delta < 0:
                continue
            new = replace_node(lay.formula, num, Num(num.value + delta, num.pos))
            yield f"{lay.id}#c{k}{delta:+d}", lay.with_formula(new, id=f"{lay.id}#c{k}{delta:+d}")


# Formula layouts (families too), a spread over the whole catalog (sorted ids, evenly spaced).
_PLAIN = sorted((lay for lay in all_layouts() if not lay.unspecified and not lay.partial
                 and not is_sparse_range(lay) and not lay.corrected), key=lambda lay: lay.id)
# every mutant of a family is checked at every parameter value: a big family (wgmma N) by its smallest instance
_PLAIN = [lay if len(lay.instances()) <= 8 else lay.representative() for lay in _PLAIN]
_PLAIN = [lay for lay in _PLAIN if _constants(lay)]  # ``row = %laneid, col = i`` has nothing to mutate
MUTANT_SOURCES = _PLAIN[::max(1, len(_PLAIN) // 14)]


def _mutant_kind(lay: Layout) -> tuple:
    """What the engines branch on for a mutant: a family, several MMA computations, packing, parameters."""
    return lay.is_family, lay.groups > 1, lay.regs.elements_per_register, bool(lay.domain.params)


# one source of each kind in the README's command, the others in CI's integration tier (tests/tiers.py)
@pytest.mark.parametrize("lay", by_kind(MUTANT_SOURCES, _mutant_kind, ids=lambda lay: lay.id))
def test_mutated_constants_engines_agree(lay: Layout):
    broken = 0
    for _name, m in mutants(lay):
        res = assert_engines_agree(m)
        broken += not res.bijective
    assert broken > 0, "no mutation of any constant broke the layout: the checks would be blind"


# ----------------------------------------------------------------------------- generated formulas

ATOMS = st.sampled_from(["%laneid", "i", "groupID", "threadID_in_group", "(%laneid >> 3)", "(i & 0x1)"])
OPS = st.sampled_from(["+", "-", "*", "&", "|", "^", ">>", "<<", "%", "/"])


@st.composite
def exprs(draw, depth: int = 2) -> str:
    if depth == 0 or draw(st.booleans()):
        if draw(st.booleans()):
            return draw(ATOMS)
        return str(draw(st.integers(0, 9)))
    op = draw(OPS)
    left = draw(exprs(depth - 1))
    if op in (">>", "<<"):
        right = str(draw(st.integers(0, 4)))
    elif op in ("%", "/"):
        right = str(draw(st.integers(1, 8)))
    else:
        right = draw(exprs(depth - 1))
    return f"({left} {op} {right})"


@st.composite
def formulas(draw) -> str:
    head = "groupID = %laneid >> 2\nthreadID_in_group = %laneid % 4\n"
    row = draw(exprs())
    col = draw(exprs())
    if draw(st.booleans()):
        bound = draw(st.integers(0, 2))
        row = f"{row} for ci where i < {bound}\n      {draw(exprs())} otherwise"
    if draw(st.booleans()):
        lane_bound = draw(st.sampled_from([8, 16, 24]))
        col = f"{col} if %laneid < {lane_bound}\n      {draw(exprs())} for ci where i = {{0, 1}}"
    return head + f"row = {row}\ncol = {col}\n"


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(formulas())
def test_generated_formulas_engines_agree(text: str):
    lay = api.layout_from_formula(text, operand="C", rows=8, cols=8, elements=2, register_type="b32",
                                  types=("f16",), registers=1)
    assert_engines_agree(lay)


def test_known_good_generated_layout_is_proved():
    lay = api.layout_from_formula("row = %laneid >> 2\ncol = (%laneid % 4) * 2 + i", operand="C",
                                  rows=8, cols=8, elements=2, types=("f16",), registers=1)
    res = assert_engines_agree(lay)
    assert res.bijective


def test_broken_generated_layout_has_all_three_witnesses():
    lay = api.layout_from_formula("row = %laneid >> 2\ncol = (%laneid % 4) * 3 + i", operand="C",
                                  rows=8, cols=8, elements=2, types=("f16",), registers=1)
    res = assert_engines_agree(lay)
    assert res.get("in_range").status == "refuted"   # lane 3: col 9, 10
    assert res.get("surjective").status == "refuted"
    assert res.get("injective").status == "proved"


REPLICATED = ("row = %laneid >> 3\ncol = ((%laneid % 4) * 2) + i", dict(operand="C", rows=4, cols=8, elements=2,
                                                                     types=("f32",), registers=2, register_type="f32"))


def test_replicated_layout_proved_surjective_by_checked_witnesses():
    """More points than cells (lane bit 2 ignored): no counting argument; Z3 checks, for every cell,
    the point the enumeration says reaches it."""
    lay = api.layout_from_formula(REPLICATED[0], **REPLICATED[1])
    r = assert_engines_agree(lay)
    sur = r.get("surjective")
    assert sur.status == "proved" and sur.engines["z3_method"] == "witnesses"
    assert r.get("injective").status == "refuted"


def test_a_wrong_witness_table_is_refused(monkeypatch):
    """The witness proof is a proof: a table whose entry does not hold is rejected by Z3."""
    from verify.checks import maps
    lay = api.layout_from_formula(REPLICATED[0], **REPLICATED[1])
    evaluated = maps.evaluations(lay.map)
    real = maps.first_preimages
    assert maps._all_reached(lay.map, {}, smt.Budget(20.0), evaluated) == "unsat"

    def wrong(*a, **k):
        rows = real(*a, **k)
        ln, i, *cell = rows[5]
        return rows[:5] + [(ln, 1 - i, *cell)] + rows[6:]
    monkeypatch.setattr(maps, "first_preimages", wrong)
    assert maps._all_reached(lay.map, {}, smt.Budget(20.0), evaluated) == "sat"


@pytest.mark.parametrize("lid", ["mma.m8n8k16.A.u8_s8", "mma.m8n8k4.f16.C.f32", "mma.m16n8k16.A.f16_bf16"])
def test_surjective_needs_no_quantifier(lid):
    """The bundled layouts are proved surjective by pigeonhole, from Z3's in_range and injective."""
    res = api.check(api.layout(api.load([SPECS]), lid))
    assert res.get("surjective").engines["z3_method"] == "pigeonhole"
    assert res.get("surjective").status == "proved"


def test_surjective_refuted_when_injective_holds_but_domain_too_small():
    lay = api.layout_from_formula("row = %laneid >> 2\ncol = %laneid % 4", operand="C", rows=8, cols=8,
                                  elements=1, types=("f32",), registers=1, register_type="f32")
    res = assert_engines_agree(lay)
    assert res.get("injective").status == "proved"
    assert res.get("surjective").counterexample.to_json() == {"row": 0, "col": 4}
    assert res.get("surjective").engines["z3_method"] != "pigeonhole"


@st.composite
def partial_formulas(draw) -> str:
    """Definitions undefined on some lanes, used inside later conditions and cases (the evaluator's
    shortcut for ``... otherwise`` must not call such points defined), and ranges of divisors that
    include zero (undefined points, never an exception)."""
    k = draw(st.sampled_from([0, 8, 16, 31, 32]))
    x = f"x = {draw(exprs())} if %laneid < {k}"
    d = draw(st.integers(0, 3))
    y = f"y = ({draw(exprs())}) % ({draw(exprs(1))} - {d})" if draw(st.booleans()) else f"y = {draw(exprs())}"
    c = draw(st.integers(0, 9))
    row = f"row = {draw(exprs())} for ci where x < {c}\n      {draw(exprs())} otherwise"
    col = draw(st.sampled_from([
        f"col = {draw(exprs())} for ci where y > {c}\n      {draw(exprs())} otherwise",
        "col = y for ci where i = {0, 1}",
        f"col = {draw(exprs())} for ci where i < 1\n      x + y otherwise",
    ]))
    return f"groupID = %laneid >> 2\nthreadID_in_group = %laneid % 4\n{x}\n{y}\n{row}\n{col}\n"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(partial_formulas())
def test_vectorised_cells_are_the_oracle_point_by_point(text: str):
    """The enumeration engine's vectorised evaluator against the scalar oracle at every (lane, i):
    the same cell, the same undefined points, the same first error."""
    from verify.engines.oracle import EvalError
    from verify.errors import SpecError

    lay = api.layout_from_formula(text, operand="C", rows=8, cols=8, elements=2, register_type="b32",
                                  types=("f16",), registers=1)

    def scalar_first_error() -> str | None:
        for lane in range(lay.threads):
            for i in range(lay.n_elements):
                try:
                    cell_at(lay, lane, i)
                except (EvalError, SpecError) as e:
                    return str(e)
        return None

    try:
        cells = cells_of(lay)
    except (EvalError, SpecError) as e:
        assert scalar_first_error() == str(e)
        return
    assert scalar_first_error() is None
    for lane in range(lay.threads):
        for i in range(lay.n_elements):
            p = cell_at(lay, lane, i)
            got = (int(cells.row[lane, i]), int(cells.col[lane, i])) if cells.ok[lane, i] else None
            assert got == p, (lane, i, got, p)
