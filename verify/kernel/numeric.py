"""The numeric engine: the same PTX run on exact random integers, compared with ``numpy.einsum``.

It shares no value domain with the symbolic engine: each input element is a random integer (seeded, so runs are
reproducible), data moves as plain bits (the integer semantics of every instruction), a tensor-core instruction
multiplies and adds its operands' integers modulo 2^64 (the layouts read through the catalog's scalar face, not the
numpy one the symbolic engine reads), and a conversion keeps the integer (truncated to the narrower width, or
zero-extended).  The output is right where it equals the einsum of the inputs modulo 2^w, ``w`` the narrowest
width the sums passed through (the output's type, the accumulators').  Inputs are drawn below 2^(narrowest element
width the kernel's ``mma`` instructions read), so a kernel that narrows its inputs before the tensor cores keeps
them.  A wrong product goes unseen only when its difference vanishes modulo 2^w: for 16-bit data about once in
2^16 elements, for 8-bit data about once in 2^8 (stated, and the symbolic engine decides: see ``verdict``).
"""
from __future__ import annotations

import numpy as np

from ..ptx.syntax import TYPE_BITS, Instr, Module
from .bytes import CONCRETE, UNDEF, U64, from_bytes, mask_of
from .launch import Launch, Tensor
from .memory import GlobalMemory, tensor_bytes
from .symbolic import element_starts

SEED = 0x9E3779B97F4A7C15


def mma_input_bits(module: Module) -> int:
    """The narrowest element width an ``mma`` of ``module`` reads (64 when it has none)."""
    widths = [64]
    for fn in module.functions:
        for st in fn.body:
            if isinstance(st, Instr) and st.base in ("mma", "wgmma"):
                ts = [p for p in st.parts if p in TYPE_BITS and p != "pred"]
                if len(ts) >= 3:
                    widths += [TYPE_BITS[ts[1]], TYPE_BITS[ts[2]]]
    return min(widths)


