"""What the verdict says of every output element, for the kernel counterexample picture and the API: exactly its
einsum sum, wrong (and what it holds), written twice, or never written; who wrote it (CTA and thread); and where the
first write out of bounds lands if the output tensor went on.

``output_cells`` reads what the symbolic engine's run left (the output region's bytes, their write counts and
writers, the element values) and the verdict's per-element judgement; for a wrong element it finds, vectorised
over all of them, the first product that is not one of its einsum's (in the order the ``mma`` instructions ran,
as ``check.explain`` takes it), how many products are wrong, counted twice or missing.  Nothing here decides the
verdict: it only words, per element, what ``check_elements`` decided.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import numpy as np

from .check import CHUNK, Einsum2, _decode_cols, _links
from .launch import Launch
from .memory import GlobalMemory
from .symbolic import ATOM, BAD, CONST, SUM, ZERO_KIND, Symbolic, element_starts

EXACT, WRONG, TWICE, NEVER = 0, 1, 2, 3
VERDICTS = ("exact", "wrong", "written twice", "never written")


def _readonly(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    a.flags.writeable = False
    return a


@dataclass(frozen=True)
class Holding:
    """What a wrong element holds: two short lines for its cell, and words."""

    first: str
    second: str
    words: str


@dataclass(frozen=True)
class OutOfBounds:
    """The first access out of bounds the launch made (``count`` in all): its words, PTX line and source, whether a
    store made it, and, when it lands where an element of the output tensor would be if the tensor went on (a
    row past the end), that element's indices."""

    words: str
    count: int
    line: int
    source: str
    store: bool
    index: tuple[int, ...] | None


