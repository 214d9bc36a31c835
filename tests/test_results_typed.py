"""Results are typed data the renderers read: a layout result carries what its JSON needs (the map's digest
is computed by the checks), so rendering never evaluates a map."""
from __future__ import annotations

import pytest

from verify import api
from verify.layout import model
from verify.layout.model import mapping_digest
from verify.results import LayoutResult

C = "row = %laneid >> 2\ncol = %laneid % 4"


def _layout():  # type: ignore[no-untyped-def]
    return api.layout_from_formula(C, operand="C", rows=8, cols=4, elements=1, types=("f32",), registers=1,
                                   register_type="f32")


def test_layout_result_json_does_not_evaluate_the_layout(monkeypatch) -> None:
    lay = _layout()
    res = api.check(lay)
    assert res.digest == mapping_digest(lay) and res.digest.startswith("sha256:")

    def no_evaluation(*_a, **_k):  # type: ignore[no-untyped-def]
        raise AssertionError("a renderer evaluated the layout")

    monkeypatch.setattr(model, "cells_of", no_evaluation)
    monkeypatch.setattr(model, "mapping_digest", no_evaluation)
    assert res.to_json()["digest"] == res.digest


def test_a_layout_result_needs_its_digest() -> None:
    res = api.check(_layout())
    with pytest.raises(TypeError):
        LayoutResult(res.layout, res.checks)  # type: ignore[call-arg]
