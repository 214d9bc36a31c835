"""A SIMULATED device: numpy executes D = A x B + C under a chosen "true" layout.

It runs the very experiments of the probe kernel (``verify.probes.ExperimentPlan``)
and returns the probe's raw-D JSON format, so ``verify.observe`` treats it
exactly like a GPU's output.  Use it to test the observation pipeline, never as
evidence about hardware: everything it returns carries ``"simulated": true`` and
its device name starts with ``SIMULATED``.

The true layout is a ``DeviceModel``: for each operand, (lane, i) -> (mma, row,
col) (for A the column is the logical k, under a sparse metadata word).  Build
one from a spec (``model_from_instruction``) and bend it (``swap_elements``,
``shift_row``) to simulate hardware that does not follow the spec.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

import numpy as np

from .observe import SpecCells
from .probes import Instruction, Operand

Cell = tuple[int, int, int]  # (MMA computation, row, col)
ACell = Callable[[int, int, int], "Cell | None"]  # (lane, i, metadata word) -> cell
BCell = Callable[[int, int], "Cell | None"]

SIMULATED_NAME = "SIMULATED numpy device"


@dataclass(frozen=True)
class DeviceModel:
    """The layout the simulated hardware really uses."""

    a: ACell
    b: BCell
    c: BCell  # C and D
    name: str = "follows the spec"


def model_from_instruction(ins: Instruction) -> DeviceModel:
    """A device that follows the instruction's probe layouts exactly."""
    ca, cb, cc = SpecCells(ins.a.layout), SpecCells(ins.b.layout), SpecCells(ins.c.layout)

    def a(lane: int, i: int, meta: int) -> Cell | None:
        return ca.cell(lane, i, meta)

    def b(lane: int, i: int) -> Cell | None:
        return cb.cell(lane, i)

    def c(lane: int, i: int) -> Cell | None:
        return cc.cell(lane, i)
    return DeviceModel(a, b, c, f"follows {ins.a.layout.id}, {ins.b.layout.id}, {ins.c.layout.id}")


def _bend(model: DeviceModel, operand: str, change: Mapping[tuple[int, int], Callable[[Cell | None], Cell | None]],
          name: str) -> DeviceModel:
    if operand == "A":
        old_a = model.a

        def a(lane: int, i: int, meta: int) -> Cell | None:
            f = change.get((lane, i))
            return f(old_a(lane, i, meta)) if f else old_a(lane, i, meta)
        return DeviceModel(a, model.b, model.c, name)
    old = model.b if operand == "B" else model.c

    def g(lane: int, i: int) -> Cell | None:
        f = change.get((lane, i))
        return f(old(lane, i)) if f else old(lane, i)
    return DeviceModel(model.a, g if operand == "B" else model.b, g if operand == "C" else model.c, name)


def swap_elements(model: DeviceModel, operand: str, first: tuple[int, int], second: tuple[int, int]) -> DeviceModel:
    """The hardware holds ``first`` where the model holds ``second`` and vice versa."""
    if operand == "A":
        fa = model.a

        def a(lane: int, i: int, meta: int) -> Cell | None:
            e = (lane, i)
            src = second if e == first else first if e == second else e
            return fa(src[0], src[1], meta)
        return DeviceModel(a, model.b, model.c, f"{model.name}; {operand} {first} <-> {second}")
    fb = model.b if operand == "B" else model.c

    def g(lane: int, i: int) -> Cell | None:
        e = (lane, i)
        src = second if e == first else first if e == second else e
        return fb(src[0], src[1])
    name = f"{model.name}; {operand} {first} <-> {second}"
    return DeviceModel(model.a, g if operand == "B" else model.b, g if operand == "C" else model.c, name)


def shift_row(model: DeviceModel, operand: str, element: tuple[int, int], delta: int) -> DeviceModel:
    """Element (lane, i) of ``operand`` sits ``delta`` rows further down than the model says."""
    def f(cell: Cell | None) -> Cell | None:
        return None if cell is None else (cell[0], cell[1] + delta, cell[2])
    return _bend(model, operand, {element: f}, f"{model.name}; {operand} {element} row {delta:+d}")


# ----------------------------------------------------------------------------- execution

def _dims(ins: Instruction) -> tuple[int, int, int, int]:
    return ins.groups, ins.shape.m, ins.shape.n, ins.shape.k


def _index(fn: Callable[..., Cell | None], n: int, lim: tuple[int, int, int], *extra: int) -> tuple[np.ndarray, ...]:
    """(group, row, col, valid) arrays of shape (32, n) for a cell function."""
    g = np.zeros((32, n), dtype=np.int64)
    r = np.zeros((32, n), dtype=np.int64)
    c = np.zeros((32, n), dtype=np.int64)
    ok = np.zeros((32, n), dtype=bool)
    for lane in range(32):
        for i in range(n):
            cell = fn(lane, i, *extra)
            if cell is not None and all(0 <= v < m for v, m in zip(cell, lim)):
                g[lane, i], r[lane, i], c[lane, i] = cell
                ok[lane, i] = True
    return g, r, c, ok


