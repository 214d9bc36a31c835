"""Integer arithmetic and bit instructions: exact bit-vectors of the instruction type's width (results wrap; signed
types are two's complement).  Data (tags >= 0) may pass through byte-aligned ``shl``/``shr``/``and``/``or``/``xor``/
``bfe``/``bfi`` and ``prmt``; any other use of data is an error at the instruction.  Every handler computes the bits by
the integer semantics and routes the byte tags, so each engine's data goes its own way; a float type goes to
``ops_float``."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..ptx.syntax import TYPE_BITS, Imm, Instr
from .bytes import CONCRETE, U64, from_bytes, mask_of, sext, to_bytes
from .machine import CTA, Program, Step
from .ops_base import (FLOAT_TYPES, HANDLERS, Handler, dest, handler, merge_undef, mods_of, need, types_of, undef_tags,
                       value)
from .ops_float import float_op


# ----------------------------------------------------------------------------- integer arithmetic

def _binary(fn: Callable[[Any, Any, int], Any], signed_ops: bool = False) -> Handler:
    def make(prog: Program, ins: Instr, index: int) -> Step:
        ts = types_of(ins)
        if not ts:
            raise prog.error(ins, f"{ins.opcode}: no type")
        t = ts[-1]
        if t in FLOAT_TYPES:
            return float_op(prog, ins, index, t)
        if mods_of(ins) & {"cc", "sat"}:
            raise prog.error(ins, f"unsupported instruction '{ins.opcode}' (carry and saturation are not modelled)")
        need(prog, ins, 3)
        w = TYPE_BITS[t]
        signed = t.startswith("s")
        d = dest(prog, ins, ins.operands[0])
        a_o, b_o = ins.operands[1], ins.operands[2]
        nb = w // 8

        def run(cta: CTA, m: np.ndarray | None) -> None:
            a, ua = cta.int_value(a_o, w, signed, m)
            b, ub = cta.int_value(b_o, w, signed, m)
            r = fn(a, b, w)
            if d is not None:
                cta.put(d.id, r, undef_tags(cta, merge_undef(ua, ub), nb), m)
        return Step(ins, index, "op", run)
    return make


def _add(a: Any, b: Any, w: int) -> Any:
    return (np.asarray(a, U64) + np.asarray(b, U64)) & mask_of(w)


def _sub(a: Any, b: Any, w: int) -> Any:
    return (np.asarray(a, U64) - np.asarray(b, U64)) & mask_of(w)


HANDLERS["add"] = _binary(_add)
HANDLERS["sub"] = _binary(_sub)


def _minmax(fn: Callable[[Any, Any], Any]) -> Handler:
    def make(prog: Program, ins: Instr, index: int) -> Step:
        t = types_of(ins)[-1]
        if t in FLOAT_TYPES:
            return float_op(prog, ins, index, t)
        need(prog, ins, 3)
        w = TYPE_BITS[t]
        signed = t.startswith("s")
        d = dest(prog, ins, ins.operands[0])
        a_o, b_o = ins.operands[1], ins.operands[2]

        def run(cta: CTA, m: np.ndarray | None) -> None:
            a, ua = cta.int_value(a_o, w, signed, m)
            b, ub = cta.int_value(b_o, w, signed, m)
            if signed:
                r = fn(np.asarray(a, U64).view(np.int64), np.asarray(b, U64).view(np.int64)).view(U64)
            else:
                r = fn(np.asarray(a, U64), np.asarray(b, U64))
            if d is not None:
                cta.put(d.id, r, undef_tags(cta, merge_undef(ua, ub), w // 8), m)
        return Step(ins, index, "op", run)
    return make


HANDLERS["min"] = _minmax(np.minimum)
HANDLERS["max"] = _minmax(np.maximum)


def _mul_hi(a: np.ndarray, b: np.ndarray, w: int, signed: bool) -> np.ndarray:
    """The high ``w`` bits of the 2w-bit product, exactly (Python integers for 64-bit operands)."""
    if w <= 32:
        if signed:
            p = a.view(np.int64) * b.view(np.int64)
            return (p >> np.int64(w)).view(U64) & mask_of(w)
        return (a * b) >> np.uint64(w)
    av = np.broadcast_to(a, np.broadcast(a, b).shape)
    bv = np.broadcast_to(b, av.shape)
    out = np.zeros(av.shape, U64)
    for k in range(av.size):
        x, y = int(av.flat[k]), int(bv.flat[k])
        if signed:
            x -= (x >> 63) << 64
            y -= (y >> 63) << 64
        out.flat[k] = ((x * y) >> 64) % (1 << 64)
    return out


@handler("mul", "mul24")
def _mul(prog: Program, ins: Instr, index: int) -> Step:
    t = types_of(ins)[-1]
    if t in FLOAT_TYPES:
        return float_op(prog, ins, index, t)
    need(prog, ins, 3)
    mods = mods_of(ins)
    w = TYPE_BITS[t]
    signed = t.startswith("s")
    mode = "wide" if "wide" in mods else "hi" if "hi" in mods else "lo"
    if ins.base == "mul24":
        raise prog.error(ins, "unsupported instruction 'mul24'")
    d = dest(prog, ins, ins.operands[0])
    a_o, b_o = ins.operands[1], ins.operands[2]
    out_w = 2 * w if mode == "wide" else w

    def run(cta: CTA, m: np.ndarray | None) -> None:
        a, ua = cta.int_value(a_o, w, signed, m)
        b, ub = cta.int_value(b_o, w, signed, m)
        a, b = np.asarray(a, U64), np.asarray(b, U64)
        if mode == "lo":
            r = (a * b) & mask_of(w)
        elif mode == "wide":
            r = (a * b) & mask_of(2 * w)  # sign-extended 64-bit operands: the low 2w bits are exact
        else:
            r = _mul_hi(a & mask_of(w), b & mask_of(w), w, signed) if not signed else _mul_hi(a, b, w, True)
        if d is not None:
            cta.put(d.id, r, undef_tags(cta, merge_undef(ua, ub), out_w // 8), m)
    return Step(ins, index, "op", run)


@handler("mad", "mad24")
def _mad(prog: Program, ins: Instr, index: int) -> Step:
    t = types_of(ins)[-1]
    if t in FLOAT_TYPES:
        return float_op(prog, ins, index, t)
    need(prog, ins, 4)
    mods = mods_of(ins)
    if ins.base == "mad24" or mods & {"cc", "sat"}:
        raise prog.error(ins, f"unsupported instruction '{ins.opcode}'")
    w = TYPE_BITS[t]
    signed = t.startswith("s")
    mode = "wide" if "wide" in mods else "hi" if "hi" in mods else "lo"
    out_w = 2 * w if mode == "wide" else w
    d = dest(prog, ins, ins.operands[0])
    a_o, b_o, c_o = ins.operands[1:]

    def run(cta: CTA, m: np.ndarray | None) -> None:
        a, ua = cta.int_value(a_o, w, signed, m)
        b, ub = cta.int_value(b_o, w, signed, m)
        c, uc = cta.int_value(c_o, out_w, signed, m)
        a, b = np.asarray(a, U64), np.asarray(b, U64)
        if mode == "lo":
            p = (a * b) & mask_of(w)
        elif mode == "wide":
            p = (a * b) & mask_of(2 * w)
        else:
            p = _mul_hi(a, b, w, signed)
        r = (p + np.asarray(c, U64)) & mask_of(out_w)
        if d is not None:
            cta.put(d.id, r, undef_tags(cta, merge_undef(ua, ub, uc), out_w // 8), m)
    return Step(ins, index, "op", run)


@handler("div", "rem")
def _div(prog: Program, ins: Instr, index: int) -> Step:
    t = types_of(ins)[-1]
    if t in FLOAT_TYPES:
        raise prog.error(ins, f"unsupported instruction '{ins.opcode}' (floating-point division)")
    need(prog, ins, 3)
    w = TYPE_BITS[t]
    signed = t.startswith("s")
    d = dest(prog, ins, ins.operands[0])
    a_o, b_o = ins.operands[1], ins.operands[2]
    is_rem = ins.base == "rem"

    def run(cta: CTA, m: np.ndarray | None) -> None:
        a, ua = cta.int_value(a_o, w, signed, m)
        b, ub = cta.int_value(b_o, w, signed, m)
        a = np.broadcast_to(np.asarray(a, U64), (cta.T,))
        b = np.broadcast_to(np.asarray(b, U64), (cta.T,))
        active = np.ones(cta.T, bool) if m is None else m
        zero = (b == 0) & active
        if zero.any():
            raise prog.error(ins, f"{ins.opcode}: division by zero (thread {int(np.argmax(zero))})")
        bb = np.where(b == 0, np.uint64(1), b)
        if signed:
            x, y = a.view(np.int64), bb.view(np.int64)
            q = np.abs(x) // np.abs(y)  # C semantics: the quotient rounds toward zero
            q = np.where((x < 0) != (y < 0), -q, q)
            r = (x - q * y) if is_rem else q
            res = r.view(U64) & mask_of(w)
        else:
            res = (a % bb) if is_rem else (a // bb)
        if d is not None:
            cta.put(d.id, res, undef_tags(cta, merge_undef(ua, ub), w // 8), m)
    return Step(ins, index, "op", run)


@handler("neg", "abs", "not", "cnot", "popc", "clz", "brev")
def _unary(prog: Program, ins: Instr, index: int) -> Step:
    t = types_of(ins)[-1]
    if t in FLOAT_TYPES:
        return float_op(prog, ins, index, t)
    need(prog, ins, 2)
    w = TYPE_BITS[t]
    d = dest(prog, ins, ins.operands[0])
    a_o = ins.operands[1]
    op = ins.base
    if t == "pred":
        def run_p(cta: CTA, m: np.ndarray | None) -> None:
            a = cta.pred(a_o)
            if d is not None:
                cta.put(d.id, ~a, None, m)
        return Step(ins, index, "op", run_p)
    out_w = 32 if op in ("popc", "clz") else w

    def run(cta: CTA, m: np.ndarray | None) -> None:
        a, ua = cta.int_value(a_o, w, t.startswith("s"), m)
        a = np.broadcast_to(np.asarray(a, U64), (cta.T,)) & mask_of(w)
        if op == "neg":
            r = (np.uint64(0) - a) & mask_of(w)
        elif op == "abs":
            s = sext(a, w)
            r = np.abs(s).view(U64) & mask_of(w)
        elif op == "not":
            r = ~a & mask_of(w)
        elif op == "cnot":
            r = (a == 0).astype(U64)
        elif op == "popc":
            r = np.array([bin(int(x)).count("1") for x in a], U64)
        elif op == "clz":
            r = np.array([w - int(x).bit_length() for x in a], U64)
        else:
            r = np.array([int(format(int(x), f"0{w}b")[::-1], 2) for x in a], U64)
        if d is not None:
            cta.put(d.id, r, undef_tags(cta, ua, out_w // 8), m)
    return Step(ins, index, "op", run)


# ----------------------------------------------------------------------------- logic (data where bytes stay whole)

@handler("and", "or", "xor")
def _logic(prog: Program, ins: Instr, index: int) -> Step:
    need(prog, ins, 3)
    t = types_of(ins)[-1]
    w = TYPE_BITS[t]
    d = dest(prog, ins, ins.operands[0])
    a_o, b_o = ins.operands[1], ins.operands[2]
    op = ins.base
    if t == "pred":
        def run_p(cta: CTA, m: np.ndarray | None) -> None:
            a, b = cta.pred(a_o), cta.pred(b_o)
            r = (a & b) if op == "and" else (a | b) if op == "or" else (a ^ b)
            if d is not None:
                cta.put(d.id, r, None, m)
        return Step(ins, index, "op", run_p)
    nb = w // 8
    fn = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[op]

    def run(cta: CTA, m: np.ndarray | None) -> None:
        (a, ta), (b, tb) = value(cta, a_o, nb), value(cta, b_o, nb)
        bits = fn(np.asarray(a, U64), np.asarray(b, U64)) & mask_of(w)
        if ta is None and tb is None:
            tags = None
        else:
            tags = _logic_tags(cta, ins, op, a, ta, b, tb, nb, m)
        if d is not None:
            cta.put(d.id, bits, tags, m)
    return Step(ins, index, "op", run)


def _logic_tags(cta: CTA, ins: Instr, op: str, a: Any, ta: np.ndarray | None, b: Any, tb: np.ndarray | None,
                nb: int, m: np.ndarray | None) -> np.ndarray:
    """Tags of ``a op b`` byte by byte: data survives ``and`` with an all-ones byte and ``or``/``xor`` with a zero
    byte; a byte cut through, or combined with data, is an error; undefined stays undefined."""
    T = cta.T
    ab = to_bytes(np.broadcast_to(np.asarray(a, U64), (T,)), nb)
    bb = to_bytes(np.broadcast_to(np.asarray(b, U64), (T,)), nb)
    ta = np.full((T, nb), CONCRETE, np.int64) if ta is None else ta
    tb = np.full((T, nb), CONCRETE, np.int64) if tb is None else tb
    out = np.full((T, nb), CONCRETE, np.int64)
    da, db = ta >= 0, tb >= 0
    bad = da & db
    if op == "and":
        keep_a = da & (tb == CONCRETE) & (bb == 0xFF)
        zero_a = da & (tb == CONCRETE) & (bb == 0)
        keep_b = db & (ta == CONCRETE) & (ab == 0xFF)
        zero_b = db & (ta == CONCRETE) & (ab == 0)
        bad |= (da & ~keep_a & ~zero_a & ~db) | (db & ~keep_b & ~zero_b & ~da)
    else:
        keep_a = da & (tb == CONCRETE) & (bb == 0)
        keep_b = db & (ta == CONCRETE) & (ab == 0)
        bad |= (da & ~keep_a & ~db) | (db & ~keep_b & ~da)
    out = np.where(keep_a, ta, out)
    out = np.where(keep_b, tb, out)
    undef = (ta == -2) | (tb == -2)
    out = np.where(undef & ~keep_a & ~keep_b, -2, out)
    if m is not None:
        bad &= m[:, None]
    if bad.any():
        t = int(np.argmax(bad.any(axis=1)))
        raise cta.prog.error(ins, f"{ins.opcode} combines data bit by bit (thread {t}): the executor follows data "
                                  "only in whole bytes (masks of 0x00/0xff, or with zero bytes)")
    return out


def _shift_amount(cta: CTA, o: Any, m: np.ndarray | None) -> np.ndarray:
    b, _ = cta.int_value(o, 32, False, m, "a shift amount")
    return np.broadcast_to(np.asarray(b, U64), (cta.T,))


@handler("shl", "shr")
def _shift(prog: Program, ins: Instr, index: int) -> Step:
    need(prog, ins, 3)
    t = types_of(ins)[-1]
    w = TYPE_BITS[t]
    nb = w // 8
    signed = t.startswith("s")
    left = ins.base == "shl"
    d = dest(prog, ins, ins.operands[0])
    a_o, b_o = ins.operands[1], ins.operands[2]

    def run(cta: CTA, m: np.ndarray | None) -> None:
        a, ta = value(cta, a_o, nb)
        s = _shift_amount(cta, b_o, m)
        s_cl = np.minimum(s, np.uint64(w))
        a = np.broadcast_to(np.asarray(a, U64), (cta.T,)) & mask_of(w)
        if left:
            bits = np.where(s_cl >= w, np.uint64(0), (a << np.minimum(s_cl, np.uint64(63))) & mask_of(w))
        elif signed:
            x = sext(a, w)
            bits = (x >> np.minimum(s_cl, np.uint64(63)).astype(np.int64)).view(U64) & mask_of(w)
        else:
            bits = np.where(s_cl >= w, np.uint64(0), a >> np.minimum(s_cl, np.uint64(63)))
        tags = None
        if ta is not None:
            tags = _shift_tags(cta, ins, ta, s_cl, w, left, signed, m)
        if d is not None:
            cta.put(d.id, bits, tags, m)
    return Step(ins, index, "op", run)


def _shift_tags(cta: CTA, ins: Instr, ta: np.ndarray, s: np.ndarray, w: int, left: bool, signed: bool,
                m: np.ndarray | None) -> np.ndarray:
    nb = w // 8
    data = (ta >= 0).any(axis=1)
    if m is not None:
        data &= m
    if data.any() and ((s[data] % 8 != 0).any() or (signed and not left)):
        t = int(np.argmax(data & ((s % 8 != 0) | bool(signed and not left))))
        raise cta.prog.error(ins, f"{ins.opcode} shifts data by {int(s[t])} bits (thread {t}): the executor follows "
                                  "data only in whole bytes")
    k = (s // 8).astype(np.int64)
    j = np.arange(nb)[None, :]
    src = j - k[:, None] if left else j + k[:, None]
    ok = (src >= 0) & (src < nb)
    g = np.take_along_axis(ta, np.clip(src, 0, nb - 1), axis=1)
    return np.where(ok, g, CONCRETE)


def _field(cta: CTA, pos_o: Any, len_o: Any, m: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """A bit field's position and length (the low 8 bits of each operand, per thread)."""
    pos = cta.int_value(pos_o, 32, False, m, "a bit position")[0]
    ln = cta.int_value(len_o, 32, False, m, "a bit length")[0]
    return tuple(np.broadcast_to(np.asarray(x, U64), (cta.T,)) & np.uint64(0xFF) for x in (pos, ln))  # type: ignore[return-value]


