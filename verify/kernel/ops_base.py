"""The handler registry (``HANDLERS``: base opcode -> handler) and what every handler reads its instruction and
operands with: types and modifiers, destinations, undefined results, an operand's (bits, tags)."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..ptx.syntax import TYPE_BITS, Instr, Reg, Sink
from .bytes import CONCRETE, U64, mask_of, to_bytes
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


def source_bytes(cta: CTA, operands: Any, nbytes: int, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The (tags, bytes) a store or an atomic takes from its source operands (a vector's items side by side,
    ``nbytes`` each) for the threads ``rows``: a register's bytes and tags, a constant's bytes tagged concrete."""
    tl, bl = [], []
    for o in operands:
        b, g = value(cta, o, nbytes)
        b = np.broadcast_to(np.asarray(b, U64), (cta.T,))
        bl.append(to_bytes(b[rows], nbytes))
        tl.append(np.full((len(rows), nbytes), CONCRETE, np.int64) if g is None else g[rows])
    return np.concatenate(tl, axis=1), np.concatenate(bl, axis=1)


__all__ = ["FLOAT_TYPES", "HANDLERS", "INT_TYPES", "Handler", "dest", "handler", "merge_undef", "mods_of", "need", "types_of",
           "undef_tags", "value"]
