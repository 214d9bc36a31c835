"""Integer, logic, comparison, selection, move and conversion instructions.

Integers are exact bit-vectors of the instruction type's width (results wrap; signed types are two's complement).
Data (tags >= 0) may pass through ``mov`` (also packing and unpacking ``{a, b}``), ``selp``, ``prmt``, ``cvt``
(conversions are the identity on the atoms: this verifies layouts, not rounding), byte-aligned ``shl``/``shr``/
``and``/``or``/``xor``/``bfe``/``bfi``, and the float operations that are exact identities with a concrete operand
(``mul`` by 1, ``add`` of 0, ``fma`` with a 0 factor); any other use of data is an error at the instruction.  Every
handler computes the bits by the integer semantics and routes the byte tags, so each engine's data goes its own way.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..ptx.syntax import TYPE_BITS, Imm, Instr, PredPair, Reg, Sink, Vec
from .bytes import CONCRETE, U64, from_bytes, mask_of, sext, to_bytes
from .machine import CTA, Program, Step

Handler = Callable[[Program, Instr, int], Step]
HANDLERS: dict[str, Handler] = {}
INT_TYPES = {"b8", "u8", "s8", "b16", "u16", "s16", "b32", "u32", "s32", "b64", "u64", "s64", "pred"}
FLOAT_TYPES = {"f16", "bf16", "f32", "f64", "tf32", "f16x2", "bf16x2", "e4m3", "e5m2"}


def handler(*names: str) -> Callable[[Handler], Handler]:
    def add(fn: Handler) -> Handler:
        for n in names:
            HANDLERS[n] = fn
        return fn
    return add


def types_of(ins: Instr) -> list[str]:
    return [p for p in ins.parts[1:] if p in TYPE_BITS]


def mods_of(ins: Instr) -> set[str]:
    return {p for p in ins.parts[1:] if p not in TYPE_BITS}


def need(prog: Program, ins: Instr, n: int) -> None:
    if len(ins.operands) != n:
        raise prog.error(ins, f"{ins.opcode} takes {n} operands, found {len(ins.operands)}")


def dest(prog: Program, ins: Instr, o: Any) -> Reg | None:
    if isinstance(o, Sink):
        return None
    if not isinstance(o, Reg):
        raise prog.error(o, f"{ins.opcode}: the destination must be a register")
    return o


def undef_tags(cta: CTA, undef: np.ndarray | None, nbytes: int) -> np.ndarray | None:
    """Tags of a result undefined for the threads of ``undef``."""
    if undef is None:
        return None
    t = np.full((cta.T, nbytes), CONCRETE, np.int64)
    t[undef] = -2
    return t


def merge_undef(*us: np.ndarray | None) -> np.ndarray | None:
    out = None
    for u in us:
        if u is not None:
            out = u if out is None else (out | u)
    return out


def value(cta: CTA, o: Any, nbytes: int) -> tuple[Any, np.ndarray | None]:
    """An operand for an instruction that lets data through: (bits, tags) of ``nbytes`` bytes (no data check)."""
    if isinstance(o, Reg):
        b, g = cta.get(o.id)
        rw = cta.prog.widths[o.id]
        if rw == 1:
            return b.astype(U64), None
        rb = rw // 8
        if rb > nbytes:
            b = b & mask_of(8 * nbytes)
            g = None if g is None else g[:, :nbytes]
        elif rb < nbytes and g is not None:
            g = np.concatenate([g, np.full((cta.T, nbytes - rb), CONCRETE, np.int64)], axis=1)
        return b, g
    v, _ = cta.int_value(o, 8 * nbytes, False, None)
    return v, None


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


# ----------------------------------------------------------------------------- comparison and selection

_CMP = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
        "ge": np.greater_equal, "lo": np.less, "ls": np.less_equal, "hi": np.greater, "hs": np.greater_equal}
_FCMP = {"equ": "eq", "neu": "ne", "ltu": "lt", "leu": "le", "gtu": "gt", "geu": "ge"}


@handler("setp")
def _setp(prog: Program, ins: Instr, index: int) -> Step:
    parts = ins.parts
    cmp = next((p for p in parts[1:] if p in _CMP or p in _FCMP or p in ("num", "nan")), None)
    boolop = next((p for p in parts[1:] if p in ("and", "or", "xor")), None)
    t = types_of(ins)[-1]
    if cmp is None:
        raise prog.error(ins, f"{ins.opcode}: no comparison")
    ops = ins.operands
    if len(ops) != (4 if boolop else 3):
        raise prog.error(ins, f"{ins.opcode} takes {4 if boolop else 3} operands")
    dst = ops[0]
    if isinstance(dst, PredPair):
        p_d, q_d = dest(prog, ins, dst.first), dest(prog, ins, dst.second)
    else:
        p_d, q_d = dest(prog, ins, dst), None
    w = TYPE_BITS[t]
    is_float = t in FLOAT_TYPES
    signed = t.startswith("s")

    def run(cta: CTA, m: np.ndarray | None) -> None:
        a, ua = cta.int_value(ops[1], w, signed, m, "a value to compare")
        b, ub = cta.int_value(ops[2], w, signed, m, "a value to compare")
        if merge_undef(ua, ub) is not None:
            raise prog.error(ins, f"{ins.opcode} compares an undefined value")
        if is_float:
            x, y = as_float(np.broadcast_to(np.asarray(a, U64), (cta.T,)), t), as_float(np.broadcast_to(np.asarray(b, U64), (cta.T,)), t)
            nan = np.isnan(x) | np.isnan(y)
            if cmp == "num":
                r = ~nan
            elif cmp == "nan":
                r = nan
            else:
                base = _FCMP.get(cmp, cmp)
                with np.errstate(invalid="ignore"):
                    r = _CMP[base](x, y)
                r = (r | nan) if cmp in _FCMP else (r & ~nan) if cmp != "ne" else (r & ~nan)
        elif signed:
            r = _CMP[cmp](np.asarray(a, U64).view(np.int64), np.asarray(b, U64).view(np.int64))
        else:
            r = _CMP[cmp](np.asarray(a, U64), np.asarray(b, U64))
        r = np.broadcast_to(r, (cta.T,))
        q = ~r
        if boolop:
            c = cta.pred(ops[3])
            f = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}[boolop]
            r, q = f(r, c), f(q, c)
        if p_d is not None:
            cta.put(p_d.id, r, None, m)
        if q_d is not None:
            cta.put(q_d.id, q, None, m)
    return Step(ins, index, "op", run)


@handler("selp")
def _selp(prog: Program, ins: Instr, index: int) -> Step:
    need(prog, ins, 4)
    t = types_of(ins)[-1]
    nb = TYPE_BITS[t] // 8
    d = dest(prog, ins, ins.operands[0])
    a_o, b_o, c_o = ins.operands[1:]

    def run(cta: CTA, m: np.ndarray | None) -> None:
        a, ta = value(cta, a_o, nb)
        b, tb = value(cta, b_o, nb)
        c = cta.pred(c_o)
        bits = np.where(c, np.asarray(a, U64), np.asarray(b, U64))
        tags = None
        if ta is not None or tb is not None:
            T = cta.T
            tags = np.where(c[:, None], np.full((T, nb), CONCRETE, np.int64) if ta is None else ta,
                            np.full((T, nb), CONCRETE, np.int64) if tb is None else tb)
        if d is not None:
            cta.put(d.id, bits, tags, m)
    return Step(ins, index, "op", run)


# ----------------------------------------------------------------------------- moves

@handler("mov")
def _mov(prog: Program, ins: Instr, index: int) -> Step:
    need(prog, ins, 2)
    t = types_of(ins)[-1]
    w = TYPE_BITS[t]
    nb = max(1, w // 8)
    dst, src = ins.operands
    if isinstance(dst, Vec):  # unpack
        items = [dest(prog, ins, x) for x in dst.items]
        part = nb // len(items)
        if part * len(items) != nb:
            raise prog.error(ins, f"{ins.opcode}: {len(items)} destinations do not split {w} bits")

        def run_unpack(cta: CTA, m: np.ndarray | None) -> None:
            bits, tags = value(cta, src, nb)
            bits = np.broadcast_to(np.asarray(bits, U64), (cta.T,))
            for k, r in enumerate(items):
                if r is None:
                    continue
                pb = (bits >> np.uint64(8 * part * k)) & mask_of(8 * part)
                cta.put(r.id, pb, None if tags is None else tags[:, part * k:part * (k + 1)], m)
        return Step(ins, index, "op", run_unpack)
    d = dest(prog, ins, dst)
    if isinstance(src, Vec):  # pack
        n = len(src.items)
        part = nb // n

        def run_pack(cta: CTA, m: np.ndarray | None) -> None:
            bits = np.zeros(cta.T, U64)
            tl: list[np.ndarray] = []
            any_tags = False
            for k, o in enumerate(src.items):
                b, g = value(cta, o, part)
                bits |= (np.asarray(b, U64) & mask_of(8 * part)) << np.uint64(8 * part * k)
                if g is not None:
                    any_tags = True
                tl.append(np.full((cta.T, part), CONCRETE, np.int64) if g is None else g)
            if d is not None:
                cta.put(d.id, bits, np.concatenate(tl, axis=1) if any_tags else None, m)
        return Step(ins, index, "op", run_pack)
    if t == "pred":
        def run_p(cta: CTA, m: np.ndarray | None) -> None:
            if d is not None:
                cta.put(d.id, cta.pred(src), None, m)
        return Step(ins, index, "op", run_p)

    def run(cta: CTA, m: np.ndarray | None) -> None:
        bits, tags = value(cta, src, nb)
        if d is not None:
            cta.put(d.id, bits, tags, m)
    return Step(ins, index, "op", run)


@handler("cvta")
def _cvta(prog: Program, ins: Instr, index: int) -> Step:
    from .memory import LOCAL_WINDOW, PARAM_WINDOW, SHARED_WINDOW
    need(prog, ins, 2)
    to = "to" in ins.parts
    space = next((p for p in ins.parts[1:] if p in ("global", "shared", "local", "const", "param")), "global")
    if space == "const" or space == "param" and to:
        raise prog.error(ins, f"unsupported instruction '{ins.opcode}' (.{space} addresses)")
    t = types_of(ins)[-1]
    w = TYPE_BITS[t]
    d = dest(prog, ins, ins.operands[0])
    a_o = ins.operands[1]
    window = {"param": PARAM_WINDOW, "local": LOCAL_WINDOW}.get(space, SHARED_WINDOW)
    shift = 0 if space == "global" else (-window if to else window)

    def run(cta: CTA, m: np.ndarray | None) -> None:
        a, ua = cta.int_value(a_o, w, False, m, "an address")
        r = (np.asarray(a, U64) + np.uint64(shift % (1 << 64))) & mask_of(w)
        if d is not None:
            cta.put(d.id, r, undef_tags(cta, ua, w // 8), m)
    return Step(ins, index, "op", run)


@handler("createpolicy")
def _createpolicy(prog: Program, ins: Instr, index: int) -> Step:
    d = dest(prog, ins, ins.operands[0])

    def run(cta: CTA, m: np.ndarray | None) -> None:  # a cache policy: an opaque 64-bit value, read only as a hint
        if d is not None:
            cta.put(d.id, np.uint64(0), None, m)
    return Step(ins, index, "op", run)


# ----------------------------------------------------------------------------- floats (concrete) and conversions

def as_float(bits: np.ndarray, t: str) -> np.ndarray:
    """Bits as floats (float64 holds every f16, bf16 and f32 exactly); data bytes' bits may be anything (their
    result is replaced by the domain's), so no floating-point warning is raised."""
    with np.errstate(all="ignore"):
        return _as_float(bits, t)


