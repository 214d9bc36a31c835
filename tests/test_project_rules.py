"""The project's own rules for tests, read from the test sources: no test asserts how long something
took (speed is measured in ``benchmarks/``), and no test writes into the source tree (tests run in
parallel workers that read it; a test works on a copy in ``tmp_path``)."""
from __future__ import annotations

import ast
import os
from functools import lru_cache
from pathlib import Path

import pytest

from conftest import ROOT
from sources import SOURCES_GROUP, tree

TESTS = ROOT / "tests"
PKG = ROOT / "verify"
CLOCKS = {"perf_counter", "perf_counter_ns", "monotonic", "monotonic_ns", "process_time", "time", "time_ns"}
SOURCE_TREE = {"ROOT", "PKG", "SPECS", "GOLDEN", "DOCS"}  # the names tests give the checkout's folders
WRITES = {"write_text", "write_bytes", "mkdir", "touch", "unlink", "rmdir", "rename", "replace", "symlink_to",
          "copytree", "copyfile", "copy", "rmtree", "move"}


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


PATH_CALLS = {"Path", "resolve", "with_suffix", "with_name", "joinpath", "absolute"}


def _path_expr(node: ast.AST) -> bool:
    """An expression that builds a path (``ROOT / "x"``, ``Path(...).resolve()``), not one that reads a
    file or edits text (``(SPECS / "a").read_text().replace(...)`` is a string)."""
    for n in ast.walk(node):
        if isinstance(n, ast.Call):
            name = n.func.attr if isinstance(n.func, ast.Attribute) else getattr(n.func, "id", "")
            if name not in PATH_CALLS:
                return False
    return True


def _reads_a_clock(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in CLOCKS
               and isinstance(n.func.value, ast.Name) and n.func.value.id == "time" for n in ast.walk(node))


def clock_assertions(tree: ast.AST) -> list[int]:
    """Lines of ``assert`` statements that compare a clock reading, directly or through a variable
    assigned from one in the same function."""
    out: list[int] = []
    for fn in (n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))):
        timed = {t.id for a in ast.walk(fn) if isinstance(a, ast.Assign) and _reads_a_clock(a.value)
                 for t in a.targets if isinstance(t, ast.Name)}
        out += [a.lineno for a in ast.walk(fn) if isinstance(a, ast.Assert)
                and (_reads_a_clock(a.test) or _names(a.test) & timed)]
    return sorted(set(out))


def source_tree_writes(tree: ast.AST) -> list[int]:
    """Lines where a test function writes to a path built from the checkout's folders (directly, or
    through a variable assigned from such a path in the same function)."""
    out: list[int] = []
    for fn in (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")):
        tainted = set(SOURCE_TREE)
        for a in (x for x in ast.walk(fn) if isinstance(x, ast.Assign)):
            if _names(a.value) & tainted and _path_expr(a.value) and not _names(a.value) & {"tmp_path", "tmp_path_factory"}:
                tainted |= {t.id for t in a.targets if isinstance(t, ast.Name)}
        for call in (x for x in ast.walk(fn) if isinstance(x, ast.Call) and isinstance(x.func, ast.Attribute)):
            if call.func.attr not in WRITES:
                continue
            receiver = call.func.value
            target = call.args[1] if isinstance(receiver, ast.Name) and receiver.id == "shutil" and len(call.args) > 1 \
                else (call.args[0] if isinstance(receiver, ast.Name) and receiver.id in ("shutil", "os") and call.args
                      else receiver)
            if _names(target) & tainted and _path_expr(target):
                out.append(call.lineno)
    return out


@lru_cache(maxsize=1)
def _trees() -> dict[str, ast.AST]:
    """Every test module's syntax tree, parsed once per test process (the rule readers only walk them)."""
    return {p.name: tree(p) for p in sorted(TESTS.glob("*.py"))}


@SOURCES_GROUP  # the test modules' trees (``_trees``), parsed once in that worker
def test_no_test_asserts_elapsed_time():
    bad = {name: lines for name, tree in _trees().items() if (lines := clock_assertions(tree))}
    assert not bad, f"timed assertions (measure speed in benchmarks/): {bad}"


@SOURCES_GROUP
def test_no_test_writes_into_the_source_tree():
    bad = {name: lines for name, tree in _trees().items() if (lines := source_tree_writes(tree))}
    assert not bad, f"tests writing into the checkout (use a copy in tmp_path): {bad}"


def test_the_rule_readers_can_fail():
    """Both readers flag the forms the suite used to have."""
    # the forms the suite used to have, kept as data (tests/data/rules/timed_forms.py.txt) so that no test
    # of this suite asserts a time
    timed = ast.parse((Path(__file__).parent / "data" / "rules" / "timed_forms.py.txt").read_text(encoding="utf-8"))
    assert clock_assertions(timed) == [5, 9]
    writes = ast.parse("def test_probe(tmp_path):\n    mod = PKG / 'formula' / 'x.py'\n    mod.write_text('')\n"
                       "    (tmp_path / 'a').write_text('')\n    shutil.copytree(PKG, tmp_path / 'verify')\n"
                       "    shutil.copyfile(tmp_path / 'a', SPECS / 'b.toml')\n"
                       "    text = (SPECS / 'a.toml').read_text().replace('x', 'y')\n    text.replace('y', 'z')\n")
    assert source_tree_writes(writes) == [3, 6]


# Every environment variable the package reads, and why none of them changes a verdict or an output:
# they say where tools and the compile cache are, and how wide a terminal progress bar may be.
ENVIRONMENT = {
    "CXX": "the C++ compiler that prints CuTe's layouts (compiled reference); the layouts, not the compiler, "
           "are compared, and a missing compiler makes the reference 'unavailable' with the reason",
    "CUDA_HOME": "where the CUDA headers (compiled CuTe) and nvcc (probes) are",
    "CUDA_PATH": "the same, as Windows installers name it",
    "XDG_CACHE_HOME": "where compiled CuTe output is cached, keyed by program, compiler version, CuTe headers "
                      "and CUDA include directories",
    "COLUMNS": "the width of the progress bar, drawn on stderr only when stderr is a terminal",
    "LINES": "the height of the terminal the progress bar is drawn on",
}


@SOURCES_GROUP  # the package's trees, which the import graph's tests parse in that worker too
def test_the_package_reads_only_the_environment_it_states():
    read = set()
    for p in sorted(PKG.rglob("*.py")):
        for node in ast.walk(tree(p)):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args \
                    and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str) \
                    and ((node.func.attr == "get" and isinstance(node.func.value, ast.Attribute)
                          and node.func.value.attr == "environ") or node.func.attr == "getenv"):
                read.add(node.args[0].value)
            elif isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) \
                    and node.value.attr == "environ":
                read.add(ast.unparse(node.slice))
    assert read == set(ENVIRONMENT), f"state why each variable cannot change a verdict or an output: {read}"


