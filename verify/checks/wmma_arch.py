"""wmmae's per-architecture wmma maps (``verify.catalog.wmma_arch``): valid fragments, replicated as
stated, and on sm_80 related to the doc's mma layouts.  Both engines decide every claim.

For each map ``M: (lane, i) -> (row, col)`` of an operand of R x C cells:

* ``in_range``: every point is defined and inside R x C;
* ``covers``: every cell is held (surjective);
* no copy: ``injective`` (so a bijection: 32 x N = R x C);
* a copy (``ArchMap.copy``, a lane bit or an element bit ``b``): ``M`` split at bit ``b`` into
  ``copy`` (the bit) and the rest; ``copies_equal``: the map at ``copy = 0`` and at ``copy = 1`` are the
  same map (``maps.same``); ``copy_injective`` and ``copy_covers``: one copy is a bijection onto R x C.
  Together: every cell is held by exactly two points, one per copy, as stated.  ``injective`` of the whole
  map is then expected ``refuted`` (its witness is a pair of copies).

Relations (``relations``), each a ``maps.same`` over maps built with the algebra from the catalog's doc-stated
mma layouts (never re-typed):

* sm_80 ``wmma.m16n16k16.A.f16`` (copy 0, elements 0-7) = ``mma.m16n8k16.A.f16_bf16``;
* sm_80 ``wmma.m16n16k16.B.f16`` (copy 0) = two ``mma.m16n8k16.B.f16_bf16`` side by side along the columns,
  element ``i = e + 4 j`` for element ``e`` of the ``j``-th (``merge(product(B, iota(j -> col)), (i, j))``);
* sm_80 ``wmma.m16n16k8.A.tf32`` = ``mma.m16n8k8.A.tf32``; ``.B.tf32`` = two ``mma.m16n8k8.B.tf32`` side by side;
* sm_75 = sm_80 for ``.f16`` (the same map); row- and col-major the same map on sm_75 and sm_80; on sm_70
  they differ (expected ``refuted``, with the first differing point).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Callable

from ..catalog import wmma_arch as W
from ..catalog.wmma_arch import ArchMap
from .fragment import DEFAULT_TIMEOUT
from ..layout import algebra as A
from ..layout import reshape
from ..layout.dims import Dim
from ..layout.model import Layout
from ..layout.named import NamedMap
from ..results import CheckResult
from . import maps


@dataclass(frozen=True)
class ArchMapResult:
    """The checks of one reference map (``reference_only``: about wmmae's map, never the doc's)."""

    entry: ArchMap
    checks: tuple[CheckResult, ...]

    @property
    def ok(self) -> bool:
        return all(c.as_expected for c in self.checks)

    def to_json(self) -> dict[str, Any]:
        e = self.entry
        return {"id": e.layout_id, "arch": e.arch, "major": e.major, "status": e.status, "label": W.LABEL,
                "source": e.source, "commit": e.commit, "formula": e.formula, "replication": e.describe_copy(),
                "checks": {c.check: c.to_json() for c in self.checks}}


def _named(m: ArchMap | NamedMap) -> NamedMap:
    return m.named() if isinstance(m, ArchMap) else m


def copies(m: ArchMap | NamedMap, copy: tuple[str, int] | None = None) -> tuple[NamedMap, NamedMap] | None:
    """The map at copy bit 0 and at copy bit 1 (``None`` without a copy).  The bit's input is split into
    (low bits, the copy bit, high bits), named ``<dim>_lo``, ``copy``, ``<dim>_hi``; the low part of an
    element copy is renamed back to ``i`` when it is all that is left of it."""
    named = _named(m)
    copy = m.copy if isinstance(m, ArchMap) else copy
    if copy is None:
        return None
    dim, bit = copy
    size = next(d.size for d in named.inputs if d.name == dim)
    assert isinstance(size, int)  # a wmma map is no family: its dims are concrete
    lo, hi = 1 << bit, size >> (bit + 1)
    parts: list[tuple[str, int]] = ([(f"{dim}_lo", lo)] if lo > 1 else []) + [("copy", 2)] + (
        [(f"{dim}_hi", hi)] if hi > 1 else [])
    s = reshape.split(named, dim, parts)
    out = []
    for v in (0, 1):
        f: NamedMap = reshape.fix(s, "copy", v)
        if dim == "i" and hi == 1 and lo > 1:
            f = reshape.relabel(f, inputs={"i_lo": "i"})
        out.append(f)
    return out[0], out[1]


def _as(r: CheckResult, name: str) -> CheckResult:
    return dataclasses.replace(r, check=name)


def check_map(m: ArchMap | NamedMap, timeout: float = DEFAULT_TIMEOUT,
              copy: tuple[str, int] | None = None) -> tuple[CheckResult, ...]:
    """The fragment checks of one map (module docstring); ``copy`` for a bare named map (a planted one)."""
    named = _named(m)
    copy = m.copy if isinstance(m, ArchMap) else copy
    out = [maps.in_range(named, timeout), _as(maps.surjective(named, timeout), "covers")]
    pair = copies(named, copy)
    if pair is None:
        out.append(maps.injective(named, timeout))
        return tuple(out)
    out.append(maps.injective(named, timeout, expected="refuted"))
    out.append(maps.same(pair[0], pair[1], timeout, ("copy 0", "copy 1"), check="copies_equal"))
    out.append(_as(maps.injective(pair[0], timeout), "copy_injective"))
    out.append(_as(maps.surjective(pair[0], timeout), "copy_covers"))
    return tuple(out)


def check_all(timeout: float = DEFAULT_TIMEOUT) -> list[ArchMapResult]:
    """Every reference map's checks, in ``MAPS`` order."""
    return [ArchMapResult(e, check_map(e, timeout)) for e in W.MAPS]


