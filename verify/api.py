"""The Python API for proof scripts; the CLI is a thin shell over it.

    from verify import api
    specs = api.load("specs/")
    lay = api.layout(specs, "mma.m16n8k16.A.f16_bf16")
    lay.evaluate(lane=5, i=3)                 # -> (9, 3)
    res = api.check(lay)                      # -> LayoutResult with counterexamples
    mine = api.layout_from_formula("row = %laneid >> 2\\ncol = (%laneid % 4) * 2 + i",
                                   operand="C", rows=8, cols=8, elements=2)
    given = api.cute("((4,8),(2,2,2)):((32,1),(16,8,128))", like=lay)   # also triton, table, index_code
    api.conform(lay, given).status            # -> "equal" (or permuted, replicated, differs)
    api.handoff("mma.m16n8k16.float.C.f32", "mma.m16n8k16.A.f16_bf16").status   # -> "free"
"""
from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import z3

from .catalog import bundled as _bundled
from .catalog import pages as _pages
from .catalog.spec import load_spec_text
from .checks.family import check_any
from .checks.fragment import DEFAULT_TIMEOUT
from .checks.fragment import width as _layout_width
from .engines import smt as _smt
from .errors import SpecError
from .formula import FormulaError, Span, parse_formula, walk
from .layout.elements import MAX_ELEMENTS as _MAX_ELEMENTS
from .layout.fragment_maps import FormulaFragment as _FormulaFragment
from .layout.model import OPERANDS as _OPERANDS
from .layout.model import z3_cell_of as _z3_cell_of
from .layout.model import Codomain as _Codomain
from .layout.model import Domain as _Domain
from .layout.model import Layout, MapLayout, Provenance, RegisterFacts, Spec
from .layout.model import Shape as _Shape
from .layout.model import Source as _Source
from .layout.types import REGISTER_BITS as _REGISTER_BITS
from .results import DocFinding, Finding, InstructionResult, LayoutResult, MapResult, Report

if TYPE_CHECKING:  # the lazy names below, for the type checker (``X as X``: re-exported, not imported at run time)
    from .checks.conform import ConformError as ConformError
    from .checks.handoff import HandoffError
    from .checks.reduce import ReduceError as ReduceError
    from .layout.block import BlockError as BlockError
    from .layout.notations import NotationError
    from .layout.params import FamilyError as FamilyError
    from .results.conform import ConformResult
    from .results.crosscheck import CrosscheckReport
    from .results.handoff import HandoffResult
    from .results.members import FamilyResult

# The layouts people write (notations, conform, handoff, crosscheck) are imported on first use, so
# that ``check`` of the catalog does not pay for them at start-up; their public names stay here.
_LAZY = {"BlockError": "layout.block", "ConformError": "checks.conform", "ConformResult": "results.conform", "CrosscheckReport": "results.crosscheck",
         "FamilyError": "layout.params", "FamilyResult": "results.members",
         "HandoffError": "checks.handoff", "HandoffResult": "results.handoff", "NotationError": "layout.notations",
         "Given": "checks.consistency_sides", "ReduceError": "checks.reduce", "ReduceResult": "results.reduce"}