def _as_float(bits: np.ndarray, t: str) -> np.ndarray:
    if t == "f16":
        return (bits & np.uint64(0xFFFF)).astype(np.uint16).view(np.float16).astype(np.float64)
    if t == "bf16":
        return ((bits & np.uint64(0xFFFF)).astype(np.uint32) << np.uint32(16)).view(np.float32).astype(np.float64)
    if t in ("f32", "tf32"):
        return (bits & np.uint64(0xFFFFFFFF)).astype(np.uint32).view(np.float32).astype(np.float64)
    if t == "f64":
        return bits.view(np.float64)
    raise ValueError(t)


def from_float(x: np.ndarray, t: str) -> np.ndarray:
    with np.errstate(all="ignore"):
        if t == "f16":
            return x.astype(np.float16).view(np.uint16).astype(U64)
        if t == "bf16":  # round to nearest even on the top 16 bits of the f32
            u = x.astype(np.float32).view(np.uint32).astype(np.uint64)
            r = (u + np.uint64(0x7FFF) + ((u >> np.uint64(16)) & np.uint64(1))) >> np.uint64(16)
            return r & np.uint64(0xFFFF)
        if t in ("f32", "tf32"):
            return x.astype(np.float32).view(np.uint32).astype(U64)
        return x.astype(np.float64).view(U64)


