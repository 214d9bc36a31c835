"""The chain that made a wrong output element: the store that wrote it, the ``mma`` that made the wrong product
(warp, lane, register), and the loads and copies that brought the wrong factor there, back to the input element.

The chain comes from a second, traced run of the one CTA that wrote the element (the executor is deterministic):
in it every load gives the data it moves a value of its own (``Symbolic.moved``: instruction, thread, address), so
the factor's value names each hop.  Each hop's address comes with the PTX lines that computed it (a backward slice
of the address register through the function's instructions, in text order).
"""
from __future__ import annotations

import numpy as np

from ..ptx.syntax import Addr, Instr, Module, PredPair, Reg, Vec
from .check import Product, products
from .launch import Launch
from .memory import SHARED_WINDOW, writer_parts
from .result import Link
from .symbolic import MOVE, PACK, Symbolic

NO_DEST = ("st", "cp", "bar", "barrier", "bra", "ret", "exit", "membar", "fence", "red", "stmatrix", "prefetch")


def short_name(opcode: str) -> str:
    """``mma.m16n8k16``, ``mma.sp.m16n8k16``, ``ldmatrix.x4.trans``, ``cp.async``, ``ld.shared.v4``: an opcode as the chain says it."""
    parts = opcode.split(".")
    base = parts[0]
    keep = {"mma": lambda p: p.startswith("m") and "k" in p or p == "sp", "ldmatrix": lambda p: p in ("x1", "x2", "x4", "trans"),
            "stmatrix": lambda p: p in ("x1", "x2", "x4", "trans"), "cp": lambda p: p in ("async", "bulk", "tensor"),
            "ld": lambda p: p in ("shared", "global", "param") or p.startswith("v"),
            "st": lambda p: p in ("shared", "global") or p.startswith("v"),
            "shfl": lambda p: p in ("up", "down", "bfly", "idx"),
            "wgmma": lambda p: p in ("mma_async", "sp") or p.startswith("m") and "k" in p,
            "tcgen05": lambda p: p in ("mma", "ld", "st", "cp", "ws", "kind", "warpx2", "warpx4", "pack", "unpack")
            or p[:1].isdigit() and "x" in p or p.startswith("x") and p[1:].isdigit()}.get(base)
    if keep is None:
        return opcode
    return ".".join([base] + [p for p in parts[1:] if keep(p.split("::")[0])])


def source_of(module: Module, ins: Instr) -> str:
    """The kernel's source line the PTX's ``.loc`` gives for ``ins`` (the outermost of an inlined chain)."""
    if ins.loc is None:
        return ""
    loc = ins.loc.outermost()
    if loc.line == 0:
        return ""
    return f"{module.source_name(loc.file)}:{loc.line}"


def address_lines(fn, instrs: list[Instr], at: int) -> tuple[int, int] | None:
    """The first and last PTX line of the instructions that computed ``instrs[at]``'s address register, within its
    basic block (back to the label before it): a backward slice through the registers they read."""
    ins = instrs[at]
    want: set[int] = set()
    for o in ins.operands:
        if isinstance(o, Addr) and isinstance(o.base, Reg):
            want.add(o.base.id)
    if not want:
        return None
    labels = sorted(k for k in _label_positions(fn))
    block_start = max([k for k in labels if k <= at] or [0])
    lines: list[int] = []
    for k in range(at - 1, block_start - 1, -1):
        if not want:
            break
        cand = instrs[k]
        if cand.base in NO_DEST or not cand.operands:
            continue
        d = cand.operands[0]
        ds = [d] if isinstance(d, Reg) else list(d.items) if isinstance(d, Vec) else \
            [d.first, d.second] if isinstance(d, PredPair) else []
        hit = {x.id for x in ds if isinstance(x, Reg)} & want
        if not hit:
            continue
        want -= hit
        lines.append(cand.line)
        if cand.base == "ld" and "param" in cand.parts:
            continue
        for o in cand.operands[1:]:
            if isinstance(o, Reg):
                want.add(o.id)
            elif isinstance(o, Addr) and isinstance(o.base, Reg):
                want.add(o.base.id)
    return (min(lines), max(lines)) if lines else None


def _label_positions(fn) -> list[int]:
    """Instruction indices at which a label stands (a basic block starts)."""
    out, n = [], 0
    for st in fn.body:
        if isinstance(st, Instr):
            n += 1
        else:
            out.append(n)
    return out


