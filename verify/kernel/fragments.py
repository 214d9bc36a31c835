"""The tensor-core instructions' meaning, read from the catalog: the ONE module of the kernel executor that
touches the fragment model.

Each operand of ``mma``, ``ldmatrix``, ``stmatrix`` and ``movmatrix`` is a named map ``(lane, i) -> (row, col)``
(``layout.map``, ``verify.layout.fragment_maps``), tabulated here for the 32 lanes as ``Operand`` (numpy tables plus the
register packing: registers, elements per register, element bits).  The executor never reads a layout any other
way, so a fixed spec changes the executor, and the engineer who unifies the two layout models changes this
module only.  Two faces are offered: ``vector`` (the map's numpy ``evaluate``, read by the symbolic engine) and
``scalar`` (its one-point ``at``, read by the numeric engine), so the two engines do not share one tabulation.
"""
from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Mapping
from pathlib import Path

import numpy as np

from ..catalog import bundled
from ..catalog.instructions import effective, instructions
from ..catalog.spec import load_spec_file
from ..layout.types import ELEMENT_BITS, REGISTER_BITS


class NoLayout(LookupError):
    """The catalog states no layout for an instruction form (the executor reports it as unsupported)."""


@dataclass(frozen=True)
class Operand:
    """One operand's fragment for a warp: element ``i`` of lane ``l`` is matrix cell ``(row[l, i], col[l, i])``;
    element ``i`` is element ``i % per_register`` (from the low bits) of register ``i // per_register``."""

    layout_id: str
    rows: int
    cols: int
    registers: int
    per_register: int
    element_bits: int
    register_bits: int
    row: np.ndarray  # int64[32, elements]
    col: np.ndarray
    group: np.ndarray | None = None  # which of the instruction's MMA computations (m8n8k4's quad-pairs); None: one

    @property
    def elements(self) -> int:
        return int(self.row.shape[1])


@dataclass(frozen=True)
class MmaForm:
    """``mma.sync`` of one shape and type combination: operands A (M x K), B (K x N), C and D (M x N)."""

    shape: tuple[int, int, int]
    a: Operand
    b: Operand
    c: Operand
    d: Operand
    groups: int = 1  # MMA computations per warp (m8n8k4 .f16: one per quad-pair, each operand's ``group``)


def _specs_dir(specs: str | None) -> Path:
    return Path(specs) if specs else Path(bundled.resolve().path)


@functools.lru_cache(maxsize=64)
def _spec(path: str):
    return load_spec_file(path)


def _table(lay, env: dict[str, int], face: str, group: bool = False):
    """(row, col) of every (thread, i) of ``lay`` (a member ``env`` of a family), by ``face``: a warp's 32 lanes, or a
    warpgroup's 128 threads."""
    fm = lay.map
    lay_i = lay.instance(**env) if env else lay
    n = int(lay_i.domain.elements)
    T = int(lay_i.domain.threads)
    tname = fm.inputs[0].name
    rows, cols = int(lay_i.codomain.rows), int(lay_i.codomain.cols)
    out_r, out_c = (d.name for d in fm.outputs if d.name != "mma")
    has_group = any(d.name == "mma" for d in fm.outputs)
    grp = np.zeros((T, n), np.int64)
    if face == "vector":
        v = fm.evaluate({tname: np.arange(T, dtype=np.int64)[:, None], "i": np.arange(n, dtype=np.int64)[None, :]},
                        env or None)
        if not np.all(v.ok):
            raise NoLayout(f"{lay.id} leaves some ({tname}, i) without a cell")
        row = np.ascontiguousarray(np.broadcast_to(v.out[out_r], (T, n))).astype(np.int64)
        col = np.ascontiguousarray(np.broadcast_to(v.out[out_c], (T, n))).astype(np.int64)
        if has_group:
            grp = np.ascontiguousarray(np.broadcast_to(v.out["mma"], (T, n))).astype(np.int64)
    else:
        row = np.zeros((T, n), np.int64)
        col = np.zeros((T, n), np.int64)
        for t in range(T):
            for i in range(n):
                cell = fm.at({tname: t, "i": i}, env or None)
                if cell is None:
                    raise NoLayout(f"{lay.id} leaves {tname} {t}, element {i} without a cell")
                row[t, i], col[t, i] = cell[out_r], cell[out_c]
                grp[t, i] = cell.get("mma", 0)
    if group:
        return row, col, rows, cols, (grp if has_group else None)
    return row, col, rows, cols


