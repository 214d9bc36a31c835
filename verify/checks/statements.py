"""A doc page's statements judged: each against the reviewed specs, and against the page's other statements.

The readers (``verify.catalog.page_statements``) read what a page states, one value at its words
(``verify.layout.statements.Statement``); here each is decided, never as text but by meaning:

* a fact the reviewed specs record (a register count, a type, an element list expanded for every N, a set of
  valid N, a matrix shape, the registers per ``.num``, the modes an atom exists for...) is compared with the
  reviewed layout of the same id, at every member of a family;
* a statement about a map (a group of four consecutive threads holds a row, the next register holds the next
  matrix, a layout written in CuTe notation, Table 52's allowed modes) is decided by both engines
  (``verify.checks.maps.same``) against the reviewed map;
* a fact no reviewed spec records is held against the page's other statements of the same fact (and the
  arithmetic the page writes is redone).

A statement that agrees with the reviewed doc layout where the reviewed record corrects it, or that states the
value of an erratum the reviewed record names (``KNOWN``), is a known erratum: refuted, expected refuted.  Any
other difference is a finding at the statement's words, expected proved: ``check`` exits 1.

``judge(spec, timeout)`` gives a ``StatementResult`` per statement and the ``Finding``s of the ones that are not
proved.  Every kind a reader states has a judge here (``JUDGES``); ``tests/test_page_statements.py`` holds that.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable

from ..errors import SpecError
from ..formula import FormulaError
from ..layout.elements import element_list_at
from ..layout.family import extent_at
from ..layout.ids import corrected_id
from ..layout.model import Layout, MapLayout, Spec
from ..layout.statements import Statement
from ..results import Finding, StatementResult
from ..witnesses import TextPosition

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
        from ..catalog.known import squeeze  # noqa: PLC0415
        key = subject.removeprefix("section:")
        return [lay for lay in self.doc_layouts() if (lay.source.anchor and lay.source.anchor == key)
                or (squeeze(lay.source.title) == squeeze(key) and squeeze(key))]

    def instruction(self, name: str) -> list[Layout]:
        return [lay for lay in self.doc_layouts() if lay.instruction == name]

    def fixed(self, lay: Layout) -> Layout | None:
        return self.layouts.get(corrected_id(lay.id))

    def same(self, st: Statement) -> list[Statement]:
        return [s for s in self.statements if s.kind == st.kind and s.subject == st.subject and not s.unread]


Judge = Callable[[Statement, Context], "Verdict | None"]
JUDGES: dict[str, Judge] = {}
# the kinds whose statements of one subject must all say the same (judged against each other as well)
CONSISTENT: set[str] = set()


def judges(*kinds: str, consistent: bool = False) -> Callable[[Judge], Judge]:
    def register(fn: Judge) -> Judge:
        for k in kinds:
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
    from ..catalog.known import squeeze  # noqa: PLC0415
    return "section:" + squeeze(subject[len("section:"):]) if subject.startswith("section:") else subject


# SP-1 (docs/catalog.md): the sparse k64 metadata register "containing 16 4-bit vectors", 64 bits in a .b32
for _subject in ("section:asynchronous-warpgroup-level-matrix-fragment-sparse-wgmma-64n64",
                 "section:Matrix Fragments for sparse wgmma.mma_async.m64nNk64"):
    known_erratum("metadata-vectors", _subject, 16, "SP-1: a .b32 register holds 8 4-bit vectors")


# ----------------------------------------------------------------------------- helpers

def members(lay: Layout) -> list[dict[str, int]]:
    """Every binding of a family's parameters ([{}] for a plain layout)."""
    return [env for env, _ in lay.instances()] if lay.is_family else [{}]


def _expr_values(text: str, lay: Layout) -> list[int] | str:
    """``N/4`` at every member of ``lay`` (or why it does not read)."""
    from ..formula.parser import parse_expression  # noqa: PLC0415
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


