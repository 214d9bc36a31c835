"""What the command line was given: the paths to check (the bundled specs when none) and where each
layout was read from (spec files or doc pages), for outputs that locate results in files."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from ..catalog import bundled
from ..catalog.pages import PAGE_SUFFIXES, expand_pages, is_page
from ..catalog.spec import spec_files
from ..errors import UsageError


class BadInput(Exception):
    """Bad input already said as one line (``where:LINE:COL: error: message``): ``main`` prints it, exit 2."""


def bad_input(path: str, line: int, col: int, message: str) -> BadInput:
    """The error ``files.read_bytes`` raises for a path it refuses (``error=bad_input``)."""
    return BadInput(f"{path}:{line}:{col}: error: {message}")


def evaluation_guard(where: str, fn):
    """Run ``fn``; a given layout that cannot be evaluated is bad input at its own position."""
    from ..checks.fragment import BoundError
    from ..engines.oracle import EvalError
    try:
        return fn()
    except EvalError as e:
        raise BadInput(f"{where or 'argument'}:{max(1, e.pos.line)}:{max(1, e.pos.col)}: error: {e.message}") from None
    except BoundError as e:
        raise BadInput(f"{where or 'argument'}:1:1: error: {e}") from None


def read_input(path: str) -> bytes:
    """A layout file, or stdin for ``-``, by the one safe reader (regular files only, bounded)."""
    from ..files import read_bytes
    return read_bytes(path, error=bad_input)


def paths_or_bundled(paths: Sequence[str] | None) -> list[str]:
    """The paths as given, or the bundled specs (``specs/`` of a checkout of this project, else the
    installed copy); a ``./specs`` passed over is named on stderr, so the choice is never silent."""
    if paths:
        return list(paths)
    found = bundled.resolve()
    if found.ignored:
        print(f"ptx-verify: note: ./{bundled.LOCAL} is not a {bundled.PROJECT} checkout's (no pyproject.toml "
              f"naming {bundled.PROJECT} here): using the bundled specs, {found.path}; give `{bundled.LOCAL}` "
              "as PATH to check it", file=sys.stderr)
    return [found.path]


DOCS_HELP = ("reference doc pages (a directory or page files; may be given again): read only so that the "
             "pages' cross references ('the same as in case of ...') and anchors resolve, never judged. "
             "Nothing else is searched")


def default_help() -> str:
    """What a command checks when given no path, for ``--help``."""
    found = bundled.resolve()
    return (f"default: ./specs in a checkout of {bundled.PROJECT}, else the specs installed with ptx-verify "
            f"(here: {found.path}, {found.origin})")


if TYPE_CHECKING:
    from ..outputs.sarif import Origins


def _split(paths: Sequence[str]) -> tuple[list[str], list[str]]:
    """(doc pages, spec paths) among ``paths``, sorted as ``api.load`` sorts them (a directory with no
    ``*.toml`` and some page files is a directory of pages)."""
    pages: list[str] = []
    specs: list[str] = []
    for p in map(Path, paths):
        if is_page(p):
            pages.append(str(p))
        elif p.is_dir() and not any(p.rglob("*.toml")) and any(q.suffix.lower() in PAGE_SUFFIXES for q in p.iterdir()):
            pages.extend(expand_pages([p]))
        else:
            specs.append(str(p))
    return pages, specs


def require_pages_for_against(against: Sequence[str] | None, paths: Sequence[str]) -> None:
    """``--against SPECS`` judges doc pages: with none among ``paths`` it would judge nothing (exit 2)."""
    if against and not _split(paths)[0]:
        raise UsageError(f"--against {' '.join(against)}: no doc page among the inputs to judge "
                         f"({' '.join(paths)}); give the pages as PATH (--against takes one SPECS path, "
                         "repeat it for more)")


def origins(paths: Sequence[str]) -> Origins:
    """Doc pages given (file name -> path as given) and spec files read, sorted as ``api.load`` sorts them."""
    pages, specs = _split(paths)
    files = frozenset(str(f) for f in spec_files([*specs])) if specs else frozenset()
    from ..outputs.sarif import Origins
    return Origins({Path(p).name: p for p in pages}, files)
