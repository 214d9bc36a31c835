"""The executor: a kernel's PTX run exactly on the CPU, every thread of every CTA of the launch.

One CTA at a time (a cluster's CTAs in turn, each until every one of its threads waits for another CTA:
``run_cluster``), all of its threads at once: a register is one numpy row per thread (``verify.kernel.bytes``),
every instruction acts on all the threads it is active for, and the warps of the CTA step in lockstep.  Control
flow: while every live thread is at one instruction, branches and loops run as the kernel runs them; when a branch
splits the threads, the threads at the smallest instruction index run first until the others are reached, where
they join again (min-PC scheduling, the reconvergence of structured code).  A collective instruction (``mma.sync``,
``ldmatrix``, ``shfl.sync``, ``bar.sync``) reached by part of a warp or of the CTA is an error naming the branch
that split them: the executor never guesses.

The data domain is the engine's (``verify.kernel.symbolic``: atoms and exact sums; ``verify.kernel.numeric``:
random integers); addresses, indices and control flow are exact bit-vectors in both.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ..errors import SpecError
from ..ptx.syntax import Addr, FImm, Function, Imm, Instr, Module, Not, Reg, Special, Sym
from .bytes import CONCRETE, UNDEF, U64, full_tags, mask_of, sext
from .launch import Launch, TensorMap
from .memory import Events, GlobalMemory, SharedMemory

MAX_STEPS = 20_000_000  # instructions one CTA may execute (a loop that does not end is an error)
WAITS = {"wgmma": "wgmma.wait_group", "tcgen05": "tcgen05.wait::ld"}  # what completes an asynchronous register write


class KernelError(SpecError):
    """The executor cannot follow the kernel (an unsupported instruction, data used as an address, a divergent
    collective...): exit 2, at the PTX line and column."""


@dataclass
class Step:
    instr: Instr
    index: int
    kind: str  # "op", "bra", "exit", "nop"
    run: Callable[["CTA", np.ndarray | None], None] | None = None
    target: int = -1
    collective: str = ""  # "warp" or "cta": needs whole warps / the whole CTA


@dataclass
class Program:
    """A decoded kernel and its launch: steps, registers, shared-memory and parameter layouts, global memory."""

    module: Module
    fn: Function
    launch: Launch
    domain: Any  # verify.kernel.symbolic.Symbolic or verify.kernel.numeric.Numeric
    steps: list[Step] = field(default_factory=list)
    widths: list[int] = field(default_factory=list)
    shared_addr: dict[str, int] = field(default_factory=dict)
    shared_size: int = 0
    param_off: dict[str, tuple[int, int]] = field(default_factory=dict)
    params: bytes = b""
    gmem: GlobalMemory | None = None
    events: Events = field(default_factory=Events)
    trace: bool = False  # the chain's run: every load's data gets a value of its own (``domain.moved``)
    steps_run: int = 0
    tracks_fences: bool = False  # the kernel has wgmma: registers written since the last wgmma.fence are tracked
    tensor_maps: dict[int, TensorMap] = field(default_factory=dict)  # parameter-space address -> the map there
    local_addr: dict[str, int] = field(default_factory=dict)  # local variables (a thread's stack: printf's arguments)
    global_addr: dict[str, int] = field(default_factory=dict)  # the module's .global/.const variables: addresses in no
    # tensor (printf's format strings are passed, never read: a read of one is out of bounds)
    local_size: int = 0
    at_exit: list[Callable[["CTA"], None]] = field(default_factory=list)  # checks when a CTA ends (Tensor Memory freed)

    def error(self, instr: Instr | Any, message: str) -> KernelError:
        return KernelError(self.module.path, instr.line, instr.col, message)


class Cluster:
    """The CTAs of one cluster, run together: each runs until every one of its live threads waits on something
    another CTA may bring (an mbarrier phase, ``barrier.cluster``), then the next runs.  When a whole round of them
    makes no progress, ``final`` is set: their waits are then the one-CTA executor's (an error if nothing completes
    them: the kernel would hang)."""

    def __init__(self) -> None:
        self.ctas: dict[int, "CTA"] = {}  # %cluster_ctarank -> CTA
        self.done: set[int] = set()  # ranks whose CTA has ended
        self.final = False
        self.progress = 0  # instructions executed (a wait that parks every thread it runs for is not progress)

    def peer(self, cta: "CTA", rank: int, ins: Instr | None = None) -> "CTA":
        c = self.ctas.get(rank)
        if c is None:
            raise cta.prog.error(ins if ins is not None else cta.prog.fn, f"CTA rank {rank} is not in the cluster of "
                                 f"{len(self.ctas)} CTAs")
        return c

    def blocked(self, cta: "CTA") -> str:
        """Where the cluster's other live CTAs wait (for an error that says the kernel would hang)."""
        at = [f"rank {r} at line {c.step.instr.line} ({c.step.instr.opcode})" for r, c in sorted(self.ctas.items())
              if c is not cta and r not in self.done and c.step is not None]
        return f"; the cluster's other CTAs wait: {', '.join(at)}" if at else ""

    def others_live(self, cta: "CTA") -> bool:
        return not self.final and any(r not in self.done for r, c in self.ctas.items() if c is not cta)


