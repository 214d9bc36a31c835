"""What the command line was given: the paths to check (the bundled specs when none) and where each
layout was read from (spec files or doc pages), for outputs that locate results in files."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from ..catalog import bundled
from ..catalog.pages import PAGE_SUFFIXES, expand_pages, is_page
from ..catalog.spec import spec_files


def paths_or_bundled(paths: Sequence[str] | None) -> list[str]:
    """The paths as given, or the bundled specs (``specs/`` here, else the installed copy)."""
    return bundled.default_paths(list(paths) if paths else None)


DOCS_HELP = ("reference doc pages (a directory or page files; may be given again): read only so that the "
             "pages' cross references ('the same as in case of ...') and anchors resolve, never judged. "
             "Nothing else is searched")


def default_help() -> str:
    """What a command checks when given no path, for ``--help``."""
    found = bundled.resolve()
    return (f"default: ./specs when the current directory has one, else the specs installed with ptx-verify "
            f"(here: {found.path}, {found.origin})")


if TYPE_CHECKING:
    from ..outputs.sarif import Origins


def origins(paths: Sequence[str]) -> Origins:
    """Doc pages given (file name -> path as given) and spec files read, sorted as ``api.load`` sorts them."""
    pages: list[str] = []
    specs: list[str] = []
    for p in map(Path, paths):
        if is_page(p):
            pages.append(str(p))
        elif p.is_dir() and not any(p.rglob("*.toml")) and any(q.suffix.lower() in PAGE_SUFFIXES for q in p.iterdir()):
            pages.extend(expand_pages([p]))
        else:
            specs.append(str(p))
    files = frozenset(str(f) for f in spec_files(specs)) if specs else frozenset()
    from ..outputs.sarif import Origins  # noqa: PLC0415
    return Origins({Path(p).name: p for p in pages}, files)
