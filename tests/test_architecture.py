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


# The one decider of in_range / injective / surjective (issue 36): the page readers of ``catalog`` take their
# verdicts from it (they extract a page's facts as a named map and word the verdicts), so ``catalog`` may import it,
# and it alone of ``checks``; it imports nothing at or above ``catalog`` (``test_the_decider_sits_below_its_readers``).
DECIDER = "verify.checks.maps"


def _upward_imports(graph: dict[str, frozenset[str]]) -> list[str]:
    bad = []
    for mod, deps in graph.items():
        if mod == "verify":
            continue
        rank = LAYERS.index(_layer(mod))
        for dep in deps:
            if dep == "verify":
                continue
            if dep == DECIDER and _layer(mod) == "catalog":
                continue
            if LAYERS.index(_layer(dep)) > rank:
                bad.append(f"{mod} imports {dep}")
    return bad


def _reached(graph: dict[str, frozenset[str]], start: str) -> set[str]:
    """Every module ``start`` imports, directly or through others (``start`` included)."""
    seen, todo = set(), [start]
    while todo:
        m = todo.pop()
        if m in seen or m not in graph:
            continue
        seen.add(m)
        todo.extend(graph[m])
    return seen


def test_the_decider_sits_below_its_readers():
    """``catalog`` may import the decider only because nothing the decider imports is at or above ``catalog``
    (no cycle, and no back door to the rest of ``checks``)."""
    graph = _graph()
    above = [m for m in sorted(_reached(graph, DECIDER) - {DECIDER})
             if LAYERS.index(_layer(m)) >= LAYERS.index("catalog")]
    assert not above, f"{DECIDER} reaches " + ", ".join(above)


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


# ----------------------------------------------------------------------------- renderers read results only

# The layers a renderer may not import although they sit below it: a renderer words the typed results
# (``verify.results``: the result types and their small words), it runs no check and reads no spec or page; what it
# shows is computed before it is called (``checks.report_model.build`` for ``report``).
NOT_FOR_RENDERERS = ("checks", "catalog")


def _renderer_imports(graph: dict[str, frozenset[str]]) -> list[str]:
    return sorted(f"{mod} imports {dep}" for mod, deps in graph.items() if _layer(mod) == "outputs"
                  for dep in deps if _layer(dep) in NOT_FOR_RENDERERS)


def test_renderers_import_no_check_and_no_catalog():
    bad = _renderer_imports(_graph())
    assert not bad, "a renderer reaches past the results (move the type to verify/results/, compute it before " \
                    "rendering):\n" + "\n".join(bad)


def test_the_renderer_rule_can_fail(tmp_path):
    """The rule sees a renderer's import of a check, at module level and inside a function, and of the catalog
    (read from a copy of the package with one renderer added)."""
    pkg = tmp_path / "verify"
    shutil.copytree(PKG, pkg, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    (pkg / "outputs" / "_probe_renderer.py").write_text(
        "from ..catalog import bundled\n\n\ndef fix(lay):\n    from ..checks.fixes import constant_fix\n"
        "    return constant_fix(lay)\n", encoding="utf-8")
    graph = _graph(pkg)
    assert _renderer_imports(graph) == ["verify.outputs._probe_renderer imports verify.catalog.bundled",
                                        "verify.outputs._probe_renderer imports verify.checks.fixes"]
    assert not _upward_imports(graph)  # the layering alone allows both: this rule is what refuses them
    assert not (PKG / "outputs" / "_probe_renderer.py").exists()


# ----------------------------------------------------------------------------- stores and errors

def _module_names(module: ast.Module) -> set[str]:
    """The names a module binds at its top level (its stores, among others)."""
    out: set[str] = set()
    for node in module.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        out.update(t.id for t in targets if isinstance(t, ast.Name))
    return out


def _calls_id(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "id" for n in ast.walk(node))


def _id_keyed_stores(module: ast.Module) -> list[int]:
    """Lines where a module-level store is indexed (``[]``, ``get``, ``setdefault``, ``pop``, ``in``) by a key
    made from ``id()``: a later object may reuse the id (hold the memo on the object: ``layout.memo.held``)."""
    names = _module_names(module)
    bad = []
    for n in ast.walk(module):
        if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name) and n.value.id in names and _calls_id(n.slice):
            bad.append(n.lineno)
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name) \
                and n.func.value.id in names and n.func.attr in ("get", "setdefault", "pop") \
                and n.args and _calls_id(n.args[0]):
            bad.append(n.lineno)
        elif isinstance(n, ast.Compare) and any(isinstance(o, (ast.In, ast.NotIn)) for o in n.ops) \
                and any(isinstance(c, ast.Name) and c.id in names for c in n.comparators) and _calls_id(n.left):
            bad.append(n.lineno)
        elif isinstance(n, ast.Call) and any(isinstance(a, ast.Name) and a.id in names for a in n.args) \
                and any(_calls_id(a) for a in n.args):  # a memo helper given the store and an id() key
            bad.append(n.lineno)
    return bad


