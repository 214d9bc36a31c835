"""Global memory (the launch's tensors, each a region at an address of its own), shared memory (one CTA's), and
what every byte of them holds: bits, a tag (``verify.kernel.bytes``), how often and by whom it was written.

Addresses are exact 64-bit integers.  An address in no region is unmapped (a finding); a region's bytes outside
its tensor's elements (the gaps of strides) are never written.  Shared memory also keeps what race checks need:
the barrier epoch and warp of each byte's last write and reads, and the ``cp.async`` copies still in flight.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .bytes import CONCRETE, UNDEF
from .launch import Tensor

GLOBAL_BASE = 1 << 40  # region k of global memory starts at (k + 1) << 40
SHARED_WINDOW = 0x7F00_0000_0000  # generic addresses of shared memory: window + shared address
PARAM_WINDOW = 0x7E00_0000_0000  # generic addresses of the kernel's parameters: window + parameter-space address
LOCAL_WINDOW = 0x7C00_0000_0000  # generic addresses of a thread's local memory: window + local address
WRITER_NONE = -1


def writer_code(cta: int, thread: int, instr: int) -> int:
    return (cta << 40) | (thread << 24) | instr


def writer_parts(code: int) -> tuple[int, int, int]:
    return code >> 40, (code >> 24) & 0xFFFF, code & 0xFFFFFF


@dataclass
class Region:
    """``size`` bytes at ``base``: a tensor's (``tensor``), or the null page of an unlisted pointer."""

    name: str
    base: int
    size: int
    tensor: Tensor | None
    output: bool
    tags: np.ndarray  # int64[size]
    bits: np.ndarray  # uint8[size]
    writes: np.ndarray  # uint8[size], saturating
    writer: np.ndarray  # int64[size]: writer_code of the last write
    atomic: np.ndarray | None = None  # bool[size]: the last write was an atomic update (``ops_atom``)
    gap: np.ndarray | None = None  # bool[size]: bytes between the tensor's elements (strides)

    def element_of(self, offset: int) -> tuple[int, ...] | None:
        """The tensor indices of the element holding byte ``offset`` (``None``: a gap, or no tensor).  The strides
        are nested (``launch.overlap`` refuses others), so the indices are found largest stride first."""
        t = self.tensor
        if t is None:
            return None
        rem = offset // t.element_bytes * t.packed  # a packed byte: its first element
        idx = [0] * len(t.shape)
        for d in sorted(range(len(t.shape)), key=lambda d: -t.strides[d]):
            s = t.strides[d]
            if s == 0:
                continue
            q = min(rem // s, t.shape[d] - 1)
            idx[d] = q
            rem -= q * s
        return tuple(idx) if rem == 0 else None


@dataclass
class Event:
    """Something the launch did that is a finding (an access out of bounds, a read of memory never written, a
    race): the instruction, the CTA, the thread, the address, and words."""

    kind: str
    instr: int
    cta: int
    thread: int
    address: int
    space: str
    words: str
    count: int = 1


@dataclass
class Events:
    """Findings of one run: the first of each kind (by order of execution) and how many there were."""

    first: dict[str, Event] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)

    def add(self, kind: str, instr: int, cta: int, thread: int, address: int, space: str, words: str, n: int) -> None:
        if not n:
            return
        e = self.first.get(kind)
        if e is None:
            self.first[kind] = Event(kind, instr, cta, thread, address, space, words, n)
            self.order.append(kind)
        else:
            e.count += n

    def all(self) -> list[Event]:
        return [self.first[k] for k in self.order]


