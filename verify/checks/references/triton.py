"""The Triton reference: Gluon's linear layouts of the tensor-core fragments Triton generates code for.

Triton lays out ``mma`` (NVMMA version 2) and ``wgmma`` (version 3) accumulators and register
operands itself, as linear layouts over GF(2); Gluon's ``to_linear_layout`` evaluates them on a CPU.
``triton_dump`` runs in a subprocess (Triton's LLVM aborts the process on a bad parameter; a
subprocess keeps that away from ours), and each layout is read with the Triton notation importer
(``layout.notations.triton``) and conformed to its spec layout:

* the version-2 accumulator ``[16, 8]`` against every ``mma`` m16n8 C layout of an f32, f16 or s32
  accumulator;
* version-2 dot operands at Triton's own k per instruction: ``k_width`` 2 (16-bit, m16n8k16), 1
  (tf32, m16n8k8), 4 (8-bit, m16n8k32);
* the version-3 accumulator ``[64, N]`` (4 warps, ``instr_shape [16, N, 16]``) against every wgmma
  D layout for every ``N``, and version-3 register A operands (``k_width`` 2, 1, 4) for ``N`` = 64.

Tensor Memory (``triton/experimental/gluon/language/nvidia/blackwell``; the C++ behind them is
``tensorMemoryToLinearLayout`` / ``tensorMemoryScalesToLinearLayout`` in ``LinearLayoutConversions.cpp``).
A TMEM linear layout maps (TMEM lane, column) to the tensor's (row, col); its column counts *elements*
(``TensorMemoryEncodingAttr``: "colStride describes the stride in elements along the column dimension",
``TritonNvidiaGPUAttrDefs.td``; the verifier asks ``bitwidth * colStride <= 32``), so an element in column
``c`` of a ``b``-bit layout is in 32-bit column ``c * b / 32`` at bit ``c * b % 32``; of the columns a
``colStride`` zero basis gives one element, its own is the first (the rest is padding):

* ``TensorMemoryLayout(block=(128, N))`` -> ``tcgen05.datapath.D``; ``block=(64, N)`` -> ``F`` (``BASE`` 0);
* ``two_ctas=True`` ("laid out for twoCTA mode, i.e., cta_group::2") with ``cga_layout=[[1, 0]]`` (the
  verifier's required first block basis): ``block=(128, N)`` over ``[256, N]`` -> ``A`` (M = 256), ``block=(64,
  N)`` over ``[128, N]`` -> ``B`` (M = 128: the C++'s blockM = 64 two-CTA case moves the last column bit to
  lane 64, rows 0-63 in lanes 0-63 for the first N/2 columns, in lanes 64-127 for the rest).  The print-only ``_TensorMemoryLinearLayout`` drops the
  block bases, so the CTA bit is Triton's CGA layout over the same shape, read from a ``BlockedLayout`` with
  the same ``cga_layout`` (``makeCgaLayout``: block bit 0 -> dim 0 at the per-CTA rows);
* 16-bit elements, ``col_stride=2`` (the unpacked form, ``32 / bitwidth``; Triton's accumulator for a
  16-bit ``acc_dtype``, ``tools/triton_to_gluon_translator/blackwell_helpers.py``) -> ``tcgen05.packing.
  D.b16.unpacked`` and ``A.b16.unpacked``; ``col_stride=1`` (packed) -> ``A.b16.packed``; 8-bit elements,
  ``col_stride=1`` -> ``A.mxf8f6f4`` (four 8-bit containers per word, the lower k first);
* ``TensorMemoryScalesLayout()`` over ``[128, 4]`` 8-bit factors -> ``tcgen05.sf.A.4x1`` (every ``VS``:
  ``SFA_ID + kb % VS`` is ``kb``): row m in lane m % 32 of every lane quarter, 32-bit column m / 32, byte k;
  the copy compared is the reader's, the quarter of Layout D (the spec reads only its own quarter);
* ``_compute_tmem_reg_layout(float32, [M, C], TensorMemoryLayout(block=(M, C)), 4, variant)`` warp 0, its
  tensor cells put through the same TensorMemoryLayout (blockM = 128: the identity) -> ``tcgen05.ld/st``
  32x32b, 16x64b, 16x128b, 16x256b; ``16x32bx2`` Triton refuses to be asked for ("inferred implicitly"): it
  is what a ``32x32b`` request over a blockM = 64 layout lowers to (``getDistributedLayoutForTmemLdSt``:
  "This layout is inferred sometimes for the 32x32b atom"), lanes 16-31 reading lanes 0-15 at ``.num``
  columns on, compared as ``[64, 2 NUM]`` with ``block=(64, 2 NUM)``.

Not paired, because Triton 3.9 states no such layout: ``tcgen05.datapath.C`` (Gluon's ``tcgen05_mma`` has no sparse A;
its 2-CTA M = 128 layout is B), ``E`` and ``G`` (no ``.ws``: ``blockM must be 64 or 128``, and blockM = 64
without ``two_ctas`` is F's 16-lane interleave), ``tcgen05.packing.A.mxf4`` (an fp4 operand is an 8-bit
tensor of K / 2 columns: which nibble holds the lower k is the dtype's packing, not the layout's;
``fp4_padded`` is one byte per fp4 value, the mxf8f6f4 form), ``tcgen05.sf.A.4x1.sfa_id0`` (a planted
reader, not a layout), ``tcgen05.mma.m1n4.SFA.*`` (which ``SFA_ID`` an MMA is given is the lowering's, not a
layout object's), ``tcgen05.cp.*`` (the copy's shape is chosen in the lowering, no layout object states it)
and ``storage.sf.*`` (no layout object for the 5-D preshuffled scale tensor: the tutorials reshape it).

A catalog layout with a reviewed correction is compared in its corrected form (``ID@corrected``).
"""
from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from ...layout.corrections import prefer_corrections
from ...layout.model import Layout, MapLayout
from ...layout.notations import NotationError, parse_triton
from ..crosscheck import CrosscheckReport
from ..fragment import DEFAULT_TIMEOUT
from . import rasters, smem
from .common import Evaluated, conform_rows

