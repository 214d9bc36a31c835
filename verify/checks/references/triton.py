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

A catalog layout with a reviewed correction is compared in its corrected form (``ID@corrected``).
"""
from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path

from ...layout.model import Layout, MapLayout
from ...layout.notations import NotationError, parse_triton
from ..crosscheck import CrosscheckReport
from ..fragment import DEFAULT_TIMEOUT
from . import smem
from .common import Evaluated, conform_rows

NAME = "triton"
# tcgen05.ld/st shapes Triton lays out (16x32bx2 it only infers), and the 32-bit columns per .num
TMEM_COLS = {"32x32b": 1, "16x64b": 2, "16x128b": 4, "16x256b": 8}
TMEM_BLOCKS = {"tcgen05.datapath.D": 128, "tcgen05.datapath.F": 64}   # TensorMemoryLayout(block=(M, N))
RUN_TIMEOUT = 600.0
ACC_TYPES = {"f32", "f16", "s32"}
# (k_width, PTX types it serves, mma K, wgmma K)
DOT = ((2, {"f16", "bf16", "f16_bf16"}, 16, 16), (1, {"tf32"}, 8, 8),
       (4, {"u8", "s8", "u8_s8", "e4m3", "e5m2", "e4m3_e5m2"}, 32, 32))


def probe() -> str:
    import importlib.util  # noqa: PLC0415
    try:
        found = importlib.util.find_spec("triton")
    except (ImportError, ValueError):
        found = None
    return "" if found is not None else "no triton: pip install 'ptx-layout-verify[refs]' (the triton wheel)"


def _preferred(layouts: list[Layout]) -> list[Layout]:
    """Each layout, or its reviewed correction in its place."""
    ids = {lay.id for lay in layouts}
    return [lay for lay in layouts if f"{lay.id}@corrected" not in ids]


def _type_ok(lay: Layout, allowed: set[str]) -> bool:
    return any(t in allowed or all(p in allowed for p in t.split("_")) for t in lay.types)


def requests_for(layouts: Iterable[Layout]) -> list[tuple[dict, Layout, tuple[tuple[str, int], ...]]]:
    """(Gluon request, spec layout, family member) for every pairing this reference makes."""
    out: list[tuple[dict, Layout, tuple[tuple[str, int], ...]]] = []
    v2 = {"version": [2, 0], "warps": [1, 1], "instr": [16, 8], "arch": "cuda:80"}
    everything = list(layouts)
    for spec in everything:   # Tensor Memory data paths D (M = 128) and F (M = 64, BASE 0): TensorMemoryLayout
        if isinstance(spec, MapLayout) and spec.id in TMEM_BLOCKS:
            for n in dict((q.name, q.values) for q in spec.params).get("N", ()):
                if n & (n - 1) == 0:
                    m = TMEM_BLOCKS[spec.id]
                    base = {"BASE": 0} if "BASE" in {q.name for q in spec.params} else {}
                    out.append(({"layout": "tmem", "block": [m, n], "shape": [m, n], "arch": "cuda:100"}, spec,
                                tuple(sorted({"N": n, **base}.items()))))
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
        elif lay.instruction in ("tcgen05.ld", "tcgen05.st") and shape in TMEM_COLS:
            for num in dict((p.name, p.values) for p in lay.domain.params).get("NUM", ()):
                out.append(({"layout": "tmem_reg", "variant": shape, "num_warps": 4,
                             "shape": [128, num * TMEM_COLS[shape]]}, lay, (("NUM", num),)))
        elif lay.instruction == "wgmma" and lay.operand == "A":
            k = int(shape.rsplit("k", 1)[1])
            for kw, types, _, kk in DOT:
                if k == kk and _type_ok(lay, types):
                    out.append(({"layout": "dot", "op": 0, "k_width": kw, "version": [3, 0], "warps": [4, 1],
                                 "instr": [16, 64, 16], "shape": [64, k], "arch": "cuda:90"}, lay, (("N", 64),)))
    return out


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
            row = col = 0
            for k, v in enumerate(lane):
                if ln >> k & 1:
                    row, col = row ^ v[0], col ^ v[1]
            for j, b in enumerate(keep):
                if i >> j & 1:
                    row, col = row ^ reg[b][0], col ^ reg[b][1]
            out.append((ln, i, row, col))
    return tuple(out)


def _tmem_map_rows(doc: dict, n: int) -> tuple[tuple[int, int, int, int], ...]:
    """(row, col, tmem_lane, tmem_col) from Triton's TMEM (lane, column) bases; a cell two lanes hold
    (M = 64: lanes 16-31 repeat 0-15) is the smallest lane's (the BASE 0 alignment)."""
    rows_b, cols_b = doc["rows"], doc["cols"]
    found: dict[tuple[int, int], tuple[int, int]] = {}
    for lane in range(1 << len(rows_b)):
        for col in range(1 << len(cols_b)):
            r = c = 0
            for k, v in enumerate(rows_b):
                if lane >> k & 1:
                    r, c = r ^ v[0], c ^ v[1]
            for k, v in enumerate(cols_b):
                if col >> k & 1:
                    r, c = r ^ v[0], c ^ v[1]
            if (r, c) not in found:
                found[(r, c)] = (lane, col)
    return tuple((r, c, *found[(r, c)]) for r, c in sorted(found))


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
        return f"TensorMemoryLayout(block={tuple(r['block'])}, col_stride=1) {r['shape']}"
    if r["layout"] == "tmem_reg":
        return (f"_compute_tmem_reg_layout(float32, {r['shape']}, TensorMemoryLayout(block={tuple(r['shape'])}, "
                f"col_stride=1), num_warps={r['num_warps']}, {r['variant']!r}) warp 0")
    parent = f"NVMMADistributedLayout(version={r['version']}, warps_per_cta={r['warps']}, instr_shape={r['instr']})"
    if r["layout"] == "nvmma":
        return f"{parent} {r['shape']}"
    return f"DotOperandLayout(operand_index={r['op']}, parent={parent}, k_width={r['k_width']}) {r['shape']}"


