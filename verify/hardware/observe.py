"""Observations of real (or simulated) probe runs: what the hardware did, reconstructed from raw registers.

``relations`` reconstructs, from raw D registers alone, what the hardware did:

* A-row classes: the D elements an A element reaches (experiment ``a``);
* B-column classes: the D elements a B element reaches (``b``, all metadata words);
* k meetings: which B elements each A element meets (``ab``, per metadata word);
* C -> D: which D element receives each C element (``c``).

No formula of the spec under test is used for that; only the instruction's
register packing (element i sits in register i // per-register at bit
(i % per-register) * bits, as the PTX types define it).  Their comparison with
specs is ``verify.hardware.explain``; observation files are read and written here.
"""
from __future__ import annotations

import functools
import json
import math
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from .probes import Instruction, Operand
from ..errors import SpecError
from ..files import read_json
from ..results import dumps as results_dumps
from ..results.hardware import HardwareResult

OBS_FORMAT = "ptx-layout-verify/observation/1"
OBSERVATION_BYTES = 1 << 28  # an observation file holds raw registers: a large wgmma probe writes ~20 MB
RAW_FORMAT = "ptx-layout-verify/raw-d/1"
MAX_LISTED = 8  # violations spelled out in a message

Elem = tuple[int, int]  # (lane, i)


class ObservationError(SpecError):
    """An observation file that cannot be read or does not fit its instruction (bad input)."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(path, 1, 1, message)


# ----------------------------------------------------------------------------- decoding

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


@dataclass(frozen=True)
class Observation:
    """Raw D registers of one probe run (nonzero ones only), and where they came from."""

    instruction: str
    text: str
    table: Any = field(compare=False, repr=False)  # the records, sorted: an (n, 4) uint64 array or int tuples
    experiments: int
    simulated: bool
    device: Mapping[str, Any] = field(default_factory=dict)
    probe_sha256: str = ""
    path: str = ""
    overflow: bool = False
    out: tuple[int, ...] = ()  # the raw words of a probe that writes its registers out (data movement, wmma, ...)

    @functools.cached_property
    def records(self) -> tuple[tuple[int, int, int, int], ...]:
        """(experiment, lane, register, raw bits) of every nonzero D register, sorted."""
        if isinstance(self.table, tuple):
            return self.table
        return tuple(map(tuple, self.table.tolist()))

    @property
    def gpu(self) -> str:
        name = str(self.device.get("name", "unknown"))
        return ("SIMULATED " + name) if self.simulated and "SIMULATED" not in name else name


def _records(rows: Any) -> Any:
    """Records sorted: an (n, 4) uint64 array where they are all non-negative integers that fit one (the
    common case, at array speed), else tuples of four integers (a ValueError/TypeError/IndexError when
    they are not integers)."""
    arr = np.asarray(rows) if isinstance(rows, list) and rows else None
    if arr is not None and arr.ndim == 2 and arr.shape[1] == 4 and arr.dtype.kind in "iu" and (arr >= 0).all():
        arr = arr.astype(np.uint64)
        return arr[np.lexsort(arr.T[::-1])]
    return tuple(sorted((int(r[0]), int(r[1]), int(r[2]), int(r[3])) for r in rows))


def from_raw(raw: Mapping[str, Any], *, simulated: bool, path: str = "", probe_sha256: str = "") -> Observation:
    """An ``Observation`` from the probe's (or the simulator's) JSON output: raw D records (``raw-d/1``) or
    the raw output words of a probe that writes its registers out (``catalog-probe/1``)."""
    try:
        if "out" in raw:
            words = tuple(int(w) for w in raw["out"])
            if any(not 0 <= w < 1 << 32 for w in words):
                raise ValueError("an output word is not a 32-bit value")
            return Observation(str(raw["id"]), str(raw["instruction"]), (), 0, simulated, dict(raw.get("device", {})),
                               probe_sha256, path, False, words)
        return Observation(str(raw["id"]), str(raw["instruction"]), _records(raw["records"]), int(raw["experiments"]),
                           simulated, dict(raw.get("device", {})), probe_sha256, path,
                           bool(raw.get("overflow", False)))
    except (KeyError, TypeError, ValueError, IndexError) as e:
        raise ObservationError(path or "<raw>", f"not a probe output: {e}") from None


# ----------------------------------------------------------------------------- relations

@dataclass(frozen=True)
class Relations:
    """What the hardware did, in (lane, i) terms only."""

    rows: tuple[Mapping[Elem, frozenset[Elem]], ...]   # per metadata word: A elem -> D elems
    cols: tuple[Mapping[Elem, frozenset[Elem]], ...]   # per metadata word: B elem -> D elems
    meets: tuple[Mapping[Elem, frozenset[Elem]], ...]  # per metadata word: A elem -> B elems met
    c_to_d: Mapping[Elem, frozenset[Elem]]             # C elem -> D elems that receive it
    metadata: tuple[int, ...]

    def to_json(self) -> dict[str, Any]:
        def enc(m: Mapping[Elem, frozenset[Elem]]) -> list[list[Any]]:
            return [[list(k), sorted(list(v) for v in vs)] for k, vs in sorted(m.items())]
        return {"metadata": [f"0x{m:08x}" for m in self.metadata],
                "a_rows": [enc(m) for m in self.rows], "b_cols": [enc(m) for m in self.cols],
                "ab_meets": [enc(m) for m in self.meets], "c_to_d": enc(self.c_to_d)}


def _hits(ins: Instruction, obs: Observation) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(experiment, lane, element index) of every nonzero D element of the records, sorted."""
    op = ins.c
    if not len(obs.table):
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    if isinstance(obs.table, np.ndarray):
        rec, raw = obs.table[:, :3].astype(np.int64), obs.table[:, 3]
    else:
        rec = np.array([r[:3] for r in obs.records], dtype=np.int64)
        raw = np.array([r[3] & 0xFFFFFFFFFFFFFFFF for r in obs.records], dtype=np.uint64)
    w, lane, reg = rec[:, 0], rec[:, 1], rec[:, 2]
    bad = ~((0 <= w) & (w < ins.plan.total) & (0 <= lane) & (lane < ins.threads) & (0 <= reg) & (reg < op.registers))
    if bad.any():
        r = obs.records[int(np.flatnonzero(bad)[0])]
        raise ObservationError(obs.path or "<observation>", f"record {list(r)} is out of range")
    eb = op.element_bits
    mask = np.uint64((1 << eb) - 1)
    parts_w, parts_l, parts_i = [], [], []
    for s in range(op.elements_per_register):
        bits = (raw >> np.uint64(s * eb)) & mask
        if op.ptx_type == "s32":
            nz = bits != 0
        elif op.ptx_type in ("f16", "f32", "f64", "tf32"):
            nz = (bits & np.uint64((1 << (eb - 1)) - 1)) != 0  # -0.0 is zero; a NaN is something
        elif bits.any():
            raise ValueError(f"no decoder for D type .{op.ptx_type}")
        else:
            continue
        parts_w.append(w[nz])
        parts_l.append(lane[nz])
        parts_i.append(reg[nz] * op.elements_per_register + s)
    hw, hl, hi = np.concatenate(parts_w), np.concatenate(parts_l), np.concatenate(parts_i)
    order = np.lexsort((hi, hl, hw))
    return hw[order], hl[order], hi[order]