# Every environment variable the package sets (a default only, ``os.environ.setdefault``), and where: the
# command line owns its process; a library import (a proof script) changes nobody's environment.
ENVIRONMENT_SET = {
    ("__main__.py", "OPENBLAS_NUM_THREADS"): "numpy's OpenBLAS starts no spinning thread per core at import "
                                             "(the arrays are integers; the simulated block-scale device's float products sum 0s, 1s and 2s, exact "
                                             "on any number of threads)",
}


@SOURCES_GROUP
def test_the_package_sets_only_the_environment_it_states():
    written = set()
    for p in sorted(PKG.rglob("*.py")):
        for node in ast.walk(tree(p)):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr in ("setdefault", "update", "pop", "__setitem__", "putenv", "unsetenv") \
                    and (node.func.attr in ("putenv", "unsetenv")
                         or (isinstance(node.func.value, ast.Attribute) and node.func.value.attr == "environ")):
                written.add((str(p.relative_to(PKG)), ast.unparse(node.args[0]) if node.args else ""))
            elif isinstance(node, (ast.Assign, ast.Delete)):
                for t in getattr(node, "targets", ()):
                    if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Attribute) and t.value.attr == "environ":
                        written.add((str(p.relative_to(PKG)), ast.unparse(t.slice)))
    assert written == {(f, repr(v)) for f, v in ENVIRONMENT_SET}, written


@pytest.mark.slow
def test_no_environment_variable_changes_a_verdict_or_an_output(tmp_path):
    """The same commands, with every variable the package reads set to something else (a compiler that does
    not exist, an empty cache, no CUDA, a tiny terminal): byte-identical stdout, the same exit code."""
    import subprocess
    import sys
    argvs = [["check", "specs/mma.m16n8k16.float.toml", "specs/storage.scale_factors.toml", "--format", "json"],
             ["conform", "wgmma.shared.atom.K.128B", "--cute", "Sw<2,4,3> o smem_ptr[16b](unset) o (8,64):(64,1)"],
             ["descriptor", "--tma", "64x64:128B", "--type", "f16", "--format", "json"],
             # the compiled-CuTe reference reads CXX, CUDA_HOME/CUDA_PATH and XDG_CACHE_HOME (an empty cache: the
             # second run compiles anew, with the compiler found when CXX names none)
             ["crosscheck", "--reference", "cute", "--specs", "specs/mma.m16n8k16.float.toml", "--format", "json"]]
    odd = {"CXX": "no-such-compiler", "CUDA_HOME": str(tmp_path), "CUDA_PATH": str(tmp_path),
           "XDG_CACHE_HOME": str(tmp_path / "cache"), "COLUMNS": "7", "LINES": "2",
           "OPENBLAS_NUM_THREADS": "2"}  # the one the command line sets when unset: another value kept, same bytes
    base = {k: v for k, v in os.environ.items() if k not in ENVIRONMENT and k != "OPENBLAS_NUM_THREADS"}
    for argv in argvs:
        runs = [subprocess.run([sys.executable, "-m", "verify", *argv], cwd=ROOT, capture_output=True, text=True,
                               env=env, timeout=300) for env in (base, {**base, **odd})]
        assert runs[0].returncode == runs[1].returncode and runs[0].stdout == runs[1].stdout, argv
        assert runs[0].stdout, argv


def test_the_toolchain_guard_can_fail() -> None:
    """The README's test command starts no toolchain (``conftest._toolchains_only_in_integration_tests``): the
    guard refuses g++ and nvcc by any path, and lets other programs start."""
    from conftest import no_toolchain
    started: list[object] = []
    guarded = no_toolchain(lambda self, args, *a, **k: started.append(args), "tests/x.py::test_x")
    for argv in (["g++", "--version"], ["/usr/local/cuda/bin/nvcc", "-ptx"], "ptxas"):
        with pytest.raises(AssertionError, match=r"tests/x.py::test_x runs (g\+\+|nvcc|ptxas): mark it"):
            guarded(None, argv)
    guarded(None, ["python3", "-c", "pass"])
    assert started == [["python3", "-c", "pass"]]