def _encode(op: Operand, vals: np.ndarray) -> np.ndarray:
    """Raw register bits (uint64) of D values, shape (..., 32, registers)."""
    t = op.ptx_type
    if t == "f32":
        bits = vals.astype(np.float32).view(np.uint32).astype(np.uint64)
    elif t == "f16":
        bits = vals.astype(np.float16).view(np.uint16).astype(np.uint64)
    elif t == "f64":
        bits = vals.astype(np.float64).view(np.uint64)
    elif t == "s32":
        bits = (vals.astype(np.int64) & 0xFFFFFFFF).astype(np.uint64)
    else:
        raise ValueError(f"no encoder for D type .{t}")
    shape = bits.shape[:-1] + (op.registers, op.elements_per_register)
    bits = bits.reshape(shape)
    shifts = (np.arange(op.elements_per_register, dtype=np.uint64) * np.uint64(op.element_bits))
    return np.bitwise_or.reduce(bits << shifts, axis=-1)


def run(ins: Instruction, model: DeviceModel | None = None) -> dict[str, Any]:
    """Every probe experiment on the SIMULATED device; the probe's raw-D JSON (``"simulated": true``)."""
    model = model or model_from_instruction(ins)
    plan = ins.plan
    G, M, N, K = _dims(ins)
    na, nb, nc = ins.a.elements, ins.b.elements, ins.c.elements
    bg, bk, bc, bok = _index(model.b, nb, (G, K, N))
    cg, cr, cc, cok = _index(model.c, nc, (G, M, N))
    records: list[tuple[int, int, int, int]] = []

    def emit(base: int, D: np.ndarray) -> None:
        """D: (T, G, M, N) -> nonzero D registers as records for experiments base..base+T-1."""
        vals = np.where(cok, D[:, cg, cr, cc], 0.0)  # (T, 32, nc)
        raw = _encode(ins.c, vals)  # (T, 32, regs)
        for t, lane, reg in zip(*np.nonzero(raw)):
            records.append((base + int(t), int(lane), int(reg), int(raw[t, lane, reg])))

    def b_matrix(mask: np.ndarray) -> np.ndarray:
        out = np.zeros((G, K, N))
        sel = mask & bok
        np.add.at(out, (bg[sel], bk[sel], bc[sel]), 1.0)
        return out

    b_ones = b_matrix(np.ones((32, nb), dtype=bool))
    b_hot = np.zeros((plan.tb, G, K, N))
    for y in range(plan.tb):
        if bok[y // nb, y % nb]:
            b_hot[y, bg[y // nb, y % nb], bk[y // nb, y % nb], bc[y // nb, y % nb]] = 1.0
    for m, meta in enumerate(plan.metadata):
        ag, ar, ak, aok = _index(model.a, na, (G, M, K), meta)
        a_hot = np.zeros((plan.ta, G, M, K))
        a_ones = np.zeros((G, M, K))
        for x in range(plan.ta):
            lane, i = divmod(x, na)
            if aok[lane, i]:
                a_hot[x, ag[lane, i], ar[lane, i], ak[lane, i]] = 1.0
                a_ones[ag[lane, i], ar[lane, i], ak[lane, i]] += 1.0
        emit(plan.index("a", m, x=0), np.einsum("tgmk,gkn->tgmn", a_hot, b_ones))
        emit(plan.index("b", m, y=0), np.einsum("gmk,tgkn->tgmn", a_ones, b_hot))
        for x in range(plan.ta):
            if a_hot[x].any():
                emit(plan.index("ab", m, x=x, y=0), np.einsum("gmk,tgkn->tgmn", a_hot[x], b_hot))
    c_hot = np.zeros((plan.tc, G, M, N))
    for z in range(plan.tc):
        lane, i = divmod(z, nc)
        if cok[lane, i]:
            c_hot[z, cg[lane, i], cr[lane, i], cc[lane, i]] = 1.0
    emit(plan.index("c", 0, x=0), c_hot)  # A = B = 0: D = C
    return {"format": "ptx-layout-verify/raw-d/1", "instruction": ins.text, "id": ins.id,
            "simulated": True,
            "device": {"name": f"{SIMULATED_NAME} ({model.name})", "compute_capability": None,
                       "driver_version": None, "runtime_version": None},
            "experiments": plan.total, "overflow": False, "records": [list(r) for r in sorted(records)]}
