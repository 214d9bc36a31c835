"""The package layout shows the data flow, and every import points down it.

text -> ``formula`` (parsed) -> ``engines`` (evaluated) -> ``layout`` (the model) -> ``witnesses`` -> ``catalog`` (spec
files, doc pages) and ``checks`` -> ``results`` -> ``hardware`` / ``outputs`` -> ``api`` -> ``cli``.
No import cycles, even through imports inside functions; no core module imports a CLI, renderer
or API module.
"""
from __future__ import annotations

import ast
import shutil
from functools import lru_cache
from pathlib import Path


from conftest import ROOT
from sources import SOURCES_GROUP, tree

PKG = ROOT / "verify"
# The import graph is read once per process (``_graph``), from trees parsed once (``sources``): its readers,
# and the rule readers that walk the same modules, run in one xdist worker.
pytestmark = SOURCES_GROUP

# Each layer may import only from layers listed before it (and from itself).
LAYERS = ["errors", "files", "ptx", "formula", "engines", "layout", "witnesses", "results", "catalog", "checks", "hardware",
          "kernel", "outputs", "api", "cli", "__main__"]


def _module_name(path: Path, pkg: Path = PKG) -> str:
    rel = path.relative_to(pkg.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _imports(path: Path, pkg: Path = PKG) -> set[str]:
    """Every verify module ``path`` imports, at module level or inside functions."""
    me = _module_name(path, pkg)
    package = me if path.name == "__init__.py" else me.rsplit(".", 1)[0]
    out: set[str] = set()
    for node in ast.walk(tree(path)):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.startswith("verify"))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            if not mod.startswith("verify"):
                continue
            for a in node.names:  # "from . import api" imports a module
                if (pkg.parent / (mod + "." + a.name).replace(".", "/")).with_suffix(".py").exists() or \
                        (pkg.parent / (mod + "." + a.name).replace(".", "/")).is_dir():
                    out.add(mod + "." + a.name)
                else:
                    out.add(mod)
    return out


@lru_cache(maxsize=4)
def _graph(pkg: Path = PKG) -> dict[str, frozenset[str]]:
    """The import graph of the package at ``pkg`` (the source tree's, or a copy's), read once per test process
    (no test writes into a package tree it has read)."""
    return {_module_name(p, pkg): frozenset(_imports(p, pkg)) for p in sorted(pkg.rglob("*.py"))}


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def test_every_module_is_in_a_layer():
    for mod in _graph():
        if mod == "verify":
            continue
        assert _layer(mod) in LAYERS, f"{mod} is in no layer of the data flow (tests/test_architecture.py)"


def _upward_imports(graph: dict[str, frozenset[str]]) -> list[str]:
    bad = []
    for mod, deps in graph.items():
        if mod == "verify":
            continue
        rank = LAYERS.index(_layer(mod))
        for dep in deps:
            if dep == "verify":
                continue
            if LAYERS.index(_layer(dep)) > rank:
                bad.append(f"{mod} imports {dep}")
    return bad


def test_imports_point_down_the_flow():
    bad = _upward_imports(_graph())
    assert not bad, "imports against the data flow:\n" + "\n".join(bad)


def test_no_import_cycles():
    graph = _graph()
    modules = set(graph)

    def resolve(dep: str) -> str | None:
        while dep and dep not in modules:
            dep = dep.rsplit(".", 1)[0] if "." in dep else ""
        return dep or None

    edges = {m: {d for d in (resolve(x) for x in deps) if d and d != m and d != "verify"} for m, deps in graph.items()}
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(m: str) -> None:
        state[m] = 1
        path.append(m)
        for d in sorted(edges[m]):
            if state.get(d) == 1:
                cycle = path[path.index(d):] + [d]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if d not in state:
                visit(d)
        path.pop()
        state[m] = 2

    for m in sorted(edges):
        if m not in state:
            visit(m)


def test_cli_modules_are_thin():
    """Command modules parse arguments and print; the work lives below them."""
    for p in sorted((PKG / "cli").glob("*.py")):
        lines = [ln for ln in p.read_text(encoding="utf-8").splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
        assert len(lines) < 260, f"{p.name} has {len(lines)} lines: move the work into the library"


def test_the_layering_test_can_fail(tmp_path):
    """The graph reader sees an upward import (so the tests above can fail). It reads a copy of the
    package with one module added: no test writes into the source tree (other workers read it)."""
    pkg = tmp_path / "verify"
    shutil.copytree(PKG, pkg, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    (pkg / "formula" / "_probe_upward_import.py").write_text("from ..cli import main\n", encoding="utf-8")
    graph = _graph(pkg)
    assert _upward_imports(graph) == ["verify.formula._probe_upward_import imports verify.cli.main"]
    assert not (PKG / "formula" / "_probe_upward_import.py").exists()
    assert {m for m in graph if m != "verify.formula._probe_upward_import"} == set(_graph())
