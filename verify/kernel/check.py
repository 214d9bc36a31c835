"""The symbolic engine's verdict on every output element: exactly its einsum sum, each product once, nothing else.

An element's value is followed through its chain of product batches (``Symbolic``: each ``SUM`` adds one row of an
``mma``'s A table times one column of its B table to the previous accumulator); each product's two atoms are decoded
to their tensors and indices, matched to the einsum's two factors, and their index values must agree with each other
and with the element's; the summed indices' values, counted per element, must each appear exactly once.  Exact
integer work, no hashing; elements are checked in chunks so the products in memory stay bounded.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .launch import Launch, Tensor
from .symbolic import ADD, ATOM, SUM, ZERO_KIND, Symbolic

CHUNK = 1 << 21  # products per chunk


@dataclass(frozen=True)
class Product:
    """One product of an element's sum, as found: the two factors' raw value ids, the batch it came from."""

    a: int
    b: int
    form: int
    row: int
    r: int
    c: int
    k: int
    link: int  # which link of the chain (0: the last mma)


@dataclass
class Elements:
    """Per output element (row-major): wrong or not; the first wrong one's words and its products."""

    wrong: np.ndarray
    reasons: dict[int, str] = field(default_factory=dict)  # element -> words (first wrong ones only)


def _links(sym: Symbolic, vals: np.ndarray) -> tuple[list[tuple[np.ndarray, ...]], np.ndarray, np.ndarray]:
    """The products of each element's chain: a list of (element, a ids [n, K], b ids [n, K], form, row, r, c,
    link), and the lone terms (element, value) that are neither a sum nor zero."""
    elem = np.arange(len(vals))
    cur = sym.resolve(vals)
    out: list[tuple[np.ndarray, ...]] = []
    lone_e: list[np.ndarray] = []
    lone_v: list[np.ndarray] = []
    link = 0
    while len(elem):
        kinds, _ = sym.kind_width(cur)
        is_sum = kinds == SUM
        is_add = kinds == ADD
        lone = ~is_sum & ~is_add & (kinds != ZERO_KIND)
        lone_e.append(elem[lone])
        lone_v.append(cur[lone])
        if not is_sum.any() and not is_add.any():
            break
        e, s = elem[is_sum], cur[is_sum]
        r = sym.row(s)
        fi = r[:, 3] >> 40
        rows = r[:, 3] & ((1 << 40) - 1)
        for f in np.unique(fi):
            sel = fi == f
            ta, tb, _, (M, N, K) = sym.forms[int(f)]
            A, B = ta.view(), tb.view()
            rr, cc, rw = r[sel, 4], r[sel, 5], rows[sel]
            kk = np.arange(K)
            a = A[rw[:, None], rr[:, None] * K + kk[None, :]]
            b = B[rw[:, None], kk[None, :] * N + cc[:, None]]
            out.append((e[sel], a, b, np.full(int(sel.sum()), int(f)), rw, rr, cc, np.full(int(sel.sum()), link)))
        ea = elem[is_add]
        ra = sym.row(cur[is_add])  # a sum of two sums (an accumulator added to another: Triton's fp8 on Hopper)
        elem = np.concatenate([e, ea, ea])
        cur = np.concatenate([sym.resolve(r[:, 2]), sym.resolve(ra[:, 2]), sym.resolve(ra[:, 3])])
        link += 1
    return out, np.concatenate(lone_e) if lone_e else np.zeros(0, np.int64), \
        np.concatenate(lone_v) if lone_v else np.zeros(0, np.int64)


class Einsum2:
    """The einsum's index bookkeeping for the check: extents, which factor holds which index."""

    def __init__(self, launch: Launch, sym: Symbolic) -> None:
        ein = launch.computes
        tensors = launch.tensors()
        self.out: Tensor = tensors[ein.output.tensor]
        self.f: list[Tensor] = [tensors[x.tensor] for x in ein.factors]
        self.fi = [next(k for k, t in enumerate(sym.tensors) if t.name == x.tensor) for x in ein.factors]
        self.idx_out = ein.output.indices
        self.idx_f = [x.indices for x in ein.factors]
        ext: dict[str, int] = {}
        for names, t in ((self.idx_out, self.out), *zip(self.idx_f, self.f)):
            for n, size in zip(names, t.shape):
                ext[n] = size
        self.extent = ext
        self.summed = ein.summed
        self.S = int(np.prod([ext[n] for n in self.summed])) if self.summed else 1


