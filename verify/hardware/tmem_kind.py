"""The ``tmem`` probe kind: the catalog's Tensor Memory map layouts (``kind = "tmem"``, and the tcgen05.cp
source block) observed on sm_100a through the instructions that write or read Tensor Memory.

Every probe writes coded values, runs one instruction form, reads Tensor Memory back with
``tcgen05.ld.32x32b`` (program text: ``tmem_program``) and decodes each cell or each element to the point of
the layout it stands for:

* ``datapath`` (``tcgen05.datapath.D``/``E``/``F``/``G``): ``tcgen05.mma[.ws].cta_group::1.kind::f16`` with A and
  B in shared memory chosen so that ``D[m][n] = m + 256 n`` (A: column 0 = m, column 1 = 1; B: row 0 = 1, row 1
  = 256 n; exact in f16 and f32); every TMEM cell of the allocation read back is decoded to the (m, n) it
  holds (a cell no element reaches keeps the sentinel) and compared with the layout's inverse.  ``A`` and
  ``B`` (a CTA pair): ``tcgen05.mma.cta_group::2`` in a cluster of two CTAs (a collective allocation, the even
  CTA issuing, a multicast commit), each CTA holding M/2 rows of A and N/2 rows of B (CUTLASS's 2SM split),
  each reading its own Tensor Memory back (lane key ``cta x 128 + lane``).  ``C`` (the sparse-A pair, see below):
  ``tcgen05.mma.sp.cta_group::2.kind::f16``, the same codes through a 2:4 sparse A;
* ``pack_d`` (``tcgen05.packing.D.*``): the same MMA with a 16-bit D, twice (D = m, then D = n: a 16-bit value
  holds no 8192 codes), the lower 16 bits of each word decoded;
* ``st`` (``tcgen05.packing.A.b16.unpacked``): ``tcgen05.st.32x32b.x1.unpack::16b`` of the codes
  ``row x 64 + k`` (k, k + 1 in one register), the lower half of each word decoded;
* ``tmem_a`` (``tcgen05.packing.A.*`` read by the MMA): A written into Tensor Memory with every (lane, column,
  slot) coded (the cell index split over as many runs as the element type's exact small values need), B the
  identity in shared memory, one MMA per K step (``[a_tmem]`` advanced 8 columns): D[m][n] is the A element
  the MMA read as (m, k), decoded to the cell it came from and compared with the layout's map;
* ``sf`` (``tcgen05.sf.*``): ``tcgen05.mma.cta_group::1.kind::mx*.block_scale`` with every scale byte of the
  128 x 4 tile coded as a power of two (lane, then column and byte), A one on one K block: D is the block's
  size times the factor the MMA took for (row, k block), decoded to the byte it came from;
* ``cp`` (``tcgen05.cp.*``, ``tmem_cp``): one probe per copy shape of the catalog,
  ``tcgen05.cp.cta_group::1.<shape>[.<multicast>]`` of a shared-memory block whose bytes code their offset (low
  byte, then high byte + 1), every lane of 8 columns read back, each TMEM byte decoded to the offset it came from
  and compared with the copy layout composed with its source layout (``.32x128b.warpx4``:
  ``tcgen05.cp.source.32x128b``; the others: the descriptor model's K-major block, ``tmem_cp``); ``::01_23``
  also with Mosaic GPU's reading of it (the spec's ``::02_13``).

What the probes assume, stated where a wrong assumption would show (as a contradiction, never a silent pass):
the descriptors' bit fields (CUTLASS's ``UMMA::InstrDescriptor[BlockScaled]`` and ``UMMA::SmemDescriptor``,
as ``tcgen05_scale``), that D of an M = 128 ``cta_group::1`` MMA is read at lane m, column n (Layout D, probed
itself by ``tmem.datapath.tcgen05.datapath.D``) by the ``tmem_a`` and ``sf`` probes, and that an MMA's next K
step of A in Tensor Memory starts 8 columns (32 bytes of each row) further.

The sparse-A pair (``tcgen05.datapath.C``, ``tmem.datapath.tcgen05.datapath.C.N=32,BASE=0|16``) assumes, each
where a wrong guess makes D's codes wrong or misplaced (a contradiction on a GPU, never a pass):

* the operands: ``tcgen05.mma.sp.cta_group::2.kind::f16 [d], a-desc, b-desc, [sp-meta-tmem], idesc, p``
  (PTX 9.7.16.10.9.2 lines 14-16); A is M x K/2 (the compressed values) and B K x N (line 216 of that page:
  "the A matrix is Mx(K/2), the B matrix is KxN"), K = 32 for a sparse kind::f16 MMA of a CTA pair (9.7.16.2
  lines 36-38); A's compressed tile is K-major like the dense probes' (16 f16 per row), B's 32 f16 per row
  (LBO 128, SBO 512 bytes);
* the metadata: 2:4 at the granularity of 4 elements of a row, two 2-bit indices per chunk, ``0b0100`` = the
  elements 0 and 1 kept (9.7.16.10.8.2 lines 10-16: ``0b0100`` is the first valid value).  Every 4-bit group of
  every word of the Tensor Memory columns 64..127 of every lane of both CTAs is ``0b0100`` (addressed at lane
  BASE, the same alignment as D, as 9.7.16.10.8.5 lines 29-33 asks), so where Figure 263 (9.7.16.10.8.4 lines
  19-27, an image only) puts each row's metadata does not matter as long as it lies in those columns; the
  sparsity selector is 0.  Then logical A(m, 4g) = compressed A(m, 2g), A(m, 4g + 1) = compressed A(m, 2g + 1)
  and the rest 0.  Compressed A: column 0 = m, column 1 = 1; B: row 0 = 1, row 1 = 256 n: D[m][n] = m + 256 n
  (as for the dense probes; a misread metadata pairs them with B's zero rows and D reads 0 or another code);
* the instruction descriptor: CUTLASS's ``UMMA::InstrDescriptor`` with the sparse flag at bit 2 (``sparse_flag_``,
  bits 0-1 the selector ``sparse_id2_`` = 0), the PTX pages here giving the descriptor's table only by link;
* which CTA holds which rows: CUTLASS's 2SM split, as the dense pair (CTA c: rows 64c..64c + 63 of A, N/2 rows of
  B); the even CTA issues, both CTAs' Tensor Memory read back (lanes BASE..BASE + 127 are not assumed: every
  lane of columns 0..63 is read and decoded);
* the member: N = 32, the smallest N that Layout B (``tcgen05.datapath.B``, CuTe's 2x2 placement, which CuTe
  4.2's 2x1SM sparse traits allocate D with) also takes, so the observation is compared with both: the result's
  message says whether the device's cells are Layout B's (with its lanes moved by BASE) where they differ from
  Layout C's (``tmem_readback.remark``).

What the read-back words mean (decoding, the SIMULATED device, the violations of a prediction) is
``tmem_readback``'s.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, replace
from typing import Any, Mapping, Sequence

import numpy as np

from ..layout.named import evaluate_all
from . import tcgen05_scale as ts
from . import tmem_cp
from .simdevice import Placement
from .tmem_program import Plan, body, desc, mma_issue

ARCH = "sm_100a"
Key = tuple[int, int]


class NotProbed(ValueError):
    """Why a Tensor Memory layout has no probe (one line)."""


@dataclass(frozen=True)
class TmProbe:
    """One Tensor Memory probe: the program's plan and input, and what each tested layout predicts."""

    id: str
    sub: str                     # datapath | pack_d | st | tmem_a | sf | cp
    text: str                    # the PTX instruction under test
    member: tuple[tuple[str, int], ...]
    plan: Plan
    input: tuple[int, ...]
    predictions: tuple[tuple[str, Mapping[Key, Any]], ...]  # (tested layout id, key -> value); the main first
    expected: tuple[tuple[str, str], ...]  # (tested layout id, "confirmed" | "contradicted")
    how: str
    meta: Mapping[str, Any]

    @property
    def predicted(self) -> Mapping[Key, Any]:
        return self.predictions[0][1]

    @property
    def name(self) -> str:
        import re
        return "probe_" + re.sub(r"[^A-Za-z0-9]+", "_", self.id).strip("_")


