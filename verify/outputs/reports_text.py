"""Text of the results the other commands build: a reference's crosscheck, the agreement matrix,
a writer/reader decision (``consistent``) and a catalog diff.  Pure functions of the typed results in
``verify.results``; nothing here runs an engine."""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # types only: ``check`` renders a matrix note without loading the notations these import
    from ..results.consistency import Decision
    from ..results.crosscheck import CrosscheckReport, Row
    from ..results.diff import DiffResult


def crosscheck_text(rep: CrosscheckReport) -> str:
    """Each row (agree, differ, malformed; unmatched grouped by reason), then the summary."""
    via = "" if rep.reference == "cute-text" else f" (reference {rep.reference})"
    out = [f"crosscheck: {rep.title} in {rep.root} ({len(rep.headers)} headers) against the spec{via}"]
    wt = max([len(r.trait) for r in rep.rows if r.kind != "unmatched"] + [10])
    ws = max([len(r.spec) for r in rep.rows if r.spec] + [4])
    for kind in ("agree", "differ", "malformed"):
        for r in (r for r in rep.rows if r.kind == kind):
            if kind == "malformed":
                out.append(f"  {kind:<9}  {r.trait:<{wt}}     {r.header}:{r.line}: {r.detail}")
            else:
                tail = "" if kind == "agree" else f"  {r.status}: {r.detail}"
                spec = r.spec + "".join(f" {k}={v}" for k, v in r.params)
                out.append(f"  {kind:<9}  {r.trait:<{wt}}  {r.operand}  {spec:<{ws}}{tail}".rstrip())
    reasons: dict[str, list[Row]] = {}
    for r in (r for r in rep.rows if r.kind == "unmatched"):
        reasons.setdefault(r.detail, []).append(r)
    for reason, rows in reasons.items():
        names = sorted({f"{r.trait}{'.' + r.operand if r.operand else ''}" for r in rows})
        shown = ", ".join(names[:3]) + (f", ... ({len(names) - 3} more)" if len(names) > 3 else "")
        out.append(f"  unmatched  {len(rows)} x {reason}: {shown}")
    s = rep.summary()
    out.append(f"summary: {s['agree']} agree, {s['differ']} differ, {s['malformed']} malformed, "
               f"{s['unmatched']} unmatched; {s['templated']} templated traits (partial specialisations) not read")
    return "\n".join(out) + "\n"


def matrix_text(m: Any) -> str:
    """The agreement matrix (``checks.references.matrix.Matrix``) as a table: one line per layout, one
    column per reference (``=`` agrees, ``x`` differs, ``e`` differs as the doc's erratum, ``-`` absent,
    ``?`` unavailable), then the note and the findings."""
    mark = {"agrees": "=", "differs": "x", "absent": "-", "unavailable": "?"}
    w = max([len(lid) for lid in m.layouts] + [10])
    head = "  ".join(f"{r:>{max(len(r), 1)}}" for r in m.references)
    out = [f"{'layout':<{w}}  {head}  independent"]
    for lid in m.layouts:
        cells = "  ".join(f"{('e' if m.cells[lid][r].erratum else mark[m.cells[lid][r].status]):>{len(r)}}"
                          for r in m.references)
        out.append(f"{lid:<{w}}  {cells}  {len(m.origins(lid))}")
    out.append("")
    out.extend(matrix_groups(m))
    out.append("")
    out.extend(matrix_note(m, limit=0))
    for f in m.findings():
        out.append(f"  {f.layout}: {f.message}" + ("" if f.as_expected else "  <-- UNEXPECTED"))
    return "\n".join(out) + "\n"


# The catalog's layouts in the groups the coverage is read by: (title, id pattern), the first that matches.
GROUPS = (
    ("shared memory (wgmma, tcgen05)", r"(wgmma|tcgen05)\.shared\..*"),
    ("mma.sp", r"mma\.sp\..*"),
    ("mma.block_scale scale factors", r"mma\.block_scale\..*"),
    ("mma", r"mma\..*"),
    ("wgmma, wgmma.sp", r"wgmma\..*"),
    ("ldmatrix, stmatrix, movmatrix", r"(ldmatrix|stmatrix|movmatrix)\..*"),
    ("tcgen05.ld, tcgen05.st", r"tcgen05\.(ld|st)\..*"),
    ("Tensor Memory (data paths, packings, scale factors, tcgen05.cp)", r"tcgen05\..*"),
    ("wmma (the doc leaves them unspecified)", r"wmma\..*"),
    ("storage", r"storage\..*"),
)


def matrix_groups(m: Any) -> list[str]:
    """Per group of layouts: how many, how many each reference agrees with, how many two or more
    independent origins back, and how many of the rest a finding explains."""
    rows: dict[str, list[str]] = {title: [] for title, _ in GROUPS}
    rows["other"] = []
    for lid in m.layouts:
        rows[next((t for t, pat in GROUPS if re.fullmatch(pat, lid)), "other")].append(lid)
    head = ["group", "n", *m.references, ">=2", "explained"]
    table = []
    for title, ids in [*rows.items(), ("all", list(m.layouts))]:
        if not ids:
            continue
        agree = [sum(m.cells[lid][r].status == "agrees" for lid in ids) for r in m.references]
        two = sum(len(m.origins(lid)) >= 2 for lid in ids)
        expl = sum(len(m.origins(lid)) < 2 and bool(m.explained(lid)) for lid in ids)
        table.append([title, str(len(ids)), *map(str, agree), str(two), str(expl)])
    w = [max(len(r[k]) for r in [head, *table]) for k in range(len(head))]
    return ["  ".join(x.ljust(w[k]) if k == 0 else x.rjust(w[k]) for k, x in enumerate(r)).rstrip()
            for r in [head, *table]]