def _where(space: str, address: int, gmem) -> str:
    from .tmem import COLS, TMEM_WINDOW
    if TMEM_WINDOW <= address < SHARED_WINDOW and space != "shared":
        cell, byte = divmod(address - TMEM_WINDOW, 4)
        return f"Tensor Memory lane {cell // COLS}, column {cell % COLS}" + (f", byte {byte}" if byte else "")
    if space == "shared":
        return f"shared 0x{address:x}"
    if address >= SHARED_WINDOW:
        return f"shared 0x{address - SHARED_WINDOW:x}"
    return gmem.describe(address)


def chain(module: Module, fn, launch: Launch, run, element: int, product: Product | None,
          side: str) -> tuple[Link, ...]:
    """The chain of wrong element ``element`` (row-major) of the first run ``run`` (symbolic)."""
    from .run import execute
    from .symbolic import element_starts
    gmem = run.gmem
    out_t = launch.tensors()[launch.computes.output.tensor]
    region = gmem.by_name[out_t.name]
    start = int(element_starts(out_t)[element])
    code = int(region.writer[start])
    if code < 0:
        return ()
    cta, thread, instr = writer_parts(code)
    steps = run.prog.steps
    instrs = [s.instr for s in steps]
    st = instrs[instr]
    atomic = st.base in ("atom", "red")  # the element's last update (``ops_atom``): the others added to it too
    links = [Link(short_name(st.opcode), st.line, st.col, source_of(module, st),
                  f"(CTA {cta}, thread {thread}) {'made its last atomic update' if atomic else 'wrote it'}")]
    if product is None:
        return tuple(links)
    traced = execute(module, fn, launch, Symbolic(launch, trace=True), trace=True, only=cta)
    sym: Symbolic = traced.domain
    tregion = traced.gmem.by_name[out_t.name]
    vals, _, _ = sym.output_values(traced.gmem)
    if int(tregion.writer[start]) != code:
        return tuple(links)
    prods, _ = products(sym, int(vals[element]))
    match = next((p for p in prods if p.link == product.link and p.k == product.k and p.r == product.r
                  and p.c == product.c), None)
    if match is None:
        return tuple(links)
    links.extend(_tensor_memory_hops(module, sym, instrs, int(vals[element])))
    ta, tb, info, _ = sym.forms[match.form]
    row_info = [int(x) for x in info.view()[match.row]]
    mi = instrs[row_info[0]]
    factor = match.a if side == "a" else match.b if side == "b" else match.extra[0 if side == "sa" else 1]
    first_hop = _first_move(sym, factor)
    tail = ""
    if mi.base == "mma":
        words = _mma_words(mi, match, side, row_info[2])
    else:
        words, tail, skip = _async_mma_words(mi, match, side, row_info, first_hop, row_info[0])
        if skip:
            factor = skip
    links.append(Link(short_name(mi.opcode), mi.line, mi.col, source_of(module, mi),
                      f"{words} multiplied {sym.value_words(factor if side in ('sa', 'sb') else match.a if side == 'a' else match.b)}"
                      f"{tail}".strip()))
    v = factor
    if 0 < v < sym.first:  # an element packed in a byte (s4, u4, b1): follow the byte's value from its last move
        v = _packed_move(sym, v)
    hops = 0
    while v >= sym.first and hops < 32:
        row = sym.row(np.array([v]))[0]
        if row[0] != MOVE:
            if row[0] == 2:  # CONV: transparent
                v = int(row[2])
                continue
            break
        src, idx, ct, address = int(row[2]), int(row[3]), int(row[4]), int(row[5])
        hop = instrs[idx]
        thread_h = ct & 0xFFFFFFFF
        space = "shared" if hop.base == "ldmatrix" or "shared" in hop.parts and hop.base != "cp" else \
            "tmem" if hop.base == "tcgen05" else "global"
        sl = address_lines(fn, instrs, idx)
        addr_words = f" (address from lines {sl[0]}-{sl[1]})" if sl and sl[0] != sl[1] else \
            f" (address from line {sl[0]})" if sl else ""
        if hop.base == "cp" and "bulk" in hop.parts:
            words = f"(thread {thread_h}) placed {sym.value_words(src)} there (its tensor map's box){addr_words}"
        elif hop.base == "cp":
            words = f"(thread {thread_h}) wrote {sym.value_words(src)} there{addr_words}"
        elif hop.base == "tcgen05" and "cp" in hop.parts:
            both = f" of both CTAs of the pair (issued by CTA {ct >> 32})" if "cta_group::2" in hop.parts else ""
            words = f"(thread {thread_h}) copied it from shared memory to {_where('tmem', address, traced.gmem)}" \
                    f"{both}{addr_words}"
        elif hop.base == "tcgen05" and "st" in hop.parts:
            words = f"(thread {thread_h}) wrote it to {_where('tmem', address, traced.gmem)}{addr_words}"
        elif hop.base in ("st", "stmatrix"):
            words = f"(thread {thread_h}) wrote it to {_where('shared', address, traced.gmem)}{addr_words}"
        else:
            words = f"(thread {thread_h}) read {_where(space, address, traced.gmem)}{addr_words}"
        links.append(Link(short_name(hop.opcode), hop.line, hop.col, source_of(module, hop), words))
        v = src
        hops += 1
    return tuple(links)


