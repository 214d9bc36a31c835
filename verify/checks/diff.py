"""What changed between two spec sets or two releases of the doc: layouts paired by their stable id.

A doc reviewer comparing PTX ISA 9.0 with a later release wants to know which layouts changed
*meaning*, not which lines changed text.  ``diff`` pairs the layouts of OLD and NEW by id (the id
grammar, ``verify.layout.ids``, gives a fragment the same id from a spec file and from a page), and:

* **changed**: the maps differ, with the first differing (lane, i), decided by both engines
  (``verify.checks.equivalence.same_map``; a family is compared value by value of its parameter);
  or what the doc says of the registers differs (count, element list, register type);
* **added** / **removed**: an id in one set only;
* **unchanged**: the same map and the same register facts;
* **outside**: comparing spec files with doc pages, a layout of the spec files that no page can state
  (wmma, ldmatrix, wgmma, tcgen05, the block-scale selectors: the doc gives them as figures only, so
  ``ingest`` reads only mma and mma.sp layouts; of the layouts with no register facts the pages state
  the shared-memory ones only), not compared and not "removed";

Layouts with no register facts (``[[layout]]``: shared memory, Tensor Memory, storage) are paired the same
way: a changed map (``verify.checks.maps.same``, both engines, every parameter value at once), or changed
facts (kind, dimensions, unit, the checks that apply).

plus the textual errata of the doc pages, each **persisting**, **new** or **fixed**: an erratum is the same
erratum in both releases when it is of the same section (the sections paired by what they say,
``verify.catalog.known.pair_sections``: anchor, then title, never number), operand, types and kind, with the
same message once the page's own numbering is masked (page lines, table and section numbers move whenever
the text above them changes); only when both sides are doc pages, as spec files record errata as expectations,
not as text.  The sections of two releases are listed where their numbers differ (**renumbered**), their
titles differ (**retitled**), or one release states a section the other does not.
"""
from __future__ import annotations

from typing import Any, Sequence

import re

from ..catalog.known import pair_sections, squeeze
from ..catalog.sections import PAGE_INSTRUCTIONS
from ..catalog.shared_pages import PAGE_MAPS
from ..layout.model import Layout, MapLayout, Spec
from ..results import CheckResult
from ..results.diff import Change, DiffResult, Named, SectionChanges
from ..witnesses import Facts, ParamsDiffer, at_member
from .equivalence import register_facts, same_map
from .fragment import DEFAULT_TIMEOUT
from ..layout.named import bindings
from .maps import same


def section_changes(old: Sequence[Named], new: Sequence[Named]) -> SectionChanges:
    pairs = pair_sections(old, new)
    po, pn = {a.number for a, _ in pairs}, {b.number for _, b in pairs}
    return SectionChanges(len(pairs), tuple((a, b) for a, b in pairs if a.number != b.number),
                          tuple((a, b) for a, b in pairs if squeeze(a.title) != squeeze(b.title)),
                          tuple(n for n in new if n.number not in pn), tuple(n for n in old if n.number not in po))


def _compare_maps(old: Layout, new: Layout, timeout: float) -> CheckResult:
    """Both engines: the same map (a family: for every value of its parameter, first difference first)."""
    if old.is_family or new.is_family:
        po = [(p.name, p.values) for p in old.domain.params]
        pn = [(p.name, p.values) for p in new.domain.params]
        if po != pn:
            return CheckResult("map", "refuted", "proved", ParamsDiffer(str(po), str(pn)),
                               f"parameters differ: old {po}, new {pn}", 0.0, {"arithmetic": "refuted"})
        last = None
        for (env, a), (_, b) in zip(old.instances(), new.instances()):
            last = same_map(a, b, timeout, names=("old", "new"), check="map")
            if last.status != "proved":
                binding = ", ".join(f"{k} = {v}" for k, v in env.items())
                cex = at_member(last.counterexample, env) if last.counterexample is not None else Facts({"params": env})
                return CheckResult(last.check, last.status, last.expected, cex, f"{binding}: {last.message}",
                                   last.seconds, dict(last.engines))
        assert last is not None
        return last
    return same_map(old, new, timeout, names=("old", "new"), check="map")


