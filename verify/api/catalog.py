"""Loading and checking the catalog: spec files, doc pages, layouts by id, checks; the argument checks the other parts share."""
from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any


from ..catalog import pages as _pages
from ..catalog.spec import load_spec_text
from ..checks.family import check_any
from ..checks.fragment import DEFAULT_TIMEOUT
from ..errors import SpecError
from ..formula import FormulaError, Span, parse_formula, walk
from ..layout.elements import MAX_ELEMENTS as _MAX_ELEMENTS
from ..layout.fragment_maps import FormulaFragment as _FormulaFragment
from ..layout.model import OPERANDS as _OPERANDS
from ..layout.model import Codomain as _Codomain
from ..layout.model import Domain as _Domain
from ..layout.model import Layout, MapLayout, Spec
from ..layout.records import Provenance, RegisterFacts
from ..layout.records import Shape as _Shape
from ..layout.records import Source as _Source
from ..layout.types import REGISTER_BITS as _REGISTER_BITS
from ..results import DocFinding, LayoutResult, MapResult, Report

if TYPE_CHECKING:
    pass


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
    from ..catalog.pages import _sort_paths
    from ..catalog.spec import holding
    _a_path_list(paths, "paths")
    listed = [paths] if isinstance(paths, (str, Path)) else list(paths)
    pages, spec_paths = _sort_paths(listed)
    one = None if pages else holding(spec_paths, layout_id)
    return layout(load(one if one is not None else listed), layout_id)


def check(lay: Layout | MapLayout, timeout: float = DEFAULT_TIMEOUT) -> LayoutResult | MapResult:
    """Every property of one layout (a family: for every value of its parameter): the fragment checks of a
    register fragment, the map checks (``in_range``, ``injective``, ``surjective``) of a map layout."""
    if isinstance(lay, MapLayout):
        from ..checks.maps import check_map_layout
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
    from ..checks.run import check_all as _check_all
    return _check_all(specs, _timeout(timeout), jobs, doc_findings, progress)


def check_size(specs: Sequence[Spec]) -> int:
    """How many layouts and map layouts ``check_all`` checks (the total its ``progress`` counts to)."""
    from ..checks.run import size
    return sum(size(s) for s in specs)


def default_jobs() -> int:
    """Worker processes ``check_all`` uses by default: the CPUs this process may use, at most 4."""
    from ..checks.run import default_jobs as _default_jobs
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