# ----------------------------------------------------------------------------- which layouts, which instruction

# The MMA form that writes each data-path layout (the page's table, lines 6-14): text, M.
DATAPATH = {
    "tcgen05.datapath.A": ("tcgen05.mma.cta_group::2.kind::f16", 256),
    "tcgen05.datapath.B": ("tcgen05.mma.cta_group::2.kind::f16", 128),
    "tcgen05.datapath.C": ("tcgen05.mma.sp.cta_group::2.kind::f16", 128),
    "tcgen05.datapath.D": ("tcgen05.mma.cta_group::1.kind::f16", 128),
    "tcgen05.datapath.E": ("tcgen05.mma.ws.cta_group::1.kind::f16", 64),
    "tcgen05.datapath.F": ("tcgen05.mma.cta_group::1.kind::f16", 64),
    "tcgen05.datapath.G": ("tcgen05.mma.ws.cta_group::1.kind::f16", 32),
}
# A in Tensor Memory: the MMA that reads it, the element's exact small values (code bits), 1.0, a block-scaled
# MMA's (format code, scale vector size) or None.
TMEM_A = {
    "tcgen05.packing.A.b16.packed": ("tcgen05.mma.cta_group::1.kind::f16", "f16", 11, 0x3C00, None),
    "tcgen05.packing.A.mxf8f6f4": ("tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.scale_vec::1X", "e4m3", 6,
                                   0x38, (0, 1)),
    "tcgen05.packing.A.mxf4": ("tcgen05.mma.cta_group::1.kind::mxf4.block_scale.scale_vec::2X", "e2m1", 3, 0x2,
                               (1, 2)),
}
CP_SOURCE = "tcgen05.cp.source.32x128b"
CP_COPY = "tcgen05.cp.32x128b.warpx4"  # the copy shape probed with its catalog source block (CP_SOURCE)


