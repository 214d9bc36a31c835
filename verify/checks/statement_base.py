"""The frame every judge of a page's statements shares (``verify.checks.statements``): a verdict, the context a
statement is judged in (the reviewed layouts and maps, the page's statements), the registry of judges by kind, the
errata the reviewed record names by the value a page states, and the comparison with a reviewed layout's fact at
every member of a family (the doc layout's value where the reviewed record corrects it is the known erratum)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from ..errors import SpecError
from ..formula import FormulaError
from ..layout.family import extent_at
from ..layout.model import Layout, MapLayout, Spec
from ..layout.statements import Statement

REVIEWED = "the reviewed specs"
PAGE = "the page's other statements"


@dataclass(frozen=True)
class Verdict:
    status: str          # proved | refuted | unknown | error
    message: str
    against: str = REVIEWED
    expected: str = "proved"
    also: tuple[Statement, ...] = ()  # the page's other statements it contradicts: each gets the finding too


def agree(message: str, against: str = REVIEWED) -> Verdict:
    return Verdict("proved", message, against)


def differ(message: str, against: str = REVIEWED, also: tuple[Statement, ...] = ()) -> Verdict:
    return Verdict("refuted", message, against, also=also)


def known(message: str, against: str = REVIEWED) -> Verdict:
    return Verdict("refuted", message, against, "refuted")


@dataclass
class Context:
    """What a statement is judged by: the reviewed layouts and maps (doc layouts and their corrections, by id),
    every statement of the pages, the solver budget."""

    layouts: dict[str, Layout]
    maps: dict[str, MapLayout]
    statements: tuple[Statement, ...]
    timeout: float
    memo: dict[Any, Any] = field(default_factory=dict)

    @staticmethod
    def of(spec: Spec, timeout: float) -> "Context":
        layouts = {x.id: x for x in spec.reviewed if isinstance(x, Layout)}
        maps = {x.id: x for x in spec.reviewed if isinstance(x, MapLayout)}
        return Context(layouts, maps, tuple(spec.statements), timeout)

    def doc_layouts(self) -> list[Layout]:
        return [lay for lay in self.layouts.values() if not lay.corrected]

    def anchored(self, subject: str) -> list[Layout]:
        """The reviewed doc layouts of the section a ``section:ANCHOR`` subject names (by its anchor, or by its title
        where the page gives the heading no anchor)."""
        from ..catalog.known import squeeze
        key = subject.removeprefix("section:")
        return [lay for lay in self.doc_layouts() if (lay.provenance.source.anchor and lay.provenance.source.anchor == key)
                or (squeeze(lay.provenance.source.title) == squeeze(key) and squeeze(key))]

    def instruction(self, name: str) -> list[Layout]:
        return [lay for lay in self.doc_layouts() if lay.instruction == name]

    def fixed(self, lay: Layout) -> Layout | None:
        return lay.correction

    def same(self, st: Statement) -> list[Statement]:
        return [s for s in self.statements if s.kind == st.kind and s.subject == st.subject and not s.unread]


Judge = Callable[[Statement, Context], "Verdict | None"]
JUDGES: dict[str, Judge] = {}
# the kinds whose statements of one subject must all say the same (judged against each other as well)
CONSISTENT: set[str] = set()


def judges(*kinds: str, consistent: bool = False) -> Callable[[Judge], Judge]:
    def register(fn: Judge) -> Judge:
        for k in kinds:
            assert k not in JUDGES, f"two judges of statements of kind {k!r}"
            JUDGES[k] = fn
            if consistent:
                CONSISTENT.add(k)
        return fn
    return register


# Errata of the text the reviewed record names, by what the statement states (a fixed page states something else
# and is proved; a page changed to a third value is a new finding).  docs/catalog.md lists them.
KNOWN: dict[tuple[str, str, Any], str] = {}


def known_erratum(kind: str, subject: str, value: Any, note: str) -> None:
    KNOWN[(kind, _known_subject(subject), value)] = note


def _known_subject(subject: str) -> str:
    """A section subject by its letters and digits (an anchor and a title with other spacing are one key)."""
    from ..catalog.known import squeeze
    return "section:" + squeeze(subject[len("section:"):]) if subject.startswith("section:") else subject


# ----------------------------------------------------------------------------- helpers

def by_engines(r: Any, ok: str, bad: str) -> Verdict:
    """A verdict from a ``CheckResult`` both engines decided (``unknown``/``error`` stay what they are)."""
    if r.status == "proved":
        return agree(f"{ok} (both engines)")
    if r.status == "refuted":
        return differ(f"{bad}: {r.message}")
    return Verdict(r.status, f"{bad}? {r.message}")


_SAME: dict[Any, Any] = {}  # maps.same's results by the two maps' values (keys): a page checked again reuses them


def same_map(a: Any, b: Any, timeout: float, names: tuple[str, str]) -> Any:
    """``maps.same`` (both engines) of two maps, memoised by their values within a process (bounded): the statements
    of a page mostly restate maps that were decided before (a page checked again, a row and its worked example)."""
    from .maps import same
    key = (a.key(), b.key(), timeout, names)
    hit = _SAME.get(key)
    if hit is None:
        if len(_SAME) > 4096:
            _SAME.clear()
        hit = _SAME[key] = same(a, b, timeout, names, check="statement")
    return hit




def members(lay: Layout) -> list[dict[str, int]]:
    """Every binding of a family's parameters ([{}] for a plain layout)."""
    return [env for env, _ in lay.instances()] if lay.is_family else [{}]


