"""Relations between instructions, decided once for the catalog and reported as instruction-level checks.

A fragment can be a bijection and still not be the one another instruction expects.  The relations are
declared on the layout algebra in ``verify.catalog.relations`` (which maps must agree: ``ldmatrix .x4`` of a
16 x 16 tile is mma A; wgmma D is the m16n8 accumulator tiled N/8 times along col and over 4 warps along row
...); this module decides each claim with both engines: ``Equal`` by ``equivalence.same_map`` (for every
parameter value, the first differing (lane, i) as the witness), ``WritesOnce`` by the fragment checks.

The Tensor Memory access rule (``tmem_lanes``) is checked per tcgen05 layout with its instruction
(``verify.checks.instruction``).  A relation whose layouts are not among the specs given is not reported.
See docs/catalog.md.
"""
from __future__ import annotations

import dataclasses
import time
from typing import Any, Iterable, Sequence

from ..catalog.relations import Equal, WritesOnce, relations
from ..layout.model import Layout, MapLayout, Spec
from ..results import CheckResult, InstructionResult, LayoutResult
from . import fragment
from .equivalence import same_map
from .family import check_any

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

def _decide(claim: Equal | WritesOnce, timeout: float) -> CheckResult:
    if isinstance(claim, WritesOnce):
        return _bijective(claim.check, claim.layout, timeout)
    return same_map(claim.left, claim.right, timeout, names=claim.names, check=claim.check)


def check_relations(specs: Iterable[Spec], results: Iterable[LayoutResult] = (),
                    timeout: float = fragment.DEFAULT_TIMEOUT) -> list[InstructionResult]:
    """Every declared relation whose layouts are among ``specs`` (``verify.catalog.relations``)."""
    layouts: dict[str, Layout | MapLayout] = {}
    for s in specs:
        layouts.update({lay.id: lay for lay in s.layouts})
        layouts.update({m.id: m for m in s.maps})
    out = []
    for rel in relations(layouts):
        t0 = time.perf_counter()
        checks = [_decide(c, timeout) for c in rel.claims]
        out.append(_result(rel.id, rel.instruction, rel.shape, rel.operands, checks, dict(rel.derived), t0))
    return out


__all__ = ["check_relations"]
