"""The compiled-CuTe reference: every ``MMA_Traits`` and ``Copy_Traits`` as the C++ compiler evaluates them.

``compile_cute`` builds and runs the program that ``layout.notations.cute_compiled`` writes; this
module pairs what it printed with the catalog:

* MMA traits (SM61-SM120 ``mma``, SM90 GMMA ``wgmma`` for every ``N``): the same matching and
  ``conform`` as the header reader (``checks.crosscheck``), with the compiler's layouts;
* copy traits: ``ldmatrix`` (``SM75_U32x{1,2,4}_LDSM_N``, ``SM75_U16x{2,4,8}_LDSM_T``, SM100's
  8-bit forms), ``stmatrix`` (``SM90_*_STSM_*``, SM100's), ``movmatrix`` (``SM75_U32x1_MOVM_T``)
  and ``tcgen05.ld``/``st`` (``SM100_TMEM_LOAD/STORE_*``): the register side of the copy
  (``DstLayout`` of a load, ``SrcLayout`` of a store, bits) is evaluated for every thread and
  element, and each element's cell found through the other side: for shared memory the lane whose
  address covers the bit is the row and the bit's position in that lane's row the column; for
  Tensor Memory ``ValID`` gives the address (TMEM lane ``addr / DP_b``, 32-bit column ``addr % DP_b /
  32``).  An element whose bits are not consecutive in one cell is a finding about the trait;
* Tensor Memory allocators (``UMMA::tmem_frg``, ``tmem_frg_ws``, ``tmem_sf_frg``): the data paths, packings and
  scale factors as maps (``datapath_layout``, ``sf_tmem_layout``).
"""
from __future__ import annotations

import re
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from ...layout.corrections import in_use_of
from ...layout.model import Layout, MapLayout, cells_of
from ...layout.notations import NotationError, TraitEntry
from ...layout.notations.cute_layout import CuteLayout
from ...layout.notations.cute_compiled import Printed, Request, discover, parse_output
from ..crosscheck import CrosscheckReport, Row, SpecIndex, _trait_rows
from ..fragment import DEFAULT_TIMEOUT
from . import compile_cute, smem
from .common import Evaluated, conform_rows, find
from .cute_blockwise import PREFIX as BLOCKWISE_PREFIX
from .cute_blockwise import blockwise_layout, blockwise_requests
from .cute_sfb import PREFIX as SFB_PREFIX
from .cute_sfb import eval_layout, sf_cells, sfb_layout, sfb_requests
from .cute_sfid import PREFIX as SFID_PREFIX
from .cute_sfid import sfid_layouts, sfid_requests

NAME = "cute"
_SHAPE_AT = re.compile(r" \(shape written at \d+:\d+\)")   # a position in the program's output, not the header
DP_BITS = 21            # CuTe's TMEM::DP_b: a TMEM lane is 2^16 32-bit columns, addresses count bits
MAX_BITS = 1 << 24


def installed_headers() -> Path | None:
    """The include directory of an installed ``nvidia-cutlass`` (found without importing it), or None."""
    import importlib.util
    try:
        found = importlib.util.find_spec("cutlass_library")
    except (ImportError, ValueError):
        return None
    for base in (found.submodule_search_locations or []) if found is not None else []:
        inc = Path(base) / "source" / "include"
        if inc.is_dir():
            return inc
    return None


def probe() -> str:
    """'' when the reference can run (a compiler, the CUDA headers and CuTe's headers), else why not."""
    why = compile_cute.probe()
    if why:
        return why
    return "" if installed_headers() is not None else \
        "no CuTe headers: pip install 'ptx-layout-verify[refs]' (nvidia-cutlass), or give --cute PATH"


def evaluate_default(specs: list, timeout: float = DEFAULT_TIMEOUT, path: str | Path | None = None) -> CrosscheckReport:
    """The registry's entry: ``path`` (a CUTLASS include directory) or the installed nvidia-cutlass."""
    root = Path(path) if path is not None else installed_headers()
    if root is None:
        raise FileNotFoundError(probe())
    if not (root / "cute").is_dir():
        found = sorted(root.rglob("cute/atom"))
        if not found:
            raise FileNotFoundError(f"no cute/atom under {root}: the compiled reference needs a CUTLASS include "
                                    "directory (with cute/ and cutlass/)")
        root = found[0].parent.parent
    return evaluate(root, specs, timeout)


