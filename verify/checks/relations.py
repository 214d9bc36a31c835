"""Relations between instructions, proved once for the catalog and reported as instruction-level checks.

A fragment can be a bijection and still not be the one another instruction expects.  Each relation here
states how two layouts of the catalog (or a layout and a doc rule) must fit together, and is decided by
both engines through the layout model: the composed layout is a formula AST built from the specs'
own ASTs (never re-typed here), so the enumeration engine evaluates it point by point and Z3 encodes it
symbolically, and ``equivalence.same_map`` / ``family.same_family_map`` decide "these two layouts are the
same map" with the first differing (lane, i) as the witness.

* ``ldmatrix_x4_is_mma_a``      ``ldmatrix.m8n8.x4.b16`` of a row-major 16 x 16 tile, lane t giving the
                                address of tile row t % 16, column 8 (t / 16), yields the mma.m16n8k16 A
                                fragment (``.f16``/``.bf16``) element for element.
* ``ldmatrix_x2_trans_is_mma_b`` ``ldmatrix.m8n8.x2.trans.b16`` of a K x N = 16 x 8 tile stored row-major, lane
                                t < 16 giving the address of row t, yields the mma.m16n8k16 B fragment.
* ``stmatrix_x4_accumulator_pair`` ``stmatrix.m8n8.x4.b16`` of two m16n8 accumulator tiles (r0, r1 = tile 0,
                                r2, r3 = tile 1) with the same addresses writes every cell of the 16 x 16 tile
                                once, each value on its own D element.
* ``movmatrix_transpose``       movmatrix's source is the m8n8 fragment (ldmatrix ``.x1``) and its result,
                                in the input's coordinates, is that fragment transposed (ldmatrix ``.x1.trans``).
* ``wgmma_d_per_warp``          for every N, warp w of the warpgroup holds rows 16 w .. 16 w + 15 of wgmma D as
                                the m16n8 accumulator layout repeated N/8 times (d_{4j+c} = c_c of n-tile j).
* ``tcgen05_16x256b_is_mma_c``  for every .num, tcgen05.ld/st ``.16x256b`` gives a warp the m16n8 accumulator
                                layout repeated .num times over (TMEM lane, column): every warp the same pattern.

The Tensor Memory access rule (``tmem_lanes``) is checked per tcgen05 layout with its instruction
(``verify.checks.instruction``); the compositions are ``verify.checks.family.compose``.

A relation whose layouts are not among the specs given is not reported.  See docs/catalog.md.
"""
from __future__ import annotations

import dataclasses
import time
from typing import Any, Iterable, Sequence

from ..layout.model import Layout, Spec
from ..results import CheckResult, LayoutResult
from . import equivalence, fragment
from .family import check_any, compose, same_family_map
from .instruction import InstructionResult

# ----------------------------------------------------------------------------- results

def _result(rid: str, instruction: str, shape: Any, ops: Sequence[Layout], checks: Sequence[CheckResult],
            derived: dict[str, str], t0: float) -> InstructionResult:
    return InstructionResult(rid, instruction, shape, tuple(ops), tuple(checks), dict(derived), time.perf_counter() - t0)


def _bijective(name: str, lay: Layout, timeout: float) -> CheckResult:
    """One check from the three bijection checks of ``lay`` (both engines, via the layout checks): the first
    that fails is the witness."""
    res = check_any(lay, timeout)
    for c in ("in_range", "injective", "surjective"):
        r = res.get(c)
        if r.status != "proved":
            return dataclasses.replace(r, check=name, expected="proved", message=f"{c}: {r.message}")
    r = res.get("surjective")
    return dataclasses.replace(r, check=name, expected="proved",
                               message="every cell of the tile is written exactly once (in_range, injective, surjective)")


# ----------------------------------------------------------------------------- the relations

def _find(layouts: dict[str, Layout], *ids: str) -> list[Layout] | None:
    out = [layouts.get(x) for x in ids]
    return None if any(x is None for x in out) else out  # type: ignore[return-value]


def _effective_id(layouts: dict[str, Layout], lid: str) -> str:
    return lid + "@corrected" if lid + "@corrected" in layouts else lid


C16 = "mma.m16n8k16.float.C.f32"  # the doc-text m16n8 accumulator layout (9.7.14.5.8)


