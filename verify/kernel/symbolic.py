"""The symbolic engine: every element of an input tensor is an atom of its own (``A[17, 8]``), and every value the
kernel computes from them is exact: which atom each byte holds, and for a tensor-core result the exact sum of
products of atoms the catalog's layouts say.

Values are integer ids (``value * 8 + byte`` is a byte's tag, ``verify.kernel.bytes``):

* 0 is the constant zero; ids ``1 .. atoms`` are the atoms, tensor by tensor, row-major;
* above them, a table of derived values: ``SUM`` (an ``mma``'s result element: the previous accumulator plus the
  products of one row of A and one column of B, kept once per warp and ``mma`` as the A and B tables the layouts
  filled: an accumulator is a chain of product batches), ``ADD`` (two such sums added by a float ``add``: Triton's
  fp8 on Hopper accumulates each k-block's ``wgmma`` apart and adds it to the accumulator), ``CONV`` (a conversion: the identity on atoms, with its
  width), ``CONST`` (a concrete value used as data), ``BAD`` (bytes that are not one whole value), and in the
  chain's run ``MOVE`` (data a load moved: which instruction, thread and address).

The verdict compares each output element's sum with the einsum's exactly: products decoded to their atoms' indices,
each product of the sum counted once (no hashing).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .bytes import CONCRETE, UNDEF, U64, from_bytes
from .grow import Grow
from .launch import Launch, Tensor
from .memory import GlobalMemory, tensor_bytes

ATOM, SUM, CONV, CONST, BAD, MOVE, ZERO_KIND, ADD, PACK = 0, 1, 2, 3, 4, 5, 6, 7, 8
CHUNK_PRODUCTS = 1 << 22  # products decoded at once when checking


@dataclass(frozen=True)
class Term:
    """A product (or a lone term) of an output element, in the user's terms."""

    words: str


