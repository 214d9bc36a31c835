"""The shared-memory pages: the wgmma operand layouts (9.7.15.5.1.2) and the tcgen05 swizzle pages
(9.7.16.10.3 valid combinations, 9.7.16.10.6 layouts and swizzling), read into map layouts and the errata of
their text.

``read(pages, against)`` is the one entry ``verify.catalog.pages.load`` calls: it returns one ``Spec`` per page
section group with the layouts the page states (``MapLayout``s, every one at its page line) and the findings
computed from the page's own statements, one against another (``IngestFinding``s, page:line:column, the
doc's words, a witness); a fixed page gives none.  Expectations of the maps come from the reviewed specs
of the same ids (``specs/wgmma.shared.toml``, ``specs/tcgen05.shared.toml``), never from the page.

What is read, and checked against what:

* Table 38 / Table 53 (swizzle atoms in 128-bit units): each atom becomes a family over ``T`` (elements per
  16 bytes) with its swizzle (the canonical table's ``Swizzle<B,4,3>`` for its width; CuTe's
  ``Swizzle<2,5,2>`` for tcgen05's 128B swizzling with 32B atomicity, whose swizzle no page states),
  checked as a bijection of the atom; the atom widths are held against the canonical table's swizzles, the
  "multiplied along the leading dimension" example against the table, and Table 53 against Table 38.
* The canonical table (CuTe notation over T, m, k, LBO, SBO): each row becomes a family over ``T``, ``m``,
  ``k`` with LBO and SBO at the dense values the page's examples use, each by its role (the next atom along
  M/N, then K: ``verify.layout.descriptor.stride_roles``), checked injective onto its span for every
  parameter value; a row that is not says for which values.  The family is compared with the reviewed map of
  its id (``verify.checks.review``), so a row that swaps the names LBO and SBO states another layout.
* The LBO/SBO definition tables: each definition ("offset from the first 8 rows to the next 8 rows") is
  held against the stride the canonical layout gives LBO or SBO.
* The five worked examples: the exact layout (checked injective), the canonical layout it names (against the
  table), T against the type, the exact layout against the canonical one instantiated with the stated T, m,
  k, LBO and SBO, and the stated descriptor encodings against ``(x) >> 4``.
* The descriptor table: field widths against bit ranges, overlaps, the 14-bit ``matrix-descriptor-encode``;
  the base-offset rule: the boundaries against the canonical swizzles' periods, and the formula against
  "must be a non-zero value" for patterns that start on a row of their swizzle width.
* Table 52 (tcgen05 valid combinations) against Table 53: a mode a majorness is allowed must have an atom.
"""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

from ..layout.model import MapLayout, Spec
from ..layout.records import Shape, Source
from .known import release_of
from .sections import IngestFinding

from .shared_page_context import (PAGE_MAPS, TC_DESCRIPTOR, TC_ZERO_COLUMN, TC_SWIZZLE, TC_VALID, WGMMA, PageContext, read_pages, sections_of,
                                  add_siblings)
from .shared_pages_tcgen05 import read_tcgen05, read_tcgen05_descriptor
from .shared_pages_wgmma import read_wgmma
from .shared_pages_zero_column import read_tcgen05_zero_column


# ----------------------------------------------------------------------------- entry

def read(paths: Sequence[str | Path], against: Sequence[str | Path] | None = None,
         release: str = "") -> tuple[list[Spec], list[IngestFinding]]:
    """The specs (map layouts) and findings of the shared-memory sections among ``paths`` (module
    docstring); other pages give nothing.  Expectations come from the reviewed maps of the same ids."""
    strs = [str(p) for p in paths]
    pages = read_pages(strs)
    have = sections_of(pages)
    if not have:
        return [], []
    if TC_SWIZZLE in have or TC_VALID in have:
        add_siblings(strs, pages, have, TC_SWIZZLE)
        add_siblings(strs, pages, have, TC_VALID)
        add_siblings(strs, pages, have, WGMMA)
    ctx = PageContext(have, [], [], release_of(pages))
    specs: list[Spec] = []
    reviewed = _reviewed(against, release)
    given = {str(Path(p).resolve()) for p in strs}
    for group, fn, instr in ((WGMMA, read_wgmma, "wgmma"), (TC_SWIZZLE, read_tcgen05, "tcgen05"),
                             (TC_DESCRIPTOR, read_tcgen05_descriptor, "tcgen05"),
                             (TC_ZERO_COLUMN, read_tcgen05_zero_column, "tcgen05")):
        if group not in have and not (group == TC_SWIZZLE and TC_VALID in have):
            continue
        before_maps, before_f = len(ctx.maps), len(ctx.findings)
        fn(ctx)
        role = group if group in have else TC_VALID
        sec, page = have[role]
        maps = tuple(_expect(m, reviewed) for m in ctx.maps[before_maps:] if str(Path(m.provenance.spec_path).resolve()) in given)
        ctx.findings[before_f:] = [f for f in ctx.findings[before_f:] if str(Path(f.page).resolve()) in given]
        if maps:
            src = Source(page.path, sec.heading.line, sec.number, sec.heading.title, version=ctx.release,
                         anchor=sec.heading.anchor)
            specs.append(Spec(page.path, src, instr, Shape(0, 0, 0, "shared"), (), maps=maps, page=page.path,
                              reviewed=tuple(reviewed[m.id] for m in maps if m.id in reviewed)))
    out = sorted(ctx.findings, key=lambda f: (f.page, f.line, f.column, f.kind, f.message))
    return specs, out


def _reviewed(against: Sequence[str | Path] | None, release: str = "") -> dict[str, MapLayout]:
    """The reviewed maps (``against``, default the bundled specs) of the facts that apply to ``release``."""
    from . import bundled
    from .known import applies
    from .spec import load_specs
    # a reviewed spec that does not load is an error (SpecError, one line, exit 2), never "no expectations"
    specs = load_specs(list(against) if against is not None else [bundled.resolve().path])
    return {m.id: m for s in specs if applies(s.source, release) for m in s.maps}


def _expect(m: MapLayout, reviewed: dict[str, MapLayout]) -> MapLayout:
    import dataclasses
    ref = reviewed.get(m.id)
    expect = {k: v for k, v in (ref.expect.items() if ref is not None else ()) if k in m.checks}
    return dataclasses.replace(m, expect=expect, provenance=dataclasses.replace(
        m.provenance, erratum=ref.provenance.erratum if ref is not None else ""))


__all__ = ["PAGE_MAPS", "read"]
