"""No check hands a plain mapping as its counterexample: on broken layouts of every kind (the mutations the
check tests already use), every witness anywhere in the results of ``api.check``, the instruction and sparse
checks, ``conform``, ``handoff``, ``diff``, ``consistent`` and ``banks`` is a typed class, never ``Facts``
(the fallback kept for a user's or a proof script's mapping)."""
from __future__ import annotations

import dataclasses
import functools
from typing import Any

import numpy as np

from verify import api
from verify.checks import sparse as sparse_checks
from verify.checks.consistency_sides import Given
from verify.checks.diff import diff
from verify.checks.family import check_any
from verify.checks.instruction import check_instructions
from verify.checks.tmem_lanes import check_tmem_lanes
from verify.formula import parse_formula
from verify.results import CheckResult
from verify.witnesses import Facts, Witness

from conftest import SPECS

M8N8K4 = SPECS / "mma.m8n8k4.f16.toml"
M8N8K16 = SPECS / "mma.m8n8k16.toml"
U8 = SPECS / "mma.sp.m16n8k32.u8_s8.toml"
SW128 = "Sw<3,4,3> o smem_ptr[16b](unset) o (_8,_64):(_64,_1)"
SW64 = "Sw<2,4,3> o smem_ptr[16b](unset) o (_8,_64):(_64,_1)"


def witnesses(obj: Any) -> list[Witness]:
    """Every witness reachable from ``obj`` through results' fields, tuples, lists and dict values (layouts,
    specs and arrays are not results and are not searched)."""
    found: list[Witness] = []
    seen: set[int] = set()

    def walk(x: Any) -> None:
        if id(x) in seen or x is None or isinstance(x, (str, int, float, bool, np.ndarray)):
            return
        seen.add(id(x))
        if isinstance(x, Witness):
            found.append(x)
        elif isinstance(x, (list, tuple)):
            for y in x:
                walk(y)
        elif isinstance(x, dict):
            for y in x.values():
                walk(y)
        elif dataclasses.is_dataclass(x) and not type(x).__module__.startswith(("verify.layout", "verify.catalog")):
            for f in dataclasses.fields(x):
                walk(getattr(x, f.name))
    walk(obj)
    return found


def assert_typed(*results: Any) -> list[Witness]:
    found = witnesses(results)
    assert found, "no counterexample at all: the inputs are not broken"
    facts = [w.to_json() for w in found if isinstance(w, Facts)]
    assert not facts, f"checks that still hand a plain mapping: {facts}"
    return found


def mutate(path: Any, old: str, new: str) -> Any:
    text = path.read_text()
    assert old in text, old
    return api.loads(text.replace(old, new, 1), str(path))


@functools.cache
def catalog() -> tuple:
    return tuple(api.layouts(api.load(SPECS)))


def spec(shape: str, operand: str, ptype: str) -> Any:
    return next(x for x in catalog() if x.instruction == "mma" and str(x.shape) == shape and x.operand == operand
                and ptype in x.types and not x.corrected and x.variant is None)


def test_the_walker_finds_a_facts_witness() -> None:
    """The test can fail: a result carrying a plain mapping is found."""
    bad = CheckResult("count", "refuted", "proved", {"total": 32, "matrix": 64}, "m")
    assert [type(w) for w in witnesses([bad])] == [Facts]


def test_layout_checks_on_broken_layouts() -> None:
    outside = api.layout_from_formula("row = %laneid >> 2\ncol = (%laneid % 4) * 3", operand="C", rows=8, cols=8,
                                      elements=1, types=("f32",), registers=1, register_type="f32")
    collide = api.layout_from_formula("row = %laneid >> 3\ncol = %laneid % 4", operand="C", rows=8, cols=8,
                                      elements=2, types=("f32",), registers=2, register_type="f32")
    counted = mutate(M8N8K16, 'registers = 1\nregister_type = "b32"\nelements_per_register = 4\n'
                     'elements = "a0, a1, a2, a3"', 'registers = 1\nregister_type = "b32"\nelements_per_register = 4\n'
                     'elements = "a0, a2, a1, a3"')
    packed = mutate(M8N8K16, 'register_type = "b32"', 'register_type = "b64"')
    found = assert_typed(api.check(outside), api.check(collide), [api.check(lay) for lay in counted.layouts],
                         [api.check(lay) for lay in packed.layouts],
                         [check_any(lay) for lay in mutate(M8N8K4, "registers = 2", "registers = 3").layouts])
    kinds = {type(w).__name__ for w in found}
    assert {"CellOutside", "ElementsCollide", "CellUnreached", "RegisterCount", "RegisterPacking",
            "ElementList"} <= kinds, kinds


