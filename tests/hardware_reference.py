"""The observation pipeline as it was before it was made proportional to the data (hardening item 17),
kept only as the reference of the differential tests (tests/test_observe_fast.py): relations, compare and the
SIMULATED device's run, verbatim, quadratic in the experiments.  Not used by the package."""
# ruff: noqa
from __future__ import annotations

import math
import struct
from dataclasses import dataclass
from typing import Any, Callable, Mapping

import numpy as np

from verify.witnesses import as_witness
from verify.hardware.observe import ObservationError, Observation, Relations
from verify.results.hardware import HardwareResult
from verify.hardware.probes import Instruction, Operand
from verify.layout.model import Layout
from verify.layout.sparse import SparseMap
from verify.layout.model import cell_at

MAX_LISTED = 8
Elem = tuple[int, int]

def decode(ptx_type: str, bits: int) -> float:
    """The value of one element's raw bits."""
    if ptx_type == "f32" or ptx_type == "tf32":
        return struct.unpack("<f", struct.pack("<I", bits & 0xFFFFFFFF))[0]
    if ptx_type == "f64":
        return struct.unpack("<d", struct.pack("<Q", bits & 0xFFFFFFFFFFFFFFFF))[0]
    if ptx_type == "f16":
        return struct.unpack("<e", struct.pack("<H", bits & 0xFFFF))[0]
    if ptx_type == "s32":
        v = bits & 0xFFFFFFFF
        return float(v - (1 << 32) if v >> 31 else v)
    raise ValueError(f"no decoder for D type .{ptx_type}")


def d_elements(op: Operand, reg: int, raw: int) -> list[tuple[int, float]]:
    """(element index, value) of the nonzero elements in D register ``reg``."""
    out = []
    mask = (1 << op.element_bits) - 1
    for s in range(op.elements_per_register):
        bits = (raw >> (s * op.element_bits)) & mask
        if bits:
            v = decode(op.ptx_type, bits)
            if v != 0 or math.isnan(v):  # -0.0 is zero; a NaN is something
                out.append((reg * op.elements_per_register + s, v))
    return out