def _operand(lay, env: dict[str, int], face: str, element_type: str) -> Operand:
    row, col, rows, cols, grp = _table(lay, env, face, group=True)
    lay_i = lay.instance(**env) if env else lay
    regs = int(lay_i.regs.count)
    ebits = lay.regs.element_bits or ELEMENT_BITS.get(element_type) or ELEMENT_BITS[lay.types[0]]
    rbits = REGISTER_BITS.get(lay.regs.type, 32)
    return Operand(lay.id, rows, cols, regs, int(lay.regs.elements_per_register), int(ebits), rbits, row, col, grp)


_MMA_SPEC_FILES = {"m16n8k16": ("mma.m16n8k16.float.toml", "mma.m16n8k16.int.toml"), "m16n8k8": ("mma.m16n8k8.toml",),
                   "m16n8k32": ("mma.m16n8k32.toml",), "m16n8k4": ("mma.m16n8k4.toml",), "m8n8k4": ("mma.m8n8k4.f16.toml",
                   "mma.m8n8k4.f64.toml"), "m8n8k16": ("mma.m8n8k16.toml",), "m8n8k32": ("mma.m8n8k32.toml",),
                   "m16n8k64": ("mma.m16n8k64.toml",), "m8n8k128": ("mma.m8n8k128.toml",),
                   "m16n8k128": ("mma.m16n8k128.toml",), "m16n8k256": ("mma.m16n8k256.toml",)}


def _mma_operands(paths: Iterable[Path], dtype: str, atype: str, btype: str,
                  ctype: str) -> Iterator[tuple[Any, Any, tuple[Any, Any, Any]]]:
    """Each ``mma`` instruction of the spec files at ``paths`` (those that exist) whose operands take these types:
    its spec, the instruction and its A, B and C operands."""
    for path in paths:
        if not path.exists():
            continue
        spec = _spec(str(path))
        for ins in instructions(spec):
            if ins.kind != "mma":
                continue
            a, b, c = ins.operand("A"), ins.operand("B"), ins.operand("C")
            if atype in a.types and btype in b.types and ctype in c.types and dtype in c.types:
                yield spec, ins, (a, b, c)


@functools.lru_cache(maxsize=256)
def mma_form(shape: str, dtype: str, atype: str, btype: str, ctype: str, variant: str = "", face: str = "vector",
             specs: str | None = None) -> MmaForm:
    """The catalog's ``mma.sync.aligned.<shape>`` for these types (``variant``: m8n8k4's ``row.col`` order)."""
    files = _MMA_SPEC_FILES.get(shape)
    if not files:
        raise NoLayout(f"no catalog layouts for mma.{shape}")
    root = _specs_dir(specs)
    for spec, ins, (a, b, c) in _mma_operands((root / name for name in files), dtype, atype, btype, ctype):
        if variant and (a.variant or "") + "." + (b.variant or "") != variant and (a.variant or b.variant):
            continue
        m, n, k = (int(x) for x in (spec.shape.m, spec.shape.n, spec.shape.k))
        groups = {int(x.domain.groups) for x in (a, b, c)}
        if len(groups) != 1:
            raise NoLayout(f"mma.{shape}'s operands belong to different numbers of MMA computations")
        bits = {a.regs.element_bits or ELEMENT_BITS.get(atype, 8), b.regs.element_bits or ELEMENT_BITS.get(btype, 8)}
        if min(bits) < 8 and (len(bits) > 1 or 8 % min(bits)):
            raise NoLayout(f"mma.{shape} with {atype} x {btype}: elements that do not pack whole bytes")
        ops = [_operand(a, {}, face, atype), _operand(b, {}, face, btype), _operand(c, {}, face, ctype),
               _operand(c, {}, face, dtype)]
        (g,) = groups
        if g > 1 and any(o.group is None for o in ops):
            raise NoLayout(f"mma.{shape}: an operand of {g} MMA computations does not say which each element is in")
        return MmaForm((m, n, k), ops[0], ops[1], ops[2], ops[3], groups=g)
    raise NoLayout(f"the catalog has no mma.{shape} with D {dtype}, A {atype}, B {btype}, C {ctype}")


@dataclass(frozen=True)
class SparseForm:
    """``mma.sp`` of one shape and type combination: A's stored elements (``a``: row and compressed column; ``chunk``
    and ``j``: element ``i`` of lane ``l`` is kept element ``j`` of chunk ``chunk`` of its row), the metadata layout
    (``meta_row``/``meta_chunk`` [32, 8]: the (row, chunk) whose index field nibble ``n`` of lane ``l``'s metadata
    register holds, -1 where none; ``selector`` [32]: the sparsity-selector value naming each lane, -1 where none),
    the metadata values allowed (``valid``; ``ordered`` for ``::ordered_metadata``) and ``logical``: the logical
    column of kept element ``j`` of chunk ``chunk`` under a 4-bit field ``m`` (the catalog's ``SparseMap``)."""

    shape: tuple[int, int, int]
    a: Operand
    b: Operand
    c: Operand
    d: Operand
    chunk: np.ndarray
    j: np.ndarray
    meta_row: np.ndarray
    meta_chunk: np.ndarray
    selector: np.ndarray
    selectors: tuple[int, ...]
    valid: tuple[int, ...]
    ordered: tuple[int, ...]
    logical: object


