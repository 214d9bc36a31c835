"""The fifth-generation tensor cores and Tensor Memory: ``tcgen05.alloc``/``dealloc``/``relinquish_alloc_permit``,
``tcgen05.mma`` (``cta_group::1``; A from shared memory or Tensor Memory, B from shared memory, D in Tensor Memory;
the instruction descriptor decoded; the disable-output-lane mask, ``scale-input-d`` where it scales nothing),
``tcgen05.commit`` (its MMAs complete, and it arrives on its mbarrier, at the wait that needs it), ``tcgen05.cp``
(shared memory to Tensor Memory, completed like an MMA by its thread's ``tcgen05.commit``: ``ops_tcgen05_cp``'s), and the
``tcgen05.fence`` variants (ordering only); ``tcgen05.ld``/``tcgen05.st`` with ``tcgen05.wait::ld``/``::st`` are
``ops_tcgen05_ldst``'s.

The meaning is the catalog's (``verify.kernel.fragments``): the data-path layout of the MMA's M, cta_group and
``.ws`` (9.7.16.10.5: Layouts A-G, E as corrected) places D in Tensor Memory; the ``tcgen05.ld``/``st`` fragments of
each shape place a warp's registers in its lane quarter; the ``tcgen05.cp`` layouts of each copy shape place the
bytes of the copied block; the descriptor model reads A, B and a copy's block from shared memory.
"""
from __future__ import annotations

import re
from typing import Any

import numpy as np

from ..ptx.syntax import Addr, Imm, Instr, Vec
from .bytes import CONCRETE, U64, UNDEF, to_bytes
from .fragments import NoLayout, datapath
from .descriptors import BadDescriptor, descriptor_rows, instruction_descriptor, zero_column_mask
from .machine import CTA, Program, Step, whole_groups
from .ops_async import barrier_at, cluster_target, shared_address
from .access import hold, read_shared_async, write_shared
from .ops_base import handler
from .subbyte import read_containers, smem_bits
from .tmem_a import tmem_a_cells
from .tmem import CELL, COLLECTOR_OPS, COLS, LANES, TMEM_WINDOW, Commit, TensorMemory, collector_b, split

KINDS = ("f16", "tf32", "f8f6f4", "i8", "mxf8f6f4", "mxf4", "mxf4nvf4")
BLOCK_SCALED: dict[str, Any] = {}  # the block-scaled tcgen05.mma (ops_blockscale registers itself)
LD_ST: dict[str, Any] = {}  # tcgen05.ld/st and their waits (ops_tcgen05_ldst registers itself)
COPY: dict[str, Any] = {}  # tcgen05.cp (ops_tcgen05_cp registers itself)


def face_of(prog: Program) -> str:
    return {"symbolic": "vector", "numeric": "scalar"}.get(getattr(prog.domain, "name", ""), "vector")


def tmem(cta: CTA) -> TensorMemory:
    t = cta.state.get("tmem")
    if t is None:
        t = cta.state["tmem"] = TensorMemory()
        if _leak_check not in cta.prog.at_exit:
            cta.prog.at_exit.append(_leak_check)
    return t


def _leak_check(cta: CTA) -> None:
    t = cta.state.get("tmem")
    if t is not None and t.blocks:
        start, n = next(iter(t.blocks.items()))
        step = len(cta.prog.steps) - 1
        cta.prog.events.add("tmem_not_freed", step, cta.index, 0, start, "tmem",
                            f"the CTA exits with {sum(t.blocks.values())} Tensor Memory columns allocated (columns "
                            f"{start}..{start + n - 1} first): tcgen05.dealloc must free them before the kernel exits",
                            1)


def thread_rows(m: np.ndarray | None, T: int) -> np.ndarray:
    return np.arange(T) if m is None else np.flatnonzero(m)


def tmem_address(cta: CTA, ins: Instr, o: Any, m: np.ndarray | None, what: str = "a Tensor Memory address") -> np.ndarray:
    """A Tensor Memory address operand (``[%r + imm]`` or a register) as 32-bit addresses, one per thread."""
    if isinstance(o, Addr):
        base, off = o.base, o.offset
    else:
        base, off = o, 0
    v, u = cta.int_value(base, 32, False, m, what) if base is not None else (np.uint64(0), None)
    if u is not None and (m is None or (u & m).any()):
        raise cta.prog.error(ins, f"{ins.opcode}: {what} is undefined (thread {int(np.argmax(u))})")
    return (np.broadcast_to(np.asarray(v, U64), (cta.T,)).astype(np.int64) + off) & 0xFFFFFFFF