class Numeric:
    name = "numeric"

    def __init__(self, launch: Launch, module: Module, seed: int = 0) -> None:
        self.launch = launch
        self.seed = seed
        self.input_bits = mma_input_bits(module)
        self.acc_bits = 64
        out = launch.computes.output.tensor
        self.tensors: list[Tensor] = [a for a in launch.tensors().values() if a.name != out]
        self.values: dict[str, np.ndarray] = {}
        self.mmas = 0

    def init_memory(self, gmem: GlobalMemory) -> None:
        rng = np.random.Generator(np.random.PCG64([SEED, self.seed]))
        for t in self.tensors:
            if t.packed > 1:  # packed elements (s4, u4, b1): random bytes, each element its bits
                region = gmem.by_name[t.name]
                elem, _ = tensor_bytes(t)
                at = np.flatnonzero(elem >= 0)
                raw = rng.integers(0, 256, size=len(at), dtype=np.uint64)
                w = 8 // t.packed
                vals = np.zeros(t.size, np.uint64)
                nz = t.nonzero()
                for p in range(t.packed):
                    if nz is not None:  # structural zeros are the number 0
                        raw &= ~np.where(nz.reshape(-1)[elem[at] + p], np.uint64(0),
                                         np.uint64(((1 << w) - 1) << (p * w)))
                    vals[elem[at] + p] = (raw >> np.uint64(p * w)) & np.uint64((1 << w) - 1)
                self.values[t.name] = vals.reshape(t.shape)
                region.bits[at] = raw.astype(np.uint8)
                region.tags[: len(elem)] = UNDEF
                region.tags[at] = 0
                continue
            bits = min(8 * t.element_bytes, self.input_bits)
            vals = rng.integers(0, 1 << bits, size=t.size, dtype=np.uint64, endpoint=False) if bits < 64 else \
                rng.integers(0, 1 << 63, size=t.size, dtype=np.uint64) * np.uint64(2) + \
                rng.integers(0, 2, size=t.size, dtype=np.uint64)
            nz = t.nonzero()
            if nz is not None:  # structural zeros are the number 0
                vals = np.where(nz.reshape(-1), vals, np.uint64(0))
            self.values[t.name] = vals.reshape(t.shape)
            region = gmem.by_name[t.name]
            elem, byte = tensor_bytes(t)
            inside = elem >= 0
            e = np.where(inside, elem, 0)
            region.bits[: len(elem)] = np.where(inside, (vals[e] >> (byte.astype(np.uint64) * np.uint64(8)))
                                                & np.uint64(0xFF), 0).astype(np.uint8)
            region.tags[: len(elem)] = np.where(inside, byte, UNDEF)

    def describe_tags(self, tags: np.ndarray) -> str:
        return "input data"

    def moved(self, cta, index, rows, tags, addr, space):
        return tags

    def convert(self, cta, bits: np.ndarray, tags: np.ndarray, st: str, dt: str,
                m: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        """A conversion of data keeps the integer: truncated to a narrower width, zero-extended to a wider one."""
        sb, db = max(1, TYPE_BITS[st] // 8), max(1, TYPE_BITS[dt] // 8)
        out = bits & mask_of(8 * min(sb, db))
        T = bits.shape[0]
        g = tags[:, :sb]
        t = np.full((T, db), CONCRETE, np.int64)
        n = min(sb, db)
        t[:, :n] = g[:, :n]
        whole = (g >= 0).all(axis=1)
        t[whole] = np.arange(db, dtype=np.int64)[None, :] % 8
        return out, t

    def mma(self, cta, index: int, form, warps: np.ndarray, a_regs, b_regs, c_regs,
            a_cols: np.ndarray | None = None):
        M, N, K = form.shape
        T = cta.T
        W = len(warps)
        th = warps[:, None] * 32 + np.arange(32)[None, :]

        def vals(regs, op) -> np.ndarray:
            """Each element's integer (an undefined one's bits are whatever the register holds: its data is the
            value, as the symbolic engine's is a value that is no input element)."""
            eb = op.element_bits
            cols = []
            for b, _ in regs:
                b = np.broadcast_to(np.asarray(b, U64), (T,))
                for e in range(op.per_register):
                    cols.append((b >> np.uint64(e * eb)) & mask_of(eb))
            return np.stack(cols, axis=1)

        a = vals(a_regs, form.a)
        b = vals(b_regs, form.b)
        c = vals(c_regs, form.c)
        G = getattr(form, "groups", 1)  # MMA computations per warp (m8n8k4's quad-pairs)
        U = W * G

        def unit(op) -> np.ndarray:
            """The computation each (warp, lane, element) belongs to, ``[W, 32, n]``."""
            g = op.group if G > 1 else np.zeros_like(op.row)
            return np.arange(W)[:, None, None] * G + g[None]

        Aw = np.zeros((U, M, K), U64)
        Bw = np.zeros((U, K, N), U64)
        Cw = np.zeros((U, M, N), U64)
        # a sparse A: each warp's stored elements at the logical columns its metadata gives (``a_cols``)
        Aw[unit(form.a), form.a.row[None], form.a.col[None] if a_cols is None else a_cols] = a[th]
        Bw[unit(form.b), form.b.row[None], form.b.col[None]] = b[th]
        Cw[unit(form.c), form.c.row[None], form.c.col[None]] = c[th]
        Dw = Cw + np.einsum("wmk,wkn->wmn", Aw, Bw)
        dbits = form.d.element_bits
        Dw &= mask_of(dbits)
        self.acc_bits = min(self.acc_bits, dbits)
        self.mmas += W
        out = []
        eb = dbits // 8
        for j in range(form.d.registers):
            bits = np.zeros(T, U64)
            tags = np.full((T, form.d.register_bits // 8), CONCRETE, np.int64)
            for e in range(form.d.per_register):
                i = j * form.d.per_register + e
                v = Dw[unit(form.d)[:, :, i], form.d.row[:, i][None, :], form.d.col[:, i][None, :]]  # [W, 32]
                bits[th.reshape(-1)] |= v.reshape(-1) << np.uint64(e * dbits)
                tags[th.reshape(-1), e * eb:(e + 1) * eb] = np.arange(e * eb, (e + 1) * eb)[None, :] % 8
            out.append((bits, tags))
        return out

    def add(self, bits: list[np.ndarray], tags: list[np.ndarray], nb: int) -> tuple[np.ndarray, np.ndarray] | None:
        """A float ``add`` of two data values: their integers added modulo 2^(8 nb)."""
        self.acc_bits = min(self.acc_bits, 8 * nb)
        out = (np.asarray(bits[0], U64) + np.asarray(bits[1], U64)) & mask_of(8 * nb)
        return out, np.broadcast_to(np.arange(nb, dtype=np.int64) % 8, (len(out), nb)).copy()

    # ------------------------------------------------------------------ warpgroup and Tensor Memory MMAs

    def elements(self, tags: np.ndarray, bits: np.ndarray) -> np.ndarray:
        """Each element's integer (little-endian bytes) of memory bytes [n, element bytes]."""
        return from_bytes(bits)

    def packed_elements(self, tags: np.ndarray, bits: np.ndarray, width: int) -> np.ndarray:
        """The elements ``width`` bits wide packed in memory bytes [n, 1], from the low bits (``[n, 8 / width]``)."""
        b = from_bytes(bits)
        return np.stack([(b >> np.uint64(p * width)) & mask_of(width) for p in range(8 // width)], axis=1)

    def register_elements(self, regs, eb: int, per: int, T: int) -> np.ndarray:
        cols = []
        for b, _ in regs:
            b = np.broadcast_to(np.asarray(b, U64), (T,))
            for e in range(per):
                cols.append((b >> np.uint64(e * 8 * eb)) & mask_of(8 * eb))
        return np.stack(cols, axis=1)

    def packed_ids(self, regs, bits: int, per: int, T: int) -> np.ndarray:
        """The integers of a register list's elements narrower than a byte (``bits`` wide, ``per`` to a register from
        the low bits), ``[T, registers * per]``."""
        cols = []
        for b, _ in regs:
            b = np.broadcast_to(np.asarray(b, U64), (T,))
            for e in range(per):
                cols.append((b >> np.uint64(e * bits)) & mask_of(bits))
        return np.stack(cols, axis=1)

    def zeros(self, shape: tuple[int, ...]) -> np.ndarray:
        return np.zeros(shape, U64)

    def matmul(self, cta, index: int, kind: str, A: np.ndarray, B: np.ndarray, C: np.ndarray,
               d_bytes: int, info: np.ndarray, SA: np.ndarray | None = None, SB: np.ndarray | None = None
               ) -> np.ndarray:
        if SA is not None and SB is not None:
            W, M, K = A.shape
            G = SB.shape[1]
            rows = np.arange(M) // (M // G)  # each row's group: its lane quarter's copy of B's scale factors
            prod = np.einsum("wmk,wmkn->wmn", A * SA, B[:, None, :, :] * SB[:, rows, :, :])
            D = (C + prod) & mask_of(8 * d_bytes)
        else:
            D = (C + np.einsum("wmk,wkn->wmn", A, B)) & mask_of(8 * d_bytes)
        self.acc_bits = min(self.acc_bits, 8 * d_bytes)
        self.mmas += A.shape[0]
        return D

    def register_bytes(self, D: np.ndarray, threads: np.ndarray, row: np.ndarray, col: np.ndarray, per: int,
                       eb: int, rbytes: int, T: int) -> list[tuple[np.ndarray, np.ndarray]]:
        W = D.shape[0]
        th = threads.reshape(-1)
        out = []
        for j in range(row.shape[1] // per):
            bits = np.zeros(T, U64)
            tags = np.full((T, rbytes), CONCRETE, np.int64)
            for e in range(per):
                i = j * per + e
                v = D[np.arange(W)[:, None], row[:, i][None, :], col[:, i][None, :]].reshape(-1)
                bits[th] |= (v & mask_of(8 * eb)) << np.uint64(e * 8 * eb)
                tags[th, e * eb:(e + 1) * eb] = np.arange(e * eb, (e + 1) * eb)[None, :] % 8
            out.append((bits, tags))
        return out

    def memory_bytes(self, vals: np.ndarray, eb: int) -> tuple[np.ndarray, np.ndarray]:
        v = np.asarray(vals, U64)
        bits = ((v[:, None] >> (np.arange(eb, dtype=np.uint64) * np.uint64(8))[None, :]) & np.uint64(0xFF)).astype(np.uint8)
        return np.broadcast_to(np.arange(eb, dtype=np.int64) % 8, (len(v), eb)).copy(), bits

    # ------------------------------------------------------------------ the verdict

    def compare(self, gmem: GlobalMemory) -> tuple[np.ndarray, int]:
        """(wrong: bool per output element, row-major; the width the comparison is modulo)."""
        ein = self.launch.computes
        t = self.launch.tensors()[ein.output.tensor]
        region = gmem.by_name[t.name]
        eb = t.element_bytes
        offs = element_starts(t)[:, None] + np.arange(eb)[None, :]
        got = np.zeros(t.size, U64)
        for k in range(eb):
            got |= region.bits[offs[:, k]].astype(U64) << np.uint64(8 * k)
        written = (region.writes[offs] > 0).all(axis=1)
        undefined = (region.tags[offs] == UNDEF).any(axis=1)
        ext = extents(self.launch)
        ref = np.einsum(ein.numpy_subscripts(), *(expand(f, self.values[f.tensor], ext) for f in ein.factors))
        ref = ref.reshape(-1)
        w = min(8 * eb, self.acc_bits)
        wrong = (((got ^ ref) & mask_of(w)) != 0) | undefined
        return wrong & written, w


def extents(launch: Launch) -> dict[str, int]:
    """Each index's extent, from the tensors where it stands whole."""
    ein = launch.computes
    tensors = launch.tensors()
    out: dict[str, int] = {}
    for acc in (ein.output, *ein.factors):
        for k, n in enumerate(acc.indices):
            if acc.divisor(k) == 1:
                out.setdefault(n, tensors[acc.tensor].shape[k])
    return out


def expand(f, values: np.ndarray, extent: dict[str, int]) -> np.ndarray:
    """A factor's values over its whole indices: ``SFA[m, k / 32]`` as an array over (m, k) (``SFA[m, k // 32]``),
    so that ``numpy.einsum`` sums it with the others."""
    if not f.divisors:
        return values
    grids = np.meshgrid(*[np.arange(extent[n]) for n in f.indices], indexing="ij")
    return values[tuple(g // f.divisor(k) for k, g in enumerate(grids))]


__all__ = ["Numeric", "expand", "extents", "mma_input_bits"]