def _sparse_a(lay, face: str, element_type: str):
    """A sparse A's stored elements: (Operand with compressed columns, chunk, j) by ``face``."""
    from ..layout.sparse import metadata_cell, metadata_table, selector_of
    sm = lay.map
    md = sm.model
    T, n = int(lay.domain.threads), int(lay.domain.elements)
    if face == "vector":
        inf = sm.info(lay.domain)
        if not np.all(inf.ok):
            raise NoLayout(f"{lay.id} leaves some (lane, i) without a stored cell")
        row, col, chunk, j = (np.ascontiguousarray(np.broadcast_to(x, (T, n))).astype(np.int64)
                              for x in (inf.row, inf.col, inf.chunk, inf.j))
        tab = metadata_table(md, T)
        sel_of, cell_of = tab.selector, tab.cell
    else:
        row, col, chunk, j = (np.zeros((T, n), np.int64) for _ in range(4))
        for t in range(T):
            for i in range(n):
                p = sm.point_info(t, i)
                if p is None or not p.ok:
                    raise NoLayout(f"{lay.id} leaves lane {t}, element {i} without a stored cell")
                row[t, i], col[t, i], chunk[t, i], j[t, i] = p.row, p.col, p.chunk, p.j
        def sel_of(lane: int) -> int | None:
            return selector_of(md, lane)

        def cell_of(lane: int, n: int) -> tuple[int, int] | None:
            return metadata_cell(md, lane, n)
    from ..layout.sparse import NIBBLES_PER_REGISTER
    mrow = np.full((T, NIBBLES_PER_REGISTER), -1, np.int64)
    mchunk = np.full((T, NIBBLES_PER_REGISTER), -1, np.int64)
    sel = np.full(T, -1, np.int64)
    for t in range(T):
        v = sel_of(t)
        sel[t] = -1 if v is None else v
        for k in range(NIBBLES_PER_REGISTER):
            cell = cell_of(t, k)
            if cell is not None:
                mrow[t, k], mchunk[t, k] = cell
    ebits = lay.regs.element_bits or ELEMENT_BITS.get(element_type) or ELEMENT_BITS[lay.types[0]]
    rows, cols = int(lay.codomain.rows), int(lay.codomain.cols)
    op = Operand(lay.id, rows, cols, int(lay.regs.count), int(lay.regs.elements_per_register), int(ebits),
                 REGISTER_BITS.get(lay.regs.type, 32), row, col)
    return op, chunk, j, mrow, mchunk, sel, md


@functools.lru_cache(maxsize=64)
def sparse_mma_form(shape: str, dtype: str, atype: str, btype: str, ctype: str, face: str = "vector",
                    specs: str | None = None) -> SparseForm:
    """The catalog's ``mma.sp[::ordered_metadata].sync.aligned.<shape>`` for these types."""
    root = _specs_dir(specs)
    paths = sorted(root.glob(f"mma.sp.{shape}.*.toml"))
    if not paths:
        raise NoLayout(f"no catalog layouts for mma.sp.{shape}")
    for spec, ins, (a, b, c) in _mma_operands(paths, dtype, atype, btype, ctype):
        bits = {a.regs.element_bits or ELEMENT_BITS.get(atype, 8), b.regs.element_bits or ELEMENT_BITS.get(btype, 8)}
        if min(bits) < 8 and (len(bits) > 1 or 8 % min(bits)):
            raise NoLayout(f"mma.sp.{shape} with {atype} x {btype}: elements that do not pack whole bytes")
        m, n, k = (int(x) for x in (spec.shape.m, spec.shape.n, spec.shape.k))
        op, chunk, j, mrow, mchunk, sel, md = _sparse_a(a, face, atype)
        if md.metadata is None:
            raise NoLayout(f"{a.id} has no metadata layout")
        for x in (op.row, op.col, chunk, j, mrow, mchunk, sel):
            x.setflags(write=False)
        return SparseForm((m, n, k), op, _operand(b, {}, face, btype), _operand(c, {}, face, ctype),
                          _operand(c, {}, face, dtype), chunk, j, mrow, mchunk, sel, tuple(md.selectors),
                          tuple(md.valid), tuple(md.ordered), a.map.logical_at)
    raise NoLayout(f"the catalog has no mma.sp.{shape} with D {dtype}, A {atype}, B {btype}, C {ctype}")