def evaluate(root: Path, specs: Iterable[Layout], timeout: float = DEFAULT_TIMEOUT, *,
             use_cache: bool = True) -> CrosscheckReport:
    """Every trait under the include root ``root`` against ``specs``."""
    t0 = time.perf_counter()
    layouts = list(specs)
    maps = [x for x in layouts if isinstance(x, MapLayout)]
    tiles = smem_requests(root, maps)
    requests = discover(root) + tmem_requests(root, maps) + sf_tmem_requests(root, maps) + \
        sfb_requests(root, maps, SF_TMEM_KINDS) + storage_requests(root, maps) + blockwise_requests(root, maps) + \
        sfid_requests(root, layouts, SF_TMEM_KINDS) + [r for r, _ in tiles]
    tile_of = {r.name: t for r, t in tiles}
    run = compile_cute.run(root, requests, use_cache=use_cache)
    printed = parse_output(run.output, requests)
    failed = {f.index: f for f in run.failures}
    index = SpecIndex([x for x in layouts if not isinstance(x, MapLayout)])
    rows: list[Row] = []
    templated: dict[str, int] = {}
    cache: dict = {}
    copies: list[Evaluated] = []
    for k, req in enumerate(requests):
        if req.skipped:
            if req.skipped.startswith("templated"):
                templated[req.header] = templated.get(req.header, 0) + 1
            else:
                rows.append(Row("unmatched", req.name, "", req.header, req.line, detail=req.skipped))
            continue
        if k in failed:
            f = failed[k]
            rows.append(Row("malformed", req.name, "", f.header, f.line,
                            detail=f"does not compile: {f.header}:{f.line}: error: {f.message}"))
            continue
        p = printed.get(k)
        if p is None:
            rows.append(Row("malformed", req.name, "", req.header, req.line, detail="the program printed nothing"))
            continue
        if req.kind == "mma":
            rows.extend(_mma_rows(req, p, index, cache, timeout))
            if p.has("SFALayout"):
                copies.extend(scale_factor_layouts(req, p, layouts))
        elif req.kind == "tmem":
            copies.append(datapath_layout(req, p, maps))
        elif req.kind == "expr" and req.name.startswith(SFID_PREFIX):
            copies.extend(sfid_layouts(req, p, layouts))
        elif req.kind == "expr":
            copies.append(sf_tmem_layout(req, p, maps) if req.name.startswith(SF_TMEM_FRG) else
                          sfb_layout(req, p, maps) if req.name.startswith(SFB_PREFIX) else
                          blockwise_layout(req, p, maps) if req.name.startswith(BLOCKWISE_PREFIX) else
                          storage_layout(req, p, maps))
        elif req.kind == "smem":
            copies.extend(smem_layouts(req, p, tile_of[req.name]))
        else:
            copies.extend(copy_layouts(req, p, layouts))
    rows.extend(conform_rows(copies, timeout))
    headers = tuple(sorted({r.header for r in requests}))
    return CrosscheckReport(str(root), headers, tuple(rows), templated, time.perf_counter() - t0, NAME,
                            "CuTe MMA_Traits and Copy_Traits (compiled)")


def _mma_rows(req: Request, p: Printed, index: SpecIndex, cache: dict, timeout: float) -> list[Row]:
    """One MMA trait's rows; an operand layout CuTe prints but cannot be a layout (a stride not congruent
    with its shape: the compiler accepts the type, CuTe's algebra cannot use it) is a malformed row of
    the spec it would be compared with."""
    try:
        shape, thr = p.layout("Shape_MNK"), p.layout("ThrID")
    except NotationError as e:
        return [Row("malformed", req.name, "", req.header, req.line, detail=f"CuTe prints {e.message}")]
    mnk = tuple(s for s, _ in shape.leaves())
    if len(mnk) != 3:
        return [Row("malformed", req.name, "", req.header, req.line, detail=f"Shape_MNK {shape} is not (M,N,K)")]
    types = tuple(p.types.get(f"ValType{x}", "") for x in "ABCD")
    if req.type_args:   # the element types the instantiation chose, where the trait names only containers
        a, b, _ = req.type_args
        types = tuple(_element_for(v, chosen) for v, chosen in zip(types, (a, b, types[2], types[3])))
    ops: dict[str, CuteLayout] = {}
    bad: list[Row] = []
    for op in "ABC":
        try:
            ops[op] = p.layout(f"{op}Layout")
        except NotationError as e:
            m, n, k = mnk
            like = index.match(f"m{m}n{n}k{k}", op, _ptx(types["ABC".index(op)]) or "", None,
                               _ptx(types[0]))
            bad.append(Row("malformed", req.name, op, req.header, req.line, spec=like.id if like else "",
                           layout=p.raw[f"{op}Layout"][0],
                           detail=f"{op}Layout: {_SHAPE_AT.sub('', e.message)} (the compiler accepts the type; "
                                  "CuTe's algebra cannot use it)"))
    if len(bad) == 3:
        return bad
    stand_in = next(iter(ops.values()))   # a broken operand's rows are replaced by its malformed row
    entry = TraitEntry(req.name, types, mnk, thr, ops.get("A", stand_in), ops.get("B", stand_in),  # type: ignore[arg-type]
                       ops.get("C", stand_in), req.line, req.header)
    broken = {r.operand for r in bad} | ({"D"} if "C" in {r.operand for r in bad} else set())
    return bad + [r for r in _trait_rows(entry, req.header, index, cache, timeout) if r.operand not in broken]


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


