"""The small rules of one layout model, each with a literal test: a memo held on its object
(``layout.memo.held``), a doc layout holding its correction (``layout.corrections``; its output id in one place,
``layout.ids``), the enumeration engine's one finder
of collisions (``layout.named.first_collision``)."""
from __future__ import annotations

import copy
import pickle
from dataclasses import dataclass
from types import SimpleNamespace

from verify.checks import maps
from verify.layout.dims import Dim
from verify.layout.corrections import by_doc_id, correction_of, in_use, in_use_of, prefer_corrections
from verify.layout.ids import corrected_id, given_doc_id
from verify.layout.memo import forget_held, held
from verify.layout.named import TableMap, first_collision


@dataclass(frozen=True)
class _Box:
    value: int


def test_held_memo_lives_on_its_object_and_pickles_empty() -> None:
    calls: list[int] = []

    def build(b: _Box, k: int) -> int:
        calls.append(k)
        return b.value * k

    a, twin = _Box(3), _Box(3)
    assert held(a, "times", 2, lambda: build(a, 2)) == 6
    assert held(a, "times", 2, lambda: build(a, 2)) == 6 and calls == [2]  # memoised on a
    assert held(twin, "times", 2, lambda: build(twin, 2)) == 6 and calls == [2, 2]  # not shared by identity
    assert a == twin and hash(a) == hash(twin) and repr(a) == "_Box(value=3)"  # the memo is no field
    for back in (pickle.loads(pickle.dumps(a)), copy.deepcopy(a)):
        assert back == a and not dict(back.__dict__["_held_times"])  # travels empty
        before = len(calls)
        assert held(back, "times", 2, lambda: build(back, 2)) == 6 and len(calls) == before + 1
    before = len(calls)
    forget_held()  # clear_cells: every held memo is stale
    assert held(a, "times", 2, lambda: build(a, 2)) == 6 and len(calls) == before + 1


def test_a_doc_layout_holds_its_correction() -> None:
    fix = SimpleNamespace(id=corrected_id("x.A.f16"), corrects="x.A.f16", correction=None)
    doc = SimpleNamespace(id="x.A.f16", corrects="", correction=fix)
    other = SimpleNamespace(id="y.B.f16", corrects="", correction=None)
    alone = SimpleNamespace(id=corrected_id("w.A.f16"), corrects="w.A.f16", correction=None)  # the doc's does not parse
    assert fix.id == "x.A.f16@corrected" and given_doc_id(fix.id) == "x.A.f16" and given_doc_id("x") == "x"
    assert in_use(doc) is fix and in_use(fix) is fix and in_use(other) is other
    assert prefer_corrections([doc, fix, other, alone]) == [fix, other, alone]
    assert prefer_corrections([other, alone]) == [other, alone]
    by = {d.id: d for d in (doc, fix, other, alone)}
    assert in_use_of(by, "x.A.f16") is fix and in_use_of(by, "y.B.f16") is other and in_use_of(by, "z") is None
    assert in_use_of(by, "w.A.f16") is alone and in_use_of(by, fix.id) is fix
    assert correction_of(by, "x.A.f16") is fix and correction_of(by, "w.A.f16") is alone
    assert correction_of(by, "y.B.f16") is None and correction_of(by, fix.id) is None
    assert by_doc_id([doc, fix, other]) == {"x.A.f16": fix, "y.B.f16": other}


def test_first_collision_is_the_first_repeat_in_input_order() -> None:
    a, x = Dim("a", 4), Dim("x", 3)
    m = TableMap((a,), (x,), ((0, 1), (1, 2), (2, 1), (3, 2)))
    assert first_collision(m, {}) == ({"a": 0}, {"a": 2})
    assert first_collision(TableMap((a,), (Dim("x", 4),), ((0, 3), (1, 2), (2, 1), (3, 0))), {}) is None
    assert maps.injective(m).status == "refuted"  # checks.maps takes the same verdict (and Z3 agrees)