def errata_key(f: Any) -> str:
    """A textual erratum without its position: ``9.7.14.5.8 B f64 table-header: ...``."""
    return f"{f.section} {f.operand} {'_'.join(f.types)} {f.kind}: {f.message}".replace("  ", " ").strip()


_NUMBERING = ((re.compile(r"\b(lines?) \d+(?:\s*[-–]\s*\d+)?"), r"\1 #"), (re.compile(r"\b(Table|Figure) \d+"), r"\1 #"),
              (re.compile(r"[\w.-]+\.(?:md|txt|html?):\d+"), "PAGE:#"), (re.compile(r"\b\d+(?:\.\d+){2,}\b"), "§"))


def _unnumbered(message: str) -> str:
    """A message with the page's own numbering masked: page lines, table and figure numbers, section numbers."""
    for rx, to in _NUMBERING:
        message = rx.sub(to, message)
    return message


def _errata(old: Sequence[Any], new: Sequence[Any], old_sections: Sequence[Named], new_sections: Sequence[Named]
            ) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """(persisting, new, fixed): the errata of two releases matched one to one by section identity (the
    sections paired by what they say; unpaired: their own numbers), operand, types, kind and message with the
    numbering masked.  Each shown as its release states it (``errata_key``), in that order."""
    pairs = pair_sections(old_sections, new_sections)
    same_old = {a.number: f"#{k}" for k, (a, _) in enumerate(pairs)}
    same_new = {b.number: f"#{k}" for k, (_, b) in enumerate(pairs)}

    def key(f: Any, same: dict[str, str]) -> tuple[str, ...]:
        return (same.get(f.section, f.section), f.operand, "_".join(f.types), f.kind, _unnumbered(f.message))

    left: dict[tuple[str, ...], list[str]] = {}
    for f in old:
        left.setdefault(key(f, same_old), []).append(errata_key(f))
    persisting: list[str] = []
    added: list[str] = []
    for f in new:
        k = key(f, same_new)
        if left.get(k):
            left[k].pop(0)
            persisting.append(errata_key(f))
        else:
            added.append(errata_key(f))
    fixed = [x for xs in left.values() for x in xs]
    return tuple(sorted(set(persisting))), tuple(sorted(set(added))), tuple(sorted(set(fixed)))


def diff(old: Sequence[Spec], new: Sequence[Spec], old_findings: Sequence[Any] = (),
         new_findings: Sequence[Any] = (), timeout: float = DEFAULT_TIMEOUT,
         old_sections: Sequence[Named] = (), new_sections: Sequence[Named] = (),
         releases: tuple[str, str] = ("", "")) -> DiffResult:
    """Pair the layouts of ``old`` and ``new`` by id and say what changed (both engines for maps); the errata of
    the text (``old_findings``, ``new_findings``) persisting, new or fixed, by the sections of each side
    (``old_sections``, ``new_sections``: every section of the pages, as each release states it)."""
    fa_all = {lay.id: lay for s in old for lay in s.layouts}
    fb_all = {lay.id: lay for s in new for lay in s.layouts}
    changed: list[Change] = []
    undecided: list[Change] = []
    unchanged: list[str] = []
    for lid in sorted(set(fa_all) & set(fb_all)):
        fa, fb = register_facts(fa_all[lid]), register_facts(fb_all[lid])
        what = [k for k in fa if fa[k] != fb[k]]
        notes = [f"{k}: {fa[k]!r} -> {fb[k]!r}" for k in what]
        cex = None
        engines: dict[str, str] = {}
        if "domain" not in what and "matrix" not in what:
            r = _compare_maps(fa_all[lid], fb_all[lid], timeout)
            engines = dict(r.engines)
            if r.status in ("unknown", "error"):
                undecided.append(Change(lid, ("map",), r.message, r.counterexample, engines))
                continue
            if r.status == "refuted":
                what.insert(0, "map")
                notes.insert(0, r.message)
                cex = r.counterexample
        else:
            what.insert(0, "map")
        if what:
            changed.append(Change(lid, tuple(what), "; ".join(notes), cex, engines))
        else:
            unchanged.append(lid)
    old_pages, new_pages = _pages_only(old), _pages_only(new)
    ma = {m.id: m for sp in old for m in sp.maps}
    mb = {m.id: m for sp in new for m in sp.maps}
    for mid in sorted(set(ma) & set(mb)):
        change = _compare_map_layouts(ma[mid], mb[mid], timeout)
        if change is None:
            unchanged.append(mid)
        elif change.what == ("undecided",):
            undecided.append(change)
        else:
            changed.append(change)
    a: dict[str, Layout | MapLayout] = {**fa_all, **ma}
    b: dict[str, Layout | MapLayout] = {**fb_all, **mb}
    unchanged.sort()
    compared = old_pages == new_pages  # both doc pages (both sides' errata are text) or both spec files
    persisting, new_errata, fixed = _errata(old_findings, new_findings, old_sections, new_sections) if compared \
        else ((), (), ())
    sections = section_changes(old_sections, new_sections) if old_sections and new_sections else None
    added, removed = sorted(set(b) - set(a)), sorted(set(a) - set(b))
    outside = [lid for lid in removed if new_pages and not old_pages and not _page_states(a[lid])]
    outside += [lid for lid in added if old_pages and not new_pages and not _page_states(b[lid])]
    return DiffResult(tuple(x for x in added if x not in outside), tuple(x for x in removed if x not in outside),
                      tuple(changed), tuple(unchanged), new_errata, fixed,
                      tuple(undecided), tuple(sorted(outside)),
                      tuple(sorted({_family(a.get(x) or b[x]) for x in outside})), compared,
                      persisting, sections, releases)