# ----------------------------------------------------------------------------- register fragments

@judges("layout")
def _layout(st: Statement, ctx: Context) -> Verdict:
    if st.value in ctx.layouts:
        return agree(f"the reviewed specs record {st.value}")
    return differ(f"no reviewed spec records {st.value}: the page states a layout that is new (an instruction, "
                  "shape, operand or type the reviewed specs do not have)")


@judges("registers")
def _registers(st: Statement, ctx: Context) -> Verdict:
    def page(lay: Layout) -> Any:
        v = _expr_values(str(st.value), lay)
        return "!" + v if isinstance(v, str) else v
    return against_layout(st, ctx, ctx.layouts.get(st.subject), "registers", page,
                          lambda lay: _per_member(lay, lambda x, env: extent_at(x.registers, env)))


@judges("register-type")
def _register_type(st: Statement, ctx: Context) -> Verdict:
    return against_layout(st, ctx, ctx.layouts.get(st.subject), "register type", lambda lay: st.value,
                          lambda lay: lay.register_type)


@judges("elements-per-register")
def _per_register(st: Statement, ctx: Context) -> Verdict:
    return against_layout(st, ctx, ctx.layouts.get(st.subject), "elements per register", lambda lay: st.value,
                          lambda lay: lay.elements_per_register)


@judges("elements-total")
def _elements_total(st: Statement, ctx: Context) -> Verdict:
    return against_layout(st, ctx, ctx.layouts.get(st.subject), "elements in its registers",
                          lambda lay: [st.value] * len(members(lay)),
                          lambda lay: _per_member(lay, lambda x, env: extent_at(x.registers, env) * x.elements_per_register))


@judges("element-types")
def _element_types(st: Statement, ctx: Context) -> Verdict:
    return against_layout(st, ctx, ctx.layouts.get(st.subject), "element types", lambda lay: st.value,
                          lambda lay: frozenset(lay.types))


@judges("matrix")
def _matrix(st: Statement, ctx: Context) -> Verdict:
    return against_layout(st, ctx, ctx.layouts.get(st.subject), "the matrix", lambda lay: st.value,
                          lambda lay: lay.operand)


def _elements_of(text: str, lay: Layout) -> list[tuple[str, ...]] | str:
    params = tuple(p.name for p in lay.domain.params)
    try:
        return [element_list_at(text, env, params) for env in members(lay)]
    except (FormulaError, SpecError, ZeroDivisionError, ValueError, ArithmeticError, KeyError) as err:
        return f"the element list {text!r} does not read ({err})"


@judges("elements")
def _elements(st: Statement, ctx: Context) -> Verdict:
    def page(lay: Layout) -> Any:
        v = _elements_of(str(st.value), lay)
        return "!" + v if isinstance(v, str) else v

    def reviewed(lay: Layout) -> Any:
        v = _elements_of(lay.elements_text or "", lay)
        return None if isinstance(v, str) else v
    return against_layout(st, ctx, ctx.layouts.get(st.subject), "the element list", page, reviewed)


@judges("params")
def _params(st: Statement, ctx: Context) -> Verdict:
    def reviewed(lay: Layout) -> Any:
        return frozenset(v for p in lay.domain.params for v in p.values)
    return against_layout(st, ctx, ctx.layouts.get(st.subject), "the parameter's values", lambda lay: st.value, reviewed)


@judges("shape", consistent=True)
def _shape(st: Statement, ctx: Context) -> Verdict | None:
    lays = ctx.anchored(st.subject)
    if not lays:
        return None
    shapes = {str(lay.shape) for lay in lays}
    if st.value in shapes:
        return agree(f"the reviewed specs of this section state .{st.value}")
    return differ(f"the page names the shape .{st.value}, the reviewed specs of this section "
                  f"{', '.join('.' + s for s in sorted(shapes))}")