def test_no_module_store_is_keyed_by_id():
    bad = [f"{p.relative_to(ROOT)}:{line}" for p in sorted(PKG.rglob("*.py")) for line in _id_keyed_stores(tree(p))]
    assert not bad, "module-level stores keyed by id() (hold the memo on the object: layout.memo.held):\n" + \
        "\n".join(bad)


def test_the_id_store_rule_can_fail():
    src = ast.parse("_M = {}\ndef f(x):\n    hit = _M.get(id(x))\n    _M[(id(x), 1)] = 2\n    return id(x) in _M\n"
                    "def g(x):\n    memo = {}\n    memo[id(x)] = 1\n    return memo_of(_M, x, (id(x), 2), list)\n")
    assert _id_keyed_stores(src) == [3, 4, 5, 9]


# A broad handler (``except Exception``, ``except BaseException``, a bare ``except``) must re-raise, or be one of
# these, each of which reports the error as an error (never as an answer) or only guards a display.
BROAD_EXCEPT_ALLOWED = {
    "verify/checks/references/triton_dump.py": "a shape Triton refuses is printed as that key's error",
    "verify/outputs/progress.py": "a progress line's redraw, not a result",
}


def _broad_handlers(module: ast.Module) -> list[int]:
    """Lines of broad exception handlers whose body raises nothing (an error turned into whatever follows)."""
    bad = []
    for n in ast.walk(module):
        if not isinstance(n, ast.ExceptHandler):
            continue
        broad = n.type is None or (isinstance(n.type, ast.Name) and n.type.id in ("Exception", "BaseException"))
        if broad and not any(isinstance(x, ast.Raise) for b in n.body for x in ast.walk(b)):
            bad.append(n.lineno)
    return bad


def test_no_broad_except_turns_an_error_into_an_answer():
    bad = [f"{p.relative_to(ROOT)}:{line}" for p in sorted(PKG.rglob("*.py"))
           if str(p.relative_to(ROOT)) not in BROAD_EXCEPT_ALLOWED for line in _broad_handlers(tree(p))]
    assert not bad, "broad except handlers that raise nothing (catch what you mean, or re-raise):\n" + "\n".join(bad)


def test_the_broad_except_rule_can_fail():
    src = ast.parse("try:\n    f()\nexcept Exception:\n    pass\ntry:\n    f()\nexcept:\n    raise\n"
                    "try:\n    f()\nexcept ValueError:\n    pass\n")
    assert _broad_handlers(src) == [3]


# ----------------------------------------------------------------------------- one place for "@corrected"

