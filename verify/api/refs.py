"""References: the CUTLASS headers, crosscheck, and the reference implementations checked against the catalog."""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any


from ..catalog import bundled as _bundled
from ..checks.fragment import DEFAULT_TIMEOUT
from ..layout.model import Spec
from .catalog import _timeout, default_jobs, layouts, load, map_layouts

if TYPE_CHECKING:
    from ..results.crosscheck import CrosscheckReport


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
    from ..layout.notations import find_mma_headers
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
    from ..checks.crosscheck import crosscheck as _crosscheck
    from ..layout.notations import read_headers
    return _crosscheck(read_headers(mma_headers(path)), layouts(specs), root, timeout)


def reference(name: str, specs: Iterable[Spec] | str | Path | None = None, timeout: float = DEFAULT_TIMEOUT,
              path: str | Path | None = None) -> CrosscheckReport:
    """One independent reference (``cute``, ``cute-text``, ``triton``, ``tensor-layouts``, ``tilelang``) evaluated
    and conformed to the spec layouts: a ``CrosscheckReport`` (rows agree, differ, malformed, unmatched).
    ``path``: CuTe's headers for ``cute``/``cute-text`` (default: the installed nvidia-cutlass).  A
    reference that cannot run raises ``FileNotFoundError`` with the reason (``reference_reasons``)."""
    from ..checks.references import reference as _reference
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
    from ..checks.references import probe_all
    return probe_all()


def references(specs: Iterable[Spec] | str | Path | None = None, timeout: float = DEFAULT_TIMEOUT, *,
               names: Iterable[str] | None = None, cute: str | Path | None = None,
               reports: Mapping[str, Any] | None = None, jobs: int | None = None) -> Any:
    """The agreement matrix (``checks.references.matrix.Matrix``): every catalog layout against every
    reference in ``names`` (default: all); a reference that cannot run is ``unavailable`` with its reason.
    ``reports``: references already evaluated (``reference(name, specs)`` of the same specs), by name, used
    as they are instead of evaluating them again.  ``jobs``: worker processes that evaluate the references,
    one reference each (default ``default_jobs()``; 1: in this process); the matrix is the same either way."""
    from ..checks.references import NAMES
    from ..checks.references import matrix as _matrix
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
        from ..checks.run import in_workers
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
