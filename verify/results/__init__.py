"""Typed check results: what the checks produce and the only thing renderers (text, JSON, reports) read.

Here: the results of ``check`` and their JSON style; one module per other command holds its result types and the
small words and orderings its renderers need (``conform``, ``handoff``, ``reduce``, ``members``, ``consistency``,
``crosscheck``, ``diff``, ``shared``, ``given``, ``fixes``, ``report``).  Nothing here imports a check or the
catalog (``tests/test_architecture.py``)."""
from __future__ import annotations

from dataclasses import dataclass, field
from json.encoder import encode_basestring as _json_text  # C-accelerated
from typing import Any, Callable, Mapping, Protocol

from ..layout.family import extent_text
from ..layout.model import Layout, Spec
from ..layout.records import Shape
from ..witnesses import Witness, as_witness, witness_json
from .hardware import HardwareResult

SCHEMA = 1


def dumps(obj: Any) -> str:
    """The one JSON style of every file and ``--format json`` output: keys in the order the contract
    lists them (never sorted), two-space indent, UTF-8 as is, a trailing newline.

    Exactly ``json.dumps(obj, indent=2, ensure_ascii=False) + "\\n"`` (``tests/test_json_contract.py`` holds it
    to that on generated documents), written here because ``json`` formats an indented document in pure
    Python generators: this writer appends to one list and writes the scalars inside a container without a
    call each (most of a table's values), 2-3x faster than ``json`` on the catalog's outputs."""
    text, plain = _json_text, _PLAIN
    out: list[str] = []
    put = out.append

    def value(o: Any, indent: str) -> None:
        write = plain.get(type(o))
        if write is not None:
            put(write(o))
        elif isinstance(o, dict):
            if not o:
                put("{}")
                return
            inner = indent + "  "
            sep = "{\n" + inner
            for k, v in o.items():
                write = plain.get(type(v))
                if write is not None:
                    put(f"{sep}{text(_json_key(k))}: {write(v)}")
                else:
                    put(sep)
                    put(text(_json_key(k)))
                    put(": ")
                    value(v, inner)
                sep = ",\n" + inner
            put("\n" + indent + "}")
        elif isinstance(o, (list, tuple)):
            if not o:
                put("[]")
                return
            inner = indent + "  "
            sep = "[\n" + inner
            for v in o:
                write = plain.get(type(v))
                if write is not None:
                    put(sep + write(v))
                else:
                    put(sep)
                    value(v, inner)
                sep = ",\n" + inner
            put("\n" + indent + "]")
        else:
            scalar(o)

    def scalar(o: Any) -> None:
        """Subclasses of the plain types (an IntEnum, a str subclass) as ``json`` writes them."""
        if isinstance(o, str):
            put(text(o))
        elif isinstance(o, int):
            put(int.__repr__(o))
        elif isinstance(o, float):
            put(_json_float(o))
        else:
            raise TypeError(f"Object of type {type(o).__name__} is not JSON serializable")

    value(obj, "")
    put("\n")
    return "".join(out)


def _json_float(x: float) -> str:
    if x != x:
        return "NaN"
    if x in (float("inf"), float("-inf")):
        return "Infinity" if x > 0 else "-Infinity"
    return float.__repr__(x)


# How ``dumps`` writes a value of exactly these types.
_PLAIN: dict[type, Callable[[Any], str]] = {
    str: _json_text, int: int.__repr__, float: _json_float, bool: lambda b: "true" if b else "false",
    type(None): lambda _: "null"}


def _json_key(k: Any) -> str:
    """A key as ``json`` writes it: strings as they are, numbers, booleans and null as their JSON text."""
    if isinstance(k, str):
        return k
    if k is None or k is True or k is False:
        return "null" if k is None else "true" if k else "false"
    if isinstance(k, int):
        return int.__repr__(k)
    if isinstance(k, float):
        return _json_float(k)
    raise TypeError(f"keys must be str, int, float, bool or None, not {type(k).__name__}")


@dataclass(frozen=True)
class CheckResult:
    """The verdict of one property.

    ``status`` is the combined verdict: ``proved``/``refuted`` only when both
    engines agree (or for field arithmetic that needs no engine); ``unknown`` when
    Z3 gave up (never promoted to proved); ``error`` when the engines disagree or
    the property could not be evaluated.
    """

    check: str
    status: str
    expected: str
    counterexample: Witness | None = None  # a mapping of a check with no witness class becomes ``Facts``
    message: str = ""
    seconds: float | None = None
    engines: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "counterexample", as_witness(self.counterexample))

    @property
    def as_expected(self) -> bool:
        return self.status == self.expected

    def to_json(self, timings: bool = False) -> dict[str, Any]:
        return {
            "status": self.status,
            "expected": self.expected,
            "seconds": round(self.seconds, 4) if (timings and self.seconds is not None) else None,
            "counterexample": witness_json(self.counterexample),
            "message": self.message,
            "engines": dict(self.engines),
        }