# Shared-memory layouts (wgmma.shared, tcgen05.shared): the GMMA atoms (UMMA re-exports them, and adds the
# 128-byte swizzle with 32-byte atomicity) and their tile_to_shape, paired by ``smem``.
SMEM_HEADERS = {"wgmma": "cute/atom/mma_traits_sm90_gmma.hpp", "tcgen05": "cute/atom/mma_traits_sm100.hpp"}
_SMEM_DEFINED = {("wgmma", "K"): "Layout_K_{}_Atom_Bits", ("wgmma", "MN"): "Layout_MN_{}_Atom_Bits",
                 ("tcgen05", "K"): "using cute::GMMA::Layout_K_{}_Atom;",
                 ("tcgen05", "MN"): "using cute::GMMA::Layout_MN_{}_Atom;"}


def smem_requests(root: Path, maps: list) -> list[tuple[Request, smem.Tile]]:
    """One request per CuTe tile of every shared-memory map (``smem.cute_tiles``), at the header line that
    defines its atom."""
    texts: dict[str, str] = {}
    out = []
    for s in smem.smem_specs(maps):
        header = SMEM_HEADERS[s.instruction]
        if header not in texts:
            try:
                texts[header] = (Path(root) / header).read_text(encoding="utf-8", errors="replace")
            except OSError:
                texts[header] = ""
        text = texts[header]
        if not text:
            continue
        if s.swizzle == "128B_base32B":
            word = "Layout_MN_SW128_32B_Atom_Bits ="
        else:
            word = _SMEM_DEFINED[(s.instruction, s.major)].format(smem.SWIZZLES[s.swizzle][1])
        at = text.find(word)
        line = text.count("\n", 0, at) + 1 if at >= 0 else 0
        for t in smem.cute_tiles(s):
            expr = smem.cute_expression(t)
            out.append((Request("smem", f"{expr} [{s.spec.id}]", expr, header, line, type_args=(t.cxx_type,)), t))
    return out


def smem_layouts(req: Request, p: Printed, tile: smem.Tile) -> list[Evaluated]:
    """CuTe's offsets of one tile (``as_position_independent_swizzle_layout``: the element offset in a buffer
    aligned to the swizzle period), restricted to each spec member it serves."""
    name = req.name.split(" [")[0]
    text = f"{name} = {p.raw.get('Layout', ('?', 0))[0]}"
    spec = tile.spec.spec
    try:
        bits = int(p.types.get("SizeofBits", "0"))
        if bits != tile.bits:
            raise NotationError(f"{tile.cxx_type} has {bits} bits, the spec's T says {tile.bits}")
        if len(p.offsets) < tile.rows or any(len(p.offsets.get(r, ())) < tile.cols for r in range(tile.rows)):
            raise NotationError(f"the program printed fewer than {tile.rows} x {tile.cols} offsets")
        offsets = {(r, c): p.offsets[r][c] for r in range(tile.rows) for c in range(tile.cols)}
    except NotationError as e:
        return [Evaluated(name, "", req.header, req.line, spec, params, text=text, error=e.message)
                for params, _, _ in tile.members]
    return [Evaluated(name, "", req.header, req.line, spec, params, text=text, map_rows=smem.restrict(offsets, r, c))
            for params, r, c in tile.members]


