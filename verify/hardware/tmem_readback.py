"""What a ``tmem`` probe's read-back words mean (the probes themselves: ``tmem_kind``): each Tensor Memory cell
or element decoded to the point of the layout it stands for, the violations of a layout's prediction in words
and as data, and the SIMULATED device.

The SIMULATED device (``simulate``) prints what a device whose Tensor Memory follows the layout (or a
``Deviation`` of it) would: the words the decoder reads back as the layout's cells.
"""
from __future__ import annotations

import math
import struct
from typing import Any, Mapping, Sequence

import numpy as np

from . import tmem_cp
from .tmem_kind import Key, TmProbe, _bits, _value
from .tmem_program import SENTINEL


def _f32(w: int) -> float:
    return float(struct.unpack("<f", struct.pack("<I", w & 0xFFFFFFFF))[0])


def _w32(v: float) -> int:
    return int(struct.unpack("<I", struct.pack("<f", v))[0])


def _h16(h: int) -> float:
    return float(struct.unpack("<e", struct.pack("<H", h & 0xFFFF))[0])


# ----------------------------------------------------------------------------- decoding

def _words(p: TmProbe, out: Sequence[int]) -> np.ndarray:
    """The read-back words, shape (experiments, 128 lanes, columns)."""
    e, rn, lanes = p.plan.experiments, p.plan.read[1], 128 * p.plan.ctas
    need = e * lanes * rn
    if len(out) < need:
        raise ValueError(f"{len(out)} output words, the probe writes {need}")
    return np.asarray(out[:need], dtype=np.uint64).reshape(e, lanes, rn)


def decode(p: TmProbe, out: Sequence[int]) -> dict[Key, Any]:
    """Key -> what the device shows there (the layout's point; None: nothing; a string: no code)."""
    w = _words(p, out)
    return _DECODE[p.sub](p, w)


