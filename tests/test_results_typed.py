"""Results are typed data the renderers read: a layout result carries what its JSON needs (the map's digest
is computed by the checks), so rendering never evaluates a map."""
from __future__ import annotations

import pytest

from verify import api
from verify.layout import model
from verify.layout.model import mapping_digest
from verify.results import LayoutResult

C = "row = %laneid >> 2\ncol = %laneid % 4"


def _layout():
    return api.layout_from_formula(C, operand="C", rows=8, cols=4, elements=1, types=("f32",), registers=1,
                                   register_type="f32")


def test_layout_result_json_does_not_evaluate_the_layout(monkeypatch) -> None:
    lay = _layout()
    res = api.check(lay)
    assert res.digest == mapping_digest(lay) and res.digest.startswith("sha256:")

    def no_evaluation(*_a, **_k):
        raise AssertionError("a renderer evaluated the layout")

    monkeypatch.setattr(model, "cells_of", no_evaluation)
    monkeypatch.setattr(model, "mapping_digest", no_evaluation)
    assert res.to_json()["digest"] == res.digest


def test_a_layout_result_needs_its_digest() -> None:
    res = api.check(_layout())
    with pytest.raises(TypeError):
        LayoutResult(res.layout, res.checks)


def test_report_fields_are_typed() -> None:
    """Renderers read typed results: the report's instructions and doc findings have real types."""
    import typing

    from verify.catalog.sections import IngestFinding
    from verify.checks import instruction, relations
    from verify.results import DocFinding, InstructionResult, Report
    hints = typing.get_type_hints(Report)
    assert hints["instructions"] == tuple[InstructionResult, ...]
    assert hints["doc_findings"] == tuple[DocFinding, ...]
    assert instruction.InstructionResult is InstructionResult  # the relations' results are the same type
    assert relations.check_relations.__annotations__["return"] == "list[InstructionResult]"
    fields = set(typing.get_type_hints(IngestFinding))
    wanted = {n for n in typing.get_type_hints(DocFinding)}
    assert wanted <= fields and callable(IngestFinding.one_line) and callable(IngestFinding.to_json)


def test_outputs_do_not_duck_type_results() -> None:
    """No ``getattr(result, name, default)`` guessing and no ``# type: ignore`` over results in the renderers
    of a report."""
    from conftest import ROOT
    for name in ("text.py", "json.py", "sarif.py", "junit.py", "report.py", "report_parts.py", "report_markdown.py",
                 "report_html.py", "text_results.py"):
        src = (ROOT / "verify" / "outputs" / name).read_text(encoding="utf-8")
        for bad in ("getattr(ins", "getattr(i,", "getattr(report", "getattr(f,", "type: ignore[attr-defined]"):
            assert bad not in src, f"{name}: {bad}"


def test_checks_hold_data_and_outputs_word_it() -> None:
    """The results of instruction, conform, handoff and family checks, references, ``consistent`` and ``diff``
    are data (and their JSON); their text is ``verify.outputs.text_results`` and ``reports_text``."""
    from verify.results.conform import ConformResult
    from verify.results.handoff import HandoffResult
    from verify.results.members import FamilyResult, Incompatible
    from verify.outputs import text_results
    from verify.results.consistency import Decision
    from verify.results.crosscheck import CrosscheckReport
    from verify.results.diff import DiffResult
    from verify.checks.references.matrix import Matrix
    from verify.results import InstructionResult
    for cls in (ConformResult, HandoffResult, FamilyResult, Incompatible, InstructionResult, Decision,
                CrosscheckReport, DiffResult, Matrix):
        assert not hasattr(cls, "render_text") and not hasattr(cls, "text_lines"), cls
        assert hasattr(cls, "to_json"), cls
    assert text_results.incompatible_text(Incompatible("error", "no member fits")) == "  no member fits\n"