@functools.lru_cache(maxsize=64)
def matrix_load(name: str, shape: str, num: int, trans: bool, face: str = "vector", specs: str | None = None) -> Operand:
    """``ldmatrix``/``stmatrix`` ``.<shape>.x<num>[.trans].b16``: register element (lane, i) is element ``col`` of
    the row whose address lane ``row`` supplies (rows ``8k .. 8k + 7`` are matrix k)."""
    root = _specs_dir(specs)
    path = root / f"{name}.{shape}.toml"
    if shape != "m8n8" or not path.exists():
        raise NoLayout(f"no catalog layout for {name}.{shape}")
    want = f"{name}.{shape}.R.b16" + (".trans" if trans else "")
    for lay in effective(_spec(str(path)).layouts):
        if lay.doc_id == want:
            return _operand(lay, {"NUM": num}, face, "b16")
    raise NoLayout(f"no catalog layout {want}")


@functools.lru_cache(maxsize=8)
def transpose_form(face: str = "vector", specs: str | None = None) -> tuple[Operand, Operand]:
    """``movmatrix.sync.aligned.m8n8.trans.b16``: (source A, result D), D in the coordinates of A's transpose."""
    path = _specs_dir(specs) / "movmatrix.toml"
    if not path.exists():
        raise NoLayout("no catalog layout for movmatrix")
    lays = {lay.operand: lay for lay in effective(_spec(str(path)).layouts)}
    return _operand(lays["A"], {}, face, "b16"), _operand(lays["D"], {}, face, "b16")


@dataclass(frozen=True)
class WarpgroupForm:
    """``wgmma.mma_async`` of one shape and type combination, for the 128 threads of a warpgroup: A (M x K, from
    registers when ``a`` is given, else from shared memory through a descriptor), B (K x N, from shared memory) and
    the accumulator D (M x N, also C); element bits of A and B as shared memory holds them."""

    shape: tuple[int, int, int]
    a: Operand
    d: Operand
    a_bits: int
    b_bits: int


def _shape_numbers(shape: str) -> tuple[int, int, int]:
    import re
    m = re.fullmatch(r"m(\d+)n(\d+)k(\d+)", shape)
    if not m:
        raise NoLayout(f"shape {shape!r} is not mMnNkK")
    return int(m.group(1)), int(m.group(2)), int(m.group(3))


@functools.lru_cache(maxsize=256)
def wgmma_form(shape: str, dtype: str, atype: str, btype: str, face: str = "vector", specs: str | None = None
               ) -> WarpgroupForm:
    """The catalog's ``wgmma.mma_async.sync.aligned.<shape>.<dtype>.<atype>.<btype>`` (dense): its A register
    fragment and its D accumulator, the family member of the shape's N."""
    (M, N, K), a, d, bits = _wgmma_operands("wgmma", shape, dtype, atype, btype, "yet", "A", specs)
    return WarpgroupForm((M, N, K), _operand(a, {"N": N} if a.is_family else {}, face, atype),
                         _operand(d, {"N": N}, face, dtype), bits[0], bits[1])


def _wgmma_operands(name: str, shape: str, dtype: str, atype: str, btype: str, narrow: str, n_of: str,
                    specs: str | None) -> tuple[tuple[int, int, int], Any, Any, list[int]]:
    """The shape, A and D layouts and A/B element bits of ``<name>.<shape>.<dtype>.<atype>.<btype>`` from the
    catalog's ``<name>.mMnNkK*`` spec files (8-bit A and B may be of either kind), N checked against the family
    of operand ``n_of``; ``narrow`` ends the words that refuse sub-byte elements."""
    M, N, K = _shape_numbers(shape)
    for path in sorted(_specs_dir(specs).glob(f"{name}.m{M}nNk{K}*.toml")):
        lays = effective(_spec(str(path)).layouts)
        a = next((x for x in lays if x.operand == "A" and atype in x.types), None)
        d = next((x for x in lays if x.operand == "D" and dtype in x.types), None)
        if a is None or d is None or btype not in a.types and not (
                {atype, btype} <= {"e4m3", "e5m2"} or {atype, btype} <= {"s8", "u8"}):
            continue
        bits = [a.regs.element_bits or ELEMENT_BITS.get(t, 8) for t in (atype, btype)]
        if min(bits) < 8 and (len(set(bits)) > 1 or 8 % min(bits)):  # .b1 packs whole bytes, both operands alike
            raise NoLayout(f"{name}.{shape} with {atype} x {btype}: elements that do not pack whole bytes are not "
                           "executed" + (f" {narrow}" if narrow else ""))
        fam = a if n_of == "A" else d
        valid = next((p for p in fam.domain.params if p.name == "N"), None) if fam.is_family else None
        if valid is not None and N not in valid.values:
            raise NoLayout(f"{name}.{shape}: N = {N} is not one of the catalog's ({path.name})")
        return (M, N, K), a, d, bits
    raise NoLayout(f"the catalog has no {name}.{shape} with D {dtype}, A {atype}, B {btype}")