@handler("bfe")
def _bfe(prog: Program, ins: Instr, index: int) -> Step:
    need(prog, ins, 4)
    t = types_of(ins)[-1]
    w = TYPE_BITS[t]
    nb = w // 8
    signed = t.startswith("s")
    d = dest(prog, ins, ins.operands[0])
    a_o, b_o, c_o = ins.operands[1:]

    def run(cta: CTA, m: np.ndarray | None) -> None:
        a, ta = value(cta, a_o, nb)
        pos, ln = _field(cta, b_o, c_o, m)
        a = np.broadcast_to(np.asarray(a, U64), (cta.T,))
        out = np.zeros(cta.T, U64)
        for k in range(cta.T):  # per-thread exact semantics (bfe is rare)
            x, p, n = int(a[k]), int(pos[k]), int(ln[k])
            field_ = (x >> p) & ((1 << n) - 1) if p < w else 0
            if signed and n > 0:
                msb = (x >> min(p + n - 1, w - 1)) & 1
                if msb:
                    field_ |= ((1 << w) - 1) ^ ((1 << n) - 1) if n < w else 0
            out[k] = field_ & ((1 << w) - 1)
        tags = None
        if ta is not None:
            data = (ta >= 0).any(axis=1) & (True if m is None else m)
            if data.any() and ((pos[data] % 8 != 0).any() or (ln[data] % 8 != 0).any() or signed):
                raise prog.error(ins, f"{ins.opcode} extracts a field of data that is not whole bytes")
            k8 = (pos // 8).astype(np.int64)
            n8 = (ln // 8).astype(np.int64)
            j = np.arange(nb)[None, :]
            src = j + k8[:, None]
            ok = (j < n8[:, None]) & (src < nb)
            tags = np.where(ok, np.take_along_axis(ta, np.clip(src, 0, nb - 1), axis=1), CONCRETE)
        if d is not None:
            cta.put(d.id, out, tags, m)
    return Step(ins, index, "op", run)


@handler("bfi")
def _bfi(prog: Program, ins: Instr, index: int) -> Step:
    need(prog, ins, 5)
    t = types_of(ins)[-1]
    w = TYPE_BITS[t]
    nb = w // 8
    d = dest(prog, ins, ins.operands[0])
    a_o, b_o, c_o, e_o = ins.operands[1:]

    def run(cta: CTA, m: np.ndarray | None) -> None:
        a, ta = value(cta, a_o, nb)
        b, tb = value(cta, b_o, nb)
        pos, ln = _field(cta, c_o, e_o, m)
        a = np.broadcast_to(np.asarray(a, U64), (cta.T,))
        b = np.broadcast_to(np.asarray(b, U64), (cta.T,))
        out = np.zeros(cta.T, U64)
        for k in range(cta.T):
            p, n = int(pos[k]), int(ln[k])
            fmask = (((1 << n) - 1) << p) & ((1 << w) - 1) if p < w else 0
            out[k] = (int(b[k]) & ~fmask | ((int(a[k]) << p) & fmask)) & ((1 << w) - 1)
        tags = None
        if ta is not None or tb is not None:
            ta2 = np.full((cta.T, nb), CONCRETE, np.int64) if ta is None else ta
            tb2 = np.full((cta.T, nb), CONCRETE, np.int64) if tb is None else tb
            if ((pos % 8 != 0) | (ln % 8 != 0)).any():
                raise prog.error(ins, f"{ins.opcode} inserts a field of data that is not whole bytes")
            k8 = (pos // 8).astype(np.int64)[:, None]
            n8 = (ln // 8).astype(np.int64)[:, None]
            j = np.arange(nb)[None, :]
            inside = (j >= k8) & (j < k8 + n8)
            src = np.clip(j - k8, 0, nb - 1)
            tags = np.where(inside, np.take_along_axis(ta2, src, axis=1), tb2)
        if d is not None:
            cta.put(d.id, out, tags, m)
    return Step(ins, index, "op", run)


_PRMT_MODES = {"f4e": lambda s: [(s + i) & 7 for i in range(4)], "b4e": lambda s: [(s - i) & 7 for i in range(4)],
               "rc8": lambda s: [s & 3] * 4, "ecl": lambda s: [max(i, s & 3) if i else s & 3 for i in range(4)],
               "ecr": lambda s: [min(i, s & 3) for i in range(4)],
               "rc16": lambda s: [(s & 1) * 2, (s & 1) * 2 + 1, (s & 1) * 2, (s & 1) * 2 + 1]}


@handler("prmt")
def _prmt(prog: Program, ins: Instr, index: int) -> Step:
    need(prog, ins, 4)
    mode = next((p for p in ins.parts[1:] if p in _PRMT_MODES), None)
    d = dest(prog, ins, ins.operands[0])
    a_o, b_o, c_o = ins.operands[1:]

    def run(cta: CTA, m: np.ndarray | None) -> None:
        a, ta = value(cta, a_o, 4)
        b, tb = value(cta, b_o, 4)
        c = np.broadcast_to(np.asarray(cta.int_value(c_o, 32, False, m, "a byte selector")[0], U64), (cta.T,))
        T = cta.T
        src = np.concatenate([to_bytes(np.broadcast_to(np.asarray(a, U64), (T,)), 4),
                              to_bytes(np.broadcast_to(np.asarray(b, U64), (T,)), 4)], axis=1)
        if mode is None:
            nib = ((c[:, None] >> (np.arange(4, dtype=np.uint64)[None, :] * np.uint64(4))) & np.uint64(0xF)).astype(np.int64)
            sel, sign = nib & 7, (nib & 8) != 0
        else:
            sel = np.array([_PRMT_MODES[mode](int(x) & 7) for x in c], np.int64)
            sign = np.zeros_like(sel, bool)
        picked = np.take_along_axis(src, sel, axis=1)
        out = np.where(sign, np.where(picked & 0x80, 0xFF, 0), picked).astype(np.uint8)
        bits = from_bytes(out)
        tags = None
        if ta is not None or tb is not None:
            tsrc = np.concatenate([np.full((T, 4), CONCRETE, np.int64) if ta is None else ta,
                                   np.full((T, 4), CONCRETE, np.int64) if tb is None else tb], axis=1)
            tags = np.take_along_axis(tsrc, sel, axis=1)
            bad = sign & (tags >= 0)
            if m is not None:
                bad &= m[:, None]
            if bad.any():
                raise prog.error(ins, "prmt replicates the sign bit of data: the executor cannot follow it")
            tags = np.where(sign, np.where(tags == -2, -2, CONCRETE), tags)
        if d is not None:
            cta.put(d.id, bits, tags, m)
    return Step(ins, index, "op", run)


@handler("lop3")
def _lop3(prog: Program, ins: Instr, index: int) -> Step:
    need(prog, ins, 5)
    t = types_of(ins)[-1]
    w = TYPE_BITS[t]
    d = dest(prog, ins, ins.operands[0])
    a_o, b_o, c_o, l_o = ins.operands[1:]
    if not isinstance(l_o, Imm):
        raise prog.error(ins, "lop3: the lookup table must be an immediate")
    lut = l_o.value & 0xFF

    def run(cta: CTA, m: np.ndarray | None) -> None:
        a, ua = cta.int_value(a_o, w, False, m)
        b, ub = cta.int_value(b_o, w, False, m)
        c, uc = cta.int_value(c_o, w, False, m)
        a, b, c = (np.asarray(x, U64) for x in (a, b, c))
        r = np.zeros(np.broadcast(a, b, c).shape, U64)
        for k in range(8):
            if lut >> k & 1:
                ta = a if k & 4 else ~a
                tb = b if k & 2 else ~b
                tc = c if k & 1 else ~c
                r = r | (ta & tb & tc)
        if d is not None:
            cta.put(d.id, r & mask_of(w), undef_tags(cta, merge_undef(ua, ub, uc), w // 8), m)
    return Step(ins, index, "op", run)


@handler("shf")
def _shf(prog: Program, ins: Instr, index: int) -> Step:
    need(prog, ins, 4)
    left = "l" in ins.parts
    clamp = "clamp" in ins.parts
    d = dest(prog, ins, ins.operands[0])
    a_o, b_o, c_o = ins.operands[1:]

    def run(cta: CTA, m: np.ndarray | None) -> None:
        a, ua = cta.int_value(a_o, 32, False, m)
        b, ub = cta.int_value(b_o, 32, False, m)
        c, uc = cta.int_value(c_o, 32, False, m)
        a, b, c = (np.broadcast_to(np.asarray(x, U64), (cta.T,)) for x in (a, b, c))
        n = np.minimum(c, np.uint64(32)) if clamp else c & np.uint64(31)
        both = (b << np.uint64(32)) | a
        r = ((both << n) >> np.uint64(32)) if left else (both >> n)
        if d is not None:
            cta.put(d.id, r & mask_of(32), undef_tags(cta, merge_undef(ua, ub, uc), 4), m)
    return Step(ins, index, "op", run)
