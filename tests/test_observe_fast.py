"""Hardening item 17: the relation reconstruction, the comparison and the SIMULATED device are proportional
to the data, and give exactly what the quadratic versions gave (``hardware_reference``, the code before).

Differential: on small instructions of the bundled specs and of the test specs, with a device that follows
the specs and with deliberately deviating devices, the raw output of the simulated device, the relations
and every result (status, message, counterexample) are the reference's, byte for byte."""
from __future__ import annotations

import functools

import numpy as np
import pytest

import hardware_reference as ref
from verify import api
from verify.catalog.spec import load_spec_text
from verify.hardware import explain, observe, probes
from verify.hardware import simdevice as sd

from conftest import SPECS
from tiers import by_kind
from test_observe import M8N8K4, M16N8K16


@functools.cache
def _small() -> tuple[probes.Instruction, ...]:
    extra = load_spec_text(M16N8K16, "<m16n8k16>").layouts + load_spec_text(M8N8K4, "<m8n8k4>").layouts
    inss = probes.instructions(api.layouts(api.load([SPECS]))) + probes.instructions(extra)
    small = [ins for ins in inss if ins.plan.total <= 34_000]
    # one of each shape and kind (dense, sparse, 4 MMA computations, packed 4-bit, the doc-vs-corrected pairs)
    seen: dict[tuple[str, str, str], probes.Instruction] = {}
    for ins in small:
        seen.setdefault((ins.name, str(ins.shape), ins.c.ptx_type), ins)
    return tuple(sorted(seen.values(), key=lambda i: i.id))


def _models(ins: probes.Instruction) -> list[sd.DeviceModel]:
    base = sd.model_from_instruction(ins)
    na = ins.a.elements
    out = [base,
           sd.swap_elements(base, "A", (5, na // 2 - 1), (5, na // 2)),
           sd.swap_elements(base, "B", (0, 0), (0, ins.b.elements - 1)),
           sd.swap_elements(base, "C", (9, 0), (9, ins.c.elements - 1)),
           sd.shift_row(base, "C", (9, 0), 1),
           sd.swap_elements(base, "A", (4, 0), (20, 0))]
    if ins.sparse:
        out.append(sd.DeviceModel(lambda ln, i, m: base.a(ln, i, 0x4), base.b, base.c, "ignores metadata"))
    return out


def _kind(ins: probes.Instruction) -> tuple[bool, int, bool, bool]:
    """What the pipeline branches on: sparse, MMA computations, 8-bit packing, a doc layout next to its correction."""
    return ins.sparse, ins.groups, ins.a.elements_per_register == 4, any(lay.corrected for lay in ins.layouts)


def _case_ids() -> list:
    """The smallest instruction of each kind in the README's command, the others in CI's (tests/tiers.py)."""
    kinds = {ins.id: _kind(ins) for ins in sorted(_small(), key=lambda i: (i.plan.total, i.id))}
    return by_kind(kinds, kinds.__getitem__, ids=str)


def test_the_selection_covers_each_kind() -> None:
    inss = _small()
    assert any(i.sparse for i in inss) and any(i.groups == 4 for i in inss)
    assert any(i.a.elements_per_register == 4 for i in inss)  # packed 8-bit
    assert any(lay.corrected for i in inss for lay in i.layouts)  # a doc layout next to its correction
    assert len(inss) >= 12


@pytest.mark.parametrize("iid", _case_ids())
def test_fast_pipeline_equals_the_reference(iid: str) -> None:
    ins = next(i for i in _small() if i.id == iid)
    for model in _models(ins):
        raw = sd.run(ins, model)
        assert raw == ref.run(ins, model), model.name
        obs = observe.from_raw(raw, simulated=True)
        rel = observe.relations(ins, obs)
        assert rel == ref.relations(ins, obs), model.name
        got = explain.compare(ins, obs, rel)
        assert got == ref.compare(ins, obs, rel), model.name


def test_the_deviations_are_not_vacuous() -> None:
    """The deviating devices of the differential test do change verdicts (so equality above means something)."""
    ins = next(i for i in _small() if str(i.shape) == "m16n8k16" and not i.sparse and i.c.ptx_type == "f32")
    statuses = set()
    for model in _models(ins)[1:]:
        obs = observe.from_raw(sd.run(ins, model), simulated=True)
        statuses.add(tuple(r.status for r in explain.compare(ins, obs)))
    assert len(statuses) >= 3 and all("contradicted" in s for s in statuses)


def test_records_with_negative_zero_and_nan() -> None:
    """The vectorised decoding keeps the scalar one's rules: -0.0 is zero, a NaN is something."""
    ins = next(i for i in _small() if i.c.ptx_type == "f32" and not i.sparse)
    w = ins.plan.index("c", 0, x=0)
    for bits, reached in ((0x80000000, False), (0x7FC00000, True), (0x00000001, True)):
        raw = {"id": ins.id, "instruction": ins.text, "experiments": ins.plan.total,
               "records": [[w, 0, 0, bits]]}
        obs = observe.from_raw(raw, simulated=True)
        assert (observe.relations(ins, obs).c_to_d[(0, 0)] == {(0, 0)}) is reached
        assert observe.relations(ins, obs) == ref.relations(ins, obs)


def test_records_read_as_an_array_or_as_tuples_agree() -> None:
    """Records that fit an integer array are read at array speed; others (a float, a negative raw) the
    scalar way, as before: the same sorted records and relations either way."""
    ins = next(i for i in _small() if i.c.ptx_type == "s32" and not i.sparse)
    sim = sd.run(ins)
    fast = observe.from_raw(sim, simulated=True)
    assert isinstance(fast.table, np.ndarray)
    slow_raw = dict(sim, records=[[float(r[0]), r[1], r[2], r[3]] for r in reversed(sim["records"])])
    slow = observe.from_raw(slow_raw, simulated=True)
    assert isinstance(slow.table, tuple)
    assert fast.records == slow.records == tuple(sorted(tuple(r) for r in sim["records"]))
    assert observe.relations(ins, fast) == observe.relations(ins, slow) == ref.relations(ins, slow)
    huge = observe.from_raw(dict(sim, records=[[0, 0, 0, (1 << 64) - 1], [0, 0, 1, 1]]), simulated=True)
    assert huge.records == ((0, 0, 0, (1 << 64) - 1), (0, 0, 1, 1))