@judges("operand")
def _operand(st: Statement, ctx: Context) -> Verdict:
    op, where = st.value
    if where == "shared":
        if op in ("A", "B"):
            return agree(f"{op} read from shared memory (its layout is the shared-memory page's)", PAGE)
        return differ(f"operand {op} is no multiplicand: it is not read from shared memory", PAGE)
    lays = ctx.anchored(st.subject)
    if not lays:
        return agree(f"operand {op}; no reviewed spec records this section", PAGE)
    operands = {lay.operand for lay in lays}
    if op in operands:
        return agree(f"the reviewed specs of this section state operand {op}")
    return differ(f"the page names operand {op} in registers, the reviewed specs of this section state "
                  f"{', '.join(sorted(operands))}")


_HEADER = {"A": "atype", "B": "btype", "C": "ctype", "D": "dtype"}


@judges("type-header")
def _type_header(st: Statement, ctx: Context) -> Verdict:
    op = st.subject.removeprefix("operand:")
    want = _HEADER.get(op)
    if st.value == want or (op == "D" and st.value == "ctype"):
        return agree(f"the table of operand {op} is headed .{st.value}", PAGE)
    return differ(f"the table of operand {op} (its bullet) is headed .{st.value}, not .{want}", PAGE)


@judges("sparse-chunk")
def _sparse_chunk(st: Statement, ctx: Context) -> Verdict:
    lay = ctx.layouts.get(st.subject)
    if lay is None or not lay.sparse:
        return differ(f"no reviewed sparse layout {st.subject}")
    kept, chunk = lay.sparse["kept"], lay.sparse["chunk"]
    said, out_of, each = st.value
    held = lay.elements_per_register if each else lay.elements_per_register * extent_at(lay.registers, {})
    if said != held or out_of % chunk or said * chunk != kept * out_of:
        return differ(f"the reviewed {lay.id} keeps {kept} of each {chunk} elements: {held} non-zero elements come out of "
                      f"{held * chunk // kept}, not {said} of {out_of}")
    return agree(f"{said} of {out_of}: {kept} of each {chunk}, as the reviewed {lay.id}")


def _sparse_of(ctx: Context, subject: str) -> Layout | None:
    return next((lay for lay in ctx.anchored(subject) if lay.sparse), None)


@judges("metadata-register")
def _metadata_register(st: Statement, ctx: Context) -> Verdict:
    if st.value == "b32":
        return agree("a .b32 metadata register")
    return differ(f"the metadata operand is a .b32 register, not .{st.value}")


@judges("metadata-bits")
def _metadata_bits(st: Statement, ctx: Context) -> Verdict:
    lay = _sparse_of(ctx, st.subject)
    if lay is None:
        return differ("no reviewed sparse layout of this section")
    bits, indices, width = st.value
    kept, chunk = lay.sparse["kept"], lay.sparse["chunk"]
    per_index = lay.sparse.get("index_bits", kept * (chunk - 1).bit_length()) // kept  # the reviewed metadata's
    if width != chunk:
        return differ(f"the reviewed {lay.id} keeps {kept} of each {chunk} elements: {chunk}-wide chunks, not {width}")
    if indices > kept:
        return differ(f"a chunk of the reviewed {lay.id} keeps {kept} element(s), not {indices}")
    if bits != indices * per_index:
        return differ(f"{indices} index(es) of {per_index} bits (the reviewed {lay.id}'s metadata) take "
                      f"{indices * per_index} bits, not {bits}")
    return agree(f"{indices} index(es) of {per_index} bits into a {chunk}-wide chunk, as the reviewed {lay.id}")


