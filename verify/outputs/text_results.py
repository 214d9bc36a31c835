"""Results -> text, for the results of one instruction and of the layouts-people-write commands
(``conform``, ``handoff``, ``handoff --reduce``, a family's members): the checks make the data (the types of
``verify.results``), this module only words it."""
from __future__ import annotations

from typing import TYPE_CHECKING, Union

from ..layout.elements import number_ranges
from ..layout.model import Layout
from ..results import InstructionResult

if TYPE_CHECKING:  # the layouts-people-write modules load on first use (``check`` never needs them)
    from ..results.conform import ConformResult
    from ..results.handoff import HandoffResult, Step
    from ..results.members import FamilyResult, Incompatible
    from ..results.reduce import ReduceResult

_MARK = {"proved": "ok", "refuted": "FAIL", "unknown": "??", "error": "ERR"}


def instruction_lines(ins: InstructionResult) -> list[str]:
    """An instruction's (or a relation's) line of ``check``, and one line per check not plainly proved."""
    # metadata_invalid is refuted by design (the doc calls those values invalid): as expected it reads ok
    marks = " ".join(f"{c.check}:{'ok' if c.check == 'metadata_invalid' and c.as_expected else _MARK.get(c.status, c.status)}"
                     for c in ins.checks)
    tag = "" if ins.as_expected else "  <-- UNEXPECTED"
    known = "  (known erratum)" if ins.as_expected and any(
        c.expected == "refuted" and c.check != "metadata_invalid" for c in ins.checks) else ""
    out = [f"{ins.id:44s} {marks}{known}{tag}"]
    for c in ins.checks:
        if c.check == "metadata_invalid" and c.as_expected:
            continue  # the collision the doc predicts; its witness is in JSON
        if c.status != "proved" or c.expected != "proved":
            exp = "" if c.as_expected else f" [expected {c.expected}]"
            out.append(f"    {c.check} {c.status}{exp}: {c.message}")
    reasons: dict[str, list[str]] = {}
    for name, why in sorted(ins.derived.items()):
        reasons.setdefault(why, []).append(name)
    for why, names in reasons.items():
        short = why.split(" (")[0].split(": ")[0]
        out.append(f"    derived, not stated by the doc text: {', '.join(names)} ({short[:110]}; see JSON 'derived')")
    return out


def conform_text(r: ConformResult) -> str:
    """What ``conform`` decided, as ``ptx-verify conform`` prints it."""
    if r.given.provenance.spec_path in ("", "argument"):
        text = " ".join(r.text.split())
        shown = repr(text if len(text) <= 80 else text[:77] + "...")
    else:
        shown = r.given.provenance.spec_path
    member = (" (" + ", ".join(f"{k} = {v}" for k, v in r.spec.params_bound) + ")") if r.spec.params_bound else ""
    lines = [f"conform {r.spec.id}{member} <- {r.notation or 'layout'} {shown}: {r.status}"]
    if r.member_note:
        lines.append(f"  member: {r.member_note}")
    if r.given.provenance.derived:
        lines.append(f"  note: {r.given.provenance.derived}")
    if r.status == "permuted" and r.permutation is not None and r.tiling is not None:
        lines.append(f"  every thread holds the cells of the spec's {r.spec.operand} tiled over the block in another "
                     f"element order, per {r.tiling.name} (given <- tiled spec): {r.permutation.text()}")
    elif r.status == "permuted" and r.permutation is not None:
        lines.append(f"  every lane holds the spec's cells in another element order "
                     f"(given <- spec): {r.permutation.text()}")
    if r.status == "replicated" and r.replication is not None:
        lines.append(f"  {r.replication.describe()}")
    if r.tiling is not None:
        lines.extend(f"  {x}" for x in r.tiling.describe(r.status in ("tiled", "permuted")))
    if r.message and r.status not in ("equal", "tiled"):
        lines.extend(f"  {m}" for m in r.message.split("\n"))
    if r.hint:
        lines.append(f"  hint: {r.hint}")
    if r.engines:
        lines.append("  engines: " + ", ".join(f"{k} {v}" for k, v in r.engines.items()))
    else:
        lines.append("  engines: none (there is no map to compare with)")
    if r.given_checks:
        lines.append("  the given itself: " + ", ".join(f"{c.check} {c.status}" for c in r.given_checks))
        lines.extend(f"    {c.check}: {c.message}" for c in r.given_checks
                     if c.status != "proved" and c.message)
    return "\n".join(lines) + "\n"