@dataclass(frozen=True)
class SparseWarpgroupForm:
    """``wgmma.mma_async.sp`` of one shape and type combination, for the 128 threads of a warpgroup: A's stored
    elements as ``SparseForm`` has them (``a``: row and compressed column; ``chunk``, ``j``), the metadata layout over
    the 128 threads (``meta_row``/``meta_chunk`` [128, 8], ``selector`` [128]), the metadata values allowed, the
    accumulator D, and the catalog's compressed storage: ``kept`` elements of each ``width``-wide chunk of a row,
    kept element ``j`` of chunk ``c`` at compressed column ``c * kept + j`` (the A tile a descriptor reads is M x
    K * kept / width); ``logical`` as ``SparseForm``'s."""

    shape: tuple[int, int, int]
    a: Operand
    d: Operand
    a_bits: int
    b_bits: int
    chunk: np.ndarray
    j: np.ndarray
    meta_row: np.ndarray
    meta_chunk: np.ndarray
    selector: np.ndarray
    selectors: tuple[int, ...]
    valid: tuple[int, ...]
    kept: int
    width: int
    logical: object

    @property
    def stored_cols(self) -> int:
        """The columns of the compressed A (M x stored_cols)."""
        return self.shape[2] * self.kept // self.width


@functools.lru_cache(maxsize=256)
def sparse_wgmma_form(shape: str, dtype: str, atype: str, btype: str, face: str = "vector",
                      specs: str | None = None) -> SparseWarpgroupForm:
    """The catalog's ``wgmma.mma_async.sp.sync.aligned.<shape>.<dtype>.<atype>.<btype>``: its sparse A register
    fragment with the metadata layout, and its D accumulator, the family member of the shape's N."""
    (M, N, K), a, d, bits = _wgmma_operands("wgmma.sp", shape, dtype, atype, btype, "", "D", specs)
    op, chunk, j, mrow, mchunk, sel, md = _sparse_a(a, face, atype)
    if md.metadata is None:
        raise NoLayout(f"{a.id} has no metadata layout")
    if md.k != K:
        raise NoLayout(f"{a.id} is for K = {md.k}, the instruction's is {K}")
    for x in (op.row, op.col, chunk, j, mrow, mchunk, sel):
        x.setflags(write=False)
    return SparseWarpgroupForm((M, N, K), op, _operand(d, {"N": N}, face, dtype), bits[0], bits[1], chunk, j,
                               mrow, mchunk, sel, tuple(md.selectors), tuple(md.valid), int(md.kept),
                               int(md.chunk), a.map.logical_at)


# ----------------------------------------------------------------------------- tcgen05 and Tensor Memory

@functools.lru_cache(maxsize=128)
def tmem_access(op: str, shape: str, num: int, face: str = "vector", specs: str | None = None) -> Operand:
    """``tcgen05.ld``/``tcgen05.st`` ``.<shape>.x<num>`` (``op`` ``ld`` or ``st``): register element ``(lane, i)`` of a
    warp is Tensor Memory cell ``(row, col)`` relative to the warp's address (``row`` a lane, ``col`` a 32-bit
    column), the catalog's ``tcgen05.<op>.<shape>`` fragment."""
    path = _specs_dir(specs) / f"tcgen05.{op}.{shape}.toml"
    if not path.exists():
        raise NoLayout(f"no catalog layout for tcgen05.{op}.{shape}")
    lays = effective(_spec(str(path)).layouts)
    if not lays:
        raise NoLayout(f"no catalog layout for tcgen05.{op}.{shape}")
    lay = lays[0]
    valid = next((p for p in lay.domain.params if p.name == "NUM"), None)
    if valid is not None and num not in valid.values:
        raise NoLayout(f"tcgen05.{op}.{shape}.x{num}: .num {num} is not one of the catalog's")
    return _operand(lay, {"NUM": num}, face, "b32")


# The data-path layout of tcgen05.mma's D (and of A in Tensor Memory) by (M, cta_group, .ws, sparse): the table of
# PTX ISA 9.0, 9.7.16.10.5 (lines 6-14), which names the layouts the catalog's tcgen05.datapath specs hold.
DATAPATH_LETTERS = {(256, 2, False, False): "A", (256, 2, False, True): "A", (128, 2, False, False): "B",
                    (128, 2, False, True): "C", (128, 1, False, False): "D", (128, 1, False, True): "D",
                    (64, 1, True, False): "E", (64, 1, True, True): "E", (64, 1, False, False): "F",
                    (64, 1, False, True): "F", (32, 1, True, False): "G", (32, 1, True, True): "G",
                    (128, 1, True, False): "D", (128, 1, True, True): "D"}


