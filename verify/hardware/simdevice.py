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

import functools
from dataclasses import dataclass
from typing import Any, Callable, Mapping

import numpy as np

from .explain import SpecCells
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
    la, lb, lc = ins.a.layout, ins.b.layout, ins.c.layout
    assert la is not None and lc is not None  # A and C/D are held in registers (only a wgmma's B is a tile)
    ca, cc = SpecCells(la), SpecCells(lc)
    cb = None if lb is None else SpecCells(lb)

    def a(lane: int, i: int, meta: int) -> Cell | None:
        return ca.cell(lane, i, meta)

    def b(lane: int, i: int) -> Cell | None:
        if cb is None:  # a wgmma's B tile: read as the probe's descriptor lays it out
            return ins.tile.cell(i)
        return cb.cell(lane, i)

    def c(lane: int, i: int) -> Cell | None:
        return cc.cell(lane, i)
    b_name = "the B tile as its descriptor lays it out" if lb is None else lb.id
    return DeviceModel(a, b, c, f"follows {la.id}, {b_name}, {lc.id}")


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


@dataclass(frozen=True)
class Deviation:
    """What a deliberately deviating SIMULATED device does differently from one layout (any probe kind).

    ``swap``: elements ``first`` and ``second`` (each (lane, i)) trade cells; ``copy``: ``first`` holds
    ``second``'s cell too (one cell held twice, one never)."""

    layout: str  # the id of the layout the device departs from
    first: tuple[int, int]
    second: tuple[int, int]
    mode: str = "swap"

    def source(self, lane: int, i: int) -> tuple[int, int]:
        """Whose cell (lane, i) holds on the deviating device."""
        e = (lane, i)
        if e == self.first:
            return self.second
        if e == self.second and self.mode == "swap":
            return self.first
        return e

    def bend(self, point: Callable[..., Any]) -> Callable[..., Any]:
        """``point(lane, i, *rest)`` as the deviating device has it."""
        def bent(lane: int, i: int, *rest: Any) -> Any:
            return point(*self.source(lane, i), *rest)
        return bent

    @property
    def name(self) -> str:
        op = "<->" if self.mode == "swap" else "takes the cell of"
        return f"deviates from {self.layout}: {self.first} {op} {self.second}"


@dataclass(frozen=True)
class Placement(Deviation):
    """A SIMULATED device that puts every cell where another layout does (a Tensor Memory probe's keys):
    ``table`` pairs each key with the key whose cell it holds; ``label`` names the other layout."""

    table: tuple[tuple[tuple[int, int], tuple[int, int]], ...] = ()
    label: str = ""

    @functools.cached_property
    def _where(self) -> dict[tuple[int, int], tuple[int, int]]:
        return dict(self.table)

    def source(self, lane: int, i: int) -> tuple[int, int]:
        return self._where.get((lane, i), (lane, i))

    @property
    def name(self) -> str:
        return f"deviates from {self.layout}: places every cell as {self.label} does"


def deviate(model: DeviceModel, ins: Instruction, dev: Deviation) -> DeviceModel:
    """The device of ``model`` with ``dev`` applied to the operand of ``ins`` whose layout it names."""
    ops = {"A": ins.a, "B": ins.b, "C": ins.c}
    hit = [k for k, op in ops.items() if op.layout is not None and op.layout.id == dev.layout]
    if not hit:
        raise ValueError(f"{dev.layout} is not an operand layout of {ins.id}")
    name = f"{model.name}; {dev.name}"
    if hit[0] == "A":
        return DeviceModel(dev.bend(model.a), model.b, model.c, name)
    if hit[0] == "B":
        return DeviceModel(model.a, dev.bend(model.b), model.c, name)
    return DeviceModel(model.a, model.b, dev.bend(model.c), name)


