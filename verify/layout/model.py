"""The layout model: one fragment layout, whatever notation it was written in.

A layout maps a *domain* of (thread, element index i) points to a *codomain* of matrix cells
(row, col).  Every check, both engines and every renderer read a layout only through this
model, so a new notation (CuTe, Triton, a table, a tile of other layouts) is one importer that
builds a named map (``verify.layout.named``); it then gets every check for free.

* ``Domain``: threads, elements per thread, the MMA computations the threads split into (m8n8k4
  runs four in one warp; ``group`` says which thread belongs to which), named parameters with
  their valid values (wgmma ``N``), and replication (each cell held by that many points).
* ``Codomain``: rows x cols of the matrix each MMA computation covers.
* the map: a named map ``(lane|thread, i) -> ([mma,] row, col)`` (``verify.layout.fragment_maps``: a formula,
  sparse A, an unspecified wmma map, or any map the algebra builds), placed by the layout on its domain
  and codomain; ``cells_of``, ``point_of`` and ``z3_cell_of`` read it in the fragment's terms.
* ``Layout``: a map with its identity (instruction, shape, operand, types), what the doc says
  about its registers (``RegisterFacts``: the count and packing checks read that), its provenance, and for a
  doc layout the reviewed specs correct, its ``correction`` (``verify.layout.corrections``).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Callable, Hashable, Mapping, TypeVar

import numpy as np

from ..engines import oracle
from ..formula import Formula
from .elements import element_text_at, parse_element_list
from .memo import forget_held, held
from .family import Extent, Param, extent_at
from .family import clear_caches as clear_family_caches

if TYPE_CHECKING:  # pragma: no cover
    import z3

from .domain import Cells, Codomain, Domain, Env  # noqa: F401  (re-exported: the layout's parts)
from .fragment_maps import PlacedMap, placed
from .records import Provenance, RegisterFacts, Shape, Source


# ----------------------------------------------------------------------------- layouts

OPERANDS = ("A", "B", "C", "D", "E", "R", "SFA", "SFB")
# D: an accumulator whose elements the doc names d0, d1, ... (wgmma); R: the register vector ``r`` of
# a data-movement instruction (ldmatrix, stmatrix, tcgen05.ld/st: r0, r1, ...); SFA/SFB: the bytes of
# an mma ``scale-a-data``/``scale-b-data`` register (or of a tcgen05 scale-factor word), sfa0..sfa3.
_PREFIX = {"A": "a", "B": "b", "C": "c", "D": "d", "E": "e", "R": "r", "SFA": "sfa", "SFB": "sfb"}


class _Corrects:
    """What a layout's ``corrects`` field says (``Layout`` and ``MapLayout``: the doc layout holds its correction,
    the correction names the doc layout it corrects)."""

    id: str
    corrects: str

    @property
    def corrected(self) -> bool:
        """A reviewed correction of a doc layout (its output id is ``ID@corrected``: ``verify.layout.ids``)."""
        return bool(self.corrects)

    @property
    def doc_id(self) -> str:
        """The id of the doc layout: its own, or the one it corrects."""
        return self.corrects or self.id


@dataclass(frozen=True)
class Layout(_Corrects):
    """One fragment of one instruction: the map, what the doc says of its registers, provenance.

    Fields come in the same order for every layout (like CuTe's ``MMA_Traits``): identity,
    the map (domain, codomain, map), register storage as the doc states it (``regs``), provenance and
    the expected verdicts (known errata), and the reviewed correction.
    """

    # identity
    id: str
    instruction: str
    shape: Shape
    operand: str
    types: tuple[str, ...]
    variant: str | None
    # the map
    domain: Domain
    codomain: Codomain
    map: Any  # a NamedMap (verify.layout.fragment_maps), placed on domain and codomain by __post_init__
    # register storage, as the doc states it
    regs: RegisterFacts
    # provenance and expectations
    provenance: Provenance
    expect: Mapping[str, str]
    params_bound: tuple[tuple[str, int], ...] = ()  # an instance of a family: its parameter values
    # Points where no case of the formula applies hold no element of this matrix (a selector picks
    # the points: mma block-scale ``thread-id``/``byte-id``); in_range is then over the defined points.
    partial: bool = False
    # The doc layout and its reviewed correction are one object: a doc layout holds its ``correction`` (what the
    # hardware does where the doc is wrong), and the correction names the doc layout it ``corrects`` (its id).
    # ``verify.layout.corrections`` reads them (``in_use``: the correction where there is one).
    correction: "Layout | None" = dataclasses.field(default=None, compare=False, repr=False)
    corrects: str = ""

    def __post_init__(self) -> None:
        # the map sits on this layout's domain and codomain (a replace() of either moves it along)
        m = self.map
        if getattr(m, "domain", None) is not self.domain or getattr(m, "codomain", None) is not self.codomain:
            object.__setattr__(self, "map", placed(m, self.domain, self.codomain))

    # -- families (a parameter such as wgmma N): every concrete view below needs an instance
    @property
    def params(self) -> tuple[Param, ...]:
        """The family's parameters (``()`` for a plain layout), as ``MapLayout.params``."""
        return self.domain.params

    @property
    def is_family(self) -> bool:
        return bool(self.domain.params)

    def instance(self, **env: int) -> "Layout":
        """The concrete layout for one parameter value: ``lay.instance(N=24)``."""
        return instance(self, env)

    def instances(self) -> list[tuple[dict[str, int], "Layout"]]:
        """Every (binding, concrete layout) of a family, in ascending parameter order (a plain layout: itself)."""
        return instances(self)

    def representative(self) -> "Layout":
        """The instance a single picture or table shows: every parameter at its smallest valid value
        (a plain layout: itself)."""
        if not self.is_family:
            return self
        return self.instance(**{p.name: p.values[0] for p in self.domain.params})

    @property
    def max_elements(self) -> int:
        """Elements per thread of the largest instance (a plain layout: its count), for cost estimates."""
        if isinstance(self.domain.elements, int):
            return self.domain.elements
        return max(inst.domain.count for _, inst in self.instances())

    @property
    def register_count(self) -> int:
        """Registers per thread of a concrete layout (a family's member; ``ValueError`` for the family itself,
        as ``Domain.count``)."""
        if not isinstance(self.regs.count, int):
            raise ValueError(f"{self.id} is a family: its registers per thread depend on its parameters: take a member")
        return self.regs.count

    @property
    def unspecified(self) -> bool:
        """The doc leaves the layout unspecified (wmma): only counts and replication can be checked."""
        return self.map.notation == "unspecified"

    # -- views of the domain and codomain
    @property
    def threads(self) -> int:
        return self.domain.threads

    @property
    def n_elements(self) -> int:
        """Elements per thread of a concrete layout (a family's extent over its parameters: ``domain.elements``)."""
        return self._concrete(self.domain.elements, "domain.elements")

    @property
    def groups(self) -> int:
        return self.domain.groups

    @property
    def group(self) -> Formula | None:
        return self.domain.group

    @property
    def lanes_per_group(self) -> int:
        return self.domain.threads_per_group

    @property
    def rows(self) -> int:
        """The matrix's rows for a concrete layout (a family's extent over its parameters: ``codomain.rows``)."""
        return self._concrete(self.codomain.rows, "codomain.rows")

    @property
    def cols(self) -> int:
        """The matrix's columns for a concrete layout (a family's extent over its parameters: ``codomain.cols``)."""
        return self._concrete(self.codomain.cols, "codomain.cols")

    def _concrete(self, x: Extent, where: str) -> int:
        """``x`` if it is a number; a family's extent is an expression, read where it is (``where``), never as one."""
        if isinstance(x, int):
            return x
        raise TypeError(f"{self.id}: a family's extent ({where}) is not a number; read {where}")

    @property
    def formula(self) -> Formula:
        """The formula AST of a formula-backed map (every bundled layout has one)."""
        return self.map.formula

    @property
    def sparse(self) -> Mapping[str, Any]:
        """The validated ``[fragment.sparse]`` table of a sparse A (empty otherwise)."""
        return getattr(self.map, "table", {})

    @property
    def prefix(self) -> str:
        return _PREFIX[self.operand]

    def element_name(self, i: int) -> str:
        return f"{self.prefix}{i}"

    def group_of(self, lane: int) -> int:
        """Which MMA computation ``lane`` belongs to (0 when the warp computes one)."""
        return self.domain.group_of(lane)

    def locate(self, line: int, col: int) -> tuple[str, int, int]:
        """(file, line, column) of a position in the formula text: in the spec file, or on the doc page
        the formula was read from."""
        p = self.provenance
        if 0 < line <= len(p.text_map) and p.text_map[line - 1][0]:
            page_line, page_col = p.text_map[line - 1]
            return p.spec_path, page_line, page_col + col - 1
        return p.spec_path or p.source.file, p.formula_line + line - 1, col

    def with_map(self, named: Any, **changes: Any) -> "Layout":
        """A named map over (``lane`` or ``thread``, ``i``) to two cell outputs (what the algebra builds:
        relations, tiles, block tiles, a notation lifted to the warp) as a fragment with this layout's identity
        and register facts, so every fragment check works on it.  The domain takes the map's thread count and
        this layout's elements, MMA computations and parameters, the codomain the map's cell sizes
        (``changes`` may give ``domain``/``codomain`` and any other field); expectations and corrections are
        dropped."""
        view = PlacedMap.of(named)
        rows, cols = view.cell_sizes()
        fields: dict[str, Any] = dict(map=view, domain=dataclasses.replace(self.domain, threads=view.thread_size()),
                                      codomain=Codomain(rows, cols, self.codomain.dims), corrects="", correction=None,
                                      expect={}, partial=False)
        fields.update(changes)
        return dataclasses.replace(self, **fields)

    def with_formula(self, formula: Formula, text: str | None = None, **changes: Any) -> "Layout":
        """This layout with another formula (mutation tests, the fix search) written as ``text`` (its
        provenance's ``formula_text``; default: unchanged), other fields as given."""
        if text is not None:
            changes["provenance"] = dataclasses.replace(changes.get("provenance", self.provenance), formula_text=text)
        return dataclasses.replace(self, map=dataclasses.replace(self.map, formula=formula), **changes)

    def evaluate(self, lane: int, i: int) -> tuple[int | None, int | tuple[int, int] | None]:
        """(row, col) of element i of ``lane`` as the formula states them; ``None`` where no case
        applies (a sparse A's col is its ``[firstcol ... lastcol]`` range).  A point outside the domain
        (0 <= lane < threads, 0 <= i < elements; a family: its largest member's elements) is a
        ``ValueError``, and so is a layout whose map the doc leaves unspecified (wmma)."""
        for name, v in (("lane", lane), ("i", i)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise TypeError(f"{name} must be an int, not {type(v).__name__}")
        n, top = self.domain.elements, self.domain.most_elements
        member = "" if isinstance(n, int) else f" (its largest member; pick one with .instance({', '.join(f'{p.name}=...' for p in self.domain.params)}))"
        if not (0 <= lane < self.threads and 0 <= i < top):
            raise ValueError(f"({lane}, {i}) is outside the domain of {self.id}: lane from 0 to {self.threads - 1}, "
                             f"i from 0 to {top - 1}{member}")
        if self.unspecified:
            raise ValueError(f"{self.id}: the doc leaves its map unspecified (\"unspecified and target architecture "
                             "dependent\"): no (lane, i) has a stated cell")
        row = oracle.evaluate(self.formula, "row", int(lane), int(i))
        assert not isinstance(row, tuple)  # the parser allows a range [first ... last] only as col's value
        return row, oracle.evaluate(self.formula, "col", int(lane), int(i))


@dataclass(frozen=True)
class SyntaxFinding:
    """A doc formula that does not parse, recorded as a known erratum of the spec."""

    layout: str
    message: str
    line: int
    col: int
    expected: str  # "refuted" when the spec says the doc text is broken


UNPARSED = "the doc's formula does not parse: "  # an Unbuilt message: this, then the parser's own message


@dataclass(frozen=True)
class Unbuilt:
    """A fragment of a doc page that could not be turned into a layout (its formula does not parse)."""

    layout: str
    file: str
    line: int
    col: int
    message: str
    expected: str = "proved"  # "refuted" when the reviewed specs record that this formula does not parse


MAP_CHECKS = ("in_range", "injective", "surjective")
MAP_KINDS = ("shared", "swizzle", "tmem", "storage", "block", "map")


@dataclass(frozen=True)
class MapLayout(_Corrects):
    """A layout with no register facts: a named map (``verify.layout.named``) with its identity, provenance
    and expectations.  A shared-memory layout ``(row, col) -> offset``, a swizzle, a Tensor Memory layout
    ``(row, col) -> (tmem_lane, tmem_col)``, a storage layout of scale factors, a block tile over ``(warp,
    lane, i)``: every map-level check (``verify.checks.maps``) and command accepts it.

    ``kind`` says what it describes (``MAP_KINDS``); ``checks`` which of ``in_range``, ``injective`` and
    ``surjective`` apply (a padded storage layout is injective, not surjective); ``unit`` what an ``offset``
    output counts (``bytes`` or ``elements``)."""

    id: str
    kind: str
    map: Any  # a NamedMap
    provenance: Provenance
    expect: Mapping[str, str] = dataclasses.field(default_factory=dict)
    checks: tuple[str, ...] = MAP_CHECKS
    instruction: str = ""
    unit: str = ""
    note: str = ""
    correction: "MapLayout | None" = dataclasses.field(default=None, compare=False, repr=False)  # as Layout's
    corrects: str = ""

    @property
    def inputs(self) -> tuple[Any, ...]:
        return self.map.inputs

    @property
    def outputs(self) -> tuple[Any, ...]:
        return self.map.outputs

    @property
    def params(self) -> tuple[Param, ...]:
        return self.map.params

    @property
    def is_family(self) -> bool:
        return bool(self.params)

    def instance(self, **env: int) -> "MapLayout":
        """One member of a family (``lay.instance(T=16)``): every parameter given a valid value (``KeyError``
        otherwise, as ``Layout.instance``)."""
        from .algebra import bind
        unknown = [k for k in env if k not in {p.name for p in self.params}]
        if unknown:
            known = ", ".join(p.name for p in self.params) or "none"
            raise KeyError(f"{self.id} has no parameter {', '.join(unknown)} (its parameters: {known})")
        missing = [p.name for p in self.params if p.name not in env]
        if missing:
            raise KeyError(f"{self.id} is a family: give a value for {', '.join(missing)}")
        try:
            bound = bind(self.map, **env)
        except ValueError as e:
            raise KeyError(str(e).removeprefix("bind: ")) from None
        fix = self.correction
        if fix is not None and fix.is_family:
            try:
                fix = fix.instance(**env)
            except KeyError:  # a correction that narrows the family: none at these values
                fix = None
        return dataclasses.replace(self, map=bound, correction=fix)

    def evaluate(self, **point: int) -> dict[str, int] | None:
        """The outputs at one input point (the scalar reference); ``ValueError`` outside the input box, and
        for a family without every parameter given."""
        names = [d.name for d in self.inputs]
        env = {k: v for k, v in point.items() if k in {p.name for p in self.params}}
        pt = {k: v for k, v in point.items() if k not in env}
        if sorted(pt) != sorted(names):
            raise ValueError(f"{self.id}: give a value for each input ({', '.join(names)})"
                             + (f" and parameter ({', '.join(p.name for p in self.params)})" if self.params else ""))
        missing = [p.name for p in self.params if p.name not in env]
        if missing:
            raise ValueError(f"{self.id} is a family: give {', '.join(missing)}")
        for d in self.inputs:
            if not 0 <= pt[d.name] < d.at(env):
                raise ValueError(f"{self.id}: {d.name} = {pt[d.name]} is outside 0..{d.at(env) - 1}")
        return self.map.at(pt, env)

    def locate(self, line: int, col: int) -> tuple[str, int, int]:
        """(file, line, column) of a position in the formula text."""
        p = self.provenance
        return p.spec_path or p.source.file, p.formula_line + line - 1, col


@dataclass(frozen=True)
class TextErratum:
    """An ``error`` ingest found in the text of a doc page (a register count, a packing, an element list
    that contradicts the rest of the page), for the layout of its table row: expected only where the
    reviewed spec of that layout records an erratum of the same check (``check``)."""

    layout: str
    kind: str      # ingest's kind: count-words, element-list-prefix, ...
    check: str     # the check of the reviewed record that covers it: count, packing, elements ("" for none)
    file: str
    line: int
    col: int
    message: str
    expected: str = "proved"  # "refuted" when the reviewed spec records it


@dataclass(frozen=True)
class Spec:
    """The layouts of one doc section (one instruction family), as one spec file (or doc page) states them.

    A spec read from a doc page (``page``) carries its review: the reviewed layouts of the same ids
    (``reviewed``, from the bundled specs or ``--against``), which its expectations come from and which
    its maps are compared with, the ids of the reviewed layouts of its sections (``covers``), the
    fragments that could not be built (``unbuilt``), the errors in its text (``text_errata``) and what else the
    page states (``statements``, judged by ``verify.checks.statements`` against ``reviewed``).
    """

    path: str
    source: Source
    instruction: str
    shape: Shape
    layouts: tuple[Layout, ...]
    syntax_findings: tuple[SyntaxFinding, ...] = ()
    page: str = ""
    reviewed: tuple[Layout | MapLayout, ...] = ()  # the reviewed layouts and maps of the same ids
    covers: tuple[str, ...] = ()
    unbuilt: tuple[Unbuilt, ...] = ()
    maps: tuple[MapLayout, ...] = ()  # layouts with no register facts (``[[layout]]``)
    text_errata: tuple[TextErratum, ...] = ()
    statements: tuple[Any, ...] = ()  # a page's statements (``verify.layout.statements.Statement``), to be judged

    @property
    def all_layouts(self) -> tuple[Layout | MapLayout, ...]:
        """The fragments, then the maps."""
        return (*self.layouts, *self.maps)


CHECK_NAMES = ("count", "elements", "packing", "in_range", "injective", "surjective")
STATUSES = ("proved", "refuted", "unknown", "error")


def section_key(section: str) -> tuple[tuple[int, Any], ...]:
    """Sort key for doc section numbers: 9.7.14.5.2 before 9.7.14.5.10."""
    return tuple((0, int(p)) if p.isdigit() else (1, p) for p in section.split("."))


# ----------------------------------------------------------------------------- family instances

def instance(layout: Layout, env: Mapping[str, int]) -> Layout:
    """The concrete layout of one parameter binding: extents evaluated, the parameter substituted
    (memoised on the layout: checks, relations and instructions ask for the same instances)."""
    return held(layout, "_instances", tuple(sorted(env.items())), lambda: _instance(layout, env))


def _instance(layout: Layout, env: Mapping[str, int]) -> Layout:
    d = layout.domain
    missing = [p.name for p in d.params if p.name not in env]
    if missing:
        raise KeyError(f"{layout.id} is a family: give a value for {', '.join(missing)}")
    for p in d.params:
        if env[p.name] not in p.values:
            raise KeyError(f"{p.name} = {env[p.name]} is not a valid value for {layout.id} ({p.describe()})")
    sh = layout.shape
    def dim(v: int | str) -> int | str:
        return env[v] if isinstance(v, str) else v
    shape = dataclasses.replace(sh, m=dim(sh.m), n=dim(sh.n), k=dim(sh.k))
    text, elist = _elements_at(layout.regs.elements_text, tuple(env.items()))
    lmap = layout.map.member(env)  # the map at that binding (a formula substituted, a composition bound), placed
    return dataclasses.replace(
        layout, shape=shape, map=lmap, domain=lmap.domain, codomain=lmap.codomain,
        regs=dataclasses.replace(layout.regs, count=extent_at(layout.regs.count, env), elements_text=text,
                                 element_list=elist),
        params_bound=tuple(sorted(env.items())),
        correction=_correction_at(layout.correction, env))


def _correction_at(fix: Layout | None, env: Mapping[str, int]) -> Layout | None:
    """A doc layout's correction at one binding of the doc layout's parameters (a correction over none: itself;
    one whose parameters do not take these values: none there)."""
    if fix is None or not fix.is_family:
        return fix
    try:
        return instance(fix, {p.name: env[p.name] for p in fix.params})
    except KeyError:
        return None


@lru_cache(maxsize=1 << 12)
def _elements_at(text: str | None, env: tuple[tuple[str, int], ...]) -> tuple[str | None, tuple[str, ...] | None]:
    """A family's element list at one binding, as text and names (a pure function of the two: the sections
    of a spec share their lists, so each is expanded once)."""
    if text is None:
        return None, None
    at = element_text_at(text, dict(env), tuple(name for name, _ in env))
    return at, parse_element_list(at)


def instances(layout: Layout) -> list[tuple[dict[str, int], Layout]]:
    """Every instance of a family, parameters in ascending order (a plain layout: itself, once);
    built once per process and shared by every check and view.

    With several parameters (mma block-scale ``THREAD_ID_A`` and ``BYTE_ID_A``) every combination, in
    lexicographic order of the values in the order the parameters are declared."""
    if not layout.domain.params:
        return [({}, layout)]
    return [(dict(env), instance(layout, env)) for env in layout.domain.bindings()]  # each instance memoised


# ----------------------------------------------------------------------------- evaluation memo

# The same map on the same domain, whatever layout carries it (every wgmma D instance of a section, a
# corrected layout's map): evaluated once.  ``key()`` is what the engine memos already trust as the map.
_CELLS_BY_MAP: dict[Hashable, Cells] = {}
_T = TypeVar("_T")


def _map_key(layout: Layout) -> Hashable | None:
    """(map type, map key, domain), or None for a map without a hashable key (evaluated per object)."""
    key = getattr(layout.map, "key", None)
    if key is None:
        return None
    try:
        out = (type(layout.map), key(), layout.domain)
        hash(out)
    except TypeError:
        return None
    return out


def _by_map_value(store: dict[Hashable, _T], layout: Layout, extra: Hashable, build: Callable[[], _T]) -> _T:
    """``build()`` memoised in ``store`` by the layout's map value and domain (``_map_key``) and ``extra``; built
    every time for a map without a hashable key.  An error raises before anything is stored."""
    key = _map_key(layout)
    if key is None:
        return build()
    hit = store.get((key, extra))
    if hit is None:
        if len(store) > 1 << 12:
            store.clear()
        hit = store[(key, extra)] = build()
    return hit


def cells_of(layout: Layout) -> Cells:
    """Every point of ``layout`` evaluated once per process (per map value and domain) and shared by every
    check and view."""
    return _by_map_value(_CELLS_BY_MAP, layout, None, lambda: layout.map.cells())


def cell_at(layout: Layout, thread: int, i: int) -> tuple[int, int] | None:
    """(row, col) of element ``i`` of ``thread`` by the scalar reference (``None`` where the map is undefined)."""
    m = layout.map
    out = m.at({m.thread: thread, "i": i})
    if out is None:
        return None
    r, c = m.row_col
    return out[r], out[c]


def z3_cell_of(layout: Layout, thread: "z3.BitVecRef", i: "z3.BitVecRef",
               env: Mapping[str, "z3.ExprRef"] | None = None) -> tuple["z3.BoolRef", "z3.ExprRef", "z3.ExprRef"]:
    """(defined, row, col) of a symbolic (thread, i) as Z3 terms (the SMT engine)."""
    m = layout.map
    ok, out = m.encode({m.thread: thread, "i": i}, env)
    r, c = m.row_col
    return ok, out[r], out[c]


def bound_of(layout: Layout) -> int:
    """A sound bound on |value| of every sub-term of the layout's cell terms over its domain (the bit width of
    the fragment checks' queries: the map's own, without the dimensions' sizes ``NamedMap.bound`` adds)."""
    return layout.map.cell_bound(layout.domain)


_CLEAR_HOOKS: list[Any] = []  # memos of other modules that hold layouts (family engine verdicts)


def on_clear(hook: Any) -> None:
    """Register a function ``clear_cells`` calls too (a memo keyed by layouts elsewhere)."""
    if hook not in _CLEAR_HOOKS:
        _CLEAR_HOOKS.append(hook)


def clear_cells() -> None:
    forget_held()
    _CELLS_BY_MAP.clear()
    _DIGEST_BY_MAP.clear()
    _elements_at.cache_clear()
    clear_family_caches()
    for hook in _CLEAR_HOOKS:
        hook()



# The digest of the same map on the same domain and matrix (the catalog repeats its maps): hashed once.
_DIGEST_BY_MAP: dict[Hashable, str] = {}


def mapping_digest(layout: Layout) -> str:
    """A fingerprint of the map itself: sha256 over every (lane, i) -> (MMA computation, row, col),
    undefined points included (a sparse A adds each element's logical column range).  Equal
    digests mean the same map on the same domain, whatever notation or file it came from.  Computed once
    per process for each map value, domain and matrix."""
    return _by_map_value(_DIGEST_BY_MAP, layout, layout.codomain, lambda: _digest(layout))


def _digest(layout: Layout) -> str:
    import hashlib
    if layout.is_family:  # every instance, in parameter order
        h = hashlib.sha256()
        for _, inst in layout.instances():
            h.update(mapping_digest(inst).encode())
        return "sha256:" + h.hexdigest()
    c = cells_of(layout)
    parts = [np.asarray([layout.threads, layout.n_elements, layout.rows, layout.cols, layout.groups], "<i8"),
             np.broadcast_to(c.group[:, None], c.ok.shape).astype("<i8"), c.ok.astype("<i8"),
             np.where(c.ok, c.row, 0).astype("<i8"), np.where(c.ok, c.col, 0).astype("<i8")]
    info = getattr(layout.map, "info", None)
    if info is not None:
        inf = info(layout.domain)
        parts += [np.where(inf.defined, inf.first, 0).astype("<i8"), np.where(inf.defined, inf.last, 0).astype("<i8")]
    h = hashlib.sha256()
    for p in parts:
        h.update(np.ascontiguousarray(p).tobytes())
    return "sha256:" + h.hexdigest()
