"""FlashInfer's sm_120 8-bit ``ldmatrix.m16n16.x2.trans`` as its fp8 prefill uses it, read as text.

Part of the ``flashinfer`` reference (FlashInfer's origin); kept in its own file.  FlashInfer's sparse-MLA fp8
prefill (``include/flashinfer/attention/sparse_mla_sm120``) loads the A operand of an fp8 ``mma`` straight out of
a ``[candidate, dim]`` tile with the sm_100 8-bit transposing ``ldmatrix``; what its source says, each statement
found by its text (never compiled or run):

* ``arch/matrix_memory.cuh``, ``ldmatrix_x2_trans_b8``: ``ldmatrix.sync.aligned.m16n16.x2.trans.shared.b8
  {%0, %1, %2, %3}`` with outputs ``d0 .. d3`` in that order;
* the same file, ``ldmatrix_load_a_packed_16x32_bytes_trans``: ``ldmatrix_x2_trans_b8(a0, a1, a2, a3,
  smem_base + ROW * KV_STRIDE_BYTES + dim)``: lane ``l`` gives the address of tile row ``ROW`` (``cexpr``, at
  ``k_start`` = 0), the tile's 16 bytes from ``dim`` its columns;
* ``arch/mma_sm120.cuh``, ``mma_fp8_m16n8k32``: ``mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32`` whose A
  registers ``{%4, %5, %6, %7}`` are ``a0 .. a3``;
* ``kernels/fp8_prefill/prefill_swapab.cuh``: the registers the load fills (``v[..][0] .. [3]``) are passed, in
  that order, as ``a0 .. a3`` of ``mma_fp8_m16n8k32``.

So the kernel relies on byte ``e`` of register ``j`` holding ``A[m][k]`` = tile row ``k``, column ``m``, where
``(m, k)`` is element ``4 j + e`` of the lane in PTX's ``mma.m16n8k32`` A fragment (the catalog's, which CuTe
and others back).  In the spec's coordinates (row r: the tile row lane r addresses; col: the byte in that row)
that is the ldmatrix fragment, compared with ``ldmatrix.m16n16.R.b8_b8x16.trans`` (its reviewed correction:
two registers per matrix) at ``NUM`` = 2.
"""
from __future__ import annotations

import re
from pathlib import Path

from ...layout.corrections import in_use_of
from ...layout.model import Layout
from .cexpr import Where, evaluate, function_text, strip_comments
from .common import Evaluated
from .pyfunc import Refused

SM120 = "include/flashinfer/attention/sparse_mla_sm120"
MEMORY = f"{SM120}/arch/matrix_memory.cuh"
MMA = f"{SM120}/arch/mma_sm120.cuh"
KERNEL = f"{SM120}/kernels/fp8_prefill/prefill_swapab.cuh"
SPEC = "ldmatrix.m16n16.R.b8_b8x16.trans"
A_PREFIX = "mma.m16n8k32.A."
NUM = 2
LDSM = "ldmatrix.sync.aligned.m16n16.x2.trans.shared.b8"
MMA_PTX = "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32"


def _text(root: Path, rel: str) -> str:
    try:
        return strip_comments((root / rel).read_text(encoding="utf-8", errors="replace"))
    except OSError as e:
        raise Refused(e.strerror or "cannot read", rel, 0) from None


def _flat(body: str) -> str:
    """The body with the asm string's adjacent literals joined and whitespace runs made one space."""
    return re.sub(r"\s+", " ", re.sub(r'"\s*"', "", body))


def _require(pattern: str, text: str, what: str, rel: str, line: int) -> re.Match:
    m = re.search(pattern, text)
    if m is None:
        raise Refused(f"{what} not found", rel, line)
    return m


def _rows_by_lane(root: Path) -> tuple[dict[int, int], int, str]:
    """Lane -> the tile row whose address it gives, the line of the statement and its row expression."""
    text = _text(root, MEMORY)
    body, line = function_text(text, "ldmatrix_x2_trans_b8", MEMORY)
    flat = _flat(body)
    _require(re.escape(LDSM) + r" \{%0, %1, %2, %3\}, \[%4\]", flat, f"ldmatrix_x2_trans_b8: {LDSM} {{%0..%3}}",
             MEMORY, line)
    _require(r': "=r"\(d0\), "=r"\(d1\), "=r"\(d2\), "=r"\(d3\) :', flat, "ldmatrix_x2_trans_b8: outputs d0 .. d3",
             MEMORY, line)
    body, line = function_text(text, "ldmatrix_load_a_packed_16x32_bytes_trans", MEMORY)
    m = re.search(r"ldmatrix_x2_trans_b8\(\s*a0\s*,\s*a1\s*,\s*a2\s*,\s*a3\s*,\s*smem_base\s*\+\s*(?P<e>[^;]*?)"
                  r"\s*\*\s*KV_STRIDE_BYTES\s*\+\s*dim\s*\)", body)
    if m is None:
        raise Refused("ldmatrix_load_a_packed_16x32_bytes_trans: no ldmatrix_x2_trans_b8(a0, a1, a2, a3, "
                      "smem_base + ROW * KV_STRIDE_BYTES + dim)", MEMORY, line)
    at = Where(MEMORY, line + body.count("\n", 0, m.start("e")), 0)
    rows = {lane: evaluate(m.group("e"), {"k_start": 0, "lane": lane}, at) for lane in range(32)}
    return rows, at.line, m.group("e").strip()