def relations(ins: Instruction, obs: Observation) -> Relations:
    """Reconstruct the observed relations (no spec formula is consulted).

    Work is proportional to the records and to the elements (never to the number of experiments)."""
    plan = ins.plan
    if obs.instruction != ins.id or obs.experiments != plan.total:
        raise ObservationError(obs.path or "<observation>",
                               f"observation of {obs.instruction} ({obs.experiments} experiments) does not "
                               f"fit probe {ins.id} ({plan.total} experiments)")
    if obs.overflow:
        raise ObservationError(obs.path or "<observation>", "the probe's record buffer overflowed")
    hw, hl, hi = _hits(ins, obs)
    # experiment -> the D elements it reached (hits are sorted by experiment)
    starts = np.flatnonzero(np.r_[True, hw[1:] != hw[:-1]]) if len(hw) else np.zeros(0, dtype=np.int64)
    ends = np.r_[starts[1:], len(hw)].astype(np.int64)
    elems = list(zip(hl.tolist(), hi.tolist()))
    hit: dict[int, frozenset[Elem]] = {
        w: frozenset(elems[a:b]) for w, a, b in zip(hw[starts].tolist(), starts.tolist(), ends.tolist())}
    empty: frozenset[Elem] = frozenset()
    na, nb, nc = ins.a.elements, ins.b.elements, ins.c.elements
    nm = len(plan.metadata)
    rows = tuple({(x // na, x % na): hit.get(plan.index("a", m, x=x), empty) for x in range(plan.ta)}
                 for m in range(nm))
    cols = tuple({(y // nb, y % nb): hit.get(plan.index("b", m, y=y), empty) for y in range(plan.tb)}
                 for m in range(nm))
    meets: list[dict[Elem, frozenset[Elem]]] = []
    exps = np.array(sorted(hit), dtype=np.int64)
    for m in range(nm):
        met: dict[Elem, set[Elem]] = {(x // na, x % na): set() for x in range(plan.ta)}
        if plan.pairs:
            base = plan.index("ab", m, 0, 0)
            sel = exps[(exps >= base) & (exps < base + plan.tab)]
            for x, y in zip(*np.divmod(sel - base, plan.tb)):
                met[(int(x) // na, int(x) % na)].add((int(y) // nb, int(y) % nb))
        meets.append({k: frozenset(v) for k, v in met.items()})
    c_to_d = {(z // nc, z % nc): hit.get(plan.index("c", 0, x=z), empty) for z in range(plan.tc)}
    return Relations(rows, cols, tuple(meets), c_to_d, plan.metadata)


# ----------------------------------------------------------------------------- files

def gpu_slug(name: str) -> str:
    out = "".join(ch if ch.isalnum() else "-" for ch in name.lower())
    while "--" in out:
        out = out.replace("--", "-")
    return out.strip("-") or "gpu"


def _regs(ins: Instruction, operand: str) -> tuple[int, int, int]:
    op = {"A": ins.a, "B": ins.b, "C": ins.c, "D": ins.c}[operand]
    return op.registers, op.elements_per_register, op.elements


def observation_json(ins: Instruction, obs: Observation, rel: Relations, source_sha: str,
                     extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The content of ``reports/observations/<instruction>.<gpu>.json`` (sorted keys when written)."""
    d = dict(obs.device)
    out = {
        "format": OBS_FORMAT,
        "simulated": obs.simulated,
        "instruction": ins.id,
        "ptx": ins.text,
        "arch": ins.arch,
        "gpu": {"name": d.get("name"), "compute_capability": d.get("compute_capability"),
                "driver_version": d.get("driver_version"), "runtime_version": d.get("runtime_version")},
        "probe_sha256": source_sha,
        "experiments": ins.plan.to_json(),
        "registers": {"A": list(_regs(ins, "A")), "B": list(_regs(ins, "B")), "C": list(_regs(ins, "C")),
                      "D_type": ins.c.ptx_type},
        "records": [list(r) for r in obs.records],
        "relations": rel.to_json(),
    }
    if extra:
        out.update(extra)
    return out


def dumps(obj: Any) -> str:
    """Observation files in the one JSON style (``verify.results.dumps``)."""
    return results_dumps(obj)


def load_observation(path: str | Path) -> Observation:
    """Read an observation file written by ``ptx-verify confirm``."""
    p = Path(path)
    try:
        data = read_json(p, OBSERVATION_BYTES,
                         error=lambda f, ln, col, m: ObservationError(f, f"cannot read observation: {m} (line {ln}, column {col})"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ObservationError(str(p), f"cannot read observation: {e}") from None
    if not isinstance(data, dict) or data.get("format") != OBS_FORMAT:
        raise ObservationError(str(p), f"not an observation file (format {OBS_FORMAT!r} expected)")
    try:
        gpu = data["gpu"]
        if "out" in data:  # a probe that writes its registers out (data movement, wmma, block scale)
            raw = {"id": data["instruction"], "instruction": data["ptx"], "out": data["out"], "device": gpu}
        else:
            raw = {"id": data["instruction"], "instruction": data["ptx"], "records": data["records"],
                   "experiments": data["experiments"]["total"], "device": gpu}
    except (KeyError, TypeError) as e:
        raise ObservationError(str(p), f"observation lacks {e}") from None
    if not isinstance(data.get("simulated"), bool):
        raise ObservationError(str(p), "observation lacks 'simulated': true/false")
    return from_raw(raw, simulated=data["simulated"], path=str(p), probe_sha256=str(data.get("probe_sha256", "")))


def observation_files(obs_dir: str | Path) -> list[Path]:
    """The observation files (``*.json``) of ``obs_dir``, sorted; a directory that is missing or holds
    none is bad input (``ObservationError``): checking against no observation would confirm nothing."""
    d = Path(obs_dir)
    if not d.is_dir():
        raise ObservationError(str(d), "no such observations directory")
    files = sorted(f for f in d.glob("*.json") if f.is_file())
    if not files:
        raise ObservationError(str(d), "no observation files (*.json) in this directory (`ptx-verify confirm "
                                       "--out DIR` writes them)")
    return files


def results_json(results: Sequence[HardwareResult]) -> list[dict[str, Any]]:
    return [r.to_json() for r in results]