def _whole_warps(cta: CTA, ins: Instr, m: np.ndarray | None) -> np.ndarray:
    return whole_groups(cta, ins, m)


def _cta_group(prog: Program, ins: Instr) -> int:
    """The instruction's ``cta_group`` (1 or 2); ``cta_group::2`` needs clusters of CTA pairs."""
    g = next((int(p.split("::")[1]) for p in ins.parts if p.startswith("cta_group::")), 1)
    if g not in (1, 2):
        raise prog.error(ins, f"unsupported instruction '{ins.opcode}' (cta_group::{g})")
    cl = prog.launch.cluster
    if g == 2 and (cl[0] * cl[1] * cl[2]) % 2:
        raise prog.error(ins, f"{ins.opcode}: cta_group::2 acts on a CTA pair, but the launch's clusters are "
                              f"{list(cl)} (give the launch cluster = [2, 1, 1] or another even number of CTAs)")
    return g


def pair_of(cta: CTA, ins: Instr) -> list[CTA]:
    """The CTA pair of a ``cta_group::2`` instruction: [the even rank's CTA, the odd rank's] (the peer CTA: the one
    whose %cluster_ctarank differs in bit 0)."""
    if cta.cluster is None:
        raise cta.prog.error(ins, f"{ins.opcode}: cta_group::2 in a cluster of one CTA")
    even = cta.rank & ~1
    return [cta.cluster.peer(cta, even, ins), cta.cluster.peer(cta, even + 1, ins)]


@handler("tcgen05")
def _tcgen05(prog: Program, ins: Instr, index: int) -> Step:
    parts = ins.parts
    sub = parts[1] if len(parts) > 1 else ""
    if sub.startswith("fence::"):
        return Step(ins, index, "nop")  # ordering of tcgen05 operations around thread synchronisation
    if sub in ("alloc", "dealloc"):
        return _allocation(prog, ins, index, sub)
    if sub == "relinquish_alloc_permit":
        _cta_group(prog, ins)

        def relinquish(cta: CTA, m: np.ndarray | None) -> None:
            tmem(cta).relinquished = True
        return Step(ins, index, "op", relinquish, collective="warp")
    if sub in ("ld", "st", "wait::ld", "wait::st"):
        return LD_ST[sub](prog, ins, index, sub)
    if sub == "mma":
        return _mma(prog, ins, index)
    if sub == "commit":
        return _commit(prog, ins, index)
    if sub == "cp":
        return COPY["cp"](prog, ins, index)
    raise prog.error(ins, f"unsupported instruction '{ins.opcode}' (tcgen05.{sub} is not executed yet)")


# ----------------------------------------------------------------------------- allocation

def _allocation(prog: Program, ins: Instr, index: int, verb: str) -> Step:
    """``tcgen05.alloc [dst], nCols`` (the columns' address written to shared memory) and ``tcgen05.dealloc taddr,
    nCols``, each by a whole warp."""
    _cta_group(prog, ins)
    if len(ins.operands) != 2:
        raise prog.error(ins, f"{ins.opcode} takes {'[dst]' if verb == 'alloc' else 'taddr'}, nCols")
    a_o, n_o = ins.operands

    def run(cta: CTA, m: np.ndarray | None) -> None:
        warps = _whole_warps(cta, ins, m)
        t = tmem(cta)
        addr = shared_address(cta, ins, a_o, m, "shared") if verb == "alloc" else tmem_address(cta, ins, a_o, m)
        n, _ = cta.int_value(n_o, 32, False, m, "a column count")
        n = np.broadcast_to(np.asarray(n, U64), (cta.T,))
        for w in warps:
            th = int(w) * 32
            ncols = int(n[th])
            if verb == "dealloc":
                lane, col = split(int(addr[th]))
                if lane or not t.free(col, ncols):
                    cta.prog.events.add("tmem_bad_dealloc", index, cta.index, th, int(addr[th]), "tmem",
                                        f"tcgen05.dealloc (warp {w}) frees {ncols} columns at lane {lane}, column "
                                        f"{col}, which no tcgen05.alloc holds", 1)
                continue
            if ncols < 32 or ncols > COLS or ncols & (ncols - 1):
                raise prog.error(ins, f"{ins.opcode} (warp {w}): {ncols} columns: a power of 2 from 32 to {COLS}")
            if t.relinquished:
                cta.prog.events.add("tmem_alloc_after_relinquish", index, cta.index, th, 0, "tmem",
                                    f"tcgen05.alloc (warp {w}) after the CTA relinquished its allocation permit", 1)
            start = t.allocate(ncols)
            if start is None:
                raise prog.error(ins, f"{ins.opcode} (warp {w}) asks for {ncols} columns with "
                                      f"{int(t.allocated.sum())} of {COLS} already allocated: it would wait for a "
                                      "tcgen05.dealloc that never comes")
            dst = np.zeros(cta.T, U64)
            dst[th] = int(addr[th])
            write_shared(cta, ins, dst, np.full((1, 4), CONCRETE, np.int64), to_bytes(np.array([start], U64), 4),
                         np.array([th]), proxy="cp.async")
    return Step(ins, index, "op", run, collective="warp")