def tensor_bytes(t: Tensor) -> tuple[np.ndarray, np.ndarray]:
    """(flat element index, byte within the element) of each byte of the tensor's span (-1: a gap)."""
    span = t.span
    elem = np.full(span, -1, np.int64)
    byte = np.zeros(span, np.int64)
    eb = t.element_bytes
    offs = np.zeros(1, np.int64)
    for n, s in zip(t.shape, t.strides):
        offs = (offs[:, None] + np.arange(n, dtype=np.int64)[None, :] * s).reshape(-1)
    # offs is in row-major index order: element k (flat, row-major) starts at offs[k] elements
    if t.packed > 1:  # a byte holds ``packed`` consecutive elements: each byte is its first element's
        first = np.flatnonzero(offs % t.packed == 0)
        elem[offs[first] // t.packed] = first
        return elem, byte
    start = offs * eb
    for b in range(eb):
        elem[start + b] = np.arange(t.size, dtype=np.int64)
        byte[start + b] = b
    return elem, byte


class GlobalMemory:
    """The launch's tensors as regions (in argument order), plus the null page."""

    def __init__(self, tensors: list[Tensor], outputs: set[str]) -> None:
        self.regions: list[Region] = []
        for k, t in enumerate(tensors):
            size = max(t.span, 1)
            self.regions.append(Region(t.name, GLOBAL_BASE * (k + 1), size, t, t.name in outputs,
                                       np.full(size, UNDEF, np.int64), np.zeros(size, np.uint8),
                                       np.zeros(size, np.uint8), np.full(size, WRITER_NONE, np.int64)))
        for r in self.regions:
            if r.tensor is not None:
                elem, _ = tensor_bytes(r.tensor)
                gap = np.zeros(r.size, bool)
                gap[: len(elem)] = elem < 0
                r.gap = gap
                if r.output and r.tensor.zero:  # ``init = "zero"``: its elements' bytes start as concrete zeros
                    r.tags[: len(elem)][elem >= 0] = CONCRETE
        for r in self.regions:
            r.atomic = np.zeros(r.size, bool)
        self.bases = np.array([r.base for r in self.regions] or [GLOBAL_BASE], np.uint64)
        self.ends = np.array([r.base + r.size for r in self.regions] or [GLOBAL_BASE], np.uint64)
        self.by_name = {r.name: r for r in self.regions}

    def base_of(self, name: str) -> int:
        return self.by_name[name].base

    def locate(self, addr: np.ndarray, nbytes: int) -> tuple[np.ndarray, np.ndarray]:
        """(region index or -1, offset) of each address; -1 where the access is not inside one region."""
        k = np.searchsorted(self.bases, addr, side="right").astype(np.int64) - 1
        ok = k >= 0
        kk = np.where(ok, k, 0)
        ok &= addr + np.uint64(nbytes) <= self.ends[kk]
        ok &= addr >= self.bases[kk]
        off = (addr - self.bases[kk]).astype(np.int64)
        return np.where(ok, kk, -1), off

    def describe(self, address: int) -> str:
        """An address in the user's terms: ``A[17, 9]`` (byte 1), or where it is relative to the regions."""
        for r in self.regions:
            if r.base <= address < r.base + r.size:
                idx = r.element_of(address - r.base)
                if idx is None:
                    return f"{r.name} + {address - r.base} bytes (between elements)"
                t = r.tensor
                assert t is not None
                sub = (address - r.base) % t.element_bytes
                return f"{r.name}[{', '.join(map(str, idx))}]" + (f" (byte {sub})" if sub else "")
        if address < GLOBAL_BASE:
            return f"0x{address:x} (no tensor: a null or unlisted pointer)"
        return f"0x{address:x} (outside every tensor)"


@dataclass
class Copy:
    """A ``cp.async`` in flight: where it writes, what, from which instruction."""

    instr: int
    dst: np.ndarray  # int64[n] shared addresses of the first byte, one per active thread
    threads: np.ndarray  # int64[n]
    tags: np.ndarray  # int64[n, size]
    bits: np.ndarray  # uint8[n, size]


class SharedMemory:
    """One CTA's shared memory: ``size`` bytes; race bookkeeping per byte."""

    def __init__(self, size: int) -> None:
        self.size = size
        n = max(size, 1)
        self.tags = np.full(n, UNDEF, np.int64)
        self.bits = np.zeros(n, np.uint8)
        self.writer = np.full(n, WRITER_NONE, np.int64)
        self.w_epoch = np.full(n, -1, np.int64)
        self.w_warp = np.full(n, -1, np.int64)
        self.r_epoch = np.full(n, -1, np.int64)
        self.r_warps = np.zeros(n, np.uint64)
        self.pending = np.zeros(n, np.int32)
        self.pending_instr = np.full(n, -1, np.int64)
        self.reading = np.zeros(n, np.int32)  # asynchronous readers in flight (wgmma, tcgen05.mma, TMA stores)
        self.reading_instr = np.full(n, -1, np.int64)
        self.unfenced = np.zeros(n, bool)  # written by the generic proxy, no fence.proxy.async since
        # in a cluster: the %cluster_ctarank of each byte's last writer (-1: none, or the asynchronous proxy) and that
        # CTA's release clock at the write (``order.ClusterSync``): another CTA's read is ordered after the write
        # only through a release and acquire since (barrier.cluster, an mbarrier the writer arrived on)
        self.w_cta = np.full(n, -1, np.int64)
        self.w_clock = np.zeros(n, np.int64)
        self.c_atomic = np.zeros(n, bool)  # the last write was an atomic update (two CTAs' updates do not race)
        # each cluster CTA's last read of each byte: rank -> (its release clock at the read, -1: none; the step read)
        self.r_cluster: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self.epoch = 0
        self.groups: list[list[Copy]] = []
        self.open_group: list[Copy] = []


__all__ = ["CONCRETE", "Copy", "Event", "Events", "GLOBAL_BASE", "GlobalMemory", "LOCAL_WINDOW", "PARAM_WINDOW", "Region", "SHARED_WINDOW",
           "SharedMemory", "tensor_bytes", "writer_code", "writer_parts"]
