"""Atomic updates: ``red`` and ``atom`` (global, shared, ``shared::cluster`` and generic addresses; scalars and the
``.v2``/``.v4``/``.v8`` vectors; ``f16x2``/``bf16x2`` as two elements).

An update reads the old value, combines it with the operand and writes the result back, thread after thread where
several threads of one instruction update one address.  What is followed is what leaves one final value whatever
the order of the updates: ``add`` (integers exactly, with wrap-around; data by the engines' ``add``: an
accumulator's partial sums added give the whole sum's products, each one once, so a split-K kernel's ``C`` is its
einsum; a concrete zero on either side is the identity), and ``min``/``max``/``and``/``or``/``xor`` of concrete
values.  Refused, naming the instruction: ``exch``, ``cas``, ``inc``, ``dec`` (the value left, or the control flow
on it, depends on the order), ``min``/``max``/bit operations on data, a float ``add`` of two nonzero concrete
values (rounded: its value depends on the order), and an ``atom`` whose returned value the kernel reads (the old
value each thread sees depends on the order of the updates; the executor runs one order and would decide on it).
An ``atom`` whose result is never read is a ``red``; its destination is left undefined.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..ptx.syntax import TYPE_BITS, Addr, Instr, PredPair, Reg, Vec
from .access import address, aligned, rows_of, space_of, update_bytes, vector_of
from .bytes import CONCRETE, U64, UNDEF, from_bytes, mask_of, sext, to_bytes
from .machine import CTA, Program, Step
from .ops_base import FLOAT_TYPES, dest, handler, source_bytes, types_of
from .ops_float import as_float, from_float

OPS = ("add", "min", "max", "and", "or", "xor", "inc", "dec", "exch", "cas")
ORDERED = {"exch": "which thread's value is left depends on the order of the updates",
           "cas": "whether each compare succeeds depends on the order of the updates (a lock or a retry loop)",
           "inc": "its wrap-around at the bound makes the value left depend on the order of the updates",
           "dec": "its wrap-around at the bound makes the value left depend on the order of the updates"}
PACKED2 = {"f16x2": "f16", "bf16x2": "bf16"}


def _reads(prog: Program, reg: int) -> Instr | None:
    """The first instruction of the kernel that reads register ``reg`` (as a source, an address or a guard)."""
    def has(o: Any) -> bool:
        if isinstance(o, Reg):
            return o.id == reg
        if isinstance(o, Addr):
            return isinstance(o.base, Reg) and o.base.id == reg
        if isinstance(o, Vec):
            return any(has(x) for x in o.items)
        if isinstance(o, PredPair):
            return False
        inner = getattr(o, "operand", None) or getattr(o, "reg", None)
        return inner is not None and has(inner)
    for s in prog.fn.body:
        if not isinstance(s, Instr):
            continue
        if s.guard is not None and s.guard.id == reg:
            return s
        ops = s.operands
        # operand 0 is a destination unless it is an address (a store's) or the instruction only reads it
        srcs = ops if (ops and isinstance(ops[0], Addr)) or s.base in ("st", "red", "bra") else ops[1:]
        if any(has(o) for o in srcs):
            return s
    return None


@handler("red", "atom")
def _atomic(prog: Program, ins: Instr, index: int) -> Step:
    parts = ins.parts
    op = next((p for p in parts[1:] if p in OPS), None)
    if op is None:
        raise prog.error(ins, f"{ins.opcode}: no operation (one of {', '.join(OPS)})")
    if op in ORDERED:
        raise prog.error(ins, f"unsupported instruction '{ins.opcode}' ({op}: {ORDERED[op]}; the executor follows "
                              "only updates whose final value no order changes)")
    space = space_of(ins)
    if space not in ("global", "shared", "generic"):
        raise prog.error(ins, f"unsupported instruction '{ins.opcode}' (.{space} memory)")
    ts = types_of(ins)
    if not ts:
        raise prog.error(ins, f"{ins.opcode}: no type")
    t = ts[-1]
    et = PACKED2.get(t, t)
    eb = TYPE_BITS[et] // 8
    per = 2 if t in PACKED2 else 1
    vec = vector_of(ins)
    ops = list(ins.operands)
    if "L2::cache_hint" in parts:
        ops = ops[:-1]  # the cache policy: a hint
    red = ins.base == "red"
    if len(ops) != (2 if red else 3):
        raise prog.error(ins, f"{ins.opcode} takes {'an address and a value' if red else 'a destination, an address and a value'}")
    dsts: list[Reg | None] = []
    if not red:
        d = ops.pop(0)
        items = list(d.items) if isinstance(d, Vec) else [d]
        for x in items:
            r = dest(prog, ins, x)
            if r is not None:
                used = _reads(prog, r.id)
                if used is not None:
                    raise prog.error(ins, f"unsupported instruction '{ins.opcode}': the old value it returns in "
                                          f"{r.name} (read at line {used.line}) depends on the order of the atomic "
                                          "updates of the address, which the executor does not choose (red, or an "
                                          "atom whose result is unused, is followed)")
            dsts.append(r)
    addr_o, src = ops
    srcs = list(src.items) if isinstance(src, Vec) else [src]
    if len(srcs) != vec:
        raise prog.error(ins, f"{ins.opcode} updates {vec} values, the operand has {len(srcs)}")
    vb = eb * per  # bytes of one operand register
    n = vb * vec
    floating = et in FLOAT_TYPES
    signed = et.startswith("s")

    def run(cta: CTA, m: np.ndarray | None) -> None:
        rows = rows_of(m, cta.T)
        addr = address(cta, addr_o, m)
        s_tags, s_bits = source_bytes(cta, srcs, vb, rows)
        a = aligned(prog, ins, addr[rows], rows, n)
        # threads of this instruction updating one address: one after another, in thread order
        order = np.argsort(a, kind="stable")
        sa = a[order]
        first = np.r_[True, sa[1:] != sa[:-1]]
        start = np.maximum.accumulate(np.where(first, np.arange(len(sa)), 0))
        rank = np.empty(len(sa), np.int64)
        rank[order] = np.arange(len(sa)) - start
        for rd in range(int(rank.max()) + 1 if len(rank) else 0):
            this = rank == rd

            def combine(o_tags: np.ndarray, o_bits: np.ndarray, which: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
                sel = np.flatnonzero(this)[which]
                return _combine(cta, ins, op, et, eb, o_tags, o_bits, s_tags[sel], s_bits[sel], rows[sel],
                                floating, signed)
            update_bytes(cta, ins, space, addr, n, rows[this], combine)
        for r in dsts:  # an atom's result, never read: undefined
            if r is not None:
                w = max(1, prog.widths[r.id] // 8)
                cta.put(r.id, np.uint64(0), np.full((cta.T, w), UNDEF, np.int64), m)
    return Step(ins, index, "op", run)


def _combine(cta: CTA, ins: Instr, op: str, et: str, eb: int, o_tags: np.ndarray, o_bits: np.ndarray,
             s_tags: np.ndarray, s_bits: np.ndarray, threads: np.ndarray, floating: bool,
             signed: bool) -> tuple[np.ndarray, np.ndarray]:
    """The new bytes of an update: old (``o_``) and operand (``s_``) bytes [k, n], element by element of ``eb``
    bytes.  Both engines take the same path (decided by the tags); only the domain's ``add`` of two data values
    differs between them."""
    k, n = o_tags.shape
    out_t = np.empty((k, n), np.int64)
    out_b = np.empty((k, n), np.uint8)
    sign = np.uint64((1 << (8 * eb - 1)) - 1) if floating else mask_of(8 * eb)
    for j in range(n // eb):
        sl = slice(j * eb, (j + 1) * eb)
        ot, st = o_tags[:, sl], s_tags[:, sl]
        ob, sb = from_bytes(o_bits[:, sl]), from_bytes(s_bits[:, sl])
        oc, sc = (ot == CONCRETE).all(axis=1), (st == CONCRETE).all(axis=1)
        od, sd = (ot >= 0).all(axis=1), (st >= 0).all(axis=1)
        rt = np.full((k, eb), UNDEF, np.int64)  # an undefined old value or operand: an undefined result
        rb = np.zeros(k, U64)
        both = oc & sc
        if both.any():
            rb[both] = _concrete(cta, ins, op, et, ob[both], sb[both], threads[both], floating, signed)
            rt[both] = CONCRETE
        data = (oc | od) & (sc | sd) & ~both
        if data.any():
            if op != "add":
                t = int(threads[int(np.argmax(data))])
                raise cta.prog.error(ins, f"unsupported instruction '{ins.opcode}' (thread {t}: {op} of data; the "
                                          "executor follows data through add only)")
            zo = oc & ((ob & sign) == 0) & sd  # 0 + x
            zs = sc & ((sb & sign) == 0) & od  # x + 0
            rt[zo], rb[zo] = st[zo], sb[zo]
            rt[zs], rb[zs] = ot[zs], ob[zs]
            dd = od & sd
            if dd.any():
                got = cta.prog.domain.add([ob[dd], sb[dd]], [ot[dd], st[dd]], eb)
                if got is None:
                    t = int(threads[int(np.argmax(dd))])
                    raise cta.prog.error(ins, f"unsupported instruction '{ins.opcode}' (thread {t} adds data that is "
                                              "not a tensor-core sum: the executor adds accumulators' sums only)")
                rb[dd], rt[dd] = got
            rest = data & ~zo & ~zs & ~dd
            if rest.any():
                t = int(threads[int(np.argmax(rest))])
                raise cta.prog.error(ins, f"unsupported instruction '{ins.opcode}' (thread {t} adds data and a "
                                          "nonzero concrete value: not an identity, not followed)")
        out_t[:, sl] = rt
        out_b[:, sl] = to_bytes(rb, eb)
    return out_t, out_b


def _concrete(cta: CTA, ins: Instr, op: str, et: str, a: np.ndarray, b: np.ndarray, threads: np.ndarray,
              floating: bool, signed: bool) -> np.ndarray:
    w = TYPE_BITS[et]
    if floating:
        if op == "add":
            sign = np.uint64((1 << (w - 1)) - 1)
            za, zb = (a & sign) == 0, (b & sign) == 0
            if not (za | zb).all():
                t = int(threads[int(np.argmax(~(za | zb)))])
                raise cta.prog.error(ins, f"unsupported instruction '{ins.opcode}' (thread {t} adds two nonzero "
                                          f"{et} values: the sum rounds, and the order of the updates decides it)")
            return np.where(za, b, a)
        if op in ("min", "max"):
            x, y = as_float(a, et), as_float(b, et)
            return from_float(np.fmin(x, y) if op == "min" else np.fmax(x, y), et)
        raise cta.prog.error(ins, f"{ins.opcode}: {op} takes an integer type")
    if op == "add":
        return (a + b) & mask_of(w)
    if op in ("min", "max"):
        x, y = (sext(a, w), sext(b, w)) if signed else (a, b)
        pick = (x <= y) if op == "min" else (x >= y)
        return np.where(pick, a, b)
    if op == "and":
        return a & b
    if op == "or":
        return a | b
    assert op == "xor", op
    return a ^ b


__all__ = ["OPS"]