# ----------------------------------------------------------------------------- tcgen05.ld / tcgen05.st

def tmem_cells(cta: CTA, ins: Instr, index: int, t: TensorMemory, lanes: np.ndarray, cols: np.ndarray, warp: int,
           verb: str) -> np.ndarray:
    """Flat cell indices of (lane, column) pairs a warp accesses (``warp`` -1: the tensor core's, every lane);
    findings for a lane outside the warp's quarter and a column no allocation holds."""
    shape = lanes.shape
    lanes, cols = lanes.reshape(-1), cols.reshape(-1)
    q = warp % 4
    bad = ((lanes < 32 * q) | (lanes >= 32 * q + 32)) if warp >= 0 else np.zeros(lanes.shape, bool)
    if bad.any():
        k = int(np.argmax(bad))
        cta.prog.events.add("tmem_lane_quarter", index, cta.index, warp * 32, int(lanes[k]), "tmem",
                            f"{ins.opcode.split('.')[0]}.{verb} (warp {warp}) accesses Tensor Memory lane {int(lanes[k])}, "
                            f"outside its lane quarter {32 * q}..{32 * q + 31}", int(bad.sum()))
    out = (cols < 0) | (cols >= COLS) | (lanes < 0) | (lanes >= LANES)
    cc = np.clip(cols, 0, COLS - 1)
    unalloc = ~t.allocated[cc] | out
    if unalloc.any():
        k = int(np.argmax(unalloc))
        cta.prog.events.add("tmem_unallocated", index, cta.index, warp * 32, int(cols[k]), "tmem",
                            f"tcgen05.{verb} (warp {warp}) accesses Tensor Memory column {int(cols[k])}, which no "
                            "tcgen05.alloc holds", int(unalloc.sum()))
    return (np.clip(lanes, 0, LANES - 1) * COLS + cc).reshape(shape)


# ----------------------------------------------------------------------------- tcgen05.mma and tcgen05.commit

def _mma(prog: Program, ins: Instr, index: int) -> Step:
    parts = ins.parts
    group = _cta_group(prog, ins)
    kind = next((p.split("::")[1] for p in parts if p.startswith("kind::")), None)
    if kind is None or kind not in KINDS:
        raise prog.error(ins, f"unsupported instruction '{ins.opcode}' (kind::{kind})")
    ws = "ws" in parts
    if "sp" in parts:
        raise prog.error(ins, f"unsupported instruction '{ins.opcode}' (sparse tcgen05.mma is not executed yet)")
    block = "block_scale" in parts or kind in ("mxf8f6f4", "mxf4", "mxf4nvf4")
    if block and ws:
        raise prog.error(ins, f"{ins.opcode}: .ws takes kind::f16, kind::tf32, kind::f8f6f4 or kind::i8 (no block "
                              "scaling)")
    if block and group == 2:
        raise prog.error(ins, f"unsupported instruction '{ins.opcode}' (a CTA pair's block-scaled MMA is not executed "
                              "yet)")
    if block:
        if "block_scale" not in BLOCK_SCALED:
            raise prog.error(ins, f"unsupported instruction '{ins.opcode}' (block scaling)")
        return BLOCK_SCALED["block_scale"](prog, ins, index, kind)
    collector = _collector(prog, ins, group) if ws else None
    ops = list(ins.operands)
    zcm_o = ops.pop() if ws and len(ops) == 6 else None  # the zero-column mask descriptor (9.7.16.10.9.3)
    if len(ops) < 5:
        raise prog.error(ins, f"{ins.opcode} takes [d-tmem], a-desc|[a-tmem], b-desc, idesc, enable-input-d")
    d_o, a_o, b_o, i_o = ops[:4]
    rest = ops[4:]
    lanes_o = None
    if rest and isinstance(rest[0], Vec):
        lanes_o, rest = rest[0], rest[1:]  # disable-output-lane
    scale = 0
    if len(rest) == 2 and not ws:
        scale, rest = _scale_input_d(prog, ins, kind, rest[1]), rest[:1]
    if len(rest) != 1:
        raise prog.error(ins, f"{ins.opcode} takes [d-tmem], a-desc|[a-tmem], b-desc, idesc, {{disable-output-lane,}} "
                              "enable-input-d{, scale-input-d}")
    en_o = rest[0]
    a_tmem = isinstance(a_o, Addr)
    if lanes_o is not None and len(lanes_o.items) != 4 * group:
        raise prog.error(ins, f"{ins.opcode}: a disable-output-lane vector of {len(lanes_o.items)} registers; "
                              f"cta_group::{group} takes {4 * group}")
    if zcm_o is not None and collector is not None and collector[1] != "discard":
        raise prog.error(ins, f"unsupported instruction '{ins.opcode}' (a zero-column mask descriptor with "
                              f".collector::b{collector[0]}::{collector[1]}: what a collector buffer holds of the "
                              "columns a mask zeroes is not stated)")
    return Step(ins, index, "op", _mma_run(prog, ins, index, kind, d_o, a_o, b_o, i_o, en_o, a_tmem, group, collector,
                                           lanes_o, scale, zcm_o))