@dataclass(frozen=True, eq=False)
class OutputCells:
    """The output tensor element by element (arrays in the tensor's shape, read-only): ``verdicts`` (``EXACT``,
    ``WRONG``, ``TWICE``: its value exact but written more than once, ``NEVER``), ``writes`` (how often it was
    written, saturating at 255), ``cta`` and ``thread`` (its last writer: the CTA's linear index and the thread in
    it; -1 never written); ``holdings`` (flat row-major index -> ``Holding``) for every wrong element;
    ``products`` (the products of each element's sum); the first access out of bounds."""

    tensor: str
    type: str
    shape: tuple[int, ...]
    grid: tuple[int, int, int]
    products: int
    verdicts: np.ndarray = field(repr=False)
    writes: np.ndarray = field(repr=False)
    cta: np.ndarray = field(repr=False)
    thread: np.ndarray = field(repr=False)
    holdings: Mapping[int, Holding] = field(repr=False, default_factory=dict)
    out_of_bounds: OutOfBounds | None = None

    @property
    def size(self) -> int:
        return int(self.verdicts.size)

    def name(self, index: tuple[int, ...]) -> str:
        return f"{self.tensor}[{', '.join(str(int(i)) for i in index)}]"

    def verdict(self, index: tuple[int, ...]) -> str:
        """``exact``, ``wrong``, ``written twice`` or ``never written``."""
        return VERDICTS[int(self.verdicts[tuple(index)])]

    def count(self, verdict: str) -> int:
        return int((self.verdicts == VERDICTS.index(verdict)).sum())

    def first(self, verdict: str) -> tuple[int, ...] | None:
        """The first element (row-major) of a verdict, as the findings name it; None when there is none."""
        hit = np.flatnonzero(self.verdicts.reshape(-1) == VERDICTS.index(verdict))
        return tuple(int(i) for i in np.unravel_index(int(hit[0]), self.shape)) if len(hit) else None

    def writer(self, index: tuple[int, ...]) -> tuple[tuple[int, int, int], int] | None:
        """(the CTA as (x, y, z), the thread in it) that wrote the element last; None when nothing did."""
        c = int(self.cta[tuple(index)])
        if c < 0:
            return None
        gx, gy, _ = self.grid
        return (c % gx, (c // gx) % gy, c // (gx * gy)), int(self.thread[tuple(index)])

    def holding(self, index: tuple[int, ...]) -> Holding | None:
        """What a wrong element holds (None for any other)."""
        return self.holdings.get(int(np.ravel_multi_index(tuple(index), self.shape)))


def output_cells(sym: Symbolic, launch: Launch, gmem: GlobalMemory, vals: np.ndarray, status: np.ndarray,
                 writes: np.ndarray, wrong: np.ndarray, oob: Any = None) -> OutputCells:
    """Every output element as the verdict judged it (``wrong``: its value is wrong or only partly written;
    ``status`` and ``writes`` as ``Symbolic.output_values`` gives them); ``oob``: the first out-of-bounds event,
    with its PTX line, source and whether a store made it, as ``(event, line, source, store)``."""
    t = launch.tensors()[launch.computes.output.tensor]
    region = gmem.by_name[t.name]
    starts = element_starts(t)
    code = region.writer[starts] if len(starts) else np.zeros(0, np.int64)
    never = status == 1
    verdicts = np.full(t.size, EXACT, np.uint8)
    verdicts[(writes > 1) & ~never] = TWICE
    verdicts[wrong & ~never] = WRONG
    verdicts[never] = NEVER
    cta = np.where(never, -1, code >> 40)
    thread = np.where(never, -1, (code >> 24) & 0xFFFF)
    ein = Einsum2(launch, sym)
    holdings = _holdings(sym, ein, vals, status, np.flatnonzero(verdicts == WRONG))
    shape = tuple(int(n) for n in t.shape)
    out = None
    if oob is not None:
        ev, line, source, store = oob
        index = _beyond(t, int(ev.address) - region.base) if store else None
        out = OutOfBounds(ev.words + f" (CTA {ev.cta}, thread {ev.thread})", int(ev.count), line, source, store, index)
    return OutputCells(t.name, t.type, shape, launch.grid, int(ein.S),
                       _readonly(verdicts.reshape(shape)), _readonly(np.minimum(writes, 255).astype(np.uint8)
                                                                    .reshape(shape)),
                       _readonly(cta.astype(np.int64).reshape(shape)), _readonly(thread.astype(np.int64).reshape(shape)),
                       holdings, out)


def _beyond(t: Any, offset: int) -> tuple[int, ...] | None:
    """The indices an element at byte ``offset`` of the output would have if the tensor went on along its outermost
    dimension (within as many again before or after it); None when the offset is no such element."""
    eb = t.element_bytes
    if offset % eb or not t.shape:
        return None
    rem = offset // eb
    order = sorted(range(len(t.shape)), key=lambda d: -t.strides[d])
    idx = [0] * len(t.shape)
    outer = order[0]
    if t.strides[outer] <= 0:
        return None
    idx[outer], rem = divmod(rem, t.strides[outer])
    for d in order[1:]:
        s = t.strides[d]
        if s <= 0:
            continue
        idx[d], rem = divmod(rem, s)
        if idx[d] >= t.shape[d]:
            return None
    inside = 0 <= idx[outer] < t.shape[outer]
    near = -t.shape[outer] <= idx[outer] < 2 * t.shape[outer]
    return tuple(int(i) for i in idx) if rem == 0 and near and not inside else None


def _holdings(sym: Symbolic, ein: Einsum2, vals: np.ndarray, status: np.ndarray, wrong: np.ndarray
              ) -> dict[int, Holding]:
    """What each wrong element holds (``wrong``: their flat indices, ascending)."""
    out: dict[int, Holding] = {}
    for e in wrong[status[wrong] == 2]:
        out[int(e)] = Holding("partly", "written", "only some of its bytes are written")
    for e in wrong[status[wrong] == 3]:
        out[int(e)] = Holding("mixed", "bytes", "holds bytes of different values, or an undefined value")
    whole = wrong[status[wrong] == 0]
    S = max(1, ein.S)
    step = max(1, CHUNK // S)
    for lo in range(0, len(whole), step):
        sel = whole[lo: lo + step]
        n = len(sel)
        links, lone_e, lone_v = _links(sym, vals[sel])
        counts = np.zeros(n * S, np.int64)
        n_bad = np.zeros(n, np.int64)
        firsts: list[np.ndarray] = []  # (element, key, a, b) of wrong products
        for (e, a, b, _f, _rw, _rr, _cc, ln, extra) in links:
            K = a.shape[1]
            el = np.repeat(e, K)
            fa, fb = a.reshape(-1), b.reshape(-1)
            zero, good, s = _decode_cols(sym, ein, sel[el], [fa, fb, *(x.reshape(-1) for x in extra)])
            bad = ~zero & ~good
            n_bad += np.bincount(el[bad], minlength=n)
            g = good & ~zero
            if g.any():
                counts += np.bincount(el[g] * S + s[g], minlength=n * S)
            if bad.any():  # the order check.explain takes them in: the first mma first, then k
                key = -np.repeat(ln, K)[bad] * (1 << 24) + np.tile(np.arange(K), len(e))[bad]
                firsts.append(np.stack([el[bad], key, fa[bad], fb[bad]], axis=1))
        per = counts.reshape(n, S)
        n_dup = (per > 1).sum(axis=1)
        want = ein.expected(sel)
        n_missing = (per == 0).sum(axis=1) if want is None else ((per == 0) & want).sum(axis=1)
        fa_of = np.full(n, -1, np.int64)
        fb_of = np.full(n, -1, np.int64)
        if firsts:
            f = np.concatenate(firsts)
            f = f[np.lexsort((f[:, 1], f[:, 0]))]
            _, at = np.unique(f[:, 0], return_index=True)
            fa_of[f[at, 0]], fb_of[f[at, 0]] = _ordered(sym, ein, f[at, 2], f[at, 3])
        lone_of = np.full(n, -1, np.int64)
        if len(lone_e):
            le, at = np.unique(lone_e, return_index=True)
            lone_of[le] = lone_v[at]
        has = fa_of >= 0
        no_first = ~has & (lone_of < 0)
        short = _factors(sym, np.concatenate([fa_of[has], fb_of[has], lone_of[lone_of >= 0],
                                             vals[sel][no_first]]), ",")
        full = _factors(sym, np.concatenate([fa_of[has], fb_of[has]]), ", ")
        nh, nl = int(has.sum()), int((lone_of >= 0).sum())
        it_a, it_b = iter(range(nh)), iter(range(nh, 2 * nh))
        it_l, it_v = iter(range(2 * nh, 2 * nh + nl)), iter(range(2 * nh + nl, len(short)))
        for j in range(n):
            parts = []
            first = second = ""
            if has[j]:
                ka, kb = next(it_a), next(it_b)
                more = int(n_bad[j]) - 1
                parts.append(f"has {full[ka]} * {full[kb]}"
                             + (f" and {more} more wrong product{'s' if more > 1 else ''}" if more else ""))
                first, second = short[ka], "\u00d7" + short[kb]
            if lone_of[j] >= 0:
                words = short[next(it_l)]
                parts.append(f"a term {sym.value_words(int(lone_of[j]))} that is no product")
                if not first:
                    first, second = "holds", words
            if n_dup[j]:
                parts.append(f"counts {int(n_dup[j])} of its products more than once")
            if n_missing[j]:
                parts.append(f"lacks {int(n_missing[j])} of its {S if want is None else int(want[j].sum())} products")
            if not first:
                value = next(it_v)
                if n_dup[j]:
                    first, second = "counts", f"{int(n_dup[j])} twice"
                elif n_missing[j]:
                    first, second = "lacks", f"{int(n_missing[j])}/{S if want is None else int(want[j].sum())}"
                else:
                    first, second = "holds", short[value]
                    parts.append(f"holds {sym.value_words(int(vals[sel[j]]))}")
            out[int(sel[j])] = Holding(first, second, "; ".join(parts))
    return dict(sorted(out.items()))


def _ordered(sym: Symbolic, ein: Einsum2, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Products' two factors (resolved) in the einsum's order: the first factor's tensor first."""
    ra, rb = sym.resolve(a), sym.resolve(b)
    ka, _ = sym.kind_width(ra)
    kb, _ = sym.kind_width(rb)
    ta, _ = sym.atom_of(ra)
    tb, _ = sym.atom_of(rb)
    swap = (ka == ATOM) & (kb == ATOM) & (ta == ein.fi[1]) & (tb == ein.fi[0])
    return np.where(swap, rb, ra), np.where(swap, ra, rb)


def _factors(sym: Symbolic, ids: np.ndarray, sep: str) -> list[str]:
    """Values in few characters: ``A[1,8]`` (``sep`` between indices), ``0``, ``0x3c00``, ``sum``, ``undef``."""
    v = sym.resolve(np.asarray(ids, np.int64))
    kind, _ = sym.kind_width(v)
    t, flat = sym.atom_of(v)
    out: list[str] = []
    rows = sym.row(np.where(v >= sym.first, v, sym.first)) if len(v) and (v >= sym.first).any() else None
    for k in range(len(v)):
        kk = int(kind[k])
        if kk == ATOM:
            tensor = sym.tensors[int(t[k])]
            idx = np.unravel_index(int(flat[k]), tensor.shape)
            out.append(f"{tensor.name}[{sep.join(str(int(i)) for i in idx)}]")
        elif kk == ZERO_KIND:
            out.append("0")
        elif kk == CONST and rows is not None:
            out.append(f"0x{int(rows[k, 2]):x}")
        else:
            out.append({SUM: "sum", BAD: "undef"}.get(kk, "value"))
    return out


def oob_event(prog: Any, source_of: Callable[[Any], str]) -> tuple[Any, int, str, bool] | None:
    """The first global access out of bounds of a run (``Program``): (event, PTX line, source (``source_of`` an
    instruction), made by a store)."""
    ev = prog.events.first.get("global_out_of_bounds")
    if ev is None:
        return None
    ins = prog.steps[ev.instr].instr
    return ev, ins.line, source_of(ins), ins.opcode.split(".")[0] in ("st", "stmatrix", "red", "atom")


__all__ = ["EXACT", "Holding", "NEVER", "OutOfBounds", "OutputCells", "TWICE", "VERDICTS", "WRONG", "oob_event",
           "output_cells"]