def _decode(sym: Symbolic, ein: Einsum2, e_global: np.ndarray, a: np.ndarray, b: np.ndarray
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(zero: the product is 0; good: it is one of the element's einsum products; s: its summed-index number)."""
    ra, rb = sym.resolve(a), sym.resolve(b)
    zero = (ra == 0) | (rb == 0)
    ka, _ = sym.kind_width(ra)
    kb, _ = sym.kind_width(rb)
    both = (ka == ATOM) & (kb == ATOM) & ~zero
    ta, fa = sym.atom_of(ra)
    tb, fb = sym.atom_of(rb)
    normal = both & (ta == ein.fi[0]) & (tb == ein.fi[1])
    swapped = both & (ta == ein.fi[1]) & (tb == ein.fi[0]) & ~normal
    x1 = np.where(swapped, fb, fa)
    x2 = np.where(swapped, fa, fb)
    ok = normal | swapped
    vals: dict[str, list[np.ndarray]] = {}
    i1 = np.unravel_index(np.where(ok, x1, 0), ein.f[0].shape)
    i2 = np.unravel_index(np.where(ok, x2, 0), ein.f[1].shape)
    io = np.unravel_index(e_global, ein.out.shape)
    for names, idx in ((ein.idx_out, io), (ein.idx_f[0], i1), (ein.idx_f[1], i2)):
        for n, v in zip(names, idx):
            vals.setdefault(n, []).append(np.asarray(v))
    consistent = ok.copy()
    for n, vs in vals.items():
        for v in vs[1:]:
            consistent &= v == vs[0]
    if ein.summed:
        s = np.ravel_multi_index([np.where(consistent, vals[n][0], 0) for n in ein.summed],
                                 [ein.extent[n] for n in ein.summed])
    else:
        s = np.zeros(len(a), np.int64)
    return zero, consistent, s


def check_elements(sym: Symbolic, launch: Launch, vals: np.ndarray, status: np.ndarray) -> np.ndarray:
    """Wrong (bool per element): not exactly its einsum sum.  Elements never or partly written, or of mixed
    bytes (``status`` != 0) are wrong too (their words come from ``explain``)."""
    ein = Einsum2(launch, sym)
    E = len(vals)
    wrong = status != 0
    K_guess = max(1, ein.S)
    step = max(1, CHUNK // K_guess)
    for lo in range(0, E, step):
        hi = min(E, lo + step)
        sel = np.arange(lo, hi)
        sel = sel[status[lo:hi] == 0]
        if not len(sel):
            continue
        links, lone_e, _ = _links(sym, vals[sel])
        n = len(sel)
        counts = np.zeros(n * ein.S, np.int64)
        bad = np.zeros(n, bool)
        if len(lone_e):
            bad[lone_e] = True
        for (e, a, b, *_rest) in links:
            K = a.shape[1]
            el = np.repeat(e, K)
            zero, good, s = _decode(sym, ein, sel[el], a.reshape(-1), b.reshape(-1))
            bad[el[~zero & ~good]] = True
            g = good & ~zero
            _count(counts, el[g] * ein.S + s[g])
        per = counts.reshape(n, ein.S)
        bad |= (per != 1).any(axis=1)
        wrong[sel] = bad
    return wrong


def _count(counts: np.ndarray, keys: np.ndarray) -> None:
    if len(keys):
        counts += np.bincount(keys, minlength=len(counts))


def products(sym: Symbolic, value: int) -> tuple[list[Product], list[int]]:
    """Every product of one value's chain, in the order the ``mma`` instructions ran, and its lone terms."""
    links, lone_e, lone_v = _links(sym, np.array([value], np.int64))
    out: list[Product] = []
    for (e, a, b, f, rw, rr, cc, ln) in reversed(links):
        for j in range(len(e)):
            for k in range(a.shape[1]):
                out.append(Product(int(a[j, k]), int(b[j, k]), int(f[j]), int(rw[j]), int(rr[j]), int(cc[j]), k,
                                   int(ln[j])))
    return out, [int(v) for v in lone_v]


def explain(sym: Symbolic, launch: Launch, e: int, value: int, status: int) -> tuple[str, Product | None, str]:
    """Words for wrong element ``e`` (row-major): what it should be, what it has; the first offending product
    (for the chain) and which factor ('a' or 'b') to follow."""
    ein = Einsum2(launch, sym)
    comp = launch.computes
    out_idx = tuple(int(x) for x in np.unravel_index(e, ein.out.shape))
    env = dict(zip(ein.idx_out, out_idx))
    summed = ein.summed
    sub = lambda names: ", ".join(str(env[n]) if n in env else n for n in names)  # noqa: E731
    expected = (f"sum over {', '.join(summed)} of " if summed else "") + \
        f"{comp.factors[0].tensor}[{sub(comp.factors[0].indices)}] * {comp.factors[1].tensor}[{sub(comp.factors[1].indices)}]"
    if status == 1:
        return f"never written (expected {expected})", None, ""
    if status == 2:
        return f"only some of its bytes are written (expected {expected})", None, ""
    if status == 3:
        return f"holds bytes of different values, or an undefined value (expected {expected})", None, ""
    prods, lone = products(sym, value)
    seen: dict[int, int] = {}
    wrong_words: list[str] = []
    first: Product | None = None
    follow = ""
    for p in prods:
        zero, good, s = _decode(sym, ein, np.array([e]), np.array([p.a]), np.array([p.b]))
        if zero[0]:
            continue
        if good[0]:
            seen[int(s[0])] = seen.get(int(s[0]), 0) + 1
            continue
        words, side = _why(sym, ein, comp, env, p)
        if first is None:
            first, follow = p, side
        if len(wrong_words) < 3:
            wrong_words.append(words)
    for v in lone:
        if len(wrong_words) < 3:
            wrong_words.append(f"a term {sym.value_words(v)} that is no product")
    dup = [s for s, c in seen.items() if c > 1]
    missing = [s for s in range(ein.S) if s not in seen]
    parts = []
    if wrong_words:
        parts.append("has " + "; ".join(wrong_words))
    if dup:
        parts.append("counts " + ", ".join(_term(ein, comp, env, s) for s in dup[:3]) + " more than once")
    if missing:
        more = f" (and {len(missing) - 3} more)" if len(missing) > 3 else ""
        parts.append("lacks " + ", ".join(_term(ein, comp, env, s) for s in missing[:3]) + more)
    if not prods and not lone:
        parts.append("holds 0" if value == 0 else f"holds {sym.value_words(value)}")
    if first is None and dup:
        first = next((p for p in prods if _decode(sym, ein, np.array([e]), np.array([p.a]), np.array([p.b]))[2][0]
                      == dup[0]), None)
        follow = "a"
    return f"expected {expected}; " + "; ".join(parts), first, follow


def _term(ein: Einsum2, comp, env: dict[str, int], s: int) -> str:  # type: ignore[no-untyped-def]
    vals = np.unravel_index(s, [ein.extent[n] for n in ein.summed]) if ein.summed else ()
    full = {**env, **{n: int(v) for n, v in zip(ein.summed, vals)}}
    return " * ".join(f"{f.tensor}[{', '.join(str(full[n]) for n in f.indices)}]" for f in comp.factors)


def _why(sym: Symbolic, ein: Einsum2, comp, env: dict[str, int], p: Product) -> tuple[str, str]:  # type: ignore[no-untyped-def]
    """Why product ``p`` is not one of the element's, and the factor to follow ('a' or 'b')."""
    ra, rb = (int(x) for x in sym.resolve(np.array([p.a, p.b])))
    text = f"{sym.value_words(ra)} * {sym.value_words(rb)}"
    ka, kb = (int(x) for x in sym.kind_width(np.array([ra, rb]))[0])
    if ka != ATOM:
        return text + f" ({sym.value_words(ra)} is no input element)", "a"
    if kb != ATOM:
        return text + f" ({sym.value_words(rb)} is no input element)", "b"
    (ta, fa), (tb, fb) = (tuple(int(x[0]) for x in sym.atom_of(np.array([v]))) for v in (ra, rb))
    swap = ta == ein.fi[1] and tb == ein.fi[0]
    if swap:
        ta, fa, tb, fb = tb, fb, ta, fa
    if ta != ein.fi[0] or tb != ein.fi[1]:
        return text + f" (the product of {sym.tensors[ta].name} and {sym.tensors[tb].name}, not of "\
                      f"{comp.factors[0].tensor} and {comp.factors[1].tensor})", "a"
    ia = dict(zip(ein.idx_f[0], (int(x) for x in np.unravel_index(fa, ein.f[0].shape))))
    ib = dict(zip(ein.idx_f[1], (int(x) for x in np.unravel_index(fb, ein.f[1].shape))))
    na, nb_ = comp.factors[0].tensor, comp.factors[1].tensor
    side_a, side_b = ("b", "a") if swap else ("a", "b")
    for n, v in env.items():
        if n in ia and ia[n] != v:
            return text + f" ({na}'s {n} is {ia[n]}, the element's is {v})", side_a
        if n in ib and ib[n] != v:
            return text + f" ({nb_}'s {n} is {ib[n]}, the element's is {v})", side_b
    for n in ein.summed:
        if n in ia and n in ib and ia[n] != ib[n]:
            return text + f" ({n} {ib[n]} of {nb_} meets {n} {ia[n]} of {na})", side_a
    return text, side_a


__all__ = ["Elements", "Product", "check_elements", "explain", "products"]