def shift_row(model: DeviceModel, operand: str, element: tuple[int, int], delta: int) -> DeviceModel:
    """Element (lane, i) of ``operand`` sits ``delta`` rows further down than the model says."""
    def f(cell: Cell | None) -> Cell | None:
        return None if cell is None else (cell[0], cell[1] + delta, cell[2])
    return _bend(model, operand, {element: f}, f"{model.name}; {operand} {element} row {delta:+d}")


# ----------------------------------------------------------------------------- execution

def _dims(ins: Instruction) -> tuple[int, int, int, int]:
    m, n, k = ins.shape.m, ins.shape.n, ins.shape.k
    assert isinstance(m, int) and isinstance(n, int) and isinstance(k, int)  # a probed instruction is concrete
    return ins.groups, m, n, k


def _index(fn: Callable[..., Cell | None], lanes: int, n: int, lim: tuple[int, int, int],
           *extra: int) -> tuple[np.ndarray, ...]:
    """(group, row, col, valid) arrays of shape (lanes, n) for a cell function (a cell outside
    ``lim`` counts as no cell)."""
    g = np.zeros((lanes, n), dtype=np.int64)
    r = np.zeros((lanes, n), dtype=np.int64)
    c = np.zeros((lanes, n), dtype=np.int64)
    ok = np.zeros((lanes, n), dtype=bool)
    for lane in range(lanes):
        for i in range(n):
            cell = fn(lane, i, *extra)
            if cell is not None and all(0 <= v < m for v, m in zip(cell, lim)):
                g[lane, i], r[lane, i], c[lane, i] = cell
                ok[lane, i] = True
    return g, r, c, ok


def _encode(op: Operand, vals: np.ndarray) -> np.ndarray:
    """Raw register bits (uint64) of D values, shape (..., lanes, registers)."""
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


class _Records:
    """Nonzero D registers of many experiments, gathered as arrays."""

    def __init__(self, op: Operand) -> None:
        self.op = op
        self.parts: list[tuple[np.ndarray, ...]] = []

    def sparse(self, w: np.ndarray, lane: np.ndarray, i: np.ndarray, vals: np.ndarray) -> None:
        """Single D elements (experiment, lane, element index, value); elements of one register merge."""
        if not len(w):
            return
        op = self.op
        epr = op.elements_per_register
        reg = i // epr
        # the bits of each value in its slot, one element at a time
        single = np.zeros((len(w), epr), dtype=np.float64)
        single[np.arange(len(w)), i % epr] = vals
        per_slot = _encode(_one_register(op), single[:, None, :])[:, 0, 0]
        key = np.stack([w, lane, reg], axis=1)
        order = np.lexsort((reg, lane, w))
        key, per_slot = key[order], per_slot[order]
        starts = np.flatnonzero(np.r_[True, np.any(key[1:] != key[:-1], axis=1)])
        raw = np.bitwise_or.reduceat(per_slot, starts)
        keep = raw != 0
        k = key[starts][keep]
        self.parts.append((k[:, 0], k[:, 1], k[:, 2], raw[keep]))

    def rows(self) -> list[list[int]]:
        if not self.parts:
            return []
        w, lane, reg, raw = (np.concatenate([p[j] for p in self.parts]) for j in range(4))
        order = np.lexsort((raw, reg, lane, w))
        return np.stack([x[order].astype(np.uint64) for x in (w, lane, reg, raw)], axis=1).tolist()


def _one_register(op: Operand) -> Operand:
    """The operand with one register per lane (for encoding single elements)."""
    import dataclasses
    return dataclasses.replace(op, registers=1, elements=op.elements_per_register)