_ONE = {"f16": 0x3C00, "bf16": 0x3F80, "f32": 0x3F800000, "f64": 0x3FF0000000000000}


def float_op(prog: Program, ins: Instr, index: int, t: str) -> Step:
    """A floating-point ``add``/``sub``/``mul``/``fma``/``mad``/``neg``/``abs``/``min``/``max``: IEEE on concrete
    values (``_float_result``); on data only where it is an identity (``x * 1``, ``x + 0``, ``0 * y + x``)."""
    op = ins.base
    if op not in ("add", "sub", "mul", "fma", "mad", "neg", "abs", "min", "max"):
        raise prog.error(ins, f"unsupported instruction '{ins.opcode}'")
    if t in ("f16x2", "bf16x2"):
        raise prog.error(ins, f"unsupported instruction '{ins.opcode}' (packed float arithmetic)")
    if "approx" in ins.parts or "ftz" in ins.parts and op not in ("add", "sub", "mul", "fma", "mad", "neg", "abs"):
        raise prog.error(ins, f"unsupported instruction '{ins.opcode}'")
    w = TYPE_BITS[t]
    nb = w // 8
    d = dest(prog, ins, ins.operands[0])
    srcs = ins.operands[1:]
    one = _ONE.get(t, -1)

    def run(cta: CTA, m: np.ndarray | None) -> None:
        vals = [value(cta, o, nb) for o in srcs]
        T = cta.T
        bits = [np.broadcast_to(np.asarray(b, U64), (T,)) for b, _ in vals]
        tags = [g for _, g in vals]
        if any(g is not None and (g >= 0).any() for g in tags):
            r = _float_identity(cta, ins, op, bits, tags, one, nb, m)
            if d is not None:
                cta.put(d.id, r[0], r[1], m)
            return
        x = [as_float(b, t) for b in bits]
        with np.errstate(all="ignore"):
            y = _float_result(op, x)
        und = merge_undef(*[None if g is None else (g == -2).any(axis=1) for g in tags])
        if d is not None:
            cta.put(d.id, from_float(y, t), undef_tags(cta, und, nb), m)
    return Step(ins, index, "op", run)


