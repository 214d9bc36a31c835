"""The per-fragment properties, each decided by two independent engines.

``count``/``elements``/``packing`` are arithmetic on what the doc says of the registers.
``in_range``/``injective``/``surjective`` are the one decider's (``verify.checks.maps``, on the fragment as a
named map, ``layout.map``): Z3 (from the layout's symbolic face) and exhaustive
enumeration (from its evaluation over the whole domain), the verdict theirs jointly
(``verify.results.combine_engines``, a disagreement an ``error``, never silently resolved), said here in the
doc's terms (``verify.checks.family`` says a family's and a partial map's the same way).  Everything here reads
a layout only through the layout model, so it holds for every notation.
"""
from __future__ import annotations

import dataclasses
import time
from typing import Any, Callable, Hashable, Iterable


from ..engines import oracle, smt
from ..errors import SpecError
from ..layout.elements import split_element_list
from ..layout.model import Layout, Spec, cells_of, clear_cells, mapping_digest
from ..layout.sparse import clear_caches as clear_sparse_caches
from ..layout.types import ELEMENT_BITS, REGISTER_BITS, elements_per_thread, packs
from ..layout.dims import thread_dim_name
from ..results import CheckResult, Finding, LayoutResult, combine_engines
from ..witnesses import ElementList, RegisterCount, RegisterPacking, TextPosition, fragment_witness
from ..layout.dims import output_name
from ..layout.model import MAP_CHECKS
from . import maps
from .maps import DEFAULT_TIMEOUT
from ..layout.model import bound_of, cell_at

DECIDED = ("proved", "refuted")  # verdicts that do not depend on the solver budget (the only ones memoised)


class BoundError(ValueError):
    """Formula values may leave the 64-bit range: bad input, reported with a position."""


def width(layout: Layout) -> int:
    """Bit-vector width for this layout, from a sound interval bound on every value."""
    bound = max(layout.threads, layout.n_elements, layout.rows, layout.cols, layout.groups,
                bound_of(layout), layout.domain.bound())
    w = smt.width_for(bound)
    if w > smt.MAX_WIDTH:
        raise BoundError(f"{layout.id}: formula values may reach {bound}, beyond 64 bits")
    return w


def _element(layout: Layout, lane: int, i: int) -> dict[str, Any]:
    return {"lane": lane, "i": i, "element": layout.element_name(i)}


def _mma(layout: Layout, d: dict[str, Any], group: int) -> dict[str, Any]:
    if layout.groups > 1:
        d["mma"] = group
    return d


# ----------------------------------------------------------------------------- arithmetic checks

def check_count(layout: Layout) -> CheckResult:
    per_thread = layout.register_count * layout.regs.elements_per_register
    total = per_thread * layout.lanes_per_group
    want = layout.rows * layout.cols
    problems = []
    if elements_per_thread(layout.rows, layout.cols, layout.lanes_per_group) != per_thread:
        problems.append(f"{layout.regs.count} registers x {layout.regs.elements_per_register} elements x "
                        f"{layout.lanes_per_group} threads = {total}, but the matrix has "
                        f"{layout.rows} x {layout.cols} = {want} elements")
    if layout.regs.element_list is not None and len(layout.regs.element_list) != per_thread:
        problems.append(f"{layout.regs.count} registers x {layout.regs.elements_per_register} elements = "
                        f"{per_thread} per thread, but the element list names {len(layout.regs.element_list)}")
    if layout.n_elements * layout.lanes_per_group != want and layout.regs.element_list is not None:
        problems.append(f"the element list ({layout.n_elements} per thread) x {layout.lanes_per_group} "
                        f"threads != {want}")
    cex: RegisterCount | None = None
    if problems:
        cex = RegisterCount(layout.regs.count, layout.regs.elements_per_register, per_thread,
                            len(layout.regs.element_list) if layout.regs.element_list else None, layout.lanes_per_group,
                            total, want)
    return CheckResult("count", "refuted" if problems else "proved", layout.expect.get("count", "proved"),
                       cex, "; ".join(problems), 0.0, {"arithmetic": "refuted" if problems else "proved"})


