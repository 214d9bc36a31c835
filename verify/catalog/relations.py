"""Relations between instructions, declared on the layout algebra.

Each relation says which maps must agree, as algebra over the catalog's own layouts (never re-typed
formulas): ``verify.checks.relations`` decides every claim with both engines.  The maps are built
lazily (``verify.layout.algebra``), so declaring them costs nothing until a check evaluates them.

=================================  ===================================================================
``ldmatrix_x4_is_mma_a``           ldmatrix ``.x4`` of a row-major 16 x 16 tile, lane t giving tile row
                                   t % 16, column 8 (t / 16): ``stack_onto(ldmatrix, 16)`` (the row
                                   addresses composed after the stack, as ``handoff`` places it) = mma A
``ldmatrix_x2_trans_is_mma_b``     ldmatrix ``.x2.trans`` of a 16 x 8 tile (lane t < 16: row t) = mma B
``stmatrix_x4_accumulator_pair``   stmatrix ``.x4`` into a 16 x 16 tile writes every cell once, and equals
                                   two m16n8 accumulators side by side: ``product(C, 2 tiles along col)``
``movmatrix_transpose``            movmatrix's source is ldmatrix ``.x1``; its result, transposed
                                   (``relabel`` row <-> col), is ldmatrix ``.x1.trans``
``wgmma_d_per_warp.*``             wgmma D = the m16n8 accumulator tiled N/8 times along col and over the 4
                                   warps along row: ``product(product(C, N/8 along col), 4 warps along
                                   row)``, element ``i = e + 4 j``, thread ``= lane + 32 warp``
``tcgen05_16x256b_is_mma_c.*``     tcgen05 ``.16x256b`` = the m16n8 accumulator tiled .num times along
                                   Tensor Memory columns
=================================  ===================================================================

A relation whose layouts are not among the specs given is not declared.  docs/catalog.md has the
provenance of each.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping

from ..formula import BinOp, Num, Var
from ..layout import algebra as A
from ..layout import reshape
from ..layout.dims import Dim
from ..layout.family import Extent
from ..layout.corrections import in_use_of
from ..layout.model import Layout, MapLayout
from ..layout.named import formula_map
from ..layout.tile import stack_onto

C16 = "mma.m16n8k16.float.C.f32"  # the doc-text m16n8 accumulator layout (9.7.14.5.8)


@dataclass(frozen=True)
class Equal:
    """``left`` and ``right`` are the same map (for every parameter value)."""

    check: str
    left: Layout
    right: Layout
    names: tuple[str, str]


@dataclass(frozen=True)
class WritesOnce:
    """``layout`` is a bijection onto its tile: every cell written exactly once."""

    check: str
    layout: Layout


@dataclass(frozen=True)
class Relation:
    """One relation: its id, the instruction it is reported under, the layouts it relates (reported as its
    operands), its claims, and the provenance of what it relies on that the doc does not state."""

    id: str
    instruction: str
    shape: Any
    operands: tuple[Layout, ...]
    claims: tuple[Equal | WritesOnce, ...]
    derived: Mapping[str, str] = field(default_factory=dict)


# ----------------------------------------------------------------------------- algebra pieces

def _n_tiles(c: Layout, n: Extent, params: tuple[Any, ...] = ()) -> Any:
    """The accumulator ``c`` (4 elements) tiled ``n`` times along col: element ``i = e + 4 j`` is
    ``c_e`` of n-tile ``j`` (``params``: the family parameters ``n`` is written in)."""
    tiled = A.product(reshape.relabel(c.map, inputs={"i": "e"}), A.iota(Dim("j", n), "col", params=params))
    return reshape.merge(tiled, ("e", "j"), "i")


def _over(x: Extent, k: int) -> Extent:
    return x // k if isinstance(x, int) else BinOp("/", x, Num(k))


# ----------------------------------------------------------------------------- the declarations

Declare = Callable[[Mapping[str, Layout]], list[Relation]]


def _ldmatrix_is(rid: str, ids: tuple[str, str], num: int, tile_name: str, rows: int, names: tuple[str, str],
                 note: str) -> Declare:
    """ldmatrix ``.x{num}`` of a tile of ``rows`` rows, its matrices placed by ``stack_onto`` (the placement
    ``handoff`` uses for a stack) = the mma operand."""
    def declare(layouts: Mapping[str, Layout]) -> list[Relation]:
        if not all(x in layouts for x in ids):
            return []
        ldm, mma = layouts[ids[0]], layouts[ids[1]]
        inst = ldm.instance(NUM=num)
        given = replace(stack_onto(inst, rows, tile_name), operand=mma.operand)
        return [Relation(rid, "ldmatrix", inst.shape, (inst, mma), (Equal("equal", mma, given, names),), {"equal": note})]
    return declare


_LDMATRIX_A = _ldmatrix_is(
    "ldmatrix_x4_is_mma_a", ("ldmatrix.m8n8.R.b16", "mma.m16n8k16.A.f16_bf16"), 4,
    "ldmatrix.m8n8.x4 of a 16 x 16 tile", 16, ("mma A", "ldmatrix .x4"),
    "the ldmatrix element order within a row is CuTe's (SM75_U32x4_LDSM_N); the row addresses "
    "(lane t: tile row t % 16, column 8 (t / 16)) are the usual ones, ours")

_LDMATRIX_B = _ldmatrix_is(
    "ldmatrix_x2_trans_is_mma_b", ("ldmatrix.m8n8.R.b16.trans", "mma.m16n8k16.B.f16_bf16"), 2,
    "ldmatrix.m8n8.x2.trans of a 16 x 8 tile", 16, ("mma B", "ldmatrix .x2.trans"),
    "the .trans element order is CuTe's (SM75_U16x4_LDSM_T)")


def _stmatrix_pair(layouts: Mapping[str, Layout]) -> list[Relation]:
    if "stmatrix.m8n8.R.b16" not in layouts or C16 not in layouts:
        return []
    stm, c = layouts["stmatrix.m8n8.R.b16"], layouts[C16]
    x4 = stm.instance(NUM=4)
    tile = replace(stack_onto(x4, 16, "stmatrix.m8n8.x4 into a 16 x 16 tile"), operand="C")
    pair = c.with_map(_n_tiles(c, 2), id="two m16n8 accumulator tiles",
                       domain=replace(c.domain, elements=8))
    return [Relation("stmatrix_x4_accumulator_pair", "stmatrix", x4.shape, (x4, c),
                     (WritesOnce("writes_once", tile), Equal("equal", pair, tile, ("accumulator pair", "stmatrix .x4"))),
                     {"equal": "the stmatrix element order is CuTe's (SM90_U32x4_STSM_N)"})]


def _movmatrix(layouts: Mapping[str, Layout]) -> list[Relation]:
    ids = ("movmatrix.m8n8.A.b16", "movmatrix.m8n8.D.b16", "ldmatrix.m8n8.R.b16", "ldmatrix.m8n8.R.b16.trans")
    if not all(x in layouts for x in ids):
        return []
    src, dst, ldm, ldt = (layouts[x] for x in ids)
    x1, x1t = ldm.instance(NUM=1), ldt.instance(NUM=1)
    transposed = reshape.relabel(dst.map, outputs={"row": "col", "col": "row"})
    d_in_input = dst.with_map(transposed, id="movmatrix d in the input's coordinates")
    return [Relation("movmatrix_transpose", "movmatrix", src.shape, (src, dst),
                     (Equal("source", x1, src, ("ldmatrix .x1", "movmatrix a")),
                      Equal("transpose", x1t, d_in_input, ("ldmatrix .x1.trans", "movmatrix d"))),
                     {"transpose": "the result layout is our reading of the doc (erratum MOV-1 in docs/catalog.md)"})]


def _wgmma_d(layouts: Mapping[str, Layout]) -> list[Relation]:
    c = layouts.get(C16)
    if c is None:
        return []
    out: list[Relation] = []
    groups: dict[Any, list[Layout]] = {}
    for lid in sorted(layouts):
        d = layouts[lid]
        if isinstance(d, Layout) and d.instruction in ("wgmma", "wgmma.sp") and d.operand == "D" and not d.corrected:
            # the same map (every dtype's D is one CuTe CLayout): proved once per parameter set, naming every D
            groups.setdefault((d.formula, d.domain.elements, d.domain.params), []).append(d)
    for ds in groups.values():
        d = ds[0]
        [p] = d.domain.params
        per_warp = A.product(_n_tiles(c, _over(Var(p.name), 8), (p,)), A.iota(Dim("warp", 4), "row"))
        ref = c.with_map(reshape.merge(per_warp, ("lane", "warp"), "thread"), id=f"{C16} repeated",
                          operand=d.operand, domain=d.domain, codomain=d.codomain)
        which = "all_N" if p.values == tuple(range(8, 257, 8)) else "integer_N" if len(p.values) == 18 else p.describe()
        packed = ".f16x2" if d.regs.type == "f16x2" else ""  # N/4 registers of two: the same map, counted apart
        rid = f"wgmma_d_per_warp.{which}{packed}"
        n = sum(1 for r in out if r.id.split("#")[0] == rid)
        out.append(Relation(rid if n == 0 else f"{rid}#{n + 1}", d.instruction, d.shape, (*ds, c),
                            (Equal("equal", d, ref, ("wgmma D", "m16n8 C per warp")),), {"equal": d.provenance.derived}))
    return out


def _tcgen05_c(layouts: Mapping[str, Layout]) -> list[Relation]:
    c = layouts.get(C16)
    if c is None:
        return []
    out = []
    for op in ("ld", "st"):
        lay = in_use_of(layouts, f"tcgen05.{op}.16x256b.R.b32")
        if lay is None:
            continue
        ref = c.with_map(_n_tiles(c, _over(lay.domain.elements, 4), lay.domain.params), id=f"{C16} repeated", operand=lay.operand,
                          domain=lay.domain, codomain=lay.codomain)
        out.append(Relation(f"tcgen05_16x256b_is_mma_c.{op}", f"tcgen05.{op}", lay.shape, (lay, c),
                            (Equal("equal", lay, ref, (f"tcgen05.{op} .16x256b", "m16n8 C repeated")),),
                            {"equal": lay.provenance.derived}))
    return out


# ----------------------------------------------------------------------------- Tensor Memory data-path layouts

# (layout letter, binding, tcgen05.ld shape, .num, lane base, CTA, who holds D(row, col), every cell once)
# the reference is a formula over (thread, i), or "C16" for the m16n8 accumulator tiled along col, stacked
# over the 4 warps along row (16 rows each)
_DATAPATH_READS: tuple[tuple[str, dict[str, int], str, int, int, int | None, str, bool], ...] = (
    ("D", {"N": 128}, "32x32b", 128, 0, None, "row = thread\ncol = i\n", True),
    ("E", {"N": 256}, "32x32b", 128, 0, None, "row = thread % 64\ncol = 128 * (thread / 64) + i\n", True),
    ("G", {"N": 256}, "32x32b", 64, 0, None, "row = thread % 32\ncol = 64 * (thread / 32) + i\n", True),
    ("F", {"N": 256, "BASE": 0}, "16x256b", 32, 0, None, "C16", True),
    ("F", {"N": 256, "BASE": 16}, "16x256b", 32, 16, None, "C16", True),
    ("A", {"N": 128}, "32x32b", 128, 0, 0, "row = thread\ncol = i\n", False),
    ("A", {"N": 128}, "32x32b", 128, 0, 1, "row = 128 + thread\ncol = i\n", False),
    ("B", {"N": 256}, "32x32b", 128, 0, 0, "row = thread % 64\ncol = 128 * (thread / 64) + i\n", False),
    ("B", {"N": 256}, "32x32b", 128, 0, 1, "row = 64 + (thread % 64)\ncol = 128 * (thread / 64) + i\n", False),
    ("C", {"N": 256, "BASE": 0}, "16x256b", 32, 0, 1, "C16+64", False),
)


def _warp_tiles(c: Layout, num: int, row0: int) -> Any:
    """The m16n8 accumulator tiled ``num`` times along col, warp w's copy 16 w + ``row0`` rows down:
    ``(thread, i) -> (row, col)``."""
    per_warp = A.product(_n_tiles(c, num), A.iota(Dim("warp", 4), "row"))
    return reshape.embed(reshape.merge(per_warp, ("lane", "warp"), "thread"), "row", 16 * 4 + row0, row0)


def _datapath_reads(layouts: Mapping[str, Layout], maps: Mapping[str, MapLayout]) -> list[Relation]:
    """A data-path layout of 9.7.16.10.5 read by a warpgroup's tcgen05.ld (warp w at lane 32 w + base): which
    register of which thread holds D(row, col), and (one-CTA layouts) that the load reads every element once."""
    from ..catalog.tmem import as_read_fragment, matrix_of, read_map
    out: list[Relation] = []
    for letter, env, shape, num, base, cta, ref, once in _DATAPATH_READS:
        dp_, ld_ = in_use_of(maps, f"tcgen05.datapath.{letter}"), in_use_of(layouts, f"tcgen05.ld.{shape}.R.b32")
        if dp_ is None or ld_ is None or (ref.startswith("C16") and C16 not in layouts):
            continue
        lid, dp, ld = dp_.id, dp_, ld_.instance(NUM=num)
        rows, cols = matrix_of(dp, env)
        at = ", ".join(f"{k} = {v}" for k, v in env.items()) + (f", CTA {cta}" if cta is not None else "")
        name = f"{lid} ({at}) by {shape}.x{num} at lane base +{base}"
        given = as_read_fragment(read_map(dp, ld, env, base, cta), ld, (rows, cols), name)
        if ref.startswith("C16"):
            refmap = _warp_tiles(layouts[C16], num, int(ref[4:] or 0))
            rows_ref = 16 * 4 + int(ref[4:] or 0)
            refmap = reshape.embed(refmap, "row", rows, 0) if rows_ref < rows else refmap
            what = "the m16n8 accumulator fragment tiled along col, warp w holding rows 16 w.."
        else:
            refmap = formula_map(ref, (Dim("thread", 128), Dim("i", ld.n_elements)), (Dim("row", rows), Dim("col", cols)))
            what = ref.strip().replace("\n", "; ")
        expected = as_read_fragment(refmap, ld, (rows, cols), f"{what}")
        claims: list[Equal | WritesOnce] = [Equal("equal", expected, given, ("stated", "read through the layout"))]
        if once:
            claims.append(WritesOnce("reads_once", given))
        rid = f"tmem_datapath_{letter}_by_{shape}" + (f".base{base}" if base else "") + (f".cta{cta}" if cta is not None else "")
        out.append(Relation(rid, "tcgen05.ld", ld.shape, (ld,), tuple(claims),
                            {"equal": f"{lid}: {dp.provenance.derived} tcgen05.ld: {ld.provenance.derived}"}))
    return out


FRAGMENT_DECLARATIONS: tuple[Declare, ...] = (_LDMATRIX_A, _LDMATRIX_B, _stmatrix_pair, _movmatrix, _wgmma_d,
                                              _tcgen05_c)  # over the fragment layouts
MAP_DECLARATIONS = (_datapath_reads,)  # over the fragments and the map layouts (the Tensor Memory data paths)
DECLARATIONS = (*FRAGMENT_DECLARATIONS, *MAP_DECLARATIONS)


def relations(layouts: Mapping[str, Layout | MapLayout]) -> list[Relation]:
    """Every relation whose layouts are among ``layouts`` (by id), in declaration order."""
    fragments = {k: v for k, v in layouts.items() if isinstance(v, Layout)}
    maps = {k: v for k, v in layouts.items() if isinstance(v, MapLayout)}
    return ([r for declare in FRAGMENT_DECLARATIONS for r in declare(fragments)]
            + [r for declare_map in MAP_DECLARATIONS for r in declare_map(fragments, maps)])


__all__ = ["C16", "DECLARATIONS", "Equal", "Relation", "WritesOnce", "relations"]
