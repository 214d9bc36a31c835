"""wmma probes: the map the hardware uses, which the doc leaves unspecified.

The doc states a wmma fragment's registers and element counts, never which matrix cell an element holds
(9.7.14.4.1: "the layout of the fragments is unspecified").  A probe therefore *records* the map of one
architecture: ``wmma.load.a`` (``.row``), ``wmma.load.b`` (``.col``) and ``wmma.load.c`` (``.row``)
read a matrix image whose every element is a code naming its own cell (row-major A and C, column-major B;
codes wider than an element are written in several runs, one digit each), and the raw registers are
printed.  Decoding gives (lane, i) -> (row, col) for every element.

What is compared with the doc: the register count (the probe runs the instruction with the spec's
count; a doc count that differs is contradicted, as ptxas already says) and what the counts imply: every
cell of the matrix held by the same number of elements (the replication, n x 32 / (rows x cols)).  The map
itself is reported as observed (status ``observed``), never as doc-stated.

On a device whose compute capability is one wmmae has maps for (7.0, 7.5, 8.0; ``verify.catalog.wmma_arch``)
the observed A (``.row``) and B (``.col``) maps are also compared with wmmae's, and the result's message says
whether they are the same map; that reference is not the doc, so the status stays ``observed``.

The SIMULATED device has no spec map to follow: it uses a stand-in (element e = lane x n + i holds cell
e mod (rows x cols), row-major), so a simulated observation shows the pipeline works, nothing about the
hardware.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

from ..layout.model import Layout
from ..layout.types import ELEMENT_BITS, REGISTER_BITS
from .catalog_probes import CatalogProbe, make_probe, regs_text

ARCH = "sm_90a"  # one translation unit with the others; every wmma shape and type of the catalog runs there
_WIDTH = 16  # bits of a code digit (narrower elements: their own width)
_LOAD_LAYOUT = {"A": "row", "B": "col", "C": "row"}
_OP = {"A": "a", "B": "b", "C": "c"}


@dataclass(frozen=True)
class Fragment:
    """How one operand's registers are loaded and written out."""

    operand: str     # A, B or C
    layout: str      # the layout id the probe's registers follow (the corrected one where there is one)
    ptx_type: str
    rows: int
    cols: int
    registers: int
    register_bits: int
    epr: int         # elements per register
    bits: int        # element width in memory and in its register slot
    width: int       # bits of one code digit
    shift: int       # where the digit sits in the element (tf32: above the mantissa bits a load may drop)
    runs: int
    in_offset: int   # words
    out_offset: int  # words
    elements: int
    load: str = ""   # the wmma.load instruction that fills these registers

    @property
    def cells(self) -> int:
        return self.rows * self.cols

    @property
    def words_per_register(self) -> int:
        return self.register_bits // 32

    @property
    def image_words(self) -> int:
        return max(1, self.cells * self.bits // 32)

    def memory_index(self, row: int, col: int) -> int:
        """Element index of cell (row, col) in the image: row-major A and C, column-major B."""
        return col * self.rows + row if self.operand == "B" else row * self.cols + col

    def cell_of_code(self, code: int) -> tuple[int, int] | None:
        return divmod(code, self.cols) if code < self.cells else None


def _fragment(op: str, lay: Layout, ptx_type: str, in_offset: int, out_offset: int, shape: str) -> Fragment:
    bits = ELEMENT_BITS.get(ptx_type, 32)
    rbits = REGISTER_BITS[lay.regs.type]
    width = min(bits, _WIDTH)
    shift = 13 if ptx_type == "tf32" else 0
    runs = max(1, math.ceil(math.log2(lay.rows * lay.cols) / width))
    return Fragment(op, lay.id, ptx_type, lay.rows, lay.cols, lay.register_count, rbits, lay.regs.elements_per_register,
                    rbits // lay.regs.elements_per_register, width, shift, runs, in_offset, out_offset, lay.n_elements,
                    f"wmma.load.{_OP[op]}.sync.aligned.{_LOAD_LAYOUT[op]}.{shape}.global.{ptx_type}")


def image(fr: Fragment, run: int) -> list[int]:
    """The matrix image of one run: every element the digit ``run`` of the code of its own cell."""
    words = [0] * fr.image_words
    for r in range(fr.rows):
        for c in range(fr.cols):
            digit = ((r * fr.cols + c) >> (run * fr.width)) & ((1 << fr.width) - 1)
            bit = fr.memory_index(r, c) * fr.bits + fr.shift
            words[bit // 32] |= (digit << (bit % 32)) & 0xFFFFFFFF
    return words


def build(shape: str, frags: Mapping[str, Layout], atype: str, ctype: str, tested: Sequence[Layout],
          doc_c: Layout | None = None) -> CatalogProbe:
    """One probe: the A, B and C loads of one wmma shape and type pair.  ``doc_c``: build with the doc's
    own C register count (a negative probe, which ptxas must reject)."""
    types = {"A": atype, "B": atype, "C": ctype}
    lays = {"A": frags["A"], "B": frags["B"], "C": doc_c or frags["C"]}
    frs: list[Fragment] = []
    in_off = out_off = 0
    for op in "ABC":
        fr = _fragment(op, lays[op], types[op], in_off, out_off, shape)
        frs.append(fr)
        in_off += fr.runs * fr.image_words
        out_off += fr.runs * 32 * fr.registers * fr.words_per_register
    inputs: list[int] = []
    for fr in frs:
        for run in range(fr.runs):
            inputs += image(fr, run)
    body = ["  const int lane = threadIdx.x % 32;"]
    for fr in frs:
        c = {"f64": "d", "f32": "f"}.get(lays[fr.operand].regs.type, "r")
        cty = {"d": "double", "f": "float", "r": "uint32_t"}[c]
        word = {"d": "(uint64_t)__double_as_longlong(v[j])", "f": "(uint64_t)__float_as_uint(v[j])",
                "r": "(uint64_t)v[j]"}[c]
        stride = fr.rows if fr.operand == "B" else fr.cols
        load = fr.load
        outs = ", ".join(f'"={c}"(v[{k}])' for k in range(fr.registers))
        body.append(f"""  for (int run = 0; run < {fr.runs}; ++run) {{  // {fr.operand}: {fr.layout}
    {cty} v[{fr.registers}];
    asm volatile("{load} {regs_text(fr.registers)}, [%{fr.registers}], %{fr.registers + 1};"
                 : {outs} : "l"(in + {fr.in_offset} + run * {fr.image_words}), "r"({stride}) : "memory");
    for (int j = 0; j < {fr.registers}; ++j) {{
      const uint64_t w = {word};
      for (int h = 0; h < {fr.words_per_register}; ++h)
        out[{fr.out_offset} + ((run * 32 + lane) * {fr.registers} + j) * {fr.words_per_register} + h] = (uint32_t)(w >> (32 * h));
    }}
  }}""")
    text = f"wmma.load.a.sync.aligned.row.{shape}.global.{atype}"
    pid = f"wmma.{shape}.{atype}.{ctype}" + (".doc" if doc_c is not None else "")
    ids = tuple(lays[op].id for op in "ABC")
    return make_probe(pid, ARCH, text, ids, "\n".join(body), "wmma", out_words=(out_off + 31) // 32 + 1,
                      in_words=len(inputs), negative=doc_c is not None, tested=tuple(tested),
                      meta={"fragments": tuple(frs), "input": tuple(inputs), "threads_out": out_off})


def fragments(p: CatalogProbe) -> tuple[Fragment, ...]:
    return p.meta["fragments"]


# ----------------------------------------------------------------------------- decoding

def decode(p: CatalogProbe, out: Sequence[int]) -> dict[str, dict[tuple[int, int], tuple[int, int] | None]]:
    """Per operand: (lane, i) -> the (row, col) its code names (None: a code that names no cell)."""
    res: dict[str, dict[tuple[int, int], tuple[int, int] | None]] = {}
    for fr in fragments(p):
        got: dict[tuple[int, int], tuple[int, int] | None] = {}
        for lane in range(32):
            for i in range(fr.elements):
                j, slot = divmod(i, fr.epr)
                code = 0
                for run in range(fr.runs):
                    base = fr.out_offset + ((run * 32 + lane) * fr.registers + j) * fr.words_per_register
                    reg = sum(out[base + h] << (32 * h) for h in range(fr.words_per_register))
                    digit = (reg >> (slot * fr.bits + fr.shift)) & ((1 << fr.width) - 1)
                    code |= digit << (run * fr.width)
                got[(lane, i)] = fr.cell_of_code(code)
        res[fr.operand] = got
    return res


def stand_in(fr: Fragment) -> Callable[[int, int], tuple[int, int] | None]:
    """The SIMULATED device's map for an unspecified layout: element e = lane x n + i holds cell
    e mod (rows x cols), row-major (any map with the doc's counts would do)."""
    def point(lane: int, i: int) -> tuple[int, int] | None:
        return divmod((lane * fr.elements + i) % fr.cells, fr.cols)
    return point


def simulate(p: CatalogProbe, maps: Mapping[str, Callable[[int, int], tuple[int, int] | None]] | None = None) -> list[int]:
    """The raw output of a SIMULATED device whose fragments follow ``maps`` (default: the stand-ins)."""
    frs = fragments(p)
    out = [0] * (p.meta["threads_out"] + 8192)
    for fr in frs:
        point = (maps or {}).get(fr.operand) or stand_in(fr)
        for lane in range(32):
            for i in range(fr.elements):
                cell = point(lane, i)
                code = (cell[0] * fr.cols + cell[1]) if cell is not None else (1 << (fr.runs * fr.width)) - 1
                j, slot = divmod(i, fr.epr)
                for run in range(fr.runs):
                    digit = (code >> (run * fr.width)) & ((1 << fr.width) - 1)
                    value = digit << (slot * fr.bits + fr.shift)
                    base = fr.out_offset + ((run * 32 + lane) * fr.registers + j) * fr.words_per_register
                    for h in range(fr.words_per_register):
                        out[base + h] |= (value >> (32 * h)) & 0xFFFFFFFF
    return out


def violations(fr: Fragment, lay: Layout, observed: Mapping[tuple[int, int], tuple[int, int] | None]) -> list[str]:
    """What the observed map contradicts of ``lay``: its register count, or the counts' implication that
    every cell is held by the same number of elements (the replication)."""
    if (lay.regs.count, lay.regs.elements_per_register) != (fr.registers, fr.epr):
        return [f"the instruction takes {fr.registers} registers of {fr.epr} element(s) ({fr.elements} per lane) "
                f"for {fr.operand}; the spec says {lay.regs.count} x {lay.regs.elements_per_register} ({lay.n_elements})"]
    held: dict[tuple[int, int], int] = {}
    bad: list[str] = []
    for (lane, i), cell in sorted(observed.items()):
        if cell is None:
            bad.append(f"lane {lane} element {lay.element_name(i)} holds a code that names no cell of the "
                       f"{fr.rows} x {fr.cols} matrix")
        else:
            held[cell] = held.get(cell, 0) + 1
    rep = lay.n_elements * 32 // fr.cells if (lay.n_elements * 32) % fr.cells == 0 else None
    for r in range(fr.rows):
        for c in range(fr.cols):
            n = held.get((r, c), 0)
            if rep is None or n != rep:
                bad.append(f"cell ({r}, {c}) is held by {n} element(s); the doc's counts ({lay.n_elements} per "
                           f"lane x 32 lanes for {fr.rows} x {fr.cols}) give every cell "
                           + (f"{rep}" if rep is not None else "a whole number"))
    return bad


# ----------------------------------------------------------------------------- per-architecture references

_ARCH_OF_CC = {"7.0": "sm_70", "7.5": "sm_75", "8.0": "sm_80"}  # exactly the architectures wmmae's maps are for


def reference_arch(device: Mapping[str, object]) -> str | None:
    """The architecture of wmmae's per-architecture maps that an observation's device is (its compute
    capability exactly 7.0, 7.5 or 8.0), else None: no reference map applies."""
    return _ARCH_OF_CC.get(str(device.get("compute_capability")))


def compare_reference(fr: Fragment, lay: Layout, observed: Mapping[tuple[int, int], tuple[int, int] | None],
                      arch: str) -> str | None:
    """The observed map against wmmae's map of ``lay`` for ``arch`` and the probe's load layout (A ``.row``,
    B ``.col``): a sentence saying it is the same map, or where it first differs and at how many points; None
    where wmmae has no map for it.  The reference is not the doc: this never confirms or contradicts a spec."""
    from ..catalog import wmma_arch
    try:
        entry = wmma_arch.lookup(lay.id, arch, _LOAD_LAYOUT[fr.operand])
    except KeyError:
        return None
    named = entry.named()
    what = f"wmmae's {arch} {entry.major}_major map ({entry.source}; {wmma_arch.LABEL})"
    diffs = []
    for lane in range(32):
        for i in range(fr.elements):
            ref = named.at({"lane": lane, "i": i})
            want = None if ref is None else (ref["row"], ref["col"])
            got = observed.get((lane, i))
            if want != got:
                diffs.append((lane, i, want, got))
    if not diffs:
        return f"the same map as {what}"
    lane, i, want, got = diffs[0]
    return (f"differs from {what} at {len(diffs)} point(s), first lane {lane} element {lay.element_name(i)}: "
            f"wmmae {want}, observed {got}")


def describe(lay: Layout, observed: Mapping[tuple[int, int], tuple[int, int] | None], first: int = 8) -> str:
    """Lane 0 of an observed map, in the doc's words (the observation file has all of it)."""
    elems = ", ".join(f"{lay.element_name(i)} {observed.get((0, i))}" for i in range(min(first, lay.n_elements)))
    return f"lane 0: {elems}" + (", ..." if lay.n_elements > first else "")


__all__ = ["Fragment", "build", "compare_reference", "decode", "describe", "fragments", "image", "reference_arch",
           "simulate", "stand_in", "violations"]