def takes(m: Any) -> bool:
    """Whether ``m`` is this kind's (a Tensor Memory map layout, or the source block tcgen05.cp reads)."""
    return m.kind == "tmem" or m.instruction == "tcgen05.cp"


def sub_kind(m: Any) -> str | None:
    b = m.doc_id
    if b.startswith("tcgen05.datapath."):
        return "datapath"
    if b.startswith("tcgen05.packing.D."):
        return "pack_d"
    if b.startswith("tcgen05.packing.A."):
        return "st" if m.instruction == "tcgen05.st" else "tmem_a"
    if b.startswith("tcgen05.sf.A."):  # the sf probe codes the scale factors of A (SFB stays at one)
        return "sf"
    if m.instruction == "tcgen05.cp":
        return "cp"
    return None


def why_not(m: Any) -> str | None:
    """Why no probe of this kind reads ``m`` (None: it has one)."""
    names = [d.name for d in m.outputs]
    if "cta" in names and m.doc_id not in DATAPATH:
        return "a CTA-pair layout (cta_group::2) that no MMA form of the data-path table is known to write"
    sub = sub_kind(m)
    if m.doc_id.startswith("tcgen05.sf.B."):
        return ("the scale factors of B: the sf probe codes the factors of A, with B's held at one (a probe of B's "
                "would code them per copy and N column)")
    if sub is None:
        return "no Tensor Memory probe reads this layout"
    if sub == "datapath" and m.doc_id not in DATAPATH:
        return "no MMA form of the data-path table is known to write it"
    if sub == "tmem_a" and m.doc_id not in TMEM_A:
        return ("the tmem_a probe runs no MMA form that reads A in this packing (TMEM_A: f16, mxf8f6f4 and mxf4; "
                "kind::tf32's K of 8 is not one MMA's N of B as an identity)")
    return None


def _bits(v: float, fmt: str) -> int:
    if fmt == "f16":
        return int(struct.unpack("<H", struct.pack("<e", v))[0])
    raise ValueError(fmt)


def _value(fmt: str, code: int) -> tuple[int, float]:
    """(element bits, value) of a small code in an element type whose codes are exact and distinct."""
    if fmt == "f16":
        return _bits(float(code), "f16"), float(code)
    if fmt == "e4m3":  # bytes 0x00..0x3F: exponent field 0..7
        e, m = code >> 3, code & 7
        return code, (m * 2.0 ** -9 if e == 0 else (1 + m / 8) * 2.0 ** (e - 7))
    if fmt == "e2m1":  # nibbles 0..7
        e, m = code >> 1, code & 1
        return code, (m * 0.5 if e == 0 else (1 + m / 2) * 2.0 ** (e - 1))
    raise ValueError(fmt)