# Block-scale factors in memory (storage.scale_factors): CUTLASS's layouts, evaluated at SFVec = 32 over
# scale-factor coordinates (kb = k / SFVec: the atom's SFVec mode has stride 0).
SF_HEADER = "cutlass/detail/sm100_blockscaled_layout.hpp"
SF_VEC = 32


def storage_requests(root: Path, maps: list) -> list[Request]:
    """``storage.sf.cutlass.128x4`` for every member (M, KB, L) through ``tile_atom_to_shape_SFA``, and its
    128 x 4 tile through ``SfKMajorAtom``."""
    try:
        text = (Path(root) / SF_HEADER).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    by = {m.id: m for m in maps}
    out = []
    line_of = {w: text.count("\n", 0, text.find(w)) + 1 for w in ("SfKMajorAtom", "tile_atom_to_shape_SFA")}
    if "storage.sf.cutlass.128x4" in by:
        for env, _ in _map_instances(by["storage.sf.cutlass.128x4"]):
            expr = (f"cutlass::detail::Sm1xxBlockScaledConfig<{SF_VEC}>::tile_atom_to_shape_SFA("
                    f"make_shape({env['M']}, 1, {env['KB'] * SF_VEC}, {env['L']}))")
            name = f"Sm1xxBlockScaledConfig<{SF_VEC}>::tile_atom_to_shape_SFA M={env['M']} KB={env['KB']} L={env['L']}"
            out.append(Request("expr", f"{name} [storage.sf.cutlass.128x4]", expr, SF_HEADER,
                               line_of["tile_atom_to_shape_SFA"]))
    if "storage.sf.cutlass.128x4.tile" in by:
        out.append(Request("expr", f"Sm1xxBlockScaledBasicChunk<{SF_VEC}>::SfKMajorAtom [storage.sf.cutlass.128x4.tile]",
                           f"cutlass::detail::Sm1xxBlockScaledBasicChunk<{SF_VEC}>::SfKMajorAtom{{}}", SF_HEADER,
                           line_of["SfKMajorAtom"]))
    return out


def _map_instances(spec: Any) -> list[tuple[dict[str, int], Any]]:
    import itertools
    names = [q.name for q in spec.params]
    return [(dict(zip(names, vals)), spec.instance(**dict(zip(names, vals))))
            for vals in itertools.product(*(q.values for q in spec.params))]


def storage_layout(req: Request, p: Printed, maps: list) -> Evaluated:
    """CUTLASS's scale-factor layout ((m, k[, l]) -> byte offset) as the spec's map over scale-factor
    coordinates: offset(l, m, kb) = layout(m, kb * SFVec, l)."""
    spec_id = req.name.rsplit("[", 1)[1].rstrip("]")
    spec = next(m for m in maps if m.id == spec_id)
    env = {k: int(v) for k, v in re.findall(r"\b(M|KB|L)=(\d+)", req.name)}
    params = tuple(sorted(env.items()))
    text = f"{req.instance} = {p.raw.get('Layout', ('?', 0))[0]}"
    try:
        lay = p.layout("Layout")
        member = spec.instance(**env) if env else spec
        names = [d.name for d in member.inputs]
        sizes = [int(d.size) for d in member.inputs]
        import itertools
        rows = []
        for point in itertools.product(*(range(n) for n in sizes)):
            at: dict[str, int] = dict(zip(names, point))
            m = at.get("m", at.get("row", 0))
            coord = (m, at["kb"] * SF_VEC) + ((at["l"],) if lay.rank() == 3 else ())
            rows.append((*point, lay(*coord)))
    except (NotationError, KeyError, ValueError) as e:
        return Evaluated(req.name.split(" [")[0], "", req.header, req.line, spec, params, text=text,
                         error=getattr(e, "message", str(e)))
    return Evaluated(req.name.split(" [")[0], "", req.header, req.line, spec, params, text=text, map_rows=tuple(rows))


_SF_TYPES = {"cutlass::float_ue8m0_t": "ue8m0", "cutlass::float_ue4m3_t": "ue4m3"}