def _key(req: dict) -> str:
    """A request's identity for the subprocess (the member a Triton tile serves is not part of it)."""
    return json.dumps({k: v for k, v in req.items() if k != "members"}, sort_keys=True)


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
        unique.setdefault(key, {**{k: v for k, v in req.items() if k != "members"}, "key": key})
    version, found = run_dump(list(unique.values()))
    where = f"triton {version}: triton/experimental/gluon/language/_layouts.py"
    items: list[Evaluated] = []
    for req, lay, params in pairs:
        key = _key(req)
        text = _describe(req)
        doc = found.get(key)
        if doc is None:
            items.append(Evaluated(text, lay.operand, where, 0, lay, params, text=text,
                                   error="Triton did not produce this layout (the subprocess stopped)"))
            continue
        if "error" in doc:
            items.append(Evaluated(text, lay.operand, where, 0, lay, params, text=text,
                                   unmatched=f"Triton does not lay this out: {doc['error'][:160]}"))
            continue
        if req["layout"] == "tmem":
            items.append(Evaluated(text, "", where, 0, lay, params, text=doc.get("printed", text),
                                   map_rows=_tmem_map_rows(doc, req["shape"][1])))
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
            items.append(Evaluated(text, lay.operand, where, 0, lay, params, text=doc.get("printed", text),
                                   error=e.message))
            continue
        items.append(Evaluated(text, lay.operand, where, 0, lay, params, entries, doc.get("printed", text)))
    rows = conform_rows(items, timeout)
    return CrosscheckReport(f"triton {version}", (where,), tuple(rows), {}, time.perf_counter() - t0, NAME,
                            "Triton Gluon linear layouts")