def test_instruction_checks_on_broken_instructions() -> None:
    groups = mutate(M8N8K4, 'group = "(%laneid >> 2) % 4"', 'group = "(%laneid >> 2) % 2"')
    k = mutate(M8N8K16, "row =  (threadID_in_group * 4) + i", "row =  (threadID_in_group * 2) + i")
    regs = mutate(M8N8K16, 'registers = 2\nregister_type = "s32"', 'registers = 4\nregister_type = "s32"')
    lay = next(x for x in catalog() if x.id == "tcgen05.ld.32x32b.R.b32")
    tmem = check_tmem_lanes(lay.with_formula(parse_formula("row = %laneid + 1\ncol = i\n", "r", ("NUM",))))
    found = assert_typed(check_instructions([groups], [], 10.0), check_instructions([k], [], 10.0),
                         check_instructions([regs], [], 10.0), tmem)
    kinds = {type(w).__name__ for w in found}
    assert {"LaneGroups", "KCoverage", "AxisCoverage", "OperandRegisters", "TmemLane"} <= kinds, kinds


def test_sparse_checks_on_broken_metadata() -> None:
    def a_of(s: Any) -> Any:
        return next(x for x in s.layouts if x.operand == "A")
    runs = [sparse_checks.sparse_checks(a_of(mutate(U8, old, new)), 10.0)[0] for old, new in (
        ("invalid = [0b0000, 0b0101, 0b1010, 0b1111]", "invalid = [0b0101, 0b1010, 0b1111]"),
        ("row = groupID + (8 * (%laneid % 2))", "row = groupID"),
        ('selector = "(%laneid % 4) >> 1"', 'selector = "%laneid % 4"'),
        ("lastcol  = firstcol + 7", "lastcol  = firstcol + 3"),
        ("groupID = %laneid >> 2\nrow = groupID + (8 * (%laneid % 2))",
         "groupID = %laneid >> 2\nrow = ((groupID + 1) % 8) + (8 * (%laneid % 2))"))]
    kinds = {type(w).__name__ for w in assert_typed(runs)}
    assert {"SparseMetadata", "MetadataField", "SparseRange"} <= kinds, kinds


def test_conform_handoff_diff_consistent_banks_on_broken_inputs() -> None:
    a, c = spec("m16n8k16", "A", "f16"), spec("m16n8k16", "C", "f32")
    swapped = api.index_code("group = lane // 4\ntig = lane % 4\nj = i ^ 2 if i < 4\n    i otherwise\n"
                             "row = group + 8 * ((j // 2) % 2)\ncol = tig * 2 + j % 2 + 8 * (j // 4)\n", a)
    twice = api.index_code("row = lane / 4 + 8 * (k / 2)\ncol = (lane % 4) * 2 + k % 2\nk = 0 if i == 1\n"
                           "    i otherwise\n", c)
    moved = api.index_code("row = (lane / 4 + 1) % 8 + 8 * (i / 2)\ncol = (lane % 4) * 2 + i % 2\n", c)
    conforms = [api.conform(a, swapped), api.conform(c, twice), api.conform(c, moved)]
    shuffle = api.handoff(spec("m16n8k32", "C", "s32"), spec("m16n8k32", "A", "s8"))
    old = api.load([M8N8K16])
    new = [mutate(M8N8K16, "row =  (threadID_in_group * 4) + i", "row =  (threadID_in_group * 2) + i")]
    swizzles = api.consistent(Given("cute", SW128), Given("cute", SW64))
    hole = api.shared_layout("index", "off = row * 32 + col * 2 if col < 8", tile=(16, 16), type="f16")
    misaligned = api.banks(api.shared_layout("cute", "(16,32):(32,1)", type="f16"), "ldmatrix.x4",
                           addresses="row = %laneid % 16\ncol = (%laneid / 16) * 8 + 1")
    found = assert_typed(conforms, shuffle, diff(old, new), swizzles, api.banks(hole, "ldmatrix.x4"), misaligned)
    kinds = {type(w).__name__ for w in found}
    assert {"FragmentDiffers", "NotPermuted", "CellHeldBy", "BufferPlace", "LaneAddress"} <= kinds, kinds