def scale_factor_layouts(req: Request, p: Printed, layouts: list) -> list[Evaluated]:
    """``mma.block_scale``'s scale factors from CuTe's ``SFALayout``/``SFBLayout`` ((thread, value) ->
    the (M, K) / (N, K) element each value scales).  CuTe fixes which row (SFA) or column (SFB) each lane
    serves and which K blocks (``k / SFVecSize``) it covers; which lanes of a quad and which byte of the
    register (thread-id, byte-id) are the doc's text.  So for every point (lane, i) the spec member defines,
    the given cell is CuTe's row (column) for that lane and the spec's K block, when CuTe's lane covers
    that block (else undefined): ``conform`` then decides the row/column assignment, the derived fact."""
    a, _, _ = req.type_args
    sf = next((v for t, v in _SF_TYPES.items() if t in req.name), "ue8m0")
    out = []
    try:
        mnk = tuple(s for s, _ in p.layout("Shape_MNK").leaves())
        vs = int(p.types.get("SFVecSize", "0"))
    except (NotationError, ValueError) as e:
        return [Evaluated(req.name, "SF", req.header, req.line, None, error=str(e))]
    m, n, k = mnk
    for part, field, extent in (("SFA", "SFALayout", m), ("SFB", "SFBLayout", n)):
        spec = find(layouts, f"mma.block_scale.m{m}n{n}k{k}.{part}.{sf}")
        shown = f"MMA_Traits<{req.name}>::{field} = {p.raw.get(field, ('?', 0))[0]} (SFVecSize {vs})"
        if spec is None or vs <= 0:
            out.append(Evaluated(req.name, part, req.header, req.line, None, text=shown,
                                 unmatched=f"no spec mma.block_scale.m{m}n{n}k{k}.{part}.{sf}"))
            continue
        try:
            lay = p.layout(field)
            threads, values = _tv(lay)
            idx = eval_layout(lay, np.arange(threads)[:, None] + threads * np.arange(values)[None, :])
            serves = {t: {(int(x % extent), int((x // extent) // vs)) for x in idx[t]} for t in range(threads)}
        except NotationError as e:
            out.append(Evaluated(req.name, part, req.header, req.line, spec, text=shown, error=e.message))
            continue
        for env, member in spec.instances():
            cells = cells_of(member)
            entries: list[tuple[int, int, int | None, int | None]] = []
            for lane in range(cells.ok.shape[0]):
                rows_of_lane = {r for r, _ in serves.get(lane, ())}
                for i in range(cells.ok.shape[1]):
                    if not cells.ok[lane, i]:   # the table spans the spec's whole domain
                        entries.append((lane, i, None, None))
                        continue
                    block = int(cells.col[lane, i]) if part == "SFA" else int(cells.row[lane, i])
                    own = sorted(r for r, b in serves.get(lane, ()) if b == block)
                    if len(rows_of_lane) != 1 or not own:
                        entries.append((lane, i, None, None))
                    elif part == "SFA":
                        entries.append((lane, i, own[0], block))
                    else:
                        entries.append((lane, i, block, own[0]))
            params = tuple(sorted(env.items()))
            out.append(Evaluated(req.name, part, req.header, req.line, spec, params, tuple(entries), shown))
    return out


def _element_for(printed: str, chosen: str) -> str:
    """``uint8_t`` (a container) -> the chosen element type; ``sparse_elem<2, uint8_t>`` likewise."""
    for container in ("unsigned char", "uint8_t", "cutlass::integer_subbyte<4, false>"):
        if printed == container:
            return chosen
        if printed == f"cute::sparse_elem<2, {container}>":
            return f"cute::sparse_elem<2, {chosen}>"
    return printed


def _ptx(value_type: str) -> str | None:
    from ...layout.notations import ptx_type
    return ptx_type(value_type)


# ----------------------------------------------------------------------------- copy traits

def _tv(layout: CuteLayout) -> tuple[int, int]:
    if layout.rank() != 2:
        raise NotationError(f"{layout} is not a (thread, value) layout")
    return layout.mode(0).size(), layout.mode(1).size()


def _register_bits(layout: CuteLayout) -> np.ndarray:
    """tile bit of (thread, value bit), as a threads x bits array."""
    threads, bits = _tv(layout)
    if threads * bits > MAX_BITS:
        raise NotationError(f"{layout} has {threads * bits} points (limit {MAX_BITS})")
    t = np.arange(threads, dtype=np.int64)[:, None]
    v = np.arange(bits, dtype=np.int64)[None, :]
    return eval_layout(layout, t + threads * v)


def _smem_cells(reg: np.ndarray, addr: CuteLayout, w: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each register bit's (row, column, bit in cell) through the address side: the row is the smallest lane
    whose row address covers the bit, the column the bit's position in that row / element width."""
    bits = _register_bits(addr)
    threads, nb = bits.shape
    size = int(max(bits.max(), reg.max())) + 1
    lane = np.full(size, -1, dtype=np.int64)
    pos = np.full(size, -1, dtype=np.int64)
    for t in range(threads - 1, -1, -1):      # the smallest lane wins
        lane[bits[t]] = t
        pos[bits[t]] = np.arange(nb)
    row, p = lane[reg], pos[reg]
    return row, np.where(p >= 0, p // w, -1), np.where(p >= 0, p % w, -1)


def _tmem_cells(reg: np.ndarray, valid: CuteLayout, w: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each register bit's (TMEM lane, 32-bit column, bit in cell) through ``ValID``."""
    if valid.size() <= int(reg.max()):
        raise NotationError(f"ValID {valid} does not cover the register layout")
    addr = eval_layout(valid, reg)
    colbit = addr & ((1 << DP_BITS) - 1)
    return addr >> DP_BITS, colbit // w, colbit % w


def _entries(reg: np.ndarray, cells: tuple[np.ndarray, np.ndarray, np.ndarray], w: int,
             thr: CuteLayout) -> tuple[tuple[tuple[int, int, int | None, int | None], ...], str]:
    """Table entries (lane, i, row, col), one per w-bit element; '' or why the bits do not form elements."""
    row, col, bit = cells
    threads, nbits = reg.shape
    if nbits % w:
        return (), f"{nbits} bits per thread is not a whole number of {w}-bit elements"
    lanes = [thr(t) for t in range(threads)]
    out = []
    for t in range(threads):
        for e in range(nbits // w):
            sl = slice(e * w, (e + 1) * w)
            r, c, b = row[t, sl], col[t, sl], bit[t, sl]
            if (r < 0).any():
                return (), f"thread {t} bit {e * w + int(np.argmax(r < 0))} has no address"
            if not ((r == r[0]).all() and (c == c[0]).all() and (b == np.arange(w)).all()):
                return (), (f"thread {t} element {e}: its {w} bits are not one element "
                            f"(bits in cells {sorted(set(zip(r.tolist(), c.tolist())))[:3]})")
            out.append((lanes[t], e, int(r[0]), int(c[0])))
    return tuple(out), ""


# name pattern -> (spec id, params from the match, register side, element bits, memory)
_COPY = [
    (r"SM75_U32x(?P<n>[124])_LDSM_N", "ldmatrix.m8n8.R.b16", lambda m: int(m["n"]), "Dst", 16, "smem"),
    (r"SM75_U16x(?P<n>[248])_LDSM_T", "ldmatrix.m8n8.R.b16.trans", lambda m: int(m["n"]) // 2, "Dst", 16, "smem"),
    (r"SM90_U32x(?P<n>[124])_STSM_N", "stmatrix.m8n8.R.b16", lambda m: int(m["n"]), "Src", 16, "smem"),
    (r"SM90_U16x(?P<n>[248])_STSM_T", "stmatrix.m8n8.R.b16.trans", lambda m: int(m["n"]) // 2, "Src", 16, "smem"),
    (r"SM100_U8x(?P<n>8|16)_LDSM_T", "ldmatrix.m16n16.R.b8_b8x16.trans", lambda m: int(m["n"]) // 8, "Dst", 8,
     "smem"),
    (r"SM100_SU[46]_DU8x16_x(?P<n>[124])_LDSM_N", "ldmatrix.m8n16.R.b8x16", lambda m: int(m["n"]), "Dst", 8, "smem"),
    (r"SM100_U8x(?P<n>4|8|16)_STSM_T", "stmatrix.m16n8.R.b8.trans", lambda m: int(m["n"]) // 4, "Src", 8, "smem"),
    (r"SM100_TMEM_LOAD_(?P<s>32dp32b|16dp64b|16dp128b|16dp256b|16dp32b)(?P<n>\d+)x", "tcgen05.ld.{s}.R.b32",
     lambda m: int(m["n"]), "Dst", 32, "tmem"),
    (r"SM100_TMEM_STORE_(?P<s>32dp32b|16dp64b|16dp128b|16dp256b|16dp32b)(?P<n>\d+)x", "tcgen05.st.{s}.R.b32",
     lambda m: int(m["n"]), "Src", 32, "tmem"),
]
_TMEM_SHAPE = {"32dp32b": "32x32b", "16dp64b": "16x64b", "16dp128b": "16x128b", "16dp256b": "16x256b",
               "16dp32b": "16x32bx2"}
_UNMATCHED = [
    (r"SM100_TMEM_(LOAD|STORE)_.*_16b$", "Tensor Memory copy with .pack::16b/.unpack::16b: not in the catalog"),
    (r"SM100_UTCCP_.*_2cta$", "tcgen05.cp of a CTA pair (cta_group::2): the catalog does not state it"),
    (r"SM75_U32x1_MOVM_T", ""),
    (r"SM50_Shuffle_", "warp shuffle (shfl.sync): no tensor-core layout in the catalog"),
    (r"SM80_CP_ASYNC_|SM100_(LOAD|STORE)_256bit|UniversalCopy|AutoVectorizing",
     "a plain load or store: no tensor-core layout in the catalog"),
]


def copy_layouts(req: Request, p: Printed, layouts: list[Layout]) -> list[Evaluated]:
    """One copy trait as evaluated layouts paired with their spec (or why not)."""
    text = f"Copy_Traits<{req.name}>"
    for pattern, reason in _UNMATCHED:
        if re.match(pattern, req.name) and reason:
            return [Evaluated(req.name, "", req.header, req.line, None, unmatched=reason)]
    if req.name == "SM75_U32x1_MOVM_T":
        return _movmatrix(req, p, layouts)
    if req.name in _UTCCP:
        return [_utccp(req, p, layouts)]
    for pattern, spec_id, num, side, w, memory in _COPY:
        m = re.fullmatch(pattern, req.name)
        if not m:
            continue
        sid = spec_id.format(s=_TMEM_SHAPE.get(m.groupdict().get("s") or "", ""))
        spec = in_use_of({x.id: x for x in layouts}, sid)   # the reviewed correction first
        params = (("NUM", num(m)),)
        if spec is None:
            return [Evaluated(req.name, "R", req.header, req.line, None, params, unmatched=f"no spec {sid}")]
        if not spec.is_family or num(m) not in dict((q.name, q.values) for q in spec.domain.params).get("NUM", ()):
            return [Evaluated(req.name, "R", req.header, req.line, spec, params,
                              unmatched=f"{sid} has no member NUM={num(m)}")]
        try:
            reg_layout = p.layout(f"{side}Layout")
            reg = _register_bits(reg_layout)
            other = "Src" if side == "Dst" else "Dst"
            cells = _tmem_cells(reg, p.layout("ValID"), w) if memory == "tmem" else \
                _smem_cells(reg, p.layout(f"{other}Layout"), w)
            entries, why = _entries(reg, cells, w, p.layout("ThrID"))
        except (NotationError, KeyError) as e:
            why, entries = (e.message if isinstance(e, NotationError) else f"no {e.args[0]}"), ()
        shown = f"{text}::{side}Layout = {p.raw.get(side + 'Layout', ('?', 0))[0]}"
        return [Evaluated(req.name, "R", req.header, req.line, spec, params, entries, shown, error=why)]
    return [Evaluated(req.name, "", req.header, req.line, None, unmatched="no spec for this copy atom")]


# CuTe's tcgen05.cp atoms (cta_group::1): the spec, (rows, bits a row, copies), and the ValID index of bit ``b`` of
# source row ``r`` in copy ``c`` (CuTe's modes: [core_matrix_strided, core_matrix_leading, broadcast / repeat];
# .4x256b's copy bits enter its (128, 256) ValID through SrcLayout (4,256):(32,128); .64x128b.warpx2::01_23's source
# row r is row r % 32 of repeat r / 32, SrcLayout (32,128,2,2):(1,32,4096,0))
_UTCCP: dict[str, tuple[str, tuple[int, int, int], Any]] = {
    "SM100_UTCCP_128dp256bit_1cta": ("tcgen05.cp.128x256b", (128, 256, 1), lambda r, b, c: r + 128 * b),
    "SM100_UTCCP_128dp128bit_1cta": ("tcgen05.cp.128x128b", (128, 128, 1), lambda r, b, c: r + 128 * b),
    "SM100_UTCCP_4dp256bit_1cta": ("tcgen05.cp.4x256b", (4, 256, 1), lambda r, b, c: 32 * r + 128 * b),
    "SM100_UTCCP_4x32dp128bit_1cta": ("tcgen05.cp.32x128b.warpx4", (32, 128, 4),
                                      lambda r, b, c: r + 32 * b + 4096 * c),
    "SM100_UTCCP_2x64dp128bitlw0213_1cta": ("tcgen05.cp.64x128b.warpx2.02_13", (64, 128, 2),
                                            lambda r, b, c: r + 64 * b + 8192 * c),
    "SM100_UTCCP_2x64dp128bitlw0123_1cta": ("tcgen05.cp.64x128b.warpx2.01_23", (64, 128, 2),
                                            lambda r, b, c: r % 32 + 32 * b + 4096 * (r // 32) + 8192 * c),
}


def _utccp(req: Request, p: Printed, layouts: list) -> Evaluated:
    """A ``tcgen05.cp`` shape from ``ValID`` ((row, bit[, copy]) -> TMEM address in bits): byte ``src_byte`` of
    source row ``src_row``, copy ``copy``, is bits 8 src_byte .. 8 src_byte + 7 of that row, which must land in one
    byte of one 32-bit column: (tmem_lane, tmem_col, byte) = (addr / 2^21, addr % 2^21 / 32, addr % 32 / 8)."""
    sid, (nrows, nbits, ncopies), index = _UTCCP[req.name]
    spec = next((m for m in layouts if getattr(m, "id", "") == sid), None)
    shown = f"Copy_Traits<{req.name}>::ValID = {p.raw.get('ValID', ('?', 0))[0]}"
    if spec is None:
        return Evaluated(req.name, "", req.header, req.line, None, unmatched=f"no spec {sid}")
    try:
        valid = p.layout("ValID")
        if valid.size() != max(nrows, 128) * nbits * ncopies and valid.size() != nrows * nbits * ncopies:
            raise NotationError(f"ValID {valid} is not ({nrows} rows, {nbits} bits, {ncopies} copies)")
        rows = []
        for r in range(nrows):
            for sb in range(nbits // 8):
                for c in range(ncopies):
                    addr = [valid(index(r, 8 * sb + b, c)) for b in range(8)]
                    if addr != list(range(addr[0], addr[0] + 8)) or addr[0] % 8:
                        raise NotationError(f"row {r} byte {sb} copy {c}: its 8 bits are not one byte in Tensor Memory")
                    lane, col = addr[0] >> DP_BITS, addr[0] & ((1 << DP_BITS) - 1)
                    rows.append((r, sb, c, lane, col // 32, (col % 32) // 8) if ncopies > 1 else
                                (r, sb, lane, col // 32, (col % 32) // 8))
    except NotationError as e:
        return Evaluated(req.name, "", req.header, req.line, spec, text=shown, error=e.message)
    return Evaluated(req.name, "", req.header, req.line, spec, text=shown, map_rows=tuple(rows))


def _movmatrix(req: Request, p: Printed, layouts: list[Layout]) -> list[Evaluated]:
    """``movmatrix.trans``: the source fragment (A) and the destination fragment (D) of an 8x8 b16 matrix.
    CuTe's Src and Dst layouts are the same row fragment, 128 bits a row, each of its own matrix: A's of
    the source, D's of the result (the transposition is the instruction's, not the layout's), so a cell is
    (bit / 128, bit % 128 / 16) in both; the spec's D is the result's row fragment too."""
    out = []
    for part, side, sid in (("A", "Src", "movmatrix.m8n8.A.b16"), ("D", "Dst", "movmatrix.m8n8.D.b16")):
        spec = find(layouts, sid)
        shown = f"Copy_Traits<{req.name}>::{side}Layout = {p.raw.get(side + 'Layout', ('?', 0))[0]}"
        try:
            reg = _register_bits(p.layout(f"{side}Layout"))
            cells = (reg // 128, (reg % 128) // 16, reg % 16)
            entries, why = _entries(reg, cells, 16, p.layout("ThrID"))
        except (NotationError, KeyError) as e:
            entries, why = (), (e.message if isinstance(e, NotationError) else f"no {e.args[0]}")
        out.append(Evaluated(req.name, part, req.header, req.line, spec, (), entries, shown, error=why,
                             unmatched="" if spec is not None else f"no spec {sid}"))
    return out
