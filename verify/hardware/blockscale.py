"""Block-scale probes (``mma ... .block_scale``): which scale factor scales which row (or column) and k block.

An ``SFA`` layout instance (one ``thread-id-a`` / ``byte-id-a`` selection) maps (lane, byte) of the
``scale-a-data`` register to a cell (row, k block) of the M x blocks scale matrix; ``SFB`` maps to (k block,
column).  The probe runs the real ``mma.sync ... .block_scale`` with every scale byte 1.0 except one, 2.0
(one experiment per (lane, byte) and per k block):

* ``SFA``: A holds 1 on the k of one block only (through the A layout of the same mma shape), B all ones,
  C = 0: D is the block's size times the scale factors; the doubled D elements are one row (through the
  C/D layout) when the hot byte is that row's scale factor of that block, none when the byte is unused;
* ``SFB``: the same with B holding the block and the doubled D elements one column.

So a scale factor's row (column) is observed through the C/D layout and its k block through the A (B)
layout of the same mma shape, which the mma probes confirm.  The decoded map (lane, byte) -> cell (or no
cell) is compared with the spec's.  The SIMULATED device computes D = sum_k A B SFA SFB from the specs'
maps (or a deviating SF map).
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Callable, Iterable, Mapping, Sequence

import numpy as np

from ..layout.model import Layout, cells_of
from .catalog_probes import CatalogProbe, make_probe
from .grouping import InstructionGroup
from .probes import ONE_BITS, ProbeError, _operand
from ..layout.model import cell_at

ARCH = "sm_120a"
# scale vector size (factors per row) -> (kind, A/B type, scale type)
SCALE_KIND = {1: ("mxf8f6f4", "e4m3", "ue8m0"), 2: ("mxf4", "e2m1", "ue8m0"), 4: ("mxf4nvf4", "e2m1", "ue4m3")}
SCALE_BITS = {"ue8m0": (0x7F, 0x80), "ue4m3": (0x38, 0x40)}  # the encodings of 1.0 and 2.0
# the PTX ISA release a (scale vector size, scale type) needs beyond the others' 8.7 (CUDA 13.0's ptxas, PTX ISA 9.0,
# rejects .ue8m0 with .scale_vec::4X: "Illegal modifier '.kind::mxf4nvf4' for instruction 'mma' with type '.ue8m0'")
PTX_ISA = {(4, "ue8m0"): "9.1"}

Cell = tuple[int, int]


@dataclass(frozen=True)
class Setup:
    """What one block-scale probe needs to know to run, simulate and decode."""

    side: str                 # "A" (SFA) or "B" (SFB)
    k: int
    blocks: int               # scale factors per row (the scale vector size)
    a: Layout                 # the A, B and C/D layouts of mma.m16n8k<k> the probe's registers follow
    b: Layout
    c: Layout
    ab_type: str
    a_words: tuple[int, ...]  # [variant][lane][register] A register words (the varying side: one variant per block)
    b_words: tuple[int, ...]

    @property
    def variants(self) -> int:
        return self.blocks

    @property
    def experiments(self) -> int:
        return 128 * self.variants

    @property
    def block(self) -> int:
        return self.k // self.blocks


def _mma_layouts(all_layouts: Iterable[Layout], k: int, ab: str) -> tuple[Layout, Layout, Layout]:
    """The A, B and C (.f32) layouts of mma.m16n8k<k> holding ``ab`` (packed .e2m1: 8 per register)."""
    lays = [x for x in all_layouts if x.instruction == "mma" and str(x.shape) == f"m16n8k{k}" and x.correction is None]
    pick = {}
    for op, want in (("A", ab), ("B", ab), ("C", "f32")):
        found = [x for x in lays if x.operand == op and want in x.types]
        if not found:
            raise ProbeError(f"the block-scale probe of m16n8k{k} needs the mma {op} layout of .{want} "
                             f"(mma.m16n8k{k}) in the loaded specs")
        pick[op] = found[0]
    return pick["A"], pick["B"], pick["C"]


def _words(lay: Layout, ptx_type: str, on: Callable[[np.ndarray, np.ndarray], "np.ndarray | bool"]) -> list[int]:
    """[lane][register] words with the element's 1 wherever ``on(row, col)`` of its spec cell (``on`` takes the
    arrays of every lane's cells at once; the layout's points are evaluated once per process, ``cells_of``)."""
    op = _operand(lay, ptx_type)
    cells = cells_of(lay)
    if cells.ok.shape[0] < 32 or cells.ok.shape[1] < op.elements:
        raise ProbeError(f"{lay.id}: the block-scale probe needs 32 lanes of {op.elements} elements")
    row, col, ok = (a[:32, :op.elements] for a in (cells.row, cells.col, cells.ok))
    hot = ok & np.broadcast_to(np.asarray(on(row, col), bool), ok.shape)
    words = np.zeros((32, op.registers), np.uint64)
    for i in range(op.elements):
        shift = (i % op.elements_per_register) * op.element_bits
        words[:, i // op.elements_per_register] |= np.where(hot[:, i], np.uint64(op.one << shift), np.uint64(0))
    return [int(w) for w in words.reshape(-1)]


def _in_k_block(axis: int, bs: int, v: int) -> Callable[[np.ndarray, np.ndarray], "np.ndarray | bool"]:
    """``on`` of ``_words``: the k (A: its col, ``axis`` 1; B: its row, ``axis`` 0) lies in k block ``v`` of ``bs``."""
    return lambda row, col: (row, col)[axis] // bs == v


def build(group: InstructionGroup, all_layouts: Sequence[Layout]) -> list[CatalogProbe]:
    """One probe per SFA/SFB layout instance (a thread-id / byte-id selection) of one block-scale spec."""
    out: list[CatalogProbe] = []
    for lay in group.operand("SFA") + group.operand("SFB"):
        side = "A" if lay.operand == "SFA" else "B"
        blocks = lay.cols if side == "A" else lay.rows
        kind, ab, stype = SCALE_KIND[blocks]
        if lay.types and lay.types[0] in SCALE_BITS:  # the layout's scale type (.ue8m0 with 4X is PTX ISA 9.1's)
            stype = lay.types[0]
        k = lay.shape.k
        assert isinstance(k, int)  # a block-scale mma shape is concrete
        a, b, c = _mma_layouts(all_layouts, k, ab)
        bs = k // blocks
        if side == "A":  # the register words depend on the mma layouts only, not on the SF instance
            a_words = sum((_words(a, ab, _in_k_block(1, bs, v)) for v in range(blocks)), [])
            b_words = _words(b, ab, lambda r, cc: True)
        else:
            a_words = _words(a, ab, lambda r, kk: True)
            b_words = sum((_words(b, ab, _in_k_block(0, bs, v)) for v in range(blocks)), [])
        setup = Setup(side, k, blocks, a, b, c, ab, tuple(a_words), tuple(b_words))
        for env, inst in lay.instances():
            tested = tuple(x.instance(**env) for x in group.tested(lay))
            out.append(_probe(inst, env, setup, kind, ab, stype, tested))
    return out


def _probe(inst: Layout, env: Mapping[str, int], setup: Setup, kind: str, ab: str, stype: str,
           tested: tuple[Layout, ...]) -> CatalogProbe:
    sf = setup.blocks
    k = setup.k
    side = setup.side
    sel = {"A": (0, 0), "B": (0, 0)}
    sel[side] = (env[f"BYTE_ID_{side}"], env[f"THREAD_ID_{side}"])
    text = (f"mma.sync.aligned.m16n8k{k}.row.col.kind::{kind}.block_scale.scale_vec::{sf}X.f32.{ab}.{ab}.f32.{stype}")
    tag = ",".join(f"{n}={v}" for n, v in env.items())
    scale = "" if stype == SCALE_KIND[sf][2] else f".{stype}"  # a scale type other than the vector size's first
    pid = f"mma.block_scale.m16n8k{k}.{sf}X{scale}.{side}.{tag}"
    one, two = SCALE_BITS[stype]
    ones = one * 0x01010101
    nb = len(setup.b_words) // 32 // (setup.variants if side == "B" else 1)
    na = len(setup.a_words) // 32 // (setup.variants if side == "A" else 1)
    b_base = len(setup.a_words)  # the input buffer: A words of every variant, then B words
    av, bv = ("v", "0") if side == "A" else ("0", "v")
    body = f"""  const int lane = threadIdx.x % 32;
  for (int e = 0; e < {setup.experiments}; ++e) {{
    const int x = e / {setup.variants}, v = e % {setup.variants};  // hot scale byte x = lane * 4 + byte; k block v
    uint32_t a[{na}], b[{nb}];
    for (int j = 0; j < {na}; ++j) a[j] = in[({av} * 32 + lane) * {na} + j];
    for (int j = 0; j < {nb}; ++j) b[j] = in[{b_base} + ({bv} * 32 + lane) * {nb} + j];
    const uint32_t one = {ones:#x}u;
    const uint32_t hot = (x / 4 == lane) ? ((one & ~(0xffu << (8 * (x % 4)))) | ({two:#x}u << (8 * (x % 4)))) : one;
    const uint32_t sfa = {"hot" if side == "A" else "one"}, sfb = {"one" if side == "A" else "hot"};
    float d[4];
    asm volatile("{text} {{%0, %1, %2, %3}}, {{%4, %5, %6, %7}}, {{%8, %9}}, {{%10, %11, %12, %13}}, %14, {{{sel['A'][0]}, {sel['A'][1]}}}, %15, {{{sel['B'][0]}, {sel['B'][1]}}};"
                 : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]),
                   "f"(0.f), "f"(0.f), "f"(0.f), "f"(0.f), "r"(sfa), "r"(sfb));
    for (int j = 0; j < 4; ++j) out[(e * 32 + lane) * 4 + j] = __float_as_uint(d[j]);
  }}"""
    tags = tuple(x.id + "@" + tag for x in tested)
    inputs = setup.a_words + setup.b_words
    return make_probe(pid, ARCH, text, tags, body, "block_scale", out_words=setup.experiments * 4,
                      in_words=len(inputs), binding=tuple(sorted(env.items())), tested=tested,
                      meta={"setup": setup, "one": one, "two": two, "input": inputs,
                            "ptx_isa": PTX_ISA.get((sf, stype), "")})


def setup_of(p: CatalogProbe) -> Setup:
    return p.meta["setup"]


# ----------------------------------------------------------------------------- decoding

def _f32(word: int) -> float:
    return float(struct.unpack("<f", struct.pack("<I", word & 0xFFFFFFFF))[0])


def decode(p: CatalogProbe, out: Sequence[int]) -> dict[Cell, Cell | None | str]:
    """(lane, byte) -> the (row, k block) (SFB: (k block, column)) its scale factor scales, None where it
    scales nothing, or a description where what it scales is no single row (column) of one block."""
    st = setup_of(p)
    c_cells = {(lane, j): cell_at(st.c, lane, j) for lane in range(32) for j in range(4)}
    axis = 0 if st.side == "A" else 1
    lines: dict[int, set[Cell]] = {}
    for d, cell in c_cells.items():
        if cell is not None:
            lines.setdefault(cell[axis], set()).add(d)
    word = "row" if st.side == "A" else "column"
    res: dict[Cell, Cell | None | str] = {}
    for x in range(128):
        hits = []
        for v in range(st.variants):
            e = x * st.variants + v
            vals = {(lane, j): _f32(out[(e * 32 + lane) * 4 + j]) for lane in range(32) for j in range(4)}
            lo = min(vals.values())
            up = {d for d, val in vals.items() if val > lo}
            if up:
                hits.append((v, up))
        key = divmod(x, 4)
        if not hits:
            res[key] = None
            continue
        v, up = hits[0]
        line = [n for n, ds in lines.items() if ds == up]
        if len(hits) == 1 and len(line) == 1:
            res[key] = (line[0], v) if st.side == "A" else (v, line[0])
        else:
            res[key] = (f"it scales D elements of {len(hits)} k block(s), {len(up)} of them in k block {v}, "
                        f"which are no {word} of the C/D layout {st.c.id}")
    return res


def compare(lay: Layout, observed: Mapping[Cell, Cell | None | str]) -> list[str]:
    """Where the spec instance and the observation differ, in the doc's words."""
    out = []
    what = "(row, k block)" if lay.operand == "SFA" else "(k block, column)"
    for lane in range(32):
        for i in range(lay.n_elements):
            want = cell_at(lay, lane, i)
            got = observed.get((lane, i))
            if want != got:
                say = ("scales nothing" if got is None else f"scales {what} {got}") if not isinstance(got, str) else got
                out.append(f"lane {lane} element {lay.element_name(i)}: the spec gives {what} {want}; on the "
                           f"hardware {say}")
    return out


def simulate(p: CatalogProbe, sf_point: Callable[[int, int], Cell | None] | None = None) -> list[int]:
    """The raw output of a SIMULATED device that follows the specs' A, B, C/D maps and ``sf_point`` (default:
    the probe's own scale-factor layout instance)."""
    st = setup_of(p)
    point = sf_point or (lambda t, i: cell_at(p.tested[0], t, i))
    bits = {"e4m3": 8, "e2m1": 4}[st.ab_type]
    one = ONE_BITS[st.ab_type]

    def matrix(lay: Layout, words: Sequence[int], v: int, rows: int, cols: int) -> np.ndarray:
        op = _operand(lay, st.ab_type)
        m = np.zeros((rows, cols))
        for lane in range(32):
            for i in range(op.elements):
                w = words[(v * 32 + lane) * op.registers + i // op.elements_per_register]
                if (w >> ((i % op.elements_per_register) * bits)) & ((1 << bits) - 1) == one:
                    r, c = cell_at(lay, lane, i)  # type: ignore[misc]
                    m[r, c] = 1.0
        return m
    shape_sf = (16, st.blocks) if st.side == "A" else (st.blocks, 8)
    out = [0] * (st.experiments * 128 + 8192)
    d_cells = [(lane, j, cell_at(st.c, lane, j)) for lane in range(32) for j in range(4)]
    a_v = [matrix(st.a, st.a_words, v if st.side == "A" else 0, 16, st.k) for v in range(st.variants)]
    b_v = [matrix(st.b, st.b_words, v if st.side == "B" else 0, st.k, 8) for v in range(st.variants)]
    blk = np.arange(st.k) // st.block
    for x in range(128):
        sf = np.ones(shape_sf)
        cell = point(*divmod(x, 4))
        if cell is not None and 0 <= cell[0] < shape_sf[0] and 0 <= cell[1] < shape_sf[1]:
            sf[cell] = 2.0
        for v in range(st.variants):
            a, b = a_v[v], b_v[v]
            if st.side == "A":
                d = (a * sf[:, blk]) @ b
            else:
                d = a @ (b * sf[blk, :])
            e = x * st.variants + v
            for lane, j, c in d_cells:
                if c is not None:
                    out[(e * 32 + lane) * 4 + j] = struct.unpack("<I", struct.pack("<f", float(d[c])))[0]
    return out
