"""Floats (concrete) and conversions: IEEE ``add``/``sub``/``mul``/``fma``/``mad``/``neg``/``abs``/``min``/``max``
on concrete values; on data only the exact identities (``mul`` by 1, ``add`` of 0, ``fma`` with a 0 factor).
``cvt`` is the identity on the atoms (this verifies layouts, not rounding)."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..ptx.syntax import TYPE_BITS, Instr
from .bytes import CONCRETE, U64, mask_of, sext
from .machine import CTA, Program, Step
from .ops_base import FLOAT_TYPES, dest, handler, merge_undef, need, types_of, undef_tags, value


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


__all__ = ["as_float", "float_op", "from_float"]