@dataclass(frozen=True)
class Datapath:
    """Where element ``(row, col)`` of an MMA's M x N matrix D sits: CTA ``cta[row, col]`` of the pair, Tensor Memory
    lane ``lane[row, col]`` and column ``col_[row, col]`` relative to the matrix's address; the catalog's layout
    ``layout_id``."""

    layout_id: str
    cta: np.ndarray
    lane: np.ndarray
    col: np.ndarray


@functools.lru_cache(maxsize=256)
def datapath(m: int, n: int, cta_group: int, ws: bool, sparse: bool, base: int = 0, face: str = "vector",
             specs: str | None = None) -> Datapath:
    """The catalog's data-path layout of an M x N tcgen05.mma (its effective layout: Layout E as corrected)."""
    letter = DATAPATH_LETTERS.get((m, cta_group, ws, sparse))
    if letter is None:
        raise NoLayout(f"no data-path layout for M = {m}, cta_group::{cta_group}{', .ws' if ws else ''}"
                       f"{', sparse' if sparse else ''} (9.7.16.10.5)")
    path = _specs_dir(specs) / "tcgen05.datapath.toml"
    lays = [x for x in effective(_spec(str(path)).maps) if x.doc_id == f"tcgen05.datapath.{letter}"]
    if not lays:
        raise NoLayout(f"the catalog has no tcgen05.datapath.{letter}")
    lay = lays[0]
    env = {"N": n}
    if any(p.name == "BASE" for p in lay.params):
        env["BASE"] = base
    for p in lay.params:
        if env.get(p.name) not in p.values:
            raise NoLayout(f"{lay.id}: {p.name} = {env.get(p.name)} is not one of its values")
    fm = lay.map
    rows = int(fm.inputs[0].size) if isinstance(fm.inputs[0].size, int) else m
    if rows != m:
        raise NoLayout(f"{lay.id} is a layout of {rows} rows, the MMA has M = {m}")
    if face == "vector":
        v = fm.evaluate({"row": np.arange(m, dtype=np.int64)[:, None], "col": np.arange(n, dtype=np.int64)[None, :]},
                        env)
        if not np.all(v.ok):
            raise NoLayout(f"{lay.id} leaves some (row, col) of {m} x {n} without a cell")
        full = lambda a: np.ascontiguousarray(np.broadcast_to(a, (m, n))).astype(np.int64)  # noqa: E731
        cta = full(v.out["cta"]) if "cta" in v.out else np.zeros((m, n), np.int64)
        out = Datapath(lay.id, cta, full(v.out["tmem_lane"]), full(v.out["tmem_col"]))
    else:
        cta, lane, col = (np.zeros((m, n), np.int64) for _ in range(3))
        for r in range(m):
            for c in range(n):
                cell = fm.at({"row": r, "col": c}, env)
                if cell is None:
                    raise NoLayout(f"{lay.id} leaves ({r}, {c}) without a cell")
                cta[r, c], lane[r, c], col[r, c] = cell.get("cta", 0), cell["tmem_lane"], cell["tmem_col"]
        out = Datapath(lay.id, cta, lane, col)
    for a in (out.cta, out.lane, out.col):
        a.setflags(write=False)
    return out


@dataclass(frozen=True)
class ScaleCells:
    """Where a block-scaled tcgen05.mma reads scale factors in Tensor Memory (relative to the scale address): for A,
    ``lane/col/byte[row, kb]``; for B, ``lane/col/byte[quarter, row, kb]`` (each lane quarter's copy); ``kb`` the K
    block of a 4-block scale-factor tile (``SF_ID + j``), the catalog's ``layout_id``."""

    layout_id: str
    lane: np.ndarray
    col: np.ndarray
    byte: np.ndarray


@functools.lru_cache(maxsize=64)
def scale_cells(operand: str, vs: int, rows: int, face: str = "vector", specs: str | None = None) -> ScaleCells:
    """The catalog's scale-factor placement of operand ``A`` (``tcgen05.sf.A.4x1``, M = ``rows`` = 128) or ``B``
    (``tcgen05.sf.B.4x1``, N = ``rows``) for ``.scale_vec::<vs>X``: the 4x1 data path (M = 128, cta_group::1)."""
    name = "tcgen05.scale_factors.toml" if operand == "A" else "tcgen05.scale_factors_b.toml"
    lid = f"tcgen05.sf.{operand}.4x1"
    path = _specs_dir(specs) / name
    lays = [x for x in effective(_spec(str(path)).maps) if x.doc_id == lid]
    if not lays:
        raise NoLayout(f"the catalog has no {lid}")
    lay = lays[0]
    env = {"VS": vs}
    if operand == "B":
        env["N"] = rows
    for p in lay.params:
        if env.get(p.name) not in p.values:
            raise NoLayout(f"{lay.id}: {p.name} = {env.get(p.name)} is not one of its values")
    fm = lay.map
    if operand == "A" and rows != 128:
        raise NoLayout(f"{lay.id} places the scale factors of M = 128 (the 4x1 data path), not M = {rows}")
    names = [d.name for d in fm.inputs]
    shape = (4, rows, 4) if operand == "B" else (rows, 4)
    return ScaleCells(lay.id, *_tmem_bytes(fm, names, shape, env, face, f"{lay.id} leaves a scale factor without a cell"))