def matrix_note(m: Any, limit: int = 12) -> list[str]:
    """Lines for ``check --references``: what ran, the coverage, the layouts below two references (those
    no finding explains first; ``limit`` of them, 0 for none)."""
    cov = m.coverage()
    ran = ", ".join(f"{r} ({m.versions.get(r, '')})" for r in m.references if r not in m.unavailable)
    lines = [f"references: {ran or 'none'}"]
    for r, why in m.unavailable.items():
        lines.append(f"  {r}: unavailable ({why})")
    lines.append(f"backed by two or more independent references: {cov['two_or_more']} of {cov['layouts']} "
                 f"layouts ({cov['percent_two_or_more']}%); derived: {cov['derived_two_or_more']} of "
                 f"{cov['derived']}; with the {cov['explained_below_two']} a finding explains "
                 f"({cov['explained_by_equal_map']} of them the same map as a backed layout, "
                 f"{cov['explained_single_source']} one reference and a reviewed reason no second can state "
                 f"them, {cov['explained_unreferenced']} no reference and a reviewed reason, only a GPU can "
                 f"confirm them): "
                 f"{cov['percent_two_or_more_or_explained']}%")
    pref = cov.get("corrections_preferred")
    if pref:
        lines.append(f"corrections preferred ({cov['origins_ran']} origins ran): {pref['two_or_more']} of "
                     f"{pref['layouts']} layouts ({pref['percent_two_or_more']}%) agreed by two or more origins; "
                     f"derived: {pref['derived_two_or_more']} of {pref['derived']}; of the {pref['statable']} a "
                     f"reference can state (not the {pref['unspecified']} the doc leaves unspecified nor the "
                     f"{pref['modelled']} modelled programs): {pref['statable_two_or_more']} "
                     f"({pref['percent_statable_two_or_more']}%)")
    below = [lid for lid in m.layouts if len(m.origins(lid)) < 2]
    below.sort(key=lambda lid: bool(m.explained(lid)))   # those no finding explains first (stable)
    if below and limit:
        lines.append(f"fewer than two independent references ({len(below)}):")
        for lid in below[:limit]:
            agree = m.origins(lid)
            why = m.explained(lid)
            lines.append(f"  {lid}: " + (", ".join(agree) if agree else "none") + (f" ({why})" if why else ""))
        if len(below) > limit > 0:
            lines.append(f"  ... {len(below) - limit} more (--format json lists every layout)")
    return lines


def decision_lines(d: Decision) -> list[str]:
    """``consistent`` or the status, after each property: ok, or its verdict and witness."""
    from ..layout.dims import describe
    out = [f"writer: {d.writer}", f"reader: {d.reader}"]
    if d.copies:
        out.append(f"copies: {describe(d.copies)}: the writer writes each element at every one; a read of any is right")
    if d.broadcast:
        out.append(f"broadcast: {describe(d.broadcast)}: the reader reads the same place for every one (proved), "
                   "judged at 0")
    if d.params:
        out.append("for every " + ", ".join(f"{k} in {{{', '.join(map(str, v))}}}" for k, v in d.params.items()))
    for c in d.checks:
        out.append(f"  {c.check:<16} {'ok' if c.status == 'proved' else c.status.upper()}"
                   + ("" if c.status == "proved" else f": {c.message}"))
    out.append(d.status)
    return out


def diff_lines(r: DiffResult) -> list[str]:
    """The releases, then the added, removed, changed, undecided layouts, the sections renumbered, retitled, added
    and removed, the errata (new, fixed, persisting), then the summary line."""
    out = [f"PTX ISA {r.releases[0]} -> {r.releases[1]}"] if all(r.releases) else []
    out += [f"added      {x}" for x in r.added] + [f"removed    {x}" for x in r.removed]
    out += [f"changed    {c.layout}  ({', '.join(c.what)}): {c.message}" for c in r.changed]
    out += [f"undecided  {c.layout}: {c.message}" for c in r.undecided]
    sc = r.sections
    if sc is not None:
        out += [f"section    {a.number} -> {b.number}  {b.title} (renumbered)" for a, b in sc.renumbered]
        out += [f"section    {b.number}  {a.title!r} -> {b.title!r} (retitled)" for a, b in sc.retitled]
        out += [f"section +  {n.number} {n.title}" for n in sc.added] + [f"section -  {n.number} {n.title}" for n in sc.removed]
    out += [f"erratum +  {x}" for x in r.errata_added] + [f"erratum -  {x}" for x in r.errata_removed]
    out += [f"erratum =  {x}" for x in r.errata_persisting]
    if r.outside:
        out.append(f"outside    {len(r.outside)} layouts no doc page states (the doc gives them as figures "
                   f"only, or not at all: {', '.join(r.outside_instructions)}): not compared")
    errata = (f"{len(r.errata_persisting)} persisting, {len(r.errata_added)} new, {len(r.errata_removed)} fixed"
              if r.errata_compared else "not compared (one side is spec files)")
    sections = (f"; sections: {sc.paired} in both ({len(sc.renumbered)} renumbered, {len(sc.retitled)} retitled), "
                f"{len(sc.added)} added, {len(sc.removed)} removed" if sc is not None else "")
    out.append(f"{len(r.unchanged)} unchanged, {len(r.changed)} changed, {len(r.added)} added, "
               f"{len(r.removed)} removed, {len(r.undecided)} undecided"
               + (f", {len(r.outside)} outside what pages state" if r.outside else "")
               + f"; errata in the text: {errata}{sections}" + ("  -> DIFFERENT" if r.differs else ""))
    return out