def _scale_input_d(prog: Program, ins: Instr, kind: str, o: Any) -> int:
    """``scale-input-d`` (9.7.16.10.9.1: ``D = A*B + D * 2^-scale-input-d``): an immediate in [0, 15], for
    ``kind::f16`` and ``kind::tf32`` only."""
    if not isinstance(o, Imm) or not 0 <= int(o.value) <= 15:
        raise prog.error(ins, f"{ins.opcode}: scale-input-d is an immediate in [0, 15]")
    if kind not in ("f16", "tf32"):
        raise prog.error(ins, f"{ins.opcode}: scale-input-d is only valid for kind::f16 and kind::tf32")
    return int(o.value)


def _zero_columns(cta: CTA, ins: Instr, o: Any, m: np.ndarray | None, t: int, M: int, N: int
                  ) -> tuple[np.ndarray, int]:
    """Thread ``t``'s zero-column mask descriptor (the 64-bit register ``o``) for an M x N ``.ws`` MMA: (``bool[N]``,
    True for an MMA column multiplied as zeros; the column shift).  A register nothing wrote is refused at the line:
    its mask is not known, and none is guessed; so are reserved bits set, a shift above the maximum for M."""
    prog = cta.prog
    v, undef = cta.int_value(o, 64, False, m, "a zero-column mask descriptor")
    if undef is not None and undef[t]:
        raise prog.error(ins, f"{ins.opcode} (thread {t}): the zero-column mask descriptor "
                              f"{getattr(o, 'name', '')} holds no known value (nothing wrote it): which columns are "
                              "zeros is not known")
    value = int(np.broadcast_to(np.asarray(v, U64), (cta.T,))[t])
    try:
        return zero_column_mask(value, M, N)
    except BadDescriptor as e:
        raise prog.error(ins, f"{ins.opcode} (thread {t}): the zero-column mask descriptor {value:#018x} cannot be "
                              f"read: {e}") from None


def _disabled_lanes(cta: CTA, ins: Instr, lanes_o: Vec, m: np.ndarray | None) -> np.ndarray:
    """``bool[T, 32 x registers]``: the Tensor Memory lanes each thread's disable-output-lane mask disables (bit b of
    the vector's register j: lane 32 j + b, 9.7.16.10.9.1)."""
    out = np.zeros((cta.T, 32 * len(lanes_o.items)), bool)
    for j, o in enumerate(lanes_o.items):
        v, _ = cta.int_value(o, 32, False, m, "a disable-output-lane mask")
        v = np.broadcast_to(np.asarray(v, U64), (cta.T,))
        for b in range(32):
            out[:, 32 * j + b] = ((v >> U64(b)) & U64(1)).astype(bool)
    return out


def mma_operands(cta: CTA, ins: Instr, index: int, t: int, kind: str, d_o: Any, a_o: Any, b_o: Any, i_o: Any,
                 m: np.ndarray | None, a_tmem: bool) -> tuple[Any, ...]:
    """The descriptor values, the decoded instruction descriptor and the D address of thread ``t``'s MMA."""
    prog = cta.prog
    dv = tmem_address(cta, ins, d_o, m, "the D address")
    iv, u = cta.int_value(i_o, 32, False, m, "an instruction descriptor")
    iv = int(np.broadcast_to(np.asarray(iv, U64), (cta.T,))[t])
    try:
        idesc = instruction_descriptor(kind, iv)
    except BadDescriptor as e:
        raise prog.error(ins, f"{ins.opcode} (thread {t}): the instruction descriptor {iv:#010x} cannot be read: "
                              f"{e}") from None
    av = int(tmem_address(cta, ins, a_o, m, "the A address")[t]) if a_tmem else \
        int(np.broadcast_to(np.asarray(cta.int_value(a_o, 64, False, m, "the A descriptor")[0], U64), (cta.T,))[t])
    bv = int(np.broadcast_to(np.asarray(cta.int_value(b_o, 64, False, m, "the B descriptor")[0], U64), (cta.T,))[t])
    return int(dv[t]), av, bv, iv, idesc