def relations(ins: Instruction, obs: Observation) -> Relations:
    """Reconstruct the observed relations (no spec formula is consulted)."""
    plan = ins.plan
    if obs.instruction != ins.id or obs.experiments != plan.total:
        raise ObservationError(obs.path or "<observation>",
                               f"observation of {obs.instruction} ({obs.experiments} experiments) does not "
                               f"fit probe {ins.id} ({plan.total} experiments)")
    if obs.overflow:
        raise ObservationError(obs.path or "<observation>", "the probe's record buffer overflowed")
    hit: dict[int, set[Elem]] = {}
    for w, lane, reg, raw in obs.records:
        if not (0 <= w < plan.total and 0 <= lane < 32 and 0 <= reg < ins.c.registers):
            raise ObservationError(obs.path or "<observation>", f"record {[w, lane, reg, raw]} is out of range")
        for i, _v in d_elements(ins.c, reg, raw):
            hit.setdefault(w, set()).add((lane, i))
    na, nb = ins.a.elements, ins.b.elements
    nm = len(plan.metadata)
    rows = tuple({(x // na, x % na): frozenset(hit.get(plan.index("a", m, x=x), ())) for x in range(plan.ta)}
                 for m in range(nm))
    cols = tuple({(y // nb, y % nb): frozenset(hit.get(plan.index("b", m, y=y), ())) for y in range(plan.tb)}
                 for m in range(nm))
    meets: list[dict[Elem, frozenset[Elem]]] = []
    for m in range(nm):
        base = plan.index("ab", m, 0, 0)
        met: dict[Elem, set[Elem]] = {(x // na, x % na): set() for x in range(plan.ta)}
        for w in hit:
            if base <= w < base + plan.ta * plan.tb:
                x, y = divmod(w - base, plan.tb)
                met[(x // na, x % na)].add((y // nb, y % nb))
        meets.append({k: frozenset(v) for k, v in met.items()})
    nc = ins.c.elements
    c_to_d = {(z // nc, z % nc): frozenset(hit.get(plan.index("c", 0, x=z), ())) for z in range(plan.tc)}
    return Relations(rows, cols, tuple(meets), c_to_d, plan.metadata)



# ----------------------------------------------------------------------------- spec side

def _el(prefix: str, e: Elem) -> str:
    return f"lane {e[0]} element {prefix}{e[1]}"


def _d(e: Elem) -> str:
    return f"D element c{e[1]} of lane {e[0]}"


class SpecCells:
    """(group, row, col) of each (lane, i) by a spec layout; sparse A per metadata word."""

    def __init__(self, lay: Layout) -> None:
        self.layout = lay
        self.sparse = isinstance(lay.map, SparseMap)

    def group(self, lane: int) -> int:
        return self.layout.group_of(lane) if self.layout.groups > 1 else 0

    def cell(self, lane: int, i: int, meta: int = 0) -> tuple[int, int, int] | None:
        cell = cell_at(self.layout, lane, i)
        if self.sparse:
            k = self.layout.map.point_logical(lane, i, meta & 0xF)
            if cell is None or k is None:
                return None
            return self.group(lane), cell[0], k
        return None if cell is None else (self.group(lane), cell[0], cell[1])


def _partition_violations(keys_obs: Mapping[Elem, Any], keys_spec: Mapping[Elem, Any], what: str,
                          name: Any, spec_word: Any, obs_why: Any) -> list[tuple[str, dict[str, Any]]]:
    """Elements grouped together by one side but not the other.

    Elements the experiments never reached (empty observed key) are left out: an
    unreached element says something about the other operands, not about this one.
    """
    out: list[tuple[str, dict[str, Any]]] = []
    first_obs: dict[Any, Elem] = {}
    first_spec: dict[Any, Elem] = {}
    for e in sorted(keys_obs):
        ko, ks = keys_obs[e], keys_spec.get(e)
        if not ko or (isinstance(ko, tuple) and not any(ko)):
            continue
        if ko in first_obs:
            f = first_obs[ko]
            if keys_spec.get(f) != ks:
                out.append((f"the hardware puts {name(f)} and {name(e)} in one {what} ({obs_why(f, e)}); "
                            f"the spec puts them in {spec_word(keys_spec.get(f))} and {spec_word(ks)}",
                            {"relation": what, "first": list(f), "second": list(e), "hardware": "same",
                             "spec": [spec_word(keys_spec.get(f)), spec_word(ks)]}))
        else:
            first_obs[ko] = e
        if ks is not None:
            if ks in first_spec:
                f = first_spec[ks]
                if keys_obs.get(f) != ko:
                    out.append((f"the spec puts {name(f)} and {name(e)} in one {what} ({spec_word(ks)}); "
                                f"on the hardware they differ ({obs_why(f, e, False)})",
                                {"relation": what, "first": list(f), "second": list(e), "hardware": "different",
                                 "spec": [spec_word(ks), spec_word(ks)]}))
            else:
                first_spec[ks] = e
    return out


def _word(kind: str) -> Any:
    def f(key: Any) -> str:
        if key is None:
            return "no cell (the formula is undefined there)"
        g, v = key
        return f"{kind} {v}" + (f" of MMA computation {g}" if g else "")
    return f


def _diff_sets(obs: frozenset[Elem], exp: frozenset[Elem]) -> str:
    extra = sorted(obs - exp)
    missing = sorted(exp - obs)
    parts = []
    if extra:
        parts.append(f"it reaches {_d(extra[0])}, which the spec does not put there")
    if missing:
        parts.append(f"it does not reach {_d(missing[0])}, which the spec puts there")
    return "; ".join(parts)


def compare(ins: Instruction, obs: Observation, rel: Relations | None = None) -> list[HardwareResult]:
    """One result per layout the instruction tests (doc and corrected)."""
    rel = rel or relations(ins, obs)
    probe_c = SpecCells(ins.c.layout)
    probe_a, probe_b = SpecCells(ins.a.layout), SpecCells(ins.b.layout)
    a_part_ok = not _a_k(probe_a, rel)
    b_part_ok = not _b_k(probe_b, rel)
    found: list[tuple[Layout, list[tuple[str, dict[str, Any]]], str]] = []
    for lay in ins.layouts:
        viol: list[tuple[str, dict[str, Any]]] = []
        note = ""
        if (lay.regs.count, lay.regs.elements_per_register, lay.n_elements) != _regs(ins, lay.operand):
            regs, epr, n = _regs(ins, lay.operand)
            viol.append((f"the instruction takes {regs} registers of {epr} element(s) ({n} per lane) for "
                         f"{lay.operand}; the spec says {lay.regs.count} x {lay.regs.elements_per_register} "
                         f"({lay.n_elements})", {"relation": "registers", "hardware": [regs, epr, n],
                                                 "spec": [lay.regs.count, lay.regs.elements_per_register, lay.n_elements]}))
        else:
            cells = SpecCells(lay)
            if lay.operand == "C":
                viol += _c_checks(cells, rel)
            elif lay.operand == "A":
                viol += _a_rows(cells, probe_c, rel) + _a_k(cells, rel)
                if not viol:
                    if b_part_ok:
                        viol += _pairing(cells, probe_b, rel, "A")
                    else:
                        note = f" (k pairing with B not checked: {ins.b.layout.id} has the wrong k classes)"
            else:
                viol += _b_cols(cells, probe_c, rel) + _b_k(cells, rel)
                if not viol:
                    if a_part_ok:
                        viol += _pairing(probe_a, cells, rel, "B")
                    else:
                        note = f" (k pairing with A not checked: {ins.a.layout.id} has the wrong k classes)"
        found.append((lay, viol, note))
    bad_probe = {lay.id for lay, viol, _ in found if viol} & {ins.a.layout.id, ins.b.layout.id, ins.c.layout.id}
    sim = "SIMULATED: " if obs.simulated else ""
    out = []
    for lay, viol, note in found:
        if viol:
            listed = [v[0] for v in viol[:MAX_LISTED]]
            more = f" (and {len(viol) - MAX_LISTED} more)" if len(viol) > MAX_LISTED else ""
            others = sorted(bad_probe - {lay.id})
            if others:
                # A's rows are read through B (all ones) and C/D, and so on: say so
                more += (f" [also contradicted in this run: {', '.join(others)}; this operand's relations are "
                         f"observed through them]")
            msg = f"{sim}{ins.text} on {obs.gpu}: {listed[0]}{more}"
            out.append(HardwareResult(lay.id, ins.id, "contradicted", msg, obs.gpu, obs.simulated,
                                      tuple(listed), as_witness(viol[0][1]), obs.path))
        else:
            msg = f"{sim}{ins.text} on {obs.gpu}: every observed relation agrees{note}"
            out.append(HardwareResult(lay.id, ins.id, "confirmed", msg, obs.gpu, obs.simulated, (), None, obs.path))
    return out


def _regs(ins: Instruction, operand: str) -> tuple[int, int, int]:
    op = {"A": ins.a, "B": ins.b, "C": ins.c}[operand]
    return op.registers, op.elements_per_register, op.elements


def _spec_sets(c: SpecCells, axis: int) -> tuple[dict[Elem, tuple[int, int] | None], dict[tuple[int, int], frozenset[Elem]]]:
    """D element -> (group, row or col) by the C/D spec, and the inverse."""
    key: dict[Elem, tuple[int, int] | None] = {}
    inv: dict[tuple[int, int], set[Elem]] = {}
    for lane in range(c.layout.threads):
        for i in range(c.layout.n_elements):
            cell = c.cell(lane, i)
            k = None if cell is None else (cell[0], cell[axis])
            key[(lane, i)] = k
            if k is not None:
                inv.setdefault(k, set()).add((lane, i))
    return key, {k: frozenset(v) for k, v in inv.items()}


def _c_checks(c: SpecCells, rel: Relations) -> list[tuple[str, dict[str, Any]]]:
    out: list[tuple[str, dict[str, Any]]] = []
    for z, ds in sorted(rel.c_to_d.items()):
        if ds != {z}:
            where = ("no D element" if not ds else ", ".join(_d(d) for d in sorted(ds)[:3]))
            out.append((f"C element c{z[1]} of lane {z[0]} arrives at {where}; the spec gives C and D "
                        f"one layout, so it must arrive at {_d(z)}",
                        {"relation": "c_to_d", "lane": z[0], "i": z[1], "element": f"c{z[1]}",
                         "arrives": [list(d) for d in sorted(ds)]}))
    for axis, what, table, src in ((1, "row", rel.rows, "a"), (2, "column", rel.cols, "b")):
        key, _inv = _spec_sets(c, axis)
        classes: dict[Elem, frozenset[Elem]] = {}
        witness: dict[frozenset[Elem], Elem] = {}
        for rels in table:
            for src_el, ds in sorted(rels.items()):
                if ds and ds not in witness:
                    witness[ds] = src_el
                for d in ds:
                    classes.setdefault(d, ds)
        obs_key = {d: classes.get(d, frozenset()) for d in key}

        def why(f: Elem, e: Elem, same: bool = True, _w=witness, _k=obs_key, _s=src) -> str:
            if same:
                w = _w.get(_k[f])
                return f"both receive {_el(_s, w)}" if w else "neither receives anything"
            w = _w.get(_k[f])
            return (f"{_el(_s, w)} reaches {_d(f)} but not {_d(e)}" if w else f"{_d(f)} receives nothing")
        out += _partition_violations(obs_key, key, what, _d, _word(what), why)
    return out


def _a_rows(a: SpecCells, c: SpecCells, rel: Relations) -> list[tuple[str, dict[str, Any]]]:
    _key, inv = _spec_sets(c, 1)
    out: list[tuple[str, dict[str, Any]]] = []
    for m, meta in enumerate(rel.metadata):
        for x, ds in sorted(rel.rows[m].items()):
            cell = a.cell(x[0], x[1], meta)
            if cell is None:
                out.append((f"{_el('a', x)} has no cell in the spec, yet reaches {len(ds)} D elements",
                            {"relation": "row", "lane": x[0], "i": x[1], "element": f"a{x[1]}"}))
                continue
            exp = inv.get((cell[0], cell[1]), frozenset())
            if ds != exp:
                out.append((f"{_el('a', x)} (row {cell[1]} per the spec): {_diff_sets(ds, exp)}",
                            {"relation": "row", "lane": x[0], "i": x[1], "element": f"a{x[1]}",
                             "spec_row": cell[1], "reaches": [list(d) for d in sorted(ds)]}))
    return out


def _b_cols(b: SpecCells, c: SpecCells, rel: Relations) -> list[tuple[str, dict[str, Any]]]:
    _key, inv = _spec_sets(c, 2)
    out: list[tuple[str, dict[str, Any]]] = []
    union: dict[Elem, frozenset[Elem]] = {}
    for rels in rel.cols:
        for y, ds in rels.items():
            union[y] = union.get(y, frozenset()) | ds
    for y, ds in sorted(union.items()):
        cell = b.cell(y[0], y[1])
        if cell is None:
            out.append((f"{_el('b', y)} has no cell in the spec, yet reaches {len(ds)} D elements",
                        {"relation": "column", "lane": y[0], "i": y[1], "element": f"b{y[1]}"}))
            continue
        exp = inv.get((cell[0], cell[2]), frozenset())
        if ds != exp:
            out.append((f"{_el('b', y)} (column {cell[2]} per the spec): {_diff_sets(ds, exp)}",
                        {"relation": "column", "lane": y[0], "i": y[1], "element": f"b{y[1]}",
                         "spec_col": cell[2], "reaches": [list(d) for d in sorted(ds)]}))
    return out


def _a_k(a: SpecCells, rel: Relations) -> list[tuple[str, dict[str, Any]]]:
    out: list[tuple[str, dict[str, Any]]] = []
    for m, meta in enumerate(rel.metadata):
        obs = dict(rel.meets[m])
        spec = {}
        for x in obs:
            cell = a.cell(x[0], x[1], meta)
            spec[x] = None if cell is None else (cell[0], cell[2])

        def why(f: Elem, e: Elem, same: bool = True, _o=obs) -> str:
            if same:
                b = sorted(_o[f])
                return f"both meet {_el('b', b[0])}" if b else "neither meets any B element"
            only = sorted(_o[f] ^ _o[e])
            if not only:
                return "they meet different B elements"
            owner = f if only[0] in _o[f] else e
            other = e if owner == f else f
            return f"{_el('a', owner)} meets {_el('b', only[0])}, {_el('a', other)} does not"
        meta_note = f" under metadata 0x{meta:08x}" if len(rel.metadata) > 1 else ""
        out += [(t + meta_note, dict(d, metadata=f"0x{meta:08x}")) for t, d in
                _partition_violations(obs, spec, "k", lambda e: _el("a", e), _word("k"), why)]
    return out


def _b_k(b: SpecCells, rel: Relations) -> list[tuple[str, dict[str, Any]]]:
    met_by: dict[Elem, list[set[Elem]]] = {}
    for m in range(len(rel.metadata)):
        for x, ys in rel.meets[m].items():
            for y in ys:
                met_by.setdefault(y, [set() for _ in rel.metadata])[m].add(x)
    elems = sorted(rel.cols[0])
    obs = {y: tuple(frozenset(s) for s in met_by.get(y, [set() for _ in rel.metadata])) for y in elems}
    spec = {}
    for y in elems:
        cell = b.cell(y[0], y[1])
        spec[y] = None if cell is None else (cell[0], cell[1])

    def why(f: Elem, e: Elem, same: bool = True) -> str:
        if same:
            xs = sorted(set().union(*obs[f]))
            return f"both are met by {_el('a', xs[0])}" if xs else "neither is met by any A element"
        for m in range(len(rel.metadata)):
            only = sorted(obs[f][m] ^ obs[e][m])
            if only:
                owner = f if only[0] in obs[f][m] else e
                other = e if owner == f else f
                return f"{_el('a', only[0])} meets {_el('b', owner)}, not {_el('b', other)}"
        return "they are met by different A elements"
    return _partition_violations(obs, spec, "k", lambda e: _el("b", e), _word("k"), why)


def _pairing(a: SpecCells, b: SpecCells, rel: Relations, side: str) -> list[tuple[str, dict[str, Any]]]:
    """With A's and B's k classes right, the spec must also pair the right classes."""
    out: list[tuple[str, dict[str, Any]]] = []
    bcells = {y: b.cell(y[0], y[1]) for y in rel.cols[0]}
    for m, meta in enumerate(rel.metadata):
        for x, ys in sorted(rel.meets[m].items()):
            ca = a.cell(x[0], x[1], meta)
            if ca is None:
                continue
            exp = frozenset(y for y, cb in bcells.items() if cb is not None and cb[0] == ca[0] and cb[1] == ca[2])
            if ys != exp:
                bad = sorted(ys - exp) or sorted(exp - ys)
                y = bad[0]
                cb = bcells[y]
                met = "meets" if y in ys else "does not meet"
                out.append((f"{_el('a', x)} {met} {_el('b', y)} on the hardware; the spec puts them at "
                            f"k {ca[2]} and k {cb[1] if cb else None} (A and B are paired wrongly)",
                            {"relation": "k-pairing", "a": list(x), "b": list(y), "meets": y in ys,
                             "spec_k": [ca[2], cb[1] if cb else None], "metadata": f"0x{meta:08x}"}))
                if len(out) >= MAX_LISTED + 1:
                    return out
    return out



# ----------------------------------------------------------------------------- the SIMULATED device

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