NAME = "triton"
# tcgen05.ld/st shapes -> (Triton's instr_variant, the TensorMemoryLayout's blockM, 32-bit columns per .num).
# Triton refuses to be asked for 16x32bx2 ("Atom 16x32bx2 is inferred implicitly and cannot be requested
# explicitly"): it is the atom a 32x32b access of a blockM = 64 layout is lowered to (getDistributedLayoutForTmemLdSt:
# "This layout is inferred sometimes for the 32x32b atom"), lanes 16-31 reading TMEM lanes 0-15 at taddr + .num.
TMEM_REG = {"32x32b": ("32x32b", 128, 1), "16x64b": ("16x64b", 128, 2), "16x128b": ("16x128b", 128, 4),
            "16x256b": ("16x256b", 128, 8), "16x32bx2": ("32x32b", 64, 2)}
TMEM_COLS = {shape: cols for shape, (_, _, cols) in TMEM_REG.items()}


@dataclass(frozen=True)
class TmemMap:
    """A Tensor Memory map spec and the Triton layout object that states it (see the module docstring)."""

    block_m: int          # TensorMemoryLayout blockM (0: TensorMemoryScalesLayout)
    rows: int             # the tensor's rows (dim 0 of the shape Triton lays out)
    cols: int = 0         # the tensor's columns; 0: the spec's N
    bits: int = 32        # element bits: Triton's TMEM column index counts elements (colStride in elements)
    col_stride: int = 1
    two_ctas: bool = False   # cta_group::2, CGA layout [[1, 0]] (block bit 0 -> the rows of CTA 1)
    quarter: bool = False    # a value in every lane quarter: compare the copy in the quarter of Layout D