@judges("metadata-vectors")
def _metadata_vectors(st: Statement, ctx: Context) -> Verdict:
    bits = next((s.value[0] for s in ctx.statements if s.kind == "metadata-bits" and s.subject == st.subject and s.value),
                None)
    if bits is None:
        return differ("the vectors' bits do not read", PAGE)
    if st.value * bits > 32:
        return differ(f"a .b32 register cannot hold {st.value} {bits}-bit vectors ({st.value * bits} bits)", PAGE)
    lay = _sparse_of(ctx, st.subject)
    if lay is not None and st.value * bits != 32:
        return differ(f"{st.value} {bits}-bit vectors fill {st.value * bits} of the register's 32 bits", PAGE)
    return agree(f"{st.value} {bits}-bit vectors fill the .b32 register", PAGE)


def _tmem_layout(ctx: Context, subject: str) -> Layout | None:
    return next(iter(ctx.anchored(subject)), None)


@judges("tmem-registers")
def _tmem_registers(st: Statement, ctx: Context) -> Verdict:
    lay = _tmem_layout(ctx, st.subject)
    text = "NUM" if str(st.value).lower() == "num" else str(st.value)

    def page(x: Layout) -> Any:
        v = _expr_values(text, x)
        return "!" + v if isinstance(v, str) else v
    return against_layout(st, ctx, lay, "registers", page,
                          lambda x: _per_member(x, lambda y, env: extent_at(y.registers, env)))


@judges("tmem-register-type")
def _tmem_register_type(st: Statement, ctx: Context) -> Verdict:
    return against_layout(st, ctx, _tmem_layout(ctx, st.subject), "register type", lambda lay: st.value,
                          lambda lay: lay.register_type)


@judges("tmem-instruction")
def _tmem_instruction(st: Statement, ctx: Context) -> Verdict:
    base, suffixes = st.value
    names = {lay.instruction for lay in ctx.anchored(st.subject)}
    said = {f"{base}.{x}" for x in suffixes}
    if names and said == names:
        return agree(f"{', '.join(sorted(names))}, as the reviewed layouts of this section")
    return differ(f"{base}{{.{', .'.join(sorted(suffixes))}}} is not the reviewed instructions "
                  f"{', '.join(sorted(names)) or 'of this section'}")


@judges("tmem-lanes")
def _tmem_lanes(st: Statement, ctx: Context) -> Verdict:
    def rows(lay: Layout) -> Any:
        return _per_member(lay, lambda x, env: extent_at(x.codomain.rows, env))
    return against_layout(st, ctx, _tmem_layout(ctx, st.subject), "Tensor Memory lanes",
                          lambda lay: [st.value] * len(members(lay)), rows)