def read_desc(cta: CTA, ins: Instr, index: int, value: int, major: str, bits: int, rows: int, K: int, t: int,
              what: str, issuer: CTA | None = None, rows_at: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(addresses [rows, K], values [rows, K]) of an operand the descriptor ``value`` reads from ``cta``'s shared
    memory (for thread ``t`` of ``issuer``: the CTA pair's MMA reads the peer's too).  ``rows_at``: only these rows
    of the descriptor's tile (a zero-column mask's kept columns, moved by its shift: a row past the ``rows`` of the
    tile is where the descriptor model's canonical layout of as many whole tiles as reach it puts it), [len(rows_at),
    K]."""
    prog = cta.prog
    if issuer is not None and issuer is not cta:
        saved = cta.step
        cta.step = issuer.step
        try:
            return read_desc(cta, ins, index, value, major, bits, rows, K, t, what, rows_at=rows_at)
        finally:
            cta.step = saved
    if bits < 8:  # kind::f8f6f4 / mxf8f6f4's 4- and 6-bit elements, each addressed as an 8-bit container
        return read_containers(cta, ins, value, major, bits, rows, K, t, what, face_of(prog), rows_at)
    try:
        addr = descriptor_rows("tcgen05", value, major, bits, rows, K, face_of(prog), rows_at)
    except BadDescriptor as e:
        raise prog.error(ins, f"{ins.opcode} (thread {t}): the {what} descriptor {value:#018x} cannot be read: "
                              f"{e}") from None
    tags, bts = read_shared_async(cta, ins, addr.reshape(-1), bits // 8, np.array([t // 32]), t)
    return addr, prog.domain.elements(tags, bts).reshape(len(addr), K)


def read_tmem_a(cta: CTA, ins: Instr, index: int, tm: TensorMemory, av: int, bits: int, M: int, K: int,
                t: int, base: int = 0) -> np.ndarray:
    """The M x K A tile a ``tcgen05.mma`` (thread ``t``'s) reads from Tensor Memory at address ``av``: element
    ``(row, k)`` where the catalog's packing of A (``tcgen05.packing.A``, lanes as Layout D; M = 64: Layout F's,
    lane alignment ``base``) puts it, in the MMA pipeline's view (what earlier MMAs and copies issued); findings for
    a cell a ``tcgen05.st`` still writes and for one nothing wrote."""
    prog = cta.prog
    try:
        pc = tmem_a_cells(bits, M, K, face_of(prog), base=base)
    except NoLayout as e:
        raise prog.error(ins, f"{ins.opcode} (thread {t}): A in Tensor Memory: {e}") from None
    lane0, col0 = split(av)
    cells = tmem_cells(cta, ins, index, tm, lane0 + pc.lane, col0 + pc.col, -1, "mma").reshape(-1)
    st = tm.stored[cells] >= 0
    if st.any():
        k = int(np.argmax(st))
        prog.events.add("tmem_store_in_flight", index, cta.index, t, int(cells[k]), "tmem",
                        f"tcgen05.mma (thread {t}) reads A from Tensor Memory lane {int(cells[k]) // COLS}, column "
                        f"{int(cells[k]) % COLS} a tcgen05.st still writes (no tcgen05.wait::st between them)",
                        int(np.unique(cells[st]).size))
    eb = bits // 8
    byte = pc.byte.reshape(-1)[:, None] + np.arange(eb)[None, :]
    tags = tm.ntags[cells[:, None], byte]
    bts = tm.nbits[cells[:, None], byte]
    never = (tags == UNDEF).any(axis=1)
    if never.any():
        k = int(np.argmax(never))
        prog.events.add("unwritten_read", index, cta.index, t, int(cells[k]), "tmem",
                        f"tcgen05.mma (thread {t}) reads A from Tensor Memory lane {int(cells[k]) // COLS}, column "
                        f"{int(cells[k]) % COLS}, which nothing wrote", int(np.unique(cells[never]).size))
    if prog.trace:
        addr = (TMEM_WINDOW + 4 * cells + pc.byte.reshape(-1)).astype(U64)
        tags = prog.domain.moved(cta, index, np.full(len(cells), t, np.int64), tags, addr, "tmem")
    return prog.domain.elements(tags, bts).reshape(M, K)


def _collector(prog: Program, ins: Instr, group: int) -> tuple[int, str]:
    """A ``tcgen05.mma.ws``'s collector buffer and its use (``.collector::b0::discard`` when none is spelled)."""
    if group != 1:
        raise prog.error(ins, f"{ins.opcode}: .ws is cta_group::1 only")
    spell = next((p for p in ins.parts if p.startswith("collector::")), "collector::b0::discard")
    m = re.fullmatch(r"collector::b([0-3])::(\w+)", spell)
    if m is None or m.group(2) not in COLLECTOR_OPS:
        raise prog.error(ins, f"{ins.opcode}: .{spell} is not .collector::b0-b3::{'/'.join(COLLECTOR_OPS)}")
    return int(m.group(1)), m.group(2)


