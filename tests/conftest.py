"""Shared fixtures: the repository root, the bundled specs and the doc pages (when present)."""
from __future__ import annotations

import gc
import os
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SPECS = ROOT / "specs"
DOCS = Path(os.environ.get("PTX_DOCS_DIR", ROOT.parent / "shared" / "ptx-isa-9.0"))
# PTX ISA 9.1's pages, in another export's shape: beside 9.0's (``$PTX_DOCS_DIR/../ptx-isa-9.1``) unless named
DOCS_91 = Path(os.environ.get("PTX_DOCS_DIR_9_1", DOCS.parent / "ptx-isa-9.1"))
SEEDS = Path(os.environ.get("PTX_SEEDS_DIR", ROOT.parent / "shared" / "seeds"))
# The pages as the recorded outputs and the docs' transcripts name them (given from the checkout), and where they are.
PAGES_AS_RECORDED = (("../shared/ptx-isa-9.0", DOCS), ("../shared/ptx-isa-9.1", DOCS_91))


def pages_as_recorded(text: str, pages: tuple[tuple[str, Path], ...] = PAGES_AS_RECORDED) -> str:
    """``text`` (an output of pages given from the checkout as ``os.path.relpath(where, ROOT)``) with the pages'
    paths written as the recorded outputs name them, ``../shared/ptx-isa-9.0/...``: the same bytes wherever the
    pages are.  Outputs name a page as it was given (paths as given), so this is the only place they differ."""
    for name, where in pages:
        given = os.path.relpath(where, ROOT)
        if given != name:
            text = re.sub(re.escape(given) + r"(?![\w-]|\.\w)", name, text)  # not a longer name: ...9.0.md, ...9.01
    return text


TOOLCHAIN = {"nvcc", "ptxas", "g++", "c++", "gcc", "clang++", "chromium", "chromium-browser", "google-chrome"}


