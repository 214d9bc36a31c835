"""Python sources as syntax trees, each text parsed once per test process.

The rule readers (``test_project_rules``) and the import graph (``test_architecture``) walk every module of
the package; a copy of the package (the layering test's) has the same texts, so it reuses their trees.  Those
tests share one xdist group (``SOURCES_GROUP``), so the trees are parsed in one worker.  Nothing may change a
tree it gets: they are shared.
"""
from __future__ import annotations

import ast
from functools import lru_cache
from pathlib import Path

import pytest

SOURCES_GROUP = pytest.mark.xdist_group("import-graph")


@lru_cache(maxsize=None)
def _parse(text: str) -> ast.Module:
    return ast.parse(text)


def tree(path: Path) -> ast.Module:
    """The syntax tree of the Python file at ``path`` (shared: read it, never change it)."""
    return _parse(path.read_text(encoding="utf-8"))
