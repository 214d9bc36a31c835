"""Bank conflicts of the shared-memory accesses Triton lowers a register layout to, decided by both engines.

``banks`` with an ``--addresses`` file (``verify.checks.banks``) places one lane pattern over the tile.  When the
data comes from a register layout (a ``local_store`` of a ``#blocked``/``#mma`` tensor into a shared encoding, or a
``local_load`` back), the addresses are not the user's to write: Triton derives them, and so does this module.

* **The vector.**  ``regToShared = shared o registers`` maps (register, lane, warp) to an element offset.  Triton
  moves ``vec`` registers with one access, the largest power of two such that every run of ``vec`` registers
  starting at a multiple of ``vec`` lands on ``vec`` consecutive offsets, starting at a multiple of ``vec``
  (``getNumConsecutiveInOut``: the leading register bases map to offsets 1, 2, 4...), at most 16 bytes.  Here it is
  found by enumerating every (thread, register), which is the same number for Triton's linear layouts and defined
  for any shared layout.
* **The instructions.**  Each warp issues one ``ld.shared``/``st.shared`` of ``vec`` elements per run: instruction
  ``k`` of warp ``w`` (``instruction = w * runs + k``) has lane ``l`` address the cell of its register ``k * vec``.
  The map ``(lane, instruction) -> (row, col)`` is the register layout's XOR of bases, a formula; composed with
  the shared layout it gives every lane's offset.
* **The properties** are ``banks``' own, each decided by enumerating every (instruction, lane) and by Z3 over
  symbolic ones, joined by ``results.combine_engines``: ``defined`` (every addressed cell is placed),
  ``aligned`` (every address a multiple of the access), ``conflict_free`` (no two lanes of one wavefront group
  touch different words of one bank in one instruction).  Witnesses name the instruction (``instruction = 3:
  ...``) and the cells, which are the tile's own (origin ``(0, 0)``: there are no placements to try).

The result is a ``verify.results.shared.BanksResult`` whose ``placements`` are the instructions, with the
derivation beside it (``RegisterBanks``).
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np
import z3

from ..engines import smt
from ..formula import BinOp, Case, Definition, Expr, Formula, Num, Var
from ..layout.algebra import compose
from ..layout.dims import Dim
from ..layout.named import FormulaMap, grid, in_box, variables, width
from ..layout.notations.triton import TritonLayout
from ..layout.shared import SharedLayout, concrete
from ..layout.smem_access import BANKS, Access, parse_access
from ..results import combine_engines
from ..witnesses import BankConflict, LaneAddress
from . import banks as _banks
from .fragment import DEFAULT_TIMEOUT

WARP = 32
MAX_VECTOR_BYTES = 16
INSTRUCTION = "instruction"


@dataclass(frozen=True)
class Derivation:
    """How the lane addresses were derived: ``vec`` elements per access (``access``), ``runs`` instructions per warp
    over ``warps`` warps, ``map`` the named map ``(lane, instruction) -> (row, col)``."""

    vec: int
    access: Access
    runs: int
    warps: int
    map: Any
    registers: int  # registers per thread

    @property
    def instructions(self) -> int:
        return self.runs * self.warps

    def text(self) -> str:
        return (f"lane addresses derived from the register layout as Triton lowers it: {self.vec} element"
                f"{'s' if self.vec != 1 else ''} ({self.access.bytes} bytes) per lane per access, {self.access.text}; "
                f"{self.runs} instruction{'s' if self.runs != 1 else ''} per warp ({self.registers} registers / "
                f"{self.vec}) x {self.warps} warp{'s' if self.warps != 1 else ''} = {self.instructions}, "
                "each checked at its own cells")

    def to_json(self) -> dict[str, Any]:
        return {"derived_from": "registers", "elements_per_access": self.vec, "access": self.access.text,
                "instructions_per_warp": self.runs, "warps": self.warps, "registers": self.registers}


@dataclass(frozen=True)
class RegisterBanks:
    derivation: Derivation
    banks: "_banks.BanksResult"

    @property
    def ok(self) -> bool:
        return self.banks.ok


def _cells(regs: TritonLayout) -> tuple[np.ndarray, np.ndarray]:
    """(rows, cols) of every (thread, register), as arrays of shape (threads, registers)."""
    t = np.arange(regs.threads).reshape(-1, 1)
    r = np.arange(regs.values).reshape(1, -1)
    nl = len(regs.lane)
    row = np.zeros((regs.threads, regs.values), np.int64)
    col = np.zeros_like(row)
    for index, bases, shift in ((r, regs.register, 0), (t, regs.lane, 0), (t, regs.warp, nl)):
        for b, (br, bc) in enumerate(bases):
            bit = (index >> (b + shift)) & 1
            row ^= bit * br
            col ^= bit * bc
    return row, col


def _offsets(regs: TritonLayout, lay: SharedLayout) -> np.ndarray:
    """The element offset of every (thread, register); -1 where the shared layout places no such cell."""
    rows, cols = concrete(lay.rows), concrete(lay.cols)
    row, col = _cells(regs)
    from ..layout.named import evaluate_all
    v = evaluate_all(lay.map)
    table = np.where(np.asarray(v.ok, bool), np.asarray(v.out["offset"], np.int64), -1)
    inside = (row < rows) & (col < cols)
    return np.where(inside, table[np.minimum(row, rows - 1), np.minimum(col, cols - 1)], -1)


def vector_width(regs: TritonLayout, lay: SharedLayout) -> int:
    """Triton's vectorisation (module docstring): the largest power of two ``vec`` (at most 16 bytes, at most the
    registers) whose runs of registers land on consecutive, ``vec``-aligned offsets, for every thread."""
    off = _offsets(regs, lay)
    limit = max(1, min(regs.values, MAX_VECTOR_BYTES * 8 // lay.element_bits))
    vec = 1
    while vec * 2 <= limit:
        v = vec * 2
        runs = off.reshape(off.shape[0], -1, v)
        first = runs[:, :, :1]
        if not ((runs >= 0).all() and (runs == first + np.arange(v)).all() and (first % v == 0).all()):
            break
        vec = v
    return vec


def _bit(x: Expr, b: int) -> Expr:
    return BinOp("&", x if b == 0 else BinOp(">>", x, Num(b)), Num(1))


def _address_map(regs: TritonLayout, vec: int, runs: int, rows: int, cols: int) -> FormulaMap:
    """``(lane, instruction) -> (row, col)``: lane ``l`` of instruction ``w * runs + k`` holds register ``k * vec``
    of thread ``32 w + l``; the register layout's bases XORed over those bits (an exact formula)."""
    lane, ins = Var("lane"), Var("i")
    skip = vec.bit_length() - 1  # register bits below it are inside one access
    run_bits = runs.bit_length() - 1
    terms: list[tuple[Expr, tuple[int, int]]] = []
    terms += [(_bit(lane, b), basis) for b, basis in enumerate(regs.lane)]
    terms += [(_bit(ins, b - skip), basis) for b, basis in enumerate(regs.register) if b >= skip]
    terms += [(_bit(ins, run_bits + b), basis) for b, basis in enumerate(regs.warp)]
    defs = []
    for coord, name in ((0, "row"), (1, "col")):
        expr: Expr | None = None
        for bit, basis in terms:
            if basis[coord]:
                term = bit if basis[coord] == 1 else BinOp("*", bit, Num(basis[coord]))
                expr = term if expr is None else BinOp("^", expr, term)
        defs.append(Definition(name, (Case(expr if expr is not None else Num(0), None),)))
    return FormulaMap(Formula(tuple(defs), "x"), (Dim("lane", WARP), Dim(INSTRUCTION, runs * (regs.threads // WARP))),
                      (Dim("row", rows), Dim("col", cols)), variables=(("lane", "lane"), (INSTRUCTION, "i")))


def derive(regs: TritonLayout, lay: SharedLayout, kind: str) -> Derivation:
    """The vector and the instructions (``ValueError`` for what Triton would not lower this way)."""
    if lay.params:
        raise ValueError("the shared layout is a family: bind its parameters (--param) to derive the addresses")
    if len(regs.lane) != 5:
        raise ValueError(f"the register layout has {1 << len(regs.lane)} lanes: a warp has 32")
    rows, cols = concrete(lay.rows), concrete(lay.cols)
    if regs.shape[0] > rows or regs.shape[1] > cols:
        raise ValueError(f"the register layout covers {regs.shape[0]} x {regs.shape[1]}, more than the shared tile "
                         f"({rows} x {cols})")
    if kind not in ("ld", "st"):
        raise ValueError(f"with --registers the access is ld.shared or st.shared (the vector is derived), not {kind}")
    vec = vector_width(regs, lay)
    nbytes = vec * lay.element_bits // 8
    if nbytes < 1 or vec * lay.element_bits % 8:
        raise ValueError(f"{vec} x {lay.element_bits}-bit elements are not whole bytes")
    text = f"{kind}.shared." + (f"b{nbytes * 8}" if nbytes <= 4 else f"v{nbytes // 4}.b32")
    runs = regs.values // vec
    return Derivation(vec, parse_access(text), runs, regs.threads // WARP, _address_map(regs, vec, runs, rows, cols),
                      regs.values)


def _addresses(m: Any, lay: SharedLayout) -> tuple[np.ndarray, np.ndarray]:
    """(ok, byte address) of every (lane, instruction), shape (lanes, instructions)."""
    v = m.evaluate(grid(m.inputs))
    ok = np.asarray(v.ok, bool)
    off = np.where(ok, np.asarray(v.out["offset"], np.int64), 0)
    return ok, lay.base + ((off * lay.element_bits) >> 3)


def _cell(d: Derivation, lane: int, k: int) -> tuple[int, int]:
    p = d.map.at({"lane": lane, INSTRUCTION: k})
    return int(p["row"]), int(p["col"])


def _conflict(d: Derivation, k: int, l1: int, l2: int, a1: int, a2: int) -> BankConflict:
    J = d.access.words
    bank = min(p % BANKS for p in range(a1 // 4, a1 // 4 + J) for q in range(a2 // 4, a2 // 4 + J)
               if p % BANKS == q % BANKS and p != q)
    return BankConflict({INSTRUCTION: k}, (0, 0), (l1, l2), (_cell(d, l1, k), _cell(d, l2, k)), (a1, a2), bank,
                        l1 // d.access.group)


def check_register_banks(regs: TritonLayout, lay: SharedLayout, kind: str,
                         timeout: float = DEFAULT_TIMEOUT) -> RegisterBanks:
    """``derive``, then the three properties over every instruction (module docstring)."""
    t0 = time.perf_counter()
    d = derive(regs, lay, kind)
    acc, g, J = d.access, d.access.group, d.access.words
    m = compose(lay.map, d.map)  # (lane, instruction) -> offset
    ok, addr = _addresses(m, lay)
    n = ok.shape[1]
    width_b = max(1, min(acc.bytes, 16))

    def first(bad: np.ndarray) -> tuple[int, int] | None:  # (lane, instruction), instruction outermost
        hits = np.argwhere(bad)
        if not hits.size:
            return None
        l, k = hits[np.lexsort((hits[:, 0], hits[:, 1]))[0]]
        return int(l), int(k)

    enum: dict[str, Any] = {}
    p = first(~ok)
    enum["defined"] = None if p is None else LaneAddress({INSTRUCTION: p[1]}, p[0], [0, 0], _cell(d, *p))
    p = first(ok & (addr % width_b != 0))
    enum["aligned"] = None if p is None else LaneAddress({INSTRUCTION: p[1]}, p[0], [0, 0], _cell(d, *p),
                                                          int(addr[p]))
    words = (addr >> 2)[..., None] + np.arange(J)  # (lane, instruction, J)
    degree, worst, wavefronts, enum["conflict_free"] = 1, None, 0, None
    for k in range(n):
        dk, info, fronts = _banks.placement_degree(words[:, k, :], ok[:, k], g)
        wavefronts = max(wavefronts, fronts)
        if dk > degree:
            degree = dk
            worst = {"params": {INSTRUCTION: k}, "origin": [0, 0], **info,
                     "cells": [list(_cell(d, lane, k)) for lane in info["lanes"]]}
        if enum["conflict_free"] is None:
            pair = _banks._first_conflict(words[:, k, :], ok[:, k], g)
            if pair is not None:
                enum["conflict_free"] = _conflict(d, k, pair[0], pair[1], int(addr[pair[0], k]), int(addr[pair[1], k]))

    # ---- Z3: the lane and the instruction symbolic
    w = max(width(m), smt.width_for(max(lay.base, 1) + (1 << 22)))
    x = variables(m.inputs, w, "1")
    okx, out = m.encode(x, {})
    ax = smt.bv(lay.base, w) + ((out["offset"] * smt.bv(lay.element_bits, w)) >> smt.bv(3, w))
    box = in_box(x, m.inputs, {}, w)
    keys = [x[INSTRUCTION], x["lane"]]
    results = []

    def z3_lane(model: z3.ModelRef, address: bool) -> LaneAddress:
        lane, k = smt.as_int(model, x["lane"]), smt.as_int(model, x[INSTRUCTION])
        return LaneAddress({INSTRUCTION: k}, lane, [0, 0], _cell(d, lane, k),
                           smt.as_int(model, ax) if address else None)

    res, model = smt.solve_min([box, z3.Not(okx)], keys, smt.Budget(timeout))
    results.append(combine_engines(
        "defined", "proved", smt.status(res), z3_lane(model, False) if res == "sat" and model is not None else None,
        enum["defined"], lambda c: f"{_banks._prefix(c)}lane {c['lane']} addresses cell {tuple(c['cell'])}, which the "
                                   "layout does not place",
        time.perf_counter() - t0, "every cell a lane addresses is placed by the layout", same_witness=True))
    res, model = smt.solve_min([box, okx, z3.URem(ax, smt.bv(width_b, w)) != 0], keys, smt.Budget(timeout))
    results.append(combine_engines(
        "aligned", "proved", smt.status(res), z3_lane(model, True) if res == "sat" and model is not None else None,
        enum["aligned"], lambda c: f"{_banks._prefix(c)}lane {c['lane']} addresses {c['address']:#x} (cell "
                                   f"{tuple(c['cell'])}): not a multiple of the {acc.bytes}-byte access",
        time.perf_counter() - t0, f"every address is a multiple of {acc.bytes} bytes", same_witness=True))
    y = {"lane": z3.BitVec("lane_2", w), INSTRUCTION: x[INSTRUCTION]}
    oky, out_y = m.encode(y, {})
    ay = smt.bv(lay.base, w) + ((out_y["offset"] * smt.bv(lay.element_bits, w)) >> smt.bv(3, w))
    j1, j2 = z3.BitVec("j_1", w), z3.BitVec("j_2", w)
    wx, wy = (ax >> smt.bv(2, w)) + j1, (ay >> smt.bv(2, w)) + j2
    cs = [box, in_box(y, m.inputs, {}, w), okx, oky, z3.ULT(x["lane"], y["lane"]),
          z3.UDiv(x["lane"], smt.bv(g, w)) == z3.UDiv(y["lane"], smt.bv(g, w)),
          z3.ULT(j1, smt.bv(J, w)), z3.ULT(j2, smt.bv(J, w)),
          (wx & smt.bv(BANKS - 1, w)) == (wy & smt.bv(BANKS - 1, w)), wx != wy]
    res, model = smt.solve_min(cs, [x[INSTRUCTION], y["lane"], x["lane"]], smt.Budget(timeout))
    z3_cex = None
    if res == "sat" and model is not None:
        z3_cex = _conflict(d, smt.as_int(model, x[INSTRUCTION]), smt.as_int(model, x["lane"]),
                           smt.as_int(model, y["lane"]), smt.as_int(model, ax), smt.as_int(model, ay))

    def confirm(c: BankConflict) -> bool:
        a1, a2 = c.addresses
        return any(p % BANKS == q % BANKS and p != q for p in range(a1 // 4, a1 // 4 + J)
                   for q in range(a2 // 4, a2 // 4 + J))

    results.append(combine_engines(
        "conflict_free", "proved", smt.status(res), z3_cex, enum["conflict_free"],
        lambda c: f"{_banks._prefix(c)}{c.describe()}", time.perf_counter() - t0,
        "no two lanes of one wavefront group touch different words of one bank", confirm, same_witness=True))
    if worst is not None:
        _confirm_worst(d, lay, worst, J)
    ideal = -(-acc.lanes // g)
    return RegisterBanks(d, _banks.BanksResult(acc, tuple(results), degree, worst, wavefronts or ideal, ideal, n))


def _confirm_worst(d: Derivation, lay: SharedLayout, worst: Mapping[str, Any], J: int) -> None:
    """The scalar reference re-evaluates the worst group's words (an internal error otherwise)."""
    k = worst["params"][INSTRUCTION]
    seen = set()
    for lane in worst["lanes"]:
        addr = lay.address(*_cell(d, lane, k))
        assert addr is not None
        seen |= {addr // 4 + j for j in range(J) if (addr // 4 + j) % BANKS == worst["bank"]}
    if seen != set(worst["words"]):
        raise AssertionError(f"the worst group does not re-evaluate: {sorted(seen)} against {worst['words']}")


__all__ = ["Derivation", "RegisterBanks", "check_register_banks", "derive", "vector_width"]