def _tensor_memory_hops(module: Module, sym: Symbolic, instrs: list[Instr], v: int) -> list[Link]:
    """The ``tcgen05.ld`` hops of an output element's value on its way from the MMA (the Tensor Memory cell it was read
    from, and which element of which MMA's D the cell held)."""
    from .tmem import COLS, TMEM_WINDOW
    out: list[Link] = []
    hops = 0
    while v >= sym.first and hops < 32:
        row = sym.row(np.array([v]))[0]
        if row[0] not in (MOVE, 2):
            break
        if row[0] == 2:
            v = int(row[2])
            continue
        src, idx, ct, address = int(row[2]), int(row[3]), int(row[4]), int(row[5])
        hop = instrs[idx]
        if hop.base == "tcgen05" and TMEM_WINDOW <= address < SHARED_WINDOW:
            cell = (address - TMEM_WINDOW) // 4
            held = ""
            s_row = sym.row(np.array([int(sym.resolve(np.array([src]))[0])]))[0] if src >= sym.first else None
            if s_row is not None and s_row[0] == 1:  # SUM: (prev, form/row, r, c)
                ta, tb, info, _ = sym.forms[int(s_row[3]) >> 40]
                mi = instrs[int(info.view()[int(s_row[3]) & ((1 << 40) - 1)][0])]
                held = f", which holds element ({int(s_row[4])}, {int(s_row[5])}) of the D of the {short_name(mi.opcode)} " \
                       f"at line {mi.line}"
            out.append(Link(short_name(hop.opcode), hop.line, hop.col, source_of(module, hop),
                            f"(thread {ct & 0xFFFFFFFF}) {'wrote it to' if hop.opcode.startswith('tcgen05.st') else 'read'} "
                            f"Tensor Memory lane {cell // COLS}, column {cell % COLS}{held}"))
        v = src
        hops += 1
    return out


def _packed_move(sym: Symbolic, atom: int) -> int:
    """The last move of the packed byte that holds element ``atom`` (the first such chain in the table: the traced
    CTA's), or ``atom`` when it is no packed element or never moved."""
    rows = sym.table.view()
    kind = rows[:, 0]
    hit = np.flatnonzero((kind == PACK) & (rows[:, 2] <= atom) & (atom < rows[:, 2] + rows[:, 3]))
    if not len(hit):
        return atom
    v = sym.first + int(hit[0])
    moves = np.flatnonzero(kind == MOVE)
    src = rows[moves, 2]
    for _ in range(32):
        nxt = moves[src == v]
        if not len(nxt):
            break
        v = sym.first + int(nxt[0])
    return v


def _first_move(sym: Symbolic, v: int) -> tuple[int, ...] | None:
    """The first MOVE a value passed through (through conversions): (source, instruction, cta/thread, address)."""
    hops = 0
    while v >= sym.first and hops < 8:
        row = sym.row(np.array([v]))[0]
        if row[0] == MOVE:
            return int(row[2]), int(row[3]), int(row[4]), int(row[5])
        if row[0] != 2:
            return None
        v = int(row[2])
        hops += 1
    return None