def __getattr__(name: str) -> object:
    if name in _LAZY:
        import importlib
        return getattr(importlib.import_module(f".{_LAZY[name]}", __package__), name)
    if not name.startswith("_"):
        from .layout.notations import notations as _notations
        for n in _notations():  # api.cute, api.triton, ...: one constructor per registered notation
            if n.constructor == name:
                return _constructor(n.name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_MAX_DIM = 4096
_MAX_SECONDS = 86_400.0  # what the CLI's --timeout accepts


def _timeout(value: object) -> float:
    """A solver budget in seconds: a finite number > 0 and at most a day (``TypeError``/``ValueError``)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"timeout must be a number of seconds, not {type(value).__name__}")
    if not math.isfinite(value) or not 0 < value <= _MAX_SECONDS:
        raise ValueError(f"timeout = {value!r} must be a finite number of seconds > 0 and <= {_MAX_SECONDS:g}")
    return float(value)


def _a_layout(value: object, name: str, ids: bool = False) -> None:
    """``TypeError`` unless ``value`` is a ``Layout`` (or, with ``ids``, a layout id)."""
    if isinstance(value, Layout) or (ids and isinstance(value, str)):
        return
    what = "a Layout or a layout id" if ids else "a Layout (from api.layout, api.layout_from_formula, api.cute...)"
    raise TypeError(f"{name} must be {what}, not {type(value).__name__}")


def _a_path_list(paths: object, name: str) -> None:
    if isinstance(paths, (str, Path)):
        return
    if isinstance(paths, (bytes, bytearray)) or not isinstance(paths, Sequence) or not all(
            isinstance(p, (str, Path)) for p in paths):
        raise TypeError(f"{name} must be a path or a list of paths (str or pathlib.Path), not {type(paths).__name__}")


def release(paths: Sequence[str | Path]) -> tuple[str, tuple]:
    """The release the doc pages among ``paths`` state (their version page; else their directory's
    ``ptx-isa-X.Y``; else "") and their sections as that release numbers and titles them (``Named``)."""
    return _pages.release(list(paths))


def why_nothing(paths: Sequence[str | Path]) -> str:
    """Why doc pages among ``paths`` gave nothing to check ("; PAGE: reason" per page; "" for spec files)."""
    return _pages.why_nothing(list(paths))


def load_with_doc_findings(paths: str | Path | Sequence[str | Path] = "specs",
                           against: Sequence[str | Path] | None = None,
                           docs: Sequence[str | Path] = (), release: str | None = None) -> tuple[list[Spec], tuple]:
    """Like ``load``, plus the errata ``ingest`` found in the text of any doc pages (warnings
    and errors: wrong table headers, malformed element lists, figure mix-ups...).  Doc pages are
    judged by the reviewed specs ``against`` (default: the bundled specs); their cross references
    resolve among the pages given and the reference pages ``docs`` (files or directories), nothing else.
    ``release`` (``"9.0"``): only the facts of that release or an earlier one apply (spec files of later
    releases are left out); default: every spec file, and pages by the facts of the release they state."""
    _a_path_list(paths, "paths")
    if against is not None:
        _a_path_list(against, "against")
    return _pages.load([paths] if isinstance(paths, (str, Path)) else list(paths), against, docs, release)


def doc_findings(pages: Sequence[str | Path], docs: Sequence[str | Path] = ()) -> tuple[DocFinding, ...]:
    """Only the errata ``ingest`` finds in the text of doc pages (warnings and errors)."""
    _a_path_list(pages, "pages")
    return _pages.doc_findings(pages, docs)


def load(paths: str | Path | Sequence[str | Path] = "specs") -> list[Spec]:
    """Load specs from files/directories; doc pages (.md/.txt/.html) are ingested on the fly."""
    return load_with_doc_findings(paths)[0]


def loads(text: str, path: str = "<string>") -> Spec:
    """Load one spec from TOML text."""
    if not isinstance(text, str) or not isinstance(path, str):
        raise TypeError(f"loads takes TOML text and a path name as str, not {type(text).__name__}")
    return load_spec_text(text, path)


def layouts(specs: Iterable[Spec]) -> list[Layout]:
    """The fragment layouts of ``specs`` (register fragments of instructions)."""
    return [lay for s in _specs(specs) for lay in s.layouts]


def map_layouts(specs: Iterable[Spec]) -> list[MapLayout]:
    """The layouts with no register facts of ``specs`` (shared memory, Tensor Memory, storage...)."""
    return [m for s in _specs(specs) for m in s.maps]


def _specs(specs: Iterable[Spec]) -> list[Spec]:
    if isinstance(specs, (str, bytes, Path)) or not isinstance(specs, Iterable):
        raise TypeError(f"specs must be the list api.load returns, not {type(specs).__name__}")
    specs = list(specs)
    if not all(isinstance(s, Spec) for s in specs):
        raise TypeError("specs must be the list api.load returns (Spec objects)")
    return specs


def layout(specs: Iterable[Spec], layout_id: str) -> Layout | MapLayout:
    """Find a layout (a fragment or a map layout) by id; a unique substring of an id is accepted too."""
    if not isinstance(layout_id, str):
        raise TypeError(f"layout_id must be a str, not {type(layout_id).__name__}")
    specs = _specs(specs)
    all_layouts: list[Any] = [*layouts(specs), *map_layouts(specs)]
    for lay in all_layouts:
        if lay.id == layout_id:
            return lay
    hits = [lay for lay in all_layouts if layout_id in lay.id]
    if len(hits) == 1:
        return hits[0]
    if not hits:
        raise KeyError(f"no layout {layout_id!r} (see 'ptx-verify list')")
    raise KeyError(f"{layout_id!r} matches {len(hits)} layouts: " + ", ".join(h.id for h in hits[:6]))


def find_layout(paths: str | Path | Sequence[str | Path], layout_id: str) -> Layout | MapLayout:
    """``layout(load(paths), layout_id)``, loading only the spec file that defines ``layout_id`` where one does
    (``catalog.spec.holding``: the others' ids are read without parsing a formula); every file otherwise (doc
    pages among ``paths``, an id matched in part, one no file or several define), with the same answers and
    errors."""
    from .catalog.pages import _sort_paths
    from .catalog.spec import holding
    _a_path_list(paths, "paths")
    listed = [paths] if isinstance(paths, (str, Path)) else list(paths)
    pages, spec_paths = _sort_paths(listed)
    one = None if pages else holding(spec_paths, layout_id)
    return layout(load(one if one is not None else listed), layout_id)


def check(lay: Layout | MapLayout, timeout: float = DEFAULT_TIMEOUT) -> LayoutResult | MapResult:
    """Every property of one layout (a family: for every value of its parameter): the fragment checks of a
    register fragment, the map checks (``in_range``, ``injective``, ``surjective``) of a map layout."""
    if isinstance(lay, MapLayout):
        from .checks.maps import check_map_layout
        return check_map_layout(lay, _timeout(timeout))
    _a_layout(lay, "lay")
    return check_any(lay, _timeout(timeout))


def check_all(specs: Sequence[Spec], timeout: float = DEFAULT_TIMEOUT, jobs: int = 1,
              doc_findings: Sequence[DocFinding] = (), progress: Callable[[int], None] | None = None) -> Report:
    """Check every layout and instruction of ``specs`` (what ``ptx-verify check`` renders); ``progress(n)``, when
    given, is called as each spec file's ``n`` layouts and map layouts are done (``check_size(specs)`` in all)."""
    if isinstance(specs, (str, bytes, Path)) or not isinstance(specs, Sequence) or not all(
            isinstance(s, Spec) for s in specs):
        raise TypeError("specs must be the list api.load returns (Spec objects)")
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs = {jobs!r} must be a whole number >= 1")
    from .checks.run import check_all as _check_all
    return _check_all(specs, _timeout(timeout), jobs, doc_findings, progress)


def check_size(specs: Sequence[Spec]) -> int:
    """How many layouts and map layouts ``check_all`` checks (the total its ``progress`` counts to)."""
    from .checks.run import size
    return sum(size(s) for s in specs)


def default_jobs() -> int:
    """Worker processes ``check_all`` uses by default: the CPUs this process may use, at most 4."""
    from .checks.run import default_jobs as _default_jobs
    return _default_jobs()


def layout_from_formula(formula: str, *, operand: str = "C", rows: int, cols: int, elements: int,
                        threads: int = 32, registers: int | None = None,
                        register_type: str = "b32", types: Sequence[str] = ("b32",),
                        shape: str | None = None, layout_id: str = "custom") -> Layout:
    """Build a layout from a formula string in a few lines (for proof scripts).

    The layout is built directly (no spec text in between); a formula that does not parse is a
    ``SpecError`` at its line and column in ``formula`` (path ``<formula>``), and so is a formula that
    fails to evaluate when the layout is checked.  Bad arguments are a ``ValueError``.
    """
    if operand not in _OPERANDS:
        raise ValueError(f"operand must be one of {', '.join(_OPERANDS)}, not {operand!r}")
    for name, v, hi in (("rows", rows, _MAX_DIM), ("cols", cols, _MAX_DIM), ("elements", elements, _MAX_ELEMENTS),
                        ("threads", threads, 1024)):
        if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= hi:
            raise ValueError(f"{name} = {v!r} must be a whole number from 1 to {hi}")
    regs = elements if registers is None else registers
    if isinstance(regs, bool) or not isinstance(regs, int) or regs < 1 or elements % regs:
        raise ValueError(f"registers = {regs!r} must divide elements = {elements}")
    if register_type not in _REGISTER_BITS:
        raise ValueError(f"unknown register type {register_type!r} (one of {', '.join(sorted(_REGISTER_BITS))})")
    if isinstance(types, str) or not types or not all(isinstance(t, str) and t for t in types):
        raise ValueError("types must be a non-empty sequence of PTX type names such as ('f16',)")
    m, n, k = {"A": (rows, 1, cols), "B": (1, cols, rows)}.get(operand, (rows, cols, 1))
    parsed_shape = _Shape.parse(shape) if shape is not None else _Shape(m, n, k)
    if parsed_shape is None:
        raise ValueError(f"shape {shape!r} is not of the form mMnNkK")
    try:
        f = parse_formula(formula, operand.lower())
    except FormulaError as e:
        raise SpecError("<formula>", e.line, e.col, e.message, e.text) from None
    for node in (n for d in f.definitions for n in walk(d)):
        if isinstance(node, Span):
            raise SpecError("<formula>", node.pos.line, node.pos.col,
                            "a column range [first ... last] needs a sparse spec (mma.sp A); write it in a spec file")
    per = elements // regs
    rbits = _REGISTER_BITS[register_type]
    return Layout(
        id=layout_id, instruction="mma", shape=parsed_shape, operand=operand, types=tuple(types), variant=None,
        domain=_Domain(threads, elements), codomain=_Codomain(rows, cols), map=_FormulaFragment(f),
        regs=RegisterFacts(regs, register_type, per, element_bits=rbits // per if rbits % per == 0 else None),
        provenance=Provenance(_Source(file="<formula>", line=1, section="custom"), "<formula>", 1, formula),
        expect={})


# ----------------------------------------------------------------------------- layouts people write

def _like(like: Layout | str, specs: Iterable[Spec] | str | Path | None) -> Layout:
    _a_layout(like, "like", ids=True)
    if isinstance(like, Layout):
        return like
    if specs is None or isinstance(specs, (str, Path)):
        specs = load(str(specs) if specs is not None else _bundled.resolve().path)
    found = layout(specs, like)
    if not isinstance(found, Layout):  # a map layout's id (it has no threads and registers to compare)
        raise TypeError(f"{like} is not a register fragment")
    return found


def given(notation: str, text: str | bytes, like: Layout | str, *, specs: Iterable[Spec] | str | Path | None = None,
          source: str = "argument", params: Mapping[str, int] | None = None, strict: bool = True,
          **options: Any) -> Layout:
    """A layout someone wrote, in a registered notation (``api.notations()``: ``cute``, ``triton``, ``index``,
    ``table``...), as a layout of ``like``'s instruction operand (a spec ``Layout`` or its id).  ``options``
    are the notation's own (``thr_id`` for CuTe).  ``like`` a family: the member ``params`` names, or the member
    whose extent the text has (tagged in ``params_bound``), or, for index code over the parameters, a family.
    A name of ``params`` the family lacks is a value index code may read (``verify.layout.params``), kept in
    ``params_bound``; one the text does not read is a ``FamilyError`` (``strict=False``: not, for a caller that
    checks several sides' names at once, as ``handoff`` does).
    Bad text: ``NotationError`` with line and column; a text that fits no member or several: ``FamilyError``.
    ``api.cute(text, like, ...)``, ``api.triton(...)``... are this with the notation named."""
    from .checks.members import read_as
    from .layout.notations import import_as, notation as _notation
    n = _notation(notation)
    if not isinstance(text, (str, bytes)):
        raise TypeError(f"the {n.name} text must be str or bytes, not {type(text).__name__}")
    for k, v in options.items():
        if v is not None and not isinstance(v, str):
            raise TypeError(f"{k} must be text, not {type(v).__name__}")
    return read_as(_like(like, specs), lambda m: import_as(n.name, text, m, source=source, **options), _params(params),
                   strict)


def notations() -> tuple:
    """The registered notations (``verify.layout.notations.registry.Notation``), in help order."""
    from .layout.notations import notations as _notations
    return _notations()


def map_notations() -> tuple:
    """The notations that read a ``[[layout]]``'s map over its own names (``verify.layout.notations.registry.
    MapReader``: index code, a table), in help order; a shared layout's map is also read by ``shared_notations``."""
    from .layout.notations.registry import readers
    return readers("map")


def shared_notations() -> tuple:
    """The notations that read a shared-memory tile (``verify.layout.notations.registry.SharedReader``: the
    readers ``shared_layout`` looks up, and the options of ``descriptor`` and ``banks``), in help order."""
    from .layout.notations.registry import readers
    return readers("shared")


def _constructor(name: str) -> Callable[..., Layout]:
    from .layout.notations import notation as _notation
    n = _notation(name)

    def construct(text: str | bytes, like: Layout | str, **kw: Any) -> Layout:
        return given(n.name, text, like, **kw)

    construct.__name__ = construct.__qualname__ = n.constructor
    construct.__doc__ = f"{n.api_doc}\n\n``api.given({n.name!r}, text, like, ...)``: see ``api.given``."
    return construct


def _params(params: object) -> dict[str, int] | None:
    if params is None:
        return None
    if not isinstance(params, Mapping) or not all(isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool)
                                                  for k, v in params.items()):
        raise TypeError("params must map parameter names to integers, e.g. {\"N\": 24}")
    return dict(params)


def conform(spec: Layout | str, given: Layout, timeout: float = DEFAULT_TIMEOUT, *,
            specs: Iterable[Spec] | str | Path | None = None,
            params: Mapping[str, int] | None = None,
            block: tuple[int, int] | None = None) -> ConformResult | FamilyResult:
    """Is ``given`` the spec layout?  ``ConformResult.status``: ``equal``, ``permuted`` (with the
    permutation), ``replicated`` (with the copy structure) or ``differs`` (with the first difference),
    or ``unspecified``/``unknown``/``error``; every status decided by Z3 and enumeration.  A family spec: the
    member ``params`` names, or the one the given was read as (``api.given`` tags it), or, when the given is a
    family too, every member (``FamilyResult``: the worst member's status, the first such member in full).

    A given over more threads (a block tile: several warps, warpgroups, register repeats) and a larger extent
    is ``tiled`` when each warp's repeats are the spec moved to a sub-tile and the sub-tiles cover the block
    (``ConformResult.tiling`` says which warp holds which sub-tile; ``verify/checks/tiled.py``).  ``block``:
    (rows, cols) the given must cover, else its own extent."""
    _a_layout(spec, "spec", ids=True)
    _a_layout(given, "given")
    timeout = _timeout(timeout)
    if block is not None and not (isinstance(block, tuple) and len(block) == 2 and all(
            isinstance(x, int) and not isinstance(x, bool) and 1 <= x <= _MAX_DIM for x in block)):
        raise TypeError(f"block must be (rows, cols), each an int in 1..{_MAX_DIM}")
    from .checks.members import conform_any
    return conform_any(_like(spec, specs), given, timeout, _params(params), block)


class ArchError(ValueError):
    """A per-architecture wmma map that the reference does not give (``wmma_arch_layout``): the message names
    what it covers."""


def wmma_arch_maps() -> tuple:
    """wmmae's per-architecture wmma maps (``verify.catalog.wmma_arch.ArchMap``): reference data, each
    ``reference_only`` (never doc-stated), with its source ``wmmae <path>:<line>`` and commit."""
    from .catalog import wmma_arch
    return wmma_arch.MAPS


def wmma_arch_entry(spec: Layout | str, arch: str, major: str | None = None, *,
                    specs: Iterable[Spec] | str | Path | None = None, timeout: float = DEFAULT_TIMEOUT) -> Any:
    """wmmae's map (``verify.catalog.wmma_arch.ArchMap``) of the catalog's wmma layout ``spec`` for ``arch``
    (``sm_70``, ``sm_75``, ``sm_80``) and ``major`` (the wmma fragment's ``row``/``col`` major type).  ``major``
    may be left out where the row- and col-major maps are the same map (decided by both engines: sm_75,
    sm_80); else ``ArchError``, as for an id, architecture or major the reference does not cover."""
    from .catalog import wmma_arch as W
    from .checks.maps import same
    _a_layout(spec, "spec", ids=True)
    like = _like(spec, specs)
    if like.instruction != "wmma":
        raise ArchError(f"--arch is for wmma layouts (per-architecture maps from wmmae); {like.id} is not one")
    if major is not None and major not in W.MAJORS:
        raise ArchError(f"major must be row or col, not {major!r}")
    if arch not in W.ARCHS:
        raise ArchError(f"no per-architecture map for {arch!r}: wmmae gives {', '.join(W.ARCHS)}")
    pair = W.majors(like.id, arch)
    if major is None and len(pair) == 2:
        verdict = same(pair[0].named(), pair[1].named(), _timeout(timeout), (pair[0].name, pair[1].name))
        if verdict.status != "proved":
            raise ArchError(f"the row- and col-major maps of {like.id} differ on {arch} ({verdict.message}): "
                            "give --major row or --major col")
        major = pair[0].major
    try:
        return W.lookup(like.id, arch, major or W.MAJORS[0])
    except KeyError as e:
        raise ArchError(e.args[0]) from None


def wmma_arch_layout(spec: Layout | str, arch: str, major: str | None = None, *,
                     specs: Iterable[Spec] | str | Path | None = None, timeout: float = DEFAULT_TIMEOUT) -> Layout:
    """The catalog's (unspecified) wmma layout ``spec`` with wmmae's map for ``arch`` and ``major``
    (``wmma_arch_entry``) as its map, so ``conform``, ``table`` and every fragment view work on it.  Its
    ``derived`` says it is a per-architecture map from wmmae (reference), not doc-stated, with the source;
    its ``arch`` is ``arch``."""
    like = _like(spec, specs)
    entry = wmma_arch_entry(like, arch, major, timeout=timeout)
    return like.with_map(entry.named(), provenance=dataclasses.replace(like.provenance, derived=entry.label_text(),
                                                                       arch=arch))


def check_wmma_arch(specs: Iterable[Spec] | str | Path | None = None, timeout: float = DEFAULT_TIMEOUT) -> tuple[list, list]:
    """Every wmmae map's checks (``verify.checks.wmma_arch``: in range, covers, injective or the stated
    replication; both engines) and the relations (sm_80 = the doc's mma layouts, sm_75 = sm_80, row = col
    major where it holds): (``ArchMapResult`` list, ``CheckResult`` list)."""
    from .checks import wmma_arch as C
    timeout = _timeout(timeout)
    if specs is None or isinstance(specs, (str, Path)):
        specs = load(str(specs) if specs is not None else _bundled.resolve().path)
    specs = _specs(specs)

    def layout_of(lid: str) -> Layout:
        lay = layout(specs, lid)
        if not isinstance(lay, Layout):
            raise TypeError(f"{lid} is not a register fragment")
        return lay
    return C.check_all(timeout), [r.decide(timeout) for r in C.relations(layout_of)]


def block_tile(layout: Layout | str, warps: tuple[int, int], block: tuple[int, int], order: str = "triton", *,
               specs: Iterable[Spec] | str | Path | None = None, params: Mapping[str, int] | None = None) -> Layout:
    """"Instruction X tiled as warps (wm, wn) over rows x cols": the fragment ``layout`` (or its id) held by
    ``warps`` units (warps; warpgroups for a warpgroup's fragment) and repeated in their registers over ``block``,
    built with the layout algebra (``verify/layout/block.py``), in the convention ``order``: ``triton`` (Ampere
    mma: warps and repeats along N first), ``triton-hopper`` (warps along M first) or ``cute`` (a ``TiledMMA``:
    both along M first).  A family needs ``params`` (one member).  ``api.conform(api.block_tile(...), given)`` is
    then ``equal`` exactly when the given is that tiling; ``BlockError`` when the block is not whole units."""
    from .layout.block import block_tile as _block_tile
    lay = _like(layout, specs)
    for name, pair in (("warps", warps), ("block", block)):
        if not (isinstance(pair, tuple) and len(pair) == 2 and all(
                isinstance(x, int) and not isinstance(x, bool) and 1 <= x <= _MAX_DIM for x in pair)):
            raise TypeError(f"{name} must be (rows, cols), each an int in 1..{_MAX_DIM}")
    chosen = _params(params)
    if lay.is_family:
        from .checks.members import FamilyError, bindings, member
        envs = bindings(lay.domain.params, chosen)
        if len(envs) != 1:
            raise FamilyError(f"{lay.id} is a family: give params (--param NAME=VALUE) to tile one member")
        lay = member(lay, envs[0])
    elif chosen:
        from .checks.members import bindings
        bindings((), chosen)
    return _block_tile(lay, warps, block, order)


def handoff(source: Layout | str, target: Layout | str, timeout: float = DEFAULT_TIMEOUT, *,
            specs: Iterable[Spec] | str | Path | None = None, params: Mapping[str, int] | None = None,
            from_params: Mapping[str, int] | None = None,
            to_params: Mapping[str, int] | None = None) -> HandoffResult | FamilyResult:
    """Can the fragment ``source`` produces (tiled to cover ``target``) feed ``target`` lane for lane?
    ``HandoffResult.status``: ``free`` (with the element mapping), ``shuffle`` (with the exchange; over several
    warps, every value inside its warp) or ``shared`` (some value crosses warps: through shared memory;
    ``warp_exchange()`` says which warps exchange how many).  ``source``/``target`` may be block layouts of one
    kernel (``api.triton(dump, spec, tensor="#mma")`` and ``tensor="#blocked"``);
    ``HandoffError`` when the two cannot be tiled onto each other.  Families: every member (the bindings of
    their parameters together), or the ones the bindings name: ``params`` a name on every side that has it,
    ``from_params``/``to_params`` one side's alone (two families that share a name, bound apart: ldmatrix
    ``.x1`` -> ``.x2``); a name both sides have and neither binds alone takes one value on both (a given side
    read as a member binds the other side's too); a ``FamilyResult`` when several."""
    _a_layout(source, "source", ids=True)
    _a_layout(target, "target", ids=True)
    timeout = _timeout(timeout)
    if isinstance(source, str) or isinstance(target, str):
        loaded = specs if specs is not None and not isinstance(specs, (str, Path)) else None
        if loaded is None:
            loaded = load(str(specs) if specs is not None else _bundled.resolve().path)
        source, target = _like(source, loaded), _like(target, loaded)
    from .checks.members import handoff_any
    return handoff_any(source, target, timeout, _params(params), _params(from_params), _params(to_params))


def reduction(layout: Layout | str, along: str = "row", masks: Sequence[int] = (1, 2), timeout: float = DEFAULT_TIMEOUT,
              *, specs: Iterable[Spec] | str | Path | None = None, params: Mapping[str, int] | None = None) -> Any:
    """Does a ``shfl.xor`` butterfly by ``masks`` reduce every row (``along="col"``: column) of ``layout``'s
    fragment over exactly the lanes that own it (``verify.results.reduce.ReduceResult``: ``exact``, or
    ``inexact`` with the lane pair that breaks it, ``ReductionLanes``)?  Both engines.  A family: every member,
    or the one ``params`` names (``FamilyResult``).  ``ReduceError`` for an axis or a mask that cannot be."""
    _a_layout(layout, "layout", ids=True)
    if isinstance(layout, str):
        loaded = specs if specs is not None and not isinstance(specs, (str, Path)) else None
        if loaded is None:
            loaded = load(str(specs) if specs is not None else _bundled.resolve().path)
        layout = _like(layout, loaded)
    if isinstance(masks, (str, bytes)) or not all(isinstance(m, int) and not isinstance(m, bool) for m in masks):
        raise TypeError("masks must be whole numbers, e.g. (1, 2)")
    from .checks.members import reduce_any
    from .checks.reduce import check_masks
    return reduce_any(layout, along, check_masks(along, tuple(masks)), _timeout(timeout), _params(params))


def cutlass_headers() -> Path | None:
    """The include directory of an installed ``nvidia-cutlass`` (``pip install 'ptx-layout-verify[cutlass]'``),
    found without importing it; None when it is not installed."""
    import importlib.util
    try:
        found = importlib.util.find_spec("cutlass_library")
    except (ImportError, ValueError):
        return None
    if found is None or not found.submodule_search_locations:
        return None
    for base in found.submodule_search_locations:
        inc = Path(base) / "source" / "include"
        if inc.is_dir():
            return inc
    return None


def mma_headers(path: str | Path) -> list[Path]:
    """CuTe's ``mma_traits_sm*.hpp`` under ``path`` (a CUTLASS checkout, include dir or unzipped wheel),
    or ``path`` itself when it is one header file."""
    from .layout.notations import find_mma_headers
    return [Path(path)] if Path(path).is_file() else find_mma_headers(path)


def crosscheck(path: str | Path, specs: Iterable[Spec] | str | Path | None = None,
               timeout: float = DEFAULT_TIMEOUT) -> CrosscheckReport:
    """Every ``MMA_Traits`` of CuTe's ``mma_traits_sm*.hpp`` under ``path`` against the spec layouts."""
    if not isinstance(path, (str, Path)):
        raise TypeError(f"path must be a str or pathlib.Path, not {type(path).__name__}")
    timeout = _timeout(timeout)
    if specs is None or isinstance(specs, (str, Path)):
        specs = load(str(specs) if specs is not None else _bundled.resolve().path)
    root = Path(path).parent if Path(path).is_file() else path
    from .checks.crosscheck import crosscheck as _crosscheck
    from .layout.notations import read_headers
    return _crosscheck(read_headers(mma_headers(path)), layouts(specs), root, timeout)


def reference(name: str, specs: Iterable[Spec] | str | Path | None = None, timeout: float = DEFAULT_TIMEOUT,
              path: str | Path | None = None) -> CrosscheckReport:
    """One independent reference (``cute``, ``cute-text``, ``triton``, ``tensor-layouts``, ``tilelang``) evaluated
    and conformed to the spec layouts: a ``CrosscheckReport`` (rows agree, differ, malformed, unmatched).
    ``path``: CuTe's headers for ``cute``/``cute-text`` (default: the installed nvidia-cutlass).  A
    reference that cannot run raises ``FileNotFoundError`` with the reason (``reference_reasons``)."""
    from .checks.references import reference as _reference
    ref = _reference(name)
    timeout = _timeout(timeout)
    if specs is None or isinstance(specs, (str, Path)):
        specs = load(str(specs) if specs is not None else _bundled.resolve().path)
    if path is None:
        why = ref.probe()
        if why:
            raise FileNotFoundError(why)
    return ref.evaluate([*layouts(specs), *map_layouts(specs)], timeout, path)


def _evaluate_reference(task: tuple[str, list[Spec], float, str | Path | None]) -> Any:
    """One reference's report, or why it could not run here (the toolchain failed: unavailable, with why)."""
    name, specs, timeout, path = task
    try:
        return reference(name, specs, timeout, path)
    except (FileNotFoundError, RuntimeError, OSError) as e:
        return str(e) or type(e).__name__


def reference_reasons() -> dict[str, str]:
    """Each reference's name -> '' when it can run here, else why not (which extra to install)."""
    from .checks.references import probe_all
    return probe_all()


def references(specs: Iterable[Spec] | str | Path | None = None, timeout: float = DEFAULT_TIMEOUT, *,
               names: Iterable[str] | None = None, cute: str | Path | None = None,
               reports: Mapping[str, Any] | None = None, jobs: int | None = None) -> Any:
    """The agreement matrix (``checks.references.matrix.Matrix``): every catalog layout against every
    reference in ``names`` (default: all); a reference that cannot run is ``unavailable`` with its reason.
    ``reports``: references already evaluated (``reference(name, specs)`` of the same specs), by name, used
    as they are instead of evaluating them again.  ``jobs``: worker processes that evaluate the references,
    one reference each (default ``default_jobs()``; 1: in this process); the matrix is the same either way."""
    from .checks.references import NAMES
    from .checks.references import matrix as _matrix
    if specs is None or isinstance(specs, (str, Path)):
        specs = load(str(specs) if specs is not None else _bundled.resolve().path)
    specs = list(specs)
    reasons = reference_reasons()
    evaluated: dict[str, Any] = {}
    todo: list[tuple[str, list[Spec], float, str | Path | None]] = []
    for name in (tuple(names) if names is not None else NAMES):
        if reports and name in reports:
            evaluated[name] = reports[name]
            continue
        path = cute if name in ("cute", "cute-text") else None
        if reasons.get(name) and path is None:
            evaluated[name] = reasons[name]
            continue
        evaluated[name] = None  # evaluated below, in this order
        todo.append((name, specs, timeout, path))
    jobs = min(default_jobs() if jobs is None else jobs, len(todo))
    if jobs > 1:
        from .checks.run import in_workers
        done = in_workers(_evaluate_reference, todo, jobs)
    else:
        done = [_evaluate_reference(t) for t in todo]
    evaluated.update(zip((t[0] for t in todo), done))
    versions = {}
    if cute is None:   # the installed wheel's version, not its path (the matrix is committed)
        from importlib.metadata import PackageNotFoundError, version
        try:
            versions = {n: f"nvidia-cutlass {version('nvidia-cutlass')}" for n in ("cute", "cute-text")}
        except PackageNotFoundError:
            versions = {}
    every = [*layouts(specs), *map_layouts(specs)]
    return _matrix.build(every, evaluated, versions)


# ----------------------------------------------------------------------------- proofs

@dataclass(frozen=True)
class Proof:
    """Result of ``prove``: ``proved``, ``refuted`` (with a model), ``vacuous`` (the assumptions cannot
    all hold, so nothing is proved), ``may_overflow`` (some arithmetic operation can overflow its bit
    width, or divide by zero, under the assumptions: no verdict is given, ``message`` names the
    operation and ``counterexample`` the values) or ``unknown``."""

    status: str
    counterexample: dict[str, int] | None = None
    message: str = ""


And, Or, Implies, If, Not = z3.And, z3.Or, z3.Implies, z3.If, z3.Not


def variables(names: str, width: int = 64) -> list[z3.BitVecRef]:
    """Symbolic integers for proof scripts: ``lane, i = api.variables("lane i")``: signed 64-bit
    bit-vectors by default.  ``prove`` checks that no operation of the claim overflows, so a
    narrower ``width`` gives ``may_overflow`` rather than a wrong verdict; use one width for all."""
    if isinstance(width, bool) or not isinstance(width, int) or not 2 <= width <= 512:
        raise ValueError(f"width = {width!r} must be a number of bits from 2 to 512")
    return list(z3.BitVecs(names, width))


def _same_width(*terms: z3.ExprRef) -> int:
    widths = {t.size() for t in terms if isinstance(t, z3.BitVecRef)}
    if len(widths) > 1:
        raise ValueError(f"mixed bit widths {sorted(widths)}: make every variable with the same "
                         "api.variables(..., width=W)")
    return widths.pop() if widths else 64


def cell(lay: Layout, lane: z3.BitVecRef, i: z3.BitVecRef) -> tuple[z3.BoolRef, z3.ExprRef, z3.ExprRef]:
    """(defined, row, col) of element i of ``lane`` as Z3 terms (sparse A: compressed col)."""
    w = _same_width(lane, i)
    need = _layout_width(lay)
    if w < need:
        raise ValueError(f"{lay.id} needs bit-vectors of at least {need} bits; lane and i have {w}")
    return _z3_cell_of(lay, lane, i)


def domain(lay: Layout, lane: z3.BitVecRef, i: z3.BitVecRef) -> z3.BoolRef:
    """0 <= lane < threads and 0 <= i < elements."""
    _same_width(lane, i)
    return z3.And(lane >= 0, lane < lay.threads, i >= 0, i < lay.n_elements)


_GUARDS = {
    z3.Z3_OP_BADD: lambda a, b: [z3.BVAddNoOverflow(a, b, True), z3.BVAddNoUnderflow(a, b)],
    z3.Z3_OP_BSUB: lambda a, b: [z3.BVSubNoOverflow(a, b), z3.BVSubNoUnderflow(a, b, True)],
    z3.Z3_OP_BMUL: lambda a, b: [z3.BVMulNoOverflow(a, b, True), z3.BVMulNoUnderflow(a, b)],
    z3.Z3_OP_BSDIV: lambda a, b: [b != 0, z3.BVSDivNoOverflow(a, b)],
    z3.Z3_OP_BSREM: lambda a, b: [b != 0], z3.Z3_OP_BSMOD: lambda a, b: [b != 0],
    z3.Z3_OP_BUDIV: lambda a, b: [b != 0], z3.Z3_OP_BUREM: lambda a, b: [b != 0],
    z3.Z3_OP_BSHL: lambda a, b: [z3.ULT(b, a.size()), ((a << b) >> b) == a],
}
_DIVISIONS = {z3.Z3_OP_BSDIV, z3.Z3_OP_BSREM, z3.Z3_OP_BSMOD, z3.Z3_OP_BUDIV, z3.Z3_OP_BUREM}


_MAX_GUARD_VISITS = 200_000


def _guards(terms: Sequence[z3.ExprRef]) -> list[tuple[z3.BoolRef, z3.ExprRef, str]]:
    """(condition, operation, what) for every signed arithmetic operation below ``terms``: C's
    conditions for signed arithmetic (no wrap-around, no division by zero, shifts in range).  An
    operation inside a branch of an ``If`` is guarded only where that branch is taken (its path
    condition implies the guard); past ``_MAX_GUARD_VISITS`` (a DAG shared by very many paths) every
    operation is guarded unconditionally, which can only add ``may_overflow`` answers, never a wrong proof."""
    out: list[tuple[z3.BoolRef, z3.ExprRef, str]] = []
    true = z3.BoolVal(True)
    seen: set[tuple[int, int]] = set()
    stack: list[tuple[z3.ExprRef, z3.BoolRef]] = [(t, true) for t in terms]
    visits = 0
    while stack:
        t, path = stack.pop()
        if not z3.is_app(t) or (t.get_id(), path.get_id()) in seen:
            continue
        visits += 1
        if visits > _MAX_GUARD_VISITS and not z3.is_true(path):
            path = true
        seen.add((t.get_id(), path.get_id()))
        kids = [t.arg(k) for k in range(t.num_args())]
        kind = t.decl().kind()
        if kind == z3.Z3_OP_ITE:
            c = kids[0]
            stack += [(c, path), (kids[1], z3.And(path, c)), (kids[2], z3.And(path, z3.Not(c)))]
        else:
            stack.extend((k, path) for k in kids)
        guards: list[tuple[z3.BoolRef, str]] = []
        if kind == z3.Z3_OP_BNEG:
            guards = [(z3.BVSNegNoOverflow(kids[0]), "overflow")]
        elif kind in _GUARDS and len(kids) >= 2:
            acc = kids[0]
            for b in kids[1:]:  # n-ary terms fold left
                guards += [(g, "divide by zero" if k == 0 and kind in _DIVISIONS else "overflow")
                           for k, g in enumerate(_GUARDS[kind](acc, b))]
                acc = acc + b if kind == z3.Z3_OP_BADD else (acc * b if kind == z3.Z3_OP_BMUL else b)
        out.extend((g if z3.is_true(path) else z3.Implies(path, g), t, what) for g, what in guards)
    return out


def _model_values(m: z3.ModelRef) -> dict[str, int]:
    return {str(d): m[d].as_signed_long() for d in sorted(m.decls(), key=str) if isinstance(m[d], z3.BitVecNumRef)}


def prove(claim: z3.BoolRef, assuming: Sequence[z3.BoolRef] = (), timeout: float = DEFAULT_TIMEOUT) -> Proof:
    """Prove ``assuming => claim`` for all values of the free variables (Z3; unknown stays unknown).

    First, Z3 checks that the assumptions can hold at all: if no values satisfy them, the answer is
    ``vacuous`` (any claim would follow), never ``proved``.  Bit-vectors wrap around, integers do not:
    next, Z3 checks that under ``assuming`` no operation of the claim or the assumptions overflows its
    width (or divides by zero); if one can, the answer is ``may_overflow`` with the values, never a
    verdict that wrap-around made.  Solver work is bounded by the deterministic budget every check uses
    (``timeout`` seconds' worth of Z3 resource units, ``verify.engines.smt.Budget``), so ``unknown``
    does not depend on how busy the machine is.  Mixed bit widths are refused (``ValueError``), and so
    is anything but Z3 conditions (``TypeError``).
    """
    if not isinstance(claim, z3.BoolRef):
        raise TypeError(f"claim must be a Z3 condition over api.variables (such as lane < 32), not "
                        f"{type(claim).__name__}")
    if isinstance(assuming, (z3.ExprRef, str, bytes)) or not isinstance(assuming, Iterable):
        raise TypeError(f"assuming must be a list of Z3 conditions, not {type(assuming).__name__}")
    assuming = list(assuming)
    for k, a in enumerate(assuming):
        if not isinstance(a, z3.BoolRef):
            raise TypeError(f"assuming[{k}] must be a Z3 condition over api.variables, not {type(a).__name__}")
    budget = _smt.Budget(_timeout(timeout))
    terms = [claim, *assuming]
    consts: list[z3.ExprRef] = []
    for t in terms:
        stack, seen = [t], set()
        while stack:
            x = stack.pop()
            if x.get_id() in seen:
                continue
            seen.add(x.get_id())
            if z3.is_const(x) and x.decl().kind() == z3.Z3_OP_UNINTERPRETED:
                consts.append(x)
            stack.extend(x.arg(k) for k in range(x.num_args()) if z3.is_app(x))
    width = _same_width(*consts)
    if assuming:
        r, _ = _smt.solve(assuming, budget)
        if r == "unsat":
            wrap = (f"; their arithmetic can wrap around at {width} bits, which may be what makes them "
                    "contradict: use wider variables" if _guards(assuming) else "")
            return Proof("vacuous", None, "the assumptions cannot all hold (no values satisfy them), so any "
                                          f"claim would follow from them: nothing is proved{wrap}")
        if r == "unknown":
            return Proof("unknown", None, "Z3 could not decide whether the assumptions can hold within the budget")
    guards = _guards(terms)
    if guards:
        r, m = _smt.solve([*assuming, z3.Or([z3.Not(g) for g, _, _ in guards])], budget)
        if r == "sat":
            assert m is not None
            _, op, what = next((x for x in guards if z3.is_false(m.eval(x[0], model_completion=True))), guards[0])
            text = str(op)
            text = text if len(text) <= 120 else text[:117] + "..."
            return Proof("may_overflow", _model_values(m),
                         f"may {what}: {text} ({op.size() if isinstance(op, z3.BitVecRef) else '?'}-bit) under the "
                         "assumptions, so no verdict is given; use wider variables or bound them")
        if r != "unsat":
            return Proof("unknown", None, "Z3 could not decide whether the arithmetic may overflow")
    r, m = _smt.solve([*assuming, z3.Not(claim)], budget)
    if r == "unsat":
        return Proof("proved")
    if r == "sat":
        assert m is not None
        return Proof("refuted", _model_values(m))
    return Proof("unknown", None, "Z3 gave no answer within the budget; not reported as proved")


# ----------------------------------------------------------------------------- writer against reader

def consistent(writer: Any, reader: Any, specs: Iterable[Spec] | None = None, *, params: dict[str, int] | None = None,
               timeout: float = DEFAULT_TIMEOUT, type: str | None = None, tile: tuple[int, int] | None = None,
               base: int = 0, major: str | None = None, instr: str = "wgmma", unit: str = "bytes") -> Any:
    """Does ``reader`` read every element where ``writer`` wrote it (``verify.checks.consistency``), for every
    parameter value at once?  Each side is a step or a list of steps applied in order (a pipeline: storage layout,
    shared-memory rows, tcgen05.cp): a layout id (looked up in ``specs``, default the bundled catalog), a
    ``MapLayout``, a named map, a shared-memory ``SharedLayout`` (``api.shared_layout``), or ``Given(notation,
    text)``, a layout in CuTe, Triton, index code, a TMA box or a matrix descriptor (``verify.checks
    .consistency_sides``: names the notation does not state are the other side's).  ``params`` binds parameters
    of either side (``{"VS": 4}``); ``type`` (``"f16"``) reads the notations as shared-memory tiles of that
    element (and binds a shared spec's ``T``), ``tile``/``base``/``unit`` as ``shared_layout`` takes them,
    ``major``/``instr`` a descriptor's.  Returns a ``Decision``: ``.status`` is ``consistent`` or the first kind
    of failure, ``.checks`` each property with its witness (the first element read from another place).

        d = api.consistent("storage.sf.flat_batch_padding", "storage.sf.cutlass.128x4.quantizer")
        d.status                                   # -> "mismatch"
        d = api.consistent(Given("tma", "64x64:128B"), Given("descriptor", "0x4000004000010000"), type="f16",
                           major="K")
    """
    from .checks.consistency import chain, decide
    from .checks.consistency_sides import Context, Given, resolve
    from .layout.shared import element_bits
    lookup = list(specs) if specs is not None else None

    def find(lid: str) -> Any:
        nonlocal lookup
        if lookup is None:
            lookup = load([_bundled.resolve().path])
        return layout(lookup, lid)

    def steps(x: Any) -> list[Any]:
        return list(x) if isinstance(x, (list, tuple)) else [x]

    from .layout.params import Side, check, own, side_of
    ctx = Context(element_bits(type) if type else None, tile, base, major, instr, unit)
    params = _params(params)
    # each layout's side (``layout.params``): its values checked before it is bound, every name once all are read
    laid = [side_of(find(st) if isinstance(st, str) else st) for st in (*steps(writer), *steps(reader))
            if not isinstance(st, Given)]
    for side in laid:
        check(own(params, side), [side])
    ws, rs = resolve(steps(writer), steps(reader), find, ctx, params)
    check(params, [*laid, *(Side(s.name, reads=s.reads) for s in (*ws, *rs))])
    w = chain([s.map for s in ws], params or {})
    r = chain([s.map for s in rs], params or {})
    return decide(w, r, timeout, (" then ".join(s.name for s in ws), " then ".join(s.name for s in rs)))


# ----------------------------------------------------------------------------- shared memory

def shared_layout(notation: str, text: str | bytes, *, type: str | None = None, tile: tuple[int, int] | None = None,
                  base: int = 0, unit: str = "bytes", source: str = "argument",
                  params: Mapping[str, int] | None = None) -> Any:
    """A shared-memory tile ``(row, col) -> offset`` (``verify.layout.shared.SharedLayout``) from CuTe text
    (``"cute"``: ``Sw<3,4,3> o smem_ptr[16b](unset) o (8,64):(64,1)``, ``GMMA::Layout_K_SW128_Atom<half_t>``,
    ``tile_to_shape(...)``), a Triton shared encoding (``"triton"``) or index code over ``row`` and ``col``
    (``"index"``; offsets in ``unit``), or the box a TMA load writes (``"tma"``: ``64x64:128B``, ``64x64:128B:col``
    for a column-major box).  ``type``: the element type (``f16``...), required where the text does
    not say it; ``tile``: (rows, cols) where the text does not say it; ``base``: the buffer's shared-memory
    address; ``params``: values index code may read by name (``--param``; another notation reads none: a
    ``FamilyError``).  Bad text is a ``NotationError`` at its position."""
    from .layout.notations.registry import reader, readers
    from .layout.params import Side, check
    from .layout.shared import element_bits
    read = reader("shared", notation)
    if read is None or not read.reads_params:
        check(params, [Side(f"the {notation} layout")])
    if read is None:
        names = [r.name for r in readers("shared")]
        raise ValueError(f"notation is {', '.join(names[:-1])} or {names[-1]}, not {notation!r}")
    bits = element_bits(type) if type else None
    out = read.read(text, bits=bits, tile=tile, base=base, unit=unit, source=source,
                    params=_params(params) if read.reads_params else None)
    if read.reads_params and params:  # a name the code does not read is no one's here
        from .layout.params import index_side
        raw = text.decode("utf-8") if isinstance(text, (bytes, bytearray)) else text
        check(params, [index_side(f"the {notation} code", raw, params, ("row", "col"))])
    return out


def shared_from_map(lay: MapLayout, type: str | None = None, base: int = 0, **params: int) -> Any:
    """A ``[[layout]]`` of kind shared (``(row, col) -> offset`` in elements) as a ``SharedLayout``: ``params``
    bind some of a family's parameters; a family over ``T`` (elements per 16 bytes) is bound to the type's T."""
    from .layout.algebra import bind
    from .layout.params import check, side_of
    from .layout.shared import element_bits, from_map
    check(params, [side_of(lay)])
    names = {p.name for p in lay.params}
    env = dict(params)
    bits = element_bits(type) if type else None
    if "T" in names and bits is not None:
        if "T" in env and env["T"] * bits != 128:
            raise ValueError(f"T = {env['T']} is not 128 / {bits} bits")
        env["T"] = 128 // bits
    if bits is None:
        if "T" not in env:
            raise ValueError(f"{lay.id}: give the element type (T = 128 / bits)")
        bits = 128 // env["T"]
    m = bind(lay.map, **env) if env else lay.map
    return from_map(m, bits, base, "spec", lay.id)


def conform_map(spec: MapLayout | str, notation: str, text: str | bytes, *, type: str | None = None,
                tile: tuple[int, int] | None = None, params: Mapping[str, int] | None = None, source: str = "argument",
                specs: Iterable[Spec] | str | Path | None = None, timeout: float = DEFAULT_TIMEOUT) -> Any:
    """Is the map written in ``notation`` the map of the ``[[layout]]`` ``spec`` (one of its members)?  Index
    code (``"index"``) over the spec's input names defining its outputs, for every kind (a text over the
    family's parameters is compared with the whole family); its table (``"table"``: what ``table
    --format json`` prints, every point with its outputs); a shared-memory tile in ``"cute"``, ``"triton"``
    or ``"tma"`` (as ``shared_layout`` reads it) for the ``shared`` kind, its element type binding ``T``.  Both
    engines decide (``verify.checks.map_conform.MapConformResult``: ``equal``, ``differs``, ``unknown``).  Bad
    text is a ``NotationError``/``FormulaError`` at its position; names that cannot match a
    ``MapConformError``."""
    from .checks.map_conform import MapConformError, conform_map as _conform_map
    lay: Layout | MapLayout
    if isinstance(spec, str):
        if specs is None or isinstance(specs, (str, Path)):
            specs = load(str(specs) if specs is not None else _bundled.resolve().path)
        lay = layout(specs, spec)
    else:
        lay = spec
    if not isinstance(lay, MapLayout):
        raise MapConformError(f"{lay.id} is a register fragment: use conform")
    given, env = given_map(lay, notation, text, type=type, tile=tile, params=params, source=source)
    return _conform_map(lay, given, notation, source, env, timeout)


def given_map(spec: MapLayout, notation: str, text: str | bytes, *, type: str | None = None,
              tile: tuple[int, int] | None = None, params: Mapping[str, int] | None = None,
              source: str = "argument") -> tuple[Any, dict[str, int]]:
    """The map written in ``notation`` as a map of the ``[[layout]]`` ``spec`` (its inputs and outputs), and the
    values of ``params`` that bind the spec (``conform_map`` and ``table --formula`` of a map read it so).
    ``params`` binds the spec's parameters and any other name the index code reads (``layout.params``: a
    name neither has is a ``FamilyError``)."""
    from .checks.map_conform import MapConformError
    from .layout.algebra import bind
    from .layout.family import Param
    from .layout.notations.registry import reader
    from .layout.params import Side, check, foreign, own, reads, side_of
    spec_side = side_of(spec)
    env, extra = own(params, spec_side), foreign(params, spec_side)
    check(env, [spec_side])
    read = reader("map", notation)
    if read is not None and read.reads_params:
        raw = text.decode("utf-8") if isinstance(text, (bytes, bytearray)) else text
        own_params = tuple(Param(k, (v,)) for k, v in extra.items())
        # over every parameter of the family, so that the code may read one --param binds
        given = read.read(raw, inputs=spec.map.inputs, outputs=spec.map.outputs, params=spec.map.params + own_params,
                          source=source)
        check(extra, [spec_side, Side(f"the {notation} text", reads=reads(given.formula, extra))])
        return (bind(given, **env, **extra) if env or extra else given), env
    check(extra, [spec_side])  # only a notation that reads parameters reads a name of its own
    if read is not None:
        base = bind(spec.map, **env) if env else spec.map
        return read.read(text, inputs=base.inputs, outputs=base.outputs, source=source), env
    if spec.kind != "shared":
        raise MapConformError(f"{spec.id} is a {spec.kind} layout: give it as index code over "
                              f"({', '.join(d.name for d in spec.map.inputs)}) (--formula)")
    tile_ = shared_layout(notation, text, type=type, tile=tile, source=source)
    if "T" in {p.name for p in spec.map.params} and "T" not in env:
        env["T"] = max(1, 128 // tile_.element_bits)
    return tile_.map, env


def descriptor(layout: Any, *, instr: str = "wgmma", major: str | None = None, rows: int | None = None,
               check: int | None = None, timeout: float = DEFAULT_TIMEOUT) -> list[tuple[dict[str, int], Any]]:
    """The descriptor of ``instr`` that reads ``layout`` (row = M or N, col = K) as an operand tile of ``rows``
    rows, or why none does; with ``check``, whether that 64-bit descriptor does (``DescriptorResult``).  One
    result per parameter binding of a family, ``[({}, result)]`` otherwise."""
    from .checks import descriptor as d
    from .layout.algebra import bind
    from .layout.named import bindings
    out = []
    for env in bindings(layout.map):
        one = dataclasses.replace(layout, map=bind(layout.map, **env)) if env else layout
        res = d.check(one, check, instr, major, rows, timeout) if check is not None else \
            d.derive(one, instr, major, rows, timeout)
        out.append((env, res))
    return out


def banks(layout: Any, access: str, *, addresses: str | None = None, timeout: float = DEFAULT_TIMEOUT,
          params: Mapping[str, int] | None = None) -> Any:
    """Bank conflicts of ``access`` (``ldmatrix.x4``, ``ld.shared.v4``...) repeated over the tile of ``layout``,
    lanes addressing cells as ``addresses`` (index code defining row and col over ``lane``) says or as the
    mma-operand pattern does (``verify.results.shared.BanksResult``).  ``ValueError`` for an unknown access or
    an access that does not fit the tile; ``FormulaError`` for bad address text.  ``params``: values the
    address code may read by name (``--param``)."""
    from .checks.banks import check_banks
    from .layout.smem_access import default_pattern, parse_access, pattern_from_text
    acc = parse_access(access)
    pat = pattern_from_text(addresses, acc, layout.element_bits, params=_params(params)) if addresses else \
        default_pattern(acc, layout.element_bits)
    if params:  # a name the address code does not read is no one's here
        from .layout.params import Side, check, index_side
        check(params, [index_side("the address code", addresses, params, (), ("row", "col"), True) if addresses
                       else Side("the access")])
    return check_banks(layout, acc, pat, timeout)


def check_given(layout: Layout, timeout: float = DEFAULT_TIMEOUT) -> Any:
    """A given layout on its own (``api.triton(text, like)``, any notation): ``in_range``, ``injective``,
    ``surjective`` and ``valid``, Triton's rule (a bijection once the input bits that move no element, broadcast,
    are removed), each by both engines (``verify.results.given.GivenCheck``).  A family: ``ValueError``."""
    _a_layout(layout, "layout")
    from .checks.validity import check_given as _check_given
    return _check_given(layout, _timeout(timeout))


def register_banks(registers: str | bytes, layout: Any, access: str, *, tensor: str | None = None,
                   source: str = "argument", timeout: float = DEFAULT_TIMEOUT) -> Any:
    """Bank conflicts of the accesses Triton lowers a register layout to when it stores it into (``access``
    ``st.shared``) or loads it from (``ld.shared``) the shared layout ``layout``: the lane addresses and the vector
    width derived from the two layouts (``verify.checks.banks_registers``).  ``registers``: a Triton distributed
    layout (bases JSON, ``#ttg.linear``, TTGIR with ``tensor`` picking the tensor type).  ``NotationError`` for bad
    text, ``ValueError`` for layouts Triton would not lower so."""
    from .checks.banks_registers import check_register_banks
    from .layout.notations.triton import parse_triton
    kind = access.strip().split(".")[0]
    if access.strip() not in (f"{kind}.shared",):
        raise ValueError(f"with a register layout the access is ld.shared or st.shared (the vector width is derived), "
                         f"not {access!r}")
    return check_register_banks(parse_triton(registers, source, tensor), layout, kind, _timeout(timeout))


def verify_kernel(launch: str | Path | Any | None = None, *, ptx: str | Path | None = None, cu: str | Path | None = None,
                  arch: str | None = None, triton: str | None = None, constexprs: Mapping[str, int] | None = None,
                  target: str = "sm_80", num_warps: int = 4, num_stages: int = 3, entry: str | None = None,
                  grid: Sequence[int] | None = None, block: Sequence[int] | None = None, shared: int | None = None,
                  computes: str | None = None, args: Sequence[Any] | None = None,
                  cluster: Sequence[int] | None = None) -> Any:
    """Verify a compiled kernel: its PTX executed exactly on the CPU for every thread of every CTA of the launch,
    with the catalog's layouts as the tensor-core instructions' meaning (``verify.kernel``).  Returns a
    ``verify.kernel.result.KernelResult``: ``status`` ``proved``, ``refuted`` (findings with their chains) or
    ``error`` (the two engines disagree).

    Give a launch file (``launch="mm.toml"``, docs/kernels.md), or the same fields as keywords: ``ptx=`` (or
    ``cu=`` with ``arch=``, compiled with nvcc, or ``triton="mm.py:matmul_kernel"`` with ``constexprs=``,
    ``target=``, ``num_warps=``, ``num_stages=``, compiled by Triton in a subprocess), ``grid``, ``block``,
    ``cluster``, ``computes="C[m, n] = A[m, k] * B[k, n]"`` and ``args`` (as in the launch file: ``{"tensor": "A",
    "type": "f16", "shape": [128, 64]}``, numbers, ``{"type": "f16", "value": 1.0}``, ``{"tensor_map": "A", "box":
    [64, 64], "swizzle": "128B"}``...).  Bad input raises
    ``SpecError`` (with its position) or ``UsageError``."""
    from .kernel import frontdoor
    return frontdoor.verify(launch, ptx=ptx, cu=cu, arch=arch, triton=triton, constexprs=constexprs, target=target,
                            num_warps=num_warps, num_stages=num_stages, entry=entry, grid=grid, block=block,
                            shared=shared, computes=computes, args=args, cluster=cluster)


__all__ = ["And", "ConformResult", "CrosscheckReport", "DocFinding", "Finding", "InstructionResult", "HandoffError", "HandoffResult", "If", "Implies",
           "Layout", "LayoutResult", "Not", "NotationError", "Or", "Proof", "Report", "Spec", "SpecError", "cell",
           "check", "check_all", "check_size", "conform", "consistent", "crosscheck", "cute", "cutlass_headers", "default_jobs", "doc_findings",
           "domain", "handoff", "index_code", "layout", "layout_from_formula", "layouts", "load",
           "load_with_doc_findings", "loads", "mma_headers", "prove", "reference", "reference_reasons", "references",
           "reduction", "table", "triton", "variables", "find_layout", "shared_layout", "map_notations", "shared_notations", "shared_from_map", "conform_map", "given_map", "descriptor", "banks",
           "register_banks", "check_given",
           "Given", "ArchError", "wmma_arch_maps", "wmma_arch_entry", "wmma_arch_layout", "check_wmma_arch", "verify_kernel"]