def _family(lay: Any) -> str:
    """What ``outside`` names a layout by: its instruction, or for a layout of no instruction (a storage layout)
    its kind (``storage layouts``)."""
    return lay.instruction or f"{getattr(lay, 'kind', '') or 'map'} layouts"


def _page_states(lay: Any) -> bool:
    """A doc page can state this layout: an mma/mma.sp fragment, a shared-memory map, or a map of the tcgen05
    descriptor page (its fields and swizzle codes)."""
    if isinstance(lay, MapLayout):  # the shared-memory pages' own layouts (a correction or a derived map is ours)
        return (lay.kind in ("shared", "swizzle") or lay.id in PAGE_MAPS) and not lay.corrected and not lay.provenance.derived
    return lay.instruction in PAGE_INSTRUCTIONS


def _compare_map_layouts(old: MapLayout, new: MapLayout, timeout: float) -> Change | None:
    """None when the two are the same map with the same facts; else the change (both engines decide the map)."""
    def facts(m: MapLayout) -> dict[str, str]:
        envs = bindings(m.map)  # sizes compared by value at every binding (``8 * T`` is ``T * 8``)
        dims = lambda ds: ", ".join(f"{d.name}:" + "/".join(str(d.at(e)) for e in envs) for d in ds)  # noqa: E731
        return {"kind": m.kind, "inputs": dims(m.inputs), "outputs": dims(m.outputs), "unit": m.unit,
                "checks": " ".join(m.checks),
                "params": "; ".join(f"{p.name} = {p.describe()}" for p in m.params)}
    fa, fb = facts(old), facts(new)
    what = [k for k in fa if fa[k] != fb[k]]
    notes = [f"{k}: {fa[k]!r} -> {fb[k]!r}" for k in what]
    if "inputs" in what or "outputs" in what or "params" in what:
        return Change(old.id, ("map", *what), "; ".join(notes))
    r = same(old.map, new.map, timeout, ("old", "new"), check="map")
    if r.status in ("unknown", "error"):
        return Change(old.id, ("undecided",), r.message, r.counterexample, dict(r.engines))
    if r.status == "refuted":
        return Change(old.id, ("map", *what), "; ".join([r.message, *notes]), r.counterexample, dict(r.engines))
    return Change(old.id, tuple(what), "; ".join(notes), None, dict(r.engines)) if what else None


def _pages_only(specs: Sequence[Spec]) -> bool:
    """Every spec of the set was read from a doc page (a set of spec files, or a mix, is not)."""
    return bool(specs) and all(s.page for s in specs)
