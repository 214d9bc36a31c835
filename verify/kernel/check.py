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
    extra: tuple[int, ...] = ()  # a block-scaled product's scale factors (of A's element, of B's)

    @property
    def factors(self) -> tuple[int, ...]:
        return (self.a, self.b, *self.extra)


@dataclass
class Elements:
    """Per output element (row-major): wrong or not; the first wrong one's words and its products."""

    wrong: np.ndarray
    reasons: dict[int, str] = field(default_factory=dict)  # element -> words (first wrong ones only)


# one product of a chain: element, a ids [n, K], b ids [n, K], form, row, r, c, link, and a block-scaled MMA's two
# scale-factor id arrays (else none)
Link = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray,
             tuple[np.ndarray, ...]]


def _links(sym: Symbolic, vals: np.ndarray) -> tuple[list[Link], np.ndarray, np.ndarray]:
    """The products of each element's chain: a list of (element, a ids [n, K], b ids [n, K], form, row, r, c,
    link), and the lone terms (element, value) that are neither a sum nor zero."""
    elem = np.arange(len(vals))
    cur = sym.resolve(vals)
    out: list[Link] = []
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
            extra: tuple[np.ndarray, ...] = ()
            if int(f) in sym.scales:  # a block-scaled MMA: each product's two scale factors
                tsa, tsb, G = sym.scales[int(f)]
                g = rr // (M // G)
                extra = (tsa.view()[rw[:, None], rr[:, None] * K + kk[None, :]],
                         tsb.view()[rw[:, None], (g[:, None] * K + kk[None, :]) * N + cc[:, None]])
            out.append((e[sel], a, b, np.full(int(sel.sum()), int(f)), rw, rr, cc, np.full(int(sel.sum()), link),
                        extra))
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
        self.acc = ein.factors
        ext: dict[str, int] = {}
        for acc, t in ((ein.output, self.out), *zip(ein.factors, self.f)):
            for k, (n, size) in enumerate(zip(acc.indices, t.shape)):
                if acc.divisor(k) == 1:
                    ext[n] = size
        self.extent = ext
        self.summed = ein.summed
        self.S = int(np.prod([ext[n] for n in self.summed])) if self.summed else 1
        self.nonzero = [t.nonzero() for t in self.f]

    def expected(self, e_global: np.ndarray) -> np.ndarray | None:
        """Which summed-index values each element's sum has (``bool[n, S]``): all of them, unless a factor is
        structured-sparse (a structural zero's products are absent; None when every factor is dense)."""
        if all(nz is None for nz in self.nonzero):
            return None
        n = len(e_global)
        env = {nm: np.asarray(v)[:, None] for nm, v in zip(self.idx_out, np.unravel_index(e_global, self.out.shape))}
        sv = np.unravel_index(np.arange(self.S), [self.extent[nm] for nm in self.summed]) if self.summed else ()
        env |= {nm: np.asarray(v)[None, :] for nm, v in zip(self.summed, sv)}
        out = np.ones((n, self.S), bool)
        for acc, nz in zip(self.acc, self.nonzero):
            if nz is not None:
                idx = tuple(np.broadcast_to(env[nm] // acc.divisor(k), (n, self.S)) for k, nm in enumerate(acc.indices))
                out &= nz[idx]
        return out


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


def _decode_n(sym: Symbolic, ein: Einsum2, e_global: np.ndarray, cols: list[np.ndarray]
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``_decode`` for a product of any number of factors (a block-scaled MMA's four), each factor a distinct tensor:
    the product's atoms are matched to the einsum's factors by tensor; a divided index (``k / 32``) must be its whole
    index's value divided."""
    n = len(e_global)
    rs = [sym.resolve(c) for c in cols]
    zero = np.zeros(n, bool)
    ok = np.ones(n, bool)
    tf = []
    for r in rs:
        zero |= r == 0
        kind, _ = sym.kind_width(r)
        ok &= kind == ATOM
        tf.append(sym.atom_of(r))
    ok &= ~zero
    if len(cols) != len(ein.fi):
        ok[:] = False
    flat = []
    for j, fj in enumerate(ein.fi):
        hit = np.zeros(n, bool)
        fl = np.zeros(n, np.int64)
        for t, f in tf:
            sel = (t == fj) & ~hit
            fl[sel] = f[sel]
            hit |= sel
        ok &= hit
        flat.append(fl)
    vals: dict[str, list[np.ndarray]] = {}
    divided: list[tuple[str, int, np.ndarray]] = []
    for nm, v in zip(ein.idx_out, np.unravel_index(e_global, ein.out.shape)):
        vals.setdefault(nm, []).append(np.asarray(v))
    for j, acc in enumerate(ein.acc):
        idx = np.unravel_index(np.where(ok, flat[j], 0), ein.f[j].shape)
        for k, nm in enumerate(acc.indices):
            if acc.divisor(k) == 1:
                vals.setdefault(nm, []).append(np.asarray(idx[k]))
            else:
                divided.append((nm, acc.divisor(k), np.asarray(idx[k])))
    consistent = ok.copy()
    for vs in vals.values():
        for v in vs[1:]:
            consistent &= v == vs[0]
    for nm, d, v in divided:
        consistent &= v == vals[nm][0] // d
    if ein.summed:
        s_ = np.ravel_multi_index([np.where(consistent, vals[nm][0], 0) for nm in ein.summed],
                                  [ein.extent[nm] for nm in ein.summed])
    else:
        s_ = np.zeros(n, np.int64)
    return zero, consistent, s_


def _decode_cols(sym: Symbolic, ein: Einsum2, e_global: np.ndarray, cols: list[np.ndarray]
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A product's factors (two, or four for a block-scaled MMA) against the einsum's (two or four)."""
    if len(cols) == 2 and len(ein.fi) == 2:
        return _decode(sym, ein, e_global, cols[0], cols[1])
    return _decode_n(sym, ein, e_global, cols)


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
        for (e, a, b, *_rest, extra) in links:
            K = a.shape[1]
            el = np.repeat(e, K)
            zero, good, s = _decode_cols(sym, ein, sel[el], [x.reshape(-1) for x in (a, b, *extra)])
            bad[el[~zero & ~good]] = True
            g = good & ~zero
            _count(counts, el[g] * ein.S + s[g])
        per = counts.reshape(n, ein.S)
        want = ein.expected(sel)
        bad |= (per != 1).any(axis=1) if want is None else (per != want).any(axis=1)
        wrong[sel] = bad
    return wrong


def _count(counts: np.ndarray, keys: np.ndarray) -> None:
    if len(keys):
        counts += np.bincount(keys, minlength=len(counts))


def products(sym: Symbolic, value: int) -> tuple[list[Product], list[int]]:
    """Every product of one value's chain, in the order the ``mma`` instructions ran, and its lone terms."""
    links, lone_e, lone_v = _links(sym, np.array([value], np.int64))
    out: list[Product] = []
    for (e, a, b, f, rw, rr, cc, ln, extra) in reversed(links):
        for j in range(len(e)):
            for k in range(a.shape[1]):
                out.append(Product(int(a[j, k]), int(b[j, k]), int(f[j]), int(rw[j]), int(rr[j]), int(cc[j]), k,
                                   int(ln[j]), tuple(int(x[j, k]) for x in extra)))
    return out, [int(v) for v in lone_v]


def explain(sym: Symbolic, launch: Launch, e: int, value: int, status: int) -> tuple[str, Product | None, str]:
    """Words for wrong element ``e`` (row-major): what it should be, what it has; the first offending product
    (for the chain) and which factor ('a' or 'b') to follow."""
    ein = Einsum2(launch, sym)
    comp = launch.computes
    out_idx = tuple(int(x) for x in np.unravel_index(e, ein.out.shape))
    env = dict(zip(ein.idx_out, out_idx))
    summed = ein.summed
    expected = (f"sum over {', '.join(summed)} of " if summed else "") + " * ".join(f.text(env) for f in comp.factors)
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
        zero, good, s = _decode_cols(sym, ein, np.array([e]), [np.array([x]) for x in p.factors])
        if zero[0]:
            continue
        if good[0]:
            seen[int(s[0])] = seen.get(int(s[0]), 0) + 1
            continue
        words, side = _why(sym, ein, comp, env, p)
        if first is None:
            first, follow = p, side
            if side in ("a", "b") and len(p.factors) == 2:
                follow = _off_tile(sym, ein, prods, p) or side
        if len(wrong_words) < 3:
            wrong_words.append(words)
    for v in lone:
        if len(wrong_words) < 3:
            wrong_words.append(f"a term {sym.value_words(v)} that is no product")
    dup = [s for s, c in seen.items() if c > 1]
    want = ein.expected(np.array([e]))
    missing = [s for s in range(ein.S) if s not in seen and (want is None or want[0, s])]
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
        first = next((p for p in prods if _decode_cols(sym, ein, np.array([e]), [np.array([x]) for x in p.factors])[2][0]
                      == dup[0]), None)
        follow = "a"
    return f"expected {expected}; " + "; ".join(parts), first, follow


def _off_tile(sym: Symbolic, ein: Einsum2, prods: list[Product], p: Product) -> str | None:
    """Which factor of the wrong product ``p`` left the MMA's tile: over the K products of its batch (the same MMA
    row and column), the summed index of the right factor moves with the tile's k by one fixed offset; 'a' or 'b'
    when exactly one factor's offset is not fixed (None: no such factor, as for two factors both off)."""
    if len(ein.fi) != 2 or len(ein.summed) != 1:
        return None
    name = ein.summed[0]
    batch = [q for q in prods if (q.form, q.row, q.r, q.c, q.link) == (p.form, p.row, p.r, p.c, p.link)]
    offsets: list[set[int]] = [set(), set()]
    for q in batch:
        for side, v in enumerate((q.a, q.b)):
            r = int(sym.resolve(np.array([v]))[0])
            if int(sym.kind_width(np.array([r]))[0][0]) != ATOM:
                return None
            t, f = (int(x[0]) for x in sym.atom_of(np.array([r])))
            j = ein.fi.index(t) if t in ein.fi else -1
            if j < 0 or name not in ein.idx_f[j]:
                return None
            k = int(np.unravel_index(f, ein.f[j].shape)[list(ein.idx_f[j]).index(name)])
            offsets[side].add(k - q.k)
    off = [len(o) > 1 for o in offsets]
    return "a" if off == [True, False] else "b" if off == [False, True] else None


def _term(ein: Einsum2, comp, env: dict[str, int], s: int) -> str:
    vals = np.unravel_index(s, [ein.extent[n] for n in ein.summed]) if ein.summed else ()
    full = {**env, **{n: int(v) for n, v in zip(ein.summed, vals)}}
    return " * ".join(f.text(full) for f in comp.factors)


def _why(sym: Symbolic, ein: Einsum2, comp, env: dict[str, int], p: Product) -> tuple[str, str]:
    """Why product ``p`` is not one of the element's, and the factor to follow ('a' or 'b'; a block-scaled
    product's scale factors 'sa' and 'sb')."""
    if len(p.factors) != 2 or len(ein.fi) != 2:
        return _why_n(sym, ein, comp, env, p)
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


SIDES = ("a", "b", "sa", "sb")  # a product's factors: A's and B's elements, then their scale factors


def _why_n(sym: Symbolic, ein: Einsum2, comp, env: dict[str, int], p: Product) -> tuple[str, str]:
    """``_why`` for a product of four factors (or of a number of factors other than the einsum's)."""
    rs = [int(x) for x in sym.resolve(np.array(p.factors))]
    text = " * ".join(sym.value_words(r) for r in rs)
    kinds = [int(x) for x in sym.kind_width(np.array(rs))[0]]
    for j, (r, k) in enumerate(zip(rs, kinds)):
        if k != ATOM:
            return text + f" ({sym.value_words(r)} is no input element)", SIDES[min(j, 3)]
    if len(rs) != len(ein.fi):
        return text + f" (a product of {len(rs)} factors; computes names {len(ein.fi)})", "a"
    atoms = [tuple(int(x[0]) for x in sym.atom_of(np.array([r]))) for r in rs]
    where: dict[int, int] = {}
    for j, fj in enumerate(ein.fi):
        pos = next((q for q, (t, _) in enumerate(atoms) if t == fj and q not in where.values()), None)
        if pos is None:
            names = ", ".join(sym.tensors[t].name for t, _ in atoms)
            return text + f" (the product of {names}, not of {', '.join(f.tensor for f in comp.factors)})", "a"
        where[j] = pos
    idx = {j: [int(x) for x in np.unravel_index(atoms[where[j]][1], ein.f[j].shape)] for j in where}
    whole: dict[str, tuple[int, int]] = {}  # name -> (value, factor)
    for j, acc in enumerate(comp.factors):
        for k, nm in enumerate(acc.indices):
            if acc.divisor(k) == 1:
                v = idx[j][k]
                if nm in env and v != env[nm]:
                    return text + f" ({acc.tensor}'s {nm} is {v}, the element's is {env[nm]})", SIDES[where[j]]
                if nm in whole and whole[nm][0] != v:
                    other = comp.factors[whole[nm][1]]
                    return text + f" ({nm} {v} of {acc.tensor} meets {nm} {whole[nm][0]} of {other.tensor})", \
                        SIDES[where[j]]
                whole.setdefault(nm, (v, j))
    for j, acc in enumerate(comp.factors):
        for k, nm in enumerate(acc.indices):
            d = acc.divisor(k)
            if d != 1 and nm in whole and idx[j][k] != whole[nm][0] // d:
                return text + (f" ({acc.tensor}'s {nm} / {d} is {idx[j][k]}, but {nm} is {whole[nm][0]}: the scale "
                               f"factor of another block)"), SIDES[where[j]]
    return text, "a"


__all__ = ["Elements", "Product", "SIDES", "check_elements", "explain", "products"]