def _tmem_bytes(fm: Any, names: list[str], shape: tuple[int, ...], env: Mapping[str, int], face: str,
                missing: str) -> list[np.ndarray]:
    """The (tmem_lane, tmem_col, byte) of every point of the box ``shape`` (axes named ``names``, in that order; an
    axis the map has no input for is not passed to it), read-only arrays of that shape, by the face the run uses;
    ``missing`` when a point has no cell."""
    grids = np.indices(shape).reshape(len(shape), -1)
    ins = {d.name for d in fm.inputs}
    if face == "vector":
        v = fm.evaluate({nm: g for nm, g in zip(names, grids) if nm in ins}, env)
        if not np.all(v.ok):
            raise NoLayout(missing)
        out = [np.broadcast_to(v.out[k], grids.shape[1:]).reshape(shape).astype(np.int64)
               for k in ("tmem_lane", "tmem_col", "byte")]
    else:
        out = [np.zeros(shape, np.int64) for _ in range(3)]
        for j in range(grids.shape[1]):
            cell = fm.at({nm: int(g[j]) for nm, g in zip(names, grids) if nm in ins}, env)
            if cell is None:
                raise NoLayout(missing)
            at = np.unravel_index(j, shape)
            for a, k in zip(out, ("tmem_lane", "tmem_col", "byte")):
                a[at] = cell[k]
    for a in out:
        a.setflags(write=False)
    return out


# The tcgen05.cp layouts by the copy's shape and multicast qualifiers (specs/tcgen05.cp.toml, and .32x128b.warpx4 in
# specs/tcgen05.scale_factors.toml)
COPY_LAYOUTS = {("128x256b", ""): ("tcgen05.cp.toml", "tcgen05.cp.128x256b"),
                ("128x128b", ""): ("tcgen05.cp.toml", "tcgen05.cp.128x128b"),
                ("4x256b", ""): ("tcgen05.cp.toml", "tcgen05.cp.4x256b"),
                ("64x128b", "warpx2::02_13"): ("tcgen05.cp.toml", "tcgen05.cp.64x128b.warpx2.02_13"),
                ("64x128b", "warpx2::01_23"): ("tcgen05.cp.toml", "tcgen05.cp.64x128b.warpx2.01_23"),
                ("32x128b", "warpx4"): ("tcgen05.scale_factors.toml", "tcgen05.cp.32x128b.warpx4")}


@functools.lru_cache(maxsize=16)
def copy_cells(shape: str, multicast: str, face: str = "vector", specs: str | None = None) -> ScaleCells:
    """Where ``tcgen05.cp.<shape>[.<multicast>]`` puts byte ``src_byte`` of row ``src_row`` of the block it copies,
    in its copy ``copy`` (the multicast's; one without): ``lane/col/byte[src_row, src_byte, copy]`` relative to the
    copy's Tensor Memory address, the catalog's ``tcgen05.cp`` layout of that shape."""
    if (shape, multicast) not in COPY_LAYOUTS:
        raise NoLayout(f"the catalog has no tcgen05.cp .{shape}{'.' + multicast if multicast else ''}")
    name, lid = COPY_LAYOUTS[(shape, multicast)]
    lays = [x for x in effective(_spec(str(_specs_dir(specs) / name)).maps) if x.doc_id == lid]
    if not lays:
        raise NoLayout(f"the catalog has no {lid}")
    fm: Any = lays[0].map
    sizes = {d.name: int(d.at()) for d in fm.inputs}
    shape3 = (sizes["src_row"], sizes["src_byte"], sizes.get("copy", 1))
    return ScaleCells(lid, *_tmem_bytes(fm, ["src_row", "src_byte", "copy"], shape3, {}, face,
                                        f"{lid} leaves a byte without a cell"))


# The shared-memory packing of kind::f8f6f4 / mxf8f6f4's 4- and 6-bit elements by their bits (9.7.16.10.4.4): each
# element addressed as an 8-bit container, the containers of a 16-byte unit packed in its low bits.
SMEM_CONTAINERS = {4: "tcgen05.packing.smem.mxf8f6f4.b4", 6: "tcgen05.packing.smem.mxf8f6f4.b6"}