@pytest.fixture(autouse=True)
def _toolchains_only_in_integration_tests(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """The README's test command (``-m "not slow"``) runs no toolchain: a test that starts nvcc, ptxas, a C++
    compiler or a browser is an integration test and must be marked ``slow`` (CI runs those after it)."""
    if request.node.get_closest_marker("slow"):
        return
    import subprocess
    monkeypatch.setattr(subprocess.Popen, "__init__", no_toolchain(subprocess.Popen.__init__, request.node.nodeid))


def no_toolchain(start, nodeid: str):
    """``Popen.__init__`` that refuses to start a toolchain (``TOOLCHAIN``) for the test ``nodeid``."""
    def guarded(self, args, *a, **k):
        argv = args if isinstance(args, (list, tuple)) else [args]
        if argv and Path(str(argv[0])).name in TOOLCHAIN:
            raise AssertionError(f"{nodeid} runs {Path(str(argv[0])).name}: mark it @pytest.mark.slow (an "
                                 "integration test)")
        start(self, args, *a, **k)
    return guarded


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """``ptx-verify ARGV`` in process: (exit code, stdout, stderr), argparse's usage errors included."""
    from verify.cli.main import main
    try:
        rc = main(list(argv))
    except SystemExit as e:
        rc = int(e.code or 0)
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.fixture(scope="session")
def docs_dir() -> Path:
    if not DOCS.is_dir():
        pytest.skip(f"PTX ISA pages not found at {DOCS} (set PTX_DOCS_DIR)")
    return DOCS


@pytest.fixture(scope="session")
def docs91_dir() -> Path:
    if not DOCS_91.is_dir():
        pytest.skip(f"PTX ISA 9.1 pages not found at {DOCS_91} (set PTX_DOCS_DIR_9_1, or PTX_DOCS_DIR beside them)")
    return DOCS_91


@pytest.fixture(scope="session")
def seeds_dir() -> Path:
    if not SEEDS.is_dir():
        pytest.skip(f"seed excerpts not found at {SEEDS} (set PTX_SEEDS_DIR)")
    return SEEDS


# The garbage collector of a test process.  A test process keeps large caches alive for the whole run (the
# catalog's layouts, Z3 terms, parsed sources), and Python's full collections walked all of them again and again:
# 8 s of the README's command's 110 s CPU, 6 s of its wall time on 2 cores (measured with gc.callbacks; the
# closing note of issue 22 has the commands).  As the CLI does (``verify.cli.main``), the young generation is
# collected less often, and what survives a full collection is frozen: later full collections skip it.  The cost
# is memory: a cycle frozen once and dropped later is not freed while the tests run (max RSS +50 MB of 770 MB).
GC_YOUNG = 10_000


def pytest_configure(config: pytest.Config) -> None:
    gc.set_threshold(GC_YOUNG, 10, 10)


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    gc.collect()
    gc.freeze()  # the test modules, their parameters and the catalogs they were built from


_FULL_COLLECTIONS = [0]


@pytest.hookimpl(trylast=True)
def pytest_runtest_logfinish(nodeid: str, location: tuple[str, int | None, str]) -> None:
    full = gc.get_stats()[2]["collections"]
    if full != _FULL_COLLECTIONS[0]:  # a full collection ran during this test: what survived it is long-lived
        _FULL_COLLECTIONS[0] = full
        gc.freeze()


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    """Where Triton was imported into this process, give the frozen objects back to the collector, so that the
    interpreter's last collection frees them: Triton's nanobind checks for leaks at exit and listed its IR
    objects as leaked otherwise.  Elsewhere they stay frozen: that last collection walked the whole unfrozen
    heap, 4-5 s of a worker's exit that the README's command waited for (the closing note of issue 22)."""
    if any(name == "triton" or name.startswith("triton.") for name in sys.modules):
        gc.unfreeze()


# A session fixture of xdist lives in each worker: the tests that read one of these run in one worker (the
# README's command passes --dist loadgroup), so the catalog and the doc pages are checked, and the report
# written, once per run.
SHARED_ONCE = ("catalog_report", "bundled_report_dir", "docs_report", "docs_check")
SHARED_GROUP = "whole-catalog"


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if any(name in getattr(item, "fixturenames", ()) for name in SHARED_ONCE) \
                and not item.get_closest_marker("xdist_group"):
            item.add_marker(pytest.mark.xdist_group(SHARED_GROUP))


@pytest.fixture(scope="session")
def catalog_report():
    """The whole bundled catalog checked once per test session, for the tests that only read the result
    (the determinism tests make their own independent runs)."""
    from verify import api
    cwd = os.getcwd()
    os.chdir(ROOT)  # spec paths as a user in the repository writes them (specs/...), as outputs show them
    try:
        specs = api.load(["specs"])
    finally:
        os.chdir(cwd)
    return specs, api.check_all(specs)


@pytest.fixture(scope="session")
def docs_report(docs_dir: Path) -> tuple[list, tuple, object]:
    """The whole doc directory loaded and checked once per test session, as a user in the repository gives it
    (``../shared/ptx-isa-9.0`` from the checkout, or the relative path of ``$PTX_DOCS_DIR``: outputs name the pages
    as given, and ``pages_as_recorded`` writes that path back): (specs, the doc findings, the report).  ``check`` on whole directories of pages, through the CLI, is
    ``tests/test_pages_pipeline.py``'s."""
    from verify import api
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        specs, findings = api.load_with_doc_findings([os.path.relpath(docs_dir, ROOT)])
        return specs, findings, api.check_all(specs, doc_findings=findings)
    finally:
        os.chdir(cwd)


@pytest.fixture(scope="session")
def docs_check(docs_report: tuple) -> tuple[int, dict]:
    """What ``ptx-verify check DOCS --format json`` gives for the whole doc directory: (exit code, the JSON
    document), from ``docs_report``."""
    import json
    from verify.outputs import json as out_json
    report = docs_report[2]
    return (0 if report.as_expected else 1), json.loads(out_json.to_json(out_json.check_json(report)))


@pytest.fixture(scope="session")
def bundled_report_dir(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    """``ptx-verify report`` of every bundled spec, written once per session (tests only read it, or
    rewrite it in place byte for byte); returns (directory, exit code).  In this process (``--jobs 1``), so
    the verdicts ``catalog_report`` proved in the same worker are not proved again in new processes (the
    worker pool is the business of ``tests/test_hardening_cli.py`` and the determinism tests)."""
    from verify.cli import main
    out = tmp_path_factory.mktemp("bundled-report") / "one"
    rc = main(["report", *[str(p) for p in sorted(SPECS.glob("*.toml"))], "--out", str(out), "--jobs", "1"])
    return out, rc