TMEM_MAPS = {
    "tcgen05.datapath.D": TmemMap(128, 128),
    "tcgen05.datapath.F": TmemMap(64, 64),
    "tcgen05.datapath.A": TmemMap(128, 256, two_ctas=True),
    "tcgen05.datapath.B": TmemMap(64, 128, two_ctas=True),
    "tcgen05.packing.D.b16.unpacked": TmemMap(128, 128, 64, bits=16, col_stride=2),
    "tcgen05.packing.A.b16.unpacked": TmemMap(128, 128, 64, bits=16, col_stride=2),
    "tcgen05.packing.A.b16.packed": TmemMap(128, 128, 64, bits=16, col_stride=1),
    "tcgen05.packing.A.mxf8f6f4": TmemMap(128, 128, 128, bits=8, col_stride=1),
    "tcgen05.sf.A.4x1": TmemMap(0, 128, 4, bits=8, quarter=True),
}
TMEM_BLOCKS = {k: v.block_m for k, v in TMEM_MAPS.items() if k in ("tcgen05.datapath.D", "tcgen05.datapath.F")}
_LOCAL = ("members", "quarter")   # request fields for this side only (not sent to Triton, not in the key)
RUN_TIMEOUT = 600.0
ACC_TYPES = {"f32", "f16", "s32"}
# (k_width, PTX types it serves, mma K, wgmma K)
DOT = ((2, {"f16", "bf16", "f16_bf16"}, 16, 16), (1, {"tf32"}, 8, 8),
       (4, {"u8", "s8", "u8_s8", "e4m3", "e5m2", "e4m3_e5m2"}, 32, 32))


def probe() -> str:
    import importlib.util
    try:
        found = importlib.util.find_spec("triton")
    except (ImportError, ValueError):
        found = None
    return "" if found is not None else "no triton: pip install 'ptx-layout-verify[refs]' (the triton wheel)"


_L = TypeVar("_L", Layout, MapLayout)


def _preferred(layouts: list[_L]) -> list[_L]:
    """Each layout, or its reviewed correction in its place."""
    return prefer_corrections(layouts)


def _type_ok(lay: Layout, allowed: set[str]) -> bool:
    return any(t in allowed or all(p in allowed for p in t.split("_")) for t in lay.types)


def requests_for(layouts: Iterable[Layout | MapLayout]
                 ) -> list[tuple[dict, Layout | MapLayout, tuple[tuple[str, int], ...]]]:
    """(Gluon request, spec layout, family member) for every pairing this reference makes."""
    out: list[tuple[dict, Layout | MapLayout, tuple[tuple[str, int], ...]]] = []
    v2 = {"version": [2, 0], "warps": [1, 1], "instr": [16, 8], "arch": "cuda:80"}
    everything = list(layouts)
    maps = _preferred([x for x in everything if isinstance(x, MapLayout)])
    for spec in maps:   # Tensor Memory maps: TensorMemoryLayout / TensorMemoryScalesLayout (TMEM_MAPS)
        out.extend((req, spec, params) for req, params in tmem_requests(spec))
    for s in smem.smem_specs([x for x in everything if isinstance(x, MapLayout)]):   # shared memory
        for t in smem.triton_tiles(s):
            req = {"layout": "nvmma_shared", "swizzle": smem.SWIZZLES[s.swizzle][0], "bits": t.bits,
                   "transposed": s.major == "MN", "shape": [t.rows, t.cols], "arch": "cuda:90"}
            for params, rows, cols in t.members:
                out.append(({**req, "members": [rows, cols]}, s.spec, params))
    for lay in _preferred([x for x in everything if not isinstance(x, MapLayout)]):
        shape = str(lay.shape)
        if lay.instruction == "mma" and shape.startswith("m16n8k") and lay.variant is None:
            k = int(shape[6:])
            if lay.operand == "C" and _type_ok(lay, ACC_TYPES):
                out.append(({**v2, "layout": "nvmma", "shape": [16, 8]}, lay, ()))
            for kw, types, kk, _ in DOT:
                if k == kk and lay.operand in ("A", "B") and _type_ok(lay, types):
                    op = 0 if lay.operand == "A" else 1
                    out.append(({**v2, "layout": "dot", "op": op, "k_width": kw,
                                 "shape": [16, k] if op == 0 else [k, 8]}, lay, ()))
        elif lay.instruction in ("wgmma", "wgmma.sp") and lay.operand == "D":
            for n in dict((p.name, p.values) for p in lay.domain.params).get("N", ()):
                if n & (n - 1):   # Triton's layouts are over power-of-two shapes only
                    continue
                out.append(({"layout": "nvmma", "version": [3, 0], "warps": [4, 1], "instr": [16, n, 16],
                             "shape": [64, n], "arch": "cuda:90"}, lay, (("N", n),)))
        elif lay.instruction in ("tcgen05.ld", "tcgen05.st") and shape in TMEM_REG:
            variant, block_m, cols = TMEM_REG[shape]
            for num in dict((p.name, p.values) for p in lay.domain.params).get("NUM", ()):
                out.append(({"layout": "tmem_reg", "variant": variant, "num_warps": 4,
                             "shape": [block_m, num * cols], "block": [block_m, num * cols]}, lay, (("NUM", num),)))
        elif lay.instruction == "wgmma" and lay.operand == "A":
            k = int(shape.rsplit("k", 1)[1])
            for kw, types, _, kk in DOT:
                if k == kk and _type_ok(lay, types):
                    out.append(({"layout": "dot", "op": 0, "k_width": kw, "version": [3, 0], "warps": [4, 1],
                                 "instr": [16, 64, 16], "shape": [64, k], "arch": "cuda:90"}, lay, (("N", 64),)))
    return out