@judges("tmem-bits")
def _tmem_bits(st: Statement, ctx: Context) -> Verdict:
    def bits(lay: Layout) -> Any:  # the bits each lane moves per .num: (32-bit columns x accesses) / NUM
        x2 = str(lay.shape).endswith("x2")
        return _per_member(lay, lambda x, env: extent_at(x.codomain.cols, env) * 32 // env.get("NUM", 1) // (2 if x2 else 1))
    return against_layout(st, ctx, _tmem_layout(ctx, st.subject), "bits per lane and .num",
                          lambda lay: [st.value] * len(members(lay)), bits)


# ----------------------------------------------------------------------------- the run

def _verdict(st: Statement, ctx: Context) -> Verdict:
    if st.unread:
        return differ(f"the words do not read as a statement of this kind: {st.unread}", PAGE)
    judge = JUDGES.get(st.kind)
    if judge is None:  # a reader states a kind no judge knows: never a silent pass
        return Verdict("error", f"no judge for statements of kind {st.kind!r}", PAGE)
    note = KNOWN.get((st.kind, _known_subject(st.subject), st.value))
    try:
        v = judge(st, ctx)
    except (SpecError, FormulaError, ArithmeticError, ValueError) as err:
        return differ(f"the statement cannot be evaluated: {err}", PAGE)
    if v is None:
        v = _by_the_page(st, ctx)
    if note and v.status == "refuted":
        return known(f"{v.message}; a known erratum: {note}", v.against)
    return v


def _by_the_page(st: Statement, ctx: Context) -> Verdict:
    """No reviewed fact: the statement against the page's other statements of the same fact."""
    others = [s for s in ctx.same(st) if s is not st]
    if not others:
        return agree("stated once; no reviewed spec records it", PAGE)
    votes = Counter(repr(s.value) for s in ctx.same(st))
    top, n = votes.most_common(1)[0]
    if repr(st.value) == top and (n > 1 or len(votes) == 1):
        return agree(f"as the page states it {n - 1} more time(s)", PAGE)
    elsewhere = next(s for s in others if repr(s.value) != repr(st.value))
    return differ(f"the page states {_show(elsewhere.value)} at line {elsewhere.line}", PAGE, (elsewhere,))


def judge(spec: Spec, timeout: float) -> tuple[list[StatementResult], list[Finding]]:
    """Every statement of ``spec`` judged (module docstring): the results, and a finding for each one not proved
    (a known erratum's is as expected)."""
    if not spec.statements:
        return [], []
    ctx = Context.of(spec, timeout)
    results: list[StatementResult] = []
    findings: list[Finding] = []
    for st in spec.statements:
        v = _verdict(st, ctx)
        if v.status == "proved" and st.kind in CONSISTENT:
            others = [s for s in ctx.same(st) if s.value != st.value]
            if others:
                o = others[0]
                v = differ(f"{v.message}, but the page states {_show(o.value)} at line {o.line}", v.against, (o,))
        results.append(StatementResult(st.page, st.line, st.col, st.kind, st.subject, st.words, v.status, v.expected,
                                       v.against, v.message))
        if v.status != "proved":
            findings.append(Finding(st.subject or st.kind, "statement", v.status, v.expected,
                                    f"{st.where()}: {st.kind}: {v.message}",
                                    TextPosition(st.page, st.line, st.col, st.kind)))
            for o in v.also:  # the statement it contradicts: the finding there too (either may be the one changed)
                if (o.line, o.col) != (st.line, st.col):
                    findings.append(Finding(o.subject or o.kind, "statement", v.status, v.expected,
                                            f"{o.where()}: {o.kind}: contradicted by line {st.line}: {v.message}",
                                            TextPosition(o.page, o.line, o.col, o.kind)))
    findings += _coverage(ctx)
    return _unique(results), _unique(findings)


def _unique(items: list) -> list:
    return list(dict.fromkeys(items))


def _coverage(ctx: Context) -> list[Finding]:
    """A section's reviewed layouts that none of its statements states (a row dropped from the page, or its type
    changed): a finding at the section's first statement."""
    out: list[Finding] = []
    stated = {s.value for s in ctx.statements if s.kind == "layout" and not s.unread}
    by_reference = {(s.subject, s.value[0]) for s in ctx.statements if s.kind == "operand" and s.value
                    and s.value[1] == "reference"}
    with_rows = {s.section for s in ctx.statements if s.kind == "layout"}
    seen: set[str] = set()
    for s in ctx.statements:
        if s.kind != "shape" or not s.subject.startswith("section:") or s.subject in seen or s.section not in with_rows:
            continue
        seen.add(s.subject)
        missing = [lay.id for lay in ctx.anchored(s.subject) if lay.id not in stated
                   and (s.subject, lay.operand) not in by_reference]
        for lid in missing:
            out.append(Finding(lid, "statement", "refuted", "proved",
                               f"{s.where()}: layout: the reviewed specs record {lid} in this section, but the page "
                               "no longer states it (a row dropped, or its instruction, shape, operand or types changed)",
                               TextPosition(s.page, s.line, s.col, "layout")))
    return out


def kinds() -> tuple[str, ...]:
    return tuple(sorted(JUDGES))


# the judges of the other pages register themselves (imported last: they use what is above)
from . import statements_matrix, statements_other, statements_shared  # noqa: E402, F401

__all__ = ["CONSISTENT", "JUDGES", "KNOWN", "Verdict", "judge", "kinds"]