def _tmem_a_operand(prog: Program, cta: CTA, ins: Instr, index: int, tm: TensorMemory, t: int, idesc: Any, iv: int,
                    av: int, abits: int, base: int, ws: bool, group: int) -> Any:
    """A read from Tensor Memory for thread ``t``'s MMA, after the checks of where it may be (errors at the line)."""
    M, K = idesc.m, idesc.k
    if group != 1:
        raise prog.error(ins, f"{ins.opcode} (thread {t}): A in Tensor Memory with cta_group::2 is not "
                              "executed yet")
    if idesc.transpose_a:
        raise prog.error(ins, f"{ins.opcode} (thread {t}): A in Tensor Memory is K-major; the instruction "
                              f"descriptor {iv:#010x} transposes A")
    abase = split(av)[0] % 32 if M == 64 else 0
    if ws and M != 128:
        raise prog.error(ins, f"{ins.opcode} (thread {t}): A in Tensor Memory with .ws and M = {M} is not "
                              "executed yet")
    if abase != base:  # 9.7.16.10.5, lines 16-19: Layout F's A and D share the lane alignment
        raise prog.error(ins, f"{ins.opcode} (thread {t}): A in Tensor Memory at lane alignment {abase} "
                              f"and D at {base}: M = 64 (Layout F) takes one lane alignment for A and D")
    return read_tmem_a(cta, ins, index, tm, av, abits, M, K, t, abase)


def _read_accumulator(dom: Any, cta: CTA, index: int, t: int, pair: list[CTA], tms: list[TensorMemory],
                      dcells: list[np.ndarray], where: list[np.ndarray], C: Any, d_eb: int) -> None:
    """C filled from D's cells in each CTA's Tensor Memory (a tcgen05.st still writing them is an event)."""
    Cf = C.reshape(-1)
    for i, (c, tm) in enumerate(zip(pair, tms)):
        flat = dcells[i].reshape(-1)
        st = tm.stored[flat] >= 0
        if st.any():
            cta.prog.events.add("tmem_store_in_flight", index, c.index, t, int(flat[int(np.argmax(st))]),
                                "tmem", f"tcgen05.mma (thread {t}) accumulates into Tensor Memory a "
                                "tcgen05.st still writes (no tcgen05.wait::st between them)", int(st.sum()))
        Cf[where[i]] = dom.elements(tm.ntags[flat][:, :d_eb], tm.nbits[flat][:, :d_eb])