def _c_repeated(c: Layout, like: Layout, *, warp_rows: bool, n_elements: Any) -> Layout:
    """The m16n8 accumulator layout repeated along N: element i = 4 j + e is c_e of n-tile j (rows + 16 w
    for warp w of a warpgroup when ``warp_rows``), on the domain of ``like`` (its parameter, its count)."""
    base = dataclasses.replace(c, domain=dataclasses.replace(like.domain, elements=n_elements), operand=like.operand,
                               codomain=like.codomain)
    if warp_rows:
        return compose(base, "row = (16 * (%tid >> 5)) + src_row\ncol = (8 * (i >> 2)) + src_col\n",
                       lane="%tid % 32", i="i % 4", layout_id=f"{C16} repeated")
    return compose(base, "row = src_row\ncol = (8 * (i >> 2)) + src_col\n", i="i % 4", layout_id=f"{C16} repeated")


def check_relations(specs: Iterable[Spec], results: Iterable[LayoutResult] = (),
                    timeout: float = fragment.DEFAULT_TIMEOUT) -> list[InstructionResult]:
    """Every relation whose layouts are among ``specs`` (see the module docstring)."""
    specs = list(specs)
    layouts = {lay.id: lay for s in specs for lay in s.layouts}
    out: list[InstructionResult] = []
    for fn in (_ldmatrix_a, _ldmatrix_b, _stmatrix_pair, _movmatrix, _wgmma_d, _tcgen05_c):
        out.extend(fn(layouts, timeout))
    return out


def _ldmatrix_is(layouts: dict[str, Layout], timeout: float, rid: str, ids: tuple[str, str], num: int,
                 tile: tuple[str, str, int, int], names: tuple[str, str], note: str) -> list[InstructionResult]:
    """ldmatrix ``.x{num}`` of a tile (``tile``: the addresses as a formula over the source row and column,
    the tile's name, rows, cols) is the mma operand ``ids[1]``, element for element."""
    found = _find(layouts, *ids)
    if found is None:
        return []
    t0 = time.perf_counter()
    ldm, mma = found
    inst = ldm.instance(NUM=num)
    formula, name, rows, cols = tile
    composed = compose(inst, formula, operand=mma.operand, rows=rows, cols=cols, layout_id=name)
    c = equivalence.same_map(mma, composed, timeout, names=names, check="equal")
    return [_result(rid, "ldmatrix", inst.shape, (inst, mma), [c], {"equal": note}, t0)]


def _ldmatrix_a(layouts: dict[str, Layout], timeout: float) -> list[InstructionResult]:
    return _ldmatrix_is(
        layouts, timeout, "ldmatrix_x4_is_mma_a", ("ldmatrix.m8n8.R.b16", "mma.m16n8k16.A.f16_bf16"), 4,
        ("row = src_row % 16\ncol = (8 * (src_row / 16)) + src_col\n", "ldmatrix.m8n8.x4 of a 16 x 16 tile", 16, 16),
        ("mma A", "ldmatrix .x4"),
        "the ldmatrix element order within a row is CuTe's (SM75_U32x4_LDSM_N); the row addresses "
        "(lane t: tile row t % 16, column 8 (t / 16)) are the usual ones, ours")


def _ldmatrix_b(layouts: dict[str, Layout], timeout: float) -> list[InstructionResult]:
    return _ldmatrix_is(
        layouts, timeout, "ldmatrix_x2_trans_is_mma_b", ("ldmatrix.m8n8.R.b16.trans", "mma.m16n8k16.B.f16_bf16"), 2,
        ("row = src_row\ncol = src_col\n", "ldmatrix.m8n8.x2.trans of a 16 x 8 tile", 16, 8),
        ("mma B", "ldmatrix .x2.trans"), "the .trans element order is CuTe's (SM75_U16x4_LDSM_T)")