def _fed_as_a(root: Path) -> int:
    """The line of the kernel's ``mma_fp8_m16n8k32`` taking the loaded registers as ``a0 .. a3`` (Refused else)."""
    text = _text(root, MMA)
    body, line = function_text(text, "mma_fp8_m16n8k32", MMA)
    flat = _flat(body)
    _require(re.escape(MMA_PTX) + r" \{%0, %1, %2, %3\}, \{%4, %5, %6, %7\}", flat,
             f"mma_fp8_m16n8k32: {MMA_PTX} with A in %4 .. %7", MMA, line)
    _require(r'(: "=f"\([^)]*\)(, "=f"\([^)]*\)){3} : "r"\(a0\), "r"\(a1\), "r"\(a2\), "r"\(a3\),)', flat,
             "mma_fp8_m16n8k32: a0 .. a3 as %4 .. %7", MMA, line)
    kernel = _text(root, KERNEL)
    load = re.search(r"ldmatrix_load_a_packed_16x32_bytes_trans\s*<[^>]*>\s*\(\s*(?P<v>\w+(?:\[\w+\])*)\[0\]\s*,"
                     r"\s*(?P=v)\[1\]\s*,\s*(?P=v)\[2\]\s*,\s*(?P=v)\[3\]", kernel)
    if load is None:
        raise Refused("no ldmatrix_load_a_packed_16x32_bytes_trans<..>(V[0], V[1], V[2], V[3], ...)", KERNEL, 0)
    v = re.escape(load.group("v"))
    mma = re.search(r"mma_fp8_m16n8k32\(\s*" + r"\s*,\s*".join(f"{v}\\[{j}\\]" for j in range(4)) + r"\s*,",
                    kernel[load.end():])
    if mma is None:
        raise Refused(f"the registers {load.group('v')}[0..3] are not mma_fp8_m16n8k32's a0 .. a3", KERNEL,
                      kernel.count("\n", 0, load.start()) + 1)
    return kernel.count("\n", 0, load.end() + mma.start()) + 1


def ldsm_items(specs: list, root: Path) -> list[Evaluated]:
    """The ldmatrix fragment FlashInfer's fp8 prefill relies on (module docstring); [] when its files are absent."""
    if not all((root / f).is_file() for f in (MEMORY, MMA, KERNEL)):
        return []
    by_id = {lay.id: lay for lay in specs if isinstance(lay, Layout)}
    spec = in_use_of(by_id, SPEC)
    a_ids = sorted(i for i in by_id if i.startswith(A_PREFIX) and "e4m3" in i.split(".")[3].split("_"))
    a = in_use_of(by_id, a_ids[0]) if a_ids else None
    if spec is None or a is None:
        return []
    name = "ldmatrix_load_a_packed_16x32_bytes_trans -> mma_fp8_m16n8k32 A"
    params = (("NUM", NUM),)
    try:
        rows, line, expr = _rows_by_lane(root)
        mma_line = _fed_as_a(root)
    except Refused as e:
        return [Evaluated(name, "R", e.file, e.line, spec, params, error=str(e))]
    lane_of = {r: lane for lane, r in rows.items()}
    member = spec.instance(NUM=NUM)
    entries: list[tuple[int, int, int | None, int | None]] = []
    bad = ""
    for lane in range(32):
        for i in range(member.n_elements):
            m, k = a.evaluate(lane, i) if i < a.n_elements else (None, None)
            if not isinstance(m, int) or not isinstance(k, int) or k not in lane_of:
                bad = bad or f"lane {lane} element {i}: A's (m, k) = ({m}, {k}) is in no row a lane addresses"
                continue
            entries.append((lane, i, lane_of[k], m))
    text = (f"lane l addresses tile row {expr} (k_start = 0); registers fed to {MMA_PTX} as A "
            f"({KERNEL}:{mma_line}); A's (m, k) from {a.id}")
    return [Evaluated(name, "R", MEMORY, line, spec, params, tuple(entries), text, error=bad)]
