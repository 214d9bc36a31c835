"""Whole instructions: operands agree (shapes, K, registers), m8n8k4 lane groups, sparse semantics."""
from __future__ import annotations

import json

import pytest

from verify import api
from verify.outputs import json as render_json, text as render_text
from verify.outputs.text_results import instruction_lines
from verify.checks.family import check_any as check_layout
from verify.catalog.instructions import instructions
from verify.checks.instruction import InstructionResult, check_instructions
from verify.results import Finding

from conftest import SPECS

M8N8K4 = SPECS / "mma.m8n8k4.f16.toml"
M8N8K16 = SPECS / "mma.m8n8k16.toml"
TF32 = SPECS / "mma.sp.m16n8k16.tf32.toml"
U8 = SPECS / "mma.sp.m16n8k32.u8_s8.toml"


def mutate(path, old: str, new: str):
    text = path.read_text()
    assert old in text, old
    return api.loads(text.replace(old, new, 1), str(path))


def run(specs, with_layout_results: bool = False) -> list[InstructionResult]:
    """Without layout results every Z3 query runs (no shortcut through the layout proofs)."""
    results = [check_layout(lay) for lay in api.layouts(specs)] if with_layout_results else []
    return check_instructions(specs, results, 10.0)


def assert_agree(c) -> None:
    assert c.engines.get("z3") == c.engines.get("enumeration") == c.status, c


def test_bundled_instructions_are_as_expected(catalog_report) -> None:
    out = catalog_report[1].instructions
    assert out, "no instruction grouped"
    bad = [(i.id, c.check, c.status, c.message) for i in out for c in i.checks if not c.as_expected]
    assert not bad, bad


@pytest.mark.parametrize("shortcut", [False, True])
def test_m8n8k4_groups_operands(shortcut) -> None:
    out = run([api.load([M8N8K4])[0]], shortcut)
    ids = {i.id for i in out}
    assert "mma.m8n8k4.f16.row.col.f32" in ids and len(ids) == 8  # A row/col x B row/col x C f16/f32
    for ins in out:
        assert ins.as_expected
        lg = ins.get("lane_groups")
        assert lg.status == "proved"
        if not shortcut:
            for name in ("shapes", "k", "lane_groups"):
                assert_agree(ins.get(name))


def test_corrected_layout_replaces_the_doc_one() -> None:
    out = run(api.load([TF32]))
    (ins,) = out
    assert [x.id for x in ins.operands] == ["mma.sp.m16n8k16.A.tf32", "mma.sp.m16n8k16.B.tf32@corrected",
                                             "mma.sp.m16n8k16.tf32.C.f32"]


def test_tf32_b_register_erratum_is_reported_at_instruction_level() -> None:
    (ins,) = run(api.load([TF32]))
    r = ins.get("registers")
    assert r.status == "refuted" and r.expected == "refuted" and ins.as_expected
    c = r.counterexample
    assert (c["operand"], c["layout"], c["registers"], c["elements_per_register"]) == ("B", "mma.sp.m16n8k16.B.tf32", 4, 4)
    assert (c["per_thread"], c["expected_per_thread"], c["k"]) == (16, 4, 16)
    assert "as the doc states it" in r.message and "K = 16" in r.message
    assert any(f.check == "registers" and f.as_expected for f in ins.findings)
    # the semantic checks use the corrected B and pass
    assert ins.get("k").status == "proved" and ins.get("shapes").status == "proved"


def test_json_and_text_forms() -> None:
    (ins,) = run(api.load([TF32]))
    j = ins.to_json()
    assert list(j)[:5] == ["id", "instruction", "shape", "operands", "checks"]
    assert j["shape"] == {"m": 16, "n": 8, "k": 16}
    for name, c in j["checks"].items():
        assert set(c) >= {"status", "expected", "counterexample", "message", "engines"}, name
    assert "metadata_budget" in j["derived"]
    json.dumps(j)
    lines = instruction_lines(ins)
    assert lines[0].startswith("mma.sp.m16n8k16.tf32.f32") and "registers:FAIL" in lines[0]
    assert any("derived, not stated by the doc text" in ln for ln in lines)
    assert all(isinstance(f, Finding) for f in ins.findings)


def test_check_all_includes_instructions() -> None:
    specs = api.load([TF32, M8N8K16])
    rep = api.check_all(specs)
    assert rep.as_expected and len(rep.instructions) == 2
    out = render_json.check_json(rep)
    assert [i["id"] for i in out["instructions"]] == ["mma.m8n8k16.u8_s8.s32", "mma.sp.m16n8k16.tf32.f32"]  # doc order
    assert "mma.sp.m16n8k16.tf32.f32" in render_text.check_text(rep)