def _stmatrix_pair(layouts: dict[str, Layout], timeout: float) -> list[InstructionResult]:
    found = _find(layouts, "stmatrix.m8n8.R.b16", C16)
    if found is None:
        return []
    t0 = time.perf_counter()
    stm, c = found
    x4 = stm.instance(NUM=4)
    tile = compose(x4, "row = src_row % 16\ncol = (8 * (src_row / 16)) + src_col\n", operand="C", rows=16, cols=16,
                   layout_id="stmatrix.m8n8.x4 into a 16 x 16 tile")
    pair = compose(dataclasses.replace(c, domain=dataclasses.replace(c.domain, elements=8)),
                   "row = src_row\ncol = (8 * (i >> 2)) + src_col\n", i="i % 4", rows=16, cols=16,
                   layout_id="two m16n8 accumulator tiles")
    checks = [_bijective("writes_once", tile, timeout),
              equivalence.same_map(pair, tile, timeout, names=("accumulator pair", "stmatrix .x4"), check="equal")]
    return [_result("stmatrix_x4_accumulator_pair", "stmatrix", x4.shape, (x4, c), checks,
                    {"equal": "the stmatrix element order is CuTe's (SM90_U32x4_STSM_N)"}, t0)]


def _movmatrix(layouts: dict[str, Layout], timeout: float) -> list[InstructionResult]:
    found = _find(layouts, "movmatrix.m8n8.A.b16", "movmatrix.m8n8.D.b16", "ldmatrix.m8n8.R.b16",
                  "ldmatrix.m8n8.R.b16.trans")
    if found is None:
        return []
    t0 = time.perf_counter()
    src, dst, ldm, ldt = found
    x1, x1t = ldm.instance(NUM=1), ldt.instance(NUM=1)
    d_in_input = compose(dst, "row = src_col\ncol = src_row\n", layout_id="movmatrix d in the input's coordinates")
    checks = [equivalence.same_map(x1, src, timeout, names=("ldmatrix .x1", "movmatrix a"), check="source"),
              equivalence.same_map(x1t, d_in_input, timeout, names=("ldmatrix .x1.trans", "movmatrix d"),
                                   check="transpose")]
    return [_result("movmatrix_transpose", "movmatrix", src.shape, (src, dst), checks,
                    {"transpose": "the result layout is our reading of the doc (erratum MOV-1 in docs/catalog.md)"}, t0)]


def _wgmma_d(layouts: dict[str, Layout], timeout: float) -> list[InstructionResult]:
    c = layouts.get(C16)
    if c is None:
        return []
    out = []
    groups: dict[Any, list[Layout]] = {}
    for lid in sorted(layouts):
        d = layouts[lid]
        if d.instruction in ("wgmma", "wgmma.sp") and d.operand == "D" and not d.corrected:
            # the same map (every dtype's D is one CuTe CLayout): proved once per parameter set, naming every D
            groups.setdefault((d.formula, d.domain.elements, d.domain.params), []).append(d)
    for ds in groups.values():
        d = ds[0]
        t0 = time.perf_counter()
        ref = _c_repeated(c, d, warp_rows=True, n_elements=d.domain.elements)
        r = same_family_map(d, ref, timeout, names=("wgmma D", "m16n8 C per warp"), check="equal")
        [p] = d.domain.params
        which = "all_N" if p.values == tuple(range(8, 257, 8)) else "integer_N" if len(p.values) == 18 else p.describe()
        packed = ".f16x2" if d.register_type == "f16x2" else ""  # N/4 registers of two: the same map, counted apart
        rid = f"wgmma_d_per_warp.{which}{packed}"
        n = sum(1 for r in out if r.id.split("#")[0] == rid)
        out.append(_result(rid if n == 0 else f"{rid}#{n + 1}", d.instruction, d.shape, (*ds, c), [r], {"equal": d.derived}, t0))
    return out


def _tcgen05_c(layouts: dict[str, Layout], timeout: float) -> list[InstructionResult]:
    c = layouts.get(C16)
    if c is None:
        return []
    out = []
    for op in ("ld", "st"):
        lid = _effective_id(layouts, f"tcgen05.{op}.16x256b.R.b32")
        lay = layouts.get(lid)
        if lay is None:
            continue
        t0 = time.perf_counter()
        ref = _c_repeated(c, lay, warp_rows=False, n_elements=lay.domain.elements)
        r = same_family_map(lay, ref, timeout, names=(f"tcgen05.{op} .16x256b", "m16n8 C repeated"), check="equal")
        out.append(_result(f"tcgen05_16x256b_is_mma_c.{op}", f"tcgen05.{op}", lay.shape, (lay, c), [r],
                           {"equal": lay.derived}, t0))
    return out


__all__ = ["check_relations"]