def combine_engines(name: str, expect: str, z3_status: str, z3_cex: Witness | Mapping[str, Any] | None,
                    enum_cex: Witness | Mapping[str, Any] | None, message: Callable[[Any], str],
                    seconds: float, note: str = "",
                    confirm: Callable[[Any], bool] | None = None,
                    same_witness: bool = False) -> CheckResult:
    """The joint verdict of Z3 and enumeration on one property (the only place it is decided).

    ``proved``/``refuted`` only when both agree; Z3's ``unknown`` stays ``unknown``; a
    disagreement, a Z3 witness that does not hold under ``confirm``, or (with
    ``same_witness``) canonical witnesses that differ, is an ``error``.  The witness
    reported is the enumeration's first, which Z3's has been checked against.  Witnesses are typed
    (``verify.witnesses``); a mapping from a check with no witness class of its own becomes ``Facts``.
    ``message`` and ``confirm`` take the check's own witness class (a subclass of ``Witness``: hence ``Any``).
    """
    z3_cex, enum_cex = as_witness(z3_cex), as_witness(enum_cex)
    enum_status = "refuted" if enum_cex is not None else "proved"
    engines = {"z3": z3_status, "enumeration": enum_status}
    if z3_status == "unknown":
        return CheckResult(name, "unknown", expect, enum_cex,
                           f"Z3 gave no answer within the timeout (enumeration says {enum_status}); "
                           "not reported as proved", seconds, engines)
    if z3_status != enum_status:
        return CheckResult(name, "error", expect, z3_cex or enum_cex,
                           f"engines disagree: Z3 says {z3_status}, enumeration says {enum_status}", seconds, engines)
    if z3_cex is not None and confirm is not None and not confirm(z3_cex):
        return CheckResult(name, "error", expect, z3_cex, "Z3's counterexample does not hold under evaluation",
                           seconds, engines)
    if same_witness and z3_cex != enum_cex:
        return CheckResult(name, "error", expect, z3_cex,
                           f"the engines' canonical witnesses differ: Z3: {_said(message, z3_cex)}; "
                           f"enumeration: {_said(message, enum_cex)}", seconds, engines)
    cex = enum_cex if enum_cex is not None else z3_cex
    return CheckResult(name, z3_status, expect, cex, message(cex) if cex else note, seconds, engines)


def _said(message: Callable[[Witness], str], cex: Witness | None) -> str:
    """A witness in the check's own words (never a Python dict in a message)."""
    if cex is None:
        return "none"
    try:
        return message(cex)
    except (KeyError, TypeError, ValueError):
        return "a witness of another form"


class HasChecks:
    """Lookup and verdict shared by layout- and instruction-level results."""

    checks: tuple[CheckResult, ...]

    def get(self, name: str) -> CheckResult:
        for c in self.checks:
            if c.check == name:
                return c
        raise KeyError(name)

    @property
    def as_expected(self) -> bool:
        return all(c.as_expected for c in self.checks)


@dataclass(frozen=True)
class LayoutResult(HasChecks):
    layout: Layout
    checks: tuple[CheckResult, ...]
    enumeration_seconds: float = 0.0  # one pass of the oracle serves all three properties
    engine_cached: bool = False  # verdicts reused from an identical layout checked earlier
    # ``layout.model.mapping_digest(layout)``: computed by the checks when they make the result (a renderer
    # never evaluates the map)
    digest: str = field(kw_only=True)

    @property
    def bijective(self) -> bool:
        return all(self.get(c).status == "proved" for c in ("in_range", "injective", "surjective"))

    def to_json(self, timings: bool = False) -> dict[str, Any]:
        lay = self.layout
        return {
            "id": lay.id,
            "instruction": lay.instruction,
            "shape": {"m": lay.shape.m, "n": lay.shape.n, "k": lay.shape.k},
            "operand": lay.operand,
            "types": list(lay.types),
            "variant": lay.variant,
            "threads": lay.threads,
            "groups": lay.groups,
            "elements": _extent(lay.domain.elements),
            "rows": _extent(lay.codomain.rows),
            "cols": _extent(lay.codomain.cols),
            "corrected": lay.corrected,
            "derived": lay.provenance.derived or None,
            "source": {"file": lay.provenance.source.file, "line": lay.provenance.source.line,
                       "section": lay.provenance.source.section},
            **({"params": {p.name: list(p.values) for p in lay.domain.params}} if lay.is_family else {}),
            "digest": self.digest,
            "checks": {c.check: c.to_json(timings) for c in self.checks},
        }


@dataclass(frozen=True)
class MapResult(HasChecks):
    """The checks of a layout with no register facts (``verify.layout.model.MapLayout``)."""

    layout: Any  # MapLayout
    checks: tuple[CheckResult, ...]

    def to_json(self, timings: bool = False) -> dict[str, Any]:
        lay = self.layout
        return {
            "id": lay.id,
            "kind": lay.kind,
            "instruction": lay.instruction or None,
            "inputs": [{"name": d.name, "size": _extent(d.size)} for d in lay.inputs],
            "outputs": [{"name": d.name, "size": _extent(d.size)} for d in lay.outputs],
            "unit": lay.unit or None,
            "corrected": lay.corrected,
            "derived": lay.provenance.derived or None,
            "source": {"file": lay.provenance.source.file, "line": lay.provenance.source.line,
                       "section": lay.provenance.source.section},
            **({"params": {p.name: list(p.values) for p in lay.params}} if lay.is_family else {}),
            "checks": {c.check: c.to_json(timings) for c in self.checks},
        }


