"""Bank conflicts of a warp's shared-memory access over a whole tile, decided by both engines.

The access (``verify.layout.smem_access``) is repeated over the tile: its lane pattern (a footprint of
``rows_p x cols_p`` cells) placed at every origin ``(a step_r, b step_c)`` where it fits inside the tile, on the
grid of one address's vector (``step``: the cells one lane's access covers, 1 x 8 for a 16-byte row of 16-bit
elements along col, 1 x 1 for a 4-byte load of 32-bit ones), not only at multiples of the footprint: a pattern
with gaps (lanes on rows 0, 2, 4, 6) covers the tile only together with its placements one row down, and
every way the warp's accesses cover the tile uses origins of this grid.  Per placement, with the layout
``(row, col) -> offset`` and the buffer's base address, lane l's address is ``base + offset x bits / 8``.  Three properties, each decided by
the enumeration of every (parameter value, placement, lane) and by Z3 over symbolic ones (a family's
parameters free), joined by ``results.combine_engines``:

* ``defined``: every cell a lane addresses is placed by the layout (first lane and cell that is not);
* ``aligned``: every address is a multiple of the access width (first lane that is not);
* ``conflict_free``: no two lanes of one wavefront group touch different 4-byte words of one bank.  The
  witness is canonical: the first placement, then the first lane ``l2`` that conflicts with an earlier lane
  ``l1`` of its group (Z3's witness is minimised to the same, and re-evaluated).

``BanksResult.degree`` is the worst group's conflict degree (the most distinct words in one bank), counted by
the enumeration; the group it names is re-evaluated point by point.  Wavefronts per instruction are the
sum of the groups' degrees at the worst placement.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np
import z3

from ..engines import smt
from ..formula import BinOp, Num
from ..layout.algebra import compose
from ..layout.dims import Dim
from ..layout.named import bindings, in_box, variables, width
from ..layout.named import evaluate_all as evaluate_all_at
from ..layout.shared import SharedLayout
from ..layout.smem_access import BANK_BYTES, BANKS, Access, Pattern, translated
from ..results import combine_engines
from ..results.shared import BanksResult
from ..witnesses import BankConflict, LaneAddress
from .fragment import DEFAULT_TIMEOUT
from .maps import param_constraint


def _origins(x: Any, footprint: int, step: int) -> Any:
    """How many origins ``0, step, 2 step ...`` leave a footprint inside an extent: ``(x - footprint) / step + 1``."""
    if isinstance(x, int):
        return (x - footprint) // step + 1
    return BinOp("+", BinOp("/", BinOp("-", x, Num(footprint)), Num(step)), Num(1))


def placed(lay: SharedLayout, pat: Pattern, step: tuple[int, int]) -> Any:
    """``(lane, a, b) -> offset``: the layout at the cells the pattern addresses from origin
    ``(a step_r, b step_c)``, built with the algebra (the pattern translated over the origins, then ``compose``
    with the layout)."""
    counts = (_origins(lay.rows, pat.rows, step[0]), _origins(lay.cols, pat.cols, step[1]))
    return compose(lay.map, translated(pat, step, counts, lay.params))


def _enumerate(m: Any, lay: SharedLayout, access: Access, env: Mapping[str, int]) -> dict[str, np.ndarray]:
    from ..layout.named import grid
    pts = grid(m.inputs, env)
    v = m.evaluate(pts, env)
    shape = v.ok.shape  # (lane, a, b)
    lanes = np.broadcast_to(np.arange(shape[0]).reshape(-1, 1, 1), shape)
    ok = np.asarray(v.ok, bool)
    off = np.where(ok, np.asarray(v.out["offset"], np.int64), 0)
    addr = lay.base + ((off * lay.element_bits) >> 3)
    return {"ok": ok, "addr": addr, "lane": lanes}


def _z3_terms(m: Any, lay: SharedLayout, access: Access, tag: str, w: int, env: Mapping[str, z3.ExprRef]
              ) -> tuple[dict[str, z3.BitVecRef], z3.BoolRef, z3.BitVecRef]:
    x = variables(m.inputs, w, tag)
    ok, out = m.encode(x, env)
    addr = smt.bv(lay.base, w) + ((out["offset"] * smt.bv(lay.element_bits, w)) >> smt.bv(3, w))
    return x, z3.And(ok, in_box(x, m.inputs, env, w)), addr


def _point(m: Any, model: z3.ModelRef, x: Mapping[str, z3.ExprRef]) -> dict[str, int]:
    return {k: smt.as_int(model, v) for k, v in x.items()}


def _cell(pat: Pattern, step: tuple[int, int], lane: int, a: int, b: int) -> tuple[int, int]:
    p = pat.map.at({"lane": lane})
    return (p["row"] + a * step[0], p["col"] + b * step[1])


def footprint(lay: SharedLayout, access: Access, pat: Pattern) -> tuple[Pattern, tuple[int, int]]:
    """``pat`` with the footprint the access really covers in this layout: the cells whose offsets the
    addressing lanes' vectors span (a 16-byte row of an M/N-major tile runs down the rows), at the first
    parameter value; and the step of the placements, the rows and columns one lane's vector spans (1 x 8 for a
    16-byte row of 16-bit elements along col, 8 x 1 down the rows of an M/N-major tile).  The pattern's own
    footprint and a vector along col when the layout cannot say (an offset it does not place)."""
    per = max(1, access.bytes * 8 // lay.element_bits)
    fallback = pat, (1, per)
    env = bindings(lay.map)[0]
    v = evaluate_all_at(lay.map, env)
    offs, ok = np.asarray(v.out["offset"], np.int64), np.asarray(v.ok, bool)
    where = {int(o): (r, c) for (r, c), o in np.ndenumerate(offs) if ok[r, c]}
    pv = pat.map.evaluate({"lane": np.arange(access.lanes)})
    rows, cols, step_r, step_c = 1, 1, 1, 1
    for t in range(access.lanes):
        if not pv.ok[t]:
            continue
        r0, c0 = int(pv.out["row"][t]), int(pv.out["col"][t])
        if not (r0 < offs.shape[0] and c0 < offs.shape[1] and ok[r0, c0]):
            return fallback
        cells = [where.get(int(offs[r0, c0]) + k) for k in range(per)]
        if any(cell is None for cell in cells):
            return fallback
        rs, cs = [c[0] for c in cells], [c[1] for c in cells]  # type: ignore[index]
        rows, cols = max(rows, max(rs) + 1), max(cols, max(cs) + 1)
        step_r, step_c = max(step_r, max(rs) - min(rs) + 1), max(step_c, max(cs) - min(cs) + 1)
    m = pat.map
    return Pattern(type(m)(m.formula, m.inputs, (Dim("row", rows), Dim("col", cols))), rows, cols, pat.text), \
        (step_r, step_c)


def _require_footprint_fits(lay: SharedLayout, pat: Pattern) -> None:
    """A ``ValueError`` when the tile, at any of its members, is smaller than the access's footprint ``pat``."""
    for env in bindings(lay.map):
        r, c = lay.map.inputs[0].at(env), lay.map.inputs[1].at(env)
        if r < pat.rows or c < pat.cols:
            raise ValueError(f"the tile ({r} x {c}) is smaller than the access's footprint ({pat.rows} x {pat.cols})"
                             + (f" at {', '.join(f'{k} = {v}' for k, v in env.items())}" if env else ""))