def check_elements(layout: Layout) -> CheckResult:
    """The doc's element list names prefix0..prefixN-1, in order, comma-separated."""
    expect = layout.expect.get("elements", "proved")
    if layout.regs.elements_text is None:
        return CheckResult("elements", "proved", expect, None, "no element list in the doc; names generated",
                           0.0, {"arithmetic": "proved"})
    text = layout.regs.elements_text.strip()
    names = split_element_list(text)
    want = [layout.element_name(k) for k in range(len(names))]
    for k, (got, exp) in enumerate(zip(names, want)):
        if got != exp:
            cex = ElementList(k, got, exp, text)
            return CheckResult("elements", "refuted", expect, cex,
                               f"element list {text!r}: position {k} is {got!r}, expected {exp!r}",
                               0.0, {"arithmetic": "refuted"})
    return CheckResult("elements", "proved", expect, None, "", 0.0, {"arithmetic": "proved"})


def check_packing(layout: Layout) -> CheckResult:
    """Elements per register must equal register width / element width, for every type."""
    expect = layout.expect.get("packing", "proved")
    rbits = REGISTER_BITS[layout.regs.type]
    for t in layout.types:
        ebits = layout.regs.element_bits or ELEMENT_BITS.get(t)
        if ebits is None:
            return CheckResult("packing", "error", expect, None, f"unknown element type {t!r}", 0.0, {})
        if packs(layout.regs.type, ebits) != layout.regs.elements_per_register:
            cex = RegisterPacking(layout.regs.type, rbits, t, ebits, layout.regs.elements_per_register, rbits // ebits)
            return CheckResult("packing", "refuted", expect, cex,
                               f"a .{layout.regs.type} register ({rbits} bits) holds {rbits // ebits} "
                               f".{t} ({ebits} bits), not {layout.regs.elements_per_register}",
                               0.0, {"arithmetic": "refuted"})
    return CheckResult("packing", "proved", expect, None, "", 0.0, {"arithmetic": "proved"})


# ----------------------------------------------------------------------------- combination

def _confirm_with_oracle(check: str, cex: dict[str, Any], layout: Layout) -> bool:
    """Re-evaluate a Z3 counterexample with the scalar oracle: every witness must be real."""
    group_of = layout.domain.group_of

    def point(t: int, i: int) -> tuple[int, int] | None:
        return cell_at(layout, t, i)
    if check == "in_range":
        cell = point(cex["lane"], cex["i"])
        g = group_of(cex["lane"])
        return cell is None or not (0 <= cell[0] < layout.rows and 0 <= cell[1] < layout.cols
                                    and 0 <= g < layout.groups)
    if check == "injective":
        a, b = cex["first"], cex["second"]
        ca, cb = point(a["lane"], a["i"]), point(b["lane"], b["i"])
        return (ca is not None and ca == cb == (cex["row"], cex["col"])
                and group_of(a["lane"]) == group_of(b["lane"]))
    if check == "surjective":
        # a hole: Z3 already showed nothing reaches it (a quantifier-free query) and it must equal the
        # enumeration's first hole; here the evaluated cells say the same
        c = cells_of(layout)
        reached = c.ok & (c.group[:, None] == cex.get("mma", 0)) & (c.row == cex["row"]) & (c.col == cex["col"])
        return not bool(reached.any())
    raise AssertionError(check)


def _message(check: str, layout: Layout, cex: dict[str, Any] | None) -> str:
    if cex is None:
        return ""
    mma = f" of MMA computation {cex['mma'] + 1}" if "mma" in cex else ""
    who = thread_dim_name(layout.threads)  # a warpgroup's or a block's thread 64 is no lane 64
    if check == "in_range":
        if cex["row"] is None:
            return (f"{who} {cex['lane']}, element {cex['element']}: no case of the formula applies "
                    f"(the formula does not define it)")
        return (f"{who} {cex['lane']}, element {cex['element']} lands at cell ({cex['row']}, {cex['col']}), "
                f"outside the {layout.rows} x {layout.cols} matrix{mma}")
    if check == "injective":
        a, b = cex["first"], cex["second"]
        return (f"{who} {a['lane']} element {a['element']} and {who} {b['lane']} element {b['element']} "
                f"both land at cell ({cex['row']}, {cex['col']}){mma}")
    return f"cell ({cex['row']}, {cex['col']}){mma} is held by no {who}"


def _combine(check: str, layout: Layout, z3_res: str, z3_cex: dict[str, Any] | None,
             enum_cex: dict[str, Any] | None, seconds: float) -> CheckResult:
    return combine_engines(check, layout.expect.get(check, "proved"), smt.status(z3_res),
                           fragment_witness(check, z3_cex), fragment_witness(check, enum_cex),
                           lambda c: _message(check, layout, dict(c)), seconds,
                           confirm=lambda c: _confirm_with_oracle(check, dict(c), layout),
                           same_witness=True)


def check_layout(layout: Layout, timeout: float = DEFAULT_TIMEOUT) -> LayoutResult:
    """Run every property of one layout with both engines.

    A formula that cannot be evaluated on its domain (division by zero, a shift out of
    range, values beyond 64 bits) is bad input: a ``SpecError`` at the spec file's line.
    """
    try:
        return _check_layout(layout, timeout)
    except oracle.EvalError as e:
        raise SpecError(*layout.locate(e.pos.line, e.pos.col), f"{layout.id}: {e.message}") from None
    except BoundError as e:
        raise SpecError(layout.provenance.spec_path or layout.provenance.source.file, layout.provenance.formula_line, 1, str(e)) from None


# Engine verdicts by what they depend on.  The catalog repeats itself (every m16n8kX C/D
# fragment is the same map; a section's .u8/.s8 and .e4m3/.e5m2 A fragments too): the
# same mathematical object is proved once per process, and each layout keeps its own
# expectations.
_ENGINE_MEMO: dict[tuple, tuple[tuple[CheckResult, ...], float]] = {}


def clear_caches() -> None:
    """Forget memoised verdicts and evaluations (benchmarks time cold runs)."""
    _ENGINE_MEMO.clear()
    clear_cells()
    clear_sparse_caches()


def engine_key(layout: Layout) -> tuple:
    """What the engines' verdicts depend on (element names too: witnesses name a0 or c0)."""
    return (layout.map.key(), layout.domain, layout.codomain, layout.operand)


def _check_layout(layout: Layout, timeout: float) -> LayoutResult:
    results = [check_count(layout), check_elements(layout), check_packing(layout)]
    return with_engines(layout, results, _ENGINE_MEMO, engine_key(layout), lambda: _check_engines(layout, timeout))


def with_engines(layout: Layout, results: list[CheckResult], memo: dict, key: Hashable,
                 compute: Callable[[], tuple[tuple[CheckResult, ...], float]]) -> LayoutResult:
    """``results`` plus the two engines' checks of ``layout``: computed, or reused from ``memo`` when the same
    map was decided before (each layout keeps its own expectations; a reused check reports 0 s).  Only
    decided verdicts are kept (every check ``proved`` or ``refuted``): an ``unknown`` (a budget spent) or an
    ``error`` is computed again, so a larger budget later gets its own answer."""
    if key in memo:
        engine, _ = memo[key]
        results = results + [dataclasses.replace(c, expected=layout.expect.get(c.check, "proved"), seconds=0.0)
                             for c in engine]
        return layout_result(layout, tuple(results), 0.0, engine_cached=True)
    checks, seconds = compute()
    if all(c.status in DECIDED for c in checks):
        memo[key] = (checks, seconds)
    return layout_result(layout, tuple(results) + checks, seconds)


def layout_result(layout: Layout, checks: tuple[CheckResult, ...], enumeration_seconds: float,
                  engine_cached: bool = False) -> LayoutResult:
    """A layout's result, with its map's digest (computed here, so renderers never evaluate the map)."""
    return LayoutResult(layout, checks, enumeration_seconds, engine_cached, digest=mapping_digest(layout))


def _check_engines(layout: Layout, timeout: float) -> tuple[tuple[CheckResult, ...], float]:
    """in_range, injective and surjective of the fragment as a named map (``layout.map``), decided
    by the one decider (``checks.maps``, both engines; injectivity ``anywhere``: no two elements on one cell,
    inside the matrix or not), each verdict then said in the fragment's words: its witness in the doc's terms
    (lane, element, cell, MMA computation), confirmed by the scalar oracle, and Z3's method for surjectivity."""
    width(layout)  # a formula whose values may pass 64 bits is refused (``BoundError``)
    t0 = time.perf_counter()
    m = layout.map
    evaluated = maps.evaluations(m)
    evaluated({})
    enum_seconds = time.perf_counter() - t0
    decided = maps.decide_all(m, MAP_CHECKS, timeout, evaluated, anywhere=True)
    z3_says = {r.check: r.engines.get("z3") for r in decided}
    results = [_in_fragment_words(layout, r) for r in decided]
    method = surjective_method(layout, z3_says, results[2].counterexample is not None)
    results[2] = dataclasses.replace(results[2], engines={**results[2].engines, "z3_method": method})
    return tuple(results), enum_seconds


def _in_fragment_words(layout: Layout, r: CheckResult) -> CheckResult:
    """A map verdict of ``checks.maps`` on the fragment as the fragment check says it (``_combine``: the witness in
    the doc's terms, its message, the oracle's confirmation); an ``error`` (the engines disagree) as it is."""
    if r.status == "error":
        return dataclasses.replace(r, expected=layout.expect.get(r.check, "proved"))
    cex = None if r.counterexample is None else fragment_cex(r.check, r.counterexample, layout)
    z3_res = {"proved": "unsat", "refuted": "sat"}.get(r.engines.get("z3", ""), "unknown")
    return _combine(r.check, layout, z3_res, cex if z3_res == "sat" else None, cex, r.seconds or 0.0)


def fragment_cex(check: str, w: Any, layout: Layout) -> dict[str, Any]:
    """A ``checks.maps`` witness on ``layout.map`` in the fragment's terms (``decide``'s dictionaries)."""
    row, col = (output_name(n) for n in layout.codomain.dims)
    if check == "in_range":
        at, lane = w.at, w.point[m_thread(layout)]
        return _mma(layout, {**_element(layout, lane, w.point["i"]), "row": None if at is None else at[row],
                             "col": None if at is None else at[col]}, layout.domain.group_of(lane))
    if check == "injective":
        t = m_thread(layout)
        a, b = w.first, w.second
        return _mma(layout, {"first": _element(layout, a[t], a["i"]), "second": _element(layout, b[t], b["i"]),
                             "row": w.at[row], "col": w.at[col]}, layout.domain.group_of(b[t]))
    return _mma(layout, {"row": w.at[row], "col": w.at[col]}, w.at.get("mma", 0))


def m_thread(layout: Layout) -> str:
    return thread_dim_name(layout.domain.threads)


def surjective_method(layout: Layout, z3_says: dict[str, Any], hole: bool) -> str:
    """How Z3 decided surjectivity (``z3_surjective``'s names): ``pigeonhole`` (as many points as cells, in_range
    and injective proved, or not decided), ``counting`` (fewer points, or in_range or injective refuted: a hole Z3
    confirms), ``hole`` (more points, a hole Z3 confirms) or ``witnesses`` (more points, every cell's first point
    confirmed)."""
    D = layout.threads * layout.n_elements
    C = layout.groups * layout.rows * layout.cols
    bij = (z3_says.get("in_range"), z3_says.get("injective"))
    if D < C or (D == C and "refuted" in bij):
        return "counting"
    if D == C:
        return "pigeonhole"
    return "hole" if hole else "witnesses"


def findings_for(results: Iterable[LayoutResult]) -> list[Finding]:
    """Every check that is not plainly proved-as-expected becomes a finding."""
    out: list[Finding] = []
    for lr in results:
        for c in lr.checks:
            if c.status == c.expected and c.status in ("proved", "n/a"):
                continue
            out.append(Finding(lr.layout.id, c.check, c.status, c.expected,
                               c.message or f"{c.check} {c.status}", c.counterexample))
    return out


def syntax_findings(specs: Iterable[Spec]) -> list[Finding]:
    out = []
    for s in specs:
        for f in s.syntax_findings:
            out.append(Finding(f.layout, "syntax", "refuted", f.expected,
                               f"{s.path}:{f.line}:{f.col}: the doc's formula does not parse: {f.message}",
                               TextPosition(s.path, f.line, f.col)))
    return out
