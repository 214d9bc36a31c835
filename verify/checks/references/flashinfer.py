"""The FlashInfer reference: the scale-factor fragments of FlashInfer's sm_120 block-scaled ``mma``, read as text.

FlashInfer (``pip install --no-deps flashinfer-python==0.7.4``; the package needs torch, its CUDA headers ship
inside it under ``flashinfer/data``) drives ``mma.sync ... .block_scale`` on sm_120 in its sparse-MLA attention
with hand-written CUDA: which row of the scale tensor each lane loads into ``scale-a-data`` and which column into
``scale-b-data``, and the selector immediates of the instruction.  Nothing is compiled or run: the files are read
as text, each statement found by its text (a pattern below, with its file and line), its integer expressions
evaluated by ``cexpr`` (C semantics, a closed subset).

* ``arch/mma_sm120.cuh``, ``mma_fp8_block_scaled_m16n8k32`` (``kind::mxf8f6f4.block_scale.scale_vec::1X
  .m16n8k32 ... .ue8m0``) and ``arch/mma_sm120_nvfp4.cuh``, ``mma_nvfp4_block_scaled_m16n8k64`` (``kind::mxf4nvf4
  .block_scale.scale_vec::4X.m16n8k64 ... .ue4m3``): the ``"n"`` immediates after each scale operand are its
  ``{byte-id, thread-id}`` (the PTX operand order);
* ``compute/warp_tiles.cuh``, ``qk_fp8_nope_16x8`` (1X): ``sfa`` is the factor of row ``gid + (lane & 1) * 8``
  (``q_sc[(ROW) * KV::NUM_SCALES + blk]``, one byte: the MMA's one K block), ``sfb`` of column ``gid``
  (``k_sc + COL * SCALE_STRIDE``); ``qk_nvfp4_nope_16x8`` (4X): ``scale_row = ...`` and four bytes of K blocks
  ``kt * 4 ..`` (byte j: the MMA's j-th K block), ``scale_b`` of column ``gid`` (``(cand + COL) * K_SCALE_STRIDE``);
  ``gid`` and ``tid`` as each function declares them.

Which lanes of a quad (thread-id) and which bytes of the register (byte-id) an instruction reads are the doc's
text (as for CuTe's block-scale traits, ``references.cute``); what FlashInfer states is which row (SFA) or
column (SFB) each lane holds and which K block each byte is.  Each is compared with the spec member of
FlashInfer's selector values (``mma.block_scale.m16n8k32.SF[AB].ue8m0``, ``m16n8k64.SF[AB].ue4m3``).
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path

from ...layout.corrections import in_use_of
from ...layout.model import Layout
from ..crosscheck import CrosscheckReport
from ..fragment import DEFAULT_TIMEOUT
from . import flashinfer_blockwise, flashinfer_cp, flashinfer_desc, flashinfer_ldsm, flashinfer_mxf4, flashinfer_stsm, rasters
from .cexpr import Where, evaluate, function_text, strip_comments
from .common import Evaluated, conform_rows, located, version_of
from .pyfunc import Refused

NAME = "flashinfer"
VERSION = "0.7.4"
DIST = "flashinfer-python"
DATA = "flashinfer/data"
INSTALL = (f"pip install --no-deps {DIST}=={VERSION} (its CUDA headers are read as text; FlashInfer itself needs "
           "torch)")
SM120 = "include/flashinfer/attention/sparse_mla_sm120"


@dataclass(frozen=True)
class ScaleMma:
    """One block-scaled mma wrapper and the function of warp_tiles.cuh that feeds it its scale factors."""

    shape: str               # m16n8k32
    sf: str                  # ue8m0
    wrapper_file: str
    wrapper: str             # the __device__ function issuing the instruction
    instruction: str         # its PTX text, as the asm string spells it
    caller: str              # the warp_tiles.cuh function loading the factors
    sfa: str                 # a pattern whose group ``e`` is the row SFA's lane holds
    sfb: str                 # a pattern whose group ``e`` is the column SFB's lane holds
    bytes: int               # K blocks per register (1X: one byte; 4X: four)


MMAS = (
    ScaleMma("m16n8k32", "ue8m0", f"{SM120}/arch/mma_sm120.cuh", "mma_fp8_block_scaled_m16n8k32",
             "mma.sync.aligned.kind::mxf8f6f4.block_scale.scale_vec::1X.m16n8k32",
             "qk_fp8_nope_16x8", r"q_sc\[\((?P<e>[^\[\]]*?)\)\s*\*\s*KV::NUM_SCALES\s*\+\s*blk\]",
             r"qk_k_scale_selector<KV>\(\s*k_sc\s*\+\s*(?P<e>[^,]*?)\s*\*\s*SCALE_STRIDE\s*,\s*blk\s*\)", 1),
    ScaleMma("m16n8k64", "ue4m3", f"{SM120}/arch/mma_sm120_nvfp4.cuh", "mma_nvfp4_block_scaled_m16n8k64",
             "mma.sync.aligned.kind::mxf4nvf4.block_scale.scale_vec::4X.m16n8k64",
             "qk_nvfp4_nope_16x8", r"const\s+int\s+scale_row\s*=\s*(?P<e>[^;]*);",
             r"k_sc\s*\+\s*\(size_t\)\(cand\s*\+\s*(?P<e>[^)]*)\)\s*\*\s*K_SCALE_STRIDE\s*\+\s*kt\s*\*\s*4", 4),
)
WARP_TILES = f"{SM120}/compute/warp_tiles.cuh"
_SELECTOR = r'"n"\(static_cast<uint16_t>\((\d+)\)\)'


def root() -> Path | None:
    """The installed ``flashinfer/data`` directory (through the distribution's metadata; nothing imported)."""
    where = located(DIST, DATA)
    return where if where is not None and where.is_dir() else None


def version() -> str:
    return version_of(DIST)


def probe() -> str:
    r = root()
    if r is None or not all((r / f).is_file() for f in (WARP_TILES, *(m.wrapper_file for m in MMAS))):
        return f"no FlashInfer headers: {INSTALL}"
    return ""


def read(path: Path, rel: str) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError as e:
        raise Refused(e.strerror or "cannot read", rel, 0) from None


def found(pattern: str, text: str, line: int, rel: str, what: str) -> tuple[str, Where]:
    """Group ``e`` of the only match of ``pattern`` in ``text`` (which starts at ``line``), with its position."""
    ms = list(re.finditer(pattern, text))
    if len(ms) != 1:
        raise Refused(f"{what}: {len(ms)} matches of {pattern!r} (one expected)", rel, line)
    m = ms[0]
    at = text.count("\n", 0, m.start("e"))
    col = m.start("e") - (text.rfind("\n", 0, m.start("e")) + 1)
    return m.group("e"), Where(rel, line + at, col)


def _lane_names(text: str, line: int, rel: str, lane: int) -> dict[str, int]:
    """``lane`` and the ``gid``/``tid`` the function declares from it."""
    env = {"lane": lane}
    for name in ("gid", "tid"):
        ms = list(re.finditer(r"\b" + name + r"\s*=\s*(?P<e>lane\s*(?:>>|&)\s*\d+)", text))
        if ms:
            m = ms[0]
            env[name] = evaluate(m.group("e"), env, Where(rel, line + text.count("\n", 0, m.start()), 0))
    return env


def selectors(r: Path, mma: ScaleMma) -> tuple[tuple[int, int], tuple[int, int], int]:
    """The wrapper's ``{byte-id, thread-id}`` for A and B and the line of its instruction."""
    text = strip_comments(read(r / mma.wrapper_file, mma.wrapper_file))
    body, line = function_text(text, mma.wrapper, mma.wrapper_file)
    flat = re.sub(r'"\s*"', "", body)          # the asm string's adjacent literals joined
    if mma.instruction not in flat:
        raise Refused(f"{mma.wrapper}: no {mma.instruction}", mma.wrapper_file, line)
    ms = re.findall(r'"r"\([^)]*scale_a\)*\s*,\s*' + _SELECTOR + r"\s*,\s*" + _SELECTOR + r'\s*,\s*"r"\([^)]*scale_b\)*'
                    r"\s*,\s*" + _SELECTOR + r"\s*,\s*" + _SELECTOR, body)
    if len(ms) != 1:
        raise Refused(f"{mma.wrapper}: the scale operands' immediates not found", mma.wrapper_file, line)
    ba, ta, bb, tb = (int(x) for x in ms[0])
    return (ba, ta), (bb, tb), line


def entries(r: Path, mma: ScaleMma, part: str, spec: Layout, byte_id: int, thread_id: int
            ) -> tuple[tuple[tuple[int, int, int | None, int | None], ...], int, str]:
    """(lane, byte, row, col) of SFA or SFB as FlashInfer loads them: byte j of the register holds the factor of
    the MMA's j-th K block (a ``uint8_t`` factor, 1X: byte 0; four bytes, 4X) of the lane's row (SFA) or column
    (SFB), on the lanes the thread-id selector picks (the doc's rule); the line and text of the statement read.
    Which byte the instruction reads (byte-id) is the spec member's, so a byte-id FlashInfer did not fill is a
    difference."""
    text = strip_comments(read(r / WARP_TILES, WARP_TILES))
    body, line = function_text(text, mma.caller, WARP_TILES)
    expr, at = found(mma.sfa if part == "SFA" else mma.sfb, body, line, WARP_TILES, f"{mma.caller} {part}")
    out: list[tuple[int, int, int | None, int | None]] = []
    for lane in range(32):
        value = evaluate(expr, _lane_names(body, line, WARP_TILES, lane), at)
        picked = (lane % 4) >> 1 == thread_id if part == "SFA" else lane % 4 == thread_id
        for i in range(spec.n_elements):
            if picked and i < mma.bytes:
                out.append((lane, i, value, i) if part == "SFA" else (lane, i, i, value))
            else:
                out.append((lane, i, None, None))
    return tuple(out), at.line, expr.strip()


def evaluate_default(specs: list, timeout: float = DEFAULT_TIMEOUT, path: str | Path | None = None
                     ) -> CrosscheckReport:
    """The installed FlashInfer's headers (or ``path``: a ``flashinfer/data`` directory)."""
    t0 = time.perf_counter()
    r = Path(path) if path is not None else root()
    if r is None or not r.is_dir():
        raise FileNotFoundError(f"no FlashInfer headers: {INSTALL}")
    lays = {lay.id: lay for lay in specs if isinstance(lay, Layout)}
    items: list[Evaluated] = []
    for mma in MMAS:
        try:
            (ba, ta), (bb, tb), wline = selectors(r, mma)
        except Refused as e:
            for part in ("SFA", "SFB"):
                spec = _spec(lays, mma, part)
                if spec is not None:
                    items.append(Evaluated(mma.wrapper, part, mma.wrapper_file, e.line, spec, error=str(e)))
            continue
        for part, (byte_id, thread_id) in (("SFA", (ba, ta)), ("SFB", (bb, tb))):
            spec = _spec(lays, mma, part)
            if spec is None:
                continue
            names = {p.name for p in spec.params}
            x = part[-1]
            params = tuple(sorted(((k, v) for k, v in ((f"THREAD_ID_{x}", thread_id), (f"BYTE_ID_{x}", byte_id))
                                   if k in names)))
            label = f"{mma.caller} -> {mma.wrapper} ({part}: byte-id {byte_id}, thread-id {thread_id})"
            try:
                ents, line, text = entries(r, mma, part, spec, byte_id, thread_id)
            except Refused as e:
                items.append(Evaluated(label, part, WARP_TILES, e.line, spec, params, error=str(e)))
                continue
            items.append(Evaluated(label, part, WARP_TILES, line, spec, params, ents,
                                   f"{'row' if part == 'SFA' else 'col'} = {text}"))
    items.extend(flashinfer_ldsm.ldsm_items(specs, r))   # the sm_100 8-bit ldmatrix/stmatrix its fp8 prefill relies on
    items.extend(flashinfer_stsm.stsm_items(specs, r))
    if path is None:   # _compute_pid (rasters.py), its MXFP4 indexer's 2X MMA (flashinfer_mxf4.py)
        items.extend(rasters.flashinfer_items(specs))
        items.extend(flashinfer_mxf4.mxf4_items(specs))
        items.extend(flashinfer_desc.swizzle_items(specs))   # the descriptor's swizzle codes (flashinfer_desc.py)
        items.extend(flashinfer_blockwise.blockwise_items(specs))   # its SM107 GEMM's fp32 scales (flashinfer_blockwise.py)
        items.extend(flashinfer_cp.cp_items(specs))   # its MLA decode's tcgen05.cp ::02_13 of Q (flashinfer_cp.py)
    rows = conform_rows(items, timeout)
    where = f"flashinfer-python {version()}" if path is None else f"FlashInfer headers in {Path(path).name}"
    return CrosscheckReport(where, (WARP_TILES, *(m.wrapper_file for m in MMAS)), tuple(rows), {},
                            time.perf_counter() - t0, NAME, "FlashInfer sm_120 block-scaled mma scale factors")


def _spec(lays: dict, mma: ScaleMma, part: str) -> Layout | None:
    lid = f"mma.block_scale.{mma.shape}.{part}.{mma.sf}"
    if lid not in lays:
        return None
    return in_use_of(lays, lid)