def _issue_d(dom: Any, cta: CTA, index: int, t: int, D: Any, d_eb: int, pair: list[CTA], tms: list[TensorMemory],
             dcells: list[np.ndarray], where: list[np.ndarray], off: np.ndarray | None,
             held: list[list[np.ndarray]]) -> None:
    """D's elements issued to each CTA's Tensor Memory (a disabled lane's left), in flight until the commit."""
    tags, bits = dom.memory_bytes(D.reshape(-1), d_eb)
    if d_eb < CELL:
        tags = np.concatenate([tags, np.full((len(tags), CELL - d_eb), CONCRETE, np.int64)], axis=1)
        bits = np.concatenate([bits, np.zeros((len(bits), CELL - d_eb), np.uint8)], axis=1)
    for i, (c, tm) in enumerate(zip(pair, tms)):
        cells_i = dcells[i].reshape(-1)
        keep = np.ones(len(cells_i), bool) if off is None else ~off[t][cells_i // COLS]
        tm.issue(index, cells_i[keep], tags[where[i]][keep], bits[where[i]][keep], t, held[i])
        if c is not cta:  # the pair's MMA completes at the issuing thread's commit (in its CTA)
            snap = tm.uncommitted[t].pop()
            if not tm.uncommitted[t]:
                del tm.uncommitted[t]
            snap.tmem, snap.cta = tm, c
            tmem(cta).uncommitted.setdefault(t, []).append(snap)


def _mma_run(prog: Program, ins: Instr, index: int, kind: str, d_o: Any, a_o: Any, b_o: Any, i_o: Any, en_o: Any,
             a_tmem: bool, group: int = 1, collector: tuple[int, str] | None = None,
             lanes_o: Vec | None = None, scale: int = 0, zcm_o: Any = None):
    """One thread's ``tcgen05.mma``.  ``cta_group::2``: the pair's MMA (issued by either CTA of the pair): A's M rows
    are the even CTA's M / 2 rows then the odd CTA's, each read with the one A descriptor from that CTA's shared
    memory; B's N columns are the even CTA's N / 2 then the odd CTA's, likewise; D's elements go to the Tensor Memory
    of the CTA the catalog's data-path layout (Layout A or B) names, at the one D address.  ``collector``: a ``.ws``
    MMA's collector buffer and its use (``tmem.collector_b``); its D goes where the ``.ws`` layouts put it (Layout G
    for M = 32, E for 64, D for 128).  ``lanes_o``: the disable-output-lane mask: D's elements in a Tensor Memory
    lane it disables are not written (a CTA pair's MMA with a lane disabled is refused).  ``scale``: scale-input-d,
    D = A*B + D * 2^-scale: 0 is the plain MMA, and so is any scale where D is not read (enable-input-d false); a
    scaled D that is read is no sum of products, refused at the line.  ``zcm_o``: a ``.ws`` MMA's zero-column mask
    descriptor (``descriptors.zero_column_mask``): an MMA column it masks is multiplied as zeros (no products; its B
    is not read), and MMA column n reads column n + shift of the B descriptor's tile."""
    def run(cta: CTA, m: np.ndarray | None) -> None:
        dom = prog.domain
        pair = [cta] if group == 1 else pair_of(cta, ins)
        tms = [tmem(c) for c in pair]
        en = cta.pred(en_o) if not isinstance(en_o, Imm) else np.full(cta.T, bool(en_o.value))
        off = _disabled_lanes(cta, ins, lanes_o, m) if lanes_o is not None else None
        for t in (int(x) for x in thread_rows(m, cta.T)):
            if scale and en[t]:
                raise prog.error(ins, f"unsupported instruction '{ins.opcode}' (thread {t}): scale-input-d {scale} "
                                      f"scales the accumulated D by 2^-{scale}: A*B + D*2^-{scale} is not a sum of "
                                      "products (executed: scale-input-d 0, or enable-input-d false)")
            if off is not None and off[t].any() and group != 1:
                raise prog.error(ins, f"unsupported instruction '{ins.opcode}' (a CTA pair's disable-output-lane mask "
                                      "that disables lanes is not executed yet)")
            dv, av, bv, iv, idesc = mma_operands(cta, ins, index, t, kind, d_o, a_o, b_o, i_o, m, a_tmem)
            if idesc.negate_a or idesc.negate_b:
                raise prog.error(ins, f"{ins.opcode} (thread {t}): negated operands are not executed")
            M, N, K = idesc.m, idesc.n, idesc.k
            abits, bbits = smem_bits(idesc.atype), smem_bits(idesc.btype)
            lane0, col0 = split(dv)
            ws = collector is not None
            base = lane0 % 32 if M == 64 and not ws else 0  # Layout F's lane alignment (0 or 16)
            try:
                dp = datapath(M, N, group, ws, False, base, face_of(prog))
            except NoLayout as e:
                raise prog.error(ins, f"{ins.opcode} (thread {t}): {e}") from None
            base_lane = lane0 - base
            flat_cta = dp.cta.reshape(-1)
            where = [np.flatnonzero(flat_cta == i) for i in range(group)]  # D's elements in each CTA's memory
            dcells = [tmem_cells(c, ins, index, tm, (base_lane + dp.lane).reshape(-1)[w], (col0 + dp.col).reshape(-1)[w],
                                 -1, "mma") for c, tm, w in zip(pair, tms, where)]
            A = dom.zeros((1, M, K))
            B = dom.zeros((1, K, N))
            held: list[list[np.ndarray]] = [[] for _ in pair]
            if a_tmem:
                A[0] = _tmem_a_operand(prog, cta, ins, index, tms[0], t, idesc, iv, av, abits, base, ws, group)
            mh, nh = M // group, N // group
            b_rows = None
            if zcm_o is not None:
                zeroed, shift = _zero_columns(cta, ins, zcm_o, m, t, M, N)
                b_cols = np.flatnonzero(~zeroed)
                b_rows = b_cols + shift
            for i, c in enumerate(pair):
                if not a_tmem:
                    addr, vals = read_desc(c, ins, index, av, "MN" if idesc.transpose_a else "K", abits, mh, K, t,
                                           "A", cta)
                    A[0, i * mh:(i + 1) * mh] = vals
                    held[i].append(hold(c, addr, max(abits // 8, 1), index))
                if b_rows is not None:  # .ws: cta_group::1, one CTA
                    addr, vals = read_desc(c, ins, index, bv, "MN" if idesc.transpose_b else "K", bbits, nh, K, t,
                                           "B", cta, rows_at=b_rows)
                    B[0][:, b_cols] = vals.T
                else:
                    addr, vals = read_desc(c, ins, index, bv, "MN" if idesc.transpose_b else "K", bbits, nh, K, t,
                                           "B", cta)
                    B[0, :, i * nh:(i + 1) * nh] = vals.T
                held[i].append(hold(c, addr, max(bbits // 8, 1), index))
            if collector is not None:
                B, why = collector_b(cta, collector[0], collector[1], B, ins.line, getattr(dom, "resolve", None))
                if why:
                    raise prog.error(ins, f"{ins.opcode} (thread {t}): {why}")
            C = dom.zeros((1, M, N))
            d_eb = 2 if idesc.dtype == "f16" else 4
            if en[t]:
                _read_accumulator(dom, cta, index, t, pair, tms, dcells, where, C, d_eb)
            info = np.array([[index, cta.index, t, np.uint64(av).view(np.int64), np.uint64(bv).view(np.int64), iv]],
                            np.int64)
            D = dom.matmul(cta, index, "tcgen05", A, B, C, d_eb, info)
            _issue_d(dom, cta, index, t, D, d_eb, pair, tms, dcells, where, off, held)
    return run


def _commit(prog: Program, ins: Instr, index: int) -> Step:
    """``tcgen05.commit...mbarrier::arrive::one [mbar]``: the thread's MMAs since its last commit complete, and it
    arrives once on the mbarrier (a ``shared::cluster`` address may name another CTA's); ``.multicast::cluster
    [mbar], ctaMask`` arrives on the mbarrier at that shared address in each CTA of the mask."""
    parts = ins.parts
    _cta_group(prog, ins)
    multicast = "multicast::cluster" in parts
    if not any(p.startswith("mbarrier::arrive::one") for p in parts) or len(ins.operands) != (2 if multicast else 1):
        raise prog.error(ins, f"unsupported instruction '{ins.opcode}' (tcgen05.commit...mbarrier::arrive::one "
                              "[mbar]{, ctaMask with .multicast::cluster})")
    bar_o = ins.operands[0]
    mask_o = ins.operands[1] if multicast else None

    def run(cta: CTA, m: np.ndarray | None) -> None:
        tm = tmem(cta)
        bar = shared_address(cta, ins, bar_o, m, "generic")
        mask = np.broadcast_to(np.asarray(cta.int_value(mask_o, 16, False, m, "a CTA mask")[0], U64), (cta.T,)) \
            if mask_o is not None else None
        for t in (int(x) for x in thread_rows(m, cta.T)):
            owner, a = cluster_target(cta, ins, int(bar[t]))
            if mask is None:
                targets = [owner]
            else:
                ranks = [r for r in range(16) if (int(mask[t]) >> r) & 1]
                if cta.cluster is None:
                    if ranks != [cta.rank]:
                        raise prog.error(ins, f"{ins.opcode} (thread {t}): CTA mask {int(mask[t]):#x} names CTAs "
                                              "outside a cluster of one CTA")
                    targets = [cta]
                else:
                    targets = [cta.cluster.peer(cta, r, ins) for r in ranks]
            bars = [barrier_at(c, ins, a) for c in targets]
            snaps = tm.uncommitted.pop(t, [])
            commit = Commit(index, t, snaps, tm)
            for b in bars:
                b.commits.append(_Landing(commit, cta))
    return Step(ins, index, "op", run)


class _Landing:
    """A commit's landing: its MMAs' results reach Tensor Memory and their shared-memory reads end."""

    def __init__(self, commit: Commit, cta: CTA) -> None:
        self.commit = commit
        self.cta = cta

    def land(self) -> None:
        from .access import release
        if self.commit.landed:
            return
        self.commit.land()
        for s in self.commit.snapshots:
            for idx in s.held:
                release(s.cta if s.cta is not None else self.cta, idx)


__all__ = ["BLOCK_SCALED", "COPY", "KINDS", "LD_ST", "face_of", "mma_operands", "read_desc", "read_tmem_a", "thread_rows", "tmem", "tmem_address", "tmem_cells"]