def tmem_requests(spec: MapLayout) -> list[tuple[dict, tuple[tuple[str, int], ...]]]:
    """(Gluon request, family member) for a Tensor Memory map of TMEM_MAPS: every power-of-two ``N`` of a data
    path (Triton's shapes are powers of two), lane alignment ``BASE`` 0 (the allocation's own), every ``VS`` of a
    scale-factor reading (one Triton layout serves them all)."""
    how = TMEM_MAPS.get(spec.doc_id)
    if how is None:
        return []
    values = {q.name: tuple(q.values) for q in spec.params}
    base = {"BASE": 0} if "BASE" in values else {}
    out: list[tuple[dict, tuple[tuple[str, int], ...]]] = []
    if how.block_m == 0:
        req = {"layout": "tmem", "scales": True, "shape": [how.rows, how.cols], "bits": how.bits, "arch": "cuda:100",
               "quarter": how.quarter}
        members = [((name, v),) for name, vs in values.items() for v in vs] if values else [()]
        return [(req, m) for m in members]
    for n in (values.get("N", ()) if not how.cols else (how.cols,)):
        if n & (n - 1):
            continue
        req = {"layout": "tmem", "block": [how.block_m, n], "shape": [how.rows, n], "arch": "cuda:100"}
        if how.col_stride != 1:
            req["col_stride"] = how.col_stride
        if how.bits != 32:
            req["bits"] = how.bits
        if how.two_ctas:
            req.update(two_ctas=True, cga=[[1, 0]])
        out.append((req, tuple(sorted({**base, **({"N": n} if "N" in values else {})}.items()))))
    return out


def _xor(bases: list, index: int, start: tuple[int, int]) -> tuple[int, int]:
    """A linear layout's value: ``start`` XOR the bases of the set bits of ``index`` (bit k -> ``bases[k]``)."""
    r, c = start
    for k, v in enumerate(bases):
        if index >> k & 1:
            r, c = r ^ v[0], c ^ v[1]
    return r, c