@functools.lru_cache(maxsize=8)
def smem_containers(bits: int, face: str = "vector", specs: str | None = None) -> tuple[str, np.ndarray]:
    """(the catalog's layout id, ``int64[unit]``): the first bit, within its unit of ``unit`` bytes of shared memory,
    of the ``bits``-wide element whose 8-bit container is byte ``c`` of the unit (``tcgen05.packing.smem``)."""
    lid = SMEM_CONTAINERS.get(bits)
    if lid is None:
        raise NoLayout(f"no catalog packing of {bits}-bit elements in 8-bit containers of shared memory (9.7.16.10.4.4)")
    lays = [x for x in effective(_spec(str(_specs_dir(specs) / "tcgen05.packing.toml")).maps) if x.doc_id == lid]
    if not lays:
        raise NoLayout(f"the catalog has no {lid}")
    fm: Any = lays[0].map
    n = int(fm.inputs[0].at())
    if face == "vector":
        v = fm.evaluate({"container": np.arange(n, dtype=np.int64)}, {})
        if not np.all(v.ok):
            raise NoLayout(f"{lid} leaves a container without a bit")
        out = np.broadcast_to(v.out["bit"], (n,)).astype(np.int64)
    else:
        cells = [fm.at({"container": c}, {}) for c in range(n)]
        if any(c is None for c in cells):
            raise NoLayout(f"{lid} leaves a container without a bit")
        out = np.array([c["bit"] for c in cells], np.int64)
    out.setflags(write=False)
    return lid, out


@functools.lru_cache(maxsize=16)
def scale_factor_ids(vs: int, specs: str | None = None) -> tuple[tuple[int, ...], tuple[str, ...]]:
    """The scale-factor ids a block-scaled ``tcgen05.mma`` with ``.scale_vec::<vs>X`` may name and the scale types
    it takes: the catalog's ``tcgen05.mma.m1n4.SFA`` fragment of that scale vector (``SFA_ID_<vs>X``; the B side
    states the same rules)."""
    spec = _spec(str(_specs_dir(specs) / "tcgen05.mma.block_scale.toml"))
    for lay in spec.layouts:
        if lay.operand == "SFA" and lay.variant == f"{vs}x":
            (param,) = [p for p in lay.params if p.name == f"SFA_ID_{vs}X"]
            return tuple(param.values), tuple(lay.types)
    raise NoLayout(f"the catalog has no .scale_vec::{vs}X for tcgen05.mma")


SCALE_KINDS = ("mxf8f6f4", "mxf4", "mxf4nvf4")  # the kind input of tcgen05.scale_vec.kinds
SCALE_QUALIFIERS = ("", "scale_vec::1X", "scale_vec::2X", "scale_vec::4X", "block32", "block16")  # its qualifier


def scale_vectors(kind: str, specs: str | None = None) -> dict[str, int]:
    """The ``.scale_vectorsize`` spellings a block-scaled ``tcgen05.mma`` of ``kind`` takes ("" for none spelled),
    each with the number of scale factors per row of scale_A it means: the catalog's ``tcgen05.scale_vec.kinds``
    (Table 55 and the aliases, ``specs/tcgen05.scale_vec.toml``)."""
    lays = [x for x in effective(_spec(str(_specs_dir(specs) / "tcgen05.scale_vec.toml")).maps)
            if x.doc_id == "tcgen05.scale_vec.kinds"]
    if not lays or kind not in SCALE_KINDS:
        raise NoLayout(f"the catalog has no scale vectors of tcgen05.mma kind::{kind}")
    q = np.arange(len(SCALE_QUALIFIERS))
    fm: Any = lays[0].map
    v = fm.evaluate({"kind": np.full_like(q, SCALE_KINDS.index(kind)), "qualifier": q}, {})
    ok, allowed, vs = (np.broadcast_to(x, q.shape) for x in (v.ok, v.out["allowed"], v.out["vs"]))
    return {SCALE_QUALIFIERS[j]: int(vs[j]) for j in q if ok[j] and allowed[j]}


__all__ = ["DATAPATH_LETTERS", "Datapath", "MmaForm", "NoLayout", "Operand", "ScaleCells", "SparseForm",
           "SparseWarpgroupForm", "WarpgroupForm", "sparse_mma_form", "sparse_wgmma_form",
           "copy_cells", "datapath", "scale_cells", "scale_factor_ids", "scale_vectors",
           "matrix_load", "mma_form", "SMEM_CONTAINERS", "smem_containers",
           "tmem_access", "transpose_form", "wgmma_form"]