def _float_result(op: str, x: list[np.ndarray]) -> np.ndarray:
    """``op`` on concrete floats held exactly in float64 (every f16, bf16 and f32 is), rounded to the type by the
    caller; an ``fma`` of f32 values is exact before that rounding only up to float64's (a double rounding is
    possible: concrete floats here are parameters such as alpha and beta, never the data verified)."""
    if op == "add":
        return x[0] + x[1]
    if op == "sub":
        return x[0] - x[1]
    if op == "mul":
        return x[0] * x[1]
    if op in ("fma", "mad"):
        return x[0] * x[1] + x[2]
    if op == "neg":
        return -x[0]
    if op == "abs":
        return np.abs(x[0])
    if op == "min":
        return np.fmin(x[0], x[1])
    assert op == "max", op
    return np.fmax(x[0], x[1])


def _float_identity(cta: CTA, ins: Instr, op: str, bits: list[np.ndarray], tags: list[np.ndarray | None], one: int,
                    nb: int, m: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    T = cta.T
    conc = [np.ones(T, bool) if g is None else (g == CONCRETE).all(axis=1) for g in tags]
    zero = [c & ((b & np.uint64((1 << (8 * nb - 1)) - 1)) == 0) for c, b in zip(conc, bits)]
    ones = [c & (b == np.uint64(one)) for c, b in zip(conc, bits)]
    full = [np.full((T, nb), CONCRETE, np.int64) if g is None else g for g in tags]
    out_b = np.zeros(T, U64)
    out_t = np.full((T, nb), CONCRETE, np.int64)
    done = np.zeros(T, bool)

    def take(mask: np.ndarray, k: int) -> None:
        nonlocal out_b, out_t
        sel = mask & ~done
        out_b = np.where(sel, bits[k], out_b)
        out_t = np.where(sel[:, None], full[k], out_t)
        done[:] |= sel

    if op == "mul":
        take(ones[1], 0)
        take(ones[0], 1)
    elif op == "add":
        take(zero[1], 0)
        take(zero[0], 1)
    elif op == "sub":
        take(zero[1], 0)
    elif op in ("fma", "mad"):
        take(zero[0] | zero[1], 2)
        take(ones[1] & zero[2], 0)
        take(ones[0] & zero[2], 1)
    data = np.zeros(T, bool)
    for g in tags:
        if g is not None:
            data |= (g >= 0).any(axis=1)
    t0, t1 = (tags[0], tags[1]) if len(tags) == 2 else (None, None)
    if op == "add" and t0 is not None and t1 is not None:
        both = (t0 >= 0).all(axis=1) & (t1 >= 0).all(axis=1) & ~done
        if m is not None:
            both &= m
        if both.any():  # two sums added (an accumulator and a k-block's partial sum): exact in both engines
            sel = np.flatnonzero(both)
            got = cta.prog.domain.add([bits[0][sel], bits[1][sel]], [full[0][sel], full[1][sel]], nb)
            if got is not None:
                out_b[sel] = got[0]
                out_t[sel] = got[1]
                done[sel] = True
    bad = data & ~done
    if m is not None:
        bad &= m
    if bad.any():
        t = int(np.argmax(bad))
        raise cta.prog.error(ins, f"{ins.opcode} computes with data (thread {t}) and is not an identity there (x * 1, "
                                  "x + 0, 0 * y + x): the executor verifies data movement and tensor-core sums only")
    return out_b, out_t


@handler("cvt")
def _cvt(prog: Program, ins: Instr, index: int) -> Step:
    ts = types_of(ins)
    if len(ts) != 2:
        raise prog.error(ins, f"{ins.opcode}: expected a destination and a source type")
    dt, st = ts
    pack = dt in ("f16x2", "bf16x2", "e4m3x2", "e5m2x2")
    if pack:
        need(prog, ins, 3)
    else:
        need(prog, ins, 2)
    d = dest(prog, ins, ins.operands[0])
    srcs = ins.operands[1:]
    sw = TYPE_BITS[st]
    if "sat" in ins.parts and (dt not in FLOAT_TYPES or st not in FLOAT_TYPES):
        raise prog.error(ins, f"unsupported instruction '{ins.opcode}' (saturating integer conversion)")
    half = {"f16x2": "f16", "bf16x2": "bf16"}.get(dt, dt)

    def convert(cta: CTA, o: Any, to: str, m: np.ndarray | None) -> tuple[np.ndarray, np.ndarray | None]:
        b, g = value(cta, o, max(1, sw // 8))
        b = np.broadcast_to(np.asarray(b, U64), (cta.T,))
        tw = TYPE_BITS[to]
        und = None if g is None else (g == -2).any(axis=1)
        if st in FLOAT_TYPES or to in FLOAT_TYPES:
            if st in FLOAT_TYPES and to in FLOAT_TYPES:
                r = from_float(as_float(b, st), to)
            elif st in FLOAT_TYPES:
                x = as_float(b, st)
                if "rzi" in ins.parts or not ({"rni", "rmi", "rpi"} & set(ins.parts)):
                    x = np.trunc(x)
                elif "rni" in ins.parts:
                    x = np.round(x)
                elif "rmi" in ins.parts:
                    x = np.floor(x)
                else:
                    x = np.ceil(x)
                with np.errstate(invalid="ignore"):
                    r = np.nan_to_num(x).astype(np.int64).view(U64) & mask_of(tw)
            else:
                x = sext(b, sw).astype(np.float64) if st.startswith("s") else (b & mask_of(sw)).astype(np.float64)
                r = from_float(x, to)
        else:
            r = (sext(b, sw).view(U64) if st.startswith("s") else b & mask_of(sw)) & mask_of(tw)
        t = undef_tags(cta, und if und is not None and und.any() else None, max(1, tw // 8))
        if g is not None and (g >= 0).any():
            data = np.any(g >= 0, axis=1)
            db, dtg = cta.prog.domain.convert(cta, b, g, st, to, m)
            r = np.where(data, db, r)
            base = np.full((cta.T, max(1, tw // 8)), CONCRETE, np.int64) if t is None else t
            t = np.where(data[:, None], dtg, base)
        return r, t

    def run(cta: CTA, m: np.ndarray | None) -> None:
        if pack:  # d = {lo: cvt(b), hi: cvt(a)}
            hb, ht = convert(cta, srcs[0], half, m)
            lb, lt = convert(cta, srcs[1], half, m)
            hw = TYPE_BITS[half]
            bits = (lb & mask_of(hw)) | ((hb & mask_of(hw)) << np.uint64(hw))
            tags = None
            if ht is not None or lt is not None:
                n = hw // 8
                tags = np.concatenate([np.full((cta.T, n), CONCRETE, np.int64) if lt is None else lt,
                                       np.full((cta.T, n), CONCRETE, np.int64) if ht is None else ht], axis=1)
        else:
            bits, tags = convert(cta, srcs[0], dt, m)
        if d is not None:
            cta.put(d.id, bits, tags, m)
    return Step(ins, index, "op", run)




@handler("fma")
def _fma(prog: Program, ins: Instr, index: int) -> Step:
    t = types_of(ins)[-1]
    if t not in FLOAT_TYPES:
        raise prog.error(ins, f"{ins.opcode}: fma is a floating-point instruction")
    need(prog, ins, 4)
    return float_op(prog, ins, index, t)


__all__ = ["HANDLERS", "as_float", "dest", "from_float", "handler", "mods_of", "need", "types_of", "value"]