class CTA:
    """One CTA's state while it runs: registers, shared memory, the threads' positions."""

    def __init__(self, prog: Program, ctaid: tuple[int, int, int], index: int, cluster: Cluster | None = None) -> None:
        self.prog = prog
        self.ctaid = ctaid
        self.index = index
        self.cluster = cluster
        cl = prog.launch.cluster
        x, y, z = (c % k for c, k in zip(ctaid, cl))
        self.rank = x + cl[0] * (y + cl[1] * z)  # %cluster_ctarank
        if cluster is not None:
            cluster.ctas[self.rank] = self
        self.cluster_arrived = 0  # barrier.cluster.arrive / wait this CTA made
        self.cluster_waited = 0
        bx, by, bz = prog.launch.block
        self.T = T = bx * by * bz
        t = np.arange(T, dtype=np.int64)
        self.tid = (t % bx, (t // bx) % by, t // (bx * by))
        self.lane = t % 32
        self.warp = t // 32
        self.nwarps = (T + 31) // 32
        n = len(prog.widths)
        self.B: list[Any] = [None] * n
        self.G: list[np.ndarray | None] = [None] * n
        self.smem = SharedMemory(prog.shared_size)
        self.local_tags = np.full((T, max(prog.local_size, 1)), UNDEF, np.int64)  # each thread's local memory
        self.local_bits = np.zeros((T, max(prog.local_size, 1)), np.uint8)
        self.step: Step | None = None
        self.split_at: Instr | None = None  # the branch that split the threads, while they are split
        self.active: np.ndarray | None = None  # the threads the current instruction runs for (None: all)
        # registers an asynchronous instruction (wgmma, tcgen05.ld) still writes: register -> (per thread, how many such
        # instructions are in flight; the last one's step index); a read or write of one by another instruction before
        # the wait that completes them is a finding
        self.async_regs: dict[int, tuple[np.ndarray, int]] = {}
        # registers written since the last wgmma.fence (None: the kernel has no wgmma, nothing is tracked)
        self.fence_dirty: dict[int, np.ndarray] | None = {} if prog.tracks_fences else None
        self.state: dict[str, Any] = {}  # the asynchronous units' state, by the module that owns it
        self.park: np.ndarray | None = None  # set by a wait: the threads that stay at it while others run
        self.others = False  # whether threads other than the current instruction's may still run
        self.resumed = False  # the current instruction runs for threads that all waited (nothing else can run)
        self.here: np.ndarray | None = None  # the threads at the current instruction (before its guard)

    @property
    def peers(self) -> bool:
        """Whether other CTAs of the cluster still run (and may complete what this CTA waits for)."""
        return self.cluster is not None and self.cluster.others_live(self)

    # ------------------------------------------------------------------ registers

    def get(self, r: int) -> tuple[np.ndarray, np.ndarray | None]:
        """(bits, tags) of register ``r`` (never written: zeros, every byte undefined)."""
        if self.async_regs and r in self.async_regs:
            self.in_flight(r, "reads")
        return self.get_raw(r)

    def get_raw(self, r: int) -> tuple[np.ndarray, np.ndarray | None]:
        """``get`` for the asynchronous unit that owns the register (no in-flight check)."""
        b = self.B[r]
        if b is None:
            w = self.prog.widths[r]
            if w == 1:
                return np.zeros(self.T, bool), None
            return np.zeros(self.T, U64), full_tags(self.T, max(1, w // 8), UNDEF)
        return b, self.G[r]

    def in_flight(self, r: int, verb: str) -> None:
        """A finding: the current instruction ``verb`` register ``r`` while an asynchronous instruction still writes it
        for some of the threads it runs for."""
        counts, owner = self.async_regs[r]
        threads = counts > 0
        if verb == "reads" and self.prog.steps[owner].instr.base == "tcgen05":
            return  # a tcgen05.ld's true register dependency is respected without a wait (PTX 9.7.16.6.4.5)
        hit = threads if self.active is None else (threads & self.active)
        if not hit.any() or self.step is None:
            return
        t = int(np.argmax(hit))
        o = self.prog.steps[owner].instr
        name = self.prog.fn.regs[r].name
        self.prog.events.add("register_in_flight", self.step.index, self.index, t, 0, "register",
                             f"{self.step.instr.opcode.split('.')[0]} {verb} {name}, which the {o.base} at line {o.line} "
                             f"still writes (no {WAITS.get(o.base, o.base + '.wait')} between them)", int(hit.sum()))

    def put(self, r: int, bits: Any, tags: np.ndarray | None, m: np.ndarray | None) -> None:
        """Write register ``r`` for the threads of ``m`` (``None``: all)."""
        if self.async_regs and r in self.async_regs:
            self.in_flight(r, "writes")
        if self.fence_dirty is not None:
            mm = np.ones(self.T, bool) if m is None else m
            old = self.fence_dirty.get(r)
            self.fence_dirty[r] = mm if old is None else (old | mm)
        self.put_raw(r, bits, tags, m)

    def put_raw(self, r: int, bits: Any, tags: np.ndarray | None, m: np.ndarray | None) -> None:
        """``put`` for the asynchronous unit that owns the register (no in-flight or fence bookkeeping)."""
        w = self.prog.widths[r]
        T = self.T
        if w == 1:
            bits = np.broadcast_to(np.asarray(bits, bool), (T,))
        else:
            bits = np.broadcast_to(np.asarray(bits, U64), (T,))
            if w < 64:
                bits = bits & mask_of(w)
            nb = w // 8
            if tags is not None and tags.shape[1] != nb:
                tags = tags[:, :nb] if tags.shape[1] > nb else np.concatenate(
                    [tags, np.full((T, nb - tags.shape[1]), CONCRETE, np.int64)], axis=1)
        if m is None:
            self.B[r] = np.array(bits)
            self.G[r] = tags
            return
        old, oldtags = self.get_raw(r)
        self.B[r] = np.where(m, bits, old)
        if tags is None and oldtags is None:
            self.G[r] = None
        else:
            nb = max(1, w // 8)
            nt = full_tags(T, nb) if tags is None else tags
            ot = full_tags(T, nb) if oldtags is None else oldtags
            g = np.where(m[:, None], nt, ot)
            self.G[r] = None if (g == CONCRETE).all() else g

    # ------------------------------------------------------------------ operands

    def data_error(self, o: Any, tags: np.ndarray, m: np.ndarray | None, what: str) -> None:
        """Raise when the threads of ``m`` hold data (tags >= 0) where only integers may be: the executor cannot
        follow data into arithmetic, an address or a branch."""
        d = (tags >= 0).any(axis=1)
        if m is not None:
            d &= m
        if d.any():
            t = int(np.argmax(d))
            desc = self.prog.domain.describe_tags(tags[t])
            name = getattr(o, "name", "an operand")
            raise self.prog.error(self.step.instr if self.step else o,
                                  f"{name} holds data ({desc}, thread {t}) where {what} is needed: the executor "
                                  "follows data only through moves, packing, conversions and the tensor cores")

    def int_value(self, o: Any, width: int, signed: bool, m: np.ndarray | None,
                  what: str = "an integer") -> tuple[Any, np.ndarray | None]:
        """An operand as an exact integer of ``width`` bits (``uint64``; signed values sign-extended to 64 bits),
        and the threads for which it is undefined (``None``: none)."""
        if isinstance(o, Reg):
            b, g = self.get(o.id)
            rw = self.prog.widths[o.id]
            undef = None
            if rw == 1:
                return b.astype(U64), None
            if g is not None:
                self.data_error(o, g, m, what)
                u = (g == UNDEF).any(axis=1)
                if m is not None:
                    u &= m
                undef = u if u.any() else None
            if rw > width:
                b = b & mask_of(width)
            if signed and min(rw, width) < 64:
                b = sext(b, min(rw, width)).view(U64)
            return b, undef
        if isinstance(o, Imm):
            v = o.value
            if width < 64:
                v &= (1 << width) - 1
                if signed and v >> (width - 1):
                    v -= 1 << width
            return np.uint64(v % (1 << 64)), None
        if isinstance(o, FImm):
            return np.uint64(float_bits(o, width)), None
        if isinstance(o, Special):
            return self.special(o), None
        if isinstance(o, (Sym, Addr)):
            base = o if isinstance(o, Sym) else o.base
            off = 0 if isinstance(o, Sym) else o.offset
            if isinstance(base, Sym) and base.name in self.prog.shared_addr:
                return np.uint64(self.prog.shared_addr[base.name] + off), None
            if isinstance(base, Sym) and base.name in self.prog.param_off:  # a parameter's address (parameter space)
                return np.uint64(self.prog.param_off[base.name][0] + off), None
            if isinstance(base, Sym) and base.name in self.prog.local_addr:  # a local variable's (local space)
                return np.uint64(self.prog.local_addr[base.name] + off), None
            if isinstance(base, Sym) and base.name in self.prog.global_addr:  # a module's .global (printf's strings)
                return np.uint64(self.prog.global_addr[base.name] + off), None
            raise self.prog.error(o, f"{getattr(base, 'name', o)!s} is not a shared variable or a parameter: its "
                                     "address is not known to the executor")
        raise self.prog.error(o, f"unexpected operand {type(o).__name__}")

    def special(self, o: Special) -> np.ndarray | np.uint64:
        n = o.name
        if n.startswith("%tid."):
            return self.tid["xyz".index(n[-1])].astype(U64)
        if n.startswith("%ntid."):
            return np.uint64(self.prog.launch.block["xyz".index(n[-1])])
        if n.startswith("%ctaid."):
            return np.uint64(self.ctaid["xyz".index(n[-1])])
        if n.startswith("%nctaid."):
            return np.uint64(self.prog.launch.grid["xyz".index(n[-1])])
        if n == "%laneid":
            return self.lane.astype(U64)
        if n == "%warpid":
            return self.warp.astype(U64)
        if n == "%nwarpid":
            return np.uint64(self.nwarps)
        if n in ("%lanemask_lt", "%lanemask_le", "%lanemask_eq", "%lanemask_ge", "%lanemask_gt"):
            lane = self.lane.astype(U64)
            one = np.uint64(1)
            eq = one << lane
            return {"%lanemask_eq": eq, "%lanemask_lt": eq - one, "%lanemask_le": (eq << one) - one,
                    "%lanemask_ge": ~(eq - one) & np.uint64(0xFFFFFFFF),
                    "%lanemask_gt": ~((eq << one) - one) & np.uint64(0xFFFFFFFF)}[n]
        if n == "%dynamic_smem_size":
            return np.uint64(self.prog.launch.shared or 0)
        if n == "%total_smem_size":
            return np.uint64(self.prog.shared_size)
        cl = self.prog.launch.cluster  # the launch's clusters (of one CTA unless it says); their CTAs run in turn
        xyz = "xyz".index(n[-1]) if n[-2:-1] == "." else 0
        if n == "%cluster_ctarank":
            return np.uint64(self.rank)
        if n == "%cluster_nctarank":
            return np.uint64(cl[0] * cl[1] * cl[2])
        if n.startswith("%cluster_ctaid."):
            return np.uint64(self.ctaid[xyz] % cl[xyz])
        if n.startswith("%cluster_nctaid."):
            return np.uint64(cl[xyz])
        if n.startswith("%clusterid."):
            return np.uint64(self.ctaid[xyz] // cl[xyz])
        if n.startswith("%nclusterid."):
            return np.uint64(self.prog.launch.grid[xyz] // cl[xyz])
        if n == "%is_explicit_cluster":
            return np.uint64(int(cl != (1, 1, 1)))
        raise self.prog.error(o, f"special register {n} has no fixed value: the result would depend on the GPU")

    def pred(self, o: Any) -> np.ndarray:
        """A predicate operand (``%p``, ``!%p``, or an integer used as a predicate)."""
        if isinstance(o, Not):
            return ~self.pred(o.operand)
        if isinstance(o, Reg) and self.prog.widths[o.id] == 1:
            b = self.B[o.id]
            if b is None:
                raise self.prog.error(o, f"predicate {o.name} is read before it is written")
            return b
        if isinstance(o, Imm):
            return np.full(self.T, bool(o.value))
        raise self.prog.error(o, "expected a predicate register")


def float_bits(o: FImm, width: int) -> int:
    """A float literal's bits as a ``width``-bit float (a 64-bit literal for a 32-bit operand is rounded)."""
    import struct
    if o.width == width or width not in (16, 32, 64):
        return o.bits & ((1 << width) - 1) if width < 64 else o.bits
    value = struct.unpack("<d", o.bits.to_bytes(8, "little"))[0] if o.width == 64 else \
        struct.unpack("<f", o.bits.to_bytes(4, "little"))[0]
    fmt = {16: "<e", 32: "<f", 64: "<d"}[width]
    return int.from_bytes(struct.pack(fmt, value), "little")


# ----------------------------------------------------------------------------- the scheduler

def run_cta(prog: Program, cta: CTA) -> None:
    """Run one CTA (of a cluster of one) to its end."""
    for _ in cta_steps(prog, cta):
        raise prog.error(prog.fn, "a CTA without a cluster waits for another CTA")  # pragma: no cover


def run_cluster(prog: Program, ctas: list[CTA]) -> None:
    """Run the CTAs of one cluster together: each in turn until it ends or waits for another (``cta_steps``
    yields); a round in which none makes progress makes their waits final (errors where nothing completes them)."""
    cl = ctas[0].cluster
    assert cl is not None
    gens = {c.rank: cta_steps(prog, c) for c in ctas}
    while gens:
        before = cl.progress
        ended = False
        for r in list(gens):
            try:
                next(gens[r])
            except StopIteration:
                del gens[r]
                cl.done.add(r)
                ended = True
        if gens and not ended and cl.progress == before:
            cl.final = True


def _thread_state(T: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A CTA's per-thread scheduling state at its start: exited, waiting, parked (the waiting threads a wait parked;
    the others wait at a collective) and the PCs of split threads."""
    return np.zeros(T, bool), np.zeros(T, bool), np.zeros(T, bool), np.zeros(T, np.int64)


def _resume_waiting(prog: Program, cta: CTA, pcs: np.ndarray, live: np.ndarray, waiting: np.ndarray,
                    parked: np.ndarray, exited_split: bool) -> int:
    """When every live thread waits, the waits released and where they resume: -1 when some wait (parked) for what
    another CTA of the cluster may bring, to be tried again after the others ran; else the PC of the one collective
    they all wait at (an error when they wait at different collectives, or a thread that exited meanwhile will
    never reach it)."""
    if cta.cluster is not None and (parked & live).any() and cta.peers:
        waiting[:] = False
        parked[:] = False
        return -1
    steps = prog.steps
    parked[:] = False
    wp = pcs[live]
    pc = int(wp.min())
    if not (wp == pc).all():
        other = int(wp.max())
        raise prog.error(steps[pc].instr,
                         f"the threads wait at different collectives (lines {steps[pc].instr.line} and "
                         f"{steps[other].instr.line}; split by the branch at line "
                         f"{cta.split_at.line if cta.split_at else 0}): the executor cannot say what they do")
    waiting[:] = False
    cta.resumed = True
    if steps[pc].collective and exited_split:
        _collective_split(prog, cta, steps[pc], live, None)
    return pc


def _wait_at_collective(cta: CTA, st: Step, m: np.ndarray | None, live: np.ndarray | None,
                        waiting: np.ndarray) -> bool:
    """Whether the split threads ``m`` wait at the collective ``st`` for their partners (marked waiting)."""
    here = m if m is not None else np.ones(cta.T, bool)
    if not _collective_ready(cta, st, here, live):
        waiting |= here
        return True
    return False


def _exit_threads(T: int, m: np.ndarray | None, gm: np.ndarray | None, uniform: bool, pc: int, exited: np.ndarray,
                  pcs: np.ndarray) -> None:
    """The threads an ``exit`` ends marked exited; while split, the others that reached it (guarded off) go past."""
    gone = (m if m is not None else np.ones(T, bool)) if gm is None else gm
    exited |= gone
    if not uniform:
        pcs[m & ~exited] = pc + 1


def _endless(prog: Program, pc: int) -> Exception:
    """The error of a CTA that ran past ``MAX_STEPS`` instructions."""
    return prog.error(prog.steps[min(pc, len(prog.steps) - 1)].instr,
                      f"execution did not end after {MAX_STEPS} instructions (a loop that never ends?)")


def _park(cta: CTA, ins: Instr, pc: int, m: np.ndarray | None, park: np.ndarray, uniform: bool, pcs: np.ndarray,
          parked: np.ndarray, waiting: np.ndarray) -> None:
    """The threads ``park`` left waiting at ``pc`` (the CTA split there if it ran uniformly), the others past it."""
    nxt = pc + 1
    parked |= park
    if uniform:
        cta.split_at = ins
        pcs[:] = nxt
    pcs[m if m is not None else slice(None)] = nxt
    pcs[park] = pc
    waiting |= park


def _split_at_branch(cta: CTA, st: Step, pc: int, taken: np.ndarray, pcs: np.ndarray) -> None:
    """A uniform CTA split by a branch some of its threads take: their PCs at its target, the others' after it."""
    cta.split_at = st.instr
    pcs[:] = pc + 1
    pcs[taken] = st.target


def _finish(prog: Program, cta: CTA, count: int) -> None:
    """A CTA's end: its steps counted, and the checks run at exit (each once)."""
    prog.steps_run += count
    for check in dict.fromkeys(prog.at_exit):
        check(cta)


def cta_steps(prog: Program, cta: CTA):
    """Run one CTA to its end: uniform control flow while the threads agree, min-PC while they are split.  A thread
    that reaches a collective its partners have not reached, or a wait (``cta.park``) that other threads may still
    satisfy, waits there while the others run.  When every live thread waits (``_resume_waiting``), the collective
    they all wait at runs; or, in a cluster, the generator yields to the other CTAs and the waits are tried again."""
    steps = prog.steps
    nsteps = len(steps)
    T = cta.T
    exited, waiting, parked, pcs = _thread_state(T)
    cl = cta.cluster
    uniform = True
    pc = count = 0  # the PC while uniform; the instructions executed
    exited_split = False  # a thread exited while the threads were split
    while True:
        cta.resumed = False
        if uniform:
            if pc >= nsteps:
                break
            live: np.ndarray | None = None if not exited.any() else ~exited
            m = live
            cta.others = False
        else:
            live = ~exited
            if not live.any():
                break
            avail = live & ~waiting
            if avail.any():
                pc = int(pcs[avail].min())
                if pc >= nsteps:
                    break
                m = avail & (pcs == pc)
            else:  # every live thread waits: at one collective, or at a wait nothing else can satisfy
                pc = _resume_waiting(prog, cta, pcs, live, waiting, parked, exited_split)
                if pc < 0:
                    yield  # another CTA of the cluster may complete the wait
                    continue
                m = live.copy()
            if (pcs[live] == pc).all() and not waiting.any():
                uniform = True
                cta.split_at = None
                exited_split = False
                m = None if not exited.any() else live
            cta.others = bool((live & ~waiting & ~(m if m is not None else live)).any())
        count += 1
        if count > MAX_STEPS:
            raise _endless(prog, pc)
        st = steps[pc]
        cta.step = st
        ins = st.instr
        if st.collective and not uniform and not cta.resumed and _wait_at_collective(cta, st, m, live, waiting):
            continue
        gm = m
        if ins.guard is not None:
            g = ~cta.pred(ins.guard) if ins.negated else cta.pred(ins.guard)
            gm = g if m is None else (g & m)
        if st.kind == "op":
            cta.park = None
            cta.here = m if m is not None else (live if live is not None else np.ones(T, bool))
            if gm is None or gm.any():
                assert st.run is not None
                cta.active = gm
                st.run(cta, gm)
            park = cta.park
            if cl is not None and (park is None or (cta.here & ~park).any()):
                cl.progress += 1
            if park is not None and park.any():  # threads whose wait others may still satisfy: they stay here
                _park(cta, ins, pc, m, park, uniform, pcs, parked, waiting)
                uniform = False
                continue
        else:
            if cl is not None:
                cl.progress += 1
            if st.kind == "exit":
                _exit_threads(T, m, gm, uniform, pc, exited, pcs)
                if uniform:
                    pc += 1
                else:
                    exited_split = True
                continue
            if st.kind != "nop":  # a branch
                base = m if m is not None else np.ones(T, bool)
                taken = base if gm is None else gm
                if uniform:
                    if taken is base or np.array_equal(taken, base):
                        pc = st.target
                    elif not taken.any():
                        pc += 1
                    else:
                        uniform = False
                        _split_at_branch(cta, st, pc, taken, pcs)
                else:
                    pcs[m] = pc + 1
                    pcs[taken] = st.target
                continue
        if uniform:  # an op or a nop: on to the next instruction
            pc += 1
        else:
            pcs[m] = pc + 1
    _finish(prog, cta, count)


def _collective_ready(cta: CTA, st: Step, here: np.ndarray, live: np.ndarray | None) -> bool:
    """Whether the threads ``here`` are whole warps (``warp``) or every live thread (``cta``)."""
    lv = live if live is not None else np.ones(cta.T, bool)
    if st.collective == "cta":
        return bool(np.array_equal(here, lv))
    if cta.T % 32:
        return False
    w = here.reshape(-1, 32)
    lw = lv.reshape(-1, 32)
    return bool(((w == lw) | ~np.any(w, axis=1)[:, None]).all())


def _collective_split(prog: Program, cta: CTA, st: Step, m: np.ndarray | None, live: np.ndarray | None) -> None:
    """A collective reached while the threads are split: fine when whole warps (``warp``) or every live thread
    (``cta``) are here; otherwise an error naming the branch that split them."""
    here = m if m is not None else np.ones(cta.T, bool)
    lv = live if live is not None else np.ones(cta.T, bool)
    if st.collective == "cta":
        ok = np.array_equal(here, lv)
    else:
        w = here.reshape(-1, 32) if cta.T % 32 == 0 else None
        lw = lv.reshape(-1, 32) if cta.T % 32 == 0 else None
        ok = w is not None and lw is not None and bool(((w == lw) | ~np.any(w, axis=1)[:, None]).all())
    if not ok:
        where = f" (the threads were split by the branch at line {cta.split_at.line})" if cta.split_at else ""
        raise prog.error(st.instr, f"{st.instr.opcode} is reached by part of the {'CTA' if st.collective == 'cta' else 'warp'}"
                                   f"{where}: the executor cannot say what it does")


__all__ = ["CTA", "Cluster", "KernelError", "cta_steps", "run_cluster", "MAX_STEPS", "Program", "Step", "float_bits", "hold_registers",
           "release_registers", "run_cta", "whole_groups"]


def hold_registers(cta: CTA, regs: list[int], threads: np.ndarray, owner: int) -> None:
    """Registers ``regs`` of ``threads`` are written by the asynchronous instruction ``owner`` until it completes."""
    for r in regs:
        old = cta.async_regs.get(r)
        counts = np.zeros(cta.T, np.int32) if old is None else old[0].copy()
        counts[threads] += 1
        cta.async_regs[r] = (counts, owner)


def release_registers(cta: CTA, regs: list[int], threads: np.ndarray, every: bool = False) -> None:
    """One asynchronous instruction on ``regs`` of ``threads`` completed (``every``: all of them did)."""
    for r in regs:
        old = cta.async_regs.get(r)
        if old is None:
            continue
        counts = old[0].copy()
        counts[threads] = 0 if every else np.maximum(counts[threads] - 1, 0)
        if counts.any():
            cta.async_regs[r] = (counts, old[1])
        else:
            del cta.async_regs[r]


def whole_groups(cta: CTA, ins: Instr, m: np.ndarray | None, size: int = 32, member: str = "lanes",
                 unit: str = "warp") -> np.ndarray:
    """The groups of ``size`` threads (warps; a warpgroup's 128) an ``.aligned`` instruction runs for; part of a group
    is an error (a guard or a split)."""
    if m is None and (size == 32 or cta.T % size == 0):
        return np.arange(-(-cta.T // size))
    if cta.T % size:
        raise cta.prog.error(ins, f"{ins.opcode} in a block of {cta.T} threads (not whole {unit}s"
                                  f"{'' if size == 32 else f' of {size}'})")
    g = (np.ones(cta.T, bool) if m is None else m).reshape(-1, size)
    part = g.any(axis=1) & ~g.all(axis=1)
    if part.any():
        raise cta.prog.error(ins, f"{ins.opcode} runs for some {member} of {unit} {int(np.argmax(part))} only (a guard "
                                  f"or a split): .sync.aligned needs the whole {unit}")
    return np.flatnonzero(g.all(axis=1))
