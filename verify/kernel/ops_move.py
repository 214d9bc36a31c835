"""Comparison, selection and moves: ``setp``, ``selp``, ``mov`` (also packing and unpacking ``{a, b}``), ``cvta``
and ``createpolicy``.  Data passes through ``mov`` and ``selp`` unchanged."""
from __future__ import annotations

import numpy as np

from ..ptx.syntax import TYPE_BITS, Instr, PredPair, Vec
from .bytes import CONCRETE, U64, mask_of
from .machine import CTA, Program, Step
from .ops_base import FLOAT_TYPES, dest, handler, merge_undef, need, types_of, undef_tags, value
from .ops_float import as_float

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