def _dec_datapath(p: TmProbe, w: np.ndarray) -> dict[Key, Any]:
    res: dict[Key, Any] = {}
    for lane in range(w.shape[1]):
        for c in range(w.shape[2]):
            x = int(w[0, lane, c])
            v = _f32(x)
            res[(lane, c)] = (None if x == SENTINEL else (int(v) % 256, int(v) // 256)
                              if v == int(v) and 0 <= v < 65536 else f"{x:#010x}")
    return res


def _dec_pack_d(p: TmProbe, w: np.ndarray) -> dict[Key, Any]:
    res: dict[Key, Any] = {}
    for lane in range(128):
        for c in range(w.shape[2]):
            h = [int(w[e, lane, c]) & 0xFFFF for e in range(2)]
            vals = [_h16(x) for x in h]
            if 0xFFFF in h:
                res[(lane, c)] = None
            elif all(v == int(v) and 0 <= v < 2048 for v in vals):
                res[(lane, c)] = (int(vals[0]), int(vals[1]))
            else:
                res[(lane, c)] = f"{h[0]:#06x}/{h[1]:#06x}"
    return res


def _dec_st(p: TmProbe, w: np.ndarray) -> dict[Key, Any]:
    k = p.meta["k"]
    res: dict[Key, Any] = {}
    for lane in range(128):
        for c in range(w.shape[2]):
            h = int(w[0, lane, c]) & 0xFFFF
            res[(lane, c)] = None if h == 0xFFFF else (divmod(h, k) if h < 128 * k else f"{h:#06x}")
    return res


def _dec_tmem_a(p: TmProbe, w: np.ndarray) -> dict[Key, Any]:
    mt = p.meta
    table = {_value(mt["fmt"], c)[1]: c for c in range(1 << mt["cbits"])}
    n, acols, slots = mt["n"], mt["acols"], mt["slots"]
    vals = w.astype(np.uint32).view(np.float32)
    res: dict[Key, Any] = {}
    for m in range(128):
        for k in range(mt["steps"] * n):
            idx, bad = 0, False
            for r in range(mt["runs"]):
                code = table.get(float(vals[r, m, k]))
                if code is None:
                    bad = True
                    break
                idx |= code << (mt["cbits"] * r)
            if bad or idx >= 128 * acols * slots:
                res[(m, k)] = f"{int(w[0, m, k]):#010x}"
            else:
                q, s = divmod(idx, slots)
                res[(m, k)] = (*divmod(q, acols), s)
    return res


def _dec_sf(p: TmProbe, w: np.ndarray) -> dict[Key, Any]:
    bs, blocks = p.meta["bs"], p.meta["blocks"]
    vals = w.astype(np.uint32).view(np.float32)
    res: dict[Key, Any] = {}
    for m in range(128):
        for kb in range(blocks):
            got: list[int | None] = []
            for c in range(2):
                row = vals[c * blocks + kb, m]
                v = float(row[0]) / bs
                if not np.all(row == row[0]) or v <= 0 or not math.isfinite(v) or 2.0 ** round(math.log2(v)) != v:
                    got.append(None)
                else:
                    got.append(round(math.log2(v)) + 127)
            g0, g1 = got  # coding 0 and coding 1
            if g0 is None or g1 is None:
                res[(m, kb)] = f"D = {float(vals[0, m, 0])} / {float(vals[blocks, m, 0])}: no scale byte's code"
                continue
            lane, cb = g0 - 64, g1 - 127
            res[(m, kb)] = ((lane, cb // 4, cb % 4) if 0 <= lane < 128 and 0 <= cb < 16
                            else f"scale codes {g0:#04x}/{g1:#04x}")
    return res


def _dec_cp(p: TmProbe, w: np.ndarray) -> dict[Key, Any]:
    return tmem_cp.decode(w, p.meta["span"])


_DECODE = {"datapath": _dec_datapath, "pack_d": _dec_pack_d, "st": _dec_st, "tmem_a": _dec_tmem_a, "sf": _dec_sf,
           "cp": _dec_cp}


# ----------------------------------------------------------------------------- the SIMULATED device

def simulate(p: TmProbe, src: Any = None) -> list[int]:
    """What a SIMULATED device whose Tensor Memory follows the main tested layout prints (``src(a, b)``: whose
    key (a, b) holds on a deviating device, ``Deviation.source``)."""
    pred = dict(p.predicted)
    if src is not None:
        pred = {key: p.predicted.get(src(*key)) for key in pred}
    e, rn = p.plan.experiments, p.plan.read[1]
    w = np.full((e, 128 * p.plan.ctas, rn), SENTINEL, dtype=np.uint64)
    _ENCODE[p.sub](p, pred, w)
    return [int(x) for x in w.reshape(-1)] + [0] * 8192


def _enc_datapath(p: TmProbe, pred: Mapping[Key, Any], w: np.ndarray) -> None:
    for (lane, c), pt in pred.items():
        if pt is not None:
            w[0, lane, c] = _w32(float(pt[0] + 256 * pt[1]))


def _enc_pack_d(p: TmProbe, pred: Mapping[Key, Any], w: np.ndarray) -> None:
    for (lane, c), pt in pred.items():
        if pt is not None:
            for e in range(2):
                w[e, lane, c] = _bits(float(pt[e]), "f16")


def _enc_st(p: TmProbe, pred: Mapping[Key, Any], w: np.ndarray) -> None:
    for (lane, c), pt in pred.items():
        if pt is not None:
            w[0, lane, c] = pt[0] * p.meta["k"] + pt[1]


def _enc_tmem_a(p: TmProbe, pred: Mapping[Key, Any], w: np.ndarray) -> None:
    mt = p.meta
    for (m, k), cell in pred.items():
        if cell is None:
            continue
        idx = (cell[0] * mt["acols"] + cell[1]) * mt["slots"] + cell[2]
        for r in range(mt["runs"]):
            w[r, m, k] = _w32(_value(mt["fmt"], (idx >> (mt["cbits"] * r)) & ((1 << mt["cbits"]) - 1))[1])


def _enc_sf(p: TmProbe, pred: Mapping[Key, Any], w: np.ndarray) -> None:
    bs, blocks = p.meta["bs"], p.meta["blocks"]
    for (m, kb), cell in pred.items():
        if cell is None:
            continue
        for c, b in enumerate((64 + cell[0], 127 + 4 * cell[1] + cell[2])):
            w[c * blocks + kb, m, :] = _w32(bs * 2.0 ** (b - 127))


def _enc_cp(p: TmProbe, pred: Mapping[Key, Any], w: np.ndarray) -> None:
    tmem_cp.encode(pred, w)


_ENCODE = {"datapath": _enc_datapath, "pack_d": _enc_pack_d, "st": _enc_st, "tmem_a": _enc_tmem_a, "sf": _enc_sf,
           "cp": _enc_cp}


# ----------------------------------------------------------------------------- judging

def violations(p: TmProbe, lid: str, got: Mapping[Key, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Every key where the device differs from layout ``lid``'s prediction, in words and as data."""
    want = dict(p.predictions)[lid]
    inverse = p.sub in ("datapath", "pack_d", "st", "cp")
    found = []
    for key in sorted(want):
        have = got.get(key)
        if have != want[key]:
            if inverse:
                where = f"TMEM lane {key[0]}, {'byte' if p.sub == 'cp' else 'column'} {key[1]}"
                say = f"{where}: the device holds {_say(have)}, the layout puts {_say(want[key])} there"
            else:
                say = f"element {key}: the device read TMEM cell {_say(have)}, the layout says {_say(want[key])}"
            found.append((say, {"key": list(key), "observed": _js(have), "expected": _js(want[key])}))
    return found


def remark(p: TmProbe, got: Mapping[Key, Any]) -> str:
    """Where ``p`` compares with another placement: whether the device's cells are that placement's (a clause
    for the result's message; empty for every other probe)."""
    if "alt" not in p.meta:
        return ""
    other, what, cells = p.meta["alt"]
    off = [key for key in sorted(cells) if got.get(key) != cells[key]]
    if not off:
        return f"; every cell read back is where {other} ({what}) puts it: the device follows {other}"
    key = off[0]
    return (f"; it is not {other}'s placement ({what}): {len(off)} cells differ from it, first TMEM lane {key[0]}, "
            f"{'byte' if p.sub == 'cp' else 'column'} {key[1]}: the device holds {_say(got.get(key))}, {other} puts {_say(cells[key])} there")


def _say(v: Any) -> str:
    return "nothing" if v is None else str(v)


def _js(v: Any) -> Any:
    return list(v) if isinstance(v, tuple) else v


def decoded(p: TmProbe, out: Sequence[int]) -> list[list[Any]]:
    return [[*key, _js(v)] for key, v in sorted(decode(p, out).items())]


__all__ = ["decode", "decoded", "remark", "simulate", "violations"]