def _join(keys_a: np.ndarray, keys_b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every (index into a, index into b) with equal keys, in order of a then b."""
    order = np.argsort(keys_b, kind="stable")
    sb = keys_b[order]
    lo = np.searchsorted(sb, keys_a, side="left")
    hi = np.searchsorted(sb, keys_a, side="right")
    counts = hi - lo
    ia = np.repeat(np.arange(len(keys_a)), counts)
    offs = np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts)
    return ia, order[np.repeat(lo, counts) + offs]


def run(ins: Instruction, model: DeviceModel | None = None) -> dict[str, Any]:
    """Every probe experiment on the SIMULATED device; the probe's raw-D JSON (``"simulated": true``).

    Work is proportional to the records it returns, not to the experiments: each experiment's D is written
    down from the cells of its one-hot element(s), as the matrix product gives it (a one-hot A and a
    one-hot B that do not meet are never computed)."""
    model = model or model_from_instruction(ins)
    plan = ins.plan
    G, M, N, K = _dims(ins)
    lanes = ins.threads
    na, nb, nc = ins.a.elements, ins.b.elements, ins.c.elements
    bg, bk, bc, bok = _index(model.b, ins.b_lanes, nb, (G, K, N))
    cg, cr, cc, cok = _index(model.c, lanes, nc, (G, M, N))
    out = _Records(ins.c)
    # the D elements (lane, i) that have a cell, and their (group, row, col)
    d_lane, d_i = np.nonzero(cok)
    dg, dr, dc = cg[d_lane, d_i], cr[d_lane, d_i], cc[d_lane, d_i]
    d_key = (dg * M + dr) * N + dc
    b_ones = np.zeros((G, K, N))
    np.add.at(b_ones, (bg[bok], bk[bok], bc[bok]), 1.0)
    ys = np.flatnonzero(bok.reshape(-1))
    bgf, bkf, bcf = bg.reshape(-1), bk.reshape(-1), bc.reshape(-1)
    for m, meta in enumerate(plan.metadata):
        ag, ar, ak, aok = _index(model.a, lanes, na, (G, M, K), meta)
        a_ones = np.zeros((G, M, K))
        np.add.at(a_ones, (ag[aok], ar[aok], ak[aok]), 1.0)
        xs = np.flatnonzero(aok.reshape(-1))
        agf, arf, akf = ag.reshape(-1), ar.reshape(-1), ak.reshape(-1)
        # a: A one-hot at x, B all ones: D[g(x), r(x), n] = b_ones[g(x), k(x), n]
        ix, idd = _join(agf[xs] * M + arf[xs], dg * M + dr)
        x = xs[ix]
        out.sparse(plan.index("a", m, x=0) + x, d_lane[idd], d_i[idd], b_ones[agf[x], akf[x], dc[idd]])
        # b: B one-hot at y, A all ones: D[g(y), m, c(y)] = a_ones[g(y), m, k(y)]
        iy, idd = _join(bgf[ys] * N + bcf[ys], dg * N + dc)
        y = ys[iy]
        out.sparse(plan.index("b", m, y=0) + y, d_lane[idd], d_i[idd], a_ones[bgf[y], dr[idd], bkf[y]])
        if plan.pairs:
            # ab: A one-hot at x, B one-hot at y: one product, at D[g, r(x), c(y)] when they meet on (g, k)
            ix, iy = _join(agf[xs] * K + akf[xs], bgf[ys] * K + bkf[ys])
            x, y = xs[ix], ys[iy]
            ip, idd = _join((agf[x] * M + arf[x]) * N + bcf[y], d_key)
            w = plan.index("ab", m, 0, 0) + x[ip] * plan.tb + y[ip]
            out.sparse(w, d_lane[idd], d_i[idd], np.ones(len(ip)))
    if plan.tc:
        # c: C one-hot at z, A = B = 0: D = C
        iz, idd = _join(d_key, d_key)
        z = d_lane[iz] * nc + d_i[iz]
        out.sparse(plan.index("c", 0, x=0) + z, d_lane[idd], d_i[idd], np.ones(len(iz)))
    return {"format": "ptx-layout-verify/raw-d/1", "instruction": ins.text, "id": ins.id,
            "simulated": True,
            "device": {"name": f"{SIMULATED_NAME} ({model.name})", "compute_capability": None,
                       "driver_version": None, "runtime_version": None},
            "experiments": plan.total, "overflow": False, "records": out.rows()}
