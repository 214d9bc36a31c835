"""CuTe's Tensor Memory allocators, compiled host-only for ``cute``: the data paths, packings and scale factors as maps.

``UMMA::tmem_frg`` and ``tmem_frg_ws`` for each data path (9.7.16.10.5) and packing (9.7.16.10.4), and
``UMMA::tmem_sf_frg`` for A's scale factors (``tcgen05.sf.A.4x1``, 9.7.16.10.7): the requests the program
evaluates (``tmem_requests``, ``sf_tmem_requests``) and what it printed read as the spec's map
(``datapath_layout``, ``sf_tmem_layout``); ``cute.evaluate`` asks for them and dispatches to them.
``SF_TMEM_KINDS`` (the scale-factor type and ``SFVecSize`` of each ``VS``) is also what ``cute_sfb`` and
``cute_sfid`` are given.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np

from ...layout.corrections import in_use_of
from ...layout.notations import NotationError
from ...layout.notations.cute_compiled import Printed, Request
from .common import Evaluated
from .cute_sfb import eval_layout, sf_cells


# Tensor Memory data paths (9.7.16.10.5) and the CuTe allocator that lays an accumulator out that way:
# (spec id, allocator, rows per CTA).  Two CTAs split the rows: CTA row // rows-per-CTA holds row % it.
DATAPATHS = (
    ("tcgen05.datapath.A", "UMMA::tmem_frg<float, uint32_t, 2>", 128),
    ("tcgen05.datapath.B", "UMMA::tmem_frg<float, uint32_t, 2>", 64),
    # Layout C (M = 128, cta_group::2, sparse A): CuTe's 2x1SM sparse traits allocate D with tmem_frg_2sm
    # (FrgTypeC of SM100_MMA_{F16BF16,TF32}_2x1SM_SS_SPARSE), M_MMA = 64 per CTA: the 2x2 atom of Layout B.
    # CuTe has no 2-SM allocator for the table's "4x1, 1/2 datapath"; the row says how they differ.
    ("tcgen05.datapath.C", "UMMA::tmem_frg<float, uint32_t, 2>", 64),
    ("tcgen05.datapath.D", "UMMA::tmem_frg<float, uint32_t, 1>", 128),
    ("tcgen05.datapath.E", "UMMA::tmem_frg_ws<float, uint32_t, 1>", 64),
    ("tcgen05.datapath.F", "UMMA::tmem_frg<float, uint32_t, 1>", 64),
    ("tcgen05.datapath.G", "UMMA::tmem_frg_ws<float, uint32_t, 1>", 32),
)
# A data path compared with the allocator of one MMA's traits (not the allocator's own shape): that trait, named in
# the rows and pointed at by their header line (its FrgTypeC).
DATAPATH_USE = {"tcgen05.datapath.C": "SM100_MMA_F16BF16_2x1SM_SS_SPARSE"}
_LANE_SHIFT = 16   # CuTe's TMEM::DP<32-bit>: a lane is 2^16 column addresses
# Tensor Memory packings (9.7.16.10.4): (spec id, CuTe's allocator for it, M, K, element bits, what uses it)
PACKINGS = (
    ("tcgen05.packing.D.b16.unpacked", "UMMA::tmem_frg<half_t, uint32_t, 1>", 128, 64, 16,
     "FrgTypeC = UMMA::tmem_frg_1sm<c_type>"),
    ("tcgen05.packing.A.b16.packed", "UMMA::tmem_frg<half_t, half_t, 1, UMMA::TmemAllocMode::NonInterleaved>",
     128, 64, 16, "FrgTypeA = UMMA::tmem_frg_1sm<a_type, a_type, UMMA::TmemAllocMode::NonInterleaved>"),
    ("tcgen05.packing.A.mxf8f6f4",
     "UMMA::tmem_frg<float_e4m3_t, float_e4m3_t, 1, UMMA::TmemAllocMode::NonInterleaved>", 128, 128, 8,
     "FrgTypeA = UMMA::tmem_frg_1sm<a_type, a_type, UMMA::TmemAllocMode::NonInterleaved>"),
)


def _preferred_map(maps: list, spec_id: str) -> Any:
    return in_use_of({m.id: m for m in maps}, spec_id)


def tmem_requests(root: Path, maps: list) -> list[Request]:
    """One request per data path and ``N`` of its spec (``BASE`` = 0: the allocator's own alignment)."""
    header = "cute/atom/mma_traits_sm100.hpp"
    try:
        text = (Path(root) / header).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    out = []
    for spec_id, frg, m_sm in DATAPATHS:
        spec = _preferred_map(maps, spec_id)
        if spec is None:
            continue
        struct = "struct tmem_frg_ws " if "_ws" in frg else "struct tmem_frg "
        at = text.find(struct)
        use = DATAPATH_USE.get(spec_id, "")
        if use:   # the FrgTypeC line of the trait that chooses the allocator
            trait = text.find(f"struct MMA_Traits<{use}<")
            at = text.find("using FrgTypeC", trait) if trait >= 0 else -1
        line = text.count("\n", 0, at) + 1 if at >= 0 else 0
        for n in dict((p.name, p.values) for p in spec.params).get("N", ()):
            out.append(Request("tmem", f"{frg} M={m_sm} N={n} b=32{f' for {use}' if use else ''} [{spec.id}]",
                               f"{frg}, {m_sm}, {n}", header, line))
    for spec_id, frg, m, k, bits, use in PACKINGS:
        spec = _preferred_map(maps, spec_id)
        if spec is None:
            continue
        at = text.find(use)
        line = text.count("\n", 0, at) + 1 if at >= 0 else 0
        out.append(Request("tmem", f"{frg} M={m} N={k} b={bits} [{spec.id}]", f"{frg}, {m}, {k}", header, line))
    return out


def datapath_layout(req: Request, p: Printed, maps: list) -> Evaluated:
    """CuTe's Tensor Memory allocation ((M, N) -> address in elements; a lane is 2^16 32-bit columns, so
    2^16 * 32 / bits elements) as the spec's map (row, col) -> ([cta,] tmem_lane, tmem_col[, slot]): the
    element's 32-bit column and its place in it (``slot``, for packed sub-word elements)."""
    spec_id = req.name.rsplit("[", 1)[1].rstrip("]")
    spec = _preferred_map(maps, spec_id)
    m_sm, n, bits = (int(x) for x in re.findall(r"M=(\d+) N=(\d+) b=(\d+)", req.name)[0])
    names_p = {q.name for q in spec.params}
    params = tuple(sorted({**({"N": n} if "N" in names_p else {}), **({"BASE": 0} if "BASE" in names_p else {})}
                          .items()))
    text = f"{req.instance.split(',')[0]}::make(((M={m_sm}, N={n}),1,1)) = {p.raw.get('Layout', ('?', 0))[0]}"
    try:
        lay = p.layout("Layout")
        member = spec.instance(**dict(params))
        rows_total = member.inputs[0].size
        names = [d.name for d in member.outputs]
        r = np.arange(rows_total, dtype=np.int64)[:, None]
        c = np.arange(n, dtype=np.int64)[None, :]
        addr = eval_layout(lay, (r % m_sm) + m_sm * c)
        per = 32 // bits
        lane_size = (1 << _LANE_SHIFT) * per
        vals = {"cta": np.broadcast_to(r // m_sm, addr.shape), "tmem_lane": addr // lane_size,
                "tmem_col": (addr % lane_size) // per, "slot": (addr % lane_size) % per}
        rows = tuple((int(i), int(j), *(int(vals[k][i, j]) for k in names))
                     for i in range(rows_total) for j in range(n))
    except (NotationError, KeyError) as e:
        return Evaluated(req.name, "", req.header, req.line, spec, params, text=text,
                         error=e.message if isinstance(e, NotationError) else str(e))
    return Evaluated(req.name.split(" [")[0], "", req.header, req.line, spec, params, text=text, map_rows=rows)


# Block-scale factors of tcgen05.mma in Tensor Memory (9.7.16.10.7): CuTe's allocator for scale_A
# (FrgTypeSFA = UMMA::tmem_sf_frg<sf_type, SFVecSize, 1, true> of the 1SM block-scaled traits; the 4x1 data path,
# M = 128), for each .scale_vec::VSX the spec's VS names (VS scale factors per MMA: CuTe's NSF), at the scale-factor
# type and SFVecSize (K elements per scale factor, MMA K = VS * SFVecSize) of the kind that uses it: 1X
# .kind::mxf8f6f4 (K = 32), 2X .kind::mxf4 (K = 64), 4X .kind::mxf4nvf4 (K = 64, ue4m3 scales).
SF_TMEM_SPEC = "tcgen05.sf.A.4x1"
SF_TMEM_FRG = "UMMA::tmem_sf_frg<"
SF_TMEM_M = 128
SF_TMEM_KINDS = {1: ("cutlass::float_ue8m0_t", 32), 2: ("cutlass::float_ue8m0_t", 32),
                 4: ("cutlass::float_ue4m3_t", 16)}
SF_REPLICAS = 4         # CuTe's REP: the factors are duplicated to the 4 lane quarters


def sf_tmem_requests(root: Path, maps: list) -> list[Request]:
    """One request per VS of ``tcgen05.sf.A.4x1``: CuTe's allocation of one 128 x 4 scale-factor tile, i.e.
    ``make(((M, (SFVecSize, VS)), 1, 4 / VS))`` (the tile's 4 K blocks are 4 / VS MMAs of VS factors each), at
    the header line of the 4x1 atom."""
    header = "cute/atom/mma_traits_sm100.hpp"
    spec = _preferred_map(maps, SF_TMEM_SPEC)
    if spec is None:
        return []
    try:
        text = (Path(root) / header).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    at = text.find("struct tmem_sf_frg")
    atom = text.find("auto tmem_atom", at) if at >= 0 else -1
    line = text.count("\n", 0, atom if atom >= 0 else at) + 1 if at >= 0 else 0
    out = []
    for vs in dict((q.name, q.values) for q in spec.params).get("VS", ()):
        blocks = next((int(d.size) for d in spec.instance(VS=vs).inputs if d.name == "kb"), 0)
        if vs not in SF_TMEM_KINDS or not blocks or blocks % vs:
            continue
        sf_type, sfv = SF_TMEM_KINDS[vs]
        frg = f"UMMA::tmem_sf_frg<{sf_type}, {sfv}, 1, true>"
        expr = (f"{frg}::make(make_shape(make_shape(Int<{SF_TMEM_M}>{{}}, make_shape(Int<{sfv}>{{}}, Int<{vs}>{{}})), "
                f"Int<1>{{}}, Int<{blocks // vs}>{{}})).layout()")
        out.append(Request("expr", f"{frg} M={SF_TMEM_M} NSF={vs} MMAs={blocks // vs} [{spec.id}]", expr, header, line))
    return out


def sf_tmem_layout(req: Request, p: Printed, maps: list) -> Evaluated:
    """CuTe's scale-factor allocation as the spec's map (row, kb) -> (tmem_lane, tmem_col, byte).

    CuTe prints ``((((32,M/32),REP),(SFVecSize,NSF)),1,MMAs)`` -> TMEM address in scale-factor elements (8-bit):
    a lane is 2^16 32-bit columns, 2^18 elements, so element address ``a`` is lane ``a / 2^18``, 32-bit column
    ``a % 2^18 / 4``, byte ``a % 4``.  K block ``kb`` of the tile is factor ``kb % NSF`` of MMA ``kb / NSF``; every
    one of its SFVecSize elements must have the one address.  CuTe holds REP = 4 copies; the doc duplicates the
    factors to the four lane quarters and the MMA's quarter q (rows 32q.., Layout D) reads its own: so copy q must
    be the same column and byte at lane ``lane % 32 + 32 q`` (else a finding about the allocator), and row m's
    cell is its copy ``m / 32``."""
    spec_id = req.name.rsplit("[", 1)[1].rstrip("]")
    spec = _preferred_map(maps, spec_id)
    m_rows, nsf, mmas = (int(x) for x in re.findall(r"M=(\d+) NSF=(\d+) MMAs=(\d+)", req.name)[0])
    sfv = SF_TMEM_KINDS.get(nsf, ("", 0))[1]
    params = (("VS", nsf),)
    name = req.name.split(" [")[0]
    text = f"{name} = {p.raw.get('Layout', ('?', 0))[0]}"
    try:
        if spec is None:
            raise KeyError(f"no spec {spec_id}")
        lay = p.layout("Layout")
        member = spec.instance(**dict(params))
        sizes = {d.name: int(d.size) for d in member.inputs}
        rows_n, blocks = sizes["row"], sizes["kb"]
        want = (32, m_rows // 32, SF_REPLICAS, sfv, nsf, 1, mmas)
        got = tuple(s for s, _ in lay.leaves())
        if got != want or rows_n != m_rows or blocks != nsf * mmas:
            raise NotationError(f"{lay} is not ((((32,{m_rows // 32}),{SF_REPLICAS}),({sfv},{nsf})),1,{mmas}) "
                                f"for {rows_n} rows x {blocks} K blocks")
        lane, col, byte = sf_cells(lay, rows_n, blocks, SF_REPLICAS, sfv, nsf)
        bad = (lane % 32 != lane[..., :1] % 32) | (lane // 32 != np.arange(SF_REPLICAS)) | \
              (col != col[..., :1]) | (byte != byte[..., :1])
        if bad.any():
            i, j, c = (int(x[0]) for x in np.nonzero(bad))
            raise NotationError(f"copy {c} of row {i} K block {j} is not its cell in lane quarter {c}")
        own = np.arange(rows_n) // 32
        vals = {"tmem_lane": lane[np.arange(rows_n), :, own], "tmem_col": col[np.arange(rows_n), :, own],
                "byte": byte[np.arange(rows_n), :, own]}
        names = [d.name for d in member.outputs]
        ins = [d.name for d in member.inputs]
        rows = []
        for i in range(rows_n):
            for j in range(blocks):
                at = {"row": i, "kb": j}
                rows.append((*(at[k] for k in ins), *(int(vals[k][i, j]) for k in names)))
    except (NotationError, KeyError) as e:
        return Evaluated(name, "", req.header, req.line, spec, params, text=text,
                         error=e.message if isinstance(e, NotationError) else str(e.args[0]))
    return Evaluated(name, "", req.header, req.line, spec, params, text=text, map_rows=tuple(rows))