def _kmajor(rows: int, k: int, bits: int, val: Any) -> list[int]:
    """A K-major, no-swizzle tile (8-row x 16-byte core matrices, K chunks 128 bytes apart, 8-row groups 128 x
    chunks bytes apart; ``tcgen05_scale``'s), element (row, k) = ``val(row, k)`` (its bits)."""
    chunks = k * bits // 8 // 16
    words = [0] * (rows * k * bits // 32)
    for r in range(rows):
        for kk in range(k):
            v = val(r, kk)
            if v:
                kb = kk * bits
                bit = 8 * ((r // 8) * 128 * chunks + (kb // 128) * 128 + (r % 8) * 16) + kb % 128
                words[bit // 32] |= v << (bit % 32)
    return words


def _alloc(n: int) -> int:
    return max(32, 1 << (n - 1).bit_length())


def _outs(lay: Any) -> tuple[str, str, str | None]:
    names = [d.name for d in lay.outputs]
    sub = next((n for n in names if n in ("slot", "byte")), None)
    return "tmem_lane", "tmem_col", sub


# ----------------------------------------------------------------------------- predictions

def inverse_cells(lay: Any, cols: int) -> dict[Key, Any]:
    """(lane, column x slots + slot) -> the input point the layout puts there (None: none), over 128 lanes
    (a layout with a ``cta`` output: 128 per CTA, lane ``cta x 128 + lane``) and ``cols`` column-slots."""
    v = evaluate_all(lay.map)
    ln, cn, sn = _outs(lay)
    slots = 1 if sn is None else int(lay.outputs[[d.name for d in lay.outputs].index(sn)].at())
    shape = np.shape(v.ok)
    arr = {k: np.broadcast_to(a, shape) for k, a in v.out.items()}
    ctas = int(lay.outputs[0].at()) if lay.outputs[0].name == "cta" else 1
    out: dict[Key, Any] = {(lane, c): None for lane in range(128 * ctas) for c in range(cols)}
    for idx in np.ndindex(shape):
        if not v.ok[idx]:
            continue
        lane = int(arr[ln][idx]) + (128 * int(arr["cta"][idx]) if ctas > 1 else 0)
        key = (lane, int(arr[cn][idx]) * slots + (0 if sn is None else int(arr[sn][idx])))
        if key in out:
            out[key] = tuple(int(i) for i in idx)
    return out


def forward_cells(lay: Any) -> dict[Key, Any]:
    """(input 0, input 1) -> (lane, column, slot) the layout gives it (None: undefined)."""
    v = evaluate_all(lay.map)
    ln, cn, sn = _outs(lay)
    shape = np.shape(v.ok)
    arr = {k: np.broadcast_to(a, shape) for k, a in v.out.items()}
    return {(int(i), int(j)): ((int(arr[ln][i, j]), int(arr[cn][i, j]), int(arr[sn][i, j]) if sn else 0)
                               if v.ok[i, j] else None) for i, j in np.ndindex(shape)}


def _expect(tested: Sequence[Any], preds: Sequence[tuple[str, Mapping[Key, Any]]]) -> tuple[tuple[str, str], ...]:
    """A doc layout whose correction is tested too and predicts otherwise: expected contradicted."""
    by = dict(preds)
    out = []
    for x in tested:
        fixed = next((y.id for y in tested if y.corrects == x.id), None)  # its correction, tested too
        differs = fixed is not None and fixed in by and by[fixed] != by[x.id]
        out.append((x.id, "contradicted" if differs else "confirmed"))
    return tuple(out)


# ----------------------------------------------------------------------------- building the probes

def member(lay: Any, sub: str) -> list[dict[str, int]]:
    """The members probed: data path: the smallest N that every M's kind::f16 takes (a multiple of 16), each
    BASE; scale factors: every VS; otherwise the layout itself."""
    names = {p.name: p.values for p in lay.params}
    if not names:
        return [{}]
    if sub == "datapath":
        n = min(v for v in names["N"] if v % (32 if lay.doc_id in PAIRED else 16) == 0)
        return [{"N": n, **({"BASE": b} if "BASE" in names else {})} for b in names.get("BASE", [0])]
    if sub == "sf":
        return [{"VS": vs} for vs in names["VS"]]
    return [{p: min(vs) for p, vs in names.items()}]


def build(tested: Sequence[Any], source: Any = None, peers: Sequence[Any] = ()) -> list[TmProbe]:
    """The probes of one Tensor Memory layout (``tested``: the doc layout and its correction where the spec has
    one, the correction first; ``source``: the tcgen05.cp source layout, for a copy layout; ``peers``: the other
    Tensor Memory layouts loaded, where a probe compares with one: ``PAIRED``).  ``NotProbed`` says why none."""
    main = tested[0]
    why = why_not(main)
    if why:
        raise NotProbed(why)
    sub = sub_kind(main)
    assert sub is not None
    out = []
    for env in member(main, sub):
        bound = [x.instance(**env) if x.is_family else x for x in tested]
        tag = "" if not env else "." + ",".join(f"{k}={v}" for k, v in env.items())
        pid = f"tmem.{sub}.{main.doc_id}{tag}"
        probe = _BUILD[sub](pid, bound, tuple(env.items()), source)
        if sub == "cp":
            probe = _cp_other(probe, peers)
        out.append(_with_alt(probe, main.doc_id, env, peers))
    return out


# A layout whose probe also compares the device with another layout's placement (the other statement of it):
# Layout C (the table) with Layout B (CuTe 4.2's 2x1SM sparse allocation, the spec's ``derived`` note).
PAIRED = {"tcgen05.datapath.C": ("tcgen05.datapath.B", "CuTe's 2x2 placement of the 2x1SM sparse MMA")}


def _with_alt(p: TmProbe, b: str, env: Mapping[str, int], peers: Sequence[Any]) -> TmProbe:
    """``p`` with the other placement ``PAIRED`` names for ``b`` (at the same N, its lanes moved by BASE within
    each CTA; a cell moved past lane 127 dropped) in ``meta["alt"]``, or a note that it is not loaded."""
    if b not in PAIRED:
        return p
    other, what = PAIRED[b]
    lay = next((x for x in peers if x.id == other), None)
    if lay is None:
        return replace(p, how=p.how + f" ({other} not loaded: no comparison with {what})")
    n = dict(env)["N"]
    shift = dict(env).get("BASE", 0)
    cells = inverse_cells(lay.instance(N=n) if lay.is_family else lay, p.plan.read[1])
    moved: dict[Key, Any] = {key: None for key in p.predicted}
    for (lane, c), pt in cells.items():
        if pt is not None and lane % 128 + shift < 128:
            moved[(lane + shift, c)] = pt
    return replace(p, meta={**p.meta, "alt": (f"{other}@N={n}", what, moved)})


def placed_as(p: TmProbe) -> Placement:
    """The SIMULATED device that puts D where the other placement of ``p`` (``PAIRED``) does."""
    other, what, cells = p.meta["alt"]
    pred = p.predicted
    empty = next(key for key in sorted(pred) if pred[key] is None)
    where = {pt: key for key, pt in pred.items() if pt is not None}
    table = tuple((key, empty if pt is None else where.get(pt, empty)) for key, pt in sorted(cells.items()))
    return Placement(p.predictions[0][0], (0, 0), (0, 0), table=table, label=f"{other} ({what})")


def _datapath(pid: str, lays: Sequence[Any], env: tuple[tuple[str, int], ...], _src: Any) -> TmProbe:
    main = lays[0]
    text, m = DATAPATH[main.doc_id]
    e = dict(env)
    n, lane0 = e["N"], e.get("BASE", 0)
    if main.inputs[0].at() != m:
        raise NotProbed(f"{main.inputs[0].at()} rows, the MMA form of its table entry has M = {m}")
    ctas = 2 if "cta_group::2" in text else 1
    sparse = ".sp." in text
    kb = 32 if sparse else 16  # B's K (a 16-bit sparse MMA: K = 32, A holds K/2 = 16 compressed values a row)
    cols = _alloc(n)
    read = cols
    fills: tuple[tuple[int, int, int], ...] = ()
    meta = None
    if sparse:  # metadata: 32 columns from column 2 x cols, every nibble 0b0100 (elements 0 and 1 of 4 kept)
        read, cols = 2 * cols, 4 * cols
        fills = ((read, cols - read, META_WORD),)
        meta = f"base + ({lane0}u << 16) + {read}u"
    words: list[int] = []
    for cta in range(ctas):  # a CTA pair: each CTA holds M/2 rows of A and N/2 rows of B (CUTLASS's 2SM split)
        m0, n0 = cta * m // ctas, cta * n // ctas
        a = _kmajor(m // ctas, 16, 16, lambda r, k, m0=m0: _bits(float(m0 + r), "f16") if k == 0 else
                    (0x3C00 if k == 1 else 0))
        b = _kmajor(n // ctas, kb, 16, lambda c, k, n0=n0: 0x3C00 if k == 0 else
                    (_bits(256.0 * (n0 + c), "f16") if k == 1 else 0))
        words += a + b
    idesc = (1 << 4) | ((n >> 3) << 17) | ((m >> 4) << 24)  # D f32, A/B f16, K-major
    if sparse:
        idesc |= 1 << 2  # UMMA::InstrDescriptor sparse_flag_ (bit 2); sparse_id2_ (bits 0-1, the selector) = 0
    a_bytes = len(a) * 4
    setup = (f"  const uint64_t adesc = {desc('sbase', 128, 256)};\n"
             f"  const uint64_t bdesc = {desc(f'sbase + {a_bytes}u', 128, 16 * kb)};")
    issue = mma_issue(text, f"base + ({lane0}u << 16)", "adesc", False, "bdesc", f"{idesc:#x}u", meta=meta)
    plan = Plan(cols, 1, len(a) + len(b), (), (0, read), setup, issue, ctas=ctas, fills=fills)
    preds = tuple((x.id, inverse_cells(x, read)) for x in lays)
    pair = ", a cluster of two CTAs, the even one issuing" if ctas > 1 else ""
    sp = (f", A 2:4 sparse (metadata {META_WORD:#x} in columns {read}..{cols - 1}: elements 0 and 1 of every 4 kept)"
          if sparse else "")
    how = (f"{text} (M = {m}, N = {n}, D at lane {lane0}{pair}{sp}) with D[m][n] = m + 256 n, Tensor Memory read "
           f"back cell by cell")
    return TmProbe(pid, "datapath", text, env, plan, tuple(words), preds, _expect(lays, preds), how,
                   {"cluster": ctas})


META_WORD = 0x44444444  # every 4-bit group 0b0100: indices 0 and 1 (PTX 9.7.16.10.8.2 lines 12-16)


def _pack_d(pid: str, lays: Sequence[Any], env: tuple[tuple[str, int], ...], _src: Any) -> TmProbe:
    main = lays[0]
    m, n = main.inputs[0].at(), main.inputs[1].at()
    text = "tcgen05.mma.cta_group::1.kind::f16"
    one = 0x3C00
    words: list[int] = []
    for e in range(2):  # D = m, then D = n
        words += _kmajor(m, 16, 16, lambda r, k, e=e: (_bits(float(r), "f16") if k == 0 else 0) if e == 0 else
                         (one if k == 1 else 0))
        words += _kmajor(n, 16, 16, lambda c, k, e=e: (one if k == 0 else 0) if e == 0 else
                         (_bits(float(c), "f16") if k == 1 else 0))
    per = len(words) // 2
    a_bytes = m * 32
    idesc = (0 << 4) | ((n >> 3) << 17) | ((m >> 4) << 24)  # D f16
    setup = (f"  const uint64_t adesc = {desc('sbase', 128, 256)};\n"
             f"  const uint64_t bdesc = {desc(f'sbase + {a_bytes}u', 128, 256)};")
    cols = _alloc(n)
    plan = Plan(cols, 2, per, (), (0, cols), setup, mma_issue(text, "base", "adesc", False, "bdesc", f"{idesc:#x}u"))
    preds = tuple((x.id, inverse_cells(x, cols)) for x in lays)
    how = f"{text} with a 16-bit D (M = {m}, N = {n}; D = m, then D = n), the lower half of each word decoded"
    return TmProbe(pid, "pack_d", text, env, plan, tuple(words), preds, _expect(lays, preds), how, {})


def _st(pid: str, lays: Sequence[Any], env: tuple[tuple[str, int], ...], _src: Any) -> TmProbe:
    main = lays[0]
    rows, k = main.inputs[0].at(), main.inputs[1].at()
    if rows != 128 or k % 2:
        raise NotProbed(f"{rows} x {k}: the tcgen05.st probe writes 128 lanes, two elements per register")
    text = "tcgen05.st.sync.aligned.32x32b.x1.unpack::16b.b32"
    issue = (f"    for (uint32_t j = 0; j < {k // 2}u; ++j) {{\n"
             f"      const uint32_t code = (uint32_t)t * {k}u + 2u * j;\n"
             f'      asm volatile("{text} [%0], {{%1}};" :: "r"(base + lanes + 2u * j), "r"(code | ((code + 1u) << 16)) : "memory");\n'
             f"    }}")
    cols = _alloc(k)
    plan = Plan(cols, 1, 0, (), (0, cols), issue_all=issue)
    preds = tuple((x.id, inverse_cells(x, cols)) for x in lays)
    how = f"{text} of the codes row x {k} + k (k, k + 1 in one register), the lower half of each word decoded"
    return TmProbe(pid, "st", text, env, plan, (), preds, _expect(lays, preds), how, {"k": k})


def _tmem_a(pid: str, lays: Sequence[Any], env: tuple[tuple[str, int], ...], _src: Any) -> TmProbe:
    main = lays[0]
    text, fmt, cbits, one, scaled = TMEM_A[main.doc_id]
    ln, cn, sn = _outs(main)
    outs = {d.name: int(d.at()) for d in main.outputs}
    acols, slots = outs[cn], outs.get(sn, 1) if sn else 1
    ebits = 32 // slots
    kk = 256 // ebits  # one MMA's K: 32 bytes of a row
    steps = main.inputs[1].at() // kk
    n = kk  # B the K x K identity
    index_bits = (128 * acols * slots - 1).bit_length()
    runs = -(-index_bits // cbits)
    d0, sfa, sfb = 128, 32, 64
    cols = _alloc(d0 + steps * n)
    b = _kmajor(n, kk, ebits, lambda c, k: one if c == k else 0)
    images: list[int] = []
    for r in range(runs):  # TMEM A: (lane, column) words, slot s holds bits r of the cell index
        for lane in range(128):
            for c in range(acols):
                w = 0
                for s in range(slots):
                    code = (((lane * acols + c) * slots + s) >> (cbits * r)) & ((1 << cbits) - 1)
                    w |= _value(fmt, code)[0] << (ebits * s)
                images.append(w)
    image_segs = [(0, acols)] + ([(sfa, 4), (sfb, 4)] if scaled else [])
    ones = [0x7F7F7F7F] * (runs * 128 * 4) if scaled else []  # every scale factor 1.0 (ue8m0)
    # the input: [smem of each run][A images][SFA images][SFB images]
    inp = b * runs + images + ones + ones
    if scaled:
        f = scaled[0]
        idesc = (f << 7) | (f << 10) | ((n >> 3) << 17) | (1 << 23) | ((128 >> 4) << 24)
        sf: tuple[str, str] | None = (f"base + {sfa}u", f"base + {sfb}u")
    else:
        idesc = (1 << 4) | ((n >> 3) << 17) | ((128 >> 4) << 24)
        sf = None
    issue = "\n".join(mma_issue(text, f"base + {d0 + j * n}u", f"base + {8 * j}u", True, "bdesc",
                                f"{idesc:#x}u", sf) for j in range(steps))
    setup = f"  const uint64_t bdesc = {desc('sbase', 128, 256)};"
    plan = Plan(cols, runs, len(b), tuple(image_segs), (d0, steps * n), setup, issue)
    preds = tuple((x.id, forward_cells(x)) for x in lays)
    how = (f"{text} with A in Tensor Memory (every cell coded, {runs} runs) and B the identity: each D element "
           "decoded to the A cell the MMA read")
    return TmProbe(pid, "tmem_a", text, env, plan, tuple(inp), preds, _expect(lays, preds), how,
                   {"fmt": fmt, "cbits": cbits, "runs": runs, "acols": acols, "slots": slots, "n": n, "steps": steps})


def _sf(pid: str, lays: Sequence[Any], env: tuple[tuple[str, int], ...], _src: Any) -> TmProbe:
    main = lays[0]
    vs = dict(env)["VS"]
    kind, ab, k, fmt = ts.KINDS[vs]
    bits = 8 if ab == "e4m3" else 4
    bs = k // vs
    blocks = main.inputs[1].at()
    pred = forward_cells(main)
    sfa_ids = []
    for kb in range(blocks):  # the SFA_ID the layout has the MMA of block kb issued with
        cell = pred[(0, kb)]
        sfa_ids.append(0 if cell is None else cell[2] - kb % vs)
    if any(not 0 <= s < 4 for s in sfa_ids):
        raise NotProbed(f"the SFA_IDs it implies ({sfa_ids}) are not 0..3")
    text = f"tcgen05.mma.cta_group::1.kind::{kind}.block_scale.scale_vec::{vs}X"
    smem: list[int] = []
    sfa_img: list[int] = []
    for c in range(2):  # coding 0: byte = 64 + lane; coding 1: byte = 127 + 4 column + byte
        for kb in range(blocks):
            v = kb % vs
            smem += ts._tile(128, k, bits, ts._in_k_block(bs, v)) + ts._tile(16, k, bits, lambda r, kk: True)
            for lane in range(128):
                for col in range(4):
                    sfa_img.append(sum(((64 + lane) if c == 0 else (127 + 4 * col + j)) << (8 * j) for j in range(4)))
    per = len(smem) // (2 * blocks)
    a_bytes = 128 * k * bits // 8
    chunks = k * bits // 8 // 16
    ids = [(fmt << 7) | (fmt << 10) | ((16 >> 3) << 17) | (1 << 23) | ((128 >> 4) << 24) | (s << 29) for s in sfa_ids]
    setup = (f"  const uint64_t adesc = {desc('sbase', 128, 128 * chunks)};\n"
             f"  const uint64_t bdesc = {desc(f'sbase + {a_bytes}u', 128, 128 * chunks)};\n"
             f"  const uint32_t idescs[{blocks}] = {{{', '.join(f'{i:#x}u' for i in ids)}}};")
    issue = mma_issue(text, "base", "adesc", False, "bdesc", f"idescs[e % {blocks}]", ("base + 32u", "base + 64u"))
    e = 2 * blocks
    plan = Plan(128, e, per, ((32, 4), (64, 4)), (0, 16), setup, issue)
    inp = smem + sfa_img + [0x7F7F7F7F] * (e * 128 * 4)
    preds = tuple((x.id, forward_cells(x)) for x in lays)
    how = (f"{text} with every scale byte coded (a power of two) and A one on one K block (SFA_IDs {sfa_ids}): "
           "D decoded to the scale byte the MMA took for (row, k block)")
    return TmProbe(pid, "sf", text, env, plan, tuple(inp), preds, _expect(lays, preds), how,
                   {"bs": bs, "blocks": blocks})


def _cp(pid: str, lays: Sequence[Any], env: tuple[tuple[str, int], ...], src: Any) -> TmProbe:
    """A copy shape's probe (``tmem_cp``): the coded block, the copy, every lane of 8 columns read back."""
    cps = [x for x in lays if x.kind == "tmem"]
    if not cps:
        raise NotProbed("no copy layout of tcgen05.cp is loaded (only its source)")
    main = cps[0]
    text = tmem_cp.ptx(main.doc_id)
    if main.doc_id == CP_COPY:
        if src is None:
            raise NotProbed(f"the {CP_SOURCE} layout it copies from is not loaded")
        span, back = tmem_cp.source_offsets(src)
        sbo = tmem_cp.LBO
        block = f"the {span}-byte block {CP_SOURCE} states"
        offset = tmem_cp.looked_up(back)
    else:
        rows, row_bytes = tmem_cp.shape_of(main)
        span, sbo, offset = tmem_cp.block(rows, row_bytes)
        block = (f"a {span}-byte block of {rows} rows x {row_bytes} bytes (K-major core matrices, LBO "
                 f"{tmem_cp.LBO}, SBO {sbo})")
    read = tmem_cp.READ_COLS
    setup = f"  const uint64_t sdesc = {desc('sbase', tmem_cp.LBO, sbo)};"
    issue = f'      asm volatile("{text} [%0], %1;" :: "r"(base), "l"(sdesc) : "memory");'
    plan = Plan(tmem_cp.ALLOC, 2, span // 4, (), (0, read), setup, issue)
    preds = []
    for x in lays:
        if x.kind == "tmem":
            preds.append((x.id, tmem_cp.cells(inverse_cells(x, read * 4), offset)))
        else:  # the source layout: the copy composed with it
            _span, xb = tmem_cp.source_offsets(x)
            preds.append((x.id, tmem_cp.cells(inverse_cells(main, read * 4), tmem_cp.looked_up(xb))))
    how = (f"{text} of {block} whose bytes code their offset, every lane of {read} columns read back and each "
           "Tensor Memory byte decoded")
    return TmProbe(pid, "cp", text, env, plan, tuple(tmem_cp.words(span)), tuple(preds), _expect(lays, preds), how,
                   {"read": read, "span": span})


def _cp_other(p: TmProbe, peers: Sequence[Any]) -> TmProbe:
    """``p`` with the other reading ``tmem_cp.OTHER_READING`` names for its copy layout in ``meta["alt"]`` (as
    ``_with_alt``), or a note that it is not loaded."""
    first = p.predictions[0][0]  # the id of the copy layout it tests first (its doc layout's, or its correction's)
    other, what, lay = tmem_cp.other_reading(next((x.doc_id for x in peers if x.id == first), first), peers)
    if not other:
        return p
    if lay is None:
        return replace(p, how=p.how + f" ({other} not loaded: no comparison with {what})")
    _span, _sbo, offset = tmem_cp.block(*tmem_cp.shape_of(lay))
    cells = tmem_cp.cells(inverse_cells(lay, p.plan.read[1] * 4), offset)
    return replace(p, meta={**p.meta, "alt": (other, what, cells)})


_BUILD = {"datapath": _datapath, "pack_d": _pack_d, "st": _st, "tmem_a": _tmem_a, "sf": _sf, "cp": _cp}


def source(p: TmProbe) -> str:
    """The kernel body of ``p`` (``catalog_probes.make_probe`` wraps it in a kernel and a host program)."""
    return body(p.plan)


__all__ = ["ARCH", "NotProbed", "PAIRED", "TmProbe", "build", "placed_as", "source", "sub_kind", "takes",
           "why_not"]