class Symbolic:
    name = "symbolic"

    def __init__(self, launch: Launch, trace: bool = False) -> None:
        self.launch = launch
        self.trace = trace
        out = launch.computes.output.tensor
        self.tensors: list[Tensor] = [a for a in launch.tensors().values() if a.name != out]
        self.bases: list[int] = []
        n = 1
        for t in self.tensors:
            self.bases.append(n)
            n += t.size
        self.first = n  # the first derived value
        # the atoms of structural zeros of packed structured-sparse tensors (an mma takes such an element as 0)
        zs = [b + np.flatnonzero(~nz.reshape(-1)) for t, b in zip(self.tensors, self.bases)
              if t.packed > 1 and (nz := t.nonzero()) is not None]
        self.zero_atoms = np.sort(np.concatenate(zs)) if zs else np.zeros(0, np.int64)
        self.base_arr = np.array(self.bases + [n], np.int64)
        self.table = Grow(6)  # kind, width, a, b, c, d
        self.consts: dict[tuple[int, int], int] = {}
        self.forms: list[tuple[Grow, Grow, Grow, tuple[int, int, int]]] = []  # (A rows, B rows, (instr, cta, warp))
        # a block-scaled form's scale factors, by form: (SFA rows [M * K], SFB rows [G * K * N], G): the factor of A's
        # element (m, k) and of B's (k, n) for the rows m of group m / (M / G) (a lane quarter reads its own copy)
        self.scales: dict[int, tuple[Grow, Grow, int]] = {}
        # (M, N, K), (M, N, K, G) for G computations, (kind, M, N, K) for a block-scaled or kind-tagged form
        self.form_index: dict[tuple[int, int, int] | tuple[int, int, int, int] | tuple[str, int, int, int], int] = {}
        self.mmas = 0

    # ------------------------------------------------------------------ the value table

    def alloc(self, kind: int, width: np.ndarray | int, a: np.ndarray | int = 0, b: np.ndarray | int = 0,
              c: np.ndarray | int = 0, d: np.ndarray | int = 0, n: int | None = None) -> np.ndarray:
        if n is None:
            n = max(np.size(x) for x in (width, a, b, c, d))
        rows = np.empty((n, 6), np.int64)
        rows[:, 0] = kind
        rows[:, 1] = width
        rows[:, 2] = a
        rows[:, 3] = b
        rows[:, 4] = c
        rows[:, 5] = d
        start = self.table.extend(rows)
        return np.arange(self.first + start, self.first + start + n, dtype=np.int64)

    def row(self, ids: np.ndarray) -> np.ndarray:
        return self.table.data[ids - self.first]

    def kind_width(self, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        ids = np.asarray(ids, np.int64)
        kind = np.full(ids.shape, ATOM, np.int64)
        width = np.zeros(ids.shape, np.int64)
        atom = (ids >= 1) & (ids < self.first)
        if atom.any():
            t = np.searchsorted(self.base_arr, ids[atom], side="right") - 1
            width[atom] = np.array([x.element_bytes for x in self.tensors], np.int64)[t]
        der = ids >= self.first
        if der.any():
            r = self.table.data[ids[der] - self.first]
            kind[der] = r[:, 0]
            width[der] = r[:, 1]
        zero = ids == 0
        kind[zero] = ZERO_KIND
        width[zero] = 0
        return kind, width

    def atom_of(self, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(tensor index, row-major flat index) of atoms."""
        t = np.searchsorted(self.base_arr, ids, side="right") - 1
        return t, ids - self.base_arr[np.clip(t, 0, len(self.bases) - 1)] if self.bases else ids

    def resolve(self, ids: np.ndarray) -> np.ndarray:
        """Through conversions and moves to the value they carry."""
        ids = np.array(ids, np.int64)
        while True:
            der = ids >= self.first
            if not der.any():
                return ids
            k = self.table.data[ids[der] - self.first]
            follow = (k[:, 0] == CONV) | (k[:, 0] == MOVE)
            if not follow.any():
                return ids
            sub = ids[der]
            sub[follow] = k[follow, 2]
            ids[der] = sub

    # ------------------------------------------------------------------ memory and words

    def init_memory(self, gmem: GlobalMemory) -> None:
        for t, base in zip(self.tensors, self.bases):
            region = gmem.by_name[t.name]
            elem, byte = tensor_bytes(t)
            if t.packed > 1:  # a byte of packed elements (s4, u4, b1) is one PACK value: a = its first element's atom
                at = np.flatnonzero(elem >= 0)
                ids = self.alloc(PACK, 1, base + elem[at], t.packed, n=len(at)) if len(at) else at
                region.tags[: len(elem)] = UNDEF
                region.tags[at] = ids * 8
                continue
            region.tags[: len(elem)] = np.where(elem >= 0, (base + elem) * 8 + byte, UNDEF)
            nz = t.nonzero()
            if nz is not None:  # a structural zero of a structured-sparse tensor holds the number 0, no atom
                zero = (elem >= 0) & ~nz.reshape(-1)[np.maximum(elem, 0)]
                region.tags[: len(elem)][zero] = CONCRETE
                region.bits[: len(elem)][zero] = 0

    def atom_words(self, v: int) -> str:
        t, flat = self.atom_of(np.array([v]))
        tensor = self.tensors[int(t[0])]
        idx = np.unravel_index(int(flat[0]), tensor.shape)
        return f"{tensor.name}[{', '.join(str(int(i)) for i in idx)}]"

    def value_words(self, v: int) -> str:
        v = int(self.resolve(np.array([v]))[0])
        if v == 0:
            return "0"
        if v < self.first:
            return self.atom_words(v)
        k = self.row(np.array([v]))[0]
        if k[0] in (SUM, ADD):
            return "a sum of products"
        if k[0] == CONST:
            return f"the constant 0x{int(k[2]):x}"
        if k[0] == PACK:
            first, last = self.atom_words(int(k[2])), self.atom_words(int(k[2]) + int(k[3]) - 1)
            return f"the packed byte of {first} .. {last}"
        if k[0] == BAD:
            return "an undefined value" if k[2] == UNDEF else "bytes of different values"
        return "a value"

    def describe_tags(self, tags: np.ndarray) -> str:
        t = int(tags[tags >= 0][0]) if (tags >= 0).any() else -1
        if t < 0:
            return "no data"
        return self.value_words(t >> 3) + (f" (byte {t & 7})" if t & 7 else "")

    # ------------------------------------------------------------------ decoding register bytes into values

    def element_ids(self, bits: np.ndarray, tags: np.ndarray | None, lo: int, eb: int) -> np.ndarray:
        """The value each thread's element in bytes ``lo .. lo + eb`` of a register is (``int64[T]``)."""
        T = bits.shape[0]
        field = (bits >> np.uint64(8 * lo)) & np.uint64((1 << (8 * eb)) - 1 if eb < 8 else 0xFFFFFFFFFFFFFFFF)
        if tags is None:
            return self._consts(field, eb)
        g = tags[:, lo: lo + eb]
        out = np.zeros(T, np.int64)
        conc = (g == CONCRETE).all(axis=1)
        if conc.any():
            out[conc] = self._consts(field[conc], eb)
        first = g[:, 0]
        v = first >> 3
        clean = (first >= 0) & (first & 7 == 0)
        for k in range(1, eb):
            clean &= g[:, k] == first + k
        if clean.any():
            _, w = self.kind_width(v[clean])
            ok = w == eb
            sel = np.flatnonzero(clean)
            out[sel[ok]] = v[clean][ok]
            clean[sel[~ok]] = False
        bad = ~conc & ~clean
        if bad.any():
            undef = (g[bad] == UNDEF).any(axis=1)
            out[bad] = self.alloc(BAD, eb, np.where(undef, UNDEF, g[bad][:, 0]), n=int(bad.sum()))
        return out

    def operand_ids(self, regs, eb: int, per: int, rb: int, T: int) -> np.ndarray:
        """The values of a register list's elements, ``int64[T, registers * per]`` (element ``i`` is element
        ``i % per`` of register ``i // per``)."""
        n = len(regs) * per
        if all(g is not None for _, g in regs):
            tags = np.stack([g for _, g in regs], axis=1).reshape(T, n, eb)
            first = tags[..., 0]
            clean = (first >= 0) & (first & 7 == 0)
            for k in range(1, eb):
                clean &= tags[..., k] == first + k
            if clean.all():
                v = first >> 3
                _, w = self.kind_width(v.reshape(-1))
                if (w == eb).all():
                    return v
        cols = []
        for b, g in regs:
            b = np.broadcast_to(np.asarray(b, U64), (T,))
            for e in range(per):
                cols.append(self.element_ids(b, g, e * eb, eb))
        return np.stack(cols, axis=1)

    def packed_ids(self, regs, bits: int, per: int, T: int) -> np.ndarray:
        """The values of a register list's elements narrower than a byte (``bits`` wide, ``per`` to a register from
        the low bits), ``int64[T, registers * per]``: an element of a byte that holds a packed byte of a tensor
        (``PACK``) is that tensor's element (the byte's first plus the element's place in it); of a concrete byte,
        the number its bits give; of anything else, a BAD value (bytes this engine cannot split)."""
        in_byte = 8 // bits
        cols = []
        for b, g in regs:
            b = np.broadcast_to(np.asarray(b, U64), (T,))
            for byte in range(per // in_byte):
                v = self.resolve(self.element_ids(b, g, byte, 1))
                cols += self._split_byte(v, g[:, byte] if g is not None else None, bits)
        return np.stack(cols, axis=1)

    def packed_elements(self, tags: np.ndarray, bits: np.ndarray, width: int) -> np.ndarray:
        """The elements ``width`` bits wide packed in memory bytes ``tags``/``bits`` [n, 1], from the low bits
        (``int64[n, 8 / width]``), as ``packed_ids`` splits a register's bytes."""
        v = self.resolve(self.element_ids(from_bytes(bits), tags, 0, 1))
        return np.stack(self._split_byte(v, tags[:, 0], width), axis=1)

    def _split_byte(self, v: np.ndarray, g: np.ndarray | None, bits: int) -> list[np.ndarray]:
        """The ``8 / bits`` elements of the bytes whose values are ``v`` (their tags ``g``), lowest bits first."""
        in_byte = 8 // bits
        T = len(v)
        kind, _ = self.kind_width(v)
        ok = kind == PACK
        first = np.zeros(T, np.int64)
        if ok.any():
            r = self.row(v[ok])
            first[ok] = r[:, 2]
            ok[ok] = r[:, 3] == in_byte
        const = (kind == CONST) | (v == 0)
        cval = np.zeros(T, np.int64)
        nz = const & (v != 0)
        if nz.any():
            cval[nz] = self.row(v[nz])[:, 2]
        bad = ~ok & ~const
        cols = []
        for p in range(in_byte):
            out = np.zeros(T, np.int64)
            out[ok] = first[ok] + p
            if len(self.zero_atoms):
                out[ok & np.isin(out, self.zero_atoms)] = 0
            if const.any():
                out[const] = self._consts(((cval[const] >> (p * bits)) & ((1 << bits) - 1)).astype(U64), 1)
            if bad.any():
                out[bad] = self.alloc(BAD, 1, g[bad] if g is not None else UNDEF, n=int(bad.sum()))
            cols.append(out)
        return cols

    def _consts(self, field: np.ndarray, eb: int) -> np.ndarray:
        out = np.zeros(field.shape[0], np.int64)
        nz = field != 0
        for val in np.unique(field[nz]):
            key = (int(val), eb)
            if key not in self.consts:
                self.consts[key] = int(self.alloc(CONST, eb, int(val), n=1)[0])
            out[field == val] = self.consts[key]
        return out

    # ------------------------------------------------------------------ the instructions the domain owns

    def convert(self, cta, bits: np.ndarray, tags: np.ndarray, st: str, dt: str,
                m: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        """A conversion of data: the identity on atoms.  Where the source is one whole value of the source type, the
        result is that value (a new value of the new width where the width changes); where the source only holds
        data in some bytes (an 8-bit element in a 16-bit register), the bytes move as the integer conversion moves
        them (zero-extension adds zero bytes, sign-extension bytes that are no data's)."""
        from ..ptx.syntax import TYPE_BITS
        sb, db = max(1, TYPE_BITS[st] // 8), max(1, TYPE_BITS[dt] // 8)
        T = bits.shape[0]
        g = tags[:, :sb]
        first = g[:, 0]
        whole = (first >= 0) & (first & 7 == 0)
        for k in range(1, sb):
            whole &= g[:, k] == first + k
        if whole.any():
            _, w = self.kind_width(first[whole] >> 3)
            sel = np.flatnonzero(whole)
            whole[sel[w != sb]] = False
        out = np.full((T, db), CONCRETE, np.int64)
        if whole.any():
            ids = first[whole] >> 3
            if sb != db:
                ids = self.alloc(CONV, db, ids, n=len(ids))
            out[whole] = ids[:, None] * 8 + np.arange(db)[None, :]
        part = ~whole
        if part.any():
            n = min(sb, db)
            out[part, :n] = g[part, :n]
            if db > sb and st.startswith("s"):
                out[part, sb:] = np.where((g[part, sb - 1] >= 0)[:, None], UNDEF, CONCRETE)
        return np.zeros(T, U64), out

    def mma(self, cta, index: int, form, warps: np.ndarray, a_regs, b_regs, c_regs,
            a_cols: np.ndarray | None = None):
        """D = C + A x B for each warp of ``warps``: new SUM values, one per D element and lane."""
        M, N, K = form.shape
        T = cta.T
        W = len(warps)
        th = warps[:, None] * 32 + np.arange(32)[None, :]  # [W, 32]

        def ids(regs, op) -> np.ndarray:
            if op.element_bits < 8:
                return self.packed_ids(regs, op.element_bits, op.per_register, T)
            return self.operand_ids(regs, op.element_bits // 8, op.per_register, op.register_bits // 8, T)

        a = ids(a_regs, form.a)
        b = ids(b_regs, form.b)
        c = ids(c_regs, form.c)
        G = getattr(form, "groups", 1)  # MMA computations per warp (m8n8k4's quad-pairs)
        U = W * G

        def unit(op) -> np.ndarray:
            """The computation each (warp, lane, element) belongs to, ``[W, 32, n]``."""
            g = op.group if G > 1 else np.zeros_like(op.row)
            return np.arange(W)[:, None, None] * G + g[None]

        Aw = np.zeros((U, M, K), np.int64)
        Bw = np.zeros((U, K, N), np.int64)
        Cw = np.zeros((U, M, N), np.int64)
        # a sparse A: each warp's stored elements at the logical columns its metadata gives (``a_cols``)
        Aw[unit(form.a), form.a.row[None], form.a.col[None] if a_cols is None else a_cols] = a[th]
        Bw[unit(form.b), form.b.row[None], form.b.col[None]] = b[th]
        Cw[unit(form.c), form.c.row[None], form.c.col[None]] = c[th]
        key = (M, N, K) if G == 1 else (M, N, K, G)  # a form of G computations: its rows come G at a time
        fi = self.form_index.get(key)
        if fi is None:
            fi = self.form_index[key] = len(self.forms)
            self.forms.append((Grow(M * K), Grow(K * N), Grow(3), (M, N, K)))
        ta, tb, info, _ = self.forms[fi]
        row0 = ta.extend(Aw.reshape(U, -1))
        tb.extend(Bw.reshape(U, -1))
        info.extend(np.stack([np.full(U, index), np.full(U, cta.index), np.repeat(warps, G)], axis=1))
        self.mmas += W
        dr, dc = form.d.row, form.d.col  # [32, nD]
        nD = dr.shape[1]
        ud = unit(form.d)  # [W, 32, nD]
        prev = Cw[ud, dr[None, :, :], dc[None, :, :]]  # [W, 32, nD]
        rows = row0 + ud
        new = self.alloc(SUM, form.d.element_bits // 8, prev.reshape(-1), (fi << 40) + rows.reshape(-1),
                         np.broadcast_to(dr[None], (W, 32, nD)).reshape(-1),
                         np.broadcast_to(dc[None], (W, 32, nD)).reshape(-1)).reshape(W, 32, nD)
        eb = form.d.element_bits // 8
        out = []
        for j in range(form.d.registers):
            tags = np.full((T, form.d.register_bits // 8), CONCRETE, np.int64)
            for e in range(form.d.per_register):
                i = j * form.d.per_register + e
                tags[th.reshape(-1), e * eb:(e + 1) * eb] = new[:, :, i].reshape(-1, 1) * 8 + np.arange(eb)[None, :]
            out.append((np.zeros(T, U64), tags))
        return out

    # ------------------------------------------------------------------ warpgroup and Tensor Memory MMAs

    def elements(self, tags: np.ndarray, bits: np.ndarray) -> np.ndarray:
        """The value of each element of memory bytes ``tags``/``bits`` [n, element bytes] (``int64[n]``)."""
        return self.element_ids(from_bytes(bits), tags, 0, tags.shape[1])

    def register_elements(self, regs, eb: int, per: int, T: int) -> np.ndarray:
        """The values of a register list's elements, ``[T, registers * per]``."""
        return self.operand_ids(regs, eb, per, 0, T)

    def zeros(self, shape: tuple[int, ...]) -> np.ndarray:
        return np.zeros(shape, np.int64)

    def matmul(self, cta, index: int, kind: str, A: np.ndarray, B: np.ndarray, C: np.ndarray,
               d_bytes: int, info: np.ndarray, SA: np.ndarray | None = None, SB: np.ndarray | None = None
               ) -> np.ndarray:
        """D = C + A x B for each unit (a warpgroup, an MMA of Tensor Memory): ``A`` [W, M, K], ``B`` [W, K, N], ``C``
        [W, M, N] values; a new SUM value per element of D [W, M, N].  ``info`` [W, k]: what the chain needs of each
        unit (instruction, CTA, unit, the descriptors), kept with its A and B rows.  A block-scaled MMA gives the scale
        factor of each element: ``SA`` [W, M, K] (A's (m, k)), ``SB`` [W, G, K, N] (B's (k, n) for the rows of group
        g of G: each lane quarter of the data path reads its own copy)."""
        W, M, K = A.shape
        N = B.shape[2]
        G = SB.shape[1] if SB is not None else 0
        key = (kind + (f"/scaled{G}" if SB is not None else ""), M, N, K)
        fi = self.form_index.get(key)
        if fi is None:
            fi = self.form_index[key] = len(self.forms)
            self.forms.append((Grow(M * K), Grow(K * N), Grow(info.shape[1]), (M, N, K)))
            if SB is not None:
                self.scales[fi] = (Grow(M * K), Grow(G * K * N), G)
        ta, tb, inf, _ = self.forms[fi]
        row0 = ta.extend(A.reshape(W, -1))
        tb.extend(B.reshape(W, -1))
        inf.extend(info)
        if SA is not None and SB is not None:
            tsa, tsb, _ = self.scales[fi]
            tsa.extend(SA.reshape(W, -1))
            tsb.extend(SB.reshape(W, -1))
        self.mmas += W
        r = np.broadcast_to(np.arange(M)[None, :, None], (W, M, N)).reshape(-1)
        c = np.broadcast_to(np.arange(N)[None, None, :], (W, M, N)).reshape(-1)
        rows = np.broadcast_to((row0 + np.arange(W))[:, None, None], (W, M, N)).reshape(-1)
        return self.alloc(SUM, d_bytes, C.reshape(-1), (fi << 40) + rows, r, c).reshape(W, M, N)

    def register_bytes(self, D: np.ndarray, threads: np.ndarray, row: np.ndarray, col: np.ndarray, per: int,
                       eb: int, rbytes: int, T: int) -> list[tuple[np.ndarray, np.ndarray]]:
        """Registers holding ``D`` [W, M, N]: thread ``threads[w, j]``'s element ``i`` is ``D[w, row[j, i], col[j, i]]``
        (element ``i`` is element ``i % per`` of register ``i // per``): (bits, tags) per register."""
        W = D.shape[0]
        vals = D[np.arange(W)[:, None, None], row[None], col[None]]  # [W, J, n]
        th = threads.reshape(-1)
        out = []
        for j in range(row.shape[1] // per):
            tags = np.full((T, rbytes), CONCRETE, np.int64)
            for e in range(per):
                v = vals[:, :, j * per + e].reshape(-1)
                tags[th, e * eb:(e + 1) * eb] = v[:, None] * 8 + np.arange(eb)[None, :]
            out.append((np.zeros(T, U64), tags))
        return out

    def memory_bytes(self, vals: np.ndarray, eb: int) -> tuple[np.ndarray, np.ndarray]:
        """Memory bytes (tags, bits) [n, eb] holding the values ``vals`` [n] (Tensor Memory cells, TMA stores)."""
        return vals[:, None] * 8 + np.arange(eb)[None, :], np.zeros((len(vals), eb), np.uint8)

    def add(self, bits: list[np.ndarray], tags: list[np.ndarray], nb: int) -> tuple[np.ndarray, np.ndarray] | None:
        """A float ``add`` of two sums of products of ``nb`` bytes (each thread): a new ADD value, or None where an
        operand is not one whole sum of that width (the caller reports it as data in arithmetic)."""
        a = self.element_ids(bits[0], tags[0], 0, nb)
        b = self.element_ids(bits[1], tags[1], 0, nb)
        ka, _ = self.kind_width(self.resolve(a))
        kb, _ = self.kind_width(self.resolve(b))
        if not (np.isin(ka, (SUM, ADD)).all() and np.isin(kb, (SUM, ADD)).all()):
            return None  # only tensor-core sums are added: other data in arithmetic is not followed
        new = self.alloc(ADD, nb, a, b)
        return np.zeros(len(a), U64), new[:, None] * 8 + np.arange(nb)[None, :]

    def moved(self, cta, index: int, rows: np.ndarray, tags: np.ndarray, addr: np.ndarray,
              space: str) -> np.ndarray:
        """The chain's run: data a load moved becomes a MOVE value (instruction, thread, address of its first byte)."""
        if not (tags >= 0).any():
            return tags
        n = tags.shape[1]
        out = tags.copy()
        first = (tags >= 0) & (tags & 7 == 0)
        r_idx, p_idx = np.nonzero(first)
        if not len(r_idx):
            return tags
        v = tags[r_idx, p_idx] >> 3
        _, w = self.kind_width(v)
        fits = p_idx + w <= n
        r_idx, p_idx, v, w = r_idx[fits], p_idx[fits], v[fits], w[fits]
        whole = np.ones(len(v), bool)
        for k in range(1, int(w.max()) if len(w) else 1):
            has = k < w
            pos = np.minimum(p_idx + k, n - 1)
            whole &= ~has | (tags[r_idx, pos] == v * 8 + k)
        r_idx, p_idx, v, w = r_idx[whole], p_idx[whole], v[whole], w[whole]
        if not len(v):
            return tags
        thread = rows[r_idx].astype(np.int64)
        address = (addr[r_idx].astype(np.int64) + p_idx) if addr.ndim == 1 else addr[r_idx, p_idx].astype(np.int64)
        new = self.alloc(MOVE, w, v, index, (cta.index << 32) | thread, address)
        for k in range(int(w.max())):
            has = k < w
            out[r_idx[has], p_idx[has] + k] = new[has] * 8 + k
        del space
        return out

    # ------------------------------------------------------------------ the verdict

    def output_values(self, gmem: GlobalMemory) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(value of each output element or -1, status code, write count), elements row-major.  Status: 0 one whole
        value, 1 never written, 2 partly written, 3 bytes of different values (or of no value: undefined)."""
        t = self.launch.tensors()[self.launch.computes.output.tensor]
        region = gmem.by_name[t.name]
        eb = t.element_bytes
        starts = element_starts(t)
        offs = starts[:, None] + np.arange(eb)[None, :]
        tags = region.tags[offs]
        bits = region.bits[offs]
        counts = region.writes[offs]
        writes = counts.max(axis=1).astype(np.int64)
        E = t.size
        status = np.zeros(E, np.int64)
        never = (counts == 0).all(axis=1)
        partial = (counts == 0).any(axis=1) & ~never
        status[never] = 1
        status[partial] = 2
        vals = np.full(E, -1, np.int64)
        ok = ~never & ~partial
        bits64 = np.zeros(E, U64)
        for k in range(eb):
            bits64 |= bits[:, k].astype(U64) << np.uint64(8 * k)
        idx = np.flatnonzero(ok)
        if len(idx):
            ids = self.element_ids(bits64[idx], tags[idx], 0, eb)
            kinds, _ = self.kind_width(ids)
            vals[idx] = ids
            status[idx[kinds == BAD]] = 3
        return vals, status, writes


def element_starts(t: Tensor) -> np.ndarray:
    """Byte offset of each element of ``t``, row-major."""
    offs = np.zeros(1, np.int64)
    for n, s in zip(t.shape, t.strides):
        offs = (offs[:, None] + np.arange(n, dtype=np.int64)[None, :] * s).reshape(-1)
    return offs * t.element_bytes


__all__ = ["ADD", "ATOM", "BAD", "CONST", "CONV", "MOVE", "SUM", "Symbolic", "element_starts"]