def _mma_words(mi: Instr, match: Product, side: str, warp: int) -> str:
    """``(warp 0, lane 4, register a0 = %r221, element 0)``: where an ``mma.sync`` took the wrong factor."""
    from .fragments import mma_form
    from .ops_tc import operand_registers
    parts = mi.parts
    types = [p for p in parts if p in ("f16", "bf16", "tf32", "f32", "f64", "s8", "u8", "s4", "u4", "s32", "e4m3",
                                       "e5m2", "b1")]
    shape = next(p for p in parts if p.startswith("m") and "k" in p)
    sparse = "sp" in parts or "sp::ordered_metadata" in parts
    if sparse:
        from .fragments import sparse_mma_form
        sform = sparse_mma_form(shape, *types)
        op = sform.a if side == "a" else sform.b
    else:
        form = mma_form(shape, *types)
        op = form.a if side == "a" else form.b
    want = (match.r, match.k) if side == "a" else (match.k, match.c)
    if sparse and side == "a":  # a stored element of the chunk of k (the metadata places it in the chunk)
        width = sform.shape[2] // (int(sform.chunk.max()) + 1)
        hit = np.argwhere((op.row == want[0]) & (sform.chunk == want[1] // width))
    else:
        at = (op.row == want[0]) & (op.col == want[1])
        if op.group is not None:  # one of several MMA computations (m8n8k4's quad-pairs): the product's own
            at &= op.group == match.row % form.groups
        hit = np.argwhere(at)
    regs = operand_registers(mi)
    if not len(hit):
        return ""
    lane, i = (int(x) for x in hit[0])
    j = i // op.per_register
    name = regs[1 if side == "a" else 2][j]
    if sparse and side == "a":  # which stored element of the chunk is not known here: the metadata says where it went
        chunk = int(sform.chunk[lane, i])
        sel = getattr(mi.operands[5], "value", -1) if len(mi.operands) == 6 else -1
        own = np.argwhere((sform.selector[:, None] == sel) & (sform.meta_row == want[0]) & (sform.meta_chunk == chunk))
        meta = regs[4][0] if len(regs) > 4 else "?"
        where = f", lane {int(own[0][0])}, bits {4 * int(own[0][1])}-{4 * int(own[0][1]) + 3}" if len(own) else ""
        return (f"(warp {warp}, lane {lane}, register a{j} = {name}: a stored element of row {want[0]}'s chunk {chunk}, "
                f"placed at k {want[1]} by the metadata {meta}{where}, selector {sel})")
    return f"(warp {warp}, lane {lane}, register {'ab'[side == 'b']}{j} = {name}" + \
        (f", element {i % op.per_register})" if op.per_register > 1 else ")")


def _async_mma_words(mi: Instr, match: Product, side: str, info: list[int], first_hop: tuple[int, ...] | None,
                     index: int) -> tuple[str, str, int]:
    """The words of a ``wgmma`` (or ``tcgen05.mma``) link: the unit, the tile element the wrong factor stood at, and
    where it came from: the register (A in registers) or the descriptor and the shared address it read.  Also the
    value to follow next (the data the descriptor read, past the MOVE of the read itself; 0: the factor)."""
    from .descriptors import BadDescriptor, descriptor_words, instruction_descriptor
    unit = info[2]
    if side in ("sa", "sb"):  # a scale factor: the Tensor Memory byte it came from, and the ids that chose it
        kind = next((p.split("::")[1] for p in mi.parts if p.startswith("kind::")), "")
        idesc = info[5] if len(info) > 5 else 0
        try:
            ids = instruction_descriptor(kind, idesc % (1 << 32))
            ids_words = f"SFA_ID {ids.sfa_id}, SFB_ID {ids.sfb_id}"
        except BadDescriptor:  # the MMA ran with it, so it decodes; words only
            ids_words = "ids unreadable"
        where, skip = "", 0
        if first_hop is not None and first_hop[1] == index:
            from .tmem import COLS, TMEM_WINDOW
            cell, byte = divmod(first_hop[3] - TMEM_WINDOW, 4)
            where = f" from Tensor Memory lane {cell // COLS}, column {cell % COLS}, byte {byte}"
            skip = first_hop[0]
        operand = "A" if side == "sa" else "B"
        elem = f"({match.r}, {match.k})" if side == "sa" else f"({match.k}, {match.c})"
        return (f"(issued by thread {unit})", f", the scale factor of element {elem} of its {operand} tile: the "
                f"instruction descriptor {idesc % (1 << 32):#010x} ({ids_words}) reads it{where}", skip)
    tile = f"({match.r}, {match.k}) of its A tile" if side == "a" else f"({match.k}, {match.c}) of its B tile"
    desc = info[3] if side == "a" else info[4]
    operand = "A" if side == "a" else "B"
    who = f"warpgroup {unit}" if mi.base == "wgmma" else f"issued by thread {unit}"
    if desc == -1 and mi.base == "wgmma":
        from .fragments import SparseWarpgroupForm
        from .ops_wgmma import form_of
        form = form_of(mi)
        op = form.a
        if isinstance(form, SparseWarpgroupForm):  # a stored element of the chunk of k: the metadata placed it at k
            hit = np.argwhere((op.row == match.r) & (form.chunk == match.k // form.width))
        else:
            hit = np.argwhere((op.row == match.r) & (op.col == match.k))
        if len(hit):
            t, i = (int(x) for x in hit[0])
            j = i // op.per_register
            regs = mi.operands[1]
            name = getattr(regs.items[j], "name", "_") if isinstance(regs, Vec) else "_"
            if isinstance(form, SparseWarpgroupForm):
                meta = getattr(mi.operands[3], "name", "?")
                sel = getattr(mi.operands[4], "value", -1)
                own = np.argwhere((form.selector[:, None] == sel) & (form.meta_row == match.r)
                                  & (form.meta_chunk == form.chunk[t, i]))
                bits = f", thread {int(own[0][0])}, bits {4 * int(own[0][1])}-{4 * int(own[0][1]) + 3}" if len(own) else ""
                return (f"({who}, thread {t}, register a{j} = {name}: a stored element of row {match.r}'s chunk "
                        f"{int(form.chunk[t, i])}, placed at k {match.k} by the metadata {meta}{bits}, selector {sel})",
                        f", element {tile}", 0)
            return (f"({who}, thread {t}, register a{j} = {name}" +
                    (f", element {i % op.per_register}" if op.per_register > 1 else "") + ")", f", element {tile}", 0)
        return f"({who})", f", element {tile}", 0
    if side == "a" and mi.base == "tcgen05" and len(mi.operands) > 1 and isinstance(mi.operands[1], Addr):
        from .tmem import COLS, TMEM_WINDOW, split  # A in Tensor Memory: its address, and the cell it read
        lane, col = split(desc % (1 << 32))
        where, skip = "", 0
        if first_hop is not None and first_hop[1] == index and first_hop[3] >= TMEM_WINDOW:
            cell, byte = divmod(first_hop[3] - TMEM_WINDOW, 4)
            where = f" from Tensor Memory lane {cell // COLS}, column {cell % COLS}" + (f", byte {byte}" if byte else "")
            skip = first_hop[0]
        elif len(info) > 5:  # an undefined value moves nowhere: the cell the catalog's packing of A names
            where = _tmem_a_cell(mi, info[5], lane, col, match.r, match.k)
        return (f"({who})", f", element {tile}: the A address {desc % (1 << 32):#010x} (Tensor Memory lane {lane}, "
                f"column {col}) reads it{where}", skip)
    value = desc % (1 << 64)
    instr = "wgmma" if mi.base == "wgmma" else "tcgen05"
    where = ""
    skip = 0
    if first_hop is not None and first_hop[1] == index:
        where = f" from shared 0x{first_hop[3]:x}"
        skip = first_hop[0]
    return (f"({who})", f", element {tile}: the {operand} descriptor {value:#018x} ({descriptor_words(instr, value)}) "
            f"reads it{where}", skip)


def _tmem_a_cell(mi: Instr, idesc: int, lane: int, col: int, r: int, k: int) -> str:
    """`` from Tensor Memory lane L, column C[, byte B]``: where a ``tcgen05.mma`` with A in Tensor Memory at (lane,
    col) reads element (r, k) of its A tile (the catalog's packing of A), or "" where that is not known."""
    from ..layout.types import ELEMENT_BITS
    from .fragments import NoLayout
    from .descriptors import BadDescriptor, instruction_descriptor
    from .tmem_a import tmem_a_cells
    kind = next((p.split("::")[1] for p in mi.parts if p.startswith("kind::")), "")
    try:
        ids = instruction_descriptor(kind, idesc % (1 << 32))
        pc = tmem_a_cells(ELEMENT_BITS.get(ids.atype, 8), ids.m, ids.k, base=lane % 32 if ids.m == 64 else 0)
    except (BadDescriptor, NoLayout):
        return ""
    byte = int(pc.byte[r, k])
    return (f" from Tensor Memory lane {lane + int(pc.lane[r, k])}, column {col + int(pc.col[r, k])}"
            + (f", byte {byte}" if byte else ""))


__all__ = ["address_lines", "chain", "short_name", "source_of"]