# ----------------------------------------------------------------------------- relations

@dataclass(frozen=True)
class Relation:
    """One claim about the reference maps: ``left`` and ``right`` are the same map (``expected``
    ``proved``), or not (``refuted``, with the first differing point)."""

    name: str
    left: NamedMap
    right: NamedMap
    names: tuple[str, str]
    expected: str = "proved"

    def decide(self, timeout: float = DEFAULT_TIMEOUT) -> CheckResult:
        return maps.same(self.left, self.right, timeout, self.names, expected=self.expected, check=self.name)


MMA_OF = {  # the sm_80 wmma id -> (the doc-stated mma layout, how many of it side by side along col)
    W.A16: ("mma.m16n8k16.A.f16_bf16", 1),
    W.B16: ("mma.m16n8k16.B.f16_bf16", 2),
    W.A8: ("mma.m16n8k8.A.tf32", 1),
    W.B8: ("mma.m16n8k8.B.tf32", 2),
}


def mma_side_by_side(mma: Layout, tiles: int) -> NamedMap:
    """``tiles`` copies of an mma fragment side by side along the columns, element ``i = e + n j`` for
    element ``e`` of tile ``j`` (``n`` the mma fragment's elements): ``merge(product(F, iota(j -> col)))``."""
    f = mma.map
    if tiles == 1:
        return f
    return reshape.merge(A.product(f, A.iota(Dim("j", tiles), "col")), ("i", "j"), "i")


def relations(layout_of: Callable[[str], Layout]) -> list[Relation]:
    """The relations of the module docstring; ``layout_of`` finds a catalog layout by id."""
    out: list[Relation] = []
    for e in W.MAPS:
        if e.arch != "sm_80" or e.layout_id not in MMA_OF:
            continue
        mma_id, tiles = MMA_OF[e.layout_id]
        pair = copies(e)
        left = pair[0] if pair is not None else e.named()
        out.append(Relation(f"sm_80 {e.layout_id} {e.major}_major = {mma_id}" + (f" x {tiles} along col" if tiles > 1 else ""),
                            left, mma_side_by_side(layout_of(mma_id), tiles), (f"wmmae {e.name}", mma_id)))
    for e in W.MAPS:
        if e.arch == "sm_75":
            other = W.lookup(e.layout_id, "sm_80", e.major)
            out.append(Relation(f"{e.layout_id} {e.major}_major: sm_75 = sm_80", e.named(), other.named(),
                                (e.name, other.name)))
    for arch in W.ARCHS:
        for lid in W.covered_ids():
            majors = W.majors(lid, arch)
            if len(majors) == 2:
                row, col = majors
                out.append(Relation(f"{lid} {arch}: row_major = col_major", row.named(), col.named(),
                                    (row.name, col.name), "refuted" if arch == "sm_70" else "proved"))
    return out