def _extent(x: Any) -> Any:
    """An extent in JSON: its value, or (a family) its expression as text, e.g. ``"N / 2"``."""
    return x if isinstance(x, int) else extent_text(x)


@dataclass(frozen=True)
class Finding:
    """A failed property (or unexpected result) in the words a doc reviewer reads."""

    layout: str
    check: str
    status: str
    expected: str
    message: str
    counterexample: Witness | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "counterexample", as_witness(self.counterexample))

    @property
    def as_expected(self) -> bool:
        return self.status == self.expected

    def to_json(self) -> dict[str, Any]:
        return {
            "layout": self.layout,
            "check": self.check,
            "status": self.status,
            "expected": self.expected,
            "as_expected": self.as_expected,
            "message": self.message,
            "counterexample": witness_json(self.counterexample),
        }


AnyFinding = Finding | HardwareResult  # a report's finding: a check's, or a hardware observation's (``check --observations``)


@dataclass(frozen=True)
class InstructionResult(HasChecks):
    """The checks of a whole instruction (its operands against each other: ``verify.checks.instruction``)
    or of a relation between instructions (``verify.checks.relations``: ldmatrix = mma A, ...)."""

    id: str
    instruction: str
    shape: Shape
    operands: tuple[Layout, ...]
    checks: tuple[CheckResult, ...]
    derived: dict[str, str] = field(default_factory=dict)  # check -> provenance (not stated by the doc text)
    seconds: float = 0.0

    @property
    def findings(self) -> tuple[Finding, ...]:
        return tuple(Finding(self.id, c.check, c.status, c.expected, c.message or f"{c.check} {c.status}",
                             c.counterexample)
                     for c in self.checks if not (c.status == "proved" and c.expected == "proved"))

    def to_json(self, timings: bool = False) -> dict[str, Any]:
        return {
            "id": self.id,
            "instruction": self.instruction,
            "shape": {"m": self.shape.m, "n": self.shape.n, "k": self.shape.k},
            "operands": [lay.id for lay in self.operands],
            "checks": {c.check: c.to_json(timings) for c in self.checks},
            "derived": dict(self.derived) or None,
        }


class DocFinding(Protocol):
    """An erratum of the doc text itself, at page:line:column (``verify.catalog.sections.IngestFinding``,
    built by ingestion; informational unless its severity is ``error``).  Its fields are read-only (the
    ingestion's findings are frozen)."""

    @property
    def kind(self) -> str: ...

    @property
    def severity(self) -> str: ...  # error | warning | info

    @property
    def page(self) -> str: ...

    @property
    def line(self) -> int: ...

    @property
    def column(self) -> int: ...

    @property
    def words(self) -> str: ...

    @property
    def message(self) -> str: ...

    @property
    def section(self) -> str: ...

    def to_json(self) -> dict[str, Any]: ...

    def one_line(self) -> str: ...


@dataclass(frozen=True)
class StatementResult:
    """One statement of a doc page (``verify.layout.statements.Statement``) and its judgment
    (``verify.checks.statements``): ``proved`` (it says what the reviewed specs, or the page's other statements,
    say), ``refuted`` (another value: expected refuted only where the reviewed record knows the erratum),
    ``unknown`` or ``error`` (the engines did not decide, or disagreed); ``against``: what it was judged by."""

    page: str
    line: int
    col: int
    kind: str
    subject: str
    words: str
    status: str
    expected: str
    against: str
    message: str

    @property
    def as_expected(self) -> bool:
        return self.status == self.expected

    def to_json(self) -> dict[str, Any]:
        return {"page": self.page, "line": self.line, "col": self.col, "kind": self.kind, "subject": self.subject,
                "status": self.status, "expected": self.expected, "as_expected": self.as_expected,
                "against": self.against, "words": self.words, "message": self.message}


@dataclass(frozen=True)
class Report:
    """Everything ``ptx-verify check`` computes, before rendering."""

    specs: tuple[Spec, ...]
    results: tuple[LayoutResult, ...]
    findings: tuple[AnyFinding, ...]  # the checks' findings, then hardware observations' (--observations)
    instructions: tuple[InstructionResult, ...] = ()  # whole instructions, then relations between them
    doc_findings: tuple[DocFinding, ...] = ()  # errata in the doc text itself (from ingest)
    maps: tuple[MapResult, ...] = ()  # layouts with no register facts
    statements: tuple[StatementResult, ...] = ()  # what doc pages state, judged (their failures are findings too)

    @property
    def as_expected(self) -> bool:
        return (all(r.as_expected for r in self.results) and all(f.as_expected for f in self.findings)
                and all(i.as_expected for i in self.instructions)
                and all(m.as_expected for m in self.maps))
