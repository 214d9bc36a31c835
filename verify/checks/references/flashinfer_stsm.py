"""FlashInfer's sm_120 8-bit ``stmatrix.m16n8.x4.trans`` as its fp8 prefill uses it, read as text.

Part of the ``flashinfer`` reference (FlashInfer's origin); kept in its own file.  FlashInfer's sparse-MLA fp8
prefill (``include/flashinfer/attention/sparse_mla_sm120``) quantizes the softmax weights P (an fp8 ``mma``'s
accumulator fragment) to e4m3, stores them with the sm_100 8-bit transposing ``stmatrix`` and reads them back with
plain 32-bit loads as the B operand of the next fp8 ``mma``.  What its source says, each statement found by its
text (never compiled or run):

* ``arch/matrix_memory.cuh``, ``stmatrix_x4_trans_b8``: ``stmatrix.sync.aligned.m16n8.x4.trans.shared.b8 [%0],
  {%1, %2, %3, %4}`` with inputs ``addr, r0, r1, r2, r3``;
* the same file, ``StMatrixTransB8Tile::store``: ``stmatrix_x4_trans_b8(dst + ROW, regs[0] .. regs[3])`` (lane
  ``l`` gives the address of the 16 bytes at ``ROW``, ``cexpr``) and ``load_b``: ``b[i] = *(uint32_t*)(src +
  ADDR)`` (byte ``e`` of ``b[i]`` at ``ADDR + e``: a little-endian word; ``gid``/``tid`` as declared);
* ``arch/common.cuh``, ``cvt_e4m3x4(a, b, c, d)``: two ``cvt.rn.satfinite.e4m3x2.f32`` whose first source goes to
  the upper byte (PTX's rule for the two-source ``cvt``), ``lo | hi << 16``: bytes ``a, b, c, d``;
* ``kernels/fp8_prefill/prefill_swapab.cuh``: ``ws.. = s[m][c] * ...``, ``pq[0][m] = cvt_e4m3x4(ws.., ...)``
  (byte ``e`` of ``pq[..][m]`` is ``s[m][c_e]``), ``s[m][c]`` from ``qk[m][c]``, which is ``mma_fp8_m16n8k32``'s
  D element ``c`` of M tile ``m`` (rows ``16 m ..``: candidates, columns: heads); ``store(.., pq[p], lane)``,
  ``load_b(pb[p], ..)``, and ``pb[p][2 * kt]``, ``pb[p][2 * kt + 1]`` passed as B (``b0``, ``b1``) of the
  ``mma_fp8_m16n8k32`` whose K runs over candidates ``32 kt ..``.

So the kernel relies on P(candidate, head), D element ``c`` of register ``m`` (the catalog's ``mma.m16n8k32``
accumulator, ``16 m + row``), landing at the byte from which ``load_b`` gives the B element (the catalog's
``mma.m16n8k32`` B fragment) with ``k = candidate - 32 kt`` and ``n = head``.  That byte, in the spec's
coordinates (row r: the 16 bytes lane r addresses; col: the byte in them), is the stmatrix fragment of byte ``e``
of register ``m``, compared with ``stmatrix.m16n8.R.b8.trans`` at ``NUM`` = 4.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import cast

from ...layout.corrections import in_use_of
from ...layout.model import Layout
from .cexpr import Where, evaluate
from .common import Evaluated
from .cexpr import function_text
from .flashinfer_ldsm import KERNEL, MEMORY, SM120, _flat, _require, _text
from .pyfunc import Refused

COMMON = f"{SM120}/arch/common.cuh"
SPEC = "stmatrix.m16n8.R.b8.trans"
NUM = 4
STSM = "stmatrix.sync.aligned.m16n8.x4.trans.shared.b8"
CVT = "cvt.rn.satfinite.e4m3x2.f32"


def _fp8(by_id: dict, prefix: str) -> Layout | None:
    ids = sorted(i for i in by_id if i.startswith(prefix) and "e4m3" in i[len(prefix):].split("_"))
    return in_use_of(by_id, ids[0]) if ids else None


def _store_rows(root: Path) -> tuple[dict[int, int], int]:
    """Lane -> the first byte of the 16 it addresses in ``store`` (the line of the statement)."""
    text = _text(root, MEMORY)
    body, line = function_text(text, "stmatrix_x4_trans_b8", MEMORY)
    flat = _flat(body)
    _require(re.escape(STSM) + r" \[%0\], \{%1, %2, %3, %4\}", flat, f"stmatrix_x4_trans_b8: {STSM}", MEMORY, line)
    _require(r': "r"\(addr\), "r"\(r0\), "r"\(r1\), "r"\(r2\), "r"\(r3\)', flat,
             "stmatrix_x4_trans_b8: inputs addr, r0 .. r3", MEMORY, line)
    start = text.find("struct StMatrixTransB8Tile")
    if start < 0:
        raise Refused("no struct StMatrixTransB8Tile", MEMORY, 0)
    body, line = function_text(text[start:], "store", MEMORY)
    line += text.count("\n", 0, start)
    m = re.search(r"stmatrix_x4_trans_b8\(\s*dst\s*\+\s*(?P<e>[^,]*?)\s*,\s*regs\[0\]\s*,\s*regs\[1\]\s*,"
                  r"\s*regs\[2\]\s*,\s*regs\[3\]\s*\)", body)
    if m is None:
        raise Refused("store: no stmatrix_x4_trans_b8(dst + ROW, regs[0], regs[1], regs[2], regs[3])", MEMORY, line)
    at = Where(MEMORY, line + body.count("\n", 0, m.start("e")), 0)
    return {lane: evaluate(m.group("e"), {"lane": lane}, at) for lane in range(32)}, at.line


def _load_b(root: Path) -> tuple[str, Where]:
    text = _text(root, MEMORY)
    start = text.find("struct StMatrixTransB8Tile")
    body, line = function_text(text[start:], "load_b", MEMORY)
    line += text.count("\n", 0, start)
    m = re.search(r"b\[i\]\s*=\s*\*\s*reinterpret_cast<const uint32_t\s*\*>\(\s*src\s*\+\s*(?P<e>[^;]*?)\)\s*;", body)
    if m is None:
        raise Refused("load_b: no b[i] = *reinterpret_cast<const uint32_t*>(src + ADDR)", MEMORY, line)
    for name, op in (("gid", ">>"), ("tid", "&")):
        if not re.search(r"\b" + name + r"\s*=\s*lane\s*" + re.escape(op) + r"\s*\d+", body):
            raise Refused(f"load_b: no {name} = lane {op} ..", MEMORY, line)
    return m.group("e"), Where(MEMORY, line + body.count("\n", 0, m.start("e")), 0)


def _lane_env(body: str, lane: int, at: Where) -> dict[str, int]:
    env = {"lane": lane}
    for name in ("gid", "tid"):
        m = re.search(r"\b" + name + r"\s*=\s*(?P<e>lane\s*(?:>>|&)\s*\d+)", body)
        if m:
            env[name] = evaluate(m.group("e"), env, at)
    return env


def _cvt_bytes(root: Path) -> tuple[list[str], list[str]]:
    """The parameter names of ``cvt_e4m3x4`` in their order and in byte order 0..3."""
    text = _text(root, COMMON)
    body, line = function_text(text, "cvt_e4m3x4", COMMON)
    sig = re.match(r"cvt_e4m3x4\(\s*float (\w+)\s*,\s*float (\w+)\s*,\s*float (\w+)\s*,\s*float (\w+)\s*\)", body)
    pairs = re.findall(re.escape(CVT) + r' %0, %1, %2;" : "=h"\((\w+)\) : "f"\((\w+)\), "f"\((\w+)\)', _flat(body))
    ret = re.search(r"return\s+static_cast<uint32_t>\((\w+)\)\s*\|\s*\(static_cast<uint32_t>\((\w+)\)\s*<<\s*16\)",
                    body)
    if sig is None or len(pairs) != 2 or ret is None:
        raise Refused(f"cvt_e4m3x4: not two {CVT} packed lo | hi << 16", COMMON, line)
    halves = {dst: (lower, upper) for dst, upper, lower in pairs}   # %1 (upper byte), %2 (lower byte)
    if set(halves) != {ret.group(1), ret.group(2)}:
        raise Refused("cvt_e4m3x4: the packed halves are not the cvt results", COMMON, line)
    order = [*halves[ret.group(1)], *halves[ret.group(2)]]
    if sorted(order) != sorted(sig.groups()):
        raise Refused("cvt_e4m3x4: the bytes are not its four parameters", COMMON, line)
    return list(sig.groups()), order


def _kernel(root: Path, params: list[str], order: list[str]) -> tuple[list[int], int]:
    """Which accumulator element each byte of ``pq[..][m]`` holds, and the line of the ``store`` call; the
    qk -> s -> ws -> pq chain, the store/load_b calls and the B arguments checked (Refused else)."""
    k = _text(root, KERNEL)
    flat = re.sub(r"\s+", " ", k)

    def need(pattern: str, what: str) -> re.Match:
        m = re.search(pattern, flat)
        if m is None:
            raise Refused(f"{what} not found", KERNEL, 0)
        return m
    for c in range(4):
        need(rf"s\[m\]\[{c}\] = v{c // 2} \? qk\[m\]\[{c}\] \*", f"s[m][{c}] = .. qk[m][{c}]")
    need(r"float\* o = qk\[m0 \+ mi\]; MmaFp8Result r = mma_fp8_(block_scaled_)?m16n8k32\(av\[0\], av\[1\], av\[2\], "
         r"av\[3\],", "qk[m0 + mi] as an mma_fp8_m16n8k32's D (A: av[0..3])")
    need(r"kv_smem \+ \(size_t\)\(\(m0 \+ mi\) \* 16\) \* L::KV_STRIDE", "A's rows 16 (m0 + mi) ..")
    for c in range(4):
        need(rf"o\[{c}\] = r\.d{c};", f"o[{c}] = r.d{c}")
    ws = {name: int(c) for name, c in re.findall(r"\b(ws\d\d) = s\[m\]\[(\d)\] \*", flat)}
    call = need(r"pq\[0\]\[m\] = cvt_e4m3x4\((\w+), (\w+), (\w+), (\w+)\);", "pq[0][m] = cvt_e4m3x4(..)")
    args = dict(zip(params, call.groups()))
    if not all(a in ws for a in args.values()):
        raise Refused("cvt_e4m3x4's arguments are not the ws.. = s[m][c] weights", KERNEL, 0)
    need(r"StMatrixTransB8Tile<\w+, \w+>::store\([^;]*?, pq\[p\], lane\);", "store(.., pq[p], lane)")
    need(r"StMatrixTransB8Tile<\w+, \w+>::load_b\(pb\[p\], ", "load_b(pb[p], ..)")
    need(r"mma_fp8_m16n8k32\(v\[mt\]\[kt\]\[0\], v\[mt\]\[kt\]\[1\], v\[mt\]\[kt\]\[2\], v\[mt\]\[kt\]\[3\], "
         r"pb\[p\]\[2 \* kt\], pb\[p\]\[2 \* kt \+ 1\],", "pb[p][2 * kt], pb[p][2 * kt + 1] as B of mma_fp8_m16n8k32")
    raw = re.search(r"StMatrixTransB8Tile<\w+,\s*\w+>::store\(", k)
    line = k.count("\n", 0, raw.start()) + 1 if raw else 0
    return [ws[args[p]] for p in order], line


def stsm_items(specs: list, root: Path) -> list[Evaluated]:
    """The stmatrix fragment FlashInfer's fp8 prefill relies on (module docstring); [] when its files are absent."""
    if not all((root / f).is_file() for f in (MEMORY, COMMON, KERNEL)):
        return []
    by_id = {lay.id: lay for lay in specs if isinstance(lay, Layout)}
    spec = in_use_of(by_id, SPEC)
    acc = in_use_of(by_id, "mma.m16n8k32.C.f32")
    b_op = _fp8(by_id, "mma.m16n8k32.B.")
    if spec is None or acc is None or b_op is None:
        return []
    name = "StMatrixTransB8Tile::store (P, an mma_fp8_m16n8k32 accumulator) -> load_b (B of mma_fp8_m16n8k32)"
    params = (("NUM", NUM),)
    try:
        starts, line = _store_rows(root)
        addr_e, at = _load_b(root)
        signature, order = _cvt_bytes(root)
        elem, kline = _kernel(root, signature, order)
    except Refused as refused:
        return [Evaluated(name, "R", refused.file, refused.line, spec, params, error=str(refused))]
    body = _text(root, MEMORY)
    where_b: dict[tuple[int, int], int] = {}      # (candidate, head) -> byte address load_b reads it from
    for lane in range(32):
        env = _lane_env(body, lane, at)
        for i in range(4):                            # b[i]: B register i % 2 of the K step i // 2
            base = evaluate(addr_e, {**env, "i": i}, at)
            for e in range(4):
                # a dense mma operand: every element has an integer (row, col)
                kk, n = cast("tuple[int, int]", b_op.evaluate(lane, 4 * (i % 2) + e))
                where_b[(32 * (i // 2) + int(kk), int(n))] = base + e
    def row(addr: int | None) -> tuple[int, int] | None:
        """(the smallest lane whose 16 bytes hold ``addr``, the byte in them)."""
        hit = [lane for lane in range(32) if addr is not None and starts[lane] <= addr < starts[lane] + 16]
        return (hit[0], addr - starts[hit[0]]) if hit and addr is not None else None
    entries: list[tuple[int, int, int | None, int | None]] = []
    bad = ""
    for lane in range(32):
        for m in range(NUM):
            for e in range(4):
                r, c = cast("tuple[int, int]", acc.evaluate(lane, elem[e]))  # a dense accumulator, as above
                cell = row(where_b.get((16 * m + int(r), int(c))))
                if cell is None:
                    bad = bad or f"lane {lane} register {m} byte {e}: P({16 * m + r}, {c}) is read from no stored row"
                    continue
                entries.append((lane, 4 * m + e, *cell))
    text = (f"P's bytes (cvt_e4m3x4 order {order} of s[m][c], {KERNEL}:{kline}) where load_b ({MEMORY}:{at.line}) "
            f"reads B of mma_fp8_m16n8k32; lane l stores the 16 bytes at its row start (line {line})")
    return [Evaluated(name, "R", MEMORY, line, spec, params, tuple(entries), text, error=bad)]
