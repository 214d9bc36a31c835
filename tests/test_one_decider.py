"""Issue 36 item 2: one decider.  ``verify.checks.maps`` decides in_range / injective / surjective of any named map
with both engines; the page readers (``catalog.page_facts``'s not-bijective finding, ``catalog.shared_pages``'
smem-injective) take its agreed verdicts (``verdicts``, ``settled``, ``injective_at_each``) and never pick one
engine's: a disagreement or an unanswered query is ``Undecided``, an error."""
from __future__ import annotations

import pytest

from verify.catalog import page_facts as ingest, shared_pages_wgmma
from verify.checks import maps
from verify.formula import parse_formula
from verify.layout.dims import Dim
from verify.layout.family import Param
from verify.layout.named import formula_map
from verify.results import CheckResult
from verify.witnesses import OutputUnreached, PointOutside, PointsCollide

ROW4, COL2 = Dim("row", 4), Dim("col", 2)


def test_verdicts_are_the_agreed_witnesses() -> None:
    onto = formula_map("row = lane / 2\ncol = lane % 2", (Dim("lane", 8),), (ROW4, COL2))
    assert maps.verdicts(onto) == (None, None, None)
    folded = formula_map("row = lane % 4\ncol = 0", (Dim("lane", 8),), (ROW4, COL2))
    outside, collision, hole = maps.verdicts(folded)
    assert outside is None
    assert collision == PointsCollide({}, {"lane": 0}, {"lane": 4}, {"row": 0, "col": 0})
    assert hole == OutputUnreached({}, {"row": 0, "col": 1})
    spill = formula_map("row = lane\ncol = 0", (Dim("lane", 8),), (ROW4, COL2))
    assert maps.verdicts(spill, ("in_range",)) == (PointOutside({}, {"lane": 4}, {"row": 4, "col": 0}),)


def test_injective_anywhere_counts_collisions_outside_the_box() -> None:
    """The fragment model's injectivity (``anywhere``): two defined points on one output point collide even outside
    the output box; where in_range holds it is the same property."""
    m = formula_map("row = lane - lane / 5 * (lane - 4)\ncol = 0", (Dim("lane", 8),), (ROW4, Dim("col", 1)))
    outside = PointOutside({}, {"lane": 4}, {"row": 4, "col": 0})
    assert maps.verdicts(m, ("in_range", "injective")) == (outside, None)
    assert maps.verdicts(m, ("in_range", "injective"), anywhere=True) == (
        outside, PointsCollide({}, {"lane": 4}, {"lane": 5}, {"row": 4, "col": 0}))
    onto = formula_map("row = lane / 2\ncol = lane % 2", (Dim("lane", 8),), (ROW4, COL2))
    assert maps.verdicts(onto, anywhere=True) == (None, None, None)


def test_injective_at_each_names_every_colliding_member() -> None:
    # two runs of 8 placed 2k apart: they overlap for k = 1 and k = 2, not for k = 4
    m = formula_map("off = a + 2 * k * b", (Dim("a", 8), Dim("b", 2)), (Dim("off", 64),), (Param("k", (1, 2, 4)),))
    found = maps.injective_at_each(m)
    assert [dict(c.params) for c in found] == [{"k": 1}, {"k": 2}]
    assert found[0] == PointsCollide({"k": 1}, {"a": 0, "b": 1}, {"a": 2, "b": 0}, {"off": 2})


def test_a_member_the_enumeration_misses_is_undecided(monkeypatch: pytest.MonkeyPatch) -> None:
    """Z3 proves that no binding but the enumeration's colliding ones has a collision: one it misses is an error."""
    m = formula_map("off = a + 2 * k * b", (Dim("a", 8), Dim("b", 2)), (Dim("off", 64),), (Param("k", (1, 2, 4)),))
    real = maps.first_collision
    monkeypatch.setattr(maps, "first_collision",
                        lambda m, env, v=None, anywhere=False: None if env == {"k": 2} else real(m, env, v, anywhere))
    with pytest.raises(maps.Undecided, match="sat where it finds none"):
        maps.injective_at_each(m)


@pytest.mark.parametrize("status", ["error", "unknown"])
def test_a_verdict_the_engines_do_not_settle_is_an_error(status: str) -> None:
    r = CheckResult("injective", status, "proved", None, "engines disagree: Z3 says refuted, enumeration says proved",
                    0.0, {"z3": "refuted", "enumeration": "proved"})
    with pytest.raises(maps.Undecided, match=f"injective: {status}"):
        maps.settled(r)


def test_the_page_readers_take_no_verdict_of_their_own(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the decider's engines made to disagree, neither page reader answers: each raises ``Undecided``."""
    def disagree(m, *args, **kwargs):
        return CheckResult("injective", "error", "proved", None, "engines disagree", 0.0,
                           {"z3": "refuted", "enumeration": "proved"})
    monkeypatch.setattr(maps, "injective", disagree)
    formula = parse_formula("row = %laneid % 8\ncol = i", "a")
    with pytest.raises(maps.Undecided):
        ingest._enumerate(formula, 32, 2, 8, 8, None)
    fm = formula_map("off = a + 4 * k", (Dim("a", 8),), (Dim("off", 64),), (Param("k", (1, 2)),))
    shared_pages_wgmma._not_injective.cache_clear()
    with pytest.raises(maps.Undecided):
        shared_pages_wgmma._not_injective(fm)


def test_ingest_words_the_decider_s_witnesses_as_it_always_has() -> None:
    """A doc formula's not-bijective witness: the first bad element with its name, the first collision with the
    earlier point, the first hole; in (lane, i) and (row, col) order."""
    formula = parse_formula("row = %laneid % 8\ncol = i", "a")  # 32 lanes on 8 rows: lane 8 lands on lane 0's cell
    bad = ingest._enumerate(formula, 32, 2, 8, 8, None)
    assert bad == {"collision": {"first": {"lane": 0, "i": 0, "element": "a0"},
                                 "second": {"lane": 8, "i": 0, "element": "a0"}, "row": 0, "col": 0},
                   "hole": {"row": 0, "col": 2}}
    over = parse_formula("row = %laneid\ncol = i", "a")
    assert ingest._enumerate(over, 32, 2, 8, 2, None)["out_of_range"] == {
        "lane": 8, "i": 0, "element": "a0", "row": 8, "col": 0}
    assert ingest._enumerate(parse_formula("row = %laneid / (i - i)\ncol = i", "a"), 32, 2, 8, 8, None)["error"]