def _named(lay: Layout) -> str:
    """A layout's id, with the member of a family it is (``wgmma.m64nNk16.D.f32 (N = 24)``)."""
    if not lay.params_bound:
        return lay.id
    return f"{lay.id} (" + ", ".join(f"{k} = {v}" for k, v in lay.params_bound) + ")"


def _source_name(r: HandoffResult, s: Step) -> str:
    src = r.source.operand
    if s.src_lane is None:
        return "nothing (no lane holds it)"
    tile_part = f"tile {s.tile} " if r.grid != (1, 1) else ""
    return f"{src} {tile_part}{s.element}"


def handoff_text(r: HandoffResult) -> str:
    """A handoff's verdict and its exchange plan, as ``ptx-verify handoff`` prints it."""
    from ..results.handoff import WARP
    src, dst = r.source, r.target
    gr, gc = r.grid
    lines = [f"handoff {_named(src)} -> {_named(dst)}: {r.status}"]
    if r.status == "unspecified":
        lines.append(f"  {r.message}")
        lines.append("  engines: none (there is no map to decide on)")
        return "\n".join(lines) + "\n"
    lines.extend(f"  note: {n}" for n in r.notes)
    if r.grid != (1, 1):
        lines.append(f"  {src.operand} ({src.rows} x {src.cols}) tiled {gr} x {gc} covers {dst.operand} "
                     f"({dst.rows} x {dst.cols}); tiled element {src.n_elements}*t+j is tile t element "
                     f"{src.prefix}j, tile t at row offset {src.rows}*(t/{gc}), col offset {src.cols}*(t%{gc})")
    if r.status == "free" and r.identity():
        lines.append(f"  the same layout: every (thread, i) of {dst.operand} already holds its cell as element i "
                     f"({dst.threads} threads x {dst.n_elements} elements); nothing moves")
    elif r.status == "free":
        lines.append(f"  every lane already holds the {dst.n_elements} cells of {dst.operand} it needs; "
                     "element mapping" + (" (every lane):" if len(r.mapping_groups()) == 1 else ":"))
        for lanes, steps in r.mapping_groups():
            indent = "    "
            if len(r.mapping_groups()) > 1:
                lines.append(f"    lanes {number_ranges(list(lanes))}:")
                indent = "      "
            lines.extend(f"{indent}{dst.operand} {dst.element_name(s.i)} <- {_source_name(r, s)}" for s in steps)
    elif r.status in ("shuffle", "missing", "shared"):
        lines.append(f"  {r.message}")
        moving = r.moving
        lines.append(f"  {r.lanes_receiving} of {dst.threads} lanes receive {len(moving)} of "
                     f"{len(r.plan)} values from {r.lanes_sending} other lanes; "
                     f"{sum(1 for s in r.plan if s.src_lane == s.lane)} stay in their lane")
        if dst.threads > WARP and r.status == "shuffle":
            lines.append(f"  every value stays inside its warp ({dst.threads // WARP} warps): shuffles within "
                         "warps (shfl.sync), no shared memory")
        if r.status == "shared":
            lines.extend(_warp_exchange_lines(r))
        lines.append("  exchange (destination <- source lane and element):")
        n = dst.n_elements
        big = dst.threads > WARP  # several warps: the first lanes and values, every one in --format json
        shown = 0
        for lane in range(dst.threads):
            plan_steps = [s for s in r.plan[lane * n:(lane + 1) * n] if s.moves or s.src_lane is None]
            if not plan_steps:
                continue
            if big and shown == 8:
                lines.append("    ... (every lane: --format json, plan)")
                break
            shown += 1
            more = len(plan_steps) - 8 if big and len(plan_steps) > 8 else 0
            lines.append(f"    lane {lane}: " + ", ".join(
                f"{dst.element_name(s.i)} <- " + (f"lane {s.src_lane} {_source_name(r, s)}"
                                                  if s.src_lane is not None else "nothing")
                for s in (plan_steps[:8] if more else plan_steps)) + (f", ... ({more} more)" if more else ""))
    elif r.message:
        lines.append(f"  {r.message}")
    lines.append("  engines: " + ", ".join(f"{k} {v}" for k, v in r.engines.items()))
    return "\n".join(lines) + "\n"