def _expr_values(text: str, lay: Layout) -> list[int] | str:
    """``N/4`` at every member of ``lay`` (or why it does not read)."""
    from ..formula.parser import parse_expression
    params = tuple(p.name for p in lay.domain.params)
    try:
        e = parse_expression(text.replace(" ", ""), params) if not text.isdigit() else int(text)
        return [extent_at(e, env) for env in members(lay)]
    except (FormulaError, SpecError, ZeroDivisionError, ValueError, ArithmeticError) as err:
        return f"{text!r} does not read as a count over {', '.join(params) or 'no parameter'} ({err})"


def _per_member(lay: Layout, get: Callable[[Layout, dict[str, int]], Any]) -> list[Any]:
    return [get(lay, env) for env in members(lay)]


def _show(v: Any) -> str:
    if isinstance(v, frozenset):
        items = sorted(v, key=lambda x: (str(type(x)), x))
        return "{" + ", ".join(map(str, items)) + "}"
    if isinstance(v, tuple):
        return "(" + ", ".join(_show(x) for x in v) + ")"
    return str(v)


def against_layout(st: Statement, ctx: Context, lay: Layout | None, what: str,
                   page: Callable[[Layout], Any], reviewed: Callable[[Layout], Any]) -> Verdict:
    """The page's value (``page(lay)``: the statement read for this layout; a list: one value per member of a
    family) against the reviewed doc layout's and its correction's (``reviewed``): the doc's value where the
    reviewed record corrects it is the known erratum."""
    if lay is None:
        return differ(f"no reviewed spec records {st.subject}, so the page states a layout that is new")
    mine = page(lay)
    if isinstance(mine, str) and mine.startswith("!"):
        return differ(mine[1:])
    doc = reviewed(lay)
    fixed = ctx.fixed(lay)
    good = reviewed(fixed) if fixed is not None else doc
    if mine == good:
        return agree(f"{what} {_show(st.value)}, as the reviewed {lay.id}" + (" corrects it" if fixed is not None
                                                                               and doc != good else ""))
    if mine == doc:
        return known(f"{what} {_show(st.value)} is the erratum the reviewed {lay.id} records; its correction: "
                     + _first_difference(lay, mine, good, "the page", "the correction"))
    return differ(f"the page states {what} {_show(st.value)}, not the reviewed {lay.id}'s: "
                  + _first_difference(lay, mine, doc, "the page", "the reviewed"))


def _first_difference(lay: Layout, a: Any, b: Any, name_a: str, name_b: str) -> str:
    """Where two values (per-member lists of a family, or plain values) first differ, in words."""
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        envs = members(lay)
        for env, x, y in zip(envs, a, b):
            if x != y:
                at = ", ".join(f"{k} = {v}" for k, v in env.items())
                return f"{'at ' + at + ': ' if at else ''}{name_a} {_brief(x)}, {name_b} {_brief(y)}"
    return f"{name_a} {_brief(a)}, {name_b} {_brief(b)}"


def _brief(v: Any) -> str:
    if isinstance(v, tuple) and len(v) > 8:
        return "(" + ", ".join(map(str, v[:4])) + ", ..., " + ", ".join(map(str, v[-2:])) + f") ({len(v)})"
    return _show(v)