@dataclass(frozen=True)
class _Enumerated:
    """The enumeration engine's answer over every binding, placement and lane: the first witness of each property
    (None: it holds), the worst degree and its wavefront group, the most wavefronts, and the placements counted."""
    witnesses: dict[str, Any]
    degree: int
    worst: dict[str, Any] | None
    wavefronts: int
    placements: int


def _enumerate_banks(m: Any, lay: SharedLayout, access: Access, pat: Pattern, step: tuple[int, int]) -> _Enumerated:
    """The three properties, the degree and the wavefronts of the placed access ``m``, by enumeration."""
    J = access.words
    g = access.group
    enum: dict[str, Any] = {"defined": None, "aligned": None, "conflict_free": None}
    degree, worst, wavefronts, placements = 1, None, 0, 0
    for env in bindings(m):
        e = _enumerate(m, lay, access, env)
        ok, addr = e["ok"], e["addr"]
        L, A, B = ok.shape
        placements += A * B
        active = _active(pat, L)
        if enum["defined"] is None:
            bad = np.argwhere((~ok) & active[:, None, None])
            if bad.size:
                l, a, b = _first_lab(bad)
                enum["defined"] = LaneAddress(dict(env), l, _origin(step, a, b), _cell(pat, step, l, a, b))
        if enum["aligned"] is None:
            bad = np.argwhere(ok & active[:, None, None] & (addr % max(1, min(access.bytes, 16)) != 0))
            if bad.size:
                l, a, b = _first_lab(bad)
                enum["aligned"] = LaneAddress(dict(env), l, _origin(step, a, b), _cell(pat, step, l, a, b),
                                              int(addr[l, a, b]))
        words = (addr >> 2)[..., None] + np.arange(J)  # (L, A, B, J)
        use = (ok & active[:, None, None])
        chunk = max(1, (1 << 21) // max(1, L * B * J))  # placements a chunk of rows of origins at a time
        degrees = np.concatenate([_degrees(words[:, k:k + chunk], use[:, k:k + chunk], g)
                                  for k in range(0, A, chunk)])  # (A, B, groups)
        fronts = degrees.sum(axis=2)
        wavefronts = max(wavefronts, int(fronts.max()))
        d = int(degrees.max())
        if d > degree:
            a, b, gi = (int(x) for x in np.argwhere(degrees == d)[0])  # the first in (a, b, group) order
            info = _group_info(words[:, a, b, :], use[:, a, b], g, gi)
            degree = d
            worst = {"params": dict(env), "origin": _origin(step, a, b), **info,
                     "cells": [_cell(pat, step, lane, a, b) for lane in info["lanes"]]}
        if enum["conflict_free"] is None and (degrees > 1).any():
            a, b = (int(x) for x in np.argwhere((degrees > 1).any(axis=2))[0])
            pair = _first_conflict(words[:, a, b, :], use[:, a, b], g)
            assert pair is not None, "a placement with a degree above 1 has two conflicting lanes"
            l1, l2 = pair
            enum["conflict_free"] = _conflict_witness(pat, step, access, env, a, b, l1, l2,
                                                      int(addr[l1, a, b]), int(addr[l2, a, b]))
    return _Enumerated(enum, degree, worst, wavefronts, placements)


@dataclass(frozen=True)
class _Z3Access:
    """The Z3 terms the three queries share, the parameters free: the placed access ``m`` at width ``w``, the
    parameters and their constraint, one lane's point ``x`` (its place defined: ``okx``; its byte address: ``ax``),
    the point's box, the active-lane predicate and the variables a witness is minimised over."""
    m: Any
    lay: SharedLayout
    access: Access
    pat: Pattern
    step: tuple[int, int]
    w: int
    penv: dict[str, Any]
    valid: Any
    lanes_active: Any
    x: Any
    okx: Any
    ax: Any
    keys: list[Any]
    box: Any


def _z3_access(m: Any, lay: SharedLayout, access: Access, pat: Pattern, step: tuple[int, int]) -> _Z3Access:
    """The shared terms of the Z3 queries of ``m`` (see ``_Z3Access``)."""
    w = max(width(m), smt.width_for(max(lay.base, 1) + (1 << 22)))
    penv = {p.name: z3.BitVec(f"param_{p.name}", w) for p in m.params}
    valid = param_constraint(m.params, penv, w)
    lanes_active = _z3_active(pat, access)
    x, okx, ax = _z3_terms(m, lay, access, "1", w, penv)
    keys = [*penv.values(), x["a"], x["b"], x["lane"]]
    box = in_box(x, m.inputs, penv, w)
    return _Z3Access(m, lay, access, pat, step, w, penv, valid, lanes_active, x, okx, ax, keys, box)


def _z3_undefined(q: _Z3Access, timeout: float) -> tuple[str, LaneAddress | None]:
    """Z3's answer to ``defined`` and its witness: an active lane addressing a cell the layout does not place."""
    res, model = smt.solve_min([q.valid, q.box, q.lanes_active(q.x["lane"]), z3.Not(q.okx)], q.keys,
                               smt.Budget(timeout))
    z3_cex = None
    if res == "sat" and model is not None:
        p = _point(q.m, model, q.x)
        z3_cex = LaneAddress({k: smt.as_int(model, v) for k, v in q.penv.items()}, p["lane"],
                             _origin(q.step, p["a"], p["b"]), _cell(q.pat, q.step, p["lane"], p["a"], p["b"]))
    return res, z3_cex


def _z3_misaligned(q: _Z3Access, timeout: float) -> tuple[str, LaneAddress | None]:
    """Z3's answer to ``aligned`` and its witness: an active lane's address that is not a multiple of the access."""
    w = q.w
    width_b = max(1, min(q.access.bytes, 16))
    res, model = smt.solve_min([q.valid, q.box, q.lanes_active(q.x["lane"]), q.okx,
                                z3.URem(q.ax, smt.bv(width_b, w)) != 0], q.keys, smt.Budget(timeout))
    z3_cex = None
    if res == "sat" and model is not None:
        p = _point(q.m, model, q.x)
        env_v = {k: smt.as_int(model, v) for k, v in q.penv.items()}
        z3_cex = LaneAddress(env_v, p["lane"], _origin(q.step, p["a"], p["b"]),
                             _cell(q.pat, q.step, p["lane"], p["a"], p["b"]), smt.as_int(model, q.ax))
    return res, z3_cex


def _z3_bank_conflict(q: _Z3Access, timeout: float) -> tuple[str, BankConflict | None]:
    """Z3's answer to ``conflict_free`` and its witness: two lanes of one group, one placement, a shared bank,
    different words."""
    m, lay, access, w, x, penv = q.m, q.lay, q.access, q.w, q.x, q.penv
    J, g = access.words, access.group
    y = {"lane": z3.BitVec("lane_2", w), "a": x["a"], "b": x["b"]}
    oky, out_y = m.encode(y, penv)
    ay = smt.bv(lay.base, w) + ((out_y["offset"] * smt.bv(lay.element_bits, w)) >> smt.bv(3, w))
    j1, j2 = z3.BitVec("j_1", w), z3.BitVec("j_2", w)
    wx = (q.ax >> smt.bv(2, w)) + j1
    wy = (ay >> smt.bv(2, w)) + j2
    cs = [q.valid, q.box, in_box(y, m.inputs, penv, w), q.lanes_active(x["lane"]), q.lanes_active(y["lane"]), q.okx,
          oky, x["lane"] < y["lane"], z3.UDiv(x["lane"], smt.bv(g, w)) == z3.UDiv(y["lane"], smt.bv(g, w)),
          z3.ULT(j1, smt.bv(J, w)), z3.ULT(j2, smt.bv(J, w)),
          (wx & smt.bv(BANKS - 1, w)) == (wy & smt.bv(BANKS - 1, w)), wx != wy]
    res, model = smt.solve_min(cs, [*penv.values(), x["a"], x["b"], y["lane"], x["lane"]], smt.Budget(timeout))
    z3_conflict: BankConflict | None = None
    if res == "sat" and model is not None:
        env_v = {k: smt.as_int(model, v) for k, v in penv.items()}
        a, b = smt.as_int(model, x["a"]), smt.as_int(model, x["b"])
        l1, l2 = smt.as_int(model, x["lane"]), smt.as_int(model, y["lane"])
        z3_conflict = _conflict_witness(q.pat, q.step, access, env_v, a, b, l1, l2, smt.as_int(model, q.ax),
                                        smt.as_int(model, ay))
    return res, z3_conflict


def check_banks(lay: SharedLayout, access: Access, pat: Pattern, timeout: float = DEFAULT_TIMEOUT) -> BanksResult:
    """The three properties of the module docstring, the degree and the wavefronts."""
    t0 = time.perf_counter()
    pat, step = footprint(lay, access, pat)
    _require_footprint_fits(lay, pat)
    m = placed(lay, pat, step)
    J = access.words
    g = access.group

    # ---- enumeration: every binding, placement, lane
    en = _enumerate_banks(m, lay, access, pat, step)
    enum, worst = en.witnesses, en.worst
    ideal = -(-access.lanes // g)

    # ---- Z3: one query per property, parameters free
    q = _z3_access(m, lay, access, pat, step)
    results = []
    res, z3_cex = _z3_undefined(q, timeout)
    results.append(combine_engines(
        "defined", "proved", smt.status(res), z3_cex, enum["defined"],
        lambda c: f"{_prefix(c)}lane {c['lane']} addresses cell {tuple(c['cell'])}, which the layout does not place",
        time.perf_counter() - t0, "every cell a lane addresses is placed by the layout", same_witness=True))
    res, z3_cex = _z3_misaligned(q, timeout)
    results.append(combine_engines(
        "aligned", "proved", smt.status(res), z3_cex, enum["aligned"],
        lambda c: f"{_prefix(c)}lane {c['lane']} addresses {c['address']:#x} (cell {tuple(c['cell'])}): not a "
                  f"multiple of the {access.bytes}-byte access", time.perf_counter() - t0,
        f"every address is a multiple of {access.bytes} bytes", same_witness=True))
    res, z3_conflict = _z3_bank_conflict(q, timeout)

    def confirm(c: BankConflict) -> bool:
        a1, a2 = c.addresses
        w1 = {a1 // 4 + j for j in range(J)}
        w2 = {a2 // 4 + j for j in range(J)}
        return any(p % BANKS == q % BANKS and p != q for p in w1 for q in w2)

    results.append(combine_engines(
        "conflict_free", "proved", smt.status(res), z3_conflict, enum["conflict_free"],
        lambda c: f"{_prefix(c)}{c.describe()}",
        time.perf_counter() - t0, "no two lanes of one wavefront group touch different words of one bank", confirm,
        same_witness=True))
    if worst is not None:
        _confirm_worst(lay, pat, step, worst, J)
    return BanksResult(access, tuple(results), en.degree, worst, en.wavefronts or ideal, ideal, en.placements)


def _prefix(c: Mapping[str, Any]) -> str:
    p = c.get("params") or {}
    return (", ".join(f"{k} = {v}" for k, v in p.items()) + ": ") if p else ""


def _origin(step: tuple[int, int], a: int, b: int) -> list[int]:
    return [int(a) * step[0], int(b) * step[1]]


def _first_lab(bad: np.ndarray) -> tuple[int, int, int]:
    """The first (lane, a, b) in (a, b, lane) order."""
    order = np.lexsort((bad[:, 0], bad[:, 2], bad[:, 1]))
    l, a, b = bad[order[0]]
    return int(l), int(a), int(b)


def _active(pat: Pattern, lanes: int) -> np.ndarray:
    v = pat.map.evaluate({"lane": np.arange(lanes)})
    return np.asarray(v.ok, bool)


def _z3_active(pat: Pattern, access: Access):
    def active(lane: z3.BitVecRef) -> z3.BoolRef:
        ok, _ = pat.map.encode({"lane": lane})
        return z3.And(ok, z3.ULT(lane, smt.bv(access.lanes, lane.size())))
    return active


def _degrees(words: np.ndarray, use: np.ndarray, g: int) -> np.ndarray:
    """The conflict degree of every (placement, wavefront group) at once: ``words`` (lane, a, b, j), ``use``
    (lane, a, b); the result (a, b, group) is the most distinct words of one bank among the group's active lanes
    (0 for a group with none)."""
    L, A, B, J = words.shape
    G = -(-L // g)
    w = np.full((G * g, A, B, J), -1, np.int64)
    w[:L] = np.where(use[..., None], words, -1)
    w = w.reshape(G, g, A, B, J).transpose(2, 3, 0, 1, 4).reshape(A, B, G, g * J)
    w = np.sort(w, axis=-1)
    fresh = (w >= 0) & np.concatenate([np.ones(w.shape[:-1] + (1,), bool), w[..., 1:] != w[..., :-1]], axis=-1)
    bank = np.where(fresh, w % BANKS, BANKS)  # a word seen before, or no word: the extra bin BANKS
    counts = np.zeros((A, B, G, BANKS + 1), np.int64)
    idx = np.indices(bank.shape)
    np.add.at(counts, (idx[0], idx[1], idx[2], bank), 1)
    return counts[..., :BANKS].max(axis=-1)


def placement_degree(words: np.ndarray, use: np.ndarray, g: int) -> tuple[int, dict[str, Any], int]:
    """One placement's accesses, ``words`` (lane, j) and ``use`` (lane): (its worst conflict degree (at least 1),
    where (``_group_info`` of its first worst group; empty when no group conflicts), its wavefronts (the sum of its
    groups' degrees))."""
    deg = _degrees(words[:, None, None, :], use[:, None, None], g)[0, 0]
    worst = int(deg.max()) if deg.size else 0
    info = _group_info(words, use, g, int(np.argmax(deg))) if worst > 1 else {}
    return max(worst, 1), info, int(deg.sum())


def _group_info(words: np.ndarray, use: np.ndarray, g: int, gi: int) -> dict[str, Any]:
    """Group ``gi`` of one placement: its worst bank (the lowest with the most distinct words), the lanes that
    touch it and its words."""
    wv, uv = words[gi * g:(gi + 1) * g], use[gi * g:(gi + 1) * g]
    flat = np.unique(wv[uv].reshape(-1))
    counts = np.bincount(flat % BANKS, minlength=BANKS)
    bank = int(np.argmax(counts))
    lanes = sorted({int(gi * g + k) for k in range(wv.shape[0]) if uv[k] and any(int(x) % BANKS == bank for x in wv[k])})
    return {"group": gi, "bank": bank, "lanes": lanes, "words": sorted({int(x) for x in flat if int(x) % BANKS == bank})}


def _first_conflict(words: np.ndarray, use: np.ndarray, g: int) -> tuple[int, int] | None:
    """The first lane l2 (in order) whose words conflict with an earlier lane l1 of its group, and the first
    such l1."""
    L, J = words.shape
    bank = words % BANKS
    same_bank = bank[:, None, :, None] == bank[None, :, None, :]       # (l2, l1, j2, j1)
    diff_word = words[:, None, :, None] != words[None, :, None, :]
    conflict = (same_bank & diff_word).any(axis=(2, 3))
    lane = np.arange(L)
    mask = conflict & use[:, None] & use[None, :] & (lane[None, :] < lane[:, None]) & \
        ((lane[:, None] // g) == (lane[None, :] // g))
    hits = np.argwhere(mask)
    if not hits.size:
        return None
    order = np.lexsort((hits[:, 1], hits[:, 0]))
    l2, l1 = hits[order[0]]
    return int(l1), int(l2)


def _conflict_witness(pat: Pattern, step: tuple[int, int], access: Access, env: Mapping[str, int], a: int, b: int,
                      l1: int, l2: int, a1: int, a2: int) -> BankConflict:
    J = access.words
    w1 = [a1 // 4 + j for j in range(J)]
    w2 = [a2 // 4 + j for j in range(J)]
    bank = min(p % BANKS for p in w1 for q in w2 if p % BANKS == q % BANKS and p != q)
    o = _origin(step, a, b)
    c1, c2 = _cell(pat, step, l1, a, b), _cell(pat, step, l2, a, b)
    return BankConflict(dict(env), (o[0], o[1]), (l1, l2), ((c1[0], c1[1]), (c2[0], c2[1])), (a1, a2), bank,
                        l1 // access.group)


def _confirm_worst(lay: SharedLayout, pat: Pattern, step: tuple[int, int], worst: Mapping[str, Any], J: int) -> None:
    """The scalar reference re-evaluates the worst group's words: each is in the named bank (an internal
    error otherwise, never a silent number)."""
    env = worst.get("params") or {}
    a, b = worst["origin"][0] // step[0], worst["origin"][1] // step[1]
    seen = set()
    for lane in worst["lanes"]:
        r, c = _cell(pat, step, lane, a, b)
        addr = lay.address(r, c, env)
        assert addr is not None
        seen |= {addr // BANK_BYTES + j for j in range(J) if (addr // BANK_BYTES + j) % BANKS == worst["bank"]}
    if seen != set(worst["words"]):
        raise AssertionError(f"the worst group does not re-evaluate: {sorted(seen)} against {worst['words']}")


__all__ = ["BanksResult", "check_banks", "placed"]
