"""Where ``ptx-verify`` finds the bundled specs when it is given no path.

1. ``specs/`` of the current directory when the current directory is a checkout of this project
   (its ``pyproject.toml`` names ``ptx-layout-verify``: the specs reviewers read and edit), named
   ``specs`` as given, so outputs keep relative paths; the ``specs/`` of any other directory (another
   project's) is passed over, and ``ignored`` says so (the CLI prints a note on stderr);
2. else the copy installed with the package (``verify/specs/*.toml``, package data mapped from the
   repository's top-level ``specs/`` by ``pyproject.toml``), so ``cd /tmp && ptx-verify check``
   checks the catalog that shipped with this version;
3. else, in a source checkout used without installing (or an editable install, whose package
   directory is the repository's ``verify/``), the ``specs/`` beside the package.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import NamedTuple

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from ..errors import SpecError
from ..files import nesting_error, read_text

LOCAL = "specs"
PROJECT = "ptx-layout-verify"


class Bundled(NamedTuple):
    path: str  # as it will be printed: "specs" (current directory) or an absolute path
    origin: str  # "current directory", "installed package" or "source checkout"
    ignored: str = ""  # a ``specs`` directory of the current directory passed over (not this project's)


def is_checkout(d: Path) -> bool:
    """Whether ``d`` is a checkout of this project: its ``pyproject.toml`` names ``ptx-layout-verify``
    (read by the safe reader, as any input: a hostile file is just "not a checkout")."""
    try:
        text = read_text(d / "pyproject.toml", limit=1 << 20)
        if nesting_error(text, "toml") is not None:
            return False
        project = tomllib.loads(text).get("project")
    except (SpecError, tomllib.TOMLDecodeError, RecursionError):
        return False
    return isinstance(project, dict) and project.get("name") == PROJECT


def _has_specs(d: Path) -> bool:
    return d.is_dir() and any(p.suffix == ".toml" for p in d.iterdir())


def installed_specs() -> Path | None:
    """The specs shipped inside the installed package (``verify/specs``), or the source checkout's."""
    pkg = Path(__file__).resolve().parent.parent  # the ``verify`` package directory
    if _has_specs(pkg / "specs"):
        return pkg / "specs"
    checkout = pkg.parent
    if (checkout / "pyproject.toml").is_file() and _has_specs(checkout / "specs"):
        return checkout / "specs"
    return None


def resolve(cwd: str | os.PathLike[str] | None = None) -> Bundled:
    """The specs to check when no path is given (see the module docstring for the order)."""
    here = Path(cwd) if cwd is not None else Path.cwd()
    local = LOCAL if cwd is None else str(here / LOCAL)
    ignored = ""
    if (here / LOCAL).is_dir():
        if is_checkout(here):
            return Bundled(local, "current directory")
        ignored = local
    found = installed_specs()
    if found is None:
        return Bundled(LOCAL, "current directory", ignored)  # nothing installed: the loader reports the missing path
    origin = "installed package" if found.parent.name == "verify" else "source checkout"
    return Bundled(str(found), origin, ignored)


def default_paths(paths: list[str] | tuple[str, ...] | None) -> list[str]:
    """``paths`` as given, or the bundled specs when none are."""
    return list(paths) if paths else [resolve().path]


__all__ = ["Bundled", "default_paths", "installed_specs", "resolve"]