def _corrected_literals(module: ast.Module) -> list[int]:
    """Lines of string constants (docstrings aside) that spell ``@corrected``: building, stripping or matching a
    correction's id by hand (``layout.ids`` spells it: ``corrected_id``; ``layout.corrections`` pairs the objects)."""
    docs = {id(n.body[0].value) for n in ast.walk(module)
            if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and n.body
            and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    return [n.lineno for n in ast.walk(module) if isinstance(n, ast.Constant) and isinstance(n.value, str)
            and "@corrected" in n.value and id(n) not in docs]


def test_only_layout_ids_spells_a_corrections_id():
    bad = [f"{p.relative_to(ROOT)}:{line}" for p in sorted(PKG.rglob("*.py")) if p != PKG / "layout" / "ids.py"
           for line in _corrected_literals(tree(p))]
    assert not bad, "'@corrected' spelled outside layout/ids.py (use its helpers):\n" + "\n".join(bad)


def test_the_corrected_rule_can_fail():
    src = ast.parse('"""ID@corrected in a docstring"""\ndef f(i):\n    """ID@corrected"""\n    return i + "@corrected"\n')
    assert _corrected_literals(src) == [4]


# ----------------------------------------------------------------------------- one decider of bijectivity

# A bijection decider is a module that imports one of the enumeration engine's collision finders
# (``layout.enumerate.decide``, ``layout.named.first_collision``) or, importing z3, defines a function whose name
# says ``injective`` or ``collision`` (a Z3 collision query).  ``checks/maps.py`` is the decider (both engines);
# the page readers of ``catalog`` take its verdicts.  The others, each with why it is not ported yet:
FINDERS = {"decide": "verify.layout.enumerate", "first_collision": "verify.layout.named"}
DECIDERS_ALLOWED = {
    "verify/checks/maps.py": "the decider: in_range, injective, surjective of any named map, both engines",
    "verify/layout/named.py": "defines first_collision, the enumeration engine's finder the decider calls",
    "verify/checks/fixes.py": "the fix search: the enumeration's verdict on each candidate constant, not a reported one",
    "verify/checks/conform.py": "two lanes holding one element of a given (conform's lanes), not a map's injectivity",
    "verify/outputs/svg.py": "a picture's focus (the first collision drawn), not a verdict",
}


def _decider_marks(module: ast.Module, name: str, is_package: bool = False) -> list[str]:
    """Why the module ``name`` (its tree ``module``) is a bijection decider (empty: it is not)."""
    package = name if is_package else name.rsplit(".", 1)[0]
    why: list[str] = []
    imports_z3 = False
    for n in ast.walk(module):
        if isinstance(n, ast.ImportFrom):
            if n.level:
                base = package.split(".")
                mod = ".".join(base[: len(base) - (n.level - 1)] + ([n.module] if n.module else []))
            else:
                mod = n.module or ""
            why += [f"imports {a.name} from {mod}" for a in n.names if FINDERS.get(a.name) == mod]
            imports_z3 = imports_z3 or mod == "z3"
        elif isinstance(n, ast.Import):
            imports_z3 = imports_z3 or any(a.name == "z3" for a in n.names)
    if imports_z3:
        why += [f"defines {f.name}" for f in ast.walk(module) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                and ("injective" in f.name or "collision" in f.name)]
    return why


def _deciders(pkg: Path = PKG) -> dict[str, list[str]]:
    out = {}
    for p in sorted(pkg.rglob("*.py")):
        why = _decider_marks(tree(p), _module_name(p, pkg), p.name == "__init__.py")
        if why:
            out[str(p.relative_to(pkg.parent))] = why
    return out


def test_one_module_decides_bijectivity():
    found = _deciders()
    bad = [f"{p}: {', '.join(why)}" for p, why in found.items() if p not in DECIDERS_ALLOWED]
    assert not bad, "bijectivity decided outside checks/maps.py (ask it: verdicts, settled):\n" + "\n".join(bad)
    gone = sorted(set(DECIDERS_ALLOWED) - set(found))
    assert not gone, f"allowed deciders that no longer decide (take them off the list): {gone}"


def test_the_decider_rule_can_fail():
    src = ast.parse("import z3\nfrom ..layout.enumerate import decide\nfrom ..layout.named import first_collision as f\n"
                    "from ..layout.named import inside\ndef z3_injective(m):\n    pass\ndef in_range(m):\n    pass\n")
    assert _decider_marks(src, "verify.catalog.reader") == [
        "imports decide from verify.layout.enumerate", "imports first_collision from verify.layout.named",
        "defines z3_injective"]
    assert _decider_marks(ast.parse("from ..layout.named import first_collision\n"), "verify.layout.other") == [
        "imports first_collision from verify.layout.named"]
    assert _decider_marks(ast.parse("def injective(m):\n    pass\n"), "verify.catalog.reader") == []  # no z3: words