# ----------------------------------------------------------------------------- mutations

def test_mutation_group_formula_is_caught() -> None:
    spec = mutate(M8N8K4, 'group = "(%laneid >> 2) % 4"', 'group = "(%laneid >> 2) % 2"')
    out = run([spec])
    for ins in out:
        lg = ins.get("lane_groups")
        assert lg.status == "refuted" and not ins.as_expected
        assert_agree(lg)
        assert lg.counterexample["kind"] == "size"
        assert lg.counterexample["lanes"] in (0, 16)
        assert "MMA computation" in lg.message


def test_mutation_b_shrinks_k_is_caught() -> None:
    spec = mutate(M8N8K16, "row =  (threadID_in_group * 4) + i", "row =  (threadID_in_group * 2) + i")
    (ins,) = run([spec])
    k = ins.get("k")
    assert k.status == "refuted"
    assert_agree(k)
    c = k.counterexample
    # B rows are now 2t + i in 0..9: k = 10..15 are held by A only
    assert c["A"] is not None and c["B"] is None and 10 <= c["k"] <= 15
    assert f"but B (mma.m8n8k16.B.u8_s8) holds no element with row k = {c['k']}" in k.message
    assert ins.get("shapes").status == "refuted"


def test_mutation_b_shrinks_k_m8n8k4() -> None:
    spec = mutate(M8N8K4, "row =        %laneid % 4\n\ncol =         i", "row =        %laneid % 2\n\ncol =         i")
    out = [i for i in run([spec]) if ".row.row." in i.id or ".col.row." in i.id]
    assert out
    for ins in out:
        k = ins.get("k")
        assert k.status == "refuted"
        assert_agree(k)
        assert k.counterexample["k"] in (2, 3) and k.counterexample["A"] is not None
        assert "mma" in k.counterexample and "MMA computation" in k.message


def test_mutation_a_shifted_in_k_is_caught() -> None:
    spec = mutate(M8N8K4, "col =            i                    for ai where i = {0,..,3}",
                  "col =            i + 1                for ai where i = {0,..,3}")
    out = [i for i in run([spec]) if ".f16.row." in i.id]
    assert out
    for ins in out:
        k = ins.get("k")
        assert k.status == "refuted"
        assert_agree(k)
        c = k.counterexample
        assert (c["k"] == 4 and c["A"] is not None) or (c["k"] == 0 and c["B"] is not None)


def test_mutation_register_count_is_caught() -> None:
    spec = mutate(M8N8K16, 'registers = 2\nregister_type = "s32"', 'registers = 4\nregister_type = "s32"')
    (ins,) = run([spec])
    r = ins.get("registers")
    assert r.status == "refuted" and r.expected == "proved"
    assert r.counterexample["operand"] == "C" and r.counterexample["per_thread"] == 4
    assert r.counterexample["expected_per_thread"] == 2


def test_mutation_sparse_metadata_reaches_instruction() -> None:
    spec = mutate(U8, "invalid = [0b0000, 0b0101, 0b1010, 0b1111]", "invalid = [0b0101, 0b1010, 0b1111]")
    (ins,) = run([spec])
    d = ins.get("metadata_distinct")
    assert d.status == "refuted" and not ins.as_expected
    assert_agree(d)
    assert any(f.check == "metadata_distinct" and not f.as_expected for f in ins.findings)


def test_grouping_pairs_types() -> None:
    spec = api.load([M8N8K16])[0]
    assert [(ins.id, ins.kind, *(x.operand for x in ins.operands)) for ins in instructions(spec)] == [
        ("mma.m8n8k16.u8_s8.s32", "mma", "A", "B", "C")]


def test_every_sparse_a_in_the_catalog_gets_every_sparse_check(catalog_report):
    """Issue 3: every mma.sp section is covered, including those whose B is only a figure."""
    from verify import api
    from verify.layout.sparse import is_sparse as is_sparse_range
    specs, report = catalog_report
    sparse_a = {lay.id for lay in api.layouts(specs) if is_sparse_range(lay)}
    seen: dict[str, set[str]] = {}
    for ins in report.instructions:
        for op in ins.operands:
            if op.id in sparse_a:
                seen.setdefault(op.id, set()).update(c.check for c in ins.checks)
    assert set(seen) == sparse_a
    for lid, checks in seen.items():
        assert {"chunk_ranges", "metadata_distinct", "metadata_ordered", "metadata_budget", "metadata_group"} <= checks, lid
    assert report.as_expected
