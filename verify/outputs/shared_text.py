"""Text and JSON of the shared-memory commands: ``descriptor`` and ``banks`` (deterministic: the same input
gives the same bytes)."""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from ..results.shared import BanksResult, DescriptorResult, first_cell
from ..layout.descriptor import encode14
from ..layout.shared import SharedLayout

SCHEMA = 1


def _env(env: Mapping[str, int]) -> str:
    return ", ".join(f"{k} = {v}" for k, v in env.items()) + ": " if env else ""


def _tile(lay: SharedLayout, rows: int, cols: int) -> str:
    return f"{rows} x {cols} tile of {lay.element_bits}-bit elements"


def _engines(c: Any) -> str:
    return ", ".join(f"{k} {v}" for k, v in c.engines.items())


def descriptor_text(lay: SharedLayout, results: Sequence[tuple[Mapping[str, int], DescriptorResult]]) -> str:
    out: list[str] = []
    for env, r in results:
        pre = _env(env)
        rows, cols = r.tile
        if r.status in ("found", "reads"):
            d = r.descriptor
            assert d is not None
            verb = "reads" if r.status == "reads" else "found"
            head = (f"{pre}{d.instr} descriptor {d.encode():#018x} {verb}: {r.major}-major {d.mode.name} swizzling, "
                    f"{_tile(lay, rows, cols)}, {len(r.advances)} k-block{'s' if len(r.advances) != 1 else ''} of "
                    f"{r.k_block}")
            out.append(head)
            f = d.fields()
            out.append(f"  start address  {d.start:#x} (field {f['start']})")
            unused = " (not used by K-major swizzled layouts)" if r.major == "K" and d.mode.name != "none" else ""
            out.append(f"  LBO            {d.lbo} bytes (field {encode14(d.lbo)}){unused}")
            out.append(f"  SBO            {d.sbo} bytes (field {encode14(d.sbo)})")
            out.append(f"  base offset    {d.base_offset}")
            out.append(f"  swizzle        {d.mode.name} (field {f['swizzle']})")
            if d.instr == "tcgen05":
                out.append(f"  version        {d.version}, LBO mode {d.lbo_mode}")
            if len(r.advances) > 1:
                out.append("  k-block starts " + ", ".join(f"+{a}" for a in r.advances) + " bytes (descriptor + "
                           + ", ".join(str(a >> 4) for a in r.advances) + ")")
            if r.check is not None:
                out.append(f"  reads the layout exactly: {r.check.status} ({_engines(r.check)})")
        elif r.status == "differs":
            d = r.descriptor
            assert d is not None
            cell = first_cell(r)
            out.append(f"{pre}{d.instr} descriptor {d.encode():#018x} ({d.describe()}) does not read the layout as "
                       f"{r.major}-major:")
            out.extend(f"  - {why}" for why in r.reasons)
            if cell is not None:
                out.append(f"  first (row {cell['row']}, col {cell['col']}): the descriptor reads {_where(lay, cell['descriptor'])}, "
                           f"the layout holds it at {_where(lay, cell['layout'])}")
            if r.check is not None:
                out.append(f"  ({r.check.status}: {_engines(r.check)})")
        else:
            out.append(f"{pre}no {r.instr} descriptor reads this {_tile(lay, rows, cols) if rows else 'layout'}:")
            out.extend(f"  - {why}" for why in r.reasons)
    return "\n".join(out) + "\n"


def _where(lay: SharedLayout, v: Mapping[str, int] | None) -> str:
    if v is None:
        return "nothing (undefined)"
    off = v["offset"]
    return f"element offset {off} (byte {lay.base + off * lay.element_bits // 8:#x})"


def descriptor_json(lay: SharedLayout, results: Sequence[tuple[Mapping[str, int], DescriptorResult]]) -> dict[str, Any]:
    return {"schema": SCHEMA, "layout": _layout_json(lay),
            "results": [{"params": dict(env), **r.to_json()} for env, r in results]}


def _layout_json(lay: SharedLayout) -> dict[str, Any]:
    return {"notation": lay.notation, "text": lay.text, "element_bits": lay.element_bits, "base": lay.base,
            "swizzle": lay.swizzle.text() if lay.swizzle else None, "swizzle_on": lay.swizzle_on or None}


def banks_text(lay: SharedLayout, r: BanksResult, unit: str = "placement") -> str:
    """``unit``: what ``r.placements`` counts (``instruction`` where the addresses were derived, each at its cells)."""
    a = r.access
    rows, cols = lay.rows, lay.cols
    out = [f"{a.text} over a {rows} x {cols} tile of {lay.element_bits}-bit elements: {r.placements} {unit}"
           f"{'s' if r.placements != 1 else ''}, {a.lanes} addressing lanes, {a.bytes} bytes each, {a.group} lanes per "
           "wavefront group"]
    for c in r.checks:
        mark = "ok" if c.status == "proved" else ("FAIL" if c.status == "refuted" else c.status.upper())
        out.append(f"  {c.check:14s} {mark:5s} ({_engines(c)})" + (f": {c.message}" if c.status != "proved" else ""))
    if r.ok:
        out.append(f"conflict-free: {r.wavefronts} wavefront{'s' if r.wavefronts != 1 else ''} per instruction "
                   "(the minimum)")
    elif r.get("conflict_free").status == "refuted":
        w = r.worst or {}
        group = (f"; the worst group: {_env(w.get('params') or {})}origin {tuple(w['origin'])}, group {w['group']}, "
                 f"lanes {_lanes(w['lanes'])} on bank {w['bank']}") if w else ""
        out.append(f"bank conflicts: degree {r.degree}, {r.wavefronts} wavefronts per instruction ({r.ideal} without "
                   f"conflicts){group}")
    return "\n".join(out) + "\n"


def _lanes(lanes: Sequence[int]) -> str:
    from ..layout.elements import number_ranges
    return number_ranges(list(lanes))


def banks_json(lay: SharedLayout, r: BanksResult) -> dict[str, Any]:
    return {"schema": SCHEMA, "layout": _layout_json(lay), **r.to_json()}


__all__ = ["banks_json", "banks_text", "descriptor_json", "descriptor_text"]