def _tmem_cells(doc: dict, quarter: bool = False) -> dict[tuple[int, int], tuple[int, int]]:
    """(row, col) -> (TMEM lane, column in elements) from Triton's TMEM (lane, column) bases.  A cell two
    places hold is the smallest lane's (the BASE 0 alignment; M = 64: lanes 16-31 repeat 0-15), or with
    ``quarter`` the one in the lane quarter that computes its row (Layout D: row // 32); of the columns a
    ``colStride`` zero basis maps to one element, the element's own (the smallest: the others are padding)."""
    rows_b, cols_b = doc["rows"], doc["cols"]
    found: dict[tuple[int, int], tuple[int, int]] = {}
    for lane in range(1 << len(rows_b)):
        for col in range(1 << len(cols_b)):
            r, c = _xor(cols_b, col, _xor(rows_b, lane, (0, 0)))
            old = found.get((r, c))
            rank = (quarter and lane // 32 != r // 32, lane, col)
            if old is None or rank < (quarter and old[0] // 32 != r // 32, *old):
                found[(r, c)] = (lane, col)
    return found


def _tmem_spec_rows(doc: dict, req: dict, outputs: tuple[tuple[str, int], ...]) -> tuple[tuple[int, ...], ...]:
    """Triton's TMEM layout as the spec's map rows ``(row, col, outputs...)``: ``cta`` from the CGA block bases,
    ``tmem_lane``, ``tmem_col`` (the 32-bit column: element column x bits / 32) and ``slot`` / ``byte`` (the
    element's container in the word, 32 / size bits each).  An element not at a container boundary of its word
    is a ``NotationError``."""
    bits = req.get("bits", 32)
    cells = _tmem_cells(doc, req.get("quarter", False))
    blocks = doc.get("block_bases", [])
    out = []
    for (r, c), (lane, col) in sorted(cells.items()):
        bit = col * bits
        word, within = divmod(bit, 32)
        for cta in range(1 << len(blocks)):
            rr, cc = r, c
            for k, v in enumerate(blocks):
                if cta >> k & 1:
                    rr, cc = rr ^ v[0], cc ^ v[1]
            vals = []
            for name, size in outputs:
                if name == "cta":
                    vals.append(cta)
                elif name == "tmem_lane":
                    vals.append(lane)
                elif name == "tmem_col":
                    vals.append(word)
                else:   # slot / byte: the container within the 32-bit word
                    container = 32 // size
                    if within % container:
                        raise NotationError(f"element ({r}, {c}) at bit {within} of its word: not a {container}-bit "
                                            f"container of it")
                    vals.append(within // container)
            if within and not any(name not in ("cta", "tmem_lane", "tmem_col") for name, _ in outputs):
                raise NotationError(f"element ({r}, {c}) at bit {within} of its word, the spec has whole words")
            out.append((rr, cc, *vals))
    return tuple(sorted(out))


def _tmem_entries(doc: dict, variant: str) -> tuple[tuple[int, int, int, int], ...]:
    """Warp 0's registers of Triton's [128, C] layout, one instruction's worth: for a 16-lane shape the
    register bit that moves to TMEM lanes 16-31 (basis [16, 0], the warp's second instruction) is fixed
    at 0, the other register bits keep their order."""
    reg, lane = doc["reg_bases"], doc["lane_bases"]
    keep = [b for b, v in enumerate(reg) if not (variant.startswith("16x") and v == [16, 0])]
    if len(lane) != 5 or len(keep) < len(reg) - (1 if variant.startswith("16x") else 0):
        raise NotationError(f"unexpected Triton layout for {variant}: {doc.get('printed', '')}")
    out = []
    for ln in range(32):
        for i in range(1 << len(keep)):
            row, col = _xor([reg[b] for b in keep], i, _xor(lane, ln, (0, 0)))
            out.append((ln, i, row, col))
    if "tmem_rows" not in doc:
        return tuple(out)
    # tensor (row, col) -> the TMEM (lane, column) Triton's TensorMemoryLayout puts it at (blockM = 128: the same)
    cells = _tmem_cells({"rows": doc["tmem_rows"], "cols": doc["tmem_cols"]})
    missing = [(r, c) for _, _, r, c in out if (r, c) not in cells]
    if missing:
        raise NotationError(f"cell {missing[0]} has no Tensor Memory address in the layout {doc.get('printed', '')}")
    return tuple((ln, i, *cells[(r, c)]) for ln, i, r, c in out)


def _tmem_map_rows(doc: dict, n: int) -> tuple[tuple[int, int, int, int], ...]:
    """(row, col, tmem_lane, tmem_col) from Triton's TMEM (lane, column) bases of a 32-bit layout; a cell two
    lanes hold (M = 64: lanes 16-31 repeat 0-15) is the smallest lane's (the BASE 0 alignment)."""
    return tuple((r, c, lane, col) for (r, c), (lane, col) in sorted(_tmem_cells(doc).items()))


def smem_offsets(doc: dict) -> dict[tuple[int, int], int]:
    """(dim0, dim1) -> offset from Triton's offset bases (offset bit k -> the XOR of basis k's coordinates);
    a coordinate two offsets reach (a broadcast basis) keeps the smallest offset."""
    bases = doc["offset_bases"]
    if doc.get("block_bases"):
        raise NotationError(f"a multi-CTA shared layout: {doc.get('printed', '')}")
    found: dict[tuple[int, int], int] = {}
    for off in range(1 << len(bases)):
        r = c = 0
        for k, v in enumerate(bases):
            if off >> k & 1:
                r, c = r ^ v[0], c ^ v[1]
        found.setdefault((r, c), off)
    return found


def _describe(r: dict) -> str:
    if r["layout"] == "nvmma_shared":
        return (f"NVMMASharedLayout(swizzle_byte_width={r['swizzle']}, element_bitwidth={r['bits']}, "
                f"transposed={r['transposed']}) {r['shape']}")
    if r["layout"] == "tmem":
        of = f" of {r['bits']}-bit elements" if r.get("bits", 32) != 32 else ""
        if r.get("scales"):
            return f"TensorMemoryScalesLayout() {r['shape']}{of}"
        ctas = f", cga_layout={r['cga']}, two_ctas=True" if r.get("two_ctas") else ""
        return (f"TensorMemoryLayout(block={tuple(r['block'])}, col_stride={r.get('col_stride', 1)}{ctas}) "
                f"{r['shape']}{of}")
    if r["layout"] == "tmem_reg":
        block = r.get("block", r["shape"])
        atom = " (Triton's 16x32bx2 atom: blockM = 64)" if block[0] == 64 and r["variant"] == "32x32b" else ""
        return (f"_compute_tmem_reg_layout(float32, {r['shape']}, TensorMemoryLayout(block={tuple(block)}, "
                f"col_stride=1), num_warps={r['num_warps']}, {r['variant']!r}) warp 0{atom}")
    parent = f"NVMMADistributedLayout(version={r['version']}, warps_per_cta={r['warps']}, instr_shape={r['instr']})"
    if r["layout"] == "nvmma":
        return f"{parent} {r['shape']}"
    return f"DotOperandLayout(operand_index={r['op']}, parent={parent}, k_width={r['k_width']}) {r['shape']}"


def _key(req: dict) -> str:
    """A request's identity for the subprocess (the member a Triton tile serves is not part of it)."""
    return json.dumps({k: v for k, v in req.items() if k not in _LOCAL}, sort_keys=True)


def run_dump(requests: list[dict]) -> tuple[str, dict[str, dict]]:
    """Triton's version and each request's bases (by key); a request that stops the subprocess (Triton's
    LLVM aborts on a layout it cannot build) is left out and the rest run in a fresh one."""
    version, found, todo = "?", {}, list(requests)
    while todo:
        version, got = _run_once(todo)
        found.update(got)
        done = [r["key"] in got for r in todo]
        if all(done):
            break
        stop = done.index(False)   # the request the subprocess stopped at
        todo = todo[stop + 1:]
    return version, found


def _run_once(requests: list[dict]) -> tuple[str, dict[str, dict]]:
    """Triton's version and each request's bases (by key), from one subprocess."""
    # -I -c: isolated, so neither this package's directory (its triton.py) nor the current directory can
    # shadow the triton package
    source = Path(__file__).with_name("triton_dump.py").read_text(encoding="utf-8")
    with tempfile.TemporaryDirectory(prefix="ptx-verify-triton-") as tmp:
        try:
            proc = subprocess.run([sys.executable, "-I", "-c", source], input=json.dumps(requests),
                                  capture_output=True, text=True, timeout=RUN_TIMEOUT, cwd=tmp)
        except subprocess.TimeoutExpired:
            raise RuntimeError(f"the Triton subprocess did not finish in {RUN_TIMEOUT:.0f} s") from None
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if not lines:
        raise RuntimeError(f"the Triton subprocess printed nothing (exit {proc.returncode}): "
                           + (proc.stderr.strip().splitlines() or ["no message"])[-1])
    version = json.loads(lines[0]).get("triton_version", "?")
    found = {}
    for ln in lines[1:]:
        doc = json.loads(ln)
        found[doc["key"]] = doc
    return version, found


def evaluate_default(specs: list, timeout: float = DEFAULT_TIMEOUT, path: str | Path | None = None) -> CrosscheckReport:
    t0 = time.perf_counter()
    pairs = requests_for(specs)
    unique: dict[str, dict] = {}
    for req, _, _ in pairs:
        key = _key(req)
        unique.setdefault(key, {**{k: v for k, v in req.items() if k not in _LOCAL}, "key": key})
    version, found = run_dump(list(unique.values()))
    where = f"triton {version}: triton/experimental/gluon/language/_layouts.py"
    items: list[Evaluated] = []
    for req, lay, params in pairs:
        key = _key(req)
        text = _describe(req)
        doc = found.get(key)
        operand = lay.operand if isinstance(lay, Layout) else ""  # a map (Tensor or shared memory) has none
        if doc is None:
            items.append(Evaluated(text, operand, where, 0, lay, params, text=text,
                                   error="Triton did not produce this layout (the subprocess stopped)"))
            continue
        if "error" in doc:
            items.append(Evaluated(text, operand, where, 0, lay, params, text=text,
                                   unmatched=f"Triton does not lay this out: {doc['error'][:160]}"))
            continue
        at, line = (f"triton {version}: {doc['source'][0]}", doc["source"][1]) if doc.get("source") else (where, 0)
        if req["layout"] == "tmem":
            assert isinstance(lay, MapLayout)  # a Tensor Memory request pairs with a map (requests_for)
            try:
                member = lay.instance(**dict(params)) if params else lay
                outs = tuple((d.name, int(d.size)) for d in member.outputs)
                rows = _tmem_spec_rows(doc, req, outs)
            except NotationError as e:
                items.append(Evaluated(text, "", at, line, lay, params, text=doc.get("printed", text), error=e.message))
                continue
            items.append(Evaluated(text, "", at, line, lay, params, text=doc.get("printed", text), map_rows=rows))
            continue
        if req["layout"] == "nvmma_shared":   # the tile's offsets, restricted to the member's rows and columns
            rows, cols = req["members"]
            try:
                offs = smem_offsets(doc)
                missing = [(r, c) for r in range(rows) for c in range(cols) if (r, c) not in offs]
                if missing:
                    raise NotationError(f"cell {missing[0]} has no offset in {doc.get('printed', '')}")
            except NotationError as e:
                items.append(Evaluated(text, "", where, 0, lay, params, text=text, error=e.message))
                continue
            items.append(Evaluated(text, "", where, 0, lay, params, text=f"{text} = {doc.get('printed', '')}",
                                   map_rows=smem.restrict(offs, rows, cols)))
            continue
        try:
            if req["layout"] == "tmem_reg":
                entries = _tmem_entries(doc, req["variant"])
            else:
                tl = parse_triton(json.dumps({k: doc[k] for k in ("reg_bases", "lane_bases", "warp_bases",
                                                                     "block_bases", "shape")}), "triton")
                entries = tuple((t, i, *tl.at_thread(t, i)) for t in range(tl.threads) for i in range(tl.values))
        except NotationError as e:
            items.append(Evaluated(text, operand, where, 0, lay, params, text=doc.get("printed", text),
                                   error=e.message))
            continue
        items.append(Evaluated(text, operand, at, line, lay, params, entries, doc.get("printed", text)))
    items.extend(rasters.triton_items(specs))   # swizzle2d, read from triton/language/standard.py
    judged = conform_rows(items, timeout)
    headers = (where, *sorted({ev.where for ev in items} - {where}))
    return CrosscheckReport(f"triton {version}", headers, tuple(judged), {}, time.perf_counter() - t0, NAME,
                            "Triton Gluon linear layouts")
