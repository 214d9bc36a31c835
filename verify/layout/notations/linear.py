"""Linear layouts over GF(2), as Triton builds them: the few operations its lowering rules use.

A ``Linear`` maps named input dimensions (``register``, ``lane``, ``warp``, ``block``) to named output
dimensions (``dim0``, ``dim1``, ...): each input bit has a basis vector (one value per output), and a point's
output is the XOR of the bases of its set bits.  Sizes are powers of two (``log2`` below).  The operations
are Triton's (``LinearLayout.cpp``), with the same conventions, so that a TTGIR attribute lowered by
``verify.layout.notations.ttgir`` gives the bases Triton's ``toLinearLayout`` gives:

* ``identity1d(size, in, out)``: in bit k -> ``2^k`` along ``out``; ``zeros1d``: every basis zero (a broadcast);
* ``a * b`` (``product``): ``b`` is the more major: its bases follow ``a``'s for a shared input, shifted by
  ``a``'s output size for a shared output; output dimensions keep the order of first appearance (``a``'s,
  then ``b``'s new ones);
* ``transpose_outs``: the outputs in another order (the map is unchanged);
* ``not_smaller(shape)``: each output too small grows by register bases (outputs in their order);
* ``not_larger(shape)``: each output too large loses its largest bases first (set to zero: a broadcast).

Pure data and pure functions; nothing here is a layout of the model (``ttgir`` turns bases into one).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Linear:
    """Bases per input dimension (in order) over outputs ``outs`` = ((name, log2 size), ...)."""

    ins: tuple[tuple[str, tuple[tuple[int, ...], ...]], ...]
    outs: tuple[tuple[str, int], ...]

    @staticmethod
    def empty() -> "Linear":
        return Linear((), ())

    def out_names(self) -> tuple[str, ...]:
        return tuple(n for n, _ in self.outs)

    def out_log2(self, name: str) -> int:
        return dict(self.outs).get(name, 0)

    def in_bases(self, name: str) -> tuple[tuple[int, ...], ...]:
        return dict(self.ins).get(name, ())

    def basis(self, in_name: str, k: int, out_name: str) -> int:
        names = self.out_names()
        return self.in_bases(in_name)[k][names.index(out_name)] if out_name in names else 0

    def __mul__(self, outer: "Linear") -> "Linear":
        inner = self
        out_order = list(inner.out_names()) + [n for n in outer.out_names() if n not in inner.out_names()]
        out_log2 = {n: inner.out_log2(n) + outer.out_log2(n) for n in out_order}
        in_order = [n for n, _ in inner.ins] + [n for n, _ in outer.ins if n not in dict(inner.ins)]
        ins = []
        for name in in_order:
            a, b = inner.in_bases(name), outer.in_bases(name)
            bases = []
            for k in range(len(a)):
                bases.append(tuple(inner.basis(name, k, o) for o in out_order))
            for k in range(len(b)):
                bases.append(tuple(outer.basis(name, k, o) << inner.out_log2(o) for o in out_order))
            ins.append((name, tuple(bases)))
        return Linear(tuple(ins), tuple((n, out_log2[n]) for n in out_order))

    def transpose_outs(self, order: tuple[str, ...] | list[str]) -> "Linear":
        order = tuple(order)
        if sorted(order) != sorted(self.out_names()):
            raise ValueError(f"transpose_outs: {order} is not a permutation of {self.out_names()}")
        idx = [self.out_names().index(n) for n in order]
        ins = tuple((n, tuple(tuple(b[j] for j in idx) for b in bs)) for n, bs in self.ins)
        return Linear(ins, tuple((n, self.out_log2(n)) for n in order))

    def with_in(self, name: str, bases: tuple[tuple[int, ...], ...]) -> "Linear":
        ins = [(n, bases if n == name else bs) for n, bs in self.ins]
        if name not in dict(self.ins):
            ins.append((name, bases))
        return Linear(tuple(ins), self.outs)

    def size(self, out: str) -> int:
        return 1 << self.out_log2(out)


def identity1d(size: int, in_name: str, out_name: str) -> Linear:
    """In bit k -> ``2^k`` along ``out_name`` (``size`` a power of two)."""
    n = _log2(size)
    return Linear(((in_name, tuple((1 << k,) for k in range(n))),), ((out_name, n),))


def zeros1d(size: int, in_name: str, out_name: str, out_size: int = 1) -> Linear:
    """Every one of ``size`` inputs to 0 (a broadcast)."""
    return Linear(((in_name, tuple((0,) for _ in range(_log2(size)))),), ((out_name, _log2(out_size)),))


def identity_nd(in_name: str, shape: list[int] | tuple[int, ...], order: list[int] | tuple[int, ...],
                names: tuple[str, ...]) -> Linear:
    """Triton's ``identityStandardND``: ``in_name`` over ``shape``, the most minor dimension ``order[0]``."""
    out = Linear.empty()
    for d in order:
        out = out * identity1d(shape[d], in_name, names[d])
    return out


def not_smaller(lay: Linear, shape: dict[str, int], in_name: str = "register") -> Linear:
    """Triton's ``ensureLayoutNotSmallerThan``: each output smaller than ``shape`` repeated by ``in_name`` bits."""
    out = lay
    for name in lay.out_names():
        have, want = lay.size(name), shape[name]
        if want > have:
            out = out * identity1d(want // have, in_name, name)
    return out


def not_larger(lay: Linear, shape: dict[str, int], broadcast_registers: bool = False) -> Linear:
    """Triton's ``ensureLayoutNotLargerThan``: each output larger than ``shape`` has its largest bases along it
    zeroed until it fits (a broadcast), except register bases, which are removed (``broadcast_registers``
    False, as ``combineCtaCgaWithShape`` asks); the output size shrinks to ``shape``."""
    removed: set[int] = set()
    ins = {n: [list(b) for b in bs] for n, bs in lay.ins}
    outs = list(lay.outs)
    for j, (name, log2) in enumerate(lay.outs):
        actual, desired = 1 << log2, shape[name]
        if actual <= desired:
            continue
        found = [(ins[n][k][j], n, k) for n, _ in lay.ins for k in range(len(ins[n])) if ins[n][k][j]]
        found.sort(key=lambda x: -x[0])  # stable: equal values keep the input order
        for _, n, k in found:
            if actual <= desired:
                break
            if n == "register" and not broadcast_registers:
                removed.add(k)
            else:
                ins[n][k][j] = 0
            actual >>= 1
        outs[j] = (name, _log2(desired))
    return Linear(tuple((n, tuple(tuple(b) for k, b in enumerate(ins[n]) if n != "register" or k not in removed))
                        for n, _ in lay.ins), tuple(outs))


def _log2(n: int) -> int:
    if n < 1 or n & (n - 1):
        raise ValueError(f"{n} is not a power of two")
    return n.bit_length() - 1


__all__ = ["Linear", "identity1d", "identity_nd", "not_larger", "not_smaller", "zeros1d"]