def _warp_exchange_lines(r: HandoffResult) -> list[str]:
    """Which warps each warp reads from through shared memory (the first 8 destination warps)."""
    exchange = r.warp_exchange()
    across = sum(k for _, _, k in exchange)
    lines = [f"  through shared memory: {across} values cross warps; per warp, the warps it reads from:"]
    dests = sorted({d for d, _, _ in exchange})
    for d in dests[:8]:
        by_count: dict[int, list[int]] = {}
        for d2, src_w, k in exchange:
            if d2 == d:
                by_count.setdefault(k, []).append(src_w)
        lines.append(f"    warp {d} <- " + "; ".join(
            f"warp{'s' if len(ws) > 1 else ''} {number_ranges(ws)}: {k} values{' each' if len(ws) > 1 else ''}"
            for k, ws in sorted(by_count.items(), key=lambda kv: kv[1])))
    if len(dests) > 8:
        lines.append(f"    ... ({len(dests) - 8} more warps: --format json, plan)")
    return lines


def reduce_text(r: ReduceResult) -> str:
    """A butterfly reduction's verdict, as ``ptx-verify handoff --reduce`` prints it."""
    from ..results.reduce import span
    masks = ", ".join(map(str, r.masks))
    lines = [f"reduce {_named(r.layout)} along {r.axis} by shfl.xor {masks}: {r.status}"]
    reach = ", ".join(map(str, span(r.masks)))
    owners = ", ".join(map(str, r.owners))
    lines.append(f"  each lane l combines lanes l xor {reach}; lanes that own one {r.axis}: {owners}")
    if r.status == "exact":
        lines.append(f"  every lane's butterfly reaches exactly the lanes that own each of its {r.axis}s")
    else:
        lines.append(f"  first: {r.check.message}")
        c = r.counterexample
        if c is not None and c["other"] // 32 != c["lane"] // 32:
            lines.append(f"  lane {c['other']} is in warp {c['other'] // 32}, lane {c['lane']} in warp {c['lane'] // 32}: "
                         "no shuffle reaches across warps (combine the warps' partial results through shared memory)")
    if r.hint is not None:
        lines.append(f"  hint: shfl.xor {', '.join(map(str, r.hint))} reaches exactly the owners of every {r.axis} "
                     "(proved, both engines)")
    lines.append("  engines: " + ", ".join(f"{k} {v}" for k, v in r.engines.items()))
    return "\n".join(lines) + "\n"


def family_text(fam: FamilyResult) -> str:
    """A command run on several members of a family: the statuses by member, then the first member's text."""
    from ..results.members import binding_text, bindings_text
    groups = fam.groups()
    if len(groups) == 1:
        head = f"{fam.label}: {fam.status} for every member ({bindings_text(groups[0][1])})"
    else:
        head = f"{fam.label}: {fam.status} (" + "; ".join(f"{s} at {bindings_text(e)}" for s, e in groups) + ")"
    env, r = fam.first()
    lines = [head, f"  the first member {binding_text(env)}:" if len(fam.members) > 1 else ""]
    body = result_text(r).rstrip("\n").split("\n")
    lines += ["  " + x for x in body]
    return "\n".join(x for x in lines if x) + "\n"


def incompatible_text(r: Incompatible) -> str:
    return f"  {r.message}\n"


Result = Union["ConformResult", "HandoffResult", "FamilyResult", "Incompatible", "ReduceResult"]


def result_text(r: Result) -> str:
    """The text of a ``conform`` or ``handoff`` result (one member's, or a family's)."""
    from ..results.conform import ConformResult
    from ..results.handoff import HandoffResult
    from ..results.members import FamilyResult
    from ..results.reduce import ReduceResult
    if isinstance(r, ReduceResult):
        return reduce_text(r)
    if isinstance(r, ConformResult):
        return conform_text(r)
    if isinstance(r, HandoffResult):
        return handoff_text(r)
    if isinstance(r, FamilyResult):
        return family_text(r)
    return incompatible_text(r)


__all__ = ["conform_text", "family_text", "handoff_text", "incompatible_text", "instruction_lines", "reduce_text", "Result",
           "result_text"]
