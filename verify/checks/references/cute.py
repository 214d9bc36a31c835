"""The compiled-CuTe reference: every ``MMA_Traits`` and ``Copy_Traits`` as the C++ compiler evaluates them.

``compile_cute`` builds and runs the program that ``layout.notations.cute_compiled`` writes; this
module asks for every request (the traits ``discover`` finds, and the Tensor Memory allocators, shared-memory
atoms and scale-factor storage the catalog's maps name), runs the program once, hands each printed request to
the evaluation of its kind and conforms the rows:

* MMA traits (SM61-SM120 ``mma``, SM90 GMMA ``wgmma`` for every ``N``): the same matching and
  ``conform`` as the header reader (``checks.crosscheck``), with the compiler's layouts, and the
  block-scale factors of their ``SFALayout``/``SFBLayout`` (``scale_factor_layouts``);
* shared-memory atoms and their tiles (``smem``) and CUTLASS's block-scaled scale-factor storage
  (``storage.sf.cutlass.128x4``): the layouts as the spec's maps;
* copy traits are evaluated by ``cute_copy``, the Tensor Memory allocators by ``cute_tmem``, and B's scale
  factors, blockwise storage and scale-factor ids by ``cute_sfb``, ``cute_blockwise`` and ``cute_sfid``.
"""
from __future__ import annotations

import re
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

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
from .cute_copy import _tv, copy_layouts
from .cute_sfb import PREFIX as SFB_PREFIX
from .cute_sfb import eval_layout, sfb_layout, sfb_requests
from .cute_sfid import PREFIX as SFID_PREFIX
from .cute_sfid import sfid_layouts, sfid_requests
from .cute_tmem import SF_TMEM_FRG, SF_TMEM_KINDS, datapath_layout, sf_tmem_layout, sf_tmem_requests, tmem_requests

NAME = "cute"
_SHAPE_AT = re.compile(r" \(shape written at \d+:\d+\)")   # a position in the program's output, not the header


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
